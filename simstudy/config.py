"""Run configuration: plain, frozen, validated objects built from a plain mapping.

The CLI resolves its Hydra config to a plain ``dict`` (``OmegaConf.to_container(cfg, resolve=True)``) and
hands it to :func:`parse`; nothing below this module sees Hydra or OmegaConf, and joblib workers only ever
receive these frozen dataclasses. Every check runs before any compute and fails with a one-line
:class:`ConfigError` naming the key and the value, e.g. ``budget.B must be an integer >= 1, got 0``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy import distributions, schema
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
    "REQUIRED",
    "DataOptions",
    "CurveOptions",
    "BandsOptions",
    "COMMAND_OPTIONS",
    "DataConfig",
    "CurveConfig",
    "BandsConfig",
    "parse_curve",
    "parse_bands",
    "StudyOptions",
    "reps_option",
    "chunk_reps_option",
    "save_replicates_option",
    "check_chunk_memory",
    "check_budget_memory",
    "at_least_arms",
    "selection_algorithm_check",
    "band_method_check",
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


_REPS_DOC = "simulated searches per cell (more: a smaller Monte Carlo error)"
_CHUNK_REPS_DOC = (
    "searches per chunk, the unit of resuming and of parallel work (part of the random streams: "
    "changing it changes the numbers)"
)


def reps_option(default: int) -> Any:
    """The ``reps`` field of a study schema (``study.reps``), with the kind's own default.

    For a study kind's options (a subclass of :class:`StudyOptions`): the number of simulated searches per
    cell, an integer >= 2, with the shared help text.

    Parameters
    ----------
    default : int
        The kind's default number of replicates (simulated searches) per cell.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.integer(minimum=2)``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.config import StudyOptions, reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     reps: int = reps_option(400)
    >>> Options().reps
    400
    """
    return option(default, _REPS_DOC, schema.integer(minimum=2))


def chunk_reps_option(default: int) -> Any:
    """The ``chunk_reps`` field of a study schema (``study.chunk_reps``), with the kind's own default.

    The replicates per chunk: the unit of resuming and of parallel work, and part of the random streams
    (changing it changes the numbers). An integer >= 1.

    Parameters
    ----------
    default : int
        The kind's default number of replicates per chunk.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.integer(minimum=1)``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.config import StudyOptions, chunk_reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     chunk_reps: int = chunk_reps_option(100)
    >>> Options().chunk_reps
    100
    """
    return option(default, _CHUNK_REPS_DOC, schema.integer(minimum=1))


def save_replicates_option(default: bool) -> Any:
    """The ``save_replicates`` field of a study schema (``study.save_replicates``), with the kind's own default.

    Whether the study also writes every replicate's estimate to ``replicates.parquet`` (evp_accuracy does).

    Parameters
    ----------
    default : bool
        The kind's default.

    Returns
    -------
    dataclasses.Field
        A field made by :func:`simstudy.schema.option`, checked by ``schema.boolean()``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.config import StudyOptions, save_replicates_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     save_replicates: bool = save_replicates_option(True)
    >>> Options().save_replicates
    True
    """
    return option(
        default, "also write every replicate's estimate to replicates.parquet (evp_accuracy)", schema.boolean()
    )


@dataclass(frozen=True)
class StudyOptions:
    """What every study kind's schema holds: the options under ``study.`` that every kind takes.

    Subclass it (a frozen dataclass), adding the kind's own fields made by :func:`simstudy.schema.option`;
    redeclare ``reps`` or ``chunk_reps`` with :func:`reps_option` / :func:`chunk_reps_option` to change their
    defaults. :func:`parse` checks ``study.KEY=VALUE`` against the kind's registered subclass
    (:attr:`simstudy.registry.Study.options`).

    Parameters
    ----------
    reps : int, default 1000
        ``study.reps``: simulated searches (replicates) per cell, >= 2; more give a smaller Monte Carlo error.
    chunk_reps : int, default 1000
        ``study.chunk_reps``: replicates per chunk, >= 1; the unit of resuming and of parallel work, and part of
        the random streams (changing it changes the numbers).
    save_replicates : bool, default False
        ``study.save_replicates``: also write every replicate's estimate to ``replicates.parquet``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy import schema
    >>> from simstudy.config import StudyOptions, reps_option
    >>> @dataclass(frozen=True)
    ... class Options(StudyOptions):
    ...     reps: int = reps_option(400)
    ...     ns: tuple = schema.option((1, 4), "numbers of draws n", schema.listed(schema.integer(minimum=1)))
    >>> schema.parse(Options, {"ns": [16, 4]}, "study.")
    Options(reps=400, chunk_reps=1000, save_replicates=False, ns=(4, 16))
    """

    reps: int = reps_option(1000)
    chunk_reps: int = chunk_reps_option(1000)
    save_replicates: bool = save_replicates_option(False)


def study_kinds() -> tuple[str, ...]:
    """The study kinds a config may name (:func:`simstudy.registry.study_kinds`)."""
    from simstudy import registry

    return registry.study_kinds()


#: Environment variable: the memory (GB) one run may plan to hold at once. Default: half of the machine's
#: physical memory (fixed for a machine, so a run is refused or not whatever else is running).
MEMORY_ENV = "SIMSTUDY_MAX_MEMORY_GB"
#: What one chunk costs the runner's plan (its task record, about 170 bytes, and the bookkeeping around it).
_BYTES_PER_CHUNK = 500
#: What ``simstudy bands`` holds per budget k and model (band arrays, the table, its CSV; about 180 measured).
_BYTES_PER_K = 256


def memory_limit() -> float:
    """Bytes a run may plan to hold at once: ``$SIMSTUDY_MAX_MEMORY_GB`` if set, else half the physical memory.

    The limit the memory checks (:func:`check_memory` and the study checks built on it) refuse a config
    above, before any compute. Without the environment variable it is fixed for a machine (half of its
    physical memory; 8 GB where the physical memory cannot be read), so whether a run is refused does not
    depend on what else is running.

    Returns
    -------
    float
        The limit in bytes (the variable's GB times 1e9).

    Raises
    ------
    ConfigError
        If the environment variable is set but is not a positive finite number.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     memory_limit()
    2000000000.0
    >>> with mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "lots"}):
    ...     memory_limit()
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: SIMSTUDY_MAX_MEMORY_GB must be a positive number of GB, got 'lots'
    """
    import os

    gb = _env_limit(MEMORY_ENV, "GB")
    if gb is not None:
        return gb * 1e9
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): a fixed, documented default
        return 8e9


def _env_limit(name: str, unit: str) -> float | None:
    """A limit set by the environment variable ``name`` (a positive finite number of ``unit``), or None when unset."""
    import os

    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise ConfigError(f"{name} must be a positive number of {unit}, got {raw!r}")
    return value


def _size(nbytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes / 1e6:.2g} MB"


def check_memory(key: str, value: Any, nbytes: float, what: str, fix: str) -> None:
    """Refuse, before any compute, a setting whose estimated memory ``nbytes`` exceeds :func:`memory_limit`.

    For a study kind's check (:attr:`simstudy.registry.Study.check`) or a command's parser: estimate the peak
    memory a setting implies and call this, so that a run too large for the machine fails in one line before
    it starts rather than swapping or being killed hours in.

    Parameters
    ----------
    key : str
        The setting to name, e.g. ``"budget.B"``.
    value : Any
        Its value, as the message shows it, e.g. 100000.
    nbytes : float
        The estimated peak memory, in bytes.
    what : str
        What takes that memory, e.g. ``"the 100000 x 100000 weight matrix"``.
    fix : str
        What to change, e.g. ``"lower budget.B or set budget.n to fewer budgets"``.

    Raises
    ------
    ConfigError
        If ``nbytes`` exceeds :func:`memory_limit`: ``budget.B=100000 needs about 240 GB (...); the limit is 12
        GB (half the physical memory; set SIMSTUDY_MAX_MEMORY_GB to change it): lower budget.B ...``; or if
        ``SIMSTUDY_MAX_MEMORY_GB`` is invalid (:func:`memory_limit`).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_memory("max_k", 1000, 256e3, "the bands at k = 1..1000, per model", "lower max_k")
    ...     check_memory("max_k", 10**9, 256e9, "the bands at k = 1..1e9, per model", "lower max_k")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: max_k=1000000000 needs about 256 GB (the bands at k = 1..1e9, per model); the limit
    is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower max_k
    """
    import os

    limit = memory_limit()
    if nbytes > limit:
        source = (
            f"{MEMORY_ENV}={os.environ[MEMORY_ENV]}"
            if MEMORY_ENV in os.environ
            else f"half the physical memory; set {MEMORY_ENV} to change it"
        )
        raise ConfigError(
            f"{key}={value} needs about {_size(nbytes)} ({what}); the limit is {_size(limit)} ({source}): {fix}"
        )


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


#: Environment variable: the minutes a command may plan to compute for, by its estimate (default 30): larger
#: sizes are refused at once, with the estimate, instead of running for hours.
TIME_ENV = "SIMSTUDY_MAX_MINUTES"
_DEFAULT_MINUTES = 30.0


def _duration(seconds: float) -> str:
    for unit, scale in (("days", 86400.0), ("hours", 3600.0), ("min", 60.0)):
        if seconds >= scale:
            return f"{seconds / scale:.2g} {unit}"
    return f"{seconds:.2g} s"


def _check_time(key: str, value: Any, seconds: float, what: str, fix: str) -> None:
    """Refuse at once a setting whose estimated compute time exceeds ``$SIMSTUDY_MAX_MINUTES`` (default 30), in
    one line with the estimate, like :func:`check_memory` for memory."""
    import os

    raw = os.environ.get(TIME_ENV)
    minutes = _env_limit(TIME_ENV, "minutes")
    minutes = _DEFAULT_MINUTES if minutes is None else minutes
    if seconds > 60.0 * minutes:
        source = f"{TIME_ENV}={raw}" if raw is not None else f"set {TIME_ENV} to change it"
        raise ConfigError(
            f"{key}={value} needs about {_duration(seconds)} ({what}); the limit is {minutes:g} min ({source}): {fix}"
        )


def _workers(n_jobs: int) -> int:
    """The processes a command's ``n_jobs`` runs on (-1: every core), which divide its compute time."""
    import os

    cores = os.cpu_count() or 1
    return cores if n_jobs < 0 else min(n_jobs, cores)


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
        subclass of :class:`StudyOptions`) holding every ``study.KEY``.

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
    from simstudy import registry

    name = schema.text()("study.name", d.get("name"))
    if not _NAME.fullmatch(name):  # it names the run directory (outputs/<study.name>/...): never a path
        raise ConfigError(
            f"study.name must be a name (letters, digits, '_', '-', '.'; not starting with '.'), got {name!r}"
        )
    kind = _choice("study.kind", d.get("kind"), study_kinds())
    options = schema.parse(registry.study(kind).options, d, "study.", ignore=("name", "kind"), what=f"the {kind} study")
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
    from simstudy import registry

    _unknown_keys("", cfg, _TOP_KEYS)
    seed = _int("seed", cfg.get("seed"), minimum=0)
    study = _study(_section(cfg, "study"))
    spec = registry.study(study.kind)
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
        takers = [k for k in registry.study_kinds() if registry.study(k).plugin_estimators]
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


def selection_algorithm_check(kind: str) -> schema.Check:
    """The check of one entry of a selection study's ``study.algorithms``, for its schema.

    Accepts a built-in algorithm, a registered name or a plug-in's import path, which is imported and called
    on a tiny input when the config is parsed (:func:`simstudy.plugins.check_selection_algorithm`).

    Parameters
    ----------
    kind : {"fixed_budget", "fixed_confidence"}
        The selection setting (Moss et al. 2019): fixed-budget algorithms (model_selection) or
        fixed-confidence proposals (fixed_confidence).

    Returns
    -------
    callable
        The check, ``check(key, value)``, returning the algorithm's canonical name (str); use it as the
        ``item`` of :func:`simstudy.schema.listed`.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: the plug-in check's one line, for a name that is no
        algorithm nor an import path, an import error or an algorithm failing its tiny run.

    References
    ----------
    .. [1] Moss et al. (2019), "FIESTA: Fast IdEntification of State-of-The-Art models using adaptive bandit
       algorithms", ACL 2019.

    Examples
    --------
    >>> from simstudy.config import selection_algorithm_check
    >>> check = selection_algorithm_check("fixed_budget")
    >>> check("study.algorithms", "sequential_halving")
    'sequential_halving'
    """

    def check(key: str, value: Any) -> str:
        from simstudy import plugins

        try:
            return plugins.check_selection_algorithm(value, kind, key)
        except plugins.PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check


def band_method_check() -> schema.Check:
    """The check of one entry of a band study's ``study.methods``, for its schema.

    Accepts a built-in CDF band method (:data:`simstudy.stats.bands.METHODS`), a registered name or a plug-in's
    import path, which is imported and called on a tiny input when the config is parsed
    (:func:`simstudy.plugins.check_band_method`).

    Returns
    -------
    callable
        The check, ``check(key, value)``, returning the method's canonical name (str); use it as the ``item``
        of :func:`simstudy.schema.listed`.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: the plug-in check's one line, for a name that is no
        method nor an import path, an import error or a function whose bands break the contract.

    Examples
    --------
    >>> from simstudy.config import band_method_check
    >>> check = band_method_check()
    >>> check("study.methods", "ks")
    'ks'
    >>> check("study.methods", "nope")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.methods must be one of dkw, ks, ld_equal_tailed, ld_highest_density or an
    import path module.function, got 'nope'
    """

    def check(key: str, value: Any) -> str:
        from simstudy import plugins

        try:
            return plugins.check_band_method(value, key)
        except plugins.PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check


def at_least_arms(config: Config) -> None:
    """A selection study's check: at least two distributions (its arms).

    For :attr:`simstudy.registry.Study.check` of model_selection and fixed_confidence, run by :func:`parse`.

    Parameters
    ----------
    config : Config
        The parsed config; its ``distributions`` are the arms.

    Raises
    ------
    ConfigError
        If ``config`` has fewer than two distributions.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> at_least_arms(dataclasses.replace(config, distributions=config.distributions * 2))  # two arms: passes
    >>> at_least_arms(config)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: a evp_accuracy study needs at least two arms in distribution, got 1
    """
    if len(config.distributions) < 2:
        raise ConfigError(
            f"a {config.study.kind} study needs at least two arms in distribution, got {len(config.distributions)}"
        )


def check_chunk_memory(config: Config, cells: int) -> None:
    """Refuse a plan of chunks (``cells`` cells of ``study.reps`` replicates) too large for memory (one line).

    The runner's plan holds a record of about 500 bytes per chunk; ``cells * ceil(reps / chunk_reps)`` chunks
    are checked against :func:`memory_limit`. :func:`parse` runs it with a cell per distribution; a study
    kind's check runs it with its own number of cells.

    Parameters
    ----------
    config : Config
        The parsed config (``study.reps`` and ``study.chunk_reps`` are read).
    cells : int
        The number of cells of the study (each of ``study.reps`` replicates).

    Raises
    ------
    ConfigError
        Naming ``study.reps`` if the plan would exceed :func:`memory_limit`.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_chunk_memory(config, cells=1)  # 2 chunks: passes
    ...     check_chunk_memory(dataclasses.replace(config, study=dataclasses.replace(config.study, reps=10**10)), 1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.reps=10000000000 needs about 100 GB (a plan of 200,000,000 chunks of
    study.chunk_reps=50 replicates); the limit is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower study.reps or raise
    study.chunk_reps
    """
    study = config.study
    chunks = cells * -(-study.reps // study.chunk_reps)
    check_memory(
        "study.reps",
        study.reps,
        chunks * _BYTES_PER_CHUNK,
        f"a plan of {chunks:,} chunks of study.chunk_reps={study.chunk_reps} replicates",
        "lower study.reps or raise study.chunk_reps",
    )


def check_budget_memory(config: Config, cells: int, *, samples_per_replicate: int = 1) -> None:
    """A memory check for studies of the estimators at budgets (``budget.B``, ``budget.n``).

    Estimates from the config, and refuses in one line above :func:`memory_limit`: the chunk plan of
    ``cells`` cells (:func:`check_chunk_memory`), the estimators' weight matrices (8 bytes per budget and
    score), the bootstrap's resamples, every worker's chunk of samples (``samples_per_replicate`` samples of
    B scores each) and the rows of ``replicates.parquet``. evp_accuracy and wrong_conclusions call it from
    their checks.

    Parameters
    ----------
    config : Config
        The parsed config.
    cells : int
        The number of cells of the study.
    samples_per_replicate : int, keyword-only, default 1
        Samples of B scores each replicate draws (2 for a comparison of two models); above 1 the weight
        matrices and replicates.parquet are not checked.

    Raises
    ------
    ConfigError
        Naming the setting to lower (``study.reps``, ``budget.B``, ``estimators.NAME.resamples``,
        ``study.chunk_reps`` or ``study.save_replicates``) if its estimate exceeds :func:`memory_limit`.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import BudgetConfig
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_budget_memory(config, cells=1)  # B = 10: passes
    ...     check_budget_memory(dataclasses.replace(config, budget=BudgetConfig((100000,), None)), cells=1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.B=100000 needs about 160 GB (the weight matrices of 1 estimator, 100000
    budgets x 100000 scores each); the limit is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower budget.B or set budget.n
    to fewer budgets
    """
    import os

    study, budget = config.study, config.budget
    check_chunk_memory(config, cells)
    B = max(budget.B)
    if samples_per_replicate == 1:
        # The stacked weights of every cell (budgets x estimators x B) and the cached matrix of each method.
        E, closed = len(config.estimators), len({e.method for e in config.estimators} & set(estimators.CLOSED_FORM))
        nbytes = sum(8 * budget.n_count(b) * b * (len(config.distributions) * E + closed) for b in budget.B)
        N = budget.n_count(B)
        check_memory(
            "budget.B",
            B,
            nbytes,
            f"the weight matrices of {E} estimator{'s' * (E > 1)}, {N} budgets x {B} scores each",
            "lower budget.B or set budget.n to fewer budgets",
        )
        for e in config.estimators:
            if e.method == "bootstrap":  # one replicate's resample indices (int32) and their running maxima
                check_memory(
                    f"estimators.{e.name}.resamples",
                    e.resamples,
                    8.0 * e.resamples * B,
                    f"{e.resamples} resamples of {B} scores for each replicate",
                    f"lower estimators.{e.name}.resamples or budget.B",
                )
    # Every worker holds a chunk of sorted samples (the draw and its sorted copy, per distribution compared).
    workers = min(os.cpu_count() or 1, config.runner.n_jobs if config.runner.n_jobs > 0 else os.cpu_count() or 1)
    per_chunk = 16.0 * study.chunk_reps * B * samples_per_replicate
    check_memory(
        "study.chunk_reps",
        study.chunk_reps,
        workers * per_chunk,
        f"{workers} worker{'s' * (workers > 1)} each holding {study.chunk_reps} samples of B={B} scores",
        "lower study.chunk_reps, budget.B or runner.n_jobs",
    )
    if study.save_replicates and samples_per_replicate == 1:
        # replicates.parquet is written a chunk at a time: one row (about 200 bytes in the Arrow table and
        # its label columns) per replicate, estimator and budget.
        rows = study.chunk_reps * len(config.estimators) * budget.n_count(B)
        check_memory(
            "study.save_replicates",
            "true",
            200.0 * rows,
            f"{rows:,} rows of replicates.parquet per chunk of study.chunk_reps={study.chunk_reps}",
            "lower study.chunk_reps, set budget.n to fewer budgets, or study.save_replicates=false",
        )


# The data commands (simstudy curve, bands, audit). Each command's keys are a schema (:mod:`simstudy.schema`):
# the defaults, the words of `simstudy COMMAND --help` and the per-key checks live in its fields; the YAML
# (configs/curve.yaml ...) holds only Hydra's settings, and the CLI stores the schema's defaults for Hydra.

#: The default of a key the user must give (OmegaConf's missing value: Hydra says "data is required").
REQUIRED = "???"
XSCALES = ("linear", "log")


def _bands():
    from simstudy.stats import bands  # only when a bands/audit key is checked: importing config stays cheap

    return bands


def _path(key: str, value: Any) -> str:
    if value == REQUIRED:
        raise ConfigError(f"{key} is required: set it with {key}=...")
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a file path or a shipped data set name, got {value!r}")
    return value


def _names(key: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = [value] if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value
    if (
        not isinstance(names, (list, tuple))
        or not names
        or not all(isinstance(m, (str, int)) and not isinstance(m, bool) and str(m).strip() for m in names)
    ):
        raise ConfigError(f"{key} must be a model name or a list of them, got {value!r}")
    return tuple(str(m).strip() for m in names)


def _optional_str(key: str, value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{key} must be a non-empty string or null, got {value!r}")
    return value


def _missing(key: str, value: Any) -> str | float:
    if value in ("error", "drop"):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise ConfigError(
            f"{key} must be error, drop or the score a failed run counts as (e.g. {key}=0), got {value!r}"
        )
    return float(value)


_positive = schema.number(positive=True)
#: A number (infinities included) or null.
_bound = schema.optional(schema.number(what="a number or null"))
#: A finite number or null: a score to reach (an infinite one is never reached, and says nothing).
_finite_score = schema.optional(
    schema.number(minimum=-sys.float_info.max, maximum=sys.float_info.max, what="a finite number (a score) or null")
)


def _trial_time(key: str, value: Any) -> float | tuple[tuple[str, float], ...] | None:
    if isinstance(value, Mapping):  # per model, as hashable (model, time) pairs
        return tuple((str(m), _positive(f"{key}.{m}", t)) for m, t in value.items())
    return None if value is None else _positive(key, value)


_LOW_DOC = "the lowest score possible (0 for accuracy); scores below it are an error"
_HIGH_DOC = "the highest score possible (1 for accuracy); scores above it are an error"
_MINIMIZE_DOC = (
    "true: lower scores are better (losses, error rates, perplexities): expected minimum curves, bands on "
    "the lower tail, a target is reached at or below it"
)


@dataclass(frozen=True)
class DataOptions:
    """The keys every data command takes: the scores and how to read them (a schema, :mod:`simstudy.schema`).

    The base of :class:`CurveOptions`, :class:`BandsOptions`, :class:`AuditOptions` and
    :class:`ExtrapolateOptions`; each field is a ``key=value`` of the command line (``simstudy curve
    data=runs.csv models=[mlp,lstm]``), its default and help text (``--help``) declared here. The checks run
    in :func:`simstudy.schema.parse`; the cross-checks (``model`` against ``models``, ``low`` below ``high``) in
    the commands' parsers.

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
        Use only the first n scores of each model (random-search order), e.g. 48 (curve, bands: or a random n
        with sample_seed). In runs (scores) per model.
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

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config import DataOptions
    >>> opts = schema.parse(DataOptions, {"data": "scores.csv", "models": "lstm", "scale": 0.01})
    >>> opts.models, opts.scale, opts.missing
    (('lstm',), 0.01, 'error')
    >>> schema.parse(DataOptions, {})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: data is required: set it with data=...
    """

    data: str = option(
        REQUIRED,
        "a CSV/TSV (one score column, or model and score columns; header optional for one "
        "column), JSON Lines or JSON file, or a shipped data set: reuters_hedwig, deberta_mnli, "
        "tdsa_fiesta",
        _path,
    )
    model: tuple[str, ...] | None = option(
        None, "use only this model of the file (model=NAME); same as models=[NAME]", _names
    )
    models: tuple[str, ...] | None = option(None, "use only these models, e.g. models=[mlp,lstm]", _names)
    score_column: str | None = option(
        None,
        "the column of scores (case and surrounding spaces ignored); default: the only column, else one named score",
        _optional_str,
    )
    model_column: str | None = option(
        None,
        "the column of model names; default: model if there is one, else one model named after the file",
        _optional_str,
    )
    missing: str | float = option(
        "error",
        "failed runs (an empty field, nan, NA, null): error (stop and say where), "
        "drop (leave them out, saying how many per model), or a number they count as, "
        "e.g. missing=0",
        _missing,
    )
    scale: float = option(1.0, "multiply every score by this before use, e.g. scale=0.01 for percentages", _positive)
    compare: bool = option(False, "true: the data must hold at least two models", schema.boolean())
    sample_size: int | None = option(
        None,
        "use only the first n scores of each model (random-search order), e.g. 48 "
        "(curve, bands: or a random n with sample_seed)",
        schema.optional(schema.integer(minimum=2)),
    )
    split: str | None = option(
        None,
        "deberta_mnli only (refused for other data): the MultiNLI validation split, matched or mismatched; "
        "null: matched",
        schema.optional(schema.choice(("matched", "mismatched"))),
    )
    reduce: str | None = option(
        None,
        "deberta_mnli only (refused for other data): each run's best accuracy over its learning curve (best) "
        "or its last (final); null: best",
        schema.optional(schema.choice(("best", "final"))),
    )
    low: float | None = option(None, _LOW_DOC, _bound)
    high: float | None = option(None, _HIGH_DOC, _bound)
    minimize: bool = option(False, _MINIMIZE_DOC, schema.boolean())


_SAMPLE_SEED_DOC = (
    "with sample_size: null keeps the first sample_size runs of each model; an integer draws a "
    "random subset of sample_size runs per model instead (without replacement; the same seed, the "
    "same runs), e.g. sample_seed=3"
)


def _sample_seed_option():
    """The ``sample_seed`` key of ``simstudy curve`` and ``bands`` (a random sample of the runs)."""
    return option(None, _SAMPLE_SEED_DOC, schema.optional(schema.integer(minimum=0)))


@dataclass(frozen=True)
class CurveOptions(DataOptions):
    """The keys of ``simstudy curve`` (``configs/curve.yaml`` selects them): the data keys and the curve's own.

    :func:`parse_curve` checks a mapping of them and returns a :class:`CurveConfig`.

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
        Use only the first n scores of each model (random-search order), e.g. 48 (curve, bands: or a random n
        with sample_seed). In runs (scores) per model.
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
    estimator : str, default "v"
        The expected-maximum estimator: v (Dodge et al. 2019, lowest MSE), u (unbiased, Tang et al. 2020) or w.
    target : float or None, default None
        A score to reach: report the budget where each curve first reaches it. In score units.
    trial_time : float, tuple of (str, float) pairs, or None, default None
        The average duration of one trial, for every model (0.2) or per model ({cnn: 0.2, lr: 0.01}): puts time
        on the x axis. In ``time_unit`` per trial; a per-model mapping is parsed to ``(model, time)`` pairs.
    time_unit : str, default "hours"
        The unit of trial_time, for the axis label (e.g. hours).
    xscale : str, default "log"
        The x axis: log or linear.
    sample_seed : int or None, default None
        With sample_size: null keeps the first sample_size runs of each model; an integer draws a random subset
        of sample_size runs per model instead (without replacement; the same seed, the same runs), e.g.
        sample_seed=3.

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config import CurveOptions
    >>> opts = schema.parse(CurveOptions, {"data": "runs.csv", "target": 0.4})
    >>> opts.estimator, opts.target, opts.xscale
    ('v', 0.4, 'log')
    """

    estimator: str = option(
        "v",
        "the expected-maximum estimator: v (Dodge et al. 2019, lowest MSE), u (unbiased, Tang et al. 2020) or w",
        schema.choice(estimators.CLOSED_FORM),
    )
    target: float | None = option(
        None, "a score to reach: report the budget where each curve first reaches it", _finite_score
    )
    trial_time: float | tuple | None = option(
        None,
        "the average duration of one trial, for every model (0.2) or per "
        "model ({cnn: 0.2, lr: 0.01}): puts time on the x axis",
        _trial_time,
    )
    time_unit: str = option("hours", "the unit of trial_time, for the axis label (e.g. hours)", schema.text())
    xscale: str = option("log", "the x axis: log or linear", schema.choice(XSCALES))
    sample_seed: int | None = _sample_seed_option()


_CONFIDENCE_DOC = "the simultaneous coverage of the bands, e.g. 0.8"


@dataclass(frozen=True)
class BandsOptions(DataOptions):
    """The keys of ``simstudy bands`` (``configs/bands.yaml`` selects them): the data keys and the bands' own.

    :func:`parse_bands` checks a mapping of them and returns a :class:`BandsConfig`. The bands are those of
    Lourie, Cho & He (2024), "Show your work with confidence: confidence bands for tuning curves".

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
        Use only the first n scores of each model (random-search order), e.g. 48 (curve, bands: or a random n
        with sample_seed). In runs (scores) per model.
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
    confidence : float, default 0.8
        The simultaneous coverage of the bands, e.g. 0.8. A probability in (0, 1).
    kind : str, default "median"
        Which tuning curve: median, quantile (with quantile=) or mean (needs finite low and high).
    quantile : float, default 0.5
        With kind=quantile only: the quantile of the best score, e.g. 0.9. A probability in (0, 1).
    method : str, default "ld_highest_density"
        The CDF band: ld_highest_density (narrowest), ld_equal_tailed, ks or dkw.
    max_k : int or None, default None
        Draw budgets k = 1..max_k (default: the largest sample size). In trials.
    xscale : str, default "log"
        The tuning curve's x axis (k): log or linear (log, as simstudy curve).
    sample_seed : int or None, default None
        With sample_size: null keeps the first sample_size runs of each model; an integer draws a random subset
        of sample_size runs per model instead (without replacement; the same seed, the same runs), e.g.
        sample_seed=3.

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config import BandsOptions
    >>> opts = schema.parse(BandsOptions, {"data": "scores.csv", "confidence": 0.9})
    >>> opts.confidence, opts.kind, opts.method
    (0.9, 'median', 'ld_highest_density')
    """

    confidence: float = option(0.8, _CONFIDENCE_DOC, schema.level())
    kind: str = option(
        "median",
        "which tuning curve: median, quantile (with quantile=) or mean (needs finite low and high)",
        schema.choice(lambda: _bands().KINDS),
    )
    quantile: float = option(0.5, "kind=quantile only: the quantile of the best score, e.g. 0.9", schema.level())
    method: str = option(
        "ld_highest_density",
        "the CDF band: ld_highest_density (narrowest), ld_equal_tailed, ks or dkw",
        schema.choice(lambda: _bands().METHODS),
    )
    max_k: int | None = option(
        None, "draw budgets k = 1..max_k (default: the largest sample size)", schema.optional(schema.integer(minimum=1))
    )
    xscale: str = option(
        "log", "the tuning curve's x axis (k): log or linear (log, as simstudy curve)", schema.choice(XSCALES)
    )
    sample_seed: int | None = _sample_seed_option()


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


class _LazyOptions(Mapping):
    """A command's schema by name; the commands' own modules (above config) load by name, when first asked for."""

    def __init__(self, table: dict) -> None:
        self._table = table

    def __getitem__(self, command: str) -> type:
        value = self._table[command]
        if isinstance(value, str):
            module, _, name = value.rpartition(".")
            value = self._table[command] = getattr(importlib.import_module(module), name)
        return value

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


#: Each data command's schema (``simstudy COMMAND --help`` and Hydra's stored defaults are made from it).
COMMAND_OPTIONS: Mapping[str, type] = _LazyOptions(
    {
        "curve": CurveOptions,
        "bands": BandsOptions,
        "audit": "simstudy.commands.audit.AuditOptions",
        "extrapolate": "simstudy.commands.extrapolate.ExtrapolateOptions",
    }
)


@dataclass(frozen=True)
class DataConfig:
    """Score data for ``simstudy curve``, ``bands``, ``audit`` and ``extrapolate``: a file or a shipped data set.

    The data keys of :class:`DataOptions`, cross-checked and frozen by the commands' parsers.

    Parameters
    ----------
    data : str
        ``data``: a CSV/TSV, JSON Lines or JSON file path, or a shipped data set (reuters_hedwig,
        deberta_mnli, tdsa_fiesta).
    models : tuple of str or None
        ``model=NAME`` or ``models=[a, b]``: keep only these models; None: every model.
    score_column : str or None
        ``score_column``: the column of scores; None: the only column, else one named score.
    model_column : str or None
        ``model_column``: the column of model names; None: model if there is one.
    options : tuple of (str, str) pairs
        ``(("reduce", ...), ("split", ...))``: how the shipped deberta_mnli data is read (each run's best or
        final accuracy; the matched or mismatched split); empty for other data.
    low : float
        ``low``: the lowest score possible, in score units; -inf when not given.
    high : float
        ``high``: the highest score possible, in score units; +inf when not given.
    min_models : int
        The fewest models the data must hold: 2 with ``compare=true`` (a comparison), else 1.
    sample_size : int or None
        ``sample_size``: keep the first n scores of each model (random-search order); None: all of them.
    missing : str or float, default "error"
        ``missing``: failed runs are an ``"error"``, are ``"drop"``-ped, or count as this score (score units).
    scale : float, default 1.0
        ``scale``: every score is multiplied by it (0.01 for percentages).
    sample_seed : int or None, default None
        ``sample_seed``: with ``sample_size``, None keeps the first n runs, a seed draws a random subset of n
        runs per model (without replacement).
    minimize : bool, default False
        ``minimize``: lower scores are better; ``low`` and ``high`` stay in the scores' own units (the
        commands analyse the mirrored scores -x on [-high, -low] and mirror the results back).

    Examples
    --------
    >>> from simstudy.config import parse_curve
    >>> data = parse_curve({"data": "runs.csv", "models": ["mlp", "lstm"], "low": 0, "high": 1}).data
    >>> data.models, (data.low, data.high), data.min_models, data.options
    (('mlp', 'lstm'), (0.0, 1.0), 1, ())
    """

    data: str
    models: tuple[str, ...] | None  # model=NAME or models=[a, b]: keep only these (None: every model)
    score_column: str | None
    model_column: str | None
    options: tuple[tuple[str, str], ...]  # split / reduce, for the shipped deberta_mnli data (else empty)
    low: float
    high: float
    min_models: int  # 2 for a comparison
    sample_size: int | None  # keep the first n scores of each model (random-search order)
    missing: str | float = "error"  # failed runs: "error", "drop", or the score they count as
    scale: float = 1.0  # every score is multiplied by it (0.01 for percentages)
    sample_seed: int | None = None  # with sample_size: None keeps the first n runs, a seed a random subset
    minimize: bool = False  # lower is better: the commands analyse -x and mirror the results back


@dataclass(frozen=True)
class CurveConfig:
    """``simstudy curve``: EVP curves of a researcher's own results (or a shipped data set), as parsed.

    What :func:`parse_curve` returns: the expected best score against the tuning budget (expected validation
    performance, Dodge et al. 2019; its estimators, Dodge et al. 2021).

    Parameters
    ----------
    data : DataConfig
        The scores and how to read them.
    estimator : str
        ``estimator``: the expected-maximum estimator: v (Dodge et al. 2019, lowest MSE), u (unbiased, Tang et
        al. 2020) or w.
    target : float or None
        ``target``: a score to reach: report the budget where each curve first reaches it. In score units.
    trial_time : float, tuple of (str, float) pairs, or None
        ``trial_time``: the average duration of one trial, for every model (0.2) or per model ({cnn: 0.2, lr:
        0.01}): puts time on the x axis. In ``time_unit`` per trial; a per-model mapping is parsed to ``(model,
        time)`` pairs.
    time_unit : str
        ``time_unit``: the unit of trial_time, for the axis label (e.g. hours).
    xscale : str
        ``xscale``: the x axis: log or linear.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your work: improved reporting
       of experimental results", EMNLP 2019.
    .. [2] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Expected validation performance and
       estimation of a random variable's maximum", 2021.

    Examples
    --------
    >>> from simstudy.config import parse_curve
    >>> config = parse_curve({"data": "runs.csv", "trial_time": {"cnn": 0.2, "lr": 0.01}})
    >>> config.estimator, config.trial_time, config.time_unit
    ('v', (('cnn', 0.2), ('lr', 0.01)), 'hours')
    """

    data: DataConfig
    estimator: str
    target: float | None
    trial_time: float | tuple[tuple[str, float], ...] | None
    time_unit: str
    xscale: str


@dataclass(frozen=True)
class BandsConfig:
    """``simstudy bands``: confidence bands for the CDF and tuning curve of each model's scores, as parsed.

    What :func:`parse_bands` returns; the bands are those of Lourie, Cho & He (2024).

    Parameters
    ----------
    data : DataConfig
        The scores and how to read them.
    confidence : float
        ``confidence``: the simultaneous coverage of the bands, e.g. 0.8. A probability in (0, 1).
    kind : str
        ``kind``: which tuning curve: median, quantile (with quantile=) or mean (needs finite low and high).
    quantile : float
        ``quantile``: kind=quantile only: the quantile of the best score, e.g. 0.9. A probability in (0, 1).
    method : str
        ``method``: the CDF band: ld_highest_density (narrowest), ld_equal_tailed, ks or dkw.
    max_k : int or None
        ``max_k``: draw budgets k = 1..max_k (default: the largest sample size). In trials.
    xscale : str
        ``xscale``: the tuning curve's x axis (k): log or linear (log, as simstudy curve).
        For ``kind="median"`` it is 0.5.

    References
    ----------
    .. [1] N. Lourie, K. Cho and H. He, "Show your work with confidence: confidence bands for tuning curves",
       2024.

    Examples
    --------
    >>> from simstudy.config import parse_bands
    >>> config = parse_bands({"data": "scores.csv", "kind": "quantile", "quantile": 0.9})
    >>> config.kind, config.quantile, config.confidence, config.method
    ('quantile', 0.9, 0.8, 'ld_highest_density')
    """

    data: DataConfig
    confidence: float
    kind: str
    quantile: float
    method: str
    max_k: int | None
    xscale: str


def _command_iv(command: str, cfg: Mapping) -> Any:
    """The command's schema instance from its config: an unknown key (``+typo=1``) is an error, never a silent
    run on everything, and each key passes its field's check."""
    options = COMMAND_OPTIONS[command]
    valid = [f.name for f in dataclasses.fields(options)]
    for key in cfg:
        if key not in valid:
            raise ConfigError(
                f"{key} is not a setting of simstudy {command} (settings: {', '.join(valid)}; "
                f"simstudy {command} --help explains each)"
            )
    return schema.parse(options, cfg)


def _applies_iv(o: DataOptions) -> None:
    """Options that do not apply to the data are refused, never ignored (before any data is read)."""
    from simstudy.datasets import DATASETS  # here: importing config stays cheap

    shipped = o.data in DATASETS
    for key in ("split", "reduce"):
        value = getattr(o, key)
        if value is not None and o.data != "deberta_mnli":
            what = "splits" if key == "split" else "learning curves"
            raise ConfigError(f"{key}={value} applies to deberta_mnli's {what} only; {o.data} has none: drop {key}=")
    if shipped and o.missing != "error":  # the shipped sets have a score for every run
        raise ConfigError(
            f"missing={o.missing if isinstance(o.missing, str) else f'{o.missing:g}'} applies to score files "
            f"only; {o.data} has no missing scores: drop missing="
        )
    for key in ("score_column", "model_column"):
        value = getattr(o, key)
        if value is not None and shipped:
            raise ConfigError(
                f"{key}={value} applies to score files only; {o.data} is a shipped data set whose columns are "
                f"fixed: drop {key}="
            )
    for key in ("model", "models"):
        names = getattr(o, key)
        twice = sorted({m for m in names if names.count(m) > 1}) if names else []
        if twice:
            raise ConfigError(f"{key}={list(names)} names {', '.join(twice)} more than once: give each model once")


def _data(o: DataOptions) -> DataConfig:
    """The data keys' cross-checks (model against models, low below high, options that apply), frozen."""
    _applies_iv(o)
    if o.model is not None and o.models is not None and set(o.model) != set(o.models):
        raise ConfigError(f"model={o.model[0]} and models={list(o.models)} disagree: give one of them")
    low = -np.inf if o.low is None else o.low
    high = np.inf if o.high is None else o.high
    if not low < high:
        raise ConfigError(f"high must be greater than low={low}, got {high}")
    if isinstance(o.missing, float) and not low <= o.missing <= high:
        raise ConfigError(
            f"missing={o.missing:g} is outside [low, high] = [{low:g}, {high:g}]; it is the score a failed run "
            f"counts as, so it must lie within them (e.g. missing={min(max(0.0, low), high):g}) or be drop"
        )
    seed = getattr(o, "sample_seed", None)  # simstudy curve and bands take it; audit does not
    if seed is not None and o.sample_size is None:
        raise ConfigError(
            f"sample_seed={seed} draws a random sample of sample_size runs per model: set "
            f"sample_size too (e.g. sample_size=25)"
        )
    return DataConfig(
        data=o.data,
        models=o.models or o.model,
        score_column=o.score_column,
        model_column=o.model_column,
        options=(("reduce", o.reduce or "best"), ("split", o.split or "matched")) if o.data == "deberta_mnli" else (),
        low=low,
        high=high,
        min_models=2 if o.compare else 1,
        sample_size=o.sample_size,
        missing=o.missing,
        scale=o.scale,
        sample_seed=seed,
        minimize=o.minimize,
    )


def parse_curve(cfg: Mapping) -> CurveConfig:
    """Validate the ``simstudy curve`` config (the keys of :class:`CurveOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    CurveConfig
        The data (cross-checked: ``model`` against ``models``, ``low`` below ``high``, ``sample_seed`` only
        with ``sample_size``) and the curve's settings.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value.

    Examples
    --------
    >>> parse_curve({"data": "reuters_hedwig", "models": "lstm", "target": 0.4}).data.models
    ('lstm',)
    >>> parse_curve({"data": "runs.csv", "estimatr": "u"})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: estimatr is not a setting of simstudy curve (settings: data, model, models, \
score_column, model_column, missing, scale, compare, sample_size, split, reduce, low, high, minimize, estimator, \
target, trial_time, time_unit, xscale, sample_seed; simstudy curve --help explains each)
    """
    o = _command_iv("curve", cfg)
    return CurveConfig(
        data=_data(o),
        estimator=o.estimator,
        target=o.target,
        trial_time=o.trial_time,
        time_unit=o.time_unit,
        xscale=o.xscale,
    )


def parse_bands(cfg: Mapping) -> BandsConfig:
    """Validate the ``simstudy bands`` config (the keys of :class:`BandsOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    BandsConfig
        ``quantile`` is 0.5 for ``kind="median"``.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value; ``kind=mean`` without finite ``low`` and ``high``;
        a ``max_k`` whose bands would not fit in memory (:func:`check_memory`).

    Examples
    --------
    >>> parse_bands({"data": "scores.csv", "low": 0, "high": 1, "kind": "mean"}).confidence
    0.8
    >>> parse_bands({"data": "scores.csv", "confidence": 1.5})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: confidence must be a number strictly between 0 and 1, got 1.5
    """
    o = _command_iv("bands", cfg)
    data = _data(o)
    if o.kind == "mean" and not (np.isfinite(data.low) and np.isfinite(data.high)):
        raise ConfigError(
            "kind=mean needs finite low and high (e.g. low=0 high=1 for accuracy): without them "
            "the mean tuning curve's band is vacuous"
        )
    if o.max_k is not None:
        check_memory(
            "max_k", o.max_k, _BYTES_PER_K * o.max_k, f"the bands at k = 1..{o.max_k}, per model", "lower max_k"
        )
    return BandsConfig(
        data=data,
        confidence=o.confidence,
        kind=o.kind,
        quantile=0.5 if o.kind == "median" else o.quantile,
        method=o.method,
        max_k=o.max_k,
        xscale=o.xscale,
    )


#: Names that moved to the commands' own modules (issue 26): still importable from here, loaded when asked for.
_MOVED_NAMES = {
    "AuditOptions": "simstudy.commands.audit",
    "AuditConfig": "simstudy.commands.audit",
    "_audit_cost_iv": "simstudy.commands.audit",
    "_KDE_BOUND": "simstudy.commands.audit",
    "_MIN_BANDWIDTH_SHARE": "simstudy.commands.audit",
    "_SECONDS_PER_COVERAGE_SCORE": "simstudy.commands.audit",
    "_SECONDS_PER_RESAMPLE_SCORE": "simstudy.commands.audit",
    "_SECONDS_PER_EVP_SCORE": "simstudy.commands.audit",
    "ExtrapolateOptions": "simstudy.commands.extrapolate",
    "ExtrapolateConfig": "simstudy.commands.extrapolate",
    "_threshold": "simstudy.commands.extrapolate",
    "_c_values": "simstudy.commands.extrapolate",
    "_K_MAX": "simstudy.commands.extrapolate",
    "_SECONDS_PER_BOOT": "simstudy.commands.extrapolate",
    "_BYTES_PER_BOOT": "simstudy.commands.extrapolate",
}
#: Old parser names -> (module, name now).
_MOVED_PARSERS = {
    "parse_audit": ("simstudy.commands.audit", "parse"),
    "parse_extrapolate": ("simstudy.commands.extrapolate", "parse"),
}


def __getattr__(name: str) -> Any:
    # importlib, not an import statement: config lies below the commands (an import would point upward).
    if name in _MOVED_NAMES:
        return getattr(importlib.import_module(_MOVED_NAMES[name]), name)
    if name in _MOVED_PARSERS:
        module, new = _MOVED_PARSERS[name]
        return getattr(importlib.import_module(module), new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
