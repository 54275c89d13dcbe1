"""Benchmark of the confidence bands (Lourie, Cho & He), side by side with the published `opda` when installed.

    python benchmarks/bench_bands.py            # opda's cold starts take minutes at n = 1,024: see --opda-max-n

Prints, from one run on one machine, each against its goal:
- LD highest-density bands from a cold start (empty disk and memory caches) at n = 48 and n = 1,024, with the
  exact simultaneous coverage achieved (goal: 0.05 s and 5 s, coverage exact to 1e-6);
- any band at n = 1,024 with a warm cache (goal: under 1 ms), and the mean tuning-curve band (goal: 5 ms);
- the same with opda when importable (its LD critical value is simulated on each cold call), and the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import timeit

import numpy as np

from simstudy import bands, boundary


def cold(fn) -> float:
    """Seconds for one call after clearing simstudy's caches (disk: a fresh directory; memory: lru caches)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SIMSTUDY_CACHE_DIR"] = tmp
        boundary._ld_intervals_cached.cache_clear()
        bands.ks_epsilon.cache_clear()
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t


def warm(fn, number: int = 20) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opda-max-n", type=int, default=200, help="largest n for opda's cold start (slow)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    data = {n: rng.beta(20, 3, size=n) for n in (48, 200, 1024)}
    ok = True

    results = {}
    for n in (48, 200, 1024):
        y = data[n]
        t = cold(lambda: bands.cdf_bands(y, 0.8, "ld_highest_density", low=0, high=1))
        achieved = boundary.ld_intervals(n, 0.8).achieved
        results[n] = t
        goal = {48: 0.05, 1024: 5.0}.get(n)
        met = goal is None or t < goal
        ok &= met and abs(achieved - 0.8) < 1e-6
        print(f"simstudy LD highest-density, cold, n = {n:>5}: {t:8.3f} s"
              + (f" (goal < {goal} s)" if goal else "") + f"; simultaneous coverage achieved {achieved:.12f}")

    y = data[1024]
    ks = np.arange(1, 1025)
    for method in bands.METHODS:
        t = warm(lambda: bands.cdf_bands(y, 0.8, method, low=0, high=1))
        ok &= t < 1e-3
        print(f"simstudy {method} CDF band, warm, n = 1024: {t * 1e3:7.3f} ms (goal < 1 ms)")
    t_median = warm(lambda: bands.tuning_curve_bands(y, 0.8, "median", ks=ks, low=0, high=1))
    t_mean = warm(lambda: bands.tuning_curve_bands(y, 0.8, "mean", ks=ks, low=0, high=1))
    ok &= t_median < 1e-3 and t_mean < 5e-3
    print(f"simstudy median tuning-curve band, warm, n = 1024: {t_median * 1e3:7.3f} ms (goal < 1 ms)")
    print(f"simstudy mean tuning-curve band, warm, n = 1024, k = 1..1024: {t_mean * 1e3:7.3f} ms (goal < 5 ms)")

    try:
        from opda.nonparametric import EmpiricalDistribution
    except ImportError as exc:
        print(f"opda: skipped ({exc}); `pip install opda` for the side-by-side")
    else:
        for n in (48, 200, 1024):
            if n > args.opda_max_n:
                print(f"opda LD highest-density, cold, n = {n}: skipped (--opda-max-n {args.opda_max_n}; "
                      "it simulates its critical value, minutes at n = 1,024)")
                continue
            t0 = time.perf_counter()
            lo, pt, hi = EmpiricalDistribution.confidence_bands(data[n], 0.8, a=0.0, b=1.0,
                                                                 method="ld_highest_density")
            t_opda = time.perf_counter() - t0
            ours = bands.cdf_bands(data[n], 0.8, low=0, high=1)
            diff = np.max(np.abs(np.asarray(lo.cdf(ours.y)) - ours.lower))
            print(f"opda LD highest-density, first call, n = {n:>5}: {t_opda:8.3f} s, ratio opda / simstudy = "
                  f"{t_opda / results[n]:,.0f}x; max |lower band difference| = {diff:.1e} (opda simulates)")
        # The mean curve from given CDF bands (two curves, lower and upper), the same work on both sides.
        n = min(200, args.opda_max_n)
        lo, pt, hi = EmpiricalDistribution.confidence_bands(data[n], 0.8, a=0.0, b=1.0)
        k = np.arange(1, n + 1)
        t_opda_mean = warm(lambda: (lo.average_tuning_curve(k), hi.average_tuning_curve(k)), number=3)
        cb = bands.cdf_bands(data[n], 0.8, low=0, high=1)
        z = np.concatenate(([0.0], cb.y, [1.0]))
        upper_cdf = np.concatenate(([cb.upper_below], cb.upper, [1.0]))
        lower_cdf = np.concatenate(([0.0], cb.lower, [1.0]))
        t_ours = warm(lambda: (bands.tuning_curve(z, upper_cdf, k, kind="mean"),
                               bands.tuning_curve(z, lower_cdf, k, kind="mean")))
        print(f"mean tuning-curve band from CDF bands, n = {n}, k = 1..{n}, warm: opda {t_opda_mean * 1e3:.2f} ms, "
              f"simstudy {t_ours * 1e3:.3f} ms, ratio {t_opda_mean / t_ours:,.1f}x")
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
