"""Exact coverage of the LD bands in simulation (Lourie et al. §5.2), small scale."""

import numpy as np
import pytest
from scipy import stats

from simstudy import config
from simstudy.studies import band_coverage


def make_config(**study):
    return config.parse({
        "seed": 2,
        "distribution": {"lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}},
        "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "study": {"name": "cov", "kind": "band_coverage", "reps": 1000, "chunk_reps": 500, "sample_size": 20,
                  "levels": [0.5, 0.8], "methods": ["ld_highest_density", "ks", "dkw"], **study},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    })


@pytest.mark.slow
def test_ld_bands_cover_exactly_and_cdf_equals_curve(tmp_path):
    s = band_coverage.run(make_config(), tmp_path).summary
    curve = s[s.check == "curve"].set_index(["method", "nominal"])
    cdf = s[s.check == "cdf"].set_index(["method", "nominal"])
    np.testing.assert_array_equal(curve.estimate, cdf.estimate)  # Prop. 1, sample by sample in aggregate
    for method in ("ld_highest_density", "ks"):
        for level in (0.5, 0.8):
            hits = round(curve.loc[(method, level), "estimate"] * 1000)
            ci = stats.binomtest(hits, 1000).proportion_ci(0.999, method="exact")
            assert ci.low <= level <= ci.high
    for level in (0.5, 0.8):
        ci = stats.binomtest(round(curve.loc[("dkw", level), "estimate"] * 1000), 1000).proportion_ci(0.999)
        assert ci.high >= level  # conservative
    grid = s[s.check == "curve_integer_k"].set_index(["method", "nominal"])
    assert (grid.estimate >= curve.estimate).all()  # integer k only: a weaker event


def test_discrete_distribution_refused():
    with pytest.raises(config.ConfigError, match="needs continuous distributions"):
        config.parse({"seed": 0, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
                      "runner": {"n_jobs": 1, "backend": "loky"},
                      "distribution": {"kind": "empirical", "dataset": "reuters_hedwig", "model": "mlp"},
                      "study": {"name": "c", "kind": "band_coverage", "reps": 10, "chunk_reps": 10}})
