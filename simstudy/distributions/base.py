"""The protocol every score distribution follows, and what the distribution kinds share.

==============================  ======================================================================================
name                            what it is
==============================  ======================================================================================
:class:`ScoreDistribution`      the interface (support, is_discrete, sample, cdf, cdf_left, ppf)
:class:`InvalidParameter`       a parameter out of its domain (defined with the kernels, :mod:`simstudy.stats.errors`)
``finite``, ``positive_int``    parameter checks raising it
``BoundedContinuous``           the base of the continuous kinds on a bounded support
==============================  ======================================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from simstudy.stats.errors import InvalidParameter

__all__ = ["InvalidParameter", "ScoreDistribution"]


@runtime_checkable
class ScoreDistribution(Protocol):
    """What the studies need of a score distribution: the interface every distribution kind implements.

    A structural (duck-typed) protocol: any object with these members is a score distribution, and
    ``isinstance(obj, ScoreDistribution)`` checks that the members exist (not their signatures). Scores
    are in the units of the metric (e.g. accuracy in [0, 1]). The members are:

    - ``support`` -- ``(low, high)``, floats in score units (``-inf``/``inf`` for an unbounded law);
    - ``is_discrete`` -- True when truths are exact sums over atoms (a :class:`Bag`), False for quadrature;
    - ``sample(size, *, rng)`` -- i.i.d. scores of shape ``size`` drawn with a :class:`numpy.random.Generator`;
    - ``cdf(x)`` -- ``P(X <= x)`` elementwise, and ``cdf_left(x)`` -- ``P(X < x)`` (they differ only at atoms);
    - ``ppf(q)`` -- the quantile function ``inf {x : F(x) >= q}`` for probabilities ``q`` in [0, 1].

    A plug-in class with these members can be named in a config by its import path (kind ``target``,
    :class:`simstudy.plugins.PluginDistribution`).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated itself (a class implements it).

    Raises
    ------
    TypeError
        If the protocol itself is instantiated ("Protocols cannot be instantiated").

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> isinstance(Bag([0.6, 0.7]), ScoreDistribution), isinstance([0.6, 0.7], ScoreDistribution)
    (True, False)
    >>> ScoreDistribution()
    Traceback (most recent call last):
        ...
    TypeError: Protocols cannot be instantiated
    """

    @property
    def support(self) -> tuple[float, float]: ...

    @property
    def is_discrete(self) -> bool: ...

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray: ...

    def cdf(self, x: np.ndarray) -> np.ndarray: ...

    def cdf_left(self, x: np.ndarray) -> np.ndarray: ...

    def ppf(self, q: np.ndarray) -> np.ndarray: ...


def finite(name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(name, "must be a number", value) from None
    if not np.isfinite(x):
        raise InvalidParameter(name, "must be finite", value)
    return x


def positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameter(name, "must be an integer >= 1", value)
    return int(value)


class BoundedContinuous:
    """Shared by the continuous distributions on [low, high]: no atoms, so P(X < x) = P(X <= x)."""

    low: float
    high: float

    @property
    def support(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def is_discrete(self) -> bool:
        return False

    if TYPE_CHECKING:  # each subclass defines it

        def cdf(self, x) -> np.ndarray: ...

    def cdf_left(self, x) -> np.ndarray:
        return self.cdf(x)
