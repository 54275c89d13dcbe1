"""Pointwise coverage of percentile-bootstrap bands (Lourie et al. Figure 4), small scale."""

import numpy as np
import pytest

from simstudy import config
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import task_seed
from simstudy.stats import estimators
from simstudy.studies import bootstrap_coverage


def make_config(reps=120, **study):
    return config.parse({
        "seed": 4,
        "distribution": {"lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}},
        "budget": {"B": 2}, "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
        "study": {"name": "boot", "kind": "bootstrap_coverage", "reps": reps, "chunk_reps": 60,
                  "sample_size": 12, "resamples": 300, **study},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    })


def test_counts_match_a_direct_computation(tmp_path):
    cfg = make_config(reps=60)
    result = bootstrap_coverage.run(cfg, tmp_path)
    s = result.summary
    dist = cfg.distributions[0].build()
    key = s.cell.iloc[0]
    truth = s[s.estimator == "v"].sort_values("k").truth.to_numpy()
    samples = sample_sorted(dist, 60, 12, rng=np.random.default_rng(task_seed(cfg.seed, key, 0, 0)))
    boot_rng = np.random.default_rng(task_seed(cfg.seed, key, 0, 1))
    covered = {"u": np.zeros(12), "v": np.zeros(12)}
    for x in samples:  # one round at a time, resamples sorted with np.sort of the values
        idx = boot_rng.integers(0, 12, size=(300, 12), dtype=np.int8)
        res = np.sort(x[idx], axis=1)
        for m in "uv":
            curves = estimators.expected_max(res, m)
            low, high = np.quantile(curves, [0.025, 0.975], axis=0)
            covered[m] += (low <= truth) & (truth <= high)
    for m in "uv":
        got = s[s.estimator == m].sort_values("k").estimate.to_numpy() * 60
        np.testing.assert_allclose(got, covered[m], atol=1e-9)


@pytest.mark.slow
def test_coverage_collapses_as_k_grows(tmp_path):
    s = bootstrap_coverage.run(make_config(reps=300), tmp_path).summary
    for m in "uv":
        r = s[s.estimator == m].sort_values("k")
        assert r.ci_high.iloc[-1] < 0.95           # far below nominal at k = n, beyond sampling error
        assert r.estimate.iloc[0] > r.estimate.iloc[-1] + 0.1
