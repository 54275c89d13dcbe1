"""`simstudy extrapolate` as a library: parse, run and write from Python, without the command line."""

import numpy as np
import pytest

from simstudy.commands import extrapolate, extrapolate_fit
from simstudy.datasets import DataError
from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.schema import ConfigError

SMALL = {"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1}


def _scores():
    return NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))


def test_run_from_python_gives_the_fit_and_its_bootstrap(tmp_path):
    opts = extrapolate.parse(SMALL)
    result = extrapolate.run({"mlp": _scores()}, opts, tmp_path, progress=False)
    assert isinstance(result, extrapolate.ExtrapolateResult)
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
