"""Fixed-budget model selection (Moss et al. 2019, §5.1, Figure 4): how often each algorithm picks the best.

The arms are the study's distributions (e.g. the 12 TDSA models: one evaluation is one draw, with
replacement, from that model's 500 recorded F1 scores -- the paper's protocol). The best arm is the one
with the highest population mean. For each budget, ``study.reps`` independent selections are run with each
algorithm (:func:`simstudy.stats.selection.sequential_halving_runs`, :func:`~simstudy.stats.selection.non_adaptive_runs`),
each from its own random stream. Reported: the probability of selecting the best arm (Clopper-Pearson
interval), how often each arm is chosen, and the mean unspent budget. The named variants of sequential halving
(e.g. ``sequential_halving_spend_all``; :data:`simstudy.stats.selection.HALVING_VARIANTS`) test what Moss et al. may
have run for Figure 4; they get the same budget checks before any compute.
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
from simstudy.distributions import generic
from simstudy.engine.runner import Task, task_seed
from simstudy.plugins import selection_algorithm_check
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import ConfigError, option
from simstudy.stats import selection
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, at_least_arms, chunk_reps_option, reps_option

__all__ = ["run", "Options", "headline", "STUDY", "model_selection_figure"]

_SCHEME = "model_selection/1"


@dataclass(frozen=True)
class _Work:
    seed: int
    arms: tuple
    budgets: dict  # cell key -> budget
    algorithms: tuple  # the functions, built-in or plugins.SelectionPlugin (pickled by import path)


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    budget = work.budgets[task.cell]
    N = len(work.arms)
    chosen = np.zeros((len(work.algorithms), N), dtype=np.int64)
    unspent = np.zeros(len(work.algorithms))
    for a, algorithm in enumerate(work.algorithms):
        rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, a))
        picks, evaluations = algorithm(work.arms, budget, task.reps, rng=rng)
        chosen[a] = np.bincount(picks, minlength=N)
        unspent[a] = (budget - evaluations.sum(axis=1)).sum()
    return {"chosen": chosen, "unspent": unspent}


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the fixed-budget selection study over the arms in ``config.distributions``.

    Each distribution is an arm (one evaluation is one draw); the best arm has the highest population mean.
    For every budget of ``study.budgets`` (one cell each), every algorithm of ``study.algorithms`` runs
    ``study.reps`` independent selections. This reproduces Moss et al. (2019), §5.1, Figure 4 (preset
    ``fiesta_fig4``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"model_selection"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). It has at least two distributions (checked when the config is parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, with columns
        ``cell``, ``distribution`` (``"arms"``), ``algorithm``, ``budget`` (evaluations), ``reps``, ``arm``,
        ``measure``, ``estimate``, ``mcse``, ``ci_low``, ``ci_high``: per (budget, algorithm) ``p_correct``
        (the probability of selecting the best arm, in [0, 1], Clopper-Pearson interval at ``study.ci_level``),
        ``unspent`` (mean evaluations left unspent) and ``chosen_rate`` per arm; ``report``, ``files``
        (``summary_parquet``, ``summary_csv``, ``run``) and ``kind``.

    Raises
    ------
    ValueError
        If sequential halving (or a named variant) cannot run at a budget (too small for its rounds); the
        config's check reports this as a :class:`~simstudy.schema.ConfigError` first.
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Moss, H. B., Leslie, D. S., & Rayson, P. (2019). FIESTA: fast identification of state-of-the-art models
    using adaptive bandit algorithms. ACL 2019.

    Examples
    --------
    Three arms (bags), budgets of 6 and 12 evaluations, 100 selections per algorithm:

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"a": {"kind": "bag", "values": [0.5, 0.6, 0.7]},
    ...                      "b": {"kind": "bag", "values": [0.7, 0.8, 0.9]},
    ...                      "c": {"kind": "bag", "values": [0.4, 0.5, 0.6]}},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "model_selection", "reps": 100, "chunk_reps": 100, "budgets": [6, 12]},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> s = result.summary
    >>> print(s[s.measure == "p_correct"].pivot(index="budget", columns="algorithm", values="estimate"))
    algorithm  non_adaptive  sequential_halving
    budget
    6                   1.0                0.99
    12                  1.0                1.00
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    algorithms, budgets, ci_level = tuple(opts.algorithms), tuple(opts.budgets), opts.ci_level
    arms, names, means, best = selection.arms_of(config.distributions)
    for b in budgets:  # fail before any compute if a budget cannot run
        _check_halving(algorithms, len(arms), b)
    cells = {base.cell_key(arms=[d.key for d in config.distributions], budget=b): b for b in budgets}
    functions = tuple(plugins.selection_algorithm(name, "fixed_budget") for name in algorithms)
    settings = {"budgets": budgets, "algorithms": algorithms}
    # a plug-in's code joins the fingerprint (an edited plug-in never resumes its old chunks); built-ins' stays
    sources = {n: s for n in algorithms if (s := plugins.selection_settings(n, "fixed_budget")) is not None}
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(cells),
        chunk_fn=partial(_run_chunk, _Work(config.seed, arms, cells, functions)),
        settings={**settings, "plugins": sources} if sources else settings,
        stage=stage,
    )
    rows = []
    for key, budget in run_.succeeded(cells).items():
        R = run_.reps(key)  # study.reps, or the cell's own under study.precision
        chosen, unspent = run_.total(key, "chosen"), run_.total(key, "unspent")
        for a, name in enumerate(algorithms):
            head = dict(cell=key, distribution="arms", algorithm=name, budget=budget, reps=R)
            k = chosen[a, best]
            low, high = clopper_pearson(k, R, ci_level)
            p = k / R
            rows.append(
                dict(
                    head,
                    arm=names[best],
                    measure="p_correct",
                    estimate=p,
                    mcse=float(np.sqrt(p * (1 - p) / R)),
                    ci_low=float(low),
                    ci_high=float(high),
                )
            )
            rows.append(
                dict(
                    head, arm="", measure="unspent", estimate=unspent[a] / R, mcse=np.nan, ci_low=np.nan, ci_high=np.nan
                )
            )
            lows, highs = clopper_pearson(chosen[a], R, ci_level)
            rows += [
                dict(
                    head,
                    arm=names[m],
                    measure="chosen_rate",
                    estimate=chosen[a, m] / R,
                    mcse=float(np.sqrt(chosen[a, m] / R * (1 - chosen[a, m] / R) / R)),
                    ci_low=float(lows[m]),
                    ci_high=float(highs[m]),
                )
                for m in range(len(arms))
            ]
    metadata = generic.arms_metadata(arms, names, means, best)
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata=metadata)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a model_selection study, the keys ``study.*`` of its config.

    The arms are the config's distributions. The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> schema.parse(Options, {"budgets": [204], "algorithms": ["non_adaptive"]}, "study.").budgets
    (204,)
    >>> schema.parse(Options, {"budgets": [0]}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.budgets must be an integer >= 1, got 0
    """

    reps: int = reps_option(10000)
    chunk_reps: int = chunk_reps_option(5000)
    algorithms: tuple[str, ...] = option(
        ("sequential_halving", "non_adaptive"),
        "the fixed-budget algorithms compared: "
        "sequential_halving, non_adaptive, a named variant of sequential halving "
        "(sequential_halving_spend_all, sequential_halving_last_round_means, "
        "sequential_halving_drop_ceil, sequential_halving_first_8), a registered name or a "
        "plug-in's import path module.function",
        schema.listed(
            selection_algorithm_check("fixed_budget"), what="at least one algorithm", unique=False, sort=False
        ),
    )
    budgets: tuple[int, ...] = option(
        (48, 72, 96, 120, 144, 168, 204, 240, 300, 360),
        "the budgets T (evaluations in all, each at least the number of arms; one cell each)",
        schema.listed(schema.integer(minimum=1), what="at least one budget"),
    )
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """P(best model selected) with its MCSE, per budget and algorithm: what ``simstudy`` prints.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``budget``, ``algorithm``, ``measure``, ``estimate``, ``mcse``).

    Returns
    -------
    str
        A title line, then one row per budget and one column per algorithm: the probability (4 decimals)
        with its MCSE in brackets.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "budget": [204, 204], "algorithm": ["sequential_halving", "non_adaptive"], "measure": "p_correct",
    ...     "estimate": [0.968, 0.857], "mcse": [0.0018, 0.0035]})
    >>> print(headline(summary))
    P(best model selected), MCSE in brackets
    algorithm     non_adaptive sequential_halving
    budget
    204        0.8570 (0.0035)    0.9680 (0.0018)
    """
    p = summary[summary["measure"] == "p_correct"]
    table = p.assign(value=p["estimate"].map("{:.4f}".format) + " (" + p["mcse"].map("{:.4f}".format) + ")").pivot(
        index="budget", columns="algorithm", values="value"
    )
    return f"P(best model selected), MCSE in brackets\n{table.to_string()}"


def _check_halving(algorithms, n_arms: int, budget: int) -> None:
    """Raise if sequential halving, or a named variant of it, in ``algorithms`` cannot run at ``budget``."""
    for name in algorithms:
        if name in selection.HALVING_VARIANTS:
            selection.halving_schedule(n_arms, budget, **selection.HALVING_VARIANTS[name])


def _check(config: Config) -> None:
    at_least_arms(config)
    arms, opts = len(config.distributions), config.study.options
    for name in opts.algorithms:
        first = selection.HALVING_VARIANTS.get(name, {}).get("first_arms")
        if first is not None and first > arms:
            raise ConfigError(f"study.algorithms: {name} selects among the first {first} arms; the study has {arms}")
    for b in opts.budgets:
        try:
            _check_halving(opts.algorithms, arms, b)
        except ValueError as exc:
            raise ConfigError(f"study.budgets: {exc}") from None
    if min(opts.budgets) < arms:
        raise ConfigError(
            f"study.budgets: every budget must allow one evaluation of each of the {arms} arms, got {min(opts.budgets)}"
        )


def model_selection_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Probability of selecting the best model against the budget, one line per algorithm (Moss et al. Figure 4).

    Each line has its 95% Clopper-Pearson band.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``model_selection`` study (:mod:`simstudy.studies.model_selection`); the rows
        with ``measure == "p_correct"`` are drawn: columns ``algorithm``, ``budget`` (model evaluations),
        ``estimate`` (a probability in [0, 1]), ``ci_low``, ``ci_high``, ``arm`` (the best model's name) and
        ``reps`` (runs per budget).
    title : str, optional, keyword-only
        The axes' title. Default None: one naming the best model and the runs per budget.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> summary = pd.DataFrame(
    ...     {"algorithm": ["sequential_halving"] * 2 + ["non_adaptive"] * 2, "budget": [24, 48] * 2,
    ...      "estimate": [0.8, 0.9, 0.7, 0.85]}
    ... ).assign(measure="p_correct", arm="b", reps=100)
    >>> summary = summary.assign(ci_low=summary.estimate - 0.05, ci_high=summary.estimate + 0.05)
    >>> fig = model_selection_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'best: b; 100 runs per budget (bands: Clopper–Pearson)')
    >>> plt.close(fig)
    """
    from simstudy.chart_style import axes_title, colorblind, draw_band, labels, legend, shade_patch, theme

    plt = theme()
    p = summary[summary["measure"] == "p_correct"]
    algorithms = list(dict.fromkeys(p["algorithm"]))
    palette = dict(zip(algorithms, colorblind(len(algorithms))))
    fig, ax = plt.subplots(figsize=(5.2, 4.0), layout="constrained")
    for name in algorithms:
        draw_band(
            ax,
            p[p["algorithm"] == name],
            "budget",
            name.replace("_", " "),
            palette[name],
            low="ci_low",
            high="ci_high",
            marker="o",
            ms=3,
        )
    labels(ax, xlabel="budget (model evaluations)", ylabel="P(best model selected)")
    legend(ax, extra=[shade_patch("95% Clopper–Pearson interval")], loc="lower right")
    best = p["arm"].iloc[0] if len(p) else ""
    axes_title(ax, title or f"best: {best}; {int(p['reps'].max()):,} runs per budget (bands: Clopper–Pearson)")
    return fig


STUDY = register_study(
    Study(
        kind="model_selection",
        options=Options,
        run=run,
        figure=model_selection_figure,
        headline=headline,
        sweep=Headline({"measure": "p_correct"}, "budget", "algorithm", "P(best model selected)"),
        check=_check,
    )
)
