"""Exact truths: what the simulations estimate, computed without simulating.

- :func:`expected_max` -- ``theta_n = E[max of n draws]``: an exact finite sum for a :class:`~simstudy.
  distributions.Bag`, ``sum_v v * (F(v)^n - F(v-)^n)``, and adaptive quadrature for a continuous distribution,
  ``low + int_low^high (1 - F(x)^n) dx``, split at the atoms of a continuous distribution with atoms
  (:class:`~simstudy.distributions.KDEWithAtoms`), where F jumps.
- :func:`order_statistic_means` -- ``E[X_(i)]``, i = 1..B, for a sample of B draws: exact for a bag (from the
  binomial law of the number of draws at or below each atom), quadrature otherwise.
- :func:`estimator_mean` -- the exact expectation of a closed-form estimator, ``W @ E[X_(.)]``, since every
  estimator is linear in the order statistics. The bootstrap's expectation equals V's (each resample is a
  draw from the empirical distribution), so its exact bias is V's too.
- :func:`quantile_tuning_curve`, :func:`mean_tuning_curve` -- the q-quantile and the mean of the best of k draws
  (the max, or the min with ``minimize=True``), for real k; a distribution's own closed forms where it has them
  (:class:`~simstudy.distributions.parametric.NoisyQuadratic`), else from its quantile function, exact sums or quadrature.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from simstudy.stats import estimators

__all__ = ["expected_max", "order_statistic_means", "estimator_mean", "quantile_tuning_curve", "mean_tuning_curve"]


class ScoreDistribution(Protocol):
    """What these truths call on a distribution (duck-typed; :class:`simstudy.distributions.ScoreDistribution`).

    ``support`` (``(low, high)``), ``cdf(x)`` and ``ppf(q)``; optionally ``has_atoms`` and ``atoms`` (where the
    CDF jumps: quadrature splits there) and its own ``mean_tuning_curve`` / ``quantile_tuning_curve`` (closed
    forms, used instead). A finite population whose class sets ``exact_atoms = True`` (a
    :class:`~simstudy.distributions.Bag`) also gives ``atoms`` (ascending) and ``cum_prob``
    (``P(X <= atoms[j])``, the last exactly 1): its truths are exact sums.
    """

    @property
    def support(self) -> tuple[float, float]: ...

    def cdf(self, x: Any) -> np.ndarray: ...

    def ppf(self, q: Any) -> np.ndarray: ...


def _finite_atoms(dist: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(atoms, cum_prob)`` of a finite population (exact sums), else None. Asked of the class, so that a
    wrapper forwarding attributes (a plug-in's) is not taken for one."""
    if getattr(type(dist), "exact_atoms", False):
        return dist.atoms, dist.cum_prob
    return None


_QUAD = dict(epsabs=1e-13, epsrel=1e-11, limit=400)
# Tail probability left out of the order statistics' quadrature window on an unbounded support.
_TAIL = 2.0**-52  # 1 - _TAIL is exact in floating point
# Bound on the (B x atoms) matrices built for a bag's order statistics, in elements.
_BLOCK = 65_536  # elements: 512 KiB matrices stay in cache and out of mmap'd (page-faulting) memory


#: A distribution whose mass (between its 2**-52 and 1 - 2**-52 quantiles) spans less than this share of its
#: support is integrated over that window only (:func:`_window`): a first Gauss-Kronrod rule over the whole
#: support can miss a narrow mass entirely and report 0 with an error estimate of 0 (scores within 1e-4 of 0.5 on
#: [0, 1], or accuracies under an audit's high=1e4, gave a truth of 0.5 or 0, silently), and a far bound
#: (high=1e301) cancels every digit of ``high - integral``.
_NARROW = 1.0 / 64


def _window(dist: ScoreDistribution, low: float, high: float) -> tuple[float, float]:
    """Where to integrate on the finite support [low, high]: [low, high] itself, or for a mass narrow within it
    (:data:`_NARROW`) the window between its ``2**-52`` and ``1 - 2**-52`` quantiles. Outside that window the
    integrands of this module are their limits to rounding (F^n, (1 - F)^n and the regularized beta function
    of F are 0 or 1 there), so each integral is the window's plus the exact length of the rest, as on an
    unbounded support."""
    lo, hi = (float(w) for w in np.asarray(dist.ppf(np.array([_TAIL, 1.0 - _TAIL])), dtype=np.float64))
    if np.isfinite(lo) and np.isfinite(hi) and low <= lo < hi <= high and hi - lo < _NARROW * (high - low):
        return lo, hi
    return low, high


def _quad(fn, dist: ScoreDistribution, low: float, high: float):
    """``int_low^high fn(x) dx`` by adaptive quadrature, split at the distribution's atoms (where F jumps)."""
    from scipy import integrate  # imported on use: 0.2 s at a study's start, and bags need no quadrature

    breaks = None
    if getattr(dist, "has_atoms", False):
        inside = dist.atoms[(dist.atoms > low) & (dist.atoms < high)]  # type: ignore[attr-defined]  # has_atoms: has atoms
        breaks = inside.tolist() or None
    return integrate.quad_vec(fn, low, high, points=breaks, **_QUAD)


def _n_iv(n) -> np.ndarray:
    n_arr = np.atleast_1d(np.asarray(n))
    if n_arr.ndim != 1 or not np.issubdtype(n_arr.dtype, np.integer) or n_arr.size == 0 or n_arr.min() < 1:
        raise ValueError(f"n must be a positive integer or a 1-d sequence of them, got {n!r}")
    return n_arr.astype(np.int64)


def _tail_sums(p: np.ndarray, n: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``sum_j gaps_j p_j^n`` for each n; shape (len(n),).

    For n = 1, 2, ..., N (the usual case) by running products, one cache-sized row at a time.
    """
    if not np.array_equal(n, np.arange(1, n.size + 1)):
        return (p[None, :] ** n[:, None]) @ gaps
    if p.size * n.size > _WINDOW_FROM:
        return _windowed_tail_sums(p, n.size, gaps)
    out = np.empty(n.size)
    power = np.ones_like(p)
    for k in range(n.size):
        power *= p
        out[k] = power @ gaps
    return out


#: Above this many (atoms x budgets) products, :func:`_tail_sums` leaves out the atoms whose p^n is below 2^-60
#: (a population of 2e5 distinct scores for n up to 1,000: 6x faster). Below it (every preset's bag), the full
#: sums, as they always were.
_WINDOW_FROM = 2**24


def _windowed_tail_sums(p: np.ndarray, N: int, gaps: np.ndarray) -> np.ndarray:
    """``sum_j gaps_j p_j^n`` for n = 1..N, without the atoms where ``p_j^n < 2^-60``.

    p is ascending (a CDF at the atoms), so those atoms are a prefix that grows with n: ``p_j < 2^(-60/n)``.
    What is left out is below ``2^-60 * sum(gaps)`` (the scores' range): under the rounding of the result,
    which is at most the range. Work per n is the atoms above the cut, about ``42 / n`` of them for n > 42.
    """
    out = np.empty(N)
    power, g, start = np.ones_like(p), gaps, 0
    for k in range(N):
        cut = int(np.searchsorted(p, 2.0 ** (-60.0 / (k + 1)), side="left"))
        if cut > start:  # drop the prefix that fell below the cut (p ascending: it only grows)
            power, g, start = power[cut - start :], g[cut - start :], cut
        power *= p[start:]
        out[k] = power @ g
    return out


def _bag_order_statistic_means(v: np.ndarray, F: np.ndarray, B: int) -> np.ndarray:
    """``E[X_(i)] = v_1 + sum_j (v_{j+1} - v_j) P(Bin(B, F_j) < i)`` for i = 1..B.

    Accumulated over i with the binomial pmf's recurrence pmf(r) = pmf(r-1) (B-r+1)/r p/(1-p), one row of
    atoms at a time, when pmf(0) = (1-p)^B cannot underflow; otherwise from logarithms, in blocks of atoms.
    """
    gaps, p = np.diff(v), F[:-1]  # the last atom has F = 1: no gap above it
    out = np.empty(B)
    if B * -np.log1p(-p.max(initial=0.0)) < 600:
        odds = p / (1.0 - p)
        pmf = (1.0 - p) ** B  # r = 0
        below = pmf @ gaps  # sum_j gaps_j P(Bin(B, p_j) < 1)
        out[0] = below
        for r in range(1, B):
            pmf *= odds
            pmf *= (B - r + 1) / r
            below += pmf @ gaps
            out[r] = below
        return v[0] + out
    from scipy import special  # on use: most bags take the recurrence above, and scipy.special costs 0.2-0.3 s

    r_col = np.arange(B, dtype=np.float64)[:, None]
    log_choose = special.gammaln(B + 1) - special.gammaln(r_col + 1) - special.gammaln(B - r_col + 1)
    out[:] = v[0]
    step = max(1, _BLOCK // B)  # bounds the (B x atoms) matrices
    for s in range(0, p.size, step):
        pj = p[s : s + step]
        pmf = np.exp(log_choose + r_col * np.log(pj)[None, :] + (B - r_col) * np.log1p(-pj)[None, :])
        out += np.cumsum(pmf, axis=0) @ gaps[s : s + step]
    return out


def expected_max(dist: ScoreDistribution, n) -> np.ndarray:
    """The expected maximum of ``n`` i.i.d. draws from ``dist``.

    Parameters
    ----------
    dist : ScoreDistribution
        A :class:`Bag` (exact sum), a distribution with its own ``mean_tuning_curve`` (closed forms, e.g.
        :class:`~simstudy.distributions.parametric.NoisyQuadratic`) or a continuous distribution (quadrature, absolute error
        ~1e-12).
    n : int or sequence of int
        Budgets (trials; any positive integers; no sample size limits them).

    Returns
    -------
    ndarray of float64, shape (len(n),)
        ``E[max(X_1..X_n)]`` in score units (a scalar `n` gives shape (1,)).

    Raises
    ------
    ValueError
        If `n` is not a positive integer or a non-empty 1-d sequence of them.

    See Also
    --------
    simstudy.stats.estimators.expected_max : Its estimators from a sample.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Examples
    --------
    The maximum of n uniforms has mean ``n / (n + 1)``; of two fair coin flips, 3/4:

    >>> from simstudy.distributions import Bag, ScipyDistribution
    >>> np.round(expected_max(ScipyDistribution("uniform", {}), [1, 2, 4]), 6).tolist()
    [0.5, 0.666667, 0.8]
    >>> expected_max(Bag([0.0, 1.0]), [1, 2, 3]).tolist()
    [0.5, 0.75, 0.875]
    """
    n_arr = _n_iv(n)
    finite = _finite_atoms(dist)
    if finite is not None:
        # Summation by parts: sum_j v_j (F_j^n - F_{j-1}^n) = v_k - sum_{j<k} (v_{j+1} - v_j) F_j^n.
        v, F = finite
        return v[-1] - _tail_sums(F[:-1], n_arr, np.diff(v))
    nn = n_arr.astype(np.float64)
    own = _own(dist, "mean_tuning_curve")
    if own is not None:  # a closed form (or the distribution's own quadrature): exact, and fast for any support
        return np.asarray(own(nn), dtype=np.float64).reshape(nn.shape)
    from scipy import integrate  # here: a bag (above) needs no quadrature, and it costs 0.2 s

    low, high = dist.support
    if np.isfinite(low) and np.isfinite(high):
        low, high = _window(dist, low, high)  # 1 - F^n is 1 below the window, 0 above
        val, _ = _quad(lambda x: 1.0 - dist.cdf(x) ** nn, dist, low, high)
        return low + val
    # Unbounded support: E[max] = int_0^1 F^{-1}(t) n t^(n-1) dt.
    val, _ = integrate.quad_vec(lambda t: dist.ppf(t) * nn * t ** (nn - 1), 0.0, 1.0, **_QUAD)
    return val


def order_statistic_means(dist: ScoreDistribution, B: int) -> np.ndarray:
    """Expected order statistics ``E[X_(i)]``, i = 1..B (ascending), of B i.i.d. draws from ``dist``.

    For a bag with atoms ``v_1 < ... < v_k``: ``E[X_(i)] = v_1 + sum_j (v_{j+1} - v_j) P(Bin(B, F(v_j)) < i)``,
    exact up to rounding. For a continuous distribution on [low, high]:
    ``low + int (1 - I_{F(x)}(i, B - i + 1)) dx`` by adaptive quadrature.

    Parameters
    ----------
    dist : ScoreDistribution
        A :class:`~simstudy.distributions.Bag` (exact) or a continuous distribution (quadrature; on an
        unbounded support over the window between its ``2**-52`` and ``1 - 2**-52`` quantiles).
    B : int
        Sample size (number of draws), >= 1.

    Returns
    -------
    ndarray of float64, shape (B,)
        ``E[X_(1)] <= ... <= E[X_(B)]`` in score units.

    Raises
    ------
    ValueError
        If `B` is not an integer >= 1.

    Examples
    --------
    For uniforms ``E[X_(i)] = i / (B + 1)``; for two standard normals ``E[X_(2)] = 1 / sqrt(pi)``:

    >>> from simstudy.distributions import ScipyDistribution
    >>> np.round(order_statistic_means(ScipyDistribution("uniform", {}), 4), 6).tolist()
    [0.2, 0.4, 0.6, 0.8]
    >>> np.round(order_statistic_means(ScipyDistribution("norm", {}), 2), 6).tolist()
    [-0.56419, 0.56419]
    >>> round(float(1 / np.sqrt(np.pi)), 6)
    0.56419
    """
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 1:
        raise ValueError(f"B must be an integer >= 1, got {B!r}")
    B = int(B)
    i = np.arange(1, B + 1, dtype=np.float64)
    finite = _finite_atoms(dist)
    if finite is not None:
        return _bag_order_statistic_means(*finite, B)
    from scipy import integrate, special  # here: a bag (above) needs neither, and they cost 0.2-0.5 s

    low, high = dist.support
    a, b = i, B - i + 1
    if np.isfinite(low) and np.isfinite(high):
        low, high = _window(dist, low, high)  # I is 0 below the window, 1 above
        val, _ = _quad(lambda x: special.betainc(a, b, dist.cdf(x)), dist, low, high)
        return high - val  # = low + int (1 - I) dx
    # Unbounded support: the same integral on the window [F^-1(eps), F^-1(1 - eps)] (two quantiles, then cheap
    # CDF evaluations: the quantile function inside the quadrature costs a root-finding per node). Outside it
    # I_F(i, B - i + 1) <= B F below and 1 - I <= B (1 - F) above, so a light tail adds at most about
    # B * eps * scale; where a quantile is not finite, the integral of the quantile function instead.
    lo_w, hi_w = (float(v) for v in dist.ppf(np.array([_TAIL, 1.0 - _TAIL])))
    if np.isfinite(lo_w) and np.isfinite(hi_w):
        val, _ = _quad(lambda x: special.betainc(a, b, dist.cdf(x)), dist, lo_w, hi_w)
        return hi_w - val
    val, _ = integrate.quad_vec(
        lambda t: dist.ppf(t) * np.exp((a - 1) * np.log(t) + (b - 1) * np.log1p(-t) - special.betaln(a, b)),
        0.0,
        1.0,
        **_QUAD,
    )
    return val


def estimator_mean(dist: ScoreDistribution, B: int, method: str, n=None) -> np.ndarray:
    """Exact expectation of an expected-maximum estimator on samples of B draws from ``dist``.

    Every closed-form estimator is linear in the order statistics, so its mean is ``weights(B, method, n) @
    order_statistic_means(dist, B)`` (Dodge et al. 2021, §3).

    Parameters
    ----------
    dist : ScoreDistribution
        The score distribution the samples are drawn from (see :func:`order_statistic_means`).
    B : int
        Sample size (scores per sample), >= 1.
    method : {"u", "v", "w", "bootstrap"}
        The estimator; the bootstrap's expectation over samples and resamples is V's.
    n : int or sequence of int, optional
        Budgets in 1..B (default ``1..B``).

    Returns
    -------
    ndarray of float64, shape (len(n),)
        ``E[theta_hat_n]`` in score units; subtract :func:`expected_max` for the exact bias.

    Raises
    ------
    ValueError
        On an unknown `method`, `B` not an integer >= 1, or a budget outside 1..B (from
        :func:`simstudy.stats.estimators.weights`).

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Examples
    --------
    U is unbiased (its mean is the uniform's ``n / (n + 1)``); V is biased low:

    >>> from simstudy.distributions import ScipyDistribution
    >>> uniform = ScipyDistribution("uniform", {})
    >>> np.round(estimator_mean(uniform, 4, "u"), 6).tolist()
    [0.5, 0.666667, 0.75, 0.8]
    >>> np.round(estimator_mean(uniform, 4, "v"), 6).tolist()
    [0.5, 0.625, 0.6875, 0.723438]
    """
    closed = "v" if method == "bootstrap" else method
    return estimators.weights(B, closed, n) @ order_statistic_means(dist, B)


def _ks_iv(ks) -> np.ndarray:
    ks = np.asarray(ks, dtype=np.float64)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise ValueError("ks must be finite budgets > 0")
    return ks


def _own(dist: ScoreDistribution, method: str):
    """The distribution's own tuning-curve method (closed forms, e.g. :class:`~simstudy.distributions.parametric.NoisyQuadratic`),
    or None: then the generic code here computes it from the CDF or quantile function."""
    fn = getattr(dist, method, None)
    return fn if callable(fn) else None


def quantile_tuning_curve(dist: ScoreDistribution, ks, q: float = 0.5, *, minimize: bool = False) -> np.ndarray:
    """The true q-quantile tuning curve: the q-quantile of the best of k draws, for real k > 0 (median: 0.5).

    Maximizing, the best of k draws has CDF ``F^k`` (Lourie et al. Eq. 2), so its q-quantile is
    ``F^-1(q^(1/k))``. Minimizing, the best is the minimum, with CDF ``1 - (1 - F)^k``, and its q-quantile is
    ``F^-1(1 - (1 - q)^(1/k))``. ``F^-1`` is the left-continuous inverse, ``F^-1(p) = min{x : p <= F(x)}``,
    either way: the convention of opda's ``quantile_tuning_curve`` and of the bands
    (:func:`simstudy.stats.bands.tuning_curve_bands` with ``minimize=True``, ``simstudy bands
    minimize=true``). Where the probability falls on an atom, the quantile of the minimum is *not* minus the
    (1 - q)-quantile of the maximum of -X: for four equally likely scores 0.1, 0.2, 0.3, 0.4 the median of
    the minimum of one draw is 0.2, the mirror's 0.3. A distribution with its own ``quantile_tuning_curve``
    method (a closed form) is asked for it.

    Parameters
    ----------
    dist : ScoreDistribution
        The score distribution (its ``ppf`` is used, or its own ``quantile_tuning_curve``).
    ks : array_like of float
        Budgets (random-search iterations; real, finite, > 0); any shape.
    q : float, default 0.5
        The quantile of the best of k draws, in (0, 1).
    minimize : bool, keyword-only, default False
        Whether the best is the minimum (e.g. a loss) rather than the maximum.

    Returns
    -------
    ndarray of float64, shape of ``ks``
        The curve in score units.

    Raises
    ------
    ValueError
        If `q` is not strictly between 0 and 1, or `ks` is empty, non-finite or not > 0.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    For uniforms the median of the best of k is ``0.5 ** (1 / k)``:

    >>> from simstudy.distributions import ScipyDistribution
    >>> np.round(quantile_tuning_curve(ScipyDistribution("uniform", {}), [1, 2, 4]), 6).tolist()
    [0.5, 0.707107, 0.840896]
    >>> from simstudy.distributions import Bag
    >>> bag = Bag([1.0, 2.0, 3.0, 4.0])
    >>> quantile_tuning_curve(bag, [1, 2]), quantile_tuning_curve(bag, [1, 2], minimize=True)
    (array([2., 3.]), array([2., 2.]))
    >>> quantile_tuning_curve(bag, [1, 2], 0.25, minimize=True)  # P(X <= 1) = 0.25: the atom 1 at k = 1
    array([1., 1.])
    """
    if not 0 < q < 1:
        raise ValueError(f"q must be strictly between 0 and 1, got {q!r}")
    ks = _ks_iv(ks)
    own = _own(dist, "quantile_tuning_curve")
    if own is not None:
        return np.asarray(own(ks, q, minimize=minimize), dtype=np.float64).reshape(ks.shape)
    if minimize:
        # 1 - (1 - q)^(1/k) by expm1: for large k it is tiny, and 1 - (a number near 1) would lose its digits.
        # At k = 1 it is q itself, exactly (the logs would round it, and a q on an atom's edge, F(x) = q, would
        # then pass to the next atom: opda and the bands take the atom, and so does the maximum's q^(1/1)).
        return dist.ppf(np.where(ks == 1, q, -np.expm1(np.log1p(-q) / ks)))
    return dist.ppf(q ** (1.0 / ks))


def mean_tuning_curve(dist: ScoreDistribution, ks, *, minimize: bool = False) -> np.ndarray:
    """The true mean tuning curve: the expected best of k draws, for real k > 0.

    Maximizing, ``E[max] = low + int_low^high (1 - F(x)^k) dx``; minimizing, ``E[min] = low + int_low^high
    (1 - F(x))^k dx`` (``P(min > x) = (1 - F(x))^k``). Exact sums for a bag; the distribution's own
    ``mean_tuning_curve`` method where it has one (closed forms); otherwise adaptive quadrature (absolute error
    ~1e-12) over a bounded support, or of the quantile function, ``int_0^1 F^-1(t) k t^(k-1) dt`` (the min:
    ``k (1 - t)^(k-1)``), over an unbounded one.

    Parameters
    ----------
    dist : ScoreDistribution
        The score distribution (a :class:`~simstudy.distributions.Bag`, one with its own
        ``mean_tuning_curve``, or a continuous one).
    ks : array_like of float
        Budgets (random-search iterations; real, finite, > 0); any shape.
    minimize : bool, keyword-only, default False
        Whether the best is the minimum (e.g. a loss) rather than the maximum.

    Returns
    -------
    ndarray of float64, shape of ``ks``
        The expected best score in score units; at integer k, :func:`expected_max` when maximizing.

    Raises
    ------
    ValueError
        If `ks` is empty, non-finite or not > 0.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> bag = Bag([0.0, 1.0])
    >>> mean_tuning_curve(bag, [1, 2]), mean_tuning_curve(bag, [1, 2], minimize=True)
    (array([0.5 , 0.75]), array([0.5 , 0.25]))
    """
    ks = _ks_iv(ks)
    flat = ks.ravel()
    finite = _finite_atoms(dist)
    if finite is not None:
        v, F = finite
        # Summation by parts over the atoms: P(max <= v_j) = F_j^k, P(min > v_j) = (1 - F_j)^k.
        if minimize:
            out = v[0] + ((1.0 - F[None, :-1]) ** flat[:, None]) @ np.diff(v)
        else:
            out = v[-1] - (F[None, :-1] ** flat[:, None]) @ np.diff(v)
        return out.reshape(ks.shape)
    own = _own(dist, "mean_tuning_curve")
    if own is not None:
        return np.asarray(own(ks, minimize=minimize), dtype=np.float64).reshape(ks.shape)
    from scipy import integrate  # here: a bag (above) needs no quadrature, and it costs 0.2 s

    low, high = dist.support
    if np.isfinite(low) and np.isfinite(high):
        low, high = _window(dist, low, high)  # (1 - F)^k and 1 - F^k are 1 below the window, 0 above
        if minimize:
            val, _ = _quad(lambda x: (1.0 - dist.cdf(x)) ** flat, dist, low, high)
            return (low + val).reshape(ks.shape)
        val, _ = _quad(lambda x: 1.0 - dist.cdf(x) ** flat, dist, low, high)
        return (low + val).reshape(ks.shape)
    # Unbounded support: the density of F(best) on (0, 1) weights the quantile function (from logs: k may be large).
    if minimize:
        weight = lambda t: np.exp(np.log(flat) + (flat - 1) * np.log1p(-t))  # noqa: E731
    else:
        weight = lambda t: np.exp(np.log(flat) + (flat - 1) * np.log(t))  # noqa: E731
    val, _ = integrate.quad_vec(lambda t: dist.ppf(t) * weight(t), 0.0, 1.0, **_QUAD)
    return val.reshape(ks.shape)
