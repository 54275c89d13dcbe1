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

``"bootstrap"`` is the Monte Carlo approximation of V that Lucic et al. (2018) use: the mean over K
resamples (with replacement) of the sample maximum. Its extra error over V shrinks as K grows
(Dodge et al. 2019, §3.2).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln

__all__ = ["METHODS", "CLOSED_FORM", "weights", "expected_max", "expected_max_std"]

#: Closed-form estimators (weight matrices).
CLOSED_FORM = ("u", "v", "w")
#: Every estimator :func:`expected_max` accepts.
METHODS = CLOSED_FORM + ("bootstrap",)

# Bootstrap resamples are processed in blocks of about this many index draws to bound memory.
_BOOTSTRAP_BLOCK = 4_000_000


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
            f"n={int(n_arr.max())} exceeds the number of scores B={B}; these estimators only "
            "interpolate (n <= B)"
        )
    return B, n_arr.astype(np.int64)


@lru_cache(maxsize=64)
def _weights_cached(B: int, method: str, n: tuple[int, ...]) -> np.ndarray:
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
            logw = (gammaln(i + nn - 1) - gammaln(nn) - gammaln(i)) - (
                gammaln(B + nn) - gammaln(nn + 1) - gammaln(B)
            )
    w = np.exp(logw)
    # Each row sums to 1 exactly; renormalising cancels the rounding of the shared log-normaliser, which
    # grows with B (about 1e-11 relative at B = 10,000 before, 1e-16 after).
    w /= w.sum(axis=1, keepdims=True)
    w.flags.writeable = False
    return w


def weights(B: int, method: str, n=None) -> np.ndarray:
    """Weights of a closed-form estimator on the ascending order statistics.

    Parameters
    ----------
    B : int
        Number of scores in the sample.
    method : {"u", "v", "w"}
        The estimator (see the module docstring).
    n : int or sequence of int, optional
        Budgets, each in 1..B. Default: ``1..B``.

    Returns
    -------
    ndarray, shape (len(n), B)
        Row ``j`` holds ``w_{n_j, i}`` for ``i = 1..B``; each row is a probability vector. Read-only
        (cached).
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


def expected_max(
    scores,
    method: str = "v",
    *,
    n=None,
    axis: int = -1,
    presorted: bool = False,
    resamples: int = 1000,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Estimate the expected maximum of ``n`` scores from a sample of ``B`` scores.

    Parameters
    ----------
    scores : array_like, shape (..., B)
        One sample (1-d) or a batch of samples; the sample runs along ``axis``. Score units.
    method : {"v", "u", "w", "bootstrap"}
        The estimator; ``"v"`` (Dodge et al. 2019) has the lowest MSE in Dodge et al. (2021).
    n : int or sequence of int, optional
        Budgets in 1..B. Default ``1..B`` (the whole curve).
    axis : int
        The sample axis of ``scores``.
    presorted : bool
        Skip sorting when the sample axis is already ascending (a speed-up for simulations).
    resamples : int
        K, the bootstrap's number of resamples (``method="bootstrap"`` only).
    rng : numpy.random.Generator, optional
        Source of the bootstrap's resamples (required for ``method="bootstrap"``).

    Returns
    -------
    ndarray, shape (..., len(n))
        The estimated expected maximum for each budget, in score units; the sample axis is replaced by the
        budget axis (last). ``n`` is a scalar -> that axis is kept with length 1.

    Examples
    --------
    >>> expected_max([0.2, 0.5, 0.9], "v")          # n = 1, 2, 3: (1 x 0.2 + 3 x 0.5 + 5 x 0.9) / 9 at n = 2
    array([0.53333333, 0.68888889, 0.77037037])
    >>> expected_max([0.2, 0.5, 0.9], "u", n=2)     # the mean of the 3 pairs' maxima: (0.5 + 0.9 + 0.9) / 3
    array([0.76666667])
    """
    method = _method_iv(method)
    x = _scores_iv(scores, axis)
    B, n_arr = _budget_iv(x.shape[-1], n)
    if not presorted:
        x = np.sort(x, axis=-1)
    if method == "bootstrap":
        return _bootstrap_expected_max(x, n_arr, resamples=resamples, rng=rng)
    return x @ weights(B, method, n_arr).T


def _bootstrap_expected_max(x_sorted, n, *, resamples, rng) -> np.ndarray:
    """Mean over K resamples of the max of the first n resampled scores, for every n at once.

    One resample of size B serves every n through its running maximum (the prefix of length n of a
    with-replacement resample is itself a with-replacement resample of size n). On sorted scores the maximum
    of the values is the value at the maximum index, so only integer indices are resampled.
    """
    if rng is None:
        raise ValueError("method='bootstrap' needs rng= (a numpy.random.Generator)")
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
        out[start : start + block.shape[0]] = np.take_along_axis(
            block[:, None, :], top.reshape(block.shape[0], 1, -1), axis=-1
        ).reshape(top.shape).mean(axis=1)
    return out.reshape(*batch_shape, n.size)


def expected_max_std(scores, *, n=None, axis: int = -1, presorted: bool = False) -> np.ndarray:
    """Plug-in standard deviation of the maximum of ``n`` scores (Dodge et al. 2019, §3.3).

    The standard deviation of ``max(X_1..X_n)`` when the ``X_i`` are drawn from the empirical distribution of
    the sample: ``sqrt(sum_i w_{n,i} X_(i)^2 - (sum_i w_{n,i} X_(i))^2)`` with the V weights. It is the
    shaded band (+/- 1 SD) of Dodge et al. (2019), Figure 1; it describes the spread of the best score a
    researcher gets with budget n, not the uncertainty of the estimated curve.

    Parameters
    ----------
    scores : array_like, shape (..., B)
        One sample or a batch of samples along ``axis``.
    n : int or sequence of int, optional
        Budgets in 1..B (default ``1..B``).
    axis : int
        The sample axis.
    presorted : bool
        Skip sorting when the sample axis is already ascending.

    Returns
    -------
    ndarray, shape (..., len(n))
        Standard deviations in score units.
    """
    x = _scores_iv(scores, axis)
    if not presorted:
        x = np.sort(x, axis=-1)
    B, n_arr = _budget_iv(x.shape[-1], n)
    w = weights(B, "v", n_arr)
    # Variance is shift-invariant: centring on the sample mean first avoids cancellation in E[Y^2] - E[Y]^2.
    x = x - x.mean(axis=-1, keepdims=True)
    mean = x @ w.T
    second = (x * x) @ w.T
    # Clip the tiny negative values rounding can leave when all the weight sits on one score.
    return np.sqrt(np.clip(second - mean * mean, 0.0, None))
