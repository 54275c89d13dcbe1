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
:func:`tuning_curve_bands_figure`   the tuning curves with their bands (and the U, V estimates)
:func:`cdf_bands_figure`            the empirical CDFs with their bands
:data:`BANDS_CHART`                 the chart of bands.csv in report.html (the command's ``charts``)
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
    sample_seed_option,
    scores_of,
)
from simstudy.commands._pages import CurvesChart
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
    "figures",
    "tuning_curve_bands_figure",
    "cdf_bands_figure",
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
    scores = scores_of(opts.data, scores)
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
    return out


def figures(result: BandsResult) -> dict:
    """The figures ``simstudy bands`` writes: the tuning curves' bands and the CDFs' bands, titled.

    Parameters
    ----------
    result : BandsResult
        What :func:`run` returned.

    Returns
    -------
    dict of str to matplotlib.figure.Figure
        ``"tuning_curve"`` (:func:`tuning_curve_bands_figure`) and ``"cdf"`` (:func:`cdf_bands_figure`): the
        files' stems.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from simstudy.commands import bands
    >>> figs = figures(bands.run({"data": "scores.csv", "method": "dkw"}, {"a": np.array([0.2, 0.4, 0.3])}))
    >>> figs["cdf"].axes[0].get_title()
    'scores.csv: 80% DKW bands for the CDF of scores'
    >>> for fig in figs.values():
    ...     plt.close(fig)
    """
    from simstudy.stats import bands

    opts = result.config
    low, high, minimize = opts.data.low, opts.data.high, opts.data.minimize
    source = Path(opts.data.data).name
    label = f"{opts.kind}{'' if opts.kind != 'quantile' else f' ({opts.quantile:g})'} tuning curve"
    label += " (lower is better: the best is the minimum)" * minimize
    method = bands.METHOD_LABELS[opts.method]
    return {
        "tuning_curve": tuning_curve_bands_figure(
            result.bands,
            low=low,
            high=high,
            xscale=opts.xscale,
            title=f"{source}: {opts.confidence:.0%} {method} bands, {label}",
            minimize=minimize,
        ),
        "cdf": cdf_bands_figure(
            result.cdfs,
            low=low,
            high=high,
            title=f"{source}: {opts.confidence:.0%} {method} bands for the CDF of scores",
        ),
    }


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
    from simstudy.commands._pages import save_figures

    out_dir = Path(out_dir)
    io.write_parquet(result.bands, out_dir / "bands.parquet")
    io.write_csv(result.bands, out_dir / "bands.csv")
    io.write_csv(result.cdfs, out_dir / "cdf_bands.csv")
    written = [out_dir / "bands.parquet", out_dir / "bands.csv", out_dir / "cdf_bands.csv"]
    written += save_figures(figures(result), out_dir)
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


def tuning_curve_bands_figure(
    curves: pd.DataFrame,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    xscale: str = "linear",
    title: str | None = None,
    minimize: bool = False,
):
    """Tuning curves with simultaneous confidence bands, all models on one plot (Lourie et al. 2024, Figs. 2-3).

    With columns ``u`` and ``v``, the point estimates of the mean tuning curve are drawn in a panel beside it
    (Fig. 1). The y axis zooms on the informative part of the bands. Where a band is trivial -- the upper band
    at ``high`` (or infinite), the lower at ``low``: the data cannot bound the curve there -- the figure says
    so: a dotted line in the model's colour caps the band at the edge of the view and the legend gives the
    budgets, e.g. "upper band trivial (= 1) for k ≥ 9". The bounds ``low``/``high`` are drawn as grey dotted
    lines when they are in view and named at the edge when they are beyond it.

    Parameters
    ----------
    curves : pandas.DataFrame
        One row per model and k (iterations of random search): columns ``model``, ``k``, ``point``,
        ``lower``, ``upper`` (score units; the bands may be infinite); optionally ``confidence`` (in (0, 1))
        and ``method`` (named in the legend's band entry), ``kind`` (e.g. ``"median"``, named in the title),
        and ``u`` and ``v``: the U- and V-statistic estimates of the mean tuning curve (NaN beyond the sample
        size), drawn in a left panel as Lourie et al.'s Figure 1 does.
    low : float, keyword-only, default -inf
        Lower bound of the scores (may be infinite).
    high : float, keyword-only, default inf
        Upper bound of the scores (may be infinite).
    xscale : {"linear", "log"}, keyword-only, default "linear"
        The k axis' scale.
    title : str, optional, keyword-only
        Wrapped to the figure's width. Default None: no title (with the point-estimate panel, a panel title).
    minimize : bool, keyword-only, default False
        True: the curves are of the minimum (lower is better; ``simstudy bands minimize=true``), so they fall
        with k: the upper band is trivial up to a budget, the lower one from a budget on.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, or two with ``u`` and ``v`` (point estimates left, bands right); the legend below.

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
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> curves = pd.DataFrame(
    ...     {"model": "a", "k": [1, 2, 3, 4], "point": [0.6, 0.7, 0.75, 0.78], "lower": [0.5, 0.6, 0.65, 0.7],
    ...      "upper": [0.7, 0.8, 1.0, 1.0]}
    ... )
    >>> fig = tuning_curve_bands_figure(curves, low=0.0, high=1.0)
    >>> [t.get_text().replace("\\n", " ") for t in fig.legends[0].get_texts()]
    ['a: tuning curve', 'simultaneous band', 'a: upper band trivial (= 1) for k ≥ 3', "thin line: the band's side that still bounds the curve"]
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.lines import Line2D

    from simstudy.charts import (
        axes_title,
        colorblind,
        labels,
        legend,
        set_xscale,
        shade_patch,
        suptitle,
        theme,
        xscale_iv,
    )
    from simstudy.figures import method_label

    xscale_iv(xscale)
    theme()
    models = list(dict.fromkeys(curves["model"]))
    palette = dict(zip(models, colorblind(len(models))))
    estimates = {"u", "v"} <= set(curves.columns)
    if estimates:
        fig, (ax_point, ax) = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
        _point_estimates_panel(ax_point, curves, models, palette, xscale)
    else:
        fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
    values = curves[["point", "lower", "upper"]].to_numpy()
    finite = values[np.isfinite(values) & (values > low) & (values < high)]
    if finite.size == 0:
        finite = curves["point"].to_numpy()
    span = finite.max() - finite.min() or 1.0
    bottom, top = finite.min() - 0.05 * span, finite.max() + 0.05 * span
    # A bound close to the data is shown as a line in view; a far one is named at the edge instead.
    high_in_view = np.isfinite(high) and high <= top + 0.15 * span
    low_in_view = np.isfinite(low) and low >= bottom - 0.15 * span
    cap_top = high if high_in_view else top  # where a trivial upper band is drawn to
    cap_bottom = low if low_in_view else bottom
    kind = curves["kind"].iloc[0] if "kind" in curves else None
    curve_name = f"{kind} tuning curve" if kind else "tuning curve"
    extra = []
    one_sided = False
    for model in models:
        c = curves[curves["model"] == model].sort_values("k")
        ax.plot(
            c["k"], c["point"], color=palette[model], lw=1.8, label=f"{model}: {curve_name}", drawstyle="steps-post"
        )
        # Shaded only where both sides bound the curve: where a side is trivial (at the bound) a shade up to the
        # edge of the view would be a rectangle hiding the other models' bands; the side that still bounds the
        # curve is drawn as a thin line, and the trivial one as a dotted line at the edge (below).
        lo_trivial = ~(c["lower"] > low).to_numpy()
        hi_trivial = ~(c["upper"] < high).to_numpy()
        both = ~(lo_trivial | hi_trivial)
        # A step drawn post runs through the next k: there, hold the last bounded values (no spike to the cap).
        through = both | np.append(False, both[:-1])
        held = pd.DataFrame({"lower": c["lower"].where(both), "upper": c["upper"].where(both)}).ffill()
        ax.fill_between(
            c["k"],
            np.clip(held["lower"], cap_bottom, cap_top),
            np.clip(held["upper"], cap_bottom, cap_top),
            where=through,
            color=palette[model],
            alpha=0.22,
            lw=0,
            step="post",
        )
        for side, trivial in ((c["lower"], lo_trivial), (c["upper"], hi_trivial)):
            alone = ~trivial & (lo_trivial | hi_trivial)
            ax.plot(
                c["k"],
                np.where(alone, np.clip(side, cap_bottom, cap_top), np.nan),
                color=palette[model],
                lw=0.9,
                drawstyle="steps-post",
            )
            one_sided = one_sided or bool(alone.any())
        upper, lower = _trivial_runs(c, low, high, minimize)
        k_max, k_min = float(c["k"].max()), float(c["k"].min())
        up_from, down_to = ("≤", "≥") if minimize else ("≥", "≤")  # the minimum's curve falls with k
        if upper is not None:
            ax.hlines(
                cap_top, *((k_min, upper[0]) if minimize else (upper[0], k_max)), color=palette[model], ls=":", lw=1.6
            )
            extra.append(
                Line2D(
                    [],
                    [],
                    color=palette[model],
                    ls=":",
                    lw=1.6,
                    label=f"{model}: upper band trivial (= {_bound_text(high)}) for k {up_from} {upper[0]:g}",
                )
            )
        if lower is not None:
            ax.hlines(
                cap_bottom,
                *((lower[0], k_max) if minimize else (k_min, lower[0])),
                color=palette[model],
                ls=":",
                lw=1.6,
            )
            extra.append(
                Line2D(
                    [],
                    [],
                    color=palette[model],
                    ls=":",
                    lw=1.6,
                    label=f"{model}: lower band trivial (= {_bound_text(low)}) for k {down_to} {lower[0]:g}",
                )
            )
    for value, in_view, where in ((high, high_in_view, "top"), (low, low_in_view, "bottom")):
        if in_view:
            ax.axhline(value, color="0.4", ls=(0, (1, 3)), lw=1)
            ax.annotate(
                f"{'upper' if where == 'top' else 'lower'} bound of the scores: {value:g}",
                (0.01, value),
                xycoords=("axes fraction", "data"),
                va="bottom" if where == "top" else "top",
                ha="left",
                fontsize=7,
                color="0.3",
                xytext=(0, 2 if where == "top" else -2),
                textcoords="offset points",
            )
        elif np.isfinite(value):
            # Outside the cap line (above the top one, below the bottom one), in room the y limits keep for it:
            # nothing is drawn beyond a cap, so the note never overprints a curve or a band.
            arrow = "↑" if where == "top" else "↓"
            ax.annotate(
                f"{arrow} bound {value:g} (beyond the view)",
                (0.99, cap_top if where == "top" else cap_bottom),
                xycoords=("axes fraction", "data"),
                xytext=(0, 1.5 if where == "top" else -1.5),
                textcoords="offset points",
                ha="right",
                va="bottom" if where == "top" else "top",
                fontsize=7,
                color="0.3",
            )
    pad = 0.04 * span
    # A note's line of 7-point text, in data units: the axes are at least half the figure's height once the
    # legend below has its room (constrained layout), so 12 points of it are at most this much of the view.
    view = max(top, cap_top) - min(bottom, cap_bottom) + 2 * pad
    room = view * 12.0 / (0.5 * fig.get_figheight() * 72.0) / (1 - 2 * 12.0 / (0.5 * fig.get_figheight() * 72.0))
    noted = {
        w: bool(np.isfinite(v) and not shown)
        for v, shown, w in ((high, high_in_view, "top"), (low, low_in_view, "bottom"))
    }
    ax.set_ylim(
        min(bottom, cap_bottom - (max(pad, room) if noted["bottom"] else pad)),
        max(top, cap_top + (max(pad, room) if noted["top"] else pad)),
    )
    set_xscale(ax, xscale)
    labels(ax, xlabel="k (iterations of random search)", ylabel="best score after k iterations")
    band = "simultaneous band"
    if "confidence" in curves and "method" in curves:
        band = f"{float(curves['confidence'].iloc[0]):.0%} simultaneous band ({method_label(curves['method'].iloc[0])})"
    if one_sided:
        extra.append(
            Line2D([], [], color="0.3", lw=0.9, label="thin line: the band's side that still bounds the curve")
        )
    legend(fig, ax, [shade_patch(band, alpha=0.22), *extra], loc="outside lower center", ncols=2)
    if estimates:
        axes_title(ax, f"confidence bands for the {kind} tuning curve" if kind else "confidence bands")
        if title:
            suptitle(fig, title)
    elif title:
        axes_title(ax, title)
    return fig


def _point_estimates_panel(ax, curves: pd.DataFrame, models: list, palette: dict, xscale: str) -> None:
    """Lourie et al.'s Figure 1, left: each model's V (solid) and U (dashed) estimates of the mean tuning curve,
    and the ``estimator`` asked for (dotted), a column after ``v`` and ``u``."""
    from matplotlib.lines import Line2D

    from simstudy.charts import axes_title, labels, set_xscale

    columns = list(curves.columns)
    extra = [c for c in columns[columns.index("v") + 1 : columns.index("kind")]] if "kind" in columns else []

    for model in models:
        c = curves[curves["model"] == model].sort_values("k")
        for estimator, style in (("v", "-"), ("u", "--"), *((e, ":") for e in extra)):
            ax.plot(c["k"], c[estimator], color=palette[model], ls=style, lw=1.6)
    set_xscale(ax, xscale)
    labels(ax, xlabel="k (iterations of random search)", ylabel="expected best score after k iterations")
    axes_title(ax, "point estimates of the mean tuning curve")
    styles = [
        Line2D([], [], color="0.3", ls="-", lw=1.6, label="V-statistic (Dodge et al. 2019)"),
        Line2D([], [], color="0.3", ls="--", lw=1.6, label="U-statistic (Tang et al. 2020)"),
        *(Line2D([], [], color="0.3", ls=":", lw=1.6, label=e if e != "w" else "W-statistic") for e in extra),
    ]
    ax.legend(handles=styles, loc="lower right", fontsize=7, frameon=True)


def cdf_bands_figure(cdfs: pd.DataFrame, *, low: float = -np.inf, high: float = np.inf, title: str | None = None):
    """Empirical CDFs with their simultaneous confidence bands, all models on one plot.

    The x axis zooms on the scores (a little beyond the smallest and largest); the bounds ``low``/``high``
    are drawn as dotted lines when they fall in view and named at the edge when they lie beyond it.

    Parameters
    ----------
    cdfs : pandas.DataFrame
        One row per model and order statistic: columns ``model``, ``score`` (score units), ``ecdf``,
        ``lower``, ``upper`` (probabilities in [0, 1]: the band values at each order statistic,
        right-continuous); optionally ``confidence`` and ``method`` (named in the legend).
    low : float, keyword-only, default -inf
        Lower bound of the scores (may be infinite).
    high : float, keyword-only, default inf
        Upper bound of the scores (may be infinite).
    title : str, optional, keyword-only
        Wrapped to the figure's width. Default None: no title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes (score against cumulative probability), the legend below.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> cdfs = pd.DataFrame(
    ...     {"model": "a", "score": [0.6, 0.7, 0.8], "ecdf": [1 / 3, 2 / 3, 1.0], "lower": [0.0, 0.1, 0.4],
    ...      "upper": [0.6, 0.9, 1.0]}
    ... )
    >>> fig = cdf_bands_figure(cdfs, low=0.0, high=1.0)
    >>> len(fig.axes), fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    (1, 'score', 'cumulative probability')
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    from simstudy.charts import axes_title, colorblind, labels, legend, shade_patch, theme
    from simstudy.figures import method_label

    theme()
    models = list(dict.fromkeys(cdfs["model"]))
    palette = dict(zip(models, colorblind(len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
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
    for model in models:
        c = cdfs[cdfs["model"] == model].sort_values("score")
        # To the edges of the view: the eCDF is 0 left of the first score, the bands keep their last values.
        x = np.concatenate(([left], c["score"], [right]))
        ax.step(
            x,
            np.concatenate(([0.0], c["ecdf"], [1.0])),
            where="post",
            color=palette[model],
            lw=1.5,
            label=f"{model}: empirical CDF of the scores",
        )
        ax.fill_between(
            x[1:],
            np.append(c["lower"], c["lower"].iloc[-1]),
            np.append(c["upper"], c["upper"].iloc[-1]),
            step="post",
            color=palette[model],
            alpha=0.22,
            lw=0,
        )
    for value, in_view, side in ((low, low_in_view, "left"), (high, high_in_view, "right")):
        if in_view:
            ax.axvline(value, color="0.4", ls=(0, (1, 3)), lw=1)
        if np.isfinite(value):
            text = (
                f"bound {value:g}"
                if in_view
                else (f"← bound {value:g}" if side == "left" else f"bound {value:g} →") + " (beyond the view)"
            )
            # Upper left / lower right: where a CDF leaves room (it starts near 0 and ends near 1).
            ax.text(
                0.01 if side == "left" else 0.99,
                0.98 if side == "left" else 0.02,
                text,
                transform=ax.transAxes,
                ha=side,
                va="top" if side == "left" else "bottom",
                fontsize=7,
                color="0.3",
            )
    ax.set_xlim(left, right)
    ax.set_ylim(0, 1)
    labels(ax, xlabel="score", ylabel="cumulative probability")
    band = "simultaneous confidence band"
    if "confidence" in cdfs and "method" in cdfs:
        band = f"{float(cdfs['confidence'].iloc[0]):.0%} simultaneous band ({method_label(cdfs['method'].iloc[0])})"
    legend(fig, ax, [shade_patch(band, alpha=0.22)], loc="outside lower center", ncols=2)
    if title:
        axes_title(ax, title)
    return fig


#: The chart of ``simstudy bands``' run directory in its ``report.html`` (the command's ``charts``): the tuning
#: curves from bands.csv, one line per model, their band shaded.
BANDS_CHART = CurvesChart("BANDS.md", "bands.csv", "k", ("point",), "lower", "upper", "band")


COMMAND = Command(
    "bands",
    page="BANDS.md",
    run=run,
    options=BandsOptions,
    parse=parse,
    write=write,
    lines=lines,
    charts=BANDS_CHART.charts,
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
