"""The coverage studies' per-replicate positions, for their zip plots (:mod:`simstudy.figures_mc`).

``band_coverage``, ``bootstrap_coverage`` and ``parametric_extrapolation`` store, beside their sums, each
replicate's ``zip_position`` (how far the truth lies outside its interval, in half-widths:
:func:`simstudy.figures_mc.interval_position`) and ``zip_side``; a run writes ``zip.parquet`` from them (one row
per replicate of each panel drawn), and the study command draws ``zip.png`` from that file. A run directory
made before those arrays existed resumes as it was: its summary is unchanged and it gets no zip plot (a log
line says why), since a zip plot of only the newer chunks' replicates would misstate the coverage.

==================  =======================================================================================
:func:`positions`   a cell's stacked position and side arrays, or None when a stored chunk lacks them
:func:`panel`       one panel's rows of the zip frame
:func:`write`       the zip frame written atomically to ``zip.parquet``, or a log line why there is none
==================  =======================================================================================
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy import io

if TYPE_CHECKING:
    import pandas as pd

    from simstudy.studies.base import ChunkedRun

__all__ = ["positions", "panel", "write", "POSITION", "SIDE"]

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
        ``centile`` (its rank among all R, :func:`simstudy.figures_mc.zip_centiles`), ``hits`` (how many of all
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

    from simstudy.figures_mc import thinned, zip_centiles

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
        Each cell's rows (columns ``panel``, ``position``, ``side``, ``nominal``, ... :func:`simstudy.figures_mc.zip_figure`).
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
