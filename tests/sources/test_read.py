""":func:`sniff` and :func:`read_source`: the format from the content, and one line for what is no source."""

import os
import sqlite3

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff


def test_sniff_names_each_real_source_by_its_content(data, spoil):
    assert sniff(data / "optuna.db") == "optuna-rdb"
    assert sniff(f"sqlite:///{data / 'mlflow.db'}") == "mlflow-sqlite"
    assert sniff(data / "optuna.log") == "optuna-journal"
    renamed = spoil("optuna.db")
    assert sniff(renamed.rename(renamed.with_name("results.bin"))) == "optuna-rdb"  # a name says nothing
    assert sniff(data / "expected.json") is None


def test_garbage_and_other_files_are_no_source(tmp_path, rng):
    garbage = tmp_path / "study.db"
    garbage.write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    scores = tmp_path / "runs.csv"
    scores.write_text("model,score\na,0.5\n")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE studies (x)").connection.close()
    empty = tmp_path / "empty.log"
    empty.write_text("")
    for path in (garbage, scores, other, empty, tmp_path):
        assert sniff(path) is None
        with pytest.raises(DataError, match="not a tuning source this reader knows") as caught:
            read_source(path)
        assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "where, words",
    [
        ("missing.db", "no such file"),
        (".", "not a tuning source this reader knows"),  # a directory of nothing known
        ("postgresql://user@host/optuna", "only files are read"),
    ],
)
def test_what_is_no_file_is_one_line(tmp_path, where, words):
    path = where if "://" in where else tmp_path / where
    with pytest.raises(DataError, match=words):
        read_source(path)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(objective=-1), "objective must be an integer >= 0, got -1"),
        (dict(objective=True), "got True"),
        (dict(study=3), "study must be a name"),
        (dict(metric=["a"]), "metric must be a name"),
        (dict(timeout=float("nan")), "timeout must be a finite number"),
    ],
)
def test_bad_arguments_are_value_errors_naming_them(data, kwargs, words):
    with pytest.raises(ValueError, match=words):
        read_source(data / "optuna.db", **kwargs)


def test_a_sqlite_url_names_the_file_in_messages(data):
    with pytest.raises(DataError) as caught:
        read_source(f"sqlite:///{data / 'optuna.db'}", study="nope")
    assert str(caught.value).startswith(f"{data / 'optuna.db'}: no study 'nope'")


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file or a directory"):
        sniff(fifo)


def test_reduce_is_a_value_error_naming_it(data):
    with pytest.raises(ValueError, match="reduce must be one of last, best, max, min, mean .*got 'median'"):
        read_source(data / "optuna.db", reduce="median")


def test_json_nested_past_the_parsers_depth_is_no_source_and_no_traceback(tmp_path):
    from simstudy.sources import sniff

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert sniff(deep) is None  # the score reader then says what is wrong with it, in one line
    journal = tmp_path / "deep.log"
    journal.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert sniff(journal) is None
