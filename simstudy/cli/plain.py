"""The commands that take no Hydra config: ``collect``, ``replay`` and ``reproduce``, from ``key=value`` arguments.

=================  ===============================================================================================
``_collect``       ``simstudy collect run_dir=DIR``: a sharded run's summary; ``sweep_dir=DIR``: a sweep's
``_replay``        ``simstudy replay run_dir=DIR chunk=CELL/K``: rerun one chunk here, with its full traceback
``_reproduce``     ``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: the papers' results
``_populations``   ``simstudy populations [export benchmark=B dataset=D n=N ...]``: the benchmarks' populations
``_report``        ``simstudy report run_dir=DIR``: (re)build the directory's offline report.html
``_plan``          ``simstudy plan [experiment=NAME] study.precision=TARGET ...``: a precision target's cost, planned
``_key_values``    a plain command's ``key=value`` arguments; anything else refused in one line
:func:`run`        the plain command a registered spec names (:func:`simstudy.registry.command`), run
=================  ===============================================================================================

Each parses its arguments and calls its library function (:mod:`simstudy.commands.collect`,
:mod:`simstudy.commands.replay`, :mod:`simstudy.commands.reproduce`, :mod:`simstudy.commands.populations`); :func:`simstudy.cli.main` turns what
they raise into one line and an exit status.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from simstudy.commands.study import trusted
from simstudy.engine.rundir import (
    EXIT_FAILED,
    fail,
    load_stored_yaml,
    read_stored_config,
)
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


def run(spec, argv: list[str]) -> None:
    """``simstudy NAME key=value ...`` for a plain command (a :class:`~simstudy.registry.Command` without options):
    its arguments parsed and its library function called by this module's function of the same name."""
    main = _MAINS.get(spec.name)
    if main is None:
        fail(f"simstudy {spec.name}: a command without options needs its key=value handling in simstudy.cli.plain")
    main(argv)


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
        fail(
            "simstudy collect: run_dir is required: set it with run_dir=... (or sweep_dir=... for a sweep, not both)",
        )
    from simstudy.commands import collect

    run_dir = Path(opts["run_dir"])
    config = collect.load_config(run_dir, trusted(opts))
    _setup_logging()
    collect.run(run_dir, config)


def _collect_sweep(sweep_dir: Path) -> None:
    """``simstudy collect sweep_dir=DIR``: rebuild the sweep's frame and figure from its finished jobs; exit 1,
    in one line naming them, if some did not finish."""
    from simstudy.cli.sweeps import NoPlan, sweep_plan
    from simstudy.commands import collect
    from simstudy.sweeps import unfinished_message

    stored = sweep_dir / "multirun.yaml"
    design = sweep_dir / "config.yaml"
    if not stored.is_file() and not (design.is_file() and "design" in read_stored_config(design)):
        fail(
            f"sweep_dir={sweep_dir}: no multirun.yaml there (not the directory of a sweep, simstudy -m ..., nor "
            f"of a design)",
        )
    _setup_logging()
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
    stacked = collect.stack(sweep_dir, swept, jobs)
    if stacked.unfinished:
        fail(unfinished_message(sweep_dir, stacked.unfinished, len(jobs)), status=EXIT_FAILED)


def _replay(argv: list[str]) -> None:
    """``simstudy replay run_dir=DIR chunk=CELL/K``: rerun one chunk here; its exception propagates in full."""
    from simstudy.commands import replay

    opts = _key_values(argv, "replay", ("run_dir", "chunk"), ("plugins",))
    done = replay.run(opts["run_dir"], opts["chunk"], trusted(opts), before=_setup_logging)
    print(f"{done.message} (the failure did not reproduce)")


def _report(argv: list[str]) -> None:
    """``simstudy report run_dir=DIR``: (re)build the directory's report.html; nothing to report: exit 2."""
    from simstudy.commands import report
    from simstudy.schema import ConfigError

    opts = _key_values(argv, "report", ("run_dir",))
    try:
        done = report.run(opts["run_dir"])
    except ConfigError as exc:
        fail(str(exc))
    print(
        f"wrote {done.path} ({done.size / 1e6:.1f} MB, {done.charts} charts, {done.rows} rows, {done.chunks} chunks verified)"
    )
    if done.damaged:
        fail(
            f"{len(done.damaged)} stored chunk(s) failed their check (the page lists them); first: {done.damaged[0]}",
            status=EXIT_FAILED,
        )


def _reproduce(argv: list[str]) -> None:
    """``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: run the catalogued paper results
    (each in its own process, resuming what is done) and write REPRODUCTION.md with their verdicts. With
    ``only``, the other entries are reported from their earlier runs where those exist."""
    from simstudy.commands import reproduce

    _setup_logging()
    quick = "--quick" in argv
    opts = _key_values([a for a in argv if a != "--quick"], "reproduce", (), ("only", "n_jobs", "out"))
    done = reproduce.run(quick=quick, only=opts.get("only"), n_jobs=opts.get("n_jobs", "-1"), out=opts.get("out"))
    if done.failed:
        fail(f"{done.failed} run(s) failed; see {done.path}", status=EXIT_FAILED)


def _populations(argv: list[str]) -> None:
    """``simstudy populations [out=FILE]``: every population of the public HPO benchmarks, described;
    ``simstudy populations export benchmark=B dataset=D n=N [seed=S] [metric=M] [scale=X] [out=FILE]``: one
    random search of n trials as a score file, and its exact truth beside it."""
    from simstudy.commands import populations
    from simstudy.datasets import DataError

    word = argv[0] if argv and "=" not in argv[0] and not argv[0].startswith("-") else None
    if word not in (None, "export", "list"):
        import difflib

        close = difflib.get_close_matches(word, ["export", "list"], n=1)
        fail(
            f"simstudy populations: unknown action {word!r}: {f'did you mean {close[0]}? ' if close else ''}the actions "
            f"are list (the default) and export",
        )
    if word == "export":
        action = "export"
        opts = _key_values(
            argv[1:], "populations export", ("benchmark", "dataset", "n"), ("seed", "metric", "scale", "out")
        )
    else:
        action = "list"
        opts = _key_values(argv[1:] if word else argv, "populations", (), ("out",))
    try:
        done = populations.run(action, **opts)
    except DataError as exc:
        fail(str(exc))
    if isinstance(done, populations.Exported):
        pop = done.population
        print(
            f"wrote {done.path} ({done.scores.size} trials of {pop.benchmark}/{pop.dataset} {pop.metric}, "
            f"{pop.direction}) and its exact truth {done.truth_path}"
        )
        return
    print(done.table.to_string(index=False, float_format="{:.6g}".format))
    if done.path is not None:
        print(f"wrote {done.path}")


def _plan(argv: list[str]) -> None:
    """``simstudy plan [experiment=NAME] study.precision=TARGET [key=value ...]``: the precision rule's pilot in a
    temporary directory, and per cell and measure the replicates the target needs and their estimated time; no
    results written."""
    from simstudy.commands import plan
    from simstudy.launch import api_compose

    _setup_logging()
    flags = [a for a in argv if a.startswith("-")]
    if flags:
        fail(f"simstudy plan: unexpected argument {flags[0]!r} (usage: {plan.COMMAND.usage})")
    experiment = None
    overrides = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if key in ("experiment", "+experiment") and sep:
            experiment = value
        elif key.lstrip("+") == "overwrite" and sep:
            # The run's line, copied with 'plan' in front: a plan writes nothing, so there is nothing to move.
            log.warning("simstudy plan writes nothing: %s is ignored (it applies to the run itself)", arg)
        else:
            overrides.append(arg)
    done = plan.run(api_compose(experiment, overrides))
    if done.table.empty:
        print("no Monte Carlo measure: this study is exact, a run needs no more than its pilot")
        return
    print(done.by_measure().to_string(index=False, float_format="{:.4g}".format))
    cells = done.table.drop_duplicates("cell")
    reps = int(cells["cell_reps"].sum())
    capped = "; capped: " + ", ".join(c[:8] for c in done.capped_cells) if done.capped_cells else ""
    workers = f"{done.workers} worker{'s' if done.workers > 1 else ''}"
    more = ""
    if done.cores > done.workers:  # say what the idle cores would change, and how to use them
        faster = done.fixed_seconds + reps * done.seconds_per_rep / done.cores
        more = f"; this machine has {done.cores} cores: runner.n_jobs={done.cores} would take about {faster:.3g} s"
    print(
        f"pilot {done.pilot_reps} per cell; {len(cells)} cells need {reps} replicates in all "
        f"(cap {done.max_reps} per cell{capped}); about {done.total_seconds:.3g} s on this machine = "
        f"{done.fixed_seconds:.3g} s outside the replicates (truth, reduction) + {reps} x "
        f"{done.seconds_per_rep:.3g} s of compute per replicate over {workers}{more}; nothing written"
    )
    print(
        "this plan is the rule's first stage: a run re-plans each cell from its planned replicates and may top it "
        "up (a heavy-tailed measure may need more than planned here)"
    )


#: Each plain command's ``key=value`` handling, by command name.
_MAINS = {
    "collect": _collect,
    "replay": _replay,
    "reproduce": _reproduce,
    "populations": _populations,
    "report": _report,
    "plan": _plan,
}
