"""The environment's limits on a run's size: memory (``SIMSTUDY_MAX_MEMORY_GB``) and time (``SIMSTUDY_MAX_MINUTES``).

Pure readers of the environment and the one-line refusals built on them, with no config and no study: the
base layer (:mod:`simstudy.datasets` refuses a file too large to read with :func:`memory_limit`). The checks
that estimate a run's memory from its config are :mod:`simstudy.engine.memory`, the public home of these
names too.

=====================  ===================================================================================
:data:`MEMORY_ENV`     the environment variable of the memory limit (GB)
:func:`memory_limit`   bytes a run may plan to hold at once
:func:`check_memory`   refuse a setting whose estimated memory exceeds the limit, in one line
:data:`TIME_ENV`       the environment variable of the time limit (minutes)
``check_time``         refuse a setting whose estimated compute time exceeds the limit, in one line
=====================  ===================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simstudy.schema import ConfigError

__all__ = ["MEMORY_ENV", "TIME_ENV", "memory_limit", "check_memory"]


#: Environment variable: the memory (GB) one run may plan to hold at once. Default: half of the machine's
#: physical memory (fixed for a machine, so a run is refused or not whatever else is running).
MEMORY_ENV = "SIMSTUDY_MAX_MEMORY_GB"


def memory_limit() -> float:
    """Bytes a run may plan to hold at once: ``$SIMSTUDY_MAX_MEMORY_GB`` if set, else half the physical memory.

    The limit the memory checks (:func:`check_memory` and the study checks built on it) refuse a config
    above, before any compute. Without the environment variable it is fixed for a machine (half of its
    physical memory; 8 GB where the physical memory cannot be read), so whether a run is refused does not
    depend on what else is running.

    Returns
    -------
    float
        The limit in bytes (the variable's GB times 1e9).

    Raises
    ------
    ConfigError
        If the environment variable is set but is not a positive finite number.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     memory_limit()
    2000000000.0
    >>> with mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "lots"}):
    ...     memory_limit()
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: SIMSTUDY_MAX_MEMORY_GB must be a positive number of GB, got 'lots'
    """
    import os

    gb = env_limit(MEMORY_ENV, "GB")
    if gb is not None:
        return gb * 1e9
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): a fixed, documented default
        return 8e9


def env_limit(name: str, unit: str) -> float | None:
    """A limit set by the environment variable ``name`` (a positive finite number of ``unit``), or None when unset."""
    import os

    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise ConfigError(f"{name} must be a positive number of {unit}, got {raw!r}")
    return value


def size(nbytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes / 1e6:.2g} MB"


def check_memory(key: str, value: Any, nbytes: float, what: str, fix: str) -> None:
    """Refuse, before any compute, a setting whose estimated memory ``nbytes`` exceeds :func:`memory_limit`.

    For a study kind's check (:attr:`simstudy.registry.Study.check`) or a command's parser: estimate the peak
    memory a setting implies and call this, so that a run too large for the machine fails in one line before
    it starts rather than swapping or being killed hours in.

    Parameters
    ----------
    key : str
        The setting to name, e.g. ``"budget.B"``.
    value : Any
        Its value, as the message shows it, e.g. 100000.
    nbytes : float
        The estimated peak memory, in bytes.
    what : str
        What takes that memory, e.g. ``"the 100000 x 100000 weight matrix"``.
    fix : str
        What to change, e.g. ``"lower budget.B or set budget.n to fewer budgets"``.

    Raises
    ------
    ConfigError
        If ``nbytes`` exceeds :func:`memory_limit`: ``budget.B=100000 needs about 240 GB (...); the limit is 12
        GB (half the physical memory; set SIMSTUDY_MAX_MEMORY_GB to change it): lower budget.B ...``; or if
        ``SIMSTUDY_MAX_MEMORY_GB`` is invalid (:func:`memory_limit`).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> limit = mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "2"})  # a fixed limit, 2 GB
    >>> with limit:
    ...     check_memory("max_k", 1000, 256e3, "the bands at k = 1..1000, per model", "lower max_k")
    ...     check_memory("max_k", 10**9, 256e9, "the bands at k = 1..1e9, per model", "lower max_k")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: max_k=1000000000 needs about 256 GB (the bands at k = 1..1e9, per model); the limit
    is 2 GB (SIMSTUDY_MAX_MEMORY_GB=2): lower max_k
    """
    import os

    limit = memory_limit()
    if nbytes > limit:
        source = (
            f"{MEMORY_ENV}={os.environ[MEMORY_ENV]}"
            if MEMORY_ENV in os.environ
            else f"half the physical memory; set {MEMORY_ENV} to change it"
        )
        raise ConfigError(
            f"{key}={value} needs about {size(nbytes)} ({what}); the limit is {size(limit)} ({source}): {fix}"
        )


#: Environment variable: the minutes a command may plan to compute for, by its estimate (default 30): larger
#: sizes are refused at once, with the estimate, instead of running for hours.
TIME_ENV = "SIMSTUDY_MAX_MINUTES"
_DEFAULT_MINUTES = 30.0


def _duration(seconds: float) -> str:
    for unit, scale in (("days", 86400.0), ("hours", 3600.0), ("min", 60.0)):
        if seconds >= scale:
            return f"{seconds / scale:.2g} {unit}"
    return f"{seconds:.2g} s"


def check_time(key: str, value: Any, seconds: float, what: str, fix: str) -> None:
    """Refuse at once a setting whose estimated compute time exceeds ``$SIMSTUDY_MAX_MINUTES`` (default 30), in
    one line with the estimate, like :func:`check_memory` for memory."""
    import os

    raw = os.environ.get(TIME_ENV)
    minutes = env_limit(TIME_ENV, "minutes")
    minutes = _DEFAULT_MINUTES if minutes is None else minutes
    if seconds > 60.0 * minutes:
        source = f"{TIME_ENV}={raw}" if raw is not None else f"set {TIME_ENV} to change it"
        raise ConfigError(
            f"{key}={value} needs about {_duration(seconds)} ({what}); the limit is {minutes:g} min ({source}): {fix}"
        )
