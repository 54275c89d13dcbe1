"""Two figures of a simulation study's own performance: the zip plot and the nested-loop plot.

The zip plot (Morris, White & Crowther 2019, §5.2 and Fig. 4) shows *which* replicates' intervals miss the
truth, not only how many: every replicate's interval is a horizontal line, ranked by how far the truth sits
from the interval's centre, covering and non-covering intervals in two colours, with the nominal level and the
Monte Carlo (Clopper-Pearson) interval of the achieved coverage. The nested-loop plot (Rücker & Schwarzer
2014) shows a factorial simulation design on one axis: every cell of the factorial in lexicographic order (the
first factor varies slowest), the estimate as a step line, and beneath it one step line per factor giving its
level in each cell.

Position of an interval. For an interval [lo, hi] and truth θ with half-width h = (hi - lo) / 2,
``position = max(lo - θ, θ - hi) / h``: -1 when θ is at the centre, 0 at an edge, > 0 outside (the distance
beyond the nearer edge in half-widths). It is computed so that ``position <= 0`` exactly when
``lo <= θ <= hi`` (the signs of the differences are exact in floating point), so the coverage counted from
positions equals the studies' own count bit for bit. For a Wald interval estimate ± z·se it is ``|z_i| / z - 1``,
Morris et al.'s ranking by ``|z_i|``. For a simultaneous band the position is the largest over the band's points
(covered exactly when every point is), each point's difference in units of the band's half-width there. A
``side`` (+1: the interval lies above the truth, -1: below; 0: unknown) places each line left or right of θ.

================================  ===========================================================================
:func:`zip_centiles`              each replicate's fractional centile (0-100] of its position, and the order
:func:`interval_position`         the position (and side) of intervals [lo, hi] around a truth, elementwise
:func:`zip_plot`                  one zip panel on an axes
:func:`zip_figure`                a panel per ``panel`` value of a tidy per-replicate frame (``zip.png``)
:func:`nested_loop_layout`        the lexicographic order of a factorial's cells and its factors' step lines
:func:`nested_loop_figure`        a tidy frame's estimate over the cells of a factorial (``nested_loop.png``)
================================  ===========================================================================

matplotlib is imported when a figure is drawn, not with this module.

References
----------
Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
methods. Statistics in Medicine 38(11), 2074-2102.

Rücker, G., & Schwarzer, G. (2014). Presenting simulation results in a nested loop plot. BMC Medical Research
Methodology 14, 129.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "zip_centiles",
    "interval_position",
    "zip_plot",
    "zip_figure",
    "nested_loop_layout",
    "nested_loop_figure",
]

#: The columns a zip frame needs (:func:`zip_figure`).
ZIP_COLUMNS = ("panel", "position", "side", "nominal")
#: What a zip panel's caption says a position is.
POSITION_TEXT = (
    "x: each replicate's interval in units of its half-width, truth at 0; y: its centile when ranked by how far "
    "the truth lies from the interval's centre (for a band: the worst point); red: the interval misses the truth"
)


def interval_position(low, high, truth) -> tuple[np.ndarray, np.ndarray]:
    """Where the truth sits relative to intervals [low, high]: the zip plot's position and side, elementwise.

    Parameters
    ----------
    low, high : array_like of float
        The intervals' ends (any units, ``low <= high``); any shapes, broadcast with ``truth``.
    truth : array_like of float
        The true value(s), in the same units.

    Returns
    -------
    position : ndarray of float64
        ``max(low - truth, truth - high) / h`` with h the half-width (floored at the smallest positive float,
        which keeps the sign): -1 at the centre, 0 at an edge, > 0 outside. ``position <= 0`` exactly when
        ``low <= truth <= high``.
    side : ndarray of int8
        +1 where the interval's centre lies above the truth, -1 below (or at it).

    Examples
    --------
    >>> pos, side = interval_position([0.0, 1.0, -3.0], [2.0, 3.0, -1.0], 1.0)
    >>> pos.tolist(), side.tolist()
    ([-1.0, 0.0, 2.0], [-1, 1, -1])
    """
    low, high, truth = (np.asarray(v, dtype=np.float64) for v in (low, high, truth))
    gap = np.maximum(low - truth, truth - high)
    half = np.maximum((high - low) / 2.0, np.finfo(np.float64).tiny)
    side = np.where(low + high > 2.0 * truth, 1, -1).astype(np.int8)
    with np.errstate(over="ignore", invalid="ignore"):  # a degenerate interval: +-inf outside
        position = gap / half
    # an infinite end: inf / inf, the sign of the gap (NaN only from NaN input, never counted as covered)
    return np.where(np.isnan(position) & ~np.isnan(gap), np.sign(gap), position), side


def zip_centiles(position) -> tuple[np.ndarray, np.ndarray]:
    """The zip plot's ranking: each replicate's fractional centile of its position, ties in replicate order.

    Parameters
    ----------
    position : array_like of float, shape (R,)
        Every replicate's position (:func:`interval_position`; any statistic ranked the same way, e.g. ``|z|``).

    Returns
    -------
    centile : ndarray of float64, shape (R,)
        ``100 * rank / R`` with rank 1..R ascending (a stable sort: ties keep the replicates' order), so the
        covering replicates (position <= 0) fill (0, 100 * coverage].
    order : ndarray of int, shape (R,)
        The replicates by rank (``position[order]`` is sorted).

    Examples
    --------
    >>> centile, order = zip_centiles([0.5, -1.0, -0.2, 2.0, -0.2])
    >>> centile.tolist(), order.tolist()
    ([80.0, 20.0, 40.0, 100.0, 60.0], [1, 2, 4, 0, 3])
    """
    position = np.asarray(position, dtype=np.float64)
    order = np.argsort(position, kind="stable")
    centile = np.empty(position.size)
    centile[order] = 100.0 * np.arange(1, position.size + 1) / max(position.size, 1)
    return centile, order


def thinned(count: int, most: int) -> np.ndarray:
    """At most ``most`` ranks of 0..count-1, evenly spaced, the first and last always (deterministic)."""
    if count <= most:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, most).round().astype(np.int64))


def zip_plot(
    ax,
    position,
    side=None,
    *,
    nominal: float,
    ci_level: float = 0.95,
    most: int = 300,
    centile=None,
    counts: tuple[int, int] | None = None,
) -> dict:
    """Draw one zip plot on ``ax``: every replicate's interval, ranked, coloured by whether it covers.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    position : array_like of float, shape (R,)
        Each replicate's position (:func:`interval_position`): covered where <= 0. NaN positions (no
        interval) are left out.
    side : array_like of int, shape (R,), optional
        +1/-1: the interval lies above/below the truth (:func:`interval_position`); default all +1.
    nominal : float, keyword-only
        The intervals' nominal coverage, in (0, 1): a dashed line at ``100 * nominal``.
    ci_level : float, keyword-only
        The level of the Clopper-Pearson interval of the achieved coverage, shaded at the boundary between
        covering and non-covering replicates. Default 0.95.
    most : int, keyword-only
        At most this many intervals are drawn, evenly thinned by rank (the ranks come from all R). Default 300.
    centile : array_like of float, shape (R,), optional, keyword-only
        The replicates' centiles when ``position`` holds a subset of them ranked among more
        (:func:`zip_centiles` of all); then ``counts`` is required. Default None: ranked here.
    counts : tuple of int, optional, keyword-only
        ``(covered, reps)`` of all the replicates, with ``centile``.

    Returns
    -------
    dict
        ``reps`` (R, NaN left out; or ``counts``'), ``covered`` (the count), ``coverage``, ``ci_low``, ``ci_high``
        (proportions) and ``drawn`` (the intervals drawn).

    Raises
    ------
    ValueError
        If ``centile`` is given without ``counts``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> out = zip_plot(ax, [-0.9, 0.4, -0.1, -0.5], [1, -1, 1, -1], nominal=0.9)
    >>> out["covered"], out["coverage"], out["drawn"]
    (3, 0.75, 4)
    >>> plt.close(fig)
    """
    from matplotlib.collections import LineCollection

    from simstudy.stats.metrics import clopper_pearson

    position = np.asarray(position, dtype=np.float64)
    side = np.ones(position.size, np.int8) if side is None else np.asarray(side)
    keep = np.isfinite(position)
    position, side = position[keep], side[keep]
    covered = position <= 0
    if centile is None:
        reps, hits = position.size, int(covered.sum())
        centile, order = zip_centiles(position)
    else:
        if counts is None:
            raise ValueError("zip_plot: centile= needs counts=(covered, reps) of all the replicates")
        hits, reps = (int(v) for v in counts)
        centile = np.asarray(centile, dtype=np.float64)[keep]
        order = np.argsort(centile, kind="stable")
    low, high = (float(v) for v in clopper_pearson(hits, max(reps, 1), ci_level))
    drawn = order[thinned(order.size, most)]
    centre = np.where(side[drawn] < 0, -1.0, 1.0) * (position[drawn] + 1.0)
    segments = np.stack(
        [np.stack([centre - 1.0, centile[drawn]], axis=1), np.stack([centre + 1.0, centile[drawn]], axis=1)], axis=1
    )
    colours = np.where(covered[drawn, None], [[0.0, 0.45, 0.70]], [[0.84, 0.15, 0.16]])
    ax.add_collection(LineCollection(list(segments), colors=colours, linewidths=0.8))
    ax.axhspan(100 * low, 100 * high, color="0.5", alpha=0.35, lw=0)
    ax.axhline(100 * nominal, color="black", ls="--", lw=0.9)
    ax.axvline(0.0, color="black", lw=0.8)
    reach = float(np.max(np.abs(centre), initial=0.0)) + 1.0
    ax.set_xlim(-min(max(reach, 2.5), 6.0), min(max(reach, 2.5), 6.0))
    ax.set_ylim(0, 100)
    coverage = hits / reps if reps else float("nan")
    return dict(reps=reps, covered=hits, coverage=coverage, ci_low=low, ci_high=high, drawn=int(drawn.size))


def zip_figure(frame: pd.DataFrame, *, title: str | None = None, most: int = 300, max_panels: int = 16):
    """Zip plots of a coverage study: one panel per ``panel`` value of a tidy per-replicate frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per replicate and panel (what a coverage study writes to ``zip.parquet``): columns ``panel``
        (the panel's title, e.g. the distribution, method and level), ``position`` (:func:`interval_position`),
        ``side`` (+1/-1), ``nominal`` (the intervals' nominal coverage, in (0, 1)) and optionally ``ci_level``
        (of the Clopper-Pearson interval; default 0.95); with ``centile``, ``hits`` and ``reps`` the rows are a
        subset of a panel's replicates, ranked among all ``reps`` of which ``hits`` cover (what a study writes
        for more than 2,000 replicates). Panels keep the frame's order.
    title : str, optional, keyword-only
        The figure's title. Default None: "Zip plots (Morris et al. 2019)".
    most : int, keyword-only
        At most this many intervals drawn per panel (thinned by rank; ranks from all). Default 300.
    max_panels : int, keyword-only
        At most this many panels, the first ones (the caption says how many were left out). Default 16.

    Returns
    -------
    matplotlib.figure.Figure
        A grid of up to four columns; each panel titled with its ``panel`` value, the achieved coverage and
        its interval; the legend and the definition of the axes below.

    Raises
    ------
    ValueError
        If a column of ``ZIP_COLUMNS`` is missing.

    References
    ----------
    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> z = rng.standard_normal(400)
    >>> pos, side = interval_position(z - 1.96, z + 1.96, 0.0)
    >>> frame = pd.DataFrame({"panel": "Wald, 95%", "position": pos, "side": side, "nominal": 0.95})
    >>> fig = zip_figure(frame)
    >>> fig.axes[0].get_title().startswith("Wald, 95%")
    True
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from simstudy.chart_style import axes_title, labels, suptitle, theme, wrap

    missing = [c for c in ZIP_COLUMNS if c not in frame]
    if missing:
        raise ValueError(f"a zip frame needs the columns {', '.join(ZIP_COLUMNS)}; missing {', '.join(missing)}")
    plt = theme()
    panels = list(dict.fromkeys(frame["panel"]))
    shown = panels[:max_panels]
    ncols = min(4, len(shown))
    nrows = -(-len(shown) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows + 1.0), squeeze=False, sharex=True, layout="constrained"
    )
    for ax, panel in zip(axes.flat, shown):
        s = frame[frame["panel"] == panel]
        level = float(s["ci_level"].iloc[0]) if "ci_level" in s else 0.95
        ranked = {"centile", "hits", "reps"} <= set(s)  # a subset of the replicates, ranked among all
        out = zip_plot(
            ax,
            s["position"].to_numpy(),
            s["side"].to_numpy(),
            nominal=float(s["nominal"].iloc[0]),
            ci_level=level,
            most=most,
            centile=s["centile"].to_numpy() if ranked else None,
            counts=(int(s["hits"].iloc[0]), int(s["reps"].iloc[0])) if ranked else None,
        )
        axes_title(
            ax,
            f"{panel}: coverage {out['coverage']:.3f} [{out['ci_low']:.3f}, {out['ci_high']:.3f}], "
            f"{out['reps']:,} reps",
            fontsize=7,
        )
    for i, ax in enumerate(axes.flat):
        if i >= len(shown):
            ax.set_visible(False)
            continue
        if i % ncols == 0:
            labels(ax, ylabel="centile of the position")
        if i >= len(shown) - ncols:
            labels(ax, xlabel="interval / half-width (truth at 0)")
    handles = [
        Line2D([], [], color=(0.0, 0.45, 0.70), label="covers the truth"),
        Line2D([], [], color=(0.84, 0.15, 0.16), label="misses the truth"),
        Line2D([], [], color="black", ls="--", label="nominal coverage"),
        Patch(facecolor="0.5", alpha=0.35, lw=0, label="Clopper–Pearson interval of the achieved coverage"),
    ]
    note = POSITION_TEXT + (f" ({len(panels) - len(shown)} more panels not drawn)" if len(panels) > len(shown) else "")
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=4,
        fontsize=7,
        frameon=True,
        title=wrap(fig, note, 0.9 * fig.get_figwidth(), 6.5),
        title_fontsize=6.5,
    )
    suptitle(fig, title or "Zip plots (Morris et al. 2019): every replicate's interval, ranked")
    return fig


def nested_loop_layout(codes, n_levels: Sequence[int], *, height: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """The nested-loop plot's kernel: the cells in lexicographic order and each factor's step line.

    Parameters
    ----------
    codes : array_like of int, shape (C, F)
        Each cell's level index (0-based) for each of F factors, the first factor the slowest loop.
    n_levels : sequence of int, length F
        How many levels each factor has.
    height : float, keyword-only
        How much of its lane (1 unit tall) a factor's step line spans, from its first level to its last.
        Default 0.7.

    Returns
    -------
    order : ndarray of int, shape (C,)
        The cells (rows of ``codes``) sorted lexicographically, first factor slowest: cell ``order[x]`` is
        drawn at x.
    lanes : ndarray of float64, shape (F, C)
        Factor f's step line: in lane ``F - 1 - f`` (the first factor on top), ``F - 1 - f + height * code /
        (levels - 1)`` at each x (the lane's bottom for a factor of one level).

    Examples
    --------
    A 2 x 3 x 2 factorial given in scrambled order:

    >>> import itertools
    >>> cells = np.array(list(itertools.product(range(2), range(3), range(2))))[::-1]
    >>> order, lanes = nested_loop_layout(cells, [2, 3, 2], height=1.0)
    >>> cells[order][:4].tolist()
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]
    >>> lanes.tolist()[0] == [2.0] * 6 + [3.0] * 6, lanes[1].tolist()[:6], lanes[2].tolist()[:4]
    (True, [1.0, 1.0, 1.5, 1.5, 2.0, 2.0], [0.0, 1.0, 0.0, 1.0])
    """
    codes = np.asarray(codes, dtype=np.int64)
    F = codes.shape[1]
    order = np.lexsort(codes.T[::-1])  # lexsort's last key is the primary one
    sorted_codes = codes[order].T.astype(np.float64)
    spread = np.array([max(n - 1, 1) for n in n_levels], dtype=np.float64)[:, None]
    lanes = (F - 1 - np.arange(F))[:, None] + height * sorted_codes / spread
    return order, lanes


def _levels(values: pd.Series) -> list:
    """A factor's levels in order: numbers ascending, anything else in order of first appearance."""
    import pandas as pd

    unique = list(pd.unique(values))
    return sorted(unique) if pd.api.types.is_numeric_dtype(values) else unique


def nested_loop_figure(
    frame: pd.DataFrame,
    factors: Sequence[str],
    *,
    y: str = "estimate",
    hue: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
):
    """A nested-loop plot (Rücker & Schwarzer 2014): ``y`` over every cell of a factorial, factors beneath.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows: one per cell of the factorial (and ``hue`` value): columns ``factors``, ``y`` and optionally
        ``hue`` and ``mcse`` (then ±2 MCSE is shaded; a Monte Carlo interval of about 95%).
    factors : sequence of str
        The factors, the first the slowest loop; each one's levels are ordered numerically for numbers, else
        as they first appear.
    y : str, keyword-only
        The column drawn. Default ``"estimate"``.
    hue : str, optional, keyword-only
        A column telling lines apart (e.g. ``"estimator"``). Default None: one line.
    ylabel : str, optional, keyword-only
        What ``y`` is. Default: ``y``.
    title : str, optional, keyword-only
        The figure's title. Default: "<ylabel> over the cells of <factors>".

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing x (the cell, 1..C in lexicographic order): the estimate's step lines on top, one
        step line per factor beneath, labelled with the factor and its levels.

    Raises
    ------
    ValueError
        If a column is missing, or two rows share a cell and ``hue`` value (the factors do not identify a row).

    References
    ----------
    Rücker, G., & Schwarzer, G. (2014). Presenting simulation results in a nested loop plot. BMC Medical
    Research Methodology 14, 129.

    Examples
    --------
    >>> import itertools
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> cells = list(itertools.product([10, 50], ["u", "v", "w"], [0.1, 0.2]))
    >>> frame = pd.DataFrame(cells, columns=["B", "estimator", "sd"]).assign(estimate=np.arange(12.0), mcse=0.1)
    >>> fig = nested_loop_figure(frame, ["B", "estimator", "sd"], ylabel="MSE")
    >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
    ['B', 'estimator', 'sd']
    >>> plt.close(fig)
    """
    from simstudy.chart_style import colorblind, estimator_label, labels, legend, plain, suptitle, theme

    needed = [*factors, y, *([hue] if hue else [])]
    missing = [c for c in needed if c not in frame]
    if missing:
        raise ValueError(f"nested_loop_figure: column(s) {', '.join(missing)} not in the frame")
    levels = [_levels(frame[f]) for f in factors]
    keys = frame[list(factors)].apply(tuple, axis=1)
    cells = list(dict.fromkeys(keys))
    codes = np.array([[lv.index(v) for lv, v in zip(levels, cell)] for cell in cells], dtype=np.int64)
    dup = frame.duplicated([*factors, *([hue] if hue else [])])
    if dup.any():
        raise ValueError(
            f"nested_loop_figure: {int(dup.sum())} rows share a cell of {', '.join(factors)}"
            + (f" and {hue}" if hue else "")
            + ": give the factors that tell them apart"
        )
    order, lanes = nested_loop_layout(codes, [len(lv) for lv in levels])
    position = {cells[c]: x for x, c in enumerate(order)}
    xs = keys.map(position).to_numpy()
    plt = theme()
    C, F = len(cells), len(factors)
    fig, (top, bottom) = plt.subplots(
        2,
        1,
        figsize=(max(6.0, min(14.0, 0.12 * C + 4.0)), 4.0 + 0.45 * F),
        sharex=True,
        height_ratios=[3.0, 0.45 * F + 0.3],
        layout="constrained",
    )
    hues = list(dict.fromkeys(frame[hue])) if hue else [None]
    palette = dict(zip(hues, colorblind(len(hues))))
    for h in hues:
        rows = frame[frame[hue] == h] if hue else frame
        at = xs[(frame[hue] == h).to_numpy()] if hue else xs
        line = np.full(C, np.nan)
        line[at] = rows[y].to_numpy(dtype=np.float64)
        top.step(
            np.arange(1, C + 1),
            line,
            where="mid",
            color=palette[h],
            lw=1.4,
            label=estimator_label(str(h)) if hue else y,
        )
        if "mcse" in rows:
            se = np.full(C, np.nan)
            se[at] = rows["mcse"].to_numpy(dtype=np.float64)
            top.fill_between(
                np.arange(1, C + 1), line - 2 * se, line + 2 * se, step="mid", color=palette[h], alpha=0.25, lw=0
            )
    labels(top, ylabel=ylabel or y)
    if hue:  # beside the panels, not in the top one: the step lines run through the whole of its width
        legend(fig, top, fontsize=7, loc="outside right upper")
    names = []
    for f in range(F):
        bottom.step(np.arange(1, C + 1), lanes[f], where="mid", color="0.25", lw=1.0)
        # each level named where its run starts, unless the runs are too many (an inner factor): then the
        # lane's label gives the range of its levels
        sorted_codes = codes[order, f]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        if starts.size <= 24:
            names.append(plain(factors[f]))
            for s in starts:
                bottom.text(s + 0.6, lanes[f, s] + 0.05, plain(levels[f][sorted_codes[s]]), fontsize=6, va="bottom")
        else:
            names.append(plain(f"{factors[f]} ({levels[f][0]} .. {levels[f][-1]})"))
    bottom.set_yticks(F - 1 - np.arange(F) + 0.35, names)
    bottom.set_ylim(-0.2, F)
    bottom.grid(False, axis="y")
    labels(bottom, xlabel=f"cell (lexicographic: {', '.join(factors)}; first slowest)")
    bottom.set_xlim(0.5, C + 0.5)
    suptitle(fig, title or f"{ylabel or y} over the cells of {' x '.join(factors)} (shaded: ±2 MCSE)")
    return fig
