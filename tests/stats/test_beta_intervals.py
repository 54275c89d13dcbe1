import numpy as np
import pytest
from scipy import special, stats

from simstudy.stats import beta_intervals as bi


@pytest.mark.parametrize("n", [2, 6, 48, 1024])
@pytest.mark.parametrize("coverage", [0.5, 0.9, 0.999])
def test_highest_density_mass_and_equal_density(n, coverage):
    i = np.arange(1, n + 1)
    low, high = bi.highest_density(i, n, coverage)
    a, b = i, n + 1 - i
    np.testing.assert_allclose(special.betainc(a, b, high) - special.betainc(a, b, low), coverage, rtol=0, atol=1e-10)
    inner = (a > 1) & (b > 1)
    dens_low, dens_high = stats.beta.pdf(low, a, b), stats.beta.pdf(high, a, b)
    np.testing.assert_allclose(dens_low[inner], dens_high[inner], rtol=1e-10)
    # At the ends the density is monotone: the interval sits against 0 or 1.
    assert low[0] == 0 and high[-1] == 1


@pytest.mark.parametrize("n", [3, 30])
def test_highest_density_is_the_shortest(n, rng):
    i = np.arange(2, n)
    low, high = bi.highest_density(i, n, 0.8)
    # Any other interval with the same mass, from shifting the lower tail, is longer.
    a, b = i, n + 1 - i
    for shift in (-0.05, 0.05):
        s = np.clip(special.betainc(a, b, low) + shift, 0, 0.2 - 1e-9)
        other = special.betaincinv(a, b, s + 0.8) - special.betaincinv(a, b, s)
        assert np.all(other >= high - low - 1e-12)


def test_equal_tailed_and_its_coverage(rng):
    n = 20
    i = np.arange(1, n + 1)
    low, high = bi.equal_tailed(i, n, 0.9)
    np.testing.assert_allclose(stats.beta.cdf(low, i, n + 1 - i), 0.05, atol=1e-12)
    np.testing.assert_allclose(bi.coverage_equal_tailed(i, n, low), 0.9, atol=1e-12)
    np.testing.assert_allclose(bi.coverage_equal_tailed(i, n, high), 0.9, atol=1e-12)


def test_coverage_highest_density_inverts_the_intervals():
    n = 48
    i = np.arange(1, n + 1)
    for c in (0.3, 0.95):
        low, high = bi.highest_density(i, n, c)
        inner = (i > 1) & (i < n)
        np.testing.assert_allclose(bi.coverage_highest_density(i, n, low)[inner], c, atol=1e-10)
        np.testing.assert_allclose(bi.coverage_highest_density(i, n, high)[inner], c, atol=1e-10)
        assert bi.coverage_highest_density(1, n, high[0]) == pytest.approx(c, abs=1e-12)
        assert bi.coverage_highest_density(n, n, low[-1]) == pytest.approx(c, abs=1e-12)


def test_coverage_broadcasts_over_i_and_p():
    out = bi.coverage_highest_density(np.arange(1, 6)[:, None], 5, np.linspace(0.01, 0.99, 7)[None, :])
    assert out.shape == (5, 7) and np.all((out >= 0) & (out <= 1))


@pytest.mark.parametrize("call", [
    lambda: bi.highest_density([0], 5, 0.5),
    lambda: bi.highest_density([1], 5, 1.0),
    lambda: bi.equal_tailed([1], 0, 0.5),
])
def test_bad_arguments(call):
    with pytest.raises(ValueError):
        call()
