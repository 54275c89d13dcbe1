"""Issue 25, the hostile probe's follow-ups: sizes refused before any compute, the extrapolation's law outside
[low, high] said plainly, the terminal's numbers and words, budgets given twice."""

from __future__ import annotations

import numpy as np
import pytest

from simstudy import _limits, config
from simstudy.commands import audit, extrapolate
from simstudy.schema import ConfigError


@pytest.fixture
def limits(monkeypatch):
    """Fixed limits, whatever the machine: 2 GB, 30 minutes, 2 workers."""
    monkeypatch.setenv(_limits.MEMORY_ENV, "2")
    monkeypatch.delenv(_limits.TIME_ENV, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(25)
    x = np.clip(0.9 + 0.03 * rng.standard_normal(30), 0, 1)
    path = tmp_path / "acc.csv"
    path.write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    return path


# 1. sizes beyond memory or the time limit: one line at parse time, nothing written


def test_extrapolate_n_boot_beyond_memory_is_refused_at_parse(limits):
    with pytest.raises(ConfigError, match=r"^n_boot=1000000000 needs about 1.\d+ TB .*: lower n_boot"):
        extrapolate.parse({"data": "scores.csv", "n_boot": 10**9})


def test_extrapolate_n_boot_beyond_the_time_limit_is_refused_at_parse(limits):
    with pytest.raises(ConfigError, match=r"^n_boot=1000000 needs about .* hours .*the limit is 30 min"):
        extrapolate.parse({"data": "scores.csv", "n_boot": 10**6})
    assert extrapolate.parse({"data": "scores.csv", "n_boot": 1000}).n_boot == 1000  # seconds: accepted


@pytest.mark.parametrize(
    "key, value",
    [("rounds", 10**10), ("resamples", 10**9), ("bootstrap_rounds", 10**8), ("evp_reps", 10**11)],
)
def test_audit_sizes_beyond_the_limits_are_refused_at_parse(limits, key, value):
    with pytest.raises(ConfigError, match=rf"^{key}={value} needs about .*; the limit is .*: lower .*{key}"):
        audit.parse({"data": "scores.csv", key: value})


def test_audit_defaults_are_accepted(limits):
    assert audit.parse({"data": "scores.csv"}).rounds == 1024


def test_audit_cost_is_checked_again_with_the_scores_n(limits, monkeypatch, run_cli, scores_csv, tmp_path):
    # 3e7 rounds pass the parse (2 scores: 15 s) but not with the file's 30 scores (3.8 min > 1 min)
    monkeypatch.setenv(_limits.TIME_ENV, "1")
    status, out, err = run_cli("audit", f"data={scores_csv}", "rounds=30000000", "hydra.run.dir=out")
    assert status == 2
    assert err.strip().splitlines()[-1].startswith("simstudy: error: rounds=30000000 needs about 3.8 min")
    assert "30 scores per simulated search" in err
    assert not (tmp_path / "out").exists()


def test_audit_stops_in_one_line_when_a_study_has_failed_chunks():
    # An empty coverage summary (every chunk failed: a MemoryError in a worker) reached the figure as a
    # KeyError: 'distribution'; the audit now stops at the failed study instead.
    import pandas as pd

    from simstudy.engine.runner import Failure, RunReport
    from simstudy.studies import audit
    from simstudy.studies.base import StudyResult

    failure = Failure("ab12", 0, (1, 0), "MemoryError: Unable to allocate 12 GiB", "Traceback ...")
    report = RunReport(
        tasks=20, resumed=0, computed=0, wall_seconds=0.0, compute_seconds=0.0, warnings=(), failures=(failure,)
    )
    result = StudyResult(pd.DataFrame(), report, {}, "band_coverage")
    with pytest.raises(audit.AuditFailed, match=r"^the band coverage: 1 of 20 chunks failed; first: chunk ab12/0: "):
        audit._complete(result, "the band coverage")


# 4. a budget given twice


@pytest.mark.parametrize("key, value, twice", [("B", [10, 10], "10"), ("n", [3, 3, 5], "3")])
def test_a_budget_listed_twice_is_refused(key, value, twice):
    budget = {"B": 10, "n": None, key: value}
    with pytest.raises(
        ConfigError, match=rf"^budget\.{key} lists {twice} more than once, got \[.*give each value once"
    ):
        config._budget(budget)  # what parse() calls for the budget group


# 3. the terminal's numbers and words


def test_curve_table_says_min_for_minimize_and_large_magnitudes_in_significant_digits():
    import pandas as pd

    from simstudy.commands.curve import _curve_table

    table = pd.DataFrame({"model": "m", "n": [1, 2], "expected_max": [1e300, 2.5e300], "std": [1e299, 0.0]})
    text = _curve_table(table, "expected min")
    assert text.splitlines()[0].startswith("expected min of n trials ± its SD")
    assert "1e+300 ± 1e+299" in text and "2.5e+300 ± 0.0000" in text
    assert max(len(line) for line in text.splitlines()) < 120


def test_curve_terminal_header_says_min_with_minimize(run_cli, tmp_path):
    (tmp_path / "loss.csv").write_text("loss\n" + "\n".join(str(0.1 * i) for i in range(1, 9)) + "\n")
    status, out, err = run_cli("curve", "data=loss.csv", "minimize=true", "hydra.run.dir=out")
    assert status == 0, err
    assert "expected min of n trials" in out and "expected max" not in out


@pytest.mark.parametrize("level, shown", [(0.9999999, "99.99999%"), (0.95, "95%"), (0.995, "99.5%"), (0.8, "80%")])
def test_levels_are_printed_as_typed_never_rounded_to_100(level, shown):
    from simstudy.commands._pages import lvl

    assert lvl(level) == shown


def test_extrapolate_fit_log_gives_the_reports_digits(caplog):
    import logging

    from simstudy import extrapolation
    from simstudy.distributions.parametric import NoisyQuadratic

    ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    opts = extrapolate.parse({"data": "scores.csv", "c": 3, "n_boot": 2, "mean": False, "n_jobs": 1})
    with caplog.at_level(logging.INFO, logger="simstudy.extrapolate"):
        (a,) = extrapolation.prepare({"mlp": ys}, opts, "scores.csv")
    law = a.fit.law
    assert f"b = {law.b:.5g}, c = 3, o = {law.o:.3g}, a = {law.a:.4g} (" in caplog.text


# 2. the law's curves beyond [low, high]: said plainly, in EXTRAPOLATE.md and on the terminal


def _near_top(path, minimize=False):
    rng = np.random.default_rng(3)
    x = np.clip(0.93 + 0.03 * rng.standard_normal(40), 0, 1)
    path.write_text(("loss" if minimize else "score") + "\n" + "\n".join(f"{1 - v if minimize else v:.4f}" for v in x))
    return path


@pytest.mark.parametrize("minimize", [False, True])
@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_extrapolation_beyond_the_scale_is_said_plainly(run_cli, tmp_path, minimize):
    data = _near_top(tmp_path / "s.csv", minimize)
    args = ["extrapolate", f"data={data}", "low=0", "high=1", "n_boot=20", "n_jobs=1", "hydra.run.dir=out"]
    status, out, err = run_cli(*args, *(["minimize=true"] if minimize else []))
    assert status == 0, err
    side = "below low=0" if minimize else "above high=1"
    said = f"the law predicts scores {side}: the median curve from k = "
    page = (tmp_path / "out" / "EXTRAPOLATE.md").read_text()
    assert f"- **Warning: {said}" in page and f"Read the curves as capped at {0 if minimize else 1}:" in page
    assert "the noise term o is unbounded" in page
    assert f"s (40 runs): warning: {said}" in out
    assert "= -0 " not in out and "[-0," not in out  # the mirror of a best score of 0 prints 0
    # what the sentence says is what extrapolation.csv holds: the first k past the bound
    curves = __import__("pandas").read_csv(tmp_path / "out" / "extrapolation.csv")
    med = curves[curves["curve"] == "median"].sort_values("k")
    first = med[(med["estimate"] < 0) if minimize else (med["estimate"] > 1)]["k"].iloc[0]
    assert f"the median curve from k = {int(first):,} (" in page or f"from k = {int(first) // 40}n (" in page


def test_no_warning_when_the_curves_stay_within_the_scale():
    import pandas as pd

    from simstudy.commands.extrapolate_page import _beyond_bounds

    curves = pd.DataFrame(
        {
            "model": "m",
            "runs": 10,
            "curve": ["median"] * 3 + ["mean"] * 3,
            "k": [10, 50, 100] * 2,
            "estimate": [0.9, 0.95, 0.99, 0.9, 0.95, 0.99],
            "lower": 0.85,
            "upper": [0.95, 0.99, 1.02, 0.95, 0.99, 0.999],
        }
    )
    assert _beyond_bounds(curves, "m", 10, 0.0, np.inf) == []
    assert _beyond_bounds(curves, "m", 10, 0.0, 1.0) == [
        "the law predicts scores above high=1: the median curve's band from k = 10n. Read the curves as capped at "
        "1: the noise term o is unbounded, so the law's best of k runs passes any bound as k grows "
        "(extrapolation.csv keeps the law's values)"
    ]
