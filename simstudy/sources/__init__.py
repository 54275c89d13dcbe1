"""Tuning results where they live: Optuna's storages, MLflow's store, Ray Tune, W&B, SMAC3, HpBandSter and Syne Tune,
read with the standard library.

A researcher's trials are kept by their tuning framework, not in a CSV of scores. These readers open the
framework's own files without the framework (``sqlite3``, ``json``, ``csv`` and ``zipfile`` only; never a pickle)
and return each
study's values, trial states and order, the direction where recorded, and what the source records about how the
trials were proposed (a sampler's traces), which decides whether the scores can be read as random search.

=======================================  ===========================================================================
module                                   what it holds
=======================================  ===========================================================================
:mod:`~simstudy.sources.types`           :class:`Trials`, :class:`Source`, the states and formats
:mod:`~simstudy.sources.read`            :func:`sniff`, :func:`read_source` and :func:`local_path`
=======================================  ===========================================================================

The formats (:data:`FORMATS`): Optuna's RDB storage in SQLite (schema revisions ``v3.0.0.d`` and ``v3.2.0.a``,
Optuna 3.0 to 5.1), Optuna's JournalStorage file (operation codes 0-10), MLflow's SQLite tracking store (MLflow
1.8 to 3.17), a Ray Tune experiment directory, W&B runs exported as CSV from the web UI, SMAC3's
``runhistory.json`` (SMAC 1.x and 2.x), HpBandSter's ``configs.json`` and ``results.json``, Syne Tune's
``results.csv.zip`` and ``metadata.json``. Where a trial reports many times (iterations, rows, runs on seeds or
budgets) it is still one trial: ``reduce=`` makes its one score, or the reader refuses in one line. This package
only re-exports: every name above is importable from ``simstudy.sources``.
"""

from __future__ import annotations

from simstudy.sources.read import local_path, read_source, sniff
from simstudy.sources.types import FORMATS, STATES, Source, Trials

__all__ = ["Trials", "Source", "STATES", "FORMATS", "sniff", "read_source", "local_path"]
