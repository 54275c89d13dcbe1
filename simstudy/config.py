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

import numpy as np

from simstudy import distributions, extend, schema
from simstudy._limits import MEMORY_ENV, _check_time, check_memory, memory_limit

# Upward for now (issue 26): audit's and extrapolate's schemas below extend the data keys; the import goes when
# they move to simstudy.commands.
from simstudy.commands._data import DataConfig, DataOptions, _bands, _bound, _command_iv, _data, _names, _positive
from simstudy.engine.memory import (
    _BYTES_PER_BOOT,
    _BYTES_PER_CHUNK,
    _SECONDS_PER_BOOT,
    _SECONDS_PER_COVERAGE_SCORE,
    _SECONDS_PER_EVP_SCORE,
    _SECONDS_PER_RESAMPLE_SCORE,
    _workers,
    check_budget_memory,
    check_chunk_memory,
)
from simstudy.schema import ConfigError, option
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
    "AuditOptions",
    "AuditConfig",
    "parse_audit",
    "ExtrapolateOptions",
    "ExtrapolateConfig",
    "parse_extrapolate",
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
_RUNNER_KEYS = ("n_jobs", "backend", "progress", "address", "shard", "max_failure_fraction")
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
#: The parameters that say which data a distribution is made of (left out of a named stream's key).
_DATA_PARAMS = ("path", "dataset", "model", "score_column", "model_column", "missing", "scale", "split", "reduce")


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
        return {
            "kind": self.kind,
            "params": [
                [k, {"sha256": digests[v]}] if k == "path" and v in digests else list((k, v)) for k, v in self.params
            ],
        }

    @functools.cached_property
    def inputs(self) -> dict[str, str]:
        """The SHA-256 (hex) of every file the distribution reads, by its path as given; read once."""
        from simstudy import io

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


def _audit_cost_iv(o: Any, n: int) -> None:
    """Refuse audit sizes (``rounds``, ``bootstrap_rounds`` x ``resamples``, ``evp_reps``) whose studies would
    compute for longer than the time limit (:func:`_check_time`) with ``n`` scores per simulated search, or
    whose chunk of band-coverage rounds would not fit in memory, before anything is written."""
    from simstudy.studies.audit import progress_chunk

    workers = _workers(o.n_jobs)
    on = f"on {workers} core{'s' * (workers > 1)}, {n:,} scores per simulated search"
    check_memory(
        "rounds",
        o.rounds,
        2 * 8.0 * n * progress_chunk(o.rounds),
        f"a chunk of {progress_chunk(o.rounds):,} simulated searches of {n:,} scores each",
        "lower rounds (1024 gives a Monte Carlo error of about 0.01)",
    )
    _check_time(
        "rounds",
        o.rounds,
        o.rounds * n * _SECONDS_PER_COVERAGE_SCORE / workers,
        f"the band coverage, {on}",
        "lower rounds (1024 gives a Monte Carlo error of about 0.01)",
    )
    key = "resamples" if o.resamples / 1000 > o.bootstrap_rounds / 512 else "bootstrap_rounds"  # the larger
    _check_time(
        key,
        getattr(o, key),
        o.bootstrap_rounds * o.resamples * n * _SECONDS_PER_RESAMPLE_SCORE / workers,
        f"bootstrap_rounds={o.bootstrap_rounds} x resamples={o.resamples} bootstrap resamples, {on}",
        "lower bootstrap_rounds or resamples (512 x 1000 by default)",
    )
    _check_time(
        "evp_reps",
        o.evp_reps,
        o.evp_reps * n * _SECONDS_PER_EVP_SCORE / workers,
        f"the accuracy of U, V and W, {on}",
        "lower evp_reps (10000 by default)",
    )


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
                 collect=False, replay=None)
    """

    n_jobs: int
    backend: str
    progress: bool | None  # None: a bar only on a terminal
    address: str | None = None  # dask scheduler address; None: a LocalCluster on 127.0.0.1
    shard: tuple[int, int] | None = None  # (i, N): run only the i-th of N slices of the tasks (1-based)
    max_failure_fraction: float = 0.0  # failed chunks / chunks above this make the run fail
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
    minimize = schema.boolean()(f"{prefix}.minimize", d.get("minimize", False))
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
# simstudy.commands._data, curve's and bands' own in simstudy.commands.curve and .bands (the old names below
# import from there on first use: __getattr__). Audit's and extrapolate's keys are still here.

#: The narrowest audit bandwidth accepted, as a share of high - low: below it each score is an atom of its own
#: (the fit is the data, whatever the KDE), and the reflected kernels' grid cannot resolve it.
_MIN_BANDWIDTH_SHARE = 1e-6


_KDE_BOUND = "the fitted distribution lives on [low, high]"


@dataclass(frozen=True)
class AuditOptions(DataOptions):
    """The keys of ``simstudy audit`` (``configs/audit.yaml`` selects them): the data keys and the audit's own.

    Some data keys mean more here: the model is one model, and the bounds are those of the fitted
    distribution (finite; default [0, 1]). :func:`parse_audit` checks a mapping of them and returns an
    :class:`AuditConfig`.

    Parameters
    ----------
    data : str, required
        A CSV/TSV (one score column, or model and score columns; header optional for one column), JSON Lines or
        JSON file, or a shipped data set: reuters_hedwig, deberta_mnli, tdsa_fiesta.
    model : tuple of str or None, default None
        The model to audit (needed when the file holds several). Parsed to a one-element tuple.
    models : tuple of str or None, default None
        The model to audit, as a one-element list. A single name is parsed to a one-element tuple.
    score_column : str or None, default None
        The column of scores (case and surrounding spaces ignored); default: the only column, else one named
        score.
    model_column : str or None, default None
        The column of model names; default: model if there is one, else one model named after the file.
    missing : str or float, default "error"
        Failed runs (an empty field, nan, NA, null): error (stop and say where), drop (leave them out, saying
        how many per model), or a number they count as, e.g. missing=0. A number is parsed to a float, in score
        units.
    scale : float, default 1.0
        Multiply every score by this before use, e.g. scale=0.01 for percentages.
    compare : bool, default False
        True: the data must hold at least two models.
    sample_size : int or None, default None
        The number of scores n to audit (default: how many you have). In runs (scores) per model.
    split : str or None, default None
        deberta_mnli only (refused for other data): the MultiNLI validation split, matched or mismatched; None:
        matched.
    reduce : str or None, default None
        deberta_mnli only (refused for other data): each run's best accuracy over its learning curve (best) or
        its last (final); None: best.
    low : float or None, default 0.0
        The lowest score possible: the fitted distribution lives on [low, high]. In score units; must be finite.
    high : float or None, default 1.0
        The highest score possible: the fitted distribution lives on [low, high]. In score units; must be
        finite.
    minimize : bool, default False
        True: lower scores are better (losses, error rates, perplexities): expected minimum curves, bands on
        the lower tail, a target is reached at or below it.
    bandwidth : float or None, default None
        The kernel SD of the fit, in score units (default: chosen by bw_method).
    bw_factor : float or None, default None
        Or a factor of the SD of the scores (atoms left out), as scipy's gaussian_kde takes it.
    bw_of : str, default "reflected"
        Which SD bw_factor multiplies: reflected (the data with its reflections) or data.
    bw_method : str, default "isj"
        How the bandwidth is chosen when neither bandwidth nor bw_factor is given: isj (improved Sheather-Jones,
        for multimodal scores) or silverman (rule of thumb; over-smooths clusters).
    find_atoms : bool, default True
        True: scores repeated more often than a density allows (failed runs scored 0, a plateau) are fitted as
        point masses, the rest as a KDE; false: one KDE of all the scores.
    confidence : float, default 0.8
        The simultaneous coverage of the bands audited, e.g. 0.8. A probability in (0, 1).
    method : str, default "ld_highest_density"
        The band audited: ld_highest_density, ld_equal_tailed, ks or dkw.
    target_k : int, default 10
        Report how many scores bound the median tuning curve up to this budget. In trials.
    rounds : int, default 1024
        Simulated searches for the bands' coverage (more: a smaller Monte Carlo error).
    bootstrap_rounds : int, default 512
        Simulated searches for the bootstrap's coverage.
    resamples : int, default 1000
        Bootstrap resamples per simulated search.
    evp_reps : int, default 10000
        Simulated searches for the bias, SD and MSE of U, V and W.
    seed : int, default 0
        The random seed: the same seed gives the same numbers.
    n_jobs : int, default -1
        Worker processes (-1: every core); never changes a number.

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config import AuditOptions
    >>> opts = schema.parse(AuditOptions, {"data": "scores.csv"})
    >>> opts.low, opts.high, opts.rounds, opts.n_jobs
    (0.0, 1.0, 1024, -1)
    """

    model: tuple[str, ...] | None = option(None, "the model to audit (needed when the file holds several)", _names)
    models: tuple[str, ...] | None = option(None, "the model to audit, as a one-element list", _names)
    sample_size: int | None = option(
        None, "the number of scores n to audit (default: how many you have)", schema.optional(schema.integer(minimum=2))
    )
    low: float | None = option(0.0, f"the lowest score possible: {_KDE_BOUND}", _bound)
    high: float | None = option(1.0, f"the highest score possible: {_KDE_BOUND}", _bound)
    bandwidth: float | None = option(
        None, "the kernel SD of the fit, in score units (default: chosen by bw_method)", schema.optional(_positive)
    )
    bw_factor: float | None = option(
        None,
        "or a factor of the SD of the scores (atoms left out), as scipy's gaussian_kde takes it",
        schema.optional(_positive),
    )
    bw_of: str = option(
        "reflected",
        "which SD bw_factor multiplies: reflected (the data with its reflections) or data",
        schema.choice(("reflected", "data")),
    )
    bw_method: str = option(
        "isj",
        "how the bandwidth is chosen when neither bandwidth nor bw_factor is given: isj "
        "(improved Sheather-Jones, for multimodal scores) or silverman (rule of thumb; "
        "over-smooths clusters)",
        schema.choice(("isj", "silverman")),
    )
    find_atoms: bool = option(
        True,
        "true: scores repeated more often than a density allows (failed runs scored 0, a plateau) are fitted as "
        "point masses, the rest as a KDE; false: one KDE of all the scores",
        schema.boolean(),
    )
    confidence: float = option(0.8, "the simultaneous coverage of the bands audited, e.g. 0.8", schema.level())
    method: str = option(
        "ld_highest_density",
        "the band audited: ld_highest_density, ld_equal_tailed, ks or dkw",
        schema.choice(lambda: _bands().METHODS),
    )
    target_k: int = option(
        10, "report how many scores bound the median tuning curve up to this budget", schema.integer(minimum=1)
    )
    rounds: int = option(
        1024,
        "simulated searches for the bands' coverage (more: a smaller Monte Carlo error)",
        schema.integer(minimum=2),
    )
    bootstrap_rounds: int = option(512, "simulated searches for the bootstrap's coverage", schema.integer(minimum=2))
    resamples: int = option(1000, "bootstrap resamples per simulated search", schema.integer(minimum=2))
    evp_reps: int = option(
        10000, "simulated searches for the bias, SD and MSE of U, V and W", schema.integer(minimum=2)
    )
    seed: int = option(0, "the random seed: the same seed gives the same numbers", schema.integer(minimum=0))
    n_jobs: int = option(-1, "worker processes (-1: every core); never changes a number", schema.integer())


def _threshold(key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ConfigError(
            f"{key} must be a quantile in [0, 1) (the share of the lowest scores censored, e.g. "
            f"{key}=0.5), or null; for a fixed score use threshold_score=, got {value!r}"
        )
    return float(value)


def _c_values(key: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10 for v in values):
        raise ConfigError(
            f"{key} must be an integer from 1 to 10 or a list of them (the effective numbers of "
            f"hyperparameters searched), e.g. {key}=[1,2,3], got {value!r}"
        )
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:  # a typo (c=[1,1] for c=[1,2]?): the fit would search fewer values than typed
        raise ConfigError(
            f"{key} lists {', '.join(map(str, twice))} more than once, got {value!r}: give each number of "
            f"hyperparameters once, e.g. {key}=[1,2,3]"
        )
    return tuple(sorted(values))


@dataclass(frozen=True)
class ExtrapolateOptions(DataOptions):
    """The keys of ``simstudy extrapolate`` (``configs/extrapolate.yaml`` selects them).

    The data keys and the extrapolation's own: the noisy quadratic law of Lourie et al. (2025) fitted to the
    tail of each model's scores, with parametric bootstrap bands. :func:`parse_extrapolate` checks a mapping
    of them and returns an :class:`ExtrapolateConfig`.

    Parameters
    ----------
    data : str, required
        A CSV/TSV (one score column, or model and score columns; header optional for one column), JSON Lines or
        JSON file, or a shipped data set: reuters_hedwig, deberta_mnli, tdsa_fiesta.
    model : tuple of str or None, default None
        Use only this model of the file (model=NAME); same as models=[NAME]. Parsed to a one-element tuple.
    models : tuple of str or None, default None
        Use only these models, e.g. models=[mlp,lstm]. A single name is parsed to a one-element tuple.
    score_column : str or None, default None
        The column of scores (case and surrounding spaces ignored); default: the only column, else one named
        score.
    model_column : str or None, default None
        The column of model names; default: model if there is one, else one model named after the file.
    missing : str or float, default "error"
        Failed runs (an empty field, nan, NA, null): error (stop and say where), drop (leave them out, saying
        how many per model), or a number they count as, e.g. missing=0. A number is parsed to a float, in score
        units.
    scale : float, default 1.0
        Multiply every score by this before use, e.g. scale=0.01 for percentages.
    compare : bool, default False
        True: the data must hold at least two models.
    sample_size : int or None, default None
        Fit only the first n scores of each model (random-search order); the model's other runs are then held
        out to check the extrapolation against (default: fit every score). In runs (scores) per model.
    split : str or None, default None
        deberta_mnli only (refused for other data): the MultiNLI validation split, matched or mismatched; None:
        matched.
    reduce : str or None, default None
        deberta_mnli only (refused for other data): each run's best accuracy over its learning curve (best) or
        its last (final); None: best.
    low : float or None, default None
        The lowest score possible (0 for accuracy); scores below it are an error. In score units; None:
        unbounded (-inf).
    high : float or None, default None
        The highest score possible (1 for accuracy); scores above it are an error. In score units; None:
        unbounded (+inf).
    minimize : bool, default False
        True: lower scores are better (losses, error rates, perplexities): expected minimum curves, bands on
        the lower tail, a target is reached at or below it.
    threshold : float or None, default None
        Censor the lowest share of the scores before fitting the tail: a quantile in [0, 1) (default 0.5 unless
        threshold_score is given). A share of the scores, in [0, 1).
    threshold_score : float or None, default None
        Instead of threshold: censor the scores at or below this score, e.g. 0.85. In score units.
    c : tuple of int or None, default None
        The effective numbers of hyperparameters the fit searches: an integer 1..10 or a list, e.g. c=[1,2,3]
        (default: 1..10).
    n_boot : int, default 200
        Parametric bootstrap replicates for the intervals and bands (each a fit of n simulated scores: the slow
        part).
    level : float, default 0.95
        The coverage of the intervals and bands (parametric and nonparametric), e.g. 0.95. A probability in (0,
        1).
    method : str, default "ld_highest_density"
        The nonparametric band drawn beside the fit: ld_highest_density, ld_equal_tailed, ks or dkw.
    k_max : int or None, default None
        The largest budget k extrapolated to (default: 100 n). In trials.
    mean : bool, default True
        Also the mean tuning curve and its band (false: the median only, about twice as fast for small n).
    seed : int, default 0
        The random seed of the bootstrap: the same seed gives the same numbers.
    n_jobs : int, default -1
        Worker processes (-1: every core); never changes a number.

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config import ExtrapolateOptions
    >>> opts = schema.parse(ExtrapolateOptions, {"data": "scores.csv", "c": 3})
    >>> opts.c, opts.n_boot, opts.level, opts.threshold
    ((3,), 200, 0.95, None)
    """

    sample_size: int | None = option(
        None,
        "fit only the first n scores of each model (random-search order); the "
        "model's other runs are then held out to check the extrapolation against "
        "(default: fit every score)",
        schema.optional(schema.integer(minimum=2)),
    )
    threshold: float | None = option(
        None,
        "censor the lowest share of the scores before fitting the tail: a "
        "quantile in [0, 1) (default 0.5 unless threshold_score is given)",
        _threshold,
    )
    threshold_score: float | None = option(
        None,
        "instead of threshold: censor the scores at or below this score, e.g. 0.85",
        schema.optional(schema.number(what="a finite number")),
    )
    c: tuple[int, ...] | None = option(
        None,
        "the effective numbers of hyperparameters the fit searches: an integer "
        "1..10 or a list, e.g. c=[1,2,3] (default: 1..10)",
        _c_values,
    )
    n_boot: int = option(
        200,
        "parametric bootstrap replicates for the intervals and bands (each a fit of n simulated scores: the slow part)",
        schema.integer(minimum=2),
    )
    level: float = option(
        0.95, "the coverage of the intervals and bands (parametric and nonparametric), e.g. 0.95", schema.level()
    )
    method: str = option(
        "ld_highest_density",
        "the nonparametric band drawn beside the fit: ld_highest_density, ld_equal_tailed, ks or dkw",
        schema.choice(lambda: _bands().METHODS),
    )
    k_max: int | None = option(
        None, "the largest budget k extrapolated to (default: 100 n)", schema.optional(schema.integer(minimum=1))
    )
    mean: bool = option(
        True,
        "also the mean tuning curve and its band (false: the median only, about twice as fast for small n)",
        schema.boolean(),
    )
    seed: int = option(
        0, "the random seed of the bootstrap: the same seed gives the same numbers", schema.integer(minimum=0)
    )
    n_jobs: int = option(-1, "worker processes (-1: every core); never changes a number", schema.integer())


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


@dataclass(frozen=True)
class AuditConfig:
    """``simstudy audit``: how trustworthy tuning-curve analyses are at a researcher's own sample size.

    What :func:`parse_audit` returns: a distribution (a reflected KDE on [low, high]) is fitted to all the
    scores, and searches of ``sample_size`` scores simulated from it to measure the bands' coverage, the
    bootstrap's and the bias, SD and MSE of the expected-maximum estimators U, V and W.

    Parameters
    ----------
    data : DataConfig
        All the scores (the KDE is fitted to all of them; ``data.sample_size`` is None), with finite
        ``low`` and ``high``.
    sample_size : int or None
        ``sample_size``: the number of scores n to audit, in runs; None: the number of scores.
    model : str or None
        ``model``: the one model audited; None when the data hold one model.
    bandwidth : float or None
        ``bandwidth``: the kernel SD of the fit, in score units (default: chosen by bw_method).
    bw_factor : float or None
        ``bw_factor``: or a factor of the SD of the scores (atoms left out), as scipy's gaussian_kde takes it.
    bw_of : str
        ``bw_of``: which SD bw_factor multiplies: reflected (the data with its reflections) or data.
    bw_method : str
        ``bw_method``: how the bandwidth is chosen when neither bandwidth nor bw_factor is given: isj (improved
        Sheather-Jones, for multimodal scores) or silverman (rule of thumb; over-smooths clusters).
    confidence : float
        ``confidence``: the simultaneous coverage of the bands audited, e.g. 0.8. A probability in (0, 1).
    find_atoms : bool, default True
        ``find_atoms``: fit repeated scores as point masses (true) or one KDE of all the scores (false).
    method : str
        ``method``: the band audited: ld_highest_density, ld_equal_tailed, ks or dkw.
    target_k : int
        ``target_k``: report how many scores bound the median tuning curve up to this budget. In trials.
    rounds : int
        ``rounds``: simulated searches for the bands' coverage (more: a smaller Monte Carlo error).
    bootstrap_rounds : int
        ``bootstrap_rounds``: simulated searches for the bootstrap's coverage.
    resamples : int
        ``resamples``: bootstrap resamples per simulated search.
    evp_reps : int
        ``evp_reps``: simulated searches for the bias, SD and MSE of U, V and W.
    seed : int
        ``seed``: the random seed: the same seed gives the same numbers.
    n_jobs : int
        ``n_jobs``: worker processes (-1: every core); never changes a number.

    Examples
    --------
    >>> from simstudy.config import parse_audit
    >>> config = parse_audit({"data": "scores.csv", "model": "lstm"})
    >>> config.model, (config.data.low, config.data.high), config.rounds, config.bw_method
    ('lstm', (0.0, 1.0), 1024, 'isj')
    """

    data: DataConfig  # all the scores (the KDE is fitted to all of them)
    sample_size: int | None  # the n to audit (None: the number of scores)
    model: str | None
    bandwidth: float | None
    bw_factor: float | None
    bw_of: str
    bw_method: str
    confidence: float
    method: str
    target_k: int
    rounds: int
    bootstrap_rounds: int
    resamples: int
    evp_reps: int
    seed: int
    n_jobs: int
    find_atoms: bool = True  # repeated scores are point masses (false: one KDE of all)


@dataclass(frozen=True)
class ExtrapolateConfig:
    """``simstudy extrapolate``: the noisy quadratic law fitted to each model's tail of scores, extrapolated.

    What :func:`parse_extrapolate` returns: the parametric tuning curve of Lourie, He & Cho (2025) fitted to
    the scores above a threshold and extrapolated to budgets past n, with parametric bootstrap bands beside a
    nonparametric band.

    Parameters
    ----------
    data : DataConfig
        Every score (``data.sample_size`` is None: the field below picks the scores fitted).
    sample_size : int or None
        ``sample_size``: fit the first n scores of each model (in runs); the rest are held out to check the
        extrapolation against; None: fit all.
    threshold : float or None
        ``threshold``: the censored share of the lowest scores, in [0, 1); 0.5 unless ``threshold_score`` is
        given (then None).
    threshold_score : float or None
        ``threshold_score``: instead of threshold: censor the scores at or below this score, e.g. 0.85. In score
        units.
    c : tuple of int or None
        ``c``: the effective numbers of hyperparameters the fit searches: an integer 1..10 or a list, e.g.
        c=[1,2,3] (default: 1..10).
    n_boot : int
        ``n_boot``: parametric bootstrap replicates for the intervals and bands (each a fit of n simulated
        scores: the slow part).
    level : float
        ``level``: the coverage of the intervals and bands (parametric and nonparametric), e.g. 0.95. A
        probability in (0, 1).
    method : str
        ``method``: the nonparametric band drawn beside the fit: ld_highest_density, ld_equal_tailed, ks or dkw.
    k_max : int or None
        ``k_max``: the largest budget k extrapolated to (default: 100 n). In trials.
    mean : bool
        ``mean``: also the mean tuning curve and its band (false: the median only, about twice as fast for small
        n).
    seed : int
        ``seed``: the random seed of the bootstrap: the same seed gives the same numbers.
    n_jobs : int
        ``n_jobs``: worker processes (-1: every core); never changes a number.

    References
    ----------
    .. [1] N. Lourie, H. He and K. Cho, "Hyperparameter loss surfaces are simple near their optima", COLM 2025
       (arXiv:2510.02721).

    Examples
    --------
    >>> from simstudy.config import parse_extrapolate
    >>> config = parse_extrapolate({"data": "scores.csv", "threshold_score": 0.85})
    >>> config.threshold, config.threshold_score, config.n_boot, config.level
    (None, 0.85, 200, 0.95)
    """

    data: DataConfig  # every score (sample_size moves to the field below)
    sample_size: int | None  # fit the first n scores (None: all); the rest are held out
    threshold: float | None  # the censored share (None with threshold_score)
    threshold_score: float | None
    c: tuple[int, ...] | None
    n_boot: int
    level: float
    method: str
    k_max: int | None
    mean: bool
    seed: int
    n_jobs: int


def parse_audit(cfg: Mapping) -> AuditConfig:
    """Validate the ``simstudy audit`` config (the keys of :class:`AuditOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    AuditConfig
        Its ``data`` keeps every score (``sample_size`` moves to the audit's own field).

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value; several models; infinite bounds; ``n_jobs=0``; a
        ``bandwidth`` below 1e-6 (high - low), or whose reflected kernels would not fit in memory
        (:func:`check_memory`); a ``target_k`` no band bounds with the largest sample size the audit searches.

    Examples
    --------
    >>> opts = parse_audit({"data": "scores.csv", "sample_size": 20})
    >>> opts.sample_size, opts.data.sample_size, (opts.data.low, opts.data.high)
    (20, None, (0.0, 1.0))
    """
    o = _command_iv("audit", cfg)
    from simstudy.studies.audit import SAMPLES_LIMIT

    # Any band with simultaneous coverage covers F(Y_(n)) >= l_n, so l_n <= (1 - confidence)^(1/n) (F(Y_(n)) is
    # Beta(n, 1)), and its upper median band is informative at most up to k = n ln 2 / -ln(1 - confidence).
    # A target_k beyond that for the largest n searched is refused at once (it searched every n up to the
    # limit, minutes of band computations, and then reported the limit as if it were enough).
    reach = SAMPLES_LIMIT * np.log(2.0) / -np.log1p(-o.confidence)
    if o.target_k > reach:
        raise ConfigError(
            f"target_k={o.target_k} cannot be bounded with the up to {SAMPLES_LIMIT:,} scores the audit "
            f"searches: at confidence={o.confidence:g} no band bounds the median curve beyond "
            f"k = {int(reach):,} with {SAMPLES_LIMIT:,} scores; lower target_k"
        )
    data = _data(o)
    if data.models is not None and len(data.models) > 1:
        raise ConfigError(
            f"simstudy audit examines one model at a time, got models={list(data.models)}: "
            f"run it once per model with model=NAME"
        )
    data = dataclasses.replace(data, sample_size=None)
    if not (np.isfinite(data.low) and np.isfinite(data.high)):
        raise ConfigError(
            f"low and high must be finite bounds of the scores (the KDE lives on [low, high]), "
            f"got low={data.low}, high={data.high}"
        )
    if o.n_jobs == 0:
        raise ConfigError("n_jobs must be a positive number of workers or -1 (all cores), got 0")
    # Before the scores are read, the least n an audit draws: the cost is checked again with the scores' n.
    _audit_cost_iv(o, o.sample_size or 2)
    if o.bandwidth is not None and o.bandwidth < _MIN_BANDWIDTH_SHARE * (data.high - data.low):
        raise ConfigError(
            f"bandwidth={cfg['bandwidth']} is too small for scores on [low, high] = [{data.low:g}, {data.high:g}]: "
            f"a sensible bandwidth lies between {_MIN_BANDWIDTH_SHARE:g} (high - low) = "
            f"{_MIN_BANDWIDTH_SHARE * (data.high - data.low):g} and high - low = {data.high - data.low:g}, on the "
            f"scale of the scores' spread; or leave it unset (bw_method chooses one) or use bw_factor="
        )
    if o.bandwidth is not None:
        # The reflected KDE keeps every image of each score's kernel within 10 bandwidths of [low, high]:
        # 2 (2 ceil(10 h / L) + 3) centres per score, each built in a few float64 temporaries.
        copies = 2 * (2 * np.ceil(10 * o.bandwidth / (data.high - data.low)) + 3)
        scores = o.sample_size or 1
        check_memory(
            "bandwidth",
            cfg["bandwidth"],
            24 * copies * scores,
            f"{copies:,.0f} reflected kernel centres per score, for at least {scores} score{'s' * (scores > 1)}",
            f"use a bandwidth on the scale of the scores' spread "
            f"(high - low = {data.high - data.low:g}), or bw_factor=",
        )
    return AuditConfig(
        data=data,
        sample_size=o.sample_size,
        model=None if data.models is None else data.models[0],
        bandwidth=o.bandwidth,
        bw_factor=o.bw_factor,
        bw_of=o.bw_of,
        bw_method=o.bw_method,
        confidence=o.confidence,
        method=o.method,
        target_k=o.target_k,
        rounds=o.rounds,
        bootstrap_rounds=o.bootstrap_rounds,
        resamples=o.resamples,
        evp_reps=o.evp_reps,
        seed=o.seed,
        n_jobs=o.n_jobs,
        find_atoms=o.find_atoms,
    )


#: The largest ``k_max`` of ``simstudy extrapolate``: its budgets are whole numbers held as float64 (exact below
#: 2^53); the work does not grow with k_max (about 64 log-spaced budgets), so no larger bound is needed.
_K_MAX = 10**15


def parse_extrapolate(cfg: Mapping) -> ExtrapolateConfig:
    """Validate the ``simstudy extrapolate`` config (the keys of :class:`ExtrapolateOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    ExtrapolateConfig
        ``threshold`` is 0.5 unless ``threshold_score`` is given; ``data`` keeps every score.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value (``c`` listing a number twice, too); ``threshold``
        and ``threshold_score`` both given; ``n_jobs=0``; ``k_max`` above 10^15.

    Examples
    --------
    >>> parse_extrapolate({"data": "scores.csv"}).threshold
    0.5
    >>> parse_extrapolate({"data": "scores.csv", "threshold": 1.0})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: threshold must be a quantile in [0, 1) (the share of the lowest scores censored, \
e.g. threshold=0.5), or null; for a fixed score use threshold_score=, got 1.0
    """
    o = _command_iv("extrapolate", cfg)
    data = dataclasses.replace(_data(o), sample_size=None)
    if o.threshold is not None and o.threshold_score is not None:
        raise ConfigError(
            f"threshold={o.threshold:g} and threshold_score={o.threshold_score:g} both set the "
            f"threshold: give one of them"
        )
    if o.threshold_score is not None and not np.isfinite(o.threshold_score):
        raise ConfigError(f"threshold_score must be a finite number, got {o.threshold_score}")
    if o.k_max is not None and o.k_max > _K_MAX:  # budgets are float64 (the curves' k): whole numbers up to 2^53
        raise ConfigError(
            f"k_max={o.k_max} is beyond the budgets the extrapolation computes exactly (at most {_K_MAX:.0e} runs); "
            f"lower k_max"
        )
    if o.n_jobs == 0:
        raise ConfigError("n_jobs must be a positive number of workers or -1 (all cores), got 0")
    # Every bootstrap replicate is kept until the tables are built, and each is a fit (milliseconds).
    check_memory(
        "n_boot",
        o.n_boot,
        o.n_boot * (_BYTES_PER_BOOT + _BYTES_PER_CHUNK / 25),
        "the bootstrap replicates' curves, per model",
        "lower n_boot (200 by default; 1000 for intervals at level 0.99)",
    )
    workers = _workers(o.n_jobs)
    _check_time(
        "n_boot",
        o.n_boot,
        o.n_boot * _SECONDS_PER_BOOT / workers,
        f"{o.n_boot:,} bootstrap fits per model, on {workers} core{'s' * (workers > 1)}",
        "lower n_boot (200 by default; 1000 for intervals at level 0.99)",
    )
    threshold = o.threshold if o.threshold is not None or o.threshold_score is not None else 0.5
    return ExtrapolateConfig(
        data=data,
        sample_size=o.sample_size,
        threshold=threshold,
        threshold_score=o.threshold_score,
        c=o.c,
        n_boot=o.n_boot,
        level=o.level,
        method=o.method,
        k_max=o.k_max,
        mean=o.mean,
        seed=o.seed,
        n_jobs=o.n_jobs,
    )
