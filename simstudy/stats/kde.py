"""Fitting a score distribution to real tuning results: atoms, a bandwidth for several modes, and the fit's check.

Real score distributions are not smooth. Failed runs sit exactly at 0 or at chance accuracy, and good runs
cluster far from them. These tools let the audit fit such scores and say how well it did:

- :func:`find_atoms` -- the values repeated more often than a continuous law with the data's resolution allows;
- :func:`failed_runs` -- the atoms worse than most of the other scores (:func:`worse_than_most`): failed or
  chance-level runs;
- :func:`isj_bandwidth` -- the improved Sheather-Jones bandwidth of Botev, Grotowski & Kroese (2010), which
  resolves several modes where Silverman's rule of thumb smooths them into one;
- :func:`ks_distance` -- the Kolmogorov-Smirnov distance between the scores and a fitted distribution with
  atoms, with its 95% critical value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["find_atoms", "failed_runs", "worse_than_most", "isj_bandwidth", "ks_distance", "Atoms", "KSFit"]

#: Family-wise false-alarm rate of :func:`find_atoms` over all the distinct values of a sample.
ATOM_ALPHA = 1e-3


@dataclass(frozen=True)
class Atoms:
    """Values found to be point masses, with their counts (ascending values): what :func:`find_atoms` returns.

    Parameters
    ----------
    values : ndarray of float, shape (J,)
        The atoms' values in score units, ascending and distinct (``J = 0`` when none was found).
    counts : ndarray of int, shape (J,)
        How many times each atom occurs in the scores (a count of runs, each at least 3).
    resolution : float
        The data's resolution ``d`` in score units: the smallest positive gap between distinct values
        (0.0 when all the scores are equal).

    Examples
    --------
    >>> a = Atoms(np.array([0.0]), np.array([30]), 0.001)
    >>> a.values.tolist(), a.counts.tolist(), a.resolution
    ([0.0], [30], 0.001)
    """

    values: np.ndarray  # (J,)
    counts: np.ndarray  # (J,) int
    resolution: float  # d: the smallest positive gap between distinct values


def _scores_iv(x, name: str = "scores") -> np.ndarray:
    x = np.sort(np.asarray(x, dtype=np.float64).ravel())
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must hold at least two finite values, got {x.size} (or a non-finite one)")
    return x


def find_atoms(scores, *, alpha: float = ATOM_ALPHA) -> Atoms:
    """The values of ``scores`` repeated beyond what a continuous distribution recorded at their resolution allows.

    With resolution ``d`` (the smallest positive gap between distinct values: scores are recorded to that
    precision, so a continuous law puts about ``f(v) d`` probability on each recorded value ``v``), a value
    seen ``c >= 3`` times among ``n`` is an atom when ``P(Poisson(lambda) >= c) < alpha / m``, where ``m``
    is the number of distinct values (a Bonferroni bound over them) and ``lambda = n f(v) d`` the expected
    count of that exact value. The local density ``f(v)`` is a nearest-neighbour estimate from the others:
    with ``r`` the distance from ``v`` to the ``k``-th nearest score not equal to ``v`` (``k = max(10,
    ceil(sqrt(n)))``, fewer if there are not that many) and ``K >= k`` the number of those within ``r``
    (ties at ``r`` included, so that rounded scores are not undercounted), ``f(v) = K / (2 n r)``, so
    ``lambda = K d / (2 r)``. Excluding the value's own copies is what lets a large atom stand out: its
    copies do not raise the density of its neighbourhood.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        At least two finite scores (score units); any shape, flattened.
    alpha : float, keyword-only
        The probability in (0, 1) of calling any value of a continuous sample an atom (at most, up to the
        estimate of f); default ``ATOM_ALPHA`` = 0.001.

    Returns
    -------
    Atoms
        ``values`` (score units) and ``counts`` (runs) of the atoms, ascending (empty arrays when none), and
        the resolution ``d`` (score units).

    Raises
    ------
    ValueError
        If there are fewer than two scores or a non-finite one, or if `alpha` is not in (0, 1).

    Examples
    --------
    >>> x = np.concatenate([np.zeros(30), np.linspace(0.5, 0.9, 170)])
    >>> a = find_atoms(x)
    >>> a.values.tolist(), a.counts.tolist()
    ([0.0], [30])
    """
    from scipy import stats

    x = _scores_iv(scores)  # sorted
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    values, counts = np.unique(x, return_counts=True)
    if values.size == 1:
        return Atoms(values, counts, 0.0)
    d = float(np.diff(values).min())
    k_target = max(10, int(np.ceil(np.sqrt(x.size))))
    # Each repeated value's neighbours are the sorted scores either side of its block of copies, so the k-th
    # nearest other score and the count within it come by bisection over those two sorted runs of distances:
    # n log n in all (a scan of every score per repeated value was quadratic when values repeat).
    cand = counts >= 3
    v, c = values[cand], counts[cand]
    start = np.cumsum(counts)[cand] - c  # where each value's block of copies begins in x
    stop = start + c
    n_left, n_right = start, x.size - stop
    k = np.minimum(k_target, x.size - c)

    def left(j: np.ndarray) -> np.ndarray:  # distance to the (j+1)-th nearest score below, as |x - v| gives it
        return np.abs(x[np.clip(start - 1 - j, 0, x.size - 1)] - v)

    def right(j: np.ndarray) -> np.ndarray:  # the same above
        return np.abs(x[np.clip(stop + j, 0, x.size - 1)] - v)

    # the k-th smallest of the two ascending runs: take a from the left and k - a from the right, with a the
    # least such that left(a) >= right(k - a - 1)
    lo, hi = np.maximum(0, k - n_right), np.minimum(k, n_left)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        go = (lo < hi) & (left(mid) < right(k - mid - 1))
        lo, hi = np.where(go, mid + 1, lo), np.where((lo < hi) & ~go, mid, hi)
    r = np.maximum(np.where(lo > 0, left(lo - 1), -np.inf), np.where(k - lo > 0, right(k - lo - 1), -np.inf))
    within = _count_within(left, n_left, r) + _count_within(right, n_right, r)  # ties at r included
    lam = within * d / (2 * r)
    found = stats.poisson.sf(c - 1, lam) < alpha / values.size
    return Atoms(v[found].astype(np.float64), c[found].astype(np.int64), d)


def failed_runs(x: np.ndarray, *, minimize: bool = False) -> np.ndarray:
    """Which scores are failed or chance-level runs: an atom (:func:`find_atoms`) on the worse side of the
    median of the other scores (below it; above it with ``minimize``).

    Parameters
    ----------
    x : ndarray of float, shape (n,)
        Finite scores (score units).
    minimize : bool, optional, keyword-only
        Lower scores are better (losses): failed runs are atoms above the others' median; default False.

    Returns
    -------
    ndarray of bool, shape (n,)
        True for each score of a failed-run atom.

    Examples
    --------
    >>> x = np.concatenate([np.zeros(14), np.linspace(0.5, 0.9, 86)])
    >>> int(failed_runs(x).sum()), int(failed_runs(1 - x, minimize=True).sum()), int(failed_runs(1 - x).sum())
    (14, 14, 0)
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape, dtype=bool)
    if x.size < 2:
        return out
    for v in find_atoms(x).values:
        if worse_than_most(v, x, minimize=minimize):
            out |= x == v
    return out


def worse_than_most(value: float, x: np.ndarray, *, minimize: bool = False) -> bool:
    """Whether ``value`` lies on the worse side of the median of the other scores: what makes an atom a failed run.

    Parameters
    ----------
    value : float
        A score (score units), usually an atom of ``x`` (:func:`find_atoms`).
    x : ndarray of float, shape (n,)
        The scores (score units).
    minimize : bool, optional, keyword-only
        Lower scores are better (losses): worse is above the others' median; default False.

    Returns
    -------
    bool
        True when ``value`` is below the median of the scores other than it (above it with ``minimize``), or
        when every score equals ``value``.

    Examples
    --------
    >>> x = np.array([0.0, 0.0, 0.0, 0.6, 0.7, 0.8])
    >>> worse_than_most(0.0, x), worse_than_most(0.0, x, minimize=True)
    (True, False)
    """
    others = x[x != value]
    if others.size == 0:
        return True
    return bool(value > np.median(others)) if minimize else bool(value < np.median(others))


def _count_within(dist: Callable[[np.ndarray], np.ndarray], size: np.ndarray, r: np.ndarray) -> np.ndarray:
    """How many of each ascending run of distances ``dist(0), ..., dist(size - 1)`` are at most ``r``."""
    lo, hi = np.zeros_like(size), size.copy()
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        go = (lo < hi) & (dist(mid) <= r)
        lo, hi = np.where(go, mid + 1, lo), np.where((lo < hi) & ~go, mid, hi)
    return lo


def _isj_gap(t: float, n: int, k2: np.ndarray, a2: np.ndarray) -> float:
    """``t - xi gamma^[l](t)`` of Botev et al. (2010, Eq. 29-30, l = 7): zero at the ISJ bandwidth squared.

    ``k2`` are the squared DCT frequencies, ``a2`` the squared cosine coefficients of the binned data on
    the unit interval. The functional ``||f^(s)||^2`` is estimated at stage s with the time that is optimal
    given the estimate at stage s + 1, from s = l down to 2; the last gives the plug-in time for f itself.
    """
    lvl = 7
    norm = 2 * np.pi ** (2 * lvl) * np.sum(k2**lvl * a2 * np.exp(-k2 * np.pi**2 * t))
    for s in range(lvl - 1, 1, -1):
        odd = np.prod(np.arange(1, 2 * s, 2)) / np.sqrt(2 * np.pi)  # (2s-1)!! / sqrt(2 pi)
        const = (1 + 0.5 ** (s + 0.5)) / 3
        time = (2 * const * odd / (n * norm)) ** (2 / (3 + 2 * s))
        norm = 2 * np.pi ** (2 * s) * np.sum(k2**s * a2 * np.exp(-k2 * np.pi**2 * time))
    return t - (2 * n * np.sqrt(np.pi) * norm) ** -0.4


def isj_bandwidth(data, *, low: float, high: float, grid: int = 1 << 14) -> float | None:
    """The improved Sheather-Jones bandwidth (Botev, Grotowski & Kroese 2010, Ann. Statist. 38:2916) of a
    Gaussian KDE reflected at ``low`` and ``high``.

    Botev et al. estimate the density by diffusion on an interval whose ends reflect: binning the data on
    [low, high] and taking its discrete cosine transform gives exactly the reflected KDE's Fourier series,
    so the bandwidth is the reflected KDE's (no reflected copies of the data needed). The bandwidth solves
    the fixed-point equation ``t = xi gamma^[7](t)`` for ``t = h^2``, which estimates the density's
    roughness without assuming a normal reference (Silverman's rule does, and smooths separate modes into one).

    On rounded data the equation also has roots below the rounding (the kernels then resolve the grid of
    recorded values, not the distribution): the bandwidth is the smallest root of at least the data's
    resolution (smallest positive gap) and of the bin width; the grid is refined (up to 2^18 bins) until
    the bandwidth spans at least eight bins.

    Parameters
    ----------
    data : array_like of float, shape (m,)
        At least two distinct finite scores within [low, high] (score units); any shape, flattened.
    low, high : float, keyword-only
        The support's finite bounds in score units, ``low < high``.
    grid : int, keyword-only
        Initial number of bins (a power of two); default ``2**14`` = 16384.

    Returns
    -------
    float or None
        The kernel standard deviation in score units; ``None`` when the equation has no root in range
        (the caller then falls back on a rule of thumb and says so).

    Raises
    ------
    ValueError
        If `data` holds fewer than two values, a non-finite one, or fewer than two distinct ones, or if the
        bounds are not finite with ``low < high`` or do not contain the data.

    Examples
    --------
    Two modes with standard deviations 0.03 and 0.05: the bandwidth is well below both (Silverman's rule,
    about 0.06 here, would blur them into one).

    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0.3, 0.03, 300), rng.normal(0.7, 0.05, 300)])
    >>> round(isj_bandwidth(x, low=0.0, high=1.0, grid=1024), 4)
    0.0136
    """
    from scipy import fft, optimize

    x = _scores_iv(data, "data")
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high) and low < high) or x[0] < low or x[-1] > high:
        raise ValueError(
            f"data must lie within finite bounds low < high, got [{low}, {high}] for data in [{x[0]}, {x[-1]}]"
        )
    gaps = np.diff(np.unique(x))
    if gaps.size == 0:
        raise ValueError("data must hold at least two distinct values to choose a bandwidth")
    span = high - low
    while True:
        counts, _ = np.histogram(x, bins=grid, range=(low, high))
        a = fft.dct(counts / x.size, type=2)  # a_k = 2 sum_j p_j cos(pi k (j + 1/2) / grid)
        k2 = np.arange(1, grid, dtype=np.float64) ** 2
        a2 = (a[1:] / 2) ** 2
        h_min = max(float(gaps.min()), span / grid)
        ts = np.geomspace((h_min / span) ** 2, 0.1, 160)  # t = (h / span)^2 on the unit interval
        gap = np.array([_isj_gap(t, x.size, k2, a2) for t in ts])
        change = np.nonzero(np.sign(gap[:-1]) != np.sign(gap[1:]))[0]
        if change.size == 0:
            return None
        i = change[0]
        t = optimize.brentq(_isj_gap, ts[i], ts[i + 1], args=(x.size, k2, a2), xtol=1e-14, rtol=1e-10)
        h = float(np.sqrt(t) * span)
        if h >= 8 * span / grid or grid >= 1 << 18:
            return h
        grid *= 4


@dataclass(frozen=True)
class KSFit:
    """The Kolmogorov-Smirnov distance of a fit, its 95% critical value, and where the distance is attained.

    What :func:`ks_distance` returns; :attr:`rejected` says whether the distance exceeds the critical value.

    Parameters
    ----------
    distance : float
        ``sup_x |F_n(x) - F(x)|``, a probability in [0, 1].
    critical : float
        The 95% critical value of the distance for ``n`` scores (``scipy.stats.kstwo.ppf(0.95, n)``), a
        probability in [0, 1].
    at : float
        The score (score units) where ``|F_n - F|`` is largest (at it or just left of it).
    n : int
        The number of scores.

    Examples
    --------
    >>> fit = KSFit(distance=0.3, critical=0.2, at=0.5, n=40)
    >>> fit.rejected
    True
    """

    distance: float
    critical: float
    at: float  # the score where |F_n - F| is largest (at or just left of it)
    n: int

    @property
    def rejected(self) -> bool:
        """Whether the distance exceeds the critical value (the fit does not describe the scores)."""
        return self.distance > self.critical


def ks_distance(scores, dist) -> KSFit:
    """The Kolmogorov-Smirnov distance ``sup_x |F_n(x) - F(x)|`` between the scores' eCDF and ``dist``.

    Both may jump (tied scores; the distribution's atoms), so the supremum is taken on both sides of every
    jump of ``F_n``: ``|F_n(x) - F(x)|`` and ``|F_n(x-) - F(x-)|`` at each distinct score. That is the exact
    supremum: between two scores ``F_n`` is flat and ``F`` non-decreasing, so ``|F_n - F|`` is largest at
    an end (an atom of ``F`` between scores shows in the left limit at the next score).

    The critical value is ``scipy.stats.kstwo.ppf(0.95, n)``, the 95% quantile of the distance when the
    distribution is fixed in advance and continuous (the simple hypothesis). Here the distribution was
    fitted to these very scores, which pulls it towards them: the distance is then typically *smaller*
    than under the simple hypothesis, so the test rejects less often than 5% of the time -- it is
    conservative, and a rejection is strong evidence that the fit misses the scores (a distance below the
    critical value is weaker evidence that it does not).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        At least two finite scores (score units); any shape, flattened.
    dist : ScoreDistribution
        With ``cdf`` (``P(X <= x)``) and ``cdf_left`` (``P(X < x)``), vectorized over an array of scores.

    Returns
    -------
    KSFit
        The distance and its 95% critical value (probabilities in [0, 1]), the score where the distance is
        attained, and ``n``.

    Raises
    ------
    ValueError
        If there are fewer than two scores or a non-finite one.

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> fit = ks_distance([0.1, 0.2, 0.3, 0.4], Bag([0.1, 0.2, 0.3, 0.4]))
    >>> fit.distance, fit.rejected
    (0.0, False)

    Scores drawn from the distribution itself stay below the critical value:

    >>> from simstudy.distributions import TruncatedNormal
    >>> dist = TruncatedNormal(mean=0.6, sd=0.07)
    >>> fit = ks_distance(dist.sample(40, rng=np.random.default_rng(0)), dist)
    >>> round(fit.distance, 4), round(fit.critical, 4), fit.n, fit.rejected
    (0.1316, 0.2101, 40, False)
    """
    from scipy import stats

    x = _scores_iv(scores)
    points = np.unique(x)
    right = np.searchsorted(x, points, side="right") / x.size  # F_n(p)
    left = np.searchsorted(x, points, side="left") / x.size  # F_n(p-)
    diff = np.maximum(np.abs(right - dist.cdf(points)), np.abs(left - dist.cdf_left(points)))
    j = int(np.argmax(diff))
    return KSFit(float(diff[j]), float(stats.kstwo.ppf(0.95, x.size)), float(points[j]), int(x.size))
