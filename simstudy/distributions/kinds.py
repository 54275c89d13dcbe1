"""The distribution kinds a config names, and building one from its kind and parameters.

========================  ===========================================================================
name                      what it is
========================  ===========================================================================
:data:`KINDS`             kind name -> builder
:data:`CONTINUOUS_KINDS`  the kinds whose distributions are continuous
:func:`parameters`        the parameter names a kind takes
:func:`from_spec`         build a distribution from a kind name and its parameters
:func:`default_minimize`  whether a kind draws ``-X`` when its config leaves ``minimize`` unset
========================  ===========================================================================
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from simstudy.distributions.base import InvalidParameter, finite
from simstudy.distributions.files import dataset_bag, file_bag, kde, kde_atoms
from simstudy.distributions.generic import mirror
from simstudy.distributions.laws import Bag, ScipyDistribution, TruncatedNormal, truncnorm_bag
from simstudy.distributions.parametric import NoisyQuadratic, Quadratic

__all__ = ["KINDS", "CONTINUOUS_KINDS", "parameters", "from_spec", "default_minimize"]


def _scipy(*, dist: str, params: Any = (), name: str | None = None) -> ScipyDistribution:
    return ScipyDistribution(dist, params, name)


def _seeded_truncnorm_bag(*, seed: int = 0, **params: Any) -> Bag:
    """:func:`truncnorm_bag` drawn from ``numpy.random.default_rng(seed)``: a config names a seed, not a generator."""
    return truncnorm_bag(rng=np.random.default_rng(seed), **params)


def _population(
    *, benchmark: str, dataset: str, metric: str | None = None, scale: float = 1.0, name: str | None = None
) -> Bag:
    """A public HPO benchmark's population (:func:`simstudy.populations.load`) as a weighted bag, times ``scale``.

    Each run weighs ``1 / (configs x seeds of its configuration)`` (integer frequency weights: exact draws and
    truths); a population whose configurations all have the same number of seeds is the plain bag of its runs.
    The label is ``benchmark:dataset`` (``:metric`` when not the main metric).
    """
    from simstudy import populations  # on use: only this kind reads the benchmarks' files

    scale = finite("scale", scale)
    if not scale > 0:
        raise InvalidParameter("scale", "must be > 0 (minimize: true says that lower is better)", scale)
    pop = populations.load(benchmark, dataset, metric)
    label = f"{benchmark}:{dataset}" + (
        f":{pop.metric}" if metric not in (None, populations.BENCHMARKS[benchmark].main_metric) else ""
    )
    values = pop.values * scale if scale != 1.0 else pop.values
    return Bag(values, name=name or label, weights=pop.multiplicities)


def default_minimize(kind: str, params: Mapping[str, Any]) -> bool:
    """Whether a distribution draws ``-X`` (lower is better) when its config leaves ``minimize`` unset (null).

    A ``population`` follows its metric's direction (HPOLib's ``val_loss``: minimize); every other kind
    maximizes.

    Parameters
    ----------
    kind : str
        The distribution kind.
    params : mapping of str to object
        Its parameters as configured (a population's ``benchmark`` and ``metric``).

    Returns
    -------
    bool
        True when lower is better by default.

    Raises
    ------
    simstudy.schema.ConfigError
        If a population's benchmark or metric is unknown (one line listing the valid ones).

    Examples
    --------
    >>> default_minimize("population", {"benchmark": "hpolib", "dataset": "naval_propulsion"})
    True
    >>> default_minimize("population", {"benchmark": "hpobench"}), default_minimize("truncnorm", {})
    (False, False)
    """
    if kind != "population":
        return False
    from simstudy import populations

    return populations.direction(params.get("benchmark"), params.get("metric")) == "minimize"  # type: ignore[arg-type]


#: Kinds whose distributions are continuous (exact coverage of the KS and LD bands needs one).
CONTINUOUS_KINDS = ("truncnorm", "kde", "kde_atoms", "scipy", "quadratic", "noisy_quadratic")

#: Distribution kinds a config can name, with the builders the config's parameters are passed to.
KINDS: dict[str, Callable[..., Any]] = {
    "truncnorm_bag": _seeded_truncnorm_bag,
    "truncnorm": TruncatedNormal,
    "bag": Bag,
    "empirical": dataset_bag,
    "file": file_bag,
    "kde": kde,
    "kde_atoms": kde_atoms,
    "scipy": _scipy,
    "quadratic": Quadratic,
    "noisy_quadratic": NoisyQuadratic,
    "population": _population,
}


def parameters(kind: str) -> tuple[str, ...] | None:
    """The parameter names a config may give a distribution kind (``None``: any, passed on as options).

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`, e.g. ``"truncnorm"``.

    Returns
    -------
    tuple of str or None
        The builder's keyword names (for ``truncnorm_bag``: ``seed`` in place of ``rng``), or ``None`` when
        the builder takes arbitrary options (``**options``: the shipped-data and KDE kinds).

    Raises
    ------
    KeyError
        If `kind` is not a key of :data:`KINDS`.

    Examples
    --------
    >>> parameters("truncnorm")
    ('mean', 'sd', 'low', 'high', 'name')
    >>> parameters("truncnorm_bag")
    ('seed', 'mean', 'sd', 'low', 'high', 'population', 'size', 'name')
    >>> parameters("kde") is None
    True
    """
    if kind == "truncnorm_bag":
        return ("seed", *(p for p in inspect.signature(truncnorm_bag).parameters if p != "rng"))
    params = inspect.signature(KINDS[kind]).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return tuple(params)


def from_spec(kind: str, params: dict[str, Any]):
    """Build a distribution from a kind name (one of :data:`KINDS`) and its parameters (deterministic).

    This is what the config layer calls with a ``distribution`` group: kind ``truncnorm_bag`` takes a
    ``seed`` (not a generator), so the same parameters always give the same distribution.

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`: ``truncnorm_bag``, ``truncnorm``, ``bag``, ``empirical``, ``file``, ``kde``,
        ``kde_atoms``, ``scipy``, ``quadratic``, ``noisy_quadratic`` or ``population`` (a user's class, kind ``target``, is built
        by the config layer: :meth:`simstudy.config.DistributionConfig.build`).
    params : dict of str to object
        The keyword arguments of the kind's builder (see :func:`parameters`), and optionally ``minimize``
        (any kind): True builds the distribution of ``-X`` (:func:`mirror`; lower is better).

    Returns
    -------
    ScoreDistribution
        The distribution built.

    Raises
    ------
    InvalidParameter
        If `kind` is unknown, or the builder rejects a parameter's value.
    TypeError
        If a parameter is not one the builder takes (the config layer checks names with :func:`parameters`).

    Examples
    --------
    >>> from_spec("truncnorm", {"mean": 0.7, "sd": 0.05})
    TruncatedNormal(mean=0.7, sd=0.05, low=0.0, high=1.0, name='truncnorm')
    >>> from_spec("truncnorm_bag", {"seed": 0, "population": 1000, "size": 100})
    Bag(name='truncnorm_bag', size=100, unique=96)
    >>> from_spec("bag", {"values": [0.1, 0.3], "minimize": True}).values.tolist()
    [-0.3, -0.1]
    >>> from_spec("normal", {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    simstudy.stats.errors.InvalidParameter: kind must be one of bag, ..., truncnorm_bag, got 'normal'
    """
    if kind not in KINDS:
        raise InvalidParameter("kind", f"must be one of {', '.join(sorted(KINDS))}", kind)
    params = dict(params)
    minimize = params.pop("minimize", False)
    if not isinstance(minimize, (bool, np.bool_)):
        raise InvalidParameter("minimize", "must be true or false", minimize)
    if minimize and kind in ("kde", "kde_atoms"):
        # Fitted to -x on [-high, -low]: the same law as the mirror of the KDE of x (its kernel is symmetric),
        # drawn along the path a KDE of scores -x takes, so that losses 1 - a mirror accuracies a draw for draw.
        return KINDS[kind](**params, minimize=True)
    dist = KINDS[kind](**params)
    return mirror(dist) if minimize else dist
