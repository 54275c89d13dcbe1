"""The Figure 1 study of Dodge et al. (2021): statistical checks at paper scale (10,000 replicates, B = 30)."""

import numpy as np
import pandas as pd
import pytest

from simstudy import config
from simstudy.studies import evp_accuracy


def make_config(**overrides):
    cfg = {
        "seed": 0,
        "distribution": {"kind": "truncnorm_bag", "seed": 0},
        "budget": {"B": 30, "n": None},
        "estimators": {"u": {"method": "u"}, "v": {"method": "v"}, "w": {"method": "w"}},
        "study": {"name": "fig1", "kind": "evp_accuracy", "reps": 10_000, "chunk_reps": 2500,
                  "save_replicates": False},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    }
    for dotted, value in overrides.items():  # "section__key" sets one key, "section" replaces it
        section, _, key = dotted.partition("__")
        if key:
            cfg[section][key] = value
        else:
            cfg[section] = value
    return config.parse(cfg)


@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    return evp_accuracy.run(make_config(), tmp_path_factory.mktemp("fig1")).summary


def pick(summary, estimator, measure, n):
    row = summary[(summary.estimator == estimator) & (summary.measure == measure) & (summary.n == n)]
    assert len(row) == 1, (estimator, measure, n)
    return row.estimate.iloc[0], row.mcse.iloc[0]


@pytest.mark.parametrize("n", [1, 5, 10, 20, 30])
@pytest.mark.parametrize("est", ["u", "v", "w"])
def test_monte_carlo_bias_agrees_with_exact_bias(fig1, est, n):
    mc, mcse = pick(fig1, est, "bias", n)
    exact, _ = pick(fig1, est, "exact_bias", n)
    assert abs(mc - exact) < 4 * mcse


@pytest.mark.parametrize("n", [10, 20, 30])
def test_paper_orderings_hold_beyond_monte_carlo_error(fig1, n):
    """Bias(W) < Bias(V) < 0 = Bias(U); Var(W) < Var(V) < Var(U); MSE(V) below both (Dodge et al. 2021, §3.2)."""
    below = lambda est, measure: pick(fig1, est, measure, n)[0] + 3 * pick(fig1, est, measure, n)[1] < 0  # noqa
    above = lambda est, measure: pick(fig1, est, measure, n)[0] - 3 * pick(fig1, est, measure, n)[1] > 0  # noqa
    assert below("w-v", "bias") and below("v", "bias")
    bias_u, mcse_u = pick(fig1, "u", "bias", n)
    assert abs(bias_u) < 4 * mcse_u
    assert below("w-v", "variance") and below("v-u", "variance")
    assert below("v-u", "mse") and above("w-v", "mse")


def test_paired_bias_differences_agree_with_exact(fig1):
    for n in (10, 30):
        for pair in ("v-u", "w-v"):
            e, f = pair.split("-")
            mc, mcse = pick(fig1, pair, "bias", n)
            exact = pick(fig1, e, "exact_bias", n)[0] - pick(fig1, f, "exact_bias", n)[0]
            assert abs(mc - exact) < 4 * mcse


def test_truth_is_exact_expected_max(fig1):
    truth = fig1[(fig1.estimator == "truth")].sort_values("n").estimate.to_numpy()
    assert truth.shape == (30,) and np.all(np.diff(truth) > 0)
    assert np.all(fig1[fig1.measure.isin(["expected_max", "exact_bias", "exact_mean"])].mcse == 0)


def test_summary_is_tidy(fig1):
    assert list(fig1.columns) == ["study", "cell", "distribution", "B", "estimator", "n", "measure", "estimate",
                                  "mcse", "reps", "lower_joint", "upper_joint"]
    assert not fig1.duplicated(["cell", "estimator", "n", "measure"]).any()
    assert set(fig1[fig1.reps > 0].reps) == {10_000}


def _summary(tmp_path, name, **overrides):
    return evp_accuracy.run(make_config(**overrides), tmp_path / name).summary


@pytest.mark.system
def test_bit_identical_for_any_n_jobs_and_backend(tmp_path):
    small = dict(study__reps=3000, study__chunk_reps=500)
    ref = _summary(tmp_path, "a", **small)
    two = _summary(tmp_path, "b", runner__n_jobs=2, **small)
    threads = _summary(tmp_path, "c", runner__n_jobs=2, runner__backend="threading", **small)
    pd.testing.assert_frame_equal(ref, two, check_exact=True)
    pd.testing.assert_frame_equal(ref, threads, check_exact=True)


def test_resume_after_losing_chunks_is_bit_identical(tmp_path):
    small = dict(study__reps=3000, study__chunk_reps=500, study__save_replicates=True)
    ref = evp_accuracy.run(make_config(**small), tmp_path / "run")
    chunks = sorted((tmp_path / "run" / "chunks").rglob("*.npz"))
    assert len(chunks) == 6
    for path in chunks[2:5]:
        path.unlink()  # as if the run had been killed before these finished
    again = evp_accuracy.run(make_config(**small), tmp_path / "run")
    assert again.report.resumed == 3 and again.report.computed == 3
    pd.testing.assert_frame_equal(ref.summary, again.summary, check_exact=True)


def test_replicates_file_matches_summary(tmp_path):
    res = evp_accuracy.run(make_config(study__reps=600, study__chunk_reps=250, study__save_replicates=True),
                           tmp_path / "r")
    reps = pd.read_parquet(res.files["replicates"])
    assert len(reps) == 600 * 3 * 30 and reps.replicate.nunique() == 600
    means = reps.groupby(["estimator", "n"], observed=True).estimate.mean()
    for est in "uvw":
        assert means[(est, 30)] == pytest.approx(pick(res.summary, est, "mean", 30)[0], rel=1e-12)


def test_more_budgets_and_a_bootstrap_estimator(tmp_path):
    cfg = make_config(budget__B=[10, 20], budget__n=[1, 5, 10], study__reps=400, study__chunk_reps=200,
                      estimators={"v": {"method": "v"}, "boot": {"method": "bootstrap", "resamples": 200}})
    s = evp_accuracy.run(cfg, tmp_path / "b").summary
    assert set(s.B) == {10, 20} and set(s.n) == {1, 5, 10}
    # Bootstrap and V agree in expectation: their paired difference is within Monte Carlo error.
    for B in (10, 20):
        row = s[(s.B == B) & (s.estimator == "boot-v") & (s.measure == "bias") & (s.n == 5)]
        assert abs(row.estimate.iloc[0]) < 4 * row.mcse.iloc[0]


@pytest.mark.slow
@pytest.mark.parametrize("distribution", [
    {"kind": "truncnorm", "mean": 0.6, "sd": 0.07},                       # truths by quadrature
    {"kind": "empirical", "dataset": "reuters_hedwig", "model": "lstm"},  # real scores, exact sums
])
def test_monte_carlo_agrees_with_exact_bias_on_other_distributions(tmp_path, distribution):
    cfg = make_config(distribution=distribution, budget__B=12, study__reps=20_000, study__chunk_reps=5000)
    s = evp_accuracy.run(cfg, tmp_path / "run").summary
    for est in "uvw":
        for n in (1, 6, 12):
            mc, mcse = pick(s, est, "bias", n)
            assert abs(mc - pick(s, est, "exact_bias", n)[0]) < 4 * mcse


@pytest.mark.slow
def test_bootstrap_never_beats_the_closed_form_and_its_excess_shrinks_with_K(tmp_path):
    """Dodge et al. (2019, §3.2): V has strictly less error than its bootstrap approximation."""
    boots = {f"boot_{K}": {"method": "bootstrap", "resamples": K} for K in (10, 100, 1000)}
    cfg = make_config(budget__B=15, study__reps=1500, study__chunk_reps=500,
                      estimators={"v": {"method": "v"}, **boots},
                      distribution={"bag": {"kind": "truncnorm_bag", "seed": 1},
                                    "continuous": {"kind": "truncnorm"}})
    s = evp_accuracy.run(cfg, tmp_path / "boot").summary
    for dist in ("bag", "continuous"):
        d = s[s.distribution == dist]
        for n in (1, 5, 10, 15):
            for K in (10, 100, 1000):
                excess, mcse = pick(d, f"boot_{K}-v", "mse", n)
                assert excess > -3 * mcse  # never better than V beyond Monte Carlo error
                predicted, p_mcse = pick(d, f"boot_{K}", "excess_mse_predicted", n)
                assert abs(excess - predicted) < 4 * np.hypot(mcse, p_mcse)
            # Decreasing in K: a larger K is never worse beyond Monte Carlo error ...
            for small, large in ((10, 100), (100, 1000)):
                step, step_mcse = pick(d, f"boot_{large}-boot_{small}", "mse", n)
                assert step < 3 * step_mcse
            # ... and going from 10 to 100 resamples helps clearly.
            step, step_mcse = pick(d, "boot_100-boot_10", "mse", n)
            assert step + 3 * step_mcse < 0
