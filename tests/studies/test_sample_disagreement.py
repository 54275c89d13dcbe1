"""How often two random samples disagree whether the second model ever beats the first (Lourie et al. Figure 1)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from simstudy import config
from simstudy.config import ConfigError
from simstudy.engine.runner import chunk_tasks, task_seed
from simstudy.stats import estimators
from simstudy.studies import sample_disagreement
from simstudy.studies.sample_disagreement import draw_sorted, overtakes, p_disagree

A_RUNS = [0.50, 0.55, 0.60, 0.65, 0.70]
B_RUNS = [0.10, 0.30, 0.62, 0.68, 0.80, 0.90]


def make_config(a, b, *, reps=4000, chunk_reps=1000, n_jobs=1, methods="uv", **study):
    return config.parse({
        "seed": 5,
        "distribution": {"a": a, "b": b},
        "budget": {"B": 2},
        "estimators": {m: {"method": m} for m in methods},
        "study": {"name": "sd", "kind": "sample_disagreement", "reps": reps, "chunk_reps": chunk_reps, **study},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
    })


def bag(values):
    return {"kind": "bag", "values": list(values)}


def rows(summary, measure):
    return summary[summary.measure == measure].set_index(["sample_size", "estimator"])


def exact_p(a, b, n, method):
    """P(b's curve above a's at some k) over every pair of n-subsets, each equally likely (without replacement)."""
    hits = total = 0
    for sa in itertools.combinations(sorted(a), n):
        for sb in itertools.combinations(sorted(b), n):
            ea, eb = estimators.expected_max(np.array(sa), method), estimators.expected_max(np.array(sb), method)
            hits += bool((eb > ea).any())
            total += 1
    return hits / total


@pytest.mark.parametrize("method", ["u", "v"])
def test_without_replacement_matches_the_exact_subset_enumeration(tmp_path, method):
    s = sample_disagreement.run(make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=[3], methods=method),
                                tmp_path).summary
    p = exact_p(A_RUNS, B_RUNS, 3, method)
    assert 0.05 < p < 0.95  # a case that tells the sampler apart
    over, dis = rows(s, "p_overtakes").loc[(3, method)], rows(s, "p_disagree").loc[(3, method)]
    assert abs(over.estimate - p) <= 4 * over.mcse
    assert abs(dis.estimate - 2 * p * (1 - p)) <= 4 * dis.mcse


def test_a_dominated_model_never_overtakes_exactly(tmp_path):
    s = sample_disagreement.run(make_config(bag([0.8, 0.9, 0.95]), bag([0.1, 0.2, 0.3]), sample_sizes=[1, 3],
                                            reps=500, chunk_reps=250), tmp_path).summary
    assert (s.estimate == 0).all() and (s.mcse == 0).all() and (s.reps == 500).all()
    assert len(s) == 2 * 2 * 2  # (n, estimator, measure)


def test_identical_continuous_models_at_n_1_overtake_half_the_time(tmp_path):
    # n = 1: the curves are the single draws, so by symmetry p = 1/2 and 2p(1 - p) = 1/2 exactly.
    same = {"kind": "truncnorm", "mean": 0.6, "sd": 0.1}
    s = sample_disagreement.run(make_config(same, same, sample_sizes=[1], replace=True), tmp_path).summary
    for e in "uv":
        over, dis = rows(s, "p_overtakes").loc[(1, e)], rows(s, "p_disagree").loc[(1, e)]
        assert abs(over.estimate - 0.5) <= 4 * over.mcse
        # unbiased, so it may exceed its parameter's maximum 1/2, by at most 1/(2(R - 1))
        assert abs(dis.estimate - 0.5) <= 4 * dis.mcse and dis.estimate <= 0.5 / (1 - 1 / dis.reps) + 1e-12


def test_counts_match_a_per_sample_brute_force(tmp_path):
    cfg = make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=[4], reps=300, chunk_reps=120)
    s = sample_disagreement.run(cfg, tmp_path).summary
    a, b = (d.build() for d in cfg.distributions)
    key = s.cell.iloc[0]
    counts = {"u": 0, "v": 0}
    for task in chunk_tasks(key, cfg.study.reps, cfg.study.chunk_reps):  # the same draws, one sample at a time
        rng = np.random.default_rng(task_seed(cfg.seed, key, task.chunk, 0))
        xa = draw_sorted(a, task.reps, 4, replace=False, rng=rng)
        xb = draw_sorted(b, task.reps, 4, replace=False, rng=rng)
        for i in range(task.reps):
            assert len(set(xa[i])) == 4 and len(set(xb[i])) == 4  # distinct runs (the bags' values are distinct)
            for m in counts:
                counts[m] += bool((estimators.expected_max(xb[i], m) > estimators.expected_max(xa[i], m)).any())
    for m in counts:
        k = rows(s, "p_overtakes").loc[(4, m), "estimate"] * 300
        assert k == pytest.approx(counts[m], abs=1e-9)
        assert rows(s, "p_disagree").loc[(4, m), "estimate"] == pytest.approx(p_disagree(counts[m], 300)[0])


def test_subsets_are_uniform(rng):
    x = draw_sorted(sample_disagreement.Bag(np.arange(5.0)), 20000, 2, replace=False, rng=rng)
    pairs = pd.Series([tuple(r) for r in x]).value_counts()
    assert len(pairs) == 10 and (x[:, 0] < x[:, 1]).all()
    assert np.abs(pairs.to_numpy() / 20000 - 0.1).max() < 4 * np.sqrt(0.1 * 0.9 / 20000)


def test_p_disagree_is_unbiased_and_its_mcse_is_the_u_statistics():
    # Over the binomial distribution of k, E[estimate] = 2p(1 - p) and Var[estimate] = mcse(p)^2 exactly.
    from scipy import stats

    R, p = 12, 0.3
    k = np.arange(R + 1)
    w = stats.binom.pmf(k, R, p)
    est, _ = p_disagree(k, R)
    assert (w * est).sum() == pytest.approx(2 * p * (1 - p), abs=1e-12)
    q = 2 * p * (1 - p)
    var = 4 * (R - 2) / (R * (R - 1)) * (1 - 2 * p) ** 2 * p * (1 - p) + 2 * q * (1 - q) / (R * (R - 1))
    assert (w * (est - q) ** 2).sum() == pytest.approx(var, rel=1e-9)


@pytest.mark.system
def test_bit_identical_for_any_n_jobs(tmp_path):
    one = sample_disagreement.run(make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=[2, 4], reps=900,
                                              chunk_reps=200), tmp_path / "one").summary
    two = sample_disagreement.run(make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=[2, 4], reps=900,
                                              chunk_reps=200, n_jobs=2), tmp_path / "two").summary
    pd.testing.assert_frame_equal(one, two)
    assert list(one.columns) == ["study", "cell", "distribution", "sample_size", "estimator", "measure", "estimate",
                                 "mcse", "reps", "lower_joint", "upper_joint"]


def test_overtakes_is_any_budget():
    a = np.array([[0.70, 0.80], [0.70, 0.80]])
    b = np.array([[0.50, 0.99], [0.10, 0.20]])  # b: behind at k = 1, ahead at k = 2; behind at both
    assert overtakes(a, b, "v").tolist() == [True, False]


@pytest.mark.parametrize("kw, message", [
    ({"dists": {"a": bag(A_RUNS), "b": bag(B_RUNS), "c": bag(A_RUNS)}},
     "a sample_disagreement study compares two models: distribution must name exactly two, got 3"),
    ({"dists": {"a": {"kind": "truncnorm"}, "b": bag(B_RUNS)}},
     "study.replace=false draws subsets of a finite set of runs, but distribution a (truncnorm) is not one"),
    ({"study": {"sample_sizes": [6]}}, "study.sample_sizes: 6 exceeds the 5 runs of a (without replacement"),
    ({"study": {"sample_sizes": [0]}}, "study.sample_sizes must be an integer >= 1, got 0"),
    ({"study": {"replace": "yes"}}, "study.replace must be true or false"),
    ({"estimators": {"boot": {"method": "bootstrap"}}},
     "estimators.boot: a sample_disagreement study takes the closed-form estimators u, v, w"),
])
def test_config_errors_are_one_line(kw, message):
    raw = {"seed": 0, "distribution": kw.get("dists", {"a": bag(A_RUNS), "b": bag(B_RUNS)}), "budget": {"B": 2},
           "estimators": kw.get("estimators", {"v": {"method": "v"}}),
           "study": {"name": "sd", "kind": "sample_disagreement", **kw.get("study", {})},
           "runner": {"n_jobs": 1, "backend": "loky"}}
    with pytest.raises(ConfigError) as exc:
        config.parse(raw)
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_replace_true_takes_sample_sizes_beyond_the_runs(tmp_path):
    s = sample_disagreement.run(make_config(bag(A_RUNS), bag(B_RUNS), sample_sizes=[8], replace=True, reps=200,
                                            chunk_reps=200), tmp_path).summary
    assert set(s.sample_size) == {8} and (s.reps == 200).all()
