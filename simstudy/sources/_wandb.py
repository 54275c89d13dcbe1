"""Weights & Biases runs exported as CSV from the web UI (the runs table's "Export as CSV"), read with ``csv``.

The export has a row per run: ``Name``, ``State``, ``Created`` (the run's creation time), ``Sweep`` (the sweep's id,
empty for a run outside one), W&B's other columns (:data:`META`) and a column per config value and summary metric,
with nothing to tell a config column from a metric: ``metric=`` names the metric unless one numeric column is left.
The UI lists the newest run first: the runs are put in creation order, oldest first, when ``Created`` is there (the
file's order otherwise, said in a note). Each sweep is a study (``study=`` its id); runs outside a sweep are the
study ``(no sweep)``; an export without a ``Sweep`` column is one study named after the file. W&B records no
direction in the export. A sweep's ``method`` (random, grid, bayes), where the export has a column for it
(``method``, ``Sweep method``), is provenance. A run on several rows (an ``ID``/``run_id`` column with repeats, or a
history export with ``_step``) is reduced by ``reduce=`` or refused in one line.
"""

from __future__ import annotations

import csv
import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._files import (
    REPEAT_KEYS,
    check_numeric,
    check_size,
    choose_metric,
    csv_rows,
    number,
    numeric_keys,
    reduce_note,
    reduce_values,
    repeated,
)
from simstudy.sources.types import Trials, state_note

#: W&B's run states -> the readers' states (a crashed or killed run did not finish: failed).
STATES = {
    "finished": "complete",
    "failed": "failed",
    "crashed": "failed",
    "killed": "failed",
    "preempted": "failed",
    "running": "running",
    "preempting": "running",
    "pending": "waiting",
}
#: Columns of the UI's export that are about the run, never a metric.
META = frozenset(
    {
        "Name", "State", "Notes", "User", "Tags", "Created", "Runtime", "Sweep", "Group", "Job Type", "ID",
        "Hostname", "Host", "OS", "Python", "Commit", "GitHub", "GPU Type", "GPU Count", "Command", "Updated",
        "Heartbeat", "Run ID", "run_id",
    }
)  # fmt: skip
#: Columns where a sweep's search method is exported.
METHOD_COLUMNS = ("method", "Sweep method", "sweep_method", "Method")
#: Columns naming a run, whose repeats mean a run on several rows.
ID_COLUMNS = ("ID", "Run ID", "run_id", "trial_id")
NO_SWEEP = "(no sweep)"
_METHODS = {
    "random": "random search, as the sweep records it",
    "grid": "grid search (not random: the trials are a grid's points)",
    "bayes": "Bayesian optimization (adaptive: not random search)",
}


def looks_like_export(path: Path) -> bool:
    """Whether a file's first line is the header of a W&B runs export (``Name``, ``State`` and W&B's own columns)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader([f.readline(1 << 20)]), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return {"Name", "State"} <= set(header) and bool({"Created", "Runtime", "Sweep", "User", "Tags"} & set(header))


def _created(cell: str, row: int, name: str) -> int:
    """``Created`` in ms since 1970 (UTC: W&B exports UTC, with or without a ``Z``)."""
    text = cell.strip()
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise DataError(f"{name}: row {row}: Created is {cell!r}, not a date and time (ISO 8601)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(round(when.timestamp() * 1000))


def read(path: Path, name: str, *, study: str | None, metric: str | None, reduce: str | None) -> tuple[Trials, ...]:
    """The export's sweeps (``study``: that one only) as :class:`Trials`, metric ``metric``."""
    check_size(path, name)
    with open(path, encoding="utf-8-sig", newline="") as f:
        header, rows = csv_rows(f, name)
    twice = repeated(header)
    if twice is not None:
        raise DataError(f"{name}: the column {twice!r} appears twice in the header: not an export W&B wrote")
    col = {c: i for i, c in enumerate(header)}
    records = [dict(zip(header, row)) for row in rows]
    id_col = next((c for c in ID_COLUMNS if c in col), None)
    if id_col is None and ({"_step", "training_iteration"} & set(col)):
        step = "_step" if "_step" in col else "training_iteration"
        raise DataError(
            f"{name}: a {step!r} column but no run id: rows are a run's steps (a history export?) and cannot be "
            f"told apart by run; export the runs table (one row per run), or add its ID column"
        )
    method_col = next((c for c in METHOD_COLUMNS if c in col), None)
    skip = META | set(METHOD_COLUMNS) | set(REPEAT_KEYS)
    check_numeric(records, metric, name)
    chosen = choose_metric(name, "the export", numeric_keys(records, skip), metric, None)
    groups: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        key = (record["Sweep"].strip() or NO_SWEEP) if "Sweep" in col else Path(name).stem
        groups.setdefault(key, []).append(i)
    if study is not None:
        if study not in groups:
            listed = ", ".join(repr(g) for g in list(groups)[:10])
            raise DataError(f"{name}: no sweep {study!r}; the export holds {listed or 'no runs'}")
        groups = {study: groups[study]}
    return tuple(
        _sweep(name, key, [records[i] for i in members], [i + 2 for i in members], chosen, id_col, method_col, reduce)
        for key, members in groups.items()
    )


def _sweep(
    name: str,
    sweep: str,
    records: list[dict],
    lines: list[int],
    metric: str,
    id_col: str | None,
    method_col: str | None,
    reduce: str | None,
) -> Trials:
    for record, line in zip(records, lines):
        if record["State"].strip().lower() not in STATES:
            raise DataError(f"{name}: row {line}: State is {record['State']!r}, not one of W&B's ({', '.join(STATES)})")
    runs: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        runs.setdefault(record[id_col].strip() if id_col else str(i), []).append(i)
    notes = []
    if id_col and any(len(m) > 1 for m in runs.values()):
        twice = next(k for k, m in runs.items() if len(m) > 1)
        if reduce is None:
            raise DataError(
                f"{name}: run {twice!r} is on {len(runs[twice])} rows ({id_col} repeats): a run is one trial; give "
                f"reduce=last|max|min|mean to make each run one score"
            )
        notes.append(reduce_note(metric, reduce, "", "row"))
    has_created = bool(records) and "Created" in records[0]
    values, states, order = [], [], []
    for rid, members in runs.items():
        if has_created:
            members = sorted(members, key=lambda i: _created(records[i]["Created"], lines[i], name))
        series = [math.nan if (v := number(records[i][metric])) is None else v for i in members]
        value = reduce_values(series, reduce or "last", None, name, f"run {rid}")
        last = records[members[-1]]
        states.append(STATES[last["State"].strip().lower()])
        values.append(value)
        order.append(_created(records[members[0]]["Created"], lines[members[0]], name) if has_created else 0)
    n = len(values)
    if has_created:
        # the UI lists the newest run first: a tie keeps the older file position, which is the later one
        rank = sorted(range(n), key=lambda i: (order[i], -i))
        order_by = "creation time (Created, ms since 1970, UTC)"
    else:
        rank = list(range(n))
        order = list(range(n))
        order_by = "row of the export (no Created column)"
        notes.append("no Created column: the file's order kept, and the W&B UI lists the newest run first")
    no_value = sum(1 for s, v in zip(states, values) if s == "complete" and math.isnan(v))
    if no_value:
        notes.append(f"{no_value} finished run{'s' if no_value != 1 else ''} without {metric!r}: no value")
    return Trials(
        name=sweep,
        metric=metric,
        direction=None,
        values=np.array([values[i] for i in rank], dtype=np.float64),
        states=tuple(states[i] for i in rank),
        order=np.array([order[i] for i in rank], dtype=np.int64),
        order_by=order_by,
        provenance=_provenance(sweep, records, method_col),
        notes=(state_note([states[i] for i in rank], "runs"), *notes),
    )


def _provenance(sweep: str, records: list[dict], method_col: str | None) -> tuple[str, ...]:
    if sweep == NO_SWEEP:
        return ("not recorded: runs outside a sweep; W&B records nothing of how they were chosen",)
    methods = sorted({r[method_col].strip() for r in records if r[method_col].strip()}) if method_col else []
    if not methods:
        return (
            f"sweep {sweep}: its method is not in the export (the sweep's config in W&B records it): not evidence of "
            f"random search",
        )
    return tuple(
        f"sweep method {m!r} (column {method_col}): {_METHODS.get(m, 'as the sweep records it')}" for m in methods
    )
