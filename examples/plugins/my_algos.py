"""Selection algorithms of one's own, for the plug-ins guide (docs/guides/plugins.md).

Copy this file into the directory you run ``simstudy`` from, then list a function in ``study.algorithms``::

    simstudy experiment=fiesta_fig4 'study.algorithms=[sequential_halving,my_algos.successive_rejects]'
    simstudy experiment=fiesta_table2 'study.algorithms=[ttts,my_algos.propose_greedy]'

The contracts (``simstudy.stats.selection``): a fixed-budget algorithm runs whole selections,
``f(arms, budget, runs, *, rng) -> (picks, evaluations)``; a fixed-confidence algorithm is one proposal step,
``propose(loc, scale, df, *, rng) -> which``, and simstudy keeps the posterior, the stopping rule and the cap.
Every random number, the arms' evaluations included, comes from ``rng``.
"""

import numpy as np

__all__ = ["successive_rejects", "propose_greedy"]


def _pick(values, allowed, rng):
    """Per row, the index of the largest of ``values`` among ``allowed``, ties broken uniformly at random."""
    v = np.where(allowed, values, -np.inf)
    tied = allowed & (v == v.max(axis=1, keepdims=True))
    return np.argmax(np.where(tied, rng.random(v.shape), -1.0), axis=1)


def successive_rejects(arms, budget, runs, *, rng):
    """Successive Rejects (Audibert & Bubeck 2010), ``runs`` independent selections at once.

    With K arms and budget T, phase k = 1..K-1 brings every arm still in to
    ``n_k = ceil((T - K) / (logbar(K) (K + 1 - k)))`` evaluations, ``logbar(K) = 1/2 + sum_{i=2..K} 1/i``,
    then rejects the arm with the lowest mean; the last arm left is picked. The schedule spends at most T
    (``n_1 + ... + n_{K-1} + n_{K-1} <= T``), the same in every run; which arms are rejected differs.

    Parameters
    ----------
    arms : sequence of N >= 2 distributions
        Each with ``sample(size, rng=...)`` returning float64 scores of shape ``size``.
    budget : int
        The most evaluations one run may spend; at least N.
    runs : int
        How many independent selections R to run.
    rng : numpy.random.Generator, keyword-only
        Every evaluation and tie-break is drawn from it.

    Returns
    -------
    picks : ndarray of int64, shape (runs,)
        The index in ``[0, N)`` of the arm each run selects.
    evaluations : ndarray of int64, shape (runs, N)
        The evaluations each run spent on each arm; each row sums to at most ``budget``.

    Raises
    ------
    ValueError
        If there are fewer than 2 arms or ``budget < N``.

    References
    ----------
    Audibert, J.-Y., & Bubeck, S. (2010). Best arm identification in multi-armed bandits. COLT 2010.

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag([0.1, 0.2]), Bag([0.4, 0.5]), Bag([0.8, 0.9])]
    >>> picks, evaluations = successive_rejects(arms, 12, 2, rng=np.random.default_rng(0))
    >>> picks.tolist(), evaluations.sum(axis=1).tolist()
    ([2, 2], [11, 11])
    """
    K = len(arms)
    if K < 2 or budget < K:
        raise ValueError(
            f"successive_rejects needs at least 2 arms and a budget of one evaluation each, got {K} arms and budget={budget}"
        )
    logbar = 0.5 + np.sum(1.0 / np.arange(2, K + 1))
    phases = np.ceil((budget - K) / (logbar * (K + 1 - np.arange(1, K)))).astype(np.int64)  # n_1..n_{K-1}
    phases = np.maximum(phases, 1)  # one evaluation of each arm at least (n_k = 0 only when budget = K)
    sums = np.zeros((runs, K))
    evaluations = np.zeros((runs, K), dtype=np.int64)
    alive = np.ones((runs, K), dtype=bool)
    done = 0
    for n_k in phases:
        for i, arm in enumerate(arms):
            rows = np.flatnonzero(alive[:, i])
            if n_k > done and rows.size:
                sums[rows, i] += arm.sample((rows.size, n_k - done), rng=rng).sum(axis=1)
                evaluations[rows, i] = n_k
        done = n_k
        worst = _pick(-sums / np.maximum(evaluations, 1), alive, rng)  # the lowest mean among the arms still in
        alive[np.arange(runs), worst] = False
    return np.argmax(alive, axis=1), evaluations


def propose_greedy(loc, scale, df, *, rng):
    """The greedy proposal: evaluate, in every run, the arm with the highest posterior mean.

    Pure exploitation: the posterior mean of a t posterior is its ``loc``, and ties are broken uniformly at
    random. It never evaluates an arm that looks worse, so the others keep the wide posteriors of their first
    evaluations and the stopping rule ``P(leader is best) > 1 - delta`` is seldom met: on the TDSA models
    (``experiment=fiesta_table2``) the runs end at the ``max_evaluations`` cap. A baseline showing that, under
    one stopping rule, the proposal decides when a run can stop.

    Parameters
    ----------
    loc, scale, df : ndarray of float64, shape (R, N)
        The t posterior of every arm's mean score in each of the R runs still going,
        ``mean = loc + scale * t_df``.
    rng : numpy.random.Generator, keyword-only
        Breaks ties.

    Returns
    -------
    which : ndarray of int64, shape (R, 1)
        The arm each run evaluates next.

    Examples
    --------
    >>> loc = np.array([[0.2, 0.7, 0.5], [0.9, 0.1, 0.3]])
    >>> propose_greedy(loc, np.ones((2, 3)), np.full((2, 3), 1.0), rng=np.random.default_rng(0))
    array([[1],
           [0]])
    """
    return _pick(loc, np.ones(loc.shape, dtype=bool), rng)[:, None]
