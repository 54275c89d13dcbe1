"""Benchmark of start-up latency (issue 26): ``simstudy --help``, ``import simstudy`` and a preset end to end.

Run from the repository root:

    python benchmarks/bench_startup.py [--baseline REV] [--repeat N]

Each of the three is timed in fresh interpreters, best of 7 (``--repeat``), on this checkout and on a baseline
checkout in the same run (default ``8f237ca``, the main before issue 26: checked out with
``git worktree add --detach`` into a temporary directory, run with ``PYTHONPATH`` pointing there, and removed
afterwards), and the ratios printed (this / baseline; below 1 is faster). The goals:

- ``simstudy --help`` under 0.5 s (no Hydra, pandas, scipy or study module imported);
- ``import simstudy`` under 0.5 s;
- ``simstudy experiment=dodge2021_fig1`` (its preset scale) under 1.5 s on 2 cores, in a fresh directory each
  time (nothing resumed).

Wall times depend on the machine's load: compare the two checkouts within one run, not across runs. It first
waits (at most 90 s) for the one-minute load average to fall below 1, and byte-compiles both checkouts
(``compileall``), as an installed package is.

It also prints the preset's floor on this machine: a fresh interpreter that only imports what the run cannot
do without (pandas for the summary, pyarrow for its parquet, scipy.special for the bag, Hydra to compose,
matplotlib to draw), plus drawing and saving the preset's figure from its summary (best of ``--repeat``, in
one process). No change inside simstudy can take the preset below that floor.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What is timed: a name, and the arguments of a fresh interpreter.
CASES = {
    "simstudy --help": ["-m", "simstudy.cli", "--help"],
    "import simstudy": ["-c", "import simstudy"],
    "simstudy experiment=dodge2021_fig1": ["-m", "simstudy.cli", "experiment=dodge2021_fig1", "runner.progress=false"],
}
GOALS = {"simstudy --help": 0.5, "import simstudy": 0.5, "simstudy experiment=dodge2021_fig1": 1.5}


def _seconds(tree: Path, args: list[str]) -> float:
    """Wall seconds of one fresh interpreter running ``args`` with ``tree`` first on the path, in a new directory."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as cwd:
        started = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=cwd, env=env, check=True, capture_output=True)
        return time.perf_counter() - started


#: What a Figure 1 run imports and cannot do without (the floor's first part).
FLOOR_IMPORTS = "import numpy, pandas, pyarrow.parquet, scipy.special, hydra.compose, omegaconf, matplotlib.pyplot"

#: Draws and saves the Figure 1 PNG from a small run's summary, best of argv[1] (the floor's second part).
FLOOR_FIGURE = """
import sys, tempfile, time
from pathlib import Path
import simstudy
from simstudy.io import save_figure
from simstudy.studies.evp_accuracy import evp_accuracy_figure
with tempfile.TemporaryDirectory() as d:
    summary = simstudy.run("dodge2021_fig1", ["runner.figures=[]", "runner.progress=false"], out_dir=d).summary
    best = float("inf")
    for _ in range(int(sys.argv[1])):
        started = time.perf_counter()
        save_figure(evp_accuracy_figure(summary), Path(d) / "figure.png", dpi=150)
        best = min(best, time.perf_counter() - started)
print(best)
"""


def _floor(repeat: int) -> tuple[float, float]:
    """Seconds of the floor's imports (fresh interpreters, best of ``repeat``) and of drawing the figure."""
    imports = min(_seconds(ROOT, ["-c", FLOOR_IMPORTS]) for _ in range(repeat))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", FLOOR_FIGURE, str(repeat)], env=env, check=True, capture_output=True, text=True
    )
    return imports, float(out.stdout.split()[-1])


def _quiet(below: float = 1.0, wait: float = 90.0) -> None:
    """Wait (at most ``wait`` seconds) for the one-minute load average to fall below ``below``: latency measured
    just after other work (CI's test lanes) is that work's, not the command's. Says how long it waited."""
    start = time.perf_counter()
    while os.getloadavg()[0] >= below and time.perf_counter() - start < wait:
        time.sleep(2)
    load = os.getloadavg()[0]
    print(f"waited {time.perf_counter() - start:.0f} s for a quiet machine (load average {load:.2f})")


def _best(tree: Path, repeat: int) -> dict[str, float]:
    # Bytecode first, as an installed package has it (pip compiles at install; a source checkout writes it on
    # first import, unless PYTHONDONTWRITEBYTECODE is set, as in some CI images: then every run would compile).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "simstudy")], check=True, capture_output=True)
    return {name: min(_seconds(tree, args) for _ in range(repeat)) for name, args in CASES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="8f237ca", help="git revision to compare with (default 8f237ca)")
    parser.add_argument("--repeat", type=int, default=7, help="fresh interpreters per case; the best is kept")
    opts = parser.parse_args()
    _quiet()
    here = _best(ROOT, opts.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), opts.baseline],
            check=True,
            capture_output=True,
        )
        try:
            before = _best(base, opts.repeat)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
    imports, figure = _floor(opts.repeat)
    print(f"best of {opts.repeat} fresh interpreters; baseline {opts.baseline}; {os.cpu_count()} cores")
    print(f"{'':40s} {'this':>8s} {'baseline':>9s} {'ratio':>6s} {'goal':>6s}")
    for name in CASES:
        ok = "ok" if here[name] < GOALS[name] else "over"
        print(
            f"{name:40s} {here[name]:7.3f}s {before[name]:8.3f}s {here[name] / before[name]:6.2f} "
            f"{GOALS[name]:5.1f}s {ok}"
        )
    print(
        f"floor of the preset on this machine: {imports + figure:.3f}s = imports {imports:.3f}s "
        f"({FLOOR_IMPORTS.removeprefix('import ')}) + drawing and saving its figure {figure:.3f}s"
    )


if __name__ == "__main__":
    main()
