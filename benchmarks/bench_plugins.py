"""Benchmark of plug-in estimators: the Figure 1 study with built-in V vs a plug-in computing V the same way.

Run from the repository root:

    python benchmarks/bench_plugins.py            # 10,000 replicates, B = 30, n = 1..30 (the paper's scale)
    python benchmarks/bench_plugins.py --quick    # 2,000 replicates

Prints, from one run on one machine (one worker, one BLAS thread):
- the Figure 1 study (U, V, W; exact truth; summaries with MCSE) with built-in V, and with V replaced by a
  plug-in (``_target_``) that computes it as the same matrix product, and their ratio (goal: at most 1.5);
- the same plug-in looped over the replicates (``per_sample: true``), for scale;
- the parse-time check of a plug-in (import and two calls on the tiny input);
- the start-up cost of the registry: ``import simstudy.plugins`` in a fresh interpreter that has already
  imported the ``simstudy`` package (as every simstudy command has), best of 5 (goal: under 50 ms); and, for
  scale, after numpy alone (then it pays for the package's own imports, scipy's among them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _timing import best_of
from threadpoolctl import threadpool_limits

from simstudy import config
from simstudy.studies import evp_accuracy

PLUGIN = """
from simstudy.stats.estimators import weights

def v(sorted_scores, n):
    return sorted_scores @ weights(sorted_scores.shape[1], "v", n).T

def v_one(scores, n):
    return weights(scores.size, "v", n) @ scores
"""


def make_config(reps: int, v: dict) -> config.Config:
    return config.parse({
        "seed": 0,
        "distribution": {"kind": "truncnorm_bag", "seed": 0},
        "budget": {"B": 30, "n": None},
        "estimators": {"u": {"method": "u"}, "v": v, "w": {"method": "w"}},
        "study": {"name": "bench", "kind": "evp_accuracy", "reps": reps, "chunk_reps": 2500,
                  "save_replicates": False},
        "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    })


def study_seconds(cfg: config.Config, root: Path) -> float:
    def run():
        with tempfile.TemporaryDirectory(dir=root) as out:  # a fresh run each time: nothing resumed
            evp_accuracy.run(cfg, out)
    return run


def import_seconds(before: str) -> float:
    code = f"import {before}, time; t = time.perf_counter(); import simstudy.plugins; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
                                  ).stdout) for _ in range(5)]
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    reps = 2000 if parser.parse_args().quick else 10_000
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(1):
        root = Path(tmp)
        (root / "bench_v_plugin.py").write_text(textwrap.dedent(PLUGIN))
        os.chdir(root)  # the plug-in module is imported from the working directory, as simstudy does
        builtin = make_config(reps, {"method": "v"})
        start = time.perf_counter()
        plugin = make_config(reps, {"_target_": "bench_v_plugin.v"})
        check = time.perf_counter() - start
        looped = make_config(reps // 10, {"_target_": "bench_v_plugin.v_one", "per_sample": True})
        t_builtin, t_plugin = best_of(study_seconds(builtin, root), study_seconds(plugin, root), number=1,
                                      repeat=5)
        (t_looped,) = best_of(study_seconds(looped, root), number=1, repeat=2)
    print(f"Figure 1 study, {reps:,} replicates, B = 30, n = 1..30, U/V/W (one worker, one thread):")
    print(f"  built-in V                   {t_builtin:8.3f} s")
    print(f"  plug-in V (_target_)         {t_plugin:8.3f} s   ratio {t_plugin / t_builtin:.2f} (goal <= 1.5)")
    print(f"  plug-in V, per_sample: true  {t_looped * 10:8.3f} s   (measured on {reps // 10:,} replicates, x10)")
    print(f"parse-time check of the plug-in (import, two calls on 3 x 5 scores): {1e3 * check:.1f} ms")
    print(f"import simstudy.plugins after simstudy (what the registry adds to start-up): "
          f"{1e3 * import_seconds('simstudy'):.2f} ms (goal < 50)")
    print(f"import simstudy.plugins after numpy only (with the package's own imports): "
          f"{1e3 * import_seconds('numpy'):.0f} ms")


if __name__ == "__main__":
    main()
