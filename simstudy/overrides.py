"""Composing a command's config with Hydra's compose API, and the checks of its overrides before anything runs.

The command line and the Python API compose the same config the same way: an unknown key or option, a value
Hydra cannot parse, a stray word, a sweep where one run is asked for, a run directory that cannot be made: each
is refused in one line (:class:`~simstudy.engine.rundir.Refused`, exit status 2) before any directory exists.
Hydra is imported inside the functions that need it, so that ``simstudy --help`` and ``import simstudy`` do
not pay for it.

============================  ===================================================================================
``config_dir``                the directory of simstudy's Hydra configs
``register_studies``          each study kind's schema defaults in Hydra's config store
``register_commands``         a data command's schema defaults (and config) in Hydra's config store
``check_overrides``           compose a command line once (a sweep: its first jobs), refusing bad input in one line
``last_of_each_key``          a key given twice: the last kept, and a notice
``take_overwrite``            ``overwrite=true|false`` taken off the overrides
``quote_paths``               a path key's value taken as one path, quoted or not (``=`` and ``,`` in it)
``unquote``                   a plain command's value without the quotes around it
``design_cells``              a config's ``design:`` block crossed into cells
``parse_study``               validate a study's config (each cell of a design)
``one_line``                  Hydra's and OmegaConf's several-line errors in one line
============================  ===================================================================================
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from simstudy.engine import chunks
from simstudy.engine import identity as _identity
from simstudy.engine.rundir import (
    DirsBefore,
    Refused,
    check_dir_override,
    dirname,
    fail,
    load_stored_yaml,
    note_dirs,
)
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

log = logging.getLogger("simstudy")


def config_dir() -> str:
    """The Hydra config directory: inside the package in a wheel, ``configs/`` at the top of a source tree."""
    here = Path(__file__).resolve().parent  # the simstudy package (configs/ inside a wheel, beside it in a clone)
    for candidate in (here / "configs", here.parent / "configs"):
        if (candidate / "config.yaml").is_file():
            return str(candidate)
    raise RuntimeError(f"simstudy's configs not found beside {here}; reinstall the package")


def _register_resolver() -> None:
    """The ``${simstudy_dirname:...}`` resolver of configs/config.yaml's run and sweep directories (:func:`dirname`),
    registered before a config is composed (OmegaConf's registry is process-wide: once)."""
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("simstudy_dirname"):
        OmegaConf.register_new_resolver("simstudy_dirname", dirname)


def one_line(exc: Exception) -> str:
    """Hydra's composition errors span several lines (and a search path); keep what names the problem."""
    from omegaconf.errors import MissingMandatoryValue

    if isinstance(exc, MissingMandatoryValue):
        return f"{exc.full_key} is required: set it with {exc.full_key}=..."
    lines = [line.strip() for line in str(exc).split("Config search path")[0].splitlines() if line.strip()]
    if missing := getattr(exc, "missing_cfg_file", None):  # an unknown config option: say which ones exist
        message = lines[0].removeprefix("In 'config': ").rstrip(".")
        group = Path(config_dir()) / missing.rsplit("/", 1)[0]
        options = getattr(exc, "options", None) or sorted(p.stem for p in group.glob("*.yaml"))
        return f"{message}; available options: {', '.join(options)}"
    return " ".join(line for line in lines if not line.startswith(("full_key:", "object_type=")))


#: Values of each sweep that the pre-check composes and validates (a job with a later bad value fails alone).
_SWEEP_CHECKS = 16


def register_studies() -> None:
    """Put each registered study's schema defaults in Hydra's config store (``_schema/study/KIND``), which its
    YAML (``configs/study/KIND.yaml``) selects, so the defaults live in the schema only. A plug-in study with no
    YAML gets one made here: ``study=KIND`` works for it too. A plug-in that fails to load exits 2, one line."""
    _register_resolver()
    from hydra.core.config_store import ConfigStore

    from simstudy import extend, registry, schema
    from simstudy.plugins import PluginError

    try:
        kinds = registry.study_kinds()
    except PluginError as exc:
        fail(str(exc))
    store = ConfigStore.instance()
    files = {p.stem for p in (Path(config_dir()) / "study").glob("*.yaml")}
    for kind in kinds:
        if kind in files and extend.studies.is_builtin(kind):  # its module imported only if a config selects it
            _store_lazily(store, "_schema/study", kind, lambda kind=kind: registry.study(kind).options)
            continue
        store.store(group="_schema/study", name=kind, node=schema.defaults(registry.study(kind).options))
        if kind not in files:
            store.store(
                group="study",
                name=kind,
                node={"defaults": [f"/_schema/study/{kind}@_here_", "_self_"], "name": kind, "kind": kind},
            )


def _store_lazily(store, group: str, name: str, options) -> None:
    """Put a schema's defaults in Hydra's config store under ``group/name``, built only when a composition loads
    them: importing every study kind's module to store its defaults cost a study's start 0.2 s (and more with each
    kind), though a config selects one. Hydra 1.3's store keeps a ``ConfigNode`` per name in nested dicts
    (``ConfigStore.repo``) and reads its ``node`` on load; this node's is made from ``options()`` then."""
    from hydra.core.config_store import ConfigNode
    from omegaconf import OmegaConf

    from simstudy import schema

    class _LazyNode(ConfigNode):
        def __init__(self) -> None:  # the dataclass fields but ``node``, which the property below makes
            self.name, self.group, self.package, self.provider = f"{name}.yaml", group, None, None
            self._node = None

        @property  # a dataclass field in ConfigNode, computed here on first read
        def node(self):
            if self._node is None:
                self._node = OmegaConf.structured(schema.defaults(options()))
            return self._node

        @node.setter
        def node(self, value) -> None:  # ConfigStore.load sets a deep copy on its copy of the node
            self._node = value

    repo = store.repo
    for part in group.split("/"):
        repo = repo.setdefault(part, {})
    repo[f"{name}.yaml"] = _LazyNode()


def register_commands(spec=None) -> None:
    """Put a data command's schema defaults in Hydra's config store (``_schema/NAME``), which its YAML
    (``configs/curve.yaml`` ...) selects first in its defaults list, so the defaults live in the schema only
    (:attr:`simstudy.registry.Command.options`) and every key is overridden without ``+``. A command with no YAML
    (a plug-in's) gets its config made here, as a built-in's YAML reads. ``spec`` None: every registered data
    command (the tests compose them)."""
    _register_resolver()
    from hydra.core.config_store import ConfigStore

    from simstudy import registry, schema

    store = ConfigStore.instance()
    specs = [spec] if spec is not None else [registry.command(n) for n in registry.command_names()]
    for one in specs:
        if one.options is None:  # a plain command: no Hydra config
            continue
        store.store(group="_schema", name=one.name, node=schema.defaults(one.options))
        if not (Path(config_dir()) / f"{one.name}.yaml").is_file():
            store.store(name=one.name, node=_command_config(one.name))


def _command_config(name: str) -> dict:
    """The Hydra config of a data command that has no YAML: its schema's defaults, and the run directory
    ``outputs/NAME/<overrides>`` (as ``configs/curve.yaml`` says for ``curve``)."""
    dirname = "${simstudy_dirname:${hydra:job.override_dirname}}"
    return {
        "defaults": [f"_schema/{name}@_here_", "_self_", {"override hydra/job_logging": "stdout"}],
        "hydra": {
            "output_subdir": None,
            "job": {"chdir": False},
            "run": {"dir": f"outputs/{name}/{dirname}"},
            "sweep": {"dir": f"outputs/multirun/{name}", "subdir": dirname},
        },
    }


def _note_run_dir(cfg: DictConfig, multirun: bool) -> DirsBefore | None:
    """The directories that making a composed command's run (or sweep) directory would create, resolved as Hydra
    will resolve it (:func:`~simstudy.engine.rundir.note_dirs`); None if it cannot be resolved here: nothing is
    known, and a refused run removes no directory."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    try:
        HydraConfig.instance().set_config(cfg)  # ${hydra:...} in the directory's name; Hydra sets it again
        target = str(OmegaConf.select(cfg, "hydra.sweep.dir" if multirun else "hydra.run.dir"))
    except Exception:
        return None
    return note_dirs(target, multirun)


class Checked(NamedTuple):
    """What :func:`check_overrides` found: ``config``, the composed config of a single run (Hydra's keys
    included; None for a multirun or a command line with flags, which Hydra composes itself), and ``created``,
    the directories Hydra will make for it (:func:`_note_run_dir`; None: unknown), which the run's owner of its
    directory removes if the run is refused and leaves them empty."""

    config: Any
    created: DirsBefore | None


def check_overrides(
    argv: list[str], config_name: str = "config", *, overwrite: bool = False, api: bool = False
) -> Checked:
    """Compose the config once before Hydra starts, so that a bad override (an unknown config option or key,
    a value Hydra cannot parse, an argument that is not ``key=value``) fails in one line with exit status 2
    and no output directory.

    A multirun (``-m``) is checked job by job for its first job and for each of the first
    :data:`_SWEEP_CHECKS` values of each sweep (the others at their first values), including the command's own
    validation (memory estimates too), so a mistyped key or a bad value fails once, before any job. ``hydra.*`` overrides are parsed too (their values are resolved
    later, by Hydra); a ``hydra.run.dir`` that is an existing file is refused here. Other flags (``--help``,
    ``--cfg``, ``-cn`` ...) are left to Hydra itself.

    ``overwrite`` (``overwrite=true``, :func:`take_overwrite`): a sweep into a sweep directory holding another is
    not refused, and its earlier files are moved aside once every job is checked. ``api`` (:func:`simstudy.run`):
    a key's several values are refused with the API's fix (a loop), not the command's (``-m``).

    Returns the composed config of a single run (Hydra's keys included), for the command to run without
    composing it again, and the directories Hydra will make (:class:`Checked`).
    """
    _register_resolver()
    created = None  # unknown until the first job is composed: a refusal before then removes nothing
    multirun = any(arg in ("-m", "--multirun") for arg in argv)
    sweep_dir = None
    argv = [arg for arg in argv if arg not in ("-m", "--multirun")]
    if any(arg.startswith("-") for arg in argv):
        return Checked(None, None)
    _check_arguments(argv)
    import copy

    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf, open_dict

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
            fail(
                f"argument {arg!r} cannot be parsed{why}: a value with spaces, non-ASCII letters or any of ()[]{{}},:='\" "
                f"needs quotes that reach simstudy: \"{key}='{value}'\"",
            )
        key = override.get_key_element()
        if key in ("hydra.run.dir", "hydra.sweep.dir") and isinstance(directory := override.value(), str):
            check_dir_override(key, directory)
        if not override.is_sweep_override():
            composed.append(arg)
        elif not multirun and api:
            fail(
                f"override {arg!r} lists several values (a comma separates them): run once per value (a loop), "
                f"or quote a value holding a comma: \"{key}='{arg.partition('=')[2]}'\"",
            )
        elif not multirun:
            fail(
                f"argument {arg!r} lists several values (a comma separates them): add -m to run each, or quote a "
                f"value holding a comma: \"{key}='{arg.partition('=')[2]}'\"",
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
    with initialize_config_dir(config_dir=config_dir(), version_base="1.3"):
        for job in jobs:
            try:
                cfg = compose(config_name, overrides=job, return_hydra_config=True)
                if job is composed:  # the directories Hydra will make for this command line, noted before it does
                    created = _note_run_dir(cfg, multirun)
                    first = None if multirun else copy.deepcopy(cfg)
                    if multirun:
                        _check_sweep_dir_is_simstudys(cfg)
                    if multirun and config_name == "config":
                        _check_sweep_dir(cfg, argv, overwrite=overwrite)
                    if multirun:
                        with contextlib.suppress(Exception):  # resolved by Hydra later: nothing known to move
                            sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
                with open_dict(cfg):
                    del cfg["hydra"]  # its ${hydra:...} values exist only once Hydra runs the job
                resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
            except Exception as exc:
                fail(_unknown_key(exc, compose, config_name, job) or one_line(exc))
            if multirun:
                from simstudy import registry

                validate = parse_study if config_name == "config" else registry.command(config_name).parse
                assert validate is not None  # a data command has its parse (register_command checks it)
                try:
                    validate(resolved)  # type: ignore[arg-type]  # a DictConfig's container: a dict
                except ConfigError as exc:
                    fail(str(exc))
    if multirun and sweep_dir is not None and overwrite:
        _move_sweep_aside(sweep_dir)
    return Checked(first, created)


def _move_sweep_aside(sweep_dir: Path) -> None:
    """``overwrite=true`` on a sweep: move the earlier one (its ``multirun.yaml``, stacked summary and figure, and
    its jobs' directories) to ``previous/<time>/`` in the sweep's directory, after every job's config was checked
    and before Hydra and :class:`SweepCallback` write anew (:func:`simstudy.engine.identity.sweep_outputs`)."""
    try:
        moved = _identity.move_aside(sweep_dir, _identity.sweep_outputs(sweep_dir))
    except chunks.RunDirConflict as exc:
        fail(str(exc))
    if moved is not None:  # before Hydra's logging is set up: Python's last-resort handler says it on stderr
        log.warning("overwrite=true: moved the earlier sweep's files to %s", moved)


def last_of_each_key(argv: list[str], notice: Callable[[str], None] | None = None) -> list[str]:
    """The arguments with a key given more than once kept only at its last ``key=value`` (in that place), and a
    one-line notice per such key, said by ``notice`` (default :func:`print_notice`, the command line's; the
    Python API's logs it): the rule for a key given twice (``study.reps=10 study.reps=20`` runs
    with 20, in the directory named after 20 alone). Keys are compared without their ``+``/``++``: ``+key=1
    key=2`` is kept as ``++key=2`` (added or set); flags and ``~key`` deletions are kept as given."""
    # A key is the same whatever its + or ++ (add, add or set): budget.B=5 ++budget.B=5 is a key given twice too.
    keys = [a.partition("=")[0].lstrip("+") if "=" in a and not a.startswith(("-", "~")) else None for a in argv]
    kept = []
    for i, (arg, key) in enumerate(zip(argv, keys)):
        if key is not None and key in keys[i + 1 :]:
            continue
        given = [a for a, k in zip(argv[:i], keys[:i]) if key is not None and k == key]
        if given:
            times = "twice" if len(given) == 1 else f"{len(given) + 1} times"
            (notice or print_notice)(f"{key} given {times} ({' '.join([*given, arg])}): the last is used, {arg}")
            if not arg.startswith("+") and any(a.startswith("+") for a in given):  # an earlier one added the key
                arg = f"++{arg}"  # add it or set it, as the dropped ones and the last did together
        kept.append(arg)
    return kept


def print_notice(message: str) -> None:
    """One line that is not an error (the command goes on): on stdout, with the run's log lines (stderr holds
    errors only: a refusal stays one line)."""
    print(f"simstudy: note: {message}", flush=True)


def log_notice(message: str) -> None:
    """A notice of the Python API (:func:`simstudy.run`): a warning of the ``simstudy`` logger."""
    log.warning("%s", message)


def _unknown_key(exc: Exception, compose, config_name: str, job: list[str]) -> str | None:
    """For Hydra's "Could not override 'KEY'" (a typo, most often), the keys that exist where KEY was looked for
    and the closest one; Hydra's own advice (``+KEY=...``) would add a key no command reads, a second error.
    None when it is another error, or the keys cannot be listed."""
    import difflib

    from omegaconf import DictConfig, OmegaConf

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
    if node is None and parent:  # no such group here (runner.progress on curve, which runs no chunks)
        command = "a study" if config_name == "config" else f"simstudy {config_name}"
        helps = "simstudy --help" if config_name == "config" else f"simstudy {config_name} --help"
        return f"{key} is not a key of {command}: it has no {parent.split('.')[0]} settings ({helps} lists its keys)"
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


def _check_sweep_dir_is_simstudys(cfg: DictConfig) -> None:
    """Refuse, before Hydra makes anything, a sweep directory that holds files and is not simstudy's: Hydra would
    write its multirun.yaml there and the sweep its stacked summary.csv and figure over the user's own. simstudy's
    is one whose multirun.yaml names its jobs with simstudy's ``simstudy_dirname`` resolver, or that holds only
    simstudy's run directories (a sweep's jobs)."""
    from omegaconf import OmegaConf

    from simstudy.engine import claims

    try:
        sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
    except Exception:  # resolved by Hydra later: nothing known to check
        return
    if not sweep_dir.is_dir():
        return
    names = sorted(os.listdir(sweep_dir))
    stored = sweep_dir / "multirun.yaml"
    if not names or all((sweep_dir / n / claims.RUN_MARKER).is_file() for n in names if n != _identity.PREVIOUS):
        return
    if stored.is_file():
        stored_cfg: Any = load_stored_yaml(stored)  # as written
        subdir = ((stored_cfg.get("hydra") or {}).get("sweep") or {}) if isinstance(stored_cfg, dict) else {}
        if isinstance(subdir, dict) and "${simstudy_dirname:" in str(subdir.get("subdir")):
            return
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    fail(
        f"{sweep_dir} is not empty and is not a simstudy sweep directory (it holds {shown}); choose another sweep "
        f"directory (hydra.sweep.dir=NEW) or an empty one",
    )


def _check_sweep_dir(cfg: DictConfig, argv: list[str], *, overwrite: bool = False) -> None:
    """Refuse a sweep into a sweep directory that holds another sweep: Hydra would replace its ``multirun.yaml``,
    and the callback its stacked ``summary.parquet`` and figure. The same sweep again (a resume, other runner
    settings) goes on, and so does any sweep under ``overwrite=true``, which moves the earlier one's files aside
    (:func:`_move_sweep_aside`) once every job's config is checked (``overwrite``)."""
    from omegaconf import OmegaConf

    if overwrite:
        return

    try:
        sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
    except Exception:  # resolved by Hydra later: nothing known to compare with
        return
    stored = sweep_dir / "multirun.yaml"
    if not stored.is_file():
        return
    this = sorted(a for a in argv if _sweep_key(a))
    try:  # in bounded time and memory: an alias bomb is unreadable, not minutes of CPU
        task: Any = ((load_stored_yaml(stored).get("hydra") or {}).get("overrides") or {}).get("task")  # as written
        earlier = sorted(str(a) for a in task if _sweep_key(str(a)))  # not a list (or none): unreadable (below)
    except (Exception, Refused):
        earlier = None
    if earlier == this:
        return
    import hashlib

    what = "an unreadable multirun.yaml" if earlier is None else f"another sweep ({' '.join(earlier)})"
    own = f"{sweep_dir}-{hashlib.sha256(' '.join(this).encode()).hexdigest()[:8]}"  # no '=' nor ',': typeable
    fail(
        f"{sweep_dir} holds {what}, whose multirun.yaml, summary.parquet and figure this sweep would replace: add "
        f"overwrite=true to move the earlier sweep's files aside, or give this one its own directory, e.g. "
        f"hydra.sweep.dir={own}",
    )


def _check_arguments(argv: list[str]) -> None:
    """Every argument is ``key=value``: a stray word is most often the rest of an unquoted path with spaces
    (``data=my results.csv`` reaches us as ``data=my`` and ``results.csv``)."""
    for i, arg in enumerate(argv):
        if "=" in arg or arg.startswith("~"):  # ~key deletes a key: Hydra's grammar, no value
            continue
        previous = next((a for a in reversed(argv[:i]) if "=" in a), None)
        if previous is None:
            fail(f"argument {arg!r} is not key=value (e.g. data=FILE; simstudy --help lists the commands)")
        key, _, value = previous.partition("=")
        rest = [value]
        for a in argv[argv.index(previous) + 1 :]:
            if "=" in a:
                break
            rest.append(a)
        fail(f"argument {arg!r} is not key=value; a path with spaces needs quotes: {key}='{' '.join(rest)}'")


#: A distribution's optional keys, which no distribution config lists (their absence means "none"): typed as
#: ``distribution.stream=NAME`` (as the guides spell them), they are added where absent, as ``++KEY`` would.
_OPTIONAL_DISTRIBUTION_KEY = re.compile(r"distribution(\.[A-Za-z_][A-Za-z0-9_]*)?\.stream=")


def optional_keys(args: list[str]) -> list[str]:
    """The overrides with ``distribution.stream=NAME`` (or ``distribution.a.stream=`` of a pair) as ``++`` keys:
    set where the config has one, added where it has none. Hydra refused the spelling of the guides and the
    CHANGELOG as "not a key"; only ``+distribution.stream=`` worked."""
    return [f"++{arg}" if _OPTIONAL_DISTRIBUTION_KEY.match(arg) else arg for arg in args]


def take_overwrite(args: list[str]) -> tuple[list[str], bool]:
    """The overrides without ``overwrite=...``, and its value (true or false; false if not given): whether a run
    directory's earlier results are moved to ``previous/<time>/`` inside it instead of refusing other inputs or
    settings (:class:`~simstudy.engine.rundir.RunDir`). Taken off before Hydra sees them: it changes no number,
    so neither the config nor the run directory's name."""
    rest, overwrite = [], False
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key.lstrip("+") == "overwrite":
            if value.strip().lower() not in ("true", "false"):
                fail(f"overwrite must be true or false, got {value!r}")
            overwrite = value.strip().lower() == "true"
            continue
        rest.append(arg)
    return rest, overwrite


#: The keys of a Hydra command line whose value is a path. simstudy names its own directories with ``=`` and ``,``
#: (``outputs/curve/data=x.csv,low=0``, a sweep's ``seed=1,n=2``), which Hydra's override grammar reads as a nested
#: assignment or a list of sweep values: such a value is quoted here, so that a path is taken the same way quoted
#: or not, as the plain commands take ``run_dir=`` (:func:`unquote`).
_PATH_KEYS = frozenset({"data", "distribution.path", "hydra.run.dir", "hydra.sweep.dir"})
#: The characters of Hydra's override grammar that a value must quote (besides spaces).
GRAMMAR = re.compile(r"[=,()\[\]{}:'\"\s]")


def quote_paths(argv: list[str]) -> list[str]:
    """The arguments with each path value (a key of :data:`_PATH_KEYS`) in one form, whether it was typed quoted
    or not: quoted (single quotes) where Hydra's grammar would otherwise split or refuse it, else bare. A value
    with ``=`` (never valid bare), or with another character of the grammar (``,`` ...) that was typed quoted or
    names an existing file or directory, is one path. So a path typed bare, in single or in double quotes reaches
    Hydra the same, and names the same run directory. A bare comma in a path that does not exist is left to
    Hydra: under ``-m``, ``data=a.csv,b.csv`` sweeps over two files.

    Examples
    --------
    >>> quote_paths(["data=out/x=1,y=2/s.csv", 'data="a=b.csv"', "data='s.csv'", "-m", "data=a.csv,b.csv"])
    ["data='out/x=1,y=2/s.csv'", "data='a=b.csv'", 'data=s.csv', '-m', 'data=a.csv,b.csv']
    """
    out = []
    for arg in argv:
        key, eq, typed = arg.partition("=")
        if eq and not arg.startswith("-") and key.lstrip("+") in _PATH_KEYS:
            value = unquote(typed)
            one_path = value != typed or "=" in value or Path(value).expanduser().exists()
            if value == typed and ("'" in value or '"' in value) and not Path(value).expanduser().exists():
                pass  # quoted in parts by the user ('a=1/x.csv','b=2/y.csv': a sweep's values): as typed
            elif not GRAMMAR.search(value):
                arg = f"{key}={value}"
            elif one_path and (quote := "'" if "'" not in value else '"' if '"' not in value else None):
                arg = f"{key}={quote}{value}{quote}"
            # else as typed: a comma list (a sweep), or a path holding both quotes (Hydra's message says how)
        out.append(arg)
    return out


def unquote(value: str) -> str:
    """A value without one pair of matching quotes around it (``'x'`` or ``"x"``), as Hydra reads a quoted value:
    the plain commands' paths (``run_dir='outputs/curve/data=x.csv,low=0'``) are taken quoted or not.

    Examples
    --------
    >>> unquote("'outputs/curve/data=x.csv,low=0'"), unquote('"a b"'), unquote("it's"), unquote("'a','b'")
    ('outputs/curve/data=x.csv,low=0', 'a b', "it's", "'a','b'")
    """
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" and value[0] not in value[1:-1]:
        return value[1:-1]
    return value  # not one quoted value: bare, or a list of quoted ones ('a=1/x.csv','b=2/y.csv', a sweep's)


def design_cells(resolved: dict) -> tuple[list[str], list[tuple[str, dict, dict]]]:
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
        name = dirname(",".join(sorted(f"{k}={text(v)}" for k, v in zip(keys, combo))))
        cells.append((name, dict(zip(keys, combo)), cell))
    names = [c[0] for c in cells]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"design lists a value twice: its cells {', '.join(n for n in names if names.count(n) > 1)} repeat"
        )
    return keys, cells


def parse_study(resolved: dict):
    """:func:`simstudy.config.parse`, and for a config with a ``design:`` block each of its cells (all checked
    before any compute, a bad one named); returns the Config of the config, or of its first cell."""
    from simstudy.config import parse

    if "design" not in resolved:
        return parse(resolved)
    first = None
    for name, _, cell in design_cells(resolved)[1]:
        try:
            config = parse(cell)
        except ConfigError as exc:
            raise ConfigError(f"design cell {name}: {exc}") from None
        first = first or config
    return first
