"""The command line's edges (issue 25): run directory names that are injective and safe to type, a key given
twice, values that must be refused in one line, environment errors (a full disk, a file-size limit, a name too
long) in one line, and the newcomer's small things (--version, usage, help)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import FIG1, clean_env, one_line_error, simstudy

from simstudy.cli.args import last_of_each_key
from simstudy.cli.plain import print_notice
from simstudy.config import design_cells
from simstudy.engine import rundir

SAFE = re.compile(r"[A-Za-z0-9._=,+-]+")


# --- run directory names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pair",
    [
        ("data=a/b.csv", "data=a_b.csv"),
        ("data=a b.csv", "data=a_b.csv"),
        ("distribution.params={a: 5, b: 2}", "distribution.params={a:5,b:2}"),
        ("x=a-deadbeef", "x=a" + "-" + "0" * 8),
        ("data=" + "a" * 300, "data=" + "a" * 299),
    ],
    ids=["slash", "space", "braces", "hash-like", "long"],
)
def test_dirname_is_injective_on_pairs_that_collided(pair):
    names = [rundir.dirname(text) for text in pair]
    assert names[0] != names[1], names
    for name in names:
        assert SAFE.fullmatch(name) and len(name) <= 255, name


def test_dirname_keeps_safe_names_and_hashes_the_rest_to_a_typeable_name():
    assert rundir.dirname("") == "default"
    assert rundir.dirname("study.reps=10,seed=1") == "study.reps=10,seed=1"  # readable where already safe
    name = rundir.dirname("distribution.params={a: 5, b: 2}")
    assert re.fullmatch(r"distribution\.params=_a_5,_b_2_-[0-9a-f]{8}", name), name
    assert rundir.dirname("distribution.params={a: 5, b: 2}") == name  # a function of the text: reruns resume


def test_a_design_listing_a_path_and_its_flattened_twin_is_two_cells():
    base = {"seed": 0, "distribution": {"kind": "file", "path": "x.csv"}}
    keys, cells = design_cells({**base, "design": {"distribution.path": ["a/b.csv", "a_b.csv"]}})
    assert keys == ["distribution.path"] and len({name for name, _, _ in cells}) == 2


# --- a key given twice ----------------------------------------------------------------------------------------


def test_last_of_each_key_keeps_the_last_value_in_its_place_with_one_notice(capsys):
    args = ["-m", "study.reps=10", "seed=1", "study.reps=20", "study.reps=30", "+x=1", "x=2", "~y", "--help"]
    assert last_of_each_key(args, print_notice) == ["-m", "seed=1", "study.reps=30", "++x=2", "~y", "--help"]
    out, err = capsys.readouterr()
    assert err == "" and out.splitlines() == [
        "simstudy: note: study.reps given 3 times (study.reps=10 study.reps=20 study.reps=30): the last is used, "
        "study.reps=30",
        "simstudy: note: x given twice (+x=1 x=2): the last is used, x=2",
    ]


@pytest.mark.parametrize(
    ("args", "kept"),
    [(["budget.B=5", "++budget.B=5"], ["++budget.B=5"]), (["++budget.B=5", "budget.B=6"], ["++budget.B=6"]),
     (["+budget.x=5", "+budget.x=6"], ["+budget.x=6"])],
)
def test_a_key_given_twice_with_a_plus_gets_its_note_too(capsys, args, kept):
    # compared as typed, budget.B=5 ++budget.B=5 was no key given twice: no note
    assert last_of_each_key(args, print_notice) == kept
    assert capsys.readouterr().out.startswith("simstudy: note: budget.")


def test_a_key_given_twice_runs_with_the_last_value_in_the_directory_named_after_it(tmp_path):
    proc = simstudy(*FIG1, "study.reps=100", "study.chunk_reps=100", "study.reps=200", cwd=tmp_path)
    assert "study.reps given twice (study.reps=100 study.reps=200): the last is used, study.reps=200" in proc.stdout
    runs = [p.name for p in (tmp_path / "outputs" / "dodge2021_fig1").iterdir()]
    assert runs == ["study.chunk_reps=100,study.reps=200"]
    assert "reps: 200" in (tmp_path / "outputs" / "dodge2021_fig1" / runs[0] / "config.yaml").read_text()


# --- values refused in one line -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["extrapolate", "data=s.csv", "c=1", "c=[1,1]"], "c lists 1 more than once, got [1, 1]"),
        (["curve", "data=s.csv", "target=inf"], "target must be a finite number (a score) or null, got inf"),
        (["audit", "data=s.csv", "bandwidth=1e-12"], "a sensible bandwidth lies between 1e-06 (high - low) = 1e-06"),
    ],
    ids=["c-twice", "target-inf", "bandwidth-tiny"],
)
def test_values_that_mean_nothing_are_refused_in_one_line(tmp_path, args, message):
    (tmp_path / "s.csv").write_text("score\n" + "\n".join(f"0.{i}5" for i in range(1, 10)) + "\n")
    proc = simstudy(*args, cwd=tmp_path, check=False)
    one_line_error(proc, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


def test_a_group_a_command_does_not_have_is_named_as_such(tmp_path):
    # "runner is a value, not a group of keys": curve has no runner key at all
    (tmp_path / "s.csv").write_text("score\n0.1\n0.5\n0.7\n")
    proc = simstudy("curve", "data=s.csv", "runner.progress=false", cwd=tmp_path, check=False)
    one_line_error(proc, "runner.progress is not a key of simstudy curve: it has no runner settings "
                         "(simstudy curve --help lists its keys)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


@pytest.mark.parametrize(
    ("overrides", "streams"),
    [(["distribution.stream=mine"], ["mine"]),
     (["distribution=pair_truncnorm", "distribution.b.stream=mine"], [None, "mine"]),
     (["+distribution.stream=mine", "distribution.stream=yours"], ["yours"])],
    ids=["one", "pair", "added-then-set"],
)
def test_distribution_stream_is_taken_as_the_guides_spell_it(overrides, streams):
    # refused as "not a key" (only +distribution.stream= worked), though the CHANGELOG and own-data guide say so
    import simstudy as api

    config = api.compose("dodge2021_fig1", overrides)
    assert [dict(d.params).get("stream") for d in config.distributions] == streams


# --- paths and the environment: one line, not an OSError traceback ----------------------------------------------


def test_reproduce_out_naming_a_file_or_a_path_through_one_is_refused_before_any_run(tmp_path):
    (tmp_path / "f").write_text("mine")
    for out, message in [
        ("f", "out=f is an existing file, not a directory"),
        ("f/x", "out=f/x lies under f, an existing file"),
        ("d" * 300, "a name on the path is 300 bytes long, longer than the file system allows (255)"),
    ]:
        proc = simstudy("reproduce", "--quick", "only=dodge2021_fig1", f"out={out}", cwd=tmp_path, check=False, timeout=60)
        one_line_error(proc, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"] and (tmp_path / "f").read_text() == "mine"


def test_a_300_character_run_directory_is_one_line(tmp_path):
    (tmp_path / "s.csv").write_text("score\n0.1\n0.2\n0.3\n")
    proc = simstudy("curve", "data=s.csv", f"hydra.run.dir=a/{'d' * 300}/b", cwd=tmp_path, check=False)
    one_line_error(proc, "a name on the path is 300 bytes long")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


@pytest.mark.parametrize(
    "code, status, message",
    [
        (36, 2, "File name too long (a path or a name in it is too long: choose a shorter path)"),  # ENAMETOOLONG
        (20, 2, "Not a directory (a file lies where a directory must be"),  # ENOTDIR
        (27, 1, "File too large"),  # EFBIG
    ],
    ids=["ENAMETOOLONG", "ENOTDIR", "EFBIG"],
)
def test_os_errors_of_the_path_or_the_environment_are_one_line(tmp_path, monkeypatch, code, status, message):
    """Hydra's own mkdir of the run directory fails (a path past PATH_MAX, a file swapped in, a size limit)."""
    import errno
    import os

    assert errno.errorcode[code] in ("ENAMETOOLONG", "ENOTDIR", "EFBIG")
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if "outputs" in self.parts:
            raise OSError(code, os.strerror(code), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    (tmp_path / "s.csv").write_text("score\n0.1\n0.2\n0.3\n")
    proc = simstudy("curve", "data=s.csv", cwd=tmp_path, check=False)
    one_line_error(proc, f"outputs/curve/data=s.csv: {message}", status)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


@pytest.mark.system
def test_a_file_size_limit_is_one_line_not_a_signal(tmp_path):
    """``ulimit -f``: the kernel sends SIGXFSZ, which would kill the process mid-write; simstudy ignores it, so the
    write raises EFBIG, reported in one line (exit 1), and the chunk file is not left half-written."""
    resource = pytest.importorskip("resource")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    # replicates kept: a chunk of 100 is then 72 KB, the first file over the limit
    args = [*FIG1, "study.reps=200", "study.chunk_reps=100", "runner.n_jobs=1", "study.save_replicates=true",
            "hydra.run.dir=run"]
    proc = subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=tmp_path, env=clean_env(),
                          preexec_fn=limit, capture_output=True, text=True, timeout=120)
    one_line_error(proc, "chunk-000000-r100.npz: File too large", 1)
    assert not list((tmp_path / "run").rglob("*.npz"))


@pytest.mark.parametrize("command", [[*FIG1, "study.reps=20"], ["curve", "data=s.csv"]], ids=["study", "curve"])
def test_a_bad_mplbackend_is_one_line_naming_the_variable_before_any_run(tmp_path, monkeypatch, command):
    # matplotlib raised "Key backend: ... is not a valid value" as a traceback when the figure was drawn, after
    # the run; matplotlib is already imported here, so the check cannot rely on its import alone
    (tmp_path / "s.csv").write_text("score\n0.1\n0.5\n0.7\n")
    monkeypatch.setenv("MPLBACKEND", "no_such_backend")
    proc = simstudy(*command, "hydra.run.dir=run", cwd=tmp_path, check=False)
    one_line_error(proc, "MPLBACKEND='no_such_backend' is not a matplotlib backend: unset it")
    assert not (tmp_path / "run").exists()


# --- sweeps keep their frames ---------------------------------------------------------------------------------


@pytest.mark.system
def test_a_second_sweep_into_the_same_directory_is_refused_and_the_first_keeps_its_frame(tmp_path):
    first = ["-m", *FIG1, "study.reps=100", "seed=43", "budget.B=5,6"]
    simstudy(*first, cwd=tmp_path)
    sweep_dir = tmp_path / "outputs" / "multirun" / "dodge2021_fig1"
    files = {p.relative_to(sweep_dir): p.read_bytes() for p in sweep_dir.rglob("*") if p.is_file()}
    assert (sweep_dir / "summary.parquet").is_file()
    proc = simstudy("-m", *FIG1, "study.reps=100", "seed=43", "distribution.sd=0.05,0.1", cwd=tmp_path, check=False)
    line = one_line_error(proc, "outputs/multirun/dodge2021_fig1 holds another sweep (budget.B=5,6 ")
    own = line.split("hydra.sweep.dir=")[1]  # the directory it proposes: free, and typeable
    assert SAFE.fullmatch(own.rpartition("/")[2]) and not (tmp_path / own).exists()
    after = {p.relative_to(sweep_dir): p.read_bytes() for p in sweep_dir.rglob("*") if p.is_file()}
    assert after == files  # nothing replaced, nothing added
    again = simstudy(*first, "runner.n_jobs=1", cwd=tmp_path)  # the same sweep (other runner settings): resumes
    assert "holds another sweep" not in again.stderr and (sweep_dir / "summary.parquet").is_file()
    proc = simstudy("-m", *FIG1, "study.reps=100", "seed=43", "distribution.sd=0.05,0.1", f"hydra.sweep.dir={own}",
                    cwd=tmp_path)
    assert (tmp_path / own / "summary.parquet").is_file()  # its own frame, beside the first sweep's
    assert (sweep_dir / "summary.parquet").read_bytes() == files[Path("summary.parquet")]


# --- the newcomer's small things --------------------------------------------------------------------------------


def test_version_is_simstudys_not_hydras(tmp_path):
    from simstudy import __version__

    for args in (["--version"], ["curve", "--version"]):
        proc = simstudy(*args, cwd=tmp_path)
        assert proc.stdout.strip() == f"simstudy {__version__}" and "Hydra" not in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["curve", "--data", "x.csv"], "'--data' is not an option of simstudy curve: keys are given as key=value, "
                                       "e.g. data=x.csv (simstudy curve --help lists them)"),
        (["bands", "--data=x.csv"], "e.g. data=x.csv (simstudy bands --help lists them)"),
        (["--seed", "3", *FIG1], "'--seed' is not an option of simstudy: keys are given as key=value, e.g. seed=3"),
    ],
    ids=["curve --data x", "bands --data=x", "--seed 3"],
)
def test_a_key_typed_as_a_flag_is_one_line_not_hydras_usage(tmp_path, args, message):
    proc = simstudy(*args, cwd=tmp_path, check=False)
    one_line_error(proc, message)
    assert "usage:" not in proc.stdout + proc.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        ([*FIG1, "study.rep=100"], "study.rep is not a key: did you mean study.reps? the keys there: study.chunk_reps, "
                                   "study.kind, study.max_reps, study.name, study.precision, study.reps, study.save_replicates"),
        (["curve", "data=s.csv", "scal=0.01"], "scal is not a key: did you mean scale? the keys there: compare, data,"),
        ([*FIG1, "seed.x=1"], "seed.x: seed is a value, not a group of keys: set it with seed=..."),
    ],
    ids=["study.rep", "curve scal", "seed.x"],
)
def test_a_mistyped_key_names_the_keys_there_not_hydras_plus_advice(tmp_path, args, message):
    proc = simstudy(*args, cwd=tmp_path, check=False)
    line = one_line_error(proc, message)
    assert "+" not in line and list(tmp_path.iterdir()) == []


def test_a_presets_help_names_every_command_and_no_internal_group(tmp_path):
    out = simstudy("experiment=dodge2021_fig1", "--help", cwd=tmp_path).stdout
    commands = out.split("Commands (each with --help):")[1].split("simstudy --help lists them")[0]
    for command in ("curve", "bands", "audit", "extrapolate", "reproduce", "collect", "replay"):
        assert command in commands, command
    assert "_schema" not in out and "study: band_coverage" in out  # the group users choose, not its stored schema
    head = out.split("== Config (override")[0]  # the header and the groups (the resolved config is YAML's)
    assert [line for line in head.splitlines() if len(line) > 100] == []


def test_reproduce_help_names_where_quick_runs_go():
    from simstudy.cli import usage

    text = " ".join(usage.command_help("reproduce").split())
    assert "with --quick, the runs and REPRODUCTION.md under outputs/reproduce-quick/" in text
    assert "one run per entry under outputs/reproduce/ and REPRODUCTION.md in out= (default: here)" in text


def test_defaults_agree_across_commands():
    from simstudy import registry, schema

    data = [registry.command(c) for c in registry.command_names() if not registry.command(c).plain]
    defaults = {spec.name: schema.defaults(spec.options) for spec in data}
    assert {c: d["xscale"] for c, d in defaults.items() if "xscale" in d} == {"curve": "log", "bands": "log"}
    assert {c: d["n_jobs"] for c, d in defaults.items() if "n_jobs" in d} == {"audit": -1, "extrapolate": -1}


def test_the_plain_commands_say_a_path_too_long_in_one_line(tmp_path):
    long = "d" * 300
    for args in (["collect", f"run_dir={long}"], ["collect", f"sweep_dir={long}"],
                 ["replay", f"run_dir={long}", "chunk=c0/1"]):
        proc = simstudy(*args, cwd=tmp_path, check=False)
        one_line_error(proc, "File name too long (a path or a name in it is too long: choose a shorter path)")
    assert list(tmp_path.iterdir()) == []


def test_the_python_api_takes_the_last_of_a_key_given_twice_with_a_warning(caplog):
    import logging

    import simstudy as ss

    with caplog.at_level(logging.WARNING, logger="simstudy"):
        config = ss.compose("dodge2021_fig1", ["study.reps=100", "study.reps=200"])
    assert config.study.reps == 200
    assert "study.reps given twice (study.reps=100 study.reps=200): the last is used, study.reps=200" in caplog.text
