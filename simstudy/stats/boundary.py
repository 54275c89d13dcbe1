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
(``$SIMSTUDY_CACHE_DIR``, default ``~/.cache/simstudy``). A disk entry is never trusted blindly: it carries
its key (n, confidence, kind), the algorithm's version and a SHA-256, and on reading its intervals must be
finite, within [0, 1], non-decreasing, low < high, those of its stored pointwise level, and of exact
simultaneous coverage equal to the confidence (about 20 ms at n = 1,024, against 300 ms to solve). An entry
failing any check is recomputed and rewritten, with a :class:`CacheWarning` naming the file.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import optimize, special

from simstudy.stats import beta_intervals

__all__ = ["simultaneous_coverage", "LDIntervals", "ld_intervals", "ld_pointwise_level", "cache_dir", "CacheWarning"]

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


def cache_dir() -> Path:
    """Where LD intervals are cached: ``$SIMSTUDY_CACHE_DIR``, else ``$XDG_CACHE_HOME/simstudy``, else
    ``~/.cache/simstudy``.

    Read at every call, so setting the variable redirects later :func:`ld_intervals` calls.

    Returns
    -------
    pathlib.Path
        The cache directory (entries go in its ``ld_intervals/`` subdirectory; it need not exist yet).

    Examples
    --------
    >>> import os, tempfile
    >>> old = os.environ.get("SIMSTUDY_CACHE_DIR")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = d
    ...     _ = ld_intervals(4, 0.9)
    ...     print(cache_dir() == Path(d), sorted(p.name for p in (cache_dir() / "ld_intervals").iterdir()))
    True ['highest_density-n4-c0.9.npz']
    >>> if old is None:
    ...     del os.environ["SIMSTUDY_CACHE_DIR"]
    ... else:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = old
    """
    if os.environ.get("SIMSTUDY_CACHE_DIR"):
        return Path(os.environ["SIMSTUDY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "simstudy"


def _cache_path(n: int, confidence: float, kind: str) -> Path:
    return cache_dir() / "ld_intervals" / f"{kind}-n{n}-c{confidence!r}.npz"


class CacheWarning(UserWarning):
    """A cached result that failed its checks on reading and was recomputed; the message names the file.

    Issued by :func:`ld_intervals` when a disk entry is unreadable, damaged (checksum), of another key or
    algorithm version, or its intervals fail the checks; the result is then computed afresh and the entry
    rewritten, so the warning costs time, never correctness.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> old = os.environ.get("SIMSTUDY_CACHE_DIR")
    >>> with tempfile.TemporaryDirectory() as d, warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = d
    ...     entry = cache_dir() / "ld_intervals" / "equal_tailed-n3-c0.7.npz"
    ...     entry.parent.mkdir(parents=True)
    ...     _ = entry.write_bytes(b"not an npz file")
    ...     ld = ld_intervals(3, 0.7, "equal_tailed")
    >>> [(w.category.__name__, str(w.message).endswith("recomputed and rewrote it")) for w in caught]
    [('CacheWarning', True)]
    >>> if old is None:
    ...     del os.environ["SIMSTUDY_CACHE_DIR"]
    ... else:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = old
    """


#: Bump when simultaneous_coverage, beta_intervals or ld_pointwise_level change the numbers they give:
#: entries of another version are recomputed.
_ALGORITHM_VERSION = 1
#: Version of a cache entry's layout (1: the unkeyed, unchecked files of earlier simstudy versions).
_CACHE_FORMAT = 2
_CACHE_TAG = b"simstudy-ld-intervals:"
_SHA_TAG = b" sha256:"
#: A valid entry's intervals reproduce from its pointwise level to this (the highest-density Newton solves
#: stop within 3e-13 of each other from different starts, 7e-11 at confidence 1 - 1e-6), and its recomputed
#: simultaneous coverage equals the confidence to this (the solver reaches 5e-15 for n <= 1000 and
#: confidence <= 1 - 1e-6). Tampering that moves a band by more than a billionth breaks one of them.
_INTERVAL_TOL = 1e-9
_COVERAGE_TOL = 1e-11


class _BadEntry(Exception):
    """Why a cache entry cannot be used (one line)."""


def _entry_header(n: int, confidence: float, kind: str, pointwise: float) -> dict:
    return {
        "format": _CACHE_FORMAT,
        "algorithm": _ALGORITHM_VERSION,
        "n": n,
        "confidence": confidence,
        "kind": kind,
        "pointwise": pointwise,
    }


def _write_entry(path: Path, ld: LDIntervals) -> None:
    """Store ``ld`` atomically: its arrays, and in the zip comment its key, level and a SHA-256 over both."""
    from simstudy.io import _canonical, _digest, atomic_path

    arrays = {"low": np.asarray(ld.low), "high": np.asarray(ld.high)}
    header = _canonical(_entry_header(ld.n, ld.confidence, ld.kind, ld.pointwise))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # the stub fears a key "allow_pickle"; none is
        with zipfile.ZipFile(tmp, "a") as zf:
            zf.comment = _CACHE_TAG + header + _SHA_TAG + _digest(arrays, header).encode()


def _read_entry(path: Path, n: int, confidence: float, kind: str) -> LDIntervals:
    """The cached intervals at ``path``, after every check; :class:`_BadEntry` says which one failed.

    Raises
    ------
    FileNotFoundError
        If there is no entry (not a reason to warn).
    """
    from simstudy.io import _digest

    try:
        # Our own file object: np.load leaks the one it opens when the file is not a zip archive.
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
            comment = f.zip.comment
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise _BadEntry(f"unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    if not comment.startswith(_CACHE_TAG):
        raise _BadEntry("an older cache format without key or checksum")
    header, _, stored = comment[len(_CACHE_TAG) :].rpartition(_SHA_TAG)
    if stored.decode(errors="replace") != _digest(arrays, header):
        raise _BadEntry("checksum mismatch (damaged)")
    try:
        meta = json.loads(header)
        if not isinstance(meta, dict):
            raise TypeError
        pointwise = float(meta["pointwise"])
        wanted = _entry_header(n, confidence, kind, meta["pointwise"])
    except (ValueError, TypeError, KeyError):
        raise _BadEntry("key unreadable") from None
    if meta != wanted:
        diff = ", ".join(
            f"{k} {meta.get(k)!r} not {wanted.get(k)!r}"
            for k in sorted(meta.keys() | wanted.keys())
            if meta.get(k) != wanted.get(k)
        )
        raise _BadEntry(f"an entry for another key or algorithm ({diff})")
    if sorted(arrays) != ["high", "low"]:
        raise _BadEntry(f"arrays {sorted(arrays)}, not ['high', 'low']")
    return _checked(n, confidence, kind, pointwise, arrays["low"], arrays["high"])


def _checked(n: int, confidence: float, kind: str, pointwise: float, low, high) -> LDIntervals:
    """``LDIntervals`` from stored values, if they are what a fresh solution would be; else :class:`_BadEntry`.

    In order of cost: shape and dtype, finite, within [0, 1], non-decreasing, low < high, a pointwise level
    between its brackets; then the intervals recomputed from that level (one pass, ~4 ms at n = 1024) and
    their exact simultaneous coverage (~14 ms at n = 1024; solving costs ~300 ms) against the confidence.
    """
    for name, arr in (("low", low), ("high", high)):
        if arr.shape != (n,) or arr.dtype != np.float64:
            raise _BadEntry(f"{name} has shape {arr.shape} and dtype {arr.dtype}, not ({n},) float64")
        if not np.all(np.isfinite(arr)):
            raise _BadEntry(f"{name} holds non-finite values")
        if np.any(arr < 0) or np.any(arr > 1):
            raise _BadEntry(f"{name} holds values outside [0, 1]")
        if np.any(np.diff(arr) < 0):
            raise _BadEntry(f"{name} is not non-decreasing")
    if np.any(low >= high):
        raise _BadEntry(f"low >= high at i = {int(np.argmax(low >= high)) + 1}")
    alpha = 1.0 - confidence
    if not (np.isfinite(pointwise) and confidence - 1e-12 <= pointwise <= 1 - alpha / n + 1e-12):
        raise _BadEntry(f"pointwise level {pointwise!r} outside [{confidence!r}, 1 - alpha/n]")
    fresh_low, fresh_high = _intervals(n, kind, pointwise, start=low.copy())
    gap = max(np.abs(fresh_low - low).max(), np.abs(fresh_high - high).max())
    if not gap <= _INTERVAL_TOL:
        raise _BadEntry(f"intervals differ by {gap:.3g} from those at their pointwise level {pointwise!r}")
    achieved = simultaneous_coverage(low, high)
    if not abs(achieved - confidence) <= _COVERAGE_TOL:
        raise _BadEntry(f"simultaneous coverage {achieved!r}, not {confidence!r}")
    for arr in (low, high):
        arr.flags.writeable = False
    return LDIntervals(n, confidence, kind, pointwise, low, high, achieved)


@lru_cache(maxsize=256)
def _ld_intervals_cached(n: int, confidence: float, kind: str, directory: str) -> LDIntervals:
    path = _cache_path(n, confidence, kind)
    try:
        return _read_entry(path, n, confidence, kind)
    except FileNotFoundError:
        pass  # not cached yet
    except _BadEntry as exc:
        # stacklevel 3: this function, then ld_intervals (lru_cache adds no Python frame), then its caller
        warnings.warn(f"LD interval cache {path}: {exc}; recomputed and rewrote it", CacheWarning, stacklevel=3)
    result = ld_pointwise_level(n, confidence, kind)
    try:
        # Only an entry that passes the read checks is stored: one that cannot would warn on every read.
        _checked(n, confidence, kind, result.pointwise, np.array(result.low), np.array(result.high))
    except _BadEntry:
        return result
    try:
        _write_entry(path, result)
    except OSError:
        pass  # a read-only cache directory costs speed, not correctness
    return result


#: The cost model of :func:`ld_intervals` (for refusing a size at once, before it starts): one exact coverage
#: evaluation walks 2n breakpoints convolving windows of about sqrt(n) counts, about 25 ns x n^2 (measured at
#: n = 1,000-8,000 on a shared 2-core machine); a solve takes about 17 (Brent's method to 1e-14, the two ends, the
#: result and the cache check), reading a disk entry one (its coverage is checked).
_NS_PER_N2 = 25.0
_SOLVE_EVALUATIONS = 17


def _ld_seconds(n: int, confidence: float, kind: str) -> float:
    """Estimated seconds :func:`ld_intervals` takes for ``(n, confidence, kind)`` here: 0 when this process
    has them already, one coverage evaluation for a disk entry, a whole solve otherwise."""
    key = (int(n), float(confidence), kind, str(cache_dir()))
    if key in _SOLVED:
        return 0.0
    evaluations = 1 if _cache_path(*key[:3]).is_file() else _SOLVE_EVALUATIONS
    return evaluations * _NS_PER_N2 * 1e-9 * float(n) ** 2


#: The keys :func:`ld_intervals` has returned in this process (held by its in-memory cache).
_SOLVED: set[tuple[int, float, str, str]] = set()


def ld_intervals(n: int, confidence: float, kind: str = "highest_density") -> LDIntervals:
    """The LD intervals for n order statistics at simultaneous ``confidence`` (cached; see module doc).

    The result of :func:`ld_pointwise_level`, kept in memory and in :func:`cache_dir` on disk; a disk entry
    is checked (key, version, SHA-256, exact coverage) before it is used.

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
    CacheWarning
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
    key = (int(n), float(confidence), kind, str(cache_dir()))
    result = _ld_intervals_cached(*key)
    _SOLVED.add(key)
    return result
