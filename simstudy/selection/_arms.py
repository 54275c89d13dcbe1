"""Arms: how a selection algorithm evaluates a candidate model, and ties between them.

An arm is either a score distribution (anything with ``sample(size, rng=...)``: a simulated evaluation) or a
callable ``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def evaluator(arm) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``evaluate(count, rng) -> ndarray of shape (count,)`` for a distribution or a callable arm."""
    if hasattr(arm, "sample"):
        return lambda count, rng: np.asarray(arm.sample(count, rng=rng), dtype=np.float64).reshape(count)
    if callable(arm):
        return lambda count, rng: np.asarray(arm(count, rng), dtype=np.float64).reshape(count)
    raise TypeError(f"an arm must be a distribution (with .sample) or a callable evaluate(count, rng), got {arm!r}")


def best_of(means: np.ndarray, rng: np.random.Generator, keep: int) -> np.ndarray:
    """Indices of the ``keep`` largest means along the last axis, ties broken uniformly at random."""
    noise = rng.random(means.shape)
    order = np.lexsort((noise, -means), axis=-1)
    return order[..., :keep]


def draw_sums(arms: Sequence, which: np.ndarray, each: int, rng: np.random.Generator) -> np.ndarray:
    """Sum of ``each`` fresh evaluations of arm ``which[r, s]`` for every run r and slot s (arms: distributions)."""
    out = np.empty(which.shape)
    for a, arm in enumerate(arms):
        mask = which == a
        k = int(mask.sum())
        if k:
            out[mask] = np.asarray(arm.sample((k, each), rng=rng)).sum(axis=1)
    return out


def draw(arms: Sequence, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One fresh evaluation of arm ``which[...]`` for every entry (arms: distributions); shape of ``which``."""
    out = np.empty(which.shape)
    for a, arm in enumerate(arms):
        mask = which == a
        k = int(mask.sum())
        if k:
            out[mask] = np.asarray(arm.sample(k, rng=rng), dtype=np.float64)
    return out
