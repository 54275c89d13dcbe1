"""The command line dispatches exactly the registered commands: the registry (``simstudy.extend.commands``, which
``simstudy --help`` lists) is the one table; a data command needs its Hydra config, a plain one only its spec
(the command line has no per-command code)."""

import sys
from pathlib import Path

from simstudy import extend, registry
from simstudy.cli.compose import config_dir
from simstudy.cli.main import main

CONFIGS = Path(config_dir())


def test_every_registered_command_is_a_data_or_a_plain_command_with_its_config_or_its_spec():
    for name in extend.commands.names():
        spec = registry.command(name)
        assert spec.name == name
        if spec.plain:
            assert spec.run is not None and spec.keys, name  # it runs from its spec; its --help explains its keys
        else:
            assert (CONFIGS / f"{name}.yaml").is_file(), name
            assert spec.parse is not None and spec.run is not None, name


def test_the_help_lists_every_registered_command(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["simstudy", "--help"])
    main()
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.split("Commands:\n")[1].split("\n\n")[0].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed == list(extend.commands.names())
