"""Tidy tables (pandas) of the kernels' results: EVP curves of a researcher's own scores, and the evidence
between two models' bands. Above the kernels (:mod:`simstudy.stats` builds no frames).

Expected-validation-performance curves for a researcher's own tuning results (Dodge et al. 2019):

:func:`evp_curves` turns each model's scores into its curve of expected best score against budget, with
the plug-in standard deviation of the best score (the +/- 1 SD band of Dodge et al.'s figures, clipped to
the range of scores actually observed, as they recommend), optionally against time instead of trials;
:func:`plugin_curves` puts a plug-in estimator's curve in their place. :func:`budget_to_target` finds where each
curve first reaches a score. :func:`bands_tables` is each model's tuning-curve and CDF bands (``simstudy bands``'s
tables), with :func:`evidence_table` between two models.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from simstudy.stats import estimators
from simstudy.stats.evidence import evidence, leader_names

if TYPE_CHECKING:
    import pandas as pd

    from simstudy.stats.bands import TuningCurveBands

__all__ = ["evp_curves", "plugin_curves", "budget_to_target", "bands_tables", "evidence_table"]

log = logging.getLogger("simstudy")


def _pandas():
    """pandas, imported on first use (half a second: the kernels and a CLI start do without it)."""
    import pandas

    return pandas


def _trial_time_iv(trial_time, models) -> dict[str, float] | None:
    if trial_time is None:
        return None
    if isinstance(trial_time, Mapping):
        missing = [m for m in models if m not in trial_time]
        if missing:
            raise ValueError(f"trial_time gives no time for model(s) {', '.join(missing)}")
        unknown = [str(m) for m in trial_time if m not in models]
        if unknown:  # a typo's time would be ignored, and the model meant would have none or the wrong one
            raise ValueError(
                f"trial_time names model(s) {', '.join(unknown)} not among the models drawn ({', '.join(models)}): "
                f"drop or rename them"
            )
        times = {m: trial_time[m] for m in models}
    else:
        times = {m: trial_time for m in models}
    for m, t in times.items():
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not np.isfinite(t) or t <= 0:
            raise ValueError(f"trial_time for {m} must be a positive number, got {t!r}")
    return {m: float(t) for m, t in times.items()}


def evp_curves(
    scores: Mapping[str, np.ndarray], *, method: str = "v", trial_time=None, minimize: bool = False
) -> pd.DataFrame:
    """The expected maximum (or, with `minimize`, minimum) of n trials, n = 1..B, for each model.

    Parameters
    ----------
    scores : mapping of str to array_like of float
        Model name -> its B validation scores, shape (B,), score units (one per random-search trial; B may
        differ between models).
    method : {"v", "u", "w"}, keyword-only, default "v"
        The estimator (:func:`simstudy.stats.estimators.expected_max`); V is Dodge et al.'s and has the lowest MSE.
    trial_time : float or mapping of str to float, keyword-only, optional
        Average duration of one trial (any unit, e.g. seconds or GPU hours), for all models or per model:
        adds a ``time`` column, ``n * trial_time``.
    minimize : bool, keyword-only, default False
        Whether lower is better (losses): the curve is the expected minimum, in a column ``expected_min``
        (:func:`simstudy.stats.estimators.expected_max` with ``minimize``: the curves of ``-x`` mirrored back,
        negation being exact), its band the mirror of theirs.

    Returns
    -------
    pandas.DataFrame
        Tidy, one row per (model, n), every n = 1..B, in the order of `scores`: ``model``, ``n``,
        ``expected_max`` (``expected_min`` with `minimize`), ``std`` (plug-in SD of the best of n, :func:`simstudy.stats.estimators.expected_max_std`;
        always from V's weights), ``band_low`` and ``band_high`` (``expected_max -/+ std`` clipped to the
        model's observed [min, max]), all in score units, and ``time`` (the unit of `trial_time`) when given.

    Raises
    ------
    ValueError
        On an unknown `method`; no models; a model's scores not a non-empty 1-d array; `trial_time` missing
        a model, naming one not in `scores`, or not a positive number.

    Notes
    -----
    Memory is O(B) and time O(B log B) per model (:mod:`simstudy.stats.estimators` computes large curves in
    windowed blocks, exact to within ``2**-53`` of the score range): 10^6 scores take seconds.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP-IJCNLP 2019.

    Examples
    --------
    >>> c = evp_curves({"a": [0.2, 0.5, 0.9], "b": [0.6, 0.7]}, trial_time={"a": 2.0, "b": 10.0})
    >>> c.round(4)
      model  n  expected_max     std  band_low  band_high  time
    0     a  1        0.5333  0.2867    0.2466     0.8201   2.0
    1     a  2        0.6889  0.2514    0.4375     0.9000   4.0
    2     a  3        0.7704  0.2069    0.5634     0.9000   6.0
    3     b  1        0.6500  0.0500    0.6000     0.7000  10.0
    4     b  2        0.6750  0.0433    0.6317     0.7000  20.0
    >>> evp_curves({"a": [0.2, 0.5, 0.9]}, method="bootstrap")
    Traceback (most recent call last):
        ...
    ValueError: unknown estimator 'bootstrap'; choose one of: u, v, w

    Losses, lower is better: the expected minimum of n falls with n.

    >>> evp_curves({"a": [0.2, 0.5, 0.9]}, minimize=True)["expected_min"].round(4).tolist()
    [0.5333, 0.3778, 0.3037]
    """
    if not isinstance(minimize, (bool, np.bool_)):
        raise ValueError(f"minimize must be True or False, got {minimize!r}")
    if method not in estimators.CLOSED_FORM:
        raise ValueError(f"unknown estimator {method!r}; choose one of: {', '.join(estimators.CLOSED_FORM)}")
    if not scores:
        raise ValueError("no models to draw")
    times = _trial_time_iv(trial_time, list(scores))
    frames = []
    for model, x in scores.items():
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1 or x.size == 0:
            raise ValueError(f"the scores of model {model} must be a non-empty 1-d array, got shape {x.shape}")
        # One sort, and one pass over the V weights for the curve and its SD (bounded memory at any B); the
        # minimum's curve is the maximum's of -x, mirrored back below (negation and clipping are exact)
        x = np.sort(-x if minimize else x)
        mean, std = estimators.v_mean_std(x, np.arange(1, x.size + 1))
        if method != "v":
            mean = estimators.expected_max(x, method, presorted=True)
        frame = _pandas().DataFrame(
            {
                "model": model,
                "n": np.arange(1, x.size + 1),
                "expected_max": mean,
                "std": std,
                "band_low": np.clip(mean - std, x.min(), x.max()),
                "band_high": np.clip(mean + std, x.min(), x.max()),
            }
        )
        if minimize:
            frame = frame.assign(
                expected_max=-frame["expected_max"], band_low=-frame["band_high"], band_high=-frame["band_low"]
            ).rename(columns={"expected_max": "expected_min"})
        if times is not None:
            frame["time"] = frame["n"] * times[model]
        frames.append(frame)
    return _pandas().concat(frames, ignore_index=True)


def budget_to_target(curves: pd.DataFrame, target: float, *, minimize: bool = False) -> pd.DataFrame:
    """The smallest budget at which each model's expected maximum reaches ``target`` (Dodge et al. 2019, Fig. 1);
    with `minimize`, where its expected minimum falls to it.

    Parameters
    ----------
    curves : pandas.DataFrame
        As :func:`evp_curves` returns: columns ``model``, ``n``, ``expected_max`` and optionally ``time``,
        rows in ascending ``n`` within each model.
    target : float
        The score to reach (score units); reached where ``expected_max >= target`` up to rounding (a few units
        in the last place: a curve of [0.6, 0.7] at n = 1 is 0.6499999999999999 and reaches 0.65).
    minimize : bool, keyword-only, default False
        Whether the curves are of the minimum (:func:`evp_curves` with ``minimize``, column ``expected_min``):
        reached where ``expected_min <= target``, up to the same rounding.

    Returns
    -------
    pandas.DataFrame
        One row per model, in order of appearance: ``model``, ``target``, ``n`` (trials; NaN if the curve
        never reaches it within the model's B), ``expected_max`` there, and ``time`` when the curves have a
        time axis.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP-IJCNLP 2019.

    Examples
    --------
    >>> c = evp_curves({"a": [0.2, 0.5, 0.9], "b": [0.6, 0.7]}, trial_time=2.0)
    >>> budget_to_target(c, 0.68).round(4)
      model  target    n  expected_max  time
    0     a    0.68  2.0        0.6889   4.0
    1     b    0.68  NaN           NaN   NaN
    >>> budget_to_target(evp_curves({"b": [0.6, 0.7]}), 0.65)  # the mean, 0.65, is reached at n = 1
      model  target  n  expected_max
    0     b    0.65  1          0.65
    """
    # The curve is a sum of rounded products: a target it equals exactly can come out a few ulps short (above it,
    # for the minimum: -target - slack of the mirrored curve is exactly -(target + slack)).
    slack = 4 * np.finfo(np.float64).eps * max(abs(target), 1.0)
    column = "expected_min" if minimize else "expected_max"
    rows = []
    for model, c in curves.groupby("model", sort=False):
        hit = c[c[column] <= target + slack] if minimize else c[c[column] >= target - slack]
        row = {"model": model, "target": target, "n": np.nan, column: np.nan}
        if "time" in c:
            row["time"] = np.nan
        if len(hit):
            first = hit.iloc[0]
            row.update({"n": int(first["n"]), column: float(first[column])})
            if "time" in c:
                row["time"] = float(first["time"])
        rows.append(row)
    return _pandas().DataFrame(rows)


def evidence_table(a: TuningCurveBands, b: TuningCurveBands, name_a: str, name_b: str):
    """:func:`~simstudy.stats.evidence.evidence` as a table: one row per budget, the level and the name of the model ahead.

    Parameters
    ----------
    a, b : TuningCurveBands
        Two models' bands at the same budgets ``ks``.
    name_a, name_b : str
        The models' names.

    Returns
    -------
    pandas.DataFrame
        Columns ``k`` (float), ``evidence`` (one of :data:`~simstudy.stats.evidence.EVIDENCE_LEVELS`) and ``leader`` (``name_a``,
        ``name_b``, or ``"tie"`` where the point estimates are equal): the model whose point estimate is
        higher, or lower for bands of the minimum (``minimize``).

    Raises
    ------
    ValueError
        If the bands are not at the same budgets.

    Examples
    --------
    >>> from simstudy.stats.bands import tuning_curve_bands
    >>> ks = np.arange(1, 4)
    >>> a = tuning_curve_bands(np.linspace(0.80, 0.90, 20), 0.8, ks=ks, low=0, high=1)
    >>> b = tuning_curve_bands(np.linspace(0.10, 0.20, 20), 0.8, ks=ks, low=0, high=1)
    >>> evidence_table(a, b, "a", "b")
         k evidence leader
    0  1.0   strong      a
    1  2.0   strong      a
    2  3.0   strong      a
    """
    level, _leader = evidence(a, b)
    return _pandas().DataFrame(
        {
            "k": np.asarray(a.ks, dtype=np.float64),
            "evidence": level.astype(object),
            # the better point estimate: the lower for bands of the minimum (evidence refused a mix of the two)
            "leader": leader_names(-a.point, -b.point, name_a, name_b)
            if getattr(a, "minimize", False)
            else leader_names(a.point, b.point, name_a, name_b),
        }
    )


def plugin_curves(
    table: pd.DataFrame, scores: Mapping[str, np.ndarray], estimator: str, minimize: bool = False
) -> pd.DataFrame:
    """The curves of ``table`` with ``expected_max`` a plug-in estimator's estimate at n = 1..B of each model's
    sorted sample, and the +/- 1 SD shading moved with it (clipped to the observed scores, as for a built-in).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`evp_curves` of ``scores`` (V's), whose ``std`` gives the shading's width.
    scores : Mapping of str to array_like of float
        Each model's scores (score units), as given to :func:`evp_curves`.
    estimator : str
        The plug-in (:func:`simstudy.plugins.estimator_plugin`): a registered method or an import path.
    minimize : bool, optional
        The curves of the minimum (column ``expected_min``): minus the plug-in's estimate on ``-x`` (a plug-in
        estimates a maximum); default False.

    Returns
    -------
    pandas.DataFrame
        ``table`` with the curve and ``band_low``, ``band_high`` replaced.

    Raises
    ------
    simstudy.datasets.DataError
        The plug-in failed on a model's scores (one line naming it and the model).

    Examples
    --------
    >>> scores = {"a": np.array([0.2, 0.4, 0.3])}
    >>> table = plugin_curves(evp_curves(scores, method="v"), scores, "numpy.minimum")  # a toy: min(x_(i), n_i)
    >>> table["expected_max"].tolist()
    [0.2, 0.3, 0.4]
    """
    from simstudy import plugins
    from simstudy.datasets import DataError

    plugin = plugins.estimator_plugin(estimator)
    parts = []
    for model, x in scores.items():
        x = np.sort(np.asarray(x, dtype=np.float64))
        try:
            n = np.arange(1, x.size + 1)
            mean = -plugin(np.sort(-x)[None, :], n)[0] if minimize else plugin(x[None, :], n)[0]
        except Exception as exc:  # the plug-in's own failure on this data: one line naming it
            raise DataError(f"estimator={estimator}: failed on the scores of {model}: {exc}") from None
        rows = table["model"] == model
        part = table[rows].copy()
        std = part["std"].to_numpy()
        part["expected_min" if minimize else "expected_max"] = mean
        part["band_low"] = np.clip(mean - std, x.min(), x.max())
        part["band_high"] = np.clip(mean + std, x.min(), x.max())
        parts.append(part)
    return _pandas().concat(parts, ignore_index=True)


def bands_tables(
    scores: Mapping[str, np.ndarray],
    *,
    confidence: float,
    kind: str,
    method: str,
    quantile: float,
    low: float = -np.inf,
    high: float = np.inf,
    estimator: str | None = None,
    max_k: int | None = None,
    minimize: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Each model's tuning-curve and CDF bands as tables, and the evidence between two models: the numbers of
    ``simstudy bands`` (``bands.csv``, ``cdf_bands.csv``, ``evidence.csv``).

    Parameters
    ----------
    scores : Mapping of str to numpy.ndarray of float
        Each model's scores (score units), as float64 arrays.
    confidence : float
        The simultaneous coverage of the bands, in (0, 1).
    kind : str
        The tuning curve: ``"median"``, ``"quantile"`` or ``"mean"`` (:func:`simstudy.stats.bands.tuning_curve_bands`).
    method : str
        The band method (a built-in or a registered plug-in band).
    quantile : float
        The quantile of the best score, for ``kind="quantile"``.
    low, high : float, optional
        The bounds of the scores (score units); default unbounded.
    estimator : str or None, optional
        A point estimate beside U and V (a built-in of :data:`simstudy.stats.estimators.CLOSED_FORM` or a plug-in,
        :func:`simstudy.plugins.estimator_plugin`); default None.
    max_k : int or None, optional
        The budgets k = 1..max_k; default None: the largest sample size.
    minimize : bool, optional
        Lower scores are better: the bands and estimates of the minimum; default False.

    Returns
    -------
    bands : pandas.DataFrame
        One row per model and k: ``model``, ``k``, ``point``, ``lower``, ``upper``, ``u``, ``v`` (and the
        estimator's; NaN beyond the model's sample size), ``kind``, ``quantile``, ``confidence``, ``method``.
    cdfs : pandas.DataFrame
        One row per model and distinct score: ``model``, ``score``, ``count``, ``ecdf``, ``lower``, ``upper``,
        ``confidence``, ``method``.
    evidence : pandas.DataFrame or None
        For exactly two models, :func:`evidence_table` with ``u_leader`` and ``v_leader`` (the model the U and V
        estimates put ahead at each k); None otherwise.

    Raises
    ------
    simstudy.datasets.DataError
        A plug-in estimator failed on a model's scores.

    Examples
    --------
    >>> bands, cdfs, evidence = bands_tables(
    ...     {"a": np.array([0.2, 0.4, 0.3])}, confidence=0.8, kind="median", method="dkw", quantile=0.5
    ... )
    >>> bands[["k", "point", "u"]].round(4).values.tolist(), evidence is None
    ([[1.0, 0.3, 0.3], [2.0, 0.4, 0.3667], [3.0, 0.4, 0.4]], True)
    """
    from simstudy.stats.bands import tuning_curve_bands

    pd = _pandas()
    max_k = max_k or max(x.size for x in scores.values())
    ks = np.arange(1, max_k + 1, dtype=np.float64)
    # minimize=true: every kernel takes it (the quantile curves follow the one convention of
    # truth.quantile_tuning_curve and opda, the left-continuous inverse; U and V of the minimum are minus those of -x)
    results, curve_rows, cdf_rows = {}, [], []
    for model, x in scores.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tc = tuning_curve_bands(
                x, confidence, kind, method, ks=ks, quantile=quantile, low=low, high=high, minimize=minimize
            )
        for w in caught:
            log.warning("%s: %s", model, w.message)
        results[model] = tc
        # Beside the bands, the U and V point estimates of the mean tuning curve (Lourie et al. Figure 1, left):
        # the estimators interpolate only, so NaN beyond the model's sample size.
        point = {e: np.full(ks.size, np.nan) for e in ("u", "v", *([estimator] if estimator else []))}
        m = min(x.size, ks.size)
        for e in point:
            point[e][:m] = _point_estimate(x, e, np.arange(1, m + 1), model, minimize)
        curve_rows.append(
            pd.DataFrame(
                {
                    "model": model,
                    "k": ks.astype(np.int64),
                    "point": tc.point,
                    "lower": tc.lower,
                    "upper": tc.upper,
                    **point,
                }
            )
        )
        cdf_rows.append(_distinct_scores(model, tc.cdf, x.size))
    curves = pd.concat(curve_rows, ignore_index=True)
    for col, value in (("kind", kind), ("quantile", quantile), ("confidence", confidence), ("method", method)):
        curves[col] = value
    cdfs = pd.concat(cdf_rows, ignore_index=True)
    cdfs["confidence"], cdfs["method"] = confidence, method
    evidence = None
    if len(results) == 2:
        (name_a, a), (name_b, b) = results.items()
        evidence = evidence_table(a, b, name_a, name_b)
        by_model = {m: c.sort_values("k") for m, c in curves.groupby("model", sort=False)}
        for e in ("u", "v"):  # which model the point estimates of the mean tuning curve put ahead at each k
            evidence[f"{e}_leader"] = leader_names(
                by_model[name_a][e], by_model[name_b][e], name_a, name_b, minimize=minimize
            )
    return curves, cdfs, evidence


def _point_estimate(x: np.ndarray, estimator: str, n: np.ndarray, model: str, minimize: bool = False) -> np.ndarray:
    """An estimate of the expected best of each n (shape (N,), score units) from the scores ``x``: a built-in
    (:func:`simstudy.stats.estimators.expected_max`) or a plug-in called on the one sorted sample (of ``-x`` with
    ``minimize``, its answer negated: a plug-in estimates a maximum)."""
    from simstudy import plugins
    from simstudy.datasets import DataError

    if estimator in estimators.CLOSED_FORM:
        return estimators.expected_max(x, estimator, n=n, minimize=minimize)
    try:
        if minimize:
            return -plugins.estimator_plugin(estimator)(np.sort(-x)[None, :], n)[0]
        return plugins.estimator_plugin(estimator)(np.sort(x)[None, :], n)[0]
    except Exception as exc:  # the plug-in's own failure on this data: one line naming it and the model
        raise DataError(f"estimator={estimator}: failed on the scores of {model}: {exc}") from None


def _distinct_scores(model: str, cdf, n: int):
    """The CDF band at each distinct score, one row per score: with ties, the eCDF and the bands at a score are
    those after its last copy (the band arrays hold one entry per sorted draw)."""
    last = np.flatnonzero(np.append(np.diff(cdf.y) > 0, True))  # the last copy of each distinct score
    count = np.diff(np.append(-1, last))
    return _pandas().DataFrame(
        {
            "model": model,
            "score": cdf.y[last],
            "count": count,
            "ecdf": (last + 1) / n,
            "lower": cdf.lower[last],
            "upper": cdf.upper[last],
        }
    )
