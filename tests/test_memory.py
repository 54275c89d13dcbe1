"""Bounded memory: large inputs are computed in bounded blocks or refused before any compute."""

import tracemalloc

import numpy as np

from simstudy import curves


def test_curve_of_a_large_sample_needs_no_weight_matrix():
    # 200,000 scores: the n x B weight matrix would be 320 GB; the windowed blocks keep the peak to a few
    # blocks of estimators.BLOCK entries (32 MB each) and the O(B) arrays.
    x = np.random.default_rng(9401).uniform(size=200_000)
    tracemalloc.start()
    try:
        table = curves.evp_curves({"big": x})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert len(table) == x.size and table["n"].iloc[-1] == x.size
    # n = 1 is the sample mean exactly; the curve rises and stays below the maximum
    assert abs(table["expected_max"].iloc[0] - x.mean()) < 1e-12
    assert np.all(np.diff(table["expected_max"]) >= -1e-15) and table["expected_max"].iloc[-1] <= x.max()
