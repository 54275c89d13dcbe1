"""Run directories: what simstudy wrote, and who is writing (a run's marker and its lock).

========================================  =====================================================================
name                                      what it is
========================================  =====================================================================
:func:`claim_run_dir`                     claim a directory for a run (marker, lock; stray temporaries removed)
:class:`RunDirClaim`                      the claim, released when the run ends
:func:`check_run_dir`                     refuse a directory that is not simstudy's, before anything is written
:func:`remove_stray_temporaries`          the temporaries a killed writer left
:class:`NotARunDir`, :class:`RunDirBusy`  the refusals
:data:`RUN_MARKER`, :data:`LOCK_NAME`     the marker's and the lock's file names
========================================  =====================================================================

Moved from :mod:`simstudy.io` (issue 26); imported from here only (issue 35).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path

from simstudy.io import hold_interrupts, release_interrupts, write_json

__all__ = [
    "RUN_MARKER",
    "LOCK_NAME",
    "NotARunDir",
    "RunDirBusy",
    "RunDirClaim",
    "check_run_dir",
    "claim_run_dir",
    "remove_stray_temporaries",
]


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
    if not (path / "config.yaml").is_file():
        return False
    return any((path / n).exists() for n in _LEGACY_RESULTS if n != "run.json") or _simstudy_run_json(path / "run.json")


#: A run.json larger than this is not one simstudy wrote (its run.json holds the config and timings: kilobytes).
_RUN_JSON_BYTES = 16 << 20


def _simstudy_run_json(path: Path) -> bool:
    """Whether ``path`` is a run.json simstudy wrote: a regular file of bounded size (never a FIFO, which would
    block), a JSON object with the run's ``fingerprint`` and an ``environment`` naming simstudy among its
    packages. Other tools write config.yaml and run.json too: theirs make no simstudy run directory."""
    import stat

    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _RUN_JSON_BYTES:
            return False
        blob = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    environment = blob.get("environment") if isinstance(blob, dict) else None
    packages = environment.get("packages") if isinstance(environment, dict) else None
    return "fingerprint" in blob and isinstance(packages, dict) and "simstudy" in packages


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
        (``config.yaml`` with simstudy's ``run.json`` or ``chunks/``...; another tool's ``config.yaml`` and
        ``run.json`` are not simstudy's); the message names the directory and a few of its files. Nothing is
        written either way.

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
    simstudy.engine.claims.NotARunDir: ... is not empty and is not a simstudy run directory (it holds figure.png); ...
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


def owner_alive(owner: dict) -> bool | None:
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


def read_lock(path: Path) -> dict | None:
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


def describe_owner(owner: dict) -> str:
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
            held = read_lock(lock)
            if held is None:
                continue  # released meanwhile
            if held == {}:
                try:
                    age = time.time() - lock.stat().st_mtime
                except FileNotFoundError:
                    continue
                alive: bool | None = age < _UNREADABLE_LOCK_SECONDS
            else:
                alive = owner_alive(held)
            if alive is not False:
                hint = "" if alive else f"; if that run is dead, remove {lock}"
                raise RunDirBusy(
                    f"{lock.parent} is in use by another simstudy run ({describe_owner(held)}); wait "
                    f"for it to finish or use another run directory{hint}"
                ) from None
            # Stale: move it aside under a name of our own (atomic: one process wins), check that what moved
            # is the lock we judged stale (not a fresh one created meanwhile), and try again.
            aside = lock.with_name(f"{lock.name}.stale-{owner['token']}")
            try:
                os.rename(lock, aside)
            except FileNotFoundError:
                continue
            if read_lock(aside) != held:
                with contextlib.suppress(OSError):
                    os.link(aside, lock)  # a live lock: put it back (unless a third run took the name)
                aside.unlink(missing_ok=True)
                continue
            aside.unlink(missing_ok=True)
            warn(
                f"{lock.parent}: took over the lock of a simstudy run that is no longer running "
                f"({describe_owner(held)})"
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
    simstudy.engine.claims.RunDirBusy: ... is in use by another simstudy run (pid ...); wait for it to finish or use ...
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
    # Ctrl-C and SIGTERM are held while the lock is taken and delivered inside the try below, which removes it: a
    # SIGTERM landing just after the lock was made, before the try, left a lock of a dead run (a system test, under
    # load).
    interrupts = hold_interrupts()
    try:
        _take_lock(lock, owner, warn)
    except BaseException:
        release_interrupts(interrupts)
        raise
    written = False
    try:
        release_interrupts(interrupts)
        check_run_dir(path)  # under the lock: a foreign file may have appeared since the first look
        others = sorted(
            p
            for p in path.glob(LOCK_NAME + "*")
            if p != lock and ".stale-" not in p.name and (shard is None or p.name == LOCK_NAME)
        )
        for other in others:  # an unsharded run excludes every shard; a shard excludes an unsharded run
            held = read_lock(other)
            if held is None:
                continue
            alive = owner_alive(held) if held else True
            if alive is not False:
                raise RunDirBusy(
                    f"{path} is in use by another simstudy run ({describe_owner(held)}); wait for it "
                    f"to finish or use another run directory"
                )
            other.unlink(missing_ok=True)
            warn(f"{path}: removed the lock of a simstudy run that is no longer running ({describe_owner(held)})")
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
