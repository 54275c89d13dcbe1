"""Reports that warn where they should (issue 25): EXTRAPOLATE.md says when the law does not describe the scores,
AUDIT.md gives plain verdicts, the data commands say what the audit says about atoms, and every number is
rounded to the digits its Monte Carlo error supports. Each warning has a case that triggers it and one that
does not; the fits are small (200 scores, 8 bootstrap refits) and seeded."""

import dataclasses
import json
import re

import numpy as np
import pytest
from _cli import simstudy

from simstudy import extrapolation
from simstudy.commands import _pages, audit_page, extrapolate, extrapolate_page, study
from simstudy.commands import audit as audit_command
from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.stats import metrics
from simstudy.studies import audit

# -- rounding -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "mcse", "kwargs", "shown"),
    [
        (0.998, 0.001998, {}, "0.998 ± 0.002"),  # not 0.998 ± 0.001998
        (0.99812, 0.00142, {}, "0.9981 ± 0.0014"),  # a leading 1 keeps two digits
        (-0.00054, 0.00071, {}, "-0.0005 ± 0.0007"),
        (12.345, 3.2, {}, "12 ± 3"),
        (1234.5, 56.0, {}, "1230 ± 60"),
        (0.4617, 0.0312, {"percent": True}, "46% ± 3%"),
        (0.5, 0.0, {}, "0.5"),
        (float("nan"), 0.1, {}, "—"),
    ],
)
def test_format_estimate_rounds_to_the_mcse(value, mcse, kwargs, shown):
    assert metrics.format_estimate(value, mcse, **kwargs) == shown


def test_described_distributions_are_rounded_in_the_log(tmp_path):
    (tmp_path / "run.json").write_text(
        json.dumps({"distributions": {"bag": {"name": "bag", "size": 3, "maximum": 0.8898352881786101,
                                              "support": [0.5, 0.8898352881786101]}}})
    )
    assert study.describe(tmp_path / "run.json") == ["bag: size=3, maximum=0.8898, support=[0.5, 0.8898]"]


def test_markdown_bold_is_not_for_terminals():
    assert _pages.plain("**The bands covered 80%**: **BELOW** nominal.") == "The bands covered 80%: BELOW nominal."


# -- atoms in words -------------------------------------------------------------------------------------------------


def test_atom_notes_in_plain_words():
    x = np.concatenate([np.full(32, 0.001), np.linspace(0.5, 0.9, 68)])
    assert _pages.atom_notes({"mlp": x}) == [
        "mlp: 32% of the runs scored exactly 0.001, which looks like failed or chance-level runs"
    ]
    assert _pages.atom_notes({"mlp": np.linspace(0.5, 0.9, 100)}) == []


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_curve_and_bands_say_what_the_audit_says_about_atoms(tmp_path):
    x = np.concatenate([np.zeros(16), np.linspace(0.5, 0.9, 34)])
    (tmp_path / "runs.csv").write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    for command in ("curve", "bands"):
        proc = simstudy(command, "data=runs.csv", f"hydra.run.dir={command}", cwd=tmp_path)
        assert "32% of the runs scored exactly 0, which looks like failed or chance-level runs" in proc.stdout, command
    (tmp_path / "smooth.csv").write_text("score\n" + "\n".join(f"{v:.4f}" for v in x[16:]) + "\n")
    proc = simstudy("curve", "data=smooth.csv", "hydra.run.dir=smooth", cwd=tmp_path)
    assert "scored exactly" not in proc.stdout


def test_curve_says_never_reaches_within_its_trials(tmp_path):
    rows = ["model,score"] + [f"cnn,{0.3 + 0.004 * i}" for i in range(30)] + [f"lr,{0.36 + 0.001 * i}" for i in range(20)]
    (tmp_path / "results.csv").write_text("\n".join(rows) + "\n")
    proc = simstudy("curve", "data=results.csv", "target=0.395", "hydra.run.dir=out", cwd=tmp_path)
    assert "lr: expected max never reaches 0.395 within 20 trials" in proc.stdout
    assert "cnn: expected max first reaches 0.395 at n = " in proc.stdout and "not reached" not in proc.stdout


# -- EXTRAPOLATE.md -------------------------------------------------------------------------------------------------


def _extrapolate(x, tmp_path, **options):
    opts = extrapolate.parse(
        {"data": "scores.csv", "n_boot": 8, "k_max": 1000, "mean": False, "n_jobs": 1, **options}
    )
    result = extrapolation.run(extrapolation.prepare({"mlp": x}, opts, "scores.csv"), opts, tmp_path, progress=False)
    text = extrapolate_page.write_page(result, opts, "scores.csv", tmp_path).read_text()
    return result.fits.iloc[0], text, extrapolate_page.summary(result, opts.level)


def _law(seed=5, a=0.5, c=3, o=0.01, n=200):
    return NoisyQuadratic(a, 0.9, c, o).sample(n, rng=np.random.default_rng(seed))


def test_a_law_that_describes_the_scores_raises_no_warning(tmp_path):
    fit, text, summary = _extrapolate(_law(), tmp_path, low=0.0, high=1.0)
    assert fit["np_checked"] == 200 and fit["np_outside"] == 0  # every k = 1..n, not only where the band is nontrivial
    assert "do not extrapolate" not in text and "Warning" not in text and "do not extrapolate" not in " ".join(summary)
    assert "at 200 of the 200 budgets k = 1..200" in text
    assert "b is the best of the noise-free law" in text


def test_the_censored_budgets_are_not_judged_against_the_band(tmp_path):
    """Threshold at the 75% quantile: the law is fitted to the top quarter only, and the median of the best of
    k < 3 runs lies among the censored scores (0.75^2 > 1/2). Here those are failed runs near 0.1 that the law
    does not describe; a law right about the tail is not faulted for them (the check starts at k = 3)."""
    x = np.sort(_law(seed=11, n=200))
    cut = (x[149] + x[150]) / 2  # the top quarter kept as drawn: the censoring threshold below it
    x[:150] = 0.1 + 0.001 * np.random.default_rng(12).random(150)  # the lower 75%: failed runs
    fit, text, _ = _extrapolate(np.random.default_rng(13).permutation(x), tmp_path, low=0.0, high=1.0,
                                threshold_score=float(cut), c=[3])
    assert fit["np_first_checked"] == 3 and fit["np_checked"] == 198
    assert fit["np_outside"] == 0, fit["np_first_outside"]
    assert "budgets k = 3..200 (below k = 3 the median curve lies among the censored scores, not fitted)" in text
    # judged from k = 1, the law's median at k = 2 (its 71% quantile, near 0.76) lies far
    # above the scores' (failed runs near 0.1): the check would have said "do not extrapolate"
    assert fit["median_at_n"] > 0.8


def test_median_curve_above_the_observed_best_says_do_not_extrapolate(tmp_path):
    # c = 10 forced on scores of a c = 1 law: the law's best of n runs beats the observed best almost surely
    fit, text, summary = _extrapolate(_law(seed=9, a=0.7, c=1, o=0.0), tmp_path, c=[10])
    assert fit["median_at_n"] > fit["max_score"] and fit["p_best_at_most_observed"] < 0.025
    top = text.split("![extrapolation]")[0]
    assert "> **The law does not describe the scores of mlp: do not extrapolate these scores.**" in top
    assert "above the best score of the 200 runs" in top
    assert summary[0].startswith("The law does not describe the scores of mlp: do not extrapolate") and "**" not in summary[0]


def test_median_curve_outside_the_band_within_the_data_says_do_not_extrapolate(tmp_path):
    fit, text, _ = _extrapolate(_law(), tmp_path, c=[10], low=0.0, high=1.0)  # c = 10 on scores of a c = 3 law
    assert fit["np_outside"] > 0 and fit["p_best_at_most_observed"] > 0.025
    top = text.split("![extrapolation]")[0]
    assert "do not extrapolate these scores" in top and "leaves the nonparametric 95% band" in top


def test_c_at_the_edge_of_the_values_searched_is_flagged(tmp_path):
    fit, text, _ = _extrapolate(_law(), tmp_path, c=[1, 2, 3])
    assert fit["c"] == 3 and "**Warning: c = 3 is at the edge of the values searched (1..3)**" in text
    _, text, _ = _extrapolate(_law(), tmp_path / "free")  # c searched over 1..10: c = 3 inside
    assert "edge of the values searched" not in text


def test_a_below_the_scales_floor_is_flagged_and_b_explained(tmp_path):
    x = _law(seed=7, a=-2.0, c=2, o=0.002, n=800)
    x = x[x > 0][:200]
    fit, text, _ = _extrapolate(x, tmp_path, low=0.0, high=1.0)
    assert fit["a"] < 0 and fit["beyond_scale"]
    assert "**Warning: a = " in text and "lies below the scale's floor (0)**" in text
    # a below the floor is flagged, but the law still describes the tail: no "do not extrapolate"
    assert "do not extrapolate" not in text
    if fit["b"] < fit["max_score"]:
        assert "It is below the best observed score" in text and "the luckiest runs exceed it" in text


# -- AUDIT.md ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """300 runs, 10% failed at exactly 0; audited at n = 30 with 20 bootstrap rounds (their bands cover poorly)."""
    rng = np.random.default_rng(1711)
    x = np.concatenate([np.zeros(30), rng.normal(0.35, 0.01, 90), rng.normal(0.85, 0.02, 180)])
    x = np.round(np.clip(x, 0, 1), 4)
    out = tmp_path_factory.mktemp("audit")
    (out / "runs.csv").write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    opts = audit_command.parse({"data": str(out / "runs.csv"), "low": 0.0, "high": 1.0, "rounds": 40,
                               "bootstrap_rounds": 20, "resamples": 100, "evp_reps": 200, "target_k": 5,
                               "sample_size": 30})
    spec = {"kind": "kde_atoms", "path": str(out / "runs.csv"), "low": 0.0, "high": 1.0, "bw_of": "reflected",
            "bandwidth": None, "bw_factor": None, "name": "runs"}
    result = audit.run(opts, spec, 30, out)
    return result, opts, x, out


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_audit_gives_plain_verdicts(audited):
    result, opts, x, out = audited
    text = audit_page.write_page(result, opts, x, out).read_text()
    assert "10% of the runs scored exactly 0, which looks like failed or chance-level runs" in text
    assert f"informative up to k = {int(np.floor(result.bounded_k))} iterations" in text and "k ≈" not in text
    band = text.split("## Confidence bands")[1].split("![coverage]")[0]
    assert not re.search(r"\d\.\d%", band)  # 40 searches: whole percent (MCSE about 6%), not 72.5%
    assert "The 80% `ld_highest_density` bands" in band
    boot = text.split("## Bootstrap bands")[1].split("![bootstrap]")[0]
    assert "95% Clopper–Pearson interval" in boot and "(Clopper–Pearson " not in boot
    # 20 rounds at n = 30: the percentile-bootstrap bands cover far below 95% (their interval's top below it)
    assert re.search(r"\*\*These intervals cover \d+% at nominal 95% \(k = \d+\): do not use them at this n\.\*\*", boot)
    # every estimate in the accuracy table is rounded to its MCSE: at most two significant digits of error
    for row in text.split("| --- | --- | --- | --- |")[1].split("\n\n")[0].strip().splitlines():
        for cell in row.strip("| ").split(" | ")[1:]:
            value, err = cell.split(" ± ")
            assert len(err.lstrip("0.").replace(".", "")) <= 2 and len(value.split(".")[-1]) == len(err.split(".")[-1])


def test_bootstrap_consistent_with_nominal_gets_no_do_not_use():
    import pandas as pd

    boot = pd.DataFrame({"estimator": ["u", "u"], "k": [1, 30], "nominal": 0.95, "estimate": [0.95, 0.94],
                         "ci_low": [0.9, 0.88], "ci_high": [0.98, 0.97], "reps": 200})
    (line,) = audit_page._bootstrap_lines(boot, 30, 0.95)
    assert "Consistent with their nominal level" in line and "do not use" not in line


@pytest.mark.parametrize("target", [3, 5, 10, 17])
def test_samples_needed_is_the_smallest_n_below_100(target):
    from simstudy.stats.bands import trivial_budget

    n = audit.samples_needed(target, 0.8, "ld_highest_density")
    assert trivial_budget(n, 0.8, "ld_highest_density") >= target > trivial_budget(n - 1, 0.8, "ld_highest_density")


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_samples_needed_does_not_report_its_cap(audited):
    assert audit.samples_needed(10, 0.8, "ld_highest_density") == 61
    assert audit.samples_needed(1000, 0.8, "ld_highest_density", limit=64) is None
    result, opts, x, out = audited
    text = audit_page.write_page(dataclasses.replace(result, samples_for_target=None), opts, x, out).read_text()
    assert f"**Not reached within n ≤ {audit.SAMPLES_LIMIT:,}" in text and "you need n ≥" not in text


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_audit_prints_no_markdown_bold(tmp_path):
    x = np.concatenate([np.zeros(10), np.random.default_rng(3).normal(0.8, 0.02, 90)])
    (tmp_path / "runs.csv").write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    proc = simstudy("audit", "data=runs.csv", "low=0", "high=1", "rounds=20", "bootstrap_rounds=20",
                    "resamples=50", "evp_reps=50", "sample_size=20", "target_k=3", "n_jobs=1",
                    "hydra.run.dir=out", cwd=tmp_path)
    assert "covered the whole curve" in proc.stdout and "**" not in proc.stdout


def test_extrapolate_report_rounds_errors_and_draws_user_text(tmp_path):
    opts = extrapolate.parse({"data": r"x$\bad$.csv", "n_boot": 8, "k_max": 1000, "mean": False, "n_jobs": 1})
    x = _law()
    result = extrapolation.run(extrapolation.prepare({"budget $5_$": x}, opts, "x.csv"), opts, tmp_path, progress=False)
    text = extrapolate_page.write_page(result, opts, r"x$\bad$.csv", tmp_path).read_text()  # the figure saved: no raise
    assert (tmp_path / "extrapolation.png").stat().st_size > 0
    sims = result.simulation.iloc[0]
    shown = metrics.format_estimate(sims["mean_abs_rel_error"], sims["mean_abs_rel_error_mcse"], percent=True)
    assert f"| {shown} |" in text and re.search(r"\| \d+(\.\d)?% ± \d+(\.\d)?% \|", text)


def test_extrapolation_figure_marks_the_observed_best_and_draws_no_rectangle(tmp_path):
    import matplotlib.pyplot as plt

    from simstudy.charts import to_matplotlib

    opts = extrapolate.parse({"data": "s.csv", "n_boot": 8, "k_max": 1000, "mean": False, "n_jobs": 1,
                                     "low": 0.0, "high": 1.0})
    result = extrapolation.run(extrapolation.prepare({"mlp": _law()}, opts, "s.csv"), opts, tmp_path, progress=False)
    chart = extrapolate_page.extrapolation_chart(result.curves, result.fits)
    fig = to_matplotlib(chart)
    assert "best of the 200 runs" in [t.get_text() for t in fig.legends[0].get_texts()]
    (best,) = [r for r in chart.references if r.label == "best of the 200 runs"]
    assert best.value == result.fits["max_score"].iloc[0] and best.span[0] < 200 < best.span[1]
    (bar,) = [c for c in fig.axes[0].collections if c.get_linewidth()[0] == 2.5]  # drawn at n, at the best
    assert bar.get_segments()[0][:, 1].tolist() == [best.value, best.value]
    c = result.curves[(result.curves["curve"] == "median") & np.isfinite(result.curves["inside_np"])]
    shaded = [r for r in chart.rows if "nonparametric" in r["hue"] and "hi" in r]
    assert shaded and max(r["hi"] for r in shaded) <= c["np_upper"].max() + 1e-12  # no shade up to the edge
    trivial = result.curves[(result.curves["curve"] == "median") & ~np.isfinite(result.curves["inside_np"])
                            & (result.curves["k"] <= 200)]
    alone = [r for r in chart.rows if "nonparametric" in r["hue"] and "hi" not in r]
    assert len(alone) == len(trivial)  # where the upper side is trivial: the lower side alone, a thin line
    plt.close(fig)


def test_bootstrap_verdict_cites_the_k_already_named_when_its_coverage_reads_the_same():
    # The worst coverage (59.9% at k = 511) reads as 60%, as the 60.05% at k = 512 named first: the verdict
    # cites k = 512, not "60% at k = 512" then "cover 60% ... (k = 511)"; a distinctly lower k is cited itself.
    import pandas as pd

    boot = pd.DataFrame({"estimator": "u", "k": [1, 511, 512], "nominal": 0.95, "estimate": [0.9, 0.599, 0.6005],
                         "ci_low": [0.85, 0.53, 0.53], "ci_high": [0.94, 0.67, 0.67], "reps": 200})
    (line,) = audit_page._bootstrap_lines(boot, 512, 0.95)
    assert "60% at k = 512" in line and "**These intervals cover 60% at nominal 95% (k = 512)" in line
    (line,) = audit_page._bootstrap_lines(boot.assign(estimate=[0.9, 0.4, 0.6005]), 512, 0.95)
    assert "**These intervals cover 40% at nominal 95% (k = 511)" in line
