"""Syne Tune's tuning results, read with ``zipfile``, ``csv`` and ``json`` (``syne_tune/tuner.py``,
``StoreResultsCallback``): ``results.csv.zip`` and ``metadata.json`` side by side, ``data=`` their directory or the zip.

``results.csv.zip`` holds one CSV with a row per report: ``trial_id``, the metrics, Syne Tune's own columns
(``st_*``: ``st_status``, ``st_decision``, ``st_tuner_time``, ...) and ``config_*``. ``metadata.json`` records
``metric_names`` (the first is the one tuned, ``objective=`` or ``metric=`` picks another), ``metric_mode`` (min or
max, one or one per metric: the direction) and ``scheduler_name`` (the provenance). Without ``metadata.json``,
``metric=`` names the column and no direction is known.

A trial is one score: its rows reduced by ``reduce=`` (``last`` by default), never counted as trials. Trials are
ordered by ``trial_id`` (Syne Tune numbers trials as it creates them). A row's ``st_status`` is the trial's status
when the report arrived, not how it ended (Syne Tune 0.16 leaves ``InProgress`` on the last row of trials that
then completed or failed; their end is only in ``tuner.dill``, a pickle never opened): a trial whose last row says
Completed or InProgress is complete (the note counts the InProgress ones), Failed failed, and Stopped, Stopping or
Paused, or a last ``st_decision`` of STOP or PAUSE, a trial stopped early by the scheduler (pruned).
"""

from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._files import (
    FILE_COST,
    check_numeric,
    check_size,
    choose_metric,
    csv_rows,
    load_json,
    number,
    numeric_keys,
    reduce_note,
    reduce_values,
)
from simstudy.sources.types import Trials, state_note

RESULTS, METADATA = "results.csv.zip", "metadata.json"
#: Syne Tune's trial statuses (``syne_tune/backend/trial_status.py``) -> the readers' states.
STATUSES = {
    "Completed": "complete",
    "Failed": "failed",
    "InProgress": "complete",  # the status when the row was written: see the module's docstring
    "Stopped": "pruned",
    "Stopping": "pruned",
    "Paused": "pruned",
}
_MODES = {"max": "maximize", "min": "minimize"}
_MULTI_FIDELITY = ("ASHA", "Hyperband", "SuccessiveHalving", "MOBSTER", "BOHB", "HyperTune", "DEHB", "PASHA")


def looks_like_results(path: Path) -> bool:
    """Whether a file is a zip of one CSV whose header has ``trial_id`` and Syne Tune's ``st_`` columns."""
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) != 1:
                return False
            with z.open(members[0]) as f:
                first = f.readline(1 << 16).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, ValueError, NotImplementedError):
        return False
    columns = first.strip().split(",")
    return "trial_id" in columns and any(c.startswith("st_") for c in columns)


def read(folder: Path, name: str, *, objective: int, metric: str | None, reduce: str | None) -> tuple[Trials, ...]:
    """The tuning in ``folder`` as one :class:`Trials`, named after the folder."""
    zipped = folder / RESULTS
    shown = f"{name}/{RESULTS}" if not name.endswith(RESULTS) else name
    if not zipped.is_file() or zipped.is_symlink():
        raise DataError(f"{name}: no {RESULTS} (Syne Tune's results)")
    try:
        with zipfile.ZipFile(zipped) as z:
            members = z.infolist()
            if len(members) != 1:
                raise DataError(f"{shown}: {len(members)} files in the zip, not Syne Tune's one results.csv")
            check_size(zipped, shown, members[0].file_size, FILE_COST)
            text = z.read(members[0]).decode("utf-8")
    except (zipfile.BadZipFile, EOFError, OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{shown}: not a readable zip of a CSV ({exc}): a truncated copy? copy it again") from None
    header, rows = csv_rows(io.StringIO(text), shown)
    if "trial_id" not in header:
        raise DataError(f"{shown}: no trial_id column: not Syne Tune's results")
    records = [dict(zip(header, row)) for row in rows]
    meta = load_json(folder / METADATA, f"{name}/{METADATA}") if (folder / METADATA).is_file() else None
    notes = [] if meta is not None else [f"no {METADATA}: no metric recorded, no direction"]
    meta = meta if isinstance(meta, dict) else {}
    names = [str(m) for m in meta.get("metric_names", []) if isinstance(m, str)]
    modes = meta.get("metric_mode")
    modes = [modes] * max(len(names), 1) if isinstance(modes, str) else list(modes or [])
    if metric is None and names and not 0 <= objective < len(names):
        raise DataError(
            f"{name}: objective={objective}, but {METADATA} names {len(names)} metric"
            f"{'s' if len(names) != 1 else ''} ({', '.join(names)}): give objective=0..{len(names) - 1}"
        )
    recorded = names[objective] if metric is None and names else None
    exclude = {"trial_id"} | {c for c in header if c.startswith(("st_", "config_"))}
    check_numeric(records, metric, shown)
    chosen = choose_metric(name, "the results", numeric_keys(records, exclude), metric, recorded)
    direction = None
    if chosen in names and names.index(chosen) < len(modes):
        direction = _MODES.get(str(modes[names.index(chosen)]))
    how = reduce or "last"
    trials: dict[int, list[dict]] = {}
    for r, record in enumerate(records, 2):
        tid = number(record["trial_id"])
        if tid is None or tid != int(tid):
            raise DataError(f"{shown}: row {r}: trial_id {record['trial_id']!r:.40} is not an integer")
        trials.setdefault(int(tid), []).append(record)
    ids = sorted(trials)
    values, states = [], []
    in_progress = 0
    for tid in ids:
        own = trials[tid]
        series = [math.nan if (v := number(r[chosen])) is None else v for r in own]
        values.append(reduce_values(series, how, direction, name, f"trial {tid}"))
        status = own[-1].get("st_status", "Completed").strip() or "Completed"
        if status not in STATUSES:
            raise DataError(f"{shown}: trial {tid}: st_status {status!r:.40} is not one of Syne Tune's")
        state = STATUSES[status]
        if state == "complete" and own[-1].get("st_decision", "").strip() in ("STOP", "PAUSE"):
            state = "pruned"
        in_progress += status == "InProgress" and state == "complete"
        states.append("failed" if state == "complete" and math.isnan(values[-1]) else state)
    facts = [state_note(states), reduce_note(chosen, how, "last", "row")]
    if in_progress:
        facts.append(
            f"{in_progress} trial{'s' if in_progress != 1 else ''} whose last row says InProgress read as complete: "
            f"the results record a status when a report arrives, not how the trial ended (failed or still running?)"
        )
    if "st_status" not in header:
        facts.append("no st_status column: every trial with a value read as complete")
    return (
        Trials(
            name=folder.name,
            metric=chosen,
            direction=direction,
            values=np.array(values, dtype=np.float64),
            states=tuple(states),
            order=np.array(ids, dtype=np.int64),
            order_by="trial_id (Syne Tune numbers trials as it creates them)",
            provenance=_provenance(meta.get("scheduler_name")),
            notes=tuple(facts) + tuple(notes),
        ),
    )


def _provenance(scheduler: object) -> tuple[str, ...]:
    if not isinstance(scheduler, str) or not scheduler:
        return (f"not recorded: no scheduler_name in {METADATA}; not evidence of random search",)
    said = f"scheduler {scheduler!r} ({METADATA})"
    if scheduler in ("RandomSearch",):
        return (f"{said}: random search, as Syne Tune records it",)
    if scheduler in ("GridSearch",):
        return (f"{said}: grid search, not random",)
    if scheduler == "FIFOScheduler":
        return (f"{said}: runs any searcher, which metadata.json does not name; not evidence of random search",)
    if any(m.lower() in scheduler.lower() for m in _MULTI_FIDELITY):
        return (f"{said}: multi-fidelity (trials stopped early are pruned); not random search unless its searcher is",)
    return (f"{said}: an adaptive search, not random search",)
