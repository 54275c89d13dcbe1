"""One chart, described once, drawn twice: as a PNG (matplotlib) and in ``report.html`` (Vega-Lite).

A :class:`Chart` is a small frozen description: a title, what the x and y axes show and how (linear or log), the
series (``hue``), the panels (``facets``), the marks (a line, its points, an :class:`Interval` as a band or as
bars, a dashed reference level such as a nominal coverage), the tooltip's text (the estimate with its MCSE) and
the rows it draws, as a tidy table (one dict per point). :func:`to_matplotlib` draws it in the house style (the
theme of ``seaborn.set_theme(style="whitegrid", context="paper")``, set with matplotlib alone; legends below the
panels), :func:`simstudy.chart_vega.to_vega` (the module above this one) writes it as the Vega-Lite spec
``report.html`` embeds. A chart says what it is
(:attr:`Chart.role`), so the page never guesses from its title.

======================  ==========================================================================================
:class:`Chart`          what a chart draws (title, axes, series, panels, marks, tooltips, rows, role)
:class:`Interval`       the uncertainty around each point: what it is, drawn as a band or as bars
:class:`Reference`      a line or shaded range that is not a row (a target, the budget n, a bound of the scores)
:class:`Note`           words in a panel's corner (a bound beyond the view)
:class:`View`           a panel's ranges in view and its own y axis title
:func:`estimates`       a summary's estimates against ``x``, one line per ``hue``, one panel per facet value
:func:`estimate_text`   ``estimate ± MCSE`` rounded to the digits the MCSE supports (tooltips, the report's table)
:func:`json_value`      a frame's value as JSON's (numpy scalars as Python ones, NaN as None)
:func:`to_matplotlib`   the chart as a matplotlib figure (the PNG/PDF files)
======================  ==========================================================================================

Every figure a command or a sweep writes is :func:`to_matplotlib` of the chart its ``report.html`` draws with
:func:`~simstudy.chart_vega.to_vega`. The house style they draw in lives below, in :mod:`simstudy.chart_style`. matplotlib is
imported when a figure is first drawn, never with this module (it costs about 0.4 s, and ``--help``, a shard or a
run that fails its checks never draw); nor is pandas (only :func:`to_matplotlib` and :func:`estimates` use a
frame).

References: Satyanarayan, A., Moritz, D., Wongsuphasawat, K., & Heer, J. (2017). Vega-Lite: a grammar of
interactive graphics. IEEE Transactions on Visualization and Computer Graphics 23(1), 341-350.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simstudy.chart_style import (
    XSCALES,
    Z,
    axes_title,
    colorblind,
    estimator_label,
    labels,
    legend,
    plain,
    set_xscale,
    shade_patch,
    suptitle,
    theme,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Chart",
    "Interval",
    "Reference",
    "Note",
    "View",
    "estimates",
    "log_spaced",
    "estimate_text",
    "json_value",
    "to_matplotlib",
]

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


#: How a :class:`Reference` line is drawn (matplotlib's line style; Vega-Lite's ``strokeDash``).
DASHES = {"solid": ("-", None), "dashed": ("--", [6, 4]), "dotted": (":", [1, 3]), "dashdot": ("-.", [6, 3, 1, 3])}


@dataclass(frozen=True)
class Reference:
    """A reference line of a :class:`Chart` that is not a row of its table: a target score, the budget n of the
    data, a bound of the scores, the edge past which a band is trivial, or a shaded range (an interval for b).

    Parameters
    ----------
    value : float
        Where it is: a y level (``axis="y"``) or an x position (``axis="x"``).
    axis : {"y", "x"}, optional
        ``"y"``: a horizontal line at y = ``value``; ``"x"``: a vertical one at x = ``value``. Default "y".
    label : str, optional
        Its legend entry (user text, escaped where it lands). Default None: not in the legend.
    hue : str, optional
        A series of the chart (a row's ``hue``): drawn in its colour. Default None: grey.
    grey : float, optional
        Without ``hue``, the grey it is drawn in, 0 (black) to 1 (white). Default 0.45.
    dash : {"solid", "dashed", "dotted", "dashdot"}, optional
        Its line style. Default "dotted".
    width : float, optional
        Its line width, in points. Default 1.
    to : float, optional
        A shaded range from ``value`` to ``to`` instead of a line (the same axis). Default None.
    span : tuple of float, optional
        Drawn only from ``span[0]`` to ``span[1]`` along the other axis. Default None: across the panel.
    panel : tuple of str, optional
        Drawn only in the panel of these facet values. Default None: in every panel.
    note : str, optional
        Words written at the line's left (a y line) or top (an x line) end. Default None.

    Raises
    ------
    ValueError
        If ``axis`` or ``dash`` is not one of those listed (the message names the key and value).

    Examples
    --------
    >>> Reference(0.4, label="target 0.4").dash, Reference(48, axis="x", dash="dashed", note="n = 48").axis
    ('dotted', 'x')
    """

    value: float
    axis: str = "y"
    label: str | None = None
    hue: str | None = None
    grey: float = 0.45
    dash: str = "dotted"
    width: float = 1.0
    to: float | None = None
    span: tuple[float, float] | None = None
    panel: tuple[str, ...] | None = None
    note: str | None = None

    def __post_init__(self):
        if self.axis not in ("x", "y"):
            raise ValueError(f"Reference axis must be 'x' or 'y', got {self.axis!r}")
        if self.dash not in DASHES:
            raise ValueError(f"Reference dash must be one of {', '.join(DASHES)}, got {self.dash!r}")


#: Where a :class:`Note` is written in its panel.
CORNERS = ("upper left", "upper right", "lower left", "lower right")


@dataclass(frozen=True)
class Note:
    """Words written in a corner of a :class:`Chart`'s panel: what the view leaves out (a bound beyond it).

    Parameters
    ----------
    text : str
        The words (user text, escaped where it lands).
    corner : {"upper left", "upper right", "lower left", "lower right"}, optional
        Where. Default "upper right".
    panel : tuple of str, optional
        The panel (its facet values). Default None: the first panel.

    Raises
    ------
    ValueError
        If ``corner`` is not one of those listed.

    Examples
    --------
    >>> Note("bound 1 (beyond the view)").corner
    'upper right'
    """

    text: str
    corner: str = "upper right"
    panel: tuple[str, ...] | None = None

    def __post_init__(self):
        if self.corner not in CORNERS:
            raise ValueError(f"Note corner must be one of {', '.join(CORNERS)}, got {self.corner!r}")


@dataclass(frozen=True)
class View:
    """What one panel of a :class:`Chart` shows of its axes: the ranges in view and its own y axis title.

    Parameters
    ----------
    panel : tuple of str, optional
        The panel (its facet values). Default (): the chart's only panel.
    x, y : tuple of float, optional
        The axis' range in view (data units; a log axis' must be positive). Default None: what the data span.
    ylabel : str, optional
        This panel's y axis title. Default None: :attr:`Chart.ylabel` (on the first column's panels).
    line : {"straight", "step"}, optional
        How this panel's series join their points. Default None: :attr:`Chart.line`.

    Examples
    --------
    >>> View(y=(0.0, 1.0)).y
    (0.0, 1.0)
    """

    panel: tuple[str, ...] = ()
    x: tuple[float, float] | None = None
    y: tuple[float, float] | None = None
    ylabel: str | None = None
    line: str | None = None


@dataclass(frozen=True)
class Chart:
    """What a chart draws, for both renderers (:func:`to_matplotlib`, :func:`~simstudy.chart_vega.to_vega`).

    Parameters
    ----------
    title : str
        The chart's title (user text: drawn as typed, escaped where it lands).
    rows : tuple of dict
        The tidy table drawn, one dict per point: ``x`` and ``estimate`` (numbers; ``x`` may be text, then an
        ordinal axis), optionally ``shown`` (the tooltip's text, e.g. ``"0.101 ± 0.002"``), ``hue`` (the
        series, text), ``lo`` and ``hi`` (the :attr:`interval`'s ends: shaded where both are given, a side given
        alone, which alone bounds the curve there, drawn as a thin line), ``facet`` (a tuple of text, one value
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
    line : {"straight", "step"}, optional
        How a series joins its points: straight, or as steps held until the next x (a right-continuous curve:
        a tuning curve at integer budgets, an empirical CDF). Default "straight".
    series : str, optional
        Words after a series' name in the PNG's legend (``": median tuning curve"``). Default "".
    references : tuple of Reference, optional
        Lines and shaded ranges that are not rows (a target, the budget n, a bound). Default none.
    notes : tuple of Note, optional
        Words in a panel's corner (a bound beyond the view). Default none.
    views : tuple of View, optional
        A panel's ranges in view and y axis title. Default none: what the data span.
    inches : tuple of float, optional
        A panel's width and height in the PNG, in inches. Default (3.6, 2.8).
    legend_columns : int, optional
        The PNG's legend columns. Default None: as many as the panels' columns, at most 3.
    greys : tuple of (str, float), optional
        Series drawn in a grey (0 black to 1 white) rather than a colour of the palette: a reference curve beside
        the estimates. Default none.

    Raises
    ------
    ValueError
        If ``xscale``, ``role``, ``marks`` or ``line`` is not one of those listed (the message names the key and
        value).

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
    line: str = "straight"
    series: str = ""
    references: tuple[Reference, ...] = ()
    notes: tuple[Note, ...] = ()
    views: tuple[View, ...] = ()
    inches: tuple[float, float] = (3.6, 2.8)
    legend_columns: int | None = None
    greys: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        if self.xscale not in XSCALES:
            raise ValueError(f"Chart xscale must be one of {', '.join(XSCALES)}, got {self.xscale!r}")
        if self.line not in ("straight", "step"):
            raise ValueError(f"Chart line must be 'straight' or 'step', got {self.line!r}")
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
        The description; :func:`to_matplotlib` and :func:`~simstudy.chart_vega.to_vega` draw it.

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


def log_spaced(x, most: int) -> Any:
    """Which of ``x`` (budgets >= 1) to draw: every value up to ``most``, beyond it only the integers nearest
    ``most`` points spaced evenly on a log scale (a curve of 10^6 budgets is 10^6 rows; the eye sees a few hundred).

    Parameters
    ----------
    x : numpy.ndarray
        The budgets, float (NaN never kept beyond ``most``).
    most : int
        How many log-spaced budgets to keep at most (per series: the same budgets in each).

    Returns
    -------
    numpy.ndarray of bool
        True where a row is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> int(log_spaced(np.arange(1.0, 1001.0), 10).sum())
    10
    """
    import numpy as np

    top = np.nanmax(x) if np.isfinite(x).any() else 0
    if top <= most:
        return np.ones(len(x), dtype=bool)
    return np.isin(x, np.unique(np.round(np.geomspace(1, top, most))))


# --------------------------------------------------------------------------------------------- matplotlib


def series_colors(chart: Chart, hues: list) -> dict:
    """Each series' colour as RGB: the colorblind palette in order of first appearance, a :attr:`Chart.greys`
    series its grey (the palette skips it)."""
    greys = dict(chart.greys)
    coloured = [h for h in hues if h not in greys]
    palette = dict(zip(coloured, colorblind(len(coloured))))
    return {h: palette[h] if h in palette else (greys[h],) * 3 for h in hues}


def in_panel(panel: tuple[str, ...] | None, values: tuple, first: bool) -> bool:
    """Whether a :class:`Reference`, :class:`Note` or :class:`View` of ``panel`` belongs in the panel of facet
    ``values`` (``panel`` None: every panel, or only the first where ``first`` says which it is)."""
    return (first if panel is None else tuple(panel) == tuple(values)) if values or panel else True


def to_matplotlib(chart: Chart):
    """The chart as a matplotlib figure in the house style, as the PNG/PDF files show it.

    One axes per panel (:attr:`Chart.facets`' value combinations, in the rows' order) in a grid: as many columns
    as the last facet key has values when they are 2 to 5 and fill the rows, else up to 4; the y axes are not
    shared (panels can differ in scale by orders of magnitude). In each panel, one line per series in the
    colorblind palette (estimators U, V, W in the papers' notation), straight or in steps (:attr:`Chart.line`), one
    line style per :attr:`Chart.styles` value, the interval shaded where both its sides are given (or as bars; a
    side given alone as a thin line), the reference level dashed, the :attr:`Chart.references` (lines, shaded
    ranges, with their words at the line), the :attr:`Chart.notes` in their corners, the :attr:`Chart.views`'
    ranges. The legend sits below the panels (inside one it covered a curve wherever the curves fill it), the
    title above them; titles, labels and legend entries are wrapped to the room they have.

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
    import numpy as np
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
    palette = series_colors(chart, hues)
    hue = rows["hue"] if "hue" in rows else pd.Series(None, index=rows.index, dtype=object)
    style = rows["style"].fillna("") if "style" in rows else pd.Series("", index=rows.index, dtype=object)
    named = [c for c in dict.fromkeys(style) if c]
    styles = {"": "-", **{c: ("-", "--", ":", "-.")[k % 4] for k, c in enumerate(named)}}
    for side in ("lo", "hi"):
        if side not in rows:
            rows[side] = np.nan
    rows[["lo", "hi"]] = rows[["lo", "hi"]].astype(float)
    banded = chart.interval is not None and bool((rows["lo"].notna() & rows["hi"].notna()).any())
    width, height = chart.inches
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows + 0.6),
        sharex=not chart.views,
        squeeze=False,
        layout="constrained",
    )
    labelled: set = set()
    one_sided = False
    for i, values in enumerate(panels):
        ax = axes.flat[i]
        s = rows[facet.map(lambda f, v=values: f == v)] if chart.facets else rows
        view = next((v for v in chart.views if tuple(v.panel) == tuple(values)), None)
        step = {"drawstyle": "steps-post"} if ((view and view.line) or chart.line) == "step" else {}
        for h in hues:
            for c, ls in styles.items():
                line = s[(hue[s.index] == h if h is not None else True) & (style[s.index] == c)].sort_values("x")
                if not len(line):
                    continue
                label = None
                if h is not None and h not in labelled:
                    labelled.add(h)
                    label = estimator_label(str(h)) + plain(chart.series)
                marker = {"marker": "o", "ms": 3} if "point" in chart.marks else {}
                ax.plot(line["x"], line["estimate"], color=palette[h], label=label, lw=1.6, ls=ls, **marker, **step)
                if chart.interval is None:
                    continue
                lo, hi = line["lo"], line["hi"]
                both = lo.notna() & hi.notna()
                if chart.interval.mark == "bars":
                    ax.vlines(line["x"], lo, hi, color=palette[h], alpha=chart.interval.opacity, lw=1)
                elif both.any():
                    # a step is held through the next x: there, the last values both sides bounded
                    where = both | (both.shift(1, fill_value=False) if step else False)
                    ax.fill_between(
                        line["x"],
                        lo.where(both).ffill() if step else lo,
                        hi.where(both).ffill() if step else hi,
                        where=where.to_numpy(),
                        color=palette[h],
                        alpha=chart.interval.opacity,
                        lw=0,
                        step="post" if step else None,
                    )
                for side, other in ((lo, hi), (hi, lo)):  # a side that alone bounds the curve: a thin line
                    alone = side.notna() & other.isna()
                    if alone.any():
                        one_sided = True
                        ax.plot(line["x"], side.where(alone), color=palette[h], lw=0.9, **step)
        if chart.rule is not None and chart.rule in s and s[chart.rule].notna().any():
            if chart.x == chart.rule:  # the diagonal is the goal
                level = s.dropna(subset=[chart.rule]).sort_values("x")
                ax.plot(level["x"], level[chart.rule], color="0.45", lw=0.8, ls="--")
            else:
                for level in dict.fromkeys(s[chart.rule].dropna()):
                    ax.axhline(level, color="0.45", lw=0.8, ls="--")
        for ref in chart.references:
            if in_panel(ref.panel, values, True):
                _draw_reference(ax, ref, palette)
        for note in chart.notes:
            if in_panel(note.panel, values, i == 0):
                right, upper = note.corner.endswith("right"), note.corner.startswith("upper")
                ax.text(
                    0.99 if right else 0.01,
                    0.98 if upper else 0.02,
                    plain(note.text),
                    transform=ax.transAxes,
                    ha="right" if right else "left",
                    va="top" if upper else "bottom",
                    fontsize=7,
                    color="0.3",
                )
        if chart.facets:
            named_panel = [f"{k} = {v}" for k, v in zip(chart.facets, values)] if chart.panel_keys else list(values)
            axes_title(ax, ", ".join(named_panel))
        if view is not None and view.ylabel:
            labels(ax, ylabel=view.ylabel)
        elif i % ncols == 0:
            labels(ax, ylabel=chart.ylabel)
        if i >= len(panels) - ncols or chart.views:
            labels(ax, xlabel=chart.xlabel or chart.x)
        if chart.xscale == "log":
            set_xscale(ax, "log")
        if view is not None and view.x is not None:
            ax.set_xlim(*view.x)
        if view is not None and view.y is not None:
            ax.set_ylim(*view.y)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    extra: list = []
    for ax in axes.flat[1 : len(panels)]:  # series first drawn in a later panel
        extra += [h for h, lb in zip(*ax.get_legend_handles_labels()) if lb and not lb.startswith("_")]
    if banded:
        extra.append(shade_patch(chart.interval.label))  # type: ignore[union-attr]  # banded: an interval
    if named and (len(named) > 1 or ("" in styles and (style == "").any())):
        extra += [Line2D([], [], color="0.3", ls=styles[c], label=c) for c in named]
    if chart.rule is not None and chart.rule in rows and rows[chart.rule].notna().any():
        extra += [Line2D([], [], color="0.45", lw=0.8, ls="--", label=chart.rule_label)]
    extra += [_reference_handle(ref, palette) for ref in chart.references if ref.label]
    if one_sided:
        extra.append(
            Line2D([], [], color="0.3", lw=0.9, label="thin line: the band's side that still bounds the curve")
        )
    if extra or any(h is not None for h in hues):
        columns = chart.legend_columns or min(3, max(1, ncols))
        legend(fig, axes.flat[0], extra, fontsize=7, loc="outside lower center", ncols=columns)
    if chart.title:
        suptitle(fig, chart.title)
    return fig


def _reference_color(ref: Reference, palette: dict):
    return palette.get(ref.hue, str(ref.grey)) if ref.hue is not None else str(ref.grey)


def _draw_reference(ax, ref: Reference, palette: dict) -> None:
    """One :class:`Reference` in its panel: a line (or a shaded range) and its words at the line's start."""
    color, ls = _reference_color(ref, palette), DASHES[ref.dash][0]
    if ref.to is not None:
        span = ax.axhspan if ref.axis == "y" else ax.axvspan
        span(ref.value, ref.to, color=color, alpha=0.25, lw=0)
    elif ref.axis == "y" and ref.span is not None:
        ax.hlines(ref.value, *ref.span, color=color, ls=ls, lw=ref.width)
    elif ref.axis == "y":
        ax.axhline(ref.value, color=color, ls=ls, lw=ref.width)
    elif ref.span is not None:
        ax.vlines(ref.value, *ref.span, color=color, ls=ls, lw=ref.width)
    else:
        ax.axvline(ref.value, color=color, ls=ls, lw=ref.width)
    if ref.note:
        if ref.axis == "y":  # at its left end, just above the line
            where, xy, align = ("axes fraction", "data"), (0.01, ref.value), {"ha": "left", "va": "bottom"}
            offset = (0, 2)
        else:  # at its top, just left of the line
            where, xy, align = ("data", "axes fraction"), (ref.value, 0.98), {"ha": "right", "va": "top"}
            offset = (-3, 0)
        ax.annotate(
            plain(ref.note),
            xy,
            xycoords=where,
            xytext=offset,
            textcoords="offset points",
            fontsize=7,
            color="0.3",
            **align,
        )


def _reference_handle(ref: Reference, palette: dict):
    """The legend entry of a labelled :class:`Reference`."""
    from matplotlib.lines import Line2D

    color = _reference_color(ref, palette)
    if ref.to is not None:
        return shade_patch(ref.label or "", alpha=0.25) if ref.hue is None else _patch(ref.label, color)
    return Line2D([], [], color=color, ls=DASHES[ref.dash][0], lw=ref.width, label=ref.label)


def _patch(label, color):
    from matplotlib.patches import Patch

    return Patch(facecolor=color, alpha=0.25, lw=0, label=label)
