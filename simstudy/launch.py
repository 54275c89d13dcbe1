"""Run a study or a command into its run directory: the path that the command line and the Python API share.

``simstudy [experiment=NAME] key=value ...`` and :func:`simstudy.run` both come here with a composed config as
plain resolved values (composed and checked by :mod:`simstudy.cli.compose`, the only place Hydra is): the config
is validated, the run directory claimed (:mod:`simstudy.engine.rundir`), its identity checked against the
results already there, config.yaml written, the study run (resuming finished chunks), and its report logged and
figure drawn. Nothing here prints, exits or imports Hydra: a refusal raises
:class:`~simstudy.engine.rundir.Refused`, which :mod:`simstudy.cli` prints and :mod:`simstudy.api` turns into
an exception of its own.

A command runs through its registered :class:`~simstudy.registry.Command`, whether the command line or
:func:`simstudy.run` called: a data command (``simstudy curve``, ``bands`` ...) through :func:`run`, a plain one
(``collect``, ``report`` ...) through :func:`run_plain`.

======================  ===========================================================================================
:func:`run`             run a data command's spec on a composed config in its claimed run directory
:func:`run_plain`       run a plain command's spec on its parsed config
``run_study``           run a composed study (or design) config in a claimed run directory
``_run_design``         a ``design:`` block: each cell as its own study, their summaries stacked
``out_dir``             the Python API's run directory, absolute and made
======================  ===========================================================================================
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from simstudy import io
from simstudy.commands.study import log_report, run_and_report
from simstudy.engine import claims
from simstudy.engine import identity as _identity
from simstudy.engine.rundir import (
    ENVIRONMENT_ERRNOS,
    Refused,
    RunDir,
    absolute_path,
    check_dir_override,
    check_identity,
    check_run_dir,
    config_written,
    fail,
    load_stored_yaml,
    note_dirs,
    note_files,
    os_error,
    os_status,
    release,
    remove_if_empty,
    settle,
    write_config,
)
from simstudy.registry import Command
from simstudy.schema import ConfigError

__all__ = ["run", "run_plain", "CommandDone", "PlainDone"]

log = logging.getLogger("simstudy")


def _data_record(spec: Command, resolved: dict, opts) -> dict:
    """A data command's identity: its data by content, its settings (the data's path left out: a renamed
    file with the same bytes is the same input; nor the worker count, which changes no number, nor the
    settings the command says a rerun may change, :attr:`~simstudy.registry.Command.rerun_may_change`)."""
    settings = copy.deepcopy(resolved)  # its own: the keys below are taken off
    for key in ("data", "n_jobs", "runner", *spec.rerun_may_change):
        settings.pop(key, None)
    for key in ("objective", "metric"):  # a tuning source's keys (issue 36), unset: as a run directory made before
        if settings.get(key) is None:
            settings.pop(key, None)
    return _identity.record(
        spec.name,
        inputs={"data": _identity.data_input(opts.data)},
        plugins=_data_plugins(settings.get("estimator")),
        settings=settings,
    )


def _data_plugins(estimator) -> dict:
    """A data command's plug-in estimator (``curve``/``bands estimator=module.function``) by its source digest, as
    a study's: an edited plug-in is another run, never the earlier one's directory rewritten as if the same."""
    if not isinstance(estimator, str) or estimator in ("u", "v", "w"):
        return {}
    from simstudy import plugins

    registered = plugins.registered_estimator(estimator)
    target = registered[0] if registered is not None else estimator
    return {target: plugins.source_hash(target)}


def shard_label(config: Mapping) -> str | None:
    """``runner.shard`` of a config as given (validated later): shards share their run directory. The config is
    a mapping, resolved or as Hydra composed it: a value that does not resolve is None here (the config's own
    error, said in one line once it is parsed)."""
    try:
        runner = config.get("runner")
        shard = runner.get("shard") if isinstance(runner, Mapping) else None
    except Exception:
        return None
    return None if shard is None else str(shard)


def validate(parser, resolved):
    """Validate the resolved config with ``parser``; bad input exits in one line (status 2)."""
    from simstudy.datasets import DataError

    try:
        return parser(resolved)
    except (ConfigError, DataError) as exc:
        fail(str(exc))


@dataclasses.dataclass(frozen=True)
class CommandDone:
    """What :func:`run` returns: the command's result, and what the terminal is told of it.

    Parameters
    ----------
    result : object
        What the command's ``run`` returned (e.g. a :class:`~simstudy.commands.curve.CurveResult`).
    config : object
        The validated config it ran with (what the command's ``parse`` returned).
    lines : tuple of str
        The command's summary lines (its ``lines``), for the command line to print.
    wrote : str or None
        The closing log line naming the files written (None: the command's ``write`` said it).

    Examples
    --------
    >>> CommandDone(None, None, ("a line",), None).lines
    ('a line',)
    """

    result: object
    config: object
    lines: tuple[str, ...]
    wrote: str | None


def run(spec: Command, resolved: dict, run_dir: RunDir) -> CommandDone:
    """Run a data command on its composed config in its claimed run directory: the one path of the command line
    and :func:`simstudy.run`.

    The config is validated (``spec.parse``) and the scores read before anything is written; then the inputs
    the scores make (``spec.prepare``) are checked, the run directory's identity too (the data by content, the
    settings), the command runs (``spec.run``), writes its files (``spec.write``), config.yaml, run.json and
    report.html. Nothing is printed (the caller prints :attr:`CommandDone.lines`).

    Parameters
    ----------
    spec : simstudy.registry.Command
        A data command (with ``options`` and ``parse``).
    resolved : dict
        Its composed config, without Hydra's keys, as plain resolved values
        (:func:`simstudy.cli.compose.to_plain`).
    run_dir : simstudy.engine.rundir.RunDir
        The run directory, claimed (:func:`simstudy.engine.rundir.in_run_dir`), and whether ``overwrite=true``.

    Returns
    -------
    CommandDone
        The result, the config and the summary lines.

    Raises
    ------
    simstudy.engine.rundir.Refused
        Bad input (status 2: nothing of this run left behind), or a run that could not finish (status 1).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from simstudy import registry, schema
    >>> spec = registry.command("curve")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "s.csv").write_text("score\\n0.2\\n0.4\\n0.3\\n")
    ...     resolved = {**schema.defaults(spec.options), "data": str(Path(tmp, "s.csv"))}
    ...     out = Path(tmp, "out")
    ...     out.mkdir()  # the caller claims it (simstudy.engine.rundir.in_run_dir)
    ...     done = run(spec, resolved, note_files(out))
    ...     print(sorted(p.name for p in out.iterdir() if not p.name.startswith("."))[:3])
    ['CURVE.md', 'config.yaml', 'curves.csv']
    """
    from simstudy.commands import report
    from simstudy.commands._data import log_scores, read
    from simstudy.datasets import DataError

    out_dir = run_dir.path
    config = validate(spec.parse, resolved)
    config, scores = validate(lambda _: read(config), resolved)  # with the source's direction and i.i.d. check
    record = _data_record(spec, resolved, config.data)
    if spec.log_scores:
        log_scores(spec.name, scores, out_dir, minimize=config.data.minimize)
    # every check that needs the scores before the directory is touched: a refusal leaves nothing behind
    prepared = scores if spec.prepare is None else validate(lambda _: spec.prepare(config, scores), resolved)
    check_identity(out_dir, record, overwrite=run_dir.overwrite)
    try:  # a command's first step may refuse, with the estimates, a run beyond the memory or time limit
        result = spec.run(config, prepared, out_dir) if spec.chunks else spec.run(config, prepared)
    except (ConfigError, DataError) as exc:
        fail(str(exc))
    if spec.runner:
        log_report(result.report)
    if spec.write is not None:
        spec.write(result, out_dir)
    write_config(resolved, out_dir, record)
    if spec.record:  # run.json: the command, its resolved config (and runner), the environment: the provenance
        runner = {"runner": dataclasses.asdict(result.report)} if spec.runner else {}
        io.write_json(
            {"command": spec.name, "config": resolved, **runner, "environment": io.environment()}, out_dir / "run.json"
        )
    report.write(out_dir)  # report.html beside the command's page; a failure to write it is a warning
    lines = tuple(spec.lines(result)) if spec.lines is not None else ()
    return CommandDone(result, config, lines, f"wrote {run_dir.listing()} to {out_dir}" if spec.record else None)


def run_study(resolved: dict, run_dir: RunDir):
    """Run a composed study config (plain resolved values; or each cell of its ``design:`` block) in ``run_dir``,
    claimed already."""
    from simstudy.config import parse

    out_dir = run_dir.path
    if "design" in resolved:
        return _run_design(resolved, run_dir)
    config = validate(parse, resolved)
    if run_dir.overwrite and config.runner.shard is not None:  # each shard would move the others' fresh chunks
        fail(
            "overwrite=true cannot be combined with runner.shard (each shard would move the others' results "
            "aside): give the shards a new run directory (hydra.run.dir=NEW)",
        )
    config = _replicates_as_stored(config, resolved, out_dir)
    record = _identity.study_record(config, settings={})  # the settings: config.yaml's, compared next
    check_identity(out_dir, record, overwrite=run_dir.overwrite)
    check_run_dir(resolved, out_dir)
    log.info("study %s -> %s", config.study.name, out_dir)
    with config_written(resolved, out_dir, record):
        return run_and_report(config, run_dir)


def _replicates_as_stored(config, resolved: dict, out_dir: Path):
    """``study.save_replicates`` as the run directory was made, when it kept the replicates and this config
    would not: evp_accuracy wrote replicates.parquet by default until issue 26 made it opt-in (a fast default),
    so the same command rerun into a directory made before resumes its chunks (which hold the replicates)
    rather than being refused as another configuration. ``resolved`` is updated too (config.yaml says what ran)."""
    stored = out_dir / "config.yaml"
    if config.study.save_replicates or not stored.is_file():
        return config
    try:  # read in bounded time and memory (an alias bomb spun at 100% CPU), as every stored config, as written
        old = load_stored_yaml(stored)
    except (Exception, Refused):  # unreadable: the identity check next says so in one line
        return config
    study = old.get("study") if isinstance(old, dict) else None
    if not (
        isinstance(study, dict) and study.get("save_replicates") is True and study.get("kind") == config.study.kind
    ):
        return config
    options = config.study.options
    if options is None or not hasattr(options, "save_replicates"):
        return config
    log.info("study.save_replicates=true, as %s was made (its chunks hold every replicate): resuming them", out_dir)
    resolved["study"]["save_replicates"] = True
    kept = dataclasses.replace(options, save_replicates=True)
    return dataclasses.replace(config, study=dataclasses.replace(config.study, save_replicates=True, options=kept))


def _run_design(resolved: dict, run_dir: RunDir):
    """A config with a ``design:`` block: each cell (one combination of its values) runs as its own study in
    ``out_dir/<key=value,...>/``, exactly as ``simstudy -m`` would run that job (same numbers, same resume), and
    their summaries are stacked into ``out_dir/summary.parquet`` with one column per design key and a faceted
    figure, as a sweep's (:func:`write_sweep`). Returns the stacked result."""
    from simstudy.config import design_cells, parse_cells
    from simstudy.studies.base import StudyResult
    from simstudy.sweeps import Job, unfinished_message, write_sweep

    out_dir = run_dir.path
    keys, cells = validate(design_cells, resolved)
    configs = validate(parse_cells, resolved)  # every cell validated before any compute
    if run_dir.overwrite:  # the stacked results aside; each cell's own are moved by its identity check below
        moved = _identity.move_aside(out_dir)
        if moved is not None:
            log.warning("overwrite=true: moved the earlier results to %s", moved)
    check_run_dir(resolved, out_dir)
    log.info("design of %d cells (%s) -> %s", len(cells), ", ".join(keys), out_dir)
    reports = []
    with config_written(resolved, out_dir):
        for (name, _, cell), config in zip(cells, configs):
            sub = out_dir / name
            try:
                claim = claims.claim_run_dir(sub, shard=shard_label(resolved), warn=log.warning)
            except (claims.NotARunDir, claims.RunDirBusy) as exc:
                fail(str(exc))
            cell_dir = note_files(sub, overwrite=run_dir.overwrite)
            try:
                record = _identity.study_record(config, settings={})
                check_identity(sub, record, overwrite=run_dir.overwrite)
                check_run_dir(cell, sub)
                log.info("design cell %s -> %s", name, sub)
                with config_written(cell, sub, record):
                    reports.append(run_and_report(config, cell_dir).report)
                settle(cell_dir, finished=config.runner.shard is None)
            finally:
                release(claim, cell_dir)
        stacked = write_sweep(out_dir, keys, [Job(name, values) for name, values, _ in cells])
    if stacked.unfinished:
        log.warning(
            "%s",
            unfinished_message(out_dir, stacked.unfinished, len(cells)).replace(
                "rerun the sweep's command", "rerun the command"
            ),
        )
    report = dataclasses.replace(
        reports[0],
        **{
            f: sum(getattr(r, f) for r in reports)
            for f in ("tasks", "resumed", "computed", "wall_seconds", "compute_seconds")
        },
        warnings=tuple(w for r in reports for w in r.warnings),
        failures=tuple(f for r in reports for f in r.failures),
    )
    files = {
        "summary_parquet": out_dir / "summary.parquet",
        "summary_csv": out_dir / "summary.csv",
        "figure_png": out_dir / "figure.png",
        "figure_pdf": out_dir / "figure.pdf",
        **(
            {"nested_loop_png": out_dir / "nested_loop.png"}
            if len(keys) >= 3 and (out_dir / "nested_loop.png").is_file()
            else {}
        ),
    }
    return StudyResult(summary=stacked.frame, report=report, files=files, kind=stacked.kind)


def out_dir(out_dir):
    """The run directory of :func:`simstudy.run`, absolute and made (a bad path refused in one line), and the
    directories making it created (removed again if the run is refused and leaves them empty)."""
    out_dir = absolute_path(out_dir)
    check_dir_override("out_dir", str(out_dir))
    created = note_dirs(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        remove_if_empty(out_dir, created)
        fail(os_error(exc), status=os_status(exc))
    return out_dir, created


@dataclasses.dataclass(frozen=True)
class PlainDone:
    """What :func:`run_plain` returns: a plain command's result, and what the terminal is told of it.

    Parameters
    ----------
    result : object
        What the command's ``run`` returned.
    config : object
        The config it ran with (what its ``parse`` returned).
    lines : tuple of str
        The command's lines for the terminal (its ``lines``).
    failure : str or None
        A run that did not finish, in one line (its ``failure``; the command line exits with status 1); None:
        it finished.

    Examples
    --------
    >>> PlainDone(None, None, ("a line",), None).failure is None
    True
    """

    result: object
    config: object
    lines: tuple[str, ...]
    failure: str | None


def run_plain(
    spec: Command,
    config,
    *,
    compose_study: Callable[[str | None, list[str]], dict],
    read_sweep: Callable[[Path], tuple[list, list]],
) -> PlainDone:
    """Run a plain command (``collect``, ``report``, ``plan`` ...) on its parsed config: the one path of
    ``simstudy NAME key=value ...`` and :func:`simstudy.run`.

    What only a composed config or a sweep's ``multirun.yaml`` gives (Hydra's, so the caller's: the command line's
    or the API's :mod:`simstudy.cli.compose`) is asked for through ``compose_study`` and ``read_sweep``, as the
    spec says (``composes_study``, ``reads_sweep``). Nothing is printed.

    Parameters
    ----------
    spec : simstudy.registry.Command
        A plain command (no ``options``).
    config : object
        What its ``parse`` made of its arguments (the mapping itself without ``parse``).
    compose_study : callable
        ``compose_study(experiment, overrides) -> dict``: a study's composed config as plain resolved values, for a
        spec that ``composes_study`` (its ``parse`` returned ``(experiment, overrides)``).
    read_sweep : callable
        ``read_sweep(sweep_dir) -> (swept, jobs)``: a sweep's keys and jobs, for a spec that ``reads_sweep``.

    Returns
    -------
    PlainDone
        The result, the config, the lines and the failure, if any.

    Raises
    ------
    simstudy.engine.rundir.Refused
        Bad input (a data file missing or unreadable, a study config that does not validate).
    simstudy.schema.ConfigError
        A bad value the command's ``run`` met.

    Examples
    --------
    A plain command whose ``run`` greets the name it is given (a built-in's spec is used the same way):

    >>> from simstudy.registry import Command
    >>> spec = Command("hello", run=lambda config: config["name"], lines=lambda name: [f"hello, {name}"],
    ...                usage="simstudy hello name=NAME", examples=(), writes="nothing", keys={"name": "who"})
    >>> done = run_plain(spec, {"name": "you"}, compose_study=None, read_sweep=None)
    >>> done.lines, done.failure
    (('hello, you',), None)
    """
    from simstudy.score_files import DataError

    try:
        if spec.composes_study:
            from simstudy.config import parse_study

            result = spec.run(validate(parse_study, compose_study(*config)))
        elif spec.reads_sweep and getattr(config, spec.reads_sweep, None) is not None:
            result = spec.run(config, *read_sweep(Path(getattr(config, spec.reads_sweep))))
        else:
            result = spec.run(config)
    except DataError as exc:
        fail(str(exc))
    lines = tuple(spec.lines(result)) if spec.lines is not None else ()
    return PlainDone(result, config, lines, spec.failure(result) if spec.failure is not None else None)
