"""Adaptive model selection as best-arm identification (Moss et al. 2019, FIESTA).

Each candidate model is an *arm*: evaluating it (training and scoring it once, on a fresh split or seed)
draws one score. An arm is either a score distribution (a simulated evaluation; for the TDSA data, one draw
with replacement from the model's 500 recorded F1 scores, the paper's protocol) or a callable
``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times. The best arm is the
one with the highest mean score.

- Fixed budget (:mod:`.fixed_budget`): :func:`sequential_halving`, :func:`non_adaptive`.
- Fixed confidence (:mod:`.fixed_confidence`): :func:`ttts`, :func:`non_adaptive_confidence`,
  :func:`batch_thompson`.
- Vectorized runs for simulation studies: :func:`sequential_halving_runs`, :func:`non_adaptive_runs`,
  :func:`fixed_confidence_runs`.
- The arms of a study: :func:`arms_of` (built from distribution specifications, with their means),
  :func:`arms_metadata`.
- The beliefs behind fixed confidence: :func:`posterior`, :func:`prob_best` (re-exported from
  :mod:`simstudy.posterior`).
"""

from ..posterior import posterior, prob_best, prob_best_mc, prob_leader
from ._arms import arms_metadata, arms_of
from .fixed_budget import (FIXED_BUDGET_RUNS, SelectionResult, halving_schedule, non_adaptive, non_adaptive_runs,
                           runs_problem, sequential_halving, sequential_halving_runs)
from .fixed_confidence import (FIXED_CONFIDENCE_ALGORITHMS, FIXED_CONFIDENCE_PROPOSALS, PI_METHODS, ConfidenceResult,
                               ConfidenceRuns, batch_thompson, fixed_confidence_runs, non_adaptive_confidence,
                               proposal_problem, propose_all, propose_thompson, propose_top_two, ttts)

__all__ = ["SelectionResult", "halving_schedule", "sequential_halving", "non_adaptive", "sequential_halving_runs",
           "non_adaptive_runs", "ConfidenceResult", "ConfidenceRuns", "ttts", "non_adaptive_confidence",
           "batch_thompson", "fixed_confidence_runs", "FIXED_CONFIDENCE_ALGORITHMS", "PI_METHODS", "posterior",
           "prob_best", "prob_best_mc", "prob_leader", "arms_of", "arms_metadata", "FIXED_BUDGET_RUNS", "runs_problem",
           "FIXED_CONFIDENCE_PROPOSALS", "propose_top_two", "propose_all", "propose_thompson", "proposal_problem"]
