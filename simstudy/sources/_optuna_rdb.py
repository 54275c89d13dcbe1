"""Optuna's RDB storage in a SQLite file, read with ``sqlite3`` alone (the tables of ``optuna/storages/_rdb/models.py``).

The schema is Alembic's revision in ``alembic_version``; the revisions whose tables this reader knows are
:data:`SUPPORTED` (Optuna 3.0 to 5.1: ``trial_values.value_type`` records +-inf, which the column ``value`` cannot
hold, since ``v3.0.0.d``). An older storage is upgraded by Optuna's own command; a newer one is refused, naming its
revision. Every query is parametrised: a study's name is only ever a value.
"""

from __future__ import annotations

import json
import math
import sqlite3

from simstudy.score_files import DataError
from simstudy.sources import _optuna
from simstudy.sources._sqlite import check_rows, rows, tables
from simstudy.sources.types import Trials

#: Alembic revisions of Optuna's schema this reader knows, oldest first (optuna/storages/_rdb/alembic/versions).
SUPPORTED = ("v3.0.0.d", "v3.2.0.a")
#: Revisions before :data:`SUPPORTED` (Optuna 0.9 to 3.0 pre-releases): ``optuna storage upgrade`` brings them up.
OLDER = ("v0.9.0.a", "v1.2.0.a", "v1.3.0.a", "v2.4.0.a", "v2.6.0.a", "v3.0.0.a", "v3.0.0.b", "v3.0.0.c")
#: The tables a storage must have (sniffing tells an Optuna storage by them).
TABLES = frozenset({"studies", "study_directions", "trials", "trial_values", "version_info"})
_VALUE_TYPES = {"FINITE": None, "INF_POS": math.inf, "INF_NEG": -math.inf}


def schema_version(con: sqlite3.Connection, name: str, timeout: float) -> str:
    """The storage's Alembic revision, refused in one line unless :data:`SUPPORTED`."""
    if "alembic_version" not in tables(con, name, timeout):
        raise DataError(f"{name}: an Optuna storage without an alembic_version table: not one Optuna finished creating")
    found = rows(con, name, timeout, "SELECT version_num FROM alembic_version")
    if len(found) != 1:
        raise DataError(f"{name}: alembic_version holds {len(found)} rows, not 1: not a storage Optuna wrote")
    (revision,) = found[0]
    if revision in SUPPORTED:
        return str(revision)
    if revision in OLDER:
        raise DataError(
            f"{name}: Optuna schema {revision!r}, older than this reader knows ({', '.join(SUPPORTED)}): upgrade a "
            f"copy with `optuna storage upgrade --storage sqlite:///COPY`"
        )
    raise DataError(
        f"{name}: Optuna schema {revision!r} is not one this reader knows ({', '.join(SUPPORTED)}, Optuna 3.0 to "
        f"5.1): a newer Optuna wrote it; read it with that Optuna and export the trials to CSV"
    )


def read(
    con: sqlite3.Connection, name: str, timeout: float, *, study: str | None, objective: int, metric: str | None
) -> tuple[str, tuple[Trials, ...]]:
    """The storage's schema revision and its studies (``study``: that one only), objective chosen."""
    revision = schema_version(con, name, timeout)
    where, params = ("WHERE study_name = ?", (study,)) if study is not None else ("", ())
    studies = rows(con, name, timeout, f"SELECT study_id, study_name FROM studies {where} ORDER BY study_id", params)
    if study is not None and not studies:
        names = [n for (n,) in rows(con, name, timeout, "SELECT study_name FROM studies ORDER BY study_id")]
        listed = ", ".join(repr(n) for n in names[:10]) + (" ..." if len(names) > 10 else "")
        raise DataError(f"{name}: no study {study!r}; the storage holds {listed or 'no studies'}")
    counted = "SELECT COUNT(*) FROM trials" + (" WHERE study_id = ?" if study is not None else "")
    (count,) = rows(con, name, timeout, counted, [studies[0][0]] if study is not None else [])[0]
    check_rows(name, count, "trials", "pick one study with study=NAME")
    return revision, tuple(_study(con, name, timeout, sid, sname, objective, metric) for sid, sname in studies)


def _study(
    con: sqlite3.Connection, name: str, timeout: float, study_id: int, study: str, objective: int, metric: str | None
) -> Trials:
    directions = []
    for (direction,) in rows(
        con, name, timeout, "SELECT direction FROM study_directions WHERE study_id = ? ORDER BY objective", (study_id,)
    ):
        if direction not in _optuna.DIRECTION_NAMES:
            raise DataError(f"{name}: study {study!r}: unknown direction {direction!r}")
        directions.append(_optuna.DIRECTION_NAMES[direction])
    metric_names = None
    for (value_json,) in rows(
        con,
        name,
        timeout,
        "SELECT value_json FROM study_system_attributes WHERE study_id = ? AND key = ?",
        (study_id, _optuna.METRIC_NAMES_KEY),
    ):
        try:
            metric_names = json.loads(value_json)
        except (TypeError, ValueError, RecursionError):
            raise DataError(f"{name}: study {study!r}: metric names are not JSON: {value_json!r:.60}") from None
    k = _optuna.choose_objective(name, study, len(directions), metric_names, objective, metric)
    numbers, states, values = [], [], []
    for number, state, value, value_type in rows(
        con,
        name,
        timeout,
        "SELECT t.number, t.state, v.value, v.value_type FROM trials AS t LEFT JOIN trial_values AS v "
        "ON v.trial_id = t.trial_id AND v.objective = ? WHERE t.study_id = ? ORDER BY t.number, t.trial_id",
        (k, study_id),
    ):
        if state not in _optuna.STATE_NAMES:
            raise DataError(f"{name}: study {study!r}: trial {number}: unknown state {state!r}")
        if not isinstance(number, int):
            raise DataError(f"{name}: study {study!r}: a trial without a number ({number!r})")
        if value_type is not None and value_type not in _VALUE_TYPES:
            raise DataError(f"{name}: study {study!r}: trial {number}: unknown value_type {value_type!r}")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DataError(f"{name}: study {study!r}: trial {number}: value is not a number: {value!r:.60}")
        numbers.append(number)
        states.append(_optuna.STATE_NAMES[state])
        values.append(_VALUE_TYPES[value_type] if value_type in ("INF_POS", "INF_NEG") else value)
    trial_keys = dict(
        rows(
            con,
            name,
            timeout,
            "SELECT a.key, COUNT(DISTINCT a.trial_id) FROM trial_system_attributes AS a JOIN trials AS t "
            "ON t.trial_id = a.trial_id WHERE t.study_id = ? GROUP BY a.key",
            (study_id,),
        )
    )
    study_keys = [
        key
        for (key,) in rows(
            con, name, timeout, "SELECT key FROM study_system_attributes WHERE study_id = ?", (study_id,)
        )
    ]
    return _optuna.trials(study, directions, metric_names, k, numbers, states, values, trial_keys, study_keys)
