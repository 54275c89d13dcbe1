"""Benchmark of the i.i.d. check (:func:`simstudy.stats.exchangeability.order_test`), beside scipy's permutation test.

    python benchmarks/bench_exchangeability.py [--sets 10000] [--scipy-sets 20]

Prints, measured in this one run (best of 3 after a warm-up):

- the time for 10,000 score sets of n = 100 trials at the default 9,999 random orders (the size a study measuring
  the test's power will call it with) against its goal (under 5 s on 2 cores), and per set;
- the same sets at n = 5 and 7 (the exact test: every one of the n! orders);
- :func:`scipy.stats.permutation_test` on the same statistic, one set at a time (a few sets, vectorized over the
  orders), and the ratio per set.

A last line says "goals met" or "GOALS NOT MET"; the exit status is 0 or 1.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from _timing import best_of
from scipy import stats

from simstudy.stats.exchangeability import order_test

GOAL_SECONDS = 5.0


def scipy_pvalues(x: np.ndarray) -> np.ndarray:
    """The same one-sided p-values by scipy.stats.permutation_test, one score set at a time."""
    out = []
    for row in x:
        ranks = stats.rankdata(row)
        positions = np.arange(row.size)
        res = stats.permutation_test(
            (ranks,),
            lambda r, axis, positions=positions: np.sum(r * positions, axis=axis),
            permutation_type="pairings",
            vectorized=True,
            alternative="greater",
            n_resamples=9999,
            rng=0,
        )
        out.append(res.pvalue)
    return np.array(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", type=int, default=10_000, help="score sets per call")
    parser.add_argument("--scipy-sets", type=int, default=20, help="score sets timed with scipy.stats.permutation_test")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    x = rng.random((args.sets, 100))
    (t100,) = best_of(lambda: order_test(x, rng=1), number=1, repeat=3)
    ok = t100 < GOAL_SECONDS
    print(
        f"order_test, {args.sets:,} score sets of n = 100, 9,999 random orders: {t100:.2f} s "
        f"(goal < {GOAL_SECONDS:g} s), {t100 / args.sets * 1e6:.0f} us per set"
    )
    for n in (5, 7):
        xn = rng.random((args.sets, n))
        (tn,) = best_of(lambda xn=xn: order_test(xn), number=1, repeat=3)
        orders = math.factorial(n)
        print(f"order_test, {args.sets:,} score sets of n = {n} (exact, all {orders:,} orders): {tn:.2f} s")

    few = x[: args.scipy_sets]
    (ts,) = best_of(lambda: scipy_pvalues(few), number=1, repeat=1)
    per_scipy, per_ours = ts / len(few), t100 / args.sets
    print(
        f"scipy.stats.permutation_test, {len(few)} score sets of n = 100, 9,999 orders: {ts:.2f} s, "
        f"{per_scipy * 1e3:.0f} ms per set ({per_scipy / per_ours:,.0f} times order_test's per set)"
    )
    # A consistency check (informational): the two Monte Carlo p-values of a set differ by a few standard errors.
    ours, theirs = order_test(few, rng=1).pvalue, scipy_pvalues(few)
    print(f"  largest |difference| of the p-values (different random orders): {np.max(np.abs(ours - theirs)):.4f}")

    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
