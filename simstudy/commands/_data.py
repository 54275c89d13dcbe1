"""What every data command shares: the data keys, their checks, and reading the scores.

``simstudy curve``, ``bands``, ``audit`` and ``extrapolate`` read scores the same way: the keys of
:class:`DataOptions` (a schema, :mod:`simstudy.schema`), cross-checked into a frozen :class:`DataConfig` by
:func:`data_config`, and loaded by :func:`simstudy.datasets.load_data` (the models and runs they keep:
:func:`simstudy.datasets.select_scores`). With ``minimize=true`` the commands pass ``minimize`` to the kernels
(:func:`simstudy.stats.estimators.expected_max`, :func:`simstudy.stats.bands.tuning_curve_bands`,
:func:`simstudy.tables.evp_curves`, ...), which give the minimum's curves in the scores' own units.

==========================  ========================================================================
name                        what
==========================  ========================================================================
:class:`DataOptions`        the data keys of every data command, with defaults, help and checks
:class:`DataConfig`         the data keys cross-checked and frozen
:func:`command_iv`          a command's schema instance from its config (unknown keys refused)
:func:`command_config`      a command's frozen config from its schema instance, field by field
:func:`data_config`         the data keys' cross-checks, giving a :class:`DataConfig`
:func:`scores_of`           each model's scores, as given or read from the data keys
:func:`read`                the config and scores, with what reading found (direction, i.i.d. check)
:func:`log_scores`          the command's inputs and the scores many runs share, logged
==========================  ========================================================================

Nothing here prints or exits: bad input raises :class:`~simstudy.schema.ConfigError` (or the data reader's
:class:`~simstudy.datasets.DataError`), and the command line says it in one line.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from simstudy import schema, schema_docs
from simstudy.schema import ConfigError, option

__all__ = ["REQUIRED", "XSCALES", "DataOptions", "DataConfig"]

log = logging.getLogger("simstudy")
_C = TypeVar("_C")  # a data command's config (read returns it with the data as read)


# The data commands (simstudy curve, bands, audit). Each command's keys are a schema (:mod:`simstudy.schema`):
# the defaults, the words of `simstudy COMMAND --help` and the per-key checks live in its fields; the YAML
# (configs/curve.yaml ...) holds only Hydra's settings, and the CLI stores the schema's defaults for Hydra.

#: The default of a key the user must give (OmegaConf's missing value: Hydra says "data is required").
REQUIRED = "???"
XSCALES = ("linear", "log")


def bands():
    from simstudy.stats import bands  # only when a bands/audit key is checked: importing config stays cheap

    return bands


@schema.accepting("a file path or a shipped data set name")
def _path(key: str, value: Any) -> str:
    if value == REQUIRED:
        raise ConfigError(f"{key} is required: set it with {key}=...")
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a file path or a shipped data set name, got {value!r}")
    return value


@schema.accepting("a model name or a list of them")
def names(key: str, value: Any) -> tuple[str, ...] | None:
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


@schema.accepting("a non-empty string or null")
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


positive = schema.number(positive=True)
#: A number (infinities included) or null.
bound = schema.optional(schema.number(what="a number or null"))
#: A finite number or null: a score to reach (an infinite one is never reached, and says nothing).
finite_score = schema.optional(
    schema.number(minimum=-sys.float_info.max, maximum=sys.float_info.max, what="a finite number (a score) or null")
)


@schema.accepting("a positive number, a mapping of model to one, or null")
def parse_trial_time(key: str, value: Any) -> float | tuple[tuple[str, float], ...] | None:
    if isinstance(value, Mapping):  # per model, as hashable (model, time) pairs
        return tuple((str(m), positive(f"{key}.{m}", t)) for m, t in value.items())
    return None if value is None else positive(key, value)


_LOW_DOC = "the lowest score possible, in score units (0 for accuracy; null: unbounded); scores below it are an error"
_HIGH_DOC = "the highest score possible, in score units (1 for accuracy; null: unbounded); scores above it are an error"
_MINIMIZE_DOC = (
    "true: lower scores are better (losses, error rates, perplexities): expected minimum curves, bands on "
    "the lower tail, a target is reached at or below it"
)


CONFIDENCE_DOC = "the simultaneous coverage of the bands, e.g. 0.8"


@schema_docs.documented()
@dataclass(frozen=True)
class DataOptions:
    """The keys every data command takes: the scores and how to read them (a schema, :mod:`simstudy.schema`).

    The base of :class:`~simstudy.commands.curve.CurveOptions`, :class:`~simstudy.commands.bands.BandsOptions`,
    :class:`~simstudy.commands.audit.AuditOptions` and :class:`~simstudy.commands.extrapolate.ExtrapolateOptions`; each field is a
    ``key=value`` of the command line (``simstudy curve data=runs.csv models=[mlp,lstm]``), its default and help
    text (``--help``) declared here. The checks run
    in :func:`simstudy.schema.parse`; the cross-checks (``model`` against ``models``, ``low`` below ``high``) in
    the commands' parsers.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.commands._data import DataOptions
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
        "column), JSON Lines or JSON file, a shipped data set: reuters_hedwig, deberta_mnli, "
        "tdsa_fiesta, or a tuning source (an Optuna storage or journal, an MLflow store, a Ray Tune directory, a "
        "W&B export, SMAC3's, HpBandSter's or Syne Tune's results), each of its studies a model",
        _path,
    )
    model: tuple[str, ...] | None = option(
        None, "use only this model of the file (model=NAME); same as models=[NAME]", names
    )
    models: tuple[str, ...] | None = option(None, "use only these models, e.g. models=[mlp,lstm]", names)
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
        "drop (leave them out, saying how many per model), or a number they count as, in score units, "
        "e.g. missing=0",
        _missing,
    )
    scale: float = option(1.0, "multiply every score by this before use, e.g. scale=0.01 for percentages", positive)
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
        "deberta_mnli: each run's best accuracy over its learning curve (best) or its last (final); null: best. "
        "A tuning source: how a trial's several reports become its one score (last, best, max, min or mean; Ray "
        "Tune and Syne Tune: null is last). Refused for other data",
        schema.optional(schema.choice(("best", "final", "last", "max", "min", "mean"))),
    )
    low: float | None = option(None, _LOW_DOC, bound)
    high: float | None = option(None, _HIGH_DOC, bound)
    minimize: bool = option(False, _MINIMIZE_DOC, schema.boolean())
    objective: int | None = option(
        None,
        "a tuning source only: which objective of a multi-objective study to read (0-based); null: the first",
        schema.optional(schema.integer(minimum=0)),
    )
    metric: str | None = option(
        None,
        "a tuning source only: the metric by name (MLflow's key, an Optuna objective's name, a Ray Tune, W&B or "
        "Syne Tune metric), needed where several are logged",
        _optional_str,
    )


_SAMPLE_SEED_DOC = (
    "with sample_size: null keeps the first sample_size runs of each model; an integer draws a "
    "random subset of sample_size runs per model instead (without replacement; the same seed, the "
    "same runs), e.g. sample_seed=3"
)


def sample_seed_option():
    """The ``sample_seed`` key of ``simstudy curve`` and ``bands`` (a random sample of the runs)."""
    return option(None, _SAMPLE_SEED_DOC, schema.optional(schema.integer(minimum=0)))


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
        ``minimize``: lower scores are better; ``low`` and ``high`` stay in the scores' own units (the kernels
        take ``minimize`` and answer in them). A tuning source's recorded direction sets it when read
        (:func:`read`).
    objective : int or None, default None
        ``objective``: a tuning source's objective (0-based; None: the first).
    metric : str or None, default None
        ``metric``: a tuning source's metric by name.
    reduce : str or None, default None
        ``reduce``: how a tuning source's trial with several reports gets its one score (deberta_mnli's is in
        ``options``).
    found : simstudy.datasets.Found or None, default None
        What reading the data found (the direction, each model's i.i.d. check): set by :func:`read`; None
        before the data is read, or for scores given as arrays.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> data = curve.parse({"data": "runs.csv", "models": ["mlp", "lstm"], "low": 0, "high": 1}).data
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
    minimize: bool = False  # lower is better: the kernels are called with minimize=True
    objective: int | None = None  # a tuning source's objective (None: the first)
    metric: str | None = None  # a tuning source's metric by name
    reduce: str | None = None  # a tuning source's reduce (deberta_mnli's is in options)
    found: Any = None  # what reading the data found (simstudy.datasets.Found): set by read(), None before


def estimator_iv(key: str, value, builtins: tuple[str, ...]) -> str:
    """``estimator``: a built-in (one of ``builtins``) as it is; a plug-in (an import path, or a name a plug-in registered),
    the same as in a study (``estimators.NAME._target_``): imported and called on a tiny input now, so that a
    plug-in that fails does so in one line before any data is read. Only a plug-in the user names is imported."""
    from simstudy import plugins

    if isinstance(value, str) and value in builtins:
        return value
    named = isinstance(value, str) and (plugins.registered_estimator(value) is not None or "." in value.strip("."))
    if not named:
        raise ConfigError(
            f"{key} must be one of {', '.join(builtins)}, or a plug-in estimator: its import path "
            f"module.function (the contract of simstudy.plugins), got {value!r}"
        )
    try:
        plugins.check_estimator(plugins.estimator_plugin(value), key)
    except plugins.PluginError as exc:
        raise ConfigError(str(exc).replace(f"{key}._target_=", f"{key}=", 1)) from None
    return value


def command_iv(options: type, command: str, cfg: Mapping) -> Any:
    """The command's schema instance (of its schema ``options``) from its config: an unknown key (``+typo=1``) is
    an error, never a silent run on everything, and each key passes its field's check."""
    valid = [f.name for f in dataclasses.fields(options)]
    for key in cfg:
        if key not in valid:
            raise ConfigError(
                f"{key} is not a setting of simstudy {command} (settings: {', '.join(valid)}; "
                f"simstudy {command} --help explains each)"
            )
    return schema.parse(options, cfg)


def command_config(config: type, o: DataOptions, data: DataConfig, **given) -> Any:
    """The command's frozen ``config`` from its schema instance ``o``: ``data``, the ``given`` fields, and every
    other field the key of the same name as it was checked (a key keeps its name from schema to config)."""
    keys = {f.name: getattr(o, f.name) for f in dataclasses.fields(config) if f.name not in given and f.name != "data"}
    return config(data=data, **keys, **given)


def _applies_iv(o: DataOptions) -> None:
    """Options that do not apply to the data are refused, never ignored (before any data is read)."""
    from simstudy.datasets import DATASETS  # here: importing config stays cheap

    shipped = o.data in DATASETS
    for key in ("split", "reduce"):
        value = getattr(o, key)
        # reduce= on a file is a tuning source's (last, best, ...): refused when reading, if the file is no source
        file_reduce = key == "reduce" and not shipped and value != "final"
        if value is not None and o.data != "deberta_mnli" and not file_reduce:
            what = "splits" if key == "split" else "learning curves"
            raise ConfigError(f"{key}={value} applies to deberta_mnli's {what} only; {o.data} has none: drop {key}=")
    if o.data == "deberta_mnli" and o.reduce not in (None, "best", "final"):
        raise ConfigError(
            f"reduce={o.reduce} applies to tuning sources; deberta_mnli's learning curves take best or final"
        )
    for key in ("objective", "metric"):
        value = getattr(o, key)
        if value is not None and shipped:
            raise ConfigError(
                f"{key}={value} applies to tuning sources only; {o.data} is a shipped data set: drop {key}="
            )
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


def data_config(o: DataOptions) -> DataConfig:
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
        objective=o.objective,
        metric=o.metric,
        reduce=None if o.data == "deberta_mnli" else o.reduce,
    )


def scores_of(data: DataConfig, scores: Mapping | None) -> dict[str, np.ndarray]:
    """Each model's scores: as given (arrays as they are, the command's own numbers; a list as float64), or read
    from ``data`` when None."""
    from simstudy.datasets import load_data  # here: importing config stays cheap

    if scores is None:
        scores = load_data(data)
    return {m: x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64) for m, x in scores.items()}


def read(config: _C, scores: Mapping | None = None) -> tuple[_C, dict[str, np.ndarray]]:
    """A data command's config and scores: the scores as given (the config as it is), or read from ``config.data``
    with what reading found (:func:`simstudy.datasets.read_data`) in ``config.data``: ``minimize`` as a tuning
    source records it, and ``found`` (each model's i.i.d. check, which the commands' pages and lines say)."""
    from simstudy.datasets import read_data  # here: importing config stays cheap

    given: Any = config  # every data command's config has its DataConfig in .data
    if scores is not None:
        return config, scores_of(given.data, scores)
    scores, found = read_data(given.data)
    data = dataclasses.replace(given.data, minimize=found.minimize, found=found)
    return dataclasses.replace(given, data=data), scores_of(data, scores)


def log_scores(command: str, scores: dict, out_dir: Path, *, minimize: bool = False) -> None:
    """The command's inputs, and the scores many runs share exactly (failed runs at 0; at the top of a loss with
    ``minimize``), as the audit says them."""
    from simstudy.commands._pages import atom_notes

    log.info("%s of %s -> %s", command, ", ".join(f"{m} ({x.size} scores)" for m, x in scores.items()), out_dir)
    for line in atom_notes(scores, minimize=minimize):
        log.warning("%s", line)
