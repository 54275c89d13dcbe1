"""Fixed-budget model selection (Moss et al. 2019, §5.1, Figure 4): how often each algorithm picks the best.

The arms are the study's distributions (e.g. the 12 TDSA models: one evaluation is one draw, with
replacement, from that model's 500 recorded F1 scores -- the paper's protocol). The best arm is the one
with the highest population mean. For each budget, ``study.reps`` independent selections are run with each
algorithm (:func:`simstudy.selection.sequential_halving_runs`, :func:`~simstudy.selection.non_adaptive_runs`),
each from its own random stream. Reported: the probability of selecting the best arm (Clopper-Pearson
interval), how often each arm is chosen, and the mean unspent budget. The named variants of sequential halving
(e.g. ``sequential_halving_spend_all``; :data:`simstudy.selection.HALVING_VARIANTS`) test what Moss et al. may
have run for Figure 4; they get the same budget checks before any compute.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .. import plugins, schema, selection
from ..config import (
    Config,
    ConfigError,
    StudyOptions,
    at_least_arms,
    chunk_reps_option,
    reps_option,
    selection_algorithm_check,
)
from ..metrics import clopper_pearson
from ..registry import Headline, Study, register_study
from ..runner import Task, task_seed
from ..schema import option
from . import base

__all__ = ["run", "Options", "headline", "STUDY"]

_SCHEME = "model_selection/1"


@dataclass(frozen=True)
class _Work:
    seed: int
    arms: tuple
    budgets: dict  # cell key -> budget
    algorithms: tuple  # the functions, built-in or plugins.SelectionPlugin (pickled by import path)


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    budget = work.budgets[task.cell]
    N = len(work.arms)
    chosen = np.zeros((len(work.algorithms), N), dtype=np.int64)
    unspent = np.zeros(len(work.algorithms))
    for a, algorithm in enumerate(work.algorithms):
        rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, a))
        picks, evaluations = algorithm(work.arms, budget, task.reps, rng=rng)
        chosen[a] = np.bincount(picks, minlength=N)
        unspent[a] = (budget - evaluations.sum(axis=1)).sum()
    return {"chosen": chosen, "unspent": unspent}


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the fixed-budget selection study over the arms in ``config.distributions``."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    algorithms, budgets, ci_level = tuple(opts.algorithms), tuple(opts.budgets), opts.ci_level
    arms, names, means, best = selection.arms_of(config.distributions)
    for b in budgets:  # fail before any compute if a budget cannot run
        _check_halving(algorithms, len(arms), b)
    cells = {base.cell_key(arms=[d.key for d in config.distributions], budget=b): b for b in budgets}
    functions = tuple(plugins.selection_algorithm(name, "fixed_budget") for name in algorithms)
    settings = {"budgets": budgets, "algorithms": algorithms}
    # a plug-in's code joins the fingerprint (an edited plug-in never resumes its old chunks); built-ins' stays
    sources = {n: s for n in algorithms if (s := plugins.selection_settings(n, "fixed_budget")) is not None}
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, _Work(config.seed, arms, cells, functions)),
        settings={**settings, "plugins": sources} if sources else settings,
    )
    R = config.study.reps
    rows = []
    for key, budget in run_.succeeded(cells).items():
        chosen, unspent = run_.total(key, "chosen"), run_.total(key, "unspent")
        for a, name in enumerate(algorithms):
            head = dict(cell=key, distribution="arms", algorithm=name, budget=budget, reps=R)
            k = chosen[a, best]
            low, high = clopper_pearson(k, R, ci_level)
            p = k / R
            rows.append(
                dict(
                    head,
                    arm=names[best],
                    measure="p_correct",
                    estimate=p,
                    mcse=float(np.sqrt(p * (1 - p) / R)),
                    ci_low=float(low),
                    ci_high=float(high),
                )
            )
            rows.append(
                dict(
                    head, arm="", measure="unspent", estimate=unspent[a] / R, mcse=np.nan, ci_low=np.nan, ci_high=np.nan
                )
            )
            lows, highs = clopper_pearson(chosen[a], R, ci_level)
            rows += [
                dict(
                    head,
                    arm=names[m],
                    measure="chosen_rate",
                    estimate=chosen[a, m] / R,
                    mcse=float(np.sqrt(chosen[a, m] / R * (1 - chosen[a, m] / R) / R)),
                    ci_low=float(lows[m]),
                    ci_high=float(highs[m]),
                )
                for m in range(len(arms))
            ]
    metadata = selection.arms_metadata(arms, names, means, best)
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The model_selection study's options."""

    reps: int = reps_option(10000)
    chunk_reps: int = chunk_reps_option(5000)
    algorithms: tuple = option(
        ("sequential_halving", "non_adaptive"),
        "the fixed-budget algorithms compared: "
        "sequential_halving, non_adaptive, a named variant of sequential halving "
        "(sequential_halving_spend_all, sequential_halving_last_round_means, "
        "sequential_halving_drop_ceil, sequential_halving_first_8), a registered name or a "
        "plug-in's import path module.function",
        schema.listed(
            selection_algorithm_check("fixed_budget"), what="at least one algorithm", unique=False, sort=False
        ),
    )
    budgets: tuple = option(
        (48, 72, 96, 120, 144, 168, 204, 240, 300, 360),
        "the budgets T (evaluations in all; one cell each)",
        schema.listed(schema.integer(minimum=1), what="at least one budget"),
    )
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """P(best model selected) with its MCSE, per budget and algorithm."""
    p = summary[summary["measure"] == "p_correct"]
    table = p.assign(value=p["estimate"].map("{:.4f}".format) + " (" + p["mcse"].map("{:.4f}".format) + ")").pivot(
        index="budget", columns="algorithm", values="value"
    )
    return f"P(best model selected), MCSE in brackets\n{table.to_string()}"


def _check_halving(algorithms, n_arms: int, budget: int) -> None:
    """Raise if sequential halving, or a named variant of it, in ``algorithms`` cannot run at ``budget``."""
    for name in algorithms:
        if name in selection.HALVING_VARIANTS:
            selection.halving_schedule(n_arms, budget, **selection.HALVING_VARIANTS[name])


def _check(config: Config) -> None:
    at_least_arms(config)
    arms, opts = len(config.distributions), config.study.options
    for name in opts.algorithms:
        first = selection.HALVING_VARIANTS.get(name, {}).get("first_arms")
        if first is not None and first > arms:
            raise ConfigError(f"study.algorithms: {name} selects among the first {first} arms; the study has {arms}")
    for b in opts.budgets:
        try:
            _check_halving(opts.algorithms, arms, b)
        except ValueError as exc:
            raise ConfigError(f"study.budgets: {exc}") from None
    if min(opts.budgets) < arms:
        raise ConfigError(
            f"study.budgets: every budget must allow one evaluation of each of the {arms} arms, got {min(opts.budgets)}"
        )


STUDY = register_study(
    Study(
        kind="model_selection",
        options=Options,
        run=run,
        figure="simstudy.plots.model_selection_figure",
        headline=headline,
        sweep=Headline({"measure": "p_correct"}, "budget", "algorithm", "P(best model selected)"),
        check=_check,
        summary="fixed-budget model selection: how often each algorithm picks the best (Moss et al. §5.1)",
    )
)
