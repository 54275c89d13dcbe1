"""Fixed-budget selection on the TDSA models (Moss et al. Figure 4), small scale."""

import json

import pandas as pd
import pytest
from _cli import simstudy

from simstudy import config
from simstudy.studies import model_selection


def cfg_dict(**study):
    return {
        "seed": 1, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
        "distribution": {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m}
                         for m in ("atae", "ian", "lstm", "tdlstm", "atae_50", "tdlstm_50")},
        "study": {"name": "fb", "kind": "model_selection", "reps": 2000, "chunk_reps": 1000, "budgets": [18, 60],
                  **study},
    }


def make_config(**study):
    return config.parse(cfg_dict(**study))


def test_sequential_halving_beats_the_equal_split(tmp_path):
    s = model_selection.run(make_config(), tmp_path).summary
    p = s[s.measure == "p_correct"].set_index(["budget", "algorithm"])
    assert (p.arm == "tdlstm").all()
    for budget in (18, 60):
        sh, na = p.loc[(budget, "sequential_halving")], p.loc[(budget, "non_adaptive")]
        assert sh.estimate - na.estimate > 3 * (sh.mcse**2 + na.mcse**2) ** 0.5
    rates = s[s.measure == "chosen_rate"].groupby(["budget", "algorithm"]).estimate.sum()
    assert rates.to_numpy() == pytest.approx(1.0)


def test_budget_too_small_is_a_config_error():
    with pytest.raises(config.ConfigError, match="too small for sequential halving"):
        make_config(budgets=[10])


def test_defaults_are_unchanged_by_the_variants(tmp_path):
    # numbers and chunk fingerprint of this config before the variants of sequential halving existed
    result = model_selection.run(make_config(), tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["fingerprint"] == "f43128045cbc9ad3"
    p = result.summary[result.summary.measure == "p_correct"].set_index(["budget", "algorithm"]).estimate
    assert p.to_dict() == {(18, "sequential_halving"): 0.6355, (18, "non_adaptive"): 0.5655,
                           (60, "sequential_halving"): 0.8625, (60, "non_adaptive"): 0.7865}


VARIANTS = ["sequential_halving_spend_all", "sequential_halving_last_round_means", "sequential_halving_drop_ceil"]


def test_named_variants_parse_and_run_through_the_study(tmp_path):
    s = model_selection.run(make_config(algorithms=["sequential_halving", *VARIANTS, "non_adaptive"], reps=1000,
                                        chunk_reps=1000, budgets=[60]), tmp_path).summary
    unspent = s[s.measure == "unspent"].set_index("algorithm").estimate
    # 6 arms, T = 60: Algorithm 1 spends 3 * 6 + 6 * 3 + 10 * 2 = 56; drop_ceil 5 * 6 + 10 * 3 = 60 (2 rounds)
    assert unspent.to_dict() == {"sequential_halving": 4.0, "sequential_halving_spend_all": 0.0,
                                 "sequential_halving_last_round_means": 4.0, "sequential_halving_drop_ceil": 0.0,
                                 "non_adaptive": 0.0}
    p = s[s.measure == "p_correct"].set_index("algorithm")
    assert (p.arm == "tdlstm").all() and len(p) == 5


@pytest.mark.parametrize("overrides, algorithm, spent", [
    # configs/distribution/tdsa_fiesta_code_order.yaml: the 8 models of §5.2 first; 8 * 8 + 4 * 17 + 2 * 34 = 200
    (["distribution=tdsa_fiesta_code_order", "study.algorithms=[sequential_halving_first_8,non_adaptive]"],
     "sequential_halving_first_8", 200),
    (["study.algorithms=[sequential_halving_spend_all,non_adaptive]"], "sequential_halving_spend_all", 204),
])
def test_the_figure_4_hypotheses_run_from_the_command_line(tmp_path, overrides, algorithm, spent):
    simstudy("experiment=fiesta_fig4", *overrides, "study.reps=300", "study.chunk_reps=300", "study.budgets=[204]",
             "runner.progress=false", "hydra.run.dir=run", cwd=tmp_path)
    s = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    assert set(s.algorithm) == {algorithm, "non_adaptive"}
    sh = s[s.algorithm == algorithm].set_index(["measure", "arm"]).estimate
    assert sh[("unspent", "")] == 204 - spent
    assert sh[("p_correct", "tdlstm")] > 0.9
    if algorithm == "sequential_halving_first_8":  # the four 200-dimension models are never candidates
        assert (sh["chosen_rate"][["atae_200", "ian_200", "lstm_200", "tdlstm_200"]] == 0).all()


@pytest.mark.parametrize("study, message", [
    ({"algorithms": ["sequential_halving_drop_ceil"], "budgets": [11]},
     "study.budgets: budget=11 is too small for sequential halving over 6 arms"),
    ({"algorithms": ["non_adaptive", "sequential_halving_spend_all"], "budgets": [60, 17]},
     "study.budgets: budget=17 is too small for sequential halving over 6 arms"),
    ({"algorithms": ["sequential_halving_first_8"]},
     "study.algorithms: sequential_halving_first_8 selects among the first 8 arms; the study has 6"),
])
def test_variants_get_the_budget_checks_before_any_compute(study, message):
    with pytest.raises(config.ConfigError, match=f"^{message}"):
        make_config(**study)
