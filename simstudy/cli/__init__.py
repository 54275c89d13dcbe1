"""The ``simstudy`` command: the only package that runs Hydra apps, a thin shell over :mod:`simstudy.launch`.

``simstudy experiment=dodge2021_fig1 [key=value ...]`` composes the config, resolves it into plain frozen
objects (:func:`simstudy.config.parse`) before any compute, runs the study in this process (joblib inside
it), and writes the summary, the replicates, the figure and the run metadata into the run directory
``outputs/<study.name>/<overrides>/``. Invalid input exits with status 2 and one line on stderr, and leaves
no new directory behind; a run that cannot finish (failed chunks beyond ``runner.max_failure_fraction``,
missing chunks at ``collect``, a full disk) exits with status 1 and one line.

``simstudy collect run_dir=DIR`` summarises a run whose chunks were computed by shards (``runner.shard=i/N``);
``simstudy replay run_dir=DIR chunk=CELL/K`` reruns one chunk here and shows its full traceback.

=======================  ==========================================================================================
:mod:`.main`             :func:`main`: dispatch, and the one place exceptions become lines and exit statuses
:mod:`.plain`            ``collect``, ``replay``, ``reproduce`` (no Hydra config)
:mod:`.sweeps`           a multirun's jobs, and :class:`~simstudy.cli.sweeps.SweepCallback`
:mod:`.usage`            the help pages
this module              the data commands' Hydra apps (``curve``, ``bands``, ``audit``, ``extrapolate``)
=======================  ==========================================================================================

Hydra, OmegaConf and the config schemas are imported when a command runs, not when this package is imported:
``simstudy --help`` needs none of them.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from simstudy import io
from simstudy.cli import main as _main_module
from simstudy.cli.main import _in_run_dir, main
from simstudy.commands.study import _describe as _describe
from simstudy.commands.study import _log_report
from simstudy.engine.rundir import EXIT_FAILED, RunDir, _check_identity, _fail, _write_config
from simstudy.engine.rundir import _dirname as _dirname  # the tests' and the benchmarks' way in, as before
from simstudy.launch import _data_record, _parse_or_fail, _resolved
from simstudy.overrides import _config_dir as _config_dir  # the tests' way in, as before
from simstudy.overrides import _design_cells as _design_cells
from simstudy.overrides import _last_of_each_key as _last_of_each_key
from simstudy.overrides import _register_commands as _register_commands
from simstudy.overrides import _register_studies as _register_studies
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

# The command, and the sweep callback that configs/config.yaml names (imported on first use: Hydra's).
__all__ = ["main", "SweepCallback"]

log = logging.getLogger("simstudy")


class _LazyOmegaConf:
    """``OmegaConf`` for the apps below, imported on first use."""

    def __getattr__(self, name):
        from omegaconf import OmegaConf as _OmegaConf

        return getattr(_OmegaConf, name)


OmegaConf = _LazyOmegaConf()


def _curve_app(cfg: DictConfig, overwrite: bool, created) -> None:
    _in_run_dir(_run_curve, cfg, overwrite, created)


def _run_curve(cfg: DictConfig, run_dir: RunDir) -> None:
    """``simstudy curve``: :func:`simstudy.commands.curve.run` into the run directory, its summary printed."""
    from simstudy.commands import curve
    from simstudy.commands._data import _log_scores
    from simstudy.datasets import DataError, load_data

    out_dir = run_dir.path
    opts = _parse_or_fail(curve.parse, cfg)
    scores = _parse_or_fail(lambda _: load_data(opts.data), cfg)
    record = _data_record("curve", cfg, opts.data)
    _check_identity(out_dir, record, overwrite=run_dir.overwrite)
    _log_scores("curve", scores, out_dir, minimize=opts.data.minimize)
    try:
        result = curve.run(opts, scores)
    except (ConfigError, DataError) as exc:
        _fail(str(exc))
    curve.write(result, out_dir)
    _write_config(_resolved(cfg), out_dir, record)
    _run_record("curve", cfg, out_dir)
    _report(out_dir)
    for line in curve.lines(result):
        print(line)
    log.info("wrote %s to %s", run_dir.listing(), out_dir)


def _bands_app(cfg: DictConfig, overwrite: bool, created) -> None:
    _in_run_dir(_run_bands, cfg, overwrite, created)


def _run_bands(cfg: DictConfig, run_dir: RunDir) -> None:
    """``simstudy bands``: :func:`simstudy.commands.bands.run` into the run directory, its summary printed."""
    from simstudy.commands import bands
    from simstudy.commands._data import _log_scores
    from simstudy.datasets import DataError, load_data

    out_dir = run_dir.path
    opts = _parse_or_fail(bands.parse, cfg)
    scores = _parse_or_fail(lambda _: load_data(opts.data), cfg)
    record = _data_record("bands", cfg, opts.data)
    _check_identity(out_dir, record, overwrite=run_dir.overwrite)
    _log_scores("bands", scores, out_dir, minimize=opts.data.minimize)
    try:  # its first step refuses, with the estimates, bands beyond the memory or time limit
        result = bands.run(opts, scores)
    except (ConfigError, DataError) as exc:
        _fail(str(exc))
    bands.write(result, out_dir)
    _write_config(_resolved(cfg), out_dir, record)
    _run_record("bands", cfg, out_dir)
    _report(out_dir)
    for line in bands.lines(result):
        print(line)
    log.info("wrote %s to %s", run_dir.listing(), out_dir)


def _audit_app(cfg: DictConfig, overwrite: bool, created) -> None:
    _in_run_dir(_run_audit, cfg, overwrite, created)


def _run_audit(cfg: DictConfig, run_dir: RunDir) -> None:
    """``simstudy audit``: :mod:`simstudy.commands.audit` into the run directory, its summary printed."""
    from simstudy.commands import audit
    from simstudy.datasets import load_data
    from simstudy.studies.audit import AuditFailed
    from simstudy.studies.audit import plans as plan_audits

    out_dir = run_dir.path
    opts = _parse_or_fail(audit.parse, cfg)
    scores = _parse_or_fail(lambda _: load_data(opts.data), cfg)
    record = _data_record("audit", cfg, opts.data)
    plans = _parse_or_fail(lambda _: plan_audits(scores, opts), cfg)  # every model checked first
    _check_identity(out_dir, record, overwrite=run_dir.overwrite)
    several = len(plans) > 1  # each model on its own, in model=NAME/ (a name made safe to type)
    pages = []
    for plan in plans:
        where = out_dir / f"model={_dirname(plan.model)}" if several else out_dir
        model_opts = dataclasses.replace(opts, model=plan.model) if several else opts
        log.info("auditing %s (%d scores) at n = %d -> %s", plan.model, plan.scores.size, plan.n, where)
        try:
            result = _parse_or_fail(lambda _, plan=plan, o=model_opts, d=where: audit.run(plan, o, d), cfg)
        except AuditFailed as exc:  # chunks kept: a rerun resumes the studies
            _fail(str(exc), status=EXIT_FAILED)
        pages.append((plan.model, audit.write(result, model_opts, plan.scores, where)))
    _write_config(_resolved(cfg), out_dir, record)
    if several:
        from simstudy.commands.audit_page import write_index

        path = write_index(pages, opts, out_dir)
    else:
        path = pages[0][1]
    _report(out_dir)
    for model, page in pages:
        print(f"{model}: {audit.summary(page)}" if several else audit.summary(page))
    log.info("wrote %s", path)


def _extrapolate_app(cfg: DictConfig, overwrite: bool, created) -> None:
    _in_run_dir(_run_extrapolate, cfg, overwrite, created)


def _run_extrapolate(cfg: DictConfig, run_dir: RunDir) -> None:
    """``simstudy extrapolate``: fit the noisy quadratic law to each model's tail, bootstrap it through the runner
    (chunks stored in the run directory: a rerun resumes), write the tables, figure and EXTRAPOLATE.md
    (:mod:`simstudy.commands.extrapolate`), print its summary."""
    from simstudy.commands import extrapolate, extrapolate_page
    from simstudy.commands._data import _log_scores
    from simstudy.datasets import load_data
    from simstudy.extrapolation import BadSample, ExtrapolationFailed

    out_dir = run_dir.path
    opts = _parse_or_fail(extrapolate.parse, cfg)
    scores = _parse_or_fail(lambda _: load_data(opts.data), cfg)
    record = _data_record("extrapolate", cfg, opts.data)
    source = extrapolate.source_name(opts)
    _log_scores("extrapolate", scores, out_dir, minimize=opts.data.minimize)
    try:  # every fit before anything is written: a refused sample leaves nothing behind
        analyses = extrapolate.prepare(scores, opts, source)
    except BadSample as exc:
        _fail(str(exc))
    _check_identity(out_dir, record, overwrite=run_dir.overwrite)
    try:
        result = extrapolate.run(analyses, opts, out_dir, source=source)
    except ExtrapolationFailed as exc:
        _fail(str(exc), status=EXIT_FAILED)
    _log_report(result.report)
    extrapolate.write(result, opts, out_dir, source=source)
    _write_config(_resolved(cfg), out_dir, record)
    io.write_json(
        {
            "command": "extrapolate",
            "config": OmegaConf.to_container(cfg, resolve=True),
            "runner": dataclasses.asdict(result.report),
            "environment": io.environment(),
        },
        out_dir / "run.json",
    )
    _report(out_dir)
    for line in extrapolate_page.summary(result, opts.level):
        print(line)
    log.info("wrote %s to %s", run_dir.listing(), out_dir)


def _run_record(command: str, cfg: DictConfig, out_dir: Path) -> None:
    """run.json of a data command without a runner (curve, bands): the command, its resolved config and the
    environment, which its report.html's provenance shows."""
    record = {"command": command, "config": OmegaConf.to_container(cfg, resolve=True), "environment": io.environment()}
    io.write_json(record, out_dir / "run.json")


def _report(out_dir: Path) -> None:
    """report.html beside a command's page (AUDIT.md, EXTRAPOLATE.md, CURVE.md, BANDS.md); a failure to write it
    is a warning."""
    from simstudy.commands import report

    report.write(out_dir)


# Each task runs as ``task(cfg, overwrite, created)``, bound by :func:`simstudy.cli.main._job`.
_main_module.SUBCOMMANDS.update(
    {
        "curve": (_curve_app, "curve"),
        "bands": (_bands_app, "bands"),
        "audit": (_audit_app, "audit"),
        "extrapolate": (_extrapolate_app, "extrapolate"),
    }
)


def __getattr__(name: str):
    """The sweep machinery (Hydra's parser) imported when asked for: ``simstudy.cli.SweepCallback`` is how
    configs/config.yaml names the callback."""
    if name in ("SweepCallback", "_sweep_plan", "_NoPlan"):
        from simstudy.cli import sweeps

        return getattr(sweeps, name)
    if name in ("_write_sweep", "_unfinished_message"):
        from simstudy import sweeps as _sweeps

        return getattr(_sweeps, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    main()
