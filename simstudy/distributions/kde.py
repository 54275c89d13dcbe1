"""The kernel density distributions: a reflected KDE, and atoms plus a KDE (the kernels: :mod:`simstudy.stats.kde`).

=========================  ================================================================================
name                       what it is
=========================  ================================================================================
:class:`ReflectedKDE`      a Gaussian KDE reflected at the ends of [low, high]
:class:`KDEWithAtoms`      point masses at repeated scores plus a reflected KDE of the rest
=========================  ================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from simstudy.distributions.base import BoundedContinuous, InvalidParameter, finite

__all__ = ["ReflectedKDE", "KDEWithAtoms"]


@dataclass(frozen=True, eq=False)
class ReflectedKDE(BoundedContinuous):
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
        h = finite("bandwidth", self.bandwidth)
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
            factor = finite("bw_factor", bw_factor)
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
            with np.errstate(over="ignore"):  # z * z beyond the largest float: exp(-inf) = 0, as it should be
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
class KDEWithAtoms(BoundedContinuous):
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
