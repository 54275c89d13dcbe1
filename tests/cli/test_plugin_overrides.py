"""A band method and a selection algorithm of one's own join the papers' studies by one command-line override,
through the config layer (the one-line checks) and the whole command (figure, summary), with the built-in
numbers reproduced exactly when the plug-in computes the same thing."""

import textwrap

import numpy as np
import pandas as pd
import pytest
from _cli import one_line_error, simstudy

BANDS = '''
import numpy as np

def dkw_band(sorted_scores, confidence):
    """DKW through the contract: bounds on F at the order statistics, one row for every sample (data-free)."""
    n = sorted_scores.shape[-1]
    eps = np.sqrt(np.log(2.0 / (1.0 - confidence)) / (2.0 * n))
    i = np.arange(1, n + 1)
    return np.clip(i / n - eps, 0.0, 1.0), np.clip((i - 1) / n + eps, 0.0, 1.0)

def decreasing(sorted_scores, confidence):
    n = sorted_scores.shape[-1]
    return np.linspace(0.5, 0.0, n), np.ones(n)
'''

ALGOS = '''
import numpy as np

def even_split(arms, budget, runs, *, rng):
    """Non-adaptive through the fixed-budget contract: budget // N draws of each arm, the best mean picked
    (ties uniformly at random) -- the built-in non_adaptive's draws, in its order."""
    from simstudy.stats.selection import non_adaptive_runs
    return non_adaptive_runs(arms, budget, runs, rng=rng)
'''


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_a_band_method_of_one_s_own_joins_the_coverage_study_by_one_override(tmp_path):
    (tmp_path / "my_bands.py").write_text(textwrap.dedent(BANDS))
    simstudy("study=band_coverage", "distribution=truncnorm", "study.reps=200", "study.chunk_reps=100",
             "study.sample_size=12", "study.levels=[0.5,0.8]", "study.methods=[dkw,my_bands.dkw_band]",
             "runner.progress=false", "hydra.run.dir=run", cwd=tmp_path)
    s = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    mine, builtin = (s[s.method == m].sort_values(["check", "nominal"]) for m in ("my_bands.dkw_band", "dkw"))
    assert len(mine) == 6 and np.array_equal(mine.estimate.to_numpy(), builtin.estimate.to_numpy())
    assert (tmp_path / "run" / "figure.png").is_file()


def test_a_band_method_breaking_its_contract_is_one_line_before_any_compute(tmp_path):
    (tmp_path / "my_bands.py").write_text(textwrap.dedent(BANDS))
    proc = simstudy("study=band_coverage", "distribution=truncnorm", "study.methods=[my_bands.decreasing]",
                    "hydra.run.dir=run", cwd=tmp_path, check=False)
    one_line_error(proc, "study.methods=my_bands.decreasing: ")
    assert "decreas" in proc.stderr and not (tmp_path / "run" / "summary.parquet").exists()


def test_a_selection_algorithm_of_one_s_own_joins_the_fixed_budget_study_by_one_override(tmp_path):
    (tmp_path / "my_algos.py").write_text(textwrap.dedent(ALGOS))
    simstudy("experiment=fiesta_fig4", "study.reps=200", "study.chunk_reps=100", "study.budgets=[36]",
             "study.algorithms=[non_adaptive,my_algos.even_split]", "runner.progress=false", "hydra.run.dir=run",
             cwd=tmp_path)
    s = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    p = s[s.measure == "p_correct"].set_index("algorithm")["estimate"]
    assert set(p.index) == {"non_adaptive", "my_algos.even_split"}
    assert 0 < p["my_algos.even_split"] < 1
