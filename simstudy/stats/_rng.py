"""The one check of every public function that takes ``rng=``."""

from __future__ import annotations

import numpy as np


def rng_iv(rng, who: str) -> np.random.Generator:
    """``rng`` itself if it is a :class:`numpy.random.Generator`, else a one-line :class:`ValueError`.

    There is deliberately no default (``rng=None`` meaning fresh entropy): a result that cannot be
    reproduced is not a result of a simulation study.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{who}: rng= must be a numpy.random.Generator, e.g. np.random.default_rng(0), got {rng!r}")
    return rng
