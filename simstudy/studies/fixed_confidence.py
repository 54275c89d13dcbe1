"""Fixed-confidence model selection (Moss et al. 2019, §5.2, Tables 2 and 3): evaluations needed and how
often the best model is chosen.

The arms are the study's distributions (for the paper, 8 TDSA models: one evaluation is one draw, with
replacement, from that model's 500 recorded F1 scores). The best arm has the highest population mean. Each
algorithm -- top-two Thompson sampling, the non-adaptive baseline, batch Thompson sampling with each batch
size, or a plug-in proposal (a name registered with :func:`simstudy.plugins.register_selection_algorithm` or
an import path ``module.function``, the fixed-confidence contract of :mod:`simstudy.stats.selection`) -- runs
``study.reps`` independent selections; each run is continued to the strictest confidence and its
stopping point recorded for every ``delta`` on the way (the choices do not depend on delta; see
:func:`simstudy.stats.selection.fixed_confidence_runs`), so the levels share their runs and their results are
correlated, as the paper's would be if its runs were reused.

Reported per algorithm and delta: the minimum, mean (with MCSE), median and maximum total evaluations; the
probability the best model is chosen (Clopper-Pearson interval); how many runs hit ``max_evaluations``
(capped runs keep the model they would have chosen then and count at the cap; they are reported, never
dropped); and the mean evaluations of each model.

Options that test what the paper may have done differently (each off by default; the default runs and their
chunks are unchanged): ``initial`` evaluations per model before the first update, per algorithm (the authors'
TTTS notebook evaluates 5); ``counted_initial``, how many of them the counts include (that notebook counts 3);
``distinct_batches`` (a batch of distinct models); ``mc_draws`` (a Monte Carlo pi in the stopping rule). With
``common_numbers`` every algorithm reads the same score streams (model m's j-th evaluation in run r is the same
score), so ``differences`` between algorithms are paired run by run; each difference carries its SD and the runs
a two-sided 5% test needs to resolve it with 80% power.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io, plugins, schema, schema_docs
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

__all__ = ["run", "variants", "paper_table", "Options", "headline", "STUDY", "fixed_confidence_figure"]

_SCHEME = "fixed_confidence/1"
# The sub-stream of the common score streams (variants use the one-number sub-streams 0, 1, ...).
_STREAMS = (0, 1)
# Normal quantiles of the runs-for-power measure: two-sided 5% test, 80% power.
_Z_ALPHA, _Z_POWER = 1.959963984540054, 0.8416212335729143


def variants(algorithms: tuple[str, ...], batch_sizes: tuple[int, ...]) -> list[tuple[str, str, int]]:
    """The variants a fixed-confidence study runs: every algorithm, batch Thompson sampling once per batch size.

    Parameters
    ----------
    algorithms : tuple of str
        Algorithm names, as in ``study.algorithms``.
    batch_sizes : tuple of int
        Batch sizes (models per batch, >= 1), as in ``study.batch_sizes``; used by ``"batch_thompson"`` only.

    Returns
    -------
    list of tuple (str, str, int)
        ``(label, algorithm, batch)`` in the order of ``algorithms``: the label is the algorithm's name, or
        ``batch_thompson_<b>`` for batch Thompson sampling with batch b; other algorithms get batch 1.

    Examples
    --------
    >>> variants(("ttts", "batch_thompson"), (4, 8))
    [('ttts', 'ttts', 1), ('batch_thompson_4', 'batch_thompson', 4), ('batch_thompson_8', 'batch_thompson', 8)]
    """
    out = []
    for name in algorithms:
        if name == "batch_thompson":
            out += [(f"batch_thompson_{b}", name, b) for b in batch_sizes]
        else:
            out.append((name, name, 1))
    return out


def _proposal(name: str, batch: int, distinct: bool = False):
    """The proposal of one variant: batch Thompson sampling's with its batch size bound (picklable)."""
    propose = plugins.selection_algorithm(name, "fixed_confidence")
    if name != "batch_thompson":
        return propose
    return partial(propose, batch=batch, distinct=True) if distinct else partial(propose, batch=batch)


def per_algorithm(values: tuple, algorithms: tuple, labels) -> tuple:
    """One value per variant from ``values``: a single value for every algorithm, or one per algorithm in the
    order of ``algorithms`` (batch Thompson sampling's value serves each of its batch sizes)."""
    of = dict(zip(algorithms, values)) if len(values) > 1 else dict.fromkeys(algorithms, values[0])
    return tuple(of[name] for _, name, _ in labels)


@dataclass(frozen=True)
class _Work:
    seed: int
    arms: tuple
    deltas: tuple
    variants: tuple
    proposals: tuple  # per variant: the proposal function, built-in or plugins.SelectionPlugin (by import path)
    max_evaluations: int
    logit: bool
    initials: tuple = ()  # per variant; () = 3 each
    common_numbers: bool = False
    mc_draws: int | None = None


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    V, D, N = len(work.variants), len(work.deltas), len(work.arms)
    out = {
        "evaluations": np.zeros((V, D, task.reps), dtype=np.int64),
        "chosen": np.zeros((V, D, task.reps), dtype=np.int64),
        "capped": np.zeros((V, D, task.reps), dtype=bool),
        "per_arm": np.zeros((V, D, N), dtype=np.int64),
    }
    for v, propose in enumerate(work.proposals):
        rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, v))
        # common random numbers: every variant reads the same score streams, a sub-stream of no variant's
        streams = (
            np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, *_STREAMS))
            if work.common_numbers
            else None
        )
        runs = selection.fixed_confidence_runs(
            work.arms,
            work.deltas,
            task.reps,
            algorithm=propose,
            rng=rng,
            max_evaluations=work.max_evaluations,
            logit=work.logit,
            initial=work.initials[v] if work.initials else 3,
            streams=streams,
            mc_draws=work.mc_draws,
        )
        out["evaluations"][v], out["chosen"][v], out["capped"][v] = runs.evaluations, runs.chosen, runs.capped
        out["per_arm"][v] = runs.per_arm.sum(axis=1)
    return out


def paper_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary in the layout of Moss et al. (2019), Tables 2-3.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``algorithm``, ``delta``, ``measure``, ``estimate``, ``mcse``,
        ``reps``, with measures ``evaluations_min``, ``evaluations_mean``, ``evaluations_max``, ``p_correct``
        and ``capped``). Rows of differences between variants (``study.differences``) are left out.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, delta), in the summary's order, with columns ``algorithm``, ``delta``,
        ``min``, ``mean``, ``mean_mcse`` (evaluations, the mean and its MCSE to 1 decimal), ``max``,
        ``pct_correct`` (% of runs that chose the best model, 1 decimal) and ``capped`` (runs that hit
        ``study.max_evaluations``).

    References
    ----------
    Moss, H. B., Leslie, D. S., & Rayson, P. (2019). FIESTA: fast identification of state-of-the-art models
    using adaptive bandit algorithms. ACL 2019.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "algorithm": "ttts", "delta": 0.1, "reps": 500,
    ...     "measure": ["evaluations_min", "evaluations_mean", "evaluations_max", "p_correct", "capped"],
    ...     "estimate": [24.0, 96.53, 460.0, 0.994, 0.0], "mcse": [float("nan"), 2.31, float("nan"), 0.0035, 0.0]})
    >>> paper_table(summary)
      algorithm  delta  min  mean  mean_mcse  max  pct_correct  capped
    0      ttts    0.1   24  96.5        2.3  460         99.4       0
    """
    rows = []
    for (label, delta), g in summary.groupby(["algorithm", "delta"], sort=False):
        m = g.set_index("measure")
        if "evaluations_min" not in m.index:  # a difference between variants (study.differences)
            continue
        rows.append(
            {
                "algorithm": label,
                "delta": delta,
                "min": int(m.loc["evaluations_min", "estimate"]),
                "mean": round(float(m.loc["evaluations_mean", "estimate"]), 1),
                "mean_mcse": round(float(m.loc["evaluations_mean", "mcse"]), 1),
                "max": int(m.loc["evaluations_max", "estimate"]),
                "pct_correct": round(100 * float(m.loc["p_correct", "estimate"]), 1),
                "capped": int(round(m.loc["capped", "estimate"] * m.loc["capped", "reps"])),
            }
        )
    return pd.DataFrame(rows)


def _summary_rows(
    run_: base.ChunkedRun,
    key: str,
    labels,
    deltas,
    names,
    best: int,
    R: int,
    ci_level: float,
    uncounted: tuple = (),
    differences: bool = False,
    paired: bool = False,
) -> list[dict]:
    """Tidy rows per algorithm and delta from the cell's per-run results.

    ``uncounted[v]`` initial evaluations per model of variant v are left out of its counts (``study.
    counted_initial``). With ``differences``, rows per later variant and delta: the mean difference of the first
    variant's evaluations minus its own (``evaluations_difference``, with MCSE; paired run by run when
    ``paired``), the SD of one difference (``difference_sd``: of the paired differences, else
    ``sqrt(var_1 + var_2)``) and the runs per variant a two-sided 5% test needs to find that difference with
    80% power, ``((z_0.975 + z_0.8) * sd / difference)^2`` (``runs_for_power``).
    """
    evaluations, chosen = run_.stacked(key, "evaluations"), run_.stacked(key, "chosen")
    capped, per_arm = run_.stacked(key, "capped"), run_.total(key, "per_arm")
    N = len(names)
    if uncounted:
        cut = np.asarray(uncounted, dtype=np.int64)
        evaluations = evaluations - (cut * N)[:, None, None]
        per_arm = per_arm - (cut * R)[:, None, None]
    rows = []
    for v, (label, _, batch) in enumerate(labels):
        for d, delta in enumerate(deltas):
            head = dict(
                cell=key,
                distribution="arms",
                algorithm=label,
                batch=batch,
                delta=delta,
                confidence=1 - delta,
                reps=R,
                arm="",
            )
            e = evaluations[v, d].astype(np.float64)
            for measure, value, mcse in (
                ("evaluations_min", e.min(), np.nan),
                ("evaluations_mean", e.mean(), e.std(ddof=1) / np.sqrt(R)),
                ("evaluations_median", np.median(e), np.nan),
                ("evaluations_max", e.max(), np.nan),
            ):
                rows.append(
                    dict(head, measure=measure, estimate=float(value), mcse=float(mcse), ci_low=np.nan, ci_high=np.nan)
                )
            for measure, k in (("p_correct", int((chosen[v, d] == best).sum())), ("capped", int(capped[v, d].sum()))):
                low, high = clopper_pearson(k, R, ci_level)
                p = k / R
                rows.append(
                    dict(
                        head,
                        measure=measure,
                        arm=names[best] if measure == "p_correct" else "",
                        estimate=p,
                        mcse=float(np.sqrt(p * (1 - p) / R)),
                        ci_low=float(low),
                        ci_high=float(high),
                    )
                )
            rows += [
                dict(
                    head,
                    measure="arm_evaluations",
                    arm=names[m],
                    estimate=per_arm[v, d, m] / R,
                    mcse=np.nan,
                    ci_low=np.nan,
                    ci_high=np.nan,
                )
                for m in range(N)
            ]
    for v in range(1, len(labels)) if differences else ():
        for d, delta in enumerate(deltas):
            a, b = evaluations[0, d].astype(np.float64), evaluations[v, d].astype(np.float64)
            diff = float(a.mean() - b.mean())
            sd = float(np.std(a - b, ddof=1) if paired else np.sqrt(a.var(ddof=1) + b.var(ddof=1)))
            with np.errstate(divide="ignore"):
                runs = float(((_Z_ALPHA + _Z_POWER) * sd / abs(diff)) ** 2) if diff else np.inf
            head = dict(
                cell=key,
                distribution="arms",
                algorithm=f"{labels[0][0]} - {labels[v][0]}",
                batch=0,
                delta=delta,
                confidence=1 - delta,
                reps=R,
                arm="",
                ci_low=np.nan,
                ci_high=np.nan,
            )
            rows += [
                dict(head, measure="evaluations_difference", estimate=diff, mcse=sd / np.sqrt(R)),
                dict(head, measure="difference_sd", estimate=sd, mcse=np.nan),
                dict(head, measure="runs_for_power", estimate=runs, mcse=np.nan),
            ]
    return rows


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the fixed-confidence selection study over the arms in ``config.distributions``.

    Each distribution is an arm; the best has the highest population mean. Every variant (:func:`variants`)
    runs ``study.reps`` selections, each continued to the strictest confidence 1 - min(delta) and its stopping
    point recorded for every delta of ``study.deltas`` (one cell for all). This reproduces Moss et al. (2019),
    §5.2, Tables 2 and 3 (presets ``fiesta_table2``, ``fiesta_table3``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"fixed_confidence"`` (:func:`simstudy.config.parse`, or
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
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (variant, delta, measure[, arm]) with columns ``cell``, ``distribution``, ``algorithm`` (the variant's
        label), ``batch``, ``delta``, ``confidence``, ``reps``, ``arm``, ``measure``, ``estimate``, ``mcse``,
        ``ci_low``, ``ci_high``: ``evaluations_min`` / ``_mean`` / ``_median`` / ``_max`` (evaluations per
        run), ``p_correct`` (Clopper-Pearson interval at ``study.ci_level``), ``capped``, ``arm_evaluations``
        and, with ``study.differences``, the paired differences; ``files`` adds ``table_csv`` and ``table_md``,
        :func:`paper_table` of the summary.

    Raises
    ------
    %(run_raises)s
    simstudy.engine.chunks.RunDirConflict
        If ``out_dir`` holds the chunks of a different configuration.

    References
    ----------
    Moss, H. B., Leslie, D. S., & Rayson, P. (2019). FIESTA: fast identification of state-of-the-art models
    using adaptive bandit algorithms. ACL 2019.

    Examples
    --------
    Three arms (bags), TTTS and the non-adaptive baseline at delta = 0.2, 4 runs each:

    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"a": {"kind": "bag", "values": [0.5, 0.6, 0.7]},
    ...                      "b": {"kind": "bag", "values": [0.7, 0.8, 0.9]},
    ...                      "c": {"kind": "bag", "values": [0.4, 0.5, 0.6]}},
    ...     "budget": {"B": 2},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "fixed_confidence", "reps": 4, "chunk_reps": 4, "deltas": [0.2],
    ...               "max_evaluations": 30},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    ...     print(sorted(result.files))
    ['run', 'summary_csv', 'summary_parquet', 'table_csv', 'table_md']
    >>> paper_table(result.summary)
          algorithm  delta  min  mean  mean_mcse  max  pct_correct  capped
    0          ttts    0.2    9  10.2        0.6   12        100.0       0
    1  non_adaptive    0.2    9  11.2        0.8   12        100.0       0
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    deltas, cap, logit, ci_level = opts.deltas, opts.max_evaluations, opts.logit, opts.ci_level
    labels = tuple(variants(opts.algorithms, opts.batch_sizes))
    arms, names, means, best = selection.arms_of(config.distributions)
    key = base.cell_key(arms=[d.key for d in config.distributions])
    proposals = tuple(_proposal(name, batch, opts.distinct_batches) for _, name, batch in labels)
    initials = per_algorithm(opts.initial, opts.algorithms, labels)
    work = _Work(config.seed, arms, deltas, labels, proposals, cap, logit, initials, opts.common_numbers, opts.mc_draws)
    settings = {"deltas": deltas, "variants": labels, "max_evaluations": cap, "logit": logit}
    # options that change the runs join the fingerprint only when set, so default runs keep their chunks
    if any(i != 3 for i in initials):
        settings["initials"] = initials
    if opts.common_numbers:
        settings["common_numbers"] = True
    if opts.distinct_batches:
        settings["distinct_batches"] = True
    if opts.mc_draws is not None:
        settings["mc_draws"] = opts.mc_draws
    # a plug-in's code joins the fingerprint (an edited plug-in never resumes its old chunks); built-ins' stays
    sources = {
        n: s
        for n in dict.fromkeys(name for _, name, _ in labels)
        if (s := plugins.selection_settings(n, "fixed_confidence")) is not None
    }
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=[key],
        chunk_fn=partial(_run_chunk, work),
        settings={**settings, "plugins": sources} if sources else settings,
        stage=stage,
    )
    R = run_.reps(key)  # study.reps, or the cell's own under study.precision
    # a cell whose chunks failed is reported by base.finish, not summarised from part of its runs
    counted = None if opts.counted_initial is None else per_algorithm(opts.counted_initial, opts.algorithms, labels)
    uncounted = tuple(i - c for i, c in zip(initials, counted)) if counted else ()
    rows = (
        _summary_rows(
            run_, key, labels, deltas, names, best, R, ci_level, uncounted, opts.differences, opts.common_numbers
        )
        if run_.succeeded({key: 0})
        else []
    )
    summary = pd.DataFrame(rows)
    table = paper_table(summary) if rows else pd.DataFrame()
    files = {"table_csv": out_dir / "table.csv", "table_md": out_dir / "table.md"}
    io.write_csv(table, files["table_csv"])
    io.write_text(io.markdown_table(table), files["table_md"])
    metadata = generic.arms_metadata(arms, names, means, best)
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata, files=files)


@schema.accepting("a number strictly between 0 and 0.5")
def _delta(key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 0.5:
        raise ConfigError(
            f"{key} must be numbers strictly between 0 and 0.5 (confidence 1 - delta above one half), got {value!r}"
        )
    return float(value)


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a fixed_confidence study, the keys ``study.*`` of its config.

    The arms are the config's distributions. The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one. Checks across keys (``max_evaluations`` against
    the arms and ``initial``; the lengths of ``initial`` and ``counted_initial``; ``logit`` against the
    supports) run when the whole config is parsed.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> opts = schema.parse(Options, {"algorithms": ["batch_thompson"], "common_numbers": True}, "study.")
    >>> opts.algorithms, opts.batch_sizes, opts.deltas
    (('batch_thompson',), (4, 8), (0.05, 0.1, 0.2))
    >>> schema.parse(Options, {"deltas": [0.6]}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.deltas must be numbers strictly between 0 and 0.5 (confidence 1 - delta above one half), got 0.6
    """

    reps: int = reps_option(500)
    chunk_reps: int = chunk_reps_option(125)
    algorithms: tuple[str, ...] = option(
        ("ttts", "non_adaptive"),
        "the algorithms compared: ttts (top-two Thompson sampling), non_adaptive, "
        "batch_thompson, a registered name or a plug-in proposal's import path module.function",
        schema.listed(selection_algorithm_check("fixed_confidence"), what="at least one algorithm", sort=False),
    )
    batch_sizes: tuple[int, ...] = option(
        (4, 8),
        "models per batch: batch_thompson runs once per batch size",
        schema.listed(schema.integer(minimum=1), what="at least one batch size"),
    )
    deltas: tuple[float, ...] = option(
        (0.05, 0.1, 0.2),
        "each run stops when one arm is best with probability > 1 - delta",
        schema.listed(_delta, what="at least one delta"),
    )
    max_evaluations: int = option(
        10000, "the cap of evaluations per run; capped runs are counted and reported", schema.integer(minimum=1)
    )
    logit: bool = option(False, "model the logit of the scores (scores must lie in (0, 1))", schema.boolean())
    ci_level: float = option(0.95, "the level of the Clopper-Pearson intervals", schema.level())
    initial: tuple[int, ...] = option(
        (3,),
        "evaluations of every model before the first update (>= 3): one value for every "
        "algorithm, or one per algorithm in the order of study.algorithms",
        schema.listed(schema.integer(minimum=3), what="at least one count", unique=False, sort=False),
    )
    counted_initial: tuple[int, ...] | None = option(
        None,
        "report counts as if every model's initial evaluations had been "
        "this many (the rest left out of the counts; the authors' TTTS "
        "notebook evaluates 5 and counts 3): one value or one per algorithm; "
        "null counts every evaluation",
        schema.optional(schema.listed(schema.integer(minimum=0), what="at least one count", unique=False, sort=False)),
    )
    distinct_batches: bool = option(
        False,
        "batch_thompson draws its batch from pi without replacement "
        "(distinct models; a batch of every model is the non-adaptive step)",
        schema.boolean(),
    )
    common_numbers: bool = option(
        False,
        "common random numbers: the j-th evaluation of a model in run r is the "
        "same score for every algorithm, so differences between algorithms are paired",
        schema.boolean(),
    )
    mc_draws: int | None = option(
        None,
        "pi of the stopping rule by this many Monte Carlo draws per step (the "
        "FIESTA package's way, with 100,000 per model); null: by quadrature",
        schema.optional(schema.integer(minimum=1)),
    )
    differences: bool = option(
        False,
        "also report each algorithm's mean difference in evaluations from the first "
        "(first minus it; paired with common_numbers), its SD and the runs needed to "
        "resolve it at 80% power (two-sided 5%)",
        schema.boolean(),
    )


def headline(summary: pd.DataFrame) -> str:
    """Evaluations needed and % correctly selected, in the layout of Moss et al. Tables 2-3.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run`.

    Returns
    -------
    str
        A title line, then :func:`paper_table` of the summary as text (no index).

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "algorithm": "ttts", "delta": 0.1, "reps": 500,
    ...     "measure": ["evaluations_min", "evaluations_mean", "evaluations_max", "p_correct", "capped"],
    ...     "estimate": [24.0, 96.53, 460.0, 0.994, 0.0], "mcse": [float("nan"), 2.31, float("nan"), 0.0035, 0.0]})
    >>> print(headline(summary))
    evaluations needed and % correctly selected (Moss et al. Tables 2-3 layout)
    algorithm  delta  min  mean  mean_mcse  max  pct_correct  capped
         ttts    0.1   24  96.5        2.3  460         99.4       0
    """
    return (
        f"evaluations needed and % correctly selected (Moss et al. Tables 2-3 layout)\n"
        f"{paper_table(summary).to_string(index=False)}"
    )


def _check(config: Config) -> None:
    at_least_arms(config)
    dists, opts = config.distributions, config.study.options
    if opts.max_evaluations < 3 * len(dists):
        raise ConfigError(
            f"study.max_evaluations must allow the initial three evaluations of each of the "
            f"{len(dists)} arms ({3 * len(dists)}), got {opts.max_evaluations}"
        )
    for name in ("initial", "counted_initial"):
        values = getattr(opts, name)
        if values is not None and len(values) not in (1, len(opts.algorithms)):
            raise ConfigError(
                f"study.{name} must have one value or one per algorithm ({len(opts.algorithms)}), got {list(values)}"
            )
    if opts.counted_initial is not None:
        for name, i, c in zip(
            opts.algorithms,
            *(v * len(opts.algorithms) if len(v) == 1 else v for v in (opts.initial, opts.counted_initial)),
        ):
            if c > i:
                raise ConfigError(f"study.counted_initial must not exceed study.initial ({i} for {name}), got {c}")
    if opts.max_evaluations < max(opts.initial) * len(dists):
        raise ConfigError(
            f"study.max_evaluations must allow the initial {max(opts.initial)} evaluations of each "
            f"of the {len(dists)} arms ({max(opts.initial) * len(dists)}), got {opts.max_evaluations}"
        )
    if opts.logit:
        for d in dists:
            low, high = d.build().support
            if not (0 <= low and high <= 1) or (not d.continuous and not (0 < low and high < 1)):
                raise ConfigError(
                    f"study.logit=true needs scores inside (0, 1); distribution {d.name} has "
                    f"support [{low:g}, {high:g}]"
                )


def fixed_confidence_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Evaluations needed and P(correct) against the confidence 1 - delta, one line per algorithm.

    Moss et al. Tables 2-3 as a figure. Left: the mean total evaluations with +/- 2 MCSE error bars and the
    min-max range over runs shaded (log scale). Right: P(best model selected) with Clopper-Pearson intervals,
    beside the nominal 1 - delta.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``fixed_confidence`` study (:mod:`simstudy.studies.fixed_confidence`): columns
        ``algorithm``, ``confidence`` (1 - delta, in (0.5, 1)), ``measure`` (``"evaluations_mean"``,
        ``"evaluations_min"``, ``"evaluations_max"`` in model evaluations; ``"p_correct"`` a probability),
        ``estimate``, ``mcse``, ``ci_low``, ``ci_high``, ``arm`` (the best model's name) and ``reps`` (runs).
        Algorithms without an ``evaluations_mean`` row (differences between two) are not drawn.
    title : str, optional, keyword-only
        The figure's title. Default None: one naming the best model and the runs per algorithm.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: evaluations (left) and P(correct) (right).

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> measures = {"evaluations_mean": 40, "evaluations_min": 20, "evaluations_max": 80, "p_correct": 0.95}
    >>> rows = [(a, m, c, v) for a in ("ttts", "non_adaptive") for c in (0.9, 0.95) for m, v in measures.items()]
    >>> summary = pd.DataFrame(rows, columns=["algorithm", "measure", "confidence", "estimate"])
    >>> summary = summary.assign(mcse=1.0, ci_low=0.9, ci_high=0.99, reps=100, arm="b")
    >>> fig = fixed_confidence_figure(summary, title="TTTS vs non-adaptive")
    >>> len(fig.axes), fig.axes[0].get_yscale()
    (2, 'log')
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D

    from simstudy.chart_style import colorblind, labels, legend, shade_patch, suptitle, theme

    plt = theme()
    # one line per algorithm (not per difference between two, see the study's differences option)
    algorithms = list(dict.fromkeys(summary.loc[summary["measure"] == "evaluations_mean", "algorithm"]))
    palette = dict(zip(algorithms, colorblind(len(algorithms))))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4.4), layout="constrained")
    for name in algorithms:
        s = summary[summary["algorithm"] == name]
        m = s[s["measure"] == "evaluations_mean"].sort_values("confidence")
        lo = s[s["measure"] == "evaluations_min"].sort_values("confidence")
        hi = s[s["measure"] == "evaluations_max"].sort_values("confidence")
        label = name.replace("_", " ")
        left.errorbar(
            m["confidence"],
            m["estimate"],
            yerr=2 * m["mcse"],
            color=palette[name],
            marker="o",
            ms=3,
            capsize=2,
            label=label,
        )
        left.fill_between(m["confidence"], lo["estimate"], hi["estimate"], color=palette[name], alpha=0.12, lw=0)
        p = s[s["measure"] == "p_correct"].sort_values("confidence")
        right.errorbar(
            p["confidence"],
            p["estimate"],
            yerr=[p["estimate"] - p["ci_low"], p["ci_high"] - p["estimate"]],
            color=palette[name],
            marker="o",
            ms=3,
            capsize=2,
        )
    conf = np.sort(summary["confidence"].unique())
    right.plot(conf, conf, color="0.4", ls="--", lw=1)
    left.set_yscale("log")
    labels(left, xlabel="confidence 1 − δ", ylabel="total evaluations (shaded: min–max)")
    labels(right, xlabel="confidence 1 − δ", ylabel="P(best model selected)")
    # One legend below both panels: the error bars reach into every corner of either.
    extra = [
        shade_patch("min–max over runs", alpha=0.15),
        Line2D([], [], color="0.4", ls="--", lw=1, label="nominal 1 − δ (right)"),
        Line2D(
            [],
            [],
            color="0.3",
            marker="|",
            ls="none",
            ms=8,
            label="bars: mean ± 2 MCSE (left), Clopper–Pearson (right)",
        ),
    ]
    legend(fig, left, extra, fontsize=7, loc="outside lower center", ncols=3)
    reps = int(summary["reps"].max()) if len(summary) else 0
    best = summary.loc[summary["measure"] == "p_correct", "arm"].iloc[0] if len(summary) else ""
    suptitle(fig, title or f"Fixed-confidence selection, best: {best}; {reps:,} runs per algorithm")
    return fig


STUDY = register_study(
    Study(
        kind="fixed_confidence",
        options=Options,
        run=run,
        figure=fixed_confidence_figure,
        headline=headline,
        sweep=Headline({"measure": "evaluations_mean"}, "confidence", "algorithm", "mean evaluations"),
        check=_check,
    )
)
