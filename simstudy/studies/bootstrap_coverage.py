"""Pointwise coverage of percentile-bootstrap bands for the mean tuning curve (Lourie et al. §5.1, Figure 4).

Tang et al. (2020) showed the bootstrap fails for tuning curves; Lourie et al. reproduce it for the U and V
estimators. Each round draws ``study.sample_size`` scores from a continuous distribution with a known mean
tuning curve (:func:`simstudy.stats.truth.mean_tuning_curve`, by quadrature), resamples them ``study.resamples``
times, and takes the ``(1 -/+ confidence) / 2`` percentiles of each estimator's curve over the resamples as
a pointwise band. Coverage at each budget k is the fraction of rounds whose band contains the true curve
there, with a Clopper-Pearson interval. It collapses as k grows: near k = n the estimates are driven by
the sample maximum, which the bootstrap cannot exceed.

Besides the pointwise Clopper-Pearson intervals, each estimator's coverage curve has a 95% simultaneous
Monte Carlo band over k (``lower_joint``/``upper_joint``): the sup-t critical value c
(:func:`simstudy.stats.joint.sup_t_band`) from the chunks' counts of rounds covered at both k and k'
(``covered_pairs``), turned into Clopper-Pearson intervals at the pointwise level ``2 Phi(c) - 1`` (at least
``study.ci_level``): the whole true coverage curve lies inside it with probability 0.95, and, a coverage being
a probability, the band stays in [0, 1] and contains the pointwise intervals.

Resampled indices are small integers, so each resample is sorted by a radix sort of its indices (numpy's
stable sort on 8/16-bit integers) and every estimator at every k is one matrix product per round.

Zip plot. Each round also keeps, per estimator and k, the position of the truth relative to its band (chunk
arrays ``zip_position``, ``zip_side``, (estimators, n, rounds); :func:`simstudy.stats.metrics.interval_position`:
``max(low - truth, truth - high)`` in half-widths, <= 0 exactly when the band covers). ``zip.parquet`` holds them
at k = 1, n/2 and n, and ``zip.png`` ranks them (Morris, White & Crowther 2019). A run directory whose chunks
predate these arrays resumes without a zip plot.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import describe, sample_sorted
from simstudy.engine.runner import Task, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import option
from simstudy.stats import estimators, joint, truth
from simstudy.stats.metrics import clopper_pearson, interval_position
from simstudy.studies import base, zip_plots
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "Options", "headline", "STUDY", "bootstrap_coverage_figure"]

_SCHEME = "bootstrap_coverage/1"  # not bumped for covered_pairs: old chunks stay right (their joint bands NaN)
# Simultaneous coverage of the lower_joint/upper_joint bands over k (recorded in run.json).
_JOINT_LEVEL = 0.95


@dataclass(frozen=True)
class _Cell:
    key: str
    distribution: str
    truth: np.ndarray  # (n,) true mean tuning curve at k = 1..n


@dataclass(frozen=True)
class _Work:
    seed: int
    distributions: dict
    cells: dict
    n: int
    resamples: int
    confidence: float
    weights: np.ndarray  # (E * n, n): each estimator at k = 1..n, estimator-major


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    cell = work.cells[task.cell]
    dist = work.distributions[cell.distribution]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    samples = sample_sorted(dist, task.reps, work.n, rng=rng)
    boot_rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1))
    E = work.weights.shape[0] // work.n
    alpha = (1 - work.confidence) / 2
    covered = np.zeros((E, work.n), dtype=np.int64)
    position = np.zeros((E, work.n, task.reps))
    side = np.zeros((E, work.n, task.reps), dtype=np.int8)
    pairs = np.zeros((E, work.n, work.n), dtype=np.int64)  # rounds covered at both k and k': the joint band's
    dtype = np.int8 if work.n <= 127 else np.int16
    target = np.tile(cell.truth, E)  # the truth at every (estimator, k)
    for r, x in enumerate(samples):
        idx = boot_rng.integers(0, work.n, size=(work.resamples, work.n), dtype=dtype)
        idx.sort(axis=1, kind="stable")  # radix sort of small integers: the resample sorted
        curves = x[idx] @ work.weights.T  # (resamples, E * n)
        low, high = np.quantile(curves, [alpha, 1 - alpha], axis=0)
        inside = (low <= target) & (target <= high)
        covered += inside.reshape(E, work.n)
        pairs += _both(inside.reshape(E, work.n))
        at, to = interval_position(low, high, target)
        position[:, :, r], side[:, :, r] = at.reshape(E, work.n), to.reshape(E, work.n)
    return {"covered": covered, "covered_pairs": pairs, zip_plots.POSITION: position, zip_plots.SIDE: side}


def _both(inside: np.ndarray) -> np.ndarray:
    """``inside[e, k] and inside[e, k']`` for every pair of budgets: shape (E, n, n), of one round."""
    return inside[:, :, None] & inside[:, None, :]


def _joint_columns(
    covered: np.ndarray, pairs: np.ndarray | None, reps: int, ci_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each estimator's simultaneous band over k for its coverage curve: ``lower, upper`` of shape (E, n).

    The coverage at k is the mean of a round's indicator; the indicators' covariance across k comes from the
    counts of rounds covered at both k and k' (``pairs``), which gives the sup-t critical value c of level
    :data:`_JOINT_LEVEL` (:func:`simstudy.stats.joint.sup_t_band`). A coverage is a probability, so the band is
    not ``estimate ± c mcse`` (which leaves [0, 1] near 1 and shrinks to a point where every round covers,
    mcse 0) but the Clopper-Pearson interval at the pointwise level ``2 Phi(c) - 1`` whose normal quantile is
    c: in [0, 1], the same width as the sup-t band where the normal approximation holds, conservative where it
    does not. Its level is at least ``ci_level``, so the band contains the pointwise Clopper-Pearson
    intervals of the summary. NaN without ``pairs`` (chunks written before the array existed).
    """
    if pairs is None:
        nan = np.full(covered.shape, np.nan)
        return nan, nan
    lower, upper = np.empty(covered.shape), np.empty(covered.shape)
    for e in range(covered.shape[0]):
        p = covered[e] / reps
        cov = (pairs[e] / reps - np.outer(p, p)) / reps
        c = joint.sup_t_band(p, cov, level=_JOINT_LEVEL).critical
        lower[e], upper[e] = clopper_pearson(covered[e], reps, max(2 * float(special.ndtr(c)) - 1, ci_level))
    return lower, upper


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the bootstrap-coverage study for every distribution of ``config``.

    For each distribution (one cell each), ``study.reps`` rounds draw ``study.sample_size`` scores, resample
    them ``study.resamples`` times and check, at every budget k = 1..n and for every estimator of
    ``config.estimators`` (bootstrap estimators are skipped), whether the percentile band contains the true
    mean tuning curve. This reproduces Lourie et al. (2024), §5.1, Figure 4 (preset
    ``lourie_fig4_bootstrap_coverage``), after Tang et al. (2020).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"bootstrap_coverage"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). Its distributions must be continuous (checked when the config is
        parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (cell, estimator, k) with columns ``cell``, ``distribution``, ``estimator``, ``k``, ``nominal``
        (``study.confidence``), ``truth`` (the true mean tuning curve at k, score units), ``estimate`` (the
        pointwise coverage, a proportion in [0, 1]), ``mcse``, ``ci_low``, ``ci_high`` (Clopper-Pearson at
        ``study.ci_level``), ``reps``, and ``lower_joint``/``upper_joint`` (each estimator's 95% simultaneous
        Monte Carlo band over k for its coverage curve: Clopper-Pearson at the level of the sup-t critical
        value from the counts of rounds covered at both k and k', in [0, 1] and containing ``ci_low``/``ci_high``;
        NaN for a cell resumed from chunks written before the band existed); ``report``, ``files`` (``summary_parquet``, ``summary_csv``, ``run``)
        and ``kind``.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Tang, R., Lee, J., Ture, F., & Lin, J. (2020). Showing your work doesn't always work. ACL 2020.

    Examples
    --------
    95% bands from 10 scores of a quadratic law, 200 resamples, 40 rounds:

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "quadratic", "a": 0.5, "b": 0.9, "c": 2},
    ...     "budget": {"B": 2},
    ...     "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "bootstrap_coverage", "reps": 40, "chunk_reps": 40, "sample_size": 10,
    ...               "resamples": 200},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> s = result.summary
    >>> print(s[s.k.isin([1, 5, 10])].pivot(index="k", columns="estimator", values="estimate"))
    estimator     u      v
    k
    1          0.85  0.850
    5          0.85  0.775
    10         0.65  0.650

    Even at 40 rounds the nominal 95% bands cover the true curve far less often, least at k = n.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    n, resamples, confidence, ci_level = opts.sample_size, opts.resamples, opts.confidence, opts.ci_level
    specs = [s for s in config.estimators if s.method != "bootstrap"]
    dists = {d.name: d.build() for d in config.distributions}
    ks = np.arange(1, n + 1)
    cells = {}
    for spec in config.distributions:
        key = base.cell_key(distribution=spec.key, n=n)
        cells[key] = _Cell(key, spec.name, truth.mean_tuning_curve(dists[spec.name], ks.astype(float)))
    weights = np.concatenate([estimators.weights(n, s.method) for s in specs])
    work = _Work(config.seed, dists, cells, n, resamples, confidence, weights)
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, work),
        settings={"n": n, "resamples": resamples, "confidence": confidence, "estimators": [s.method for s in specs]},
        stage=stage,
    )
    rows, zips, complete = [], [], True
    shown = sorted({1, n // 2, n} - {0})  # the zip plot's budgets
    joint_notes = []
    for key, cell in run_.succeeded(cells).items():
        reps = run_.reps(key)  # study.reps, or the cell's own under study.precision
        covered = run_.total(key, "covered")
        stored = zip_plots.positions(run_, key, (slice(None), [k - 1 for k in shown]))  # (E, budgets shown, rounds)
        complete &= stored is not None
        for e, est_spec in enumerate(specs if stored is not None else ()):
            zips += [
                zip_plots.panel(
                    f"{cell.distribution}, {est_spec.name}, k = {k}",
                    stored[0][e, j],  # type: ignore[index]  # not None in this loop
                    stored[1][e, j],  # type: ignore[index]
                    nominal=confidence,
                    ci_level=ci_level,
                    cell=key,
                    distribution=cell.distribution,
                    estimator=est_spec.name,
                    k=k,
                )
                for j, k in enumerate(shown)
            ]
        low, high = clopper_pearson(covered, reps, ci_level)
        chunks = [arrays for _, arrays in run_.chunks(key)]
        if all("covered_pairs" in a for a in chunks):
            pairs = np.sum([a["covered_pairs"] for a in chunks], axis=0)  # integer counts: exact in any order
        else:
            pairs = None
            joint_notes.append(
                f"cell {key}: chunks written before the joint bands existed: lower_joint/upper_joint NaN"
            )
            logging.getLogger(__name__).warning("%s", joint_notes[-1])
        lower_joint, upper_joint = _joint_columns(covered, pairs, reps, ci_level)
        for e, est_spec in enumerate(specs):
            p = covered[e] / reps
            rows += [
                dict(
                    cell=key,
                    distribution=cell.distribution,
                    estimator=est_spec.name,
                    k=int(k),
                    nominal=confidence,
                    truth=float(cell.truth[k - 1]),
                    estimate=float(p[k - 1]),
                    mcse=float(np.sqrt(p[k - 1] * (1 - p[k - 1]) / reps)),
                    ci_low=float(low[e, k - 1]),
                    ci_high=float(high[e, k - 1]),
                    reps=reps,
                    lower_joint=float(lower_joint[e, k - 1]),
                    upper_joint=float(upper_joint[e, k - 1]),
                )
                for k in ks
            ]
    metadata = {
        "sample_size": n,
        "resamples": resamples,
        "confidence": confidence,
        "ci_level": ci_level,
        "distributions": {name: describe(d) for name, d in dists.items()},
        "joint": {
            "level": _JOINT_LEVEL,
            "method": "Clopper-Pearson at the pointwise level of the sup-t critical value over k "
            "(simstudy.stats.joint.sup_t_band), per estimator",
        },
        **({"notes": joint_notes} if joint_notes else {}),
    }
    files = zip_plots.write(out_dir, zips, complete)
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata, files=files)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a bootstrap_coverage study, the keys ``study.*`` of its config.

    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> opts = Options()
    >>> opts.sample_size, opts.resamples, opts.confidence
    (50, 4096, 0.95)
    >>> schema.parse(Options, {"resamples": 1}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.resamples must be an integer >= 2, got 1
    """

    reps: int = reps_option(4096)
    chunk_reps: int = chunk_reps_option(256)
    sample_size: int = option(
        50, "scores per simulated search (n); the budgets are k = 1..n", schema.integer(minimum=2)
    )
    resamples: int = option(4096, "bootstrap resamples per search", schema.integer(minimum=2))
    confidence: float = option(0.95, "the pointwise level of the percentile-bootstrap bands", schema.level())
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals of the coverage", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Pointwise coverage at a few budgets k, per distribution and estimator: what ``simstudy`` prints.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``distribution``, ``estimator``, ``k``, ``nominal``, ``estimate``).

    Returns
    -------
    str
        A title line with the nominal level, then the coverage (a proportion in [0, 1], 3 decimals) at
        k = 1, 2, 5, 10, 20, 30, 40, 50 where present, one column per distribution and estimator.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "distribution": "lstm", "estimator": "v", "k": [1, 5, 10], "nominal": 0.95,
    ...     "estimate": [0.93, 0.8, 0.55]})
    >>> print(headline(summary))
    pointwise coverage of the bootstrap bands (nominal 0.95)
    distribution  lstm
    estimator        v
    k
    1             0.93
    5             0.80
    10            0.55
    """
    table = summary[summary["k"].isin([1, 2, 5, 10, 20, 30, 40, 50])].pivot_table(
        index="k", columns=["distribution", "estimator"], values="estimate"
    )
    return (
        f"pointwise coverage of the bootstrap bands (nominal {summary['nominal'].iloc[0]:.2f})\n"
        f"{table.round(3).to_string()}"
    )


def bootstrap_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Pointwise coverage of percentile-bootstrap bands for the mean tuning curve against k (Lourie et al., Fig. 4).

    A panel per distribution, a line per estimator (U, V) with its Clopper-Pearson interval shaded, and the
    nominal level dashed. The bootstrap cannot exceed the sample maximum, so coverage collapses as k nears n.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``bootstrap_coverage`` study (:mod:`simstudy.studies.bootstrap_coverage`), one row
        per distribution, estimator and k: columns ``distribution``, ``estimator`` (``"u"``, ``"v"``), ``k``
        (the budget, search iterations 1..n), ``estimate`` (the pointwise coverage, a probability in [0, 1]),
        ``ci_low`` and ``ci_high`` (its Clopper-Pearson interval), ``nominal`` (the bands' level, in (0, 1);
        the first row's is drawn) and ``reps`` (rounds). A panel's title gives n as the largest ``k``. Other
        columns (``cell``, ``truth``, ``mcse``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: "95% percentile-bootstrap bands (shaded:
        Clopper–Pearson intervals)", the level read from ``nominal``.

    Returns
    -------
    matplotlib.figure.Figure
        One row of panels, one per distribution (sharing the y axis, in [0, 1.02]); the legend below them.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.
    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> summary = pd.DataFrame(
    ...     {"estimator": ["u"] * 3 + ["v"] * 3, "k": [1, 5, 10] * 2, "estimate": [0.95, 0.9, 0.6, 0.94, 0.85, 0.4]}
    ... )
    >>> summary = summary.assign(
    ...     distribution="uniform", nominal=0.95, reps=200, ci_low=summary.estimate - 0.04,
    ...     ci_high=(summary.estimate + 0.04).clip(upper=1.0),
    ... )
    >>> fig = bootstrap_coverage_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'uniform: n = 10, 200 rounds')
    >>> fig.get_suptitle()
    '95% percentile-bootstrap bands (shaded: Clopper–Pearson intervals)'
    >>> plt.close(fig)
    >>> fig = bootstrap_coverage_figure(summary.assign(nominal=0.8))
    >>> fig.get_suptitle()
    '80% percentile-bootstrap bands (shaded: Clopper–Pearson intervals)'
    >>> plt.close(fig)
    >>> fig = bootstrap_coverage_figure(summary.assign(lower_joint=summary.estimate - 0.06, upper_joint=1.0))
    >>> fig.get_suptitle().replace(chr(10), " ")  # wrapped to the figure's width
    '95% percentile-bootstrap bands (shaded: Clopper–Pearson intervals; dotted: 95% simultaneous (sup-t) band over k)'
    >>> plt.close(fig)
    """
    from simstudy.chart_style import (
        axes_title,
        draw_band,
        estimator_label,
        labels,
        legend,
        shade_patch,
        suptitle,
        theme,
    )
    from simstudy.figures import estimator_palette

    plt = theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    ests = list(dict.fromkeys(summary["estimator"]))
    palette = estimator_palette(ests)
    fig, axes = plt.subplots(
        1, len(dists), figsize=(max(4.2 * len(dists), 5.0), 4.3), squeeze=False, sharey=True, layout="constrained"
    )
    # The simultaneous band over k (lower_joint/upper_joint), where the chunks had the counts it needs.
    joint = {"lower_joint", "upper_joint"} <= set(summary) and bool(summary["lower_joint"].notna().any())
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        for est in ests:
            e = s[s["estimator"] == est]
            draw_band(ax, e, "k", estimator_label(est), palette[est], low="ci_low", high="ci_high")
            if joint:
                for edge in ("lower_joint", "upper_joint"):
                    ax.plot(e["k"], e[edge], color=palette[est], ls=":", lw=0.9)
        ax.axhline(
            float(s["nominal"].iloc[0]), color="black", ls="--", lw=0.8, label="nominal" if ax is axes[0, 0] else None
        )
        axes_title(ax, f"{dist}: n = {int(s['k'].max())}, {int(s['reps'].iloc[0]):,} rounds", fontsize=8)
        labels(ax, xlabel="k (point of the mean tuning curve)")
        ax.set_ylim(0, 1.02)
    labels(axes[0, 0], ylabel="pointwise coverage")
    # The bands' level is the summary's nominal (study.confidence); the intervals' level, study.ci_level, is not
    # in the summary, so the legend does not claim one.
    extra: list = [shade_patch("Clopper–Pearson interval")]  # proxy artists: a patch, and a line for the joint band
    if joint:
        from matplotlib.lines import Line2D

        extra.append(Line2D([], [], color="grey", ls=":", lw=0.9, label="95% simultaneous band over k"))
    # Below the panels: a coverage's joint band can reach down to 0 at small k, under any corner of a panel.
    legend(fig, axes[0, 0], extra, loc="outside lower center", ncols=2 if len(dists) == 1 else 4)
    level = float(summary["nominal"].iloc[0])
    shown = "shaded: Clopper–Pearson intervals" + ("; dotted: 95% simultaneous (sup-t) band over k" if joint else "")
    suptitle(fig, title or f"{level:.0%} percentile-bootstrap bands ({shown})")
    return fig


STUDY = register_study(
    Study(
        kind="bootstrap_coverage",
        options=Options,
        run=run,
        figure=bootstrap_coverage_figure,
        headline=headline,
        sweep=Headline({}, "k", "estimator", "pointwise coverage", role="coverage"),
        continuous=True,
    )
)
