"""Run a study or a command into its run directory: the path that the command line and the Python API share.

``simstudy [experiment=NAME] key=value ...`` and :func:`simstudy.run` both come here: the config is composed
and validated (:mod:`simstudy.overrides`), the run directory claimed (:mod:`simstudy.engine.rundir`), its
identity checked against the results already there, config.yaml written, the study run (resuming finished
chunks), and its report logged and figure drawn. Nothing here prints or exits: a refusal raises
:class:`~simstudy.engine.rundir.Refused`, which :mod:`simstudy.cli` prints and :mod:`simstudy.api` turns into
an exception of its own.

A data command (``simstudy curve``, ``bands`` ...) runs through :func:`run`, its registered
:class:`~simstudy.registry.Command` driving every step, whether the command line or :func:`simstudy.run` called.

======================  ===========================================================================================
:func:`run`             run a data command's spec on a composed config in its claimed run directory
:func:`api_command`     compose a data command from Python keywords and run it (:func:`simstudy.run`)
:func:`api_compose`     the validated frozen Config of an experiment and overrides (:func:`simstudy.compose`)
:func:`api_run`         run an experiment with overrides into a run directory (:func:`simstudy.run`)
``run_study``           run a composed study (or design) config in a claimed run directory
``_run_design``         a ``design:`` block: each cell as its own study, their summaries stacked
``run_and_report``      run the study, log its report, draw its figure
======================  ===========================================================================================
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

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
    in_run_dir,
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
from simstudy.overrides import (
    GRAMMAR,
    check_overrides,
    design_cells,
    last_of_each_key,
    log_notice,
    one_line,
    optional_keys,
    parse_study,
    quote_paths,
    register_commands,
    register_studies,
    take_overwrite,
)
from simstudy.registry import Command
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["run", "CommandDone", "api_command", "api_compose", "api_run"]

log = logging.getLogger("simstudy")


def _data_record(spec: Command, cfg: DictConfig, opts) -> dict:
    """A data command's identity: its data by content, its settings (the data's path left out: a renamed
    file with the same bytes is the same input; nor the worker count, which changes no number, nor the
    settings the command says a rerun may change, :attr:`~simstudy.registry.Command.rerun_may_change`)."""
    from omegaconf import OmegaConf

    settings = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(settings, dict)  # a DictConfig's container
    for key in ("data", "n_jobs", "runner", *spec.rerun_may_change):
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


def _resolved(cfg: DictConfig) -> dict:
    """A composed config as the plain values the engine takes (config.yaml is written from them)."""
    from omegaconf import OmegaConf

    resolved = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    assert isinstance(resolved, dict)  # a DictConfig's container
    return resolved


def shard_label(cfg) -> str | None:
    """``runner.shard`` of a composed config as given (validated later): shards share their run directory."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        shard = OmegaConf.select(cfg, "runner.shard", default=None, throw_on_missing=False)
    except OmegaConfBaseException:  # the config's own error, reported in one line once it is parsed
        return None
    return None if shard is None else str(shard)


def _parse_or_fail(parser, cfg: DictConfig):
    """Resolve the config and validate it with ``parser``; bad input exits in one line (status 2)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from simstudy.datasets import DataError

    try:
        return parser(OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True))
    except (ConfigError, DataError) as exc:
        fail(str(exc))
    except OmegaConfBaseException as exc:
        fail(one_line(exc))


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


def run(spec: Command, cfg: DictConfig, run_dir: RunDir) -> CommandDone:
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
    cfg : omegaconf.DictConfig
        Its composed config, without Hydra's keys.
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
    >>> from omegaconf import OmegaConf
    >>> from simstudy import registry, schema
    >>> spec = registry.command("curve")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "s.csv").write_text("score\\n0.2\\n0.4\\n0.3\\n")
    ...     cfg = OmegaConf.create({**schema.defaults(spec.options), "data": str(Path(tmp, "s.csv"))})
    ...     out = Path(tmp, "out")
    ...     out.mkdir()  # the caller claims it (simstudy.engine.rundir.in_run_dir)
    ...     done = run(spec, cfg, note_files(out))
    ...     print(sorted(p.name for p in out.iterdir() if not p.name.startswith("."))[:3])
    ['CURVE.md', 'config.yaml', 'curves.csv']
    """
    from omegaconf import OmegaConf

    from simstudy.commands._data import log_scores
    from simstudy.datasets import DataError, load_data

    out_dir = run_dir.path
    config = _parse_or_fail(spec.parse, cfg)
    scores = _parse_or_fail(lambda _: load_data(config.data), cfg)
    record = _data_record(spec, cfg, config.data)
    if spec.log_scores:
        log_scores(spec.name, scores, out_dir, minimize=config.data.minimize)
    # every check that needs the scores before the directory is touched: a refusal leaves nothing behind
    prepared = scores if spec.prepare is None else _parse_or_fail(lambda _: spec.prepare(config, scores), cfg)
    check_identity(out_dir, record, overwrite=run_dir.overwrite)
    try:  # a command's first step may refuse, with the estimates, a run beyond the memory or time limit
        result = spec.run(config, prepared, out_dir) if spec.chunks else spec.run(config, prepared)
    except (ConfigError, DataError) as exc:
        fail(str(exc))
    if spec.runner:
        log_report(result.report)
    if spec.write is not None:
        spec.write(result, out_dir)
    write_config(_resolved(cfg), out_dir, record)
    if (
        spec.record
    ):  # run.json: the command, its resolved config (and runner), the environment: report.html's provenance
        runner = {"runner": dataclasses.asdict(result.report)} if spec.runner else {}
        settings = OmegaConf.to_container(cfg, resolve=True)
        io.write_json(
            {"command": spec.name, "config": settings, **runner, "environment": io.environment()}, out_dir / "run.json"
        )
    _report(out_dir)
    lines = tuple(spec.lines(result)) if spec.lines is not None else ()
    return CommandDone(result, config, lines, f"wrote {run_dir.listing()} to {out_dir}" if spec.record else None)


def _report(out_dir: Path) -> None:
    """report.html beside a command's page (AUDIT.md, EXTRAPOLATE.md, CURVE.md, BANDS.md); a failure to write it
    is a warning."""
    from simstudy.commands import report

    report.write(out_dir)


def run_study(cfg: DictConfig, run_dir: RunDir):
    """Run a composed study config (or each cell of its ``design:`` block) in ``run_dir``, claimed already."""
    from simstudy.config import parse

    out_dir = run_dir.path
    if "design" in cfg:
        return _run_design(cfg, run_dir)
    config = _parse_or_fail(parse, cfg)
    if run_dir.overwrite and config.runner.shard is not None:  # each shard would move the others' fresh chunks
        fail(
            "overwrite=true cannot be combined with runner.shard (each shard would move the others' results "
            "aside): give the shards a new run directory (hydra.run.dir=NEW)",
        )
    config = _replicates_as_stored(config, cfg, out_dir)
    record = _identity.study_record(config, settings={})  # the settings: config.yaml's, compared next
    check_identity(out_dir, record, overwrite=run_dir.overwrite)
    check_run_dir(_resolved(cfg), out_dir)
    log.info("study %s -> %s", config.study.name, out_dir)
    with config_written(_resolved(cfg), out_dir, record):
        return run_and_report(config, run_dir)


def _replicates_as_stored(config, cfg: DictConfig, out_dir: Path):
    """``study.save_replicates`` as the run directory was made, when it kept the replicates and this config
    would not: evp_accuracy wrote replicates.parquet by default until issue 26 made it opt-in (a fast default),
    so the same command rerun into a directory made before resumes its chunks (which hold the replicates)
    rather than being refused as another configuration. ``cfg`` is updated too (config.yaml says what ran)."""
    from omegaconf import open_dict

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
    with open_dict(cfg):
        cfg.study.save_replicates = True
    kept = dataclasses.replace(options, save_replicates=True)
    return dataclasses.replace(config, study=dataclasses.replace(config.study, save_replicates=True, options=kept))


def _run_design(cfg: DictConfig, run_dir: RunDir):
    """A config with a ``design:`` block: each cell (one combination of its values) runs as its own study in
    ``out_dir/<key=value,...>/``, exactly as ``simstudy -m`` would run that job (same numbers, same resume), and
    their summaries are stacked into ``out_dir/summary.parquet`` with one column per design key and a faceted
    figure, as a sweep's (:func:`write_sweep`). Returns the stacked result."""
    from simstudy.config import parse
    from simstudy.studies.base import StudyResult
    from simstudy.sweeps import Job, unfinished_message, write_sweep

    out_dir = run_dir.path
    resolved = _parse_or_fail(lambda r: r, cfg)
    keys, cells = _parse_or_fail(design_cells, cfg)
    configs = []
    for name, _, cell in cells:  # every cell validated before any compute
        try:
            configs.append(parse(cell))
        except ConfigError as exc:
            fail(f"design cell {name}: {exc}")
    if run_dir.overwrite:  # the stacked results aside; each cell's own are moved by its identity check below
        moved = _identity.move_aside(out_dir)
        if moved is not None:
            log.warning("overwrite=true: moved the earlier results to %s", moved)
    check_run_dir(resolved, out_dir)
    log.info("design of %d cells (%s) -> %s", len(cells), ", ".join(keys), out_dir)
    reports = []
    with config_written(_resolved(cfg), out_dir):
        for (name, _, cell), config in zip(cells, configs):
            sub = out_dir / name
            try:
                claim = claims.claim_run_dir(sub, shard=shard_label(cfg), warn=log.warning)
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


def _api_args(experiment, overrides) -> list[str]:
    """The command line of :func:`api_compose`/:func:`api_run`: ``experiment=NAME`` first, as typed."""
    args = ([] if experiment is None else [f"experiment={experiment}"]) + list(overrides)
    flags = [a for a in args if a.startswith("-")]
    if flags:
        fail(f"override {flags[0]!r} is a command-line flag, not key=value: the Python API takes overrides only")
    return quote_paths(last_of_each_key(optional_keys(args), log_notice))


#: Hydra's composition is process-global (GlobalHydra, the config store, HydraConfig): one thread at a time.
_HYDRA_LOCK = threading.RLock()


def _api_compose(args: list[str], spec: Command | None = None):
    """Compose as the command does: (task config, CLI run directory) of a study (``spec`` None) or of a data
    command. Under :data:`_HYDRA_LOCK`, so that :func:`simstudy.run` calls in several threads each compose their
    own config (a second thread's composition found GlobalHydra initialised, or the schema store half rewritten)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf, open_dict

    with _HYDRA_LOCK:
        if spec is None:
            register_studies()
        else:
            register_commands(spec)
        # The command's own one-line refusals (unknown key, unparsable value, several values); the config it
        # composed to check them is the one that runs (composed once; the API refuses the flags that skip it).
        cfg = check_overrides(args, "config" if spec is None else spec.name, api=True).config
        try:
            HydraConfig.instance().set_config(cfg)  # ${hydra:job.override_dirname} in the run directory's name
            run_dir = str(OmegaConf.select(cfg, "hydra.run.dir"))
        except Exception as exc:
            fail(one_line(exc))
        with open_dict(cfg):
            del cfg["hydra"]  # the config, as Hydra hands it to a job
    return cfg, run_dir


def api_compose(experiment, overrides):
    """The validated frozen Config of ``simstudy [experiment=NAME] overrides...``, as the command composes it.

    :func:`simstudy.compose` calls this and turns a refusal into its own exception.

    Parameters
    ----------
    experiment : str or None
        A preset of ``configs/experiment``; None: the default config.
    overrides : sequence of str
        ``key=value`` overrides, as on the command line (one value per key).

    Returns
    -------
    simstudy.config.Config
        The validated, frozen config (of a design: of its first cell).

    Raises
    ------
    simstudy.engine.rundir.Refused
        For bad input: the one line the command prints, and its exit status (2).

    Examples
    --------
    >>> config = api_compose("dodge2021_fig1", ["study.reps=3000"])
    >>> config.study.name, config.study.reps
    ('dodge2021_fig1', 3000)
    """
    args, _ = take_overwrite(list(overrides))  # a composed config is the same with overwrite=true or not
    cfg, _ = _api_compose(_api_args(experiment, args))
    return _parse_or_fail(parse_study, cfg)


def api_run(experiment, overrides, out_dir):
    """Run ``simstudy [experiment=NAME] overrides...`` in this process, on the command's path.

    The same checks, config.yaml, run directory claim, resume, files and log lines as the command;
    :func:`simstudy.run` calls this and turns a refusal into its own exception.

    Parameters
    ----------
    experiment : str or None
        A preset of ``configs/experiment``; None: the default config.
    overrides : sequence of str
        ``key=value`` overrides, as on the command line (one value per key).
    out_dir : str or path-like or None
        The run directory; None: the command's own, ``outputs/<study>/<overrides>`` under the working directory.

    Returns
    -------
    tuple
        ``(result, config, run_dir)``: the :class:`~simstudy.studies.base.StudyResult` (for one shard of a
        sharded run its :class:`~simstudy.studies.base.ShardDone`), the frozen Config, and the absolute run
        directory.

    Raises
    ------
    simstudy.engine.rundir.Refused
        For bad input (status 2), or a run that could not finish (status 1): the command's one line.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     result, config, run_dir = api_run(
    ...         "dodge2021_fig1", ["study.reps=100", "budget.B=3", "runner.progress=false"], out
    ...     )
    >>> result.report.tasks, config.study.reps
    (1, 100)
    """
    args, overwrite = take_overwrite(list(overrides))
    cfg, run_dir = _api_compose(_api_args(experiment, args))
    config = _parse_or_fail(parse_study, cfg)
    out_dir, created = _api_out_dir(run_dir if out_dir is None else out_dir)
    result = in_run_dir(run_study, cfg, out_dir, shard=shard_label(cfg), overwrite=overwrite, created=created)
    return result, config, out_dir


def _api_out_dir(out_dir):
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


def _override(key: str, value) -> str:
    """A Python keyword as the command line's ``key=value`` (YAML as typed: ``true``, ``null``, ``[a,b]``, a string
    quoted where Hydra's grammar would read it otherwise), so that it names the same run directory."""

    def text(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return "null"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ",".join(text(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{text(x)}" for k, x in v.items()) + "}"
        v = str(v)
        return f"'{v}'" if GRAMMAR.search(v) and "'" not in v else v

    return f"{key}={text(value)}"


def api_command(name: str, options, overrides, out_dir):
    """Run ``simstudy NAME key=value ...`` (a data command) in this process, on the command's path.

    :func:`simstudy.run` calls this for a command's name; the config is composed as the command composes it (its
    schema's defaults, then ``options`` and ``overrides``), validated by the command's ``parse``, and run by
    :func:`run` in its run directory: the same files, bytes and log lines (the summary lines are logged, not
    printed).

    Parameters
    ----------
    name : str
        A registered data command (``"curve"``, ``"bands"``, ``"audit"``, ``"extrapolate"``, a plug-in's).
    options : Mapping of str to object
        Its keys as Python values (``data="scores.csv"``, ``minimize=True``, ``models=["a", "b"]``).
    overrides : sequence of str
        Further ``key=value`` strings, as on the command line.
    out_dir : str or path-like or None
        The run directory; None: the command's own, ``outputs/NAME/<overrides>`` under the working directory.

    Returns
    -------
    tuple
        ``(done, run_dir)``: the :class:`CommandDone` and the absolute run directory.

    Raises
    ------
    simstudy.engine.rundir.Refused
        For bad input (status 2), or a run that could not finish (status 1): the command's one line.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "s.csv").write_text("score\\n0.2\\n0.4\\n0.3\\n")
    ...     done, run_dir = api_command("curve", {"data": str(Path(tmp, "s.csv"))}, [], Path(tmp, "out"))
    >>> done.result.curves["expected_max"].round(4).tolist()
    [0.3, 0.3444, 0.3667]
    """
    from simstudy import registry

    try:
        spec = registry.command(name)
    except KeyError as exc:
        fail(str(exc.args[0]))
    if spec.plain:
        fail(
            f"simstudy.run runs a study or a data command; {name} takes no options schema: call its library "
            f"function, simstudy.commands.{name}.run"
        )
    args, overwrite = take_overwrite([_override(k, v) for k, v in options.items()] + list(overrides))
    cfg, run_dir = _api_compose(_api_args(None, args), spec)
    out_dir, created = _api_out_dir(run_dir if out_dir is None else out_dir)
    done = in_run_dir(lambda cfg, where: run(spec, cfg, where), cfg, out_dir, overwrite=overwrite, created=created)
    for line in done.lines:
        log.info("%s", line)
    if done.wrote is not None:
        log.info("%s", done.wrote)
    return done, out_dir
