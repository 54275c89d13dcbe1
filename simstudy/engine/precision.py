"""The precision stopping rule's planning maths: from a pilot's Monte Carlo errors to the replicates each cell needs.

``study.precision`` asks every reported measure of a cell for a Monte Carlo standard error (MCSE) at most a
target; ``study.reps`` replicates are the pilot and ``study.max_reps`` the cap. The rule is a two-stage design
(Stein 1945): the pilot's MCSE of each measure, ``mcse0`` from ``n0`` replicates, plans the cell's total

    N = ceil(n0 * (mcse0 / target)^2 * kappa),

since an MCSE shrinks as ``1/sqrt(N)``; ``kappa`` inflates the plan for the pilot's own uncertainty about the
variance: ``kappa = (n0 - 1) / chi2_{1 - confidence}(n0 - 1)``, the ratio of the one-sided upper
``confidence`` bound on a variance estimated from ``n0`` normal replicates to the estimate, so that the plan
reaches the target with probability about ``confidence``. A cell takes the largest N of its targeted measures,
rounded up to whole chunks and clipped to ``[n0, max_reps]``; its final estimates use all N replicates (the
pilot's chunks are reused).

Why the final estimate is not biased by the rule: N is a function of the pilot only, and the final mean is
``(n0 mean0 + (N - n0) mean1) / N`` with ``mean1`` independent of the pilot, so its bias is
``Cov(n0 / N, mean0)``. With absolute targets N depends on the pilot through its MCSE (a variance) alone: for
normal replicates the sample mean and variance are independent, the covariance is zero and the design is Stein's
(exactly unbiased); in general ``|bias| <= sd(mean0) sd(n0 / N)``, of the order of the pilot's MCSE times the
relative spread of the plan, far below the target for pilots of hundreds of replicates. A relative target
(``1%``) also plans from the pilot's estimate, which adds a dependence of the same order. ``tests/test_precision.py``
checks the coverage of the final intervals on exact truths.

===========================  ==========================================================================
:func:`inflation`            kappa, the chi-square inflation of a plan from a pilot of n0 replicates
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

__all__ = ["inflation", "absolute_targets", "reps_needed"]


def inflation(dof, confidence: float = 0.95) -> np.ndarray:
    """The chi-square inflation ``kappa`` of a plan made from a variance with ``dof`` degrees of freedom.

    ``kappa = dof / chi2_{1 - confidence}(dof)``: the one-sided upper ``confidence`` bound on a normal variance,
    as a multiple of its estimate. A plan ``n0 (mcse0 / target)^2 kappa`` then reaches the target with
    probability about ``confidence``.

    Parameters
    ----------
    dof : int or array_like of int
        Degrees of freedom of the pilot's variance, ``n0 - 1`` for ``n0`` replicates.
    confidence : float, default 0.95
        In (0, 1).

    Returns
    -------
    numpy.ndarray
        Float array of ``dof``'s shape, each >= 1; NaN where ``dof < 1``.

    Examples
    --------
    >>> print(np.round(inflation([9, 99, 999]), 4))
    [2.7067 1.2849 1.0781]
    """
    from scipy import special

    dof = np.asarray(dof, dtype=float)
    # One quantile per distinct dof: a summary's rows share their pilot's few replicate counts.
    values, inverse = np.unique(dof, return_inverse=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (values / special.chdtri(np.where(values >= 1, values, 1.0), confidence))[inverse.reshape(dof.shape)]
    return np.where(dof >= 1, kappa, np.nan)


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


def reps_needed(pilot_reps: int, mcse, target, *, kappa, chunk_reps: int, max_reps: int):
    """Each row's replicates needed to meet its target, in whole chunks, within ``[pilot_reps, max_reps]``.

    ``ceil(pilot_reps * (mcse / target)^2 * kappa)`` rounded up to a multiple of ``chunk_reps``, then clipped;
    a row the pilot already meets needs exactly the pilot.
    A row without a target (NaN), or whose pilot MCSE is NaN, needs only the pilot; a zero target with a
    positive MCSE needs more than any cap.

    Parameters
    ----------
    pilot_reps : int
        The cell's pilot replicates ``n0`` (``study.reps``).
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
    """
    mcse = np.asarray(mcse, dtype=float)
    target = np.asarray(target, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.ceil(pilot_reps * (mcse / target) ** 2 * np.asarray(kappa, dtype=float))
    raw = np.where(np.isnan(raw), pilot_reps, raw)  # untargeted, or no MCSE to plan from: the pilot
    capped = raw > max_reps
    whole = np.ceil(np.minimum(raw, max_reps) / chunk_reps) * chunk_reps
    whole = np.where(raw <= pilot_reps, pilot_reps, whole)  # met by the pilot: not a replicate more
    return np.clip(whole, pilot_reps, max_reps).astype(np.int64), capped
