"""Simultaneous confidence bands for the CDF of scores and for tuning curves (Lourie, Cho & He).

Given n scores from random search, :func:`cdf_bands` bounds their CDF F everywhere at once with
probability ``confidence``; :func:`tuning_curve_bands` turns those bounds into bands for the median (or any
quantile) tuning curve -- exact when scores are continuous -- and for the mean tuning curve -- conservative,
and only meaningful with finite bounds ``low``/``high`` on the scores (Lourie et al. §3.2, Props. 1-2).

CDF band methods (:data:`METHODS`):

========================  ======================================================================  ==========
method                    band                                                                    coverage
========================  ======================================================================  ==========
``"dkw"``                 eCDF +/- sqrt(log(2/alpha) / 2n) (Dvoretzky-Kiefer-Wolfowitz-Massart)   >= nominal
``"ks"``                  eCDF +/- the exact two-sided KS critical value (scipy.stats.kstwo)      exact
``"ld_equal_tailed"``     equal-tailed Beta intervals for every F(Y_(i)), level set exactly       exact
``"ld_highest_density"``  highest-density Beta intervals, level set exactly (narrowest)           exact
========================  ======================================================================  ==========

"Exact" needs continuous scores; with ties the KS and LD bands stay valid but conservative, and a warning
says so. The LD levels are computed exactly (:mod:`simstudy.stats.boundary`) and cached on disk.

Band method contract (plug-ins)
-------------------------------
A researcher's own CDF band joins the ``band_coverage`` and ``band_width`` studies as a function

``f(sorted_scores, confidence, **kwargs) -> (lower, upper)``:

- ``sorted_scores``: float64 array ``(reps, n)``, each row one sample of n scores sorted ascending,
  read-only (copy it before changing it);
- ``confidence``: float in (0, 1), the simultaneous coverage asked for;
- ``lower``, ``upper``: float arrays ``(reps, n)``, one row per sample, or ``(n,)`` for a band that does not
  depend on the data (broadcast to every sample), with values in [0, 1], non-decreasing along the last
  axis and ``lower <= upper``. They mean exactly what :func:`pointwise_bounds` returns for the built-in
  methods: with probability at least ``confidence``, ``lower[i] <= F(Y_(i))`` and ``F(Y_(i)-) <=
  upper[i]`` for every i = 1..n at once;
- the same output for the same input (deterministic).

A study names it by import path (``study.methods=[dkw,my_bands.wilson_band]``) or by a name given with
:func:`simstudy.plugins.register_band_method`; :func:`simstudy.plugins.check_band_method` checks it on a
tiny input when the config is parsed. The built-in methods satisfy the contract: they are
:func:`pointwise_bounds`, one row for every sample. For example, the DKW band through the contract:

>>> def my_dkw(sorted_scores, confidence):
...     n = sorted_scores.shape[-1]
...     i, eps = np.arange(1, n + 1), dkw_epsilon(n, confidence)
...     return np.clip(i / n - eps, 0, 1), np.clip((i - 1) / n + eps, 0, 1)
>>> lower, upper = my_dkw(np.sort(np.random.default_rng(0).random((2, 4))), 0.5)
>>> bool(np.array_equal(lower, pointwise_bounds(4, 0.5, "dkw")[0]))
True

Representation: the bands are step functions that change only at the order statistics ``y[0] <= ... <=
y[n-1]``; ``lower[i]`` and ``upper[i]`` are their (right-continuous) values at ``y[i]``, and
``upper_below`` the upper band left of ``y[0]`` (the lower band there is 0). Below ``low`` the CDF is 0 and
from ``high`` on it is 1.

Comparing two models' bands (Lourie et al.'s evidence heuristic: :func:`evidence`, :func:`leader_summary`,
:func:`evidence_summary`) is in :mod:`simstudy.stats.evidence`, re-exported here; its table
(``evidence_table``, a pandas frame) in :mod:`simstudy.tables`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from simstudy.stats import boundary
from simstudy.stats.evidence import EVIDENCE_LEVELS, evidence, evidence_summary, leader_names, leader_summary

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "KINDS",
    "CDFBands",
    "TuningCurveBands",
    "cdf_bands",
    "tuning_curve_bands",
    "tuning_curve",
    "quantile_thresholds",
    "pointwise_bounds",
    "dkw_epsilon",
    "ks_epsilon",
    "trivial_budget",
    "evidence",
    "EVIDENCE_LEVELS",
    "evidence_summary",
    "leader_names",
    "leader_summary",
]

#: The built-in CDF band methods (see the table above).
METHODS = ("dkw", "ks", "ld_equal_tailed", "ld_highest_density")
#: Each method's name for titles, legends and reports.
METHOD_LABELS = {
    "dkw": "DKW",
    "ks": "Kolmogorov–Smirnov",
    "ld_equal_tailed": "LD equal-tailed",
    "ld_highest_density": "LD highest-density",
}
#: Tuning curves :func:`tuning_curve_bands` bands: the median, any quantile, or the mean of the best of k scores.
KINDS = ("median", "quantile", "mean")


@dataclass(frozen=True)
class CDFBands:
    """Simultaneous confidence bands for a CDF, as step functions on the order statistics.

    Returned by :func:`cdf_bands` (build it through that function: the constructor does not validate). The
    bands hold everywhere at once with probability ``confidence`` (Lourie, Cho & He 2024, §3).

    Parameters
    ----------
    y : ndarray of float64, shape (n,)
        The scores, sorted ascending (score units).
    lower : ndarray of float64, shape (n,)
        The lower band's value on ``[y[i], y[i+1])`` (right-continuous), a probability in [0, 1]:
        ``lower[i] <= F(y[i])``. Non-decreasing.
    upper : ndarray of float64, shape (n,)
        The upper band's value on ``[y[i], y[i+1])``, a probability in [0, 1]; ``upper[-1]`` is 1.
        Non-decreasing, ``lower <= upper``.
    upper_below : float
        The upper band on ``[low, y[0])`` (the lower band there is 0).
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1).
    method : str
        The band method, one of :data:`METHODS`.
    low : float
        Lower bound of the scores' support (may be ``-inf``): the CDF is 0 below it.
    high : float
        Upper bound of the scores' support (may be ``inf``): the CDF is 1 from it on.
    minimize : bool, default False
        Whether lower is better: the CDF is the scores' either way; the tuning curves taken from these bands
        (:func:`tuning_curve_bands`) are then of the minimum.

    See Also
    --------
    cdf_bands : Builds these bands from a sample.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> b = cdf_bands([0.2, 0.4, 0.6, 0.8], 0.5, "dkw", low=0, high=1)
    >>> np.round(b.lower, 4).tolist(), np.round(b.upper, 4).tolist(), round(b.upper_below, 4)
    ([0.0, 0.0837, 0.3337, 0.5837], [0.6663, 0.9163, 1.0, 1.0], 0.4163)
    >>> [np.round(v, 4).tolist() for v in b.at([0.1, 0.5, 1.0])]  # (lower, upper) at three points
    [[0.0, 0.0837, 1.0], [0.4163, 0.9163, 1.0]]
    >>> b.covers(lambda x: x)  # the Uniform(0, 1) CDF lies inside
    True
    """

    y: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    upper_below: float
    confidence: float
    method: str
    low: float
    high: float
    minimize: bool = False

    def at(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The bands' values at arbitrary points.

        Parameters
        ----------
        x : array_like of float
            Points in score units, any shape.

        Returns
        -------
        lower, upper : ndarray of float64, shape of ``x``
            The lower and upper bands at ``x`` (probabilities in [0, 1]).
        """
        x = np.asarray(x, dtype=np.float64)
        j = np.searchsorted(self.y, x, side="right")  # number of scores <= x
        lower = np.where(j > 0, self.lower[np.maximum(j - 1, 0)], 0.0)
        upper = np.where(j > 0, self.upper[np.maximum(j - 1, 0)], self.upper_below)
        lower = np.where(x >= self.high, 1.0, lower)
        upper = np.where(x < self.low, 0.0, np.where(x >= self.high, 1.0, upper))
        return lower, upper

    def covers(self, cdf) -> bool:
        """Whether the bands contain a continuous CDF everywhere.

        For a continuous F it suffices to check both bands at the order statistics and the upper band just
        below the first one and at ``low``: between order statistics the bands are constant and F monotone.

        Parameters
        ----------
        cdf : callable
            The true CDF F, vectorized: ``cdf(array of scores) -> array of probabilities``.

        Returns
        -------
        bool
            True if ``lower <= F <= upper`` everywhere.
        """
        F = np.asarray(cdf(self.y), dtype=np.float64)
        below_ok = self.upper_below >= F[0]  # sup of F on [low, y[0]) is F(y[0]-) = F(y[0])
        return bool(np.all(self.lower <= F) and np.all(F[1:] <= self.upper[:-1]) and below_ok)

    def covers_quantile_curve(self, curve, quantile: float = 0.5) -> bool:
        """Whether the quantile tuning-curve bands contain a true curve for *every* real k > 0.

        ``curve(k)`` is the true curve (vectorized; ``curve(inf)`` is the top of the support), e.g.
        ``F^-1(quantile ** (1 / k))``. The bands are step functions of k; the true curve rises continuously,
        so it suffices to check it at the bands' jump points: at the right end of each step of the upper
        band and the left end of each step of the lower band. (Checking only integer k misses violations.)

        Parameters
        ----------
        curve : callable
            The true quantile tuning curve, vectorized over real budgets k > 0 (score units).
        quantile : float, default 0.5
            The quantile of the best score the curve is of (0.5: the median tuning curve).

        Returns
        -------
        bool
            True if the band from these CDF bands contains ``curve`` at every k > 0.
        """
        points = np.concatenate(([self.low], self.y, [self.high]))
        for cdf, is_upper in (
            ((np.concatenate(([0.0], self.lower, [1.0]))), True),
            (np.concatenate(([self.upper_below], self.upper, [1.0])), False),
        ):
            thr = quantile_thresholds(cdf, quantile)
            starts = np.concatenate(([0.0], thr[:-1]))
            step = thr > starts  # steps of positive length: the band equals points[j] on (starts[j], thr[j]]
            if is_upper:
                if np.any(curve(thr[step]) > points[step]):
                    return False
            elif np.any(curve(starts[step][1:]) < points[step][1:]):  # the first step's value is low
                return False
        return True


@dataclass(frozen=True)
class TuningCurveBands:
    """A tuning curve's point estimate and confidence bands at budgets ``ks``.

    Returned by :func:`tuning_curve_bands` (the constructor does not validate).

    Parameters
    ----------
    ks : ndarray of float64, shape (m,)
        Budgets (real, > 0): numbers of random-search iterations.
    point : ndarray of float64, shape (m,)
        The tuning curve of the empirical CDF (score units).
    lower : ndarray of float64, shape (m,)
        The lower simultaneous confidence band (score units); ``low`` (possibly ``-inf``) where the data
        cannot bound the curve.
    upper : ndarray of float64, shape (m,)
        The upper band (score units); ``high`` (possibly ``inf``) where the data cannot bound the curve.
    kind : {"median", "quantile", "mean"}
        Which tuning curve (:data:`KINDS`).
    quantile : float
        The quantile of the best score, in (0, 1) (0.5 for the median; NaN for the mean).
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1).
    method : str
        The CDF band method, one of :data:`METHODS`.
    cdf : CDFBands
        The CDF bands the curve bands derive from.
    minimize : bool, default False
        Whether the curve is of the minimum (lower is better): it then falls with k, and a model is ahead
        where its curve is lower (:func:`~simstudy.stats.evidence.evidence`).

    See Also
    --------
    tuning_curve_bands : Builds these bands from a sample.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> t = tuning_curve_bands([0.2, 0.4, 0.6, 0.8], 0.5, method="dkw", ks=[1, 2], low=0, high=1)
    >>> t.kind, t.quantile, t.point.tolist(), t.lower.tolist(), t.upper.tolist()
    ('median', 0.5, [0.4, 0.6], [0.2, 0.4], [0.8, 1.0])
    """

    ks: np.ndarray
    point: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    kind: str
    quantile: float
    confidence: float
    method: str
    cdf: CDFBands
    minimize: bool = False


def _scores_iv(scores, low: float, high: float, *, min_n: int = 2) -> np.ndarray:
    # Only ever called from _cdf_bands, which only public functions call: hence stacklevel=4 on the warning
    # (_scores_iv, _cdf_bands, the public function, then the user's line).
    y = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1:  # flattening a batch would pool several samples into one, silently
        raise ValueError(
            f"scores must be one sample (a 1-d array), got shape {y.shape}: pass one sample at a time, e.g. scores[i]"
        )
    if y.size < min_n:
        raise ValueError(f"need at least {min_n} scores, got {y.size}")
    if not np.all(np.isfinite(y)):
        bad = y[~np.isfinite(y)][0]
        raise ValueError(f"scores must be finite numbers, got {bad} at index {int(np.flatnonzero(~np.isfinite(y))[0])}")
    if np.isnan(low) or np.isnan(high) or not low < high:
        raise ValueError(f"need low < high, got low={low}, high={high}")
    outside = (y < low) | (y > high)
    if np.any(outside):
        raise ValueError(f"score {y[outside][0]} is outside the support [low, high] = [{low}, {high}]")
    y = np.sort(y)
    if np.any(np.diff(y) == 0):
        warnings.warn(
            "scores contain ties: the KS and LD bands' exact coverage assumes continuous scores; with "
            "ties they remain valid but conservative",
            stacklevel=4,
        )
    return y


def _confidence_iv(confidence) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _method_iv(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown band method {method!r}; choose one of: {', '.join(METHODS)}")
    return method


def dkw_epsilon(n: int, confidence: float) -> float:
    """Half-width of the DKW band: ``sqrt(log(2 / alpha) / (2 n))`` (Massart's constant).

    By the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's tight constant, ``P(sup |F_n - F| > eps)
    <= 2 exp(-2 n eps^2)``; this is the ``eps`` that makes the right side ``alpha = 1 - confidence``.

    Parameters
    ----------
    n : int
        Sample size (number of scores), >= 1.
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1). Not validated here.

    Returns
    -------
    float
        The half-width, in CDF units (probability); it may exceed 1 for small ``n``.

    See Also
    --------
    ks_epsilon : The exact (narrower) KS half-width.

    References
    ----------
    Massart, P. (1990). The tight constant in the Dvoretzky-Kiefer-Wolfowitz inequality. Annals of
    Probability 18(3), 1269-1283.

    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> round(dkw_epsilon(100, 0.95), 4)  # sqrt(log(40) / 200)
    0.1358
    """
    return float(np.sqrt(np.log(2.0 / (1.0 - confidence)) / (2.0 * n)))


@lru_cache(maxsize=512)
def ks_epsilon(n: int, confidence: float) -> float:
    """Half-width of the exact KS band: the ``confidence`` quantile of the two-sided KS statistic.

    ``P(sup |F_n - F| <= eps) = confidence`` exactly for continuous F (``scipy.stats.kstwo``). Cached.

    Parameters
    ----------
    n : int
        Sample size (number of scores), >= 1.
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1). Not validated here.

    Returns
    -------
    float
        The half-width, in CDF units (probability in (0, 1]).

    See Also
    --------
    dkw_epsilon : The conservative DKW half-width (never narrower).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> round(ks_epsilon(100, 0.95), 4), round(dkw_epsilon(100, 0.95), 4)
    (0.134, 0.1358)
    """
    from scipy import stats

    return float(stats.kstwo.ppf(confidence, n))


def pointwise_bounds(n: int, confidence: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Bounds ``l_i <= F(Y_(i)) <= u_i``, i = 1..n, holding simultaneously with probability ``confidence``.

    They depend only on n, the confidence and the method, never on the data (the bands of any sample are
    these bounds placed at its order statistics). Precisely: ``lower[i] <= F(Y_(i))`` and ``F(Y_(i)-) <=
    upper[i]``, the meaning the plug-in contract (module docstring) asks of every band method.

    Parameters
    ----------
    n : int
        Sample size (number of scores), >= 1.
    confidence : float
        Simultaneous coverage ``1 - alpha``, in (0, 1). Not validated here (:func:`cdf_bands` does).
    method : str
        One of :data:`METHODS`. The LD methods are solved exactly and cached on disk
        (:func:`simstudy.stats.boundary.ld_intervals`).

    Returns
    -------
    lower, upper : ndarray of float64, shape (n,)
        Non-decreasing probabilities in [0, 1] for the 1st, ..., n-th order statistic; ``lower <= upper``.
        Read-only for the LD methods.

    Raises
    ------
    ValueError
        If `method` is not one of :data:`METHODS` (the message lists the LD kinds).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    With DKW, ``lower = i/n - eps`` and ``upper = (i-1)/n + eps`` clipped to [0, 1]:

    >>> lower, upper = pointwise_bounds(5, 0.8, "dkw")
    >>> np.round(lower, 4).tolist(), np.round(upper, 4).tolist()
    ([0.0, 0.0, 0.1201, 0.3201, 0.5201], [0.4799, 0.6799, 0.8799, 1.0, 1.0])
    >>> lower, upper = pointwise_bounds(5, 0.8, "ld_highest_density")  # narrower at the ends
    >>> np.round(lower, 4).tolist(), np.round(upper, 4).tolist()
    ([0.0, 0.0276, 0.1511, 0.337, 0.5584], [0.4416, 0.663, 0.8489, 0.9724, 1.0])
    """
    if method in ("dkw", "ks"):
        eps = dkw_epsilon(n, confidence) if method == "dkw" else ks_epsilon(n, confidence)
        i = np.arange(1, n + 1)
        # |F_n - F| <= eps everywhere <=> F(Y_(i)) >= i/n - eps and F(Y_(i)-) <= (i-1)/n + eps.
        return np.clip(i / n - eps, 0.0, 1.0), np.clip((i - 1) / n + eps, 0.0, 1.0)
    ld = boundary.ld_intervals(n, confidence, method.removeprefix("ld_"))
    return ld.low, ld.high


def _trivial_budget_iv(n, confidence, method, quantile) -> tuple[int, float, str, float]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (the sample size) must be an integer >= 1, got {n!r}")
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be strictly between 0 and 1, got {quantile!r}")
    return int(n), _confidence_iv(confidence), _method_iv(method), float(quantile)


def trivial_budget(n: int, confidence: float, method: str, quantile: float = 0.5) -> float:
    """The budget beyond which the upper quantile tuning-curve band is trivial: ``log(q) / log(l_n)``.

    The upper band equals the top of the support (``high``: the data no longer bound the curve) for every
    k > ``log(quantile) / log(l_n)``, where ``l_n`` is the CDF band's lower bound at the largest score. It
    depends only on n, the confidence and the method, never on the data (Lourie et al. §5.5).

    Parameters
    ----------
    n : int
        Sample size (number of scores), >= 1.
    confidence : float
        Simultaneous coverage, in (0, 1).
    method : str
        One of :data:`METHODS`.
    quantile : float, default 0.5
        The quantile of the best score, in (0, 1) (0.5: the median tuning curve).

    Returns
    -------
    float
        The budget k* (iterations; real): the band is informative for k <= k* and trivial beyond. 0 when the
        band is trivial for every k (``l_n = 0``).

    Raises
    ------
    ValueError
        If n is not an integer >= 1, or confidence, method or quantile is invalid.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> round(trivial_budget(48, 0.8, "ld_highest_density"), 2)
    8.15
    >>> round(trivial_budget(5, 0.8, "dkw"), 4)  # l_n = 1 - eps, about 0.52: informative only up to k = 1.06
    1.0604
    """
    n, confidence, method, quantile = _trivial_budget_iv(n, confidence, method, quantile)
    lower_at_max = float(pointwise_bounds(n, confidence, method)[0][-1])
    if lower_at_max <= 0:
        return 0.0
    return float(np.log(quantile) / np.log(lower_at_max))


def cdf_bands(
    scores,
    confidence: float = 0.95,
    method: str = "ld_highest_density",
    *,
    low: float = -np.inf,
    high: float = np.inf,
    minimize: bool = False,
) -> CDFBands:
    """Simultaneous confidence bands for the CDF of the scores.

    With probability ``confidence`` the bands contain the scores' CDF F everywhere at once; the LD bands
    (Learned-Miller & DeStefano, level set exactly) are the narrowest of the four (Lourie, Cho & He 2024).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        One sample: at least two finite scores (score units), all within [low, high]; any order.
    confidence : float, default 0.95
        Simultaneous coverage ``1 - alpha``, in (0, 1).
    method : {"ld_highest_density", "ld_equal_tailed", "ks", "dkw"}, default "ld_highest_density"
        The band (module docstring's table, :data:`METHODS`).
    low : float, keyword-only, default -inf
        Known lower bound of the scores' support (e.g. 0 for accuracy).
    high : float, keyword-only, default inf
        Known upper bound of the scores' support (e.g. 1 for accuracy).
    minimize : bool, keyword-only, default False
        Whether lower is better (losses). A CDF does not depend on it: the bands are the scores' CDF's either
        way (the same numbers), recorded as bands whose best score is the minimum, as
        :func:`tuning_curve_bands` takes them.

    Returns
    -------
    CDFBands
        The sorted scores and the bands' values on them, with ``confidence``, ``method``, ``low``, ``high``
        and ``minimize``.

    Raises
    ------
    TypeError
        If `minimize` is not a bool.
    ValueError
        If `scores` is not 1-d, has fewer than 2 values, holds a NaN or infinity or a value outside [low,
        high]; if not ``low < high``; if `confidence` is not strictly between 0 and 1; or on an unknown
        `method`.

    Warns
    -----
    UserWarning
        If the scores contain ties (the KS and LD bands are then conservative, not exact).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Learned-Miller, E., & DeStefano, J. (2008). A probabilistic upper bound on differential entropy. IEEE
    Transactions on Information Theory 54(11), 5223-5230.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> b = cdf_bands(rng.uniform(size=20), 0.9, "ks", low=0, high=1)
    >>> b.lower.shape, round(b.upper_below, 4), b.covers(lambda x: x)
    ((20,), 0.2647, True)
    >>> cdf_bands([[0.1, 0.2, 0.3]])
    Traceback (most recent call last):
        ...
    ValueError: scores must be one sample (a 1-d array), got shape (1, 3): pass one sample at a time, e.g. scores[i]

    Losses, lower is better: the same CDF, so the same bands, now of a minimized score.

    >>> m = cdf_bands(rng.uniform(size=20), 0.9, "ks", low=0, high=1, minimize=True)
    >>> m.minimize, m.upper_below == b.upper_below
    (True, True)
    """
    return _cdf_bands(scores, confidence, method, low, high, minimize)


def _cdf_bands(scores, confidence, method, low, high, minimize=False) -> CDFBands:
    """:func:`cdf_bands`, called directly by each public function so that a warning points at its caller."""
    if not isinstance(minimize, (bool, np.bool_)):
        raise TypeError(f"minimize must be True or False, got {minimize!r}")
    confidence, method = _confidence_iv(confidence), _method_iv(method)
    low, high = float(low), float(high)
    y = _scores_iv(scores, low, high)
    n = y.size
    l_i, u_i = pointwise_bounds(n, confidence, method)
    # Monotonicity: the lower bound at Y_(i) holds on [Y_(i), Y_(i+1)), the upper bound at Y_(i+1) holds
    # on [Y_(i), Y_(i+1)); past the last score F <= 1.
    upper = np.append(u_i[1:], 1.0)
    lower = np.asarray(l_i, dtype=np.float64)
    return CDFBands(y, lower, upper, float(u_i[0]), confidence, method, low, high, bool(minimize))


def tuning_curve(
    points: np.ndarray, cdf: np.ndarray, ks, *, kind: str = "median", quantile: float = 0.5, minimize: bool = False
):
    """The tuning curve of a step CDF: the quantile or mean of the best of k draws, for each k.

    The best is the maximum, or the minimum with `minimize`. A quantile is the left-continuous inverse of the
    best's CDF, ``min{points[j] : quantile <= P(best <= points[j])}``, either way (opda's convention): where
    the probability falls on an atom, the q-quantile of the minimum is not minus the (1 - q)-quantile of the
    maximum of the negated scores.

    Parameters
    ----------
    points : ndarray of float, shape (m,)
        Ascending support points in score units (may start at -inf and end at +inf).
    cdf : ndarray of float, shape (m,)
        Non-decreasing CDF values (probabilities) at ``points``; the last must be 1. Not validated.
    ks : array_like of float
        Budgets (random-search iterations), real and > 0; any shape.
    kind : {"median", "quantile", "mean"}, keyword-only, default "median"
        ``"quantile"``: ``min{points[j] : quantile <= cdf[j] ** k}`` (Lourie et al. Eq. 5); note that
        ``"median"`` here reads `quantile` as given, so pass ``quantile=0.5`` (the default) with it.
        ``"mean"``: ``sum_j points[j] (cdf[j]^k - cdf[j-1]^k)`` (Eq. 4); points without mass are skipped.
    quantile : float, keyword-only, default 0.5
        The quantile of the best of k draws, in (0, 1); ignored for ``kind="mean"``.
    minimize : bool, keyword-only, default False
        Whether the best is the minimum (lower is better: a loss). Its CDF is ``1 - (1 - cdf[j]) ** k``, so
        the quantile curve is ``min{points[j] : quantile <= 1 - (1 - cdf[j]) ** k}`` and the mean
        ``sum_j points[j] ((1 - cdf[j-1])^k - (1 - cdf[j])^k)``.

    Returns
    -------
    ndarray of float64, shape of ``ks``
        The curve at each budget, in score units (a support point for the quantile curves).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    Scores 1, 2, 3 with probabilities 1/4, 1/2, 1/4; the median of the best of 2 is 2 (``0.75 ** 2 >=
    0.5``), the mean of the best of 2 is ``1/16 + 2 (9/16 - 1/16) + 3 (1 - 9/16) = 2.375``:

    >>> points, cdf = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 0.25, 0.75, 1.0])
    >>> tuning_curve(points, cdf, [1, 2, 3]).tolist()
    [2.0, 2.0, 3.0]
    >>> tuning_curve(points, cdf, [1, 2, 3], kind="mean").tolist()
    [2.0, 2.375, 2.5625]

    The minimum of k: its median is 1 from k = 3 on (``1 - 0.75 ** 3 >= 0.5``), its mean at k = 2 is
    ``1 + 0.75 ** 2 + 0.25 ** 2``. Where the probability falls exactly on a jump of the CDF, the quantile is
    the lower score: of four equally likely scores 0.1..0.4 the median of one is 0.2 (not 0.3):

    >>> tuning_curve(points, cdf, [1, 2, 3], minimize=True).tolist()
    [2.0, 2.0, 1.0]
    >>> tuning_curve(points, cdf, [1, 2], kind="mean", minimize=True).tolist()
    [2.0, 1.625]
    >>> tuning_curve(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.25, 0.5, 0.75, 1.0]), [1], minimize=True)
    array([0.2])
    """
    ks = np.asarray(ks, dtype=np.float64)
    if minimize:
        return _min_curve(points, cdf, ks.ravel(), kind, quantile).reshape(ks.shape)
    if kind == "mean":
        return _mean_curve(points, cdf, ks.ravel()).reshape(ks.shape)
    # cdf[j] ** k >= q  <=>  k <= log(q) / log(cdf[j]): a threshold that rises with j.
    threshold = quantile_thresholds(cdf, quantile)
    return points[np.minimum(np.searchsorted(threshold, ks, side="left"), points.size - 1)]


# Terms G^k below exp(-_CUTOFF) times the score range change the mean by less than 1e-17: skipped.
_CUTOFF = 40.0


def _mean_curve(points: np.ndarray, cdf: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """``sum_j points[j] (cdf[j]^k - cdf[j-1]^k)`` for each k, as ``z_last - sum_j (z_{j+1} - z_j) G_j^k``.

    Only points with mass count (so an infinite bound without mass adds nothing). For each block of sorted
    budgets only the CDF values whose k-th power is not negligible are raised, which at n = 1,024 and
    k = 1..1,024 skips about three quarters of the terms.
    """
    has_mass = np.diff(cdf, prepend=0.0) > 0
    z, G = points[has_mass], cdf[has_mass]
    if not np.all(np.isfinite(z)):
        return np.full(ks.shape, np.inf if z[-1] == np.inf else -np.inf)
    dz, log_g = np.diff(z), np.log(G[:-1])
    order = np.argsort(ks)
    out = np.empty(ks.size)
    for start in range(0, ks.size, 64):
        block = ks[order[start : start + 64]]
        j0 = np.searchsorted(log_g, -_CUTOFF / block[0])
        out[order[start : start + 64]] = z[-1] - np.exp(np.multiply.outer(block, log_g[j0:])) @ dz[j0:]
    return out


def _min_curve(points: np.ndarray, cdf: np.ndarray, ks: np.ndarray, kind: str, quantile: float) -> np.ndarray:
    """:func:`tuning_curve` of the minimum of k draws at budgets ``ks`` (1-D)."""
    if kind == "mean":
        # E[min] = z_0 + sum_j (z_{j+1} - z_j) P(min > z_j), P(min > z_j) = (1 - G_j)^k, over the points with mass.
        has_mass = np.diff(cdf, prepend=0.0) > 0
        z, G = points[has_mass], cdf[has_mass]
        if not np.all(np.isfinite(z)):  # mass at -inf makes the minimum -inf with positive probability
            return np.full(ks.shape, -np.inf if z[0] == -np.inf else np.inf)
        log_s = np.log1p(-G[:-1])  # G < 1 before the last point with mass
        out = np.empty(ks.size)
        for start in range(0, ks.size, 64):  # blocks bound the (budgets x points) matrix
            block = ks[start : start + 64]
            out[start : start + 64] = z[0] + np.exp(np.multiply.outer(block, log_s)) @ np.diff(z)
        return out
    # quantile <= 1 - (1 - G_j)^k  <=>  k >= log(1 - quantile) / log(1 - G_j): a threshold that falls with j
    # (0 where G = 1, infinite where G = 0); equality (the probability on an atom) takes the atom, as opda does.
    with np.errstate(divide="ignore"):
        thr = np.where(cdf >= 1, 0.0, np.where(cdf <= 0, np.inf, np.log1p(-quantile) / np.log1p(-cdf)))
    thr = np.minimum.accumulate(thr)  # non-increasing against rounding
    first = thr.size - np.searchsorted(thr[::-1], ks, side="right")  # the first j with thr[j] <= k
    return points[np.minimum(first, points.size - 1)]


def quantile_thresholds(cdf: np.ndarray, quantile: float) -> np.ndarray:
    """For each value G of a non-decreasing step CDF, the largest budget k with ``G ** k >= quantile``.

    ``log(quantile) / log(G)`` (infinite where G = 1, zero where G = 0), made non-decreasing against
    rounding. A quantile tuning curve of that CDF equals the j-th support point exactly for k in
    ``(threshold[j-1], threshold[j]]``: these are the curve's jump points.

    Parameters
    ----------
    cdf : ndarray of float, shape (m,) or (reps, m)
        Non-decreasing CDF values (probabilities in [0, 1]); one CDF per row, each treated on its own along
        the last axis.
    quantile : float
        The quantile of the best of k draws, in (0, 1) (0.5: median).

    Returns
    -------
    ndarray of float64, shape of ``cdf``
        Budgets (real, >= 0; ``inf`` where G = 1), non-decreasing along the last axis.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> np.round(quantile_thresholds(np.array([0.0, 0.25, 0.5, 0.75, 1.0]), 0.5), 4).tolist()
    [0.0, 0.5, 1.0, 2.4094, inf]
    """
    with np.errstate(divide="ignore"):
        thr = np.where(cdf >= 1, np.inf, np.where(cdf <= 0, 0.0, np.log(quantile) / np.log(cdf)))
    return np.maximum.accumulate(thr, axis=-1)


def searchsorted_rows(a: np.ndarray, v) -> np.ndarray:
    """``np.searchsorted(a[r], v, side="left")`` for every row r of ``a`` at once, without a loop over rows.

    Parameters
    ----------
    a : ndarray, shape (m,) or (reps, m)
        Rows sorted ascending (infinite values allowed, no NaN).
    v : array_like, shape (K,)
        Values to place (no NaN).

    Returns
    -------
    ndarray of int64, shape (K,) or (reps, K)
        For each row and value, the number of the row's entries below the value; a 1-d ``a`` gives exactly
        ``np.searchsorted(a, v, side="left")``.

    Examples
    --------
    >>> searchsorted_rows(np.array([[0.0, 1.5, np.inf], [2.0, 2.5, 3.0]]), [1.0, 2.0, 3.0])
    array([[1, 2, 2],
           [0, 0, 2]])
    """
    a, v = np.asarray(a, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if a.ndim == 1:
        return np.searchsorted(a, v, side="left")
    # Replace every value by its rank among all values (ranks keep order and ties, and are finite), then
    # shift row r by r * (number of ranks): the rows laid end to end are one sorted array, searched once.
    grid = np.unique(np.concatenate((a.ravel(), v.ravel())))
    a_rank, v_rank = np.searchsorted(grid, a), np.searchsorted(grid, v)
    shift = np.arange(a.shape[0])[:, None] * (grid.size + 1)
    found = np.searchsorted((a_rank + shift).ravel(), (v_rank[None, :] + shift).ravel(), side="left")
    return found.reshape(a.shape[0], v.size) - np.arange(a.shape[0])[:, None] * a.shape[1]


def builtin_only(methods, key: str) -> tuple[str, ...]:
    """Refuse plug-in band methods where only the built-in ones are supported.

    Parameters
    ----------
    methods : str or sequence of str
        Band methods named by a config.
    key : str
        The config key that named them (``study.methods``), for the message.

    Returns
    -------
    tuple of str
        The methods, all in :data:`METHODS`.

    Raises
    ------
    ValueError
        One line naming the key and the first method that is not built in.

    Examples
    --------
    >>> builtin_only(["dkw", "my_bands.wilson_band"], "study.methods")
    Traceback (most recent call last):
    ...
    ValueError: study.methods: plug-in band methods (my_bands.wilson_band) join the band_coverage and band_width studies only; here choose from dkw, ks, ld_equal_tailed, ld_highest_density
    """
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    for method in methods:
        if method not in METHODS:
            raise ValueError(
                f"{key}: plug-in band methods ({method}) join the band_coverage and band_width studies "
                f"only; here choose from {', '.join(METHODS)}"
            )
    return methods


def _curve_iv(kind: str, quantile: float, low: float, high: float, minimize) -> float:
    if not isinstance(minimize, (bool, np.bool_)):
        raise TypeError(f"minimize must be True or False, got {minimize!r}")
    if kind not in KINDS:
        raise ValueError(f"unknown tuning-curve kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if kind == "median":
        return 0.5
    if kind == "mean":
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(
                "the mean tuning curve's band is vacuous without finite bounds on the scores: its "
                "lower limit is -inf unless low is finite and its upper limit +inf unless high is; "
                "pass low= and high= (e.g. 0 and 1 for accuracy) or use kind='median'"
            )
        return np.nan
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be strictly between 0 and 1, got {quantile!r}")
    return float(quantile)


def tuning_curve_bands(
    scores,
    confidence: float = 0.95,
    kind: str = "median",
    method: str = "ld_highest_density",
    *,
    ks=None,
    quantile: float = 0.5,
    low: float = -np.inf,
    high: float = np.inf,
    minimize: bool = False,
) -> TuningCurveBands:
    """Simultaneous confidence bands for the median (or any quantile) or mean tuning curve.

    The tuning curve at budget k is the median (quantile, mean) of the best score of k random-search
    iterations. Its bands are the curves of the CDF bands of :func:`cdf_bands` (the upper CDF band gives the
    lower curve band and vice versa), so they hold for every k at once with probability at least
    ``confidence`` (Lourie, Cho & He 2024, Props. 1-2). With `minimize` the best is the minimum, and the
    curves are those of the same CDF bands (:func:`tuning_curve`, the left-continuous inverse, as
    :func:`simstudy.stats.truth.quantile_tuning_curve` and opda take it): the upper CDF band still gives the
    lower curve band, since a larger CDF has the smaller quantiles of the minimum too.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Scores of n random-search iterations (one sample, score units), at least 2.
    confidence : float, default 0.95
        Simultaneous coverage ``1 - alpha``, in (0, 1).
    kind : {"median", "quantile", "mean"}, default "median"
        Median: exact coverage for continuous scores (Prop. 1). Mean: conservative, needs finite low/high.
    method : str, default "ld_highest_density"
        The CDF band (:data:`METHODS`).
    ks : array_like of float, keyword-only, optional
        Budgets (iterations; real, finite, > 0). Default ``1..n``.
    quantile : float, keyword-only, default 0.5
        The quantile of the best score, in (0, 1), for ``kind="quantile"``.
    low : float, keyword-only, default -inf
        Known lower bound of the scores (e.g. 0 for accuracy).
    high : float, keyword-only, default inf
        Known upper bound of the scores (e.g. 1 for accuracy).
    minimize : bool, keyword-only, default False
        Whether lower is better (losses): the curve is of the minimum of k scores.

    Returns
    -------
    TuningCurveBands
        ``point``, ``lower`` and ``upper`` of shape ``(len(ks),)`` in score units, with the ``ks``, the
        ``kind``, ``quantile``, ``confidence``, ``method``, the underlying ``cdf`` bands and ``minimize``.

    Raises
    ------
    TypeError
        If `minimize` is not a bool.
    ValueError
        On an unknown `kind`; `quantile` not in (0, 1) for ``kind="quantile"``; ``kind="mean"`` without
        finite `low` and `high`; `ks` empty, non-finite or not > 0; and on the inputs :func:`cdf_bands`
        rejects (scores, confidence, method, bounds).

    Warns
    -----
    UserWarning
        If the scores contain ties (the bands are then conservative).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = tuning_curve_bands(rng.uniform(size=20), 0.9, ks=[1, 2, 4, 8], low=0, high=1)
    >>> np.round(t.point, 4).tolist()
    [0.5436, 0.8133, 0.8574, 0.9128]
    >>> np.round(t.lower, 4).tolist(), np.round(t.upper, 4).tolist()  # the true 0.5 ** (1 / k) lies inside
    ([0.1757, 0.5415, 0.637, 0.7297], [0.8159, 0.9128, 1.0, 1.0])
    >>> tuning_curve_bands([0.2, 0.5, 0.9], kind="mean")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: the mean tuning curve's band is vacuous without finite bounds on the scores: ...

    Losses, lower is better: the median of the minimum of k falls with k (the true ``1 - 0.5 ** (1 / k)``
    for uniform losses lies inside):

    >>> t = tuning_curve_bands(rng.uniform(size=20), 0.9, ks=[1, 2, 4, 8], low=0, high=1, minimize=True)
    >>> np.round(t.point, 4).tolist(), np.round(t.lower, 4).tolist(), np.round(t.upper, 4).tolist()
    ([0.6154, 0.3837, 0.3102, 0.1243], [0.3578, 0.1243, 0.0, 0.0], [0.7215, 0.6505, 0.5254, 0.3889])
    """
    quantile = _curve_iv(kind, quantile, float(low), float(high), minimize)
    bands = _cdf_bands(scores, confidence, method, low, high, minimize)
    n = bands.y.size
    ks = np.arange(1, n + 1, dtype=np.float64) if ks is None else np.asarray(ks, dtype=np.float64)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise ValueError("ks must be finite budgets > 0")
    points = np.concatenate(([bands.low], bands.y, [bands.high]))
    ecdf = np.concatenate(([0.0], np.arange(1, n + 1) / n, [1.0]))
    # The upper CDF band bounds the curve from below and the lower CDF band from above (Lourie et al. A).
    upper_cdf = np.concatenate(([bands.upper_below], bands.upper, [1.0]))
    lower_cdf = np.concatenate(([0.0], bands.lower, [1.0]))

    def curve(cdf):
        kind_ = "mean" if kind == "mean" else "quantile"
        return tuning_curve(points, cdf, ks, kind=kind_, quantile=quantile, minimize=bands.minimize)

    return TuningCurveBands(
        ks=ks,
        point=curve(ecdf),
        lower=curve(upper_cdf),
        upper=curve(lower_cdf),
        kind=kind,
        quantile=0.5 if kind == "median" else quantile,
        confidence=bands.confidence,
        method=bands.method,
        cdf=bands,
        minimize=bands.minimize,
    )
