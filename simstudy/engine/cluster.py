"""Dask clusters for the runner (``runner=dask``, the optional extra ``simstudy[dask]``).

:func:`dask_client` connects to a running scheduler, or starts a :class:`~dask.distributed.LocalCluster` of
single-threaded worker processes on the loopback interface for the length of one run. Only the runner
imports this module, and only for ``backend="dask"``, so dask stays optional.

A run on dask is as quiet as one on loky: distributed's INFO lines (scheduler, nanny and worker start and stop,
about sixty per run) are not the run's log, so its loggers say warnings only while the run computes, and
nothing while the client and cluster close (a worker's comm closed under a closing scheduler is logged as a
``CommClosedError`` traceback by distributed and tornado, after every result is in).
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # dask is optional: the name is for the annotation only
    import distributed

__all__ = ["dask_client", "local_workers", "ClusterUnavailable"]


class ClusterUnavailable(RuntimeError):
    """The dask scheduler at ``runner.address`` could not be reached.

    Raised by :func:`dask_client` when no scheduler answers at the given address within its ``timeout``; the
    message names the key, the address, the timeout in seconds and the kind of connection error. A
    :class:`RuntimeError`, so the command reports it as a run that could not finish.

    Examples
    --------
    >>> from simstudy.engine.cluster import ClusterUnavailable
    >>> raise ClusterUnavailable("runner.address=tcp://10.0.0.5:8786: no dask scheduler answered within 30 s")
    Traceback (most recent call last):
    ...
    simstudy.engine.cluster.ClusterUnavailable: runner.address=tcp://10.0.0.5:8786: no dask scheduler answered within 30 s
    """


def local_workers(n_jobs: int) -> int:
    """The number of worker processes a local cluster starts for ``runner.n_jobs``.

    Parameters
    ----------
    n_jobs : int
        The ``runner.n_jobs`` setting: a positive number of worker processes, or -1 for one per CPU core.

    Returns
    -------
    int
        ``n_jobs`` itself if it is not -1; otherwise :func:`os.cpu_count` (1 if the count is unknown).

    Examples
    --------
    >>> from simstudy.engine.cluster import local_workers
    >>> local_workers(4)
    4
    >>> import os
    >>> local_workers(-1) == (os.cpu_count() or 1)
    True
    """
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


#: The loggers a dask run talks through: distributed's own, and the event loop's that report its comms' errors.
_DASK_LOGGERS = ("distributed", "tornado", "asyncio")


@contextlib.contextmanager
def _dask_logs_at(level: int) -> Iterator[None]:
    """Set :data:`_DASK_LOGGERS` to ``level`` for the block, then back to their own levels."""
    loggers = [logging.getLogger(name) for name in _DASK_LOGGERS]
    saved = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(level)
    try:
        yield
    finally:
        for logger, old in zip(loggers, saved):
            logger.setLevel(old)


@contextlib.contextmanager
def _closed_quietly(*closables) -> Iterator[None]:
    """Close each of ``closables`` (the client first, then the cluster it talks to) on exit, with dask's loggers
    and warnings silenced: what a closing cluster says then is about its own teardown, not the run's results."""
    try:
        yield
    finally:
        with _dask_logs_at(logging.CRITICAL + 1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for closable in closables:
                closable.close()


@contextlib.contextmanager
def dask_client(address: str | None, n_jobs: int, *, timeout: float = 30.0) -> Iterator[distributed.Client]:
    """A dask.distributed client for one run, closed (with any cluster it started) on exit.

    dask is imported only when the context is entered, so calling this function never needs the optional
    extra ``simstudy[dask]``; entering it does. A typical use, as the runner makes it:

    .. code-block:: python

        with dask_client(None, n_jobs=2) as client:  # a LocalCluster of 2 single-threaded workers
            futures = client.map(work, tasks)

    Parameters
    ----------
    address : str or None
        A scheduler's address (``tcp://host:8786``); ``None`` starts a local cluster on 127.0.0.1 (never on
        a public interface) with no dashboard.
    n_jobs : int
        Worker processes of a local cluster (-1: one per core); ignored when connecting to ``address``.
        Workers get one thread each: the chunks are numpy-bound, and one thread per process keeps BLAS
        single-threaded as the runner requires.
    timeout : float, keyword-only
        Seconds to wait for the scheduler at ``address``; default 30.0. Unused for a local cluster.

    Yields
    ------
    distributed.Client
        A client connected to the scheduler at ``address``, or to the local cluster started for the run; it
        is not set as dask's default client. On exit the client is closed, and a local cluster shut down.

    Raises
    ------
    ClusterUnavailable
        If no scheduler answers at ``address`` within ``timeout`` (a timeout or a refused connection).

    Examples
    --------
    Calling the function only builds the context manager; the cluster is started or reached on entry:

    >>> from simstudy.engine.cluster import dask_client
    >>> context = dask_client("tcp://127.0.0.1:8786", n_jobs=2, timeout=5.0)
    >>> hasattr(context, "__enter__") and hasattr(context, "__exit__")
    True
    """
    from dask.distributed import Client, LocalCluster

    with _dask_logs_at(logging.WARNING):
        if address is not None:
            try:
                client = Client(address, set_as_default=False, timeout=timeout)
            except OSError as exc:  # TimeoutError and refused connections alike
                raise ClusterUnavailable(
                    f"runner.address={address}: no dask scheduler answered within {timeout:g} s ({type(exc).__name__})"
                ) from None
            with _closed_quietly(client):
                yield client
            return
        cluster = LocalCluster(
            n_workers=local_workers(n_jobs),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        try:
            client = Client(cluster, set_as_default=False)
        except BaseException:
            with _closed_quietly(cluster):
                raise
        with _closed_quietly(client, cluster):
            yield client
