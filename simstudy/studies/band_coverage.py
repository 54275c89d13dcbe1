"""Coverage of simultaneous confidence bands in simulation (Lourie et al. §5.2, Figures 5 and 11).

Each cell is one continuous score distribution with a known CDF (typically a reflected KDE fitted to real
tuning results). Each round draws ``study.sample_size`` scores, builds every band at every nominal level,
and records whether it covers the truth. Three checks, reported separately:

- ``cdf``: the CDF band contains F everywhere (including the upper band below the first score):
  ``l_i <= F(Y_(i))`` and ``F(Y_(i)-) <= u_i``, which differ only for a distribution with atoms;
- ``curve``: the quantile tuning-curve band contains the true curve ``F^-1(q^(1/k))`` for *every* real k > 0,
  checked exactly at the band's jump points (between them the band is flat and the curve rises). By
  Lourie et al.'s Prop. 1 this is the same event as ``cdf``; here it is computed independently, from the
  quantile function rather than the CDF;
- ``curve_integer_k``: the band contains the curve at k = 1..n only -- a weaker event that covers more
  often than nominal (which is why it must not be mistaken for the guarantee).

The bands' bounds on ``F(Y_(i))`` do not depend on the data, so every check reduces to comparisons of the
sorted sample (or its CDF values) with precomputed vectors, vectorized over rounds. Coverage is a
proportion: reported with a Clopper-Pearson interval at ``study.ci_level``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .. import bands, schema
from ..config import Config, StudyOptions, chunk_reps_option, reps_option
from ..registry import Headline, Study, register_study
from ..schema import option
from ..metrics import clopper_pearson
from ..distributions import describe, sample_sorted
from ..runner import Task, task_seed
from . import base

__all__ = ["run", "CHECKS", "Options", "headline", "STUDY"]

_SCHEME = "band_coverage/1"
CHECKS = ("cdf", "curve", "curve_integer_k")


@dataclass(frozen=True)
class _Checks:
    """Data-independent pieces of the checks for one (distribution, method, level), all over i = 1..n."""

    low: np.ndarray  # l_i <= F(Y_(i))
    high: np.ndarray  # F(Y_(i)) <= u_i
    upper_steps: np.ndarray  # bool: the upper curve band has a step of positive length valued Y_(i)
    upper_need: np.ndarray  # the true curve at that step's right end: F^-1(l_i); needs <= Y_(i)
    lower_steps: np.ndarray
    lower_need: np.ndarray  # F^-1(u_i); needs >= Y_(i)
    k_upper: np.ndarray  # (n,) index into (low, Y_(1..n), high) of the upper band at k = 1..n
    k_lower: np.ndarray
    k_truth: np.ndarray  # (n,) true curve at k = 1..n


@dataclass(frozen=True)
class _Cell:
    key: str
    distribution: str
    checks: dict  # (method, level) -> _Checks


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict
    n: int
    methods: tuple
    levels: tuple


def _prepare(dist, n: int, method: str, level: float, q: float) -> _Checks:
    lo_i, hi_i = bands.pointwise_bounds(n, level, method)
    lo_i, hi_i = np.asarray(lo_i, dtype=np.float64), np.asarray(hi_i, dtype=np.float64)
    # The upper curve band is min{z_j : q <= L_j^k} over z = (low, Y_(1..n), high), L = (0, l, 1).
    thr_l = bands.quantile_thresholds(np.concatenate(([0.0], lo_i, [1.0])), q)
    upper_steps = (thr_l[1:-1] > thr_l[:-2])  # steps of positive length valued Y_(i)
    # The lower band uses U = (u_1, u_2..u_n, 1) at (low, Y_(1..n), high).
    ucdf = np.concatenate((hi_i, [1.0]))
    thr_u = bands.quantile_thresholds(ucdf, q)
    lower_steps = thr_u[1:] > thr_u[:-1]  # step valued Y_(i) starts where the previous ends: thr_u[i-1]
    ks = np.arange(1, n + 1, dtype=np.float64)
    return _Checks(
        low=lo_i, high=hi_i,
        upper_steps=upper_steps, upper_need=dist.ppf(np.clip(lo_i, 0, 1)),
        lower_steps=lower_steps, lower_need=dist.ppf(np.clip(ucdf[:-1], 0, 1)),
        k_upper=np.minimum(np.searchsorted(thr_l, ks, side="left"), n + 1),
        k_lower=np.minimum(np.searchsorted(thr_u, ks, side="left"), n + 1),
        k_truth=dist.ppf(q ** (1.0 / ks)),
    )


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.distributions[cell.distribution]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    y = sample_sorted(dist, task.reps, work.n, rng=rng)  # (reps, n)
    F = dist.cdf(y)
    # The upper bound holds just left of each score: F(Y_(i)-) <= u_i (the same as F(Y_(i)) without atoms).
    F_left = dist.cdf_left(y) if getattr(dist, "has_atoms", False) else F
    lo, hi = dist.support
    z = np.concatenate([np.full((task.reps, 1), lo), y, np.full((task.reps, 1), hi)], axis=1)
    hits = np.zeros((len(CHECKS), len(work.methods), len(work.levels)), dtype=np.int64)
    for m, method in enumerate(work.methods):
        for v, level in enumerate(work.levels):
            c = cell.checks[(method, level)]
            hits[0, m, v] = np.sum(np.all((F >= c.low) & (F_left <= c.high), axis=1))
            upper_ok = np.all(c.upper_need[c.upper_steps] <= y[:, c.upper_steps], axis=1)
            lower_ok = np.all(c.lower_need[c.lower_steps] >= y[:, c.lower_steps], axis=1)
            hits[1, m, v] = np.sum(upper_ok & lower_ok)
            on_grid = (z[:, c.k_lower] <= c.k_truth) & (c.k_truth <= z[:, c.k_upper])
            hits[2, m, v] = np.sum(np.all(on_grid, axis=1))
    return {"hits": hits}


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the band-coverage study for every distribution of ``config``."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = dict(config.study.options)
    n, methods, levels = opts["sample_size"], tuple(opts["methods"]), tuple(opts["levels"])
    q, ci_level = opts["quantile"], opts["ci_level"]
    dists = {d.name: d.build() for d in config.distributions}
    for name, dist in dists.items():
        if dist.is_discrete:
            raise ValueError(f"distribution {name} is discrete: exact coverage needs a continuous distribution")

    t0 = time.perf_counter()
    cells = {}
    for spec in config.distributions:
        key = base.cell_key(distribution=spec.key, n=n)
        cells[key] = _Cell(key, spec.name, {(m, v): _prepare(dists[spec.name], n, m, v, q)
                                            for m in methods for v in levels})
    prepare_seconds = time.perf_counter() - t0

    work = _Work(config.seed, dists, cells, n, methods, levels)
    run_ = base.run_chunks(config, out_dir, scheme=_SCHEME, cells=list(cells), chunk_fn=partial(_run_chunk, work),
                           settings={"n": n, "methods": methods, "levels": levels, "quantile": q})
    rows = []
    for key, cell in run_.succeeded(cells).items():
        hits = run_.total(key, "hits")
        reps = config.study.reps
        low, high = clopper_pearson(hits, reps, ci_level)
        for c, check in enumerate(CHECKS):
            for m, method in enumerate(methods):
                for v, level in enumerate(levels):
                    p = hits[c, m, v] / reps
                    rows.append(dict(cell=key, distribution=cell.distribution, method=method, nominal=level,
                                     check=check, n=n, estimate=p, mcse=float(np.sqrt(p * (1 - p) / reps)),
                                     ci_low=float(low[c, m, v]), ci_high=float(high[c, m, v]), reps=reps))
    summary = pd.DataFrame(rows)
    metadata = {"sample_size": n, "quantile": q, "ci_level": ci_level,
                "distributions": {name: describe(d) for name, d in dists.items()},
                "timings": {"prepare_seconds": prepare_seconds}}
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The band_coverage study's options."""

    reps: int = reps_option(1024)
    chunk_reps: int = chunk_reps_option(1024)
    sample_size: int = option(48, "scores per round (n)", schema.integer(minimum=2))
    levels: tuple = option((0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99),
                           "the nominal coverages to check", schema.listed(schema.level(), what="at least one level"))
    methods: tuple = option(("ld_highest_density",), "the CDF band methods (dkw, ks, ld_equal_tailed, "
                            "ld_highest_density, or a plug-in's import path)",
                            schema.listed(schema.choice(lambda: bands.METHODS), what="at least one method",
                                          sort=False))
    quantile: float = option(0.5, "the tuning curve's quantile (0.5: the median)", schema.level())
    ci_level: float = option(0.99, "the level of the Clopper-Pearson intervals of the coverage", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Empirical coverage against nominal, and how often the nominal lies outside the CP interval."""
    s = summary[summary["check"] != "cdf"]
    table = s.pivot_table(index="nominal", columns=["distribution", "method", "check"], values="estimate")
    lines = [f"empirical coverage (rows: nominal)\n{table.round(3).to_string()}"]
    curve = s[s["check"] == "curve"]
    outside = (curve["ci_low"] > curve["nominal"]) | (curve["ci_high"] < curve["nominal"])
    for method, miss in outside.groupby(curve["method"]).sum().items():
        lines.append(f"{method}: nominal level outside the CP interval in {miss} of "
                     f"{int((curve['method'] == method).sum())} cases (exact bands: about 1%; DKW is conservative)")
    return "\n".join(lines)


STUDY = register_study(Study(
    kind="band_coverage", options=Options, run=run, figure="simstudy.plots.band_coverage_figure", headline=headline,
    sweep=Headline({"check": "curve"}, "nominal", "method", "empirical coverage"), continuous=True,
    summary="coverage of simultaneous CDF and tuning-curve bands in simulation (Lourie et al. §5.2)"))
