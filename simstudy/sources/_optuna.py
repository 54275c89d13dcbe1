"""What Optuna's two storages share: its states and directions, the choice of an objective, and the traces its
samplers leave in trial system attributes (the only record of how a trial was proposed: Optuna's schema does not
record the sampler, optuna#6185).

The keys are those Optuna 3.0 to 5.1 write (``optuna/samplers``): ``grid_id`` and ``search_space``
(``GridSampler``), ``<Sampler>:generation`` (the genetic samplers: NSGA-II, NSGA-III, ``nsga2:generation`` before
3.2), ``cma:``/``sepcma:``/``cmawm:`` (``CmaEsSampler``), ``tpe:relative_params:<i>`` (``TPESampler`` sharing its
multivariate proposals: ``constant_liar``), ``gp:relative_params:<i>`` (``GPSampler``), ``fixed_params``
(``study.enqueue_trial``), ``completed_rung_<i>`` (the successive-halving pruners); a study system attribute
``qmc:<hash>`` (``QMCSampler``). Only the keys are read, never the values (``cma:optimizer`` holds a pickle).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources.types import Trials, state_note

#: Optuna's ``TrialState`` names (RDB) and values (journal) -> the readers' states.
STATE_NAMES = {"COMPLETE": "complete", "FAIL": "failed", "PRUNED": "pruned", "RUNNING": "running", "WAITING": "waiting"}
STATE_CODES = {1: "complete", 3: "failed", 2: "pruned", 0: "running", 4: "waiting"}
#: Optuna's ``StudyDirection`` names (RDB) and values (journal) -> the readers' directions (NOT_SET: None).
DIRECTION_NAMES = {"MAXIMIZE": "maximize", "MINIMIZE": "minimize", "NOT_SET": None}
DIRECTION_CODES = {2: "maximize", 1: "minimize", 0: None}
#: The study system attribute where ``study.set_metric_names`` keeps the objectives' names.
METRIC_NAMES_KEY = "study:metric_names"
NOT_RECORDED = (
    "sampler not recorded: Optuna's storage does not record it, and this study's trials carry no sampler's "
    "traces (RandomSampler leaves none, nor do TPESampler without constant_liar and others); not evidence of "
    "random search"
)


def choose_objective(
    name: str, study: str, n_objectives: int, metric_names: Sequence[str] | None, objective: int, metric: str | None
) -> int:
    """The index of the objective to read: ``metric`` by its recorded name, else ``objective``; one line if neither."""
    if n_objectives == 0:
        raise DataError(
            f"{name}: study {study!r} records no objective (no direction): not a study Optuna finished creating"
        )
    if metric is not None:
        if not metric_names:
            raise DataError(
                f"{name}: study {study!r}: metric={metric!r}, but the study records no metric names "
                f"(study.set_metric_names); choose its objective by index with objective=0..{n_objectives - 1}"
            )
        if metric not in metric_names:
            listed = ", ".join(repr(m) for m in metric_names)
            raise DataError(f"{name}: study {study!r}: no metric {metric!r}; its metrics are {listed}")
        return list(metric_names).index(metric)
    if not 0 <= objective < n_objectives:
        valid = "objective=0" if n_objectives == 1 else f"objective=0..{n_objectives - 1}"
        raise DataError(
            f"{name}: study {study!r}: objective={objective}, but it has {n_objectives} objective"
            f"{'s' if n_objectives != 1 else ''}: give {valid}, or pick another study with study=NAME"
        )
    return objective


def metric_name(metric_names: Sequence[str] | None, n_objectives: int, k: int) -> str:
    """The name of objective ``k``: recorded, or Optuna's own (``value``, ``values[k]``)."""
    if metric_names and k < len(metric_names):
        return str(metric_names[k])
    return "value" if n_objectives == 1 else f"values[{k}]"


def provenance(trial_keys: Mapping[str, int], study_keys: Iterable[str], n_trials: int) -> tuple[str, ...]:
    """What the system attributes say about how the trials were proposed, one fact a line.

    ``trial_keys`` maps each trial system attribute key to the number of trials that carry it; ``study_keys``
    are the study's system attribute keys.
    """
    groups: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    other = []
    for key, count in sorted(trial_keys.items()):
        head = key.split(":", 1)[0]
        if key in ("grid_id", "search_space"):
            label = "GridSampler (a grid search)"
        elif head in ("cma", "sepcma", "cmawm"):
            label = "CmaEsSampler (an evolution strategy)"
        elif key.startswith("tpe:relative_params"):
            label = "TPESampler sharing its multivariate proposals (constant_liar)"
        elif key.startswith("gp:relative_params"):
            label = "GPSampler (Bayesian optimization with a Gaussian process)"
        elif key.endswith(":generation"):
            label = f"{head} (a genetic algorithm)"
        elif key == "fixed_params":
            label = "trials enqueued by hand (study.enqueue_trial): their parameters were given, not sampled"
        elif key.startswith("completed_rung_"):
            label = "a successive-halving pruner (trials stopped early at rungs)"
        elif key == "constraints" or key.endswith(":constraints"):
            continue  # the constraint values of a constrained study: not a trace of how trials were proposed
        else:
            other.append(key)
            continue
        if head in ("cma", "sepcma", "cmawm"):
            shown = f"{head}:*"
        elif key.startswith(("tpe:relative_params", "gp:relative_params")):
            shown = key.rsplit(":", 1)[0] + ":*"
        elif key.startswith("completed_rung_"):
            shown = "completed_rung_*"
        else:
            shown = key
        groups.setdefault(label, set()).add(shown)
        counts[label] = max(counts.get(label, 0), count)
    facts = [
        f"{label}: trial system attrs {', '.join(sorted(groups[label]))} in {counts[label]} of {n_trials} trials"
        for label in groups
    ]
    if any(key.startswith("qmc:") for key in study_keys):
        facts.append("QMCSampler (quasi-random search): study system attr qmc:*")
    if not any(not f.startswith(("trials enqueued", "a successive")) for f in facts):
        facts.insert(0, NOT_RECORDED)
    if other:
        facts.append(f"other trial system attrs: {', '.join(other[:5])}{' ...' if len(other) > 5 else ''}")
    return tuple(facts)


def trials(
    study: str,
    directions: Sequence[str | None],
    metric_names: Sequence[str] | None,
    k: int,
    numbers: Sequence[int],
    states: Sequence[str],
    values: Sequence[float | None],
    trial_keys: Mapping[str, int],
    study_keys: Iterable[str],
    notes: Sequence[str] = (),
) -> Trials:
    """One Optuna study's :class:`Trials`, objective ``k`` chosen, with its notes."""
    array = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    facts = [state_note(states)]
    if len(directions) > 1:
        facts.append(f"objective {k} of {len(directions)} ({metric_name(metric_names, len(directions), k)})")
    n_pos, n_neg = int(np.sum(array == math.inf)), int(np.sum(array == -math.inf))
    if n_pos or n_neg:
        facts.append(f"{n_pos} value{'s' if n_pos != 1 else ''} +inf and {n_neg} -inf, as stored")
    unfinished = sum(1 for s, v in zip(states, array) if s != "complete" and not math.isnan(v))
    if unfinished:
        facts.append(
            f"{unfinished} trial{'s' if unfinished != 1 else ''} not complete but with a value (a pruned "
            f"trial keeps its last reported value)"
        )
    return Trials(
        name=study,
        metric=metric_name(metric_names, len(directions), k),
        direction=directions[k] if directions else None,
        values=array,
        states=tuple(states),
        order=np.array(numbers, dtype=np.int64),
        order_by="trial number",
        provenance=provenance(trial_keys, study_keys, len(states)),
        notes=tuple(facts) + tuple(notes),
    )
