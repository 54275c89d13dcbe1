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
normal, computed here by Gauss-Legendre quadrature (two 24-point panels split at the bell's peak) after
``V = U^2`` (which makes the integrand a polynomial times a Gaussian, smooth for every c) on the window of
+-7.5 standard deviations where the Gaussian has mass (absolute error below 1e-10, tested against 30-digit
quadrature); where V's mean is over 1e4 of its standard deviations above 0, and ``U^2`` minus that mean would
cancel, in the noise's own variable. For even c the moments are integer moments of a truncated normal, in
closed form by a recurrence (no quadrature) wherever ``o/(b - a) <= 0.5``. One law at many points (20,000 or
more) is evaluated from tables built once per law (in :mod:`simstudy.stats.quadratic`): its CDF, survival
function and PDF as piecewise polynomials on panels found by arithmetic, within 1e-12 of the law (tested
against independent quadrature). Quantiles solve the CDF (or, above the median, the survival function, for
relative accuracy in the upper tail) on logs by safeguarded Newton inside the exact bracket
``[a + o z_p, b + o z_p]``; tuning curves follow from the quantile function, the mean one by tanh-sinh
quadrature of ``F^-1(u^(1/k))`` over u in (0, 1).

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

from simstudy.distributions.base import InvalidParameter, finite
from simstudy.stats.quadratic import C_RANGE, TS_LOG_U, TS_W, c_iv, ks_iv, std_cdf, std_pdf, std_ppf

__all__ = ["Quadratic", "NoisyQuadratic", "C_RANGE"]


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
    simstudy.distributions.fitting.fit : Fit the law to the tail of observed scores.

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
    simstudy.stats.errors.InvalidParameter: b must be greater than a=0.9, got 0.7
    """

    a: float
    b: float
    c: int
    o: float = 0.0
    convex: bool = False
    name: str = "noisy_quadratic"

    def __post_init__(self) -> None:
        a, b = finite("a", self.a), finite("b", self.b)
        if not a < b:
            raise InvalidParameter("b", f"must be greater than a={a:g}", self.b)
        o = finite("o", self.o)
        if o < 0:
            raise InvalidParameter("o", "must be >= 0 (the noise's standard deviation)", self.o)
        if not isinstance(self.convex, (bool, np.bool_)):
            raise InvalidParameter("convex", "must be true or false", self.convex)
        for key, value in (("a", a), ("b", b), ("c", c_iv(self.c)), ("o", o), ("convex", bool(self.convex))):
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
        return std_cdf(self._z(x), self.c, self._r, upper=self.convex)

    cdf_left = cdf  # continuous: no atoms

    def sf(self, x) -> np.ndarray:
        """``P(Y > x)``, accurate in the upper tail; shape of ``x``."""
        return std_cdf(self._z(x), self.c, self._r, upper=not self.convex)

    def pdf(self, x) -> np.ndarray:
        """The density (per score unit); shape of ``x``."""
        return std_pdf(self._z(x), self.c, self._r) / (self.b - self.a)

    def ppf(self, q, *, upper=None) -> np.ndarray:
        """The quantile function at ``q`` (``upper = 1 - q`` may be given exactly, for the upper tail)."""
        q = np.asarray(q, dtype=np.float64)
        upper = 1.0 - q if upper is None else np.asarray(upper, dtype=np.float64)
        if self.convex:  # Y <= y  <=>  Z >= (b - y)/(b - a)
            return self.b - (self.b - self.a) * std_ppf(upper, self.c, self._r, upper=q)
        return self.a + (self.b - self.a) * std_ppf(q, self.c, self._r, upper=upper)

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
        ks = ks_iv(ks)
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
        from scipy import special  # imported on use (0.2 s at every start)

        ks = ks_iv(ks)
        width, g = self.b - self.a, 2.0 / self.c
        if self.o == 0:
            towards_best = minimize == self.convex  # the max of a concave law, the min of a convex one
            if towards_best:
                gap = width * np.exp(special.gammaln(ks + 1) + special.gammaln(1 + g) - special.gammaln(ks + 1 + g))
                return self.a + gap if self.convex else self.b - gap
            gap = width * ks / (ks + g)
            return self.b - gap if not self.convex else self.a + gap
        log_u = TS_LOG_U[:, None] / ks.ravel()[None, :]  # log of u^(1/k), shape (nodes, len(ks))
        p, upper = np.exp(log_u), -np.expm1(log_u)
        x = self.ppf(upper, upper=p) if minimize else self.ppf(p, upper=upper)
        return (TS_W @ x).reshape(ks.shape)

    def describe(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "c": self.c, "o": self.o, "convex": self.convex}

    @classmethod
    def fit(cls, ys, limits: tuple[float, float] | None = None, constraints=None) -> NoisyQuadratic:
        """The law fitted to the tail of ``ys`` by maximum product of spacings (:func:`simstudy.distributions.fitting.fit`,
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
            As :func:`simstudy.distributions.fitting.fit` does: too few scores above the threshold, bad limits or
            constraints.

        Examples
        --------
        Scores above 0.5 of 200 draws, with ``c`` searched among 1, 2 and 3 (all ten take longer):

        >>> ys = NoisyQuadratic(0.0, 1.0, 2, 0.01).sample(200, rng=np.random.default_rng(3))
        >>> law = NoisyQuadratic.fit(ys, limits=(0.5, np.inf), constraints={"c": [1, 2, 3]})
        >>> law.c, round(law.b, 2)
        (2, 0.98)
        """
        from simstudy.stats.parametric_fit import fit_one  # imported on use: the fit loads scipy

        return cls._fitted(fit_one(ys, limits, constraints))

    @staticmethod
    def _fitted(out: dict[str, Any]) -> NoisyQuadratic:
        """The law of a fit's parameters (:func:`simstudy.stats.parametric_fit.fit_one`), in score units."""
        return NoisyQuadratic(out["a"], out["b"], out["c"], out["o"], out["convex"])


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
    simstudy.stats.errors.InvalidParameter: c must be an integer from 1 to 10, got 12
    """

    def __init__(self, a: float, b: float, c: int, convex: bool = False, name: str = "quadratic"):
        super().__init__(a, b, c, 0.0, convex, name)

    def __repr__(self) -> str:
        return f"Quadratic(a={self.a!r}, b={self.b!r}, c={self.c!r}, convex={self.convex!r})"
