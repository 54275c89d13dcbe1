"""Run directories: claim, identity of what a run created, the stored config's reader, and one-line refusals.

A run writes into a directory that may hold anything (a user's notes, another run's results, a live run): it
is claimed for this process before anything is written, what the run created is noted so that a refused run
removes only that, and a stored ``config.yaml`` is read in bounded time and memory. What a run knows about
its directory is passed explicitly (:class:`DirsBefore` from :func:`note_dirs`, :class:`RunDir` from the
claim), never held in ambient state; configs are plain dicts (no OmegaConf here). Nothing here prints or
exits: a refusal raises :class:`Refused` (the one line and the exit status), which the command line
(:mod:`simstudy.cli`) prints and exits with, and the Python API (:mod:`simstudy.api`) turns into
:class:`~simstudy.config.ConfigError` or :class:`~simstudy.api.RunFailed`.

=============================  ==================================================================================
:class:`Refused`               a refusal: its one line and exit status (2 bad input, 1 could not finish)
``fail``                       raise :class:`Refused` (its owner removes what the run created and left empty)
``dirname``                    a run directory's name from the command line's overrides
``note_dirs``                  the directories that making a run directory would create (a :class:`DirsBefore`)
``remove_if_empty``            remove those of them that the run left empty
``in_run_dir``                 run in a claimed directory; release it and clean up however the run ends
``check_dir_override``         refuse a directory path that cannot be created
``load_stored_yaml``           a stored YAML file, in bounded time and memory, as plain Python values
``read_stored_config``         a stored config.yaml, as written (never resolved)
:class:`RunDir`                a claimed run directory, what was in it at the claim, and ``overwrite``
``note_files``                 the :class:`RunDir` of a directory just claimed (its files and directories then)
``settle``                     note them in the run marker; after a finished rerun, move aside what it no longer writes
``check_identity``             refuse a directory holding another run's results (``overwrite=true``: move them)
``check_run_dir``              refuse a directory whose config.yaml is another configuration's
``config_written``             config.yaml written for the run inside, put back as it was if the run is refused
=============================  ==================================================================================
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import re
import signal
import threading
from pathlib import Path
from typing import Any, NoReturn

from simstudy import io
from simstudy.engine import chunks, claims
from simstudy.engine import identity as _identity

__all__ = ["Refused", "RunDir", "EXIT_BAD_INPUT", "EXIT_FAILED"]

log = logging.getLogger("simstudy")

#: Exit status of bad input (one line naming the key, file or value; nothing written).
EXIT_BAD_INPUT = 2
#: Exit status of a run that could not finish (failed or missing chunks, a full disk).
EXIT_FAILED = 1
#: OS errors of a path the user gave (a name too long, a file where a directory must be): bad input, exit 2,
#: with what would fix it.
_PATH_ERRNOS = {
    errno.ENAMETOOLONG: "a path or a name in it is too long: choose a shorter path",
    errno.ENOTDIR: "a file lies where a directory must be: choose another directory",
    errno.EISDIR: "a directory lies where a file must be: choose another path",
    errno.ELOOP: "too many symbolic links on the path: choose another directory",
}
#: OS errors that are the environment's, not a bug (a full disk, a file-size limit such as ``ulimit -f``, no
#: permission): the run could not finish, exit 1. With :data:`_PATH_ERRNOS`, reported in one line.
ENVIRONMENT_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.EIO,
    errno.EMFILE,
    errno.ENFILE,
    *_PATH_ERRNOS,
}


_SAFE_NAME = re.compile(r"[A-Za-z0-9._=,+-]+")
#: The suffix of a name made safe: a hyphen and 8 hex digits of the overrides' SHA-256.
_HASHED = re.compile(r"-[0-9a-f]{8}")
#: The longest name kept readable in full (file systems allow 255 bytes per name).
_NAME_MAX = 120


def dirname(overrides: str) -> str:
    """Run directory name from the command line's overrides (``'default'`` when there are none).

    The overrides' text is the name where it is made of ``[A-Za-z0-9._=,+-]`` only, at most :data:`_NAME_MAX`
    characters, and does not end like a hashed name; any other text has each run of other characters replaced by
    ``_`` (``/``, spaces, braces, quotes), is shortened, and ends with ``-`` and 8 hex digits of the SHA-256 of
    the exact text. So the mapping is injective (up to a hash collision): ``data=a/b.csv`` and ``data=a_b.csv``
    name two directories, and every name can be typed unquoted."""
    import hashlib

    if not overrides:
        return "default"
    if _SAFE_NAME.fullmatch(overrides) and len(overrides) <= _NAME_MAX and not _HASHED.search(overrides[-9:]):
        return overrides
    digest = hashlib.sha256(overrides.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    readable = re.sub(r"[^A-Za-z0-9._=,+-]+", "_", overrides)[:_NAME_MAX]
    return f"{readable}-{digest}"


@dataclasses.dataclass(frozen=True)
class DirsBefore:
    """Which directories existed before Hydra made the run directory, so that a refused run removes only what
    it created (never a user's empty ``results/keep``).

    ``known``: paths whose existence was looked up; ``listed``: directories whose subdirectories were listed
    (a sweep's directory: its jobs' directories are named only later); ``existed``: those found.
    """

    known: frozenset
    listed: frozenset
    existed: frozenset

    def created(self, path: Path) -> bool:
        """Whether this run created ``path`` (absolute, normalised): not there before, and known not to be."""
        while path not in self.existed:
            if path in self.known or path.parent in self.listed:
                return True
            if path.parent == path:
                return False
            path = path.parent  # inside a directory this run created, everything is this run's
        return False


def absolute_path(path) -> Path:
    return Path(os.path.normpath(os.path.abspath(path)))


def _prefixes(path: str) -> set[Path]:
    """Every directory that ``mkdir -p path`` may create: with ``..`` in the path, the lexical prefixes too
    (``a/x/../b`` makes ``a/x``), and the ancestors of each."""
    parts = Path(path).parts
    out = set()
    for i in range(1, len(parts) + 1):
        p = absolute_path(Path(*parts[:i]))
        out |= {p, *p.parents}
    return out


def note_dirs(target, multirun: bool = False) -> DirsBefore:
    """Which directories making ``target`` (a run, or a sweep's, directory) would create: noted before Hydra (or
    :func:`simstudy.run`) makes it, and given to :func:`in_run_dir`, which removes them if the run leaves them
    empty."""
    known = _prefixes(str(target))
    listed = {absolute_path(target)} if multirun else set()
    existed = {p for p in known if p.is_dir()}
    if multirun and absolute_path(target).is_dir():
        existed |= {absolute_path(p) for p in absolute_path(target).iterdir() if p.is_dir()}
        listed |= {p for p in existed if p.parent == absolute_path(target)}
    return DirsBefore(frozenset(known), frozenset(listed), frozenset(existed))


def remove_if_empty(out_dir: Path, before: DirsBefore | None) -> None:
    """Remove the run directory and the directories above it that this run created (``before``: what existed
    before it, :func:`note_dirs`), while they are empty (a directory that existed before the run, empty or not,
    is never removed). ``before`` None: unknown, nothing is removed."""
    if before is None:
        return
    path = absolute_path(out_dir)
    candidates = {p for p in (path, *path.parents) if before.created(p)}
    candidates |= {p for p in before.known if before.created(p)}  # a/x of a/x/../b
    for p in sorted(candidates, key=lambda p: len(p.parts), reverse=True):  # deepest first
        with contextlib.suppress(OSError):
            if p.is_dir() and not any(p.iterdir()):
                p.rmdir()


class Refused(SystemExit):
    """A refusal: the one line the command prints (``simstudy: error: ...``) and its exit status.

    A :class:`SystemExit`, so that every clean-up that a refused run runs (a claim released, config.yaml put
    back, the directories it created removed) runs the same under the command line and the Python API; the
    command line (:func:`simstudy.cli.main`) prints the line and exits with the status, the Python API turns
    it into a :class:`~simstudy.config.ConfigError` (status 2) or :class:`~simstudy.api.RunFailed` (status 1).

    Parameters
    ----------
    message : str
        The refusal in one line.
    status : int
        The exit status: :data:`EXIT_BAD_INPUT` or :data:`EXIT_FAILED`.

    Examples
    --------
    >>> exc = Refused("budget.B must be an integer >= 1, got 0", EXIT_BAD_INPUT)
    >>> exc.message, exc.status, exc.code
    ('budget.B must be an integer >= 1, got 0', 2, 2)
    >>> str(exc)
    'budget.B must be an integer >= 1, got 0'
    """

    def __init__(self, message: str, status: int):
        super().__init__(status)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


def fail(message: str, *, status: int = EXIT_BAD_INPUT) -> NoReturn:
    """Refuse in one line (:class:`Refused`). What the run created and left empty is removed by the owner of its
    directory (:func:`in_run_dir`, under the command line and :func:`simstudy.run`), which catches the refusal on its way out."""
    first = message.strip().splitlines()[0] if message.strip() else message
    raise Refused(first, status)


def os_error(exc: OSError) -> str:
    """An OS error in one line: the file, the system's words, and for a bad path what would fix it."""
    where = f"{exc.filename}: " if exc.filename else ""
    hint = f" ({_PATH_ERRNOS[exc.errno]})" if exc.errno in _PATH_ERRNOS else ""
    return f"{where}{exc.strerror or exc}{hint}"


def os_status(exc: OSError) -> int:
    """Exit status of an OS error of :data:`ENVIRONMENT_ERRNOS`: 2 for a bad path given, 1 for the environment."""
    return EXIT_BAD_INPUT if exc.errno in _PATH_ERRNOS else EXIT_FAILED


def check_dir_override(key: str, value: str) -> None:
    """A run directory that is (or lies under) an existing file cannot be created: one line, before Hydra."""
    if "${" in value:
        return  # resolved by Hydra later
    path = Path(value).expanduser()
    longest = max(path.parts, key=lambda part: len(os.fsencode(part)), default="")
    if len(os.fsencode(longest)) > _name_max(path):
        fail(
            f"{key}={value}: a name on the path is {len(os.fsencode(longest))} bytes long, longer than the file "
            f"system allows ({_name_max(path)}): choose a shorter directory",
        )
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            where = "is an existing file" if p == path else f"lies under {p}, an existing file"
            fail(f"{key}={value} {where}, not a directory: choose a directory path")


def _name_max(path: Path) -> int:
    """The longest name (in bytes) the file system of ``path``'s nearest existing directory allows (255 if unknown)."""
    existing = next(
        (p for p in (absolute_path(path), *absolute_path(path).parents) if os.path.isdir(p)), Path("/")
    )  # no raise
    try:
        return os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or no such limit
        return 255


def in_run_dir(
    run, cfg, out_dir: Path, *, shard: str | None = None, overwrite: bool = False, created: DirsBefore | None = None
):
    """Run a command in its run directory, claimed for this process (:func:`simstudy.claims.claim_run_dir`):
    a directory holding someone else's files is refused before anything is written, a live run in it too.
    However the command ends (a refusal, an error, Ctrl-C or SIGTERM) the claim is released and the directories
    this run created (``created``: what existed before, :func:`note_dirs`; None: unknown, nothing removed) are
    removed if it left them empty (finished chunks stay, for a resume). ``shard``: the run's ``runner.shard`` as
    given (shards share their directory); ``overwrite``: ``overwrite=true`` was given (the :class:`RunDir`
    carries it). Returns what ``run`` returns (called as ``run(cfg, run_dir)``; ``cfg`` the composed config,
    passed through untouched, ``run_dir`` the :class:`RunDir`)."""
    claim = run_dir = None
    restore = _terminate_as_interrupt()
    # Ctrl-C and SIGTERM held until the claim is in hand: one landing between the lock and the assignment (the
    # claim's own bookkeeping, its return) left a lock and a marker of a dead run (a system test, under load).
    # Released inside the try, where a held signal's KeyboardInterrupt finds the claim to release.
    held = io.hold_interrupts()
    try:
        try:
            claim = claims.claim_run_dir(out_dir, shard=shard, warn=log.warning)
        except (claims.NotARunDir, claims.RunDirBusy) as exc:
            io.release_interrupts(held)
            fail(str(exc))
        io.release_interrupts(held)
        run_dir = note_files(out_dir, overwrite=overwrite)
        result = run(cfg, run_dir)
        settle(run_dir, finished=shard is None)
        return result
    except chunks.RunDirConflict as exc:  # e.g. an audit rerun with other settings into the same directory
        release(claim, run_dir, out_dir, created)
        fail(str(exc))
    except chunks.CorruptChunk as exc:
        release(claim, run_dir, out_dir, created)
        fail(chunks_changed(exc), status=EXIT_FAILED)
    except OSError as exc:
        release(claim, run_dir, out_dir, created)
        if exc.errno not in ENVIRONMENT_ERRNOS:
            raise
        fail(os_error(exc), status=os_status(exc))
    except BaseException:  # a refusal (Refused) too: what this run created and left empty is removed
        release(claim, run_dir, out_dir, created)
        raise
    finally:
        try:
            io.release_interrupts(held)  # a no-op once released (held still only if the claim failed)
        finally:
            release(claim, None)
            restore()


def chunks_changed(exc: Exception) -> str:
    """A chunk the run stored (and checked) that is gone or different when the summary reads it back: something
    else changed the run directory meanwhile (say, ``chunks/`` deleted). Nothing is summarised from it."""
    return f"chunks changed during the run ({exc}): rerun to recompute"


def release(claim, run_dir: RunDir | None, out_dir: Path | None = None, created: DirsBefore | None = None) -> None:
    """Give up the run directory, noting what this run wrote there first (:func:`settle` of ``run_dir``, what
    the claim found: a run cut short wrote its files too); then remove what this run created and left empty
    (``out_dir`` given, ``created`` what existed before, :func:`remove_if_empty`)."""
    if claim is not None:
        if claim.lock is not None and run_dir is not None:
            with contextlib.suppress(OSError):  # a full disk: the marker keeps its earlier list
                settle(run_dir, finished=False)
        claim.release()
    if out_dir is not None:
        remove_if_empty(out_dir, created)


def _terminate_as_interrupt():
    """SIGTERM (a batch system's cancel, ``kill``) raises KeyboardInterrupt, like Ctrl-C, so that the same
    clean-up runs; returns what puts the previous handler back. Only in the main thread (where Python
    delivers signals)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    pid = os.getpid()

    def interrupt(signum, frame):
        if os.getpid() == pid:  # not in a forked worker that inherited the handler
            raise KeyboardInterrupt(f"signal {signum}")
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


#: A stored config.yaml (or multirun.yaml) larger than this (a config with a bag of 10^5 scores inline takes
#: about 2 MB), or nested deeper, is not one simstudy wrote: refused before it is parsed (a run directory may
#: come from anyone).
_STORED_YAML_BYTES = 16 << 20
_STORED_YAML_DEPTH = 64


def load_stored_yaml(stored: Path) -> Any:
    """A stored YAML file as plain Python values (dicts, lists, scalars; interpolations left as their text), read
    as OmegaConf reads it (:class:`_StoredLoader`), in bounded time and memory: a regular file (not a FIFO or a
    device, which would block or never end), of bounded size and nesting, without YAML aliases (an alias bomb
    expands a few lines into billions of nodes; OmegaConf never writes one). Anything else is one line. An empty
    file is an empty mapping, a lone word a mapping of it to None, as OmegaConf makes them."""
    import stat

    import yaml

    try:
        st = stored.stat()
        if not stat.S_ISREG(st.st_mode):
            fail(f"{stored}: not a regular file; use another run directory")
        if st.st_size > _STORED_YAML_BYTES:
            fail(
                f"{stored}: {st.st_size} bytes, over the {_STORED_YAML_BYTES >> 20} MB of a stored config; use another "
                f"run directory",
            )
        with open(stored, encoding="utf-8") as f:
            text = f.read(_STORED_YAML_BYTES + 1)
        depth = 0
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when installed: the same events, faster
        for event in yaml.parse(text, Loader=loader):  # events only: nothing is built or expanded
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                fail(f"{stored}: holds a YAML alias, which simstudy never writes; use another run directory")
            depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
            if depth > _STORED_YAML_DEPTH:
                fail(f"{stored}: nested deeper than {_STORED_YAML_DEPTH} levels; use another run directory")
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        problem = getattr(exc, "problem", None)  # YAML's reason, e.g. libyaml's "exceeded maximum nesting depth"
        why = f"{type(exc).__name__}: {problem}" if problem else type(exc).__name__
        fail(f"{stored}: unreadable ({why}); use another run directory or remove it")
    try:
        value = yaml.load(text, Loader=_stored_loader())  # a SafeLoader: plain values only
    except yaml.YAMLError as exc:  # a duplicate key (OmegaConf's rule), or what the events did not show
        fail(f"{stored}: unreadable ({type(exc).__name__}); use another run directory or remove it")
    if value is None:  # as OmegaConf.create reads an empty text
        return {}
    if isinstance(value, str):  # as OmegaConf.create reads a lone word
        return {value: None}
    return value


def _stored_loader():
    """YAML's safe loader with OmegaConf's rules (``omegaconf._utils.get_yaml_loader``, which wrote the stored
    files): ``1e3`` is a float, a timestamp stays text, a key given twice is an error. Made once, on first use
    (``import yaml`` only when a stored file is read)."""
    global _STORED_LOADER
    if _STORED_LOADER is None:
        import yaml

        class _StoredLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
                keys = set()
                for key_node, _ in node.value:
                    if key_node.tag != yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG:
                        continue
                    if key_node.value in keys:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key_node.value}",
                            key_node.start_mark,
                        )
                    keys.add(key_node.value)
                return super().construct_mapping(node, deep=deep)

        _StoredLoader.add_implicit_resolver(
            "tag:yaml.org,2002:float",
            re.compile(
                r"""^(?:
             [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
            |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
            |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
            |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$""",
                re.X,
            ),
            list("-+0123456789."),
        )
        _StoredLoader.yaml_implicit_resolvers = {
            key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for key, resolvers in _StoredLoader.yaml_implicit_resolvers.items()
        }
        _STORED_LOADER = _StoredLoader
    return _STORED_LOADER


_STORED_LOADER = None


def read_stored_config(stored: Path) -> dict:
    """A run directory's config.yaml as written (never resolved: an interpolation such as ``${oc.env:...}`` in
    a stored config would read this machine's environment into the outputs); one that holds one is refused."""
    old = load_stored_yaml(stored)
    if not isinstance(old, dict):
        fail(f"{stored}: not a mapping of settings; use another run directory or remove it")
    for key, value in chunks.flatten(old).items():
        if isinstance(value, str) and "${" in value:
            fail(
                f"{stored}: {key}={value!r} is an interpolation, which simstudy never writes (its configs are "
                f"stored resolved); restore the file or remove the run directory",
            )
    return old


def _files(out_dir: Path) -> dict[str, tuple[int, int, int]]:
    """The visible files at the top of ``out_dir``, each by inode, modification time and size: a file written
    since (atomically, :mod:`simstudy.io`: a new inode) differs, even with the same bytes."""
    found = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(out_dir):
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            found[entry.name] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def _dirs(out_dir: Path) -> frozenset[str]:
    """The visible directories at the top of ``out_dir`` (not links), ``previous`` left out."""
    with contextlib.suppress(OSError):
        return frozenset(
            e.name
            for e in os.scandir(out_dir)
            if not e.name.startswith(".") and e.name != _identity.PREVIOUS and e.is_dir(follow_symlinks=False)
        )
    return frozenset()


@dataclasses.dataclass(frozen=True)
class RunDir:
    """A run directory claimed for this run (:func:`in_run_dir`), and what was at its top when claimed.

    Made by :func:`note_files` right after the claim and passed to the run (``run(cfg, run_dir)``), so that its
    "wrote ..." line lists what this run wrote, not a user's notes beside it (:meth:`listing`), and the run
    marker notes what it created (:func:`settle`).

    Parameters
    ----------
    path : pathlib.Path
        The run directory.
    files : dict of str to tuple of int
        The visible files at its top when claimed, each by inode, modification time and size.
    dirs : frozenset of str
        The visible directories at its top when claimed (``previous`` left out).
    overwrite : bool
        ``overwrite=true`` was given (on the command line, or in :func:`simstudy.run`'s overrides): earlier results
        are moved to ``previous/<time>/`` inside it instead of refusing other inputs or settings
        (:func:`check_identity`). Taken off the overrides before Hydra sees them: it changes no number, so
        neither the config nor the run directory's name.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     (Path(d) / "notes.txt").write_text("mine")
    ...     run_dir = note_files(Path(d))
    ...     (Path(d) / "summary.csv").write_text("x")
    ...     print(run_dir.listing(), sorted(run_dir.written()))
    4
    1
    summary.csv ['summary.csv']
    """

    path: Path
    files: dict[str, tuple[int, int, int]]
    dirs: frozenset[str]
    overwrite: bool = False

    def written(self) -> set[str]:
        """What this run wrote at the top of its directory since it claimed it: the files new or rewritten (a new
        inode: every write is atomic), and the directories it created (a design's cells, an audit's folders)."""
        return {n for n, k in _files(self.path).items() if self.files.get(n) != k} | set(_dirs(self.path) - self.dirs)

    def listing(self) -> str:
        """The files this run wrote at the top of its run directory: those new or rewritten since it claimed the
        directory, without simstudy's own marker and lock (hidden files) and without files of the user's or of
        an earlier run left as they were."""
        return ", ".join(sorted(name for name, key in _files(self.path).items() if self.files.get(name) != key))


def note_files(out_dir: Path, *, overwrite: bool = False) -> RunDir:
    """The :class:`RunDir` of ``out_dir``, just claimed: the files and directories in it before this run writes
    there."""
    return RunDir(Path(out_dir), _files(out_dir), _dirs(out_dir), overwrite)


#: What a rerun that does not rewrite it still relies on (or leaves as it is on purpose when unchanged): never
#: taken for an output it no longer writes.
_KEPT_ON_RERUN = frozenset({_identity.RECORD, "config.yaml", "replicates.parquet", "chunks", "shards"})


def settle(run_dir: RunDir, *, finished: bool) -> None:
    """Note in the run marker what this run wrote at the top of its directory (:meth:`RunDir.written`,
    :func:`simstudy.engine.identity.note_outputs`);
    once it ``finished`` (unsharded, no error), first move aside the files an earlier run wrote there that this
    one did not rewrite (``figure.svg`` after ``runner.figures=[png]``, a ``zip.parquet`` it no longer makes), so
    that every file at the top is this run's: moved into ``previous/<time>/``, never deleted. Directories
    (chunks, a design's cells) stay; ``overwrite=true`` moves them."""
    out_dir, written = run_dir.path, run_dir.written()
    if finished:
        stale = tuple(
            sorted(
                n
                for n in _identity.outputs(out_dir) - written - _KEPT_ON_RERUN
                if os.path.lexists(out_dir / n) and not (out_dir / n).is_dir()
            )
        )
        if stale:
            try:
                moved = _identity.move_aside(out_dir, stale)
            except chunks.RunDirConflict as exc:  # a previous that is a link or a file: the files stay, said
                log.warning("%s", exc)
            else:
                log.warning(
                    "%s: moved %s, written by an earlier run and not by this one, to %s",
                    out_dir,
                    ", ".join(stale),
                    moved,
                )
    if written:
        _identity.note_outputs(out_dir, written)


def check_identity(out_dir: Path, record: dict, *, overwrite: bool = False) -> None:
    """Refuse (one line, exit 2, nothing written) a run whose command, inputs, plug-ins or settings differ
    from those of the results in ``out_dir``; with ``overwrite`` (``overwrite=true``, :attr:`RunDir.overwrite`),
    move those results aside instead."""
    try:
        _identity.check(out_dir, record, overwrite=overwrite, warn=log.warning)
    except chunks.RunDirConflict as exc:
        fail(str(exc))


#: Keys that may differ between runs in one directory: the runner's change no number, and a larger
#: study.reps extends the same streams (the chunks already done are reused), as does a tighter
#: study.precision or a higher study.max_reps.
_RERUN_MAY_CHANGE = ("runner", "study.reps", "study.precision", "study.max_reps")


def _with_study_defaults(old: dict) -> dict:
    """A stored config with its study's schema defaults filled in where it has no value: a run directory written
    before a study option existed (or was listed) still matches the same run now."""
    from simstudy import registry, schema

    study: Any = old.get("study")  # as stored: a mapping, or anything (a TypeError below)
    try:
        options = registry.study(study["kind"]).options
    except (KeyError, TypeError):
        return old
    return {**old, "study": {**schema.defaults(options), **study}}


def check_run_dir(resolved: dict, out_dir: Path) -> None:
    """Refuse to run into a directory holding another configuration's results, naming what differs."""
    stored = out_dir / "config.yaml"
    if not stored.is_file():
        return
    old = _with_study_defaults(read_stored_config(stored))
    diff = [
        d
        for d in chunks.config_diff(old, resolved)
        if not d.startswith(_RERUN_MAY_CHANGE) and not _is_data_path(d.partition(":")[0])
    ]
    if diff:
        shown = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
        fail(f"{out_dir} holds results of a different configuration ({shown}); {chunks.RUN_DIR_FIXES}")


def _is_data_path(key: str) -> bool:
    """A distribution's data file path: its file is compared by content (the identity record), not by name."""
    return key.startswith("distribution.") and key.endswith(".path")


def write_config(resolved: dict, out_dir: Path, record: dict | None = None) -> None:
    """Write config.yaml from the resolved config (plain values: the caller resolves its Hydra config; and the
    run's identity record, if given) under the run directory's claim; an unchanged one is left as it is."""
    if record is not None:
        _identity.write(out_dir, record)
    path = out_dir / "config.yaml"
    text = _config_yaml(resolved)
    if path.is_file() and path.read_text() == text:
        return
    io.write_text(text, path)


def _config_yaml(resolved: dict) -> str:
    """config.yaml's text, byte for byte as ``OmegaConf.to_yaml`` wrote it until the engine stopped importing
    OmegaConf (a stored run is compared with, and an unchanged one left as, what it was): block style, keys in
    their order, unicode kept, and a string that would read back as a bool or a number quoted (``'1e3'``; keys
    too: ``'n'`` is a bool to YAML 1.1).

    Examples
    --------
    >>> print(_config_yaml({"seed": 0, "study": {"name": "demo", "reps": 10, "tag": "1e3", "on": "yes"},
    ...                     "n": [1, 2], "x": None}), end="")
    seed: 0
    study:
      name: demo
      reps: 10
      tag: '1e3'
      'on': 'yes'
    'n':
    - 1
    - 2
    x: null
    """
    import yaml

    return yaml.dump(resolved, Dumper=_config_dumper(), default_flow_style=False, allow_unicode=True, sort_keys=False)


#: The strings YAML 1.1 reads as a bool: quoted when written (``omegaconf._utils.YAML_BOOL_TYPES``).
_YAML_BOOLS = frozenset("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF".split())


def _config_dumper():
    """PyYAML's Dumper with OmegaConf's rule for strings (``omegaconf._utils.OmegaConfDumper``): one that reads
    back as a bool, an int or a float is single-quoted."""

    import yaml

    def number(text: str, kind) -> bool:
        try:
            kind(text)
        except ValueError:
            return False
        return True

    def represent_str(dumper, data: str):
        quoted = data in _YAML_BOOLS or number(data, int) or number(data, float)
        return dumper.represent_scalar(
            yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG, data, style="'" if quoted else None
        )

    class _ConfigDumper(yaml.Dumper):
        pass

    _ConfigDumper.add_representer(str, represent_str)
    return _ConfigDumper


@contextlib.contextmanager
def config_written(resolved: dict, out_dir: Path, record: dict | None = None):
    """config.yaml (and the identity record) written for the run inside; put back as they were if the run is
    refused (exit 2: e.g. the directory holds chunks of another configuration), so that they keep describing
    the results beside them."""
    paths = [out_dir / "config.yaml", out_dir / _identity.RECORD]
    before = [path.read_bytes() if path.is_file() else None for path in paths]
    write_config(resolved, out_dir, record)
    try:
        yield
    except SystemExit as exc:
        if exc.code == EXIT_BAD_INPUT:
            for path, old in zip(paths, before):
                if old is None:
                    path.unlink(missing_ok=True)
                elif path.is_file() and path.read_bytes() != old:
                    with io.atomic_path(path) as tmp:
                        tmp.write_bytes(old)
        raise
