"""A sweep's jobs in one tidy frame: every job's summary stacked, with one column per swept key.

A Hydra multirun (``simstudy -m key=a,b ...``) leaves one run directory per combination of swept values;
:func:`stack` reads their ``summary.parquet`` files into one frame with a ``job`` column (the job's directory
name) and one column per swept key holding that job's value (numbers as numbers). :func:`headline` picks, per
study kind, the rows a sweep's faceted figure shows, and :func:`sweep_chart` describes that figure
(:class:`simstudy.charts.Chart`; :func:`simstudy.figures.sweep_figure` draws it). ``write_sweep``
writes the stacked frame and that figure at the sweep directory (after a multirun, for a design, and for
``simstudy collect sweep_dir=DIR``), and for three or more swept keys a nested-loop plot, ``nested_loop.png``
(Rücker & Schwarzer 2014; :func:`nested_loop_factors`, :func:`nested_loop_figure`);
``unfinished_message`` says which jobs have no summary yet.

The nested-loop plot (Rücker & Schwarzer 2014) shows a factorial design on one axis: every cell of the factorial
in lexicographic order (the first factor varies slowest), the estimate as a step line, and beneath it one step
line per factor giving its level in each cell (:func:`nested_loop_layout` lays it out).

Which jobs a sweep has and what each one's values are is the CLI's business (it reads the sweep's
``multirun.yaml`` with Hydra's own parser); this module knows nothing of Hydra.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy.charts import Chart, estimates, to_matplotlib
from simstudy.registry import Headline

__all__ = [
    "Job",
    "Stacked",
    "Headline",
    "stack",
    "headline",
    "sweep_chart",
    "nested_loop_factors",
    "nested_loop_layout",
    "nested_loop_figure",
]

log = logging.getLogger("simstudy")


@dataclass(frozen=True)
class Job:
    """One job of a sweep: its directory name (under the sweep directory) and its swept values by key.

    Parameters
    ----------
    name : str
        The job's directory name under the sweep directory (Hydra's, e.g. ``"0"`` or
        ``"distribution.sd=0.1"``); also its value in the stacked frame's ``job`` column.
    values : dict of str to object, optional
        Swept key (dotted, as on the command line) -> this job's value (numbers as numbers). Default ``{}``.

    Examples
    --------
    >>> Job("distribution.sd=0.1", {"distribution.sd": 0.1})
    Job(name='distribution.sd=0.1', values={'distribution.sd': 0.1})
    """

    name: str
    values: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Stacked:
    """A sweep's summaries stacked into one tidy frame: what :func:`stack` returns.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per summary row of every finished job: columns ``job``, then one per swept key, then the
        summaries' own columns (``study``, ``cell``, ``measure``, ``estimate``, ``mcse``, ...). Only ``job`` and
        the swept keys when no job finished.
    unfinished : tuple of str
        The names of the jobs without a ``summary.parquet`` (still running, failed or sharded), in job order.
    kind : str
        The study kind, from the first finished job's ``run.json`` (``""`` if none finished or it is
        unreadable).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = stack(tmp, [Job("0", {"distribution.sd": 0.1})], ["distribution.sd"])
    >>> out.frame.columns.tolist(), out.unfinished, out.kind
    (['job', 'distribution.sd'], ('0',), '')
    """

    frame: pd.DataFrame
    unfinished: tuple[str, ...]
    kind: str


def _headline_of(kind: str) -> Headline | None:
    """The registered study's sweep headline (``None`` for an unknown kind or one that declares none)."""
    from simstudy import registry

    try:
        return registry.study(kind).sweep
    except KeyError:
        return None


_X = ("n", "k", "B", "budget", "nominal", "confidence")
_HUE = ("estimator", "method", "algorithm")


def _stack_iv(sweep_dir, jobs, swept) -> tuple[Path, list[Job], list[str]]:
    sweep_dir = Path(sweep_dir)
    jobs, swept = list(jobs), list(swept)
    names = [job.name for job in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"jobs must have distinct names, got {names}")
    clash = [k for k in swept if k == "job"]
    if clash:
        raise ValueError("a swept key cannot be named 'job' (the column of job names)")
    for job in jobs:
        missing = [k for k in swept if k not in job.values]
        if missing:
            raise ValueError(f"job {job.name} has no value for swept key(s) {', '.join(missing)}")
    return sweep_dir, jobs, swept


def stack(sweep_dir, jobs, swept) -> Stacked:
    """Stack the summaries of a sweep's jobs into one tidy frame.

    Parameters
    ----------
    sweep_dir : str or os.PathLike
        The sweep directory; job ``j`` wrote ``sweep_dir / j.name / "summary.parquet"`` (and ``run.json``).
    jobs : iterable of Job
        The sweep's jobs, in the order their rows are stacked.
    swept : iterable of str
        The swept keys (e.g. ``distribution.sd``): one column each, after ``job``.

    Returns
    -------
    Stacked
        The frame (finished jobs only), the unfinished jobs' names and the study kind ("" if none finished).
        A swept column holding both numbers and text is stored as text (one type per column).

    Raises
    ------
    ValueError
        If two jobs share a name, a job lacks a swept key's value, or a swept key is named ``job``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     d = Path(tmp)
    ...     for sd in (0.05, 0.1):
    ...         (d / f"sd={sd}").mkdir()
    ...         pd.DataFrame({"measure": ["mse"], "estimate": [sd**2]}).to_parquet(d / f"sd={sd}" / "summary.parquet")
    ...     jobs = [Job("sd=0.05", {"sd": 0.05}), Job("sd=0.1", {"sd": 0.1}), Job("sd=0.2", {"sd": 0.2})]
    ...     out = stack(d, jobs, ["sd"])
    >>> out.frame
           job    sd measure  estimate
    0  sd=0.05  0.05     mse    0.0025
    1   sd=0.1  0.10     mse    0.0100
    >>> out.unfinished
    ('sd=0.2',)
    """
    sweep_dir, jobs, swept = _stack_iv(sweep_dir, jobs, swept)
    frames, unfinished, kind = [], [], ""
    for job in jobs:
        path = sweep_dir / job.name / "summary.parquet"
        if not path.is_file():
            unfinished.append(job.name)
            continue
        summary = pd.read_parquet(path)
        if not kind:
            kind = _kind(sweep_dir / job.name / "run.json")
        frames.append(summary.assign(**{"job": job.name, **{k: job.values[k] for k in swept}}))
    if not frames:
        return Stacked(pd.DataFrame(columns=["job", *swept]), tuple(unfinished), kind)
    frame = pd.concat(frames, ignore_index=True)
    first = ["job", *swept]
    frame = frame[first + [c for c in frame.columns if c not in first]]
    for key in swept:
        if frame[key].dtype == object and frame[key].map(type).nunique() > 1:  # e.g. 10 and "abc": parquet
            frame[key] = frame[key].astype(str)  # holds one type per column
    return Stacked(frame, tuple(unfinished), kind)


def _kind(run_json: Path) -> str:
    try:
        return str(json.loads(run_json.read_text()).get("kind", ""))
    except (OSError, ValueError):
        return ""


def headline(frame: pd.DataFrame, kind: str) -> tuple[pd.DataFrame, Headline]:
    """The rows of a stacked frame that its sweep figure draws, and how (the study's registered
    :attr:`~simstudy.registry.Study.sweep`).

    A kind that declares none shows its first measure against the first of
    ``n, k, B, budget, nominal, confidence`` it has, one line per ``estimator``, ``method`` or ``algorithm``
    (a coverage, :attr:`~simstudy.registry.Headline.role`, when the measure's name says so).

    Parameters
    ----------
    frame : pandas.DataFrame
        A stacked frame (:attr:`Stacked.frame`) or one summary, with an ``estimate`` column.
    kind : str
        The study kind (:attr:`Stacked.kind`); an unknown one, or ``""``, takes the default above.

    Returns
    -------
    rows : pandas.DataFrame
        The headline rows of ``frame`` (same columns and index; for ``evp_accuracy``: each estimator's MSE,
        without the exact truth and the paired differences; failed-chunk rows never).
    spec : Headline
        How to draw them: ``estimate`` against ``spec.x``, one line per ``spec.hue``, labelled ``spec.ylabel``.

    Examples
    --------
    >>> f = pd.DataFrame({"estimator": ["u", "v", "truth", "v-u"], "n": 1, "measure": "mse", "estimate": 0.0})
    >>> rows, spec = headline(f, "evp_accuracy")
    >>> list(rows["estimator"]), spec.x, spec.hue
    (['u', 'v'], 'n', 'estimator')
    """
    spec = _headline_of(kind)
    if spec is None:
        measures = [m for m in dict.fromkeys(frame.get("measure", pd.Series(dtype=object))) if m != "failed_chunks"]
        spec = Headline(
            {"measure": measures[0]} if measures else {},
            next((c for c in _X if c in frame), "job"),
            next((c for c in _HUE if c in frame), "job"),
            measures[0] if measures else "estimate",
            # an unregistered kind's measure says what it is by its name (the frame's key, not a label)
            "coverage" if measures and "coverage" in str(measures[0]).lower() else "measure",
        )
    keep = pd.Series(True, index=frame.index)
    for column, value in spec.where.items():
        keep &= frame[column] == value if column in frame else False
    if "measure" in frame:
        keep &= frame["measure"] != "failed_chunks"
    if spec.hue == "estimator" and "estimator" in frame:  # the truth and paired differences are not estimators
        keep &= (frame["estimator"] != "truth") & ~frame["estimator"].astype(str).str.contains("-", regex=False)
    return frame[keep], spec


def write_sweep(sweep_dir: Path, swept: list[str], jobs: list):
    """Stack the finished jobs' summaries into ``summary.parquet``/``.csv`` at the sweep directory and draw
    the faceted ``figure.png``/``.pdf``; returns the :class:`~simstudy.sweeps.Stacked` (with the unfinished)."""
    import matplotlib.pyplot as plt

    from simstudy import io

    stacked = stack(sweep_dir, jobs, swept)
    frame = stacked.frame
    if not len(frame):
        return stacked
    io.write_parquet(frame, sweep_dir / "summary.parquet")
    io.write_csv(frame, sweep_dir / "summary.csv")
    rows, spec = headline(frame, stacked.kind)
    if len(rows):
        study = f"{frame['study'].iloc[0]}: " if "study" in frame else ""
        fig = to_matplotlib(sweep_chart(rows, swept, spec, title=f"{study}{spec.ylabel} by {', '.join(swept)}"))
        for suffix in ("png", "pdf"):
            io.save_figure(fig, sweep_dir / f"figure.{suffix}", dpi=150)
        plt.close(fig)
        if len(swept) >= 3:  # a factorial of three or more factors: every cell on one axis as well
            _nested_loop(sweep_dir, rows, swept, spec, study)
    from simstudy.report_html import build_or_warn

    build_or_warn(sweep_dir, headline=headline, frame=frame, swept=swept, kind=stacked.kind)
    log.info(
        "sweep: %d job(s) stacked into %s (%d rows; swept: %s)",
        len(jobs) - len(stacked.unfinished),
        sweep_dir / "summary.parquet",
        len(frame),
        ", ".join(swept),
    )
    return stacked


def sweep_chart(rows: pd.DataFrame, swept: list[str], spec: Headline, *, title: str | None = None) -> Chart:
    """A sweep's headline figure, described (:func:`simstudy.charts.to_matplotlib` draws it as ``figure.png``).

    One panel per combination of swept values (in the jobs' order), ``estimate`` against ``spec.x``, one line
    per ``spec.hue``; where a job has several cells, one line style per ``distribution``/``B`` that varies
    within a job; the 95% interval: the Clopper-Pearson ``ci_low``/``ci_high`` where the rows have them, else
    ±1.96 ``mcse``, else none; on a coverage (``spec.role``), the nominal level dashed.

    Parameters
    ----------
    rows : pandas.DataFrame
        Headline rows of a stacked sweep frame (:func:`headline`): columns ``swept``, ``spec.x``, ``spec.hue``,
        ``estimate`` and optionally ``distribution``, ``B``, ``mcse``, ``ci_low``, ``ci_high``, ``nominal``.
    swept : list of str
        The swept keys (columns of ``rows``): a panel's title names their values.
    spec : Headline
        What the rows are and how they are drawn (x, hue, y label, role).
    title : str, optional, keyword-only
        The chart's title. Default None: "<ylabel> by <swept keys>".

    Returns
    -------
    simstudy.charts.Chart
        The description.

    Examples
    --------
    >>> rows = pd.DataFrame({"B": [5, 5, 10, 10], "n": [1, 2, 1, 2], "estimator": "v", "estimate": 0.1})
    >>> chart = sweep_chart(rows, ["B"], Headline({}, "n", "estimator", "MSE"))
    >>> chart.title, chart.facets, chart.rows[0]["facet"]
    ('MSE by B', ('B',), ('5',))
    """
    varying = [c for c in ("distribution", "B") if c != spec.x and c in rows]
    if varying:  # what varies within a job gets a line style; what the jobs differ in, a panel
        job = rows[swept].astype(str).apply(tuple, axis=1) if swept else pd.Series(0, index=rows.index)
        varying = [c for c in varying if rows.groupby(job)[c].nunique().max() > 1]
    return estimates(
        rows,
        x=spec.x,
        hue=spec.hue,
        ylabel=spec.ylabel,
        title=title or f"{spec.ylabel} by {', '.join(swept) or 'job'}",
        facets=swept,
        styles=varying,
        role=spec.role,
        ci=True,
    )


def nested_loop_factors(rows: pd.DataFrame, swept: list[str], spec: Headline) -> list[str] | None:
    """The factors of a sweep's nested-loop plot: the swept keys, then what else varies within a job.

    Parameters
    ----------
    rows : pandas.DataFrame
        A sweep's headline rows (:func:`headline`).
    swept : list of str
        The swept keys (columns of ``rows``), the first the slowest loop.
    spec : Headline
        How the rows are drawn: ``spec.x`` (e.g. ``nominal`` or ``k``) and then ``distribution`` join as inner
        loops when they vary within a job; ``spec.hue`` stays the lines.

    Returns
    -------
    list of str or None
        The factors, first the slowest; None when even these leave two rows of a line in one cell.

    Examples
    --------
    >>> rows = pd.DataFrame({"B": [5, 5, 10, 10], "n": [1, 2, 1, 2], "estimator": "v", "estimate": 0.0})
    >>> nested_loop_factors(rows, ["B"], Headline({}, "n", "estimator", "MSE"))
    ['B', 'n']
    """
    factors = list(swept)
    for column in (spec.x, "distribution"):
        if rows.duplicated([*factors, spec.hue]).any() and column in rows and column not in factors:
            factors.append(column)
    return None if rows.duplicated([*factors, spec.hue]).any() else factors


def _nested_loop(sweep_dir: Path, rows: pd.DataFrame, swept: list[str], spec: Headline, study: str) -> None:
    """Draw ``nested_loop.png`` at the sweep directory (:func:`nested_loop_figure`)."""
    import matplotlib.pyplot as plt

    from simstudy import io

    factors = nested_loop_factors(rows, swept, spec)
    if factors is None:
        log.info("sweep: no nested-loop plot (the swept keys and %s do not tell the headline rows apart)", spec.x)
        return
    fig = nested_loop_figure(
        rows, factors, hue=spec.hue, ylabel=spec.ylabel, title=f"{study}{spec.ylabel} over every cell (±2 MCSE)"
    )
    io.save_figure(fig, sweep_dir / "nested_loop.png", dpi=150)
    plt.close(fig)


def nested_loop_layout(codes, n_levels: Sequence[int], *, height: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """The nested-loop plot's kernel: the cells in lexicographic order and each factor's step line.

    Parameters
    ----------
    codes : array_like of int, shape (C, F)
        Each cell's level index (0-based) for each of F factors, the first factor the slowest loop.
    n_levels : sequence of int, length F
        How many levels each factor has.
    height : float, keyword-only
        How much of its lane (1 unit tall) a factor's step line spans, from its first level to its last.
        Default 0.7.

    Returns
    -------
    order : ndarray of int, shape (C,)
        The cells (rows of ``codes``) sorted lexicographically, first factor slowest: cell ``order[x]`` is
        drawn at x.
    lanes : ndarray of float64, shape (F, C)
        Factor f's step line: in lane ``F - 1 - f`` (the first factor on top), ``F - 1 - f + height * code /
        (levels - 1)`` at each x (the lane's bottom for a factor of one level).

    Examples
    --------
    A 2 x 3 x 2 factorial given in scrambled order:

    >>> import itertools
    >>> cells = np.array(list(itertools.product(range(2), range(3), range(2))))[::-1]
    >>> order, lanes = nested_loop_layout(cells, [2, 3, 2], height=1.0)
    >>> cells[order][:4].tolist()
    [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]]
    >>> lanes.tolist()[0] == [2.0] * 6 + [3.0] * 6, lanes[1].tolist()[:6], lanes[2].tolist()[:4]
    (True, [1.0, 1.0, 1.5, 1.5, 2.0, 2.0], [0.0, 1.0, 0.0, 1.0])
    """
    codes = np.asarray(codes, dtype=np.int64)
    F = codes.shape[1]
    order = np.lexsort(codes.T[::-1])  # lexsort's last key is the primary one
    sorted_codes = codes[order].T.astype(np.float64)
    spread = np.array([max(n - 1, 1) for n in n_levels], dtype=np.float64)[:, None]
    lanes = (F - 1 - np.arange(F))[:, None] + height * sorted_codes / spread
    return order, lanes


def _levels(values: pd.Series) -> list:
    """A factor's levels in order: numbers ascending, anything else in order of first appearance."""
    unique = list(pd.unique(values))
    return sorted(unique) if pd.api.types.is_numeric_dtype(values) else unique


def nested_loop_figure(
    frame: pd.DataFrame,
    factors: Sequence[str],
    *,
    y: str = "estimate",
    hue: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
):
    """A nested-loop plot (Rücker & Schwarzer 2014): ``y`` over every cell of a factorial, factors beneath.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows: one per cell of the factorial (and ``hue`` value): columns ``factors``, ``y`` and optionally
        ``hue`` and ``mcse`` (then ±2 MCSE is shaded; a Monte Carlo interval of about 95%).
    factors : sequence of str
        The factors, the first the slowest loop; each one's levels are ordered numerically for numbers, else
        as they first appear.
    y : str, keyword-only
        The column drawn. Default ``"estimate"``.
    hue : str, optional, keyword-only
        A column telling lines apart (e.g. ``"estimator"``). Default None: one line.
    ylabel : str, optional, keyword-only
        What ``y`` is. Default: ``y``.
    title : str, optional, keyword-only
        The figure's title. Default: "<ylabel> over the cells of <factors>".

    Returns
    -------
    matplotlib.figure.Figure
        Two axes sharing x (the cell, 1..C in lexicographic order): the estimate's step lines on top, one
        step line per factor beneath, labelled with the factor and its levels.

    Raises
    ------
    ValueError
        If a column is missing, or two rows share a cell and ``hue`` value (the factors do not identify a row).

    References
    ----------
    Rücker, G., & Schwarzer, G. (2014). Presenting simulation results in a nested loop plot. BMC Medical
    Research Methodology 14, 129.

    Examples
    --------
    >>> import itertools
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> cells = list(itertools.product([10, 50], ["u", "v", "w"], [0.1, 0.2]))
    >>> frame = pd.DataFrame(cells, columns=["B", "estimator", "sd"]).assign(estimate=np.arange(12.0), mcse=0.1)
    >>> fig = nested_loop_figure(frame, ["B", "estimator", "sd"], ylabel="MSE")
    >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
    ['B', 'estimator', 'sd']
    >>> plt.close(fig)
    """
    from simstudy.chart_style import colorblind, estimator_label, labels, legend, plain, suptitle, theme

    needed = [*factors, y, *([hue] if hue else [])]
    missing = [c for c in needed if c not in frame]
    if missing:
        raise ValueError(f"nested_loop_figure: column(s) {', '.join(missing)} not in the frame")
    levels = [_levels(frame[f]) for f in factors]
    keys = frame[list(factors)].apply(tuple, axis=1)
    cells = list(dict.fromkeys(keys))
    codes = np.array([[lv.index(v) for lv, v in zip(levels, cell)] for cell in cells], dtype=np.int64)
    dup = frame.duplicated([*factors, *([hue] if hue else [])])
    if dup.any():
        raise ValueError(
            f"nested_loop_figure: {int(dup.sum())} rows share a cell of {', '.join(factors)}"
            + (f" and {hue}" if hue else "")
            + ": give the factors that tell them apart"
        )
    order, lanes = nested_loop_layout(codes, [len(lv) for lv in levels])
    position = {cells[c]: x for x, c in enumerate(order)}
    xs = keys.map(position).to_numpy()
    plt = theme()
    C, F = len(cells), len(factors)
    fig, (top, bottom) = plt.subplots(
        2,
        1,
        figsize=(max(6.0, min(14.0, 0.12 * C + 4.0)), 4.0 + 0.45 * F),
        sharex=True,
        height_ratios=[3.0, 0.45 * F + 0.3],
        layout="constrained",
    )
    hues = list(dict.fromkeys(frame[hue])) if hue else [None]
    palette = dict(zip(hues, colorblind(len(hues))))
    for h in hues:
        rows = frame[frame[hue] == h] if hue else frame
        at = xs[(frame[hue] == h).to_numpy()] if hue else xs
        line = np.full(C, np.nan)
        line[at] = rows[y].to_numpy(dtype=np.float64)
        top.step(
            np.arange(1, C + 1),
            line,
            where="mid",
            color=palette[h],
            lw=1.4,
            label=estimator_label(str(h)) if hue else y,
        )
        if "mcse" in rows:
            se = np.full(C, np.nan)
            se[at] = rows["mcse"].to_numpy(dtype=np.float64)
            top.fill_between(
                np.arange(1, C + 1), line - 2 * se, line + 2 * se, step="mid", color=palette[h], alpha=0.25, lw=0
            )
    labels(top, ylabel=ylabel or y)
    if hue:  # beside the panels, not in the top one: the step lines run through the whole of its width
        legend(fig, top, fontsize=7, loc="outside right upper")
    names = []
    for f in range(F):
        bottom.step(np.arange(1, C + 1), lanes[f], where="mid", color="0.25", lw=1.0)
        # each level named where its run starts, unless the runs are too many (an inner factor): then the
        # lane's label gives the range of its levels
        sorted_codes = codes[order, f]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        if starts.size <= 24:
            names.append(plain(factors[f]))
            for s in starts:
                bottom.text(s + 0.6, lanes[f, s] + 0.05, plain(levels[f][sorted_codes[s]]), fontsize=6, va="bottom")
        else:
            names.append(plain(f"{factors[f]} ({levels[f][0]} .. {levels[f][-1]})"))
    bottom.set_yticks(F - 1 - np.arange(F) + 0.35, names)
    bottom.set_ylim(-0.2, F)
    bottom.grid(False, axis="y")
    labels(bottom, xlabel=f"cell (lexicographic: {', '.join(factors)}; first slowest)")
    bottom.set_xlim(0.5, C + 0.5)
    suptitle(fig, title or f"{ylabel or y} over the cells of {' x '.join(factors)} (shaded: ±2 MCSE)")
    return fig


def unfinished_message(sweep_dir: Path, unfinished, total: int) -> str:
    """Which jobs have no summary, and what finishes them: a sharded job's run is collected, others resumed."""
    sharded = all((sweep_dir / job / "shards").is_dir() for job in unfinished)
    then = (
        (
            f"when their shards are done, simstudy collect run_dir={sweep_dir}/JOB for each, then simstudy collect "
            f"sweep_dir={sweep_dir}"
        )
        if sharded
        else "rerun the sweep's command to resume them"
    )
    return (
        f"{sweep_dir}: {len(unfinished)} of {total} jobs did not finish (no summary.parquet): "
        f"{'; '.join(unfinished)}; {then}"
    )
