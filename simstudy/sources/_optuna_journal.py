"""Optuna's JournalStorage log file, replayed with the standard library (``optuna/storages/journal/_storage.py``).

The file is JSON lines, one operation each (``op_code``, :data:`OPS`). Replaying them as Optuna's
``JournalStorageReplayResult`` does, as a process other than the writer (whose own invalid operations raise in
Optuna, and are skipped by every other process), gives the studies Optuna itself would load: a study created twice
keeps its first, a deleted study is gone, a finished trial is never changed again, a waiting trial is taken by the
first process to start it. Only what the readers report is kept: states, values, trial numbers and system attribute
*keys* (never their values). Like Optuna, a last line cut short (a write in progress) is left out, with a note; a
bad line before the last is an error naming it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simstudy._limits import MEMORY_ENV, memory_limit, size
from simstudy.score_files import DataError
from simstudy.sources import _optuna
from simstudy.sources.types import Trials

#: Optuna's ``JournalOperation`` codes (Optuna 5.1); a code past these is from a newer Optuna.
OPS = {
    0: "CREATE_STUDY",
    1: "DELETE_STUDY",
    2: "SET_STUDY_USER_ATTR",
    3: "SET_STUDY_SYSTEM_ATTR",
    4: "CREATE_TRIAL",
    5: "SET_TRIAL_PARAM",
    6: "SET_TRIAL_STATE_VALUES",
    7: "SET_TRIAL_INTERMEDIATE_VALUE",
    8: "SET_TRIAL_USER_ATTR",
    9: "SET_TRIAL_SYSTEM_ATTR",
    10: "DISCARD_TRIALS",
}
#: Peak bytes held per byte of the file: a trial's record (about 1 kB with its keys) per operation line of
#: 100 bytes or more, which a trial writes several of.
FILE_COST = 10
_FINISHED = ("complete", "failed", "pruned")


@dataclass
class _Trial:
    number: int
    state: str
    values: list | None
    keys: set[str] = field(default_factory=set)


@dataclass
class _Study:
    name: str
    directions: list[str | None]
    trial_ids: list[int] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)


def looks_like_journal(path: Path) -> bool:
    """Whether the file's first line is a JSON object with an ``op_code`` (False for anything unreadable)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):  # a line nested past the parser's depth is no journal either
        return False
    return isinstance(obj, dict) and isinstance(obj.get("op_code"), int) and "worker_id" in obj


def _lines(path: Path, name: str, notes: list[str]) -> Iterator[tuple[int, dict]]:
    """(line number, operation) of each complete line; the last line, if cut short, noted and left out."""
    pending: tuple[int, bytes, str] | None = None  # a bad line is an error only if another follows it
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if pending is not None:
                raise DataError(f"{name}: line {pending[0]}: {pending[2]}; a journal line must be one JSON operation")
            if not raw.endswith(b"\n"):
                pending = (number, raw, "no end of line")
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                pending = (number, raw, f"not valid JSON ({exc})")
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("op_code"), int) or isinstance(obj["op_code"], bool):
                raise DataError(f"{name}: line {number}: not an Optuna journal operation: {raw[:60]!r}")
            yield number, obj
    if pending is not None:
        notes.append(
            f"the journal's last line ({pending[0]}) is incomplete (a write in progress?): left out, as Optuna does"
        )


def _finite_or_inf(values: Any, where: str, name: str) -> list | None:
    if values is None:
        return None
    if not isinstance(values, list) or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise DataError(f"{name}: {where}: values must be a list of numbers or null, got {values!r:.60}")
    return [float(v) for v in values]


def replay(path: Path, name: str) -> tuple[list[_Study], dict[int, _Trial], list[str]]:
    """The studies (in creation order, deleted ones gone) and trials the journal's operations leave."""
    nbytes = os.path.getsize(path) * FILE_COST
    if nbytes > memory_limit():
        raise DataError(
            f"{name}: {os.path.getsize(path):,} bytes; replayed it would take about {size(nbytes)}, over the memory "
            f"limit of {size(memory_limit())}: raise {MEMORY_ENV}"
        )
    studies: dict[int, _Study] = {}
    next_study = 0
    trials: dict[int, _Trial] = {}
    owner: dict[int, int] = {}  # trial id -> study id
    notes: list[str] = []
    for number, log in _lines(path, name, notes):
        op = log["op_code"]
        where = f"line {number} ({OPS.get(op, op)})"
        if op not in OPS:
            raise DataError(
                f"{name}: line {number}: operation code {op}, unknown to this reader (0-{max(OPS)}, Optuna up to 5.1): "
                f"a newer Optuna wrote it"
            )
        try:
            if op == 0:
                if log["study_name"] in [s.name for s in studies.values()]:
                    continue
                directions = [_optuna.DIRECTION_CODES[int(d)] for d in log["directions"]]
                studies[next_study] = _Study(str(log["study_name"]), directions)
                next_study += 1
            elif op == 1:
                studies.pop(log["study_id"], None)
            elif op == 3 and log["study_id"] in studies:
                studies[log["study_id"]].attrs.update(log["system_attr"])
            elif op == 4 and log["study_id"] in studies:
                study = studies[log["study_id"]]
                trial_id = len(trials)
                values = log.get("values")
                if values is None and log.get("value") is not None:
                    values = [log["value"]]
                state = _optuna.STATE_CODES[int(log.get("state", 0))]
                trials[trial_id] = _Trial(
                    len(study.trial_ids), state, _finite_or_inf(values, where, name), set(log.get("system_attrs", {}))
                )
                study.trial_ids.append(trial_id)
                owner[trial_id] = log["study_id"]
            elif op in (6, 9):
                trial = trials.get(log["trial_id"])
                if trial is None or trial.state in _FINISHED:
                    continue  # Optuna skips an operation on an unknown or finished trial (another process's)
                if op == 9:
                    trial.keys.update(log["system_attr"])
                    continue
                state = _optuna.STATE_CODES[int(log["state"])]
                if state == "running" and trial.state == "running":
                    continue  # a waiting trial another process started first
                trial.state = state
                if log["values"] is not None:
                    trial.values = _finite_or_inf(log["values"], where, name)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{name}: {where}: not an operation Optuna writes ({type(exc).__name__}: {exc})") from None
    return list(studies.values()), trials, notes


def read(path: Path, name: str, *, study: str | None, objective: int, metric: str | None) -> tuple[Trials, ...]:
    """The journal's studies (``study``: that one only) as :class:`Trials`, objective chosen."""
    studies, trials, notes = replay(path, name)
    if study is not None:
        picked = [s for s in studies if s.name == study]
        if not picked:
            listed = ", ".join(repr(s.name) for s in studies[:10]) + (" ..." if len(studies) > 10 else "")
            raise DataError(f"{name}: no study {study!r}; the journal holds {listed or 'no studies'}")
        studies = picked
    out = []
    for s in studies:
        names = s.attrs.get(_optuna.METRIC_NAMES_KEY)
        k = _optuna.choose_objective(name, s.name, len(s.directions), names, objective, metric)
        own = [trials[i] for i in s.trial_ids]
        keys: dict[str, int] = {}
        for t in own:
            for key in t.keys:
                keys[key] = keys.get(key, 0) + 1
        values = [t.values[k] if t.values is not None and k < len(t.values) else None for t in own]
        out.append(
            _optuna.trials(
                s.name,
                s.directions,
                names,
                k,
                [t.number for t in own],
                [t.state for t in own],
                values,
                keys,
                list(s.attrs),
                notes,
            )
        )
    return tuple(out)
