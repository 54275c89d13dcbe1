"""Benchmark of the confidence bands (Lourie, Cho & He), side by side with the published `opda` when importable.

Run from the repository root (opda's cold starts simulate its critical value: a few minutes in all):

    python benchmarks/bench_bands.py

Prints, from one run on one machine, each measurement beside its goal (confidence 0.8, Beta(20, 3) scores):
- LD highest-density CDF bands from a cold start (empty disk and memory caches) at n = 48, 200 and 1,024, and
  the exact simultaneous coverage achieved (goals: n = 48 under 0.05 s, n = 1,024 under 5 s, |achieved -
  0.8| < 1e-6);
- every CDF band method and the median tuning-curve band at n = 1,024 with a warm cache (goal: under 1 ms),
  and the mean tuning-curve band, k = 1..1,024 (goal: under 5 ms);
- with opda: the same on the same scores (cold: its in-memory cache cleared; warm: a cached call) and the
  ratios opda / simstudy; opda's cold n = 1,024 is skipped if n = 200 predicts it over 200 s;
- a consistency check (informational): the largest difference between the two libraries' LD highest-density
  bands at the order statistics, and the exact simultaneous coverage of opda's (simulated) band.
A last line says "goals met" or "GOALS NOT MET" (simstudy's goals only); the exit status is 0 or 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from _timing import best_of

from simstudy.stats import bands, boundary

CONF, SIZES, OPDA_BUDGET = 0.8, (48, 200, 1024), 200.0  # seconds allowed for one opda cold start


def once(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def simstudy_cold(y) -> float:
    """One LD highest-density band with empty caches: a fresh cache directory and cleared lru caches."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SIMSTUDY_CACHE_DIR"] = tmp
        boundary._ld_intervals_cached.cache_clear()
        return once(lambda: bands.cdf_bands(y, CONF, "ld_highest_density", low=0, high=1))


def simstudy_calls(y) -> dict:
    calls = {m: (lambda m=m: bands.cdf_bands(y, CONF, m, low=0, high=1)) for m in bands.METHODS}
    for kind in ("median", "mean"):
        calls[kind] = lambda kind=kind: bands.tuning_curve_bands(y, CONF, kind, low=0, high=1)
    return calls


def opda_calls(ED, y, gen) -> dict:
    """opda's bands: its cache is keyed by the generator object, so every call passes the same ``gen``."""
    def cb(method="ld_highest_density"):
        return ED.confidence_bands(y, CONF, a=0.0, b=1.0, generator=gen, method=method)

    ks = np.arange(1, y.size + 1)
    calls = {m: (lambda m=m: cb(m)) for m in bands.METHODS}
    calls["median"] = lambda: [d.quantile_tuning_curve(ks) for d in cb()]
    calls["mean"] = lambda: [d.average_tuning_curve(ks) for d in cb()]
    return calls


def main() -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    data = {n: np.random.default_rng(0).beta(20, 3, size=n) for n in SIZES}
    try:
        import opda.nonparametric as onp
    except ImportError as exc:
        onp = None
        print(f"opda: skipped, not importable ({exc}); `pip install opda` for the side-by-side")
    gen = np.random.default_rng(1)
    simstudy_cold(data[48][:16])  # pay one-time costs (lazy imports, first calls) outside the timings
    if onp:
        onp.EmpiricalDistribution.confidence_bands(data[48][:16], CONF, a=0.0, b=1.0, generator=gen)

    # 1. Cold starts, and the consistency check against opda's simulated band.
    ok, cold = True, {}
    for n in SIZES:
        y, goal = data[n], {48: 0.05, 1024: 5.0}.get(n)
        cold[n] = t = simstudy_cold(y)
        achieved = boundary.ld_intervals(n, CONF).achieved
        ok &= (goal is None or t < goal) and abs(achieved - CONF) < 1e-6
        print(f"simstudy LD highest-density, cold, n = {n:>4}: {t:7.3f} s" + (f" (goal < {goal} s)" if goal else " "*15)
              + f"; exact simultaneous coverage {achieved:.12f} (goal |achieved - 0.8| < 1e-6)")
        if not onp:
            continue
        if n == 1024 and cold[200, "opda"] * 1024 / 200 * 1.5 > OPDA_BUDGET:
            print(f"opda     LD highest-density, cold, n = 1024: skipped, n = 200 took {cold[200, 'opda']:.0f} s,"
                  f" which predicts more than {OPDA_BUDGET:.0f} s; opda measured at n = 48 and 200 only")
            continue
        onp._ld_band_weights.cache_clear()
        cold[n, "opda"] = t_o = once(opda_calls(onp.EmpiricalDistribution, y, gen)["ld_highest_density"])
        lo, _, hi = opda_calls(onp.EmpiricalDistribution, y, gen)["ld_highest_density"]()
        ours = bands.cdf_bands(y, CONF, low=0, high=1)
        diff = max(np.abs(lo.cdf(ours.y) - ours.lower).max(), np.abs(hi.cdf(ours.y) - ours.upper).max())
        u = np.concatenate(([hi.cdf(0.0)], hi.cdf(ours.y)[:-1]))  # opda's bounds on F(Y_(1)), ..., F(Y_(n))
        cov = boundary.simultaneous_coverage(np.maximum.accumulate(lo.cdf(ours.y)), np.maximum.accumulate(u))
        print(f"opda     LD highest-density, cold, n = {n:>4}: {t_o:7.3f} s, opda / simstudy = {t_o / cold[n]:,.0f}x;"
              f" max |band difference| {diff:.1e}, exact coverage of opda's band {cov:.4f} (0.8 +/- "
              f"{np.sqrt(CONF * (1 - CONF) / 100_000):.4f}, 1 Monte Carlo s.e. of its 100,000 trials)")

    # 2-3. Warm: every CDF band, the median and the mean tuning-curve bands (simstudy's goals at n = 1,024).
    n = 1024 if not onp or (1024, "opda") in cold else 200
    if onp:  # opda's LD equal-tailed cache is filled here, outside the timings
        t_fill = once(opda_calls(onp.EmpiricalDistribution, data[n], gen)["ld_equal_tailed"])
        print(f"(opda LD equal-tailed, cold, n = {n}, filling its cache for the warm timings: {t_fill:.1f} s)")
    for name, label, goal in [(m, f"{m} CDF band", 1e-3) for m in bands.METHODS] + [
            ("median", "median tuning-curve band", 1e-3), ("mean", "mean tuning-curve band, k = 1..n", 5e-3)]:
        t_s, = best_of(simstudy_calls(data[1024])[name], number=20, repeat=7)
        ok &= t_s < goal
        line = f"simstudy {label}, warm, n = 1024: {t_s * 1e3:7.3f} ms (goal < {goal * 1e3:.0f} ms)"
        if onp:
            o_fn = opda_calls(onp.EmpiricalDistribution, data[n], gen)[name]
            t_s2, t_o = best_of(simstudy_calls(data[n])[name], o_fn, number=3, repeat=7)
            line += f";  opda at n = {n}: {t_o * 1e3:8.3f} ms, opda / simstudy = {t_o / t_s2:,.1f}x"
        print(line)
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
