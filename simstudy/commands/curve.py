"""``simstudy curve``: expected-validation-performance curves of a researcher's own scores, as a library.

The expected best score against the tuning budget for each model in a results file or a shipped data set
(expected validation performance, Dodge et al. 2019; its estimators, Dodge et al. 2021), with +/- 1 SD shading
clipped to the observed scores, and where each curve first reaches a target score. The command line
(:mod:`simstudy.cli`) parses its ``key=value`` settings with :func:`parse`, calls :func:`run`, writes the files
with :func:`write` and prints :func:`lines`; from Python the same steps give the same numbers::

    from simstudy.commands import curve
    result = curve.run({"data": "reuters_hedwig", "target": 0.4})
    result.curves  # the frame of curves.csv

=========================  ==========================================================================
name                       what
=========================  ==========================================================================
:class:`CurveOptions`      the command's keys (a schema): defaults, ``--help`` text, checks
:class:`CurveConfig`       the keys validated and frozen
:func:`parse`              a mapping of keys to a :class:`CurveConfig` (one-line ConfigError)
:func:`run`                the curves (and targets reached) as a :class:`CurveResult`
:func:`lines`              the terminal summary: the table at readable budgets, the targets reached
:func:`write`              figure.png/pdf, curves.csv/parquet, targets.csv, CURVE.md (report.html's page)
:func:`chart`              the chart of the curves: figure.png, and report.html's chart
:func:`report_charts`      that chart of a run directory (the command's ``charts``)
=========================  ==========================================================================

Nothing here prints or exits: bad input raises :class:`~simstudy.schema.ConfigError` or
:class:`~simstudy.datasets.DataError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy import io, schema, schema_docs
from simstudy.charts import Chart, Interval, Reference, json_value, log_spaced
from simstudy.commands._data import (
    XSCALES,
    DataConfig,
    DataOptions,
    command_config,
    command_iv,
    data_config,
    estimator_iv,
    finite_score,
    parse_trial_time,
    read,
    sample_seed_option,
)
from simstudy.datasets import DataError
from simstudy.registry import Command
from simstudy.schema import option
from simstudy.stats import estimators

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CurveOptions",
    "CurveConfig",
    "CurveResult",
    "parse",
    "run",
    "lines",
    "write",
    "chart",
    "report_charts",
]


@schema_docs.documented()
@dataclass(frozen=True)
class CurveOptions(DataOptions):
    """The keys of ``simstudy curve`` (``configs/curve.yaml`` selects them): the data keys and the curve's own.

    :func:`parse` checks a mapping of them and returns a :class:`CurveConfig`.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.commands.curve import CurveOptions
    >>> opts = schema.parse(CurveOptions, {"data": "runs.csv", "target": 0.4})
    >>> opts.estimator, opts.target, opts.xscale
    ('v', 0.4, 'log')
    """

    estimator: str = option(
        "v",
        "the expected-maximum estimator: v (Dodge et al. 2019, lowest MSE), u (unbiased, Tang et al. 2020), w, "
        "or a plug-in as in a study: its import path module.function or a name it registered",
        lambda key, value: estimator_iv(key, value, estimators.CLOSED_FORM),
    )
    target: float | None = option(
        None, "a score to reach, in score units: report the budget where each curve first reaches it", finite_score
    )
    trial_time: float | tuple | None = option(
        None,
        "the average duration of one trial, in time_unit, for every model (0.2) or per "
        "model ({cnn: 0.2, lr: 0.01}): puts time on the x axis",
        parse_trial_time,
        type_doc="float, tuple of (model, time) pairs or None",
    )
    time_unit: str = option("hours", "the unit of trial_time, for the axis label (e.g. hours)", schema.text())
    xscale: str = option("log", "the x axis: log or linear", schema.choice(XSCALES))
    sample_seed: int | None = sample_seed_option()


@dataclass(frozen=True)
class CurveConfig:
    """``simstudy curve``: EVP curves of a researcher's own results (or a shipped data set), as parsed.

    What :func:`parse` returns: the expected best score against the tuning budget (expected validation
    performance, Dodge et al. 2019; its estimators, Dodge et al. 2021).

    Parameters
    ----------
    data : DataConfig
        The scores and how to read them.
    estimator : str
        ``estimator``: the expected-maximum estimator: v (Dodge et al. 2019, lowest MSE), u (unbiased, Tang et
        al. 2020), w, or a plug-in (its import path ``module.function``, or a name it registered), imported and
        tried on a tiny input when parsed (:func:`simstudy.plugins.check_estimator`).
    target : float or None
        ``target``: a score to reach: report the budget where each curve first reaches it. In score units.
    trial_time : float, tuple of (str, float) pairs, or None
        ``trial_time``: the average duration of one trial, for every model (0.2) or per model ({cnn: 0.2, lr:
        0.01}): puts time on the x axis. In ``time_unit`` per trial; a per-model mapping is parsed to ``(model,
        time)`` pairs.
    time_unit : str
        ``time_unit``: the unit of trial_time, for the axis label (e.g. hours).
    xscale : str
        ``xscale``: the x axis: log or linear.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your work: improved reporting
       of experimental results", EMNLP 2019.
    .. [2] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Expected validation performance and
       estimation of a random variable's maximum", 2021.

    Examples
    --------
    >>> from simstudy.commands.curve import parse
    >>> config = parse({"data": "runs.csv", "trial_time": {"cnn": 0.2, "lr": 0.01}})
    >>> config.estimator, config.trial_time, config.time_unit
    ('v', (('cnn', 0.2), ('lr', 0.01)), 'hours')
    """

    data: DataConfig
    estimator: str
    target: float | None
    trial_time: float | tuple[tuple[str, float], ...] | None
    time_unit: str
    xscale: str


def parse(cfg: Mapping) -> CurveConfig:
    """Validate the ``simstudy curve`` config (the keys of :class:`CurveOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    CurveConfig
        The data (cross-checked: ``model`` against ``models``, ``low`` below ``high``, ``sample_seed`` only
        with ``sample_size``) and the curve's settings.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value.

    Examples
    --------
    >>> parse({"data": "reuters_hedwig", "models": "lstm", "target": 0.4}).data.models
    ('lstm',)
    >>> parse({"data": "runs.csv", "estimatr": "u"})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: estimatr is not a setting of simstudy curve (settings: data, model, models, \
score_column, model_column, missing, scale, compare, sample_size, split, reduce, low, high, minimize, objective, \
metric, estimator, target, trial_time, time_unit, xscale, sample_seed; simstudy curve --help explains each)
    """
    o = command_iv(CurveOptions, "curve", cfg)
    return command_config(CurveConfig, o, data_config(o))


@dataclass(frozen=True)
class CurveResult:
    """What :func:`run` returns: the curves ``simstudy curve`` writes, in the scores' own units.

    Parameters
    ----------
    config : CurveConfig
        The validated settings the curves were computed with.
    curves : pandas.DataFrame
        The frame of curves.csv: one row per model and budget, columns ``model``, ``n`` (trials),
        ``expected_max`` (``expected_min`` with ``minimize=true``), ``std``, ``band_low``, ``band_high`` (the
        +/- 1 SD shading, clipped to the observed scores) and, with ``trial_time``, ``time``.
    targets : pandas.DataFrame or None
        The frame of targets.csv (with ``target``): where each model's curve first reaches it (``n`` NaN:
        never within its trials); None without a target.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import curve
    >>> result = curve.run({"data": "scores.csv"}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> result.best, result.curves["expected_max"].round(4).tolist()
    ('expected max', [0.3, 0.3444, 0.3667])
    """

    config: CurveConfig
    curves: pd.DataFrame
    targets: pd.DataFrame | None

    @property
    def best(self) -> str:
        """What the curves are: ``"expected max"``, or ``"expected min"`` with ``minimize=true``."""
        return "expected min" if self.config.data.minimize else "expected max"

    def _table(self) -> pd.DataFrame:
        """The curves with their value in ``expected_max`` (the column the figure and the table read)."""
        return self.curves.rename(columns={self.best.replace(" ", "_"): "expected_max"})


def run(config: CurveConfig | Mapping, scores: Mapping[str, np.ndarray] | None = None) -> CurveResult:
    """Compute ``simstudy curve``: each model's expected best score against the tuning budget.

    Parameters
    ----------
    config : CurveConfig or Mapping
        The settings, parsed (:func:`parse`) or as a mapping of keys to raw values (parsed here).
    scores : Mapping of str to array_like, optional
        Each model's scores, in score units, used as given (the data keys that read, select, scale and sample
        them are not applied). Default None: read from ``config.data``.

    Returns
    -------
    CurveResult
        The curves and, with a target, where each first reaches it, in the scores' own units.

    Raises
    ------
    ConfigError
        A setting is invalid, or the data keys do not fit the data (an unknown model, ...).
    DataError
        The scores cannot be read, or cannot give a curve (e.g. a model missing from ``trial_time``).

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import curve
    >>> scores = {"a": np.array([0.2, 0.4, 0.3]), "b": np.array([0.1, 0.5])}
    >>> result = curve.run({"data": "scores.csv", "target": 0.35}, scores)
    >>> result.targets[["model", "n"]].to_dict("list")
    {'model': ['a', 'b'], 'n': [3, 2]}
    """
    from simstudy import tables

    if not isinstance(config, CurveConfig):
        config = parse(config)
    found = read(config, scores)  # a tuning source's direction and i.i.d. check in config.data
    config, scores = found
    trial_time = dict(config.trial_time) if isinstance(config.trial_time, tuple) else config.trial_time
    builtin = config.estimator in estimators.CLOSED_FORM
    minimize = config.data.minimize  # the expected minimum (column expected_min), a target reached at or below
    try:
        table = tables.evp_curves(
            scores, method=config.estimator if builtin else "v", trial_time=trial_time, minimize=minimize
        )
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if not builtin:  # the plug-in's curve; the SD shading is the best of n's spread under the scores, as for u, v, w
        table = tables.plugin_curves(table, scores, config.estimator, minimize)
    reached = None
    if config.target is not None:
        reached = tables.budget_to_target(table, config.target, minimize=minimize)
    return CurveResult(config=config, curves=table, targets=reached)


def lines(result: CurveResult) -> list[str]:
    """The terminal summary of ``simstudy curve``: the curves at readable budgets, then the targets reached.

    Parameters
    ----------
    result : CurveResult
        What :func:`run` returned.

    Returns
    -------
    list of str
        The table (one string of several lines), then one line per model with a target.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import curve
    >>> result = curve.run({"data": "scores.csv", "target": 0.45}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> print("\\n".join(lines(result)))  # doctest: +NORMALIZE_WHITESPACE
    expected max of n trials ± its SD (the spread of the best of n runs; all n in curves.csv)
    model                a
    n
    1      0.3000 ± 0.0816
    2      0.3444 ± 0.0685
    3      0.3667 ± 0.0544
    a: expected max never reaches 0.45 within 3 trials
    """
    config, best, table, reached = result.config, result.best, result._table(), result.targets
    out = [_curve_table(table, best)]
    if reached is not None:
        x = "time" if config.trial_time is not None else "n"
        goal = f"{config.target:g}{' (at or below)' * config.data.minimize}"
        for _, row in reached.iterrows():
            if row["n"] != row["n"]:  # NaN: the curve never gets past the target up to the model's last trial
                trials = int(table.loc[table["model"] == row["model"], "n"].max())
                out.append(f"{row['model']}: {best} never reaches {goal} within {trials:,} trials")
                continue
            when = f" ({row['time']:.3g} {config.time_unit})" if x == "time" else ""
            out.append(f"{row['model']}: {best} first reaches {goal} at n = {int(row['n']):,}{when}")
    from simstudy.commands import _iid

    return out + _iid.lines(config.data)  # whether the scores read as random search (issue 36)


def write(result: CurveResult, out_dir: Path) -> list[Path]:
    """Write the files of ``simstudy curve``: figure.png/pdf, curves.parquet/csv, with a target targets.csv, and
    CURVE.md, the page of its ``report.html`` (the command line builds that page next).

    Parameters
    ----------
    result : CurveResult
        What :func:`run` returned.
    out_dir : pathlib.Path
        An existing directory; each file is written atomically (:mod:`simstudy.io`).

    Returns
    -------
    list of pathlib.Path
        The files written, in order.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from pathlib import Path
    >>> from simstudy.commands import curve
    >>> result = curve.run({"data": "scores.csv"}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write(result, Path(d))]
    ['figure.png', 'figure.pdf', 'curves.parquet', 'curves.csv', 'CURVE.md']
    """
    from simstudy.charts import to_matplotlib
    from simstudy.commands._pages import save_figures

    out_dir = Path(out_dir)
    written = save_figures({"figure": to_matplotlib(chart(result))}, out_dir)
    io.write_parquet(result.curves, out_dir / "curves.parquet")
    io.write_csv(result.curves, out_dir / "curves.csv")
    written += [out_dir / "curves.parquet", out_dir / "curves.csv"]
    if result.targets is not None:
        io.write_csv(result.targets, out_dir / "targets.csv")
        written.append(out_dir / "targets.csv")
    written.append(_page(result, out_dir / "CURVE.md"))
    return written


def _page(result: CurveResult, path: Path) -> Path:
    """CURVE.md: the data and settings, the terminal's summary, the figure (report.html shows it)."""
    from simstudy.commands import _iid
    from simstudy.commands._pages import command_page

    config = result.config
    models = sorted(set(result.curves["model"].astype(str)))
    about = [
        f"The {result.best} of n trials of random search (expected validation performance, Dodge et al. 2019) "
        f"for {len(models)} model(s) of `{config.data.data}`, estimator `{_estimator_name(config.estimator)}`, "
        f"n = 1 to each model's number of scores. The shading is ± 1 SD of the best of n runs (its spread, not "
        f"the estimate's error), clipped to the observed scores. Every n is in curves.csv.",
    ]
    about += _iid.page(config.data)  # whether the scores read as random search (issue 36)
    return command_page(path, f"simstudy curve: {Path(config.data.data).name}", about, lines(result), ["figure.png"])


def _estimator_name(estimator: str) -> str:
    """A built-in estimator as the papers name it (V); a plug-in as the user named it."""
    return estimator.upper() if estimator in estimators.CLOSED_FORM else estimator


def _table_number(x: float) -> str:
    """Four decimals for scores on a usual scale; four significant digits for large or tiny magnitudes (1e300
    printed as 300 digits)."""
    return f"{x:.4f}" if not np.isfinite(x) or x == 0 or 1e-3 <= abs(x) < 1e6 else f"{x:.4g}"


def _curve_table(table, best: str = "expected max") -> str:
    """Expected max (``best``: "expected min" with minimize=true) +/- SD per model at a readable set of budgets
    (all of them are in curves.csv)."""
    B = int(table["n"].max())
    shown = sorted({n for n in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if n <= B} | {B})
    t = table[table["n"].isin(shown)].copy()
    t["cell"] = t["expected_max"].map(_table_number) + " ± " + t["std"].map(_table_number)
    # Said above the table: the ± is the spread of the best of n runs, not the estimate's error.
    head = f"{best} of n trials ± its SD (the spread of the best of n runs; all n in curves.csv)"
    return head + "\n" + t.pivot(index="n", columns="model", values="cell").fillna("").to_string()


def chart(result: CurveResult) -> Chart:
    """The chart of ``simstudy curve``: its figure.png, and the chart of its ``report.html``.

    Each model's expected best of n trials (Dodge et al. 2019, Figs. 1-4) against the budget in trials (or time,
    with ``trial_time``), ± 1 SD shaded (clipped to the observed scores); with a target, the target dotted, and
    a dotted drop in the model's colour where each curve first reaches it (the legend names the models that never
    do). At most :data:`MAX_BUDGETS` budgets per model, spaced evenly on a log scale (curves.csv has every n).

    Parameters
    ----------
    result : CurveResult
        What :func:`run` returned (or :func:`report_charts` read back from a run directory).

    Returns
    -------
    simstudy.charts.Chart
        The description; :func:`simstudy.charts.to_matplotlib` draws the PNG, :func:`simstudy.chart_vega.to_vega`
        the report's chart.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP 2019, arXiv:1909.03004.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import curve
    >>> result = curve.run({"data": "scores.csv", "target": 0.35}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> described = chart(result)
    >>> described.title, described.xscale, [r.label for r in described.references]
    ('scores.csv: expected max (V) ± 1 SD', 'log', ['target 0.35 (dotted drops: where each model reaches it)', None])
    >>> described.rows[0]["shown"]
    '0.3 [0.2184, 0.3816]'
    """
    config, best, table = result.config, result.best, result._table()
    x = "time" if config.trial_time is not None else "n"
    kept = log_spaced(table["n"].to_numpy(dtype=float), MAX_BUDGETS)
    rows = []
    for model, k, est, lo, hi in zip(
        *(table[kept][c].tolist() for c in ("model", x, "expected_max", "band_low", "band_high"))
    ):
        if json_value(est) is None or json_value(k) is None or (config.xscale == "log" and k <= 0):
            continue
        point = {"hue": str(model), "x": k, "estimate": est, "shown": f"{est:.4g}"}
        if json_value(lo) is not None and json_value(hi) is not None:
            point.update(lo=lo, hi=hi, shown=f"{est:.4g} [{lo:.4g}, {hi:.4g}]")
        rows.append(point)
    references = []
    if config.target is not None:
        reached = result.targets
        never = [] if reached is None else [str(m) for m in reached.loc[reached[x].isna(), "model"]]
        words = f"target {config.target:g}" + (
            " (dotted drops: where each model reaches it)" if reached is not None else ""
        )
        references.append(
            Reference(
                config.target, label=words + (f"; never reached by {', '.join(never)}" if never else ""), grey=0.0
            )
        )
        if reached is not None:
            references += [
                Reference(float(at), axis="x", hue=str(model))
                for model, at in zip(reached["model"], reached[x])
                if json_value(at) is not None
            ]
    scale = ", log scale" if config.xscale == "log" else ""
    thinned = int(kept.size - kept.sum())
    return Chart(
        f"{Path(config.data.data).name}: {best} ({_estimator_name(config.estimator)}) ± 1 SD",
        tuple(rows),
        x=x,
        xlabel=f"time ({config.time_unit}){scale}" if x == "time" else "hyperparameter assignments (trials)",
        xscale=config.xscale,
        ylabel=f"{best} validation score",
        hue="model",
        interval=Interval("±1 SD (clipped to observed scores)", opacity=0.2),
        text=f"{best} [± 1 SD]",
        role="curve",
        size=(520, 320),
        note=f"{thinned:,} of the budgets not drawn (log-spaced; curves.csv has them all)" if thinned else None,
        references=tuple(references),
        inches=(5.5, 3.7),
        legend_columns=2,
    )


#: Budgets drawn per model at most (log-spaced): a curve of 10^6 trials is 10^6 rows, and the eye sees 300.
MAX_BUDGETS = 300


def report_charts(files) -> list[Chart]:
    """The chart ``report.html`` draws of ``simstudy curve``'s run directory: :func:`chart` of what it wrote.

    Parameters
    ----------
    files : simstudy.report_safe.Files
        The directory's files, read as data and only where they are its own.

    Returns
    -------
    list of simstudy.charts.Chart
        One chart, or none (no CURVE.md or curves.csv there, or a table refused or without its columns).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.report_safe import Files
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report_charts(Files(Path(d)))
    []
    """
    from simstudy.commands._pages import has_columns, saved_run

    found = saved_run(files, "CURVE.md", "curves.csv", "targets.csv", parse=parse)
    if found is None:
        return []
    config, (curves, targets) = found
    minimize = has_columns(curves, ["expected_min"])
    expected = "expected_min" if minimize else "expected_max"
    if not has_columns(curves, ["model", "n", "std", "band_low", "band_high", expected]):
        return []
    if config.trial_time is not None and "time" not in curves.columns:
        config = dataclasses.replace(config, trial_time=None)
    config = dataclasses.replace(config, data=dataclasses.replace(config.data, minimize=minimize))
    if config.target is None or not has_columns(targets, ["model", "n"]):
        targets = None
    return [chart(CurveResult(config=config, curves=curves, targets=targets))]


COMMAND = Command(
    "curve",
    page="CURVE.md",
    run=run,
    options=CurveOptions,
    parse=parse,
    write=write,
    lines=lines,
    charts=report_charts,
    usage="simstudy curve data=FILE|DATASET [key=value ...]",
    examples=(
        "simstudy curve data=results.csv target=0.395",
        "simstudy curve data=reuters_hedwig trial_time=0.2 time_unit=hours",
        "simstudy curve data=runs.csv missing=drop scale=0.01 models=[cnn,lr]",
    ),
    writes="outputs/curve/<overrides>/: figure.png/pdf, curves.csv/parquet, targets.csv (with target=), CURVE.md and "
    "report.html (the offline page)",
)
