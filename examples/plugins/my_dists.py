"""A score distribution of one's own, for the plug-ins guide (docs/guides/plugins.md).

Copy this file into the directory you run ``simstudy`` from, then name the class with ``_target_`` and its
keyword arguments next to it::

    simstudy experiment=dodge2021_fig1 distribution=custom distribution._target_=my_dists.Kumaraswamy +distribution.a=3

The interface (``simstudy.distributions.ScoreDistribution``): ``support``, ``is_discrete``,
``sample(size, *, rng)``, ``cdf(x)`` and ``ppf(q)``; ``cdf_left`` only for a distribution with atoms.
"""

import numpy as np

__all__ = ["Kumaraswamy"]


class Kumaraswamy:
    """The Kumaraswamy distribution on [0, 1]: ``F(x) = 1 - (1 - x^a)^b``.

    A Beta-like law with a closed-form CDF and quantile function, so sampling is by inversion and the exact
    truths (by quadrature over [0, 1]) need nothing else. Its mean is ``b B(1 + 1/a, b)``.

    Parameters
    ----------
    a, b : float
        Shape parameters, finite and > 0; ``b`` defaults to 2 (with ``a = 3`` the mean is about 0.643).
    name : str, optional
        The label in tables and figures; default ``"kumaraswamy"``.

    Attributes
    ----------
    support : tuple of float
        ``(0.0, 1.0)``.
    is_discrete : bool
        ``False``: a continuous law, its truths by quadrature.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not a finite number > 0.

    Examples
    --------
    >>> d = Kumaraswamy(3)
    >>> d.support, d.is_discrete
    ((0.0, 1.0), False)
    >>> d.cdf(np.array([0.0, 0.5, 1.0])).round(4)
    array([0.    , 0.2344, 1.    ])
    >>> d.ppf(np.array([0.2344])).round(3)
    array([0.5])
    >>> d.sample(3, rng=np.random.default_rng(0)).round(3)
    array([0.735, 0.526, 0.275])
    """

    is_discrete = False
    support = (0.0, 1.0)

    def __init__(self, a, b=2.0, name=None):
        for key, value in (("a", a), ("b", b)):
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{key} must be a finite number > 0, got {value!r}")
        self.a, self.b, self.name = float(a), float(b), name or "kumaraswamy"

    def sample(self, size, *, rng):
        """``size`` scores drawn by inversion from the generator ``rng``; float64 of shape ``size``."""
        return self.ppf(rng.random(size))

    def cdf(self, x):
        """``P(X <= x)`` elementwise (0 below the support, 1 above it)."""
        x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
        with np.errstate(divide="ignore"):  # x = 1: log1p(-1) = -inf, and the CDF is exactly 1
            return -np.expm1(self.b * np.log1p(-(x**self.a)))  # 1 - (1 - x^a)^b without cancellation near 0

    def ppf(self, q):
        """The quantile function ``(1 - (1 - q)^(1/b))^(1/a)`` for probabilities ``q`` in [0, 1]."""
        q = np.asarray(q, dtype=np.float64)
        with np.errstate(divide="ignore"):  # q = 1: log1p(-1) = -inf, and the quantile is exactly 1
            return (-np.expm1(np.log1p(-q) / self.b)) ** (1.0 / self.a)
