"""The ``simstudy`` command's dispatch: which command runs, and the one place where exceptions become lines.

:func:`main` reads ``sys.argv``: ``--help`` and ``--version`` are answered without Hydra; a registered command
(:func:`simstudy.registry.command`) runs by its spec: a plain one (``collect``, ``replay``, ``reproduce`` ...) from
:mod:`simstudy.cli.plain`, a data one (``curve``, ``bands``, ``audit``, ``extrapolate``) as a Hydra job over
:func:`simstudy.launch.run`; a study runs as a Hydra app. A refusal met anywhere below
(:class:`~simstudy.engine.rundir.Refused`) is printed here as ``simstudy: error: ...`` and exits with its status
(2 bad input, 1 could not finish); Ctrl-C exits 130, and an OS error of the environment (a full disk) is one line.

========================  =========================================================================================
:func:`main`              the ``simstudy`` command
``_check_flags``          a flag Hydra does not know: one line saying how keys are given
``_run_job``              a composed command line run as Hydra's run mode does, without composing it again
``_job``                  a Hydra task: a run in its claimed run directory, as the command line asked
``_command_run``          a data command's run: :func:`simstudy.launch.run`, its lines printed
========================  =========================================================================================
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path

from simstudy.cli import plain
from simstudy.cli.args import last_of_each_key, optional_keys, quote_paths, take_overwrite
from simstudy.cli.compose import (
    check_overrides,
    config_dir,
    register_commands,
    register_studies,
    to_plain,
)
from simstudy.cli.usage import help_asked, preset_help, version
from simstudy.engine import rundir as _rundir
from simstudy.engine.rundir import (
    ENVIRONMENT_ERRNOS,
    EXIT_BAD_INPUT,
    DirsBefore,
    Refused,
    fail,
    os_error,
    os_status,
)
from simstudy.schema import ConfigError

__all__ = ["main"]

log = logging.getLogger("simstudy")


def _job(run, overwrite: bool, created: DirsBefore | None):
    """The Hydra task function of a command line: ``run(resolved, run_dir)`` in the job's run directory (Hydra's
    ``runtime.output_dir``, claimed by :func:`simstudy.engine.rundir.in_run_dir`) with what the command line asked:
    ``overwrite=true``, and the directories Hydra made for it (``created``, removed if left empty; every job of a
    sweep shares them). ``run`` is given the config as plain resolved values
    (:func:`~simstudy.cli.compose.to_plain`), resolved inside the claimed directory: a value that does not resolve
    is refused there, and the directories made are removed. Defined here, so that Hydra names the job after this
    module, as it always did."""

    def job(cfg):
        from hydra.core.hydra_config import HydraConfig

        from simstudy.launch import shard_label

        out_dir = Path(HydraConfig.get().runtime.output_dir)
        return _rundir.in_run_dir(
            lambda cfg, run_dir: run(to_plain(cfg), run_dir),
            cfg,
            out_dir,
            shard=shard_label(cfg),
            overwrite=overwrite,
            created=created,
        )

    return job


class _Callbacks:
    """The config's ``hydra.callbacks``, made with Hydra's public :func:`hydra.utils.instantiate` and called as
    Hydra's run mode calls them (the ends in reverse order), for :func:`_run_job`."""

    def __init__(self, cfg) -> None:
        from hydra.utils import instantiate

        self._callbacks = [instantiate(c) for c in (cfg.hydra.get("callbacks") or {}).values()]

    def _call(self, hook: str, reverse: bool = False, **kwargs) -> None:
        for callback in reversed(self._callbacks) if reverse else self._callbacks:
            getattr(callback, hook)(**kwargs)

    def on_run_start(self, **kwargs) -> None:
        self._call("on_run_start", **kwargs)

    def on_job_start(self, **kwargs) -> None:
        self._call("on_job_start", **kwargs)

    def on_job_end(self, **kwargs) -> None:
        self._call("on_job_end", reverse=True, **kwargs)

    def on_run_end(self, **kwargs) -> None:
        self._call("on_run_end", reverse=True, **kwargs)


def _run_job(cfg, task, config_name: str) -> None:
    """Run one composed command line as Hydra's run mode does (``hydra.main`` without flags or ``-m``): its run
    directory, its logging, its callbacks, then ``task`` on the config without Hydra's keys. The config is the
    one :func:`~simstudy.cli.compose.check_overrides` composed to check the overrides, so a run composes it once
    (Hydra's app would compose it again). An exception of the task propagates as under Hydra's app."""
    from hydra.core.utils import configure_log, run_job, setup_globals
    from hydra.types import HydraContext, RunMode
    from omegaconf import open_dict, read_write

    setup_globals()
    configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    with read_write(cfg.hydra), open_dict(cfg.hydra):
        cfg.hydra.mode = RunMode.RUN
    callbacks = _Callbacks(cfg)
    callbacks.on_run_start(config=cfg, config_name=config_name)
    done = run_job(
        task_function=task,
        config=cfg,
        job_dir_key="hydra.run.dir",
        job_subdir_key=None,
        hydra_context=HydraContext(config_loader=None, callbacks=callbacks),  # type: ignore[arg-type]  # a run uses none
    )
    callbacks.on_run_end(config=cfg, config_name=config_name, job_return=done)
    _ = done.return_value  # the task's exception, raised again (as Hydra's app does)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else message


def _hydra_app(task, config_name: str, args: list[str]) -> None:
    """Run ``task`` as a Hydra app on ``args`` (Hydra imported only now: ``simstudy --help`` never needs it): a
    multirun, or a command line with Hydra's flags (``--cfg`` ...). ``hydra.main`` takes its arguments from
    ``sys.argv`` only (its app parses them with no arguments given; its one parameter, ``cfg_passthrough``, skips
    Hydra's sweeps and flags altogether, and the function that takes arguments is in Hydra's private
    ``_internal``), so they are put there for the app and the caller's put back after."""
    import hydra

    given = sys.argv
    sys.argv = [given[0] if given else "simstudy", *args]
    try:
        hydra.main(version_base="1.3", config_path=config_dir(), config_name=config_name)(task)()
    finally:
        sys.argv = given


def _run_study(resolved: dict, run_dir) -> None:
    """``simstudy [experiment=NAME] ...``'s run: :func:`simstudy.launch.run_study` (imported once a run starts)."""
    from simstudy.launch import run_study

    run_study(resolved, run_dir)


def _command_run(spec):
    """``simstudy NAME``'s run, ``run(resolved, run_dir)``: :func:`simstudy.launch.run` of the command's spec in
    its run directory, its summary lines printed, then the files written said."""

    def run(resolved: dict, run_dir) -> None:
        from simstudy import launch

        done = launch.run(spec, resolved, run_dir)
        for line in done.lines:
            print(line)
        if done.wrote is not None:
            log.info("%s", done.wrote)

    return run


def _command(name: str):
    """The registered command ``name`` (a plug-in's too), or None: a study's command line (``key=value`` ...)
    names none."""
    from simstudy import extend, registry
    from simstudy.plugins import PluginError

    if "=" in name or name.startswith("-"):
        return None
    if extend.commands.is_builtin(name):  # no plug-in loaded for a built-in command (as before plug-in commands)
        return registry.command(name)
    try:  # a plug-in that fails to load: one line, as a study's command line says it
        return registry.command(name) if name in registry.command_names() else None
    except PluginError as exc:
        fail(str(exc))


def main() -> None:
    """The ``simstudy`` command: read ``sys.argv``, run what it asks for, and exit with its status.

    ``simstudy [experiment=NAME] [key=value ...]`` runs a study; ``simstudy COMMAND ...`` runs one of the
    commands (``curve``, ``bands``, ``audit``, ``extrapolate``, ``collect``, ``replay``, ``reproduce``);
    ``simstudy --help`` lists them all and ``simstudy COMMAND --help`` explains each key. From Python,
    :func:`simstudy.run` and :func:`simstudy.compose` are the same code path without the exit.

    Returns
    -------
    None
        Returns after a ``--help`` page; otherwise it exits: status 0 when the run finished, 1 when it could
        not finish (failed or missing chunks, a full disk), 2 for bad input (one line naming the key, or the
        file, row and value, and nothing written), 130 on Ctrl-C (finished chunks are kept: the same
        command resumes).

    Examples
    --------
    >>> import sys
    >>> from unittest import mock
    >>> with mock.patch.object(sys, "argv", ["simstudy", "--help"]):
    ...     main()  # doctest: +ELLIPSIS
    simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.
    ...
    >>> with mock.patch.object(sys, "argv", ["simstudy", "curve", "data=no_such_file.csv"]):
    ...     main()
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        # A file-size limit (ulimit -f): the write raises EFBIG, said in one line, instead of the signal
        # killing the process mid-write.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        _main(sys.argv[1:])
    except Refused as exc:  # the one place a refusal met anywhere below becomes its line and exit status
        print(f"simstudy: error: {exc.message}", file=sys.stderr)
        sys.exit(exc.status)
    except ConfigError as exc:  # a command's bad input (simstudy.commands raise it, never exit)
        print(f"simstudy: error: {_first_line(str(exc))}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        # Finished chunks are stored atomically and a partial one is discarded: the same command resumes.
        print("simstudy: interrupted; rerun the same command to resume", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (``simstudy --help | head``): no traceback. Point stdout at devnull so that the
        # interpreter's final flush does not raise again (the recipe of Python's signal module docs).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


def _log_data_warnings() -> None:
    """Say a :class:`~simstudy.datasets.DataWarning` (failed runs dropped or scored, as the user asked) once, as a
    log line, not as Python's two-line warning with a source line of simstudy's."""
    import warnings

    from simstudy.datasets import DataWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, DataWarning):
            log.warning("%s", message)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("once", category=DataWarning)  # a file is read more than once (checks, build)


#: The flags simstudy passes to Hydra (each also in its ``--flag=value`` form); any other is refused in one line.
_HYDRA_FLAGS = frozenset(
    "-h --help --hydra-help -c --cfg --resolve -p --package -r --run -m --multirun -sc --shell-completion -cp "
    "--config-path -cn --config-name -cd --config-dir --experimental-rerun -i --info".split()
)


def _check_flags(argv: list[str], command: str | None) -> None:
    """A flag Hydra does not know (``simstudy curve --data x``) is most often a key typed as an option: one line
    saying how keys are given, instead of Hydra's usage of its own flags."""
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if not arg.startswith("-") or flag in _HYDRA_FLAGS:
            continue
        after = argv[i + 1] if i + 1 < len(argv) else ""
        if not eq and after and "=" not in after and not after.startswith("-"):
            value = after
        name = flag.lstrip("-") or "KEY"
        where = f"simstudy {command} --help" if command else "simstudy --help"
        fail(
            f"{arg!r} is not an option of simstudy{' ' + command if command else ''}: keys are given as key=value, "
            f"e.g. {name}={value or '...'} ({where} lists them)",
        )


def _main(argv: list[str]) -> None:
    text = version(argv) or help_asked(argv)
    if text is not None:
        print(text)
        sys.stdout.flush()  # inside main's BrokenPipeError guard
        return
    _log_data_warnings()  # after the help: it imports the score files' module (pandas), which no help page needs
    from simstudy.chart_style import check_backend

    check_backend()  # a bad MPLBACKEND: one line before any run, not matplotlib's traceback after it
    # Let exceptions out of Hydra's wrapper (it would print them in several lines and exit 1) so that an
    # environmental one -- an unwritable or full output directory, met while Hydra creates the run
    # directory -- is reported in one line; any other keeps its full traceback.
    os.environ.setdefault("HYDRA_FULL_ERROR", "1")
    sweep = False  # a multirun (-m): its refusals name hydra.sweep.dir, where a sweep's job directories are made
    try:
        try:
            spec = _command(argv[0]) if argv else None
            if spec is not None and spec.plain:  # their paths too (run_dir= of 300 characters): one line
                plain.run(spec, argv[1:])
                return
            name, argv = ("config", argv) if spec is None else (spec.name, argv[1:])
            _check_flags(argv, None if spec is None else spec.name)
            args, overwrite = take_overwrite(argv)
            args = quote_paths(last_of_each_key(optional_keys(args) if spec is None else args, plain.print_notice))
            if spec is None:
                register_studies()
            else:
                register_commands(spec)
            sweep = any(arg in ("-m", "--multirun") for arg in args)
            checked = check_overrides(args, name, overwrite=overwrite)
            job = _job(_run_study if spec is None else _command_run(spec), overwrite, checked.created)
            if checked.config is not None:
                _run_job(checked.config, job, name)
            elif spec is None and any(a in ("-h", "--help") for a in args):  # a preset's help: groups and config
                print(preset_help([a for a in args if not a.startswith("-")], resolve="--resolve" in args))
            else:
                _hydra_app(job, name, args)
        except OSError as exc:
            if exc.errno not in ENVIRONMENT_ERRNOS:
                raise
            fail(os_error(exc), status=os_status(exc))
    except Refused as exc:
        if not sweep or "hydra.run.dir=NEW" not in exc.message:
            raise
        # "a new directory (hydra.run.dir=NEW)": under -m, the sweep's directory is the one to change
        raise Refused(exc.message.replace("hydra.run.dir=NEW", "hydra.sweep.dir=NEW"), exc.status) from None


if __name__ == "__main__":
    main()
