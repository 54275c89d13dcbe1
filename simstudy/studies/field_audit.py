"""The field audit: tuning-curve estimators, bands and extrapolation on real search spaces (issue 27).

Public tabular HPO benchmarks evaluated every configuration of their search space, several seeds each
(:mod:`simstudy.populations`): the truth of a random search over them is exact. For every population of
``study.populations`` (main metric each; a loss is mirrored, ``-loss``, as ``minimize: true`` draws it) and
every sample size n of ``study.sample_sizes`` (one cell per (population, n)) the study answers four questions:

==========  ==========================================================================================
question    what is measured
==========  ==========================================================================================
Q1          EVP estimators U, V, W: exact bias and RMSE of the expected best of n' for n' = 1..n
            (:func:`simstudy.stats.order_stats.estimator_moments`: no Monte Carlo), in score units and
            relative to the population's interquartile range (IQR)
Q2          CDF bands (``study.methods``) at the levels ``study.levels``: simultaneous coverage of the
            exact median tuning curve for every real k, by Monte Carlo (``study.reps`` rounds of n
            draws), with Clopper-Pearson intervals at ``study.ci_level`` (the check ``curve`` of
            :mod:`simstudy.studies.band_coverage`, its kernels reused)
Q3          the noisy quadratic law fitted to the first ``study.fit_reps`` rounds (every round when null,
            so that ``study.precision`` on its measures plans each cell's fits; threshold at the
            median, every c in 1..10, b bounded by the metric's natural top: an accuracy 1, a percent
            100, a mirrored loss 0): error of the predicted median and mean tuning curves at
            k = ``study.horizons`` x n against the exact population curves, coverage of its parametric
            bootstrap band (``study.n_boot`` refits, pointwise at the level ``study.fit_level``), share
            of fits on the noise-free boundary, failed fits, and the exact budget beyond which the
            nonparametric LD band turns trivial
Q4          the sample-size rule (Lourie et al. 2024, Figure 9) on real spaces: the largest budget whose
            upper LD highest-density band stays below the population's best score (informative), per
            round, against the distribution-free budget at which the band reaches the top of the support.
            The two differ only in rounds whose sample holds the population's best (``p_top``): otherwise
            the upper band is at most the sample's best until it jumps to the top of the support, at a
            budget that depends on n alone, so "the data-free rule held" restates a small ``p_top``. What
            the data do answer: how far above the exact median curve the upper band lies where it bounds,
            at 1/4, 1/2 and all of the data-free budget (``upper_gap``, relative to the IQR)
==========  ==========================================================================================

Summary (tidy): one row per (population, n, question, measure, ...), with columns ``question`` (``q1``..``q4``),
``benchmark``, ``n``, ``estimator`` (Q1), ``n_prime`` (Q1), ``method`` and ``level`` (Q2, Q4), ``k`` and
``curve`` (Q3), ``measure``, ``estimate``, ``mcse``, ``ci_low``, ``ci_high`` and ``reps`` (columns a row does
not use are NaN or ""). Measures:

=======================  =========================================================================================
measure                  meaning
=======================  =========================================================================================
``bias``, ``rmse``       Q1 (exact, mcse 0) and Q3 (over the fitted rounds, with MCSE), in score units
``relative_*``           ``relative_bias``, ``relative_rmse``: the same divided by the population's IQR
                         (``F^-1(0.75) - F^-1(0.25)``, exact)
``truth``                Q1: the exact expected best of n'; Q3: the exact median or mean curve at k
``coverage``             Q2: share of rounds whose band covers the median curve for every real k
``band_coverage``        Q3: share of fitted rounds whose bootstrap band covers the median curve at k
``p_fail``               Q3: share of fitted rounds whose fit failed (fewer than 8 scores above the median, or a
                         non-finite fit); ``p_hit_bound``: fitted on the boundary o = 0
``ld_trivial_k``         Q3/Q4: exact budget beyond which the LD highest-density band is trivial (data-free)
``informative_k``        Q4: mean largest budget whose upper band lies below the population's best score
``samples_per_step``     Q4: n / ``informative_k`` (delta-method MCSE): scores needed per bounded iteration
``p_top``                Q4: share of rounds whose best score is the population's best
``upper_gap``            Q4: mean of (upper LD band - exact median curve) / IQR at the budget ``k``, a fraction
                         (:data:`GAP_FRACTIONS`) of the data-free budget ``ld_trivial_k``
=======================  =========================================================================================

Exact Q1 moments do not depend on the draws: they are computed with each cell's first chunk, so they run in
parallel and resume like the Monte Carlo. Streams: a chunk's rounds come from ``task_seed(seed, cell, chunk,
0)`` (the same rounds feed Q2, Q3 and Q4), its bootstrap draws from ``task_seed(seed, cell, chunk, 1)``;
results are sums added in chunk order, so the summary is bit-identical for any ``runner.n_jobs``. The run
writes ``FIELD.md`` and one figure per question (:mod:`simstudy.studies.field_audit_page`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import from_spec, sample_sorted
from simstudy.engine.runner import Task, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import ConfigError, option
from simstudy.stats import bands, estimators, order_stats, truth
from simstudy.stats.metrics import clopper_pearson
from simstudy.stats.parametric_fit import MIN_TAIL, Threshold
from simstudy.stats.quadratic import curves
from simstudy.studies import band_coverage as _bc
from simstudy.studies import base
from simstudy.studies import parametric_extrapolation as _pe
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["Options", "POPULATIONS", "B_MAX", "run", "headline", "field_audit_figure", "STUDY"]

_SCHEME = "field_audit/3"  # 2: Q1 computed on the mirror when the long tail is at the bottom; 3: Q4 upper_gap
#: The estimators of Q1, the curves of Q3, the checks of Q2 (the band_coverage kernel's order).
ESTIMATORS = ("u", "v", "w")
CURVES = ("median", "mean")
#: The band whose triviality Q3 and Q4 report (Lourie et al. recommend it; Figure 9 uses it).
_LD = "ld_highest_density"
_QUANTILE = 0.5  # the median tuning curve, and the fit's threshold at the median (as the paper)
#: Q4's budgets, as fractions of the data-free budget beyond which the upper LD band is trivial.
GAP_FRACTIONS = (0.25, 0.5, 1.0)


def _catalogue() -> tuple[str, ...]:
    from simstudy import populations  # the catalogue only: no file is read

    return tuple(f"{b}/{d}" for b, d in populations.CATALOGUE)


#: Every population the audit knows, ``benchmark/dataset`` (the 15 of :data:`simstudy.populations.CATALOGUE`).
POPULATIONS = _catalogue()

#: The natural top of each family's main metric, as a researcher knows it without the population: it bounds
#: the fitted best score b (Q3). HPOBench accuracies are at most 1, NAS-Bench-201's at most 100 (percent), and
#: HPOLib's losses at least 0, so the mirrored score ``-loss`` is at most 0.
B_MAX = {"hpobench": 1.0, "nasbench201": 100.0, "hpolib": 0.0}


@schema.accepting("a population benchmark/dataset")
def _population_check(key: str, value: Any) -> str:
    if value not in POPULATIONS:
        raise ConfigError(f"{key}: unknown population {value!r} (valid: {', '.join(POPULATIONS)})")
    return value


_populations_listed = schema.listed(_population_check, what="at least one population", unique=False, sort=False)


@schema.accepting(_populations_listed.accepts + ", each at most once")  # type: ignore[attr-defined]
def _populations_check(key: str, value: Any) -> tuple[str, ...]:
    # A population listed twice would be audited twice under one name: its cells (same population, same n)
    # would share a key, and the page would count it twice. A typo, never a wish: refuse, naming it.
    populations = _populations_listed(key, value)
    for i, p in enumerate(populations):
        if p in populations[:i]:
            raise ConfigError(f"{key} lists {p!r} twice, got {value!r}: list each population once")
    return populations


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a field_audit study, the keys ``study.*`` of its config.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> opts = schema.parse(Options, {"populations": ["hpobench/car"], "sample_sizes": [24, 12]}, "study.")
    >>> opts.populations, opts.sample_sizes, opts.levels
    (('hpobench/car',), (12, 24), (0.8, 0.95))
    """

    reps: int = reps_option(400)
    chunk_reps: int = chunk_reps_option(100)
    populations: tuple[str, ...] = option(
        POPULATIONS,
        "the populations audited, benchmark/dataset (default: all 15; a subset for a quick run)",
        _populations_check,
    )
    sample_sizes: tuple[int, ...] = option(
        (12, 24, 48, 96), "the sample sizes n (trials of one search)", schema.listed(schema.integer(minimum=2))
    )
    levels: tuple[float, ...] = option(
        (0.8, 0.95), "the bands' nominal simultaneous coverages (Q2, Q4)", schema.listed(schema.level())
    )
    methods: tuple[str, ...] = option(
        ("dkw", "ks", "ld_equal_tailed", "ld_highest_density"),
        "the CDF band methods of Q2 (built-in: their bounds on F(Y_(i)) do not depend on the data)",
        schema.listed(schema.choice(bands.METHODS), what="at least one method", sort=False),
    )
    fit_reps: int | None = option(
        16,
        "rounds per cell fitted with the noisy quadratic law (Q3): the first ones; null: every round, so that "
        "study.precision on a Q3 measure (e.g. {relative_rmse: 0.02}) plans the fits of each cell",
        schema.optional(schema.integer(minimum=0)),
    )
    n_boot: int = option(20, "parametric bootstrap refits per fitted round (Q3; 0: no band)", _pe.n_boot_check)
    fit_level: float = option(0.8, "the level of the bootstrap band of Q3 (pointwise)", schema.level())
    horizons: tuple[float, ...] = option(
        (1.0, 10.0, 100.0), "the budgets of Q3 as multiples k / n", schema.listed(schema.number(positive=True))
    )
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals", schema.level())


@dataclass(frozen=True)
class _Cell:
    key: str
    population: str
    n: int
    checks: dict  # (method, level) -> band_coverage._Checks
    top_thresholds: dict  # level -> (n + 2,) the LD band's quantile thresholds over (low, Y_(1..n), high)
    gap_index: dict  # level -> (F,) the index into (low, Y_(1..n), high) of the upper band at the Q4 budgets
    gap_truth: np.ndarray  # (levels, F): the exact median curve at the Q4 budgets
    ks: np.ndarray  # Q3 budgets
    truth: np.ndarray  # (K, 2): exact median, mean curves at ks
    b_max: float


@dataclass(frozen=True)
class _Work:
    seed: int
    dists: dict  # population -> Bag
    cells: dict
    methods: tuple
    levels: tuple
    fit_reps: int | None  # None: every round
    boot: Any  # parametric_extrapolation._Work: what its bootstrap reads (quantile, level, n_boot)


def _spec(population: str) -> dict:
    from simstudy import populations

    benchmark, dataset = population.split("/")
    return {
        "benchmark": benchmark,
        "dataset": dataset,
        "minimize": populations.direction(benchmark) == "minimize",
        "name": population,
    }


def _q1(dist, n: int) -> dict[str, np.ndarray]:
    """Exact mean and SD of U, V, W for the expected best of n' = 1..n from samples of n: (3, n) each.

    The order statistics' moments are exact sums, but summed in rounded arithmetic: a gap g between atoms
    enters the covariances through terms like ``g^2 P(1 - P)``, and where P is near 1 (a huge gap at the bottom,
    under every order statistic: HPOLib's diverged losses, mirrored) ``1 - P`` loses every digit, which is an
    error of about ``eps g^2`` (order 1 for a gap of 10^8), not a rounding of the answer. So when the long tail
    is at the bottom, the moments are computed for the mirrored population, where that gap lies above every
    order statistic but the last and its indicators are rare (``X_(i) = -Y_(n+1-i)`` for ``Y = -X``): the
    same exact sums, without the cancellation.
    """
    atoms, cum = dist.atoms, dist.cum_prob
    middle = float(dist.ppf(0.5))
    flip = middle - atoms[0] > atoms[-1] - middle
    if flip:
        below = np.concatenate(([0.0], cum[:-1]))  # P(X < atom)
        mirrored_cum = (1.0 - below)[::-1].copy()
        mirrored_cum[-1] = 1.0
        m = order_stats.order_statistic_moments(-atoms[::-1], mirrored_cum, n)
        mean, cov = -m.mean[::-1], m.cov[::-1, ::-1]
    else:
        m = order_stats.order_statistic_moments(atoms, cum, n)
        mean, cov = m.mean, m.cov
    out: dict[str, list] = {"q1_mean": [], "q1_sd": []}
    for method in ESTIMATORS:
        W = estimators.weights(n, method, np.arange(1, n + 1))  # (n', n): linear in the order statistics
        out["q1_mean"].append(W @ mean)
        out["q1_sd"].append(np.sqrt(np.maximum(np.einsum("ji,ik,jk->j", W, cov, W), 0.0)))
    return {k: np.stack(v) for k, v in out.items()}


def _informative_k(cell: _Cell, z: np.ndarray, best: float) -> dict[float, np.ndarray]:
    """Per round, the largest budget whose upper LD band lies below ``best``, per level.

    The upper band at k is ``z_j`` for the smallest j whose threshold reaches k (thresholds non-decreasing), so
    it stays below ``best`` exactly up to the threshold of the last ``z_j < best``.
    """
    below = (z < best).sum(axis=1) - 1  # index of the last z_j < best (-1: none)
    out = {}
    for level, thr in cell.top_thresholds.items():
        out[level] = np.where(below >= 0, thr[np.maximum(below, 0)], 0.0)
    return out


def _fit_chunk(work: _Work, cell: _Cell, y: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Q3 on the rounds ``y`` (m, n): error sums of the fitted curves, bootstrap hits, counts."""
    K = cell.ks.size
    res = {
        "q3_counts": np.zeros(4, np.int64),  # fitted rounds, failed, on the boundary, band made
        "q3_err": np.zeros((K, 2, 2)),  # (k, curve, [sum, sum of squares])
        "q3_hits": np.zeros(K, np.int64),
    }
    m = y.shape[0]
    res["q3_counts"][0] = m
    if m == 0:
        return res
    t = Threshold(quantile=_QUANTILE).of(y)
    ok = (y > t[:, None]).sum(axis=1) >= MIN_TAIL
    fits = {}
    if ok.any():
        out = _pe.fit(y[ok], t[ok], b_max=cell.b_max)
        med, avg = curves(out["a"], out["b"], out["c"], out["o"], False, cell.ks)
        good = _pe.finite_fit(out, (med, avg))
        fits = {k: v[good] for k, v in out.items()}
        err = np.stack([med[good], avg[good]], axis=-1) - cell.truth[None]  # (g, K, 2)
        res["q3_err"] = np.stack([err.sum(axis=0), (err * err).sum(axis=0)], axis=-1)
        res["q3_counts"][2] = int(fits["hit_bound"].sum())
    g = fits["a"].size if fits else 0
    res["q3_counts"][1] = m - g
    if work.boot.n_boot and g:
        _, _, lo, hi, have, _ = _pe.bootstrap(work.boot, fits, cell.n, cell.ks, rng, cell.b_max)
        tr = cell.truth[:, 0]
        res["q3_hits"] = ((lo[have] <= tr) & (tr <= hi[have])).sum(axis=0).astype(np.int64)
        res["q3_counts"][3] = int(have.sum())
    return res


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.dists[cell.population]
    n = cell.n
    y = sample_sorted(dist, task.reps, n, rng=np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0)))
    F, F_left = dist.cdf(y), dist.cdf_left(y)
    low, best = dist.support
    z = np.concatenate([np.full((task.reps, 1), low), y, np.full((task.reps, 1), best)], axis=1)
    hits = np.zeros((len(_bc.CHECKS), len(work.methods), len(work.levels)), dtype=np.int64)
    for i, method in enumerate(work.methods):
        for j, level in enumerate(work.levels):
            hits[:, i, j] = _bc.hit_counts(cell.checks[(method, level)], y, z, F, F_left)
    k_inf = _informative_k(cell, z, best)
    gap = np.stack([z[:, cell.gap_index[v]] for v in work.levels], axis=1) - cell.gap_truth  # (reps, levels, F)
    res: dict[str, np.ndarray] = {
        "hits": hits,
        "q4_k": np.array([[k_inf[v].sum(), (k_inf[v] ** 2).sum()] for v in work.levels]),
        "q4_top": np.array([int((y[:, -1] >= best).sum())], np.int64),
        "q4_gap": np.stack([gap.sum(axis=0), (gap * gap).sum(axis=0)], axis=-1),  # (levels, F, [sum, squares])
    }
    m = task.reps if work.fit_reps is None else int(np.clip(work.fit_reps - task.first_rep, 0, task.reps))
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1))
    res.update(_fit_chunk(work, cell, y[:m], rng))
    if task.chunk == 0:  # exact, independent of the draws: once per cell, with its first chunk
        res.update(_q1(dist, n))
    return res


def _prepare_cell(key: str, population: str, dist, n: int, opts: Options) -> _Cell:
    from simstudy import plugins

    checks = {}
    for method in opts.methods:
        band = plugins.band_method(method)
        for level in opts.levels:
            checks[(method, level)] = _bc.prepare(dist, *band.bounds(n, level), _QUANTILE)  # type: ignore[union-attr, call-arg]
    top, gap_index, gap_truth = {}, {}, []
    for level in opts.levels:
        lo, _ = plugins.band_method(_LD).bounds(n, level)  # type: ignore[union-attr]  # a built-in band
        top[level] = bands.quantile_thresholds(np.concatenate(([0.0], lo, [1.0])), _QUANTILE)
        # the upper band at k is z_j for the smallest j whose threshold reaches k; at the data-free budget
        # (thresholds[n]) that is the sample's best
        budgets = np.asarray(GAP_FRACTIONS) * top[level][n]
        gap_index[level] = np.searchsorted(top[level], budgets, side="left")
        gap_truth.append(truth.quantile_tuning_curve(dist, budgets, _QUANTILE))
    ks = np.asarray(opts.horizons, dtype=np.float64) * n
    curves = np.stack([truth.quantile_tuning_curve(dist, ks, _QUANTILE), truth.mean_tuning_curve(dist, ks)], axis=1)
    return _Cell(
        key, population, n, checks, top, gap_index, np.array(gap_truth), ks, curves, B_MAX[population.split("/")[0]]
    )


def _iqr(dist) -> float:
    q1, q3 = dist.ppf(np.array([0.25, 0.75]))
    return float(q3 - q1)


def _rows(config: Config, run_: base.ChunkedRun, cell: _Cell, dist) -> list[dict]:
    opts = config.study.options
    n, reps, ci = cell.n, run_.reps(cell.key), opts.ci_level
    iqr = _iqr(dist)
    scale = iqr if iqr > 0 else np.nan
    common = {"cell": cell.key, "distribution": cell.population, "benchmark": cell.population.split("/")[0], "n": n}
    rows: list[dict] = []

    def row(question: str, measure: str, estimate: float, mcse: float = 0.0, r: int = 0, **more: Any) -> None:
        rows.append({**common, "question": question, "measure": measure, "estimate": float(estimate),
                     "mcse": float(mcse), "reps": int(r), **more})  # fmt: skip

    # Q1: exact
    first = next(arrays for _, arrays in run_.chunks(cell.key))
    n_prime = np.arange(1, n + 1)
    best = truth.expected_max(dist, n_prime)
    for i, est in enumerate(ESTIMATORS):
        bias = first["q1_mean"][i] - best
        rmse = np.sqrt(first["q1_sd"][i] ** 2 + bias**2)
        for j, k in enumerate(n_prime):
            extra: dict[str, Any] = {"estimator": est, "n_prime": int(k)}
            row("q1", "bias", bias[j], **extra)
            row("q1", "rmse", rmse[j], **extra)
            row("q1", "relative_bias", bias[j] / scale, **extra)
            row("q1", "relative_rmse", rmse[j] / scale, **extra)
    for j, k in enumerate(n_prime):
        row("q1", "truth", best[j], n_prime=int(k))
    row("q1", "iqr", iqr)
    row("q1", "range", dist.support[1] - dist.support[0])

    # Q2: coverage of the median curve for every real k (band_coverage's check "curve")
    hits = run_.total(cell.key, "hits")[_bc.CHECKS.index("curve")]
    low, high = clopper_pearson(hits, reps, ci)
    for i, method in enumerate(opts.methods):
        for j, level in enumerate(opts.levels):
            p = hits[i, j] / reps
            row("q2", "coverage", p, np.sqrt(p * (1 - p) / reps), reps, method=method, level=level,
                ci_low=float(low[i, j]), ci_high=float(high[i, j]))  # fmt: skip

    # Q3: the fitted noisy quadratic law
    counts = run_.total(cell.key, "q3_counts")
    fitted, failed, on_bound, banded = (int(c) for c in counts)
    good = fitted - failed
    for measure, count, of in (("p_fail", failed, fitted), ("p_hit_bound", on_bound, good)):
        if of:
            lo_, hi_ = clopper_pearson(count, of, ci)
            p = count / of
            row("q3", measure, p, np.sqrt(p * (1 - p) / of), of, ci_low=float(lo_), ci_high=float(hi_))
    err = run_.total(cell.key, "q3_err")
    q3hits = run_.total(cell.key, "q3_hits")
    for kk, k in enumerate(cell.ks):
        for c, curve in enumerate(CURVES):
            extra = {"k": float(k), "curve": curve}
            row("q3", "truth", cell.truth[kk, c], **extra)
            if good >= 2:
                s, s2 = err[kk, c]
                mean = s / good
                var = max(s2 / good - mean**2, 0.0) * good / (good - 1)
                mse = s2 / good
                rmse = np.sqrt(mse)
                # the MSE's MCSE from the spread of squared errors is not kept: bound it by the delta method on
                # the bias and variance parts (conservative)
                rmse_mcse = (
                    np.sqrt(var / good) if rmse == 0 else np.sqrt(var * (2 * var + 4 * mean**2) / good) / (2 * rmse)
                )
                row("q3", "bias", mean, np.sqrt(var / good), good, **extra)
                row("q3", "rmse", rmse, rmse_mcse, good, **extra)
                row("q3", "relative_rmse", rmse / scale, rmse_mcse / scale, good, **extra)
        if banded:
            lo_, hi_ = clopper_pearson(q3hits[kk], banded, ci)
            p = q3hits[kk] / banded
            row("q3", "band_coverage", p, np.sqrt(p * (1 - p) / banded), banded, k=float(k), curve="median",
                level=opts.fit_level, ci_low=float(lo_), ci_high=float(hi_))  # fmt: skip
    row("q3", "ld_trivial_k", bands.trivial_budget(n, opts.fit_level, _LD), level=opts.fit_level, method=_LD)

    # Q4: the informative range of the upper band on a real space
    q4 = run_.total(cell.key, "q4_k")
    top = int(run_.total(cell.key, "q4_top")[0])
    p = top / reps
    lo_, hi_ = clopper_pearson(top, reps, ci)
    row("q4", "p_top", p, np.sqrt(p * (1 - p) / reps), reps, ci_low=float(lo_), ci_high=float(hi_))
    for j, level in enumerate(opts.levels):
        s, s2 = q4[j]
        mean = s / reps
        se = np.sqrt(max(s2 / reps - mean**2, 0.0) * reps / (reps - 1) / reps)
        extra = {"method": _LD, "level": level}
        row("q4", "ld_trivial_k", bands.trivial_budget(n, level, _LD), **extra)
        row("q4", "informative_k", mean, se, reps, **extra)
        if mean > 0:
            row("q4", "samples_per_step", n / mean, n * se / mean**2, reps, **extra)
    # Q4, the question the data answer: how far above the exact median curve the upper band lies where it bounds
    gap = run_.total(cell.key, "q4_gap")
    for j, level in enumerate(opts.levels):
        for f, fraction in enumerate(GAP_FRACTIONS):
            s, s2 = gap[j, f]
            mean = s / reps
            se = np.sqrt(max(s2 / reps - mean**2, 0.0) * reps / (reps - 1) / reps)
            row("q4", "upper_gap", mean / scale, se / scale, reps, method=_LD, level=level,
                k=float(fraction * cell.top_thresholds[level][n]), curve="median")  # fmt: skip
    return rows


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the field audit for every population and sample size of ``config.study``.

    For each population of ``study.populations`` and n of ``study.sample_sizes`` (one cell each), the four
    questions of the module's docstring; then ``FIELD.md`` and its figures in ``out_dir``. The config's
    ``distribution`` is not used: the populations are the study's own. Needs the optional extra
    ``simstudy[benchmarks]`` (a one-line :class:`~simstudy.schema.ConfigError` says how to install it).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"field_audit"`` (:func:`simstudy.compose` with
        ``experiment=field_audit`` for the preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame (module docstring), also in ``summary.parquet`` / ``summary.csv``;
        ``files`` adds ``field`` (``FIELD.md``) and the figures ``q1`` .. ``q4``.

    Raises
    ------
    %(run_raises)s

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024. Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their
    optima. COLM 2025.

    Examples
    --------
    The preset on two populations (its run needs the extra):

    >>> import simstudy
    >>> cfg = simstudy.compose("field_audit", overrides=["study.populations=[hpobench/car,hpolib/slice_localization]"])
    >>> cfg.study.options.populations, cfg.study.options.sample_sizes, cfg.study.reps
    (('hpobench/car', 'hpolib/slice_localization'), (12, 24, 48, 96), 400)
    """
    from simstudy import populations
    from simstudy.studies import field_audit_page

    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    dists = {p: from_spec("population", _spec(p)) for p in opts.populations}
    digests = {p: populations.sha256(*p.split("/")) for p in opts.populations}
    t0 = time.perf_counter()
    cells = {}
    for p in opts.populations:
        for n in opts.sample_sizes:
            key = base.cell_key(population=p, sha256=digests[p], n=n)
            cells[key] = _prepare_cell(key, p, dists[p], n, opts)
    prepare_seconds = time.perf_counter() - t0
    boot = _pe.Work(config.seed, {}, {}, _QUANTILE, opts.fit_level, opts.n_boot)
    work = _Work(config.seed, dists, cells, tuple(opts.methods), tuple(opts.levels), opts.fit_reps, boot)
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={
            "populations": digests,
            "methods": list(opts.methods),
            "levels": list(opts.levels),
            "fit_reps": opts.fit_reps,
            "n_boot": opts.n_boot,
            "fit_level": opts.fit_level,
            "horizons": list(opts.horizons),
            "b_max": B_MAX,
        },
        stage=stage,
    )
    rows: list[dict] = []
    for cell in run_.succeeded(cells).values():
        rows += _rows(config, run_, cell, dists[cell.population])
    summary = pd.DataFrame(rows)
    metadata = {
        "populations": {p: {"sha256": digests[p], "distinct": int(d.atoms.size)} for p, d in dists.items()},
        "timings": {"prepare_seconds": prepare_seconds},
    }
    missing = sorted({cells[k].population + f" n={cells[k].n}" for k in run_.failed_cells})
    counts = sorted({run_.reps(key) for key in cells})  # the cells' own: study.precision plans each
    reps = counts[0] if len(counts) == 1 else f"{counts[0]:,} to {counts[-1]:,}"
    files = field_audit_page.write_page(summary, opts, out_dir, reps=reps, failed=missing)
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata, files=files)


def headline(summary: pd.DataFrame) -> str:
    """Q2's coverage range per method and level, the one number a reader checks first.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run`.

    Returns
    -------
    str
        One line per (method, level): the lowest and highest coverage over the cells.

    Examples
    --------
    >>> s = pd.DataFrame({"question": "q2", "measure": "coverage", "method": "ks", "level": 0.8,
    ...                   "estimate": [0.81, 0.9]})
    >>> print(headline(s))
    Q2 coverage of the median tuning curve (min-max over populations and n):
      ks at 80%: 0.810-0.900
    """
    s = summary[(summary["question"] == "q2") & (summary["measure"] == "coverage")]
    lines = ["Q2 coverage of the median tuning curve (min-max over populations and n):"]
    for (method, level), r in s.groupby(["method", "level"], sort=False):
        lines.append(f"  {method} at {level:.0%}: {r['estimate'].min():.3f}-{r['estimate'].max():.3f}")
    return "\n".join(lines)


def field_audit_figure(summary: pd.DataFrame, title: str | None = None):
    """Q2's figure, the study's own: coverage against n, a panel per family (the page draws all four).

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of :func:`run`.
    title : str, optional
        The figure's title; default one naming the question and the level.

    Returns
    -------
    matplotlib.figure.Figure
        :func:`simstudy.studies.field_audit_page.q2_figure` of the summary.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from simstudy.studies.field_audit_page import _demo_summary
    >>> fig = field_audit_figure(_demo_summary())
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    from simstudy.studies import field_audit_page

    return field_audit_page.q2_figure(summary, title=title)


STUDY = register_study(
    Study(
        kind="field_audit",
        options=Options,
        run=run,
        figure=field_audit_figure,
        headline=headline,
        sweep=Headline(
            {"question": "q2", "measure": "coverage"}, "n", "method", "coverage of the median curve", role="coverage"
        ),
    )
)
