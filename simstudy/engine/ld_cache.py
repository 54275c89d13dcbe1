"""The disk cache of the LD intervals: what :func:`simstudy.stats.boundary.ld_intervals` keeps across processes.

The kernel touches no files; it keeps its results in the store installed under ``"ld_intervals"``
(:mod:`simstudy.stats.stores`). Importing the engine installs :class:`DiskStore` there (:func:`install`), so
every study and command reads and writes the cache under :func:`cache_dir` as before. A disk entry is never
trusted blindly: it carries its key (n, confidence, kind), the algorithm's version and a SHA-256, and on
reading its intervals must pass the kernel's checks (``boundary._checked``: those a fresh solution would
give, of exact simultaneous coverage; about 20 ms at n = 1,024, against 300 ms to solve). An entry failing
any check is recomputed and rewritten, with a :class:`CacheWarning` naming the file.

=====================  ============================================================================
name                   what it is
=====================  ============================================================================
:func:`cache_dir`      where the entries live
:class:`CacheWarning`  an entry failed its checks and was recomputed
:class:`DiskStore`     the store the kernel calls (``where``, ``has``, ``get``, ``put``)
:func:`install`        put a :class:`DiskStore` in the kernel's slot (done on import of the engine)
=====================  ============================================================================

The scipy-heavy kernel is imported on first use, so importing the engine stays fast.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy.io import atomic_path, canonical, digest, open_regular
from simstudy.stats import stores

if TYPE_CHECKING:
    from simstudy.stats.boundary import LDIntervals

__all__ = ["cache_dir", "CacheWarning", "DiskStore", "install"]

#: Version of a cache entry's layout (1: the unkeyed, unchecked files of earlier simstudy versions).
_CACHE_FORMAT = 2
_CACHE_TAG = b"simstudy-ld-intervals:"
_SHA_TAG = b" sha256:"


def cache_dir() -> Path:
    """Where LD intervals are cached: ``$SIMSTUDY_CACHE_DIR``, else ``$XDG_CACHE_HOME/simstudy``, else
    ``~/.cache/simstudy``.

    Read at every call, so setting the variable redirects later :func:`~simstudy.stats.boundary.ld_intervals` calls.

    Returns
    -------
    pathlib.Path
        The cache directory (entries go in its ``ld_intervals/`` subdirectory; it need not exist yet).

    Examples
    --------
    >>> import os, tempfile
    >>> from simstudy.stats import boundary
    >>> old = os.environ.get("SIMSTUDY_CACHE_DIR")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = d
    ...     _ = boundary.ld_intervals(4, 0.9)
    ...     print(cache_dir() == Path(d), sorted(p.name for p in (cache_dir() / "ld_intervals").iterdir()))
    True ['highest_density-n4-c0.9.npz']
    >>> if old is None:
    ...     del os.environ["SIMSTUDY_CACHE_DIR"]
    ... else:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = old
    """
    if os.environ.get("SIMSTUDY_CACHE_DIR"):
        return Path(os.environ["SIMSTUDY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "simstudy"


def _cache_path(n: int, confidence: float, kind: str) -> Path:
    return cache_dir() / "ld_intervals" / f"{kind}-n{n}-c{confidence!r}.npz"


class CacheWarning(UserWarning):
    """A cached result that failed its checks on reading and was recomputed; the message names the file.

    Issued by :func:`~simstudy.stats.boundary.ld_intervals` when a disk entry is unreadable, damaged (checksum), of another key or
    algorithm version, or its intervals fail the checks; the result is then computed afresh and the entry
    rewritten, so the warning costs time, never correctness.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> from simstudy.stats import boundary
    >>> old = os.environ.get("SIMSTUDY_CACHE_DIR")
    >>> with tempfile.TemporaryDirectory() as d, warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = d
    ...     entry = cache_dir() / "ld_intervals" / "equal_tailed-n3-c0.7.npz"
    ...     entry.parent.mkdir(parents=True)
    ...     _ = entry.write_bytes(b"not an npz file")
    ...     ld = boundary.ld_intervals(3, 0.7, "equal_tailed")
    >>> [(w.category.__name__, str(w.message).endswith("recomputed and rewrote it")) for w in caught]
    [('CacheWarning', True)]
    >>> if old is None:
    ...     del os.environ["SIMSTUDY_CACHE_DIR"]
    ... else:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = old
    """


def _entry_header(n: int, confidence: float, kind: str, pointwise: float) -> dict:
    from simstudy.stats import boundary  # imported on use: it loads scipy

    return {
        "format": _CACHE_FORMAT,
        "algorithm": boundary.ALGORITHM_VERSION,
        "n": n,
        "confidence": confidence,
        "kind": kind,
        "pointwise": pointwise,
    }


def _write_entry(path: Path, ld: LDIntervals) -> None:
    """Store ``ld`` atomically: its arrays, and in the zip comment its key, level and a SHA-256 over both."""
    arrays = {"low": np.asarray(ld.low), "high": np.asarray(ld.high)}
    header = canonical(_entry_header(ld.n, ld.confidence, ld.kind, ld.pointwise))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # the stub fears a key "allow_pickle"; none is
        with zipfile.ZipFile(tmp, "a") as zf:
            zf.comment = _CACHE_TAG + header + _SHA_TAG + digest(arrays, header).encode()


def _read_entry(path: Path, n: int, confidence: float, kind: str) -> LDIntervals:
    """The cached intervals at ``path``, after every check; :class:`~simstudy.stats.boundary.BadEntry` says which one failed.

    Raises
    ------
    FileNotFoundError
        If there is no entry (not a reason to warn).
    """
    from simstudy.stats import boundary

    try:
        # Our own file object: np.load leaks the one it opens when the file is not a zip archive; open_regular:
        # a FIFO put in a (shared) cache is an unreadable entry, recomputed, never a reader waiting for ever.
        with open_regular(path) as fh, np.load(fh, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
            comment = f.zip.comment
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise boundary.BadEntry(f"unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    if not comment.startswith(_CACHE_TAG):
        raise boundary.BadEntry("an older cache format without key or checksum")
    header, _, stored = comment[len(_CACHE_TAG) :].rpartition(_SHA_TAG)
    if stored.decode(errors="replace") != digest(arrays, header):
        raise boundary.BadEntry("checksum mismatch (damaged)")
    try:
        meta = json.loads(header)
        if not isinstance(meta, dict):
            raise TypeError
        pointwise = float(meta["pointwise"])
        wanted = _entry_header(n, confidence, kind, meta["pointwise"])
    except (ValueError, TypeError, KeyError):
        raise boundary.BadEntry("key unreadable") from None
    if meta != wanted:
        diff = ", ".join(
            f"{k} {meta.get(k)!r} not {wanted.get(k)!r}"
            for k in sorted(meta.keys() | wanted.keys())
            if meta.get(k) != wanted.get(k)
        )
        raise boundary.BadEntry(f"an entry for another key or algorithm ({diff})")
    if sorted(arrays) != ["high", "low"]:
        raise boundary.BadEntry(f"arrays {sorted(arrays)}, not ['high', 'low']")
    return boundary.checked(n, confidence, kind, pointwise, arrays["low"], arrays["high"])


class DiskStore:
    """The LD intervals' store on disk, under :func:`cache_dir` (read at every call).

    The interface :func:`simstudy.stats.boundary.ld_intervals` calls: ``where``, ``has``, ``get``, ``put``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     os.environ["SIMSTUDY_CACHE_DIR"] = d
    ...     store = DiskStore()
    ...     print(store.where() == d, store.has(4, 0.9, "equal_tailed"), store.get(4, 0.9, "equal_tailed"))
    True False None
    >>> del os.environ["SIMSTUDY_CACHE_DIR"]
    """

    def where(self) -> str:
        """The cache directory, as a string (part of the in-memory cache's key)."""
        return str(cache_dir())

    def has(self, n: int, confidence: float, kind: str) -> bool:
        """Whether an entry exists for the key (not yet checked)."""
        return _cache_path(n, confidence, kind).is_file()

    def get(self, n: int, confidence: float, kind: str):
        """The entry's checked intervals, or ``None`` when there is none or it fails a check (then with a
        :class:`CacheWarning` pointing at the caller of ``ld_intervals``)."""
        from simstudy.stats import boundary

        path = _cache_path(n, confidence, kind)
        try:
            return _read_entry(path, n, confidence, kind)
        except FileNotFoundError:
            return None  # not cached yet
        except boundary.BadEntry as exc:
            # stacklevel 4: this method, the kernel's cached solver, ld_intervals (lru_cache adds no Python
            # frame), then its caller
            warnings.warn(f"LD interval cache {path}: {exc}; recomputed and rewrote it", CacheWarning, stacklevel=4)
            return None

    def put(self, ld) -> None:
        """Write the entry for ``ld`` (a read-only cache directory costs speed, not correctness)."""
        try:
            _write_entry(_cache_path(ld.n, ld.confidence, ld.kind), ld)
        except OSError:
            pass


def install() -> None:
    """Install a :class:`DiskStore` as the LD intervals' store (what importing the engine does).

    Examples
    --------
    >>> install(); isinstance(stores.get_store("ld_intervals"), DiskStore)
    True
    """
    if not isinstance(stores.get_store("ld_intervals"), DiskStore):
        stores.set_store("ld_intervals", DiskStore())
