"""How many search iterations a sample size can bound (Lourie et al. §5.5, Figure 9).

The upper band of a quantile tuning curve equals the top of the support (it is *trivial*) for budgets
``k > log(q) / log(l_n)``, where ``l_n`` is the CDF band's lower bound at the largest score -- a number that
depends only on the sample size n, the confidence and the band method, never on the data. So this study is
exact: for each n it computes that budget, then fits it linearly against n. Lourie et al. found about 6.25
samples per bounded iteration for 80% LD highest-density bands on DeBERTaV3 (99.95% of variance explained).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import option
from simstudy.stats import bands
from simstudy.studies import base
from simstudy.studies.base import StudyOptions

__all__ = ["run", "trivial_budget", "Options", "headline", "STUDY", "band_triviality_figure"]

# Moved to the library (simstudy.stats.bands.trivial_budget); re-exported so existing imports keep working.
trivial_budget = bands.trivial_budget


def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Compute the trivial budget for every sample size and method, and the linear fit per method.

    Exact and deterministic: no simulation, so ``study.reps``, the seed and the distributions play no part.
    For each method of ``study.methods`` and n of ``study.sample_sizes``, the budget k beyond which the upper
    band of the ``study.quantile`` tuning curve at confidence ``study.confidence`` is trivial
    (:func:`simstudy.stats.bands.trivial_budget`); then the least-squares line of k against n. This reproduces
    Lourie et al. (2024), §5.5, Figure 9 (preset ``lourie_fig9_sample_size``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"band_triviality"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, with columns
        ``cell`` (the method), ``distribution`` (empty), ``method``, ``n``, ``measure``, ``estimate``,
        ``mcse`` (0) and ``reps`` (0): one ``trivial_k`` row per n (a budget in search iterations, real
        valued), then per method ``slope`` (iterations per score), ``intercept``, ``r_squared`` and
        ``samples_per_step`` (1 / slope: scores per bounded iteration) with n = 0; ``report`` (empty),
        ``files`` (``summary_parquet``, ``summary_csv``, ``run``) and ``kind``.

    Raises
    ------
    simstudy.studies.base.ShardDone
        With ``runner.shard``: an exact study has no chunks to share out, so each shard records its marker and
        stops.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "quadratic", "a": 0.5, "b": 0.9, "c": 2},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "band_triviality", "sample_sizes": [6, 12, 24, 48]},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> print(result.summary[["n", "measure", "estimate"]].round(4).to_string(index=False))
     n          measure  estimate
     6        trivial_k    1.3745
    12        trivial_k    2.4315
    24        trivial_k    4.4118
    48        trivial_k    8.1543
     0            slope    0.1607
     0        intercept    0.4769
     0        r_squared    0.9995
     0 samples_per_step    6.2221

    Over n = 6..48 about 6.22 scores bound one more search iteration (Lourie et al.: about 6.25).
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    confidence, q = opts.confidence, opts.quantile
    rows = []
    for method in opts.methods:
        ns = np.array(opts.sample_sizes)
        ks = np.array([trivial_budget(int(n), confidence, method, q) for n in ns])
        for n, k in zip(ns, ks):
            rows.append(
                dict(
                    cell=method,
                    distribution="",
                    method=method,
                    n=int(n),
                    measure="trivial_k",
                    estimate=k,
                    mcse=0.0,
                    reps=0,
                )
            )
        from scipy import stats  # here: scipy.stats costs half a second at start-up

        fit = stats.linregress(ns, ks)
        for measure, value in (
            ("slope", fit.slope),
            ("intercept", fit.intercept),
            ("r_squared", fit.rvalue**2),
            ("samples_per_step", 1 / fit.slope),
        ):
            rows.append(
                dict(
                    cell=method, distribution="", method=method, n=0, measure=measure, estimate=value, mcse=0.0, reps=0
                )
            )
    summary = pd.DataFrame(rows)
    run_ = base.ChunkedRun(store=None, tasks_by_cell={}, report=base.empty_report(), fingerprint="exact", stage=stage)
    return base.finish(
        config,
        out_dir,
        run_,
        summary,
        started=started,
        metadata={"confidence": confidence, "quantile": q, "exact": True},
    )


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a band_triviality study, the keys ``study.*`` of its config.

    The study is exact: ``reps``, ``chunk_reps`` and ``save_replicates`` are accepted but unused.
    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> Options().sample_sizes[:4], Options().confidence
    ((6, 12, 24, 48), 0.8)
    >>> schema.parse(Options, {"sample_sizes": [48]}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.sample_sizes must list at least 2 sample sizes, got [48]
    """

    sample_sizes: tuple[int, ...] = option(
        (6, 12, 24, 48, 96, 192, 384, 768, 1024),
        "the sample sizes n (at least two, for the fit)",
        schema.listed(schema.integer(minimum=2), minimum=2, what="at least 2 sample sizes"),
    )
    methods: tuple[str, ...] = option(
        ("ld_highest_density",),
        "the built-in CDF band methods: dkw, ks, ld_equal_tailed, ld_highest_density",
        schema.listed(schema.choice(lambda: bands.METHODS), what="at least one built-in method", sort=False),
    )
    confidence: float = option(0.8, "the simultaneous coverage of the bands", schema.level())
    quantile: float = option(0.5, "the tuning curve's quantile q (0.5: the median tuning curve)", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Samples per bounded search iteration and the fit's R squared, per method: what ``simstudy`` prints.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``method``, ``measure``, ``estimate``).

    Returns
    -------
    str
        A title line, then one row per method with its ``r_squared`` and ``samples_per_step`` (scores per
        bounded search iteration), rounded to 4 decimals.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "method": "ld_highest_density", "measure": ["samples_per_step", "r_squared"],
    ...     "estimate": [6.2213, 0.99953]})
    >>> print(headline(summary))
    linear fit of the trivial budget against n
    measure             r_squared  samples_per_step
    method
    ld_highest_density     0.9995            6.2213
    """
    fits = summary[summary["measure"].isin(["samples_per_step", "r_squared"])]
    return (
        f"linear fit of the trivial budget against n\n"
        f"{fits.pivot_table(index='method', columns='measure', values='estimate').round(4).to_string()}"
    )


def band_triviality_figure(summary: pd.DataFrame, *, title: str | None = None):
    """The budget where the upper median band turns trivial against n, with its linear fit (Lourie et al. 2024, Fig. 9).

    Lourie et al.'s Figure 9, right. One colour per band method: its exact trivial budgets k*(n) as points and the
    fitted line ``intercept + slope * n`` through them; the legend gives the samples per bounded iteration
    (1 / slope) and the fit's R².

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_triviality`` study (:mod:`simstudy.studies.band_triviality`): columns
        ``method`` (a band method, named by :data:`simstudy.stats.bands.METHOD_LABELS`), ``measure``, ``n`` and
        ``estimate``. Per method, rows with ``measure == "trivial_k"`` give the budget k* (search iterations,
        real; :func:`simstudy.stats.bands.trivial_budget`) at sample size ``n`` (scores); one row each of
        ``"slope"`` (iterations per score), ``"intercept"`` (iterations), ``"r_squared"`` (in [0, 1]) and
        ``"samples_per_step"`` (scores per iteration) gives the linear fit of k* against n. Other columns
        (``cell``, ``distribution``, ``mcse``, ``reps``) are ignored.
    title : str, optional, keyword-only
        The axes' title (wrapped to its width). Default None: "Upper median tuning-curve band: iterations
        bounded (exact)".

    Returns
    -------
    matplotlib.figure.Figure
        One axes (k* against n), its legend inside.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [("trivial_k", n, n / 6) for n in (12, 24, 48)]
    >>> rows += [("slope", 0, 1 / 6), ("intercept", 0, 0.0), ("r_squared", 0, 1.0), ("samples_per_step", 0, 6.0)]
    >>> summary = pd.DataFrame(rows, columns=["measure", "n", "estimate"]).assign(method="ld_highest_density")
    >>> fig = band_triviality_figure(summary)
    >>> len(fig.axes), [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    (1, ['LD highest-density: 6.00 samples per step, R² = 1.0000'])
    >>> plt.close(fig)
    """
    from simstudy.chart_style import axes_title, colorblind, labels, legend, theme
    from simstudy.figures import method_label

    plt = theme()
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, colorblind(len(methods))))
    fig, ax = plt.subplots(figsize=(5.0, 4.2), layout="constrained")
    for method in methods:
        s = summary[summary["method"] == method]
        pts = s[s["measure"] == "trivial_k"].sort_values("n")
        fit = s.set_index("measure")["estimate"]
        ax.plot(pts["n"], pts["estimate"], "o", ms=4, color=palette[method])
        ax.plot(
            pts["n"],
            fit["intercept"] + fit["slope"] * pts["n"],
            color=palette[method],
            lw=1,
            label=f"{method_label(method)}: {fit['samples_per_step']:.2f} samples per step, R² = {fit['r_squared']:.4f}",
        )
    labels(ax, xlabel="n (sample size)", ylabel="k where the upper band becomes trivial")
    legend(ax, share=0.6, fontsize=7)
    axes_title(ax, title or "Upper median tuning-curve band: iterations bounded (exact)")
    return fig


STUDY = register_study(
    Study(
        kind="band_triviality",
        options=Options,
        run=run,
        figure=band_triviality_figure,
        headline=headline,
        sweep=Headline({"measure": "trivial_k"}, "n", "method", "trivial budget"),
    )
)
