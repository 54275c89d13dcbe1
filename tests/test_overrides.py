"""simstudy.overrides: one rule for a path on the command line. simstudy names its own directories with ``=`` and
``,`` (``outputs/curve/data=s.csv,low=0``, a sweep's ``seed=1,n=2``); every path key takes such a path bare or
quoted, the Hydra commands (data=, hydra.run.dir=) as the plain ones (run_dir=, sweep_dir=, out=)."""

from __future__ import annotations

import pytest

from simstudy.cli.plain import _key_values
from simstudy.overrides import _quote_paths


@pytest.mark.parametrize("key", ["data", "distribution.path", "hydra.run.dir", "hydra.sweep.dir"])
def test_a_path_with_equals_and_commas_is_one_path_bare_or_quoted(tmp_path, monkeypatch, key):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep" / "seed=1,n=2").mkdir(parents=True)
    (tmp_path / "sweep" / "seed=1,n=2" / "s.csv").write_text("score\n0.5\n")
    for path in ("sweep/seed=1,n=2", "sweep/seed=1,n=2/s.csv"):
        typed = [f"{key}={path}", f"{key}='{path}'", f'{key}="{path}"']
        assert {tuple(_quote_paths([arg])) for arg in typed} == {(f"{key}='{path}'",)}  # one form: one directory
    # = is never valid bare in Hydra's grammar: one path even where it does not exist yet (a new run directory)
    assert _quote_paths([f"{key}=new/x=1"]) == [f"{key}='new/x=1'"]
    # a bare comma in a path that does not exist is Hydra's: under -m, two values of a sweep
    assert _quote_paths([f"{key}=a.csv,b.csv"]) == [f"{key}=a.csv,b.csv"]
    assert _quote_paths(["low=0", "-m", f"{key}='plain.csv'"]) == ["low=0", "-m", f"{key}=plain.csv"]


def test_a_plain_commands_value_is_taken_quoted_or_not():
    for typed in ("outputs/curve/data=s.csv,low=0", "'outputs/curve/data=s.csv,low=0'", '"outputs/curve/data=s.csv,low=0"'):
        assert _key_values([f"run_dir={typed}"], "report", ("run_dir",)) == {"run_dir": "outputs/curve/data=s.csv,low=0"}
