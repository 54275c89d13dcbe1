import numpy as np
import pandas as pd
import pytest

from simstudy import tables


@pytest.fixture
def scores(rng):
    return {"cnn": rng.uniform(0.3, 0.45, size=40), "lr": rng.uniform(0.35, 0.40, size=25)}


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_curve_properties(scores, method):
    table = tables.evp_curves(scores, method=method)
    for model, x in scores.items():
        c = table[table.model == model].sort_values("n")
        assert list(c.n) == list(range(1, x.size + 1))
        assert c.expected_max.iloc[0] == pytest.approx(x.mean(), rel=1e-12)  # n = 1: the mean
        assert np.all(np.diff(c.expected_max) >= -1e-15)                      # non-decreasing
        assert np.all(c.expected_max <= x.max() + 1e-15)                      # never above the sample max
        assert np.all((c.band_low >= x.min()) & (c.band_high <= x.max()))    # shading clipped to observed
        assert np.all(c.band_low <= c.expected_max) and np.all(c.expected_max <= c.band_high)


def test_budget_to_target_by_hand():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    # V: E[max of n] = sum_i x_(i) ((i/4)^n - ((i-1)/4)^n): n=1 0.25, n=2 0.3125, n=3 0.34375.
    table = tables.evp_curves({"m": x})
    np.testing.assert_allclose(table.expected_max[:3], [0.25, 0.3125, 0.34375])
    hit = tables.budget_to_target(table, 0.31)
    assert hit.n.iloc[0] == 2 and hit.expected_max.iloc[0] == pytest.approx(0.3125)
    never = tables.budget_to_target(table, 0.5)
    assert np.isnan(never.n.iloc[0])


def test_time_axis_is_trials_times_mean_duration(scores):
    table = tables.evp_curves(scores, trial_time={"cnn": 77.0, "lr": 3.0})
    for model, t in (("cnn", 77.0), ("lr", 3.0)):
        c = table[table.model == model]
        np.testing.assert_allclose(c.time, c.n * t)
    hit = tables.budget_to_target(table, 0.39)
    row = hit.set_index("model").loc["cnn"]
    assert row.time == pytest.approx(row.n * 77.0)
    single = tables.evp_curves(scores, trial_time=2.5)
    np.testing.assert_allclose(single.time, single.n * 2.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "bootstrap"}, "unknown estimator 'bootstrap'"),
    ({"trial_time": -1}, "trial_time for cnn must be a positive number"),
    ({"trial_time": {"cnn": 1.0}}, "trial_time gives no time for model(s) lr"),
])
def test_bad_arguments(scores, kwargs, message):
    with pytest.raises(ValueError) as info:
        tables.evp_curves(scores, **kwargs)
    assert message in str(info.value)


def test_std_is_the_plug_in_sd_of_the_max(scores):
    from itertools import product

    x = np.array([0.2, 0.5, 0.9])
    table = tables.evp_curves({"m": x})
    maxima = np.array([max(c) for c in product(x, repeat=2)])
    assert table.set_index("n").loc[2, "std"] == pytest.approx(maxima.std(), rel=1e-12)
    assert isinstance(table, pd.DataFrame)


def test_a_target_the_curve_equals_is_reached_despite_rounding():
    # E[max of 1] of [0.6, 0.7] is 0.65, computed as 0.6499999999999999: exact comparison reported n = 2.
    c = tables.evp_curves({"b": [0.6, 0.7]})
    assert c["expected_max"].iloc[0] < 0.65
    assert tables.budget_to_target(c, 0.65)["n"].tolist() == [1]
    assert np.isnan(tables.budget_to_target(c, 0.6750001)["n"].iloc[0])  # a target above the curve is not
