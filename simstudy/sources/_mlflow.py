"""MLflow's tracking store in a SQLite file, read with ``sqlite3`` alone (``mlflow/store/tracking/dbmodels``).

An experiment is a study, a run a trial, in the order of its start time (ties in the order the runs were
written). A run's value is its metric's latest value, as MLflow reports it (``latest_metrics``: the value at the
largest step, then the latest timestamp); a NaN is stored as 0 with ``is_nan`` set and read as NaN; MLflow stores
+-inf as +-1.797e308 (the largest float), and reports them so: so do these readers, with a note. MLflow records no
direction for a metric and nothing about how runs were proposed. Deleted experiments and runs (MLflow's
``lifecycle_stage = 'deleted'``) are left out, as MLflow's own searches do; the notes count the runs.
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._sqlite import check_rows, rows, tables
from simstudy.sources.types import Trials, state_note

#: Alembic revisions of MLflow's schema this reader knows, oldest first: from the one that made ``latest_metrics``
#: (MLflow 1.8) to the newest of MLflow 3.17.2 (``mlflow/store/db_migrations/versions``, followed down_revision).
SUPPORTED = (
    "89d4b8295536", "2b4d017a5e9b", "cfd24bdc0731", "0a8213491aaa", "728d730b5ebd", "27a6a02d2cf1", "84291f40a231",
    "a8c4a736bde6", "39d1c3be5f05", "c48cb773bb87", "bd07f7e963c5", "0c779009ac13", "cc1f77228345", "97727af70f4d",
    "3500859a5d39", "7f2a7d5fae7d", "2d6e25af4d3e", "acf3f17fdcc7", "867495a8f9d4", "5b0e9adcef9c", "4465047574b1",
    "f5a4f2784254", "0584bdc529eb", "400f98739977", "6953534de441", "bda7b8c39065", "cbc13b556ace", "770bee3ae1dd",
    "a1b2c3d4e5f6", "de4033877273", "1a0cddfcaa16", "534353b11cbc", "71994744cf8e", "3da73c924c2f", "bf29a5ff90ea",
    "1bd49d398cd23", "b7c8d9e0f1a2", "5d2d30f0abce", "c9d4e5f6a7b8", "2c33131f4dae", "d3e4f5a6b7c8", "d0e1f2a3b4c5",
    "c8d9e0f1a2b3", "1b5f0d9ad7c1", "e1f2a3b4c5d6", "76601a5f987d", "c3d6457b6d8a", "a5b4c3d2e1f0", "ae8bbe7743c9",
    "7d34483879f0", "da6fb0208061", "89d3d66ed43f", "b7e4c1a90f23", "a8b9c0d1e2f3", "c1d2e3f4a5b6", "c3d9e7f1a2b4",
    "6f8d9c3b2a1e", "1971f2d9a75b", "17e22815139b", "b7e2c1a4d9f3", "75868b020152", "dc11669786a5",
)  # fmt: skip
#: Revisions before :data:`SUPPORTED` (no ``latest_metrics``): ``mlflow db upgrade`` brings them up.
OLDER = ("451aebb31d03", "90e64c465722", "181f10493468", "df50e92ffc5e", "7ac759974ad8")
#: The tables a tracking store must have (sniffing tells an MLflow store by them).
TABLES = frozenset({"experiments", "runs", "latest_metrics", "alembic_version"})
#: MLflow's run statuses -> the readers' states (a killed run did not finish: failed, and the notes say killed).
STATUSES = {
    "FINISHED": "complete",
    "FAILED": "failed",
    "KILLED": "failed",
    "RUNNING": "running",
    "SCHEDULED": "waiting",
}
_HUGE = sys.float_info.max  # MLflow's stand-in for +inf


def schema_version(con: sqlite3.Connection, name: str, timeout: float) -> str:
    """The store's Alembic revision, refused in one line unless :data:`SUPPORTED`."""
    found = rows(con, name, timeout, "SELECT version_num FROM alembic_version")
    if len(found) != 1:
        raise DataError(f"{name}: alembic_version holds {len(found)} rows, not 1: not a store MLflow wrote")
    (revision,) = found[0]
    if revision in SUPPORTED:
        return str(revision)
    if revision in OLDER:
        raise DataError(
            f"{name}: MLflow schema {revision!r}, older than this reader knows (MLflow 1.8 on): upgrade a copy with "
            f"`mlflow db upgrade sqlite:///COPY`"
        )
    raise DataError(
        f"{name}: MLflow schema {revision!r} is not one this reader knows (MLflow 1.8 to 3.17): a newer MLflow "
        f"wrote it; export the runs to CSV with that MLflow"
    )


def read(
    con: sqlite3.Connection, name: str, timeout: float, *, study: str | None, metric: str | None
) -> tuple[str, tuple[Trials, ...]]:
    """The store's schema revision and its active experiments (``study``: that one only), metric ``metric``."""
    revision = schema_version(con, name, timeout)
    missing = TABLES - tables(con, name, timeout)
    if missing:
        raise DataError(f"{name}: an MLflow store without the table(s) {', '.join(sorted(missing))}")
    where, params = ("AND name = ?", (study,)) if study is not None else ("", ())
    experiments = rows(
        con,
        name,
        timeout,
        f"SELECT experiment_id, name FROM experiments WHERE lifecycle_stage = 'active' {where} ORDER BY experiment_id",
        params,
    )
    if study is not None and not experiments:
        names = [
            n for (n,) in rows(con, name, timeout, "SELECT name FROM experiments WHERE lifecycle_stage = 'active'")
        ]
        listed = ", ".join(repr(n) for n in names[:10]) + (" ..." if len(names) > 10 else "")
        raise DataError(f"{name}: no experiment {study!r}; the store holds {listed or 'no experiments'}")
    counted = "SELECT COUNT(*) FROM runs" + (" WHERE experiment_id = ?" if study is not None else "")
    (count,) = rows(con, name, timeout, counted, [experiments[0][0]] if study is not None else [])[0]
    check_rows(name, count, "runs", "pick one experiment with study=NAME")
    keys = {eid: _keys(con, name, timeout, eid) for eid, _ in experiments}
    if metric is not None and not any(metric in k for k in keys.values()):
        known = sorted(set().union(*keys.values()))
        raise DataError(
            f"{name}: no run logs the metric {metric!r}; the runs log "
            f"{', '.join(repr(k) for k in known[:10]) or 'no metrics'}"
        )
    studies = []
    for eid, experiment in experiments:
        chosen = metric
        if chosen is None and len(keys[eid]) > 1:
            raise DataError(
                f"{name}: experiment {experiment!r} logs the metrics {', '.join(repr(k) for k in sorted(keys[eid]))}: "
                f"choose one with metric=KEY"
            )
        if chosen is None and keys[eid]:
            (chosen,) = keys[eid]
        studies.append(_experiment(con, name, timeout, eid, experiment, chosen))
    return revision, tuple(studies)


def _keys(con: sqlite3.Connection, name: str, timeout: float, experiment_id: int) -> set[str]:
    return {
        key
        for (key,) in rows(
            con,
            name,
            timeout,
            "SELECT DISTINCT m.key FROM latest_metrics AS m JOIN runs AS r ON r.run_uuid = m.run_uuid "
            "WHERE r.experiment_id = ? AND r.lifecycle_stage = 'active'",
            (experiment_id,),
        )
    }


def _experiment(
    con: sqlite3.Connection, name: str, timeout: float, experiment_id: int, experiment: str, metric: str | None
) -> Trials:
    starts, states, values = [], [], []
    killed = no_start = no_metric = 0
    for run, status, start, value, is_nan in rows(
        con,
        name,
        timeout,
        "SELECT r.run_uuid, r.status, r.start_time, m.value, m.is_nan FROM runs AS r LEFT JOIN latest_metrics AS m "
        "ON m.run_uuid = r.run_uuid AND m.key = ? WHERE r.experiment_id = ? AND r.lifecycle_stage = 'active' "
        "ORDER BY r.start_time, r.rowid",
        (metric, experiment_id),
    ):
        if status not in STATUSES:
            raise DataError(f"{name}: experiment {experiment!r}: run {run}: unknown status {status!r}")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DataError(f"{name}: experiment {experiment!r}: run {run}: value is not a number: {value!r:.60}")
        killed += status == "KILLED"
        no_start += start is None
        no_metric += value is None
        starts.append(-1 if start is None else start)
        states.append(STATUSES[status])
        values.append(np.nan if value is None or is_nan else float(value))
    array = np.array(values, dtype=np.float64)
    notes = [state_note(states, "runs")]
    if killed:
        notes.append(f"{killed} of the failed runs were killed (MLflow status KILLED)")
    (deleted,) = rows(
        con,
        name,
        timeout,
        "SELECT COUNT(*) FROM runs WHERE experiment_id = ? AND lifecycle_stage = 'deleted'",
        (experiment_id,),
    )[0]
    if deleted:
        notes.append(f"{deleted} deleted run{'s' if deleted != 1 else ''} left out")
    if metric is not None and no_metric:
        notes.append(f"{no_metric} run{'s' if no_metric != 1 else ''} without the metric {metric!r}: no value")
    huge = int(np.sum(np.abs(array) == _HUGE))
    if huge:
        notes.append(f"{huge} value{'s' if huge != 1 else ''} +-1.797e308: MLflow's stand-in for +-inf")
    if no_start:
        notes.append(f"{no_start} run{'s' if no_start != 1 else ''} without a start time: ordered first (order -1)")
    (children,) = rows(
        con,
        name,
        timeout,
        "SELECT COUNT(*) FROM tags AS g JOIN runs AS r ON r.run_uuid = g.run_uuid "
        "WHERE r.experiment_id = ? AND r.lifecycle_stage = 'active' AND g.key = 'mlflow.parentRunId'",
        (experiment_id,),
    )[0]
    provenance = ["not recorded: MLflow's store does not record how runs were proposed; not evidence of random search"]
    if children:
        provenance.append(
            f"{children} of {len(states)} runs are nested runs (tag mlflow.parentRunId): a tuner's trials?"
        )
    return Trials(
        name=experiment,
        metric=metric,
        direction=None,
        values=array,
        states=tuple(states),
        order=np.array(starts, dtype=np.int64),
        order_by="start time (ms since 1970, UTC)",
        provenance=tuple(provenance),
        notes=tuple(notes),
    )
