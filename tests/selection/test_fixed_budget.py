"""Fixed-budget model selection (Moss et al. 2019): sequential halving and the non-adaptive baseline."""

import numpy as np
import pytest
from scipy import stats

from simstudy import selection
from simstudy.distributions import Bag, TruncatedNormal


def test_table_1_allocation():
    # Moss et al. Table 1: 4 models, T = 16 -> 2 evaluations each, then 4 each for the surviving two.
    assert selection.halving_schedule(4, 16) == [(4, 2), (2, 4)]
    arms = [TruncatedNormal(0.5 + 0.05 * i, 0.01) for i in range(4)]
    result = selection.sequential_halving(arms, 16, rng=np.random.default_rng(0))
    assert sorted(result.evaluations) == [2, 2, 6, 6] and result.unspent == 0
    assert len(result.rounds) == 2 and len(result.rounds[1]) == 2 and result.chosen in result.rounds[1]
    assert result.chosen == 3


def test_schedule_for_twelve_models_and_unspent_budget():
    assert selection.halving_schedule(12, 204) == [(12, 4), (6, 8), (3, 17), (2, 25)]
    arms = [TruncatedNormal(0.6, 0.01)] * 12
    assert selection.sequential_halving(arms, 204, rng=np.random.default_rng(1)).unspent == 204 - 197
    assert selection.non_adaptive(arms, 204, rng=np.random.default_rng(1)).unspent == 0


@pytest.mark.parametrize("call, message", [
    (lambda: selection.halving_schedule(12, 47), "budget=47 is too small for sequential halving over 12 arms"),
    (lambda: selection.halving_schedule(1, 10), "need at least 2 arms"),
    (lambda: selection.non_adaptive([TruncatedNormal()] * 3, 2, rng=np.random.default_rng()), "at least one"),
])
def test_budget_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("runner", [selection.sequential_halving_runs, selection.non_adaptive_runs])
def test_well_separated_arms_are_found(runner):
    arms = [TruncatedNormal(m, 0.01) for m in (0.60, 0.65, 0.70, 0.75)]
    chosen, _ = runner(arms, 32, 4000, rng=np.random.default_rng(2))
    low = stats.binomtest(int((chosen == 3).sum()), 4000).proportion_ci(0.999).low
    assert low >= 0.99 or (chosen == 3).mean() >= 0.99


@pytest.mark.parametrize("runner", [selection.sequential_halving_runs, selection.non_adaptive_runs])
def test_identical_arms_are_chosen_equally_often(runner):
    arms = [Bag([0.1, 0.2, 0.3])] * 4  # many ties in the means: broken at random
    chosen, _ = runner(arms, 16, 8000, rng=np.random.default_rng(3))
    counts = np.bincount(chosen, minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_callback_arms_evaluate_real_models():
    calls = []

    def model(quality):
        def evaluate(count, rng):
            calls.append((quality, count))
            return quality + 0.001 * rng.standard_normal(count)
        return evaluate

    result = selection.sequential_halving([model(q) for q in (0.3, 0.9, 0.5)], 12, rng=np.random.default_rng(4))
    assert result.chosen == 1 and sum(c for _, c in calls) == result.evaluations.sum()


def test_vectorized_runs_agree_with_single_runs_in_distribution():
    arms = [TruncatedNormal(m, 0.02) for m in (0.60, 0.61, 0.62)]
    many, _ = selection.sequential_halving_runs(arms, 12, 3000, rng=np.random.default_rng(5))
    single = [selection.sequential_halving(arms, 12, rng=np.random.default_rng(100 + i)).chosen for i in range(600)]
    table = np.array([np.bincount(many, minlength=3), np.bincount(single, minlength=3)])
    assert stats.chi2_contingency(table).pvalue > 1e-3


@pytest.mark.parametrize("rng", [None, 3])
def test_rng_must_be_a_generator(rng):
    arms = [stats.norm(0.5, 0.1), stats.norm(0.6, 0.1)]
    for call in (lambda: selection.sequential_halving([lambda c, r: r.normal(size=c)] * 2, 8, rng=rng),
                 lambda: selection.non_adaptive([lambda c, r: r.normal(size=c)] * 2, 8, rng=rng),
                 lambda: selection.sequential_halving_runs(arms, 8, 3, rng=rng),
                 lambda: selection.non_adaptive_runs(arms, 8, 3, rng=rng)):
        with pytest.raises(ValueError, match=r"rng= must be a numpy.random.Generator, e.g. np.random.default_rng\(0\)"):
            call()


def test_a_wrong_shape_arm_is_named():
    arms = [lambda c, r: r.normal(size=c), lambda c, r: r.normal(size=(c, 1)), lambda c, r: r.normal(size=c)]
    with pytest.raises(ValueError, match=r"^arm 1: evaluate\(count, rng\) returned shape \(2, 1\) where \(2,\) "
                                         r"was asked for$"):
        selection.non_adaptive(arms, 6, rng=np.random.default_rng(4201))
