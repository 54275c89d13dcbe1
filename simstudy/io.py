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
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, NoReturn

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

    On any exception (KeyboardInterrupt included) the temporary file is removed and ``path`` is untouched.
    The temporary name keeps the suffix, so writers that infer a format from it still work.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix + ".part", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_json(obj: Any, path: str | os.PathLike) -> None:
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
    """Write a pandas DataFrame as parquet with pyarrow."""
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, engine="pyarrow", index=False)


def write_csv(frame, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, float_format="%.10g")


def markdown_table(frame) -> str:
    """A pandas frame as a GitHub-flavoured markdown table (no extra dependency)."""
    cells = [[str(c) for c in frame.columns]] + [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("---" for _ in frame.columns) + "|")
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def save_figure(fig, path: str | os.PathLike, **kwargs: Any) -> None:
    """Save a matplotlib figure (format from the suffix: .png, .pdf, ...)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip("."), **kwargs)


class CorruptChunk(Exception):
    """A stored chunk that cannot be trusted: unreadable, damaged, of an older format, or not the chunk its
    file name says (another run's, cell's or chunk's); the message says what did not match."""


class RunDirConflict(ValueError):
    """A run directory holding the chunks of a different configuration; the message names what differs."""


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
    return {"format": _CHUNK_FORMAT, "run": fingerprint, "cell": cell, "chunk": int(chunk), "reps": int(reps),
            "arrays": _layout(arrays)}


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


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): obj}


def config_diff(old: dict, new: dict) -> list[str]:
    """``key: old -> new`` for every dotted key whose value differs between two nested mappings."""
    a, b = _flatten(old), _flatten(new)
    return [f"{k}: {a.get(k, '(unset)')!r} -> {b.get(k, '(unset)')!r}" for k in sorted(a.keys() | b.keys())
            if a.get(k, "(unset)") != b.get(k, "(unset)")]


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
    root : path
        ``<run dir>/chunks``.
    fingerprint : str
        Hex digest identifying the study's data-generating configuration.

    Examples
    --------
    >>> import tempfile, shutil
    >>> store = ChunkStore(Path(tempfile.mkdtemp()) / "chunks", "f00d")
    >>> store.write("ab12", 0, 3, {"x": np.arange(3.0)})
    >>> store.read("ab12", 0, 3)["x"]
    array([0., 1., 2.])
    >>> _ = shutil.copy(store.path("ab12", 0, 3), store.path("ab12", 1, 3))
    >>> store.read("ab12", 1, 3)
    Traceback (most recent call last):
    ...
    simstudy.io.CorruptChunk: chunks/f00d/cell-ab12/chunk-000001-r3.npz holds cell ab12 chunk 0, not cell ab12 chunk 1
    """

    def __init__(self, root: str | os.PathLike, fingerprint: str):
        self.root = Path(root) / fingerprint
        self.fingerprint = fingerprint

    def claim(self, config: dict) -> None:
        """Mark the run directory as this fingerprint's, recording ``config`` (what generated the chunks).

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
            what = "; ".join(diff) if diff else "an earlier version of the study's chunk format"
            raise RunDirConflict(f"{self.root.parent.parent} holds results of a different configuration ({what}); "
                                 f"use another run directory or remove it")
        path = self.root / "config.json"
        if not path.is_file():
            write_json(config, path)

    def path(self, cell: str, chunk: int, reps: int) -> Path:
        return self.root / f"cell-{cell}" / f"chunk-{chunk:06d}-r{reps}.npz"

    def has(self, cell: str, chunk: int, reps: int) -> bool:
        """Whether the chunk's file exists (see :meth:`verify` for whether it is whole)."""
        return self.path(cell, chunk, reps).is_file()

    def write(self, cell: str, chunk: int, reps: int, arrays: dict[str, np.ndarray]) -> None:
        """Store a chunk's arrays with its identity and checksum (atomically)."""
        arrays = {name: np.asarray(a) for name, a in arrays.items()}
        header = _canonical(_identity(self.fingerprint, cell, chunk, reps, arrays))
        with atomic_path(self.path(cell, chunk, reps)) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)
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
        except Exception as exc:  # noqa: BLE001 -- zip, zlib, npy-header, OS errors: all mean "not whole"
            self._corrupt(path, f": unreadable ({type(exc).__name__}: {' '.join(str(exc).split())})")
        if not comment.startswith(_CHUNK_TAG):
            self._corrupt(path, ": an older chunk format without identity; it cannot be trusted"
                          if comment.startswith(_CHECKSUM_TAG) else ": no identity or checksum (not simstudy's)")
        header, _, stored = comment[len(_CHUNK_TAG):].rpartition(_SHA_TAG)
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
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True,
            text=True, timeout=5,
        ).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict[str, Any]:
    """Versions of Python, the platform, simstudy's dependencies and the git revision, for run metadata."""
    packages = {}
    for name in ("simstudy", "numpy", "scipy", "pandas", "pyarrow", "joblib", "hydra-core", "seaborn",
                 "matplotlib", "tqdm"):
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
