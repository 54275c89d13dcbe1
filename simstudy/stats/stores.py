"""Where a kernel may keep results across processes: a slot a layer above fills with a store.

A kernel is pure (no files), but some results are worth keeping on disk: the LD intervals of
:func:`simstudy.stats.boundary.ld_intervals` cost about n^2 to solve and depend only on their key. The kernel
asks this module for the store under its name and, when there is none, keeps its results in memory only;
the engine (:mod:`simstudy.engine.ld_cache`) installs the disk store when it is imported. The numbers are
the same with or without a store; only the time differs.

=====================  =====================================================================
function               what it does
=====================  =====================================================================
:func:`set_store`      install (or, with ``None``, remove) the store under a name
:func:`get_store`      the store under a name, or ``None``
=====================  =====================================================================

Examples
--------
>>> get_store("no such store") is None
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_store", "get_store"]

_STORES: dict[str, Any] = {}


def set_store(name: str, store: Any) -> None:
    """Install ``store`` under ``name`` (``None`` removes it).

    Parameters
    ----------
    name : str
        The kernel's name for its store, e.g. ``"ld_intervals"``.
    store : object or None
        An object with the methods that kernel documents; ``None``: results in memory only.

    Examples
    --------
    >>> set_store("example", {"kept": 1}); get_store("example")
    {'kept': 1}
    >>> set_store("example", None); get_store("example") is None
    True
    """
    if store is None:
        _STORES.pop(name, None)
    else:
        _STORES[name] = store


def get_store(name: str) -> Any:
    """The store installed under ``name``, or ``None``.

    Parameters
    ----------
    name : str
        The kernel's name for its store.

    Returns
    -------
    object or None
        What :func:`set_store` installed.

    Examples
    --------
    >>> get_store("ld_intervals") is None or hasattr(get_store("ld_intervals"), "get")
    True
    """
    return _STORES.get(name)
