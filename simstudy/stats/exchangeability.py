"""Whether tuning trials can be read as i.i.d. random search: a test of exchangeability in trial order.

Every number simstudy gives on a researcher's results (the expected best of n, tuning curves and their bands)
assumes the scores are i.i.d. draws, as random search makes them. Adaptive searches (TPE, Gaussian-process
BO, CMA-ES, ...) learn from their earlier trials, so their later trials score better on average and spread
less. :func:`order_test` asks the trials themselves, by their order.

=============================  ==========================================================================
name                           what it gives
=============================  ==========================================================================
:func:`order_test`             the one-sided rank trend test and its p-value, with what it means in words
:class:`OrderTestResult`       its result: statistic, p-value, n, method and the words
=============================  ==========================================================================

Why this test
-------------
Under random search the trials are i.i.d., hence exchangeable: given the scores observed, every assignment
of them to the trial positions is equally likely. The null distribution of any statistic of (position,
score) is therefore the permutation distribution of the observed scores, whatever their law (skewed, with
atoms, ties, infinite losses of diverged runs). A p-value from it is valid by construction: the chance of
``p <= alpha`` under random search is at most ``alpha``, at every n and with any ties. It is exact
(every order enumerated) for n <= 7 and a Monte Carlo permutation p-value ``(1 + b) / (1 + B)`` above, which
is valid for any number B of random orders (Phipson & Smyth 2010): Monte Carlo only makes the test slightly
less powerful, never anti-conservative.

The statistic is Spearman's rank correlation of the scores with their trial position (Daniels' 1950 test for
trend), the scores ranked with midranks (so ties are handled exactly) and oriented so that higher is better, and
the test is one-sided toward improvement. Ranks make it invariant to any increasing transform (accuracy or error,
a loss or its logarithm) and insensitive to outliers. Improvement in later trials is what adaptive searches
produce, and their shrinking spread (fewer poor trials late) raises later ranks too, so one statistic sees both;
a search that improves only slowly, or that is dependent in another way (a grid in a systematic order, a search
that gets worse), may pass. Kendall's tau against trial number (the Mann-Kendall test) has the same alternative
and asymptotically the same power (their relative efficiency is 1), but Spearman's permutation distribution is a
matrix product (the statistic of order ``s`` is ``sum_k s(k) r_k``), so 10,000 score sets of 100 trials against
9,999 random orders is one BLAS call; Kendall's needs O(n log n) work per order and set. scipy's own p-values do
not do the job: :func:`scipy.stats.spearmanr`'s is a t approximation (at n = 5 it flags 11.7% of the orders at
level 0.10: anti-conservative), :func:`scipy.stats.kendalltau`'s a normal approximation whenever scores tie, and
:func:`scipy.stats.permutation_test` computes this very p-value (the tests check it does) but about two hundred
times slower on many score sets.

References
----------
Daniels, H. E. (1950). Rank correlation and population models. Journal of the Royal Statistical Society B
12(2), 171-191.

Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero: Calculating exact p-values
when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), 39.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from simstudy.stats.errors import InvalidParameter

__all__ = ["OrderTestResult", "order_test"]

#: Up to this many trials every order is enumerated and the p-value is exact; above, Monte Carlo. 7! = 5,040 orders
#: are fewer than the default 9,999 random ones, so up to 7 the exact test is also the cheaper (8! = 40,320 is not).
EXACT_MAX_N = 7
#: The largest n: sums of products of doubled midranks and positions stay below 2**53 (up to 2 n**3), so every
#: statistic is an exact integer in float64 and a tie with the observed one is never lost to rounding.
MAX_N = 100_000
# Elements of one block of null statistics or random orders (32 MB of float64): memory stays bounded for any
# number of score sets, and the blocks of orders depend on n and resamples only, so a score set's p-value is the
# same alone or among others, given the same rng.
_BLOCK = 1 << 22


@dataclass(frozen=True)
class OrderTestResult:
    """The result of :func:`order_test`: does the order of the trials show improvement?

    Returned by :func:`order_test` (build it through that function: the constructor does not validate). For a
    2-D input (one score set per row) `statistic` and `pvalue` are arrays and `meaning` a tuple, one per row.

    Parameters
    ----------
    statistic : float or ndarray of float64, shape (reps,)
        Spearman's rank correlation of the scores (midranks, oriented so that higher is better) with trial
        position, in [-1, 1]; positive when later trials score better. NaN when every score is equal.
    pvalue : float or ndarray of float64, shape (reps,)
        The one-sided p-value, in (0, 1]: the probability, were the trials i.i.d. (random search), of a rank
        correlation at least as large as the one observed.
    n : int
        The number of trials in each score set.
    method : str
        ``"exact"`` (every one of the n! orders; n <= :data:`EXACT_MAX_N`) or ``"monte carlo"`` (random orders).
    resamples : int
        How many orders the p-value compares with: n! (exact) or the random orders drawn (``B``, the p-value
        being ``(1 + b) / (1 + B)`` with b of them at least as large as the observed statistic).
    alpha : float
        The level at which `meaning` (and :attr:`flagged`) reads a p-value as "not random search".
    meaning : str or tuple of str
        What the result means, in words (one sentence or two, for a report page).

    See Also
    --------
    order_test : Computes this result.

    Examples
    --------
    >>> res = order_test([0.61, 0.58, 0.70, 0.74, 0.80, 0.83])
    >>> round(res.statistic, 3), round(res.pvalue, 4), res.method, res.flagged
    (0.943, 0.0083, 'exact', True)
    """

    statistic: float | np.ndarray
    pvalue: float | np.ndarray
    n: int
    method: str
    resamples: int
    alpha: float
    meaning: str | tuple[str, ...]

    @property
    def flagged(self) -> bool | np.ndarray:
        """Whether the trials are read as not random search: ``pvalue <= alpha`` (an array for a 2-D input)."""
        flagged = np.asarray(self.pvalue) <= self.alpha
        return bool(flagged) if flagged.ndim == 0 else flagged


def order_test(
    scores,
    *,
    order=None,
    minimize: bool = False,
    rng: int | np.random.Generator | None = None,
    alpha: float = 0.05,
    resamples: int = 9999,
) -> OrderTestResult:
    """Test whether scores can be read as i.i.d. random search: do later trials score better?

    The one-sided permutation test of Spearman's rank correlation between the scores and their trial position
    (the module's docstring says why this test). Under random search every order of the observed scores is
    equally likely, so the p-value is valid (``P(p <= alpha) <= alpha``) at every n >= 2, with any ties and any
    score distribution: exact for n <= :data:`EXACT_MAX_N`, a Monte Carlo permutation p-value above.
    A small p-value says that later trials score better than random search would make likely: the scores then
    come from an adaptive search (or a drifting setup), and the tuning curve of these scores describes resampling
    these particular trials, not what another search of n trials would give. A large one is not proof of random
    search.

    Parameters
    ----------
    scores : array_like of float, shape (n,) or (reps, n)
        One score per trial (or one score set per row, all of the same n >= 2), in trial order unless `order`
        is given. ``inf`` and ``-inf`` are allowed (a diverged run's loss); NaN is refused.
    order : array_like, shape (n,) or that of `scores`, optional
        Keyword-only. Each trial's position: trial numbers or start times (numbers or ``datetime64``), distinct
        within a score set; the scores are read in increasing `order`. Default: the order of `scores`.
    minimize : bool, default False
        Keyword-only. Whether lower scores are better (a loss): improvement is then a downward trend.
    rng : int or numpy.random.Generator, optional
        Keyword-only. Seed or generator of the random orders, needed when n > :data:`EXACT_MAX_N` (Monte Carlo):
        the same seed gives the same p-values, and a score set's p-value does not depend on the other rows (a
        Generator given is advanced by the draws). Unused (and optional) when the test is exact.
    alpha : float, default 0.05
        Keyword-only. The level, in (0, 1), at which the result's words read a p-value as "not random search".
    resamples : int, default 9999
        Keyword-only. The number B >= 1 of random orders when Monte Carlo (the p-value's Monte Carlo standard
        error is at most ``0.5 / sqrt(B)``, 0.005 by default); unused when exact.

    Returns
    -------
    OrderTestResult
        ``statistic`` (the rank correlation), ``pvalue``, ``n``, ``method``, ``resamples``, ``alpha`` and
        ``meaning``: floats and a string for 1-D `scores`, arrays of shape (reps,) and a tuple for 2-D.

    Raises
    ------
    simstudy.stats.errors.InvalidParameter
        (A :class:`ValueError`.) If `scores` is not 1-D or 2-D, has fewer than 2 or more than :data:`MAX_N`
        trials per set, or holds a NaN or a non-number; if `order` has another shape, is not numbers or
        datetimes, or repeats or lacks (NaN) a position within a set; if `minimize` is not a bool, `alpha`
        not in (0, 1), `resamples` not an integer >= 1, or `rng` neither a seed nor a Generator (or missing
        when the test is Monte Carlo). The message starts with the key (``scores[2, 7]`` for one value).

    See Also
    --------
    scipy.stats.permutation_test : The same p-value, one score set at a time.

    References
    ----------
    Daniels, H. E. (1950). Rank correlation and population models. Journal of the Royal Statistical Society B
    12(2), 171-191.

    Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero: Calculating exact
    p-values when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology
    9(1), 39.

    Examples
    --------
    Six trials that improve but for one swap: of the 720 orders, only the sorted one and the five that swap two
    neighbours (as this one does) have so large a rank correlation, so p = 6/720:

    >>> res = order_test([0.61, 0.58, 0.70, 0.74, 0.80, 0.83])
    >>> round(res.pvalue, 4), res.pvalue == 6 / 720, res.method
    (0.0083, True, 'exact')
    >>> print(res.meaning)  # doctest: +ELLIPSIS
    Not random search, by the order of the trials: later trials score better ... of 6 trials would give.

    A loss is better lower (``minimize=True``); ties are ranked together, with the exact null of their orders:

    >>> round(order_test([3.0, 3.0, 2.0, 1.0, 1.0], minimize=True).pvalue, 4)  # 1 of the 5!/(2! 1! 2!) = 30 orders
    0.0333

    Many score sets at once: an i.i.d. one and one whose scores drift upward by half their range over 100
    trials (n = 100 is Monte Carlo: a seed makes it reproducible; 1/10,000 is the smallest p-value of 9,999
    random orders):

    >>> x = np.random.default_rng(3).random((2, 100))
    >>> x[1] += np.linspace(0, 0.5, 100)
    >>> res = order_test(x, rng=1)
    >>> res.method, res.resamples, np.round(res.statistic, 2).tolist(), res.pvalue.tolist(), res.flagged.tolist()
    ('monte carlo', 9999, [0.03, 0.52], [0.3774, 0.0001], [False, True])
    """
    x, gen, resamples = _order_test_iv(scores, order, minimize, rng, alpha, resamples)
    n = x.shape[1]
    # Doubled midranks are integers: every statistic below is an exact integer in float64 (see MAX_N).
    ranks2 = 2.0 * stats.rankdata(-x if minimize else x, axis=1)
    positions = np.arange(n, dtype=np.float64)
    observed = ranks2 @ positions
    if n <= EXACT_MAX_N:
        method, total = "exact", math.factorial(n)
        count = _count_at_least(ranks2, observed, [_all_orders(n)])
        pvalue = count / total
    else:
        method, total = "monte carlo", resamples
        count = _count_at_least(ranks2, observed, _random_orders(n, resamples, gen))
        pvalue = (1.0 + count) / (1.0 + resamples)
    statistic = _spearman(ranks2, positions)
    words = tuple(_meaning(float(r), float(p), n, alpha) for r, p in zip(statistic, pvalue, strict=True))
    if np.ndim(scores) == 1:
        return OrderTestResult(float(statistic[0]), float(pvalue[0]), n, method, total, alpha, words[0])
    return OrderTestResult(statistic, pvalue, n, method, total, alpha, words)


def _order_test_iv(scores, order, minimize, rng, alpha, resamples):
    """The checks of :func:`order_test`: the scores as a 2-D float array in trial order, the generator (None
    when exact) and the number of resamples."""
    try:
        x = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameter("scores", "must be numbers (one score per trial)", type(scores).__name__) from None
    if x.ndim not in (1, 2):
        raise InvalidParameter("scores", "must have shape (n,) or (reps, n)", x.shape)
    one = x.ndim == 1
    x = np.atleast_2d(x)
    n = x.shape[1]
    if not 2 <= n <= MAX_N:
        raise InvalidParameter("scores", f"must hold from 2 to {MAX_N:,} trials per score set (its last axis)", n)
    bad = np.argwhere(np.isnan(x))
    if bad.size:
        where = f"scores[{bad[0][1]}]" if one else f"scores[{bad[0][0]}, {bad[0][1]}]"
        raise InvalidParameter(where, "must not be NaN (a failed or missing trial: drop it first)", float("nan"))
    if order is not None:
        x = _in_order(x, order, one)
    if not isinstance(minimize, (bool, np.bool_)):
        raise InvalidParameter("minimize", "must be True or False", minimize)
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (int, float, np.number)) or not 0 < alpha < 1:
        raise InvalidParameter("alpha", "must be a number strictly between 0 and 1", alpha)
    if isinstance(resamples, (bool, np.bool_)) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise InvalidParameter("resamples", "must be an integer >= 1", resamples)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        rng = np.random.default_rng(int(rng))
    elif rng is not None and not isinstance(rng, np.random.Generator):
        raise InvalidParameter("rng", "must be a seed (an integer >= 0) or a numpy.random.Generator", rng)
    if rng is None and n > EXACT_MAX_N:
        raise InvalidParameter(
            "rng",
            f"is needed for n = {n} > {EXACT_MAX_N} trials (a Monte Carlo permutation test): give a seed or a "
            "numpy.random.Generator, e.g. rng=0",
            None,
        )
    return x, rng, int(resamples)


def _in_order(x: np.ndarray, order, one: bool) -> np.ndarray:
    """The rows of `x` sorted by `order` (checked: numbers or datetimes, the shape of a row or of `x`, distinct
    and present within each row)."""
    pos = np.asarray(order)
    if pos.dtype.kind not in "iufM":
        raise InvalidParameter("order", "must be numbers or datetimes (trial numbers or start times)", pos.dtype.str)
    if pos.shape not in (x.shape[1:], x.shape[-1:] if one else x.shape):
        raise InvalidParameter("order", f"must have the shape of one score set {x.shape[1:]} or of scores", pos.shape)
    pos = np.broadcast_to(np.atleast_2d(pos), x.shape)
    missing = np.isnat(pos) if pos.dtype.kind == "M" else np.isnan(pos) if pos.dtype.kind == "f" else None
    if missing is not None and missing.any():
        i, j = np.argwhere(missing)[0]
        raise InvalidParameter(
            f"order[{j}]" if one else f"order[{i}, {j}]", "must be a position, not missing", pos[i, j].item()
        )
    idx = np.argsort(pos, axis=1, kind="stable")
    sorted_pos = np.take_along_axis(pos, idx, axis=1)
    repeats = np.argwhere(sorted_pos[:, 1:] == sorted_pos[:, :-1])
    if repeats.size:
        i, j = repeats[0]
        raise InvalidParameter(
            "order" if one else f"order[{i}]",
            "must not repeat a position (trials at the same position have no order: break the tie, e.g. by trial "
            "number)",
            sorted_pos[i, j].item(),
        )
    return np.take_along_axis(x, idx, axis=1)


@functools.cache
def _all_orders(n: int) -> np.ndarray:
    """Every permutation of 0..n-1, shape (n!, n), as float64 (read-only: cached)."""
    orders = np.array(list(itertools.permutations(range(n))), dtype=np.float64).reshape(-1, n)
    orders.flags.writeable = False
    return orders


def _random_orders(n: int, resamples: int, rng: np.random.Generator):
    """`resamples` uniform random permutations of 0..n-1 (float64), in blocks whose sizes depend on n only."""
    per_block = max(1, _BLOCK // n)
    base = np.arange(n, dtype=np.float64)
    for start in range(0, resamples, per_block):
        size = min(per_block, resamples - start)
        yield rng.permuted(np.broadcast_to(base, (size, n)), axis=1)


def _count_at_least(ranks2: np.ndarray, observed: np.ndarray, blocks) -> np.ndarray:
    """For each row, how many of the orders in `blocks` give a statistic ``sum_k s(k) ranks2[k]`` at least the
    observed one. A permutation s of the positions gives each score's position s(k): the same distribution as
    permuting the scores over the positions. Exact integer arithmetic, so ">=" is exact."""
    count = np.zeros(ranks2.shape[0], dtype=np.int64)
    for orders in blocks:
        rows = max(1, _BLOCK // orders.shape[0])
        for lo in range(0, ranks2.shape[0], rows):
            null = ranks2[lo : lo + rows] @ orders.T
            count[lo : lo + rows] += np.count_nonzero(null >= observed[lo : lo + rows, None], axis=1)
    return count


def _spearman(ranks2: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Pearson's correlation of each row of (doubled mid)ranks with the positions: Spearman's rho; NaN for a
    row of equal scores (its ranks do not vary)."""
    r = ranks2 - ranks2.mean(axis=1, keepdims=True)
    p = positions - positions.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (r @ p) / np.sqrt(np.einsum("ij,ij->i", r, r) * (p @ p))
    return np.clip(rho, -1.0, 1.0)


def _meaning(rho: float, p: float, n: int, alpha: float) -> str:
    """What one score set's result means, in words."""
    if np.isnan(rho):
        return f"All {n} scores are equal: their order cannot show whether the search improved (p = 1)."
    shown = f"rank correlation of score with trial order {rho:+.2f}, p = {p:.2g}"
    if p <= alpha:
        return (
            f"Not random search, by the order of the trials: later trials score better ({shown}, the chance of so "
            f"strong a trend among the trials of a random search). The tuning curve of these scores then describes "
            f"resampling these particular trials, rather than what another search of {n} trials would give."
        )
    if math.factorial(min(n, 20)) * alpha < 1:
        return (
            f"Too few trials to tell ({shown}): with {n} trials no order is rare enough to be flagged at level "
            f"{alpha:g}."
        )
    return (
        f"No sign that later trials score better ({shown} > {alpha:g}): consistent with i.i.d. random search, "
        "though not proof of it (a search that improves slowly, or depends on its order in another way, can pass)."
    )
