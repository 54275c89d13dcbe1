"""Run directories under ``overwrite=true`` and sweeps (issue 25, a hostile probe pass): the earlier results never
leave the run directory (a ``previous`` that is a symlink is refused), a sweep's own files are moved aside as its
jobs' are, a sweep job's refusal names the key that gives it a new directory, and the "wrote ..." line lists only
what the run wrote."""

import os
import re
from pathlib import Path

import pytest
from _cli import one_line_error, simstudy

from simstudy.engine import identity as _identity

pytestmark = pytest.mark.usefixtures("forget_plugins")  # tests/conftest.py: my_* modules forgotten after

SCORES = "score\n" + "\n".join(f"{x:.3f}" for x in (0.61, 0.72, 0.55, 0.69, 0.80, 0.58, 0.66, 0.74, 0.63, 0.70,
                                                      0.52, 0.77, 0.68, 0.59, 0.71, 0.65)) + "\n"
# A tiny study of the file's scores (about a second a job).
STUDY = ["distribution=file", "distribution.path=s.csv", "study.reps=40", "study.chunk_reps=20",
         "runner.progress=false", "runner.n_jobs=1", "study.save_replicates=false"]
SWEEP = ["-m", *STUDY, "hydra.sweep.dir=sw", "budget.B=5,10"]
SWEEP_FILES = ("multirun.yaml", "summary.parquet", "summary.csv", "figure.png", "figure.pdf")


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symlinks not followed), by relative path, with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def edit(path: Path) -> None:
    """One byte changed: a score's last digit."""
    path.write_text(path.read_text().replace("0.610", "0.611", 1))


def curve_run(tmp_path: Path) -> Path:
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy("curve", "data=s.csv", "hydra.run.dir=E9", cwd=tmp_path)
    return tmp_path / "E9"


# --- 1. nothing leaves the run directory ---------------------------------------------------------------------

def test_overwrite_refuses_a_previous_that_is_a_symlink_out_of_the_run_directory(tmp_path):
    run = curve_run(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (run / "previous").symlink_to(outside, target_is_directory=True)  # as in a directory someone sent
    before = files_of(run)
    line = one_line_error(simstudy("curve", "data=s.csv", "hydra.run.dir=E9", "overwrite=true", cwd=tmp_path,
                                   check=False), "previous is a symlink")
    assert "inside the run directory" in line
    assert list(outside.iterdir()) == []  # nothing went through the link
    assert files_of(run) == before and (run / "previous").is_symlink()


def test_overwrite_refuses_a_previous_that_is_a_file(tmp_path):
    run = curve_run(tmp_path)
    (run / "previous").write_text("my notes on the earlier run\n")
    before = files_of(run)
    one_line_error(simstudy("curve", "data=s.csv", "hydra.run.dir=E9", "overwrite=true", cwd=tmp_path, check=False),
                   "previous is not a directory")
    assert files_of(run) == before


def test_a_time_stamped_name_taken_by_a_symlink_is_skipped_not_followed(tmp_path, monkeypatch):
    run = curve_run(tmp_path)
    monkeypatch.setattr(_identity.time, "strftime", lambda fmt, t: "20260101T000000Z")
    (run / "previous").mkdir()
    (run / "previous" / "20260101T000000Z").symlink_to(tmp_path / "outside")  # dangling: mkdir would fail on it
    moved = _identity.move_aside(run)
    assert moved == run / "previous" / "20260101T000000Z-1" and not moved.is_symlink()
    assert not (tmp_path / "outside").exists() and (moved / "curves.csv").is_file()


def test_an_output_that_is_a_symlink_is_moved_as_the_link(tmp_path):
    run = curve_run(tmp_path)
    (run / "curves.csv").unlink()
    (run / "curves.csv").symlink_to(tmp_path / "gone.csv")  # dangling: its target is not there
    moved = _identity.move_aside(run)
    assert (moved / "curves.csv").is_symlink() and not (tmp_path / "gone.csv").exists()


# --- 2. and 3. a sweep under overwrite=true, and a sweep job's refusal -----------------------------------------

@pytest.mark.system  # sweeps end to end, run twice
def test_overwrite_on_a_sweep_moves_the_sweep_s_own_files_aside_too(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*SWEEP, cwd=tmp_path)
    sw = tmp_path / "sw"
    old = {name: (sw / name).read_bytes() for name in SWEEP_FILES}  # all five were written
    edit(tmp_path / "s.csv")
    simstudy(*SWEEP, "overwrite=true", cwd=tmp_path)
    (moved,) = (sw / "previous").iterdir()
    assert {name: (moved / name).read_bytes() for name in SWEEP_FILES} == old
    assert (sw / "summary.parquet").read_bytes() != old["summary.parquet"]  # the new sweep's, from the edited data
    assert all((sw / name).is_file() for name in SWEEP_FILES)


@pytest.mark.system  # issue 34: a sweep whose settings changed was refused as "holds another sweep"
def test_overwrite_on_a_sweep_with_other_settings_moves_the_earlier_sweep_aside(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*SWEEP, cwd=tmp_path)
    sw = tmp_path / "sw"
    old = {name: (sw / name).read_bytes() for name in SWEEP_FILES}
    line = one_line_error(simstudy(*SWEEP, "seed=7", cwd=tmp_path, check=False), "holds another sweep")
    assert "add overwrite=true to move the earlier sweep's files aside" in line
    simstudy(*SWEEP, "seed=7", "overwrite=true", cwd=tmp_path)
    (moved,) = (sw / "previous").iterdir()
    assert {name: (moved / name).read_bytes() for name in SWEEP_FILES} == old
    assert "seed=7" in (sw / "multirun.yaml").read_text()
    assert (sw / "summary.parquet").read_bytes() != old["summary.parquet"]  # the new seed's
    jobs = sorted(p.name for p in moved.iterdir() if p.is_dir())  # the earlier jobs' directories moved too
    assert len(jobs) == 2 and all((moved / job / "summary.parquet").is_file() for job in jobs)
    now = sorted(p.name for p in sw.iterdir() if p.is_dir() and p.name != "previous")
    assert len(now) == 2 and all("seed=7" in job for job in now)  # only this sweep's jobs at the top


@pytest.mark.system
def test_a_refused_sweep_job_names_hydra_sweep_dir_as_the_fix(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*SWEEP, cwd=tmp_path)
    before = files_of(tmp_path / "sw")
    edit(tmp_path / "s.csv")
    line = one_line_error(simstudy(*SWEEP, cwd=tmp_path, check=False), "distribution file s.csv changed")
    assert "hydra.sweep.dir=NEW" in line and "hydra.run.dir" not in line and "overwrite=true" in line
    assert files_of(tmp_path / "sw") == before


@pytest.mark.system
def test_a_sweep_with_a_symlinked_previous_is_refused_before_anything_moves(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*SWEEP, cwd=tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "sw" / "previous").symlink_to(outside, target_is_directory=True)
    before = files_of(tmp_path / "sw")
    line = one_line_error(simstudy(*SWEEP, "overwrite=true", cwd=tmp_path, check=False), "previous is a symlink")
    assert "hydra.sweep.dir=NEW" in line
    assert list(outside.iterdir()) == [] and files_of(tmp_path / "sw") == before


# --- issue 34: no stale results beside new ones ------------------------------------------------------------------

def top(run: Path) -> list[str]:
    return sorted(p.name for p in run.iterdir() if not p.name.startswith("."))


@pytest.mark.slow  # two tiny studies: about 2 s
def test_a_rerun_moves_aside_the_files_it_no_longer_writes_and_keeps_the_user_s(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*STUDY, "budget.B=5", "runner.figures=[svg,png]", "hydra.run.dir=run", cwd=tmp_path)
    run = tmp_path / "run"
    svg = (run / "figure.svg").read_bytes()
    (run / "notes.md").write_text("mine\n")
    proc = simstudy(*STUDY, "budget.B=5", "study.reps=60", "hydra.run.dir=run", cwd=tmp_path)  # figures: png only
    assert "moved figure.svg, written by an earlier run and not by this one" in proc.stdout
    (moved,) = (run / "previous").iterdir()
    assert top(moved) == ["figure.svg"] and (moved / "figure.svg").read_bytes() == svg  # moved, not lost
    assert "figure.svg" not in top(run) and {"figure.png", "notes.md", "summary.parquet"} <= set(top(run))
    proc = simstudy(*STUDY, "budget.B=5", "study.reps=60", "hydra.run.dir=run", cwd=tmp_path)  # the same again
    assert "written by an earlier run" not in proc.stdout and len(list((run / "previous").iterdir())) == 1


@pytest.mark.slow
def test_overwrite_moves_every_file_the_earlier_run_wrote(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    simstudy(*STUDY, "budget.B=5", "runner.figures=[svg]", "hydra.run.dir=run", cwd=tmp_path)
    run = tmp_path / "run"
    (run / "notes.md").write_text("mine\n")
    earlier = set(top(run)) - {"notes.md"}
    assert "figure.svg" in earlier
    edit(tmp_path / "s.csv")
    simstudy(*STUDY, "budget.B=5", "hydra.run.dir=run", "overwrite=true", cwd=tmp_path)
    (moved,) = (run / "previous").iterdir()
    assert set(top(moved)) == earlier  # figure.svg with the rest: nothing of the earlier run left at the top
    assert "figure.svg" not in top(run) and (run / "notes.md").read_text() == "mine\n"


@pytest.mark.slow  # two designs of one cell each
def test_overwrite_on_a_design_moves_its_cells_and_nested_loop_aside(tmp_path):
    import simstudy as api

    three = "+design={distribution.sd: [0.05], budget.B: [4], distribution.mean: [0.6]}"
    api.run("dodge2021_fig1", ["study.reps=40", "study.chunk_reps=40", "runner.progress=false", three],
            out_dir=tmp_path / "d")
    run = tmp_path / "d"
    (old_cell,) = [p.name for p in run.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert (run / "nested_loop.png").is_file()
    one = "+design={budget.B: [6]}"
    api.run("dodge2021_fig1", ["study.reps=40", "study.chunk_reps=40", "runner.progress=false", one, "overwrite=true"],
            out_dir=run)
    (moved,) = (run / "previous").iterdir()
    assert {"nested_loop.png", old_cell} <= set(top(moved))
    cells = [p.name for p in run.iterdir() if p.is_dir() and p.name not in ("previous",)]
    assert cells == ["budget.B=6"] and not (run / "nested_loop.png").exists()


def test_move_aside_moves_what_the_marker_lists_and_nothing_else(tmp_path):
    from simstudy.engine import claims

    run = tmp_path / "run"
    claim = claims.claim_run_dir(run)
    for name in ("zip.parquet", "zip.png", "figure.svg", "notes.md"):
        (run / name).write_text(name)
    (run / "cell").mkdir()
    _identity.note_outputs(run, ["zip.parquet", "zip.png", "figure.svg", "cell", "../escape", ".hidden", "previous"])
    claim.release()
    assert _identity.outputs(run) == {"zip.parquet", "zip.png", "figure.svg", "cell"}  # plain names only
    moved = _identity.move_aside(run)
    assert top(moved) == ["cell", "figure.svg", "zip.parquet", "zip.png"] and top(run) == ["notes.md", "previous"]
    assert _identity.outputs(run) == set()  # the list follows the files


# --- issue 34: a directory simstudy did not create is never written into ---------------------------------------

@pytest.mark.parametrize("run_json", ['{"accuracy": 0.9}\n', '{"fingerprint": "f", "environment": {}}\n', None],
                         ids=["another-tool", "no-simstudy-package", "fifo"])
def test_another_tools_config_and_run_json_are_not_a_simstudy_run_directory(tmp_path, run_json):
    (tmp_path / "s.csv").write_text(SCORES)
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.yaml").write_text("lr: 0.1\nepochs: 30\n")
    if run_json is None:
        os.mkfifo(other / "run.json")  # never opened: a read would block
    else:
        (other / "run.json").write_text(run_json)
    before = sorted(os.listdir(other)), (other / "config.yaml").read_bytes()
    line = one_line_error(simstudy("curve", "data=s.csv", "hydra.run.dir=other", cwd=tmp_path, check=False),
                          f"{other} is not empty and is not a simstudy run directory (it holds config.yaml, run.json)")
    assert "choose another run directory" in line
    assert (sorted(os.listdir(other)), (other / "config.yaml").read_bytes()) == before  # nothing written there


@pytest.mark.parametrize("mine", [{"summary.csv": "my summary\n", "notes.md": "mine\n"},
                                  {"multirun.yaml": "hydra:\n  sweep:\n    subdir: ${hydra.job.num}\n"}],
                         ids=["a-user-s-files", "another-hydra-app-s-sweep"])
def test_a_sweep_into_a_directory_that_is_not_simstudy_s_is_refused_before_hydra_writes(tmp_path, mine):
    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "sw").mkdir()
    for name, text in mine.items():
        (tmp_path / "sw" / name).write_text(text)
    before = files_of(tmp_path / "sw")
    line = one_line_error(simstudy(*SWEEP, cwd=tmp_path, check=False),
                          f"sw is not empty and is not a simstudy sweep directory (it holds {', '.join(sorted(mine))})")
    assert "hydra.sweep.dir=NEW" in line
    assert files_of(tmp_path / "sw") == before and sorted(os.listdir(tmp_path / "sw")) == sorted(mine)


# --- 4. the "wrote ..." line ------------------------------------------------------------------------------------

def wrote(stdout: str) -> list[str]:
    (listed,) = re.findall(r"(?:^|\] - )wrote (.*) to ", stdout, re.MULTILINE)  # with or without Hydra's prefix
    return listed.split(", ")


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_the_wrote_line_lists_only_what_the_run_wrote_not_the_user_s_files(tmp_path):
    run = curve_run(tmp_path)
    (run / "notes.md").write_text("why this run\n")
    (run / "figure.svg").write_text("<svg/>\n")
    proc = simstudy("curve", "data=s.csv", "hydra.run.dir=E9", "overwrite=true", cwd=tmp_path)
    outputs = ["CURVE.md", "curves.csv", "curves.parquet", "figure.pdf", "figure.png", "report.html", "run.json"]
    assert wrote(proc.stdout) == sorted(["config.yaml", *outputs])
    # the same run again: its tables, figures and pages rewritten; config.yaml, the same, is left as it is
    proc = simstudy("curve", "data=s.csv", "hydra.run.dir=E9", cwd=tmp_path)
    assert wrote(proc.stdout) == outputs


@pytest.mark.system
def test_collect_lists_only_what_it_wrote(tmp_path):
    (tmp_path / "s.csv").write_text(SCORES)
    for i in (1, 2):
        simstudy(*STUDY, "budget.B=5", f"runner.shard={i}/2", "hydra.run.dir=run", cwd=tmp_path)
    (tmp_path / "run" / "notes.md").write_text("two shards, one per node\n")
    proc = simstudy("collect", "run_dir=run", cwd=tmp_path, subprocess_=True)  # its log is set up on stdout
    assert "notes.md" not in wrote(proc.stdout) and "summary.parquet" in wrote(proc.stdout)
