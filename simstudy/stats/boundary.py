"""Exact simultaneous coverage of bounds on uniform order statistics, and the LD critical levels.

:func:`simultaneous_coverage` computes ``P(l_i <= U_(i) <= u_i for every i)`` for the order statistics of n
independent Uniform(0, 1) draws, exactly (to rounding), by a boundary-crossing recursion in the spirit of
Noé (1972) and Moscovich & Nadler (2017): the n uniforms are the points of a Poisson process of rate n
conditioned on having n points in [0, 1], and the constraints are on its counting process N(t):
``U_(i) <= u_i`` iff ``N(u_i) >= i``, and ``U_(i) >= l_i`` iff ``N(l_i) <= i - 1``. Walking through the 2n
breakpoints in order, the distribution of N over the counts still allowed is propagated by convolving with
Poisson increments and cut at each constraint; at the end, ``P(N(1) = n, all constraints) / P(N(1) = n)``.
All terms are non-negative, so there is no cancellation; one evaluation costs O(n w) with w the width of the
allowed window (a few ms at n = 1,024).

:func:`ld_pointwise_level` inverts it: the pointwise coverage c whose equal-tailed or highest-density
intervals hold simultaneously with probability exactly 1 - alpha -- the critical value of Learned-Miller and
DeStefano's test statistic ``L_n = max_i B_i(F(Y_(i)))`` -- solved by Brent's method on log(1 - c). The
intervals depend only on (n, confidence, kind), so :func:`ld_intervals` caches them in memory and, when a
store is installed under ``"ld_intervals"`` (:mod:`simstudy.stats.stores`), there too: the engine installs the
disk cache of :mod:`simstudy.engine.ld_cache` (``$SIMSTUDY_CACHE_DIR``, default ``~/.cache/simstudy``). A
stored entry is used only if it is what a fresh solution would be (``checked``: finite, within [0, 1],
non-decreasing, low < high, those of its stored pointwise level, and of exact simultaneous coverage equal to
the confidence); the numbers are the same with or without a store, only the time differs.

The store is duck-typed: ``where()`` (a string naming its place, part of the in-memory key), ``has(n,
confidence, kind)`` (an entry exists: one coverage evaluation to check it, for the cost estimate),
``get(n, confidence, kind)`` (the checked :class:`LDIntervals`, or ``None``) and ``put(ld)`` (keep it; never
raises on a read-only place).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from simstudy.stats import beta_intervals, stores

__all__ = ["simultaneous_coverage", "LDIntervals", "ld_intervals", "ld_pointwise_level"]

KINDS = ("equal_tailed", "highest_density")


def _poisson_pmf(lam: float, size: int) -> np.ndarray:
    k = np.arange(size, dtype=np.float64)
    if lam == 0:
        return (k == 0).astype(np.float64)
    return np.exp(k * np.log(lam) - lam - special.gammaln(k + 1))


def simultaneous_coverage(low, high) -> float:
    """``P(low[i] <= U_(i) <= high[i] for all i)`` for the order statistics of ``len(low)`` uniforms.

    Bounds on uniform order statistics are bounds on ``F(Y_(i))`` for any continuous F, so this is the exact
    simultaneous coverage of a CDF band given by :func:`simstudy.stats.bands.pointwise_bounds`-style bounds.

    Parameters
    ----------
    low, high : array_like of float, shape (n,)
        Non-decreasing bounds (probabilities in [0, 1]) on the 1st, 2nd, ..., n-th smallest of n uniforms.

    Returns
    -------
    float
        The exact probability, in [0, 1] (to rounding, about 1e-13); 0 if some ``low[i] > high[i]``.

    Raises
    ------
    ValueError
        If `low` and `high` are empty or differ in length, or are not non-decreasing within [0, 1].

    References
    ----------
    Noé, M. (1972). The calculation of distributions of two-sided Kolmogorov-Smirnov type statistics. Annals of
    Mathematical Statistics 43(1), 58-64.

    Moscovich, A., & Nadler, B. (2017). Fast calculation of boundary crossing probabilities for Poisson
    processes. Statistics & Probability Letters 123, 177-182.

    Examples
    --------
    Two uniforms: ``P(0.1 <= U_(1) <= 0.5, 0.5 <= U_(2) <= 0.9) = 2 x 0.4 x 0.4``; and one bound alone,
    ``P(U_(1) <= 0.5) = 1 - 0.5 ** 2``:

    >>> round(simultaneous_coverage([0.1, 0.5], [0.5, 0.9]), 4)
    0.32
    >>> round(simultaneous_coverage([0.0, 0.0], [0.5, 1.0]), 4)
    0.75
    >>> simultaneous_coverage([0.5, 0.1], [0.6, 0.7])
    Traceback (most recent call last):
        ...
    ValueError: bounds must be non-decreasing and within [0, 1]
    """
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    n = low.size
    if high.shape != low.shape or n == 0:
        raise ValueError("low and high must be non-empty and of the same length")
    if np.any(np.diff(low) < 0) or np.any(np.diff(high) < 0) or low.min() < 0 or high.max() > 1:
        raise ValueError("bounds must be non-decreasing and within [0, 1]")
    if np.any(low > high):
        return 0.0
    # Breakpoints: at l_i, N <= i - 1 (kind 0); at u_i, N >= i (kind 1). Sorted by time.
    times = np.concatenate([low, high])
    kinds = np.concatenate([np.zeros(n, dtype=np.int8), np.ones(n, dtype=np.int8)])
    order = np.lexsort((kinds, times))
    times, kinds = times[order], kinds[order]
    # State: probabilities of N = lo .. hi at the current time. hi is the number of lower bounds passed
    # (N cannot exceed it and still meet the next one); lo the number of upper bounds passed.
    lo, hi = 0, 0
    state = np.ones(1)
    t_prev = 0.0
    for t, kind in zip(times, kinds):
        if t > t_prev:
            width = hi - lo + 1
            state = np.convolve(state, _poisson_pmf(n * (t - t_prev), width))[:width]
            t_prev = t
        if kind == 0:  # passed l_i: N may now reach i
            hi += 1
            state = np.append(state, 0.0)
        else:  # passed u_i: N must be >= i now
            lo += 1
            state = state[1:]
        if state.size == 0 or lo > hi:
            return 0.0
    # Now lo = hi = n: exactly n points so far, none after.
    p_end = state[0] * np.exp(-n * (1.0 - t_prev))
    p_n = np.exp(n * np.log(n) - n - special.gammaln(n + 1))
    return float(min(max(p_end / p_n, 0.0), 1.0))


@dataclass(frozen=True)
class LDIntervals:
    """Simultaneous intervals for ``F(Y_(1)), ..., F(Y_(n))``: the LD bands before they meet the data.

    Returned by :func:`ld_intervals` and :func:`ld_pointwise_level` (the constructor does not validate). The
    i-th interval is the equal-tailed or highest-density interval of coverage ``pointwise`` of
    ``Beta(i, n + 1 - i)``, the law of ``F(Y_(i))``.

    Parameters
    ----------
    n : int
        Number of order statistics (sample size).
    confidence : float
        Their exact simultaneous coverage ``1 - alpha``, in (0, 1).
    kind : {"equal_tailed", "highest_density"}
        Which Beta intervals.
    pointwise : float
        The coverage c of each interval, in ``[confidence, 1 - alpha / n]`` (the critical value of the LD
        statistic).
    low : ndarray of float64, shape (n,)
        Lower interval ends (probabilities) for i = 1..n, non-decreasing; read-only.
    high : ndarray of float64, shape (n,)
        Upper interval ends for i = 1..n, non-decreasing, ``low < high``; read-only.
    achieved : float
        The simultaneous coverage recomputed at the solution (equals ``confidence`` to ~1e-10).

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> ld = ld_intervals(5, 0.8, "equal_tailed")
    >>> ld.n, ld.kind, round(ld.pointwise, 4), round(ld.achieved, 6)
    (5, 'equal_tailed', 0.9433, 0.8)
    >>> np.round(ld.low, 4).tolist()
    [0.0057, 0.0564, 0.1535, 0.2934, 0.4904]
    """

    n: int
    confidence: float
    kind: str
    pointwise: float
    low: np.ndarray
    high: np.ndarray
    achieved: float


def _intervals(n: int, kind: str, c: float, start=None):
    i = np.arange(1, n + 1)
    if kind == "equal_tailed":
        return beta_intervals.equal_tailed(i, n, c)
    low, high = beta_intervals.highest_density(i, n, c, start=start)
    # At pointwise levels within ~1e-10 of 1 an upper tail falls near the resolution of s + c (1.1e-16), and an
    # end can come out a hair out of order (at n = 50, c = 1 - 2e-11: high = 1 at i = 48, 1 - 3e-10 at i = 49).
    # The bounds must be monotone; widening each to the running max (min for the lower ends, from the top)
    # only adds coverage, and the simultaneous coverage is computed exactly on the bounds as widened. A no-op
    # whenever the ends are in order (every level below that).
    return np.minimum.accumulate(low[::-1])[::-1], np.maximum.accumulate(high)


def _kind_iv(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown LD interval kind {kind!r}; choose one of: {', '.join(KINDS)}")


def ld_pointwise_level(n: int, confidence: float, kind: str = "highest_density") -> LDIntervals:
    """Solve for the pointwise coverage whose intervals hold simultaneously with probability ``confidence``.

    The simultaneous coverage rises with the pointwise one from at most ``1 - alpha`` (at pointwise
    ``1 - alpha``) to at least ``1 - alpha`` (at ``1 - alpha / n``, by Bonferroni), so Brent's method on
    ``log(1 - c)`` between those brackets converges in about ten exact evaluations. Uncached: call
    :func:`ld_intervals` to reuse solutions.

    Parameters
    ----------
    n : int
        Sample size (number of order statistics), >= 1.
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1). Not validated here.
    kind : {"highest_density", "equal_tailed"}, default "highest_density"
        Which Beta intervals.

    Returns
    -------
    LDIntervals
        The pointwise level, the intervals for i = 1..n and the simultaneous coverage achieved.

    Raises
    ------
    ValueError
        On an unknown `kind` (the message lists the valid ones).

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> ld = ld_pointwise_level(5, 0.8)
    >>> round(ld.pointwise, 4), round(ld.achieved, 6)  # each interval covers 94.6%, all five 80%
    (0.9457, 0.8)
    """
    from scipy import optimize  # imported on use: 0.2 s at a study's start, and only the LD bands solve

    _kind_iv(kind)
    alpha = 1.0 - confidence
    last = {"low": None}

    def excess(log_miss: float) -> float:
        c = 1.0 - np.exp(log_miss)
        low, high = _intervals(n, kind, c, start=last["low"])
        last["low"] = low
        return simultaneous_coverage(low, high) - confidence

    a, b = np.log(alpha), np.log(alpha / n)
    fa, fb = excess(a), excess(b)
    if fa >= 0:  # n = 1, or the simultaneous coverage already reached at the pointwise level
        log_miss = a
    elif fb <= 0:
        log_miss = b
    else:
        log_miss = optimize.brentq(excess, b, a, xtol=1e-14, rtol=1e-14)
    c = 1.0 - np.exp(log_miss)
    low, high = _intervals(n, kind, c, start=last["low"])
    for arr in (low, high):
        arr.flags.writeable = False
    return LDIntervals(n, confidence, kind, float(c), low, high, simultaneous_coverage(low, high))


#: Bump when simultaneous_coverage, beta_intervals or ld_pointwise_level change the numbers they give:
#: entries of another version are recomputed.
ALGORITHM_VERSION = 1
#: A valid entry's intervals reproduce from its pointwise level to this (the highest-density Newton solves
#: stop within 3e-13 of each other from different starts, 7e-11 at confidence 1 - 1e-6), and its recomputed
#: simultaneous coverage equals the confidence to this (the solver reaches 5e-15 for n <= 1000 and
#: confidence <= 1 - 1e-6). Tampering that moves a band by more than a billionth breaks one of them.
_INTERVAL_TOL = 1e-9
_COVERAGE_TOL = 1e-11


class BadEntry(Exception):
    """Why a cache entry cannot be used (one line)."""


def checked(n: int, confidence: float, kind: str, pointwise: float, low, high) -> LDIntervals:
    """``LDIntervals`` from stored values, if they are what a fresh solution would be; else :class:`BadEntry`.

    In order of cost: shape and dtype, finite, within [0, 1], non-decreasing, low < high, a pointwise level
    between its brackets; then the intervals recomputed from that level (one pass, ~4 ms at n = 1024) and
    their exact simultaneous coverage (~14 ms at n = 1024; solving costs ~300 ms) against the confidence.
    """
    for name, arr in (("low", low), ("high", high)):
        if arr.shape != (n,) or arr.dtype != np.float64:
            raise BadEntry(f"{name} has shape {arr.shape} and dtype {arr.dtype}, not ({n},) float64")
        if not np.all(np.isfinite(arr)):
            raise BadEntry(f"{name} holds non-finite values")
        if np.any(arr < 0) or np.any(arr > 1):
            raise BadEntry(f"{name} holds values outside [0, 1]")
        if np.any(np.diff(arr) < 0):
            raise BadEntry(f"{name} is not non-decreasing")
    if np.any(low >= high):
        raise BadEntry(f"low >= high at i = {int(np.argmax(low >= high)) + 1}")
    alpha = 1.0 - confidence
    if not (np.isfinite(pointwise) and confidence - 1e-12 <= pointwise <= 1 - alpha / n + 1e-12):
        raise BadEntry(f"pointwise level {pointwise!r} outside [{confidence!r}, 1 - alpha/n]")
    fresh_low, fresh_high = _intervals(n, kind, pointwise, start=low.copy())
    gap = max(np.abs(fresh_low - low).max(), np.abs(fresh_high - high).max())
    if not gap <= _INTERVAL_TOL:
        raise BadEntry(f"intervals differ by {gap:.3g} from those at their pointwise level {pointwise!r}")
    achieved = simultaneous_coverage(low, high)
    if not abs(achieved - confidence) <= _COVERAGE_TOL:
        raise BadEntry(f"simultaneous coverage {achieved!r}, not {confidence!r}")
    for arr in (low, high):
        arr.flags.writeable = False
    return LDIntervals(n, confidence, kind, pointwise, low, high, achieved)


@lru_cache(maxsize=256)
def _ld_intervals_cached(n: int, confidence: float, kind: str, where: str) -> LDIntervals:
    # ``where`` (the store's place, "" without one) is part of the key: a store moved elsewhere is read afresh.
    store = stores.get_store("ld_intervals")
    if store is not None:
        kept = store.get(n, confidence, kind)
        if kept is not None:
            return kept
    result = ld_pointwise_level(n, confidence, kind)
    if store is None:
        return result
    try:
        # Only an entry that passes the read checks is stored: one that cannot would warn on every read.
        checked(n, confidence, kind, result.pointwise, np.array(result.low), np.array(result.high))
    except BadEntry:
        return result
    store.put(result)
    return result


def _where() -> str:
    """The place of the installed LD-interval store (part of the in-memory cache's key), "" without one."""
    store = stores.get_store("ld_intervals")
    return "" if store is None else store.where()


#: The cost model of :func:`ld_intervals` (for refusing a size at once, before it starts): one exact coverage
#: evaluation walks 2n breakpoints convolving windows of about sqrt(n) counts, about 25 ns x n^2 (measured at
#: n = 1,000-8,000 on a shared 2-core machine); a solve takes about 17 (Brent's method to 1e-14, the two ends, the
#: result and the cache check), reading a disk entry one (its coverage is checked).
_NS_PER_N2 = 25.0
_SOLVE_EVALUATIONS = 17


def ld_seconds(n: int, confidence: float, kind: str) -> float:
    """Estimated seconds :func:`ld_intervals` takes for ``(n, confidence, kind)`` here: 0 when this process
    has them already, one coverage evaluation for a disk entry, a whole solve otherwise."""
    key = (int(n), float(confidence), kind, _where())
    if key in _SOLVED:
        return 0.0
    store = stores.get_store("ld_intervals")
    evaluations = 1 if store is not None and store.has(*key[:3]) else _SOLVE_EVALUATIONS
    return evaluations * _NS_PER_N2 * 1e-9 * float(n) ** 2


#: The keys :func:`ld_intervals` has returned in this process (held by its in-memory cache).
_SOLVED: set[tuple[int, float, str, str]] = set()


def ld_intervals(n: int, confidence: float, kind: str = "highest_density") -> LDIntervals:
    """The LD intervals for n order statistics at simultaneous ``confidence`` (cached; see module doc).

    The result of :func:`ld_pointwise_level`, kept in memory and in the installed store (the engine's disk
    cache, :mod:`simstudy.engine.ld_cache`); a stored entry is checked (exact coverage) before it is used.

    Parameters
    ----------
    n : int
        Sample size (number of order statistics), >= 1.
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1).
    kind : {"highest_density", "equal_tailed"}, default "highest_density"
        Which Beta intervals.

    Returns
    -------
    LDIntervals
        The intervals for i = 1..n (arrays read-only), their pointwise level and achieved coverage.

    Raises
    ------
    ValueError
        On an unknown `kind`.

    Warns
    -----
    simstudy.engine.ld_cache.CacheWarning
        If the disk cache's entry failed its checks (it is recomputed and rewritten).

    References
    ----------
    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> ld = ld_intervals(5, 0.8, "equal_tailed")
    >>> np.round(ld.low, 4).tolist(), np.round(ld.high, 4).tolist()
    ([0.0057, 0.0564, 0.1535, 0.2934, 0.4904], [0.5096, 0.7066, 0.8465, 0.9436, 0.9943])
    >>> ld_intervals(5, 0.8, "equal-tailed")
    Traceback (most recent call last):
        ...
    ValueError: unknown LD interval kind 'equal-tailed'; choose one of: equal_tailed, highest_density
    """
    _kind_iv(kind)
    key = (int(n), float(confidence), kind, _where())
    result = _ld_intervals_cached(*key)
    _SOLVED.add(key)
    return result
