"""Resource bounds and process safety (issue 25): a plug-in's ``sys.exit`` never ends the run silently nor the
caller's program; sizes that cannot fit are refused by their estimate before anything is allocated; long
kernels are vectorised or refused at once; concurrent Python API runs; no worker outlives a killed run."""

import os
import textwrap

import pytest
from _cli import FIG1, one_line_error
from _cli import simstudy as cli

import simstudy

TINY = [*FIG1, "budget.B=[6]", "study.reps=400", "study.chunk_reps=100"]

EXITING = """
import sys

def later(sorted_scores, n):
    # The start-up check's tiny input (3 samples) passes; every chunk of the run exits, in whichever process runs
    # it (a call counter, once used here, restarts in each loky worker: two workers with two one-call chunks
    # each never exited).
    if sorted_scores.shape[0] > 3:
        sys.exit(0)
    return sorted_scores[:, n - 1]

def at_once(sorted_scores, n):
    sys.exit(3)
"""


def _exiting(tmp_path, module):
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(EXITING))


@pytest.mark.parametrize("backend", ["sequential", pytest.param("loky", marks=pytest.mark.system)])  # loky: a process
def test_a_plugin_calling_sys_exit_mid_run_is_one_line_exit_2(tmp_path, backend):
    module = f"exiting_{backend}"
    _exiting(tmp_path, module)
    proc = cli(*TINY, f"+estimators.e._target_={module}.later", f"runner.backend={backend}", "runner.n_jobs=2",
               "hydra.run.dir=run", cwd=tmp_path, check=False, subprocess_=backend == "loky")
    one_line_error(proc, f"PluginExit: _target_={module}.later: called sys.exit(0)")


def test_a_plugin_calling_sys_exit_in_the_start_up_check_is_one_line_exit_2(tmp_path):
    _exiting(tmp_path, "exiting_check")
    proc = cli(*TINY, "+estimators.e._target_=exiting_check.at_once", "hydra.run.dir=run", cwd=tmp_path,
               check=False)
    one_line_error(proc, "estimators.e._target_=exiting_check.at_once: called sys.exit(3)")
    assert not (tmp_path / "run").exists()


def test_a_plugin_calling_sys_exit_through_the_python_api_raises_a_simstudy_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _exiting(tmp_path, "exiting_api")
    with pytest.raises(simstudy.ConfigError, match=r"exiting_api\.later: called sys\.exit\(0\)"):
        simstudy.run("dodge2021_fig1", ["budget.B=[6]", "study.reps=400", "study.chunk_reps=100",
                                        "runner.progress=false", "runner.backend=sequential",
                                        "+estimators.e._target_=exiting_api.later"], out_dir=tmp_path / "run")
    with pytest.raises(simstudy.ConfigError, match=r"exiting_api\.at_once: called sys\.exit\(3\)"):
        simstudy.compose("dodge2021_fig1", ["+estimators.e._target_=exiting_api.at_once"])


def _address_space(gb):
    """A subprocess's address space capped: an allocation beyond it fails at once instead of filling the
    machine (the unfixed code built a tuple of 1..B here)."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (int(gb * 2**30), int(gb * 2**30)))

    return cap


@pytest.mark.system
def test_a_budget_of_1e9_is_refused_by_its_memory_estimate_before_anything_is_allocated(tmp_path):
    from _cli import clean_env

    proc = cli(*FIG1, "budget.B=1000000000", "hydra.run.dir=run", cwd=tmp_path, check=False, timeout=120,
               env=clean_env(SIMSTUDY_MAX_MEMORY_GB="2"), preexec_fn=_address_space(4))
    one_line_error(proc, "budget.B=1000000000 needs about 4.8e+07 TB (the weight matrices of 3 estimators")
    assert not (tmp_path / "run").exists()


def test_audit_target_k_of_1e12_is_refused_at_once_in_one_line(tmp_path):
    (tmp_path / "s.csv").write_text("score\n" + "\n".join(f"0.{i:02d}" for i in range(10, 58)) + "\n")
    proc = cli("audit", "data=s.csv", "target_k=1000000000000", "hydra.run.dir=run", cwd=tmp_path, check=False,
               timeout=60)
    import math

    from simstudy.studies.audit import SAMPLES_LIMIT

    reach = int(SAMPLES_LIMIT * math.log(2) / -math.log1p(-0.8))  # 1,764 for 4,096 scores
    one_line_error(proc, f"target_k=1000000000000 cannot be bounded with the up to {SAMPLES_LIMIT:,} scores the "
                         f"audit searches: at confidence=0.8 no band bounds the median curve beyond k = {reach:,}")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("method", ["dkw", "ks", "ld_highest_density", "ld_equal_tailed"])
@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.95])
def test_the_target_k_refusal_never_refuses_a_reachable_target(method, confidence):
    """The refusal's bound, n >= k (-ln(1 - confidence)) / ln 2 scores for any band, holds for every method."""
    import math

    from simstudy.studies.audit import samples_needed

    for k in (2, 10):
        assert samples_needed(k, confidence, method) >= k * -math.log1p(-confidence) / math.log(2)


def test_extrapolate_k_max_beyond_exact_budgets_is_one_line(tmp_path):
    (tmp_path / "s.csv").write_text("score\n" + "\n".join(f"0.{i:02d}" for i in range(10, 58)) + "\n")
    proc = cli("extrapolate", "data=s.csv", "k_max=1000000000000000000000", "hydra.run.dir=run", cwd=tmp_path,
               check=False, timeout=60)
    one_line_error(proc, "k_max=1000000000000000000000 is beyond the budgets the extrapolation computes exactly")
    assert not (tmp_path / "run").exists()


@pytest.mark.system  # five whole runs, two pairs racing for Hydra's process-global state
def test_two_python_api_runs_in_two_threads_both_succeed(tmp_path, monkeypatch):
    """Hydra's composition is process-global: the second thread's composition failed ("Could not load
    '_schema/study/evp_accuracy'", "GlobalHydra is already initialized"). Two rounds: the race was lost in
    every round before the fix."""
    import threading

    monkeypatch.chdir(tmp_path)
    args = ["study.reps=100", "budget.B=3", "runner.progress=false"]
    want = simstudy.run("dodge2021_fig1", args, out_dir=tmp_path / "alone").summary
    for round_ in range(2):
        results, errors = {}, []

        def run(i, round_=round_):
            try:
                results[i] = simstudy.run("dodge2021_fig1", args, out_dir=tmp_path / f"r{round_}-{i}").summary
            except BaseException as exc:  # noqa: BLE001 -- any exception in a thread is the failure
                errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == [] and len(results) == 2
        for got in results.values():  # the same numbers as the run alone: the threads shared nothing
            assert got.equals(want)


@pytest.mark.system
def test_bands_on_1e6_scores_are_refused_at_once_with_their_estimated_time_and_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path / "cache"))  # nothing solved before
    (tmp_path / "big.csv").write_text("score\n" + "\n".join(str(i / 1e6) for i in range(1, 1_000_001)) + "\n")
    proc = cli("bands", "data=big.csv", "hydra.run.dir=run", cwd=tmp_path, check=False, timeout=120,
               subprocess_=True)  # bounded: the unfixed command ran for days
    one_line_error(proc, "method=ld_highest_density needs about 4.9 days (the exact intervals for 1,000,000 "
                         "scores, about n^2 work; memory about 256 MB); the limit is 30 min")
    assert not (tmp_path / "run").exists()


def test_the_ld_cost_estimate_is_zero_once_solved_and_one_evaluation_from_disk(tmp_path, monkeypatch):
    import simstudy.engine  # noqa: F401  # installs the disk cache, as every command's start does
    from simstudy.stats import boundary

    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(boundary, "_SOLVED", set())
    solve = boundary.ld_seconds(50, 0.8, "equal_tailed")
    assert solve == pytest.approx(boundary._SOLVE_EVALUATIONS * boundary._NS_PER_N2 * 1e-9 * 50**2)
    boundary.ld_intervals(50, 0.8, "equal_tailed")
    assert boundary.ld_seconds(50, 0.8, "equal_tailed") == 0.0
    boundary._SOLVED.clear()  # another process: the disk entry, read and checked
    assert boundary.ld_seconds(50, 0.8, "equal_tailed") == pytest.approx(solve / boundary._SOLVE_EVALUATIONS)


DELETING = """
import shutil
from pathlib import Path

calls = [0]

def top(sorted_scores, n):
    calls[0] += 1
    if calls[0] == 4:  # the run's second chunk (after two start-up check calls and one chunk): chunks/ goes
        shutil.rmtree(Path({run!r}) / "chunks", ignore_errors=True)
    return sorted_scores[:, n - 1]
"""


def test_chunks_deleted_while_the_run_goes_on_is_one_line_at_summary_time(tmp_path):
    run = tmp_path / "run"
    (tmp_path / "deleting_chunks.py").write_text(textwrap.dedent(DELETING.format(run=str(run))))
    simstudy_args = [*TINY, "+estimators.e._target_=deleting_chunks.top", "runner.backend=sequential",
                     "hydra.run.dir=run"]
    proc = cli(*simstudy_args, cwd=tmp_path, check=False)
    line = one_line_error(proc, "chunks changed during the run (", status=1)
    assert line.endswith("): rerun to recompute")


def _children(pid: int) -> set[int]:
    from pathlib import Path

    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _alive(pid: int) -> bool:
    from pathlib import Path

    try:  # a zombie is dead: only its parent's wait is missing
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.system
def test_a_killed_run_leaves_no_worker_processes_alive(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from _cli import clean_env

    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "simstudy.cli", *FIG1, "study.reps=400000", "study.chunk_reps=2000",
         "runner.n_jobs=2", "runner.backend=loky", "hydra.run.dir=run"],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not list(run.glob("chunks/*/cell-*/*.npz")) and time.monotonic() < deadline:  # workers computing
            time.sleep(0.2)
        workers = _children(proc.pid)
        assert workers and proc.poll() is None
        proc.send_signal(signal.SIGKILL)  # no clean-up runs in the killed process
        proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        from pathlib import Path

        alive = [w for w in workers if _alive(w)]
        assert not alive, [Path(f"/proc/{w}/cmdline").read_bytes()[-60:] for w in alive]  # what lives on
    finally:  # the processes this test started, by their ids
        for pid in [proc.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
