"""Precision as the stopping rule (study.precision): the planning maths, the options, the two-stage run, `plan`.

The statistical validity of the rule (achieved MCSE, coverage of the final intervals on exact truths) is checked
at the end, in the slow lane.
"""

import dataclasses
import json
import logging
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from _cli import FIG1, one_line_error, parse_refusal, simstudy
from scipy import stats

from simstudy import config as _config
from simstudy import registry
from simstudy.engine import precision as rule
from simstudy.schema import ConfigError, precision
from simstudy.studies import base
from simstudy.studies.precision import plan_precision, run_study

# --- the planning maths, against hand values ------------------------------------------------------------------


def test_inflation_is_the_chi_square_upper_bound_ratio():
    # kappa = dof / chi2_{0.05}(dof): 9 dof -> 9 / 3.32511 (the table's 5% point)
    assert rule.inflation(9) == pytest.approx(9 / 3.325112843, rel=1e-9)
    assert rule.inflation(99, 0.9) == pytest.approx(99 / stats.chi2.ppf(0.1, 99), rel=1e-12)
    assert np.isnan(rule.inflation(0))
    # a larger pilot is surer of its variance: kappa falls towards 1
    k = rule.inflation([10, 100, 1000, 10_000])
    assert np.all(np.diff(k) < 0) and np.all(k > 1) and k[-1] < 1.03


def test_reps_needed_by_hand():
    # (mcse0/target)^2 = 4, kappa 1.25: 1000 * 4 * 1.25 = 5000, already whole chunks of 1000
    reps, capped = rule.reps_needed(1000, [0.02], [0.01], kappa=1.25, chunk_reps=1000, max_reps=10**6)
    assert reps.tolist() == [5000] and capped.tolist() == [False]
    # 1000 * 2.25 * 1 = 2250 -> whole chunks of 1000: 3000
    assert rule.reps_needed(1000, [0.015], [0.01], kappa=1.0, chunk_reps=1000, max_reps=10**6)[0].tolist() == [3000]
    # met by the pilot already (never fewer than the pilot); untargeted (NaN) rows need the pilot
    assert rule.reps_needed(1000, [0.001, 0.5], [0.01, np.nan], kappa=2.0, chunk_reps=300, max_reps=5000)[
        0
    ].tolist() == [1000, 1000]
    # beyond the cap: clipped and flagged; a zero (relative, estimate 0) target is always capped
    reps, capped = rule.reps_needed(1000, [0.1, 0.1], [0.001, 0.0], kappa=1.0, chunk_reps=1000, max_reps=7500)
    assert reps.tolist() == [7500, 7500] and capped.tolist() == [True, True]


def test_absolute_targets_resolve_relative_and_per_measure():
    spec = precision()("study.precision", {"mse": 0.001, "bias": "10%"})
    got = rule.absolute_targets(spec, ["bias", "mse", "mean", "bias"], [-0.2, 0.5, 0.6, 0.0])
    np.testing.assert_allclose(got, [0.02, 0.001, np.nan, 0.0])
    everything = precision()("study.precision", "1%")
    np.testing.assert_allclose(rule.absolute_targets(everything, ["a", "b"], [2.0, -3.0]), [0.02, 0.03])


def test_a_tiny_target_caps_without_a_numpy_warning():
    # study.precision=1e-300: (mcse / target)^2 overflows to inf, which is simply beyond the cap
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reps, capped = rule.reps_needed(1000, [0.01], [1e-300], kappa=1.1, chunk_reps=100, max_reps=10**5)
    assert reps.tolist() == [10**5] and capped.tolist() == [True]


@pytest.mark.parametrize("n", [1, 7, 100, 1000])
def test_rate_variance_bound_is_an_exact_one_sided_bound(n):
    # P(bound < p (1 - p)) <= 0.05 for every p, summed exactly over the binomial law of the count
    counts = np.arange(n + 1)
    bound = rule.rate_variance_bound(counts, n)
    for p in [0.001, 0.02, 0.1, 0.3, 0.45, 0.5, 0.7, 0.98]:
        below = bound < p * (1 - p) * (1 - 1e-12)
        assert stats.binom.pmf(counts, n, p)[below].sum() <= 0.05 + 1e-12, p
    # no event in 100 or more: the one-sided 95% Clopper-Pearson bound 1 - 0.05^(1/n) (the far tail is nil); a
    # count of n/2: 1/4; symmetric in the count; never 0
    if n >= 100:
        assert bound[0] == pytest.approx((1 - 0.05 ** (1 / n)) * 0.05 ** (1 / n), rel=1e-9)
        assert bound[n // 2] == 0.25
    np.testing.assert_allclose(bound, bound[::-1], rtol=1e-12)
    assert np.all(bound > 0)


def _rate_pilots(n0, p, *, ci=True):
    """Every possible pilot of a rate ``p`` over ``n0`` rounds (one cell per count, the coverage studies' rows) and
    each one's binomial probability."""
    counts = np.arange(n0 + 1)
    est = counts / n0
    pilot = pd.DataFrame({"cell": [f"c{c}" for c in counts], "distribution": "d", "estimate": est,
                          "mcse": np.sqrt(est * (1 - est) / n0), "reps": n0})  # fmt: skip
    if ci:
        pilot["ci_low"] = stats.beta.ppf(0.025, np.maximum(counts, 1e-9), n0 - counts + 1)
    return pilot, stats.binom.pmf(counts, n0, p)


def _config_of(n0, target, chunk_reps=1):
    opts = dataclasses.make_dataclass("Opts", ["precision", "max_reps"])((("*", target, False),), 10**9)
    study = dataclasses.make_dataclass("Study", ["reps", "chunk_reps", "options"])(n0, chunk_reps, opts)
    return dataclasses.make_dataclass("Config", ["study"])(study)


def _plan_of(pilot, n0, target, chunk_reps=1):
    return plan_precision(_config_of(n0, target, chunk_reps), pilot)


def test_inflation_for_a_kurtosis_has_the_effective_degrees_of_freedom():
    # Satterthwaite: the variance of n replicates of kurtosis k is a scaled chi-square with 2n / (k - (n-3)/(n-1))
    # degrees of freedom; k = 3 (and unknown, NaN, or below 3) is the normal bound with n - 1 exactly
    nu = 2 * 1000 / (9 - 997 / 999)
    assert rule.inflation(999, kurtosis=9.0) == pytest.approx(nu / stats.chi2.ppf(0.05, nu), rel=1e-9)
    np.testing.assert_array_equal(rule.inflation(999, kurtosis=[3.0, np.nan, 1.8]), [rule.inflation(999)] * 3)
    assert np.all(np.diff(rule.inflation(99, kurtosis=[3, 5, 20, 100])) > 0)  # a heavier tail: a larger kappa
    # a pilot summary's kurtosis column reaches the plan: 4 x 1000 x kappa(k = 9) = 4664.5 -> 4665
    pilot = pd.DataFrame({"cell": ["a", "b"], "distribution": "d", "measure": "mean", "estimate": 1.0,
                          "mcse": 0.01, "reps": 1000, "kurtosis": [9.0, np.nan]})  # fmt: skip
    plan = _plan_of(pilot, 1000, 0.005)
    assert plan.cell_reps == {"a": int(np.ceil(4000 * rule.inflation(999, kurtosis=9.0))), "b": 4313}


@pytest.mark.parametrize("p", [0.02, 0.1, 0.98])
@pytest.mark.parametrize("n0", [100, 1000])
def test_a_rate_plan_meets_its_target_in_95_percent_of_runs_judged_by_the_true_se(p, n0):
    # Exact over every pilot: the final N meets the target when the TRUE SE sqrt(p (1 - p) / N) is at most it.
    # The chi-square plan from the pilot's MCSE met it in only 60-81% of runs here.
    target = np.sqrt(p * (1 - p) / (4 * n0))  # a target that needs about four pilots
    pilot, weight = _rate_pilots(n0, p)
    plan = _plan_of(pilot, n0, target)
    reps = pilot["cell"].map(plan.cell_reps).to_numpy(float)
    met = p * (1 - p) / reps <= target**2 * (1 + 1e-9)
    assert weight[met].sum() >= 0.95, weight[met].sum()
    assert plan.table["rate"].all()


def test_a_pilot_without_an_event_plans_from_a_positive_bound_not_mcse_0():
    # 0 misses in 1,000 rounds: MCSE 0, yet the rate may be up to 0.003; the old plan stopped at the pilot
    pilot, _ = _rate_pilots(1000, 0.0)
    plan = _plan_of(pilot.iloc[[0, -1]], 1000, 0.0005)
    bound = (1 - 0.05**0.001) * 0.05**0.001  # the one-sided 95% Clopper-Pearson bound's p (1 - p)
    np.testing.assert_allclose(plan.table["mcse_bound"], np.sqrt(bound / 1000), rtol=1e-9)
    assert list(plan.cell_reps.values()) == [int(np.ceil(bound / 0.0005**2))] * 2  # 11,967 rounds, not 1,000
    # without a Clopper-Pearson interval, a rate measure is known from its other rows (0 < p < 1)
    bare, _ = _rate_pilots(1000, 0.0, ci=False)
    assert _plan_of(bare.iloc[[0, 5]].assign(measure="p_overtakes"), 1000, 0.0005).table["rate"].all()


def test_an_exact_zero_is_not_a_rate():
    # A constant estimator's variance and MSE (0, MCSE 0) and a mean that is not of 0/1 values are planned as before
    pilot = pd.DataFrame({"cell": "c", "distribution": "d", "measure": ["variance", "mse", "mean"],
                          "estimate": [0.0, 0.0, 0.3], "mcse": [0.0, 0.0, 0.01], "reps": 1000})  # fmt: skip
    plan = _plan_of(pilot, 1000, 0.005, chunk_reps=500)
    assert not plan.table["rate"].any()
    assert plan.table["reps_needed"].tolist() == [1000, 1000, 4500]  # 1000 * 4 * kappa 1.078 -> whole chunks


# --- the options ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, message",
    [
        (0, "study.precision must be a positive number (an absolute Monte Carlo standard error) or X% with"),
        ("0%", "study.precision must be a positive number"),
        ("150%", "got '150%'"),
        (True, "got True"),
        ({}, "study.precision must name at least one measure"),
        ({"mse": -1}, "study.precision.mse must be a positive number"),
    ],
)
def test_bad_precision_is_one_line_naming_key_and_value(value, message):
    with pytest.raises(ConfigError) as err:
        precision()("study.precision", value)
    assert str(err.value).startswith("study.precision") and message in str(err.value) and "\n" not in str(err.value)


def _raw(**study):
    return {
        "seed": 0,
        "distribution": {"kind": "truncnorm_bag", "seed": 0, "size": 200},
        "budget": {"B": [4, 8], "n": [4]},
        "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
        "study": {"name": "prec", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 100, **study},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False, "figures": []},
    }


def test_max_reps_below_the_pilot_is_refused_at_parse():
    with pytest.raises(ConfigError, match=r"^study.max_reps=100 must be at least study.reps=200 \(the pilot"):
        _config.parse(_raw(precision=0.001, max_reps=100))
    assert _config.parse(_raw(max_reps=100)).study.options.max_reps == 100  # without a precision: unused


def test_unknown_measure_is_refused_with_the_study_measures(tmp_path):
    cfg = _config.parse(_raw(precision={"mde": 0.001}))
    with pytest.raises(ConfigError, match=r"study.precision.mde is not a measure of this study \(its measures: "):
        run_study(registry.study("evp_accuracy"), cfg, tmp_path)
    assert not (tmp_path / "summary.parquet").exists()


# --- the two-stage run ------------------------------------------------------------------------------------------


def _run(tmp_path, name, **study):
    cfg = _config.parse(_raw(**study))
    return run_study(registry.study("evp_accuracy"), cfg, tmp_path / name)


@pytest.fixture(scope="module")
def targeted(tmp_path_factory):
    """A precision-targeted run whose two cells (B = 4, 8) plan different replicates."""
    tmp = tmp_path_factory.mktemp("targeted")
    return _run(tmp, "run", precision={"bias": 0.0015}), tmp / "run"


def test_targets_are_met_and_columns_added(targeted):
    result, run_dir = targeted
    s = result.summary
    assert list(s.columns[-2:]) == ["target", "reached_precision"]
    bias = s[s.measure == "bias"]
    assert (bias.target == 0.0015).all() and bias.reached_precision.all() and (bias.mcse <= 0.0015).all()
    assert s.loc[s.measure != "bias", "target"].isna().all()  # untargeted (and exact) rows
    planned = json.loads((run_dir / "run.json").read_text())["precision"]
    assert planned["pilot_reps"] == 200 and planned["capped"] == [] and planned["max_reps"] == 20_000
    assert sorted(planned["reps"].values()) == sorted(bias.groupby("cell").reps.max().tolist())
    assert len(set(planned["reps"].values())) == 2  # the cells differ: each runs to its own target
    assert all(r % 100 == 0 and r > 200 for r in planned["reps"].values())  # whole chunks, beyond the pilot


def test_each_cell_reduces_as_a_fixed_run_at_its_reps_bit_for_bit(targeted, tmp_path):
    result, _ = targeted
    s = result.summary
    for cell, reps in s[s.reps > 0].groupby("cell").reps.max().items():
        fixed = _run(tmp_path, f"fixed{reps}", reps=int(reps)).summary
        got = s[s.cell == cell].drop(columns=["target", "reached_precision"]).reset_index(drop=True)
        want = fixed[fixed.cell == cell].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_a_tighter_target_reuses_every_chunk(tmp_path):
    first = _run(tmp_path, "run", precision={"bias": 0.004})
    stored = sum(1 for _ in (tmp_path / "run" / "chunks").rglob("*.npz"))
    again = _run(tmp_path, "run", precision={"bias": 0.004})
    assert again.report.computed == 0 and again.report.resumed == stored == first.report.tasks
    tighter = _run(tmp_path, "run", precision={"bias": 0.002})
    assert tighter.report.resumed == stored and tighter.report.computed == tighter.report.tasks - stored > 0


def test_two_shards_then_collect_equal_the_unsharded_run(targeted, tmp_path):
    cfg = _config.parse(_raw(precision={"bias": 0.0015}))
    spec = registry.study("evp_accuracy")
    for i in (1, 2):
        sharded = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, shard=(i, 2)))
        with pytest.raises(base.ShardDone):
            run_study(spec, sharded, tmp_path)
    collect = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, collect=True))
    got = run_study(spec, collect, tmp_path)
    assert got.report.computed == 0
    pd.testing.assert_frame_equal(got.summary, targeted[0].summary, check_exact=True)


# Seed 2: the planned stage of cell B = 4 (800 replicates) re-plans it to 900, the other cell keeps its plan.
_TOPPED = {"precision": {"bias": 0.0015}}


def _topped_cfg():
    return _config.parse({**_raw(**_TOPPED), "seed": 2})


@pytest.fixture(scope="module")
def topped(tmp_path_factory):
    """A precision run whose planned stage calls for a top-up of one cell (unsharded, one worker)."""
    tmp = tmp_path_factory.mktemp("topped")
    return run_study(registry.study("evp_accuracy"), _topped_cfg(), tmp / "run"), tmp / "run"


def test_a_top_up_runs_a_cell_past_its_plan_and_run_json_and_the_log_say_so(topped, tmp_path, caplog):
    result, run_dir = topped
    block = json.loads((run_dir / "run.json").read_text())["precision"]
    (cell,) = block["topped_up"]
    assert block["reps"][cell] > block["planned_reps"][cell] > 200  # the top-up ran beyond the planned stage
    others = [c for c in block["reps"] if c != cell]
    assert others and all(block["reps"][c] == block["planned_reps"][c] for c in others)
    stages = block["stage_replicates"]
    assert stages["pilot"] == 200 * len(block["reps"]) and stages["top_up"] == block["reps"][cell] - block[
        "planned_reps"][cell]  # fmt: skip
    assert sum(stages.values()) == sum(block["reps"].values())
    s = result.summary
    assert s.loc[s.reps > 0].groupby("cell").reps.max().to_dict() == block["reps"]
    assert "kurtosis" not in s and s.loc[s.measure == "bias", "reached_precision"].all()
    # the topped-up cell is a fixed run at its final replicates, bit for bit
    fixed = _config.parse({**_raw(reps=block["reps"][cell]), "seed": 2})
    want = registry.study("evp_accuracy").run(fixed, tmp_path / "fixed").summary
    got = s[s.cell == cell].drop(columns=["target", "reached_precision"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want[want.cell == cell].reset_index(drop=True), check_exact=True)
    # a rerun resumes every chunk and logs the top-up
    with caplog.at_level(logging.INFO, logger="simstudy"):
        again = run_study(registry.study("evp_accuracy"), _topped_cfg(), run_dir)
    assert again.report.computed == 0 and again.report.resumed == again.report.tasks
    assert f"top-up: 1 of 2 cells re-planned from their planned replicates need more: {block['reps'][cell]}" in (
        caplog.text
    )


def test_no_top_up_where_the_planned_stage_meets_every_bound(targeted, caplog):
    _, run_dir = targeted
    block = json.loads((run_dir / "run.json").read_text())["precision"]
    assert block["topped_up"] == [] and block["reps"] == block["planned_reps"] and block["stage_replicates"][
        "top_up"] == 0  # fmt: skip


def test_the_top_up_replans_from_the_planned_stage_by_hand():
    from simstudy.studies.precision import replan_precision

    cfg = _config.parse(_raw(precision={"mean": 0.005}, max_reps=5000))
    pilot = pd.DataFrame({"cell": ["a", "b"], "distribution": "d", "measure": "mean", "estimate": [0.5, 0.4],
                          "mcse": [0.01, 0.01], "reps": 200})  # fmt: skip
    plan = plan_precision(cfg, pilot)
    n1 = int(np.ceil(np.ceil(800 * rule.inflation(199)) / 100) * 100)
    assert plan.cell_reps == {"a": n1, "b": n1} and plan.topped_up == ()
    # a's planned MCSE is its target (bound above it: more), b's far below (its plan stands); kappa of n1 - 1 dof
    planned = pilot.assign(mcse=[0.005, 0.003], reps=n1)
    final = replan_precision(cfg, plan, planned)
    a = int(np.ceil(np.ceil(n1 * rule.inflation(n1 - 1)) / 100) * 100)
    assert final.cell_reps == {"a": a, "b": n1} and final.topped_up == ("a",) and final.planned_reps == plan.cell_reps
    # a cell the planned stage lost (failed chunks) keeps its plan
    assert replan_precision(cfg, plan, planned[planned.cell == "b"]).cell_reps == {"a": n1, "b": n1}


def test_the_top_up_plans_a_heavy_tailed_row_at_99_percent_by_hand():
    # Issue 34 §2: the lognormal from a pilot of 100 met its target in 94% of runs with kappa at 95% in the top-up.
    # A row whose planned stage's kurtosis shows a heavy tail is re-planned at 99%; a near-normal one, and a law's
    # assumed kurtosis (a squared normal error's 15), keep 95%; the pilot's plan keeps 95% for every row.
    from simstudy.studies.precision import HEAVY_TAIL_CONFIDENCE, replan_precision

    assert HEAVY_TAIL_CONFIDENCE == 0.99
    cfg = _config.parse(_raw(precision={"mean": 0.005}, max_reps=20_000))
    kurt = [20.0, 3.1, 15.0]
    pilot = pd.DataFrame({"cell": ["a", "b", "c"], "distribution": "d", "measure": "mean", "estimate": 0.5,
                          "mcse": 0.01, "reps": 200, "kurtosis": kurt,
                          "kurtosis_assumed": [np.nan, np.nan, True]})  # fmt: skip
    plan = plan_precision(cfg, pilot)
    assert plan.cell_reps == {c: int(np.ceil(np.ceil(800 * rule.inflation(199, 0.95, k)) / 100) * 100)
                              for c, k in zip("abc", kurt)}  # fmt: skip
    n1 = 2000
    final = replan_precision(cfg, dataclasses.replace(plan, cell_reps=dict.fromkeys("abc", n1)),
                             pilot.assign(mcse=0.005, reps=n1))  # fmt: skip

    def whole(kappa):
        return int(np.ceil(np.ceil(n1 * kappa) / 100) * 100)

    assert rule.heavy_tailed(kurt, n1).tolist() == [True, False, True]
    assert final.cell_reps == {"a": whole(rule.inflation(n1 - 1, 0.99, 20.0)),
                               "b": whole(rule.inflation(n1 - 1, 0.95, 3.1)),
                               "c": whole(rule.inflation(n1 - 1, 0.95, 15.0))}  # fmt: skip
    assert final.cell_reps["a"] > whole(rule.inflation(n1 - 1, 0.95, 20.0))  # 99% plans more than 95% did


def test_heavy_tailed_flags_about_3_percent_of_normal_samples_and_nearly_every_lognormal_one(rng):
    for n in (100, 1000):
        normal = rule.heavy_tailed(stats.kurtosis(rng.standard_normal((2000, n)), axis=1, fisher=False), n)
        skewed = rule.heavy_tailed(stats.kurtosis(rng.lognormal(0, 0.75, (2000, n)), axis=1, fisher=False), n)
        lo, hi = _clopper_pearson(int(normal.sum()), 2000)
        assert lo <= 0.035 and hi >= 0.025, (n, normal.mean())  # measured 0.031-0.033 (4,000 samples)
        assert skewed.mean() >= 0.9, (n, skewed.mean())
    assert rule.heavy_tailed([np.nan, 3.0], 400).tolist() == [False, False]


def test_two_shards_then_collect_twice_equal_the_unsharded_run_with_a_top_up(topped, tmp_path):
    from simstudy.studies.precision import TopUpPending

    cfg, spec = _topped_cfg(), registry.study("evp_accuracy")

    def shards():
        for i in (1, 2):
            sharded = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, shard=(i, 2)))
            with pytest.raises(base.ShardDone):
                run_study(spec, sharded, tmp_path)

    collect = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, collect=True))
    shards()  # the pilot and the planned stage
    with pytest.raises(TopUpPending) as pending:
        run_study(spec, collect, tmp_path)
    message = str(pending.value)
    assert "\n" not in message and "run every shard once more" in message and "top-up of 1 cell(s)" in message
    assert not (tmp_path / "summary.parquet").exists() and not (tmp_path / "run.json").exists()
    shards()  # each finds the planned stage stored: it re-plans and runs its share of the top-up
    got = run_study(spec, collect, tmp_path)
    assert got.report.computed == 0
    pd.testing.assert_frame_equal(got.summary, topped[0].summary, check_exact=True)
    want = json.loads((topped[1] / "run.json").read_text())["precision"]
    assert json.loads((tmp_path / "run.json").read_text())["precision"] == want


@pytest.mark.system
def test_collect_before_the_top_up_is_one_line_exit_2_then_the_second_round_collects(tmp_path):
    # Seed 1 at bias 0.002: the planned stage re-plans one of the two cells from 300 to 400 replicates.
    args = [*FIG1, "budget.B=[4,8]", "budget.n=[4]", "study.reps=200", "study.chunk_reps=100", "seed=1",
            "study.precision={bias: 0.002}", "runner.figures=[]"]  # fmt: skip
    simstudy(*args, "hydra.run.dir=whole", cwd=tmp_path)
    assert json.loads((tmp_path / "whole" / "run.json").read_text())["precision"]["topped_up"]

    def shards():
        for i in (1, 2):
            assert f"shard {i}/2 done" in simstudy(*args, f"runner.shard={i}/2", "hydra.run.dir=run", cwd=tmp_path).stdout

    shards()
    line = one_line_error(simstudy("collect", "run_dir=run", cwd=tmp_path, check=False), "run every shard once more")
    assert "calls for a top-up of 1 cell(s)" in line and "each computes only its share of the top-up" in line
    assert not (tmp_path / "run" / "summary.parquet").exists()
    shards()
    simstudy("collect", "run_dir=run", cwd=tmp_path)
    want, got = (pd.read_parquet(tmp_path / d / "summary.parquet") for d in ("whole", "run"))
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.system
def test_two_workers_give_the_same_summary_with_a_top_up_bit_for_bit(topped, tmp_path):
    cfg = _topped_cfg()
    pool = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, n_jobs=2))
    got = run_study(registry.study("evp_accuracy"), pool, tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["precision"]["topped_up"]  # the pool ran a top-up
    pd.testing.assert_frame_equal(got.summary, topped[0].summary, check_exact=True)


@pytest.mark.system
def test_two_workers_give_the_same_summary_bit_for_bit(targeted, tmp_path):
    cfg = _config.parse(_raw(precision={"bias": 0.0015}))
    pool = dataclasses.replace(cfg, runner=dataclasses.replace(cfg.runner, n_jobs=2))
    got = run_study(registry.study("evp_accuracy"), pool, tmp_path)
    pd.testing.assert_frame_equal(got.summary, targeted[0].summary, check_exact=True)


def test_capped_cells_are_named_in_the_log_summary_and_run_json(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        result = _run(tmp_path, "run", precision=0.0001, max_reps=400)
    s = result.summary
    assert not s.reached_precision.any()  # every cell capped: none of its rows reached its precision
    assert (s[s.reps > 0].reps == 400).all()
    capped = json.loads((tmp_path / "run" / "run.json").read_text())["precision"]["capped"]
    assert sorted(capped) == sorted(s.cell.unique())
    for cell in capped:
        assert any(f"cell {cell}" in r.message and "hit study.max_reps=400" in r.message for r in caplog.records)


def test_max_reps_without_precision_is_a_one_line_note(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        result = _run(tmp_path, "run", max_reps=5000)
    notes = [r.getMessage() for r in caplog.records if "study.max_reps" in r.getMessage()]
    assert notes == ["study.max_reps=5000 has no effect without study.precision (it caps the precision rule's "
                     "replicates); every cell runs study.reps=200"]  # fmt: skip
    assert (result.summary.loc[result.summary.reps > 0, "reps"] == 200).all()


def test_the_evp_pilot_reports_its_errors_kurtosis_and_the_final_summary_does_not(tmp_path, targeted):
    from simstudy.studies.precision import pilot

    cfg = _config.parse(_raw(precision={"bias": 0.0015}))
    first = pilot(registry.study("evp_accuracy"), cfg, tmp_path).summary
    # the kurtosis of the errors of U and V, by hand from their replicates (study.save_replicates)
    saved = dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, save_replicates=True))
    saved = dataclasses.replace(saved, study=dataclasses.replace(saved.study, options=dataclasses.replace(
        saved.study.options, precision=None)))  # fmt: skip
    registry.study("evp_accuracy").run(saved, tmp_path / "fixed")
    reps = pd.read_parquet(tmp_path / "fixed" / "replicates.parquet")
    rows = first[first.measure.isin(["mean", "bias"]) & first.estimator.isin(["u", "v"])]
    assert rows["kurtosis"].notna().all()
    # squared errors: the kurtosis of a squared normal error (chi-square, 1 dof: 15); paired rows: none
    squared = first.measure.isin(["variance", "empse", "mse"]) & first.estimator.isin(["u", "v"])
    assert (first.loc[squared, "kurtosis"] == 15.0).all() and first.loc[first.estimator == "v-u", "kurtosis"].isna().all()
    # the 15 is a law's, not a sample's: the top-up's heavy-tail check must not read it as a sample's kurtosis
    assert first.loc[squared, "kurtosis_assumed"].eq(True).all() and first.loc[~squared, "kurtosis_assumed"].isna().all()
    for _, row in rows.iterrows():
        pick = (reps.cell == row["cell"]) & (reps.n == row["n"]) & (reps.estimator == row["estimator"])
        x = reps.loc[pick, "estimate"].to_numpy(float)
        assert len(x) == 200
        assert row["kurtosis"] == pytest.approx(stats.kurtosis(x, fisher=False), rel=1e-6)
    assert not {"kurtosis", "kurtosis_assumed"} & set(targeted[0].summary)  # the final summary is the study's


def test_the_stage_reaches_the_study_as_an_argument_and_a_run_without_it_is_refused(tmp_path):
    """The rule's stage is the study run's ``stage=`` argument (no ambient state): a study kind whose ``run`` takes
    none runs plainly, and is refused in one line under study.precision, before any compute."""
    spec = registry.study("evp_accuracy")
    seen = []

    def run(config, out_dir, *, stage=None):
        seen.append(stage)
        return spec.run(config, out_dir, stage=stage)

    staged = dataclasses.replace(spec, run=run)
    run_study(staged, _config.parse(_raw(precision={"bias": 0.01})), tmp_path / "staged")
    assert [s.pilot for s in seen[:1]] == [True] and all(isinstance(s, base.Stage) for s in seen) and len(seen) >= 2
    legacy = dataclasses.replace(spec, run=lambda config, out_dir: spec.run(config, out_dir))
    assert run_study(legacy, _config.parse(_raw()), tmp_path / "plain").summary is not None
    with pytest.raises(ConfigError, match="run takes no stage= keyword"):
        run_study(legacy, _config.parse(_raw(precision={"bias": 0.01})), tmp_path / "refused")
    assert not (tmp_path / "refused").exists()


def test_without_precision_nothing_changes(tmp_path):
    plain = _run(tmp_path, "plain")
    direct = registry.study("evp_accuracy").run(_config.parse(_raw()), tmp_path / "direct").summary
    pd.testing.assert_frame_equal(plain.summary, direct, check_exact=True)
    assert "target" not in plain.summary and "precision" not in json.loads(
        (tmp_path / "plain" / "run.json").read_text()
    )


def test_plan_from_a_pilot_by_hand():
    cfg = _config.parse(_raw(precision={"mean": "1%"}, max_reps=5000))
    pilot = pd.DataFrame(
        {"cell": ["a", "a", "b"], "distribution": "d", "measure": ["mean", "mse", "mean"],
         "estimate": [0.5, 0.1, 0.4], "mcse": [0.01, 0.002, 0.001], "reps": [200, 200, 200]}
    )  # fmt: skip
    plan = plan_precision(cfg, pilot)
    k = rule.inflation(199)
    # cell a: target 0.005, 200 * 4 * kappa -> whole chunks of 100; cell b: met by its pilot
    assert plan.cell_reps == {"a": int(np.ceil(np.ceil(800 * k) / 100) * 100), "b": 200}
    assert plan.capped_cells == ()


# --- simstudy plan ----------------------------------------------------------------------------------------------


def test_plan_runs_only_a_pilot_and_writes_nothing(tmp_path, monkeypatch):
    import tempfile

    from simstudy.commands import plan

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cfg = _config.parse(_raw(precision={"bias": 0.0015}))
    planned = plan.run(cfg)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["tmp"]  # its pilot's directory removed, nothing else
    # the same plan as a run's: each cell's replicates, and the rows' targets
    # (from the pilot stage's summary, as a run plans: it carries the rows' kurtosis)
    from simstudy.studies.precision import pilot

    want = plan_precision(cfg, pilot(registry.study("evp_accuracy"), cfg, tmp_path / "pilot").summary)
    assert dict(zip(planned.table.cell, planned.table.cell_reps)) == want.cell_reps
    pd.testing.assert_frame_equal(planned.table.drop(columns=["cell_reps", "est_seconds"]), want.table)
    worst = planned.by_measure()
    assert set(worst.measure) == {"bias"} and "est_seconds" not in worst  # a cell's seconds, not a row's
    # the total is the fixed part plus every cell's replicates at the pilot's cost per replicate, over the workers
    cells = planned.table.drop_duplicates("cell")
    assert planned.total_seconds == pytest.approx(planned.fixed_seconds + cells.est_seconds.sum(), rel=1e-9)
    assert planned.workers == 1 and planned.cores >= 1


def test_plan_without_a_target_is_one_line(tmp_path):
    from simstudy.commands import plan

    with pytest.raises(ConfigError, match=r"^simstudy plan needs study.precision: an absolute MCSE"):
        plan.run(_config.parse(_raw()))


def test_plan_command_line_prints_the_plan_and_refuses_without_a_target(tmp_path, monkeypatch, caplog):
    from simstudy.studies import precision as precision_rule

    monkeypatch.setattr(precision_rule, "_cores", lambda: 2)  # a 2-core machine, runner.n_jobs=1
    args = [*FIG1, "budget.B=3", "study.reps=200", "study.chunk_reps=100"]
    with caplog.at_level(logging.WARNING, logger="simstudy"):
        proc = simstudy("plan", *args, "study.precision={bias: 0.002}", "overwrite=true", cwd=tmp_path)
    assert "measure" in proc.stdout and "bias" in proc.stdout and "nothing written" in proc.stdout
    assert list(tmp_path.iterdir()) == []
    # overwrite= (a run's line copied) is noted, not silently accepted
    assert "simstudy plan writes nothing: overwrite=true is ignored" in caplog.text
    # the seconds add up to the total, the workers are counted in words, the idle core is named
    *_, line, note = proc.stdout.strip().splitlines()
    assert note.startswith("this plan is the rule's first stage: a run re-plans each cell") and "top it up" in note
    assert "1 worker(s)" not in line and "over 1 worker;" in line and "this machine has 2 cores: runner.n_jobs=2" in line
    total, fixed, reps, per = (float(x) for x in re.search(
        r"about (\S+) s on this machine = (\S+) s outside the replicates \(truth, reduction\) \+ (\d+) x (\S+) s", line
    ).groups())  # fmt: skip
    assert total == pytest.approx(fixed + reps * per, rel=0.01, abs=1e-3)  # 3 digits printed
    one_line_error(simstudy("plan", *args, cwd=tmp_path, check=False), "simstudy plan needs study.precision")
    assert list(tmp_path.iterdir()) == []


def test_precision_overrides_parse_as_the_command_reads_them():
    assert parse_refusal("experiment=dodge2021_fig1", "study.precision=1%") is None
    assert parse_refusal("experiment=dodge2021_fig1", "study.precision={mse: 0.0001, bias: 2%}") is None
    assert "study.precision must be a positive number" in parse_refusal(
        "experiment=dodge2021_fig1", "study.precision=-1"
    )


# --- the rule's validity, on exact truths (slow lane) -------------------------------------------------------------


def _clopper_pearson(k, n, level=0.999):
    a = (1 - level) / 2
    low = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    high = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return low, high


def _many_runs(tmp_path, raw, kind, pick, runs):
    """``runs`` precision-targeted runs with distinct seeds: each run's (estimate, mcse, target, reps) of one row."""
    spec = registry.study(kind)
    out = []
    for seed in range(1, runs + 1):
        s = run_study(spec, _config.parse({**raw, "seed": 7919 * seed}), tmp_path / str(seed)).summary
        row = s[pick(s)]
        assert len(row) == 1
        out.append(row[["estimate", "mcse", "target", "reps"]].iloc[0].to_numpy(float))
    return np.array(out)


def _assert_valid(got, truth, pilot):
    estimate, mcse, target, reps = got.T
    runs = len(got)
    assert (reps > pilot).mean() > 0.9 and len(np.unique(reps)) > 1  # the rule, not the pilot, decided
    # The plan meets its target with probability about 0.95 (kappa), more with the rounding up to whole chunks:
    # the share of runs that met it must not be significantly below 0.95 (without kappa, about 0.6 do).
    met = int((mcse <= target).sum())
    assert _clopper_pearson(met, runs)[1] >= 0.95, (met, runs)
    # The final 95% Monte Carlo intervals cover the exact truth at 95% (no bias from the stopping rule).
    covered = int((np.abs(estimate - truth) <= 1.96 * mcse).sum())
    low, high = _clopper_pearson(covered, runs)
    assert low <= 0.95 <= high, (covered, runs)


@pytest.mark.slow
def test_precision_runs_meet_the_target_and_cover_the_exact_bias_of_v(tmp_path):
    # A bag of 30 values: V (the plug-in) is biased for B = 4, n = 4, its bias known exactly.
    raw = {
        "distribution": {"kind": "truncnorm_bag", "seed": 0, "size": 30},
        "budget": {"B": 4, "n": [4]},
        "estimators": {"v": {"method": "v"}},
        "study": {"name": "bias", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 50,
                  "precision": {"bias": 0.0015}},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False, "figures": []},
    }  # fmt: skip
    exact = run_study(registry.study("evp_accuracy"), _config.parse({**raw, "seed": 0}), tmp_path / "0").summary
    truth = exact.loc[exact.measure == "exact_bias", "estimate"].item()
    assert abs(truth) > 0.01  # a real bias, far from 0 in target units
    got = _many_runs(tmp_path, raw, "evp_accuracy", lambda s: (s.measure == "bias") & (s.estimator == "v"), 250)
    _assert_valid(got, truth, pilot=200)


@pytest.mark.slow
def test_precision_runs_meet_the_target_and_cover_the_nominal_coverage_of_an_exact_band(tmp_path):
    # The exact KS band's simultaneous coverage of a continuous CDF is its nominal level, 0.8, exactly.
    raw = {
        "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
        "budget": {"B": 10},
        "estimators": {"v": {"method": "v"}},
        "study": {"name": "cov", "kind": "band_coverage", "reps": 256, "chunk_reps": 64, "sample_size": 10,
                  "levels": [0.8], "methods": ["ks"], "precision": {"estimate": 0.012}},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False, "figures": []},
    }  # fmt: skip
    got = _many_runs(tmp_path, raw, "band_coverage", lambda s: s.check == "cdf", 250)
    _assert_valid(got, 0.8, pilot=256)


# The rule's own validity, judged by the TRUE standard error of each run's final estimate: a Monte Carlo of the
# two stages (the pilot's summary row planned by plan_precision itself, then the rest of the replicates), each
# case's law known exactly. The target needs about four pilots.
_LOGNORMAL_SIGMA = 0.75
_CASES = {  # case -> (mean, variance, rate?, draw(rng, size))
    "bernoulli 0.02": (0.02, 0.02 * 0.98, True, lambda rng, size: rng.random(size) < 0.02),
    "bernoulli 0.1": (0.1, 0.1 * 0.9, True, lambda rng, size: rng.random(size) < 0.1),
    "bernoulli 0.98": (0.98, 0.98 * 0.02, True, lambda rng, size: rng.random(size) < 0.98),
    "normal": (0.0, 1.0, False, lambda rng, size: rng.standard_normal(size)),
    "lognormal 0.75": (
        np.exp(_LOGNORMAL_SIGMA**2 / 2),
        (np.exp(_LOGNORMAL_SIGMA**2) - 1) * np.exp(_LOGNORMAL_SIGMA**2),
        False,
        lambda rng, size: rng.lognormal(0.0, _LOGNORMAL_SIGMA, size),
    ),
}


def _summary_rows(samples, case, rate, kurtosis):
    """The summary rows (one cell per run) a study reports of each run's replicates ``samples`` (a list of
    arrays): estimate, MCSE, reps; a rate's Clopper-Pearson ``ci_low``; the replicates' ``kurtosis`` if asked."""
    n = np.array([len(x) for x in samples], dtype=float)
    est = np.array([x.mean() for x in samples])
    sd = np.sqrt(est * (1 - est)) if rate else np.array([x.std(ddof=1) for x in samples])
    rows = pd.DataFrame({"cell": [f"r{i}" for i in range(len(samples))], "distribution": case, "estimate": est,
                         "mcse": sd / np.sqrt(n), "reps": n.astype(np.int64)})  # fmt: skip
    if rate:  # the coverage studies' rows carry their Clopper-Pearson interval
        rows["ci_low"] = stats.beta.ppf(0.025, np.maximum(est * n, 1e-9), n - est * n + 1)
    if kurtosis:
        rows["kurtosis"] = [((x - x.mean()) ** 4).mean() / ((x - x.mean()) ** 2).mean() ** 2 for x in samples]
    return rows


def _rule_validity(case, n0, runs, rng, *, kurtosis=False, top_up=False):
    """``runs`` runs of the rule on ``case`` with a pilot of ``n0``: (runs that met the target by the true SE, runs,
    mean final N, the final estimate's mean error in targets, its MCSE). ``kurtosis``: the summary rows carry their
    replicates' kurtosis (as a study that knows it would report it); ``top_up``: the rule's third stage, each run
    re-planned from its planned stage's replicates (``replan_precision``) and run on where it needs more."""
    mean, variance, rate, draw = _CASES[case]
    target = np.sqrt(variance / (4 * n0))
    samples = list(draw(rng, (runs, n0)).astype(float))
    plan = _plan_of(_summary_rows(samples, case, rate, kurtosis), n0, target)
    reps = np.array([plan.cell_reps[f"r{i}"] for i in range(runs)], dtype=np.int64)
    if top_up:
        from simstudy.studies.precision import replan_precision

        samples = [np.concatenate([x, draw(rng, n - n0).astype(float)]) for x, n in zip(samples, reps)]
        final = replan_precision(_config_of(n0, target), plan, _summary_rows(samples, case, rate, kurtosis))
        reps = np.array([final.cell_reps[f"r{i}"] for i in range(runs)], dtype=np.int64)
    # the replicates after the last stage's
    total = np.array([x.sum() + draw(rng, n - len(x)).astype(float).sum() for x, n in zip(samples, reps)])
    final_mean = total / reps
    met = int((variance / reps <= target**2 * (1 + 1e-9)).sum())
    error = (final_mean - mean) / target
    return met, runs, reps.mean(), error.mean(), error.std(ddof=1) / np.sqrt(runs)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["bernoulli 0.02", "bernoulli 0.1", "bernoulli 0.98", "normal", "lognormal 0.75"])
@pytest.mark.parametrize("n0", [100, 1000])
def test_the_rule_meets_its_target_in_95_percent_of_runs_by_the_true_se(case, n0, rng):
    # The three stages (pilot, planned stage, top-up), the lognormal's rows carrying their kurtosis as
    # evp_accuracy's do. Not significantly below 95% (a very wide Clopper-Pearson interval); the chi-square plan
    # from the pilot's MCSE met it in 59-80% of the Bernoulli runs on 5b8da2a, the two stages the lognormal in 82%
    # (pilot 100) and 88% (1,000), the top-up at 95% for every row in 94% (pilot 100): the top-up's 99% for a
    # heavy-tailed row made that 96% (10,000 runs). The final estimate's bias (N depends on the earlier stages) is
    # a small share of the target: measured, and bounded here by a third of it.
    met, runs, _, bias, bias_mcse = _rule_validity(case, n0, 2000, rng, kurtosis=case == "lognormal 0.75",
                                                   top_up=True)  # fmt: skip
    assert _clopper_pearson(met, runs)[1] >= 0.95, (met, runs)
    assert abs(bias) <= 1 / 3 + 4 * bias_mcse, (bias, bias_mcse)


@pytest.mark.slow
def test_the_top_up_lifts_a_skewed_mean_from_a_pilot_of_100_to_95_percent(rng):
    # The lognormal (sigma 0.75, kurtosis 26.5) from a pilot of 100: the two stages met the target in 82% of runs,
    # a top-up with kappa at 95% in 94% (10,000 runs: [0.935, 0.944]): the planned stage's ~900 replicates
    # underestimate so heavy a tail's kurtosis. At 99% for a heavy-tailed row: 96% ([0.957, 0.965]).
    two, runs = _rule_validity("lognormal 0.75", 100, 4000, rng, kurtosis=True)[:2]
    three = _rule_validity("lognormal 0.75", 100, 4000, rng, kurtosis=True, top_up=True)[0]
    assert _clopper_pearson(two, runs)[1] < _clopper_pearson(three, runs)[0], (two, three, runs)
    assert _clopper_pearson(three, runs)[1] >= 0.95, (three, runs)


@pytest.mark.slow
@pytest.mark.parametrize("n0", [100, 1000])
def test_a_pilot_kurtosis_makes_the_plan_of_a_skewed_mean_meet_its_target_more_often(n0, rng):
    # The lognormal (kurtosis 25) met its target in about two thirds of runs with the normal plan. Given the
    # pilot's kurtosis, kappa's effective degrees of freedom fall and it meets it far more often (about 0.8 and
    # 0.87), though still not in 95%: the pilot underestimates a heavy tail (docs/guides/precision.md).
    plain, runs = _rule_validity("lognormal 0.75", n0, 2000, rng)[:2]
    aware = _rule_validity("lognormal 0.75", n0, 2000, rng, kurtosis=True)[0]
    assert _clopper_pearson(plain, runs)[1] < _clopper_pearson(aware, runs)[0], (plain, aware, runs)
    assert _clopper_pearson(aware, runs)[1] >= 0.75


def _variance_row_validity(n0, runs, rng, kurtosis):
    """The rule on the ``variance`` row of normal errors (its replicates are squared errors), the pilot's row as
    evp_accuracy reports it: the share of ``runs`` whose N meets the target by the variance estimate's true SE."""
    x = rng.standard_normal((runs, n0))
    d = x - x.mean(axis=1, keepdims=True)
    var = (d**2).sum(axis=1) / (n0 - 1)
    mcse = np.sqrt(np.clip((d**4).mean(axis=1) - var**2 * (n0 - 3) / (n0 - 1), 0, None) / n0)  # metrics' MCSE

    def true_se(n):  # of the sample variance of n standard normal errors: fourth moment 3
        return np.sqrt((3.0 - (n - 3) / (n - 1)) / n)

    target = true_se(4 * n0)
    pilot = pd.DataFrame({"cell": [f"r{i}" for i in range(runs)], "distribution": "d", "measure": "variance",
                          "estimate": var, "mcse": mcse, "reps": n0, "kurtosis": kurtosis})  # fmt: skip
    reps = pilot["cell"].map(_plan_of(pilot, n0, target).cell_reps).to_numpy(float)
    return int((true_se(reps) <= target * (1 + 1e-9)).sum()), runs


@pytest.mark.slow
@pytest.mark.parametrize("n0", [100, 1000])
def test_a_squared_error_row_of_normal_errors_meets_its_target_in_95_percent_of_runs(n0, rng):
    # Planned as if its squared errors were normal (kurtosis 3, as on 5b8da2a) it met the target in about 66-72%
    # of runs; with the kurtosis of a squared normal error (15, evp_accuracy's pilot) in about 96%.
    met, runs = _variance_row_validity(n0, 4000, rng, kurtosis=15.0)
    assert _clopper_pearson(met, runs)[1] >= 0.95, (met, runs)
    plain = _variance_row_validity(n0, 4000, rng, kurtosis=3.0)[0]
    assert _clopper_pearson(plain, runs)[1] < 0.95, (plain, runs)  # the normal plan is short: the case is real


def test_unknown_measure_on_the_command_line_is_one_line_and_keeps_only_the_pilot_chunks(tmp_path):
    args = [*FIG1, "budget.B=3", "study.reps=200", "study.chunk_reps=100", "hydra.run.dir=run"]
    proc = simstudy(*args, "study.precision={mde: 0.001}", cwd=tmp_path, check=False)
    one_line_error(proc, "study.precision.mde is not a measure of this study (its measures: mean, bias, variance")
    assert not (tmp_path / "run" / "config.yaml").exists() and not (tmp_path / "run" / "summary.parquet").exists()
