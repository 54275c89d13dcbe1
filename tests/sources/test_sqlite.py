"""simstudy.sources._sqlite: every SQLite error becomes the one line that says what happened."""

import sqlite3

import pytest

from simstudy.sources import _sqlite


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("no such table: trials", "not the schema this reader knows"),
        ("no such column: value_type", "not the schema this reader knows"),
        ("disk I/O error", "cannot read the SQLite file: disk I/O error"),
        ("database disk image is malformed", "corrupted SQLite file"),
    ],
)
def test_each_sqlite_error_is_named_for_what_it_is(message, words):
    error = _sqlite.failure(sqlite3.OperationalError(message), "study.db", 5.0)
    assert words in str(error)
    assert str(error).startswith("study.db: ")
