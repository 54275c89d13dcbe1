"""What a tuning source holds, as the readers return it: :class:`Trials` (one study or experiment) and
:class:`Source` (a file and every study in it).

Plain frozen records of numpy arrays and strings, with no framework object in them: a reader
(:func:`simstudy.sources.read.read_source`) fills them from the file with the standard library alone.

=================  ======================================================================================
name               what it is
=================  ======================================================================================
:class:`Trials`    one study's trials in trial order: values, states, order, provenance and notes
:class:`Source`    a source file: its format, its schema version and its studies
:data:`STATES`     the trial states a reader reports, framework by framework mapped onto these five
:data:`FORMATS`    the formats the readers know, with a line on each
=================  ======================================================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["STATES", "FORMATS", "Trials", "Source"]

#: The trial states, in the order notes count them: a finished trial with a value (``complete``), one that
#: raised or was killed (``failed``), one stopped early by a pruner (``pruned``), one still running, and one
#: queued but not started (``waiting``).
STATES = ("complete", "failed", "pruned", "running", "waiting")

#: The formats :func:`simstudy.sources.read.read_source` reads, each with a line on what it is.
FORMATS = {
    "optuna-rdb": "Optuna's RDB storage in a SQLite file (study.db, or the URL sqlite:///study.db)",
    "optuna-journal": "Optuna's JournalStorage log file (JSON lines of operations)",
    "mlflow-sqlite": "MLflow's tracking store in a SQLite file (mlflow.db): an experiment is a study",
    "ray-tune": "a Ray Tune experiment directory (a trial directory each, with result.json or progress.csv)",
    "wandb-csv": "W&B runs exported as CSV from the web UI: a sweep is a study",
    "smac3": "SMAC3's runhistory.json (scenario.json beside it where present)",
    "hpbandster": "HpBandSter's (BOHB's) configs.json and results.json, a directory or either file",
    "syne-tune": "Syne Tune's results.csv.zip and metadata.json, a directory or the zip",
}

_DIRECTIONS = ("maximize", "minimize", None)


def _readonly(values: np.ndarray) -> np.ndarray:
    values.setflags(write=False)
    return values


def state_note(states: Iterable[str], noun: str = "trials") -> str:
    """One line counting ``states``: ``"12 trials: 9 complete, 2 failed, 1 pruned"`` (``"no trials"`` if none)."""
    counts = Counter(states)
    total = sum(counts.values())
    if not total:
        return f"no {noun}"
    parts = [f"{counts[s]} {s}" for s in STATES if counts[s]]
    return f"{total} {noun}: {', '.join(parts)}"


@dataclass(frozen=True, eq=False)
class Trials:
    """One study (an Optuna study, an MLflow experiment): its trials' values and states, in trial order.

    Parameters
    ----------
    name : str
        The study's name, as the source spells it (``study=NAME`` picks it).
    metric : str or None
        What ``values`` measure: the metric's name where the source records one (MLflow's key, an Optuna study's
        ``metric_names``), Optuna's ``"value"`` or ``"values[i]"`` otherwise; None for a study with no metric.
    direction : {"maximize", "minimize"} or None
        Whether higher values are better, as the source records it; None where it records none (MLflow).
    values : ndarray of float64, shape (n_trials,)
        Each trial's value in the metric's own units, as stored (Optuna's +-inf included), in trial order; NaN
        where a trial has none. A trial that did not complete may still have one (Optuna keeps a pruned trial's
        last reported value): ``states`` says which trials completed. Read-only.
    states : tuple of str, length n_trials
        Each trial's state, one of :data:`STATES`.
    order : ndarray of int64, shape (n_trials,)
        What the trials are ordered by (``order_by``): Optuna's trial number, MLflow's start time. Read-only.
    order_by : str
        What ``order`` is, in words with its unit: ``"trial number"``, ``"start time (ms since 1970, UTC)"``.
    provenance : tuple of str
        What the source records about how the trials were proposed, one fact a line (a sampler's traces and in
        how many trials). A source that records nothing says so ("not recorded"), which is no evidence of
        random search.
    notes : tuple of str, default ()
        One-line facts a reader of the values should know: ``"12 trials: 9 complete, 2 failed, 1 pruned"``.

    Raises
    ------
    ValueError
        If ``values``, ``states`` and ``order`` differ in length, a state is not one of :data:`STATES`, or
        ``direction`` is not ``"maximize"``, ``"minimize"`` or None.

    Examples
    --------
    >>> import numpy as np
    >>> trials = Trials(
    ...     name="svm", metric="accuracy", direction="maximize", values=np.array([0.71, np.nan, 0.75]),
    ...     states=("complete", "failed", "complete"), order=np.array([0, 1, 2]), order_by="trial number",
    ...     provenance=("sampler not recorded",), notes=("3 trials: 2 complete, 1 failed",))
    >>> trials.counts
    {'complete': 2, 'failed': 1}
    >>> trials.complete
    array([0.71, 0.75])
    """

    name: str
    metric: str | None
    direction: str | None
    values: np.ndarray
    states: tuple[str, ...]
    order: np.ndarray
    order_by: str
    provenance: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        values = _readonly(np.array(self.values, dtype=np.float64))
        order = _readonly(np.array(self.order, dtype=np.int64))
        states = tuple(self.states)
        if values.ndim != 1 or order.shape != values.shape or len(states) != values.size:
            raise ValueError(
                f"study {self.name!r}: values, states and order must be 1-D of one length, got shapes "
                f"{values.shape}, ({len(states)},) and {order.shape}"
            )
        unknown = sorted(set(states) - set(STATES))
        if unknown:
            raise ValueError(f"study {self.name!r}: unknown trial state {unknown[0]!r}; one of {', '.join(STATES)}")
        if self.direction not in _DIRECTIONS:
            raise ValueError(
                f"study {self.name!r}: direction must be 'maximize', 'minimize' or None, got {self.direction!r}"
            )
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "provenance", tuple(self.provenance))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def counts(self) -> dict[str, int]:
        """Trials by state, in the order of :data:`STATES`, the states present only."""
        counts = Counter(self.states)
        return {s: counts[s] for s in STATES if counts[s]}

    @property
    def complete(self) -> np.ndarray:
        """The values of the complete trials, in trial order (float64, shape (n_complete,))."""
        return self.values[np.array([s == "complete" for s in self.states], dtype=bool)]


@dataclass(frozen=True)
class Source:
    """A tuning source read from a file: its format, its schema's version and every study read from it.

    Parameters
    ----------
    path : str
        The file, as named in messages.
    format : str
        One of :data:`FORMATS` (``"optuna-rdb"``, ``"optuna-journal"``, ``"mlflow-sqlite"``, ``"ray-tune"``,
        ``"wandb-csv"``, ``"smac3"``, ``"hpbandster"``, ``"syne-tune"``).
    schema_version : str or None
        The schema's version as the file records it (Optuna's and MLflow's Alembic revision, ``"v3.2.0.a"``);
        None for a format without one (Optuna's journal: its operation codes are checked instead; the file-based
        formats of Ray Tune, W&B, HpBandSter and Syne Tune); SMAC3's layout (``"SMAC 2.1+ (runs as objects)"``).
    studies : tuple of Trials
        Every study read (the one asked for with ``study=NAME``), in the source's order.

    Raises
    ------
    ValueError
        If ``format`` is not one of :data:`FORMATS`.

    Examples
    --------
    >>> import numpy as np
    >>> trials = Trials("svm", "accuracy", "maximize", np.array([0.71]), ("complete",), np.array([0]),
    ...                 "trial number", ("sampler not recorded",))
    >>> source = Source("study.db", "optuna-rdb", "v3.2.0.a", (trials,))
    >>> [s.name for s in source.studies], FORMATS[source.format].split(" (")[0]
    (['svm'], "Optuna's RDB storage in a SQLite file")
    """

    path: str
    format: str
    schema_version: str | None
    studies: tuple[Trials, ...]

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        object.__setattr__(self, "studies", tuple(self.studies))
