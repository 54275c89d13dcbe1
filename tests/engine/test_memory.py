"""Bounded memory: large inputs are computed in bounded blocks or refused before any compute."""

import os
import tracemalloc

import numpy as np
import pytest

from simstudy import config, tables


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_curve_of_a_large_sample_needs_no_weight_matrix():
    # 200,000 scores: the n x B weight matrix would be 320 GB; the windowed blocks keep the peak to a few
    # blocks of estimators.BLOCK entries (32 MB each) and the O(B) arrays.
    x = np.random.default_rng(9401).uniform(size=200_000)
    tracemalloc.start()
    try:
        table = tables.evp_curves({"big": x})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert len(table) == x.size and table["n"].iloc[-1] == x.size
    # n = 1 is the sample mean exactly; the curve rises and stays below the maximum
    assert abs(table["expected_max"].iloc[0] - x.mean()) < 1e-12
    assert np.all(np.diff(table["expected_max"]) >= -1e-15) and table["expected_max"].iloc[-1] <= x.max()


def test_memory_limit_default_and_override(monkeypatch):
    monkeypatch.delenv(config.MEMORY_ENV, raising=False)
    assert config.memory_limit() == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2
    monkeypatch.setenv(config.MEMORY_ENV, "0.5")
    assert config.memory_limit() == 5e8
    config.check_memory("max_k", 10, 5e8, "x", "y")  # at the limit: allowed
    with pytest.raises(config.ConfigError) as info:
        config.check_memory("max_k", 10, 5e8 + 1, "the bands", "lower max_k")
    assert str(info.value) == ("max_k=10 needs about 500 MB (the bands); the limit is 500 MB "
                               "(SIMSTUDY_MAX_MEMORY_GB=0.5): lower max_k")
    for bad in ("0", "-1", "nan", "inf", "12GB"):
        monkeypatch.setenv(config.MEMORY_ENV, bad)
        with pytest.raises(config.ConfigError, match=f"SIMSTUDY_MAX_MEMORY_GB must be a positive number of GB, "
                                                     f"got '{bad}'"):
            config.memory_limit()


def test_ordinary_study_configs_pass_the_memory_check(monkeypatch):
    # The shipped experiments' sizes are far below any machine's limit: the check refuses only the absurd.
    monkeypatch.setenv(config.MEMORY_ENV, "1")
    base = {"seed": 0, "distribution": {"kind": "truncnorm", "mean": 0.6, "sd": 0.07, "low": 0.0, "high": 1.0}, "budget": {"B": [30, 1000], "n": None},
            "estimators": {"v": {"method": "v"}, "u": {"method": "u"}, "boot": {"method": "bootstrap"}},
            "study": {"name": "x", "kind": "evp_accuracy", "reps": 10_000, "chunk_reps": 1000},
            "runner": {"n_jobs": 1, "backend": "sequential"}}
    config.parse(base)  # 2 x 1000 x 1000 weights x (3 + 2) = 40 MB
    base["budget"]["B"] = [30, 5000]  # 5000^2 x 8 x 5 = 1 GB
    with pytest.raises(config.ConfigError, match=r"^budget.B=5000 needs about 1 GB"):
        config.parse(base)
