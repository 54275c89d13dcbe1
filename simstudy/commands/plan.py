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

from typing import TYPE_CHECKING

from simstudy.registry import Command
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from simstudy.studies.precision import Planned

__all__ = ["run"]


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
