"""Wrong-conclusion rates (Dodge et al. 2021, Figure 2)."""

import numpy as np
import pytest
from scipy import stats

from simstudy import config
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import chunk_tasks, task_seed
from simstudy.stats import estimators, metrics, truth
from simstudy.studies import wrong_conclusions


def make_config(a, b, *, B=(5, 8), reps=600, chunk_reps=200, methods="uvw", **study):
    return config.parse({
        "seed": 3,
        "distribution": {"a": a, "b": b},
        "budget": {"B": list(B), "n": None},
        "estimators": {m: {"method": m} for m in methods},
        "study": {"name": "wc", "kind": "wrong_conclusions", "reps": reps, "chunk_reps": chunk_reps, **study},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    })


A = {"kind": "truncnorm", "mean": 0.60, "sd": 0.07}
B_ = {"kind": "truncnorm", "mean": 0.62, "sd": 0.07}


def rows(summary, measure):
    return summary[summary.measure == measure].set_index(["B", "estimator"])


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_counts_match_a_per_draw_brute_force(tmp_path):
    cfg = make_config(A, B_)
    result = wrong_conclusions.run(cfg, tmp_path)
    wrong = rows(result.summary, "wrong_rate")
    a, b = (d.build() for d in cfg.distributions)
    for key, cell_B in zip(result.summary.drop_duplicates("cell").cell, result.summary.drop_duplicates("cell").B):
        better_a = truth.expected_max(a, cell_B)[0] > truth.expected_max(b, cell_B)[0]
        counts = {m: 0 for m in "uvw"}
        for task in chunk_tasks(key, cfg.study.reps, cfg.study.chunk_reps):  # the same draws, one at a time
            rng = np.random.default_rng(task_seed(cfg.seed, key, task.chunk, 0))
            xa = sample_sorted(a, task.reps, cell_B, rng=rng)
            xb = sample_sorted(b, task.reps, cell_B, rng=rng)
            for i in range(task.reps):
                for m in "uvw":
                    ea = estimators.expected_max(xa[i], m, n=cell_B)[0]
                    eb = estimators.expected_max(xb[i], m, n=cell_B)[0]
                    counts[m] += (ea < eb) if better_a else (ea > eb)
        for m in "uvw":
            assert wrong.loc[(cell_B, m), "estimate"] * cfg.study.reps == pytest.approx(counts[m], abs=1e-9)


def test_identical_models_are_a_true_tie_and_each_wins_half_the_time(tmp_path):
    s = wrong_conclusions.run(make_config(A, A, B=(6,), reps=4000, chunk_reps=1000), tmp_path).summary
    assert rows(s, "true_tie").loc[(6, "truth"), "estimate"] == 1.0
    assert rows(s, "true_gap").loc[(6, "truth"), "estimate"] == 0.0
    assert "wrong_rate" not in set(s.measure)  # no ranking is wrong at a true tie
    wins = rows(s, "a_wins_rate")
    for m in "uvw":
        k = round(wins.loc[(6, m), "estimate"] * 4000)
        low, high = metrics.clopper_pearson(k, 4000, 0.999)
        assert low <= 0.5 <= high


def test_clopper_pearson_intervals(tmp_path):
    s = wrong_conclusions.run(make_config(A, B_, reps=500, chunk_reps=250), tmp_path).summary
    props = s[s.measure.str.endswith("_rate")]
    assert (props.ci_low <= props.estimate).all() and (props.estimate <= props.ci_high).all()
    for k, n in [(0, 50), (3, 50), (50, 50), (17, 1000)]:
        low, high = metrics.clopper_pearson(k, n)
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert (low, high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_estimate_ties_are_counted_apart(tmp_path):
    # Two bags with one value each: every estimate of both models is identical.
    same = {"kind": "bag", "values": [0.5, 0.5]}
    other = {"kind": "bag", "values": [0.5, 0.5, 0.5]}
    s = wrong_conclusions.run(make_config(same, other, B=(4,), reps=50, chunk_reps=50), tmp_path).summary
    assert (rows(s, "tie_rate").estimate == 1.0).all()


def test_reuters_true_ranking_crosses_between_21_and_22(tmp_path):
    mlp = {"kind": "empirical", "dataset": "reuters_hedwig", "model": "mlp"}
    lstm = {"kind": "empirical", "dataset": "reuters_hedwig", "model": "lstm"}
    s = wrong_conclusions.run(make_config(mlp, lstm, B=range(15, 31), reps=200, chunk_reps=200), tmp_path).summary
    gap = rows(s, "true_gap").xs("truth", level="estimator").estimate
    assert (gap.loc[15:21] > 0).all() and (gap.loc[22:30] < 0).all()
    assert len(rows(s, "wrong_rate")) == 16 * 3


def test_needs_exactly_two_models():
    with pytest.raises(config.ConfigError, match="exactly two"):
        config.parse({"seed": 0, "distribution": {"a": A}, "budget": {"B": 5},
                      "estimators": {"u": {"method": "u"}},
                      "study": {"name": "x", "kind": "wrong_conclusions", "reps": 10, "chunk_reps": 5},
                      "runner": {"n_jobs": 1, "backend": "loky"}})
