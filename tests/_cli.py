"""Running the `simstudy` command in a subprocess, for the CLI tests: bounded in time, never inheriting Hydra's
environment, one line of stderr checked by the bad-input tests."""

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


def simstudy(*args, cwd, check=True, plugin=None, env=None, timeout=300, **kwargs):
    """``simstudy *args`` in ``cwd``; ``plugin`` runs it through a test plugin script in tests/plugins/."""
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
