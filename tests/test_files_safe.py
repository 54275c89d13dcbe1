"""Nothing of a user's is lost or overwritten: each case runs the `simstudy` command and proves, with the SHA-256
of every file and the listing of every directory before and after, that what the user had is still there.

Run directories are claimed (a lock with the owner's pid, a marker saying "simstudy's") before anything is
written; a directory holding someone else's files is refused; a refused run removes only the directories it
created; the reproduction report keeps the sections it did not regenerate and never overwrites a file that
simstudy did not write.
"""

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from _cli import FIG1, clean_env, one_line_error, simstudy

from simstudy.engine import claims

SMALL = [*FIG1, "study.reps=200", "study.chunk_reps=100", "budget.B=5"]


def tree(root: Path) -> dict:
    """Every file under ``root`` with its SHA-256, and every directory (as None)."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def user_files(root: Path) -> dict:
    (root / "figure.png").write_bytes(b"\x89PNG my own figure")
    (root / "summary.csv").write_text("mine,1\n")
    (root / "run.json").write_text('{"mine": true}\n')
    return tree(root)


# --- refused runs remove only what they created ---------------------------------------------------------------

@pytest.mark.parametrize("run_dir", ["results/keep", "results/keep/new/run", "mydir", "outputs/x/../new"])
def test_a_refused_run_keeps_directories_that_existed_before_it(tmp_path, run_dir):
    for d in ("results/keep", "mydir", "outputs"):
        (tmp_path / d).mkdir(parents=True)
    before = tree(tmp_path)
    proc = simstudy(*SMALL, "seed=-1", f"hydra.run.dir={run_dir}", cwd=tmp_path, check=False)
    one_line_error(proc, "seed must be an integer >= 0, got -1")
    assert tree(tmp_path) == before  # results/, results/keep/, mydir/, outputs/ kept; new/, run/, x/ gone


def test_a_refused_run_into_the_default_directory_keeps_an_existing_empty_outputs(tmp_path):
    (tmp_path / "outputs").mkdir()
    proc = simstudy(*SMALL, "seed=-1", cwd=tmp_path, check=False)
    one_line_error(proc, "seed must be an integer >= 0, got -1")
    assert tree(tmp_path) == {"outputs": None}


def test_a_study_name_is_a_name_not_a_path(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    proc = simstudy(*SMALL, "study.name=../../escaped", cwd=work, check=False)
    one_line_error(proc, "study.name must be a name (letters, digits, '_', '-', '.'; not starting with '.'), "
                         "got '../../escaped'")
    assert tree(tmp_path) == {"work": None}  # neither work/outputs nor tmp_path/escaped


# --- a directory that is not simstudy's is refused before anything is written ---------------------------------

@pytest.mark.parametrize("command", [SMALL, ["curve", "data=reuters_hedwig"], ["bands", "data=reuters_hedwig"]],
                         ids=["study", "curve", "bands"])
def test_a_run_directory_holding_a_users_files_is_refused(tmp_path, command):
    before = user_files(tmp_path)
    proc = simstudy(*command, "hydra.run.dir=.", cwd=tmp_path, check=False)
    one_line_error(proc, f"{tmp_path} is not empty and is not a simstudy run directory (it holds figure.png, "
                         "run.json, summary.csv); choose another run directory")
    assert tree(tmp_path) == before


def test_the_root_directory_is_refused(tmp_path, monkeypatch):
    # A guard, so that a regression fails this test without writing into / (these tests may run as root):
    # creating anything directly under / raises, as it would for a normal user.
    import tempfile

    def guarded(real, path_of):
        def call(*args, **kwargs):
            path = os.path.abspath(path_of(*args, **kwargs))
            if os.path.dirname(path) == "/" and path != "/":
                raise PermissionError(13, "test guard: no writes into /", path)
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(os, "open", guarded(os.open, lambda path, *a, **k: path))
    monkeypatch.setattr(os, "mkdir", guarded(os.mkdir, lambda path, *a, **k: path))
    monkeypatch.setattr(tempfile, "mkstemp", guarded(tempfile.mkstemp, lambda *a, dir=".", **k: os.path.join(dir, "x")))
    before = sorted(os.listdir("/"))
    proc = simstudy(*SMALL, "hydra.run.dir=/", cwd=tmp_path, check=False)
    one_line_error(proc, "/ is not empty and is not a simstudy run directory")
    assert sorted(os.listdir("/")) == before and tree(tmp_path) == {}


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_a_run_directory_of_an_earlier_version_is_resumed(tmp_path):
    simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    (tmp_path / "run" / claims.RUN_MARKER).unlink()  # as an earlier simstudy left it: config.yaml, run.json, chunks/
    summary = (tmp_path / "run" / "summary.parquet").read_bytes()
    proc = simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    assert "2 chunks (2 resumed)" in proc.stdout
    assert (tmp_path / "run" / claims.RUN_MARKER).is_file()
    assert (tmp_path / "run" / "summary.parquet").read_bytes() == summary


# --- one run at a time in a directory ---------------------------------------------------------------------------

def _start(pid: int) -> str | None:
    return claims._process_start(pid)


@pytest.mark.system
def test_a_live_runs_lock_refuses_a_second_run_and_a_dead_ones_is_taken_over(tmp_path):
    simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock = tmp_path / "run" / claims.LOCK_NAME
        lock.write_text(json.dumps({"pid": sleeper.pid, "host": socket.gethostname(), "start": _start(sleeper.pid),
                                    "since": "2024-01-01 00:00:00", "token": "t"}))
        before = tree(tmp_path)
        proc = simstudy(*SMALL, "study.reps=300", "hydra.run.dir=run", cwd=tmp_path, check=False)
        one_line_error(proc, f"run is in use by another simstudy run (pid {sleeper.pid} on {socket.gethostname()}, "
                             "since 2024-01-01 00:00:00); wait for it to finish")
        assert tree(tmp_path) == before  # config.yaml not rewritten, the lock still the other run's
    finally:
        sleeper.kill()
        sleeper.wait()
    proc = simstudy(*SMALL, "study.reps=300", "hydra.run.dir=run", cwd=tmp_path)
    assert f"took over the lock of a simstudy run that is no longer running (pid {sleeper.pid}" in proc.stdout
    assert not lock.exists()
    assert "reps: 300" in (tmp_path / "run" / "config.yaml").read_text()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["study"]["reps"] == 300


LONG = [*FIG1, "budget.B=100", "study.reps=400000", "study.chunk_reps=2000", "study.save_replicates=false",
        "runner.n_jobs=1"]


def _wait(predicate, proc, timeout=120):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.mark.system
def test_two_runs_into_one_directory_one_is_refused_and_sigterm_cleans_up(tmp_path):
    run_dir = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-m", "simstudy.cli", *LONG, "hydra.run.dir=run"], cwd=tmp_path,
                             env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: len(list(run_dir.rglob("*.npz"))) >= 2, first)
        # the second run, with more replicates (which alone would be allowed), is refused while the first runs
        proc = simstudy(*LONG, "study.reps=600000", "hydra.run.dir=run", cwd=tmp_path, check=False)
        one_line_error(proc, f"run is in use by another simstudy run (pid {first.pid} on ")
        assert "reps: 400000" in (run_dir / "config.yaml").read_text()
        first.send_signal(signal.SIGTERM)  # a batch system's cancel: the same clean-up as Ctrl-C
        first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode != 0, "the first run finished before it could be stopped"
    assert not (run_dir / claims.LOCK_NAME).exists()  # released
    assert not list(run_dir.rglob("*.part")) and not (run_dir / "summary.parquet").exists()
    assert len(list(run_dir.rglob("*.npz"))) >= 2  # finished chunks kept for the resume


@pytest.mark.system
def test_sigterm_right_after_the_claim_leaves_no_directory(tmp_path):
    run_dir = tmp_path / "a" / "run"
    proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", *LONG, f"hydra.run.dir={run_dir}"], cwd=tmp_path,
                            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: (run_dir / claims.LOCK_NAME).exists(), proc)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    if run_dir.exists():  # the signal came after config.yaml was written: that stays, the lock does not
        assert not (run_dir / claims.LOCK_NAME).exists() and (run_dir / "config.yaml").is_file(), tree(tmp_path)
    else:
        assert tree(tmp_path) == {}  # a/ and a/run/ were this run's: both gone


# --- config.yaml always describes the results beside it -------------------------------------------------------

@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_a_refused_run_does_not_rewrite_config_yaml(tmp_path):
    simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    simstudy(*SMALL, "seed=4", "hydra.run.dir=other", cwd=tmp_path)
    # chunks of another configuration in the run directory (as a copy gone wrong would leave them)
    (other,) = (tmp_path / "other" / "chunks").iterdir()
    os.rename(other, tmp_path / "run" / "chunks" / other.name)
    before = tree(tmp_path / "run")
    proc = simstudy(*SMALL, "study.reps=300", "hydra.run.dir=run", cwd=tmp_path, check=False)
    one_line_error(proc, "run holds results of a different configuration")
    assert tree(tmp_path / "run") == before  # config.yaml still says study.reps=200, like run.json


def test_collect_never_resolves_interpolations_in_a_stored_config(tmp_path):
    simstudy(*SMALL, "runner.shard=1/1", "hydra.run.dir=run", cwd=tmp_path)
    stored = tmp_path / "run" / "config.yaml"
    stored.write_text(stored.read_text().replace("name: dodge2021_fig1", "name: ${oc.env:SIMSTUDY_SECRET}"))
    before = tree(tmp_path)
    proc = simstudy("collect", "run_dir=run", cwd=tmp_path, check=False, env=clean_env(SIMSTUDY_SECRET="hunter2"))
    one_line_error(proc, "run/config.yaml: study.name='${oc.env:SIMSTUDY_SECRET}' is an interpolation, which "
                         "simstudy never writes")
    assert "hunter2" not in proc.stdout + proc.stderr
    assert tree(tmp_path) == before


# --- what a killed run leaves, and what a rerun rewrites -------------------------------------------------------

@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_stray_temporary_files_of_a_killed_run_are_removed_by_the_next_run(tmp_path):
    simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    cell = next((tmp_path / "run" / "chunks").glob("*/cell-*"))
    strays = [cell / ".chunk-000000-r100.k2j4h5g6.npz.part", tmp_path / "run" / ".summary.abc_1234.parquet.part",
              tmp_path / "run" / ".config.q1w2e3r4.yaml.part"]
    for p in strays:
        p.write_bytes(b"half a file")
    (tmp_path / "run" / "notes.part").write_text("mine")  # not simstudy's temporary pattern: kept
    proc = simstudy(*SMALL, "hydra.run.dir=run", cwd=tmp_path)
    assert "removed 3 temporary file(s) left by an interrupted run" in proc.stdout
    assert not any(p.exists() for p in strays)
    assert (tmp_path / "run" / "notes.part").read_text() == "mine"


@pytest.mark.system
def test_a_rerun_that_computes_nothing_does_not_rewrite_replicates(tmp_path):
    args = [*SMALL, "study.save_replicates=true", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    path = tmp_path / "run" / "replicates.parquet"
    first = (path.stat().st_mtime_ns, path.read_bytes())
    simstudy(*args, cwd=tmp_path)
    assert (path.stat().st_mtime_ns, path.read_bytes()) == first  # the same file, not written again
    path.write_bytes(path.read_bytes())  # touched by someone else: written again (the record no longer matches)
    touched = path.stat().st_mtime_ns
    simstudy(*args, cwd=tmp_path)
    assert path.stat().st_mtime_ns != touched and path.read_bytes() == first[1]
    simstudy(*args, "study.reps=300", cwd=tmp_path)  # more replicates: a new file
    assert pd.read_parquet(path).replicate.nunique() == 300


# --- the reproduction report -----------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.system
def test_reproduce_only_updates_its_section_and_keeps_the_others(tmp_path):
    """As in the repository: the shipped report, its figures and its marker; one entry rerun (its run directory
    is new), the sixteen others kept as they were, their figures untouched."""
    import shutil

    from simstudy import catalogue
    from simstudy.commands import reproduction_page

    shutil.copy(REPO / "REPRODUCTION.md", tmp_path)
    shutil.copy(REPO / reproduction_page.MARKER, tmp_path)
    shutil.copytree(REPO / "reproduction", tmp_path / "reproduction")
    sections, before = reproduction_page.read_report(tmp_path), tree(tmp_path)
    lines = len((tmp_path / "REPRODUCTION.md").read_text().splitlines())
    simstudy("reproduce", "only=dodge2019_fig1", "n_jobs=1", cwd=tmp_path, timeout=240)
    after = reproduction_page.read_report(tmp_path)
    assert list(after) == list(sections) and len(sections) == len(catalogue.load_catalogue())
    assert {i for i in sections if after[i] != sections[i]} <= {"dodge2019_fig1"}  # only its wall time may change
    assert abs(len((tmp_path / "REPRODUCTION.md").read_text().splitlines()) - lines) <= 2
    now = tree(tmp_path)
    changed = {name for name, digest in before.items() if now.get(name) != digest}
    assert changed <= {"REPRODUCTION.md", reproduction_page.MARKER, "reproduction/dodge2019_fig1.png"}
    # and a second run trusts what it wrote: the report and its figure are simstudy's, unchanged since
    simstudy("reproduce", "only=dodge2019_fig1", "n_jobs=1", cwd=tmp_path, timeout=240)


def test_reproduce_out_refuses_a_users_report_or_figure(tmp_path):
    mine = tmp_path / "mine"
    (mine / "reproduction").mkdir(parents=True)
    (mine / "REPRODUCTION.md").write_text("# my own notes\n")
    before = tree(tmp_path)
    proc = simstudy("reproduce", "only=dodge2019_fig3", "out=mine", cwd=tmp_path, check=False)
    one_line_error(proc, "mine/REPRODUCTION.md was not written by simstudy reproduce (or was changed since): move it "
                         "away or choose another out=DIR")
    assert tree(tmp_path) == before

    (mine / "REPRODUCTION.md").unlink()
    (mine / "reproduction" / "lourie_fig1_reuters.png").write_bytes(b"my figure")
    before = tree(tmp_path)
    proc = simstudy("reproduce", "only=lourie_fig1_reuters", "out=mine", cwd=tmp_path, check=False)
    one_line_error(proc, "mine/reproduction/lourie_fig1_reuters.png was not written by simstudy reproduce")
    assert tree(tmp_path) == before  # refused before running anything: no outputs/ either


def test_reproduce_out_rewrites_only_its_own_unchanged_files(tmp_path):
    from simstudy.commands import reproduction_page

    args = ["reproduce", "only=dodge2019_fig3", "out=rep"]  # results without public data: nothing to run
    simstudy(*args, cwd=tmp_path)
    report = tmp_path / "rep" / "REPRODUCTION.md"
    assert "**Verdict: no data.**" in report.read_text() and (tmp_path / "rep" / reproduction_page.MARKER).is_file()
    simstudy(*args, cwd=tmp_path)  # its own file, unchanged since: rewritten
    report.write_text(report.read_text() + "\nMy note.\n")
    before = tree(tmp_path)
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "rep/REPRODUCTION.md was not written by simstudy")
    assert tree(tmp_path) == before


def test_a_quick_report_never_replaces_the_paper_scale_one(tmp_path):
    import shutil

    from simstudy.commands import reproduction_page

    shutil.copy(REPO / "REPRODUCTION.md", tmp_path)
    shutil.copy(REPO / reproduction_page.MARKER, tmp_path)
    before = tree(tmp_path)
    proc = simstudy("reproduce", "--quick", "only=dodge2019_fig3", "out=.", cwd=tmp_path, check=False)
    one_line_error(proc, "REPRODUCTION.md is the report at paper-scale settings; write the other one to another "
                         "out=DIR")
    assert tree(tmp_path) == before


def test_an_interrupt_during_the_claim_leaves_neither_lock_nor_marker(tmp_path, monkeypatch):
    # SIGTERM becomes KeyboardInterrupt anywhere in the claim (here: while clearing stray temporaries, after the
    # marker was written): the directory must be left as found, so the caller's clean-up can remove it.
    def interrupted(path):
        raise KeyboardInterrupt("signal 15")

    monkeypatch.setattr(claims, "remove_stray_temporaries", interrupted)
    with pytest.raises(KeyboardInterrupt):
        claims.claim_run_dir(tmp_path / "run")
    assert tree(tmp_path / "run") == {}


def test_a_sigterm_while_the_temporary_file_is_being_created_leaves_no_part_file(tmp_path, monkeypatch):
    """SIGTERM (raised as KeyboardInterrupt, as a run does) arriving inside mkstemp, after the temporary file
    exists but before atomic_path knows its name: the signal waits until the name is known, and the file goes."""
    from simstudy import io

    real_mkstemp = tempfile.mkstemp

    def mkstemp_then_sigterm(*args, **kwargs):
        made = real_mkstemp(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # delivered at once unless held
        return made

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    monkeypatch.setattr(io.tempfile, "mkstemp", mkstemp_then_sigterm)
    try:
        with pytest.raises(KeyboardInterrupt), io.atomic_path(tmp_path / "table.csv") as tmp:
            tmp.write_text("a,b\n")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
