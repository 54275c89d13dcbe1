"""Fixed-budget model selection (Moss et al. 2019): sequential halving and the non-adaptive baseline."""

import numpy as np
import pytest
from scipy import stats

from simstudy.distributions import Bag, TruncatedNormal
from simstudy.stats import selection


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


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
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


# Variants of sequential halving: what Moss et al. may have run for Figure 4 (see the module docstring).

TWELVE = [Bag([0.50 + 0.01 * i, 0.52 + 0.01 * i]) for i in range(12)]  # arm 11 is the best


def test_variant_schedules():
    assert selection.halving_schedule(12, 204, halving="drop_ceil") == [(12, 5), (6, 11), (3, 22)]  # 192 spent
    assert selection.halving_schedule(12, 204, first_arms=8) == [(8, 8), (4, 17), (2, 34)]  # 200 spent
    assert selection.halving_schedule(5, 20, halving="drop_ceil") == [(5, 2), (2, 5)]  # 5 -> 2 -> 1
    for options in ({"leftover": "final_round"}, {"means": "last_round"}):  # the schedule itself is Algorithm 1's
        assert selection.halving_schedule(12, 204, **options) == selection.halving_schedule(12, 204)


@pytest.mark.parametrize("budget", [48, 100, 204, 215, 300])
def test_spend_all_spends_exactly_the_budget(budget):
    base = selection.halving_schedule(12, budget)
    extra = budget - sum(k * each for k, each in base)
    chosen, evaluations = selection.sequential_halving_runs(TWELVE, budget, 300, rng=np.random.default_rng(budget),
                                                            leftover="final_round")
    assert (evaluations.sum(axis=1) == budget).all()
    finalists = np.sort(evaluations, axis=1)[:, -2:]  # the final round's two survivors share the leftover
    before = sum(each for _, each in base)
    assert (finalists.sum(axis=1) == 2 * before + extra).all()
    assert set(np.unique(finalists)) <= {before + extra // 2, before + extra - extra // 2}
    result = selection.sequential_halving(TWELVE, budget, rng=np.random.default_rng(budget), leftover="final_round")
    assert result.unspent == 0 and result.evaluations.sum() == budget


def test_spend_all_at_204_over_twelve_arms():
    # Algorithm 1 spends 4 + 8 + 17 + 25 per finalist, 197 in all; the 7 left over go 4 and 3 to the finalists
    _, evaluations = selection.sequential_halving_runs(TWELVE, 204, 500, rng=np.random.default_rng(2041),
                                                       leftover="final_round")
    assert (evaluations.sum(axis=1) == 204).all()
    assert sorted(np.unique(np.sort(evaluations, axis=1)[:, -2:])) == [57, 58]
    _, default = selection.sequential_halving_runs(TWELVE, 204, 500, rng=np.random.default_rng(2041))
    assert (default.sum(axis=1) == 197).all()


def test_drop_ceil_and_first_arms_spend_and_candidates():
    chosen, evaluations = selection.sequential_halving_runs(TWELVE, 204, 300, rng=np.random.default_rng(2042),
                                                            halving="drop_ceil")
    assert (evaluations.sum(axis=1) == 192).all() and sorted(np.unique(evaluations)) == [5, 16, 38]
    chosen, evaluations = selection.sequential_halving_runs(TWELVE, 204, 300, rng=np.random.default_rng(2043),
                                                            first_arms=8)
    assert (evaluations[:, 8:] == 0).all() and (evaluations.sum(axis=1) == 200).all() and (chosen < 8).all()
    assert (chosen == 7).all()  # the best of the first 8 (the arms are far apart for 59 evaluations)
    result = selection.sequential_halving(TWELVE, 204, rng=np.random.default_rng(2044), first_arms=8)
    assert result.rounds[0] == tuple(range(8)) and result.unspent == 4 and result.chosen == 7


def scripted(first, later):
    """A callable arm scoring ``first`` on its first call (round 1) and ``later`` on every later call."""
    calls = []

    def evaluate(count, rng):
        calls.append(count)
        return np.full(count, first if len(calls) == 1 else later)
    return evaluate


@pytest.mark.parametrize("means, chosen", [("cumulative", 0), ("last_round", 1)])
def test_last_round_means_eliminate_by_this_round_only(means, chosen):
    # T = 16 over 4 arms: 2 evaluations each, then 4 each for two. Arm 0 leads on all its evaluations
    # ((2 * 1.0 + 4 * 0.5) / 6 = 0.67 against 0.57), arm 1 on the final round's (0.6 against 0.5).
    arms = [scripted(1.0, 0.5), scripted(0.5, 0.6), scripted(0.1, 0.1), scripted(0.1, 0.1)]
    assert selection.sequential_halving(arms, 16, rng=np.random.default_rng(5), means=means).chosen == chosen


def test_named_variants_are_the_options_and_the_default_is_unchanged():
    assert selection.FIXED_BUDGET_RUNS["sequential_halving"] is selection.sequential_halving_runs
    assert set(selection.HALVING_VARIANTS) <= set(selection.FIXED_BUDGET_RUNS)
    for name, options in selection.HALVING_VARIANTS.items():
        named = selection.FIXED_BUDGET_RUNS[name](TWELVE, 120, 50, rng=np.random.default_rng(7))
        direct = selection.sequential_halving_runs(TWELVE, 120, 50, rng=np.random.default_rng(7), **options)
        assert all(np.array_equal(a, b) for a, b in zip(named, direct))
    # every option at its default is Algorithm 1 as printed, draw for draw
    spelled = selection.sequential_halving_runs(TWELVE, 120, 50, rng=np.random.default_rng(8), leftover="unspent",
                                                means="cumulative", halving="drop_floor", first_arms=None)
    plain = selection.sequential_halving_runs(TWELVE, 120, 50, rng=np.random.default_rng(8))
    assert all(np.array_equal(a, b) for a, b in zip(spelled, plain))


@pytest.mark.parametrize("options, message", [
    ({"leftover": "all"}, "leftover='all' is not one of 'unspent', 'final_round'"),
    ({"means": "last"}, "means='last' is not one of 'cumulative', 'last_round'"),
    ({"halving": "ceil"}, "halving='ceil' is not one of 'drop_floor', 'drop_ceil'"),
    ({"halving": None}, "halving=None is not one of 'drop_floor', 'drop_ceil'"),
    ({"first_arms": 13}, r"first_arms=13 must be None \(every arm\) or an integer from 2 to the number of arms \(12\)"),
    ({"first_arms": 1}, r"first_arms=1 must be None"),
    ({"first_arms": True}, r"first_arms=True must be None"),
])
def test_a_bad_variant_option_is_a_one_line_error(options, message):
    for call in (lambda: selection.halving_schedule(12, 204, **options),
                 lambda: selection.sequential_halving_runs(TWELVE, 204, 3, rng=np.random.default_rng(9), **options),
                 lambda: selection.sequential_halving(TWELVE, 204, rng=np.random.default_rng(9), **options)):
        with pytest.raises(ValueError, match=f"^{message}") as info:
            call()
        assert "\n" not in str(info.value)


def test_variant_budget_errors_name_the_variant_minimum():
    with pytest.raises(ValueError, match=r"^budget=35 is too small for sequential halving over 12 arms: round 1 needs "
                                         r"at least 36 evaluations \(\|S\| \* rounds\); the budget must be at least 36$"):
        selection.halving_schedule(12, 35, halving="drop_ceil")
    with pytest.raises(ValueError, match=r"over the first 8 of 12 arms: .* the budget must be at least 24$"):
        selection.halving_schedule(12, 23, first_arms=8)
