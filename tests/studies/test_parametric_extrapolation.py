"""How far the fitted noisy quadratic law extrapolates random search: the parametric_extrapolation study, at tiny
scale (a fit of 24-48 scores costs 30-100 ms here)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import special

from simstudy import config
from simstudy.config import ConfigError
from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.stats import bands, truth
from simstudy.studies import parametric_extrapolation as pe

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def make_config(*, seed=0, n_jobs=1, **study):
    study = {"reps": 4, "chunk_reps": 2, "laws": ["nq_c2_r0.1"], "sample_sizes": [24], "n_boot": 4, **study}
    return config.parse({
        "seed": seed, "distribution": {"kind": "truncnorm"}, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "study": {"name": "pe", "kind": "parametric_extrapolation", **study},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
    })


def rows(summary, measure, curve="median"):
    s = summary[summary.measure == measure]
    return s[s.curve == curve] if curve is not None else s


@pytest.mark.system
def test_bit_identical_for_any_n_jobs(tmp_path):
    one = pe.run(make_config(seed=31), tmp_path / "one").summary
    two = pe.run(make_config(seed=31, n_jobs=2), tmp_path / "two").summary
    pd.testing.assert_frame_equal(one, two)
    assert rows(one, "band_coverage")["reps"].eq(4).all()  # every replicate fitted and bootstrapped


def test_summary_is_tidy_with_every_measure(tmp_path):
    s = pe.run(make_config(seed=32, laws=["nq_c1_r0", "kde_reuters_lstm"]), tmp_path).summary
    assert list(s.columns) == ["study", "cell", "distribution", "specified", "n", "nominal", "k", "k_over_n", "curve",
                               "measure", "estimate", "mcse", "ci_low", "ci_high", "reps"]
    ks = pe.budgets(24, None)
    assert ks.size == 18 and ks[0] == 1 and 24 in ks and ks[-1] == 2400  # k = 1, n and 100 n exactly
    for law, spec in (("nq_c1_r0", True), ("kde_reuters_lstm", False)):
        d = s[s.distribution == law]
        assert (d.specified == spec).all() and (d.nominal == 0.8).all() and (d.n == 24).all()
        for curve in ("median", "mean"):
            for measure in ("truth", "prediction", "bias", "rmse", "relative_rmse"):
                got = d[(d.measure == measure) & (d.curve == curve)]
                np.testing.assert_allclose(got.k, ks)
                np.testing.assert_allclose(got.k_over_n, ks / 24)
        assert np.isfinite(d[(d.measure == "rmse")].estimate).all() and (d[d.measure == "rmse"].mcse > 0).all()
        cov = d[d.measure == "band_coverage"]
        assert len(cov) == ks.size and (cov.curve == "median").all()
        assert ((cov.ci_low <= cov.estimate) & (cov.estimate <= cov.ci_high)).all()
        single = set(d[d.k.isna()].measure)
        assert {"p_fail", "p_hit_bound", "p_not_converged", "b_width", "boot_fail"} <= single
        # b has a true value only for a well-specified law: its rows are absent for a misspecified one
        b_rows = {"b_coverage", "b_bias", "b_rmse", "p_c_correct"}
        assert (b_rows & single) == (b_rows if spec else set())
        trivial = d[d.measure == "ld_trivial_k"]
        assert trivial.estimate.iloc[0] == bands.trivial_budget(24, 0.8, "ld_highest_density")
        assert trivial.k_over_n.iloc[0] == pytest.approx(trivial.estimate.iloc[0] / 24)
    assert "b_coverage" not in set(s[s.distribution == "kde_reuters_lstm"].measure)


def test_truth_columns_are_the_exact_curves(tmp_path):
    cfg = make_config(seed=33, laws=["nq_c2_r0", "nq_c3_r0.3", "kde_reuters_mlp"], reps=2, n_boot=0,
                      k_over_n=[0.5, 1, 10, 100])
    s = pe.run(cfg, tmp_path).summary
    ks = np.array([12.0, 24.0, 240.0, 2400.0])
    # noise-free c = 2: closed forms
    med = rows(s[s.distribution == "nq_c2_r0"], "truth").estimate.to_numpy()
    np.testing.assert_allclose(med, 0.9 - 0.4 * (1 - 0.5 ** (1 / ks)), rtol=1e-12)
    mean = rows(s[s.distribution == "nq_c2_r0"], "truth", "mean").estimate.to_numpy()
    gap = np.exp(special.gammaln(ks + 1) + special.gammaln(2.0) - special.gammaln(ks + 2.0))
    np.testing.assert_allclose(mean, 0.9 - 0.4 * gap, rtol=1e-12)
    law = NoisyQuadratic(0.5, 0.9, 3, 0.3 * 0.4)
    d = s[s.distribution == "nq_c3_r0.3"]
    np.testing.assert_array_equal(rows(d, "truth").estimate, law.quantile_tuning_curve(ks))
    np.testing.assert_array_equal(rows(d, "truth", "mean").estimate, law.mean_tuning_curve(ks))
    kde = pe.law("kde_reuters_mlp").build()
    d = s[s.distribution == "kde_reuters_mlp"]
    np.testing.assert_array_equal(rows(d, "truth").estimate, truth.quantile_tuning_curve(kde, ks))
    np.testing.assert_array_equal(rows(d, "truth", "mean").estimate, truth.mean_tuning_curve(kde, ks))
    assert not (s.measure == "band_coverage").any()  # n_boot = 0: no bootstrap, no coverage rows


def test_a_well_specified_fit_predicts_the_median_curve_at_k_n(tmp_path):
    s = pe.run(make_config(seed=34, laws=["nq_c2_r0"], sample_sizes=[48], reps=12, chunk_reps=12, n_boot=0,
                           k_over_n=[1]), tmp_path).summary
    rmse = rows(s, "rmse").iloc[0]
    # The true median best of 48 is 0.8943 on a support of width 0.4, and the best of 48 itself varies from
    # search to search by 0.4/48 = 0.008 (SD): the fit's prediction is about as close (RMSE 0.010 here).
    assert rows(s, "truth").estimate.iloc[0] == pytest.approx(0.9 - 0.4 * (1 - 0.5 ** (1 / 48)))
    assert rmse.estimate < 0.02 and rmse.reps == 12
    assert rows(s, "p_fail", None).estimate.iloc[0] == 0


def test_law_names_parse_and_match_the_shipped_configs():
    law = pe.law("nq_c4_r0.3")
    assert law.specified and dict(law.params) == {"a": 0.5, "b": 0.9, "c": 4, "o": pytest.approx(0.12)}
    assert not pe.law("kde_deberta").specified
    shipped = {}
    for file in ("kde_reuters.yaml", "kde_deberta_mnli.yaml"):
        shipped.update(yaml.safe_load((CONFIGS / "distribution" / file).read_text()))
    for name, key in (("kde_reuters_mlp", "mlp"), ("kde_reuters_lstm", "lstm"), ("kde_deberta", "deberta"),
                      ("kde_debertav3", "debertav3")):
        law = pe.law(name)
        assert {"kind": law.kind, **dict(law.params)} == shipped[key]
    bag = yaml.safe_load((CONFIGS / "distribution" / "truncnorm_bag.yaml").read_text())
    law = pe.law("truncnorm_bag")
    assert {"kind": law.kind, "name": "truncnorm_bag", **dict(law.params), "seed": "${seed}"} == bag
    assert set(pe.LAW_NAMES) >= {f"nq_c{c}_r{r}" for c in (1, 2, 3, 4) for r in ("0", "0.1", "0.3")}


@pytest.mark.parametrize("study, message", [
    ({"laws": ["nq_c2_r0.1", "deberta"]},
     r"study.laws: unknown law 'deberta' \(valid: nq_c<C>_r<R> \(noisy quadratic, a=0.5, b=0.9, c = C in 1..10, "
     r"o/\(b - a\) = R >= 0, e.g. nq_c2_r0.1\), kde_reuters_mlp, kde_reuters_lstm, kde_deberta, kde_debertav3, "
     r"truncnorm_bag\)"),
    ({"laws": ["nq_c11_r0"]}, r"study.laws: unknown law 'nq_c11_r0' \(valid: "),
    ({"k_over_n": [1, 0]}, r"study.k_over_n must be a ratio k/n > 0, got 0"),
    ({"k_over_n": -2}, r"study.k_over_n must be a ratio k/n > 0, got -2"),
    ({"level": 1.0}, r"study.level must be a number strictly between 0 and 1, got 1.0"),
    ({"level": 0}, r"study.level must be a number strictly between 0 and 1, got 0"),
    ({"threshold": 1}, r"study.threshold must be a quantile in \[0, 1\), got 1"),
    ({"n_boot": 1}, r"study.n_boot must be 0 \(no bootstrap\) or an integer >= 2, got 1"),
    ({"sample_sizes": [12]}, r"study.sample_sizes: n=12 leaves 6 scores above the threshold quantile 0.5; a fit "
                             r"needs 8 \(raise n or lower study.threshold\)"),
    ({"sample_sizes": [200_000]}, r"study.sample_sizes: n=200000 leaves 100,000 scores above the threshold quantile "
                                  r"0.5; a fit takes at most 50,000"),
    ({"bogus": 1}, r"study.bogus is not a setting"),
])
def test_bad_options_are_one_line_errors_naming_the_key(study, message):
    with pytest.raises(ConfigError, match="^" + message) as err:
        make_config(**study)
    assert "\n" not in str(err.value)
