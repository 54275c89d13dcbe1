"""Hydra multiruns (``simstudy -m key=a,b ...``): their stacked summary once their jobs end.

:class:`SweepCallback` (registered in configs/config.yaml) lists a sweep's jobs with
:func:`simstudy.cli.compose.sweep_plan` and stacks their summaries when the multirun ends
(:func:`simstudy.sweeps.write_sweep`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from simstudy.cli.compose import NoPlan, sweep_plan

if TYPE_CHECKING:
    from omegaconf import DictConfig

__all__ = ["SweepCallback"]

log = logging.getLogger("simstudy")


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
