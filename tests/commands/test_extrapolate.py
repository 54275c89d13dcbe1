"""`simstudy extrapolate` as a library: parse, run and write from Python, without the command line."""

import numpy as np
import pandas as pd
import pytest

from simstudy.commands import _pages, extrapolate, extrapolate_fit, extrapolate_page
from simstudy.commands.extrapolate_fit import Extrapolation
from simstudy.datasets import DataError
from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.schema import ConfigError

SMALL = {"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1}


def _scores():
    return NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))


def test_run_from_python_gives_the_fit_and_its_bootstrap(tmp_path):
    opts = extrapolate.parse(SMALL)
    result = extrapolate.run({"mlp": _scores()}, opts, tmp_path, progress=False)
    assert isinstance(result, Extrapolation)
    fit = result.fits.iloc[0]
    assert (fit["model"], fit["runs"], fit["c"], fit["n_boot"]) == ("mlp", 48, 3, 2)
    assert round(float(fit["b"]), 4) == 0.9082
    assert result.simulation["multiple"].tolist() == [1, 2, 5, 10]
    assert result.report.computed == 1
    # the same numbers as the analysis called step by step (what the command line does)
    again = extrapolate_fit.run(extrapolate_fit.prepare({"mlp": _scores()}, opts, "s"), opts, tmp_path, progress=False)
    assert again.report.resumed == 1 and again.fits.equals(result.fits) and again.curves.equals(result.curves)


def test_write_gives_the_tables_figure_and_page(tmp_path):
    opts = extrapolate.parse(SMALL)
    result = extrapolate.run({"mlp": _scores()}, opts, tmp_path, progress=False)
    page = extrapolate.write(result, opts, tmp_path, source="scores.csv")
    assert page == tmp_path / "EXTRAPOLATE.md"
    assert page.read_text().startswith("# Extrapolated tuning curves: `scores.csv`")
    for name in ("extrapolation.csv", "fit.csv", "simulation.csv", "extrapolation.png"):
        assert (tmp_path / name).is_file()


def test_a_sample_it_cannot_fit_is_a_data_error_naming_the_fix(tmp_path):
    opts = extrapolate.parse({**SMALL, "sample_size": 60})
    with pytest.raises(DataError, match=r"^sample_size=60 exceeds the 48 scores of model mlp in scores: give "):
        extrapolate.run({"mlp": _scores()}, opts, tmp_path)
    assert not any(tmp_path.iterdir())  # refused before anything is written


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"threshold": 1.0}, r"^threshold must be a quantile in \[0, 1\)"),
        ({"c": [1, 1]}, r"^c lists 1 more than once"),
        ({"c": 11}, r"^c must be an integer from 1 to 10"),
        ({"threshold": 0.3, "threshold_score": 0.8}, r"^threshold=0.3 and threshold_score=0.8 both set"),
        ({"k_max": 10**16}, r"^k_max=10000000000000000 is beyond"),
        ({"n_jobs": 0}, r"^n_jobs must be a positive number of workers"),
        ({"n_boot": 1}, r"^n_boot "),
        ({"level": 1.5}, r"^level "),
        ({"nboot": 5}, r"^nboot is not a setting of simstudy extrapolate"),
    ],
)
def test_bad_values_raise_a_config_error_naming_the_key(cfg, message):
    with pytest.raises(ConfigError, match=message):
        extrapolate.parse({"data": "scores.csv", **cfg})


def test_source_name_is_the_file_or_the_data_set():
    assert extrapolate.source_name(extrapolate.parse({"data": "a/b/runs.csv"})) == "runs.csv"
    assert extrapolate.source_name(extrapolate.parse({"data": "reuters_hedwig"})) == "reuters_hedwig"


# -- issue 34 §1: extrapolation that warns ----------------------------------------------------------------------------
# Real ImageNet runs are not shipped: each case is a synthetic score set that reproduces the pattern. The banner
# (misfit_banner, the top of EXTRAPOLATE.md) and the terminal (summary) are checked without drawing the figure.


def _fitted(x, tmp_path, **options):
    opts = extrapolate.parse({"data": "s.csv", "n_boot": 8, "k_max": 1000, "mean": False, "n_jobs": 1, **options})
    result = extrapolate.run({"mlp": x}, opts, tmp_path, progress=False)
    top = "\n".join(extrapolate_page.misfit_banner(result.fits, opts.level, result.curves))
    return result, top, extrapolate_page.summary(result, opts.level)


def _overshooting():
    """512 runs of a c = 3 law fitted with c = 4: the law's median best of 512 lies above the best the runs gave,
    its band excluding it, while the two-sided check (p below 2.5%) stays silent (ConvNeXt's pattern)."""
    return NoisyQuadratic(0.5, 0.9, 3, 0.0).sample(512, rng=np.random.default_rng(3417))


def test_a_band_above_the_observed_best_is_a_failed_check_at_the_top_and_in_the_terminal(tmp_path):
    result, top, said = _fitted(_overshooting(), tmp_path, c=[4], k_max=51200)
    f = result.fits.iloc[0]
    assert f["median_at_n_lower"] > f["max_score"] and f["overshoots"]
    p = f["p_best_at_most_observed"]
    assert 0.025 < p < 0.5  # the two-sided level would not have fired
    assert top.startswith("> **Failed check (mlp): the law promises more than the runs delivered.**")
    assert f"lies wholly above the best score the 512 runs gave ({f['max_score']:.4g})" in top
    assert f"(p = {p:.2g})" in top and "would come up in" in top and "read them as optimistic" in top
    assert said[0].startswith("Failed check (mlp): the law promises more than the runs delivered.") and "**" not in said[0]
    # the same law fitted with its own c: no overshoot, no line
    result, top, said = _fitted(_overshooting(), tmp_path / "c3", c=[3], k_max=51200)
    assert not result.fits.iloc[0]["overshoots"] and "Failed check" not in top and "Failed check" not in said[0]


def test_overshoot_on_losses_is_the_mirror(tmp_path):
    result, top, said = _fitted(1 - _overshooting(), tmp_path, c=[4], k_max=51200, minimize=True, low=0, high=1)
    f = result.fits.iloc[0]
    assert f["median_at_n_upper"] < f["min_score"] and f["overshoots"]
    assert f"lies wholly below the best score the 512 runs gave ({f['min_score']:.4g})" in top
    assert "a best score this high or higher would come up in" in top


def _held_out_misses():
    """The first 48 runs from a search whose best is 0.7, the other 252 from one whose best is 0.9: the band
    extrapolated from the 48 misses the median curve of all 300 everywhere."""
    rng = np.random.default_rng(3402)
    return np.concatenate(
        [NoisyQuadratic(0.4, 0.7, 3, 0.0).sample(48, rng=rng), NoisyQuadratic(0.5, 0.9, 3, 0.005).sample(252, rng=rng)]
    )


def test_a_failed_held_out_check_reaches_the_top_and_the_terminal(tmp_path):
    result, top, said = _fitted(_held_out_misses(), tmp_path, sample_size=48, low=0, high=1, c=[3], k_max=3000)
    f = result.fits.iloc[0]
    checked, covered = int(f["held_out_checked"]), int(f["held_out_covered"])
    assert checked > 10 and covered == 0
    said_top = (
        f"the held-out check failed: the 95% band extrapolated from the first 48 runs covers the median tuning "
        f"curve of all 300 runs at only {covered} of {checked} budgets k = 48..300"
    )
    assert "> **The law does not describe the scores of the first 48 runs of mlp: do not extrapolate" in top
    assert said_top in top and any(said_top in line for line in said)
    assert np.isnan(result.fits.iloc[1]["held_out_checked"])  # the reference fit has no held-out runs


def test_a_held_out_band_missing_in_places_is_a_warning_at_the_top():
    fits = pd.DataFrame({"model": ["mlp"], "runs": [48], "total_runs": [300], "np_outside": [0], "np_checked": [48],
                         "median_at_n": [0.85], "p_best_at_most_observed": [0.4], "max_score": [0.86], "c": [3],
                         "b": [0.9], "b_lower": [0.88], "b_upper": [0.95], "held_out_checked": [18.0],
                         "held_out_covered": [15.0], "held_out_first_miss": [240.0]})
    curves = pd.DataFrame({"model": "mlp", "runs": 48, "curve": "median", "k": [48.0], "estimate": [0.85],
                           "lower": [0.84], "upper": [0.86]})
    top = "\n".join(extrapolate_page.misfit_banner(fits, 0.95, curves))
    assert "do not extrapolate" not in top
    assert ("> **Warning (the first 48 runs of mlp): the held-out band misses in places**: the 95% band extrapolated "
            "from the first 48 runs covers the median tuning curve of all 300 runs at only 15 of 18 budgets") in top
    assert "the held-out check failed" in "\n".join(
        extrapolate_page.misfit_banner(fits.assign(held_out_covered=8.0), 0.95, curves))


def _below_the_floor():
    """Accuracies of a c = 2 law with a = -1.5, the runs below 0 failed at exactly 0: fitted above 0.5, the law's
    a is far below 0 and its mean and median at k = 1 lie below 0."""
    x = NoisyQuadratic(-1.5, 0.9, 2, 0.0).sample(300, rng=np.random.default_rng(3403))
    return np.clip(x, 0.0, None)


def test_accuracies_without_low_get_the_floor_assumed_and_the_breach_its_cause(tmp_path):
    result, top, said = _fitted(_below_the_floor(), tmp_path, threshold_score=0.5, mean=True, k_max=3000)
    f = result.fits.iloc[0]
    at1 = result.curves[result.curves["k"] == 1].set_index("curve")["estimate"]
    assert f["a"] < 0 and (at1 < 0).all() and f["bounds_assumed"] == "low=0, high=1"
    assert "> **Scale assumed for mlp:** its scores all lie in [0, 1], so they look like accuracies or rates" in top
    assert "the law predicts scores below low=0: the median curve from k = 1" in top
    cause = f"the law's worst score a = {f['a']:.4g} lies below low=0"
    assert cause in top and "as k grows" not in top.split("below low=0")[1].split("\n")[0]
    assert any(cause in line for line in said) and any("look like accuracies or rates" in line for line in said)


def test_with_low_given_the_breach_at_k_1_is_blamed_on_a_not_on_the_noise(tmp_path):
    result, top, _ = _fitted(_below_the_floor(), tmp_path, threshold_score=0.5, mean=True, k_max=3000, low=0)
    f = result.fits.iloc[0]
    assert f["o"] == 0 and f["bounds_assumed"] == "high=1"
    line = next(w for w in top.splitlines() if "below low=0: the median curve from k = 1" in w)
    assert f"the law's worst score a = {f['a']:.4g} lies below low=0" in line and "noise term" not in line


def _failed_at_zero():
    """500 accuracies, 14% of them failed runs at exactly 0."""
    rng = np.random.default_rng(3404)
    return rng.permutation(np.concatenate([np.zeros(70), NoisyQuadratic(0.5, 0.9, 3, 0.005).sample(430, rng=rng)]))


def test_the_default_threshold_sets_failed_runs_aside_and_the_tail_fit_is_reported(tmp_path):
    x = _failed_at_zero()
    result, _, _ = _fitted(x, tmp_path, k_max=5000, c=[3])
    f = result.fits.iloc[0]
    # the median of the 430 scores that did not fail, not of all 500 (which sits among the worse half of them)
    assert f["failed_runs"] == 70 and f["n_tail"] == 430 - 215
    assert f["threshold"] == np.sort(x[x > 0])[214]
    assert 0 < f["tail_ks"] < f["tail_ks_critical"] == pytest.approx(np.sqrt(np.log(2 / 0.05) / (2 * 215)))
    opts = extrapolate.parse({"data": "s.csv", "n_boot": 8, "k_max": 5000})
    assert "The 70 failed runs (an atom of scores worse than most" in extrapolate_page._threshold_sentence(f, opts)
    assert "Fit in the tail: the 215 scores fitted lie" in extrapolate_page._tail_sentence(f, 0.95)


def test_a_tail_the_law_misfits_is_a_failed_check():
    fits = pd.DataFrame({"model": ["mlp"], "runs": [200], "total_runs": [200], "np_outside": [0],
                         "np_checked": [200], "median_at_n": [0.9], "p_best_at_most_observed": [0.4],
                         "max_score": [0.91], "n_tail": [100], "tail_ks": [0.2], "tail_ks_critical": [0.136]})
    (line, _) = extrapolate_page.misfit_banner(fits, 0.95)
    assert "do not extrapolate" in line and "it misfits the tail it was fitted to: the 100 scores above" in line
    assert extrapolate_page.misfit_banner(fits.assign(tail_ks=0.05), 0.95) == []


def test_failed_runs_of_a_loss_are_called_failed_runs():
    x = np.concatenate([np.zeros(14), np.linspace(0.5, 0.9, 86)])
    assert _pages.atom_notes({"m": 1 - x}, minimize=True) == [
        "m: 14% of the runs scored exactly 1, which looks like failed or chance-level runs"
    ]
    assert int(_pages.failed_runs(1 - x, minimize=True).sum()) == 14


def test_the_gain_of_a_loss_is_said_as_a_fall(tmp_path):
    opts = extrapolate.parse({**SMALL, "minimize": True, "low": 0, "high": 1})
    result = extrapolate.run({"mlp": 1 - _scores()}, opts, tmp_path, progress=False)
    section = "\n".join(
        extrapolate_page._extrapolate_section(result.fits.iloc[0], result.curves, result.simulation, None, opts)
    )
    gain = -result.simulation["gain"].iloc[-1]
    assert gain > 0 and f"(true(1) − true(k) = {gain:.3g} at 10n)" in section
    assert "/ (true(1) − true(k))" in section and "true(k) − true(1) = −" not in section


def test_the_tail_fit_check_reads_rounded_scores_as_rounded_not_as_a_misfit():
    # Accuracies on a finite validation set repeat: 1,024 draws of the law itself, recorded to a step of 0.005,
    # read as a misfit point by point (each tie a jump of the eCDF the continuous law has not); the check sets
    # each jump against the law's mass over its step, and still catches a law that does not fit.
    from types import SimpleNamespace

    from scipy import stats

    from simstudy.commands.extrapolate_fit import _tail_fit

    law = stats.norm(0.88, 0.01)
    x = np.round(law.rvs(size=1024, random_state=np.random.default_rng(3451)) / 0.005) * 0.005
    fitted = SimpleNamespace(fit=SimpleNamespace(law=law, threshold=-np.inf), sample=SimpleNamespace(scores=x))
    row = _tail_fit(fitted, 0.95)
    assert row["tail_ks"] < row["tail_ks_critical"]
    values, counts = np.unique(x, return_counts=True)  # the point-by-point distance: over the critical one
    point = np.max(np.abs(np.cumsum(counts) / x.size - law.cdf(values)))
    assert max(point, np.max(np.abs(law.cdf(values) - (np.cumsum(counts) - counts) / x.size))) > row["tail_ks_critical"]
    wrong = SimpleNamespace(fit=SimpleNamespace(law=stats.norm(0.885, 0.01), threshold=-np.inf),
                            sample=SimpleNamespace(scores=x))
    row = _tail_fit(wrong, 0.95)
    assert row["tail_ks"] > row["tail_ks_critical"]


def test_threshold_of_all_takes_the_quantile_among_every_run_as_the_paper_does():
    # the reproduction of Lourie et al. (2025) takes the median of all 48 runs, failed ones too; the default sets
    # the failed runs (an atom below the rest) aside first
    rng = np.random.default_rng(3452)
    x = np.r_[np.zeros(7), 0.8 + 0.1 * rng.beta(5, 2, 41)]
    default = extrapolate.parse({"data": "scores.csv"})
    paper = extrapolate.parse({"data": "scores.csv", "threshold_of": "all"})
    assert (default.threshold_of, paper.threshold_of) == ("completed", "all")
    assert extrapolate_fit._failed(x, default) == 7 and extrapolate_fit._failed(x, paper) == 0
    assert extrapolate_fit._rule(paper, 0, x.size).quantile == 0.5
    with pytest.raises(ConfigError, match="threshold_of"):
        extrapolate.parse({"data": "scores.csv", "threshold_of": "some"})
