"""A run killed with SIGKILL (no clean-up of any kind: the process group dies at once) at several points,
then rerun with the same command, ends with exactly the results of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from _cli import FIG1, clean_env, simstudy

ARGS = [*FIG1, "budget.B=100", "study.reps=120000", "study.chunk_reps=2000", "study.save_replicates=false"]
CHUNKS = 60


def _chunks(run_dir) -> int:
    return len(list((run_dir / "chunks").rglob("*.npz"))) if (run_dir / "chunks").exists() else 0


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


class Run:
    """The study in its own process group (loky workers included), killable as a whole."""

    def __init__(self, run_dir, cwd):
        self.proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", *ARGS, "runner.n_jobs=2",
                                      f"hydra.run.dir={run_dir}"], cwd=cwd, env=clean_env(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def kill_when(self, ready, timeout=120) -> bool:
        """SIGKILL the group once ``ready()``; False if the run finished first."""
        deadline = time.monotonic() + timeout
        while not ready() and self.proc.poll() is None:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.005)
        if self.proc.poll() is not None:
            return False
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while not _gone(self.proc.pid):  # the workers die with the group; wait for the kernel to reap them
            assert time.monotonic() < deadline, "processes of the killed run survived"
            time.sleep(0.01)
        return True

    def cleanup(self):
        if not _gone(self.proc.pid):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@pytest.fixture
def runs():
    started = []
    yield lambda *a: started.append(Run(*a)) or started[-1]
    for run in started:
        run.cleanup()


@pytest.mark.system  # processes killed and rerun (CI's system lane)
def test_killed_at_several_points_then_resumed_matches_an_uninterrupted_run(tmp_path, runs):
    run_dir = tmp_path / "killed"
    points = [
        lambda: (run_dir / "config.yaml").exists(),  # before any chunk
        lambda: _chunks(run_dir) >= 20,  # midway (a kill just after the first chunk is the same state: some done)
        lambda: _chunks(run_dir) >= CHUNKS - 2,  # near the end
    ]
    killed = [runs(run_dir, tmp_path).kill_when(ready) for ready in points]
    assert all(killed), f"a run finished before its kill point: {killed}"
    assert not (run_dir / "summary.parquet").exists()
    done = _chunks(run_dir)

    simstudy(*ARGS, f"hydra.run.dir={run_dir}", cwd=tmp_path)  # the same command resumes
    report = json.loads((run_dir / "run.json").read_text())["runner"]
    assert report["resumed"] == done and report["computed"] == CHUNKS - done and not report["warnings"]

    simstudy(*ARGS, f"hydra.run.dir={tmp_path / 'reference'}", cwd=tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(run_dir / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "reference" / "summary.parquet"), check_exact=True)
