"""Simultaneous (sup-t) bands for a curve of Monte Carlo estimates.

A simulation study's measures are curves over a budget n (bias, variance, MSE, coverage). A pointwise
interval ``estimate ± 1.96 MCSE`` at each of K points covers its own point with probability 0.95, but all K
at once with less (about ``0.95 ** K`` for independent points). A *simultaneous* band covers the whole
curve with the stated probability: with ``Z ~ N(0, Sigma)`` the estimators' joint Monte Carlo error (Sigma
their covariance, already divided by the replicates) and ``sd = sqrt(diag Sigma)``, the sup-t critical
value c solves ::

    P(max_k |Z_k| / sd_k <= c) = level,

and the band is ``estimate ± c sd`` (Montiel Olea & Plagborg-Møller 2019). c depends on Sigma only through
its correlation matrix; it lies between the normal quantile (K = 1, or all points perfectly correlated) and
Šidák's value for K independent points (Šidák's inequality).

=============================  =========================================================================
name                           what it computes
=============================  =========================================================================
:func:`sup_t_critical`         c for a correlation matrix and a level
:func:`sidak_critical`         c for K independent points (the exact sup-t value there)
:func:`sup_t_band`             the band ``estimate ± c sd`` from estimates and their covariance
:func:`sup_t_band_scaled`      the same from estimates, their standard errors and their correlation
:class:`JointBand`             its result: ``lower``, ``upper``, ``critical``, ``level``
=============================  =========================================================================

How c is computed (and why). ``P(max_k |Z_k| > c)`` is a rectangle probability of a K-variate normal; its
general-purpose integrator (Genz's, behind ``scipy.stats.multivariate_normal.cdf``) is randomised and takes
tens of milliseconds per evaluation at K = 30, times a root find, per curve. Plain simulation of ``max |Z|``
needs millions of draws for three digits of c at K = 10. Instead the union ``{max_k |Z_k| > c}`` is
estimated by importance sampling (Naiman & Priebe 2001; Adler, Blanchet & Liu 2012): pick a point k
(balanced over the draws), draw ``Z_k`` from the normal conditioned on ``|Z_k| > c0`` (stratified uniforms)
and the rest of Z given ``Z_k``; then ``P(max |Z| > c) = sum_k P(|Z_k| > c0) E[1{max |Z| > c} / N_c0]`` for
every ``c >= c0``, N_c0 the number of points beyond c0. With c0 just below the answer (a first, smaller
pass finds it) the weights vary little for weakly correlated points, and a single weighted survival curve of ``max |Z|`` gives c by
interpolation: no root find. The draws come from a fixed seed, so c is a deterministic function of the
correlation matrix.

Its own error, and why c errs on the safe side. The sampler also estimates the standard error of its c (the
survival's standard error at c, from the differences of neighbouring strata, over the density of
``max |Z|`` there); while it exceeds 2e-3 it draws more batches (up to 4 of 8,192 draws: strongly
correlated points need them, as the weights 1 / N_c0 then range from 1 / K to 1), and it returns the
estimate plus 3.5 of its standard errors, capped at Šidák's value (which no correlation exceeds). Measured
against exact values over K in {2, 3, 5, 10, 20, 30, 50, 100}, levels 0.8, 0.9, 0.95, independent points
(Šidák) and equicorrelated ones at 0.3, 0.6, 0.9, 0.97 (by 1-D quadrature; ``tests/stats/test_joint.py``): c is
never below the exact value and at most 0.028 above it (at K = 100, correlation 0.97, level 0.8), so the
band's exact simultaneous coverage lies between ``level`` and ``level + 0.01``. The former bare estimate
(one batch, no margin) erred either way by up to 0.021 there (its standard error, 1e-3 for independent
points, reaches 6e-3 under strong correlation): its stated "about 1e-3" held for independent points only.
Both are far below the Monte Carlo error of the MCSEs the band is built from.

A singular correlation matrix (points perfectly correlated, or more points than replicates) is factored by
``eigh`` with its negligible eigenvalues dropped.

References
----------
Montiel Olea, J. L., & Plagborg-Møller, M. (2019). Simultaneous confidence bands: Theory, implementation, and
an application to SVARs. Journal of Applied Econometrics 34(1), 1-17.

Naiman, D. Q., & Priebe, C. E. (2001). Computing scan statistic p values using importance sampling, with
applications to genetics and medical image analysis. Journal of Computational and Graphical Statistics
10(2), 296-328.

Adler, R. J., Blanchet, J. H., & Liu, J. (2012). Efficient Monte Carlo for high excursions of Gaussian
random fields. The Annals of Applied Probability 22(3), 1167-1214.

Šidák, Z. (1967). Rectangular confidence regions for the means of multivariate normal distributions. Journal
of the American Statistical Association 62(318), 626-633.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["JointBand", "sup_t_critical", "sidak_critical", "sup_t_band", "sup_t_band_scaled"]

# Draws of one batch of the importance sampler (a first pass, to place c0, uses a sixteenth of one): a batch takes
# about 5 ms at K = 30, 20 ms at K = 100 (single-threaded BLAS: a caller on a busy machine should limit its
# threads, as the studies do; threads made it 6x slower).
_DRAWS = 8192
# More batches are drawn while the sampler's own standard error of c is above _TARGET_SE, up to _MAX_BATCHES
# (strongly correlated points need them: there the weights 1 / N_c0 vary from 1 / K to 1).
_MAX_BATCHES = 4
_TARGET_SE = 2e-3
# c is returned _SE_MARGIN of its own standard errors above the estimate (conservative by its own error: a
# normal error beyond 3.5 SE has probability 2e-4), never above Šidák's value (conservative for any correlation).
_SE_MARGIN = 3.5
# Half-width of the difference quotient of the weighted survival that gives the density of max |Z| at c.
_SLOPE_STEP = 0.05
# The sampler's fixed seed: c is a function of the correlation matrix alone.
_SEED = 20261126
# Eigenvalues below this fraction of the largest are rounding (a singular correlation matrix): dropped.
_RANK_TOL = 1e-10
# Margin below the first pass's c at which the second pass conditions (its error is far smaller).
_MARGIN = 0.1


@dataclass(frozen=True)
class JointBand:
    """A simultaneous band for a curve: what :func:`sup_t_band` returns.

    Parameters
    ----------
    lower, upper : ndarray of float64, shape (K,)
        The band's ends, ``estimate -/+ critical * sd`` (the estimate's units); the point itself where its sd is 0,
        NaN where the estimate or its variance is not finite.
    critical : float
        The sup-t critical value c (in standard errors), >= the normal quantile of ``(1 + level) / 2``.
    level : float
        The simultaneous coverage the band is built for, in (0, 1).

    Examples
    --------
    >>> band = sup_t_band(np.array([1.0]), np.array([[0.25]]))
    >>> round(band.critical, 4), band.lower.round(4).tolist(), band.upper.round(4).tolist()
    (1.96, [0.02], [1.98])
    """

    lower: np.ndarray
    upper: np.ndarray
    critical: float
    level: float


def _level_iv(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0 < level < 1:
        raise ValueError(f"level must be a number strictly between 0 and 1, got {level!r}")
    return float(level)


def _corr_iv(corr) -> np.ndarray:
    corr = np.asarray(corr, dtype=np.float64)
    if corr.ndim != 2 or corr.shape[0] != corr.shape[1] or corr.shape[0] < 1:
        raise ValueError(f"corr must be a square (K, K) matrix with K >= 1, got shape {corr.shape}")
    if not np.all(np.isfinite(corr)):
        raise ValueError("corr must be finite")
    if not np.allclose(np.diag(corr), 1.0, atol=1e-8) or not np.allclose(corr, corr.T, atol=1e-8):
        raise ValueError("corr must be a symmetric correlation matrix (ones on the diagonal)")
    return corr


def sidak_critical(K: int, level: float = 0.95) -> float:
    """The sup-t critical value for K independent points: ``Phi^-1((1 + level^(1/K)) / 2)`` (Šidák 1967).

    Parameters
    ----------
    K : int
        Number of points, >= 1.
    level : float, default 0.95
        Simultaneous coverage, in (0, 1).

    Returns
    -------
    float
        c, in standard errors; for K = 1 the normal quantile 1.96 (at 0.95).

    Raises
    ------
    ValueError
        If K is not an integer >= 1 or ``level`` is not in (0, 1).

    Examples
    --------
    >>> round(sidak_critical(1), 4), round(sidak_critical(10), 4)
    (1.96, 2.7996)
    """
    level = _level_iv(level)
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
        raise ValueError(f"K must be an integer >= 1, got {K!r}")
    return float(special.ndtri((1.0 + level ** (1.0 / K)) / 2.0))


@lru_cache(maxsize=32)
def _draws(M: int, K: int, batch: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sampler's fixed draws of one batch: float32 normals (M, K) (a rank-r factor uses the first r columns),
    stratified uniforms (M,), balanced points k (M,)."""
    rng = np.random.default_rng(_SEED if batch == 0 else (_SEED, batch))
    eta = rng.standard_normal((M, K), dtype=np.float32)
    u = (np.arange(M) + rng.random(M)) / M
    return eta, u, np.arange(M) % K


def _sample(L: np.ndarray, rho: np.ndarray, c0: float, M: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """``max_k |Z_k|`` of M draws conditioned beyond c0, shape (M,), and each draw's weight ``x``, shape (M,):
    ``P(max |Z| > c) = E[x 1{max |Z| > c}]`` for every c >= c0."""
    K, r = L.shape
    eta, u, k = _draws(M, K, batch)
    # float32 for the (M, K) work: thresholds near 3 need nothing like float64's digits, and it halves the
    # memory traffic, which is the cost here.
    Y = eta[:, :r] @ L.T.astype(np.float32)  # (M, K): Z without the conditioning
    tail = float(special.ndtr(-c0))
    t = -special.ndtri(u * tail)  # |Z_k| given |Z_k| > c0 (the sign is immaterial: Z and -Z count alike)
    shift = (t - Y[np.arange(M), k]).astype(np.float32)
    Z = np.multiply(rho.astype(np.float32)[k], shift[:, None])
    Z += Y
    A = np.abs(Z, out=Z)
    count = np.maximum(np.count_nonzero(A > c0, axis=1), 1)
    return A.max(axis=1).astype(np.float64), (K * 2.0 * tail) / count


def _root(m: np.ndarray, x: np.ndarray, alpha: float, c0: float) -> tuple[float, float]:
    """The c with weighted survival alpha, linear between draws (c0 when the survival at c0 is already below
    alpha), and the sampler's standard error of that c (delta method: the survival's standard error at c over
    the density of max |Z| there)."""
    M = m.size
    order = np.argsort(-m, kind="stable")
    m, x = m[order], x[order]
    S = np.cumsum(x) / M  # P(max |Z| > m_j-), descending m
    j = int(np.searchsorted(S, alpha))
    if j >= M:
        c = c0
    elif j == 0:
        c = float(m[0])
    else:
        f = (alpha - S[j - 1]) / (S[j] - S[j - 1])
        c = float(m[j - 1] + f * (m[j] - m[j - 1]))
    beyond = np.empty(M)
    beyond[order] = x * (m > c)  # back in the order drawn: neighbours share a stratum pair
    # The variance of a stratified mean from the differences of neighbouring strata (draws 2j and 2j + 1; each
    # batch has an even size): it keeps what the stratified uniforms remove, which an iid variance would count,
    # and counts the spread between neighbouring points k, which the balanced points remove (conservative).
    pair = beyond.reshape(-1, 2)
    se_S = float(np.sqrt(np.sum((pair[:, 0] - pair[:, 1]) ** 2)) / M)
    lo, hi = max(c - _SLOPE_STEP, c0), c + _SLOPE_STEP
    density = (x[m > lo].sum() - x[m > hi].sum()) / M / (hi - lo)
    se = se_S / density if density > 0 else np.inf
    return c, float(se)


def sup_t_critical(corr, level: float = 0.95) -> float:
    """The sup-t critical value c: ``P(max_k |Z_k| <= c) = level`` for ``Z ~ N(0, corr)``.

    Parameters
    ----------
    corr : array_like of float, shape (K, K)
        A correlation matrix (symmetric, ones on the diagonal, positive semi-definite; singular is fine).
    level : float, default 0.95
        Simultaneous coverage, in (0, 1).

    Returns
    -------
    float
        c, in standard errors: the normal quantile for K = 1 or perfectly correlated points, Šidák's value
        (:func:`sidak_critical`) for independent ones, in between otherwise. Deterministic (a fixed-seed
        importance sampler, see the module docstring) and conservative: its estimate plus 3.5 of its own
        standard errors, at most Šidák's value; measured never below the exact c and at most 0.028 above it
        (simultaneous coverage between ``level`` and ``level + 0.01``) on the grid of the module docstring.

    Raises
    ------
    ValueError
        If ``corr`` is not a square correlation matrix or ``level`` is not in (0, 1).

    Examples
    --------
    >>> round(sup_t_critical(np.eye(1)), 4), round(sup_t_critical(np.ones((5, 5))), 4)
    (1.96, 1.96)
    >>> round(sup_t_critical(np.eye(10)), 2), round(sidak_critical(10), 2)
    (2.8, 2.8)
    >>> idx = np.arange(30)
    >>> round(sup_t_critical(0.95 ** np.abs(idx[:, None] - idx)), 2)  # an AR(1) curve: between 1.96 and 3.14
    2.75
    """
    level, corr = _level_iv(level), _corr_iv(corr)
    K = corr.shape[0]
    alpha = 1.0 - level
    z1 = float(-special.ndtri(alpha / 2))
    if K == 1:
        return z1
    w, V = np.linalg.eigh(corr)
    keep = w > w[-1] * _RANK_TOL
    if keep.sum() == 1:  # every point a copy of one (up to sign): the one-point quantile, exactly
        return z1
    L = V[:, keep] * np.sqrt(w[keep])
    L /= np.linalg.norm(L, axis=1, keepdims=True)  # unit variances after the dropped eigenvalues
    c, se = _estimate(L, alpha, z1)
    return min(c + _SE_MARGIN * se, sidak_critical(K, level))


def _estimate(L: np.ndarray, alpha: float, z1: float) -> tuple[float, float]:
    """The sampler's estimate of c for the unit-variance factor L (K, r), and its standard error."""
    rho = L @ L.T
    c, _ = _root(*_sample(L, rho, z1, _DRAWS // 16, 0), alpha, z1)
    c0 = max(z1, c - _MARGIN)
    while True:
        parts = [_sample(L, rho, c0, _DRAWS, 0)]
        c, se = _root(*parts[0], alpha, c0)
        if se > _TARGET_SE:  # the batches the first one's error asks for (the error falls as 1 / sqrt(draws))
            batches = min(_MAX_BATCHES, int(np.ceil((se / _TARGET_SE) ** 2)))
            parts += [_sample(L, rho, c0, _DRAWS, b) for b in range(1, batches)]
            m, x = (np.concatenate([part[i] for part in parts]) for i in (0, 1))
            c, se = _root(m, x, alpha, c0)
        if c > c0 or c0 == z1:  # the answer lies where the sampler is valid (c >= c0)
            return c, se
        c0 = max(z1, c0 - 2 * _MARGIN)


@lru_cache(maxsize=64)
def _critical(corr: bytes, K: int, level: float) -> float:
    """:func:`sup_t_critical` memoised on the matrix's bytes: curves with one correlation (a mean and its bias,
    a variance and its square root) cost one computation."""
    return sup_t_critical(np.frombuffer(corr).reshape(K, K), level)


def sup_t_band(estimate, cov, *, level: float = 0.95) -> JointBand:
    """A simultaneous band ``estimate ± c sd`` for a curve of K estimates with joint covariance ``cov``.

    Parameters
    ----------
    estimate : array_like of float, shape (K,)
        The curve's estimates (any units).
    cov : array_like of float, shape (K, K)
        Their joint covariance as estimators (the replicates' covariance divided by their number: its
        diagonal is the squared MCSEs), symmetric positive semi-definite (squared units of ``estimate``).
        Points with zero variance (exact: an estimator constant over the replicates) get the point itself and
        do not count towards K; points whose estimate or variance is not finite get NaN and do not count.
    level : float, default 0.95, keyword-only
        Simultaneous coverage, in (0, 1).

    Returns
    -------
    JointBand
        ``lower``, ``upper`` (shape (K,)), ``critical`` (c of :func:`sup_t_critical` for the correlation of the
        counted points; the normal quantile when at most one counts) and ``level``.

    Raises
    ------
    ValueError
        If the shapes disagree or ``level`` is not in (0, 1).

    Examples
    --------
    Three points, the last exact; the first two correlated 0.5 (exact c 2.2121; the sampler's c errs above it):

    >>> band = sup_t_band([0.0, 1.0, 2.0], [[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.0]])
    >>> round(band.critical, 3), band.lower.round(3).tolist(), band.upper.round(3).tolist()
    (2.216, [-2.216, -1.216, 2.0], [2.216, 3.216, 2.0])
    """
    level = _level_iv(level)
    est = np.asarray(estimate, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    if est.ndim != 1 or cov.shape != (est.size, est.size):
        raise ValueError(f"need estimate of shape (K,) and cov of shape (K, K), got {est.shape} and {cov.shape}")
    var = np.diag(cov).copy()
    ok = np.isfinite(var)
    sd = np.sqrt(np.clip(np.where(ok, var, 0.0), 0.0, None))
    live = ok & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.where(np.outer(live, live), cov / np.outer(sd, sd), 0.0)
    return sup_t_band_scaled(est, np.where(ok, sd, np.nan), corr, level=level)


def sup_t_band_scaled(estimate, sd, corr, *, level: float = 0.95) -> JointBand:
    """The simultaneous band ``estimate ± c sd`` from the standard errors and the correlation of the estimates.

    :func:`sup_t_band` with its covariance given as ``sd`` and ``corr``: the form a study has when its standard
    errors come from one computation and the correlation from another, and in which curves with one
    correlation (a variance and its square root) share their critical value exactly.

    Parameters
    ----------
    estimate : array_like of float, shape (K,)
        The curve's estimates (any units).
    sd : array_like of float, shape (K,)
        Their standard errors (the MCSEs), >= 0, units of ``estimate``. A point with sd 0 gets the point itself,
        one with a non-finite estimate or sd gets NaN; neither counts towards K.
    corr : array_like of float, shape (K, K)
        The estimates' correlation matrix (its entries of points that do not count are ignored).
    level : float, default 0.95, keyword-only
        Simultaneous coverage, in (0, 1).

    Returns
    -------
    JointBand
        As :func:`sup_t_band`.

    Raises
    ------
    ValueError
        If the shapes disagree, ``corr`` is not finite where it counts, or ``level`` is not in (0, 1).

    Examples
    --------
    >>> band = sup_t_band_scaled([0.0, 1.0], [1.0, 2.0], [[1.0, 0.5], [0.5, 1.0]])
    >>> round(band.critical, 3), band.upper.round(3).tolist()
    (2.216, [2.216, 5.432])
    """
    level = _level_iv(level)
    est = np.asarray(estimate, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    corr = np.asarray(corr, dtype=np.float64)
    if est.ndim != 1 or sd.shape != est.shape or corr.shape != (est.size, est.size):
        raise ValueError(
            f"need estimate and sd of shape (K,) and corr of shape (K, K), got {est.shape}, {sd.shape} and {corr.shape}"
        )
    ok = np.isfinite(est) & np.isfinite(sd)
    live = ok & (sd > 0)
    idx = np.flatnonzero(live)
    z1 = float(-special.ndtri((1.0 - level) / 2))
    if idx.size <= 1:
        c = z1
    else:
        sub = corr[np.ix_(idx, idx)]
        if not np.all(np.isfinite(sub)):
            raise ValueError("the correlation must be finite between points with a positive standard error")
        sub = np.clip((sub + sub.T) / 2, -1.0, 1.0)
        np.fill_diagonal(sub, 1.0)
        c = _critical(np.ascontiguousarray(sub).tobytes(), idx.size, level)
    half = np.where(ok, c * np.where(ok, sd, 0.0), np.nan)
    return JointBand(lower=est - half, upper=est + half, critical=c, level=level)
