"""Reading a researcher's own score files: :func:`load_scores`, :func:`read_scores` (CSV, TSV, JSON Lines, JSON).

Every loader returns float64 arrays of scores in file order and raises :class:`DataError` with a one-line
message naming the file, the row and the offending value. No score is lost silently: a header-less column
keeps its first line, a row of the wrong width is an error, and a failed run's missing score is an error
unless the caller asks to drop or replace it (then counted, and warned about with :class:`DataWarning`).
Files are checked column by column (vectorized); :func:`score` words the message for a bad value. The shipped
data sets, read the same way, are in :mod:`simstudy.datasets` (which re-exports these names).

=====================  ===========================================================================
name                   what it is
=====================  ===========================================================================
:func:`load_scores`    every model's scores of a file (failed runs dropped or replaced, with a warning)
:func:`read_scores`    the same, with what was read: a :class:`ScoreFile`
:class:`DataError`     a file that cannot be read as scores (one line: file, row, value)
:class:`DataWarning`   failed runs dropped or replaced, or scored as the best
=====================  ===========================================================================
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import re
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

__all__ = ["DataError", "DataWarning", "ScoreFile", "read_scores", "load_scores", "SUFFIXES"]

SUFFIXES = (".csv", ".json", ".jsonl", ".tsv")
# a failed run's score, as spreadsheets, pandas and R write it (compared lower-cased and stripped)
_MISSING_TOKENS = frozenset({"", "nan", "-nan", "na", "n/a", "null", "none"})
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_COMMA_NUMBER = re.compile(r"[+-]?\d+(,\d+)?")
_OK, _MISSING, _BAD, _ABSENT_KIND = 0, 1, 2, 3  # kinds of raw value
_ABSENT = object()  # the value of a column a JSON record lacks
# Peak memory to read a file, per byte of it: the decoded text, its lines and their fields are Python strings
# (about 50 bytes each beyond their characters, for fields of about 8): measured 37 for a two-column CSV, 13 for
# one column
_TEXT_COST = 40


class DataError(ValueError):
    """Invalid score data. The message is one line naming the file, the row and the offending value.

    Raised by :func:`read_scores`, :func:`load_scores` and the shipped-data loaders for a file that is
    missing, unreadable or malformed, or a value that is not a valid score; a :class:`ValueError`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "runs.csv"
    ...     _ = path.write_text("model,score\\na,0.71\\na,high\\nb,0.64\\n")
    ...     read_scores(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    simstudy.score_files.DataError: .../runs.csv: row 3: score is not a number: 'high'
    """


class DataWarning(UserWarning):
    """Missing scores (failed runs) were dropped or replaced, as asked; the message counts them per model.

    Issued once per file by :func:`load_scores` (the CLI logs it), so that no score is lost silently.

    Examples
    --------
    >>> import pathlib, tempfile, warnings
    >>> with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     path = pathlib.Path(tmp) / "runs.csv"
    ...     _ = path.write_text("model,score\\na,0.71\\na,\\na,0.75\\nb,0.64\\nb,0.66\\n")
    ...     scores = load_scores(path, missing="drop")
    >>> [(w.category.__name__, str(w.message).split(": ", 1)[1]) for w in caught]
    [('DataWarning', 'dropped 1 missing score (model a: 1)')]
    """


@dataclass(frozen=True)
class ScoreFile:
    """Scores read from a researcher's file (:func:`read_scores`), with what was done to failed runs.

    Parameters
    ----------
    path : str
        The file, as named in messages.
    scores : dict of str to numpy.ndarray
        Model name -> float64 1-D array of its scores (after `scale`), in file order.
    dropped : dict of str to int
        Model name -> missing scores left out (``missing="drop"``); only models that had some.
    replaced : dict of str to int
        Model name -> missing scores replaced by the ``missing`` number; only models that had some.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "runs.csv"
    ...     _ = path.write_text("model,score\\na,0.71\\na,\\na,0.75\\nb,0.64\\nb,0.66\\n")
    ...     result = read_scores(path, missing=0.0)
    >>> result.scores
    {'a': array([0.71, 0.  , 0.75]), 'b': array([0.64, 0.66])}
    >>> result.dropped, result.replaced
    ({}, {'a': 1})
    """

    path: str
    scores: dict[str, np.ndarray]
    dropped: dict[str, int]
    replaced: dict[str, int]


def choice_iv(what: str, value: Any, valid: Iterable[str]) -> str:
    valid = sorted(valid)
    if not isinstance(value, str) or value not in valid:
        raise ValueError(f"unknown {what} {value!r}; choose one of: {', '.join(valid)}")
    return value


def _path_iv(path: str | os.PathLike) -> Path:
    path = Path(path).expanduser()
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(
            f"{path}: unknown file type {path.suffix!r}; supported: score files ({', '.join(SUFFIXES)}) and the "
            f"tuning sources of `simstudy sources --help` (Optuna, MLflow, Ray Tune, W&B, SMAC3, HpBandSter, Syne "
            f"Tune), which this file is not"
        )
    try:  # a FIFO or a device would block the read or never end: refused before it is opened
        mode = path.stat().st_mode
    except OSError:
        return path  # missing or unreadable: the read says which, in one line
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a directory fails at once on reading, and says so
        what = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise DataError(f"{path}: {what}; give a score file (a regular file) instead")
    return path


def _support_iv(low: float, high: float, min_scores: int) -> tuple[float, float, int]:
    low, high = float(low), float(high)
    if not low <= high:  # also rejects NaN
        raise ValueError(f"need low <= high, got low={low}, high={high}")
    if isinstance(min_scores, bool) or not isinstance(min_scores, (int, np.integer)) or min_scores < 1:
        raise ValueError(f"min_scores must be an integer >= 1, got {min_scores!r}")
    return low, high, int(min_scores)


def _read_scores_iv(
    path: str | os.PathLike, low: float, high: float, min_scores: int, missing: Any, scale: Any
) -> tuple[Path, float, float, int, str | float, float]:
    path = _path_iv(path)
    low, high, min_scores = _support_iv(low, high, min_scores)
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float, np.integer, np.floating))
        or not (math.isfinite(scale) and scale > 0)
    ):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if isinstance(missing, str):
        if missing.strip().lower() in ("error", "drop"):
            return path, low, high, min_scores, missing.strip().lower(), float(scale)
        try:  # a command line hands over "0" as a string
            missing = float(missing)
        except ValueError:
            raise ValueError(f"missing must be 'error', 'drop' or a number, got {missing!r}") from None
    if isinstance(missing, bool) or not isinstance(missing, (int, float, np.integer, np.floating)):
        raise ValueError(f"missing must be 'error', 'drop' or a number, got {missing!r}")
    if not (math.isfinite(missing) and low <= missing <= high):
        # the number stands in for a score as used, so it is checked as scores are: after scale
        raise ValueError(
            f"missing={missing!r} is outside the support [{low:g}, {high:g}]; "
            f"it replaces failed runs' scores, so it must lie within it"
        )
    return path, low, high, min_scores, float(missing), float(scale)


def _float(text: str) -> float:
    """``float(text)``, except that an underscore is refused: Python reads ``1_0`` as 10, a file means no number."""
    if "_" in text:
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def score(
    raw: Any, name: str, where: str, label: str, low: float, high: float, *, scale: float = 1.0, hint: str = ""
) -> float:
    """Turn one raw value (a CSV string or a JSON value) into ``scale * value`` in [low, high], or raise."""
    # bool is an int subclass, and float(True) == 1.0 would silently pass; None/lists are not scores either
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise DataError(f"{name}: {where}: {label} is not a number: {raw!r}")
    try:
        x = _float(raw) if isinstance(raw, str) else float(raw)
    except (ValueError, OverflowError):  # OverflowError: a JSON integer too large for a float
        if isinstance(raw, str) and _DECIMAL_COMMA.fullmatch(raw.strip()):
            raise DataError(
                f"{name}: {where}: {label} {raw.strip()!r} uses a decimal comma: save the file with decimal points"
            ) from None
        raise DataError(f"{name}: {where}: {label} is not a number: {raw!r}") from None
    shown = raw.strip() if isinstance(raw, str) else repr(raw)
    if not math.isfinite(x):
        raise DataError(f"{name}: {where}: {label} {shown} is not finite")
    y = x * scale
    if not low <= y <= high:
        scaled = f" (times scale={scale:g}: {y:g})" if scale != 1 else ""
        raise DataError(f"{name}: {where}: {label} {shown}{scaled} is outside the support [{low:g}, {high:g}]{hint}")
    return y


# -- reading files into tables --------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A file's rows, column by column: ``cells(column)`` lists the raw values in file order (strings for
    CSV/TSV; JSON values for JSON, or _ABSENT where a record lacks the key); ``where(i)`` names row i."""

    columns: list[str]
    size: int
    cells: Callable[[str], list]
    where: Callable[[int], str]
    delimiter: str | None = None  # CSV/TSV only
    headerless: bool = False


def _size_iv(source: Any, name: str) -> None:
    """Refuse a file whose text would not fit in memory, from its size alone and before a byte is read."""
    from simstudy._limits import MEMORY_ENV, memory_limit

    try:
        size = os.stat(source).st_size
    except (OSError, TypeError):  # missing (the read says so) or a Traversable inside a package (shipped, small)
        return
    limit = memory_limit()
    if size * _TEXT_COST > limit:
        raise DataError(
            f"{name}: {size:,} bytes; read as text it would take about {_TEXT_COST} times that, over the memory "
            f"limit of {limit / 1e9:g} GB (files up to {limit / _TEXT_COST / 1e9:g} GB): give a smaller file "
            f"(a score file holds one line per run) or raise {MEMORY_ENV}"
        )


def records(source: Any, name: str) -> Table:
    """Read a file (a Path or an importlib Traversable) into a :class:`Table`."""
    suffix = PurePath(source.name).suffix.lower()
    _size_iv(source, name)
    try:  # -sig: spreadsheet exports often start with a BOM; text mode turns CRLF into LF
        text = source.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{name}: cannot read: {exc}") from None
    if not text.strip():
        raise DataError(f"{name}: file is empty")
    if suffix in (".csv", ".tsv"):
        return _csv_table(text, name, suffix)
    if suffix == ".jsonl":
        records, wheres = [], []
        for i, line in enumerate(text.split("\n"), 1):  # not splitlines(): JSON strings may hold U+2028
            if line.strip():
                records.append(_json(line, name, f"row {i}"))
                wheres.append(f"row {i}")
        return _records_table(records, wheres)
    obj = _json(text, name, None)
    if isinstance(obj, dict):  # {model: [scores]}: flatten to the same (model, score) rows as a table
        cells: dict[str, list] = {"model": [], "score": []}
        wheres = []
        for model, values in obj.items():
            if not isinstance(values, list):
                raise DataError(f"{name}: item [{model!r}]: expected a list of scores, got {values!r:.60}")
            cells["model"] += [model] * len(values)
            cells["score"] += values
            wheres += [f"item [{model!r}][{j}]" for j in range(len(values))]
        return Table(["model", "score"], len(wheres), cells.__getitem__, wheres.__getitem__)
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise DataError(f"{name}: expected an object of model -> scores or a list of objects, got {obj!r:.60}")
    return _records_table(obj, [f"item [{j}]" for j in range(len(obj))])


def _records_table(records: list[dict], wheres: list[str]) -> Table:
    columns = list(dict.fromkeys(k for r in records for k in r))
    return Table(columns, len(records), lambda c: [r.get(c, _ABSENT) for r in records], wheres.__getitem__)


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) < len(pairs):  # json.loads would silently keep the last value of a repeated key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _json(text: str, name: str, where: str | None) -> Any:
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: {where or f'row {exc.lineno}'}: not valid JSON ({exc.msg})") from None
    except RecursionError:  # the C decoder stops at the recursion limit, at once and without building more
        raise DataError(
            f"{name}: {where + ': ' if where else ''}JSON nested deeper than {sys.getrecursionlimit()} levels; a "
            f"score file is a list of records or an object of model -> scores"
        ) from None
    except _DuplicateKey as exc:
        raise DataError(
            f"{name}: {where + ': ' if where else ''}duplicate key {exc.args[0]!r} "
            f"(a JSON reader keeps only its last value): merge or rename them"
        ) from None
    if where is not None and not isinstance(obj, dict):  # a JSONL line must be an object
        raise DataError(f"{name}: {where}: expected a JSON object, got {obj!r:.60}")
    return obj


def _delimiter(lines: list[str], suffix: str) -> str:
    """The field delimiter, whatever the suffix says: the candidate found equally often, and at least once, on
    each of the first non-blank lines (the suffix's own first); else the most frequent on the first line."""
    order = ("\t", ";", ",") if suffix == ".tsv" else (",", "\t", ";")
    sample = list(itertools.islice((line for line in lines if line.strip()), 20))
    for d in order:
        counts = {line.count(d) for line in sample}
        if len(counts) == 1 and 0 not in counts:
            return d
    return max(order, key=sample[0].count)  # max keeps the first of ties: the suffix's delimiter if none


def _is_number(field: str) -> bool:
    try:
        _float(field)
    except ValueError:
        return False
    return True


def _looks_like_score(field: str) -> bool:
    """Whether the only field of a first line is a score (or a failed run's), so the file has no header."""
    return _is_number(field) or field.lower() in _MISSING_TOKENS


def _clip(line: str) -> str:
    return repr(line if len(line) <= 60 else line[:57] + "...")


def _single_column(first: Sequence[str], others: list[Sequence[str]]) -> bool:
    """Whether a table's first non-blank row and its other non-blank rows make one column (an empty last field
    on the first row or on every other row being a trailing delimiter)."""
    width = len(first) - (len(first) > 1 and not first[-1].strip())
    return width == 1 and all(len(r) == 1 or (len(r) == 2 and not r[-1].strip()) for r in others)


def _csv_table(text: str, name: str, suffix: str) -> Table:
    lines = text.split("\n")
    delimiter = _delimiter(lines, suffix)
    if delimiter not in text and '"' not in text:
        # one unquoted column: its lines are its fields; no list per row makes a million rows load 5x faster.
        # A blank line among the scores is a failed run's empty field (pandas writes NaN so), read under the
        # missing= rule; blank lines after the last score (or before a header) are not data.
        content = [i for i, line in enumerate(lines) if line.strip()]
        headerless = _looks_like_score(lines[content[0]].strip())
        start = 0 if headerless else content[0] + 1
        numbers: Sequence[int] = range(start + 1, content[-1] + 2)
        fields = lines[start : content[-1] + 1]
        header = ["score" if headerless else lines[content[0]].strip()]
        return Table(
            header,
            len(fields),
            lambda c: fields,
            lambda i: f"row {numbers[i]}",
            delimiter=delimiter,
            headerless=headerless,
        )
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        rows: Sequence[Sequence[str]] = list(reader)
        if reader.line_num == len(rows):  # one row per line: row i is on line i + 1
            numbers = range(1, len(rows) + 1)
        else:  # a quoted field spans lines: read again, noting each row's line
            reader = csv.reader(lines, delimiter=delimiter)
            rows, numbers = zip(*((row, reader.line_num) for row in reader))
    except csv.Error as exc:
        raise DataError(f"{name}: row {reader.line_num + 1}: cannot parse: {exc}") from None
    # numbers: each row's 1-based line in the file, for messages
    content = [i for i, row in enumerate(rows) if "".join(row).strip()]
    if not content:
        raise DataError(f"{name}: no scores")
    if _single_column(rows[content[0]], [rows[i] for i in content[1:]]):
        # one column: a blank line or "" among the scores is a failed run's empty field (pandas writes NaN as
        # ""), read under the missing= rule; blank lines after the last score (or before a header) are not data
        first = 0 if _looks_like_score(rows[content[0]][0].strip()) else content[0]
        keep: Sequence[int] = range(first, content[-1] + 1)
    else:  # several columns: skip blank lines and rows of empty fields (spreadsheet padding; no model)
        keep = content
    rows, numbers = [rows[i] or [""] for i in keep], [numbers[i] for i in keep]
    header = [field.strip() for field in rows[0]]
    # an empty last field on the header or on every data row is a trailing delimiter, not a column
    trailing = len(header) > 1 and header[-1] == ""
    if trailing:
        header.pop()
    else:
        trailing = len(rows) > 1 and all(
            (len(r) == len(header) + 1 and not r[-1].strip()) or not "".join(r).strip() for r in rows[1:]
        )
    width = len(header)
    headerless = width == 1 and _looks_like_score(header[0])
    if headerless:  # a lone column whose first line is a score: that line is data too, not a header
        header = ["score"]
    else:
        if width > 1 and any(_is_number(field) for field in header):
            raise DataError(
                f"{name}: row {numbers[0]}: the first row looks like data, not a header "
                f"({_clip(lines[numbers[0] - 1])}): add a header line `model{delimiter}score`"
            )
        rows, numbers = rows[1:], numbers[1:]
    if any(len(r) != width for r in rows):  # only files with odd rows take this loop
        for i, r in enumerate(rows):
            if trailing and len(r) == width + 1 and not r[-1].strip():
                rows[i] = r[:width]
            elif len(r) != width:
                if width == 1 and delimiter == "," and _DECIMAL_COMMA.fullmatch(",".join(r).strip()):
                    raise DataError(
                        f"{name}: row {numbers[i]}: {header[0]} {','.join(r).strip()!r} uses a "
                        f"decimal comma: save the file with decimal points"
                    )
                shape = "the first row has" if headerless else "the header has"
                raise DataError(
                    f"{name}: row {numbers[i]}: {len(r)} field{'s' * (len(r) != 1)}, but {shape} "
                    f"{width} ({', '.join(header)}): {_clip(lines[numbers[i] - 1])}"
                )
    columns = list(zip(*rows)) if rows else [() for _ in header]
    return Table(
        header,
        len(rows),
        lambda c: list(columns[header.index(c)]),
        lambda i: f"row {numbers[i]}",
        delimiter=delimiter,
        headerless=headerless,
    )


# -- from a table to validated scores -------------------------------------------------------------------


def _value(raw: Any) -> tuple[float, int]:
    """(value, kind) of a raw value; kind: _OK, _MISSING (a failed run), _BAD (not a number) or _ABSENT."""
    if isinstance(raw, str):
        if raw.strip().lower() in _MISSING_TOKENS:
            return math.nan, _MISSING
        try:
            x = _float(raw)
        except ValueError:
            return math.nan, _BAD
    elif raw is None:
        return math.nan, _MISSING
    elif raw is _ABSENT:
        return math.nan, _ABSENT_KIND
    elif isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return math.nan, _BAD
    else:
        try:
            x = float(raw)
        except OverflowError:
            return math.nan, _BAD
    return x, _MISSING if math.isnan(x) else _OK


def _parse(raw: list, delimiter: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Values (NaN where not a score) and kinds of a column's raw values."""
    # CSV strings: numpy parses them as float() does, ten times faster (and as float() reads 1_0 as 10)
    if delimiter is not None and "_" not in "".join(raw):
        try:
            x = np.array(raw, dtype=np.float64)
            return x, np.where(np.isnan(x), _MISSING, _OK).astype(np.int8)
        except ValueError:
            pass
    pairs = [_value(v) for v in raw]
    x = np.fromiter((p[0] for p in pairs), np.float64, len(pairs))
    kind = np.fromiter((p[1] for p in pairs), np.int8, len(pairs))
    if delimiter in (";", "\t") and np.any(kind == _BAD):
        # decimal commas are unambiguous when commas do not separate fields and every score is written so
        idx = np.flatnonzero(kind != _MISSING)
        fields = [raw[i].strip() for i in idx]
        if all(_COMMA_NUMBER.fullmatch(f) for f in fields):
            x[idx] = [float(f.replace(",", ".")) for f in fields]
            kind[idx] = _OK
    return x, kind


def _match(columns: list[str], want: str, name: str) -> str | None:
    """The column named `want`, ignoring case and surrounding spaces (an exact match wins)."""
    if columns.count(want) == 1:
        return want
    found = [c for c in columns if c.strip().casefold() == want.strip().casefold()]
    if len(found) > 1:
        raise DataError(f"{name}: several columns match {want!r} ({', '.join(map(repr, found))}): rename all but one")
    return found[0] if found else None


def _numeric_columns(table: Table) -> tuple[list[str], list[str]]:
    """Columns whose first 50 values are numbers (or missing), and those of them holding a fraction."""
    numeric, fractional = [], []
    for c in table.columns:
        x, kind = _parse(table.cells(c)[:50], None)
        if np.any(kind == _OK) and np.all((kind == _OK) | (kind == _MISSING)):
            numeric.append(c)
            if np.any(x[kind == _OK] % 1 != 0):
                fractional.append(c)
    return numeric, fractional


def _columns_iv(table: Table, score_column: str | None, model_column: str | None, name: str) -> tuple[str, str | None]:
    columns = table.columns
    listing = f"(columns: {', '.join(columns)})"
    score: str | None
    if len(columns) == 1 and score_column is None:
        score = columns[0]
    elif table.headerless:  # its one column has no name to match: score_column= names nothing in it
        raise DataError(
            f"{name}: missing column {score_column!r}: the file has no header (its first line is a score), so "
            f"its one column is the scores: leave out score_column= or add a header line"
        )
    else:
        score = _match(columns, want := score_column or "score", name)
        if score is None:
            model = _match(columns, model_column or "model", name)
            # a column with fractions is likelier the score than one of integers (seeds, run ids)
            numeric, fractional = _numeric_columns(table)
            candidates = [c for c in fractional or numeric if c != model]
            fix = (
                f"pass score_column={candidates[0]}"
                if len(candidates) == 1
                else (
                    "several columns could be the score: pass " + " or ".join(f"score_column={c}" for c in candidates)
                )
                if candidates
                else "pass score_column=<the column of scores>"
            )
            raise DataError(f"{name}: missing column {want!r} {listing}: {fix}")
    if model_column is None:
        model = _match(columns, "model", name)
        model = None if model == score else model
    else:
        model = _match(columns, model_column, name)
        if model is None:
            numeric = _numeric_columns(table)[0]
            candidates = [c for c in columns if c not in numeric and c != score]
            fix = candidates[0] if len(candidates) == 1 else "<the column naming the models>"
            raise DataError(f"{name}: missing column {model_column!r} {listing}: pass model_column={fix}")
    return score, model


def _spellings_iv(models: list, keys: list[str], table: Table, name: str) -> None:
    """Refuse two spellings of a CSV model name that differ only in surrounding spaces (``a`` and ``a ``): read
    as padding they would merge into one model without a word, though they may be two (JSON keeps them apart).
    One spelling used throughout (``a `` everywhere) is padding, and read as ``a``."""
    import pandas as pd  # imported on use: half a second, and only a file with models needs it

    codes, spellings = pd.factorize(np.asarray(models, dtype=object))
    if len(spellings) == len(set(keys)):
        return
    first = np.unique(codes, return_index=True)[1]  # each spelling's first row (codes number them in file order)
    seen: dict[str, int] = {}
    for code, spelling in enumerate(spellings):
        key = str(spelling).strip()
        if not key:  # no name at all: the missing-model check says so
            continue
        if key in seen:
            a = seen[key]
            raise DataError(
                f"{name}: models {spellings[a]!r} ({table.where(int(first[a]))}) and {spelling!r} "
                f"({table.where(int(first[code]))}) differ only in surrounding spaces: spell them alike if they "
                f"are one model, or rename one if they are two"
            )
        seen[key] = code


def table_scores(
    table: Table,
    name: str,
    *,
    score_column: str | None,
    model_column: str | None,
    default_model: str,
    low: float,
    high: float,
    min_scores: int,
    missing: str | float = "error",
    scale: float = 1.0,
    minimize: bool = False,
) -> ScoreFile:
    """Pick the score and model columns, validate every score and group them by model, in file order."""
    import pandas as pd  # imported on use: half a second, and only a file with models needs it

    if not table.size:
        raise DataError(f"{name}: no scores")
    score_column, model_column = _columns_iv(table, score_column, model_column, name)
    raw = table.cells(score_column)
    x, kind = _parse(raw, table.delimiter)
    x = x * scale
    missed = kind == _MISSING
    bad = ~((kind == _OK) & np.isfinite(x) & (x >= low) & (x <= high))
    if missing != "error":
        bad &= ~missed
    if model_column is None:
        keys = None
    else:
        models = table.cells(model_column)
        # A CSV field's spaces are padding ("mlp " is "mlp"); a JSON name is quoted, so "a" and "a " are two models
        exact = table.delimiter is None
        keys = ["" if m is None or m is _ABSENT else str(m) if exact else str(m).strip() for m in models]
        if not exact:
            _spellings_iv(models, keys, table, name)
        bad |= np.fromiter((not k.strip() for k in keys), bool, len(keys))
    if bad.any():
        i = int(np.argmax(bad))  # the first bad row in the file
        where = table.where(i)
        if keys is not None and not keys[i].strip():
            if models[i] is _ABSENT:
                raise DataError(f"{name}: {where}: missing {model_column!r}")
            raise DataError(f"{name}: {where}: {model_column} is missing: {models[i]!r}")
        if kind[i] == _ABSENT_KIND:
            raise DataError(f"{name}: {where}: missing {score_column!r}")
        if kind[i] == _MISSING:
            shown = "null" if raw[i] is None else "NaN" if isinstance(raw[i], float) else raw[i].strip()
            # a failed run scores the worst: 0 (within the support) for an accuracy, the upper bound for a loss
            worst = min(max(0.0, low), high) if not minimize else high if math.isfinite(high) else None
            instead = (
                f" or missing={worst:g} to score them {worst:g}{', the worst loss' * minimize}"
                if worst is not None
                else " (or give high= and score them that: a failed run's loss is the worst)"
            )
            raise DataError(
                f"{name}: {where}: {score_column}{' ' * bool(shown)}{shown} is missing "
                f"(a failed run?): pass missing=drop to leave such runs out{instead}"
            )
        finite = x[(kind == _OK) & np.isfinite(x)]
        percent = (
            not minimize  # losses and perplexities above 1 are the rule, not percentages
            and scale == 1
            and high <= 1
            and finite.size
            and finite.min() >= 0
            and finite.max() <= 100
            and np.mean(finite > 1) >= 0.5
        )
        if percent:
            hint = "; these look like percentages: pass scale=0.01 (or high=100)"
        elif finite.size and np.mean((finite < low) | (finite > high)) > 0.5:
            # most scores outside: the bounds are wrong, not the scores (one outlier is a data error, said alone)
            hint = (
                f"; the scores lie in [{finite.min():g}, {finite.max():g}]: pass low= and high= bounds that hold them"
            )
        else:
            hint = ""
        score(raw[i], name, where, score_column, low, high, scale=scale, hint=hint)
        raise AssertionError(f"{name}: {where}: failed validation but score accepted {raw[i]!r}")
    if missing not in ("error", "drop"):
        x[missed] = missing
    codes, names = (
        (np.zeros(len(x), np.intp), [default_model]) if keys is None else pd.factorize(np.asarray(keys, dtype=object))
    )
    order = np.argsort(codes, kind="stable")  # rows grouped by model, each group in file order
    ends = np.cumsum(np.bincount(codes, minlength=len(names)))
    scores, dropped, replaced = {}, {}, {}
    for model, rows in zip(names, np.split(order, ends[:-1])):
        n_missed = int(np.count_nonzero(missed[rows]))
        if missing == "drop":
            rows = rows[~missed[rows]]
            dropped.update({model: n_missed} if n_missed else {})
        elif n_missed:
            replaced[model] = n_missed
        if rows.size < min_scores:
            after = f" after dropping {n_missed} missing" if missing == "drop" and n_missed else ""
            raise DataError(
                f"{name}: model {model!r} has {rows.size} score{'s' * (rows.size != 1)}{after}; "
                f"at least {min_scores} are needed"
            )
        scores[str(model)] = x[rows]
    return ScoreFile(name, scores, dropped, replaced)


def read_scores(
    path: str | os.PathLike,
    *,
    score_column: str | None = None,
    model_column: str | None = None,
    low: float = -np.inf,
    high: float = np.inf,
    min_scores: int = 2,
    missing: str | float = "error",
    scale: float = 1.0,
    minimize: bool = False,
) -> ScoreFile:
    """Read and validate scores from a researcher's own file, reporting what was done to failed runs.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv`` or ``.tsv`` table (delimiter ``,``, ``;`` or tab, whatever the suffix; a header line unless
        the file is a single column of numbers), a ``.jsonl`` (one JSON object per line) or ``.json`` file (an
        object mapping model -> list of scores, or a list of objects). A byte-order mark, CRLF line ends,
        spaces around fields and an empty last field on every line are all fine.
    score_column : str, optional
        Column of scores, matched ignoring case and surrounding spaces. Default: the only column, else
        ``score``.
    model_column : str, optional
        Column of model names (matched likewise). Default: ``model`` if present, else one model named after
        the file stem. A CSV/TSV name's surrounding spaces are padding when it is spelled one way throughout
        (``a `` everywhere is ``a``); two spellings that differ only in spaces are refused. A JSON name is
        taken exactly.
    low, high : float
        Support of the scores in score units (after `scale`); default ``-inf`` and ``inf`` (no bound).
    min_scores : int
        Fewest scores a model may have (after dropping missing ones), ``>= 1``; default 2.
    missing : {"error", "drop"} or float
        What to do with a missing score (empty, ``nan``, ``NA``, ``n/a``, ``null``, ``None``; in a one-column
        CSV/TSV also a blank line among the scores, though not one after the last; a failed run): raise, leave
        it out, or use this number instead (in ``[low, high]``; a numeric string is accepted). Default
        ``"error"``.
    scale : float
        Positive factor every score is multiplied by, e.g. 0.01 for percentages; default 1.0.
    minimize : bool
        Whether lower scores are better (losses); default False. It only words the advice of a message: a
        failed run's score to use is the worst, `high` for a loss.

    Returns
    -------
    ScoreFile
        Scores by model (float64 1-D arrays in file order), and per model the missing scores dropped or
        replaced.

    Raises
    ------
    DataError
        Missing, unreadable, empty or unknown type of file, or one too large to read within
        :func:`simstudy._limits.memory_limit`; missing column (or `score_column` for a file without a header);
        model names that differ only in surrounding spaces; a row with the wrong number of fields; a repeated
        JSON key; a missing score when ``missing="error"``; a value that is not a finite
        number in ``[low, high]`` after scaling; a model with fewer than `min_scores` scores.
    ValueError
        Invalid `low`, `high`, `min_scores`, `missing` or `scale`.

    Examples
    --------
    A semicolon-separated file with decimal commas, percentages and a failed run:

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "runs.csv"
    ...     _ = path.write_text("model;acc\\na;71,5\\na;NA\\nb;64\\nb;69,25\\na;75\\n")
    ...     runs = read_scores(path, score_column="acc", missing="drop", scale=0.01, low=0, high=1)
    >>> runs.scores
    {'a': array([0.715, 0.75 ]), 'b': array([0.64  , 0.6925])}
    >>> runs.dropped
    {'a': 1}
    """
    path, low, high, min_scores, missing, scale = _read_scores_iv(path, low, high, min_scores, missing, scale)
    return table_scores(
        records(path, str(path)),
        str(path),
        score_column=score_column,
        model_column=model_column,
        default_model=path.stem,
        low=low,
        high=high,
        min_scores=min_scores,
        missing=missing,
        scale=scale,
        minimize=bool(minimize),
    )


def load_scores(
    path: str | os.PathLike,
    *,
    score_column: str | None = None,
    model_column: str | None = None,
    low: float = -np.inf,
    high: float = np.inf,
    min_scores: int = 2,
    missing: str | float = "error",
    scale: float = 1.0,
    minimize: bool = False,
) -> dict[str, np.ndarray]:
    """Load and validate scores from a researcher's own file; :func:`read_scores` with a warning.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv``, ``.tsv``, ``.jsonl`` or ``.json`` file, as in :func:`read_scores`.
    score_column, model_column : str, optional, keyword-only
        As in :func:`read_scores`; default None (found from the file).
    low, high : float, keyword-only
        Support of the scores in score units (after `scale`); default ``-inf`` and ``inf``.
    min_scores : int, keyword-only
        Fewest scores a model may have, ``>= 1``; default 2.
    missing : {"error", "drop"} or float, keyword-only
        What to do with a failed run's missing score; default ``"error"``.
    scale : float, keyword-only
        Positive factor every score is multiplied by; default 1.0.
    minimize : bool, keyword-only
        Whether lower scores are better (losses); default False. Words the advice for failed runs and says
        which ``missing`` number is better than every score.

    Returns
    -------
    dict of str to numpy.ndarray
        Model name -> float64 1-D array of its scores, in file order.

    Warns
    -----
    DataWarning
        Once, counting the missing scores per model, when some were dropped or replaced; and once more when
        the ``missing`` number is better than every score read (above all, or below all with `minimize`), so
        that a failed run would count as the best.

    Raises
    ------
    DataError, ValueError
        As in :func:`read_scores`.

    Examples
    --------
    A single column without a header: one model, named after the file.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "runs.csv"
    ...     _ = path.write_text("0.71\\n0.64\\n0.69\\n")
    ...     load_scores(path)
    {'runs': array([0.71, 0.64, 0.69])}
    """
    result = read_scores(
        path,
        score_column=score_column,
        model_column=model_column,
        low=low,
        high=high,
        min_scores=min_scores,
        missing=missing,
        scale=scale,
        minimize=minimize,
    )
    counts = result.dropped or result.replaced
    if counts:
        n = sum(counts.values())
        done = f"{n} missing score{'s' * (n != 1)}"
        done = f"dropped {done}" if result.dropped else f"scored {done} as {float(missing):g}"
        per_model = ", ".join(f"model {model}: {k}" for model, k in counts.items())
        warnings.warn(f"{result.path}: {done} ({per_model})", DataWarning, stacklevel=2)
    if result.replaced:
        _best_missing_warn(result, float(missing), bool(minimize))
    return result.scores


def _best_missing_warn(result: ScoreFile, missing: float, minimize: bool) -> None:
    """Warn when the number failed runs were scored is better than every score read: a failed run, the best."""
    every = np.concatenate(list(result.scores.values()))
    read = every[every != missing]  # the scores read, and the replaced ones, which are all exactly `missing`
    if not read.size or every.size - read.size > sum(result.replaced.values()):
        return  # nothing read, or a run read scored `missing` itself: it is then not better than every one
    best, worst = (read.min(), read.max()) if minimize else (read.max(), read.min())
    if (missing < best) if minimize else (missing > best):
        side = "below" if minimize else "above"
        warnings.warn(
            f"{result.path}: missing={missing:g} scores failed runs {side} every score read (the best is "
            f"{best:g}{', with minimize=true' * minimize}), so a failed run counts as the best run: pass "
            f"missing=drop, or a score no better than the worst read ({worst:g})",
            DataWarning,
            stacklevel=3,
        )
