"""A tiny third-party plug-in package, the template for yours (tests/test_registry.py installs it): one study
kind (``toy_max``), one estimator method (``toy_top``: the sample maximum) and one distribution kind
(``toy_uniform``), registered through the
``simstudy.plugins`` entry point (see ../pyproject.toml) when the package is installed.

``toy_max``: the Monte Carlo mean of the best of n draws, beside its exact value -- a study in one module:
typed options, a chunk function, a reducer, a figure and a headline, registered once.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from simstudy import schema
from simstudy.studies.base import StudyOptions, chunk_reps_option, reps_option
from simstudy.engine.runner import task_seed
from simstudy.plugins import register_distribution, register_estimator
from simstudy.registry import Headline, Study, register_study
from simstudy.schema import option
from simstudy.stats import truth
from simstudy.studies import base


@dataclass(frozen=True)
class Options(StudyOptions):
    """The toy_max study's options."""

    reps: int = reps_option(400)
    chunk_reps: int = chunk_reps_option(100)
    ns: tuple = option((1, 4, 16), "numbers of draws n whose best is averaged",
                       schema.listed(schema.integer(minimum=1), what="at least one n"))


def _chunk(seed, dist, ns, task):
    rng = np.random.default_rng(task_seed(seed, task.cell, task.chunk, 0))
    best = np.stack([dist.sample((task.reps, n), rng=rng).max(axis=1) for n in ns])  # (N, reps)
    return {"sums": np.stack([best.sum(axis=1), (best * best).sum(axis=1)])}


def run(config, out_dir, *, stage=None):  # stage: the precision rule's (study.precision)
    import time
    from pathlib import Path

    import pandas as pd

    started, opts = time.perf_counter(), config.study.options
    spec = config.distributions[0]
    dist = spec.build()
    key = base.cell_key(distribution=spec.key)
    chunks = base.run_chunks(config, Path(out_dir), scheme="toy_max/1", cells=[key],
                             chunk_fn=partial(_chunk, config.seed, dist, opts.ns), settings={"ns": opts.ns},
                             stage=stage)
    R = config.study.reps
    rows = []
    if chunks.succeeded({key: 0}):
        sums, squares = chunks.total(key, "sums")
        exact = truth.expected_max(dist, np.array(opts.ns))
        for j, n in enumerate(opts.ns):
            mean = sums[j] / R
            sd = np.sqrt(max(squares[j] / R - mean**2, 0.0) * R / (R - 1))
            rows += [dict(cell=key, distribution=spec.name, n=n, measure="mean_best", estimate=mean,
                          mcse=sd / np.sqrt(R), reps=R),
                     dict(cell=key, distribution=spec.name, n=n, measure="exact", estimate=float(exact[j]), mcse=0.0,
                          reps=0)]
    return base.finish(config, Path(out_dir), chunks, pd.DataFrame(rows), started=started, metadata={})


def figure(summary, title=None):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    for measure, g in summary.groupby("measure"):
        ax.plot(g["n"], g["estimate"], marker="o", label=measure)
    ax.set(xlabel="n", ylabel="best of n", title=title or "toy_max")
    ax.legend()
    return fig


def headline(summary):
    return summary.pivot_table(index="n", columns="measure", values="estimate").to_string()


STUDY = register_study(Study(kind="toy_max", options=Options, run=run, figure=figure, headline=headline,
                             sweep=Headline({"measure": "mean_best"}, "n", "distribution", "best of n"),
                             summary="the mean best of n draws beside its exact value (a test plug-in)"))


def toy_top(sorted_scores, n):
    """The sample maximum, whatever the budget: (reps, B) -> (reps, N)."""
    return np.repeat(sorted_scores[:, -1:], len(n), axis=1)


register_estimator("toy_top", toy_top)


class ToyUniform:
    """Scores uniform on [low, high]: the ScoreDistribution interface in a dozen lines."""

    is_discrete = False

    def __init__(self, low=0.0, high=1.0, name=None):
        if not low < high:
            raise ValueError(f"low must be below high, got low={low}, high={high}")
        self.low, self.high, self.name = float(low), float(high), name or "toy_uniform"
        self.support = (self.low, self.high)

    def sample(self, size, *, rng):
        return rng.uniform(self.low, self.high, size)

    def cdf(self, x):
        return np.clip((np.asarray(x, dtype=float) - self.low) / (self.high - self.low), 0.0, 1.0)

    def ppf(self, q):
        return self.low + np.asarray(q, dtype=float) * (self.high - self.low)


register_distribution("toy_uniform", ToyUniform)
