"""The dask backend on a real LocalCluster (two worker processes on the loopback interface), shared by the
module's tests: same numbers as one process, bit for bit, and the study's fixed inputs sent once."""

import dataclasses
import os
import re
import sys
from functools import partial

import numpy as np
import pandas as pd
import pytest
from _cli import FIG1, simstudy

from simstudy import config as cfg
from simstudy.engine.chunks import ChunkStore
from simstudy.engine.runner import Task, chunk_tasks, run_tasks, task_seed

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster


def _draw(task: Task) -> dict:
    if task.chunk == 3:
        raise ArithmeticError("chunk 3 fails")
    rng = np.random.default_rng(task_seed(7, task.cell, task.chunk))
    return {"x": rng.normal(size=task.reps)}


def _collect(store, tasks):
    return np.concatenate([store.read(t.cell, t.chunk, t.reps)["x"] for t in tasks if t.chunk != 3])


def test_tasks_on_dask_match_one_process_and_failures_come_back(tmp_path, cluster):
    tasks = chunk_tasks("0123456789abcdef", 200, 9)
    ref, other = ChunkStore(tmp_path / "ref", "f"), ChunkStore(tmp_path / "dask", "f")
    run_tasks(_draw, tasks, ref, n_jobs=1, backend="sequential", progress=False)
    report = run_tasks(_draw, tasks, other, backend="dask", address=cluster.scheduler_address, progress=False)
    assert [f.where for f in report.failures] == ["0123456789abcdef/3"]
    assert report.computed == len(tasks)
    np.testing.assert_array_equal(_collect(ref, tasks), _collect(other, tasks))


class Counted:
    """A large fixed input that records, in a file, every time a process unpickles it."""

    def __init__(self, log: str):
        self.log, self.payload = log, np.arange(200_000.0)

    def __reduce__(self):
        return _rebuild, (self.log, self.payload)


def _rebuild(log, payload):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    obj = Counted.__new__(Counted)
    obj.log, obj.payload = log, payload
    return obj


def _use(shared: Counted, task: Task) -> dict:
    return {"x": shared.payload[: task.reps].copy()}


def test_fixed_inputs_are_sent_to_each_worker_once_not_per_task(tmp_path, cluster):
    log = tmp_path / "unpickled.txt"
    log.touch()
    tasks = chunk_tasks("0123456789abcdef", 40, 1)  # 40 tasks
    run_tasks(partial(_use, Counted(str(log))), tasks, ChunkStore(tmp_path, "f"), backend="dask",
              address=cluster.scheduler_address, progress=False)
    in_workers = [pid for pid in log.read_text().split() if int(pid) != os.getpid()]
    assert 1 <= len(in_workers) <= len(cluster.workers), f"{len(in_workers)} unpickles for {len(tasks)} tasks"


def _config(**runner) -> cfg.Config:
    return cfg.parse({
        "seed": 3, "distribution": {"kind": "truncnorm_bag", "mean": 0.6, "sd": 0.07, "low": 0.0, "high": 1.0,
                                    "population": 2000, "size": 500, "seed": 3},
        "budget": {"B": [5, 9], "n": None}, "estimators": {"u": {"method": "u"}, "v": {"method": "v"},
                                                          "b": {"method": "bootstrap", "resamples": 20}},
        "study": {"name": "t", "kind": "evp_accuracy", "reps": 600, "chunk_reps": 70, "save_replicates": True},
        "runner": {"n_jobs": 1, "backend": "loky", "progress": False, **runner},
    })


def test_a_study_on_dask_is_bit_identical_to_one_process(tmp_path, cluster):
    from simstudy.studies import evp_accuracy

    ref = evp_accuracy.run(_config(), tmp_path / "ref")
    on_dask = evp_accuracy.run(_config(backend="dask", address=cluster.scheduler_address), tmp_path / "dask")
    assert on_dask.report.computed == 18
    pd.testing.assert_frame_equal(ref.summary, on_dask.summary, check_exact=True)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ref" / "replicates.parquet"),
                                  pd.read_parquet(tmp_path / "dask" / "replicates.parquet"), check_exact=True)


def test_cli_runner_dask_on_a_given_scheduler(tmp_path, cluster):
    args = [*FIG1, "study.reps=3000", "study.chunk_reps=500", "budget.B=12", "study.save_replicates=false"]
    simstudy(*args, "runner=dask", f"runner.address={cluster.scheduler_address}", "hydra.run.dir=dask", cwd=tmp_path)
    simstudy(*args, "hydra.run.dir=ref", cwd=tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ref" / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "dask" / "summary.parquet"), check_exact=True)


@pytest.mark.slow
def test_cli_runner_dask_starts_its_own_loopback_cluster_and_stays_quiet(tmp_path):
    args = [*FIG1, "study.reps=2000", "study.chunk_reps=500", "budget.B=8", "study.save_replicates=false"]
    proc = simstudy(*args, "runner=dask", "runner.n_jobs=2", "hydra.run.dir=dask", cwd=tmp_path)
    ref = simstudy(*args, "hydra.run.dir=ref", cwd=tmp_path)
    # distributed's ~60 INFO lines (scheduler, nanny, worker start and stop) and the CommClosedError traceback of
    # its teardown were on stdout: a successful run on dask prints what the same run on loky prints
    noise = [line for line in (proc.stdout + proc.stderr).splitlines()
             if re.search(r"Traceback|CommClosedError|[Nn]anny|[Ss]cheduler|[Ww]orker", line)]
    assert noise == [] and proc.stderr == ""
    assert len(proc.stdout.splitlines()) == len(ref.stdout.splitlines())
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ref" / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "dask" / "summary.parquet"), check_exact=True)


def test_runner_dask_without_dask_installed_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed: find_spec gives None
    with pytest.raises(cfg.ConfigError, match=r"runner.backend=dask needs dask.distributed.*simstudy\[dask\]"):
        _config(backend="dask")
    assert dataclasses.replace(_config().runner).backend == "loky"


def test_an_unreachable_scheduler_is_one_clear_error():
    import socket

    from simstudy.engine.cluster import ClusterUnavailable, dask_client

    with socket.socket() as sock:  # a loopback port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ClusterUnavailable, match=rf"runner.address=tcp://127.0.0.1:{port}: no dask scheduler"):
        with dask_client(f"tcp://127.0.0.1:{port}", 1, timeout=1):
            pass
