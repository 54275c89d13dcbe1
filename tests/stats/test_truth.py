from itertools import product

import numpy as np
import pytest
from scipy import integrate, stats

from simstudy.distributions import Bag, TruncatedNormal
from simstudy.stats import truth


def brute_force_order_stats(values, B):
    """E[X_(i)] by enumerating all len(values)^B equally likely samples."""
    samples = np.sort(np.array(list(product(values, repeat=B))), axis=1)
    return samples.mean(axis=0)


def test_bag_expected_max_by_enumeration():
    values = [0.1, 0.5, 0.5, 0.9, 0.2]
    bag = Bag(values)
    for n in (1, 2, 3, 4):
        maxima = np.array(list(product(values, repeat=n))).max(axis=1)
        assert truth.expected_max(bag, n)[0] == pytest.approx(maxima.mean(), rel=1e-14)


def test_bag_order_statistics_by_enumeration():
    values = [0.1, 0.5, 0.5, 0.9, 0.2]
    for B in (1, 3, 5):
        np.testing.assert_allclose(truth.order_statistic_means(Bag(values), B),
                                   brute_force_order_stats(values, B), rtol=1e-13)


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_estimator_mean_by_enumeration(method):
    from simstudy.stats.estimators import expected_max

    values = [0.1, 0.5, 0.5, 0.9]
    B = 4
    samples = np.array(list(product(values, repeat=B)))
    mc_exact = expected_max(samples, method).mean(axis=0)  # average over all 4^4 equally likely samples
    np.testing.assert_allclose(truth.estimator_mean(Bag(values), B, method), mc_exact, rtol=1e-13)


def test_u_is_exactly_unbiased_on_bag_and_continuous():
    bag = Bag(np.random.default_rng(0).normal(size=500))
    np.testing.assert_allclose(truth.estimator_mean(bag, 40, "u"), truth.expected_max(bag, np.arange(1, 41)),
                               rtol=1e-12)
    tn = TruncatedNormal(0.6, 0.07)
    np.testing.assert_allclose(truth.estimator_mean(tn, 12, "u"), truth.expected_max(tn, np.arange(1, 13)),
                               rtol=1e-9)


def test_continuous_against_closed_forms():
    tn = TruncatedNormal(0.6, 0.07, 0.0, 1.0)
    ref = stats.truncnorm(-0.6 / 0.07, 0.4 / 0.07, loc=0.6, scale=0.07)
    assert truth.expected_max(tn, 1)[0] == pytest.approx(ref.mean(), rel=1e-11)
    osm = truth.order_statistic_means(tn, 9)
    assert osm.sum() == pytest.approx(9 * ref.mean(), rel=1e-10)  # sum of order statistics = sum of draws
    assert truth.expected_max(tn, 9)[0] == pytest.approx(osm[-1], rel=1e-10)
    # E[max of 2] for a normal: mu + sd / sqrt(pi); the truncation at +-5.7 sd changes it by < 1e-7.
    assert truth.expected_max(tn, 2)[0] == pytest.approx(0.6 + 0.07 / np.sqrt(np.pi), abs=1e-7)


def test_v_and_w_biases_are_negative_and_ordered():
    tn = TruncatedNormal()
    th = truth.expected_max(tn, np.arange(1, 21))
    bias_v = truth.estimator_mean(tn, 20, "v") - th
    bias_w = truth.estimator_mean(tn, 20, "w") - th
    assert abs(bias_v[0]) < 1e-12 and abs(bias_w[0]) < 1e-12
    assert np.all(bias_w[1:] < bias_v[1:]) and np.all(bias_v[1:] < 0)


def test_bad_n():
    with pytest.raises(ValueError, match="positive integer"):
        truth.expected_max(Bag([0.1, 0.2]), 0)


@pytest.mark.parametrize("B", [60, 150])  # 60: the pmf recurrence; 150: the logarithmic path
def test_bag_order_statistics_against_scipy_binomial(B):
    bag = Bag(np.random.default_rng(3).uniform(size=300))
    v, F = bag.atoms, bag.cum_prob
    i = np.arange(1, B + 1)[:, None]
    reference = v[0] + stats.binom.cdf(i - 1, B, F[None, :-1]) @ np.diff(v)
    np.testing.assert_allclose(truth.order_statistic_means(bag, B), reference, rtol=1e-11)


def test_expected_max_for_arbitrary_budgets_matches_consecutive():
    bag = Bag(np.random.default_rng(4).uniform(size=200))
    all_n = truth.expected_max(bag, np.arange(1, 41))
    np.testing.assert_allclose(truth.expected_max(bag, [3, 17, 40]), all_n[[2, 16, 39]], rtol=1e-12)


class _Uniform:
    """Uniform(0, 1) through the distribution interface."""

    support = (0.0, 1.0)
    is_discrete = False

    def cdf(self, x):
        return np.clip(x, 0.0, 1.0)

    def ppf(self, q):
        return np.asarray(q, dtype=float)


def test_true_tuning_curves_of_the_uniform():
    k = np.array([0.25, 1.0, 2.5, 10.0, 1000.0])
    np.testing.assert_allclose(truth.quantile_tuning_curve(_Uniform(), k), 0.5 ** (1 / k), rtol=1e-14)
    np.testing.assert_allclose(truth.mean_tuning_curve(_Uniform(), k), k / (k + 1), rtol=1e-12)
    np.testing.assert_allclose(truth.quantile_tuning_curve(_Uniform(), k, 0.9), 0.9 ** (1 / k), rtol=1e-14)


def test_mean_tuning_curve_matches_expected_max_at_integers():
    bag = Bag(np.random.default_rng(5).uniform(size=50))
    np.testing.assert_allclose(truth.mean_tuning_curve(bag, [1.0, 7.0]), truth.expected_max(bag, [1, 7]), rtol=1e-12)
    tn = TruncatedNormal()
    np.testing.assert_allclose(truth.mean_tuning_curve(tn, [3.0]), truth.expected_max(tn, [3]), rtol=1e-10)


def _with_atoms():
    from simstudy.distributions import KDEWithAtoms, ReflectedKDE

    part = ReflectedKDE([0.55, 0.6, 0.7, 0.72, 0.8], 0.03)
    return KDEWithAtoms(part, [0.0, 0.354, 0.75], [0.15, 0.1, 0.05])


def test_truths_with_atoms_match_simulation():
    dist = _with_atoms()
    n = np.array([1, 2, 5, 20])
    exact = truth.expected_max(dist, n)
    x = dist.sample((100_000, 20), rng=np.random.default_rng(1710))
    for k, value in zip(n, exact):
        best = x[:, :k].max(axis=1)
        assert abs(best.mean() - value) < 4 * best.std(ddof=1) / np.sqrt(best.size), k
    np.testing.assert_allclose(truth.mean_tuning_curve(dist, n.astype(float)), exact, atol=1e-10)
    order = truth.order_statistic_means(dist, 5)
    sims = np.sort(x[:, :5], axis=1)
    mcse = sims.std(axis=0, ddof=1) / np.sqrt(sims.shape[0])
    assert np.all(np.abs(sims.mean(axis=0) - order) < 4 * mcse)
    assert order[-1] == pytest.approx(exact[2], abs=1e-10)
    # E[X] by hand: the atoms' shares times their values, plus 0.7 times the KDE's mean.
    kde_mean = 1.0 - integrate.quad(lambda t: dist.continuous.cdf(t), 0, 1, epsabs=1e-13, limit=200)[0]
    assert exact[0] == pytest.approx(0.354 * 0.1 + 0.75 * 0.05 + 0.7 * kde_mean, abs=1e-10)


def test_quantile_tuning_curve_lands_on_an_atom():
    dist = _with_atoms()
    # F(0.75-) < 0.5^(1/k) <= F(0.75) for some k: the median of the best of k is exactly the atom there.
    lo, hi = float(dist.cdf_left(0.75)), float(dist.cdf(0.75))
    k = np.log(0.5) / np.log((lo + hi) / 2)
    assert truth.quantile_tuning_curve(dist, [k])[0] == 0.75


@pytest.mark.parametrize("q", [0.2, 0.5, 0.8])
def test_bag_tuning_curves_of_the_max_and_min_by_enumeration(q):
    """Both tuning curves, maximizing and minimizing, against every one of the 5^k equally likely searches."""
    values = [0.1, 0.5, 0.5, 0.9, 0.2]
    bag = Bag(values)
    for k in (1, 2, 3, 4):
        draws = np.array(list(product(values, repeat=k)))
        for minimize, best in ((False, draws.max(axis=1)), (True, draws.min(axis=1))):
            assert truth.mean_tuning_curve(bag, [k], minimize=minimize)[0] == pytest.approx(best.mean(), rel=1e-13)
            # The q-quantile of the best: the smallest value v with P(best <= v) >= q (Lourie et al.'s inf).
            cdf_best = np.array([np.mean(best <= v) for v in bag.atoms])
            expected = bag.atoms[np.argmax(cdf_best >= q - 1e-12)]
            assert truth.quantile_tuning_curve(bag, [k], q, minimize=minimize)[0] == expected, (k, minimize)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_minimizing_curves_of_a_continuous_law_mirror_the_maximizing_ones():
    """min X = -max(-X): the q-quantile of the min of X is minus the (1-q)-quantile of the max of -X."""
    x, mirrored = TruncatedNormal(0.6, 0.07, 0.0, 1.0), TruncatedNormal(-0.6, 0.07, -1.0, 0.0)
    k = np.array([0.5, 1.0, 3.0, 40.0, 1e4])
    np.testing.assert_allclose(truth.mean_tuning_curve(x, k, minimize=True),
                               -truth.mean_tuning_curve(mirrored, k), atol=1e-10)
    np.testing.assert_allclose(truth.quantile_tuning_curve(x, k, 0.3, minimize=True),
                               -truth.quantile_tuning_curve(mirrored, k, 0.7), atol=1e-9)
    # The uniform's minimum of k has CDF 1 - (1 - y)^k: its q-quantile and mean in closed form.
    np.testing.assert_allclose(truth.quantile_tuning_curve(_Uniform(), k, 0.3, minimize=True),
                               -np.expm1(np.log(0.7) / k), rtol=1e-13)
    np.testing.assert_allclose(truth.mean_tuning_curve(_Uniform(), k, minimize=True), 1 / (k + 1), rtol=1e-10)


def test_expected_max_and_curves_use_a_distributions_closed_forms():
    from simstudy.distributions import NoisyQuadratic

    law = NoisyQuadratic(0.6, 0.9, 3, 0.01)  # unbounded support: quadrature of the quantile function otherwise
    n = np.arange(1, 31)
    np.testing.assert_array_equal(truth.expected_max(law, n), law.mean_tuning_curve(n.astype(float)))
    np.testing.assert_array_equal(truth.mean_tuning_curve(law, [2.0, 5.0], minimize=True),
                                  law.mean_tuning_curve([2.0, 5.0], minimize=True))
    np.testing.assert_array_equal(truth.quantile_tuning_curve(law, [2.0, 5.0], q=0.3, minimize=True),
                                  law.quantile_tuning_curve([2.0, 5.0], 0.3, minimize=True))


def test_mean_tuning_curve_on_an_unbounded_support():
    """E[max of 2 normals] = mu + sigma / sqrt(pi), and the min mirrors it (quadrature of the quantile function)."""
    from simstudy.distributions import ScipyDistribution

    normal = ScipyDistribution("norm", {"loc": 0.6, "scale": 0.07})
    assert normal.support == (-np.inf, np.inf)
    assert truth.mean_tuning_curve(normal, [2.0])[0] == pytest.approx(0.6 + 0.07 / np.sqrt(np.pi), abs=1e-10)
    assert truth.mean_tuning_curve(normal, [2.0], minimize=True)[0] == pytest.approx(0.6 - 0.07 / np.sqrt(np.pi),
                                                                                    abs=1e-10)


def test_windowed_tail_sums_leave_out_only_what_rounding_hides(monkeypatch):
    # Large populations (atoms x budgets > 2**24) drop the atoms whose p^n < 2**-60; the result must equal the
    # full running-product sum to within 2**-60 of the range, and the window must actually drop atoms.
    from simstudy.stats import truth as T

    rng = np.random.default_rng(2615)
    p = np.sort(rng.random(20_000))
    gaps = rng.random(20_000) / 20_000
    n = np.arange(1, 601)
    monkeypatch.setattr(T, "_WINDOW_FROM", 10**18)
    full = T._tail_sums(p, n, gaps)
    monkeypatch.setattr(T, "_WINDOW_FROM", 0)
    windowed = T._tail_sums(p, n, gaps)
    assert np.all(np.abs(windowed - full) <= 2.0**-60 * gaps.sum() + 4 * np.finfo(float).eps * np.abs(full))
    assert np.searchsorted(p, 2.0 ** (-60.0 / 600)) > 10_000  # at n = 600 most atoms are out of the window


@pytest.mark.parametrize("n, j", [(4, 1), (4, 2), (4, 3), (15, 7), (22, 5), (33, 4)])
def test_the_quantile_of_the_minimum_takes_the_atom_its_probability_falls_on(n, j):
    """Issue 34: one convention, the left-continuous inverse (opda's). n equally likely scores and q = j / n =
    P(X <= x_j) exactly: the q-quantile of the minimum of one draw is x_j (not the next score, as the mirror of
    the maximum of -x, or a q rounded by the logs, would give), as it is for the maximum."""
    values = np.arange(1, n + 1) / 10
    bag, q = Bag(values), j / n
    assert bag.cum_prob[j - 1] == q  # the probability falls exactly on the atom's edge
    ks = np.arange(1, 9)  # an array of budgets: numpy's vector loops round the logs differently from scalars
    assert truth.quantile_tuning_curve(bag, ks, q, minimize=True)[0] == values[j - 1]
    assert truth.quantile_tuning_curve(bag, ks, q)[0] == values[j - 1]


def test_the_quantile_tuning_curve_of_the_minimum_is_opdas():
    """Four equally likely scores: the median of the minimum of one is 0.2 (issue 34's case), and at every
    budget and quantile the curve is opda's."""
    opda = pytest.importorskip("opda.nonparametric")
    values = np.array([0.1, 0.2, 0.3, 0.4])
    bag, ks = Bag(values), np.arange(1, 9)
    assert truth.quantile_tuning_curve(bag, [1], 0.5, minimize=True)[0] == 0.2
    for q in (0.1, 0.25, 0.3, 0.5, 0.6, 0.75, 0.9):
        np.testing.assert_array_equal(truth.quantile_tuning_curve(bag, ks, q, minimize=True),
                                      opda.EmpiricalDistribution(values).quantile_tuning_curve(ks, q, minimize=True))


def _max_of_two_kernels(x: np.ndarray, h: float) -> float:
    """E[max(X1, X2)] for X1, X2 i.i.d. from the Gaussian mixture of kernels N(x_i, h^2) (no reflection): for
    independent normals, E[max] = mu1 Phi(d / s) + mu2 Phi(-d / s) + s phi(d / s), d = mu1 - mu2, s = h sqrt 2."""
    s = h * np.sqrt(2.0)
    d = (x[:, None] - x[None, :]) / s
    pair = x[:, None] * stats.norm.cdf(d) + x[None, :] * stats.norm.cdf(-d) + s * stats.norm.pdf(d)
    return float(pair.mean())


@pytest.mark.parametrize(("width", "high"), [(1e-4, 1.0), (1e-6, 1.0), (0.4, 1e4), (0.4, 1e301)])
def test_a_narrow_mass_in_a_wide_support_is_integrated_not_missed(rng, width, high):
    # Scores within 1e-4 of 0.5 on [0, 1], or accuracies under high=1e4 (an audit's high=1e301): the quadrature's
    # first rule over [low, high] missed the mass and the truth came out as 0.5 or 0, with no error estimate.
    from simstudy.distributions import ReflectedKDE

    x = 0.5 + width * rng.uniform(size=30)
    kde = ReflectedKDE(x, bandwidth=width / 8, low=0.0, high=high)  # kernels far inside: reflections add nothing
    exact = np.array([x.mean(), _max_of_two_kernels(x, kde.bandwidth)])
    np.testing.assert_allclose(truth.expected_max(kde, [1, 2]), exact, rtol=0, atol=1e-6 * width)
    means = truth.order_statistic_means(kde, 2)  # E[X_(1)] + E[X_(2)] = 2 E[X], E[X_(2)] = E[max of 2]
    np.testing.assert_allclose(means, [2 * exact[0] - exact[1], exact[1]], rtol=0, atol=1e-6 * width)
    worst = truth.mean_tuning_curve(kde, [1, 2], minimize=True)  # E[min of 2] = 2 E[X] - E[max of 2]
    np.testing.assert_allclose(worst, [exact[0], 2 * exact[0] - exact[1]], rtol=0, atol=1e-6 * width)
