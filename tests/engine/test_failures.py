"""A chunk whose estimator raises: recorded with its seed key, the other cells finished and summarised, the
failing cell reported (not summarised from its surviving chunks), exit status from
runner.max_failure_fraction, and the chunk replayed alone with its full traceback. The failing estimator is
a test plugin (tests/plugins/failing_chunk.py), never a shipped config."""

import json
from functools import partial

import pandas as pd
import pytest
from _cli import FIG1, clean_env, one_line_error, simstudy

ARGS = [*FIG1, "budget.B=[5,7]", "study.reps=400", "study.chunk_reps=100", "study.save_replicates=false",
        "runner.n_jobs=1", "hydra.run.dir=run"]
FAILING = clean_env(FAIL_B="7", FAIL_CHUNKS="1")


@pytest.mark.system
def test_a_failing_chunk_fails_the_run_but_the_other_cells_are_summarised(tmp_path):
    proc = simstudy(*ARGS, cwd=tmp_path, plugin="failing_chunk.py", env=FAILING, check=False)
    line = one_line_error(proc, "1 of 8 chunks failed (12.5% > runner.max_failure_fraction=0); first: chunk ",
                          status=1)
    assert "FloatingPointError: estimator diverged on a degenerate sample (B=7)" in line
    cell = line.split("first: chunk ")[1].split("/")[0]
    assert line.endswith(f"simstudy replay run_dir={tmp_path / 'run'} chunk={cell}/1")

    summary = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    failed = summary[summary.measure == "failed_chunks"]
    assert failed.cell.tolist() == [cell] and failed.estimate.tolist() == [1.0]
    # the failing cell has no Monte Carlo numbers at all; the other cell is complete
    assert set(summary[summary.measure == "mse"].B) == {5}
    assert (summary[summary.measure == "mse"].reps == 400).all()
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["failed_chunks"] == 1 and run["failed_cells"] == {cell: 1}
    failure = run["runner"]["failures"][0]
    assert failure["chunk"] == 1 and failure["seed_key"] == [int(cell[:15], 16), 1]
    assert (tmp_path / "run" / "figure.png").stat().st_size > 0


@pytest.mark.system
def test_failures_within_max_failure_fraction_exit_zero_with_a_warning(tmp_path):
    proc = simstudy(*ARGS, "runner.max_failure_fraction=0.2", cwd=tmp_path, plugin="failing_chunk.py",
                    env=FAILING)
    assert "1 of 8 chunks failed (within runner.max_failure_fraction=0.2)" in proc.stdout


@pytest.mark.system
def test_replay_shows_the_full_traceback_and_a_fixed_rerun_matches_a_clean_run(tmp_path):
    proc = simstudy(*ARGS, cwd=tmp_path, plugin="failing_chunk.py", env=FAILING, check=False)
    cell = proc.stderr.split("first: chunk ")[1].split("/")[0]

    replayed = simstudy("replay", "run_dir=run", f"chunk={cell}/1", cwd=tmp_path, plugin="failing_chunk.py",
                        env=FAILING, check=False)
    assert replayed.returncode == 1
    assert "Traceback (most recent call last)" in replayed.stderr and "in _failing_chunk" in replayed.stderr
    assert replayed.stderr.strip().endswith("FloatingPointError: estimator diverged on a degenerate sample (B=7)")
    ok = simstudy("replay", "run_dir=run", f"chunk={cell[:6]}/0", cwd=tmp_path, plugin="failing_chunk.py",
                  env=FAILING)
    assert f"chunk {cell}/0 ran without error" in ok.stdout
    one_line_error(simstudy("replay", "run_dir=run", f"chunk={cell}/9", cwd=tmp_path, check=False),
                   f"chunk={cell}/9 is not a chunk of this study")
    one_line_error(simstudy("replay", "run_dir=run", "chunk=oops", cwd=tmp_path, check=False),
                   "chunk must be CELL/K")

    # fixed (no plugin): the rerun computes only the failed chunk and matches a run that never failed
    simstudy(*ARGS, cwd=tmp_path)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["runner"]["computed"] == 1 and run["failed_chunks"] == 0
    simstudy(*[a for a in ARGS if not a.startswith("hydra.run.dir")], "hydra.run.dir=clean", cwd=tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "run" / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "clean" / "summary.parquet"), check_exact=True)


def _raise_for_budget(original, budget, work, task):
    if work.cells[task.cell].B == budget:
        raise ValueError("boom")
    return original(work, task)


def test_wrong_conclusions_reports_a_failed_cell_and_summarises_the_others(tmp_path, monkeypatch):
    from simstudy import config as cfg
    from simstudy.studies import wrong_conclusions

    monkeypatch.setattr(wrong_conclusions, "_run_chunk", partial(_raise_for_budget, wrong_conclusions._run_chunk, 4))
    pair = {"a": {"kind": "truncnorm", "mean": 0.6, "sd": 0.1}, "b": {"kind": "truncnorm", "mean": 0.62, "sd": 0.1}}
    config = cfg.parse({"seed": 0, "distribution": pair, "budget": {"B": [3, 4, 5], "n": None},
                        "estimators": {"v": {"method": "v"}}, "runner": {"n_jobs": 1, "backend": "sequential"},
                        "study": {"name": "w", "kind": "wrong_conclusions", "reps": 200, "chunk_reps": 100}})
    result = wrong_conclusions.run(config, tmp_path)
    assert len(result.report.failures) == 2
    assert set(result.summary.dropna(subset=["B"]).B) == {3, 5}
    assert result.summary[result.summary.measure == "failed_chunks"].estimate.tolist() == [2.0]


@pytest.mark.system
def test_the_replay_line_of_a_plugin_run_runs_as_printed(tmp_path):
    # it lacked plugins=, so replay refused the stored config's plug-in when the line was run as printed
    (tmp_path / "my_broken.py").write_text(  # passes the check at compose (3 samples), fails on a chunk's 100
        "def top(sorted_scores, n):\n"
        "    if len(sorted_scores) > 3:\n"
        "        raise FloatingPointError('my estimator diverged')\n"
        "    return sorted_scores[:, n - 1]\n"
    )
    args = [*FIG1, "budget.B=[5]", "study.reps=200", "study.chunk_reps=100", "runner.n_jobs=1",
            "+estimators.mine._target_=my_broken.top", "hydra.run.dir=run"]
    proc = simstudy(*args, cwd=tmp_path, check=False)
    line = one_line_error(proc, "2 of 2 chunks failed", status=1)
    printed = line.split("its traceback: ")[1]
    assert printed.startswith("simstudy replay run_dir=") and printed.endswith(" plugins=my_broken.top")
    replayed = simstudy(*printed.split()[1:], cwd=tmp_path, check=False, subprocess_=True)
    assert replayed.returncode == 1 and "Traceback (most recent call last)" in replayed.stderr
    assert replayed.stderr.strip().endswith("FloatingPointError: my estimator diverged")
