"""Benchmark of start-up latency: ``simstudy --help``, ``import simstudy`` and Figure 1 end to end, beside a baseline.

Run from the repository root:

    python benchmarks/bench_startup.py [--baseline REV] [--repeat N]

Each case is timed in fresh interpreters, best of 7 (``--repeat``), in one run: on this checkout, on a baseline
revision (default ``0adac17``, the last main with the painter, a second process the ``simstudy`` script forked to
import matplotlib while the study computed; unpacked with ``git archive REV | tar -x -C DIR`` into a temporary
directory and run with ``PYTHONPATH=DIR``), and on the baseline with ``SIMSTUDY_PAINTER=0`` (its figure drawn in
the main process, as this checkout draws it; the variable means nothing to a revision without the painter). The
runs of the three alternate, so that a change in the machine's load falls on each alike. The ratios printed are
this / baseline (below 1 is faster). The goals:

- ``simstudy --help`` under 0.5 s (no Hydra, pandas, scipy, matplotlib or study module imported);
- ``import simstudy`` under 0.5 s;
- ``simstudy experiment=dodge2021_fig1`` (its preset scale, in a fresh directory each time: nothing resumed)
  under 2.2 s on 2 cores. The goal was 1.5 s (issue 26), approached only with the painter: a process the script
  forked to import matplotlib while the study computed. Issue 35 removed it (one code path for every figure);
  a thread importing matplotlib meanwhile buys nothing, as the GIL runs its imports in turn with the run's.
  Measured by this script on 2 cores (issue 35, ``--repeat 5``, load average about 1.5): this tree 1.82 s,
  0adac17 1.40 s with the painter (ratio 1.30: removing it costs about 0.4 s) and 1.90 s without it (0.96);
  ``--help`` 0.124 s against 0.131 s (0.95), ``import simstudy`` 0.050 s against 0.052 s. Under a heavier load
  the painter does not start (it needed an idle core) and the three agree within the noise.

Wall times depend on the machine's load: compare the checkouts within one run, not across runs. It first
waits (at most 90 s) for the one-minute load average to fall below 1, and byte-compiles both trees
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

#: What is timed: a name, and the arguments of a fresh interpreter (``python -m simstudy.cli`` is the
#: ``simstudy`` script: in the baseline, it forks the painter for a study run).
CASES = {
    "simstudy --help": ["-m", "simstudy.cli", "--help"],
    "import simstudy": ["-c", "import simstudy"],
    "simstudy experiment=dodge2021_fig1": ["-m", "simstudy.cli", "experiment=dodge2021_fig1", "runner.progress=false"],
}
#: The goals, in seconds on 2 cores (the module docstring says where they come from).
GOALS = {"simstudy --help": 0.5, "import simstudy": 0.5, "simstudy experiment=dodge2021_fig1": 2.2}


def _seconds(tree: Path, args: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one fresh interpreter running ``args`` with ``tree`` first on the path, in a new directory."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(tree)}
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


def _unpack(revision: str, into: Path) -> Path:
    """The tree of ``revision`` of this repository, unpacked into ``into`` (no worktree, no checkout touched)."""
    into.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, capture_output=True)
    return into


def _best(variants: dict[str, tuple[Path, dict[str, str]]], repeat: int) -> dict[str, dict[str, float]]:
    """Best wall seconds of each case for each variant (a tree and its environment), the variants' runs alternating."""
    for tree, _ in variants.values():
        # Bytecode first, as an installed package has it (pip compiles at install; a source checkout writes it on
        # first import, unless PYTHONDONTWRITEBYTECODE is set, as in some CI images: then every run would compile).
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "simstudy")], check=True, capture_output=True
        )
    best = {name: dict.fromkeys(CASES, float("inf")) for name in variants}
    for _ in range(repeat):
        for case, args in CASES.items():
            for name, (tree, env) in variants.items():
                best[name][case] = min(best[name][case], _seconds(tree, args, env))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="0adac17", help="git revision to compare with (default 0adac17)")
    parser.add_argument("--repeat", type=int, default=7, help="fresh interpreters per case; the best is kept")
    opts = parser.parse_args()
    _quiet()
    with tempfile.TemporaryDirectory() as tmp:
        base = _unpack(opts.baseline, Path(tmp) / "baseline")
        variants = {"this": (ROOT, {}), "baseline": (base, {}), "no painter": (base, {"SIMSTUDY_PAINTER": "0"})}
        best = _best(variants, opts.repeat)
    imports, figure = _floor(opts.repeat)
    print(f"best of {opts.repeat} fresh interpreters; baseline {opts.baseline}; {os.cpu_count()} cores")
    print(
        f"{'':36s} {'this':>7s} {'baseline':>9s} {'ratio':>6s} {'baseline, SIMSTUDY_PAINTER=0':>29s} {'ratio':>6s} "
        f"{'goal':>5s}"
    )
    for case in CASES:
        here, before, plain = best["this"][case], best["baseline"][case], best["no painter"][case]
        ok = "ok" if here < GOALS[case] else "over"
        print(
            f"{case:36s} {here:6.3f}s {before:8.3f}s {here / before:6.2f} {plain:28.3f}s {here / plain:6.2f} "
            f"{GOALS[case]:4.1f}s {ok}"
        )
    print(
        f"floor of the preset on this machine: {imports + figure:.3f}s = imports {imports:.3f}s "
        f"({FLOOR_IMPORTS.removeprefix('import ')}) + drawing and saving its figure {figure:.3f}s"
    )


if __name__ == "__main__":
    main()
