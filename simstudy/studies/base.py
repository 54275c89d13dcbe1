"""What every study shares: cells run in chunks by the runner, reduced in order, written with metadata.

A study module decides what a cell is, what one chunk computes and how a cell's chunks reduce to tidy
rows; :func:`run_chunks` and :func:`finish` do the rest the same way for all of them:

- the chunk store is keyed by a fingerprint of everything that fixes a chunk's numbers (the study's
  ``scheme`` version, the seed, the distributions, the study's own settings), so a changed config never
  reads back another config's chunks, while a larger ``study.reps`` reuses the chunks already done;
- results are read back in task order, never completion order, so sums are bit-identical however the
  chunks were scheduled;
- the summary (parquet and csv), and ``run.json`` with the resolved config, environment and timings, are
  written atomically.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from .. import io
from ..config import Config
from ..runner import RunReport, Task, chunk_tasks, run_tasks, stable_hash

__all__ = ["StudyResult", "ChunkedRun", "run_chunks", "finish", "cell_key"]

#: Columns every tidy summary starts with.
SUMMARY_COLUMNS = ("study", "cell", "distribution")


@dataclass(frozen=True)
class StudyResult:
    """A finished study: its tidy summary, the runner's report and the files written."""

    summary: pd.DataFrame
    report: RunReport
    files: dict[str, Path]
    kind: str = ""


@dataclass(frozen=True)
class ChunkedRun:
    """The chunks of a run, on disk, with the runner's report."""

    store: io.ChunkStore
    tasks_by_cell: dict[str, list[Task]]
    report: RunReport
    fingerprint: str

    def chunks(self, cell: str) -> Iterator[tuple[Task, dict[str, np.ndarray]]]:
        """A cell's chunk results, in chunk order."""
        for task in self.tasks_by_cell[cell]:
            yield task, self.store.read(task.cell, task.chunk, task.reps)

    def total(self, cell: str, name: str) -> np.ndarray:
        """The sum over a cell's chunks of one result array, added in chunk order (deterministic)."""
        total = None
        for _, arrays in self.chunks(cell):
            total = arrays[name] if total is None else total + arrays[name]
        return total

    def stacked(self, cell: str, name: str) -> np.ndarray:
        """A per-replicate result array of a cell, its chunks joined along the last axis in chunk order."""
        return np.concatenate([arrays[name] for _, arrays in self.chunks(cell)], axis=-1)


def empty_report() -> RunReport:
    """The runner's report for a study computed exactly, without chunks."""
    return RunReport(tasks=0, resumed=0, computed=0, wall_seconds=0.0, compute_seconds=0.0, warnings=())


def cell_key(**fields: Any) -> str:
    """A cell's key: a stable hash of what generates its data (it keys the cell's random streams)."""
    return stable_hash(fields)[:16]


def run_chunks(config: Config, out_dir: Path, *, scheme: str, cells: list[str], chunk_fn: Callable[[Task], dict],
               settings: dict) -> ChunkedRun:
    """Run (or resume) every cell's chunks of ``study.chunk_reps`` replicates.

    Parameters
    ----------
    scheme : str
        The study's chunk-format version; bump it when a chunk's meaning changes.
    cells : list of str
        Cell keys (see :func:`cell_key`).
    chunk_fn : callable
        ``chunk_fn(task) -> dict[str, ndarray]``, picklable.
    settings : dict
        Everything else besides seed, distributions and chunk size that fixes a chunk's numbers.
    """
    fingerprint = stable_hash({
        "scheme": scheme, "seed": config.seed, "distributions": [d.key for d in config.distributions],
        "chunk_reps": config.study.chunk_reps, **settings,
    })[:16]
    store = io.ChunkStore(out_dir / "chunks", fingerprint)
    tasks_by_cell = {key: chunk_tasks(key, config.study.reps, config.study.chunk_reps) for key in cells}
    report = run_tasks(
        chunk_fn,
        [t for tasks in tasks_by_cell.values() for t in tasks],
        store,
        n_jobs=config.runner.n_jobs,
        backend=config.runner.backend,
        progress=config.runner.progress,
        description=config.study.name,
    )
    return ChunkedRun(store, tasks_by_cell, report, fingerprint)


def finish(config: Config, out_dir: Path, run: ChunkedRun, summary: pd.DataFrame, *, started: float,
           metadata: dict, files: dict[str, Path] | None = None) -> StudyResult:
    """Write the tidy summary and ``run.json``; return the study's result."""
    summary.insert(0, "study", config.study.name)
    files = {"summary_parquet": out_dir / "summary.parquet", "summary_csv": out_dir / "summary.csv",
             "run": out_dir / "run.json", **(files or {})}
    io.write_parquet(summary, files["summary_parquet"])
    io.write_csv(summary, files["summary_csv"])
    io.write_json({
        "study": config.study.name,
        "kind": config.study.kind,
        "config": dataclasses.asdict(config),
        "seed": config.seed,
        "fingerprint": run.fingerprint,
        "runner": dataclasses.asdict(run.report),
        **metadata,
        "timings": {**metadata.get("timings", {}), "total_seconds": time.perf_counter() - started},
        "environment": io.environment(),
    }, files["run"])
    return StudyResult(summary=summary, report=run.report, files=files, kind=config.study.kind)
