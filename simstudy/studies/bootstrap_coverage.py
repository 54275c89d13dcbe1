"""Pointwise coverage of percentile-bootstrap bands for the mean tuning curve (Lourie et al. §5.1, Figure 4).

Tang et al. (2020) showed the bootstrap fails for tuning curves; Lourie et al. reproduce it for the U and V
estimators. Each round draws ``study.sample_size`` scores from a continuous distribution with a known mean
tuning curve (:func:`simstudy.truth.mean_tuning_curve`, by quadrature), resamples them ``study.resamples``
times, and takes the ``(1 -/+ confidence) / 2`` percentiles of each estimator's curve over the resamples as
a pointwise band. Coverage at each budget k is the fraction of rounds whose band contains the true curve
there, with a Clopper-Pearson interval. It collapses as k grows: near k = n the estimates are driven by
the sample maximum, which the bootstrap cannot exceed.

Resampled indices are small integers, so each resample is sorted by a radix sort of its indices (numpy's
stable sort on 8/16-bit integers) and every estimator at every k is one matrix product per round.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .. import estimators, schema, truth
from ..config import Config, StudyOptions, chunk_reps_option, reps_option
from ..distributions import describe, sample_sorted
from ..metrics import clopper_pearson
from ..registry import Headline, Study, register_study
from ..runner import Task, task_seed
from ..schema import option
from . import base

__all__ = ["run", "Options", "headline", "STUDY"]

_SCHEME = "bootstrap_coverage/1"


@dataclass(frozen=True)
class _Cell:
    key: str
    distribution: str
    truth: np.ndarray  # (n,) true mean tuning curve at k = 1..n


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict
    n: int
    resamples: int
    confidence: float
    weights: np.ndarray  # (E * n, n): each estimator at k = 1..n, estimator-major


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.distributions[cell.distribution]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    samples = sample_sorted(dist, task.reps, work.n, rng=rng)
    boot_rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1))
    E = work.weights.shape[0] // work.n
    alpha = (1 - work.confidence) / 2
    covered = np.zeros((E, work.n), dtype=np.int64)
    dtype = np.int8 if work.n <= 127 else np.int16
    for x in samples:
        idx = boot_rng.integers(0, work.n, size=(work.resamples, work.n), dtype=dtype)
        idx.sort(axis=1, kind="stable")  # radix sort of small integers: the resample sorted
        curves = x[idx] @ work.weights.T  # (resamples, E * n)
        low, high = np.quantile(curves, [alpha, 1 - alpha], axis=0)
        inside = (low <= np.tile(cell.truth, E)) & (np.tile(cell.truth, E) <= high)
        covered += inside.reshape(E, work.n)
    return {"covered": covered}


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the bootstrap-coverage study for every distribution of ``config``."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    n, resamples, confidence, ci_level = opts.sample_size, opts.resamples, opts.confidence, opts.ci_level
    specs = [s for s in config.estimators if s.method != "bootstrap"]
    dists = {d.name: d.build() for d in config.distributions}
    ks = np.arange(1, n + 1)
    cells = {}
    for spec in config.distributions:
        key = base.cell_key(distribution=spec.key, n=n)
        cells[key] = _Cell(key, spec.name, truth.mean_tuning_curve(dists[spec.name], ks.astype(float)))
    weights = np.concatenate([estimators.weights(n, s.method) for s in specs])
    work = _Work(config.seed, dists, cells, n, resamples, confidence, weights)
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={"n": n, "resamples": resamples, "confidence": confidence, "estimators": [s.method for s in specs]},
    )
    rows = []
    reps = config.study.reps
    for key, cell in run_.succeeded(cells).items():
        covered = run_.total(key, "covered")
        low, high = clopper_pearson(covered, reps, ci_level)
        for e, est_spec in enumerate(specs):
            p = covered[e] / reps
            rows += [
                dict(
                    cell=key,
                    distribution=cell.distribution,
                    estimator=est_spec.name,
                    k=int(k),
                    nominal=confidence,
                    truth=float(cell.truth[k - 1]),
                    estimate=float(p[k - 1]),
                    mcse=float(np.sqrt(p[k - 1] * (1 - p[k - 1]) / reps)),
                    ci_low=float(low[e, k - 1]),
                    ci_high=float(high[e, k - 1]),
                    reps=reps,
                )
                for k in ks
            ]
    metadata = {
        "sample_size": n,
        "resamples": resamples,
        "confidence": confidence,
        "ci_level": ci_level,
        "distributions": {name: describe(d) for name, d in dists.items()},
    }
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The bootstrap_coverage study's options."""

    reps: int = reps_option(4096)
    chunk_reps: int = chunk_reps_option(256)
    sample_size: int = option(50, "scores per simulated search (n)", schema.integer(minimum=2))
    resamples: int = option(4096, "bootstrap resamples per search", schema.integer(minimum=2))
    confidence: float = option(0.95, "the pointwise level of the percentile-bootstrap bands", schema.level())
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals of the coverage", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Pointwise coverage at a few budgets k, per distribution and estimator."""
    table = summary[summary["k"].isin([1, 2, 5, 10, 20, 30, 40, 50])].pivot_table(
        index="k", columns=["distribution", "estimator"], values="estimate"
    )
    return (
        f"pointwise coverage of the bootstrap bands (nominal {summary['nominal'].iloc[0]:.2f})\n"
        f"{table.round(3).to_string()}"
    )


STUDY = register_study(
    Study(
        kind="bootstrap_coverage",
        options=Options,
        run=run,
        figure="simstudy.plots.bootstrap_coverage_figure",
        headline=headline,
        sweep=Headline({}, "k", "estimator", "pointwise coverage"),
        continuous=True,
        summary="pointwise coverage of percentile-bootstrap bands for the mean tuning curve (Lourie et al. §5.1)",
    )
)
