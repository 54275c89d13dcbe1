"""Score distributions: the populations that simulated tuning runs draw their scores from.

Every distribution has one interface, :class:`ScoreDistribution`:

- ``sample(size, rng=...)`` draws i.i.d. scores with a :class:`numpy.random.Generator`;
- ``cdf(x)`` is ``P(X <= x)`` and ``cdf_left(x)`` is ``P(X < x)`` (they differ only at atoms);
- ``ppf(q)`` is the quantile function ``inf {x : F(x) >= q}``;
- ``support`` is ``(low, high)``;
- ``is_discrete`` says whether exact sums (a :class:`Bag`) or quadrature (continuous) give the truths.

Two families cover the studies: a finite :class:`Bag` (a population of values drawn with replacement;
this is also the empirical distribution of real scores, shipped or from a researcher's own file) and a
continuous :class:`TruncatedNormal`; the parametric laws of random search near the optimum,
:class:`Quadratic` and :class:`NoisyQuadratic` (Lourie, He & Cho 2025; :mod:`simstudy.distributions.parametric`), give
scores with closed-form truths. Any continuous :mod:`scipy.stats` distribution joins them as a
:class:`ScipyDistribution` (kind ``scipy``), and a user's own class with this interface by its import path
(kind ``target``, :class:`simstudy.plugins.PluginDistribution`).
:func:`truncnorm_bag` builds the bag of Dodge et al. (2021, §3.1), and :func:`from_spec` builds any of them
from a kind name and parameters, as the config layer does.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "InvalidParameter",
    "ScoreDistribution",
    "Bag",
    "TruncatedNormal",
    "ReflectedKDE",
    "KDEWithAtoms",
    "ScipyDistribution",
    "Quadratic",
    "NoisyQuadratic",
    "truncnorm_bag",
    "Mirrored",
    "mirror",
    "from_spec",
    "parameters",
    "sample_sorted",
    "describe",
    "KINDS",
]


class InvalidParameter(ValueError):
    """A parameter out of its domain. The message starts with the parameter's name.

    Raised by the distributions' constructors and :func:`from_spec` when a parameter is missing, of the
    wrong type or outside its domain. The config layer prefixes the name with its config group
    (``distribution.sd must be ...``), so the same check gives a precise message from Python and from the
    command line. It is a :class:`ValueError`.

    Parameters
    ----------
    name : str
        The parameter's name (or config key, e.g. ``"params.a"``); kept as the attribute ``name``.
    requirement : str
        What the parameter must satisfy, e.g. ``"must be > 0"``; kept as ``requirement``.
    value : object
        The value given; kept as ``value`` and shown with :func:`repr` in the message.

    Examples
    --------
    >>> TruncatedNormal(sd=0)
    Traceback (most recent call last):
        ...
    simstudy.distributions.InvalidParameter: sd must be > 0, got 0
    >>> err = InvalidParameter("sd", "must be > 0", -1.0)
    >>> str(err), err.name, err.value
    ('sd must be > 0, got -1.0', 'sd', -1.0)
    """

    def __init__(self, name: str, requirement: str, value: Any):
        self.name, self.requirement, self.value = name, requirement, value
        super().__init__(f"{name} {requirement}, got {value!r}")


@runtime_checkable
class ScoreDistribution(Protocol):
    """What the studies need of a score distribution: the interface every distribution kind implements.

    A structural (duck-typed) protocol: any object with these members is a score distribution, and
    ``isinstance(obj, ScoreDistribution)`` checks that the members exist (not their signatures). Scores
    are in the units of the metric (e.g. accuracy in [0, 1]). The members are:

    - ``support`` -- ``(low, high)``, floats in score units (``-inf``/``inf`` for an unbounded law);
    - ``is_discrete`` -- True when truths are exact sums over atoms (a :class:`Bag`), False for quadrature;
    - ``sample(size, *, rng)`` -- i.i.d. scores of shape ``size`` drawn with a :class:`numpy.random.Generator`;
    - ``cdf(x)`` -- ``P(X <= x)`` elementwise, and ``cdf_left(x)`` -- ``P(X < x)`` (they differ only at atoms);
    - ``ppf(q)`` -- the quantile function ``inf {x : F(x) >= q}`` for probabilities ``q`` in [0, 1].

    A plug-in class with these members can be named in a config by its import path (kind ``target``,
    :class:`simstudy.plugins.PluginDistribution`).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated itself (a class implements it).

    Raises
    ------
    TypeError
        If the protocol itself is instantiated ("Protocols cannot be instantiated").

    Examples
    --------
    >>> isinstance(Bag([0.6, 0.7]), ScoreDistribution), isinstance([0.6, 0.7], ScoreDistribution)
    (True, False)
    >>> ScoreDistribution()
    Traceback (most recent call last):
        ...
    TypeError: Protocols cannot be instantiated
    """

    @property
    def support(self) -> tuple[float, float]: ...

    @property
    def is_discrete(self) -> bool: ...

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray: ...

    def cdf(self, x: np.ndarray) -> np.ndarray: ...

    def cdf_left(self, x: np.ndarray) -> np.ndarray: ...

    def ppf(self, q: np.ndarray) -> np.ndarray: ...


def _finite(name: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(name, "must be a number", value) from None
    if not np.isfinite(x):
        raise InvalidParameter(name, "must be finite", value)
    return x


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameter(name, "must be an integer >= 1", value)
    return int(value)


@dataclass(frozen=True, eq=False)
class Bag:
    """A finite population of scores, sampled with replacement.

    Parameters
    ----------
    values : array_like of float, shape (m,)
        The population, duplicates allowed (a value's probability is its multiplicity / m), at least one
        finite value; any shape, flattened. Scores are in the units of the metric (e.g. accuracy in [0, 1]).
    name : str, optional
        A label for tables and plots; default ``"bag"``.

    Attributes
    ----------
    values : ndarray, shape (m,)
        The population, sorted ascending, read-only.
    atoms : ndarray, shape (k,)
        The distinct values, ascending.
    cum_prob : ndarray, shape (k,)
        ``P(X <= atoms[j])``; the last entry is exactly 1.

    Raises
    ------
    InvalidParameter
        If `values` is empty or holds a non-finite value (the message starts with ``values``).

    See Also
    --------
    truncnorm_bag : The bag of Dodge et al. (2021), a resample of a truncated-normal population.

    Examples
    --------
    >>> bag = Bag([0.6, 0.7, 0.7, 0.9])
    >>> bag, bag.support, bag.is_discrete
    (Bag(name='bag', size=4, unique=3), (0.6, 0.9), True)
    >>> bag.sample(5, rng=np.random.default_rng(0)).tolist()
    [0.9, 0.7, 0.7, 0.7, 0.7]
    >>> bag.cdf([0.7, 0.8]).tolist(), float(bag.cdf_left(0.7)), bag.ppf([0.25, 0.5, 0.9]).tolist()
    ([0.75, 0.75], 0.25, [0.6, 0.7, 0.9])
    """

    values: np.ndarray
    name: str = "bag"
    atoms: np.ndarray = field(init=False, repr=False)
    cum_prob: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        values = np.sort(np.asarray(self.values, dtype=np.float64).ravel())
        if values.size < 1:
            raise InvalidParameter("values", "must hold at least one score", values.size)
        if not np.all(np.isfinite(values)):
            bad = values[~np.isfinite(values)][0]
            raise InvalidParameter("values", "must all be finite", float(bad))
        values.flags.writeable = False
        atoms, counts = np.unique(values, return_counts=True)
        cum = np.cumsum(counts) / values.size
        cum[-1] = 1.0  # exact, so that F(max) ** n == 1 for every n
        for arr in (atoms, cum):
            arr.flags.writeable = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "cum_prob", cum)

    def __repr__(self) -> str:
        return f"Bag(name={self.name!r}, size={self.values.size}, unique={self.atoms.size})"

    @property
    def support(self) -> tuple[float, float]:
        return float(self.values[0]), float(self.values[-1])

    @property
    def is_discrete(self) -> bool:
        return True

    @property
    def size(self) -> int:
        """Number of values in the population (with multiplicity)."""
        return int(self.values.size)

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``size`` scores with replacement, shape ``size``."""
        return self.values[rng.integers(0, self.values.size, size=size)]

    def sample_sorted(self, reps: int, B: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw ``reps`` samples of ``B`` scores, each row sorted ascending; shape (reps, B).

        Because :attr:`values` is sorted, sorting the drawn indices sorts the scores; this consumes the
        generator exactly as ``sample((reps, B))`` does, so both give the same multiset per row.
        """
        idx = rng.integers(0, self.values.size, size=(reps, B))
        idx.sort(axis=1)
        return self.values[idx]

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """``P(X <= x)``, elementwise; same shape as ``x``."""
        j = np.searchsorted(self.atoms, x, side="right")
        return np.where(j > 0, self.cum_prob[np.maximum(j - 1, 0)], 0.0)

    def cdf_left(self, x: np.ndarray) -> np.ndarray:
        """``P(X < x)``, elementwise; same shape as ``x``."""
        j = np.searchsorted(self.atoms, x, side="left")
        return np.where(j > 0, self.cum_prob[np.maximum(j - 1, 0)], 0.0)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        """The smallest atom ``v`` with ``P(X <= v) >= q``, elementwise."""
        q = np.asarray(q, dtype=np.float64)
        j = np.searchsorted(self.cum_prob, q, side="left")
        return self.atoms[np.minimum(j, self.atoms.size - 1)]


class _BoundedContinuous:
    """Shared by the continuous distributions on [low, high]: no atoms, so P(X < x) = P(X <= x)."""

    low: float
    high: float

    @property
    def support(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def is_discrete(self) -> bool:
        return False

    if TYPE_CHECKING:  # each subclass defines it

        def cdf(self, x) -> np.ndarray: ...

    def cdf_left(self, x) -> np.ndarray:
        return self.cdf(x)


@dataclass(frozen=True, eq=False)
class TruncatedNormal(_BoundedContinuous):
    """A normal distribution with mean ``mean`` and standard deviation ``sd``, truncated to [low, high].

    A thin wrapper of :data:`scipy.stats.truncnorm` with the parameters in score units. With the defaults it
    is the population of the simulation of Dodge et al. (2021, §3.1); :func:`truncnorm_bag` draws their
    finite bag from it.

    Parameters
    ----------
    mean : float, optional
        The mean of the normal before truncation, in score units; default 0.6.
    sd : float, optional
        Its standard deviation before truncation, in score units, ``> 0``; default 0.07.
    low, high : float, optional
        The truncation bounds in score units, ``low < high`` (either may be infinite); default 0.0 and 1.0.
    name : str, optional
        A label for tables and plots; default ``"truncnorm"``.

    Raises
    ------
    InvalidParameter
        If `mean` or `sd` is not a finite number, if ``sd <= 0``, or if not ``low < high`` (the message
        starts with the parameter's name).

    References
    ----------
    .. [1] Dodge, J., Gururangan, S., Card, D., Schwartz, R. & Smith, N. A. (2021). Expected validation
       performance and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Examples
    --------
    >>> dist = TruncatedNormal(mean=0.6, sd=0.07)
    >>> dist.support, dist.is_discrete
    ((0.0, 1.0), False)
    >>> np.round(dist.sample(3, rng=np.random.default_rng(0)), 4).tolist()
    [0.6245, 0.5571, 0.4782]
    >>> round(float(dist.cdf(0.6)), 4), round(float(dist.ppf(0.975)), 4)
    (0.5, 0.7372)
    """

    mean: float = 0.6
    sd: float = 0.07
    low: float = 0.0
    high: float = 1.0
    name: str = "truncnorm"

    def __post_init__(self) -> None:
        mean = _finite("mean", self.mean)
        sd = _finite("sd", self.sd)
        low, high = float(self.low), float(self.high)
        if not sd > 0:
            raise InvalidParameter("sd", "must be > 0", self.sd)
        if np.isnan(low) or np.isnan(high) or not low < high:
            raise InvalidParameter("high", f"must be greater than low={low}", self.high)
        for name, value in (("mean", mean), ("sd", sd), ("low", low), ("high", high)):
            object.__setattr__(self, name, value)

    @property
    def _dist(self):
        from scipy import stats  # imported on use: scipy.stats alone takes 0.6 s to import, a slow CLI start

        a, b = (self.low - self.mean) / self.sd, (self.high - self.mean) / self.sd
        return stats.truncnorm(a, b, loc=self.mean, scale=self.sd)

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        return self._dist.rvs(size=size, random_state=rng)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.cdf(x)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.ppf(q)


@dataclass(frozen=True, eq=False)
class ReflectedKDE(_BoundedContinuous):
    """A Gaussian kernel density estimate on [low, high] with reflection at the bounds (Jones 1993).

    The density is the kernel mixture folded onto the support: every kernel's mass beyond a bound is
    reflected back, as often as needed (the method of images), so there is no mass outside [low, high] and
    the CDF is an exact sum of normal CDFs. Sampling draws from the mixture and folds, which is exactly this
    distribution. Lourie et al. (§4, App. B) use it to simulate random search with a known tuning curve.

    Parameters
    ----------
    data : array_like of float, shape (m,)
        The scores the KDE is fitted to (the kernels' centres), at least one, finite and within
        [low, high]; any shape, flattened.
    bandwidth : float
        The kernel's standard deviation in score units, ``> 0``. See :meth:`fit` for a rule of thumb or
        scipy-style factors.
    low, high : float, optional
        The support's finite bounds in score units, ``low < high``; default 0.0 and 1.0.
    name : str, optional
        A label for tables and plots; default ``"kde"``.

    Raises
    ------
    InvalidParameter
        If the bounds are not finite with ``low < high``, if `bandwidth` is not a finite number ``> 0``, or
        if `data` is empty, non-finite or outside [low, high].

    References
    ----------
    .. [1] Jones, M. C. (1993). Simple boundary correction for kernel density estimation. Statistics and
       Computing 3, 135-146.
    .. [2] Lourie, N., Cho, K. & He, H. (2024). Show your work with confidence: confidence bands for tuning
       curves. NAACL 2024 (§4 and App. B).

    Examples
    --------
    >>> kde = ReflectedKDE([0.02, 0.1, 0.5, 0.52, 0.6], bandwidth=0.05)
    >>> kde
    ReflectedKDE(name='kde', m=5, bandwidth=0.05, support=[0.0, 1.0])
    >>> np.round(kde.sample(3, rng=np.random.default_rng(0)), 4).tolist()
    [0.632, 0.5252, 0.4732]
    >>> float(kde.cdf(0.0)), round(float(kde.cdf(0.5)), 4), round(float(kde.ppf(0.5)), 4)
    (0.0, 0.5735, 0.4751)
    >>> ReflectedKDE.fit([0.02, 0.1, 0.5, 0.52, 0.6])  # Silverman's rule of thumb
    ReflectedKDE(name='kde', m=5, bandwidth=0.1742, support=[0.0, 1.0])
    """

    data: np.ndarray
    bandwidth: float
    low: float = 0.0
    high: float = 1.0
    name: str = "kde"
    _centers: np.ndarray = field(init=False, repr=False)

    # Kernels further than this many bandwidths from the support add nothing at double precision.
    _REACH = 10.0

    def __post_init__(self) -> None:
        low, high = float(self.low), float(self.high)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise InvalidParameter("high", f"must be finite and greater than low={low}", self.high)
        h = _finite("bandwidth", self.bandwidth)
        if not h > 0:
            raise InvalidParameter("bandwidth", "must be > 0", self.bandwidth)
        x = np.sort(np.asarray(self.data, dtype=np.float64).ravel())
        if x.size < 1 or not np.all(np.isfinite(x)):
            raise InvalidParameter("data", "must hold finite scores", x.size)
        if x[0] < low or x[-1] > high:
            raise InvalidParameter(
                "data", f"must lie within [low, high] = [{low}, {high}]", float(x[0] if x[0] < low else x[-1])
            )
        L = high - low
        # Images of each kernel under reflection at low and high: x + 2kL and 2 low - x + 2kL.
        k = np.arange(-int(np.ceil(self._REACH * h / L)) - 1, int(np.ceil(self._REACH * h / L)) + 2)
        centers = np.concatenate([x[:, None] + 2 * k * L, 2 * low - x[:, None] + 2 * k * L], axis=1).ravel()
        near = (centers > low - self._REACH * h) & (centers < high + self._REACH * h)
        for name, value in (("data", x), ("low", low), ("high", high), ("bandwidth", h)):
            object.__setattr__(self, name, value)
        x.flags.writeable = False
        object.__setattr__(self, "_centers", np.sort(centers[near]))

    @classmethod
    def fit(
        cls,
        data,
        *,
        bandwidth: float | None = None,
        bw_factor: float | None = None,
        bw_of: str = "reflected",
        low: float = 0.0,
        high: float = 1.0,
        name: str = "kde",
    ) -> ReflectedKDE:
        """Fit to data with an absolute ``bandwidth``, a scipy ``gaussian_kde``-style ``bw_factor``, or (neither
        given) Silverman's rule of thumb, ``0.9 min(SD, IQR / 1.34) m^(-1/5)`` of the data.

        With a factor the kernel SD is ``bw_factor`` times the sample SD (ddof 1) of the data the KDE is
        fitted to: ``bw_of="reflected"``, the data with its reflections at both bounds (a reflected fit, as
        Lourie et al. fit the Reuters scores: factors 0.05 and 0.0125 give SDs of about 0.0429 and 0.0107);
        ``bw_of="data"``, the data alone (as they fit DeBERTa, without reflection: 0.05 gives about 0.0095
        and 0.0070).

        Parameters
        ----------
        data : array_like of float, shape (m,)
            The scores, within [low, high]; any shape, flattened.
        bandwidth : float, optional, keyword-only
            The kernel's standard deviation in score units; default None (chosen by ``bw_factor`` or the rule).
        bw_factor : float, optional, keyword-only
            A factor ``> 0`` times the sample SD of the data (see ``bw_of``); default None.
        bw_of : {"reflected", "data"}, keyword-only
            Whose SD ``bw_factor`` multiplies; default ``"reflected"``.
        low, high : float, keyword-only
            The support's bounds in score units; default 0.0 and 1.0.
        name : str, keyword-only
            A label; default ``"kde"``.

        Returns
        -------
        ReflectedKDE
            The fitted distribution.

        Raises
        ------
        InvalidParameter
            If both `bandwidth` and `bw_factor` are given, if the rule of thumb meets constant data, if
            `bw_factor` is not ``> 0`` or `bw_of` is unknown, or as the constructor does.

        Examples
        --------
        >>> x = [0.2, 0.4, 0.5, 0.9]
        >>> round(ReflectedKDE.fit(x, bw_factor=0.05).bandwidth, 4)  # 0.05 SD of x with its reflections
        0.0447
        >>> round(ReflectedKDE.fit(x, bw_factor=0.05, bw_of="data").bandwidth, 4)
        0.0147
        >>> round(ReflectedKDE.fit(x).bandwidth, 4)  # Silverman's rule of thumb
        0.1273
        """
        x = np.asarray(data, dtype=np.float64).ravel()
        if bandwidth is not None and bw_factor is not None:
            raise InvalidParameter("bandwidth", "and bw_factor cannot both be given", bandwidth)
        if bandwidth is None and bw_factor is None:
            # Silverman's rule of thumb on the data themselves: 0.9 min(SD, IQR / 1.34) m^(-1/5).
            spread = min(np.std(x, ddof=1), np.subtract(*np.percentile(x, [75, 25])) / 1.34) if x.size > 1 else 0.0
            if not spread > 0:
                spread = np.std(x, ddof=1) if x.size > 1 else 0.0
            if not spread > 0:
                raise InvalidParameter("bandwidth", "cannot be chosen by rule for constant data; give one", None)
            bandwidth = 0.9 * spread * x.size**-0.2
        elif bandwidth is None:
            factor = _finite("bw_factor", bw_factor)
            if not factor > 0:
                raise InvalidParameter("bw_factor", "must be > 0", bw_factor)
            if bw_of not in ("reflected", "data"):
                raise InvalidParameter("bw_of", "must be one of reflected, data", bw_of)
            ref = np.concatenate([x, 2 * low - x, 2 * high - x]) if bw_of == "reflected" else x
            bandwidth = factor * float(np.std(ref, ddof=1))
        return cls(x, bandwidth, low, high, name)

    def __repr__(self) -> str:
        return (
            f"ReflectedKDE(name={self.name!r}, m={self.data.size}, bandwidth={self.bandwidth:.4g}, "
            f"support=[{self.low}, {self.high}])"
        )

    def _blocks(self, x: np.ndarray):
        step = max(1, 2_000_000 // self._centers.size)  # bounds the (points x kernels) matrices
        for start in range(0, x.size, step):
            yield slice(start, start + step), (x[start : start + step, None] - self._centers[None, :]) / self.bandwidth

    def pdf(self, x) -> np.ndarray:
        """Density, 0 outside [low, high]."""
        x = np.asarray(x, dtype=np.float64)
        flat, out = x.ravel(), np.empty(x.size)
        for sl, z in self._blocks(flat):
            out[sl] = np.exp(-0.5 * z * z).sum(axis=1)
        out *= 1.0 / (self.data.size * self.bandwidth * np.sqrt(2 * np.pi))
        return np.where((flat >= self.low) & (flat <= self.high), out, 0.0).reshape(x.shape)

    def cdf(self, x) -> np.ndarray:
        """``P(X <= x)``: sums of normal CDFs over the kernels and their reflections; 0 at low, 1 at high."""
        from scipy import special

        x = np.asarray(x, dtype=np.float64)
        flat = np.clip(x.ravel(), self.low, self.high)
        base = special.ndtr((self.low - self._centers) / self.bandwidth).sum()
        total = special.ndtr((self.high - self._centers) / self.bandwidth).sum() - base
        out = np.empty(flat.size)
        for sl, z in self._blocks(flat):
            out[sl] = special.ndtr(z).sum(axis=1)
        return np.clip((out - base) / total, 0.0, 1.0).reshape(x.shape)

    def ppf(self, q) -> np.ndarray:
        """The quantile function, to about 1e-12, by a vectorized safeguarded Newton iteration."""
        from simstudy.stats._roots import safeguarded_newton

        q = np.asarray(q, dtype=np.float64)
        flat = q.ravel()
        start = np.quantile(self.data, np.clip(flat, 0, 1))

        def excess(x, sel):
            return self.cdf(x) - flat[sel], self.pdf(x)

        out = safeguarded_newton(
            excess, np.full(flat.size, self.low), np.full(flat.size, self.high), start, xtol=1e-14, ftol=1e-14
        )
        out = np.where(flat <= 0, self.low, np.where(flat >= 1, self.high, out))
        return out.reshape(q.shape)

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        """Draw from the kernel mixture and fold into [low, high] (exact for this distribution)."""
        x = self.data[rng.integers(0, self.data.size, size=size)] + self.bandwidth * rng.standard_normal(size)
        L = self.high - self.low
        t = np.mod(x - self.low, 2 * L)
        return self.low + np.where(t > L, 2 * L - t, t)


@dataclass(frozen=True, eq=False)
class KDEWithAtoms(_BoundedContinuous):
    """Point masses at some scores plus a reflected KDE of the other scores: ``sum_j p_j delta(a_j) + (1 - P) K``.

    Real tuning results have atoms -- failed runs at exactly 0 or at chance accuracy, one configuration
    reached many times -- that no kernel density describes. This distribution keeps them as point masses
    with their observed shares ``p_j`` (``P = sum_j p_j``) and fits the continuous part ``K``, a
    :class:`ReflectedKDE`, to the remaining scores. Build it with :meth:`fit`.

    It is not discrete (``is_discrete`` is False: the studies treat it as continuous, with its atoms handled
    exactly by ``cdf_left`` and by quadrature with the atoms as breakpoints); ``has_atoms`` and ``atoms`` say
    where it jumps. With no atoms every method is the continuous part's, exactly (same numbers, same random
    stream).

    Parameters
    ----------
    continuous : ReflectedKDE
        The continuous part ``K`` (fitted to the scores that are not atoms).
    atoms : array_like, shape (J,)
        The atoms' values, distinct, within [low, high] (may be empty).
    shares : array_like, shape (J,)
        Their probabilities ``p_j > 0``, with ``sum_j p_j < 1``.
    bw_method : str, optional
        How the continuous part's bandwidth was chosen (a label for reports); default ``"given"``.
    name : str, optional
        A label for tables and plots; default ``"kde_atoms"``.

    Raises
    ------
    InvalidParameter
        If `continuous` is not a :class:`ReflectedKDE`, if `atoms` and `shares` differ in length, if the
        atoms are not distinct finite values within the continuous part's support, or if the shares are not
        all ``> 0`` with a sum below 1.

    Examples
    --------
    >>> dist = KDEWithAtoms(ReflectedKDE([0.5, 0.6, 0.7], bandwidth=0.05), atoms=[0.0], shares=[0.25])
    >>> dist
    KDEWithAtoms(name='kde_atoms', atoms=[0.0], shares=[0.25], bandwidth=0.05 (given), support=[0.0, 1.0])
    >>> float(dist.cdf(0.0)), float(dist.cdf_left(0.0)), round(float(dist.cdf(0.6)), 4)
    (0.25, 0.0, 0.625)
    >>> np.round(dist.sample(4, rng=np.random.default_rng(0)), 4).tolist()
    [0.5181, 0.7652, 0.0, 0.0]
    >>> dist.ppf([0.1, 0.25, 0.625]).round(4).tolist()
    [0.0, 0.0, 0.6]
    """

    continuous: ReflectedKDE
    atoms: np.ndarray = field(default_factory=lambda: np.empty(0))
    shares: np.ndarray = field(default_factory=lambda: np.empty(0))
    bw_method: str = "given"
    name: str = "kde_atoms"
    low: float = field(init=False)
    high: float = field(init=False)
    _cum: np.ndarray = field(init=False, repr=False)  # (J + 1,) atom mass strictly below atoms[j]; last: P
    _jump: np.ndarray = field(init=False, repr=False)  # (2, J): F(a_j-) and F(a_j)

    def __post_init__(self) -> None:
        if not isinstance(self.continuous, ReflectedKDE):
            raise InvalidParameter("continuous", "must be a ReflectedKDE", self.continuous)
        low, high = self.continuous.low, self.continuous.high
        a = np.asarray(self.atoms, dtype=np.float64).ravel()
        p = np.asarray(self.shares, dtype=np.float64).ravel()
        if a.shape != p.shape:
            raise InvalidParameter("shares", f"must have one share per atom ({a.size})", p.size)
        order = np.argsort(a)
        a, p = a[order], p[order]
        if a.size and (not np.all(np.isfinite(a)) or a[0] < low or a[-1] > high or np.any(np.diff(a) <= 0)):
            raise InvalidParameter("atoms", f"must be distinct values within [{low}, {high}]", a.tolist())
        if a.size and (not np.all(p > 0) or not p.sum() < 1):
            raise InvalidParameter("shares", "must be > 0 and sum to less than 1", p.tolist())
        cum = np.concatenate(([0.0], np.cumsum(p)))
        for arr in (a, p, cum):
            arr.flags.writeable = False
        for name, value in (("atoms", a), ("shares", p), ("low", low), ("high", high), ("_cum", cum)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_jump", np.stack([self.cdf_left(a), self.cdf(a)]))

    @classmethod
    def fit(
        cls,
        data,
        *,
        bw_method: str = "isj",
        bandwidth: float | None = None,
        bw_factor: float | None = None,
        bw_of: str = "reflected",
        find_atoms: bool = True,
        low: float = 0.0,
        high: float = 1.0,
        name: str = "kde_atoms",
    ) -> KDEWithAtoms:
        """Find the atoms of ``data`` (:func:`simstudy.stats.kde.find_atoms`) and fit a reflected KDE to the rest.

        Parameters
        ----------
        data : array_like of float, shape (m,)
            At least two finite scores within [low, high] (score units); any shape, flattened.
        bw_method : {"isj", "silverman"}, keyword-only
            The continuous part's bandwidth when neither ``bandwidth`` nor ``bw_factor`` is given: the
            improved Sheather-Jones bandwidth (:func:`simstudy.stats.kde.isj_bandwidth`; Silverman's rule if its
            equation has no root, said in :attr:`bw_method`) or Silverman's rule of thumb.
        bandwidth, bw_factor : float, optional, keyword-only
            As in :meth:`ReflectedKDE.fit`, applied to the continuous part's scores; they override
            ``bw_method``. Default None.
        bw_of : {"reflected", "data"}, keyword-only
            As in :meth:`ReflectedKDE.fit`; default ``"reflected"``.
        find_atoms : bool, keyword-only
            False: no atoms, a plain reflected KDE of all the scores; default True.
        low, high : float, keyword-only
            The support's bounds in score units; default 0.0 and 1.0.
        name : str, keyword-only
            A label; default ``"kde_atoms"``.

        Returns
        -------
        KDEWithAtoms
            The atoms with their observed shares (count / m) and the KDE of the other scores.

        Raises
        ------
        InvalidParameter
            A bad bandwidth option, scores out of [low, high], or fewer than two distinct scores left for the
            continuous part once the atoms are set apart.

        Examples
        --------
        >>> x = np.concatenate([np.zeros(20), np.linspace(0.6, 0.9, 80)])
        >>> fit = KDEWithAtoms.fit(x, bw_method="silverman")
        >>> fit.atoms.tolist(), fit.shares.tolist(), float(fit.cdf(0.0)), float(fit.cdf_left(0.0))
        ([0.0], [0.2], 0.2, 0.0)
        """
        from simstudy.stats import kde

        x = np.sort(np.asarray(data, dtype=np.float64).ravel())
        if x.size < 2 or not np.all(np.isfinite(x)):
            raise InvalidParameter("data", "must hold at least two finite scores", x.size)
        if x[0] < low or x[-1] > high:
            raise InvalidParameter(
                "data", f"must lie within [low, high] = [{low}, {high}]", float(x[0] if x[0] < low else x[-1])
            )
        if bw_method not in ("isj", "silverman"):
            raise InvalidParameter("bw_method", "must be one of isj, silverman", bw_method)
        found = kde.find_atoms(x) if find_atoms else kde.Atoms(np.empty(0), np.empty(0, dtype=np.int64), 0.0)
        rest = x[~np.isin(x, found.values)]
        if x[0] == x[-1]:  # no option helps: say so rather than name one that would fail too
            raise InvalidParameter(
                "data",
                f"must hold at least two distinct scores to fit a density; all {x.size} are equal",
                float(x[0]),
            )
        if np.unique(rest).size < 2:
            raise InvalidParameter(
                "data",
                "must keep at least two distinct scores beside its atoms (repeated "
                f"values {found.values.tolist()}); give find_atoms=false to fit a KDE to all",
                x.size,
            )
        method = bw_method
        if bandwidth is None and bw_factor is None and bw_method == "isj":
            bandwidth = kde.isj_bandwidth(rest, low=low, high=high)
            if bandwidth is None:
                method = "silverman (the ISJ equation had no root)"
        elif bandwidth is not None or bw_factor is not None:
            method = "given" if bandwidth is not None else f"bw_factor {bw_factor:g} of the {bw_of} SD"
        part = ReflectedKDE.fit(
            rest, bandwidth=bandwidth, bw_factor=bw_factor, bw_of=bw_of, low=low, high=high, name=name
        )
        return cls(part, found.values, found.counts / x.size, method, name)

    def __repr__(self) -> str:
        return (
            f"KDEWithAtoms(name={self.name!r}, atoms={self.atoms.tolist()}, shares={self.shares.tolist()}, "
            f"bandwidth={self.bandwidth:.4g} ({self.bw_method}), support=[{self.low}, {self.high}])"
        )

    @property
    def has_atoms(self) -> bool:
        """Whether any atom was kept (without, this is exactly :attr:`continuous`)."""
        return self.atoms.size > 0

    @property
    def bandwidth(self) -> float:
        """The continuous part's kernel standard deviation."""
        return self.continuous.bandwidth

    @property
    def data(self) -> np.ndarray:
        """The scores of the continuous part."""
        return self.continuous.data

    @property
    def continuous_share(self) -> float:
        """``1 - P``: the probability of the continuous part."""
        return 1.0 - float(self._cum[-1])

    def pdf(self, x) -> np.ndarray:
        """The density of the continuous part, ``(1 - P) K'(x)`` (the atoms have none: they are in ``cdf``)."""
        if not self.has_atoms:
            return self.continuous.pdf(x)
        return self.continuous_share * self.continuous.pdf(x)

    def _mixed(self, x, side: Literal["left", "right"]) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        below = self._cum[np.searchsorted(self.atoms, x, side=side)]
        out = np.clip(below + self.continuous_share * self.continuous.cdf(x), 0.0, 1.0)
        # Exactly 1 past the support (and at high for P(X <= x)), so that F(high)^n == 1 for every n.
        return np.where((x >= self.high) if side == "right" else (x > self.high), 1.0, out)

    def cdf(self, x) -> np.ndarray:
        """``P(X <= x)``: the atoms at or below x plus the continuous part's CDF."""
        return self._mixed(x, "right") if self.has_atoms else self.continuous.cdf(x)

    def cdf_left(self, x) -> np.ndarray:
        """``P(X < x)``: the atoms strictly below x plus the continuous part's CDF."""
        return self._mixed(x, "left") if self.has_atoms else self.continuous.cdf(x)

    def ppf(self, q) -> np.ndarray:
        """The generalized inverse ``inf {x : F(x) >= q}``, exact across jumps.

        A q within an atom's jump ``(F(a_j-), F(a_j)]`` is that atom; any other lies on a continuous stretch
        between two atoms, where ``F = S + (1 - P) K`` with S the atom mass below, so the quantile is the
        continuous part's at ``(q - S) / (1 - P)`` (Newton's method, to about 1e-12).
        """
        if not self.has_atoms:
            return self.continuous.ppf(q)
        q = np.asarray(q, dtype=np.float64)
        flat = q.ravel()
        j = np.searchsorted(self._jump[1], flat, side="left")  # first atom with F(a_j) >= q
        jj = np.minimum(j, self.atoms.size - 1)
        on_atom = (j < self.atoms.size) & (self._jump[0][jj] < flat)
        u = np.clip((flat - self._cum[j]) / self.continuous_share, 0.0, 1.0)
        x = self.continuous.ppf(u)
        lo = np.where(j > 0, self.atoms[np.maximum(j - 1, 0)], self.low)
        hi = np.where(j < self.atoms.size, self.atoms[jj], self.high)
        out = np.where(on_atom, self.atoms[jj], np.clip(x, lo, hi))
        out = np.where(flat <= 0, self.low, np.where(flat >= 1, self.high, out))
        return out.reshape(q.shape)

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        """Draw from the mixture exactly: a uniform picks the atom or the continuous part, which is then drawn."""
        if not self.has_atoms:
            return self.continuous.sample(size, rng=rng)
        pick = np.searchsorted(self._cum[1:], rng.random(size), side="right")  # J: the continuous part
        out = self.atoms[np.minimum(pick, self.atoms.size - 1)]
        smooth = pick == self.atoms.size
        out[smooth] = self.continuous.sample(int(smooth.sum()), rng=rng)
        return out


def _scipy_continuous_names() -> list[str]:
    from scipy import stats

    return sorted(n for n in dir(stats) if isinstance(getattr(stats, n), stats.rv_continuous))


@dataclass(frozen=True, eq=False)
class ScipyDistribution(_BoundedContinuous):
    """Any continuous :mod:`scipy.stats` distribution, bounded or not, by name and parameters.

    Truths come by quadrature (:mod:`simstudy.stats.truth`): on ``[low, high]`` for a bounded support, through the
    quantile function otherwise. The distribution must have a finite mean and variance (the expected maximum
    and the estimators' MSE exist only then).

    Parameters
    ----------
    dist : str
        A continuous distribution of :mod:`scipy.stats`, e.g. ``"beta"`` or ``"norm"``.
    params : mapping or tuple of (str, number) pairs, optional
        Its shape parameters and optionally ``loc`` and ``scale`` (score units), e.g. ``{"a": 5, "b": 2}``;
        default ``()`` (a distribution without shape parameters, standard ``loc`` and ``scale``).
    name : str, optional
        A label for tables and plots (default: ``dist``).

    Raises
    ------
    InvalidParameter
        An unknown name (with close matches), a discrete distribution, an unknown, missing or out-of-domain
        parameter (scipy's domain of it), or an infinite mean or variance. The message starts with the key
        (``name`` or ``params.a``).

    Examples
    --------
    >>> d = ScipyDistribution("beta", {"a": 5, "b": 2})
    >>> d.support, round(float(d.cdf(0.5)), 6)
    ((0.0, 1.0), 0.109375)
    >>> np.round(d.sample(3, rng=np.random.default_rng(0)), 4).tolist(), round(float(d.ppf(0.5)), 4)
    ([0.6521, 0.4751, 0.7705], 0.7356)
    >>> ScipyDistribution("betta", {"a": 5, "b": 2})
    Traceback (most recent call last):
        ...
    simstudy.distributions.InvalidParameter: name must name a continuous scipy.stats distribution; did you mean beta?, got 'betta'
    """

    dist: str
    params: Any = ()
    name: str | None = None
    low: float = field(init=False)
    high: float = field(init=False)
    _frozen: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        import difflib

        from scipy import stats

        names = _scipy_continuous_names()
        rv = getattr(stats, self.dist, None) if isinstance(self.dist, str) else None
        if isinstance(rv, stats.rv_discrete):
            raise InvalidParameter(
                "name",
                "must be a continuous scipy.stats distribution (for a discrete population of scores use kind: bag)",
                self.dist,
            )
        if not isinstance(rv, stats.rv_continuous):
            close = difflib.get_close_matches(str(self.dist), names, n=4)
            hint = f"; did you mean {', '.join(close)}?" if close else " (e.g. beta, norm, truncnorm)"
            raise InvalidParameter("name", f"must name a continuous scipy.stats distribution{hint}", self.dist)
        params = dict(self.params)
        shapes = [s.strip() for s in rv.shapes.split(",")] if rv.shapes else []
        accepted = (*shapes, "loc", "scale")
        for key, value in params.items():
            if key not in accepted:
                raise InvalidParameter(
                    f"params.{key}",
                    f"is not a parameter of scipy.stats.{self.dist} (parameters: {', '.join(accepted)})",
                    value,
                )
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float, np.integer, np.floating))
                or not np.isfinite(value)
            ):
                raise InvalidParameter(f"params.{key}", "must be a finite number", value)
        for shape in shapes:
            if shape not in params:
                raise InvalidParameter(
                    f"params.{shape}",
                    f"is required by scipy.stats.{self.dist} (parameters: {', '.join(accepted)})",
                    None,
                )
        if not params.get("scale", 1.0) > 0:
            raise InvalidParameter("params.scale", "must be > 0", params["scale"])
        for info in rv._shape_info():  # scipy's domain of each shape parameter
            v, (lo, hi), (lo_in, hi_in) = params[info.name], info.endpoints, info.inclusive
            if not ((v > lo or (lo_in and v == lo)) and (v < hi or (hi_in and v == hi))):
                interval = f"{'[' if lo_in else '('}{lo:g}, {hi:g}{']' if hi_in else ')'}"
                raise InvalidParameter(f"params.{info.name}", f"must be in {interval} for scipy.stats.{self.dist}", v)
        if not rv._argcheck(*(params[s] for s in shapes)):
            raise InvalidParameter(
                "params",
                f"are outside the domain of scipy.stats.{self.dist} (scipy's _argcheck refuses them together)",
                params,
            )
        frozen = rv(**params)
        mean, var = (float(m) for m in frozen.stats("mv"))
        if not (np.isfinite(mean) and np.isfinite(var)):
            raise InvalidParameter(
                "params",
                f"give scipy.stats.{self.dist} an infinite or undefined "
                f"{'mean' if not np.isfinite(mean) else 'variance'}: the expected maximum "
                f"or the estimators' MSE would not exist",
                params,
            )
        low, high = (float(b) for b in frozen.support())
        object.__setattr__(self, "params", tuple(sorted((k, float(v)) for k, v in params.items())))
        object.__setattr__(self, "name", self.name or self.dist)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "_frozen", frozen)

    def __repr__(self) -> str:
        return f"ScipyDistribution({self.dist}, {dict(self.params)}, support=[{self.low}, {self.high}])"

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        return self._frozen.rvs(size=size, random_state=rng)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self._frozen.cdf(x)

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self._frozen.ppf(q)


def _scipy(*, dist: str, params: Any = (), name: str | None = None) -> ScipyDistribution:
    return ScipyDistribution(dist, params, name)


def truncnorm_bag(
    *,
    mean: float = 0.6,
    sd: float = 0.07,
    low: float = 0.0,
    high: float = 1.0,
    population: int = 100_000,
    size: int = 10_000,
    rng: np.random.Generator,
    name: str = "truncnorm_bag",
) -> Bag:
    """The bag of Dodge et al. (2021, §3.1): a resample of a finite truncated-normal population.

    Draws ``population`` values from Normal(mean, sd) truncated to [low, high], then resamples ``size`` of
    them with replacement; the resample is the bag. The paper used 100,000 and 10,000 and reports 9,536
    unique values and a maximum of 0.854 with its own (unknown) seed.

    Parameters
    ----------
    mean, sd : float, keyword-only
        Mean and standard deviation of the normal before truncation, in score units; default 0.6 and 0.07.
    low, high : float, keyword-only
        Truncation bounds in score units; default 0.0 and 1.0.
    population : int, keyword-only
        Number of values drawn from the truncated normal, ``>= 1``; default 100000.
    size : int, keyword-only
        Number of values resampled from them with replacement (the bag's size), ``>= 1``; default 10000.
    rng : numpy.random.Generator, keyword-only
        The random generator (both draws consume it).
    name : str, keyword-only
        A label; default ``"truncnorm_bag"``.

    Returns
    -------
    Bag
        ``size`` values (score units) with multiplicity.

    Raises
    ------
    InvalidParameter
        If `population` or `size` is not an integer ``>= 1``, or a truncated-normal parameter is invalid (as
        in :class:`TruncatedNormal`).

    References
    ----------
    .. [1] Dodge, J., Gururangan, S., Card, D., Schwartz, R. & Smith, N. A. (2021). Expected validation
       performance and estimation of a random variable's maximum. Findings of EMNLP 2021, §3.1.

    Examples
    --------
    A small bag (the paper's sizes take about 20 ms):

    >>> bag = truncnorm_bag(population=1000, size=100, rng=np.random.default_rng(0))
    >>> bag, round(float(bag.values.max()), 4)
    (Bag(name='truncnorm_bag', size=100, unique=96), 0.7455)
    """
    population = _positive_int("population", population)
    size = _positive_int("size", size)
    pool = TruncatedNormal(mean, sd, low, high).sample(population, rng=rng)
    return Bag(pool[rng.integers(0, population, size=size)], name=name)


@dataclass(frozen=True, eq=False)
class Mirrored:
    """The distribution of ``-X`` for a distribution of X: what a distribution with ``minimize: true`` draws.

    Lower is better for X (a loss, an error rate), so the studies, which maximise, draw ``-X``: the best of n
    draws of ``-X`` is minus the best (lowest) of n draws of X. :func:`mirror` makes one (a :class:`Bag` is
    mirrored as a bag, for its exact truths).

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution of X.
    name : str or None, optional
        A label; default the name of `dist`.

    Examples
    --------
    >>> m = Mirrored(TruncatedNormal(0.2, 0.05))
    >>> m.support, round(float(m.cdf(-0.2)), 4), round(float(m.ppf(0.5)), 4)
    ((-1.0, -0.0), 0.5, -0.2)
    >>> np.round(m.sample(3, rng=np.random.default_rng(0)), 4).tolist()
    [-0.2175, -0.1693, -0.113]
    """

    dist: Any
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is None:
            object.__setattr__(self, "name", getattr(self.dist, "name", type(self.dist).__name__))

    @property
    def support(self) -> tuple[float, float]:
        low, high = self.dist.support
        return -high, -low

    @property
    def is_discrete(self) -> bool:
        return bool(self.dist.is_discrete)

    @property
    def has_atoms(self) -> bool:
        """Whether X has atoms (quadrature then splits at them, :mod:`simstudy.stats.truth`)."""
        return bool(getattr(self.dist, "has_atoms", False))

    @property
    def atoms(self) -> np.ndarray:
        """The atoms of ``-X``, ascending."""
        return -np.asarray(getattr(self.dist, "atoms", ()), dtype=np.float64)[::-1]

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        """``-X`` for draws X of the distribution (the same generator calls)."""
        return -self.dist.sample(size, rng=rng)

    def cdf(self, x) -> np.ndarray:
        """``P(-X <= x) = 1 - P(X < -x)``."""
        return 1.0 - self.dist.cdf_left(-np.asarray(x, dtype=np.float64))

    def cdf_left(self, x) -> np.ndarray:
        """``P(-X < x) = 1 - P(X <= -x)``."""
        return 1.0 - self.dist.cdf(-np.asarray(x, dtype=np.float64))

    def ppf(self, q) -> np.ndarray:
        """``-F^-1(1 - q)``: the quantile function of ``-X`` (exact where F is continuous; at an atom's jump it
        can differ only at the jump's edge, a set of probability zero)."""
        return -self.dist.ppf(1.0 - np.asarray(q, dtype=np.float64))

    def describe(self) -> dict[str, Any]:
        """For :func:`describe`: ``minimize`` and the description of X's distribution."""
        return {"minimize": True, "of": describe(self.dist)}


def mirror(dist):
    """The distribution of ``-X``: a :class:`Bag` of the negated values, else a :class:`Mirrored`.

    What :func:`from_spec` returns for ``minimize: true`` (lower is better): the studies maximise, so they draw
    ``-X``, and a bag stays a bag (its truths exact sums).

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution of X.

    Returns
    -------
    ScoreDistribution
        The distribution of ``-X``, with the name of `dist`.

    Examples
    --------
    >>> mirror(Bag([0.1, 0.3, 0.3], name="loss")), mirror(Bag([0.1, 0.3, 0.3])).values.tolist()
    (Bag(name='loss', size=3, unique=2), [-0.3, -0.3, -0.1])
    >>> mirror(TruncatedNormal(0.2, 0.05)).support
    (-1.0, -0.0)
    """
    if isinstance(dist, Bag):
        return Bag(-dist.values, name=dist.name)
    return Mirrored(dist)


def _seeded_truncnorm_bag(*, seed: int = 0, **params: Any) -> Bag:
    """:func:`truncnorm_bag` drawn from ``numpy.random.default_rng(seed)``: a config names a seed, not a generator."""
    return truncnorm_bag(rng=np.random.default_rng(seed), **params)


def _dataset_bag(*, dataset: str, model: str, name: str | None = None, **options: Any) -> Bag:
    """The empirical distribution of a shipped data set's scores for one model."""
    from simstudy import datasets  # imported here: only empirical distributions need the data files

    return Bag(datasets.load_dataset(dataset, model, **options), name=name or f"{dataset}:{model}")


def _file_bag(
    *,
    path: str,
    model: str | None = None,
    score_column: str | None = None,
    model_column: str | None = None,
    missing: str | float = "error",
    scale: float = 1.0,
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
) -> Bag:
    """The empirical distribution of a researcher's own scores (CSV, TSV, JSON Lines or JSON file).

    ``model`` picks one model when the file holds several; scores outside [low, high] are an error; failed runs
    (``missing``) and ``scale`` as in :func:`simstudy.datasets.read_scores`.
    """
    from simstudy import datasets

    # load_scores, not read_scores: dropped or replaced failed runs are said (a DataWarning the CLI logs)
    by_model = datasets.load_scores(
        path, score_column=score_column, model_column=model_column, low=low, high=high, missing=missing, scale=scale
    )
    if model is None:
        if len(by_model) != 1:
            raise InvalidParameter("model", f"must name one of the file's models ({', '.join(by_model)})", model)
        model = next(iter(by_model))
    elif model not in by_model:
        raise InvalidParameter("model", f"must be one of the file's models ({', '.join(by_model)})", model)
    return Bag(by_model[model], name=name or f"{Path(path).stem}:{model}")


def sample_sorted(dist: ScoreDistribution, reps: int, B: int, *, rng: np.random.Generator) -> np.ndarray:
    """``reps`` samples of ``B`` scores each, every row sorted ascending; shape (reps, B).

    For a :class:`Bag` this sorts the drawn indices (:meth:`Bag.sample_sorted`), which is faster and
    consumes the generator exactly as ``dist.sample((reps, B))`` does; any other distribution's draw is
    sorted row by row.

    Parameters
    ----------
    dist : ScoreDistribution
        The distribution the scores are drawn from.
    reps : int
        Number of samples (rows), ``>= 1``.
    B : int
        Number of scores per sample (tuning runs), ``>= 1``.
    rng : numpy.random.Generator, keyword-only
        The random generator.

    Returns
    -------
    ndarray of float, shape (reps, B)
        The scores in score units, each row ascending.

    Examples
    --------
    >>> sample_sorted(Bag([0.6, 0.7, 0.9]), 2, 3, rng=np.random.default_rng(0)).tolist()
    [[0.7, 0.7, 0.9], [0.6, 0.6, 0.6]]
    >>> np.round(sample_sorted(TruncatedNormal(), 2, 3, rng=np.random.default_rng(0)), 4).tolist()
    [[0.4782, 0.5571, 0.6245], [0.4508, 0.6623, 0.6951]]
    """
    if isinstance(dist, Bag):
        return dist.sample_sorted(reps, B, rng=rng)
    x = dist.sample((reps, B), rng=rng)
    x.sort(axis=1)
    return x


def describe(dist: ScoreDistribution) -> dict[str, Any]:
    """A JSON-able description; for a bag its size, unique count and range (Dodge et al. report 9,536 / 0.854).

    Parameters
    ----------
    dist : ScoreDistribution
        Any distribution.

    Returns
    -------
    dict of str to object
        Always ``name``, ``type`` (the class name) and ``support`` (``[low, high]``, score units); then for a
        :class:`KDEWithAtoms` its bandwidth, method, atoms, shares and number of continuous scores; for a
        :class:`Bag` ``size``, ``unique``, ``minimum``, ``maximum`` and ``mean``; for a
        :class:`ScipyDistribution` ``dist`` and ``params``; for a plug-in what its ``describe()`` returns;
        for another dataclass its fields.

    Examples
    --------
    >>> describe(TruncatedNormal())
    {'name': 'truncnorm', 'type': 'TruncatedNormal', 'support': [0.0, 1.0], 'mean': 0.6, 'sd': 0.07, 'low': 0.0, 'high': 1.0}
    >>> describe(Bag([0.5, 0.7, 0.7]))
    {'name': 'bag', 'type': 'Bag', 'support': [0.5, 0.7], 'size': 3, 'unique': 2, 'minimum': 0.5, 'maximum': 0.7, 'mean': 0.6333333333333333}
    """
    desc: dict[str, Any] = {
        "name": getattr(dist, "name", type(dist).__name__),
        "type": type(dist).__name__,
        "support": list(dist.support),
    }
    if isinstance(dist, KDEWithAtoms):
        desc.update(
            bandwidth=dist.bandwidth,
            bw_method=dist.bw_method,
            atoms=dist.atoms.tolist(),
            shares=dist.shares.tolist(),
            continuous_scores=int(dist.data.size),
        )
    elif isinstance(dist, Bag):
        desc.update(
            size=dist.size,
            unique=int(dist.atoms.size),
            minimum=float(dist.atoms[0]),
            maximum=float(dist.atoms[-1]),
            mean=float(dist.values.mean()),
        )
    elif isinstance(dist, ScipyDistribution):
        desc.update(dist=dist.dist, params=dict(dist.params))
    elif hasattr(dist, "describe"):  # a plug-in (simstudy.plugins.PluginDistribution)
        desc.update(dist.describe())
    elif dataclasses.is_dataclass(dist):
        desc.update({f.name: getattr(dist, f.name) for f in dataclasses.fields(dist)})
    return desc


#: How a score file is read (:func:`simstudy.datasets.read_scores`): a distribution fitted to a file takes these.
_READ_OPTIONS = ("score_column", "model_column", "missing", "scale")


def _fit_scores(
    dataset: str | None, model: str | None, path: str | None, low: float, high: float, options: dict
) -> tuple[np.ndarray, str]:
    """The scores a KDE is fitted to (a shipped data set's model, or a file's) and a default label."""
    from simstudy import datasets

    if (dataset is None) == (path is None):
        raise InvalidParameter("dataset", "or path must be given (exactly one)", dataset)
    if dataset is not None:
        if model is None:
            raise InvalidParameter("model", "must name a model of the data set", model)
        read = {k: options.pop(k) for k in _READ_OPTIONS if k in options}
        scale = read.pop("scale", 1.0)
        return datasets.load_dataset(dataset, model, **options) * scale, f"{dataset}:{model}"
    read = {k: v for k, v in options.items() if k in _READ_OPTIONS}
    if set(options) - set(read):
        raise InvalidParameter(sorted(set(options) - set(read))[0], "is not an option of a score file", None)
    assert path is not None  # exactly one of dataset and path: dataset returned above
    by_model = datasets.read_scores(path, low=low, high=high, **read).scores
    model = model or next(iter(by_model))
    if model not in by_model:
        raise InvalidParameter("model", f"must be one of the file's models ({', '.join(by_model)})", model)
    return by_model[model], f"{Path(path).stem}:{model}"


def _kde(
    *,
    dataset: str | None = None,
    model: str | None = None,
    path: str | None = None,
    bandwidth: float | None = None,
    bw_factor: float | None = None,
    bw_of: str = "reflected",
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
    minimize: bool = False,
    **options: Any,
) -> ReflectedKDE:
    """A reflected KDE fitted to a shipped data set's model (``dataset``, ``model``, options) or a file;
    ``minimize``: fitted to ``-x`` on ``[-high, -low]`` (the distribution of ``-X``)."""
    scores, label = _fit_scores(dataset, model, path, low, high, options)
    if minimize:
        scores, low, high = -scores, -high, -low
    return ReflectedKDE.fit(
        scores, bandwidth=bandwidth, bw_factor=bw_factor, bw_of=bw_of, low=low, high=high, name=name or f"kde:{label}"
    )


def _kde_atoms(
    *,
    dataset: str | None = None,
    model: str | None = None,
    path: str | None = None,
    bw_method: str = "isj",
    bandwidth: float | None = None,
    bw_factor: float | None = None,
    bw_of: str = "reflected",
    find_atoms: bool = True,
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
    minimize: bool = False,
    **options: Any,
) -> KDEWithAtoms:
    """Atoms plus a reflected KDE (:meth:`KDEWithAtoms.fit`) of a shipped data set's model or a file's scores;
    ``minimize``: fitted to ``-x`` on ``[-high, -low]`` (the distribution of ``-X``)."""
    scores, label = _fit_scores(dataset, model, path, low, high, options)
    if minimize:
        scores, low, high = -scores, -high, -low
    return KDEWithAtoms.fit(
        scores,
        bw_method=bw_method,
        bandwidth=bandwidth,
        bw_factor=bw_factor,
        bw_of=bw_of,
        find_atoms=find_atoms,
        low=low,
        high=high,
        name=name or f"kde_atoms:{label}",
    )


# At the end, not the top: parametric builds on InvalidParameter and _finite, defined above (an import cycle
# otherwise). The parametric laws are part of this module's interface (kinds quadratic and noisy_quadratic).
from simstudy.distributions.parametric import NoisyQuadratic, Quadratic  # noqa: E402

#: Kinds whose distributions are continuous (exact coverage of the KS and LD bands needs one).
CONTINUOUS_KINDS = ("truncnorm", "kde", "kde_atoms", "scipy", "quadratic", "noisy_quadratic")

#: Distribution kinds a config can name, with the builders the config's parameters are passed to.
KINDS: dict[str, Callable[..., Any]] = {
    "truncnorm_bag": _seeded_truncnorm_bag,
    "truncnorm": TruncatedNormal,
    "bag": Bag,
    "empirical": _dataset_bag,
    "file": _file_bag,
    "kde": _kde,
    "kde_atoms": _kde_atoms,
    "scipy": _scipy,
    "quadratic": Quadratic,
    "noisy_quadratic": NoisyQuadratic,
}


def parameters(kind: str) -> tuple[str, ...] | None:
    """The parameter names a config may give a distribution kind (``None``: any, passed on as options).

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`, e.g. ``"truncnorm"``.

    Returns
    -------
    tuple of str or None
        The builder's keyword names (for ``truncnorm_bag``: ``seed`` in place of ``rng``), or ``None`` when
        the builder takes arbitrary options (``**options``: the shipped-data and KDE kinds).

    Raises
    ------
    KeyError
        If `kind` is not a key of :data:`KINDS`.

    Examples
    --------
    >>> parameters("truncnorm")
    ('mean', 'sd', 'low', 'high', 'name')
    >>> parameters("truncnorm_bag")
    ('seed', 'mean', 'sd', 'low', 'high', 'population', 'size', 'name')
    >>> parameters("kde") is None
    True
    """
    if kind == "truncnorm_bag":
        return ("seed", *(p for p in inspect.signature(truncnorm_bag).parameters if p != "rng"))
    params = inspect.signature(KINDS[kind]).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return tuple(params)


def from_spec(kind: str, params: dict[str, Any]):
    """Build a distribution from a kind name (one of :data:`KINDS`) and its parameters (deterministic).

    This is what the config layer calls with a ``distribution`` group: kind ``truncnorm_bag`` takes a
    ``seed`` (not a generator), so the same parameters always give the same distribution.

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`: ``truncnorm_bag``, ``truncnorm``, ``bag``, ``empirical``, ``file``, ``kde``,
        ``kde_atoms``, ``scipy``, ``quadratic`` or ``noisy_quadratic`` (a user's class, kind ``target``, is built
        by the config layer: :meth:`simstudy.config.DistributionConfig.build`).
    params : dict of str to object
        The keyword arguments of the kind's builder (see :func:`parameters`), and optionally ``minimize``
        (any kind): True builds the distribution of ``-X`` (:func:`mirror`; lower is better).

    Returns
    -------
    ScoreDistribution
        The distribution built.

    Raises
    ------
    InvalidParameter
        If `kind` is unknown, or the builder rejects a parameter's value.
    TypeError
        If a parameter is not one the builder takes (the config layer checks names with :func:`parameters`).

    Examples
    --------
    >>> from_spec("truncnorm", {"mean": 0.7, "sd": 0.05})
    TruncatedNormal(mean=0.7, sd=0.05, low=0.0, high=1.0, name='truncnorm')
    >>> from_spec("truncnorm_bag", {"seed": 0, "population": 1000, "size": 100})
    Bag(name='truncnorm_bag', size=100, unique=96)
    >>> from_spec("bag", {"values": [0.1, 0.3], "minimize": True}).values.tolist()
    [-0.3, -0.1]
    >>> from_spec("normal", {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    simstudy.distributions.InvalidParameter: kind must be one of bag, ..., truncnorm_bag, got 'normal'
    """
    if kind not in KINDS:
        raise InvalidParameter("kind", f"must be one of {', '.join(sorted(KINDS))}", kind)
    params = dict(params)
    minimize = params.pop("minimize", False)
    if not isinstance(minimize, (bool, np.bool_)):
        raise InvalidParameter("minimize", "must be true or false", minimize)
    if minimize and kind in ("kde", "kde_atoms"):
        # Fitted to -x on [-high, -low]: the same law as the mirror of the KDE of x (its kernel is symmetric),
        # drawn along the path a KDE of scores -x takes, so that losses 1 - a mirror accuracies a draw for draw.
        return KINDS[kind](**params, minimize=True)
    dist = KINDS[kind](**params)
    return mirror(dist) if minimize else dist
