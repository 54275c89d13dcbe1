"""W&B runs exported as CSV from the web UI: creation order, sweeps as studies, states, and one line for what is not
an export of one row per run.

Hand-made exports following the UI's "Export as CSV" of the runs table (columns ``Name``, ``State``, ``Notes``,
``User``, ``Tags``, ``Created``, ``Runtime``, ``Sweep``, then config and summary columns; newest run first).
"""

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

_HEADER = "Name,State,Notes,User,Tags,Created,Runtime,Sweep,lr,val_acc"
_ROWS = [  # as the UI lists them: newest first
    "run-e,running,,ana,,2025-01-01T10:05:00.000Z,5,sw1,0.05,",
    "run-d,finished,,ana,,2025-01-01T10:04:00.000Z,60,sw2,0.2,0.61",
    "run-c,crashed,,ana,,2025-01-01T10:03:00.000Z,12,sw1,0.3,",
    "run-b,finished,,ana,,2025-01-01T10:02:00.000Z,61,sw1,0.01,0.72",
    "run-a,finished,,ana,,2025-01-01T10:01:00.000Z,60,sw1,0.1,0.70",
    "solo,failed,,ana,,2025-01-01T09:00:00.000Z,3,,0.1,0.5",
]


def _export(tmp_path, header=_HEADER, rows=_ROWS, name="wandb_export.csv"):
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_runs_in_creation_order_oldest_first_each_sweep_a_study(tmp_path):
    path = _export(tmp_path)
    assert sniff(path) == "wandb-csv"
    source = read_source(path, metric="val_acc")
    assert source.format == "wandb-csv" and [t.name for t in source.studies] == ["sw1", "sw2", "(no sweep)"]
    sw1 = source.studies[0]
    np.testing.assert_array_equal(sw1.values, [0.70, 0.72, np.nan, np.nan])  # run-a, run-b, run-c, run-e
    assert sw1.states == ("complete", "complete", "failed", "running")
    assert sw1.direction is None and sw1.metric == "val_acc"
    np.testing.assert_array_equal(sw1.order - 1_735_725_600_000, [60_000, 120_000, 180_000, 300_000])  # ms, UTC
    assert sw1.notes == ("4 runs: 2 complete, 1 failed, 1 running",)
    assert sw1.provenance[0].startswith("sweep sw1: its method is not in the export")
    assert source.studies[2].provenance[0].startswith("not recorded: runs outside a sweep")


def test_a_metric_is_named_among_numeric_columns(tmp_path):
    path = _export(tmp_path)
    with pytest.raises(DataError, match=r"several numeric metrics \('lr', 'val_acc'\): choose one with metric=NAME"):
        read_source(path)
    with pytest.raises(DataError, match="no numeric metric 'loss'"):
        read_source(path, metric="loss")


def test_a_column_mixing_numbers_and_text_is_one_line(tmp_path):
    rows = [*_ROWS[:-1], "solo,failed,,ana,,2025-01-01T09:00:00.000Z,3,,0.1,loss=0.5"]
    with pytest.raises(DataError, match=r"row 7: 'val_acc' is 'loss=0.5', not a number: a column mixing"):
        read_source(_export(tmp_path, rows=rows), metric="val_acc")


def test_study_picks_a_sweep(tmp_path):
    (sw2,) = read_source(_export(tmp_path), study="sw2", metric="val_acc").studies
    assert sw2.values.tolist() == [0.61]
    with pytest.raises(DataError, match="no sweep 'sw9'; the export holds 'sw1', 'sw2', '\\(no sweep\\)'"):
        read_source(_export(tmp_path), study="sw9", metric="val_acc")


def test_the_sweep_method_is_provenance_where_exported(tmp_path):
    header = _HEADER + ",method"
    rows = [r + (",random" if ",sw1," in r else ",bayes" if ",sw2," in r else ",") for r in _ROWS]
    source = read_source(_export(tmp_path, header, rows), metric="val_acc")
    assert source.studies[0].provenance == (
        "sweep method 'random' (column method): random search, as the sweep records it",
    )
    assert "not random search" in source.studies[1].provenance[0]


def test_without_created_the_file_order_is_kept_and_said(tmp_path):
    header = "Name,State,Runtime,Sweep,val_acc"
    rows = ["b,finished,1,s,0.2", "a,finished,1,s,0.1"]
    (trials,) = read_source(_export(tmp_path, header, rows)).studies
    assert trials.values.tolist() == [0.2, 0.1] and trials.order_by == "row of the export (no Created column)"
    assert "the W&B UI lists the newest run first" in trials.notes[1]


def test_a_run_on_several_rows_is_reduced_or_refused(tmp_path):
    header = "Name,State,Created,Sweep,ID,val_acc"
    rows = [
        "a,finished,2025-01-01T10:00:00Z,s,r1,0.5",
        "a,finished,2025-01-01T10:00:00Z,s,r1,0.7",
        "b,finished,2025-01-01T11:00:00Z,s,r2,0.6",
    ]
    path = _export(tmp_path, header, rows)
    with pytest.raises(DataError, match="run 'r1' is on 2 rows \\(ID repeats\\): a run is one trial; give reduce="):
        read_source(path)
    (trials,) = read_source(path, reduce="max").studies
    assert trials.values.tolist() == [0.7, 0.6] and "reduce=max" in trials.notes[1]


def test_a_history_export_without_run_ids_is_refused(tmp_path):
    path = _export(tmp_path, "Name,State,Created,_step,val_acc", ["a,finished,2025-01-01T10:00:00Z,0,0.5"])
    with pytest.raises(DataError, match="a '_step' column but no run id"):
        read_source(path)


@pytest.mark.parametrize(
    "row, words",
    [
        ("x,exploded,,ana,,2025-01-01T10:00:00Z,1,sw1,0.1,0.5", "row 2: State is 'exploded', not one of W&B's"),
        ("x,finished,,ana,,yesterday,1,sw1,0.1,0.5", "row 2: Created is 'yesterday', not a date and time"),
        ("x,finished,,ana", "row 2: 4 fields, the header has 10"),
    ],
)
def test_bad_rows_are_one_line(tmp_path, row, words):
    with pytest.raises(DataError, match=words) as caught:
        read_source(_export(tmp_path, rows=[row]), metric="val_acc")
    assert "\n" not in str(caught.value)


def test_a_plain_csv_of_scores_is_no_export(tmp_path):
    path = _export(tmp_path, "model,score", ["a,0.5"])
    assert sniff(path) is None


def test_a_huge_export_is_refused_by_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="over the memory limit"):
        read_source(_export(tmp_path), metric="val_acc")
