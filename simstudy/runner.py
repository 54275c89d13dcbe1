"""The runner: executes a study's chunks with joblib, stores each as it finishes, and resumes.

It knows nothing about statistics. A study hands it :class:`Task` objects and a picklable function
``fn(task) -> dict[str, ndarray]``; the runner skips tasks whose results are already in the
:class:`~simstudy.io.ChunkStore` (resume), runs the rest in parallel, and writes each result atomically the
moment it arrives, so an interrupted run loses at most the chunks in flight.

Reproducibility does not depend on scheduling: every task draws its random numbers from
:func:`task_seed` -- ``SeedSequence(seed, spawn_key=(cell key, chunk))`` -- never from a worker's state,
and the study combines results in task order, not completion order. So results are bit-identical for any
``n_jobs``, any backend, and after a resume.

Workers do not log (their logs are lost with the process); they return their warnings and timings, which
the runner collects in the :class:`RunReport`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import joblib
import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .io import ChunkStore

__all__ = ["Task", "RunReport", "stable_hash", "task_seed", "chunk_tasks", "run_tasks"]


@dataclass(frozen=True)
class Task:
    """One chunk of replicates of one cell.

    Attributes
    ----------
    cell : str
        The cell's key (hex digest of its data-generating configuration).
    chunk : int
        Chunk index within the cell, from 0.
    reps : int
        Replicates in this chunk.
    first_rep : int
        Index of the chunk's first replicate within the cell.
    """

    cell: str
    chunk: int
    reps: int
    first_rep: int


@dataclass(frozen=True)
class RunReport:
    """What a run did. Times in seconds."""

    tasks: int
    resumed: int
    computed: int
    wall_seconds: float
    compute_seconds: float
    warnings: tuple[str, ...]


def stable_hash(obj) -> str:
    """A hex digest of a plain structure (dicts, lists, tuples, str, numbers), stable across processes,
    platforms and Python versions (unlike :func:`hash`)."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def task_seed(seed: int, cell: str, chunk: int, *stream: int) -> np.random.SeedSequence:
    """The seed sequence of a task, keyed by cell and chunk (and an optional sub-stream), never by worker."""
    return np.random.SeedSequence(seed, spawn_key=(int(cell[:15], 16), chunk, *stream))


def chunk_tasks(cell: str, reps: int, chunk_reps: int) -> list[Task]:
    """Split ``reps`` replicates of a cell into chunks of ``chunk_reps`` (the last one may be shorter)."""
    return [
        Task(cell, k, min(chunk_reps, reps - start), start)
        for k, start in enumerate(range(0, reps, chunk_reps))
    ]


_pinned_pid: int | None = None


def _pin_blas_threads(main_pid: int) -> None:
    """Single-threaded BLAS in a worker process, once per process.

    A multi-threaded BLAS may round a matrix product differently with a different thread count, which would
    make results depend on ``n_jobs``. The main process is pinned by :func:`run_tasks` for the duration of
    the run only (a context), worker processes for good (they are pool workers).
    """
    global _pinned_pid
    pid = os.getpid()
    if pid != main_pid and _pinned_pid != pid:
        threadpool_limits(1, user_api="blas")
        _pinned_pid = pid


def _execute(fn: Callable, task: Task, main_pid: int):
    """Worker side: run one task, capturing its warnings and time instead of logging them."""
    _pin_blas_threads(main_pid)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(task)
    seconds = time.perf_counter() - start
    messages = tuple(f"{task.cell}/{task.chunk}: {w.category.__name__}: {w.message}" for w in caught)
    return task, result, messages, seconds


def run_tasks(
    fn: Callable[[Task], dict],
    tasks: Sequence[Task],
    store: ChunkStore,
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    progress: bool | None = None,
    description: str = "chunks",
) -> RunReport:
    """Run every task not yet in ``store`` and store its result.

    Parameters
    ----------
    fn : callable
        ``fn(task) -> dict[str, ndarray]``; must be picklable (a module-level function or a
        :func:`functools.partial` of one over frozen arguments).
    tasks : sequence of Task
    store : ChunkStore
        Where results go; tasks already there are skipped.
    n_jobs, backend
        Passed to :class:`joblib.Parallel`.
    progress : bool or None
        Show a progress bar; ``None`` shows one only on a terminal.
    """
    start = time.perf_counter()
    todo = [t for t in tasks if not store.has(t.cell, t.chunk, t.reps)]
    resumed = len(tasks) - len(todo)
    messages: list[str] = []
    compute = 0.0
    if todo:
        parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
        bar = tqdm(total=len(tasks), initial=resumed, desc=description, unit="chunk",
                   disable=(not progress) if progress is not None else None)
        with threadpool_limits(1, user_api="blas"):
            results = parallel(joblib.delayed(_execute)(fn, t, os.getpid()) for t in todo)
            try:
                for task, result, caught, seconds in results:
                    store.write(task.cell, task.chunk, task.reps, result)
                    messages.extend(caught)
                    compute += seconds
                    bar.update(1)
            finally:
                bar.close()
    return RunReport(
        tasks=len(tasks),
        resumed=resumed,
        computed=len(todo),
        wall_seconds=time.perf_counter() - start,
        compute_seconds=compute,
        warnings=tuple(messages),
    )
