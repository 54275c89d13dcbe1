"""simstudy.cli.args: one rule for a path on the command line. simstudy names its own directories with ``=`` and
``,`` (``outputs/curve/data=s.csv,low=0``, a sweep's ``seed=1,n=2``); every path key takes such a path bare or
quoted, the Hydra commands (data=, hydra.run.dir=) as the plain ones (run_dir=, sweep_dir=, out=)."""

from __future__ import annotations

import pytest
from _cli import simstudy

from simstudy.cli.args import _key_values, quote_paths


@pytest.mark.parametrize("key", ["data", "distribution.path", "hydra.run.dir", "hydra.sweep.dir"])
def test_a_path_with_equals_and_commas_is_one_path_bare_or_quoted(tmp_path, monkeypatch, key):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep" / "seed=1,n=2").mkdir(parents=True)
    (tmp_path / "sweep" / "seed=1,n=2" / "s.csv").write_text("score\n0.5\n")
    for path in ("sweep/seed=1,n=2", "sweep/seed=1,n=2/s.csv"):
        typed = [f"{key}={path}", f"{key}='{path}'", f'{key}="{path}"']
        assert {tuple(quote_paths([arg])) for arg in typed} == {(f"{key}='{path}'",)}  # one form: one directory
    # = is never valid bare in Hydra's grammar: one path even where it does not exist yet (a new run directory)
    assert quote_paths([f"{key}=new/x=1"]) == [f"{key}='new/x=1'"]
    # a bare comma in a path that does not exist is Hydra's: under -m, two values of a sweep
    assert quote_paths([f"{key}=a.csv,b.csv"]) == [f"{key}=a.csv,b.csv"]
    assert quote_paths(["low=0", "-m", f"{key}='plain.csv'"]) == ["low=0", "-m", f"{key}=plain.csv"]
    # a sweep over paths with = quotes each value: left as typed, Hydra's list of two
    assert quote_paths([f"{key}='a=1/x.csv','b=2/y.csv'"]) == [f"{key}='a=1/x.csv','b=2/y.csv'"]


def test_a_plain_commands_value_is_taken_quoted_or_not():
    for typed in ("outputs/curve/data=s.csv,low=0", "'outputs/curve/data=s.csv,low=0'", '"outputs/curve/data=s.csv,low=0"'):
        assert _key_values([f"run_dir={typed}"], "report", print, ("run_dir",)) == {"run_dir": "outputs/curve/data=s.csv,low=0"}


@pytest.mark.slow
def test_every_directory_simstudy_writes_can_be_passed_back_unquoted(tmp_path):
    # curve names its run directory data=s.csv,low=0; that directory, and a file in it, go back to simstudy bare
    # and quoted alike: report run_dir= (a plain command) and curve data= (a Hydra one)
    (tmp_path / "s.csv").write_text("model,score\na,0.2\na,0.5\na,0.4\nb,0.3\nb,0.6\n")
    simstudy("curve", "data=s.csv", "low=0", cwd=tmp_path)
    run_dir = "outputs/curve/data=s.csv,low=0"
    assert (tmp_path / run_dir / "curves.csv").is_file() and (tmp_path / run_dir / "report.html").is_file()
    for typed in (run_dir, f"'{run_dir}'", f'"{run_dir}"'):
        proc = simstudy("report", f"run_dir={typed}", cwd=tmp_path)
        assert "wrote" in proc.stdout
    written = []
    for typed in (f"{run_dir}/curves.csv", f"'{run_dir}/curves.csv'", f'"{run_dir}/curves.csv"'):
        proc = simstudy("curve", f"data={typed}", "score_column=expected_max", cwd=tmp_path)
        written.append(proc.stdout.strip().splitlines()[-1].rsplit(" to ", 1)[1])
    assert len(set(written)) == 1  # the same run each time: the same directory
