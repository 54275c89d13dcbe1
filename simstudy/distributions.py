"""Score distributions: the populations that simulated tuning runs draw their scores from.

Every distribution has one interface, :class:`ScoreDistribution`:

- ``sample(size, rng=...)`` draws i.i.d. scores with a :class:`numpy.random.Generator`;
- ``cdf(x)`` is ``P(X <= x)`` and ``cdf_left(x)`` is ``P(X < x)`` (they differ only at atoms);
- ``ppf(q)`` is the quantile function ``inf {x : F(x) >= q}``;
- ``support`` is ``(low, high)``;
- ``is_discrete`` says whether exact sums (a :class:`Bag`) or quadrature (continuous) give the truths.

Two families cover the studies: a finite :class:`Bag` (a population of values drawn with replacement;
this is also the empirical distribution of real scores, shipped or from a researcher's own file) and a
continuous :class:`TruncatedNormal`.
:func:`truncnorm_bag` builds the bag of Dodge et al. (2021, §3.1), and :func:`from_spec` builds any of them
from a kind name and parameters, as the config layer does.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "InvalidParameter",
    "ScoreDistribution",
    "Bag",
    "TruncatedNormal",
    "truncnorm_bag",
    "from_spec",
    "parameters",
    "sample_sorted",
    "describe",
    "KINDS",
]


class InvalidParameter(ValueError):
    """A parameter out of its domain. The message starts with the parameter's name.

    The config layer prefixes the name with its config group (``distribution.sd must be ...``), so the
    same check gives a precise message from Python and from the command line.
    """

    def __init__(self, name: str, requirement: str, value: Any):
        self.name, self.requirement, self.value = name, requirement, value
        super().__init__(f"{name} {requirement}, got {value!r}")


@runtime_checkable
class ScoreDistribution(Protocol):
    """What the studies need of a score distribution."""

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
    values : array_like, shape (m,)
        The population, duplicates allowed (a value's probability is its multiplicity / m). Scores are in the
        units of the metric (e.g. accuracy in [0, 1]).
    name : str, optional
        A label for tables and plots.

    Attributes
    ----------
    values : ndarray, shape (m,)
        The population, sorted ascending, read-only.
    atoms : ndarray, shape (k,)
        The distinct values, ascending.
    cum_prob : ndarray, shape (k,)
        ``P(X <= atoms[j])``; the last entry is exactly 1.
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


@dataclass(frozen=True, eq=False)
class TruncatedNormal:
    """A normal distribution with mean ``mean`` and standard deviation ``sd``, truncated to [low, high].

    A thin wrapper of :data:`scipy.stats.truncnorm` with the parameters in score units.
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

    @property
    def support(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def is_discrete(self) -> bool:
        return False

    def sample(self, size: int | tuple[int, ...], *, rng: np.random.Generator) -> np.ndarray:
        return self._dist.rvs(size=size, random_state=rng)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.cdf(x)

    cdf_left = cdf  # continuous: no atoms

    def ppf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.ppf(q)


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

    Returns
    -------
    Bag
        ``size`` values with multiplicity.
    """
    population = _positive_int("population", population)
    size = _positive_int("size", size)
    pool = TruncatedNormal(mean, sd, low, high).sample(population, rng=rng)
    return Bag(pool[rng.integers(0, population, size=size)], name=name)


def _seeded_truncnorm_bag(*, seed: int = 0, **params: Any) -> Bag:
    """:func:`truncnorm_bag` drawn from ``numpy.random.default_rng(seed)``: a config names a seed, not a generator."""
    return truncnorm_bag(rng=np.random.default_rng(seed), **params)


def _dataset_bag(*, dataset: str, model: str, name: str | None = None, **options: Any) -> Bag:
    """The empirical distribution of a shipped data set's scores for one model."""
    from . import datasets  # imported here: only empirical distributions need the data files

    return Bag(datasets.load_dataset(dataset, model, **options), name=name or f"{dataset}:{model}")


def _file_bag(
    *,
    path: str,
    model: str | None = None,
    score_column: str | None = None,
    model_column: str | None = None,
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
) -> Bag:
    """The empirical distribution of a researcher's own scores (CSV, TSV, JSON Lines or JSON file).

    ``model`` picks one model when the file holds several; scores outside [low, high] are an error.
    """
    from . import datasets

    by_model = datasets.load_scores(path, score_column=score_column, model_column=model_column, low=low,
                                    high=high)
    if model is None:
        if len(by_model) != 1:
            raise InvalidParameter("model", f"must name one of the file's models ({', '.join(by_model)})", model)
        model = next(iter(by_model))
    elif model not in by_model:
        raise InvalidParameter("model", f"must be one of the file's models ({', '.join(by_model)})", model)
    return Bag(by_model[model], name=name or f"{Path(path).stem}:{model}")


def sample_sorted(dist: ScoreDistribution, reps: int, B: int, *, rng: np.random.Generator) -> np.ndarray:
    """``reps`` samples of ``B`` scores each, every row sorted ascending; shape (reps, B)."""
    if isinstance(dist, Bag):
        return dist.sample_sorted(reps, B, rng=rng)
    x = dist.sample((reps, B), rng=rng)
    x.sort(axis=1)
    return x


def describe(dist: ScoreDistribution) -> dict[str, Any]:
    """A JSON-able description; for a bag its size, unique count and range (Dodge et al. report 9,536 / 0.854)."""
    desc: dict[str, Any] = {"name": getattr(dist, "name", type(dist).__name__), "type": type(dist).__name__,
                            "support": list(dist.support)}
    if isinstance(dist, Bag):
        desc.update(size=dist.size, unique=int(dist.atoms.size), minimum=float(dist.atoms[0]),
                    maximum=float(dist.atoms[-1]), mean=float(dist.values.mean()))
    else:
        desc.update({f.name: getattr(dist, f.name) for f in dataclasses.fields(dist)})
    return desc


#: Distribution kinds a config can name, with the builders the config's parameters are passed to.
KINDS = {
    "truncnorm_bag": _seeded_truncnorm_bag,
    "truncnorm": TruncatedNormal,
    "bag": Bag,
    "empirical": _dataset_bag,
    "file": _file_bag,
}


def parameters(kind: str) -> tuple[str, ...] | None:
    """The parameter names a config may give a distribution kind (``None``: any, passed on as options)."""
    if kind == "truncnorm_bag":
        return ("seed", *(p for p in inspect.signature(truncnorm_bag).parameters if p != "rng"))
    params = inspect.signature(KINDS[kind]).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return tuple(params)


def from_spec(kind: str, params: dict[str, Any]):
    """Build a distribution from a kind name (one of :data:`KINDS`) and its parameters (deterministic)."""
    if kind not in KINDS:
        raise InvalidParameter("kind", f"must be one of {', '.join(sorted(KINDS))}", kind)
    return KINDS[kind](**params)
