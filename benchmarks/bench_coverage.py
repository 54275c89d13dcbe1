"""Benchmark of the coverage audits (Lourie et al. Figures 5 and 4), side by side with `opda` when installed.

    python benchmarks/bench_coverage.py             # about a minute and a half
    python benchmarks/bench_coverage.py --skip-fig4

Prints, from one run on one machine, each against its goal:
- Figure 5 for one model (12 nominal levels x 1,024 rounds x n = 48, LD highest-density bands, the whole
  curve checked every round) from a cold start (empty band caches): goal under 5 s on 2 cores; and the same
  work with opda's bands (its band cache warm after the first call per level, as in its notebooks),
  measured on a subset of rounds and scaled, with the ratio;
- Figure 4 at paper scale (4,096 rounds x 4,096 resamples, n = 50, U and V, MLP and LSTM): goal under 5 min.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from simstudy import config
from simstudy.stats import bands, boundary
from simstudy.studies import band_coverage, bootstrap_coverage

LEVELS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99]
DEBERTAV3 = {"kind": "kde", "dataset": "deberta_mnli", "model": "debertav3", "bw_factor": 0.05, "bw_of": "data"}


def parse(study: dict, distribution: dict, n_jobs: int = 2, estimators=("v",)) -> config.Config:
    return config.parse({"seed": 0, "distribution": distribution, "budget": {"B": 2},
                         "estimators": {m: {"method": m} for m in estimators},
                         "study": study, "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False}})


def opda_seconds_per_round(dist, rounds: int = 32) -> tuple[float, float]:
    """opda: build the LD highest-density bands for one round at each level and check the CDF band (warm)."""
    from opda.nonparametric import EmpiricalDistribution

    rng = np.random.default_rng(1)
    ys = [dist.sample(48, rng=rng) for _ in range(rounds)]
    t = time.perf_counter()
    for level in LEVELS:  # first call per level: opda simulates (then caches) its critical value
        EmpiricalDistribution.confidence_bands(ys[0], level, a=0.0, b=1.0)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    for y in ys:
        F = dist.cdf(np.sort(y))
        for level in LEVELS:
            lo, _, hi = EmpiricalDistribution.confidence_bands(y, level, a=0.0, b=1.0)
            np.all((lo.cdf(np.sort(y)) <= F) & (F <= hi.cdf(np.sort(y))))
    return cold, (time.perf_counter() - t) / rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-fig4", action="store_true")
    args = parser.parse_args()
    ok = True

    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        os.environ["SIMSTUDY_CACHE_DIR"] = cache
        boundary._ld_intervals_cached.cache_clear()
        bands.ks_epsilon.cache_clear()
        cfg = parse({"name": "fig5", "kind": "band_coverage", "reps": 1024, "chunk_reps": 512, "sample_size": 48,
                     "levels": LEVELS, "methods": ["ld_highest_density"]}, {"debertav3": DEBERTAV3})
        t = time.perf_counter()
        summary = band_coverage.run(cfg, out).summary
        t_fig5 = time.perf_counter() - t
    curve = summary[summary.check == "curve"]
    inside = int(((curve.ci_low <= curve.nominal) & (curve.nominal <= curve.ci_high)).sum())
    ok &= t_fig5 < 5
    print(f"Figure 5, one model (12 levels x 1,024 rounds x n = 48, LD highest-density), cold, 2 workers: "
          f"{t_fig5:.2f} s (goal < 5 s); nominal inside the 99% CP interval at {inside} of 12 levels")

    try:
        cold, per_round = opda_seconds_per_round(cfg.distributions[0].build())
    except ImportError as exc:
        print(f"opda: skipped ({exc}); `pip install opda` for the side-by-side")
    else:
        t_opda = cold + per_round * 1024
        print(f"opda, same work: {cold:.1f} s for its 12 critical values + {per_round * 1e3:.1f} ms per round "
              f"(12 levels, warm cache) x 1,024 rounds = {t_opda:.0f} s; ratio opda / simstudy = {t_opda / t_fig5:,.0f}x")

    if not args.skip_fig4:
        kde = {"mlp": {"kind": "kde", "dataset": "reuters_hedwig", "model": "mlp", "bw_factor": 0.0125},
               "lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}}
        cfg4 = parse({"name": "fig4", "kind": "bootstrap_coverage", "reps": 4096, "chunk_reps": 256,
                      "sample_size": 50, "resamples": 4096}, kde, estimators=("u", "v"))
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            bootstrap_coverage.run(cfg4, out)
            t_fig4 = time.perf_counter() - t
        ok &= t_fig4 < 300
        print(f"Figure 4 at paper scale (4,096 rounds x 4,096 resamples, n = 50, U/V, MLP and LSTM), 2 workers: "
              f"{t_fig4:.0f} s (goal < 300 s)")
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
