"""Benchmark of model selection (Moss et al. 2019), beside the published package `fiesta-nlp` when importable.

    python benchmarks/bench_selection.py [--fiesta-ttts-runs 1] [--fiesta-sh-runs 300]

Prints, measured in this one run on 2 workers:

- Figure 4 at paper scale (10 budgets x 10,000 runs x sequential halving and non-adaptive, 12 TDSA models)
  against its goal (under 10 s), and sequential halving per run against `fiesta.sequential_halving`;
- Table 2 at paper scale (delta 0.05 / 0.1 / 0.2 x 500 runs x TTTS and non-adaptive, 8 TDSA models) against
  its goal (under 2 minutes), and Table 3 (batch Thompson sampling, batches of 4 and 8);
- one step of pi (8 models): the package's 800,000-draw Monte Carlo against simstudy's quadrature, and whole
  TTTS runs at delta = 0.05 of `fiesta.TTTS` (one by default: about a minute each) against simstudy's per-run
  cost inside the Table 2 study.

Both packages draw each evaluation from the same bags of 500 recorded F1 scores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np

from simstudy import config
from simstudy.stats import posterior, selection
from simstudy.studies import fixed_confidence, model_selection

MODELS_12 = ["atae", "atae_50", "atae_200", "ian", "ian_50", "ian_200", "lstm", "lstm_50", "lstm_200", "tdlstm",
             "tdlstm_50", "tdlstm_200"]
MODELS_8 = ["atae", "atae_50", "ian", "ian_50", "lstm", "lstm_50", "tdlstm", "tdlstm_50"]


def make_config(models, study):
    return config.parse({
        "seed": 0, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": 2, "backend": "loky", "progress": False},
        "distribution": {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m} for m in models},
        "study": study,
    })


def timed_study(run, cfg):
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        summary = run(cfg, out).summary
        return summary, time.perf_counter() - t


def fiesta_functions(arms, rng):
    """`fiesta-nlp` model functions ``f(train, test) -> score``: one draw from the model's recorded scores."""
    return [(lambda arm: (lambda train, test: float(arm.sample(1, rng=rng)[0])))(arm) for arm in arms]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fiesta-ttts-runs", type=int, default=1, help="fiesta.TTTS runs at delta=0.05 (~1 min each)")
    parser.add_argument("--fiesta-sh-runs", type=int, default=300, help="fiesta.sequential_halving runs")
    args = parser.parse_args()
    try:
        import fiesta
    except ImportError as exc:
        fiesta = None
        print(f"fiesta-nlp: not importable ({exc}); ratios against it are skipped")
    ok = True

    # --- Fixed budget: Figure 4 -------------------------------------------------------------------------
    cfg = make_config(MODELS_12, {"name": "fig4", "kind": "model_selection", "reps": 10_000, "chunk_reps": 5000,
                                  "budgets": [48, 72, 96, 120, 144, 168, 204, 240, 300, 360]})
    summary, t_fig4 = timed_study(model_selection.run, cfg)
    p = summary[(summary.measure == "p_correct") & (summary.budget == 204)].set_index("algorithm")
    print(f"Figure 4 at paper scale (10 budgets x 10,000 runs x 2 algorithms), 2 workers: {t_fig4:.2f} s (goal < 10 s)")
    print(f"  budget 204: sequential halving {p.loc['sequential_halving', 'estimate']:.4f} "
          f"(MCSE {p.loc['sequential_halving', 'mcse']:.4f}), non-adaptive {p.loc['non_adaptive', 'estimate']:.4f} "
          f"(MCSE {p.loc['non_adaptive', 'mcse']:.4f}); the paper: about 0.99 and 0.85")
    ok &= t_fig4 < 10
    arms12 = [d.build() for d in cfg.distributions]
    rng = np.random.default_rng(1)
    t = time.perf_counter()
    selection.sequential_halving_runs(arms12, 204, 10_000, rng=rng)
    per_run_vec = (time.perf_counter() - t) / 10_000
    line = f"  sequential halving per run (budget 204): simstudy vectorized {per_run_vec * 1e6:.2f} us"
    if fiesta is not None and args.fiesta_sh_runs:
        functions = fiesta_functions(arms12, rng)
        t = time.perf_counter()
        for _ in range(args.fiesta_sh_runs):
            fiesta.sequential_halving([{}], functions, lambda data: (data, data), 204)
        per_run_fiesta = (time.perf_counter() - t) / args.fiesta_sh_runs
        line += f", fiesta-nlp {per_run_fiesta * 1e3:.3f} ms ({per_run_fiesta / per_run_vec:,.0f}x)"
    print(line)

    # --- Fixed confidence: Tables 2 and 3 -----------------------------------------------------------------
    base = {"kind": "fixed_confidence", "reps": 500, "chunk_reps": 125, "deltas": [0.05, 0.1, 0.2]}
    cfg2 = make_config(MODELS_8, {**base, "name": "table2", "algorithms": ["ttts", "non_adaptive"]})
    table2, t_table2 = timed_study(fixed_confidence.run, cfg2)
    print(f"Table 2 at paper scale (3 deltas x 500 runs x TTTS and non-adaptive), 2 workers: {t_table2:.1f} s "
          f"(goal < 120 s)")
    print(fixed_confidence.paper_table(table2).to_string(index=False))
    print("  the paper: non-adaptive mean 281 / 206 / 128, TTTS mean 130 / 96 / 65 at delta 0.05 / 0.1 / 0.2")
    ok &= t_table2 < 120
    # The stopping rule's screen (an exact upper bound on pi; the quadrature only where it reaches a bar): TTTS
    # with and without it, same seed, side by side; the decisions, hence every number, must be identical.
    from simstudy.stats.selection import fixed_confidence as fc

    arms8 = [d.build() for d in cfg2.distributions]
    timings, results = {}, {}
    for label, margin in (("screened", fc._SCREEN_MARGIN), ("quadrature every step", float("inf"))):
        saved, fc._SCREEN_MARGIN = fc._SCREEN_MARGIN, margin
        try:
            t = time.perf_counter()
            results[label] = fc.fixed_confidence_runs(arms8, [0.05, 0.1, 0.2], 125, algorithm="ttts",
                                                      rng=np.random.default_rng(4))
            timings[label] = time.perf_counter() - t
        finally:
            fc._SCREEN_MARGIN = saved
    same = all(np.array_equal(getattr(results["screened"], f), getattr(results["quadrature every step"], f))
               for f in ("evaluations", "chosen", "capped", "per_arm"))
    print(f"  TTTS, 125 runs to delta 0.05, one worker: screened {timings['screened']:.2f} s, quadrature every "
          f"step {timings['quadrature every step']:.2f} s "
          f"({timings['quadrature every step'] / timings['screened']:.1f}x); identical results: {same}")
    ok &= same
    cfg3 = make_config(MODELS_8, {**base, "name": "table3", "algorithms": ["batch_thompson"], "batch_sizes": [4, 8]})
    table3, t_table3 = timed_study(fixed_confidence.run, cfg3)
    print(f"Table 3 at paper scale (3 deltas x 500 runs x BTS 4 and 8), 2 workers: {t_table3:.1f} s")
    print(fixed_confidence.paper_table(table3).to_string(index=False))

    # --- pi per step, and whole TTTS runs against fiesta-nlp -----------------------------------------------
    rng = np.random.default_rng(2)
    x = np.stack([a.sample(20, rng=rng) for a in arms8])
    loc, scale, df = posterior.posterior(x.sum(1), (x * x).sum(1), np.full(8, 20))
    t = time.perf_counter()
    for _ in range(20):
        posterior.prob_best(loc, scale, df)
    t_quad = (time.perf_counter() - t) / 20
    t = time.perf_counter()
    posterior.prob_best_mc(loc, scale, df, draws=800_000, rng=rng)
    t_mc = time.perf_counter() - t
    print(f"pi for 8 models, one step: quadrature (all 8) {t_quad * 1e3:.2f} ms, Monte Carlo 800,000 draws "
          f"{t_mc * 1e3:.0f} ms ({t_mc / t_quad:,.0f}x)", end="")
    if fiesta is not None:
        from fiesta.util import belief_calc

        np.random.seed(0)
        t = time.perf_counter()
        belief_calc(loc, scale**2 * (df), np.full(8, 20.0), 800_000)
        print(f"; fiesta.util.belief_calc {1e3 * (time.perf_counter() - t):.0f} ms")
    else:
        print()
    ttts_share = t_table2 * 2  # 2 workers' wall time, as CPU seconds, for 500 runs of both methods
    per_run_ours = ttts_share / 500
    print(f"  simstudy: {per_run_ours:.3f} CPU s per run of TTTS and non-adaptive together, every delta")
    if fiesta is not None and args.fiesta_ttts_runs:
        np.random.seed(0)
        functions = fiesta_functions(arms8, np.random.default_rng(3))
        t = time.perf_counter()
        evaluations = [fiesta.TTTS([{}], functions, lambda data: (data, data), 0.05)[2]
                       for _ in range(args.fiesta_ttts_runs)]
        per_run_fiesta = (time.perf_counter() - t) / args.fiesta_ttts_runs
        print(f"  fiesta.TTTS at delta 0.05: {per_run_fiesta:.1f} s per run (evaluations {evaluations}); "
              f"{per_run_fiesta / per_run_ours:,.0f}x simstudy's per-run cost; Table 2's 1,500 TTTS runs alone "
              f"would take it about {per_run_fiesta * 1500 / 3600:.1f} h")
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
