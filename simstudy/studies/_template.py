"""A study kind to copy: how far the best of n scores falls short of the distribution's best, by simulation.

Not a study simstudy runs: its name starts with ``_`` and it is in no registry. Copy it to
``simstudy/studies/<kind>.py`` (or to a plug-in package), rename the kind, and replace each hook's body. Every
hook a kind has, in the order a run meets them:

==================  =========  ==========================================================================
hook                required   what it does
==================  =========  ==========================================================================
:class:`Options`    yes        the kind's ``study.*`` keys: a frozen dataclass of :func:`simstudy.schema.option`
                               fields, subclassing :class:`~simstudy.studies.base.StudyOptions`; the defaults'
                               and the help texts' only home (``@schema_docs.documented("study.")`` writes its
                               docstring's Parameters from them)
:func:`check`       no         cross-checks of the whole config, run at parse time before any compute (one-line
                               :class:`~simstudy.schema.ConfigError`; memory estimates with
                               :func:`simstudy.engine.memory.check_memory`)
:func:`cells`       no         what one cell of the study is, keyed by :func:`~simstudy.studies.base.cell_key`
                               (default: one per distribution)
:func:`chunk`       yes        the work of ``task.reps`` replicates of one cell: named arrays, deterministic
                               given the task (draws from :func:`simstudy.engine.runner.task_seed`)
:func:`run`         yes        builds the cells, runs their chunks (:func:`~simstudy.studies.base.run_chunks`,
                               given the ``stage=`` of the precision rule that ``run`` takes) and returns
                               :func:`~simstudy.studies.base.finish`
:func:`summarise`   yes        one cell's chunks reduced to tidy rows (``measure``, ``estimate``, ``mcse``)
:func:`figure`      no         ``figure(summary, title=None) -> matplotlib Figure`` (import matplotlib inside)
:func:`headline`    no         the numbers a reader checks first, logged after the run
==================  =========  ==========================================================================

Then register it, once, at the end of the module: ``STUDY = register_study(Study(kind=..., options=Options,
run=run, figure=figure, headline=headline, check=check, summary="one line for --help"))``, and add the kind
with its summary to the built-in table of :data:`simstudy.extend.studies` (a plug-in package instead
registers from the module its entry point names). :data:`STUDY` below is the spec, unregistered.

Examples
--------
>>> import dataclasses
>>> import tempfile
>>> from simstudy import config
>>> cfg = config.parse({
...     "seed": 0,
...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
...     "budget": {"B": 1},
...     "estimators": {"v": {"method": "v"}},
...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
...     "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
... })
>>> cfg = dataclasses.replace(cfg, study=dataclasses.replace(cfg.study, kind="_template", options=Options(
...     reps=100, chunk_reps=50)))
>>> with tempfile.TemporaryDirectory() as tmp:
...     result = run(cfg, tmp)
>>> print(result.summary[["n", "measure", "estimate"]].round(3).to_string(index=False))
 n measure  estimate
 1     gap     0.506
 4     gap     0.394
16     gap     0.325
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
from simstudy.engine.runner import Task, task_seed
from simstudy.registry import Headline, Study
from simstudy.schema import ConfigError, option
from simstudy.studies import base
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option

__all__ = ["Options", "check", "cells", "chunk", "run", "summarise", "figure", "headline", "STUDY"]

#: The chunks' format version: part of the fingerprint, bumped when what a chunk holds changes (old chunks are
#: then never read back as new ones).
_SCHEME = "_template/1"


@schema_docs.documented("study.")
@dataclass(frozen=True)
class Options(StudyOptions):
    """The options of a _template study, the keys ``study.*`` of its config.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> schema.parse(Options, {"ns": [8, 2]}, "study.").ns
    (2, 8)
    """

    reps: int = reps_option(400)
    chunk_reps: int = chunk_reps_option(100)
    ns: tuple[int, ...] = option(
        (1, 4, 16),
        "the numbers of scores n whose best is compared with the distribution's best",
        schema.listed(schema.integer(minimum=1)),
    )


def check(config: Config) -> None:
    """Cross-checks of the whole config, at parse time: here, a single distribution.

    Raises
    ------
    ConfigError
        One line naming the setting: more than one distribution.
    """
    if len(config.distributions) != 1:
        raise ConfigError(f"a _template study takes one distribution, got {len(config.distributions)}")


def cells(config: Config) -> dict[str, str]:
    """The study's cells, by key: one per distribution (its ``key``, never its label, keys the streams)."""
    return {base.cell_key(distribution=spec.key): spec.name for spec in config.distributions}


def chunk(seed: int, dist, ns: tuple[int, ...], task: Task) -> dict[str, np.ndarray]:
    """``task.reps`` simulated searches of ``max(ns)`` scores: the best of the first n of each, per n.

    Returns
    -------
    dict of str to ndarray
        ``{"best": (len(ns), reps)}``: arrays whose last axis is the replicates (chunks are concatenated
        along it, in task order).
    """
    rng = np.random.default_rng(task_seed(seed, task.cell, task.chunk))
    scores = dist.sample((task.reps, max(ns)), rng=rng)
    return {"best": np.stack([scores[:, :n].max(axis=1) for n in ns])}


def summarise(config: Config, run_: base.ChunkedRun, key: str, name: str, high: float) -> list[dict]:
    """One cell's rows: the mean gap between the distribution's best and the best of n, with its MCSE."""
    gap = high - run_.stacked(key, "best")  # (len(ns), reps)
    reps = gap.shape[-1]
    return [
        {
            "cell": key,
            "distribution": name,
            "n": n,
            "measure": "gap",
            "estimate": float(g.mean()),
            "mcse": float(g.std(ddof=1) / np.sqrt(reps)),
            "reps": reps,
        }
        for n, g in zip(config.study.options.ns, gap)
    ]


def run(config: Config, out_dir: str | Path, *, stage: base.Stage | None = None) -> base.StudyResult:
    """Run (or resume) the study into ``out_dir`` and write its summary; ``stage`` (the precision rule's, when
    ``study.precision`` is set) goes to :func:`~simstudy.studies.base.run_chunks` as it comes."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    opts = config.study.options
    dists = {spec.name: spec.build() for spec in config.distributions}
    by_key = cells(config)
    name = next(iter(by_key.values()))
    run_ = base.run_chunks(
        config,
        out_dir,
        scheme=_SCHEME,
        cells=list(by_key),
        chunk_fn=partial(chunk, config.seed, dists[name], opts.ns),
        settings={"ns": list(opts.ns)},
        stage=stage,
    )
    rows = []
    for key, label in run_.succeeded(by_key).items():
        rows += summarise(config, run_, key, label, float(dists[label].support[1]))
    return base.finish(config, out_dir, run_, pd.DataFrame(rows), started=started, metadata={})


def figure(summary: pd.DataFrame, title: str | None = None):
    """The gap against n, one line per distribution."""
    import matplotlib.pyplot as plt  # here: the registry and the run never import matplotlib

    fig, ax = plt.subplots()
    for name, rows in summary.groupby("distribution"):
        ax.errorbar(rows["n"], rows["estimate"], yerr=2 * rows["mcse"], label=name)
    ax.set(xscale="log", xlabel="n (scores)", ylabel="best possible - best of n", title=title)
    ax.legend()
    return fig


def headline(summary: pd.DataFrame) -> str:
    """The gap at each n, one line."""
    return "gap to the best: " + ", ".join(f"n={r.n}: {r.estimate:.3f}" for r in summary.itertuples())


#: The spec, not registered (``register_study(Study(...))`` in a copy).
STUDY = Study(
    kind="_template",
    options=Options,
    run=run,
    figure=figure,
    headline=headline,
    sweep=Headline({"measure": "gap"}, "n", "distribution", "best possible - best of n"),
    check=check,
    summary="how far the best of n scores falls short of the distribution's best",
)
