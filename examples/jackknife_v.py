"""A jackknife bias-corrected V estimator of the expected maximum: a worked simstudy plug-in.

Why
---
V (Dodge et al. 2019) estimates ``theta_n = E[max of n scores]`` by the expected maximum of n draws *with
replacement* from the sample: ``V_n = sum_k ((k/B)^n - ((k-1)/B)^n) X_(k)``. It is a V-statistic, the
plug-in functional ``theta_n(F_hat)``, and is biased downward: a resample of n repeats scores, so its maximum
is smaller than that of n fresh draws. U (Tang et al. 2020), the matching U-statistic, is exactly unbiased but
more variable, and Dodge et al. (2021) find V's mean squared error the lowest of U, V and W.

Quenouille's jackknife removes the leading ``1/B`` term of a plug-in estimator's bias,
``E[T_B] = theta + a/B + O(1/B^2)``: with ``T_(-i)`` the estimator on the sample without score i and
``T_(.)`` their mean, ``T_jack = B T_B - (B - 1) T_(.)`` has bias ``O(1/B^2)`` (Efron and Tibshirani 1993,
ch. 10). At n = 2 the correction is exact: the jackknifed V is U (V_2 mixes U with the sample mean, weight
1/B, and the jackknife removes that term). For V the expansion holds for budgets small next to B; for n close to B the correction is partial
and the variance grows, so whether the jackknife improves V's MSE is a question of the budget -- the kind of
question simstudy's Figure 1 study answers with Monte Carlo standard errors.

How
---
Deleting one score from a sorted sample keeps it sorted, and the mean over i of the k-th order statistic of
the sample without score i is ``((B - k) X_(k) + k X_(k+1)) / B``. So ``T_(.)`` is V's weights for ``B - 1``
scores applied to those averages, and the whole estimator is one fixed weight matrix on the order
statistics, ``W = B W_V(B) - (B - 1) W_V(B - 1) M``: a matrix product per block of replicates, as fast as the
built-in V. V's weights for B - 1 scores are defined for every budget (here up to n = B): a resample may be
larger than its sample.

Contract (simstudy.plugins): ``jackknife_v(sorted_scores, n)`` with ``sorted_scores`` float64 ``(reps, B)``,
ascending rows, and ``n`` int ``(N,)`` in 1..B; returns ``(reps, N)``.

Run it: ``simstudy experiment=dodge2021_fig1 '+estimators.jackknife._target_=jackknife_v.jackknife_v'`` in
this directory (``run_my_estimator.py`` runs Figures 1 and 2).
"""

from functools import lru_cache

import numpy as np

__all__ = ["jackknife_v", "jackknife_weights"]


def _v_weights(m: int, n: np.ndarray) -> np.ndarray:
    """V's weights for a sample of ``m`` scores at budgets ``n`` (any n >= 1); shape (N, m)."""
    k = np.arange(1, m + 1, dtype=np.float64)
    nn = n.astype(np.float64)[:, None]
    # (k/m)^n - ((k-1)/m)^n = (k/m)^n (1 - (1 - 1/k)^n), without cancellation (k = 1: log1p(-1) = -inf, exact)
    with np.errstate(divide="ignore"):
        return np.exp(nn * np.log(k / m)) * -np.expm1(nn * np.log1p(-1.0 / k))


@lru_cache(maxsize=32)
def _weights(B: int, n: tuple[int, ...]) -> np.ndarray:
    n_arr = np.asarray(n, dtype=np.int64)
    if B == 1:  # no sample to delete a score from: V itself
        return np.ones((n_arr.size, 1))
    k = np.arange(1, B, dtype=np.float64)
    M = np.zeros((B - 1, B))  # mean over the deleted score of the k-th order statistic of the rest
    M[np.arange(B - 1), np.arange(B - 1)] = (B - k) / B
    M[np.arange(B - 1), np.arange(1, B)] = k / B
    W = B * _v_weights(B, n_arr) - (B - 1) * _v_weights(B - 1, n_arr) @ M
    W.flags.writeable = False
    return W


def jackknife_weights(B: int, n) -> np.ndarray:
    """The jackknife-corrected V as weights on the ascending order statistics; shape (len(n), B).

    Each row sums to 1 (the estimator is equivariant under shifts of the scores).

    Example
    -------
    >>> import numpy as np
    >>> W = jackknife_weights(3, [1, 3])
    >>> np.round(W.sum(axis=1), 12).tolist(), np.round(W[0], 12).tolist()   # n = 1: the sample mean
    ([1.0, 1.0], [0.333333333333, 0.333333333333, 0.333333333333])
    """
    return _weights(int(B), tuple(int(k) for k in np.atleast_1d(n)))


def jackknife_v(sorted_scores: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The jackknife bias-corrected V at budgets ``n`` for each sorted sample.

    Parameters
    ----------
    sorted_scores : ndarray, shape (reps, B)
        Samples of B scores, each row ascending.
    n : ndarray of int, shape (N,)
        Budgets in 1..B.

    Returns
    -------
    ndarray, shape (reps, N)
        Estimates of the expected maximum of n scores, in score units.

    Example
    -------
    >>> import numpy as np
    >>> jackknife_v(np.array([[0.2, 0.5, 0.9]]), np.array([1, 2, 3])).round(4)   # n = 2: U's value exactly
    array([[0.5333, 0.7667, 0.8944]])
    """
    return sorted_scores @ jackknife_weights(sorted_scores.shape[1], n).T
