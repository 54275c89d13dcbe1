"""Benchmark of the wrong-conclusion study at paper scale (Dodge et al. 2021, Figure 2).

    python benchmarks/bench_wrong_conclusions.py          # loop baseline on 2,000 draws per budget, scaled

Prints, from one run: the study at paper scale (16 budgets x 50,000 draws x 2 models x U/V/W) with 2 workers
(goal: under 10 s), and its speed against a per-draw Python loop (one estimator call per draw, model and
estimator) on the same draws (goal: at least 100x).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np

from simstudy import config
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import task_seed
from simstudy.stats import estimators, truth
from simstudy.studies import wrong_conclusions


def make_config(reps: int, n_jobs: int) -> config.Config:
    return config.parse({
        "seed": 0,
        "distribution": {"mlp": {"kind": "empirical", "dataset": "reuters_hedwig", "model": "mlp"},
                         "lstm": {"kind": "empirical", "dataset": "reuters_hedwig", "model": "lstm"}},
        "budget": {"B": list(range(15, 31)), "n": None},
        "estimators": {m: {"method": m} for m in "uvw"},
        "study": {"name": "bench", "kind": "wrong_conclusions", "reps": reps, "chunk_reps": 10_000},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
    })


def loop_rates(cfg, cells, loop_reps: int) -> dict:
    """The same draws, one estimator call per draw, model and estimator."""
    a, b = (d.build() for d in cfg.distributions)
    wrong = {}
    for key, B in cells:
        better_a = truth.expected_max(a, B)[0] > truth.expected_max(b, B)[0]
        rng = np.random.default_rng(task_seed(cfg.seed, key, 0, 0))  # chunk 0 holds the first 10,000 draws
        xa = sample_sorted(a, cfg.study.chunk_reps, B, rng=rng)[:loop_reps]
        xb = sample_sorted(b, cfg.study.chunk_reps, B, rng=rng)[:loop_reps]
        for m in "uvw":
            ea = [estimators.expected_max(x, m, n=B)[0] for x in xa]
            eb = [estimators.expected_max(x, m, n=B)[0] for x in xb]
            wrong[(B, m)] = int(np.sum(np.less(ea, eb) if better_a else np.greater(ea, eb)))
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loop-reps", type=int, default=2_000, help="draws per budget in the loop baseline")
    args = parser.parse_args()

    cfg = make_config(50_000, n_jobs=2)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        result = wrong_conclusions.run(cfg, tmp)
        t_study = time.perf_counter() - t
    cells = list(result.summary.drop_duplicates("cell")[["cell", "B"]].itertuples(index=False, name=None))

    # Per draw, one core each: the loop on the first draws of every budget, the study on all of them.
    t = time.perf_counter()
    loop = loop_rates(cfg, cells, args.loop_reps)
    t_loop = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        wrong_conclusions.run(make_config(50_000, n_jobs=1), tmp)
        t_one_core = time.perf_counter() - t
    per_draw_loop = t_loop / (len(cells) * args.loop_reps)
    per_draw_study = t_one_core / (len(cells) * 50_000)
    rates = result.summary[result.summary.measure == "wrong_rate"]
    loop_rate = np.mean([k / args.loop_reps for k in loop.values()])
    print(f"Figure 2 at paper scale (16 budgets x 50,000 draws x 2 models x U/V/W), 2 workers: {t_study:.2f} s "
          f"(goal < 10 s); 1 worker: {t_one_core:.2f} s")
    print(f"per-draw loop: {per_draw_loop * 1e6:.0f} us per draw (all 3 estimators, both models) on "
          f"{args.loop_reps:,} draws per budget; study: {per_draw_study * 1e6:.2f} us per draw (1 worker)")
    print(f"speed-up over the loop: {per_draw_loop / per_draw_study:,.0f}x (goal >= 100x)")
    print(f"mean wrong rate over budgets and U/V/W: study {rates.estimate.mean():.4f}, loop (its draws) "
          f"{loop_rate:.4f}")
    ok = t_study < 10 and per_draw_loop / per_draw_study >= 100
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
