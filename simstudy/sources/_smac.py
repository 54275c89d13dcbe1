"""SMAC3's ``runhistory.json``, read with ``json`` (``smac/runhistory/runhistory.py``, SMAC 1.x and 2.x).

The file holds ``data`` (a run a row: configuration id, instance, seed, budget, cost, time, status, start and end;
as objects since SMAC 2.1, as lists in 2.0, as key and value pairs with named statuses in 1.x), ``configs`` (id ->
values) and ``config_origins`` (id -> how SMAC proposed it: "Initial Design: Sobol", "Random Search", "Local
Search", "Random Search (sorted)" ...), the provenance. ``scenario.json`` beside it, where present, names the
run and its objectives. SMAC minimises cost: the direction is ``minimize``; a multi-objective cost (a list) is read
by ``objective=INDEX`` or ``metric=NAME`` (the scenario's objectives).

A configuration is one trial, in the order of its id (SMAC numbers configurations as it first runs them). Its runs
(instances, seeds, budgets) are never counted as trials: its score is its cost at its largest budget (the default,
said in a note), and several runs there (instances or seeds) are reduced by ``reduce=`` (``mean`` is SMAC's own
aggregate) or refused in one line. A crashed, timed-out or out-of-memory run is failed, its crash cost left out.
SMAC's output of one scenario (``smac3_output/NAME``, a directory per seed) is a study per seed, ``NAME/SEED``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._files import load_json, number, reduce_note, reduce_values
from simstudy.sources.types import Trials, state_note

#: SMAC 2's ``StatusType`` values -> the readers' states (CRASHED, TIMEOUT, MEMORYOUT: failed).
STATUS_CODES = {0: "running", 1: "complete", 2: "failed", 3: "failed", 4: "failed"}
#: SMAC 1's ``StatusType`` names (``{"__enum__": "StatusType.SUCCESS"}``) -> the readers' states.
STATUS_NAMES = {
    "SUCCESS": "complete",
    "DONOTADVANCE": "complete",
    "RUNNING": "running",
    "TIMEOUT": "failed",
    "CRASHED": "failed",
    "ABORT": "failed",
    "MEMOUT": "failed",
    "MEMORYOUT": "failed",
    "CAPPED": "failed",
    "STOP": "failed",
}
#: ``config_origins`` that are random draws (every other origin is a design or SMAC's model).
_RANDOM = re.compile(r"^(Random Search|Random|Initial [Dd]esign: Random)$")
_START = re.compile(rb'^\s*\{\s*"(stats|data)"\s*:')


@dataclass
class _Run:
    config: int
    budget: float
    cost: Any
    state: str
    start: float
    position: int


def looks_like_runhistory(path: Path) -> bool:
    """Whether a file is a SMAC runhistory: a JSON object opening with ``stats`` or ``data``, holding ``configs``."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
            if not _START.match(head):
                return False
            f.seek(max(0, os.path.getsize(path) - (1 << 20)))
            tail = f.read()
    except OSError:
        return False
    return b'"configs"' in head + tail or b'"config_origins"' in head + tail


def _status(value: Any, where: str, name: str) -> str:
    if isinstance(value, dict) and isinstance(value.get("__enum__"), str):
        key = value["__enum__"].rsplit(".", 1)[-1]
        if key in STATUS_NAMES:
            return STATUS_NAMES[key]
    elif isinstance(value, int) and not isinstance(value, bool) and value in STATUS_CODES:
        return STATUS_CODES[value]
    raise DataError(f"{name}: {where}: status {value!r:.60} is not one of SMAC's")


def _runs(doc: dict, name: str) -> tuple[list[_Run], str]:
    """The runs of ``data``, whatever SMAC wrote them as, and the layout's name."""
    runs, layout = [], "SMAC 2.1+ (runs as objects)"
    for i, entry in enumerate(doc["data"]):
        where = f"data[{i}]"
        try:
            if isinstance(entry, dict):
                cid, budget, cost, status, start = (
                    entry["config_id"], entry.get("budget"), entry["cost"], entry["status"], entry.get("starttime"),
                )  # fmt: skip
            elif isinstance(entry, list) and len(entry) == 2 and all(isinstance(e, list) for e in entry):
                layout = "SMAC 1.x (run keys and values as pairs)"
                key, value = entry
                cid, budget = key[0], key[3] if len(key) > 3 else None
                cost, status, start = value[0], value[2], value[3] if len(value) > 3 else None
            elif isinstance(entry, list) and len(entry) >= 8:
                layout = "SMAC 2.0 (runs as lists)"
                cid, budget, cost, status, start = entry[0], entry[3], entry[4], entry[6], entry[7]
            else:
                raise DataError(f"{name}: {where}: not a run SMAC writes: {entry!s:.60}")
        except (KeyError, IndexError, TypeError):
            raise DataError(f"{name}: {where}: not a run SMAC writes: {entry!s:.60}") from None
        if isinstance(cid, bool) or not isinstance(cid, int):
            raise DataError(f"{name}: {where}: config id {cid!r:.40} is not an integer")
        runs.append(_Run(cid, number(budget) or 0.0, cost, _status(status, where, name), number(start) or math.nan, i))
    return runs, layout


def _objective(
    name: str, runs: list[_Run], objectives: list[str], objective: int, metric: str | None
) -> tuple[int | None, str]:
    """Which cost to read: None for a single cost, else the index of ``metric`` or ``objective``; and its name."""
    sizes = {len(r.cost) for r in runs if isinstance(r.cost, list)}
    if not sizes:
        if metric is not None and objectives and metric not in objectives:
            raise DataError(f"{name}: no objective {metric!r}; the scenario's is {objectives[0]!r}")
        if objective != 0:
            raise DataError(f"{name}: objective={objective}, but the runs have one cost: give objective=0")
        return None, objectives[0] if objectives else "cost"
    if len(sizes) > 1:
        raise DataError(f"{name}: runs with costs of {sorted(sizes)} objectives: not one SMAC run")
    (n,) = sizes
    if metric is not None:
        if metric not in objectives:
            listed = ", ".join(repr(o) for o in objectives) or "not named (no scenario.json objectives)"
            raise DataError(f"{name}: no objective {metric!r}; the objectives are {listed}")
        return objectives.index(metric), metric
    if not 0 <= objective < n:
        raise DataError(f"{name}: objective={objective}, but the cost has {n} objectives: give objective=0..{n - 1}")
    return objective, objectives[objective] if objective < len(objectives) else f"cost[{objective}]"


def read(
    path: Path, name: str, *, objective: int, metric: str | None, reduce: str | None
) -> tuple[str, tuple[Trials, ...]]:
    """The layout's name and the run as one :class:`Trials` (named by ``scenario.json``, else its directory)."""
    doc = load_json(path, name)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list) or not isinstance(doc.get("configs"), dict):
        raise DataError(f"{name}: not a SMAC runhistory (a JSON object with 'data' and 'configs')")
    scenario: dict = {}
    if (path.parent / "scenario.json").is_file() and not (path.parent / "scenario.json").is_symlink():
        found = load_json(path.parent / "scenario.json", f"{path.parent / 'scenario.json'}")
        scenario = found if isinstance(found, dict) else {}
    objectives = scenario.get("objectives", [])
    objectives = [objectives] if isinstance(objectives, str) else [str(o) for o in objectives or []]
    runs, layout = _runs(doc, name)
    k, chosen = _objective(name, runs, objectives, objective, metric)
    by_config: dict[int, list[_Run]] = {}
    for run in runs:
        by_config.setdefault(run.config, []).append(run)
    ids = sorted(by_config)
    values, states = [], []
    lower = several = 0
    top = max((r.budget for r in runs), default=0.0)
    for cid in ids:
        own = by_config[cid]
        budget = max(r.budget for r in own)
        lower += budget < top
        at = sorted((r for r in own if r.budget == budget), key=lambda r: r.position)  # runs are added as they start
        done = [r for r in at if r.state == "complete"]
        if len(done) > 1:
            several += 1
            if reduce is None:
                raise DataError(
                    f"{name}: configuration {cid} has {len(done)} successful runs at budget {budget:g} (instances or "
                    f"seeds): a configuration is one trial; give reduce=mean (SMAC's aggregate), last, best, min or max"
                )
        costs = []
        for r in done:
            c = r.cost[k] if k is not None else r.cost
            value = number(c)
            if value is None:
                raise DataError(f"{name}: data[{r.position}]: cost {c!r:.40} is not a number")
            costs.append(value)
        values.append(reduce_values(costs, reduce or "last", "minimize", name, f"configuration {cid}"))
        states.append("complete" if done else "running" if any(r.state == "running" for r in at) else "failed")
    notes = [state_note(states, "configurations"), f"{layout}; {len(runs)} runs of {len(ids)} configurations"]
    if top > 0:
        notes.append(
            f"one score per configuration: its cost at its largest budget (the default); {lower} configuration"
            f"{'s' if lower != 1 else ''} stopped below the largest budget {top:g}"
        )
    if several:
        notes.append(reduce_note(chosen, reduce or "last", "", "run") + " over instances and seeds")
    origins = doc.get("config_origins") or {}
    named = scenario.get("name")
    study = named if isinstance(named, str) else path.parent.name or path.stem
    return layout, (
        Trials(
            name=study,
            metric=chosen,
            direction="minimize",
            values=np.array(values, dtype=np.float64),
            states=tuple(states),
            order=np.array(ids, dtype=np.int64),
            order_by="configuration id (SMAC numbers configurations in the order it first runs them)",
            provenance=_provenance([origins.get(str(c)) if isinstance(origins, dict) else None for c in ids]),
            notes=tuple(notes),
        ),
    )


def _provenance(origins: list[Any]) -> tuple[str, ...]:
    known = [str(o) for o in origins if o]
    if not known:
        return ("not recorded: the runhistory has no config_origins; not evidence of random search",)
    counts: dict[str, int] = {}
    for o in known:
        counts[o] = counts.get(o, 0) + 1
    listed = ", ".join(f"{n} {o!r}" for o, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    facts = [f"config_origins: {listed} (of {len(origins)} configurations)"]
    random = sum(n for o, n in counts.items() if _RANDOM.match(o))
    if random == len(origins):
        facts.append("every configuration drawn at random, as SMAC records it")
    else:
        facts.append(
            f"{len(origins) - random} of {len(origins)} configurations from an initial design or SMAC's model, not "
            f"random draws: not random search"
        )
    return tuple(facts)
