"""``simstudy extrapolate`` as a library: the tuning curve past a researcher's n runs.

The noisy quadratic law of random search near the optimum (Lourie, He & Cho 2025) is fitted to the tail of each
model's scores and bootstrapped through the runner (the analysis: :mod:`simstudy.extrapolation`);
the page and figure it writes are :mod:`simstudy.commands.extrapolate_page`'s.

============================  =============================================================================
:class:`ExtrapolateOptions`   the command's keys, their checks, docs and defaults (``--help``, Hydra)
:class:`ExtrapolateConfig`    the options as parsed and cross-checked
:func:`parse`                 a mapping of keys -> :class:`ExtrapolateConfig` (or :class:`ConfigError`)
:func:`run`                   fit and bootstrap every model's scores -> :class:`~simstudy.extrapolation.Extrapolation`
:func:`write`                 the tables, ``extrapolation.png`` and ``EXTRAPOLATE.md`` into a run directory
:func:`source_name`           the scores' name in messages and on the page
:func:`report_charts`         the charts ``report.html`` draws of an extrapolation's directory
============================  =============================================================================

Nothing here prints or exits: bad options raise :class:`~simstudy.schema.ConfigError`, scores the law cannot
be fitted to :class:`~simstudy.extrapolation.BadSample` (a :class:`~simstudy.datasets.DataError`).
Importing this module stays cheap (the command line reads its schema for ``--help``): the analysis, pandas and
matplotlib load when :func:`run` or :func:`write` is called.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy import schema, schema_docs
from simstudy._limits import check_memory, check_time
from simstudy.charts import Chart
from simstudy.commands._data import DataConfig, DataOptions, bands, command_config, command_iv, data_config
from simstudy.engine.memory import BYTES_PER_CHUNK, worker_count
from simstudy.registry import Command
from simstudy.schema import ConfigError, option

if TYPE_CHECKING:
    from simstudy.extrapolation import Analysis, Extrapolation

__all__ = [
    "ExtrapolateOptions",
    "ExtrapolateConfig",
    "parse",
    "run",
    "write",
    "source_name",
    "report_charts",
]


#: Measured compute cost on one core (2026, 2 cores; 30 scores), halved so that the estimate is a lower bound:
#: a run refused would surely take longer than the limit. A bootstrap replicate is a fit of n simulated scores
#: (measured about 22 ms), whatever n.
_SECONDS_PER_BOOT = 8e-3
#: What the extrapolation holds per bootstrap replicate until its tables are built: the median and mean
#: curves at about 64 budgets (float64) and the four parameters; its chunk's plan adds BYTES_PER_CHUNK per 25.
_BYTES_PER_BOOT = 2 * 8 * 64 + 4 * 8


def _threshold(key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ConfigError(
            f"{key} must be a quantile in [0, 1) (the share of the lowest scores censored, e.g. "
            f"{key}=0.5), or null; for a fixed score use threshold_score=, got {value!r}"
        )
    return float(value)


def _c_values(key: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10 for v in values):
        raise ConfigError(
            f"{key} must be an integer from 1 to 10 or a list of them (the effective numbers of "
            f"hyperparameters searched), e.g. {key}=[1,2,3], got {value!r}"
        )
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:  # a typo (c=[1,1] for c=[1,2]?): the fit would search fewer values than typed
        raise ConfigError(
            f"{key} lists {', '.join(map(str, twice))} more than once, got {value!r}: give each number of "
            f"hyperparameters once, e.g. {key}=[1,2,3]"
        )
    return tuple(sorted(values))


@schema_docs.documented()
@dataclass(frozen=True)
class ExtrapolateOptions(DataOptions):
    """The keys of ``simstudy extrapolate`` (``configs/extrapolate.yaml`` selects them).

    The data keys and the extrapolation's own: the noisy quadratic law of Lourie et al. (2025) fitted to the
    tail of each model's scores, with parametric bootstrap bands. :func:`parse` checks a mapping
    of them and returns an :class:`ExtrapolateConfig`.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.commands.extrapolate import ExtrapolateOptions
    >>> opts = schema.parse(ExtrapolateOptions, {"data": "scores.csv", "c": 3})
    >>> opts.c, opts.n_boot, opts.level, opts.threshold
    ((3,), 200, 0.95, None)
    """

    sample_size: int | None = option(
        None,
        "fit only the first n scores of each model (random-search order); the "
        "model's other runs are then held out to check the extrapolation against "
        "(default: fit every score)",
        schema.optional(schema.integer(minimum=2)),
    )
    threshold: float | None = option(
        None,
        "censor the lowest share of the scores before fitting the tail: a "
        "quantile in [0, 1), taken among the runs that did not fail (failed "
        "runs, an atom of scores below the rest, are censored first; default "
        "0.5 unless threshold_score is given)",
        _threshold,
    )
    threshold_score: float | None = option(
        None,
        "instead of threshold: censor the scores at or below this score (in score units), e.g. 0.85",
        schema.optional(schema.number(what="a finite number")),
    )
    threshold_of: str = option(
        "completed",
        "the runs threshold's quantile is taken among: completed (failed runs, "
        "an atom of scores below the rest, set aside first) or all (every run, "
        "failed ones too: Lourie et al. 2025's rule)",
        schema.choice(("completed", "all")),
    )
    c: tuple[int, ...] | None = option(
        None,
        "the effective numbers of hyperparameters the fit searches: an integer "
        "1..10 or a list, e.g. c=[1,2,3] (default: 1..10)",
        _c_values,
    )
    n_boot: int = option(
        200,
        "parametric bootstrap replicates for the intervals and bands (each a fit of n simulated scores: the slow part)",
        schema.integer(minimum=2),
    )
    level: float = option(
        0.95, "the coverage of the intervals and bands (parametric and nonparametric), e.g. 0.95", schema.level()
    )
    method: str = option(
        "ld_highest_density",
        "the nonparametric band drawn beside the fit: ld_highest_density, ld_equal_tailed, ks or dkw",
        schema.choice(lambda: bands().METHODS),
    )
    k_max: int | None = option(
        None,
        "the largest budget k extrapolated to (default: 100 n)",
        schema.optional(schema.integer(minimum=1)),
    )
    mean: bool = option(
        True,
        "also the mean tuning curve and its band (false: the median only, about twice as fast for small n)",
        schema.boolean(),
    )
    seed: int = option(
        0, "the random seed of the bootstrap: the same seed gives the same numbers", schema.integer(minimum=0)
    )
    n_jobs: int = option(-1, "worker processes (-1: every core); never changes a number", schema.integer())


@dataclass(frozen=True)
class ExtrapolateConfig:
    """``simstudy extrapolate``: the noisy quadratic law fitted to each model's tail of scores, extrapolated.

    What :func:`parse` returns: the parametric tuning curve of Lourie, He & Cho (2025) fitted to
    the scores above a threshold and extrapolated to budgets past n, with parametric bootstrap bands beside a
    nonparametric band.

    Parameters
    ----------
    data : DataConfig
        Every score (``data.sample_size`` is None: the field below picks the scores fitted).
    sample_size : int or None
        ``sample_size``: fit the first n scores of each model (in runs); the rest are held out to check the
        extrapolation against; None: fit all.
    threshold : float or None
        ``threshold``: the censored share of the lowest scores, in [0, 1), of the runs that did not fail (failed
        runs, an atom below the rest, are censored first); 0.5 unless ``threshold_score`` is given (then None).
    threshold_score : float or None
        ``threshold_score``: instead of threshold: censor the scores at or below this score, e.g. 0.85. In score
        units.
    threshold_of : {"completed", "all"}
        ``threshold_of``: the runs ``threshold``'s quantile is taken among: the completed ones (failed runs set
        aside first) or all of them (the rule of Lourie et al. 2025, the reproduction catalogue's).
    c : tuple of int or None
        ``c``: the effective numbers of hyperparameters the fit searches: an integer 1..10 or a list, e.g.
        c=[1,2,3] (default: 1..10).
    n_boot : int
        ``n_boot``: parametric bootstrap replicates for the intervals and bands (each a fit of n simulated
        scores: the slow part).
    level : float
        ``level``: the coverage of the intervals and bands (parametric and nonparametric), e.g. 0.95. A
        probability in (0, 1).
    method : str
        ``method``: the nonparametric band drawn beside the fit: ld_highest_density, ld_equal_tailed, ks or dkw.
    k_max : int or None
        ``k_max``: the largest budget k extrapolated to (default: 100 n). In trials.
    mean : bool
        ``mean``: also the mean tuning curve and its band (false: the median only, about twice as fast for small
        n).
    seed : int
        ``seed``: the random seed of the bootstrap: the same seed gives the same numbers.
    n_jobs : int
        ``n_jobs``: worker processes (-1: every core); never changes a number.

    References
    ----------
    .. [1] N. Lourie, H. He and K. Cho, "Hyperparameter loss surfaces are simple near their optima", COLM 2025
       (arXiv:2510.02721).

    Examples
    --------
    >>> from simstudy.commands.extrapolate import parse
    >>> config = parse({"data": "scores.csv", "threshold_score": 0.85})
    >>> config.threshold, config.threshold_score, config.n_boot, config.level
    (None, 0.85, 200, 0.95)
    """

    data: DataConfig  # every score (sample_size moves to the field below)
    sample_size: int | None  # fit the first n scores (None: all); the rest are held out
    threshold: float | None  # the censored share (None with threshold_score)
    threshold_score: float | None
    threshold_of: str  # "completed" (failed runs set aside before the quantile) or "all"
    c: tuple[int, ...] | None
    n_boot: int
    level: float
    method: str
    k_max: int | None
    mean: bool
    seed: int
    n_jobs: int


#: The largest ``k_max`` of ``simstudy extrapolate``: its budgets are whole numbers held as float64 (exact below
#: 2^53); the work does not grow with k_max (about 64 log-spaced budgets), so no larger bound is needed.
_K_MAX = 10**15


def parse(cfg: Mapping) -> ExtrapolateConfig:
    """Validate the ``simstudy extrapolate`` config (the keys of :class:`ExtrapolateOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    ExtrapolateConfig
        ``threshold`` is 0.5 unless ``threshold_score`` is given; ``data`` keeps every score.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value (``c`` listing a number twice, too); ``threshold``
        and ``threshold_score`` both given; ``n_jobs=0``; ``k_max`` above 10^15.

    Examples
    --------
    >>> parse({"data": "scores.csv"}).threshold
    0.5
    >>> parse({"data": "scores.csv", "threshold": 1.0})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: threshold must be a quantile in [0, 1) (the share of the lowest scores censored, \
e.g. threshold=0.5), or null; for a fixed score use threshold_score=, got 1.0
    """
    o = command_iv(ExtrapolateOptions, "extrapolate", cfg)
    data = dataclasses.replace(data_config(o), sample_size=None)
    if o.threshold is not None and o.threshold_score is not None:
        raise ConfigError(
            f"threshold={o.threshold:g} and threshold_score={o.threshold_score:g} both set the "
            f"threshold: give one of them"
        )
    if o.threshold_score is not None and not np.isfinite(o.threshold_score):
        raise ConfigError(f"threshold_score must be a finite number, got {o.threshold_score}")
    if o.k_max is not None and o.k_max > _K_MAX:  # budgets are float64 (the curves' k): whole numbers up to 2^53
        raise ConfigError(
            f"k_max={o.k_max} is beyond the budgets the extrapolation computes exactly (at most {_K_MAX:.0e} runs); "
            f"lower k_max"
        )
    if o.n_jobs == 0:
        raise ConfigError("n_jobs must be a positive number of workers or -1 (all cores), got 0")
    # Every bootstrap replicate is kept until the tables are built, and each is a fit (milliseconds).
    check_memory(
        "n_boot",
        o.n_boot,
        o.n_boot * (_BYTES_PER_BOOT + BYTES_PER_CHUNK / 25),
        "the bootstrap replicates' curves, per model",
        "lower n_boot (200 by default; 1000 for intervals at level 0.99)",
    )
    workers = worker_count(o.n_jobs)
    check_time(
        "n_boot",
        o.n_boot,
        o.n_boot * _SECONDS_PER_BOOT / workers,
        f"{o.n_boot:,} bootstrap fits per model, on {workers} core{'s' * (workers > 1)}",
        "lower n_boot (200 by default; 1000 for intervals at level 0.99)",
    )
    threshold = o.threshold if o.threshold is not None or o.threshold_score is not None else 0.5
    return command_config(ExtrapolateConfig, o, data, threshold=threshold)


def source_name(opts: ExtrapolateConfig) -> str:
    """The scores' name in messages and on the page: a shipped data set's name, else the file's name.

    Parameters
    ----------
    opts : ExtrapolateConfig
        The parsed options.

    Returns
    -------
    str
        ``opts.data.data`` for a shipped data set, else the file's name without its directories.

    Examples
    --------
    >>> source_name(parse({"data": "runs/scores.csv"})), source_name(parse({"data": "deberta_mnli"}))
    ('scores.csv', 'deberta_mnli')
    """
    from simstudy.datasets import DATASETS

    return opts.data.data if opts.data.data in DATASETS else Path(opts.data.data).name


def run(
    scores: dict | list,
    opts: ExtrapolateConfig,
    out_dir: str | Path,
    *,
    source: str = "scores",
    progress: bool | None = None,
) -> Extrapolation:
    """Fit the law to every model's tail and run (or resume) its bootstrap in ``out_dir``: the command's numbers.

    Parameters
    ----------
    scores : dict of str to array_like of float, or list of Analysis
        Each model's scores (score units), in random-search order; or what
        :func:`simstudy.extrapolation.prepare` made of them (every fit, checked before anything is written).
    opts : ExtrapolateConfig
        The parsed options (:func:`parse`).
    out_dir : str or pathlib.Path
        The run directory: the bootstrap's chunks are stored under ``out_dir/chunks`` (a rerun resumes them).
    source : str, optional, keyword-only
        The scores' name in messages (:func:`source_name`); default ``"scores"``.
    progress : bool or None, optional, keyword-only
        Show a progress bar (None: when the output is a terminal); default None.

    Returns
    -------
    Extrapolation
        The tidy tables ``curves``, ``fits`` and ``simulation`` and the runner's ``report``
        (:class:`simstudy.extrapolation.Extrapolation`).

    Raises
    ------
    simstudy.extrapolation.BadSample
        Scores the law cannot be fitted to as asked.
    simstudy.engine.chunks.RunDirConflict
        ``out_dir`` holds the chunks of other settings.
    simstudy.extrapolation.ExtrapolationFailed
        A bootstrap chunk raised in its worker (the others stay stored).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = parse({"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run({"mlp": ys}, opts, tmp, progress=False)
    >>> round(float(result.fits["b"].iloc[0]), 4), result.report.computed
    (0.9082, 1)
    """
    from simstudy import extrapolation

    analyses = extrapolation.prepare(scores, opts, source) if isinstance(scores, dict) else scores
    return extrapolation.run(analyses, opts, Path(out_dir), progress=progress)


def write(result: Extrapolation, opts: ExtrapolateConfig, out_dir: str | Path, *, source: str = "scores") -> Path:
    """Write what ``simstudy extrapolate`` writes of a result: ``extrapolation.csv``, ``fit.csv``,
    ``simulation.csv``, ``extrapolation.png`` and ``EXTRAPOLATE.md`` (each atomically).

    Parameters
    ----------
    result : Extrapolation
        From :func:`run`.
    opts : ExtrapolateConfig
        The options it was run with.
    out_dir : str or pathlib.Path
        The run directory (it exists).
    source : str, optional, keyword-only
        The scores' name in the page's title (:func:`source_name`); default ``"scores"``.

    Returns
    -------
    pathlib.Path
        ``out_dir / "EXTRAPOLATE.md"``.

    Raises
    ------
    OSError
        If a file cannot be written.

    Examples
    --------
    The figure takes about a second:

    >>> import pathlib, tempfile
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = parse({"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = write(run({"mlp": ys}, opts, tmp, progress=False), opts, tmp)
    ...     sorted(p.name for p in pathlib.Path(tmp).iterdir())
    ['EXTRAPOLATE.md', 'chunks', 'extrapolation.csv', 'extrapolation.png', 'fit.csv', 'simulation.csv']
    """
    from simstudy import io
    from simstudy.commands import extrapolate_page

    out_dir = Path(out_dir)
    io.write_csv(result.curves, out_dir / "extrapolation.csv")
    io.write_csv(result.fits, out_dir / "fit.csv")
    io.write_csv(result.simulation, out_dir / "simulation.csv")
    return extrapolate_page.write_page(result, opts, source, out_dir)


def report_charts(files) -> list[Chart]:
    """The chart ``report.html`` draws of ``simstudy extrapolate``'s directory, where it has its page and
    ``extrapolation.csv``: :func:`simstudy.commands.extrapolate_page.extrapolation_chart` of it and ``fit.csv``,
    the chart ``extrapolation.png`` is drawn from.

    Parameters
    ----------
    files : simstudy.report_safe.Files
        The directory's files, read as data and only where they are its own.

    Returns
    -------
    list of simstudy.charts.Chart
        One chart, or none (no page or table there, or a table refused or without the columns).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.report_safe import Files
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report_charts(Files(Path(d)))
    []
    """
    from simstudy.commands._pages import saved_run
    from simstudy.commands.extrapolate_page import extrapolation_chart

    found = saved_run(files, "EXTRAPOLATE.md", "extrapolation.csv", "fit.csv")
    if found is None or found[1][0] is None:
        return []
    settings, (table, fits) = found
    source = Path(str(settings.get("data") or "scores")).name  # as source_name names a file or data set
    chart = extrapolation_chart(table, fits, title=f"{source}: extrapolated tuning curves")
    return [chart] if chart is not None else []


@dataclass(frozen=True)
class Extrapolated:
    """What ``simstudy extrapolate`` made: the result and the settings it was made with.

    Parameters
    ----------
    result : simstudy.extrapolation.Extrapolation
        From :func:`run`.
    config : ExtrapolateConfig
        The parsed options (the scores' name is their :func:`source_name`).

    Examples
    --------
    >>> [f.name for f in dataclasses.fields(Extrapolated)]
    ['result', 'config']
    """

    result: Extrapolation
    config: ExtrapolateConfig

    @property
    def report(self):
        """The runner's report of the bootstrap."""
        return self.result.report


def _prepare(config: ExtrapolateConfig, scores: dict) -> list[Analysis]:
    """Every fit, made before the run directory is touched (a refused sample leaves nothing behind)."""
    from simstudy import extrapolation

    return extrapolation.prepare(scores, config, source_name(config))


def _run(config: ExtrapolateConfig, analyses: list[Analysis], out_dir: Path) -> Extrapolated:
    """The bootstrap of every fit, its chunks stored in the run directory (a rerun resumes them)."""
    from simstudy.engine.rundir import EXIT_FAILED, fail
    from simstudy.extrapolation import ExtrapolationFailed

    try:
        result = run(analyses, config, out_dir, source=source_name(config))
    except ExtrapolationFailed as exc:
        fail(str(exc), status=EXIT_FAILED)
    return Extrapolated(result, config)


def _write(done: Extrapolated, out_dir: Path) -> Path:
    """The tables, figure and EXTRAPOLATE.md (:func:`write`)."""
    return write(done.result, done.config, out_dir, source=source_name(done.config))


def _lines(done: Extrapolated) -> list[str]:
    """What the terminal shows (:func:`simstudy.commands.extrapolate_page.summary`)."""
    from simstudy.commands import _iid, extrapolate_page

    out = extrapolate_page.summary(done.result, done.config.level)
    return out + _iid.lines(done.config.data)  # whether the scores read as random search (issue 36)


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "extrapolate",
    page="EXTRAPOLATE.md",
    run=_run,
    options=ExtrapolateOptions,
    parse=parse,
    prepare=_prepare,
    chunks=True,
    write=_write,
    lines=_lines,
    charts=report_charts,
    runner=True,
    rerun_may_change=("n_boot", "level", "method"),  # n_boot only adds chunks; level, method read them
    usage="simstudy extrapolate data=FILE|DATASET [model=NAME] [key=value ...]",
    examples=(
        "simstudy extrapolate data=my_scores.csv threshold=0.5 n_boot=200",
        "simstudy extrapolate data=deberta_mnli model=debertav3 sample_size=48   # check against the other 976 runs",
        "simstudy extrapolate data=runs.csv model=lstm threshold_score=0.85 c=[1,2,3] k_max=10000",
    ),
    writes="outputs/extrapolate/<overrides>/: EXTRAPOLATE.md (one page), extrapolation.png, extrapolation.csv, fit.csv, "
    "simulation.csv, chunks/ (the bootstrap: a rerun resumes)",
)
