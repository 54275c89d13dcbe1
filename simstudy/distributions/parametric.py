"""The parametric laws of random search near the optimum: the quadratic and noisy quadratic distributions.

Near its optimum a smooth loss surface is close to a quadratic, so the scores of random search in a small
ellipsoid around the optimum follow a three-parameter law, and training noise adds a normal term
(Lourie, He & Cho 2025). Maximizing (the *concave* form, ``convex=False``):

==============================  ===========================================================================
quantity                        quadratic(a, b, c): ``Q = b - (b - a) U^(2/c)``, U ~ Uniform(0, 1)
==============================  ===========================================================================
CDF                             ``F(y) = 1 - ((b - y) / (b - a))^(c/2)`` on [a, b]
PDF                             ``f(y) = c / (2 (b - a)) ((b - y) / (b - a))^(c/2 - 1)``
quantile                        ``b - (b - a) (1 - p)^(2/c)``
median tuning curve             ``b - (b - a) (1 - q^(1/k))^(2/c)`` (any quantile q)
mean tuning curve               ``b - (b - a) Gamma(k + 1) Gamma(1 + 2/c) / Gamma(k + 1 + 2/c)``
mean of the worst of k          ``b - (b - a) k / (k + 2/c)``
==============================  ===========================================================================

``b`` is the best possible score, ``c`` (an integer, 1..10 here) the effective number of hyperparameters and
``a`` the low end of the region where the law holds. The noisy quadratic adds ``E ~ Normal(0, o^2)``:
``Y = Q + E``. Its CDF is ``Phi((y - a)/o) - E[V^(c/2); 0 <= V <= 1]`` with ``V ~ Normal((b - y)/(b - a),
o/(b - a))`` and its PDF ``c/(2(b - a)) E[V^(c/2 - 1); 0 <= V <= 1]``: partial fractional moments of a
normal, computed here by Gauss-Legendre quadrature (two 24-point panels split at the bell's peak) after ``V = U^2`` (which makes the integrand a
polynomial times a Gaussian, smooth for every c) on the window of +-7.5 standard deviations where the
Gaussian has mass (absolute error below 1e-10, tested against 30-digit quadrature). For even c the moments
are integer moments of a truncated normal, in closed form by a recurrence (no quadrature) wherever
``o/(b - a) <= 0.5``. Quantiles solve the
CDF (or, above the median, the survival function, for relative accuracy in the upper tail) on logs by
safeguarded Newton inside the exact bracket ``[a + o z_p, b + o z_p]``; tuning curves follow from the
quantile function, the mean one by tanh-sinh quadrature of ``F^-1(u^(1/k))`` over u in (0, 1).

The minimizing (*convex*) form is the mirror image: ``Y`` is convex(a, b, c, o) when ``-Y`` is
concave(-b, -a, c, o), so ``a`` is then the best possible score. For c = 2 the two forms coincide.

References
----------
Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025,
arXiv:2510.02721.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from simstudy.distributions import InvalidParameter, _finite
from simstudy.stats._roots import safeguarded_newton

__all__ = ["Quadratic", "NoisyQuadratic", "C_RANGE"]

#: The effective dimensions c a law may have (and the fit searches).
C_RANGE = tuple(range(1, 11))

_WINDOW = 7.5  # normal SDs: the mass beyond is 6e-14, below the 1e-10 the CDF is held to
_SQRT2PI = np.sqrt(2.0 * np.pi)
_CHUNK = 4096  # points per quadrature block: (4096 x 32) temporaries stay in cache


_GL = {n: np.polynomial.legendre.leggauss(n) for n in (8, 16, 24, 32, 48)}


def _nodes(mu: np.ndarray, r: np.ndarray, side: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Nodes u and weights (shape ``mu.shape + (2 side,)``) for ``int h(u) phi((u^2 - mu)/r) du`` over [0, 1].

    The window is where the normal has mass, ``u^2`` within ``mu +- 7.5 r`` and [0, 1]. It is split at the
    bell's peak ``u = sqrt(mu)`` into two panels of ``side`` Gauss-Legendre nodes each, one per monotone side
    (``V = U^2`` squeezes the lower side when mu is a few r: one panel of 32 nodes under-resolves it by up to
    1e-8); when the peak lies outside the window, one panel of ``2 side`` nodes covers it. With ``side = 24``
    the moments are exact to 1e-10 (tested against 30-digit quadrature and the closed-form integer moments,
    r from 1e-6 to 0.5); the fit's optimizer uses ``side = 16`` (1e-7 suffices to compare parameters).
    """
    x1, w1 = _GL[side]
    x2, w2 = _GL[2 * side]
    lo = np.sqrt(np.clip(mu - _WINDOW * r, 0.0, 1.0))
    hi = np.sqrt(np.clip(mu + _WINDOW * r, 0.0, 1.0))
    peak = np.sqrt(np.clip(mu, lo * lo, hi * hi))
    single = (peak <= lo) | (peak >= hi)
    # Per point, each half of the nodes has a centre and a half-width: the two panels', or the one panel's.
    mid, half = 0.5 * (hi + lo), 0.5 * (hi - lo)
    shape = mu.shape + (2 * side,)
    centre, width = np.empty(shape), np.empty(shape)
    centre[..., :side] = np.where(single, mid, 0.5 * (lo + peak))[..., None]
    centre[..., side:] = np.where(single, mid, 0.5 * (peak + hi))[..., None]
    width[..., :side] = np.where(single, half, 0.5 * (peak - lo))[..., None]
    width[..., side:] = np.where(single, half, 0.5 * (hi - peak))[..., None]
    two = single[..., None]
    u = centre + width * np.where(two, x2, np.concatenate([x1, x1]))
    w = width * np.where(two, w2, np.concatenate([w1, w1]))
    return u, w


def _moment(mu, r, m) -> np.ndarray:
    """``E[V^((m - 1)/2); 0 <= V <= 1]`` for ``V ~ Normal(mu, r)``, r > 0, elementwise over broadcast arrays.

    With ``V = U^2`` this is ``int_0^1 2 u^m phi((u^2 - mu)/r) / r du``: smooth in u for integer m >= 0, so
    Gauss-Legendre on the window where the normal has mass (:func:`_nodes`) is accurate to 1e-10.
    """
    mu, r, m = np.broadcast_arrays(np.asarray(mu, float), np.asarray(r, float), np.asarray(m, float))
    shape = mu.shape
    mu, r, m = mu.ravel(), r.ravel(), m.ravel()
    out = np.zeros(mu.size)
    # Only where the window meets [0, 1]; elsewhere the moment is 0 to rounding.
    in_window = (mu + _WINDOW * r > 0) & (mu - _WINDOW * r < 1)
    same_m = m.size > 0 and np.all(m == m[0])
    if mu.size >= _INTERPOLATE_FROM and same_m and np.all(r == r[0]) and not m[0] % 2 == 1:
        return _moment_interpolated(mu, float(r[0]), float(m[0])).reshape(shape)
    if same_m and m[0] % 2 == 1:  # an integer moment (c even): closed form where it is stable
        closed = in_window & (r <= _RECURRENCE_R)
        out[closed] = _integer_moment(mu[closed], r[closed], int(m[0]) // 2)
        in_window &= ~closed
    live = np.flatnonzero(in_window)
    for start in range(0, live.size, _CHUNK):
        idx = live[start : start + _CHUNK]
        mu_i, r_i = mu[idx], r[idx]
        u, wts = _nodes(mu_i, r_i)
        g = u * u
        g -= mu_i[:, None]
        g /= r_i[:, None]
        g *= g
        g *= -0.5
        np.exp(g, out=g)
        if same_m:
            for _ in range(int(m[0])):  # integer powers by multiplication: pow() costs as much as exp()
                g *= u
        else:
            g *= u ** m[idx, None]
        g *= wts
        out[idx] = 2.0 * g.sum(axis=1) / (r_i * _SQRT2PI)
    return out.reshape(shape)


_INTERPOLATE_FROM = 20_000  # points of one law: from here, interpolating the moment beats quadrature per point
_CHEB = 20  # Chebyshev points per panel


def _panels(r: float) -> np.ndarray:
    """Breakpoints in mu over the window [-7.5 r, 1 + 7.5 r]: panels 2r wide near 0 and 1, where the moment
    varies on the noise's scale r, widening to 0.3 of the distance to them inside, where it varies like mu^p."""
    lo, hi = -_WINDOW * r, 1.0 + _WINDOW * r
    points, x = [lo], lo
    while x < hi:
        x = min(hi, x + max(2.0 * r, 0.3 * min(abs(x), abs(1.0 - x))))
        points.append(x)
    return np.array(points)


def _moment_interpolated(mu: np.ndarray, r: float, m: float) -> np.ndarray:
    """:func:`_moment` of one law at many points: exact values at Chebyshev points of each panel
    (:func:`_panels`), then Clenshaw's recurrence on their Chebyshev series (the moment is entire in mu, the
    normal's smoothing of ``v^p`` on [0, 1]). Within 3e-11 of the quadrature at every point (tested, r from
    1e-6 to 3 and every c), from a few thousand quadratures instead of one per point.
    """
    edges = _panels(r)
    a, b = edges[:-1], edges[1:]
    k = np.arange(_CHEB)
    t = np.cos(np.pi * (k + 0.5) / _CHEB)
    nodes = (0.5 * (a + b))[:, None] + (0.5 * (b - a))[:, None] * t
    values = _moment(nodes.ravel(), np.full(nodes.size, r), np.full(nodes.size, m)).reshape(nodes.shape)
    coef = (2.0 / _CHEB) * values @ np.cos(np.pi * np.outer(k, k + 0.5) / _CHEB).T  # DCT-II: the series
    coef[:, 0] *= 0.5
    inside = (mu > edges[0]) & (mu < edges[-1])
    idx = np.clip(np.searchsorted(edges, mu, side="right") - 1, 0, a.size - 1)
    x = (2.0 * mu - a[idx] - b[idx]) / (b[idx] - a[idx])
    two_x = 2.0 * x
    b1, b2 = np.zeros_like(mu), np.zeros_like(mu)
    for j in range(_CHEB - 1, 0, -1):
        b1, b2 = coef[idx, j] + two_x * b1 - b2, b1
    return np.where(inside, coef[idx, 0] + x * b1 - b2, 0.0)


_RECURRENCE_R = 0.5  # up to here the recurrence's rounding stays below 1e-13 (|mu| <= 1 + 7.5 r, j <= 5)


def _integer_moment(mu: np.ndarray, r: np.ndarray, j: int) -> np.ndarray:
    """``E[V^j; 0 <= V <= 1]`` for ``V ~ Normal(mu, r)`` and integer j >= 0, in closed form.

    Integrating ``v^k g'(v)`` by parts, with g the normal density, gives ``J_(k+1) = mu J_k + r^2 (k J_(k-1) +
    g(0) [k = 0] - g(1))`` from ``J_0 = Phi((1 - mu)/r) - Phi(-mu/r)``: two normal CDFs and two densities,
    no quadrature.
    """
    lo, hi = -mu / r, (1.0 - mu) / r
    # Phi(hi) - Phi(lo) from the side where the two are small (no cancellation near 1).
    j0 = np.where(lo > 0, special.ndtr(-lo) - special.ndtr(-hi), special.ndtr(hi) - special.ndtr(lo))
    g0 = np.exp(-0.5 * lo * lo) / (_SQRT2PI * r)
    g1 = np.exp(-0.5 * hi * hi) / (_SQRT2PI * r)
    r2 = r * r
    prev, cur = np.zeros_like(mu), j0
    for k in range(j):
        nxt = mu * cur + r2 * (k * prev + (g0 if k == 0 else 0.0) - g1)
        prev, cur = cur, nxt
    return cur


def _std_cdf_sf(z, c, r) -> tuple[np.ndarray, np.ndarray]:
    """CDF and survival function of the standard concave law (a = 0, b = 1, noise ratio r >= 0)."""
    z, c, r = np.broadcast_arrays(np.asarray(z, float), np.asarray(c, float), np.asarray(r, float))
    noisy = r > 0
    # Noise-free: closed form (also where r > 0, harmlessly replaced below).
    t = np.clip(1.0 - z, 0.0, 1.0)
    sf = t ** (0.5 * c)
    cdf = 1.0 - sf
    if noisy.any():
        rs = np.where(noisy, r, 1.0)
        mom = _moment(1.0 - z, rs, c + 1.0)
        cdf = np.where(noisy, special.ndtr(z / rs) - mom, cdf)
        sf = np.where(noisy, special.ndtr(-z / rs) + mom, sf)
    return np.clip(cdf, 0.0, 1.0), np.clip(sf, 0.0, 1.0)


def _std_pdf(z, c, r) -> np.ndarray:
    """PDF of the standard concave law (a = 0, b = 1, noise ratio r >= 0)."""
    z, c, r = np.broadcast_arrays(np.asarray(z, float), np.asarray(c, float), np.asarray(r, float))
    noisy = r > 0
    inside = (z > 0) & (z < 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pdf = np.where(inside, 0.5 * c * np.where(inside, 1.0 - z, 1.0) ** (0.5 * c - 1.0), 0.0)
    if noisy.any():
        rs = np.where(noisy, r, 1.0)
        pdf = np.where(noisy, 0.5 * c * _moment(1.0 - z, rs, c - 1.0), pdf)
    return pdf


def _std_cdf_sf_pdf(z: np.ndarray, c: np.ndarray, r: np.ndarray):
    """CDF, survival function and PDF of the standard concave law, r > 0, 1-d arrays: both moments from one
    pass of exponentials (what a quantile's Newton step needs)."""
    mu = 1.0 - z
    m_cdf, m_pdf = np.zeros(z.size), np.zeros(z.size)
    live = np.flatnonzero((mu + _WINDOW * r > 0) & (mu - _WINDOW * r < 1))
    for start in range(0, live.size, _CHUNK):
        idx = live[start : start + _CHUNK]
        mu_i, r_i, c_i = mu[idx], r[idx], c[idx]
        u, wts = _nodes(mu_i, r_i)
        u2 = u * u
        g = u2 - mu_i[:, None]
        g /= r_i[:, None]
        g *= g
        g *= -0.5
        np.exp(g, out=g)
        g *= wts
        if np.all(c_i == c_i[0]):
            for _ in range(int(c_i[0]) - 1):  # integer powers by multiplication: pow() costs as much as exp()
                g *= u
        else:
            g *= u ** (c_i[:, None] - 1.0)
        scale = 2.0 / (r_i * _SQRT2PI)
        m_pdf[idx] = g.sum(axis=1) * scale
        g *= u2
        m_cdf[idx] = g.sum(axis=1) * scale
    zr = z / r
    cdf = np.clip(special.ndtr(zr) - m_cdf, 0.0, 1.0)
    sf = np.clip(special.ndtr(-zr) + m_cdf, 0.0, 1.0)
    return cdf, sf, 0.5 * c * m_pdf


def _std_ppf(p, c, r, *, upper: np.ndarray | None = None) -> np.ndarray:
    """Quantiles of the standard concave law at probabilities ``p`` (``upper = 1 - p``, given for accuracy)."""
    p = np.asarray(p, float)
    upper = 1.0 - p if upper is None else np.asarray(upper, float)
    p, upper, c, r = np.broadcast_arrays(p, upper, np.asarray(c, float), np.asarray(r, float))
    shape = p.shape
    p, upper, c, r = (np.ravel(x).copy() for x in (p, upper, c, r))
    out = 1.0 - upper ** (2.0 / c)  # the noise-free closed form
    noisy = (r > 0) & (p > 0) & (upper > 0)
    if noisy.any():
        idx = np.flatnonzero(noisy)
        pp, uu, cc, rr = p[idx], upper[idx], c[idx], r[idx]
        zq = np.where(pp <= 0.5, special.ndtri(pp), -special.ndtri(uu))
        lo, hi = rr * zq, 1.0 + rr * zq  # F(lo) <= p <= F(hi): the noise-free law lies within [0, 1]
        low_half = pp <= 0.5
        log_p, log_u = np.log(pp), np.log(uu)

        one_law = np.all(cc == cc[0]) and np.all(rr == rr[0])

        def f(x, sel):
            if one_law:  # one law: each moment by its fastest path (closed form, interpolation)
                cdf, sf = _std_cdf_sf(x, cc[sel], rr[sel])
                dens = _std_pdf(x, cc[sel], rr[sel])
            else:  # many laws: both moments from one pass of exponentials
                cdf, sf, dens = _std_cdf_sf_pdf(x, cc[sel], rr[sel])
            with np.errstate(divide="ignore", invalid="ignore"):
                value = np.where(low_half[sel], np.log(cdf) - log_p[sel], log_u[sel] - np.log(sf))
                slope = dens / np.where(low_half[sel], cdf, sf)
            return value, slope

        x0 = np.clip(out[idx], lo, hi)
        out[idx] = safeguarded_newton(f, lo, hi, x0, xtol=1e-14, ftol=1e-12)
    out = np.where(p <= 0, np.where(r > 0, -np.inf, 0.0), out)
    out = np.where(upper <= 0, np.where(r > 0, np.inf, 1.0), out)
    return out.reshape(shape)


def _tanh_sinh(h: float = 1.0 / 16, t_max: float = 3.2) -> tuple[np.ndarray, np.ndarray]:
    """``log u`` at the nodes u in (0, 1), and the weights, of the tanh-sinh rule on [0, 1].

    Double-exponential quadrature: exact to rounding for the logarithmic endpoint singularities of a normal
    quantile function; 103 nodes.
    """
    t = np.arange(-t_max, t_max + h / 2, h)
    s = 0.5 * np.pi * np.sinh(t)
    one_minus_u = 1.0 / (1.0 + np.exp(2.0 * s))  # 1 - (1 + tanh s) / 2, without cancellation
    u = 1.0 / (1.0 + np.exp(-2.0 * s))
    w = h * 0.5 * np.pi * np.cosh(t) / (2.0 * np.cosh(s) ** 2)
    keep = (u > 1e-200) & (one_minus_u > 1e-200)  # beyond, the weights are below 1e-190: nothing lost
    with np.errstate(divide="ignore"):  # the dropped end nodes
        log_u = np.where(u < 0.5, np.log(u), np.log1p(-one_minus_u))  # log u to full precision near u = 1
    return log_u[keep], w[keep]


_TS_LOG_U, _TS_W = _tanh_sinh()


def _ks_iv(ks) -> np.ndarray:
    ks = np.asarray(ks, dtype=np.float64)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise ValueError(f"ks must be finite budgets > 0, got {ks.ravel()[:5].tolist()}")
    return ks


def _c_iv(c: Any) -> int:
    if (
        isinstance(c, bool)
        or not isinstance(c, (int, np.integer, float))
        or float(c) != int(c)
        or int(c) not in C_RANGE
    ):
        raise InvalidParameter("c", f"must be an integer from {C_RANGE[0]} to {C_RANGE[-1]}", c)
    return int(c)


@dataclass(frozen=True, eq=False)
class NoisyQuadratic:
    """The noisy quadratic distribution: random-search scores near the optimum, with training noise.

    ``Y = Q + E``: Q quadratic(a, b, c) (see the module's table), E ~ Normal(0, o^2) independent. It follows
    the :class:`simstudy.distributions.ScoreDistribution` protocol (support ``(-inf, inf)`` when ``o > 0``)
    and adds ``sf``, ``pdf``, ``mean``, ``var`` and the closed-form or quadrature tuning curves
    (:meth:`quantile_tuning_curve`, :meth:`mean_tuning_curve`) that serve as truths.

    Parameters
    ----------
    a, b : float
        The ends of the noise-free law's support, finite with ``a < b`` (score units). Concave (maximizing):
        ``b`` is the best possible score; convex (minimizing): ``a`` is.
    c : int
        The effective number of hyperparameters, an integer 1..10 (:data:`C_RANGE`).
    o : float, optional
        The standard deviation of the training noise, finite and ``>= 0`` (score units); default 0.0, the
        quadratic law.
    convex : bool, optional
        The minimizing form (``-Y`` is concave(-b, -a, c, o)); default False.
    name : str, optional
        A label for tables and plots; default ``"noisy_quadratic"``.

    Raises
    ------
    InvalidParameter
        If `a`, `b` or `o` is not a finite number, if not ``a < b``, if ``o < 0``, if `c` is not an integer
        in 1..10, or if `convex` is not a bool (the message starts with the parameter's name).

    See Also
    --------
    Quadratic : The noise-free law.
    simstudy.stats.parametric_fit.fit : Fit the law to the tail of observed scores.

    References
    ----------
    .. [1] Lourie, N., He, H. & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima.
       COLM 2025, arXiv:2510.02721.

    Examples
    --------
    >>> law = NoisyQuadratic(0.7, 0.9, 2, 0.01)
    >>> law.sample(3, rng=np.random.default_rng(0)).round(4).tolist()
    [0.7737, 0.8407, 0.8954]
    >>> law.support, round(law.mean, 4), round(law.var, 6)
    ((-inf, inf), 0.8, 0.003433)
    >>> float(law.cdf(0.9).round(6)), float(law.ppf(0.5).round(6))
    (0.980053, 0.8)
    >>> law.quantile_tuning_curve([1, 10, 100]).round(4)   # the median best of k runs; b = 0.9
    array([0.8   , 0.8871, 0.9072])
    >>> NoisyQuadratic(0.9, 0.7, 2)
    Traceback (most recent call last):
        ...
    simstudy.distributions.InvalidParameter: b must be greater than a=0.9, got 0.7
    """

    a: float
    b: float
    c: int
    o: float = 0.0
    convex: bool = False
    name: str = "noisy_quadratic"

    def __post_init__(self) -> None:
        a, b = _finite("a", self.a), _finite("b", self.b)
        if not a < b:
            raise InvalidParameter("b", f"must be greater than a={a:g}", self.b)
        o = _finite("o", self.o)
        if o < 0:
            raise InvalidParameter("o", "must be >= 0 (the noise's standard deviation)", self.o)
        if not isinstance(self.convex, (bool, np.bool_)):
            raise InvalidParameter("convex", "must be true or false", self.convex)
        for key, value in (("a", a), ("b", b), ("c", _c_iv(self.c)), ("o", o), ("convex", bool(self.convex))):
            object.__setattr__(self, key, value)

    # -- the protocol --------------------------------------------------------------------------------
    @property
    def support(self) -> tuple[float, float]:
        return (-np.inf, np.inf) if self.o > 0 else (self.a, self.b)

    @property
    def is_discrete(self) -> bool:
        return False

    @property
    def _r(self) -> float:
        return self.o / (self.b - self.a)

    def _z(self, y) -> np.ndarray:
        """Scores in the standard concave form (a = 0, b = 1)."""
        y = np.asarray(y, dtype=np.float64)
        return (self.b - y) / (self.b - self.a) if self.convex else (y - self.a) / (self.b - self.a)

    def cdf(self, x) -> np.ndarray:
        """``P(Y <= x)``; shape of ``x``."""
        cdf, sf = _std_cdf_sf(self._z(x), self.c, self._r)
        return sf if self.convex else cdf

    cdf_left = cdf  # continuous: no atoms

    def sf(self, x) -> np.ndarray:
        """``P(Y > x)``, accurate in the upper tail; shape of ``x``."""
        cdf, sf = _std_cdf_sf(self._z(x), self.c, self._r)
        return cdf if self.convex else sf

    def pdf(self, x) -> np.ndarray:
        """The density (per score unit); shape of ``x``."""
        return _std_pdf(self._z(x), self.c, self._r) / (self.b - self.a)

    def ppf(self, q, *, upper=None) -> np.ndarray:
        """The quantile function at ``q`` (``upper = 1 - q`` may be given exactly, for the upper tail)."""
        q = np.asarray(q, dtype=np.float64)
        upper = 1.0 - q if upper is None else np.asarray(upper, dtype=np.float64)
        if self.convex:  # Y <= y  <=>  Z >= (b - y)/(b - a)
            return self.b - (self.b - self.a) * _std_ppf(upper, self.c, self._r, upper=q)
        return self.a + (self.b - self.a) * _std_ppf(q, self.c, self._r, upper=upper)

    def sample(self, size, *, rng: np.random.Generator) -> np.ndarray:
        """Exact draws ``Q + E`` (uniforms, then normals, from ``rng``); shape ``size``."""
        q = (self.b - self.a) * rng.random(size) ** (2.0 / self.c)
        q = self.a + q if self.convex else self.b - q
        return q + self.o * rng.standard_normal(size) if self.o > 0 else q

    # -- summaries -----------------------------------------------------------------------------------
    @property
    def mean(self) -> float:
        shift = (self.b - self.a) * 2.0 / (self.c + 2.0)
        return self.b - shift if self.convex else self.a + shift

    @property
    def var(self) -> float:
        c = self.c
        return (self.b - self.a) ** 2 * 4.0 * c / ((c + 2.0) ** 2 * (c + 4.0)) + self.o**2

    def quantile_tuning_curve(self, ks, q: float = 0.5, *, minimize: bool = False) -> np.ndarray:
        """The q-quantile of the best of k draws (the max, or the min when ``minimize``); shape of ``ks``.

        The max has CDF ``F^k``: its q-quantile is ``F^-1(q^(1/k))``. The min has CDF ``1 - (1 - F)^k``: its
        q-quantile is ``F^-1(1 - (1 - q)^(1/k))`` (as opda's ``quantile_tuning_curve``).
        """
        if not 0 < q < 1:
            raise ValueError(f"q must be strictly between 0 and 1, got {q!r}")
        ks = _ks_iv(ks)
        if minimize:
            log_u = np.log1p(-q) / ks
            # (1 - q)^(1/k) is 1 - F at the quantile; F = -expm1(.) keeps its digits when k is large
            return self.ppf(-np.expm1(log_u), upper=np.exp(log_u))
        log_p = np.log(q) / ks
        return self.ppf(np.exp(log_p), upper=-np.expm1(log_p))  # q^(1/k) and 1 - q^(1/k), to full precision

    def mean_tuning_curve(self, ks, *, minimize: bool = False) -> np.ndarray:
        """The expected best of k draws (the max, or the min when ``minimize``); shape of ``ks``.

        Closed forms without noise; with noise, tanh-sinh quadrature of ``E = int_0^1 F^-1(u^(1/k)) du``.
        """
        ks = _ks_iv(ks)
        width, g = self.b - self.a, 2.0 / self.c
        if self.o == 0:
            towards_best = minimize == self.convex  # the max of a concave law, the min of a convex one
            if towards_best:
                gap = width * np.exp(special.gammaln(ks + 1) + special.gammaln(1 + g) - special.gammaln(ks + 1 + g))
                return self.a + gap if self.convex else self.b - gap
            gap = width * ks / (ks + g)
            return self.b - gap if not self.convex else self.a + gap
        log_u = _TS_LOG_U[:, None] / ks.ravel()[None, :]  # log of u^(1/k), shape (nodes, len(ks))
        p, upper = np.exp(log_u), -np.expm1(log_u)
        x = self.ppf(upper, upper=p) if minimize else self.ppf(p, upper=upper)
        return (_TS_W @ x).reshape(ks.shape)

    def describe(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "c": self.c, "o": self.o, "convex": self.convex}

    @classmethod
    def fit(cls, ys, limits: tuple[float, float] | None = None, constraints=None) -> NoisyQuadratic:
        """The law fitted to the tail of ``ys`` by maximum product of spacings (:func:`simstudy.stats.parametric_fit.fit`,
        which also reports the fit's objective, boundary and threshold).

        Parameters
        ----------
        ys : array_like of float, shape (n,)
            Scores (score units).
        limits : (float, float), optional
            ``(threshold, inf)``: scores at or below the threshold are censored (default: the lower half).
            For a convex fit, ``(-inf, threshold)``.
        constraints : mapping, optional
            ``c`` (a value or list of values searched, default 1..10), ``convex`` (default False), ``o`` (0).

        Returns
        -------
        NoisyQuadratic
            The fitted law (a noisy quadratic even when ``o`` is fixed at 0).

        Raises
        ------
        ValueError
            As :func:`simstudy.stats.parametric_fit.fit` does: too few scores above the threshold, bad limits or
            constraints.

        Examples
        --------
        Scores above 0.5 of 200 draws, with ``c`` searched among 1, 2 and 3 (all ten take longer):

        >>> ys = NoisyQuadratic(0.0, 1.0, 2, 0.01).sample(200, rng=np.random.default_rng(3))
        >>> law = NoisyQuadratic.fit(ys, limits=(0.5, np.inf), constraints={"c": [1, 2, 3]})
        >>> law.c, round(law.b, 2)
        (2, 0.98)
        """
        from simstudy.stats.parametric_fit import fit  # the fit builds on this module

        return fit(ys, limits=limits, constraints=constraints).law


class Quadratic(NoisyQuadratic):
    """The quadratic distribution: :class:`NoisyQuadratic` without noise (``o = 0``), support [a, b].

    Random search on a loss surface that is exactly quadratic near its optimum: ``Q = b - (b - a) U^(2/c)``
    with U uniform (concave form), CDF ``1 - ((b - y) / (b - a))^(c/2)`` on [a, b].

    Parameters
    ----------
    a, b : float
        The support's ends, finite with ``a < b`` (score units). Concave (maximizing): ``b`` is the best
        possible score; convex (minimizing): ``a`` is.
    c : int
        The effective number of hyperparameters, an integer 1..10 (:data:`C_RANGE`).
    convex : bool, optional
        The minimizing form (``-Y`` is concave(-b, -a, c)); default False.
    name : str, optional
        A label for tables and plots; default ``"quadratic"``.

    Raises
    ------
    InvalidParameter
        If `a` or `b` is not a finite number, if not ``a < b``, if `c` is not an integer in 1..10, or if
        `convex` is not a bool (the checks of :class:`NoisyQuadratic`).

    References
    ----------
    .. [1] Lourie, N., He, H. & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima.
       COLM 2025, arXiv:2510.02721.

    Examples
    --------
    >>> law = Quadratic(0.0, 1.0, 4)
    >>> law.support, law.sample(3, rng=np.random.default_rng(0)).round(4).tolist()
    ((0.0, 1.0), [0.2019, 0.4806, 0.7976])
    >>> law.ppf([0.5, 0.9375]).round(4).tolist()
    [0.2929, 0.75]
    >>> law.cdf([0.0, 0.75, 1.0])       # 1 - (1 - y)^2
    array([0.    , 0.9375, 1.    ])
    >>> law.mean_tuning_curve([1, 2]).round(6)   # b - Gamma(k + 1) Gamma(1.5) / Gamma(k + 1.5)
    array([0.333333, 0.466667])
    >>> Quadratic(0.0, 1.0, 12)
    Traceback (most recent call last):
        ...
    simstudy.distributions.InvalidParameter: c must be an integer from 1 to 10, got 12
    """

    def __init__(self, a: float, b: float, c: int, convex: bool = False, name: str = "quadratic"):
        super().__init__(a, b, c, 0.0, convex, name)

    def __repr__(self) -> str:
        return f"Quadratic(a={self.a!r}, b={self.b!r}, c={self.c!r}, convex={self.convex!r})"
