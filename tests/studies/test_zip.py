"""Zip plots (Morris et al. 2019): the ranking, the positions the coverage studies keep per replicate (their
coverage equals the studies' own, exactly), the figure per study, and run directories from before."""

import logging

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from simstudy import config, plugins
from simstudy.commands.study import _zip_figure
from simstudy.distributions import sample_sorted
from simstudy.engine.runner import task_seed
from simstudy.stats.metrics import zip_centiles
from simstudy.studies import band_coverage, base, bootstrap_coverage, parametric_extrapolation
from simstudy.studies.zip_plots import zip_figure, zip_plot

matplotlib.use("Agg")

R = {"n_jobs": 1, "backend": "sequential", "progress": False}
QUAD = {"kind": "quadratic", "a": 0.5, "b": 0.9, "c": 2}


def band_config(reps=60, chunk_reps=25, seed=3):
    return config.parse(
        {
            "seed": seed,
            "distribution": {"q": QUAD},
            "budget": {"B": 2},
            "estimators": {"v": {"method": "v"}},
            "study": {
                "name": "z",
                "kind": "band_coverage",
                "reps": reps,
                "chunk_reps": chunk_reps,
                "sample_size": 8,
                "levels": [0.5, 0.9],
                "methods": ["ld_highest_density", "dkw"],
            },
            "runner": R,
        }
    )


def test_zip_plot_thins_the_drawing_not_the_ranks():
    fig, ax = plt.subplots()
    position = np.linspace(-1, 0.5, 1000)  # 1/1.5 of them cover: 667
    out = zip_plot(ax, position, nominal=0.9, most=50)
    assert (out["reps"], out["covered"], out["drawn"]) == (1000, 667, 50)
    assert out["ci_low"] < 0.667 < out["ci_high"]
    segments = ax.collections[0].get_segments()
    assert len(segments) == 50 and segments[0][0][1] == pytest.approx(0.1) and segments[-1][0][1] == 100.0
    plt.close(fig)


def test_band_positions_agree_with_a_direct_recomputation(tmp_path):
    cfg = band_config(reps=30, chunk_reps=30)
    band_coverage.run(cfg, tmp_path)
    spec = cfg.distributions[0]
    dist = spec.build()
    cell = base.cell_key(distribution=spec.key, n=8)
    stored = np.load(next((tmp_path / "chunks").rglob("chunk-000000-r30.npz")))
    y = sample_sorted(dist, 30, 8, rng=np.random.default_rng(task_seed(3, cell, 0, 0)))
    for m, method in enumerate(("ld_highest_density", "dkw")):
        for v, level in enumerate((0.5, 0.9)):
            low, high = plugins.band_method(method).bounds(8, level)
            for r in range(30):  # one sample, one order statistic at a time
                F = dist.cdf(y[r])
                each = [max(low[i] - F[i], F[i] - high[i]) / ((high[i] - low[i]) / 2) for i in range(8)]
                assert stored["zip_position"][m, v, r] == pytest.approx(max(each), rel=1e-12, abs=1e-15)


def test_band_coverage_from_positions_equals_the_summary_exactly(tmp_path):
    result = band_coverage.run(band_config(), tmp_path)
    s = result.summary
    stored = np.concatenate(
        [np.load(p)["zip_position"] for p in sorted((tmp_path / "chunks").rglob("chunk-*.npz"))], axis=-1
    )
    for m, method in enumerate(("ld_highest_density", "dkw")):
        for v, level in enumerate((0.5, 0.9)):
            hits = int((stored[m, v] <= 0).sum())
            for check in ("cdf", "curve"):
                row = s[(s.method == method) & (s.nominal == level) & (s.check == check)]
                assert hits / 60 == row.estimate.item()
    zip_frame = pd.read_parquet(result.files["zip"])
    assert sorted(zip_frame.panel.unique()) == ["q, DKW, 0.9", "q, LD highest-density, 0.9"]
    assert len(zip_frame) == 2 * 60 and set(zip_frame.nominal) == {0.9}


def test_bootstrap_coverage_from_positions_equals_the_summary_exactly(tmp_path):
    cfg = config.parse(
        {
            "seed": 1,
            "distribution": {"q": QUAD},
            "budget": {"B": 2},
            "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
            "study": {
                "name": "z",
                "kind": "bootstrap_coverage",
                "reps": 24,
                "chunk_reps": 10,
                "sample_size": 8,
                "resamples": 40,
            },
            "runner": R,
        }
    )
    result = bootstrap_coverage.run(cfg, tmp_path)
    s = result.summary.set_index(["estimator", "k"])
    z = pd.read_parquet(result.files["zip"])
    assert sorted(set(z.k)) == [1, 4, 8]
    for (estimator, k), g in z.groupby(["estimator", "k"]):
        assert len(g) == 24
        assert (g.position <= 0).sum() / 24 == s.loc[(estimator, k), "estimate"]
    # every k, from the chunks
    stored = np.concatenate(
        [np.load(p)["zip_position"] for p in sorted((tmp_path / "chunks").rglob("chunk-*.npz"))], axis=-1
    )
    for e, estimator in enumerate(("u", "v")):
        for k in range(1, 9):
            assert (stored[e, k - 1] <= 0).sum() / 24 == s.loc[(estimator, k), "estimate"]


@pytest.mark.slow
def test_parametric_coverage_from_positions_equals_the_summary_exactly(tmp_path):
    cfg = config.parse(
        {
            "seed": 0,
            "distribution": {"q": QUAD},
            "budget": {"B": 2},
            "estimators": {"v": {"method": "v"}},
            "study": {
                "name": "z",
                "kind": "parametric_extrapolation",
                "reps": 12,
                "chunk_reps": 6,
                "laws": ["nq_c2_r0.1", "kde_reuters_mlp"],
                "sample_sizes": [16],
                "n_boot": 4,
                "k_over_n": [1, 10],
            },
            "runner": R,
        }
    )
    result = parametric_extrapolation.run(cfg, tmp_path)
    s = result.summary
    z = pd.read_parquet(result.files["zip"])
    assert list(dict.fromkeys(z.panel)) == [
        "nq_c2_r0.1, n = 16: median at k = 10n",
        "nq_c2_r0.1, n = 16: b",
        "kde_reuters_mlp, n = 16: median at k = 10n",
    ]
    for (law, title), g in z.groupby(["distribution", "panel"]):
        rows = s[(s.distribution == law)]
        row = (
            rows[rows.measure == "b_coverage"]
            if title.endswith(": b")
            else rows[(rows.measure == "band_coverage") & (rows.k == 160)]
        )
        assert len(g) == row.reps.item() and (g.position <= 0).sum() / len(g) == row.estimate.item()
    fig = zip_figure(z)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 3
    plt.close(fig)


def test_zip_figures_of_band_and_bootstrap_coverage(tmp_path):
    band_coverage.run(band_config(reps=20, chunk_reps=20), tmp_path / "band")
    _zip_figure(tmp_path / "band" / "zip.parquet", ("png",))
    assert (tmp_path / "band" / "zip.png").read_bytes()[:4] == b"\x89PNG"
    frame = pd.read_parquet(tmp_path / "band" / "zip.parquet")
    fig = zip_figure(frame)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert len(titles) == 2 and titles[0].startswith("q, LD highest-density, 0.9: coverage")
    plt.close(fig)
    with pytest.raises(ValueError, match="missing side"):
        zip_figure(frame.drop(columns="side"))


def test_an_old_run_dir_resumes_with_the_same_numbers_and_no_zip_plot(tmp_path, monkeypatch, caplog):
    new_chunk = band_coverage._run_chunk

    def old_chunk(work, task):  # what a chunk held before the positions
        return {"hits": new_chunk(work, task)["hits"]}

    monkeypatch.setattr(band_coverage, "_run_chunk", old_chunk)
    band_coverage.run(band_config(reps=50), tmp_path / "old")
    monkeypatch.setattr(band_coverage, "_run_chunk", new_chunk)
    with caplog.at_level(logging.INFO, logger="simstudy"):
        resumed = band_coverage.run(band_config(reps=60), tmp_path / "old")  # 2 old chunks resumed, 1 new
    fresh = band_coverage.run(band_config(reps=60), tmp_path / "new")
    assert resumed.report.resumed == 2
    pd.testing.assert_frame_equal(resumed.summary, fresh.summary)
    assert "zip" not in resumed.files and not (tmp_path / "old" / "zip.parquet").exists()
    assert "no zip plot: this run directory's chunks were stored before" in caplog.text
    assert "zip" in fresh.files


ROWS_PLUGIN = """
import numpy as np
from simstudy.stats import bands

def builtin_rows(sorted_scores, confidence):
    # the built-in DKW band, one (equal) row per sample: the studies' per-sample path
    lower, upper = bands.pointwise_bounds(sorted_scores.shape[-1], confidence, "dkw")
    return np.broadcast_to(lower, sorted_scores.shape).copy(), np.broadcast_to(upper, sorted_scores.shape).copy()
"""


def test_a_plug_in_band_s_positions_are_the_built_in_s(tmp_path, monkeypatch, forget_plugins):
    import dataclasses

    from simstudy import extend

    (tmp_path / "my_zip_bands.py").write_text(ROWS_PLUGIN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(extend.band_methods, "_entries", {})
    cfg = band_config()
    methods = tuple(plugins.check_band_method(m, "study.methods") for m in ("dkw", "my_zip_bands.builtin_rows"))
    cfg = dataclasses.replace(
        cfg, study=dataclasses.replace(cfg.study, options=dataclasses.replace(cfg.study.options, methods=methods))
    )
    z = pd.read_parquet(band_coverage.run(cfg, tmp_path / "run").files["zip"])
    builtin, plugin = (z[z.method == m].position.to_numpy() for m in methods)
    assert builtin.size == plugin.size == 60 and (builtin > 0).any()
    np.testing.assert_allclose(plugin, builtin, rtol=1e-12, atol=1e-15)


def test_a_panel_of_many_replicates_keeps_2000_ranked_among_all():
    from simstudy.studies import zip_plots

    position = np.random.default_rng(5).normal(-0.5, 0.5, 5000)
    rows = zip_plots.panel("p", position, np.ones(5000, np.int8), nominal=0.8, ci_level=0.95)
    assert len(rows) == zip_plots.KEEP == 2000 and rows.replicate.is_monotonic_increasing
    assert rows.hits.iloc[0] == (position <= 0).sum() and rows.reps.iloc[0] == 5000
    full, _ = zip_centiles(position)
    np.testing.assert_array_equal(rows.centile, full[rows.replicate])  # ranks from all 5,000
    assert rows.centile.min() == 100 / 5000 and rows.centile.max() == 100.0  # the lowest and highest kept
    fig, ax = plt.subplots()
    out = zip_plot(ax, rows.position, rows.side, nominal=0.8, centile=rows.centile, counts=(rows.hits.iloc[0], 5000))
    assert (out["reps"], out["covered"], out["drawn"]) == (5000, (position <= 0).sum(), 300)
    plt.close(fig)
    with pytest.raises(ValueError, match="needs counts"):
        zip_plot(ax, rows.position, nominal=0.8, centile=rows.centile)


@pytest.mark.slow  # the command in-process: Hydra's composition and two figures, about 3 s
def test_the_command_draws_zip_png_beside_the_figure(tmp_path):
    from _cli import simstudy

    proc = simstudy("experiment=lourie_fig4_bootstrap_coverage", "runner.progress=false", "study.reps=16",
                    "study.chunk_reps=16", "study.resamples=100", "hydra.run.dir=run", cwd=tmp_path)
    assert (tmp_path / "run" / "zip.png").read_bytes()[:4] == b"\x89PNG"
    assert "zip.parquet, zip.png to" in proc.stdout + proc.stderr
    again = simstudy("experiment=lourie_fig4_bootstrap_coverage", "runner.progress=false", "study.reps=16",
                     "study.chunk_reps=16", "study.resamples=100", "runner.figures=[]", "hydra.run.dir=run2",
                     cwd=tmp_path)
    assert again.returncode == 0 and not (tmp_path / "run2" / "zip.png").exists()
