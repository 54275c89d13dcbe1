"""Fixed-budget model selection (Moss et al. 2019, §4.1 and Algorithm 1).

Fixed-budget selection spends at most T evaluations and returns the arm believed best:

- :func:`sequential_halving` (Karnin et al. 2013; Moss et al. Algorithm 1): ``ceil(log2 N)`` rounds; in each,
  every surviving model is evaluated ``floor(T / (|S| ceil(log2 N)))`` times and the worse half (by the mean
  of all its evaluations so far) is dropped;
- :func:`non_adaptive`: the budget split equally, ``floor(T / N)`` evaluations each, the best mean chosen.

An arm is either a score distribution (anything with ``sample(size, rng=...)``; simulated evaluation) or a
callable ``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times. Ties between
means are broken uniformly at random.

For simulation studies, :func:`sequential_halving_runs` and :func:`non_adaptive_runs` run many independent
selections at once, vectorized across runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .._rng import rng_iv
from ._arms import arms_iv, best_of as _best, draw_sums as _draw_sums, evaluator as _evaluator

__all__ = ["SelectionResult", "sequential_halving", "non_adaptive", "sequential_halving_runs", "non_adaptive_runs",
           "halving_schedule", "FIXED_BUDGET_RUNS", "runs_problem"]


@dataclass(frozen=True)
class SelectionResult:
    """The outcome of one model selection.

    Attributes
    ----------
    chosen : int
        Index of the selected arm.
    evaluations : ndarray of int, shape (N,)
        Evaluations spent on each arm.
    unspent : int
        Budget left over (the schedules round down).
    means : ndarray, shape (N,)
        Each arm's mean score over its evaluations (NaN if never evaluated).
    rounds : tuple of tuple of int
        The arms surviving into each round (sequential halving) or all arms (non-adaptive).
    """

    chosen: int
    evaluations: np.ndarray
    unspent: int
    means: np.ndarray
    rounds: tuple


def halving_schedule(n_arms: int, budget: int) -> list[tuple[int, int]]:
    """Sequential halving's rounds as ``(surviving arms, evaluations of each)``; raises if the budget is too small."""
    if isinstance(n_arms, bool) or not isinstance(n_arms, (int, np.integer)) or n_arms < 2:
        raise ValueError(f"need at least 2 arms to select between, got {n_arms!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be a positive integer number of evaluations, got {budget!r}")
    rounds = int(np.ceil(np.log2(n_arms)))
    schedule, alive = [], int(n_arms)
    while alive > 1:
        each = budget // (alive * rounds)
        if each < 1:
            raise ValueError(f"budget={budget} is too small for sequential halving over {n_arms} arms: round "
                             f"{len(schedule) + 1} needs at least {alive * rounds} evaluations "
                             f"(|S| * ceil(log2 N)); the budget must be at least {n_arms * rounds}")
        schedule.append((alive, each))
        alive -= alive // 2
    return schedule


def sequential_halving(arms: Sequence, budget: int, *, rng: np.random.Generator) -> SelectionResult:
    """Select the best of ``arms`` with at most ``budget`` evaluations by sequential halving (Algorithm 1)."""
    rng_iv(rng, "sequential_halving")
    evaluate = [_evaluator(a, i) for i, a in enumerate(arms_iv(arms))]
    N = len(evaluate)
    schedule = halving_schedule(N, budget)
    sums, counts = np.zeros(N), np.zeros(N, dtype=np.int64)
    alive = np.arange(N)
    rounds = []
    for _, each in schedule:
        rounds.append(tuple(int(a) for a in alive))
        for a in alive:
            sums[a] += evaluate[a](each, rng).sum()
            counts[a] += each
        keep = alive.size - alive.size // 2
        alive = alive[_best(sums[alive] / counts[alive], rng, keep)]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return SelectionResult(int(alive[0]), counts, int(budget - counts.sum()), means, tuple(rounds))


def non_adaptive(arms: Sequence, budget: int, *, rng: np.random.Generator) -> SelectionResult:
    """The standard practice: ``floor(budget / N)`` evaluations of every arm, the best mean chosen."""
    rng_iv(rng, "non_adaptive")
    evaluate = [_evaluator(a, i) for i, a in enumerate(arms_iv(arms))]
    N = len(evaluate)
    each = int(budget) // N if isinstance(budget, (int, np.integer)) and not isinstance(budget, bool) else 0
    if N < 2 or each < 1:
        raise ValueError(f"budget={budget!r} must allow at least one evaluation of each of the {N} arms (>= 2)")
    means = np.array([evaluate[a](each, rng).mean() for a in range(N)])
    chosen = int(_best(means, rng, 1)[0])
    return SelectionResult(chosen, np.full(N, each), int(budget - N * each), means, (tuple(range(N)),))


def sequential_halving_runs(arms: Sequence, budget: int, runs: int, *, rng: np.random.Generator):
    """``runs`` independent sequential-halving selections at once (arms are distributions).

    Returns
    -------
    chosen : ndarray of int, shape (runs,)
    evaluations : ndarray of int, shape (runs, N)
    """
    rng_iv(rng, "sequential_halving_runs")
    N = len(arms_iv(arms))
    schedule = halving_schedule(N, budget)
    sums, counts = np.zeros((runs, N)), np.zeros((runs, N), dtype=np.int64)
    alive = np.tile(np.arange(N), (runs, 1))
    rows = np.arange(runs)[:, None]
    for _, each in schedule:
        sums[rows, alive] += _draw_sums(arms, alive, each, rng)
        counts[rows, alive] += each
        keep = alive.shape[1] - alive.shape[1] // 2
        alive = np.take_along_axis(alive, _best(sums[rows, alive] / counts[rows, alive], rng, keep), axis=1)
    return alive[:, 0], counts


def non_adaptive_runs(arms: Sequence, budget: int, runs: int, *, rng: np.random.Generator):
    """``runs`` independent equal-split selections at once; returns ``(chosen, evaluations)`` like above."""
    rng_iv(rng, "non_adaptive_runs")
    N = len(arms_iv(arms))
    each = int(budget) // N
    if N < 2 or each < 1:
        raise ValueError(f"budget={budget!r} must allow at least one evaluation of each of the {N} arms (>= 2)")
    which = np.tile(np.arange(N), (runs, 1))
    means = _draw_sums(arms, which, each, rng) / each
    return _best(means, rng, 1)[:, 0], np.full((runs, N), each, dtype=np.int64)




#: The built-in fixed-budget algorithms by name: their vectorized runs (the contract in :mod:`simstudy.selection`).
FIXED_BUDGET_RUNS = {"sequential_halving": sequential_halving_runs, "non_adaptive": non_adaptive_runs}


def runs_problem(picks, evaluations, runs: int, N: int, budget: int) -> str | None:
    """What breaks the fixed-budget contract in an algorithm's output (``None`` if nothing): ``picks`` must be
    integer arm indices of shape ``(runs,)`` in ``[0, N)``, ``evaluations`` non-negative integers of shape
    ``(runs, N)`` adding up to at most ``budget`` in every run."""
    picks, evaluations = np.asarray(picks), np.asarray(evaluations)
    for what, x, shape in (("picks", picks, (runs,)), ("evaluations", evaluations, (runs, N))):
        if not np.issubdtype(x.dtype, np.integer):
            return f"returned {what} of dtype {x.dtype}; the contract is integers"
        if x.shape != shape:
            return f"returned {what} of shape {x.shape} for {runs} runs of {N} arms; the contract is {shape}"
    if picks.size and (picks.min() < 0 or picks.max() >= N):
        bad = picks[(picks < 0) | (picks >= N)][0]
        return f"picked arm {int(bad)}; picks must lie in [0, {N}) for {N} arms"
    if evaluations.size and evaluations.min() < 0:
        return f"returned a negative number of evaluations ({int(evaluations.min())})"
    spent = evaluations.sum(axis=1)
    if spent.size and spent.max() > budget:
        r = int(np.argmax(spent))
        return f"spent {int(spent[r])} evaluations in run {r}, over the budget of {budget}"
    return None
