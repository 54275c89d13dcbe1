"""Files a run writes: atomically, so a crash or Ctrl-C never leaves a half-written one.

Every writer goes through :func:`atomic_path`: write to a temporary name in the target's directory, flush
and fsync, then :func:`os.replace` onto the target (atomic on POSIX). Readers therefore see either the old
file or the whole new one. :class:`ChunkStore` keeps the results of finished chunks so that an interrupted
run resumes from them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

__all__ = [
    "atomic_path",
    "write_json",
    "write_parquet",
    "write_csv",
    "write_text",
    "markdown_table",
    "save_figure",
    "ChunkStore",
    "CorruptChunk",
    "RunDirConflict",
    "environment",
]


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success fsync it and rename it onto ``path``.

    Write the file's content to the yielded path inside the ``with`` block. When the block ends normally the
    temporary file is flushed to disk (fsync) and renamed onto ``path`` with :func:`os.replace`, atomic on
    POSIX: a reader sees the old file or the whole new one, never half of one. On any exception
    (KeyboardInterrupt included) the temporary file is removed and ``path`` is left untouched. The temporary
    name (``.<stem>.<8 random characters><suffix>.part``, in ``path``'s directory) keeps the suffix, so writers
    that infer a format from it (pandas, matplotlib) still work. Missing parent directories are created. The
    file gets the permissions of an ordinary new file (0666 less the umask).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced if it exists).

    Yields
    ------
    pathlib.Path
        The temporary file to write into (it exists, empty, when the block starts).

    Raises
    ------
    OSError
        If the directory cannot be created, or writing, syncing or renaming fails (a full disk, say); an error
        that names no file is re-raised naming ``path``. Any exception of the ``with`` block propagates
        unchanged after the temporary file is removed.

    See Also
    --------
    write_json, write_csv, write_parquet, write_text, save_figure : The writers built on it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = Path(d) / "table.csv"
    ...     with atomic_path(target) as tmp:
    ...         _ = tmp.write_text("a,b\\n1,2\\n")
    ...         print(tmp.name.endswith(".csv.part"), target.exists())
    ...     print(target.read_text(), end="")
    ...     try:  # a writer that fails half-way leaves the old file as it was, and no temporary file
    ...         with atomic_path(target) as tmp:
    ...             _ = tmp.write_text("half a ta")
    ...             raise RuntimeError("crash")
    ...     except RuntimeError:
    ...         pass
    ...     print(target.read_text(), end="")
    ...     print(sorted(p.name for p in Path(d).iterdir()))
    True False
    a,b
    1,2
    a,b
    1,2
    ['table.csv']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix + ".part", dir=path.parent)
    tmp_path = Path(tmp)
    # Everything after mkstemp is inside the try: a SIGTERM (raised here as KeyboardInterrupt) arriving between
    # the file's creation and the write still removes it (it once left a .part behind, in a test).
    try:
        os.close(fd)
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, path)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        if exc.filename is None:  # a full disk met by fsync or a writer names no file: name the one we wrote
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_json(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` as indented JSON with sorted keys, atomically (see :func:`atomic_path`).

    NumPy scalars and arrays, tuples, sets and paths are converted (to numbers, lists and strings).

    Parameters
    ----------
    obj : object
        A JSON-serialisable structure (dicts, lists, str, numbers, bools, None), possibly holding NumPy
        scalars or arrays, tuples, sets or :class:`pathlib.Path` objects.
    path : str or os.PathLike
        The file to write (replaced if it exists); a trailing newline ends it.

    Raises
    ------
    TypeError
        If ``obj`` holds a value of another type ("cannot write <type> to JSON"); nothing is written.
    OSError
        If the file cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_json({"reps": np.int64(3), "levels": (0.5, 0.95)}, Path(d) / "run.json")
    ...     print((Path(d) / "run.json").read_text(), end="")
    {
      "levels": [
        0.5,
        0.95
      ],
      "reps": 3
    }
    """
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, (np.ndarray, tuple, set)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")


def write_parquet(frame, path: str | os.PathLike) -> None:
    """Write a pandas DataFrame as parquet with pyarrow, atomically (see :func:`atomic_path`).

    The index is not written; column dtypes are kept exactly (unlike :func:`write_csv`).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table to write.
    path : str or os.PathLike
        The file to write (replaced if it exists), conventionally ``*.parquet``.

    Raises
    ------
    OSError
        If the file cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_parquet(pd.DataFrame({"k": [1, 2], "estimate": [0.5, 0.75]}), Path(d) / "summary.parquet")
    ...     print(pd.read_parquet(Path(d) / "summary.parquet"))
       k  estimate
    0  1      0.50
    1  2      0.75
    """
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, engine="pyarrow", index=False)


def write_csv(frame, path: str | os.PathLike) -> None:
    """Write a pandas DataFrame as CSV, atomically (see :func:`atomic_path`).

    The index is not written; floats are written in full, as the shortest text that reads back as the same
    float (1e9 + 0.7 is ``1000000000.7``, not ``1000000001``): a CSV holds the numbers computed, not a rounding.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table to write.
    path : str or os.PathLike
        The file to write (replaced if it exists).

    Raises
    ------
    OSError
        If the file cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_csv(pd.DataFrame({"k": [1, 2], "estimate": [1 / 3, 0.75]}), Path(d) / "curve.csv")
    ...     print((Path(d) / "curve.csv").read_text(), end="")
    k,estimate
    1,0.3333333333333333
    2,0.75
    """
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)  # no float_format: pandas writes repr(x), the shortest exact text


def markdown_table(frame) -> str:
    """A pandas frame as a GitHub-flavoured markdown table (no extra dependency).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its index is left out. Floats are shown with 4 significant digits, other values with
        :class:`str`.

    Returns
    -------
    str
        A header row, a ``|---|`` separator row and one row per row of ``frame``, each line ending in a
        newline.

    Examples
    --------
    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"n": [10, 20], "estimate": [0.81234567, 0.9]})), end="")
    | n | estimate |
    |---|---|
    | 10 | 0.8123 |
    | 20 | 0.9 |
    """
    cells = [[str(c) for c in frame.columns]] + [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("---" for _ in frame.columns) + "|")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a string to a file, atomically (see :func:`atomic_path`).

    Parameters
    ----------
    text : str
        The file's whole content (written in the platform's default encoding; no newline is added).
    path : str or os.PathLike
        The file to write (replaced if it exists).

    Raises
    ------
    OSError
        If the file cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_text("# Report\\n", Path(d) / "REPORT.md")
    ...     print((Path(d) / "REPORT.md").read_text(), end="")
    # Report
    """
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def save_figure(fig, path: str | os.PathLike, **kwargs: Any) -> None:
    """Save a matplotlib figure atomically (see :func:`atomic_path`), in the format of the path's suffix.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to save (it is not closed).
    path : str or os.PathLike
        The file to write (replaced if it exists); its suffix (``.png``, ``.pdf``, ``.svg``, ...) sets the
        format.
    **kwargs
        Passed to :meth:`matplotlib.figure.Figure.savefig` (``dpi=120``, ``bbox_inches="tight"``, ...).

    Raises
    ------
    OSError
        If the file cannot be written (see :func:`atomic_path`).

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(1, 1))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_figure(fig, Path(d) / "fig.svg")
    ...     print((Path(d) / "fig.svg").read_text().count("<svg"))
    1
    """
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."), **kwargs)


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


def _digest(arrays: dict[str, np.ndarray], header: bytes = b"") -> str:
    """SHA-256 over ``header`` then every array's name, dtype, shape and bytes (in name order)."""
    h = hashlib.sha256(header)
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


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


def _canonical(identity: dict) -> bytes:
    return json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()


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


def _flatten(obj: Any, prefix: str = "", *, lists: bool = False) -> dict[str, Any]:
    """Dotted keys of nested mappings; with ``lists``, also of lists of mappings (an item by its index)."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}.", lists=lists))
        return out
    if lists and isinstance(obj, list) and obj and all(isinstance(v, dict) for v in obj):
        out = {}
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}{i}.", lists=lists))
        return out
    return {prefix.rstrip("."): obj}


def _shown(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def config_diff(old: dict, new: dict) -> list[str]:
    """``key: old -> new`` for every dotted key whose value differs between two nested mappings (lists of
    mappings, such as a config's estimators, item by item; a long value cut short)."""
    a, b = _flatten(old, lists=True), _flatten(new, lists=True)
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
    simstudy.io.CorruptChunk: chunks/f00d/cell-ab12/chunk-000001-r3.npz holds cell ab12 chunk 0, not cell ab12 chunk 1
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
        config = json.loads(json.dumps(config, default=_json_default))  # as it will read back
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
        header = _canonical(_identity(self.fingerprint, cell, chunk, reps, arrays))
        with atomic_path(self.path(cell, chunk, reps)) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)  # type: ignore[arg-type]  # the stub fears a key "allow_pickle"; none is
            with zipfile.ZipFile(tmp, "a") as zf:
                zf.comment = _CHUNK_TAG + header + _SHA_TAG + _digest(arrays, header).encode()

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
            # Our own file object: np.load leaks the one it opens when the file is not a zip archive.
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
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
        if stored.decode(errors="replace") != _digest(arrays, header):
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


def _git_revision() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict[str, Any]:
    """Versions of Python, the platform, simstudy's dependencies and the git revision, for run metadata.

    Returns
    -------
    dict
        ``python`` (version string), ``platform`` (:func:`platform.platform`), ``packages`` (distribution
        name to installed version, or None when not installed: simstudy, numpy, scipy, pandas, pyarrow,
        joblib, hydra-core, seaborn, matplotlib, tqdm) and ``git_revision`` (the commit of simstudy's source
        tree, ``+dirty`` appended when tracked files changed; None outside a git checkout).

    Examples
    --------
    >>> env = environment()
    >>> sorted(env), sorted(env["packages"])[:3]
    (['git_revision', 'packages', 'platform', 'python'], ['hydra-core', 'joblib', 'matplotlib'])
    """
    packages: dict[str, str | None] = {}
    for name in (
        "simstudy",
        "numpy",
        "scipy",
        "pandas",
        "pyarrow",
        "joblib",
        "hydra-core",
        "seaborn",
        "matplotlib",
        "tqdm",
    ):
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": packages,
        "git_revision": _git_revision(),
    }


# --- Run directories: what simstudy wrote, and who is writing -------------------------------------------------
#
# A run directory is claimed before anything is written into it: a lock file created with O_CREAT | O_EXCL (so
# exactly one process wins) holds the owner's pid and host; the owner removes it when it exits, by any path. A
# lock whose pid is not alive on this host (a run killed with SIGKILL) is stale and taken over. The marker
# RUN_MARKER says "simstudy's": a directory that is not empty and carries neither it nor the files of an
# earlier version's run is someone else's, and is refused before anything is written.

#: The marker of a simstudy run directory (written once, at its first claim).
RUN_MARKER = ".simstudy-run.json"
#: The lock of a run in progress; shards of one run (``runner.shard=i/N``) share the directory, each with
#: its own lock ``LOCK_NAME.shard-i-of-N``, and exclude only an unsharded run (and the same shard twice).
LOCK_NAME = ".simstudy-lock"
#: A run directory of a simstudy older than RUN_MARKER: its config.yaml and one of these.
_LEGACY_RESULTS = ("run.json", "chunks", "shards", "curves.parquet", "bands.parquet", "AUDIT.md")
#: An unreadable lock this old is a crash between its creation and its first write: stale.
_UNREADABLE_LOCK_SECONDS = 30.0
#: The temporary names of :func:`atomic_path` (``tempfile.mkstemp``: a dot, the stem, a dot, 8 random
#: characters, the suffix, ``.part``); nothing else is ever removed as a stray temporary file.
_TEMPORARY = re.compile(r"\..*\.[a-z0-9_]{8}(\.[^./]*)?\.part")


class NotARunDir(ValueError):
    """A directory that holds files but is not a simstudy run directory; nothing was written into it.

    Raised by :func:`check_run_dir` and :func:`claim_run_dir`, so that a mistyped ``hydra.run.dir`` never
    writes into (or cleans up) someone else's directory. The message names the directory and a few of its
    files.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "thesis.tex").write_text("mine")
    ...     try:
    ...         claim_run_dir(d)
    ...     except NotARunDir as exc:
    ...         print(str(exc).split("(")[1].split(")")[0])
    it holds thesis.tex
    """


class RunDirBusy(RuntimeError):
    """A run directory claimed by a live run (the message names its pid and host).

    Raised by :func:`claim_run_dir` when another live process (or the same shard of a sharded run) holds the
    directory's lock. A lock whose process is gone is taken over instead; a lock held on another host cannot
    be checked from here and is respected (remove it by hand if that run is dead).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     claim = claim_run_dir(d)
    ...     try:
    ...         claim_run_dir(d)
    ...     except RunDirBusy as exc:
    ...         print(str(exc).split("(")[0].endswith("is in use by another simstudy run "))
    ...     claim.release()
    True
    """


def _is_run_dir(path: Path, names: set[str]) -> bool:
    if RUN_MARKER in names or any(n == LOCK_NAME or n.startswith(LOCK_NAME + ".") for n in names):
        return True
    return (path / "config.yaml").is_file() and any((path / n).exists() for n in _LEGACY_RESULTS)


def check_run_dir(path: str | os.PathLike) -> None:
    """Refuse a directory that exists, is not empty and is not a simstudy run directory.

    Parameters
    ----------
    path : str or os.PathLike
        The run directory (it need not exist).

    Raises
    ------
    NotARunDir
        If ``path`` holds files and neither :data:`RUN_MARKER`, a lock, nor an earlier version's results
        (``config.yaml`` with ``run.json`` or ``chunks/``...); the message names the directory and a few of its
        files. Nothing is written either way.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = Path(tmp.name)
    >>> check_run_dir(d)  # empty: fine
    >>> check_run_dir(d / "not-yet")  # missing: fine
    >>> _ = (d / "figure.png").write_bytes(b"mine")
    >>> check_run_dir(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    simstudy.io.NotARunDir: ... is not empty and is not a simstudy run directory (it holds figure.png); ...
    >>> tmp.cleanup()
    """
    path = Path(path)
    if not path.is_dir():
        return
    names = {p.name for p in path.iterdir()}
    if names and not _is_run_dir(path, names):
        shown = ", ".join(sorted(names)[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise NotARunDir(
            f"{path} is not empty and is not a simstudy run directory (it holds {shown}); choose "
            f"another run directory (hydra.run.dir=...) or an empty one"
        )


def _process_start(pid: int) -> str | None:
    """The start time of a process (clock ticks since boot, Linux), to tell a reused pid from its owner."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner() -> dict:
    import secrets
    import socket

    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "start": _process_start(os.getpid()),
        "since": time.strftime("%Y-%m-%d %H:%M:%S"),
        "token": secrets.token_hex(8),
        "argv": sys.argv[1:],
    }


def _alive(owner: dict) -> bool | None:
    """Whether a lock's owner runs: None when it cannot be told from here (another host)."""
    import socket

    if owner.get("host") != socket.gethostname():
        return None
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        pass
    start = _process_start(pid)
    return start is None or owner.get("start") is None or start == owner["start"]


def _read_lock(path: Path) -> dict | None:
    """A lock's owner; ``{}`` for a lock not yet (or never) written; None when the lock is gone."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        owner = json.loads(text)
        return owner if isinstance(owner, dict) else {}
    except ValueError:
        return {}


def _describe_owner(owner: dict) -> str:
    if not owner:
        return "a run that is starting"
    return f"pid {owner.get('pid')} on {owner.get('host')}, since {owner.get('since')}"


def _take_lock(lock: Path, owner: dict, warn) -> None:
    """Create ``lock`` for ``owner``, taking over a stale one; raise RunDirBusy if a live run holds it."""
    blob = json.dumps(owner, sort_keys=True).encode()
    for _ in range(5):  # a lost race for a stale lock: look again
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            held = _read_lock(lock)
            if held is None:
                continue  # released meanwhile
            if held == {}:
                try:
                    age = time.time() - lock.stat().st_mtime
                except FileNotFoundError:
                    continue
                alive: bool | None = age < _UNREADABLE_LOCK_SECONDS
            else:
                alive = _alive(held)
            if alive is not False:
                hint = "" if alive else f"; if that run is dead, remove {lock}"
                raise RunDirBusy(
                    f"{lock.parent} is in use by another simstudy run ({_describe_owner(held)}); wait "
                    f"for it to finish or use another run directory{hint}"
                ) from None
            # Stale: move it aside under a name of our own (atomic: one process wins), check that what moved
            # is the lock we judged stale (not a fresh one created meanwhile), and try again.
            aside = lock.with_name(f"{lock.name}.stale-{owner['token']}")
            try:
                os.rename(lock, aside)
            except FileNotFoundError:
                continue
            if _read_lock(aside) != held:
                with contextlib.suppress(OSError):
                    os.link(aside, lock)  # a live lock: put it back (unless a third run took the name)
                aside.unlink(missing_ok=True)
                continue
            aside.unlink(missing_ok=True)
            warn(
                f"{lock.parent}: took over the lock of a simstudy run that is no longer running "
                f"({_describe_owner(held)})"
            )
            continue
        try:
            os.write(fd, blob)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            lock.unlink(missing_ok=True)
            raise
        os.close(fd)
        return
    raise RunDirBusy(f"{lock.parent}: could not take its lock ({lock}); another simstudy run is claiming it")


class RunDirClaim:
    """A run directory claimed by this process: see :func:`claim_run_dir`. :meth:`release` gives it up.

    Made by :func:`claim_run_dir`, not by hand.

    Parameters
    ----------
    path : pathlib.Path
        The run directory.
    lock : pathlib.Path
        The lock file this claim holds (:data:`LOCK_NAME`, or its shard's variant); None once released.
    marker_written : bool
        Whether this claim wrote :data:`RUN_MARKER` (then :meth:`release` removes it again if nothing else
        was written).
    removed : tuple of pathlib.Path
        Stray temporary files of an interrupted run that the claim removed.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     claim = claim_run_dir(Path(d) / "run")
    ...     print(claim.lock.name, claim.marker_written, claim.removed)
    ...     claim.release()
    ...     print(claim.lock)
    .simstudy-lock True ()
    None
    """

    lock: Path | None  # None once released

    def __init__(self, path: Path, lock: Path, marker_written: bool, removed: tuple[Path, ...]):
        self.path, self.lock, self.marker_written, self.removed = path, lock, marker_written, removed
        self._pid = os.getpid()
        self._found = _contents(path)

    def release(self) -> None:
        """Remove the lock (only in the process that took it); remove the marker too if this claim wrote it
        and nothing else was written, so that a refused run leaves the directory as it found it (a directory
        someone sent, refused, is not taken for one of this machine's runs afterwards)."""
        if os.getpid() != self._pid or self.lock is None:
            return
        self.lock.unlink(missing_ok=True)
        self.lock = None
        if self.marker_written:
            with contextlib.suppress(OSError):
                if _contents(self.path) == self._found:
                    (self.path / RUN_MARKER).unlink()


def _contents(path: Path) -> dict[str, tuple[int, int]]:
    """What a run writes changes: each entry under ``path`` (files at the top; every directory, whose time
    changes when an entry is added or removed in it) by its modification time and size, without the marker
    and the locks (simstudy's own). Only directories are walked, so it is cheap beside a run's chunks."""
    found: dict[str, tuple[int, int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            if entry.name == RUN_MARKER or entry.name.startswith(LOCK_NAME):
                continue
            st = entry.stat(follow_symlinks=False)
            found[entry.name] = (st.st_mtime_ns, st.st_size)
        for top, dirs, _ in os.walk(path):
            for d in dirs:
                st = os.stat(os.path.join(top, d), follow_symlinks=False)
                found[os.path.relpath(os.path.join(top, d), path)] = (st.st_mtime_ns, st.st_size)
    return found


def claim_run_dir(path: str | os.PathLike, *, shard: str | None = None, warn=None) -> RunDirClaim:
    """Claim a run directory for this process before writing into it.

    Refuses a directory that is someone else's (:func:`check_run_dir`), takes the lock (a stale one -- its
    pid no longer running on this host -- is taken over, with ``warn(message)``), writes :data:`RUN_MARKER`
    if absent, and, holding the whole directory, removes stray temporary files of :func:`atomic_path` left by a
    killed run.

    Parameters
    ----------
    path : str or os.PathLike
        The run directory; created if missing.
    shard : str or None, keyword-only
        A shard's label (``"2/8"``): shards of one run write into one directory at once, each under its own
        lock; a shard excludes an unsharded run and the same shard, not the others. Default None (unsharded).
        A shard does not remove stray temporary files (another shard may be writing them).
    warn : callable or None, keyword-only
        Called as ``warn(message)`` with a one-line message when a stale lock is taken over or stray files are
        removed. Default None (silent).

    Returns
    -------
    RunDirClaim
        Release it (:meth:`RunDirClaim.release`) when the run ends, however it ends.

    Raises
    ------
    NotARunDir
        The directory holds files and is not a simstudy run directory (nothing is written).
    RunDirBusy
        A live run holds the directory (its pid and host are named).

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = Path(tmp.name) / "run"
    >>> claim = claim_run_dir(d)
    >>> sorted(p.name for p in d.iterdir())
    ['.simstudy-lock', '.simstudy-run.json']
    >>> claim_run_dir(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    simstudy.io.RunDirBusy: ... is in use by another simstudy run (pid ...); wait for it to finish or use ...
    >>> claim.release()
    >>> sorted(p.name for p in d.iterdir())  # the marker went with the claim: nothing else was written
    []
    >>> tmp.cleanup()
    """
    path = Path(path)
    warn = warn or (lambda message: None)
    check_run_dir(path)
    path.mkdir(parents=True, exist_ok=True)
    owner = _owner()
    name = LOCK_NAME if shard is None else f"{LOCK_NAME}.shard-{re.sub(r'[^0-9]+', '-', str(shard)).strip('-')}"
    lock = path / name
    _take_lock(lock, owner, warn)
    written = False
    try:
        check_run_dir(path)  # under the lock: a foreign file may have appeared since the first look
        others = sorted(
            p
            for p in path.glob(LOCK_NAME + "*")
            if p != lock and ".stale-" not in p.name and (shard is None or p.name == LOCK_NAME)
        )
        for other in others:  # an unsharded run excludes every shard; a shard excludes an unsharded run
            held = _read_lock(other)
            if held is None:
                continue
            alive = _alive(held) if held else True
            if alive is not False:
                raise RunDirBusy(
                    f"{path} is in use by another simstudy run ({_describe_owner(held)}); wait for it "
                    f"to finish or use another run directory"
                )
            other.unlink(missing_ok=True)
            warn(f"{path}: removed the lock of a simstudy run that is no longer running ({_describe_owner(held)})")
        written = not (path / RUN_MARKER).exists()
        if written:
            write_json({"simstudy": "run directory", "created": owner["since"]}, path / RUN_MARKER)
        removed = () if shard is not None else remove_stray_temporaries(path)
        if removed:
            warn(
                f"{path}: removed {len(removed)} temporary file(s) left by an interrupted run "
                f"({', '.join(p.name for p in removed[:3])}{' ...' if len(removed) > 3 else ''})"
            )
    except BaseException:  # e.g. SIGTERM mid-claim: leave the directory as it was found
        if written:
            (path / RUN_MARKER).unlink(missing_ok=True)
            # and the marker's temporary file: an interrupt between atomic_path's yield and the with-body
            # (inside contextlib's __enter__) skips its clean-up, and left one behind in a fresh-clone CI run.
            # Holding the lock, no other process writes here.
            for tmp in path.glob(f".{Path(RUN_MARKER).stem}.*{Path(RUN_MARKER).suffix}.part"):
                if _TEMPORARY.fullmatch(tmp.name):
                    tmp.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)
        raise
    return RunDirClaim(path, lock, written, removed)


def remove_stray_temporaries(path: str | os.PathLike[str]) -> tuple[Path, ...]:
    """Remove the temporary files of :func:`atomic_path` under ``path`` (an interrupted write's).

    Call it only while holding the directory (:func:`claim_run_dir`, unsharded, does), when no other process
    can be writing one. Only names of :func:`atomic_path`'s pattern (``.<stem>.<8 characters><suffix>.part``)
    are removed, in ``path`` and every subdirectory; nothing else is touched.

    Parameters
    ----------
    path : str or os.PathLike
        The directory to clean (a missing one has nothing to remove).

    Returns
    -------
    tuple of pathlib.Path
        The files removed, sorted.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / ".run.ab12cd34.json.part").write_text("{")  # a write killed half-way
    ...     _ = (Path(d) / "notes.part").write_text("kept")  # not one of atomic_path's names
    ...     print([p.name for p in remove_stray_temporaries(d)], sorted(p.name for p in Path(d).iterdir()))
    ['.run.ab12cd34.json.part'] ['notes.part']
    """
    removed = []
    for dirpath, _, files in os.walk(path):
        for name in files:
            if name.endswith(".part") and _TEMPORARY.fullmatch(name):
                p = Path(dirpath) / name
                p.unlink(missing_ok=True)
                removed.append(p)
    return tuple(sorted(removed))


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks of 1 MiB.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        The digest, 64 lower-case hex characters.

    Raises
    ------
    OSError
        If the file cannot be read (FileNotFoundError if it does not exist).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.txt").write_bytes(b"abc")
    ...     print(sha256_file(Path(d) / "a.txt"))
    ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


__all__ += [
    "RUN_MARKER",
    "LOCK_NAME",
    "NotARunDir",
    "RunDirBusy",
    "RunDirClaim",
    "check_run_dir",
    "claim_run_dir",
    "remove_stray_temporaries",
    "sha256_file",
]
