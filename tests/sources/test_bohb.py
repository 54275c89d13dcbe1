"""HpBandSter's (BOHB's) configs.json and results.json: a configuration one trial at its largest budget, the loss
minimised, ``model_based_pick`` as provenance.

``data/bohb_run`` is a real BOHB run written by HpBandSter 0.7.4 (``make_fixtures2.py``), read against what
HpBandSter's own ``logged_results_to_HBS_result`` reported of it (``data/expected2.json``). The other files are
hand-made following ``hpbandster.core.result.json_result_logger`` (``configs.json``: ``[config_id, config,
config_info]``; ``results.json``: ``[config_id, budget, time_stamps, result, exception]``, JSON lines).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

DATA = Path(__file__).resolve().parent / "data"
_CONFIGS = [([0, 0, 0], False), ([0, 0, 1], False), ([0, 0, 2], False), ([1, 0, 0], True), ([1, 0, 1], True)]
_RESULTS = [  # (config id, budget, loss or None, exception)
    ([0, 0, 0], 1.0, 0.9, None),
    ([0, 0, 1], 1.0, 0.6, None),
    ([0, 0, 2], 1.0, None, "Traceback (most recent call last): ..."),
    ([0, 0, 1], 3.0, 0.4, None),
    ([1, 0, 0], 3.0, 0.5, None),
]


def _run(tmp_path, configs=_CONFIGS, results=_RESULTS):
    folder = tmp_path / "bohb_run"
    folder.mkdir(exist_ok=True)
    with open(folder / "configs.json", "w") as f:
        for cid, pick in configs:
            f.write(json.dumps([cid, {"x": sum(cid)}, {"model_based_pick": pick}]) + "\n")
    with open(folder / "results.json", "w") as f:
        for cid, budget, loss, exception in results:
            stamps = {"submitted": 1.0, "started": 1.1, "finished": 2.0}
            result = None if loss is None else {"loss": loss, "info": {}}
            f.write(json.dumps([cid, budget, stamps, result, exception]) + "\n")
    return folder


def test_a_configuration_is_its_loss_at_its_largest_budget(tmp_path):
    folder = _run(tmp_path)
    for path in (folder, folder / "results.json", folder / "configs.json"):
        assert sniff(path) == "hpbandster"
    source = read_source(folder)
    assert source.format == "hpbandster"
    (trials,) = source.studies
    assert trials.name == "bohb_run" and trials.metric == "loss" and trials.direction == "minimize"
    np.testing.assert_array_equal(trials.values, [0.9, 0.4, np.nan, 0.5, np.nan])
    assert trials.states == ("complete", "complete", "failed", "complete", "running")
    np.testing.assert_array_equal(trials.order, np.arange(5))
    assert trials.notes[:2] == (
        "5 configurations: 3 complete, 1 failed, 1 running",
        "one score per configuration: its loss at its largest budget (the default); 2 configurations stopped "
        "below the largest budget 3",
    )
    assert read_source(folder / "results.json").studies[0].values.size == 5


def test_model_based_pick_is_provenance(tmp_path):
    (trials,) = read_source(_run(tmp_path)).studies
    assert trials.provenance == (
        "model_based_pick true in 2 of 5 configurations: proposed by BOHB's model, not random search",
    )
    configs = [(cid, False) for cid, _ in _CONFIGS]
    (trials,) = read_source(_run(tmp_path, configs=configs)).studies
    assert trials.provenance[0].startswith("model_based_pick false in all 5 configurations: every one drawn at random")


def test_several_results_at_one_budget_are_reduced_or_refused(tmp_path):
    results = [*_RESULTS, ([1, 0, 0], 3.0, 0.3, None)]
    folder = _run(tmp_path, results=results)
    with pytest.raises(DataError, match=r"config \[1, 0, 0\] has 2 results at budget 3: .* give reduce="):
        read_source(folder)
    assert read_source(folder, reduce="best").studies[0].values[3] == 0.3


def test_a_last_line_cut_short_is_noted_a_missing_file_is_one_line(tmp_path):
    folder = _run(tmp_path)
    with open(folder / "results.json", "a") as f:
        f.write('[[1, 0, 1], 3.0, {"submitted"')
    (trials,) = read_source(folder).studies
    assert trials.states[4] == "running" and any("its last line (6) is incomplete" in n for n in trials.notes)
    (folder / "configs.json").unlink()
    with pytest.raises(DataError, match="no configs.json beside the other"):
        read_source(folder / "results.json")


@pytest.mark.parametrize(
    "line, words",
    [
        ('[[0, 0, 0], "big", {}, null, null]', "line 6: not \\[config_id, budget"),
        ('[[9, 9, 9], 1.0, {}, {"loss": 0.1}, null]', "line 6: config \\[9, 9, 9\\] is not in configs.json"),
        ('[[0, 0, 0], 1.0, {}, {"loss": "low"}, null]', "line 6: loss 'low' is not a number"),
    ],
)
def test_bad_lines_are_one_line(tmp_path, line, words):
    folder = _run(tmp_path)
    with open(folder / "results.json", "a") as f:
        f.write(line + "\n")
    with pytest.raises(DataError, match=words):
        read_source(folder)


def test_huge_files_are_refused_by_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="over the memory limit"):
        read_source(_run(tmp_path))


def test_a_real_bohb_run_is_what_hpbandster_reported():
    reported = json.loads((DATA / "expected2.json").read_text())["bohb_run"]
    lines = (DATA / "bohb_run" / "configs.json").read_text().splitlines()
    ids = [json.dumps(json.loads(line)[0]) for line in lines]  # sampling order
    assert sorted(ids) == sorted(reported)
    (trials,) = read_source(DATA / "bohb_run").studies
    losses = [reported[i]["loss"] for i in ids]
    np.testing.assert_array_equal(trials.values, [np.nan if v is None else v for v in losses])
    assert trials.states == tuple("failed" if v is None else "complete" for v in losses)
    picks = sum(reported[i]["model_based_pick"] for i in ids)
    assert trials.provenance == (
        f"model_based_pick true in {picks} of {len(ids)} configurations: proposed by BOHB's model, not random search",
    )
    top = max(r["budget"] for r in reported.values())
    lower = sum(r["budget"] < top for r in reported.values())
    assert trials.notes[1].endswith(f"{lower} configurations stopped below the largest budget {top:g}")


def test_a_run_just_started_is_configurations_without_results(tmp_path):
    folder = _run(tmp_path, results=[])
    assert sniff(folder) == "hpbandster"
    (trials,) = read_source(folder).studies
    assert trials.states == ("running",) * 5 and np.isnan(trials.values).all()
