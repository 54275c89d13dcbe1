"""Hydra multiruns (``simstudy -m key=a,b ...``): which jobs a sweep has, and its stacked summary once they end.

``sweep_plan`` lists a sweep's jobs (directory names and swept values) from its config, with Hydra's own
parser and basic sweeper, the way Hydra names their directories; :class:`SweepCallback` (registered in
configs/config.yaml) stacks their summaries when the multirun ends (:func:`simstudy.sweeps.write_sweep`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from simstudy.engine.rundir import dirname
from simstudy.overrides import one_line

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["SweepCallback"]

log = logging.getLogger("simstudy")


_SWEEP_SUBDIR = "${simstudy_dirname:${hydra:job.override_dirname}}"


class NoPlan(Exception):
    """A sweep whose jobs cannot be listed (another sweeper, a custom subdir, an interval sweep)."""


def _typed(override):
    """An override's value as the config holds it (numbers as numbers); a list or mapping as typed."""
    value = override.value()
    return value if value is None or isinstance(value, (bool, int, float, str)) else override.get_value_element_as_str()


def _batches(overrides: list) -> list[list[str]]:
    """The jobs of a basic sweep, each its list of ``key=value`` overrides: the product of each swept key's values
    in the order given, as Hydra's basic sweeper makes them (``BasicSweeper.split_arguments``, which is not part of
    Hydra's public API)."""
    import itertools

    values: dict[str, list[str]] = {}
    for o in overrides:
        key = o.get_key_element()
        if not o.is_sweep_override():
            values[key] = [f"{key}={o.get_value_element_as_str()}"]
        elif o.is_discrete_sweep():
            values[key] = [f"{key}={v}" for v in o.sweep_string_iterator()]
        else:
            raise NoPlan(f"{key}: the basic sweeper sweeps lists of values only, not {o.value_type.name}")
    return [list(job) for job in itertools.product(*values.values())]


def _override_dirname(job: list, exclude: list[str], item_sep: str, kv_sep: str) -> str:
    """``${hydra:job.override_dirname}`` of a job, as Hydra makes it (its own function is not public): the job's
    overrides as typed, those of ``exclude`` left out, sorted and joined."""
    lines = sorted(o.input_line for o in job if o.key_or_group not in exclude)
    return item_sep.join(lines).replace("=", kv_sep)


def sweep_plan(cfg: DictConfig) -> tuple[list[str], list]:
    """The swept keys and the jobs (directory name and swept values) of a multirun, from its config (the
    callback's, or the sweep directory's ``multirun.yaml``): the product of the sweep's values, as Hydra's basic
    sweeper builds it, named the way Hydra names their directories. Keys left out of the directory names
    (runner settings, e.g. a sweep over ``runner.shard``) are not swept columns: their jobs share a directory.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from simstudy.sweeps import Job

    h = cfg.hydra
    sweeper = str(OmegaConf.select(h, "sweeper._target_", default=""))
    if not sweeper.endswith("BasicSweeper"):
        raise NoPlan(f"its sweeper is {sweeper or 'not named'} (only the basic sweeper's jobs are listed)")
    subdir = OmegaConf.to_container(h.sweep, resolve=False).get("subdir")  # type: ignore[union-attr]  # of a DictConfig: a dict
    if subdir != _SWEEP_SUBDIR:
        raise NoPlan(f"hydra.sweep.subdir={subdir} is not simstudy's {_SWEEP_SUBDIR}")
    params = OmegaConf.select(h, "sweeper.params", default=None) or {}
    parser = OverridesParser.create()
    named = h.job.config.override_dirname
    exclude = list(named.exclude_keys)
    try:
        overrides = parser.parse_overrides([f"{k}={v}" for k, v in params.items()] + list(h.overrides.task))
        batches = _batches(overrides)
    except Exception as exc:
        raise NoPlan(one_line(exc)) from None

    def column(o) -> str:
        return o.get_key_element().lstrip("+~")

    swept = [column(o) for o in overrides if o.is_sweep_override() and o.key_or_group not in exclude]
    jobs: dict[str, Job] = {}
    for batch in batches:
        job = parser.parse_overrides(batch)
        name = dirname(_override_dirname(job, exclude, named.item_sep, named.kv_sep))
        jobs.setdefault(name, Job(name, {column(o): _typed(o) for o in job if column(o) in swept}))
    return swept, list(jobs.values())


try:
    from hydra.experimental.callback import Callback as _Callback
except ImportError:  # pragma: no cover -- Hydra < 1.1 has no callbacks
    _Callback = object  # type: ignore[misc, assignment]  # the fallback base class mypy cannot follow


class SweepCallback(_Callback):
    """Registered in configs/config.yaml (``hydra.callbacks``): once every job of a multirun has ended, their
    summaries are stacked into one frame and one faceted figure at the sweep directory (:func:`write_sweep`);
    ``simstudy collect sweep_dir=DIR`` does the same later (for a sweep cut short, or sharded jobs).

    Examples
    --------
    >>> from omegaconf import OmegaConf
    >>> SweepCallback().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": "x"}, "sweeper": {}}}))
    """

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        # Imported here: Hydra makes this callback when any run starts, and only a sweep's end needs pandas.
        from simstudy.sweeps import unfinished_message, write_sweep

        sweep_dir = Path(str(config.hydra.sweep.dir))
        try:
            swept, jobs = sweep_plan(config)
        except NoPlan as exc:
            log.info("sweep: no stacked summary: %s", exc)
            return
        if not swept:  # only runner settings swept (e.g. runner.shard): one run directory, nothing to stack
            return
        stacked = write_sweep(sweep_dir, swept, jobs)
        if stacked.unfinished:  # e.g. shards: each job stored its chunks, and collect summarises them
            log.warning("%s", unfinished_message(sweep_dir, stacked.unfinished, len(jobs)))
