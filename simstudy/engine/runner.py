"""The runner: executes a study's chunks with joblib, stores each as it finishes, and resumes.

It knows nothing about statistics. A study hands it :class:`Task` objects and a picklable function
``fn(task) -> dict[str, ndarray]``; the runner skips tasks whose results are already in the
:class:`~simstudy.engine.chunks.ChunkStore` (resume), runs the rest in parallel, and writes each result atomically the
moment it arrives, so an interrupted run loses at most the chunks in flight.

Reproducibility does not depend on scheduling: every task draws its random numbers from
:func:`task_seed` -- ``SeedSequence(seed, spawn_key=(cell key, chunk))`` -- never from a worker's state,
and the study combines results in task order, not completion order. So results are bit-identical for any
``n_jobs``, any backend, and after a resume.

Workers do not log (their logs are lost with the process); they return their warnings and timings, which
the runner collects in the :class:`RunReport`. Nor do they crash the run: an exception inside a task is
caught in the worker and returned as a :class:`Failure` with the task's seed key, so the other tasks finish;
:func:`replay` reruns one task in this process and lets the exception through with its full traceback.

Beyond one process (see :mod:`simstudy.engine.cluster`): ``backend="dask"`` sends the tasks through joblib's dask
backend to a dask.distributed cluster, a study's large fixed inputs scattered to every worker once;
:func:`shard` slices the task list for array jobs; ``require_complete`` only reads (``simstudy collect``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from simstudy.engine.chunks import ChunkStore, CorruptChunk

log = logging.getLogger(__name__)

__all__ = [
    "Task",
    "Failure",
    "RunReport",
    "MissingChunks",
    "stable_hash",
    "task_seed",
    "seed_key",
    "chunk_tasks",
    "shard",
    "run_tasks",
    "replay",
]


@dataclass(frozen=True)
class Task:
    """One chunk of replicates of one cell: the runner's unit of work, of storage and of resumption.

    Usually made by :func:`chunk_tasks`. A task's random numbers come from :func:`task_seed` with its cell and
    chunk, so they do not depend on which worker runs it, or when.

    Parameters
    ----------
    cell : str
        The cell's key (hex digest of its data-generating configuration, e.g. from :func:`stable_hash`).
    chunk : int
        Chunk index within the cell, from 0.
    reps : int
        Replicates in this chunk.
    first_rep : int
        Index of the chunk's first replicate within the cell (``chunk * chunk_reps``).

    Examples
    --------
    >>> Task("ab12", chunk=1, reps=50, first_rep=50)
    Task(cell='ab12', chunk=1, reps=50, first_rep=50)
    """

    cell: str
    chunk: int
    reps: int
    first_rep: int


@dataclass(frozen=True)
class Failure:
    """A task whose function raised: where (its seed key) and what, for the report and for :func:`replay`.

    :func:`run_tasks` catches an exception inside a task, stores nothing for it and returns one of these in
    ``RunReport.failures``, so that the other tasks finish; a rerun retries the task.

    Parameters
    ----------
    cell : str
        The failed task's cell key.
    chunk : int
        The failed task's chunk index.
    seed_key : tuple of int
        The spawn key of the task's :class:`numpy.random.SeedSequence` (:func:`seed_key`): with the run's seed,
        it recreates the task's random numbers.
    error : str
        ``"ExceptionType: message"``.
    traceback : str
        The formatted traceback, as the worker saw it.

    Attributes
    ----------
    where : str
        ``"<cell>/<chunk>"``, as warnings and logs name a task.

    Examples
    --------
    >>> import tempfile
    >>> def fragile(task):
    ...     if task.chunk == 1:
    ...         raise ValueError("no scores")
    ...     return {"x": np.zeros(task.reps)}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report = run_tasks(fragile, chunk_tasks("ab12", 4, 2), ChunkStore(d, "f00d"), progress=False)
    >>> failure = report.failures[0]
    >>> failure.where, failure.error, failure.seed_key
    ('ab12/1', 'ValueError: no scores', (43794, 1))
    """

    cell: str
    chunk: int
    seed_key: tuple[int, ...]  # the spawn key of the task's SeedSequence
    error: str  # "ExceptionType: message"
    traceback: str

    @property
    def where(self) -> str:
        return f"{self.cell}/{self.chunk}"


@dataclass(frozen=True)
class RunReport:
    """What a run did: the tasks resumed and computed, the times, warnings and failures.

    Returned by :func:`run_tasks`; studies write it into ``run.json`` (``runner``).

    Parameters
    ----------
    tasks : int
        Tasks in the run.
    resumed : int
        Tasks whose valid chunk was already stored (skipped).
    computed : int
        Tasks run now, failed ones included (``tasks - resumed``).
    wall_seconds : float
        Wall time of the whole call, in seconds.
    compute_seconds : float
        The tasks' own run times added up over the workers, in seconds.
    warnings : tuple of str
        Warnings raised inside the tasks (``"<cell>/<chunk>: Category: message"``) and stored chunks that
        failed their check and were recomputed.
    failures : tuple of Failure
        Tasks that raised, sorted by cell and chunk; default ``()``.

    Examples
    --------
    >>> import tempfile
    >>> def zeros(task):
    ...     return {"x": np.zeros(task.reps)}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = ChunkStore(d, "f00d")
    ...     first = run_tasks(zeros, chunk_tasks("ab12", 5, 2), store, progress=False)
    ...     again = run_tasks(zeros, chunk_tasks("ab12", 5, 2), store, progress=False)
    >>> (first.tasks, first.resumed, first.computed), (again.resumed, again.computed)
    ((3, 0, 3), (3, 0))
    """

    tasks: int
    resumed: int
    computed: int
    wall_seconds: float
    compute_seconds: float
    warnings: tuple[str, ...]
    failures: tuple[Failure, ...] = ()


class MissingChunks(Exception):
    """Tasks whose chunks are not (validly) stored, when the run may only read (``require_complete``).

    Raised by :func:`run_tasks` with ``require_complete=True`` (``simstudy collect``) before anything is
    computed. The message is ``"<missing> of <total> chunks missing"``.

    Parameters
    ----------
    missing : sequence of Task
        The tasks without a valid stored chunk.
    positions : sequence of int
        Their positions in the task list given to :func:`run_tasks`.
    total : int
        How many tasks that list holds.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     try:
    ...         run_tasks(replay, chunk_tasks("ab12", 5, 2), ChunkStore(d, "f00d"), require_complete=True)
    ...     except MissingChunks as exc:
    ...         print(exc, exc.positions)
    3 of 3 chunks missing (0, 1, 2)
    """

    def __init__(self, missing: Sequence[Task], positions: Sequence[int], total: int):
        self.missing, self.positions, self.total = tuple(missing), tuple(positions), total
        super().__init__(f"{len(self.missing)} of {total} chunks missing")


def stable_hash(obj) -> str:
    """A hex digest of a plain structure (dicts, lists, tuples, str, numbers), stable across processes,
    platforms and Python versions (unlike :func:`hash`).

    The structure is written as canonical JSON (keys sorted, no spaces; other objects by their ``repr``) and
    hashed with SHA-256, so dict order does not matter. Studies key cells and run directories by it.

    Parameters
    ----------
    obj : object
        A JSON-like structure; values JSON cannot hold are hashed by their :func:`repr`.

    Returns
    -------
    str
        64 lower-case hex characters.

    Examples
    --------
    >>> stable_hash({"b": [1, 2], "a": 0.5})
    'e6ed64e48f9b5f53a09ab3f40144f48e715d73cab1df88feb9c972fc55c293ad'
    >>> stable_hash({"a": 0.5, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 0.5})
    True
    """
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def seed_key(cell: str, chunk: int, *stream: int) -> tuple[int, ...]:
    """The spawn key of a task's random streams: (cell key as an integer, chunk, sub-stream...).

    Parameters
    ----------
    cell : str
        The cell's key, hex; its first 15 hex digits (60 bits) become the key's first integer.
    chunk : int
        The chunk's index.
    *stream : int
        Optional sub-stream indices, for tasks that need several independent streams.

    Returns
    -------
    tuple of int
        ``(int(cell[:15], 16), chunk, *stream)``.

    Examples
    --------
    >>> seed_key("ab12", 3), seed_key("ab12", 3, 1)
    ((43794, 3), (43794, 3, 1))
    """
    return (int(cell[:15], 16), chunk, *stream)


def task_seed(seed: int, cell: str, chunk: int, *stream: int) -> np.random.SeedSequence:
    """The seed sequence of a task, keyed by cell and chunk (and an optional sub-stream), never by worker.

    ``SeedSequence(seed, spawn_key=seed_key(cell, chunk, *stream))``: every (cell, chunk) gets an independent
    stream that does not depend on the scheduling, so results are bit-identical for any ``n_jobs``, backend
    or resume.

    Parameters
    ----------
    seed : int
        The study's seed (non-negative).
    cell : str
        The cell's key, hex.
    chunk : int
        The chunk's index.
    *stream : int
        Optional sub-stream indices.

    Returns
    -------
    numpy.random.SeedSequence
        Pass it to :func:`numpy.random.default_rng`.

    Examples
    --------
    >>> rng = np.random.default_rng(task_seed(0, "ab12", 3))
    >>> rng.integers(0, 100, 3).tolist()
    [44, 12, 7]
    >>> np.random.default_rng(task_seed(0, "ab12", 3)).integers(0, 100, 3).tolist()  # the same, anywhere
    [44, 12, 7]
    """
    return np.random.SeedSequence(seed, spawn_key=seed_key(cell, chunk, *stream))


def chunk_tasks(cell: str, reps: int, chunk_reps: int) -> list[Task]:
    """Split ``reps`` replicates of a cell into chunks of ``chunk_reps`` (the last one may be shorter).

    Parameters
    ----------
    cell : str
        The cell's key, hex.
    reps : int
        Replicates in the cell (0 gives no tasks).
    chunk_reps : int
        Replicates per chunk (at least 1).

    Returns
    -------
    list of Task
        ``ceil(reps / chunk_reps)`` tasks, chunk 0 first.

    Examples
    --------
    >>> for task in chunk_tasks("ab12", 5, 2):
    ...     print(task)
    Task(cell='ab12', chunk=0, reps=2, first_rep=0)
    Task(cell='ab12', chunk=1, reps=2, first_rep=2)
    Task(cell='ab12', chunk=2, reps=1, first_rep=4)
    """
    return [Task(cell, k, min(chunk_reps, reps - start), start) for k, start in enumerate(range(0, reps, chunk_reps))]


def shard(tasks: Sequence[Task], index: int, count: int) -> list[Task]:
    """The ``index``-th (1-based) of ``count`` disjoint slices of ``tasks``, for array jobs.

    Every ``count``-th task from position ``index - 1``: round robin, so each shard gets a share of every
    cell. The slices depend only on the ordered task list, so independent array jobs agree on them without
    talking to each other, and together they hold every task once.

    Parameters
    ----------
    tasks : sequence of Task
        The run's whole task list, in its fixed order.
    index : int
        The shard, from 1 to ``count`` (``runner.shard=index/count``).
    count : int
        The number of shards.

    Returns
    -------
    list of Task
        The shard's tasks, in list order.

    Raises
    ------
    ValueError
        If ``index`` is not in ``1..count``.

    Examples
    --------
    >>> tasks = chunk_tasks("ab12", 5, 1)
    >>> [t.chunk for t in shard(tasks, 1, 2)], [t.chunk for t in shard(tasks, 2, 2)]
    ([0, 2, 4], [1, 3])
    >>> shard(tasks, 3, 2)
    Traceback (most recent call last):
    ...
    ValueError: shard index must be in 1..2, got 3
    """
    if not 1 <= index <= count:
        raise ValueError(f"shard index must be in 1..{count}, got {index}")
    return list(tasks[index - 1 :: count])


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


#: How often a pool worker looks whether the run that started it is still there (seconds).
_PARENT_POLL = 0.5


def _exit_with_parent(main_pid: int) -> None:
    """In a worker process the run's process started (loky), a daemon thread that ends the worker when that
    process is gone: a run killed by SIGKILL (or the OOM killer) runs no clean-up, and its workers would live
    on, computing, for loky's idle timeout (and keep its resource trackers alive). The loky pool's initializer
    (:func:`_parallel`); not in a process of another parent."""
    import threading

    if os.getppid() != main_pid:
        return

    def watch() -> None:
        while os.getppid() == main_pid:
            time.sleep(_PARENT_POLL)
        os._exit(1)  # orphaned: nothing to report to, nothing of ours to flush (chunks are written atomically)

    threading.Thread(target=watch, name="simstudy-parent-watch", daemon=True).start()


def _execute(fn: Callable, shared: tuple, task: Task, main_pid: int):
    """Worker side: run one task, returning its warnings, time and any exception instead of logging them.

    ``shared`` are the fixed leading arguments of ``fn`` (a partial's), passed separately so that the dask
    backend can scatter them to the workers once instead of pickling them into every task.
    """
    _pin_blas_threads(main_pid)
    start = time.perf_counter()
    result = failure = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*shared, task)
        except (Exception, SystemExit) as exc:  # sys.exit in a task fails the task, never the worker or the run
            failure = Failure(
                task.cell,
                task.chunk,
                seed_key(task.cell, task.chunk),
                f"{type(exc).__name__}: {exc}",
                traceback.format_exc(),
            )
    seconds = time.perf_counter() - start
    messages = tuple(f"{task.cell}/{task.chunk}: {w.category.__name__}: {w.message}" for w in caught)
    return task, result, messages, seconds, failure


def _split(fn: Callable) -> tuple[Callable, tuple]:
    """A partial's function and its fixed positional arguments (the study's large inputs), else ``(fn, ())``."""
    if isinstance(fn, functools.partial) and not fn.keywords:
        return fn.func, fn.args
    return fn, ()


def _todo(tasks: Sequence[Task], store: ChunkStore) -> tuple[list[int], list[str]]:
    """Positions of the tasks without a valid stored chunk. A stored chunk that fails its check -- damaged
    (say, a disk lost it), of an older format without identity, or another chunk's file copied into this
    one's place (another chunk, cell or run) -- is treated as missing, with a warning naming the file and
    what did not match, and recomputed; it is never read back as data. Past :data:`_MAX_CHUNK_WARNINGS` such
    chunks (a whole run directory of an older format, say) one more line counts the rest."""
    todo, messages = [], []
    for i, t in enumerate(tasks):
        if not store.has(t.cell, t.chunk, t.reps):
            todo.append(i)
            continue
        try:
            store.verify(t.cell, t.chunk, t.reps)
        except CorruptChunk as exc:
            messages.append(f"{t.cell}/{t.chunk}: {exc}; recomputing it")
            todo.append(i)
    if len(messages) > _MAX_CHUNK_WARNINGS:
        rest = len(messages) - _MAX_CHUNK_WARNINGS
        messages[_MAX_CHUNK_WARNINGS:] = [f"and {rest} more stored chunks failed their check; recomputing them"]
    return todo, messages


#: Stored chunks failing their check that are named one by one in a run's report.
_MAX_CHUNK_WARNINGS = 10


def run_tasks(
    fn: Callable[[Task], dict],
    tasks: Sequence[Task],
    store: ChunkStore,
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    progress: bool | None = None,
    description: str = "chunks",
    address: str | None = None,
    require_complete: bool = False,
) -> RunReport:
    """Run every task not yet in ``store`` and store its result.

    Tasks whose chunk is stored and passes its check are skipped (resume); a stored chunk that fails it is
    recomputed, with a warning. The rest run in parallel and each result is written atomically as it
    arrives, so an interrupted run loses at most the chunks in flight. An exception inside a task does not
    stop the run: it is returned as a :class:`Failure` (rerun one with :func:`replay`). BLAS runs
    single-threaded meanwhile, so results do not depend on ``n_jobs``.

    Parameters
    ----------
    fn : callable
        ``fn(task) -> dict[str, ndarray]``; must be picklable for ``n_jobs != 1`` (a module-level function or
        a :func:`functools.partial` of one over frozen positional arguments: those are the large fixed inputs
        that the dask backend sends to each worker once). It should draw its random numbers from
        :func:`task_seed`.
    tasks : sequence of Task
        The tasks, in a fixed order (e.g. from :func:`chunk_tasks`).
    store : ChunkStore
        Where results go; tasks already there (with a valid checksum) are skipped.
    n_jobs : int, keyword-only
        Worker processes, as :class:`joblib.Parallel` takes it (``-1``: every core); default 1. With
        ``backend="dask"``, the number of local workers to start when no ``address`` is given.
    backend : str, keyword-only
        The :class:`joblib.Parallel` backend, default ``"loky"``; ``"dask"`` runs on a dask.distributed
        cluster (see :func:`simstudy.engine.cluster.dask_client`).
    progress : bool or None, keyword-only
        ``True``: a progress bar; ``False``: none; ``None`` (default): a bar on a terminal, else (a log file, a
        pipe, a batch job) a log line every tenth of the chunks or every 10 s (none for a run under 2 s).
    description : str, keyword-only
        The progress bar's label, default ``"chunks"``.
    address : str or None, keyword-only
        The dask scheduler's address; default None starts a local cluster on 127.0.0.1.
    require_complete : bool, keyword-only
        Only read: raise :class:`MissingChunks` (before computing anything) if any task is not stored; default
        False.

    Returns
    -------
    RunReport
        Counts, times (seconds) and warnings; failed tasks are in ``failures`` (nothing is stored for them);
        a rerun retries them. The results themselves are in ``store``.

    Raises
    ------
    MissingChunks
        With ``require_complete=True``, if any task has no valid stored chunk.

    Examples
    --------
    >>> import tempfile
    >>> def draw(task):
    ...     rng = np.random.default_rng(task_seed(0, task.cell, task.chunk))
    ...     return {"x": rng.normal(size=task.reps)}
    >>> tasks = chunk_tasks("ab12", 5, 2)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = ChunkStore(d, "f00d")
    ...     report = run_tasks(draw, tasks, store, n_jobs=1, progress=False)
    ...     x = np.concatenate([store.read(t.cell, t.chunk, t.reps)["x"] for t in tasks])
    >>> report.computed, report.failures, np.round(x, 4).tolist()
    (3, (), [-1.7263, 0.0054, 0.4326, 0.3685, -1.6553])
    """
    start = time.perf_counter()
    positions, messages = _todo(tasks, store)
    todo = [tasks[i] for i in positions]
    if require_complete and todo:
        raise MissingChunks(todo, positions, len(tasks))
    resumed = len(tasks) - len(todo)
    failures: list[Failure] = []
    compute = 0.0
    if todo:
        func, shared = _split(fn)
        bar = _Progress(len(tasks), resumed, description, progress)
        with threadpool_limits(1, user_api="blas"), _parallel(backend, n_jobs, address, shared, len(todo)) as parallel:
            results = parallel((_execute, (func, shared, t, os.getpid()), {}) for t in todo)  # joblib's delayed calls
            try:
                for task, result, caught, seconds, failure in results:
                    if failure is None:
                        store.write(task.cell, task.chunk, task.reps, result)
                    else:
                        failures.append(failure)
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
        failures=tuple(sorted(failures, key=lambda f: (f.cell, f.chunk))),
    )


class _Progress:
    """Progress of a run: a tqdm bar on a terminal, or log lines where no terminal shows a bar.

    Without a terminal (output to a log file or a pipe) a line is logged each time another tenth of the chunks
    is done, or 10 s after the last line, whichever comes first, with the elapsed time and a naive estimate
    of the time left, so a batch job's log shows the run moving; runs shorter than 2 s log nothing.
    """

    EVERY_SECONDS = 10.0
    QUIET_SECONDS = 2.0  # nothing is logged before this: a run that short has no need of it

    def __init__(self, total: int, initial: int, description: str, progress: bool | None):
        self.total, self.done, self.description = total, initial, description
        self.bar = None
        self.quiet = progress is False  # neither a bar nor log lines
        self.logging = progress is None and not sys.stderr.isatty()
        if not (self.logging or self.quiet):
            from tqdm.auto import tqdm  # here: a run without a bar (progress=false, a log) never imports it

            # progress=true: a bar even off a terminal; auto (None), on a terminal: tqdm decides
            self.bar = tqdm(
                total=total, initial=initial, desc=description, unit="chunk", disable=False if progress else None
            )
        self.start = self.last = time.perf_counter()
        self.said = False
        self.initial, self.tenth = initial, initial * 10 // max(total, 1)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        now, tenth = time.perf_counter(), self.done * 10 // max(self.total, 1)
        if now - self.start < self.QUIET_SECONDS and not self.said:
            self.tenth = tenth  # a run this short needs no progress report
            return
        if tenth > self.tenth or now - self.last >= self.EVERY_SECONDS or self.done == self.total:
            self.said = True
            elapsed = now - self.start
            rate = (self.done - self.initial) / elapsed if elapsed > 0 else 0.0
            left = (
                f", about {(self.total - self.done) / rate:.0f} s left" if rate > 0 and self.done < self.total else ""
            )
            log.info(
                "%s: %d of %d chunks done (%.0f%%) in %.0f s%s",
                self.description,
                self.done,
                self.total,
                100 * self.done / self.total,
                elapsed,
                left,
            )
            self.tenth, self.last = tenth, now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: Batches per dask worker: enough for dask's work stealing to balance the load at the end, few enough that
#: the scheduler's per-task cost (about a millisecond on loopback) is amortised over many chunks.
_BATCHES_PER_WORKER = 8


@contextlib.contextmanager
def _parallel(backend: str, n_jobs: int, address: str | None, shared: tuple, n_tasks: int):
    """A :class:`joblib.Parallel` yielding results as they finish, on a dask cluster for ``backend="dask"``; one
    worker outside dask: the calls in this process, in order, as joblib would run them (without importing it:
    0.1-0.2 s at the start of a small run)."""
    if n_jobs == 1 and backend != "dask":
        yield lambda calls: (fn(*args, **kwargs) for fn, args, kwargs in calls)
        return
    import joblib

    if backend == "loky":  # each worker watches the run's process from its start, busy or idle
        with joblib.parallel_config(backend="loky", initializer=_exit_with_parent, initargs=(os.getpid(),)):
            yield joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        return
    if backend != "dask":
        yield joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
        return
    from simstudy.engine.cluster import dask_client

    with dask_client(address, n_jobs) as client:
        workers = max(1, sum(client.nthreads().values()))
        # scatter: the shared inputs go to every worker once (broadcast), and each task refers to them.
        with joblib.parallel_config(backend="dask", client=client, scatter=[shared] if shared else None):
            # All batches are submitted at once, in fixed-size batches: joblib's default (auto-sized batches,
            # two per worker in flight) leaves workers idle for a scheduler round trip between batches,
            # which cost 25-35% on the Figure 1 study against 8-10% this way (benchmarks/bench_runner.py).
            yield joblib.Parallel(
                n_jobs=-1,
                return_as="generator_unordered",
                pre_dispatch="all",
                batch_size=max(1, -(-n_tasks // (_BATCHES_PER_WORKER * workers))),
            )


def replay(fn: Callable[[Task], dict], task: Task) -> dict:
    """Run one task here, as a worker would, but let any exception through with its full traceback.

    For debugging a :class:`Failure`: rebuild its task (``Task(f.cell, f.chunk, ...)``, or pick it from the
    task list) and replay it under a debugger. The task draws the same random numbers as in the run.

    Parameters
    ----------
    fn : callable
        The function given to :func:`run_tasks`.
    task : Task
        The task to run.

    Returns
    -------
    dict of str to numpy.ndarray
        What ``fn(task)`` returns (nothing is stored).

    Examples
    --------
    >>> def fragile(task):
    ...     if task.chunk == 1:
    ...         raise ValueError("no scores")
    ...     return {"x": np.zeros(task.reps)}
    >>> replay(fragile, Task("ab12", 0, 2, 0))
    {'x': array([0., 0.])}
    >>> replay(fragile, Task("ab12", 1, 2, 2))
    Traceback (most recent call last):
    ...
    ValueError: no scores
    """
    return fn(task)
