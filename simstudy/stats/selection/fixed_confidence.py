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

For simulation studies :func:`~simstudy.stats.selection.fixed_confidence_runs.fixed_confidence_runs` (in
:mod:`simstudy.stats.selection.fixed_confidence_runs`) runs many selections at once, vectorized across runs,
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
from simstudy.stats.posterior import posterior, prob_best, prob_best_mc
from simstudy.stats.selection._arms import arms_iv, best_of, evaluator

__all__ = [
    "ConfidenceResult",
    "ttts",
    "non_adaptive_confidence",
    "batch_thompson",
    "FIXED_CONFIDENCE_ALGORITHMS",
    "PI_METHODS",
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


def transform(values: np.ndarray, logit: bool, arm) -> np.ndarray:
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


def confidence_iv(arms, delta, initial, max_evaluations, batch=1, pi_method="quadrature", mc_draws=1) -> np.ndarray:
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
    confidence_iv(arms, delta, initial, max_evaluations, batch, pi_method, mc_draws)
    rng_iv(rng, "the selection")
    evaluate = [evaluator(a, i) for i, a in enumerate(arms)]
    N = len(evaluate)
    sums, squares, raw, counts = np.zeros(N), np.zeros(N), np.zeros(N), np.zeros(N, dtype=np.int64)

    def add(m: int, count: int) -> None:
        values = evaluate[m](count, rng)
        y = transform(values, logit, m)
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
