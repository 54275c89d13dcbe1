"""The command line dispatches exactly the registered commands: the registry (``simstudy.extend.commands``, which
``simstudy --help`` lists) and the CLI's two dispatch tables cannot drift apart."""

import sys
from pathlib import Path

import simstudy.cli  # noqa: F401  (fills the data commands' table)
from simstudy import extend
from simstudy.cli import plain

DISPATCH = sys.modules["simstudy.cli.main"]  # the module (simstudy.cli.main is also the function's name)
CONFIGS = Path(simstudy.cli._config_dir())


def test_every_registered_command_is_dispatched_and_nothing_else():
    hydra_apps, plain_commands = set(DISPATCH.SUBCOMMANDS), set(DISPATCH.PLAIN_COMMANDS)
    assert not hydra_apps & plain_commands
    assert hydra_apps | plain_commands == set(extend.commands.names())


def test_each_dispatched_command_has_its_config_or_its_function():
    for name, (app, config_name) in DISPATCH.SUBCOMMANDS.items():
        assert callable(app), name
        assert (CONFIGS / f"{config_name}.yaml").is_file(), name
    for name, function in DISPATCH.PLAIN_COMMANDS.items():
        assert callable(getattr(plain, function)), name


def test_the_help_lists_every_registered_command():
    from simstudy.cli.usage import COMMANDS

    assert list(COMMANDS) == list(extend.commands.names())
