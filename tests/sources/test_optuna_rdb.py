"""Optuna's RDB storage in SQLite, read with ``sqlite3`` alone, against what Optuna itself reported of the same
file (``data/optuna.db``, ``make_fixtures.py``); and the storages a reader must refuse in one line, untouched."""

import hashlib
import sqlite3

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

_STATES = {"COMPLETE": "complete", "FAIL": "failed", "PRUNED": "pruned", "RUNNING": "running", "WAITING": "waiting"}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(caught) -> str:
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("spelling", ["path", "url"])
def test_every_study_is_what_optuna_reported(data, expected, as_float, spelling):
    path = data / "optuna.db"
    source = read_source(path if spelling == "path" else f"sqlite:///{path}")
    assert source.format == "optuna-rdb" and source.schema_version == expected["optuna.db:schema"]
    reported = expected["optuna.db"]
    assert sorted(t.name for t in source.studies) == sorted(reported)
    for trials in source.studies:
        study = reported[trials.name]
        assert trials.direction == study["directions"][0]
        np.testing.assert_array_equal(trials.order, study["numbers"])
        assert trials.states == tuple(_STATES[s] for s in study["states"])
        values = as_float([None if v is None else v[0] for v in study["values"]])
        np.testing.assert_array_equal(trials.values, values)  # bit for bit, +-inf and NaN in place


def test_the_studies_keep_the_storage_order(data):
    names = [t.name for t in read_source(data / "optuna.db").studies]
    assert names[:4] == ["random", "tpe", "multi", "grid"]


def test_failed_pruned_running_and_waiting_trials_are_counted(data, expected):
    studies = {t.name: t for t in read_source(data / "optuna.db").studies}
    assert studies["random"].counts == {"complete": 9, "failed": 2, "pruned": 1}
    assert studies["random"].notes[0] == "12 trials: 9 complete, 2 failed, 1 pruned"
    # the pruned trial keeps its last reported value, as Optuna reports it; the state says it was pruned
    assert not np.isnan(studies["random"].values[5]) and studies["random"].states[5] == "pruned"
    assert studies["tpe"].counts == {"complete": 14, "running": 1, "waiting": 1}
    assert np.isposinf(studies["tpe"].values[4]) and np.isneginf(studies["tpe"].values[6])
    assert "1 value +inf and 1 -inf, as stored" in studies["tpe"].notes


def test_a_multi_objective_study_by_index_or_by_recorded_name(data, expected, as_float):
    multi = expected["optuna.db"]["multi"]
    for k, metric in enumerate(multi["metric_names"]):
        by_index = read_source(data / "optuna.db", study="multi", objective=k).studies[0]
        by_name = read_source(data / "optuna.db", study="multi", metric=metric).studies[0]
        want = as_float([v[k] for v in multi["values"]])
        np.testing.assert_array_equal(by_index.values, want)
        np.testing.assert_array_equal(by_name.values, want)
        assert by_index.direction == multi["directions"][k] and by_index.metric == metric


def test_provenance_names_the_samplers_traces_and_says_when_there_are_none(data, expected):
    studies = {t.name: t for t in read_source(data / "optuna.db").studies}
    assert studies["grid"].provenance == (
        "GridSampler (a grid search): trial system attrs grid_id, search_space in 6 of 6 trials",
    )
    assert studies["multi"].provenance[0].startswith("NSGAIISampler (a genetic algorithm): trial system attrs ")
    assert "NSGAIISampler:generation in 8 of 8" in studies["multi"].provenance[0]
    assert any(f.startswith("TPESampler") for f in studies["tpe"].provenance)
    assert any("enqueued" in f and "1 of 16" in f for f in studies["tpe"].provenance)
    # RandomSampler leaves no trace: said as such, and never taken as proof of random search
    (random,) = studies["random"].provenance
    assert random.startswith("sampler not recorded") and "not evidence of random search" in random
    # every key Optuna reported is accounted for
    assert set(expected["optuna.db"]["grid"]["system_attr_keys"]) == {"grid_id", "search_space"}


def test_a_name_with_quotes_and_sql_is_only_a_name(data, expected):
    before = _digest(data / "optuna.db")
    name = expected["hostile_name"]
    (study,) = read_source(data / "optuna.db", study=name).studies
    assert study.name == name and study.counts == {"complete": 3}
    with pytest.raises(DataError, match="no study") as caught:
        read_source(data / "optuna.db", study="x' OR '1'='1")
    assert "'random'" in _one_line(caught)  # the message lists what the storage holds
    assert _digest(data / "optuna.db") == before


def test_reading_changes_nothing_and_leaves_no_file_behind(data):
    before = {p.name: _digest(p) for p in data.iterdir() if p.is_file()}  # data/ray_exp: tests/sources/test_ray.py
    read_source(data / "optuna.db")
    sniff(data / "optuna.db")
    assert {p.name: _digest(p) for p in data.iterdir() if p.is_file()} == before


@pytest.mark.parametrize(
    "revision, words",
    [("v9.9.9.a", "'v9.9.9.a' is not one this reader knows"), ("v2.6.0.a", "optuna storage upgrade")],
)
def test_a_schema_this_reader_does_not_know_is_one_line(spoil, revision, words):
    path = spoil("optuna.db")
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    con.commit()
    con.close()
    before = _digest(path)
    with pytest.raises(DataError, match=words) as caught:
        read_source(path)
    assert _one_line(caught).startswith(str(path))
    assert _digest(path) == before


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_truncated_storage_is_one_line(spoil, keep):
    path = spoil("optuna.db")
    blob = path.read_bytes()
    path.write_bytes(blob[: int(len(blob) * keep)])
    with pytest.raises(DataError, match="truncated SQLite file") as caught:
        read_source(path)
    _one_line(caught)


def test_a_file_cut_inside_its_header_is_one_line(spoil):
    path = spoil("optuna.db")
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(DataError, match="shorter than its 100-byte header"):
        read_source(path)


def test_a_corrupted_storage_is_one_line(spoil, rng):
    path = spoil("optuna.db")
    blob = bytearray(path.read_bytes())
    blob[1024:] = rng.integers(0, 256, len(blob) - 1024, dtype=np.uint8).tobytes()  # the schema's pages too
    path.write_bytes(bytes(blob))
    with pytest.raises(DataError, match="corrupted SQLite file|not the schema") as caught:
        read_source(path)
    _one_line(caught)


def test_a_storage_locked_by_a_writer_is_one_line_after_the_timeout(spoil):
    path = spoil("optuna.db")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")  # a commit in progress: readers wait for it
    try:
        with pytest.raises(DataError, match=r"locked by a process writing it \(waited 0.05 s\)") as caught:
            read_source(path, timeout=0.05)
        _one_line(caught)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert read_source(path).studies  # released: read as ever


def test_more_trials_than_the_memory_limit_are_refused_before_reading(data, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")  # 1 kB
    with pytest.raises(DataError, match="trials would take about .* over the memory limit") as caught:
        read_source(data / "optuna.db")
    assert "SIMSTUDY_MAX_MEMORY_GB" in _one_line(caught)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(study="random", objective=1), "objective=1, but it has 1 objective: give objective=0"),
        (dict(study="multi", objective=2), r"objective=2, but it has 2 objectives: give objective=0..1"),
        (dict(study="random", metric="loss"), "records no metric names"),
        (dict(study="multi", metric="f1"), "no metric 'f1'; its metrics are 'loss', 'accuracy'"),
    ],
)
def test_an_objective_or_metric_not_in_the_study_is_one_line(data, kwargs, words):
    with pytest.raises(DataError, match=words):
        read_source(data / "optuna.db", **kwargs)


def test_an_unknown_state_is_one_line(spoil):
    path = spoil("optuna.db")
    con = sqlite3.connect(path)
    con.execute("UPDATE trials SET state = 'EXPLODED' WHERE number = 2")
    con.commit()
    con.close()
    with pytest.raises(DataError, match="trial 2: unknown state 'EXPLODED'"):
        read_source(path)


def test_a_storage_with_an_interrupted_write_is_one_line_and_not_rolled_back(spoil, tmp_path):
    path = spoil("optuna.db")
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA cache_size = 1")  # the change spills into the file: the journal holds the old pages
    writer.execute("BEGIN")
    writer.execute("UPDATE trials SET state = 'FAIL'")
    crashed = tmp_path / "crashed"  # the files as a writer killed mid-transaction leaves them: a hot journal
    crashed.mkdir()
    for suffix in ("", "-journal"):
        (crashed / f"optuna.db{suffix}").write_bytes(path.with_name(f"optuna.db{suffix}").read_bytes())
    writer.execute("ROLLBACK")
    writer.close()
    before = {p.name: _digest(p) for p in crashed.iterdir()}
    with pytest.raises(DataError, match="a write was interrupted and its journal .* must be rolled back") as caught:
        read_source(crashed / "optuna.db")
    _one_line(caught)
    assert {p.name: _digest(p) for p in crashed.iterdir()} == before


def test_a_study_without_objectives_is_one_line(spoil):
    path = spoil("optuna.db")
    con = sqlite3.connect(path)
    con.execute(
        "DELETE FROM study_directions WHERE study_id = (SELECT study_id FROM studies WHERE study_name = 'grid')"
    )
    con.commit()
    con.close()
    with pytest.raises(DataError, match="study 'grid' records no objective"):
        read_source(path)
    assert read_source(path, study="random").studies[0].name == "random"  # the other studies read as ever
