"""How often an estimator ranks two models the wrong way round (Dodge et al. 2021, §4, Figure 2).

A practitioner runs B trials of random search for each of two models and compares the estimated expected
maximum at n = B. For every budget B and estimator, this study draws ``study.reps`` such pairs of searches
and counts how often the estimates put the models in the wrong order.

"Wrong" is judged against the *true* ranking at n = B -- the exact expected maxima of the two populations
(:func:`simstudy.truth.expected_max`) -- not against any estimator's verdict on the full data. Where the true
gap ``|theta_a(B) - theta_b(B)|`` is at most ``study.tie_tolerance`` the budget is a true tie: no ranking is
wrong there, and only the win and tie rates are reported. Identical estimates for the two models are
counted as ties, never as right or wrong.

Summary (tidy, one row per (B, estimator, measure)): ``wrong_rate`` (absent at true ties), ``right_rate``,
``tie_rate``, ``a_wins_rate``, ``b_wins_rate`` -- proportions of ``reps`` draws with Clopper-Pearson
intervals in ``ci_low``/``ci_high`` (confidence ``study.confidence``) and binomial standard errors in
``mcse`` -- and ``mean_gap``, the mean estimated gap a - b with its MCSE. Estimator ``"truth"`` carries
``expected_max_a``, ``expected_max_b``, ``true_gap`` and ``true_tie`` (1 or 0) per B.

The paper's own pair (a CNN and a linear bag-of-embeddings on SST-5) is not public; the presets use the
Reuters MLP vs LSTM runs of Tang et al. (2020), DeBERTa vs DeBERTaV3 on MultiNLI, and a synthetic pair.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .. import estimators, schema, truth
from ..config import Config, ConfigError, StudyOptions, check_budget_memory, chunk_reps_option, reps_option
from ..distributions import ScoreDistribution, describe, sample_sorted
from ..metrics import clopper_pearson
from ..registry import Headline, Study, register_study
from ..runner import Task, stable_hash, task_seed
from ..schema import option
from . import base

__all__ = ["run", "Options", "headline", "STUDY"]

_SCHEME = "wrong_conclusions/1"


@dataclass(frozen=True)
class _Cell:
    key: str
    B: int
    weights: np.ndarray  # (E, B) closed-form weights at n = B (zero rows for bootstraps and plug-ins)


@dataclass(frozen=True)
class _Work:
    seed: int
    a: ScoreDistribution
    b: ScoreDistribution
    cells: dict
    estimators: tuple
    plugins: dict = dataclasses.field(default_factory=dict)  # e -> simstudy.plugins.PluginEstimator


def _estimates_at_B(x: np.ndarray, cell: _Cell, specs, rngs: dict, plugins: dict) -> np.ndarray:
    """Each estimator at n = B for each sorted sample; shape (reps, E)."""
    est = x @ cell.weights.T
    for e, spec in enumerate(specs):
        if spec.method == "bootstrap":
            est[:, e] = estimators.expected_max(
                x, "bootstrap", n=cell.B, presorted=True, resamples=spec.resamples, rng=rngs[e]
            )[:, 0]
        elif e in plugins:
            est[:, e] = plugins[e](x, np.array([cell.B]), rng=rngs[e])[:, 0]
    return est


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    """Draw ``reps`` searches of B trials for each model; count wins and ties per estimator."""
    cell = work.cells[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    xa = sample_sorted(work.a, task.reps, cell.B, rng=rng)
    xb = sample_sorted(work.b, task.reps, cell.B, rng=rng)
    rngs = {
        e: np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1, int(stable_hash(s.name)[:8], 16)))
        for e, s in enumerate(work.estimators)
        if s.method == "bootstrap" or e in work.plugins
    }
    diff = _estimates_at_B(xa, cell, work.estimators, rngs, work.plugins) - _estimates_at_B(
        xb, cell, work.estimators, rngs, work.plugins
    )
    counts = np.stack([(diff > 0).sum(axis=0), (diff < 0).sum(axis=0), (diff == 0).sum(axis=0)])
    return {"counts": counts.astype(np.int64), "gap_sums": np.stack([diff.sum(axis=0), (diff * diff).sum(axis=0)])}


def _proportion_rows(row: dict, measure: str, k: np.ndarray, reps: int, confidence: float) -> list[dict]:
    p = k / reps
    low, high = clopper_pearson(k, reps, confidence)
    return [
        dict(
            row,
            estimator=name,
            measure=measure,
            estimate=float(p[e]),
            mcse=float(np.sqrt(p[e] * (1 - p[e]) / reps)),
            ci_low=float(low[e]),
            ci_high=float(high[e]),
            reps=reps,
        )
        for e, name in enumerate(row.pop("names"))
    ]


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the wrong-conclusion study for the two distributions of ``config``."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    options = config.study.options
    tie_tolerance, confidence = options.tie_tolerance, options.confidence
    spec_a, spec_b = config.distributions
    a, b = spec_a.build(), spec_b.build()
    specs = config.estimators
    names = [s.name for s in specs]
    plugins = {e: s.plugin() for e, s in enumerate(specs) if s.is_plugin}

    cells: dict[str, _Cell] = {}
    for B in config.budget.B:
        key = base.cell_key(a=spec_a.key, b=spec_b.key, B=B)
        W = np.zeros((len(specs), B))
        for e, spec in enumerate(specs):
            if spec.method in estimators.CLOSED_FORM:
                W[e] = estimators.weights(B, spec.method, [B])[0]
        cells[key] = _Cell(key, B, W)
    Bs = np.array(config.budget.B)
    theta_a, theta_b = truth.expected_max(a, Bs), truth.expected_max(b, Bs)

    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, _Work(config.seed, a, b, cells, specs, plugins)),
        settings={"estimators": [s.settings for s in specs]},
    )

    pair = f"{spec_a.name} vs {spec_b.name}"
    rows = []
    for i, (key, cell) in enumerate(cells.items()):
        if key in run_.failed_cells:  # reported by base.finish, not summarised from partial data
            continue
        gap = theta_a[i] - theta_b[i]
        tie = abs(gap) <= tie_tolerance
        head = dict(cell=key, distribution=pair, B=cell.B, n=cell.B)
        for measure, value in (
            ("expected_max_a", theta_a[i]),
            ("expected_max_b", theta_b[i]),
            ("true_gap", gap),
            ("true_tie", float(tie)),
        ):
            rows.append(
                dict(
                    head,
                    estimator="truth",
                    measure=measure,
                    estimate=float(value),
                    mcse=0.0,
                    ci_low=np.nan,
                    ci_high=np.nan,
                    reps=0,
                )
            )
        a_wins, b_wins, ties = run_.total(key, "counts")
        reps = int(a_wins[0] + b_wins[0] + ties[0])
        measures = {"a_wins_rate": a_wins, "b_wins_rate": b_wins, "tie_rate": ties}
        if not tie:
            wrong, right = (b_wins, a_wins) if gap > 0 else (a_wins, b_wins)
            measures.update(wrong_rate=wrong, right_rate=right)
        for measure, k in measures.items():
            rows += _proportion_rows(dict(head, names=names), measure, k, reps, confidence)
        sums, squares = run_.total(key, "gap_sums")
        mean = sums / reps
        sd = np.sqrt(np.clip((squares - reps * mean**2) / (reps - 1), 0.0, None))
        rows += [
            dict(
                head,
                estimator=name,
                measure="mean_gap",
                estimate=float(mean[e]),
                mcse=float(sd[e] / np.sqrt(reps)),
                ci_low=np.nan,
                ci_high=np.nan,
                reps=reps,
            )
            for e, name in enumerate(names)
        ]
    summary = pd.DataFrame(rows)[
        ["cell", "distribution", "B", "estimator", "n", "measure", "estimate", "mcse", "ci_low", "ci_high", "reps"]
    ]
    metadata = {
        "pair": {"a": spec_a.name, "b": spec_b.name},
        "tie_tolerance": tie_tolerance,
        "confidence": confidence,
        "distributions": {spec_a.name: describe(a), spec_b.name: describe(b)},
    }
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The wrong_conclusions study's options."""

    reps: int = reps_option(50000)
    chunk_reps: int = chunk_reps_option(10000)
    tie_tolerance: float = option(
        1e-12, "a true gap |a - b| at or below this is a tie: no ranking is wrong there", schema.number(minimum=0)
    )
    confidence: float = option(0.95, "the level of the Clopper-Pearson intervals of the rates", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """The wrong-conclusion rate of each estimator at each B, beside the true gap."""
    table = summary[summary["measure"].isin(["wrong_rate", "true_gap"])].pivot_table(
        index="B", columns=["estimator"], values="estimate"
    )
    return f"wrong-conclusion rates (truth: true gap a - b)\n{table.round(4).to_string()}"


def _check(config: Config) -> None:
    dists = config.distributions
    if len(dists) != 2:
        raise ConfigError(
            f"a wrong_conclusions study compares two models: distribution must name exactly two, "
            f"got {len(dists)} ({', '.join(d.name for d in dists)})"
        )
    check_budget_memory(config, cells=len(config.budget.B), samples_per_replicate=2)


STUDY = register_study(
    Study(
        kind="wrong_conclusions",
        options=Options,
        run=run,
        figure="simstudy.plots.wrong_conclusions_figure",
        headline=headline,
        sweep=Headline({"measure": "wrong_rate"}, "B", "estimator", "wrong-conclusion rate"),
        check=_check,
        plugin_estimators=True,
        summary="how often each estimator ranks two models the wrong way round (Dodge et al. 2021, Figure 2)",
    )
)
