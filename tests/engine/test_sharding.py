"""Sharded runs (runner.shard=i/N, as Slurm array jobs would run them) and `simstudy collect`."""

import json

import pandas as pd
import pytest
from _cli import FIG1, one_line_error, simstudy

ARGS = [*FIG1, "budget.B=[6,10]", "study.reps=1400", "study.chunk_reps=200", "study.save_replicates=true"]


def _read(run_dir):
    return pd.read_parquet(run_dir / "summary.parquet"), pd.read_parquet(run_dir / "replicates.parquet")


@pytest.mark.system
def test_three_shards_then_collect_equal_one_process_bit_for_bit(tmp_path):
    run_dir = tmp_path / "outputs" / "dodge2021_fig1" / "budget.B=_6,10_,study.chunk_reps=200,study.reps=1400,study.save_replicates=true-e420713a"
    for i in (1, 2, 3):
        proc = simstudy(*ARGS, f"runner.shard={i}/3", f"runner.n_jobs={2 if i == 1 else 1}", cwd=tmp_path)
        assert f"shard {i}/3 done" in proc.stdout
        # a shard writes chunks and its marker, never a summary (it would be of partial data)
        assert not list(run_dir.glob("summary.*")) and not (run_dir / "figure.png").exists()
        marker = json.loads((run_dir / "shards" / f"shard-{i}-of-3.json").read_text())
        assert marker["shard"] == [i, 3] and marker["runner"]["tasks"] in (4, 5)
    assert len(list((run_dir / "chunks").rglob("*.npz"))) == 14  # 2 cells x 7 chunks, each written once

    simstudy("collect", f"run_dir={run_dir}", cwd=tmp_path)
    simstudy(*ARGS, "hydra.run.dir=reference", cwd=tmp_path)
    for got, want in zip(_read(run_dir), _read(tmp_path / "reference")):
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert (run_dir / "figure.png").stat().st_size > 0
    run = json.loads((run_dir / "run.json").read_text())
    assert run["runner"]["computed"] == 0 and run["runner"]["resumed"] == 14


def test_collect_names_the_missing_chunks_and_their_shard_and_writes_nothing(tmp_path):
    for i in (1, 3):
        simstudy(*ARGS, f"runner.shard={i}/3", "hydra.run.dir=run", cwd=tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "run").rglob("*"))
    proc = simstudy("collect", "run_dir=run", cwd=tmp_path, check=False)
    line = one_line_error(proc, "run: 5 of 14 chunks missing (cell/chunk): ", status=1)
    assert line.endswith("; rerun shard(s) 2/3")
    listed = set(line.split("(cell/chunk): ")[1].split("; rerun")[0].split(", "))
    present = {f"{p.parent.name.removeprefix('cell-')}/{int(p.name.split('-')[1])}"
               for p in (tmp_path / "run" / "chunks").rglob("*.npz")}
    cells = {item.split("/")[0] for item in present}
    assert listed == {f"{c}/{k}" for c in cells for k in range(7)} - present
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "run").rglob("*")) == before  # nothing written


def test_collect_bad_arguments_are_one_line(tmp_path):
    one_line_error(simstudy("collect", cwd=tmp_path, check=False), "run_dir is required")
    one_line_error(simstudy("collect", "run_dir=nowhere", cwd=tmp_path, check=False), "no config.yaml there")
    one_line_error(simstudy("collect", "rundir=x", cwd=tmp_path, check=False), "unexpected argument 'rundir=x'")
