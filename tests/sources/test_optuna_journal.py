"""Optuna's JournalStorage file, replayed with the standard library, against what Optuna itself reported of the
same file (``data/optuna.log``, ``make_fixtures.py``); Optuna's replay rules on hand-made journals; and the
journals a reader must refuse in one line."""

import json

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

_STATES = {"COMPLETE": "complete", "FAIL": "failed", "PRUNED": "pruned", "RUNNING": "running", "WAITING": "waiting"}


def _journal(tmp_path, *ops, name="journal.log"):
    """A journal of the operations ``ops`` (dicts; ``worker_id`` added), one JSON line each, as Optuna writes."""
    path = tmp_path / name
    path.write_text("".join(json.dumps({"worker_id": "w", **op}) + "\n" for op in ops))
    return path


def _study(name="s", directions=(2,)):
    return {"op_code": 0, "study_name": name, "directions": list(directions)}


def _trial(study_id=0, **extra):
    return {"op_code": 4, "study_id": study_id, "datetime_start": "2025-01-01T00:00:00+00:00", **extra}


def _finish(trial_id, state=1, values=None):
    return {"op_code": 6, "trial_id": trial_id, "state": state, "values": values, "datetime_complete": "2025-01-01"}


def test_every_study_is_what_optuna_reported(data, expected, as_float):
    source = read_source(data / "optuna.log")
    assert source.format == "optuna-journal" and source.schema_version is None
    reported = expected["optuna.log"]
    assert sorted(t.name for t in source.studies) == sorted(reported)
    for trials in source.studies:
        study = reported[trials.name]
        assert trials.direction == study["directions"][0]
        np.testing.assert_array_equal(trials.order, study["numbers"])
        assert trials.states == tuple(_STATES[s] for s in study["states"])
        np.testing.assert_array_equal(trials.values, as_float([None if v is None else v[0] for v in study["values"]]))


def test_the_journal_and_the_storage_read_alike(data):
    # the fixture writes the same seeded studies to both: the readers must agree, provenance and notes included
    rdb = {t.name: t for t in read_source(data / "optuna.db").studies}
    for trials in read_source(data / "optuna.log").studies:
        other = rdb[trials.name]
        np.testing.assert_array_equal(trials.values, other.values)
        assert (trials.states, trials.provenance, trials.notes) == (other.states, other.provenance, other.notes)


def test_a_multi_objective_study_by_index_or_by_recorded_name(data, expected, as_float):
    multi = expected["optuna.log"]["multi"]
    (by_name,) = read_source(data / "optuna.log", study="multi", metric="accuracy").studies
    np.testing.assert_array_equal(by_name.values, as_float([v[1] for v in multi["values"]]))
    assert by_name.direction == "maximize" and by_name.metric == "accuracy"
    with pytest.raises(DataError, match="objective=2, but it has 2 objectives"):
        read_source(data / "optuna.log", study="multi", objective=2)


def test_a_name_with_quotes_is_only_a_name(data, expected):
    (study,) = read_source(data / "optuna.log", study=expected["hostile_name"]).studies
    assert study.name == expected["hostile_name"]
    with pytest.raises(DataError, match="no study 'nope'; the journal holds 'random', 'tpe'"):
        read_source(data / "optuna.log", study="nope")


def test_optunas_replay_rules(tmp_path):
    path = _journal(
        tmp_path,
        _study("a", [1]),
        _study("a", [2]),  # a second create of one name: the first stays (minimize)
        _study("gone"),
        {"op_code": 1, "study_id": 1},  # deleted
        _trial(0),
        _finish(0, 1, [0.5]),
        _finish(0, 3, None),  # a finished trial never changes again
        _trial(0, state=4),  # waiting (enqueued)
        {"op_code": 6, "trial_id": 1, "state": 0, "values": None, "datetime_start": "2025-01-01"},  # started
        {"op_code": 6, "trial_id": 1, "state": 0, "values": None, "datetime_start": "2025-01-01"},  # too late
        _trial(0, state=1, value=0.25, values=None),  # a trial copied whole (study.add_trial), single objective
        {"op_code": 9, "trial_id": 2, "system_attr": {"grid_id": 3}},  # finished: ignored
        {"op_code": 9, "trial_id": 1, "system_attr": {"grid_id": 0}},
        {"op_code": 10, "trial_ids": [5]},  # DISCARD_TRIALS: Rustuna's, ignored by Optuna
    )
    (study,) = read_source(path).studies
    assert study.name == "a" and study.direction == "minimize"
    assert study.states == ("complete", "running", "complete")
    np.testing.assert_array_equal(study.values, [0.5, np.nan, 0.25])
    assert study.provenance[0].startswith("GridSampler") and "1 of 3 trials" in study.provenance[0]


def test_infinities_are_read_as_stored(tmp_path):
    path = tmp_path / "inf.log"
    lines = [_study(), _trial(), _finish(0, 1, [float("inf")]), _trial(), _finish(1, 1, [float("-inf")])]
    path.write_text("".join(json.dumps({"worker_id": "w", **op}) + "\n" for op in lines))  # Infinity, as Optuna
    assert "Infinity" in path.read_text()
    np.testing.assert_array_equal(read_source(path).studies[0].values, [np.inf, -np.inf])


def test_a_last_line_cut_short_is_left_out_with_a_note_as_optuna_does(tmp_path):
    path = _journal(tmp_path, _study(), _trial(), _finish(0, 1, [0.5]), _trial())
    text = path.read_text()
    path.write_text(text[: len(text) - 20])  # the last trial's line, half written
    (study,) = read_source(path).studies
    np.testing.assert_array_equal(study.values, [0.5])
    assert any("last line (4) is incomplete" in note for note in study.notes)


@pytest.mark.parametrize("bad", ["{not json", '"a string"', '{"no": "op_code"}'])
def test_a_bad_line_before_the_last_is_one_line_naming_it(tmp_path, bad):
    path = _journal(tmp_path, _study(), _trial())
    path.write_text(path.read_text() + bad + "\n" + json.dumps({"worker_id": "w", **_finish(0, 1, [0.5])}) + "\n")
    with pytest.raises(DataError, match="line 3: ") as caught:
        read_source(path)
    assert "\n" not in str(caught.value)


def test_an_operation_from_a_newer_optuna_is_one_line(tmp_path):
    path = _journal(tmp_path, _study(), {"op_code": 42, "trial_id": 0})
    with pytest.raises(DataError, match="line 2: operation code 42, unknown to this reader .*a newer Optuna"):
        read_source(path)


@pytest.mark.parametrize(
    "op, words",
    [
        ({"op_code": 4}, r"line 2 \(CREATE_TRIAL\): not an operation Optuna writes \(KeyError"),
        ({"op_code": 0, "study_name": "t", "directions": [7]}, r"line 2 \(CREATE_STUDY\)"),
        (_trial(state=1, values=["high"]), "values must be a list of numbers or null"),
    ],
)
def test_an_operation_optuna_never_writes_is_one_line(tmp_path, op, words):
    path = _journal(tmp_path, _study(), op)
    with pytest.raises(DataError, match=words):
        read_source(path)


def test_a_journal_over_the_memory_limit_is_refused_before_replay(data, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="replayed it would take about .* raise SIMSTUDY_MAX_MEMORY_GB"):
        read_source(data / "optuna.log")


def test_sniff_tells_a_journal_by_its_first_line_not_its_name(tmp_path):
    path = _journal(tmp_path, _study(), name="results.txt")
    assert sniff(path) == "optuna-journal"
    (tmp_path / "scores.jsonl").write_text('{"score": 0.5}\n')
    assert sniff(tmp_path / "scores.jsonl") is None
