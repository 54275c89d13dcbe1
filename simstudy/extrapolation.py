"""The analysis of ``simstudy extrapolate`` (:mod:`simstudy.commands.extrapolate`): a researcher's tuning curve
extrapolated past the runs they have.

Nonparametric bands for the median tuning curve (:mod:`simstudy.stats.bands`) turn trivial beyond k of about n/6
runs: they cannot say what more search would bring. Near the optimum the scores of random search follow the
noisy quadratic law (Lourie, He & Cho 2025; :mod:`simstudy.distributions.parametric`), whose parameters mean something: b,
the best score possible, and c, the effective number of hyperparameters. For each model this module

1. fits the law to the tail of the scores (:func:`simstudy.distributions.fitting.fit`: scores at or below the
   threshold censored);
2. runs the parametric bootstrap -- ``n_boot`` samples of n scores from the fitted law, the same threshold
   rule, the whole fit again -- in chunks through the runner (:func:`simstudy.engine.runner.run_tasks`), each chunk
   seeded by its cell and index (:func:`simstudy.engine.runner.task_seed`) and stored in a
   :class:`~simstudy.engine.chunks.ChunkStore`, so an interrupted run resumes and the numbers are the same for any
   ``n_jobs``; percentile intervals for b (and a, o) and pointwise bands for the median and mean curves
   follow;
3. reports how far the extrapolation held up *in simulation from the fitted law at the user's n*: the
   bootstrap's replicates are exactly such simulations (n scores from the fitted law, refitted by the same
   rule), so the error of each replicate's median curve against the fitted law's, at k = n, 2n, 5n, 10n and
   100n, measures the method at this n, with its Monte Carlo error (no extra fits). The relative error is
   ``(predicted(k) - true(k)) / (true(k) - true(1))``: the error as a share of what search gains over a single
   run's median score;
4. beside it, the nonparametric median curve and its simultaneous band of the same scores, for k <= n;
5. with ``sample_size`` below the number of runs, the extrapolation from the first n is checked against the
   median curve of all the runs (held out: ``covers_all``), and the law fitted to all of them (not
   bootstrapped) against their nonparametric band (``inside_np``): Lourie, He & Cho's observation that the
   fitted form stays inside the 95% bands.

The tidy result is :class:`Extrapolation`; :func:`simstudy.commands.extrapolate.write` writes it. No files, no pages:
the library computation under the command (and :func:`simstudy.extrapolate`, the command on arrays). This module
was ``simstudy.extrapolate`` before issue 26 and ``simstudy.commands.extrapolate_fit`` before issue 35.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy.datasets import DataError
from simstudy.distributions import InvalidParameter
from simstudy.distributions.fitting import FitResult, fit
from simstudy.engine import chunks
from simstudy.engine import identity as _identity
from simstudy.engine.runner import RunReport, Task, chunk_tasks, run_tasks, stable_hash, task_seed
from simstudy.stats import bands
from simstudy.stats.kde import failed_runs
from simstudy.stats.parametric_fit import FIT_VERSION, MIN_TAIL, Threshold, bootstrap_chunk, curves

log = logging.getLogger("simstudy.extrapolate")  # its name before issue 26: log filters and the terminal keep it

__all__ = [
    "CHUNK",
    "MULTIPLES",
    "Sample",
    "Analysis",
    "Extrapolation",
    "ExtrapolationFailed",
    "BadSample",
    "TailTooShort",
    "budgets",
    "prepare",
    "run",
]

#: Bootstrap replicates per chunk (one task of the runner; its fits are vectorized together).
CHUNK = 25
#: The budgets, as multiples of n, at which the extrapolation's error in simulation is reported.
MULTIPLES = (1, 2, 5, 10, 100)
#: Version of the chunks' meaning: bump it when a chunk's numbers change for the same options.
SCHEME = "extrapolate-1"
_GRID_POINTS = 64


class ExtrapolationFailed(RuntimeError):
    """Bootstrap chunks failed (an exception in a worker); the message names the first.

    Raised by :func:`run` after the runner has tried every chunk; the chunks that succeeded stay stored, so
    a rerun computes only the failed ones. The CLI exits with its "failed" code.

    Examples
    --------
    >>> raise ExtrapolationFailed("1 of 8 bootstrap chunks failed; first: chunk abc/0: MemoryError")
    Traceback (most recent call last):
        ...
    simstudy.extrapolation.ExtrapolationFailed: 1 of 8 bootstrap chunks failed; first: chunk abc/0: MemoryError
    """


class BadSample(DataError):
    """Scores the command cannot fit as asked; the one-line message names the model and the fix.

    Raised by :func:`prepare` before anything is written (``sample_size`` or ``k_max`` inconsistent with a
    model's runs, or a fit refused); a :class:`~simstudy.datasets.DataError` (a :class:`ValueError`).

    Examples
    --------
    >>> from simstudy.commands import extrapolate
    >>> opts = extrapolate.parse({"data": "scores.csv", "sample_size": 60})
    >>> prepare({"mlp": np.linspace(0.5, 0.9, 48)}, opts, "scores.csv")
    Traceback (most recent call last):
        ...
    simstudy.extrapolation.BadSample: sample_size=60 exceeds the 48 scores of model mlp in scores.csv: give sample_size <= 48
    """


class TailTooShort(BadSample):
    """Too few scores above the threshold to fit the tail (fewer than :data:`~simstudy.stats.parametric_fit.MIN_TAIL`).

    A :class:`BadSample` raised by :func:`prepare`; the message says how far to lower the threshold.

    Examples
    --------
    >>> from simstudy.commands import extrapolate
    >>> opts = extrapolate.parse({"data": "scores.csv"})
    >>> prepare({"mlp": np.linspace(0.5, 0.9, 10)}, opts, "scores.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    simstudy.extrapolation.TailTooShort: scores.csv: model mlp: threshold=0.5 leaves 5 of 10 scores above it ...
    """


@dataclass(frozen=True)
class Sample:
    """One fit: a model's first ``runs`` scores, and how many the model has (``total``; held out beyond).

    Parameters
    ----------
    model : str
        The model's name (as in the score file).
    scores : ndarray of float, shape (runs,)
        The scores fitted, in score units and random-search order; ``runs`` (a property) is their number.
    total : int
        How many scores the model has; those beyond ``runs`` are held out.
    reference : bool, optional
        The fit of all the runs beside an extrapolation from the first ``sample_size`` (held-out check); it
        is fitted, not bootstrapped (its curve is compared with its own nonparametric band). Default False.
    failed : int, optional
        How many of the scores are failed runs (an atom below most of the others,
        :func:`simstudy.stats.kde.failed_runs`), set aside before a quantile threshold is taken (they are
        censored); default 0.

    Examples
    --------
    >>> s = Sample("mlp", np.array([0.7, 0.8, 0.75]), total=10)
    >>> s.runs, s.total, s.reference
    (3, 10, False)
    """

    model: str
    scores: np.ndarray
    total: int
    reference: bool = False
    failed: int = 0

    @property
    def runs(self) -> int:
        return int(self.scores.size)


@dataclass(frozen=True)
class Analysis:
    """A sample's fit, its cell (the runner's key for its bootstrap) and the budgets of its curves.

    Made by :func:`prepare`, consumed by :func:`run`.

    Parameters
    ----------
    sample : Sample
        The scores fitted.
    fit : simstudy.distributions.fitting.FitResult
        The noisy quadratic law fitted to them.
    cell : str
        16 hex digits: a hash of the settings, the scores and the budgets, naming the bootstrap's chunks in
        the run directory (the same inputs resume the same chunks).
    ks : ndarray of float, shape (K,)
        The budgets (numbers of runs) of the curves (:func:`budgets`).

    Examples
    --------
    >>> from simstudy.commands import extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = extrapolate.parse({"data": "scores.csv", "c": 3, "k_max": 480})
    >>> (a,) = prepare({"mlp": ys}, opts, "scores.csv")
    >>> a.sample.runs, a.fit.law.c, round(a.fit.law.b, 4), len(a.cell), a.ks.size
    (48, 3, 0.9082, 16, 53)
    """

    sample: Sample
    fit: FitResult
    cell: str
    ks: np.ndarray


@dataclass(frozen=True)
class Extrapolation:
    """The tidy results of :func:`run`: three tables and the runner's report.

    Parameters
    ----------
    curves : DataFrame
        ``extrapolation.csv``: one row per model, runs fitted, k and curve (median, mean).
    fits : DataFrame
        ``fit.csv``: one row per model and runs fitted: the parameters, their intervals, c's bootstrap shares.
    simulation : DataFrame
        ``simulation.csv``: the extrapolation's error in simulation from the fitted law at k = n, 2n, ... 100n.
    report : simstudy.engine.runner.RunReport
        The runner's report (chunks computed and resumed).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.commands import extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = extrapolate.parse(
    ...     {"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1}
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(prepare({"mlp": ys}, opts, "scores.csv"), opts, tmp, progress=False)
    >>> result.curves.shape, result.fits.shape, result.simulation["multiple"].tolist()
    ((53, 17), (1, 45), [1, 2, 5, 10])
    """

    curves: pd.DataFrame
    fits: pd.DataFrame
    simulation: pd.DataFrame
    report: RunReport


def budgets(n: int, k_max: int, extra=()) -> np.ndarray:
    """The budgets of the curves: about 64 log-spaced from 1 to ``k_max``, the integers up to 10, n and its
    multiples (:data:`MULTIPLES`) and ``extra``, those up to ``k_max``.

    Parameters
    ----------
    n : int
        The number of runs fitted (its multiples are added).
    k_max : int
        The largest budget (number of runs), ``>= 1``.
    extra : sequence of float, optional
        More budgets to include (e.g. a model's total runs); default none.

    Returns
    -------
    ndarray of float, shape (K,)
        The distinct budgets (numbers of runs, whole numbers as floats) up to `k_max`, ascending.

    Examples
    --------
    >>> ks = budgets(48, 4800)
    >>> int(ks[0]), int(ks[-1]), {48, 96, 240, 480, 4800} <= set(ks)
    (1, 4800, True)
    """
    grid = np.round(np.geomspace(1, k_max, _GRID_POINTS))
    points = np.concatenate(
        [grid, np.arange(1, min(10, k_max) + 1), [m * n for m in MULTIPLES], np.asarray(extra, dtype=np.float64)]
    )
    points = np.unique(points.astype(np.float64))
    return points[points <= k_max]


def _rule(opts, failed: int = 0, runs: int = 0) -> Threshold:
    """The threshold rule of a sample of ``runs`` scores, ``failed`` of them failed runs.

    A quantile threshold is taken among the scores that are not failed runs: the law holds near the optimum, and
    a median over 14% of runs failed at 0 would fit scores far from the best. As a quantile of all the scores
    that is ``(failed + floor(q (runs - failed)) + 1/2) / runs`` (the 1/2 keeps the floor of the rule's
    ``quantile * runs`` off a rounding edge); the bootstrap applies it to samples of the fitted law, which have
    no failed runs, so its replicates censor as many scores as the data's fit did.
    """
    if opts.threshold_score is not None:
        return Threshold(quantile=None, score=float(opts.threshold_score))
    q = float(opts.threshold)
    if not 0 < failed < runs:
        return Threshold(quantile=q)
    return Threshold(quantile=(failed + np.floor(q * (runs - failed)) + 0.5) / runs)


def _describe_rule(opts) -> str:
    return (
        f"threshold_score={opts.threshold_score:g}"
        if opts.threshold_score is not None
        else f"threshold={opts.threshold:g}"
    )


def _tail_iv(sample: Sample, opts, source: str, sign: int = 1) -> None:
    """Refuse, naming the model and the fix, a sample with fewer than MIN_TAIL scores above the threshold
    (below it in the scores' own units with minimize=true, ``sign=-1``: the sample holds ``-x``)."""
    x = np.sort(sample.scores)
    rule = _rule(opts, sample.failed, sample.runs)
    t = float(rule.of(x[None, :])[0])
    n_tail = int((x > t).sum())
    if n_tail >= MIN_TAIL:
        return
    where = f"{source}: model {sample.model}"
    kept = sample.runs - sample.failed
    if sample.runs < MIN_TAIL:
        raise TailTooShort(
            f"{where} has {sample.runs} scores; fitting the tail needs at least {MIN_TAIL} above the "
            f"threshold: give more scores"
        )
    fix = (
        ("lower" if sign > 0 else "raise") + " threshold_score"
        if opts.threshold_score is not None
        else f"lower threshold (at most {np.floor(100 * (kept - MIN_TAIL) / kept) / 100:g} for "
        f"{kept} distinct scores{' besides the failed runs' if sample.failed else ''})"
    )
    raise TailTooShort(
        f"{where}: {_describe_rule(_analysed(opts, sign))} leaves {n_tail} of {sample.runs} scores "
        f"{'above' if sign > 0 else 'below'} it ({sign * t:.6g}); fitting the tail needs at least {MIN_TAIL}: {fix}"
    )


def _failed(x: np.ndarray, opts) -> int:
    """How many of the analysed scores ``x`` (higher is better) are failed runs set aside before a quantile
    threshold (none with ``threshold_score``, a fixed score censoring what it censors, nor with
    ``threshold_of=all``, the quantile of every run)."""
    if opts.threshold_score is not None or opts.threshold_of == "all":
        return 0
    return int(failed_runs(x).sum())


def _scale(opts, x: np.ndarray) -> tuple[float, float, str]:
    """The scale ``(low, high)`` the checks judge the law's curves against, in the scores' own units, and what of
    it is assumed: scores that all lie in [0, 1] look like accuracies or rates, so an unset ``low`` is taken as
    0 and an unset ``high`` as 1 (``"low=0, high=1"``; empty when nothing is assumed). The fit and the
    nonparametric band use only the bounds given."""
    low, high = float(opts.data.low), float(opts.data.high)
    assumed = []
    if x.size and np.all((x >= 0) & (x <= 1)):
        if not np.isfinite(low):
            low = 0.0
            assumed.append("low=0")
        if not np.isfinite(high):
            high = 1.0
            assumed.append("high=1")
    return low, high, ", ".join(assumed)


def _sign(opts) -> int:
    """-1 with ``minimize=true`` (lower is better: the fits and bootstrap run on ``-x``), else 1."""
    return -1 if getattr(opts.data, "minimize", False) else 1


def _analysed(opts, sign: int):
    """The options of the scores analysed, ``sign * x``: mirroring (``sign=-1``) maps the bounds to ``[-high,
    -low]`` and ``threshold_score`` to its negative (censoring ``x >= t`` is censoring ``-x <= -t``); it is its
    own inverse."""
    if sign > 0:
        return opts
    t = opts.threshold_score
    data = dataclasses.replace(opts.data, low=-opts.data.high, high=-opts.data.low)
    return dataclasses.replace(opts, data=data, threshold_score=None if t is None else -t)


def _digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x, dtype=np.float64).tobytes()).hexdigest()[:16]


def _settings(opts) -> dict:
    """What fixes a chunk's numbers besides the scores (n_boot only adds chunks; level, method only read)."""
    return {
        "scheme": SCHEME,
        "fit": FIT_VERSION,
        "seed": opts.seed,
        "chunk": CHUNK,
        "threshold": opts.threshold,
        "threshold_score": opts.threshold_score,
        "c": list(opts.c) if opts.c else None,
        "k_max": opts.k_max,
        "mean": opts.mean,
        "high": opts.data.high,  # of the scores analysed: minimize=true changes the chunks only through them
    }


def prepare(scores: dict, opts, source: str) -> list[Analysis]:
    """Every fit the command makes (each model's first ``sample_size`` scores, and all its scores when some are
    held out), checked and fitted before anything is written.

    Parameters
    ----------
    scores : dict of str to array_like of float
        Each model's scores (score units, shape (runs,)), in random-search order.
    opts : simstudy.commands.extrapolate.ExtrapolateConfig
        The validated options (:func:`simstudy.commands.extrapolate.parse`): ``sample_size``, ``threshold`` or
        ``threshold_score``, ``c``, ``k_max``, ``data.high`` (a bound on b) and the bootstrap's settings.
    source : str
        The data's name for messages (a shipped data set or the file's name).

    Returns
    -------
    list of Analysis
        Per model, the fit of its first ``sample_size`` scores, followed (when some are held out) by the
        reference fit of all its scores.

    Raises
    ------
    TailTooShort
        A sample with fewer than 8 scores above the threshold.
    BadSample
        ``sample_size`` beyond a model's scores, ``k_max`` below its runs, or a fit refused by
        :func:`~simstudy.distributions.fitting.fit`.

    Examples
    --------
    With ``sample_size=30`` of 48 runs, the first 30 are fitted and all 48 as the held-out reference:

    >>> from simstudy.commands import extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = extrapolate.parse({"data": "scores.csv", "c": 3, "sample_size": 30})
    >>> [(a.sample.runs, a.sample.total, a.sample.reference) for a in prepare({"mlp": ys}, opts, "scores.csv")]
    [(30, 48, False), (48, 48, True)]
    """
    sign = _sign(opts)  # minimize=true: fit -x (its concave law is the convex law of x), mirror back in run()
    opts = _analysed(opts, sign)
    samples = []
    for model, x in scores.items():
        x = sign * np.asarray(x, dtype=np.float64)
        m = opts.sample_size or x.size
        if m > x.size:
            raise BadSample(
                f"sample_size={m} exceeds the {x.size} scores of model {model} in {source}: give "
                f"sample_size <= {x.size}"
            )
        samples.append(Sample(model, x[:m], x.size, failed=_failed(x[:m], opts)))
        if m < x.size:
            samples.append(Sample(model, x, x.size, reference=True, failed=_failed(x, opts)))
    for s in samples:
        if opts.k_max is not None and opts.k_max < s.total:
            raise BadSample(
                f"k_max={opts.k_max} is below the {s.total} runs of model {s.model}: the extrapolation "
                f"starts there; give k_max >= {s.total} (or leave it out: 100 n)"
            )
        _tail_iv(s, opts, source, sign)
    constraints: dict[str, Any] = {"c": list(opts.c)} if opts.c else {}
    if opts.data.high is not None:  # an accuracy cannot exceed its top: neither can b, the best score possible
        constraints["b"] = (None, float(opts.data.high))
    out = []
    for s in samples:
        log.info("fitting %s: %d scores (%s)", s.model, s.runs, _describe_rule(opts))
        try:
            result = fit(s.scores, constraints=constraints, threshold=_rule(opts, s.failed, s.runs))
        except InvalidParameter as exc:
            raise BadSample(f"{source}: model {s.model}: {exc}") from None
        law = result.law
        # The digits EXTRAPOLATE.md and the summary give with the bootstrap intervals (b 5, a 4): six were more
        # than a point fit of tens of scores supports (b = 0.954179 beside its interval [0.898, 0.999]).
        # In the scores' own units: with minimize the law of -x, concave(a, b), is the convex law of x with a = -b
        # its best score, b = -a, and the tail below -threshold.
        best, best_value, other, other_value = ("a", -law.b, "b", -law.a) if sign < 0 else ("b", law.b, "a", law.a)
        log.info(
            "%s, %d runs: %s = %.5g, c = %d, o = %.3g, %s = %.4g (%d scores %s %.4g%s)",
            s.model,
            s.runs,
            best,
            best_value,
            law.c,
            law.o,
            other,
            other_value,
            result.n_tail,
            "below" if sign < 0 else "above",
            sign * result.threshold,
            "; noise-free fit" if result.hit_bound else "",
        )
        k_max = opts.k_max or 100 * s.runs
        # A reference fit (not bootstrapped) is judged against its nonparametric band at every integer k <= n.
        extra = np.arange(1, s.runs + 1) if s.reference else [s.total] if s.total > s.runs else []
        ks = budgets(s.runs, k_max, extra)
        key = {**_settings(opts), "model": s.model, "runs": s.runs, "scores": _digest(s.scores), "ks": ks.tolist()}
        if s.failed:  # the rule set failed runs aside: chunks of the rule before it are not these
            key["failed"] = s.failed
        cell = stable_hash(key)[:16]
        out.append(Analysis(s, result, cell, ks))
    return out


def bootstrap_task(cells: dict, seed: int, task: Task) -> dict:
    """One chunk of a cell's bootstrap (the runner's task function; ``cells`` maps a cell key to the fitted
    law, n, threshold rule, c values, warm start, budgets and mean flag)."""
    law, n, rule, cs, start, ks, mean, b_max = cells[task.cell]
    return bootstrap_chunk(law, n, rule, cs, start, ks, task.reps, task_seed(seed, task.cell, task.chunk), mean, b_max)


def _reps(store: chunks.ChunkStore, tasks: list[Task]) -> dict:
    parts = [store.read(t.cell, t.chunk, t.reps) for t in tasks]  # task order: the same for any n_jobs
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _no_reps(K: int) -> dict:
    """The replicates of a fit that is not bootstrapped: none (its intervals and bands are NaN)."""
    return {
        "a": np.zeros(0),
        "b": np.zeros(0),
        "c": np.zeros(0),
        "o": np.zeros(0),
        "ok": np.zeros(0, dtype=bool),
        "median": np.zeros((0, K)),
        "mean": np.zeros((0, K)),
    }


def run(analyses: list[Analysis], opts, out_dir: Path, *, progress: bool | None = None) -> Extrapolation:
    """Run (or resume) every analysis's bootstrap through the runner and reduce it to the tidy tables.

    The chunks are stored under ``out_dir/chunks`` (a rerun with the same settings resumes them); the
    tables are returned, not written (the CLI writes them).

    Parameters
    ----------
    analyses : list of Analysis
        From :func:`prepare`.
    opts : simstudy.commands.extrapolate.ExtrapolateConfig
        The validated options (``n_boot``, ``seed``, ``n_jobs``, ``level``, ``method``, ``mean`` ...).
    out_dir : str or pathlib.Path
        The run directory.
    progress : bool or None, optional, keyword-only
        Show a progress bar (None: when the output is a terminal); default None.

    Returns
    -------
    Extrapolation
        The curves, fits and simulation tables, and the runner's report.

    Raises
    ------
    simstudy.engine.chunks.RunDirConflict
        ``out_dir`` holds the chunks of other settings (another seed, threshold, data ...).
    ExtrapolationFailed
        A chunk raised in its worker.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.commands import extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> opts = extrapolate.parse(
    ...     {"data": "scores.csv", "c": 3, "k_max": 480, "n_boot": 2, "mean": False, "n_jobs": 1}
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(prepare({"mlp": ys}, opts, "scores.csv"), opts, tmp, progress=False)
    ...     again = run(prepare({"mlp": ys}, opts, "scores.csv"), opts, tmp, progress=False)  # resumes
    >>> result.report.computed, again.report.resumed, result.fits["n_boot"].tolist()
    (1, 1, [2])
    """
    sign = _sign(opts)
    user, opts = opts, _analysed(opts, sign)
    settings = _settings(opts)
    kernels = _identity.kernel_versions()  # only versions bumped past 1: stored chunks of before keep resuming
    fingerprint = stable_hash({**settings, "kernels": kernels} if kernels else settings)[:16]
    store = chunks.ChunkStore(Path(out_dir) / "chunks", fingerprint)
    store.claim(
        {
            **settings,
            "cells": {
                a.cell: {"model": a.sample.model, "runs": a.sample.runs, "scores": _digest(a.sample.scores)}
                for a in analyses
                if not a.sample.reference
            },
        }
    )
    booted = [a for a in analyses if not a.sample.reference]
    cells = {
        a.cell: (a.fit.law, a.sample.runs, a.fit.rule, a.fit.cs, a.fit.start, a.ks, opts.mean, a.fit.b_max)
        for a in booted
    }
    tasks_by_cell = {a.cell: chunk_tasks(a.cell, opts.n_boot, CHUNK) for a in booted}
    tasks = [t for ts in tasks_by_cell.values() for t in ts]
    report = run_tasks(
        functools.partial(bootstrap_task, cells, opts.seed),
        tasks,
        store,
        n_jobs=opts.n_jobs,
        progress=progress,
        description="bootstrap",
    )
    if report.failures:
        f = report.failures[0]
        raise ExtrapolationFailed(
            f"{len(report.failures)} of {report.tasks} bootstrap chunks failed; first: chunk "
            f"{f.where}: {f.error.splitlines()[0]}"
        )
    curves, fits, sims = [], [], []
    by_model: dict[str, list[Analysis]] = {}
    for a in analyses:
        by_model.setdefault(a.sample.model, []).append(a)
    for a in analyses:
        rep = _no_reps(a.ks.size) if a.sample.reference else _reps(store, tasks_by_cell[a.cell])
        full = by_model[a.sample.model][-1]  # the fit of every run (the same analysis when none is held out)
        low, high, assumed = _scale(user, sign * full.sample.scores)  # in the scores' own units
        with warnings.catch_warnings(record=True) as caught:  # the bands' ties warning: a log line, once
            warnings.simplefilter("always")
            curves.append(_curve_rows(a, rep, opts, full))
        for message in dict.fromkeys(str(w.message) for w in caught):
            log.warning("%s, %d runs: %s", a.sample.model, a.sample.runs, message)
        with warnings.catch_warnings():  # the same ties warning again, already logged above
            warnings.simplefilter("ignore")
            agreement = _agreement(a, opts, (low, high) if sign > 0 else (-high, -low))
        row = {**_fit_row(a, rep, opts), **agreement, "low": low, "high": high, "bounds_assumed": assumed}
        fits.append({**row, **_held_out(curves[-1], a)})
        if not a.sample.reference:
            sims.append(_simulation_rows(a, rep))
    result = Extrapolation(
        pd.concat(curves, ignore_index=True), pd.DataFrame(fits), pd.concat(sims, ignore_index=True), report
    )
    return result if sign > 0 else _mirrored(result, user)


def _flip(frame: pd.DataFrame, *columns: str, swap: tuple[tuple[str, str], ...] = ()) -> dict:
    """New columns of ``frame``: each of ``columns`` negated; each pair of ``swap`` (an interval) negated with
    its ends exchanged, ``[lo, hi] -> [-hi, -lo]``."""
    out = {c: -frame[c] for c in columns}
    for lo, hi in swap:
        out[lo], out[hi] = -frame[hi], -frame[lo]
    return out


def _mirrored(result: Extrapolation, opts) -> Extrapolation:
    """The results on ``-x`` back in the scores' own units (minimize=true). The curves are negated and their bands'
    ends exchanged; the law fitted to ``-x``, concave(a, b, c, o), is the convex law of x, convex(-b, -a, c, o),
    whose ``a`` is the best score possible (:mod:`simstudy.distributions.parametric`); the errors in simulation relative to the
    gain are unchanged (both negate)."""
    curves = result.curves.assign(
        **_flip(
            result.curves,
            "estimate",
            "np_point",
            "all_point",
            swap=(("lower", "upper"), ("np_lower", "np_upper")),
        )
    )
    f = result.fits
    fits = f.assign(
        a=-f["b"],
        b=-f["a"],
        a_lower=-f["b_upper"],
        a_upper=-f["b_lower"],
        b_lower=-f["a_upper"],
        b_upper=-f["a_lower"],
        threshold=-f["threshold"],
        rule=_rule(opts).describe(),
        max_score=-f["max_score"],
        **({"median_at_n": -f["median_at_n"]} if "median_at_n" in f else {}),
        median_at_n_lower=-f["median_at_n_upper"],
        median_at_n_upper=-f["median_at_n_lower"],
        convex=True,
    ).rename(columns={"max_score": "min_score"})
    simulation = result.simulation.assign(**_flip(result.simulation, "true", "gain"))
    return Extrapolation(curves, fits, simulation, result.report)


def _law_curves(law, ks: np.ndarray, mean: bool):
    med, avg = curves(
        np.array([law.a]), np.array([law.b]), np.array([law.c]), np.array([law.o]), law.convex, ks, mean=mean
    )
    return med[0], (avg[0] if mean else None)


def _band(x: np.ndarray, ok: np.ndarray, level: float) -> np.ndarray:
    alpha = (1.0 - level) / 2.0
    if not ok.any():
        return np.full((2, x.shape[1]), np.nan)
    return np.nanquantile(x[ok], [alpha, 1.0 - alpha], axis=0)


def _np_band(x: np.ndarray, ks: np.ndarray, opts):
    """The nonparametric median curve and its simultaneous band of scores ``x`` at ``ks`` (NaN beyond x.size)."""
    inside = ks <= x.size
    out = np.full((3, ks.size), np.nan)
    tc = bands.tuning_curve_bands(
        x, opts.level, "median", opts.method, ks=ks[inside], low=opts.data.low, high=opts.data.high
    )
    out[:, inside] = tc.point, tc.lower, tc.upper
    return out


def _curve_rows(a: Analysis, rep: dict, opts, full: Analysis) -> pd.DataFrame:
    s, ks, law = a.sample, a.ks, a.fit.law
    ok = rep["ok"].astype(bool)
    med, avg = _law_curves(law, ks, opts.mean)
    point, np_lo, np_hi = _np_band(s.scores, ks, opts)
    low, high = opts.data.low, opts.data.high
    region = np.where(ks <= s.runs, "observed", np.where(ks <= s.total, "held-out", "beyond"))
    frames = []
    for curve, est, reps in (("median", med, rep["median"]), ("mean", avg, rep["mean"])):
        if est is None:
            continue
        band = _band(reps, ok, opts.level)
        frame = pd.DataFrame(
            {
                "model": s.model,
                "runs": s.runs,
                "k": ks,
                "region": region,
                "curve": curve,
                "estimate": est,
                "lower": band[0],
                "upper": band[1],
            }
        )
        if curve == "median":
            nontrivial = np.isfinite(np_lo) & np.isfinite(np_hi) & (np_lo > low) & (np_hi < high)
            frame["np_point"], frame["np_lower"], frame["np_upper"] = point, np_lo, np_hi
            # 1 where the fitted curve lies inside the nonparametric band (0 outside; NaN where that band is trivial)
            frame["inside_np"] = np.where(nontrivial, ((np_lo <= est) & (est <= np_hi)).astype(float), np.nan)
            frame["band_inside_np"] = np.where(
                nontrivial, ((np_lo <= band[0]) & (band[1] <= np_hi)).astype(float), np.nan
            )
            if s.total > s.runs:  # the held-out check: the median curve of every run, and whether the band covers it
                all_point = _np_band(full.sample.scores, ks, opts)[0]
                frame["all_point"] = all_point
                frame["covers_all"] = np.where(
                    np.isfinite(all_point), ((band[0] <= all_point) & (all_point <= band[1])).astype(float), np.nan
                )
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    for col in ("np_point", "np_lower", "np_upper", "inside_np", "band_inside_np", "all_point", "covers_all"):
        if col not in out:
            out[col] = np.nan
    out["level"], out["method"] = opts.level, opts.method
    return out


def _fit_row(a: Analysis, rep: dict, opts) -> dict:
    f, law = a.fit, a.fit.law
    ok = rep["ok"].astype(bool)
    alpha = (1.0 - opts.level) / 2.0

    def interval(x):
        return np.nanquantile(x[ok], [alpha, 1.0 - alpha]) if ok.any() else (np.nan, np.nan)

    row = {
        "model": a.sample.model,
        "runs": a.sample.runs,
        "total_runs": a.sample.total,
        "threshold": f.threshold,
        "rule": f.rule.describe(),
        "n_tail": f.n_tail,
        "hit_bound": f.hit_bound,
        "converged": f.converged,
        "a": law.a,
        "b": law.b,
        "c": law.c,
        "o": law.o,
        "max_score": float(a.sample.scores.max()),
        "failed_runs": a.sample.failed,
        **_tail_fit(a, opts.level),
    }
    for name in ("a", "b", "o"):
        row[f"{name}_lower"], row[f"{name}_upper"] = interval(rep[name])
    # The band of the law's median best of n runs, against the best of the n runs observed: a law whose band at
    # k = n lies wholly above that best predicts more than the data's own search gave (a failed check).
    at_n = int(np.searchsorted(a.ks, a.sample.runs))
    row["median_at_n_lower"], row["median_at_n_upper"] = interval(rep["median"][:, at_n])
    row["overshoots"] = bool(row["median_at_n_lower"] > row["max_score"])
    for c in f.cs:
        row[f"c_share_{c}"] = float(np.mean(rep["c"][ok] == c)) if ok.any() else np.nan
    row.update(level=opts.level, n_boot=int(ok.size), failed=float(1.0 - ok.mean()) if ok.size else np.nan)
    return row


def _tail_fit(a: Analysis, level: float) -> dict:
    """How well the law fits the tail it was fitted to: the Kolmogorov-Smirnov distance between the scores above
    the threshold and the law conditioned to lie above it (``tail_ks``), beside the distance a sample of the
    law itself exceeds with probability ``1 - level`` (DKW, ``tail_ks_critical``). The law's parameters were
    fitted to these scores, which pulls the distance down: a distance past the critical one is a misfit, one
    below it only the absence of a gross one.

    Scores recorded to a resolution (an accuracy on 9,815 examples moves in steps of about 1e-4) repeat: a value
    seen r times stands for draws anywhere within half a step of it, so the eCDF's jump there is set against the
    law's mass over that step (the law's CDF half a step below and above), not at one point, where r ties would
    read as a misfit of r / m. The step is the smallest gap between the sample's distinct scores (continuous
    scores: a negligible one)."""
    law, t = a.fit.law, a.fit.threshold
    scores = np.sort(a.sample.scores)
    tail = scores[scores > t]
    m = tail.size
    if not m:
        return {"tail_ks": np.nan, "tail_ks_critical": np.nan}
    gaps = np.diff(np.unique(scores))
    half = 0.5 * float(gaps.min()) if gaps.size else 0.0
    above = float(law.sf(t)) if np.isfinite(t) else 1.0

    def g(y):  # the law's CDF conditioned to lie above the threshold
        return 1.0 - np.asarray(law.sf(y), dtype=np.float64) / above if above > 0 else np.ones_like(y)

    values, counts = np.unique(tail, return_counts=True)
    upto = np.cumsum(counts) / m  # the eCDF at each distinct value, and just below it
    d = float(max(np.max(upto - g(values + half)), np.max(g(values - half) - (upto - counts / m))))
    return {"tail_ks": d, "tail_ks_critical": float(np.sqrt(np.log(2.0 / (1.0 - level)) / (2.0 * m)))}


def _held_out(frame: pd.DataFrame, a: Analysis) -> dict:
    """The held-out check in numbers (fit.csv's columns): at how many budgets k = n..N the band extrapolated
    from the first n runs covers the median tuning curve of all N runs (``held_out_covered`` of
    ``held_out_checked``), and the first budget it misses (NaN: none; every column NaN without held-out runs)."""
    n = a.sample.runs
    med = frame[frame["curve"] == "median"]
    if a.sample.reference or a.sample.total <= n:
        return {"held_out_checked": np.nan, "held_out_covered": np.nan, "held_out_first_miss": np.nan}
    held = med[((med["region"] == "held-out") | ((med["region"] == "observed") & (med["k"] >= n)))]
    held = held[np.isfinite(held["covers_all"])]
    miss = held.loc[held["covers_all"] == 0, "k"]
    return {
        "held_out_checked": float(len(held)),
        "held_out_covered": float(held["covers_all"].sum()),
        "held_out_first_miss": float(miss.iloc[0]) if len(miss) else np.nan,
    }


def _agreement(a: Analysis, opts, bounds: tuple[float, float]) -> dict:
    """Whether the fitted law describes the scores it was fitted to: fit.csv's columns for EXTRAPOLATE.md's checks.

    - ``np_first_checked``, ``np_checked``, ``np_outside``, ``np_first_outside``: at every k from
      ``np_first_checked`` to n, how often the law's median curve leaves the nonparametric simultaneous band (a
      band trivial above still checks from below), and where first (NaN: nowhere). The check starts at the
      first k whose median best score lies above the threshold, ``k >= ln 0.5 / ln(censored share)`` (k = 1 for
      the default median threshold): below it the median curve lies among the censored scores, which the law
      is not fitted to, so a law right about the tail is not faulted for them. ``np_upper_trivial_from``: the
      first k where that band's upper side is the bound;
    - ``median_at_n`` and ``p_best_at_most_observed``: the law's median curve at k = n, and the law's
      probability that the best of n runs scores at most the observed best, ``F(max)^n`` (near 0: the law
      promises more than n runs gave; near 1: less);
    - ``c_min``, ``c_max``: the values of c searched (a fitted c at the top of them may want more);
    - ``beyond_scale``: the law's worst end (a; b for a convex law) lies beyond the scale's bound (below
      ``low``; above ``high``; ``bounds``, those of the analysed scores, assumed [0, 1] for accuracies), where no
      score can: the basin extended from the tail is implausible.
    """
    s, law = a.sample, a.fit.law
    high = opts.data.high  # the nonparametric band's top (as given), where it turns trivial
    censored = 1.0 - a.fit.n_tail / s.runs
    # the median of the best of k lies above the threshold once censored^k <= 1/2 (the 1e-9: k = 1 at exactly 1/2)
    first = 1 if censored <= 0.5 else min(s.runs, int(np.ceil(np.log(0.5) / np.log(censored) - 1e-9)))
    ks = np.arange(1, s.runs + 1, dtype=np.float64)
    est = _law_curves(law, ks, False)[0]
    _, np_lo, np_hi = _np_band(s.scores, ks, opts)
    outside = ((est < np_lo) | (est > np_hi)) & (ks >= first)
    trivial = ~(np_hi < high)
    # The chance that the best of n runs is no better than the observed best (minimizing: no lower).
    p_best = law.sf(s.scores.min()) if law.convex else law.cdf(s.scores.max())
    beyond = (law.b > bounds[1]) if law.convex else (law.a < bounds[0])
    return {
        "np_first_checked": int(first),
        "np_checked": int(ks.size - first + 1),
        "np_outside": int(outside.sum()),
        "np_first_outside": float(ks[outside][0]) if outside.any() else np.nan,
        "np_upper_trivial_from": float(ks[trivial][0]) if trivial.any() else np.nan,
        "median_at_n": float(est[-1]),
        "p_best_at_most_observed": float(np.clip(p_best, 0.0, 1.0) ** s.runs),
        "c_min": int(min(a.fit.cs)),
        "c_max": int(max(a.fit.cs)),
        "beyond_scale": bool(beyond),
    }


def _simulation_rows(a: Analysis, rep: dict) -> pd.DataFrame:
    """The error of the replicates' median curves against the fitted law's at k = n, 2n, 5n, 10n, 100n."""
    n, ks, law = a.sample.runs, a.ks, a.fit.law
    ok = rep["ok"].astype(bool)
    multiples = [m for m in MULTIPLES if m * n <= ks[-1]]
    at = np.array([m * n for m in multiples], dtype=np.float64)
    idx = np.searchsorted(ks, at)
    true = _law_curves(law, at, False)[0]
    first = float(_law_curves(law, np.array([1.0]), False)[0][0])  # a single run's median score
    pred = rep["median"][ok][:, idx]
    gain = true - first
    rel = (pred - true) / gain
    R = int(ok.sum())
    sd = lambda x: x.std(axis=0, ddof=1) / np.sqrt(R) if R > 1 else np.full(x.shape[1], np.nan)  # noqa: E731
    absr = np.abs(rel)
    return pd.DataFrame(
        {
            "model": a.sample.model,
            "runs": n,
            "multiple": multiples,
            "k": at,
            "true": true,
            "gain": gain,
            "mean_abs_rel_error": absr.mean(axis=0),
            "mean_abs_rel_error_mcse": sd(absr),
            "bias_rel": rel.mean(axis=0),
            "bias_rel_mcse": sd(rel),
            "p90_abs_rel_error": np.quantile(absr, 0.9, axis=0) if R else np.nan,
            "mean_abs_error": np.abs(pred - true).mean(axis=0),
            "replicates": R,
        }
    )
