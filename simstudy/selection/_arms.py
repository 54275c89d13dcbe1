"""Arms: how a selection algorithm evaluates a candidate model, and ties between them.

An arm is either a score distribution (anything with ``sample(size, rng=...)``: a simulated evaluation) or a
callable ``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def evaluator(arm, index: int = 0) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``evaluate(count, rng) -> ndarray of shape (count,)`` for a distribution or a callable arm; ``index``
    names the arm (its position in the list) in errors."""
    if hasattr(arm, "sample"):
        return lambda count, rng: _scores(arm.sample(count, rng=rng), (count,), index, "sample(count, rng=rng)")
    if callable(arm):
        return lambda count, rng: _scores(arm(count, rng), (count,), index, "evaluate(count, rng)")
    raise TypeError(f"arm {index} must be a distribution (with .sample) or a callable evaluate(count, rng), "
                    f"got {arm!r}")


def _scores(values, shape: tuple[int, ...], index: int, call: str) -> np.ndarray:
    """An arm's scores as float64 of the asked ``shape``, or a one-line error naming the arm."""
    try:
        y = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"arm {index}: {call} must return numbers, got {type(values).__name__} "
                         f"{str(values)[:60]!r}") from None
    if y.shape != shape:
        raise ValueError(f"arm {index}: {call} returned shape {y.shape} where {shape} was asked for")
    return y


def arms_iv(arms) -> Sequence:
    """The arms as a sequence (a one-line error for anything else)."""
    if isinstance(arms, (str, bytes)) or not hasattr(arms, "__len__") or not hasattr(arms, "__getitem__"):
        raise TypeError(f"arms must be a sequence of distributions or callables, got {type(arms).__name__}")
    return arms


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
            out[mask] = _scores(arm.sample((k, each), rng=rng), (k, each), a, "sample(size, rng=rng)").sum(axis=1)
    return out


def draw(arms: Sequence, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One fresh evaluation of arm ``which[...]`` for every entry (arms: distributions); shape of ``which``."""
    out = np.empty(which.shape)
    for a, arm in enumerate(arms):
        mask = which == a
        k = int(mask.sum())
        if k:
            out[mask] = _scores(arm.sample(k, rng=rng), (k,), a, "sample(size, rng=rng)")
    return out
