"""Benchmark of the precision stopping rule: a precision-targeted run against a fixed-replicate run at the same reps.

Run from the repository root:

    python benchmarks/bench_precision.py                       # Figure 1, study.precision=0.0001, best of 3
    python benchmarks/bench_precision.py --precision 0.0002 --repeat 1

The study is the Figure 1 preset (``simstudy experiment=dodge2021_fig1``: the truncated-normal bag, B = 30,
n = 1..30, U/V/W, 10,000 replicates, chunks of 2,500), with ``study.precision`` set: its 10,000 replicates are
the pilot, and the cell runs on to the replicates the pilot plans. The reference is the same preset without a
target at ``study.reps`` = the replicates the precision run chose: the cheapest fixed run that reaches the same
precision (had one known the number in advance). Both run in-process (``runner.n_jobs=1``, no figure) into a
fresh directory each time, in turns within each repeat; the best of the repeats is reported, with the ratio
precision / fixed (the goal: at most 1.10), and the two summaries are checked to be identical, bit for bit,
apart from the precision run's two added columns.

What the precision run pays beyond the fixed one: the pilot's reduction to a summary (and the study's set-up,
the exact truths, computed again for the planned run), and the chunk files of the pilot read back once more.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

import simstudy
from simstudy import registry
from simstudy.studies.precision import run_study


def timed(overrides: list[str], scratch: Path):
    """Wall seconds of one whole run of the preset with ``overrides`` into a fresh directory, and its result."""
    cfg = simstudy.compose("dodge2021_fig1", ["runner.n_jobs=1", "runner.progress=false", *overrides])
    out = Path(tempfile.mkdtemp(dir=scratch))
    start = time.perf_counter()
    result = run_study(registry.study(cfg.study.kind), cfg, out)
    seconds = time.perf_counter() - start
    shutil.rmtree(out)
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precision", default="0.0001", help="study.precision (default 0.0001)")
    parser.add_argument("--repeat", type=int, default=3, help="repeats; the best is reported (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        _, first = timed([f"study.precision={args.precision}"], scratch)  # the reps it chooses (and a warm-up)
        reps = int(first.summary.loc[first.summary["reps"] > 0, "reps"].max())
        best = [float("inf"), float("inf")]
        for _ in range(args.repeat):
            for i, overrides in enumerate(([f"study.precision={args.precision}"], [f"study.reps={reps}"])):
                seconds, result = timed(overrides, scratch)
                best[i] = min(best[i], seconds)
                if i == 0:
                    targeted = result.summary
                else:
                    fixed = result.summary
    pd.testing.assert_frame_equal(targeted.drop(columns=["target", "reached_precision"]), fixed, check_exact=True)
    reached = bool(targeted["reached_precision"].all())
    print(f"dodge2021_fig1, study.precision={args.precision}: the pilot of 10000 planned {reps} replicates "
          f"(every target reached: {reached})")  # fmt: skip
    print(f"  precision-targeted run  {best[0]:8.3f} s")
    print(f"  fixed run at reps={reps:<6d} {best[1]:8.3f} s")
    print(f"  ratio precision / fixed {best[0] / best[1]:8.3f}   (goal <= 1.10); summaries identical bit for bit")


if __name__ == "__main__":
    main()
