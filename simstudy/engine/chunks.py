"""The chunk store: each finished chunk of a run's results, kept so that an interrupted run resumes from them.

A chunk is one ``.npz`` file written atomically (:func:`simstudy.io.atomic_path`) whose zip comment carries its
identity (run fingerprint, cell, chunk, reps, array layout) and a SHA-256; a chunk that is not what its file
name says is never returned as data (:class:`CorruptChunk`). A store is claimed for one configuration: the
chunks of another are refused (:class:`RunDirConflict`).

=======================  ===================================================================================
name                     what it is
=======================  ===================================================================================
:class:`ChunkStore`      the store: claim, write, read, verify
:class:`CorruptChunk`    a chunk that cannot be trusted (recomputed by the runner)
:class:`RunDirConflict`  a run directory holding another configuration's results
:func:`config_diff`      ``key: old -> new`` between two nested configs
:data:`RUN_DIR_FIXES`    the two ways on from a run directory holding other results
=======================  ===================================================================================

Moved from :mod:`simstudy.io` (issue 26); imported from here only (issue 35).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from simstudy.io import atomic_path, canonical, digest, json_default, open_regular, write_json

__all__ = ["ChunkStore", "CorruptChunk", "RunDirConflict"]


class CorruptChunk(Exception):
    """A stored chunk that cannot be trusted: unreadable, damaged, of an older format, or not the chunk its
    file name says (another run's, cell's or chunk's); the message says what did not match.

    Raised by :meth:`ChunkStore.read` and :meth:`ChunkStore.verify`. The runner
    (:func:`simstudy.engine.runner.run_tasks`) catches it, warns and recomputes the chunk; such a file is never
    returned as data. The one-line message names the file (relative to the run directory) and the mismatch.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = ChunkStore(Path(d) / "chunks", "f00d")
    ...     store.write("ab12", 0, 3, {"x": np.arange(3.0)})
    ...     np.savez(store.path("ab12", 0, 3), x=np.ones(3))  # overwritten by something else
    ...     try:
    ...         store.read("ab12", 0, 3)
    ...     except CorruptChunk as exc:
    ...         print(exc)
    chunks/f00d/cell-ab12/chunk-000000-r3.npz: no identity or checksum (not simstudy's)
    """


class RunDirConflict(ValueError):
    """A run directory holding the chunks of a different configuration; the message names what differs.

    Raised by :meth:`ChunkStore.claim` before anything is written, so that results of one configuration are
    never mixed with another's (and by the command's check of a run directory's identity record, when a
    command, an input file, a plug-in or a kernel version differs): rerun with the original settings, into
    another run directory, or with ``overwrite=true`` (the command moves the earlier results aside). The
    one-line message names what differs (config keys as ``key: old -> new``, the first three) and the fixes.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     first = ChunkStore(Path(d) / "chunks", "aaaa")
    ...     first.claim({"reps": 100})
    ...     first.write("c0", 0, 2, {"x": np.zeros(2)})
    ...     try:
    ...         ChunkStore(Path(d) / "chunks", "bbbb").claim({"reps": 200})
    ...     except RunDirConflict as exc:
    ...         print(str(exc).split("(", 1)[1].split(";")[0])
    reps: 100 -> 200)
    """


#: Version of the chunk file format. Its zip comment is ``simstudy-chunk:<identity> sha256:<hex>``: the
#: identity is canonical JSON (format, run fingerprint, cell, chunk, reps, and [name, dtype, shape] of every
#: array), the SHA-256 is over those exact bytes and then every array's name, dtype, shape and bytes.
_CHUNK_FORMAT = 2
_CHUNK_TAG = b"simstudy-chunk:"
_SHA_TAG = b" sha256:"
#: The comment of format 1 chunks (a checksum of the arrays only, no identity): never trusted, recomputed.
_CHECKSUM_TAG = b"simstudy-sha256:"


def _layout(arrays: dict[str, np.ndarray]) -> list[list]:
    """``[name, dtype, shape]`` of every array, in name order, as it reads back from JSON."""
    return [[name, arrays[name].dtype.str, list(arrays[name].shape)] for name in sorted(arrays)]


def _identity(fingerprint: str, cell: str, chunk: int, reps: int, arrays: dict[str, np.ndarray]) -> dict:
    return {
        "format": _CHUNK_FORMAT,
        "run": fingerprint,
        "cell": cell,
        "chunk": int(chunk),
        "reps": int(reps),
        "arrays": _layout(arrays),
    }


def _mismatch(found: dict, run: str, cell: str, chunk: int, reps: int) -> str | None:
    """What a chunk's stored identity says it is, against what its place in the store says, or ``None``."""
    if found.get("format") != _CHUNK_FORMAT:
        return f": chunk format {found.get('format')!r}, not {_CHUNK_FORMAT}"
    if found.get("run") != run:
        return f" holds a chunk of another run or configuration (run fingerprint {found.get('run')}, not {run})"
    if (found.get("cell"), found.get("chunk")) != (cell, chunk):
        return f" holds cell {found.get('cell')} chunk {found.get('chunk')}, not cell {cell} chunk {chunk}"
    if found.get("reps") != reps:
        return f" holds {found.get('reps')} replicates, not {reps}"
    return None


def flatten(obj: Any, prefix: str = "", *, lists: bool = False) -> dict[str, Any]:
    """Dotted keys of nested mappings; with ``lists``, also of lists of mappings (an item by its index)."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}.", lists=lists))
        return out
    if lists and isinstance(obj, list) and obj and all(isinstance(v, dict) for v in obj):
        out = {}
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}.", lists=lists))
        return out
    return {prefix.rstrip("."): obj}


def _shown(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def config_diff(old: dict, new: dict) -> list[str]:
    """``key: old -> new`` for every dotted key whose value differs between two nested mappings (lists of
    mappings, such as a config's estimators, item by item; a long value cut short)."""
    a, b = flatten(old, lists=True), flatten(new, lists=True)
    return [
        f"{k}: {_shown(a.get(k, '(unset)'))} -> {_shown(b.get(k, '(unset)'))}"
        for k in sorted(a.keys() | b.keys())
        if a.get(k, "(unset)") != b.get(k, "(unset)")
    ]


#: The two ways on from a run directory holding other results, said by every refusal.
RUN_DIR_FIXES = (
    "run into a new directory (hydra.run.dir=NEW), or add overwrite=true to move its results to "
    "previous/<time>/ inside it and compute afresh"
)


class ChunkStore:
    """Finished chunks of a study on disk, one ``.npz`` per (cell, chunk).

    The directory is keyed by a fingerprint of everything that determines a chunk's numbers, so results
    of a different configuration are never read back as this one's; :meth:`claim` refuses a run directory
    that already holds another fingerprint's chunks. A file's name also carries the chunk's replicate count
    (the last chunk of a study may be short). Files are written atomically (temporary name, fsync, rename).

    Every file carries its identity in the zip comment -- format version, run fingerprint, cell key, chunk
    index, replicate count, and its arrays' names, dtypes and shapes -- with a SHA-256 over that identity
    and the arrays' bytes, all verified on every read. A file that does not match -- truncated or damaged,
    of an older format without identity, or a valid chunk in the wrong place (another chunk's, another
    cell's, another run's) -- raises :class:`CorruptChunk` and is never returned as data. The files stay
    plain ``.npz`` that :func:`numpy.load` opens.

    Parameters
    ----------
    root : str or os.PathLike
        ``<run dir>/chunks``; the chunks go to ``root/<fingerprint>/cell-<cell>/chunk-<chunk>-r<reps>.npz``
        (nothing is created until the first write or :meth:`claim`).
    fingerprint : str
        Hex digest identifying the study's data-generating configuration (e.g. from
        :func:`simstudy.engine.runner.stable_hash`).

    Attributes
    ----------
    root : pathlib.Path
        ``root/<fingerprint>``, the directory of this configuration's chunks.
    fingerprint : str
        As given.

    See Also
    --------
    simstudy.engine.runner.run_tasks : Runs the tasks not yet stored, and stores each result as it arrives.

    Examples
    --------
    >>> import shutil, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = ChunkStore(Path(tmp.name) / "chunks", "f00d")
    >>> store.write("ab12", 0, 3, {"x": np.arange(3.0)})
    >>> store.has("ab12", 0, 3), store.has("ab12", 1, 3)
    (True, False)
    >>> store.read("ab12", 0, 3)["x"]
    array([0., 1., 2.])

    A file copied into another chunk's place is refused, not read back as that chunk:

    >>> _ = shutil.copy(store.path("ab12", 0, 3), store.path("ab12", 1, 3))
    >>> store.read("ab12", 1, 3)
    Traceback (most recent call last):
    ...
    simstudy.engine.chunks.CorruptChunk: chunks/f00d/cell-ab12/chunk-000001-r3.npz holds cell ab12 chunk 0, not cell ab12 chunk 1
    >>> tmp.cleanup()
    """

    def __init__(self, root: str | os.PathLike, fingerprint: str):
        self.root = Path(root) / fingerprint
        self.fingerprint = fingerprint

    def claim(self, config: dict) -> None:
        """Mark the run directory as this fingerprint's, recording ``config`` (what generated the chunks).

        Parameters
        ----------
        config : dict
            The configuration that determines the chunks' numbers, JSON-serialisable (as
            :func:`write_json` accepts); written to ``<root>/config.json`` unless already there.

        Raises
        ------
        RunDirConflict
            If the directory holds chunks of another fingerprint; the message names the config keys that
            differ (from that fingerprint's recorded config).
        """
        config = json.loads(json.dumps(config, default=json_default))  # as it will read back
        others = [p for p in self.root.parent.glob("*") if p.is_dir() and p != self.root and any(p.rglob("*.npz"))]
        if others:
            try:
                old = json.loads((others[0] / "config.json").read_text())
                diff = config_diff(old, config)
            except (OSError, ValueError):
                diff = []
            what = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
            what = what or "other input files, plug-in code or kernel versions, or an earlier chunk format"
            raise RunDirConflict(
                f"{self.root.parent.parent} holds results of a different configuration ({what}); {RUN_DIR_FIXES}"
            )
        path = self.root / "config.json"
        if not path.is_file():
            write_json(config, path)

    def path(self, cell: str, chunk: int, reps: int) -> Path:
        """The file of a chunk: ``<root>/cell-<cell>/chunk-<chunk, 6 digits>-r<reps>.npz`` (it may not exist)."""
        return self.root / f"cell-{cell}" / f"chunk-{chunk:06d}-r{reps}.npz"

    def stored(self) -> list[tuple[str, int, int]]:
        """Every chunk file under the store's root, as ``(cell, chunk, reps)`` (:meth:`path` read backwards),
        sorted; files of other names are not chunks and are left out.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     store = ChunkStore(d, "f00d")
        ...     store.write("ab12", 1, 50, {"x": np.zeros(3)})
        ...     store.write("ab12", 0, 50, {"x": np.zeros(3)})
        ...     store.stored()
        [('ab12', 0, 50), ('ab12', 1, 50)]
        """
        found = []
        for path in self.root.glob("cell-*/chunk-*-r*.npz"):
            number, _, reps = path.stem[len("chunk-") :].partition("-r")
            if number.isdigit() and reps.isdigit():
                found.append((path.parent.name[len("cell-") :], int(number), int(reps)))
        return sorted(found)

    def has(self, cell: str, chunk: int, reps: int) -> bool:
        """Whether the chunk's file exists (see :meth:`verify` for whether it is whole)."""
        return self.path(cell, chunk, reps).is_file()

    def write(self, cell: str, chunk: int, reps: int, arrays: dict[str, np.ndarray]) -> None:
        """Store a chunk's arrays with its identity and checksum (atomically, replacing any earlier file).

        Parameters
        ----------
        cell : str
            The cell's key (hex).
        chunk : int
            The chunk's index in the cell, from 0.
        reps : int
            Replicates in the chunk.
        arrays : dict of str to array_like
            The results, by name; any shapes and numeric dtypes (no object arrays).
        """
        arrays = {name: np.asarray(a) for name, a in arrays.items()}
        header = canonical(_identity(self.fingerprint, cell, chunk, reps, arrays))
        with atomic_path(self.path(cell, chunk, reps)) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)  # type: ignore[arg-type]  # the stub fears a key "allow_pickle"; none is
            with zipfile.ZipFile(tmp, "a") as zf:
                zf.comment = _CHUNK_TAG + header + _SHA_TAG + digest(arrays, header).encode()

    def read(self, cell: str, chunk: int, reps: int) -> dict[str, np.ndarray]:
        """The chunk's arrays, after checking its identity and checksum.

        Raises
        ------
        CorruptChunk
            If the file cannot be read whole, has no identity (an older format), its checksum differs, or it
            is another chunk than (this run's fingerprint, ``cell``, ``chunk``, ``reps``); the one-line
            message names the file (relative to the run directory) and what did not match.
        """
        path = self.path(cell, chunk, reps)
        try:
            # Our own file object: np.load leaks the one it opens when the file is not a zip archive; opened by
            # open_regular: a FIFO in place of a chunk is refused, never waited on for ever.
            with open_regular(path) as fh, np.load(fh, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
                comment = data.zip.comment
        except Exception as exc:
            self._corrupt(path, f": unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})")
        if not comment.startswith(_CHUNK_TAG):
            self._corrupt(
                path,
                ": an older chunk format without identity; it cannot be trusted"
                if comment.startswith(_CHECKSUM_TAG)
                else ": no identity or checksum (not simstudy's)",
            )
        header, _, stored = comment[len(_CHUNK_TAG) :].rpartition(_SHA_TAG)
        # The checksum first: the identity of a damaged file means nothing.
        if stored.decode(errors="replace") != digest(arrays, header):
            self._corrupt(path, ": checksum mismatch (damaged)")
        try:
            found = json.loads(header)
            wrong = _mismatch(found, self.fingerprint, cell, chunk, reps)
        except (ValueError, AttributeError):  # valid checksum over nonsense: not written by this code
            wrong = ": identity unreadable"
        if wrong is None and found.get("arrays") != _layout(arrays):  # the checksum covers both: a writer's bug
            wrong = f": arrays {_layout(arrays)} are not those of its identity {found.get('arrays')}"
        if wrong is not None:
            self._corrupt(path, wrong)
        return arrays

    def _corrupt(self, path: Path, what: str) -> NoReturn:
        raise CorruptChunk(f"{path.relative_to(self.root.parent.parent)}{what}") from None

    def verify(self, cell: str, chunk: int, reps: int) -> None:
        """Read the chunk and check it; raises :class:`CorruptChunk` if it is not whole."""
        self.read(cell, chunk, reps)
