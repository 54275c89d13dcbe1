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
intervals depend only on (n, confidence, kind), so :func:`ld_intervals` caches them in memory and on disk
(``$SIMSTUDY_CACHE_DIR``, default ``~/.cache/simstudy``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import optimize, special

from . import beta_intervals

__all__ = ["simultaneous_coverage", "LDIntervals", "ld_intervals", "ld_pointwise_level", "cache_dir"]

KINDS = ("equal_tailed", "highest_density")


def _poisson_pmf(lam: float, size: int) -> np.ndarray:
    k = np.arange(size, dtype=np.float64)
    if lam == 0:
        return (k == 0).astype(np.float64)
    return np.exp(k * np.log(lam) - lam - special.gammaln(k + 1))


def simultaneous_coverage(low, high) -> float:
    """``P(low[i] <= U_(i) <= high[i] for all i)`` for the order statistics of ``len(low)`` uniforms.

    Parameters
    ----------
    low, high : array_like, shape (n,)
        Non-decreasing bounds in [0, 1] on the 1st, 2nd, ..., n-th smallest of n uniforms.

    Returns
    -------
    float
        The exact probability (to rounding, about 1e-13).
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

    Attributes
    ----------
    n : int
    confidence : float
        Their exact simultaneous coverage, 1 - alpha.
    kind : {"equal_tailed", "highest_density"}
    pointwise : float
        The coverage c of each interval (the critical value of the LD statistic).
    low, high : ndarray, shape (n,)
        Interval ends for i = 1..n.
    achieved : float
        The simultaneous coverage recomputed at the solution (equals ``confidence`` to ~1e-10).
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


def ld_pointwise_level(n: int, confidence: float, kind: str = "highest_density") -> LDIntervals:
    """Solve for the pointwise coverage whose intervals hold simultaneously with probability ``confidence``.

    The simultaneous coverage rises with the pointwise one from at most ``1 - alpha`` (at pointwise
    ``1 - alpha``) to at least ``1 - alpha`` (at ``1 - alpha / n``, by Bonferroni), so Brent's method on
    ``log(1 - c)`` between those brackets converges in about ten exact evaluations.
    """
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


def cache_dir() -> Path:
    """Where LD intervals are cached: ``$SIMSTUDY_CACHE_DIR``, else ``$XDG_CACHE_HOME/simstudy``, else
    ``~/.cache/simstudy``."""
    if os.environ.get("SIMSTUDY_CACHE_DIR"):
        return Path(os.environ["SIMSTUDY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "simstudy"


def _cache_path(n: int, confidence: float, kind: str) -> Path:
    return cache_dir() / "ld_intervals" / f"{kind}-n{n}-c{confidence!r}.npz"


@lru_cache(maxsize=256)
def _ld_intervals_cached(n: int, confidence: float, kind: str, directory: str) -> LDIntervals:
    path = _cache_path(n, confidence, kind)
    try:
        with np.load(path, allow_pickle=False) as f:
            low, high = f["low"], f["high"]
            meta = f["meta"]
        if low.shape == (n,) and high.shape == (n,):
            for arr in (low, high):
                arr.flags.writeable = False
            return LDIntervals(n, confidence, kind, float(meta[0]), low, high, float(meta[1]))
    except (OSError, KeyError, ValueError):
        pass  # not cached yet, or unreadable: compute (and try to cache) again
    result = ld_pointwise_level(n, confidence, kind)
    try:
        from .io import atomic_path

        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, low=result.low, high=result.high, meta=np.array([result.pointwise, result.achieved]))
    except OSError:
        pass  # a read-only cache directory costs speed, not correctness
    return result


def ld_intervals(n: int, confidence: float, kind: str = "highest_density") -> LDIntervals:
    """The LD intervals for n order statistics at simultaneous ``confidence`` (cached; see module doc)."""
    if kind not in KINDS:
        raise ValueError(f"unknown LD interval kind {kind!r}; choose one of: {', '.join(KINDS)}")
    return _ld_intervals_cached(int(n), float(confidence), kind, str(cache_dir()))
