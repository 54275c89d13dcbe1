"""One chart, described once, drawn twice: as a PNG (matplotlib) and in ``report.html`` (Vega-Lite).

A :class:`Chart` is a small frozen description: a title, what the x and y axes show and how (linear or log), the
series (``hue``), the panels (``facets``), the marks (a line, its points, an :class:`Interval` as a band or as
bars, a dashed reference level such as a nominal coverage), the tooltip's text (the estimate with its MCSE) and
the rows it draws, as a tidy table (one dict per point). :func:`to_matplotlib` draws it in the house style (the
theme of ``seaborn.set_theme(style="whitegrid", context="paper")``, set with matplotlib alone; legends below the
panels), :func:`to_vega` writes it as the Vega-Lite spec ``report.html`` embeds. A chart says what it is
(:attr:`Chart.role`), so the page never guesses from its title.

======================  ==========================================================================================
:class:`Chart`          what a chart draws (title, axes, series, panels, marks, tooltips, rows, role)
:class:`Interval`       the uncertainty around each point: what it is, drawn as a band or as bars
:func:`estimates`       a summary's estimates against ``x``, one line per ``hue``, one panel per facet value
:func:`curves`          a data command's curves against the budget (log scale), one per model, with their band
:func:`estimate_text`   ``estimate ± MCSE`` rounded to the digits the MCSE supports (tooltips, the report's table)
:func:`json_value`      a frame's value as JSON's (numpy scalars as Python ones, NaN as None)
:func:`to_matplotlib`   the chart as a matplotlib figure (the PNG/PDF files)
:func:`to_vega`         the chart as a Vega-Lite spec (a dict; ``report.html`` escapes it as it embeds it)
======================  ==========================================================================================

The house style lives here too, below every figure (:mod:`simstudy.figures`, the studies' and commands'
figures import it from here): ``theme()`` sets it and returns pyplot; ``colorblind(n)``, ``draw_band``,
``shade_patch``, ``axes_title``, ``suptitle``, ``labels``, ``legend`` (wrapped to the room they have by ``wrap``),
``estimator_label``, ``plain`` and ``set_xscale`` draw in it. matplotlib is imported when a figure is first drawn,
never with this module (it costs about 0.4 s, and ``--help``, a shard or a run that fails its checks never
draw); nor is pandas (only :func:`to_matplotlib` and :func:`estimates` use a frame).

References: Satyanarayan, A., Moritz, D., Wongsuphasawat, K., & Heer, J. (2017). Vega-Lite: a grammar of
interactive graphics. IEEE Transactions on Visualization and Computer Graphics 23(1), 341-350.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simstudy.schema import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.patches import Patch

__all__ = ["Chart", "Interval", "estimates", "curves", "estimate_text", "json_value", "to_matplotlib", "to_vega"]

#: What a chart can be (:attr:`Chart.role`): a study's headline measure, another measure of it, a coverage (its
#: nominal level drawn as a reference), a curve against a budget with its band.
ROLES = ("headline", "measure", "coverage", "curve")
_MARKS = ("line", "point")


@dataclass(frozen=True)
class Interval:
    """The uncertainty drawn around each point of a :class:`Chart`: the rows' ``lo`` and ``hi``.

    Parameters
    ----------
    label : str
        What it is, as the PNG's legend names it (e.g. "95% Monte Carlo interval (±1.96 MCSE)").
    mark : {"band", "bars"}, optional
        Drawn as a shaded band along the line (default) or as a bar at each point.
    opacity : float, optional
        The band's (or bars') opacity, in (0, 1]. Default 0.25.

    Raises
    ------
    ValueError
        If ``mark`` is neither "band" nor "bars".

    Examples
    --------
    >>> Interval("95% Clopper–Pearson interval").mark
    'band'
    """

    label: str
    mark: str = "band"
    opacity: float = 0.25

    def __post_init__(self):
        if self.mark not in ("band", "bars"):
            raise ValueError(f"Interval mark must be 'band' or 'bars', got {self.mark!r}")


@dataclass(frozen=True)
class Chart:
    """What a chart draws, for both renderers (:func:`to_matplotlib`, :func:`to_vega`).

    Parameters
    ----------
    title : str
        The chart's title (user text: drawn as typed, escaped where it lands).
    rows : tuple of dict
        The tidy table drawn, one dict per point: ``x`` and ``estimate`` (numbers; ``x`` may be text, then an
        ordinal axis), optionally ``shown`` (the tooltip's text, e.g. ``"0.101 ± 0.002"``), ``hue`` (the
        series, text), ``lo`` and ``hi`` (the :attr:`interval`'s ends), ``facet`` (a tuple of text, one value
        per :attr:`facets` key), ``style`` (text: one line style per value), the :attr:`rule` key and the
        keys of :attr:`tooltips`.
    x : str
        What x is, short (the tooltip's title for x; the axis title unless :attr:`xlabel`).
    ylabel : str
        What the estimate is (the y axis title).
    xlabel : str, optional
        The x axis title. Default None: :attr:`x`.
    xscale : {"linear", "log"}, optional
        The x axis. Default "linear" (a numeric axis not forced to include 0).
    hue : str, optional
        What the rows' ``hue`` is (the legend's title). Default None: one colour.
    facets : tuple of str, optional
        The keys of the rows' ``facet`` values: one panel per combination. Default none: one panel.
    panel_keys : bool, optional
        Whether a panel's label names its keys (``sd = 0.1``) or shows the values alone (``mlp``). Default True.
    marks : tuple of str, optional
        ``"line"`` and/or ``"point"``: the estimate's marks. Default ("line",).
    interval : Interval, optional
        The uncertainty drawn from the rows' ``lo`` and ``hi``. Default None.
    rule : str, optional
        The rows' key holding a reference level (a nominal coverage), drawn dashed: a horizontal rule, or the
        diagonal when :attr:`x` is that key. Default None.
    rule_label : str, optional
        What the reference is (the PNG's legend). Default "nominal level".
    text : str, optional
        The tooltip's title of the rows' ``shown``. Default "estimate".
    tooltips : tuple of (str, str), optional
        Further (row key, title) pairs the tooltip shows. Default none.
    styles : str, optional
        What the rows' ``style`` is (a line style per value, named in the PNG's legend). Default None.
    role : str, optional
        What the chart is, one of :data:`ROLES`. Default "measure".
    columns : int, optional
        Panels per row in the report. Default 3.
    size : tuple of int, optional
        A panel's width and height in the report, in CSS pixels. Default (300, 200).
    note : str, optional
        What the chart leaves out (rows thinned), said above it. Default None.

    Raises
    ------
    ValueError
        If ``xscale``, ``role`` or ``marks`` is not one of those listed (the message names the key and value).

    Examples
    --------
    >>> chart = Chart("MSE", ({"x": 1, "estimate": 0.1}, {"x": 2, "estimate": 0.05}), x="n", ylabel="MSE")
    >>> chart.role, len(chart.rows)
    ('measure', 2)
    """

    title: str
    rows: tuple[dict, ...]
    x: str
    ylabel: str
    xlabel: str | None = None
    xscale: str = "linear"
    hue: str | None = None
    facets: tuple[str, ...] = ()
    panel_keys: bool = True
    marks: tuple[str, ...] = ("line",)
    interval: Interval | None = None
    rule: str | None = None
    rule_label: str = "nominal level"
    text: str = "estimate"
    tooltips: tuple[tuple[str, str], ...] = ()
    styles: str | None = None
    role: str = "measure"
    columns: int = 3
    size: tuple[int, int] = (300, 200)
    note: str | None = None

    def __post_init__(self):
        if self.xscale not in _XSCALES:
            raise ValueError(f"Chart xscale must be one of {', '.join(_XSCALES)}, got {self.xscale!r}")
        if self.role not in ROLES:
            raise ValueError(f"Chart role must be one of {', '.join(ROLES)}, got {self.role!r}")
        unknown = [m for m in self.marks if m not in _MARKS]
        if unknown or not self.marks:
            raise ValueError(f"Chart marks must be some of {', '.join(_MARKS)}, got {self.marks!r}")


# ------------------------------------------------------------------------------------------- describing


def json_value(value: Any) -> Any:
    """A table's value as a chart's (and JSON's): numpy scalars as Python ones, NaN as None, anything else (a
    list, a timestamp) as its text.

    Parameters
    ----------
    value : object
        A cell of a frame (``Series.tolist()`` or ``.iloc``).

    Returns
    -------
    bool, int, float, str or None
        The value as JSON holds it.

    Examples
    --------
    >>> import numpy as np
    >>> json_value(np.float64(0.5)), json_value(float("nan")), json_value([1, 2])
    (0.5, None, '[1, 2]')
    """
    if hasattr(value, "item") and getattr(value, "size", 1) == 1:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


@functools.lru_cache(maxsize=1 << 16)
def _formatted(estimate: float, mcse: float, show_mcse: bool) -> str:
    """:func:`~simstudy.stats.metrics.format_estimate`, once per value: a chart's points are table rows too."""
    from simstudy.stats.metrics import format_estimate

    return format_estimate(estimate, mcse, show_mcse=show_mcse)


def estimate_text(estimate: float, mcse: float | None, *, alone: bool = False) -> str:
    """``estimate ± mcse`` rounded to the digits the MCSE supports, as a chart's tooltip and the report's table
    show it (:func:`simstudy.stats.metrics.format_estimate`, computed once per value).

    Parameters
    ----------
    estimate : float
        The estimate.
    mcse : float or None
        Its Monte Carlo standard error (None or NaN: unknown, 0: exact).
    alone : bool, optional, keyword-only
        The estimate alone, without ``± mcse`` (still rounded to the MCSE's digits). Default False.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> estimate_text(0.12345, 0.0021), estimate_text(0.12345, 0.0021, alone=True)
    ('0.123 ± 0.002', '0.123')
    """
    return _formatted(float(estimate), float(mcse) if mcse is not None else float("nan"), not alone)


def estimates(
    rows: pd.DataFrame,
    *,
    x: str,
    hue: str,
    ylabel: str,
    title: str,
    facets=(),
    styles=(),
    role: str = "measure",
    z: float = 1.96,
    ci: bool = False,
    bars: bool = False,
) -> Chart:
    """A summary's estimates against ``x``, one line per ``hue``, with their Monte Carlo (or exact) intervals.

    Every study's headline and measures are drawn so, in a sweep's figure and in ``report.html``. Each row with
    an estimate is a point; its tooltip shows ``estimate ± MCSE`` rounded to the digits the MCSE supports (and
    the joint band where the rows have ``lower_joint``/``upper_joint``). The interval is the rows'
    Clopper-Pearson ``ci_low``/``ci_high`` with ``ci`` (where they have them), else ±``z`` MCSE where the MCSE
    is positive (an exact value has none). On a coverage (``role="coverage"``), the rows' ``nominal`` level is
    the reference drawn dashed.

    Parameters
    ----------
    rows : pandas.DataFrame
        Summary rows: columns ``x``, ``estimate``, and optionally ``hue``, ``mcse``, ``ci_low``, ``ci_high``,
        ``nominal``, ``lower_joint``, ``upper_joint``, the ``facets`` and ``styles`` columns.
    x : str, keyword-only
        The column on the x axis.
    hue : str, keyword-only
        The column that tells lines apart (absent from ``rows``: one line).
    ylabel : str, keyword-only
        What the estimate is (the y axis title).
    title : str, keyword-only
        The chart's title.
    facets : sequence of str, optional, keyword-only
        Columns: one panel per combination of their values, in the rows' order. Default none.
    styles : sequence of str, optional, keyword-only
        Columns whose values within a panel get a line style each (``"B = 5, distribution = x"``). Default none.
    role : str, optional, keyword-only
        What the chart is (:data:`ROLES`). Default "measure".
    z : float, optional, keyword-only
        The interval's half-width in MCSEs. Default 1.96 (a 95% Monte Carlo interval).
    ci : bool, optional, keyword-only
        Draw the rows' ``ci_low``/``ci_high`` where any is given. Default False.
    bars : bool, optional, keyword-only
        The interval as bars at points (the report's hover targets), not a band along the line. Default False.

    Returns
    -------
    Chart
        The description; :func:`to_matplotlib` and :func:`to_vega` draw it.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"n": [1, 2], "estimator": "u", "estimate": [0.1, 0.05], "mcse": [0.01, 0.0]})
    >>> chart = estimates(rows, x="n", hue="estimator", ylabel="MSE", title="MSE")
    >>> {k: round(v, 4) if isinstance(v, float) else v for k, v in chart.rows[0].items()}
    {'x': 1, 'estimate': 0.1, 'shown': '0.100 ± 0.010', 'hue': 'u', 'lo': 0.0804, 'hi': 0.1196}
    >>> "lo" in chart.rows[1], chart.interval.label
    (False, '95% Monte Carlo interval (±1.96 MCSE)')
    """
    facets, styles = tuple(facets), tuple(styles)
    use_ci = ci and {"ci_low", "ci_high"} <= set(rows) and bool(rows["ci_low"].notna().any())
    joint = "lower_joint" in rows and "upper_joint" in rows
    wanted = [x, hue, "estimate", "mcse", "nominal", *facets, *styles]
    wanted += ["ci_low", "ci_high"] if use_ci else []
    wanted += ["lower_joint", "upper_joint"] if joint else []
    columns = {c: rows[c].tolist() for c in dict.fromkeys(wanted) if c in rows}
    has_mcse, has_hue = "mcse" in columns, hue in columns
    out = []
    for i, est in enumerate(columns["estimate"]):
        est = json_value(est)
        if est is None:
            continue
        mcse = json_value(columns["mcse"][i]) if has_mcse else None
        point = {"x": json_value(columns[x][i]), "estimate": est, "shown": estimate_text(est, mcse)}
        if has_hue:
            point["hue"] = str(columns[hue][i])
        if use_ci:
            lo, hi = json_value(columns["ci_low"][i]), json_value(columns["ci_high"][i])
            if lo is not None and hi is not None:
                point["lo"], point["hi"] = lo, hi
        elif mcse:
            point["lo"], point["hi"] = est - z * mcse, est + z * mcse
        if facets:
            point["facet"] = tuple(str(columns[k][i]) for k in facets)
        if styles:
            point["style"] = ", ".join(f"{k} = {columns[k][i]}" for k in styles)
        if "nominal" in columns and json_value(columns["nominal"][i]) is not None:
            point["nominal"] = json_value(columns["nominal"][i])
        if joint and json_value(columns["lower_joint"][i]) is not None:
            lower, upper = columns["lower_joint"][i], columns["upper_joint"][i]
            point["joint"] = f"[{estimate_text(lower, mcse, alone=True)}, {estimate_text(upper, mcse, alone=True)}]"
        out.append(point)
    label = (
        "95% Clopper–Pearson interval"
        if use_ci
        else f"{'95% Monte Carlo interval' if z == Z else 'interval'} (±{z:g} MCSE)"
    )
    return Chart(
        title,
        tuple(out),
        x=x,
        ylabel=ylabel,
        hue=hue if has_hue else None,
        facets=facets,
        marks=("line", "point") if bars else ("line",),
        interval=Interval(label, "bars", 0.6) if bars else Interval(label),
        rule="nominal" if role == "coverage" and "nominal" in columns else None,
        text="estimate ± MCSE",
        tooltips=(("joint", "joint band"),) if joint else (),
        styles=", ".join(styles) if styles else None,
        role=role,
    )


#: Budgets drawn per model at most by :func:`curves` (log-spaced): a curve of 10^6 trials is 10^6 rows.
_MAX_CURVE_POINTS = 300


def curves(table: pd.DataFrame, *, x: str, value: str, lower: str, upper: str, words: str) -> Chart | None:
    """A data command's curves against the budget (log scale), one colour per model, the band shaded.

    ``simstudy curve``'s expected best of n trials and ``simstudy bands``' tuning curves are drawn so in
    ``report.html``. The tooltip gives the value and the band's ends. At most :data:`_MAX_CURVE_POINTS` budgets
    per model, spaced evenly on the log scale (the title says so when the table has more).

    Parameters
    ----------
    table : pandas.DataFrame
        The command's table (``curves.csv``, ``bands.csv``): columns ``model``, ``x``, ``value``, ``lower``,
        ``upper``.
    x : str, keyword-only
        The budget's column (trials, >= 1; rows with x <= 0 are not drawn on the log axis).
    value : str, keyword-only
        The curve's column (its name, ``_`` as spaces, is the y axis title).
    lower, upper : str, keyword-only
        The band's columns (NaN: no band at that budget).
    words : str, keyword-only
        What the band is (e.g. "± 1 SD"), said in the title and the tooltip.

    Returns
    -------
    Chart or None
        The description; None when the table lacks a column or has no rows.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"model": "a", "n": [1, 2], "expected_max": [0.5, 0.6], "lo": 0.4, "hi": 0.7})
    >>> chart = curves(table, x="n", value="expected_max", lower="lo", upper="hi", words="± 1 SD")
    >>> chart.title, chart.rows[1]["shown"]
    ('expected max against n, shaded: ± 1 SD', '0.6 [0.4, 0.7]')
    """
    import numpy as np

    if not {"model", x, value, lower, upper} <= set(table.columns) or not len(table):
        return None
    budgets = table[x].to_numpy(dtype=float)
    top = np.nanmax(budgets) if np.isfinite(budgets).any() else 0
    kept = np.unique(np.round(np.geomspace(1, max(top, 1), _MAX_CURVE_POINTS)))
    thinned = top > _MAX_CURVE_POINTS
    if thinned:
        table = table[np.isin(budgets, kept)]
    rows = []
    for model, k, est, lo, hi in zip(*(table[c].tolist() for c in ("model", x, value, lower, upper))):
        if json_value(est) is None or json_value(k) is None or k <= 0:
            continue
        point = {"hue": str(model), "x": k, "estimate": est, "shown": f"{est:.4g}"}
        if json_value(lo) is not None and json_value(hi) is not None:
            point.update(lo=lo, hi=hi, shown=f"{est:.4g} [{lo:.4g}, {hi:.4g}]")
        rows.append(point)
    label = value.replace("_", " ")
    return Chart(
        f"{label} against {x}, shaded: {words}" + (f" ({len(kept)} budgets shown)" if thinned else ""),
        tuple(rows),
        x=x,
        xlabel=f"{x} (trials)",
        xscale="log",
        ylabel=label,
        hue="model",
        interval=Interval(words, opacity=0.2),
        text=f"{label} [{words}]",
        role="curve",
        size=(520, 320),
    )


# ---------------------------------------------------------------------------------------------- Vega-Lite


def _panel(chart: Chart, values: tuple) -> str:
    if not chart.panel_keys:
        return ", ".join(values)
    return ", ".join(f"{k}={v}" for k, v in zip(chart.facets, values))


def to_vega(chart: Chart) -> dict:
    """The chart as a Vega-Lite spec (a dict of JSON values), as ``report.html`` embeds it.

    The rows become the spec's inline data (a panel's label in ``panel``); the estimate is a line (with its
    points, or with invisible points as hover targets), the interval a rule per point (``bars``) or an area
    (``band``) under it, the reference level a dashed rule (or the diagonal), the tooltip the rows' ``shown``,
    x, the series, the panel and :attr:`Chart.tooltips`. Strings are left as they are: the page escapes the
    whole spec as it embeds it (:func:`simstudy.report_safe.script_json`).

    Parameters
    ----------
    chart : Chart
        What to draw.

    Returns
    -------
    dict
        A Vega-Lite (v5) spec: faceted (``facet``, ``columns``, ``spec``) when the chart has facets.

    Examples
    --------
    >>> chart = Chart("MSE", ({"x": 1, "estimate": 0.1, "shown": "0.10 ± 0.01"},), x="n", ylabel="MSE")
    >>> spec = to_vega(chart)
    >>> spec["title"], spec["data"]["values"][0]["x"], [layer["mark"]["type"] for layer in spec["layer"]]
    ('MSE', 1, ['line', 'point'])
    >>> spec["layer"][1]["encoding"]["tooltip"][0]
    {'field': 'shown', 'title': 'estimate'}
    """
    values = []
    for row in chart.rows:
        value = {k: v for k, v in row.items() if k != "facet"}
        if chart.facets:
            value["panel"] = _panel(chart, row.get("facet", ()))
        values.append(value)
    numeric = all(isinstance(v["x"], (int, float)) and not isinstance(v["x"], bool) for v in values)
    xenc: dict[str, Any] = {
        "field": "x",
        "type": "quantitative" if numeric or chart.xscale == "log" else "ordinal",
        "title": chart.xlabel or chart.x,
    }
    if chart.xscale == "log":
        xenc["scale"] = {"type": "log"}
    elif numeric:
        xenc["scale"] = {"zero": False}  # nominal levels 0.5..0.95, budgets from 1: not from 0
    y = {"field": "estimate", "type": "quantitative", "title": chart.ylabel, "scale": {"zero": False}}
    hued = chart.hue is not None and any("hue" in v for v in values)
    color = {"color": {"field": "hue", "type": "nominal", "title": chart.hue}} if hued else {}
    dash = (
        {"strokeDash": {"field": "style", "type": "nominal", "title": chart.styles}}
        if chart.styles and any("style" in v for v in values)
        else {}
    )
    tooltip = [{"field": "shown", "title": chart.text}, {"field": "x", "title": chart.x}]
    if hued:
        tooltip.append({"field": "hue", "title": str(chart.hue)})
    if chart.facets:
        tooltip.append({"field": "panel", "title": ", ".join(chart.facets)})
    tooltip += [{"field": key, "title": title} for key, title in chart.tooltips]
    if "point" in chart.marks:
        layers: list[dict] = [
            {
                "mark": {"type": "line", "point": True},
                "encoding": {"x": xenc, "y": y, **color, **dash, "tooltip": tooltip},
            }
        ]
    else:  # invisible points: the hover targets of the tooltip
        layers = [
            {"mark": {"type": "line"}, "encoding": {"x": xenc, "y": y, **color, **dash}},
            {"mark": {"type": "point", "opacity": 0, "size": 30}, "encoding": {"x": xenc, "y": y, "tooltip": tooltip}},
        ]
    # the interval's layer only where some point has one (an empty one has an infinite extent: a Vega warning;
    # exact values, MCSE 0, have no bars)
    if chart.interval is not None and any("lo" in v for v in values):
        mark = (
            {"type": "rule", "opacity": chart.interval.opacity}
            if chart.interval.mark == "bars"
            else {"type": "area", "opacity": chart.interval.opacity}
        )
        encoding = {"x": xenc, "y": {**y, "field": "lo"}, "y2": {"field": "hi"}, **color}
        layers.insert(0, {"mark": mark, "encoding": encoding})
    if chart.rule is not None and any(chart.rule in v for v in values):
        reference = {**y, "field": chart.rule}
        if chart.x == chart.rule:  # the estimate against its own reference level: the diagonal is the goal
            layers.append(
                {
                    "mark": {"type": "line", "strokeDash": [4, 4], "color": "gray"},
                    "encoding": {"x": xenc, "y": reference},
                }
            )
        else:
            layers.append(
                {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"}, "encoding": {"y": reference}}
            )
    size = {"width": chart.size[0], "height": chart.size[1]}
    spec: dict[str, Any] = {"title": chart.title}
    if chart.note:  # usermeta: Vega-Lite's place for what it does not draw; the page states it above the charts
        spec["usermeta"] = {"capped": chart.note}
    spec["data"] = {"values": values}
    if chart.facets:
        spec.update(
            facet={"field": "panel", "type": "nominal", "title": ", ".join(chart.facets)},
            columns=chart.columns,
            spec={**size, "layer": layers},
        )
    else:
        spec.update(size, layer=layers)
    return spec


# --------------------------------------------------------------------------------------------- matplotlib


def to_matplotlib(chart: Chart):
    """The chart as a matplotlib figure in the house style, as the PNG/PDF files show it.

    One axes per panel (:attr:`Chart.facets`' value combinations, in the rows' order) in a grid: as many columns
    as the last facet key has values when they are 2 to 5 and fill the rows, else up to 4; the y axes are not
    shared (panels can differ in scale by orders of magnitude). In each panel, one line per series in the
    colorblind palette (estimators U, V, W in the papers' notation), one line style per :attr:`Chart.styles`
    value, the interval shaded (or as bars), the reference level dashed. The legend sits below the panels
    (inside one it covered a curve wherever the curves fill it), the title above them; titles, labels and
    legend entries are wrapped to the room they have.

    Parameters
    ----------
    chart : Chart
        What to draw.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (constrained layout); unused grid slots hidden.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rows = tuple({"x": n, "estimate": 1 / n, "hue": "u", "facet": (b,)} for b in ("5", "10") for n in (1, 2))
    >>> fig = to_matplotlib(Chart("MSE by B", rows, x="n", ylabel="MSE", hue="estimator", facets=("B",)))
    >>> [ax.get_title() for ax in fig.axes]
    ['B = 5', 'B = 10']
    >>> plt.close(fig)
    """
    import pandas as pd
    from matplotlib.lines import Line2D

    plt = theme()
    rows = pd.DataFrame(list(chart.rows)) if chart.rows else pd.DataFrame({"x": [], "estimate": []})
    facet = rows["facet"] if "facet" in rows else pd.Series([()] * len(rows), index=rows.index, dtype=object)
    panels = list(dict.fromkeys(facet)) or [()]
    n_last = len({p[-1] for p in panels if p}) or 1
    ncols = n_last if 1 < n_last <= 5 and len(panels) % n_last == 0 else min(4, len(panels))
    nrows = -(-len(panels) // ncols)
    hues = list(dict.fromkeys(rows["hue"])) if "hue" in rows else [None]
    palette = dict(zip(hues, colorblind(len(hues))))
    hue = rows["hue"] if "hue" in rows else pd.Series(None, index=rows.index, dtype=object)
    style = rows["style"] if "style" in rows else pd.Series("", index=rows.index, dtype=object)
    styles = {c: ("-", "--", ":", "-.")[k % 4] for k, c in enumerate(dict.fromkeys(style))} or {"": "-"}
    banded = chart.interval is not None and "lo" in rows
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows + 0.6), sharex=True, squeeze=False, layout="constrained"
    )
    first = next(iter(styles))
    for i, values in enumerate(panels):
        ax = axes.flat[i]
        s = rows[facet.map(lambda f, v=values: f == v)] if chart.facets else rows
        for h in hues:
            for c, ls in styles.items():
                line = s[(hue[s.index] == h if h is not None else True) & (style[s.index] == c)].sort_values("x")
                if not len(line):
                    continue
                label = estimator_label(str(h)) if h is not None and i == 0 and c == first else None
                marker = {"marker": "o", "ms": 3} if "point" in chart.marks else {}
                ax.plot(line["x"], line["estimate"], color=palette[h], label=label, lw=1.6, ls=ls, **marker)
                if banded:
                    lo, hi = line["lo"].astype(float), line["hi"].astype(float)
                    opacity = chart.interval.opacity  # type: ignore[union-attr]  # banded: an interval
                    if chart.interval.mark == "bars":  # type: ignore[union-attr]
                        ax.vlines(line["x"], lo, hi, color=palette[h], alpha=opacity, lw=1)
                    else:
                        ax.fill_between(line["x"], lo, hi, color=palette[h], alpha=opacity, lw=0)
        if chart.rule is not None and chart.rule in s and s[chart.rule].notna().any():
            if chart.x == chart.rule:  # the diagonal is the goal
                level = s.dropna(subset=[chart.rule]).sort_values("x")
                ax.plot(level["x"], level[chart.rule], color="0.45", lw=0.8, ls="--")
            else:
                for level in dict.fromkeys(s[chart.rule].dropna()):
                    ax.axhline(level, color="0.45", lw=0.8, ls="--")
        if chart.facets:
            named = [f"{k} = {v}" for k, v in zip(chart.facets, values)] if chart.panel_keys else list(values)
            axes_title(ax, ", ".join(named))
        if i % ncols == 0:
            labels(ax, ylabel=chart.ylabel)
        if i >= len(panels) - ncols:
            labels(ax, xlabel=chart.xlabel or chart.x)
        if chart.xscale == "log":
            set_xscale(ax, "log")
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    extra: list = [shade_patch(chart.interval.label)] if banded else []  # type: ignore[union-attr]  # legend handles
    if len(styles) > 1:
        extra += [Line2D([], [], color="0.3", ls=ls, label=c) for c, ls in styles.items()]
    if chart.rule is not None and chart.rule in rows and rows[chart.rule].notna().any():
        extra += [Line2D([], [], color="0.45", lw=0.8, ls="--", label=chart.rule_label)]
    if extra or any(h is not None for h in hues):
        legend(fig, axes.flat[0], extra, fontsize=7, loc="outside lower center", ncols=min(3, max(1, ncols)))
    suptitle(fig, chart.title)
    return fig


# ---------------------------------------------------------------------------------------- the house style


Z = 1.96


_XSCALES = ("linear", "log")


def estimator_label(estimator: str) -> str:
    """U/V/W in the papers' notation; anything else as named (escaped: a plug-in's name is user text)."""
    return f"${estimator.upper()}_n^B$" if estimator in ("u", "v", "w") else plain(estimator)


def plain(text) -> str:
    """User text (a model, file or distribution name) as drawn: matplotlib reads ``$...$`` as mathematics, so
    a name such as ``budget $5_$`` would raise when the figure is saved; escaped, it is drawn as typed."""
    return str(text).replace("$", r"\$")


def _is_math(text: str) -> bool:
    """A label :func:`estimator_label` wrote in mathematical notation (kept as mathematics by the legend)."""
    return text.startswith("$") and text.endswith("$") and text.count("$") == 2 and "_n^B" in text


def draw_band(ax, frame: pd.DataFrame, x: str, label: str | None, color, *, low=None, high=None, **kwargs) -> None:
    frame = frame.sort_values(x)
    lo = frame[low] if low else frame["estimate"] - Z * frame["mcse"]
    hi = frame[high] if high else frame["estimate"] + Z * frame["mcse"]
    ax.plot(frame[x], frame["estimate"], color=color, label=label, lw=1.6, **kwargs)
    ax.fill_between(frame[x], lo, hi, color=color, alpha=0.25, lw=0)


def shade_patch(label: str, alpha: float = 0.3) -> Patch:
    """A legend entry for shaded bands (grey: it explains the shading of every colour)."""
    from matplotlib.patches import Patch

    return Patch(facecolor="0.45", alpha=alpha, lw=0, label=label)


#: seaborn's colorblind palette (``seaborn.color_palette("colorblind")``), whose colours every figure draws in.
_COLORBLIND = (
    "#0173B2",
    "#DE8F05",
    "#029E73",
    "#D55E00",
    "#CC78BC",
    "#CA9161",
    "#FBAFE4",
    "#949494",
    "#ECE133",
    "#56B4E9",
)


#: seaborn's "deep" palette: the colour cycle of the theme (lines drawn without a colour of their own).
_DEEP = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD")


#: seaborn's ``paper`` context scales its ``notebook`` sizes (points) by 0.8.
_PAPER = 0.8


_NOTEBOOK_SIZES = {
    "axes.linewidth": 1.25,
    "grid.linewidth": 1,
    "lines.linewidth": 1.5,
    "lines.markersize": 6,
    "patch.linewidth": 1,
    "xtick.major.width": 1.25,
    "ytick.major.width": 1.25,
    "xtick.minor.width": 1,
    "ytick.minor.width": 1,
    "xtick.major.size": 6,
    "ytick.major.size": 6,
    "xtick.minor.size": 4,
    "ytick.minor.size": 4,
    "font.size": 12,
    "axes.labelsize": 12,
    "axes.titlesize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.title_fontsize": 12,
}


#: seaborn's ``whitegrid`` style with its default sans-serif font, as rcParams (its colormap, image.cmap, is
#: left out: seaborn registers it on import, and no figure here draws an image).
_WHITEGRID = {
    "figure.facecolor": "white",
    "axes.labelcolor": ".15",
    "xtick.direction": "out",
    "ytick.direction": "out",
    "xtick.color": ".15",
    "ytick.color": ".15",
    "axes.axisbelow": True,
    "grid.linestyle": "-",
    "text.color": ".15",
    "font.family": "sans-serif",
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "xtick.top": False,
    "ytick.right": False,
    "axes.grid": True,
    "axes.facecolor": "white",
    "axes.edgecolor": ".8",
    "grid.color": ".8",
    "axes.spines.left": True,
    "axes.spines.bottom": True,
    "axes.spines.right": True,
    "axes.spines.top": True,
    "xtick.bottom": False,
    "ytick.left": False,
}


def _style() -> dict:
    """The rcParams of ``seaborn.set_theme(style="whitegrid", context="paper")``, the figures' theme: set with
    matplotlib alone, since importing seaborn costs up to 0.7 s (it imports scipy.stats) and draws the same.
    (seaborn also remaps the one-letter colours ``"b"``, ``"g"`` ... to its palette; no figure here uses them.)"""
    from cycler import cycler
    from matplotlib.colors import to_rgb

    sizes = {key: value * _PAPER for key, value in _NOTEBOOK_SIZES.items()}
    return {**sizes, **_WHITEGRID, "axes.prop_cycle": cycler("color", [to_rgb(c) for c in _DEEP])}


def check_backend() -> None:
    """Refuse a ``MPLBACKEND`` that matplotlib cannot import with, in one line naming the variable.

    matplotlib reads the variable when it is imported and raises a ``ValueError`` about its rc key ``backend``;
    the command line calls this before a run starts (matplotlib imported only when the variable is set), so a
    bad value costs no computation and leaves no directory.

    Raises
    ------
    ConfigError
        ``MPLBACKEND`` is set to a value matplotlib refuses.
    """
    backend = os.environ.get("MPLBACKEND")
    if backend is None:
        return
    try:
        import matplotlib.rcsetup  # a first import validates the variable (and raises) ...

        matplotlib.rcsetup.validate_backend(backend)  # ... a later one does not
    except ValueError:
        raise ConfigError(
            f"MPLBACKEND={backend!r} is not a matplotlib backend: unset it (simstudy saves its figures with "
            "Agg) or set it to one, e.g. MPLBACKEND=agg"
        ) from None


@functools.cache
def _agg() -> None:
    """Select the Agg backend, once, before pyplot draws its first figure (files only; no display is assumed:
    CI, clusters)."""
    check_backend()
    import matplotlib

    matplotlib.use("Agg")


def theme():
    """Set the figures' theme (:func:`_style`) and return :mod:`matplotlib.pyplot`, imported on the first figure
    (with :func:`_agg`). Every figure starts here."""
    _agg()
    import matplotlib.pyplot as plt

    plt.rcParams.update(_style())
    return plt


def colorblind(n: int) -> list[tuple[float, float, float]]:
    """``n`` colours of :data:`_COLORBLIND` as RGB, cycling past ten (``seaborn.color_palette("colorblind", n)``)."""
    from matplotlib.colors import to_rgb

    return [to_rgb(_COLORBLIND[i % len(_COLORBLIND)]) for i in range(n)]


def wrap(fig, text: str, width_in: float, fontsize: float) -> str:
    """Break ``text`` into lines no wider than ``width_in`` inches at ``fontsize`` (points).

    Breaks at spaces; a single word wider than a line (a long file name) is cut where it must be. Widths are
    measured with the figure's renderer, so the result fits at any dpi (text scales with it).
    """
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=fontsize)
    limit = width_in * fig.dpi

    def fits(s: str) -> bool:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0] <= limit

    lines = []
    for paragraph in str(text).split("\n"):
        if fits(paragraph):  # most labels: one measurement, not one per word (the same line the loop would make)
            lines.append(paragraph)
            continue
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if fits(trial):
                line = trial
                continue
            if line:
                lines.append(line)
            while len(word) > 1 and not fits(word):
                cut = 1
                while cut < len(word) - 1 and fits(word[: cut + 1]):
                    cut += 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return "\n".join(lines)


def _panel_size(ax) -> tuple[float, float]:
    """The axes' width and height in inches before the layout runs (a lower bound on its final size: the
    constrained layout only widens the default margins' axes)."""
    box = ax.get_position()
    return box.width * ax.figure.get_figwidth(), box.height * ax.figure.get_figheight()


def suptitle(fig, text: str, fontsize: float = 9) -> None:
    fig.suptitle(wrap(fig, plain(text), 0.95 * fig.get_figwidth(), fontsize), fontsize=fontsize)


def axes_title(ax, text: str, fontsize: float = 9) -> None:
    # Centred on its axes, which the y label pushes right of the figure's centre: a title as wide as its
    # column would run off the right edge, so it gets 80% of the column.
    cols = ax.get_subplotspec().get_geometry()[1]
    ax.set_title(wrap(ax.figure, plain(text), 0.8 * ax.figure.get_figwidth() / cols, fontsize), fontsize=fontsize)


def labels(ax, xlabel: str | None = None, ylabel: str | None = None) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    width, height = _panel_size(ax)
    size = plt.rcParams["axes.labelsize"]
    size = FontProperties(size=size).get_size_in_points()
    if xlabel is not None:
        ax.set_xlabel(wrap(ax.figure, plain(xlabel), 1.1 * width, size))
    if ylabel is not None:
        ax.set_ylabel(wrap(ax.figure, plain(ylabel), 1.1 * height, size))


def legend(
    where,
    handles_from=None,
    extra=(),
    *,
    share: float | None = None,
    fontsize: float | None = None,
    ncols: int = 1,
    **kwargs,
):
    """A legend of the lines of ``handles_from`` (default: ``where``) plus ``extra`` proxy handles.

    ``where`` is an axes or a figure (then ``loc="outside ..."``). Each label is wrapped to ``share`` of the
    figure's width, by default to what one of ``ncols`` columns has once handles and spacing (about half an
    inch per column) are taken off.
    """
    import matplotlib.figure
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    source = where if handles_from is None else handles_from
    handles, labels = source.get_legend_handles_labels()
    handles, labels = [*handles, *extra], [*labels, *(h.get_label() for h in extra)]
    fig = where if isinstance(where, matplotlib.figure.Figure) else where.figure
    size = FontProperties(size=fontsize or plt.rcParams["legend.fontsize"]).get_size_in_points()
    width = share * fig.get_figwidth() if share else (0.92 * fig.get_figwidth() - 0.5 * ncols) / ncols
    # Labels are user text (model names) unless estimator_label wrote them as mathematics; escaped once.
    labels = [lb if _is_math(lb) else wrap(fig, lb if "\\$" in lb else plain(lb), width, size) for lb in labels]
    return where.legend(handles, labels, frameon=True, fontsize=size, ncols=ncols, **kwargs)


def set_xscale(ax, xscale: str) -> None:
    import matplotlib.ticker

    ax.set_xscale(xscale)
    if xscale == "log":  # budgets read as 1, 2, 5, 10, 20, ... rather than powers of ten
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def xscale_iv(xscale: str) -> str:
    if xscale not in _XSCALES:
        raise ValueError(f"xscale must be one of {', '.join(_XSCALES)}, got {xscale!r}")
    return xscale
