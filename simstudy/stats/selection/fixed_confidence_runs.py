"""Fixed-confidence model selection for simulation studies: many runs at once, vectorized across runs.

:func:`fixed_confidence_runs` records the stopping point of several confidence levels from one trajectory per
run: the algorithms' choices do not depend on delta, only when they stop does, so a run continued to the
strictest level passes every laxer level's stopping point on the way. It draws m ~ pi exactly by Thompson's
device (the argmax of one joint posterior draw) instead of computing all of pi, and checks the stopping rule
with :func:`~simstudy.stats.posterior.prob_leader`; the algorithms are the same in distribution as the one-run
functions of :mod:`simstudy.stats.selection.fixed_confidence` (which re-exports these names).

==================================  ====================================================
name                                what it is
==================================  ====================================================
:func:`fixed_confidence_runs`       many runs of one algorithm, stopped at each level
:class:`ConfidenceRuns`             what it returns
:data:`FIXED_CONFIDENCE_PROPOSALS`  the built-in proposal rules (the plug-in contract's)
:func:`propose_top_two`             top-two Thompson
:func:`propose_all`                 every model
:func:`propose_thompson`            batch Thompson
:func:`proposal_problem`            a plug-in rule checked on a tiny input
==================================  ====================================================
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from simstudy.stats._rng import rng_iv
from simstudy.stats.posterior import posterior, prob_best, prob_leader, prob_leader_upper
from simstudy.stats.selection._arms import best_of, draw, scores
from simstudy.stats.selection.fixed_confidence import FIXED_CONFIDENCE_ALGORITHMS, confidence_iv, transform

__all__ = [
    "ConfidenceRuns",
    "fixed_confidence_runs",
    "FIXED_CONFIDENCE_PROPOSALS",
    "propose_top_two",
    "propose_all",
    "propose_thompson",
    "proposal_problem",
]


@dataclass(frozen=True)
class ConfidenceRuns:
    """Many independent runs of one algorithm, stopped at each of several confidence levels.

    Returned by :func:`fixed_confidence_runs`; a frozen dataclass whose fields are the constructor's parameters.

    Parameters
    ----------
    deltas : tuple of float, length D
        The levels, each in (0, 0.5), in the order given (confidence ``1 - delta``).
    evaluations : ndarray of int64, shape (D, R)
        Total evaluations of run r when it stopped for ``deltas[d]`` (or hit the cap).
    chosen : ndarray of int64, shape (D, R)
        The model (index in ``[0, N)``) run r selects at level d: the leader when it stopped.
    capped : ndarray of bool, shape (D, R)
        True where run r hit ``max_evaluations`` before reaching confidence ``1 - deltas[d]``.
    per_arm : ndarray of int64, shape (D, R, N)
        Evaluations of each model at that point (``per_arm.sum(axis=2) == evaluations``).

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> runs = fixed_confidence_runs(arms, [0.1, 0.05], 4, algorithm="ttts", rng=np.random.default_rng(0))
    >>> runs.deltas, runs.evaluations.shape, runs.per_arm.shape
    ((0.1, 0.05), (2, 4), (2, 4, 3))
    >>> bool((runs.per_arm.sum(axis=2) == runs.evaluations).all())
    True
    """

    deltas: tuple
    evaluations: np.ndarray
    chosen: np.ndarray
    capped: np.ndarray
    per_arm: np.ndarray


def _thompson(loc, scale, df, rng, size=None) -> np.ndarray:
    """Models drawn from pi, one per row (or ``size`` per row): the argmax of a joint posterior draw."""
    shape = loc.shape if size is None else (loc.shape[0], size, loc.shape[1])
    t = rng.standard_t(np.broadcast_to(df[:, None, :] if size else df, shape))
    draws = (loc[:, None, :] + scale[:, None, :] * t) if size else loc + scale * t
    return np.argmax(draws, axis=-1)


def propose_top_two(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """Top-two Thompson sampling's next model for every run.

    m1 is drawn from pi, m2 from pi without m1, and one of the two is chosen uniformly. A proposal of the
    fixed-confidence contract (see :mod:`simstudy.stats.selection`), the ``"ttts"`` step of
    :func:`fixed_confidence_runs`. Each draw from pi is the argmax of one joint posterior draw (Thompson's
    device); m2 is redrawn until it differs from m1.

    Parameters
    ----------
    loc : ndarray of float64, shape (R, N)
        Location of the t posterior of every model's mean score in each of the R runs (score units, or logit).
    scale : ndarray of float64, shape (R, N)
        Its scale (> 0).
    df : ndarray of float64, shape (R, N)
        Its degrees of freedom (a model's evaluations so far minus 2).
    rng : numpy.random.Generator, keyword-only
        Drives the draws.

    Returns
    -------
    ndarray of int64, shape (R, 1)
        The model each run evaluates next.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Russo, D. (2016). Simple Bayesian algorithms for best arm identification. COLT 2016, arXiv:1602.08448.

    Examples
    --------
    >>> import numpy as np
    >>> loc = np.array([[0.60, 0.70, 0.80], [0.80, 0.70, 0.60]])
    >>> scale, df = np.full((2, 3), 0.05), np.full((2, 3), 2.0)
    >>> propose_top_two(loc, scale, df, rng=np.random.default_rng(0)).tolist()
    [[2], [0]]
    """
    m1 = _thompson(loc, scale, df, rng)
    m2 = np.full_like(m1, -1)
    todo = np.arange(m1.size)
    for _ in range(10_000):  # m2: redraw until it differs from m1 (at most 1/delta draws expected)
        j = _thompson(loc[todo], scale[todo], df[todo], rng)
        ok = j != m1[todo]
        m2[todo[ok]] = j[ok]
        todo = todo[~ok]
        if not todo.size:
            break
    else:  # pi all but certain of m1 yet the run has not stopped (rounding): any other model
        N = loc.shape[1]
        m2[todo] = (m1[todo] + rng.integers(1, N, todo.size)) % N
    return np.where(rng.random(m1.size) < 0.5, m1, m2)[:, None]


def propose_all(loc: np.ndarray, scale: np.ndarray, df: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """The non-adaptive baseline's step: every model once in every run.

    A proposal of the fixed-confidence contract (see :mod:`simstudy.stats.selection`), the ``"non_adaptive"`` step of
    :func:`fixed_confidence_runs`.

    Parameters
    ----------
    loc : ndarray of float64, shape (R, N)
        Location of the t posterior of every model's mean score in each of the R runs; only its shape is used.
    scale : ndarray of float64, shape (R, N)
        Its scale (unused).
    df : ndarray of float64, shape (R, N)
        Its degrees of freedom (unused).
    rng : numpy.random.Generator, keyword-only
        Unused: the step draws nothing.

    Returns
    -------
    ndarray of int, shape (R, N)
        ``0, 1, ..., N - 1`` in every row (a read-only broadcast view).

    Examples
    --------
    >>> import numpy as np
    >>> loc = np.zeros((2, 3))
    >>> propose_all(loc, np.ones((2, 3)), np.ones((2, 3)), rng=np.random.default_rng(0)).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    return np.broadcast_to(np.arange(loc.shape[1]), loc.shape)


def propose_thompson(
    loc: np.ndarray,
    scale: np.ndarray,
    df: np.ndarray,
    *,
    rng: np.random.Generator,
    batch: int = 1,
    distinct: bool = False,
) -> np.ndarray:
    """Batch Thompson sampling's step: ``batch`` independent draws from pi per run.

    A proposal of the fixed-confidence contract (see :mod:`simstudy.stats.selection`), the ``"batch_thompson"`` step
    of :func:`fixed_confidence_runs` (which passes ``batch``). Each draw from pi is the argmax of one joint
    posterior draw, so a model may repeat within a batch.

    With ``distinct=True`` the batch is drawn from pi without replacement instead (``min(batch, N)`` distinct
    models, as ``numpy.random.Generator.choice(N, batch, replace=False, p=pi)`` would: each next model from pi
    renormalised over the models not yet drawn), by the Gumbel top-k device on the full pi of
    :func:`~simstudy.stats.posterior.prob_best`; a batch of all N models is the non-adaptive step.

    Parameters
    ----------
    loc : ndarray of float64, shape (R, N)
        Location of the t posterior of every model's mean score in each of the R runs (score units, or logit).
    scale : ndarray of float64, shape (R, N)
        Its scale (> 0).
    df : ndarray of float64, shape (R, N)
        Its degrees of freedom (a model's evaluations so far minus 2).
    rng : numpy.random.Generator, keyword-only
        Drives the draws.
    batch : int, keyword-only, default 1
        Models drawn per run (>= 1).
    distinct : bool, keyword-only, default False
        Draw without replacement (distinct models) instead of independently.

    Returns
    -------
    ndarray of int64, shape (R, batch)
        The models each run evaluates next; shape ``(R, min(batch, N))`` with ``distinct=True``.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Kandasamy, K., Krishnamurthy, A., Schneider, J., & Póczos, B. (2018). Parallelised Bayesian optimisation via
    Thompson sampling. AISTATS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> loc = np.array([[0.60, 0.70, 0.80], [0.80, 0.70, 0.60]])
    >>> scale, df = np.full((2, 3), 0.05), np.full((2, 3), 2.0)
    >>> propose_thompson(loc, scale, df, rng=np.random.default_rng(0), batch=4).tolist()
    [[1, 1, 2, 2], [0, 0, 1, 0]]
    >>> propose_thompson(loc, scale, df, rng=np.random.default_rng(0), batch=2, distinct=True).tolist()
    [[2, 1], [0, 1]]
    """
    if not distinct:
        return _thompson(loc, scale, df, rng, size=batch)
    N = loc.shape[1]
    if batch >= N:
        return np.broadcast_to(np.arange(N), loc.shape).copy()
    with np.errstate(divide="ignore"):
        keys = np.log(prob_best(loc, scale, df)) + rng.gumbel(size=loc.shape)
    return np.argsort(-keys, axis=1, kind="stable")[:, :batch]


#: The built-in proposals by algorithm name (``batch_thompson`` takes ``batch=``).
FIXED_CONFIDENCE_PROPOSALS: dict[str, Callable[..., np.ndarray]] = {
    "ttts": propose_top_two,
    "non_adaptive": propose_all,
    "batch_thompson": propose_thompson,
}
# The generator of the probe call that reads a proposal's width before a run (never the run's own stream).
_PROBE_SEED = 0x5E1EC7


def _name(fn) -> str:
    return str(getattr(fn, "target", None) or getattr(fn, "__qualname__", None) or fn)


def proposal_problem(which, rows: int, N: int, width: int | None = None) -> str | None:
    """What breaks the proposal contract in ``which`` (``None`` if nothing).

    ``which`` must be an integer array of shape ``(rows, width)`` (any ``width >= 1`` if not given) with every
    entry a model index in ``[0, N)``. :func:`fixed_confidence_runs` and
    :func:`simstudy.plugins.check_selection_algorithm` call it on a proposal's output.

    Parameters
    ----------
    which : array_like of int, shape (rows, k)
        A proposal's output: the models each run evaluates next.
    rows : int
        The number of runs R the proposal was called for.
    N : int
        The number of models.
    width : int, optional
        The required number of evaluations per step k (the first call's). Default None: any k >= 1.

    Returns
    -------
    str or None
        A one-line description of the first problem found (dtype, shape, an index out of range), or None if
        ``which`` keeps the contract.

    Examples
    --------
    >>> import numpy as np
    >>> print(proposal_problem(np.array([[0], [2]]), 2, 3))
    None
    >>> proposal_problem(np.array([[0], [3]]), 2, 3)
    'returned model index 3; indices must lie in [0, 3) for 3 models'
    >>> proposal_problem(np.array([0, 2]), 2, 3)
    'returned shape (2,) for 2 runs; the contract is (2, k) with k >= 1 evaluations per step'
    """
    which = np.asarray(which)
    if not np.issubdtype(which.dtype, np.integer):
        return f"returned dtype {which.dtype}; the contract is integer model indices"
    if which.ndim != 2 or which.shape[0] != rows or which.shape[1] < 1 or (width and which.shape[1] != width):
        want = f"({rows}, {width})" if width else f"({rows}, k) with k >= 1 evaluations per step"
        return f"returned shape {which.shape} for {rows} runs; the contract is {want}"
    if which.size and (which.min() < 0 or which.max() >= N):
        bad = which[(which < 0) | (which >= N)][0]
        return f"returned model index {int(bad)}; indices must lie in [0, {N}) for {N} models"
    return None


def _proposal(algorithm, batch: int) -> Callable:
    if callable(algorithm):
        return algorithm
    if algorithm not in FIXED_CONFIDENCE_PROPOSALS:
        raise ValueError(
            f"algorithm must be one of {', '.join(FIXED_CONFIDENCE_ALGORITHMS)} or a proposal "
            f"function propose(loc, scale, df, *, rng); got {algorithm!r}"
        )
    propose = FIXED_CONFIDENCE_PROPOSALS[algorithm]
    return (
        (lambda loc, scale, df, *, rng: propose(loc, scale, df, rng=rng, batch=batch))
        if algorithm == "batch_thompson"
        else propose
    )


class _Streams:
    """Common random numbers: evaluation j of model m in run r is entry ``[r, m, j]`` of a score stream drawn from
    its own generator in blocks of ``_BLOCK`` evaluations per run and model, all models of a block in turn, so
    two callers whose generators share a seed see the same scores whichever models they evaluate when."""

    def __init__(self, arms: Sequence, runs: int, rng: np.random.Generator):
        self.arms, self.runs, self.rng = arms, runs, rng
        self.scores = np.empty((runs, len(arms), 0))

    def take(self, rows: np.ndarray, which: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Scores of models ``which`` at stream positions ``position`` in runs ``rows`` (broadcast together)."""
        need = int(position.max()) + 1 if position.size else 0
        while self.scores.shape[2] < need:
            block = np.stack(
                [
                    scores(
                        arm.sample((self.runs, _BLOCK), rng=self.rng), (self.runs, _BLOCK), a, "sample(size, rng=rng)"
                    )
                    for a, arm in enumerate(self.arms)
                ],
                axis=1,
            )
            self.scores = np.concatenate([self.scores, block], axis=2)
        return self.scores[rows, which, position]


_BLOCK = 256


def _positions(counts: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Each slot's stream position: its model's evaluations so far plus the earlier slots of that model in the
    same step (a batch may repeat a model)."""
    same = which[:, :, None] == which[:, None, :]
    earlier = np.tril(np.ones(which.shape[1:] * 2, dtype=bool), -1)
    return np.take_along_axis(counts, which, axis=1) + (same & earlier).sum(axis=2)


#: How far below a stopping bar the exact upper bound on pi must stay for the quadrature to be skipped: 16 times
#: the quadrature's largest error measured against a 7,000-node reference (6e-5; see simstudy.stats.posterior).
_SCREEN_MARGIN = 1e-3


def fixed_confidence_runs(
    arms: Sequence,
    deltas: Sequence[float] | np.ndarray,
    runs: int,
    *,
    algorithm: str | Callable,
    rng: np.random.Generator,
    batch: int = 4,
    max_evaluations: int = 10_000,
    initial: int = 3,
    logit: bool = False,
    streams: np.random.Generator | None = None,
    mc_draws: int | None = None,
) -> ConfidenceRuns:
    """``runs`` independent fixed-confidence selections at once, stopped at every level in ``deltas``.

    The algorithms' choices do not depend on delta, only when they stop does, so each run is continued to the
    strictest level and records where it passes every laxer level's stopping rule ``P(leader is best) >
    1 - delta``. The proposal (the part in which the algorithms differ) is pluggable; see the contract in
    :mod:`simstudy.stats.selection`.

    Parameters
    ----------
    arms : sequence of N >= 2 distributions
        Score distributions, each with ``sample(size, rng=...)`` returning float64 scores of shape ``size``.
    deltas : sequence of float, length D
        The levels, each in (0, 0.5) (confidence ``1 - delta``); a single float is taken as one level.
    runs : int
        How many independent selections R to run.
    algorithm : {"ttts", "non_adaptive", "batch_thompson"} or callable, keyword-only
        A built-in algorithm, or a proposal ``propose(loc, scale, df, *, rng) -> which`` of the contract in
        :mod:`simstudy.stats.selection` (its width k, the evaluations per step, is read from one call on the first
        run's initial posterior with a generator of its own, before the run, and must not change).
    rng : numpy.random.Generator, keyword-only
        Drives the algorithm, the tie-breaks and (without ``streams``) the evaluations.
    batch : int, keyword-only, default 4
        Batch size of ``batch_thompson`` (>= 1; checked for every algorithm).
    max_evaluations : int, keyword-only, default 10_000
        Cap on a run's total evaluations (at least ``initial * N``). A step that would take a run past it is
        not started; the run then stops, ``capped``, at every level still pending.
    initial : int, keyword-only, default 3
        Evaluations of every model before the first step (>= 3: the t posterior needs them).
    logit : bool, keyword-only, default False
        The posteriors model the logit of the scores, which must then lie strictly inside (0, 1).
    streams : numpy.random.Generator, optional, keyword-only
        Common random numbers: the j-th evaluation of model m in run r is the j-th score of that run's stream
        for m, drawn from ``streams`` (``rng`` then drives only the algorithm). Two algorithms given generators
        of the same seed see the same scores in the same order on every model of run r, so their difference
        is paired run by run. By default each evaluation is a fresh draw from ``rng``.
    mc_draws : int, optional, keyword-only
        The stopping rule's pi by this many Monte Carlo draws per step, as the published FIESTA package computes
        it (with 100,000 per model): stop when the largest estimated pi exceeds ``1 - delta`` and choose its
        model. By default the leader's pi by quadrature (:func:`~simstudy.stats.posterior.prob_leader`).

    Returns
    -------
    ConfidenceRuns
        For every level d and run r: the total ``evaluations``, the ``chosen`` model, whether it was
        ``capped``, and the evaluations ``per_arm``.

    Raises
    ------
    ValueError
        Invalid arguments (fewer than 2 models, a delta outside (0, 0.5), ``initial`` < 3, ``batch`` or
        ``mc_draws`` < 1, ``max_evaluations`` < ``initial * N``, an unknown ``algorithm``, ``rng`` or
        ``streams`` not a :class:`numpy.random.Generator`), a non-finite score (or, with ``logit``, one outside
        (0, 1)), or a proposal breaking its contract (wrong dtype or shape, a width other than the first
        call's, an index out of range), named in the message.
    TypeError
        If ``arms`` is not a sequence.

    See Also
    --------
    ttts, non_adaptive_confidence, batch_thompson : one run at a time, with the trace of pi.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> runs = fixed_confidence_runs(arms, [0.1, 0.05], 4, algorithm="ttts", rng=np.random.default_rng(0))
    >>> runs.evaluations.tolist()
    [[15, 22, 18, 27], [27, 24, 21, 30]]
    >>> runs.chosen.tolist()
    [[2, 2, 2, 2], [2, 2, 2, 2]]

    Common random numbers pair two algorithms run by run:

    >>> pair = [
    ...     fixed_confidence_runs(
    ...         arms, [0.05], 4, algorithm=a, rng=np.random.default_rng(1), streams=np.random.default_rng(7)
    ...     ).evaluations[0].tolist()
    ...     for a in ("non_adaptive", "ttts")
    ... ]
    >>> pair
    [[21, 30, 30, 12], [23, 25, 27, 16]]
    """
    propose = _proposal(algorithm, batch)
    deltas = confidence_iv(arms, deltas, initial, max_evaluations, batch, mc_draws=1 if mc_draws is None else mc_draws)
    rng_iv(rng, "fixed_confidence_runs")
    N, D, R = len(arms), deltas.size, int(runs)

    if streams is not None:
        rng_iv(streams, "fixed_confidence_runs streams")
        stream = _Streams(arms, R, streams)
        first = stream.take(np.arange(R)[:, None, None], np.arange(N)[:, None], np.arange(initial))
    else:
        first = draw(arms, np.broadcast_to(np.arange(N)[:, None], (R, N, initial)), rng)
    y = transform(first, logit, "any")
    sums, squares = y.sum(axis=-1), (y * y).sum(axis=-1)
    counts = np.full((R, N), initial, dtype=np.int64)
    step = _width(propose, *posterior(sums[:1], squares[:1], counts[:1]), N) if R else 1
    evaluations = np.zeros((D, R), dtype=np.int64)
    chosen = np.zeros((D, R), dtype=np.int64)
    capped = np.zeros((D, R), dtype=bool)
    per_arm = np.zeros((D, R, N), dtype=np.int64)
    pending = np.ones((D, R), dtype=bool)
    active = np.arange(R)
    while active.size:
        loc, scale, df = posterior(sums[active], squares[active], counts[active])
        if mc_draws is None:
            leader = best_of(loc, rng, 1)[:, 0]
            # The quadrature only where a cheap exact upper bound on pi reaches the lowest bar still pending
            # (less a margin far above the quadrature's error, ~6e-5): elsewhere no run can stop, so the
            # decisions, and every number, are the quadrature's own, at a fraction of its cost.
            bar = np.where(pending[:, active], 1.0 - deltas[:, None], np.inf).min(axis=0)
            near = prob_leader_upper(loc, scale, df, leader) > bar - _SCREEN_MARGIN
            pi = np.zeros(active.size)
            if near.any():
                pi[near] = prob_leader(loc[near], scale[near], df[near], leader[near])
        else:
            leader, pi = _mc_leader(loc, scale, df, mc_draws, rng)
        total = counts[active].sum(axis=1)
        stop = pending[:, active] & (pi > 1.0 - deltas[:, None])
        cap = pending[:, active] & ~stop & (total + step > max_evaluations)
        d, a = np.nonzero(stop | cap)
        evaluations[d, active[a]] = total[a]
        chosen[d, active[a]] = leader[a]
        capped[d, active[a]] = cap[d, a]
        per_arm[d, active[a]] = counts[active[a]]
        pending[d, active[a]] = False
        going = pending[:, active].any(axis=0)
        active, loc, scale, df = active[going], loc[going], scale[going], df[going]
        if not active.size:
            break
        which = np.asarray(propose(loc, scale, df, rng=rng))
        problem = proposal_problem(which, active.size, N, step)
        if problem:
            raise ValueError(f"fixed-confidence proposal {_name(propose)}: {problem}")
        scores = (
            stream.take(active[:, None], which, _positions(counts[active], which))
            if streams is not None
            else draw(arms, which, rng)
        )
        y = transform(scores, logit, "any")
        flat = (np.arange(active.size)[:, None] * N + which).ravel()
        size = active.size * N
        sums[active] += np.bincount(flat, weights=y.ravel(), minlength=size).reshape(-1, N)
        squares[active] += np.bincount(flat, weights=(y * y).ravel(), minlength=size).reshape(-1, N)
        counts[active] += np.bincount(flat, minlength=size).reshape(-1, N)
    return ConfidenceRuns(tuple(float(x) for x in deltas), evaluations, chosen, capped, per_arm)


_MC_SLICE = 1000


def _mc_leader(loc, scale, df, draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The model with the largest Monte Carlo pi of each run and that pi, from ``draws`` joint posterior draws
    (taken ``_MC_SLICE`` at a time to bound memory)."""
    A, N = loc.shape
    wins = np.zeros((A, N))
    for start in range(0, draws, _MC_SLICE):
        m = min(_MC_SLICE, draws - start)
        t = rng.standard_t(np.broadcast_to(df[:, None, :], (A, m, N)))
        best = np.argmax(loc[:, None, :] + scale[:, None, :] * t, axis=-1)
        wins += (best[..., None] == np.arange(N)).sum(axis=1)
    leader = np.argmax(wins, axis=1)
    return leader, wins[np.arange(A), leader] / draws


def _width(propose: Callable, loc, scale, df, N: int) -> int:
    """The evaluations per step of ``propose``: its width on one run's posterior, drawn from a probe generator
    (the run's own stream is untouched, so the result does not depend on whether the width was known)."""
    which = propose(loc, scale, df, rng=np.random.default_rng(_PROBE_SEED))
    problem = proposal_problem(which, 1, N)
    if problem:
        raise ValueError(f"fixed-confidence proposal {_name(propose)}: {problem}")
    return int(np.shape(which)[1])
