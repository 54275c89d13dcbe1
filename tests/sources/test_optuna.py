"""The traces Optuna's samplers leave in system attributes, named as provenance (the keys as Optuna 3.0 to 5.1 write
them, ``optuna/samplers``): the samplers the fixtures cannot run here (CMA-ES needs ``cmaes``, GP needs torch)."""

import pytest

from simstudy.sources._optuna import NOT_RECORDED, provenance


@pytest.mark.parametrize(
    "keys, fact",
    [
        (
            {"cma:generation": 10, "cma:optimizer:0": 2},
            "CmaEsSampler (an evolution strategy): trial system attrs cma:* in 10 of 10",
        ),
        ({"sepcma:generation": 10}, "CmaEsSampler (an evolution strategy): trial system attrs sepcma:* in 10 of 10"),
        (
            {"gp:relative_params:0": 4},
            "GPSampler (Bayesian optimization with a Gaussian process): trial system attrs gp:relative_params:* in 4 of 10",
        ),
        ({"nsga2:generation": 10}, "nsga2 (a genetic algorithm): trial system attrs nsga2:generation in 10 of 10"),
        ({"NSGAIIISampler:generation": 10}, "NSGAIIISampler (a genetic algorithm)"),
        (
            {"grid_id": 10, "search_space": 10},
            "GridSampler (a grid search): trial system attrs grid_id, search_space in 10 of 10",
        ),
    ],
)
def test_a_samplers_traces_are_named_with_how_many_trials_carry_them(keys, fact):
    facts = provenance(keys, [], 10)
    assert facts[0].startswith(fact)
    assert NOT_RECORDED not in facts


def test_no_trace_is_said_as_such_and_enqueued_or_pruned_trials_do_not_count_as_a_sampler():
    assert provenance({}, [], 10) == (NOT_RECORDED,)
    facts = provenance({"fixed_params": 2, "completed_rung_0": 5, "completed_rung_1": 2}, [], 10)
    assert facts[0] == NOT_RECORDED
    assert any(f.startswith("trials enqueued by hand") and "2 of 10" in f for f in facts)
    assert any(f.startswith("a successive-halving pruner") and "completed_rung_*" in f for f in facts)


def test_a_quasi_random_study_and_unknown_keys():
    facts = provenance({"my_key": 3, "constraints": 10}, ["qmc:ab12"], 10)
    assert facts == (
        "QMCSampler (quasi-random search): study system attr qmc:*",
        "other trial system attrs: my_key",
    )
