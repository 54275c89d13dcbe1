"""Run configuration: plain, frozen, validated objects built from a plain mapping.

The CLI resolves its Hydra config to a plain ``dict`` (``OmegaConf.to_container(cfg, resolve=True)``) and
hands it to :func:`parse`; nothing below this module sees Hydra or OmegaConf, and joblib workers only ever
receive these frozen dataclasses. Every check runs before any compute and fails with a one-line
:class:`ConfigError` naming the key and the value, e.g. ``budget.B must be an integer >= 1, got 0``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from simstudy import distributions, extend, schema
from simstudy._limits import MEMORY_ENV, check_memory, memory_limit
from simstudy.engine.memory import check_budget_memory, check_chunk_memory
from simstudy.schema import ConfigError
from simstudy.stats import estimators

__all__ = [
    "ConfigError",
    "DistributionConfig",
    "EstimatorConfig",
    "BudgetConfig",
    "StudyConfig",
    "RunnerConfig",
    "Config",
    "parse",
    "check_chunk_memory",
    "check_budget_memory",
    "BACKENDS",
    "MEMORY_ENV",
    "memory_limit",
    "check_memory",
]

#: joblib backends the runner accepts ("dask" needs the optional extra ``simstudy[dask]``). joblib's
#: "multiprocessing" backend is not one: it cannot stream results as they finish (``return_as=
#: "generator_unordered"``), which the runner needs to store each chunk at once; "loky" is the process backend.
BACKENDS = ("loky", "threading", "sequential", "dask")
#: Keys of the ``runner`` group.
_RUNNER_KEYS = ("n_jobs", "backend", "progress", "address", "shard", "max_failure_fraction", "figures")
#: The formats a study's figure may be written in (``runner.figures``).
FIGURE_FORMATS = ("png", "pdf", "svg")
#: Top-level keys of a study config.
_TOP_KEYS = ("seed", "distribution", "budget", "estimators", "study", "runner")


def study_kinds() -> tuple[str, ...]:
    """The study kinds a config may name (:func:`simstudy.registry.study_kinds`)."""
    extend.load_plugins()
    return extend.studies.names()


#: Names that moved out of this module (issue 26): old name -> (module, name there), imported on first use
#: (this module sits below them). The studies' options and checks went to the studies, the plug-in checks next
#: to their registry, the data commands' keys to :mod:`simstudy.commands`.
_MOVED_NAMES = {
    "StudyOptions": ("simstudy.studies.base", "StudyOptions"),
    "reps_option": ("simstudy.studies.base", "reps_option"),
    "chunk_reps_option": ("simstudy.studies.base", "chunk_reps_option"),
    "save_replicates_option": ("simstudy.studies.base", "save_replicates_option"),
    "at_least_arms": ("simstudy.studies.base", "at_least_arms"),
    "selection_algorithm_check": ("simstudy.plugins", "selection_algorithm_check"),
    "band_method_check": ("simstudy.plugins", "band_method_check"),
    "TIME_ENV": ("simstudy._limits", "TIME_ENV"),
    "_env_limit": ("simstudy._limits", "_env_limit"),
    "_size": ("simstudy._limits", "_size"),
    "_duration": ("simstudy._limits", "_duration"),
    "_DEFAULT_MINUTES": ("simstudy._limits", "_DEFAULT_MINUTES"),
    "REQUIRED": ("simstudy.commands._data", "REQUIRED"),
    "XSCALES": ("simstudy.commands._data", "XSCALES"),
    "COMMAND_OPTIONS": ("simstudy.commands._data", "COMMAND_OPTIONS"),
    "CurveOptions": ("simstudy.commands.curve", "CurveOptions"),
    "CurveConfig": ("simstudy.commands.curve", "CurveConfig"),
    "parse_curve": ("simstudy.commands.curve", "parse"),
    "BandsOptions": ("simstudy.commands.bands", "BandsOptions"),
    "BandsConfig": ("simstudy.commands.bands", "BandsConfig"),
    "parse_bands": ("simstudy.commands.bands", "parse"),
    "AuditOptions": ("simstudy.commands.audit", "AuditOptions"),
    "AuditConfig": ("simstudy.commands.audit", "AuditConfig"),
    "_audit_cost_iv": ("simstudy.commands.audit", "_audit_cost_iv"),
    "_KDE_BOUND": ("simstudy.commands.audit", "_KDE_BOUND"),
    "_MIN_BANDWIDTH_SHARE": ("simstudy.commands.audit", "_MIN_BANDWIDTH_SHARE"),
    "ExtrapolateOptions": ("simstudy.commands.extrapolate", "ExtrapolateOptions"),
    "ExtrapolateConfig": ("simstudy.commands.extrapolate", "ExtrapolateConfig"),
    "_threshold": ("simstudy.commands.extrapolate", "_threshold"),
    "_c_values": ("simstudy.commands.extrapolate", "_c_values"),
    "_K_MAX": ("simstudy.commands.extrapolate", "_K_MAX"),
    "parse_audit": ("simstudy.commands.audit", "parse"),
    "parse_extrapolate": ("simstudy.commands.extrapolate", "parse"),
}


def __getattr__(name: str) -> Any:
    # importlib with a string: a static import would point up the layers (config is below the studies)
    if name in _MOVED_NAMES:
        import importlib

        module, new = _MOVED_NAMES[name]
        return getattr(importlib.import_module(module), new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Distribution kinds that read a data file named by their ``path`` parameter: keyed by its content.
_FILE_KINDS = ("file", "kde", "kde_atoms")
#: The parameters that say which data a distribution is made of (left out of a named stream's key); the last
#: two are a population's.
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
    "benchmark",
    "metric",
)


@dataclass(frozen=True)
class DistributionConfig:
    """A named score distribution of the ``distribution`` group: its kind and parameters, validated and frozen.

    :func:`parse` makes one per distribution (``distribution.kind=...`` and its keys, or one per name of a
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
    >>> from simstudy.config import DistributionConfig
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
        from simstudy import io

        if self.kind == "population":
            from simstudy import populations

            p = dict(self.params)
            return {f"{p['benchmark']}/{p['dataset']}.pkl": populations.sha256(p["benchmark"], p["dataset"])}
        if self.kind not in _FILE_KINDS:
            return {}
        return {v: io.sha256_file(v) for k, v in self.params if k == "path" and isinstance(v, str)}

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
        """The distribution object (a bag is re-drawn from its seed; deterministic)."""
        params = {k: v for k, v in self.params if k not in ("source", "stream")}
        if self.kind == "target":  # a user's class: built here, so that the distributions never import plug-ins
            from simstudy import plugins

            minimize = params.pop("minimize", False)
            dist = plugins.PluginDistribution(params.pop("_target_"), tuple(params.pop("kwargs", ())), self.name)
            return distributions.mirror(dist) if minimize else dist
        return distributions.from_spec(self.kind, {**params, "name": self.name})


@dataclass(frozen=True)
class EstimatorConfig:
    """One estimator column of a study (``estimators.NAME``): a label, the method and its settings.

    :func:`parse` makes one per entry of the ``estimators`` mapping. A plug-in (method ``"plugin"``) is named
    by its import path ``target``, imported and called on a tiny input when the config is parsed.

    Parameters
    ----------
    name : str
        The label (the key ``NAME`` of ``estimators.NAME``); it must not contain ``-`` (paired differences
        are labelled ``a-b``).
    method : str
        ``estimators.NAME.method``: ``"u"``, ``"v"``, ``"w"`` or ``"bootstrap"`` (the expected-maximum
        estimators of Dodge et al. 2021 and the bootstrap of Dodge et al. 2019), or ``"plugin"``.
    resamples : int, default 1000
        ``estimators.NAME.resamples``: bootstrap resamples K per sample (bootstrap only), >= 1.
    target : str or None, default None
        A plug-in's import path ``module.function`` (``estimators.NAME._target_``, or the path a registered
        method stands for); None for a built-in.
    kwargs : tuple of (str, Any) pairs, default ()
        A plug-in's keyword arguments (the other keys of ``estimators.NAME``), sorted by name.
    per_sample : bool, default False
        ``estimators.NAME.per_sample``: the plug-in is a function of one sample of shape (B,), looped over
        the replicates in Python, rather than of the ``(reps, B)`` array.
    source : str, default ""
        A digest of the plug-in's module file, so that an edited plug-in never resumes the old one's chunks.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your work: improved reporting
       of experimental results", EMNLP 2019.
    .. [2] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Expected validation performance and
       estimation of a random variable's maximum", 2021.

    Examples
    --------
    >>> from simstudy.config import EstimatorConfig
    >>> est = EstimatorConfig("boot", "bootstrap", resamples=500)
    >>> est.is_plugin, est.settings
    (False, {'name': 'boot', 'method': 'bootstrap', 'resamples': 500})
    """

    name: str
    method: str
    resamples: int = 1000
    target: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    per_sample: bool = False
    source: str = ""

    @property
    def is_plugin(self) -> bool:
        """Whether this is a plug-in estimator (method ``"plugin"``), called through :meth:`plugin`."""
        return self.method == "plugin"

    def plugin(self):
        """The callable plug-in (:class:`simstudy.plugins.PluginEstimator`), picklable by import path."""
        import os

        from simstudy import plugins

        # The working directory now (in the main process) travels with it: a worker imports from there.
        return plugins.PluginEstimator(self.target, self.kwargs, self.per_sample, os.getcwd())

    @property
    def settings(self) -> dict:
        """What fixes the estimator's numbers, for a run's fingerprint (a built-in's as it always was)."""
        out = dataclasses.asdict(self)
        if not self.is_plugin:
            for key in ("target", "kwargs", "per_sample", "source"):
                del out[key]
        return out


@dataclass(frozen=True)
class BudgetConfig:
    """The ``budget`` group: sample sizes ``B`` (one cell each) and the budgets ``n`` estimated at.

    Parameters
    ----------
    B : tuple of int
        ``budget.B``: the number of trials (scores) in one simulated search, >= 1; a list gives one cell per
        value.
    n : tuple of int or None
        ``budget.n``: the budgets (in trials) at which the estimators are evaluated, sorted and distinct,
        each at most ``min(B)``; None: every budget ``1..B`` of each cell (see :meth:`n_for`).

    Examples
    --------
    >>> from simstudy.config import BudgetConfig
    >>> BudgetConfig(B=(3, 10), n=None).n_for(3)
    (1, 2, 3)
    >>> BudgetConfig(B=(10,), n=(1, 5, 10)).n_for(10)
    (1, 5, 10)
    """

    B: tuple[int, ...]
    n: tuple[int, ...] | None

    def n_for(self, B: int) -> tuple[int, ...]:
        """The budgets of the cell of sample size ``B``: ``n`` if given, else ``1..B`` (in trials)."""
        return tuple(range(1, B + 1)) if self.n is None else self.n

    def n_count(self, B: int) -> int:
        """How many budgets the cell of sample size ``B`` has, ``len(n_for(B))`` without building them (the
        memory checks run before anything is allocated: ``B = 10**9`` must not build a tuple of 10**9 first)."""
        return B if self.n is None else len(self.n)


@dataclass(frozen=True)
class StudyConfig:
    """The ``study`` group: what to run -- the study kind, replicates, chunking, outputs and the kind's options.

    Parameters
    ----------
    name : str
        ``study.name``: the study's name, which names the run directory (``outputs/<study.name>/...``):
        letters, digits, ``_``, ``-`` and ``.``, not starting with ``.``.
    kind : str
        ``study.kind``: a registered study kind (:func:`simstudy.registry.study_kinds`), e.g.
        ``"evp_accuracy"``.
    reps : int
        ``study.reps``: simulated searches (replicates) per cell, copied from ``options``.
    chunk_reps : int
        ``study.chunk_reps``: replicates per chunk (part of the random streams), copied from ``options``.
    save_replicates : bool, default False
        ``study.save_replicates``: also write every replicate's estimate to ``replicates.parquet``.
    options : object, default None
        The kind's typed options: an instance of its schema (:attr:`simstudy.registry.Study.options`, a
        subclass of :class:`simstudy.studies.base.StudyOptions`) holding every ``study.KEY``.

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> config.study.kind, config.study.reps, config.study.chunk_reps, config.study.save_replicates
    ('evp_accuracy', 100, 50, True)
    """

    name: str
    kind: str
    reps: int
    chunk_reps: int
    save_replicates: bool = False
    options: Any = None  # the kind's typed options (its schema's instance; reps etc. are copied above)


@dataclass(frozen=True)
class RunnerConfig:
    """The ``runner`` group: how to run -- parallelism, sharding and failure tolerance; never changes a number.

    Parameters
    ----------
    n_jobs : int
        ``runner.n_jobs``: worker processes, a positive number or -1 for one per core.
    backend : str
        ``runner.backend``: one of :data:`BACKENDS` (``"loky"``, ``"threading"``, ``"sequential"``,
        ``"dask"``; dask needs the extra ``simstudy[dask]``).
    progress : bool or None
        ``runner.progress``: true or false; None (``auto``, the default in the YAML) shows a bar only on a
        terminal, log lines otherwise.
    address : str or None, default None
        ``runner.address``: a dask scheduler's address (``tcp://host:8786``); None starts a local cluster on
        127.0.0.1 for ``backend="dask"``.
    shard : tuple of (int, int) or None, default None
        ``runner.shard=i/N`` as ``(i, N)``, 1 <= i <= N: run only the i-th of N slices of the chunks (array
        jobs; then ``simstudy collect``); None: every chunk.
    max_failure_fraction : float, default 0.0
        ``runner.max_failure_fraction``: the share of chunks, in [0, 1], that may fail before the run fails.
    figures : tuple of str, default ("png",)
        ``runner.figures``: the formats of the study's figure (``figure.png``, ``figure.pdf``, ``figure.svg``),
        any of :data:`FIGURE_FORMATS`; ``[]`` draws none. PNG alone by default: a PDF costs as much again.
    collect : bool, default False
        Set by ``simstudy collect``, not by config files: only read the chunks (and name any missing).
    replay : tuple of (str, int) or None, default None
        Set by ``simstudy replay``, not by config files: the ``(cell, chunk)`` to rerun in this process,
        its exception let through.

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> config.runner
    RunnerConfig(n_jobs=1, backend='loky', progress=None, address=None, shard=None, max_failure_fraction=0.0,
                 figures=('png',), collect=False, replay=None)
    """

    n_jobs: int
    backend: str
    progress: bool | None  # None: a bar only on a terminal
    address: str | None = None  # dask scheduler address; None: a LocalCluster on 127.0.0.1
    shard: tuple[int, int] | None = None  # (i, N): run only the i-th of N slices of the tasks (1-based)
    max_failure_fraction: float = 0.0  # failed chunks / chunks above this make the run fail
    figures: tuple[str, ...] = ("png",)  # the study figure's formats: never changes a number
    collect: bool = False
    replay: tuple[str, int] | None = None  # (cell, chunk)


@dataclass(frozen=True)
class Config:
    """A validated, frozen study config: what :func:`parse` returns and the runner and the studies read.

    Parameters
    ----------
    seed : int
        ``seed``: the random seed (>= 0); every number of a run follows from it.
    distributions : tuple of DistributionConfig
        ``distribution``: one distribution, or one per name of a mapping (a selection study's arms, a pair
        compared); each makes cells of the study.
    budget : BudgetConfig
        ``budget``: the sample sizes B and the budgets n.
    estimators : tuple of EstimatorConfig
        ``estimators``: the estimator columns, in the config's order.
    study : StudyConfig
        ``study``: the study kind, its replicates, chunking and options.
    runner : RunnerConfig
        ``runner``: parallelism, sharding and failure tolerance (never changes a number).

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> config.seed, [d.name for d in config.distributions], config.budget.B, [e.name for e in config.estimators]
    (0, ['truncnorm'], (10,), ['v'])
    """

    seed: int
    distributions: tuple[DistributionConfig, ...]
    budget: BudgetConfig
    estimators: tuple[EstimatorConfig, ...]
    study: StudyConfig
    runner: RunnerConfig


# The checks of simstudy.schema, called by key and value (one implementation of each kind of check).
def _int(key: str, value: Any, *, minimum: int | None = None) -> int:
    return schema.integer(minimum=minimum)(key, value)


def _bool(key: str, value: Any) -> bool:
    return schema.boolean()(key, value)


def _section(cfg: Mapping, key: str) -> Mapping:
    value = cfg.get(key)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a config group (a mapping), got {value!r}")
    return value


def _choice(key: str, value: Any, valid: tuple[str, ...]) -> str:
    return schema.choice(valid)(key, value)


def _plain(value: Any) -> Any:
    """A config value made hashable: lists become tuples and mappings sorted tuples of pairs."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _target_distribution(d: Mapping, prefix: str, name: str | None) -> DistributionConfig:
    """A user's distribution class: ``_target_`` (module.Class) and keyword arguments next to it."""
    from simstudy import plugins

    if d.get("kind") is not None:
        raise ConfigError(
            f"{prefix} gives both kind={d['kind']} and _target_={d['_target_']}: select the group "
            f"that takes a class (distribution=custom {prefix}._target_=...) or drop the kind"
        )
    label = name or schema.optional(schema.text())(f"{prefix}.name", d.get("name"))
    kwargs = _plain({k: v for k, v in d.items() if k not in ("_target_", "name", "kind")})
    try:
        dist = plugins.PluginDistribution(d["_target_"], kwargs, label)
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
    _unknown_keys(f"{prefix}.", d, ("kind", "name", "params"))
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


def _distribution(d: Mapping, prefix: str, name: str | None) -> DistributionConfig:
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
    spec = _distribution_of({k: v for k, v in d.items() if k not in ("minimize", "stream")}, prefix, name)
    extra = (("minimize", True),) * minimize + (("stream", stream),) * (stream is not None)
    if not extra:
        return spec
    return dataclasses.replace(spec, params=tuple(sorted((*spec.params, *extra))))


def _distribution_of(d: Mapping, prefix: str, name: str | None) -> DistributionConfig:
    from simstudy import plugins

    if "_target_" in d:
        return _target_distribution(d, prefix, name)
    registered = plugins.registered_distribution(d.get("kind"))  # type: ignore[arg-type]  # None: not registered
    if registered is not None:  # a kind a plug-in registered: its class, as if named by _target_
        return _target_distribution(
            {**{k: v for k, v in d.items() if k != "kind"}, "_target_": registered}, prefix, name
        )
    kind = _choice(
        f"{prefix}.kind",
        d.get("kind"),
        tuple(k for k in sorted(distributions.KINDS) if k != "target") + plugins.distribution_kinds(),
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
        params["seed"] = _int(f"{prefix}.seed", params.get("seed", 0), minimum=0)
    name = d.get("name") or name
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"{prefix}.name must be a string, got {name!r}")
    try:
        # Validates every parameter (cheap next to the study); unnamed, it takes the kind's default label.
        dist = distributions.from_spec(kind, params if name is None else {**params, "name": name})
    except distributions.InvalidParameter as exc:
        raise ConfigError(f"{prefix}.{exc}") from None
    except ValueError as exc:  # data files and data-set names (the message names file, row and value)
        raise ConfigError(f"{prefix}: {exc}") from None
    return DistributionConfig(name or dist.name, kind, tuple(sorted(params.items())))


def _distributions(d: Any) -> tuple[DistributionConfig, ...]:
    """One distribution (a mapping with a ``kind``) or several, as a mapping from name to distribution."""
    if not isinstance(d, Mapping) or not d:
        raise ConfigError(f"distribution must be a distribution (with a kind) or a mapping of named ones, got {d!r}")
    if "kind" in d or "_target_" in d:
        return (_distribution(d, "distribution", None),)
    specs = []
    for name, sub in d.items():
        if not isinstance(sub, Mapping):
            raise ConfigError(
                f"distribution.{name} must be a distribution (a mapping with a kind or a _target_), got {sub!r}"
            )
        specs.append(_distribution(sub, f"distribution.{name}", str(name)))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"distribution names must differ, got {names}")
    return tuple(specs)


def _once(key: str, values: tuple[int, ...]) -> None:
    """A list naming a value twice is a typo (budget.n=[3,3,5] for [3,4,5]?), refused as models=[a,a] is:
    kept, it would silently run fewer cells or budgets than typed."""
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise ConfigError(
            f"{key} lists {', '.join(map(str, twice))} more than once, got {list(values)}: give each value once"
        )


def _budget(d: Mapping) -> BudgetConfig:
    _unknown_keys("budget.", d, ("B", "n"))
    raw_B = d.get("B")
    Bs = tuple(raw_B) if isinstance(raw_B, (list, tuple)) else (raw_B,)
    if not Bs:
        raise ConfigError("budget.B must be an integer >= 1 or a non-empty list of them, got []")
    Bs = tuple(_int("budget.B", B, minimum=1) for B in Bs)
    _once("budget.B", Bs)
    raw_n = d.get("n")
    if raw_n is None:
        return BudgetConfig(Bs, None)
    ns = tuple(raw_n) if isinstance(raw_n, (list, tuple)) else (raw_n,)
    if not ns:
        raise ConfigError("budget.n must be null (all of 1..B) or a non-empty list of integers, got []")
    ns = tuple(_int("budget.n", n, minimum=1) for n in ns)
    _once("budget.n", ns)
    if max(ns) > min(Bs):
        raise ConfigError(
            f"budget.n must not exceed budget.B (the estimators interpolate only): n={max(ns)} > B={min(Bs)}"
        )
    return BudgetConfig(Bs, tuple(sorted(set(ns))))


def _plugin_estimator(name: str, spec: Mapping, target: str, per_sample: Any) -> EstimatorConfig:
    """A plug-in estimator (``_target_``, or a method registered by :func:`simstudy.plugins.register_estimator`):
    imported and called on a tiny input now, before any compute (:func:`simstudy.plugins.check_estimator`)."""
    from simstudy import plugins

    key = f"estimators.{name}"
    per_sample = _bool(f"{key}.per_sample", per_sample)
    kwargs = _plain({k: v for k, v in spec.items() if k not in ("_target_", "method", "per_sample")})
    est = EstimatorConfig(str(name), "plugin", target=target, kwargs=kwargs, per_sample=per_sample)
    try:
        plugins.check_estimator(est.plugin(), key)
        source = plugins.source_hash(target)
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from None
    return dataclasses.replace(est, source=source)


def _estimators(d: Any) -> tuple[EstimatorConfig, ...]:
    from simstudy import plugins

    methods = tuple(plugins.estimator_methods())
    if not isinstance(d, Mapping) or not d:
        raise ConfigError(
            f"estimators must select at least one of: {', '.join(methods)} (or name a plug-in: "
            f"+estimators.NAME._target_=module.function), got {d!r}"
        )
    out = []
    for name, spec in d.items():
        if not isinstance(spec, Mapping):
            raise ConfigError(f"estimators.{name} must be a mapping with a 'method' or a '_target_', got {spec!r}")
        if "-" in str(name):  # paired differences are labelled "a-b"
            raise ConfigError(
                f"estimators.{name}: an estimator's name must not contain '-' (paired differences "
                f"are labelled a-b); rename it, e.g. {str(name).replace('-', '_')}"
            )
        if "_target_" in spec:
            if "method" in spec:
                raise ConfigError(
                    f"estimators.{name} gives both method={spec['method']} and _target_={spec['_target_']}: keep one"
                )
            out.append(_plugin_estimator(name, spec, spec["_target_"], spec.get("per_sample", False)))
            continue
        registered = plugins.registered_estimator(spec.get("method"))  # type: ignore[arg-type]  # None: not registered
        if registered is not None:
            out.append(_plugin_estimator(name, spec, registered[0], spec.get("per_sample", registered[1])))
            continue
        _unknown_keys(f"estimators.{name}.", spec, ("method", "resamples"))
        method = _choice(f"estimators.{name}.method", spec.get("method"), plugins.BUILTIN_ESTIMATORS)
        resamples = _int(f"estimators.{name}.resamples", spec.get("resamples", 1000), minimum=1)
        out.append(EstimatorConfig(str(name), method, resamples))
    return tuple(out)


def _log_plugin_costs(config: Config) -> None:
    """Say, once per parse, that a per-sample plug-in is looped over the replicates in Python and what that costs."""
    import logging

    B = max(config.budget.B)
    n = config.budget.n_for(B)
    cells = len(config.distributions) * len(config.budget.B)
    for e in config.estimators:
        if e.is_plugin and e.per_sample:
            from simstudy import plugins

            cost = plugins.estimator_cost(e.plugin(), B, n if config.study.kind == "evp_accuracy" else [B])
            total = cost * config.study.reps * cells * (2 if config.study.kind == "wrong_conclusions" else 1)
            logging.getLogger("simstudy.plugins").info(
                "estimators.%s: %s is a per-sample function (per_sample: true), looped over the replicates in "
                "Python: %.3g ms per replicate at B=%d, about %.3g s in all for this study (a vectorized "
                "function of the (reps, B) array costs far less)",
                e.name,
                e.target,
                1e3 * cost,
                B,
                total,
            )


#: A study name: it becomes a directory name, so no separators and no leading dot (no "..", no hidden dir).
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


def _study(d: Mapping) -> StudyConfig:
    name = schema.text()("study.name", d.get("name"))
    if not _NAME.fullmatch(name):  # it names the run directory (outputs/<study.name>/...): never a path
        raise ConfigError(
            f"study.name must be a name (letters, digits, '_', '-', '.'; not starting with '.'), got {name!r}"
        )
    kind = _choice("study.kind", d.get("kind"), study_kinds())
    options = schema.parse(
        extend.studies.get(kind).options, d, "study.", ignore=("name", "kind"), what=f"the {kind} study"
    )
    return StudyConfig(
        name=name,
        kind=kind,
        reps=options.reps,
        chunk_reps=options.chunk_reps,
        save_replicates=options.save_replicates,
        options=options,
    )


def _unknown_keys(prefix: str, d: Mapping, valid: tuple[str, ...]) -> None:
    for key in d:
        if key not in valid:
            raise ConfigError(f"{prefix}{key} is not a setting (settings: {', '.join(valid)})")


def parse_shard(value: Any) -> tuple[int, int] | None:
    """``"i/N"`` (1 <= i <= N) as ``(i, N)``; ``None`` for an unsharded run."""
    if value is None:
        return None
    parts = value.split("/") if isinstance(value, str) else []
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts) or not 1 <= int(parts[0]) <= int(parts[1]):
        raise ConfigError(f"runner.shard must be i/N with 1 <= i <= N (e.g. 2/8), got {value!r}")
    return int(parts[0]), int(parts[1])


def _dask_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def _runner(d: Mapping) -> RunnerConfig:
    _unknown_keys("runner.", d, _RUNNER_KEYS)
    n_jobs = _int("runner.n_jobs", d.get("n_jobs"))
    if n_jobs == 0 or n_jobs < -1:
        raise ConfigError(f"runner.n_jobs must be a positive number of workers or -1 (all cores), got {n_jobs}")
    progress = d.get("progress", "auto")
    if progress not in (True, False, "auto"):
        raise ConfigError(f"runner.progress must be true, false or auto, got {progress!r}")
    if d.get("backend") == "multiprocessing":
        raise ConfigError(
            f"runner.backend=multiprocessing is not supported (joblib's multiprocessing backend cannot "
            f"hand back each chunk as it finishes); use loky, the process backend (backends: "
            f"{', '.join(BACKENDS)})"
        )
    backend = _choice("runner.backend", d.get("backend"), BACKENDS)
    address = d.get("address")  # checked first: a bad value is reported whether or not dask is installed
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ConfigError(
            f"runner.address must be a dask scheduler address (e.g. tcp://10.0.0.5:8786) or null, got {address!r}"
        )
    if backend == "dask" and not _dask_available():
        raise ConfigError(
            "runner.backend=dask needs dask.distributed, which is not installed: pip install 'simstudy[dask]'"
        )
    fraction = schema.number(minimum=0, maximum=1, what="a number in [0, 1]")(
        "runner.max_failure_fraction", d.get("max_failure_fraction", 0.0)
    )
    return RunnerConfig(
        n_jobs=n_jobs,
        backend=backend,
        progress=None if progress == "auto" else progress,
        address=address,
        shard=parse_shard(d.get("shard")),
        max_failure_fraction=fraction,
        figures=schema.listed(schema.choice(FIGURE_FORMATS), minimum=0, what="figure formats", sort=False)(
            "runner.figures", d.get("figures", ["png"])
        ),
    )


def parse(cfg: Mapping) -> Config:
    """Validate a resolved config mapping and freeze it.

    The CLI and :func:`simstudy.compose` call this on Hydra's resolved config; every check runs here, before
    any compute: each key's type and range, the study kind's options (its schema), distributions a
    continuous-only study needs, plug-in estimators and distributions (imported and called on a tiny input),
    the kind's own check and the planned memory (:func:`check_chunk_memory`).

    Parameters
    ----------
    cfg : Mapping
        Keys ``seed``, ``distribution`` (one, or a mapping of named ones), ``budget``, ``estimators``,
        ``study``, ``runner`` (the layout of ``configs/config.yaml``), with interpolations already resolved.

    Returns
    -------
    Config
        The frozen config (hashable parts; no Hydra or OmegaConf objects).

    Raises
    ------
    ConfigError
        On the first invalid value, in one line naming its key and value; an unknown key; a discrete
        distribution for a continuous-only study; plug-in estimators for a study that takes none; a plan too
        large for memory (:func:`memory_limit`).

    Examples
    --------
    >>> from simstudy.config import parse
    >>> cfg = {
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... }
    >>> config = parse(cfg)
    >>> config.study.name, config.budget.n_for(10)[-3:]
    ('demo', (8, 9, 10))
    >>> parse({**cfg, "budget": {"B": [10, 0]}})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.B must be an integer >= 1, got 0
    """
    _unknown_keys("", cfg, _TOP_KEYS)
    seed = _int("seed", cfg.get("seed"), minimum=0)
    study = _study(_section(cfg, "study"))
    spec = extend.studies.get(study.kind)
    dists = _distributions(cfg.get("distribution"))
    if spec.continuous:
        discrete = [d.name for d in dists if not d.continuous]
        if discrete:
            raise ConfigError(
                f"a {study.kind} study needs continuous distributions (kinds: "
                f"{', '.join(distributions.CONTINUOUS_KINDS)}); {', '.join(discrete)} is not"
            )
    config = Config(
        seed=seed,
        distributions=dists,
        budget=_budget(_section(cfg, "budget")),
        estimators=_estimators(cfg.get("estimators")),
        study=study,
        runner=_runner(_section(cfg, "runner")),
    )
    plugged = [e.name for e in config.estimators if e.is_plugin]
    if plugged and not spec.plugin_estimators:
        takers = [k for k in study_kinds() if extend.studies.get(k).plugin_estimators]
        raise ConfigError(
            f"estimators.{plugged[0]}: plug-in estimators join the {' and '.join(takers)} "
            f"studies; a {study.kind} study takes only {', '.join(estimators.CLOSED_FORM)}"
        )
    _minimize_iv(study, dists)
    if spec.check is not None:
        spec.check(config)
    check_chunk_memory(config, cells=len(config.distributions))  # a cell per distribution at least
    _log_plugin_costs(config)
    return config


# The data commands (simstudy curve, bands, audit, extrapolate): their shared keys and checks live in
# simstudy.commands._data, each command's own in its module under simstudy.commands (the old names import from
# there on first use: __getattr__ above).

#: The studies that take a distribution with ``minimize: true`` (lower is better): it draws -x, and they report
#: their numbers about the minimum (the rates are the same either way; means, biases and gaps are mirrored back).
MINIMIZE_STUDIES = (
    "evp_accuracy",
    "wrong_conclusions",
    "band_coverage",
    "bootstrap_coverage",
    "band_triviality",
    "sample_disagreement",
    "model_selection",
)
#: Of those, the studies whose distributions are separate cells (the others compare them: all or none minimize).
_SEPARATE_CELLS = ("evp_accuracy", "band_coverage", "bootstrap_coverage", "band_triviality")


def _minimize_iv(study: StudyConfig, dists: tuple[DistributionConfig, ...]) -> None:
    """Refuse, in one line, a ``minimize: true`` distribution where the study's numbers would be those of -x:
    a study that does not mirror them back, a quantile other than the median (the q-quantile of the minimum is
    the (1 - q)-quantile of the maximum of -x), or models compared of which only some minimize."""
    mirrored = [d.name for d in dists if d.minimize]
    if not mirrored:
        return
    first = f"distribution{'' if len(dists) == 1 else f'.{mirrored[0]}'}.minimize=true"
    if study.kind not in MINIMIZE_STUDIES:
        raise ConfigError(
            f"{first}: a {study.kind} study does not report the minimum yet (its numbers would be those of -x); "
            f"studies that do: {', '.join(MINIMIZE_STUDIES)}"
        )
    q = getattr(study.options, "quantile", 0.5)
    if q != 0.5:
        raise ConfigError(
            f"study.quantile={q:g} with {first}: a {study.kind} study of the minimum takes the median only "
            f"(study.quantile=0.5)"
        )
    others = [d.name for d in dists if not d.minimize]
    if others and study.kind not in _SEPARATE_CELLS:
        raise ConfigError(
            f"distribution.{others[0]}.minimize=false but {first}: the models a {study.kind} study compares "
            f"must agree on whether lower is better"
        )
