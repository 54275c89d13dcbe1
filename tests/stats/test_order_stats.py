"""Exact moments of order statistics of a finite population, against enumeration of every sample."""

import itertools

import numpy as np
import pytest

from simstudy.distributions import Bag
from simstudy.stats import estimators, order_stats, truth


def _enumerated(v, p, B):
    """E[X_(i)] and Cov(X_(i), X_(j)) by summing over all K^B ordered samples (independent of the module)."""
    mean, second = np.zeros(B), np.zeros((B, B))
    for draw in itertools.product(range(v.size), repeat=B):
        x = np.sort(v[list(draw)])
        w = np.prod(p[list(draw)])
        mean += w * x
        second += w * np.outer(x, x)
    return mean, second - np.outer(mean, mean)


def _population(rng, K):
    v = np.sort(rng.choice(np.arange(40), K, replace=False)) / 7.0
    p = rng.dirichlet(np.ones(K))
    F = np.cumsum(p)
    F[-1] = 1.0
    return v, p, F


@pytest.mark.parametrize("block", [None, 3 * 49])  # the default blocks, and blocks of a few atoms
def test_moments_equal_the_enumeration_of_every_sample(monkeypatch, block):
    if block is not None:
        monkeypatch.setattr(order_stats, "_BLOCK_ELEMENTS", block)
    rng = np.random.default_rng(2611)
    for K, B in [(1, 3), (2, 1), (2, 4), (3, 5), (5, 4), (6, 3)]:
        v, p, F = _population(rng, K)
        m = order_stats.order_statistic_moments(v, F, B)
        mean, cov = _enumerated(v, p, B)
        np.testing.assert_allclose(m.mean, mean, rtol=0, atol=1e-12)
        np.testing.assert_allclose(m.cov, cov, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(m.cov, m.cov.T)


def test_means_agree_with_the_truth_module_on_a_large_bag():
    rng = np.random.default_rng(2612)
    bag = Bag(np.round(rng.normal(0.7, 0.05, size=3000), 3))  # ties: fewer atoms than values
    m = order_stats.order_statistic_moments(bag.atoms, bag.cum_prob, 24)
    np.testing.assert_allclose(m.mean, truth.order_statistic_means(bag, 24), rtol=0, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(m.cov) > -1e-14)  # a covariance matrix


def test_estimator_moments_u_is_unbiased_and_sds_match_a_simulation():
    rng = np.random.default_rng(2613)
    bag = Bag(np.round(rng.beta(5, 2, size=400), 2))
    B, n = 12, np.array([1, 4, 12])
    out = order_stats.estimator_moments(bag.atoms, bag.cum_prob, B, n)
    np.testing.assert_allclose(out["u"][0], truth.expected_max(bag, n), rtol=0, atol=1e-12)
    # 80,000 simulated samples: each SD within 4 of its own Monte Carlo standard errors (about 0.25% of it)
    x = np.sort(bag.sample((80_000, B), rng=np.random.default_rng(2614)), axis=1)
    for method in ("u", "v", "w"):
        est = x @ estimators.weights(B, method, n).T
        sd = est.std(axis=0, ddof=1)
        kurt = ((est - est.mean(axis=0)) ** 4).mean(axis=0) / sd**4
        se = sd * np.sqrt((kurt - 1) / (4 * est.shape[0]))  # the delta method's SE of an SD
        assert np.all(np.abs(out[method][1] - sd) < 4 * se), method
        se_mean = sd / np.sqrt(est.shape[0])
        assert np.all(np.abs(out[method][0] - est.mean(axis=0)) < 4 * se_mean), method


@pytest.mark.parametrize(
    ("atoms", "cum_prob", "B", "message"),
    [
        ([0.0, 0.0], [0.5, 1.0], 2, "strictly increasing"),
        ([0.0, np.inf], [0.5, 1.0], 2, "finite"),
        ([0.0, 1.0], [0.5, 0.9], 2, "exactly 1"),
        ([0.0, 1.0], [0.5, 1.0], 0, "B must be an integer >= 1"),
        ([[0.0, 1.0]], [[0.5, 1.0]], 2, "1-d"),
    ],
)
def test_bad_populations_are_refused_naming_the_problem(atoms, cum_prob, B, message):
    with pytest.raises(ValueError, match=message):
        order_stats.order_statistic_moments(atoms, cum_prob, B)


@pytest.mark.parametrize(
    ("atoms", "probs"),
    [
        ([-3e4, -2e4, 0.5, 0.9], [0.01, 0.01, 0.5, 0.48]),  # diverged losses, mirrored: a huge gap at the bottom
        ([0.1, 0.5, 0.9, 3e4], [0.3, 0.4, 0.28, 0.02]),  # and at the top
    ],
)
def test_a_huge_gap_keeps_every_digit_of_the_best_of_n(atoms, probs):
    # The variance of the best of B is a small difference of terms of the gap's size squared (1e9 here): summed
    # naively, it lost every digit at B = 24 on HPOLib's losses. Against exact rational arithmetic.
    from fractions import Fraction

    B = 5
    v, p = [Fraction(x) for x in atoms], [Fraction(x) for x in probs]
    p = [x / sum(p) for x in p]
    mean, second = Fraction(0), Fraction(0)
    for draw in itertools.product(range(4), repeat=B):
        w = np.prod([p[k] for k in draw])
        best = max(v[k] for k in draw)
        mean += w * best
        second += w * best * best
    exact_var = float(second - mean * mean)
    F = np.cumsum(probs)
    F[-1] = 1.0
    m = order_stats.order_statistic_moments(np.array(atoms), F, B)
    assert m.cov[-1, -1] == pytest.approx(exact_var, rel=1e-12)
    assert m.mean[-1] == pytest.approx(float(mean), rel=1e-12)
