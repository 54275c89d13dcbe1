"""A stored chunk is only ever read back as the chunk it claims to be.

Every chunk carries its identity (format, run fingerprint, cell, chunk index, replicate count, array layout)
inside its checksum. A valid chunk copied into another's place -- the same cell's other chunk, another cell's,
another run's (another seed, another budget.B) -- or a chunk of the older format without identity is
recomputed with a warning naming the file, and the summary is bit-identical to an uninterrupted run's.
"""

import shutil
import zipfile

import numpy as np
import pandas as pd
import pytest

from simstudy import config
from simstudy.engine.chunks import ChunkStore, CorruptChunk
from simstudy.io import digest
from simstudy.studies import evp_accuracy


def tiny(seed=0, B=(6, 9), n_jobs=1):
    return config.parse({
        "seed": seed,
        "distribution": {"kind": "truncnorm_bag", "seed": 0},
        "budget": {"B": list(B), "n": None},
        "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
        "study": {"name": "tiny", "kind": "evp_accuracy", "reps": 300, "chunk_reps": 100,
                  "save_replicates": False},
        "runner": {"n_jobs": n_jobs, "backend": "loky", "progress": False},
    })


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """An uninterrupted run: its summary is what every repaired rerun must reproduce bit for bit."""
    return evp_accuracy.run(tiny(), tmp_path_factory.mktemp("clean")).summary


def chunk_files(run_dir):
    """Chunk files of a run directory by (B of the cell, chunk index), via the cell keys in the summary."""
    summary = pd.read_parquet(run_dir / "summary.parquet")
    cell_of_B = dict(zip(summary.B, summary.cell))
    files = {}
    for B, cell in cell_of_B.items():
        for path in sorted(run_dir.glob(f"chunks/*/cell-{cell}/*.npz")):
            files[int(B), int(path.name.split("-")[1])] = path
    return files


def rerun_and_check(run_dir, clean, target, wrong, n_jobs=1):
    result = evp_accuracy.run(tiny(n_jobs=n_jobs), run_dir)
    assert result.report.computed == 1 and result.report.resumed == result.report.tasks - 1
    assert len(result.report.warnings) == 1
    message = result.report.warnings[0]
    assert "\n" not in message and message.endswith("; recomputing it")
    assert f"chunks/{target.parent.parent.name}/{target.parent.name}/{target.name}" in message
    assert wrong in message
    pd.testing.assert_frame_equal(result.summary, clean, check_exact=True)
    # and the recomputed chunk now reads back as itself: a third run resumes everything, silently
    again = evp_accuracy.run(tiny(), run_dir)
    assert again.report.computed == 0 and again.report.warnings == ()
    pd.testing.assert_frame_equal(again.summary, clean, check_exact=True)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_chunk_copied_over_another_chunk_of_its_cell_is_recomputed(tmp_path, clean, n_jobs):
    run_dir = tmp_path / "run"
    evp_accuracy.run(tiny(), run_dir)
    files = chunk_files(run_dir)
    shutil.copyfile(files[6, 0], files[6, 1])
    cell = files[6, 0].parent.name.removeprefix("cell-")
    rerun_and_check(run_dir, clean, files[6, 1], f"holds cell {cell} chunk 0, not cell {cell} chunk 1", n_jobs)


def test_a_chunk_copied_over_another_cells_chunk_is_recomputed(tmp_path, clean):
    run_dir = tmp_path / "run"
    evp_accuracy.run(tiny(), run_dir)
    files = chunk_files(run_dir)
    shutil.copyfile(files[9, 2], files[6, 2])  # B = 9 arrays are larger: this once crashed with a traceback
    other, cell = (files[B, 2].parent.name.removeprefix("cell-") for B in (9, 6))
    rerun_and_check(run_dir, clean, files[6, 2], f"holds cell {other} chunk 2, not cell {cell} chunk 2")


def test_a_chunk_of_a_run_with_another_seed_is_recomputed(tmp_path, clean):
    run_dir, other_dir = tmp_path / "run", tmp_path / "other"
    evp_accuracy.run(tiny(), run_dir)
    evp_accuracy.run(tiny(seed=1), other_dir)
    files, others = chunk_files(run_dir), chunk_files(other_dir)
    assert files[6, 1].name == others[6, 1].name  # same cell key and chunk: only the run differs
    shutil.copyfile(others[6, 1], files[6, 1])
    rerun_and_check(run_dir, clean, files[6, 1], "holds a chunk of another run or configuration (run fingerprint "
                    f"{others[6, 1].parent.parent.name}, not {files[6, 1].parent.parent.name})")


def test_a_chunk_of_a_run_with_another_budget_is_recomputed(tmp_path, clean):
    # budget.B is not in the run's fingerprint (it keys the cells), so the run directories share it: the cell
    # in the chunk's identity is what tells a B = 12 chunk from a B = 9 one (once a broadcast traceback).
    run_dir, other_dir = tmp_path / "run", tmp_path / "other"
    evp_accuracy.run(tiny(), run_dir)
    evp_accuracy.run(tiny(B=(12,)), other_dir)
    files, others = chunk_files(run_dir), chunk_files(other_dir)
    shutil.copyfile(others[12, 0], files[9, 0])
    other, cell = others[12, 0].parent.name.removeprefix("cell-"), files[9, 0].parent.name.removeprefix("cell-")
    rerun_and_check(run_dir, clean, files[9, 0], f"holds cell {other} chunk 0, not cell {cell} chunk 0")


def write_old_format(path):
    """Rewrite a chunk as simstudy wrote them before identities: its arrays, the arrays' checksum only."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    with zipfile.ZipFile(path, "a") as zf:
        zf.comment = b"simstudy-sha256:" + digest(arrays).encode()


def test_an_old_format_chunk_is_recomputed_never_trusted(tmp_path, clean):
    run_dir = tmp_path / "run"
    evp_accuracy.run(tiny(), run_dir)
    target = chunk_files(run_dir)[9, 1]
    write_old_format(target)
    rerun_and_check(run_dir, clean, target, "an older chunk format without identity; it cannot be trusted")


# The store by itself: each mismatch is one line naming the file and what did not match.

CELL, OTHER = "0123456789abcdef", "fedcba9876543210"


@pytest.fixture
def store(tmp_path):
    store = ChunkStore(tmp_path / "chunks", "aaaa")
    x = np.random.default_rng(1301).normal(size=(3, 4))
    for cell in (CELL, OTHER):
        for chunk, reps in ((0, 4), (1, 4), (2, 2)):
            store.write(cell, chunk, reps, {"x": x[:, :reps], "n": np.arange(reps)})
    return store


def copy_and_read(store, source, target):
    shutil.copyfile(store.path(*source), store.path(*target))
    with pytest.raises(CorruptChunk) as info:
        store.read(*target)
    return str(info.value)


def test_store_names_the_file_and_what_it_holds(store):
    c, o = f"chunks/aaaa/cell-{CELL}", f"chunks/aaaa/cell-{OTHER}"
    assert copy_and_read(store, (CELL, 0, 4), (CELL, 1, 4)) == \
        f"{c}/chunk-000001-r4.npz holds cell {CELL} chunk 0, not cell {CELL} chunk 1"
    assert copy_and_read(store, (CELL, 0, 4), (OTHER, 0, 4)) == \
        f"{o}/chunk-000000-r4.npz holds cell {CELL} chunk 0, not cell {OTHER} chunk 0"
    # a study's last chunk is short; a longer one with the same index (another study.reps) is not it
    store.write(CELL, 2, 4, {"x": np.zeros((3, 4))})
    assert copy_and_read(store, (CELL, 2, 4), (CELL, 2, 2)) == \
        f"{c}/chunk-000002-r2.npz holds 4 replicates, not 2"


def test_store_refuses_another_runs_chunk(store, tmp_path):
    other = ChunkStore(tmp_path / "chunks", "bbbb")
    other.write(CELL, 0, 4, {"x": np.zeros((3, 4)), "n": np.arange(4)})
    shutil.copyfile(other.path(CELL, 0, 4), store.path(CELL, 0, 4))
    with pytest.raises(CorruptChunk, match=r"^chunks/aaaa/cell-0123456789abcdef/chunk-000000-r4.npz holds a chunk "
                                           r"of another run or configuration \(run fingerprint bbbb, not aaaa\)$"):
        store.read(CELL, 0, 4)


def test_store_checks_the_identity_under_the_checksum(store):
    # Editing the identity in the comment to make a copied chunk pass is damage: the checksum covers it.
    path = store.path(CELL, 1, 4)
    shutil.copyfile(store.path(CELL, 0, 4), path)
    with zipfile.ZipFile(path, "a") as zf:
        zf.comment = zf.comment.replace(b'"chunk":0', b'"chunk":1')
    with pytest.raises(CorruptChunk, match=r"chunk-000001-r4.npz: checksum mismatch \(damaged\)$"):
        store.read(CELL, 1, 4)


def test_store_refuses_an_old_format_chunk(store):
    write_old_format(store.path(CELL, 0, 4))
    with pytest.raises(CorruptChunk, match=r"chunk-000000-r4.npz: an older chunk format without identity; "
                                           r"it cannot be trusted$"):
        store.read(CELL, 0, 4)


def test_an_untouched_chunk_reads_back_exactly(store):
    arrays = store.read(CELL, 2, 2)
    assert sorted(arrays) == ["n", "x"] and arrays["x"].shape == (3, 2)
    np.testing.assert_array_equal(arrays["n"], np.arange(2))


def test_a_run_directory_of_old_chunks_is_recomputed_in_a_few_lines(tmp_path):
    from simstudy.engine.runner import _MAX_CHUNK_WARNINGS, chunk_tasks, run_tasks, task_seed

    def draw(task):
        return {"x": np.random.default_rng(task_seed(1302, task.cell, task.chunk)).normal(size=task.reps)}

    tasks = chunk_tasks(CELL, 60, 4)
    store = ChunkStore(tmp_path / "chunks", "aaaa")
    run_tasks(draw, tasks, store, progress=False)
    clean = [store.read(t.cell, t.chunk, t.reps)["x"] for t in tasks]
    for t in tasks:
        write_old_format(store.path(t.cell, t.chunk, t.reps))
    report = run_tasks(draw, tasks, store, progress=False)
    assert report.computed == len(tasks) == 15 and report.resumed == 0
    assert len(report.warnings) == _MAX_CHUNK_WARNINGS + 1
    assert all("an older chunk format without identity" in m for m in report.warnings[:-1])
    assert report.warnings[-1] == "and 5 more stored chunks failed their check; recomputing them"
    for t, x in zip(tasks, clean):
        np.testing.assert_array_equal(store.read(t.cell, t.chunk, t.reps)["x"], x)


def test_a_full_disk_met_by_fsync_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    import errno
    import os

    from simstudy import io

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")  # as fsync raises it: no file name

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "summary.csv"
    with pytest.raises(OSError) as info:
        with io.atomic_path(target) as tmp:
            tmp.write_text("x")
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary
