"""Adaptive model selection as best-arm identification (Moss et al. 2019, FIESTA).

Each candidate model is an *arm*: evaluating it (training and scoring it once, on a fresh split or seed)
draws one score. An arm is either a score distribution (a simulated evaluation; for the TDSA data, one draw
with replacement from the model's 500 recorded F1 scores, the paper's protocol) or a callable
``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times. The best arm is the
one with the highest mean score.

- Fixed budget (:mod:`.fixed_budget`): :func:`sequential_halving` (and its named variants,
  :data:`HALVING_VARIANTS`: what Moss et al. may have run for Figure 4), :func:`non_adaptive`.
- Fixed confidence (:mod:`.fixed_confidence`, many runs at once in :mod:`.fixed_confidence_runs`): :func:`ttts`, :func:`non_adaptive_confidence`,
  :func:`batch_thompson`.
- Vectorized runs for simulation studies: :func:`sequential_halving_runs`, :func:`non_adaptive_runs`,
  :func:`fixed_confidence_runs`.
- The arms of a study: :func:`arms_of` (built from distribution specifications, with their means);
  :func:`simstudy.distributions.generic.arms_metadata` describes them.
- The beliefs behind fixed confidence: :func:`posterior`, :func:`prob_best` (re-exported from
  :mod:`simstudy.stats.posterior`).

Plug-in contracts
-----------------
A researcher's own algorithm joins the ``model_selection`` or ``fixed_confidence`` study by one override,
``'study.algorithms=[sequential_halving,my_algos.successive_rejects]'`` (``my_algos.py`` in the working
directory), or by a name given with :func:`simstudy.plugins.register_selection_algorithm`. The studies call the
built-in algorithms through the same contracts (:data:`FIXED_BUDGET_RUNS`, :data:`FIXED_CONFIDENCE_PROPOSALS`),
so a plug-in is run, seeded and reported exactly as they are. In both, ``arms`` are score distributions (objects
with ``sample(size, rng=...)`` returning float64 scores of shape ``size``), N of them, and ``rng`` is a
:class:`numpy.random.Generator`, its own stream per algorithm and chunk of runs: draw every random number (the
arms' evaluations included) from it, so that the result is reproducible and the same for any ``n_jobs``.
:func:`simstudy.plugins.check_selection_algorithm` calls a plug-in twice on a tiny input before any compute.

**Fixed budget** -- whole vectorized runs, as :func:`sequential_halving_runs` and :func:`non_adaptive_runs`::

    f(arms, budget, runs, *, rng) -> (picks, evaluations)

Parameters
    arms : sequence of N >= 2 distributions.
    budget : int, the most evaluations one run may spend.
    runs : int, how many independent selections to run at once (R).
Returns
    picks : int array (R,), the index in [0, N) of the arm each run selects.
    evaluations : int array (R, N), the evaluations each run spent on each arm (>= 0, each row's sum at most
    ``budget``; the rest is reported as ``unspent``).

Here the plug-in runs everything: fixed-budget algorithms differ in their whole schedule (rounds, eliminations,
rejections), and a budget loop is a dozen lines (see :func:`non_adaptive_runs`).

**Fixed confidence** -- one proposal step, as :func:`propose_top_two` (``ttts``), :func:`propose_all`
(``non_adaptive``) and :func:`propose_thompson` (``batch_thompson``)::

    propose(loc, scale, df, *, rng) -> which

Parameters
    loc, scale, df : float64 arrays (R, N), the t posterior of every arm's mean score in each of the R runs
    still going, ``mean = loc + scale * t_df`` (:func:`posterior`; an arm's evaluations so far are
    ``df + 2``). With ``study.logit`` they describe the logit of the scores.
Returns
    which : int array (R, k), the arms each run evaluates next (repeats allowed), k >= 1 the same on every call.

:func:`fixed_confidence_runs` does the rest for every algorithm alike: the ``initial`` three evaluations of
each arm, the posterior update, the stopping rule ``P(leader is best) > 1 - delta`` for every delta from one
trajectory, the ``max_evaluations`` cap (a step that would pass it is not started; k is read from one probe
call on the first run's initial posterior, with a generator of its own) and the bookkeeping. A proposal is the
part in which the published algorithms differ, and the one a researcher can write in a few lines; a plug-in
owning the whole loop would also own the stopping rule, and a table comparing it with TTTS would then compare
two stopping rules as well as two algorithms.

Example
-------
A plug-in proposal that evaluates, in every run, the arm evaluated least so far:

>>> import numpy as np
>>> from simstudy.distributions import Bag
>>> def least_evaluated(loc, scale, df, *, rng):
...     return np.argmin(df, axis=1)[:, None]
>>> arms = [Bag([0.1, 0.3, 0.5]), Bag([0.6, 0.8, 0.9])]
>>> runs = fixed_confidence_runs(arms, [0.05], 5, algorithm=least_evaluated, rng=np.random.default_rng(0))
>>> runs.chosen.tolist()
[[1, 1, 1, 1, 1]]

and a fixed-budget plug-in that spends nothing and always picks the first arm:

>>> def first(arms, budget, runs, *, rng):
...     return np.zeros(runs, dtype=np.int64), np.zeros((runs, len(arms)), dtype=np.int64)
>>> picks, evaluations = first(arms, 10, 3, rng=np.random.default_rng(0))
>>> print(runs_problem(picks, evaluations, 3, len(arms), 10))
None
"""

from simstudy.stats.posterior import posterior, prob_best, prob_best_mc, prob_leader
from simstudy.stats.selection._arms import arms_of
from simstudy.stats.selection.fixed_budget import (
    FIXED_BUDGET_RUNS,
    HALVING_OPTIONS,
    HALVING_VARIANTS,
    SelectionResult,
    halving_schedule,
    non_adaptive,
    non_adaptive_runs,
    runs_problem,
    sequential_halving,
    sequential_halving_runs,
)
from simstudy.stats.selection.fixed_confidence import (
    FIXED_CONFIDENCE_ALGORITHMS,
    PI_METHODS,
    ConfidenceResult,
    batch_thompson,
    non_adaptive_confidence,
    ttts,
)
from simstudy.stats.selection.fixed_confidence_runs import (
    FIXED_CONFIDENCE_PROPOSALS,
    ConfidenceRuns,
    fixed_confidence_runs,
    proposal_problem,
    propose_all,
    propose_thompson,
    propose_top_two,
)

__all__ = [
    "SelectionResult",
    "halving_schedule",
    "sequential_halving",
    "non_adaptive",
    "sequential_halving_runs",
    "non_adaptive_runs",
    "ConfidenceResult",
    "ConfidenceRuns",
    "ttts",
    "non_adaptive_confidence",
    "batch_thompson",
    "fixed_confidence_runs",
    "FIXED_CONFIDENCE_ALGORITHMS",
    "PI_METHODS",
    "posterior",
    "prob_best",
    "prob_best_mc",
    "prob_leader",
    "arms_of",
    "FIXED_BUDGET_RUNS",
    "runs_problem",
    "HALVING_OPTIONS",
    "HALVING_VARIANTS",
    "FIXED_CONFIDENCE_PROPOSALS",
    "propose_top_two",
    "propose_all",
    "propose_thompson",
    "proposal_problem",
]
