"""Issue 25, a hostile probe of score files: a huge file refused before it is read, model names that differ
only in spaces, advice for failed runs' scores that respects minimize=true, score_column= on a file without a
header, the percentage hint kept to accuracies, and find_atoms in n log n.

Every file is written byte for byte and every refusal compared with its one line."""

import os
import time
import warnings

import numpy as np
import pytest

from simstudy.datasets import DataError, DataWarning, load_scores, read_scores
from simstudy.stats import kde


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


# -- 2. CSV model names that differ only in spaces ---------------------------------------------------------------


def test_model_spellings_differing_in_spaces_are_refused(tmp_path):
    path = write(tmp_path, "runs.csv", "model,score\na,0.5\nb,0.6\na,0.7\na ,0.8\nb,0.4\n")
    assert refusal(path) == (
        f"{path}: models 'a' (row 2) and 'a ' (row 5) differ only in surrounding spaces: spell them alike if "
        f"they are one model, or rename one if they are two"
    )
    lead = write(tmp_path, "lead.tsv", "model\tscore\n a\t0.5\na\t0.7\nb\t0.6\nb\t0.4\n")
    assert "models ' a' (row 2) and 'a' (row 3) differ only" in refusal(lead)


def test_one_padded_spelling_throughout_is_the_model(tmp_path):
    path = write(tmp_path, "runs.csv", "model , score\na ,0.5\n  b,0.6\na ,0.7\n  b,0.4\n")
    assert {m: x.tolist() for m, x in read_scores(path).scores.items()} == {"a": [0.5, 0.7], "b": [0.6, 0.4]}


def test_json_keeps_spellings_apart(tmp_path):
    path = write(tmp_path, "runs.json", '{"a": [0.5, 0.7], "a ": [0.8, 0.9]}')
    assert {m: x.tolist() for m, x in read_scores(path).scores.items()} == {"a": [0.5, 0.7], "a ": [0.8, 0.9]}


# -- 3. a failed run's score: the worst, never the best ----------------------------------------------------------


def test_missing_advice_with_minimize_is_the_worst_loss(tmp_path):
    path = write(tmp_path, "lossm.csv", "model,score\na,0.5\na,\nb,0.25\nb,0.75\n")
    assert refusal(path, minimize=True, low=0, high=10) == (
        f"{path}: row 3: score is missing (a failed run?): pass missing=drop to leave such runs out or "
        f"missing=10 to score them 10, the worst loss"
    )
    assert refusal(path, minimize=True) == (
        f"{path}: row 3: score is missing (a failed run?): pass missing=drop to leave such runs out (or give "
        f"high= and score them that: a failed run's loss is the worst)"
    )
    assert refusal(path) == (  # maximising: 0 as before
        f"{path}: row 3: score is missing (a failed run?): pass missing=drop to leave such runs out or "
        f"missing=0 to score them 0"
    )


def best_missing_warnings(path, **options) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_scores(path, **options)
    return [str(w.message) for w in caught if w.category is DataWarning and "every score read" in str(w.message)]


def test_a_missing_value_better_than_every_score_is_warned(tmp_path):
    path = write(tmp_path, "lossm.csv", "model,score\na,0.5\na,\nb,0.25\nb,0.75\n")
    assert best_missing_warnings(path, missing=0, minimize=True) == [
        f"{path}: missing=0 scores failed runs below every score read (the best is 0.25, with minimize=true), so "
        f"a failed run counts as the best run: pass missing=drop, or a score no better than the worst read (0.75)"
    ]
    assert best_missing_warnings(path, missing=1) == [
        f"{path}: missing=1 scores failed runs above every score read (the best is 0.75), so a failed run counts "
        f"as the best run: pass missing=drop, or a score no better than the worst read (0.25)"
    ]
    for options in ({"missing": 0}, {"missing": 0.25}, {"missing": 1, "minimize": True}, {"missing": 0.75}):
        assert best_missing_warnings(path, **options) == [], options


def test_cli_logs_the_best_missing_warning(tmp_path, run_cli):
    write(tmp_path, "lossm.csv", "score\n" + "".join(f"{2 + i % 7 / 8}\n" for i in range(30)) + "\n3\n")
    status, out, err = run_cli("curve", "data=lossm.csv", "minimize=true", "missing=0", "hydra.run.dir=run")
    assert status == 0, err
    assert "lossm.csv: missing=0 scores failed runs below every score read (the best is 2, with minimize=true)" in out
    status, _, err = run_cli("curve", "data=lossm.csv", "minimize=true", "hydra.run.dir=run2")
    assert status == 2 and "missing=0" not in err and "pass missing=drop to leave such runs out (or give high=" in err
    assert not (tmp_path / "run2").exists()


# -- 4. score_column= on a file without a header -----------------------------------------------------------------


def test_score_column_on_a_headerless_file_is_refused(tmp_path):
    path = write(tmp_path, "a_b.csv", "0.5\n0.6\n0.7\n")
    assert refusal(path, score_column="zz") == (
        f"{path}: missing column 'zz': the file has no header (its first line is a score), so its one column "
        f"is the scores: leave out score_column= or add a header line"
    )
    assert read_scores(path).scores["a_b"].tolist() == [0.5, 0.6, 0.7]


# -- 5. the percentage hint is for accuracies --------------------------------------------------------------------


def test_perplexities_with_minimize_get_bounds_not_scale(tmp_path):
    path = write(tmp_path, "ppl.csv", "score\n20.5\n35\n49.25\n")
    assert refusal(path, low=0, high=1, minimize=True) == (
        f"{path}: row 2: score 20.5 is outside the support [0, 1]; the scores lie in [20.5, 49.25]: pass low= "
        f"and high= bounds that hold them"
    )
    assert refusal(path, low=0, high=1).endswith("these look like percentages: pass scale=0.01 (or high=100)")
    big = write(tmp_path, "big.csv", "score\n120\n350\n")
    assert refusal(big, low=0, high=1).endswith(
        "the scores lie in [120, 350]: pass low= and high= bounds that hold them"
    )


def test_perplexities_with_minimize_in_the_cli(tmp_path, run_cli):
    write(tmp_path, "ppl.csv", "score\n20.5\n35\n49.25\n31\n")
    status, _, err = run_cli("audit", "data=ppl.csv", "minimize=true", "hydra.run.dir=run")
    assert status == 2 and "scale=0.01" not in err, err
    assert (
        "ppl.csv: row 2: score 20.5 is outside the support [0, 1]; the scores lie in [20.5, 49.25]: pass low= and "
        in err
    )


# -- 6. find_atoms in n log n, with the answers of the scan it replaces --------------------------------------------


def scan_atoms(x, alpha=kde.ATOM_ALPHA):
    """find_atoms as it was: every repeated value scans all the scores (quadratic when values repeat)."""
    from scipy import stats

    x = np.sort(np.asarray(x, dtype=np.float64))
    values, counts = np.unique(x, return_counts=True)
    d = float(np.diff(values).min())
    k_target = max(10, int(np.ceil(np.sqrt(x.size))))
    found = []
    for v, c in zip(values[counts >= 3], counts[counts >= 3]):
        others = x[x != v]
        k = min(k_target, others.size)
        dist = np.abs(others - v)
        r = np.partition(dist, k - 1)[k - 1]
        lam = np.count_nonzero(dist <= r) * d / (2 * r)
        if stats.poisson.sf(c - 1, lam) < alpha / values.size:
            found.append((v, c))
    v, c = (np.array([f[0] for f in found], np.float64), np.array([f[1] for f in found], np.int64))
    return v, c, d


def test_find_atoms_matches_the_scan_bit_for_bit():
    rng = np.random.default_rng(2025)
    n_atoms = 0
    for case in range(150):
        n = int(rng.integers(3, 300))
        x = np.round(rng.beta(2, 5, n) * 10.0 ** int(rng.integers(-2, 3)), int(rng.integers(0, 4)))
        if case % 2:  # failed runs at one value, or at both ends
            x[: int(rng.integers(0, n // 3 + 1))] = x.min() if case % 4 == 1 else 0.0
            x[-int(rng.integers(1, 4)) :] = x.max()
        if np.unique(x).size < 2:
            continue
        got, want = kde.find_atoms(x), scan_atoms(x)
        assert got.values.tobytes() == want[0].tobytes() and got.counts.tobytes() == want[1].tobytes(), case
        assert got.resolution == want[2] and got.values.dtype == np.float64 and got.counts.dtype == np.int64
        n_atoms += got.values.size
    assert n_atoms > 20  # the cases hold atoms, not only empty answers


def test_find_atoms_is_fast_when_values_repeat():
    x = np.round(np.random.default_rng(7).beta(8, 3, 200_000), 4)  # 10,000 values, each repeated: the scan took 10 s
    start = time.perf_counter()
    atoms = kde.find_atoms(x)
    assert time.perf_counter() - start < 3.0  # about 0.3 s
    assert atoms.values.size == 0 and atoms.resolution == pytest.approx(1e-4)
