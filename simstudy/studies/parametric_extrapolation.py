"""How far the noisy quadratic law extrapolates random search: a simulation audit (Lourie, He & Cho 2025).

For each true law and sample size n, every replicate draws n scores, fits the noisy quadratic law to their
tail (:func:`simstudy.stats.parametric_fit.fit_batch`: censoring at the ``study.threshold`` quantile, every c in
1..10), predicts the median and mean tuning curves at budgets k on a grid of k/n up to 100, and compares them
with the exact truth. A parametric bootstrap of each replicate's fit (``study.n_boot`` refits of samples of n
from the fitted law, the same threshold rule, every c again) gives percentile intervals for the best score b
and pointwise bands for the median tuning curve, at nominal level ``study.level``; the study counts how often
they cover the truth.

Laws (``study.laws``; one cell per law and n):

- ``nq_c<C>_r<R>``: well specified, the noisy quadratic law with a = 0.5, b = 0.9 (accuracy-like), c = C
  (1..10) and noise ratio o / (b - a) = R (>= 0), e.g. ``nq_c2_r0.1``. Truths are
  :meth:`NoisyQuadratic.quantile_tuning_curve` / :meth:`~NoisyQuadratic.mean_tuning_curve`.
- misspecified, with the shipped configs' specs (``configs/distribution``): ``kde_reuters_mlp``,
  ``kde_reuters_lstm`` (kde_reuters.yaml), ``kde_deberta``, ``kde_debertav3`` (kde_deberta_mnli.yaml, matched)
  and ``truncnorm_bag`` (truncnorm_bag.yaml with seed 0: a fixed population). Truths are
  :func:`simstudy.stats.truth.quantile_tuning_curve` and :func:`~simstudy.stats.truth.mean_tuning_curve`. These laws have no
  true b: the b-interval rows (``b_coverage``, ``b_bias``, ``b_rmse``, ``p_c_correct``) are absent for them.

The config's ``distribution`` is not used: the laws are the study's own.

Summary (tidy): one row per (law, n, k, curve, measure), with columns ``specified`` (the law is a noisy
quadratic) and ``nominal`` (``study.level``); per-law rows have k, k_over_n NaN and curve "".

===================  ==================================================================================
measure              meaning (over the replicates whose fit succeeded, unless said otherwise)
===================  ==================================================================================
``truth``            the exact tuning curve at k (``curve`` median or mean; mcse 0)
``prediction``       the mean predicted curve at k, with its MCSE
``bias``             mean(predicted - true), MCSE sqrt(S^2 / R)
``rmse``             sqrt(mean((predicted - true)^2)), MCSE by the delta method from the MSE's
``relative_rmse``    rmse / (true curve at the largest k - true curve at k = 1): the error as a share of
                     what the search gains over the whole grid
``band_coverage``    share of replicates whose bootstrap band for the median curve covers the truth at k
                     (pointwise), Clopper-Pearson interval at ``study.ci_level``; reps = replicates with a band
``band_width``       mean width of that band
``b_coverage``       share of replicates whose bootstrap interval for b covers the true b (well specified only)
``b_width``          mean width of the b interval; ``b_bias``, ``b_rmse``: of the fitted b (well specified)
``p_fail``           share of all replicates whose fit failed: fewer than 8 scores above the threshold, or a
                     non-finite fit or curve (Clopper-Pearson interval)
``p_hit_bound``      share of all replicates fitted on the noise-free boundary o = 0 (``hit_bound``)
``p_not_converged``  share of all replicates whose optimizer stopped short of its tolerance
``p_c_correct``      share of all replicates whose fitted c equals the true c (well specified)
``boot_fail``        mean share of a replicate's bootstrap fits that failed (MCSE between replicates)
``ld_trivial_k``     exact: the k beyond which the nonparametric LD highest-density band for the median curve,
                     at the same n and confidence ``study.level``, is trivial (:func:`simstudy.stats.bands.trivial_budget`;
                     k_over_n holds k / n). That band is simultaneous, the bootstrap band pointwise.
===================  ==================================================================================

Budgets. ``study.k_over_n`` null (default) puts 5 points per decade from k = 1 to k = n and from n to
100 n (log-spaced; k = 1 ... includes k = n and k = 100 n exactly): 19 budgets at n = 48, 22 at n = 192. A list
of ratios gives the same k / n at every n.

Cost and scale. A fit of 48 scores costs about 10-20 ms when batched (every c, the noise-free boundary beside),
4-5 times that at n = 192; the bootstrap makes it ``1 + n_boot`` fits per replicate. The bootstrap fits of
every replicate of a chunk are batched together (rows = replicates x n_boot, in blocks of about 20,000 scores:
a fit_batch call holds about 0.5 MB per row of 48 scores), warm-started from each replicate's own optimum per
c. Failed fits are left out of every error and coverage measure (the ``reps`` column says how many remain) and
counted in ``p_fail``. A law with a bounded support (the KDEs and the bag: scores at most 1) bounds b there,
as a careful user would (``constraints={"b": (None, 1.0)}``).

The ``parametric_audit`` preset (eight laws, n = 48, 64 replicates x 40 bootstrap refits) took 3 min 3 s of
wall time on two idle cores (310 CPU seconds in the chunks). At that scale a coverage near 80% has an MCSE of
0.05 and a 95% Clopper-Pearson interval 0.15-0.25 wide (0.11 near 95%); no failed fit of 64 gives the interval
[0, 0.056]. What it found (seed 0): the band for the median curve of a well-specified law covers 59-83%
(nominal 80%) at k = n and 70-100% at k = 100 n, the b interval 61-95%; with much noise (o/(b - a) = 0.3) b is
fitted 0.22-0.24 too high on average and c is rarely right (5% of fits for c = 4), while the median curve stays
within its band 70-78% of the time at k = 100 n. On the misspecified laws the band covers 70-95% at k = 100 n,
with a median-curve RMSE there of 0.011 (DeBERTa KDE) to 0.16 score units (Reuters LSTM KDE); no fit failed,
19-73% landed on the boundary o = 0.

Zip plot. Each replicate with a bootstrap band also keeps the truth's position in it (chunk arrays
``zip_position``, ``zip_side``, (K + 1, replicates with a band): the median band at each k, then the b interval;
:func:`simstudy.stats.metrics.interval_position`, <= 0 exactly when the interval covers). ``zip.parquet`` holds
the median band at the largest k and, for a well-specified law, the b interval; ``zip.png`` ranks them (Morris,
White & Crowther 2019). A run directory whose chunks predate these arrays resumes without a zip plot.

Streams: the samples of a chunk come from ``task_seed(seed, cell, chunk, 0)``, its bootstrap draws from
``task_seed(seed, cell, chunk, 1)``; chunk results are sums, added in chunk order, so the summary is
bit-identical for any ``runner.n_jobs``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import describe, from_spec, sample_sorted
from simstudy.distributions.parametric import C_RANGE, NoisyQuadratic
from simstudy.engine.memory import check_chunk_memory, check_memory
from simstudy.engine.runner import Task, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import ConfigError, option
from simstudy.stats import bands, truth
from simstudy.stats.metrics import clopper_pearson, interval_position, moment_gram, performance
from simstudy.stats.parametric_fit import FIT_VERSION, MAX_TAIL, MIN_TAIL, Threshold, curves, fit_batch
from simstudy.studies import base, zip_plots
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "Options", "Law", "law", "LAW_NAMES", "budgets", "headline", "STUDY"]

_SCHEME = f"parametric_extrapolation/2/{FIT_VERSION}"  # 2: b bounded by a bounded law's top

#: The well-specified laws' ends: accuracy-like scores.
NQ_A, NQ_B = 0.5, 0.9
_NQ = re.compile(r"nq_c(\d+)_r(\d+(?:\.\d*)?(?:e-?\d+)?)")
#: The misspecified laws: the specs of configs/distribution/kde_reuters.yaml, kde_deberta_mnli.yaml (matched)
#: and truncnorm_bag.yaml (its seed fixed at 0: one population for every run).
_NAMED: dict[str, tuple[str, dict[str, Any]]] = {
    "kde_reuters_mlp": (
        "kde",
        {"dataset": "reuters_hedwig", "model": "mlp", "bw_factor": 0.0125, "bw_of": "reflected"},
    ),
    "kde_reuters_lstm": (
        "kde",
        {"dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05, "bw_of": "reflected"},
    ),
    "kde_deberta": (
        "kde",
        {
            "dataset": "deberta_mnli",
            "model": "deberta",
            "split": "matched",
            "reduce": "best",
            "bw_factor": 0.05,
            "bw_of": "data",
        },
    ),
    "kde_debertav3": (
        "kde",
        {
            "dataset": "deberta_mnli",
            "model": "debertav3",
            "split": "matched",
            "reduce": "best",
            "bw_factor": 0.05,
            "bw_of": "data",
        },
    ),
    "truncnorm_bag": (
        "truncnorm_bag",
        {"mean": 0.6, "sd": 0.07, "low": 0.0, "high": 1.0, "population": 100000, "size": 10000, "seed": 0},
    ),
}
#: The study's default laws: every well-specified combination of c and noise ratio of the design, then the
#: misspecified ones.
LAW_NAMES = tuple(f"nq_c{c}_r{r:g}" for c in (1, 2, 3, 4) for r in (0.0, 0.1, 0.3)) + tuple(_NAMED)
_MAX_SCORES_PER_FIT = 20_000  # scores per fit_batch call (rows x n): about 200 MB at its peak
_BOUND_METHOD = "ld_highest_density"


@dataclass(frozen=True)
class Law:
    """A true score law of the study: its name, how it is built, and whether the fitted family contains it.

    Made by :func:`law` from a name of ``study.laws``; frozen and hashable.

    Parameters
    ----------
    name : str
        The law's name in ``study.laws``, e.g. ``"nq_c2_r0.1"`` or ``"kde_deberta"``.
    kind : str
        ``"noisy_quadratic"`` (well specified) or a kind of :data:`simstudy.distributions.KINDS`
        (misspecified).
    params : tuple of (str, object) pairs
        The builder's parameters, sorted by name (for a noisy quadratic ``a``, ``b``, ``c``, ``o`` in score
        units, ``c`` an integer).

    Examples
    --------
    >>> lw = Law("nq_c1_r0", "noisy_quadratic", (("a", 0.5), ("b", 0.9), ("c", 1), ("o", 0.0)))
    >>> lw.specified, lw.key
    (True, {'kind': 'noisy_quadratic', 'params': [['a', 0.5], ['b', 0.9], ['c', 1], ['o', 0.0]]})
    >>> lw.build().quantile_tuning_curve([1, 2]).round(4)
    array([0.8   , 0.8657])
    """

    name: str
    kind: str  # "noisy_quadratic" or a kind of simstudy.distributions.KINDS
    params: tuple  # sorted (name, value) pairs

    @property
    def specified(self) -> bool:
        return self.kind == "noisy_quadratic"

    @property
    def key(self) -> dict:
        return {"kind": self.kind, "params": [list(p) for p in self.params]}

    def build(self):
        params = dict(self.params)
        if self.specified:
            return NoisyQuadratic(**params, name=self.name)
        return from_spec(self.kind, {**params, "name": self.name})


def _valid_laws() -> str:
    return (
        f"nq_c<C>_r<R> (noisy quadratic, a={NQ_A:g}, b={NQ_B:g}, c = C in 1..10, o/(b - a) = R >= 0, "
        f"e.g. nq_c2_r0.1), {', '.join(_NAMED)}"
    )


def law(name: str, key: str = "study.laws") -> Law:
    """The law a name stands for (see the module's docstring).

    Parameters
    ----------
    name : str
        ``nq_c<C>_r<R>`` (the noisy quadratic law with a = 0.5, b = 0.9, c = C in 1..10 and noise
        o = R (b - a), R >= 0) or one of ``kde_reuters_mlp``, ``kde_reuters_lstm``, ``kde_deberta``,
        ``kde_debertav3``, ``truncnorm_bag``.
    key : str, default "study.laws"
        The config key named in the error message.

    Returns
    -------
    Law
        Its name, kind and parameters; ``.build()`` gives the distribution.

    Raises
    ------
    ConfigError
        ``study.laws: unknown law 'x' (valid: ...)``.

    References
    ----------
    Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025,
    arXiv:2510.02721.

    Examples
    --------
    >>> law("nq_c2_r0.1").build()
    NoisyQuadratic(a=0.5, b=0.9, c=2, o=0.04000000000000001, convex=False, name='nq_c2_r0.1')
    >>> law("kde_deberta").kind
    'kde'
    >>> law("nq_c11_r0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.laws: unknown law 'nq_c11_r0' (valid: nq_c<C>_r<R> ...
    """
    if not isinstance(name, str):
        raise ConfigError(f"{key}: a law is a name, got {name!r} (valid: {_valid_laws()})")
    if name in _NAMED:
        kind, params = _NAMED[name]
        return Law(name, kind, tuple(sorted(params.items())))
    m = _NQ.fullmatch(name)
    if m is not None:
        c, r = int(m.group(1)), float(m.group(2))
        if c in C_RANGE and np.isfinite(r):
            return Law(name, "noisy_quadratic", (("a", NQ_A), ("b", NQ_B), ("c", c), ("o", r * (NQ_B - NQ_A))))
    raise ConfigError(f"{key}: unknown law {name!r} (valid: {_valid_laws()})")


def _law_check(key: str, value: Any) -> str:
    law(value, key)
    return value


@schema.accepting("a ratio k/n > 0")
def _ratio_check(key: str, value: Any) -> float:
    return schema.number(positive=True, what="a ratio k/n > 0")(key, value)


@schema.accepting("0 (no bootstrap) or an integer >= 2")
def n_boot_check(key: str, value: Any) -> int:
    value = schema.integer(minimum=0)(key, value)
    if value == 1:
        raise ConfigError(f"{key} must be 0 (no bootstrap) or an integer >= 2, got 1")
    return value


def budgets(n: int, k_over_n: tuple | None) -> np.ndarray:
    """The budgets k at sample size n: ``k_over_n * n``, or by default 5 log-spaced points per decade from
    k = 1 to n and from n to 100 n (k = 1, n and 100 n exactly).

    Parameters
    ----------
    n : int
        The sample size (scores per simulated search), >= 1.
    k_over_n : tuple of float or None
        Budgets as ratios k / n (> 0), as in ``study.k_over_n``; None for the default grid.

    Returns
    -------
    ndarray of float, shape (K,)
        The budgets k (search iterations, real valued), ascending and distinct.

    Examples
    --------
    >>> ks = budgets(48, None)
    >>> ks.size, float(ks[0]), 48.0 in ks, float(ks[-1])
    (19, 1.0, True, 4800.0)
    >>> budgets(48, (10, 1, 0.5)).tolist()
    [24.0, 48.0, 480.0]
    """
    if k_over_n is not None:
        return np.unique(np.asarray(k_over_n, dtype=np.float64)) * n
    below = np.geomspace(1.0, n, max(2, int(round(5 * np.log10(n))) + 1)) if n > 1 else np.array([1.0])
    return np.unique(np.concatenate([below, n * np.geomspace(1.0, 100.0, 11)]))


@dataclass(frozen=True)
class _Cell:
    key: str
    law: Law
    n: int
    ks: np.ndarray
    truth: np.ndarray  # (K, 2): median, mean


@dataclass(frozen=True)
class Work:
    seed: int
    cells: dict
    laws: dict  # name -> built distribution
    quantile: float
    level: float
    n_boot: int


def fit(samples: np.ndarray, thresholds: np.ndarray, start: np.ndarray | None = None, b_max: float = np.inf) -> dict:
    """fit_batch on blocks of at most ``_MAX_SCORES_PER_FIT`` scores (a row's fit does not depend on the others)."""
    R, n = samples.shape
    step = max(1, _MAX_SCORES_PER_FIT // n)
    parts = [
        fit_batch(
            samples[i : i + step],
            thresholds[i : i + step],
            cs=C_RANGE,
            b_max=b_max,
            start=None if start is None else start[i : i + step],
        )
        for i in range(0, R, step)
    ]
    keys = ("a", "b", "c", "o", "objective", "converged", "hit_bound", "x")
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def finite_fit(out: dict, curves: tuple) -> np.ndarray:
    ok = np.isfinite(out["a"]) & np.isfinite(out["b"]) & np.isfinite(out["o"]) & np.isfinite(out["objective"])
    for c in curves:
        ok &= np.all(np.isfinite(c), axis=1)
    return ok


def bootstrap(work: Work, fits: dict, n: int, ks: np.ndarray, rng: np.random.Generator, b_max: float = np.inf):
    """Percentile intervals for b and the median curve of every replicate in ``fits`` (m replicates).

    Returns ``b_lo, b_hi`` (m,), ``band_lo, band_hi`` (m, K), ``have`` (m,) (an interval needs 2 good
    bootstrap fits) and ``failed`` (m,), the share of each replicate's bootstrap fits that failed.
    """
    m, B, K = fits["a"].size, work.n_boot, ks.size
    a, b, c, o = (fits[k][:, None, None] for k in ("a", "b", "c", "o"))
    # NoisyQuadratic.sample, all replicates at once: uniforms, then normals
    y = b - (b - a) * rng.random((m, B, n)) ** (2.0 / c)
    y = (y + o * rng.standard_normal((m, B, n))).reshape(m * B, n)
    y.sort(axis=1)
    t = Threshold(quantile=work.quantile).of(y)
    ok = (y > t[:, None]).sum(axis=1) >= MIN_TAIL
    bs = np.full(m * B, np.nan)
    med = np.full((m * B, K), np.nan)
    if ok.any():
        start = np.repeat(fits["x"], B, axis=0)[ok]  # each replicate's own optimum per c
        out = fit(y[ok], t[ok], start, b_max)
        curve, _ = curves(out["a"], out["b"], out["c"], out["o"], False, ks, mean=False)
        good = finite_fit(out, (curve,))
        idx = np.flatnonzero(ok)[good]
        bs[idx], med[idx] = out["b"][good], curve[good]
    bs, med = bs.reshape(m, B), med.reshape(m, B, K)
    good = np.isfinite(bs)
    have = good.sum(axis=1) >= 2
    alpha = (1.0 - work.level) / 2.0
    b_lo = np.full(m, np.nan)
    b_hi = np.full(m, np.nan)
    band_lo = np.full((m, K), np.nan)
    band_hi = np.full((m, K), np.nan)
    if have.any():
        b_lo[have], b_hi[have] = np.nanquantile(bs[have], [alpha, 1 - alpha], axis=1)
        band_lo[have], band_hi[have] = np.nanquantile(med[have], [alpha, 1 - alpha], axis=1)
    return b_lo, b_hi, band_lo, band_hi, have, 1.0 - good.mean(axis=1)


def _run_chunk(work: Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.laws[cell.law.name]
    n, ks, K = cell.n, cell.ks, cell.ks.size
    # A bounded score (an accuracy of a KDE or a bag: at most 1) bounds b, as a careful user would.
    b_max = float(dist.support[1])
    y = sample_sorted(dist, task.reps, n, rng=np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0)))
    t = Threshold(quantile=work.quantile).of(y)
    ok = (y > t[:, None]).sum(axis=1) >= MIN_TAIL
    fits = {k: np.full(task.reps, np.nan) for k in ("a", "b", "c", "o", "objective")}
    fits.update(
        converged=np.zeros(task.reps, bool),
        hit_bound=np.zeros(task.reps, bool),
        x=np.full((task.reps, len(C_RANGE), 3), np.nan),
    )
    pred = np.full((task.reps, K, 2), np.nan)
    if ok.any():
        out = fit(y[ok], t[ok], b_max=b_max)
        med, avg = curves(out["a"], out["b"], out["c"], out["o"], False, ks)
        for k in fits:
            fits[k][ok] = out[k]
        pred[ok, :, 0], pred[ok, :, 1] = med, avg
        ok[ok] = finite_fit(out, (med, avg))
    good = np.flatnonzero(ok)
    specified = cell.law.specified
    errors = np.ascontiguousarray((pred[good] - cell.truth[None]).transpose(1, 2, 0))  # (K, 2, reps_ok)
    true_b = dict(cell.law.params).get("b", np.nan)
    b_err = (fits["b"][good] - true_b)[None, None, :] if specified else np.zeros((1, 1, 0))
    res = {
        "counts": np.array(
            [
                task.reps,
                task.reps - good.size,
                int(fits["hit_bound"][good].sum()),
                int((~fits["converged"][good]).sum()),
                int((fits["c"][good] == dict(cell.law.params).get("c", -1)).sum()),
            ],
            dtype=np.int64,
        ),
        "gram": moment_gram(errors),
        "gram_b": moment_gram(b_err),
        "band_hits": np.zeros(K, np.int64),
        "band_n": np.zeros(1, np.int64),
        "band_w": np.zeros((K, 2)),
        "b_hits": np.zeros(1, np.int64),
        "b_w": np.zeros(2),
        "boot_fail": np.zeros(2),
        # zip plot: per replicate with a band, the truth's position in the median band at each k, then in the b
        # interval (NaN, side 0, for a law without a true b); the replicates on the last axis
        zip_plots.POSITION: np.zeros((K + 1, 0)),
        zip_plots.SIDE: np.zeros((K + 1, 0), np.int8),
    }
    if work.n_boot and good.size:
        rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1))
        b_lo, b_hi, lo, hi, have, failed = bootstrap(work, {k: v[good] for k, v in fits.items()}, n, ks, rng, b_max)
        tr = cell.truth[:, 0]
        res["band_hits"] = ((lo[have] <= tr) & (tr <= hi[have])).sum(axis=0).astype(np.int64)
        res["band_n"] = np.array([have.sum()], np.int64)
        w = hi[have] - lo[have]
        res["band_w"] = np.stack([w.sum(axis=0), (w * w).sum(axis=0)], axis=1)
        if specified:
            res["b_hits"] = np.array([((b_lo[have] <= true_b) & (true_b <= b_hi[have])).sum()], np.int64)
        wb = b_hi[have] - b_lo[have]
        res["b_w"] = np.array([wb.sum(), (wb * wb).sum()])
        res["boot_fail"] = np.array([failed.sum(), (failed * failed).sum()])
        band_at, band_to = interval_position(lo[have], hi[have], tr)
        b_at, b_to = interval_position(b_lo[have], b_hi[have], true_b)
        res[zip_plots.POSITION] = np.concatenate(
            [band_at.T, b_at[None] if specified else np.full((1, have.sum()), np.nan)]
        )
        res[zip_plots.SIDE] = np.concatenate(
            [band_to.T, b_to[None] if specified else np.zeros((1, have.sum()), np.int8)]
        )
    return res


def _mean_mcse(sums: np.ndarray, count: int) -> tuple:
    """Mean and MCSE from the sum and the sum of squares of ``count`` values (NaN below 2)."""
    if count < 2:
        return np.full(np.shape(sums[..., 0]), np.nan), np.full(np.shape(sums[..., 0]), np.nan)
    mean = sums[..., 0] / count
    var = np.clip(sums[..., 1] / count - mean**2, 0.0, None) * count / (count - 1)
    return mean, np.sqrt(var / count)


def _truth(law_: Law, dist, ks: np.ndarray) -> np.ndarray:
    if law_.specified:
        return np.stack([dist.quantile_tuning_curve(ks), dist.mean_tuning_curve(ks)], axis=1)
    # positional: truth's quantile keyword is being renamed
    return np.stack([truth.quantile_tuning_curve(dist, ks), truth.mean_tuning_curve(dist, ks)], axis=1)


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the extrapolation audit for every law and sample size of ``config.study``.

    For each law of ``study.laws`` and n of ``study.sample_sizes`` (one cell each), ``study.reps`` replicates
    draw n scores, fit the noisy quadratic law to their tail, predict the median and mean tuning curves at
    the budgets :func:`budgets` and compare them with the exact truth; with ``study.n_boot`` > 0 a parametric
    bootstrap gives intervals whose coverage is counted. The config's distributions are not used. This is
    the simulation audit of Lourie, He & Cho (2025) (preset ``parametric_audit``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"parametric_extrapolation"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (law, n, k, curve, measure) with columns ``cell``, ``distribution`` (the law), ``specified``, ``n``,
        ``nominal``, ``k``, ``k_over_n``, ``curve``, ``measure`` (the module docstring's table), ``estimate``
        (score units, or a proportion in [0, 1] for the ``p_*`` and coverage measures), ``mcse``, ``ci_low``,
        ``ci_high`` and ``reps``; ``report``, ``files`` (``summary_parquet``, ``summary_csv``, ``run``) and
        ``kind``.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025,
    arXiv:2510.02721.

    Examples
    --------
    A run fits every c in 1..10 for each replicate (about a second even for two replicates), so here only the
    config and its budgets; ``run(cfg, out_dir)`` then takes them.

    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm"},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "parametric_extrapolation", "reps": 2, "chunk_reps": 2,
    ...               "laws": ["nq_c2_r0"], "sample_sizes": [16], "n_boot": 0, "k_over_n": [1, 10]},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> opts = cfg.study.options
    >>> [law(name).build() for name in opts.laws]
    [NoisyQuadratic(a=0.5, b=0.9, c=2, o=0.0, convex=False, name='nq_c2_r0')]
    >>> budgets(16, opts.k_over_n).tolist()
    [16.0, 160.0]
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    laws = [law(name) for name in opts.laws]
    t0 = time.perf_counter()
    dists = {lw.name: lw.build() for lw in laws}
    cells, gains = {}, {}
    for lw in laws:
        for n in opts.sample_sizes:
            ks = budgets(n, opts.k_over_n)
            key = base.cell_key(law=lw.key, n=n, ks=ks.tolist())
            cells[key] = _Cell(key, lw, n, ks, _truth(lw, dists[lw.name], ks))
            # what the search gains over the grid: the scale of relative_rmse
            gains[key] = cells[key].truth[-1] - _truth(lw, dists[lw.name], np.array([1.0]))[0]
    truth_seconds = time.perf_counter() - t0
    trivial = {n: bands.trivial_budget(n, opts.level, _BOUND_METHOD, 0.5) for n in opts.sample_sizes}
    work = Work(config.seed, cells, dists, opts.threshold, opts.level, opts.n_boot)
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={
            "laws": [lw.key for lw in laws],
            "threshold": opts.threshold,
            "level": opts.level,
            "n_boot": opts.n_boot,
            "ks": {str(c.n): c.ks.tolist() for c in cells.values()},
        },
        stage=stage,
    )
    rows, zips, complete = [], [], True
    for key, cell in run_.succeeded(cells).items():
        stored = zip_plots.positions(run_, key, slice(-2, None)) if opts.n_boot else None  # the largest k, then b
        complete &= stored is not None or not opts.n_boot
        if stored is not None:
            zips += _zip_panels(cell, *stored, opts)
        total = {
            name: run_.total(key, name)
            for name in ("counts", "gram", "gram_b", "band_hits", "band_n", "band_w", "b_hits", "b_w", "boot_fail")
        }
        rows += _rows(cell, total, gains[key], opts, trivial[cell.n])
    columns = [
        "cell",
        "distribution",
        "specified",
        "n",
        "nominal",
        "k",
        "k_over_n",
        "curve",
        "measure",
        "estimate",
        "mcse",
        "ci_low",
        "ci_high",
        "reps",
    ]
    summary = pd.DataFrame(rows, columns=columns)
    metadata = {
        "laws": {lw.name: {"specified": lw.specified, **describe(dists[lw.name])} for lw in laws},
        "threshold_quantile": opts.threshold,
        "level": opts.level,
        "n_boot": opts.n_boot,
        "ci_level": opts.ci_level,
        "ld_trivial_k": {str(n): k for n, k in trivial.items()},
        "distribution_unused": [d.name for d in config.distributions],
        "timings": {"truth_seconds": truth_seconds},
    }
    files = zip_plots.write(out_dir, zips, complete)
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata, files=files)


def _zip_panels(cell: _Cell, position: np.ndarray, side: np.ndarray, opts) -> list[pd.DataFrame]:
    """A cell's zip panels: the median band at the largest k, and the b interval of a well-specified law."""
    keys = dict(nominal=opts.level, ci_level=opts.ci_level, cell=cell.key, distribution=cell.law.name, n=cell.n)
    k = float(cell.ks[-1])
    panels = [
        zip_plots.panel(f"{cell.law.name}, n = {cell.n}: median at k = {k / cell.n:g}n", position[-2], side[-2], **keys)
    ]
    if cell.law.specified:
        panels.append(zip_plots.panel(f"{cell.law.name}, n = {cell.n}: b", position[-1], side[-1], **keys))
    return panels


def _rows(cell: _Cell, total: dict, gain: np.ndarray, opts, trivial_k: float) -> list[dict]:
    n, ks = cell.n, cell.ks
    reps, failed, hit, not_conv, c_ok = (int(v) for v in total["counts"])
    fitted = reps - failed
    head = dict(cell=cell.key, distribution=cell.law.name, specified=cell.law.specified, n=n, nominal=opts.level)
    rows = []

    def add(measure, estimate, mcse=np.nan, *, k=np.nan, curve="", ci=(np.nan, np.nan), count=fitted):
        rows.append(
            dict(
                head,
                k=k,
                k_over_n=k / n,
                curve=curve,
                measure=measure,
                estimate=float(estimate),
                mcse=float(mcse),
                ci_low=float(ci[0]),
                ci_high=float(ci[1]),
                reps=int(count),
            )
        )

    def proportion(measure, hits, count, **kw):
        if count == 0:
            return
        lo, hi = clopper_pearson(hits, count, opts.ci_level)
        p = hits / count
        add(measure, p, np.sqrt(p * (1 - p) / count), ci=(lo, hi), count=count, **kw)

    for j, curve in enumerate(("median", "mean")):
        for i, k in enumerate(ks):
            add("truth", cell.truth[i, j], 0.0, k=k, curve=curve, count=0)
    if fitted >= 2:
        perf = performance(total["gram"], np.zeros(ks.size))
        bias, bias_se = perf.measures["bias"]
        mse, mse_se = perf.measures["mse"]
        for j, curve in enumerate(("median", "mean")):
            rmse = np.sqrt(mse[j])
            with np.errstate(divide="ignore", invalid="ignore"):
                rmse_se = np.where(rmse > 0, mse_se[j] / (2 * rmse), 0.0)
            for i, k in enumerate(ks):
                add("prediction", cell.truth[i, j] + bias[j, i], bias_se[j, i], k=k, curve=curve)
                add("bias", bias[j, i], bias_se[j, i], k=k, curve=curve)
                add("rmse", rmse[i], rmse_se[i], k=k, curve=curve)
                add("relative_rmse", rmse[i] / gain[j], rmse_se[i] / abs(gain[j]), k=k, curve=curve)
    band_n = int(total["band_n"][0])
    if opts.n_boot and band_n:
        width, width_se = _mean_mcse(total["band_w"], band_n)
        for i, k in enumerate(ks):
            proportion("band_coverage", int(total["band_hits"][i]), band_n, k=k, curve="median")
            add("band_width", width[i], width_se[i], k=k, curve="median", count=band_n)
        if cell.law.specified:
            proportion("b_coverage", int(total["b_hits"][0]), band_n)
        add("b_width", *_mean_mcse(total["b_w"], band_n), count=band_n)
        add("boot_fail", *_mean_mcse(total["boot_fail"], fitted), count=fitted)
    if cell.law.specified and fitted >= 2:
        perf_b = performance(total["gram_b"], np.zeros(1))
        add("b_bias", perf_b.measures["bias"][0][0, 0], perf_b.measures["bias"][1][0, 0])
        mse_b, mse_b_se = perf_b.measures["mse"][0][0, 0], perf_b.measures["mse"][1][0, 0]
        add("b_rmse", np.sqrt(mse_b), mse_b_se / (2 * np.sqrt(mse_b)) if mse_b > 0 else 0.0)
    proportion("p_fail", failed, reps)
    proportion("p_hit_bound", hit, reps)
    proportion("p_not_converged", not_conv, reps)
    if cell.law.specified:
        proportion("p_c_correct", c_ok, reps)
    add("ld_trivial_k", trivial_k, 0.0, k=trivial_k, count=0)
    return rows


def _threshold_option(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ConfigError(f"{key} must be a quantile in [0, 1), got {value!r}")
    return float(value)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a parametric_extrapolation study, the keys ``study.*`` of its config.

    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one. Whether each n leaves enough scores above the threshold for a fit, and the memory of a
    chunk, are checked when the whole config is parsed.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> opts = Options()
    >>> len(opts.laws), opts.sample_sizes, opts.n_boot
    (17, (48,), 40)
    >>> schema.parse(Options, {"n_boot": 1}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.n_boot must be 0 (no bootstrap) or an integer >= 2, got 1
    """

    reps: int = reps_option(100)
    chunk_reps: int = chunk_reps_option(10)
    laws: tuple[str, ...] = option(
        LAW_NAMES,
        "the true laws, one cell each per n: nq_c<C>_r<R> (noisy quadratic a=0.5, "
        "b=0.9, c=C, o/(b-a)=R: well specified), kde_reuters_mlp, kde_reuters_lstm, kde_deberta, "
        "kde_debertav3, truncnorm_bag (misspecified)",
        schema.listed(_law_check, what="at least one law", sort=False),
    )
    sample_sizes: tuple[int, ...] = option(
        (48,),
        "the sample sizes n (scores per simulated search)",
        schema.listed(schema.integer(minimum=2), what="at least one sample size"),
    )
    k_over_n: tuple[float, ...] | None = option(
        None,
        "the budgets as ratios k/n (> 0), e.g. [0.1, 1, 10, 100]; null: 5 log-spaced "
        "points per decade from k = 1 to k = 100 n, with k = n and 100 n",
        schema.optional(schema.listed(_ratio_check, what="at least one ratio k/n")),
    )
    threshold: float = option(
        0.5,
        "the fit's threshold rule: the lowest floor(threshold n) scores are censored (a quantile in [0, 1))",
        _threshold_option,
    )
    level: float = option(
        0.8,
        "the nominal level of the bootstrap intervals for b and the median curve (and "
        "the confidence of the LD band whose trivial k is shown)",
        schema.level(),
    )
    n_boot: int = option(40, "parametric bootstrap refits per replicate (0: no bootstrap, no coverage)", n_boot_check)
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals of the proportions", schema.level())


def _check(config: Config) -> None:
    opts = config.study.options
    for n in opts.sample_sizes:
        tail = n - int(np.floor(opts.threshold * n))
        if tail < MIN_TAIL:
            raise ConfigError(
                f"study.sample_sizes: n={n} leaves {tail} scores above the threshold quantile "
                f"{opts.threshold:g}; a fit needs {MIN_TAIL} (raise n or lower study.threshold)"
            )
        if tail > MAX_TAIL:
            raise ConfigError(
                f"study.sample_sizes: n={n} leaves {tail:,} scores above the threshold quantile "
                f"{opts.threshold:g}; a fit takes at most {MAX_TAIL:,} (lower n or raise "
                f"study.threshold)"
            )
    n = max(opts.sample_sizes)
    rows = opts.chunk_reps * max(opts.n_boot, 1)
    # a fit_batch call holds about 0.5 MB per row of 48 scores, in blocks of _MAX_SCORES_PER_FIT scores; the
    # chunk's bootstrap samples and curves beside it
    per_worker = 220e6 + rows * (16.0 * n + 8.0 * 3 * 60 * len(C_RANGE))
    check_memory(
        "study.chunk_reps",
        opts.chunk_reps,
        per_worker,
        f"a chunk's {rows:,} bootstrap fits of n={n} scores",
        "lower study.chunk_reps or study.n_boot",
    )
    check_chunk_memory(config, cells=len(opts.laws) * len(opts.sample_sizes))


def headline(summary: pd.DataFrame) -> str:
    """Coverage of the bootstrap band at k = n and the largest k (well specified), and the error and coverage of
    each misspecified law at k = 10 n and the largest k.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (its columns ``distribution``, ``specified``, ``n``, ``nominal``, ``k``,
        ``k_over_n``, ``curve``, ``measure``, ``estimate``).

    Returns
    -------
    str
        Per n, a sentence with the range over well-specified laws of the median-curve band's coverage (%) at
        k = n and the largest k, of the b interval's coverage, and the LD band's trivial budget; a line per
        misspecified law with its relative RMSE near k = 10 n; then a table of the median curve's RMSE (score
        units) and band coverage at k/n = 1 and the largest k/n, rounded to 4 decimals.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "distribution": "nq_c2_r0", "specified": True, "n": 48, "nominal": 0.8,
    ...     "k": [48.0, 4800.0, 48.0, 4800.0], "k_over_n": [1.0, 100.0, 1.0, 100.0], "curve": "median",
    ...     "measure": ["band_coverage", "band_coverage", "rmse", "rmse"], "estimate": [0.78, 0.83, 0.004, 0.006]})
    >>> print(headline(summary))
    n = 48: well specified (1 laws), the median-curve band covers k = n 78%-78%, k = 100n 83%-83% (nominal 80%; range over laws).
    median curve: RMSE (score units) and band coverage at k/n = 1 and the largest k/n
    measure         band_coverage         rmse
    k_over_n                1.0   100.0  1.0    100.0
    distribution n
    nq_c2_r0     48          0.78  0.83  0.004  0.006
    """
    lines = []
    for n, s in summary.groupby("n", sort=True):
        kmax = s["k"].max()
        cov = s[s["measure"] == "band_coverage"]
        nominal = float(s["nominal"].iloc[0])
        spec = cov[cov["specified"]]
        parts = []
        for where, label in ((n, "k = n"), (kmax, f"k = {kmax / n:g}n")):
            at = spec[np.isclose(spec["k"], where)]
            if len(at):
                parts.append(f"{label} {at['estimate'].min():.0%}-{at['estimate'].max():.0%}")
        bcov = s[(s["measure"] == "b_coverage")]
        trivial = s.loc[s["measure"] == "ld_trivial_k", "estimate"]
        text = (
            f"n = {n}: well specified ({spec['distribution'].nunique()} laws), the median-curve band covers "
            f"{', '.join(parts) or '(no bootstrap)'}"
        )
        text += f" (nominal {nominal:.0%}; range over laws)"
        if len(bcov):
            text += f", the b interval {bcov['estimate'].min():.0%}-{bcov['estimate'].max():.0%}"
        if len(trivial):
            text += f"; the LD band is trivial beyond k = {trivial.iloc[0]:.1f} (k/n = {trivial.iloc[0] / n:.2f})"
        lines.append(text + ".")
        err = s[(s["measure"] == "relative_rmse") & (s["curve"] == "median")]
        mis = []
        for dist, e in err[~err["specified"]].groupby("distribution", sort=False):
            at10 = e.iloc[np.argmin(np.abs(np.log(e["k"] / (10 * n))))]
            c = cov[(cov["distribution"] == dist)]
            cmax = c[np.isclose(c["k"], kmax)]
            mis.append(
                f"{dist}: relative RMSE {at10['estimate']:.2f} at k = {at10['k_over_n']:.3g}n"
                + (f", band covers {cmax['estimate'].iloc[0]:.0%} at k = {kmax / n:g}n" if len(cmax) else "")
            )
        if mis:
            lines.append(f"  misspecified at n = {n}: " + "; ".join(mis) + ".")
    table = summary[(summary["measure"].isin(["rmse", "band_coverage"])) & (summary["curve"] == "median")]
    if len(table):
        table = table[np.isclose(table["k_over_n"], 1) | np.isclose(table["k_over_n"], table["k_over_n"].max())]
        pivot = table.pivot_table(index=["distribution", "n"], columns=["measure", "k_over_n"], values="estimate")
        lines.append(
            "median curve: RMSE (score units) and band coverage at k/n = 1 and the largest k/n\n"
            + pivot.round(4).to_string()
        )
    return "\n".join(lines)


STUDY = register_study(
    Study(
        kind="parametric_extrapolation",
        options=Options,
        run=run,
        figure="simstudy.studies.parametric_extrapolation_figure.parametric_extrapolation_figure",
        headline=headline,
        sweep=Headline(
            {"measure": "band_coverage"}, "k_over_n", "distribution", "median-curve band coverage", role="coverage"
        ),
        check=_check,
    )
)
