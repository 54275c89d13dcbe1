"""SMAC3's runhistory.json in its three layouts: a configuration one trial, its runs reduced or refused, costs
minimised, config_origins as provenance.

``data/smac_run`` is a real run written by SMAC 2.4.1 (``make_fixtures2.py``: three seeds of some configurations,
one crash), read against what SMAC's own ``RunHistory`` reported (``data/expected2.json``). The other runhistories
are hand-made following what SMAC's ``RunHistory.save`` writes (SMAC 2.1+: runs as objects, with
``stats``; 2.0: runs as lists; 1.x: key and value pairs with ``{"__enum__": "StatusType.X"}``) and a
``scenario.json`` beside them; SMAC is not installed in the test environment.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from simstudy.score_files import DataError
from simstudy.sources import read_source, sniff

DATA = Path(__file__).resolve().parent / "data"
# (config id, instance, seed, budget, cost, status: SMAC 2's StatusType, 1 SUCCESS, 2 CRASHED, 0 RUNNING)
_RUNS = [
    (1, None, 7, 0.0, 0.5, 1),
    (2, None, 7, 0.0, float("inf"), 2),
    (3, None, 7, 0.0, 0.3, 1),
    (3, None, 8, 0.0, 0.5, 1),
    (4, None, 7, 0.0, 0.0, 0),
]
_ORIGINS = {"1": "Initial Design: Sobol", "2": "Initial Design: Sobol", "3": "Local Search", "4": "Random Search"}
_NAMES = {1: "SUCCESS", 2: "CRASHED", 0: "RUNNING"}


def _entry(layout, run):
    cid, instance, seed, budget, cost, status = run
    if layout == "2.1":
        return dict(
            config_id=cid, instance=instance, seed=seed, budget=budget, cost=cost, time=0.1, cpu_time=0.1,
            status=status, starttime=1.0, endtime=2.0, additional_info={},
        )  # fmt: skip
    if layout == "2.0":
        return [cid, instance, seed, budget, cost, 0.1, status, 1.0, 2.0, {}]
    return [[cid, instance, seed, budget], [cost, 0.1, {"__enum__": f"StatusType.{_NAMES[status]}"}, 1.0, 2.0, {}]]


def _history(tmp_path, layout="2.1", runs=_RUNS, origins=_ORIGINS, scenario=None):
    folder = tmp_path / "smac3_output" / "svm" / "0"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"data": [_entry(layout, r) for r in runs], "configs": {str(r[0]): {"C": r[0]} for r in runs}}
    if origins is not None:
        doc["config_origins"] = origins
    if layout == "2.1":
        doc = {"stats": {"submitted": len(runs), "finished": len(runs) - 1, "running": 1}, **doc}
    (folder / "runhistory.json").write_text(json.dumps(doc, indent=2))
    if scenario is not None:
        (folder / "scenario.json").write_text(json.dumps(scenario))
    return folder / "runhistory.json"


@pytest.mark.parametrize("layout", ["2.1", "2.0", "1.x"])
def test_each_layout_gives_the_same_trials(tmp_path, layout):
    path = _history(tmp_path, layout, scenario={"name": "svm-tuning", "objectives": "cost"})
    assert sniff(path) == "smac3" and sniff(path.parent) == "smac3"
    source = read_source(path, reduce="mean")
    assert source.format == "smac3" and source.schema_version.startswith(f"SMAC {layout[0]}")
    (trials,) = source.studies
    assert trials.name == "svm-tuning" and trials.direction == "minimize" and trials.metric == "cost"
    np.testing.assert_array_equal(trials.values, [0.5, np.nan, 0.4, np.nan])  # the crash cost is left out
    assert trials.states == ("complete", "failed", "complete", "running")
    np.testing.assert_array_equal(trials.order, [1, 2, 3, 4])
    assert trials.notes[0] == "4 configurations: 2 complete, 1 failed, 1 running"


def test_repeated_runs_of_a_configuration_are_refused_without_reduce(tmp_path):
    with pytest.raises(DataError, match="configuration 3 has 2 successful runs at budget 0 .* give reduce=mean"):
        read_source(_history(tmp_path))
    (trials,) = read_source(_history(tmp_path), reduce="min").studies
    assert trials.values[2] == 0.3 and any("reduce=min" in n for n in trials.notes)


def test_config_origins_are_provenance(tmp_path):
    (trials,) = read_source(_history(tmp_path), reduce="mean").studies
    assert trials.provenance == (
        "config_origins: 2 'Initial Design: Sobol', 1 'Local Search', 1 'Random Search' (of 4 configurations)",
        "3 of 4 configurations from an initial design or SMAC's model, not random draws: not random search",
    )
    random = {k: "Random Search" for k in _ORIGINS}
    (trials,) = read_source(_history(tmp_path, origins=random), reduce="mean").studies
    assert trials.provenance[1] == "every configuration drawn at random, as SMAC records it"
    (trials,) = read_source(_history(tmp_path, origins=None), reduce="mean").studies
    assert trials.provenance[0].startswith("not recorded")
    assert trials.name == "0"  # no scenario.json: the folder's name


def test_budgets_the_largest_by_default_and_said(tmp_path):
    runs = [(1, None, 7, 1.0, 0.9, 1), (1, None, 7, 9.0, 0.4, 1), (2, None, 7, 1.0, 0.8, 1)]
    (trials,) = read_source(_history(tmp_path, runs=runs, origins={})).studies
    assert trials.values.tolist() == [0.4, 0.8]
    assert (
        "its cost at its largest budget (the default); 1 configuration stopped below the largest budget 9"
        in (trials.notes[2])
    )


def test_a_multi_objective_cost_by_objective_or_name(tmp_path):
    runs = [(1, None, 7, 0.0, [0.5, 10.0], 1), (2, None, 7, 0.0, [0.4, 20.0], 1)]
    path = _history(tmp_path, runs=runs, scenario={"objectives": ["error", "time"]})
    assert read_source(path).studies[0].values.tolist() == [0.5, 0.4]
    (trials,) = read_source(path, metric="time").studies
    assert trials.values.tolist() == [10.0, 20.0] and trials.metric == "time"
    assert read_source(path, objective=1).studies[0].metric == "time"
    with pytest.raises(DataError, match="objective=2, but the cost has 2 objectives: give objective=0..1"):
        read_source(path, objective=2)
    with pytest.raises(DataError, match="no objective 'f1'; the objectives are 'error', 'time'"):
        read_source(path, metric="f1")


def test_a_truncated_runhistory_is_one_line(tmp_path):
    path = _history(tmp_path)
    path.write_text(path.read_text()[:-200])
    assert sniff(path) == "smac3"
    with pytest.raises(DataError, match="not valid JSON .*a truncated copy\\? copy it again") as caught:
        read_source(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"config_id": "one", "cost": 1, "status": 1}, "config id 'one' is not an integer"),
        ({"config_id": 1, "cost": 1, "status": 9}, "status 9 is not one of SMAC's"),
        ({"config_id": 1, "cost": "low", "status": 1}, "cost 'low' is not a number"),
        ([1, 2], "not a run SMAC writes"),
    ],
)
def test_bad_runs_are_one_line(tmp_path, entry, words):
    path = _history(tmp_path)
    doc = json.loads(path.read_text())
    doc["data"] = [entry]
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError, match=words):
        read_source(path)


def test_a_huge_runhistory_is_refused_by_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "1e-6")
    with pytest.raises(DataError, match="over the memory limit"):
        read_source(_history(tmp_path))


def test_a_real_run_is_what_smac_reported():
    reported = json.loads((DATA / "expected2.json").read_text())["smac_run"]
    ids = sorted(reported, key=int)
    assert sniff(DATA / "smac_run") == "smac3"
    several = [i for i in ids if len(reported[i]["statuses"]) > 1]
    with pytest.raises(DataError, match=f"configuration {several[0]} has 3 successful runs at budget 0"):
        read_source(DATA / "smac_run")
    source = read_source(DATA / "smac_run", reduce="mean")  # SMAC's own aggregate
    assert source.schema_version == "SMAC 2.1+ (runs as objects)"
    (trials,) = source.studies
    assert trials.name == "smac_run" and trials.direction == "minimize"
    crashed = [all(s == 2 for s in reported[i]["statuses"]) for i in ids]  # 2: CRASHED, its crash cost left out
    np.testing.assert_allclose(trials.values, [np.nan if c else reported[i]["cost"] for i, c in zip(ids, crashed)])
    assert trials.states == tuple("failed" if c else "complete" for c in crashed)
    np.testing.assert_array_equal(trials.order, [int(i) for i in ids])
    origins = [reported[i]["origin"] for i in ids]
    random = sum(o == "Random Search" for o in origins)
    assert trials.provenance[1] == (
        f"{len(ids) - random} of {len(ids)} configurations from an initial design or SMAC's model, not random draws: "
        f"not random search"
    )


def test_a_directory_per_seed_gives_a_study_each(tmp_path):
    path = _history(tmp_path, scenario={"name": "svm"})
    seeds = path.parent.parent  # smac3_output/svm: a directory per seed
    (seeds / "1").mkdir()
    for name in ("runhistory.json", "scenario.json"):
        (seeds / "1" / name).write_bytes((path.parent / name).read_bytes())
    assert sniff(seeds) == "smac3"
    source = read_source(seeds, reduce="mean")
    assert [t.name for t in source.studies] == ["svm/0", "svm/1"]
    assert [t.name for t in read_source(seeds, reduce="mean", study="svm/1").studies] == ["svm/1"]
