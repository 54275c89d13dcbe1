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
import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy import io
from simstudy.cli import main as _main_module
from simstudy.cli.main import _in_run_dir, main
from simstudy.commands.study import _describe as _describe
from simstudy.commands.study import _log_report
from simstudy.engine.rundir import EXIT_FAILED, _check_identity, _fail, _listing, _write_config
from simstudy.engine.rundir import _dirname as _dirname  # the tests' and the benchmarks' way in, as before
from simstudy.launch import _data_record, _parse_or_fail
from simstudy.overrides import _config_dir
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


class _LazyHydra:
    """``hydra.main`` for the data commands' apps below, importing Hydra when an app runs rather than when this
    package is imported (``simstudy --help`` and ``import simstudy.cli`` need no Hydra)."""

    @staticmethod
    def main(**kwargs):
        def decorate(task):
            @functools.wraps(task)
            def app(*args, **kw):
                import hydra as _hydra

                return _hydra.main(**kwargs)(task)(*args, **kw)

            return app

        return decorate


class _LazyOmegaConf:
    """``OmegaConf`` for the apps below, imported on first use."""

    def __getattr__(self, name):
        from omegaconf import OmegaConf as _OmegaConf

        return getattr(_OmegaConf, name)


hydra = _LazyHydra()
OmegaConf = _LazyOmegaConf()


def parse_curve(resolved: dict):
    """:func:`simstudy.config.parse_curve`, imported when a curve runs (the schemas import scipy)."""
    from simstudy.config import parse_curve as parse

    return parse(resolved)


def parse_bands(resolved: dict):
    """:func:`simstudy.config.parse_bands`, imported when the bands run."""
    from simstudy.config import parse_bands as parse

    return parse(resolved)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="curve")
def _curve_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_curve, cfg)


def _load_scores(opts) -> dict:
    """Scores by model from a :class:`~simstudy.config.DataConfig`: a file or a shipped data set."""
    from simstudy import datasets

    if opts.data in datasets.DATASETS:
        options = dict(opts.options) if opts.data == "deberta_mnli" else {}
        scores = {m: x * opts.scale for m, x in datasets.load_models(opts.data, **options).items()}
        outside = {m: x for m, x in scores.items() if np.any((x < opts.low) | (x > opts.high))}
        if outside:
            m = next(iter(outside))
            raise ConfigError(f"{opts.data}: model {m} has scores outside [low, high] = [{opts.low}, {opts.high}]")
    else:
        # failed runs dropped or replaced are said by a DataWarning, which _main routes to the log
        scores = datasets.load_scores(
            opts.data,
            score_column=opts.score_column,
            model_column=opts.model_column,
            low=opts.low,
            high=opts.high,
            missing=opts.missing,
            scale=opts.scale,
            minimize=opts.minimize,
        )
    if opts.models is not None:
        unknown = [m for m in opts.models if m not in scores]
        if unknown:
            raise ConfigError(
                f"model{'s' * (len(unknown) > 1)} {', '.join(unknown)} not in {opts.data} (its models: "
                f"{', '.join(scores)}): choose with model=NAME or models=[a,b]"
            )
        scores = {m: scores[m] for m in opts.models}
    if len(scores) < opts.min_models:
        raise ConfigError(f"compare=true needs at least two models, but {opts.data} has one: {', '.join(scores)}")
    if opts.sample_size is not None:
        try:  # the first sample_size runs, or a random subset keyed by sample_seed and the model
            scores = datasets.sample_runs(scores, opts.sample_size, opts.sample_seed)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return scores


def _sign(data) -> int:
    """-1 with ``minimize=true`` (lower is better), else 1: the analyses maximise ``sign * x``."""
    return -1 if data.minimize else 1


def _mirror_scores(scores: dict, sign: int) -> dict:
    """Each model's scores times ``sign``: with ``minimize=true`` every analysis runs unchanged on ``-x``
    (maximising it minimises x), and the results are mirrored back before they are reported."""
    return scores if sign > 0 else {m: -x for m, x in scores.items()}


def _bounds(data, sign: int) -> dict:
    """``low`` and ``high`` of the analysed scores ``sign * x``: ``[-high, -low]`` with ``minimize=true``."""
    return {"low": data.low, "high": data.high} if sign > 0 else {"low": -data.high, "high": -data.low}


def _log_scores(command: str, scores: dict, out_dir: Path) -> None:
    """The command's inputs, and the scores many runs share exactly (failed runs at 0), as the audit says them."""
    from simstudy.report import atom_notes

    log.info("%s of %s -> %s", command, ", ".join(f"{m} ({x.size} scores)" for m, x in scores.items()), out_dir)
    for line in atom_notes(scores):
        log.warning("%s", line)


def _run_curve(cfg: DictConfig, out_dir: Path) -> None:
    opts = _parse_or_fail(parse_curve, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("curve", cfg, opts.data)
    _check_identity(out_dir, record)
    _log_scores("curve", scores, out_dir)

    from simstudy import plots
    from simstudy.stats import curves

    trial_time = dict(opts.trial_time) if isinstance(opts.trial_time, tuple) else opts.trial_time
    sign = _sign(opts.data)
    try:
        table = curves.evp_curves(_mirror_scores(scores, sign), method=opts.estimator, trial_time=trial_time)
    except ValueError as exc:
        _fail(str(exc), out_dir)
    reached = curves.budget_to_target(table, sign * opts.target) if opts.target is not None else None
    if sign < 0:  # back to the scores' own units: the expected minimum, its band and the target reached at or below
        table = table.assign(
            expected_max=-table["expected_max"], band_low=-table["band_high"], band_high=-table["band_low"]
        )
        if reached is not None:
            reached = reached.assign(target=opts.target, expected_max=-reached["expected_max"])
    best = "expected min" if sign < 0 else "expected max"
    named = {"expected_max": best.replace(" ", "_")}  # the tables name what the column holds
    x = "time" if trial_time is not None else "n"
    xlabel = (
        f"time ({opts.time_unit}), {'log scale' if opts.xscale == 'log' else ''}".rstrip(", ") if x == "time" else None
    )
    fig = plots.evp_curves_figure(
        table,
        x=x,
        target=opts.target,
        reached=reached,
        xscale=opts.xscale,
        xlabel=xlabel,
        ylabel=f"{best} validation score" if sign < 0 else None,
        title=f"{Path(opts.data.data).name}: {best} ({opts.estimator.upper()}) ± 1 SD",
    )
    for suffix in ("png", "pdf"):
        io.save_figure(fig, out_dir / f"figure.{suffix}", dpi=150)
    io.write_parquet(table.rename(columns=named), out_dir / "curves.parquet")
    io.write_csv(table.rename(columns=named), out_dir / "curves.csv")
    _write_config(cfg, out_dir, record)
    print(_curve_table(table, best))
    if reached is not None:
        io.write_csv(reached.rename(columns=named), out_dir / "targets.csv")
        for _, row in reached.iterrows():
            if row["n"] != row["n"]:  # NaN: the curve never gets past the target up to the model's last trial
                trials = int(table.loc[table["model"] == row["model"], "n"].max())
                print(
                    f"{row['model']}: {best} never reaches {opts.target:g}{' (at or below)' * (sign < 0)} within {trials:,} trials"
                )
                continue
            when = f" ({row['time']:.3g} {opts.time_unit})" if x == "time" else ""
            print(
                f"{row['model']}: {best} first reaches {opts.target:g}{' (at or below)' * (sign < 0)} at n = {int(row['n']):,}{when}"
            )
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


def _table_number(x: float) -> str:
    """Four decimals for scores on a usual scale; four significant digits for large or tiny magnitudes (1e300
    printed as 300 digits)."""
    return f"{x:.4f}" if not np.isfinite(x) or x == 0 or 1e-3 <= abs(x) < 1e6 else f"{x:.4g}"


def _curve_table(table, best: str = "expected max") -> str:
    """Expected max (``best``: "expected min" with minimize=true) +/- SD per model at a readable set of budgets
    (all of them are in curves.csv)."""
    B = int(table["n"].max())
    shown = sorted({n for n in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if n <= B} | {B})
    t = table[table["n"].isin(shown)].copy()
    t["cell"] = t["expected_max"].map(_table_number) + " ± " + t["std"].map(_table_number)
    # Said above the table: the ± is the spread of the best of n runs, not the estimate's error.
    head = f"{best} of n trials ± its SD (the spread of the best of n runs; all n in curves.csv)"
    return head + "\n" + t.pivot(index="n", columns="model", values="cell").fillna("").to_string()


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="bands")
def _bands_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_bands, cfg)


def _run_bands(cfg: DictConfig, out_dir: Path) -> None:
    import warnings

    import pandas as pd

    from simstudy import plots
    from simstudy.stats import bands, estimators

    opts = _parse_or_fail(parse_bands, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("bands", cfg, opts.data)
    _check_identity(out_dir, record)
    _log_scores("bands", scores, out_dir)
    _check_bands_cost(opts, scores, out_dir)

    low, high = opts.data.low, opts.data.high
    max_k = opts.max_k or max(x.size for x in scores.values())
    ks = np.arange(1, max_k + 1, dtype=np.float64)
    # minimize=true: the bands of -x on [-high, -low]; the q-quantile of the minimum is minus the (1 - q)-quantile
    # of the maximum of -x, and a band's lower and upper edges trade places when mirrored back.
    sign = _sign(opts.data)
    analysed = _mirror_scores(scores, sign)
    quantile = opts.quantile if sign > 0 else 1 - opts.quantile
    results, curve_rows, cdf_rows = {}, [], []
    for model, x in analysed.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tc = bands.tuning_curve_bands(
                x, opts.confidence, opts.kind, opts.method, ks=ks, quantile=quantile, **_bounds(opts.data, sign)
            )
        for w in caught:
            log.warning("%s: %s", model, w.message)
        results[model] = tc
        # Beside the bands, the U and V point estimates of the mean tuning curve (Lourie et al. Figure 1, left):
        # the estimators interpolate only, so NaN beyond the model's sample size.
        point = {e: np.full(ks.size, np.nan) for e in ("u", "v")}
        for e in point:
            m = min(x.size, ks.size)
            point[e][:m] = sign * estimators.expected_max(x, e, n=np.arange(1, m + 1))
        lower, upper = (tc.lower, tc.upper) if sign > 0 else (-tc.upper, -tc.lower)
        curve_rows.append(
            pd.DataFrame({"model": model, "k": ks, "point": sign * tc.point, "lower": lower, "upper": upper, **point})
        )
        cdf_rows.append(_distinct_scores(model, tc.cdf, x.size, sign))
    curves = pd.concat(curve_rows, ignore_index=True)
    for col, value in (
        ("kind", opts.kind),
        ("quantile", opts.quantile),
        ("confidence", opts.confidence),
        ("method", opts.method),
    ):
        curves[col] = value
    cdfs = pd.concat(cdf_rows, ignore_index=True)
    cdfs["confidence"], cdfs["method"] = opts.confidence, opts.method
    source = Path(opts.data.data).name
    io.write_parquet(curves, out_dir / "bands.parquet")
    io.write_csv(curves, out_dir / "bands.csv")
    io.write_csv(cdfs, out_dir / "cdf_bands.csv")
    label = f"{opts.kind}{'' if opts.kind != 'quantile' else f' ({opts.quantile:g})'} tuning curve"
    label += " (lower is better: the best is the minimum)" * (sign < 0)
    method = bands.METHOD_LABELS[opts.method]
    fig_curve = plots.tuning_curve_bands_figure(
        curves,
        low=low,
        high=high,
        xscale=opts.xscale,
        title=f"{source}: {opts.confidence:.0%} {method} bands, {label}",
        minimize=sign < 0,
    )
    fig_cdf = plots.cdf_bands_figure(
        cdfs, low=low, high=high, title=f"{source}: {opts.confidence:.0%} {method} bands for the CDF of scores"
    )
    for suffix in ("png", "pdf"):
        io.save_figure(fig_curve, out_dir / f"tuning_curve.{suffix}", dpi=150)
        io.save_figure(fig_cdf, out_dir / f"cdf.{suffix}", dpi=150)
    _write_config(cfg, out_dir, record)
    shown = curves[curves["k"].isin([1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, max_k])]
    print(shown.pivot(index="k", columns="model", values=["lower", "point", "upper"]).round(4).to_string())
    if len(results) == 2:
        (name_a, a), (name_b, b) = results.items()
        evidence = bands.evidence_table(a, b, name_a, name_b)
        by_model = {m: c.sort_values("k") for m, c in curves.groupby("model", sort=False)}
        for e in ("u", "v"):  # which model the point estimates of the mean tuning curve put ahead at each k
            evidence[f"{e}_leader"] = bands.leader_names(
                sign * by_model[name_a][e], sign * by_model[name_b][e], name_a, name_b
            )
        io.write_csv(evidence, out_dir / "evidence.csv")
        for line in bands.evidence_summary(evidence):
            print(line)
        print("point estimates of the mean tuning curve (the model ahead at each k):")
        for e in ("v", "u"):
            print(bands.leader_summary(evidence["k"], evidence[f"{e}_leader"], e.upper()))
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


def _check_bands_cost(opts, scores: dict, out_dir: Path) -> None:
    """Refuse at once, with the estimates, bands that would not fit in memory or would compute for longer than
    the time limit: the exact LD intervals cost about n^2 (10^6 scores: days), the other methods n log n."""
    from simstudy import config
    from simstudy.stats.boundary import _ld_seconds

    n = max(x.size for x in scores.values())
    max_k = opts.max_k or n
    nbytes = config._BYTES_PER_K * max_k * len(scores)
    try:
        config.check_memory(
            "max_k", max_k, nbytes, f"the bands at k = 1..{max_k:,} of {len(scores)} model(s)", "set max_k lower"
        )
        if opts.method.startswith("ld_"):
            kind = opts.method.removeprefix("ld_")
            seconds = sum(_ld_seconds(m, opts.confidence, kind) for m in {x.size for x in scores.values()})
            config._check_time(
                "method",
                opts.method,
                seconds,
                f"the exact intervals for {n:,} scores, about n^2 work; memory about {config._size(nbytes)}",
                "method=dkw or method=ks (closed forms, seconds), or sample_size=N for fewer scores",
            )
    except ConfigError as exc:
        _fail(str(exc), out_dir)


def _distinct_scores(model: str, cdf, n: int, sign: int = 1):
    """The CDF band at each distinct score, one row per score: with ties, the eCDF and the bands at a score are
    those after its last copy (the band arrays hold one entry per sorted draw).

    ``sign=-1``: ``cdf`` is the band of the mirrored scores ``y = -x``, and the rows are the band of the CDF of
    x, ``P(X <= s) = 1 - P(Y < -s)``: at ``s = -y_j``, one minus the band of Y just below ``y_j`` (at the
    previous distinct score, or ``[0, upper_below]`` below the first)."""
    import pandas as pd

    last = np.flatnonzero(np.append(np.diff(cdf.y) > 0, True))  # the last copy of each distinct score
    count = np.diff(np.append(-1, last))
    if sign > 0:
        return pd.DataFrame(
            {
                "model": model,
                "score": cdf.y[last],
                "count": count,
                "ecdf": (last + 1) / n,
                "lower": cdf.lower[last],
                "upper": cdf.upper[last],
            }
        )
    below = np.append(-1, last[:-1])  # the last copy of the previous distinct score (-1: none)
    return pd.DataFrame(
        {
            "model": model,
            "score": -cdf.y[last][::-1],
            "count": count[::-1],
            "ecdf": (1 - (below + 1) / n)[::-1],
            "lower": 1 - np.where(below >= 0, cdf.upper[below], cdf.upper_below)[::-1],
            "upper": 1 - np.where(below >= 0, cdf.lower[below], 0.0)[::-1],
        }
    )


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="audit")
def _audit_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_audit, cfg)


def _run_audit(cfg: DictConfig, out_dir: Path) -> None:
    from simstudy import report
    from simstudy.config import _audit_cost_iv, parse_audit
    from simstudy.studies import audit

    opts = _parse_or_fail(parse_audit, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("audit", cfg, opts.data)
    if opts.model is None and len(scores) > 1:
        _fail(f"{opts.data.data} holds several models ({', '.join(scores)}): choose one with model=", out_dir)
    model = opts.model or next(iter(scores))
    if model not in scores:
        _fail(f"model {model!r} is not in {opts.data.data} (models: {', '.join(scores)})", out_dir)
    x = scores[model]
    from simstudy import datasets

    one_of_a_file = opts.model is None and len(scores) == 1 and opts.data.data not in datasets.DATASETS
    spec = {
        "kind": "kde_atoms",
        # a file's only model is named after the file: left unnamed, a renamed file keys the same streams
        "model": None if one_of_a_file else model,
        "low": opts.data.low,
        "high": opts.data.high,
        "bw_of": opts.bw_of,
        "find_atoms": opts.find_atoms,
        "bw_method": opts.bw_method,
        "bandwidth": opts.bandwidth,
        "bw_factor": opts.bw_factor,
        "name": model,
    }
    if opts.data.data in datasets.DATASETS:
        spec.update(dataset=opts.data.data, **(dict(opts.data.options) if opts.data.data == "deberta_mnli" else {}))
    else:
        spec.update(
            path=opts.data.data,
            score_column=opts.data.score_column,
            model_column=opts.data.model_column,
            missing=opts.data.missing,
            scale=opts.data.scale,
        )
    if opts.data.minimize:  # lower is better: the KDE of -x is fitted and drawn (the minimum's truths)
        spec["minimize"] = True
    # The random streams are the audit's, whatever the data (their content still joins the run's fingerprint):
    # the same seed draws the same numbers for any scores, so the audit of losses 1 - a mirrors that of a.
    spec["stream"] = "audit"
    n = opts.sample_size or x.size
    _parse_or_fail(lambda _: _audit_cost_iv(opts, n), cfg, out_dir)  # parse_audit checked the least n only
    _check_identity(out_dir, record)
    log.info("auditing %s (%d scores) at n = %d -> %s", model, x.size, n, out_dir)
    try:
        result = _parse_or_fail(lambda _: audit.run(opts, spec, n, out_dir), cfg, out_dir)
    except audit.AuditFailed as exc:  # chunks kept: a rerun resumes the studies
        _fail(str(exc), None, EXIT_FAILED)
    _write_config(cfg, out_dir, record)
    path = report.write_audit(result, opts, x, out_dir)
    print(report.plain(path.read_text().split("## Confidence bands")[1].split("![coverage]")[0].strip()))
    log.info("wrote %s", path)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="extrapolate")
def _extrapolate_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_extrapolate, cfg)


def _run_extrapolate(cfg: DictConfig, out_dir: Path) -> None:
    """``simstudy extrapolate``: fit the noisy quadratic law to each model's tail, bootstrap it through the runner
    (chunks stored in the run directory: a rerun resumes), write the tables, figure and EXTRAPOLATE.md."""
    from simstudy import extrapolate, report
    from simstudy.config import parse_extrapolate

    opts = _parse_or_fail(parse_extrapolate, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("extrapolate", cfg, opts.data)
    source = opts.data.data if opts.data.data in _datasets() else Path(opts.data.data).name
    _log_scores("extrapolate", scores, out_dir)
    try:  # every fit before anything is written: a refused sample leaves nothing behind
        analyses = extrapolate.prepare(scores, opts, source)
    except extrapolate.BadSample as exc:
        _fail(str(exc), out_dir)
    _check_identity(out_dir, record)
    try:
        result = extrapolate.run(analyses, opts, out_dir)
    except extrapolate.ExtrapolationFailed as exc:
        _fail(str(exc), None, EXIT_FAILED)
    _log_report(result.report)
    io.write_csv(result.curves, out_dir / "extrapolation.csv")
    io.write_csv(result.fits, out_dir / "fit.csv")
    io.write_csv(result.simulation, out_dir / "simulation.csv")
    report.write_extrapolate(result, opts, source, out_dir)
    _write_config(cfg, out_dir, record)
    io.write_json(
        {
            "command": "extrapolate",
            "config": OmegaConf.to_container(cfg, resolve=True),
            "runner": dataclasses.asdict(result.report),
            "environment": io.environment(),
        },
        out_dir / "run.json",
    )
    for line in _extrapolate_summary(result, opts.level, (opts.data.low, opts.data.high)):
        print(line)
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


def _datasets():
    from simstudy.datasets import DATASETS

    return DATASETS


def _extrapolate_summary(result, level: float, bounds: tuple[float, float] = (-np.inf, np.inf)) -> list[str]:
    """A few lines for the terminal: EXTRAPOLATE.md's warning where the law does not describe the scores, then each
    fit's b and c, and the median curve at n and 100 n; and, as EXTRAPOLATE.md says, where a curve leaves the
    scale ``bounds`` = (low, high)."""
    from simstudy.report import _beyond_bounds, misfit_banner, plain

    lines = [plain(line.removeprefix("> ")) for line in misfit_banner(result.fits, level) if line]
    med = result.curves[result.curves["curve"] == "median"]
    for _, f in result.fits.iterrows():
        n = int(f["runs"])
        best = "a" if f.get("convex", False) else "b"  # minimize=true: the convex law's a is the best score
        rows = med[(med["model"] == f["model"]) & (med["runs"] == n)].set_index("k")
        at = [k for k in (n, 10 * n, 100 * n) if k in rows.index]
        curve = "; ".join(
            f"k={int(k):,}: {rows.loc[k, 'estimate']:.4g} [{rows.loc[k, 'lower']:.4g}, {rows.loc[k, 'upper']:.4g}]"
            for k in at
        )
        if not np.isfinite(f["b_lower"]):  # the fit of all the runs beside a held-out check: not bootstrapped
            curve = "; ".join(f"k={int(k):,}: {rows.loc[k, 'estimate']:.4g}" for k in at)
            lines.append(
                f"{f['model']} (all {n:,} runs, not bootstrapped): {best} = {f[best]:.5g}, c = {int(f['c'])}; "
                f"median curve {curve}"
            )
            continue
        lines.append(
            f"{f['model']} ({n:,} runs): {best} = {f[best] + 0.0:.5g} "  # + 0.0: the mirror of 0 prints 0, not -0
            f"[{f[f'{best}_lower'] + 0.0:.5g}, {f[f'{best}_upper'] + 0.0:.5g}], "
            f"c = {int(f['c'])}; median curve {curve}"
        )
        lines += [
            f"{f['model']} ({n:,} runs): warning: {w}" for w in _beyond_bounds(result.curves, f["model"], n, *bounds)
        ]
    return lines


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
