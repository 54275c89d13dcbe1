"""Ablations of the tuning-curve bands: CDF band method, interval shape, median vs mean (Lourie et al. §5.3-5.4).

For each distribution, sample size n and band method, rounds of n simulated scores give the average lower
and upper band and the average width at each budget k, with MCSEs, beside the true curve -- the quantities
Figures 6-8 and 12-15 of Lourie et al. show for single samples -- and, exactly, the budget beyond which the
upper median band is trivial (:func:`~simstudy.stats.bands.trivial_budget`).

Everything data-independent is precomputed: the CDF bands' bounds at the order statistics, hence which
order statistic each median band takes at each k, and the probability each mean band puts on each order
statistic at each k. A round's bands are then gathers and one matrix product, vectorized over rounds.

A plug-in band method (the contract is in :mod:`simstudy.stats.bands`) is called once per chunk on all the chunk's
samples. Bounds with one row per sample give each sample's median bands by gathers and its mean bands by a
product per sample (batched, no loop over rounds); bounds with one row for every sample take the
precomputed path (per chunk). The budget where the upper median band becomes trivial, exact for a built-in
method, is for a plug-in the average over rounds of each sample's budget, with its MCSE.
"""

from __future__ import annotations

import time
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
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "Options", "headline", "STUDY", "band_width_figure"]

_SCHEME = "band_width/1"
_CURVES = ("lower", "point", "upper", "width")


@dataclass(frozen=True)
class _Plan:
    """For one (n, method, kind): how each curve at k = 1..K is formed from z = (low, Y_(1..n), high)."""

    index: dict  # median: curve -> (K,) indices into z
    mass: dict  # mean: curve -> (n + 2, K) probability of each point at each k


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict  # key -> (distribution name, n)
    plans: dict  # (n, built-in method, kind) -> _Plan; (n, "point", kind) -> the point curve's _Plan
    methods: tuple
    kinds: tuple
    ks: np.ndarray
    supports: dict  # distribution name -> (low, high), the ends the bands reach (may be infinite)
    confidence: float
    plugins: dict  # plug-in method -> plugins.PluginBand (pickled by import path)


def _cdfs(lo_i: np.ndarray, hi_i: np.ndarray) -> dict:
    """The CDFs over z = (low, Y_(1..n), high) whose tuning curves are the bands: each (n + 2,), or (reps, n + 2)
    for bounds with one row per sample."""
    edge = lambda value, width=1: np.full((*lo_i.shape[:-1], width), value)  # noqa: E731 -- constant columns
    return {
        "lower": np.concatenate((hi_i, edge(1.0, 2)), axis=-1),  # the upper CDF band bounds the curve from below
        "upper": np.concatenate((edge(0.0), lo_i, edge(1.0)), axis=-1),
    }  # the lower CDF band from above


def _point_cdf(n: int) -> np.ndarray:
    return np.concatenate(([0.0], np.arange(1, n + 1) / n, [1.0]))


def _plan(cdfs: dict, kind: str, ks: np.ndarray) -> _Plan:
    """The plan of CDFs (each (n + 2,)) that do not depend on the data."""
    if kind == "median":
        return _Plan(
            index={
                curve: np.minimum(bands.searchsorted_rows(bands.quantile_thresholds(cdf, 0.5), ks), cdf.size - 1)
                for curve, cdf in cdfs.items()
            },
            mass={},
        )
    mass = {curve: np.diff(np.power.outer(cdf, ks), axis=0, prepend=0.0) for curve, cdf in cdfs.items()}
    return _Plan(index={}, mass=mass)


def _expect(z: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """``z @ mass`` over the points z = (low, Y_(1..n), high) (the last axes): the mean of each curve.

    An infinite end of the support counts only where it has mass (then the curve is infinite: a mean band
    over an unbounded support is), not 0 * inf = NaN; finite ends keep the plain product (same numbers).
    """
    if np.isfinite(z[..., 0]).all() and np.isfinite(z[..., -1]).all():
        return z @ mass
    out = z[..., 1:-1] @ mass[..., 1:-1, :]
    for end in (0, -1):
        edge = z.reshape(-1, z.shape[-1])[0, end]  # the same end in every row
        m = mass[..., [end], :]  # (1, K), or (samples, 1, K) beside a batch of rows
        with np.errstate(invalid="ignore"):
            out = out + np.where(m > 0, edge * m, 0.0)
    return out


def _apply(plan: _Plan, z: np.ndarray) -> dict:
    """Each planned curve of every sample: (reps, K)."""
    if plan.index:
        return {c: z[:, index] for c, index in plan.index.items()}
    return {c: _expect(z, mass) for c, mass in plan.mass.items()}


# A sample-by-sample mean band holds (samples, n + 2, K) probabilities: at most this many at once.
_MASS_BLOCK = 2_000_000


def _row_curves(z: np.ndarray, cdfs: dict, kind: str, ks: np.ndarray) -> dict:
    """Each sample's curves of CDFs with one row per sample (each (reps, n + 2)): (reps, K), vectorized."""
    out = {}
    for curve, cdf in cdfs.items():
        if kind == "median":
            index = np.minimum(bands.searchsorted_rows(bands.quantile_thresholds(cdf, 0.5), ks), cdf.shape[1] - 1)
            # in the memory order of the precomputed path's z[:, index]: the sums over rounds then add the same
            # numbers in the same order (bit-identical for a band with equal rows)
            out[curve] = np.asfortranarray(np.take_along_axis(z, index, axis=1))
            continue
        values = np.empty((z.shape[0], ks.size))
        step = max(1, _MASS_BLOCK // (cdf.shape[1] * ks.size))  # blocks of samples bound the memory
        for start in range(0, z.shape[0], step):
            rows = slice(start, start + step)
            mass = np.diff(cdf[rows, :, None] ** ks, axis=1, prepend=0.0)  # (block, n + 2, K)
            values[rows] = _expect(z[rows, None, :], mass)[:, 0, :]
        out[curve] = values
    return out


def _trivial_k(lower_at_max: np.ndarray) -> np.ndarray:
    """Each sample's budget beyond which its upper median band is trivial (see :func:`bands.trivial_budget`)."""
    with np.errstate(divide="ignore"):
        k = np.log(0.5) / np.log(np.clip(lower_at_max, np.finfo(float).tiny, 1.0))
    return np.where(lower_at_max <= 0, 0.0, np.where(lower_at_max >= 1, np.inf, k))


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    name, n = work.cells[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    y = sample_sorted(work.distributions[name], task.reps, n, rng=rng)
    low, high = work.supports[name]
    z = np.concatenate([np.full((task.reps, 1), low), y, np.full((task.reps, 1), high)], axis=1)
    # sums[m, kind, curve, 0 or 1, k]: sum and sum of squares over rounds
    sums = np.zeros((len(work.methods), len(work.kinds), len(_CURVES), 2, work.ks.size))
    trivial = np.zeros((len(work.methods), 2))  # plug-ins: sum and sum of squares of each sample's trivial budget
    for m, method in enumerate(work.methods):
        band = work.plugins.get(method)
        if band is not None:  # one call for every sample of the chunk
            lo_i, hi_i = band(y, work.confidence)
            k_star = np.broadcast_to(_trivial_k(lo_i[..., -1]), (task.reps,))
            trivial[m] = k_star.sum(), (k_star**2).sum()
        for j, kind in enumerate(work.kinds):
            if band is None:
                curves = _apply(work.plans[(n, method, kind)], z)
            elif lo_i.ndim == 1:
                curves = _apply(_plan(_cdfs(lo_i, hi_i), kind, work.ks), z)
            else:
                curves = _row_curves(z, _cdfs(lo_i, hi_i), kind, work.ks)
            if "point" not in curves:
                curves["point"] = _apply(work.plans[(n, "point", kind)], z)["point"]
            curves["width"] = curves["upper"] - curves["lower"]
            for c, curve in enumerate(_CURVES):
                sums[m, j, c, 0] = curves[curve].sum(axis=0)
                sums[m, j, c, 1] = (curves[curve] ** 2).sum(axis=0)
    return {"sums": sums, **({"trivial": trivial} if work.plugins else {})}


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the band-width ablations for every distribution and sample size of ``config``.

    For each distribution and n of ``study.sample_sizes`` (one cell each), ``study.reps`` rounds of n scores
    give every band method's lower and upper bands of each tuning curve of ``study.kinds`` at k = 1..max_k;
    their averages, the average width and the point estimate are reported beside the true curve. This
    reproduces the ablations of Lourie et al. (2024), §5.3-5.4, Figures 6-8 and 12-15 (preset
    ``lourie_ablations``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"band_width"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). Its distributions must be continuous (checked when the config is parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, with columns
        ``cell``, ``distribution``, ``n``, ``confidence``, ``method``, ``kind`` (median or mean), ``k``,
        ``measure``, ``estimate``, ``mcse`` and ``reps``: measures ``lower``, ``point``, ``upper`` and
        ``width`` (averages over rounds, score units; infinite for an unbounded support, MCSE NaN then) per
        method and k; ``curve`` (method ``"truth"``, the exact curve); and for median bands ``trivial_k`` (k
        = 0 in the row: the budget beyond which the upper band is trivial, exact for a built-in method);
        ``report``, ``files`` (``summary_parquet``, ``summary_csv``, ``run``) and ``kind``.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    KS and LD bands from 12 scores of a quadratic law, 50 rounds, k = 1..6:

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "quadratic", "a": 0.5, "b": 0.9, "c": 2},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "band_width", "reps": 50, "chunk_reps": 50, "sample_sizes": [12],
    ...               "methods": ["ks", "ld_highest_density"], "kinds": ["median"], "max_k": 6},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> s = result.summary
    >>> print(s[(s.measure == "upper") & (s.k <= 3)].pivot(index="k", columns="method", values="estimate").round(4))
    method      ks  ld_highest_density
    k
    1       0.8166              0.8166
    2       0.9000              0.8748
    3       0.9000              0.9000
    >>> print(s[s.measure == "trivial_k"][["method", "estimate"]].round(3).to_string(index=False))
                method  estimate
                    ks     1.977
    ld_highest_density     2.431

    The upper median band reaches the top of the support (0.9) beyond k = 1.98 for KS and 2.43 for the LD
    highest-density band, whatever the data.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    sizes, methods, kinds = opts.sample_sizes, tuple(opts.methods), tuple(opts.kinds)
    confidence, max_k = opts.confidence, opts.max_k
    dists = {d.name: d.build() for d in config.distributions}
    ks = np.arange(1, max_k + 1, dtype=np.float64)
    band = {m: plugins.band_method(m) for m in methods}
    builtin = [m for m in methods if isinstance(band[m], plugins.BuiltinBand)]
    plans = {}
    for n in sizes:
        for kind in kinds:
            for m in builtin:  # the point curve with each built-in method, as it always was
                plans[(n, m, kind)] = _plan({**_cdfs(*band[m].bounds(n, confidence)), "point": _point_cdf(n)}, kind, ks)  # type: ignore[union-attr]  # builtin: BuiltinBand methods only
            plans[(n, "point", kind)] = _plan({"point": _point_cdf(n)}, kind, ks)
    cells = {base.cell_key(distribution=spec.key, n=n): (spec.name, n) for spec in config.distributions for n in sizes}
    # Each distribution's own support: the bands reach its ends (infinite for an unbounded law).
    work = _Work(
        config.seed,
        dists,
        cells,
        plans,
        methods,
        kinds,
        ks,
        {k: d.support for k, d in dists.items()},
        confidence,
        {m: b for m, b in band.items() if m not in builtin},
    )
    plugin_sources = plugins.band_fingerprint(methods)  # empty for built-ins: their fingerprint is unchanged
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={
            "sizes": sizes,
            "methods": methods,
            "kinds": kinds,
            "confidence": confidence,
            "max_k": max_k,
            **({"band_plugins": plugin_sources} if plugin_sources else {}),
        },
        stage=stage,
    )
    rows = []
    for key, (name, n) in run_.succeeded(cells).items():
        R = run_.reps(key)  # study.reps, or the cell's own under study.precision
        head = dict(cell=key, distribution=name, n=n, confidence=confidence)
        true = {
            "median": truth.quantile_tuning_curve(dists[name], ks),
            "mean": truth.mean_tuning_curve(dists[name], ks),
        }
        sums = run_.total(key, "sums")
        trivial = run_.total(key, "trivial") if work.plugins else None
        for j, kind in enumerate(kinds):
            rows += [
                dict(head, method="truth", kind=kind, k=int(k), measure="curve", estimate=float(v), mcse=0.0, reps=0)
                for k, v in zip(ks, true[kind])
            ]
            for m, method in enumerate(methods):
                if kind == "median" and method in builtin:
                    rows.append(
                        dict(
                            head,
                            method=method,
                            kind=kind,
                            k=0,
                            measure="trivial_k",
                            estimate=bands.trivial_budget(n, confidence, method),
                            mcse=0.0,
                            reps=0,
                        )
                    )
                elif kind == "median":  # a plug-in's: the average over rounds of each sample's budget
                    assert trivial is not None  # work.plugins: this method
                    mean = trivial[m, 0] / R
                    var = max((trivial[m, 1] - R * mean**2) / (R - 1), 0.0) if np.isfinite(mean) else np.nan
                    rows.append(
                        dict(
                            head,
                            method=method,
                            kind=kind,
                            k=0,
                            measure="trivial_k",
                            estimate=float(mean),
                            mcse=float(np.sqrt(var / R)),
                            reps=R,
                        )
                    )
                for c, curve in enumerate(_CURVES):
                    mean = sums[m, j, c, 0] / R
                    with np.errstate(invalid="ignore"):  # an infinite band (unbounded support): no MCSE, NaN
                        var = np.where(
                            np.isfinite(mean), np.clip((sums[m, j, c, 1] - R * mean**2) / (R - 1), 0.0, None), np.nan
                        )
                    rows += [
                        dict(
                            head,
                            method=method,
                            kind=kind,
                            k=int(k),
                            measure=curve,
                            estimate=float(a),
                            mcse=float(np.sqrt(b / R)),
                            reps=R,
                        )
                        for k, a, b in zip(ks, mean, var)
                    ]
    metadata = {"confidence": confidence, "distributions": {name: describe(d) for name, d in dists.items()}}
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a band_width study, the keys ``study.*`` of its config.

    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> schema.parse(Options, {"kinds": ["mean"], "max_k": 10}, "study.").kinds
    ('mean',)
    >>> schema.parse(Options, {"kinds": ["mode"]}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.kinds must be one of median, mean, got 'mode'
    """

    reps: int = reps_option(1024)
    chunk_reps: int = chunk_reps_option(512)
    sample_sizes: tuple[int, ...] = option(
        (6, 48),
        "the sample sizes n (one cell each per distribution)",
        schema.listed(schema.integer(minimum=2), what="at least one sample size"),
    )
    methods: tuple[str, ...] = option(
        ("dkw", "ks", "ld_equal_tailed", "ld_highest_density"),
        "the CDF band methods: dkw, ks, ld_equal_tailed, ld_highest_density or a plug-in band's import path",
        schema.listed(band_method_check(), what="at least one method", sort=False),
    )
    kinds: tuple[str, ...] = option(
        ("median", "mean"),
        "which tuning curves get bands: median, mean or both",
        schema.listed(schema.choice(("median", "mean")), what="at least one of median, mean", sort=False),
    )
    confidence: float = option(0.8, "the simultaneous coverage of the bands", schema.level())
    max_k: int = option(48, "budgets k = 1..max_k (search iterations)", schema.integer(minimum=2))


def headline(summary: pd.DataFrame) -> str:
    """Average band widths at a few budgets, and the exact budget where the upper median band is trivial.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``distribution``, ``n``, ``kind``, ``k``, ``method``, ``measure``,
        ``estimate``).

    Returns
    -------
    str
        The average ``width`` (score units, 4 decimals) at k = 1, 5, 10, 20, 48 where present, one row per
        (distribution, n, kind, k) and one column per method; then ``trivial_k`` (2 decimals) per n and method.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "distribution": "kde", "n": 48, "kind": "median", "method": ["ks", "ks", "ks"],
    ...     "k": [1, 5, 0], "measure": ["width", "width", "trivial_k"], "estimate": [0.05, 0.08, 4.2]})
    >>> print(headline(summary))
    average band width (upper - lower)
    method                      ks
    distribution n  kind   k
    kde          48 median 1  0.05
                           5  0.08
    budget where the upper median band becomes trivial (exact)
    method   ks
    n
    48      4.2
    """
    w = summary[(summary["measure"] == "width") & summary["k"].isin([1, 5, 10, 20, 48])]
    t = summary[summary["measure"] == "trivial_k"]
    return (
        f"average band width (upper - lower)\n"
        f"{w.pivot_table(index=['distribution', 'n', 'kind', 'k'], columns='method', values='estimate').round(4).to_string()}"
        f"\nbudget where the upper median band becomes trivial (exact)\n"
        f"{t.pivot_table(index='n', columns='method', values='estimate').round(2).to_string()}"
    )


def band_width_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Average bands by method against k, beside the true curve (Lourie et al. 2024, Figures 6-8).

    Only the first distribution of ``summary`` is drawn: a row of panels per sample size, a column per kind
    of tuning curve (median, mean). Each method's average lower and upper band over the rounds is a step line
    in its colour, the true curve black; in the median panels a dotted vertical line marks where a method's
    upper band becomes trivial (when that is within the k drawn). The y axis runs from a little below the
    true curve's minimum to 1, for scores at most 1 (accuracies).

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_width`` study (:mod:`simstudy.studies.band_width`): columns
        ``distribution``, ``n`` (sample size, scores), ``kind`` (``"median"``, ``"mean"``), ``method`` (a band
        method, named by :data:`simstudy.stats.bands.METHOD_LABELS`, or ``"truth"``), ``k`` (search iterations),
        ``measure`` and ``estimate``. Drawn are the rows with ``method == "truth"`` (the true curve, score
        units), ``measure`` ``"lower"`` and ``"upper"`` (the average band, score units) and, for the median,
        ``"trivial_k"`` (the budget k* beyond which the upper band is trivial, iterations). Other columns and
        measures (``"point"``, ``"width"``, ``mcse``, ``reps``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: "Average simultaneous bands over rounds
        (Lourie et al. ablations)".

    Returns
    -------
    matplotlib.figure.Figure
        A grid of axes, one row per sample size (increasing) by one column per kind, each titled with the
        distribution, kind and n; the legend below.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> k = [1, 2, 3, 4]
    >>> summary = pd.concat(
    ...     [
    ...         pd.DataFrame({"k": k, "estimate": [0.5, 0.67, 0.75, 0.8], "method": "truth", "measure": "curve"}),
    ...         pd.DataFrame({"k": k, "estimate": [0.3, 0.5, 0.6, 0.65], "method": "dkw", "measure": "lower"}),
    ...         pd.DataFrame({"k": k, "estimate": [0.7, 0.85, 1.0, 1.0], "method": "dkw", "measure": "upper"}),
    ...         pd.DataFrame({"k": [0], "estimate": [2.5], "method": "dkw", "measure": "trivial_k"}),
    ...     ]
    ... ).assign(distribution="uniform", n=12, kind="median")
    >>> fig = band_width_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'uniform, median tuning curve, n = 12')
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D

    from simstudy.chart_style import axes_title, colorblind, labels, legend, suptitle, theme
    from simstudy.figures import method_label

    plt = theme()
    dist = summary["distribution"].iloc[0]
    s = summary[summary["distribution"] == dist]
    sizes = sorted(s["n"].unique())
    kinds = list(dict.fromkeys(s["kind"]))
    methods = [m for m in dict.fromkeys(s["method"]) if m != "truth"]
    palette = dict(zip(methods, colorblind(len(methods))))
    fig, axes = plt.subplots(
        len(sizes), len(kinds), figsize=(4.4 * len(kinds), 3.2 * len(sizes) + 0.8), squeeze=False, layout="constrained"
    )
    dotted = False
    for r, n in enumerate(sizes):
        for c, kind in enumerate(kinds):
            ax = axes[r, c]
            t = s[(s["n"] == n) & (s["kind"] == kind)]
            true = t[t["method"] == "truth"].sort_values("k")
            ax.plot(true["k"], true["estimate"], color="black", lw=1.4, label="true curve")
            for method in methods:
                for curve in ("lower", "upper"):
                    b = t[(t["method"] == method) & (t["measure"] == curve)].sort_values("k")
                    ax.plot(
                        b["k"],
                        b["estimate"],
                        color=palette[method],
                        lw=1.2,
                        drawstyle="steps-post",
                        label=f"{method_label(method)} (average band)" if curve == "lower" else None,
                    )
                if kind == "median":
                    k_star = t[(t["method"] == method) & (t["measure"] == "trivial_k")]["estimate"]
                    if len(k_star) and k_star.iloc[0] < true["k"].max():
                        ax.axvline(k_star.iloc[0], color=palette[method], ls=":", lw=0.9)
                        dotted = True
            lo = float(true["estimate"].min())
            ax.set_ylim(lo - 0.1 * (1.0 - lo), 1.0 + 0.02 * (1.0 - lo))
            axes_title(ax, f"{dist}, {kind} tuning curve, n = {n}", fontsize=8)
            labels(ax, xlabel="k")
    extra = [Line2D([], [], color="0.4", ls=":", lw=0.9, label="upper median band trivial beyond")] if dotted else []
    legend(fig, axes[0, 0], extra, fontsize=7, loc="outside lower center", ncols=2)
    suptitle(fig, title or "Average simultaneous bands over rounds (Lourie et al. ablations)")
    return fig


STUDY = register_study(
    Study(
        kind="band_width",
        options=Options,
        run=run,
        figure=band_width_figure,
        headline=headline,
        sweep=Headline({"measure": "width"}, "k", "method", "band width"),
        continuous=True,
    )
)
