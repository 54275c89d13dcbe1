"""Fixed-budget selection on the TDSA models (Moss et al. Figure 4), small scale."""

import pytest

from simstudy import config
from simstudy.studies import model_selection


def make_config(**study):
    return config.parse({
        "seed": 1, "budget": {"B": 2}, "estimators": {"v": {"method": "v"}},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
        "distribution": {m: {"kind": "empirical", "dataset": "tdsa_fiesta", "model": m}
                         for m in ("atae", "ian", "lstm", "tdlstm", "atae_50", "tdlstm_50")},
        "study": {"name": "fb", "kind": "model_selection", "reps": 2000, "chunk_reps": 1000, "budgets": [18, 60],
                  **study},
    })


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
