"""Fixed-budget model selection (Moss et al. 2019, §4.1 and Algorithm 1).

Fixed-budget selection spends at most T evaluations and returns the arm believed best:

- :func:`sequential_halving` (Karnin et al. 2013; Moss et al. Algorithm 1): ``ceil(log2 N)`` rounds; in each,
  every surviving model is evaluated ``floor(T / (|S| ceil(log2 N)))`` times and the worse half (by the mean
  of all its evaluations so far) is dropped;
- :func:`non_adaptive`: the budget split equally, ``floor(T / N)`` evaluations each, the best mean chosen.

Variants of sequential halving (keyword options of :func:`sequential_halving` and :func:`sequential_halving_runs`;
the defaults are Algorithm 1 as printed). They exist to test what Moss et al. may have done for Figure 4, where
Algorithm 1 as printed selects the best of the 12 TDSA models in 97% of runs at T = 204 and the paper reports 99%
(the equal split's 85% is reproduced). Each is also a named built-in algorithm (:data:`HALVING_VARIANTS`); in
brackets P(best selected) at T = 204 over the 12 models, 10,000 runs (``simstudy experiment=fiesta_fig4``):

- ``sequential_halving_spend_all`` (``leftover="final_round"``): the evaluations the rounding leaves over
  (``T`` minus the schedule's spend, 7 of 204 for 12 models) go to the final round's survivors, equally, the
  remainder one each to survivors drawn at random, so the whole budget is spent (0.969);
- ``sequential_halving_last_round_means`` (``means="last_round"``): each round eliminates by the means of that
  round's evaluations only, not of all evaluations so far (0.922);
- ``sequential_halving_drop_ceil`` (``halving="drop_ceil"``): each round drops ``ceil(|S| / 2)`` arms
  (12 -> 6 -> 3 -> 1), over as many rounds as that takes (3 for 12 arms), each surviving arm evaluated
  ``floor(T / (|S| rounds))`` times (0.963);
- ``sequential_halving_first_8`` (``first_arms=8``): only the first 8 arms are candidates (the rest are never
  evaluated), as if the paper's code had run sequential halving with N = 8 on a list of 12 models whose first 8
  are the §5.2 set (the authors' notebook defines ``SequentialHalving_for_TDSA(N, T)`` over its 8-name model
  list and calls it with N = 8). On ``distribution=tdsa_fiesta_code_order`` (that list) it gives 0.991, the
  paper's 99%, beside the equal split's 0.859 over all 12: the one reading that reproduces Figure 4's numbers.

Algorithm 1 as printed is also what the authors' released ``fiesta.sequential_halving`` does (``floor``
evaluations, the worse ``floor(|S| / 2)`` dropped by the mean of all evaluations so far).

An arm is either a score distribution (anything with ``sample(size, rng=...)``; simulated evaluation) or a
callable ``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times. Ties between
means are broken uniformly at random.

For simulation studies, :func:`sequential_halving_runs` and :func:`non_adaptive_runs` run many independent
selections at once, vectorized across runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from simstudy.stats._rng import rng_iv
from simstudy.stats.selection._arms import arms_iv
from simstudy.stats.selection._arms import best_of as _best
from simstudy.stats.selection._arms import draw_sums as _draw_sums
from simstudy.stats.selection._arms import evaluator as _evaluator

__all__ = [
    "SelectionResult",
    "sequential_halving",
    "non_adaptive",
    "sequential_halving_runs",
    "non_adaptive_runs",
    "halving_schedule",
    "HALVING_OPTIONS",
    "HALVING_VARIANTS",
    "FIXED_BUDGET_RUNS",
    "runs_problem",
]

#: Sequential halving's variant options and their valid values, the default first (Algorithm 1 as printed).
HALVING_OPTIONS = {
    "leftover": ("unspent", "final_round"),
    "means": ("cumulative", "last_round"),
    "halving": ("drop_floor", "drop_ceil"),
}


@dataclass(frozen=True)
class SelectionResult:
    """The outcome of one fixed-budget model selection (:func:`sequential_halving`, :func:`non_adaptive`).

    A frozen dataclass; its fields are the constructor's parameters.

    Parameters
    ----------
    chosen : int
        Index in ``[0, N)`` of the selected arm (in the order of the ``arms`` given).
    evaluations : ndarray of int64, shape (N,)
        Evaluations (model trainings) spent on each arm; their sum is at most the budget.
    unspent : int
        Evaluations of the budget left over (>= 0; the schedules round down), ``budget - evaluations.sum()``.
    means : ndarray of float64, shape (N,)
        Each arm's mean score over all its evaluations, in score units (NaN if the arm was never evaluated).
    rounds : tuple of tuple of int
        The arm indices surviving into each round (sequential halving), or one tuple of all arms (non-adaptive).

    See Also
    --------
    sequential_halving, non_adaptive : the selections that return it.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag([0.5, 0.6]), Bag([0.7, 0.8]), Bag([0.6, 0.7]), Bag([0.2, 0.3])]
    >>> result = sequential_halving(arms, 24, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), result.unspent, result.rounds
    (1, [3, 9, 9, 3], 0, ((0, 1, 2, 3), (1, 2)))
    """

    chosen: int
    evaluations: np.ndarray
    unspent: int
    means: np.ndarray
    rounds: tuple


def _halving_iv(n_arms: int, leftover: str, means: str, halving: str, first_arms) -> int:
    """Check sequential halving's variant options (one-line errors naming the value and the valid ones); returns
    the number of candidate arms."""
    for key, value in (("leftover", leftover), ("means", means), ("halving", halving)):
        if not isinstance(value, str) or value not in HALVING_OPTIONS[key]:
            raise ValueError(f"{key}={value!r} is not one of {', '.join(map(repr, HALVING_OPTIONS[key]))}")
    if first_arms is None:
        return int(n_arms)
    if isinstance(first_arms, bool) or not isinstance(first_arms, (int, np.integer)) or not 2 <= first_arms <= n_arms:
        raise ValueError(
            f"first_arms={first_arms!r} must be None (every arm) or an integer from 2 to the number of arms ({n_arms})"
        )
    return int(first_arms)


def halving_schedule(
    n_arms: int,
    budget: int,
    *,
    leftover: str = "unspent",
    means: str = "cumulative",
    halving: str = "drop_floor",
    first_arms: int | None = None,
) -> list[tuple[int, int]]:
    """Sequential halving's rounds as ``(surviving arms, evaluations of each)``; raises if the budget is too small.

    Moss et al. (2019) Algorithm 1: ``ceil(log2 N)`` rounds, in each ``floor(T / (|S| ceil(log2 N)))``
    evaluations of every surviving arm, the worse ``floor(|S| / 2)`` dropped after it.

    Parameters
    ----------
    n_arms : int
        The number of arms N (at least 2).
    budget : int
        The budget T, in evaluations (at least 1).
    leftover : {"unspent", "final_round"}, keyword-only, default "unspent"
        Checked here; does not change the schedule (with ``"final_round"`` the final round's survivors also
        share ``budget`` minus the schedule's spend). See :func:`sequential_halving_runs`.
    means : {"cumulative", "last_round"}, keyword-only, default "cumulative"
        Checked here; does not change the schedule.
    halving : {"drop_floor", "drop_ceil"}, keyword-only, default "drop_floor"
        Drop ``floor(|S| / 2)`` arms a round over ``ceil(log2 N)`` rounds, or ``ceil(|S| / 2)`` over
        ``floor(log2 N)`` rounds.
    first_arms : int, optional, keyword-only
        Only the first ``first_arms`` arms (2 to ``n_arms``) are candidates. Default None: all ``n_arms``.

    Returns
    -------
    list of (int, int)
        One ``(|S|, evaluations of each arm in S)`` per round, in round order; the spend is
        ``sum(k * each for k, each in schedule) <= budget``.

    Raises
    ------
    ValueError
        If ``n_arms`` is not an integer >= 2, ``budget`` not a positive integer, an option not one of its valid
        values (:data:`HALVING_OPTIONS`), ``first_arms`` not None or an integer in [2, ``n_arms``], or if the
        budget leaves some round less than one evaluation per arm (the message gives the least budget).

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Karnin, Z., Koren, T., & Somekh, O. (2013). Almost optimal exploration in multi-armed bandits. ICML 2013.

    Examples
    --------
    >>> halving_schedule(12, 204)
    [(12, 4), (6, 8), (3, 17), (2, 25)]
    >>> halving_schedule(12, 204, halving="drop_ceil")
    [(12, 5), (6, 11), (3, 22)]
    >>> halving_schedule(12, 204, first_arms=8)
    [(8, 8), (4, 17), (2, 34)]
    >>> halving_schedule(12, 20)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: budget=20 is too small for sequential halving over 12 arms: ... the budget must be at least 48
    """
    if isinstance(n_arms, bool) or not isinstance(n_arms, (int, np.integer)) or n_arms < 2:
        raise ValueError(f"need at least 2 arms to select between, got {n_arms!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget must be a positive integer number of evaluations, got {budget!r}")
    candidates = _halving_iv(n_arms, leftover, means, halving, first_arms)
    if halving == "drop_floor":
        rounds, per = int(np.ceil(np.log2(candidates))), "ceil(log2 N)"
    else:  # drop ceil(|S| / 2): as many rounds as halvings down to one arm
        rounds, per = int(np.floor(np.log2(candidates))), "rounds"
    over = f"{n_arms} arms" if candidates == n_arms else f"the first {candidates} of {n_arms} arms"
    schedule: list[tuple[int, int]] = []
    alive = candidates
    while alive > 1:
        each = budget // (alive * rounds)
        if each < 1:
            raise ValueError(
                f"budget={budget} is too small for sequential halving over {over}: round "
                f"{len(schedule) + 1} needs at least {alive * rounds} evaluations "
                f"(|S| * {per}); the budget must be at least {candidates * rounds}"
            )
        schedule.append((alive, each))
        alive = alive - alive // 2 if halving == "drop_floor" else alive // 2
    return schedule


def _keep(alive: int, halving: str) -> int:
    """How many of ``alive`` arms survive a round."""
    return alive - alive // 2 if halving == "drop_floor" else alive // 2


def sequential_halving(
    arms: Sequence,
    budget: int,
    *,
    rng: np.random.Generator,
    leftover: str = "unspent",
    means: str = "cumulative",
    halving: str = "drop_floor",
    first_arms: int | None = None,
) -> SelectionResult:
    """Select the best of ``arms`` with at most ``budget`` evaluations by sequential halving (Algorithm 1).

    ``ceil(log2 N)`` rounds; in each, every surviving arm is evaluated ``floor(T / (|S| ceil(log2 N)))`` times
    and the worse half by the mean of all its evaluations so far is dropped (ties broken at random). The
    schedule is :func:`halving_schedule`; for many runs at once use :func:`sequential_halving_runs`.

    Parameters
    ----------
    arms : sequence of N >= 2 arms
        Score distributions (``sample(size, rng=...)`` returning float64 scores) or callables
        ``evaluate(count, rng) -> scores`` returning ``count`` scores (shape ``(count,)``, score units) of a
        real model trained and scored ``count`` times.
    budget : int
        The most evaluations spent (the budget T, in model evaluations).
    rng : numpy.random.Generator, keyword-only
        Drives the tie-breaks and the simulated evaluations (passed to every arm).
    leftover : {"unspent", "final_round"}, keyword-only, default "unspent"
        The variant options of :func:`sequential_halving_runs`, where each is described; the defaults are
        Algorithm 1 as printed.
    means : {"cumulative", "last_round"}, keyword-only, default "cumulative"
        As :func:`sequential_halving_runs`.
    halving : {"drop_floor", "drop_ceil"}, keyword-only, default "drop_floor"
        As :func:`sequential_halving_runs`.
    first_arms : int, optional, keyword-only
        As :func:`sequential_halving_runs`; default None (all arms are candidates).

    Returns
    -------
    SelectionResult
        ``chosen`` (the surviving arm), ``evaluations`` per arm, ``unspent`` budget, every arm's ``means`` and
        the survivors of each of the ``rounds``.

    Raises
    ------
    ValueError
        If ``rng`` is not a :class:`numpy.random.Generator`, the budget or options are invalid or the budget is
        too small (see :func:`halving_schedule`), or an arm returns scores of the wrong shape or not numbers.
    TypeError
        If ``arms`` is not a sequence, or an arm is neither a distribution nor a callable.

    See Also
    --------
    sequential_halving_runs : many independent selections at once, vectorized.
    non_adaptive : the equal split of the budget.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Karnin, Z., Koren, T., & Somekh, O. (2013). Almost optimal exploration in multi-armed bandits. ICML 2013.

    Examples
    --------
    Four simulated models, scores from truncated normal distributions, a budget of 40 evaluations:

    >>> import numpy as np
    >>> from simstudy.distributions import TruncatedNormal
    >>> arms = [TruncatedNormal(mean=m, sd=0.05) for m in (0.60, 0.65, 0.70, 0.72)]
    >>> result = sequential_halving(arms, 40, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), result.rounds
    (3, [5, 15, 5, 15], ((0, 1, 2, 3), (3, 1)))

    A callable arm trains and scores a model ``count`` times (here a stand-in):

    >>> def evaluate(count, rng):
    ...     return 0.75 + 0.01 * rng.standard_normal(count)
    >>> sequential_halving([*arms, evaluate], 60, rng=np.random.default_rng(0)).chosen
    4
    """
    rng_iv(rng, "sequential_halving")
    evaluate = [_evaluator(a, i) for i, a in enumerate(arms_iv(arms))]
    N = len(evaluate)
    schedule = halving_schedule(N, budget, leftover=leftover, means=means, halving=halving, first_arms=first_arms)
    extra = budget - sum(k * each for k, each in schedule) if leftover == "final_round" else 0
    sums, counts = np.zeros(N), np.zeros(N, dtype=np.int64)
    alive = np.arange(schedule[0][0])
    rounds = []
    for r, (_, each) in enumerate(schedule):
        rounds.append(tuple(int(a) for a in alive))
        n = np.full(alive.size, each, dtype=np.int64)
        if extra and r == len(schedule) - 1:  # the leftover: equally, the remainder one each at random
            base, rem = divmod(extra, alive.size)
            n += base + (rng.permutation(alive.size) < rem)
        got = np.array([evaluate[a](int(c), rng).sum() for a, c in zip(alive, n)])
        sums[alive] += got
        counts[alive] += n
        current = sums[alive] / counts[alive] if means == "cumulative" else got / n
        alive = alive[_best(current, rng, _keep(alive.size, halving))]
    with np.errstate(invalid="ignore", divide="ignore"):
        result_means = sums / counts
    return SelectionResult(int(alive[0]), counts, int(budget - counts.sum()), result_means, tuple(rounds))


def non_adaptive(arms: Sequence, budget: int, *, rng: np.random.Generator) -> SelectionResult:
    """The standard practice: ``floor(budget / N)`` evaluations of every arm, the best mean chosen.

    The non-adaptive baseline of Moss et al. (2019) Figure 4; ties between means are broken uniformly at random.

    Parameters
    ----------
    arms : sequence of N >= 2 arms
        Score distributions (``sample(size, rng=...)``) or callables ``evaluate(count, rng) -> scores``, as in
        :func:`sequential_halving`.
    budget : int
        The most evaluations spent (the budget T); at least N.
    rng : numpy.random.Generator, keyword-only
        Drives the tie-breaks and the simulated evaluations.

    Returns
    -------
    SelectionResult
        ``chosen``, ``evaluations`` (``floor(budget / N)`` for every arm), ``unspent`` (``budget mod N``), every
        arm's ``means`` and one round of all arms.

    Raises
    ------
    ValueError
        If ``rng`` is not a :class:`numpy.random.Generator`, there are fewer than 2 arms, ``budget`` is not an
        integer of at least N, or an arm returns scores of the wrong shape or not numbers.
    TypeError
        If ``arms`` is not a sequence, or an arm is neither a distribution nor a callable.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag([0.5, 0.6]), Bag([0.7, 0.8]), Bag([0.6, 0.7])]
    >>> result = non_adaptive(arms, 20, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), result.unspent, np.round(result.means, 4).tolist()
    (1, [6, 6, 6], 2, [0.55, 0.75, 0.7])
    >>> non_adaptive(arms, 2, rng=np.random.default_rng(0))
    Traceback (most recent call last):
        ...
    ValueError: budget=2 must allow at least one evaluation of each of the 3 arms (>= 2)
    """
    rng_iv(rng, "non_adaptive")
    evaluate = [_evaluator(a, i) for i, a in enumerate(arms_iv(arms))]
    N = len(evaluate)
    each = int(budget) // N if isinstance(budget, (int, np.integer)) and not isinstance(budget, bool) else 0
    if N < 2 or each < 1:
        raise ValueError(f"budget={budget!r} must allow at least one evaluation of each of the {N} arms (>= 2)")
    means = np.array([evaluate[a](each, rng).mean() for a in range(N)])
    chosen = int(_best(means, rng, 1)[0])
    return SelectionResult(chosen, np.full(N, each), int(budget - N * each), means, (tuple(range(N)),))


def sequential_halving_runs(
    arms: Sequence,
    budget: int,
    runs: int,
    *,
    rng: np.random.Generator,
    leftover: str = "unspent",
    means: str = "cumulative",
    halving: str = "drop_floor",
    first_arms: int | None = None,
):
    """``runs`` independent sequential-halving selections at once (arms are distributions).

    The same algorithm as :func:`sequential_halving`, vectorized across runs; the fixed-budget contract of
    :data:`FIXED_BUDGET_RUNS` (see :mod:`simstudy.stats.selection`).

    Parameters
    ----------
    arms : sequence of N >= 2 distributions
        Score distributions, each with ``sample(size, rng=...)`` returning float64 scores of shape ``size``.
    budget : int
        The budget T of each run, in evaluations.
    runs : int
        How many independent selections R to run.
    rng : numpy.random.Generator, keyword-only
        Drives every evaluation and tie-break.
    leftover : {"unspent", "final_round"}, keyword-only, default "unspent"
        What happens to the ``T`` minus the schedule's spend that the rounding leaves over: nothing (Algorithm 1
        as printed), or it goes to the final round's survivors, equally, the remainder one each to survivors
        drawn at random (every run spends exactly ``T``).
    means : {"cumulative", "last_round"}, keyword-only, default "cumulative"
        Eliminate by the mean of all an arm's evaluations so far (Algorithm 1), or of this round's only.
    halving : {"drop_floor", "drop_ceil"}, keyword-only, default "drop_floor"
        Drop ``floor(|S| / 2)`` arms a round over ``ceil(log2 N)`` rounds (Algorithm 1; 12 -> 6 -> 3 -> 2 -> 1),
        or ``ceil(|S| / 2)`` over ``floor(log2 N)`` rounds (12 -> 6 -> 3 -> 1); each surviving arm is evaluated
        ``floor(T / (|S| rounds))`` times a round.
    first_arms : int, optional, keyword-only
        Only the first ``first_arms`` arms are candidates (the others are never evaluated). Default None: all.

    Returns
    -------
    chosen : ndarray of int64, shape (runs,)
        The index in ``[0, N)`` of the arm each run selects.
    evaluations : ndarray of int64, shape (runs, N)
        The evaluations each run spent on each arm; each row sums to at most ``budget``.

    Raises
    ------
    ValueError
        If ``rng`` is not a :class:`numpy.random.Generator`, the budget or an option is invalid or the budget too
        small (see :func:`halving_schedule`), or an arm's ``sample`` returns the wrong shape or not numbers.
    TypeError
        If ``arms`` is not a sequence.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Karnin, Z., Koren, T., & Somekh, O. (2013). Almost optimal exploration in multi-armed bandits. ICML 2013.

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag([0.1 * i, 0.1 * i + 0.05]) for i in range(12)]
    >>> _, evaluations = sequential_halving_runs(arms, 204, 3, rng=np.random.default_rng(0))
    >>> evaluations.sum(axis=1).tolist()
    [197, 197, 197]
    >>> _, evaluations = sequential_halving_runs(arms, 204, 3, rng=np.random.default_rng(0), leftover="final_round")
    >>> evaluations.sum(axis=1).tolist()
    [204, 204, 204]
    """
    rng_iv(rng, "sequential_halving_runs")
    N = len(arms_iv(arms))
    schedule = halving_schedule(N, budget, leftover=leftover, means=means, halving=halving, first_arms=first_arms)
    extra = budget - sum(k * each for k, each in schedule) if leftover == "final_round" else 0
    sums, counts = np.zeros((runs, N)), np.zeros((runs, N), dtype=np.int64)
    alive = np.tile(np.arange(schedule[0][0]), (runs, 1))
    rows = np.arange(runs)[:, None]
    for r, (_, each) in enumerate(schedule):
        got = _draw_sums(arms, alive, each, rng)
        n: int | np.ndarray = each
        if extra and r == len(schedule) - 1:  # the leftover: equally, the remainder one each at random
            base, rem = divmod(extra, alive.shape[1])
            if base:
                got = got + _draw_sums(arms, alive, base, rng)
            n = np.full(alive.shape, each + base, dtype=np.int64)
            if rem:
                bonus = np.argsort(rng.random(alive.shape), axis=1) < rem  # a uniformly random rem of the survivors
                got = got + bonus * _draw_sums(arms, alive, 1, rng)
                n = n + bonus
        sums[rows, alive] += got
        counts[rows, alive] += n
        current = sums[rows, alive] / counts[rows, alive] if means == "cumulative" else got / n
        alive = np.take_along_axis(alive, _best(current, rng, _keep(alive.shape[1], halving)), axis=1)
    return alive[:, 0], counts


def non_adaptive_runs(arms: Sequence, budget: int, runs: int, *, rng: np.random.Generator):
    """``runs`` independent equal-split selections at once: ``floor(budget / N)`` evaluations of every arm.

    :func:`non_adaptive` vectorized across runs; the fixed-budget contract of :data:`FIXED_BUDGET_RUNS`, and a
    template for a plug-in (see :mod:`simstudy.stats.selection`).

    Parameters
    ----------
    arms : sequence of N >= 2 distributions
        Score distributions, each with ``sample(size, rng=...)`` returning float64 scores of shape ``size``.
    budget : int
        The budget T of each run, in evaluations; at least N.
    runs : int
        How many independent selections R to run.
    rng : numpy.random.Generator, keyword-only
        Drives every evaluation and tie-break.

    Returns
    -------
    chosen : ndarray of int64, shape (runs,)
        The index in ``[0, N)`` of the arm with the highest mean in each run (ties broken at random).
    evaluations : ndarray of int64, shape (runs, N)
        ``floor(budget / N)`` everywhere.

    Raises
    ------
    ValueError
        If ``rng`` is not a :class:`numpy.random.Generator`, or there are fewer than 2 arms or fewer than one
        evaluation of each.
    TypeError
        If ``arms`` is not a sequence.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag([0.4, 0.7]), Bag([0.45, 0.75]), Bag([0.2, 0.3])]
    >>> chosen, evaluations = non_adaptive_runs(arms, 7, 6, rng=np.random.default_rng(0))
    >>> chosen.tolist(), evaluations[0].tolist()
    ([1, 1, 1, 1, 1, 0], [2, 2, 2])
    """
    rng_iv(rng, "non_adaptive_runs")
    N = len(arms_iv(arms))
    each = int(budget) // N
    if N < 2 or each < 1:
        raise ValueError(f"budget={budget!r} must allow at least one evaluation of each of the {N} arms (>= 2)")
    which = np.tile(np.arange(N), (runs, 1))
    means = _draw_sums(arms, which, each, rng) / each
    return _best(means, rng, 1)[:, 0], np.full((runs, N), each, dtype=np.int64)


#: Sequential halving and its named variants (the Moss et al. Figure 4 hypotheses in the module docstring): each
#: name's options of :func:`sequential_halving_runs`.
HALVING_VARIANTS: dict[str, dict[str, Any]] = {
    "sequential_halving": {},
    "sequential_halving_spend_all": {"leftover": "final_round"},
    "sequential_halving_last_round_means": {"means": "last_round"},
    "sequential_halving_drop_ceil": {"halving": "drop_ceil"},
    "sequential_halving_first_8": {"first_arms": 8},
}

#: The built-in fixed-budget algorithms by name: their vectorized runs (the contract in :mod:`simstudy.stats.selection`).
FIXED_BUDGET_RUNS: dict[str, Callable[..., Any]] = {
    "sequential_halving": sequential_halving_runs,
    "non_adaptive": non_adaptive_runs,
    **{name: partial(sequential_halving_runs, **options) for name, options in HALVING_VARIANTS.items() if options},
}


def runs_problem(picks, evaluations, runs: int, N: int, budget: int) -> str | None:
    """What breaks the fixed-budget contract in an algorithm's output (``None`` if nothing).

    ``picks`` must be integer arm indices of shape ``(runs,)`` in ``[0, N)``, ``evaluations`` non-negative
    integers of shape ``(runs, N)`` adding up to at most ``budget`` in every run. The studies and
    :func:`simstudy.plugins.check_selection_algorithm` call it on a plug-in's output.

    Parameters
    ----------
    picks : array_like of int, shape (runs,)
        The arm each run selects, as returned by the algorithm.
    evaluations : array_like of int, shape (runs, N)
        The evaluations each run spent on each arm, as returned by the algorithm.
    runs : int
        The number of runs R the algorithm was asked for.
    N : int
        The number of arms.
    budget : int
        The budget of each run, in evaluations.

    Returns
    -------
    str or None
        A one-line description of the first problem found (dtype, shape, an index out of range, a negative
        count, a run over budget), or None if the output keeps the contract.

    Examples
    --------
    >>> import numpy as np
    >>> print(runs_problem(np.array([0, 1]), np.array([[2, 3], [4, 1]]), 2, 2, 5))
    None
    >>> runs_problem(np.array([0, 2]), np.array([[2, 3], [4, 1]]), 2, 2, 5)
    'picked arm 2; picks must lie in [0, 2) for 2 arms'
    >>> runs_problem(np.array([0, 1]), np.array([[2, 3], [4, 3]]), 2, 2, 5)
    'spent 7 evaluations in run 1, over the budget of 5'
    """
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
