"""The Python API for notebooks: :func:`run` a study or a data command and :func:`compose` a study's config, as
the command would.

``simstudy.run("dodge2021_fig1", overrides=["study.reps=3000"], out_dir="runs/fig1")`` does what
``simstudy experiment=dodge2021_fig1 study.reps=3000 hydra.run.dir=runs/fig1`` does, on the same code path:
the same validation (a bad override raises :class:`~simstudy.config.ConfigError` with the line the command
prints), the same files in the run directory, the same resume from finished chunks, and the same numbers, bit
for bit. ``simstudy.run("bands", data="scores.csv", minimize=True)`` does what ``simstudy bands data=scores.csv
minimize=true`` does, its keys as Python keywords; so does every command (``simstudy.run("collect",
run_dir="outputs/x")``, ``simstudy.run("populations", action="export", ...)``): what it would print is the
result's ``lines``, nothing is printed and nothing exits. Log lines go to the ``simstudy`` logger
(``logging.basicConfig(level=logging.INFO)`` shows them).

A config is composed by :mod:`simstudy.cli.compose`, the command line's composition (the one module of
:mod:`simstudy.cli` imported here: it neither prints, nor exits, nor reads ``sys.argv``), and run by
:mod:`simstudy.launch`, the path the command shares. Both are imported only when one of these is called, so
``import simstudy`` stays fast (no Hydra).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simstudy.schema import ConfigError  # the class simstudy.config names too; schema imports no scipy

__all__ = ["run", "compose", "RunResult", "RunFailed", "ConfigError"]


class RunFailed(RuntimeError):
    """A run that could not finish, with the one line the command prints when it exits with status 1.

    Raised by :func:`run` when the input was valid but the run could not complete: more failed chunks than
    ``runner.max_failure_fraction`` allows, chunks missing when a sharded run is collected, a full disk. The
    finished chunks stay in the run directory, so rerunning resumes from them. Bad input raises
    :class:`~simstudy.config.ConfigError` instead (the command's exit status 2). The message below has the
    command's form: the first failure's chunk and error, and the ``simstudy replay`` line that reruns it.

    Examples
    --------
    >>> from simstudy.api import RunFailed
    >>> issubclass(RunFailed, RuntimeError)
    True
    >>> raise RunFailed("3 of 10 chunks failed (30.0% > runner.max_failure_fraction=0); first: chunk ...")
    Traceback (most recent call last):
    ...
    simstudy.api.RunFailed: 3 of 10 chunks failed (30.0% > runner.max_failure_fraction=0); first: chunk ...
    """


@dataclass(frozen=True)
class RunResult:
    """A finished run, as :func:`run` returns it (a frozen dataclass).

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary, as in ``summary.parquet``: one row per cell, estimator, budget and measure, with
        columns such as ``study``, ``cell``, ``distribution``, ``B``, ``estimator``, ``n``, ``measure``,
        ``estimate`` (in the scores' units, or a probability for a coverage), its Monte Carlo standard error
        ``mcse`` and ``reps`` (the study kind decides which). Empty for one shard of a sharded run
        (``runner.shard=i/N``): nothing is summarised until ``simstudy collect``.
    files : dict of str to pathlib.Path
        The files the study wrote, by name (``summary_parquet``, ``summary_csv``, ``run`` for run.json,
        ``replicates`` ...; for a shard only its ``shard_marker``). The figure (``figure.png`` and
        ``figure.pdf``) and ``config.yaml`` are in ``out_dir`` but not listed here.
    report : simstudy.engine.runner.RunReport
        The runner's report: chunks (``tasks``), how many were ``resumed`` from an earlier run and how many
        ``computed``, wall and compute seconds, warnings and failures.
    config : simstudy.config.Config
        The validated frozen config that ran (of a command: what its ``parse`` returned).
    out_dir : pathlib.Path
        The run directory (absolute).
    result : object, optional
        A command's own result (e.g. :class:`~simstudy.commands.bands.BandsResult`), whose frames it wrote;
        None for a study (its summary is :attr:`summary`).
    lines : tuple of str, optional
        What the command would print on the terminal (its summary lines); empty for a study.

    See Also
    --------
    run : Runs a study and returns this.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.api import RunResult
    >>> [f.name for f in dataclasses.fields(RunResult)]
    ['summary', 'files', 'report', 'config', 'out_dir', 'result', 'lines']
    """

    summary: object
    files: dict
    report: object
    config: object
    out_dir: Path | None
    result: object = None
    lines: tuple[str, ...] = ()


def _iv(experiment, overrides) -> list[str]:
    if experiment is not None and not isinstance(experiment, str):
        raise TypeError(f"experiment must be a preset name (str) or None, got {type(experiment).__name__}")
    if isinstance(overrides, str):
        raise TypeError(
            f"overrides must be a list of 'key=value' strings, got the string {overrides!r}: "
            f"write overrides=[{overrides!r}]"
        )
    overrides = list(overrides)
    bad = [o for o in overrides if not isinstance(o, str)]
    if bad:
        raise TypeError(f"overrides must be 'key=value' strings, got {bad[0]!r}")
    return overrides


@contextlib.contextmanager
def _refusals():
    """A refusal met inside (:class:`~simstudy.engine.rundir.Refused`: the command's one line and exit status) as
    this module's exception: :class:`ConfigError` for bad input (status 2), :class:`RunFailed` for a run that could
    not finish (1). A ``sys.exit`` that is not simstudy's refusal (code a plug-in or a library ran) is never the
    caller's program's end, but the run's failure."""
    from simstudy.engine.rundir import Refused

    try:
        yield
    except Refused as exc:
        raise (ConfigError if exc.code == 2 else RunFailed)(exc.message) from None
    except SystemExit as exc:
        raise RunFailed(
            f"the run called sys.exit({exc.code!r}) (a plug-in's, or a library's code); it did not finish"
        ) from None


def _in_run_dir(run, composed, out_dir):
    """``run(resolved, run_dir)`` of a composed config (:class:`simstudy.cli.compose.Composed`) in its run
    directory, ``out_dir`` or the command line's, made and claimed as the command does
    (:func:`simstudy.engine.rundir.in_run_dir`); returns what ``run`` returned and the directory (absolute)."""
    from simstudy import launch
    from simstudy.engine.rundir import in_run_dir

    where, created = launch.out_dir(composed.run_dir if out_dir is None else out_dir)
    shard = launch.shard_label(composed.config)
    return in_run_dir(run, composed.config, where, shard=shard, overwrite=composed.overwrite, created=created), where


def compose(experiment: str | None = None, overrides: Sequence[str] = ()):
    """The validated, frozen config of ``simstudy [experiment=NAME] [overrides...]``, without running it.

    Parameters
    ----------
    experiment : str or None, default None
        A preset of ``configs/experiment`` (e.g. ``"dodge2021_fig1"``); None: the default config.
    overrides : sequence of str, default ()
        ``key=value`` overrides, as on the command line (``"study.reps=3000"``, ``"estimators=[u,v]"``).

    Returns
    -------
    simstudy.config.Config
        The config :func:`simstudy.config.parse` validated and froze: what :func:`run` would run, nothing
        computed and nothing written.

    Raises
    ------
    ConfigError
        For an unknown preset, key or option, or an invalid value: the one line the command prints.
    TypeError
        If ``overrides`` is not a sequence of strings.

    Examples
    --------
    >>> import simstudy
    >>> config = simstudy.compose("dodge2021_fig1", overrides=["study.reps=3000"])
    >>> config.study.name, config.study.reps
    ('dodge2021_fig1', 3000)
    >>> simstudy.compose("dodge2021_fig1", overrides=["budget.B=0"])
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.B must be an integer >= 1, got 0
    """
    overrides = _iv(experiment, overrides)
    from simstudy import launch
    from simstudy.cli.compose import study
    from simstudy.config import parse_study

    with _refusals():
        return launch.validate(parse_study, study(experiment, overrides).config)


def run(
    experiment: str | None = None,
    overrides: Sequence[str] = (),
    out_dir: str | os.PathLike | None = None,
    **options,
) -> RunResult:
    """Run ``simstudy [experiment=NAME] [overrides...]``, or any command, in this process and return its result.

    The same code path as the command: the same checks, the same run directory files (config.yaml, run.json,
    the summary, the figure ...), the same resume (rerunning resumes from finished chunks; a larger
    ``study.reps`` extends them), and the same numbers, bit for bit. ``run("bands", data="scores.csv",
    minimize=True)`` runs ``simstudy bands data=scores.csv minimize=true``: a command's name (``curve``,
    ``bands``, ``audit``, ``extrapolate``, ``collect``, ``report``, ``populations``, ``plan`` ..., a plug-in's), its
    keys as keywords. A plain command (one without an options schema: ``collect``, ``report`` ...) names its own
    files; nothing is printed, what it would print is :attr:`RunResult.lines`.

    Parameters
    ----------
    experiment : str or None, default None
        A preset of ``configs/experiment`` (e.g. ``"dodge2021_fig1"``), or a command's name; None: the default
        config.
    overrides : sequence of str, default ()
        ``key=value`` overrides, as on the command line. One value per key (no sweeps: loop in Python).
    out_dir : str or path-like, optional
        The run directory; default the command's, ``outputs/<study.name>/<overrides>`` (a command's
        ``outputs/NAME/<overrides>``) under the working directory (so the command and this function share, and
        resume, one directory). Refused for a plain command, which names its own files.
    **options
        A command's keys as Python values (``data="scores.csv"``, ``models=["a", "b"]``, ``low=0``; a plain
        command's flag as a bool, ``quick=True``, its first word as ``action=``), validated by the command's own
        parse; refused for a study (its keys are ``overrides``).

    Returns
    -------
    RunResult
        The summary table, the files written, the runner's report, the config that ran and the run directory.

    Raises
    ------
    ConfigError
        For bad input (an unknown preset, key or option, an invalid value, a directory holding another
        configuration's results or someone else's files): the one line the command prints (exit status 2).
    RunFailed
        When the run cannot finish (more failed chunks than ``runner.max_failure_fraction``, a full disk):
        the command's line for exit status 1; or when code it ran called ``sys.exit`` (never the end of the
        caller's program). A plug-in's ``sys.exit`` is a :class:`ConfigError` naming its ``_target_``.
    TypeError
        If ``overrides`` is not a sequence of strings, keywords are given to a study, or ``out_dir`` to a plain
        command.

    Examples
    --------
    A tiny Dodge et al. (2021) Figure 1 study (100 searches of B = 3 trials) in a temporary directory; run
    again with the same arguments, it would resume its one chunk (``report.resumed == 1``) instead of
    recomputing it:

    >>> import simstudy, tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     result = simstudy.run(
    ...         "dodge2021_fig1", ["study.reps=100", "budget.B=3", "runner.progress=false"], out_dir=out
    ...     )
    >>> sorted(result.summary["estimator"].unique())
    ['truth', 'u', 'v', 'v-u', 'w', 'w-u', 'w-v']
    >>> sorted(result.files)
    ['run', 'summary_csv', 'summary_parquet']
    >>> result.report.tasks, result.report.resumed, result.config.study.reps
    (1, 0, 100)

    A data command, on a score file of one model:

    >>> with tempfile.TemporaryDirectory() as out:
    ...     with open(f"{out}/scores.csv", "w") as f:
    ...         _ = f.write("score\\n0.2\\n0.4\\n0.3\\n")
    ...     result = simstudy.run("curve", data=f"{out}/scores.csv", out_dir=f"{out}/curve")
    ...     written = sorted(result.files)
    >>> result.summary["expected_max"].round(4).tolist()
    [0.3, 0.3444, 0.3667]
    >>> written[:4]
    ['CURVE.md', 'config.yaml', 'curves.csv', 'curves.parquet']
    """
    overrides = _iv(experiment, overrides)
    from simstudy import extend, launch
    from simstudy.cli.compose import study
    from simstudy.config import parse_study

    if experiment is not None and experiment in extend.commands.names():
        return _run_command(experiment, options, overrides, out_dir)
    if options:
        raise TypeError(
            f"run() takes a study's keys as overrides (['key=value', ...]), not keywords: got {', '.join(options)}"
        )

    with _refusals():
        composed = study(experiment, overrides)
        config = launch.validate(parse_study, composed.config)
        done, where = _in_run_dir(launch.run_study, composed, out_dir)
    summary = getattr(done, "summary", None)
    if summary is None:  # one shard of a sharded run: chunks stored, nothing summarised
        import pandas as pd

        return RunResult(pd.DataFrame(), {"shard_marker": done.marker}, done.report, config, where)
    return RunResult(summary, dict(done.files), done.report, config, where)


def _run_command(name: str, options: dict, overrides: list[str], out_dir) -> RunResult:
    """:func:`run` of a command: composed by :mod:`simstudy.cli.compose`, run by :mod:`simstudy.launch` (a data
    command by :func:`~simstudy.launch.run` in its run directory, a plain one by
    :func:`~simstudy.launch.run_plain`), its refusals as this module's errors."""
    import logging

    from simstudy import launch, registry
    from simstudy.cli import compose
    from simstudy.engine.rundir import fail

    log = logging.getLogger("simstudy")
    with _refusals():
        try:
            spec = registry.command(name)
        except KeyError as exc:
            fail(str(exc.args[0]))
        if spec.plain:
            return _run_plain(spec, options, overrides, out_dir)
        composed = compose.command(spec, options, overrides)
        done, where = _in_run_dir(lambda resolved, run_dir: launch.run(spec, resolved, run_dir), composed, out_dir)
    for line in done.lines:
        log.info("%s", line)
    if done.wrote is not None:
        log.info("%s", done.wrote)
    files = {p.name: p for p in sorted(where.iterdir()) if p.is_file() and not p.name.startswith(".")}
    return RunResult(
        _table(done.result),
        files,
        getattr(done.result, "report", None),
        done.config,
        where,
        result=done.result,
        lines=done.lines,
    )


def _run_plain(spec, options: dict, overrides: list[str], out_dir) -> RunResult:
    """:func:`run` of a plain command (``collect``, ``report``, ``populations`` ...): its keywords checked as the
    command line checks its arguments, parsed by its ``parse``, run by :func:`simstudy.launch.run_plain`. A run
    that did not finish (the command line's exit status 1) raises :class:`RunFailed` with its line."""
    from simstudy import launch
    from simstudy.cli import compose
    from simstudy.engine.rundir import fail, note_files
    from simstudy.score_files import DataError

    if out_dir is not None:
        raise TypeError(
            f"simstudy {spec.name} names its own files (its keys: {', '.join(spec.keys) or 'none'}): out_dir is for "
            f"a study or a data command"
        )
    mapping = compose.plain(spec, options, overrides)
    try:
        config = spec.parse(mapping) if spec.parse is not None else mapping
    except DataError as exc:
        fail(str(exc))
    named = [Path(v) for v in mapping.values() if isinstance(v, str) and v and Path(v).is_dir()]
    before = {d.resolve(): note_files(d) for d in named}
    done = launch.run_plain(
        spec, config, compose_study=lambda e, o: compose.study(e, o).config, read_sweep=compose.read_sweep
    )
    if done.failure:
        raise RunFailed(done.failure)
    files, dirs = _written(done.result, before)
    return RunResult(None, files, None, done.config, dirs[0] if dirs else None, result=done.result, lines=done.lines)


def _written(result, before: dict) -> tuple[dict, list[Path]]:
    """The files a plain command wrote, by name, and the directories it wrote in: each file its result names (a
    path, or a mapping of paths), and in each directory its arguments or its result name, the files new or
    rewritten since ``before`` (the :class:`~simstudy.engine.rundir.RunDir` of each directory its arguments named;
    every file of a directory it made)."""
    values = [getattr(result, f.name) for f in dataclasses.fields(result)] if dataclasses.is_dataclass(result) else []
    values += [v for value in values if isinstance(value, dict) for v in value.values()]
    paths = [Path(v).resolve() for v in values if isinstance(v, Path) and v.exists()]
    files = {p.name: p for p in paths if p.is_file()}
    dirs = list(dict.fromkeys([*before, *(p for p in paths if p.is_dir())]))
    for d in dirs:
        noted = before.get(d)
        names = noted.written() if noted is not None else {p.name for p in d.iterdir()}
        files.update({n: d / n for n in sorted(names) if (d / n).is_file() and not n.startswith(".")})
    return dict(sorted(files.items())), dirs


def _table(result):
    """A command result's main frame (curve: its curves; bands: its bands; extrapolate: its curves), else None."""
    inner = getattr(result, "result", result)  # extrapolate's result holds the analysis' own
    for name in ("curves", "bands"):
        frame = getattr(inner, name, None)
        if frame is not None:
            return frame
    return None
