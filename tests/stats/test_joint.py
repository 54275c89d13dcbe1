"""The sup-t kernel (simstudy.stats.joint): exact cases, Šidák, singular matrices, monotonicity, determinism."""

import itertools

import numpy as np
import pytest
from scipy import integrate, optimize, special

from simstudy.stats import joint

Z975 = float(special.ndtri(0.975))


def ar1(K, rho):
    idx = np.arange(K)
    return rho ** np.abs(idx[:, None] - idx)


def test_one_point_is_the_normal_quantile():
    assert joint.sup_t_critical(np.eye(1)) == Z975
    assert joint.sup_t_critical([[1.0]], 0.9) == pytest.approx(special.ndtri(0.95), abs=1e-15)
    band = joint.sup_t_band([2.0], [[0.04]])
    assert band.critical == Z975 and band.lower[0] == 2.0 - Z975 * 0.2 and band.upper[0] == 2.0 + Z975 * 0.2


@pytest.mark.parametrize("K", [2, 5, 10, 30])
def test_independent_points_give_sidak(K):
    """Šidák's value is the exact sup-t value for independent points; the sampler is good to ~1e-3."""
    c = joint.sup_t_critical(np.eye(K))
    assert c == pytest.approx(joint.sidak_critical(K), abs=2e-3)
    assert round(c, 2) == round(joint.sidak_critical(K), 2)


def test_two_correlated_points_match_the_bivariate_normal():
    # P(|Z1| <= c, |Z2| <= c) = 0.95 at correlation 0.5: c = 2.21213 (scipy's mvn cdf with a root find, 1e-8).
    c = joint.sup_t_critical([[1.0, 0.5], [0.5, 1.0]])
    assert c == pytest.approx(2.21213, abs=BOUND) and c >= 2.21213 - 1e-5  # conservative


#: The measured bound (module docstring of simstudy.stats.joint): c is at most this far above the exact value.
BOUND = 0.03


def equicorrelated_coverage(K: int, rho: float, c: float) -> float:
    """P(max_k |Z_k| <= c) for K standard normals of common correlation rho: with Z_k = sqrt(rho) W +
    sqrt(1 - rho) e_k, one integral over W of the K-th power of a conditional probability (exact to 1e-12)."""
    if rho == 0:
        return float((special.ndtr(c) - special.ndtr(-c)) ** K)
    s, t = np.sqrt(rho), np.sqrt(1 - rho)

    def given(w):
        return (
            np.exp(-w * w / 2)
            / np.sqrt(2 * np.pi)
            * (special.ndtr((c - s * w) / t) - special.ndtr((-c - s * w) / t)) ** K
        )

    return integrate.quad(given, -12, 12, limit=400, epsabs=1e-13)[0]


def equicorrelated_critical(K: int, rho: float, level: float) -> float:
    """The exact sup-t value of K equicorrelated points (Šidák's at rho = 0), by a root find of the integral."""
    if rho == 0:
        return joint.sidak_critical(K, level)
    return optimize.brentq(lambda c: equicorrelated_coverage(K, rho, c) - level, 0.5, 8.0, xtol=1e-12)


def equicorrelated(K: int, rho: float) -> np.ndarray:
    corr = np.full((K, K), rho)
    np.fill_diagonal(corr, 1.0)
    return corr


# Where the former estimate fell below the exact value (issue 34 §4: 1.5e-3 against Šidák at 80%, 2.2e-3 and
# more under strong correlation): each must now be at or above it, and within the measured bound.
@pytest.mark.parametrize(
    "K, rho, level",
    [(2, 0.0, 0.8), (50, 0.0, 0.8), (100, 0.0, 0.8), (5, 0.0, 0.9), (100, 0.0, 0.9), (2, 0.0, 0.95), (50, 0.0, 0.95),
     (3, 0.6, 0.8), (5, 0.9, 0.8), (30, 0.9, 0.8), (20, 0.97, 0.8), (30, 0.9, 0.9), (50, 0.9, 0.9),
     (3, 0.6, 0.95), (30, 0.9, 0.95), (50, 0.97, 0.95)],
)  # fmt: skip
def test_critical_value_is_never_below_the_exact_one(K, rho, level):
    exact = equicorrelated_critical(K, rho, level)
    c = joint.sup_t_critical(equicorrelated(K, rho), level)
    assert exact - 1e-9 <= c <= exact + BOUND, (c, exact)
    assert level - 1e-12 <= equicorrelated_coverage(K, rho, c) <= level + 0.01


@pytest.mark.slow
def test_critical_value_is_conservative_and_within_its_bound_on_the_whole_grid():
    """The grid of the module docstring: K in 2..100, levels 0.8/0.9/0.95, correlation 0 (Šidák) to 0.97."""
    worst = 0.0
    for K, rho, level in itertools.product(
        [2, 3, 5, 10, 20, 30, 50, 100], [0.0, 0.3, 0.6, 0.9, 0.97], [0.8, 0.9, 0.95]
    ):
        exact = equicorrelated_critical(K, rho, level)
        c = joint.sup_t_critical(equicorrelated(K, rho), level)
        assert exact - 1e-9 <= c <= exact + BOUND, (K, rho, level, c, exact)
        assert level - 1e-12 <= equicorrelated_coverage(K, rho, c) <= level + 0.01, (K, rho, level)
        worst = max(worst, c - exact)
    assert worst > 0.01  # the bound is the measured one, not a loose guess: strong correlation comes near it


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_perfectly_correlated_points_are_one_point(sign):
    v = np.array([1.0, sign, 1.0, sign])
    assert joint.sup_t_critical(np.outer(v, v)) == Z975  # singular: rank 1, exactly the one-point value
    cov = np.outer(v, v) * 0.01
    band = joint.sup_t_band(np.arange(4.0), cov)
    np.testing.assert_allclose(band.upper - np.arange(4.0), Z975 * 0.1, rtol=1e-12)


def test_nearly_singular_and_rank_deficient_matrices_work():
    x = np.random.default_rng(3).normal(size=(4, 12))  # 12 points from 4 factors: rank 4
    cov = x.T @ x
    sd = np.sqrt(np.diag(cov))
    c = joint.sup_t_critical(cov / np.outer(sd, sd))
    assert Z975 < c < joint.sidak_critical(12)
    c_smooth = joint.sup_t_critical(ar1(30, 0.999))
    assert Z975 < c_smooth < joint.sup_t_critical(ar1(30, 0.9)) < joint.sidak_critical(30)


def test_monotone_in_level():
    corr = ar1(20, 0.8)
    cs = [joint.sup_t_critical(corr, level) for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)]
    assert np.all(np.diff(cs) > 0)
    assert all(special.ndtri((1 + lv) / 2) <= c for lv, c in zip((0.5, 0.8, 0.9, 0.95, 0.99, 0.999), cs))


def test_deterministic():
    corr = ar1(25, 0.9)
    first = joint.sup_t_critical(corr)
    joint._draws.cache_clear()
    assert joint.sup_t_critical(corr) == first
    assert joint.sup_t_band(np.zeros(25), corr).critical == first


def test_simultaneous_coverage_of_the_band_by_simulation():
    """The band's defining property, checked directly: a fresh normal vector stays inside it 95% of the time."""
    K, draws = 15, 40_000
    corr = ar1(K, 0.7)
    sd = np.linspace(0.5, 2.0, K)
    cov = corr * np.outer(sd, sd)
    band = joint.sup_t_band(np.zeros(K), cov)
    z = np.random.default_rng(11).multivariate_normal(np.zeros(K), cov, size=draws)
    inside = np.mean(np.all((z >= band.lower) & (z <= band.upper), axis=1))
    assert abs(inside - 0.95) < 4 * np.sqrt(0.95 * 0.05 / draws)  # 4 binomial SEs: 0.0044
    pointwise = np.mean(np.all(np.abs(z) <= Z975 * sd, axis=1))
    assert pointwise < 0.85  # the pointwise intervals cover the whole curve far less often


def test_exact_and_undefined_points():
    cov = np.diag([1.0, 0.0, 1.0, np.nan])
    band = joint.sup_t_band([0.0, 5.0, 1.0, 2.0], cov)
    assert band.lower[1] == band.upper[1] == 5.0  # exact: the point itself
    assert np.isnan(band.lower[3]) and np.isnan(band.upper[3])
    assert band.critical == pytest.approx(joint.sidak_critical(2), abs=2e-3)  # two points count
    assert joint.sup_t_band(np.zeros(3), np.zeros((3, 3))).critical == Z975


@pytest.mark.parametrize(
    "args, message",
    [
        (([0.0, 1.0], np.eye(3)), "shape"),
        (([0.0], np.eye(1), 1.0), "level"),
        (([0.0], np.eye(1), True), "level"),
    ],
)
def test_bad_input(args, message):
    estimate, cov, *level = args
    with pytest.raises(ValueError, match=message):
        joint.sup_t_band(estimate, cov, **({"level": level[0]} if level else {}))
    with pytest.raises(ValueError, match="correlation"):
        joint.sup_t_critical([[1.0, 0.2], [0.3, 1.0]])
