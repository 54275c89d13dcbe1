"""Plug-in estimators of the expected maximum, for the plug-ins guide (docs/guides/plugins.md).

Copy this file into the directory you run ``simstudy`` from, then name a function with ``_target_``::

    simstudy experiment=dodge2021_fig1 '+estimators.top._target_=my_estimators.best_of_all'
    simstudy experiment=dodge2021_fig1 '+estimators.top._target_=my_estimators.shrunk' +estimators.top.alpha=0.5

The contract (``simstudy.plugins``): ``f(sorted_scores, n, **kwargs) -> (reps, N)`` with ``sorted_scores``
float64 ``(reps, B)``, each row ascending and read-only, and ``n`` int64 ``(N,)`` with ``1 <= n <= B``; the
result is the estimated expected maximum of ``n[j]`` scores from each sample, finite and deterministic.
"""

import numpy as np

from simstudy.stats.estimators import expected_max

__all__ = ["best_of_all", "shrunk"]


def best_of_all(sorted_scores, n):
    """The sample maximum at every budget: a deliberately naive estimator (biased upward for n < B).

    Parameters
    ----------
    sorted_scores : ndarray of float64, shape (reps, B)
        Samples of B scores, each row ascending (read-only).
    n : ndarray of int64, shape (N,)
        Budgets, ``1 <= n <= B``.

    Returns
    -------
    ndarray of float64, shape (reps, N)
        The largest score of each sample, repeated for every budget.

    Examples
    --------
    >>> best_of_all(np.array([[0.2, 0.5, 0.9]]), np.array([1, 3]))
    array([[0.9, 0.9]])
    """
    return np.repeat(sorted_scores[:, -1:], len(n), axis=1)


def shrunk(sorted_scores, n, alpha=0.5):
    """V shrunk towards the sample mean: ``(1 - alpha) V_n + alpha * mean``.

    V (Dodge et al. 2019) is the expected maximum of n draws with replacement from the sample. The sample
    mean is the expected maximum of one draw, so shrinking towards it trades V's variance for a downward
    bias that grows with n: ``alpha = 0`` is V itself, ``alpha = 1`` the mean at every budget. An example
    of a tunable estimator (its ``alpha`` is a keyword argument next to ``_target_``), not a recommendation.

    Parameters
    ----------
    sorted_scores : ndarray of float64, shape (reps, B)
        Samples of B scores, each row ascending (read-only).
    n : ndarray of int64, shape (N,)
        Budgets, ``1 <= n <= B``.
    alpha : float, default 0.5
        The weight of the sample mean, in [0, 1].

    Returns
    -------
    ndarray of float64, shape (reps, N)
        The shrunk estimates, in score units.

    Raises
    ------
    ValueError
        If ``alpha`` is not in [0, 1].

    Examples
    --------
    >>> x = np.array([[0.2, 0.5, 0.9]])
    >>> shrunk(x, np.array([1, 3]), alpha=0.5).round(4)  # n = 1: V is the mean, whatever alpha
    array([[0.5333, 0.6519]])
    >>> shrunk(x, np.array([3]), alpha=0.0).round(4)  # alpha = 0: V
    array([[0.7704]])
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    v = expected_max(sorted_scores, "v", n=n, presorted=True)
    return (1.0 - alpha) * v + alpha * sorted_scores.mean(axis=1, keepdims=True)
