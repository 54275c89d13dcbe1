"""The commands that take no Hydra config: ``collect``, ``replay`` and ``reproduce``, from ``key=value`` arguments.

=================  ===============================================================================================
``_collect``       ``simstudy collect run_dir=DIR``: a sharded run's summary; ``sweep_dir=DIR``: a sweep's
``_replay``        ``simstudy replay run_dir=DIR chunk=CELL/K``: rerun one chunk here, with its full traceback
``_reproduce``     ``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: the papers' results
``_key_values``    a plain command's ``key=value`` arguments; anything else refused in one line
``_load_run``      the validated config of an existing run directory, trusting only the plug-ins named
=================  ===============================================================================================
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from pathlib import Path

from simstudy import io
from simstudy.engine.rundir import (
    _ENVIRONMENT_ERRNOS,
    EXIT_FAILED,
    _check_dir_override,
    _fail,
    _load_stored_yaml,
    _note_files,
    _os_error,
    _os_status,
    _read_stored_config,
)
from simstudy.overrides import _design_cells, _notice, _one_line
from simstudy.schema import ConfigError

log = logging.getLogger("simstudy")

#: The commands that read a score file (``simstudy curve ...``): they take no runner keys.
DATA_COMMANDS = ("curve", "bands", "audit", "extrapolate")


def _key_values(argv: list[str], command: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """``key=value`` arguments of a command that takes no Hydra config; anything else fails in one line."""
    opts: dict[str, str] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in (*required, *optional):
            _fail(
                f"simstudy {command}: unexpected argument {arg!r} (usage: simstudy {command} "
                + " ".join(f"{k}=..." for k in required)
                + "".join(f" [{k}=...]" for k in optional)
                + ")",
                None,
            )
        if key in opts:
            _notice(f"{key} given twice ({key}={opts[key]} {arg}): the last is used, {arg}")
        opts[key] = value
    for key in required:
        if not opts.get(key):
            _fail(f"simstudy {command}: {key} is required: set it with {key}=...", None)
    return opts


def _trusted(opts: dict) -> tuple[str, ...]:
    """The import paths of ``plugins=a.f,b.g``: the stored config's plug-ins the user vouches for."""
    return tuple(p.strip() for p in opts.get("plugins", "").split(",") if p.strip())


def _load_run(run_dir: Path, trusted: tuple[str, ...] = (), **runner):
    """The validated config of an existing run directory, with ``runner`` fields replaced. The directory may
    come from anyone: its config imports only the plug-ins in ``trusted`` (``plugins=...`` on the command line)
    or registered ones; any other ``_target_`` is refused by name before its module is imported."""
    from simstudy.config import parse
    from simstudy.plugins import _trusting_only

    stored = run_dir / "config.yaml"
    if not stored.is_file():
        _fail(f"run_dir={run_dir}: no config.yaml there (not a simstudy run directory)", None)
    old = _read_stored_config(stored)
    if "design" in old:
        _fail(
            f"run_dir={run_dir} holds a design (design: in its config.yaml): use one of its cells' directories, "
            f"run_dir={run_dir}/CELL, and simstudy collect sweep_dir={run_dir} for the stacked summary",
            None,
        )
    try:
        with _trusting_only(trusted):
            config = parse(old)
    except ConfigError as exc:
        _fail(f"{stored}: {exc}", None)
    return dataclasses.replace(config, runner=dataclasses.replace(config.runner, shard=None, **runner))


def _setup_logging() -> None:
    """The same stdout logging as the Hydra commands (configs/hydra/job_logging), for the plain commands."""
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )


def _collect(argv: list[str]) -> None:
    """``simstudy collect run_dir=DIR``: the summary and figures of a sharded run, from its chunks only;
    ``simstudy collect sweep_dir=DIR``: a sweep's stacked summary and faceted figure, from its jobs' summaries."""
    opts = _key_values(argv, "collect", (), ("run_dir", "sweep_dir", "plugins"))
    if "sweep_dir" in opts and "run_dir" not in opts:
        _collect_sweep(Path(opts["sweep_dir"]))
        return
    if not opts.get("run_dir") or opts.get("sweep_dir"):
        _fail(
            "simstudy collect: run_dir is required: set it with run_dir=... (or sweep_dir=... for a sweep, not both)",
            None,
        )
    run_dir = Path(opts["run_dir"])
    config = _load_run(run_dir, _trusted(opts), collect=True, n_jobs=1, backend="sequential", progress=False)
    _setup_logging()
    try:  # collect writes the summary: it holds the directory like a run (never beside one still running)
        claim = io.claim_run_dir(run_dir, warn=log.warning)
    except (io.NotARunDir, io.RunDirBusy) as exc:
        _fail(str(exc), None)
    _note_files(run_dir)
    log.info("collecting %s", run_dir)
    from simstudy.launch import _run_and_report

    try:
        _run_and_report(config, run_dir)
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), None, _os_status(exc))
    finally:
        claim.release()


def _collect_sweep(sweep_dir: Path) -> None:
    """``simstudy collect sweep_dir=DIR``: rebuild the sweep's frame and figure from its finished jobs; exit 1,
    in one line naming them, if some did not finish."""
    from simstudy.cli.sweeps import _NoPlan, _sweep_plan
    from simstudy.sweeps import _unfinished_message, _write_sweep

    stored = sweep_dir / "multirun.yaml"
    design = sweep_dir / "config.yaml"
    if not stored.is_file() and not (design.is_file() and "design" in _read_stored_config(design)):
        _fail(
            f"sweep_dir={sweep_dir}: no multirun.yaml there (not the directory of a sweep, simstudy -m ..., nor "
            f"of a design)",
            None,
        )
    _setup_logging()
    try:
        if stored.is_file():
            swept, jobs = _sweep_plan(_load_stored_yaml(stored))  # a list (not a mapping) fails inside: unreadable
        else:
            from simstudy.sweeps import Job

            stored = design
            swept, cells = _design_cells(_read_stored_config(design))
            jobs = [Job(name, values) for name, values, _ in cells]
    except _NoPlan as exc:
        _fail(f"{stored}: cannot list the sweep's jobs: {exc}", None)
    except Exception as exc:
        _fail(f"{stored}: unreadable ({type(exc).__name__}: {_one_line(exc)}); rerun the sweep", None)
    if not swept:
        _fail(
            f"{stored}: no swept key names its jobs' directories (only runner settings are swept): collect the "
            f"run with simstudy collect run_dir=DIR",
            None,
        )
    try:
        stacked = _write_sweep(sweep_dir, swept, jobs)
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), None, _os_status(exc))
    if stacked.unfinished:
        _fail(_unfinished_message(sweep_dir, stacked.unfinished, len(jobs)), None, EXIT_FAILED)


def _replay(argv: list[str]) -> None:
    """``simstudy replay run_dir=DIR chunk=CELL/K``: rerun one chunk here; its exception propagates in full."""
    from simstudy.registry import study
    from simstudy.studies.base import ReplayDone

    opts = _key_values(argv, "replay", ("run_dir", "chunk"), ("plugins",))
    cell, _, k = opts["chunk"].rpartition("/")
    if not cell or not k.isdigit():
        _fail(
            f"chunk must be CELL/K (a cell key and a chunk number, as in the failure report), got {opts['chunk']!r}",
            None,
        )
    run_dir = Path(opts["run_dir"])
    config = _load_run(run_dir, _trusted(opts), replay=(cell, int(k)), n_jobs=1, backend="sequential", progress=False)
    _setup_logging()
    try:
        study(config.study.kind).run(config, run_dir)
    except ReplayDone as done:
        print(f"{done} (the failure did not reproduce)")
    except ValueError as exc:
        if "is not a chunk of this study" not in str(exc):
            raise
        _fail(str(exc), None)


def _reproduce(argv: list[str]) -> None:
    """``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: run the catalogued paper results
    (each in its own process, resuming what is done) and write REPRODUCTION.md with their verdicts. With
    ``only``, the other entries are reported from their earlier runs where those exist."""
    import collections
    import subprocess
    import time
    from concurrent.futures import ThreadPoolExecutor

    from simstudy.commands import reproduce

    _setup_logging()
    quick = "--quick" in argv
    opts = _key_values([a for a in argv if a != "--quick"], "reproduce", (), ("only", "n_jobs", "out"))
    try:
        entries = reproduce.load_catalogue()
    except (reproduce.CatalogueError, OSError) as exc:
        _fail(str(exc), None)
    wanted = opts["only"].split(",") if "only" in opts else [e.id for e in entries]
    unknown = sorted(set(wanted) - {e.id for e in entries})
    if unknown:
        _fail(
            f"only={opts['only']}: no entries {', '.join(unknown)} (entries: {', '.join(e.id for e in entries)})", None
        )
    n_jobs = opts.get("n_jobs", "-1")
    if not n_jobs.lstrip("-").isdigit() or int(n_jobs) == 0 or int(n_jobs) < -1:
        _fail(f"n_jobs must be a positive number of workers or -1 (all cores), got {n_jobs}", None)
    runs = Path("outputs") / ("reproduce-quick" if quick else "reproduce")
    out = Path(opts.get("out", runs if quick else "."))
    _check_dir_override("out", str(out))  # a file, or a path through one: refused before any run, not after
    # Before any run: refuse a report directory holding files simstudy did not write (a user's own report
    # or figures), and read the sections that this run will not regenerate, to keep them.
    figures = [
        f"reproduction/{e.id}.png"
        for e in entries
        if not e.unavailable and (e.id in wanted or (runs / e.id / e.table).is_file())
    ]
    try:
        reproduce.check_out_dir(out, ["REPRODUCTION.md", *figures], quick=quick)
        earlier = reproduce.read_report(out)
    except (reproduce.OutDirError, OSError) as exc:
        _fail(str(exc), None)
    # Every run is a process of its own; `workers` of them run at once, one core each (a run's numbers do not
    # depend on its runner.n_jobs), so the many short runs' start-up and single-threaded work overlap.
    workers = (os.cpu_count() or 1) if int(n_jobs) == -1 else int(n_jobs)

    def shown(command_args, quick_args) -> tuple[list[str], str]:
        """The arguments of one catalogued run, and the command as the report shows it (no runner keys)."""
        runner = (
            []
            if command_args[:1] and command_args[0] in DATA_COMMANDS
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
            Run(entry, h, *shown(h.command, entry.quick_for(h)), reproduce.hypothesis_dir(runs, entry, h))
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
    full_run = reproduce.record_full_run(runs, [r.dir for r in plan], elapsed, workers, full=len(asked) == len(plan))

    sections = []
    for entry in entries:
        run_dir = runs / entry.id
        if not entry.unavailable and entry.id not in wanted and not (run_dir / entry.table).is_file():
            if entry.id in earlier:  # not asked for, its run not here: the earlier report's section stays
                sections.append(reproduce.kept_section(entry, earlier[entry.id]))
            continue
        if entry.unavailable:
            sections.append(reproduce.read_section(entry, run_dir, "", None))
            continue
        own, *hypotheses = [r for r in plan if r.entry is entry]
        seconds, error = done.get(own.dir, (None, ""))
        tried = []
        for r in hypotheses:
            h_seconds, h_error = done.get(r.dir, (None, ""))
            if h_seconds is None and not (r.dir / entry.table).is_file():
                h_error = "not run yet (run it with only=" + entry.id + ")"
            tried.append(reproduce.read_hypothesis(entry, r.hypothesis, r.dir, r.command, h_seconds, h_error))
        sections.append(reproduce.read_section(entry, run_dir, own.command, seconds, error, tuple(tried)))
        log.info("%s: %s", entry.id, reproduce.verdict(sections[-1]) + (f" ({error})" if error else ""))
    try:
        path = reproduce.write_report(
            sections,
            out,
            quick=quick,
            total_seconds=sum(reproduce.section_seconds(s) for s in sections),
            cores=os.cpu_count() or 1,
            full_run=full_run,
        )
    except reproduce.OutDirError as exc:  # a file appeared in the report's place while the runs ran
        _fail(str(exc), None)
    log.info("wrote %s", path)
    failed = sum(bool(s.error) for s in sections) + sum(
        bool(h.error) and s.entry.id in wanted for s in sections for h in s.hypotheses
    )
    if failed:
        _fail(f"{failed} run(s) failed; see {path}", None, EXIT_FAILED)
