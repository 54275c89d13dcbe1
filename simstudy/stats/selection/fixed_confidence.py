"""Fixed-confidence model selection (Moss et al. 2019, §4.2-4.3 and Algorithm 2).

Evaluate models until one is believed best with probability above ``1 - delta``, where the belief
``pi_m = P(model m has the highest mean score)`` comes from the t posteriors of :mod:`simstudy.stats.posterior`.
Every algorithm first evaluates each model ``initial`` (three) times, then repeats *propose, evaluate,
update pi* until ``max pi > 1 - delta`` and returns ``argmax pi``:

- :func:`ttts`, top-two Thompson sampling (Russo 2016; Algorithm 2): draw m1 from pi, then m2 from pi
  without m1, and evaluate one of the two chosen uniformly;
- :func:`non_adaptive_confidence`, the standard practice: every model once per step;
- :func:`batch_thompson`, batch Thompson sampling (Kandasamy et al. 2018; §4.3): ``batch`` independent
  draws from pi per step, evaluated before pi is updated (models may repeat within a batch).

A cap on the total evaluations ends a run that has not reached the confidence; such runs are flagged
``capped`` and never dropped. With ``logit=True`` the posteriors model the logit of the scores (the FIESTA
package's option for bounded metrics); scores must then lie strictly inside (0, 1).

For simulation studies :func:`fixed_confidence_runs` runs many selections at once, vectorized across runs,
and records the stopping point of several confidence levels from one trajectory per run: the algorithms'
choices do not depend on delta, only when they stop does, so a run continued to the strictest level passes
every laxer level's stopping point on the way. It draws m ~ pi exactly by Thompson's device (the argmax of
one joint posterior draw) instead of computing all of pi, and checks the stopping rule with
:func:`~simstudy.stats.posterior.prob_leader`; the algorithms are the same in distribution as the one-run
functions, which compute pi in full for their trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from simstudy.stats._rng import rng_iv
from simstudy.stats.posterior import posterior, prob_best, prob_best_mc, prob_leader, prob_leader_upper
from simstudy.stats.selection._arms import _scores, arms_iv, best_of, draw, evaluator

__all__ = [
    "ConfidenceResult",
    "ConfidenceRuns",
    "ttts",
    "non_adaptive_confidence",
    "batch_thompson",
    "fixed_confidence_runs",
    "FIXED_CONFIDENCE_ALGORITHMS",
    "PI_METHODS",
    "FIXED_CONFIDENCE_PROPOSALS",
    "propose_top_two",
    "propose_all",
    "propose_thompson",
    "proposal_problem",
]

#: Fixed-confidence algorithms by name (the ``algorithm`` of :func:`fixed_confidence_runs`).
FIXED_CONFIDENCE_ALGORITHMS = ("ttts", "non_adaptive", "batch_thompson")
#: How pi is computed in the one-run functions.
PI_METHODS = ("quadrature", "mc")


@dataclass(frozen=True)
class ConfidenceResult:
    """The outcome of one fixed-confidence selection.

    Returned by :func:`ttts`, :func:`non_adaptive_confidence` and :func:`batch_thompson`; a frozen dataclass
    whose fields are the constructor's parameters.

    Parameters
    ----------
    chosen : int
        Index in ``[0, N)`` of the selected model, ``argmax pi`` when the run ended.
    evaluations : ndarray of int64, shape (N,)
        Evaluations spent on each model.
    confidence : float
        ``pi[chosen]``, a probability in [0, 1], when the run ended (above ``1 - delta`` unless ``capped``).
    capped : bool
        True if the run hit ``max_evaluations`` before reaching the confidence.
    means : ndarray of float64, shape (N,)
        Each model's mean score over its evaluations, in score units (untransformed, also with ``logit=True``).
    pi_trace : ndarray of float64, shape (S, N)
        pi, each model's posterior probability of being best, after the initial evaluations (row 0) and after
        every later update (S - 1 steps).
    evaluations_trace : ndarray of int64, shape (S,)
        Total evaluations when each row of ``pi_trace`` was computed.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> result = ttts(arms, 0.05, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), round(result.confidence, 4), result.capped
    (2, [12, 5, 9], 0.9506, False)
    >>> result.pi_trace.shape, result.evaluations_trace[[0, -1]].tolist()
    ((18, 3), [9, 26])
    """

    chosen: int
    evaluations: np.ndarray
    confidence: float
    capped: bool
    means: np.ndarray
    pi_trace: np.ndarray
    evaluations_trace: np.ndarray


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


def _transform(values: np.ndarray, logit: bool, arm) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        bad = values[~np.isfinite(values)][0]
        raise ValueError(f"model {arm} returned a non-finite score {bad!r}")
    if not logit:
        return values
    outside = (values <= 0.0) | (values >= 1.0)
    if outside.any():
        raise ValueError(
            f"logit=True needs scores strictly between 0 and 1; model {arm} returned {values[outside][0]!r}"
        )
    return special.logit(values)


def _confidence_iv(arms, delta, initial, max_evaluations, batch=1, pi_method="quadrature", mc_draws=1) -> np.ndarray:
    """Validate the shared arguments; return them normalised."""
    n = len(arms_iv(arms))
    if n < 2:
        raise ValueError(f"need at least 2 models to select between, got {n}")
    values = list(delta) if isinstance(delta, (list, tuple, np.ndarray)) else [delta]
    if not values or any(
        isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.integer, np.floating)) for d in values
    ):
        raise ValueError(f"delta must be a number (or, for several levels, a sequence of numbers), got {delta!r}")
    if not all(0 < d < 0.5 for d in values):
        raise ValueError(f"delta must lie in (0, 0.5) -- a confidence 1 - delta above one half -- got {delta!r}")
    deltas = np.asarray(values, dtype=np.float64)
    for name, value, least in (("initial", initial, 3), ("batch", batch, 1), ("mc_draws", mc_draws, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(
                f"{name} must be an integer >= {least}, got {value!r}"
                + (" (the t posterior needs three evaluations)" if name == "initial" else "")
            )
    if (
        isinstance(max_evaluations, bool)
        or not isinstance(max_evaluations, (int, np.integer))
        or max_evaluations < initial * n
    ):
        raise ValueError(
            f"max_evaluations must be an integer of at least initial * models = {initial * n}, got {max_evaluations!r}"
        )
    if pi_method not in PI_METHODS:
        raise ValueError(f"pi_method must be one of {', '.join(PI_METHODS)}; got {pi_method!r}")
    return deltas


def _select(
    arms: Sequence,
    delta: float,
    propose: Callable,
    *,
    rng: np.random.Generator,
    max_evaluations: int,
    initial: int,
    logit: bool,
    pi_method: str,
    mc_draws: int,
    callback,
    batch: int = 1,
) -> ConfidenceResult:
    """The loop shared by the one-run algorithms: ``propose(pi, rng) -> models to evaluate next``."""
    _confidence_iv(arms, delta, initial, max_evaluations, batch, pi_method, mc_draws)
    rng_iv(rng, "the selection")
    evaluate = [evaluator(a, i) for i, a in enumerate(arms)]
    N = len(evaluate)
    sums, squares, raw, counts = np.zeros(N), np.zeros(N), np.zeros(N), np.zeros(N, dtype=np.int64)

    def add(m: int, count: int) -> None:
        values = evaluate[m](count, rng)
        y = _transform(values, logit, m)
        raw[m] += values.sum()
        sums[m] += y.sum()
        squares[m] += (y * y).sum()
        counts[m] += count

    for m in range(N):
        add(m, initial)
    trace, totals, capped = [], [], False
    while True:
        loc, scale, df = posterior(sums, squares, counts)
        pi = (
            prob_best(loc, scale, df)
            if pi_method == "quadrature"
            else prob_best_mc(loc, scale, df, draws=mc_draws, rng=rng)
        )
        trace.append(pi)
        totals.append(int(counts.sum()))
        if callback is not None:
            callback(counts.copy(), pi.copy())
        if pi.max() > 1.0 - delta:
            break
        picks = np.bincount(propose(pi, rng), minlength=N)
        if counts.sum() + picks.sum() > max_evaluations:
            capped = True
            break
        for j in np.flatnonzero(picks):
            add(int(j), int(picks[j]))
    chosen = int(best_of(pi, rng, 1)[0])
    return ConfidenceResult(
        chosen, counts, float(pi[chosen]), capped, raw / counts, np.array(trace), np.array(totals, dtype=np.int64)
    )


def _top_two(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    N = pi.size
    m1 = rng.choice(N, p=pi)
    rest = np.where(np.arange(N) == m1, 0.0, pi)
    if rest.sum() > 0:
        m2 = rng.choice(N, p=rest / rest.sum())
    else:  # pi is all on m1 (to rounding): any other model
        m2 = rng.choice(np.delete(np.arange(N), m1))
    return np.array([m1 if rng.random() < 0.5 else m2])


def ttts(
    arms: Sequence,
    delta: float,
    *,
    rng: np.random.Generator,
    max_evaluations: int = 10_000,
    initial: int = 3,
    logit: bool = False,
    pi_method: str = "quadrature",
    mc_draws: int = 800_000,
    callback: Callable[[np.ndarray, np.ndarray], None] | None = None,
) -> ConfidenceResult:
    """Top-two Thompson sampling (Moss et al. Algorithm 2): select the best model with confidence ``1 - delta``.

    Every model is evaluated ``initial`` times; then, until ``max pi > 1 - delta``, m1 is drawn from pi, m2
    from pi without m1, and one of the two (uniformly) is evaluated once, and the t posteriors and pi updated.

    Parameters
    ----------
    arms : sequence of N >= 2 arms
        The candidate models: score distributions (``sample(size, rng=...)`` returning float64 scores) or
        callables ``evaluate(count, rng) -> scores`` that train and score a real model ``count`` times and
        return ``count`` scores (shape ``(count,)``, score units).
    delta : float
        In (0, 0.5): stop when some model is best with posterior probability above ``1 - delta`` (e.g. 0.05
        for 95% confidence).
    rng : numpy.random.Generator, keyword-only
        Drives the algorithm (and the simulated evaluations, passed to every arm).
    max_evaluations : int, keyword-only, default 10_000
        Cap on the total evaluations (of all models together); a run reaching it ends with ``capped=True``.
        At least ``initial * N``.
    initial : int, keyword-only, default 3
        Evaluations of every model before the first update (>= 3: the t posterior needs them).
    logit : bool, keyword-only, default False
        Model the logit of the scores (the FIESTA package's option for bounded metrics); the scores must then
        lie strictly inside (0, 1).
    pi_method : {"quadrature", "mc"}, keyword-only, default "quadrature"
        pi (every model's probability of being best) by deterministic quadrature
        (:func:`~simstudy.stats.posterior.prob_best`), or by ``mc_draws`` Monte Carlo draws (the published package's
        way, :func:`~simstudy.stats.posterior.prob_best_mc`).
    mc_draws : int, keyword-only, default 800_000
        Joint posterior draws per update with ``pi_method="mc"`` (>= 1); unused by the quadrature.
    callback : callable, optional, keyword-only
        ``callback(evaluations, pi)`` after every update, with copies of the evaluations per model (int array,
        shape (N,)) and of pi (float array, shape (N,)), e.g. to log the progress of a real selection.
        Default None.

    Returns
    -------
    ConfidenceResult
        ``chosen`` (``argmax pi``), ``evaluations`` per model, the final ``confidence``, whether it was
        ``capped``, every model's ``means`` and the traces of pi and of the total evaluations.

    Raises
    ------
    ValueError
        If there are fewer than 2 models, ``delta`` is not in (0, 0.5), ``initial`` < 3, ``mc_draws`` < 1,
        ``max_evaluations`` < ``initial * N``, ``pi_method`` is unknown, ``rng`` is not a
        :class:`numpy.random.Generator`; or if a model returns a non-finite score, scores of the wrong shape, or
        (with ``logit=True``) a score outside (0, 1).
    TypeError
        If ``arms`` is not a sequence, or an arm is neither a distribution nor a callable.

    See Also
    --------
    fixed_confidence_runs : many runs at once, vectorized, at several confidence levels.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Russo, D. (2016). Simple Bayesian algorithms for best arm identification. COLT 2016, arXiv:1602.08448.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> result = ttts(arms, 0.05, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), round(result.confidence, 4)
    (2, [12, 5, 9], 0.9506)

    A cap ends a run short of the confidence:

    >>> result = ttts(arms, 0.01, rng=np.random.default_rng(0), max_evaluations=20)
    >>> result.evaluations.tolist(), round(result.confidence, 4), result.capped
    ([8, 5, 7], 0.801, True)
    >>> ttts(arms, 0.7, rng=np.random.default_rng(0))
    Traceback (most recent call last):
        ...
    ValueError: delta must lie in (0, 0.5) -- a confidence 1 - delta above one half -- got 0.7
    """
    return _select(
        arms,
        delta,
        _top_two,
        rng=rng,
        max_evaluations=max_evaluations,
        initial=initial,
        logit=logit,
        pi_method=pi_method,
        mc_draws=mc_draws,
        callback=callback,
    )


def non_adaptive_confidence(
    arms: Sequence,
    delta: float,
    *,
    rng: np.random.Generator,
    max_evaluations: int = 10_000,
    initial: int = 3,
    logit: bool = False,
    pi_method: str = "quadrature",
    mc_draws: int = 800_000,
    callback: Callable | None = None,
) -> ConfidenceResult:
    """The non-adaptive baseline: every model once per step until ``max pi > 1 - delta``.

    The standard practice of Moss et al. (2019) §4.2: the same stopping rule as :func:`ttts`, without the
    adaptive choice of which model to evaluate.

    Parameters
    ----------
    arms : sequence of N >= 2 arms
        The candidate models: score distributions (``sample(size, rng=...)`` returning float64 scores) or
        callables ``evaluate(count, rng) -> scores`` that train and score a real model ``count`` times and
        return ``count`` scores (shape ``(count,)``, score units).
    delta : float
        In (0, 0.5): stop when some model is best with posterior probability above ``1 - delta`` (e.g. 0.05
        for 95% confidence).
    rng : numpy.random.Generator, keyword-only
        Drives the algorithm (and the simulated evaluations, passed to every arm).
    max_evaluations : int, keyword-only, default 10_000
        Cap on the total evaluations (of all models together); a run reaching it ends with ``capped=True``.
        At least ``initial * N``.
    initial : int, keyword-only, default 3
        Evaluations of every model before the first update (>= 3: the t posterior needs them).
    logit : bool, keyword-only, default False
        Model the logit of the scores (the FIESTA package's option for bounded metrics); the scores must then
        lie strictly inside (0, 1).
    pi_method : {"quadrature", "mc"}, keyword-only, default "quadrature"
        pi (every model's probability of being best) by deterministic quadrature
        (:func:`~simstudy.stats.posterior.prob_best`), or by ``mc_draws`` Monte Carlo draws (the published package's
        way, :func:`~simstudy.stats.posterior.prob_best_mc`).
    mc_draws : int, keyword-only, default 800_000
        Joint posterior draws per update with ``pi_method="mc"`` (>= 1); unused by the quadrature.
    callback : callable, optional, keyword-only
        ``callback(evaluations, pi)`` after every update, with copies of the evaluations per model (int array,
        shape (N,)) and of pi (float array, shape (N,)), e.g. to log the progress of a real selection.
        Default None.

    Returns
    -------
    ConfidenceResult
        ``chosen`` (``argmax pi``), ``evaluations`` per model, the final ``confidence``, whether it was
        ``capped``, every model's ``means`` and the traces of pi and of the total evaluations.

    Raises
    ------
    ValueError
        If there are fewer than 2 models, ``delta`` is not in (0, 0.5), ``initial`` < 3, ``mc_draws`` < 1,
        ``max_evaluations`` < ``initial * N``, ``pi_method`` is unknown, ``rng`` is not a
        :class:`numpy.random.Generator`; or if a model returns a non-finite score, scores of the wrong shape, or
        (with ``logit=True``) a score outside (0, 1).
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
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> result = non_adaptive_confidence(arms, 0.05, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), round(result.confidence, 4)
    (2, [13, 13, 13], 0.958)
    """
    every = np.arange(len(arms))
    return _select(
        arms,
        delta,
        lambda pi, rng: every,
        rng=rng,
        max_evaluations=max_evaluations,
        initial=initial,
        logit=logit,
        pi_method=pi_method,
        mc_draws=mc_draws,
        callback=callback,
    )


def batch_thompson(
    arms: Sequence,
    delta: float,
    batch: int,
    *,
    rng: np.random.Generator,
    max_evaluations: int = 10_000,
    initial: int = 3,
    logit: bool = False,
    pi_method: str = "quadrature",
    mc_draws: int = 800_000,
    callback: Callable | None = None,
) -> ConfidenceResult:
    """Batch Thompson sampling (Moss et al. §4.3): select the best model with confidence ``1 - delta``.

    ``batch`` models are drawn from pi per step, all evaluated before pi is updated. The draws are
    independent, so a model may appear more than once in a batch; the ``batch`` evaluations of
    a step can run in parallel. A batch that would exceed ``max_evaluations`` is not started.

    Parameters
    ----------
    arms : sequence of N >= 2 arms
        The candidate models: score distributions (``sample(size, rng=...)`` returning float64 scores) or
        callables ``evaluate(count, rng) -> scores`` that train and score a real model ``count`` times and
        return ``count`` scores (shape ``(count,)``, score units).
    delta : float
        In (0, 0.5): stop when some model is best with posterior probability above ``1 - delta`` (e.g. 0.05
        for 95% confidence).
    batch : int
        Models drawn from pi (with replacement) and evaluated per step (>= 1).
    rng : numpy.random.Generator, keyword-only
        Drives the algorithm (and the simulated evaluations, passed to every arm).
    max_evaluations : int, keyword-only, default 10_000
        Cap on the total evaluations (of all models together); a run reaching it ends with ``capped=True``.
        At least ``initial * N``.
    initial : int, keyword-only, default 3
        Evaluations of every model before the first update (>= 3: the t posterior needs them).
    logit : bool, keyword-only, default False
        Model the logit of the scores (the FIESTA package's option for bounded metrics); the scores must then
        lie strictly inside (0, 1).
    pi_method : {"quadrature", "mc"}, keyword-only, default "quadrature"
        pi (every model's probability of being best) by deterministic quadrature
        (:func:`~simstudy.stats.posterior.prob_best`), or by ``mc_draws`` Monte Carlo draws (the published package's
        way, :func:`~simstudy.stats.posterior.prob_best_mc`).
    mc_draws : int, keyword-only, default 800_000
        Joint posterior draws per update with ``pi_method="mc"`` (>= 1); unused by the quadrature.
    callback : callable, optional, keyword-only
        ``callback(evaluations, pi)`` after every update, with copies of the evaluations per model (int array,
        shape (N,)) and of pi (float array, shape (N,)), e.g. to log the progress of a real selection.
        Default None.

    Returns
    -------
    ConfidenceResult
        ``chosen`` (``argmax pi``), ``evaluations`` per model, the final ``confidence``, whether it was
        ``capped``, every model's ``means`` and the traces of pi and of the total evaluations.

    Raises
    ------
    ValueError
        If there are fewer than 2 models, ``delta`` is not in (0, 0.5), ``initial`` < 3, ``batch`` < 1,
        ``mc_draws`` < 1, ``max_evaluations`` < ``initial * N``, ``pi_method`` is unknown, ``rng`` is not a
        :class:`numpy.random.Generator`; or if a model returns a non-finite score, scores of the wrong shape, or
        (with ``logit=True``) a score outside (0, 1).
    TypeError
        If ``arms`` is not a sequence, or an arm is neither a distribution nor a callable.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.
    Kandasamy, K., Krishnamurthy, A., Schneider, J., & Póczos, B. (2018). Parallelised Bayesian optimisation via
    Thompson sampling. AISTATS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.linspace(0.6, 0.8, 11)), Bag(np.linspace(0.62, 0.82, 11)), Bag(np.linspace(0.7, 0.9, 11))]
    >>> result = batch_thompson(arms, 0.05, 4, rng=np.random.default_rng(0))
    >>> result.chosen, result.evaluations.tolist(), result.evaluations_trace.tolist()
    (2, [11, 7, 15], [9, 13, 17, 21, 25, 29, 33])
    """
    return _select(
        arms,
        delta,
        lambda pi, rng: rng.choice(pi.size, size=batch, p=pi),
        rng=rng,
        max_evaluations=max_evaluations,
        initial=initial,
        logit=logit,
        pi_method=pi_method,
        mc_draws=mc_draws,
        callback=callback,
        batch=batch,
    )


# --- Many runs at once ------------------------------------------------------------------------------------


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
                    _scores(
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
    deltas = _confidence_iv(arms, deltas, initial, max_evaluations, batch, mc_draws=1 if mc_draws is None else mc_draws)
    rng_iv(rng, "fixed_confidence_runs")
    N, D, R = len(arms), deltas.size, int(runs)

    if streams is not None:
        rng_iv(streams, "fixed_confidence_runs streams")
        stream = _Streams(arms, R, streams)
        first = stream.take(np.arange(R)[:, None, None], np.arange(N)[:, None], np.arange(initial))
    else:
        first = draw(arms, np.broadcast_to(np.arange(N)[:, None], (R, N, initial)), rng)
    y = _transform(first, logit, "any")
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
        y = _transform(scores, logit, "any")
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
