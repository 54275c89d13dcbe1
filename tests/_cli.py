"""Running the `simstudy` command for the CLI tests: in this process by default (the command's ``main()`` with
argv, working directory, environment and standard streams patched: the same code path, without paying a
fresh interpreter's imports per command), or in a subprocess where a real process matters (a plugin script,
a custom environment, signals). Either way bounded in time, never inheriting Hydra's environment, and one
line of stderr checked by the bad-input tests."""

import contextlib
import io
import logging
import os
import subprocess
import sys
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent / "plugins"
FIG1 = ["experiment=dodge2021_fig1", "runner.progress=false"]


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}
    env.update(extra)
    return env


def _in_process(args, cwd) -> subprocess.CompletedProcess:
    from simstudy.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    saved_modules, saved_path = set(sys.modules), list(sys.path)
    saved_env = {k: os.environ.pop(k) for k in [k for k in os.environ if k.startswith("HYDRA")]}
    os.environ["HYDRA_FULL_ERROR"] = "1"  # main() sets it as a subprocess would have it
    status = 0
    try:
        os.chdir(cwd)
        sys.argv = ["simstudy", *map(str, args)]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:  # Hydra's job logging rebinds the root logger to the redirected stdout: put it back
        root.handlers[:] = handlers
        root.setLevel(level)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.pop("HYDRA_FULL_ERROR", None)
        os.environ.update(saved_env)
        # A subprocess's plug-ins die with it: forget the ones this run imported from its directory (my_bands.py
        # of one test is not another's), and the directory it put on sys.path.
        for name in set(sys.modules) - saved_modules:
            if name.startswith("my_"):
                del sys.modules[name]
        sys.path[:] = saved_path
        from simstudy import plugins

        plugins.LOADED.clear()
    return subprocess.CompletedProcess(["simstudy", *args], status, out.getvalue(), err.getvalue())


def simstudy(*args, cwd, check=True, plugin=None, env=None, timeout=300, subprocess_=False, **kwargs):
    """``simstudy *args`` in ``cwd``; ``plugin`` runs it through a test plugin script in tests/plugins/ (in a
    subprocess, as do ``env``, other ``subprocess.run`` keywords and ``subprocess_=True``)."""
    if plugin is None and env is None and not kwargs and not subprocess_:
        proc = _in_process(args, cwd)
    else:
        entry = [str(PLUGINS / plugin)] if plugin else ["-m", "simstudy.cli"]
        proc = subprocess.run([sys.executable, *entry, *args], cwd=cwd, env=env or clean_env(), capture_output=True,
                              text=True, timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"simstudy {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def one_line_error(proc, message: str, status: int = 2) -> str:
    """Assert a one-line ``simstudy: error:`` naming ``message`` and exit ``status``; return the line."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("simstudy: error: "), proc.stderr
    assert message in lines[0], lines[0]
    return lines[0]


#: The config groups of configs/ (a ``group=option`` override chooses a file; every other override sets a value).
GROUPS = ("experiment", "distribution", "budget", "estimators", "study", "runner")
_COMPOSED: dict = {}


def _composed(choices: tuple):
    """The study config Hydra composes for the group ``choices`` (cached: composing costs ~0.5 s, a check ~0.1 ms)."""
    if choices not in _COMPOSED:
        from hydra import compose, initialize_config_dir

        import simstudy

        if not _COMPOSED:  # the command registers the study kinds' schemas in Hydra's store on its first compose
            simstudy.compose("dodge2021_fig1", ["runner.progress=false"])
        with initialize_config_dir(config_dir=str(PLUGINS.parents[1] / "configs"), version_base="1.3"):
            _COMPOSED[choices] = compose("config", overrides=list(choices))
    return _COMPOSED[choices]


def parse_refusal(*overrides) -> str | None:
    """The one-line :class:`~simstudy.config.ConfigError` of :func:`simstudy.config.parse` for ``simstudy
    *overrides`` (None if it accepts them): the command's own check, without a Hydra start per case. The group
    choices compose as the command composes them (cached per choice); the values go on as Hydra puts them on
    (its own override parser and the same merge into the composed config)."""
    import copy

    # Hydra's own step that puts overrides on a composed config (private, but hydra-core is pinned to 1.3.x)
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from simstudy import config

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    choices = tuple(o.input_line for o in parsed if o.key_or_group in GROUPS and not o.is_add())
    values = [o for o in parsed if o.input_line not in choices]
    cfg = copy.deepcopy(_composed(choices))
    ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
    try:
        config.parse(OmegaConf.to_container(cfg, resolve=True))
    except config.ConfigError as exc:
        return str(exc)
    return None


def parse_command_refusal(command: str, *overrides) -> str | None:
    """The one-line :class:`~simstudy.config.ConfigError` of the data command's own parse function
    (``simstudy.commands.<command>.parse``) for ``simstudy command *overrides`` in the working directory (None if
    it accepts them): each value as Hydra's override parser reads it, a ``+`` key as the key itself."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from simstudy import config
    from simstudy.commands import audit, bands, curve, extrapolate

    parse = {"curve": curve.parse, "bands": bands.parse, "audit": audit.parse, "extrapolate": extrapolate.parse}[command]
    parsed = OverridesParser.create().parse_overrides(list(overrides))
    try:
        parse({o.key_or_group: o.value() for o in parsed})
    except config.ConfigError as exc:
        return str(exc)
    return None
