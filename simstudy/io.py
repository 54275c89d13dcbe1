"""Files a run writes: atomically, so a crash or Ctrl-C never leaves a half-written one.

Every writer goes through :func:`atomic_path`: write to a temporary name in the target's directory, flush
and fsync, then :func:`os.replace` onto the target (atomic on POSIX). Readers therefore see either the old
file or the whole new one.

=========================  =========================================================================
name                       what it does
=========================  =========================================================================
:func:`atomic_path`        a temporary path renamed onto the target when its block ends normally
:func:`write_json`         JSON, indented, keys sorted
:func:`write_parquet`      a frame as parquet
:func:`write_csv`          a frame as CSV
:func:`write_text`         a string
:func:`markdown_table`     a frame as a Markdown table (a string)
:func:`save_figure`        a matplotlib figure
:func:`environment`        Python, platform, package versions and git revision, for ``run.json``
:func:`sha256_file`        a file's SHA-256
:func:`open_regular`       a regular file opened for reading, never a FIFO or a link out of a directory
=========================  =========================================================================

The chunk store (:class:`~simstudy.engine.chunks.ChunkStore`, which keeps the results of finished chunks so
that an interrupted run resumes from them) and run directories (:mod:`simstudy.engine.claims`) are the
engine's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "atomic_path",
    "write_json",
    "write_parquet",
    "write_csv",
    "write_text",
    "markdown_table",
    "save_figure",
    "environment",
    "sha256_file",
    "open_regular",
    "NotARegularFile",
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
    tmp_path: Path | None = None
    # Ctrl-C and SIGTERM (raised as KeyboardInterrupt) are held while the temporary file is created and named,
    # then delivered inside the try, which removes it: a signal landing inside mkstemp, after the file exists but
    # before its name is known here, once left a .part behind (a SIGTERM test, under load).
    held = hold_interrupts()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix + ".part", dir=path.parent)
        tmp_path = Path(tmp)
        release_interrupts(held)
        os.close(fd)
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, path)
    except OSError as exc:
        if tmp_path is not None:
            tmp_path.unlink(missing_ok=True)
        if exc.filename is None:  # a full disk met by fsync or a writer names no file: name the one we wrote
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        if tmp_path is not None:
            tmp_path.unlink(missing_ok=True)
        raise
    finally:
        release_interrupts(held)


#: The signals :func:`atomic_path` holds while it creates its temporary file.
_INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


def hold_interrupts() -> list:
    """Hold Ctrl-C and SIGTERM until :func:`release_interrupts`; returns what releases them.

    Two holds, since the kernel may hand a process signal to any thread (loky's, tqdm's, a test runner's) and
    Python then runs its handler in the main thread at the next bytecode: in the main thread the Python
    handlers are swapped for a recorder (a handler that arrives is run on release), and the thread's own
    signal mask blocks them where POSIX threads allow it (a handler-less SIGTERM would end the process).
    """
    held: list = []
    if threading.current_thread() is threading.main_thread():
        pending: list = []
        previous = {s: h for s in _INTERRUPTS if callable(h := signal.getsignal(s))}
        for s in previous:
            signal.signal(s, lambda signum, frame: pending.append((signum, frame)))
        held.append(("handlers", previous, pending))
    if hasattr(signal, "pthread_sigmask"):
        held.append(("mask", signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS), None))
    return held


def release_interrupts(held: list) -> None:
    """Undo :func:`hold_interrupts`, once: the mask, then the handlers, which then run for any signal that
    came meanwhile (a run's SIGTERM handler raises KeyboardInterrupt here, inside the caller's try)."""
    while held:
        kind, before, pending = held.pop()
        if kind == "mask":
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
            continue
        for s, handler in before.items():
            signal.signal(s, handler)
        for signum, frame in pending:
            before[signum](signum, frame)


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
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=json_default) + "\n")


def json_default(obj: Any) -> Any:
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


def digest(arrays: dict[str, np.ndarray], header: bytes = b"") -> str:
    """SHA-256 over ``header`` then every array's name, dtype, shape and bytes (in name order)."""
    h = hashlib.sha256(header)
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def canonical(identity: dict) -> bytes:
    return json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()


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


#: A git revision being read in the background for this run's metadata (:func:`prefetch_environment`).
_PREFETCHED: list = []


def prefetch_environment() -> None:
    """Start reading :func:`environment` in a thread, for the next call to use.

    Its two ``git`` subprocesses and the packages' metadata take a few hundredths of a second that the run's
    own work can hide (the thread waits on git without the GIL, and numpy's loops release it); a study calls
    this when its chunks start. The result is used once, by the next :func:`environment` of this process, so a
    long session never reports a stale one.
    """
    import concurrent.futures

    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="simstudy-environment")
    _PREFETCHED[:] = [executor.submit(_environment)]
    executor.shutdown(wait=False)


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
    if _PREFETCHED:  # read in the background since the chunks started (prefetch_environment): taken once
        return _PREFETCHED.pop().result()
    return _environment()


def _environment() -> dict[str, Any]:
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


class NotARegularFile(OSError):
    """A path :func:`open_regular` refused: a FIFO, socket, device or directory, or a link out of the directory
    it must stay in; the one-line message names the path and what it is.

    Examples
    --------
    >>> str(NotARegularFile("run/run.json: a FIFO, not a regular file"))
    'run/run.json: a FIFO, not a regular file'
    """


def open_regular(path: str | os.PathLike, *, inside: str | os.PathLike | None = None):
    """Open a regular file for reading in binary mode, without ever blocking on a FIFO or leaving ``inside``.

    A FIFO opened for reading blocks until a writer comes, so a FIFO where a file was expected would hang its
    reader for ever: the file is opened non-blocking and refused unless it is a regular file. With ``inside``,
    the path's target (every link resolved) must lie in that directory: a link from a run directory to
    ``/etc/passwd`` or a secret is never read through.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    inside : str or os.PathLike, optional
        Keyword-only. The directory the file (after resolving links) must be in; default: anywhere.

    Returns
    -------
    io.BufferedReader
        The open file (close it, e.g. with ``with``).

    Raises
    ------
    NotARegularFile
        If the path is not a regular file, or resolves outside ``inside`` (nothing is opened then).
    OSError
        If it cannot be opened (FileNotFoundError if it does not exist).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.txt").write_bytes(b"abc")
    ...     os.mkfifo(Path(d) / "pipe")
    ...     with open_regular(Path(d) / "a.txt", inside=d) as fh:
    ...         print(fh.read())
    ...     try:
    ...         open_regular(Path(d) / "pipe")
    ...     except NotARegularFile as exc:
    ...         print("pipe: a FIFO, not a regular file" in str(exc))
    b'abc'
    True
    """
    import stat

    real = os.path.realpath(path)
    if inside is not None:
        root = os.path.realpath(inside)
        if os.path.commonpath([root, real]) != root:
            raise NotARegularFile(f"{path}: a link out of {inside} (to {real}); not read")
    # O_NONBLOCK: opening a FIFO returns at once (fstat then refuses it); O_NOFOLLOW: the target resolved above
    # was not swapped for a link since.
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(real, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}.get(
                stat.S_IFMT(mode), "a device"
            )
            raise NotARegularFile(f"{path}: {what}, not a regular file; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
