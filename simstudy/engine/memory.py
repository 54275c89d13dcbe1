"""What a run's config will hold in memory, estimated and refused in one line before any compute.

The limits themselves are read from the environment by :mod:`simstudy._limits` (a base-layer module, so that
:mod:`simstudy.datasets` can use them); this module re-exports them and adds the estimates of a study run and
the measured costs the commands' size checks use.

============================  ======================================================================
:func:`memory_limit`          bytes a run may plan to hold at once (``$SIMSTUDY_MAX_MEMORY_GB``)
:func:`check_memory`          refuse a setting whose estimated memory exceeds the limit
:func:`check_chunk_memory`    refuse a plan of chunks too large for memory
:func:`check_budget_memory`   the memory check of the studies of the estimators at budgets
============================  ======================================================================
"""

from __future__ import annotations

from typing import Any

from simstudy._limits import (  # noqa: F401 -- check_time and env_limit: the commands' size checks
    MEMORY_ENV,
    TIME_ENV,
    check_memory,
    check_time,
    env_limit,
    memory_limit,
)
from simstudy.stats import estimators

# The checks take a simstudy.config.Config, typed Any: config imports this module (importing it back, even for
# types only, would be a cycle).
Config = Any

__all__ = [
    "MEMORY_ENV",
    "TIME_ENV",
    "memory_limit",
    "check_memory",
    "check_chunk_memory",
    "check_budget_memory",
]

#: What one chunk costs the runner's plan (its task record, about 170 bytes, and the bookkeeping around it).
BYTES_PER_CHUNK = 500
#: What ``simstudy bands`` holds per budget k and model (band arrays, the table, its CSV; about 180 measured).
BYTES_PER_K = 256


def worker_count(n_jobs: int) -> int:
    """The processes a command's ``n_jobs`` runs on (-1: every core), which divide its compute time."""
    import os

    cores = os.cpu_count() or 1
    return cores if n_jobs < 0 else min(n_jobs, cores)


def check_chunk_memory(config: Config, cells: int) -> None:
    """Refuse a plan of chunks (``cells`` cells of ``study.reps`` replicates) too large for memory (one line).

    The runner's plan holds a record of about 500 bytes per chunk; ``cells * ceil(reps / chunk_reps)`` chunks
    are checked against :func:`memory_limit`. :func:`parse` runs it with a cell per distribution; a study
    kind's check runs it with its own number of cells.

    Parameters
    ----------
    config : simstudy.config.Config
        The parsed config (``study.reps`` and ``study.chunk_reps`` are read).
    cells : int
        The number of cells of the study (each of ``study.reps`` replicates).

    Raises
    ------
    ConfigError
        Naming ``study.reps`` if the plan would exceed :func:`memory_limit`.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_chunk_memory(config, cells=1)  # 2 chunks: passes
    ...     check_chunk_memory(dataclasses.replace(config, study=dataclasses.replace(config.study, reps=10**10)), 1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.reps=10000000000 needs about 100 GB (a plan of 200,000,000 chunks of
    study.chunk_reps=50 replicates); the limit is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower study.reps or raise
    study.chunk_reps
    """
    study = config.study
    chunks = cells * -(-study.reps // study.chunk_reps)
    check_memory(
        "study.reps",
        study.reps,
        chunks * BYTES_PER_CHUNK,
        f"a plan of {chunks:,} chunks of study.chunk_reps={study.chunk_reps} replicates",
        "lower study.reps or raise study.chunk_reps",
    )


def check_budget_memory(config: Config, cells: int, *, samples_per_replicate: int = 1) -> None:
    """A memory check for studies of the estimators at budgets (``budget.B``, ``budget.n``).

    Estimates from the config, and refuses in one line above :func:`memory_limit`: the chunk plan of
    ``cells`` cells (:func:`check_chunk_memory`), the estimators' weight matrices (8 bytes per budget and
    score), the bootstrap's resamples, every worker's chunk of samples (``samples_per_replicate`` samples of
    B scores each) and the rows of ``replicates.parquet``. evp_accuracy and wrong_conclusions call it from
    their checks.

    Parameters
    ----------
    config : simstudy.config.Config
        The parsed config.
    cells : int
        The number of cells of the study.
    samples_per_replicate : int, keyword-only, default 1
        Samples of B scores each replicate draws (2 for a comparison of two models); above 1 the weight
        matrices and replicates.parquet are not checked.

    Raises
    ------
    ConfigError
        Naming the setting to lower (``study.reps``, ``budget.B``, ``estimators.NAME.resamples``,
        ``study.chunk_reps`` or ``study.save_replicates``) if its estimate exceeds :func:`memory_limit`.

    Examples
    --------
    >>> import dataclasses
    >>> from simstudy.config import BudgetConfig
    >>> from simstudy.config import parse
    >>> config = parse({
    ...     "seed": 0,
    ...     "distribution": {"kind": "truncnorm", "mean": 0.5, "sd": 0.1, "low": 0, "high": 1},
    ...     "budget": {"B": 10},
    ...     "estimators": {"v": {"method": "v"}},
    ...     "study": {"name": "demo", "kind": "evp_accuracy", "reps": 100, "chunk_reps": 50},
    ...     "runner": {"n_jobs": 1, "backend": "loky"},
    ... })
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_budget_memory(config, cells=1)  # B = 10: passes
    ...     check_budget_memory(dataclasses.replace(config, budget=BudgetConfig((100000,), None)), cells=1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.B=100000 needs about 160 GB (the weight matrices of 1 estimator, 100000
    budgets x 100000 scores each); the limit is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower budget.B or set budget.n
    to fewer budgets
    """
    import os

    study, budget = config.study, config.budget
    check_chunk_memory(config, cells)
    B = max(budget.B)
    if samples_per_replicate == 1:
        # The stacked weights of every cell (budgets x estimators x B) and the cached matrix of each method.
        E, closed = len(config.estimators), len({e.method for e in config.estimators} & set(estimators.CLOSED_FORM))
        nbytes = sum(8 * budget.n_count(b) * b * (len(config.distributions) * E + closed) for b in budget.B)
        N = budget.n_count(B)
        check_memory(
            "budget.B",
            B,
            nbytes,
            f"the weight matrices of {E} estimator{'s' * (E > 1)}, {N} budgets x {B} scores each",
            "lower budget.B or set budget.n to fewer budgets",
        )
        for e in config.estimators:
            if e.method == "bootstrap":  # one replicate's resample indices (int32) and their running maxima
                check_memory(
                    f"estimators.{e.name}.resamples",
                    e.resamples,
                    8.0 * e.resamples * B,
                    f"{e.resamples} resamples of {B} scores for each replicate",
                    f"lower estimators.{e.name}.resamples or budget.B",
                )
    # Every worker holds a chunk of sorted samples (the draw and its sorted copy, per distribution compared).
    workers = min(os.cpu_count() or 1, config.runner.n_jobs if config.runner.n_jobs > 0 else os.cpu_count() or 1)
    per_chunk = 16.0 * study.chunk_reps * B * samples_per_replicate
    check_memory(
        "study.chunk_reps",
        study.chunk_reps,
        workers * per_chunk,
        f"{workers} worker{'s' * (workers > 1)} each holding {study.chunk_reps} samples of B={B} scores",
        "lower study.chunk_reps, budget.B or runner.n_jobs",
    )
    if study.save_replicates and samples_per_replicate == 1:
        # replicates.parquet is written a chunk at a time: one row (about 200 bytes in the Arrow table and
        # its label columns) per replicate, estimator and budget.
        rows = study.chunk_reps * len(config.estimators) * budget.n_count(B)
        check_memory(
            "study.save_replicates",
            "true",
            200.0 * rows,
            f"{rows:,} rows of replicates.parquet per chunk of study.chunk_reps={study.chunk_reps}",
            "lower study.chunk_reps, set budget.n to fewer budgets, or study.save_replicates=false",
        )
