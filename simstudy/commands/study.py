"""Running a validated study config in its claimed run directory, and what is said about the run.

The study command's core, shared by ``simstudy [experiment=NAME] ...`` (through :mod:`simstudy.launch`),
``simstudy collect`` (:mod:`simstudy.commands.collect`) and ``simstudy replay``
(:mod:`simstudy.commands.replay`): the study runs, its report is logged, its figure drawn; a run that cannot
finish raises :class:`~simstudy.engine.rundir.Refused` with its one line (never a print or an exit).

=====================  ============================================================================================
``run_and_report``     run the study, log its report and draw its figure (and a coverage study's zip plot)
``_check_failures``    refuse (status 1) a run with more failed chunks than it allows
``load_run``           the validated config of an existing run directory, trusting only the plug-ins named
``trusted``            the import paths of ``plugins=a.f,b.g``
``describe``           the distributions' descriptions of a run.json, for the log
=====================  ============================================================================================
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from simstudy.commands._pages import save_figures
from simstudy.engine import chunks
from simstudy.engine.rundir import EXIT_FAILED, RunDir, chunks_changed, fail, read_stored_config
from simstudy.schema import ConfigError

log = logging.getLogger("simstudy")


def run_and_report(config, run_dir: RunDir):
    """Run the study in its claimed directory, then log its report (and what it wrote there) and draw its figure;
    sharded, collect and failing runs end here. Returns the :class:`~simstudy.studies.base.StudyResult`, or for a
    shard its :class:`~simstudy.studies.base.ShardDone` (report and marker)."""
    # Imported after validation: a bad config fails fast, without paying for matplotlib.
    from simstudy.engine.cluster import ClusterUnavailable
    from simstudy.engine.runner import MissingChunks
    from simstudy.plugins import PluginExit
    from simstudy.registry import figure_function, study
    from simstudy.report_html import build_or_warn
    from simstudy.studies.base import ShardDone
    from simstudy.studies.precision import TopUpPending, run_study
    from simstudy.sweeps import headline

    out_dir = run_dir.path
    spec = study(config.study.kind)
    try:
        result = run_study(spec, config, out_dir)  # spec.run, under study.precision's rule if set
    except ShardDone as done:
        i, n = config.runner.shard
        log_report(done.report)
        log.info(
            "shard %d/%d done (%s); when every shard is done: simstudy collect run_dir=%s",
            i,
            n,
            done.marker.name,
            out_dir,
        )
        _check_failures(done.report, config, out_dir)
        return done
    except MissingChunks as exc:
        fail(_missing_message(exc, out_dir), status=EXIT_FAILED)
    except PluginExit as exc:  # a plug-in called sys.exit outside the chunks (the truth, a figure ...)
        fail(str(exc))
    except chunks.CorruptChunk as exc:
        fail(chunks_changed(exc), status=EXIT_FAILED)
    except chunks.RunDirConflict as exc:
        fail(str(exc))
    except ClusterUnavailable as exc:
        fail(str(exc), status=EXIT_FAILED)
    except ConfigError as exc:  # study.precision naming a measure the study lacks, known after its pilot
        fail(str(exc))
    except TopUpPending as exc:  # a collect before the shards ran the precision rule's top-up
        fail(str(exc))

    log_report(result.report)
    for line in describe(result.files["run"]):
        log.info("distribution %s", line)
    shown = (
        result.summary[result.summary["measure"] != "failed_chunks"] if "measure" in result.summary else result.summary
    )
    if len(shown) and spec.headline is not None:
        log.info("%s", spec.headline(shown))
    build_or_warn(out_dir, headline=headline, frame=result.summary, kind=spec.kind)  # report.html, ~30 ms
    # One code path for the command line and simstudy.run: drawn here, after the run. Warming matplotlib up in a
    # thread while the study computes was measured (benchmarks/bench_startup.py) to buy nothing: the GIL runs its
    # imports in turn with the run's own Python, not beside it.
    if len(shown) and config.runner.figures:  # only the formats asked for: each costs about as much as the drawing
        save_figures({"figure": figure_function(spec)(shown)}, out_dir, config.runner.figures)
    if config.runner.figures and "zip" in result.files:  # a coverage study's replicates, ranked
        _zip_figure(result.files["zip"], config.runner.figures)
    log.info("wrote %s to %s", run_dir.listing(), out_dir)
    _check_failures(result.report, config, out_dir)
    return result


def _zip_figure(path: Path, suffixes) -> None:
    """Draw ``zip.<suffix>`` beside ``zip.parquet`` (the per-replicate positions a coverage study wrote)."""
    import pandas as pd

    from simstudy.studies.zip_plots import zip_figure

    # drawn first: zip_figure selects the Agg backend before save_figures imports pyplot
    save_figures({"zip": zip_figure(pd.read_parquet(path))}, path.parent, suffixes)


def log_report(report) -> None:
    log.info(
        "%d chunks (%d resumed) in %.2f s wall, %.2f s compute",
        report.tasks,
        report.resumed,
        report.wall_seconds,
        report.compute_seconds,
    )
    for message in report.warnings:
        log.warning("worker: %s", message)
    for f in report.failures:
        log.warning("chunk %s (seed key %s) failed: %s", f.where, f.seed_key, f.error.splitlines()[0])


def _check_failures(report, config, out_dir: Path) -> None:
    """Exit non-zero, in one line naming the first failure and how to replay it, if too many chunks failed."""
    failures = report.failures
    if not failures:
        return
    exited = [f for f in failures if f.error.startswith(("PluginExit:", "SystemExit:"))]
    if exited:  # the plug-in needs fixing, not a rerun: bad input, however few chunks it ended
        fail(f"chunk {exited[0].where}: {exited[0].error.splitlines()[0]}")
    fraction = len(failures) / report.tasks
    limit = config.runner.max_failure_fraction
    if fraction > limit:
        first = failures[0]
        fail(
            f"{len(failures)} of {report.tasks} chunks failed ({fraction:.1%} > runner.max_failure_fraction="
            f"{limit:g}); first: chunk {first.where}: {first.error.splitlines()[0]}; its traceback: "
            f"{_replay_line(config, out_dir, first.where)}",
            status=EXIT_FAILED,
        )
    log.warning(
        "%d of %d chunks failed (within runner.max_failure_fraction=%g); their cells are not summarised",
        len(failures),
        report.tasks,
        limit,
    )


def _replay_line(config, out_dir: Path, where: str) -> str:
    """The ``simstudy replay`` line that reruns chunk ``where``, runnable as printed: with ``plugins=`` naming
    the run's plug-ins that are not installed ones (replay imports a stored config's plug-in only when named)."""
    from simstudy._imports import registered_paths
    from simstudy.engine.identity import plugin_sources

    named = sorted(set(plugin_sources(config)) - registered_paths())
    return f"simstudy replay run_dir={out_dir} chunk={where}" + (f" plugins={','.join(named)}" if named else "")


def _missing_message(exc, out_dir: Path, limit: int = 50) -> str:
    """Which chunks are missing (cell/chunk), and which shards should have written them."""
    import re

    missing = [f"{t.cell}/{t.chunk}" for t in exc.missing]
    listed = ", ".join(missing[:limit]) + (f" (and {len(missing) - limit} more)" if len(missing) > limit else "")
    counts = {
        int(m.group(1))
        for p in (out_dir / "shards").glob("shard-*-of-*.json")
        if (m := re.fullmatch(r"shard-\d+-of-(\d+)\.json", p.name))
    }
    hint = ""
    if len(counts) == 1:
        n = counts.pop()
        shards = sorted({pos % n + 1 for pos in exc.positions})
        hint = f"; rerun shard(s) {', '.join(f'{i}/{n}' for i in shards)}"
    return f"{out_dir}: {len(missing)} of {exc.total} chunks missing (cell/chunk): {listed}{hint}"


def describe(run_json: Path) -> list[str]:
    import json

    described = json.loads(run_json.read_text()).get("distributions", {})
    return [
        f"{name}: " + ", ".join(f"{k}={_rounded(v)}" for k, v in desc.items() if k != "name")
        for name, desc in described.items()
    ]


def _rounded(value):
    """A described value for a log line: floats (also in lists and dicts) to 4 significant digits."""
    from simstudy.stats.metrics import format_number

    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, list):
        return "[" + ", ".join(str(_rounded(v)) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_rounded(v)}" for k, v in value.items()) + "}"
    return value


def trusted(opts: dict) -> tuple[str, ...]:
    """The import paths of ``plugins=a.f,b.g``: the stored config's plug-ins the user vouches for."""
    return tuple(p.strip() for p in opts.get("plugins", "").split(",") if p.strip())


def load_run(run_dir: Path, trusted: tuple[str, ...] = (), **runner):
    """The validated config of an existing run directory, with ``runner`` fields replaced. The directory may
    come from anyone: its config imports only the plug-ins in ``trusted`` (``plugins=...`` on the command line)
    or registered ones; any other ``_target_`` is refused by name before its module is imported."""
    from simstudy.config import parse

    stored = run_dir / "config.yaml"
    if not stored.is_file():
        fail(f"run_dir={run_dir}: no config.yaml there (not a simstudy run directory)")
    old = read_stored_config(stored)
    if "design" in old:
        fail(
            f"run_dir={run_dir} holds a design (design: in its config.yaml): use one of its cells' directories, "
            f"run_dir={run_dir}/CELL, and simstudy collect sweep_dir={run_dir} for the stacked summary",
        )
    try:
        config = parse(old, trusted=frozenset(trusted))
    except ConfigError as exc:
        fail(f"{stored}: {exc}")
    return dataclasses.replace(config, runner=dataclasses.replace(config.runner, shard=None, **runner))
