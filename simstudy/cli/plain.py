"""The commands that take no Hydra config (``collect``, ``replay``, ``reproduce``, ``populations``, ``report``,
``plan``, a plug-in's): one generic runner over their specs.

=================  ===============================================================================================
:func:`run`        ``simstudy NAME key=value ...`` for a plain command: its arguments split and checked against the
                   spec's keys, then ``parse``, ``run``, ``lines`` and ``failure`` of the spec
``_key_values``    a plain command's ``key=value`` arguments; anything else refused in one line
``_read_sweep``    a sweep's jobs, for a spec with ``reads_sweep`` (Hydra's ``multirun.yaml``: only here)
=================  ===============================================================================================

Everything a command does is in its module (:mod:`simstudy.commands`); this module only turns ``argv`` into
the mapping its ``parse`` takes and its result into lines and an exit status. What only the command line may do
is a generic step a spec asks for by a flag: logging on the terminal (``logs``), a study config composed with
Hydra (``composes_study``), a sweep's jobs read (``reads_sweep``). :func:`simstudy.cli.main` turns what they
raise into one line and an exit status.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from simstudy.engine.rundir import EXIT_FAILED, fail, load_stored_yaml, read_stored_config
from simstudy.overrides import design_cells, one_line, print_notice, unquote

log = logging.getLogger("simstudy")


def _key_values(argv: list[str], command: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """``key=value`` arguments of a command that takes no Hydra config; anything else fails in one line. A value
    is taken quoted or not (``run_dir='outputs/curve/data=x.csv,low=0'``), as the Hydra commands take a path."""
    opts: dict[str, str] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        value = unquote(value)
        if not sep or key not in (*required, *optional):
            fail(
                f"simstudy {command}: unexpected argument {arg!r} (usage: simstudy {command} "
                + " ".join(f"{k}=..." for k in required)
                + "".join(f" [{k}=...]" for k in optional)
                + ")",
            )
        if key in opts:
            print_notice(f"{key} given twice ({key}={opts[key]} {arg}): the last is used, {arg}")
        opts[key] = value
    for key in required:
        if not opts.get(key):
            fail(f"simstudy {command}: {key} is required: set it with {key}=...")
    return opts


def _setup_logging() -> None:
    """The same stdout logging as the Hydra commands (configs/hydra/job_logging), for the plain commands."""
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )


def _arguments(spec, argv: list[str]) -> dict:
    """The mapping ``spec.parse`` takes: the action (first word), the flags (``True``) and the checked keys."""
    if spec.composes_study:
        flags = [a for a in argv if a.startswith("-")]
        if flags:
            fail(f"simstudy {spec.name}: unexpected argument {flags[0]!r} (usage: {spec.usage})")
        return {"argv": list(argv)}
    flags = [k for k in spec.keys if k.startswith("-")]
    given = {k.lstrip("-"): True for k in flags if k in argv}
    argv = [a for a in argv if a not in flags]
    if not spec.actions:
        optional = tuple(k for k in spec.keys if k not in spec.required and not k.startswith("-"))
        return {**given, **_key_values(argv, spec.name, spec.required, optional)}
    actions = list(spec.actions)
    word = argv[0] if argv and "=" not in argv[0] and not argv[0].startswith("-") else None
    if word is not None and word not in actions:
        import difflib

        close = difflib.get_close_matches(word, actions, n=1)
        fail(
            f"simstudy {spec.name}: unknown action {word!r}: {f'did you mean {close[0]}? ' if close else ''}the "
            f"actions are {actions[0]} (the default) and {', '.join(actions[1:])}",
        )
    action = word or actions[0]
    required, optional = spec.actions[action]
    label = spec.name if action == actions[0] else f"{spec.name} {action}"
    return {"action": action, **given, **_key_values(argv[1:] if word else argv, label, required, optional)}


def _read_sweep(sweep_dir: Path) -> tuple[list, list]:
    """The swept keys and jobs of the sweep (or design) in ``sweep_dir``; one line if it has none."""
    from simstudy.cli.sweeps import NoPlan, sweep_plan

    stored = sweep_dir / "multirun.yaml"
    design = sweep_dir / "config.yaml"
    if not stored.is_file() and not (design.is_file() and "design" in read_stored_config(design)):
        fail(
            f"sweep_dir={sweep_dir}: no multirun.yaml there (not the directory of a sweep, simstudy -m ..., nor "
            f"of a design)",
        )
    try:
        if stored.is_file():
            from omegaconf import OmegaConf

            # as written (never resolved); a list (not a mapping) fails inside: unreadable
            swept, jobs = sweep_plan(OmegaConf.create(load_stored_yaml(stored)))
        else:
            from simstudy.sweeps import Job

            stored = design
            swept, cells = design_cells(read_stored_config(design))
            jobs = [Job(name, values) for name, values, _ in cells]
    except NoPlan as exc:
        fail(f"{stored}: cannot list the sweep's jobs: {exc}")
    except Exception as exc:
        fail(f"{stored}: unreadable ({type(exc).__name__}: {one_line(exc)}); rerun the sweep")
    if not swept:
        fail(
            f"{stored}: no swept key names its jobs' directories (only runner settings are swept): collect the "
            f"run with simstudy collect run_dir=DIR",
        )
    return swept, jobs


def run(spec, argv: list[str]) -> None:
    """``simstudy NAME key=value ...`` for a plain command (a :class:`~simstudy.registry.Command` without options).

    Its arguments are checked against the spec's ``keys``, ``required`` and ``actions`` (one line naming the
    argument otherwise), handed to its ``parse``, run by its ``run``; its ``lines`` are printed and its
    ``failure``, if any, is one line and exit status 1. A :class:`~simstudy.score_files.DataError` (a missing or
    unreadable data file) is one line and status 2.
    """
    from simstudy.score_files import DataError

    if spec.logs == "first":
        _setup_logging()
    try:
        mapping = _arguments(spec, argv)
        config = spec.parse(mapping) if spec.parse is not None else mapping
        if spec.logs == "run":
            _setup_logging()
        if spec.composes_study:
            from simstudy.launch import api_compose

            experiment, overrides = config
            result = spec.run(api_compose(experiment, overrides))
        elif spec.reads_sweep and getattr(config, spec.reads_sweep, None) is not None:
            result = spec.run(config, *_read_sweep(Path(getattr(config, spec.reads_sweep))))
        else:
            result = spec.run(config)
    except DataError as exc:
        fail(str(exc))
    for line in spec.lines(result) if spec.lines is not None else ():
        print(line)
    message = spec.failure(result) if spec.failure is not None else None
    if message:
        fail(message, status=EXIT_FAILED)
