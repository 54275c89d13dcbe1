"""Coverage of simultaneous confidence bands in simulation (Lourie et al. §5.2, Figures 5 and 11).

Each cell is one continuous score distribution with a known CDF (typically a reflected KDE fitted to real
tuning results). Each round draws ``study.sample_size`` scores, builds every band at every nominal level,
and records whether it covers the truth. Three checks, reported separately:

- ``cdf``: the CDF band contains F everywhere (including the upper band below the first score):
  ``l_i <= F(Y_(i))`` and ``F(Y_(i)-) <= u_i``, which differ only for a distribution with atoms;
- ``curve``: the quantile tuning-curve band contains the true curve ``F^-1(q^(1/k))`` for *every* real k > 0,
  checked exactly at the band's jump points (between them the band is flat and the curve rises). By
  Lourie et al.'s Prop. 1 this is the same event as ``cdf``; here it is computed independently, from the
  quantile function rather than the CDF;
- ``curve_integer_k``: the band contains the curve at k = 1..n only -- a weaker event that covers more
  often than nominal (which is why it must not be mistaken for the guarantee).

The built-in bands' bounds on ``F(Y_(i))`` do not depend on the data, so every check reduces to comparisons
of the sorted sample (or its CDF values) with vectors precomputed once, vectorized over rounds. A plug-in
band method (the contract is in :mod:`simstudy.stats.bands`) is called once per chunk and level on all the chunk's
samples; its bounds, one row per sample, give the same checks row by row, still vectorized over rounds (a
plug-in returning one row for every sample gets the precomputed path, per chunk). Coverage is a proportion:
reported with a Clopper-Pearson interval at ``study.ci_level``.

Zip plot. Each round also keeps the position of the truth relative to each band (chunk arrays ``zip_position``,
``zip_side``, (methods, levels, rounds)): the largest over the order statistics i of
``max(l_i - F(Y_(i)), F(Y_(i)-) - u_i) / h_i``, h_i = (u_i - l_i) / 2 the band's half-width there on the
probability scale -- the worst violation of the true CDF outside the band in half-widths, <= 0 exactly when
the ``cdf`` check (hence, by Prop. 1, the ``curve`` check) covers. ``zip.parquet`` holds them, per distribution
and method at the level nearest 95%, and ``zip.png`` ranks them (:func:`simstudy.studies.zip_plots.zip_figure`;
Morris, White & Crowther 2019). A run directory whose chunks predate these arrays resumes without a zip plot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import plugins, schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import describe, sample_sorted
from simstudy.engine.runner import Task, task_seed
from simstudy.plugins import band_method_check
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import option
from simstudy.stats import bands, truth
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import base, zip_plots
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "CHECKS", "Options", "headline", "STUDY", "band_coverage_figure"]

_SCHEME = "band_coverage/1"
CHECKS = ("cdf", "curve", "curve_integer_k")
#: The zip plot (``zip.png``) shows, per distribution and method, the level of ``study.levels`` nearest this.
_ZIP_LEVEL = 0.95


@dataclass(frozen=True)
class _Checks:
    """The pieces of the checks for one (distribution, method, level), over i = 1..n: shape (n,) for bounds that
    do not depend on the data, (reps, n) for one row of bounds per sample."""

    low: np.ndarray  # l_i <= F(Y_(i))
    high: np.ndarray  # F(Y_(i)-) <= u_i
    # Where the upper curve band has a step valued Y_(i): F^-1(l_i), which needs to be <= Y_(i) (-inf elsewhere);
    # where the lower one has: F^-1(u_i), which needs to be >= Y_(i) (+inf elsewhere).
    upper_need: np.ndarray
    lower_need: np.ndarray
    k_upper: np.ndarray  # index into (low, Y_(1..n), high) of the upper band at k = 1..n
    k_lower: np.ndarray
    k_truth: np.ndarray  # (n,) true curve at k = 1..n


@dataclass(frozen=True)
class _Cell:
    key: str
    distribution: str
    checks: dict  # (built-in method, level) -> _Checks


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict
    n: int
    methods: tuple
    levels: tuple
    quantile: float
    # plug-in method -> plugins.PluginBand (pickled by import path)
    plugins: dict[str, Callable[[np.ndarray, float], tuple[np.ndarray, np.ndarray]]]


# Per-sample bounds: a comparison of F^-1(bound) with Y_(i) is decided by the CDF, F(Y_(i)) against the bound,
# unless they are closer than this; only those near-ties need the quantile function.
_TIE = 1e-6


def _need(dist, bound: np.ndarray, steps: np.ndarray, other: float, margin: np.ndarray | None) -> np.ndarray:
    """``F^-1(bound)`` where ``steps``, ``other`` elsewhere (a comparison that always holds).

    For bounds with one row per sample, ``margin`` says by how much the comparison holds on the CDF scale
    (``F(Y_(i)) - l_i`` for the upper band, ``u_i - F(Y_(i)-)`` for the lower): for a CDF F,
    ``F^-1(l) <= y`` exactly when ``l <= F(y)``, and ``F^-1(u) >= y`` when ``u > F(y-)``. Where the margin is
    clear, the comparison is settled without the quantile function (``other`` where it holds, ``-other``
    where it fails), which costs a root-finding per score for a KDE; at the rare near-ties F^-1 decides,
    as on the precomputed path.
    """
    if bound.ndim == 1:  # the precomputed path: the quantile function at every i, as it always was
        return np.where(steps, dist.ppf(np.clip(bound, 0, 1)), other)
    assert margin is not None  # bounds with one row per sample come with their margins
    need = np.where(steps & (margin <= _TIE), -other, other)
    tie = steps & (np.abs(margin) <= _TIE)
    need[tie] = dist.ppf(np.clip(bound[tie], 0, 1))
    return need


def prepare(
    dist, lo_i: np.ndarray, hi_i: np.ndarray, q: float, F: np.ndarray | None = None, F_left: np.ndarray | None = None
) -> _Checks:
    """The checks of bounds ``lo_i``, ``hi_i``: both (n,), or both (reps, n) for one row per sample (then with
    the samples' CDF values ``F`` and ``F_left``, (reps, n))."""
    n = lo_i.shape[-1]
    edge = lambda value: np.full((*lo_i.shape[:-1], 1), value)  # noqa: E731 -- a column of one value
    # The upper curve band is min{z_j : q <= L_j^k} over z = (low, Y_(1..n), high), L = (0, l, 1).
    thr_l = bands.quantile_thresholds(np.concatenate((edge(0.0), lo_i, edge(1.0)), axis=-1), q)
    upper_steps = thr_l[..., 1:-1] > thr_l[..., :-2]  # steps of positive length valued Y_(i)
    # The lower band uses U = (u_1, u_2..u_n, 1) at (low, Y_(1..n), high).
    ucdf = np.concatenate((hi_i, edge(1.0)), axis=-1)
    thr_u = bands.quantile_thresholds(ucdf, q)
    lower_steps = thr_u[..., 1:] > thr_u[..., :-1]  # step valued Y_(i) starts where the previous ends: thr_u[i-1]
    ks = np.arange(1, n + 1, dtype=np.float64)
    per_sample = lo_i.ndim == 2
    return _Checks(
        low=lo_i,
        high=hi_i,
        upper_need=_need(dist, lo_i, upper_steps, -np.inf, F - lo_i if per_sample else None),
        lower_need=_need(dist, hi_i, lower_steps, np.inf, hi_i - F_left if per_sample else None),
        k_upper=np.minimum(bands.searchsorted_rows(thr_l, ks), n + 1),
        k_lower=np.minimum(bands.searchsorted_rows(thr_u, ks), n + 1),
        k_truth=truth.quantile_tuning_curve(dist, ks, q),  # a closed form where the law has one
    )


def _gather(z: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``z[r, index[r, j]]`` (or ``z[r, index[j]]`` for one index row shared by every sample)."""
    return z[:, index] if index.ndim == 1 else np.take_along_axis(z, index, axis=1)


def hit_counts(c: _Checks, y: np.ndarray, z: np.ndarray, F: np.ndarray, F_left: np.ndarray) -> list[int]:
    """How many samples (rows) each check covers: cdf, curve, curve_integer_k."""
    cdf = np.all((F >= c.low) & (F_left <= c.high), axis=1)
    curve = np.all(c.upper_need <= y, axis=1) & np.all(c.lower_need >= y, axis=1)
    on_grid = (_gather(z, c.k_lower) <= c.k_truth) & (c.k_truth <= _gather(z, c.k_upper))
    return [int(np.sum(cdf)), int(np.sum(curve)), int(np.sum(np.all(on_grid, axis=1)))]


def _position(c: _Checks, F: np.ndarray, F_left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sample's zip-plot position for the ``cdf`` check, and its side, both (reps,).

    At each order statistic the band [l_i, u_i] is an interval for F(Y_(i)); the position is the largest over i
    of ``max(l_i - F(Y_(i)), F(Y_(i)-) - u_i) / h_i`` (h_i = (u_i - l_i) / 2, the half-width there): <= 0
    exactly when the ``cdf`` check covers (each difference's sign is exact), else the worst violation in
    half-widths. Side: +1 where the worst point has the band above the truth (its lower bound the binding one).
    """
    above, below = c.low - F, F_left - c.high  # (reps, n)
    gap = np.maximum(above, below)
    half = np.maximum((c.high - c.low) / 2.0, np.finfo(np.float64).tiny)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = gap / half
    if not np.all(np.isfinite(half)):  # an infinite bound (a plug-in's): the sign of the difference
        scaled = np.where(np.isfinite(half), scaled, np.sign(gap))
    worst = np.argmax(scaled, axis=1)
    rows = np.arange(scaled.shape[0])
    side = np.where(above[rows, worst] >= below[rows, worst], 1, -1).astype(np.int8)
    return scaled[rows, worst], side


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.distributions[cell.distribution]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    y = sample_sorted(dist, task.reps, work.n, rng=rng)  # (reps, n)
    F = dist.cdf(y)
    # The upper bound holds just left of each score: F(Y_(i)-) <= u_i (the same as F(Y_(i)) without atoms).
    F_left = dist.cdf_left(y) if getattr(dist, "has_atoms", False) else F
    lo, hi = dist.support
    z = np.concatenate([np.full((task.reps, 1), lo), y, np.full((task.reps, 1), hi)], axis=1)
    hits = np.zeros((len(CHECKS), len(work.methods), len(work.levels)), dtype=np.int64)
    position = np.zeros((len(work.methods), len(work.levels), task.reps))
    side = np.zeros((len(work.methods), len(work.levels), task.reps), dtype=np.int8)
    for m, method in enumerate(work.methods):
        band = work.plugins.get(method)
        for v, level in enumerate(work.levels):
            if band is None:
                c = cell.checks[(method, level)]
            else:  # one call for every sample of the chunk
                c = prepare(dist, *band(y, level), work.quantile, F, F_left)
            hits[:, m, v] = hit_counts(c, y, z, F, F_left)
            position[m, v], side[m, v] = _position(c, F, F_left)
    return {"hits": hits, zip_plots.POSITION: position, zip_plots.SIDE: side}


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the band-coverage study for every distribution of ``config``.

    For each distribution (one cell each), ``study.reps`` rounds draw ``study.sample_size`` scores, build
    every band method of ``study.methods`` at every level of ``study.levels`` and record, for each check of
    :data:`CHECKS`, whether the band covers the truth. This reproduces Lourie et al. (2024), §5.2, Figures 5
    and 11 (preset ``lourie_fig5_exact_coverage``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"band_coverage"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). Its distributions must be continuous (kinds of
        :data:`simstudy.distributions.CONTINUOUS_KINDS`; checked when the config is parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (cell, check, method, nominal level) with columns ``cell``, ``distribution``, ``method``, ``nominal``,
        ``check`` (one of :data:`CHECKS`), ``n``, ``estimate`` (the empirical coverage, a proportion in
        [0, 1]), ``mcse``, ``ci_low``, ``ci_high`` (Clopper-Pearson at ``study.ci_level``) and ``reps``;
        ``report``, ``files`` (``summary_parquet``, ``summary_csv``, ``run``) and ``kind``.

    Raises
    ------
    ValueError
        If a distribution is discrete (exact coverage needs a continuous one).
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    80% bands from 10 scores of a quadratic law, 200 rounds:

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "quadratic", "a": 0.5, "b": 0.9, "c": 2},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "band_coverage", "reps": 200, "chunk_reps": 200, "sample_size": 10,
    ...               "levels": [0.8], "methods": ["ld_highest_density", "dkw"]},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> print(result.summary[["method", "check", "estimate", "ci_low", "ci_high"]].round(3).to_string(index=False))
                method           check  estimate  ci_low  ci_high
    ld_highest_density             cdf     0.790   0.707    0.859
                   dkw             cdf     0.850   0.774    0.909
    ld_highest_density           curve     0.790   0.707    0.859
                   dkw           curve     0.850   0.774    0.909
    ld_highest_density curve_integer_k     0.905   0.839    0.951
                   dkw curve_integer_k     0.945   0.889    0.978

    The LD band's coverage is consistent with the nominal 0.8 (inside the 99% interval); DKW, a conservative
    band, covers more often, and checking integer budgets only (``curve_integer_k``) covers more often still.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    n, methods, levels = opts.sample_size, tuple(opts.methods), tuple(opts.levels)
    q, ci_level = opts.quantile, opts.ci_level
    dists = {d.name: d.build() for d in config.distributions}
    for name, dist in dists.items():
        if dist.is_discrete:
            raise ValueError(f"distribution {name} is discrete: exact coverage needs a continuous distribution")

    t0 = time.perf_counter()
    band = {m: plugins.band_method(m) for m in methods}
    builtin = [m for m in methods if isinstance(band[m], plugins.BuiltinBand)]
    cells = {}
    for spec in config.distributions:
        key = base.cell_key(distribution=spec.key, n=n)
        cells[key] = _Cell(
            key,
            spec.name,
            {(m, v): prepare(dists[spec.name], *band[m].bounds(n, v), q) for m in builtin for v in levels},  # type: ignore[union-attr, call-arg]  # builtin: BuiltinBand methods only
        )
    prepare_seconds = time.perf_counter() - t0

    work = _Work(config.seed, dists, cells, n, methods, levels, q, {m: b for m, b in band.items() if m not in builtin})
    plugin_sources = plugins.band_fingerprint(methods)  # empty for built-ins: their fingerprint is unchanged
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={
            "n": n,
            "methods": methods,
            "levels": levels,
            "quantile": q,
            **({"band_plugins": plugin_sources} if plugin_sources else {}),
        },
        stage=stage,
    )
    rows, zips, complete = [], [], True
    shown = int(np.argmin([abs(v - _ZIP_LEVEL) - 1e-9 * v for v in levels]))  # the level nearest 95% (higher on ties)
    for key, cell in run_.succeeded(cells).items():
        hits = run_.total(key, "hits")
        reps = run_.reps(key)  # study.reps, or the cell's own under study.precision
        stored = zip_plots.positions(run_, key, (slice(None), shown))  # (methods, rounds) at the level shown
        complete &= stored is not None
        for m, method in enumerate(methods if stored is not None else ()):
            zips.append(
                zip_plots.panel(
                    f"{cell.distribution}, {bands.METHOD_LABELS.get(method, method)}, {levels[shown]:g}",
                    stored[0][m],  # type: ignore[index]  # not None in this loop
                    stored[1][m],  # type: ignore[index]
                    nominal=levels[shown],
                    ci_level=ci_level,
                    cell=key,
                    distribution=cell.distribution,
                    method=method,
                )
            )
        low, high = clopper_pearson(hits, reps, ci_level)
        for c, check in enumerate(CHECKS):
            for m, method in enumerate(methods):
                for v, level in enumerate(levels):
                    p = hits[c, m, v] / reps
                    rows.append(
                        dict(
                            cell=key,
                            distribution=cell.distribution,
                            method=method,
                            nominal=level,
                            check=check,
                            n=n,
                            estimate=p,
                            mcse=float(np.sqrt(p * (1 - p) / reps)),
                            ci_low=float(low[c, m, v]),
                            ci_high=float(high[c, m, v]),
                            reps=reps,
                        )
                    )
    summary = pd.DataFrame(rows)
    metadata = {
        "sample_size": n,
        "quantile": q,
        "ci_level": ci_level,
        "distributions": {name: describe(d) for name, d in dists.items()},
        "timings": {"prepare_seconds": prepare_seconds},
    }
    files = zip_plots.write(out_dir, zips, complete)
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata, files=files)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a band_coverage study, the keys ``study.*`` of its config.

    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> opts = schema.parse(Options, {"levels": [0.9, 0.5], "methods": ["ks", "dkw"]}, "study.")
    >>> opts.levels, opts.methods, opts.sample_size
    ((0.5, 0.9), ('ks', 'dkw'), 48)
    >>> schema.parse(Options, {"quantile": 1}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.quantile must be a number strictly between 0 and 1, got 1
    """

    reps: int = reps_option(1024)
    chunk_reps: int = chunk_reps_option(1024)
    sample_size: int = option(48, "scores per round (n)", schema.integer(minimum=2))
    levels: tuple[float, ...] = option(
        (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99),
        "the nominal simultaneous coverages to check",
        schema.listed(schema.level(), what="at least one level"),
    )
    methods: tuple[str, ...] = option(
        ("ld_highest_density",),
        "the CDF band methods (dkw, ks, ld_equal_tailed, ld_highest_density, or a plug-in band's import path)",
        schema.listed(band_method_check(), what="at least one method", sort=False),
    )
    quantile: float = option(0.5, "the tuning curve's quantile q (0.5: the median tuning curve)", schema.level())
    ci_level: float = option(0.99, "the level of the Clopper-Pearson intervals of the coverage", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Empirical coverage against nominal, and how often the nominal lies outside the CP interval.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``distribution``, ``method``, ``nominal``, ``check``, ``estimate``,
        ``ci_low``, ``ci_high``).

    Returns
    -------
    str
        A table of the empirical coverage (rows: nominal level; columns: distribution, method and check,
        ``cdf`` left out as it equals ``curve``), rounded to 3 decimals, then per method the number of
        nominal levels outside the ``curve`` check's Clopper-Pearson interval.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "distribution": "kde", "method": "ks", "nominal": [0.8, 0.9], "check": "curve",
    ...     "estimate": [0.79, 0.95], "ci_low": [0.76, 0.93], "ci_high": [0.82, 0.97]})
    >>> print(headline(summary))
    empirical coverage (rows: nominal)
    distribution   kde
    method          ks
    check        curve
    nominal
    0.8           0.79
    0.9           0.95
    ks: nominal level outside the CP interval in 1 of 2 cases (exact bands: about 1%; DKW is conservative)
    """
    s = summary[summary["check"] != "cdf"]
    table = s.pivot_table(index="nominal", columns=["distribution", "method", "check"], values="estimate")
    lines = [f"empirical coverage (rows: nominal)\n{table.round(3).to_string()}"]
    curve = s[s["check"] == "curve"]
    outside = (curve["ci_low"] > curve["nominal"]) | (curve["ci_high"] < curve["nominal"])
    for method, miss in outside.groupby(curve["method"]).sum().items():
        lines.append(
            f"{method}: nominal level outside the CP interval in {miss} of "
            f"{int((curve['method'] == method).sum())} cases (exact bands: about 1%; DKW is conservative)"
        )
    return "\n".join(lines)


def band_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Nominal vs empirical coverage of the simultaneous bands, a panel per distribution (Lourie et al. 2024, Fig. 5).

    Lourie et al.'s Figures 5 and 11. Filled markers: how often the tuning-curve band covers the true curve for
    every real k, with Clopper-Pearson error bars; open markers: how often it covers it at integer k only, a weaker
    event that over-covers. Exact bands lie on the dashed line y = x. Methods at one nominal level are drawn a
    little apart so that their error bars do not overlap. Rows of the ``cdf`` check are not drawn.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_coverage`` study (:mod:`simstudy.studies.band_coverage`), one row per
        distribution, method, check and nominal level: columns ``distribution``, ``method`` (a band method,
        e.g. ``"ld_highest_density"``; named by :data:`simstudy.stats.bands.METHOD_LABELS`), ``check``
        (``"curve"`` and ``"curve_integer_k"`` are drawn), ``nominal`` (the bands' confidence, in (0, 1)),
        ``estimate`` (the empirical coverage, a probability in [0, 1]), ``ci_low`` and ``ci_high`` (its
        Clopper-Pearson interval, used for ``"curve"``), ``n`` (scores per round) and ``reps`` (rounds).
        Other columns (``cell``, ``mcse``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one naming the bands and the error bars.

    Returns
    -------
    matplotlib.figure.Figure
        One row of panels, one per distribution (sharing the y axis; both axes in [0, 1.02]), each titled
        with the distribution, n and the rounds; the legend below them.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [(check, q, q + 0.01) for check in ("curve", "curve_integer_k") for q in (0.5, 0.8, 0.95)]
    >>> summary = pd.DataFrame(rows, columns=["check", "nominal", "estimate"])
    >>> summary = summary.assign(
    ...     distribution="uniform", method="ld_highest_density", n=48, reps=1000,
    ...     ci_low=summary.estimate - 0.03, ci_high=summary.estimate + 0.03,
    ... )
    >>> fig = band_coverage_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[0].get_xlabel()
    (1, 'uniform (n = 48, 1,000 rounds)', 'nominal coverage')
    >>> plt.close(fig)
    """
    from simstudy.chart_style import axes_title, colorblind, labels, legend, suptitle, theme
    from simstudy.figures import method_label

    plt = theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, colorblind(len(methods))))
    fig, axes = plt.subplots(
        1, len(dists), figsize=(max(3.6 * len(dists), 5.0), 4.2), squeeze=False, sharey=True, layout="constrained"
    )
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="nominal = empirical (exact)")
        for j, method in enumerate(methods):
            shift = (j - (len(methods) - 1) / 2) * 0.006  # keep overlapping error bars apart
            for check, marker, fill in (("curve", "o", palette[method]), ("curve_integer_k", "o", "none")):
                r = s[(s["method"] == method) & (s["check"] == check)].sort_values("nominal")
                if r.empty:
                    continue
                yerr = [r["estimate"] - r["ci_low"], r["ci_high"] - r["estimate"]] if check == "curve" else None
                ax.errorbar(
                    r["nominal"] + shift,
                    r["estimate"],
                    yerr=yerr,
                    fmt=marker,
                    ms=3.5,
                    color=palette[method],
                    mfc=fill,
                    lw=1,
                    capsize=1.5,
                    label=method_label(method)
                    + (" (every real k; bars: Clopper–Pearson)" if check == "curve" else ", integer k only"),
                )
        axes_title(ax, f"{dist} (n = {int(s['n'].iloc[0])}, {int(s['reps'].iloc[0]):,} rounds)", fontsize=8)
        labels(ax, xlabel="nominal coverage")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
    labels(axes[0, 0], ylabel="empirical coverage")
    legend(fig, axes[0, -1], fontsize=7, loc="outside lower center", ncols=2)
    suptitle(fig, title or "Simultaneous coverage of the median tuning-curve bands (error bars: Clopper–Pearson)")
    return fig


STUDY = register_study(
    Study(
        kind="band_coverage",
        options=Options,
        run=run,
        figure=band_coverage_figure,
        headline=headline,
        sweep=Headline({"check": "curve"}, "nominal", "method", "empirical coverage", role="coverage"),
        continuous=True,
    )
)
