"""Monte Carlo performance measures with their Monte Carlo standard errors (Morris, White & Crowther 2019).

Replicates arrive in chunks and must be summarised in bounded memory, bit-identically however the chunks
were scheduled. So a chunk is reduced to additive sufficient statistics: for each budget n, the Gram matrix
``G = sum_r phi_r phi_r^T`` of the feature vector

    phi = (1, d_1, d_1^2, d_2, d_2^2, ..., d_E, d_E^2),    d_e = theta_hat_e - theta   (error of estimator e)

(:func:`moment_gram`). Gram matrices of chunks add (:func:`numpy.add` in chunk order is deterministic), and
every measure below, with its MCSE and the *paired* comparisons of estimators on common random numbers, is a
function of the summed ``G`` (:func:`performance`). Errors are taken about the exact truth, so the raw
moments are small and centring them costs no precision.

Measures (per estimator e and budget n; N replicates):

=============  ==================================  =====================================================
measure        estimate                            MCSE
=============  ==================================  =====================================================
``mean``       mean of theta_hat                    ``sqrt(S^2 / N)``
``bias``       mean(d)                              ``sqrt(S^2 / N)``
``variance``   ``S^2``, the empirical variance      ``sqrt((m4 - S^4 (N-3)/(N-1)) / N)`` (no normality)
``empse``      ``S``                                delta method: ``MCSE(S^2) / (2 S)``
``mse``        mean(d^2)                            ``sqrt(var(d^2) / N)``
=============  ==================================  =====================================================

Paired differences ``e - f`` (same samples): ``bias`` (mean of ``d_e - d_f``), ``variance``
(``S_e^2 - S_f^2``, MCSE from the per-replicate ``(d_e - m_e)^2 - (d_f - m_f)^2``) and ``mse`` (mean of
``d_e^2 - d_f^2``), each with the MCSE of its paired per-replicate quantity, which is much smaller than the
unpaired MCSEs combined when the estimators are correlated.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = ["moment_gram", "centre_gram", "Performance", "performance", "clopper_pearson"]


def moment_gram(errors: np.ndarray, *, scratch: np.ndarray | None = None) -> np.ndarray:
    """Sufficient statistics of a chunk of replicates.

    Parameters
    ----------
    errors : ndarray, shape (N, E, reps)
        ``theta_hat - theta`` for each budget, estimator and replicate (replicates last and contiguous: the
        sums over them are the hot loop).
    scratch : ndarray, shape (N, E, reps), optional
        Reused memory for the squared errors (avoids a fresh allocation per call on hot paths).

    Returns
    -------
    ndarray, shape (N, 1 + 2E, 1 + 2E)
        ``G[n] = sum_r phi_{n,r} phi_{n,r}^T`` with ``phi = (1, d_1, d_1^2, ..., d_E, d_E^2)``.
    """
    N, E, reps = errors.shape
    d = np.ascontiguousarray(errors, dtype=np.float64)
    q = np.multiply(d, d, out=scratch)
    # Only 3 blocks of distinct products exist (d.d, d.q, q.q; d_e.d_e = 1.q_e); vecdot reduces each over
    # the contiguous replicate axis without materialising the (reps x features) outer products.
    dd = np.vecdot(d[:, :, None], d[:, None])
    dq = np.vecdot(d[:, :, None], q[:, None])
    qq = np.vecdot(q[:, :, None], q[:, None])
    lin, sq = 1 + 2 * np.arange(E), 2 + 2 * np.arange(E)
    G = np.empty((N, 1 + 2 * E, 1 + 2 * E))
    G[:, 0, 0] = reps
    G[:, 0, lin] = G[:, lin, 0] = d.sum(axis=-1)
    G[:, 0, sq] = G[:, sq, 0] = q.sum(axis=-1)
    G[:, lin[:, None], lin] = dd
    G[:, lin[:, None], sq] = dq
    G[:, sq[:, None], lin] = dq.transpose(0, 2, 1)
    G[:, sq[:, None], sq] = qq
    return G


def centre_gram(G: np.ndarray) -> np.ndarray:
    """The Gram matrix of the *centred* features ``(1, d_e - m_e, (d_e - m_e)^2, ...)``.

    Centring is linear in ``phi`` (``(d - m)^2 = d^2 - 2 m d + m^2``), so the centred Gram matrix is
    ``T G T^T`` with ``T`` built from the sample means ``m_e``. Shape as ``G``.
    """
    N_reps = G[:, 0, 0]
    m = G[:, 0, 1::2] / N_reps[:, None]  # (N, E) sample means of d_e
    K = G.shape[-1]
    T = np.broadcast_to(np.eye(K), G.shape).copy()
    E = m.shape[1]
    for e in range(E):
        lin, sq = 1 + 2 * e, 2 + 2 * e
        T[:, lin, 0] = -m[:, e]
        T[:, sq, 0] = m[:, e] ** 2
        T[:, sq, lin] = -2.0 * m[:, e]
    return T @ G @ T.transpose(0, 2, 1)


@dataclass(frozen=True)
class Performance:
    """Performance measures of E estimators at N budgets from R replicates.

    Attributes
    ----------
    measures : dict[str, tuple[ndarray, ndarray]]
        ``name -> (estimate, mcse)``, each of shape (E, N): ``mean``, ``bias``, ``variance``, ``empse``,
        ``mse``.
    paired : dict[str, tuple[ndarray, ndarray]]
        ``name -> (estimate, mcse)``, each of shape (P, N) for the pairs in :attr:`pairs`: ``bias``,
        ``variance``, ``mse`` of ``e - f``.
    pairs : tuple[tuple[int, int], ...]
        ``(e, f)`` index pairs, ``f < e``: the difference is estimator e minus estimator f.
    reps : int
        R, the number of replicates.
    """

    measures: dict
    paired: dict
    pairs: tuple
    reps: int


def performance(G: np.ndarray, truth: np.ndarray) -> Performance:
    """All measures, with MCSEs, from the summed Gram matrices of :func:`moment_gram`.

    Parameters
    ----------
    G : ndarray, shape (N, 1 + 2E, 1 + 2E)
        Summed over every chunk.
    truth : ndarray, shape (N,)
        The estimand theta_n the errors were taken about (to report the mean estimate).
    """
    R = G[0, 0, 0]
    if not np.all(G[:, 0, 0] == R) or R < 2:
        raise ValueError(f"need the same number (>= 2) of replicates at every budget, got {G[:, 0, 0]}")
    E = (G.shape[-1] - 1) // 2
    lin, sq = 1 + 2 * np.arange(E), 2 + 2 * np.arange(E)
    C = centre_gram(G)
    raw = lambda i, j: G[:, i, j].T / R  # noqa: E731 -- (E, N) moment E[phi_i phi_j]
    cen = lambda i, j: C[:, i, j].T / R  # noqa: E731

    bias = raw(0, lin)
    m2 = cen(lin, lin)  # central 2nd moment (divisor R)
    m4 = cen(sq, sq)  # central 4th moment
    var = m2 * R / (R - 1)
    var_mcse = np.sqrt(np.clip(m4 - var**2 * (R - 3) / (R - 1), 0.0, None) / R)
    se_mean = np.sqrt(var / R)
    mse = raw(0, sq)
    mse_var = (raw(sq, sq) - mse**2) * R / (R - 1)
    empse = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        empse_mcse = np.where(empse > 0, var_mcse / (2 * empse), 0.0)
    measures = {
        "mean": (truth[None, :] + bias, se_mean),
        "bias": (bias, se_mean),
        "variance": (var, var_mcse),
        "empse": (empse, empse_mcse),
        "mse": (mse, np.sqrt(np.clip(mse_var, 0.0, None) / R)),
    }

    pairs = tuple((e, f) for f, e in combinations(range(E), 2))
    paired: dict[str, tuple] = {k: ([], []) for k in ("bias", "variance", "mse")}
    for e, f in pairs:
        le, lf, se_, sf = lin[e], lin[f], sq[e], sq[f]
        # bias: d_e - d_f
        var_d = (cen(le, le) + cen(lf, lf) - 2 * cen(le, lf)) * R / (R - 1)
        _append(paired["bias"], bias[e] - bias[f], np.sqrt(np.clip(var_d, 0.0, None) / R))
        # variance: per replicate (d_e - m_e)^2 - (d_f - m_f)^2
        z_mean = m2[e] - m2[f]
        z_var = (m4[e] + m4[f] - 2 * cen(se_, sf) - z_mean**2) * R / (R - 1)
        _append(paired["variance"], var[e] - var[f], np.sqrt(np.clip(z_var, 0.0, None) / R))
        # mse: d_e^2 - d_f^2
        w_mean = mse[e] - mse[f]
        w_var = (raw(se_, se_) + raw(sf, sf) - 2 * raw(se_, sf) - w_mean**2) * R / (R - 1)
        _append(paired["mse"], w_mean, np.sqrt(np.clip(w_var, 0.0, None) / R))
    N = G.shape[0]
    paired = {k: (np.reshape(v[0], (len(pairs), N)), np.reshape(v[1], (len(pairs), N))) for k, v in paired.items()}
    return Performance(measures=measures, paired=paired, pairs=pairs, reps=int(R))


def _append(acc, est, mcse) -> None:
    acc[0].append(est)
    acc[1].append(mcse)


def clopper_pearson(successes, trials, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) confidence interval for a binomial proportion, elementwise.

    Returns ``(low, high)`` arrays: the ``(1 - confidence) / 2`` quantile of Beta(k, n - k + 1) and the
    ``(1 + confidence) / 2`` quantile of Beta(k + 1, n - k), with 0 and 1 at the edges.
    """
    from scipy import stats

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return low, high
