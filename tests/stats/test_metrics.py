import numpy as np
import pytest

from simstudy.stats import metrics


@pytest.fixture
def errors(rng):
    R, E, N = 4000, 3, 5
    shared = rng.normal(size=(R, 1, N))
    noise = rng.standard_t(5, size=(R, E, N)) * np.arange(1, E + 1)[None, :, None]
    return 0.01 + 0.02 * shared + 0.01 * noise


def test_measures_match_direct_numpy(errors):
    R = errors.shape[0]
    p = metrics.performance(metrics.moment_gram(errors.transpose(2, 1, 0)), truth=np.full(errors.shape[2], 0.5))
    d = errors
    var = d.var(axis=0, ddof=1)
    np.testing.assert_allclose(p.measures["bias"][0], d.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(p.measures["mean"][0], 0.5 + d.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(p.measures["bias"][1], np.sqrt(var / R), rtol=1e-10)
    np.testing.assert_allclose(p.measures["variance"][0], var, rtol=1e-10)
    m4 = ((d - d.mean(axis=0)) ** 4).mean(axis=0)
    np.testing.assert_allclose(p.measures["variance"][1], np.sqrt((m4 - var**2 * (R - 3) / (R - 1)) / R),
                               rtol=1e-8)
    np.testing.assert_allclose(p.measures["mse"][0], (d**2).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(p.measures["mse"][1], (d**2).std(axis=0, ddof=1) / np.sqrt(R), rtol=1e-9)
    np.testing.assert_allclose(p.measures["empse"][0], np.sqrt(var), rtol=1e-10)


def test_paired_differences_match_per_replicate_quantities(errors):
    R = errors.shape[0]
    p = metrics.performance(metrics.moment_gram(errors.transpose(2, 1, 0)), truth=np.zeros(errors.shape[2]))
    assert p.pairs == ((1, 0), (2, 0), (2, 1))
    for k, (e, f) in enumerate(p.pairs):
        a, b = errors[:, e], errors[:, f]
        diff = a - b
        np.testing.assert_allclose(p.paired["bias"][0][k], diff.mean(axis=0), rtol=1e-10)
        np.testing.assert_allclose(p.paired["bias"][1][k], diff.std(axis=0, ddof=1) / np.sqrt(R), rtol=1e-8)
        z = (a - a.mean(axis=0)) ** 2 - (b - b.mean(axis=0)) ** 2
        np.testing.assert_allclose(p.paired["variance"][0][k], a.var(axis=0, ddof=1) - b.var(axis=0, ddof=1),
                                   rtol=1e-9)
        np.testing.assert_allclose(p.paired["variance"][1][k], z.std(axis=0, ddof=1) / np.sqrt(R), rtol=1e-7)
        w = a**2 - b**2
        np.testing.assert_allclose(p.paired["mse"][0][k], w.mean(axis=0), rtol=1e-10)
        np.testing.assert_allclose(p.paired["mse"][1][k], w.std(axis=0, ddof=1) / np.sqrt(R), rtol=1e-8)


def test_gram_is_additive_over_chunks(errors):
    whole = metrics.moment_gram(errors.transpose(2, 1, 0))
    parts = sum(metrics.moment_gram(errors[i : i + 700].transpose(2, 1, 0)) for i in range(0, errors.shape[0], 700))
    np.testing.assert_allclose(parts, whole, rtol=1e-12)


@pytest.mark.slow
def test_mcse_is_calibrated(rng):
    # The reported MCSE of the bias should match the spread of the bias over independent studies.
    studies = [metrics.performance(metrics.moment_gram(rng.exponential(size=(1, 1, 500))), np.zeros(1))
               for _ in range(400)]
    biases = np.array([s.measures["bias"][0][0, 0] for s in studies])
    mcses = np.array([s.measures["bias"][1][0, 0] for s in studies])
    variances = np.array([s.measures["variance"][0][0, 0] for s in studies])
    var_mcses = np.array([s.measures["variance"][1][0, 0] for s in studies])
    # Ratio of the spread across studies to the mean reported MCSE: 1 within sampling error of an SD from
    # 400 studies (relative SE about 1/sqrt(800) for the bias, larger for the heavy-tailed variance).
    assert biases.std(ddof=1) / mcses.mean() == pytest.approx(1.0, abs=0.15)
    assert variances.std(ddof=1) / var_mcses.mean() == pytest.approx(1.0, abs=0.3)


def test_needs_two_replicates():
    with pytest.raises(ValueError, match=">= 2"):
        metrics.performance(metrics.moment_gram(np.zeros((2, 1, 1))), np.zeros(2))


# The zip plot's kernels (Morris et al. 2019, §5.2): where the truth sits in each replicate's interval.


def test_centiles_rank_by_position_ties_in_replicate_order():
    centile, order = metrics.zip_centiles([0.3, -0.5, 0.3, -1.0])
    assert order.tolist() == [3, 1, 0, 2]
    assert centile.tolist() == [75.0, 50.0, 100.0, 25.0]


def test_position_of_a_wald_interval_is_abs_z_over_z_minus_one():
    z = np.array([-2.5, -1.0, 0.0, 0.5, 1.96, 3.0])
    position, side = metrics.interval_position(z - 1.96, z + 1.96, 0.0)  # estimate z, se 1, truth 0
    np.testing.assert_allclose(position, np.abs(z) / 1.96 - 1, atol=1e-15)
    assert ((position <= 0) == (np.abs(z) <= 1.96)).all()
    assert side.tolist() == [-1, -1, -1, 1, 1, 1]
    # the ranking is Morris et al.'s, by |z|
    assert metrics.zip_centiles(position)[1].tolist() == np.argsort(np.abs(z), kind="stable").tolist()


def test_position_sign_is_exact_at_the_edges():
    low = np.array([0.1, 0.1, np.nextafter(0.1, 0), np.nextafter(0.1, 1)])
    high = np.array([0.3, 0.1, 0.3, 0.3])
    position, _ = metrics.interval_position(low, high, 0.1)
    assert (position <= 0).tolist() == ((low <= 0.1) & (0.1 <= high)).tolist() == [True, True, True, False]
    assert position[3] > 0  # one ulp outside is outside
