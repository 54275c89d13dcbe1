"""The coverage studies' zip plots: each replicate's position, the ``zip.parquet`` frame, and the figure.

The zip plot (Morris, White & Crowther 2019, §5.2 and Fig. 4) shows *which* replicates' intervals miss the
truth, not only how many: every replicate's interval is a horizontal line, ranked by how far the truth sits
from the interval's centre, covering and non-covering intervals in two colours, with the nominal level and the
Monte Carlo (Clopper-Pearson) interval of the achieved coverage.

``band_coverage``, ``bootstrap_coverage`` and ``parametric_extrapolation`` store, beside their sums, each
replicate's ``zip_position`` (how far the truth lies outside its interval, in half-widths:
:func:`simstudy.stats.metrics.interval_position`) and ``zip_side``; a run writes ``zip.parquet`` from them (one
row per replicate of each panel drawn), and the study command draws ``zip.png`` from that file. A run directory
made before those arrays existed resumes as it was: its summary is unchanged and it gets no zip plot (a log
line says why), since a zip plot of only the newer chunks' replicates would misstate the coverage.

==================  =======================================================================================
:func:`positions`   a cell's stacked position and side arrays, or None when a stored chunk lacks them
:func:`panel`       one panel's rows of the zip frame
:func:`write`       the zip frame written atomically to ``zip.parquet``, or a log line why there is none
:func:`zip_plot`    one zip panel on an axes
:func:`zip_figure`  a panel per ``panel`` value of a tidy per-replicate frame (``zip.png``)
==================  =======================================================================================

matplotlib is imported when a figure is drawn, not with this module.

References
----------
Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
methods. Statistics in Medicine 38(11), 2074-2102.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy import io
from simstudy.stats.metrics import clopper_pearson, thinned, zip_centiles

if TYPE_CHECKING:
    import pandas as pd

    from simstudy.studies.base import ChunkedRun

__all__ = ["positions", "panel", "write", "zip_plot", "zip_figure", "POSITION", "SIDE"]

log = logging.getLogger("simstudy")

#: The chunk arrays (the replicates on the last axis).
POSITION, SIDE = "zip_position", "zip_side"


def positions(run: ChunkedRun, cell: str, index: Any = ()) -> tuple[np.ndarray, np.ndarray] | None:
    """A cell's per-replicate positions and sides, its chunks joined in chunk order, or None.

    Parameters
    ----------
    run : simstudy.studies.base.ChunkedRun
        The study's chunked run.
    cell : str
        The cell's key.
    index : optional
        The panels to keep, an index into the arrays' leading axes applied to each chunk before they are
        joined (so only what is drawn is held for every replicate). Default ``()``: everything.

    Returns
    -------
    tuple of ndarray or None
        ``(position, side)``, float64 and int8 of the indexed leading shape and the cell's replicates on the
        last axis; None when a stored chunk has no such arrays (it was computed before they existed).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.config import Config, RunnerConfig, StudyConfig
    >>> from simstudy.studies.base import run_chunks
    >>> config = Config(seed=0, distributions=(), budget=None, estimators=(),
    ...                 study=StudyConfig("demo", "demo", reps=3, chunk_reps=2), runner=RunnerConfig(1, "loky", False))
    >>> chunk = lambda task: {POSITION: np.full((1, task.reps), -0.5), SIDE: np.ones((1, task.reps), np.int8)}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     run = run_chunks(config, Path(tmp), scheme="demo/1", cells=["c0"], chunk_fn=chunk, settings={})
    ...     position, side = positions(run, "c0")
    ...     first = positions(run, "c0", 0)
    >>> position.shape, side.dtype.name, first[0].shape
    ((1, 3), 'int8', (3,))
    """
    parts = [arrays for _, arrays in run.chunks(cell)]
    if not all(POSITION in a and SIDE in a for a in parts):
        return None
    return tuple(np.concatenate([a[name][index] for a in parts], axis=-1) for name in (POSITION, SIDE))  # type: ignore[return-value]


#: A panel keeps at most this many replicates in ``zip.parquet``, evenly by rank (its centiles from all).
KEEP = 2000


def panel(title: str, position, side, *, nominal: float, ci_level: float, **keys) -> pd.DataFrame:
    """One zip panel's rows: a row per replicate (at most :data:`KEEP`, evenly by rank), in replicate order.

    Parameters
    ----------
    title : str
        The panel's title (its ``panel`` value).
    position, side : array_like, shape (R,)
        Each replicate's position (float) and side (+1/-1).
    nominal : float, keyword-only
        The intervals' nominal coverage, in (0, 1).
    ci_level : float, keyword-only
        The level of the Clopper-Pearson interval of the achieved coverage drawn.
    **keys
        More columns, one value each (the cell, distribution, method ...).

    Returns
    -------
    pandas.DataFrame
        Columns ``panel``, the ``keys``, ``replicate`` (its index in the cell, 0..R-1), ``position``, ``side``,
        ``centile`` (its rank among all R, :func:`simstudy.stats.metrics.zip_centiles`), ``hits`` (how many of all
        R cover: position <= 0), ``reps`` (R), ``nominal``, ``ci_level``.

    Examples
    --------
    >>> rows = panel("v, k = 1", [-0.4, 0.3, -0.9], [1, -1, 1], nominal=0.95, ci_level=0.99, estimator="v")
    >>> rows.columns.tolist()
    ['panel', 'estimator', 'replicate', 'position', 'side', 'centile', 'hits', 'reps', 'nominal', 'ci_level']
    >>> rows.centile.round(1).tolist(), int(rows.hits.iloc[0])
    ([66.7, 100.0, 33.3], 2)
    """
    import pandas as pd

    position = np.asarray(position, dtype=np.float64)
    centile, order = zip_centiles(position)
    kept = np.sort(order[thinned(position.size, KEEP)])
    return pd.DataFrame(
        {
            "panel": title,
            **keys,
            "replicate": kept,
            "position": position[kept],
            "side": np.asarray(side, dtype=np.int8)[kept],
            "centile": centile[kept],
            "hits": int(np.sum(position <= 0)),
            "reps": position.size,
            "nominal": float(nominal),
            "ci_level": float(ci_level),
        }
    )


def write(out_dir: Path, frames: list[pd.DataFrame], complete: bool) -> dict[str, Path]:
    """Write the zip frame to ``out_dir/zip.parquet`` (atomically); return ``{"zip": path}``, or ``{}``.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run directory.
    frames : list of pandas.DataFrame
        Each cell's rows (columns ``panel``, ``position``, ``side``, ``nominal``, ... :func:`zip_figure`).
    complete : bool
        False when a cell's stored chunks have no positions: then nothing is written and a log line says why.

    Returns
    -------
    dict of str to pathlib.Path
        The file written, by role (``zip``), for the study's result; empty if none.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"panel": "a", "position": [-0.5, 0.2], "side": 1, "nominal": 0.9})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = write(Path(tmp), [frame], True)
    ...     print(sorted(files), files["zip"].name, len(pd.read_parquet(files["zip"])))
    ['zip'] zip.parquet 2
    """
    import pandas as pd

    if not complete:
        log.info(
            "no zip plot: this run directory's chunks were stored before they kept each replicate's position "
            "(the summary is unchanged; a new run directory gets one)"
        )
        return {}
    frames = [f for f in frames if len(f)]
    if not frames:
        return {}
    path = out_dir / "zip.parquet"
    io.write_parquet(pd.concat(frames, ignore_index=True), path)
    return {"zip": path}


#: The columns a zip frame needs (:func:`zip_figure`).
ZIP_COLUMNS = ("panel", "position", "side", "nominal")
#: What a zip panel's caption says a position is.
POSITION_TEXT = (
    "x: each replicate's interval in units of its half-width, truth at 0; y: its centile when ranked by how far "
    "the truth lies from the interval's centre (for a band: the worst point); red: the interval misses the truth"
)


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
        Each replicate's position (:func:`simstudy.stats.metrics.interval_position`): covered where <= 0.
        NaN positions (no interval) are left out.
    side : array_like of int, shape (R,), optional
        +1/-1: the interval lies above/below the truth (:func:`simstudy.stats.metrics.interval_position`);
        default all +1.
    nominal : float, keyword-only
        The intervals' nominal coverage, in (0, 1): a dashed line at ``100 * nominal``.
    ci_level : float, keyword-only
        The level of the Clopper-Pearson interval of the achieved coverage, shaded at the boundary between
        covering and non-covering replicates. Default 0.95.
    most : int, keyword-only
        At most this many intervals are drawn, evenly thinned by rank (the ranks come from all R). Default 300.
    centile : array_like of float, shape (R,), optional, keyword-only
        The replicates' centiles when ``position`` holds a subset of them ranked among more
        (:func:`simstudy.stats.metrics.zip_centiles` of all); then ``counts`` is required. Default None: ranked
        here.
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
        (the panel's title, e.g. the distribution, method and level), ``position``
        (:func:`simstudy.stats.metrics.interval_position`), ``side`` (+1/-1), ``nominal`` (the intervals' nominal
        coverage, in (0, 1)) and optionally ``ci_level`` (of the Clopper-Pearson interval; default 0.95); with
        ``centile``, ``hits`` and ``reps`` the rows are a subset of a panel's replicates, ranked among all
        ``reps`` of which ``hits`` cover (what a study writes for more than 2,000 replicates). Panels keep the
        frame's order.
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
    >>> from simstudy.stats.metrics import interval_position
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
