"""The t posterior of each model's mean and pi = P(model is best) (Moss et al. 2019, §4.2)."""

import numpy as np
import pytest
from scipy import special

from simstudy.stats import posterior


def _pi_reference(loc, scale, df, m):
    """pi_m by composite Gauss-Legendre: 64 nodes on each panel between the points where another arm's
    posterior CDF passes 0.1%, 2%, 16%, 50%, 84%, 98% and 99.9%, so every panel's integrand is smooth."""
    others = [j for j in range(len(loc)) if j != m]
    z = special.stdtrit(df[others][:, None], [0.001, 0.02, 0.16, 0.5, 0.84, 0.98, 0.999])
    cuts = special.stdtr(df[m], (loc[others][:, None] + scale[others][:, None] * z - loc[m]) / scale[m])
    edges = np.unique(np.r_[0.0, np.linspace(0, 1, 65), cuts.ravel(), 1.0])
    nodes, weights = np.polynomial.legendre.leggauss(64)
    a, b = edges[:-1, None], edges[1:, None]
    u = (a + (b - a) * (nodes + 1) / 2).ravel()
    w = ((b - a) / 2 * weights).ravel()
    x = loc[m] + scale[m] * special.stdtrit(df[m], u)
    return np.prod([special.stdtr(df[j], (x - loc[j]) / scale[j]) for j in others], axis=0) @ w


def test_prob_best_by_quadrature_matches_monte_carlo():
    loc = np.array([0.60, 0.62, 0.63, 0.64])
    scale = np.array([0.01, 0.02, 0.01, 0.015])
    df = np.array([1.0, 3.0, 10.0, 2.0])  # df = 1: a Cauchy posterior after three evaluations
    pi = posterior.prob_best(loc, scale, df)
    draws = 1_000_000
    mc = posterior.prob_best_mc(loc, scale, df, draws=draws, rng=np.random.default_rng(6))
    assert pi.sum() == pytest.approx(1.0)
    np.testing.assert_array_less(np.abs(pi - mc), 4 * np.sqrt(mc * (1 - mc) / draws) + 1e-6)


def test_prob_best_matches_adaptive_quadrature_on_ttts_like_states(rng):
    # States like those TTTS passes through: 8 arms, 3-60 evaluations, spreads differing tenfold.
    worst = 0.0
    for _ in range(60):
        counts = rng.integers(3, 60, 8).astype(float)
        loc = 0.7 + 0.01 * rng.standard_normal(8)
        scale = 0.01 * np.exp(rng.normal(0, 1, 8)) / np.sqrt(counts)
        m = int(np.argmax(loc))
        got = posterior.prob_leader(loc, scale, counts - 2, m)
        worst = max(worst, abs(got - _pi_reference(loc, scale, counts - 2, m)))
    assert worst < 1e-4  # documented: 6e-5 over 400 states, below the MC error of 800,000 draws (2.4e-4)


def test_prob_leader_is_prob_best_of_the_leader_and_only_the_leader_can_pass_one_half(rng):
    loc = rng.normal(0.7, 0.01, (50, 6))
    scale = rng.uniform(0.002, 0.02, (50, 6))
    df = rng.integers(1, 40, (50, 6)).astype(float)
    pi = posterior.prob_best(loc, scale, df)
    leader = np.argmax(loc, axis=1)
    unnormalised = posterior.prob_leader(loc, scale, df, leader)
    np.testing.assert_allclose(unnormalised, pi[np.arange(50), leader], atol=2e-4)
    others = np.ones_like(pi, dtype=bool)
    others[np.arange(50), leader] = False
    assert pi[others].max() < 0.5 + 1e-6


def test_prob_leader_upper_bounds_pi_within_one_panel():
    # 60 TTTS-like states (seed 31), from the leader's pi near 1/8 to near 1: the bound is never below the
    # reference pi (it is exact, not approximate) and never more than 1/panels above it.
    rng = np.random.default_rng(31)
    counts = rng.integers(3, 80, (60, 8)).astype(float)
    loc = 0.7 + rng.uniform(0.001, 0.03, (60, 1)) * rng.standard_normal((60, 8))
    scale = 0.01 * np.exp(rng.normal(0, 1, (60, 8))) / np.sqrt(counts)
    leader = np.argmax(loc, axis=1)
    reference = np.array([_pi_reference(loc[i], scale[i], counts[i] - 2, leader[i]) for i in range(60)])
    assert reference.min() < 0.3 and reference.max() > 0.99  # the states span the stopping bars
    for panels in (8, 16, 64):
        upper = posterior.prob_leader_upper(loc, scale, counts - 2, leader, panels=panels)
        assert np.all(upper >= reference - 1e-12) and np.all(upper <= reference + 1 / panels + 1e-12)
    # the bound's slack is what the screen in fixed_confidence_runs relies on: far above the quadrature's error
    assert np.abs(posterior.prob_leader(loc, scale, counts - 2, leader) - reference).max() < 1e-4


def test_posterior_matches_the_t_formula():
    x = np.array([0.61, 0.64, 0.60, 0.66, 0.62])
    loc, scale, df = posterior.posterior(x.sum(), (x**2).sum(), x.size)
    S = ((x - x.mean()) ** 2).sum()
    assert loc == pytest.approx(x.mean()) and df == 3
    assert scale == pytest.approx(np.sqrt(S / (x.size * (x.size - 2))))


def test_posterior_handles_identical_evaluations():
    sums, squares, counts = np.array([1.5, 1.8]), np.array([0.75, 1.08]), np.array([3.0, 3.0])
    loc, scale, df = posterior.posterior(sums, squares, counts)  # both arms: three identical scores
    assert np.all(np.isfinite(scale)) and np.all(scale > 0) and np.all(df == 1)
    pi = posterior.prob_best(loc, scale, df)
    assert pi[1] == pytest.approx(1.0)
    # Two arms with the same constant score: a coin toss, not a division by zero.
    pi = posterior.prob_best(np.array([0.5, 0.5]), np.array([5e-13, 5e-13]), np.array([1.0, 1.0]))
    assert pi == pytest.approx([0.5, 0.5])
