"""Benchmark: the memory and time of ``simstudy curve``'s computation (:func:`simstudy.tables.evp_curves`).

Run from the repository root (about half a minute):

    python benchmarks/bench_memory.py

Each measurement runs in a fresh subprocess (so that one's peak does not hide another's) and reports the
wall time of ``evp_curves`` (sort, V curve, plug-in SD, the DataFrame) and the process's peak resident memory
(``ru_maxrss``) above what it held after the imports. Printed side by side:
- the windowed path (this version) at B = 10^4, 10^5 and 10^6 uniform scores, for V and for U;
- the matrix path that ``evp_curves`` took before (``sort(x) @ weights(B).T`` for the curve and the SD) at
  B = 10^4, the largest it can do in reasonable memory (it is O(B^2): 10^6 would need 8 TB), with the
  ratios matrix / windowed.
Goal: B = 10^6 (V) under 1 GB peak and under 10 s. A last line says "goals met" or "GOALS NOT MET"; the
exit status is 0 or 1.
"""

from __future__ import annotations

import json
import subprocess
import sys

GOAL_BYTES, GOAL_SECONDS = 1 << 30, 10.0


def _child(path: str, B: int, method: str) -> None:
    import resource
    import time

    import numpy as np

    from simstudy import tables
    from simstudy.stats import estimators

    x = np.random.default_rng(B).uniform(size=B)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if path == "windowed":
        tables.evp_curves({"m": x}, method=method)
    else:  # the former evp_curves: one len(n) x B matrix for the curve, the V matrix again for the SD
        xs = np.sort(x)
        w = estimators._weights_cached(B, method, tuple(range(1, B + 1)))
        mean = xs @ w.T
        v = estimators._weights_cached(B, "v", tuple(range(1, B + 1)))
        c = xs - xs.mean()
        np.sqrt(np.clip((c * c) @ v.T - (c @ v.T) ** 2, 0, None)) + mean
    seconds = time.perf_counter() - started
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024  # kB on Linux
    print(json.dumps({"seconds": seconds, "bytes": peak}))


def measure(path: str, B: int, method: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", path, str(B), method], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    print(f"{'B':>9} {'method':>6} {'path':>9} {'seconds':>9} {'peak MB':>9}")
    rows = {}
    for B in (10_000, 100_000, 1_000_000):
        for method in ("v", "u"):
            r = rows[B, method, "windowed"] = measure("windowed", B, method)
            print(f"{B:>9,} {method:>6} {'windowed':>9} {r['seconds']:>9.3f} {r['bytes'] / 2**20:>9.1f}")
    for method in ("v", "u"):
        old = measure("matrix", 10_000, method)
        new = rows[10_000, method, "windowed"]
        print(f"{10_000:>9,} {method:>6} {'matrix':>9} {old['seconds']:>9.3f} {old['bytes'] / 2**20:>9.1f}   "
              f"matrix / windowed: time {old['seconds'] / new['seconds']:.1f}x, "
              f"memory {old['bytes'] / max(new['bytes'], 1):.0f}x")
    big = rows[1_000_000, "v", "windowed"]
    met = big["bytes"] < GOAL_BYTES and big["seconds"] < GOAL_SECONDS
    print(f"B = 10^6 (V): {big['seconds']:.2f} s (goal < {GOAL_SECONDS:g} s), peak {big['bytes'] / 2**20:.0f} MB "
          f"(goal < {GOAL_BYTES / 2**20:.0f} MB)")
    print("goals met" if met else "GOALS NOT MET")
    return 0 if met else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(main())
