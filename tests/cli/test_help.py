"""`simstudy --help` and every command's `--help`: each command listed, each key explained in words."""

import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from simstudy import config, extend, registry, schema
from simstudy.cli import usage
from simstudy.cli.compose import config_dir, register_commands
from simstudy.cli.main import main
from simstudy.commands import audit, bands, curve, extrapolate
from simstudy.commands._data import REQUIRED

CONFIGS = Path(config_dir())
DATA_COMMANDS = ("curve", "bands", "audit", "extrapolate")


def _help(capsys, monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", ["simstudy", *argv])
    main()
    return capsys.readouterr().out


def test_main_help_lists_every_command_with_its_summary_in_lines_a_terminal_shows(capsys, monkeypatch):
    out = _help(capsys, monkeypatch, "--help")
    flat = " ".join(out.split())
    for command in ("curve", "bands", "audit", "extrapolate", "reproduce", "collect", "replay"):
        # The name, then its summary in a column of its own (extrapolate was once wider than the column).
        [line] = [ln for ln in out.splitlines() if ln.startswith(f"  {command} ")]
        assert line.index(extend.commands.summary(command).split()[0]) == 15, line
        assert f"{command} {extend.commands.summary(command)}" in flat
    assert [ln for ln in out.splitlines() if len(ln) > 100] == []  # lines fit a 100-column terminal
    for preset in ("dodge2021_fig1", "fiesta_table2", "lourie_fig5_exact_coverage"):
        assert preset in out
    assert _help(capsys, monkeypatch, "-h") == out


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_every_key_of_a_data_command_is_explained_with_its_schema_default(capsys, monkeypatch, command):
    fields = schema.docs(registry.command(command).options)
    out = _help(capsys, monkeypatch, command, "--help")
    assert out.startswith(f"simstudy {command}: {extend.commands.summary(command)}.")
    assert not registry.command(command).keys  # its words come from the schema only
    body = " ".join(out.split())  # the explanations are wrapped
    for key, (doc, default) in fields.items():
        assert doc, key  # no key without help
        shown = "[required]" if default == REQUIRED else f"[default: {usage._yaml(default)}]"
        assert f" {key} {' '.join(doc.split())} {shown}" in body, key
    keys = [line.split()[0] for line in out.split("Keys:\n")[1].splitlines() if line.startswith("  ") and
            not line.startswith("   ")]
    assert keys == list(fields)  # every field, in the schema's order, and nothing else
    assert _help(capsys, monkeypatch, command, "data=x.csv", "-h") == out  # --help anywhere in the line


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_data_command_yaml_holds_no_default_of_its_own(command):
    # The schema is the one place of each default: the YAML selects it and holds only the required keys.
    own = {k: v for k, v in OmegaConf.to_container(OmegaConf.load(CONFIGS / f"{command}.yaml")).items()
           if k not in ("defaults", "hydra")}
    required = {k: v for k, v in schema.defaults(registry.command(command).options).items() if v == REQUIRED}
    assert own == required == {"data": "???"}
    assert OmegaConf.load(CONFIGS / f"{command}.yaml").defaults[0] == f"_schema/{command}@_here_"


@pytest.mark.parametrize("command, overrides, expected", [
    ("curve", ["data=x.csv", "estimator=u", "trial_time={a: 0.2}"], {"estimator": "u", "trial_time": {"a": 0.2},
                                                                     "xscale": "log"}),
    ("bands", ["data=x.csv", "kind=quantile", "low=0"], {"kind": "quantile", "low": 0, "confidence": 0.8}),
    ("audit", ["data=x.csv", "model=a", "rounds=40"], {"model": "a", "rounds": 40, "low": 0.0, "high": 1.0}),
    ("extrapolate", ["data=x.csv", "threshold=0.3", "c=[1,2]"], {"threshold": 0.3, "c": [1, 2], "n_boot": 200}),
])
def test_data_command_composes_schema_defaults_and_plain_overrides(command, overrides, expected):
    from hydra import compose, initialize_config_dir

    register_commands()
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        cfg = OmegaConf.to_container(compose(command, overrides=overrides))  # no '+': every key is in the schema
    defaults = schema.defaults(registry.command(command).options)
    assert list(cfg) == list(defaults)  # every key, and only those
    assert cfg == {**defaults, "data": "x.csv", **expected}
    parse = {"curve": curve.parse, "bands": bands.parse, "audit": audit.parse, "extrapolate": extrapolate.parse}[command]
    parse(cfg)  # and the composed config is valid


def test_data_command_help_shows_schema_defaults_and_audit_overrides(capsys, monkeypatch):
    body = " ".join(_help(capsys, monkeypatch, "bands", "--help").split())
    assert "e.g. 0.8 [default: 0.8]" in body and "[default: ld_highest_density]" in body
    assert "at least two models [default: false]" in body and "[default: null]" in body
    assert ("low the lowest score possible, in score units (0 for accuracy; null: unbounded); scores below it are "
            "an error [default: null]") in body
    audit = " ".join(_help(capsys, monkeypatch, "audit", "--help").split())
    assert ("low the lowest score possible, in score units (finite): the fitted distribution lives on [low, high] "
            "[default: 0.0]") in audit
    assert "model the model to audit (default: every model, each on its own) [default: null]" in audit


@pytest.mark.parametrize("command, keys", [("reproduce", ("--quick", "only", "n_jobs", "out")),
                                           ("collect", ("run_dir", "sweep_dir", "plugins")),
                                           ("replay", ("run_dir", "chunk", "plugins"))])
def test_plain_commands_explain_their_keys(capsys, monkeypatch, command, keys):
    out = _help(capsys, monkeypatch, command, "--help")
    assert out.startswith(f"simstudy {command}: ") and "Usage: simstudy " + command in out
    assert tuple(registry.command(command).keys) == keys
    for key in keys:
        assert f"\n  {key} " in out


@pytest.mark.system
def test_help_into_a_closed_pipe_prints_no_traceback(tmp_path):
    # The reader is gone before simstudy writes (as with `simstudy --help | head` on a long help): the write
    # raises BrokenPipeError, which must end the command quietly.
    proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", "bands", "--help"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert err == b"", err.decode()


def test_the_top_help_says_of_runner_and_budget_keys_what_their_schemas_say():
    # `simstudy --help` must not import the config (numpy, 0.2 s), so it keeps its own words for these keys;
    # they start with the schema's, which --help of a study kind and the docs print: the two cannot drift.
    from simstudy import schema
    from simstudy.cli.usage import STUDY_KEYS

    for prefix, options in (("runner.", config.RunnerConfig), ("budget.", config.BudgetConfig)):
        for key, (doc, _) in schema.docs(options).items():
            if prefix + key in STUDY_KEYS:
                assert STUDY_KEYS[prefix + key].startswith(doc), prefix + key
