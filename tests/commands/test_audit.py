"""`simstudy audit` as a library: parse, run and write from Python, without the command line."""

import numpy as np
import pytest

from simstudy.commands import audit, audit_page
from simstudy.schema import ConfigError
from simstudy.stats.bands import trivial_budget
from simstudy.studies.audit import AuditResult, plans, prepare

TINY = {"rounds": 20, "bootstrap_rounds": 4, "resamples": 20, "evp_reps": 20, "n_jobs": 1, "target_k": 3}


@pytest.fixture
def scores_file(tmp_path):
    x = np.random.default_rng(0).beta(8, 2, 40).round(4)
    path = tmp_path / "runs.csv"
    path.write_text("score\n" + "\n".join(map(str, x)) + "\n")
    return path, x


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_run_and_write_from_python(scores_file, tmp_path):
    path, x = scores_file
    opts = audit.parse({"data": str(path), **TINY})
    plan = prepare({"runs": x}, opts)
    assert (plan.model, plan.n, plan.spec["model"], plan.spec["path"]) == ("runs", 40, None, str(path))
    result = audit.run(plan, opts, tmp_path / "out")
    assert isinstance(result, AuditResult)
    assert result.n == 40 and result.samples_for_target == 16
    assert result.bounded_k == trivial_budget(40, 0.8, "ld_highest_density")
    assert {"coverage", "bootstrap", "accuracy"} <= {p.name for p in (tmp_path / "out").iterdir()}
    page = audit_page.write_page(result, opts, x, tmp_path / "out")
    assert page.read_text().startswith("# Audit of tuning-curve analyses at n = 40\n")
    text = audit.summary(page)
    assert text.startswith(
        "The 80% `ld_highest_density` bands for the median tuning curve covered the whole curve (every k) in 85% "
        "of 20 simulated searches of 40 iterations"
    )
    assert "To bound the curve up to k = 3 at 80% you need n ≥ 16 scores." in text and "**" not in text
    for name in ("fit", "coverage", "bootstrap", "accuracy"):
        assert (tmp_path / "out" / f"{name}.png").is_file()


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"confidence": 1.5}, r"^confidence must be a number strictly between 0 and 1, got 1.5"),
        ({"rounds": 1}, r"^rounds "),
        ({"low": None}, r"^low and high must be finite bounds of the scores"),
        ({"n_jobs": 0}, r"^n_jobs must be a positive number of workers"),
        ({"bandwidth": 1e-9}, r"^bandwidth=1e-09 is too small"),
        ({"target_k": 10**6}, r"^target_k=1000000 cannot be bounded"),
        ({"bw_of": "x"}, r"^bw_of "),
        ({"round": 5}, r"^round is not a setting of simstudy audit"),
    ],
)
def test_bad_values_raise_a_config_error_naming_the_key(cfg, message):
    with pytest.raises(ConfigError, match=message):
        audit.parse({"data": "scores.csv", **cfg})


def test_the_model_is_checked_before_anything_runs(tmp_path):
    two = {"a": np.linspace(0.5, 0.9, 10), "b": np.linspace(0.5, 0.9, 10)}
    with pytest.raises(ConfigError, match=r"^scores.csv holds several models \(a, b\): choose one with model=, or plan"):
        audit.run(two, audit.parse({"data": "scores.csv"}), tmp_path)
    with pytest.raises(ConfigError, match=r"^model 'c' is not in scores.csv \(models: a, b\)"):
        prepare(two, audit.parse({"data": "scores.csv", "model": "c"}))
    assert not any(tmp_path.iterdir())


def test_a_million_scores_are_refused_at_once_with_the_estimate_and_what_to_do(monkeypatch):
    # 10^6 scores ran past 5 minutes: the fit's check is N^2 work and the exact LD bands at n = N are n^2 (days)
    monkeypatch.delenv("SIMSTUDY_MAX_MINUTES", raising=False)
    many = {"runs": np.linspace(0.1, 0.9, 10**6)}
    with pytest.raises(ConfigError, match=r"^data=scores.csv needs about [0-9.]+ (hours|days) \(the check of the "
                       r"distribution fitted to 1,000,000 scores .*\): audit a random subset of the scores"):
        prepare(many, audit.parse({"data": "scores.csv"}))
    with pytest.raises(ConfigError, match=r"^method=ld_highest_density needs about [0-9.]+ (hours|days) \(the exact "
                       r"intervals of the bands audited at n = 100,000.*: method=dkw or method=ks .* or sample_size="):
        audit.parse({"data": "scores.csv", "sample_size": 10**5})
    # a closed-form band at that n passes
    assert audit.parse({"data": "scores.csv", "sample_size": 10**5, "method": "dkw"}).sample_size == 10**5


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (np.full(30, 0.7), r"^scores.csv holds 30 scores all equal to 0.7: the audit fits a density to the scores"),
        (np.r_[np.zeros(20), np.full(20, 0.5), 0.7], r"^scores.csv holds 1 distinct score beside the values repeated "
         r"beyond chance \(0, 0.5\), fitted as point masses: .* give find_atoms=false"),
    ],
    ids=["all-equal", "one-beside-atoms"],
)
def test_scores_no_density_fits_are_refused_in_the_users_words(tmp_path, x, message):
    # the studies' parse named the internal key distribution.your_scores.data
    with pytest.raises(ConfigError, match=message) as refused:
        audit.run({"runs": x}, audit.parse({"data": "scores.csv", **TINY}), tmp_path)
    assert "your_scores" not in str(refused.value) and not any(tmp_path.iterdir())


@pytest.mark.slow  # the three studies at a toy scale, seconds
def test_a_bound_far_above_the_scores_audits_them_not_the_bound(scores_file, tmp_path):
    # high=1e301: the truth's quadrature missed the scores (U's bias 0.95 at n = 40, bootstrap coverage 0%) or
    # came out NaN (KeyError: 'bias' on the page); the reflection at 1e301 changes nothing in the fit
    path, x = scores_file
    results = {}
    for high in (10.0, 1e301):  # a bound 10 is as far as 1e301 for these kernels: the same distribution
        opts = audit.parse({"data": str(path), **TINY, "high": high, "bw_method": "silverman"})
        result = audit.run({"runs": x}, opts, tmp_path / str(high))
        results[high] = result.accuracy.summary.set_index(["n", "estimator", "measure"]).loc[(40, "u", "bias")]
        page = audit_page.write_page(result, opts, x, tmp_path / str(high)).read_text()
        assert "| U | " in page
    far, near = results[1e301], results[10.0]  # different streams (the config differs): within their MCSE
    assert abs(far["estimate"] - near["estimate"]) < 4 * np.hypot(far["mcse"], near["mcse"])


def test_every_model_is_planned_by_default_each_on_its_own():
    # audit took one model at a time ("examines one model at a time", "holds several models: choose one")
    three = {m: np.linspace(0.4, 0.9, 20 + 5 * i) for i, m in enumerate("abc")}
    planned = plans(three, audit.parse({"data": "scores.csv"}))
    assert [(p.model, p.spec["model"], p.n) for p in planned] == [("a", "a", 20), ("b", "b", 25), ("c", "c", 30)]
    some = audit.parse({"data": "scores.csv", "models": ["c", "a"]})
    assert some.model is None and some.data.models == ("c", "a")
    assert [p.model for p in plans({m: three[m] for m in ("c", "a")}, some)] == ["c", "a"]
    assert [p.model for p in plans(three, audit.parse({"data": "scores.csv", "model": "b"}))] == ["b"]


@pytest.mark.slow  # two audits at a toy scale through the command, seconds
def test_the_command_audits_every_model_into_its_own_directory(tmp_path):
    from _cli import simstudy

    rng = np.random.default_rng(7)
    rows = [f"{m},{v:.4f}" for m, a in (("mlp", 8), ("a/b c", 5)) for v in rng.beta(a, 2, 30)]
    (tmp_path / "two.csv").write_text("model,score\n" + "\n".join(rows) + "\n")
    tiny = [f"{k}={v}" for k, v in TINY.items()]
    proc = simstudy("audit", "data=two.csv", *tiny, "hydra.run.dir=run", cwd=tmp_path)
    run = tmp_path / "run"
    subdirs = sorted(p.name for p in run.iterdir() if p.is_dir())
    assert subdirs[1] == "model=mlp" and subdirs[0].startswith("model=a_b_c-")  # a name made safe to type
    for sub in subdirs:
        assert (run / sub / "AUDIT.md").read_text().startswith("# Audit of tuning-curve analyses at n = 30\n")
    index = (run / "AUDIT.md").read_text()
    assert index.startswith("# Audit of tuning-curve analyses: 2 models\n")
    assert f"Its page: [{subdirs[1]}/AUDIT.md]({subdirs[1]}/AUDIT.md)" in index and "## Model `a/b c`" in index
    printed = [line for line in proc.stdout.splitlines() if "bands for the median tuning curve" in line]
    assert [line.split(":")[0] for line in printed] == ["mlp", "a/b c"]


def test_the_models_together_are_held_to_the_time_limit(monkeypatch):
    # each audit of 3,000 scores is estimated at about 40 s on 2 workers: one is within a 1-minute limit, three
    # one after another are not
    monkeypatch.setenv("SIMSTUDY_MAX_MINUTES", "1")
    three = {m: np.linspace(0.1, 0.9, 3000) for m in "abc"}
    opts = audit.parse({"data": "scores.csv", "n_jobs": 2, "method": "dkw"})
    assert [p.model for p in plans({"a": three["a"]}, opts)] == ["a"]
    with pytest.raises(ConfigError, match=r"^models=\[a,b,c\] needs about 2\.\d min \(the audits of 3 models, one "
                       r"after another\); the limit is 1 min .*: audit fewer at a time: model=NAME or models=\[a,b\]"):
        plans(three, opts)


@pytest.mark.slow  # the three studies at a toy scale, seconds
def test_a_losss_failed_runs_are_called_failed_runs_on_the_audit_page(tmp_path):
    # 1 - accuracy with 14% of runs failed at 1.0: the page called them "one result repeated" (worded as if
    # higher were better)
    rng = np.random.default_rng(3434)
    x = np.r_[np.ones(7), (1 - rng.beta(8, 2, 43)).round(4)]
    path = tmp_path / "losses.csv"
    path.write_text("score\n" + "\n".join(map(str, x)) + "\n")
    opts = audit.parse({"data": str(path), **TINY, "minimize": True})
    result = audit.run({"losses": x}, opts, tmp_path / "out")
    page = audit_page.write_page(result, opts, x, tmp_path / "out").read_text()
    line = next(s for s in page.splitlines() if "scored exactly 1" in s)
    assert "failed" in line and "repeated" not in line, line


@pytest.mark.slow  # an audit's studies end to end (seconds), on a tuning source (issue 36)
def test_an_audit_of_a_tuning_source_fits_the_scores_the_command_read(tmp_path):
    from pathlib import Path

    import simstudy

    source = Path(__file__).resolve().parents[1] / "sources" / "data" / "st_tuning"  # a Syne Tune directory
    small = {"rounds": 20, "bootstrap_rounds": 4, "resamples": 20, "evp_reps": 20, "n_jobs": 1}
    with pytest.warns(UserWarning, match=r"st_tuning: 1 \(1 failed\)"):
        done = simstudy.run("audit", data=str(source), out_dir=tmp_path / "a", **small)
    page = (tmp_path / "a" / "AUDIT.md").read_text()
    assert "(6 scores)" in page  # the 6 complete trials, the failed one left out, as read by the command
    assert "- `st_tuning` (6 scores; left out, not complete: 1 failed): scheduler 'RandomSearch'" in page
    assert any(line.startswith("i.i.d. check, st_tuning (left out: 1 failed)") for line in done.lines)
