"""Run configuration: plain, frozen, validated objects built from a plain mapping.

The CLI resolves its Hydra config to a plain ``dict`` (``OmegaConf.to_container(cfg, resolve=True)``) and
hands it to :func:`parse`; nothing below this module sees Hydra or OmegaConf, and joblib workers only ever
receive these frozen dataclasses. Every check runs before any compute and fails with a one-line
:class:`ConfigError` naming the key and the value, e.g. ``budget.B must be an integer >= 1, got 0``.

This module holds the run-level config; the ``distribution`` and ``estimators`` groups are parsed by
:mod:`simstudy.config_distributions` and :mod:`simstudy.config_estimators` (their classes re-exported here), a
study kind's options by its own schema. Every key is declared once with :func:`simstudy.schema.option`.

=============================  =====================================================================
:func:`parse`                  a resolved config mapping as a validated, frozen :class:`Config`
:func:`parse_study`            :func:`parse`, and of a config with a ``design:`` block each of its cells
:func:`design_cells`           a config's ``design:`` block crossed into cells
:class:`Config`                the whole run: seed, distributions, budget, estimators, study, runner
:class:`BudgetConfig`          ``budget``: the sample sizes B and the budgets n (a schema)
:class:`StudyConfig`           ``study``: the kind, replicates, chunking and the kind's options
:class:`RunnerConfig`          ``runner``: workers, backend, shard, failures, figures (a schema)
:class:`DistributionConfig`    one distribution of ``distribution`` (:mod:`simstudy.config_distributions`)
:class:`EstimatorConfig`       one estimator column of ``estimators`` (:mod:`simstudy.config_estimators`)
=============================  =====================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from simstudy import distributions, extend, schema, schema_docs
from simstudy._limits import MEMORY_ENV, check_memory, memory_limit
from simstudy.config_distributions import DistributionConfig, parse_distributions
from simstudy.config_estimators import EstimatorConfig, log_plugin_costs, parse_estimators
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
#: The formats a study's figure may be written in (``runner.figures``).
FIGURE_FORMATS = ("png", "pdf", "svg")
#: Top-level keys of a study config.
_TOP_KEYS = ("seed", "distribution", "budget", "estimators", "study", "runner")


def study_kinds() -> tuple[str, ...]:
    """The study kinds a config may name (:func:`simstudy.registry.study_kinds`)."""
    extend.load_plugins()
    return extend.studies.names()


def _sizes(empty: str) -> schema.Check:
    """Integers >= 1, one or a non-empty list, as a tuple; ``empty`` completes the message for ``[]``.

    A list naming a value twice is a typo (budget.n=[3,3,5] for [3,4,5]?), refused as models=[a,a] is: kept, it
    would silently run fewer cells or budgets than typed."""
    whole = schema.integer(minimum=1)

    def check(key: str, value: Any) -> tuple[int, ...]:
        values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
        if not values:
            raise ConfigError(f"{key} must be {empty}, got []")
        values = tuple(whole(key, v) for v in values)
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ConfigError(
                f"{key} lists {', '.join(map(str, twice))} more than once, got {list(values)}: give each value once"
            )
        return values

    return check


@schema_docs.documented("budget.")
@dataclass(frozen=True)
class BudgetConfig:
    """The ``budget`` group: sample sizes ``B`` (one cell each) and the budgets ``n`` estimated at.

    A schema (:func:`simstudy.schema.parse`); :func:`parse` also checks that no ``n`` exceeds ``min(B)``. A
    config must give ``B`` (``configs/budget/default.yaml``: 30): its None default is refused.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy.config import BudgetConfig
    >>> BudgetConfig(B=(3, 10), n=None).n_for(3)
    (1, 2, 3)
    >>> BudgetConfig(B=(10,), n=(1, 5, 10)).n_for(10)
    (1, 5, 10)
    """

    B: tuple[int, ...] = schema.option(
        None,
        "the number of trials (scores) in one simulated search; a list gives one cell per value",
        _sizes("an integer >= 1 or a non-empty list of them"),
    )
    n: tuple[int, ...] | None = schema.option(
        None,
        "the budgets n (in trials) at which estimators are evaluated, sorted, distinct, each at most min(B) "
        "(null: every budget 1..B of each cell)",
        schema.optional(_sizes("null (all of 1..B) or a non-empty list of integers")),
    )

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
    ('evp_accuracy', 100, 50, False)
    """

    name: str
    kind: str
    reps: int
    chunk_reps: int
    save_replicates: bool = False
    options: Any = None  # the kind's typed options (its schema's instance; reps etc. are copied above)


# The checks of the runner group that simstudy.schema has no factory for (each is the runner's alone).
def _backend() -> schema.Check:
    """One of :data:`BACKENDS`; joblib's multiprocessing backend refused with the reason and the way out."""
    known = schema.choice(BACKENDS)

    def check(key: str, value: Any) -> str:
        if value == "multiprocessing":
            raise ConfigError(
                f"{key}=multiprocessing is not supported (joblib's multiprocessing backend cannot "
                f"hand back each chunk as it finishes); use loky, the process backend (backends: "
                f"{', '.join(BACKENDS)})"
            )
        return known(key, value)

    return check


def _progress() -> schema.Check:
    """True, false or ``"auto"``, which is None (a bar on a terminal only)."""

    def check(key: str, value: Any) -> bool | None:
        if value not in (True, False, "auto"):
            raise ConfigError(f"{key} must be true, false or auto, got {value!r}")
        return None if value == "auto" else value

    return check


def _address() -> schema.Check:
    """A dask scheduler's address (a non-blank string) or None."""

    def check(key: str, value: Any) -> str | None:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigError(
                f"{key} must be a dask scheduler address (e.g. tcp://10.0.0.5:8786) or null, got {value!r}"
            )
        return value

    return check


@schema_docs.documented("runner.")
@dataclass(frozen=True)
class RunnerConfig:
    """The ``runner`` group: how to run -- parallelism, sharding and failure tolerance; never changes a number.

    A schema (:func:`simstudy.schema.parse`): each field a config sets is declared with its default (those of
    ``configs/runner/local.yaml``), its help and its check; ``collect`` and ``replay`` are set by commands
    only, and refused in a config as unknown keys. ``progress`` is None for ``auto`` once parsed. The figure is
    drawn in PNG alone by default: each further format costs about as much as drawing it.

    Parameters
    ----------
    %(parameters)s

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

    n_jobs: int = schema.option(1, "worker processes (-1: every core); never changes a number", schema.workers())
    backend: str = schema.option(
        "loky",
        "joblib's backend: loky, threading, sequential or dask (dask needs the extra simstudy[dask])",
        _backend(),
    )
    progress: bool | None = schema.option(
        "auto", "true, false or auto (a bar on a terminal, log lines otherwise)", _progress()
    )
    address: str | None = schema.option(
        None, "a dask scheduler, e.g. tcp://10.0.0.5:8786; null: a local cluster on 127.0.0.1", _address()
    )
    shard: tuple[int, int] | None = schema.option(
        None,
        "i/N: run only the i-th of N slices of the chunks (array jobs), then simstudy collect",
        schema.optional(schema.shard()),
    )
    max_failure_fraction: float = schema.option(
        0.0,
        "the share of chunks that may fail before the run fails",
        schema.number(minimum=0, maximum=1, what="a number in [0, 1]"),
    )
    figures: tuple[str, ...] = schema.option(
        ("png",),
        "the figure's formats: any of png, pdf, svg ([] for none)",
        schema.listed(schema.choice(FIGURE_FORMATS), minimum=0, what="figure formats", sort=False),
    )
    collect: bool = schema.internal(False, "simstudy collect: only read the chunks")
    replay: tuple[str, int] | None = schema.internal(None, "simstudy replay: the (cell, chunk) to rerun here")

    def __post_init__(self) -> None:
        # The default is the YAML's word (schema.defaults shows it); constructed directly, it means None too.
        if self.progress == "auto":
            object.__setattr__(self, "progress", None)


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


def _section(cfg: Mapping, key: str) -> Mapping:
    value = cfg.get(key)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a config group (a mapping), got {value!r}")
    return value


def _budget(d: Mapping) -> BudgetConfig:
    budget = schema.parse(BudgetConfig, d, "budget.")
    if budget.n is None:
        return budget
    if max(budget.n) > min(budget.B):
        raise ConfigError(
            f"budget.n must not exceed budget.B (the estimators interpolate only): n={max(budget.n)} > B={min(budget.B)}"
        )
    return BudgetConfig(budget.B, tuple(sorted(set(budget.n))))


#: A study name: it becomes a directory name, so no separators and no leading dot (no "..", no hidden dir).
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


def _study(d: Mapping, trusted: Set[str] | None = None) -> StudyConfig:
    name = schema.text()("study.name", d.get("name"))
    if not _NAME.fullmatch(name):  # it names the run directory (outputs/<study.name>/...): never a path
        raise ConfigError(
            f"study.name must be a name (letters, digits, '_', '-', '.'; not starting with '.'), got {name!r}"
        )
    kind = schema.choice(study_kinds())("study.kind", d.get("kind"))
    options = schema.parse(
        extend.studies.get(kind).options,
        d,
        "study.",
        ignore=("name", "kind"),
        what=f"the {kind} study",
        trusted=trusted,
    )
    return StudyConfig(
        name=name,
        kind=kind,
        reps=options.reps,
        chunk_reps=options.chunk_reps,
        save_replicates=options.save_replicates,
        options=options,
    )


def _dask_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def _runner(d: Mapping) -> RunnerConfig:
    runner = schema.parse(RunnerConfig, d, "runner.")
    # after the schema: a bad runner.address is reported whether or not dask is installed
    if runner.backend == "dask" and not _dask_available():
        raise ConfigError(
            "runner.backend=dask needs dask.distributed, which is not installed: pip install 'simstudy[dask]'"
        )
    return runner


def parse(cfg: Mapping, *, trusted: Set[str] | None = None) -> Config:
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
    trusted : set of str, optional, keyword-only
        For a config read back from a run directory (which may come from anyone): the plug-in import paths the
        user trusts (``plugins=...`` on the command line). Any other path it names (a ``_target_``, a band
        method, a selection algorithm) that no registered plug-in has is refused by name before it is imported
        (:func:`simstudy.plugins.refuse_untrusted`). Default ``None``: the config is the user's own.

    Returns
    -------
    Config
        The frozen config (hashable parts; no Hydra or OmegaConf objects).

    Raises
    ------
    ConfigError
        On the first invalid value, in one line naming its key and value; an untrusted plug-in; an unknown key; a discrete
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
    schema.refuse_unknown(cfg, _TOP_KEYS)
    seed = schema.integer(minimum=0)("seed", cfg.get("seed"))
    study = _study(_section(cfg, "study"), trusted)
    spec = extend.studies.get(study.kind)
    dists = parse_distributions(cfg.get("distribution"), trusted=trusted)
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
        estimators=parse_estimators(cfg.get("estimators"), trusted=trusted),
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
    log_plugin_costs(config)
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


def design_cells(resolved: dict) -> tuple[list[str], list[tuple[str, dict, dict]]]:
    """A config's ``design:`` block crossed into cells: its keys, and per cell (directory name, its values by
    key, its full config without the block). The block maps dotted keys of the config to lists of values::

        design:
          distribution.sd: [0.05, 0.1]
          budget.B: [10, 30]

    Raises ConfigError naming ``design.KEY`` for a key the config does not have or a value that is no list.
    """
    import copy
    import itertools
    import json

    from simstudy.engine.rundir import dirname

    design = resolved.get("design")
    if not isinstance(design, dict) or not design:
        raise ConfigError(
            f"design must map config keys to lists of values, e.g. design={{budget.B: [10, 30]}}, got {design!r}"
        )
    base = {k: v for k, v in resolved.items() if k != "design"}
    for key, values in design.items():
        *parents, leaf = str(key).split(".")
        node: Any = base  # a config value: a mapping, or anything else on a wrong key
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if key == "design" or not isinstance(node, dict) or leaf not in node:
            raise ConfigError(f"design.{key}: the config has no key {key} (design crosses values of existing keys)")
        if not isinstance(values, list) or not values:
            raise ConfigError(f"design.{key} must be a non-empty list of values, got {values!r}")

    def text(value) -> str:  # as it would be typed: 0.05, true, [10,30]
        return json.dumps(value, separators=(",", ":")).strip('"') if not isinstance(value, str) else value

    keys, cells = list(design), []
    for combo in itertools.product(*design.values()):
        cell = copy.deepcopy(base)
        for key, value in zip(keys, combo):
            *parents, leaf = key.split(".")
            node = cell
            for part in parents:
                node = node[part]
            node[leaf] = value
        name = dirname(",".join(sorted(f"{k}={text(v)}" for k, v in zip(keys, combo))))
        cells.append((name, dict(zip(keys, combo)), cell))
    names = [c[0] for c in cells]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"design lists a value twice: its cells {', '.join(n for n in names if names.count(n) > 1)} repeat"
        )
    return keys, cells


def parse_cells(resolved: dict) -> list[Config]:
    """The Config of each cell of a config's ``design:`` block (:func:`design_cells`), every cell checked before
    any compute; a bad one is a ConfigError naming the cell."""
    configs = []
    for name, _, cell in design_cells(resolved)[1]:
        try:
            configs.append(parse(cell))
        except ConfigError as exc:
            raise ConfigError(f"design cell {name}: {exc}") from None
    return configs


def parse_study(resolved: dict) -> Config:
    """:func:`parse`, and for a config with a ``design:`` block each of its cells (all checked before any compute, a
    bad one named, :func:`parse_cells`); returns the Config of the config, or of its first cell."""
    return parse(resolved) if "design" not in resolved else parse_cells(resolved)[0]
