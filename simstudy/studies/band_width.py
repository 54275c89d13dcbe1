"""Ablations of the tuning-curve bands: CDF band method, interval shape, median vs mean (Lourie et al. §5.3-5.4).

For each distribution, sample size n and band method, rounds of n simulated scores give the average lower
and upper band and the average width at each budget k, with MCSEs, beside the true curve -- the quantities
Figures 6-8 and 12-15 of Lourie et al. show for single samples -- and, exactly, the budget beyond which the
upper median band is trivial (:func:`~simstudy.bands.trivial_budget`).

Everything data-independent is precomputed: the CDF bands' bounds at the order statistics, hence which
order statistic each median band takes at each k, and the probability each mean band puts on each order
statistic at each k. A round's bands are then gathers and one matrix product, vectorized over rounds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .. import bands, schema, truth
from ..config import Config, StudyOptions, chunk_reps_option, reps_option
from ..registry import Headline, Study, register_study
from ..schema import option
from ..distributions import describe, sample_sorted
from ..runner import Task, task_seed
from . import base

__all__ = ["run", "Options", "headline", "STUDY"]

_SCHEME = "band_width/1"
_CURVES = ("lower", "point", "upper", "width")


@dataclass(frozen=True)
class _Plan:
    """For one (n, method, kind): how each curve at k = 1..K is formed from z = (low, Y_(1..n), high)."""

    index: dict  # median: curve -> (K,) indices into z
    mass: dict  # mean: curve -> (n + 2, K) probability of each point at each k


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict  # key -> (distribution name, n)
    plans: dict  # (n, method, kind) -> _Plan
    methods: tuple
    kinds: tuple
    ks: np.ndarray
    low: float
    high: float


def _plan(n: int, method: str, kind: str, confidence: float, ks: np.ndarray) -> _Plan:
    lo_i, hi_i = bands.pointwise_bounds(n, confidence, method)
    cdfs = {"lower": np.concatenate((hi_i, [1.0, 1.0])),  # the upper CDF band bounds the curve from below
            "point": np.concatenate(([0.0], np.arange(1, n + 1) / n, [1.0])),
            "upper": np.concatenate(([0.0], lo_i, [1.0]))}  # the lower CDF band bounds the curve from above
    if kind == "median":
        index = {}
        for curve, cdf in cdfs.items():
            thr = bands.quantile_thresholds(cdf, 0.5)
            index[curve] = np.minimum(np.searchsorted(thr, ks, side="left"), n + 1)
        return _Plan(index=index, mass={})
    mass = {curve: np.diff(np.power.outer(cdf, ks), axis=0, prepend=0.0) for curve, cdf in cdfs.items()}
    return _Plan(index={}, mass=mass)


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    name, n = work.cells[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    y = sample_sorted(work.distributions[name], task.reps, n, rng=rng)
    z = np.concatenate([np.full((task.reps, 1), work.low), y, np.full((task.reps, 1), work.high)], axis=1)
    # sums[m, kind, curve, 0 or 1, k]: sum and sum of squares over rounds
    sums = np.zeros((len(work.methods), len(work.kinds), len(_CURVES), 2, work.ks.size))
    for m, method in enumerate(work.methods):
        for j, kind in enumerate(work.kinds):
            plan = work.plans[(n, method, kind)]
            if kind == "median":
                curves = {c: z[:, plan.index[c]] for c in ("lower", "point", "upper")}
            else:
                curves = {c: z @ plan.mass[c] for c in ("lower", "point", "upper")}
            curves["width"] = curves["upper"] - curves["lower"]
            for c, curve in enumerate(_CURVES):
                sums[m, j, c, 0] = curves[curve].sum(axis=0)
                sums[m, j, c, 1] = (curves[curve] ** 2).sum(axis=0)
    return {"sums": sums}


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the band-width ablations for every distribution and sample size of ``config``."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = dict(config.study.options)
    sizes, methods, kinds = opts["sample_sizes"], tuple(opts["methods"]), tuple(opts["kinds"])
    confidence, max_k = opts["confidence"], opts["max_k"]
    dists = {d.name: d.build() for d in config.distributions}
    low, high = next(iter(dists.values())).support
    ks = np.arange(1, max_k + 1, dtype=np.float64)
    plans = {(n, m, kind): _plan(n, m, kind, confidence, ks) for n in sizes for m in methods for kind in kinds}
    cells = {base.cell_key(distribution=spec.key, n=n): (spec.name, n)
             for spec in config.distributions for n in sizes}
    work = _Work(config.seed, dists, cells, plans, methods, kinds, ks, low, high)
    run_ = base.run_chunks(config, out_dir, scheme=_SCHEME, cells=list(cells), chunk_fn=partial(_run_chunk, work),
                           settings={"sizes": sizes, "methods": methods, "kinds": kinds, "confidence": confidence,
                                     "max_k": max_k})
    R = config.study.reps
    rows = []
    for key, (name, n) in run_.succeeded(cells).items():
        head = dict(cell=key, distribution=name, n=n, confidence=confidence)
        true = {"median": truth.quantile_tuning_curve(dists[name], ks), "mean": truth.mean_tuning_curve(dists[name], ks)}
        sums = run_.total(key, "sums")
        for j, kind in enumerate(kinds):
            rows += [dict(head, method="truth", kind=kind, k=int(k), measure="curve", estimate=float(v), mcse=0.0,
                          reps=0) for k, v in zip(ks, true[kind])]
            for m, method in enumerate(methods):
                if kind == "median":
                    rows.append(dict(head, method=method, kind=kind, k=0, measure="trivial_k",
                                     estimate=bands.trivial_budget(n, confidence, method), mcse=0.0, reps=0))
                for c, curve in enumerate(_CURVES):
                    mean = sums[m, j, c, 0] / R
                    var = np.clip((sums[m, j, c, 1] - R * mean**2) / (R - 1), 0.0, None)
                    rows += [dict(head, method=method, kind=kind, k=int(k), measure=curve, estimate=float(a),
                                  mcse=float(np.sqrt(b / R)), reps=R) for k, a, b in zip(ks, mean, var)]
    metadata = {"confidence": confidence, "distributions": {name: describe(d) for name, d in dists.items()}}
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The band_width study's options."""

    reps: int = reps_option(1024)
    chunk_reps: int = chunk_reps_option(512)
    sample_sizes: tuple = option((6, 48), "the sample sizes n (one cell each per distribution)",
                                 schema.listed(schema.integer(minimum=2), what="at least 1 sample sizes"))
    methods: tuple = option(("dkw", "ks", "ld_equal_tailed", "ld_highest_density"),
                            "the CDF band methods (or a plug-in's import path)",
                            schema.listed(schema.choice(lambda: bands.METHODS), what="at least one method",
                                          sort=False))
    kinds: tuple = option(("median", "mean"), "which tuning curves: median, mean or both",
                          schema.listed(schema.choice(("median", "mean")), what="at least one of median, mean",
                                        sort=False))
    confidence: float = option(0.8, "the simultaneous coverage of the bands", schema.level())
    max_k: int = option(48, "budgets k = 1..max_k", schema.integer(minimum=2))


def headline(summary: pd.DataFrame) -> str:
    """Average band widths at a few budgets, and the exact budget where the upper median band is trivial."""
    w = summary[(summary["measure"] == "width") & summary["k"].isin([1, 5, 10, 20, 48])]
    t = summary[summary["measure"] == "trivial_k"]
    return (f"average band width (upper - lower)\n"
            f"{w.pivot_table(index=['distribution', 'n', 'kind', 'k'], columns='method', values='estimate').round(4).to_string()}"
            f"\nbudget where the upper median band becomes trivial (exact)\n"
            f"{t.pivot_table(index='n', columns='method', values='estimate').round(2).to_string()}")


STUDY = register_study(Study(
    kind="band_width", options=Options, run=run, figure="simstudy.plots.band_width_figure", headline=headline,
    sweep=Headline({"measure": "width"}, "k", "method", "band width"), continuous=True,
    summary="average tuning-curve bands and widths by band method, shape and kind (Lourie et al. §5.3-5.4)"))
