"""Fixed-confidence selection on the TDSA models (Moss et al. Tables 2-3), small scale."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy import config
from simstudy.studies import fixed_confidence

MODELS = ("atae", "ian", "lstm", "tdlstm", "atae_50", "tdlstm_50")


def make_config(n_jobs=1, **study):
    return config.parse({
        "seed": 3, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
        "distribution": {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m} for m in MODELS},
        "study": {"name": "fc", "kind": "fixed_confidence", "reps": 60, "chunk_reps": 20, "deltas": [0.1, 0.2],
                  "algorithms": ["ttts", "non_adaptive", "batch_thompson"], "batch_sizes": [4], **study},
    })


@pytest.mark.system
def test_summary_table_and_bit_identical_for_any_n_jobs(tmp_path):
    one = fixed_confidence.run(make_config(), tmp_path / "one")
    two = fixed_confidence.run(make_config(n_jobs=2), tmp_path / "two")
    pd.testing.assert_frame_equal(one.summary, two.summary)
    s = one.summary
    assert set(s.algorithm) == {"ttts", "non_adaptive", "batch_thompson_4"}
    assert {"evaluations_min", "evaluations_mean", "evaluations_max", "p_correct", "capped",
            "arm_evaluations"} <= set(s.measure)
    p = s[s.measure == "p_correct"]
    assert (p.arm == "tdlstm").all() and (p.ci_low <= p.estimate).all() and (p.estimate <= p.ci_high).all()
    # every model's mean evaluations add up to the mean total
    for (alg, delta), g in s.groupby(["algorithm", "delta"]):
        total = g[g.measure == "evaluations_mean"].estimate.iloc[0]
        assert g[g.measure == "arm_evaluations"].estimate.sum() == pytest.approx(total)
    table = pd.read_csv(tmp_path / "one" / "table.csv")
    assert len(table) == 6 and (table["min"] >= 18).all() and (table["min"] <= table["max"]).all()
    assert (tmp_path / "one" / "table.md").read_text().startswith("| algorithm | delta |")


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_rerun_resumes_and_more_reps_reuse_chunks(tmp_path):
    first = fixed_confidence.run(make_config(), tmp_path)
    again = fixed_confidence.run(make_config(), tmp_path)
    assert again.report.computed == 0
    pd.testing.assert_frame_equal(first.summary, again.summary)
    more = fixed_confidence.run(make_config(reps=80), tmp_path)
    assert more.report.resumed == 3 and more.report.computed == 1


@pytest.mark.parametrize("study, message", [
    ({"deltas": [0.6]}, "study.deltas must be numbers strictly between 0 and 0.5"),
    ({"algorithms": ["thompson"]}, "study.algorithms"),
    ({"batch_sizes": [0]}, "study.batch_sizes must be an integer >= 1"),
    ({"max_evaluations": 10}, "study.max_evaluations must allow the initial three evaluations"),
    ({"logit": "yes"}, "study.logit must be true or false"),
])
def test_bad_settings_are_config_errors(study, message):
    with pytest.raises(config.ConfigError, match=message):
        make_config(**study)


def test_logit_runs_on_f1_scores_and_needs_scores_inside_the_unit_interval(tmp_path):
    result = fixed_confidence.run(make_config(logit=True, reps=20, algorithms=["ttts"]), tmp_path)
    assert np.isfinite(result.summary.estimate[result.summary.measure == "evaluations_mean"]).all()
    with pytest.raises(config.ConfigError, match=r"study.logit=true needs scores inside \(0, 1\); distribution b"):
        config.parse({
            "seed": 0, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
            "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
            "distribution": {"a": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
                             "b": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 2}},
            "study": {"name": "fc", "kind": "fixed_confidence", "logit": True},
        })


def _rows(summary, measure, algorithm=None):
    s = summary[summary.measure == measure]
    return (s if algorithm is None else s[s.algorithm == algorithm]).sort_values("delta")


def test_counted_initial_leaves_initial_evaluations_out_of_the_counts_on_the_same_chunks(tmp_path):
    small = dict(reps=20, chunk_reps=20, algorithms=["ttts", "non_adaptive"])
    full = fixed_confidence.run(make_config(**small), tmp_path).summary
    part = fixed_confidence.run(make_config(counted_initial=[0, 3], **small), tmp_path)
    assert part.report.computed == 0  # a counting convention: the same runs, reported otherwise
    N = len(MODELS)
    for measure in ("evaluations_min", "evaluations_mean", "evaluations_max"):
        np.testing.assert_allclose(_rows(part.summary, measure, "ttts").estimate,
                                   _rows(full, measure, "ttts").estimate - 3 * N, rtol=1e-12)
        np.testing.assert_array_equal(_rows(part.summary, measure, "non_adaptive").estimate,
                                      _rows(full, measure, "non_adaptive").estimate)
    for (alg, delta), g in part.summary.groupby(["algorithm", "delta"]):
        assert g[g.measure == "arm_evaluations"].estimate.sum() == pytest.approx(
            g[g.measure == "evaluations_mean"].estimate.iloc[0])


def test_initial_per_algorithm_changes_only_that_algorithm(tmp_path):
    small = dict(reps=20, chunk_reps=20, algorithms=["ttts", "non_adaptive"])
    base = fixed_confidence.run(make_config(**small), tmp_path / "base").summary
    five = fixed_confidence.run(make_config(initial=[5, 3], counted_initial=3, **small), tmp_path / "five").summary
    np.testing.assert_array_equal(_rows(five, "evaluations_mean", "non_adaptive").estimate,
                                  _rows(base, "evaluations_mean", "non_adaptive").estimate)
    # TTTS evaluates 5 per model first and counts them as 3: no run reports fewer than 3 per model
    assert (_rows(five, "evaluations_min", "ttts").estimate >= 3 * len(MODELS)).all()
    assert not np.array_equal(_rows(five, "evaluations_mean", "ttts").estimate,
                              _rows(base, "evaluations_mean", "ttts").estimate)


def test_differences_and_runs_for_power(tmp_path):
    cfg = make_config(reps=20, chunk_reps=10, algorithms=["non_adaptive", "batch_thompson"], batch_sizes=[8],
                      distinct_batches=True, common_numbers=True, differences=True)
    s = fixed_confidence.run(cfg, tmp_path).summary
    label = "non_adaptive - batch_thompson_8"
    # a distinct batch of every model is the non-adaptive step: on common numbers the runs are the same
    assert (_rows(s, "evaluations_difference", label).estimate == 0).all()
    assert (_rows(s, "difference_sd", label).estimate == 0).all()
    assert np.isinf(_rows(s, "runs_for_power", label).estimate).all()
    cfg = make_config(reps=20, chunk_reps=10, algorithms=["ttts", "non_adaptive"], differences=True)
    s = fixed_confidence.run(cfg, tmp_path / "unpaired").summary
    label = "ttts - non_adaptive"
    diff, sd = _rows(s, "evaluations_difference", label), _rows(s, "difference_sd", label)
    means = {a: _rows(s, "evaluations_mean", a).estimate.to_numpy() for a in ("ttts", "non_adaptive")}
    np.testing.assert_allclose(diff.estimate, means["ttts"] - means["non_adaptive"])
    mcse = {a: _rows(s, "evaluations_mean", a).mcse.to_numpy() for a in ("ttts", "non_adaptive")}
    np.testing.assert_allclose(diff.mcse, np.hypot(mcse["ttts"], mcse["non_adaptive"]))  # unpaired
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    np.testing.assert_allclose(_rows(s, "runs_for_power", label).estimate,
                               (z * sd.estimate.to_numpy() / diff.estimate.to_numpy()) ** 2)
    table = pd.read_csv(tmp_path / "unpaired" / "table.csv")
    assert set(table.algorithm) == {"ttts", "non_adaptive"}


@pytest.mark.parametrize("study, message", [
    ({"initial": [5, 3]}, r"study.initial must have one value or one per algorithm \(3\), got \[5, 3\]"),
    ({"initial": [2]}, "study.initial must be an integer >= 3, got 2"),
    ({"counted_initial": [4]}, r"study.counted_initial must not exceed study.initial \(3 for ttts\), got 4"),
])
def test_bad_initial_settings_are_config_errors(study, message):
    with pytest.raises(config.ConfigError, match=message):
        make_config(**study)
