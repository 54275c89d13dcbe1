"""Bring your own selection algorithm: a function of the fixed-budget contract (whole vectorized runs) or of the
fixed-confidence contract (one proposal step) listed in ``study.algorithms`` by import path, with the plug-in
modules written into the working directory (tmp_path) as a user would."""

import dataclasses
import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from simstudy import config, extend, plugins
from simstudy.studies import fixed_confidence, model_selection

# The fiesta TDSA models: tdlstm has the highest mean, atae is not the best.
MODELS = ("atae", "ian", "lstm", "tdlstm", "atae_50", "tdlstm_50")

# Reimplementations of built-ins through the contracts, drawing from rng in the built-ins' order.
REIMPLEMENTED = """
import numpy as np

def equal_split(arms, budget, runs, *, rng):
    # non_adaptive_runs: floor(budget / N) evaluations of every arm, the best mean, ties broken at random
    each = budget // len(arms)
    means = np.stack([a.sample((runs, each), rng=rng).sum(axis=1) for a in arms], axis=1) / each
    noise = rng.random(means.shape)
    return np.lexsort((noise, -means), axis=-1)[:, 0], np.full((runs, len(arms)), each)

def first_arm(arms, budget, runs, *, rng):
    # picks arm 0 without evaluating anything
    return np.zeros(runs, dtype=np.int64), np.zeros((runs, len(arms)), dtype=np.int64)

def thompson(loc, scale, df, rng):
    return np.argmax(loc + scale * rng.standard_t(df), axis=1)

def top_two(loc, scale, df, *, rng):
    # top-two Thompson sampling: m1 ~ pi, m2 ~ pi redrawn until it differs from m1, one of them at random
    m1 = thompson(loc, scale, df, rng)
    m2, todo = np.full_like(m1, -1), np.arange(m1.size)
    while todo.size:
        j = thompson(loc[todo], scale[todo], df[todo], rng)
        ok = j != m1[todo]
        m2[todo[ok]] = j[ok]
        todo = todo[~ok]
    return np.where(rng.random(m1.size) < 0.5, m1, m2)[:, None]

def every_arm(loc, scale, df, *, rng):
    # the non-adaptive baseline: every model once per step
    return np.tile(np.arange(loc.shape[1]), (loc.shape[0], 1))
"""

# Contract violations, each a function of the right signature (the check input: 3 arms, budget 30, 4 runs).
BROKEN = """
import numpy as np

NOT_A_FUNCTION = 3

def raises(arms, budget, runs, *, rng):
    return 1 / 0

def picks_2d(arms, budget, runs, *, rng):
    return np.zeros((runs, 1), dtype=int), np.zeros((runs, len(arms)), dtype=int)

def float_picks(arms, budget, runs, *, rng):
    return np.zeros(runs), np.zeros((runs, len(arms)), dtype=int)

def arm_out_of_range(arms, budget, runs, *, rng):
    return np.full(runs, len(arms)), np.zeros((runs, len(arms)), dtype=int)

def negative_evaluations(arms, budget, runs, *, rng):
    return np.zeros(runs, dtype=int), np.full((runs, len(arms)), -1)

def over_budget(arms, budget, runs, *, rng):
    return np.zeros(runs, dtype=int), np.full((runs, len(arms)), budget)

_CALLS = [0]

def global_random(arms, budget, runs, *, rng):
    # State outside rng: each call picks differently (an unseeded generator's two calls could agree by chance).
    _CALLS[0] += 1
    return (np.arange(runs) + _CALLS[0]) % len(arms), np.zeros((runs, len(arms)), dtype=int)

def picks_only(arms, budget, runs, *, rng):
    return np.zeros(runs, dtype=int)

def ten_each(arms, budget, runs, *, rng):
    # fine on the check input (3 arms, budget 30), over a budget of 18 on 6 arms: fails mid-run
    return np.zeros(runs, dtype=int), np.full((runs, len(arms)), 10)

def propose_1d(loc, scale, df, *, rng):
    return np.zeros(loc.shape[0], dtype=int)

def propose_float(loc, scale, df, *, rng):
    return np.zeros((loc.shape[0], 1))

def propose_out_of_range(loc, scale, df, *, rng):
    return np.full((loc.shape[0], 1), -1)

def propose_width_of_runs(loc, scale, df, *, rng):
    return np.zeros((loc.shape[0], loc.shape[0]), dtype=int)

_STEP = [0]

def propose_global_random(loc, scale, df, *, rng):
    # State kept outside rng (as a global random generator is): each call proposes differently. A fresh
    # unseeded generator would do the same, but two of its calls agree by chance (1 in 81 on the check input).
    _STEP[0] += 1
    return (np.arange(loc.shape[0])[:, None] + _STEP[0]) % loc.shape[1]

def propose_raises(loc, scale, df, *, rng):
    raise RuntimeError("no proposal today")
"""


@pytest.fixture(autouse=True)
def _forget_plugins(tmp_path, monkeypatch, forget_plugins):
    """The plug-in modules live in tmp_path, the working directory; forgotten after each test (conftest's
    forget_plugins, and the registered names)."""
    (tmp_path / "my_selection.py").write_text(textwrap.dedent(REIMPLEMENTED))
    (tmp_path / "my_broken.py").write_text(textwrap.dedent(BROKEN))
    monkeypatch.chdir(tmp_path)
    yield
    for registry in extend.selection_algorithms.values():
        for name in list(registry.registered()):
            registry.unregister(name)


def make_config(kind: str, algorithms: tuple, *, models=MODELS, n_jobs: int = 1, seed: int = 11, **study):
    """A parsed config of built-in algorithms, then ``algorithms`` put in its options (the config layer does not
    accept plug-in names yet: the integrator wires :func:`simstudy.plugins.check_selection_algorithm` there)."""
    cfg = config.parse({
        "seed": seed, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
        "distribution": {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m} for m in models},
        "study": {"name": "sel", "kind": kind, **study},
    })
    options = dataclasses.replace(cfg.study.options, algorithms=tuple(algorithms))
    return dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, options=options))


def fixed_budget(algorithms, **kwargs):
    return make_config("model_selection", algorithms, reps=400, chunk_reps=200, budgets=[18, 60], **kwargs)


def numbers(s: pd.DataFrame) -> pd.DataFrame:
    return s.drop(columns=["algorithm"]).reset_index(drop=True)


def fingerprint(run_dir: Path) -> str:
    return json.loads((run_dir / "run.json").read_text())["fingerprint"]


def test_a_fixed_budget_plugin_reimplementing_non_adaptive_gives_the_built_in_numbers(tmp_path):
    built_in = model_selection.run(fixed_budget(("sequential_halving", "non_adaptive")), tmp_path / "built_in")
    plugin = model_selection.run(fixed_budget(("sequential_halving", "my_selection.equal_split"), n_jobs=2),
                                 tmp_path / "plugin")
    assert set(plugin.summary.algorithm) == {"sequential_halving", "my_selection.equal_split"}
    pd.testing.assert_frame_equal(numbers(plugin.summary), numbers(built_in.summary))
    # the built-ins' fingerprint is the one before plug-ins existed (pinned); a plug-in's holds its source
    assert fingerprint(tmp_path / "built_in") == "b5a0c81a539ec787"
    assert fingerprint(tmp_path / "plugin") != fingerprint(tmp_path / "built_in")
    before = plugins.selection_settings("my_selection.equal_split", "fixed_budget")
    (tmp_path / "my_selection.py").write_text(textwrap.dedent(REIMPLEMENTED) + "\n# edited\n")
    after = plugins.selection_settings("my_selection.equal_split", "fixed_budget")
    assert before["target"] == after["target"] and before["source"] != after["source"]


@pytest.mark.parametrize("best_first, expected", [(False, 0.0), (True, 1.0)])
def test_a_plugin_always_picking_arm_0_is_right_exactly_when_arm_0_is_the_best(tmp_path, best_first, expected):
    models = ("tdlstm", "atae", "ian") if best_first else ("atae", "ian", "tdlstm")
    result = model_selection.run(fixed_budget(("my_selection.first_arm",), models=models), tmp_path / "run")
    s = result.summary.set_index(["measure", "budget", "arm"])
    for budget in (18, 60):
        assert s.loc[("p_correct", budget, "tdlstm"), "estimate"] == expected
        assert s.loc[("chosen_rate", budget, models[0]), "estimate"] == 1.0
        assert s.loc[("unspent", budget, ""), "estimate"] == budget  # it evaluated nothing


def test_fixed_confidence_plugins_reimplementing_ttts_and_non_adaptive_give_the_built_in_numbers(tmp_path):
    # a low cap: runs are capped, so the step read from the proposal (1 and N) decides the numbers too
    study = dict(reps=60, chunk_reps=30, deltas=[0.1, 0.2], max_evaluations=40)
    built_in = fixed_confidence.run(make_config("fixed_confidence", ("ttts", "non_adaptive"), **study),
                                    tmp_path / "built_in")
    plugin = fixed_confidence.run(make_config("fixed_confidence", ("my_selection.top_two", "my_selection.every_arm"),
                                              **study), tmp_path / "plugin")
    pd.testing.assert_frame_equal(numbers(plugin.summary), numbers(built_in.summary))
    capped = built_in.summary[built_in.summary.measure == "capped"].estimate
    assert (capped > 0).any() and (capped < 1).any()
    assert fingerprint(tmp_path / "built_in") == "0c25706b89892ca5"  # pinned before plug-ins existed


@pytest.mark.system
def test_a_registered_name_runs_by_import_path_in_workers(tmp_path):
    plugins.register_selection_algorithm("fixed_budget", "equal", "my_selection.equal_split")
    assert plugins.check_selection_algorithm("equal", "fixed_budget") == "equal"
    assert list(plugins.selection_algorithm_names("fixed_budget")) == [
        "sequential_halving", "non_adaptive", "sequential_halving_spend_all", "sequential_halving_last_round_means",
        "sequential_halving_drop_ceil", "sequential_halving_first_8", "equal"]
    built_in = model_selection.run(fixed_budget(("non_adaptive",)), tmp_path / "built_in")
    plugin = model_selection.run(fixed_budget(("equal",), n_jobs=2), tmp_path / "plugin")
    pd.testing.assert_frame_equal(numbers(plugin.summary), numbers(built_in.summary))


def test_registering_a_built_in_or_a_taken_name_is_an_error():
    with pytest.raises(ValueError, match="'ttts' is a built-in fixed_confidence algorithm"):
        plugins.register_selection_algorithm("fixed_confidence", "ttts", "my_selection.top_two")
    plugins.register_selection_algorithm("fixed_confidence", "tt", "my_selection.top_two")
    with pytest.raises(ValueError, match="'tt' is already registered as my_selection.top_two"):
        plugins.register_selection_algorithm("fixed_confidence", "tt", "my_selection.every_arm")
    with pytest.raises(ValueError, match="kind must be one of fixed_budget, fixed_confidence"):
        plugins.register_selection_algorithm("budget", "x", "my_selection.top_two")
    with pytest.raises(ValueError, match="target must be an import path module.function .*got 'top_two'"):
        plugins.register_selection_algorithm("fixed_confidence", "x", "top_two")


def test_a_plugin_breaking_its_contract_mid_run_is_a_recorded_chunk_failure(tmp_path):
    assert plugins.check_selection_algorithm("my_broken.ten_each", "fixed_budget") == "my_broken.ten_each"
    result = model_selection.run(fixed_budget(("my_broken.ten_each",)), tmp_path / "run")
    failures = result.report.failures
    assert len(failures) == 2 and len({f.cell for f in failures}) == 1  # both chunks of budget 18
    assert failures[0].error == ("PluginError: study.algorithms=my_broken.ten_each: spent 60 evaluations in run 0, "
                                 "over the budget of 18")
    s = result.summary
    assert set(s[s.measure == "p_correct"].budget) == {60}  # the failed cell is reported, not summarised
    assert s[s.measure == "failed_chunks"].cell.tolist() == [failures[0].cell]


FIXED_BUDGET_ERRORS = [
    ("foo", "study.algorithms must be one of sequential_halving, non_adaptive, sequential_halving_spend_all, "
            "sequential_halving_last_round_means, sequential_halving_drop_ceil, sequential_halving_first_8 or an "
            "import path module.function, got 'foo'"),
    ("my_nowhere.f", "study.algorithms=my_nowhere.f: no module named 'my_nowhere' in the working directory"),
    ("my_broken.nothing", "study.algorithms=my_broken.nothing: my_broken has no attribute 'nothing'"),
    ("my_broken.NOT_A_FUNCTION", "study.algorithms=my_broken.NOT_A_FUNCTION: is a int, not a function"),
    ("my_broken.raises", "study.algorithms=my_broken.raises: raised ZeroDivisionError: division by zero on the check "
                         "input (3 arms, budget=30, runs=4)"),
    ("my_broken.picks_2d", "study.algorithms=my_broken.picks_2d: returned picks of shape (4, 1) for 4 runs of 3 arms; "
                           "the contract is (4,)"),
    ("my_broken.float_picks", "study.algorithms=my_broken.float_picks: returned picks of dtype float64; the contract "
                              "is integers"),
    ("my_broken.arm_out_of_range", "study.algorithms=my_broken.arm_out_of_range: picked arm 3; picks must lie in "
                                   "[0, 3) for 3 arms"),
    ("my_broken.negative_evaluations", "study.algorithms=my_broken.negative_evaluations: returned a negative number "
                                       "of evaluations (-1)"),
    ("my_broken.over_budget", "study.algorithms=my_broken.over_budget: spent 90 evaluations in run 0, over the "
                              "budget of 30"),
    ("my_broken.global_random", "study.algorithms=my_broken.global_random: returned different picks or evaluations "
                                "for the same generator called twice"),
    ("my_broken.picks_only", "study.algorithms=my_broken.picks_only: returned ndarray; the contract is a pair "
                             "(picks, evaluations)"),
]

FIXED_CONFIDENCE_ERRORS = [
    ("foo", "study.algorithms must be one of ttts, non_adaptive, batch_thompson or an import path "
            "module.function, got 'foo'"),
    ("my_broken.propose_raises", "study.algorithms=my_broken.propose_raises: raised RuntimeError: no proposal today "
                                 "on the check input (the posteriors of 4 runs over 3 models)"),
    ("my_broken.propose_1d", "study.algorithms=my_broken.propose_1d: returned shape (4,) for 4 runs; the contract is "
                             "(4, k) with k >= 1 evaluations per step"),
    ("my_broken.propose_float", "study.algorithms=my_broken.propose_float: returned dtype float64; the contract is "
                                "integer model indices"),
    ("my_broken.propose_out_of_range", "study.algorithms=my_broken.propose_out_of_range: returned model index -1; "
                                       "indices must lie in [0, 3) for 3 models"),
    ("my_broken.propose_width_of_runs", "study.algorithms=my_broken.propose_width_of_runs: returned shape (2, 2) for "
                                        "2 runs; the contract is (2, 4) (its width must not depend on the number "
                                        "of runs)"),
    ("my_broken.propose_global_random", "study.algorithms=my_broken.propose_global_random: returned different "
                                        "proposals for the same generator called twice"),
    # a fixed-budget function is not a proposal
    ("my_selection.equal_split", "study.algorithms=my_selection.equal_split: raised AttributeError: 'numpy.ndarray' "
                                 "object has no attribute 'sample' on the check input (the posteriors of 4 runs"),
]


@pytest.mark.parametrize("kind, name, message", [("fixed_budget", *e) for e in FIXED_BUDGET_ERRORS]
                         + [("fixed_confidence", *e) for e in FIXED_CONFIDENCE_ERRORS])
def test_every_contract_violation_is_a_one_line_error_naming_key_and_target(kind, name, message):
    with pytest.raises(plugins.PluginError) as caught:
        plugins.check_selection_algorithm(name, kind, "study.algorithms")
    text = str(caught.value)
    assert "\n" not in text and text.startswith(message), text


def test_a_registered_broken_name_is_named_with_its_target():
    plugins.register_selection_algorithm("fixed_confidence", "flaky", "my_broken.propose_global_random")
    with pytest.raises(plugins.PluginError, match=r"^study.algorithms=flaky \(my_broken.propose_global_random\): "
                                                  r"returned different proposals"):
        plugins.check_selection_algorithm("flaky", "fixed_confidence", "study.algorithms")


def test_good_plugins_and_built_ins_pass_the_check():
    for name in ("sequential_halving", "non_adaptive", "my_selection.equal_split", "my_selection.first_arm"):
        assert plugins.check_selection_algorithm(name, "fixed_budget", "study.algorithms") == name
    for name in ("ttts", "batch_thompson", "my_selection.top_two", "my_selection.every_arm"):
        assert plugins.check_selection_algorithm(name, "fixed_confidence", "study.algorithms") == name
