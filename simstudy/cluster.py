"""Dask clusters for the runner (``runner=dask``, the optional extra ``simstudy[dask]``).

:func:`dask_client` connects to a running scheduler, or starts a :class:`~dask.distributed.LocalCluster` of
single-threaded worker processes on the loopback interface for the length of one run. Only the runner
imports this module, and only for ``backend="dask"``, so dask stays optional.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # dask is optional: the name is for the annotation only
    import distributed

__all__ = ["dask_client", "local_workers", "ClusterUnavailable"]


class ClusterUnavailable(RuntimeError):
    """The dask scheduler at ``runner.address`` could not be reached."""


def local_workers(n_jobs: int) -> int:
    """Worker processes for ``runner.n_jobs`` (-1: one per core)."""
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


@contextlib.contextmanager
def dask_client(address: str | None, n_jobs: int, *, timeout: float = 30.0) -> Iterator[distributed.Client]:
    """A dask.distributed client for one run, closed (with any cluster it started) on exit.

    Parameters
    ----------
    address : str or None
        A scheduler's address (``tcp://host:8786``); ``None`` starts a local cluster on 127.0.0.1 (never on
        a public interface) with no dashboard.
    n_jobs : int
        Worker processes of a local cluster (-1: one per core); ignored when connecting to ``address``.
        Workers get one thread each: the chunks are numpy-bound, and one thread per process keeps BLAS
        single-threaded as the runner requires.
    timeout : float
        Seconds to wait for the scheduler at ``address``.

    Raises
    ------
    ClusterUnavailable
        If no scheduler answers at ``address`` within ``timeout``.
    """
    from dask.distributed import Client, LocalCluster

    if address is not None:
        try:
            client = Client(address, set_as_default=False, timeout=timeout)
        except OSError as exc:  # TimeoutError and refused connections alike
            raise ClusterUnavailable(
                f"runner.address={address}: no dask scheduler answered within {timeout:g} s ({type(exc).__name__})"
            ) from None
        with client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=local_workers(n_jobs),
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        yield client
