"""How often two random samples of a pair's runs disagree whether one model ever beats the other (Lourie et al.
Figure 1).

Lourie et al. (§5.1, Figure 1) analyse two different random samples of 25 search iterations of the Reuters MLP
and LSTM (Tang et al. 2020): on one sample the point estimates of the mean tuning curve say the LSTM overtakes
the MLP (V after 20 steps, U after 13), on the other the LSTM never beats it. This study measures how often
that happens. For each sample size n and estimator it draws ``study.reps`` samples of n runs per model and
counts the samples whose estimated curve of the second model (the challenger, ``b``: the LSTM of
``distribution=pair_reuters``) is strictly above the first's (``a``: the MLP) at some budget k = 1..n:

- ``p_overtakes`` = p, the probability that a sample's point estimates say ``b`` beats ``a`` at some k <= n;
  estimate k/R with the binomial MCSE sqrt(p(1 - p)/R);
- ``p_disagree`` = 2p(1 - p), the probability that two independent samples disagree (one says ``b`` beats
  ``a`` at some k, the other that it never does), estimated without bias over all R(R - 1)/2 pairs of the
  R samples, 2k(R - k)/(R(R - 1)), with the MCSE of that U-statistic (its exact variance, p estimated):
  ``4(R-2)/(R(R-1)) (1-2p)^2 p(1-p) + 2 q(1-q)/(R(R-1))``, q = 2p(1-p). (The delta method's first term alone
  vanishes at p = 1/2; the second keeps the MCSE honest there. Being unbiased, the estimate may exceed the
  parameter's maximum 1/2, by at most 1/(2(R - 1)).)

Sampling (``study.replace``). The paper's samples are subsets of the runs Tang et al. published, so by default
(``replace: false``) each sample is n *distinct* runs drawn without replacement from each model's finite set
of runs (every n-subset equally likely, independently per sample): exactly the paper's procedure, with the
published runs as the population. ``replace: true`` draws n runs with replacement instead -- i.i.d. draws from
the runs' empirical distribution, the usual stand-in for a fresh search of the model (and what the empirical
distributions of the other studies do); it also takes continuous distributions. With 145 and 152 runs the two
differ by a few points of p.

Summary (tidy): one row per (sample_size, estimator, measure): ``estimate``, ``mcse``, ``reps``, and
``lower_joint``/``upper_joint``, a 95% *simultaneous* Monte Carlo band over the sample sizes for each
(estimator, measure) curve: every sample size is its own cell with its own random streams, so the points of a
curve are independent and the sup-t critical value is Šidák's, ``Phi^-1((1 + 0.95^(1/K)) / 2)`` for K points
with a positive MCSE (:func:`simstudy.stats.joint.sidak_critical`; 1.96 for one sample size); the band is
``estimate ± c mcse``. Cells are the
sample sizes; each chunk's draws come from seeds keyed by the cell and the chunk, so numbers do not depend on
``runner.n_jobs``. Hot path: one (reps, m) array of random keys per model and chunk (``argpartition`` picks the
subset), one matrix product per estimator; no loop over replicates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import schema, schema_docs
from simstudy.config import Config
from simstudy.distributions import Bag, describe, sample_sorted
from simstudy.engine.memory import check_chunk_memory, check_memory
from simstudy.engine.runner import Task, task_seed
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import ConfigError, option
from simstudy.stats import estimators, joint
from simstudy.stats.metrics import format_estimate
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = [
    "run",
    "Options",
    "headline",
    "draw_sorted",
    "overtakes",
    "p_disagree",
    "STUDY",
    "sample_disagreement_figure",
]

_SCHEME = "sample_disagreement/1"
# Simultaneous coverage of the lower_joint/upper_joint bands over the sample sizes (recorded in run.json).
_JOINT_LEVEL = 0.95


def draw_sorted(dist, reps: int, n: int, *, replace: bool, rng: np.random.Generator) -> np.ndarray:
    """``reps`` samples of ``n`` runs, each row sorted ascending; shape (reps, n).

    Parameters
    ----------
    dist : ScoreDistribution
        With ``replace=False`` a :class:`~simstudy.distributions.Bag` of at least ``n`` runs (its finite
        population); with ``replace=True`` any distribution.
    reps : int
        Samples (rows), >= 1.
    n : int
        Runs per sample (columns), >= 1; at most the bag's size without replacement.
    replace : bool
        Keyword-only. False: ``n`` distinct runs per row, every n-subset of the ``m`` runs equally likely (the
        smallest ``n`` of ``m`` uniform keys, :func:`numpy.argpartition`). True: i.i.d. draws
        (:func:`simstudy.distributions.sample_sorted`).
    rng : numpy.random.Generator
        Keyword-only. The source of randomness.

    Returns
    -------
    ndarray of float, shape (reps, n)
        The samples, in score units, each row sorted ascending.

    Notes
    -----
    Without replacement a chunk holds a (reps, m) array of keys: ``8 m`` bytes per replicate.

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> bag = Bag([0.1, 0.2, 0.3, 0.4])
    >>> draw_sorted(bag, 3, 4, replace=False, rng=np.random.default_rng(0)).tolist()   # each row: all 4 runs
    [[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]]
    >>> draw_sorted(bag, 2, 3, replace=True, rng=np.random.default_rng(0)).tolist()
    [[0.3, 0.3, 0.4], [0.1, 0.2, 0.2]]
    """
    if replace:
        return sample_sorted(dist, reps, n, rng=rng)
    values = dist.values  # sorted ascending: sorting the chosen indices sorts the scores
    keys = rng.random((reps, values.size))
    idx = np.argpartition(keys, n - 1, axis=1)[:, :n]  # the n smallest keys: a uniformly random n-subset
    idx.sort(axis=1)
    return values[idx]


def overtakes(xa: np.ndarray, xb: np.ndarray, method: str) -> np.ndarray:
    """Whether ``b``'s estimated tuning curve is strictly above ``a``'s at some budget k = 1..n, per sample.

    Parameters
    ----------
    xa : ndarray of float, shape (reps, n)
        Samples of the first model (``a``), each row sorted ascending, score units.
    xb : ndarray of float, shape (reps, n)
        Samples of the second model (``b``), row by row with ``xa``, sorted likewise.
    method : {"u", "v", "w"}
        The closed-form estimator of the mean tuning curve (:func:`simstudy.stats.estimators.weights`).

    Returns
    -------
    ndarray of bool, shape (reps,)
        True where ``b``'s estimated curve exceeds ``a``'s at some k in 1..n.

    Examples
    --------
    >>> a = np.array([[0.70, 0.80]]); b = np.array([[0.50, 0.99]])
    >>> overtakes(a, b, "v").tolist(), overtakes(b, a, "v").tolist()   # b is worse at k = 1, better at k = 2
    ([True], [True])
    """
    W = estimators.weights(xa.shape[1], method)  # (n, n): row k-1 is the budget k
    return ((xb @ W.T) > (xa @ W.T)).any(axis=1)


def p_disagree(k, reps) -> tuple[np.ndarray, np.ndarray]:
    """The unbiased estimate of 2p(1 - p) from ``k`` successes in ``reps`` samples, and its MCSE.

    Parameters
    ----------
    k : array_like of int
        Samples whose curve says "overtakes" (0 <= k <= reps); broadcast with ``reps``.
    reps : array_like of int
        Samples drawn, R >= 2.

    Returns
    -------
    estimate : ndarray of float
        ``2k(R - k) / (R(R - 1))``, the share of the R(R - 1)/2 pairs of samples that disagree: a probability
        in [0, 1] (NumPy scalar for scalar input).
    mcse : ndarray of float
        The square root of that U-statistic's exact variance with p = k/R (same shape).

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> float(p_disagree(1, 2)[0]), [float(v) for v in p_disagree(0, 10)]   # one pair, which disagrees; none
    (1.0, [0.0, 0.0])
    """
    k, R = np.asarray(k, dtype=np.float64), np.asarray(reps, dtype=np.float64)
    p = k / R
    q = 2 * p * (1 - p)
    var = 4 * (R - 2) / (R * (R - 1)) * (1 - 2 * p) ** 2 * p * (1 - p) + 2 * q * (1 - q) / (R * (R - 1))
    return 2 * k * (R - k) / (R * (R - 1)), np.sqrt(np.clip(var, 0.0, None))


@dataclass(frozen=True)
class _Work:
    seed: int
    a: object
    b: object
    sizes: dict  # cell key -> sample size n
    methods: tuple  # closed-form estimator methods, in the config's order
    replace: bool


def _run_chunk(work: _Work, task: Task) -> dict[str, np.ndarray]:
    """Draw ``task.reps`` samples of n runs per model; count per estimator the samples where b overtakes a."""
    n = work.sizes[task.cell]
    rng = np.random.default_rng(task_seed(work.seed, task.cell, task.chunk, 0))
    xa = draw_sorted(work.a, task.reps, n, replace=work.replace, rng=rng)
    xb = draw_sorted(work.b, task.reps, n, replace=work.replace, rng=rng)
    return {"overtakes": np.array([overtakes(xa, xb, m).sum() for m in work.methods], dtype=np.int64)}


@base.run_documented
def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the sample-disagreement study for the two distributions of ``config``.

    For each n of ``study.sample_sizes`` (one cell each), ``study.reps`` times: draw a sample of n runs of
    each model (:func:`draw_sorted`) and ask, with every estimator of ``config.estimators``, whether ``b``'s
    curve overtakes ``a``'s at some k <= n (:func:`overtakes`). This puts a number on Lourie et al. (2024),
    Figure 1 (preset ``lourie_fig1_disagreement``).

    Parameters
    ----------
    config : simstudy.config.Config
        A validated config whose ``study.kind`` is ``"sample_disagreement"`` (:func:`simstudy.config.parse`, or
        :func:`simstudy.compose` for a preset); ``config.study.options`` is an :class:`Options`.
    out_dir : str or path-like
        The run directory, created if missing; chunks already stored there for the same configuration are
        reused (a larger ``study.reps`` computes only the new ones). It has exactly two distributions and closed-form estimators
        (checked when the config is parsed).
    stage : simstudy.studies.base.Stage or None, optional
        The precision rule's stage (``study.precision``; :func:`simstudy.studies.precision.run_study` passes
        it), handed to :func:`~simstudy.studies.base.run_chunks`. Default None: ``study.reps`` per cell.

    Returns
    -------
    simstudy.studies.base.StudyResult
        ``summary``: the tidy DataFrame also written to ``summary.parquet`` / ``summary.csv``, one row per
        (sample_size, estimator, measure) with columns ``cell``, ``distribution`` (``"a vs b"``),
        ``sample_size``, ``estimator``, ``measure`` (``p_overtakes`` or ``p_disagree``, probabilities in
        [0, 1]), ``estimate``, ``mcse`` and ``reps``; ``report``, ``files`` (``summary_parquet``,
        ``summary_csv``, ``run``) and ``kind``.

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
    >>> import tempfile
    >>> from simstudy import config
    >>> cfg = config.parse({
    ...     "seed": 0,
    ...     "distribution": {"a": {"kind": "bag", "values": [0.5, 0.6, 0.7, 0.8]},
    ...                      "b": {"kind": "bag", "values": [0.4, 0.55, 0.65, 0.9]}},
    ...     "budget": {"B": 2},
    ...     "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "sample_disagreement", "reps": 2000, "chunk_reps": 2000,
    ...               "sample_sizes": [3], "replace": True},
    ...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    ... })
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = run(cfg, tmp)
    >>> print(result.summary[["estimator", "measure", "estimate", "mcse"]].round(4).to_string(index=False))
    estimator     measure  estimate   mcse
            u p_overtakes    0.6375 0.0107
            u  p_disagree    0.4624 0.0059
            v p_overtakes    0.6020 0.0109
            v  p_disagree    0.4794 0.0045
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    spec_a, spec_b = config.distributions
    a, b = spec_a.build(), spec_b.build()
    names = [e.name for e in config.estimators]
    methods = tuple(e.method for e in config.estimators)
    sizes = {base.cell_key(a=spec_a.key, b=spec_b.key, n=n, replace=opts.replace): n for n in opts.sample_sizes}
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(sizes),
        chunk_fn=partial(_run_chunk, _Work(config.seed, a, b, sizes, methods, opts.replace)),
        settings={"estimators": [e.settings for e in config.estimators], "replace": opts.replace},
        stage=stage,
    )
    pair = f"{spec_a.name} vs {spec_b.name}"
    rows = []
    for key, n in run_.succeeded(sizes).items():
        k = run_.total(key, "overtakes")
        reps = sum(t.reps for t in run_.tasks_by_cell[key])
        p = k / reps
        disagree, disagree_mcse = p_disagree(k, reps)
        head = dict(cell=key, distribution=pair, sample_size=n)
        for e, name in enumerate(names):
            rows.append(
                dict(
                    head,
                    estimator=name,
                    measure="p_overtakes",
                    estimate=float(p[e]),
                    mcse=float(np.sqrt(p[e] * (1 - p[e]) / reps)),
                    reps=reps,
                )
            )
            rows.append(
                dict(
                    head,
                    estimator=name,
                    measure="p_disagree",
                    estimate=float(disagree[e]),
                    mcse=float(disagree_mcse[e]),
                    reps=reps,
                )
            )
    columns = ["cell", "distribution", "sample_size", "estimator", "measure", "estimate", "mcse", "reps"]
    summary = _joint_columns(pd.DataFrame(rows, columns=columns))
    metadata = {
        "joint": {"level": _JOINT_LEVEL, "method": "Šidák over the sample sizes (independent cells)"},
        "pair": {"a": spec_a.name, "b": spec_b.name},
        "replace": opts.replace,
        "distributions": {spec_a.name: describe(a), spec_b.name: describe(b)},
    }
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata)


def _joint_columns(summary: pd.DataFrame) -> pd.DataFrame:
    """``lower_joint``/``upper_joint``: each (estimator, measure) curve's simultaneous band over the sample sizes.

    The cells are independent, so the sup-t value is Šidák's for the K points with a positive MCSE (a point
    whose MCSE is 0, p = 0 or 1, is exact and keeps itself). Both measures are probabilities: the band is cut
    to [0, 1], where the truth lies (which keeps its coverage).
    """
    half = np.zeros(len(summary))
    for _, rows in summary.groupby(["estimator", "measure"], sort=False):
        mcse = rows["mcse"].to_numpy(dtype=float)
        K = int(np.sum(np.isfinite(mcse) & (mcse > 0)))
        half[summary.index.get_indexer(rows.index)] = joint.sidak_critical(max(K, 1), _JOINT_LEVEL) * mcse
    return summary.assign(
        lower_joint=(summary["estimate"] - half).clip(lower=0.0),
        upper_joint=(summary["estimate"] + half).clip(upper=1.0),
    )


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a sample_disagreement study, the keys ``study.*`` of its config.

    The two models are the config's two distributions (``a`` first, the challenger ``b`` second).
    The dataclass holds the defaults; the values of a config are checked by :func:`simstudy.schema.parse`
    (called by :func:`simstudy.config.parse`), which raises a :class:`~simstudy.schema.ConfigError` naming the
    key for an invalid one. Whether the distributions suit ``replace`` is checked when the whole config is parsed.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> schema.parse(Options, {"sample_sizes": [50, 10, 25]}, "study.").sample_sizes
    (10, 25, 50)
    >>> schema.parse(Options, {"replace": "yes"}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.replace must be true or false, got 'yes'
    """

    reps: int = reps_option(100000)
    chunk_reps: int = chunk_reps_option(10000)
    sample_sizes: tuple[int, ...] = option(
        (25,),
        "the runs per model in each sample, n (one cell each), e.g. [25] (Lourie et al. Figure 1)",
        schema.listed(schema.integer(minimum=1), what="at least one sample size"),
    )
    replace: bool = option(
        False,
        "false: each sample is n distinct runs of each model's finite set (the paper's "
        "subsets; needs bags of at least n runs); true: n draws with replacement (the runs' empirical "
        "distribution; works for any distribution)",
        schema.boolean(),
    )


def headline(summary: pd.DataFrame) -> str:
    """P(a sample says b overtakes a) and P(two samples disagree), each with its MCSE, per n and estimator.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary of :func:`run` (columns ``distribution``, ``sample_size``, ``estimator``, ``measure``,
        ``estimate``, ``mcse``).

    Returns
    -------
    str
        A title line naming the pair, then one row per (sample_size, estimator) with ``p_disagree`` and
        ``p_overtakes`` as ``estimate ± MCSE``, rounded to the digits the MCSE supports
        (:func:`simstudy.stats.metrics.format_estimate`).

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({
    ...     "distribution": "mlp vs lstm", "sample_size": 25, "estimator": "v",
    ...     "measure": ["p_overtakes", "p_disagree"], "estimate": [0.55, 0.494], "mcse": [0.0016, 0.0003]})
    >>> print(headline(summary))
    mlp vs lstm: p_overtakes (a sample's curves say the second model beats the first at some k <= n), p_disagree (two samples disagree) ± MCSE
    measure                     p_disagree      p_overtakes
    sample_size estimator
    25          v          0.4940 ± 0.0003  0.5500 ± 0.0016
    """
    s = summary[summary["measure"].isin(["p_overtakes", "p_disagree"])].copy()
    s["value"] = [format_estimate(e, m) for e, m in zip(s["estimate"], s["mcse"])]
    table = s.pivot(index=["sample_size", "estimator"], columns="measure", values="value")
    pair = s["distribution"].iloc[0] if len(s) else ""
    return (
        f"{pair}: p_overtakes (a sample's curves say the second model beats the first at some k <= n), "
        f"p_disagree (two samples disagree) ± MCSE\n{table.to_string()}"
    )


def _check(config: Config) -> None:
    dists, opts = config.distributions, config.study.options
    if len(dists) != 2:
        raise ConfigError(
            f"a sample_disagreement study compares two models: distribution must name exactly two, "
            f"got {len(dists)} ({', '.join(d.name for d in dists)})"
        )
    for e in config.estimators:
        if e.method not in estimators.CLOSED_FORM:
            raise ConfigError(
                f"estimators.{e.name}: a sample_disagreement study takes the closed-form estimators "
                f"{', '.join(estimators.CLOSED_FORM)}, got method={e.method}"
            )
    n = max(opts.sample_sizes)
    if not opts.replace:
        for d in dists:
            dist = d.build()
            if not isinstance(dist, Bag):
                raise ConfigError(
                    f"study.replace=false draws subsets of a finite set of runs, but distribution "
                    f"{d.name} ({d.kind}) is not one (kinds empirical, file, bag): set "
                    f"study.replace=true to draw with replacement"
                )
            if dist.weights is not None:  # a population with ragged seeds: its runs are not equally likely
                raise ConfigError(
                    f"study.replace=false draws subsets of equally likely runs, but {d.name}'s runs are weighted "
                    f"(configurations with different numbers of seeds): set study.replace=true"
                )
            if dist.size < n:
                raise ConfigError(
                    f"study.sample_sizes: {n} exceeds the {dist.size} runs of {d.name} (without "
                    f"replacement; study.replace=true draws with replacement)"
                )
        # every worker holds a (chunk_reps, m) array of keys and its partition
        m = max(d.build().size for d in dists)
        check_memory(
            "study.chunk_reps",
            opts.chunk_reps,
            24.0 * opts.chunk_reps * m,
            f"a chunk's {opts.chunk_reps} x {m} random keys",
            "lower study.chunk_reps",
        )
    check_chunk_memory(config, cells=len(opts.sample_sizes))


def sample_disagreement_figure(summary: pd.DataFrame, *, title: str | None = None):
    """How often samples' point estimates say one model overtakes another, against n (Lourie et al. 2024, Fig. 1).

    One line per estimator, Lourie et al.'s Figure 1 in numbers. Left: p, the probability that one random sample's
    estimated mean tuning curves say the challenger ``b`` beats ``a`` at some budget k <= n; right: 2p(1 - p), the
    probability that two independent samples disagree about it (its maximum 1/2 dotted). Error bars are each
    curve's 95% simultaneous Monte Carlo band over n (``lower_joint``/``upper_joint``: Šidák's, the sample sizes
    being independent), or +/- 1.96 MCSE for a summary without them; the legend says which. Estimators at one
    sample size are drawn a little apart so that their bars do not overlap.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``sample_disagreement`` study (:mod:`simstudy.studies.sample_disagreement`), one
        row per sample size, estimator and measure: columns ``distribution`` (``"a vs b"``, the two models'
        names: ``a`` the incumbent, ``b`` the challenger), ``sample_size`` (n, runs per model in a sample),
        ``estimator`` (``"u"``, ``"v"``, ...), ``measure`` (``"p_overtakes"`` or ``"p_disagree"``),
        ``estimate`` (a probability in [0, 1]; the unbiased ``p_disagree`` may slightly exceed 1/2), ``mcse``
        (same units) and ``reps`` (random samples per n); optionally ``lower_joint``/``upper_joint`` (the
        simultaneous band). Other columns (``cell``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one naming the models and the samples per n.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels side by side, n on both x axes: ``p_overtakes`` (left, y in [0, 1]) and ``p_disagree``
        (right, y in [0, 0.55]); the legend in the left panel. Close it with ``plt.close(fig)`` when done.

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
    ...     {"measure": ["p_overtakes", "p_disagree"], "estimate": [0.3, 0.42], "mcse": [0.02, 0.01]}
    ... ).assign(distribution="mlp vs lstm", sample_size=25, estimator="v", reps=500)
    >>> fig = sample_disagreement_figure(summary)
    >>> len(fig.axes), fig.get_suptitle()
    (2, 'mlp vs lstm: 500 random samples per n')
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D

    from simstudy.chart_style import Z, estimator_label, labels, legend, suptitle, theme
    from simstudy.figures import estimator_palette

    plt = theme()
    ests = list(dict.fromkeys(summary["estimator"].dropna()))
    palette = estimator_palette(ests)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), layout="constrained")
    a, _, b = str(summary["distribution"].iloc[0]).partition(" vs ") if len(summary) else ("a", "", "b")
    panels = (
        ("p_overtakes", f"P(a sample's curves say {b} beats {a} at some k ≤ n)"),
        ("p_disagree", "P(two samples disagree) = 2p(1 − p)"),
    )
    sizes = np.unique(summary["sample_size"].dropna().to_numpy(dtype=float))
    step = float(np.diff(sizes).min()) if sizes.size > 1 else 1.0  # estimators side by side, a little apart
    has_joint = "lower_joint" in summary and bool(np.isfinite(summary["lower_joint"]).all()) and len(summary) > 0
    for ax, (measure, ylabel) in zip(axes, panels):
        rows = summary[summary["measure"] == measure]
        for i, est in enumerate(ests):
            r = rows[rows["estimator"] == est].sort_values("sample_size")
            yerr = [r["estimate"] - r["lower_joint"], r["upper_joint"] - r["estimate"]] if has_joint else Z * r["mcse"]
            ax.errorbar(
                r["sample_size"] + 0.08 * step * (i - (len(ests) - 1) / 2),
                r["estimate"],
                yerr=yerr,
                color=palette[est],
                marker="o",
                ms=4,
                capsize=3,
                lw=1.4,
                label=estimator_label(est),
            )
        ax.set_ylim(0, 1 if measure == "p_overtakes" else 0.55)
        if measure == "p_disagree":
            ax.axhline(0.5, color="grey", ls=":", lw=1)  # its maximum, at p = 1/2
        labels(ax, xlabel="n (runs per model in a sample)", ylabel=ylabel)
        if sizes.size == 1:
            ax.set_xticks(sizes)
            ax.set_xlim(sizes[0] - 0.5, sizes[0] + 0.5)
    bars = "95% simultaneous Monte Carlo band over n (Šidák)" if has_joint else "± 1.96 MCSE, pointwise"
    legend(axes[0], extra=[Line2D([], [], color="0.3", marker="|", ls="none", label=bars)])
    reps = int(summary["reps"].max()) if len(summary) else 0
    suptitle(fig, title or f"{a} vs {b}: {reps:,} random samples per n")
    return fig


STUDY = register_study(
    Study(
        kind="sample_disagreement",
        options=Options,
        run=run,
        figure=sample_disagreement_figure,
        headline=headline,
        sweep=Headline({"measure": "p_disagree"}, "sample_size", "estimator", "P(two samples disagree)"),
        check=_check,
    )
)
