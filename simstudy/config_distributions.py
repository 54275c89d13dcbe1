"""The ``distribution`` group of a run config: each distribution's kind and parameters, validated and frozen.

:func:`simstudy.config.parse` calls :func:`parse_distributions` on the group (one distribution, or a mapping of
named ones) and keeps the :class:`DistributionConfig` objects it returns; :meth:`DistributionConfig.build` makes
the distribution object a study draws scores from. A built-in kind is checked by building it once
(:func:`simstudy.distributions.from_spec`), a user's class (``_target_``, or a kind a plug-in registered) by
importing it and drawing a few scores (:func:`simstudy.plugins.check_distribution`), all before any compute.

==============================  ==================================================================
:class:`DistributionConfig`     one named distribution: kind, parameters, what keys its numbers
:func:`parse_distributions`     the group's mapping as a tuple of :class:`DistributionConfig`
==============================  ==================================================================
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import re
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from simstudy import distributions, schema
from simstudy.schema import ConfigError

__all__ = ["DistributionConfig", "parse_distributions"]

#: Distribution kinds that read a data file named by their ``path`` parameter: keyed by its content.
_FILE_KINDS = ("file", "kde", "kde_atoms")
#: The parameters that say which data a distribution is made of (left out of a named stream's key).
_DATA_PARAMS = (
    "path",
    "dataset",
    "model",
    "score_column",
    "model_column",
    "missing",
    "scale",
    "split",
    "reduce",
    "objective",  # a tuning source's (issue 36)
    "benchmark",  # a population's (simstudy.populations)
    "metric",
)


@dataclass(frozen=True)
class DistributionConfig:
    """A named score distribution of the ``distribution`` group: its kind and parameters, validated and frozen.

    :func:`parse_distributions` makes one per distribution (``distribution.kind=...`` and its keys, or one per name of a
    mapping ``distribution.NAME.kind=...``); :meth:`build` makes the distribution object the studies draw
    scores from. ``params`` is a sorted tuple of ``(name, value)`` pairs so the object is hashable and its
    hash stable: it keys the random streams, the name does not.

    Parameters
    ----------
    name : str
        The label in tables and figures (``distribution.name``, or the key of a named distribution; default
        the kind's own label).
    kind : str
        The distribution kind (``distribution.kind``; one of :data:`simstudy.distributions.KINDS`, a kind a
        plug-in registered, or ``"target"`` for a user's class named by ``_target_``).
    params : tuple of (str, Any) pairs
        The kind's parameters, sorted by name (lists made tuples), in score units where they are scores.
        A ``scipy`` kind holds ``dist`` (the scipy name) and ``params``; a ``target`` kind holds
        ``_target_``, ``kwargs`` and ``source``, a digest of its module's file, so that an edited class
        never resumes the chunks of the old one.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.config_distributions import DistributionConfig
    >>> spec = DistributionConfig(
    ...     "truncnorm", "truncnorm", (("high", 1.0), ("low", 0.0), ("mean", 0.5), ("sd", 0.1))
    ... )
    >>> spec.continuous
    True
    >>> dist = spec.build()
    >>> np.round(dist.sample((2, 3), rng=np.random.default_rng(0)), 4).tolist()
    [[0.535, 0.4387, 0.3261], [0.2869, 0.589, 0.6358]]
    """

    name: str
    kind: str
    params: tuple[tuple[str, Any], ...]

    @property
    def key(self) -> dict:
        """What keys the distribution's cells and random streams (its name does not): :attr:`identity`, or with
        ``stream: NAME`` that name and the parameters other than the data's.

        A named stream gives common random numbers across data: two runs with the same stream and seed draw
        the same random numbers whatever file they read, so an audit of losses ``1 - a`` with
        ``minimize: true`` is the mirror of the audit of ``a`` draw for draw. The data still join the run's
        fingerprint through :attr:`identity`.
        """
        params = dict(self.params)
        if "stream" not in params:
            return self.identity
        return {
            "kind": self.kind,
            "stream": params["stream"],
            "params": [[k, v] for k, v in self.params if k not in _DATA_PARAMS + ("minimize", "stream")],
        }

    @property
    def identity(self) -> dict:
        """What determines the distribution's numbers, for a run's fingerprint: a data file by its content.

        A kind that reads a file (``file``, ``kde``, ``kde_atoms``) is identified by the SHA-256 of the file's bytes
        in place of its path, so that a renamed or moved file gives the same cells and random streams (the same
        numbers), and an edited one other cells: its old chunks are never read back as the new file's.
        """
        digests = self.inputs
        params = [[k, {"sha256": digests[v]}] if k == "path" and v in digests else list((k, v)) for k, v in self.params]
        if self.kind == "population":  # its benchmark's pickle, by content
            params += [["sha256", digest] for digest in digests.values()]
        return {"kind": self.kind, "params": params}

    @functools.cached_property
    def inputs(self) -> dict[str, str]:
        """The SHA-256 (hex) of every file the distribution reads, by its path as given; read once."""

        if self.kind == "population":
            from simstudy import populations

            p = dict(self.params)
            return {f"{p['benchmark']}/{p['dataset']}.pkl": populations.sha256(p["benchmark"], p["dataset"])}
        if self.kind not in _FILE_KINDS:
            return {}
        return {v: _sha256(v) for k, v in self.params if k == "path" and isinstance(v, str)}

    @property
    def minimize(self) -> bool:
        """Whether lower is better (``minimize: true``): the distribution built draws ``-X``, so a study's best of
        n is minus the lowest of n scores; the studies report in X's units
        (``simstudy.studies.base.mirror_back``)."""
        return dict(self.params).get("minimize", False) is True

    @property
    def continuous(self) -> bool:
        """Whether the distribution has no atoms (a user's class says so by ``is_discrete``)."""
        if self.kind == "target":
            return not self.build().is_discrete
        return self.kind in distributions.CONTINUOUS_KINDS

    def build(self):
        """The distribution object (a bag is re-drawn from its seed; deterministic). A kind made from its
        parameters alone is built once per process (the config's check and the study build the same one: a
        100,000-draw bag twice was 3% of Figure 1's start); a kind that reads a file is read each time."""
        if self.kind in _BUILT_ONCE:
            return _built(self)
        return self._build()

    def _build(self):
        params = {k: v for k, v in self.params if k not in ("source", "stream")}
        if self.kind == "target":  # a user's class: built here, so that the distributions never import plug-ins
            from simstudy import plugins

            minimize = params.pop("minimize", False)
            dist = plugins.PluginDistribution(params.pop("_target_"), tuple(params.pop("kwargs", ())), self.name)
            return distributions.mirror(dist) if minimize else dist
        return distributions.from_spec(self.kind, {**params, "name": self.name})


#: Kinds whose distribution is a function of the parameters alone (no file, no user's class), immutable once
#: built: :meth:`DistributionConfig.build` keeps the last few.
_BUILT_ONCE = ("truncnorm_bag", "truncnorm", "bag", "scipy", "quadratic", "noisy_quadratic")


_BUILT: collections.OrderedDict = collections.OrderedDict()


def _sha256(path: str) -> str:
    """A data file's SHA-256, or a tuning source's (issue 36): a ``sqlite:///FILE`` URL's file, a directory's
    files (a Ray Tune experiment, SMAC's or HpBandSter's output) by :func:`simstudy.engine.identity.data_input`."""
    from simstudy.engine.identity import data_input

    return data_input(path)["sha256"]


def _built(spec: DistributionConfig):
    """The distribution of ``spec``, built once (the last eight kept)."""
    if spec in _BUILT:
        _BUILT.move_to_end(spec)
        return _BUILT[spec]
    dist = spec._build()
    _remember(spec, dist)
    return dist


def _remember(spec: DistributionConfig, dist) -> None:
    _BUILT[spec] = dist
    _BUILT.move_to_end(spec)
    while len(_BUILT) > 8:
        _BUILT.popitem(last=False)


#: A score file's fix names its keys as the data commands spell them (``pass scale=0.01 (or high=100)``); in a
#: study they are the distribution's keys. Only a key after "pass", "or" or "and" is a fix (a file's name is not).
_FIX_KEYS = re.compile(r"\b(pass|or|and) (scale|low|high|missing)=")


def _keys_under(message: str, prefix: str) -> str:
    """A score file's message with the keys of its fix under ``prefix``: ``pass scale=0.01`` is
    ``pass distribution.scale=0.01`` in a study, where ``scale=0.01`` is not a key.

    Examples
    --------
    >>> _keys_under("runs.csv: row 2: score 64.8 is outside [0, 1]; pass scale=0.01 (or high=100)", "distribution")
    'runs.csv: row 2: score 64.8 is outside [0, 1]; pass distribution.scale=0.01 (or distribution.high=100)'
    """
    return _FIX_KEYS.sub(lambda m: f"{m.group(1)} {prefix}.{m.group(2)}=", message)


def _target_distribution(
    d: Mapping, prefix: str, name: str | None, trusted: Set[str] | None = None
) -> DistributionConfig:
    """A user's distribution class: ``_target_`` (module.Class) and keyword arguments next to it."""
    from simstudy import plugins

    if d.get("kind") is not None:
        raise ConfigError(
            f"{prefix} gives both kind={d['kind']} and _target_={d['_target_']}: select the group "
            f"that takes a class (distribution=custom {prefix}._target_=...) or drop the kind"
        )
    label = name or schema.optional(schema.text())(f"{prefix}.name", d.get("name"))
    kwargs = schema.hashable({k: v for k, v in d.items() if k not in ("_target_", "name", "kind")})
    try:
        dist = plugins.PluginDistribution(d["_target_"], kwargs, label, trusted=trusted)
        plugins.check_distribution(dist, prefix)
        source = plugins.source_hash(d["_target_"])
    except plugins.PluginError as exc:
        message = str(exc)
        raise ConfigError(message if message.startswith(prefix) else f"{prefix}.{message}") from None
    return DistributionConfig(
        dist.name, "target", (("_target_", d["_target_"]), ("kwargs", kwargs), ("source", source))
    )


def _scipy_distribution(d: Mapping, prefix: str, name: str | None) -> DistributionConfig:
    """``kind: scipy``: ``name`` (a continuous scipy.stats distribution) and ``params`` (its parameters)."""
    schema.refuse_unknown(d, ("kind", "name", "params"), f"{prefix}.")
    params = d.get("params") or {}
    if not isinstance(params, Mapping):
        raise ConfigError(
            f"{prefix}.params must be a mapping of parameters (e.g. '{prefix}.params={{a: 5, b: 2}}'), got {params!r}"
        )
    try:
        dist = distributions.ScipyDistribution(d.get("name"), params)  # type: ignore[arg-type]  # checked there
    except distributions.InvalidParameter as exc:
        raise ConfigError(f"{prefix}.{exc}") from None
    assert dist.name is not None  # __post_init__ sets it (to dist by default)
    return DistributionConfig(name or dist.name, "scipy", (("dist", dist.dist), ("params", dist.params)))


def _distribution(d: Mapping, prefix: str, name: str | None, trusted: Set[str] | None = None) -> DistributionConfig:
    """A distribution of the group; ``minimize: true`` (any kind: lower is better) makes it draw ``-X``
    (:func:`simstudy.distributions.mirror`), a parameter only when true (the other specs' streams unchanged)."""
    population = d.get("kind") == "population"
    raw = d.get("minimize", None if population else False)
    if raw is None and population:  # unset or null: the metric's direction
        try:
            raw = distributions.kinds.default_minimize("population", d)
        except distributions.InvalidParameter as exc:
            raise ConfigError(f"{prefix}.{exc}") from None
    minimize = schema.boolean()(f"{prefix}.minimize", raw)
    # stream: NAME keys the random streams by that name, not the data (see DistributionConfig.key)
    stream = schema.optional(schema.text())(f"{prefix}.stream", d.get("stream"))
    spec = _distribution_of({k: v for k, v in d.items() if k not in ("minimize", "stream")}, prefix, name, trusted)
    extra = (("minimize", True),) * minimize + (("stream", stream),) * (stream is not None)
    if not extra:
        return spec
    return dataclasses.replace(spec, params=tuple(sorted((*spec.params, *extra))))


def _distribution_of(d: Mapping, prefix: str, name: str | None, trusted: Set[str] | None) -> DistributionConfig:
    from simstudy import plugins

    if "_target_" in d:
        return _target_distribution(d, prefix, name, trusted)
    registered = plugins.registered_distribution(d.get("kind"))  # type: ignore[arg-type]  # None: not registered
    if registered is not None:  # a kind a plug-in registered: its class, as if named by _target_
        return _target_distribution(
            {**{k: v for k, v in d.items() if k != "kind"}, "_target_": registered}, prefix, name, trusted
        )
    kind = schema.choice(tuple(k for k in sorted(distributions.KINDS) if k != "target") + plugins.distribution_kinds())(
        f"{prefix}.kind", d.get("kind")
    )
    if kind == "scipy":
        return _scipy_distribution(d, prefix, name)
    # Lists become tuples so the spec is hashable (its hash keys the random streams); the name is a label.
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k not in ("kind", "name")}
    accepted = distributions.parameters(kind)
    for key in params:
        if accepted is not None and key not in accepted:
            raise ConfigError(f"{prefix}.{key} is not a parameter of {kind} (parameters: {', '.join(accepted)})")
    if accepted is not None and "seed" in accepted:
        params["seed"] = schema.integer(minimum=0)(f"{prefix}.seed", params.get("seed", 0))
    name = d.get("name") or name
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"{prefix}.name must be a string, got {name!r}")
    try:
        # Validates every parameter (cheap next to the study); unnamed, it takes the kind's default label.
        dist = distributions.from_spec(kind, params if name is None else {**params, "name": name})
    except distributions.InvalidParameter as exc:
        raise ConfigError(f"{prefix}.{exc}") from None
    except ValueError as exc:  # data files and data-set names (the message names file, row and value)
        raise ConfigError(f"{prefix}: {_keys_under(str(exc), prefix)}") from None
    spec = DistributionConfig(name or dist.name, kind, tuple(sorted(params.items())))
    if kind in _BUILT_ONCE:  # the study's build() takes this one
        _remember(spec, dist)
    return spec


def parse_distributions(d: Any, *, trusted: Set[str] | None = None) -> tuple[DistributionConfig, ...]:
    """The ``distribution`` group, validated: one distribution (a mapping with a ``kind`` or a ``_target_``) or
    several, as a mapping from name to distribution.

    Parameters
    ----------
    d : Any
        The group's value: a mapping with ``kind`` (or ``_target_``) and the kind's parameters, or a mapping of
        names to such mappings (a selection study's arms, the pair a study compares). Each may also give
        ``minimize: true`` (lower is better: it draws ``-X``) and ``stream: NAME`` (random streams keyed by that
        name rather than by the data).
    trusted : set of str, optional, keyword-only
        While a run directory's stored config is read, the plug-in import paths the user trusts
        (:func:`simstudy.plugins.refuse_untrusted`); default ``None``, the config is the user's own.

    Returns
    -------
    tuple of DistributionConfig
        One per distribution, in the mapping's order; a lone distribution is named by its ``name`` or its
        kind's label, a named one by its key.

    Raises
    ------
    ConfigError
        In one line naming the key and the value: not a mapping, an unknown kind or parameter, an invalid
        parameter or data file, a plug-in class that cannot be imported or drawn from, two distributions of
        one name.

    Examples
    --------
    >>> from simstudy.config_distributions import parse_distributions
    >>> law = {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1}
    >>> [(s.name, s.kind) for s in parse_distributions({"a": law, "b": {**law, "mean": 0.6}})]
    [('a', 'truncnorm'), ('b', 'truncnorm')]
    >>> parse_distributions({**law, "median": 0.5})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: distribution.median is not a parameter of truncnorm (parameters: mean, sd, low, high, name)
    """
    if not isinstance(d, Mapping) or not d:
        raise ConfigError(f"distribution must be a distribution (with a kind) or a mapping of named ones, got {d!r}")
    if "kind" in d or "_target_" in d:
        return (_distribution(d, "distribution", None, trusted),)
    specs = []
    for name, sub in d.items():
        if not isinstance(sub, Mapping):
            raise ConfigError(
                f"distribution.{name} must be a distribution (a mapping with a kind or a _target_), got {sub!r}"
            )
        specs.append(_distribution(sub, f"distribution.{name}", str(name), trusted))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"distribution names must differ, got {names}")
    return tuple(specs)
