"""The Python API runs on simstudy.launch beside the command line, composing through simstudy.cli.compose alone (issue
35: Hydra only in simstudy.cli), never through the modules that print, exit or read argv."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _python(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True)


def test_the_api_does_not_import_the_cli(tmp_path):
    proc = _python(
        """
        import sys
        import simstudy.api
        assert "simstudy.cli" not in sys.modules, sorted(m for m in sys.modules if m.startswith("simstudy.cli"))
        print("ok")
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.system  # a fresh interpreter that runs a study
def test_simstudy_run_works_without_the_command_lines_own_modules(tmp_path):
    # The modules that print, exit or read argv made unimportable: run and compose still work (through
    # simstudy.cli.compose), and a refusal is still a ConfigError.
    proc = _python(
        """
        import sys
        for name in ("main", "plain", "sweeps", "usage"):
            sys.modules[f"simstudy.cli.{name}"] = None  # any import of it raises ImportError
        import simstudy
        result = simstudy.run("dodge2021_fig1", ["study.reps=100", "budget.B=3", "runner.progress=false"], out_dir="run")
        assert result.report.tasks == 1 and len(result.summary), result
        try:
            simstudy.compose("dodge2021_fig1", ["budget.B=0"])
        except simstudy.ConfigError as exc:
            print("refused:", exc)
        print(sorted(m for m in sys.modules if m.startswith("simstudy.cli")))
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "refused: budget.B must be an integer >= 1, got 0" in proc.stdout
    loaded = "['simstudy.cli', 'simstudy.cli.args', 'simstudy.cli.compose', 'simstudy.cli.main', 'simstudy.cli.plain', "
    assert proc.stdout.strip().splitlines()[-1] == loaded + "'simstudy.cli.sweeps', 'simstudy.cli.usage']"  # the Nones
    assert (tmp_path / "run" / "summary.parquet").is_file()


def test_a_run_made_when_replicates_were_the_default_resumes(tmp_path, caplog):
    # evp_accuracy wrote replicates.parquet by default until issue 26: a directory made then holds
    # study.save_replicates: true in its config.yaml, and chunks that keep every replicate. The same command
    # rerun now (save_replicates off by default) resumes them, and keeps writing the file, rather than being
    # refused as another configuration.
    import logging

    import simstudy

    small = ["study.reps=60", "study.chunk_reps=30", "budget.B=4", "runner.progress=false", "runner.figures=[]"]
    made = simstudy.run("dodge2021_fig1", [*small, "study.save_replicates=true"], out_dir=tmp_path / "run")
    assert made.report.computed == 2 and (tmp_path / "run" / "replicates.parquet").is_file()
    with caplog.at_level(logging.INFO, logger="simstudy"):
        again = simstudy.run("dodge2021_fig1", small, out_dir=tmp_path / "run")
    assert again.report.computed == 0 and again.report.resumed == 2
    assert "study.save_replicates=true, as" in caplog.text
    assert again.summary.equals(made.summary)
    # A new directory takes the new default: no replicates file.
    fresh = simstudy.run("dodge2021_fig1", small, out_dir=tmp_path / "fresh")
    assert not (tmp_path / "fresh" / "replicates.parquet").exists()
    assert fresh.summary.equals(made.summary)
