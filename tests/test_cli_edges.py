"""The command line's edges (issue 25): run directory names that are injective and safe to type, a key given
twice, values that must be refused in one line, environment errors (a full disk, a file-size limit, a name too
long) in one line, and the newcomer's small things (--version, usage, help)."""

import re
import subprocess
import sys

import pytest
from _cli import FIG1, clean_env, one_line_error, simstudy

from simstudy import cli

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
    names = [cli._dirname(text) for text in pair]
    assert names[0] != names[1], names
    for name in names:
        assert SAFE.fullmatch(name) and len(name) <= 255, name


def test_dirname_keeps_safe_names_and_hashes_the_rest_to_a_typeable_name():
    assert cli._dirname("") == "default"
    assert cli._dirname("study.reps=10,seed=1") == "study.reps=10,seed=1"  # readable where already safe
    name = cli._dirname("distribution.params={a: 5, b: 2}")
    assert re.fullmatch(r"distribution\.params=_a_5,_b_2_-[0-9a-f]{8}", name), name
    assert cli._dirname("distribution.params={a: 5, b: 2}") == name  # a function of the text: reruns resume


def test_a_design_listing_a_path_and_its_flattened_twin_is_two_cells():
    base = {"seed": 0, "distribution": {"kind": "file", "path": "x.csv"}}
    keys, cells = cli._design_cells({**base, "design": {"distribution.path": ["a/b.csv", "a_b.csv"]}})
    assert keys == ["distribution.path"] and len({name for name, _, _ in cells}) == 2


# --- a key given twice ----------------------------------------------------------------------------------------


def test_last_of_each_key_keeps_the_last_value_in_its_place_with_one_notice(capsys):
    args = ["-m", "study.reps=10", "seed=1", "study.reps=20", "study.reps=30", "+x=1", "x=2", "--help"]
    assert cli._last_of_each_key(args) == ["-m", "seed=1", "study.reps=30", "+x=1", "x=2", "--help"]
    out, err = capsys.readouterr()
    assert err == "" and out.splitlines() == [
        "simstudy: note: study.reps given 3 times (study.reps=10 study.reps=20 study.reps=30): the last is used, "
        "study.reps=30"
    ]


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
