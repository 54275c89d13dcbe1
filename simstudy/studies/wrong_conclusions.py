"""How often an estimator ranks two models the wrong way round (Dodge et al. 2021, §4, Figure 2).

A practitioner runs B trials of random search for each of two models and compares the estimated expected
maximum at n = B. For every budget B and estimator, this study draws ``study.reps`` such pairs of searches
and counts how often the estimates put the models in the wrong order.

"Wrong" is judged against the *true* ranking at n = B -- the exact expected maxima of the two populations
(:func:`simstudy.stats.truth.expected_max`) -- not against any estimator's verdict on the full data. Where the true
gap ``|theta_a(B) - theta_b(B)|`` is at most ``study.tie_tolerance`` the budget is a true tie: no ranking is
wrong there, and only the win and tie rates are reported. Identical estimates for the two models are
counted as ties, never as right or wrong.

Summary (tidy, one row per (B, estimator, measure)): ``wrong_rate`` (absent at true ties), ``right_rate``,
``tie_rate``, ``a_wins_rate``, ``b_wins_rate`` -- proportions of ``reps`` draws with Clopper-Pearson
intervals in ``ci_low``/``ci_high`` (confidence ``study.confidence``) and binomial standard errors in
``mcse`` -- and ``mean_gap``, the mean estimated gap a - b with its MCSE. Estimator ``"truth"`` carries
``expected_max_a``, ``expected_max_b``, ``true_gap`` and ``true_tie`` (1 or 0) per B; with ``minimize: true``
(lower is better) the first two are ``expected_min_a``, ``expected_min_b``, and the gaps are of the minima.

The paper's own pair (a CNN and a linear bag-of-embeddings on SST-5) is not public; the presets use the
Reuters MLP vs LSTM runs of Tang et al. (2020), DeBERTa vs DeBERTaV3 on MultiNLI, and a synthetic pair.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import ScoreDistribution, describe, sample_sorted
from simstudy.engine.memory import check_budget_memory
from simstudy.engine.runner import Task, stable_hash, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import ConfigError, option
from simstudy.stats import estimators, truth
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["run", "Options", "headline", "STUDY", "wrong_conclusions_figure"]

_SCHEME = "wrong_conclusions/1"


@dataclass(frozen=True)
class _Cell:
    key: str
    B: int
    weights: np.ndarray  # (E, B) closed-form weights at n = B (zero rows for bootstraps and plug-ins)


@dataclass(frozen=True)
class _Work:
    seed: int
    a: ScoreDistribution
    b: ScoreDistribution
    cells: dict
    estimators: tuple
    plugins: dict = dataclasses.field(default_factory=dict)  # e -> simstudy.plugins.PluginEstimator


def _estimates_at_B(x: np.ndarray, cell: _Cell, specs, rngs: dict, plugins: dict) -> np.ndarray:
    """Each estimator at n = B for each sorted sample; shape (reps, E)."""
    est = x @ cell.weights.T
    for e, spec in enumerate(specs):
        if spec.method == "bootstrap":
            est[:, e] = estimators.expected_max(
                x, "bootstrap", n=cell.B, presorted=True, resamples=spec.resamples, rng=rngs[e]
            )[:, 0]
        elif e in plugins:
            est[:, e] = plugins[e](x, np.array([cell.B]), rng=rngs[e])[:, 0]
    return est


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    """Draw ``reps`` searches of B trials for each model; count wins and ties per estimator."""
    cell = work.cells[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    xa = sample_sorted(work.a, task.reps, cell.B, rng=rng)
    xb = sample_sorted(work.b, task.reps, cell.B, rng=rng)
    rngs = {
        e: np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 1, int(stable_hash(s.name)[:8], 16)))
        for e, s in enumerate(work.estimators)
        if s.method == "bootstrap" or e in work.plugins
    }
    diff = _estimates_at_B(xa, cell, work.estimators, rngs, work.plugins) - _estimates_at_B(
        xb, cell, work.estimators, rngs, work.plugins
    )
    counts = np.stack([(diff > 0).sum(axis=0), (diff < 0).sum(axis=0), (diff == 0).sum(axis=0)])
    return {"counts": counts.astype(np.int64), "gap_sums": np.stack([diff.sum(axis=0), (diff * diff).sum(axis=0)])}


def _proportion_rows(row: dict, measure: str, k: np.ndarray, reps: int, confidence: float) -> list[dict]:
    p = k / reps
    low, high = clopper_pearson(k, reps, confidence)
    return [
        dict(
            row,
            estimator=name,
            measure=measure,
            estimate=float(p[e]),
            mcse=float(np.sqrt(p[e] * (1 - p[e]) / reps)),
            ci_low=float(low[e]),
            ci_high=float(high[e]),
            reps=reps,
        )
        for e, name in enumerate(row.pop("names"))
    ]


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the wrong-conclusion study for the two distributions of ``config``.

    For every budget B of ``config.budget.B`` (one cell each), ``study.reps`` times: draw B scores from each of
    the two distributions (``a`` first, ``b`` second), estimate each model's expected maximum at n = B with
    every estimator of ``config.estimators``, and count whether the estimates rank the models as the exact
    expected maxima do. This reproduces Dodge et al. (2021), Figure 2 (preset ``dodge2021_fig2``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"wrong_conclusions"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). It has exactly two distributions (checked when the config is parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (B, estimator, measure) with columns ``cell``, ``distribution`` (``"a vs b"``), ``B``, ``estimator``,
        ``n`` (= B), ``measure``, ``estimate``, ``mcse``, ``ci_low``, ``ci_high`` and ``reps``: the rates
        ``wrong_rate`` (absent at a true tie), ``right_rate``, ``tie_rate``, ``a_wins_rate``, ``b_wins_rate``
        (proportions in [0, 1] with Clopper-Pearson intervals at ``study.confidence``), ``mean_gap`` (score
        units) and, as estimator ``"truth"``, ``expected_max_a``, ``expected_max_b`` (``expected_min_a``,
        ``expected_min_b`` with ``minimize: true``), ``true_gap``, ``true_tie``; ``report``, ``files`` (``summary_parquet``, ``summary_csv``, ``run``) and ``kind``.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance
    and estimation of a random variable's maximum. Findings of EMNLP 2021.

    Examples
    --------
    Two four-value bags whose expected maxima differ; 1,000 pairs of searches at B = 3 and B = 8.

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"a": {"kind": "bag", "values": [0.5, 0.6, 0.7, 0.8]},
    ...                      "b": {"kind": "bag", "values": [0.55, 0.6, 0.65, 0.9]}},
    ...     "budget": {"B": [3, 8], "n": None},
    ...     "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "wrong_conclusions", "reps": 1000, "chunk_reps": 1000},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> s = result.summary
    >>> print(s[s.measure.isin(["true_gap", "wrong_rate"])].pivot(index="B", columns="estimator", values="estimate").round(4))
    estimator   truth      u      v
    B
    3         -0.0437  0.380  0.377
    8         -0.0852  0.096  0.100

    Model b has the larger expected maximum at both budgets, and both estimators say otherwise in about 38% of
    the pairs at B = 3 and 10% at B = 8.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    options = config.study.options
    tie_tolerance, confidence = options.tie_tolerance, options.confidence
    spec_a, spec_b = config.distributions
    a, b = spec_a.build(), spec_b.build()
    specs = config.estimators
    names = [s.name for s in specs]
    plugins = {e: s.plugin() for e, s in enumerate(specs) if s.is_plugin}

    cells: dict[str, _Cell] = {}
    for B in config.budget.B:
        key = base.cell_key(a=spec_a.key, b=spec_b.key, B=B)
        W = np.zeros((len(specs), B))
        for e, spec in enumerate(specs):
            if spec.method in estimators.CLOSED_FORM:
                W[e] = estimators.weights(B, spec.method, [B])[0]
        cells[key] = _Cell(key, B, W)
    Bs = np.array(config.budget.B)
    theta_a, theta_b = truth.expected_max(a, Bs), truth.expected_max(b, Bs)

    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, _Work(config.seed, a, b, cells, specs, plugins)),
        settings={"estimators": [s.settings for s in specs]},
        stage=stage,
    )

    pair = f"{spec_a.name} vs {spec_b.name}"
    rows = []
    for i, (key, cell) in enumerate(cells.items()):
        if key in run_.failed_cells:  # reported by base.finish, not summarised from partial data
            continue
        gap = theta_a[i] - theta_b[i]
        tie = abs(gap) <= tie_tolerance
        head = dict(cell=key, distribution=pair, B=cell.B, n=cell.B)
        for measure, value in (
            ("expected_max_a", theta_a[i]),
            ("expected_max_b", theta_b[i]),
            ("true_gap", gap),
            ("true_tie", float(tie)),
        ):
            rows.append(
                dict(
                    head,
                    estimator="truth",
                    measure=measure,
                    estimate=float(value),
                    mcse=0.0,
                    ci_low=np.nan,
                    ci_high=np.nan,
                    reps=0,
                )
            )
        a_wins, b_wins, ties = run_.total(key, "counts")
        reps = int(a_wins[0] + b_wins[0] + ties[0])
        measures = {"a_wins_rate": a_wins, "b_wins_rate": b_wins, "tie_rate": ties}
        if not tie:
            wrong, right = (b_wins, a_wins) if gap > 0 else (a_wins, b_wins)
            measures.update(wrong_rate=wrong, right_rate=right)
        for measure, k in measures.items():
            rows += _proportion_rows(dict(head, names=names), measure, k, reps, confidence)
        sums, squares = run_.total(key, "gap_sums")
        mean = sums / reps
        sd = np.sqrt(np.clip((squares - reps * mean**2) / (reps - 1), 0.0, None))
        rows += [
            dict(
                head,
                estimator=name,
                measure="mean_gap",
                estimate=float(mean[e]),
                mcse=float(sd[e] / np.sqrt(reps)),
                ci_low=np.nan,
                ci_high=np.nan,
                reps=reps,
            )
            for e, name in enumerate(names)
        ]
    summary = pd.DataFrame(rows)[
        ["cell", "distribution", "B", "estimator", "n", "measure", "estimate", "mcse", "ci_low", "ci_high", "reps"]
    ]
    if spec_a.minimize:  # both draw -X (config.parse checks): a "wins" with the lower scores; gaps, truths in X
        pair = summary["distribution"].unique()
        summary = base.mirror_back(summary, pair, ("mean_gap", "expected_max_a", "expected_max_b", "true_gap"))
    metadata = {
        "pair": {"a": spec_a.name, "b": spec_b.name},
        "tie_tolerance": tie_tolerance,
        "confidence": confidence,
        "distributions": {spec_a.name: describe(a), spec_b.name: describe(b)},
    }
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a wrong_conclusions study, the keys ``study.*`` of its config.

    The two models are the config's two distributions, the budgets ``budget.B``, the estimators the
    ``estimators`` group. The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> Options()
    Options(reps=50000, chunk_reps=10000, save_replicates=False, tie_tolerance=1e-12, confidence=0.95)
    >>> schema.parse(Options, {"confidence": 0.99}, "study.").confidence
    0.99
    >>> schema.parse(Options, {"tie_tolerance": -1}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.tie_tolerance must be a number >= 0, got -1
    """

    reps: int = reps_option(50000)
    chunk_reps: int = chunk_reps_option(10000)
    tie_tolerance: float = option(
        1e-12,
        "a true gap abs(theta_a(B) - theta_b(B)) at or below this (in score units) is a tie: no ranking is wrong there, "
        "and wrong_rate is not reported",
        schema.number(minimum=0),
    )
    confidence: float = option(0.95, "the level of the Clopper-Pearson intervals of the rates", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """The wrong-conclusion rate of each estimator at each B, beside the true gap: what ``simstudy`` prints.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``B``, ``estimator``, ``measure``, ``estimate``).

    Returns
    -------
    str
        A title line, then a table with one row per B and one column per estimator of the ``wrong_rate``
        (a proportion in [0, 1]; blank at a true tie) and, as column ``truth``, the true gap a - b (score
        units), rounded to 4 decimals.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "B": [5, 5, 5, 10, 10, 10], "estimator": ["truth", "u", "v"] * 2,
    ...     "measure": ["true_gap", "wrong_rate", "wrong_rate"] * 2,
    ...     "estimate": [0.01, 0.31, 0.28, 0.012, 0.22, 0.19]})
    >>> print(headline(summary))
    wrong-conclusion rates (truth: true gap a - b)
    estimator  truth     u     v
    B
    5          0.010  0.31  0.28
    10         0.012  0.22  0.19
    """
    table = summary[summary["measure"].isin(["wrong_rate", "true_gap"])].pivot_table(
        index="B", columns=["estimator"], values="estimate"
    )
    return f"wrong-conclusion rates (truth: true gap a - b)\n{table.round(4).to_string()}"


def _check(config: Config) -> None:
    dists = config.distributions
    if len(dists) != 2:
        raise ConfigError(
            f"a wrong_conclusions study compares two models: distribution must name exactly two, "
            f"got {len(dists)} ({', '.join(d.name for d in dists)})"
        )
    check_budget_memory(config, cells=len(config.budget.B), samples_per_replicate=2)


def wrong_conclusions_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Wrong-conclusion rate against the budget B, one line per estimator (Dodge et al. 2021, Figure 2).

    Bands are Clopper-Pearson intervals. A lower panel shows the true gap theta_a(B) - theta_b(B), so a
    crossover of the true ranking is visible (a dotted vertical line where it flips); budgets that are true
    ties are marked and have no rate.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``wrong_conclusions`` study (:mod:`simstudy.studies.wrong_conclusions`):
        columns ``distribution`` (``"a vs b"``, the two models' names), ``B`` (trials per model),
        ``estimator``, ``measure``, ``estimate``, ``ci_low``, ``ci_high`` and ``reps``. Rate rows have
        ``measure == "wrong_rate"`` (a probability in [0, 1] with its Clopper-Pearson interval); rows with
        ``estimator == "truth"`` give, per B, ``"true_gap"`` (score units) and ``"true_tie"`` (0 or 1).
    title : str, optional, keyword-only
        The figure's title. Default None: one naming the models and the draws per budget.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing the B axis: the rates (top) and the true gap (bottom).

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance and
    estimation of a random variable's maximum. Findings of EMNLP 2021, arXiv:2110.00613.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> truth = pd.DataFrame(
    ...     {"B": [2, 4, 8] * 2, "measure": ["true_gap"] * 3 + ["true_tie"] * 3,
    ...      "estimate": [0.02, 0.01, -0.01, 0, 0, 0]}
    ... ).assign(estimator="truth")
    >>> rates = pd.DataFrame(
    ...     {"B": [2, 4, 8], "estimate": [0.3, 0.4, 0.35], "ci_low": [0.25, 0.35, 0.3], "ci_high": [0.35, 0.45, 0.4]}
    ... ).assign(estimator="u", measure="wrong_rate", reps=200)
    >>> fig = wrong_conclusions_figure(pd.concat([rates, truth]).assign(distribution="a vs b"), title="a vs b")
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    from simstudy.chart_style import draw_band, estimator_label, labels, legend, shade_patch, suptitle, theme
    from simstudy.figures import estimator_palette

    plt = theme()
    rates = summary[summary["measure"] == "wrong_rate"]
    ests = list(dict.fromkeys(rates["estimator"]))
    palette = estimator_palette(ests)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(5.5, 6.0), sharex=True, height_ratios=[2.2, 1], layout="constrained"
    )
    truth = summary[summary["estimator"] == "truth"].pivot_table(index="B", columns="measure", values="estimate")
    # "Wrong" flips meaning where the true ranking flips: draw each run of budgets with one true winner apart.
    side = np.sign(truth["true_gap"].where(truth["true_tie"] == 0, 0.0))
    runs = (side != side.shift()).cumsum()
    for est in ests:
        r = rates[rates["estimator"] == est]
        for k, run_budgets in enumerate(truth.index[side != 0].groupby(runs[side != 0]).values()):
            draw_band(
                top,
                r[r["B"].isin(run_budgets)],
                "B",
                estimator_label(est) if k == 0 else None,
                palette[est],
                low="ci_low",
                high="ci_high",
                marker="o",
                ms=3,
            )
    for b_prev, b_next in zip(truth.index[:-1], truth.index[1:]):
        if side[b_prev] * side[b_next] < 0:
            for ax in (top, bottom):
                ax.axvline((b_prev + b_next) / 2, color="grey", ls=":", lw=1)
    labels(top, ylabel="wrong-conclusion rate")
    top.set_ylim(0, max(0.05, float(rates["ci_high"].max()) * 1.1) if len(rates) else 1)
    legend(top, extra=[shade_patch("95% Clopper–Pearson interval")])
    bottom.plot(truth.index, truth["true_gap"], color="black", marker="o", ms=3)
    bottom.axhline(0, color="grey", lw=0.8)
    ties = truth.index[truth["true_tie"] > 0]
    if len(ties):
        bottom.plot(ties, truth.loc[ties, "true_gap"], "x", color="red", label="true tie (no rate)")
        legend(bottom)
    a, b = str(summary["distribution"].iloc[0]).split(" vs ")
    labels(bottom, xlabel="B (trials per model; estimates compared at n = B)", ylabel=f"true gap\n{a} − {b}")
    reps = int(rates["reps"].max()) if len(rates) else 0
    suptitle(fig, title or f"{a} vs {b}: {reps:,} draws per budget (bands: Clopper–Pearson)")
    return fig


STUDY = register_study(
    Study(
        kind="wrong_conclusions",
        options=Options,
        run=run,
        figure=wrong_conclusions_figure,
        headline=headline,
        sweep=Headline({"measure": "wrong_rate"}, "B", "estimator", "wrong-conclusion rate"),
        check=_check,
        plugin_estimators=True,
    )
)
