"""What the studies do with any distribution: its mirror image, sorted samples, a description.

=====================  ==========================================================================
name                   what it does
=====================  ==========================================================================
:class:`Mirrored`      the distribution of ``-X`` (what ``minimize: true`` draws)
:func:`mirror`         ``-X``: a bag stays a bag, else a :class:`Mirrored`
:func:`sample_sorted`  samples with every row sorted (a bag sorts indices)
:func:`describe`       a JSON-able description of a distribution
:func:`arms_metadata`  the arms of a model-selection study described (best arm, means, distributions)
=====================  ==========================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy.distributions.base import ScoreDistribution
from simstudy.distributions.kde import KDEWithAtoms
from simstudy.distributions.laws import Bag, ScipyDistribution

__all__ = ["Mirrored", "mirror", "sample_sorted", "describe", "arms_metadata"]


@dataclass(frozen=True, eq=False)
class Mirrored:
    """The distribution of ``-X`` for a distribution of X: what a distribution with ``minimize: true`` draws.

    Lower is better for X (a loss, an error rate), so the studies, which maximise, draw ``-X``: the best of n
    draws of ``-X`` is minus the best (lowest) of n draws of X. :func:`mirror` makes one (a :class:`Bag` is
    mirrored as a bag, for its exact truths).

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution of X.
    name : str or None, optional
        A label; default the name of `dist`.

    Examples
    --------
    >>> from simstudy.distributions import TruncatedNormal
    >>> m = Mirrored(TruncatedNormal(0.2, 0.05))
    >>> m.support, round(float(m.cdf(-0.2)), 4), round(float(m.ppf(0.5)), 4)
    ((-1.0, -0.0), 0.5, -0.2)
    >>> np.round(m.sample(3, rng=np.random.default_rng(0)), 4).tolist()
    [-0.2175, -0.1693, -0.113]
    """

    dist: Any
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is None:
            object.__setattr__(self, "name", getattr(self.dist, "name", type(self.dist).__name__))

    @property
    def support(self) -> tuple[float, float]:
        low, high = self.dist.support
        return -high, -low

    @property
    def is_discrete(self) -> bool:
        return bool(self.dist.is_discrete)

    @property
    def has_atoms(self) -> bool:
        """Whether X has atoms (quadrature then splits at them, :mod:`simstudy.stats.truth`)."""
        return bool(getattr(self.dist, "has_atoms", False))

    @property
    def atoms(self) -> np.ndarray:
        """The atoms of ``-X``, ascending."""
        return -np.asarray(getattr(self.dist, "atoms", ()), dtype=np.float64)[::-1]

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        """``-X`` for draws X of the distribution (the same generator calls)."""
        return -self.dist.sample(size, rng=rng)

    def cdf(self, x) -> np.ndarray:
        """``P(-X <= x) = 1 - P(X < -x)``."""
        return 1.0 - self.dist.cdf_left(-np.asarray(x, dtype=np.float64))

    def cdf_left(self, x) -> np.ndarray:
        """``P(-X < x) = 1 - P(X <= -x)``."""
        return 1.0 - self.dist.cdf(-np.asarray(x, dtype=np.float64))

    def ppf(self, q) -> np.ndarray:
        """``-F^-1(1 - q)``: the quantile function of ``-X`` (exact where F is continuous; at an atom's jump it
        can differ only at the jump's edge, a set of probability zero)."""
        return -self.dist.ppf(1.0 - np.asarray(q, dtype=np.float64))

    def describe(self) -> dict[str, Any]:
        """For :func:`describe`: ``minimize`` and the description of X's distribution."""
        return {"minimize": True, "of": describe(self.dist)}


def mirror(dist):
    """The distribution of ``-X``: a :class:`Bag` of the negated values, else a :class:`Mirrored`.

    What :func:`from_spec` returns for ``minimize: true`` (lower is better): the studies maximise, so they draw
    ``-X``, and a bag stays a bag (its truths exact sums).

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution of X.

    Returns
    -------
    ScoreDistribution
        The distribution of ``-X``, with the name of `dist`.

    Examples
    --------
    >>> from simstudy.distributions import TruncatedNormal
    >>> mirror(Bag([0.1, 0.3, 0.3], name="loss")), mirror(Bag([0.1, 0.3, 0.3])).values.tolist()
    (Bag(name='loss', size=3, unique=2), [-0.3, -0.3, -0.1])
    >>> mirror(TruncatedNormal(0.2, 0.05)).support
    (-1.0, -0.0)
    """
    if isinstance(dist, Bag):
        return Bag(-dist.values, name=dist.name, weights=dist.weights)
    return Mirrored(dist)


def sample_sorted(dist: ScoreDistribution, reps: int, B: int, *, rng: np.random.Generator) -> np.ndarray:
    """``reps`` samples of ``B`` scores each, every row sorted ascending; shape (reps, B).

    For a :class:`Bag` this sorts the drawn indices (:meth:`Bag.sample_sorted`), which is faster and
    consumes the generator exactly as ``dist.sample((reps, B))`` does; any other distribution's draw is
    sorted row by row.

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution the scores are drawn from.
    reps : int
        Number of samples (rows), ``>= 1``.
    B : int
        Number of scores per sample (tuning runs), ``>= 1``.
    rng : numpy.random.Generator, keyword-only
        The random generator.

    Returns
    -------
    ndarray of float, shape (reps, B)
        The scores in score units, each row ascending.

    Examples
    --------
    >>> from simstudy.distributions import TruncatedNormal
    >>> sample_sorted(Bag([0.6, 0.7, 0.9]), 2, 3, rng=np.random.default_rng(0)).tolist()
    [[0.7, 0.7, 0.9], [0.6, 0.6, 0.6]]
    >>> np.round(sample_sorted(TruncatedNormal(), 2, 3, rng=np.random.default_rng(0)), 4).tolist()
    [[0.4782, 0.5571, 0.6245], [0.4508, 0.6623, 0.6951]]
    """
    if isinstance(dist, Bag):
        return dist.sample_sorted(reps, B, rng=rng)
    x = dist.sample((reps, B), rng=rng)
    x.sort(axis=1)
    return x


def describe(dist: ScoreDistribution) -> dict[str, Any]:
    """A JSON-able description; for a bag its size, unique count and range (Dodge et al. report 9,536 / 0.854).

    Parameters
    ----------
    dist : ScoreDistribution
        Any distribution.

    Returns
    -------
    dict of str to object
        Always ``name``, ``type`` (the class name) and ``support`` (``[low, high]``, score units); then for a
        :class:`KDEWithAtoms` its bandwidth, method, atoms, shares and number of continuous scores; for a
        :class:`Bag` ``size``, ``unique``, ``minimum``, ``maximum`` and ``mean``; for a
        :class:`ScipyDistribution` ``dist`` and ``params``; for a plug-in what its ``describe()`` returns;
        for another dataclass its fields.

    Examples
    --------
    >>> from simstudy.distributions import TruncatedNormal
    >>> describe(TruncatedNormal())
    {'name': 'truncnorm', 'type': 'TruncatedNormal', 'support': [0.0, 1.0], 'mean': 0.6, 'sd': 0.07, 'low': 0.0, 'high': 1.0}
    >>> describe(Bag([0.5, 0.7, 0.7]))
    {'name': 'bag', 'type': 'Bag', 'support': [0.5, 0.7], 'size': 3, 'unique': 2, 'minimum': 0.5, 'maximum': 0.7, 'mean': 0.6333333333333333}
    """
    desc: dict[str, Any] = {
        "name": getattr(dist, "name", type(dist).__name__),
        "type": type(dist).__name__,
        "support": list(dist.support),
    }
    if isinstance(dist, KDEWithAtoms):
        desc.update(
            bandwidth=dist.bandwidth,
            bw_method=dist.bw_method,
            atoms=dist.atoms.tolist(),
            shares=dist.shares.tolist(),
            continuous_scores=int(dist.data.size),
        )
    elif isinstance(dist, Bag):
        desc.update(
            size=dist.size,
            unique=int(dist.atoms.size),
            minimum=float(dist.atoms[0]),
            maximum=float(dist.atoms[-1]),
            mean=float(np.average(dist.values, weights=dist.weights)),  # weights None: values.mean()
        )
    elif isinstance(dist, ScipyDistribution):
        desc.update(dist=dist.dist, params=dict(dist.params))
    elif hasattr(dist, "describe"):  # a plug-in (simstudy.plugins.PluginDistribution)
        desc.update(dist.describe())
    elif dataclasses.is_dataclass(dist):
        desc.update({f.name: getattr(dist, f.name) for f in dataclasses.fields(dist)})
    return desc


def arms_metadata(arms: Sequence, names: Sequence[str], means: np.ndarray, best: int) -> dict:
    """What a selection study's ``run.json`` records about its arms: the best arm, the means, the distributions.

    Parameters
    ----------
    arms : sequence of N distributions
        The built score distributions (the first output of :func:`arms_of`).
    names : sequence of str, length N
        Their names.
    means : ndarray of float64, shape (N,)
        Their population mean scores, in score units.
    best : int
        Index of the best arm.

    Returns
    -------
    dict
        ``"best_arm"`` (the best arm's name), ``"arm_means"`` (name to mean, floats) and ``"distributions"``
        (name to :func:`describe` of the distribution), all JSON-serialisable.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from simstudy.distributions import Bag
    >>> specs = [SimpleNamespace(name=n, build=lambda v=v: Bag(v)) for n, v in (("a", [0.1, 0.3]), ("b", [0.5, 0.9]))]
    >>> from simstudy.stats.selection import arms_of
    >>> meta = arms_metadata(*arms_of(specs))
    >>> meta["best_arm"], meta["arm_means"], meta["distributions"]["b"]["mean"]
    ('b', {'a': 0.2, 'b': 0.7}, 0.7)
    """
    return {
        "best_arm": names[best],
        "arm_means": dict(zip(names, means.tolist())),
        "distributions": {n: describe(a) for n, a in zip(names, arms)},
    }
