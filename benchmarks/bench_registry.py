"""Benchmark of the study registry's start-up cost: what registering and finding study kinds adds.

Run from the repository root:

    python benchmarks/bench_registry.py

Prints, best of 7 fresh interpreters each (one machine, one run):
- A: ``import simstudy.config`` and the built-in study modules' own imports (pandas, joblib, scipy.stats...:
  what any study command pays to run a study, with or without a registry);
- B: the same, then the registry's work: importing ``simstudy.studies`` (every module registers itself),
  ``registry.study_kinds()`` (scanning the ``simstudy.plugins`` entry-point group), parsing a study's options
  through its schema, and storing every study's schema defaults in Hydra's config store (the CLI's
  ``simstudy.cli.compose.register_studies``);
- B - A: what the registry adds to start-up (goal: under 50 ms), and the entry-point scan alone.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

# The study modules' third-party and simstudy imports, without the study modules themselves (which register).
DEPENDENCIES = ("import simstudy.config, simstudy.cli.main, pandas, scipy.stats, simstudy.engine.runner, simstudy.io, "
                "simstudy.stats.truth, simstudy.stats.bands, simstudy.stats.selection, simstudy.stats.metrics, simstudy.stats.estimators, "
                "simstudy.distributions, simstudy.studies.base")
REGISTRY = ("import simstudy.studies; from simstudy import registry, schema; from simstudy.cli import compose; kinds = registry.study_kinds(); "
            "schema.parse(registry.study('band_coverage').options, {'reps': 100}, 'study.'); "
            "compose.register_studies()")
SCAN = "from importlib.metadata import entry_points; entry_points(group='simstudy.plugins')"


def _seconds(setup: str, timed: str) -> float:
    code = f"{setup}\nimport time\nt = time.perf_counter()\n{timed}\nprint(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> None:
    a, b, scan = [], [], []
    for _ in range(7):  # interleaved, so a drift in the machine's speed affects all alike
        a.append(_seconds("", DEPENDENCIES))
        b.append(_seconds("", f"{DEPENDENCIES}; {REGISTRY}"))
        scan.append(_seconds(DEPENDENCIES, SCAN))
    best_a, best_b = min(a), min(b)
    print(f"A  study modules' dependencies:                  {1e3 * best_a:7.1f} ms (median {1e3 * statistics.median(a):.1f})")
    print(f"B  A + registry (register, scan, parse, store): {1e3 * best_b:7.1f} ms (median {1e3 * statistics.median(b):.1f})")
    print(f"B - A: the registry adds {1e3 * (best_b - best_a):.1f} ms to start-up (goal: under 50 ms)")
    print(f"   of which the simstudy.plugins entry-point scan: {1e3 * min(scan):.1f} ms")


if __name__ == "__main__":
    main()
