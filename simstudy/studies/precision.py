"""Precision as the stopping rule (``study.precision``): a pilot, then each cell's planned number of replicates.

With ``study.precision`` set, any study kind runs in three stages in one run directory (:func:`run_study`):

1. **the pilot**: the study at ``study.reps`` replicates per cell, its chunks stored, its summary kept in memory
   (nothing else written; a sharded run computes or finds the whole pilot in every shard, so every shard
   plans the same);
2. **the planned stage**: each cell at the replicates its pilot planned (:func:`plan_precision`, the maths in
   :mod:`simstudy.engine.precision`), reusing every pilot chunk (chunk keys do not depend on ``reps``);
3. **the top-up**: the planned stage's summary re-plans each cell by the same bounds (:func:`replan_precision`;
   kappa at :data:`HEAVY_TAIL_CONFIDENCE` for a row whose kurtosis shows a heavy tail);
   a cell that needs more runs on to it, reusing every chunk. Where no cell does, the planned stage's summary is
   the result, written at once (no second reduction).

The final summary gets the columns ``target`` (each row's absolute MCSE target, NaN if untargeted) and
``reached_precision`` (``mcse <= target``, False for every row of a cell that hit ``study.max_reps``), and
``run.json`` a ``precision`` block (the rule, kappa's confidence, the pilot, each cell's planned and final reps,
the topped-up, capped and missed cells, the replicates of each stage). The log says whether a top-up ran and
names every cell that hit the cap or missed a target.

A cell's replicates depend only on its pilot and planned stage, which depend only on the seed and the config:
the numbers are bit-identical for any ``runner.n_jobs``, backend and shard split. A shard tops up only once it
finds every chunk of the planned stage stored; a collect that finds a top-up not yet run refuses
(:class:`TopUpPending`): the shards run once more. A tighter target extends the run, reusing every chunk. Why
the rule does not bias what it reports: :mod:`simstudy.engine.precision`.

=========================  =========================================================================
:func:`run_study`          run a study under its precision rule (or plainly, without one)
:func:`pilot`              the pilot stage alone
:func:`plan_run`           the pilot planned: the replicates a target needs and their time (``simstudy plan``)
:class:`Planned`           what :func:`plan_run` returns
:func:`plan_precision`     the plan from a pilot's summary: each row's and each cell's replicates
:func:`replan_precision`   the top-up's plan from the planned stage's summary
:class:`TopUpPending`      a collect before the shards ran the top-up
:class:`PrecisionPlan`     the plan; it annotates the final summary
=========================  =========================================================================
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.engine import precision as _precision
from simstudy.engine.runner import MissingChunks
from simstudy.schema import ConfigError
from simstudy.studies import base
from simstudy.studies.base import StudyResult

__all__ = [
    "CONFIDENCE",
    "HEAVY_TAIL_CONFIDENCE",
    "PrecisionPlan",
    "TopUpPending",
    "plan_precision",
    "replan_precision",
    "pilot",
    "run_study",
    "Planned",
    "plan_run",
]

log = logging.getLogger("simstudy")

#: The probability with which a cell's plan meets its targets (the confidence of the plan's upper bound on each
#: row's MCSE: kappa's one-sided chi-square bound, a rate's exact binomial bound).
CONFIDENCE = 0.95

#: The top-up's confidence for a row whose planned stage shows a tail heavier than normal
#: (:func:`simstudy.engine.precision.heavy_tailed`): its sample kurtosis underestimates the tail's, so kappa at
#: :data:`CONFIDENCE` met the target in only 94% of lognormal runs from a pilot of 100; at 0.99, in 96%, at no
#: cost to normal rows (docs/guides/precision.md).
HEAVY_TAIL_CONFIDENCE = 0.99


class TopUpPending(Exception):
    """``simstudy collect`` of a sharded run whose planned stage calls for a top-up the shards have not run yet.

    The shards computed (or found) the pilot and the planned stage; the planned stage's summary re-plans some cells
    to more replicates, whose chunks no shard has stored: the shards must run once more (each computes only its
    share of the top-up) before the collect can summarise. The message is one line saying so.

    Examples
    --------
    >>> str(TopUpPending("run: run every shard once more"))
    'run: run every shard once more'
    """


@dataclass(frozen=True)
class PrecisionPlan:
    """What a pilot planned: each targeted row's replicates and each cell's, under ``study.precision``.

    Made by :func:`plan_precision`; :meth:`annotate` adds the rule's columns to the final summary.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per Monte Carlo row of the summary planned from (the pilot's; the planned stage's for the top-up):
        ``cell``, ``distribution``, the study's keys, ``measure``, ``pilot_estimate``, ``pilot_mcse``,
        ``pilot_reps`` (the replicates of that summary's row), ``target`` (absolute MCSE target, in the
        measure's units; NaN untargeted), ``rate`` (a mean of 0/1 replicates), ``mcse_bound`` (the upper
        ``confidence`` bound on the pilot's MCSE the plan uses: ``pilot_mcse sqrt(kappa)`` (kappa for the row's
        ``kurtosis`` where the pilot's summary has that column; in the top-up, at :data:`HEAVY_TAIL_CONFIDENCE`
        for a row whose sample kurtosis shows a heavy tail), or a rate's from its
        exact bound on ``p (1 - p)``), ``reps_needed`` (whole chunks, within [pilot, cap]) and ``capped``
        (needs more than ``max_reps``).
    cell_reps : dict of str to int
        Each cell's replicates: the largest ``reps_needed`` of its rows (the pilot's if none is targeted).
    precision : tuple of (str, float, bool)
        ``study.precision`` (:func:`simstudy.schema.precision`).
    pilot_reps : int
        ``study.reps``, the pilot's replicates per cell.
    max_reps : int
        The cap (``study.max_reps``, or 100 x ``study.reps``).
    chunk_reps : int
        ``study.chunk_reps``.
    confidence : float, optional
        Kappa's confidence, :data:`CONFIDENCE`.
    planned_reps : dict of str to int, optional
        The top-up's plan (:func:`replan_precision`): each cell's replicates in the planned stage, which its
        ``table`` was planned from (its ``pilot_reps`` column: the replicates of each row's MCSE); None (default)
        for the pilot's plan.

    Examples
    --------
    >>> table = pd.DataFrame({"cell": ["c0", "c0"], "measure": ["mean", "mse"], "reps_needed": [4000, 2000],
    ...                       "capped": [False, False]})
    >>> plan = PrecisionPlan(table, {"c0": 4000}, (("*", 0.01, False),), 1000, 100_000, 1000)
    >>> plan.capped_cells
    ()
    >>> final = pd.DataFrame({"cell": ["c0", "c0"], "measure": ["mean", "mse"], "estimate": [0.5, 0.1],
    ...                       "mcse": [0.008, 0.011], "reps": [4000, 4000]})
    >>> summary, block = plan.annotate(final)
    >>> summary[["measure", "target", "reached_precision"]]
      measure  target  reached_precision
    0    mean    0.01               True
    1     mse    0.01              False
    >>> block["reps"], block["missed"]
    ({'c0': 4000}, ['c0'])
    """

    table: pd.DataFrame
    cell_reps: dict[str, int]
    precision: tuple
    pilot_reps: int
    max_reps: int
    chunk_reps: int
    confidence: float = CONFIDENCE
    planned_reps: dict[str, int] | None = None

    @property
    def topped_up(self) -> tuple[str, ...]:
        """The cells the top-up runs past their planned replicates (none for the pilot's plan)."""
        if self.planned_reps is None:
            return ()
        return tuple(c for c, n in self.cell_reps.items() if n > self.planned_reps.get(c, n))

    @property
    def capped_cells(self) -> tuple[str, ...]:
        """The cells some of whose targets need more than ``max_reps`` replicates."""
        if self.table.empty:
            return ()
        return tuple(dict.fromkeys(self.table.loc[self.table["capped"].astype(bool), "cell"]))

    def annotate(self, summary: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
        """The final summary with ``target`` and ``reached_precision``, and run.json's ``precision`` block.

        Parameters
        ----------
        summary : pandas.DataFrame
            The final tidy summary (``cell``, ``measure``, ``estimate``, ``mcse``, ``reps`` ...).

        Returns
        -------
        summary : pandas.DataFrame
            A copy with the float column ``target`` (relative targets taken of the final ``|estimate|``; NaN
            for untargeted and exact rows) and the bool column ``reached_precision``.
        block : dict
            The rule, confidence, pilot and cap, reps per cell, and the capped and missed cells.
        """
        summary = summary.copy()
        mc = _monte_carlo(summary)
        measure = _measure(summary)
        present = set(measure[mc].tolist())
        precision = tuple(t for t in self.precision if t[0] == "*" or t[0] in present)
        target = np.full(len(summary), np.nan)
        if mc.any():
            target[mc] = _precision.absolute_targets(precision, measure[mc], summary["estimate"].to_numpy(float)[mc])
        mcse = pd.to_numeric(summary["mcse"], errors="coerce").to_numpy(float) if "mcse" in summary else target
        with np.errstate(invalid="ignore"):
            reached = np.where(np.isnan(target), True, mcse <= target)
        capped = set(self.capped_cells)
        cells = summary["cell"].to_numpy(dtype=object) if "cell" in summary else np.array([""] * len(summary))
        failed = measure == "failed_chunks"
        reached = reached & ~np.isin(cells, list(capped)) & ~failed
        summary["target"] = target
        summary["reached_precision"] = reached.astype(bool)
        with np.errstate(invalid="ignore"):
            short = ~np.isnan(target) & ~(mcse <= target)  # a targeted row above its target
        missed = list(dict.fromkeys(c for c, miss in zip(cells, short) if miss and c not in capped))
        for cell in capped:
            rows = self.table[(self.table["cell"] == cell) & self.table["capped"].astype(bool)]
            log.warning(
                "precision: cell %s%s hit study.max_reps=%d (%s would need more); its rows have "
                "reached_precision=false",
                cell,
                _where(rows),
                self.max_reps,
                ", ".join(dict.fromkeys(rows["measure"].astype(str))),
            )
        for cell in missed:
            log.warning(
                "precision: cell %s missed its target at %d replicates (the plan meets it with probability "
                "about %g); a rerun with a larger study.reps (the pilot) plans more",
                cell,
                self.cell_reps.get(cell, self.pilot_reps),
                self.confidence,
            )
        planned = self.planned_reps if self.planned_reps is not None else self.cell_reps
        cells = list(self.cell_reps)
        block = {
            "rule": "three stages: a pilot of study.reps plans N1 = ceil(n0 (mcse0/target)^2 kappa) per cell, in "
            "whole chunks, within [study.reps, study.max_reps]; kappa = nu/chi2_{1-confidence}(nu), nu = n0-1 or, "
            "for a row with the pilot's kurtosis k, 2 n0/(k-(n0-3)/(n0-1)); a rate (a mean "
            "of 0/1 replicates) plans N1 = ceil(n0 U / (r target^2)), U the exact upper confidence bound on "
            "p(1-p) from its count of r; then the same plan from the N1 replicates' summary (kappa at "
            "heavy_tail_confidence for a row whose sample kurtosis exceeds 3 + 2 sqrt(24/N1)) tops a cell up to "
            "its N2 where N2 > N1",
            "targets": [list(t) for t in self.precision],
            "confidence": self.confidence,
            "heavy_tail_confidence": HEAVY_TAIL_CONFIDENCE,
            "pilot_reps": self.pilot_reps,
            "max_reps": self.max_reps,
            "chunk_reps": self.chunk_reps,
            "planned_reps": dict(planned),
            "reps": dict(self.cell_reps),
            "topped_up": list(self.topped_up),
            "stage_replicates": {  # every cell's replicates run in each stage, summed
                "pilot": self.pilot_reps * len(cells),
                "planned": sum(planned[c] - self.pilot_reps for c in cells),
                "top_up": sum(self.cell_reps[c] - planned[c] for c in cells),
            },
            "capped": list(capped),
            "missed": missed,
        }
        return summary, block


def _monte_carlo(summary: pd.DataFrame) -> np.ndarray:
    """The rows estimated by simulation, a bool array: positive reps and a finite MCSE (not exact, not
    failed_chunks)."""
    if not {"estimate", "mcse"} <= set(summary.columns):
        return np.zeros(len(summary), bool)
    mcse = pd.to_numeric(summary["mcse"], errors="coerce").to_numpy(float)
    reps = pd.to_numeric(summary["reps"], errors="coerce").fillna(0).to_numpy(float) if "reps" in summary else 1.0
    return (reps > 0) & ~np.isnan(mcse) & (_measure(summary) != "failed_chunks")


def _measure(summary: pd.DataFrame) -> np.ndarray:
    """Each row's measure, an object array; ``"estimate"`` for a study whose summary has no ``measure`` column
    (its estimate is its one measure: band_coverage's and bootstrap_coverage's coverage), or for its rows
    without one."""
    if "measure" not in summary:
        return np.full(len(summary), "estimate", dtype=object)
    measure = summary["measure"].to_numpy(dtype=object, na_value=None)
    return np.where(pd.isna(measure), "estimate", measure).astype(object)


def _where(rows: pd.DataFrame) -> str:
    """A cell's description for the log: its distribution and keys."""
    if rows.empty:
        return ""
    first = rows.iloc[0]
    described = ", ".join(f"{k}={first[k]}" for k in _keys(rows) if k != "cell")
    return f" ({described})" if described else ""


def _keys(frame: pd.DataFrame) -> list[str]:
    """A summary's cell columns: those before ``measure`` (``cell``, ``distribution``, the study's keys)."""
    cols = list(frame.columns)
    end = cols.index("measure") if "measure" in cols else cols.index("estimate") if "estimate" in cols else 0
    return [c for c in cols[:end] if c not in ("study", "reps", "estimate", "mcse")]


def _rates(rows: pd.DataFrame, measure: np.ndarray) -> np.ndarray:
    """Which Monte Carlo rows are rates (means of 0/1 replicates), a bool array.

    A rate's MCSE is ``sqrt(p (1 - p) / reps)`` of its estimate ``p``, a count over ``reps``: a row that meets
    this identity to 1e-9 is one (no mean of other values does, except by a coincidence of every digit). A row at
    0 or 1 with MCSE 0 meets it as any constant does, so it counts as a rate only if it carries a Clopper-Pearson
    interval (``ci_low``: the coverage and rejection rows) or its measure is a rate in another row; a constant
    estimator's exact zero variance is not a rate.
    """
    estimate = rows["estimate"].to_numpy(float)
    mcse = rows["mcse"].to_numpy(float)
    reps = pd.to_numeric(rows["reps"], errors="coerce").to_numpy(float) if "reps" in rows else np.full(len(rows), 1.0)
    with np.errstate(invalid="ignore"):
        count = estimate * reps
        whole = (estimate >= 0) & (estimate <= 1) & (reps >= 1) & (np.abs(count - np.round(count)) <= 1e-6)
        variance = estimate * (1 - estimate)
        bernoulli = whole & (np.abs(mcse**2 * reps - variance) <= 1e-9 * variance)
    interior = bernoulli & (variance > 0)
    has_ci = (
        pd.to_numeric(rows["ci_low"], errors="coerce").notna().to_numpy()
        if "ci_low" in rows
        else np.zeros(len(rows), bool)
    )
    rate_measures = np.isin(measure, list(set(measure[interior].tolist())))
    return interior | (bernoulli & (has_ci | rate_measures))


def _max_reps(config) -> int:
    cap = getattr(config.study.options, "max_reps", None)
    return int(cap) if cap is not None else 100 * config.study.reps


def plan_precision(config, summary: pd.DataFrame) -> PrecisionPlan:
    """The plan of a precision-targeted run from its pilot's summary.

    Each Monte Carlo row (reps > 0, a finite MCSE) gets its absolute target
    (:func:`simstudy.engine.precision.absolute_targets`, relative ones of the pilot's ``|estimate|``) and the
    replicates that meet it (:func:`simstudy.engine.precision.reps_needed`) planned from an upper ``confidence``
    bound on its MCSE: the pilot's MCSE times ``sqrt(kappa)`` (kappa from the row's own reps, and from its
    kurtosis where the pilot's summary has a ``kurtosis`` column; normal otherwise), or for a rate (a
    row whose MCSE is ``sqrt(p (1 - p) / reps)``: a mean of 0/1 replicates) the exact binomial bound
    (:func:`simstudy.engine.precision.rate_variance_bound`), which is positive even when the pilot saw no event;
    each cell takes the largest of its rows.

    Parameters
    ----------
    config : simstudy.config.Config
        The run's config: ``study.precision``, ``study.reps`` (the pilot), ``study.chunk_reps``,
        ``study.max_reps``.
    summary : pandas.DataFrame
        The pilot's tidy summary.

    Returns
    -------
    PrecisionPlan
        The rows' and the cells' replicates.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``study.precision`` names a measure the study does not report (the message lists its measures).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> opts = SimpleNamespace(precision=(("mean", 0.005, False),), max_reps=None)
    >>> config = SimpleNamespace(study=SimpleNamespace(reps=1000, chunk_reps=500, options=opts))
    >>> pilot = pd.DataFrame({"cell": ["c0", "c0", "c1"], "distribution": "d", "measure": ["mean", "sd", "mean"],
    ...                       "estimate": [0.5, 0.2, 0.7], "mcse": [0.01, 0.004, 0.001], "reps": 1000})
    >>> plan = plan_precision(config, pilot)
    >>> plan.cell_reps
    {'c0': 4500, 'c1': 1000}
    >>> plan.table[["cell", "measure", "target", "reps_needed"]]
      cell measure  target  reps_needed
    0   c0    mean   0.005         4500
    1   c0      sd     NaN         1000
    2   c1    mean   0.005         1000
    """
    table, cell_reps = _plan(config, summary, {}, top_up=False)
    opts = config.study.options
    return PrecisionPlan(table, cell_reps, tuple(opts.precision), config.study.reps, _max_reps(config),
                         config.study.chunk_reps)  # fmt: skip


def replan_precision(config, plan: PrecisionPlan, summary: pd.DataFrame) -> PrecisionPlan:
    """The top-up: each cell re-planned from its planned stage's replicates, never below its plan.

    The same bounds as :func:`plan_precision` (a rate's exact bound, kappa from the row's replicates and
    kurtosis; kappa at :data:`HEAVY_TAIL_CONFIDENCE` for a row whose sample kurtosis shows a heavy tail,
    :func:`simstudy.engine.precision.heavy_tailed`, unless its ``kurtosis_assumed`` is True), from the summary of the ``plan.cell_reps`` replicates each cell ran: a cell whose bound on its MCSE
    at those replicates already meets every target keeps its plan; any other runs on to the replicates the
    re-plan needs (whole chunks, within ``study.max_reps``). A cell missing from ``summary`` (its chunks failed)
    keeps its plan.

    Parameters
    ----------
    config : simstudy.config.Config
        The run's config (as for :func:`plan_precision`).
    plan : PrecisionPlan
        The pilot's plan (:func:`plan_precision`), whose replicates ``summary`` reduces.
    summary : pandas.DataFrame
        The tidy summary of each cell at ``plan.cell_reps`` replicates.

    Returns
    -------
    PrecisionPlan
        The final plan: its ``table`` the re-plan's rows, its ``cell_reps`` the final replicates
        (``max(planned, re-planned)``), its ``planned_reps`` the pilot plan's ``cell_reps``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> opts = SimpleNamespace(precision=(("mean", 0.005, False),), max_reps=None)
    >>> config = SimpleNamespace(study=SimpleNamespace(reps=1000, chunk_reps=500, options=opts))
    >>> pilot = pd.DataFrame({"cell": ["c0", "c1"], "distribution": "d", "measure": "mean",
    ...                       "estimate": [0.5, 0.7], "mcse": [0.01, 0.01], "reps": 1000})
    >>> plan = plan_precision(config, pilot)
    >>> planned = pd.DataFrame({"cell": ["c0", "c1"], "distribution": "d", "measure": "mean",
    ...                         "estimate": [0.5, 0.7], "mcse": [0.0045, 0.0052], "reps": 4500})
    >>> final = replan_precision(config, plan, planned)
    >>> plan.cell_reps, final.cell_reps, final.topped_up
    ({'c0': 4500, 'c1': 4500}, {'c0': 4500, 'c1': 5500}, ('c1',))
    """
    table, needed = _plan(config, summary, plan.cell_reps, top_up=True)
    cell_reps = {cell: max(reps, needed.get(cell, reps)) for cell, reps in plan.cell_reps.items()}
    return dataclasses.replace(plan, table=table, cell_reps=cell_reps, planned_reps=dict(plan.cell_reps))


def _plan(
    config, summary: pd.DataFrame, base_reps: dict[str, int], *, top_up: bool
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The plan's table and each cell's replicates, from ``summary`` of ``base_reps[cell]`` replicates per cell
    (``study.reps`` for a cell not in it: the pilot); ``top_up``: the re-plan, whose heavy-tailed rows get
    kappa at :data:`HEAVY_TAIL_CONFIDENCE`."""
    opts = config.study.options
    chunk_reps, cap = config.study.chunk_reps, _max_reps(config)
    mc = _monte_carlo(summary)
    rows = summary.loc[mc]
    keys = _keys(summary)
    measure = _measure(rows)
    n0 = (
        rows["cell"].map(lambda c: base_reps.get(str(c), config.study.reps)).to_numpy(np.int64)
        if "cell" in rows and base_reps
        else config.study.reps
    )
    target = _precision.absolute_targets(opts.precision, measure, rows["estimate"].to_numpy(float))
    row_reps = (
        pd.to_numeric(rows["reps"], errors="coerce").to_numpy(float)
        if "reps" in rows
        else np.broadcast_to(np.asarray(n0, float), len(rows)).copy()
    )
    estimate, mcse = rows["estimate"].to_numpy(float), rows["mcse"].to_numpy(float)
    # The MCSE the plan assumes, an upper confidence bound: a rate's from the exact bound on p (1 - p) (never 0,
    # valid near 0 and 1), any other row's the pilot's MCSE times sqrt(kappa) (a normal variance's bound).
    rate = _rates(rows, measure)
    # A study that knows its rows' kurtosis (a `kurtosis` column in the pilot's summary) gets kappa for it; NaN or
    # no column: a normal-like variance estimate is assumed (docs/guides/precision.md says what that costs).
    kurtosis = pd.to_numeric(rows["kurtosis"], errors="coerce").to_numpy(float) if "kurtosis" in rows else 3.0
    kappa = _precision.inflation(row_reps - 1, CONFIDENCE, kurtosis)
    heavy = _precision.heavy_tailed(kurtosis, row_reps) if top_up else np.zeros(len(rows), bool)
    if "kurtosis_assumed" in rows:  # a law's kurtosis (a squared normal error's 15) is no sample's underestimate
        heavy &= ~rows["kurtosis_assumed"].eq(True).to_numpy()
    if heavy.any():
        # The last look at a heavy tail: the planned stage's kurtosis is still too small (a sample of hundreds sees
        # little of the tail), so its kappa at 95% met the target in 94% of lognormal runs; normal rows keep 95%.
        kappa = np.where(heavy, _precision.inflation(row_reps - 1, HEAVY_TAIL_CONFIDENCE, kurtosis), kappa)
    bound = mcse * np.sqrt(kappa)
    if rate.any():
        count = np.round(estimate[rate] * row_reps[rate])
        bound[rate] = np.sqrt(_precision.rate_variance_bound(count, row_reps[rate], CONFIDENCE) / row_reps[rate])
    need, capped = _precision.reps_needed(n0, bound, target, kappa=1.0, chunk_reps=chunk_reps, max_reps=cap)
    table = pd.DataFrame(
        {
            **{k: rows[k].to_numpy() for k in keys},
            "measure": measure,
            "pilot_estimate": rows["estimate"].to_numpy(float),
            "pilot_mcse": rows["mcse"].to_numpy(float),
            "pilot_reps": row_reps.astype(np.int64),
            "rate": rate,
            "mcse_bound": bound,
            "target": target,
            "reps_needed": need,
            "capped": capped,
        }
    )
    cell_reps = {str(c): int(n) for c, n in table.groupby("cell", sort=False)["reps_needed"].max().items()}
    return table, cell_reps


def pilot(spec, config, out_dir: Path) -> StudyResult:
    """The pilot stage: the study at ``study.reps`` per cell, unsharded, its chunks stored, nothing else written.

    Parameters
    ----------
    spec : simstudy.registry.Study
        The study kind's spec (its ``run``).
    config : simstudy.config.Config
        The run's config (``runner.shard`` and ``runner.replay`` are ignored: every shard runs the whole pilot).
    out_dir : pathlib.Path
        The run directory (its ``chunks/`` receives the pilot's chunks).

    Returns
    -------
    StudyResult
        The pilot's summary and the runner's report; ``files`` is empty.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.config import parse
    >>> from simstudy.registry import study
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10, "n": [10]},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 100, "precision": 0.001},
    ...     "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = pilot(study("evp_accuracy"), config, Path(tmp))
    ...     written = sorted(p.name for p in Path(tmp).iterdir())
    >>> first.report.tasks, first.files, written  # two chunks stored, nothing else written
    (2, {}, ['chunks'])
    """
    config = dataclasses.replace(config, runner=dataclasses.replace(config.runner, shard=None, replay=None))
    return _staged(spec, config, out_dir, base.Stage(pilot=True))


def run_study(spec, config, out_dir: Path) -> Any:
    """Run a study under its precision rule: the pilot, each cell's planned replicates, then its top-up.

    Without ``study.precision`` this is ``spec.run(config, out_dir)`` (with a one-line note if ``study.max_reps``
    is set: it has no effect then). With it, the pilot (:func:`pilot`), the plan (:func:`plan_precision`), the
    planned stage, the re-plan from its summary (:func:`replan_precision`) and, where a cell needs more, the
    top-up. The final summary carries ``target`` and ``reached_precision`` and ``run.json`` a ``precision``
    block (:meth:`PrecisionPlan.annotate`); its report counts every stage. A shard (``runner.shard``) runs its
    share of the planned stage, or, once it finds every chunk of that stored, its share of the top-up.

    Parameters
    ----------
    spec : simstudy.registry.Study
        The study kind's spec.
    config : simstudy.config.Config
        The validated config.
    out_dir : pathlib.Path
        The run directory.

    Returns
    -------
    StudyResult
        What the study's ``run`` returns (a sharded run raises :class:`~simstudy.studies.base.ShardDone`).

    Raises
    ------
    simstudy.schema.ConfigError
        If ``study.precision`` names a measure the study does not report (after the pilot), or the study's
        ``run`` takes no ``stage=`` (before the pilot).
    RuntimeError
        If the study's summary names cells that are not its chunks' cells (a study kind the rule cannot plan).
    TopUpPending
        With ``runner.collect``, if the stored planned stage calls for a top-up whose chunks are not stored.
    simstudy.engine.runner.MissingChunks
        With ``runner.collect``, if a chunk of the pilot or the planned stage is not stored.

    Examples
    --------
    >>> import json, tempfile
    >>> from simstudy.config import parse
    >>> from simstudy.registry import study
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10, "n": [10]},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 100,
    ...               "precision": {"mean": 0.002}},
    ...     "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run_study(study("evp_accuracy"), config, Path(tmp))
    ...     block = json.loads((Path(tmp) / "run.json").read_text())["precision"]
    >>> row = result.summary[result.summary.measure == "mean"].iloc[0]
    >>> int(row.reps), float(row.target), bool(row.mcse <= row.target), block["pilot_reps"]
    (700, 0.002, True, 200)
    """
    if getattr(config.study.options, "precision", None) is None:
        cap = getattr(config.study.options, "max_reps", None)
        if cap is not None:  # the cap of a rule that is off: say so rather than let it look obeyed
            log.warning(
                "study.max_reps=%d has no effect without study.precision (it caps the precision rule's replicates); "
                "every cell runs study.reps=%d",
                cap,
                config.study.reps,
            )
        return spec.run(config, out_dir)
    first = pilot(spec, config, out_dir)
    if not _monte_carlo(first.summary).any():
        log.info("study.precision: %s reports no Monte Carlo measure (it is exact): the precision is met", spec.kind)
    plan = plan_precision(config, first.summary)
    if plan.cell_reps:
        log.info(
            "study.precision: pilot of %d per cell; planned %s replicates per cell (cap %d)",
            config.study.reps,
            _range(plan.cell_reps.values()),
            plan.max_reps,
        )
    sharded = config.runner.shard is not None
    final: list[PrecisionPlan] = []

    def replan(summary: pd.DataFrame) -> PrecisionPlan | None:
        """The top-up's plan from the planned stage's summary; the plan to write it with if none follows."""
        final.append(replan_precision(config, plan, summary))
        return None if sharded or final[-1].topped_up else final[-1]

    planned = base.Stage(cell_reps=plan.cell_reps, earlier_report=first.report, replan=replan)
    if sharded:
        # A shard tops up only once every chunk of the planned stage is stored (the summary the top-up is planned
        # from); until then it runs its share of the planned stage and stops, as the collect will say.
        whole = dataclasses.replace(config, runner=dataclasses.replace(config.runner, shard=None, collect=True))
        try:
            second = _staged(spec, whole, out_dir, planned)
        except MissingChunks:
            log.info("study.precision: this shard runs its share of the planned stage; a top-up, if the planned "
                     "replicates call for one, runs when the shards run again")  # fmt: skip
            _staged(spec, config, out_dir, dataclasses.replace(planned, replan=None, plan=plan))  # raises ShardDone
            raise  # pragma: no cover (a sharded stage ends in ShardDone)
    else:
        second = _staged(spec, config, out_dir, planned)
    unknown = set(plan.cell_reps) - planned.seen
    if unknown and planned.seen:
        raise RuntimeError(
            f"study kind {spec.kind}: its summary's cells ({', '.join(sorted(unknown)[:3])}) are not the cells of "
            "its chunks, so study.precision cannot plan them"
        )
    last = final[-1]
    if last.topped_up:
        log.info(
            "study.precision: top-up: %d of %d cells re-planned from their planned replicates need more: %s "
            "replicates per cell (%d more in all)",
            len(last.topped_up),
            len(last.cell_reps),
            _range(last.cell_reps[c] for c in last.topped_up),
            sum(last.cell_reps[c] - plan.cell_reps[c] for c in last.topped_up),
        )
    elif plan.cell_reps:
        log.info("study.precision: the planned replicates meet every target's bound: no top-up")
    if not sharded and not last.topped_up:
        return second  # the planned stage was written, with the final plan
    earlier = base.both_stages(first.report, second.report)
    top_up = base.Stage(cell_reps=last.cell_reps, plan=last, earlier_report=earlier)
    try:
        return _staged(spec, config, out_dir, top_up)
    except MissingChunks as exc:
        if not config.runner.collect:
            raise
        raise TopUpPending(
            f"{out_dir}: the planned stage calls for a top-up of {len(last.topped_up)} cell(s) whose "
            f"{len(exc.missing)} of {exc.total} chunks are not stored yet: run every shard once more (the same "
            f"command lines: each computes only its share of the top-up), then simstudy collect run_dir={out_dir}"
        ) from exc


def _staged(spec, config, out_dir: Path, stage: base.Stage) -> Any:
    """``spec.run`` in a stage of the rule: the study hands ``stage`` to :func:`~simstudy.studies.base.run_chunks`
    (each cell's replicates), whose :class:`~simstudy.studies.base.ChunkedRun` carries it to
    :func:`~simstudy.studies.base.finish` (what is written). A study whose ``run`` takes no ``stage=`` cannot run
    under the rule: one line saying so."""
    try:
        parameters = dict(inspect.signature(spec.run).parameters)
    except (TypeError, ValueError):  # no signature to read (a builtin): let the call say what it takes
        parameters = None
    if (
        parameters is not None
        and "stage" not in parameters
        and not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    ):
        raise ConfigError(
            f"study.precision: study kind {spec.kind}'s run takes no stage= keyword, which the precision rule's "
            f"stages need (pass it to simstudy.studies.base.run_chunks; see simstudy/studies/_template.py), or "
            f"run it without study.precision"
        )
    return spec.run(config, out_dir, stage=stage)


def _range(values) -> str:
    values = sorted(values)
    return f"{values[0]}" if values[0] == values[-1] else f"{values[0]} to {values[-1]}"


# -- simstudy plan: the pilot alone, and what a run to the target would take ------------------------------------------


@dataclass(frozen=True)
class Planned:
    """What :func:`plan_run` returns: the replicates a precision target needs, per cell and measure, and their time.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per Monte Carlo row of the pilot's summary: ``cell``, ``distribution``, the study's keys,
        ``measure``, ``pilot_estimate``, ``pilot_mcse`` (the measure's units), ``pilot_reps``, ``target``
        (absolute MCSE target, NaN untargeted), ``reps_needed`` (this row's), ``cell_reps`` (the cell's: the
        largest of its rows), ``capped`` (needs more than ``max_reps``) and ``est_seconds`` (of ``cell_reps``
        replicates of the cell, on this machine: the cell's share of ``total_seconds``, repeated on each of its
        rows).
    pilot_reps : int
        ``study.reps``, the pilot per cell.
    max_reps : int
        The cap.
    seconds_per_rep : float
        The pilot's compute seconds per replicate, averaged over its cells.
    workers : int
        The workers the estimate assumes (``runner.n_jobs``, -1 resolved to this machine's cores).
    total_seconds : float
        The estimated wall seconds of the whole run (every cell at its ``cell_reps``): ``fixed_seconds`` plus
        the chunks' compute at ``seconds_per_rep`` over ``workers``.
    fixed_seconds : float
        The pilot's seconds outside its chunks (truth, reduction), which more replicates do not change.
    cores : int
        The cores this process may use on this machine (what ``runner.n_jobs=-1`` would take).

    Examples
    --------
    >>> planned = Planned(pd.DataFrame(), 1000, 100_000, 1e-5, 2, 0.0, 0.0, 2)
    >>> planned.pilot_reps, planned.capped_cells
    (1000, ())
    """

    table: pd.DataFrame
    pilot_reps: int
    max_reps: int
    seconds_per_rep: float
    workers: int
    total_seconds: float
    fixed_seconds: float
    cores: int

    @property
    def capped_cells(self) -> tuple[str, ...]:
        """The cells whose targets need more than ``max_reps`` replicates."""
        if self.table.empty:
            return ()
        return tuple(dict.fromkeys(self.table.loc[self.table["capped"], "cell"]))

    def by_measure(self) -> pd.DataFrame:
        """Per cell and measure, the row that needs the most replicates (what the command prints).

        Returns
        -------
        pandas.DataFrame
            The rows of :attr:`table` with the largest ``reps_needed`` of each (cell, measure), targeted
            measures only, the cell key shortened to 8 digits and a column ``rows`` (the measure's rows);
            without ``est_seconds``, a cell's and not a row's (repeated per measure it would not add up to the
            total).
        """
        table = self.table[self.table["target"].notna()]
        if table.empty:
            return table
        groups = table.groupby(["cell", "measure"], sort=False)
        worst = table.loc[groups["reps_needed"].idxmax()].copy()
        worst.insert(worst.columns.get_loc("measure") + 1, "rows", groups.size().to_numpy())
        worst = worst.drop(columns=["pilot_reps", "est_seconds"], errors="ignore")
        return worst.assign(cell=worst["cell"].str[:8]).reset_index(drop=True)


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one, else every core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _workers(n_jobs: int, cores: int) -> int:
    return cores if n_jobs == -1 else max(1, min(n_jobs, cores))


def plan_run(config) -> Planned:
    """Run the precision rule's pilot of a study config in a temporary directory and plan its cells
    (``simstudy plan``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated study config with ``study.precision`` set (``study.reps`` the pilot).

    Returns
    -------
    Planned
        The table per cell and measure, and the totals.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``study.precision`` names a measure the study does not report.

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10, "n": [10]},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 100,
    ...               "precision": {"mean": 0.001}},
    ...     "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    ... })
    >>> planned = plan_run(config)
    >>> print(planned.table.loc[planned.table.measure == "mean", ["measure", "pilot_mcse", "target", "reps_needed"]])
      measure  pilot_mcse  target  reps_needed
    0    mean    0.003392   0.001         2800
    """
    import tempfile
    import time

    from simstudy.registry import study

    runner = dataclasses.replace(config.runner, figures=(), shard=None, collect=False, replay=None)
    config = dataclasses.replace(config, runner=runner)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="simstudy-plan-") as tmp:
        first = pilot(study(config.study.kind), config, Path(tmp))
    fixed = max(time.perf_counter() - started - first.report.wall_seconds, 0.0)  # truth, reduction: not per rep
    plan = plan_precision(config, first.summary)
    cells = max(len(plan.cell_reps), 1)
    per_rep = first.report.compute_seconds / (config.study.reps * cells)
    cores = _cores()
    workers = _workers(config.runner.n_jobs, cores)
    table = plan.table.copy()
    table["cell_reps"] = table["cell"].map(plan.cell_reps).astype("int64")
    table["est_seconds"] = table["cell_reps"] * per_rep / workers
    total = fixed + sum(plan.cell_reps.values()) * per_rep / workers
    return Planned(table, config.study.reps, _max_reps(config), per_rep, workers, total, fixed, cores)
