"""The data commands on arrays (:mod:`simstudy.notebook`, issue 35 §3): the same numbers as the command line on
the same scores, nothing written unless asked, and the command's one-line errors."""

import numpy as np
import pandas as pd
import pytest

import simstudy
from simstudy import datasets
from simstudy.schema import ConfigError


@pytest.fixture
def losses(tmp_path, rng):
    """Two models' losses (three decimals: ties) in a CSV, and the arrays the command line reads from it."""
    a = {"mlp": np.round(rng.beta(3, 8, size=30), 3), "lstm": np.round(rng.beta(2, 6, size=24), 3)}
    rows = [(m, v) for m, x in a.items() for v in x]
    pd.DataFrame(rows, columns=["model", "score"]).to_csv(tmp_path / "loss.csv", index=False)
    return datasets.load_scores(str(tmp_path / "loss.csv"))  # the command's reader: the same floats


@pytest.mark.slow  # a whole command run in-process (or its files and page), seconds: CI's slow lane
def test_bands_minimize_equals_the_command_line(tmp_path, losses, run_cli):
    status, _, err = run_cli("bands", "data=loss.csv", "minimize=true", "method=dkw", "confidence=0.8", "low=0",
                             "high=1", "hydra.run.dir=out")
    assert status == 0, err
    mine = simstudy.bands(losses, minimize=True, method="dkw", confidence=0.8, low=0, high=1)
    pd.testing.assert_frame_equal(mine.frame, pd.read_parquet(tmp_path / "out" / "bands.parquet"), check_exact=True)
    written = pd.read_csv(tmp_path / "out" / "cdf_bands.csv")
    pd.testing.assert_frame_equal(mine.result.cdfs, written, check_exact=False, rtol=0, atol=1e-15)
    # the curves of the minimum fall with k, and two models give the evidence table
    assert (mine.frame.groupby("model")["point"].diff().dropna() <= 0).all()
    assert mine.result.evidence is not None


@pytest.mark.slow  # a whole command run in-process (or its files and page), seconds: CI's slow lane
def test_curve_minimize_equals_the_command_line(tmp_path, losses, run_cli):
    status, out, err = run_cli("curve", "data=loss.csv", "minimize=true", "target=0.15", "hydra.run.dir=out")
    assert status == 0, err
    mine = simstudy.curve(losses, minimize=True, target=0.15)
    pd.testing.assert_frame_equal(mine.frame, pd.read_parquet(tmp_path / "out" / "curves.parquet"), check_exact=True)
    assert "expected_min" in mine.frame and "first reaches 0.15 (at or below)" in out
    targets = pd.read_csv(tmp_path / "out" / "targets.csv")
    assert mine.result.targets["n"].tolist() == targets["n"].tolist()


def test_one_array_is_one_model_and_the_expected_minimum_mirrors_the_maximum():
    x = np.array([0.2, 0.5, 0.9, 0.4])
    down, up = simstudy.curve(x, minimize=True).frame, simstudy.curve(-x).frame
    assert down["model"].unique().tolist() == ["model"]
    np.testing.assert_array_equal(down["expected_min"], -up["expected_max"])  # negation is exact
    np.testing.assert_array_equal(down["band_low"], -up["band_high"])
    # the known answer: the mean of the pairs' minima at n = 2 (U, Tang et al.)
    u = simstudy.curve(x, minimize=True, estimator="u").frame["expected_min"]
    pairs = [min(a, b) for i, a in enumerate(x) for b in x[i + 1 :]]
    assert u[1] == pytest.approx(np.mean(pairs), abs=1e-15)


@pytest.mark.slow  # a whole command run in-process (or its files and page), seconds: CI's slow lane
def test_nothing_is_written_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = simstudy.bands({"a": [0.2, 0.4, 0.3, 0.5], "b": [0.1, 0.6, 0.35]}, method="ks", low=0, high=1)
    html = result.to_html()
    fig = result.figure("cdf")
    assert list(tmp_path.iterdir()) == []
    assert html.startswith("<!DOCTYPE html>") and "simstudy bands" in html
    assert "CDF" in fig.get_suptitle()
    written = result.write(tmp_path / "mine")
    assert [p.name for p in written][-2:] == ["BANDS.md", "report.html"] and all(p.is_file() for p in written)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "mine" / "bands.parquet"), result.frame)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: simstudy.curve([0.1, 0.2], estimatr="u"), "estimatr is not a setting of simstudy curve"),
        (lambda: simstudy.bands([0.1, 0.2], kind="mode"), "kind must be one of"),
        (lambda: simstudy.curve([0.1, 0.2], data="x.csv"), "data='x.csv' reads a file: simstudy.curve takes"),
        (lambda: simstudy.bands([0.1, 0.2], scale=0.01), "scale=0.01 reads a file: simstudy.bands takes"),
        (lambda: simstudy.curve([0.1, np.nan]), r"scores\[1\] is nan: every score must be a finite number"),
        (lambda: simstudy.curve({"a": [0.1, 1.5]}, high=1), r"scores\['a'\]\[1\] = 1.5 is outside \[low, high\]"),
        (lambda: simstudy.curve([[0.1, 0.2]]), r"scores must be a non-empty 1-d array, got shape \(1, 2\)"),
        (lambda: simstudy.curve({}), "scores is an empty mapping"),
        (lambda: simstudy.curve({"a": [0.1, 0.2]}, model="b"), "model b not in scores"),
        (lambda: simstudy.curve([0.1, 0.2], compare=True), "compare=true needs at least two models"),
        (lambda: simstudy.extrapolate([0.1, 0.2], missing="drop"), "missing='drop' reads a file"),
    ],
)
def test_a_bad_option_is_the_commands_one_line_error(call, message):
    with pytest.raises(ConfigError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_models_and_sample_size_select_as_from_a_file():
    scores = {"a": np.arange(10.0) / 10, "b": np.arange(8.0) / 10}
    result = simstudy.curve(scores, models=["b"], sample_size=4)
    assert result.frame["model"].unique().tolist() == ["b"] and result.frame["n"].max() == 4


@pytest.mark.slow  # a whole command run in-process (or its files and page), seconds: CI's slow lane
def test_extrapolate_equals_the_command_line(tmp_path, run_cli):
    from simstudy.distributions.parametric import NoisyQuadratic

    ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    pd.DataFrame({"score": ys}).to_csv(tmp_path / "ys.csv", index=False)
    x = datasets.load_scores(str(tmp_path / "ys.csv"))
    keys = {"c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1}
    status, _, err = run_cli("extrapolate", "data=ys.csv", *(f"{k}={v}" for k, v in keys.items()), "hydra.run.dir=o")
    assert status == 0, err
    mine = simstudy.extrapolate(x, **keys)
    written = pd.read_csv(tmp_path / "o" / "extrapolation.csv")
    assert mine.frame.shape == written.shape
    np.testing.assert_allclose(mine.frame.select_dtypes("number"), written.select_dtypes("number"), rtol=1e-15)
    assert mine.figure().axes  # the command's figure, drawn from the result


@pytest.mark.slow  # the audit's three studies, seconds: CI's slow lane
def test_audit_equals_the_command_line_and_leaves_no_directory(tmp_path, losses, run_cli, monkeypatch):
    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    small = {"model": "mlp", "rounds": 64, "bootstrap_rounds": 8, "resamples": 50, "evp_reps": 400,
             "target_k": 3, "bandwidth": 0.03, "n_jobs": 1}
    status, _, err = run_cli("audit", "data=loss.csv", "minimize=true", *(f"{k}={v}" for k, v in small.items()),
                             "hydra.run.dir=out")
    assert status == 0, err
    mine = simstudy.audit(losses, minimize=True, **small)
    for study in ("coverage", "bootstrap", "accuracy"):
        theirs = pd.read_parquet(tmp_path / "out" / study / "summary.parquet")
        got = mine.frame[mine.frame["study"] == study].drop(columns=["model", "study"]).dropna(axis=1, how="all")
        np.testing.assert_array_equal(got["estimate"].to_numpy(), theirs["estimate"].to_numpy(), err_msg=study)
    assert "covered" in mine.to_html() and list((tmp_path / "tmp").iterdir()) == []  # the studies' directory went
    kept = simstudy.audit(losses, minimize=True, out_dir=tmp_path / "kept", **small)
    assert (tmp_path / "kept" / "AUDIT.md").is_file() and (tmp_path / "kept" / "coverage").is_dir()
    pd.testing.assert_frame_equal(kept.frame, mine.frame)


@pytest.mark.slow  # two audits' studies, seconds: CI's slow lane
def test_audit_of_several_models_audits_each_in_its_directory(tmp_path, losses):
    small = {"rounds": 32, "bootstrap_rounds": 4, "resamples": 20, "evp_reps": 100, "target_k": 3,
             "bandwidth": 0.03, "n_jobs": 1}
    result = simstudy.audit(losses, minimize=True, out_dir=tmp_path / "both", **small)
    assert result.frame["model"].unique().tolist() == ["mlp", "lstm"]
    assert [m for m, _, _ in result.result] == ["mlp", "lstm"]
    for model in ("mlp", "lstm"):
        assert (tmp_path / "both" / f"model={model}" / "AUDIT.md").is_file()
    written = result.write(tmp_path / "again")
    assert written[-1].name == "report.html" and (tmp_path / "again" / "model=lstm" / "AUDIT.md").is_file()
