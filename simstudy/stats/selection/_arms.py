"""Arms: how a selection algorithm evaluates a candidate model, and ties between them.

An arm is either a score distribution (anything with ``sample(size, rng=...)``: a simulated evaluation) or a
callable ``evaluate(count, rng) -> scores`` that trains and scores a real model ``count`` times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from simstudy.stats import truth


def evaluator(arm, index: int = 0) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``evaluate(count, rng) -> ndarray of shape (count,)`` for a distribution or a callable arm; ``index``
    names the arm (its position in the list) in errors."""
    if hasattr(arm, "sample"):
        return lambda count, rng: scores(arm.sample(count, rng=rng), (count,), index, "sample(count, rng=rng)")
    if callable(arm):
        return lambda count, rng: scores(arm(count, rng), (count,), index, "evaluate(count, rng)")
    raise TypeError(
        f"arm {index} must be a distribution (with .sample) or a callable evaluate(count, rng), got {arm!r}"
    )


def scores(values, shape: tuple[int, ...], index: int, call: str) -> np.ndarray:
    """An arm's scores as float64 of the asked ``shape``, or a one-line error naming the arm."""
    try:
        y = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"arm {index}: {call} must return numbers, got {type(values).__name__} {str(values)[:60]!r}"
        ) from None
    if y.shape != shape:
        raise ValueError(f"arm {index}: {call} returned shape {y.shape} where {shape} was asked for")
    return y


def arms_of(specs: Sequence) -> tuple[tuple, list[str], np.ndarray, int]:
    """The arms of a selection study, built from their specifications, with their population means.

    Parameters
    ----------
    specs : sequence
        One object per arm with a ``name`` and a ``build()`` method returning the score distribution (e.g. the
        study's distribution configs); at least one.

    Returns
    -------
    arms : tuple
        The built distributions, in the order of ``specs``.
    names : list of str
        Each arm's ``name``, in the same order.
    means : ndarray of float64, shape (N,)
        Each arm's population mean score, in score units (exact, by :func:`simstudy.stats.truth.mean_tuning_curve` at
        n = 1).
    best : int
        Index of the arm with the highest mean (the first, if several tie).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simstudy.distributions import Bag
    >>> specs = [SimpleNamespace(name=n, build=lambda v=v: Bag(v)) for n, v in (("a", [0.1, 0.3]), ("b", [0.5, 0.9]))]
    >>> arms, names, means, best = arms_of(specs)
    >>> names, means.tolist(), best
    (['a', 'b'], [0.2, 0.7], 1)
    """
    arms = tuple(s.build() for s in specs)
    means = np.array([float(truth.mean_tuning_curve(a, [1.0])[0]) for a in arms])
    return arms, [s.name for s in specs], means, int(np.argmax(means))


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
            out[mask] = scores(arm.sample((k, each), rng=rng), (k, each), a, "sample(size, rng=rng)").sum(axis=1)
    return out


def draw(arms: Sequence, which: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One fresh evaluation of arm ``which[...]`` for every entry (arms: distributions); shape of ``which``."""
    out = np.empty(which.shape)
    for a, arm in enumerate(arms):
        mask = which == a
        k = int(mask.sum())
        if k:
            out[mask] = scores(arm.sample(k, rng=rng), (k,), a, "sample(size, rng=rng)")
    return out
