"""Tidy tables (pandas) of the kernels' results: EVP curves of a researcher's own scores, and the evidence
between two models' bands. Above the kernels (:mod:`simstudy.stats` builds no frames).

Expected-validation-performance curves for a researcher's own tuning results (Dodge et al. 2019):

:func:`evp_curves` turns each model's scores into its curve of expected best score against budget, with
the plug-in standard deviation of the best score (the +/- 1 SD band of Dodge et al.'s figures, clipped to
the range of scores actually observed, as they recommend), optionally against time instead of trials.
:func:`budget_to_target` finds where each curve first reaches a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from simstudy.stats import estimators
from simstudy.stats.evidence import evidence, leader_names

if TYPE_CHECKING:
    import pandas as pd

    from simstudy.stats.bands import TuningCurveBands

__all__ = ["evp_curves", "budget_to_target", "evidence_table"]


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
        mean, std = estimators._v_mean_std(x, np.arange(1, x.size + 1))
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
