from functools import partial

import numpy as np
import pytest

from simstudy.io import ChunkStore
from simstudy.runner import Task, chunk_tasks, run_tasks, stable_hash, task_seed


def _draw(task: Task, fail_at: int | None = None) -> dict:
    if task.chunk == fail_at:
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C while this chunk ran
    rng = np.random.default_rng(task_seed(7, task.cell, task.chunk))
    return {"x": rng.normal(size=task.reps)}


def _collect(store, tasks):
    return np.concatenate([store.read(t.cell, t.chunk, t.reps)["x"] for t in tasks])


def test_chunking_covers_every_replicate_once():
    tasks = chunk_tasks("ab", 10, 4)
    assert [(t.chunk, t.reps, t.first_rep) for t in tasks] == [(0, 4, 0), (1, 4, 4), (2, 2, 8)]


def test_stable_hash_is_stable():
    # Canonical JSON (sorted keys, no spaces) hashed with SHA-256: if this changes, every stored chunk and
    # every random stream changes with it.
    import hashlib

    assert stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
    assert stable_hash({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()


@pytest.mark.parametrize("n_jobs, backend", [(2, "loky"), (2, "threading"), (1, "sequential")])
def test_results_do_not_depend_on_workers(tmp_path, n_jobs, backend):
    tasks = chunk_tasks("0123456789abcdef", 50, 7)
    ref = ChunkStore(tmp_path / "ref", "f")
    run_tasks(_draw, tasks, ref, n_jobs=1, progress=False)
    other = ChunkStore(tmp_path / "other", "f")
    report = run_tasks(_draw, tasks, other, n_jobs=n_jobs, backend=backend, progress=False)
    assert report.computed == len(tasks) and report.resumed == 0
    np.testing.assert_array_equal(_collect(ref, tasks), _collect(other, tasks))


def test_interrupted_run_keeps_finished_chunks_and_resumes(tmp_path):
    tasks = chunk_tasks("0123456789abcdef", 50, 7)
    clean = ChunkStore(tmp_path / "clean", "f")
    run_tasks(_draw, tasks, clean, progress=False)

    store = ChunkStore(tmp_path / "run", "f")
    with pytest.raises(KeyboardInterrupt):
        run_tasks(partial(_draw, fail_at=3), tasks, store, n_jobs=1, backend="sequential", progress=False)
    done = [t for t in tasks if store.has(t.cell, t.chunk, t.reps)]
    assert [t.chunk for t in done] == [0, 1, 2]
    assert not list(store.root.rglob("*.part"))  # nothing half-written
    report = run_tasks(_draw, tasks, store, progress=False)
    assert report.resumed == 3 and report.computed == len(tasks) - 3
    np.testing.assert_array_equal(_collect(store, tasks), _collect(clean, tasks))


def test_worker_warnings_are_returned(tmp_path):
    import warnings

    def warn(task):
        warnings.warn("careful", RuntimeWarning)
        return {"x": np.zeros(1)}

    report = run_tasks(warn, chunk_tasks("0123456789abcdef", 2, 1), ChunkStore(tmp_path, "f"),
                       backend="threading", progress=False)
    assert len(report.warnings) == 2 and "RuntimeWarning: careful" in report.warnings[0]
