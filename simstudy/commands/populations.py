"""``simstudy populations``: the public HPO benchmarks' populations, listed, or one random search exported.

Every configuration of a real search space, several seeds each (:mod:`simstudy.populations`, the optional extra
``simstudy[benchmarks]``): :func:`listing` describes each population, :func:`export` writes one simulated random
search of ``n`` trials as a score file the data commands read (``simstudy curve data=FILE``), with the exact
truth beside it, so that what they estimate can be compared with what is true.

==================  ============================================================================================
:func:`run`         the command: ``action="list"`` (default) or ``"export"`` with its keys (strings accepted)
:func:`listing`     every population's size, distinct values, ties, best score, direction and diverged runs
:func:`export`      one random search of n trials, and the exact expected best of k and median tuning curve
:class:`Listed`     what :func:`listing` returns
:class:`Exported`   what :func:`export` returns
==================  ============================================================================================
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simstudy import populations
from simstudy._limits import check_memory
from simstudy.registry import Command
from simstudy.schema import ConfigError

__all__ = ["run", "execute", "lines", "listing", "export", "Listed", "Exported"]


#: Peak memory of an export per trial, in bytes: measured with tracemalloc at 96 for n = 4e5 (the scores, the
#: draws, k as integers and floats, the two truth columns and the frames written), rounded up.
_BYTES_PER_TRIAL = 128


@dataclass(frozen=True)
class Listed:
    """What :func:`listing` returns: one row per population (its main metric).

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``benchmark``, ``dataset``, ``metric``, ``direction``, ``configs``, ``seeds`` (per configuration:
        ``5`` or a range ``2-3``), ``runs``, ``distinct`` (distinct values), ``top_share`` (share of runs at the
        most common value), ``best`` (the best run's score), ``diverged`` (runs of a loss beyond
        :data:`simstudy.populations.DIVERGED` times the median; 0 for a maximized metric) and ``licence``.
    path : pathlib.Path or None
        The CSV written (``out``), or None.

    Examples
    --------
    >>> Listed(listing(which=()).table).table.columns.tolist()[:6]
    ['benchmark', 'dataset', 'metric', 'direction', 'configs', 'seeds']
    """

    table: Any
    path: Path | None = None


@dataclass(frozen=True)
class Exported:
    """What :func:`export` returns: one simulated random search and the exact truth of the population.

    Parameters
    ----------
    path : pathlib.Path
        The score file written (columns ``model``, ``score``; one row per trial, in the order drawn).
    truth_path : pathlib.Path
        The truth written beside it (``<stem>.truth.csv``).
    scores : ndarray of float64, shape (n,)
        The n trials' scores (times ``scale``), in the order drawn.
    truth : pandas.DataFrame
        ``k`` (1..n), ``expected_best`` (the exact mean tuning curve: the expected best of k trials) and
        ``median_best`` (the exact median tuning curve), the best being the minimum for a minimized metric.
    population : simstudy.populations.Population
        The population the trials were drawn from.

    Examples
    --------
    >>> import pandas as pd
    >>> pop = populations.Population("b", "d", "acc", "maximize", np.array([0.6, 0.8]), np.array([1, 1]), "", "MIT")
    >>> truth = pd.DataFrame({"k": [1], "expected_best": [0.7], "median_best": [0.6]})
    >>> Exported(Path("d.csv"), Path("d.truth.csv"), np.array([0.8]), truth, pop).truth_path.name
    'd.truth.csv'
    """

    path: Path
    truth_path: Path
    scores: np.ndarray
    truth: Any
    population: populations.Population


#: The columns of :func:`listing`'s table (:meth:`simstudy.populations.Population.summary`'s keys).
COLUMNS = (
    "benchmark",
    "dataset",
    "metric",
    "direction",
    "configs",
    "seeds",
    "runs",
    "distinct",
    "top_share",
    "best",
    "diverged",
    "licence",
)


def listing(out: str | Path | None = None, *, which: Sequence[tuple[str, str]] = populations.CATALOGUE) -> Listed:
    """Populations of the public HPO benchmarks, described (each by its main metric).

    Parameters
    ----------
    out : str or path-like, optional
        A CSV file to write the table to (atomically), in an existing directory; an existing file is never
        replaced (unless it holds the same bytes). Default none.
    which : sequence of (str, str), keyword-only
        The populations, ``(benchmark, dataset)`` pairs; default all of :data:`simstudy.populations.CATALOGUE`.

    Returns
    -------
    Listed
        The table (see :class:`Listed`) and the file written.

    Raises
    ------
    simstudy.schema.ConfigError
        If the optional extra is not installed (one line saying how to install it), or ``out`` lies in a
        missing directory or would replace a file with other contents.
    simstudy.datasets.DataError
        If a population's file is missing or not a population file.

    Examples
    --------
    >>> listing(which=()).table.columns.tolist()[-4:]
    ['top_share', 'best', 'diverged', 'licence']
    """
    import pandas as pd

    path = None if out is None else _out_iv(out)
    table = pd.DataFrame([populations.load(b, d).summary() for b, d in which], columns=list(COLUMNS))
    if path is not None:
        _write_new({path: table})
    return Listed(table, path)


def _truth_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.truth.csv")


def _out_iv(out: str | Path, *also: Path) -> Path:
    """``out=`` as a path to write: its directory exists (simstudy makes none for a file the user names: a typo
    would create directories anywhere), and neither it nor ``also`` (the truth beside it) is anything but a
    regular file. Which of them already exist is judged once they are written (:func:`_write_new`)."""
    path = Path(out)
    parent = path.parent
    for p in (parent, *parent.parents):
        if p.exists() and not p.is_dir():
            raise ConfigError(f"out={out}: {p} is a file, not a directory: choose a path in an existing directory")
    if not parent.is_dir():
        raise ConfigError(f"out={out}: the directory {parent} does not exist: create it first, or choose another out=")
    for p in (path, *also):
        if os.path.lexists(p) and (p.is_symlink() or not p.is_file()):
            raise ConfigError(f"out={out}: {p} exists and is not a regular file: choose another out=")
    return path


def _write_new(frames: dict[Path, Any]) -> None:
    """Write each frame as CSV to its path, all or none: each to a temporary file first, then, if no path holds
    a file with other bytes (a file simstudy did not write, or another export's: never replaced), each renamed
    into place (atomically). A path holding the same bytes (the same command again) is left as it was."""
    import contextlib
    import filecmp

    from simstudy import io

    with contextlib.ExitStack() as stack:
        temporary = {path: stack.enter_context(io.atomic_path(path)) for path in frames}
        for path, frame in frames.items():
            frame.to_csv(temporary[path], index=False)  # as io.write_csv: every digit
        taken = [p for p in frames if os.path.lexists(p) and not filecmp.cmp(p, temporary[p], shallow=False)]
        if taken:
            names = " and ".join(str(p) for p in frames)
            raise ConfigError(
                f"{', '.join(map(str, taken))} already exist{'s' if len(taken) == 1 else ''} with other contents: this "
                f"command writes {names} and replaces no file: move {'it' if len(taken) == 1 else 'them'} away, or "
                f"choose another out="
            )


def export(
    benchmark: str,
    dataset: str,
    n: int,
    *,
    seed: int = 0,
    metric: str | None = None,
    scale: float = 1.0,
    out: str | Path | None = None,
) -> Exported:
    """One simulated random search of ``n`` trials from a population, written as a score file, with its truth.

    A trial draws a configuration uniformly, then one of its seeds uniformly (the weighted bag of kind
    ``population``, from ``numpy.random.default_rng(seed)``). The truth is exact: the expected best and the
    median best of k trials, k = 1..n, over the whole population.

    Parameters
    ----------
    benchmark, dataset : str
        The population (:data:`simstudy.populations.CATALOGUE`).
    n : int
        Trials, ``>= 1``.
    seed : int, keyword-only, default 0
        The random seed, ``>= 0``.
    metric : str, keyword-only, optional
        The metric; default the benchmark's main one.
    scale : float, keyword-only, default 1.0
        A factor for the scores (0.01: NAS-Bench-201's percentages as fractions), ``> 0``.
    out : str or path-like, keyword-only, optional
        The score file, in an existing directory; default ``<benchmark>_<dataset>[_<metric>]_n<n>_seed<seed>.csv``
        here. The truth goes to ``<stem>.truth.csv`` beside it. Both are written atomically, or neither: a file
        already at either path is never replaced (the same export again, with the same bytes, leaves them).

    Returns
    -------
    Exported
        The files, the scores and the truth.

    Raises
    ------
    simstudy.schema.ConfigError
        An unknown name or a bad value (one line naming the key), the optional extra not installed, ``n`` whose
        estimated memory (128 bytes a trial) exceeds the limit (:func:`simstudy._limits.check_memory`), or
        ``out`` in a missing directory or over a file with other contents (both files named).
    simstudy.datasets.DataError
        If the population's file is missing or not a population file.

    Examples
    --------
    >>> export("hpobench", "mnist", 48)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.populations._UnknownName: dataset must be one of australian, ..., vehicle (benchmark hpobench), got 'mnist'
    """
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from simstudy import distributions
    from simstudy.stats import truth

    n = _int("n", n, 1)
    seed = _int("seed", seed, 0)
    scale = _scale(scale)
    check_memory("n", n, _BYTES_PER_TRIAL * n, f"{n} trials and their truth at k = 1..n", "lower n")
    pop = populations.load(benchmark, dataset, metric)
    if out is None:
        suffix = "" if metric is None else f"_{pop.metric}"
        out = f"{benchmark}_{dataset}{suffix}_n{n}_seed{seed}.csv"
    path = _out_iv(out, _truth_path(Path(out)))
    try:
        bag = distributions.from_spec(
            "population", {"benchmark": benchmark, "dataset": dataset, "metric": metric, "scale": scale}
        )
    except distributions.InvalidParameter as exc:
        raise ConfigError(str(exc)) from None
    scores = bag.sample(n, rng=np.random.default_rng(seed))
    ks = np.arange(1, n + 1)
    # The expected best by running products (memory of one row of atoms, not n of them: 230,000 atoms for
    # HPOLib), on one BLAS thread (its threads make each of the n dot products wait on a busy machine); the
    # best of a minimized metric as minus the best of its mirror.
    with threadpool_limits(1, user_api="blas"):
        best = -truth.expected_max(distributions.mirror(bag), ks) if pop.minimize else truth.expected_max(bag, ks)
    table = pd.DataFrame(
        {
            "k": ks,
            "expected_best": best,
            "median_best": truth.quantile_tuning_curve(bag, ks.astype(np.float64), 0.5, minimize=pop.minimize),
        }
    )
    _write_new({path: pd.DataFrame({"model": dataset, "score": scores}), _truth_path(path): table})
    return Exported(path, _truth_path(path), scores, table, pop)


def _int(key: str, value: Any, minimum: int) -> int:
    """An integer key, from Python or the command line (a string of digits)."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{key} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _scale(value: Any) -> float:
    try:
        scale = float(value)
    except (TypeError, ValueError):
        scale = float("nan")
    if isinstance(value, bool) or not np.isfinite(scale) or scale <= 0:
        raise ConfigError(f"scale must be a number > 0 (0.01 for percentages), got {value!r}")
    return scale


def run(action: str = "list", **keys: Any) -> Listed | Exported:
    """``simstudy populations [list]`` or ``simstudy populations export ...``: :func:`listing` or :func:`export`.

    Parameters
    ----------
    action : {"list", "export"}, default "list"
        What to do.
    **keys
        The action's keys (strings from the command line are converted): ``out`` for the list; ``benchmark``,
        ``dataset``, ``n`` (required), ``seed``, ``metric``, ``scale`` and ``out`` for the export.

    Returns
    -------
    Listed or Exported
        What the action returns.

    Raises
    ------
    simstudy.schema.ConfigError
        An unknown action or key, a missing or bad value (one line), or the optional extra not installed.
    simstudy.datasets.DataError
        If a population's file is missing or not a population file.

    Examples
    --------
    >>> run("show")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: simstudy populations: the action must be list or export, got 'show'
    >>> run("export", benchmark="hpobench", dataset="australian")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: simstudy populations export: n is required: set it with n=...
    """
    if action == "list":
        unknown = sorted(set(keys) - {"out"})
        if unknown:
            raise ConfigError(f"simstudy populations: unknown key {unknown[0]} (the list takes out=FILE only)")
        return listing(keys.get("out"))
    if action != "export":
        raise ConfigError(f"simstudy populations: the action must be list or export, got {action!r}")
    accepted = ("benchmark", "dataset", "n", "seed", "metric", "scale", "out")
    unknown = sorted(set(keys) - set(accepted))
    if unknown:
        raise ConfigError(f"simstudy populations export: unknown key {unknown[0]} (keys: {', '.join(accepted)})")
    for key in ("benchmark", "dataset", "n"):
        if keys.get(key) in (None, ""):
            raise ConfigError(f"simstudy populations export: {key} is required: set it with {key}=...")
    return export(
        keys["benchmark"],
        keys["dataset"],
        keys["n"],
        seed=keys.get("seed", 0),
        metric=keys.get("metric"),
        scale=keys.get("scale", 1.0),
        out=keys.get("out"),
    )


def execute(keys) -> Listed | Exported:
    """``simstudy populations [export] key=value ...``: :func:`run` on the command line's action and keys.

    Parameters
    ----------
    keys : Mapping
        ``action`` (``"list"`` or ``"export"``) and the action's keys.

    Returns
    -------
    Listed or Exported
        What :func:`run` returns.

    Examples
    --------
    >>> execute({"action": "export", "benchmark": "hpobench", "dataset": "australian"})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: simstudy populations export: n is required: set it with n=...
    """
    keys = dict(keys)
    return run(keys.pop("action", "list"), **keys)


def lines(done: Listed | Exported) -> list[str]:
    """What the terminal shows: the file exported and its truth, or the table listed (and the file written).

    Parameters
    ----------
    done : Listed or Exported
        From :func:`run`.

    Returns
    -------
    list of str
        The lines (the table's as one string).

    Examples
    --------
    >>> import pandas as pd
    >>> lines(Listed(pd.DataFrame({"benchmark": ["hpobench"], "trials": [100]}), Path("populations.csv")))[1:]
    ['wrote populations.csv']
    """
    if isinstance(done, Exported):
        pop = done.population
        return [
            f"wrote {done.path} ({done.scores.size} trials of {pop.benchmark}/{pop.dataset} {pop.metric}, "
            f"{pop.direction}) and its exact truth {done.truth_path}"
        ]
    shown = [done.table.to_string(index=False, float_format="{:.6g}".format)]
    return shown + ([f"wrote {done.path}"] if done.path is not None else [])


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "populations",
    run=execute,
    lines=lines,
    actions={"list": ((), ("out",)), "export": (("benchmark", "dataset", "n"), ("seed", "metric", "scale", "out"))},
    usage="simstudy populations [out=FILE] | simstudy populations export benchmark=B dataset=D n=N [seed=S] "
    "[metric=M] [scale=X] [out=FILE]",
    examples=(
        "simstudy populations",
        "simstudy populations export benchmark=hpobench dataset=australian n=48 seed=0",
        "simstudy curve data=hpobench_australian_n48_seed0.csv",
    ),
    writes="list: the table on the terminal (and out=FILE as CSV); export: a CSV of n trials (columns model, score; model "
    "= the data set) and STEM.truth.csv beside it (k, expected_best, median_best: the exact truth for k = 1..n). "
    "out= names a file in an existing directory; neither file replaces one already there",
    keys={
        "export": "first, to export one random search (without it: the list of every population)",
        "benchmark": "export: hpobench, hpolib or nasbench201",
        "dataset": "export: one of the benchmark's data sets, as the list names them (e.g. australian)",
        "n": "export: the number of trials of the search",
        "seed": "export: the random seed (default 0)",
        "metric": "export: the metric (default the benchmark's main one: val_acc, val_loss, val_acc)",
        "scale": "export: a factor for the scores (default 1; 0.01 for NAS-Bench-201's percentages)",
        "out": "the CSV to write (export default: BENCHMARK_DATASET_nN_seedS.csv here, its truth beside it as "
        "STEM.truth.csv; list: none, the table is printed)",
    },
)
