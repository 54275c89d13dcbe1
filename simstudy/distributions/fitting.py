"""The noisy quadratic law fitted to scores, and its parametric bootstrap: the law-level results.

The kernels on arrays are in :mod:`simstudy.stats.parametric_fit` (the threshold rule, the objective, the
batched fit and one chunk of bootstrap replicates); here they return the fitted
:class:`~simstudy.distributions.parametric.NoisyQuadratic` itself.

==============================  ===========================================================================
name                            what it does
==============================  ===========================================================================
:func:`fit`                     fit the law to the tail of a sample (maximum product of spacings)
:class:`FitResult`              the fitted law and how the fit went
:func:`parametric_bootstrap`    percentile intervals for b and bands for the tuning curves
:class:`BootstrapResult`        what the bootstrap returns
==============================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.stats.errors import InvalidParameter
from simstudy.stats.parametric_fit import Threshold, bootstrap_chunk, fit_one
from simstudy.stats.quadratic import C_RANGE, curves

__all__ = ["FitResult", "fit", "BootstrapResult", "parametric_bootstrap"]


@dataclass(frozen=True)
class FitResult:
    """A fitted noisy quadratic law and how the fit went: what :func:`fit` returns (frozen).

    Parameters
    ----------
    law : NoisyQuadratic
        The fit (score units).
    objective : float
        The log product of spacings at the fit (larger is better).
    by_c : dict of int to float
        The best objective for each c searched.
    threshold : float
        The threshold used, in score units (scores at or below it censored; for a convex fit, at or above).
    n : int
        The sample's size (runs).
    n_tail : int
        The number of scores above the threshold (the ones whose values enter the fit).
    hit_bound : bool
        The fit lies on the family's boundary: o = 0 (the noise-free law fits at least as well as any noisy
        one), ``o = 100 (b - a)`` (the tail looks normal: the fit would shrink b - a without end), or the
        best score on its bound ``b_max``.
    converged : bool
        The optimizer met its tolerance at the chosen c.
    rule : Threshold, optional
        The threshold rule, as the bootstrap re-applies it (a fixed score when ``limits`` were given);
        default ``Threshold()``, the lower half.
    cs : tuple of int, optional
        The c values searched; default :data:`simstudy.distributions.parametric.C_RANGE` (1..10).
    start : ndarray of float, shape (len(cs), 3), optional
        The optimum per c in (b, log(b - a), log o), score units, concave direction: the bootstrap's warm
        starts; default None (cold starts).
    b_max : float, optional
        The bound on the best score in score units, in the concave direction (minus a's bound for a convex
        fit); default ``inf`` (none).

    Examples
    --------
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> res = fit(ys, constraints={"c": [2, 3, 4]})
    >>> res.law.c, round(res.law.b, 4), res.n, res.n_tail, round(res.threshold, 4)
    (3, 0.9082, 48, 24, 0.7644)
    >>> {c: round(v, 4) for c, v in res.by_c.items()}
    {2: -131.0626, 3: -130.5304, 4: -130.6791}
    >>> res.law.o, res.hit_bound, res.converged  # the noise-free law fitted best: on the boundary o = 0
    (0.0, True, True)
    """

    law: NoisyQuadratic
    objective: float
    by_c: dict = field(repr=False)
    threshold: float
    n: int
    n_tail: int
    hit_bound: bool
    converged: bool
    rule: Threshold = field(repr=False, default=Threshold())
    cs: tuple = field(repr=False, default=C_RANGE)
    start: np.ndarray | None = field(repr=False, default=None)
    b_max: float = field(repr=False, default=np.inf)


def fit(
    ys,
    limits: tuple[float, float] | None = None,
    constraints: Mapping[str, Any] | None = None,
    *,
    threshold: Threshold | None = None,
    minimize: bool = False,
) -> FitResult:
    """Fit the noisy quadratic law to the tail of ``ys`` by maximum product of spacings.

    Parameters
    ----------
    ys : array_like of float, shape (n,)
        Scores in score units (any order; ties allowed), all finite.
    limits : (float, float), optional
        ``(threshold, inf)``: scores at or below ``threshold`` are censored (their count enters the
        objective, not their values). For a convex fit ``(-inf, threshold)``: scores at or above it are.
        Give this or ``threshold``; neither means ``Threshold(quantile=0.5)``.
    constraints : mapping, optional
        ``c`` (one value or a list: the values searched; default 1..10), ``convex`` (default False: scores
        maximized), ``o`` (only 0: fit the noise-free quadratic law) and a bound on the best score possible:
        ``b=(None, 1.0)`` (an accuracy), or for a convex fit ``a=(0.0, None)`` (a loss).
    threshold : Threshold, optional, keyword-only
        A threshold rule instead of ``limits``.
    minimize : bool, keyword-only, default False
        Whether lower is better (losses): the law is convex, its best score ``a`` the minimum, and the highest
        scores are censored; the same as ``constraints={"convex": True}`` (the fit of ``-ys`` mirrored back:
        ``a = -b`` and ``b = -a`` of it, exactly).

    Returns
    -------
    FitResult
        ``.law`` is the fitted :class:`~simstudy.distributions.parametric.NoisyQuadratic`; with the objective per c, the
        threshold, ``n`` and ``n_tail``, and flags ``hit_bound`` and ``converged``.

    Raises
    ------
    InvalidParameter
        Fewer than 8 (:data:`MIN_TAIL`) or more than 50,000 (:data:`MAX_TAIL`) scores above the threshold,
        `ys` not one-dimensional or with non-finite scores, both `limits` and `threshold`, limits of the
        wrong form, or bad constraints (``convex`` false with ``minimize``), or `minimize` not a bool.

    References
    ----------
    .. [1] Lourie, N., He, H. & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima.
       COLM 2025, arXiv:2510.02721.

    Examples
    --------
    48 scores of a law with c = 3 and b = 0.9, the lower half censored, c searched among 2, 3 and 4 (all ten
    take about twice as long):

    >>> rng = np.random.default_rng(0)
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=rng)
    >>> res = fit(ys, constraints={"c": [2, 3, 4]})
    >>> res.law.c, round(res.law.a, 4), round(res.law.b, 4), res.n_tail
    (3, 0.683, 0.9082, 24)
    >>> fit(ys[:10])
    Traceback (most recent call last):
        ...
    simstudy.stats.errors.InvalidParameter: threshold leaves 5 of 10 scores above it; a fit needs at least 8 (lower the threshold), got 0.743794

    Losses, lower is better: the convex law, the mirror of the fit of the negated scores.

    >>> loss = fit(1 - ys, constraints={"c": [2, 3, 4]}, minimize=True)
    >>> mirror = fit(-(1 - ys), constraints={"c": [2, 3, 4]})
    >>> loss.law.convex, (loss.law.a, loss.law.b) == (-mirror.law.b, -mirror.law.a), round(loss.law.a, 4)
    (True, True, 0.0918)
    """
    if not isinstance(minimize, (bool, np.bool_)):
        raise InvalidParameter("minimize", "must be true or false", minimize)
    if minimize:  # the law of a minimized score is convex: one spelling of it, checked against the other
        if constraints is not None and constraints.get("convex", True) is not True:
            raise InvalidParameter(
                "constraints.convex", "must be true (or left out) with minimize=True", constraints["convex"]
            )
        constraints = {**(constraints or {}), "convex": True}
    out = fit_one(ys, limits, constraints, threshold)
    return FitResult(
        NoisyQuadratic._fitted(out),
        out["objective"],
        out["by_c"],
        out["threshold"],
        out["n"],
        out["n_tail"],
        out["hit_bound"],
        out["converged"],
        out["rule"],
        out["cs"],
        out["start"],
        out["b_max"],
    )


@dataclass(frozen=True)
class BootstrapResult:
    """A fitted law with percentile bootstrap intervals: what :func:`parametric_bootstrap` returns (frozen).

    Parameters
    ----------
    fit : FitResult
        The fit the bootstrap started from.
    ks : ndarray of float, shape (K,)
        The budgets (number of runs) of the curves.
    level : float
        The intervals' nominal coverage, a probability in (0, 1).
    b_interval : (float, float)
        The percentile interval for the best possible score b (for a convex law, for a), score units.
    median, mean : ndarray of float, shape (K,)
        The fitted law's median and mean tuning curves, score units (``mean`` all NaN when not asked).
    median_band, mean_band : ndarray of float, shape (2, K)
        Pointwise lower and upper percentile bounds, score units (``mean_band`` NaN when not asked).
    replicates : dict of str to ndarray
        ``a, b, c, o`` (n_boot,) of every bootstrap fit (NaN where it failed), and ``ok`` (n_boot,) bool.
    failed : float, optional
        The share of bootstrap fits that failed (left out of the intervals), in [0, 1]; default 0.0.

    Examples
    --------
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> boot = parametric_bootstrap(fit(ys, constraints={"c": 3}), [10, 100], n_boot=3, mean=False)
    >>> boot.level, boot.failed, boot.median.round(4).tolist(), boot.median_band.shape
    (0.95, 0.0, [0.871, 0.9], (2, 2))
    """

    fit: FitResult
    ks: np.ndarray
    level: float
    b_interval: tuple
    median: np.ndarray
    mean: np.ndarray
    median_band: np.ndarray
    mean_band: np.ndarray
    replicates: dict = field(repr=False)
    failed: float = 0.0


def parametric_bootstrap(
    result: FitResult,
    ks,
    *,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
    chunk: int = 25,
    n_jobs: int = 1,
    mean: bool = True,
) -> BootstrapResult:
    """Percentile intervals for b and pointwise bands for the tuning curves, by a parametric bootstrap.

    Each replicate draws ``n`` scores from the fitted law, applies the same threshold rule and refits
    (every c again). Chunks of ``chunk`` replicates are seeded by ``SeedSequence(seed, spawn_key=(i,))``,
    so the result is the same for any ``n_jobs``.

    Parameters
    ----------
    result : FitResult
        From :func:`fit`.
    ks : array_like of float, shape (K,)
        Budgets (numbers of runs, any positive reals; may go far past n).
    n_boot : int, keyword-only
        Replicates, an integer ``>= 2``; default 200.
    level : float, keyword-only
        Nominal coverage of the intervals, a probability in (0, 1); default 0.95.
    seed : int, keyword-only
        The root of the chunks' seeds (``SeedSequence(seed, spawn_key=(i,))``); default 0.
    chunk : int, keyword-only
        Replicates per task; default 25.
    n_jobs : int, keyword-only
        Parallel workers (joblib); default 1 (in this process).
    mean : bool, keyword-only
        Also the mean tuning curve's band (about 100 quantiles per replicate and k: the slow part); default True.

    Returns
    -------
    BootstrapResult
        The interval for b, the fitted law's curves at `ks` with their pointwise bands, the replicates and
        the share of failed refits.

    Raises
    ------
    InvalidParameter
        If `level` is not in (0, 1), `n_boot` is not an integer ``>= 2``, or `ks` holds a budget that is not
        finite and ``> 0``.

    References
    ----------
    .. [1] Lourie, N., He, H. & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima.
       COLM 2025, arXiv:2510.02721.

    Examples
    --------
    Three replicates only, to keep the example fast (intervals need hundreds):

    >>> rng = np.random.default_rng(0)
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=rng)
    >>> boot = parametric_bootstrap(fit(ys, constraints={"c": 3}), [10, 100], n_boot=3, seed=0, mean=False)
    >>> tuple(round(v, 4) for v in boot.b_interval), boot.replicates["b"].round(4).tolist()
    ((0.9046, 0.9163), [0.9169, 0.9046, 0.9059])
    >>> boot.median.round(4).tolist(), boot.median_band.round(4).tolist()
    ([0.871, 0.9], [[0.8635, 0.8956], [0.8791, 0.9081]])
    """
    from joblib import Parallel, delayed

    if not 0 < level < 1:
        raise InvalidParameter("level", "must be strictly between 0 and 1", level)
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 2:
        raise InvalidParameter("n_boot", "must be an integer >= 2", n_boot)
    ks = np.atleast_1d(np.asarray(ks, dtype=np.float64))
    if ks.ndim != 1 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise InvalidParameter("ks", "must be finite budgets > 0", ks.tolist()[:5])
    law = result.law
    start = result.start
    sizes = [min(chunk, n_boot - i) for i in range(0, n_boot, chunk)]
    jobs = [
        delayed(bootstrap_chunk)(
            law,
            result.n,
            result.rule,
            result.cs,
            start,
            ks,
            size,
            np.random.SeedSequence(seed, spawn_key=(i,)),
            mean,
            result.b_max,
        )
        for i, size in enumerate(sizes)
    ]
    parts = Parallel(n_jobs=n_jobs)(jobs) if n_jobs != 1 else [j[0](*j[1], **j[2]) for j in jobs]
    rep = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    ok = rep["ok"]
    alpha = (1.0 - level) / 2.0
    best = rep["a"] if law.convex else rep["b"]
    lo_hi = np.nanquantile(best[ok], [alpha, 1.0 - alpha]) if ok.any() else np.array([np.nan, np.nan])
    med, avg = curves(
        np.array([law.a]), np.array([law.b]), np.array([law.c]), np.array([law.o]), law.convex, ks, mean=mean
    )

    def band(x):
        if not ok.any():
            return np.full((2, ks.size), np.nan)
        return np.nanquantile(x[ok], [alpha, 1.0 - alpha], axis=0)

    return BootstrapResult(
        result,
        ks,
        level,
        (float(lo_hi[0]), float(lo_hi[1])),
        med[0],
        avg[0] if mean else np.full(ks.size, np.nan),
        band(rep["median"]),
        band(rep["mean"]) if mean else np.full((2, ks.size), np.nan),
        {k: rep[k] for k in ("a", "b", "c", "o", "ok")},
        float(1.0 - ok.mean()),
    )
