"""Band-width ablations (Lourie et al. Figures 6-8): the vectorized bands equal the library's, round by round."""

import numpy as np

from simstudy import config
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import task_seed
from simstudy.stats import bands
from simstudy.studies import band_width


def test_average_bands_equal_the_library_bands(tmp_path):
    cfg = config.parse({
        "seed": 5, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
        "distribution": {"lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}},
        "study": {"name": "w", "kind": "band_width", "reps": 3, "chunk_reps": 3, "sample_sizes": [8],
                  "methods": ["ks", "ld_highest_density"], "max_k": 12},
    })
    s = band_width.run(cfg, tmp_path).summary
    key = s.cell.iloc[0]
    y = sample_sorted(cfg.distributions[0].build(), 3, 8, rng=np.random.default_rng(task_seed(5, key, 0, 0)))
    ks = np.arange(1, 13)
    for method in ("ks", "ld_highest_density"):
        for kind in ("median", "mean"):
            tcs = [bands.tuning_curve_bands(row, 0.8, kind, method, ks=ks, low=0, high=1) for row in y]
            for curve in ("lower", "upper", "point"):
                got = s[(s.method == method) & (s.kind == kind) & (s.measure == curve)].sort_values("k").estimate
                np.testing.assert_allclose(got, np.mean([getattr(tc, curve) for tc in tcs], axis=0), rtol=1e-12)
