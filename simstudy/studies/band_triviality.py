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
from scipy import stats

from .. import bands, schema
from ..config import Config, StudyOptions
from ..registry import Headline, Study, register_study
from ..schema import option
from . import base

__all__ = ["run", "trivial_budget", "Options", "headline", "STUDY"]

# Moved to the library (simstudy.bands.trivial_budget); re-exported so existing imports keep working.
trivial_budget = bands.trivial_budget


def run(config: Config, out_dir: str | Path) -> base.StudyResult:
    """Compute the trivial budget for every sample size and method, and the linear fit per method."""
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
    run_ = base.ChunkedRun(store=None, tasks_by_cell={}, report=base.empty_report(), fingerprint="exact")
    return base.finish(
        config,
        out_dir,
        run_,
        summary,
        started=started,
        metadata={"confidence": confidence, "quantile": q, "exact": True},
    )


@dataclass(frozen=True)
class Options(StudyOptions):
    """The band_triviality study's options (exact: reps and chunk_reps are unused)."""

    sample_sizes: tuple = option(
        (6, 12, 24, 48, 96, 192, 384, 768, 1024),
        "the sample sizes n",
        schema.listed(schema.integer(minimum=2), minimum=2, what="at least 2 sample sizes"),
    )
    methods: tuple = option(
        ("ld_highest_density",),
        "the CDF band methods",
        schema.listed(schema.choice(lambda: bands.METHODS), what="at least one built-in method", sort=False),
    )
    confidence: float = option(0.8, "the simultaneous coverage of the bands", schema.level())
    quantile: float = option(0.5, "the tuning curve's quantile (0.5: the median)", schema.level())


def headline(summary: pd.DataFrame) -> str:
    """Samples per bounded search iteration and the fit's R squared, per method."""
    fits = summary[summary["measure"].isin(["samples_per_step", "r_squared"])]
    return (
        f"linear fit of the trivial budget against n\n"
        f"{fits.pivot_table(index='method', columns='measure', values='estimate').round(4).to_string()}"
    )


STUDY = register_study(
    Study(
        kind="band_triviality",
        options=Options,
        run=run,
        figure="simstudy.plots.band_triviality_figure",
        headline=headline,
        sweep=Headline({"measure": "trivial_k"}, "n", "method", "trivial budget"),
        summary="the budget beyond which the upper tuning-curve band is trivial, against n (Lourie et al. §5.5; exact)",
    )
)
