"""``simstudy reproduce``: rerun the papers' catalogued results and write ``REPRODUCTION.md`` with their verdicts.

:func:`run` runs every catalogued command (and its hypotheses') each in its own process, several at once, resuming
what is done, then judges their outputs against the papers' numbers and writes the report. The catalogue and the
verdicts are :mod:`simstudy.catalogue`'s, the report :mod:`simstudy.commands.reproduction_page`'s.

===================  ================================================================================================
:func:`run`          run the catalogue (or some of its entries) and write the report
:class:`Reproduced`  what :func:`run` returns: the report's path, its sections and how many runs failed
===================  ================================================================================================
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from simstudy.catalogue import (
    CatalogueError,
    hypothesis_dir,
    load_catalogue,
    read_hypothesis,
    read_section,
    section_seconds,
    verdict,
)
from simstudy.commands.reproduction_page import (
    OutDirError,
    check_out_dir,
    kept_section,
    read_report,
    record_full_run,
    write_report,
)
from simstudy.engine.rundir import check_dir_override
from simstudy.registry import Command, command_names
from simstudy.schema import ConfigError

__all__ = [
    "run",
    "execute",
    "failure",
    "Reproduced",
]


log = logging.getLogger("simstudy")


@dataclass(frozen=True)
class Reproduced:
    """What :func:`run` did: the report written, its sections, and how many runs failed.

    Parameters
    ----------
    path : pathlib.Path
        The ``REPRODUCTION.md`` written.
    sections : tuple of Section
        One per entry reported, in catalogue order.
    failed : int
        The runs that failed (the entries' own, and the hypotheses' of the entries asked for); the command exits
        with status 1 when it is not 0.

    Examples
    --------
    >>> from pathlib import Path
    >>> Reproduced(Path("REPRODUCTION.md"), (), 0).failed
    0
    """

    path: Path
    sections: tuple
    failed: int


def run(*, quick: bool = False, only: str | None = None, n_jobs: int | str = -1, out=None) -> Reproduced:
    """Run the catalogued paper results, each in its own process, and write ``REPRODUCTION.md`` with their verdicts.

    Parameters
    ----------
    quick : bool, default False
        Smoke scale: each entry's quick overrides, runs under ``outputs/reproduce-quick``, the report there too.
    only : str, optional
        Comma-separated entry ids to run; the others are reported from their earlier runs where those exist.
    n_jobs : int or str, default -1
        Runs at once (one core each); -1: every core.
    out : str or path-like, optional
        The report's directory; default the working directory (``outputs/reproduce-quick`` with ``quick``).

    Returns
    -------
    Reproduced
        The report's path, its sections, and how many runs failed.

    Raises
    ------
    ConfigError
        For an unknown entry, a bad ``n_jobs``, an unreadable catalogue, or a report directory holding files
        simstudy did not write (nothing is run then).

    Examples
    --------
    >>> run(only="no_such_entry")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: only=no_such_entry: no entries no_such_entry (entries: ...)
    """
    import collections
    import subprocess
    import time
    from concurrent.futures import ThreadPoolExecutor

    try:
        entries = load_catalogue()
    except (CatalogueError, OSError) as exc:
        raise ConfigError(str(exc)) from None
    wanted = only.split(",") if only is not None else [e.id for e in entries]
    unknown = sorted(set(wanted) - {e.id for e in entries})
    if unknown:
        raise ConfigError(f"only={only}: no entries {', '.join(unknown)} (entries: {', '.join(e.id for e in entries)})")
    n_jobs = str(n_jobs)
    if not n_jobs.lstrip("-").isdigit() or int(n_jobs) == 0 or int(n_jobs) < -1:
        raise ConfigError(f"n_jobs must be a positive number of workers or -1 (all cores), got {n_jobs}")
    runs = Path("outputs") / ("reproduce-quick" if quick else "reproduce")
    out = Path(out if out is not None else runs if quick else ".")
    check_dir_override("out", str(out))  # a file, or a path through one: refused before any run, not after
    # Before any run: refuse a report directory holding files simstudy did not write (a user's own report
    # or figures), and read the sections that this run will not regenerate, to keep them.
    figures = [
        f"reproduction/{e.id}.png"
        for e in entries
        if not e.unavailable and (e.id in wanted or (runs / e.id / e.table).is_file())
    ]
    try:
        check_out_dir(out, ["REPRODUCTION.md", *figures], quick=quick)
        earlier = read_report(out)
    except (OutDirError, OSError) as exc:
        raise ConfigError(str(exc)) from None
    # Every run is a process of its own; `workers` of them run at once, one core each (a run's numbers do not
    # depend on its runner.n_jobs), so the many short runs' start-up and single-threaded work overlap.
    workers = (os.cpu_count() or 1) if int(n_jobs) == -1 else int(n_jobs)

    def shown(command_args, quick_args) -> tuple[list[str], str]:
        """The arguments of one catalogued run, and the command as the report shows it (no runner keys)."""
        runner = (
            []
            if command_args[:1] and command_args[0] in command_names()  # a command (not a study): no runner keys
            else ["runner.n_jobs=1", "runner.progress=false"]
        )
        args = [*command_args, *(quick_args if quick else ()), *runner]
        return args, "simstudy " + " ".join(a for a in args if not a.startswith("runner."))

    def run_one(name: str, args: list[str], command: str, run_dir: Path) -> tuple[float, str]:
        """Run one catalogued command in its own process: (seconds, error)."""
        log.info("reproduce %s: %s", name, command)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "simstudy.cli", *args, f"hydra.run.dir={run_dir}"], capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
        error = "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["no message"])[-1]
        if error:
            log.warning("%s failed: %s", name, error)
        return seconds, error

    # The runs to make, in catalogue order: each entry's own (hypothesis None), then its hypotheses'.
    Run = collections.namedtuple("Run", "entry hypothesis args command dir")
    plan = []
    for entry in entries:
        if entry.unavailable:
            continue
        plan.append(Run(entry, None, *shown(entry.command, entry.quick), runs / entry.id))
        plan += [
            Run(entry, h, *shown(h.command, entry.quick_for(h)), hypothesis_dir(runs, entry, h))
            for h in entry.hypotheses
        ]
    asked = [r for r in plan if r.entry.id in wanted]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {
            r.dir: pool.submit(
                run_one,
                r.entry.id + (f", hypothesis {r.hypothesis.id}" if r.hypothesis else ""),
                r.args,
                r.command,
                r.dir,
            )
            for r in asked
        }
        done = {run_dir: future.result() for run_dir, future in futures.items()}  # (seconds, error) by directory
    elapsed = time.perf_counter() - started
    full_run = record_full_run(runs, [r.dir for r in plan], elapsed, workers, full=len(asked) == len(plan))

    sections = []
    for entry in entries:
        run_dir = runs / entry.id
        if not entry.unavailable and entry.id not in wanted and not (run_dir / entry.table).is_file():
            if entry.id in earlier:  # not asked for, its run not here: the earlier report's section stays
                sections.append(kept_section(entry, earlier[entry.id]))
            continue
        if entry.unavailable:
            sections.append(read_section(entry, run_dir, "", None))
            continue
        own, *hypotheses = [r for r in plan if r.entry is entry]
        seconds, error = done.get(own.dir, (None, ""))
        tried = []
        for r in hypotheses:
            h_seconds, h_error = done.get(r.dir, (None, ""))
            if h_seconds is None and not (r.dir / entry.table).is_file():
                h_error = "not run yet (run it with only=" + entry.id + ")"
            tried.append(read_hypothesis(entry, r.hypothesis, r.dir, r.command, h_seconds, h_error))
        sections.append(read_section(entry, run_dir, own.command, seconds, error, tuple(tried)))
        log.info("%s: %s", entry.id, verdict(sections[-1]) + (f" ({error})" if error else ""))
    try:
        path = write_report(
            sections,
            out,
            quick=quick,
            total_seconds=sum(section_seconds(s) for s in sections),
            cores=os.cpu_count() or 1,
            full_run=full_run,
        )
    except OutDirError as exc:  # a file appeared in the report's place while the runs ran
        raise ConfigError(str(exc)) from None
    log.info("wrote %s", path)
    from simstudy.report_html import build_or_warn
    from simstudy.sweeps import headline

    build_or_warn(
        path.parent, headline=headline, pages=(path.name,)
    )  # report.html beside it: the page and its figures, offline
    failed = sum(bool(s.error) for s in sections) + sum(
        bool(h.error) and s.entry.id in wanted for s in sections for h in s.hypotheses
    )
    return Reproduced(path, tuple(sections), failed)


def execute(keys) -> Reproduced:
    """``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: :func:`run` on the command line's keys.

    Parameters
    ----------
    keys : Mapping
        ``quick`` (True with ``--quick``), ``only``, ``n_jobs`` and ``out``, all optional.

    Returns
    -------
    Reproduced
        What :func:`run` returns.

    Examples
    --------
    >>> execute({"only": "no_such_entry"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: only=no_such_entry: no entries no_such_entry (entries: ...)
    """
    return run(
        quick=bool(keys.get("quick")), only=keys.get("only"), n_jobs=keys.get("n_jobs", "-1"), out=keys.get("out")
    )


def failure(done: Reproduced) -> str | None:
    """The runs that failed, in one line naming the report (the command exits 1); None if none did.

    Parameters
    ----------
    done : Reproduced
        From :func:`run`.

    Returns
    -------
    str or None
        The line.

    Examples
    --------
    >>> failure(Reproduced(Path("REPRODUCTION.md"), (), 2))
    '2 run(s) failed; see REPRODUCTION.md'
    """
    return f"{done.failed} run(s) failed; see {done.path}" if done.failed else None


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "reproduce",
    page="REPRODUCTION.md",
    run=execute,
    failure=failure,
    logs="first",
    usage="simstudy reproduce [--quick] [only=ID,ID,...] [n_jobs=N] [out=DIR]",
    examples=(
        "simstudy reproduce --quick                 # smoke scale, every entry and hypothesis",
        "simstudy reproduce only=fiesta_table2 n_jobs=2",
    ),
    writes="one run per entry under outputs/reproduce/ and REPRODUCTION.md in out= (default: here); with --quick, "
    "the runs and REPRODUCTION.md under outputs/reproduce-quick/ (out= still chooses the report's directory)",
    keys={
        "--quick": "smoke scale: every entry and hypothesis at fewer replicates, written to outputs/reproduce-quick/",
        "only": "comma-separated entry ids to (re)run; the others are read back from earlier runs",
        "n_jobs": "runs at a time, each a process on one core (-1: every core); a run's numbers do not depend on it",
        "out": "the directory REPRODUCTION.md and reproduction/*.png are written to (default: here; --quick: "
        "outputs/reproduce-quick/); an existing file there is refused",
    },
)
