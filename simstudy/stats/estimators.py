"""Estimators of the expected maximum of n tuning trials (expected validation performance, EVP).

Given B scores ``X_(1) <= ... <= X_(B)`` from one random search, each closed-form estimator of
``theta_n = E[max of n draws]`` is a weighted sum of the order statistics, ``sum_i w_{n,i} X_(i)``, with
``w_{n,i} = P_hat(Y_n <= X_(i)) - P_hat(Y_n <= X_(i-1))`` from a way of counting size-n subsets of the B
points (Dodge et al. 2021, §2):

===========  ===========================  ============================================  ==================
method       subsets counted              ``P_hat(Y_n <= X_(k))``                        reference
===========  ===========================  ============================================  ==================
``"v"``      strings (ordered, repeats)   ``(k / B) ** n``                               Dodge et al. 2019
``"u"``      combinations (no repeats)    ``C(k, n) / C(B, n)``                          Tang et al. 2020
``"w"``      multisets (repeats)          ``C(k + n - 1, n) / C(B + n - 1, n)``          Dodge et al. 2021
===========  ===========================  ============================================  ==================

All n at once is one matrix product, ``sort(X) @ weights(B, method).T``. The weights are computed as
single terms in log space (``w_{n,i} = C(i-1, n-1) / C(B, n)`` for U and ``C(i+n-2, n-1) / C(B+n-1, n)`` for
W, by Pascal's rule), so they stay finite and accurate for B in the tens of thousands, where float
binomial coefficients overflow (near B = 1030).

A whole curve of a large sample never forms the ``len(n) x B`` matrix (8 GB at B = 32,000): above
:data:`MATRIX_LIMIT` entries the estimators are computed in blocks of budgets, each budget on the window of
the top ``m(n) = ceil(T (B + n - 1) / n) + 1`` order statistics, ``T = 53 log 2``. The weight left outside
the window is ``P_hat(Y_n <= X_(B-m)) <= exp(-n m / (B + n - 1)) <= 2**-53`` for all three methods (V:
``(1 - m/B)^n``; U and W are products of ``n`` factors each at most ``1 - m/(B + n - 1)``), so a windowed
estimate differs from the full sum by at most ``2**-53 * (max - min)`` of the scores: the rounding of the
result itself. Memory is O(B) plus a block of :data:`BLOCK` weights; time is O(B log B) per sample
(``sum_n m(n)``), a whole curve of 10^6 scores in seconds. V is summed by parts,
``X_(B) - sum_{i<B} (i/B)^n (X_(i+1) - X_(i))``, which needs one power per term and has no cancellation.

``"bootstrap"`` is the Monte Carlo approximation of V that Lucic et al. (2018) use: the mean over K
resamples (with replacement) of the sample maximum. Its extra error over V shrinks as K grows
(Dodge et al. 2019, §3.2).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from simstudy.stats._rng import rng_iv

__all__ = ["METHODS", "CLOSED_FORM", "MATRIX_LIMIT", "BLOCK", "weights", "expected_max", "expected_max_std"]

#: Closed-form estimators (weight matrices).
CLOSED_FORM = ("u", "v", "w")
#: Every estimator :func:`expected_max` accepts.
METHODS = CLOSED_FORM + ("bootstrap",)

#: Largest weight matrix (``len(n) * B`` entries, 2**22 = 32 MB) that :func:`expected_max` builds (and caches);
#: larger ones are computed in windowed blocks. Simulations (B in the tens) always take the matrix path.
MATRIX_LIMIT = 2**22
#: Entries of one block of windowed weights (2**22 = 32 MB).
BLOCK = 2**22
# log(1 / 2**-53): a window leaves out at most 2**-53 of the weight.
_TAIL = 53 * np.log(2.0)

# Bootstrap resamples are processed in blocks of about this many index draws to bound memory.
_BOOTSTRAP_BLOCK = 4_000_000
# A sample is summed centred on its maximum when its scores sit this far from 0 relative to their spread (1e9 +
# a few tenths): a weighted sum of the raw scores would round at the offset's last bit, not the spread's. Below
# it, at most 10 bits of the spread's precision can go, and results stay bit for bit those of the plain sum.
_CENTRE_RATIO = 2.0**10
# Scores beyond this in magnitude are scaled by a power of two (exact) before their squares are summed, which
# would overflow near 1e154.
_SQUARE_LIMIT = 2.0**500


def _method_iv(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown estimator {method!r}; choose one of: {', '.join(METHODS)}")
    return method


def _budget_iv(B: int, n) -> tuple[int, np.ndarray]:
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 1:
        raise ValueError(f"B (the number of scores) must be an integer >= 1, got {B!r}")
    B = int(B)
    if n is None:
        return B, np.arange(1, B + 1)
    n_arr = np.atleast_1d(np.asarray(n))
    if n_arr.ndim != 1 or n_arr.size == 0 or not np.issubdtype(n_arr.dtype, np.integer):
        raise ValueError(f"n must be an integer or a 1-d sequence of integers, got {n!r}")
    if n_arr.min() < 1:
        raise ValueError(f"n must be >= 1, got {int(n_arr.min())}")
    if n_arr.max() > B:
        raise ValueError(
            f"n={int(n_arr.max())} exceeds the number of scores B={B}; these estimators only interpolate (n <= B)"
        )
    return B, n_arr.astype(np.int64)


@lru_cache(maxsize=64)
def _weights_cached(B: int, method: str, n: tuple[int, ...]) -> np.ndarray:
    from scipy.special import gammaln  # imported on use: scipy.special costs 0.2-0.5 s at a CLI start

    i = np.arange(1, B + 1, dtype=np.float64)[None, :]  # order-statistic rank, ascending
    nn = np.asarray(n, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "v":
            # (i/B)^n - ((i-1)/B)^n = (i/B)^n * (1 - (1 - 1/i)^n), without cancellation.
            logw = nn * np.log(i / B) + np.log(-np.expm1(nn * np.log1p(-1.0 / i)))
        elif method == "u":
            # C(i-1, n-1) / C(B, n); zero for i < n.
            logw = (gammaln(i) - gammaln(nn) - gammaln(i - nn + 1)) - (
                gammaln(B + 1) - gammaln(nn + 1) - gammaln(B - nn + 1)
            )
            logw = np.where(i >= nn, logw, -np.inf)
        else:  # "w": C(i+n-2, n-1) / C(B+n-1, n)
            logw = (gammaln(i + nn - 1) - gammaln(nn) - gammaln(i)) - (gammaln(B + nn) - gammaln(nn + 1) - gammaln(B))
    w = np.exp(logw)
    # Each row sums to 1 exactly; renormalising cancels the rounding of the shared log-normaliser, which
    # grows with B (about 1e-11 relative at B = 10,000 before, 1e-16 after).
    w /= w.sum(axis=1, keepdims=True)
    w.flags.writeable = False
    return w


def weights(B: int, method: str, n=None) -> np.ndarray:
    """Weights of a closed-form estimator on the ascending order statistics.

    The estimate of ``E[max of n draws]`` from a sample of ``B`` scores is ``sort(scores) @ weights(B,
    method, n).T``; :func:`expected_max` does this (and, for large ``B``, avoids forming the matrix).

    Parameters
    ----------
    B : int
        Number of scores in the sample (trials), >= 1.
    method : {"u", "v", "w"}
        The estimator (see the module docstring): ``"v"`` Dodge et al. (2019), ``"u"`` Tang et al. (2020),
        ``"w"`` Dodge et al. (2021).
    n : int or sequence of int, optional
        Budgets (trials), each in 1..B. Default ``1..B``.

    Returns
    -------
    ndarray of float64, shape (len(n), B)
        Row ``j`` holds ``w_{n_j, i}`` for ``i = 1..B`` (ascending rank, the last column weights the sample
        maximum); each row is a probability vector (non-negative, sums to 1). Read-only (cached).

    Raises
    ------
    ValueError
        If `method` is not one of ``"u"``, ``"v"``, ``"w"`` (``"bootstrap"`` has no weights), `B` is not an
        integer >= 1, or a budget is outside 1..B.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP-IJCNLP 2019.

    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Examples
    --------
    U at n = 2 on 4 scores: ``C(i - 1, 1) / C(4, 2)``, so the minimum never counts and the maximum counts
    in half of the 6 pairs.

    >>> w = weights(4, "u", n=[1, 2, 4])
    >>> np.round(w, 4).tolist()
    [[0.25, 0.25, 0.25, 0.25], [0.0, 0.1667, 0.3333, 0.5], [0.0, 0.0, 0.0, 1.0]]
    >>> w.sum(axis=1).tolist()
    [1.0, 1.0, 1.0]
    >>> np.round(weights(3, "v"), 4).tolist()  # (i/3)^n - ((i-1)/3)^n
    [[0.3333, 0.3333, 0.3333], [0.1111, 0.3333, 0.5556], [0.037, 0.2593, 0.7037]]
    >>> weights(3, "bootstrap")
    Traceback (most recent call last):
        ...
    ValueError: 'bootstrap' has no weight matrix; closed forms are: u, v, w
    """
    method = _method_iv(method)
    if method not in CLOSED_FORM:
        raise ValueError(f"{method!r} has no weight matrix; closed forms are: {', '.join(CLOSED_FORM)}")
    B, n = _budget_iv(B, n)
    return _weights_cached(B, method, tuple(int(k) for k in n))


def _scores_iv(scores, axis: int) -> np.ndarray:
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 0:
        raise ValueError("scores must have at least one dimension")
    x = np.moveaxis(x, axis, -1)
    if x.shape[-1] < 1:
        raise ValueError("scores is empty along the sample axis")
    if not np.all(np.isfinite(x)):
        raise ValueError("scores contain NaN or infinite values")
    return x


def _minimize_iv(minimize) -> bool:
    if not isinstance(minimize, (bool, np.bool_)):
        raise ValueError(f"minimize must be True or False, got {minimize!r}")
    return bool(minimize)


def _sorted_iv(x: np.ndarray, presorted: bool) -> np.ndarray:
    """Sort the sample axis, or check (in one pass) that ``presorted=True`` is true."""
    if not isinstance(presorted, (bool, np.bool_)):
        raise ValueError(f"presorted must be True or False, got {presorted!r}")
    if not presorted:
        return np.sort(x, axis=-1)
    down = x[..., 1:] < x[..., :-1]
    if down.any():
        where = tuple(int(k) for k in np.argwhere(down)[0])  # the first unsorted sample, and where
        batch = where[:-1] if len(where) > 2 else where[0] if len(where) == 2 else None
        row = "" if batch is None else f"sample {batch} "
        a, b = float(x[where]), float(x[where[:-1] + (where[-1] + 1,)])
        raise ValueError(
            f"presorted=True but {row}is not ascending along the sample axis (position "
            f"{where[-1] + 1}: {a!r} > {b!r}); pass presorted=False to sort"
        )
    return x


def _window(B: int, n: np.ndarray) -> np.ndarray:
    """``m(n)``: how many of the top order statistics carry all but 2**-53 of budget n's weight."""
    return np.minimum(B, np.ceil(_TAIL * (B + n - 1) / n).astype(np.int64) + 1)


def _blocks(B: int, n: np.ndarray):
    """Blocks of budgets (indices into ``n``, ascending budget) and the window ``m`` they share (that of the
    block's smallest budget, the widest), with ``len(block) * m <= BLOCK``."""
    order = np.argsort(n, kind="stable")
    m_all = _window(B, n[order])
    start = 0
    while start < order.size:
        m = int(m_all[start])
        rows = max(1, BLOCK // m)
        yield order[start : start + rows], m
        start += rows


def _windowed_sums(xs: list[np.ndarray], B: int, method: str, n: np.ndarray) -> list[np.ndarray]:
    """``x @ weights(B, method, n).T`` for each sorted ``x`` of ``xs``, by windowed blocks (module docstring)."""
    from scipy.special import gammaln  # imported on use: scipy.special costs 0.2-0.5 s at a CLI start

    out = [np.empty(x.shape[:-1] + (n.size,)) for x in xs]
    if method == "v":
        diffs = [np.diff(x, axis=-1) for x in xs]  # X_(i+1) - X_(i), i = 1..B-1
        log_rank = np.log(np.arange(1, B) / B)  # log(i / B), i = 1..B-1
        for idx, m in _blocks(B, n):
            k = min(m, B - 1)
            cdf = np.exp(n[idx, None] * log_rank[B - 1 - k :])  # (i/B)^n on the window
            for o, x, d in zip(out, xs, diffs):
                o[..., idx] = x[..., -1:] - d[..., B - 1 - k :] @ cdf.T
        return out
    table = gammaln(np.arange(2 * B + 1, dtype=np.float64))  # gammaln(k), k = 0..2B (index = argument)
    for idx, m in _blocks(B, n):
        i = np.arange(B - m + 1, B + 1)[None, :]
        nn = n[idx, None]
        # The terms of _weights_cached, looked up instead of recomputed: the same floats.
        if method == "u":
            low = i - nn + 1
            logw = (table[i] - table[nn] - table[np.maximum(low, 1)]) - (
                table[B + 1] - table[nn + 1] - table[B - nn + 1]
            )
            logw = np.where(low >= 1, logw, -np.inf)
        else:
            logw = (table[i + nn - 1] - table[nn] - table[i]) - (table[B + nn] - table[nn + 1] - table[B])
        w = np.exp(logw)
        total = w.sum(axis=1)  # renormalised as in _weights_cached (the window holds all but 2**-53)
        for o, x in zip(out, xs):
            o[..., idx] = (x[..., B - m :] @ w.T) / total
    return out


def _weighted_sums(xs: list[np.ndarray], B: int, method: str, n: np.ndarray) -> list[np.ndarray]:
    """``x @ weights(B, method, n).T`` for each ``x``: one cached matrix when it is small (simulations),
    windowed blocks (bounded memory, O(B log B) time) when it is not."""
    if n.size * B <= MATRIX_LIMIT:
        w = _weights_cached(B, method, tuple(int(k) for k in n))
        return [x @ w.T for x in xs]
    return _windowed_sums(xs, B, method, n)


def expected_max(
    scores,
    method: str = "v",
    *,
    n=None,
    axis: int = -1,
    presorted: bool = False,
    resamples: int = 1000,
    rng: np.random.Generator | None = None,
    minimize: bool = False,
) -> np.ndarray:
    """Estimate the expected maximum (or, with `minimize`, minimum) of ``n`` scores from a sample of ``B`` scores.

    Parameters
    ----------
    scores : array_like of float, shape (..., B)
        One sample (1-d) or a batch of samples; the sample runs along ``axis``. Score units.
    method : {"v", "u", "w", "bootstrap"}, default "v"
        The estimator; ``"v"`` (Dodge et al. 2019) has the lowest MSE in Dodge et al. (2021).
    n : int or sequence of int, optional
        Budgets in 1..B. Default ``1..B`` (the whole curve).
    axis : int, default -1
        The sample axis of ``scores``.
    presorted : bool, default False
        Skip sorting when the sample axis is already ascending (a speed-up for simulations); checked in one
        pass.
    resamples : int, default 1000
        K, the bootstrap's number of resamples (``method="bootstrap"`` only); an integer >= 1.
    rng : numpy.random.Generator, optional
        Source of the bootstrap's resamples (required for ``method="bootstrap"``; no default, so that every
        result can be reproduced).
    minimize : bool, keyword-only, default False
        Whether lower is better (losses, error rates): the best of n is the minimum, and the estimate is that
        of the expected minimum, ``-expected_max(-scores)`` (negation is exact, so bit for bit the maximum's
        estimate of the mirrored scores, mirrored back). With `presorted`, the scores are still ascending.

    Returns
    -------
    ndarray, shape (..., len(n))
        The estimated expected maximum (minimum with `minimize`) for each budget, in score units; the sample
        axis is replaced by the budget axis (last). ``n`` is a scalar -> that axis is kept with length 1.

    Raises
    ------
    ValueError
        On an unknown method, empty or non-finite scores, budgets outside 1..B, ``presorted=True`` on a
        sample that is not ascending (naming it), ``method="bootstrap"`` without a Generator ``rng``, or
        `minimize` not a bool.

    Notes
    -----
    Memory is O(B) plus a bounded block whatever B (see the module docstring): a whole curve of 10^6 scores
    takes seconds.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP-IJCNLP 2019.

    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Lucic, M., Kurach, K., Michalski, M., Gelly, S., & Bousquet, O. (2018). Are GANs created equal? A
    large-scale study. NeurIPS 2018.

    Examples
    --------
    >>> expected_max([0.2, 0.5, 0.9], "v")          # n = 1, 2, 3: (1 x 0.2 + 3 x 0.5 + 5 x 0.9) / 9 at n = 2
    array([0.53333333, 0.68888889, 0.77037037])
    >>> expected_max([0.2, 0.5, 0.9], "u", n=2)     # the mean of the 3 pairs' maxima: (0.5 + 0.9 + 0.9) / 3
    array([0.76666667])

    U is unbiased: over many samples of B = 10 uniform scores its mean at n = 5 is near the exact
    ``E[max of 5 uniforms] = 5/6``.

    >>> rng = np.random.default_rng(0)
    >>> est = expected_max(rng.uniform(size=(2000, 10)), "u", n=5)
    >>> est.shape
    (2000, 1)
    >>> round(float(est.mean()), 4), round(5 / 6, 4)
    (0.8342, 0.8333)

    Losses, lower is better: the expected minimum is the mirror of the expected maximum of the negated scores.

    >>> expected_max([0.2, 0.5, 0.9], "v", minimize=True)
    array([0.53333333, 0.37777778, 0.3037037 ])
    >>> bool(np.array_equal(expected_max([0.2, 0.5, 0.9], minimize=True), -expected_max([-0.2, -0.5, -0.9])))
    True
    """
    method = _method_iv(method)
    x = _scores_iv(scores, axis)
    if _minimize_iv(minimize):  # the maximum of -x, mirrored back: negation is exact, so no bit changes
        # -x of an ascending sample is descending: reversed, it is ascending again (the same values, in order)
        mirrored = -x[..., ::-1] if presorted else -x
        return -expected_max(mirrored, method, n=n, presorted=presorted, resamples=resamples, rng=rng)
    B, n_arr = _budget_iv(x.shape[-1], n)
    if method == "bootstrap":
        rng_iv(rng, "expected_max(method='bootstrap')")
    x = _sorted_iv(x, presorted)
    if method == "bootstrap":  # it picks scores, it does not sum them: no digits to lose
        return _bootstrap_expected_max(x, n_arr, resamples=resamples, rng=rng)
    low, high = x[..., :1], x[..., -1:]
    with np.errstate(over="ignore"):  # a spread beyond the largest float is inf: not far
        far = np.maximum(np.abs(low), np.abs(high)) > _CENTRE_RATIO * (high - low)
    if not far.any():
        return _weighted_sums([x], B, method, n_arr)[0]
    # centre the samples far from 0 on their maximum (the others on 0: bit for bit the plain sum), and add it back
    centre = np.where(far, high, 0.0)
    return _weighted_sums([x - centre], B, method, n_arr)[0] + centre


def _bootstrap_expected_max(x_sorted, n, *, resamples, rng) -> np.ndarray:
    """Mean over K resamples of the max of the first n resampled scores, for every n at once.

    One resample of size B serves every n through its running maximum (the prefix of length n of a
    with-replacement resample is itself a with-replacement resample of size n). On sorted scores the maximum
    of the values is the value at the maximum index, so only integer indices are resampled.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1, got {resamples!r}")
    batch_shape, B = x_sorted.shape[:-1], x_sorted.shape[-1]
    flat = x_sorted.reshape(-1, B)
    out = np.empty((flat.shape[0], n.size))
    rows_per_block = max(1, _BOOTSTRAP_BLOCK // (resamples * B))
    for start in range(0, flat.shape[0], rows_per_block):
        block = flat[start : start + rows_per_block]
        idx = rng.integers(0, B, size=(block.shape[0], resamples, B), dtype=np.int32)
        np.maximum.accumulate(idx, axis=-1, out=idx)
        top = idx[:, :, n - 1]  # (rows, K, len(n)): index of each prefix maximum
        out[start : start + block.shape[0]] = (
            np.take_along_axis(block[:, None, :], top.reshape(block.shape[0], 1, -1), axis=-1)
            .reshape(top.shape)
            .mean(axis=1)
        )
    return out.reshape(*batch_shape, n.size)


def expected_max_std(scores, *, n=None, axis: int = -1, presorted: bool = False, minimize: bool = False) -> np.ndarray:
    """Plug-in standard deviation of the maximum (or, with `minimize`, minimum) of ``n`` scores (Dodge et al.
    2019, §3.3).

    The standard deviation of ``max(X_1..X_n)`` when the ``X_i`` are drawn from the empirical distribution of
    the sample: ``sqrt(sum_i w_{n,i} X_(i)^2 - (sum_i w_{n,i} X_(i))^2)`` with the V weights. It is the
    shaded band (+/- 1 SD) of Dodge et al. (2019), Figure 1; it describes the spread of the best score a
    researcher gets with budget n, not the uncertainty of the estimated curve.

    Parameters
    ----------
    scores : array_like of float, shape (..., B)
        One sample or a batch of samples along ``axis``, in score units.
    n : int or sequence of int, optional
        Budgets in 1..B (default ``1..B``).
    axis : int, default -1
        The sample axis.
    presorted : bool, default False
        Skip sorting when the sample axis is already ascending (checked in one pass).
    minimize : bool, keyword-only, default False
        Whether lower is better: the SD of the minimum of n, which is that of the maximum of ``-scores``
        (computed on them, so bit for bit the mirrored scores' answer).

    Returns
    -------
    ndarray, shape (..., len(n))
        Standard deviations in score units.

    Raises
    ------
    ValueError
        On empty or non-finite scores, budgets outside 1..B, ``presorted=True`` on a sample that is not
        ascending, or `minimize` not a bool.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP-IJCNLP 2019.

    Examples
    --------
    >>> expected_max_std([0.0, 1.0], n=[1, 2])      # the max of n fair coin flips: SD 1/2, then sqrt(3)/4
    array([0.5      , 0.4330127])
    >>> expected_max_std([0.0, 1.0], n=[1, 2], minimize=True)  # the min of n flips: the same spread
    array([0.5      , 0.4330127])
    """
    x = _scores_iv(scores, axis)
    if _minimize_iv(minimize):
        x, presorted = (-x[..., ::-1], presorted) if presorted else (-x, False)
    _B, n_arr = _budget_iv(x.shape[-1], n)
    return v_mean_std(_sorted_iv(x, presorted), n_arr)[1]


def v_mean_std(x_sorted: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The V estimate and the plug-in SD of the max at budgets ``n``, from one pass over the V weights."""
    # Variance is shift-invariant: centring first limits the cancellation in E[Y^2] - E[Y]^2. The maximum is the
    # right centre for the max of n (it concentrates there as n grows): 1e-14 relative where centring on the
    # sample mean lost 2e-11 (uniform scores, B = 700, against 80-bit sums).
    centre = x_sorted[..., -1:]
    # Huge finite scores (1e200) would square to inf and make the SD NaN: scale them by a power of two, exact
    # (so other samples keep every bit), and differences stay finite even across -1e308..1e308.
    top = float(np.max(np.abs(x_sorted[..., [0, -1]])))
    e = int(np.frexp(top)[1]) if top > _SQUARE_LIMIT else 0  # scores / 2**e lie within [-1, 1]
    x = x_sorted - centre if e == 0 else np.ldexp(x_sorted, -e) - np.ldexp(centre, -e)
    mean, second = _weighted_sums([x, x * x], x.shape[-1], "v", n)
    # Clip the tiny negative values rounding can leave when all the weight sits on one score.
    std = np.sqrt(np.clip(second - mean * mean, 0.0, None))
    return (mean + centre, std) if e == 0 else (np.ldexp(mean, e) + centre, np.ldexp(std, e))
