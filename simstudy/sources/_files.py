"""What the file-based readers share (Ray Tune, W&B, SMAC3, HpBandSter, Syne Tune): JSON and CSV read with the
standard library, every failure one line naming the file, a size checked before it is read, a metric chosen among
several, and a trial's repeated reports reduced to one score.

A trial that reports many times (a Ray Tune ``result.json`` line per training iteration, a Syne Tune row per
epoch, a SMAC config run on several seeds) is one trial: its reports are reduced by ``reduce=`` (:data:`REDUCES`)
or refused in one line, never counted as trials.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from simstudy._limits import MEMORY_ENV, memory_limit, size
from simstudy.score_files import DataError

#: How a trial's several reports become its one score: its ``last`` report, its ``best`` (by the direction), the
#: ``max`` or ``min``, or the ``mean`` (SMAC's own aggregate of a configuration's runs over instances and seeds).
REDUCES = ("last", "best", "max", "min", "mean")
#: Peak bytes held per byte of a JSON or CSV file read whole: Python's objects for its numbers and strings.
FILE_COST = 10
#: Columns or keys whose repeats mean a trial is reported on several rows (its id, or a step within it).
REPEAT_KEYS = ("trial_id", "run_id", "training_iteration", "_step")


def reduce_iv(reduce: str | None) -> str | None:
    """``reduce`` checked: None or one of :data:`REDUCES`, else a ValueError naming it."""
    if reduce is not None and reduce not in REDUCES:
        raise ValueError(f"reduce must be one of {', '.join(REDUCES)} (or None), got {reduce!r}")
    return reduce


def check_size(path: Path, name: str, nbytes: int | None = None, cost: int = FILE_COST) -> None:
    """Refuse, before reading it, a file whose content (``nbytes``, its size by default) would exceed the limit."""
    nbytes = os.path.getsize(path) if nbytes is None else nbytes
    need = nbytes * cost
    if need > memory_limit():
        raise DataError(
            f"{name}: {nbytes:,} bytes; read it would take about {size(need)}, over the memory limit of "
            f"{size(memory_limit())}: raise {MEMORY_ENV}"
        )


def load_json(path: Path, name: str) -> Any:
    """The JSON document in ``path`` (its size checked first); one line if it is not valid JSON (truncated?)."""
    check_size(path, name)
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # nested past the parser's depth too
        raise DataError(f"{name}: not valid JSON ({exc}): a truncated copy? copy it again") from None
    except OSError as exc:
        raise DataError(f"{name}: cannot read: {exc.strerror}") from None


def json_lines(path: Path, name: str, notes: list[str]) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each line of a JSON-lines file; a last line cut short is noted and left out.

    A framework appends a line per report: a last line cut short (a write in progress, a copy cut short: not valid
    JSON) is left out with a note, as Optuna's journal is read; a bad line before the last is an error naming it.
    """
    check_size(path, name)
    pending: tuple[int, str] | None = None
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if pending is not None:
                raise DataError(f"{name}: line {pending[0]}: {pending[1]}; each line must be one JSON value")
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                pending = (number, f"not valid JSON ({exc})")
                continue
            yield number, value  # a last line without its end of line but whole (an edited file) is kept
    if pending is not None:
        notes.append(f"{name}: its last line ({pending[0]}) is incomplete (a write in progress?): left out")


def csv_rows(text: str | io.TextIOBase, name: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV text; a row of another length than the header is one line naming it."""
    stream = io.StringIO(text) if isinstance(text, str) else text
    try:
        reader = csv.reader(stream)
        header = next(reader, None)
        if header is None:
            raise DataError(f"{name}: an empty CSV file (no header)")
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise DataError(
                    f"{name}: row {reader.line_num}: {len(row)} fields, the header has {len(header)}: a truncated "
                    f"or hand-edited export?"
                )
            rows.append(row)
    except csv.Error as exc:
        raise DataError(f"{name}: not a readable CSV file ({exc})") from None
    return header, rows


def number(cell: Any) -> float | None:
    """A CSV cell or JSON value as a float (``inf``, ``nan`` as written), None when empty or not a number."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        return float(cell)
    text = str(cell).strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def numeric_keys(records: Iterable[dict], exclude: Iterable[str]) -> list[str]:
    """The keys whose values are numbers in some record and never text, in order of appearance, ``exclude`` out."""
    skip = set(exclude)
    status: dict[str, bool | None] = {}  # True: a number seen; False: only empty cells so far; None: text seen
    for record in records:
        for key, value in record.items():
            if key in skip or isinstance(value, (dict, list)):
                continue
            if value is None or (isinstance(value, str) and not value.strip()):
                status.setdefault(key, False)
            elif number(value) is None:
                status[key] = None
            elif status.get(key, False) is not None:
                status[key] = True
    return [k for k, v in status.items() if v]


def check_numeric(records: Sequence[dict], metric: str | None, name: str) -> None:
    """Refuse a metric column with text in it (a CSV mixing metrics, or notes), naming the first such row."""
    if metric is None:
        return
    for row, record in enumerate(records, 2):  # row 1 is the header
        cell = record.get(metric)
        if isinstance(cell, str) and cell.strip() and number(cell) is None:
            raise DataError(
                f"{name}: row {row}: {metric!r} is {cell!r:.40}, not a number: a column mixing metrics and text? "
                f"choose a numeric column with metric=NAME"
            )


def choose_metric(name: str, where: str, candidates: Sequence[str], metric: str | None, recorded: str | None) -> str:
    """The metric to read: ``metric`` if given (one line if absent), else ``recorded``, else the only candidate."""
    listed = ", ".join(repr(c) for c in candidates[:12]) + (" ..." if len(candidates) > 12 else "")
    if metric is not None:
        if metric not in candidates:
            raise DataError(f"{name}: {where}: no numeric metric {metric!r}; its metrics are {listed or 'none'}")
        return metric
    if recorded is not None:
        if recorded not in candidates:  # a metric named in metadata but never reported: no trial has a value
            raise DataError(
                f"{name}: {where}: the metric {recorded!r} its metadata names is never reported as a number; its "
                f"metrics are {listed or 'none'}: choose one with metric=NAME"
            )
        return recorded
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise DataError(f"{name}: {where}: no numeric metric reported")
    raise DataError(f"{name}: {where} reports several numeric metrics ({listed}): choose one with metric=NAME")


def reduce_values(values: Sequence[float], how: str, direction: str | None, name: str, where: str) -> float:
    """One score from a trial's reports in order (NaN: a report without the metric), reduced as ``how`` says."""
    present = [v for v in values if not math.isnan(v)]
    if not present:
        return math.nan
    if how == "best":
        if direction is None:
            raise DataError(
                f"{name}: {where}: reduce=best needs the metric's direction, which the source does not record: "
                f"give reduce=max or reduce=min"
            )
        how = "max" if direction == "maximize" else "min"
    if how == "last":
        return present[-1]
    if how == "max":
        return max(present)
    if how == "min":
        return min(present)
    return math.fsum(present) / len(present)


def reduce_note(metric: str, how: str, default: str, unit: str = "report") -> str:
    """The note saying how a trial's reports became one score, and the default."""
    said = f"reduce={how}" + (", the default" if how == default else "")
    return f"one score per trial: the {how} of its {unit}s of {metric!r} ({said}; reduce=last|best|max|min|mean)"


def repeated(values: Sequence[Any]) -> Any | None:
    """The first value that occurs twice in ``values`` (None if all are distinct)."""
    seen: set[Any] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None
