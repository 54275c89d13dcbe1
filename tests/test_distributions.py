import numpy as np
import pytest

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
