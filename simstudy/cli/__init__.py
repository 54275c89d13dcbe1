"""The ``simstudy`` command: a Hydra app, and the only module that imports Hydra.

``simstudy experiment=dodge2021_fig1 [key=value ...]`` composes the config, resolves it into plain frozen
objects (:func:`simstudy.config.parse`) before any compute, runs the study in this process (joblib inside
it), and writes the summary, the replicates, the figure and the run metadata into the run directory
``outputs/<study.name>/<overrides>/``. Invalid input exits with status 2 and one line on stderr, and leaves
no new directory behind; a run that cannot finish (failed chunks beyond ``runner.max_failure_fraction``,
missing chunks at ``collect``, a full disk) exits with status 1 and one line.

``simstudy collect run_dir=DIR`` summarises a run whose chunks were computed by shards (``runner.shard=i/N``);
``simstudy replay run_dir=DIR chunk=CELL/K`` reruns one chunk here and shows its full traceback.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import errno
import itertools
import logging
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

from simstudy import io
from simstudy.commands._data import _load_scores, _log_scores
from simstudy.config import ConfigError, parse
from simstudy.engine import identity as _identity

# The command is the public name; api_run and api_compose are simstudy.api's way in, documented there.
__all__ = ["main"]

log = logging.getLogger("simstudy")

EXIT_BAD_INPUT = 2
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
_ENVIRONMENT_ERRNOS = {
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


def _config_dir() -> str:
    """The Hydra config directory: inside the package in a wheel, ``configs/`` at the top of a source tree."""
    here = Path(__file__).resolve().parents[1]  # the simstudy package (configs/ inside a wheel, beside it in a clone)
    for candidate in (here / "configs", here.parent / "configs"):
        if (candidate / "config.yaml").is_file():
            return str(candidate)
    raise RuntimeError(f"simstudy's configs not found beside {here}; reinstall the package")


#: The characters of a run directory's name: safe to type in any shell unquoted, and on any file system.
_SAFE_NAME = re.compile(r"[A-Za-z0-9._=,+-]+")
#: The suffix of a name made safe: a hyphen and 8 hex digits of the overrides' SHA-256.
_HASHED = re.compile(r"-[0-9a-f]{8}")
#: The longest name kept readable in full (file systems allow 255 bytes per name).
_NAME_MAX = 120


def _dirname(overrides: str) -> str:
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


if not OmegaConf.has_resolver("simstudy_dirname"):
    OmegaConf.register_new_resolver("simstudy_dirname", _dirname)


@dataclasses.dataclass(frozen=True)
class _DirsBefore:
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


#: Set before each Hydra command runs (:func:`_check_overrides`, from the first job's own config; the API:
#: :func:`api_run`); None: unknown, so nothing is removed. A context variable: two :func:`simstudy.run` calls in
#: two threads each remove only what their own run created.
_DIRS_BEFORE: contextvars.ContextVar[_DirsBefore | None] = contextvars.ContextVar("simstudy_dirs", default=None)


def _abs(path) -> Path:
    return Path(os.path.normpath(os.path.abspath(path)))


def _prefixes(path: str) -> set[Path]:
    """Every directory that ``mkdir -p path`` may create: with ``..`` in the path, the lexical prefixes too
    (``a/x/../b`` makes ``a/x``), and the ancestors of each."""
    parts = Path(path).parts
    out = set()
    for i in range(1, len(parts) + 1):
        p = _abs(Path(*parts[:i]))
        out |= {p, *p.parents}
    return out


def _note_run_dir(cfg: DictConfig, multirun: bool) -> None:
    """Note the directories of a composed command's run (or sweep) directory, resolved as Hydra will resolve it;
    if it cannot be resolved here, nothing is known and a refused run removes no directory."""
    try:
        HydraConfig.instance().set_config(cfg)  # ${hydra:...} in the directory's name; Hydra sets it again
        target = str(OmegaConf.select(cfg, "hydra.sweep.dir" if multirun else "hydra.run.dir"))
    except Exception:
        return
    _note_dirs(target, multirun)


def _note_dirs(target, multirun: bool = False) -> None:
    """Note which directories making ``target`` (a run, or a sweep's, directory) would create."""
    known = _prefixes(str(target))
    listed = {_abs(target)} if multirun else set()
    existed = {p for p in known if p.is_dir()}
    if multirun and _abs(target).is_dir():
        existed |= {_abs(p) for p in _abs(target).iterdir() if p.is_dir()}
        listed |= {p for p in existed if p.parent == _abs(target)}
    _DIRS_BEFORE.set(_DirsBefore(frozenset(known), frozenset(listed), frozenset(existed)))


def _remove_if_empty(out_dir: Path) -> None:
    """Remove the run directory and the directories above it that this run created, while they are empty (a
    directory that existed before the run, empty or not, is never removed)."""
    before = _DIRS_BEFORE.get()
    if before is None:
        return
    path = _abs(out_dir)
    candidates = {p for p in (path, *path.parents) if before.created(p)}
    candidates |= {p for p in before.known if before.created(p)}  # a/x of a/x/../b
    for p in sorted(candidates, key=lambda p: len(p.parts), reverse=True):  # deepest first
        with contextlib.suppress(OSError):
            if p.is_dir() and not any(p.iterdir()):
                p.rmdir()


class _Refused(SystemExit):
    """A refusal met under the Python API (:func:`api_run`): the one line the command would print, and its exit
    status. A SystemExit, so that every clean-up that a refused command runs runs the same; the API turns it
    into a :class:`~simstudy.config.ConfigError` (status 2) or :class:`~simstudy.api.RunFailed` (status 1)."""

    def __init__(self, message: str, status: int):
        super().__init__(status)
        self.message = message


#: Whether refusals raise :class:`_Refused` (the Python API) rather than print their line and exit.
_API_MODE = contextvars.ContextVar("simstudy_api_mode", default=False)

#: Whether the Hydra command being run is a multirun (``-m``): set by :func:`_check_overrides` for each command.
#: A job's directory is then named by ``hydra.sweep.dir``, so a refusal's fix names that key, not
#: ``hydra.run.dir`` (which a multirun ignores).
_MULTIRUN = contextvars.ContextVar("simstudy_multirun", default=False)


def _fail(message: str, out_dir: Path | None, status: int = EXIT_BAD_INPUT) -> NoReturn:
    """Report bad input in one line and exit, removing the run directory if this run only created it."""
    if out_dir is not None:
        _remove_if_empty(out_dir)
    first = message.strip().splitlines()[0] if message.strip() else message
    if _MULTIRUN.get():  # "a new directory (hydra.run.dir=NEW)": under -m, the sweep's directory is the one to change
        first = first.replace("hydra.run.dir=NEW", "hydra.sweep.dir=NEW")
    if _API_MODE.get():
        raise _Refused(first, status)
    print(f"simstudy: error: {first}", file=sys.stderr)
    sys.exit(status)


def _os_error(exc: OSError) -> str:
    """An OS error in one line: the file, the system's words, and for a bad path what would fix it."""
    where = f"{exc.filename}: " if exc.filename else ""
    hint = f" ({_PATH_ERRNOS[exc.errno]})" if exc.errno in _PATH_ERRNOS else ""
    return f"{where}{exc.strerror or exc}{hint}"


def _os_status(exc: OSError) -> int:
    """Exit status of an OS error of :data:`_ENVIRONMENT_ERRNOS`: 2 for a bad path given, 1 for the environment."""
    return EXIT_BAD_INPUT if exc.errno in _PATH_ERRNOS else EXIT_FAILED


def _one_line(exc: Exception) -> str:
    """Hydra's composition errors span several lines (and a search path); keep what names the problem."""
    if isinstance(exc, MissingMandatoryValue):
        return f"{exc.full_key} is required: set it with {exc.full_key}=..."
    lines = [line.strip() for line in str(exc).split("Config search path")[0].splitlines() if line.strip()]
    if missing := getattr(exc, "missing_cfg_file", None):  # an unknown config option: say which ones exist
        message = lines[0].removeprefix("In 'config': ").rstrip(".")
        group = Path(_config_dir()) / missing.rsplit("/", 1)[0]
        options = getattr(exc, "options", None) or sorted(p.stem for p in group.glob("*.yaml"))
        return f"{message}; available options: {', '.join(options)}"
    return " ".join(line for line in lines if not line.startswith(("full_key:", "object_type=")))


#: Values of each sweep that the pre-check composes and validates (a job with a later bad value fails alone).
_SWEEP_CHECKS = 16


def _register_studies() -> None:
    """Put each registered study's schema defaults in Hydra's config store (``_schema/study/KIND``), which its
    YAML (``configs/study/KIND.yaml``) selects, so the defaults live in the schema only. A plug-in study with no
    YAML gets one made here: ``study=KIND`` works for it too. A plug-in that fails to load exits 2, one line."""
    from hydra.core.config_store import ConfigStore

    from simstudy import registry, schema
    from simstudy.plugins import PluginError

    try:
        kinds = registry.study_kinds()
    except PluginError as exc:
        _fail(str(exc), None)
    store = ConfigStore.instance()
    files = {p.stem for p in (Path(_config_dir()) / "study").glob("*.yaml")}
    for kind in kinds:
        store.store(group="_schema/study", name=kind, node=schema.defaults(registry.study(kind).options))
        if kind not in files:
            store.store(
                group="study",
                name=kind,
                node={"defaults": [f"/_schema/study/{kind}@_here_", "_self_"], "name": kind, "kind": kind},
            )


def _register_commands() -> None:
    """Put each data command's schema defaults in Hydra's config store (``_schema/COMMAND``), which its YAML
    (``configs/curve.yaml`` ...) selects first in its defaults list, so the defaults live in the schema only
    (:data:`simstudy.config.COMMAND_OPTIONS`) and every key is overridden without ``+``."""
    from hydra.core.config_store import ConfigStore

    from simstudy import config, schema

    store = ConfigStore.instance()
    for command, options in config.COMMAND_OPTIONS.items():
        store.store(group="_schema", name=command, node=schema.defaults(options))


def _check_overrides(argv: list[str], config_name: str = "config") -> None:
    """Compose the config once before Hydra starts, so that a bad override (an unknown config option or key,
    a value Hydra cannot parse, an argument that is not ``key=value``) fails in one line with exit status 2
    and no output directory.

    A multirun (``-m``) is checked job by job for its first job and for each of the first
    :data:`_SWEEP_CHECKS` values of each sweep (the others at their first values), including the command's own
    validation (memory estimates too), so a mistyped key or a bad value fails once, before any job. ``hydra.*`` overrides are parsed too (their values are resolved
    later, by Hydra); a ``hydra.run.dir`` that is an existing file is refused here. Other flags (``--help``,
    ``--cfg``, ``-cn`` ...) are left to Hydra itself.
    """
    _DIRS_BEFORE.set(None)  # unknown until the first job is composed: a refusal before then removes nothing
    multirun = any(arg in ("-m", "--multirun") for arg in argv)
    _MULTIRUN.set(multirun)
    sweep_dir = None
    argv = [arg for arg in argv if arg not in ("-m", "--multirun")]
    if any(arg.startswith("-") for arg in argv):
        return
    _check_arguments(argv)
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import open_dict

    parser, composed, sweeps = OverridesParser.create(), [], []
    for arg in argv:
        try:
            override = parser.parse_overrides([arg])[0]
        except Exception as exc:
            key, _, value = arg.partition("=")
            reasons = [
                line.strip()
                for line in str(exc).splitlines()
                if line.strip().startswith(("mismatched", "missing", "extraneous", "no viable", "token recognition"))
            ]
            why = f" ({reasons[0]})" if reasons else ""
            _fail(
                f"argument {arg!r} cannot be parsed{why}: a value with spaces, non-ASCII letters or any of ()[]{{}},:='\" "
                f"needs quotes that reach simstudy: \"{key}='{value}'\"",
                None,
            )
        key = override.get_key_element()
        if key in ("hydra.run.dir", "hydra.sweep.dir") and isinstance(directory := override.value(), str):
            _check_dir_override(key, directory)
        if not override.is_sweep_override():
            composed.append(arg)
        elif not multirun and _API_MODE.get():
            _fail(
                f"override {arg!r} lists several values (a comma separates them): run once per value (a loop), "
                f"or quote a value holding a comma: \"{key}='{arg.partition('=')[2]}'\"",
                None,
            )
        elif not multirun:
            _fail(
                f"argument {arg!r} lists several values (a comma separates them): add -m to run each, or quote a "
                f"value holding a comma: \"{key}='{arg.partition('=')[2]}'\"",
                None,
            )
        else:
            try:
                values = [f"{key}={v}" for v in itertools.islice(override.sweep_string_iterator(), _SWEEP_CHECKS)]
            except Exception:
                continue
            sweeps.append((len(composed), values[1:]))
            composed.append(values[0])
    # The first job, then each further value of each sweep with the others at their first values: a job's bad
    # value would otherwise stop the sweep after Hydra made its directories.
    jobs = [composed] + [composed[:i] + [v] + composed[i + 1 :] for i, values in sweeps for v in values]
    with initialize_config_dir(config_dir=_config_dir(), version_base="1.3"):
        for job in jobs:
            try:
                cfg = compose(config_name, overrides=job, return_hydra_config=True)
                if job is composed:  # the directories Hydra will make for this command line, noted before it does
                    _note_run_dir(cfg, multirun)
                    if multirun and config_name == "config":
                        _check_sweep_dir(cfg, argv)
                    if multirun:
                        with contextlib.suppress(Exception):  # resolved by Hydra later: nothing known to move
                            sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
                with open_dict(cfg):
                    del cfg["hydra"]  # its ${hydra:...} values exist only once Hydra runs the job
                resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
            except Exception as exc:
                _fail(_unknown_key(exc, compose, config_name, job) or _one_line(exc), None)
            if multirun:
                from simstudy.commands import audit, bands, curve, extrapolate

                validate = {
                    "config": _parse_study,
                    "curve": curve.parse,
                    "bands": bands.parse,
                    "audit": audit.parse,
                    "extrapolate": extrapolate.parse,
                }
                try:
                    validate[config_name](resolved)  # type: ignore[arg-type]  # a DictConfig's container: a dict
                except ConfigError as exc:
                    _fail(str(exc), None)
    if multirun and sweep_dir is not None and _OVERWRITE.get():
        _move_sweep_aside(sweep_dir)


def _move_sweep_aside(sweep_dir: Path) -> None:
    """``overwrite=true`` on a sweep: move the sweep-level files of the earlier one (its ``multirun.yaml``, stacked
    summary and figure) to ``previous/<time>/`` in the sweep's directory, after every job's config was checked and
    before Hydra and :class:`SweepCallback` rewrite them; each job's directory moves its own results."""
    try:
        moved = _identity.move_aside(sweep_dir, _identity.SWEEP_OUTPUTS)
    except io.RunDirConflict as exc:
        _fail(str(exc), None)
    if moved is not None:  # before Hydra's logging is set up: Python's last-resort handler says it on stderr
        log.warning("overwrite=true: moved the earlier sweep's files to %s", moved)


def _last_of_each_key(argv: list[str]) -> list[str]:
    """The arguments with a key given more than once kept only at its last ``key=value`` (in that place), and a
    one-line notice per such key (:func:`_notice`): the rule for a key given twice (``study.reps=10 study.reps=20`` runs
    with 20, in the directory named after 20 alone). Keys are compared as typed (``+key=1 key=2`` adds, then
    sets); flags are kept as given."""
    keys = [a.partition("=")[0] if "=" in a and not a.startswith("-") else None for a in argv]
    kept = []
    for i, (arg, key) in enumerate(zip(argv, keys)):
        if key is not None and key in keys[i + 1 :]:
            continue
        given = [a for a, k in zip(argv[:i], keys[:i]) if key is not None and k == key]
        if given:
            times = "twice" if len(given) == 1 else f"{len(given) + 1} times"
            _notice(f"{key} given {times} ({' '.join([*given, arg])}): the last is used, {arg}")
        kept.append(arg)
    return kept


def _notice(message: str) -> None:
    """One line that is not an error (the command goes on): on stdout, with the run's log lines (stderr holds
    errors only: a refusal stays one line), or as a log warning under the Python API."""
    if _API_MODE.get():
        log.warning("%s", message)
    else:
        print(f"simstudy: note: {message}", flush=True)


def _unknown_key(exc: Exception, compose, config_name: str, job: list[str]) -> str | None:
    """For Hydra's "Could not override 'KEY'" (a typo, most often), the keys that exist where KEY was looked for
    and the closest one; Hydra's own advice (``+KEY=...``) would add a key no command reads, a second error.
    None when it is another error, or the keys cannot be listed."""
    import difflib

    m = re.match(r"Could not override '([^']+)'", str(exc))
    if m is None:
        return None
    key = m.group(1)
    parent, _, leaf = key.rpartition(".")
    try:
        cfg = compose(config_name, overrides=[a for a in job if a.partition("=")[0].lstrip("+~") != key])
        node = OmegaConf.select(cfg, parent) if parent else cfg
    except Exception:
        return None
    if not isinstance(node, DictConfig):
        return f"{key}: {parent} is a value, not a group of keys: set it with {parent}=..." if parent else None
    prefix = f"{parent}." if parent else ""
    leaves = sorted(str(k) for k in node.keys() if not str(k).startswith(("hydra", "_")))
    close = [f"{prefix}{k}" for k in difflib.get_close_matches(leaf, leaves, n=1)]  # by the last part: rep, reps
    keys = ", ".join(f"{prefix}{k}" for k in leaves)
    return f"{key} is not a key: {f'did you mean {close[0]}? ' if close else ''}the keys there: {keys}"


def _sweep_key(override: str) -> bool:
    """Whether an override changes a sweep's results (runner and Hydra settings change no number)."""
    key = override.partition("=")[0].lstrip("+~")
    return not key.startswith(("runner", "hydra.", "hydra/"))


def _check_sweep_dir(cfg: DictConfig, argv: list[str]) -> None:
    """Refuse a sweep into a sweep directory that holds another sweep: Hydra would replace its ``multirun.yaml``,
    and the callback its stacked ``summary.parquet`` and figure. The same sweep again (a resume, other runner
    settings) goes on."""
    try:
        sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
    except Exception:  # resolved by Hydra later: nothing known to compare with
        return
    stored = sweep_dir / "multirun.yaml"
    if not stored.is_file():
        return
    this = sorted(a for a in argv if _sweep_key(a))
    try:
        task = OmegaConf.select(OmegaConf.load(stored), "hydra.overrides.task", default=None)
        earlier = sorted(str(a) for a in task if _sweep_key(str(a)))  # not a list: unreadable (below)
    except Exception:
        earlier = None
    if earlier == this:
        return
    import hashlib

    what = "an unreadable multirun.yaml" if earlier is None else f"another sweep ({' '.join(earlier)})"
    own = f"{sweep_dir}-{hashlib.sha256(' '.join(this).encode()).hexdigest()[:8]}"  # no '=' nor ',': typeable
    _fail(
        f"{sweep_dir} holds {what}, whose multirun.yaml, summary.parquet and figure this sweep would replace: give "
        f"this one its own directory, e.g. hydra.sweep.dir={own}",
        None,
    )


def _check_arguments(argv: list[str]) -> None:
    """Every argument is ``key=value``: a stray word is most often the rest of an unquoted path with spaces
    (``data=my results.csv`` reaches us as ``data=my`` and ``results.csv``)."""
    for i, arg in enumerate(argv):
        if "=" in arg or arg.startswith("~"):  # ~key deletes a key: Hydra's grammar, no value
            continue
        previous = next((a for a in reversed(argv[:i]) if "=" in a), None)
        if previous is None:
            _fail(f"argument {arg!r} is not key=value (e.g. data=FILE; simstudy --help lists the commands)", None)
        key, _, value = previous.partition("=")
        rest = [value]
        for a in argv[argv.index(previous) + 1 :]:
            if "=" in a:
                break
            rest.append(a)
        _fail(f"argument {arg!r} is not key=value; a path with spaces needs quotes: {key}='{' '.join(rest)}'", None)


#: ``overwrite=true`` on the command line (or in :func:`simstudy.run`'s overrides): move a run directory's
#: earlier results to ``previous/<time>/`` inside it instead of refusing other inputs or settings. Taken off the
#: overrides before Hydra sees them: it changes no number, so neither the config nor the run directory's name.
_OVERWRITE: contextvars.ContextVar[bool] = contextvars.ContextVar("simstudy_overwrite", default=False)


def _take_overwrite(args: list[str]) -> list[str]:
    """The overrides without ``overwrite=...``, whose value (true or false) is set in :data:`_OVERWRITE`."""
    rest, overwrite = [], False
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key.lstrip("+") == "overwrite":
            if value.strip().lower() not in ("true", "false"):
                _fail(f"overwrite must be true or false, got {value!r}", None)
            overwrite = value.strip().lower() == "true"
            continue
        rest.append(arg)
    _OVERWRITE.set(overwrite)
    return rest


def _check_identity(out_dir: Path, record: dict) -> None:
    """Refuse (one line, exit 2, nothing written) a run whose command, inputs, plug-ins or settings differ
    from those of the results in ``out_dir``; with overwrite=true, move those results aside instead."""
    try:
        _identity.check(out_dir, record, overwrite=_OVERWRITE.get(), warn=log.warning)
    except io.RunDirConflict as exc:
        _fail(str(exc), None)


#: Settings of a data command that a rerun into the same directory may change: the worker count changes no
#: number, and extrapolate's n_boot only adds chunks (level and method are read from them).
_DATA_RERUN_MAY_CHANGE = {"extrapolate": ("n_boot", "level", "method")}


def _data_record(command: str, cfg: DictConfig, opts) -> dict:
    """A data command's identity: its data by content, its settings (the data's path left out: a renamed
    file with the same bytes is the same input; see :data:`_DATA_RERUN_MAY_CHANGE`)."""
    settings = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(settings, dict)  # a DictConfig's container
    for key in ("data", "n_jobs", "runner", *_DATA_RERUN_MAY_CHANGE.get(command, ())):
        settings.pop(key, None)
    return _identity.record(command, inputs={"data": _identity.data_input(opts.data)}, plugins={}, settings=settings)


def _check_dir_override(key: str, value: str) -> None:
    """A run directory that is (or lies under) an existing file cannot be created: one line, before Hydra."""
    if "${" in value:
        return  # resolved by Hydra later
    path = Path(value).expanduser()
    longest = max(path.parts, key=lambda part: len(os.fsencode(part)), default="")
    if len(os.fsencode(longest)) > _name_max(path):
        _fail(
            f"{key}={value}: a name on the path is {len(os.fsencode(longest))} bytes long, longer than the file "
            f"system allows ({_name_max(path)}): choose a shorter directory",
            None,
        )
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            where = "is an existing file" if p == path else f"lies under {p}, an existing file"
            _fail(f"{key}={value} {where}, not a directory: choose a directory path", None)


def _name_max(path: Path) -> int:
    """The longest name (in bytes) the file system of ``path``'s nearest existing directory allows (255 if unknown)."""
    existing = next((p for p in (_abs(path), *_abs(path).parents) if os.path.isdir(p)), Path("/"))  # no raise
    try:
        return os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or no such limit
        return 255


def _in_run_dir(run, cfg: DictConfig, out_dir: Path | None = None):
    """Run a command in its Hydra run directory, claimed for this process (:func:`simstudy.io.claim_run_dir`):
    a directory holding someone else's files is refused before anything is written, a live run in it too.
    However the command ends (a refusal, an error, Ctrl-C or SIGTERM) the claim is released and the directories
    this run created are removed if it left them empty (finished chunks stay, for a resume). Returns what
    ``run`` returns; ``out_dir`` defaults to Hydra's run directory."""
    out_dir = Path(HydraConfig.get().runtime.output_dir) if out_dir is None else out_dir
    claim = None
    restore = _terminate_as_interrupt()
    try:
        try:
            claim = io.claim_run_dir(out_dir, shard=_shard_label(cfg), warn=log.warning)
        except (io.NotARunDir, io.RunDirBusy) as exc:
            _fail(str(exc), out_dir)
        _note_files(out_dir)
        return run(cfg, out_dir)
    except io.RunDirConflict as exc:  # e.g. an audit rerun with other settings into the same directory
        _release(claim, out_dir)
        _fail(str(exc), None)
    except io.CorruptChunk as exc:
        _release(claim, out_dir)
        _fail(_chunks_changed(exc), None, EXIT_FAILED)
    except OSError as exc:
        _release(claim, out_dir)
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), out_dir, _os_status(exc))
    except BaseException:
        _release(claim, out_dir)
        raise
    finally:
        _release(claim, None)
        restore()


def _chunks_changed(exc: Exception) -> str:
    """A chunk the run stored (and checked) that is gone or different when the summary reads it back: something
    else changed the run directory meanwhile (say, ``chunks/`` deleted). Nothing is summarised from it."""
    return f"chunks changed during the run ({exc}): rerun to recompute"


def _release(claim, out_dir: Path | None) -> None:
    """Give up the run directory; then remove what this run created and left empty (``out_dir`` given)."""
    if claim is not None:
        claim.release()
    if out_dir is not None:
        _remove_if_empty(out_dir)


def _shard_label(cfg: DictConfig) -> str | None:
    """``runner.shard`` as given (validated later): shards share their run directory."""
    try:
        shard = OmegaConf.select(cfg, "runner.shard", default=None, throw_on_missing=False)
    except OmegaConfBaseException:  # the config's own error, reported in one line once it is parsed
        return None
    return None if shard is None else str(shard)


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


def _parse_or_fail(parser, cfg: DictConfig, out_dir: Path | None):
    """Resolve the config and validate it with ``parser``; bad input exits in one line (status 2)."""
    from simstudy.datasets import DataError

    try:
        return parser(OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True))
    except (ConfigError, DataError) as exc:
        _fail(str(exc), out_dir)
    except OmegaConfBaseException as exc:
        _fail(_one_line(exc), out_dir)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="config")
def _study_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_study, cfg)


def _run_study(cfg: DictConfig, out_dir: Path):
    if "design" in cfg:
        return _run_design(cfg, out_dir)
    config = _parse_or_fail(parse, cfg, out_dir)
    if _OVERWRITE.get() and config.runner.shard is not None:  # each shard would move the others' fresh chunks
        _fail(
            "overwrite=true cannot be combined with runner.shard (each shard would move the others' results "
            "aside): give the shards a new run directory (hydra.run.dir=NEW)",
            out_dir,
        )
    record = _identity.study_record(config, settings={})  # the settings: config.yaml's, compared next
    _check_identity(out_dir, record)
    _check_run_dir(OmegaConf.to_container(cfg, resolve=True), out_dir)  # type: ignore[arg-type]  # of a DictConfig: a dict
    log.info("study %s -> %s", config.study.name, out_dir)
    with _config_written(cfg, out_dir, record):
        return _run_and_report(config, out_dir)


def _design_cells(resolved: dict) -> tuple[list[str], list[tuple[str, dict, dict]]]:
    """A config's ``design:`` block crossed into cells: its keys, and per cell (directory name, its values by
    key, its full config without the block). The block maps dotted keys of the config to lists of values::

        design:
          distribution.sd: [0.05, 0.1]
          budget.B: [10, 30]

    Raises ConfigError naming ``design.KEY`` for a key the config does not have or a value that is no list.
    """
    import copy
    import json

    design = resolved.get("design")
    if not isinstance(design, dict) or not design:
        raise ConfigError(
            f"design must map config keys to lists of values, e.g. design={{budget.B: [10, 30]}}, got {design!r}"
        )
    base = {k: v for k, v in resolved.items() if k != "design"}
    for key, values in design.items():
        *parents, leaf = str(key).split(".")
        node: Any = base  # a config value: a mapping, or anything else on a wrong key
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if key == "design" or not isinstance(node, dict) or leaf not in node:
            raise ConfigError(f"design.{key}: the config has no key {key} (design crosses values of existing keys)")
        if not isinstance(values, list) or not values:
            raise ConfigError(f"design.{key} must be a non-empty list of values, got {values!r}")

    def text(value) -> str:  # as it would be typed: 0.05, true, [10,30]
        return json.dumps(value, separators=(",", ":")).strip('"') if not isinstance(value, str) else value

    keys, cells = list(design), []
    for combo in itertools.product(*design.values()):
        cell = copy.deepcopy(base)
        for key, value in zip(keys, combo):
            *parents, leaf = key.split(".")
            node = cell
            for part in parents:
                node = node[part]
            node[leaf] = value
        name = _dirname(",".join(sorted(f"{k}={text(v)}" for k, v in zip(keys, combo))))
        cells.append((name, dict(zip(keys, combo)), cell))
    names = [c[0] for c in cells]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"design lists a value twice: its cells {', '.join(n for n in names if names.count(n) > 1)} repeat"
        )
    return keys, cells


def _parse_study(resolved: dict):
    """:func:`simstudy.config.parse`, and for a config with a ``design:`` block each of its cells (all checked
    before any compute, a bad one named); returns the Config of the config, or of its first cell."""
    if "design" not in resolved:
        return parse(resolved)
    first = None
    for name, _, cell in _design_cells(resolved)[1]:
        try:
            config = parse(cell)
        except ConfigError as exc:
            raise ConfigError(f"design cell {name}: {exc}") from None
        first = first or config
    return first


def _run_design(cfg: DictConfig, out_dir: Path):
    """A config with a ``design:`` block: each cell (one combination of its values) runs as its own study in
    ``out_dir/<key=value,...>/``, exactly as ``simstudy -m`` would run that job (same numbers, same resume), and
    their summaries are stacked into ``out_dir/summary.parquet`` with one column per design key and a faceted
    figure, as a sweep's (:func:`_write_sweep`). Returns the stacked result."""
    from simstudy.studies.base import StudyResult
    from simstudy.sweeps import Job

    resolved = _parse_or_fail(lambda r: r, cfg, out_dir)
    keys, cells = _parse_or_fail(_design_cells, cfg, out_dir)
    configs = []
    for name, _, cell in cells:  # every cell validated before any compute
        try:
            configs.append(parse(cell))
        except ConfigError as exc:
            _fail(f"design cell {name}: {exc}", out_dir)
    if _OVERWRITE.get():  # the stacked results aside; each cell's own are moved by its identity check below
        moved = _identity.move_aside(out_dir)
        if moved is not None:
            log.warning("overwrite=true: moved the earlier results to %s", moved)
    _check_run_dir(resolved, out_dir)
    log.info("design of %d cells (%s) -> %s", len(cells), ", ".join(keys), out_dir)
    reports = []
    with _config_written(cfg, out_dir):
        for (name, _, cell), config in zip(cells, configs):
            sub = out_dir / name
            try:
                claim = io.claim_run_dir(sub, shard=_shard_label(cfg), warn=log.warning)
            except (io.NotARunDir, io.RunDirBusy) as exc:
                _fail(str(exc), None)
            _note_files(sub)
            try:
                record = _identity.study_record(config, settings={})
                _check_identity(sub, record)
                _check_run_dir(cell, sub)
                log.info("design cell %s -> %s", name, sub)
                with _config_written(OmegaConf.create(cell), sub, record):
                    reports.append(_run_and_report(config, sub).report)
            finally:
                claim.release()
        stacked = _write_sweep(out_dir, keys, [Job(name, values) for name, values, _ in cells])
    if stacked.unfinished:
        log.warning(
            "%s",
            _unfinished_message(out_dir, stacked.unfinished, len(cells)).replace(
                "rerun the sweep's command", "rerun the command"
            ),
        )
    report = dataclasses.replace(
        reports[0],
        **{
            f: sum(getattr(r, f) for r in reports)
            for f in ("tasks", "resumed", "computed", "wall_seconds", "compute_seconds")
        },
        warnings=tuple(w for r in reports for w in r.warnings),
        failures=tuple(f for r in reports for f in r.failures),
    )
    files = {
        "summary_parquet": out_dir / "summary.parquet",
        "summary_csv": out_dir / "summary.csv",
        "figure_png": out_dir / "figure.png",
        "figure_pdf": out_dir / "figure.pdf",
    }
    return StudyResult(summary=stacked.frame, report=report, files=files, kind=stacked.kind)


#: Keys that may differ between runs in one directory: the runner's change no number, and a larger
#: study.reps extends the same streams (the chunks already done are reused).
_RERUN_MAY_CHANGE = ("runner", "study.reps")


#: A stored config.yaml (or multirun.yaml) larger than this (a config with a bag of 10^5 scores inline takes
#: about 2 MB), or nested deeper, is not one simstudy wrote: refused before it is parsed (a run directory may
#: come from anyone).
_STORED_YAML_BYTES = 16 << 20
_STORED_YAML_DEPTH = 64


def _load_stored_yaml(stored: Path):
    """A stored YAML file as OmegaConf reads it, in bounded time and memory: a regular file (not a FIFO or a
    device, which would block or never end), of bounded size and nesting, without YAML aliases (an alias bomb
    expands a few lines into billions of nodes; OmegaConf never writes one). Anything else is one line."""
    import stat

    import yaml

    try:
        st = stored.stat()
        if not stat.S_ISREG(st.st_mode):
            _fail(f"{stored}: not a regular file; use another run directory", None)
        if st.st_size > _STORED_YAML_BYTES:
            _fail(
                f"{stored}: {st.st_size} bytes, over the {_STORED_YAML_BYTES >> 20} MB of a stored config; use another "
                f"run directory",
                None,
            )
        with open(stored, encoding="utf-8") as f:
            text = f.read(_STORED_YAML_BYTES + 1)
        depth = 0
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when installed: the same events, faster
        for event in yaml.parse(text, Loader=loader):  # events only: nothing is built or expanded
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                _fail(f"{stored}: holds a YAML alias, which simstudy never writes; use another run directory", None)
            depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
            if depth > _STORED_YAML_DEPTH:
                _fail(f"{stored}: nested deeper than {_STORED_YAML_DEPTH} levels; use another run directory", None)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        problem = getattr(exc, "problem", None)  # YAML's reason, e.g. libyaml's "exceeded maximum nesting depth"
        why = f"{type(exc).__name__}: {problem}" if problem else type(exc).__name__
        _fail(f"{stored}: unreadable ({why}); use another run directory or remove it", None)
    return OmegaConf.create(text)


def _read_stored_config(stored: Path) -> dict:
    """A run directory's config.yaml as written (never resolved: an interpolation such as ``${oc.env:...}`` in
    a stored config would read this machine's environment into the outputs); one that holds one is refused."""
    try:
        old = OmegaConf.to_container(_load_stored_yaml(stored), resolve=False)
    except Exception as exc:
        _fail(f"{stored}: unreadable ({type(exc).__name__}); use another run directory or remove it", None)
    if not isinstance(old, dict):
        _fail(f"{stored}: not a mapping of settings; use another run directory or remove it", None)
    for key, value in io._flatten(old).items():
        if isinstance(value, str) and "${" in value:
            _fail(
                f"{stored}: {key}={value!r} is an interpolation, which simstudy never writes (its configs are "
                f"stored resolved); restore the file or remove the run directory",
                None,
            )
    return old


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


def _check_run_dir(resolved: dict, out_dir: Path) -> None:
    """Refuse to run into a directory holding another configuration's results, naming what differs."""
    stored = out_dir / "config.yaml"
    if not stored.is_file():
        return
    old = _with_study_defaults(_read_stored_config(stored))
    diff = [
        d
        for d in io.config_diff(old, resolved)
        if not d.startswith(_RERUN_MAY_CHANGE) and not _is_data_path(d.partition(":")[0])
    ]
    if diff:
        shown = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
        _fail(f"{out_dir} holds results of a different configuration ({shown}); {io.RUN_DIR_FIXES}", None)


def _is_data_path(key: str) -> bool:
    """A distribution's data file path: its file is compared by content (the identity record), not by name."""
    return key.startswith("distribution.") and key.endswith(".path")


def _write_config(cfg: DictConfig, out_dir: Path, record: dict | None = None) -> None:
    """Write the resolved config.yaml (and the run's identity record, if given) under the run directory's
    claim; an unchanged one is left as it is."""
    if record is not None:
        _identity.write(out_dir, record)
    path = out_dir / "config.yaml"
    text = OmegaConf.to_yaml(cfg, resolve=True)
    if path.is_file() and path.read_text() == text:
        return
    io.write_text(text, path)


@contextlib.contextmanager
def _config_written(cfg: DictConfig, out_dir: Path, record: dict | None = None):
    """config.yaml (and the identity record) written for the run inside; put back as they were if the run is
    refused (exit 2: e.g. the directory holds chunks of another configuration), so that they keep describing
    the results beside them."""
    paths = [out_dir / "config.yaml", out_dir / _identity.RECORD]
    before = [path.read_bytes() if path.is_file() else None for path in paths]
    _write_config(cfg, out_dir, record)
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


def _run_and_report(config, out_dir: Path):
    """Run the study, then log its report and draw its figure; sharded, collect and failing runs end here.
    Returns the :class:`~simstudy.studies.base.StudyResult`, or for a shard its
    :class:`~simstudy.studies.base.ShardDone` (report and marker)."""
    # Imported after validation: a bad config fails fast, without paying for matplotlib.
    from simstudy.engine.cluster import ClusterUnavailable
    from simstudy.engine.runner import MissingChunks
    from simstudy.plugins import PluginExit
    from simstudy.registry import figure_function, study
    from simstudy.studies.base import ShardDone

    spec = study(config.study.kind)
    try:
        result = spec.run(config, out_dir)
    except ShardDone as done:
        i, n = config.runner.shard
        _log_report(done.report)
        log.info(
            "shard %d/%d done (%s); when every shard is done: simstudy collect run_dir=%s",
            i,
            n,
            done.marker.name,
            out_dir,
        )
        _check_failures(done.report, config, out_dir)
        return done
    except MissingChunks as exc:
        _fail(_missing_message(exc, out_dir), None, EXIT_FAILED)
    except PluginExit as exc:  # a plug-in called sys.exit outside the chunks (the truth, a figure ...)
        _fail(str(exc), None)
    except io.CorruptChunk as exc:
        _fail(_chunks_changed(exc), None, EXIT_FAILED)
    except io.RunDirConflict as exc:
        _fail(str(exc), None)
    except ClusterUnavailable as exc:
        _fail(str(exc), None, EXIT_FAILED)

    _log_report(result.report)
    for line in _describe(result.files["run"]):
        log.info("distribution %s", line)
    shown = (
        result.summary[result.summary["measure"] != "failed_chunks"] if "measure" in result.summary else result.summary
    )
    if len(shown):
        fig = figure_function(spec)(shown)
        for suffix in ("png", "pdf"):
            io.save_figure(fig, out_dir / f"figure.{suffix}", dpi=150)
        if spec.headline is not None:
            log.info("%s", spec.headline(shown))
    log.info("wrote %s to %s", _listing(out_dir), out_dir)
    _check_failures(result.report, config, out_dir)
    return result


#: The files at the top of each run directory when this run claimed it (:func:`_note_files`), so that its
#: "wrote ..." line lists what it wrote, not a user's notes beside it. A context variable: each thread's own runs.
_FILES_BEFORE: contextvars.ContextVar[dict[Path, dict[str, tuple[int, int, int]]] | None] = contextvars.ContextVar(
    "simstudy_files_before", default=None
)


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


def _note_files(out_dir: Path) -> None:
    """Note the files in ``out_dir`` before this run writes there (:func:`_listing` leaves them out unchanged)."""
    _FILES_BEFORE.set({**(_FILES_BEFORE.get() or {}), _abs(out_dir): _files(out_dir)})


def _listing(out_dir: Path) -> str:
    """The files this run wrote at the top of its run directory: those new or rewritten since it claimed the
    directory (:func:`_note_files`), without simstudy's own marker and lock (hidden files) and without files
    of the user's or of an earlier run left as they were."""
    before = (_FILES_BEFORE.get() or {}).get(_abs(out_dir), {})
    return ", ".join(sorted(name for name, key in _files(out_dir).items() if before.get(name) != key))


def _log_report(report) -> None:
    log.info(
        "%d chunks (%d resumed) in %.2f s wall, %.2f s compute",
        report.tasks,
        report.resumed,
        report.wall_seconds,
        report.compute_seconds,
    )
    for message in report.warnings:
        log.warning("worker: %s", message)
    for f in report.failures:
        log.warning("chunk %s (seed key %s) failed: %s", f.where, f.seed_key, f.error.splitlines()[0])


def _check_failures(report, config, out_dir: Path) -> None:
    """Exit non-zero, in one line naming the first failure and how to replay it, if too many chunks failed."""
    failures = report.failures
    if not failures:
        return
    exited = [f for f in failures if f.error.startswith(("PluginExit:", "SystemExit:"))]
    if exited:  # the plug-in needs fixing, not a rerun: bad input, however few chunks it ended
        _fail(f"chunk {exited[0].where}: {exited[0].error.splitlines()[0]}", None)
    fraction = len(failures) / report.tasks
    limit = config.runner.max_failure_fraction
    if fraction > limit:
        first = failures[0]
        _fail(
            f"{len(failures)} of {report.tasks} chunks failed ({fraction:.1%} > runner.max_failure_fraction="
            f"{limit:g}); first: chunk {first.where}: {first.error.splitlines()[0]}; its traceback: simstudy "
            f"replay run_dir={out_dir} chunk={first.where}",
            None,
            EXIT_FAILED,
        )
    log.warning(
        "%d of %d chunks failed (within runner.max_failure_fraction=%g); their cells are not summarised",
        len(failures),
        report.tasks,
        limit,
    )


def _missing_message(exc, out_dir: Path, limit: int = 50) -> str:
    """Which chunks are missing (cell/chunk), and which shards should have written them."""
    import re

    missing = [f"{t.cell}/{t.chunk}" for t in exc.missing]
    listed = ", ".join(missing[:limit]) + (f" (and {len(missing) - limit} more)" if len(missing) > limit else "")
    counts = {
        int(m.group(1))
        for p in (out_dir / "shards").glob("shard-*-of-*.json")
        if (m := re.fullmatch(r"shard-\d+-of-(\d+)\.json", p.name))
    }
    hint = ""
    if len(counts) == 1:
        n = counts.pop()
        shards = sorted({pos % n + 1 for pos in exc.positions})
        hint = f"; rerun shard(s) {', '.join(f'{i}/{n}' for i in shards)}"
    return f"{out_dir}: {len(missing)} of {exc.total} chunks missing (cell/chunk): {listed}{hint}"


def _describe(run_json: Path) -> list[str]:
    import json

    described = json.loads(run_json.read_text()).get("distributions", {})
    return [
        f"{name}: " + ", ".join(f"{k}={_rounded(v)}" for k, v in desc.items() if k != "name")
        for name, desc in described.items()
    ]


def _rounded(value):
    """A described value for a log line: floats (also in lists and dicts) to 4 significant digits."""
    from simstudy.stats.metrics import format_number

    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, list):
        return "[" + ", ".join(str(_rounded(v)) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_rounded(v)}" for k, v in value.items()) + "}"
    return value


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="curve")
def _curve_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_curve, cfg)


def _run_curve(cfg: DictConfig, out_dir: Path) -> None:
    """``simstudy curve``: :func:`simstudy.commands.curve.run` into the run directory, its summary printed."""
    from simstudy.commands import curve
    from simstudy.datasets import DataError

    opts = _parse_or_fail(curve.parse, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("curve", cfg, opts.data)
    _check_identity(out_dir, record)
    _log_scores("curve", scores, out_dir)
    try:
        result = curve.run(opts, scores)
    except (ConfigError, DataError) as exc:
        _fail(str(exc), out_dir)
    curve.write(result, out_dir)
    _write_config(cfg, out_dir, record)
    for line in curve.lines(result):
        print(line)
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="bands")
def _bands_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_bands, cfg)


def _run_bands(cfg: DictConfig, out_dir: Path) -> None:
    """``simstudy bands``: :func:`simstudy.commands.bands.run` into the run directory, its summary printed."""
    from simstudy.commands import bands
    from simstudy.datasets import DataError

    opts = _parse_or_fail(bands.parse, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("bands", cfg, opts.data)
    _check_identity(out_dir, record)
    _log_scores("bands", scores, out_dir)
    try:  # its first step refuses, with the estimates, bands beyond the memory or time limit
        result = bands.run(opts, scores)
    except (ConfigError, DataError) as exc:
        _fail(str(exc), out_dir)
    bands.write(result, out_dir)
    _write_config(cfg, out_dir, record)
    for line in bands.lines(result):
        print(line)
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="audit")
def _audit_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_audit, cfg)


def _run_audit(cfg: DictConfig, out_dir: Path) -> None:
    """``simstudy audit``: :mod:`simstudy.commands.audit` into the run directory, its summary printed."""
    from simstudy.commands import audit
    from simstudy.studies.audit import AuditFailed

    opts = _parse_or_fail(audit.parse, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("audit", cfg, opts.data)
    plan = _parse_or_fail(lambda _: audit.prepare(scores, opts), cfg, out_dir)
    _check_identity(out_dir, record)
    log.info("auditing %s (%d scores) at n = %d -> %s", plan.model, plan.scores.size, plan.n, out_dir)
    try:
        result = _parse_or_fail(lambda _: audit.run(plan, opts, out_dir), cfg, out_dir)
    except AuditFailed as exc:  # chunks kept: a rerun resumes the studies
        _fail(str(exc), None, EXIT_FAILED)
    _write_config(cfg, out_dir, record)
    path = audit.write(result, opts, plan.scores, out_dir)
    print(audit.summary(path))
    log.info("wrote %s", path)


@hydra.main(version_base="1.3", config_path=_config_dir(), config_name="extrapolate")
def _extrapolate_app(cfg: DictConfig) -> None:
    _in_run_dir(_run_extrapolate, cfg)


def _run_extrapolate(cfg: DictConfig, out_dir: Path) -> None:
    """``simstudy extrapolate``: fit the noisy quadratic law to each model's tail, bootstrap it through the runner
    (chunks stored in the run directory: a rerun resumes), write the tables, figure and EXTRAPOLATE.md
    (:mod:`simstudy.commands.extrapolate`), print its summary."""
    from simstudy.commands import extrapolate, extrapolate_page
    from simstudy.commands.extrapolate_fit import BadSample, ExtrapolationFailed

    opts = _parse_or_fail(extrapolate.parse, cfg, out_dir)
    scores = _parse_or_fail(lambda _: _load_scores(opts.data), cfg, out_dir)
    record = _data_record("extrapolate", cfg, opts.data)
    source = extrapolate.source_name(opts)
    _log_scores("extrapolate", scores, out_dir)
    try:  # every fit before anything is written: a refused sample leaves nothing behind
        analyses = extrapolate.prepare(scores, opts, source)
    except BadSample as exc:
        _fail(str(exc), out_dir)
    _check_identity(out_dir, record)
    try:
        result = extrapolate.run(analyses, opts, out_dir, source=source)
    except ExtrapolationFailed as exc:
        _fail(str(exc), None, EXIT_FAILED)
    _log_report(result.report)
    extrapolate.write(result, opts, out_dir, source=source)
    _write_config(cfg, out_dir, record)
    io.write_json(
        {
            "command": "extrapolate",
            "config": OmegaConf.to_container(cfg, resolve=True),
            "runner": dataclasses.asdict(result.report),
            "environment": io.environment(),
        },
        out_dir / "run.json",
    )
    for line in extrapolate_page.summary(result, opts.level, (opts.data.low, opts.data.high)):
        print(line)
    log.info("wrote %s to %s", _listing(out_dir), out_dir)


def _key_values(argv: list[str], command: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """``key=value`` arguments of a command that takes no Hydra config; anything else fails in one line."""
    opts: dict[str, str] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in (*required, *optional):
            _fail(
                f"simstudy {command}: unexpected argument {arg!r} (usage: simstudy {command} "
                + " ".join(f"{k}=..." for k in required)
                + "".join(f" [{k}=...]" for k in optional)
                + ")",
                None,
            )
        if key in opts:
            _notice(f"{key} given twice ({key}={opts[key]} {arg}): the last is used, {arg}")
        opts[key] = value
    for key in required:
        if not opts.get(key):
            _fail(f"simstudy {command}: {key} is required: set it with {key}=...", None)
    return opts


def _trusted(opts: dict) -> tuple[str, ...]:
    """The import paths of ``plugins=a.f,b.g``: the stored config's plug-ins the user vouches for."""
    return tuple(p.strip() for p in opts.get("plugins", "").split(",") if p.strip())


def _load_run(run_dir: Path, trusted: tuple[str, ...] = (), **runner):
    """The validated config of an existing run directory, with ``runner`` fields replaced. The directory may
    come from anyone: its config imports only the plug-ins in ``trusted`` (``plugins=...`` on the command line)
    or registered ones; any other ``_target_`` is refused by name before its module is imported."""
    from simstudy.plugins import _trusting_only

    stored = run_dir / "config.yaml"
    if not stored.is_file():
        _fail(f"run_dir={run_dir}: no config.yaml there (not a simstudy run directory)", None)
    old = _read_stored_config(stored)
    if "design" in old:
        _fail(
            f"run_dir={run_dir} holds a design (design: in its config.yaml): use one of its cells' directories, "
            f"run_dir={run_dir}/CELL, and simstudy collect sweep_dir={run_dir} for the stacked summary",
            None,
        )
    try:
        with _trusting_only(trusted):
            config = parse(old)
    except ConfigError as exc:
        _fail(f"{stored}: {exc}", None)
    return dataclasses.replace(config, runner=dataclasses.replace(config.runner, shard=None, **runner))


def _setup_logging() -> None:
    """The same stdout logging as the Hydra commands (configs/hydra/job_logging), for the plain commands."""
    logging.basicConfig(
        level=logging.INFO, stream=sys.stdout, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    )


def _collect(argv: list[str]) -> None:
    """``simstudy collect run_dir=DIR``: the summary and figures of a sharded run, from its chunks only;
    ``simstudy collect sweep_dir=DIR``: a sweep's stacked summary and faceted figure, from its jobs' summaries."""
    opts = _key_values(argv, "collect", (), ("run_dir", "sweep_dir", "plugins"))
    if "sweep_dir" in opts and "run_dir" not in opts:
        _collect_sweep(Path(opts["sweep_dir"]))
        return
    if not opts.get("run_dir") or opts.get("sweep_dir"):
        _fail(
            "simstudy collect: run_dir is required: set it with run_dir=... (or sweep_dir=... for a sweep, not both)",
            None,
        )
    run_dir = Path(opts["run_dir"])
    config = _load_run(run_dir, _trusted(opts), collect=True, n_jobs=1, backend="sequential", progress=False)
    _setup_logging()
    try:  # collect writes the summary: it holds the directory like a run (never beside one still running)
        claim = io.claim_run_dir(run_dir, warn=log.warning)
    except (io.NotARunDir, io.RunDirBusy) as exc:
        _fail(str(exc), None)
    _note_files(run_dir)
    log.info("collecting %s", run_dir)
    try:
        _run_and_report(config, run_dir)
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), None, _os_status(exc))
    finally:
        claim.release()


#: Hydra's sweep subdirectory as configs/config.yaml names it: the job's overrides (:func:`_dirname`).
_SWEEP_SUBDIR = "${simstudy_dirname:${hydra:job.override_dirname}}"


class _NoPlan(Exception):
    """A sweep whose jobs cannot be listed (another sweeper, a custom subdir, an interval sweep)."""


def _typed(override):
    """An override's value as the config holds it (numbers as numbers); a list or mapping as typed."""
    value = override.value()
    return value if value is None or isinstance(value, (bool, int, float, str)) else override.get_value_element_as_str()


def _sweep_plan(cfg: DictConfig) -> tuple[list[str], list]:
    """The swept keys and the jobs (directory name and swept values) of a multirun, from its config (the
    callback's, or the sweep directory's ``multirun.yaml``): the product of the sweep's values, as Hydra's basic
    sweeper builds it, named the way Hydra names their directories. Keys left out of the directory names
    (runner settings, e.g. a sweep over ``runner.shard``) are not swept columns: their jobs share a directory.
    """
    from hydra._internal.config_loader_impl import get_overrides_dirname
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from simstudy.sweeps import Job

    h = cfg.hydra
    sweeper = str(OmegaConf.select(h, "sweeper._target_", default=""))
    if not sweeper.endswith("BasicSweeper"):
        raise _NoPlan(f"its sweeper is {sweeper or 'not named'} (only the basic sweeper's jobs are listed)")
    subdir = OmegaConf.to_container(h.sweep, resolve=False).get("subdir")  # type: ignore[union-attr]  # of a DictConfig: a dict
    if subdir != _SWEEP_SUBDIR:
        raise _NoPlan(f"hydra.sweep.subdir={subdir} is not simstudy's {_SWEEP_SUBDIR}")
    params = OmegaConf.select(h, "sweeper.params", default=None) or {}
    parser = OverridesParser.create()
    named = h.job.config.override_dirname
    exclude = list(named.exclude_keys)
    try:
        overrides = parser.parse_overrides([f"{k}={v}" for k, v in params.items()] + list(h.overrides.task))
        batches = BasicSweeper.split_arguments(overrides, None)[0]
    except Exception as exc:
        raise _NoPlan(_one_line(exc)) from None

    def column(o) -> str:
        return o.get_key_element().lstrip("+~")

    swept = [column(o) for o in overrides if o.is_sweep_override() and o.key_or_group not in exclude]
    jobs: dict[str, Job] = {}
    for batch in batches:
        job = parser.parse_overrides(batch)
        name = _dirname(get_overrides_dirname(job, exclude, named.item_sep, named.kv_sep))
        jobs.setdefault(name, Job(name, {column(o): _typed(o) for o in job if column(o) in swept}))
    return swept, list(jobs.values())


def _write_sweep(sweep_dir: Path, swept: list[str], jobs: list):
    """Stack the finished jobs' summaries into ``summary.parquet``/``.csv`` at the sweep directory and draw
    the faceted ``figure.png``/``.pdf``; returns the :class:`~simstudy.sweeps.Stacked` (with the unfinished)."""
    import matplotlib.pyplot as plt

    from simstudy import plots, sweeps

    stacked = sweeps.stack(sweep_dir, jobs, swept)
    frame = stacked.frame
    if not len(frame):
        return stacked
    io.write_parquet(frame, sweep_dir / "summary.parquet")
    io.write_csv(frame, sweep_dir / "summary.csv")
    rows, spec = sweeps.headline(frame, stacked.kind)
    if len(rows):
        study = f"{frame['study'].iloc[0]}: " if "study" in frame else ""
        fig = plots.sweep_figure(
            rows, swept, x=spec.x, hue=spec.hue, ylabel=spec.ylabel, title=f"{study}{spec.ylabel} by {', '.join(swept)}"
        )
        for suffix in ("png", "pdf"):
            io.save_figure(fig, sweep_dir / f"figure.{suffix}", dpi=150)
        plt.close(fig)
    log.info(
        "sweep: %d job(s) stacked into %s (%d rows; swept: %s)",
        len(jobs) - len(stacked.unfinished),
        sweep_dir / "summary.parquet",
        len(frame),
        ", ".join(swept),
    )
    return stacked


def _unfinished_message(sweep_dir: Path, unfinished, total: int) -> str:
    """Which jobs have no summary, and what finishes them: a sharded job's run is collected, others resumed."""
    sharded = all((sweep_dir / job / "shards").is_dir() for job in unfinished)
    then = (
        (
            f"when their shards are done, simstudy collect run_dir={sweep_dir}/JOB for each, then simstudy collect "
            f"sweep_dir={sweep_dir}"
        )
        if sharded
        else "rerun the sweep's command to resume them"
    )
    return (
        f"{sweep_dir}: {len(unfinished)} of {total} jobs did not finish (no summary.parquet): "
        f"{'; '.join(unfinished)}; {then}"
    )


try:
    from hydra.experimental.callback import Callback as _Callback
except ImportError:  # pragma: no cover -- Hydra < 1.1 has no callbacks
    _Callback = object  # type: ignore[misc, assignment]  # the fallback base class mypy cannot follow


class SweepCallback(_Callback):
    """Registered in configs/config.yaml (``hydra.callbacks``): once every job of a multirun has ended, their
    summaries are stacked into one frame and one faceted figure at the sweep directory (:func:`_write_sweep`);
    ``simstudy collect sweep_dir=DIR`` does the same later (for a sweep cut short, or sharded jobs)."""

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        try:
            swept, jobs = _sweep_plan(config)
        except _NoPlan as exc:
            log.info("sweep: no stacked summary: %s", exc)
            return
        if not swept:  # only runner settings swept (e.g. runner.shard): one run directory, nothing to stack
            return
        stacked = _write_sweep(sweep_dir, swept, jobs)
        if stacked.unfinished:  # e.g. shards: each job stored its chunks, and collect summarises them
            log.warning("%s", _unfinished_message(sweep_dir, stacked.unfinished, len(jobs)))


def _collect_sweep(sweep_dir: Path) -> None:
    """``simstudy collect sweep_dir=DIR``: rebuild the sweep's frame and figure from its finished jobs; exit 1,
    in one line naming them, if some did not finish."""
    stored = sweep_dir / "multirun.yaml"
    design = sweep_dir / "config.yaml"
    if not stored.is_file() and not (design.is_file() and "design" in _read_stored_config(design)):
        _fail(
            f"sweep_dir={sweep_dir}: no multirun.yaml there (not the directory of a sweep, simstudy -m ..., nor "
            f"of a design)",
            None,
        )
    _setup_logging()
    try:
        if stored.is_file():
            swept, jobs = _sweep_plan(_load_stored_yaml(stored))  # a list (not a mapping) fails inside: unreadable
        else:
            from simstudy.sweeps import Job

            stored = design
            swept, cells = _design_cells(_read_stored_config(design))
            jobs = [Job(name, values) for name, values, _ in cells]
    except _NoPlan as exc:
        _fail(f"{stored}: cannot list the sweep's jobs: {exc}", None)
    except Exception as exc:
        _fail(f"{stored}: unreadable ({type(exc).__name__}: {_one_line(exc)}); rerun the sweep", None)
    if not swept:
        _fail(
            f"{stored}: no swept key names its jobs' directories (only runner settings are swept): collect the "
            f"run with simstudy collect run_dir=DIR",
            None,
        )
    try:
        stacked = _write_sweep(sweep_dir, swept, jobs)
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), None, _os_status(exc))
    if stacked.unfinished:
        _fail(_unfinished_message(sweep_dir, stacked.unfinished, len(jobs)), None, EXIT_FAILED)


def _replay(argv: list[str]) -> None:
    """``simstudy replay run_dir=DIR chunk=CELL/K``: rerun one chunk here; its exception propagates in full."""
    from simstudy.registry import study
    from simstudy.studies.base import ReplayDone

    opts = _key_values(argv, "replay", ("run_dir", "chunk"), ("plugins",))
    cell, _, k = opts["chunk"].rpartition("/")
    if not cell or not k.isdigit():
        _fail(
            f"chunk must be CELL/K (a cell key and a chunk number, as in the failure report), got {opts['chunk']!r}",
            None,
        )
    run_dir = Path(opts["run_dir"])
    config = _load_run(run_dir, _trusted(opts), replay=(cell, int(k)), n_jobs=1, backend="sequential", progress=False)
    _setup_logging()
    try:
        study(config.study.kind).run(config, run_dir)
    except ReplayDone as done:
        print(f"{done} (the failure did not reproduce)")
    except ValueError as exc:
        if "is not a chunk of this study" not in str(exc):
            raise
        _fail(str(exc), None)


def _api_args(experiment, overrides) -> list[str]:
    """The command line of :func:`api_compose`/:func:`api_run`: ``experiment=NAME`` first, as typed."""
    args = ([] if experiment is None else [f"experiment={experiment}"]) + list(overrides)
    flags = [a for a in args if a.startswith("-")]
    if flags:
        _fail(f"override {flags[0]!r} is a command-line flag, not key=value: the Python API takes overrides only", None)
    return _last_of_each_key(args)


#: Hydra's composition is process-global (GlobalHydra, the config store, HydraConfig): one thread at a time.
_HYDRA_LOCK = threading.RLock()


def _api_compose(args: list[str]):
    """Compose and validate as the study command does: (task config, frozen Config, CLI run directory); under
    :data:`_HYDRA_LOCK`, so that :func:`simstudy.run` calls in several threads each compose their own config
    (a second thread's composition found GlobalHydra initialised, or the schema store half rewritten)."""
    with _HYDRA_LOCK:
        return _api_compose_locked(args)


def _api_compose_locked(args: list[str]):
    from hydra import compose, initialize_config_dir
    from omegaconf import open_dict

    _register_studies()
    _check_overrides(args)  # the command's own one-line refusals (unknown key, unparsable value, a sweep)
    try:
        with initialize_config_dir(config_dir=_config_dir(), version_base="1.3"):
            cfg = compose("config", overrides=args, return_hydra_config=True)
        HydraConfig.instance().set_config(cfg)  # ${hydra:job.override_dirname} in the run directory's name
        run_dir = str(OmegaConf.select(cfg, "hydra.run.dir"))
    except Exception as exc:
        _fail(_one_line(exc), None)
    with open_dict(cfg):
        del cfg["hydra"]  # the study's config, as Hydra hands it to a job
    return cfg, _parse_or_fail(_parse_study, cfg, None), run_dir


def api_compose(experiment, overrides):
    """The validated frozen Config of ``simstudy [experiment=NAME] overrides...`` (:func:`simstudy.compose`);
    a refusal raises :class:`_Refused` with the command's one line."""
    token = _API_MODE.set(True)
    try:
        return _api_compose(_api_args(experiment, _take_overwrite(list(overrides))))[1]
    finally:
        _API_MODE.reset(token)


def api_run(experiment, overrides, out_dir):
    """Run ``simstudy [experiment=NAME] overrides...`` in this process, into ``out_dir`` (default: the command's
    own ``outputs/<study>/<overrides>`` under the working directory), on the command's path: the same checks,
    config.yaml, run directory claim, resume, files and log lines (:func:`simstudy.run`). Returns
    ``(study result or ShardDone, Config, run directory)``; a refusal raises :class:`_Refused`."""
    token = _API_MODE.set(True)
    try:
        cfg, config, run_dir = _api_compose(_api_args(experiment, _take_overwrite(list(overrides))))
        out_dir = _abs(run_dir if out_dir is None else out_dir)
        _check_dir_override("out_dir", str(out_dir))
        _note_dirs(out_dir)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno not in _ENVIRONMENT_ERRNOS:
                raise
            _fail(_os_error(exc), out_dir, _os_status(exc))
        return _in_run_dir(_run_study, cfg, out_dir), config, out_dir
    finally:
        _API_MODE.reset(token)


SUBCOMMANDS = {
    "curve": (_curve_app, "curve"),
    "bands": (_bands_app, "bands"),
    "audit": (_audit_app, "audit"),
    "extrapolate": (_extrapolate_app, "extrapolate"),
}


def _reproduce(argv: list[str]) -> None:
    """``simstudy reproduce [--quick] [only=ID,ID] [n_jobs=N] [out=DIR]``: run the catalogued paper results
    (each in its own process, resuming what is done) and write REPRODUCTION.md with their verdicts. With
    ``only``, the other entries are reported from their earlier runs where those exist."""
    import collections
    import subprocess
    import time
    from concurrent.futures import ThreadPoolExecutor

    from simstudy.commands import reproduce

    _setup_logging()
    quick = "--quick" in argv
    opts = _key_values([a for a in argv if a != "--quick"], "reproduce", (), ("only", "n_jobs", "out"))
    try:
        entries = reproduce.load_catalogue()
    except (reproduce.CatalogueError, OSError) as exc:
        _fail(str(exc), None)
    wanted = opts["only"].split(",") if "only" in opts else [e.id for e in entries]
    unknown = sorted(set(wanted) - {e.id for e in entries})
    if unknown:
        _fail(
            f"only={opts['only']}: no entries {', '.join(unknown)} (entries: {', '.join(e.id for e in entries)})", None
        )
    n_jobs = opts.get("n_jobs", "-1")
    if not n_jobs.lstrip("-").isdigit() or int(n_jobs) == 0 or int(n_jobs) < -1:
        _fail(f"n_jobs must be a positive number of workers or -1 (all cores), got {n_jobs}", None)
    runs = Path("outputs") / ("reproduce-quick" if quick else "reproduce")
    out = Path(opts.get("out", runs if quick else "."))
    _check_dir_override("out", str(out))  # a file, or a path through one: refused before any run, not after
    # Before any run: refuse a report directory holding files simstudy did not write (a user's own report
    # or figures), and read the sections that this run will not regenerate, to keep them.
    figures = [
        f"reproduction/{e.id}.png"
        for e in entries
        if not e.unavailable and (e.id in wanted or (runs / e.id / e.table).is_file())
    ]
    try:
        reproduce.check_out_dir(out, ["REPRODUCTION.md", *figures], quick=quick)
        earlier = reproduce.read_report(out)
    except (reproduce.OutDirError, OSError) as exc:
        _fail(str(exc), None)
    # Every run is a process of its own; `workers` of them run at once, one core each (a run's numbers do not
    # depend on its runner.n_jobs), so the many short runs' start-up and single-threaded work overlap.
    workers = (os.cpu_count() or 1) if int(n_jobs) == -1 else int(n_jobs)

    def shown(command_args, quick_args) -> tuple[list[str], str]:
        """The arguments of one catalogued run, and the command as the report shows it (no runner keys)."""
        runner = (
            [] if command_args[:1] and command_args[0] in SUBCOMMANDS else ["runner.n_jobs=1", "runner.progress=false"]
        )
        args = [*command_args, *(quick_args if quick else ()), *runner]
        return args, "simstudy " + " ".join(a for a in args if not a.startswith("runner."))

    def run_one(name: str, args: list[str], command: str, run_dir: Path) -> tuple[float, str]:
        """Run one catalogued command in its own process: (seconds, error)."""
        log.info("reproduce %s: %s", name, command)
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "simstudy.cli", *args, f"hydra.run.dir={run_dir}"], capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
        error = "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["no message"])[-1]
        if error:
            log.warning("%s failed: %s", name, error)
        return seconds, error

    # The runs to make, in catalogue order: each entry's own (hypothesis None), then its hypotheses'.
    Run = collections.namedtuple("Run", "entry hypothesis args command dir")
    plan = []
    for entry in entries:
        if entry.unavailable:
            continue
        plan.append(Run(entry, None, *shown(entry.command, entry.quick), runs / entry.id))
        plan += [
            Run(entry, h, *shown(h.command, entry.quick_for(h)), reproduce.hypothesis_dir(runs, entry, h))
            for h in entry.hypotheses
        ]
    asked = [r for r in plan if r.entry.id in wanted]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {
            r.dir: pool.submit(
                run_one,
                r.entry.id + (f", hypothesis {r.hypothesis.id}" if r.hypothesis else ""),
                r.args,
                r.command,
                r.dir,
            )
            for r in asked
        }
        done = {run_dir: future.result() for run_dir, future in futures.items()}  # (seconds, error) by directory
    elapsed = time.perf_counter() - started
    full_run = reproduce.record_full_run(runs, [r.dir for r in plan], elapsed, workers, full=len(asked) == len(plan))

    sections = []
    for entry in entries:
        run_dir = runs / entry.id
        if not entry.unavailable and entry.id not in wanted and not (run_dir / entry.table).is_file():
            if entry.id in earlier:  # not asked for, its run not here: the earlier report's section stays
                sections.append(reproduce.kept_section(entry, earlier[entry.id]))
            continue
        if entry.unavailable:
            sections.append(reproduce.read_section(entry, run_dir, "", None))
            continue
        own, *hypotheses = [r for r in plan if r.entry is entry]
        seconds, error = done.get(own.dir, (None, ""))
        tried = []
        for r in hypotheses:
            h_seconds, h_error = done.get(r.dir, (None, ""))
            if h_seconds is None and not (r.dir / entry.table).is_file():
                h_error = "not run yet (run it with only=" + entry.id + ")"
            tried.append(reproduce.read_hypothesis(entry, r.hypothesis, r.dir, r.command, h_seconds, h_error))
        sections.append(reproduce.read_section(entry, run_dir, own.command, seconds, error, tuple(tried)))
        log.info("%s: %s", entry.id, reproduce.verdict(sections[-1]) + (f" ({error})" if error else ""))
    try:
        path = reproduce.write_report(
            sections,
            out,
            quick=quick,
            total_seconds=sum(reproduce.section_seconds(s) for s in sections),
            cores=os.cpu_count() or 1,
            full_run=full_run,
        )
    except reproduce.OutDirError as exc:  # a file appeared in the report's place while the runs ran
        _fail(str(exc), None)
    log.info("wrote %s", path)
    failed = sum(bool(s.error) for s in sections) + sum(
        bool(h.error) and s.entry.id in wanted for s in sections for h in s.hypotheses
    )
    if failed:
        _fail(f"{failed} run(s) failed; see {path}", None, EXIT_FAILED)


PLAIN_COMMANDS = {"collect": _collect, "replay": _replay, "reproduce": _reproduce}


@contextlib.contextmanager
def _public_groups_only():
    """Hydra's ``--help`` lists every config group it knows, also the schemas simstudy stores for each study kind
    (``_schema/study``), each on one line however long: inside, groups whose name has a part starting with ``_``
    are not listed, and each group's options are wrapped at 100 columns."""
    import textwrap

    from hydra._internal.hydra import Hydra

    formatted = Hydra.format_config_groups

    def public(self, predicate, compact: bool = True) -> str:
        def shown(group: str) -> bool:
            return predicate(group) and not any(part.startswith("_") for part in group.split("/"))

        if not compact:
            return formatted(self, shown, compact)
        lines = [
            textwrap.fill(
                f"{group}: {', '.join(sorted(self.config_loader.get_group_options(group)))}",
                width=100,
                subsequent_indent="  ",
            )
            for group in sorted(g for g in self.list_all_config_groups() if shown(g))
        ]
        return "".join(f"{line}\n" for line in lines)

    Hydra.format_config_groups = public  # restored below
    try:
        yield
    finally:
        Hydra.format_config_groups = formatted


def _help(argv: list[str]) -> str | None:
    """The help asked for, if any: ``simstudy --help`` or ``simstudy COMMAND --help`` (a study's
    ``simstudy experiment=NAME --help`` is Hydra's, which prints the resolved config)."""
    from simstudy.cli import usage

    wants = any(a in ("-h", "--help") for a in argv)
    if argv and argv[0] in ("-h", "--help"):
        return usage.main_help(Path(_config_dir()))
    kinds = [a.split("=", 1)[1] for a in argv if a.startswith("study=")]
    if wants and kinds and not any(a.startswith(("experiment=", "+experiment=")) for a in argv):
        from simstudy import registry

        if kinds[-1] in registry.study_kinds():  # else Hydra's help names the unknown option
            return usage.study_help(kinds[-1])
    if wants and argv[0] in usage.COMMANDS:
        return usage.command_help(argv[0])
    return None


def main() -> None:
    """The ``simstudy`` command: read ``sys.argv``, run what it asks for, and exit with its status.

    ``simstudy [experiment=NAME] [key=value ...]`` runs a study; ``simstudy COMMAND ...`` runs one of the
    commands (``curve``, ``bands``, ``audit``, ``extrapolate``, ``collect``, ``replay``, ``reproduce``);
    ``simstudy --help`` lists them all and ``simstudy COMMAND --help`` explains each key. From Python,
    :func:`simstudy.run` and :func:`simstudy.compose` are the same code path without the exit.

    Returns
    -------
    None
        Returns after a ``--help`` page; otherwise it exits: status 0 when the run finished, 1 when it could
        not finish (failed or missing chunks, a full disk), 2 for bad input (one line naming the key, or the
        file, row and value, and nothing written), 130 on Ctrl-C (finished chunks are kept: the same
        command resumes).

    Examples
    --------
    >>> import sys
    >>> from unittest import mock
    >>> with mock.patch.object(sys, "argv", ["simstudy", "--help"]):
    ...     main()  # doctest: +ELLIPSIS
    simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.
    ...
    >>> with mock.patch.object(sys, "argv", ["simstudy", "curve", "data=no_such_file.csv"]):
    ...     main()
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        # A file-size limit (ulimit -f): the write raises EFBIG, said in one line, instead of the signal
        # killing the process mid-write.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        _main(sys.argv[1:])
    except KeyboardInterrupt:
        # Finished chunks are stored atomically and a partial one is discarded: the same command resumes.
        print("simstudy: interrupted; rerun the same command to resume", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (``simstudy --help | head``): no traceback. Point stdout at devnull so that the
        # interpreter's final flush does not raise again (the recipe of Python's signal module docs).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


def _log_data_warnings() -> None:
    """Say a :class:`~simstudy.datasets.DataWarning` (failed runs dropped or scored, as the user asked) once, as a
    log line, not as Python's two-line warning with a source line of simstudy's."""
    import warnings

    from simstudy.datasets import DataWarning

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, DataWarning):
            log.warning("%s", message)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    warnings.filterwarnings("once", category=DataWarning)  # a file is read more than once (checks, build)


#: The flags simstudy passes to Hydra (each also in its ``--flag=value`` form); any other is refused in one line.
_HYDRA_FLAGS = frozenset(
    "-h --help --hydra-help -c --cfg --resolve -p --package -r --run -m --multirun -sc --shell-completion -cp "
    "--config-path -cn --config-name -cd --config-dir --experimental-rerun -i --info".split()
)


def _check_flags(argv: list[str], command: str | None) -> None:
    """A flag Hydra does not know (``simstudy curve --data x``) is most often a key typed as an option: one line
    saying how keys are given, instead of Hydra's usage of its own flags."""
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if not arg.startswith("-") or flag in _HYDRA_FLAGS:
            continue
        after = argv[i + 1] if i + 1 < len(argv) else ""
        if not eq and after and "=" not in after and not after.startswith("-"):
            value = after
        name = flag.lstrip("-") or "KEY"
        where = f"simstudy {command} --help" if command else "simstudy --help"
        _fail(
            f"{arg!r} is not an option of simstudy{' ' + command if command else ''}: keys are given as key=value, "
            f"e.g. {name}={value or '...'} ({where} lists them)",
            None,
        )


def _version(argv: list[str]) -> str | None:
    """``simstudy --version`` (also after a command): simstudy's version, not Hydra's."""
    if "--version" not in argv:
        return None
    from simstudy import __version__

    return f"simstudy {__version__}"


def _main(argv: list[str]) -> None:
    _log_data_warnings()
    text = _version(argv) or _help(argv)
    if text is not None:
        print(text)
        sys.stdout.flush()  # inside main's BrokenPipeError guard
        return
    # Let exceptions out of Hydra's wrapper (it would print them in several lines and exit 1) so that an
    # environmental one -- an unwritable or full output directory, met while Hydra creates the run
    # directory -- is reported in one line; any other keeps its full traceback.
    os.environ.setdefault("HYDRA_FULL_ERROR", "1")
    _MULTIRUN.set(False)  # a plain command's refusals: not an earlier sweep's of this process (set again for Hydra's)
    try:
        if argv and argv[0] in PLAIN_COMMANDS:  # their paths too (run_dir= of 300 characters): one line
            PLAIN_COMMANDS[argv[0]](argv[1:])
            return
        if argv and argv[0] in SUBCOMMANDS:
            app, config_name = SUBCOMMANDS[argv[0]]
            _check_flags(argv[1:], argv[0])
            args = _last_of_each_key(_take_overwrite(argv[1:]))
            sys.argv = [sys.argv[0], *args]  # Hydra reads its overrides from sys.argv
            _register_commands()
            _check_overrides(args, config_name)
            app()
            return
        _check_flags(argv, None)
        args = _last_of_each_key(_take_overwrite(argv))
        sys.argv = [sys.argv[0], *args]
        _register_studies()
        _check_overrides(args)
        with _public_groups_only():  # --help: simstudy's groups, not the schemas it stores for them
            _study_app()
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRNOS:
            raise
        _fail(_os_error(exc), None, _os_status(exc))


if __name__ == "__main__":
    main()
