"""Ray Tune experiment directories: one score per trial, never one per iteration.

``data/ray_exp`` is a real experiment written by Ray Tune 2.60 (``make_fixtures2.py``), read against what Ray
reported of it (``data/expected2.json``). The other fixtures are hand-made following Ray Tune's documented layout (``ray/tune/logger/json.py``, ``csv.py``: a directory per
trial named ``<trainable>_<trial id>_<index>_<params>_<date>`` with ``params.json``, ``result.json`` as JSON lines of
reports carrying Ray's own keys, ``progress.csv``, ``error.txt`` for a trial that raised; ``experiment_state-*.json``
and the search state files beside them); Ray Tune is not installed in the test environment.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

_START = 1_735_689_600  # 2025-01-01, seconds
DATA = Path(__file__).resolve().parent / "data"


def _trial(root, index, reports, *, error=False, exp="a1b2c", trial_id=None):
    trial_id = trial_id or f"{exp}_{index:05d}"
    folder = root / f"train_fn_{trial_id}_{index}_lr={index / 10:g}_2025-01-01_00-00-{index:02d}"
    folder.mkdir()
    (folder / "params.json").write_text(json.dumps({"lr": index / 10}))
    lines = [
        {
            **report,
            "trial_id": trial_id,
            "training_iteration": i + 1,
            "timestamp": _START + 100 * index + i,
            "time_this_iter_s": 0.5,
            "done": i == len(reports) - 1,
            "config": {"lr": index / 10},
            "date": "2025-01-01_00-00-00",
        }
        for i, report in enumerate(reports)
    ]
    if reports:
        (folder / "result.json").write_text("".join(json.dumps(r) + "\n" for r in lines))
    if error:
        (folder / "error.txt").write_text("Traceback (most recent call last):\nValueError: boom\n")
    return folder


@pytest.fixture
def experiment(tmp_path):
    root = tmp_path / "tune_svm"
    root.mkdir()
    _trial(root, 0, [{"acc": 0.5}, {"acc": 0.7}, {"acc": 0.6}])
    _trial(root, 1, [{"acc": 0.4}, {"acc": 0.45}])
    _trial(root, 2, [{"acc": 0.3}], error=True)
    _trial(root, 3, [])  # started, never reported
    _trial(root, 10, [{"acc": 0.8}])  # "00010" after "00003": the counter, not the name, orders
    (root / "tuner.pkl").write_bytes(b"\x80\x05 never unpickled")
    (root / "basic-variant-state-2025-01-01_00-00-00.json").write_text("{}")
    return root


def test_one_score_per_trial_the_last_report_by_default(experiment):
    source = read_source(experiment)
    assert source.format == "ray-tune" and source.schema_version is None
    (trials,) = source.studies
    assert trials.name == "tune_svm" and trials.metric == "acc" and trials.direction is None
    np.testing.assert_array_equal(trials.values, [0.6, 0.45, 0.3, np.nan, 0.8])
    assert trials.states == ("complete", "complete", "failed", "failed", "complete")
    np.testing.assert_array_equal(trials.order, [0, 1, 2, 3, 10])
    assert trials.order_by.startswith("trial index")
    assert trials.notes[:2] == (
        "5 trials: 3 complete, 2 failed",
        "one score per trial: the last of its reports of 'acc' (reduce=last, the default; reduce=last|best|max|min|mean)",
    )
    assert "1 trial with error.txt: failed" in trials.notes and "1 trial without reports: failed" in trials.notes
    assert trials.provenance[0].startswith("BasicVariantGenerator")


@pytest.mark.parametrize("reduce, expected", [("max", [0.7, 0.45]), ("min", [0.5, 0.4]), ("mean", [0.6, 0.425])])
def test_reduce_over_a_trials_reports(experiment, reduce, expected):
    (trials,) = read_source(experiment, reduce=reduce).studies
    np.testing.assert_allclose(trials.values[:2], expected)
    assert f"reduce={reduce};" in trials.notes[1]


def test_best_follows_the_direction_only_where_it_is_recorded(experiment):
    with pytest.raises(DataError, match="reduce=best needs the metric's direction.*give reduce=max or reduce=min"):
        read_source(experiment, reduce="best")
    (experiment / "experiment_state-2025-01-01_00-00-00.json").write_text(
        json.dumps({"runner_data": {"_metric": "acc", "_mode": "min"}, "trial_data": []})
    )
    (trials,) = read_source(experiment, reduce="best").studies
    assert trials.direction == "minimize"
    np.testing.assert_array_equal(trials.values[:2], [0.5, 0.4])


def test_a_metric_among_several_is_chosen_or_read_from_the_state(tmp_path):
    root = tmp_path / "exp"
    root.mkdir()
    _trial(root, 0, [{"acc": 0.5, "loss": 2.0}])
    _trial(root, 1, [{"acc": 0.6, "loss": 1.0}])
    with pytest.raises(DataError, match=r"several numeric metrics \('acc', 'loss'\): choose one with metric=NAME"):
        read_source(root)
    assert read_source(root, metric="loss").studies[0].values.tolist() == [2.0, 1.0]
    with pytest.raises(DataError, match="no numeric metric 'f1'; its metrics are 'acc', 'loss'"):
        read_source(root, metric="f1")
    state = {
        "runner_data": {"_metric": "loss", "_mode": "min"},
        "trial_data": [[json.dumps({"trial_id": "a1b2c_00001", "status": "RUNNING"}), "{}"]],
    }
    (root / "experiment_state-2025-01-01_00-00-00.json").write_text(json.dumps(state))
    (trials,) = read_source(root).studies
    assert trials.metric == "loss" and trials.direction == "minimize" and trials.states == ("complete", "running")
    (other,) = read_source(root, metric="acc").studies
    assert other.direction is None  # the recorded mode is the recorded metric's, not another's


def test_progress_csv_when_there_is_no_result_json(tmp_path):
    root = tmp_path / "exp"
    (root / "train_fn_a1b2c_00000_0").mkdir(parents=True)
    (root / "train_fn_a1b2c_00000_0" / "progress.csv").write_text(
        "acc,training_iteration,trial_id,config/lr\n0.1,1,a1b2c_00000,0.5\n0.3,2,a1b2c_00000,0.5\n"
    )
    (trials,) = read_source(root).studies
    assert trials.metric == "acc" and trials.values.tolist() == [0.3]


def test_order_by_first_report_when_ids_have_no_counter(tmp_path):
    root = tmp_path / "exp"
    root.mkdir()
    _trial(root, 5, [{"acc": 0.1}], trial_id="zzz")  # later first report, earlier in no listing
    _trial(root, 1, [{"acc": 0.9}], trial_id="aaa")
    (trials,) = read_source(root).studies
    assert trials.values.tolist() == [0.9, 0.1] and trials.order_by.startswith("first report's time")
    np.testing.assert_array_equal(trials.order, [1000 * (_START + 100), 1000 * (_START + 500)])


def test_one_trials_result_json_is_refused_not_read_as_a_trial_per_iteration(experiment, tmp_path):
    result = next(experiment.glob("train_fn_a1b2c_00000*")) / "result.json"
    renamed = tmp_path / "scores.jsonl"
    renamed.write_bytes(result.read_bytes())
    for path in (result, renamed):
        assert sniff(path) == "ray-tune"
        with pytest.raises(DataError, match="one Ray Tune trial's reports .* give the experiment directory"):
            read_source(path)
    assert sniff(experiment) == "ray-tune"


def test_a_symlink_out_of_the_directory_is_refused_and_never_followed(experiment, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _trial(outside, 7, [{"acc": 0.99}])
    os.symlink(next(outside.iterdir()), experiment / "train_fn_linked")
    with pytest.raises(DataError) as caught:
        read_source(experiment)
    message = str(caught.value)
    assert "train_fn_linked is a symlink out of the experiment directory" in message and "\n" not in message
    os.remove(experiment / "train_fn_linked")
    result = next(experiment.glob("train_fn_a1b2c_00001*")) / "result.json"
    result.unlink()
    os.symlink("/etc/passwd", result)
    with pytest.raises(DataError, match="result.json is a symlink out of the experiment directory"):
        read_source(experiment)


def test_a_symlink_inside_is_not_followed_twice(experiment):
    os.symlink(next(experiment.glob("train_fn_a1b2c_00000*")), experiment / "alias")
    assert read_source(experiment).studies[0].values.size == 5


def test_a_last_line_cut_short_is_left_out_a_bad_line_before_is_one_line(experiment):
    result = next(experiment.glob("train_fn_a1b2c_00000*")) / "result.json"
    text = result.read_text()
    result.write_text(text + '{"acc": 0.99, "trial_id": "a1b2c_00')
    (trials,) = read_source(experiment).studies
    assert trials.values[0] == 0.6 and any("its last line (4) is incomplete" in n for n in trials.notes)
    result.write_text(text[:40] + "\n" + text)
    with pytest.raises(DataError, match=r"result.json: line 1: not valid JSON"):
        read_source(experiment)


def test_a_copied_trial_is_not_a_second_trial(experiment):
    copy = experiment / "train_fn_a1b2c_00000_copy"
    copy.mkdir()
    (copy / "result.json").write_text((next(experiment.glob("train_fn_a1b2c_00000_0*")) / "result.json").read_text())
    with pytest.raises(DataError, match="trial 'a1b2c_00000' in two directories"):
        read_source(experiment)


def test_a_search_algorithms_state_is_provenance_and_its_pickle_never_opened(experiment):
    (experiment / "searcher-state-2025-01-01_00-00-00.pkl").write_bytes(b"not a pickle at all")
    (trials,) = read_source(experiment).studies
    assert any("an adaptive search, not random search" in p for p in trials.provenance)


def test_a_huge_experiment_is_refused_by_estimate(experiment, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")  # 1 kB
    with pytest.raises(DataError, match="over the memory limit of .* raise SIMSTUDY_MAX_MEMORY_GB"):
        read_source(experiment)


def test_study_picks_the_experiment_by_its_name(experiment):
    assert read_source(experiment, study="tune_svm").studies[0].name == "tune_svm"
    with pytest.raises(DataError, match="no study 'other'; the source holds 'tune_svm'"):
        read_source(experiment, study="other")


def test_a_real_experiment_is_what_ray_reported():
    reported = json.loads((DATA / "expected2.json").read_text())["ray_exp"]
    assert sniff(DATA / "ray_exp") == "ray-tune"
    (trials,) = read_source(DATA / "ray_exp").studies
    ids = sorted(reported)  # Ray's trial ids, counter last: the order Ray created the trials
    assert trials.metric == "acc" and trials.direction is None  # TuneConfig's mode is only in tuner.pkl
    np.testing.assert_array_equal(trials.values, [reported[i]["last"] for i in ids])
    assert trials.states == tuple("failed" if reported[i]["error"] else "complete" for i in ids)
    (best,) = read_source(DATA / "ray_exp", reduce="max").studies
    np.testing.assert_array_equal(best.values, [max(reported[i]["acc"]) for i in ids])
    assert "metric 'acc' as the experiment state records it" in trials.notes
    assert trials.provenance[0].startswith("BasicVariantGenerator")


def test_reading_changes_nothing_in_the_directory():
    def files():
        found = sorted((DATA / "ray_exp").rglob("*"))
        return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in found if p.is_file()}

    before = files()
    read_source(DATA / "ray_exp")
    sniff(DATA / "ray_exp")
    assert files() == before


def test_nested_metrics_are_named_as_progress_csv_names_them(tmp_path):
    root = tmp_path / "exp"
    root.mkdir()
    _trial(root, 0, [{"val": {"acc": 0.5, "loss": 1.0}}])
    _trial(root, 1, [{"val": {"acc": 0.6, "loss": 2.0}}])
    (trials,) = read_source(root, metric="val/acc").studies
    assert trials.values.tolist() == [0.5, 0.6]


def test_trials_the_state_knows_without_a_directory_are_said(experiment):
    state = {"trial_data": [[json.dumps({"trial_id": "a1b2c_00011", "status": "PENDING"}), "{}"]]}
    (experiment / "experiment_state-2025-01-01_00-00-00.json").write_text(json.dumps(state))
    (trials,) = read_source(experiment).studies
    assert trials.values.size == 5
    assert "1 trial in the experiment state without a directory (a1b2c_00011): not started, not read" in trials.notes


def test_a_storage_path_of_several_experiments_gives_a_study_each(tmp_path):
    storage = tmp_path / "ray_results"
    for name, acc in (("exp_b", 0.2), ("exp_a", 0.1)):
        (storage / name).mkdir(parents=True)
        _trial(storage / name, 0, [{"acc": acc}])
    assert sniff(storage) == "ray-tune"
    source = read_source(storage)
    assert [(t.name, t.values.tolist()) for t in source.studies] == [("exp_a", [0.1]), ("exp_b", [0.2])]
    assert [t.name for t in read_source(storage, study="exp_b").studies] == ["exp_b"]
    os.symlink(tmp_path, storage / "out")
    with pytest.raises(DataError, match="out is a symlink out of the experiment directory"):
        read_source(storage)


def test_a_recorded_metric_that_no_trial_reports_is_one_line(experiment):
    (experiment / "experiment_state-2025-01-01_00-00-00.json").write_text(
        json.dumps({"runner_data": {"_metric": "f1"}})
    )
    with pytest.raises(DataError, match="the metric 'f1' its metadata names is never reported as a number"):
        read_source(experiment)
    assert read_source(experiment, metric="acc").studies[0].metric == "acc"
