"""``simstudy sources data=X``: what a tuning source holds, listed without analysing it (issue 36).

An Optuna storage or journal, an MLflow store, a Ray Tune directory, a W&B export, SMAC3's, HpBandSter's or Syne
Tune's results (:mod:`simstudy.sources`): its format and schema, and per study (each a model of ``simstudy curve
data=X``) its trials by state, the metric and direction read, what it records of its sampler, and whether its
trials read as random search (:func:`simstudy.stats.exchangeability.order_test` on the complete trials in trial
order, seeded as the data commands seed it, so the p-values are theirs). A plain command: it writes nothing.

==================  ===========================================================================================
name                what
==================  ===========================================================================================
:func:`parse`       the ``key=value`` strings -> a :class:`SourcesConfig` (one-line ConfigError)
:func:`run`         the source read -> a :class:`Listing`
:func:`lines`       what the terminal shows
==================  ===========================================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from simstudy.datasets import ModelCheck, check_model
from simstudy.registry import Command
from simstudy.schema import ConfigError
from simstudy.sources import FORMATS, Source, read_source

__all__ = ["SourcesConfig", "Listing", "parse", "run", "lines"]

_REDUCES = ("last", "best", "max", "min", "mean")


@dataclass(frozen=True)
class SourcesConfig:
    """``simstudy sources``'s keys, checked.

    Parameters
    ----------
    data : str
        ``data``: the source (a file, a directory, or ``sqlite:///FILE``).
    study : str or None
        ``study``: only this study; None: every one.
    objective : int
        ``objective``: a multi-objective study's objective (0-based).
    metric : str or None
        ``metric``: the metric by name, where several are logged.
    reduce : str or None
        ``reduce``: how a trial's several reports become its one score.

    Examples
    --------
    >>> parse({"data": "study.db", "objective": "1"}).objective
    1
    """

    data: str
    study: str | None = None
    objective: int = 0
    metric: str | None = None
    reduce: str | None = None


@dataclass(frozen=True)
class Listing:
    """What :func:`run` returns: the source read, and each study's i.i.d. check.

    Parameters
    ----------
    source : simstudy.sources.Source
        The format, the schema version and the studies.
    checks : tuple of simstudy.datasets.ModelCheck
        One per study, in the source's order.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.sources import Source, Trials
    >>> trials = Trials("svm", "acc", "maximize", np.array([0.7]), ("complete",), np.array([0]), "trial number", ())
    >>> Listing(Source("s.db", "optuna-rdb", None, (trials,)), ()).source.studies[0].name
    'svm'
    """

    source: Source
    checks: tuple[ModelCheck, ...]


def parse(keys: Mapping) -> SourcesConfig:
    """The command line's ``key=value`` strings (or the API's values), checked.

    Parameters
    ----------
    keys : Mapping
        ``data`` (required), ``study``, ``objective``, ``metric``, ``reduce``.

    Returns
    -------
    SourcesConfig
        The keys checked.

    Raises
    ------
    ConfigError
        One line naming the key and its value.

    Examples
    --------
    >>> parse({"data": "study.db", "reduce": "first"})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: reduce must be one of last, best, max, min, mean, got 'first'
    """
    data = keys.get("data")
    if not isinstance(data, str) or not data:
        raise ConfigError(f"data must be a tuning source (a file, a directory or sqlite:///FILE), got {data!r}")
    objective = keys.get("objective", 0)
    try:
        objective = int(objective) if not isinstance(objective, bool) else -1
    except (TypeError, ValueError):
        objective = -1
    if objective < 0:
        raise ConfigError(f"objective must be an integer >= 0 (0-based), got {keys.get('objective')!r}")
    reduce = keys.get("reduce")
    if reduce is not None and reduce not in _REDUCES:
        raise ConfigError(f"reduce must be one of {', '.join(_REDUCES)}, got {reduce!r}")
    for key in ("study", "metric"):
        if keys.get(key) is not None and (not isinstance(keys[key], str) or not keys[key]):
            raise ConfigError(f"{key} must be a name, got {keys[key]!r}")
    return SourcesConfig(data, keys.get("study"), objective, keys.get("metric"), reduce)


def run(config: SourcesConfig | Mapping) -> Listing:
    """Read the source (:func:`simstudy.sources.read_source`) and check each study's complete trials.

    Parameters
    ----------
    config : SourcesConfig or Mapping
        The keys, checked (:func:`parse`) or raw.

    Returns
    -------
    Listing
        The source and each study's check.

    Raises
    ------
    DataError
        The source cannot be read (one line naming the file, the item and the value).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> ops = [{"op_code": 0, "study_name": "svm", "directions": [2]}]
    >>> for i, v in enumerate([0.71, 0.75, 0.70]):
    ...     ops += [{"op_code": 4, "study_id": 0, "datetime_start": "2025-01-01T00:00:00"},
    ...             {"op_code": 6, "trial_id": i, "state": 1, "values": [v], "datetime_complete": "2025-01-01T00:01:00"}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     journal = pathlib.Path(tmp) / "journal.log"
    ...     _ = journal.write_text("".join(json.dumps({"worker_id": "w", **op}) + "\\n" for op in ops))
    ...     listing = run({"data": str(journal)})
    >>> listing.checks[0].n, listing.checks[0].order_by, round(listing.checks[0].pvalue, 3)
    (3, 'trial number', 0.833)
    """
    if not isinstance(config, SourcesConfig):
        config = parse(config)
    source = read_source(
        config.data, study=config.study, objective=config.objective, metric=config.metric, reduce=config.reduce
    )
    checks = []
    for t in source.studies:
        x = t.complete
        left = ", ".join(f"{k} {s}" for s, k in t.counts.items() if s != "complete")
        x = x[~np.isnan(x)]
        checks.append(check_model(t.name, x, t.order_by, t.provenance, left, t.direction == "minimize"))
    return Listing(source, tuple(checks))


def lines(listing: Listing) -> list[str]:
    """What the terminal shows: the source, then per study its trials, metric, direction, sampler and check.

    Parameters
    ----------
    listing : Listing
        What :func:`run` returned.

    Returns
    -------
    list of str
        A line for the source, then a few per study.

    Examples
    --------
    >>> import numpy as np
    >>> from simstudy.sources import Source, Trials
    >>> from simstudy.datasets import check_model
    >>> trials = Trials("svm", "acc", "maximize", np.array([0.7, 0.8]), ("complete",) * 2, np.arange(2),
    ...                 "trial number", ("not recorded",), ("2 trials: 2 complete",))
    >>> check = check_model("svm", trials.complete, "trial number", trials.provenance, "", False)
    >>> print("\\n".join(lines(Listing(Source("s.db", "optuna-rdb", "v3.2.0.a", (trials,)), (check,)))))
    s.db: Optuna's RDB storage in a SQLite file (study.db, or the URL sqlite:///study.db), schema v3.2.0.a: 1 study
    study 'svm': 2 trials: 2 complete; metric acc, maximize; in trial number order
      sampler: not recorded
      order test: Too few trials to tell (rank correlation of score with trial order +1.00, p = 0.5): with 2 trials no order is rare enough to be flagged at level 0.05.
    """
    source = listing.source
    schema = f", schema {source.schema_version}" if source.schema_version else ""
    count = len(source.studies)
    out = [f"{source.path}: {FORMATS[source.format]}{schema}: {count} stud{'y' if count == 1 else 'ies'}"]
    for t, check in zip(source.studies, listing.checks, strict=True):
        direction = t.direction or "direction not recorded (give minimize= to the data commands)"
        out.append(
            f"study {t.name!r}: {t.notes[0] if t.notes else ''}; metric {t.metric}, {direction}; in {t.order_by} order"
        )
        out += [f"  sampler: {line}" for line in t.provenance]
        out.append(f"  order test: {check.meaning}")
        out += [f"  note: {note}" for note in t.notes[1:]]
    return out


#: The command (:data:`simstudy.extend.commands` finds it).
COMMAND = Command(
    "sources",
    run=run,
    parse=parse,
    lines=lines,
    required=("data",),
    usage="simstudy sources data=FILE|DIR [study=NAME] [objective=I] [metric=NAME] [reduce=last|best|max|min|mean]",
    examples=(
        "simstudy sources data=study.db",
        "simstudy sources data=~/ray_results/my_experiment reduce=best",
        "simstudy sources data=mlflow.db metric=accuracy",
    ),
    writes="nothing: the lines on the terminal only",
    keys={
        "data": "a tuning source: an Optuna storage (study.db, sqlite:///study.db) or journal, an MLflow store, a "
        "Ray Tune directory, a W&B CSV export, SMAC3's, HpBandSter's or Syne Tune's results",
        "study": "only this study (experiment, sweep), by its exact name",
        "objective": "which objective of a multi-objective study (0-based; default 0)",
        "metric": "the metric by name, where several are logged (MLflow's key, ...)",
        "reduce": "how a trial's several reports become its one score: last, best, max, min or mean",
    },
)
