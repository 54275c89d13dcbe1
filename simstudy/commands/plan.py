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

The pilot and its plan are :func:`simstudy.studies.precision.plan_run`'s (a
:class:`~simstudy.studies.precision.Planned`: the plan's table, per cell and measure, and its totals); :func:`run`
checks the config asks for a precision, and the command line prints the plan.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from simstudy.registry import Command
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from simstudy.studies.precision import Planned

__all__ = ["run", "parse", "lines"]

log = logging.getLogger("simstudy")


def parse(keys) -> tuple[str | None, list[str]]:
    """The preset and the study's overrides of ``simstudy plan [experiment=NAME] key=value ...``.

    Parameters
    ----------
    keys : Mapping
        ``argv``: the command line's arguments after ``plan``.

    Returns
    -------
    tuple
        ``(experiment, overrides)``: the preset named (None: the default study) and every other argument, but
        ``overwrite=...`` (logged as ignored: a plan writes nothing, so there is nothing to move).

    Examples
    --------
    >>> parse({"argv": ["experiment=dodge2021_fig1", "study.precision=1%"]})
    ('dodge2021_fig1', ['study.precision=1%'])
    """
    experiment = None
    overrides = []
    for arg in keys["argv"]:
        key, sep, value = arg.partition("=")
        if key in ("experiment", "+experiment") and sep:
            experiment = value
        elif key.lstrip("+") == "overwrite" and sep:
            # The run's line, copied with 'plan' in front: a plan writes nothing, so there is nothing to move.
            log.warning("simstudy plan writes nothing: %s is ignored (it applies to the run itself)", arg)
        else:
            overrides.append(arg)
    return experiment, overrides


def run(config) -> Planned:
    """Run the precision rule's pilot of a study config in a temporary directory and plan its cells
    (:func:`simstudy.studies.precision.plan_run`), once the config is known to set ``study.precision``.

    Parameters
    ----------
    config : simstudy.config.Config
        A validated study config with ``study.precision`` set (``study.reps`` the pilot).

    Returns
    -------
    simstudy.studies.precision.Planned
        The table per cell and measure, and the totals.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``study.precision`` is not set, or names a measure the study does not report.

    Examples
    --------
    >>> from simstudy.config import parse
    >>> config = parse({"seed": 0, "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...                 "budget": {"B": 10, "n": [10]}, "estimators": {"v": {"method": "v"}},
    ...                 "study": {"name": "demo", "kind": "evp_accuracy"}, "runner": {"n_jobs": 1}})
    >>> run(config)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: simstudy plan needs study.precision: an absolute MCSE (study.precision=0.001), ...
    """
    from simstudy.studies.precision import plan_run

    if getattr(config.study.options, "precision", None) is None:
        raise ConfigError(
            "simstudy plan needs study.precision: an absolute MCSE (study.precision=0.001), a share of the "
            "estimate (study.precision=1%) or per measure (study.precision={mse: 0.0001, bias: 2%})"
        )
    return plan_run(config)


def lines(done: Planned) -> list[str]:
    """What the terminal shows of a plan: the table per measure, the totals and what the plan cannot foresee.

    Parameters
    ----------
    done : simstudy.studies.precision.Planned
        From :func:`run`.

    Returns
    -------
    list of str
        The lines (the table's as one string).

    Examples
    --------
    >>> import types, pandas as pd
    >>> lines(types.SimpleNamespace(table=pd.DataFrame()))
    ['no Monte Carlo measure: this study is exact, a run needs no more than its pilot']
    """
    if done.table.empty:
        return ["no Monte Carlo measure: this study is exact, a run needs no more than its pilot"]
    cells = done.table.drop_duplicates("cell")
    reps = int(cells["cell_reps"].sum())
    capped = "; capped: " + ", ".join(c[:8] for c in done.capped_cells) if done.capped_cells else ""
    workers = f"{done.workers} worker{'s' if done.workers > 1 else ''}"
    more = ""
    if done.cores > done.workers:  # say what the idle cores would change, and how to use them
        faster = done.fixed_seconds + reps * done.seconds_per_rep / done.cores
        more = f"; this machine has {done.cores} cores: runner.n_jobs={done.cores} would take about {faster:.3g} s"
    return [
        done.by_measure().to_string(index=False, float_format="{:.4g}".format),
        f"pilot {done.pilot_reps} per cell; {len(cells)} cells need {reps} replicates in all "
        f"(cap {done.max_reps} per cell{capped}); about {done.total_seconds:.3g} s on this machine = "
        f"{done.fixed_seconds:.3g} s outside the replicates (truth, reduction) + {reps} x "
        f"{done.seconds_per_rep:.3g} s of compute per replicate over {workers}{more}; nothing written",
        "this plan is the rule's first stage: a run re-plans each cell from its planned replicates and may top it "
        "up (a heavy-tailed measure may need more than planned here)",
    ]


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "plan",
    run=run,
    parse=parse,
    lines=lines,
    logs="first",
    composes_study=True,
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
