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
from typing import TYPE_CHECKING

import numpy as np

from simstudy import io

if TYPE_CHECKING:
    import pandas as pd

    from simstudy.studies.base import ChunkedRun

__all__ = ["positions", "panel", "write", "POSITION", "SIDE"]

log = logging.getLogger("simstudy")

#: The chunk arrays (the replicates on the last axis).
POSITION, SIDE = "zip_position", "zip_side"


def positions(run: ChunkedRun, cell: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A cell's per-replicate positions and sides, its chunks joined in chunk order, or None.

    Parameters
    ----------
    run : simstudy.studies.base.ChunkedRun
        The study's chunked run.
    cell : str
        The cell's key.

    Returns
    -------
    tuple of ndarray or None
        ``(position, side)``, float64 and int8 of the chunks' leading shape and the cell's replicates on the
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
    >>> position.shape, side.dtype.name
    ((1, 3), 'int8')
    """
    parts = [arrays for _, arrays in run.chunks(cell)]
    if not all(POSITION in a and SIDE in a for a in parts):
        return None
    return np.concatenate([a[POSITION] for a in parts], axis=-1), np.concatenate([a[SIDE] for a in parts], axis=-1)


def panel(title: str, position, side, *, nominal: float, ci_level: float, **keys) -> pd.DataFrame:
    """One zip panel's rows: a row per replicate, in replicate order.

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
        Columns ``panel``, the ``keys``, ``replicate`` (0..R-1), ``position``, ``side``, ``nominal``, ``ci_level``.

    Examples
    --------
    >>> panel("v, k = 1", [-0.4, 0.3], [1, -1], nominal=0.95, ci_level=0.99, estimator="v").columns.tolist()
    ['panel', 'estimator', 'replicate', 'position', 'side', 'nominal', 'ci_level']
    """
    import pandas as pd

    position = np.asarray(position, dtype=np.float64)
    return pd.DataFrame(
        {
            "panel": title,
            **keys,
            "replicate": np.arange(position.size),
            "position": position,
            "side": np.asarray(side, dtype=np.int8),
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
