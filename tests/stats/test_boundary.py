import re
import warnings
import zipfile

import numpy as np
import pytest
from scipy import stats

from simstudy.engine import ld_cache
from simstudy.stats import boundary


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


# The on-disk cache of LD intervals: an entry is used only if it is what a fresh solution would be.

N, CONF = 30, 0.8


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache holding one genuine entry (n = 30, confidence 0.8, highest density); the fresh result."""
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    boundary._ld_intervals_cached.cache_clear()
    fresh = boundary.ld_intervals(N, CONF)
    boundary._ld_intervals_cached.cache_clear()
    yield ld_cache._cache_path(N, CONF, "highest_density"), fresh
    boundary._ld_intervals_cached.cache_clear()


def signed(path, ld, **changes):
    """Rewrite the entry as the current writer would (valid checksum), with some fields changed."""
    fields = {f: getattr(ld, f) for f in ("n", "confidence", "kind", "pointwise", "low", "high", "achieved")}
    ld_cache._write_entry(path, boundary.LDIntervals(**{**fields, **changes}))


def flip(path, offset):
    blob = bytearray(path.read_bytes())
    blob[offset] ^= 0x20
    path.write_bytes(bytes(blob))


def resaved(path, **arrays):
    """Other arrays under the entry's own comment (key and checksum), as an edit outside simstudy would."""
    with zipfile.ZipFile(path) as zf:
        comment = zf.comment
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as zf:
        zf.comment = comment


def narrowed(path, ld):  # each interval loses a tenth of its width: still monotone, within [0, 1], same shape
    width = ld.high - ld.low
    signed(path, ld, low=ld.low + 0.05 * width, high=ld.high - 0.05 * width)


def lower_level(path, ld):  # the genuine intervals of confidence 0.7, stored as 0.8's: only coverage tells
    other = boundary.ld_pointwise_level(N, 0.7)
    signed(path, ld, pointwise=other.pointwise, low=other.low, high=other.high)


def with_nan(path, ld):
    high = ld.high.copy()
    high[N // 2] = np.nan
    signed(path, ld, high=high)


TAMPERING = {
    "narrowed": (narrowed, r"intervals differ by 0\.0\d+ from those at their pointwise level"),
    "narrowed, not re-signed": (lambda p, ld: resaved(p, low=ld.low + 0.01, high=ld.high),
                                r"checksum mismatch \(damaged\)"),
    "another confidence's intervals": (lower_level, r"simultaneous coverage 0\.7\d*, not 0\.8;"),
    "nan": (with_nan, r"high holds non-finite values"),
    "upside down": (lambda p, ld: signed(p, ld, low=ld.high, high=ld.low), r"low >= high at i = 1"),
    "another n": (lambda p, ld: signed(p, boundary.ld_intervals(N + 1, CONF)), r"\(n 31 not 30\)"),
    "another confidence": (lambda p, ld: signed(p, ld, confidence=0.9),
                           r"an entry for another key or algorithm \(confidence 0\.9 not 0\.8\)"),
    "data byte flipped": (lambda p, ld: flip(p, p.read_bytes().index(b"\x93NUMPY") + 140), r"unreadable \("),
    "comment byte flipped": (lambda p, ld: flip(p, p.read_bytes().index(b'"pointwise"') + 16),
                             r"checksum mismatch \(damaged\)"),
    "old format": (lambda p, ld: np.savez(p, low=ld.low, high=ld.high, meta=np.array([ld.pointwise, ld.achieved])),
                   r"an older cache format without key or checksum"),
    "truncated": (lambda p, ld: p.write_bytes(p.read_bytes()[:300]), r"unreadable \("),
}


@pytest.mark.parametrize("how", TAMPERING)
def test_a_bad_cache_entry_is_recomputed_with_a_warning_and_rewritten(cache, how):
    path, fresh = cache
    tamper, reason = TAMPERING[how]
    tamper(path, fresh)
    boundary._ld_intervals_cached.cache_clear()
    with pytest.warns(ld_cache.CacheWarning) as record:
        again = boundary.ld_intervals(N, CONF)
    assert len(record) == 1 and record[0].filename == __file__  # points at the caller
    message = str(record[0].message)
    assert message.startswith(f"LD interval cache {path}: ") and message.endswith("; recomputed and rewrote it")
    assert "\n" not in message
    assert re.search(reason, message), message
    for got in (again, ld_cache._read_entry(path, N, CONF, "highest_density")):  # returned, and rewritten
        np.testing.assert_array_equal(got.low, fresh.low)
        np.testing.assert_array_equal(got.high, fresh.high)
        assert (got.pointwise, got.achieved) == (fresh.pointwise, fresh.achieved)


def test_a_fifo_in_the_cache_is_an_unreadable_entry_not_a_hang(cache):
    """Issue 34 §5: a FIFO where a file is read blocks its reader for ever (a shared cache: anyone's FIFO)."""
    import os
    import threading

    path, fresh = cache
    path.unlink()
    os.mkfifo(path)
    out = {}

    def read():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out["ld"] = boundary.ld_intervals(N, CONF)
        out["warnings"] = [str(w.message) for w in caught]

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # release the reader, then fail
        thread.join(30)
        pytest.fail("blocked on a FIFO in the cache")
    np.testing.assert_array_equal(out["ld"].low, fresh.low)
    assert any("FIFO" in w and "recomputed" in w for w in out["warnings"]), out["warnings"]
    assert path.is_file() and not path.is_symlink()  # rewritten as a regular file


def test_an_entry_of_another_algorithm_version_is_recomputed(cache, monkeypatch):
    path, fresh = cache
    monkeypatch.setattr(boundary, "ALGORITHM_VERSION", boundary.ALGORITHM_VERSION + 1)
    with pytest.warns(ld_cache.CacheWarning, match=rf"\(algorithm {boundary.ALGORITHM_VERSION - 1} not "):
        again = boundary.ld_intervals(N, CONF)
    np.testing.assert_array_equal(again.high, fresh.high)


def test_a_genuine_entry_is_read_without_warning_or_solving(cache, monkeypatch):
    path, fresh = cache
    monkeypatch.setattr(boundary, "ld_pointwise_level", lambda *a: pytest.fail("recomputed despite the cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = boundary.ld_intervals(N, CONF)
    np.testing.assert_array_equal(again.low, fresh.low)
    np.testing.assert_array_equal(again.high, fresh.high)
    assert (again.pointwise, again.achieved) == (fresh.pointwise, fresh.achieved)
    assert not again.low.flags.writeable and not again.high.flags.writeable


@pytest.mark.parametrize("kind", boundary.KINDS)
@pytest.mark.parametrize("n, confidence", [(1, 0.9), (48, 0.95), (200, 0.99)])
def test_fresh_entries_pass_their_own_checks(tmp_path, monkeypatch, kind, n, confidence):
    # else every later read would warn and solve again
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    boundary._ld_intervals_cached.cache_clear()
    fresh = boundary.ld_intervals(n, confidence, kind)
    got = ld_cache._read_entry(ld_cache._cache_path(n, confidence, kind), n, confidence, kind)
    np.testing.assert_array_equal(got.low, fresh.low)
    assert got.achieved == fresh.achieved
    boundary._ld_intervals_cached.cache_clear()


def test_an_unknown_interval_kind_is_refused_by_the_solver_too():
    # ld_pointwise_level read any kind but "equal_tailed" as highest-density, silently.
    with pytest.raises(ValueError, match=r"unknown LD interval kind 'equal-tailed'; choose one of: equal_tailed"):
        boundary.ld_pointwise_level(5, 0.8, "equal-tailed")
