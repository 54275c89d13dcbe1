"""Fitting the noisy quadratic law to the tail of a sample, and its parametric bootstrap: the kernels on arrays.

The law-level functions, which return the fitted law itself (:func:`~simstudy.distributions.fitting.fit`,
:func:`~simstudy.distributions.fitting.parametric_bootstrap` and their results), live in
:mod:`simstudy.distributions.fitting` on top of these.

==================  ========================================================================================
step                what is done
==================  ========================================================================================
threshold           :class:`Threshold`: the scores at or below it are censored (a fixed score, or the
                    ``q``-quantile of the sample: the lowest ``floor(q n)`` scores)
objective           maximum product of spacings as grouped-data likelihood (Titterington 1985): buckets
                    ``(-inf, t]`` (the censored count), ``(t, y_(1)]``, ..., ``(y_(m), inf)`` (one extra point);
                    ``sum_i N_i log(F(z_i) - F(z_(i-1)))`` with ``N_i`` the points in bucket i (ties merge)
search              every c in 1..10 (or the constrained set), and for each (b, log(b - a), log o) by
                    Levenberg-Marquardt on the analytic gradient and scoring matrix, vectorized over many
                    samples at once (the bootstrap's); each c restarts from its neighbours'; the best c wins
start               from the noise-free law's tail moments (the tail of quadratic(a, b, c) above t is
                    quadratic(t, b, c)), in standardized units
bootstrap           :func:`bootstrap_chunk`: samples of n from the fitted law, the same threshold rule and
                    the whole fit again (c included); percentile intervals for b and pointwise bands for the
                    median and mean tuning curves at any k
==================  ========================================================================================

Maximum spacing is consistent where maximum likelihood is not: with c = 1 and no noise the density is
unbounded at b (Cheng & Amin 1983; Ranneby 1984). The noise-free law (o = 0, the family's boundary, which
a search in log o only approaches) is fitted beside the noisy one for every c, in closed form; when it wins
the fit is flagged ``hit_bound``.

References
----------
Cheng, R. C. H., & Amin, N. A. K. (1983). Estimating parameters in continuous univariate distributions with a
shifted origin. JRSS B 45(3), 394-403.
Titterington, D. M. (1985). Comment on "Estimating parameters in continuous univariate distributions".
JRSS B 47(1), 115-116.
Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from simstudy.stats.errors import InvalidParameter
from simstudy.stats.quadratic import C_RANGE, SQRT2PI, WINDOW, curves, nodes

__all__ = [
    "Threshold",
    "fit_batch",
    "bootstrap_chunk",
    "MIN_TAIL",
    "MAX_TAIL",
    "FIT_VERSION",
]

#: The fewest scores above the threshold a fit accepts (three parameters, and c).
MIN_TAIL = 8
#: The most a fit accepts: each c holds (scores x 32 nodes) arrays of its own, about 2.6 KB per score for the
#: ten c values; 50,000 scores above the threshold is about 1.3 GB at the peak.
MAX_TAIL = 50_000
# The bytes a fit_batch call may hold at its peak: more rows than fit are fitted in blocks (rows do not interact).
_MEMORY_BUDGET = 512 * 2**20
_BYTES_PER_POINT = 32 * 8 * 10  # 32 quadrature nodes, float64, about ten such arrays alive at once
#: The fit's algorithm, in the identity of every stored result made from fits: a change of optimizer or of its
#: tolerances changes the numbers, so results stored by an older one are not reused.
FIT_VERSION = "mps-newton-2"
_R_FLOOR = 1e-6  # o / (b - a) is kept above this: the quadrature's windows stay resolvable
_LOG_R_FLOOR = np.log(_R_FLOOR)
# ... and below this: beyond, the quadratic part is under 1% of the noise and the law is normal (a fit heads
# there, b - a shrinking without end, when the tail looks normal; it stops here and is flagged hit_bound).
_LOG_R_CEIL = np.log(100.0)


# -- the threshold rule ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Threshold:
    """Which scores are censored: those at or below a fixed ``score``, or the lowest ``floor(quantile n)``.

    Parameters
    ----------
    quantile : float or None, optional
        A probability in [0, 1): censor the lowest ``floor(quantile * n)`` scores (ties with the last of
        them too); default 0.5, the lower half. Pass None with a ``score``.
    score : float or None, optional
        Censor the scores ``<= score`` (for a convex fit, ``>= score``), in score units; default None. Give
        exactly one of the two: a fixed score needs ``quantile=None``.

    Raises
    ------
    InvalidParameter
        If both or neither of `quantile` and `score` are given, or `quantile` is not in [0, 1).

    Examples
    --------
    >>> Threshold(quantile=0.5).of(np.array([[0.1, 0.4, 0.3, 0.9]]))
    array([0.3])
    >>> rule = Threshold(quantile=None, score=0.8)
    >>> rule.describe(), rule.of(np.array([[0.1, 0.9]]))
    ('score 0.8', array([0.8]))
    >>> Threshold(score=0.8)  # quantile keeps its default 0.5
    Traceback (most recent call last):
        ...
    simstudy.stats.errors.InvalidParameter: threshold must be a quantile or a score (exactly one), got (0.5, 0.8)
    """

    quantile: float | None = 0.5
    score: float | None = None

    def __post_init__(self) -> None:
        if (self.quantile is None) == (self.score is None):
            raise InvalidParameter(
                "threshold", "must be a quantile or a score (exactly one)", (self.quantile, self.score)
            )
        if self.quantile is not None and not 0 <= float(self.quantile) < 1:
            raise InvalidParameter("threshold.quantile", "must be in [0, 1)", self.quantile)

    def of(self, samples: np.ndarray) -> np.ndarray:
        """The threshold of each row of ``samples`` (shape (R, n)), in the concave direction; shape (R,)."""
        samples = np.atleast_2d(samples)
        if self.score is not None:
            return np.full(samples.shape[0], float(self.score))
        assert self.quantile is not None  # exactly one of quantile and score (__post_init__)
        k = int(np.floor(float(self.quantile) * samples.shape[1]))
        if k == 0:
            return np.full(samples.shape[0], -np.inf)
        return np.partition(samples, k - 1, axis=1)[:, k - 1]

    def describe(self) -> str:
        return f"score {self.score:g}" if self.score is not None else f"quantile {self.quantile:g}"


# -- the objective ----------------------------------------------------------------------------------
def _cdf_grad(z: np.ndarray, c: np.ndarray, r: np.ndarray | None, side: int = 16):
    """The standard concave law (a = 0, b = 1, noise ratio r) at z, with derivatives, broadcast (R, K).

    Returns ``cdf, sf, G_z, G_r, G_zz, G_zr, G_rr`` (G is the CDF; ``G_z`` the PDF). One pass of exponentials
    serves all: with ``V = U^2``, ``w = (V - mu)/r`` and ``mu = 1 - z``, every piece is a moment
    ``A_k = E[V^(c/2 - 1) w^k]`` or ``B_k = E[V^(c/2) w^k]`` over ``0 <= V <= 1``, since derivatives of a normal
    density in its mean and scale are polynomials in w times it:

    ``G_z = c/2 A_0``, ``G_zz = -c/2 A_1 / r``, ``G_zr = c/2 (A_2 - A_0) / r``,
    ``G_r = -z/r^2 phi(z/r) - (B_2 - B_0) / r``,
    ``G_rr = phi(z/r) (2z/r^3 - z^3/r^5) - (B_4 - 5 B_2 + 2 B_0) / r^2``.

    With ``r`` None, the noise-free law's closed forms (every r-derivative 0).
    """
    if r is None:
        t = np.clip(1.0 - z, 0.0, 1.0)
        sf = t ** (0.5 * c)
        inside = (z > 0) & (z < 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            pdf = np.where(inside, 0.5 * c * t ** (0.5 * c - 1.0), 0.0)
            g_zz = np.where(inside, -0.5 * c * (0.5 * c - 1.0) * t ** (0.5 * c - 2.0), 0.0)
        zero = np.zeros_like(sf)
        return 1.0 - sf, sf, pdf, zero, g_zz, zero, zero
    mu = 1.0 - z
    finite = np.isfinite(z)
    mu_f = np.where(finite, mu, 2.0 + WINDOW * r)  # outside the window: every moment is 0
    u, wts = nodes(mu_f, r, side=side)
    u2 = u * u
    w = u2 - mu_f[..., None]
    w /= r[..., None]
    w2 = w * w
    p = np.multiply(w2, -0.5)
    np.exp(p, out=p)
    # u^(c - 1) for integer c - 1 in 0..9 from u, u^2, u^4, u^8 by its bits: a few multiplications cost less
    # than one pow() over the (R, K, nodes) block.
    e = np.broadcast_to(np.asarray(c, dtype=np.float64) - 1.0, mu_f.shape).astype(np.int64)[..., None]
    if np.any(e & 1):
        p *= np.where(e & 1, u, 1.0)
    u4 = u2 * u2
    if np.any(e & 2):
        p *= np.where(e & 2, u2, 1.0)
    if np.any(e & 4):
        p *= np.where(e & 4, u4, 1.0)
    if np.any(e & 8):
        p *= np.where(e & 8, u4 * u4, 1.0)
    p *= wts
    scale = 2.0 / (r * SQRT2PI)
    a0 = p.sum(axis=-1) * scale
    t = p * w
    a1 = t.sum(axis=-1) * scale
    t *= w
    a2 = t.sum(axis=-1) * scale
    p *= u2
    b0 = p.sum(axis=-1) * scale
    p *= w2
    b2 = p.sum(axis=-1) * scale
    p *= w2
    b4 = p.sum(axis=-1) * scale
    zr = np.where(finite, z / r, z)  # z = +-inf stays +-inf
    cdf = np.clip(special.ndtr(zr) - b0, 0.0, 1.0)
    sf = np.clip(special.ndtr(-zr) + b0, 0.0, 1.0)
    half_c = 0.5 * c
    pdf = half_c * a0
    g_zz = -half_c * a1 / r
    g_zr = half_c * (a2 - a0) / r
    with np.errstate(invalid="ignore", over="ignore"):
        zf = np.where(finite, z, 0.0)
        phi_z = np.where(finite, np.exp(-0.5 * zr * zr) / SQRT2PI, 0.0)
        g_r = -zf / (r * r) * phi_z - (b2 - b0) / r
        g_rr = phi_z * (2.0 * zf / r**3 - zf**3 / r**5) - (b4 - 5.0 * b2 + 2.0 * b0) / (r * r)
    return cdf, sf, pdf, g_r, g_zz, g_zr, g_rr


def _objective(x: np.ndarray, pts: np.ndarray, wts: np.ndarray, c: np.ndarray, noise_free: bool, side: int = 16):
    """Minus the log product of spacings, its gradient and Hessian in x = (b, log(b - a), log o), per row.

    ``pts`` (R, K): the threshold then the distinct tail scores, padded with +inf; ``wts`` (R, K + 1): the
    bucket counts, bucket j being (pts[j-1], pts[j]] with pts[-1] = -inf and pts[K] = +inf. Rows where a
    bucket with points has no probability get +inf. The log scales keep b - a and o positive and put the
    three coordinates on comparable scales.

    Returns ``f, g, H, J``: H is the exact Hessian, J the scoring (Gauss-Newton) matrix
    ``sum_j N_j grad D_j grad D_j' / D_j^2``, positive semi-definite, for where H is not.
    """
    b, log_s, log_o = x[:, 0], x[:, 1], x[:, 2]
    s = np.exp(log_s)
    a = b - s
    r = np.maximum(np.exp(log_o - log_s), _R_FLOOR)
    z = (pts - a[:, None]) / s[:, None]
    cdf, sf, G_z, G_r, G_zz, G_zr, G_rr = _cdf_grad(z, c[:, None], None if noise_free else r[:, None], side)
    R = pts.shape[0]
    ones, zeros = np.ones((R, 1)), np.zeros((R, 1))
    F = np.concatenate([zeros, cdf, ones], axis=1)
    S = np.concatenate([ones, sf, zeros], axis=1)
    # Each spacing from whichever side keeps its digits: F below the median, S above it.
    spacing = np.where(F[:, 1:] <= 0.5, F[:, 1:] - F[:, :-1], S[:, :-1] - S[:, 1:])
    used = wts > 0
    positive = np.where(used, spacing, 1.0) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(used & positive, np.log(np.where(used & positive, spacing, 1.0)), 0.0)
    value = -(wts * logs).sum(axis=1)
    bad = ~np.all(positive, axis=1) | ~np.isfinite(value)
    value = np.where(bad, np.inf, value)
    # F = G(z, r), z = 1 + (y - b)/s, r = o/s, x = (b, log s, log o):
    # z_b = -1/s, z_ls = 1 - z; z_b,ls = 1/s, z_ls,ls = z - 1; r_ls = -r, r_lo = r; r_ls,ls = r_lo,lo = r,
    # r_ls,lo = -r (at the floor, or without noise, r does not move).
    zf = np.where(np.isfinite(z), z, 1.0)
    rr = np.broadcast_to(np.where(noise_free | (r <= _R_FLOOR), 0.0, r)[:, None], z.shape)
    inv_s = np.broadcast_to((1.0 / s)[:, None], z.shape)
    zero = np.zeros_like(z)
    dz = (-inv_s, 1.0 - zf, zero)
    dr = (zero, -rr, rr)
    dzz = {(0, 0): zero, (0, 1): inv_s, (1, 1): zf - 1.0, (0, 2): zero, (1, 2): zero, (2, 2): zero}
    drr = {(0, 0): zero, (0, 1): zero, (1, 1): rr, (0, 2): zero, (1, 2): -rr, (2, 2): rr}
    dF = [G_z * dz[i] + G_r * dr[i] for i in range(3)]
    with np.errstate(invalid="ignore"):
        dF = [np.where(np.isfinite(z), d, 0.0) for d in dF]

    def diff(v):  # the spacings' values of a quantity at the points (0 beyond both ends)
        return np.diff(np.concatenate([zeros, v, zeros], axis=1), axis=1)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = np.where(used, 1.0 / np.where(used & positive, spacing, 1.0), 0.0)
        dD = np.stack([diff(d) for d in dF], axis=2)  # (R, K + 1, 3)
        q = dD * inv[..., None]
        g = -np.einsum("rj,rji->ri", wts, q)
        J = np.einsum("rj,rji,rjk->rik", wts, q, q)
        H = J.copy()
        wi = wts * inv
        for (i, k), zik in dzz.items():
            d2 = (
                G_z * zik
                + G_r * drr[(i, k)]
                + G_zz * dz[i] * dz[k]
                + G_zr * (dz[i] * dr[k] + dz[k] * dr[i])
                + G_rr * dr[i] * dr[k]
            )
            d2 = np.where(np.isfinite(z), d2, 0.0)
            term = -(wi * diff(d2)).sum(axis=1)
            H[:, i, k] += term
            if i != k:
                H[:, k, i] += term
    broken = (
        bad
        | ~np.all(np.isfinite(g), axis=1)
        | ~np.all(np.isfinite(H), axis=(1, 2))
        | ~np.all(np.isfinite(J), axis=(1, 2))
    )
    g[broken], H[broken], J[broken] = 0.0, 0.0, 0.0
    return value, g, H, J


def _newton(x0, fun, free: np.ndarray, *, max_iter: int = 60, ftol: float = 1e-8, project=None):
    """Minimize ``fun`` row by row (vectorized) by a damped Newton method (Levenberg-Marquardt).

    ``fun(x, rows) -> (f, g, H, J)``: value, gradient, exact Hessian and scoring matrix; ``free`` (R, 3) masks
    the coordinates that move. Each step solves ``(M + lam diag(J)) p = -g`` with M the Hessian where it is
    positive definite (quadratic convergence near the optimum) and the scoring matrix elsewhere; a step
    that lowers f is taken and lam shrinks tenfold, otherwise lam grows tenfold. Done when the Newton
    decrement ``-g'p`` or the step's gain falls below ``ftol`` (relative) twice running: a log product of
    spacings has sampling noise of order 1, so 1e-8 of it is far below what moves b by a visible fraction
    of its standard error. ``project(x)`` maps a trial point back into the feasible set. Returns x, f,
    converged (R,).
    """
    x = x0.copy()
    R, d = x.shape
    f, g, H, J = fun(x, np.arange(R))
    lam = np.full(R, 1e-4)
    converged = np.zeros(R, dtype=bool)
    stalled = np.zeros(R, dtype=int)
    active = np.flatnonzero(np.isfinite(f))
    eye = np.eye(d)
    fixed = free == 0
    for _ in range(max_iter):
        if active.size == 0:
            break
        xa, fa, ga, la = x[active], f[active], g[active] * free[active], lam[active]
        # A coordinate with no curvature and no slope (log o at the noise floor) is held this step, so that
        # the others still take Newton steps.
        Hd = np.abs(np.einsum("rii->ri", H[active]))
        fx = fixed[active] | ((Hd < 1e-12) & (np.abs(ga) < 1e-12))
        ga = ga * ~fx
        off = fx[:, :, None] | fx[:, None, :]

        def masked(m, off=off, fx=fx):  # a fixed coordinate: identity row and column (and zero gradient)
            return np.where(off, 0.0, m) + fx[:, :, None] * eye

        Ha, Ja = masked(H[active]), masked(J[active])
        convex = np.linalg.eigvalsh(Ha)[:, 0] > 0
        M = np.where(convex[:, None, None], Ha, Ja)
        diag = np.einsum("rii->ri", Ja)
        A = M + la[:, None, None] * (diag[:, :, None] * eye + 1e-12 * eye)
        try:
            p = -np.linalg.solve(A, ga[..., None])[..., 0]
        except np.linalg.LinAlgError:
            p = -ga
        p = np.where(np.isfinite(p), p, 0.0)
        # At most 1 in b (standardized units) and 2 in the log scales per step.
        big = np.maximum(np.abs(p[:, 0]), np.abs(p[:, 1:]).max(axis=1) / 2.0)
        p /= np.maximum(big, 1.0)[:, None]
        trial = xa + p if project is None else project(xa + p, active)
        decrement = -np.einsum("ri,ri->r", ga, trial - xa)
        ft, gt, Ht, Jt = fun(trial, active)
        better = ft < fa
        idx = active[better]
        x[idx], f[idx], g[idx] = trial[better], ft[better], gt[better]
        H[idx], J[idx] = Ht[better], Jt[better]
        lam[active] = np.where(better, np.maximum(la / 10.0, 1e-12), la * 10.0)
        tol = ftol * np.maximum(1.0, np.abs(fa))
        small = (better & (fa - ft <= tol)) | (decrement <= tol)
        stalled[active] = np.where(small, stalled[active] + 1, np.where(better, 0, stalled[active]))
        # Rejected steps only raise lam; past 1e8 no step of any length lowers f: a minimum to rounding.
        stuck = lam[active] > 1e8
        done = (stalled[active] >= 2) | stuck
        converged[active[done]] = True
        active = active[~done]
    return x, f, converged


# -- data preparation -------------------------------------------------------------------------------
def _buckets(samples: np.ndarray, thresholds: np.ndarray):
    """Points and bucket counts (see :func:`_objective`) of sorted samples (R, n) censored at ``thresholds``."""
    R, n = samples.shape
    above = samples > thresholds[:, None]
    n_lo = n - above.sum(axis=1)
    K = int(above.sum(axis=1).max()) + 1
    pts = np.full((R, K), np.inf)
    wts = np.zeros((R, K + 1))
    for i in range(R):  # one row per sample: ties merge by np.unique (rare; a row costs microseconds)
        vals, counts = np.unique(samples[i][above[i]], return_counts=True)
        pts[i, 0] = thresholds[i]
        pts[i, 1 : 1 + vals.size] = vals
        wts[i, 0] = n_lo[i]  # (-inf, t]
        wts[i, 1 : 1 + vals.size] = counts  # (t, y_(1)], (y_(1), y_(2)], ...
        wts[i, 1 + vals.size] = 1.0  # (y_(m), inf): the extra point above the largest score
    return pts, wts


def _starts(samples: np.ndarray, thresholds: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Starting (b, log(b - a), log o) per row from the noise-free tail: above t, quadratic(a, b, c) is quadratic(t, b, c)."""
    _R, n = samples.shape
    above = samples > thresholds[:, None]
    m = above.sum(axis=1)
    t = np.where(np.isfinite(thresholds), thresholds, samples[:, 0])
    tail_mean = np.where(above, samples, 0.0).sum(axis=1) / m
    b = t + (tail_mean - t) * (c + 2.0) / 2.0
    b = np.maximum(b, samples[:, -1] + 1e-3 * (samples[:, -1] - t))
    frac_above = np.clip(m / n, 1.0 / n, 1.0)
    a = b - (b - t) / frac_above ** (2.0 / c)
    spread = np.where(above, (samples - tail_mean[:, None]) ** 2, 0.0).sum(axis=1) / m
    log_o = np.log(0.25 * np.sqrt(spread) + 1e-12)
    return np.stack([b, np.log(b - a), log_o], axis=1)


# -- the fit ------------------------------------------------------------------------------------------
def _constraints_iv(constraints: Mapping[str, Any] | None):
    """The c values, convex flag, fixed o and bound on the best score of a constraints mapping.

    The best score is b for a concave law and a for a convex one; its bound is an upper one for b (``b=(None,
    1.0)``: an accuracy cannot exceed 1) and a lower one for a (``a=(0.0, None)``: a loss cannot go below 0).
    """
    constraints = dict(constraints or {})
    unknown = set(constraints) - {"c", "convex", "o", "a", "b"}
    if unknown:
        raise InvalidParameter(
            "constraints",
            "may fix c (a value or a list), convex and o, and bound the best score (b, or a when convex)",
            sorted(unknown)[0],
        )
    c = constraints.get("c", C_RANGE)
    cs = tuple(int(v) for v in np.atleast_1d(c))
    for v in np.atleast_1d(c):
        if float(v) != int(v) or int(v) not in C_RANGE:
            raise InvalidParameter("constraints.c", f"must be integers from {C_RANGE[0]} to {C_RANGE[-1]}", c)
    convex = constraints.get("convex", False)
    if not isinstance(convex, (bool, np.bool_)):
        raise InvalidParameter("constraints.convex", "must be true or false", convex)
    o = constraints.get("o")
    if o is not None and float(o) != 0.0:
        raise InvalidParameter("constraints.o", "may only be fixed at 0 (the noise-free law)", o)
    best_key, other = ("a", "b") if convex else ("b", "a")
    if other in constraints:
        raise InvalidParameter(
            f"constraints.{other}", f"cannot be bounded: only the best score ({best_key}) can", constraints[other]
        )
    bound = np.inf  # on the best score, in the concave direction (-a for a convex law)
    if best_key in constraints:
        pair = constraints[best_key]
        try:
            lo, hi = pair
        except (TypeError, ValueError):
            raise InvalidParameter(
                f"constraints.{best_key}", "must be a pair (low, high), None for no bound", pair
            ) from None
        end = hi if not convex else lo
        wrong = lo if not convex else hi
        if wrong is not None and np.isfinite(float(wrong)):
            raise InvalidParameter(
                f"constraints.{best_key}",
                "may bound only from " + ("above" if not convex else "below") + " (the best score possible)",
                pair,
            )
        if end is not None:
            bound = float(end) if not convex else -float(end)
    return cs, bool(convex), o is not None, bound


def fit_batch(
    samples: np.ndarray,
    thresholds: np.ndarray,
    *,
    cs=C_RANGE,
    noise_free: bool = False,
    start: np.ndarray | None = None,
    precise: bool = False,
    b_max: float = np.inf,
):
    """Fit the concave law to each row of ``samples`` (sorted ascending), vectorized over rows.

    The engine of :func:`fit`, of the bootstrap and of the parametric-extrapolation study: no input
    checks, the concave direction only (negate and sort the scores of a convex fit). Each row is
    standardized internally (the fit is location-scale equivariant); results are in the samples' units.
    Rows beyond a memory budget of 512 MB are fitted in blocks (the same numbers).

    Parameters
    ----------
    samples : ndarray of float, shape (R, n)
        Rows of scores (score units), each sorted ascending.
    thresholds : ndarray of float, shape (R,)
        Per row, the scores at or below are censored (score units; ``-inf``: none).
    cs : sequence of int, keyword-only
        The c values searched; default :data:`simstudy.distributions.parametric.C_RANGE` (1..10).
    noise_free : bool, keyword-only
        Fix o = 0 (the quadratic law); default False.
    start : ndarray of float, shape (R, len(cs), 3), optional, keyword-only
        Starting (b, log(b - a), log o) per row and c in score units (e.g. the original fit's ``x``, for a
        bootstrap); default None (from the noise-free tail's moments).
    precise : bool, keyword-only
        Optimize to 1e-13 (relative) rather than 1e-8: for a single fit, where the cost does not matter;
        default False.
    b_max : float, keyword-only
        An upper bound on b (the best score possible, e.g. 1 for accuracy), score units; a fit on it is
        ``hit_bound``. Default ``inf``.

    Returns
    -------
    dict of str to ndarray
        ``a, b, o`` (R,) float in score units and ``c`` (R,) int at the best c; ``objective`` (R,), the log
        product of spacings there; ``by_c`` (R, len(cs)), the objective per c; ``converged`` and
        ``hit_bound`` (R,) bool; ``x`` (R, len(cs), 3): the optimum per c in (b, log(b - a), log o), score
        units, for warm starts.

    Examples
    --------
    Two samples of 48 scores, each censored at its median, with c fixed at 3:

    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> x = np.sort(NoisyQuadratic(0.7, 0.9, 3, 0.01).sample((2, 48), rng=np.random.default_rng(0)), axis=1)
    >>> out = fit_batch(x, Threshold(quantile=0.5).of(x), cs=(3,))
    >>> sorted(out)
    ['a', 'b', 'by_c', 'c', 'converged', 'hit_bound', 'o', 'objective', 'x']
    >>> out["c"].tolist(), out["b"].round(4).tolist(), out["x"].shape
    ([3, 3], [0.9082, 0.8997], (2, 1, 3))
    """
    samples = np.asarray(samples, dtype=np.float64)
    R, _n = samples.shape
    per_row = (
        len(cs) * (int((samples > np.asarray(thresholds)[:, None]).sum(axis=1).max(initial=0)) + 2) * _BYTES_PER_POINT
    )
    rows = max(1, int(_MEMORY_BUDGET // max(per_row, 1)))
    if R > rows:  # in blocks of rows, each within the memory budget: the same numbers, row by row
        parts = [
            fit_batch(
                samples[i : i + rows],
                thresholds[i : i + rows],
                cs=cs,
                noise_free=noise_free,
                start=None if start is None else start[i : i + rows],
                precise=precise,
                b_max=b_max,
            )
            for i in range(0, R, rows)
        ]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    # Standardize: the fit is location-scale equivariant, and the optimizer's steps are then O(1).
    loc = np.where(np.isfinite(thresholds), thresholds, samples[:, 0])
    scale = samples[:, -1] - loc
    scale = np.where(scale > 0, scale, 1.0)
    zs = (samples - loc[:, None]) / scale[:, None]
    zt = (thresholds - loc) / scale
    pts, wts = _buckets(zs, zt)
    ncs = len(cs)
    # One row per (sample, c): every c is fitted at once.
    P, W = np.repeat(pts, ncs, axis=0), np.repeat(wts, ncs, axis=0)
    C = np.tile(np.asarray(cs, dtype=np.float64), R)
    if start is None:
        x0 = _starts(np.repeat(zs, ncs, axis=0), np.repeat(zt, ncs), C)
    else:
        x0 = start.reshape(R * ncs, 3).copy()
        x0[:, 0] = (x0[:, 0] - np.repeat(loc, ncs)) / np.repeat(scale, ncs)
        x0[:, 1:] -= np.log(np.repeat(scale, ncs))[:, None]

    tol = dict(ftol=1e-13, max_iter=400) if precise else {}

    b_cap = np.repeat((b_max - loc) / scale, ncs)  # b's bound in standardized units, per row

    def project(x, rows=None):  # o / (b - a) <= 100: log(b - a) >= log o - log 100; b <= b_max
        x = x.copy()
        x[:, 1] = np.maximum(x[:, 1], x[:, 2] - _LOG_R_CEIL)
        x[:, 0] = np.minimum(x[:, 0], b_cap if rows is None else b_cap[rows])
        return x

    x0 = project(x0)

    def run(x_start, free, nf):
        def fun(x, rows):
            return _objective(x, P[rows], W[rows], C[rows], nf)

        x, f, conv = _newton(x_start, fun, free, project=project, **tol)
        if ncs == 1 or nf:  # the noise-free law has one optimum per c
            return x, f, conv
        # The objective is flat across c and can have two optima per c (a noisy law, and a near-noise-free
        # one with b far out). Where a neighbour's optimum scores better at this c than this c's own, this c
        # stopped in the worse one: restart it from there.
        for shift in (1, -1):
            nb = np.clip(np.arange(ncs) - shift, 0, ncs - 1)
            x_nb = x.reshape(R, ncs, 3)[:, nb].reshape(R * ncs, 3)
            f_nb = fun(x_nb, np.arange(R * ncs))[0]
            redo = np.flatnonzero(f_nb < f - 1e-6)
            if redo.size == 0:
                continue
            x2, f2, conv2 = _newton(
                x_nb[redo],
                lambda xx, rows, redo=redo: fun(xx, redo[rows]),
                free[redo],
                project=lambda xx, rows, redo=redo: project(xx, redo[rows]),
                **tol,
            )
            better = f2 < f[redo]
            take = redo[better]
            x[take], f[take], conv[take] = x2[better], f2[better], conv2[better]
        return x, f, conv

    # The noise-free law (o = 0, closed form, cheap) is the boundary of the noisy family, which the noisy
    # search only approaches as log o -> -inf: fit both and keep the better per c.
    free0 = np.ones((R * ncs, 3))
    free0[:, 2] = 0.0
    x, f, conv = run(x0.copy(), free0, True)
    noisy = np.zeros(R * ncs, dtype=bool)
    if not noise_free:
        x1, f1, conv1 = run(x0, np.ones((R * ncs, 3)), False)
        noisy = f1 < f - 1e-9
        x[noisy], f[noisy], conv[noisy] = x1[noisy], f1[noisy], conv1[noisy]
    log_r = x[:, 2] - x[:, 1]
    # On the family's boundary: no noise (the noise-free law won, or the noisy one sits at the floor), or so
    # much that the law is normal (the ceiling).
    floor = ~noisy | (log_r <= _LOG_R_FLOOR + 1e-3)
    on_bound = floor | (noisy & (log_r >= _LOG_R_CEIL - 1e-3)) | (x[:, 0] >= b_cap - 1e-9)
    by_c = (-f).reshape(R, ncs)
    best = np.argmax(np.where(np.isfinite(by_c), by_c, -np.inf), axis=1)
    xs = x.reshape(R, ncs, 3)
    xb = xs[np.arange(R), best]
    pick = np.arange(R) * ncs + best
    b = loc + scale * xb[:, 0]
    a = b - scale * np.exp(xb[:, 1])
    o = np.where(floor[pick], 0.0, scale * np.exp(xb[:, 2]))
    xs_units = xs.copy()  # (b, log(b - a), log o) in score units, for warm starts
    xs_units[..., 0] = loc[:, None] + scale[:, None] * xs[..., 0]
    xs_units[..., 1:] += np.log(scale)[:, None, None]
    return dict(
        a=a,
        b=b,
        o=o,
        c=np.asarray(cs)[best],
        objective=by_c[np.arange(R), best],
        by_c=by_c,
        converged=conv[pick],
        hit_bound=(not noise_free) & on_bound[pick],
        x=xs_units,
    )


def _ys_iv(ys) -> np.ndarray:
    ys = np.asarray(ys, dtype=np.float64)
    if ys.ndim != 1:
        raise InvalidParameter("ys", "must be a one-dimensional sequence of scores", ys.shape)
    if not np.all(np.isfinite(ys)):
        raise InvalidParameter("ys", "must all be finite", ys[~np.isfinite(ys)][0])
    return ys


def fit_one(
    ys,
    limits: tuple[float, float] | None = None,
    constraints: Mapping[str, Any] | None = None,
    threshold: Threshold | None = None,
) -> dict[str, Any]:
    """The fit of :func:`simstudy.distributions.fitting.fit` as plain values (the law's parameters ``a, b, c, o,
    convex`` in score units, then the fields of its ``FitResult``); the same arguments, checks and errors."""
    ys = _ys_iv(ys)
    cs, convex, noise_free, b_max = _constraints_iv(constraints)
    if limits is not None and threshold is not None:
        raise InvalidParameter("limits", "and threshold cannot both be given", limits)
    if limits is not None:
        lo, hi = (float(v) for v in limits)
        if convex:
            if not (np.isinf(lo) and lo < 0):
                raise InvalidParameter("limits", "for a convex fit must be (-inf, threshold)", limits)
            t = -hi
        else:
            if not (np.isinf(hi) and hi > 0):
                raise InvalidParameter("limits", "must be (threshold, inf) (censoring from below)", limits)
            t = lo
    work = -ys if convex else ys
    work = np.sort(work)[None, :]
    if limits is None:
        rule = threshold or Threshold(quantile=0.5)
        t = float(rule.of(work)[0]) if rule.score is None else (-rule.score if convex else rule.score)
    else:
        rule = Threshold(quantile=None, score=-t if convex else t)
    n_tail = int((work > t).sum())
    if n_tail < MIN_TAIL:
        raise InvalidParameter(
            "threshold",
            f"leaves {n_tail} of {ys.size} scores above it; a fit needs at least {MIN_TAIL} (lower the threshold)",
            # rounded: the threshold is computed, and its last digits differ between numpy builds
            round(-t if convex else t, 6),
        )
    if n_tail > MAX_TAIL:
        raise InvalidParameter(
            "threshold",
            f"leaves {n_tail:,} of {ys.size:,} scores above it; a fit takes at most "
            f"{MAX_TAIL:,} (about {MAX_TAIL * len(cs) * _BYTES_PER_POINT / 2**30:.1f} GB at its "
            f"peak): raise the threshold to fit only the top of the tail",
            -t if convex else t,
        )
    out = fit_batch(work, np.array([t]), cs=cs, noise_free=noise_free, precise=True, b_max=b_max)
    a, b = float(out["a"][0]), float(out["b"][0])
    if convex:
        a, b = -b, -a
    return {
        "a": a,
        "b": b,
        "c": int(out["c"][0]),
        "o": float(out["o"][0]),
        "convex": convex,
        "objective": float(out["objective"][0]),
        "by_c": dict(zip(cs, out["by_c"][0].tolist())),
        "threshold": -t if convex else t,
        "n": ys.size,
        "n_tail": n_tail,
        "hit_bound": bool(out["hit_bound"][0]),
        "converged": bool(out["converged"][0]),
        "rule": rule,
        "cs": cs,
        "start": out["x"][0],
        "b_max": b_max,
    }


# -- the parametric bootstrap --------------------------------------------------------------------------
def bootstrap_chunk(
    law: Any,
    n: int,
    rule: Threshold,
    cs: tuple,
    start: np.ndarray | None,
    ks: np.ndarray,
    reps: int,
    seed: np.random.SeedSequence,
    mean: bool = True,
    b_max: float = np.inf,
) -> dict:
    """``reps`` bootstrap replicates: n scores from ``law``, the threshold rule, the whole fit, the curves.

    A pure function of its arguments: :func:`~simstudy.distributions.fitting.parametric_bootstrap` and ``simstudy extrapolate`` (through the
    runner) call it per chunk, seeded by chunk, so the result does not depend on how chunks are spread
    over workers.

    Parameters
    ----------
    law : NoisyQuadratic
        The fitted law the replicates' scores are drawn from (duck-typed: ``sample(size, rng=rng)`` and the
        attribute ``convex``, as :class:`simstudy.distributions.parametric.NoisyQuadratic` has).
    n : int
        Scores per replicate (the original sample's size).
    rule : Threshold
        The threshold rule, re-applied to each replicate (:attr:`simstudy.distributions.fitting.FitResult.rule`).
    cs : tuple of int
        The c values searched in each refit.
    start : ndarray of float, shape (len(cs), 3), or None
        Warm starts per c (:attr:`simstudy.distributions.fitting.FitResult.start`), or None.
    ks : ndarray of float, shape (K,)
        Budgets (numbers of runs, > 0) of the tuning curves.
    reps : int
        Number of replicates.
    seed : numpy.random.SeedSequence or int
        Seeds the chunk's generator (``numpy.random.default_rng(seed)``).
    mean : bool, optional
        Also the mean tuning curves (the slow part); default True.
    b_max : float, optional
        Bounds the best score as the original fit's constraint did (score units, concave direction: minus
        a's bound for a convex law); default ``inf``.

    Returns
    -------
    dict of str to ndarray
        ``a, b, c, o`` (reps,) float, the refitted parameters (score units); ``ok`` (reps,) bool; ``median``
        and ``mean`` (reps, K), the refitted laws' tuning curves in score units (``mean`` all NaN when not
        asked). Failed fits (too few scores above a fixed threshold) are NaN with ``ok`` False.

    Examples
    --------
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> law = NoisyQuadratic(0.7, 0.9, 3, 0.01)
    >>> rep = bootstrap_chunk(law, 48, Threshold(), (3,), None, np.array([10.0, 100.0]), 3, 0, mean=False)
    >>> sorted(rep), rep["ok"].tolist(), rep["median"].shape
    (['a', 'b', 'c', 'mean', 'median', 'o', 'ok'], [True, True, True], (3, 2))
    >>> rep["b"].round(4).tolist()
    [0.9113, 0.884, 0.8961]
    """
    rng = np.random.default_rng(seed)
    x = np.sort(law.sample((reps, n), rng=rng), axis=1)
    work = np.sort(-x, axis=1) if law.convex else x
    if rule.score is not None:
        t = np.full(reps, -rule.score if law.convex else rule.score)
    else:
        t = rule.of(work)
    ok = (work > t[:, None]).sum(axis=1) >= MIN_TAIL
    K = ks.size
    res = {k: np.full(reps, np.nan) for k in ("a", "b", "c", "o")}
    res["median"] = np.full((reps, K), np.nan)
    res["mean"] = np.full((reps, K), np.nan)
    res["ok"] = ok
    if ok.any():
        st = None if start is None else np.broadcast_to(start, (int(ok.sum()), *start.shape)).copy()
        out = fit_batch(work[ok], t[ok], cs=cs, start=st, b_max=b_max)
        a, b = out["a"], out["b"]
        if law.convex:
            a, b = -b, -a
        for key, val in (("a", a), ("b", b), ("c", out["c"]), ("o", out["o"])):
            res[key][ok] = val
        med, avg = curves(a, b, out["c"], out["o"], law.convex, ks, mean=mean)
        res["median"][ok] = med
        if mean:
            res["mean"][ok] = avg
    return res
