"""Score distributions: the populations that simulated tuning runs draw their scores from.

Every distribution has one interface, :class:`ScoreDistribution`:

- ``sample(size, rng=...)`` draws i.i.d. scores with a :class:`numpy.random.Generator`;
- ``cdf(x)`` is ``P(X <= x)`` and ``cdf_left(x)`` is ``P(X < x)`` (they differ only at atoms);
- ``ppf(q)`` is the quantile function ``inf {x : F(x) >= q}``;
- ``support`` is ``(low, high)``;
- ``is_discrete`` says whether exact sums (a :class:`Bag`) or quadrature (continuous) give the truths.

Two families cover the studies: a finite :class:`Bag` (a population of values drawn with replacement;
this is also the empirical distribution of real scores, shipped or from a researcher's own file) and a
continuous :class:`TruncatedNormal`; the parametric laws of random search near the optimum,
:class:`Quadratic` and :class:`NoisyQuadratic` (Lourie, He & Cho 2025; :mod:`simstudy.distributions.parametric`), give
scores with closed-form truths. Any continuous :mod:`scipy.stats` distribution joins them as a
:class:`ScipyDistribution` (kind ``scipy``), and a user's own class with this interface by its import path
(kind ``target``, :class:`simstudy.plugins.PluginDistribution`).
:func:`truncnorm_bag` builds the bag of Dodge et al. (2021, §3.1), and :func:`from_spec` builds any of them
from a kind name and parameters, as the config layer does.

==========================================  ==================================================================
module                                      what it holds
==========================================  ==================================================================
:mod:`~simstudy.distributions.base`         the protocol :class:`ScoreDistribution`, :class:`InvalidParameter`
:mod:`~simstudy.distributions.laws`         :class:`Bag`, :class:`TruncatedNormal`, :class:`ScipyDistribution`
:mod:`~simstudy.distributions.kde`          :class:`ReflectedKDE`, :class:`KDEWithAtoms`
:mod:`~simstudy.distributions.parametric`   :class:`Quadratic`, :class:`NoisyQuadratic`
:mod:`~simstudy.distributions.fitting`      the noisy quadratic law fitted to scores, and its bootstrap
:mod:`~simstudy.distributions.generic`      :func:`mirror`, :func:`sample_sorted`, :func:`describe`
:mod:`~simstudy.distributions.files`        the kinds read from data sets and score files
:mod:`~simstudy.distributions.kinds`        :data:`KINDS`, :func:`parameters`, :func:`from_spec`
==========================================  ==================================================================

This package only re-exports: every name above is importable from ``simstudy.distributions``.
"""

from __future__ import annotations

from simstudy.distributions.base import InvalidParameter, ScoreDistribution
from simstudy.distributions.generic import Mirrored, describe, mirror, sample_sorted
from simstudy.distributions.kde import KDEWithAtoms, ReflectedKDE
from simstudy.distributions.kinds import CONTINUOUS_KINDS, KINDS, from_spec, parameters
from simstudy.distributions.laws import Bag, ScipyDistribution, TruncatedNormal, truncnorm_bag
from simstudy.distributions.parametric import NoisyQuadratic, Quadratic

__all__ = [
    "InvalidParameter",
    "ScoreDistribution",
    "Bag",
    "TruncatedNormal",
    "ReflectedKDE",
    "KDEWithAtoms",
    "ScipyDistribution",
    "Quadratic",
    "NoisyQuadratic",
    "truncnorm_bag",
    "Mirrored",
    "mirror",
    "from_spec",
    "parameters",
    "sample_sorted",
    "describe",
    "KINDS",
    "CONTINUOUS_KINDS",
]
