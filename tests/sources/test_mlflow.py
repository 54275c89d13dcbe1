"""MLflow's SQLite tracking store, read with ``sqlite3`` alone, against what MLflow itself reported of the same file
(``data/mlflow.db``, ``make_fixtures.py``); and the stores a reader must refuse in one line."""

import sqlite3
import sys

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source

_STATES = {"FINISHED": "complete", "FAILED": "failed", "KILLED": "failed", "RUNNING": "running", "SCHEDULED": "waiting"}


def _update(path, sql, params=()):
    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()


@pytest.mark.parametrize("metric", ["accuracy", "loss"])
def test_every_experiment_is_what_mlflow_reported(data, expected, as_float, metric):
    source = read_source(data / "mlflow.db", metric=metric)
    assert source.format == "mlflow-sqlite" and source.schema_version == expected["mlflow.db:schema"]
    reported = expected["mlflow.db"]
    assert sorted(t.name for t in source.studies) == sorted(reported)
    for trials in source.studies:
        runs = reported[trials.name]
        assert trials.direction is None and trials.metric == metric
        np.testing.assert_array_equal(trials.order, runs["start_times"])  # by start time, as MLflow ordered them
        assert trials.states == tuple(_STATES[s] for s in runs["statuses"])
        np.testing.assert_array_equal(trials.values, as_float(runs[metric]))  # the latest step's value


def test_failed_and_deleted_runs_are_counted(data):
    studies = {t.name: t for t in read_source(data / "mlflow.db", metric="accuracy").studies}
    assert studies["exp-a"].notes == ("5 runs: 4 complete, 1 failed", "1 run without the metric 'accuracy': no value")
    assert studies["exp-b"].notes == ("3 runs: 3 complete", "1 deleted run left out")
    assert studies["Default"].notes == ("no runs",)
    assert all(t.provenance[0].startswith("not recorded") for t in studies.values())


def test_one_experiment_by_name(data):
    (study,) = read_source(data / "mlflow.db", study="exp-b", metric="loss").studies
    assert study.name == "exp-b" and study.values.size == 3
    with pytest.raises(DataError, match="no experiment \"it's\"; the store holds 'Default', 'exp-a', 'exp-b'"):
        read_source(data / "mlflow.db", study="it's")


def test_a_metric_must_be_chosen_among_several_and_must_exist(data):
    with pytest.raises(DataError, match="experiment 'exp-a' logs the metrics 'accuracy', 'loss': choose one"):
        read_source(data / "mlflow.db")
    with pytest.raises(DataError, match="no run logs the metric 'f1'; the runs log 'accuracy', 'loss'"):
        read_source(data / "mlflow.db", metric="f1")


def test_nan_inf_and_killed_runs_as_mlflow_stores_them(spoil):
    path = spoil("mlflow.db")
    con = sqlite3.connect(path)
    (first, second, third) = [
        r
        for (r,) in con.execute(
            "SELECT r.run_uuid FROM runs AS r JOIN experiments AS e ON e.experiment_id = r.experiment_id "
            "WHERE e.name = 'exp-b' AND r.lifecycle_stage = 'active' ORDER BY r.start_time"
        )
    ]
    con.close()
    # MLflow stores a NaN as 0 with is_nan set, and +inf as the largest float (sqlalchemy_store.sanitize_metric_value)
    _update(path, "UPDATE latest_metrics SET value = 0, is_nan = 1 WHERE run_uuid = ? AND key = 'loss'", (first,))
    _update(
        path, "UPDATE latest_metrics SET value = ? WHERE run_uuid = ? AND key = 'loss'", (sys.float_info.max, second)
    )
    _update(path, "UPDATE runs SET status = 'KILLED' WHERE run_uuid = ?", (third,))
    (study,) = read_source(path, study="exp-b", metric="loss").studies
    assert np.isnan(study.values[0]) and study.values[1] == sys.float_info.max
    assert study.states == ("complete", "complete", "failed")
    assert "1 of the failed runs were killed (MLflow status KILLED)" in study.notes
    assert "1 value +-1.797e308: MLflow's stand-in for +-inf" in study.notes


def test_nested_runs_are_named_in_the_provenance(spoil):
    path = spoil("mlflow.db")
    con = sqlite3.connect(path)
    (run,) = con.execute("SELECT run_uuid FROM runs WHERE name = 'exp-a-0'").fetchone()
    con.execute("INSERT INTO tags (key, value, run_uuid) VALUES ('mlflow.parentRunId', 'parent', ?)", (run,))
    con.commit()
    con.close()
    (study,) = read_source(path, study="exp-a", metric="accuracy").studies
    assert study.provenance[1] == "1 of 5 runs are nested runs (tag mlflow.parentRunId): a tuner's trials?"


@pytest.mark.parametrize(
    "revision, words",
    [("ffffffffffff", "'ffffffffffff' is not one this reader knows"), ("181f10493468", "mlflow db upgrade")],
)
def test_a_schema_this_reader_does_not_know_is_one_line(spoil, revision, words):
    path = spoil("mlflow.db")
    _update(path, "UPDATE alembic_version SET version_num = ?", (revision,))
    with pytest.raises(DataError, match=words) as caught:
        read_source(path, metric="loss")
    assert "\n" not in str(caught.value)


def test_an_unknown_status_is_one_line(spoil):
    path = spoil("mlflow.db")
    con = sqlite3.connect(path)
    con.execute("PRAGMA ignore_check_constraints = ON")  # MLflow's CHECK lists its statuses; a newer one may add one
    con.execute("UPDATE runs SET status = 'LOST' WHERE name = 'exp-a-1'")
    con.commit()
    con.close()
    with pytest.raises(DataError, match="unknown status 'LOST'"):
        read_source(path, metric="loss")


def test_more_runs_than_the_memory_limit_are_refused_before_reading(data, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="runs would take about .* over the memory limit"):
        read_source(data / "mlflow.db", metric="loss")
