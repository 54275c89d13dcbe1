"""Syne Tune's results.csv.zip and metadata.json: a row per report reduced to one score per trial, the mode as the
direction, the scheduler as provenance, st_status as the state.

``data/st_tuning`` is a real tuning written by Syne Tune 0.16 (``make_fixtures2.py``), read against what Syne Tune's
``load_experiment`` reported of it (``data/expected2.json``). The other fixtures are hand-made following ``syne_tune.Tuner`` (``StoreResultsCallback`` writes the results dataframe zipped as
``results.csv.zip``, columns ``trial_id``, the metrics, ``st_*`` and ``config_*``; ``metadata.json`` holds
``metric_names``, ``metric_mode`` and ``scheduler_name``); Syne Tune is not installed in the test environment.
"""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

_HEADER = "trial_id,accuracy,epoch,st_worker_time,st_decision,st_status,st_tuner_time,config_lr"
_ROWS = [
    "0,0.50,1,1.0,CONTINUE,InProgress,1.1,0.1",
    "1,0.40,1,1.0,CONTINUE,InProgress,1.2,0.2",
    "0,0.70,2,2.0,CONTINUE,InProgress,2.1,0.1",
    "0,0.65,3,3.0,CONTINUE,Completed,3.1,0.1",
    "1,0.45,2,2.0,STOP,Stopped,2.2,0.2",
    "2,,1,1.0,CONTINUE,Failed,2.3,0.3",
    "3,0.20,1,1.0,CONTINUE,InProgress,2.4,0.4",
]
DATA = Path(__file__).resolve().parent / "data"
_META = {"metric_names": ["accuracy"], "metric_mode": "max", "scheduler_name": "RandomSearch", "entrypoint": "t.py"}


def _tuning(tmp_path, rows=_ROWS, meta=_META, header=_HEADER):
    folder = tmp_path / "st-tuning-2025"
    folder.mkdir(exist_ok=True)
    with zipfile.ZipFile(folder / "results.csv.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("results.csv", "\n".join([header, *rows]) + "\n")
    if meta is not None:
        (folder / "metadata.json").write_text(json.dumps(meta))
    return folder


def test_one_score_per_trial_its_last_row_by_default(tmp_path):
    folder = _tuning(tmp_path)
    assert sniff(folder) == "syne-tune" and sniff(folder / "results.csv.zip") == "syne-tune"
    source = read_source(folder / "results.csv.zip")
    assert source.format == "syne-tune"
    (trials,) = source.studies
    assert trials.name == "st-tuning-2025" and trials.metric == "accuracy" and trials.direction == "maximize"
    np.testing.assert_array_equal(trials.values, [0.65, 0.45, np.nan, 0.20])
    assert trials.states == ("complete", "pruned", "failed", "complete")
    np.testing.assert_array_equal(trials.order, [0, 1, 2, 3])
    assert trials.notes[:2] == (
        "4 trials: 2 complete, 1 failed, 1 pruned",
        "one score per trial: the last of its rows of 'accuracy' (reduce=last, the default; reduce=last|best|max|min|mean)",
    )
    assert trials.notes[2].startswith("1 trial whose last row says InProgress read as complete")
    assert trials.provenance == ("scheduler 'RandomSearch' (metadata.json): random search, as Syne Tune records it",)


def test_best_follows_the_recorded_mode(tmp_path):
    (trials,) = read_source(_tuning(tmp_path), reduce="best").studies
    np.testing.assert_array_equal(trials.values[:2], [0.70, 0.45])
    meta = {**_META, "metric_mode": ["min"], "scheduler_name": "ASHA"}
    (trials,) = read_source(_tuning(tmp_path, meta=meta), reduce="best").studies
    assert trials.direction == "minimize" and trials.values[0] == 0.5
    assert "multi-fidelity" in trials.provenance[0]


def test_without_metadata_the_metric_is_named_and_no_direction_is_known(tmp_path):
    header = _HEADER.replace("epoch", "loss")
    folder = _tuning(tmp_path, meta=None, header=header)
    with pytest.raises(DataError, match=r"several numeric metrics \('accuracy', 'loss'\)"):
        read_source(folder)
    (trials,) = read_source(folder, metric="accuracy").studies
    assert trials.direction is None and "no metadata.json: no metric recorded, no direction" in trials.notes
    assert trials.provenance[0].startswith("not recorded")
    with pytest.raises(DataError, match="reduce=best needs the metric's direction"):
        read_source(folder, metric="accuracy", reduce="best")


def test_several_metrics_by_objective(tmp_path):
    header = _HEADER.replace("epoch", "latency")
    meta = {**_META, "metric_names": ["accuracy", "latency"], "metric_mode": ["max", "min"]}
    folder = _tuning(tmp_path, meta=meta, header=header)
    (trials,) = read_source(folder, objective=1).studies
    assert trials.metric == "latency" and trials.direction == "minimize" and trials.values[0] == 3
    with pytest.raises(DataError, match="objective=2, but metadata.json names 2 metrics"):
        read_source(folder, objective=2)


@pytest.mark.parametrize(
    "spoil, words",
    [
        (lambda p: p.write_bytes(p.read_bytes()[:60]), "not a readable zip of a CSV"),
        (lambda p: zipfile.ZipFile(p, "a").writestr("other.csv", "x"), "2 files in the zip"),
    ],
)
def test_a_spoilt_zip_is_one_line(tmp_path, spoil, words):
    folder = _tuning(tmp_path)
    spoil(folder / "results.csv.zip")
    with pytest.raises(DataError, match=words) as caught:
        read_source(folder)
    assert "\n" not in str(caught.value)


def test_bad_rows_are_one_line(tmp_path):
    with pytest.raises(DataError, match="row 2: trial_id 'a' is not an integer"):
        read_source(_tuning(tmp_path, rows=["a,0.5,1,1.0,CONTINUE,Completed,1.0,0.1"]))
    with pytest.raises(DataError, match="trial 0: st_status 'Exploded' is not one of Syne Tune's"):
        read_source(_tuning(tmp_path, rows=["0,0.5,1,1.0,CONTINUE,Exploded,1.0,0.1"]))


def test_a_huge_zip_is_refused_by_its_uncompressed_size(tmp_path, monkeypatch):
    folder = _tuning(tmp_path, rows=_ROWS * 50)
    assert (folder / "results.csv.zip").stat().st_size < 2_000  # small on disk, large once unzipped
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="results.csv.zip: 1[0-9],[0-9]{3} bytes; read it would take about"):
        read_source(folder)


def test_a_metric_column_with_text_is_one_line(tmp_path):
    rows = [*_ROWS, "4,accuracy=0.3,1,1.0,CONTINUE,Completed,2.5,0.5"]
    with pytest.raises(DataError, match=r"row 9: 'accuracy' is 'accuracy=0.3', not a number: a column mixing"):
        read_source(_tuning(tmp_path, rows=rows), metric="accuracy")


def test_a_real_tuning_is_what_syne_tune_reported():
    reported = json.loads((DATA / "expected2.json").read_text())["st_tuning"]
    assert sniff(DATA / "st_tuning") == "syne-tune"
    (trials,) = read_source(DATA / "st_tuning").studies
    ids = sorted(reported, key=int)
    assert trials.metric == "accuracy" and trials.direction == "maximize"
    np.testing.assert_array_equal(trials.order, [int(i) for i in ids])
    np.testing.assert_array_equal(trials.values, [reported[i]["accuracy"][-1] for i in ids])
    (best,) = read_source(DATA / "st_tuning", reduce="best").studies
    np.testing.assert_array_equal(best.values, [max(reported[i]["accuracy"]) for i in ids])
    in_progress = sum(reported[i]["status"] == "InProgress" for i in ids)
    assert trials.notes[2].startswith(f"{in_progress} trials whose last row says InProgress read as complete")
    assert trials.provenance[0].startswith("scheduler 'RandomSearch'")
