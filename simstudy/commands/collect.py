"""``simstudy collect``: the summary of a sharded run from its chunks, or a sweep's stacked summary.

A run computed by shards (``runner.shard=i/N``) stores its chunks and summarises nothing; :func:`run` reads
every chunk (none is computed) and writes the summary, the figure and run.json, holding the run directory like
a run. A sweep's (or a design's) stacked summary is rebuilt by :func:`stack` from its finished jobs; which jobs
a sweep has is read from its ``multirun.yaml`` by the command line (:mod:`simstudy.cli.sweeps`, Hydra's parser).

=====================  ============================================================================================
:func:`load_config`    the validated config of a sharded run directory, set to collect its chunks
:func:`run`            summarise a sharded run from its chunks
:func:`stack`          a sweep's stacked summary and faceted figure from its finished jobs
=====================  ============================================================================================
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simstudy.commands.study import load_run, run_and_report, trusted
from simstudy.engine import claims
from simstudy.engine.rundir import ENVIRONMENT_ERRNOS, fail, note_files, os_error, os_status, release
from simstudy.registry import Command

__all__ = ["load_config", "run", "stack", "Collect", "SweepCollected", "parse", "execute", "failure"]


log = logging.getLogger("simstudy")


def load_config(run_dir: str | Path, plugins: tuple[str, ...] = ()):
    """The validated config of the run in ``run_dir``, set to collect its chunks in this process.

    Parameters
    ----------
    run_dir : str or path-like
        A run directory (its ``config.yaml`` names the study).
    plugins : tuple of str, default ()
        Import paths of plug-ins the stored config names that the caller trusts (``plugins=...``); a stored
        config imports no other plug-in than these and the registered ones.

    Returns
    -------
    simstudy.config.Config
        The run's config, its runner set to collect (sequential, one worker, no progress bar, no shard).

    Raises
    ------
    simstudy.engine.rundir.Refused
        If the directory holds no config.yaml, a design, or a config that does not validate (one line).

    Examples
    --------
    >>> load_config("no/such/run")
    Traceback (most recent call last):
    ...
    simstudy.engine.rundir.Refused: run_dir=no/such/run: no config.yaml there (not a simstudy run directory)
    """
    return load_run(Path(run_dir), tuple(plugins), collect=True, n_jobs=1, backend="sequential", progress=False)


def run(run_dir: str | Path, config):
    """Summarise the sharded run in ``run_dir`` from its chunks: summary, figure and run.json written there.

    Parameters
    ----------
    run_dir : str or path-like
        The run directory, claimed while the summary is written (never beside a run still going on in it).
    config : simstudy.config.Config
        Its config, from :func:`load_config`.

    Returns
    -------
    simstudy.studies.base.StudyResult
        The summary, the runner's report and the files written.

    Raises
    ------
    simstudy.engine.rundir.Refused
        If the directory is busy or not a run directory (status 2), chunks are missing (status 1, naming them
        and the shards to rerun) or the disk is full (status 1).

    Examples
    --------
    >>> import tempfile
    >>> import simstudy
    >>> with tempfile.TemporaryDirectory() as out:
    ...     _ = simstudy.run("dodge2021_fig1", ["study.reps=100", "budget.B=3", "runner.progress=false"], out_dir=out)
    ...     result = run(out, load_config(out))
    >>> result.report.tasks, result.report.computed
    (1, 0)
    """
    run_dir = Path(run_dir)
    try:  # collect writes the summary: it holds the directory like a run (never beside one still running)
        claim = claims.claim_run_dir(run_dir, warn=log.warning)
    except (claims.NotARunDir, claims.RunDirBusy) as exc:
        fail(str(exc))
    claimed = note_files(run_dir)
    log.info("collecting %s", run_dir)
    try:
        return run_and_report(config, claimed)
    except OSError as exc:
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        fail(os_error(exc), status=os_status(exc))
    finally:
        release(claim, claimed)  # what it wrote noted in the run marker (overwrite=true moves it), then released


def stack(sweep_dir: str | Path, swept: list[str], jobs: list):
    """Stack a sweep's finished jobs into ``summary.parquet``/``.csv`` and a faceted figure at ``sweep_dir``.

    Parameters
    ----------
    sweep_dir : str or path-like
        The sweep's (or design's) directory.
    swept : list of str
        The swept keys: one column each in the stacked frame.
    jobs : list of simstudy.sweeps.Job
        The jobs (directory names under ``sweep_dir`` and swept values).

    Returns
    -------
    simstudy.sweeps.Stacked
        The stacked frame, and the jobs that have no summary yet (``unfinished``).

    Raises
    ------
    simstudy.engine.rundir.Refused
        If the disk is full or the directory cannot be written (one line; status 1, or 2 for a bad path).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.sweeps import Job
    >>> with tempfile.TemporaryDirectory() as sweep:
    ...     stacked = stack(sweep, ["budget.B"], [Job("budget.B=3", {"budget.B": 3})])
    >>> stacked.unfinished
    ('budget.B=3',)
    """
    from simstudy.sweeps import write_sweep

    try:
        return write_sweep(Path(sweep_dir), swept, jobs)
    except OSError as exc:
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        fail(os_error(exc), status=os_status(exc))


@dataclass(frozen=True)
class Collect:
    """What ``simstudy collect`` was asked to collect (what :func:`parse` returns): a run or a sweep.

    Parameters
    ----------
    run_dir : pathlib.Path or None
        A sharded run's directory (None for a sweep).
    config : simstudy.config.Config or None
        Its config, from :func:`load_config` (None for a sweep).
    sweep_dir : pathlib.Path or None
        A sweep's (or design's) directory (None for a run); its jobs are read by the command line
        (:attr:`simstudy.registry.Command.reads_sweep`) and handed to :func:`execute`.

    Examples
    --------
    >>> Collect(sweep_dir=Path("outputs/multirun/x")).run_dir is None
    True
    """

    run_dir: Path | None = None
    config: Any = None
    sweep_dir: Path | None = None


@dataclass(frozen=True)
class SweepCollected:
    """A sweep collected: where, how many jobs it has, and what :func:`stack` returned.

    Parameters
    ----------
    sweep_dir : pathlib.Path
        The sweep's directory.
    jobs : int
        Its number of jobs.
    stacked : simstudy.sweeps.Stacked
        The stacked frame and the unfinished jobs.

    Examples
    --------
    >>> SweepCollected(Path("outputs/multirun/x"), 2, None).jobs
    2
    """

    sweep_dir: Path
    jobs: int
    stacked: Any


def parse(keys) -> Collect:
    """``run_dir=DIR [plugins=PATH,...]`` (the run's config loaded and checked) or ``sweep_dir=DIR``, not both.

    Parameters
    ----------
    keys : Mapping
        ``run_dir`` or ``sweep_dir``; ``plugins``: comma-separated import paths the caller trusts.

    Returns
    -------
    Collect
        The run directory and its config, or the sweep's directory.

    Raises
    ------
    simstudy.engine.rundir.Refused
        If neither or both directories are given, or the run directory holds no valid run (one line).

    Examples
    --------
    >>> parse({"sweep_dir": "outputs/multirun/x"}).sweep_dir
    PosixPath('outputs/multirun/x')
    """
    if "sweep_dir" in keys and "run_dir" not in keys:
        return Collect(sweep_dir=Path(keys["sweep_dir"]))
    if not keys.get("run_dir") or keys.get("sweep_dir"):
        fail(
            "simstudy collect: run_dir is required: set it with run_dir=... (or sweep_dir=... for a sweep, not both)",
        )
    run_dir = Path(keys["run_dir"])
    return Collect(run_dir=run_dir, config=load_config(run_dir, trusted(keys)))


def execute(collect: Collect, swept: list | None = None, jobs: list | None = None):
    """Collect what :func:`parse` named: the run (:func:`run`), or the sweep's ``jobs`` (:func:`stack`).

    Parameters
    ----------
    collect : Collect
        From :func:`parse`.
    swept, jobs : list, optional
        A sweep's swept keys and jobs (:func:`simstudy.sweeps.Job`), as its ``multirun.yaml`` lists them.

    Returns
    -------
    simstudy.studies.base.StudyResult or SweepCollected
        What :func:`run` returns, or the sweep stacked.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.sweeps import Job
    >>> with tempfile.TemporaryDirectory() as sweep:
    ...     done = execute(Collect(sweep_dir=Path(sweep)), ["budget.B"], [Job("budget.B=3", {"budget.B": 3})])
    >>> done.jobs, done.stacked.unfinished
    (1, ('budget.B=3',))
    """
    if collect.sweep_dir is None:
        assert collect.run_dir is not None  # parse sets one of the two
        return run(collect.run_dir, collect.config)
    jobs = jobs or []
    return SweepCollected(collect.sweep_dir, len(jobs), stack(collect.sweep_dir, swept or [], jobs))


def failure(done) -> str | None:
    """A sweep's jobs that did not finish, in one line naming them (the command exits 1); None otherwise.

    Parameters
    ----------
    done : simstudy.studies.base.StudyResult or SweepCollected
        From :func:`execute`.

    Returns
    -------
    str or None
        The line.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.sweeps import Job
    >>> with tempfile.TemporaryDirectory() as sweep:
    ...     done = execute(Collect(sweep_dir=Path(sweep)), ["budget.B"], [Job("budget.B=3", {"budget.B": 3})])
    ...     print(failure(done))  # doctest: +ELLIPSIS
    /...: 1 of 1 jobs did not finish (no summary.parquet): budget.B=3; rerun the sweep's command to resume them
    """
    if not isinstance(done, SweepCollected) or not done.stacked.unfinished:
        return None
    from simstudy.sweeps import unfinished_message

    return unfinished_message(done.sweep_dir, done.stacked.unfinished, done.jobs)


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "collect",
    run=execute,
    parse=parse,
    failure=failure,
    logs="run",
    reads_sweep="sweep_dir",
    usage="simstudy collect run_dir=DIR [plugins=PATH,...] | sweep_dir=DIR",
    examples=(
        "simstudy collect run_dir=outputs/dodge2021_fig1/default",
        "simstudy collect sweep_dir=outputs/multirun/dodge2021_fig1",
    ),
    writes="run_dir: the run's summary and figures, exactly as an unsharded run would; sweep_dir: summary.parquet/csv "
    "(every finished job's summary, a column per swept key) and a faceted figure.png/pdf, exit 1 naming the "
    "jobs that did not finish",
    keys={
        "run_dir": "the run directory the shards wrote into",
        "sweep_dir": "instead of run_dir: a sweep's directory (simstudy -m ...; outputs/multirun/<study>), "
        "whose jobs' summaries are stacked again",
        "plugins": "comma-separated import paths (module.function) of plug-ins the run's config.yaml names that you "
        "trust: a stored config imports no other plug-in than these and the registered ones (importing runs code)",
    },
)
