"""The commands that take no Hydra config (``collect``, ``replay``, ``reproduce``, ``populations``, ``report``,
``plan``, a plug-in's): one generic runner over their specs.

=================  ===============================================================================================
:func:`run`        ``simstudy NAME key=value ...`` for a plain command: its arguments split and checked against the
                   spec's keys (:func:`simstudy.cli.args.plain_arguments`), then :func:`simstudy.launch.run_plain`,
                   its lines printed and its failure, if any, one line and exit status 1
``print_notice``   a notice of the command line (a key given twice): one line on stdout
=================  ===============================================================================================

Everything a command does is in its module (:mod:`simstudy.commands`) and runs through
:func:`simstudy.launch.run_plain`, as :func:`simstudy.run` runs it; this module only turns ``argv`` into the mapping
its ``parse`` takes and its result into lines and an exit status. What only the command line may do is a generic
step a spec asks for by a flag: logging on the terminal (``logs``); a study config composed with Hydra
(``composes_study``) and a sweep's jobs read (``reads_sweep``) come from :mod:`simstudy.cli.compose`.
:func:`simstudy.cli.main` turns what they raise into one line and an exit status.
"""

from __future__ import annotations

import logging
import sys

from simstudy.cli import compose
from simstudy.cli.args import plain_arguments
from simstudy.engine.rundir import EXIT_FAILED, fail

log = logging.getLogger("simstudy")


def print_notice(message: str) -> None:
    """One line that is not an error (the command goes on): on stdout, with the run's log lines (stderr holds
    errors only: a refusal stays one line)."""
    print(f"simstudy: note: {message}", flush=True)


def _setup_logging() -> None:
    """The same stdout logging as the Hydra commands (configs/hydra/job_logging), for the plain commands."""
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )


def run(spec, argv: list[str]) -> None:
    """``simstudy NAME key=value ...`` for a plain command (a :class:`~simstudy.registry.Command` without options).

    Its arguments are checked against the spec's ``keys``, ``required`` and ``actions`` (one line naming the
    argument otherwise), handed to its ``parse``, run by :func:`simstudy.launch.run_plain`; its ``lines`` are
    printed and its ``failure``, if any, is one line and exit status 1. A
    :class:`~simstudy.score_files.DataError` (a missing or unreadable data file) is one line and status 2.
    """
    from simstudy import launch
    from simstudy.score_files import DataError

    if spec.logs == "first":
        _setup_logging()
    try:
        mapping = plain_arguments(spec, argv, print_notice)
        config = spec.parse(mapping) if spec.parse is not None else mapping
    except DataError as exc:
        fail(str(exc))
    if spec.logs == "run":
        _setup_logging()
    done = launch.run_plain(
        spec, config, compose_study=lambda e, o: compose.study(e, o).config, read_sweep=compose.read_sweep
    )
    for line in done.lines:
        print(line)
    if done.failure:
        fail(done.failure, status=EXIT_FAILED)
