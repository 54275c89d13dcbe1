"""``simstudy plan``: how many replicates a precision target needs, per cell and measure, and how long they take.

``simstudy plan experiment=NAME study.precision=TARGET`` runs only the pilot of the precision rule
(:mod:`simstudy.studies.precision`: ``study.reps`` replicates per cell) in a temporary directory it creates and
removes, and reports what a run with that target would do: per cell and measure, the pilot's estimate and MCSE,
the absolute target, the replicates needed (whole chunks, within ``[study.reps, study.max_reps]``), whether the
cap binds, and the estimated seconds on this machine. It writes no results. Its plan is the rule's first stage
only: a run re-plans each cell from the planned stage's replicates and may top it up, which no pilot can foresee
(the command says so).

The estimate of seconds is the pilot's seconds outside its chunks (truth, reduction), plus its compute seconds
per replicate (averaged over its cells) times the replicates of every cell, divided by the workers
(``runner.n_jobs``; -1: every core): a guide, since cells may differ in cost. The two parts add up to the total
the command prints, and it names the cores this machine offers when ``runner.n_jobs`` uses fewer.

==================  ===========================================================================================
:func:`run`         the pilot, planned: a :class:`Planned`
:class:`Planned`    the plan's table, per cell and measure, and its totals
==================  ===========================================================================================
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simstudy.registry import Command
from simstudy.schema import ConfigError

__all__ = ["run", "Planned"]


@dataclass(frozen=True)
class Planned:
    """What :func:`run` returns: the replicates a precision target needs, per cell and measure, and their time.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per Monte Carlo row of the pilot's summary: ``cell``, ``distribution``, the study's keys,
        ``measure``, ``pilot_estimate``, ``pilot_mcse`` (the measure's units), ``pilot_reps``, ``target``
        (absolute MCSE target, NaN untargeted), ``reps_needed`` (this row's), ``cell_reps`` (the cell's: the
        largest of its rows), ``capped`` (needs more than ``max_reps``) and ``est_seconds`` (of ``cell_reps``
        replicates of the cell, on this machine: the cell's share of ``total_seconds``, repeated on each of its
        rows).
    pilot_reps : int
        ``study.reps``, the pilot per cell.
    max_reps : int
        The cap.
    seconds_per_rep : float
        The pilot's compute seconds per replicate, averaged over its cells.
    workers : int
        The workers the estimate assumes (``runner.n_jobs``, -1 resolved to this machine's cores).
    total_seconds : float
        The estimated wall seconds of the whole run (every cell at its ``cell_reps``): ``fixed_seconds`` plus
        the chunks' compute at ``seconds_per_rep`` over ``workers``.
    fixed_seconds : float
        The pilot's seconds outside its chunks (truth, reduction), which more replicates do not change.
    cores : int
        The cores this process may use on this machine (what ``runner.n_jobs=-1`` would take).

    Examples
    --------
    >>> planned = Planned(pd.DataFrame(), 1000, 100_000, 1e-5, 2, 0.0, 0.0, 2)
    >>> planned.pilot_reps, planned.capped_cells
    (1000, ())
    """

    table: pd.DataFrame
    pilot_reps: int
    max_reps: int
    seconds_per_rep: float
    workers: int
    total_seconds: float
    fixed_seconds: float
    cores: int

    @property
    def capped_cells(self) -> tuple[str, ...]:
        """The cells whose targets need more than ``max_reps`` replicates."""
        if self.table.empty:
            return ()
        return tuple(dict.fromkeys(self.table.loc[self.table["capped"], "cell"]))

    def by_measure(self) -> pd.DataFrame:
        """Per cell and measure, the row that needs the most replicates (what the command prints).

        Returns
        -------
        pandas.DataFrame
            The rows of :attr:`table` with the largest ``reps_needed`` of each (cell, measure), targeted
            measures only, the cell key shortened to 8 digits and a column ``rows`` (the measure's rows);
            without ``est_seconds``, a cell's and not a row's (repeated per measure it would not add up to the
            total).
        """
        table = self.table[self.table["target"].notna()]
        if table.empty:
            return table
        groups = table.groupby(["cell", "measure"], sort=False)
        worst = table.loc[groups["reps_needed"].idxmax()].copy()
        worst.insert(worst.columns.get_loc("measure") + 1, "rows", groups.size().to_numpy())
        worst = worst.drop(columns=["pilot_reps", "est_seconds"], errors="ignore")
        return worst.assign(cell=worst["cell"].str[:8]).reset_index(drop=True)


def _cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one, else every core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _workers(n_jobs: int, cores: int) -> int:
    return cores if n_jobs == -1 else max(1, min(n_jobs, cores))


def run(config) -> Planned:
    """Run the precision rule's pilot of a study config in a temporary directory and plan its cells.

    Parameters
    ----------
    config : simstudy.config.Config
        A validated study config with ``study.precision`` set (``study.reps`` the pilot).

    Returns
    -------
    Planned
        The table per cell and measure, and the totals.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``study.precision`` is not set, or names a measure the study does not report.

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10, "n": [10]},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 100,
    ...               "precision": {"mean": 0.001}},
    ...     "runner": {"n_jobs": 1, "backend": "loky", "progress": False},
    ... })
    >>> planned = run(config)
    >>> print(planned.table.loc[planned.table.measure == "mean", ["measure", "pilot_mcse", "target", "reps_needed"]])
      measure  pilot_mcse  target  reps_needed
    0    mean    0.003392   0.001         2800
    """
    import dataclasses

    from simstudy.registry import study
    from simstudy.studies.precision import _max_reps, pilot, plan_precision

    if getattr(config.study.options, "precision", None) is None:
        raise ConfigError(
            "simstudy plan needs study.precision: an absolute MCSE (study.precision=0.001), a share of the "
            "estimate (study.precision=1%) or per measure (study.precision={mse: 0.0001, bias: 2%})"
        )
    runner = dataclasses.replace(config.runner, figures=(), shard=None, collect=False, replay=None)
    config = dataclasses.replace(config, runner=runner)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="simstudy-plan-") as tmp:
        first = pilot(study(config.study.kind), config, Path(tmp))
    fixed = max(time.perf_counter() - started - first.report.wall_seconds, 0.0)  # truth, reduction: not per rep
    plan = plan_precision(config, first.summary)
    cells = max(len(plan.cell_reps), 1)
    per_rep = first.report.compute_seconds / (config.study.reps * cells)
    cores = _cores()
    workers = _workers(config.runner.n_jobs, cores)
    table = plan.table.copy()
    table["cell_reps"] = table["cell"].map(plan.cell_reps).astype("int64")
    table["est_seconds"] = table["cell_reps"] * per_rep / workers
    total = fixed + sum(plan.cell_reps.values()) * per_rep / workers
    return Planned(table, config.study.reps, _max_reps(config), per_rep, workers, total, fixed, cores)


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "plan",
    run=run,
    usage="simstudy plan [experiment=NAME] study.precision=TARGET [study.max_reps=N] [key=value ...]",
    examples=(
        "simstudy plan experiment=dodge2021_fig1 study.precision=0.0005 study.reps=2500",
        "simstudy plan experiment=lourie_fig4_bootstrap_coverage study.precision=1% study.reps=256 study.chunk_reps=64",
        "simstudy plan experiment=dodge2021_fig1 'study.precision={mse: 0.00001, bias: 5%}'",
    ),
    writes="nothing: a table on the terminal (the pilot runs in a temporary directory, removed after); then run the "
    "same command line without 'plan' to run to the target, reusing nothing of the plan's pilot",
    keys={
        "experiment": "a preset (as for a study run); with no experiment, the default study",
        "study.precision": "the target: an absolute MCSE (0.001), a share of |estimate| (1%), or per measure "
        "({mse: 0.0001, bias: 2%}) [required]",
        "study.reps": "the pilot's replicates per cell (the precision rule's pilot; a whole number of chunks is "
        "best: a run reuses all of them)",
        "study.max_reps": "the cap on a cell's replicates (default 100 x study.reps)",
        "key=value": "any other override of a study run (runner.n_jobs=N also scales the estimated seconds)",
    },
)
