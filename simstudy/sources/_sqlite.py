"""SQLite files opened the one safe way: read-only, with a timeout, every failure one line naming the file.

A tuning framework may be writing the file while it is read (an Optuna study still running). The connection is
opened with ``mode=ro`` (SQLite itself refuses to write, so the file, its lock and its journal are never changed)
and ``query_only``; a writer holding the file longer than ``timeout`` seconds is a one-line
:class:`~simstudy.score_files.DataError`, not a wait without end. Before a table is read, its rows are counted
and the memory they would take is checked against :func:`simstudy._limits.memory_limit`.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simstudy._limits import MEMORY_ENV, memory_limit, size
from simstudy.score_files import DataError

#: The first 16 bytes of every SQLite 3 file.
MAGIC = b"SQLite format 3\x00"
#: Peak bytes per row fetched into Python (a tuple of a few ints, floats and short strings, and its list slot).
ROW_COST = 400


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts as a SQLite 3 file does (False for anything unreadable)."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == MAGIC
    except OSError:
        return False


def check_header(path: Path, name: str) -> None:
    """Refuse a SQLite file shorter than its header says (truncated by a copy or a download), in one line.

    The header records the page size (bytes 16-17) and, when valid (bytes 92-95 equal the change counter at
    24-27), the page count (28-31); SQLite would read such a file until a query hit the missing pages.
    """
    with open(path, "rb") as f:
        header = f.read(100)
    actual = os.path.getsize(path)
    if len(header) < 100:
        raise DataError(f"{name}: truncated SQLite file ({actual} bytes, shorter than its 100-byte header)")
    (page_size,) = struct.unpack(">H", header[16:18])
    page_size = 65536 if page_size == 1 else page_size
    change, pages = struct.unpack(">II", header[24:32])
    (valid_for,) = struct.unpack(">I", header[92:96])
    if pages and valid_for == change and actual < pages * page_size:
        raise DataError(
            f"{name}: truncated SQLite file: its header says {pages * page_size:,} bytes, the file has {actual:,}; "
            f"copy it again from where the framework wrote it"
        )


def connect(path: Path, name: str, timeout: float) -> sqlite3.Connection:
    """Open ``path`` read-only (``mode=ro``), waiting at most ``timeout`` seconds for a writer's lock."""
    uri = path.resolve().as_uri() + "?mode=ro"  # as_uri escapes '?', '#' and '%' in the path
    try:
        con = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=True)
        con.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise failure(exc, name, timeout) from None
    return con


def failure(exc: sqlite3.Error, name: str, timeout: float) -> DataError:
    """The one-line :class:`DataError` for a SQLite error while reading ``name``."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return DataError(
            f"{name}: locked by a process writing it (waited {timeout:g} s); read it again when the write is "
            f"done, or read a copy"
        )
    if "malformed" in text or "not a database" in text or "encrypted" in text:
        return DataError(f"{name}: corrupted SQLite file ({text}); copy it again from where the framework wrote it")
    if "readonly" in text:  # a hot journal: rolling it back would write, which mode=ro refuses
        return DataError(
            f"{name}: a write was interrupted and its journal ({name}-journal) must be rolled back before the file "
            f"can be read: open it once with its framework (or the sqlite3 shell), then read it again"
        )
    if "no such table" in text or "no such column" in text:
        return DataError(f"{name}: not the schema this reader knows ({text}); was it written by another program?")
    return DataError(f"{name}: cannot read the SQLite file: {text}")


def rows(con: sqlite3.Connection, name: str, timeout: float, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    """Every row of a parametrised query (values only ever as ``params``, never in ``sql``), errors one line."""
    try:
        return con.execute(sql, tuple(params)).fetchall()
    except sqlite3.Error as exc:
        raise failure(exc, name, timeout) from None


def tables(con: sqlite3.Connection, name: str, timeout: float) -> set[str]:
    """The names of the file's tables."""
    return {t for (t,) in rows(con, name, timeout, "SELECT name FROM sqlite_master WHERE type = 'table'")}


def check_rows(name: str, count: int, what: str, fix: str) -> None:
    """Refuse, before reading them, ``count`` rows whose Python copies would exceed the memory limit."""
    nbytes = count * ROW_COST
    limit = memory_limit()
    if nbytes > limit:
        raise DataError(
            f"{name}: {count:,} {what} would take about {size(nbytes)} to read, over the memory limit of "
            f"{size(limit)}: {fix}, or raise {MEMORY_ENV}"
        )
