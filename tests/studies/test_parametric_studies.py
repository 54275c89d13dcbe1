"""Every single-distribution study runs on the noisy quadratic law (support: the whole line), tiny scale, and
reports the law's closed-form truths (the pair and arm studies need two or more named models)."""

import numpy as np
import pytest

from simstudy import config
from simstudy.distributions import NoisyQuadratic
from simstudy.stats import truth
from simstudy.studies import band_coverage, band_width, bootstrap_coverage, evp_accuracy

LAW = {"kind": "noisy_quadratic", "a": 0.6, "b": 0.9, "c": 3, "o": 0.01}

STUDIES = {
    "evp_accuracy": (evp_accuracy, {"reps": 40, "chunk_reps": 40, "save_replicates": False}),
    "band_coverage": (band_coverage, {"reps": 16, "chunk_reps": 16, "sample_size": 8, "levels": [0.5, 0.9]}),
    "band_width": (band_width, {"reps": 8, "chunk_reps": 8, "sample_sizes": [6], "max_k": 8,
                                "methods": ["ks", "ld_highest_density"]}),
    "bootstrap_coverage": (bootstrap_coverage, {"reps": 8, "chunk_reps": 8, "sample_size": 8, "resamples": 50}),
}


def _run(kind, tmp_path):
    module, options = STUDIES[kind]
    cfg = config.parse({
        "seed": 11, "distribution": dict(LAW), "budget": {"B": 8}, "estimators": {"u": {"method": "u"},
                                                                                 "v": {"method": "v"}},
        "study": {"name": kind, "kind": kind, **options},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    })
    return module.run(cfg, tmp_path).summary


@pytest.mark.parametrize("kind", sorted(STUDIES))
def test_study_runs_on_the_noisy_quadratic_with_exact_truths(kind, tmp_path):
    s = _run(kind, tmp_path)
    law = NoisyQuadratic(0.6, 0.9, 3, 0.01)
    if kind == "evp_accuracy":
        got = s[(s.estimator == "truth") & (s.measure == "expected_max")].sort_values("n")
        np.testing.assert_allclose(got.estimate, law.mean_tuning_curve(np.arange(1.0, 9.0)), rtol=0, atol=1e-15)
        # The exact bias comes from order-statistic means by quadrature; the mean of all B of them is E[Y].
        osm = truth.order_statistic_means(law, 8)
        assert osm.mean() == pytest.approx(law.mean, abs=1e-10)
        assert osm[-1] == pytest.approx(law.mean_tuning_curve([8.0])[0], abs=1e-10)
    elif kind == "band_width":
        for curve_kind, exact in (("median", law.quantile_tuning_curve(np.arange(1.0, 9.0))),
                                  ("mean", law.mean_tuning_curve(np.arange(1.0, 9.0)))):
            got = s[(s.method == "truth") & (s.kind == curve_kind)].sort_values("k").estimate
            np.testing.assert_allclose(got, exact, rtol=0, atol=1e-15)
        # Bands over the whole line: the point curves stay finite, a mean band reaching an end is infinite.
        point = s[(s.measure == "point")].estimate
        assert np.isfinite(point).all() and not s.estimate.isna().any()
    elif kind == "bootstrap_coverage":
        got = s[s.estimator == "v"].sort_values("k")
        np.testing.assert_allclose(got.truth, law.mean_tuning_curve(got.k.to_numpy(float)), rtol=0, atol=1e-15)
    else:  # band_coverage: no truth column; exact coverage needs the true quantile curve, checked per sample
        assert s.estimate.between(0, 1).all() and (s.reps == 16).all()
