import numpy as np
import pytest
from scipy import stats

from simstudy import boundary


@pytest.mark.parametrize("n", [1, 2, 7, 48, 140])
@pytest.mark.parametrize("eps", [0.05, 0.15, 0.3])
def test_exact_coverage_matches_the_ks_distribution(n, eps):
    # The KS band as bounds on the order statistics: l_i = i/n - eps, u_i = (i-1)/n + eps.
    i = np.arange(1, n + 1)
    p = boundary.simultaneous_coverage(np.clip(i / n - eps, 0, 1), np.clip((i - 1) / n + eps, 0, 1))
    assert p == pytest.approx(stats.kstwo.cdf(eps, n), abs=1e-12)


def test_single_uniform():
    assert boundary.simultaneous_coverage([0.2], [0.7]) == pytest.approx(0.5, abs=1e-14)
    assert boundary.simultaneous_coverage([0.5], [0.4]) == 0.0


def test_two_uniforms_by_integration():
    # P(U_(1) <= 0.3, U_(2) >= 0.6) for two uniforms: 1 - P(U1>0.3 and U2>0.3) - P(both < 0.6) + P(both in (0.3, 0.6))
    p = boundary.simultaneous_coverage([0.0, 0.6], [0.3, 1.0])
    assert p == pytest.approx(1 - 0.7**2 - 0.6**2 + 0.3**2, abs=1e-14)


@pytest.mark.parametrize("kind", boundary.KINDS)
@pytest.mark.parametrize("n, confidence", [(6, 0.5), (48, 0.9), (200, 0.8)])
def test_ld_level_is_exact_and_agrees_with_simulation(kind, n, confidence, rng):
    ld = boundary.ld_pointwise_level(n, confidence, kind)
    assert abs(ld.achieved - confidence) < 1e-10
    assert confidence < ld.pointwise < 1 - (1 - confidence) / n  # between the pointwise and Bonferroni levels
    reps = 20_000
    u = np.sort(rng.uniform(size=(reps, n)), axis=1)
    hits = int(np.all((u >= ld.low) & (u <= ld.high), axis=1).sum())
    low, high = stats.binomtest(hits, reps).proportion_ci(0.999, method="exact")
    assert low <= confidence <= high


def test_cache_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    boundary._ld_intervals_cached.cache_clear()
    first = boundary.ld_intervals(30, 0.8)
    files = list((tmp_path / "ld_intervals").glob("*.npz"))
    assert len(files) == 1
    boundary._ld_intervals_cached.cache_clear()
    monkeypatch.setattr(boundary, "ld_pointwise_level", lambda *a: pytest.fail("recomputed despite the cache"))
    again = boundary.ld_intervals(30, 0.8)
    np.testing.assert_array_equal(first.low, again.low)
    assert again.pointwise == first.pointwise
    boundary._ld_intervals_cached.cache_clear()


def test_unknown_kind():
    with pytest.raises(ValueError, match="choose one of: equal_tailed, highest_density"):
        boundary.ld_intervals(5, 0.5, "shortest")
