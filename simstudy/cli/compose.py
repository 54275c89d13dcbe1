"""Composing a config with Hydra's compose API, and the checks of its overrides before anything runs (Hydra and
OmegaConf are imported in :mod:`simstudy.cli` only; this is the module of it that the Python API uses).

The command line (:mod:`simstudy.cli.main`) and the Python API (:mod:`simstudy.api`, which imports this module of
the command line and no other) compose the same config the same way: an unknown key or option, a value Hydra
cannot parse, a stray word, a sweep where one run is asked for, a run directory that cannot be made: each is
refused in one line (:class:`~simstudy.engine.rundir.Refused`, exit status 2) before any directory exists. What
leaves this module is plain: a resolved ``dict`` (:func:`to_plain`), which :mod:`simstudy.launch` runs. Hydra is
imported inside the functions that need it, so that ``simstudy --help`` and ``import simstudy`` do not pay for it.
Nothing here prints or reads ``sys.argv``.

============================  ===================================================================================
``config_dir``                the directory of simstudy's Hydra configs
``register_studies``          each study kind's schema defaults in Hydra's config store
``register_commands``         a data command's schema defaults (and config) in Hydra's config store
``check_overrides``           compose a command line once (a sweep: its first jobs), refusing bad input in one line
``to_plain``                  a composed config as the plain resolved ``dict`` the launcher takes
``study``                     a study's ``[experiment=NAME] key=value ...`` composed for the Python API
``command``                   a data command's keywords and overrides composed for the Python API
``plain``                     a plain command's keywords and overrides as the mapping its ``parse`` takes
``sweep_plan``                a multirun's swept keys and jobs, named as Hydra names their directories
``read_sweep``                the swept keys and jobs of a sweep's (or design's) directory
``one_line``                  Hydra's and OmegaConf's several-line errors in one line
============================  ===================================================================================
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from simstudy.cli.args import (
    as_override,
    check_arguments,
    last_of_each_key,
    optional_keys,
    plain_arguments,
    quote_paths,
    take_overwrite,
)
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
    read_stored_config,
)
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    from omegaconf import DictConfig

log = logging.getLogger("simstudy")


def config_dir() -> str:
    """The Hydra config directory: inside the package in a wheel, ``configs/`` at the top of a source tree."""
    here = Path(__file__).resolve().parents[1]  # the simstudy package (configs/ inside a wheel, beside it in a clone)
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


def _hydra_dir(cfg: DictConfig, key: str) -> str:
    """``hydra.run.dir`` or ``hydra.sweep.dir`` of a composed config, resolved as Hydra will resolve it (its
    ``${hydra:job.override_dirname}`` too); raises what resolving it raised."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    HydraConfig.instance().set_config(cfg)  # ${hydra:...} in the directory's name; Hydra sets it again
    return str(OmegaConf.select(cfg, key))


class Checked(NamedTuple):
    """What :func:`check_overrides` found: ``config``, the composed config of a single run (Hydra's keys
    included; None for a multirun or a command line with flags, which Hydra composes itself), and ``created``,
    the directories Hydra will make for it (:func:`~simstudy.engine.rundir.note_dirs`; None: unknown, its name
    does not resolve here), which the run's owner of its directory removes if the run is refused and leaves them
    empty."""

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
    check_arguments(argv)
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
        elif not multirun:  # the fix the caller can make: the API's a loop, the command's -m
            what, fix = ("override", "run once per value (a loop)") if api else ("argument", "add -m to run each")
            fail(
                f"{what} {arg!r} lists several values (a comma separates them): {fix}, or quote a value holding a "
                f"comma: \"{key}='{arg.partition('=')[2]}'\"",
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
                    target = None  # not resolved here (Hydra resolves it later): nothing known to check or move
                    with contextlib.suppress(Exception):
                        target = _hydra_dir(cfg, "hydra.sweep.dir" if multirun else "hydra.run.dir")
                    created = None if target is None else note_dirs(target, multirun)
                    first = None if multirun else copy.deepcopy(cfg)
                    if multirun and target is not None:
                        sweep_dir = Path(target)
                        _check_sweep_dir_is_simstudys(sweep_dir)
                        if config_name == "config":
                            _check_sweep_dir(sweep_dir, argv, overwrite=overwrite)
                with open_dict(cfg):
                    del cfg["hydra"]  # its ${hydra:...} values exist only once Hydra runs the job
                resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
            except Exception as exc:
                fail(_unknown_key(exc, compose, config_name, job) or one_line(exc))
            if multirun:
                from simstudy import registry
                from simstudy.config import parse_study

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


def _check_sweep_dir_is_simstudys(sweep_dir: Path) -> None:
    """Refuse, before Hydra makes anything, a sweep directory that holds files and is not simstudy's: Hydra would
    write its multirun.yaml there and the sweep its stacked summary.csv and figure over the user's own. simstudy's
    is one whose multirun.yaml names its jobs with simstudy's ``simstudy_dirname`` resolver, or that holds only
    simstudy's run directories (a sweep's jobs)."""
    from simstudy.engine import claims

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


def _check_sweep_dir(sweep_dir: Path, argv: list[str], *, overwrite: bool = False) -> None:
    """Refuse a sweep into a sweep directory that holds another sweep: Hydra would replace its ``multirun.yaml``,
    and the callback its stacked ``summary.parquet`` and figure. The same sweep again (a resume, other runner
    settings) goes on, and so does any sweep under ``overwrite=true``, which moves the earlier one's files aside
    (:func:`_move_sweep_aside`) once every job's config is checked (``overwrite``)."""
    if overwrite:
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


_SWEEP_SUBDIR = "${simstudy_dirname:${hydra:job.override_dirname}}"


class NoPlan(Exception):
    """A sweep whose jobs cannot be listed (another sweeper, a custom subdir, an interval sweep)."""


def _typed(override):
    """An override's value as the config holds it (numbers as numbers); a list or mapping as typed."""
    value = override.value()
    return value if value is None or isinstance(value, (bool, int, float, str)) else override.get_value_element_as_str()


def _batches(overrides: list) -> list[list[str]]:
    """The jobs of a basic sweep, each its list of ``key=value`` overrides: the product of each swept key's values
    in the order given, as Hydra's basic sweeper makes them (``BasicSweeper.split_arguments``, which is not part of
    Hydra's public API)."""
    import itertools

    values: dict[str, list[str]] = {}
    for o in overrides:
        key = o.get_key_element()
        if not o.is_sweep_override():
            values[key] = [f"{key}={o.get_value_element_as_str()}"]
        elif o.is_discrete_sweep():
            values[key] = [f"{key}={v}" for v in o.sweep_string_iterator()]
        else:
            raise NoPlan(f"{key}: the basic sweeper sweeps lists of values only, not {o.value_type.name}")
    return [list(job) for job in itertools.product(*values.values())]


def _override_dirname(job: list, exclude: list[str], item_sep: str, kv_sep: str) -> str:
    """``${hydra:job.override_dirname}`` of a job, as Hydra makes it (its own function is not public): the job's
    overrides as typed, those of ``exclude`` left out, sorted and joined."""
    lines = sorted(o.input_line for o in job if o.key_or_group not in exclude)
    return item_sep.join(lines).replace("=", kv_sep)


def sweep_plan(cfg: DictConfig) -> tuple[list[str], list]:
    """The swept keys and the jobs (directory name and swept values) of a multirun, from its config (the
    callback's, or the sweep directory's ``multirun.yaml``): the product of the sweep's values, as Hydra's basic
    sweeper builds it, named the way Hydra names their directories. Keys left out of the directory names
    (runner settings, e.g. a sweep over ``runner.shard``) are not swept columns: their jobs share a directory.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from simstudy.sweeps import Job

    h = cfg.hydra
    sweeper = str(OmegaConf.select(h, "sweeper._target_", default=""))
    if not sweeper.endswith("BasicSweeper"):
        raise NoPlan(f"its sweeper is {sweeper or 'not named'} (only the basic sweeper's jobs are listed)")
    subdir = OmegaConf.to_container(h.sweep, resolve=False).get("subdir")  # type: ignore[union-attr]  # of a DictConfig: a dict
    if subdir != _SWEEP_SUBDIR:
        raise NoPlan(f"hydra.sweep.subdir={subdir} is not simstudy's {_SWEEP_SUBDIR}")
    params = OmegaConf.select(h, "sweeper.params", default=None) or {}
    parser = OverridesParser.create()
    named = h.job.config.override_dirname
    exclude = list(named.exclude_keys)
    try:
        overrides = parser.parse_overrides([f"{k}={v}" for k, v in params.items()] + list(h.overrides.task))
        batches = _batches(overrides)
    except Exception as exc:
        raise NoPlan(one_line(exc)) from None

    def column(o) -> str:
        return o.get_key_element().lstrip("+~")

    swept = [column(o) for o in overrides if o.is_sweep_override() and o.key_or_group not in exclude]
    jobs: dict[str, Job] = {}
    for batch in batches:
        job = parser.parse_overrides(batch)
        name = dirname(_override_dirname(job, exclude, named.item_sep, named.kv_sep))
        jobs.setdefault(name, Job(name, {column(o): _typed(o) for o in job if column(o) in swept}))
    return swept, list(jobs.values())


def read_sweep(sweep_dir: Path) -> tuple[list, list]:
    """The swept keys and jobs of the sweep (Hydra's ``multirun.yaml``) or design (its ``config.yaml``) in
    ``sweep_dir``, for a plain command that reads a sweep (``reads_sweep``, as ``collect sweep_dir=`` does); one
    line if it has none."""
    from simstudy.config import design_cells

    stored = sweep_dir / "multirun.yaml"
    design = sweep_dir / "config.yaml"
    if not stored.is_file() and not (design.is_file() and "design" in read_stored_config(design)):
        fail(
            f"sweep_dir={sweep_dir}: no multirun.yaml there (not the directory of a sweep, simstudy -m ..., nor "
            f"of a design)",
        )
    try:
        if stored.is_file():
            from omegaconf import OmegaConf

            # as written (never resolved); a list (not a mapping) fails inside: unreadable
            swept, jobs = sweep_plan(OmegaConf.create(load_stored_yaml(stored)))
        else:
            from simstudy.sweeps import Job

            stored = design
            swept, cells = design_cells(read_stored_config(design))
            jobs = [Job(name, values) for name, values, _ in cells]
    except NoPlan as exc:
        fail(f"{stored}: cannot list the sweep's jobs: {exc}")
    except Exception as exc:
        fail(f"{stored}: unreadable ({type(exc).__name__}: {one_line(exc)}); rerun the sweep")
    if not swept:
        fail(
            f"{stored}: no swept key names its jobs' directories (only runner settings are swept): collect the "
            f"run with simstudy collect run_dir=DIR",
        )
    return swept, jobs


def to_plain(cfg: DictConfig) -> dict:
    """A composed config (without Hydra's keys) as the plain values :mod:`simstudy.launch` takes, resolved
    (``${...}`` interpolations); a value it cannot resolve (a missing ``???`` key, a bad interpolation) is refused
    in one line."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        resolved = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True, enum_to_str=True)
    except OmegaConfBaseException as exc:
        fail(one_line(exc))
    assert isinstance(resolved, dict)  # a DictConfig's container
    return resolved


# --- the Python API's composition (simstudy.run, simstudy.compose) ------------------------------------------------

#: Hydra's composition is process-global (GlobalHydra, the config store, HydraConfig): one thread at a time.
_HYDRA_LOCK = threading.RLock()


class Composed(NamedTuple):
    """A config composed for the Python API: ``config``, its plain resolved values (Hydra's keys left out, as
    Hydra hands them to a job), ``run_dir``, the command line's run directory for it (``outputs/...``, relative),
    and ``overwrite``, whether ``overwrite=true`` was given (taken off before Hydra sees it)."""

    config: dict
    run_dir: str
    overwrite: bool


def _log_notice(message: str) -> None:
    """A notice of the Python API (a key given twice): a warning of the ``simstudy`` logger."""
    log.warning("%s", message)


def _api_args(experiment, overrides) -> list[str]:
    """The command line of :func:`study`/:func:`command`: ``experiment=NAME`` first, as typed."""
    args = ([] if experiment is None else [f"experiment={experiment}"]) + list(overrides)
    flags = [a for a in args if a.startswith("-")]
    if flags:
        fail(f"override {flags[0]!r} is a command-line flag, not key=value: the Python API takes overrides only")
    return quote_paths(last_of_each_key(optional_keys(args), _log_notice))


def _compose(args: list[str], spec=None) -> tuple[dict, str]:
    """Compose as the command does: (plain task config, CLI run directory) of a study (``spec`` None) or of a
    data command. Under :data:`_HYDRA_LOCK`, so that :func:`simstudy.run` calls in several threads each compose
    their own config (a second thread's composition found GlobalHydra initialised, or the schema store half
    rewritten)."""
    from omegaconf import open_dict

    with _HYDRA_LOCK:
        if spec is None:
            register_studies()
        else:
            register_commands(spec)
        # The command's own one-line refusals (unknown key, unparsable value, several values); the config it
        # composed to check them is the one that runs (composed once; the API refuses the flags that skip it).
        cfg = check_overrides(args, "config" if spec is None else spec.name, api=True).config
        try:
            run_dir = _hydra_dir(cfg, "hydra.run.dir")
        except Exception as exc:
            fail(one_line(exc))
        with open_dict(cfg):
            del cfg["hydra"]  # the config, as Hydra hands it to a job
        return to_plain(cfg), run_dir


def study(experiment: str | None, overrides) -> Composed:
    """``simstudy [experiment=NAME] overrides...`` composed as the command composes it, for the Python API
    (:func:`simstudy.run`, :func:`simstudy.compose`) and ``simstudy plan``: one value per key, no flags.

    Examples
    --------
    >>> composed = study("dodge2021_fig1", ["study.reps=3000", "overwrite=true"])
    >>> composed.config["study"]["reps"], composed.run_dir, composed.overwrite
    (3000, 'outputs/dodge2021_fig1/study.reps=3000', True)
    """
    args, overwrite = take_overwrite(list(overrides))
    return Composed(*_compose(_api_args(experiment, args)), overwrite)


def command(spec, options, overrides) -> Composed:
    """``simstudy NAME key=value ...`` of a data command composed as the command composes it, from Python keywords
    (``options``: ``minimize=True`` is ``minimize=true``, :func:`~simstudy.cli.args.as_override`) and further
    ``key=value`` strings (``overrides``)."""
    args, overwrite = take_overwrite([as_override(k, v) for k, v in options.items()] + list(overrides))
    return Composed(*_compose(_api_args(None, args), spec), overwrite)


def plain(spec, options, overrides) -> dict:
    """A plain command's Python keywords (``run_dir="outputs/x"``, ``quick=True`` for the flag ``--quick``, a list
    for a comma list: ``only=["a", "b"]``) and further ``key=value`` strings (``overrides``) as the mapping its
    ``parse`` takes, checked as the command line checks its arguments (one line naming a bad one); a command that
    composes a study (``simstudy plan``) takes the study's overrides (and ``experiment=``)."""
    flags = {k.lstrip("-"): k for k in spec.keys if k.startswith("-")}
    argv = [] if "action" not in options or spec.composes_study else [str(options["action"])]
    for key, value in options.items():
        if spec.composes_study:
            argv.append(as_override(key, value))
        elif key in flags:
            if not isinstance(value, bool):
                fail(f"{key} is a flag of simstudy {spec.name}: {key}=True or False, got {value!r}")
            argv += [flags[key]] if value else []
        elif key != "action":
            text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else value
            argv.append(f"{key}={str(text).lower() if isinstance(text, bool) else text}")
    return plain_arguments(spec, argv + list(overrides), _log_notice)
