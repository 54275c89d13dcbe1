"""Joint bands of the bootstrap_coverage study: the counts behind them, their coverage, and older chunks."""

import numpy as np
import pandas as pd
from studies.test_bootstrap_coverage import make_config

from simstudy.engine.chunks import ChunkStore
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import bootstrap_coverage


def test_pair_counts_and_bands(tmp_path):
    s = bootstrap_coverage.run(make_config(reps=60), tmp_path).summary
    for path in tmp_path.glob("chunks/*/cell-*/chunk-*.npz"):
        with np.load(path) as chunk:
            pairs, covered = chunk["covered_pairs"], chunk["covered"]
        np.testing.assert_array_equal(np.diagonal(pairs, axis1=1, axis2=2), covered)  # both at k and k: at k
        np.testing.assert_array_equal(pairs, pairs.transpose(0, 2, 1))
        assert np.all(pairs <= np.minimum(covered[:, :, None], covered[:, None, :]))
    half = s.upper_joint - s.estimate
    np.testing.assert_allclose(half, s.estimate - s.lower_joint, atol=1e-12)
    assert (half >= 1.959 * s.mcse).all() and ((half == 0) == (s.mcse == 0)).all()
    assert (half[s.mcse > 0] > 1.96 * s.mcse[s.mcse > 0]).all()


def test_joint_band_covers_a_known_coverage_curve_simultaneously():
    """Rounds whose indicators are known events of two uniforms (coverage curve exactly q, correlated across k):
    the band of :func:`_joint_columns` holds the whole curve in 95% of 200 runs, the pointwise intervals less."""
    q = np.array([0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92])
    R, runs = 400, 200
    rng = np.random.default_rng(2026)
    joint_hits = pointwise_hits = 0
    for _ in range(runs):
        u = rng.random((R, 2))
        inside = u[:, np.arange(q.size) % 2] <= q  # (R, K): even k from the first uniform, odd from the second
        covered = inside.sum(axis=0)[None]
        pairs = (inside.T.astype(np.int64) @ inside.astype(np.int64))[None]
        lower, upper = bootstrap_coverage._joint_columns(covered, pairs, R)
        joint_hits += bool(np.all((lower <= q) & (q <= upper)))
        p = covered[0] / R
        pointwise_hits += bool(np.all(np.abs(p - q) <= 1.96 * np.sqrt(p * (1 - p) / R)))
    low, high = clopper_pearson(joint_hits, runs, 0.999)
    assert low <= 0.95 <= high, (joint_hits / runs, pointwise_hits / runs)
    assert clopper_pearson(pointwise_hits, runs, 0.999)[1] < 0.9, pointwise_hits / runs


def test_old_chunks_without_pair_counts_resume_with_nan_bands(tmp_path):
    cfg = make_config(reps=120)
    fresh = bootstrap_coverage.run(cfg, tmp_path / "fresh").summary
    old = tmp_path / "old"
    bootstrap_coverage.run(cfg, old)
    for path in old.glob("chunks/*/cell-*/chunk-*.npz"):
        fingerprint, cell = path.parent.parent.name, path.parent.name.removeprefix("cell-")
        chunk, reps = path.stem.removeprefix("chunk-").split("-r")
        store = ChunkStore(old / "chunks", fingerprint)
        arrays = store.read(cell, int(chunk), int(reps))
        del arrays["covered_pairs"]
        store.write(cell, int(chunk), int(reps), arrays)
    again = bootstrap_coverage.run(cfg, old)
    assert again.report.computed == 0
    columns = [c for c in fresh.columns if c not in ("lower_joint", "upper_joint")]
    pd.testing.assert_frame_equal(again.summary[columns], fresh[columns])
    assert again.summary[["lower_joint", "upper_joint"]].isna().all().all()
    assert "lower_joint/upper_joint NaN" in (old / "run.json").read_text()
