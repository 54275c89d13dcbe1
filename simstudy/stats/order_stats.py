"""Exact first and second moments of the order statistics of a sample from a finite population.

A finite population (a bag of scores, a public benchmark's every configuration and seed) has atoms
``v_1 < ... < v_K`` with probabilities ``p_k`` and CDF ``F_k = p_1 + ... + p_k``. For a sample of B draws, let
``N_k`` be how many draws are at most ``v_k``; then, with the gaps ``g_k = v_{k+1} - v_k``,

    X_(i) = v_1 + sum_{k<K} g_k 1{N_k < i},        i = 1..B.

Means follow from ``N_k ~ Binomial(B, F_k)``. Covariances need the pairs ``(N_k, N_l)``; summing over every
pair of atoms costs ``K^2``, which is out of reach for a population of 10^5 distinct scores. But the counts
form a Markov chain in k: ``N_{k+1} = N_k + Binomial(B - N_k, p_{k+1} / (1 - F_k))``. So the cross terms of
``Cov(X_(i), X_(j)) = sum_k sum_l g_k g_l Cov(1{N_k < i}, 1{N_l < j})`` are accumulated backwards over the
atoms, through ``H_k[a, j] = E[sum_{l>k} g_l (1{N_l < j} - P(N_l < j)) | N_k = a]``, one (B+1) x (B+1)
transition matrix per atom: O(K B^3) time and O(B^2) memory, exact up to rounding (no Monte Carlo, no
quadrature).

Every closed-form estimator of the expected best of n trials is linear in the order statistics
(:mod:`simstudy.stats.estimators`: ``T = W @ X_(.)``), so its exact mean is ``W @ mean`` and its exact
variance ``W @ cov @ W.T`` (:func:`estimator_moments`): exact bias and RMSE on a finite population.

=================================  ===============================================================================
:func:`order_statistic_moments`    ``E[X_(i)]`` and ``Cov(X_(i), X_(j))`` for a sample of B draws of a finite law
:func:`estimator_moments`          exact mean and standard deviation of the U, V, W estimators of the best of n
=================================  ===============================================================================

References
----------
Arnold, B. C., Balakrishnan, N. & Nagaraja, H. N. (2008). A First Course in Order Statistics (SIAM
Classics), ch. 3: order statistics of discrete distributions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simstudy.stats import estimators

__all__ = ["OrderStatisticMoments", "order_statistic_moments", "estimator_moments"]

# Transition matrices built at once (each (B+1)^2 float64): bounds the memory of one block.
_BLOCK_ELEMENTS = 2**21


@dataclass(frozen=True)
class OrderStatisticMoments:
    """The exact moments of the order statistics of B draws from a finite population (what
    :func:`order_statistic_moments` returns).

    Parameters
    ----------
    mean : numpy.ndarray
        ``E[X_(i)]``, shape ``(B,)``, ascending, in score units.
    cov : numpy.ndarray
        ``Cov(X_(i), X_(j))``, shape ``(B, B)``, symmetric, in squared score units.

    Examples
    --------
    >>> m = order_statistic_moments([0.0, 1.0], [0.5, 1.0], 1)  # one draw: a fair coin
    >>> np.round(m.mean, 12).tolist(), np.round(m.cov, 12).tolist()
    ([0.5], [[0.25]])
    """

    mean: np.ndarray
    cov: np.ndarray


def _population_iv(atoms, cum_prob, B) -> tuple[np.ndarray, np.ndarray, int]:
    v = np.asarray(atoms, dtype=np.float64)
    F = np.asarray(cum_prob, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or F.shape != v.shape:
        raise ValueError(f"atoms and cum_prob must be 1-d of one length >= 1, got shapes {v.shape} and {F.shape}")
    if not (np.all(np.isfinite(v)) and np.all(np.diff(v) > 0)):
        raise ValueError("atoms must be finite and strictly increasing")
    if not (np.all(np.diff(F) > 0) and F[0] > 0 and F[-1] == 1.0):
        raise ValueError("cum_prob must increase strictly from a positive value to exactly 1")
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 1:
        raise ValueError(f"B must be an integer >= 1, got {B!r}")
    return v, F, int(B)


def _binomial_pmfs(B: int, F: np.ndarray) -> np.ndarray:
    """``P(Binomial(B, F_k) = a)`` for each F_k (rows) and a = 0..B (columns), by a stable recurrence."""
    from scipy import stats  # on use: the audits' path only

    return stats.binom.pmf(np.arange(B + 1)[None, :], B, F[:, None])


class _Transitions:
    """The transition matrices of the counts, ``P[s, a, b] = P(N_{k+1} = b | N_k = a)``, where ``b - a`` is
    Binomial(B - a, r_s): ``C(B - a, b - a) r^(b - a) (1 - r)^(B - b)``, built from one table of binomial
    coefficients and each r's powers (no exponentials of (B+1)^2 logarithms per atom)."""

    def __init__(self, B: int):
        from scipy.special import gammaln  # on use: the audits' path only

        a = np.arange(B + 1)
        m = a[None, :] - a[:, None]  # b - a
        self.up = np.where(m >= 0, m, 0)  # r's power; 0 below the diagonal (masked by choose = 0)
        self.down = np.broadcast_to(B - a, (B + 1, B + 1))  # (1 - r)'s power, B - b
        n = (B - a)[:, None].astype(np.float64)
        with np.errstate(invalid="ignore"):
            log_choose = gammaln(n + 1.0) - gammaln(self.up + 1.0) - gammaln(n - self.up + 1.0)
        self.choose = np.where(m >= 0, np.exp(log_choose), 0.0)
        self.powers = a.astype(np.float64)

    def __call__(self, r: np.ndarray) -> np.ndarray:
        """``(len(r), B+1, B+1)`` matrices for the thinning probabilities ``r``, each in [0, 1]."""
        rp = r[:, None] ** self.powers  # (S, B+1): r^m, with 0^0 = 1
        qp = (1.0 - r)[:, None] ** self.powers  # (1 - r)^m
        return self.choose[None] * rp[:, self.up] * qp[:, self.down]


def order_statistic_moments(atoms, cum_prob, B: int) -> OrderStatisticMoments:
    """The exact means and covariances of the B order statistics of B draws from a finite population.

    Parameters
    ----------
    atoms : array_like
        The population's distinct values ``v_1 < ... < v_K``, shape ``(K,)``, finite, in score units.
    cum_prob : array_like
        ``F_k = P(X <= v_k)``, shape ``(K,)``, strictly increasing, the last exactly 1 (a
        :class:`~simstudy.distributions.Bag`'s ``cum_prob``).
    B : int
        The sample size, ``>= 1``.

    Returns
    -------
    OrderStatisticMoments
        ``mean`` ``(B,)`` and ``cov`` ``(B, B)``.

    Raises
    ------
    ValueError
        If the atoms are not finite and strictly increasing, ``cum_prob`` not a CDF ending at 1, or ``B < 1``.

    Notes
    -----
    Time O(K B^3) (one ``(B+1) x (B+1)`` by ``(B+1) x B`` product per atom) and memory O(B^2) plus a block of
    transition matrices; about 10 s for K = 10^5 atoms at B = 96 on one core.

    Examples
    --------
    Two draws from {0, 1} with probability 1/2 each: the minimum is 1 with probability 1/4, the maximum with
    probability 3/4, and the two are positively correlated (both 1 with probability 1/4):

    >>> m = order_statistic_moments([0.0, 1.0], [0.5, 1.0], 2)
    >>> np.round(m.mean, 12).tolist(), np.round(m.cov, 12).tolist()
    ([0.25, 0.75], [[0.1875, 0.0625], [0.0625, 0.1875]])
    """
    v, F, B = _population_iv(atoms, cum_prob, B)
    K = v.size
    if K == 1:
        return OrderStatisticMoments(np.full(B, v[0]), np.zeros((B, B)))
    g = np.diff(v)  # (K-1,) gaps; threshold t is "at most v_t", t = 0..K-2
    p = np.diff(F)  # p_{t+1}
    tail = np.cumsum(p[::-1])[::-1]  # P(X > v_t), summed from the top: no cancellation near F = 1
    transitions = _Transitions(B)
    below = (np.arange(B + 1)[:, None] < np.arange(1, B + 1)[None, :]).astype(np.float64)  # 1{a < i}, (B+1, B)
    # Backwards over the thresholds, in blocks (each block's binomial laws and transition matrices at once):
    # the means, the same-threshold covariances sum_t g_t^2 s_i u_j (i <= j, u = P(N_t >= j) = 1 - s_j summed
    # from the upper tail: a huge gap, say a diverged loss, with s near 1 keeps its digits), and the cross terms
    # through H_t = P_t (g_{t+1} phi_{t+1} + H_{t+1}), H_{K-2} = 0, with the centred indicator
    # phi(a, j) = 1{a < j} - s_j written as u_j where a < j and -s_j elsewhere (no difference of near-equals).
    mean_gaps = np.zeros(B)  # sum_t g_t P(N_t < i): E[X_(i)] = v_1 + this = v_K - the same over P(N_t >= i)
    mean_gaps_top = np.zeros(B)
    same = np.zeros((B, B))  # sum_t g_t^2 s_i u_j
    H = np.zeros((B + 1, B))
    A = np.zeros((B + 1, B))  # sum_t g_t pi_t(a) H_t[a, j]; its cumulative sum over a is the cross term
    X, term = np.empty((B + 1, B)), np.empty((B + 1, B))
    step = max(1, _BLOCK_ELEMENTS // (B + 1) ** 2)
    hi = K - 1  # thresholds lo..hi-1 per block
    s_next: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))  # s and P(N >= i) just above the block
    while hi > 0:
        lo = max(0, hi - step)
        pi = _binomial_pmfs(B, F[lo:hi])  # (hi - lo, B+1): law of N_t
        s = np.cumsum(pi, axis=1)[:, :B]  # P(N_t < i), i = 1..B
        at_least = np.cumsum(pi[:, ::-1], axis=1)[:, ::-1][:, 1:]  # P(N_t >= i), i = 1..B, from the top
        gb = g[lo:hi]
        mean_gaps += gb @ s
        mean_gaps_top += gb @ at_least
        same += (s * (gb * gb)[:, None]).T @ at_least
        P = transitions(np.clip(p[lo:hi] / tail[lo:hi], 0.0, 1.0))  # P[u - lo]: from N_u to N_{u+1}
        for u in range(hi - 1, lo - 1, -1):
            if u + 1 < K - 1:  # H_u from H_{u+1} (H_{K-2} = 0)
                s_up, u_up = (s[u + 1 - lo], at_least[u + 1 - lo]) if u + 1 < hi else s_next
                np.multiply(g[u + 1], np.where(below, u_up, -s_up), out=X)
                X += H
                np.matmul(P[u - lo], X, out=H)
                np.multiply(H, (g[u] * pi[u - lo])[:, None], out=term)
                A += term
        s_next = (s[0], at_least[0])
        hi = lo
    # From whichever end adds up less: the best of many draws from the top, so that a huge gap at the bottom (a
    # diverged loss, mirrored) does not cost its digits.
    mean = np.where(abs(v[0]) + mean_gaps <= abs(v[-1]) + mean_gaps_top, v[0] + mean_gaps, v[-1] - mean_gaps_top)
    upper = np.triu(same)  # i <= j: Cov(1{N < i}, 1{N < j}) = s_i (1 - s_j)
    cov = upper + np.triu(same, 1).T
    # sum_t g_t sum_{a < i} pi_t(a) H_t[a, j]: the centring of 1{N_t < i} drops out, since E[H_t(N_t)] = 0 --
    # which also makes it minus the sum over a >= i: of the two, the one that adds up less mass, to keep digits.
    forward = np.cumsum(A, axis=0)[:B]
    backward = -np.cumsum(A[::-1], axis=0)[::-1][1:]
    mass = np.cumsum(np.abs(A), axis=0)
    M = np.where(mass[:B] <= mass[-1] - mass[:B], forward, backward)
    cov = cov + M + M.T
    cov = 0.5 * (cov + cov.T)  # exactly symmetric (the products above are so only up to rounding)
    return OrderStatisticMoments(mean, cov)


def estimator_moments(atoms, cum_prob, B: int, n, methods=("u", "v", "w")) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The exact mean and standard deviation of each closed-form estimator of the expected best of n.

    Parameters
    ----------
    atoms, cum_prob : array_like
        The finite population, as for :func:`order_statistic_moments`.
    B : int
        The sample size (trials of one search), ``>= 1``.
    n : int or array_like of int
        The budgets, each in ``1..B``.
    methods : sequence of str, default ("u", "v", "w")
        Closed-form estimators of :data:`simstudy.stats.estimators.CLOSED_FORM`.

    Returns
    -------
    dict
        Method to ``(mean, sd)``, each of shape ``(len(n),)``: the exact expectation and standard deviation of
        the estimate over samples of B draws; bias is ``mean - truth.expected_max(n)`` and RMSE
        ``sqrt(sd**2 + bias**2)``.

    Examples
    --------
    U is unbiased: with two draws from {0, 1}, its estimate of the best of 2 is the sample maximum, mean 3/4:

    >>> out = estimator_moments([0.0, 1.0], [0.5, 1.0], 2, [1, 2], methods=("u",))
    >>> np.round(out["u"][0], 4).tolist(), np.round(out["u"][1], 4).tolist()
    ([0.5, 0.75], [0.3536, 0.433])
    """
    m = order_statistic_moments(atoms, cum_prob, B)
    out = {}
    for method in methods:
        W = estimators.weights(B, method, n)  # (len(n), B)
        var = np.einsum("ji,ik,jk->j", W, m.cov, W)
        out[method] = (W @ m.mean, np.sqrt(np.maximum(var, 0.0)))
    return out
