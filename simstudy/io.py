"""Files a run writes: atomically, so a crash or Ctrl-C never leaves a half-written one.

Every writer goes through :func:`atomic_path`: write to a temporary name in the target's directory, flush
and fsync, then :func:`os.replace` onto the target (atomic on POSIX). Readers therefore see either the old
file or the whole new one. :class:`ChunkStore` keeps the results of finished chunks so that an interrupted
run resumes from them.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

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


class ChunkStore:
    """Finished chunks of a study on disk, one ``.npz`` per (cell, chunk).

    The directory is keyed by a fingerprint of everything that determines a chunk's numbers, so results
    of a different configuration are never read back as this one's. A file's name also carries the
    chunk's replicate count (the last chunk of a study may be short). Files are written atomically and
    zip CRCs are checked on read.

    Parameters
    ----------
    root : path
        ``<run dir>/chunks``.
    fingerprint : str
        Hex digest identifying the study's data-generating configuration.
    """

    def __init__(self, root: str | os.PathLike, fingerprint: str):
        self.root = Path(root) / fingerprint
        self.fingerprint = fingerprint

    def path(self, cell: str, chunk: int, reps: int) -> Path:
        return self.root / f"cell-{cell}" / f"chunk-{chunk:06d}-r{reps}.npz"

    def has(self, cell: str, chunk: int, reps: int) -> bool:
        return self.path(cell, chunk, reps).is_file()

    def write(self, cell: str, chunk: int, reps: int, arrays: dict[str, np.ndarray]) -> None:
        with atomic_path(self.path(cell, chunk, reps)) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)

    def read(self, cell: str, chunk: int, reps: int) -> dict[str, np.ndarray]:
        with np.load(self.path(cell, chunk, reps), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}


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
