"""Intervals for the uniform order statistics: U_(i) of n uniforms is Beta(i, n + 1 - i).

The LD confidence bands for a CDF (Learned-Miller & DeStefano 2008; Lourie et al. §3.3, App. C) put a
pointwise interval of coverage ``c`` around each ``F(Y_(i)) ~ Beta(i, n + 1 - i)``. This module gives those
intervals and their inverse, the coverage ``B_i(p)`` of the smallest interval containing a point p, for
two families:

- equal-tailed: ``[G^-1((1 - c)/2), G^-1((1 + c)/2)]``, ``B_i(p) = |1 - 2 G(p)|``;
- highest-density: the shortest interval, whose ends have equal density. Its lower end solves
  ``log g(l) = log g(G^-1(G(l) + c))``, and ``B_i(p)`` needs the point across the mode with the density of p;
  both are found for every i (and p) at once by a safeguarded Newton iteration (a bracketing step whenever
  Newton would leave the bracket), which converges in a handful of steps where plain bisection takes fifty.

Here G, g and G^-1 are the Beta(i, n + 1 - i) CDF, density and quantile function (``scipy.special``).
All functions broadcast over i (and p) and return arrays.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from simstudy.stats._roots import safeguarded_newton

__all__ = ["equal_tailed", "highest_density", "coverage_equal_tailed", "coverage_highest_density"]

_NEWTON_STEPS = 100
# Stop when every step is this small relative to x, or every residual (a log-density gap) this small: the
# quantile function's own rounding (~1e-14) makes tighter targets wander without improving anything.
_XTOL = 1e-13
_FTOL = 5e-11


def _shape_iv(i, n):
    i = np.asarray(i, dtype=np.float64)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if np.any((i < 1) | (i > n) | (i != np.round(i))):
        raise ValueError(f"i must hold integers in 1..n={n}")
    return i, float(n + 1) - i


def _coverage_iv(c):
    c = np.asarray(c, dtype=np.float64)
    if np.any(~((c > 0) & (c < 1))):
        raise ValueError(f"coverage must be strictly between 0 and 1, got {c}")
    return c


def _log_density(x, a, b):
    """log of the Beta(a, b) density; a or b equal to 1 contribute no log term (0 * log 0 = 0 at the ends)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (
            np.where(a == 1, 0.0, (a - 1) * np.log(x))
            + np.where(b == 1, 0.0, (b - 1) * np.log1p(-x))
            - special.betaln(a, b)
        )


def _dlog_density(x, a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a == 1, 0.0, (a - 1) / x) - np.where(b == 1, 0.0, (b - 1) / (1 - x))


def _safeguarded_newton(f, lo, hi, x0):
    return safeguarded_newton(f, lo, hi, x0, xtol=_XTOL, ftol=_FTOL, max_steps=_NEWTON_STEPS)


def equal_tailed(i, n: int, coverage) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed intervals of Beta(i, n + 1 - i) with the given coverage; arrays broadcast over i.

    ``[G^-1((1 - c)/2), G^-1((1 + c)/2)]`` with ``G`` the Beta(i, n + 1 - i) CDF: probability ``(1 - c)/2``
    on either side. ``U_(i)``, the i-th smallest of n uniforms, lies inside with probability ``c``.

    Parameters
    ----------
    i : array_like of int
        Order-statistic ranks in 1..n (float values must be whole numbers); any shape, broadcast with the
        other arguments.
    n : int
        Sample size (number of uniforms), >= 1.
    coverage : float or array_like of float
        Probability inside each interval, in (0, 1); broadcast with `i`.

    Returns
    -------
    low, high : ndarray of float64, shape of ``broadcast(i, coverage)``
        Interval ends, probabilities in [0, 1].

    Raises
    ------
    ValueError
        If `n` is not an integer >= 1 or a rank is not a whole number in 1..n, or a coverage is not strictly between 0 and 1.

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024 (§3.3, App. C).

    Examples
    --------
    With one uniform (Beta(1, 1)) the 90% interval is [0.05, 0.95]:

    >>> [round(float(v), 4) for v in equal_tailed(1, 1, 0.9)]
    [0.05, 0.95]
    >>> low, high = equal_tailed([1, 2, 3], 3, 0.9)
    >>> np.round(low, 4).tolist(), np.round(high, 4).tolist()
    ([0.017, 0.1354, 0.3684], [0.6316, 0.8646, 0.983])
    >>> equal_tailed(4, 3, 0.9)
    Traceback (most recent call last):
        ...
    ValueError: i must hold integers in 1..n=3
    """
    a, b = _shape_iv(i, n)
    c = _coverage_iv(coverage)
    return special.betaincinv(a, b, (1 - c) / 2), special.betaincinv(a, b, (1 + c) / 2)


def highest_density(i, n: int, coverage, *, start=None) -> tuple[np.ndarray, np.ndarray]:
    """Highest-density (shortest) intervals of Beta(i, n + 1 - i) with the given coverage.

    Parameters
    ----------
    i : array_like of int
        Order-statistic ranks in 1..n (float values must be whole numbers); any shape, broadcast with the
        other arguments.
    n : int
        Sample size (number of uniforms), >= 1.
    coverage : float or array_like of float
        Probability inside each interval, in (0, 1); broadcast with `i`.
    start : array_like of float, keyword-only, optional
        Initial guesses for the lower ends, broadcast with `i` (e.g. the solution at a nearby coverage);
        a speed-up only. Default: the equal-tailed split.

    Returns
    -------
    low, high : ndarray of float64, shape of ``broadcast(i, coverage)``
        Interval ends; ``G(high) - G(low) = coverage`` and ``g(low) = g(high)`` (to ~1e-12 relative), except
        at i = 1 (mode 0: ``[0, G^-1(c)]``) and i = n (mode 1: ``[G^-1(1 - c), 1]``). For n = 1 (a flat
        density) the equal-tailed interval.

    Raises
    ------
    ValueError
        If `n` is not an integer >= 1 or a rank is not a whole number in 1..n, or a coverage is not strictly between 0 and 1.

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024 (§3.3, App. C).

    Examples
    --------
    For i = 1 of n = 3 the density ``3 (1 - x)^2`` falls, so the interval is ``[0, 1 - 0.1 ** (1/3)]``; the
    middle one, Beta(2, 2), is symmetric and so equal-tailed:

    >>> low, high = highest_density([1, 2, 3], 3, 0.9)
    >>> np.round(low, 4).tolist(), np.round(high, 4).tolist()
    ([0.0, 0.1354, 0.4642], [0.5358, 0.8646, 1.0])
    >>> round(1 - 0.1 ** (1 / 3), 4)
    0.5358
    """
    a, b = _shape_iv(i, n)
    c = _coverage_iv(coverage)
    a, b, c = np.broadcast_arrays(a, b, c)
    low, high = np.zeros(a.shape), np.ones(a.shape)
    left, right = a == 1, b == 1  # densities monotone: the interval sits against 0 or 1
    if n == 1:
        # Beta(1, 1) is flat: every interval of length c is "highest density"; take the equal-tailed one.
        return equal_tailed(i, n, coverage)
    high = np.where(left, special.betaincinv(a, b, c), high)
    low = np.where(right, special.betaincinv(a, b, 1 - c), low)
    inner = ~(left | right)
    if np.any(inner):
        ai, bi, ci = a[inner], b[inner], c[inner]
        mode = (ai - 1) / (ai + bi - 2)
        G_mode = special.betainc(ai, bi, mode)
        # Unknown: s = G(low), the probability below the interval; then high = G^-1(s + c). In s the
        # equal-density equation is nearly linear, so Newton converges in a few steps.
        lo, hi = np.maximum(G_mode - ci, 0.0), np.minimum(G_mode, 1.0 - ci)

        def mismatch(s, sel):  # log g(l) - log g(u), increasing in s, and its derivative in s
            a_, b_ = ai[sel], bi[sel]
            x = special.betaincinv(a_, b_, s)
            u = special.betaincinv(a_, b_, np.minimum(s + ci[sel], 1.0))
            gx, gu = _log_density(x, a_, b_), _log_density(u, a_, b_)
            return gx - gu, _dlog_density(x, a_, b_) * np.exp(-gx) - _dlog_density(u, a_, b_) * np.exp(-gu)

        s0 = (1 - ci) / 2 if start is None else special.betainc(ai, bi, np.broadcast_to(start, a.shape)[inner])
        s_low = _safeguarded_newton(mismatch, lo, hi, s0)
        low[inner] = special.betaincinv(ai, bi, s_low)
        high[inner] = special.betaincinv(ai, bi, np.minimum(s_low + ci, 1.0))
    return low, high


def coverage_equal_tailed(i, n: int, p) -> np.ndarray:
    """``B_i(p)``: coverage of the smallest equal-tailed interval of Beta(i, n + 1 - i) containing p.

    ``|1 - 2 G(p)|``, the inverse of :func:`equal_tailed` in the coverage: p is an end of the interval of
    that coverage. ``max_i B_i(F(Y_(i)))`` is the LD test statistic.

    Parameters
    ----------
    i : array_like of int
        Order-statistic ranks in 1..n (float values must be whole numbers); any shape, broadcast with the
        other arguments.
    n : int
        Sample size (number of uniforms), >= 1.
    p : float or array_like of float
        Points (probabilities in [0, 1]); broadcast with `i`.

    Returns
    -------
    ndarray of float64, shape of ``broadcast(i, p)``
        Coverages in [0, 1] (0 at the median).

    Raises
    ------
    ValueError
        If `n` is not an integer >= 1 or a rank is not a whole number in 1..n.

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024 (§3.3, App. C).

    Examples
    --------
    >>> np.round(coverage_equal_tailed([1, 2, 3], 3, [0.05, 0.5, 0.9]), 4).tolist()
    [0.7148, 0.0, 0.458]
    >>> low, high = equal_tailed(2, 3, 0.9)
    >>> round(float(coverage_equal_tailed(2, 3, high)), 6)  # the inverse of equal_tailed
    0.9
    """
    a, b = _shape_iv(i, n)
    return np.abs(1.0 - 2.0 * special.betainc(a, b, np.asarray(p, dtype=np.float64)))


def coverage_highest_density(i, n: int, p) -> np.ndarray:
    """``B_i(p)``: coverage of the smallest highest-density interval of Beta(i, n + 1 - i) containing p.

    p is one end of that interval; the other end is the point across the mode with the same density (at
    i = 1 and i = n, where the density is monotone, the interval reaches 0 or 1). The inverse of
    :func:`highest_density` in the coverage; ``max_i B_i(F(Y_(i)))`` is the LD test statistic.

    Parameters
    ----------
    i : array_like of int
        Order-statistic ranks in 1..n (float values must be whole numbers); any shape, broadcast with the
        other arguments.
    n : int
        Sample size (number of uniforms), >= 1.
    p : float or array_like of float
        Points (probabilities in [0, 1]); broadcast with `i`.

    Returns
    -------
    ndarray of float64, shape of ``broadcast(i, p)``
        Coverages in [0, 1] (0 at the mode).

    Raises
    ------
    ValueError
        If `n` is not an integer >= 1 or a rank is not a whole number in 1..n.

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024 (§3.3, App. C).

    Examples
    --------
    At i = 1 of n = 3 the interval is ``[0, p]``, of coverage ``G(p) = 1 - (1 - p) ** 3``:

    >>> np.round(coverage_highest_density([1, 2, 3], 3, [0.05, 0.5, 0.9]), 4).tolist()
    [0.1426, 0.0, 0.271]
    >>> low, high = highest_density(2, 3, 0.9)
    >>> round(float(coverage_highest_density(2, 3, low)), 6)  # the inverse of highest_density
    0.9
    """
    a, b = _shape_iv(i, n)
    p = np.asarray(p, dtype=np.float64)
    a, b, p = np.broadcast_arrays(a, b, p)
    G = special.betainc(a, b, p)
    if n == 1:
        return np.abs(1.0 - 2.0 * G)
    out = np.where(a == 1, G, np.where(b == 1, 1.0 - G, np.nan))  # monotone densities
    inner = (a > 1) & (b > 1)
    if np.any(inner):
        ai, bi, pi, Gi = a[inner], b[inner], p[inner], G[inner]
        mode = (ai - 1) / (ai + bi - 2)
        target = _log_density(pi, ai, bi)
        below = pi <= mode
        # p below the mode: the other end is in [mode, 1], where the density falls; above: in [0, mode].
        lo = np.where(below, mode, 0.0)
        hi = np.where(below, 1.0, mode)
        sign = np.where(below, -1.0, 1.0)  # make the equation increasing on its bracket

        def mismatch(x, sel):
            a_, b_ = ai[sel], bi[sel]
            return sign[sel] * (_log_density(x, a_, b_) - target[sel]), sign[sel] * _dlog_density(x, a_, b_)

        other = _safeguarded_newton(mismatch, lo, hi, np.where(below, 1 - pi * 0.5, pi * 0.5))
        Go = special.betainc(ai, bi, other)
        out[inner] = np.clip(np.where(below, Go - Gi, Gi - Go), 0.0, 1.0)
    return out
