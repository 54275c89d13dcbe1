"""simstudy.commands.sources (``simstudy sources data=X``): what a tuning source holds, from Python and the command
line, on the real sources of tests/sources/data (written by the frameworks themselves: make_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import one_line_error, simstudy

from simstudy.commands import sources
from simstudy.datasets import DataError
from simstudy.schema import ConfigError

DATA = Path(__file__).resolve().parents[1] / "sources" / "data"


def test_it_lists_every_study_with_what_optuna_reported():
    listing = sources.run({"data": str(DATA / "optuna.db")})
    expected = json.loads((DATA / "expected.json").read_text())["optuna.db"]
    assert sorted(t.name for t in listing.source.studies) == sorted(expected)
    for t, check in zip(listing.source.studies, listing.checks, strict=True):
        states = expected[t.name]["states"]
        assert len(t.states) == len(states) and check.n == states.count("COMPLETE")
    text = "\n".join(sources.lines(listing))
    assert "study 'random': 12 trials: 9 complete, 2 failed, 1 pruned; metric value, maximize" in text
    assert "sampler: GridSampler (a grid search)" in text and "order test: " in text


def test_its_order_test_is_the_data_commands_own():
    from simstudy.commands import curve

    listing = sources.run({"data": str(DATA / "optuna.db"), "study": "grid"})
    result = curve.run({"data": str(DATA / "optuna.db"), "model": "grid"})
    assert listing.checks[0].pvalue == result.config.data.found.checks[0].pvalue


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({}, "data must be a tuning source"),
        ({"data": "s.db", "objective": "-1"}, "objective must be an integer >= 0 .*got '-1'"),
        ({"data": "s.db", "reduce": "median"}, "reduce must be one of last, best, max, min, mean, got 'median'"),
        ({"data": "s.db", "study": ""}, "study must be a name, got ''"),
    ],
)
def test_a_bad_key_is_one_line_at_parse(keys, message):
    with pytest.raises(ConfigError, match=message):
        sources.parse(keys)


def test_a_file_of_scores_is_no_source(tmp_path):
    (tmp_path / "s.csv").write_text("score\n0.1\n0.2\n")
    with pytest.raises(DataError, match="not a tuning source this reader knows"):
        sources.run({"data": str(tmp_path / "s.csv")})


@pytest.mark.system  # the command line end to end: its lines, its one-line refusal, and nothing written
def test_the_command_line_lists_a_source_and_writes_nothing(tmp_path):
    proc = simstudy("sources", f"data={DATA / 'optuna.db'}", "study=tpe", cwd=tmp_path)
    assert "study 'tpe': 16 trials: 14 complete, 1 running, 1 waiting; metric value, minimize" in proc.stdout
    assert "order test: Not random search" in proc.stdout
    proc = simstudy("sources", f"data={DATA / 'mlflow.db'}", cwd=tmp_path, check=False)
    one_line_error(proc, "logs the metrics 'accuracy', 'loss': choose one with metric=KEY")
    assert not any(tmp_path.iterdir())
