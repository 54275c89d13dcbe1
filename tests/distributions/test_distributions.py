import numpy as np
import pytest
from scipy import stats

from simstudy import distributions as D


def test_bag_cdf_with_ties():
    bag = D.Bag([0.3, 0.1, 0.3, 0.9])
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0])
    np.testing.assert_array_equal(bag.cdf(x), [0, 0.25, 0.25, 0.75, 0.75, 1, 1])
    np.testing.assert_array_equal(bag.cdf_left(x), [0, 0, 0.25, 0.25, 0.75, 0.75, 1])
    np.testing.assert_array_equal(bag.ppf([0.0, 0.25, 0.26, 0.75, 1.0]), [0.1, 0.1, 0.3, 0.3, 0.9])
    assert bag.support == (0.1, 0.9) and bag.is_discrete and bag.size == 4


def test_bag_sample_sorted_is_the_sorted_sample():
    bag = D.Bag(np.random.default_rng(1).uniform(size=50))
    a = bag.sample((40, 7), rng=np.random.default_rng(5))
    b = bag.sample_sorted(40, 7, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(np.sort(a, axis=1), b)


def test_bag_is_read_only():
    bag = D.Bag([0.2, 0.1])
    with pytest.raises(ValueError):
        bag.values[0] = 1.0


def test_truncnorm_bag_matches_its_construction():
    bag = D.truncnorm_bag(rng=np.random.default_rng(0))
    assert bag.size == 10_000
    # 10,000 draws with replacement from 100,000 distinct values: E[unique] = 1e5 (1 - (1 - 1e-5)^1e4) = 9,516.3,
    # SD about 14 (the paper saw 9,536 with its seed).
    expected = 1e5 * (1 - (1 - 1e-5) ** 1e4)
    assert abs(bag.atoms.size - expected) < 6 * 14
    assert 0 <= bag.support[0] and bag.support[1] <= 1
    assert abs(bag.values.mean() - 0.6) < 0.005


def test_truncnorm_sample_in_support(rng):
    tn = D.TruncatedNormal(0.5, 0.5, 0.2, 0.6)
    x = tn.sample(10_000, rng=rng)
    assert x.min() >= 0.2 and x.max() <= 0.6
    assert tn.cdf(0.2) == 0 and tn.cdf(0.6) == 1


@pytest.mark.parametrize(
    ("mean", "sd", "low", "high"),
    [
        (0.6, 0.07, 0.0, 1.0),
        (0.5, 0.5, 0.2, 0.6),
        (0.0, 1.0, -np.inf, np.inf),
        (0.999, 0.001, 0.0, 1.0),
        (0.3, 5.0, 0.0, 1.0),
    ],
)
@pytest.mark.parametrize("size", [1, 7, 100_000, (3, 4), ()])
def test_truncnorm_draws_are_scipys_bit_for_bit(mean, sd, low, high, size):
    # TruncatedNormal draws without scipy.stats when the mean lies inside its bounds (a 0.5-0.9 s import at a
    # command's start); the draws, and so every preset's bag and numbers, must stay scipy's to the last bit.
    a, b = (low - mean) / sd, (high - mean) / sd
    ours = D.TruncatedNormal(mean, sd, low, high).sample(size, rng=np.random.default_rng(26))
    scipys = stats.truncnorm(a, b, loc=mean, scale=sd).rvs(size=size, random_state=np.random.default_rng(26))
    assert np.shape(ours) == np.shape(scipys)
    assert np.asarray(ours).tobytes() == np.asarray(scipys).tobytes()


def test_truncnorm_outside_its_bounds_mean_still_draws_from_scipy():
    # The mean at or beyond a bound: scipy.stats draws (the tail cases of its inversion are not reimplemented).
    tn = D.TruncatedNormal(1.2, 0.1, 0.0, 1.0)
    ours = tn.sample(1000, rng=np.random.default_rng(27))
    a, b = (0.0 - 1.2) / 0.1, (1.0 - 1.2) / 0.1
    scipys = stats.truncnorm(a, b, loc=1.2, scale=0.1).rvs(size=1000, random_state=np.random.default_rng(27))
    assert ours.tobytes() == scipys.tobytes()


@pytest.mark.parametrize(
    "kind, params, message",
    [
        ("truncnorm", {"sd": 0}, "sd must be > 0, got 0"),
        ("truncnorm", {"sd": -0.1}, "sd must be > 0, got -0.1"),
        ("truncnorm", {"low": 1.0, "high": 0.5}, "high must be greater than low=1.0, got 0.5"),
        ("truncnorm", {"mean": "x"}, "mean must be a number, got 'x'"),
        ("truncnorm_bag", {"population": 0}, "population must be an integer >= 1, got 0"),
        ("truncnorm_bag", {"size": 2.5}, "size must be an integer >= 1, got 2.5"),
        ("bag", {"values": []}, "values must hold at least one score"),
        ("bag", {"values": [0.1, float("nan")]}, "values must all be finite, got nan"),
        ("gamma", {}, "kind must be one of"),
    ],
)
def test_invalid_parameters_name_the_parameter(kind, params, message):
    with pytest.raises(D.InvalidParameter) as info:
        D.from_spec(kind, params)
    assert message in str(info.value)


@pytest.fixture(scope="module")
def kde():
    from simstudy import datasets

    return D.ReflectedKDE.fit(datasets.reuters_hedwig()["lstm"], bw_factor=0.05)  # reflected, like the paper


def test_kde_bandwidth_conventions():
    from simstudy import datasets

    data = datasets.reuters_hedwig()
    assert D.ReflectedKDE.fit(data["lstm"], bw_factor=0.05).bandwidth == pytest.approx(0.0429, abs=1e-4)
    assert D.ReflectedKDE.fit(data["mlp"], bw_factor=0.0125).bandwidth == pytest.approx(0.0107, abs=1e-4)
    deberta = D.ReflectedKDE.fit(datasets.deberta_mnli("deberta"), bw_factor=0.05, bw_of="data")
    assert deberta.bandwidth == pytest.approx(0.0095, abs=1e-4)
    assert D.ReflectedKDE.fit([0.2, 0.4], bandwidth=0.1).bandwidth == 0.1


def test_kde_cdf_integrates_the_density(kde):
    from scipy import integrate

    for x in (0.0, 0.05, 0.3, 0.8, 1.0):
        assert integrate.quad(kde.pdf, 0, x, epsabs=1e-12, limit=200)[0] == pytest.approx(float(kde.cdf(x)), abs=1e-8)
    assert kde.cdf(0.0) == 0.0 and kde.cdf(1.0) == 1.0
    assert kde.cdf(-0.5) == 0.0 and kde.cdf(1.5) == 1.0 and kde.pdf(-0.1) == 0.0


def test_kde_quantile_inverts_the_cdf(kde):
    q = np.linspace(1e-6, 1 - 1e-6, 101)
    np.testing.assert_allclose(kde.cdf(kde.ppf(q)), q, atol=1e-9)


def test_kde_sampling_is_exact_and_in_support(kde):
    from scipy import stats

    x = kde.sample(100_000, rng=np.random.default_rng(12))
    assert x.min() >= 0 and x.max() <= 1
    assert stats.kstest(x, kde.cdf).pvalue > 1e-3


def test_kde_bad_parameters():
    with pytest.raises(D.InvalidParameter, match="bandwidth must be > 0"):
        D.ReflectedKDE([0.5], 0.0)
    with pytest.raises(D.InvalidParameter, match="data must lie within"):
        D.ReflectedKDE([1.5], 0.1)
    with pytest.raises(D.InvalidParameter, match="cannot both be given"):
        D.ReflectedKDE.fit([0.5], bandwidth=0.1, bw_factor=0.1)
    with pytest.raises(D.InvalidParameter, match="constant data"):
        D.ReflectedKDE.fit([0.5, 0.5])


def test_kde_silverman_rule():
    x = np.random.default_rng(3).normal(0.5, 0.05, size=500)
    expected = 0.9 * min(x.std(ddof=1), np.subtract(*np.percentile(x, [75, 25])) / 1.34) * 500**-0.2
    assert D.ReflectedKDE.fit(x).bandwidth == pytest.approx(expected)


@pytest.fixture(scope="module")
def mixture():
    """Atoms at 0.2 (share 0.1) and 0.9 (share 0.3) plus a reflected KDE of four scores (share 0.6)."""
    part = D.ReflectedKDE([0.3, 0.5, 0.55, 0.7], 0.05)
    return D.KDEWithAtoms(part, [0.9, 0.2], [0.3, 0.1])  # given unsorted: sorted on construction


def test_mixture_cdf_and_cdf_left_by_hand(mixture):
    K = mixture.continuous.cdf
    assert mixture.atoms.tolist() == [0.2, 0.9] and mixture.shares.tolist() == [0.1, 0.3]
    assert mixture.cdf(0.2) == pytest.approx(0.1 + 0.6 * K(0.2), abs=1e-15)
    assert mixture.cdf_left(0.2) == pytest.approx(0.6 * K(0.2), abs=1e-15)
    assert mixture.cdf(0.6) == mixture.cdf_left(0.6) == pytest.approx(0.1 + 0.6 * K(0.6), abs=1e-15)
    assert mixture.cdf(0.9) == pytest.approx(0.4 + 0.6 * K(0.9), abs=1e-15)
    assert mixture.cdf_left(0.9) == pytest.approx(0.1 + 0.6 * K(0.9), abs=1e-15)
    assert mixture.cdf(0.0) == 0.0 and mixture.cdf(1.0) == 1.0 and mixture.cdf_left(1.0) == 1.0
    assert mixture.pdf(0.5) == pytest.approx(0.6 * mixture.continuous.pdf(0.5))
    assert mixture.has_atoms and not mixture.is_discrete and mixture.support == (0.0, 1.0)


def test_mixture_ppf_is_the_generalized_inverse(mixture):
    K = mixture.continuous
    below, above = float(mixture.cdf_left(0.2)), float(mixture.cdf(0.2))
    # Anywhere in the jump (F(0.2-), F(0.2)] the quantile is the atom; just below, the continuous part.
    np.testing.assert_array_equal(mixture.ppf([below + 1e-12, (below + above) / 2, above]), [0.2, 0.2, 0.2])
    assert mixture.ppf(below) == pytest.approx(0.2, abs=1e-9)
    assert mixture.ppf(below - 1e-3) < 0.2
    # Between the atoms: F = 0.1 + 0.6 K, so F^-1(0.5) = K^-1(2/3).
    assert mixture.ppf(0.5) == pytest.approx(float(K.ppf(0.4 / 0.6)), abs=1e-12)
    # Round trips: q -> x -> q on the continuous stretches, x -> q -> x everywhere (atoms included).
    q = np.linspace(0.001, 0.999, 999)
    x = mixture.ppf(q)
    smooth = ~np.isin(x, mixture.atoms)
    np.testing.assert_allclose(mixture.cdf(x[smooth]), q[smooth], atol=1e-9)
    x = np.concatenate([np.linspace(0.05, 0.95, 91), mixture.atoms])
    np.testing.assert_allclose(mixture.ppf(mixture.cdf(x)), x, atol=1e-9)
    assert mixture.ppf(0.0) == 0.0 and mixture.ppf(1.0) == 1.0


def test_mixture_with_an_atom_at_the_upper_bound():
    dist = D.KDEWithAtoms(D.ReflectedKDE([0.4, 0.6], 0.05), [1.0], [0.25])
    assert dist.cdf_left(1.0) == pytest.approx(0.75) and dist.cdf(1.0) == 1.0
    assert dist.ppf(0.8) == 1.0 and dist.ppf(0.75 - 1e-6) < 1.0


def test_mixture_sampling_is_exact(mixture):
    from simstudy.stats.metrics import clopper_pearson

    m = 200_000
    x = mixture.sample(m, rng=np.random.default_rng(1705))
    assert x.shape == (m,) and x.min() >= 0 and x.max() <= 1
    counts = np.array([np.sum(x == 0.2), np.sum(x == 0.9)])
    low, high = clopper_pearson(counts, m, 0.999)
    assert np.all(low <= mixture.shares) and np.all(mixture.shares <= high)
    rest = x[~np.isin(x, mixture.atoms)]
    assert stats.kstest(rest, mixture.continuous.cdf).pvalue > 1e-3
    assert mixture.sample((3, 4), rng=np.random.default_rng(1706)).shape == (3, 4)


def test_mixture_without_atoms_is_exactly_its_kde():
    x = np.random.default_rng(1707).beta(8, 2, size=200)
    plain = D.ReflectedKDE.fit(x, bandwidth=0.02)
    fit = D.KDEWithAtoms.fit(x, bandwidth=0.02)
    assert not fit.has_atoms and fit.bw_method == "given"
    grid = np.linspace(0, 1, 51)
    np.testing.assert_array_equal(fit.cdf(grid), plain.cdf(grid))
    np.testing.assert_array_equal(fit.cdf_left(grid), plain.cdf(grid))
    np.testing.assert_array_equal(fit.ppf(grid), plain.ppf(grid))
    np.testing.assert_array_equal(
        fit.sample(100, rng=np.random.default_rng(1708)), plain.sample(100, rng=np.random.default_rng(1708))
    )
    # Silverman on request is ReflectedKDE.fit's rule; a bw_factor overrides the method as for ReflectedKDE.
    assert D.KDEWithAtoms.fit(x, bw_method="silverman").bandwidth == D.ReflectedKDE.fit(x).bandwidth
    assert D.KDEWithAtoms.fit(x, bw_factor=0.05).bandwidth == D.ReflectedKDE.fit(x, bw_factor=0.05).bandwidth


def test_kde_atoms_kind_from_a_file(tmp_path):
    x = np.concatenate([np.zeros(30), np.round(np.random.default_rng(1709).normal(0.8, 0.03, 170), 4)])
    (tmp_path / "runs.csv").write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    dist = D.from_spec("kde_atoms", {"path": str(tmp_path / "runs.csv")})
    assert dist.atoms.tolist() == [0.0] and dist.shares.tolist() == [0.15] and dist.name == "kde_atoms:runs:runs"
    desc = D.describe(dist)
    assert desc["atoms"] == [0.0] and desc["shares"] == [0.15] and desc["bw_method"] == "isj"
    assert "kde_atoms" in D.CONTINUOUS_KINDS
    plain = D.from_spec("kde_atoms", {"path": str(tmp_path / "runs.csv"), "find_atoms": False, "bandwidth": 0.01})
    assert not plain.has_atoms and plain.data.size == 200
