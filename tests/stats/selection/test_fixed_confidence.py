"""Fixed-confidence model selection (Moss et al. 2019, Algorithm 2 and §4.3): TTTS, the non-adaptive baseline and
batch Thompson sampling, one run at a time and vectorized across runs."""

from functools import partial

import numpy as np
import pytest
from scipy import stats

from simstudy.distributions import TruncatedNormal, from_spec
from simstudy.stats import selection

TDSA_8 = ["atae", "atae_50", "ian", "ian_50", "lstm", "lstm_50", "tdlstm", "tdlstm_50"]
ALGORITHMS = [("ttts", 1), ("non_adaptive", 1), ("batch_thompson", 4)]


def tdsa_arms():
    return [from_spec("empirical", {"dataset": "tdsa_fiesta", "model": m}) for m in TDSA_8]


def gaussians(means, sd=0.01):
    """The paper's synthetic arms (Figure 2): Gaussian scores, here truncated far out to [0, 1]."""
    return [TruncatedNormal(mean=m, sd=sd, low=0.0, high=1.0) for m in means]


def one_run(algorithm, batch, arms, delta, rng, **kwargs):
    if algorithm == "ttts":
        return selection.ttts(arms, delta, rng=rng, **kwargs)
    if algorithm == "non_adaptive":
        return selection.non_adaptive_confidence(arms, delta, rng=rng, **kwargs)
    return selection.batch_thompson(arms, delta, batch, rng=rng, **kwargs)


@pytest.mark.parametrize("algorithm, batch", ALGORITHMS)
def test_well_separated_arms_are_found(algorithm, batch, rng):
    arms = gaussians([0.60, 0.65, 0.70])
    runs = selection.fixed_confidence_runs(arms, [0.05], 400, algorithm=algorithm, batch=batch, rng=rng)
    assert np.mean(runs.chosen[0] == 2) >= 0.99
    assert not runs.capped.any()
    single = one_run(algorithm, batch, arms, 0.05, rng)
    assert single.chosen == 2 and single.confidence > 0.95 and not single.capped


@pytest.mark.parametrize("algorithm, batch", ALGORITHMS)
def test_identical_arms_are_chosen_equally_often_and_capped_runs_are_reported(algorithm, batch, rng):
    arms = gaussians([0.7, 0.7, 0.7])
    runs = selection.fixed_confidence_runs(arms, [0.05], 600, algorithm=algorithm, batch=batch, rng=rng,
                                           max_evaluations=30)
    assert runs.capped.mean() > 0.9  # no arm is better: runs end at the cap, flagged, not dropped
    assert (runs.evaluations[runs.capped] <= 30).all() and (runs.evaluations[runs.capped] > 30 - 4).all()
    counts = np.bincount(runs.chosen[0], minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3


@pytest.mark.slow
def test_table_2_claims_on_the_tdsa_models(rng):
    # TTTS needs fewer evaluations than the non-adaptive baseline at the same delta (beyond 3 MCSE), and both
    # reach their confidence level (% correct >= 1 - delta - 3 MCSE). 150 runs each.
    arms, deltas = tdsa_arms(), [0.1, 0.2]
    best = int(np.argmax([a.values.mean() for a in arms]))  # the bags of 500 recorded scores
    result = {name: selection.fixed_confidence_runs(arms, deltas, 150, algorithm=name, rng=rng)
              for name in ("ttts", "non_adaptive")}
    for d, delta in enumerate(deltas):
        e = {name: r.evaluations[d] for name, r in result.items()}
        mcse = np.sqrt(sum(x.var(ddof=1) / x.size for x in e.values()))
        assert e["non_adaptive"].mean() - e["ttts"].mean() > 3 * mcse
        for r in result.values():
            p = np.mean(r.chosen[d] == best)
            assert p >= 1 - delta - 3 * np.sqrt(p * (1 - p) / r.chosen.shape[1])
            assert not r.capped[d].any()


def test_one_trajectory_serves_every_delta(rng):
    runs = selection.fixed_confidence_runs(gaussians([0.65, 0.69, 0.70, 0.71]), [0.05, 0.1, 0.2], 200,
                                           algorithm="ttts", rng=rng)
    # a stricter level stops later on the same run, having spent at least as much on every arm
    assert (np.diff(runs.evaluations[::-1], axis=0) >= 0).all()
    assert (runs.per_arm[0] >= runs.per_arm[2]).all()
    assert (runs.per_arm.sum(axis=-1) == runs.evaluations).all()


@pytest.mark.slow
@pytest.mark.parametrize("algorithm, batch", ALGORITHMS)
def test_vectorized_runs_agree_with_one_run_at_a_time(algorithm, batch):
    # The vectorized runs draw m ~ pi by posterior sampling and stop on the leader's pi; the one-run functions
    # compute pi in full. Same algorithm: the mean evaluations agree within 4 combined MCSE.
    arms, delta, R = gaussians([0.68, 0.70, 0.71]), 0.1, 200
    rng = np.random.default_rng(11)
    many = selection.fixed_confidence_runs(arms, [delta], R, algorithm=algorithm, batch=batch, rng=rng)
    single = np.array([one_run(algorithm, batch, arms, delta, rng).evaluations.sum() for _ in range(R)])
    a, b = many.evaluations[0], single
    assert abs(a.mean() - b.mean()) < 4 * np.sqrt(a.var(ddof=1) / R + b.var(ddof=1) / R)


def test_trace_callback_and_real_model_callables():
    means = [0.60, 0.70, 0.65]
    calls = []

    def real_model(mean):  # stands in for training and scoring a model `count` times
        def evaluate(count, rng):
            calls.append(count)
            return rng.normal(mean, 0.01, count)
        return evaluate

    seen = []
    result = selection.ttts([real_model(m) for m in means], 0.05, rng=np.random.default_rng(3),
                            callback=lambda evaluations, pi: seen.append((evaluations.sum(), pi)))
    assert result.chosen == 1 and sum(calls) == result.evaluations.sum()
    assert result.pi_trace.shape == (len(seen), 3) and result.evaluations_trace[0] == 9
    np.testing.assert_allclose(result.pi_trace.sum(axis=1), 1.0)
    assert np.all(np.diff(result.evaluations_trace) == 1)  # TTTS: one evaluation per update
    assert result.pi_trace[-1].max() > 0.95 >= result.pi_trace[:-1].max(axis=1).max()


def test_monte_carlo_pi_option_reaches_the_same_choice():
    arms = gaussians([0.60, 0.65, 0.70])
    result = selection.ttts(arms, 0.05, rng=np.random.default_rng(4), pi_method="mc", mc_draws=20_000)
    assert result.chosen == 2 and result.confidence > 0.95


def test_batches_are_evaluated_whole():
    arms = gaussians([0.66, 0.69, 0.70, 0.71])
    for batch in (4, 8):
        runs = selection.fixed_confidence_runs(arms, [0.1], 100, algorithm="batch_thompson", batch=batch,
                                               rng=np.random.default_rng(batch))
        assert ((runs.evaluations - 3 * 4) % batch == 0).all()
        one = selection.batch_thompson(arms, 0.1, batch, rng=np.random.default_rng(batch))
        assert np.all(np.diff(one.evaluations_trace) == batch)


def test_zero_variance_arms_do_not_crash():
    constant = [lambda count, rng, v=v: np.full(count, v) for v in (0.5, 0.6, 0.6)]
    result = selection.ttts(constant, 0.05, rng=np.random.default_rng(0), max_evaluations=60)
    assert result.chosen in (1, 2) and np.isfinite(result.pi_trace).all()
    bags = [from_spec("bag", {"values": [v] * 5}) for v in (0.5, 0.6)]
    runs = selection.fixed_confidence_runs(bags, [0.05], 20, algorithm="ttts", rng=np.random.default_rng(0))
    assert (runs.chosen == 1).all() and (runs.evaluations == 6).all()


def test_logit_transform():
    arms = gaussians([0.60, 0.65, 0.70])
    result = selection.ttts(arms, 0.05, rng=np.random.default_rng(5), logit=True)
    assert result.chosen == 2
    assert 0.6 < result.means[2] < 0.8  # reported means stay on the score scale
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        selection.ttts([lambda c, r: np.full(c, 1.0), lambda c, r: np.full(c, 0.5)], 0.05,
                       rng=np.random.default_rng(0), logit=True)


@pytest.mark.parametrize("kwargs, message", [
    ({"delta": 0.0}, "delta must lie in"),
    ({"delta": 0.6}, "delta must lie in"),
    ({"initial": 2}, "initial must be an integer >= 3"),
    ({"max_evaluations": 5}, "max_evaluations must be an integer of at least"),
    ({"pi_method": "exact"}, "pi_method must be one of quadrature, mc"),
])
def test_bad_arguments(kwargs, message):
    args = {"delta": 0.05, **kwargs}
    with pytest.raises(ValueError, match=message):
        selection.ttts(gaussians([0.6, 0.7]), rng=np.random.default_rng(0), **args)


def test_bad_arguments_of_the_vectorized_runs():
    with pytest.raises(ValueError, match="at least 2 models"):
        selection.fixed_confidence_runs(gaussians([0.6]), [0.1], 10, algorithm="ttts", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="algorithm must be one of ttts, non_adaptive, batch_thompson"):
        selection.fixed_confidence_runs(gaussians([0.6, 0.7]), [0.1], 10, algorithm="ts", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        selection.fixed_confidence_runs(gaussians([0.6, 0.7]), [0.1], 10, algorithm="batch_thompson", batch=0,
                                        rng=np.random.default_rng(0))


@pytest.mark.parametrize("delta, message", [
    (True, "delta must be a number (or, for several levels, a sequence of numbers), got True"),
    ("0.05", "delta must be a number (or, for several levels, a sequence of numbers), got '0.05'"),
    (None, "delta must be a number (or, for several levels, a sequence of numbers), got None"),
    ([0.05, "x"], "delta must be a number (or, for several levels, a sequence of numbers), got [0.05, 'x']"),
    (float("nan"), "delta must lie in (0, 0.5)"),
])
def test_delta_must_be_a_number(delta, message):
    with pytest.raises(ValueError) as info:
        selection.ttts(gaussians([0.6, 0.7]), delta, rng=np.random.default_rng(4101))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("arm, message", [
    (lambda c, r: np.zeros((c, 2)), "arm 1: evaluate(count, rng) returned shape (3, 2) where (3,) was asked for"),
    (lambda c, r: 0.5, "arm 1: evaluate(count, rng) returned shape () where (3,) was asked for"),
    (lambda c, r: ["a"] * c, "arm 1: evaluate(count, rng) must return numbers, got list"),
    (42, "arm 1 must be a distribution (with .sample) or a callable evaluate(count, rng), got 42"),
])
def test_a_wrong_arm_is_named(arm, message):
    arms = [lambda c, r: r.normal(0.5, 0.1, c), arm]
    with pytest.raises((ValueError, TypeError)) as info:
        selection.ttts(arms, 0.05, rng=np.random.default_rng(4102))
    assert str(info.value).startswith(message)


class _BadShape:
    def sample(self, size, *, rng):
        return np.zeros(np.atleast_1d(size).prod() + 1)


def test_a_wrong_distribution_arm_is_named_in_batched_runs():
    arms = gaussians([0.6, 0.7]) + [_BadShape()]
    # the first draw asks arm 2 for its 5 runs x 3 initial evaluations at once
    with pytest.raises(ValueError, match=r"^arm 2: sample\(size, rng=rng\) returned shape \(16,\) where \(15,\) "
                                         r"was asked for$"):
        selection.fixed_confidence_runs(arms, [0.1], 5, algorithm="ttts", rng=np.random.default_rng(4103))


@pytest.mark.parametrize("rng", [None, 7, np.random.RandomState(7)])
def test_rng_must_be_a_generator(rng):
    for call in (lambda: selection.ttts(gaussians([0.6, 0.7]), 0.05, rng=rng),
                 lambda: selection.fixed_confidence_runs(gaussians([0.6, 0.7]), [0.1], 3, algorithm="ttts", rng=rng)):
        with pytest.raises(ValueError, match=r"rng= must be a numpy.random.Generator, e.g. "
                                             r"np.random.default_rng\(0\), got "):
            call()


def test_common_numbers_streams_give_the_jth_score_whatever_the_order():
    from simstudy.stats.selection.fixed_confidence_runs import _positions, _Streams
    arms = tdsa_arms()[:3]
    late, early = _Streams(arms, 4, np.random.default_rng(5)), _Streams(arms, 4, np.random.default_rng(5))
    rows, which = np.arange(4)[:, None], np.array([[2, 0]] * 4)
    far = late.take(rows, which, np.array([[300, 1]] * 4))  # reads past the first block before the start
    near = early.take(rows, which, np.array([[1, 1]] * 4))
    assert near[0, 1] == far[0, 1] and (early.take(rows, which, np.array([[300, 1]] * 4)) == far).all()
    # a batch repeating a model reads that model's next positions in order
    np.testing.assert_array_equal(_positions(np.array([[3, 3, 7]]), np.array([[1, 1, 2, 1]])), [[3, 4, 7, 5]])


def test_common_numbers_make_runs_depend_only_on_the_streams(rng):
    # the non-adaptive baseline proposes without randomness: on common numbers its runs are the same whatever
    # drives the algorithm, and a distinct batch of every model is the same step
    arms, seed = tdsa_arms(), int(rng.integers(2**31))
    runs = [selection.fixed_confidence_runs(arms, [0.2], 20, algorithm=algorithm, rng=np.random.default_rng(s),
                                            streams=np.random.default_rng(seed))
            for algorithm, s in (("non_adaptive", 1), ("non_adaptive", 2),
                                 (partial(selection.propose_thompson, batch=8, distinct=True), 3))]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].evaluations, other.evaluations)
        np.testing.assert_array_equal(runs[0].per_arm, other.per_arm)
    fresh = selection.fixed_confidence_runs(arms, [0.2], 20, algorithm="non_adaptive",
                                            rng=np.random.default_rng(seed))
    assert not np.array_equal(fresh.evaluations, runs[0].evaluations)


def test_common_numbers_do_not_change_the_distribution(rng):
    arms = gaussians([0.66, 0.69, 0.70, 0.71])
    a = selection.fixed_confidence_runs(arms, [0.2], 200, algorithm="ttts", rng=rng).evaluations[0]
    b = selection.fixed_confidence_runs(arms, [0.2], 200, algorithm="ttts", rng=rng, streams=rng).evaluations[0]
    assert abs(a.mean() - b.mean()) < 4 * np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_distinct_batches_are_drawn_from_pi_without_replacement(rng):
    from simstudy.stats.posterior import prob_best
    loc, scale, df = (np.broadcast_to(np.asarray(x, dtype=float), (3000, 4))
                      for x in ([0.70, 0.69, 0.68, 0.60], [0.01, 0.01, 0.02, 0.01], [3.0, 5.0, 4.0, 3.0]))
    which = selection.propose_thompson(loc, scale, df, rng=rng, batch=3, distinct=True)
    assert which.shape == (3000, 3) and (np.sort(which, axis=1)[:, 1:] != np.sort(which, axis=1)[:, :-1]).all()
    pi = prob_best(loc[0], scale[0], df[0])
    # the first model is drawn from pi; the second from pi renormalised without the first
    assert stats.chisquare(np.bincount(which[:, 0], minlength=4), 3000 * pi).pvalue > 1e-3
    second = np.array([sum(pi[i] * pi[j] / (1 - pi[i]) for i in range(4) if i != j) for j in range(4)])
    assert stats.chisquare(np.bincount(which[:, 1], minlength=4), 3000 * second).pvalue > 1e-3
    every = selection.propose_thompson(loc[:2], scale[:2], df[:2], rng=rng, batch=6, distinct=True)
    np.testing.assert_array_equal(every, [[0, 1, 2, 3]] * 2)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_monte_carlo_stopping_rule(rng):
    from simstudy.stats.selection.fixed_confidence_runs import _mc_leader
    loc, scale, df = np.array([[0.5, 0.9, 0.1]]), np.full((1, 3), 1e-6), np.full((1, 3), 3.0)
    leader, pi = _mc_leader(loc, scale, df, 2500, rng)  # beyond one slice of draws
    assert leader[0] == 1 and pi[0] == 1.0
    # many draws: the quadrature's stopping in distribution; few draws: a noisy pi stops earlier
    arms, R = gaussians([0.66, 0.69, 0.70, 0.71]), 200
    exact = selection.fixed_confidence_runs(arms, [0.2], R, algorithm="ttts", rng=rng).evaluations[0]
    mc = selection.fixed_confidence_runs(arms, [0.2], R, algorithm="ttts", rng=rng, mc_draws=2000).evaluations[0]
    noisy = selection.fixed_confidence_runs(arms, [0.2], R, algorithm="ttts", rng=rng, mc_draws=5).evaluations[0]
    se = np.sqrt(exact.var(ddof=1) / R + mc.var(ddof=1) / R)
    assert abs(exact.mean() - mc.mean()) < 4 * se and noisy.mean() < exact.mean() - 4 * se
