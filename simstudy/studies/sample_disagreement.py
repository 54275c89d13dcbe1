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

Summary (tidy): one row per (sample_size, estimator, measure): ``estimate``, ``mcse``, ``reps``. Cells are the
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

from .. import estimators, schema
from ..config import Config, ConfigError, StudyOptions, check_chunk_memory, check_memory, chunk_reps_option, reps_option
from ..distributions import Bag, describe, sample_sorted
from ..registry import Headline, Study, register_study
from ..runner import Task, task_seed
from ..schema import option
from . import base

__all__ = ["run", "Options", "headline", "draw_sorted", "overtakes", "p_disagree", "STUDY"]

_SCHEME = "sample_disagreement/1"


def draw_sorted(dist, reps: int, n: int, *, replace: bool, rng: np.random.Generator) -> np.ndarray:
    """``reps`` samples of ``n`` runs, each row sorted ascending; shape (reps, n).

    Parameters
    ----------
    dist : ScoreDistribution
        With ``replace=False`` a :class:`~simstudy.distributions.Bag` of at least ``n`` runs (its finite
        population); with ``replace=True`` any distribution.
    reps, n : int
    replace : bool
        False: ``n`` distinct runs per row, every n-subset of the ``m`` runs equally likely (the smallest ``n``
        of ``m`` uniform keys, :func:`numpy.argpartition`). True: i.i.d. draws (:func:`sample_sorted`).
    rng : numpy.random.Generator

    Notes
    -----
    Without replacement a chunk holds a (reps, m) array of keys: ``8 m`` bytes per replicate.
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
    xa, xb : ndarray, shape (reps, n)
        Sorted samples of the two models, row by row.
    method : {"u", "v", "w"}
        The closed-form estimator of the mean tuning curve (:func:`simstudy.estimators.weights`).

    Returns
    -------
    ndarray of bool, shape (reps,)

    Example
    -------
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
    k, reps : array_like of int, broadcast together
        Samples whose curve says "overtakes", of ``reps`` (>= 2).

    Returns
    -------
    estimate, mcse : ndarray (NumPy scalars for scalar input)
        ``2k(R - k) / (R(R - 1))`` -- the share of the R(R - 1)/2 pairs of samples that disagree -- and the
        square root of that U-statistic's exact variance with p = k/R.

    Example
    -------
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


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Run (or resume) the sample-disagreement study for the two distributions of ``config``."""
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
    summary = pd.DataFrame(rows, columns=columns)
    metadata = {
        "pair": {"a": spec_a.name, "b": spec_b.name},
        "replace": opts.replace,
        "distributions": {spec_a.name: describe(a), spec_b.name: describe(b)},
    }
    return base.finish(config, out_dir, run_, summary, started=started, metadata=metadata)


@dataclass(frozen=True)
class Options(StudyOptions):
    """The sample_disagreement study's options."""

    reps: int = reps_option(100000)
    chunk_reps: int = chunk_reps_option(10000)
    sample_sizes: tuple = option(
        (25,),
        "the runs per model in each sample, n (one cell each), e.g. [25] (Lourie et al. Figure 1)",
        schema.listed(schema.integer(minimum=1), what="at least one sample size"),
    )
    replace: bool = option(
        False,
        "false: each sample is n distinct runs of each model's finite set (the paper's "
        "subsets); true: n draws with replacement (the runs' empirical distribution)",
        schema.boolean(),
    )


def headline(summary: pd.DataFrame) -> str:
    """P(a sample says b overtakes a) and P(two samples disagree), each with its MCSE, per n and estimator."""
    s = summary[summary["measure"].isin(["p_overtakes", "p_disagree"])].copy()
    s["value"] = s["estimate"].map("{:.4f}".format) + " ± " + s["mcse"].map("{:.4f}".format)
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


STUDY = register_study(
    Study(
        kind="sample_disagreement",
        options=Options,
        run=run,
        figure="simstudy.plots.sample_disagreement_figure",
        headline=headline,
        sweep=Headline({"measure": "p_disagree"}, "sample_size", "estimator", "P(two samples disagree)"),
        check=_check,
        summary="how often two random samples of a pair's runs disagree whether the second model ever beats the first "
        "(Lourie et al. Figure 1)",
    )
)
