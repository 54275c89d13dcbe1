"""Exact truths: what the simulations estimate, computed without simulating.

- :func:`expected_max` -- ``theta_n = E[max of n draws]``: an exact finite sum for a :class:`~simstudy.
  distributions.Bag`, ``sum_v v * (F(v)^n - F(v-)^n)``, and adaptive quadrature for a continuous distribution,
  ``low + int_low^high (1 - F(x)^n) dx``.
- :func:`order_statistic_means` -- ``E[X_(i)]``, i = 1..B, for a sample of B draws: exact for a bag (from the
  binomial law of the number of draws at or below each atom), quadrature otherwise.
- :func:`estimator_mean` -- the exact expectation of a closed-form estimator, ``W @ E[X_(.)]``, since every
  estimator is linear in the order statistics. The bootstrap's expectation equals V's (each resample is a
  draw from the empirical distribution), so its exact bias is V's too.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, special

from . import estimators
from .distributions import Bag, ScoreDistribution

__all__ = ["expected_max", "order_statistic_means", "estimator_mean"]

_QUAD = dict(epsabs=1e-13, epsrel=1e-11, limit=400)
# Bound on the (B x atoms) matrices built for a bag's order statistics, in elements.
_BLOCK = 65_536  # elements: 512 KiB matrices stay in cache and out of mmap'd (page-faulting) memory


def _n_iv(n) -> np.ndarray:
    n_arr = np.atleast_1d(np.asarray(n))
    if n_arr.ndim != 1 or not np.issubdtype(n_arr.dtype, np.integer) or n_arr.size == 0 or n_arr.min() < 1:
        raise ValueError(f"n must be a positive integer or a 1-d sequence of them, got {n!r}")
    return n_arr.astype(np.int64)


def _cumulative(rows: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc.accumulate`` down the rows of a matrix; a loop over rows when there are few of them, since
    numpy's accumulate along axis 0 walks the matrix column by column (about 8x slower for 30 rows)."""
    if rows.shape[0] > 256:
        return ufunc.accumulate(rows, axis=0)
    out = np.empty_like(rows)
    out[0] = rows[0]
    for i in range(1, rows.shape[0]):
        ufunc(out[i - 1], rows[i], out=out[i])
    return out


def _powers(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``p ** n`` as a (len(n), len(p)) matrix; by running products when n is 1, 2, ..., N (the usual case)."""
    if np.array_equal(n, np.arange(1, n.size + 1)):
        return _cumulative(np.broadcast_to(p, (n.size, p.size)), np.multiply)
    return p[None, :] ** n[:, None]


def _binomial_cdf_below(B: int, p: np.ndarray) -> np.ndarray:
    """``P(Bin(B, p) < i)`` for i = 1..B (rows) and each p (columns); shape (B, len(p)), 0 <= p < 1.

    The pmf by the recurrence pmf(r) = pmf(r-1) (B-r+1)/r p/(1-p) from pmf(0) = (1-p)^B when that cannot
    underflow, else from logarithms (any B).
    """
    r = np.arange(B, dtype=np.float64)[:, None]
    if B * -np.log1p(-p.max(initial=0.0)) < 600:
        ratio = np.empty((B, p.size))
        ratio[0] = (1.0 - p) ** B
        ratio[1:] = ((B - r[1:] + 1) / r[1:]) * (p / (1.0 - p))[None, :]
        pmf = _cumulative(ratio, np.multiply)
    else:
        log_choose = special.gammaln(B + 1) - special.gammaln(r + 1) - special.gammaln(B - r + 1)
        pmf = np.exp(log_choose + r * np.log(p)[None, :] + (B - r) * np.log1p(-p)[None, :])
    return _cumulative(pmf, np.add)


def expected_max(dist: ScoreDistribution, n) -> np.ndarray:
    """The expected maximum of ``n`` i.i.d. draws from ``dist``.

    Parameters
    ----------
    dist : ScoreDistribution
        A :class:`Bag` (exact sum) or a continuous distribution (quadrature, absolute error ~1e-12).
    n : int or sequence of int
        Budgets (any positive integers; no sample size limits them).

    Returns
    -------
    ndarray, shape (len(n),)
        ``E[max(X_1..X_n)]`` in score units.
    """
    n_arr = _n_iv(n)
    if isinstance(dist, Bag):
        # Summation by parts: sum_j v_j (F_j^n - F_{j-1}^n) = v_k - sum_{j<k} (v_{j+1} - v_j) F_j^n.
        v, F = dist.atoms, dist.cum_prob
        return v[-1] - _powers(F[:-1], n_arr) @ np.diff(v)
    low, high = dist.support
    nn = n_arr.astype(np.float64)
    if np.isfinite(low) and np.isfinite(high):
        val, _ = integrate.quad_vec(lambda x: 1.0 - dist.cdf(x) ** nn, low, high, **_QUAD)
        return low + val
    # Unbounded support: E[max] = int_0^1 F^{-1}(t) n t^(n-1) dt.
    val, _ = integrate.quad_vec(lambda t: dist.ppf(t) * nn * t ** (nn - 1), 0.0, 1.0, **_QUAD)
    return val


def order_statistic_means(dist: ScoreDistribution, B: int) -> np.ndarray:
    """Expected order statistics ``E[X_(i)]``, i = 1..B (ascending), of B i.i.d. draws from ``dist``.

    For a bag with atoms ``v_1 < ... < v_k``: ``E[X_(i)] = v_1 + sum_j (v_{j+1} - v_j) P(Bin(B, F(v_j)) < i)``,
    exact up to rounding. For a continuous distribution on [low, high]:
    ``low + int (1 - I_{F(x)}(i, B - i + 1)) dx`` by adaptive quadrature.

    Returns
    -------
    ndarray, shape (B,)
        In score units.
    """
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)) or B < 1:
        raise ValueError(f"B must be an integer >= 1, got {B!r}")
    B = int(B)
    i = np.arange(1, B + 1, dtype=np.float64)
    if isinstance(dist, Bag):
        v, F = dist.atoms, dist.cum_prob
        gaps, p = np.diff(v), F[:-1]  # the last atom has F = 1: no gap above it
        out = np.full(B, v[0])
        step = max(1, _BLOCK // B)  # bounds the (B x atoms) matrices
        for s in range(0, p.size, step):
            out += _binomial_cdf_below(B, p[s : s + step]) @ gaps[s : s + step]
        return out
    low, high = dist.support
    a, b = i, B - i + 1
    if np.isfinite(low) and np.isfinite(high):
        val, _ = integrate.quad_vec(lambda x: special.betainc(a, b, dist.cdf(x)), low, high, **_QUAD)
        return high - val  # = low + int (1 - I) dx
    val, _ = integrate.quad_vec(lambda t: dist.ppf(t) * np.exp(
        (a - 1) * np.log(t) + (b - 1) * np.log1p(-t) - special.betaln(a, b)), 0.0, 1.0, **_QUAD)
    return val


def estimator_mean(dist: ScoreDistribution, B: int, method: str, n=None) -> np.ndarray:
    """Exact expectation of an expected-maximum estimator on samples of B draws from ``dist``.

    Parameters
    ----------
    dist : ScoreDistribution
    B : int
        Sample size.
    method : {"u", "v", "w", "bootstrap"}
        The bootstrap's expectation over samples and resamples is V's.
    n : int or sequence of int, optional
        Budgets in 1..B (default ``1..B``).

    Returns
    -------
    ndarray, shape (len(n),)
        ``E[theta_hat_n]``; subtract :func:`expected_max` for the exact bias.
    """
    closed = "v" if method == "bootstrap" else method
    return estimators.weights(B, closed, n) @ order_statistic_means(dist, B)
