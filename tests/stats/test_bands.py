"""Confidence bands for CDFs and tuning curves (Lourie, Cho & He)."""

import logging
import warnings

import numpy as np
import pytest
from scipy import stats

from simstudy import tables  # evidence_table: the frame of two models' bands, above the kernels
from simstudy.stats import bands

log = logging.getLogger(__name__)
DIST = stats.beta(4, 2)  # a continuous score distribution on [0, 1]


def coverage_interval(hits: int, reps: int, level: float = 0.999):
    ci = stats.binomtest(hits, reps).proportion_ci(level, method="exact")
    return ci.low, ci.high


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 48])
@pytest.mark.parametrize("confidence", [0.5, 0.9])
def test_cdf_bands_have_exact_coverage(n, confidence):
    seed = 1000 * n + int(100 * confidence)
    log.info("seed %d", seed)
    rng = np.random.default_rng(seed)
    reps = 2000
    samples = DIST.rvs(size=(reps, n), random_state=rng)
    for method in bands.METHODS:
        hits = sum(bands.cdf_bands(y, confidence, method, low=0, high=1).covers(DIST.cdf) for y in samples)
        low, high = coverage_interval(hits, reps)
        log.info("%s n=%d confidence=%.2f: %d/%d", method, n, confidence, hits, reps)
        if method == "dkw":
            assert high >= confidence  # conservative: at least nominal
        else:
            assert low <= confidence <= high  # exact


def median_curve(k):
    return DIST.ppf(0.5 ** (1 / np.asarray(k, dtype=float)))


def test_proposition_1_sample_by_sample(rng):
    """The median band covers the median tuning curve (for every k) exactly when the CDF band covers F."""
    outcomes = set()
    for n in (5, 20):
        for y in DIST.rvs(size=(400, n), random_state=rng):
            for method in ("ks", "ld_highest_density"):
                cdf = bands.cdf_bands(y, 0.5, method, low=0, high=1)
                covers_cdf, covers_curve = cdf.covers(DIST.cdf), cdf.covers_quantile_curve(median_curve)
                assert covers_cdf == covers_curve
                outcomes.add(covers_cdf)
    assert outcomes == {True, False}  # both cases occurred


def test_integer_k_misses_violations(rng):
    """Checking only k = 1..n would call some violated bands covering (why issue 5 checks jump points)."""
    missed = 0
    for y in DIST.rvs(size=(300, 10), random_state=rng):
        tc = bands.tuning_curve_bands(y, 0.5, "median", "ld_highest_density", low=0, high=1, ks=np.arange(1, 11))
        on_grid = np.all((tc.lower <= median_curve(tc.ks)) & (median_curve(tc.ks) <= tc.upper))
        missed += on_grid and not tc.cdf.covers_quantile_curve(median_curve)
    assert missed > 0


def test_point_estimate_is_the_ecdf_tuning_curve():
    y = np.array([0.2, 0.5, 0.6, 0.9])
    tc = bands.tuning_curve_bands(y, 0.8, "median", "ks", ks=[1, 2, 3.5])
    # eCDF^k >= 0.5 first at: k=1: F=0.5 at 0.5; k=2: F=0.75 (0.5625) at 0.6; k=3.5: 0.75^3.5 < 0.5 -> 0.9.
    np.testing.assert_array_equal(tc.point, [0.5, 0.6, 0.9])
    mean = bands.tuning_curve_bands(y, 0.8, "mean", "ks", ks=[1, 2], low=0, high=1)
    assert mean.point[0] == pytest.approx(y.mean())
    assert mean.point[1] == pytest.approx(np.mean([max(a, b) for a in y for b in y]))


@pytest.mark.parametrize("kind", ["median", "mean"])
@pytest.mark.parametrize("method", bands.METHODS)
def test_bands_monotone_in_k_and_nested_in_confidence(rng, kind, method):
    y = DIST.rvs(size=30, random_state=rng)
    ks = np.linspace(0.5, 60, 200)
    narrow = bands.tuning_curve_bands(y, 0.5, kind, method, ks=ks, low=0, high=1)
    wide = bands.tuning_curve_bands(y, 0.9, kind, method, ks=ks, low=0, high=1)
    for tc in (narrow, wide):
        for curve in (tc.lower, tc.point, tc.upper):
            assert np.all(np.diff(curve) >= -1e-12)
        assert np.all(tc.lower <= tc.point + 1e-12) and np.all(tc.point <= tc.upper + 1e-12)
    assert np.all(wide.lower <= narrow.lower + 1e-12) and np.all(narrow.upper <= wide.upper + 1e-12)


def test_ld_narrower_than_dkw_and_ks_at_the_extremes(rng):
    y = DIST.rvs(size=48, random_state=rng)
    width = {m: (lambda b: b.upper - b.lower)(bands.cdf_bands(y, 0.8, m)) for m in bands.METHODS}
    for ld in ("ld_equal_tailed", "ld_highest_density"):
        for const in ("dkw", "ks"):
            assert width[ld][0] < width[const][0] and width[ld][-2] < width[const][-2]


def test_highest_density_no_wider_and_bounds_more_of_the_curve(rng):
    for n in (6, 48, 200):
        y = DIST.rvs(size=n, random_state=rng)
        hd = bands.cdf_bands(y, 0.8, "ld_highest_density", low=0, high=1)
        et = bands.cdf_bands(y, 0.8, "ld_equal_tailed", low=0, high=1)
        assert np.sum(hd.upper - hd.lower) <= np.sum(et.upper - et.lower)
        ks = np.arange(1, 5 * n + 1)
        trivial = {name: np.argmax(np.append(tc.upper >= 1, True))
                   for name, tc in (("hd", bands.tuning_curve_bands(y, 0.8, ks=ks, method="ld_highest_density",
                                                                    low=0, high=1)),
                                    ("et", bands.tuning_curve_bands(y, 0.8, ks=ks, method="ld_equal_tailed",
                                                                    low=0, high=1)))}
        assert trivial["hd"] >= trivial["et"]


def test_any_quantile_and_real_k(rng):
    y = DIST.rvs(size=25, random_state=rng)
    q80 = bands.tuning_curve_bands(y, 0.8, "quantile", quantile=0.8, ks=[0.5, 1.5, 7.25])
    med = bands.tuning_curve_bands(y, 0.8, "median", ks=[0.5, 1.5, 7.25])
    assert np.all(q80.point >= med.point)


def test_cdf_band_values_between_scores_and_at_bounds(rng):
    y = np.sort(DIST.rvs(size=10, random_state=rng))
    cb = bands.cdf_bands(y, 0.9, "ks", low=0, high=1)
    lower, upper = cb.at([-0.1, 0.0, (y[3] + y[4]) / 2, 1.0])
    assert lower[0] == 0 and upper[0] == 0          # below the support
    assert upper[1] == cb.upper_below                # at low, before the first score
    assert lower[2] == cb.lower[3] and upper[2] == cb.upper[3]
    assert lower[3] == 1 and upper[3] == 1            # at the top of the support


@pytest.mark.parametrize("call, message", [
    (lambda: bands.cdf_bands([0.5]), "need at least 2 scores"),
    (lambda: bands.cdf_bands([0.5, np.nan]), "scores must be finite numbers, got nan"),
    (lambda: bands.cdf_bands([0.5, np.inf]), "scores must be finite numbers, got inf"),
    (lambda: bands.cdf_bands([0.5, 1.5], low=0, high=1), "score 1.5 is outside the support"),
    (lambda: bands.cdf_bands([0.5, 0.6], confidence=1.0), "confidence must be strictly between 0 and 1"),
    (lambda: bands.cdf_bands([0.5, 0.6], confidence=0), "confidence must be strictly between 0 and 1"),
    (lambda: bands.cdf_bands([0.5, 0.6], method="bootstrap"), "unknown band method 'bootstrap'"),
    (lambda: bands.tuning_curve_bands([0.5, 0.6], kind="mode"), "unknown tuning-curve kind 'mode'"),
    (lambda: bands.tuning_curve_bands([0.5, 0.6], kind="mean"), "vacuous without finite bounds"),
    (lambda: bands.tuning_curve_bands([0.5, 0.6], kind="mean", low=0), "vacuous without finite bounds"),
    (lambda: bands.tuning_curve_bands([0.5, 0.6], ks=[0, 1]), "ks must be finite budgets > 0"),
    (lambda: bands.tuning_curve_bands([0.5, 0.6], kind="quantile", quantile=1), "quantile must be strictly"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)


def test_ties_warn():
    with pytest.warns(UserWarning, match="ties"):
        bands.cdf_bands([0.5, 0.5, 0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bands.cdf_bands([0.5, 0.6, 0.7])


def test_ties_warning_points_at_the_callers_line():
    # Both public entry points: the warning must name this file, not simstudy/stats/bands.py.
    for call in (lambda: bands.cdf_bands([0.5, 0.5, 0.7]), lambda: bands.tuning_curve_bands([0.5, 0.5, 0.7])):
        with pytest.warns(UserWarning, match="ties") as record:
            call()
        assert [w.filename for w in record] == [__file__]


def test_trivial_budget_is_where_the_upper_band_reaches_high():
    y = np.random.default_rng(20261123).beta(20, 3, size=30)
    k_star = bands.trivial_budget(30, 0.8, "ks")
    tc = bands.tuning_curve_bands(y, 0.8, method="ks", ks=[k_star * 0.999, k_star * 1.001], low=0, high=1)
    assert tc.upper[0] < 1 and tc.upper[1] == 1
    with pytest.raises(ValueError, match="n \\(the sample size\\) must be an integer >= 1, got 0"):
        bands.trivial_budget(0, 0.8, "ks")


def _bands_at(ks, lower, point, upper):
    """TuningCurveBands with given values (only the fields evidence() reads matter)."""
    return bands.TuningCurveBands(ks=np.asarray(ks, float), point=np.asarray(point, float),
                                  lower=np.asarray(lower, float), upper=np.asarray(upper, float), kind="median",
                                  quantile=0.5, confidence=0.8, method="ks", cdf=None)


def test_evidence_table_and_summary_runs():
    ks = [1, 2, 3, 4, 5]
    # b fixed at point 0.5, band [0.45, 0.55]; a moves: overlap with both points inside (none), a's band
    # excludes b's point (weak) twice, each excludes the other's point (fair), apart (strong).
    b = _bands_at(ks, [0.45] * 5, [0.5] * 5, [0.55] * 5)
    a = _bands_at(ks, [0.46, 0.52, 0.52, 0.54, 0.60], [0.52, 0.54, 0.54, 0.58, 0.70],
                  [0.56, 0.60, 0.60, 0.62, 0.80])
    table = tables.evidence_table(a, b, "big", "small")
    assert list(table.columns) == ["k", "evidence", "leader"]
    assert list(table["evidence"]) == ["none", "weak", "weak", "fair", "strong"]
    assert list(table["leader"]) == ["big"] * 5
    header, *lines = bands.evidence_summary(table)
    assert header.startswith("evidence (Lourie et al.'s heuristic")
    assert lines == ["k = 1: no evidence either way", "k = 2..3: weak evidence big is better",
                     "k = 4: fair evidence big is better", "k = 5: strong evidence big is better"]


def test_evidence_summary_names_ties_and_a_single_long_run():
    ks = [1, 2, 3]
    a = _bands_at(ks, [0.4] * 3, [0.5] * 3, [0.6] * 3)
    table = tables.evidence_table(a, a, "a", "b")
    assert list(table["leader"]) == ["tie"] * 3
    assert bands.evidence_summary(table)[1:] == ["k = 1..3: no evidence either way"]
    with pytest.raises(ValueError, match="lacks column\\(s\\) leader"):
        bands.evidence_summary(table.drop(columns="leader"))


@pytest.mark.parametrize("shape", [(2, 5), (5, 1), (1, 5)])
def test_a_batch_of_samples_is_refused_not_pooled(shape):
    y = np.random.default_rng(9501).uniform(size=shape)
    message = f"scores must be one sample (a 1-d array), got shape {shape}: pass one sample at a time, e.g. scores[i]"
    for call in (lambda: bands.cdf_bands(y, 0.8, "ks"), lambda: bands.tuning_curve_bands(y, 0.8, ks=[1, 2])):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


@pytest.mark.parametrize("n", [3, 50, 200])
def test_ld_highest_density_at_a_confidence_next_to_one(n):
    # 0.999999999 solves pointwise levels within 1e-10 of 1, where an upper tail sits at the resolution of
    # s + c and the highest-density ends came out a hair out of order (a ValueError inside the solver).
    from simstudy.stats import boundary

    intervals = boundary.ld_pointwise_level(n, 0.999999999, "highest_density")
    assert np.all(np.diff(intervals.low) >= 0) and np.all(np.diff(intervals.high) >= 0)
    assert abs(intervals.achieved - 0.999999999) < 1e-13  # exact coverage, recomputed on the bounds used
    y = np.random.default_rng(9600 + n).uniform(size=n)
    band = bands.cdf_bands(y, 0.999999999, "ld_highest_density", low=0, high=1)
    assert np.all(band.lower <= band.upper) and band.covers(lambda x: np.clip(x, 0, 1))


def _opda_curves(x, q, kind, method, ks, minimize):
    """opda's curves of its own CDF bands of ``x`` on [0, 1]: (point, lower, upper), the lower from the upper
    CDF band (a larger CDF has the smaller quantiles, of the maximum and of the minimum alike)."""
    opda = pytest.importorskip("opda.nonparametric")
    with warnings.catch_warnings():  # opda's warning on ties
        warnings.simplefilter("ignore")
        lo, pt, hi = opda.EmpiricalDistribution.confidence_bands(x, 0.7, 0.0, 1.0, method=method)
    if kind == "mean":
        return [d.average_tuning_curve(ks, minimize=minimize) for d in (pt, hi, lo)]
    return [d.quantile_tuning_curve(ks, q, minimize=minimize) for d in (pt, hi, lo)]


@pytest.mark.parametrize("method", ["dkw", "ks"])
@pytest.mark.parametrize("minimize", [True, False])
def test_tuning_curve_bands_are_opdas_on_scores_with_atoms(rng, method, minimize):
    """Issue 34: one convention for the quantiles of the best, the maximum's and the minimum's (opda's
    left-continuous inverse). Scores with ties and n = 30, so that q^(1/k) or 1 - (1 - q)^(1/k) falls on the
    empirical CDF's jumps (k = 1 at the median); the closed-form bands are opda's own to the bit."""
    x = np.round(rng.beta(3, 8, size=30), 2)
    ks = np.arange(1, 41, dtype=np.float64)
    for kind, q in (("median", 0.5), ("quantile", 0.2), ("quantile", 0.8), ("mean", 0.5)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = bands.tuning_curve_bands(x, 0.7, kind, method, ks=ks, quantile=q, low=0, high=1, minimize=minimize)
        assert t.minimize is minimize
        for mine, theirs, what in zip((t.point, t.lower, t.upper), _opda_curves(x, q, kind, method, ks, minimize),
                                      ("point", "lower", "upper")):
            if kind == "mean":
                np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12, err_msg=what)
            else:
                np.testing.assert_array_equal(mine, theirs, err_msg=f"{kind} {q} {what}")


def test_the_median_of_the_minimum_of_four_scores_is_the_lower_atom():
    """Issue 34's case: scores 0.1, 0.2, 0.3, 0.4; the median of the minimum of one falls on F = 0.5, so it is
    0.2 (truth.quantile_tuning_curve, opda), not the mirror's 0.3; by k = 3 the minimum's median is 0.1."""
    from simstudy.distributions import Bag
    from simstudy.stats import truth

    x = np.array([0.1, 0.2, 0.3, 0.4])
    t = bands.tuning_curve_bands(x, 0.7, method="dkw", ks=[1, 2, 3], low=0, high=1, minimize=True)
    assert t.point.tolist() == [0.2, 0.2, 0.1]
    assert t.point.tolist() == truth.quantile_tuning_curve(Bag(x), [1, 2, 3], minimize=True).tolist()
    assert (t.lower <= t.point).all() and (t.point <= t.upper).all()
    assert bands.tuning_curve(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.25, 0.5, 0.75, 1.0]), [1], minimize=True) \
        .tolist() == [0.2]


def test_evidence_between_bands_of_the_minimum_puts_the_lower_model_ahead():
    low_losses, high_losses = np.linspace(0.10, 0.20, 20), np.linspace(0.80, 0.90, 20)
    a, b = (bands.tuning_curve_bands(x, 0.8, ks=[1, 2, 3], low=0, high=1, minimize=True)
            for x in (low_losses, high_losses))
    table = tables.evidence_table(a, b, "low", "high")
    assert list(table["leader"]) == ["low"] * 3 and list(table["evidence"]) == ["strong"] * 3
    level, leader = bands.evidence(b, a)
    assert leader.tolist() == [-1, -1, -1]
    maximum = bands.tuning_curve_bands(high_losses, 0.8, ks=[1, 2, 3], low=0, high=1)
    with pytest.raises(ValueError, match="one model's bands are of the minimum and the other's of the maximum"):
        bands.evidence(a, maximum)


def test_minimize_must_be_a_bool():
    with pytest.raises(TypeError, match="minimize must be True or False, got 'yes'"):
        bands.tuning_curve_bands([0.1, 0.2, 0.3], minimize="yes")


@pytest.mark.parametrize("method", ["dkw", "ks", "ld_equal_tailed"])
def test_cdf_bands_minimize_are_the_same_bands_of_a_minimized_score(rng, method):
    # a CDF does not depend on which direction is better: the same numbers, recorded as of a minimized score
    x = rng.uniform(size=15)
    a, b = bands.cdf_bands(x, 0.8, method, low=0, high=1), bands.cdf_bands(x, 0.8, method, low=0, high=1, minimize=True)
    assert (a.minimize, b.minimize) == (False, True)
    for field in ("y", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert a.upper_below == b.upper_below
    # the tuning-curve bands take the minimize of the one CDF band they derive from
    t = bands.tuning_curve_bands(x, 0.8, method=method, low=0, high=1, minimize=True)
    assert t.cdf.minimize is True and t.minimize is True
    np.testing.assert_array_equal(t.cdf.lower, b.lower)


def test_cdf_bands_minimize_must_be_a_bool():
    with pytest.raises(TypeError, match="minimize must be True or False, got 'true'"):
        bands.cdf_bands([0.1, 0.2, 0.3], minimize="true")
