"""Benchmark: a 2x3 sweep's aggregation (stacked frame and faceted figure) against its goal of under 1 s.

Run from the repository root:

    python benchmarks/bench_sweeps.py             # a 2x3 Figure 1 sweep at 200 replicates, then time its aggregation

The sweep ``simstudy -m experiment=dodge2021_fig1 study.reps=200 budget.B=10,30 distribution.sd=0.05,0.1,0.2`` is
run once into a temporary directory (its jobs are not timed). Then:

- warm: what the sweep's callback does once its jobs have ended, in a process that has imported simstudy,
  pandas and matplotlib (as the sweep's own process has): list the jobs from ``multirun.yaml``, stack the six
  summaries, write summary.parquet/csv and draw and save figure.png/pdf. Best of 5.
- cold: ``simstudy collect sweep_dir=DIR`` as a new process (interpreter start-up and imports included), once.

Each time is printed with its ratio to the 1 s goal.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import best_of
from omegaconf import OmegaConf

GOAL = 1.0
SWEEP = ["-m", "experiment=dodge2021_fig1", "runner.progress=false", "runner.n_jobs=1", "study.reps=200",
         "budget.B=10,30", "distribution.sd=0.05,0.1,0.2"]


def main() -> None:
    import simstudy.cli.main  # noqa: F401 -- imported before timing, as in the sweep's own process
    from simstudy import figures, sweeps  # noqa: F401
    from simstudy.cli.compose import sweep_plan

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "simstudy.cli", *SWEEP], cwd=tmp, check=True, capture_output=True)
        sweep_dir = Path(tmp) / "outputs" / "multirun" / "dodge2021_fig1"
        jobs = [p for p in sweep_dir.iterdir() if p.is_dir()]
        assert len(jobs) == 6, jobs

        def aggregate():
            swept, jobs = sweep_plan(OmegaConf.load(sweep_dir / "multirun.yaml"))
            sweeps.write_sweep(sweep_dir, swept, jobs)

        [warm] = best_of(aggregate, number=1, repeat=5)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "simstudy.cli", "collect", f"sweep_dir={sweep_dir}"], cwd=tmp,
                       check=True, capture_output=True)
        cold = time.perf_counter() - started
    print(f"2x3 sweep aggregation, warm (the callback's): {warm:.3f} s  ({warm / GOAL:.2f} x the {GOAL:g} s goal)")
    print(f"2x3 sweep aggregation, cold (simstudy collect sweep_dir=, new process): {cold:.3f} s  "
          f"({cold / GOAL:.2f} x the {GOAL:g} s goal)")


if __name__ == "__main__":
    main()
