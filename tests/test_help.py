"""`simstudy --help` and every command's `--help`: each command listed, each key explained in words."""

import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from simstudy import cli, usage

CONFIGS = Path(cli._config_dir())
DATA_COMMANDS = ("curve", "bands", "audit")


def _help(capsys, monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", ["simstudy", *argv])
    cli.main()
    return capsys.readouterr().out


def test_main_help_lists_every_command_with_one_line(capsys, monkeypatch):
    out = _help(capsys, monkeypatch, "--help")
    for command in ("curve", "bands", "audit", "reproduce", "collect", "replay"):
        [line] = [ln for ln in out.splitlines() if ln.startswith(f"  {command} ")]
        assert usage.COMMANDS[command] in line
    for preset in ("dodge2021_fig1", "fiesta_table2", "lourie_fig5_exact_coverage"):
        assert preset in out
    assert _help(capsys, monkeypatch, "-h") == out


@pytest.mark.parametrize("command", DATA_COMMANDS)
def test_every_key_of_a_data_command_is_explained_with_its_default(capsys, monkeypatch, command):
    keys = {k for k in OmegaConf.load(CONFIGS / f"{command}.yaml") if k not in ("defaults", "hydra")}
    assert keys == set(usage.KEYS[command])  # no key without help, no help for a key that is gone
    out = _help(capsys, monkeypatch, command, "--help")
    assert out.startswith(f"simstudy {command}: {usage.COMMANDS[command]}.")
    assert "data " in out and "[required]" in out
    body = " ".join(out.split())  # the explanations are wrapped
    for key, text in usage.KEYS[command].items():
        assert f"{key} {' '.join(text.split())}" in body, key
    assert _help(capsys, monkeypatch, command, "data=x.csv", "-h") == out  # --help anywhere in the line


def test_data_command_help_shows_yaml_defaults(capsys, monkeypatch):
    body = " ".join(_help(capsys, monkeypatch, "bands", "--help").split())
    assert "e.g. 0.8 [default: 0.8]" in body and "[default: ld_highest_density]" in body
    assert "at least two models [default: false]" in body and "[default: null]" in body


@pytest.mark.parametrize("command, keys", [("reproduce", ("--quick", "only", "n_jobs", "out")),
                                           ("collect", ("run_dir", "sweep_dir")), ("replay", ("run_dir", "chunk"))])
def test_plain_commands_explain_their_keys(capsys, monkeypatch, command, keys):
    out = _help(capsys, monkeypatch, command, "--help")
    assert out.startswith(f"simstudy {command}: ") and "Usage: simstudy " + command in out
    assert tuple(usage.KEYS[command]) == keys
    for key in keys:
        assert f"\n  {key} " in out


def test_help_into_a_closed_pipe_prints_no_traceback(tmp_path):
    # The reader is gone before simstudy writes (as with `simstudy --help | head` on a long help): the write
    # raises BrokenPipeError, which must end the command quietly.
    proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", "bands", "--help"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert err == b"", err.decode()
