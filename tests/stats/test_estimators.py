from fractions import Fraction
from itertools import product
from math import comb

import numpy as np
import pytest

from simstudy.stats import estimators
from simstudy.stats.estimators import expected_max, expected_max_std, weights


def exact_weight(method: str, B: int, n: int, i: int) -> Fraction:
    """w_{n,i} from the paper's counting definitions (Dodge et al. 2021, Eqs. 2, 3, 5), as exact rationals."""
    if method == "v":
        return Fraction(i**n - (i - 1) ** n, B**n)
    if method == "u":
        return Fraction(comb(i, n) - comb(i - 1, n), comb(B, n))
    # multisets: ((k n)) = C(k + n - 1, n)
    return Fraction(comb(i + n - 1, n) - comb(i + n - 2, n), comb(B + n - 1, n))


@pytest.mark.parametrize("method", ["u", "v", "w"])
@pytest.mark.parametrize("B", [1, 2, 7, 30, 60])
def test_weights_equal_exact_rationals(method, B):
    w = weights(B, method)
    exact = np.array([[float(exact_weight(method, B, n, i)) for i in range(1, B + 1)] for n in range(1, B + 1)])
    np.testing.assert_allclose(w, exact, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_weights_finite_and_accurate_at_large_B(method):
    B, n = 5000, 2500
    w = weights(B, method, n=[n])[0]
    assert np.all(np.isfinite(w)) and np.all(w >= 0)
    assert abs(w.sum() - 1) < 1e-12
    # Spot-check against exact rationals where float binomials (comb -> float) would overflow.
    for i in (n, 4000, B):
        exact = float(exact_weight(method, B, n, i))
        assert w[i - 1] == pytest.approx(exact, rel=1e-9, abs=1e-300)


def test_weights_past_float_comb_overflow():
    # float(comb(1100, 550)) overflows: the peers' float formulas give 0 or NaN here.
    with pytest.raises(OverflowError):
        float(comb(1100, 550))
    for method in "uvw":
        w = weights(1100, method, n=[550, 1100])
        assert np.all(np.isfinite(w)) and np.allclose(w.sum(axis=1), 1.0, atol=1e-12)
        assert w[1, -1] > 0


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_n1_is_the_sample_mean(method, rng):
    x = rng.uniform(size=(5, 17))
    np.testing.assert_allclose(expected_max(x, method, n=1)[:, 0], x.mean(axis=1), rtol=1e-13)


def test_u_at_n_equal_B_is_the_sample_max(rng):
    x = rng.uniform(size=(4, 9))
    np.testing.assert_allclose(expected_max(x, "u", n=9)[:, 0], x.max(axis=1), rtol=1e-13)


def test_v_equals_dodge_2019_ecdf_form_with_ties(rng):
    # Eq. 8 of Dodge et al. (2019): sum over distinct v of v * (F(v)^n - F(v-)^n) with the empirical CDF.
    x = rng.choice([0.1, 0.3, 0.3, 0.5, 0.8, 0.8, 0.8], size=25)
    values = np.unique(x)
    F = np.array([(x <= v).mean() for v in values])
    F_left = np.array([(x < v).mean() for v in values])
    for n in (1, 2, 5, 25):
        dodge = np.sum(values * (F**n - F_left**n))
        assert expected_max(x, "v", n=n)[0] == pytest.approx(dodge, rel=1e-13)


def test_v_equals_brute_force_enumeration_of_strings():
    x = np.array([0.2, 0.5, 0.5, 0.9])
    for n in (1, 2, 3):
        maxima = [max(c) for c in product(x, repeat=n)]  # all B^n strings
        assert expected_max(x, "v", n=n)[0] == pytest.approx(np.mean(maxima), rel=1e-13)
        assert expected_max_std(x, n=n)[0] == pytest.approx(np.std(maxima), rel=1e-12)


def test_u_equals_average_over_combinations():
    from itertools import combinations

    x = np.array([0.11, 0.4, 0.42, 0.7, 0.95, 0.3])
    for n in range(1, 7):
        maxima = [max(c) for c in combinations(x, n)]
        assert expected_max(x, "u", n=n)[0] == pytest.approx(np.mean(maxima), rel=1e-13)


def test_batch_axis_and_subset_of_n(rng):
    x = rng.normal(size=(3, 12, 4))
    full = expected_max(x, "w", axis=1)
    assert full.shape == (3, 4, 12)
    some = expected_max(x, "w", n=[2, 12], axis=1)
    np.testing.assert_allclose(some, full[..., [1, 11]])
    single = expected_max(x[0, :, 0], "w")
    np.testing.assert_allclose(single, full[0, 0])


def test_curves_are_nondecreasing_and_below_the_max(rng):
    x = rng.uniform(size=(20, 15))
    for method in "uvw":
        curve = expected_max(x, method)
        assert np.all(np.diff(curve, axis=1) >= -1e-15)
        assert np.all(curve <= x.max(axis=1, keepdims=True) + 1e-15)


def test_bootstrap_converges_to_v(rng):
    x = rng.uniform(size=30)
    K = 20_000
    boot = expected_max(x, "bootstrap", resamples=K, rng=rng)
    v = expected_max(x, "v")
    # The bootstrap mean of K maxima has standard error sd(max)/sqrt(K), sd from the plug-in formula.
    mcse = expected_max_std(x) / np.sqrt(K)
    assert np.all(np.abs(boot - v) <= 5 * mcse + 1e-15)


def test_bootstrap_is_reproducible(rng):
    x = np.sort(rng.uniform(size=(7, 10)), axis=1)
    a = expected_max(x, "bootstrap", resamples=50, rng=np.random.default_rng(3))
    b = expected_max(x, "bootstrap", resamples=50, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (7, 10)


def test_std_is_zero_for_constant_scores():
    np.testing.assert_array_equal(expected_max_std(np.full(8, 0.7)), np.zeros(8))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: expected_max([0.1, 0.2], "v", n=3), "n=3 exceeds the number of scores B=2"),
        (lambda: expected_max([0.1, 0.2], "z"), "unknown estimator 'z'; choose one of: u, v, w, bootstrap"),
        (lambda: expected_max([0.1, np.nan]), "NaN"),
        (lambda: expected_max([0.1, 0.2], n=0), "n must be >= 1"),
        (lambda: expected_max([0.1, 0.2], n=[1.5]), "n must be an integer"),
        (lambda: expected_max([0.1, 0.2], "bootstrap"), "rng= must be a numpy.random.Generator, e.g. np.random.default_rng(0)"),
        (lambda: expected_max([0.1, 0.2], "bootstrap", resamples=0, rng=np.random.default_rng()),
         "resamples must be an integer >= 1"),
        (lambda: weights(0, "v"), "B (the number of scores) must be an integer >= 1"),
        (lambda: weights(3, "bootstrap"), "has no weight matrix"),
    ],
)
def test_bad_input_messages(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


@pytest.mark.parametrize("method, expected", [
    ("v", [0.2 / 3 + 0.5 / 3 + 0.9 / 3, (0.2 * 1 + 0.5 * 3 + 0.9 * 5) / 9, (0.2 * 1 + 0.5 * 7 + 0.9 * 19) / 27]),
    ("u", [(0.2 + 0.5 + 0.9) / 3, (0.5 + 0.9 + 0.9) / 3, 0.9]),
    ("w", [(0.2 + 0.5 + 0.9) / 3, (0.2 + 0.5 * 2 + 0.9 * 3) / 6, (0.2 + 0.5 * 3 + 0.9 * 6) / 10]),
])
def test_every_listed_closed_form_method_on_a_hand_computed_sample(method, expected):
    # B = 3: V counts the 3^n strings, U the C(3, n) subsets, W the C(n + 2, n) multisets, by their maximum
    assert method in estimators.CLOSED_FORM and method in estimators.METHODS
    np.testing.assert_allclose(expected_max([0.9, 0.2, 0.5], method), expected, rtol=1e-14)


@pytest.mark.parametrize("method", ["u", "v", "w"])
@pytest.mark.parametrize("B", [1, 2, 3, 41, 700, 2000])
def test_windowed_blocks_equal_the_matrix(method, B, monkeypatch):
    # Large samples never form the len(n) x B matrix: forced onto that path, small ones must agree with it
    # (the window leaves out at most 2**-53 of each budget's weight).
    rng = np.random.default_rng(9100 + B)
    x = rng.uniform(size=(2, B))
    n = np.arange(1, B + 1)
    matrix = expected_max(x, method)
    matrix_std = expected_max_std(x)  # both centre on the max: 1e-14 relative to 80-bit sums at B = 700
    monkeypatch.setattr(estimators, "MATRIX_LIMIT", 0)
    monkeypatch.setattr(estimators, "BLOCK", 5000)  # many blocks, of several budgets each
    np.testing.assert_allclose(expected_max(x, method), matrix, rtol=1e-12, atol=0)
    np.testing.assert_allclose(expected_max_std(x), matrix_std, rtol=1e-12, atol=1e-15)
    # a subset of budgets in any order, and heavy tails (scale-relative tolerance: values cross zero)
    y = np.sort(rng.standard_t(2, size=B))
    sub = rng.permutation(n)[: max(1, B // 3)]
    monkeypatch.setattr(estimators, "MATRIX_LIMIT", 2**22)
    want = expected_max(y, method, n=sub, presorted=True)
    monkeypatch.setattr(estimators, "MATRIX_LIMIT", 0)
    np.testing.assert_allclose(expected_max(y, method, n=sub, presorted=True), want, rtol=0,
                               atol=1e-13 * np.ptp(y))


def test_small_samples_keep_the_cached_matrix(monkeypatch):
    # The simulations' hot path (B in the tens) multiplies by the cached weight matrix, never by blocks.
    def fail(*args):
        raise AssertionError("windowed path taken")

    monkeypatch.setattr(estimators, "_windowed_sums", fail)
    x = np.random.default_rng(9201).uniform(size=(100, 30))
    np.testing.assert_array_equal(expected_max(x, "v"), np.sort(x) @ weights(30, "v").T)
    expected_max_std(x)


def test_window_bound_holds_exactly():
    # The weight each window leaves out, as an exact rational, is at most 2**-53 (the module's error bound).
    for B in (50, 300):
        for n in (1, 2, 7, 40, B // 2, B):
            m = int(estimators._window(B, np.array([n]))[0])
            k = B - m  # the window is ranks k+1..B; left out: P(Y_n <= X_(k))
            left = {"v": Fraction(k**n, B**n), "u": Fraction(comb(k, n), comb(B, n)),
                    "w": Fraction(comb(k + n - 1, n), comb(B + n - 1, n))}
            for method, mass in left.items():
                assert mass <= Fraction(1, 2**53), (method, B, n, m)


def test_presorted_is_checked():
    x = np.array([[0.1, 0.2, 0.3], [0.2, 0.5, 0.4]])
    with pytest.raises(ValueError, match=r"presorted=True but sample 1 is not ascending along the sample "
                                         r"axis \(position 2: 0\.5 > 0\.4\)"):
        expected_max(x, "v", presorted=True)
    with pytest.raises(ValueError, match=r"presorted=True but is not ascending .*position 1: 0\.3 > 0\.1"):
        expected_max_std([0.3, 0.1], presorted=True)
    with pytest.raises(ValueError, match="presorted must be True or False, got 'yes'"):
        expected_max([0.1, 0.2], presorted="yes")
    np.testing.assert_allclose(expected_max(np.sort(x), presorted=True), expected_max(x))  # sorted: accepted


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0)])
def test_bootstrap_rng_must_be_a_generator(rng):
    with pytest.raises(ValueError, match=r"^expected_max\(method='bootstrap'\): rng= must be a numpy.random."
                                         r"Generator, e.g. np.random.default_rng\(0\), got "):
        expected_max([0.1, 0.2], "bootstrap", rng=rng)


def test_std_is_accurate_where_the_max_concentrates():
    # Var(max of n) is tiny next to E[max]^2 for large n; centring on the maximum keeps it to 1e-13 relative
    # (centring on the sample mean lost 2e-11), checked against 80-bit sums of the exact weights.
    x = np.sort(np.random.default_rng(9301).uniform(size=700))
    n = np.arange(1, 701)
    xl = x.astype(np.longdouble)
    cdf = (np.arange(701, dtype=np.longdouble) / 700)[None, :] ** n[:, None].astype(np.longdouble)
    w = np.diff(cdf, axis=1)
    mean = w @ xl
    sd = np.sqrt(np.einsum("ij,ij->i", w, (xl[None, :] - mean[:, None]) ** 2)).astype(np.float64)
    np.testing.assert_allclose(expected_max_std(x), sd, rtol=1e-13)


def test_minimize_is_the_expected_minimum_known_answers():
    # U at n = 2 is the mean of the pairs' minima: (0.2 + 0.2 + 0.5) / 3; at n = 1 the sample mean
    x = [0.9, 0.2, 0.5]
    np.testing.assert_allclose(expected_max(x, "u", n=[1, 2, 3], minimize=True), [1.6 / 3, 0.3, 0.2], rtol=0, atol=1e-15)
    # V at n = 3 from the exact weights P(min of 3 draws = X_(i)): (19 x 0.2 + 7 x 0.5 + 1 x 0.9) / 27
    assert expected_max(x, "v", n=3, minimize=True)[0] == pytest.approx(8.2 / 27, abs=1e-15)


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_minimize_is_the_negated_maximum_bit_for_bit(rng, method):
    x = rng.normal(size=(4, 37))
    for presorted in (False, True):
        sample = np.sort(x, axis=-1) if presorted else x
        mine = expected_max(sample, method, minimize=True, presorted=presorted)
        np.testing.assert_array_equal(mine, -expected_max(-x, method))
        std = expected_max_std(sample, minimize=True, presorted=presorted)
        np.testing.assert_array_equal(std, expected_max_std(-x))
    # the minimum's curve falls with n; the maximum's rises
    assert np.all(np.diff(expected_max(x[0], method, minimize=True)) <= 0)


def test_minimize_bootstrap_draws_as_the_mirrored_scores():
    x = np.array([0.3, 0.1, 0.7, 0.4, 0.9])
    a = expected_max(x, "bootstrap", rng=np.random.default_rng(5), minimize=True)
    b = -expected_max(-x, "bootstrap", rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


def test_minimize_must_be_a_bool():
    with pytest.raises(ValueError, match="minimize must be True or False, got 'yes'"):
        expected_max([0.1, 0.2], minimize="yes")
    with pytest.raises(ValueError, match="minimize must be True or False, got 1"):
        expected_max_std([0.1, 0.2], minimize=1)
