"""Benchmark of the Figure 1 study (Dodge et al. 2021): vectorized kernels vs a per-replicate loop vs the floor.

Run from the repository root:

    python benchmarks/bench_evp_accuracy.py            # full: the loop baseline takes about a minute
    python benchmarks/bench_evp_accuracy.py --quick    # loop baseline on 1,000 replicates, scaled up

Prints, from one run on one machine:
- the study's compute (10,000 replicates, B = 30, n = 1..30, U/V/W, exact truth, summaries with MCSE);
- the same estimates from a per-replicate Python loop (one estimator call per replicate and n, as the
  published tools compute them) on the same samples, and the speed-up;
- the floor: drawing and sorting the same samples, and the study's ratio to it;
- 1,000,000 replicates streamed with save_replicates=false: time and peak traced memory.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from math import comb

import numpy as np
from _timing import best_of
from threadpoolctl import threadpool_limits

from simstudy import config
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import chunk_tasks, task_seed
from simstudy.stats import estimators, metrics, truth
from simstudy.studies import evp_accuracy


def make_config(reps: int, save: bool = False, n_jobs: int = 1) -> config.Config:
    return config.parse({
        "seed": 0,
        "distribution": {"kind": "truncnorm_bag", "seed": 0},
        "budget": {"B": 30, "n": None},
        "estimators": {m: {"method": m} for m in "uvw"},
        "study": {"name": "bench", "kind": "evp_accuracy", "reps": reps, "chunk_reps": 2500,
                  "save_replicates": save},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
    })


# --- the per-replicate baseline: one call per replicate, estimator and n, as published tools do ---------

def loop_v(x, n):
    """Dodge et al. (2019) Eq. 8 for one sample and one n, with the empirical CDF."""
    x = np.sort(x)
    B = len(x)
    cdf = np.arange(1, B + 1) / B
    return float(np.sum(x * (cdf**n - (cdf - 1 / B) ** n)))


def loop_u(x, n):
    """Tang et al. (2020) for one sample and one n, with float binomial coefficients."""
    x = np.sort(x)
    B = len(x)
    total = comb(B, n)
    return float(sum(x[i - 1] * (comb(i, n) - comb(i - 1, n)) / total for i in range(1, B + 1)))


def loop_w(x, n):
    x = np.sort(x)
    B = len(x)
    total = comb(B + n - 1, n)
    return float(sum(x[i - 1] * (comb(i + n - 1, n) - comb(i + n - 2, n)) / total for i in range(1, B + 1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="loop baseline on 1,000 replicates, scaled")
    parser.add_argument("--big", type=int, default=1_000_000, help="replicates of the streaming run")
    args = parser.parse_args()
    # Single-threaded BLAS throughout, as in the runner's workers: every timing below is one core's.
    threadpool_limits(1, user_api="blas")

    reps, B = 10_000, 30
    cfg = make_config(reps)
    dist = cfg.distributions[0].build()
    n = np.arange(1, B + 1)

    # 1. The study's compute: truth, every chunk (draw, sort, estimate, Gram) and the summaries.
    def study_compute():
        th = truth.expected_max(dist, n)
        osm = truth.order_statistic_means(dist, B)
        exact = [estimators.weights(B, m) @ osm for m in "uvw"]
        cell = evp_accuracy._Cell("0" * 16, dist.name, B, n, th, evp_accuracy._stacked_weights(B, n, cfg.estimators))
        work = evp_accuracy._Work(cfg.seed, {dist.name: dist}, {cell.key: cell}, cfg.estimators, False)
        gram = sum(evp_accuracy._run_chunk(work, t)["gram"] for t in chunk_tasks(cell.key, reps, 2500))
        return metrics.performance(gram, th), exact, work, cell

    perf, _, work, cell = study_compute()

    # 2. The floor: drawing and sorting the same samples.
    tasks = chunk_tasks(cell.key, reps, 2500)

    def draw_sort():
        return [sample_sorted(dist, tk.reps, B, rng=np.random.default_rng(task_seed(cfg.seed, cell.key, tk.chunk, 0)))
                for tk in tasks]

    samples = np.concatenate(draw_sort())
    t_study, t_floor = best_of(study_compute, draw_sort)

    # Where the study's time goes (same samples, same single core).
    W = cell.weights
    err = (W @ samples[:1024].T).reshape(B, 3, 1024) - cell.truth[:, None, None]
    out = np.empty((W.shape[0], 1024))
    t_est, t_gram, t_truth = best_of(
        lambda: [np.matmul(W, samples[s : s + 1024].T, out=out) for s in range(0, reps - 1023, 1024)],
        lambda: [metrics.moment_gram(err) for _ in range(reps // 1024)],
        lambda: (truth.expected_max(dist, n), truth.order_statistic_means(dist, B)),
    )

    # 3. The per-replicate loop on the same samples.
    loop_reps = 1_000 if args.quick else reps
    t = time.perf_counter()
    loop_est = np.array([[[f(x, k) for k in n] for f in (loop_u, loop_v, loop_w)] for x in samples[:loop_reps]])
    t_loop = (time.perf_counter() - t) * reps / loop_reps
    vec_est = np.stack([samples[:loop_reps] @ estimators.weights(B, m).T for m in "uvw"], axis=1)
    max_diff = np.abs(loop_est - vec_est).max()

    # 4. The whole run through the runner and file writers (what `simstudy experiment=dodge2021_fig1` does).
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        evp_accuracy.run(make_config(reps, save=True), tmp)
        t_run = time.perf_counter() - t

    # 5. One million replicates, summaries streamed.
    with tempfile.TemporaryDirectory() as tmp:
        tracemalloc.start()
        t = time.perf_counter()
        evp_accuracy.run(make_config(args.big), tmp)
        t_big = time.perf_counter() - t
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    held = args.big * 3 * B * 8

    print(f"Figure 1 study compute (10,000 reps, B=30, n=1..30, U/V/W, exact truth, MCSE summaries): "
          f"{t_study * 1e3:.1f} ms")
    print(f"per-replicate loop ({loop_reps:,} reps{' scaled to 10,000' if args.quick else ''}): "
          f"{t_loop:.1f} s   (max |loop - vectorized| = {max_diff:.1e})")
    print(f"speed-up over the loop: {t_loop / t_study:,.0f}x   (goal >= 1,000x)")
    print(f"floor, draw + sort the same samples: {t_floor * 1e3:.1f} ms;  study / floor = "
          f"{t_study / t_floor:.2f}   (goal <= 3)")
    print(f"  breakdown: estimates (90 dot products of length 30 per replicate) {t_est * 1e3:.1f} ms, "
          f"moment sums for the MCSEs {t_gram * 1e3:.1f} ms, exact truths {t_truth * 1e3:.1f} ms")
    print(f"whole run with replicates.parquet, figure-free (runner + files): {t_run:.2f} s")
    print(f"{args.big:,} replicates, save_replicates=false: {t_big:.1f} s, peak traced memory "
          f"{peak / 2**20:.0f} MiB (holding every estimate would take {held / 2**20:,.0f} MiB)")
    ok = t_loop / t_study >= 1000 and t_study / t_floor <= 3 and t_study < 1 and peak < held / 10
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
