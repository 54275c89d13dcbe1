"""The noisy quadratic fit (maximum product of spacings on a censored tail) and its parametric bootstrap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from simstudy.distributions import InvalidParameter, fitting
from simstudy.distributions.parametric import NoisyQuadratic, Quadratic
from simstudy.stats import parametric_fit as pf


def objective(ys, t, law):
    """The grouped-data log product of spacings of a concave law (the quantity the fit maximizes)."""
    pts, wts = pf._buckets(np.sort(ys)[None], np.array([t]))
    x = np.array([[law.b, np.log(law.b - law.a), np.log(law.o) if law.o > 0 else -50.0]])
    return -float(pf._objective(x, pts, wts, np.array([float(law.c)]), law.o == 0)[0][0])


@pytest.mark.parametrize("c, o, seed", [(1, 0.01, 11), (3, 0.01, 12), (2, 0.004, 13)])
def test_fit_recovers_the_law_from_a_large_sample(c, o, seed):
    true = NoisyQuadratic(0.5, 0.9, c, o)
    ys = true.sample(2000, rng=np.random.default_rng(seed))
    law = fitting.fit(ys).law
    # Noise small beside b - a = 0.4 (ratios 0.01-0.025): c and b are well identified at n = 2000 (with a
    # ratio of 0.125, c = 4 fits as 5 and b is 0.06 off: the law's parameters trade off, the curve does not).
    assert law.c == c
    # b's standard error at n = 2000 is under 0.005 here.
    assert abs(law.b - 0.9) < 0.01
    assert abs(law.o - o) < 0.5 * o


def test_fit_is_location_scale_equivariant_and_mirrors_for_convex_laws():
    ys = NoisyQuadratic(0.0, 1.0, 2, 0.05).sample(300, rng=np.random.default_rng(21))
    base = fitting.fit(ys).law
    moved = fitting.fit(3.0 + 2.0 * ys).law
    assert moved.c == base.c
    np.testing.assert_allclose([moved.a, moved.b, moved.o], [3 + 2 * base.a, 3 + 2 * base.b, 2 * base.o],
                               rtol=1e-4, atol=1e-4)
    # Minimizing: -Y is convex(-b, -a, c, o) when Y is concave(a, b, c, o).
    t = float(np.quantile(ys, 0.5))
    mirrored = fitting.fit(-ys, limits=(-np.inf, -t), constraints={"convex": True}).law
    concave = fitting.fit(ys, limits=(t, np.inf)).law
    assert mirrored.convex and mirrored.c == concave.c
    np.testing.assert_allclose([mirrored.a, mirrored.b, mirrored.o], [-concave.b, -concave.a, concave.o],
                               rtol=1e-6, atol=1e-9)


def test_the_fit_is_the_best_c_of_its_own_search_and_beats_the_truth():
    true = NoisyQuadratic(0.0, 1.0, 3, 0.02)
    ys = true.sample(400, rng=np.random.default_rng(22))
    res = fitting.fit(ys)
    assert res.objective == pytest.approx(max(res.by_c.values()))
    assert res.by_c[res.law.c] == res.objective
    # The maximizer scores at least as well as the true parameters.
    assert objective(ys, res.threshold, res.law) >= objective(ys, res.threshold, true) - 1e-9
    assert res.n == 400 and res.n_tail == 200 and res.converged


def test_noise_free_scores_fit_with_little_noise_and_o_can_be_fixed_at_zero():
    ys = Quadratic(0.0, 1.0, 2).sample(500, rng=np.random.default_rng(23))
    res = fitting.fit(ys)
    assert res.law.c == 2 and res.law.o < 0.01  # a little noise may fit a sample better than none
    fixed = fitting.fit(ys, constraints={"o": 0, "c": [2]})
    assert fixed.law.o == 0.0 and not fixed.hit_bound
    assert fixed.objective <= res.objective + 1e-9  # the noise-free law is inside the noisy family
    assert abs(fixed.law.b - 1.0) < 0.01
    on_boundary = fitting.fit(Quadratic(0.0, 1.0, 2).sample(500, rng=np.random.default_rng(29)))
    assert on_boundary.hit_bound and on_boundary.law.o == 0.0


def test_ties_and_a_fixed_score_threshold():
    ys = np.round(NoisyQuadratic(0.6, 0.9, 2, 0.01).sample(300, rng=np.random.default_rng(24)), 3)
    assert np.unique(ys).size < ys.size  # ties, as accuracies rounded to 3 digits have
    res = fitting.fit(ys, threshold=pf.Threshold(quantile=None, score=0.8))
    assert res.threshold == 0.8 and res.n_tail == int((ys > 0.8).sum())
    assert np.isfinite(res.objective) and res.law.b > ys.max() - 0.02


@pytest.mark.parametrize("kwargs, key", [
    (dict(threshold=pf.Threshold(quantile=0.99)), "threshold"),
    (dict(limits=(0.95, np.inf)), "threshold"),
    (dict(constraints={"c": 11}), "constraints.c"),
    (dict(constraints={"a": 0.1}), "constraints"),
    (dict(constraints={"o": 0.1}), "constraints.o"),
    (dict(limits=(-np.inf, 0.8)), "limits"),
])
def test_bad_input_is_one_line_naming_the_key(kwargs, key):
    ys = NoisyQuadratic(0.6, 0.9, 2, 0.01).sample(100, rng=np.random.default_rng(25))
    with pytest.raises(InvalidParameter) as info:
        fitting.fit(ys, **kwargs)
    assert str(info.value).startswith(key) and "\n" not in str(info.value)


def test_non_finite_scores_are_refused():
    with pytest.raises(InvalidParameter, match="^ys must all be finite"):
        fitting.fit([0.5, np.nan, 0.7] * 10)


def test_threshold_rule_validates():
    with pytest.raises(InvalidParameter, match="^threshold.quantile"):
        pf.Threshold(quantile=1.0)
    with pytest.raises(InvalidParameter, match="^threshold must be"):
        pf.Threshold(quantile=0.5, score=0.8)


@pytest.mark.system
def test_bootstrap_is_the_same_for_any_number_of_jobs():
    ys = NoisyQuadratic(0.0, 1.0, 2, 0.02).sample(60, rng=np.random.default_rng(26))
    res = fitting.fit(ys)
    ks = np.array([1.0, 60.0, 6000.0])
    one = fitting.parametric_bootstrap(res, ks, n_boot=12, seed=3, chunk=4, n_jobs=1, mean=False)
    two = fitting.parametric_bootstrap(res, ks, n_boot=12, seed=3, chunk=4, n_jobs=2, mean=False)
    np.testing.assert_array_equal(one.replicates["b"], two.replicates["b"])
    np.testing.assert_array_equal(one.median_band, two.median_band)
    assert one.b_interval[0] <= res.law.b <= one.b_interval[1] or one.failed > 0
    # The curves at k far past n stay below the upper end of b's interval plus the noise's reach.
    assert np.all(one.median_band[0] <= one.median_band[1])


def test_bootstrap_curves_match_the_laws_own():
    law = NoisyQuadratic(0.2, 0.9, 3, 0.03)
    ks = np.array([1.0, 7.0, 300.0])
    med, avg = pf.curves(np.array([law.a]), np.array([law.b]), np.array([law.c]), np.array([law.o]), False, ks)
    np.testing.assert_allclose(med[0], law.quantile_tuning_curve(ks), atol=1e-10)
    np.testing.assert_allclose(avg[0], law.mean_tuning_curve(ks), atol=1e-10)
    convex = NoisyQuadratic(0.2, 0.9, 3, 0.03, convex=True)
    med, avg = pf.curves(np.array([convex.a]), np.array([convex.b]), np.array([3]), np.array([0.03]), True, ks)
    np.testing.assert_allclose(med[0], convex.quantile_tuning_curve(ks, minimize=True), atol=1e-10)
    np.testing.assert_allclose(avg[0], convex.mean_tuning_curve(ks, minimize=True), atol=1e-10)
    for q in (0.2, 0.9):  # away from the median, where q and 1 - q differ
        med, _ = pf.curves(np.array([convex.a]), np.array([convex.b]), np.array([3]), np.array([0.03]), True, ks,
                            q=q, mean=False)
        np.testing.assert_allclose(med[0], convex.quantile_tuning_curve(ks, q, minimize=True), atol=1e-10)
        med, _ = pf.curves(np.array([law.a]), np.array([law.b]), np.array([3]), np.array([0.03]), False, ks,
                            q=q, mean=False)
        np.testing.assert_allclose(med[0], law.quantile_tuning_curve(ks, q), atol=1e-10)


@pytest.mark.heavy
def test_bootstrap_interval_for_b_covers_at_its_level_when_well_specified():
    """30 samples of 80 from a noisy quadratic (seed 27), each with a 20-replicate bootstrap: the 80%
    percentile intervals for b cover the true b in a share whose Clopper-Pearson 99.9% interval contains 0.8
    (a wide check: it catches a broken interval, e.g. one that never covers, not a few points of
    miscalibration; the parametric_audit study measures coverage at scale)."""
    true = NoisyQuadratic(0.5, 0.9, 2, 0.01)
    reps, n = 30, 80
    x = np.sort(true.sample((reps, n), rng=np.random.default_rng(27)), axis=1)
    rule = pf.Threshold()
    fits = pf.fit_batch(x, rule.of(x))
    covered = 0
    for i in range(reps):
        law = NoisyQuadratic(fits["a"][i], fits["b"][i], int(fits["c"][i]), fits["o"][i])
        boot = pf.bootstrap_chunk(law, n, rule, pf.C_RANGE, fits["x"][i], np.array([80.0]), 20,
                                  np.random.SeedSequence(27, spawn_key=(i,)), False)
        lo, hi = np.quantile(boot["b"][boot["ok"]], [0.1, 0.9])
        covered += lo <= 0.9 <= hi
    ci = stats.binomtest(covered, reps).proportion_ci(0.999, method="exact")
    assert ci.low <= 0.8 <= ci.high, (covered, reps)


@pytest.mark.heavy
def test_same_result_as_opda_on_its_own_objective():
    """opda 0.8.0's fit and ours maximize the same product of spacings: ours scores at least as well."""
    parametric = pytest.importorskip("opda.parametric")
    ys = NoisyQuadratic(0.0, 1.0, 3, 0.05).sample(96, rng=np.random.default_rng(28))
    t = float(np.quantile(ys, 0.5))
    ours = fitting.fit(ys, limits=(t, np.inf)).law
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = parametric.NoisyQuadraticDistribution.fit(ys, limits=(t, np.inf), constraints={"convex": False},
                                                           generator=np.random.default_rng(0))
    as_ours = NoisyQuadratic(theirs.a, theirs.b, int(theirs.c), theirs.o)
    assert objective(ys, t, ours) >= objective(ys, t, as_ours) - 1e-6


def test_the_best_score_can_be_bounded_and_the_bootstrap_keeps_the_bound():
    ys = NoisyQuadratic(0.5, 0.9, 4, 0.03).sample(150, rng=np.random.default_rng(30))
    free = fitting.fit(ys)
    cap = free.law.b - 0.05  # well below the free fit's b
    bound = fitting.fit(ys, constraints={"b": (None, cap)})
    assert bound.law.b <= cap + 1e-12
    assert bound.hit_bound == (bound.law.b >= cap - 1e-9)
    assert bound.objective <= free.objective + 1e-9
    boot = fitting.parametric_bootstrap(bound, [150.0], n_boot=10, seed=4, mean=False)
    assert np.nanmax(boot.replicates["b"]) <= cap + 1e-12
    # A loss: the convex fit's best score a is bounded from below.
    loss = fitting.fit(-ys, limits=(-np.inf, -float(np.quantile(ys, 0.5))),
                  constraints={"convex": True, "a": (-cap, None)})
    assert loss.law.a >= -cap - 1e-12


@pytest.mark.parametrize("constraints, key", [({"a": (None, 1.0)}, "constraints.a"),
                                              ({"b": (0.5, None)}, "constraints.b"),
                                              ({"b": 1.0}, "constraints.b")])
def test_only_the_best_score_can_be_bounded_and_from_one_side(constraints, key):
    ys = NoisyQuadratic(0.6, 0.9, 2, 0.01).sample(60, rng=np.random.default_rng(31))
    with pytest.raises(InvalidParameter) as info:
        fitting.fit(ys, constraints=constraints)
    assert str(info.value).startswith(key)


def test_a_tail_too_large_for_memory_is_refused_before_fitting(monkeypatch):
    monkeypatch.setattr(pf, "MAX_TAIL", 100)
    ys = NoisyQuadratic(0.6, 0.9, 2, 0.01).sample(400, rng=np.random.default_rng(32))
    with pytest.raises(InvalidParameter, match="^threshold leaves 200 of 400 scores above it; a fit takes at most 100"):
        fitting.fit(ys)


def test_rows_beyond_the_memory_budget_are_fitted_in_blocks_with_the_same_numbers(monkeypatch):
    x = np.sort(NoisyQuadratic(0.6, 0.9, 2, 0.01).sample((6, 40), rng=np.random.default_rng(33)), axis=1)
    t = pf.Threshold().of(x)
    whole = pf.fit_batch(x, t, cs=(1, 2))
    monkeypatch.setattr(pf, "_MEMORY_BUDGET", 2 * 22 * pf._BYTES_PER_POINT * 2)  # two rows per block
    blocks = pf.fit_batch(x, t, cs=(1, 2))
    for key in ("a", "b", "c", "o", "objective"):
        np.testing.assert_array_equal(whole[key], blocks[key])


def test_fit_minimize_is_the_convex_fit_the_mirror_of_the_negated_scores(rng):
    # losses near their optimum: the convex law with a = 0.1 the best (lowest) score possible
    loss = NoisyQuadratic(0.1, 0.4, 3, 0.01, convex=True).sample(60, rng=rng)
    mine = fitting.fit(loss, constraints={"c": 3}, minimize=True)
    spelled = fitting.fit(loss, constraints={"c": 3, "convex": True})
    mirror = fitting.fit(-loss, constraints={"c": 3})
    assert mine.law.convex and (mine.law.a, mine.law.b, mine.law.o) == (spelled.law.a, spelled.law.b, spelled.law.o)
    assert (mine.law.a, mine.law.b) == (-mirror.law.b, -mirror.law.a) and mine.threshold == -mirror.threshold
    assert abs(mine.law.a - 0.1) < 0.05  # the best score recovered, from below the censored highest half


def test_fit_minimize_refuses_a_concave_constraint_and_a_non_bool():
    ys = np.linspace(0.1, 0.9, 40)
    with pytest.raises(InvalidParameter, match="constraints.convex"):
        fitting.fit(ys, constraints={"convex": False}, minimize=True)
    with pytest.raises(InvalidParameter, match="minimize"):
        fitting.fit(ys, minimize="yes")
