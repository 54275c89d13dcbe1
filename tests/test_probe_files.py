"""Issue 25, a hostile probe of score files: a huge file refused before it is read, model names that differ
only in spaces, advice for failed runs' scores that respects minimize=true, score_column= on a file without a
header, the percentage hint kept to accuracies, and find_atoms in n log n.

Every file is written byte for byte and every refusal compared with its one line."""

import os
import time
import warnings

import numpy as np
import pytest

from simstudy import datasets, kde
from simstudy.datasets import DataError, DataWarning, load_scores, read_scores


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def refusal(path, **options) -> str:
    with pytest.raises(DataError) as info:
        read_scores(path, **options)
    return str(info.value)


# -- 1. a file too large to read is refused from its size, before a byte is read ------------------------------


def sparse(tmp_path, name, size):
    path = tmp_path / name
    with open(path, "wb") as f:
        f.truncate(size)  # a sparse file of NUL bytes: no disk used
    return path


def test_huge_file_is_refused_from_its_size(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "0.004")  # 4 MB: files up to 100 kB
    path = sparse(tmp_path, "sparse.csv", 20_000_000)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    assert refusal(path) == (
        f"{path}: 20,000,000 bytes; read as text it would take about 40 times that, over the memory limit of "
        f"0.004 GB (files up to 0.0001 GB): give a smaller file (a score file holds one line per run) or raise "
        f"SIMSTUDY_MAX_MEMORY_GB"
    )
    assert str(path) not in map(str, opened)  # refused before it was opened


def test_file_under_the_limit_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "0.004")
    path = write(tmp_path, "runs.csv", "model,score\na,0.5\na,0.25\n" + "b,0.125\n" * 10_000)
    assert read_scores(path).scores["a"].tolist() == [0.5, 0.25]


def test_cli_refuses_a_huge_sparse_file(tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "0.004")
    sparse(tmp_path, "sparse.csv", 20_000_000)
    before = sorted(os.listdir(tmp_path))
    status, _, err = run_cli("curve", "data=sparse.csv")
    assert status == 2, err
    assert "sparse.csv: 20,000,000 bytes; read as text" in err and "SIMSTUDY_MAX_MEMORY_GB" in err, err
    assert "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == before  # nothing left behind
