"""Exact truths: what the simulations estimate, computed without simulating.

- :func:`expected_max` -- ``theta_n = E[max of n draws]``: an exact finite sum for a :class:`~simstudy.
  distributions.Bag`, ``sum_v v * (F(v)^n - F(v-)^n)``, and adaptive quadrature for a continuous distribution,
  ``low + int_low^high (1 - F(x)^n) dx``, split at the atoms of a continuous distribution with atoms
  (:class:`~simstudy.distributions.KDEWithAtoms`), where F jumps.
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

__all__ = ["expected_max", "order_statistic_means", "estimator_mean", "quantile_tuning_curve",
           "mean_tuning_curve"]

_QUAD = dict(epsabs=1e-13, epsrel=1e-11, limit=400)
# Bound on the (B x atoms) matrices built for a bag's order statistics, in elements.
_BLOCK = 65_536  # elements: 512 KiB matrices stay in cache and out of mmap'd (page-faulting) memory


def _quad(fn, dist: ScoreDistribution, low: float, high: float):
    """``int_low^high fn(x) dx`` by adaptive quadrature, split at the distribution's atoms (where F jumps)."""
    breaks = None
    if getattr(dist, "has_atoms", False):
        inside = dist.atoms[(dist.atoms > low) & (dist.atoms < high)]
        breaks = inside.tolist() or None
    return integrate.quad_vec(fn, low, high, points=breaks, **_QUAD)


def _n_iv(n) -> np.ndarray:
    n_arr = np.atleast_1d(np.asarray(n))
    if n_arr.ndim != 1 or not np.issubdtype(n_arr.dtype, np.integer) or n_arr.size == 0 or n_arr.min() < 1:
        raise ValueError(f"n must be a positive integer or a 1-d sequence of them, got {n!r}")
    return n_arr.astype(np.int64)


def _tail_sums(p: np.ndarray, n: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``sum_j gaps_j p_j^n`` for each n; shape (len(n),).

    For n = 1, 2, ..., N (the usual case) by running products, one cache-sized row at a time.
    """
    if not np.array_equal(n, np.arange(1, n.size + 1)):
        return (p[None, :] ** n[:, None]) @ gaps
    out = np.empty(n.size)
    power = np.ones_like(p)
    for k in range(n.size):
        power *= p
        out[k] = power @ gaps
    return out


def _bag_order_statistic_means(v: np.ndarray, F: np.ndarray, B: int) -> np.ndarray:
    """``E[X_(i)] = v_1 + sum_j (v_{j+1} - v_j) P(Bin(B, F_j) < i)`` for i = 1..B.

    Accumulated over i with the binomial pmf's recurrence pmf(r) = pmf(r-1) (B-r+1)/r p/(1-p), one row of
    atoms at a time, when pmf(0) = (1-p)^B cannot underflow; otherwise from logarithms, in blocks of atoms.
    """
    gaps, p = np.diff(v), F[:-1]  # the last atom has F = 1: no gap above it
    out = np.empty(B)
    if B * -np.log1p(-p.max(initial=0.0)) < 600:
        odds = p / (1.0 - p)
        pmf = (1.0 - p) ** B  # r = 0
        below = pmf @ gaps  # sum_j gaps_j P(Bin(B, p_j) < 1)
        out[0] = below
        for r in range(1, B):
            pmf *= odds
            pmf *= (B - r + 1) / r
            below += pmf @ gaps
            out[r] = below
        return v[0] + out
    r = np.arange(B, dtype=np.float64)[:, None]
    log_choose = special.gammaln(B + 1) - special.gammaln(r + 1) - special.gammaln(B - r + 1)
    out[:] = v[0]
    step = max(1, _BLOCK // B)  # bounds the (B x atoms) matrices
    for s in range(0, p.size, step):
        pj = p[s : s + step]
        pmf = np.exp(log_choose + r * np.log(pj)[None, :] + (B - r) * np.log1p(-pj)[None, :])
        out += np.cumsum(pmf, axis=0) @ gaps[s : s + step]
    return out


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
        return v[-1] - _tail_sums(F[:-1], n_arr, np.diff(v))
    low, high = dist.support
    nn = n_arr.astype(np.float64)
    if np.isfinite(low) and np.isfinite(high):
        val, _ = _quad(lambda x: 1.0 - dist.cdf(x) ** nn, dist, low, high)
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
        return _bag_order_statistic_means(dist.atoms, dist.cum_prob, B)
    low, high = dist.support
    a, b = i, B - i + 1
    if np.isfinite(low) and np.isfinite(high):
        val, _ = _quad(lambda x: special.betainc(a, b, dist.cdf(x)), dist, low, high)
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


def _ks_iv(ks) -> np.ndarray:
    ks = np.asarray(ks, dtype=np.float64)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise ValueError("ks must be finite budgets > 0")
    return ks


def quantile_tuning_curve(dist: ScoreDistribution, ks, quantile: float = 0.5) -> np.ndarray:
    """The true quantile tuning curve, ``F^-1(quantile ** (1 / k))``, for real k > 0 (median: 0.5).

    The best of k draws has CDF ``F^k`` (Lourie et al. Eq. 2); its quantile is the score where ``F^k`` reaches
    ``quantile``. Shape of ``ks``.
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be strictly between 0 and 1, got {quantile!r}")
    return dist.ppf(quantile ** (1.0 / _ks_iv(ks)))


def mean_tuning_curve(dist: ScoreDistribution, ks) -> np.ndarray:
    """The true mean tuning curve ``E[T_k] = low + int_low^high (1 - F(x)^k) dx``, for real k > 0.

    Exact sums for a bag; adaptive quadrature (absolute error ~1e-12) for a continuous distribution on a
    bounded support. Shape of ``ks``.
    """
    ks = _ks_iv(ks)
    flat = ks.ravel()
    if isinstance(dist, Bag):
        v, F = dist.atoms, dist.cum_prob
        out = v[-1] - (F[None, :-1] ** flat[:, None]) @ np.diff(v)
        return out.reshape(ks.shape)
    low, high = dist.support
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("the mean tuning curve by quadrature needs a bounded support")
    val, _ = _quad(lambda x: 1.0 - dist.cdf(x) ** flat, dist, low, high)
    return (low + val).reshape(ks.shape)
