"""The precision stopping rule's planning maths: from a pilot's Monte Carlo errors to the replicates each cell needs.

``study.precision`` asks every reported measure of a cell for a Monte Carlo standard error (MCSE) at most a
target; ``study.reps`` replicates are the pilot and ``study.max_reps`` the cap. The rule is a two-stage design
(Stein 1945): the pilot's MCSE of each measure, ``mcse0`` from ``n0`` replicates, plans the cell's total

    N = ceil(n0 * (mcse0 / target)^2 * kappa),

since an MCSE shrinks as ``1/sqrt(N)``; ``kappa`` inflates the plan for the pilot's own uncertainty about the
variance: ``kappa = (n0 - 1) / chi2_{1 - confidence}(n0 - 1)``, the ratio of the one-sided upper
``confidence`` bound on a variance estimated from ``n0`` normal replicates to the estimate, so that the plan
reaches the target with probability about ``confidence``; where the pilot knows the kurtosis of a row's
replicates, ``kappa`` uses the variance's effective degrees of freedom instead (:func:`inflation`), which is
larger for heavier tails. A cell takes the largest N of its targeted measures,
rounded up to whole chunks and clipped to ``[n0, max_reps]`` (the pilot's chunks are reused). A third stage, the
top-up, plans again by the same bounds from the N replicates (``reps_needed`` with their count as ``n0``) and
runs the cell on where that needs more: a pilot underestimates a heavy tail, a planned stage of several pilots
less so, though still too much at 95% (a row whose kurtosis shows a heavy tail, :func:`heavy_tailed`, is
re-planned at 99%; :mod:`simstudy.studies.precision` runs the stages). The final estimates use every replicate.

Why the final estimate is not biased by the rule: N is a function of the pilot only, and the final mean is
``(n0 mean0 + (N - n0) mean1) / N`` with ``mean1`` independent of the pilot, so its bias is
``Cov(n0 / N, mean0)``. With absolute targets N depends on the pilot through its MCSE (a variance) alone: for
normal replicates the sample mean and variance are independent, the covariance is zero and the design is Stein's
(exactly unbiased); in general ``|bias| <= sd(mean0) sd(n0 / N)``, of the order of the pilot's MCSE times the
relative spread of the plan, far below the target for pilots of hundreds of replicates; the top-up's
dependence on the planned stage's variance is of the same kind and order. A relative target
(``1%``) also plans from the pilot's estimate, which adds a dependence of the same order. ``tests/studies/test_precision.py``
checks the coverage of the final intervals on exact truths.

A rate (a coverage, a rejection or a disagreement rate: the mean of 0/1 replicates) is planned differently,
since its pilot variance ``p (1 - p)`` is far from a normal variance's chi-square law near 0 or 1 (rates of 0.02,
0.1 and 0.98 met the chi-square plan in only 60-82% of runs, and a pilot with no event has MCSE 0): its plan is
``N = ceil(n0 * U / (r * target^2))`` with ``U`` the exact one-sided ``confidence`` upper bound on ``p (1 - p)``
from the pilot's count (:func:`rate_variance_bound`; ``r`` the row's trials in the pilot), so that the plan
reaches the target with probability at least ``confidence`` for every ``p``, with no normal approximation, and a
pilot without an event still plans from ``U > 0``.

===========================  ==========================================================================
:func:`inflation`            kappa, the chi-square inflation of a plan from a pilot of n0 replicates (and a kurtosis)
:func:`heavy_tailed`         whether a kurtosis is too large for a normal sample of n replicates (the top-up's 99%)
:func:`rate_variance_bound`  the exact upper confidence bound on a rate's variance p (1 - p) from its count
:func:`absolute_targets`     each row's absolute MCSE target from ``study.precision`` (NaN: untargeted)
:func:`reps_needed`          each row's replicates needed, in whole chunks, capped; and whether capped
===========================  ==========================================================================

References
----------
Stein, C. (1945). A two-sample test for a linear hypothesis whose power is independent of the variance. *The
Annals of Mathematical Statistics*, 16(3), 243-258.
"""

from __future__ import annotations

import numpy as np

from simstudy.schema import ConfigError

__all__ = ["inflation", "heavy_tailed", "rate_variance_bound", "absolute_targets", "reps_needed"]


def inflation(dof, confidence: float = 0.95, kurtosis=3.0) -> np.ndarray:
    """The inflation ``kappa`` of a plan made from a variance with ``dof`` degrees of freedom.

    ``kappa = nu / chi2_{1 - confidence}(nu)``: the one-sided upper ``confidence`` bound on a variance, as a
    multiple of its estimate, with ``nu`` the variance's effective degrees of freedom (Satterthwaite): the
    estimate of ``n = dof + 1`` replicates of kurtosis ``k`` has relative variance ``(k - (n-3)/(n-1)) / n``,
    that of a scaled chi-square with ``nu = 2 n / (k - (n-3)/(n-1))`` degrees of freedom. For normal replicates
    (``k = 3``) ``nu = dof`` exactly, the classical bound; a heavier tail has fewer effective degrees of freedom
    and a larger ``kappa``. A plan ``n0 (mcse0 / target)^2 kappa`` then reaches the target with probability
    about ``confidence``, as long as the pilot's kurtosis is not far below the truth (a tail the pilot did not
    see is not in it). Kurtosis below 3 (or NaN: unknown) counts as 3, so the bound is never below the normal one.

    Parameters
    ----------
    dof : int or array_like of int
        Degrees of freedom of the pilot's variance, ``n0 - 1`` for ``n0`` replicates.
    confidence : float, default 0.95
        In (0, 1).
    kurtosis : float or array_like of float, default 3.0
        The pilot's kurtosis of each row's replicates (``m4 / m2^2``, 3 for a normal law); broadcast with
        ``dof``.

    Returns
    -------
    numpy.ndarray
        Float array of the broadcast shape, each >= 1; NaN where ``dof < 1``.

    Examples
    --------
    >>> print(np.round(inflation([9, 99, 999]), 4))
    [2.7067 1.2849 1.0781]
    >>> print(np.round(inflation(999, kurtosis=[3.0, 9.0, 30.0]), 4))  # heavier tails, fewer effective dof
    [1.0781 1.1661 1.3563]
    """
    from scipy import special

    dof, kurtosis = np.broadcast_arrays(np.asarray(dof, dtype=float), np.asarray(kurtosis, dtype=float))
    n = dof + 1
    k = np.where(np.isnan(kurtosis), 3.0, np.maximum(kurtosis, 3.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        nu = np.where(k == 3.0, dof, 2 * n / (k - (n - 3) / (n - 1)))  # k = 3: exactly dof, not by rounding
    # One quantile per distinct nu: a summary's rows share their pilot's few replicate counts.
    values, inverse = np.unique(nu, return_inverse=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (values / special.chdtri(np.where(values > 0, values, 1.0), confidence))[inverse.reshape(nu.shape)]
    return np.where(dof >= 1, kappa, np.nan)


def heavy_tailed(kurtosis, reps) -> np.ndarray:
    """Whether a sample kurtosis shows a tail heavier than normal: above ``3 + 2 sqrt(24 / reps)``.

    ``sqrt(24 / n)`` is the standard error of the kurtosis of ``n`` normal replicates, so a normal row is above
    the threshold in about 3% of samples (measured for n of 100 to 1,000: the sample kurtosis is right-skewed), and
    a heavy tail's row nearly always (a lognormal's with sigma 0.75, kurtosis 26.5: in 96% of samples of 100, all
    of 400, whose kurtosis is 7 to 41 between its 5th and 95th percentiles). The rule's top-up plans such a row at a higher confidence
    (:data:`simstudy.studies.precision.HEAVY_TAIL_CONFIDENCE`): a sample underestimates a heavy tail's kurtosis,
    and with it ``kappa`` (:func:`inflation`).

    Parameters
    ----------
    kurtosis : float or array_like of float
        Each row's sample kurtosis (``m4 / m2^2``); NaN (unknown) is not heavy-tailed.
    reps : int or array_like of int
        The replicates each kurtosis was computed from; broadcast with ``kurtosis``.

    Returns
    -------
    numpy.ndarray
        Bool array of the broadcast shape.

    Examples
    --------
    >>> heavy_tailed([3.0, 3.4, 3.6, 12.0, np.nan], 400).tolist()  # threshold 3 + 2 sqrt(24 / 400) = 3.49
    [False, False, True, True, False]
    """
    kurtosis, reps = np.broadcast_arrays(np.asarray(kurtosis, dtype=float), np.asarray(reps, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(kurtosis > 3.0 + 2.0 * np.sqrt(24.0 / reps))


def rate_variance_bound(successes, trials, confidence: float = 0.95) -> np.ndarray:
    """The exact one-sided upper ``confidence`` bound on the variance ``p (1 - p)`` of a rate, from its count.

    The bound inverts the test that rejects a variance ``v = p_v (1 - p_v)`` (``p_v <= 1/2``) when the count
    lies as far from ``trials / 2`` as observed or farther with probability at most ``1 - confidence`` under
    ``p_v`` (both tails: ``p_v`` and ``1 - p_v`` have the same variance). That tail probability falls as ``p_v``
    rises to 1/2, so ``P(p (1 - p) > bound) <= 1 - confidence`` for every ``p``: exact, with no normal
    approximation, and positive for a count of 0 or ``trials`` (where the pilot's MCSE is 0). Near 0 or 1 it is
    the one-sided Clopper-Pearson bound's ``p (1 - p)`` (to many digits once the far tail is negligible, as for 100
    trials or more); it is 1/4 when the count is near ``trials / 2``.

    Parameters
    ----------
    successes : array_like of int
        The count of ones among the pilot's 0/1 replicates; any shape.
    trials : array_like of int
        The pilot's replicates of each count (>= 1); broadcast with ``successes``.
    confidence : float, default 0.95
        In (0, 1).

    Returns
    -------
    numpy.ndarray
        Float array of the broadcast shape, in ``(0, 1/4]``: the upper bound on ``p (1 - p)``.

    Examples
    --------
    No event in 100 trials: p is at most 0.0295 (the one-sided 95% Clopper-Pearson bound, ``1 - 0.05^(1/100)``),
    so p (1 - p) at most 0.0286; a count of 50 in 100 allows p = 1/2:

    >>> print(np.round(rate_variance_bound([0, 2, 50, 98], 100), 4))
    [0.0286 0.0578 0.25   0.0578]
    """
    from scipy import stats

    successes, trials = np.broadcast_arrays(np.asarray(successes, float), np.asarray(trials, float))
    low = np.minimum(successes, trials - successes)  # the count's distance from the middle, folded below it
    alpha = 1.0 - confidence

    def tail(p):
        # P(|X - n/2| >= |x - n/2|) under p <= 1/2: P(X <= low) + P(X >= n - low) (once if low = n/2)
        upper = np.where(2 * low < trials, stats.binom.sf(trials - low - 1, trials, p), 0.0)
        return stats.binom.cdf(low, trials, p) + upper

    lo, hi = np.zeros(low.shape), np.full(low.shape, 0.5)
    middle = tail(hi) > alpha  # p = 1/2 is not rejected: the bound is 1/4
    for _ in range(60):  # bisection to 2^-60 of [0, 1/2]: far below any float that matters here
        mid = (lo + hi) / 2
        kept = tail(mid) > alpha
        lo, hi = np.where(kept, mid, lo), np.where(kept, hi, mid)
    p = np.where(middle, 0.5, hi)  # hi: the smallest p rejected, so the bound is not below the supremum kept
    return p * (1 - p)


def absolute_targets(precision, measures, estimates) -> np.ndarray:
    """Each row's absolute MCSE target under ``study.precision`` (NaN for a row it does not target).

    Parameters
    ----------
    precision : tuple of (str, float, bool)
        ``study.precision`` as :func:`simstudy.schema.precision` returns it: ``(measure, value, relative)``
        triples, measure ``"*"`` for every measure; a relative value is a fraction of ``|estimate|``.
    measures : array_like of str, shape (rows,)
        Each row's measure.
    estimates : array_like of float, shape (rows,)
        Each row's estimate (for relative targets).

    Returns
    -------
    numpy.ndarray
        Float array, shape (rows,): the target, in the measure's units; NaN where no target applies.

    Raises
    ------
    ConfigError
        If ``precision`` names a measure no row has (the message lists the measures there are).

    Examples
    --------
    >>> absolute_targets((("*", 0.01, True),), ["mean", "mse"], [0.5, -0.2]).tolist()
    [0.005, 0.002]
    >>> absolute_targets((("mse", 0.001, False),), ["mean", "mse"], [0.5, 0.2]).tolist()
    [nan, 0.001]
    >>> absolute_targets((("mde", 0.001, False),), ["mean", "mse"], [0.5, 0.2])
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.precision.mde is not a measure of this study (its measures: mean, mse)
    """
    measures = np.asarray(measures, dtype=object)
    estimates = np.asarray(estimates, dtype=float)
    known = list(dict.fromkeys(measures.tolist()))
    target = np.full(measures.shape, np.nan)
    for measure, value, relative in sorted(precision, key=lambda t: t[0] != "*"):  # "*" first: a named one wins
        if measure != "*" and measure not in known:
            raise ConfigError(
                f"study.precision.{measure} is not a measure of this study (its measures: {', '.join(known)})"
            )
        rows = np.ones(measures.shape, bool) if measure == "*" else measures == measure
        target[rows] = value * np.abs(estimates[rows]) if relative else value
    return target


def reps_needed(pilot_reps, mcse, target, *, kappa, chunk_reps: int, max_reps: int):
    """Each row's replicates needed to meet its target, in whole chunks, within ``[pilot_reps, max_reps]``.

    ``ceil(pilot_reps * (mcse / target)^2 * kappa)`` rounded up to a multiple of ``chunk_reps``, then clipped;
    a row the pilot already meets needs exactly the pilot.
    A row without a target (NaN), or whose pilot MCSE is NaN, needs only the pilot; a zero target with a
    positive MCSE needs more than any cap. The "pilot" is whatever replicates ``mcse`` was estimated from: the
    rule's top-up re-plans each cell from its planned stage's replicates (per row, an array).

    Parameters
    ----------
    pilot_reps : int or array_like of int, shape (rows,)
        The replicates ``n0`` of the cell each MCSE was estimated from (``study.reps`` for the pilot, the planned
        replicates for the top-up); at most ``max_reps``.
    mcse : array_like of float, shape (rows,)
        The pilot's MCSE of each row.
    target : array_like of float, shape (rows,)
        Each row's absolute target (:func:`absolute_targets`).
    kappa : array_like of float, shape (rows,) or scalar
        The inflation of each row's plan (:func:`inflation`).
    chunk_reps : int
        Replicates per chunk (``study.chunk_reps``).
    max_reps : int
        The cap (``study.max_reps``), at least ``pilot_reps``.

    Returns
    -------
    reps : numpy.ndarray
        Int64 array, shape (rows,): the replicates each row needs.
    capped : numpy.ndarray
        Bool array, shape (rows,): whether the row needs more than ``max_reps`` (its target will likely be
        missed).

    Examples
    --------
    Halving the MCSE of a pilot of 1,000 takes four times the replicates, here times kappa 1.1, in chunks of 500:

    >>> reps, capped = reps_needed(1000, [0.02, 0.01, np.nan], [0.01, 0.02, 0.01], kappa=1.1, chunk_reps=500,
    ...                            max_reps=100_000)
    >>> reps.tolist(), capped.tolist()
    ([4500, 1000, 1000], [False, False, False])
    >>> reps_needed(1000, [0.02], [0.001], kappa=1.1, chunk_reps=500, max_reps=100_000)[0].tolist()
    [100000]
    >>> reps_needed([4500, 2000], [0.0101, 0.0101], [0.01, 0.01], kappa=1.1, chunk_reps=500,
    ...             max_reps=100_000)[0].tolist()  # re-planned from each cell's own replicates
    [5500, 2500]
    """
    pilot_reps = np.asarray(pilot_reps, dtype=float)
    mcse = np.asarray(mcse, dtype=float)
    target = np.asarray(target, dtype=float)
    # A tiny target (1e-300) overflows the ratio to inf: capped, like any plan beyond the cap, without a warning.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        raw = np.ceil(pilot_reps * (mcse / target) ** 2 * np.asarray(kappa, dtype=float))
    raw = np.where(np.isnan(raw), pilot_reps, raw)  # untargeted, or no MCSE to plan from: the pilot
    capped = raw > max_reps
    whole = np.ceil(np.minimum(raw, max_reps) / chunk_reps) * chunk_reps
    whole = np.where(raw <= pilot_reps, pilot_reps, whole)  # met by the pilot: not a replicate more
    return np.clip(whole, pilot_reps, max_reps).astype(np.int64), capped
