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

The runner's modes also live here, so that every study gets them unchanged: a sharded run
(``runner.shard=i/N``) stores its slice of the chunks and a marker, then stops with :class:`ShardDone`
instead of summarising; ``runner.collect`` only reads chunks (:class:`~simstudy.engine.runner.MissingChunks` names
any missing); ``runner.replay`` reruns one chunk in this process (:class:`ReplayDone` if it does not raise).

A cell with a failed chunk is left out of the summary, not summarised from its other chunks: a failure may
depend on the data (an estimator raising on ties, say), so the surviving chunks would be a biased sample.
:func:`finish` reports it instead, as a ``failed_chunks`` row and in ``run.json``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy import io, schema, schema_docs
from simstudy.config import Config
from simstudy.engine import chunks
from simstudy.engine import identity as _identity
from simstudy.engine.runner import RunReport, Task, chunk_tasks, replay, run_tasks, shard, stable_hash
from simstudy.schema import ConfigError, option

__all__ = [
    "StudyResult",
    "ChunkedRun",
    "ShardDone",
    "ReplayDone",
    "run_chunks",
    "finish",
    "cell_key",
    "shard_marker",
    "StudyOptions",
    "reps_option",
    "chunk_reps_option",
    "save_replicates_option",
    "at_least_arms",
    "run_documented",
]


#: The exceptions every study's ``run`` lets through from :func:`run_chunks`: its docstring's shared Raises
#: entries, filled in for a ``%(run_raises)s`` line by :func:`run_documented`.
RUN_RAISES = """simstudy.studies.base.ShardDone
    After a sharded run (``runner.shard``) stored its share of the chunks (no summary is written).
simstudy.engine.runner.MissingChunks
    With ``runner.collect``, if any chunk is not stored.
simstudy.studies.base.ReplayDone
    With ``runner.replay``, if the replayed chunk ran without raising."""


def run_documented(run: Callable) -> Callable:
    """Fill the ``%(run_raises)s`` line of a study's ``run`` docstring with :data:`RUN_RAISES`, indented as it is.

    Every study's ``run`` raises what :func:`run_chunks` raises for sharded, collected and replayed runs; the
    entries are written once here rather than in each module.

    Parameters
    ----------
    run : callable
        A study's ``run(config, out_dir)``, its docstring's Raises section holding the placeholder line.

    Returns
    -------
    callable
        ``run`` itself, its ``__doc__`` filled (unchanged under ``python -OO``, which strips docstrings).

    Raises
    ------
    ValueError
        If the docstring has no placeholder line.

    Examples
    --------
    >>> def run(config, out_dir):
    ...     '''A toy study.
    ...
    ...     Raises
    ...     ------
    ...     %(run_raises)s
    ...     '''
    >>> print(run_documented(run).__doc__.split("------")[1].strip().splitlines()[0])
    simstudy.studies.base.ShardDone
    """
    if run.__doc__ is None:
        return run
    lines = run.__doc__.split("\n")
    at = [i for i, line in enumerate(lines) if line.strip() == "%(run_raises)s"]
    if len(at) != 1:
        raise ValueError(f"{run.__qualname__}'s docstring needs one line %(run_raises)s (its Raises)")
    indent = lines[at[0]][: len(lines[at[0]]) - len(lines[at[0]].lstrip())]
    run.__doc__ = "\n".join([*lines[: at[0]], *(indent + line for line in RUN_RAISES.split("\n")), *lines[at[0] + 1 :]])
    return run


# What every study kind's schema holds (``study.reps``, ``study.chunk_reps``, ``study.save_replicates``).
_REPS_DOC = "simulated searches per cell (more: a smaller Monte Carlo error)"
_CHUNK_REPS_DOC = (
    "searches per chunk, the unit of resuming and of parallel work (part of the random streams: "
    "changing it changes the numbers)"
)


def reps_option(default: int) -> Any:
    """The ``reps`` field of a study schema (``study.reps``), with the kind's own default.

    For a study kind's options (a subclass of :class:`StudyOptions`): the number of simulated searches per
    cell, an integer >= 2, with the shared help text.

    Parameters
    ----------
    default : int
        The kind's default number of replicates (simulated searches) per cell.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.integer(minimum=2)``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.studies.base import StudyOptions, reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     reps: int = reps_option(400)
    >>> Options().reps
    400
    """
    return option(default, _REPS_DOC, schema.integer(minimum=2))


def chunk_reps_option(default: int) -> Any:
    """The ``chunk_reps`` field of a study schema (``study.chunk_reps``), with the kind's own default.

    The replicates per chunk: the unit of resuming and of parallel work, and part of the random streams
    (changing it changes the numbers). An integer >= 1.

    Parameters
    ----------
    default : int
        The kind's default number of replicates per chunk.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.integer(minimum=1)``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.studies.base import StudyOptions, chunk_reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     chunk_reps: int = chunk_reps_option(100)
    >>> Options().chunk_reps
    100
    """
    return option(default, _CHUNK_REPS_DOC, schema.integer(minimum=1))


def save_replicates_option(default: bool) -> Any:
    """The ``save_replicates`` field of a study schema (``study.save_replicates``), with the kind's own default.

    Whether the study also writes every replicate's estimate to ``replicates.parquet`` (evp_accuracy does).

    Parameters
    ----------
    default : bool
        The kind's default.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.boolean()``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.studies.base import StudyOptions, save_replicates_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     save_replicates: bool = save_replicates_option(True)
    >>> Options().save_replicates
    True
    """
    return option(
        default,
        "also write every replicate's estimate to replicates.parquet (evp_accuracy; the other kinds write none)",
        schema.boolean(),
    )


def _unrepr(field: Any) -> Any:
    """A schema field left out of the options' repr (the precision rule's, unset in most runs)."""
    field.repr = False
    return field


@schema_docs.documented("study.")
@dataclass(frozen=True)
class StudyOptions:
    """What every study kind's schema holds: the options under ``study.`` that every kind takes.

    Subclass it (a frozen dataclass), adding the kind's own fields made by :func:`simstudy.schema.option`;
    redeclare ``reps`` or ``chunk_reps`` with :func:`reps_option` / :func:`chunk_reps_option` to change their
    defaults. :func:`simstudy.config.parse` checks ``study.KEY=VALUE`` against the kind's registered subclass
    (:attr:`simstudy.registry.Study.options`).

    Parameters
    ----------
    %(parameters)s

    Raises
    ------
    ConfigError
        If ``precision`` is set and ``max_reps`` is below ``reps`` (the pilot).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy import schema
    >>> from simstudy.studies.base import StudyOptions, reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     reps: int = reps_option(400)
    ...     ns: tuple = schema.option((1, 4), "numbers of draws n", schema.listed(schema.integer(minimum=1)))
    >>> schema.parse(Options, {"ns": [16, 4]}, "study.")
    Options(reps=400, chunk_reps=1000, save_replicates=False, ns=(4, 16))
    """

    reps: int = reps_option(1000)
    chunk_reps: int = chunk_reps_option(1000)
    save_replicates: bool = save_replicates_option(False)
    precision: tuple | None = _unrepr(
        option(
            None,
            "a Monte Carlo precision target, the stopping rule: each cell runs until every measure's MCSE meets "
            "it (0.001: an absolute MCSE; 1%: of the estimate's magnitude; {mse: 0.0001, bias: 2%}: per measure). "
            "study.reps is then the pilot (best a whole number of chunks: all reused), study.max_reps the cap; "
            "a pilot, a planned stage and a top-up (docs/guides/precision.md). null: study.reps replicates per cell",
            schema.optional(schema.precision()),
            type_doc="tuple of (str, float, bool) or None",
        )
    )
    max_reps: int | None = _unrepr(
        option(
            None,
            "with study.precision: the most replicates a cell may run (null: 100 x study.reps)",
            schema.optional(schema.integer(minimum=2)),
        )
    )

    def __post_init__(self) -> None:
        # Cross-field checks of the precision rule, at parse time: refused before anything is computed.
        if self.precision is None:
            return
        if self.max_reps is not None and self.max_reps < self.reps:
            raise ConfigError(
                f"study.max_reps={self.max_reps} must be at least study.reps={self.reps} (the pilot of "
                f"study.precision): raise study.max_reps or lower study.reps"
            )


def at_least_arms(config: Config) -> None:
    """A selection study's check: at least two distributions (its arms).

    For :attr:`simstudy.registry.Study.check` of model_selection and fixed_confidence, run by :func:`simstudy.config.parse`.

    Parameters
    ----------
    config : Config
        The parsed config; its ``distributions`` are the arms.

    Raises
    ------
    ConfigError
        If ``config`` has fewer than two distributions.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> at_least_arms(dataclasses.replace(config, distributions=config.distributions * 2))  # two arms: passes
    >>> at_least_arms(config)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: a evp_accuracy study needs at least two arms in distribution, got 1
    """
    if len(config.distributions) < 2:
        raise ConfigError(
            f"a {config.study.kind} study needs at least two arms in distribution, got {len(config.distributions)}"
        )


class ShardDone(Exception):
    """A sharded run stored its chunks; the summary waits for every shard (``simstudy collect``).

    Raised by :func:`run_chunks` (and by :func:`finish` for an exact study) when ``runner.shard=i/N`` is set,
    after shard i's chunks and its marker file were written; the CLI and :func:`simstudy.run` catch it. A
    study's ``run`` lets it through.

    Parameters
    ----------
    report : simstudy.engine.runner.RunReport
        The runner's report of this shard's tasks (counts; times in seconds).
    marker : pathlib.Path
        The shard's marker file, ``<out_dir>/shards/shard-i-of-N.json`` (:func:`shard_marker`).

    Examples
    --------
    >>> from simstudy.engine.runner import RunReport
    >>> report = RunReport(tasks=4, resumed=1, computed=3, wall_seconds=0.5, compute_seconds=0.4, warnings=())
    >>> done = ShardDone(report, shard_marker(Path("out"), 1, 2))
    >>> print(done)
    shard stored 3 chunks (1 already there, 0 failed)
    >>> done.marker.as_posix()
    'out/shards/shard-1-of-2.json'
    """

    def __init__(self, report: RunReport, marker: Path):
        self.report, self.marker = report, marker
        super().__init__(
            f"shard stored {report.computed - len(report.failures)} chunks ({report.resumed} "
            f"already there, {len(report.failures)} failed)"
        )


class ReplayDone(Exception):
    """A replayed chunk ran without raising.

    Raised by :func:`run_chunks` with ``runner.replay`` (``simstudy replay``) when the one chunk it reran in
    this process did not fail; had it failed, its own exception would propagate instead, with a full traceback.
    The message names the chunk (``chunk CELL/INDEX ran without error``).

    Examples
    --------
    >>> raise ReplayDone("chunk 2499044571cfe1a6/0 ran without error")
    Traceback (most recent call last):
    ...
    simstudy.studies.base.ReplayDone: chunk 2499044571cfe1a6/0 ran without error
    """


#: Columns every tidy summary starts with.
SUMMARY_COLUMNS = ("study", "cell", "distribution")


@dataclass(frozen=True)
class StudyResult:
    """A finished study: its tidy summary, the runner's report and the files written.

    What a study's ``run`` returns (:attr:`simstudy.registry.Study.run`), built by :func:`finish`.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary, one row per (cell, measure, ...): columns ``study``, ``cell``, ``distribution``
        (``SUMMARY_COLUMNS``), the study's own keys (``estimator``, ``n``, ...), ``measure``, ``estimate``
        and its Monte Carlo standard error ``mcse`` (both in the measure's units) and ``reps``; a cell with
        failed chunks has one ``failed_chunks`` row instead.
    report : simstudy.engine.runner.RunReport
        What the runner did: tasks, resumed and computed chunks, wall and compute seconds, failures.
    files : dict of str to pathlib.Path
        The files written, by role: ``summary_parquet``, ``summary_csv``, ``run`` (``run.json``) and any the
        study added (e.g. ``replicates``).
    kind : str, optional
        The study kind; default ``""``.

    Examples
    --------
    >>> import pandas as pd
    >>> result = StudyResult(pd.DataFrame({"measure": ["mse"], "estimate": [0.01]}), empty_report(), {}, "toy")
    >>> result.kind, result.report.tasks, result.summary["estimate"].tolist()
    ('toy', 0, [0.01])
    """

    summary: pd.DataFrame
    report: RunReport
    files: dict[str, Path]
    kind: str = ""


@dataclass(frozen=True)
class ChunkedRun:
    """The chunks of a run, on disk, with the runner's report: what :func:`run_chunks` returns.

    A study reduces each cell from it in chunk order (:meth:`total`, :meth:`stacked`, :meth:`chunks`), so its
    sums are bit-identical however the chunks were scheduled, and skips the cells with failed chunks
    (:meth:`succeeded`).

    Parameters
    ----------
    store : simstudy.engine.chunks.ChunkStore
        The run's chunk store, ``<out_dir>/chunks``, keyed by ``fingerprint``.
    tasks_by_cell : dict of str to list of simstudy.engine.runner.Task
        Each cell's chunks in order (``study.chunk_reps`` replicates each, the last possibly fewer).
    report : simstudy.engine.runner.RunReport
        The runner's report (tasks, resumed, computed, seconds, failures).
    fingerprint : str
        16 hex digits: the digest of what fixes the chunks' numbers.
    stage : Stage or None, optional
        The precision rule's stage the chunks were run in (``run_chunks(..., stage=)``), which :func:`finish`
        follows; default None: a plain run.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.config import Config, RunnerConfig, StudyConfig
    >>> config = Config(seed=0, distributions=(), budget=None, estimators=(),
    ...                 study=StudyConfig("demo", "demo", reps=5, chunk_reps=2), runner=RunnerConfig(1, "loky", False))
    >>> def chunk(task):  # one chunk's results: named arrays of fixed shapes
    ...     return {"sums": np.array([task.reps, task.first_rep], dtype=float)}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     run = run_chunks(config, Path(tmp), scheme="demo/1", cells=["c0"], chunk_fn=chunk, settings={})
    ...     total, stacked = run.total("c0", "sums"), run.stacked("c0", "sums")
    >>> [t.reps for t in run.tasks_by_cell["c0"]], run.failed_cells
    ([2, 2, 1], {})
    >>> total.tolist(), stacked.tolist()  # the sum over chunks; the chunks joined along the last axis
    ([5.0, 6.0], [2.0, 0.0, 2.0, 2.0, 1.0, 4.0])
    """

    store: chunks.ChunkStore | None  # None: an exact study, without chunks
    tasks_by_cell: dict[str, list[Task]]
    report: RunReport
    fingerprint: str
    stage: Stage | None = None

    @property
    def failed_cells(self) -> dict[str, int]:
        """Failed chunks per cell, for cells with any."""
        counts: dict[str, int] = {}
        for f in self.report.failures:
            counts[f.cell] = counts.get(f.cell, 0) + 1
        return counts

    def succeeded(self, cells: dict) -> dict:
        """The cells (a mapping keyed by cell key, in its order) all of whose chunks are stored."""
        failed = self.failed_cells
        return {key: cell for key, cell in cells.items() if key not in failed}

    def reps(self, cell: str) -> int:
        """A cell's replicates: ``study.reps``, or under ``study.precision`` the number its pilot planned."""
        return sum(t.reps for t in self.tasks_by_cell[cell])

    def chunks(self, cell: str) -> Iterator[tuple[Task, dict[str, np.ndarray]]]:
        """A cell's chunk results, in chunk order."""
        for task in self.tasks_by_cell[cell]:
            assert self.store is not None  # a run with chunks has their store
            yield task, self.store.read(task.cell, task.chunk, task.reps)

    def total(self, cell: str, name: str) -> np.ndarray:
        """The sum over a cell's chunks of one result array, added in chunk order (deterministic)."""
        total = None
        for _, arrays in self.chunks(cell):
            total = arrays[name] if total is None else total + arrays[name]
        assert total is not None  # every cell has a chunk (reps >= 1)
        return total

    def stacked(self, cell: str, name: str) -> np.ndarray:
        """A per-replicate result array of a cell, its chunks joined along the last axis in chunk order."""
        return np.concatenate([arrays[name] for _, arrays in self.chunks(cell)], axis=-1)


def empty_report() -> RunReport:
    """The runner's report for a study computed exactly, without chunks."""
    return RunReport(tasks=0, resumed=0, computed=0, wall_seconds=0.0, compute_seconds=0.0, warnings=())


def cell_key(**fields: Any) -> str:
    """A cell's key: a stable hash of what generates its data (it keys the cell's random streams).

    Parameters
    ----------
    **fields
        What generates the cell's data (plain values: str, numbers, lists, dicts), e.g. the distribution's
        ``DistributionConfig.key`` and the sample size ``B``. Order of the keywords does not matter; a field
        that does not change the data (a label) should not be passed.

    Returns
    -------
    str
        16 hex digits, the same in every process, platform and Python version.

    Examples
    --------
    >>> dist = {"kind": "uniform", "params": []}
    >>> cell_key(distribution=dist, B=5)
    'aed44b0bc6a31991'
    >>> cell_key(B=5, distribution=dist) == cell_key(distribution=dist, B=5)
    True
    """
    return stable_hash(fields)[:16]


def shard_marker(out_dir: Path, index: int, count: int) -> Path:
    """Where shard ``index`` of ``count`` records what it did.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run directory.
    index : int
        The shard, from 1 to ``count`` (``runner.shard=index/count``).
    count : int
        The number of shards.

    Returns
    -------
    pathlib.Path
        ``out_dir / "shards" / "shard-{index}-of-{count}.json"`` (not created here).

    Examples
    --------
    >>> shard_marker(Path("out"), 2, 3).as_posix()
    'out/shards/shard-2-of-3.json'
    """
    return out_dir / "shards" / f"shard-{index}-of-{count}.json"


@dataclass(frozen=True)
class Stage:
    """A stage of the precision rule (:mod:`simstudy.studies.precision`), passed to a study's ``run`` as
    ``stage=``, which hands it to :func:`run_chunks`; :func:`finish` reads it from the :class:`ChunkedRun`
    (``run.stage``). The pilot (summarised, nothing written); the planned stage (each cell's own reps, its summary
    given to ``replan``, which returns the final plan to write it with, or None: a top-up follows, nothing
    written); or the top-up (the precision columns and run.json block added by ``plan.annotate``). The earlier
    stages' report is counted in the written one."""

    pilot: bool = False
    cell_reps: dict[str, int] = dataclasses.field(default_factory=dict)
    plan: Any = None  # a simstudy.studies.precision.PrecisionPlan
    earlier_report: RunReport | None = None
    replan: Callable[[pd.DataFrame], Any] | None = None
    seen: set[str] = dataclasses.field(default_factory=set)  # the cells run_chunks was given (checked after)

    @property
    def planning(self) -> bool:
        """Whether the rule plans from this stage's summary (the pilot, the planned stage): a study adds the
        columns the plan reads (evp_accuracy's ``kurtosis``, ``kurtosis_assumed``)."""
        return self.pilot or self.replan is not None


def both_stages(earlier: RunReport, last: RunReport) -> RunReport:
    """One report of a precision run: the last stage's tasks, the chunks it resumed from the earlier stages
    (``earlier``: the pilot's report, or the pilot's and planned stage's merged by this function) counted as
    computed."""
    done = earlier.computed - len(earlier.failures)  # the earlier stages' stored chunks, resumed by the last
    return RunReport(
        tasks=last.tasks,
        resumed=max(last.resumed - done, 0),
        computed=last.computed + min(done, last.resumed),
        wall_seconds=earlier.wall_seconds + last.wall_seconds,
        compute_seconds=earlier.compute_seconds + last.compute_seconds,
        warnings=tuple(dict.fromkeys(earlier.warnings + last.warnings)),
        failures=last.failures,
    )


def run_chunks(
    config: Config,
    out_dir: Path,
    *,
    scheme: str,
    cells: list[str],
    chunk_fn: Callable[[Task], dict],
    settings: dict,
    stage: Stage | None = None,
) -> ChunkedRun:
    """Run (or resume) every cell's chunks of ``study.chunk_reps`` replicates.

    Each cell's ``study.reps`` replicates are split into chunks of ``study.chunk_reps`` (the last possibly
    shorter); chunks already stored under the same fingerprint are resumed, not recomputed. The fingerprint
    hashes ``scheme``, ``config.seed``, the distributions' identities (a data file by its content), ``chunk_reps``,
    ``settings`` and the kernels' algorithm versions bumped past 1 (``simstudy.engine.identity.KERNEL_VERSIONS``);
    ``study.reps``
    is not part of it, so a larger ``reps`` reuses the chunks done. Then the runner's modes apply
    (``runner.replay``, ``runner.shard``, ``runner.collect``), see Raises.

    Parameters
    ----------
    config : simstudy.config.Config
        The validated config; reads ``seed``, ``distributions``, ``study`` (``name``, ``reps``,
        ``chunk_reps``) and ``runner``.
    out_dir : pathlib.Path
        The run directory; chunks go to ``out_dir / "chunks"``.
    scheme : str
        The study's chunk-format version; bump it when a chunk's meaning changes.
    cells : list of str
        Cell keys (see :func:`cell_key`).
    chunk_fn : callable
        ``chunk_fn(task) -> dict[str, ndarray]``: the results of ``task.reps`` replicates of cell ``task.cell``
        (a :class:`simstudy.engine.runner.Task`), named arrays whose shapes do not depend on the chunk except along a
        per-replicate last axis. Deterministic given the task (draw from
        :func:`simstudy.engine.runner.task_seed`), and picklable (a module-level function or a
        :func:`functools.partial` of one) for worker processes.
    settings : dict
        Everything else besides seed, distributions and chunk size that fixes a chunk's numbers (plain
        values: they are hashed into the fingerprint and written into the store's claim).
    stage : Stage or None, optional
        The precision rule's stage, as the study's ``run`` was given it (``stage=``): each cell's replicates are
        then the stage's (``stage.cell_reps``). Default None: a plain run of ``study.reps`` per cell.

    Returns
    -------
    ChunkedRun
        The store, the tasks by cell, the runner's report, the fingerprint and the stage (for :func:`finish`).

    Raises
    ------
    ShardDone
        After a sharded run (``runner.shard``) stored its chunks.
    simstudy.engine.runner.MissingChunks
        With ``runner.collect``, if any chunk is not stored (nothing is computed).
    ReplayDone
        With ``runner.replay``, if the chunk ran without raising (its exception propagates otherwise).
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.
    ValueError
        With ``runner.replay``, if the chunk named is not one of this study's (the message lists the cells).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.config import Config, RunnerConfig, StudyConfig
    >>> config = Config(seed=0, distributions=(), budget=None, estimators=(),
    ...                 study=StudyConfig("demo", "demo", reps=5, chunk_reps=2), runner=RunnerConfig(1, "loky", False))
    >>> def chunk(task):  # one chunk's results: named arrays of fixed shapes
    ...     return {"sums": np.array([task.reps, task.first_rep], dtype=float)}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = run_chunks(config, Path(tmp), scheme="demo/1", cells=["c0"], chunk_fn=chunk, settings={})
    ...     again = run_chunks(config, Path(tmp), scheme="demo/1", cells=["c0"], chunk_fn=chunk, settings={})
    >>> (first.report.computed, first.report.resumed), (again.report.computed, again.report.resumed)
    ((3, 0), (0, 3))
    """
    fingerprint = stable_hash(
        {
            "scheme": scheme,
            "seed": config.seed,
            "distributions": [d.identity for d in config.distributions],
            "chunk_reps": config.study.chunk_reps,
            **settings,
            # the kernels' algorithm versions, only those bumped past 1: stored chunks of before keep resuming
            **({"kernels": kernels} if (kernels := _identity.kernel_versions()) else {}),
        }
    )[:16]
    store = chunks.ChunkStore(out_dir / "chunks", fingerprint)
    planned = stage.cell_reps if stage is not None else {}
    if stage is not None:
        stage.seen.update(cells)
    tasks_by_cell = {
        key: chunk_tasks(key, planned.get(key, config.study.reps), config.study.chunk_reps) for key in cells
    }
    tasks = [t for tasks in tasks_by_cell.values() for t in tasks]
    runner = config.runner
    if runner.replay is not None:
        _replay(chunk_fn, tasks, *runner.replay)
    store.claim(
        {
            **{k: v for k, v in dataclasses.asdict(config).items() if k != "runner"},
            "scheme": scheme,
            "settings": settings,
        }
    )
    if runner.shard is not None:
        tasks = shard(tasks, *runner.shard)
    elif stage is None or not stage.pilot:  # finish() records the environment: read while the chunks run
        io.prefetch_environment()
    report = run_tasks(
        chunk_fn,
        tasks,
        store,
        n_jobs=runner.n_jobs,
        backend=runner.backend,
        progress=runner.progress,
        description=config.study.name + ("" if runner.shard is None else " shard {}/{}".format(*runner.shard)),
        address=runner.address,
        require_complete=runner.collect,
    )
    if runner.shard is not None:
        marker = shard_marker(out_dir, *runner.shard)
        io.write_json(
            {"shard": list(runner.shard), "fingerprint": fingerprint, "runner": dataclasses.asdict(report)}, marker
        )
        raise ShardDone(report, marker)
    return ChunkedRun(store, tasks_by_cell, report, fingerprint, stage)


def _replay(chunk_fn: Callable[[Task], dict], tasks: list[Task], cell: str, chunk: int) -> None:
    matches = [t for t in tasks if t.chunk == chunk and t.cell.startswith(cell)]
    if len(matches) != 1:
        cells = sorted({t.cell for t in tasks})
        raise ValueError(
            f"chunk={cell}/{chunk} is not a chunk of this study (cells: {', '.join(cells)}; "
            f"chunks 0..{max(t.chunk for t in tasks)})"
        )
    replay(chunk_fn, matches[0])
    raise ReplayDone(f"chunk {matches[0].cell}/{chunk} ran without error")


#: The measures of a study that name the maximum, and their names for a distribution with ``minimize: true``,
#: whose rows are of the minimum of X (:func:`mirror_back`).
MINIMUM_NAMES = {"expected_max": "expected_min", "expected_max_a": "expected_min_a", "expected_max_b": "expected_min_b"}


def mirror_back(summary: pd.DataFrame, mirrored, measures: tuple[str, ...]) -> pd.DataFrame:
    """The summary in the scores' own units for the distributions with ``minimize: true``.

    Such a distribution draws ``-X`` (:func:`simstudy.distributions.mirror`), so the study's expected maxima,
    means, biases and gaps are minus those of the minimum of X: the ``estimate`` of each row whose
    ``distribution`` is in ``mirrored`` and whose ``measure`` is in ``measures`` (those that change sign with
    the scores) is negated; spreads, MSEs, rates and MCSEs are the same either way. The rows' measures that
    name the maximum are renamed for what they hold (:data:`MINIMUM_NAMES`: ``expected_max`` is
    ``expected_min``), so the summary, the figures and report.html say "min" where the best is the minimum.
    """
    mirrored = list(mirrored)
    if not mirrored or summary.empty:
        return summary
    flip = summary["distribution"].isin(mirrored) & summary["measure"].isin(measures)
    renamed = summary["distribution"].isin(mirrored) & summary["measure"].isin(list(MINIMUM_NAMES))
    return summary.assign(
        estimate=summary["estimate"].where(~flip, -summary["estimate"]),
        measure=summary["measure"].where(~renamed, summary["measure"].map(MINIMUM_NAMES)),
    )


def finish(
    config: Config,
    out_dir: Path,
    run: ChunkedRun,
    summary: pd.DataFrame,
    *,
    started: float,
    metadata: dict,
    files: dict[str, Path] | None = None,
) -> StudyResult:
    """Write the tidy summary and ``run.json``; return the study's result.

    Cells with failed chunks (left out of ``summary`` by the study) get one row each with measure
    ``failed_chunks``; ``run.json`` lists every failure with its seed key and message. Every file is written
    atomically.

    Parameters
    ----------
    config : simstudy.config.Config
        The validated config (written into ``run.json``).
    out_dir : pathlib.Path
        The run directory.
    run : ChunkedRun
        What :func:`run_chunks` returned (an exact study passes one with ``empty_report()``). In a stage of the
        precision rule (``run.stage``), the pilot's and a planned stage's summary are handed to the rule, not
        written (unless it returns the final plan), and the final one gets the rule's columns.
    summary : pandas.DataFrame
        The study's tidy rows without the ``study`` column (inserted first here): ``cell``, ``distribution``,
        the study's keys, ``measure``, ``estimate``, ``mcse``, ``reps``.
    started : float
        :func:`time.perf_counter` when the study started, for ``run.json``'s ``timings.total_seconds``.
    metadata : dict
        More entries for ``run.json`` (plain values), e.g. ``{"timings": {...}}``, merged at its top level.
    files : dict of str to pathlib.Path, optional
        Files the study wrote itself, by role, added to the result's ``files``.

    Returns
    -------
    StudyResult
        The summary as written, the runner's report, the files (``summary_parquet``, ``summary_csv``, ``run``
        and ``files``) and the study kind.

    Raises
    ------
    ShardDone
        With ``runner.shard`` set (an exact study's shards have no chunks; its marker is written instead).

    Examples
    --------
    An exact study (no chunks) passes a :class:`ChunkedRun` without a store, as ``band_triviality`` does:

    >>> import tempfile
    >>> from simstudy.config import Config, RunnerConfig, StudyConfig
    >>> config = Config(seed=0, distributions=(), budget=None, estimators=(),
    ...                 study=StudyConfig("demo", "demo", reps=1, chunk_reps=1), runner=RunnerConfig(1, "loky", False))
    >>> run = ChunkedRun(store=None, tasks_by_cell={}, report=empty_report(), fingerprint="exact")
    >>> rows = pd.DataFrame({"cell": ["c0"], "measure": ["exact_mean"], "estimate": [0.75]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = finish(config, Path(tmp), run, rows, started=time.perf_counter(), metadata={})
    ...     written = sorted(p.name for p in result.files.values())
    >>> result.summary
      study cell     measure  estimate
    0  demo   c0  exact_mean      0.75
    >>> written
    ['run.json', 'summary.csv', 'summary.parquet']
    >>> list(rows.columns)  # the frame passed in is left as it was
    ['cell', 'measure', 'estimate']
    """
    stage = run.stage
    plan = stage.plan if stage is not None else None
    if stage is not None and stage.planning:  # the precision rule plans from this summary
        shown = summary.copy()
        shown.insert(0, "study", config.study.name)
        plan = None if stage.pilot else stage.replan(shown)  # type: ignore[misc]
        if plan is None:  # the pilot, or a planned stage a top-up follows: nothing written
            return StudyResult(summary=shown, report=run.report, files={}, kind=config.study.kind)
        summary = summary.drop(columns=["kurtosis", "kurtosis_assumed"], errors="ignore")  # the plan's, not results
    if stage is not None and stage.earlier_report is not None:
        run = dataclasses.replace(run, report=both_stages(stage.earlier_report, run.report))
    if config.runner.shard is not None:  # an exact study has no chunks: its shards have nothing to do
        marker = shard_marker(out_dir, *config.runner.shard)
        io.write_json(
            {
                "shard": list(config.runner.shard),
                "fingerprint": run.fingerprint,
                "runner": dataclasses.asdict(run.report),
            },
            marker,
        )
        raise ShardDone(run.report, marker)
    failed = run.failed_cells
    if failed:
        rows = pd.DataFrame(
            [
                {"cell": cell, "measure": "failed_chunks", "estimate": float(count), "mcse": 0.0, "reps": 0}
                for cell, count in failed.items()
            ]
        )
        summary = pd.concat([summary, rows], ignore_index=True) if len(summary) else rows
    # A copy: the caller's frame stays as it was (inserting in place gave it a column, and a second call failed).
    summary = summary.copy()
    summary.insert(0, "study", config.study.name)
    if plan is not None:  # the precision rule's columns and run.json block
        summary, block = plan.annotate(summary)
        metadata = {**metadata, "precision": block}
    files = {
        "summary_parquet": out_dir / "summary.parquet",
        "summary_csv": out_dir / "summary.csv",
        "run": out_dir / "run.json",
        **(files or {}),
    }
    io.write_parquet(summary, files["summary_parquet"])
    io.write_csv(summary, files["summary_csv"])
    io.write_json(
        {
            "study": config.study.name,
            "kind": config.study.kind,
            "config": dataclasses.asdict(config),
            "seed": config.seed,
            "fingerprint": run.fingerprint,
            "runner": dataclasses.asdict(run.report),
            "failed_chunks": len(run.report.failures),
            "failed_cells": failed,
            **metadata,
            "timings": {**metadata.get("timings", {}), "total_seconds": time.perf_counter() - started},
            "environment": io.environment(),
        },
        files["run"],
    )
    return StudyResult(summary=summary, report=run.report, files=files, kind=config.study.kind)
