"""Bring your own band method: a function with the contract of :mod:`simstudy.stats.bands` joins the band_coverage and
band_width studies, by import path or by a registered name, checked on a tiny input before any compute.

The plug-in modules are written into the working directory (tmp_path) as a user would. Until the config layer
lists plug-ins in ``study.methods``, the configs are parsed with built-in methods and their methods then
replaced by what :func:`simstudy.plugins.check_band_method` returns, as the config layer will do."""

import dataclasses
import json
import pickle
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simstudy import config, extend, plugins
from simstudy.engine import chunks
from simstudy.engine.runner import stable_hash
from simstudy.studies import band_coverage, band_width

BANDS = """
import numpy as np
from simstudy.stats import bands

CALLS = []  # the shape of every call's samples

def dkw_row(sorted_scores, confidence):
    # DKW written from its definition, one row for every sample (a band that does not depend on the data)
    n = sorted_scores.shape[-1]
    i, eps = np.arange(1, n + 1), np.sqrt(np.log(2.0 / (1.0 - confidence)) / (2.0 * n))
    return np.clip(i / n - eps, 0.0, 1.0), np.clip((i - 1) / n + eps, 0.0, 1.0)

def builtin_rows(sorted_scores, confidence, method="dkw"):
    # a built-in band, one (equal) row per sample: the per-sample path of the studies
    lower, upper = bands.pointwise_bounds(sorted_scores.shape[-1], confidence, method)
    shape = sorted_scores.shape
    return np.broadcast_to(lower, shape).copy(), np.broadcast_to(upper, shape).copy()

def narrow(sorted_scores, confidence):
    # E F(Y_(i)) = i / (n + 1) +/- 0.01, far too narrow for any confidence. (The eCDF +/- eps needs eps >= 1/2n:
    # its bounds are i/n - eps on F(Y_(i)) and (i - 1)/n + eps on F(Y_(i)-), which would cross.)
    n = sorted_scores.shape[-1]
    i = np.arange(1, n + 1)
    return np.clip(i / (n + 1) - 0.01, 0, 1), np.clip(i / (n + 1) + 0.01, 0, 1)

def dkw_wider(sorted_scores, confidence):
    # DKW widened by a hundredth of each score (scores in [0, 1]): a band that depends on the data, still
    # non-decreasing for n <= 100, and containing the DKW band sample by sample
    CALLS.append(sorted_scores.shape)
    lower, upper = dkw_row(sorted_scores, confidence)
    return np.clip(lower - 0.01 * sorted_scores, 0, 1), np.clip(upper + 0.01 * sorted_scores, 0, 1)
"""

KDE = {"lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}}
RUNNER = {"n_jobs": 1, "backend": "sequential", "progress": False}


@pytest.fixture(autouse=True)
def _plugin_dir(tmp_path, monkeypatch, forget_plugins):
    """The plug-in modules in the working directory, forgotten after the test (conftest's forget_plugins)."""
    (tmp_path / "my_bands.py").write_text(textwrap.dedent(BANDS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(extend.band_methods, "_entries", {})


def with_methods(cfg: config.Config, methods) -> config.Config:
    """``cfg`` with ``study.methods`` checked and replaced, as the config layer does (plugins.band_method_check)."""
    opts = dataclasses.replace(cfg.study.options,
                               methods=tuple(plugins.check_band_method(m, "study.methods") for m in methods))
    return dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, options=opts))


def coverage_config(methods, *, seed, reps=400, chunk_reps=200, levels=(0.5, 0.8)):
    cfg = config.parse({"seed": seed, "distribution": KDE, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
                        "study": {"name": "cov", "kind": "band_coverage", "reps": reps, "chunk_reps": chunk_reps,
                                  "sample_size": 20, "levels": list(levels), "methods": ["dkw"]},
                        "runner": RUNNER})
    return with_methods(cfg, methods)


def width_config(methods, *, seed):
    cfg = config.parse({"seed": seed, "distribution": KDE, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
                        "study": {"name": "w", "kind": "band_width", "reps": 60, "chunk_reps": 30,
                                  "sample_sizes": [8, 20], "methods": ["dkw"], "max_k": 12},
                        "runner": RUNNER})
    return with_methods(cfg, methods)


def by(s: pd.DataFrame, method: str, keys) -> pd.DataFrame:
    return s[s.method == method].drop(columns=["method"]).set_index(keys).sort_index()


def test_dkw_through_the_contract_gives_the_built_in_coverage_numbers(tmp_path):
    plugins.register_band_method("dkw_rows", "my_bands.builtin_rows")
    s = band_coverage.run(coverage_config(["dkw", "my_bands.dkw_row", "dkw_rows"], seed=11), tmp_path / "run").summary
    dkw = by(s, "dkw", ["check", "nominal"])
    assert 0.5 < dkw.estimate.min() < 1  # not a vacuous comparison
    for method in ("my_bands.dkw_row", "dkw_rows"):  # the precomputed path per chunk, and the per-sample path
        pd.testing.assert_frame_equal(by(s, method, ["check", "nominal"]), dkw, check_exact=True)


@pytest.mark.parametrize("method", ["ks", "ld_highest_density"])
def test_a_built_in_method_through_the_per_sample_path_gives_the_fast_path_s_numbers(tmp_path, method):
    plugins.register_band_method("rows", "my_bands.builtin_rows", kwargs={"method": method})
    s = band_coverage.run(coverage_config([method, "rows"], seed=12), tmp_path / "run").summary
    pd.testing.assert_frame_equal(by(s, "rows", ["check", "nominal"]), by(s, method, ["check", "nominal"]),
                                  check_exact=True)


def test_dkw_through_the_contract_gives_the_built_in_band_widths(tmp_path):
    plugins.register_band_method("dkw_rows", "my_bands.builtin_rows")
    s = band_width.run(width_config(["dkw", "my_bands.dkw_row", "dkw_rows"], seed=13), tmp_path / "run").summary
    keys = ["n", "kind", "measure", "k"]
    curves = lambda m: by(s[s.measure != "trivial_k"], m, keys)  # noqa: E731
    pd.testing.assert_frame_equal(curves("my_bands.dkw_row"), curves("dkw"), check_exact=True)
    rows = curves("dkw_rows")
    median = rows.index.get_level_values("kind") == "median"
    pd.testing.assert_frame_equal(rows[median], curves("dkw")[median], check_exact=True)  # gathers: exact
    # a mean band per sample is a dot product per sample instead of one matrix product: the same sums added
    # in another order, equal to rounding (the MCSE, a square root of a difference of sums, to less)
    mean, want = rows[~median], curves("dkw")[~median]
    np.testing.assert_allclose(mean.estimate, want.estimate, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(mean.mcse, want.mcse, rtol=1e-8)
    trivial = s[s.measure == "trivial_k"].set_index(["method", "n"]).estimate
    for n in (8, 20):
        np.testing.assert_allclose(trivial["dkw_rows", n], trivial["dkw", n], rtol=1e-14)
        np.testing.assert_allclose(trivial["my_bands.dkw_row", n], trivial["dkw", n], rtol=1e-14)


def test_a_too_narrow_band_covers_far_less_than_nominal(tmp_path):
    s = band_coverage.run(coverage_config(["my_bands.narrow"], seed=14, levels=(0.5, 0.9)), tmp_path / "run").summary
    assert len(s) == 6
    for row in s.itertuples():
        ci = stats.binomtest(round(row.estimate * row.reps), row.reps).proportion_ci(0.999, method="exact")
        assert ci.high < row.nominal, row  # the nominal level is outside the Clopper-Pearson interval


def test_a_per_sample_band_is_called_once_per_chunk_and_level_on_every_sample(tmp_path):
    cfg = coverage_config(["dkw", "my_bands.dkw_wider"], seed=15, reps=600)
    sys.modules["my_bands"].CALLS.clear()  # the two calls of the check on parsing
    s = band_coverage.run(cfg, tmp_path / "run").summary
    assert sys.modules["my_bands"].CALLS == [(200, 20)] * 6  # 3 chunks x 2 levels, never one call per sample
    wider, dkw = by(s, "my_bands.dkw_wider", ["check", "nominal"]), by(s, "dkw", ["check", "nominal"])
    # containing the DKW band sample by sample, it covers whenever DKW does, and sometimes more
    assert (wider.estimate >= dkw.estimate).all() and (wider.estimate > dkw.estimate).any()
    cfg = width_config(["my_bands.dkw_wider"], seed=16)
    del sys.modules["my_bands"].CALLS[6:]
    w = band_width.run(cfg, tmp_path / "width").summary
    assert sys.modules["my_bands"].CALLS[6:] == [(30, 8)] * 2 + [(30, 20)] * 2  # once per chunk, both kinds
    k_star = w[w.measure == "trivial_k"]
    assert (k_star.mcse > 0).all() and (k_star.reps == 60).all()  # each sample's own budget, averaged


def test_an_edited_plugin_never_resumes_the_old_chunks_and_built_in_fingerprints_are_unchanged(tmp_path):
    cfg = coverage_config(["my_bands.dkw_row"], seed=17, reps=20, chunk_reps=20)
    band_coverage.run(cfg, tmp_path / "run")
    (tmp_path / "my_bands.py").write_text(textwrap.dedent(BANDS).replace("- eps", "- 2 * eps"))
    with pytest.raises(chunks.RunDirConflict):
        band_coverage.run(cfg, tmp_path / "run")
    # a built-in run's fingerprint is what it was before plug-ins (its settings gained no key): old runs resume
    builtin = coverage_config(["dkw", "ks"], seed=17, reps=20, chunk_reps=20)
    band_coverage.run(builtin, tmp_path / "builtin")
    keys = [d.key for d in builtin.distributions]
    before = stable_hash({"scheme": "band_coverage/1", "seed": 17, "distributions": keys, "chunk_reps": 20,
                          "n": 20, "methods": ("dkw", "ks"), "levels": (0.5, 0.8), "quantile": 0.5})[:16]
    assert json.loads((tmp_path / "builtin" / "run.json").read_text())["fingerprint"] == before


def test_a_plugin_band_pickles_by_import_path():
    band = plugins.band_method("my_bands.dkw_row")
    blob = pickle.dumps(band)
    assert b"my_bands.dkw_row" in blob and b"dkw_row\n" not in blob
    x = np.sort(np.random.default_rng(18).random((4, 6)), axis=1)
    for got, want in zip(pickle.loads(blob)(x, 0.8), plugins.band_method("dkw")(x, 0.8)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.slow
def test_plugin_band_results_are_identical_for_one_and_two_workers(tmp_path):
    cfg = coverage_config(["my_bands.dkw_wider"], seed=19, reps=400, chunk_reps=100)
    one = band_coverage.run(cfg, tmp_path / "one").summary
    two = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, n_jobs=2, backend="loky"))
    pd.testing.assert_frame_equal(band_coverage.run(two, tmp_path / "two").summary, one, check_exact=True)


# --- the parse-time check -----------------------------------------------------------------------------------

BAD_BANDS = """
import numpy as np

def row(x):
    n = x.shape[-1]
    return np.arange(1, n + 1) / (n + 1), np.arange(2, n + 2) / (n + 2)

def raises(x, confidence):
    raise ValueError("n too small")
def single(x, confidence):
    return row(x)[0]
def triple(x, confidence):
    return (*row(x), row(x)[0])
def short(x, confidence):
    return row(x)[0][:-1], row(x)[1][:-1]
def flat(x, confidence):
    return x.ravel(), x.ravel()
def nan(x, confidence):
    lower, upper = row(x)
    lower[2] = np.nan
    return lower, upper
def infinite(x, confidence):
    lower, upper = row(x)
    upper[4] = np.inf
    return lower, upper
def above_one(x, confidence):
    lower, upper = row(x)
    return lower, upper + 0.5
def decreasing(x, confidence):
    lower, upper = row(x)
    return lower[::-1].copy(), np.ones_like(upper)
def crossed(x, confidence):
    lower, upper = row(x)
    return upper, lower
def words(x, confidence):
    return ["a"] * 5, ["b"] * 5
def noisy(x, confidence):
    lower, upper = row(x)
    return lower * np.random.random(), upper
NOT_A_FUNCTION = 3
"""

BAD = {
    "unknown_name": ("foo", "study.methods must be one of dkw, ks, ld_equal_tailed, ld_highest_density or an import "
                            "path module.function, got 'foo'"),
    "not_a_string": (3, "study.methods must be one of dkw, ks, ld_equal_tailed, ld_highest_density or an import path "
                        "module.function, got 3"),
    "no_module": ("my_missing.band", "study.methods=my_missing.band: no module named 'my_missing' in the working "
                                     "directory"),
    "no_attribute": ("my_bad_bands.nothing", "study.methods=my_bad_bands.nothing: my_bad_bands has no attribute "
                                             "'nothing'"),
    "import_fails": ("my_broken_bands.band", "study.methods=my_broken_bands.band: importing my_broken_bands failed: "
                                             "ZeroDivisionError: division by zero"),
    "not_callable": ("my_bad_bands.NOT_A_FUNCTION", "study.methods=my_bad_bands.NOT_A_FUNCTION: is a int, not a "
                                                    "function"),
    "wrong_signature": ("my_bad_bands.row", "study.methods=my_bad_bands.row: raised TypeError: row() takes 1 "
                                            "positional argument but 2 were given on the check input (3 sorted "
                                            "samples of n=5, confidence=0.8)"),
    "raises": ("my_bad_bands.raises", "study.methods=my_bad_bands.raises: raised ValueError: n too small on the "
                                      "check input"),
    "single": ("my_bad_bands.single", "study.methods=my_bad_bands.single: returned ndarray, not a pair of arrays "
                                      "(lower, upper)"),
    "triple": ("my_bad_bands.triple", "study.methods=my_bad_bands.triple: returned a tuple of 3, not a pair"),
    "short": ("my_bad_bands.short", "study.methods=my_bad_bands.short: returned lower of shape (4,) for 3 samples "
                                    "of n=5; the contract is (3, 5) or (5,)"),
    "flat": ("my_bad_bands.flat", "returned lower of shape (15,) for 3 samples of n=5"),
    "nan": ("my_bad_bands.nan", "study.methods=my_bad_bands.nan: returned lower nan at Y_(3) of sample 0; bounds "
                                "must be finite"),
    "infinite": ("my_bad_bands.infinite", "returned upper inf at Y_(5) of sample 0; bounds must be finite"),
    "above_one": ("my_bad_bands.above_one", "returned upper 1.0714285714285714 at Y_(3) of sample 0, outside [0, 1]"),
    "decreasing": ("my_bad_bands.decreasing", "returned lower decreasing from 0.8333333333333334 at Y_(1) to "
                                              "0.6666666666666666 at Y_(2) of sample 0; bounds must be non-decreasing"),
    "crossed": ("my_bad_bands.crossed", "returned lower 0.2857142857142857 > upper 0.16666666666666666 at Y_(1) of "
                                        "sample 0; the contract needs lower <= upper"),
    "words": ("my_bad_bands.words", "returned a lower that is not an array of numbers"),
    "nondeterministic": ("my_bad_bands.noisy", "study.methods=my_bad_bands.noisy: returned different bounds for the "
                                               "same input called twice; a band method must be deterministic"),
    "registered": ("bad_reg", "study.methods=bad_reg (registered as my_bad_bands.crossed): returned lower"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_band_method_is_a_one_line_error_naming_the_key_and_target(tmp_path, case):
    (tmp_path / "my_bad_bands.py").write_text(textwrap.dedent(BAD_BANDS))
    (tmp_path / "my_broken_bands.py").write_text("1 / 0\n")
    if case == "registered":
        plugins.register_band_method("bad_reg", "my_bad_bands.crossed")
    method, message = BAD[case]
    with pytest.raises(plugins.PluginError) as info:
        plugins.check_band_method(method, "study.methods")
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_a_band_that_breaks_its_contract_mid_run_is_a_recorded_chunk_failure(tmp_path):
    (tmp_path / "my_fragile_bands.py").write_text(textwrap.dedent("""
        import numpy as np
        def fragile(x, confidence):
            n = x.shape[-1]
            lower = np.arange(1, n + 1) / (n + 1)
            if x.shape[0] > 3:  # passes the 3-sample check, breaks the contract on a real chunk
                lower = lower + 1.0
            return lower, np.ones(n)
        """))
    s = band_coverage.run(coverage_config(["my_fragile_bands.fragile"], seed=20, reps=20, chunk_reps=10),
                          tmp_path / "run")
    assert s.summary.measure.tolist() == ["failed_chunks"] and s.summary.estimate.tolist() == [2.0]
    assert "band method my_fragile_bands.fragile: returned lower" in s.report.failures[0].error


def test_registry_names_and_refusals():
    plugins.register_band_method("wilson", "my_bands.narrow")
    plugins.register_band_method("wilson", "my_bands.narrow")  # the same again: fine
    assert plugins.band_method_names() == ("dkw", "ks", "ld_equal_tailed", "ld_highest_density", "wilson")
    assert plugins.check_band_method("wilson", "study.methods") == "wilson"
    assert plugins.check_band_method("my_bands.narrow", "study.methods") == "my_bands.narrow"
    with pytest.raises(ValueError, match="'ks' is a built-in band method"):
        plugins.register_band_method("ks", "my_bands.narrow")
    with pytest.raises(ValueError, match="'wilson' is already registered as my_bands.narrow"):
        plugins.register_band_method("wilson", "my_bands.dkw_row")
    with pytest.raises(ValueError, match="has no import path"):
        plugins.register_band_method("local", lambda x, c: (x, x))


def test_the_built_in_methods_satisfy_the_contract():
    x = np.sort(np.random.default_rng(21).random((3, 7)), axis=1)
    for method in plugins.band_method_names():
        lower, upper = plugins.band_output(plugins.band_method(method)(x, 0.9), 3, 7)
        assert lower.shape == upper.shape == (7,)
