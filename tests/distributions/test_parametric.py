"""The quadratic and noisy quadratic laws (simstudy.distributions.parametric): against opda 0.8.0, a 30-digit mpmath
reference, their own closed forms and simulation."""

import numpy as np
import pytest
from scipy import integrate, special

from simstudy.distributions import InvalidParameter, NoisyQuadratic, Quadratic
from simstudy.stats import truth

RATIOS = (0.001, 0.01, 0.1, 1.0)  # o / (b - a)
A, B = 0.6, 0.9

# -- against opda ---------------------------------------------------------------------------------------------
# opda 0.8.0 is accurate only in part of the grid. Measured here (a, b = 0.6, 0.9) against this module, itself
# within 1e-10 of the 30-digit reference below:
# - even c: its CDF within 3e-13, PDF within 2e-11 (relative), ppf and quantile tuning curves within 6e-9 of
#   b - a for p in [0.001, 0.99]; its average_tuning_curve off by up to 2.9e-6 (o/(b-a) = 1; 2e-6 at 0.001,
#   k = 30), even at k = 1, where the curve is the mean, known exactly (this module: 2e-14);
# - odd c: its CDF off by up to 8e-6 (c = 1, o/(b-a) = 0.001), its PDF by up to 5% at c = 1 with o/(b-a) <=
#   0.01 and 0.26% at 0.1 (7.8e-4 relative elsewhere: c = 9), its ppf by up to 2.9e-4 of b - a (c = 7, convex:
#   it inverts its CDF where the density is small), its quantile tuning curves by 5.1e-5 of b - a and its
#   average_tuning_curve by up to 1.9e-5 (c = 1, o/(b-a) = 1);
# - in the upper tail (p > 0.99) its ppf inverts the CDF, not the survival function, and loses digits.
# So the comparison holds to 1e-6 where opda is accurate (even c) and to its measured error at odd c.
P_GRID = np.concatenate(([0.001, 0.01], np.linspace(0.05, 0.95, 10), [0.99]))
KS = np.array([1.0, 2.0, 5.0, 10.0])  # q^(1/k) and 1 - (1 - q)^(1/k) stay inside [0.001, 0.99] for q below
OPDA_TOL = {  # (even c, odd c): the PDF's relative, ppf's and quantile curves' in units of b - a, else absolute
    "cdf": (1e-6, 1.5e-5), "pdf": (1e-6, 1.5e-3), "ppf": (1e-6, 4e-4), "quantile_curve": (1e-6, 1e-4),
    "mean_curve": (5e-6, 3e-5),
}


def _opda_law(c, r, convex):
    parametric = pytest.importorskip("opda.parametric")
    return parametric.NoisyQuadraticDistribution(A, B, c, r * (B - A), convex=convex)


@pytest.mark.parametrize("convex", [False, True])
@pytest.mark.parametrize("r", RATIOS)
@pytest.mark.parametrize("c", range(1, 11))
def test_cdf_pdf_and_quantiles_match_opda(c, r, convex):
    ref, law = _opda_law(c, r, convex), NoisyQuadratic(A, B, c, r * (B - A), convex)
    odd = c % 2
    y = law.ppf(P_GRID)
    np.testing.assert_allclose(ref.cdf(y), law.cdf(y), rtol=0, atol=OPDA_TOL["cdf"][odd])
    if not (c == 1 and r < 1):  # opda's PDF is off by up to 5% there
        np.testing.assert_allclose(ref.pdf(y), law.pdf(y), rtol=OPDA_TOL["pdf"][odd])
    np.testing.assert_allclose(ref.ppf(P_GRID), y, rtol=0, atol=OPDA_TOL["ppf"][odd] * (B - A))
    for q in (0.2, 0.5, 0.8):
        for minimize in (False, True):  # opda's default follows convex: always say which
            np.testing.assert_allclose(ref.quantile_tuning_curve(KS, q=q, minimize=minimize),
                                       law.quantile_tuning_curve(KS, q, minimize=minimize),
                                       rtol=0, atol=OPDA_TOL["quantile_curve"][odd] * (B - A),
                                       err_msg=f"q={q} {minimize}")


@pytest.mark.parametrize("convex", [False, True])
@pytest.mark.parametrize("r", RATIOS)
@pytest.mark.parametrize("c", [1, 2, 3, 6, 7, 10])
def test_mean_tuning_curve_matches_opda(c, r, convex):
    ref, law = _opda_law(c, r, convex), NoisyQuadratic(A, B, c, r * (B - A), convex)
    ks = np.array([1.0, 3.0, 30.0])
    for minimize in (False, True):
        np.testing.assert_allclose(ref.average_tuning_curve(ks, minimize=minimize),
                                   law.mean_tuning_curve(ks, minimize=minimize),
                                   rtol=0, atol=OPDA_TOL["mean_curve"][c % 2])
    # At k = 1 the curve is the mean, known in closed form (opda: off by up to 2.9e-6; the tanh-sinh rule here:
    # 8e-11 at c = 1 with little noise, where the quantile function turns sharply near b; 2e-12 elsewhere)
    for minimize in (False, True):
        assert abs(law.mean_tuning_curve([1.0], minimize=minimize)[0] - law.mean) < 1e-10


# -- against 30-digit quadrature ------------------------------------------------------------------------------
def _reference(y, c, r):
    """CDF and PDF of the standard concave law (a = 0, b = 1) at y, noise ratio r, to 30 digits."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    y, c, r = mp.mpf(y), mp.mpf(c), mp.mpf(r)
    mu = 1 - y  # V ~ Normal((b - y)/(b - a), o/(b - a))
    lo, hi = max(mp.mpf(0), mu - 12 * r), min(mp.mpf(1), mu + 12 * r)

    def moment(power):
        if lo >= hi:
            return mp.mpf(0)
        return mp.quad(lambda v: v ** power * mp.npdf(v, mu, r), [lo, (lo + hi) / 2, hi])

    return float(mp.ncdf(y / r) - moment(c / 2)), float(c / 2 * moment(c / 2 - 1))


# Three cases in the README suite (the corners: c = 1 with little noise, odd c, much noise); all 25 in the heavy lane.
_FAST_MP = {(1, 1e-6), (3, 1e-2), (10, 3.0)}


@pytest.mark.parametrize("c, r", [(c, r) if (c, r) in _FAST_MP else pytest.param(c, r, marks=pytest.mark.heavy)
                                  for c in (1, 2, 3, 5, 10) for r in (1e-6, 1e-4, 1e-2, 0.3, 3.0)])
def test_cdf_and_pdf_match_30_digit_quadrature(c, r):
    """To 1e-10 everywhere, including where opda is not (c = 1 with little noise); the PDF relative to its size."""
    law = NoisyQuadratic(0.0, 1.0, c, r)
    ys = np.concatenate((law.ppf(np.array([1e-6, 0.01, 0.3, 0.5, 0.9, 0.999])), [0.0, 0.5, 1.0 - 1e-5, 1.0]))
    for y in ys:
        cdf, pdf = _reference(y, c, r)
        assert abs(law.cdf(y) - cdf) < 1e-10, (y, float(law.cdf(y)), cdf)
        assert abs(law.pdf(y) - pdf) < 1e-10 * max(1.0, pdf), (y, float(law.pdf(y)), pdf)
        # The convex form is the mirror image: its CDF at a + b - y is the concave one's survival function.
        mirror = NoisyQuadratic(0.0, 1.0, c, r, convex=True)
        assert abs(mirror.sf(1.0 - y) - cdf) < 1e-10


# -- one law at many points (its table) against independent quadrature --------------------------------------
def _quad_reference(z, c, r):
    """CDF, survival function and PDF of the standard concave law (a = 0, b = 1) at z, noise ratio r, by
    scipy's adaptive quadrature in the noise's variable: ``F(z) = E[F_Q(z - r W)]``, W ~ Normal(0, 1), with
    ``v = 1 - z + r w`` the noise-free score's distance to b, ``F_Q = 1 - v^(c/2)`` for v in [0, 1].
    Independent of the package's rules (Gauss-Legendre after ``V = U^2``, tables); to about 1e-14."""
    p, mu = c / 2, 1.0 - z
    lo, hi = max(-mu / r, -40.0), min(z / r, 40.0)  # v in [0, 1]; the normal's mass beyond 40 is 0
    cdf, sf, pdf = special.ndtr(-mu / r), special.ndtr(-z / r), 0.0  # v < 0 (F_Q = 1), v > 1 (F_Q = 0)
    if lo < hi:
        opts = {"epsabs": 1e-16, "epsrel": 1e-13, "limit": 200, "points": [0.0] if lo < 0 < hi else None}

        def phi(w):
            return np.exp(-0.5 * w * w) / np.sqrt(2.0 * np.pi)

        # 1 - v^p from 1 - v = z - r w: no cancellation where v is near 1 (the lower tail)
        cdf += integrate.quad(lambda w: phi(w) * -np.expm1(p * np.log1p(max(r * w - z, -1.0))), lo, hi, **opts)[0]
        sf += integrate.quad(lambda w: phi(w) * max(mu + r * w, 0.0) ** p, lo, hi, **opts)[0]
        if c == 1 and lo > -40.0:  # v^(-1/2) is infinite at v = 0, w = lo: quad's weight for (w - lo)^(-1/2)
            pdf = p * r ** (p - 1) * integrate.quad(phi, lo, hi, weight="alg", wvar=(p - 1, 0.0), epsabs=1e-16,
                                                    epsrel=1e-13, limit=200)[0]
        else:
            pdf = p * integrate.quad(lambda w: phi(w) * max(mu + r * w, 0.0) ** (p - 1), lo, hi, **opts)[0]
    return cdf, sf, pdf


def test_cdf_sf_pdf_of_many_points_exact_to_1e_10():
    """One law at many points (from 20,000: its table), and at a few (quadrature per point), within 1e-10 of
    independent quadrature, absolute (the PDF relative to its size where over 1): every c, o/(b - a) from
    1e-6 to 30, in both tails, beyond the window the table covers, at 0 and 1 (where the noise-free law starts
    and ends) and a few r around them. Measured: 1e-13 (the PDF 3e-12)."""
    from simstudy.stats import quadratic

    ratios = (1e-6, 1e-3, 0.03, 0.3, 3.0, 30.0)
    filler = np.linspace(-1.0, 2.0, quadratic._TABLE_FROM)  # enough points for the table
    quadratic._table.cache_clear()
    for c in range(1, 11):
        for r in (ratios[c % 6], ratios[(c + 3) % 6]):
            law = NoisyQuadratic(0.0, 1.0, c, r)
            tails = law.ppf(np.array([1e-9, 1e-4, 0.5, 1 - 1e-4, 1 - 1e-9]))
            ys = np.concatenate((tails, [0.0, 1e-3, 0.3, 0.9, 1.0 - 1e-5, 1.0],
                                 r * np.array([-12.0, -6.0, -2.0, 0.5, 3.0]),
                                 1.0 + r * np.array([-3.0, -0.5, 1.0, 6.0, 12.0])))
            tabulated = [f(np.concatenate((ys, filler)))[: ys.size] for f in (law.cdf, law.sf, law.pdf)]
            per_point = [f(ys) for f in (law.cdf, law.sf, law.pdf)]  # quadrature per point: as exact
            for i, y in enumerate(ys):
                ref_cdf, ref_sf, ref_pdf = _quad_reference(y, c, r)
                for cdf, sf, pdf in (tabulated, per_point):
                    errors = (abs(cdf[i] - ref_cdf), abs(sf[i] - ref_sf), abs(pdf[i] - ref_pdf) / max(1.0, ref_pdf))
                    assert max(errors) < 1e-10, (c, r, y, errors)
    assert quadratic._table.cache_info().misses == 3 * 20  # the CDF's, survival function's and PDF's tables
    # Beyond the table's reach as point by point: nan stays nan, the infinities are the limits, the PDF 0
    law, odd = NoisyQuadratic(0.0, 1.0, 3, 0.01), np.concatenate(([np.nan, np.inf, -np.inf], filler))
    np.testing.assert_array_equal(law.cdf(odd)[:3], [np.nan, 1.0, 0.0])
    np.testing.assert_array_equal(law.sf(odd)[:3], [np.nan, 0.0, 1.0])
    np.testing.assert_array_equal(law.pdf(odd)[:3], law.pdf(odd[:3]))


# -- closed forms against simulation -------------------------------------------------------------------------
LAWS = [Quadratic(A, B, 3), Quadratic(A, B, 5, convex=True), NoisyQuadratic(A, B, 2, 0.02),
        NoisyQuadratic(A, B, 7, 0.1, convex=True), NoisyQuadratic(A, B, 1, 0.005)]


@pytest.mark.parametrize("seed, law", list(enumerate(LAWS, start=2025)))
def test_closed_forms_match_simulation(seed, law):
    """Mean, variance and both tuning curves (max and min) within 4 Monte Carlo standard errors."""
    rng = np.random.default_rng(seed)
    reps, k_max = 40_000, 10
    x = law.sample((reps, k_max), rng=rng)
    flat = x.ravel()
    assert abs(flat.mean() - law.mean) < 4 * flat.std() / np.sqrt(flat.size)
    sq = (flat - flat.mean()) ** 2
    assert abs(sq.mean() - law.var) < 4 * sq.std() / np.sqrt(flat.size)
    for k in (1, 3, 10):
        for minimize in (False, True):
            best = x[:, :k].min(axis=1) if minimize else x[:, :k].max(axis=1)
            mean = law.mean_tuning_curve([k], minimize=minimize)[0]
            assert abs(best.mean() - mean) < 4 * best.std() / np.sqrt(reps), (k, minimize)
            for q in (0.5, 0.8):
                value = law.quantile_tuning_curve([k], q, minimize=minimize)[0]
                share = np.mean(best <= value)  # the q-quantile of the best: P(best <= it) = q
                assert abs(share - q) < 4 * np.sqrt(q * (1 - q) / reps), (k, minimize, q, share)


# -- the quadratic's identities -------------------------------------------------------------------------------
@pytest.mark.parametrize("c", range(1, 11))
def test_quadratic_mirror_identity(c):
    """Y convex(a, b, c) <=> -Y concave(-b, -a, c): CDFs, quantiles and tuning curves mirror."""
    convex, concave = Quadratic(A, B, c, convex=True), Quadratic(-B, -A, c)
    y = np.linspace(A, B, 41)
    np.testing.assert_allclose(convex.cdf(y), concave.sf(-y), atol=1e-15)
    p = np.linspace(0.01, 0.99, 17)
    np.testing.assert_allclose(convex.ppf(p), -concave.ppf(1 - p), atol=1e-14)
    ks = np.array([0.5, 1.0, 4.0, 100.0])
    for minimize in (False, True):
        np.testing.assert_allclose(convex.mean_tuning_curve(ks, minimize=minimize),
                                   -concave.mean_tuning_curve(ks, minimize=not minimize), atol=1e-14)
        # min Y = -max(-Y): its q-quantile is minus the (1 - q)-quantile of the max of -Y
        np.testing.assert_allclose(convex.quantile_tuning_curve(ks, 0.3, minimize=minimize),
                                   -concave.quantile_tuning_curve(ks, 0.7, minimize=not minimize), atol=1e-13)


def test_c2_concave_equals_convex():
    """With c = 2 the noise-free law is uniform on [a, b] (and the noisy one its convolution): the forms agree."""
    for o in (0.0, 0.03):
        up, down = NoisyQuadratic(A, B, 2, o), NoisyQuadratic(A, B, 2, o, convex=True)
        y = np.linspace(A - 0.1, B + 0.1, 31)
        np.testing.assert_allclose(up.cdf(y), down.cdf(y), atol=1e-12)
        np.testing.assert_allclose(up.pdf(y), down.pdf(y), atol=1e-10)
        ks = np.array([1.0, 5.0])
        np.testing.assert_allclose(up.mean_tuning_curve(ks), down.mean_tuning_curve(ks), atol=1e-12)


class _Numerical:
    """A law seen only through its CDF and quantiles: truth's generic quadrature, no closed forms."""

    def __init__(self, law):
        self.law, self.support, self.is_discrete = law, law.support, False

    def cdf(self, x):
        return self.law.cdf(x)

    cdf_left = cdf

    def ppf(self, q):
        return self.law.ppf(q)


@pytest.mark.parametrize("c, convex", [(c, convex) if c in (2, 3) else pytest.param(c, convex, marks=pytest.mark.heavy)
                                       for c in (1, 2, 3, 7, 10) for convex in (False, True)])
@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_quadratic_mean_tuning_curve_closed_form_vs_numerical_integration(c, convex):
    law = Quadratic(A, B, c, convex=convex)
    ks = np.array([0.5, 1.0, 2.0, 7.0, 50.0])
    for minimize in (False, True):
        numeric = truth.mean_tuning_curve(_Numerical(law), ks, minimize=minimize)
        np.testing.assert_allclose(law.mean_tuning_curve(ks, minimize=minimize), numeric, atol=1e-11)
    if c not in (1, 3):  # the noisy check below costs a few seconds per law: two shapes suffice
        return
    # and the noisy law's tanh-sinh quadrature against adaptive quadrature of its CDF (unbounded support)
    noisy = NoisyQuadratic(A, B, c, 0.02, convex)
    for minimize in (False, True):
        lo, hi = A - 0.3, B + 0.3  # beyond 15 noise SDs: the tails add nothing at 1e-12
        cdf_best = (lambda x: 1 - (1 - noisy.cdf(x)) ** ks) if minimize else (lambda x: noisy.cdf(x) ** ks)
        val, _ = integrate.quad_vec(lambda x: 1 - cdf_best(x), lo, hi, epsabs=1e-12, epsrel=1e-11, limit=400)
        np.testing.assert_allclose(noisy.mean_tuning_curve(ks, minimize=minimize), lo + val, atol=1e-10)


# -- bad input ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, name", [
    (dict(c=0), "c"), (dict(c=11), "c"), (dict(c=2.5), "c"), (dict(c=True), "c"),
    (dict(o=-0.1), "o"), (dict(a=0.9), "b"), (dict(a=1.0), "b"),
])
def test_bad_parameters_raise_one_line_naming_them(kwargs, name):
    params = {"a": A, "b": B, "c": 3, "o": 0.01, **kwargs}
    with pytest.raises(InvalidParameter) as info:
        NoisyQuadratic(**params)
    message = str(info.value)
    assert info.value.name == name and message.startswith(f"{name} ") and "\n" not in message


def test_bad_parameter_on_the_command_line_is_one_line_exit_2(tmp_path):
    from _cli import one_line_error, simstudy

    proc = simstudy("study=evp_accuracy", "distribution=noisy_quadratic", "distribution.c=11", cwd=tmp_path,
                    check=False)
    one_line_error(proc, "distribution.c must be an integer from 1 to 10, got 11")


# -- round trips and large budgets ----------------------------------------------------------------------------
@pytest.mark.parametrize("convex", [False, True])
@pytest.mark.parametrize("c, o", [(1, 0.0), (1, 1e-4), (3, 0.01), (10, 0.3), (2, 3.0)])
def test_ppf_inverts_cdf(c, o, convex):
    law = NoisyQuadratic(A, B, c, o, convex)
    y = law.ppf(np.linspace(1e-6, 1 - 1e-6, 101))
    p = law.cdf(y)
    inner = (p > 1e-9) & (p < 1 - 1e-9)
    np.testing.assert_allclose(law.ppf(p[inner]), y[inner], rtol=0, atol=1e-10)
    assert law.ppf(0.0) == law.support[0] and law.ppf(1.0) == law.support[1]


@pytest.mark.parametrize("convex", [False, True])
@pytest.mark.parametrize("o", [0.0, 0.01])
def test_quantile_tuning_curve_for_large_budgets(o, convex):
    """Up to k = 1e5: monotone toward the best score, and exact where p = q^(1/k) is within 1e-5 of 1."""
    law = NoisyQuadratic(A, B, 3, o, convex)
    ks = np.logspace(0, 5, 26)
    for minimize in (False, True):
        curve = law.quantile_tuning_curve(ks, 0.5, minimize=minimize)
        assert np.all(np.isfinite(curve))
        steps = np.diff(curve)
        assert np.all(steps <= 1e-12) if minimize else np.all(steps >= -1e-12)
        # P(best <= curve) = 0.5: for the max F^k, for the min 1 - (1 - F)^k, with F or 1 - F where accurate.
        at = law.cdf(curve) if minimize == convex else law.sf(curve)
        logs = ks * (np.log(law.sf(curve)) if minimize else np.log(law.cdf(curve)))
        np.testing.assert_allclose(logs, np.log(0.5), rtol=1e-6)
        assert np.all(at > 0)
    if o == 0:  # the closed form b - (b - a) (1 - q^(1/k))^(2/c), concave, maximizing
        exact = B - (B - A) * (-np.expm1(np.log(0.5) / ks)) ** (2 / 3)
        if not convex:
            np.testing.assert_allclose(law.quantile_tuning_curve(ks), exact, rtol=1e-13)
