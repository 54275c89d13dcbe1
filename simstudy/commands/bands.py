"""``simstudy bands``: confidence bands for the tuning curves and score CDFs of a researcher's own scores.

For each model in a results file or a shipped data set: simultaneous confidence bands for the CDF of its scores
and for its tuning curve (the median, a quantile or the mean of the best score after k iterations of random
search), after Lourie, Cho & He (2024), with the U and V point estimates of the mean tuning curve beside them;
for two models, the paper's weak/fair/strong evidence of which is ahead at each k (the command: :data:`COMMAND`)::

    from simstudy.commands import bands
    result = bands.run({"data": "deberta_mnli", "sample_size": 48})
    result.bands  # the frame of bands.csv

==================================  ======================================================================
:class:`BandsOptions`               the command's keys (a schema): defaults, ``--help`` text, checks
:class:`BandsConfig`                the keys validated and frozen
:func:`parse`                       a mapping of keys to a :class:`BandsConfig` (one-line ConfigError)
:func:`run`                         the bands, CDF bands and evidence as a :class:`BandsResult`
:func:`lines`                       the terminal summary: the bands at readable k, the evidence
:func:`write`                       the figures, the tables and BANDS.md (report.html's page)
:func:`charts`                      the charts: tuning_curve.png and cdf.png, and report.html's charts
:func:`tuning_curve_chart`          the tuning curves with their bands (and the U, V estimates)
:func:`cdf_chart`                   the empirical CDFs with their bands
:func:`report_charts`               those charts of a run directory (the command's ``charts``)
==================================  ======================================================================

Nothing here prints or exits (bad input: :class:`~simstudy.schema.ConfigError`, :class:`~simstudy.datasets.DataError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy import _limits, io, schema, schema_docs
from simstudy.charts import Chart, Interval, Note, Reference, View, json_value
from simstudy.commands._data import (
    CONFIDENCE_DOC,
    XSCALES,
    DataConfig,
    DataOptions,
    bands,
    command_config,
    command_iv,
    data_config,
    estimator_iv,
    read,
    sample_seed_option,
)
from simstudy.engine import memory
from simstudy.registry import Command
from simstudy.schema import ConfigError, option

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BandsOptions",
    "BandsConfig",
    "BandsResult",
    "parse",
    "run",
    "lines",
    "write",
    "charts",
    "tuning_curve_chart",
    "cdf_chart",
    "report_charts",
]


#: The budgets k at which the terminal shows the bands (all of them are in bands.csv), with the largest.
_SHOWN_K = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)


@schema_docs.documented()
@dataclass(frozen=True)
class BandsOptions(DataOptions):
    """The keys of ``simstudy bands`` (``configs/bands.yaml`` selects them): the data keys and the bands' own.

    :func:`parse` checks a mapping of them and returns a :class:`BandsConfig`. The bands are those of
    Lourie, Cho & He (2024), "Show your work with confidence: confidence bands for tuning curves".

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.commands.bands import BandsOptions
    >>> opts = schema.parse(BandsOptions, {"data": "scores.csv", "confidence": 0.9})
    >>> opts.confidence, opts.kind, opts.method
    (0.9, 'median', 'ld_highest_density')
    """

    confidence: float = option(0.8, CONFIDENCE_DOC, schema.level())
    kind: str = option(
        "median",
        "which tuning curve: median, quantile (with quantile=) or mean (needs finite low and high)",
        schema.choice(lambda: bands().KINDS),
    )
    quantile: float = option(0.5, "kind=quantile only: the quantile of the best score, e.g. 0.9", schema.level())
    method: str = option(
        "ld_highest_density",
        "the CDF band: ld_highest_density (narrowest), ld_equal_tailed, ks or dkw",
        schema.choice(lambda: bands().METHODS),
    )
    max_k: int | None = option(
        None, "draw budgets k = 1..max_k (default: the largest sample size)", schema.optional(schema.integer(minimum=1))
    )
    xscale: str = option(
        "log", "the tuning curve's x axis (k): log or linear (log, as simstudy curve)", schema.choice(XSCALES)
    )
    sample_seed: int | None = sample_seed_option()
    estimator: str | None = option(
        None,
        "a third point estimate of the mean tuning curve beside U and V: w, or a plug-in as in a study (its import "
        "path module.function or a name it registered); a column of bands.csv named as given",
        schema.optional(lambda key, value: estimator_iv(key, value, ("u", "v", "w"))),
        type_doc="str or None",
    )


@dataclass(frozen=True)
class BandsConfig:
    """``simstudy bands``: confidence bands for the CDF and tuning curve of each model's scores, as parsed.

    What :func:`parse` returns; the bands are those of Lourie, Cho & He (2024).

    Parameters
    ----------
    data : DataConfig
        The scores and how to read them.
    confidence : float
        ``confidence``: the simultaneous coverage of the bands, e.g. 0.8. A probability in (0, 1).
    kind : str
        ``kind``: which tuning curve: median, quantile (with quantile=) or mean (needs finite low and high).
    quantile : float
        ``quantile``: kind=quantile only: the quantile of the best score, e.g. 0.9. A probability in (0, 1).
    method : str
        ``method``: the CDF band: ld_highest_density (narrowest), ld_equal_tailed, ks or dkw.
    max_k : int or None
        ``max_k``: draw budgets k = 1..max_k (default: the largest sample size). In trials.
    xscale : str
        ``xscale``: the tuning curve's x axis (k): log or linear (log, as simstudy curve).
        For ``kind="median"`` it is 0.5.
    estimator : str or None, default None
        ``estimator``: a third point estimate of the mean tuning curve beside U and V: ``"w"`` or a plug-in
        (its import path ``module.function``, or a name it registered), tried on a tiny input when parsed.

    References
    ----------
    .. [1] N. Lourie, K. Cho and H. He, "Show your work with confidence: confidence bands for tuning curves",
       2024.

    Examples
    --------
    >>> from simstudy.commands.bands import parse
    >>> config = parse({"data": "scores.csv", "kind": "quantile", "quantile": 0.9})
    >>> config.kind, config.quantile, config.confidence, config.method
    ('quantile', 0.9, 0.8, 'ld_highest_density')
    """

    data: DataConfig
    confidence: float
    kind: str
    quantile: float
    method: str
    max_k: int | None
    xscale: str
    estimator: str | None = None


def parse(cfg: Mapping) -> BandsConfig:
    """Validate the ``simstudy bands`` config (the keys of :class:`BandsOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    BandsConfig
        ``quantile`` is 0.5 for ``kind="median"``.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value; ``kind=mean`` without finite ``low`` and ``high``;
        a ``max_k`` whose bands would not fit in memory (:func:`simstudy.config.check_memory`).

    Examples
    --------
    >>> parse({"data": "scores.csv", "low": 0, "high": 1, "kind": "mean"}).confidence
    0.8
    >>> parse({"data": "scores.csv", "confidence": 1.5})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: confidence must be a number strictly between 0 and 1, got 1.5
    """
    o = command_iv(BandsOptions, "bands", cfg)
    data = data_config(o)
    if o.kind == "mean" and not (np.isfinite(data.low) and np.isfinite(data.high)):
        raise ConfigError(
            "kind=mean needs finite low and high (e.g. low=0 high=1 for accuracy): without them "
            "the mean tuning curve's band is vacuous"
        )
    if o.max_k is not None:
        _limits.check_memory(
            "max_k", o.max_k, memory.BYTES_PER_K * o.max_k, f"the bands at k = 1..{o.max_k}, per model", "lower max_k"
        )
    return command_config(BandsConfig, o, data, quantile=0.5 if o.kind == "median" else o.quantile)


@dataclass(frozen=True)
class BandsResult:
    """What :func:`run` returns: the frames ``simstudy bands`` writes, in the scores' own units.

    Parameters
    ----------
    config : BandsConfig
        The validated settings the bands were computed with.
    bands : pandas.DataFrame
        The frame of bands.csv: one row per model and k = 1..max_k, columns ``model``, ``k``, ``point`` (the
        eCDF's tuning curve), ``lower``, ``upper`` (the simultaneous band), ``u``, ``v`` (the U and V estimates
        of the mean tuning curve; NaN beyond the model's sample size), ``kind``, ``quantile``, ``confidence``,
        ``method``.
    cdfs : pandas.DataFrame
        The frame of cdf_bands.csv: one row per model and distinct score, columns ``model``, ``score``,
        ``count``, ``ecdf``, ``lower``, ``upper``, ``confidence``, ``method``.
    evidence : pandas.DataFrame or None
        The frame of evidence.csv for exactly two models (the paper's weak/fair/strong heuristic at each k, and
        the model the U and V estimates put ahead: ``u_leader``, ``v_leader``); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import bands
    >>> result = bands.run({"data": "scores.csv", "method": "dkw"}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> result.bands[["k", "point", "u"]].round(4).values.tolist()
    [[1.0, 0.3, 0.3], [2.0, 0.4, 0.3667], [3.0, 0.4, 0.4]]
    >>> result.evidence is None
    True
    """

    config: BandsConfig
    bands: pd.DataFrame
    cdfs: pd.DataFrame
    evidence: pd.DataFrame | None


def run(config_: BandsConfig | Mapping, scores: Mapping[str, np.ndarray] | None = None) -> BandsResult:
    """Compute ``simstudy bands``: each model's tuning-curve and CDF bands, and the evidence between two models.

    Parameters
    ----------
    config_ : BandsConfig or Mapping
        The settings, parsed (:func:`parse`) or as a mapping of keys to raw values (parsed here).
    scores : Mapping of str to array_like, optional
        Each model's scores, in score units, used as given (the data keys that read, select, scale and sample
        them are not applied). Default None: read from ``config_.data``.

    Returns
    -------
    BandsResult
        The bands, the CDF bands and (for two models) the evidence, in the scores' own units.

    Raises
    ------
    ConfigError
        A setting is invalid, the data keys do not fit the data, or the bands would not fit in memory or
        would compute for longer than the time limit (``SIMSTUDY_MAX_MEMORY_GB``, ``SIMSTUDY_MAX_MINUTES``).
    DataError
        The scores cannot be read.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import bands
    >>> scores = {"a": np.array([0.2, 0.4, 0.3, 0.5]), "b": np.array([0.1, 0.6, 0.35, 0.45])}
    >>> result = bands.run({"data": "scores.csv", "low": 0, "high": 1, "method": "dkw"}, scores)
    >>> list(result.evidence.columns[-2:])
    ['u_leader', 'v_leader']
    """
    from simstudy import tables

    opts = config_ if isinstance(config_, BandsConfig) else parse(config_)
    opts, scores = read(opts, scores)  # a tuning source's direction and i.i.d. check in opts.data
    _cost_iv(opts, scores)
    curves, cdfs, evidence = tables.bands_tables(
        scores,
        confidence=opts.confidence,
        kind=opts.kind,
        method=opts.method,
        quantile=opts.quantile,
        low=opts.data.low,
        high=opts.data.high,
        estimator=opts.estimator,
        max_k=opts.max_k,
        minimize=opts.data.minimize,
    )
    return BandsResult(config=opts, bands=curves, cdfs=cdfs, evidence=evidence)


def lines(result: BandsResult) -> list[str]:
    """The terminal summary of ``simstudy bands``: the bands at readable k, then (two models) the evidence.

    Parameters
    ----------
    result : BandsResult
        What :func:`run` returned.

    Returns
    -------
    list of str
        The table of lower, point and upper by k and model (one string of several lines), then for two models
        the evidence summary and which model the V and U estimates put ahead.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import bands
    >>> result = bands.run({"data": "scores.csv", "method": "dkw"}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> print(lines(result)[0])  # doctest: +NORMALIZE_WHITESPACE
          lower point upper
    model     a     a     a
    k
    1      -inf   0.3   inf
    2       0.2   0.4   inf
    3       0.2   0.4   inf
    """
    from simstudy.stats import bands

    curves, evidence = result.bands, result.evidence
    max_k = int(curves["k"].max())
    shown = curves[curves["k"].isin([*_SHOWN_K, max_k])]
    out = [shown.pivot(index="k", columns="model", values=["lower", "point", "upper"]).round(4).to_string()]
    if evidence is not None:
        out += bands.evidence_summary(evidence)
        out.append("point estimates of the mean tuning curve (the model ahead at each k):")
        out += [bands.leader_summary(evidence["k"], evidence[f"{e}_leader"], e.upper()) for e in ("v", "u")]
    from simstudy.commands import _iid

    return out + _iid.lines(result.config.data)  # whether the scores read as random search (issue 36)


def charts(result: BandsResult) -> dict:
    """The charts of ``simstudy bands``: its PNGs (tuning_curve.png, cdf.png) and the charts of its
    ``report.html``, titled with the data, level and method.

    Parameters
    ----------
    result : BandsResult
        What :func:`run` returned (or :func:`report_charts` read back from a run directory).

    Returns
    -------
    dict of str to simstudy.charts.Chart
        ``"tuning_curve"`` (:func:`tuning_curve_chart`) and ``"cdf"`` (:func:`cdf_chart`; none where the
        result has no ``cdfs``): the files' stems.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.commands import bands
    >>> described = charts(bands.run({"data": "scores.csv", "method": "dkw"}, {"a": np.array([0.2, 0.4, 0.3])}))
    >>> described["cdf"].title
    'scores.csv: 80% DKW bands for the CDF of scores'
    """
    from simstudy.figures import method_label

    opts = result.config
    low, high, minimize = opts.data.low, opts.data.high, opts.data.minimize
    source = Path(opts.data.data).name
    label = f"{opts.kind}{'' if opts.kind != 'quantile' else f' ({opts.quantile:g})'} tuning curve"
    label += " (lower is better: the best is the minimum)" * minimize
    method = method_label(opts.method)
    out = {
        "tuning_curve": tuning_curve_chart(
            result.bands,
            low=low,
            high=high,
            xscale=opts.xscale,
            title=f"{source}: {opts.confidence:.0%} {method} bands, {label}",
            minimize=minimize,
        )
    }
    if result.cdfs is not None:  # a run directory read back without its cdf_bands.csv has none
        title = f"{source}: {opts.confidence:.0%} {method} bands for the CDF of scores"
        out["cdf"] = cdf_chart(result.cdfs, low=low, high=high, title=title)
    return out


def write(result: BandsResult, out_dir: Path) -> list[Path]:
    """Write the files of ``simstudy bands``: bands.parquet/csv, cdf_bands.csv, the figures, evidence.csv, and
    BANDS.md, the page of its ``report.html`` (the command line builds that page next).

    Parameters
    ----------
    result : BandsResult
        What :func:`run` returned.
    out_dir : pathlib.Path
        An existing directory; each file is written atomically (:mod:`simstudy.io`).

    Returns
    -------
    list of pathlib.Path
        The files written, in order (evidence.csv for two models only).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from pathlib import Path
    >>> from simstudy.commands import bands
    >>> result = bands.run({"data": "scores.csv", "method": "dkw"}, {"a": np.array([0.2, 0.4, 0.3])})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     [p.name for p in write(result, Path(d))]
    ['bands.parquet', 'bands.csv', 'cdf_bands.csv', 'tuning_curve.png', 'cdf.png', 'tuning_curve.pdf', 'cdf.pdf', \
'BANDS.md']
    """
    from simstudy.charts import to_matplotlib
    from simstudy.commands._pages import save_figures

    out_dir = Path(out_dir)
    io.write_parquet(result.bands, out_dir / "bands.parquet")
    io.write_csv(result.bands, out_dir / "bands.csv")
    io.write_csv(result.cdfs, out_dir / "cdf_bands.csv")
    written = [out_dir / "bands.parquet", out_dir / "bands.csv", out_dir / "cdf_bands.csv"]
    written += save_figures({stem: to_matplotlib(chart) for stem, chart in charts(result).items()}, out_dir)
    if result.evidence is not None:
        io.write_csv(result.evidence, out_dir / "evidence.csv")
        written.append(out_dir / "evidence.csv")
    written.append(_page(result, out_dir / "BANDS.md"))
    return written


def _page(result: BandsResult, path: Path) -> Path:
    """BANDS.md: the data and settings, the terminal's summary, the figures (report.html shows it)."""
    from simstudy.commands._pages import command_page, lvl
    from simstudy.stats import bands

    opts = result.config
    curve = f"{opts.kind}{'' if opts.kind != 'quantile' else f' ({opts.quantile:g})'} tuning curve"
    about = [
        f"Simultaneous {lvl(opts.confidence)} confidence bands ({bands.METHOD_LABELS[opts.method]}; Lourie, Cho & "
        f"He 2024) for the {curve} and the CDF of the scores of each model of `{opts.data.data}`, at k = 1 to "
        f"{int(result.bands['k'].max()):,}; beside them the U and V point estimates of the mean tuning curve. "
        f"Every k is in bands.csv, every score's CDF band in cdf_bands.csv.",
    ]
    from simstudy.commands import _iid

    about += _iid.page(opts.data)  # whether the scores read as random search (issue 36)
    title = f"simstudy bands: {Path(opts.data.data).name}"
    return command_page(path, title, about, lines(result), ["tuning_curve.png", "cdf.png"])


def _cost_iv(config_: BandsConfig, scores: Mapping[str, np.ndarray]) -> None:
    """Refuse at once, with the estimates, bands that would not fit in memory or would compute for longer than
    the time limit: the exact LD intervals cost about n^2 (10^6 scores: days), the other methods n log n."""
    from simstudy.stats.boundary import ld_seconds

    n = max(x.size for x in scores.values())
    max_k = config_.max_k or n
    nbytes = memory.BYTES_PER_K * max_k * len(scores)
    _limits.check_memory(
        "max_k", max_k, nbytes, f"the bands at k = 1..{max_k:,} of {len(scores)} model(s)", "set max_k lower"
    )
    if config_.method.startswith("ld_"):
        kind = config_.method.removeprefix("ld_")
        seconds = sum(ld_seconds(m, config_.confidence, kind) for m in {x.size for x in scores.values()})
        _limits.check_time(
            "method",
            config_.method,
            seconds,
            f"the exact intervals for {n:,} scores, about n^2 work; memory about {_limits.size(nbytes)}",
            "method=dkw or method=ks (closed forms, seconds), or sample_size=N for fewer scores",
        )


def _trivial_runs(c: pd.DataFrame, low: float, high: float, minimize: bool = False):
    """Where one model's bands say nothing: the first k from which the upper band is at ``high`` (or +inf)
    and the last k up to which the lower band is at ``low`` (or -inf), each as ``(k, bound)``, else None.
    ``minimize``: the curve of the minimum falls with k, so the last k up to which the upper band is trivial and
    the first k from which the lower one is."""
    k = c["k"].to_numpy()
    up = c["upper"].to_numpy() >= high  # +inf >= high always
    down = c["lower"].to_numpy() <= low
    first, last = (np.max, np.min) if minimize else (np.min, np.max)
    upper = (first(k[up]), high) if up.any() else None
    lower = (last(k[down]), low) if down.any() else None
    return upper, lower


def _bound_text(value: float) -> str:
    return f"{value:g}" if np.isfinite(value) else ("∞" if value > 0 else "−∞")


def tuning_curve_chart(
    curves: pd.DataFrame,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    xscale: str = "linear",
    title: str = "",
    minimize: bool = False,
) -> Chart:
    """Tuning curves with simultaneous confidence bands, all models on one panel (Lourie et al. 2024, Figs. 2-3).

    With columns ``u`` and ``v``, the point estimates of the mean tuning curve are drawn in a panel beside it
    (Fig. 1): V solid, U dashed, the ``estimator`` asked for (a column after ``v``) dotted. The bands' y axis
    zooms on their informative part. Where a band is trivial -- the upper band at ``high`` (or infinite), the
    lower at ``low``: the data cannot bound the curve there -- the chart says so: a dotted line in the model's
    colour caps the band at the edge of the view and the legend gives the budgets, e.g. "upper band trivial (= 1)
    for k ≥ 9"; the band is shaded only where both sides bound the curve, the side that still does drawn thin. The
    bounds ``low``/``high`` are drawn as grey dotted lines when they are in view and named in a corner when they
    are beyond it.

    Parameters
    ----------
    curves : pandas.DataFrame
        One row per model and k (iterations of random search): columns ``model``, ``k``, ``point``,
        ``lower``, ``upper`` (score units; the bands may be infinite); optionally ``confidence`` (in (0, 1))
        and ``method`` (named in the legend's band entry), ``kind`` (e.g. ``"median"``, named in the panel's
        title), and ``u`` and ``v``: the U- and V-statistic estimates of the mean tuning curve (NaN beyond the
        sample size).
    low, high : float, keyword-only
        The bounds of the scores (may be infinite). Default -inf and inf.
    xscale : {"linear", "log"}, keyword-only, default "linear"
        The k axis' scale.
    title : str, optional, keyword-only
        The chart's title. Default "".
    minimize : bool, keyword-only, default False
        True: the curves are of the minimum (lower is better; ``simstudy bands minimize=true``), so they fall
        with k: the upper band is trivial up to a budget, the lower one from a budget on.

    Returns
    -------
    simstudy.charts.Chart
        One panel, or two with ``u`` and ``v`` (point estimates left, bands right); steps held to the next k.

    Raises
    ------
    ValueError
        If ``xscale`` is neither ``"linear"`` nor ``"log"``.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import pandas as pd
    >>> curves = pd.DataFrame(
    ...     {"model": "a", "k": [1, 2, 3, 4], "point": [0.6, 0.7, 0.75, 0.78], "lower": [0.5, 0.6, 0.65, 0.7],
    ...      "upper": [0.7, 0.8, 1.0, 1.0]}
    ... )
    >>> chart = tuning_curve_chart(curves, low=0.0, high=1.0)
    >>> [r.label for r in chart.references], [n.text for n in chart.notes]
    (['a: upper band trivial (= 1) for k ≥ 3'], ['↑ bound 1 (beyond the view)', '↓ bound 0 (beyond the view)'])
    """

    from simstudy.figures import method_label

    estimates = {"u", "v"} <= set(curves.columns)
    kind = curves["kind"].iloc[0] if "kind" in curves else None
    curve_name = f"{kind} tuning curve" if kind else "tuning curve"
    points = ("point estimates of the mean tuning curve",)
    panel = (f"confidence bands for the {kind} tuning curve" if kind else "confidence bands",) if estimates else ()
    values = curves[["point", "lower", "upper"]].to_numpy(dtype=float)
    finite = values[np.isfinite(values) & (values > low) & (values < high)]
    if finite.size == 0:
        finite = curves["point"].to_numpy(dtype=float)
    span = finite.max() - finite.min() or 1.0
    bottom, top = finite.min() - 0.05 * span, finite.max() + 0.05 * span
    # A bound close to the data is shown as a line in view; a far one is named in a corner instead.
    high_in_view = bool(np.isfinite(high) and high <= top + 0.15 * span)
    low_in_view = bool(np.isfinite(low) and low >= bottom - 0.15 * span)
    cap_top = high if high_in_view else top  # where a trivial upper band is drawn to
    cap_bottom = low if low_in_view else bottom
    rows, references = [], []
    up_from, down_to = ("≤", "≥") if minimize else ("≥", "≤")  # the minimum's curve falls with k
    for model in dict.fromkeys(curves["model"]):
        c = curves[curves["model"] == model].sort_values("k")
        if estimates:  # Lourie et al.'s Figure 1, left: each model's V and U estimates and the one asked for
            columns = list(c.columns)
            asked = columns[columns.index("v") + 1 : columns.index("kind")] if "kind" in columns else []
            for estimator in ("v", "u", *asked):
                style = _ESTIMATOR_WORDS.get(estimator, estimator)
                for k, value in zip(c["k"].tolist(), c[estimator].tolist()):
                    if json_value(value) is not None:
                        point = {"x": k, "estimate": value, "shown": f"{value:.4g}", "hue": str(model)}
                        rows.append({**point, "style": style, "facet": points})
        lo_trivial = ~(c["lower"] > low).to_numpy()
        hi_trivial = ~(c["upper"] < high).to_numpy()
        for k, point, lo, hi, lo_t, hi_t in zip(
            c["k"].tolist(), c["point"].tolist(), c["lower"].tolist(), c["upper"].tolist(), lo_trivial, hi_trivial
        ):
            row = {"x": k, "estimate": point, "hue": str(model), "shown": f"{point:.4g} [{lo:.4g}, {hi:.4g}]"}
            if not lo_t:
                row["lo"] = float(np.clip(lo, cap_bottom, cap_top))
            if not hi_t:
                row["hi"] = float(np.clip(hi, cap_bottom, cap_top))
            rows.append({**row, "facet": panel} if panel else row)
        upper, lower = _trivial_runs(c, low, high, minimize)
        k_max, k_min = float(c["k"].max()), float(c["k"].min())
        if upper is not None:
            references.append(
                Reference(
                    cap_top,
                    hue=str(model),
                    width=1.6,
                    span=(k_min, float(upper[0])) if minimize else (float(upper[0]), k_max),
                    label=f"{model}: upper band trivial (= {_bound_text(high)}) for k {up_from} {upper[0]:g}",
                    panel=panel or None,
                )
            )
        if lower is not None:
            references.append(
                Reference(
                    cap_bottom,
                    hue=str(model),
                    width=1.6,
                    span=(float(lower[0]), k_max) if minimize else (k_min, float(lower[0])),
                    label=f"{model}: lower band trivial (= {_bound_text(low)}) for k {down_to} {lower[0]:g}",
                    panel=panel or None,
                )
            )
    notes = []
    for value, in_view, side in ((high, high_in_view, "upper"), (low, low_in_view, "lower")):
        if in_view:
            references.append(
                Reference(value, grey=0.4, note=f"{side} bound of the scores: {value:g}", panel=panel or None)
            )
        elif np.isfinite(value):
            arrow = "↑" if side == "upper" else "↓"
            notes.append(Note(f"{arrow} bound {value:g} (beyond the view)", f"{side} right", panel or None))
    pad = 0.04 * span
    # A note's line of 7-point text, in data units: the axes are at least half the figure's height once the
    # legend below has its room, so 12 points of it are at most this much of the view (room kept for the note).
    view = max(top, cap_top) - min(bottom, cap_bottom) + 2 * pad
    share = 12.0 / (0.5 * _INCHES[1] * 72.0)
    room = view * share / (1 - 2 * share)
    noted = {
        side: bool(np.isfinite(v) and not shown)
        for v, shown, side in ((high, high_in_view, "top"), (low, low_in_view, "bottom"))
    }
    y = (
        min(bottom, cap_bottom - (max(pad, room) if noted["bottom"] else pad)),
        max(top, cap_top + (max(pad, room) if noted["top"] else pad)),
    )
    band = "simultaneous band"
    if "confidence" in curves and "method" in curves:
        band = f"{float(curves['confidence'].iloc[0]):.0%} simultaneous band ({method_label(curves['method'].iloc[0])})"
    views = [View(panel, y=y, ylabel="best score after k iterations")]
    if estimates:
        views.insert(0, View(points, ylabel="expected best score after k iterations", line="straight"))
    return Chart(
        title,
        tuple(rows),
        x="k",
        xlabel="k (iterations of random search)",
        xscale=xscale,
        ylabel="best score after k iterations",
        hue="model",
        facets=("panel",) if estimates else (),
        panel_keys=False,
        interval=Interval(band, opacity=0.22),
        text=f"{curve_name} [{band}]",
        styles="estimator" if estimates else None,
        role="curve",
        columns=2,
        size=(420, 300),
        line="step",
        series=f": {curve_name}",
        references=tuple(references),
        notes=tuple(notes),
        views=tuple(views),
        inches=(5.0, _INCHES[1]) if estimates else _INCHES,
        legend_columns=2,
    )


#: A panel of the bands' PNGs, in inches (the legend below adds its room).
_INCHES = (5.5, 4.0)

#: The point estimates of the mean tuning curve, as the legend names them.
_ESTIMATOR_WORDS = {"v": "V-statistic (Dodge et al. 2019)", "u": "U-statistic (Tang et al. 2020)", "w": "W-statistic"}


def cdf_chart(cdfs: pd.DataFrame, *, low: float = -np.inf, high: float = np.inf, title: str = "") -> Chart:
    """Empirical CDFs with their simultaneous confidence bands, all models on one panel.

    The x axis zooms on the scores (a little beyond the smallest and largest); each CDF runs from 0 at the left
    edge of the view to 1 at its right, in steps, its band held to the edges. The bounds ``low``/``high`` are
    drawn as dotted lines when they fall in view and named in a corner (upper left, lower right: where a CDF
    leaves room) either way.

    Parameters
    ----------
    cdfs : pandas.DataFrame
        One row per model and order statistic: columns ``model``, ``score`` (score units), ``ecdf``,
        ``lower``, ``upper`` (probabilities in [0, 1]: the band values at each order statistic,
        right-continuous); optionally ``confidence`` and ``method`` (named in the legend).
    low, high : float, keyword-only
        The bounds of the scores (may be infinite). Default -inf and inf.
    title : str, optional, keyword-only
        The chart's title. Default "".

    Returns
    -------
    simstudy.charts.Chart
        One panel: score against cumulative probability.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import pandas as pd
    >>> cdfs = pd.DataFrame(
    ...     {"model": "a", "score": [0.6, 0.7, 0.8], "ecdf": [1 / 3, 2 / 3, 1.0], "lower": [0.0, 0.1, 0.4],
    ...      "upper": [0.6, 0.9, 1.0]}
    ... )
    >>> chart = cdf_chart(cdfs, low=0.0, high=1.0)
    >>> chart.xlabel, chart.ylabel, [n.text for n in chart.notes]
    ('score', 'cumulative probability', ['← bound 0 (beyond the view)', 'bound 1 → (beyond the view)'])
    """
    from simstudy.figures import method_label

    s_min, s_max = float(cdfs["score"].min()), float(cdfs["score"].max())
    pad = 0.05 * (s_max - s_min or abs(s_max) or 1.0)
    left, right = s_min - pad, s_max + pad
    # A bound near the scores is shown (a dotted line) rather than cut off just beyond the view.
    low_in_view = bool(np.isfinite(low) and low >= s_min - 3 * pad)
    high_in_view = bool(np.isfinite(high) and high <= s_max + 3 * pad)
    if low_in_view:
        left = low - 0.3 * pad
    if high_in_view:
        right = high + 0.3 * pad
    rows = []
    for model in dict.fromkeys(cdfs["model"]):
        c = cdfs[cdfs["model"] == model].sort_values("score")
        rows.append({"x": left, "estimate": 0.0, "hue": str(model), "shown": "0"})
        last = None
        for score, ecdf, lo, hi in zip(*(c[k].tolist() for k in ("score", "ecdf", "lower", "upper"))):
            last = {"lo": lo, "hi": hi}
            rows.append(
                {"x": score, "estimate": ecdf, "hue": str(model), "shown": f"{ecdf:.3g} [{lo:.3g}, {hi:.3g}]", **last}
            )
        # to the right edge: the eCDF is 1 there, the band keeps its last values
        rows.append({"x": right, "estimate": 1.0, "hue": str(model), "shown": "1", **(last or {})})
    references, notes = [], []
    for value, in_view, side in ((low, low_in_view, "left"), (high, high_in_view, "right")):
        if in_view:
            references.append(Reference(value, axis="x", grey=0.4))
        if np.isfinite(value):
            beyond = f"← bound {value:g}" if side == "left" else f"bound {value:g} →"
            text = f"bound {value:g}" if in_view else f"{beyond} (beyond the view)"
            notes.append(Note(text, "upper left" if side == "left" else "lower right"))
    band = "simultaneous confidence band"
    if "confidence" in cdfs and "method" in cdfs:
        band = f"{float(cdfs['confidence'].iloc[0]):.0%} simultaneous band ({method_label(cdfs['method'].iloc[0])})"
    return Chart(
        title,
        tuple(rows),
        x="score",
        ylabel="cumulative probability",
        xlabel="score",
        hue="model",
        interval=Interval(band, opacity=0.22),
        text=f"empirical CDF [{band}]",
        role="curve",
        size=(520, 320),
        line="step",
        series=": empirical CDF of the scores",
        references=tuple(references),
        notes=tuple(notes),
        views=(View(x=(left, right), y=(0.0, 1.0)),),
        inches=_INCHES,
        legend_columns=2,
    )


def report_charts(files) -> list[Chart]:
    """The charts ``report.html`` draws of ``simstudy bands``' run directory: :func:`charts` of what it wrote.

    Parameters
    ----------
    files : simstudy.report_safe.Files
        The directory's files, read as data and only where they are its own.

    Returns
    -------
    list of simstudy.charts.Chart
        The tuning curves' chart and, where cdf_bands.csv is there, the CDFs'; none without BANDS.md or bands.csv
        (or a table refused or without its columns).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.report_safe import Files
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report_charts(Files(Path(d)))
    []
    """
    from simstudy.commands._pages import has_columns, saved_run

    found = saved_run(files, "BANDS.md", "bands.csv", "cdf_bands.csv", parse=parse)
    if found is None:
        return []
    config, (curves, cdfs) = found
    if not has_columns(curves, ["model", "k", "point", "lower", "upper"]) or not len(curves):
        return []
    if not has_columns(cdfs, ["model", "score", "ecdf", "lower", "upper"]) or not len(cdfs):
        cdfs = None
    saved = BandsResult(config=config, bands=curves, cdfs=cdfs, evidence=None)  # None: not saved
    return list(charts(saved).values())


COMMAND = Command(
    "bands",
    page="BANDS.md",
    run=run,
    options=BandsOptions,
    parse=parse,
    write=write,
    lines=lines,
    charts=report_charts,
    usage="simstudy bands data=FILE|DATASET [key=value ...]",
    examples=(
        "simstudy bands data=scores.csv confidence=0.8 kind=median low=0 high=1",
        "simstudy bands data=deberta_mnli sample_size=48 confidence=0.8     # Lourie et al. Figure 2",
        "simstudy bands data=reuters_hedwig sample_size=25 sample_seed=30 confidence=0.5 low=0 high=1   # Figure 1, "
        "top (sample_seed=0: bottom)",
    ),
    writes="outputs/bands/<overrides>/: tuning_curve.png/pdf (U and V point estimates beside the bands), cdf.png/pdf, "
    "bands.csv/parquet, cdf_bands.csv, for two models evidence.csv, BANDS.md and report.html (the offline page)",
)
