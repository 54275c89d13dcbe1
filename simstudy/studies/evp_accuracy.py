"""Bias, variance and MSE of expected-maximum estimators (Dodge et al. 2021, §3, Figure 1).

A cell is one sample size B from one score distribution. Each replicate draws B scores, sorts them, and
applies every estimator at every budget n; all estimators see the same samples (common random numbers), so
their differences are estimated with paired MCSEs. The truth ``theta_n`` is exact (a finite sum for a bag,
quadrature otherwise), as is each estimator's expectation, so the exact bias stands beside the Monte Carlo
bias in the summary.

Outputs in the run directory:

- ``summary.parquet`` / ``summary.csv`` -- tidy, one row per (cell, estimator, n, measure) with ``estimate``,
  ``mcse``, ``reps`` and ``lower_joint``/``upper_joint`` (below). Measures per estimator: ``mean``, ``bias``,
  ``variance``, ``empse``, ``mse`` (Monte Carlo) and ``exact_mean``, ``exact_bias`` (exact: ``mcse`` 0, ``reps`` 0; not for a plug-in estimator, whose
  expectation has no closed form here: only the closed forms are linear in the order statistics); paired differences as estimator
  ``"v-u"`` etc. with measures ``bias``, ``variance``, ``mse``; the truth as estimator ``"truth"``, measure
  ``expected_max`` (``expected_min`` for a distribution with ``minimize: true``: every number of its cells is
  then of the minimum, in the scores' own units).
- ``lower_joint``/``upper_joint``: on the Monte Carlo rows of each single estimator (``mean``, ``bias``,
  ``variance``, ``empse``, ``mse``), a 95% *simultaneous* Monte Carlo band over n: the whole curve of the
  estimator's measure lies inside it with probability 0.95, where ``estimate ± 1.96 mcse`` covers each point
  on its own (:func:`simstudy.stats.joint.sup_t_band`: ``estimate ± c mcse`` with the sup-t critical value
  c of the correlation across n of the measure's per-replicate influence values). The correlation comes
  from the cell's first 1,024 replicates (:data:`_CROSS_REPS`; chunk array ``cross_gram`` of the chunks
  holding them, :func:`simstudy.stats.metrics.cross_gram`): c depends on it weakly, and the band's scale, the
  MCSE, uses every replicate. NaN on the other rows (exact values, the truth, paired differences, the predicted
  excess), and on every row of a cell resumed from chunks written before the band existed (said in the log
  and ``run.json``'s ``notes``). ``run.json``'s ``joint`` records the level and method.
- ``replicates.parquet`` (``study.save_replicates``) -- one row per (cell, replicate, estimator, n).
- ``run.json`` -- the resolved config, the distribution's description, environment, timings.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io, schema_docs
from simstudy.config import Config, EstimatorConfig
from simstudy.distributions import describe, sample_sorted
from simstudy.engine.memory import check_budget_memory
from simstudy.engine.runner import Task, stable_hash, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.stats import estimators, joint, metrics, truth
from simstudy.stats.metrics import format_estimate
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "Options", "headline", "STUDY", "evp_accuracy_figure"]

# Version of the chunk format and sampling scheme; bump it when either changes so old chunks are not reused.
# Not bumped for the added array ``cross_gram``: the old arrays and numbers are unchanged, so chunks written
# without it are still right (their cells get NaN joint bands) and old run directories resume.
_SCHEME = "evp_accuracy/1"
# The cell's first replicates, whose cross-budget moments give a curve's correlation across n (array cross_gram
# of the chunks holding them). All replicates would cost a (2N + 1)^2 product per estimator and replicate (60%
# of Figure 1's compute) and 8x the chunk files; c depends on the correlation weakly. At most one block.
_CROSS_REPS = 1024
# Simultaneous coverage of the lower_joint/upper_joint bands (recorded in run.json).
_JOINT_LEVEL = 0.95
# The single-estimator measures that get a joint band.
_JOINT_MEASURES = ("mean", "bias", "variance", "empse", "mse")
# Above this B the quadrature for a continuous distribution's order statistics is skipped (slow, rarely asked).
_EXACT_CONTINUOUS_MAX_B = 200
# Replicates estimated and reduced at a time within a chunk (keeps the (N, E, block) temporaries in cache).
# The bootstrap's resamples are drawn block by block, so this is part of what fixes its numbers.
_BLOCK_REPS = 1024


@dataclass(frozen=True)
class _Cell:
    key: str
    distribution: str  # its name
    B: int
    n: np.ndarray  # (N,) budgets
    truth: np.ndarray  # (N,) exact expected maximum
    weights: np.ndarray  # (N * E, B) closed-form weights, budget-major (zero rows for bootstraps, plug-ins)


@dataclass(frozen=True)
class _Work:
    """Everything a worker needs, frozen and picklable."""

    seed: int
    distributions: dict  # name -> distribution object
    cells: dict
    estimators: tuple[EstimatorConfig, ...]
    save_replicates: bool
    plugins: dict = dataclasses.field(default_factory=dict)  # e -> simstudy.plugins.PluginEstimator


def _stacked_weights(B: int, n: np.ndarray, specs) -> np.ndarray:
    """Weights of the closed-form estimators stacked budget-major: row ``n * E + e``; shape (N * E, B)."""
    W = np.zeros((n.size, len(specs), B))
    for e, spec in enumerate(specs):
        if spec.method in estimators.CLOSED_FORM:
            W[:, e] = estimators.weights(B, spec.method, n)
    return W.reshape(n.size * len(specs), B)


@lru_cache(maxsize=16)
def _workspace(shape: tuple[int, ...], thread: int) -> np.ndarray:
    """Scratch memory reused by every chunk a worker thread runs: fresh large arrays cost page faults that
    here take as long as the arithmetic. Keyed by thread so that threads never share one."""
    return np.empty(shape)


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    """One chunk: draw, sort, estimate, reduce to the Gram matrix of errors (plus the estimates if asked).

    Estimates are laid out (N, E, reps) so that one matrix product gives every closed-form estimator at
    every budget, and the reductions over replicates run along contiguous memory. They are computed in
    blocks of :data:`_BLOCK_REPS` replicates so that the temporaries stay in cache (3x faster at B = 30).
    """
    cell = work.cells[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    x = sample_sorted(work.distributions[cell.distribution], task.reps, cell.B, rng=rng)
    N, E = cell.n.size, len(work.estimators)
    W = cell.weights
    boot = [(e, s) for e, s in enumerate(work.estimators) if s.method == "bootstrap"]
    boot_rngs = {
        # Each bootstrap (and plug-in) has its own stream keyed by its name: adding an estimator changes no
        # other numbers.
        e: np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1, int(stable_hash(s.name)[:8], 16)))
        for e, s in enumerate(work.estimators)
        if s.method == "bootstrap" or e in work.plugins
    }
    gram = np.zeros((N, 1 + 2 * E, 1 + 2 * E))
    cross = None
    cross_reps = min(task.reps, _CROSS_REPS - task.first_rep)  # of the cell's first _CROSS_REPS, those here
    plugin = np.zeros((2, N))  # sums of the plug-in variance of the max and of its square (bootstraps only)
    kept: list[np.ndarray] | None = [] if work.save_replicates else None
    est_buf, sq_buf = _workspace((2, N * E, _BLOCK_REPS), threading.get_ident())
    for start in range(0, task.reps, _BLOCK_REPS):
        xb = x[start : start + _BLOCK_REPS]
        m = xb.shape[0]
        est = np.matmul(W, xb.T, out=est_buf[:, :m] if m == _BLOCK_REPS else None).reshape(N, E, m)
        for e, spec in boot:
            est[:, e] = estimators.expected_max(
                xb, "bootstrap", n=cell.n, presorted=True, resamples=spec.resamples, rng=boot_rngs[e]
            ).T
        for e, estimator in work.plugins.items():  # (m, N) from the plug-in, checked for shape and finiteness
            est[:, e] = estimator(xb, cell.n, rng=boot_rngs[e]).T
        if boot:
            # Given the sample, a K-resample bootstrap is V plus noise of variance (plug-in variance)/K.
            var = estimators.expected_max_std(xb, n=cell.n, presorted=True) ** 2  # (m, N)
            plugin += np.stack([var.sum(axis=0), (var * var).sum(axis=0)])
        if kept is not None:
            kept.append(est.copy())
        est -= cell.truth[:, None, None]  # errors, in place
        gram += metrics.moment_gram(est, scratch=sq_buf.reshape(N, E, _BLOCK_REPS) if m == _BLOCK_REPS else None)
        if start == 0 and cross_reps > 0:  # they are in the first block (_CROSS_REPS <= _BLOCK_REPS)
            features = _workspace((E, 1 + 2 * N, _CROSS_REPS), threading.get_ident())
            cross = metrics.cross_gram(est[:, :, :cross_reps], out=features)
    out = {"gram": gram}
    if cross is not None:
        out["cross_gram"] = cross
    if boot:
        out["plugin_variance"] = plugin
    if kept is not None:
        out["estimates"] = np.concatenate(kept, axis=2)
    return out


def _exact_rows(dist, cell: _Cell, specs) -> list[dict]:
    rows = [
        dict(
            cell=cell.key,
            distribution=cell.distribution,
            B=cell.B,
            estimator="truth",
            n=int(k),
            measure="expected_max",
            estimate=float(v),
            mcse=0.0,
            reps=0,
        )
        for k, v in zip(cell.n, cell.truth)
    ]
    if not dist.is_discrete and cell.B > _EXACT_CONTINUOUS_MAX_B:
        return rows
    osm = truth.order_statistic_means(dist, cell.B)
    for spec in specs:
        if spec.is_plugin:  # no exact expectation: a plug-in need not be linear in the order statistics
            continue
        closed = "v" if spec.method == "bootstrap" else spec.method
        mean = estimators.weights(cell.B, closed, cell.n) @ osm
        for measure, values in (("exact_mean", mean), ("exact_bias", mean - cell.truth)):
            rows += [
                dict(
                    cell=cell.key,
                    distribution=cell.distribution,
                    B=cell.B,
                    estimator=spec.name,
                    n=int(k),
                    measure=measure,
                    estimate=float(v),
                    mcse=0.0,
                    reps=0,
                )
                for k, v in zip(cell.n, values)
            ]
    return rows


def _cell_totals(
    run: base.ChunkedRun, key: str, names: tuple[str, ...]
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """The sums over a cell's chunks of the named arrays, read once and added in chunk order (as
    :meth:`~simstudy.studies.base.ChunkedRun.total`, so bit-identical to it); and the sum of ``cross_gram`` over
    the chunks that hold some of the cell's first :data:`_CROSS_REPS` replicates, None if one of them lacks it
    (written by an earlier version, before the array existed)."""
    totals: dict[str, np.ndarray] = {}
    cross: np.ndarray | None = None
    missing = False
    for task, arrays in run.chunks(key):
        for name in names:
            totals[name] = arrays[name] if name not in totals else totals[name] + arrays[name]
        if task.first_rep < _CROSS_REPS:
            if "cross_gram" not in arrays:
                missing = True
            else:
                cross = arrays["cross_gram"] if cross is None else cross + arrays["cross_gram"]
    return totals, None if missing else cross


def _joint_bands(perf: metrics.Performance, cross: np.ndarray) -> dict[tuple[str, int], joint.JointBand]:
    """The simultaneous band over n of each single estimator's Monte Carlo measures: ``(measure, e) -> band``.

    The scale is each point's MCSE (from every replicate); the correlation across n that of the measure's
    influence values (:func:`simstudy.stats.metrics.curve_correlations`), so at a single budget the band is
    ``estimate ± 1.96 mcse`` and it is never narrower than that anywhere.
    """
    corr = metrics.curve_correlations(cross)
    bands = {}
    for measure in _JOINT_MEASURES:
        est, se = perf.measures[measure]
        for e in range(est.shape[0]):
            bands[(measure, e)] = joint.sup_t_band_scaled(est[e], se[e], corr[measure][e], level=_JOINT_LEVEL)
    return bands


def _mc_rows(cell: _Cell, perf: metrics.Performance, specs, bands: dict | None = None) -> list[dict]:
    """The Monte Carlo rows; ``lower_joint``/``upper_joint`` from ``bands`` (``(measure, e) -> JointBand``),
    NaN where there is none."""
    rows = []
    names = [s.name for s in specs]
    nan = np.full(cell.n.size, np.nan)
    for measure, (est, se) in perf.measures.items():
        for e, name in enumerate(names):
            band = (bands or {}).get((measure, e))
            lower, upper = (nan, nan) if band is None else (band.lower, band.upper)
            rows += [
                dict(
                    cell=cell.key,
                    distribution=cell.distribution,
                    B=cell.B,
                    estimator=name,
                    n=int(k),
                    measure=measure,
                    estimate=float(a),
                    mcse=float(b),
                    reps=perf.reps,
                    lower_joint=float(lo),
                    upper_joint=float(hi),
                )
                for k, a, b, lo, hi in zip(cell.n, est[e], se[e], lower, upper)
            ]
    for measure, (est, se) in perf.paired.items():
        for p, (e, f) in enumerate(perf.pairs):
            label = f"{names[e]}-{names[f]}"
            rows += [
                dict(
                    cell=cell.key,
                    distribution=cell.distribution,
                    B=cell.B,
                    estimator=label,
                    n=int(k),
                    measure=measure,
                    estimate=float(a),
                    mcse=float(b),
                    reps=perf.reps,
                )
                for k, a, b in zip(cell.n, est[p], se[p])
            ]
    return rows


#: The kurtosis of a squared normal error, (d - m)^2 or d^2 for d ~ N(m, s^2) (chi-square with 1 dof: 3 + 12). The
#: replicates of the squared-error measures are squares, far from normal even when the errors are normal; the
#: pilot's Gram matrix has no eighth moment to estimate their kurtosis, so their plan assumes normal errors (a
#: bias, d = b + e, makes d^2 less skewed: 15 is the most a normal error gives).
_SQUARED_NORMAL_KURTOSIS = 15.0


def _add_kurtosis(rows: list[dict], G: np.ndarray, cell: _Cell, specs) -> None:
    """Give each estimator's Monte Carlo rows the kurtosis of their replicates, for the precision rule's plans.

    ``mean`` and ``bias``: that of the errors, ``m4 / m2^2`` from the Gram matrix (NaN where the estimates were
    all equal); ``variance``, ``empse`` and ``mse``: :data:`_SQUARED_NORMAL_KURTOSIS` (their replicates are squared
    errors), marked ``kurtosis_assumed`` True: a law's kurtosis, not a sample's, so the top-up's heavy-tail check
    (is a sample's kurtosis too large for a normal sample?) does not apply to it. The rule plans a row from it
    (the variance of skewed replicates is estimated less surely than a normal one's). Only the summaries the rule plans from carry it (the pilot's and the planned stage's, for the
    top-up), not the final one; paired rows have none (normal assumed).
    """
    C = metrics.centre_gram(G)  # (N, 1 + 2E, 1 + 2E): centred (1, d_e - m_e, (d_e - m_e)^2, ...)
    E = len(specs)
    lin, sq = 1 + 2 * np.arange(E), 2 + 2 * np.arange(E)
    with np.errstate(divide="ignore", invalid="ignore"):
        kurt = C[:, sq, sq] * C[:, 0, 0][:, None] / C[:, lin, lin] ** 2  # (N, E): (m4 / R) / (m2 / R)^2
    at = {(s.name, int(k)): kurt[i, e] for e, s in enumerate(specs) for i, k in enumerate(cell.n)}
    for row in rows:
        if (row["estimator"], row["n"]) not in at:
            continue
        if row["measure"] in ("mean", "bias"):
            value = at[(row["estimator"], row["n"])]
            row["kurtosis"] = float(value) if np.isfinite(value) else np.nan
        elif row["measure"] in ("variance", "empse", "mse"):
            row["kurtosis"] = _SQUARED_NORMAL_KURTOSIS
            row["kurtosis_assumed"] = True  # a law's, not a sample's: the top-up's heavy-tail check skips it


def _degenerate_notes(cell: _Cell, perf: metrics.Performance, specs) -> list[str]:
    """Say (in the log and run.json) where an estimator's estimates were all equal: its zeros are exact."""
    notes = []
    for e, spec in enumerate(specs):
        flat = cell.n[perf.degenerate[e]] if perf.degenerate is not None else []
        if len(flat):
            notes.append(
                f"cell {cell.key}: estimator {spec.name} gave the same estimate in all {perf.reps} replicates at "
                f"n = {', '.join(map(str, flat))}: its variance, empse and MCSEs there are exact zeros"
            )
            logging.getLogger(__name__).warning("%s", notes[-1])
    return notes


def _mirror_joint(summary: pd.DataFrame, mirrored, measures) -> pd.DataFrame:
    """The joint bands of the rows :func:`~simstudy.studies.base.mirror_back` negated, negated too (ends swapped)."""
    if not list(mirrored) or summary.empty:
        return summary
    flip = summary["distribution"].isin(list(mirrored)) & summary["measure"].isin(measures)
    lower, upper = summary["lower_joint"], summary["upper_joint"]
    return summary.assign(lower_joint=lower.where(~flip, -upper), upper_joint=upper.where(~flip, -lower))


def _bootstrap_rows(cell: _Cell, plugin: np.ndarray, reps: int, specs) -> list[dict]:
    """The excess MSE a K-resample bootstrap has over V, predicted from the plug-in variance of the max.

    Given a sample, the bootstrap's estimate is V's plus the mean of K independent resampled maxima minus
    their expectation, so MSE(bootstrap) - MSE(V) = E[plug-in variance] / K exactly; its Monte Carlo estimate
    here is far more precise than the paired MSE difference, whose cross term averages to zero only slowly.
    """
    mean = plugin[0] / reps
    sd = np.sqrt(np.clip((plugin[1] - reps * mean**2) / (reps - 1), 0.0, None))
    return [
        dict(
            cell=cell.key,
            distribution=cell.distribution,
            B=cell.B,
            estimator=s.name,
            n=int(k),
            measure="excess_mse_predicted",
            estimate=float(m / s.resamples),
            mcse=float(v / s.resamples / np.sqrt(reps)),
            reps=reps,
        )
        for s in specs
        if s.method == "bootstrap"
        for k, m, v in zip(cell.n, mean, sd)
    ]


def _codes(codes: np.ndarray, values):
    """A dictionary-encoded string column: ``values[codes]``, as ``pyarrow``'s ``dictionary_encode`` makes it."""
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(codes, pa.array([str(v) for v in values]))


def _write_replicates(run: base.ChunkedRun, cells, specs, path: Path, mirrored=frozenset()) -> None:
    """Stream the per-replicate estimates of every chunk into one parquet file (bounded memory); those of the
    ``mirrored`` distributions (``minimize: true``, drawing -X) negated, estimates of the minimum of X."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = np.array([s.name for s in specs])
    with io.atomic_path(path) as tmp:
        writer = None
        try:
            for key, cell in cells.items():
                for task, arrays in run.chunks(key):
                    est = arrays["estimates"]  # (N, E, reps)
                    est = est.transpose(2, 1, 0)  # rows ordered by replicate, then estimator, then n
                    reps, E, N = est.shape
                    # The dictionary columns built from their codes: the same columns as dictionary-encoding
                    # the repeated strings, without making est.size Python strings first.
                    table = pa.table(
                        {
                            "cell": _codes(np.zeros(est.size, dtype=np.int32), [key]),
                            "distribution": _codes(np.zeros(est.size, dtype=np.int32), [cell.distribution]),
                            "B": np.full(est.size, cell.B, dtype=np.int32),
                            "replicate": np.repeat(task.first_rep + np.arange(reps), E * N),
                            "estimator": _codes(np.tile(np.repeat(np.arange(E, dtype=np.int32), N), reps), names),
                            "n": np.tile(cell.n.astype(np.int32), reps * E),
                            "estimate": -est.ravel() if cell.distribution in mirrored else est.ravel(),
                        }
                    )
                    if writer is None:
                        writer = pq.ParquetWriter(tmp, table.schema)
                    writer.write_table(table)
        finally:
            if writer is not None:
                writer.close()


def _replicates(run: base.ChunkedRun, cells, specs, path: Path, mirrored=frozenset()) -> dict:
    """Write ``replicates.parquet`` unless it is already the file these chunks make: a rerun that computes
    nothing leaves a large file untouched. Its content is fixed by the chunks (their fingerprint and tasks),
    the cells' labels and the estimators' names; ``run.json`` records that key with the size and mtime of the
    file written, and a file that differs in any of them (a changed run, a file edited or replaced) is written.
    Returns the record for ``run.json``."""
    import json

    key = stable_hash(
        {
            "format": 1,
            "fingerprint": run.fingerprint,
            "estimators": [s.name for s in specs],
            "cells": [
                [k, c.distribution, c.B, [int(n) for n in c.n], [[t.chunk, t.reps] for t in run.tasks_by_cell[k]]]
                for k, c in cells.items()
            ],
        }
    )
    try:
        before = json.loads((path.parent / "run.json").read_text()).get("replicates") or {}
        stat = path.stat()
        if before == {"key": key, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}:
            return before
    except (OSError, ValueError, AttributeError):
        pass
    _write_replicates(run, cells, specs, path, mirrored)
    stat = path.stat()
    return {"key": key, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the estimator-accuracy study of ``config`` and write its outputs into ``out_dir``.

    Every distribution of ``config.distributions`` meets every sample size B of ``config.budget.B`` (one cell
    each); each of ``study.reps`` replicates draws B scores and applies every estimator of ``config.estimators``
    at every budget n of ``config.budget.n_for(B)``. The truth (the expected maximum of n draws) is exact, as
    is each closed-form estimator's expectation, so the exact bias is reported beside the Monte Carlo one.
    This reproduces Dodge et al. (2021), Figure 1 (preset ``dodge2021_fig1``), and the bootstrap claim of
    Dodge et al. (2019), §3.2 (preset ``dodge2019_bootstrap``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"evp_accuracy"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset; ``config.study.options`` is an :class:`Options`).
    out_dir : str or path-like
        The run directory; created if missing. Chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` only computes the new ones).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (cell, estimator, n, measure) with columns ``cell``, ``distribution``, ``B``, ``estimator``, ``n``,
        ``measure``, ``estimate`` (score units; squared score units for ``variance`` and ``mse``), ``mcse``
        and ``reps`` (see the module docstring for the measures); ``report``: the runner's report;
        ``files``: name to path of every file written (``summary_parquet``, ``summary_csv``, ``run``, and
        ``replicates`` with ``study.save_replicates``); ``kind``: ``"evp_accuracy"``.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: improved reporting
    of experimental results. EMNLP 2019.

    Examples
    --------
    A tiny run: U and V from samples of B = 5 scores of a four-value bag, 200 replicates (the paper's scale
    is ``simstudy.compose("dodge2021_fig1")``, 10,000 replicates of B = 30).

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "bag", "values": [0.5, 0.6, 0.7, 0.8]},
    ...     "budget": {"B": 5, "n": None},
    ...     "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 200, "save_replicates": False},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    ...     print(sorted(path.name for path in result.files.values()))
    ['run.json', 'summary.csv', 'summary.parquet']
    >>> s = result.summary
    >>> at5 = s[(s.n == 5) & s.measure.isin(["expected_max", "exact_bias", "bias"]) & ~s.estimator.str.contains("-")]
    >>> print(at5[["estimator", "measure", "estimate", "mcse"]].round(4).to_string(index=False))
    estimator      measure  estimate   mcse
        truth expected_max    0.7730 0.0000
            u   exact_bias    0.0000 0.0000
            v   exact_bias   -0.0244 0.0000
            u         bias    0.0005 0.0040
            v         bias   -0.0241 0.0039

    U is unbiased; V's exact bias at n = B is negative, and the Monte Carlo bias agrees within its MCSE.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    specs = config.estimators
    dists = {d.name: d.build() for d in config.distributions}

    t0 = time.perf_counter()
    cells: dict[str, _Cell] = {}
    for spec in config.distributions:
        for B in config.budget.B:
            key = base.cell_key(distribution=spec.key, B=B)
            n = np.asarray(config.budget.n_for(B), dtype=np.int64)
            cells[key] = _Cell(
                key, spec.name, B, n, truth.expected_max(dists[spec.name], n), _stacked_weights(B, n, specs)
            )
    exact = [row for cell in cells.values() for row in _exact_rows(dists[cell.distribution], cell, specs)]
    truth_seconds = time.perf_counter() - t0

    plugins = {e: s.plugin() for e, s in enumerate(specs) if s.is_plugin}
    work = _Work(config.seed, dists, cells, specs, config.study.save_replicates, plugins)
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={
            "estimators": [s.settings for s in specs],
            "n": config.budget.n,
            "save_replicates": config.study.save_replicates,
        },
        stage=stage,
    )

    t0 = time.perf_counter()
    mc, notes = [], []
    boot = any(s.method == "bootstrap" for s in specs)
    names = ("gram",) + (("plugin_variance",) if boot else ())
    for key, cell in run_.succeeded(cells).items():
        totals, cross = _cell_totals(run_, key, names)
        perf = metrics.performance(totals["gram"], cell.truth)
        if cross is None:
            notes.append(
                f"cell {cell.key}: resumed from chunks written before the joint bands existed (no cross_gram): "
                "its lower_joint/upper_joint are NaN; a run into a new directory computes them"
            )
            logging.getLogger(__name__).warning("%s", notes[-1])
        if cross is None:
            bands = None
        else:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1, user_api="blas"):  # small products: threads only contend (6x slower)
                bands = _joint_bands(perf, cross)
        rows = _mc_rows(cell, perf, specs, bands)
        if run_.stage is not None and run_.stage.planning:  # the precision rule plans a skewed mean from its kurtosis
            _add_kurtosis(rows, totals["gram"], cell, specs)
        mc += rows
        notes += _degenerate_notes(cell, perf, specs)
        if boot:
            mc += _bootstrap_rows(cell, totals["plugin_variance"], run_.reps(key), specs)
    # minimize: true: the draws are -X, so the truth, means and biases are those of -min X (paired ones too); the
    # truth's measure is then expected_min (mirror_back names it)
    mirrored = [d.name for d in config.distributions if d.minimize]
    signed = ("expected_max", "mean", "bias", "exact_mean", "exact_bias")
    frame = pd.DataFrame(exact + mc)
    frame = frame.assign(**{c: frame[c] if c in frame else np.nan for c in ("lower_joint", "upper_joint")})
    summary = base.mirror_back(_mirror_joint(frame, mirrored, signed), mirrored, signed)
    summary_seconds = time.perf_counter() - t0

    files, written = {}, {}
    if config.study.save_replicates:
        files["replicates"] = out_dir / "replicates.parquet"
        written = _replicates(run_, run_.succeeded(cells), specs, files["replicates"], frozenset(mirrored))
    metadata = {
        "cells": {k: {"distribution": c.distribution, "B": c.B, "n": c.n} for k, c in cells.items()},
        "distributions": {name: describe(d) for name, d in dists.items()},
        "timings": {"truth_seconds": truth_seconds, "summary_seconds": summary_seconds},
        "joint": {
            "level": _JOINT_LEVEL,
            "method": "sup-t over n (simstudy.stats.joint.sup_t_band), per cell, estimator and measure",
            "correlation_replicates": _CROSS_REPS,
        },
        **({"replicates": written} if written else {}),
        **({"notes": notes} if notes else {}),
    }
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata, files=files)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of an evp_accuracy study, the keys ``study.*`` of its config.

    Only the options every study has: the estimators and the budgets are config groups of their own
    (``estimators``, ``budget.B``, ``budget.n``). Its ``replicates.parquet`` (``study.save_replicates=true``; off by
    default since writing it cost Figure 1's run a sixth of its time) takes 8 bytes per estimate: reps x
    estimators x budgets per cell. The dataclass holds the defaults; the values of a config are
    checked by :func:`simstudy.schema.parse` (called by :func:`simstudy.config.parse`), which raises a
    :class:`~simstudy.schema.ConfigError` naming the key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    See Also
    --------
    run : the study these options configure.

    Examples
    --------
    >>> from simstudy import schema
    >>> Options()
    Options(reps=10000, chunk_reps=2500, save_replicates=False)
    >>> schema.parse(Options, {"reps": 3000, "save_replicates": False}, "study.")
    Options(reps=3000, chunk_reps=2500, save_replicates=False)
    >>> schema.parse(Options, {"reps": 1}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.reps must be an integer >= 2, got 1
    """

    reps: int = reps_option(10000)
    chunk_reps: int = chunk_reps_option(2500)


def headline(summary: pd.DataFrame) -> str:
    """Bias, variance and MSE, with their MCSEs, at the largest n of each cell: the lines ``simstudy`` prints.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``cell``, ``distribution``, ``B``, ``estimator``, ``n``, ``measure``,
        ``estimate``, ``mcse``).

    Returns
    -------
    str
        One line per (cell, estimator, measure) of the ``bias``, ``variance`` and ``mse`` rows at the cell's
        largest n, each estimate ± its MCSE rounded to the digits the MCSE supports
        (:func:`simstudy.stats.metrics.format_estimate`; score units, squared for variance and MSE); paired
        differences (estimator ``"v-u"`` etc.) included.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "cell": "c1", "distribution": "bag", "B": 30, "estimator": ["v", "v"], "n": 30,
    ...     "measure": ["bias", "mse"], "estimate": [-0.0123, 0.000456], "mcse": [0.0004, 0.00002]})
    >>> print(headline(summary))
    bag B=30 n=30 v        bias     -0.0123 ± 0.0004
    bag B=30 n=30 v        mse      0.00046 ± 0.00002
    """
    lines = []
    for _, s in summary.groupby("cell", sort=False):
        n_max = s["n"].max()
        at = s[(s["n"] == n_max) & s["measure"].isin(["bias", "variance", "mse"])]
        for (est, measure), row in at.set_index(["estimator", "measure"]).iterrows():
            lines.append(
                f"{row['distribution']} B={row['B']} n={n_max} {est:<8} {measure:<8} "
                f"{format_estimate(row['estimate'], row['mcse'])}"
            )
    return "\n".join(lines)


def _check(config: Config) -> None:
    check_budget_memory(config, cells=len(config.distributions) * len(config.budget.B))


def evp_accuracy_figure(
    summary: pd.DataFrame, *, reference: str = "v", xscale: str = "linear", title: str | None = None
):
    """Mean, variance and MSE of each estimator against the budget n (Dodge et al. 2021, Figure 1).

    One column per cell (distribution and B). When bootstrap estimators are present, a fourth row shows
    each one's paired excess MSE over the ``reference`` closed form (Dodge et al. 2019, §3.2). Each Monte
    Carlo curve is shaded with its 95% simultaneous (sup-t) Monte Carlo band over n (``lower_joint``,
    ``upper_joint``: the whole curve lies inside with probability 0.95), or, where the summary has none (a
    paired difference, an older summary), with the pointwise band ±1.96 MCSE; the legend says which. The
    exact expected maximum is a dashed black line.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of an ``evp_accuracy`` study (:mod:`simstudy.studies.evp_accuracy`), one row per
        cell, estimator, n and measure: columns ``cell``, ``distribution``, ``B`` (sample size, trials),
        ``estimator`` (``"u"``, ``"v"``, ``"w"``, bootstrap names, ``"truth"`` and paired differences such as
        ``"boot-v"``), ``n`` (budget, trials), ``measure`` (``"mean"``, ``"variance"``, ``"mse"``; for the
        truth ``"expected_max"``, or ``"expected_min"`` for a distribution with ``minimize: true``; optionally
        ``"excess_mse_predicted"``), ``estimate`` (score units, squared
        for variance and MSE), ``mcse`` (same units) and ``reps`` (replicates); optionally ``lower_joint`` and
        ``upper_joint`` (same units: the simultaneous band, NaN where there is none).
    reference : str, keyword-only, default "v"
        The closed-form estimator the bootstrap's excess MSE is relative to.
    xscale : {"linear", "log"}, keyword-only, default "linear"
        The n axis: linear as in the paper's figure (n up to 30); ``"log"`` for budgets over orders of magnitude
        (the audit's n up to the sample size), read as 1, 2, 5, 10, ...
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one saying what the panels show (the legend,
        below the panels, names the bands).

    Returns
    -------
    matplotlib.figure.Figure
        A grid of 3 rows (4 with bootstrap estimators) by one column per cell; close it with
        ``plt.close(fig)`` when done.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance and
    estimation of a random variable's maximum. Findings of EMNLP 2021, arXiv:2110.00613.
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP 2019, arXiv:1909.03004.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [("truth", "expected_max", n, 0.5 + 0.1 * n) for n in (1, 2, 3)]
    >>> rows += [(e, m, n, 0.5 + 0.1 * n) for e in ("u", "v") for m in ("mean", "variance", "mse") for n in (1, 2, 3)]
    >>> summary = pd.DataFrame(rows, columns=["estimator", "measure", "n", "estimate"])
    >>> summary = summary.assign(cell="uniform, B = 5", distribution="uniform", B=5, mcse=0.01, reps=100)
    >>> fig = evp_accuracy_figure(summary, title="U and V")
    >>> len(fig.axes), fig.axes[0].get_title()
    (3, 'uniform, B = 5, 100 replicates')
    >>> plt.close(fig)
    """
    from simstudy.chart_style import (
        axes_title,
        draw_band,
        estimator_label,
        labels,
        legend,
        set_xscale,
        shade_patch,
        suptitle,
        theme,
        xscale_iv,
    )
    from simstudy.figures import distribution, estimator_palette

    xscale_iv(xscale)
    plt = theme()
    cells = list(dict.fromkeys(summary["cell"]))
    # minimize: true throughout (the truth is expected_min in every cell): the estimators estimate the minimum
    measures = set(summary.loc[summary["estimator"] == "truth", "measure"])
    best = "minimum" if "expected_min" in measures and "expected_max" not in measures else "maximum"
    singles = [e for e in dict.fromkeys(summary["estimator"]) if e != "truth" and "-" not in e]
    palette = estimator_palette(singles)
    excess = [
        e
        for e in singles
        if e != reference and f"{e}-{reference}" in set(summary["estimator"]) and e.startswith("boot")
    ]
    rows = [("mean", "expected value"), ("variance", "variance"), ("mse", "MSE")]
    if excess:
        rows.append(("excess", f"excess MSE over {reference.upper()} (%)"))
    drawn: set[str] = set()  # which bands shade the curves: "joint", "pointwise"
    fig, axes = plt.subplots(
        len(rows),
        len(cells),
        figsize=(4.6 * len(cells), 2.5 * len(rows) + 0.5),
        sharex="col",
        squeeze=False,
        layout="constrained",
    )
    for c, cell in enumerate(cells):
        s = summary[summary["cell"] == cell]
        truth = s[(s["estimator"] == "truth") & s["measure"].isin(["expected_max", "expected_min"])].sort_values("n")
        minimum = (truth["measure"] == "expected_min").any()  # minimize: true, the exact expected minimum
        axes[0, c].plot(
            truth["n"],
            truth["estimate"],
            color="black",
            lw=1.2,
            ls="--",
            label="true expected minimum (exact)" if minimum else "true EVP (exact)",
            zorder=5,
        )  # on top: the unbiased U runs right along it
        for r, (measure, ylabel) in enumerate(rows):
            ax = axes[r, c]
            if measure == "excess":
                # Relative to V's MSE, on a linear scale: the excess shrinks like 1/K and never drops below 0
                # beyond Monte Carlo error; dashed, its precise prediction E[plug-in variance] / K.
                ref = s[(s["estimator"] == reference) & (s["measure"] == "mse")].set_index("n")["estimate"]
                for est in excess:
                    diff = s[(s["estimator"] == f"{est}-{reference}") & (s["measure"] == "mse")].set_index("n")
                    rel = diff[["estimate", "mcse"]].div(ref, axis=0).mul(100).reset_index()
                    draw_band(ax, rel, "n", est, palette[est])
                    predicted = s[(s["estimator"] == est) & (s["measure"] == "excess_mse_predicted")].set_index("n")
                    if len(predicted):
                        ax.plot(
                            predicted.index,
                            100 * predicted["estimate"] / ref,
                            color=palette[est],
                            ls="--",
                            lw=1,
                            label=f"{est}: predicted" if c == 0 else None,
                        )
                ax.axhline(0, color="black", lw=0.8)
            else:
                for est in singles:
                    curve = s[(s["estimator"] == est) & (s["measure"] == measure)]
                    joint_band = _has_joint(curve)
                    drawn.add("joint" if joint_band else "pointwise")
                    low, high = ("lower_joint", "upper_joint") if joint_band else (None, None)
                    draw_band(ax, curve, "n", estimator_label(est), palette[est], low=low, high=high)
            if c == 0:
                labels(ax, ylabel=ylabel)
        reps = int(s["reps"].max())
        axes_title(
            axes[0, c], f"{distribution(s['distribution'].iloc[0])}, B = {int(s['B'].iloc[0])}, {reps:,} replicates"
        )
        labels(axes[-1, c], xlabel="n (budget: number of trials)")
        set_xscale(axes[-1, c], xscale)
        axes[-1, c].set_xlim(truth["n"].min(), truth["n"].max())
    pointwise = shade_patch("95% Monte Carlo interval (±1.96 MCSE), pointwise")
    shade = {
        frozenset({"joint"}): shade_patch("shaded: 95% simultaneous (sup-t) Monte Carlo band over n"),
        frozenset({"joint", "pointwise"}): shade_patch(
            "shaded: 95% simultaneous (sup-t) Monte Carlo band over n; pointwise ±1.96 MCSE where none"
        ),
    }.get(frozenset(drawn), pointwise)
    # Below the panels, not in one: at small n the curves rise through every corner of the top panel.
    legend(fig, axes[0, 0], extra=[shade], loc="outside lower center", ncols=2 if len(cells) == 1 else 3)
    if excess:
        legend(axes[-1, 0], extra=[pointwise], loc="upper left", fontsize=7)
    suptitle(
        fig,
        title
        or f"How well each estimator of the expected {best} of n scores does from one sample of B scores: its "
        "average, variance and mean squared error against n, beside the exact value (dashed)",
    )
    return fig


def _has_joint(curve: pd.DataFrame) -> bool:
    """Whether a curve's rows carry a simultaneous band (every row: a band with holes is not simultaneous)."""
    return (
        "lower_joint" in curve
        and len(curve) > 0
        and bool(np.isfinite(curve["lower_joint"]).all() and np.isfinite(curve["upper_joint"]).all())
    )


STUDY = register_study(
    Study(
        kind="evp_accuracy",
        options=Options,
        run=run,
        figure=evp_accuracy_figure,
        headline=headline,
        sweep=Headline({"measure": "mse"}, "n", "estimator", "MSE"),
        check=_check,
        plugin_estimators=True,
    )
)
