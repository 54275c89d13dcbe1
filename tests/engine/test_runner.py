from functools import partial

import numpy as np
import pytest

from simstudy.engine.chunks import ChunkStore
from simstudy.engine.runner import Task, chunk_tasks, run_tasks, stable_hash, task_seed


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


def _fails_on_odd(task: Task) -> dict:
    if task.chunk % 2:
        raise ArithmeticError(f"odd chunk {task.chunk}")
    return _draw(task)


@pytest.mark.parametrize("backend", [pytest.param("loky", marks=pytest.mark.system), "sequential"])  # loky: a pool
def test_a_failing_task_is_returned_with_its_seed_key_and_the_rest_finish(tmp_path, backend):
    from simstudy.engine.runner import seed_key

    tasks = chunk_tasks("0123456789abcdef", 50, 7)
    store = ChunkStore(tmp_path, "f")
    report = run_tasks(_fails_on_odd, tasks, store, n_jobs=2, backend=backend, progress=False)
    assert [f.chunk for f in report.failures] == [1, 3, 5, 7]
    first = report.failures[0]
    assert first.seed_key == seed_key(first.cell, 1) and first.error == "ArithmeticError: odd chunk 1"
    assert "raise ArithmeticError" in first.traceback and first.where == "0123456789abcdef/1"
    assert [t.chunk for t in tasks if store.has(t.cell, t.chunk, t.reps)] == [0, 2, 4, 6]
    # a rerun retries only the failed tasks
    again = run_tasks(_draw, tasks, store, progress=False)
    assert again.resumed == 4 and again.computed == 4 and not again.failures


def test_replay_reraises_with_the_full_traceback():
    from simstudy.engine.runner import replay

    task = chunk_tasks("0123456789abcdef", 20, 7)[1]
    with pytest.raises(ArithmeticError, match="odd chunk 1") as info:
        replay(_fails_on_odd, task)
    assert info.traceback[-1].name == "_fails_on_odd"


def test_shards_are_disjoint_cover_every_task_and_are_balanced():
    from simstudy.engine.runner import shard

    tasks = chunk_tasks("0123456789abcdef", 100, 7) + chunk_tasks("fedcba9876543210", 30, 7)
    slices = [shard(tasks, i, 3) for i in (1, 2, 3)]
    assert sorted((t.cell, t.chunk) for s in slices for t in s) == sorted((t.cell, t.chunk) for t in tasks)
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    with pytest.raises(ValueError):
        shard(tasks, 4, 3)


def test_require_complete_names_missing_tasks_and_computes_nothing(tmp_path):
    from simstudy.engine.runner import MissingChunks

    tasks = chunk_tasks("0123456789abcdef", 50, 7)
    store = ChunkStore(tmp_path, "f")
    run_tasks(_draw, tasks[:3] + tasks[4:6], store, progress=False)
    with pytest.raises(MissingChunks) as info:
        run_tasks(_fails_on_odd, tasks, store, require_complete=True, progress=False)
    assert [t.chunk for t in info.value.missing] == [3, 6, 7] and info.value.positions == (3, 6, 7)
    assert info.value.total == 8 and not store.has(tasks[3].cell, 3, tasks[3].reps)


def _damage(path, how: str) -> None:
    blob = path.read_bytes()
    if how == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flipped":  # one bit of the stored array changed: zip CRC or our checksum must catch it
        i = blob.index(b"\x93NUMPY") + 200
        path.write_bytes(blob[:i] + bytes([blob[i] ^ 1]) + blob[i + 1 :])
    elif how == "unsigned":  # a plain npz with other numbers: readable, but no checksum of ours
        np.savez(path, x=np.zeros(7))


@pytest.mark.parametrize("how", ["truncated", "empty", "flipped", "unsigned"])
def test_a_damaged_chunk_is_never_read_back_and_is_recomputed(tmp_path, how):
    from simstudy.engine.chunks import CorruptChunk

    tasks = chunk_tasks("0123456789abcdef", 50, 7)
    clean = ChunkStore(tmp_path / "clean", "f")
    run_tasks(_draw, tasks, clean, progress=False)
    store = ChunkStore(tmp_path / "run", "f")
    run_tasks(_draw, tasks, store, progress=False)
    t = tasks[2]
    _damage(store.path(t.cell, t.chunk, t.reps), how)
    with pytest.raises(CorruptChunk):
        store.read(t.cell, t.chunk, t.reps)
    report = run_tasks(_draw, tasks, store, progress=False)
    assert report.computed == 1 and report.resumed == len(tasks) - 1
    assert len(report.warnings) == 1 and "recomputing" in report.warnings[0]
    np.testing.assert_array_equal(_collect(store, tasks), _collect(clean, tasks))


def test_chunks_stay_plain_npz_files(tmp_path):
    store = ChunkStore(tmp_path, "f")
    store.write("0123456789abcdef", 0, 3, {"x": np.arange(3.0)})
    with np.load(store.path("0123456789abcdef", 0, 3)) as data:
        np.testing.assert_array_equal(data["x"], np.arange(3.0))


def test_a_run_directory_of_another_configuration_is_refused_naming_what_differs(tmp_path):
    from simstudy.engine.chunks import RunDirConflict

    first = ChunkStore(tmp_path / "chunks", "aaaa")
    first.claim({"seed": 0, "study": {"reps": 10}})
    first.write("0123456789abcdef", 0, 3, {"x": np.zeros(3)})
    first.claim({"seed": 0, "study": {"reps": 20}})  # same fingerprint: fine
    with pytest.raises(RunDirConflict, match=r"different configuration \(seed: 0 -> 7; study.reps: 10 -> 20\)"):
        ChunkStore(tmp_path / "chunks", "bbbb").claim({"seed": 7, "study": {"reps": 20}})


def test_progress_without_a_terminal_is_a_log_line_every_tenth_or_ten_seconds(monkeypatch, caplog):
    from simstudy.engine import runner

    clock = iter([0.0] + [3.0 + i for i in range(100)])  # start, then one second per chunk after 3 s
    monkeypatch.setattr(runner.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(runner.sys.stderr, "isatty", lambda: False, raising=False)
    caplog.set_level("INFO", logger="simstudy.engine.runner")
    progress = runner._Progress(40, 0, "study", None)
    assert progress.bar is None  # no terminal: no bar
    for _ in range(40):
        progress.update()
    progress.close()
    lines = [r.getMessage() for r in caplog.records]
    # every 4 chunks (a tenth) a line, with a 10 s line in between never needed at 1 s a chunk
    assert [int(m.split()[1]) for m in lines] == [4, 8, 12, 16, 20, 24, 28, 32, 36, 40]
    assert lines[0] == "study: 4 of 40 chunks done (10%) in 6 s, about 54 s left"
    assert lines[-1] == "study: 40 of 40 chunks done (100%) in 42 s"


def test_progress_quiet_for_short_runs_and_off_when_asked(monkeypatch, caplog):
    from simstudy.engine import runner

    monkeypatch.setattr(runner.sys.stderr, "isatty", lambda: False, raising=False)
    caplog.set_level("INFO", logger="simstudy.engine.runner")
    for setting in (None, False):  # None: a run under 2 s says nothing; False: never a line or a bar
        progress = runner._Progress(10, 0, "quick", setting)
        for _ in range(10):
            progress.update()
        progress.close()
    assert caplog.records == []
