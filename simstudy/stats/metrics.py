"""Monte Carlo performance measures with their Monte Carlo standard errors (Morris, White & Crowther 2019).

Replicates arrive in chunks and must be summarised in bounded memory, bit-identically however the chunks
were scheduled. So a chunk is reduced to additive sufficient statistics: for each budget n, the Gram matrix
``G = sum_r phi_r phi_r^T`` of the feature vector

    phi = (1, d_1, d_1^2, d_2, d_2^2, ..., d_E, d_E^2),    d_e = theta_hat_e - theta   (error of estimator e)

(:func:`moment_gram`). Gram matrices of chunks add (:func:`numpy.add` in chunk order is deterministic), and
every measure below, with its MCSE and the *paired* comparisons of estimators on common random numbers, is a
function of the summed ``G`` (:func:`performance`). Errors are taken about the exact truth, so the raw
moments are small and centring them costs no precision.

Measures (per estimator e and budget n; R replicates):

=============  ==================================  =====================================================
measure        estimate                            MCSE
=============  ==================================  =====================================================
``mean``       mean of theta_hat                    ``sqrt(S^2 / R)``
``bias``       mean(d)                              ``sqrt(S^2 / R)``
``variance``   ``S^2``, the empirical variance      ``sqrt((m4 - S^4 (R-3)/(R-1)) / R)`` (no normality)
``empse``      ``S``                                delta method: ``MCSE(S^2) / (2 S)``
``mse``        mean(d^2)                            ``sqrt(var(d^2) / R)``
=============  ==================================  =====================================================

Across budgets (the joint Monte Carlo error of a curve over n, for simultaneous bands:
:mod:`simstudy.stats.joint`): :func:`cross_gram` is the same Gram matrix with the budgets in place of the
estimators, ``phi = (1, d_n1, d_n1^2, d_n2, d_n2^2, ...)`` per estimator, and :func:`curve_correlations` turns
it into the correlation across n of each measure's per-replicate influence values (``d`` for ``mean`` and
``bias``, ``(d - m)^2`` for ``variance`` and ``empse``, ``d^2`` for ``mse``).

Paired differences ``e - f`` (same samples): ``bias`` (mean of ``d_e - d_f``), ``variance``
(``S_e^2 - S_f^2``, MCSE from the per-replicate ``(d_e - m_e)^2 - (d_f - m_f)^2``) and ``mse`` (mean of
``d_e^2 - d_f^2``), each with the MCSE of its paired per-replicate quantity, which is much smaller than the
unpaired MCSEs combined when the estimators are correlated.

Coverage replicate by replicate, for the zip plot (Morris et al. 2019, §5.2;
:func:`simstudy.studies.zip_plots.zip_figure` draws it): :func:`interval_position` says where the truth sits
relative to each replicate's interval, ``position = max(lo - θ, θ - hi) / h`` with half-width
h = (hi - lo) / 2: -1 when θ is at the centre, 0 at an edge, > 0 outside (the distance beyond the nearer edge
in half-widths). ``position <= 0`` exactly when ``lo <= θ <= hi`` (the signs of the differences are exact in
floating point), so the coverage counted from positions equals the studies' own count bit for bit. For a Wald
interval estimate ± z·se it is ``|z_i| / z - 1``, Morris et al.'s ranking by ``|z_i|``; for a simultaneous band
it is the largest over the band's points (covered exactly when every point is). :func:`zip_centiles` ranks the
replicates by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = [
    "moment_gram",
    "centre_gram",
    "cross_gram",
    "curve_correlations",
    "Performance",
    "performance",
    "clopper_pearson",
    "format_estimate",
    "format_number",
    "interval_position",
    "zip_centiles",
]

# Relative rounding noise of a centred second moment (centre_gram's T G T^T: a few ulps of the raw moment).
_NOISE = 64 * np.finfo(np.float64).eps


def moment_gram(errors: np.ndarray, *, scratch: np.ndarray | None = None) -> np.ndarray:
    """Sufficient statistics of a chunk of replicates.

    Gram matrices of chunks add: ``moment_gram(a) + moment_gram(b)`` is the Gram matrix of the replicates of
    both chunks, and :func:`performance` turns the sum into every measure.

    Parameters
    ----------
    errors : ndarray of float, shape (N, E, reps)
        ``theta_hat - theta`` (score units) for each of N budgets, E estimators and ``reps`` replicates
        (replicates last and contiguous: the sums over them are the hot loop).
    scratch : ndarray of float64, shape (N, E, reps), keyword-only, optional
        Reused memory for the squared errors (avoids a fresh allocation per call on hot paths); overwritten.

    Returns
    -------
    ndarray of float64, shape (N, 1 + 2E, 1 + 2E)
        ``G[n] = sum_r phi_{n,r} phi_{n,r}^T`` with ``phi = (1, d_1, d_1^2, ..., d_E, d_E^2)``; ``G[n, 0, 0]``
        is the number of replicates.

    References
    ----------
    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    One budget, one estimator, errors 1, -1, 2: ``G = [[R, sum d, sum d^2], [sum d, sum d^2, sum d^3],
    [sum d^2, sum d^3, sum d^4]]``.

    >>> moment_gram(np.array([[[1.0, -1.0, 2.0]]]))[0].tolist()
    [[3.0, 2.0, 6.0], [2.0, 6.0, 8.0], [6.0, 8.0, 18.0]]
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
    ``T G T^T`` with ``T`` built from the sample means ``m_e``.

    Parameters
    ----------
    G : ndarray of float, shape (N, 1 + 2E, 1 + 2E)
        Gram matrices of :func:`moment_gram` (summed over chunks), one per budget.

    Returns
    -------
    ndarray of float64, shape (N, 1 + 2E, 1 + 2E)
        The Gram matrices of the centred features: divided by the number of replicates, the central
        moments (``C[n, 1, 1] / R`` is the variance with divisor R, ``C[n, 2, 2] / R`` the fourth moment).

    Examples
    --------
    Errors 1, -1, 2 have mean 2/3 and central second moment ``R m2 = 14/3``:

    >>> np.round(centre_gram(moment_gram(np.array([[[1.0, -1.0, 2.0]]])))[0], 4).tolist()
    [[3.0, 0.0, 4.6667], [0.0, 4.6667, -2.2222], [4.6667, -2.2222, 10.8889]]
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


def cross_gram(errors: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Sufficient statistics of a chunk across budgets: per estimator, the Gram matrix of every budget's features.

    The layout of :func:`moment_gram` with the roles of budgets and estimators swapped, so that
    :func:`centre_gram` applies; sums over chunks add. One batched matrix product (BLAS), E (2N + 1)^2
    multiply-adds per replicate.

    Parameters
    ----------
    errors : ndarray of float, shape (N, E, reps)
        ``theta_hat - theta`` (score units) for N budgets, E estimators and ``reps`` replicates.
    out : ndarray of float64, shape (E, 1 + 2N, reps'), keyword-only, optional
        Scratch for the features (``reps' >= reps``; overwritten), to reuse memory on hot paths.

    Returns
    -------
    ndarray of float64, shape (E, 1 + 2N, 1 + 2N)
        ``X[e] = sum_r psi_{e,r} psi_{e,r}^T`` with ``psi_e = (1, d_{e,1}, d_{e,1}^2, ..., d_{e,N}, d_{e,N}^2)``;
        ``X[e, 0, 0]`` is the number of replicates.

    Examples
    --------
    Two budgets, one estimator, errors (1, -1) at the first and (2, 0) at the second:

    >>> X = cross_gram(np.array([[[1.0, -1.0]], [[2.0, 0.0]]]))
    >>> X.shape, X[0, 0].tolist(), float(X[0, 1, 3])  # count and sums; sum of d_1 d_2 = 1 * 2 + (-1) * 0
    ((1, 5, 5), [2.0, 0.0, 2.0, 2.0, 4.0], 2.0)
    """
    N, E, reps = errors.shape
    F = np.empty((E, 1 + 2 * N, reps)) if out is None else out[:, :, :reps]
    F[:, 0] = 1.0
    F[:, 1::2] = errors.transpose(1, 0, 2)
    np.multiply(F[:, 1::2], F[:, 1::2], out=F[:, 2::2])
    return np.matmul(F, F.transpose(0, 2, 1))


def curve_correlations(X: np.ndarray) -> dict[str, np.ndarray]:
    """The correlation across budgets of each measure's Monte Carlo error, from a summed :func:`cross_gram`.

    A measure's estimate at n is (asymptotically) the mean of a per-replicate influence value, so the
    estimates' joint error across n has the correlation of those values: ``d_n`` for ``mean`` and ``bias``,
    ``(d_n - m_n)^2`` for ``variance`` (and ``empse``, a smooth function of it: the delta method keeps the
    correlation), ``d_n^2`` for ``mse``. A budget whose influence value did not vary gets correlation 0 with
    the others (the conservative choice: independence gives the widest simultaneous band).

    Parameters
    ----------
    X : ndarray of float, shape (E, 1 + 2N, 1 + 2N)
        :func:`cross_gram` summed over chunks (at least 2 replicates).

    Returns
    -------
    dict of str to ndarray of float64, shape (E, N, N)
        ``mean``, ``bias``, ``variance``, ``empse``, ``mse``: correlation matrices (ones on the diagonal).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(1, 1, 4000))
    >>> d = np.concatenate([z, z + rng.normal(size=(1, 1, 4000))])  # (N=2, E=1, R): correlation 1/sqrt(2) = 0.71
    >>> r = curve_correlations(cross_gram(d))
    >>> round(float(r["bias"][0, 0, 1]), 2), r["mse"].shape
    (0.7, (1, 2, 2))
    """
    R = X[:, 0, 0][:, None, None]
    lin, sq = slice(1, None, 2), slice(2, None, 2)
    md, mq = X[:, 0, lin] / R[:, 0], X[:, 0, sq] / R[:, 0]
    cov_d = X[:, lin, lin] / R - md[:, :, None] * md[:, None, :]
    cov_q = X[:, sq, sq] / R - mq[:, :, None] * mq[:, None, :]
    C = centre_gram(X)
    m2 = C[:, 0, sq] / R[:, 0]  # central second moments
    cov_v = C[:, sq, sq] / R - m2[:, :, None] * m2[:, None, :]
    out = {}
    for name, cov, second in (
        ("bias", cov_d, X[:, lin, lin] / R),
        ("variance", cov_v, C[:, sq, sq] / R),
        ("mse", cov_q, X[:, sq, sq] / R),
    ):
        var = np.diagonal(cov, axis1=1, axis2=2)
        # A variance within the rounding of its raw second moment: a constant influence value (cf. performance).
        live = var > _NOISE * np.diagonal(second, axis1=1, axis2=2)
        sd = np.sqrt(np.where(live, var, 1.0))
        corr = np.where(live[:, :, None] & live[:, None, :], cov / (sd[:, :, None] * sd[:, None, :]), 0.0)
        corr = np.clip((corr + corr.transpose(0, 2, 1)) / 2, -1.0, 1.0)
        idx = np.arange(corr.shape[-1])
        corr[:, idx, idx] = 1.0
        out[name] = corr
    out["mean"], out["empse"] = out["bias"], out["variance"]
    return {k: out[k] for k in ("mean", "bias", "variance", "empse", "mse")}


@dataclass(frozen=True)
class Performance:
    """Performance measures of E estimators at N budgets from R replicates.

    Returned by :func:`performance`; the measures and their Monte Carlo standard errors are those of Morris,
    White & Crowther (2019) (see the module docstring's table).

    Parameters
    ----------
    measures : dict of str to tuple of (ndarray, ndarray)
        ``name -> (estimate, mcse)``, each of shape (E, N): ``mean``, ``bias``, ``empse`` (score units),
        ``variance``, ``mse`` (squared score units).
    paired : dict of str to tuple of (ndarray, ndarray)
        ``name -> (estimate, mcse)``, each of shape (P, N) for the P pairs in ``pairs``: ``bias``,
        ``variance``, ``mse`` of ``e - f``.
    pairs : tuple of tuple of (int, int)
        ``(e, f)`` index pairs, ``f < e``, in the order of ``paired``'s rows: the difference is estimator e
        minus estimator f.
    reps : int
        R, the number of replicates.
    degenerate : ndarray of bool, shape (E, N), optional
        True where an estimator gave the same estimate in every replicate (a constant estimator, or a budget
        where it always picks the same score), as far as the Gram matrix can tell: a central second moment
        within the rounding of centring (``64 eps`` of the mean squared error, i.e. an SD below about 1.2e-7 of
        the RMS error). Its variance, empirical SE and every MCSE there are exact zeros, not rounding noise
        (which had made them NaN or -1.8e-18). None: not known.

    References
    ----------
    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    >>> G = moment_gram(np.array([[[1.0, -1.0, 2.0], [1.5, -0.5, 2.5]]]))  # 1 budget, 2 estimators, R = 3
    >>> p = performance(G, np.array([0.0]))
    >>> p.reps, p.pairs, sorted(p.measures), sorted(p.paired)
    (3, ((1, 0),), ['bias', 'empse', 'mean', 'mse', 'variance'], ['bias', 'mse', 'variance'])
    >>> est, mcse = p.paired["bias"]  # estimator 1 minus estimator 0: +0.5 on every replicate
    >>> round(float(est[0, 0]), 4), round(float(mcse[0, 0]), 4)
    (0.5, 0.0)
    """

    measures: dict
    paired: dict
    pairs: tuple
    reps: int
    degenerate: np.ndarray | None = None


def performance(G: np.ndarray, truth: np.ndarray) -> Performance:
    """All measures, with MCSEs, from the summed Gram matrices of :func:`moment_gram`.

    Parameters
    ----------
    G : ndarray of float, shape (N, 1 + 2E, 1 + 2E)
        The Gram matrices of :func:`moment_gram`, summed over every chunk of replicates: N budgets, E
        estimators.
    truth : ndarray of float, shape (N,)
        The estimand theta_n the errors were taken about, score units (to report the mean estimate).

    Returns
    -------
    Performance
        ``measures`` (``mean``, ``bias``, ``variance``, ``empse``, ``mse``, each ``(estimate, mcse)`` of
        shape (E, N)), ``paired`` differences for every pair of estimators (shape (P, N), P = E (E - 1) / 2),
        ``pairs``, ``reps`` and ``degenerate`` (where an estimator's estimates were all equal: exact zeros).

    Raises
    ------
    ValueError
        If the budgets have different numbers of replicates, or fewer than 2.

    References
    ----------
    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    An unbiased estimator with unit variance, and a copy shifted by 0.1, over R = 1000 replicates in two
    chunks; the MCSE of the bias is near ``1 / sqrt(1000) = 0.0316`` and that of the variance near
    ``sqrt(2 / 1000) = 0.0447``, while the paired bias is exactly 0.1 with MCSE 0:

    >>> rng = np.random.default_rng(0)
    >>> d = rng.normal(size=1000)
    >>> errors = np.stack([d, d + 0.1])[None]  # (N=1, E=2, R=1000)
    >>> G = moment_gram(errors[:, :, :600]) + moment_gram(errors[:, :, 600:])
    >>> p = performance(G, truth=np.array([0.8]))
    >>> [np.round(a, 4).ravel().tolist() for a in p.measures["bias"]]  # (estimates, MCSEs)
    [[-0.048, 0.052], [0.0309, 0.0309]]
    >>> [np.round(a, 4).ravel().tolist() for a in p.measures["variance"]]
    [[0.955, 0.955], [0.0457, 0.0457]]
    >>> [np.round(a, 4).ravel().tolist() for a in p.paired["bias"]]
    [[0.1], [0.0]]
    >>> performance(moment_gram(errors[:, :, :1]), np.array([0.8]))
    Traceback (most recent call last):
        ...
    ValueError: need the same number (>= 2) of replicates at every budget, got [1.]
    """
    R = G[0, 0, 0]
    if not np.all(G[:, 0, 0] == R) or R < 2:
        raise ValueError(f"need the same number (>= 2) of replicates at every budget, got {G[:, 0, 0]}")
    E = (G.shape[-1] - 1) // 2
    lin, sq = 1 + 2 * np.arange(E), 2 + 2 * np.arange(E)
    C = centre_gram(G)
    # Centring leaves rounding noise of a few ulps of E[d^2] (-1.8e-18 for a constant estimator, whose square
    # root was NaN). A central second moment within that noise is an estimator whose estimates were all equal:
    # its centred features (d - m, (d - m)^2) are 0 in every replicate, so their rows and columns of C are
    # exactly 0.
    flat = C[:, lin, lin] <= _NOISE * G[:, lin, lin]  # (N, E)
    for e in range(E):
        for i in (lin[e], sq[e]):
            C[flat[:, e], i, :] = 0.0
            C[flat[:, e], :, i] = 0.0
    raw = lambda i, j: G[:, i, j].T / R  # noqa: E731 -- (E, N) moment E[phi_i phi_j]
    cen = lambda i, j: C[:, i, j].T / R  # noqa: E731

    bias = raw(0, lin)
    m2 = cen(lin, lin)  # central 2nd moment (divisor R)
    m4 = cen(sq, sq)  # central 4th moment
    var = m2 * R / (R - 1)
    var_mcse = np.sqrt(np.clip(m4 - var**2 * (R - 3) / (R - 1), 0.0, None) / R)
    se_mean = np.sqrt(var / R)
    mse = raw(0, sq)
    mse_var = np.where(flat.T, 0.0, (raw(sq, sq) - mse**2) * R / (R - 1))  # d^2 is constant too
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
    return Performance(measures=measures, paired=paired, pairs=pairs, reps=int(R), degenerate=flat.T.copy())


def _append(acc, est, mcse) -> None:
    acc[0].append(est)
    acc[1].append(mcse)


def clopper_pearson(successes, trials, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) confidence interval for a binomial proportion, elementwise.

    The interval for a coverage estimated from ``trials`` replicates (e.g. the coverage of a confidence band
    in a simulation study); it is conservative: its coverage is at least ``confidence`` for every true p.

    Parameters
    ----------
    successes : array_like of int
        Number of successes k, in 0..n; any shape, broadcast with `trials`.
    trials : array_like of int
        Number of trials n, >= 1.
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1). Not validated.

    Returns
    -------
    low, high : ndarray of float64, shape of ``broadcast(successes, trials)``
        The ``(1 - confidence) / 2`` quantile of Beta(k, n - k + 1) and the ``(1 + confidence) / 2``
        quantile of Beta(k + 1, n - k), with 0 at k = 0 and 1 at k = n (probabilities).

    References
    ----------
    Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
    of the binomial. Biometrika 26(4), 404-413.

    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    With no success in 10 trials the upper end is ``1 - 0.025 ** (1 / 10) = 0.3085``:

    >>> low, high = clopper_pearson([0, 5, 10], 10)
    >>> np.round(low, 4).tolist(), np.round(high, 4).tolist()
    ([0.0, 0.1871, 0.6915], [0.3085, 0.8129, 1.0])
    """
    from scipy import stats

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
        high = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return low, high


def format_number(x: float, digits: int = 4) -> str:
    """A number without a Monte Carlo error (a maximum of data, a fitted parameter) to ``digits`` significant digits.

    Parameters
    ----------
    x : float
        The number; NaN or infinite prints as an em dash.
    digits : int, default 4
        Significant digits.

    Returns
    -------
    str
        E.g. ``"0.8898"`` for 0.8898352881786101.

    Examples
    --------
    >>> format_number(0.8898352881786101), format_number(1234567.0), format_number(float("nan"))
    ('0.8898', '1.235e+06', '—')
    """
    return f"{x:.{digits}g}" if np.isfinite(x) else "—"


def format_estimate(value: float, mcse: float, *, percent: bool = False, show_mcse: bool = True) -> str:
    """An estimate and its Monte Carlo standard error, both rounded to the digits the error supports.

    The error keeps two significant digits when its first is a 1 (0.0015), else one (0.002); the estimate is
    rounded to the same decimal place. Every report page and log line that shows an MCSE goes through here.

    Parameters
    ----------
    value : float
        The estimate (NaN prints as an em dash).
    mcse : float
        Its Monte Carlo standard error, >= 0; zero or NaN: the estimate alone, by :func:`format_number`.
    percent : bool, default False
        Keyword-only. Show both as percentages (a proportion 0.462 as ``46.2%``).
    show_mcse : bool, default True
        Keyword-only. False: the estimate alone, still rounded to the digits its MCSE supports (for a sentence
        that gives the error another way, e.g. with a Clopper-Pearson interval).

    Returns
    -------
    str
        E.g. ``"0.998 ± 0.002"``; without the MCSE, ``"0.998"``.

    Examples
    --------
    >>> format_estimate(0.998, 0.001998), format_estimate(0.99812, 0.00142), format_estimate(12.345, 3.2)
    ('0.998 ± 0.002', '0.9981 ± 0.0014', '12 ± 3')
    >>> format_estimate(0.4617, 0.0312, percent=True), format_estimate(0.5, 0.0)
    ('46% ± 3%', '0.5')
    >>> format_estimate(0.725, 0.0706, percent=True, show_mcse=False)
    '72%'

    """
    scale, unit = (100.0, "%") if percent else (1.0, "")
    v, s = value * scale, mcse * scale
    if not np.isfinite(v):
        return "—"
    if not np.isfinite(s) or s <= 0:
        return format_number(v) + unit
    s = float(f"{s:.1e}")  # two significant digits first: 0.001998 -> 0.0020, whose first digit is a 2
    exponent = int(np.floor(np.log10(s)))
    decimals = (1 if s / 10.0**exponent < 2 else 0) - exponent
    shown = max(decimals, 0)
    estimate = f"{round(v, decimals):.{shown}f}{unit}"
    return f"{estimate} ± {round(s, decimals):.{shown}f}{unit}" if show_mcse else estimate


def interval_position(low, high, truth) -> tuple[np.ndarray, np.ndarray]:
    """Where the truth sits relative to intervals [low, high]: the zip plot's position and side, elementwise.

    Parameters
    ----------
    low, high : array_like of float
        The intervals' ends (any units, ``low <= high``); any shapes, broadcast with ``truth``.
    truth : array_like of float
        The true value(s), in the same units.

    Returns
    -------
    position : ndarray of float64
        ``max(low - truth, truth - high) / h`` with h the half-width (floored at the smallest positive float,
        which keeps the sign): -1 at the centre, 0 at an edge, > 0 outside. ``position <= 0`` exactly when
        ``low <= truth <= high``.
    side : ndarray of int8
        +1 where the interval's centre lies above the truth, -1 below (or at it).

    Examples
    --------
    >>> pos, side = interval_position([0.0, 1.0, -3.0], [2.0, 3.0, -1.0], 1.0)
    >>> pos.tolist(), side.tolist()
    ([-1.0, 0.0, 2.0], [-1, 1, -1])
    """
    low, high, truth = (np.asarray(v, dtype=np.float64) for v in (low, high, truth))
    gap = np.maximum(low - truth, truth - high)
    half = np.maximum((high - low) / 2.0, np.finfo(np.float64).tiny)
    side = np.where(low + high > 2.0 * truth, 1, -1).astype(np.int8)
    with np.errstate(over="ignore", invalid="ignore"):  # a degenerate interval: +-inf outside
        position = gap / half
    # an infinite end: inf / inf, the sign of the gap (NaN only from NaN input, never counted as covered)
    return np.where(np.isnan(position) & ~np.isnan(gap), np.sign(gap), position), side


def zip_centiles(position) -> tuple[np.ndarray, np.ndarray]:
    """The zip plot's ranking: each replicate's fractional centile of its position, ties in replicate order.

    Parameters
    ----------
    position : array_like of float, shape (R,)
        Every replicate's position (:func:`interval_position`; any statistic ranked the same way, e.g. ``|z|``).

    Returns
    -------
    centile : ndarray of float64, shape (R,)
        ``100 * rank / R`` with rank 1..R ascending (a stable sort: ties keep the replicates' order), so the
        covering replicates (position <= 0) fill (0, 100 * coverage].
    order : ndarray of int, shape (R,)
        The replicates by rank (``position[order]`` is sorted).

    Examples
    --------
    >>> centile, order = zip_centiles([0.5, -1.0, -0.2, 2.0, -0.2])
    >>> centile.tolist(), order.tolist()
    ([80.0, 20.0, 40.0, 100.0, 60.0], [1, 2, 4, 0, 3])
    """
    position = np.asarray(position, dtype=np.float64)
    order = np.argsort(position, kind="stable")
    centile = np.empty(position.size)
    centile[order] = 100.0 * np.arange(1, position.size + 1) / max(position.size, 1)
    return centile, order


def thinned(count: int, most: int) -> np.ndarray:
    """At most ``most`` ranks of 0..count-1, evenly spaced, the first and last always (deterministic)."""
    if count <= most:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, most).round().astype(np.int64))
