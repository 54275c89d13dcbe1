"""Figures: nothing cut off (every drawn text inside the saved canvas), shaded bands named in the legend,
trivial bands and out-of-view bounds said in words, readable method names."""

import importlib
import subprocess
import sys

import matplotlib
import matplotlib.collections
import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
import pandas as pd
import pytest

from simstudy import chart_style, config, figures, registry
from simstudy.charts import to_matplotlib
from simstudy.commands import audit_page, curve
from simstudy.commands.bands import cdf_chart, tuning_curve_chart
from simstudy.stats import bands
from simstudy.studies import (
    band_coverage,
    band_triviality,
    bootstrap_coverage,
    evp_accuracy,
    fixed_confidence,
    model_selection,
    sample_disagreement,
    wrong_conclusions,
)
from simstudy.studies.parametric_extrapolation_figure import parametric_extrapolation_figure

# The CLI's own title shape, with a long data file name (one "word" wider than the figure).
LONG = ("80% ld_highest_density bands, median tuning curve: "
        "deberta-v3-base_mnli_random_search_results_2024_rerun_with_all_seeds.results.jsonl")
R = {"n_jobs": 1, "backend": "loky", "progress": False}
KDE = {"lstm": {"kind": "kde", "dataset": "reuters_hedwig", "model": "lstm", "bw_factor": 0.05}}
TDSA = {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m} for m in ("atae", "ian", "lstm")}
BASE = {"budget": {"B": 2}, "estimators": {"v": {"method": "v"}}, "runner": R}
# Tiny studies (about 2 s in all): real summary frames, so the figures read the columns the studies write.
STUDIES = {
    "evp_accuracy": {"seed": 11, "distribution": {"kind": "truncnorm"}, "budget": {"B": 5}, "runner": R,
                     "estimators": {"u": {"method": "u"}, "v": {"method": "v"},
                                    "boot": {"method": "bootstrap", "resamples": 50}},
                     "study": {"name": "a", "kind": "evp_accuracy", "reps": 40, "chunk_reps": 40,
                               "save_replicates": False}},
    "wrong_conclusions": {"seed": 12, "runner": R, "budget": {"B": [2, 4, 8], "n": None},
                          "distribution": {"a": {"kind": "truncnorm", "mean": 0.60, "sd": 0.07},
                                           "b": {"kind": "truncnorm", "mean": 0.62, "sd": 0.07}},
                          "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
                          "study": {"name": "wc", "kind": "wrong_conclusions", "reps": 40, "chunk_reps": 40}},
    "band_coverage": {**BASE, "seed": 13, "distribution": KDE,
                      "study": {"name": "cov", "kind": "band_coverage", "reps": 40, "chunk_reps": 40, "sample_size": 10,
                                "levels": [0.5, 0.8], "methods": ["ld_highest_density", "ks", "dkw"]}},
    "band_triviality": {**BASE, "seed": 14, "distribution": {"kind": "truncnorm"},
                        "study": {"name": "t", "kind": "band_triviality", "sample_sizes": [6, 12, 24],
                                  "methods": ["ks", "ld_highest_density"]}},
    "bootstrap_coverage": {**BASE, "seed": 15, "distribution": KDE,
                           "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
                           "study": {"name": "boot", "kind": "bootstrap_coverage", "reps": 20, "chunk_reps": 20,
                                     "sample_size": 8, "resamples": 50}},
    "band_width": {**BASE, "seed": 16, "distribution": KDE,
                   "study": {"name": "w", "kind": "band_width", "reps": 3, "chunk_reps": 3, "sample_sizes": [8],
                             "methods": ["ks", "ld_highest_density"], "max_k": 12}},
    "model_selection": {**BASE, "seed": 17, "distribution": TDSA,
                        "study": {"name": "fb", "kind": "model_selection", "reps": 40, "chunk_reps": 40,
                                  "budgets": [9, 18]}},
    "fixed_confidence": {**BASE, "seed": 18, "distribution": TDSA,
                         "study": {"name": "fc", "kind": "fixed_confidence", "reps": 10, "chunk_reps": 10,
                                   "deltas": [0.1, 0.2], "algorithms": ["ttts", "non_adaptive"]}},
    "sample_disagreement": {**BASE, "seed": 19, "distribution": {m: {"kind": "empirical", "dataset": "reuters_hedwig",
                                                                     "model": m} for m in ("mlp", "lstm")},
                            "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
                            "study": {"name": "sd", "kind": "sample_disagreement", "reps": 200, "chunk_reps": 200,
                                      "sample_sizes": [10, 25]}},
    "parametric_extrapolation": {**BASE, "seed": 20, "distribution": {"kind": "truncnorm"},
                                 "study": {"name": "pe", "kind": "parametric_extrapolation", "reps": 4,
                                           "chunk_reps": 4, "laws": ["nq_c2_r0.1", "kde_reuters_lstm"],
                                           "sample_sizes": [24], "n_boot": 4}},
}


#: Kinds whose run needs data the default lane may lack (the field audit: the benchmarks' optional extra): their
#: figures draw a made-up summary of the same columns.
DEMO_SUMMARIES = {"field_audit": ("simstudy.studies.field_audit_page", "_demo_summary")}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    assert set(STUDIES) | set(DEMO_SUMMARIES) == set(registry.study_kinds())  # a new study kind needs a case here
    out = {}
    for kind, cfg in STUDIES.items():
        module = importlib.import_module(f"simstudy.studies.{kind}")
        out[kind] = module.run(config.parse(cfg), tmp_path_factory.mktemp(kind)).summary
    for kind, (module, name) in DEMO_SUMMARIES.items():
        out[kind] = getattr(importlib.import_module(module), name)()
    return out


def _scores():
    rng = np.random.default_rng(4711)
    return {"deberta-v3-base (a long model name)": rng.beta(20, 3, size=48), "deberta-base": rng.beta(14, 4, size=48)}


def tuning_curve_bands_figure(frame, *, title=None, **options):
    """tuning_curve.png as `simstudy bands` draws it: its chart, drawn."""
    return to_matplotlib(tuning_curve_chart(frame, title=title or "", **options))


def cdf_bands_figure(frame, *, title=None, **options):
    """cdf.png as `simstudy bands` draws it."""
    return to_matplotlib(cdf_chart(frame, title=title or "", **options))


def evp_curves_figure(scores=None, *, title=None, **options):
    """figure.png as `simstudy curve data=TITLE ...` draws it (the title names the data)."""
    result = curve.run({"data": title or "scores.csv", **options}, scores or _scores())
    return to_matplotlib(curve.chart(result))


def _band_frames(confidence=0.8, method="ld_highest_density", low=0, high=1):
    """The tidy frames `simstudy bands` builds (curves and CDF bands) for two models on [low, high]."""
    ks = np.arange(1, 49, dtype=np.float64)
    curve_rows, cdf_rows = [], []
    for model, x in _scores().items():
        tc = bands.tuning_curve_bands(x, confidence, "median", method, ks=ks, low=low, high=high)
        curve_rows.append(pd.DataFrame({"model": model, "k": ks, "point": tc.point, "lower": tc.lower,
                                        "upper": tc.upper, "confidence": confidence, "method": method}))
        cdf_rows.append(pd.DataFrame({"model": model, "score": tc.cdf.y, "ecdf": np.arange(1, x.size + 1) / x.size,
                                      "lower": tc.cdf.lower, "upper": tc.cdf.upper, "confidence": confidence,
                                      "method": method}))
    return pd.concat(curve_rows, ignore_index=True), pd.concat(cdf_rows, ignore_index=True)


def _drawn_texts(fig, monkeypatch):
    """Draw the figure as io.save_figure saves it (the whole canvas, no bbox_inches) and return every text
    actually drawn, with its extent in pixels."""
    drawn, original = [], matplotlib.text.Text.draw

    def record(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self.get_text(), self.get_window_extent(renderer)))

    monkeypatch.setattr(matplotlib.text.Text, "draw", record)
    fig.canvas.draw()
    monkeypatch.undo()
    return drawn


def _cut_off(fig, monkeypatch) -> list[str]:
    box, tol = fig.bbox, 0.5  # pixels
    return [text for text, e in _drawn_texts(fig, monkeypatch)
            if e.x0 < box.x0 - tol or e.y0 < box.y0 - tol or e.x1 > box.x1 + tol or e.y1 > box.y1 + tol]


def _all_figures(summaries, title):
    curve_frame, cdf_frame = _band_frames()
    figs = {kind: registry.figure_function(registry.study(kind))(summary, title=title)
            for kind, summary in summaries.items()}
    figs["tuning_curve_bands"] = tuning_curve_bands_figure(curve_frame, low=0, high=1, title=title)
    figs["tuning_curve_bands_log"] = tuning_curve_bands_figure(curve_frame, low=0, high=1, xscale="log",
                                                                     title=title)
    figs["cdf_bands"] = cdf_bands_figure(cdf_frame, low=0, high=1, title=title)
    unbounded_curves, unbounded_cdfs = _band_frames(low=-np.inf, high=np.inf)
    figs["tuning_curve_bands_unbounded"] = tuning_curve_bands_figure(unbounded_curves, title=title)
    figs["cdf_bands_unbounded"] = cdf_bands_figure(unbounded_cdfs, title=title)
    figs["evp_curves"] = evp_curves_figure(target=0.85, title=title)
    figs["evp_curves_linear"] = evp_curves_figure(xscale="linear", title=title)
    x = np.r_[np.zeros(10), np.linspace(0.6, 0.9, 40)]  # the audit's fit figure: an atom at 0 and a KDE
    grid = np.r_[0.0, np.linspace(0.0, 1.0, 201)]
    cdf = np.r_[0.0, 0.2 + 0.8 * np.clip((grid[1:] - 0.6) / 0.3, 0, 1)]
    figs["kde_fit"] = audit_page.kde_fit_figure(pd.DataFrame({"score": x}), pd.DataFrame(
        {"x": grid, "pdf": np.where((grid > 0.6) & (grid < 0.9), 0.8 / 0.3, 0.0), "cdf": cdf}),
        atoms=pd.DataFrame({"value": [0.0], "share": [0.2]}), title=title)
    return figs


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
@pytest.mark.parametrize("title", [None, LONG], ids=["default-title", "long-title"])
def test_no_text_is_cut_off(summaries, title, monkeypatch):
    for name, fig in _all_figures(summaries, title).items():
        assert _cut_off(fig, monkeypatch) == [], name
        plt.close(fig)


def test_the_check_catches_a_long_title(monkeypatch):
    # The same check on a figure titled the old way (unwrapped): it must fail, or it tests nothing.
    fig, ax = plt.subplots(figsize=(5.5, 4.0), layout="constrained")
    ax.set_title(LONG, fontsize=9)
    assert _cut_off(fig, monkeypatch) != []
    plt.close(fig)


def _legend_texts(fig):
    return [t.get_text().replace("\n", " ") for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
            if leg is not None for t in leg.get_texts()]


def test_legends_name_the_shaded_bands(summaries):
    curve_frame, cdf_frame = _band_frames()
    expected = {
        "evp_accuracy": evp_accuracy.evp_accuracy_figure(summaries["evp_accuracy"]),
        "bootstrap_coverage": bootstrap_coverage.bootstrap_coverage_figure(summaries["bootstrap_coverage"]),
        "model_selection": model_selection.model_selection_figure(summaries["model_selection"]),
        "wrong_conclusions": wrong_conclusions.wrong_conclusions_figure(summaries["wrong_conclusions"]),
        "fixed_confidence": fixed_confidence.fixed_confidence_figure(summaries["fixed_confidence"]),
        "sample_disagreement": sample_disagreement.sample_disagreement_figure(summaries["sample_disagreement"]),
        "parametric_extrapolation": parametric_extrapolation_figure(summaries["parametric_extrapolation"]),
        "evp_curves": evp_curves_figure(),
        "tuning_curve_bands": tuning_curve_bands_figure(curve_frame, low=0, high=1),
        "cdf_bands": cdf_bands_figure(cdf_frame, low=0, high=1),
    }
    names = {"evp_accuracy": "shaded: 95% simultaneous (sup-t) Monte Carlo band over n",
             "bootstrap_coverage": "Clopper–Pearson interval",
             "model_selection": "95% Clopper–Pearson interval",
             "wrong_conclusions": "95% Clopper–Pearson interval", "fixed_confidence": "min–max over runs",
             "sample_disagreement": "95% simultaneous Monte Carlo band over n (Šidák)",
             "parametric_extrapolation": "95% Clopper–Pearson interval of the coverage",
             "evp_curves": "±1 SD (clipped to observed scores)",
             "tuning_curve_bands": "80% simultaneous band (LD highest-density)",
             "cdf_bands": "80% simultaneous band (LD highest-density)"}
    for name, fig in expected.items():
        assert names[name] in _legend_texts(fig), name
        plt.close(fig)


def test_trivial_upper_band_is_said_and_the_axis_zooms_on_the_data():
    curve_frame, _ = _band_frames()
    fig = tuning_curve_bands_figure(curve_frame, low=0, high=1)
    texts = _legend_texts(fig)
    for model, c in curve_frame.groupby("model", sort=False):
        k_star = c.loc[c["upper"] >= 1, "k"].min()
        # The frame's own first trivial budget, and the library's exact one: the first integer k beyond it.
        assert k_star == np.floor(bands.trivial_budget(48, 0.8, "ld_highest_density")) + 1
        assert f"{model}: upper band trivial (= 1) for k ≥ {k_star:g}" in texts
    bottom, top = fig.axes[0].get_ylim()
    assert top < 1 and bottom > curve_frame["point"].min() - 0.1  # zoomed on the data, not 0..1
    assert any("bound 1 (beyond the view)" in t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)


def test_unbounded_scores_say_the_upper_band_is_infinite():
    curve_frame, _ = _band_frames(low=-np.inf, high=np.inf)
    fig = tuning_curve_bands_figure(curve_frame)
    assert "deberta-base: upper band trivial (= ∞) for k ≥ 9" in _legend_texts(fig)
    assert np.all(np.isfinite(fig.axes[0].get_ylim()))
    plt.close(fig)


def test_cdf_figure_zooms_on_the_scores_and_names_the_bounds():
    _, cdf_frame = _band_frames()
    fig = cdf_bands_figure(cdf_frame, low=0, high=1)
    left, right = fig.axes[0].get_xlim()
    s = cdf_frame["score"]
    assert s.min() - 0.1 * (s.max() - s.min()) < left < s.min() and s.max() < right
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "← bound 0 (beyond the view)" in texts
    assert "bound 1" in texts or "bound 1 → (beyond the view)" in texts
    plt.close(fig)


def test_xscale():
    curve_frame, _ = _band_frames()
    assert evp_curves_figure().axes[0].get_xscale() == "log"  # today's default (was log_x=True)
    assert evp_curves_figure(xscale="linear").axes[0].get_xscale() == "linear"
    assert tuning_curve_bands_figure(curve_frame).axes[0].get_xscale() == "linear"
    assert tuning_curve_bands_figure(curve_frame, xscale="log").axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="xscale must be one of linear, log, got 'symlog'"):
        tuning_curve_bands_figure(curve_frame, xscale="symlog")
    plt.close("all")


def test_method_names_are_readable(summaries):
    fig = band_coverage.band_coverage_figure(summaries["band_coverage"])
    texts = " | ".join(_legend_texts(fig))
    assert "LD highest-density" in texts and "Kolmogorov–Smirnov" in texts and "DKW" in texts
    assert "ld_highest_density" not in texts
    fig = band_triviality.band_triviality_figure(summaries["band_triviality"])
    assert any(t.startswith("Kolmogorov–Smirnov:") for t in _legend_texts(fig))
    plt.close("all")


# -- issue 25: every figure readable without the code ------------------------------------------------------------------


def _overlapping(boxes) -> list:
    return [(a, b) for i, (a, ea) in enumerate(boxes) for b, eb in boxes[i + 1:] if ea.overlaps(eb)]


def test_atom_labels_of_the_fit_figure_do_not_overprint():
    # Two atoms a resolution step apart (failed runs at 0 and at 0.001): their labels were drawn on top of each other
    x = np.r_[np.zeros(32), np.full(10, 0.001), np.linspace(0.6, 0.9, 58)]
    grid = np.sort(np.r_[np.linspace(0.0, 1.0, 201), 0.001])
    fig = audit_page.kde_fit_figure(pd.DataFrame({"score": x}), pd.DataFrame({"x": grid, "pdf": 1.0, "cdf": grid}),
                               atoms=pd.DataFrame({"value": [0.0, 0.001], "share": [0.32, 0.096]}))
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    labels = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[0].texts]
    assert [t for t, _ in labels] == ["32.0% at 0", "9.6% at 0.001"]
    assert _overlapping(labels) == []
    plt.close(fig)


def test_a_trivial_upper_band_is_not_shaded_over_the_other_models():
    curve_frame, _ = _band_frames()
    fig = tuning_curve_bands_figure(curve_frame, low=0, high=1)
    ax = fig.axes[0]
    top_of_data = curve_frame.loc[curve_frame["upper"] < 1, "upper"].max()
    fills = [c for c in ax.collections if isinstance(c, matplotlib.collections.PolyCollection)]
    assert len(fills) == 2
    for fill in fills:  # the shaded bands stop where the upper band turns trivial: no rectangle up to the cap
        ys = np.concatenate([p.vertices[:, 1] for p in fill.get_paths()])
        assert ys.max() <= top_of_data + 1e-12
    texts = _legend_texts(fig)
    assert not any("eCDF" in t for t in texts) and "deberta-base: tuning curve" in texts
    plt.close(fig)


def test_figure_1_says_what_it_shows_in_words():
    rows = [("truth", "expected_max", n, 0.5 + 0.1 * n) for n in (1, 2, 3)]
    rows += [(e, m, n, 0.5 + 0.1 * n) for e in ("u", "v", "w", "plug") for m in ("mean", "variance", "mse")
             for n in (1, 2, 3)]
    summary = pd.DataFrame(rows, columns=["estimator", "measure", "n", "estimate"])
    summary = summary.assign(cell="truncnorm_bag, B = 30", distribution="truncnorm_bag", B=30, mcse=0.01, reps=100)
    fig = evp_accuracy.evp_accuracy_figure(summary)
    title = fig._suptitle.get_text().replace("\n", " ")
    legend = _legend_texts(fig)
    assert "95% Monte Carlo interval" in " ".join(legend) and "Monte Carlo" not in title  # not the legend again
    assert "truncnorm_bag" not in fig.axes[0].get_title() and "truncated normal" in fig.axes[0].get_title()
    colours = {line.get_label(): np.array(matplotlib.colors.to_rgb(line.get_color())) for line in fig.axes[0].lines}
    assert np.abs(colours["plug"] - colours["$V_n^B$"]).sum() > 0.6  # not vermillion beside V's orange
    plt.close(fig)


def test_user_text_with_dollars_is_drawn_as_typed(tmp_path):
    name, title = "budget $5_$", r"x$\bad$.csv"
    curve_frame, cdf_frame = _band_frames()
    curve_frame["model"] = curve_frame["model"].str.replace("deberta-base", name)
    cdf_frame["model"] = cdf_frame["model"].str.replace("deberta-base", name)
    figs = [tuning_curve_bands_figure(curve_frame, low=0, high=1, title=title),
            cdf_bands_figure(cdf_frame, low=0, high=1, title=title),
            evp_curves_figure({name: _scores()["deberta-base"]}, title=title)]
    for fig in figs:
        fig.savefig(tmp_path / "figure.png")  # mathtext raised here: "Unknown symbol: \bad"
        assert any(name in t.replace("\\$", "$") for t in _legend_texts(fig))
        plt.close(fig)


def test_evp_curves_legend_names_the_model_that_never_reaches_the_target():
    scores = {"cnn": 0.3 + 0.004 * np.arange(30), "lr": 0.36 + 0.001 * np.arange(20)}
    fig = evp_curves_figure(scores, target=0.395)
    assert "target 0.395 (dotted drops: where each model reaches it); never reached by lr" in _legend_texts(fig)
    plt.close(fig)


# -- issue 26: each study draws its own figure; matplotlib only when one is drawn ---------------------------------------


def test_each_study_figure_lives_in_its_study_module_only():
    # issue 35: no second name for a figure in simstudy.figures (the shared style only)
    for kind in registry.study_kinds():
        function = registry.figure_function(registry.study(kind))
        assert function.__module__.startswith("simstudy.studies."), (kind, function.__module__)
        assert not hasattr(figures, f"{kind}_figure"), kind


def test_the_theme_is_seaborns_whitegrid_paper_theme():
    # Set with matplotlib alone (seaborn imports scipy.stats); the pixels are the same only if every rcParam is.
    sns = pytest.importorskip("seaborn")
    with matplotlib.rc_context():
        sns.set_theme(style="whitegrid", context="paper")
        expected = dict(matplotlib.rcParams)
    with matplotlib.rc_context():
        chart_style.theme()
        got = dict(matplotlib.rcParams)
    expected.pop("image.cmap"), got.pop("image.cmap")  # seaborn's colormap: no figure draws an image
    assert got == expected
    assert chart_style.colorblind(12) == list(sns.color_palette("colorblind", 12))


def test_no_matplotlib_until_a_figure_is_drawn():
    code = (
        "import sys\n"
        "import simstudy.figures, simstudy.studies, simstudy.studies.parametric_extrapolation_figure\n"
        "print(sorted(m for m in ('matplotlib', 'seaborn') if m in sys.modules))\n"
        "import pandas as pd\n"
        "from simstudy.studies import band_triviality\n"
        "rows = [('trivial_k', n, n / 6) for n in (12, 24, 48)] + [('slope', 0, 1 / 6), ('intercept', 0, 0.0),\n"
        "        ('r_squared', 0, 1.0), ('samples_per_step', 0, 6.0)]\n"
        "summary = pd.DataFrame(rows, columns=['measure', 'n', 'estimate']).assign(method='ks')\n"
        "band_triviality.band_triviality_figure(summary)\n"
        "print(sorted(m for m in ('matplotlib', 'seaborn') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "['matplotlib']"]  # a study's figure never imports seaborn


def _extra_figures(summaries):
    """Figures beyond ``_all_figures``: a design's sweep figure, a nested-loop plot, the audit's accuracy figure
    (log n) and the field audit's questions."""
    from simstudy import sweeps
    from simstudy.studies import field_audit_page

    rng = np.random.default_rng(4712)
    n = np.arange(1, 31)
    rows = pd.DataFrame([{"distribution.sd": sd, "B": B, "n": k, "estimator": e,
                          "estimate": (0.002 + 0.0004 * k * (1 + 0.3 * j)) * sd / 0.05, "mcse": 2e-5}
                         for sd in (0.05, 0.1) for B in (10, 30) for j, e in enumerate("uvw") for k in n])
    figs = {"design_sweep": figures.sweep_figure(rows, ["distribution.sd", "B"], x="n", hue="estimator", ylabel="MSE")}
    cells = pd.DataFrame([(B, e, sd, rng.normal(0.1, 0.02)) for B in (10, 50) for e in "uvw" for sd in (0.1, 0.2)],
                         columns=["B", "estimator", "sd", "estimate"]).assign(mcse=0.005)
    figs["nested_loop"] = sweeps.nested_loop_figure(cells, ["B", "sd"], hue="estimator", y="estimate",
                                                    ylabel="MSE")
    figs["evp_accuracy_log"] = evp_accuracy.evp_accuracy_figure(summaries["evp_accuracy"], xscale="log")
    for q in ("q1", "q2", "q3", "q4"):
        figs[f"field_{q}"] = getattr(field_audit_page, f"{q}_figure")(summaries["field_audit"])
    return figs


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_no_legend_or_note_covers_the_data(summaries):
    # Figure 1's legend sat on the curves at n = 1-4, the audit's fit legend on the density's peak, a design's
    # legend on a curve, and "bound 1 (beyond the view)" on the tuning curve it caps: each a finding here.
    from _figure_checks import covered

    found = {}
    for make in (_all_figures, lambda s, _: _extra_figures(s)):  # in two batches: at most 20 figures open
        for name, fig in make(summaries, None).items():
            if hits := covered(fig):
                found[name] = hits
            plt.close(fig)
    assert found == {}


def test_the_legend_check_can_fail():
    from _figure_checks import covered

    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="a diagonal")
    ax.legend(loc="center")  # on the line
    ax.text(0.5, 0.5, "over the line")
    hits = covered(fig)
    assert any(h.startswith("legend covers") for h in hits) and any(h.startswith("text 'over") for h in hits)
    plt.close(fig)


def test_audit_accuracy_figure_reads_n_on_a_log_axis(summaries):
    fig = evp_accuracy.evp_accuracy_figure(summaries["evp_accuracy"], xscale="log")
    assert fig.axes[-1].get_xscale() == "log"
    plt.close(fig)
    with pytest.raises(ValueError, match="xscale must be one of"):
        evp_accuracy.evp_accuracy_figure(summaries["evp_accuracy"], xscale="symlog")
