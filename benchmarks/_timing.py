"""Timing shared by the benchmarks (imported by name: a script's own folder is first on ``sys.path``)."""

from __future__ import annotations

import timeit


def best_of(*fns, number: int = 3, repeat: int = 9) -> list[float]:
    """Seconds per call of each function, the minimum over repeats (timeit's convention: the least disturbed
    measurement). The functions are timed in turn within each repeat, so a drift in the machine's speed
    affects them alike and their ratios stay fair."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=number) / number)
    return best
