"""The noisy quadratic law's mathematics on arrays: the kernels under :mod:`simstudy.distributions.parametric`.

The law and its formulas are described in :mod:`simstudy.distributions.parametric` (the distribution classes
:class:`~simstudy.distributions.parametric.Quadratic` and :class:`~simstudy.distributions.parametric.NoisyQuadratic`
built on these); here are its standard-form kernels, for ``z = (y - a)/(b - a)`` and ``r = o/(b - a)``, shared
with the fit (:mod:`simstudy.stats.parametric_fit`).

=========================  ==============================================================================
name                       what it computes
=========================  ==============================================================================
:data:`C_RANGE`            the effective dimensions c a law may have (and the fit searches)
``nodes``                  Gauss-Legendre nodes on the window where the noise has mass
``_moment``                partial fractional moments of a normal (quadrature, closed forms)
``_moment_far``            the same far from V = 0, in the noise's variable (no cancellation)
``_table``                 one law's CDF, survival function or PDF as piecewise polynomials (``_Table``)
``std_cdf``                CDF or survival function of the standard form (one law at many points: its table)
``_std_cdf_sf``            CDF and survival function of the standard form
``std_pdf``                its density
``std_ppf``                its quantile function (safeguarded Newton in an exact bracket)
``_tanh_sinh``             the tanh-sinh rule for the mean tuning curve
``curves``                 median and mean tuning curves of many laws at once (the bootstrap's)
=========================  ==============================================================================
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from simstudy.stats._roots import safeguarded_newton
from simstudy.stats.errors import InvalidParameter

__all__ = ["C_RANGE"]

#: The effective dimensions c a law may have (and the fit searches).
C_RANGE = tuple(range(1, 11))

WINDOW = 7.5  # normal SDs: the mass beyond is 6e-14, below the 1e-10 the CDF is held to
SQRT2PI = np.sqrt(2.0 * np.pi)
_CHUNK = 4096  # points per quadrature block: (4096 x 32) temporaries stay in cache


_GL = {n: np.polynomial.legendre.leggauss(n) for n in (8, 16, 24, 32, 48)}


def nodes(mu: np.ndarray, r: np.ndarray, side: int = 24) -> tuple[np.ndarray, np.ndarray]:
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
    lo = np.sqrt(np.clip(mu - WINDOW * r, 0.0, 1.0))
    hi = np.sqrt(np.clip(mu + WINDOW * r, 0.0, 1.0))
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


def _moment(mu, r, m, z=None, *, far_from: float = 1e4) -> np.ndarray:
    """``E[V^((m - 1)/2); 0 <= V <= 1]`` for ``V ~ Normal(mu, r)``, r > 0, elementwise over broadcast arrays.

    With ``V = U^2`` this is ``int_0^1 2 u^m phi((u^2 - mu)/r) / r du``: smooth in u for integer m >= 0, so
    Gauss-Legendre on the window where the normal has mass (:func:`nodes`) is accurate to 1e-10. From
    ``mu >= far_from r`` on, where ``u^2 - mu`` cancels (its rounding, amplified by mu/r, passes 1e-12 at
    the default 1e4; 1e-10 at r = 1e-6), it is integrated in the noise's variable instead
    (:func:`_moment_far`). ``z = 1 - mu``, given, keeps its own last digits there (the standard form's score:
    ``1 - mu`` would lose them).
    """
    mu, r, m = np.broadcast_arrays(np.asarray(mu, float), np.asarray(r, float), np.asarray(m, float))
    shape = mu.shape
    mu, r, m = mu.ravel(), r.ravel(), m.ravel()
    out = np.zeros(mu.size)
    # Only where the window meets [0, 1]; elsewhere the moment is 0 to rounding.
    in_window = (mu + WINDOW * r > 0) & (mu - WINDOW * r < 1)
    far = in_window & (mu >= far_from * r)
    if far.any():
        z = 1.0 - mu if z is None else np.broadcast_to(np.asarray(z, float), shape).ravel()
        out[far] = _moment_far(z[far], mu[far], r[far], m[far])
        in_window &= ~far
    same_m = m.size > 0 and np.all(m == m[0])
    if same_m and m[0] % 2 == 1:  # an integer moment (c even): closed form where it is stable
        closed = in_window & (r <= _RECURRENCE_R)
        out[closed] = _integer_moment(mu[closed], r[closed], int(m[0]) // 2)
        in_window &= ~closed
    live = np.flatnonzero(in_window)
    for start in range(0, live.size, _CHUNK):
        idx = live[start : start + _CHUNK]
        mu_i, r_i = mu[idx], r[idx]
        u, wts = nodes(mu_i, r_i)
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
        out[idx] = 2.0 * g.sum(axis=1) / (r_i * SQRT2PI)
    return out.reshape(shape)


def _moment_far(z: np.ndarray, mu: np.ndarray, r: np.ndarray, m: np.ndarray) -> np.ndarray:
    """:func:`_moment` (1-d arrays, ``z = 1 - mu`` each to its own precision) where mu is many r above 0, to
    rounding: ``int phi(w) (mu + r w)^((m - 1)/2) dw`` over the window up to ``V = 1``, that is ``w = z/r``;
    the power is smooth there (its singularity at ``V = 0`` lies a window's width or more away). Two
    32-node Gauss-Legendre panels split at the bell's peak.
    """
    lo = np.full(z.size, -WINDOW)
    hi = np.clip(z / r, lo, WINDOW)
    peak = np.clip(0.0, lo, hi)
    x, w = _GL[32]
    total = np.zeros(z.size)
    for a, b in ((lo, peak), (peak, hi)):
        half = 0.5 * (b - a)
        t = (0.5 * (a + b))[:, None] + half[:, None] * x
        total += (np.exp(-0.5 * t * t) * (mu[:, None] + r[:, None] * t) ** (0.5 * (m[:, None] - 1.0)) @ w) * half
    return total / SQRT2PI


# -- one law at many points: a table ----------------------------------------------------------------------------
_TABLE_FROM = 20_000  # points of one law: from here, building the law's table beats quadrature per point
_TABLE_K = 10.0  # the table's coordinate t = log((z + K r) / (1 + K r - z)): K > 7.5 keeps the window finite
_TABLE_STEP = 0.03  # its panels' width in t
_TABLE_DEGREE = 8  # Chebyshev points per panel
_TABLE_PANELS = 20_000  # at most (r below about 1e-130 would need more): quadrature per point beyond
_TABLE_BLOCK = 1 << 14  # points per block of evaluation: its few temporaries stay in cache
_TABLE_FAR = 2.0 * WINDOW  # the table's values in the noise's variable from mu >= 15 r (_moment): to rounding


class _Table:
    """One function of the standard form's z (its CDF, survival function or PDF) at one law, as piecewise
    polynomials of the coordinate ``t = log((z + K r) / (1 + K r - z))`` (:data:`_TABLE_K`) on the window
    ``[-7.5 r, 1 + 7.5 r]``: panels uniform in t are geometric in z, narrow (a fraction of r) at the
    window's ends and near z = 0 and 1, where the law changes on the noise's scale, wide inside, where it
    changes like ``(1 - z)^(c/2)``; finding a point's panel is arithmetic, not a search."""

    __slots__ = ("coef", "kr", "panels", "scale", "t0")  # a plain class: a dataclass costs 1 ms at import

    def __init__(self, kr: float, t0: float, scale: float, panels: int, coef: np.ndarray) -> None:
        self.kr = kr  # K r
        self.t0 = t0  # t at the window's lower end
        self.scale = scale  # panels per unit of t
        self.panels = panels
        self.coef = coef  # (degree, panels): monomial coefficients in the panel's x in [-1, 1], highest first

    def __call__(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The function at z (1-d) and whether each z lies in the window (elsewhere its value is meaningless)."""
        out, inside = np.empty(z.size), np.empty(z.size, dtype=bool)
        top = np.nextafter(float(self.panels), 0.0)
        lead, rows = self.coef[0], self.coef[1:]
        for start in range(0, z.size, _TABLE_BLOCK):
            zb = z[start : start + _TABLE_BLOCK]
            s = 1.0 - zb  # exact near z = 1, where the law changes on the scale r
            s += self.kr
            with np.errstate(invalid="ignore", divide="ignore"):  # z outside (-K r, 1 + K r), or nan: masked
                np.divide(zb + self.kr, s, out=s)
                np.log(s, out=s)
            s -= self.t0
            s *= self.scale
            at = np.fmax(s, 0.0)  # fmax and fmin drop nan, so that every point has a panel
            np.fmin(at, top, out=at)
            np.equal(at, s, out=inside[start : start + zb.size])
            idx = at.astype(np.intp)
            x = np.subtract(at, idx, out=s)
            x *= 2.0
            x -= 1.0
            p = lead.take(idx, out=out[start : start + zb.size], mode="clip")  # in range: "clip" skips the check
            term = np.empty(zb.size)
            for row in rows:  # Horner's rule: the polynomials are short and their coefficients small
                p *= x
                p += row.take(idx, out=term, mode="clip")
        return out, inside


@lru_cache(maxsize=64)
def _table(c: float, r: float, kind: str) -> _Table | None:
    """The table (:class:`_Table`) of the standard law's ``"cdf"``, ``"sf"`` or ``"pdf"`` at c and r > 0; None
    where it would need over :data:`_TABLE_PANELS` panels.

    Within 1e-12 of the law (tested against independent adaptive quadrature, c = 1..10, r from 1e-6 to 30;
    the PDF relative to its size where over 1): each panel's polynomial interpolates the law at
    :data:`_TABLE_DEGREE` Chebyshev points, valued by :func:`_moment` to rounding (:data:`_TABLE_FAR`). The
    CDF and survival function are tabulated apart, each with the relative precision of its own small tail.
    """
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

    kr = _TABLE_K * r
    t0 = float(np.log((kr - WINDOW * r) / (1.0 + kr + WINDOW * r)))  # the window is symmetric in t
    panels = int(np.ceil(-2.0 * t0 / _TABLE_STEP))
    if panels > _TABLE_PANELS:
        return None
    step = -2.0 * t0 / panels
    k = np.arange(_TABLE_DEGREE)
    x = np.cos(np.pi * (k + 0.5) / _TABLE_DEGREE)
    t = (t0 + step * (np.arange(panels)[:, None] + 0.5 * (1.0 + x))).ravel()
    # z and 1 - z at the nodes, each to its own relative precision: near z = 1 the law changes on the scale
    # r, and 1 - z from a rounded z would move the node by 1e-16 / r of a panel (the PDF off by 1e-9 at c = 1)
    e = np.exp(t)
    z, mu = (1.0 + 2.0 * kr) * e / (1.0 + e) - kr, (1.0 + 2.0 * kr) / (1.0 + e) - kr
    if kind == "pdf":
        values = 0.5 * c * _moment(mu, r, c - 1.0, z, far_from=_TABLE_FAR)
    elif kind == "cdf":
        values = special.ndtr(z / r) - _moment(mu, r, c + 1.0, z, far_from=_TABLE_FAR)
    else:
        values = special.ndtr(-z / r) + _moment(mu, r, c + 1.0, z, far_from=_TABLE_FAR)
    dct = np.cos(np.pi * np.outer(k, k + 0.5) / _TABLE_DEGREE).T * (2.0 / _TABLE_DEGREE)
    dct[:, 0] *= 0.5
    coef = values.reshape(panels, _TABLE_DEGREE) @ dct @ _CHEB_TO_MONOMIAL  # Chebyshev series, then powers
    return _Table(kr, t0, panels / (-2.0 * t0), panels, np.ascontiguousarray(coef[:, ::-1].T))


# Row j: the monomial coefficients of the Chebyshev polynomial T_j (its recurrence T_(j+1) = 2x T_j - T_(j-1)).
_CHEB_TO_MONOMIAL = np.zeros((_TABLE_DEGREE, _TABLE_DEGREE))
_CHEB_TO_MONOMIAL[0, 0] = _CHEB_TO_MONOMIAL[1, 1] = 1.0
for _j in range(2, _TABLE_DEGREE):
    _CHEB_TO_MONOMIAL[_j, 1:] = 2.0 * _CHEB_TO_MONOMIAL[_j - 1, :-1]
    _CHEB_TO_MONOMIAL[_j] -= _CHEB_TO_MONOMIAL[_j - 2]


def _table_of(z: np.ndarray, c: np.ndarray, r: np.ndarray, kind: str) -> _Table | None:
    """The table for z of the law that c and r hold (arrays, before broadcasting), or None: when z holds fewer
    than :data:`_TABLE_FROM` points, c and r several laws, or no noise."""
    if np.broadcast(z, c, r).size < _TABLE_FROM or c.size == 0:
        return None
    if not (np.all(c == c.flat[0]) and np.all(r == r.flat[0])) or not r.flat[0] > 0:
        return None
    return _table(float(c.flat[0]), float(r.flat[0]), kind)


_RECURRENCE_R = 0.5  # up to here the recurrence's rounding stays below 1e-13 (|mu| <= 1 + 7.5 r, j <= 5)


def _integer_moment(mu: np.ndarray, r: np.ndarray, j: int) -> np.ndarray:
    """``E[V^j; 0 <= V <= 1]`` for ``V ~ Normal(mu, r)`` and integer j >= 0, in closed form.

    Integrating ``v^k g'(v)`` by parts, with g the normal density, gives ``J_(k+1) = mu J_k + r^2 (k J_(k-1) +
    g(0) [k = 0] - g(1))`` from ``J_0 = Phi((1 - mu)/r) - Phi(-mu/r)``: two normal CDFs and two densities,
    no quadrature.
    """
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

    lo, hi = -mu / r, (1.0 - mu) / r
    # Phi(hi) - Phi(lo) from the side where the two are small (no cancellation near 1).
    j0 = np.where(lo > 0, special.ndtr(-lo) - special.ndtr(-hi), special.ndtr(hi) - special.ndtr(lo))
    g0 = np.exp(-0.5 * lo * lo) / (SQRT2PI * r)
    g1 = np.exp(-0.5 * hi * hi) / (SQRT2PI * r)
    r2 = r * r
    prev, cur = np.zeros_like(mu), j0
    for k in range(j):
        nxt = mu * cur + r2 * (k * prev + (g0 if k == 0 else 0.0) - g1)
        prev, cur = cur, nxt
    return cur


def std_cdf(z, c, r, *, upper: bool = False) -> np.ndarray:
    """CDF (or with ``upper`` the survival function) of the standard concave law (a = 0, b = 1, noise ratio
    r >= 0): the one :func:`_std_cdf_sf` returns, alone (one law at many points: from its table)."""
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

    z, c, r = np.asarray(z, float), np.asarray(c, float), np.asarray(r, float)
    table = _table_of(z, c, r, "sf" if upper else "cdf")
    if table is None:
        return _std_cdf_sf(z, c, r)[1 if upper else 0]
    shape = np.broadcast(z, c, r).shape
    zf = np.broadcast_to(z, shape).ravel()
    out, inside = table(zf)
    if not inside.all():  # beyond the window the moment is 0 to rounding, as in _moment
        outside = ~inside
        zr = zf[outside] / r.flat[0]
        out[outside] = special.ndtr(-zr if upper else zr)
    return np.clip(out, 0.0, 1.0, out=out).reshape(shape)


def _std_cdf_sf(z, c, r) -> tuple[np.ndarray, np.ndarray]:
    """CDF and survival function of the standard concave law (a = 0, b = 1, noise ratio r >= 0)."""
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

    z, c, r = np.asarray(z, float), np.asarray(c, float), np.asarray(r, float)
    if _table_of(z, c, r, "cdf") is not None:
        return std_cdf(z, c, r), std_cdf(z, c, r, upper=True)
    z, c, r = np.broadcast_arrays(z, c, r)
    noisy = r > 0
    # Noise-free: closed form (also where r > 0, harmlessly replaced below).
    t = np.clip(1.0 - z, 0.0, 1.0)
    sf = t ** (0.5 * c)
    cdf = 1.0 - sf
    if noisy.any():
        rs = np.where(noisy, r, 1.0)
        mom = _moment(1.0 - z, rs, c + 1.0, z)
        cdf = np.where(noisy, special.ndtr(z / rs) - mom, cdf)
        sf = np.where(noisy, special.ndtr(-z / rs) + mom, sf)
    return np.clip(cdf, 0.0, 1.0), np.clip(sf, 0.0, 1.0)


def std_pdf(z, c, r) -> np.ndarray:
    """PDF of the standard concave law (a = 0, b = 1, noise ratio r >= 0)."""
    z, c, r = np.asarray(z, float), np.asarray(c, float), np.asarray(r, float)
    table = _table_of(z, c, r, "pdf")
    if table is not None:
        shape = np.broadcast(z, c, r).shape
        p, inside = table(np.broadcast_to(z, shape).ravel())
        return np.where(inside, np.maximum(p, 0.0), 0.0).reshape(shape)  # 0 beyond the window, as in _moment
    z, c, r = np.broadcast_arrays(z, c, r)
    noisy = r > 0
    inside = (z > 0) & (z < 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pdf = np.where(inside, 0.5 * c * np.where(inside, 1.0 - z, 1.0) ** (0.5 * c - 1.0), 0.0)
    if noisy.any():
        rs = np.where(noisy, r, 1.0)
        pdf = np.where(noisy, 0.5 * c * _moment(1.0 - z, rs, c - 1.0, z), pdf)
    return pdf


def _std_cdf_sf_pdf(z: np.ndarray, c: np.ndarray, r: np.ndarray):
    """CDF, survival function and PDF of the standard concave law, r > 0, 1-d arrays: both moments from one
    pass of exponentials (what a quantile's Newton step needs)."""
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

    mu = 1.0 - z
    m_cdf, m_pdf = np.zeros(z.size), np.zeros(z.size)
    live = np.flatnonzero((mu + WINDOW * r > 0) & (mu - WINDOW * r < 1))
    for start in range(0, live.size, _CHUNK):
        idx = live[start : start + _CHUNK]
        mu_i, r_i, c_i = mu[idx], r[idx], c[idx]
        u, wts = nodes(mu_i, r_i)
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
        scale = 2.0 / (r_i * SQRT2PI)
        m_pdf[idx] = g.sum(axis=1) * scale
        g *= u2
        m_cdf[idx] = g.sum(axis=1) * scale
    zr = z / r
    cdf = np.clip(special.ndtr(zr) - m_cdf, 0.0, 1.0)
    sf = np.clip(special.ndtr(-zr) + m_cdf, 0.0, 1.0)
    return cdf, sf, 0.5 * c * m_pdf


def std_ppf(p, c, r, *, upper: np.ndarray | None = None) -> np.ndarray:
    """Quantiles of the standard concave law at probabilities ``p`` (``upper = 1 - p``, given for accuracy)."""
    from scipy import special  # imported on use: 0.2 s, and distributions load this module

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
                dens = std_pdf(x, cc[sel], rr[sel])
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


TS_LOG_U, TS_W = _tanh_sinh()


def ks_iv(ks) -> np.ndarray:
    ks = np.asarray(ks, dtype=np.float64)
    if ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks <= 0):
        raise ValueError(f"ks must be finite budgets > 0, got {ks.ravel()[:5].tolist()}")
    return ks


def c_iv(c: Any) -> int:
    if (
        isinstance(c, bool)
        or not isinstance(c, (int, np.integer, float))
        or float(c) != int(c)
        or int(c) not in C_RANGE
    ):
        raise InvalidParameter("c", f"must be an integer from {C_RANGE[0]} to {C_RANGE[-1]}", c)
    return int(c)


# The mean curves of fitted laws by tanh-sinh with step 1/8 (52 nodes): within 2e-8 of the 103-node rule the
# exact truths use (measured, c = 1..10, o/(b - a) from 1e-3 to 1), far below any band's width, at half the cost.
_FIT_TS_LOG_U, _FIT_TS_W = _tanh_sinh(h=1.0 / 8)


def curves(a, b, c, o, convex: bool, ks: np.ndarray, *, q: float = 0.5, mean: bool = True):
    """Median (q) and mean tuning curves of many laws at once: (R,) parameters, ks (K,) -> (R, K) each.

    The best of k runs is the max for a concave law and the min for a convex one.
    """
    s = (b - a)[:, None]
    r = (o / (b - a))[:, None]
    cc = np.asarray(c, dtype=np.float64)[:, None]
    # Standard concave form (a convex law's -Y is concave): the best of k is the max there, whose q-quantile
    # is F^-1(q^(1/k)); a convex law's min is minus that max, so its q-quantile is the max's (1 - q)-quantile.
    log_p = np.log(1.0 - q if convex else q) / ks[None, :]
    z = std_ppf(np.exp(log_p), cc, r, upper=-np.expm1(log_p))
    med = b[:, None] - s * (1.0 - z) if not convex else a[:, None] + s * (1.0 - z)
    if not mean:
        return med, None
    lu = _FIT_TS_LOG_U[None, None, :] / ks[None, :, None]
    zm = std_ppf(np.exp(lu), cc[..., None], r[..., None], upper=-np.expm1(lu)) @ _FIT_TS_W
    avg = b[:, None] - s * (1.0 - zm) if not convex else a[:, None] + s * (1.0 - zm)
    return med, avg
