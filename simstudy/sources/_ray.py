"""Ray Tune experiment directories, read with the standard library (``ray/tune``: ``result.json``, ``progress.csv``).

An experiment directory (``~/ray_results/NAME``, ``data=`` the directory) holds a directory per trial with its
reports: ``result.json`` (JSON lines, one per reported iteration; read first) or ``progress.csv`` (the same,
flattened), ``error.txt`` when the trial raised. Beside them Ray keeps ``experiment_state-*.json`` (the trials'
states as JSON, read where it parses; a value Ray stored as a pickle inside it is never decoded), the search
algorithm's state (``basic-variant-state-*.json`` for Ray's own random and grid search, ``search_gen_state-*.json``
or ``searcher-state-*.pkl`` for a search algorithm: their *names* are provenance) and ``tuner.pkl``: never opened,
so the metric and mode given to ``TuneConfig`` are read only where a JSON file records them.

A trial is one score: its reports of the metric reduced by ``reduce=`` (``last`` by default, as Ray's own
``get_best_result(scope="last")``). Trials are ordered by the counter in their trial id (``a1b2c_00007``: Ray
numbers trials in the order its search created them); where an id has no counter, by the first report's
``timestamp``. A trial with ``error.txt``, or without reports, is failed. A symlink in the directory is never
followed; one pointing out of it is refused in one line. Ray's storage path (``~/ray_results``, a directory of
experiments) is read as a study per experiment, named by its directory.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._files import (
    FILE_COST,
    check_size,
    choose_metric,
    csv_rows,
    json_lines,
    load_json,
    number,
    numeric_keys,
    reduce_note,
    reduce_values,
)
from simstudy.sources.types import Trials, state_note

#: The keys Ray Tune adds to every report (``ray/tune/result.py``, ``ray/air/constants.py``): never a metric.
AUTO = frozenset(
    {
        "done", "training_iteration", "trial_id", "date", "timestamp", "time_this_iter_s", "time_total_s", "pid",
        "hostname", "node_ip", "config", "time_since_restore", "iterations_since_restore", "timesteps_since_restore",
        "timesteps_total", "episodes_total", "experiment_id", "experiment_tag", "should_checkpoint",
        "checkpoint_dir_name", "warmup_time", "timesteps_this_iter", "episodes_this_iter",
    }
)  # fmt: skip
#: Ray's trial statuses (``Trial.status`` in ``experiment_state-*.json``) -> the readers' states.
STATUSES = {
    "TERMINATED": "complete",
    "ERROR": "failed",
    "RUNNING": "running",
    "PAUSED": "running",
    "PENDING": "waiting",
}
#: The files of a trial's directory that are read; any other file is left alone.
REPORTS = ("result.json", "progress.csv")
_ID = re.compile(r"(?:^|_)([0-9a-f]{5}_(\d{5}))(?:_|$)")
_MODES = {"max": "maximize", "min": "minimize"}


def looks_like_experiment(path: Path) -> bool:
    """Whether a directory is a Ray Tune experiment: an ``experiment_state-*.json``, or a trial directory with reports."""
    try:
        with os.scandir(path) as it:
            found = list(it)
    except OSError:
        return False
    for entry in found:
        if entry.name.startswith("experiment_state") and entry.name.endswith(".json"):
            return True
    for entry in found:
        if entry.is_dir(follow_symlinks=False) and any(
            os.path.isfile(os.path.join(entry.path, r)) and not os.path.islink(os.path.join(entry.path, r))
            for r in REPORTS
        ):
            return True
    return False


def looks_like_result(path: Path) -> bool:
    """Whether a file is one trial's ``result.json`` (its first line a report with ``trial_id``, ``training_iteration``)."""
    try:
        with open(path, "rb") as f:
            obj = json.loads(f.readline(1 << 20))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and "trial_id" in obj and "training_iteration" in obj


def entries(directory: Path, root: Path, name: str) -> list[os.DirEntry]:
    """The entries of ``directory`` that are not symlinks; a symlink out of ``root`` is one line, others skipped."""
    out = []
    with os.scandir(directory) as it:
        for entry in sorted(it, key=lambda e: e.name):
            if entry.is_symlink():
                target = Path(os.path.realpath(entry.path))
                if not target.is_relative_to(root):
                    shown = Path(entry.path).relative_to(root)
                    raise DataError(
                        f"{name}: {shown} is a symlink out of the experiment directory (to {target}): not followed; "
                        f"copy what it points to into the directory"
                    )
                continue  # inside the directory: what it points to is read where it lives, never twice
            out.append(entry)
    return out


def _state_file(
    listed: list[os.DirEntry], name: str, notes: list[str]
) -> tuple[dict[str, str], str | None, str | None]:
    """From the newest ``experiment_state-*.json``: trial id -> Ray status, and the metric and mode if recorded."""
    states = [e for e in listed if e.name.startswith("experiment_state") and e.name.endswith(".json")]
    statuses: dict[str, str] = {}
    if not states:
        return statuses, None, None
    newest = max(states, key=lambda e: e.name)  # Ray names them by the session's date: the newest sorts last
    doc = load_json(Path(newest.path), f"{name}/{newest.name}")
    metric = mode = None
    if isinstance(doc, dict):
        for holder in (doc, doc.get("runner_data"), doc.get("experiment_state")):
            if isinstance(holder, dict):
                metric = metric or _text(holder, "metric", "_metric")
                mode = mode or _text(holder, "mode", "_mode")
        for item in doc.get("trial_data", []) if isinstance(doc.get("trial_data"), list) else []:
            trial = _trial_state(item)
            if trial is not None and isinstance(trial.get("trial_id"), str) and isinstance(trial.get("status"), str):
                statuses[trial["trial_id"]] = trial["status"]
    if not statuses:
        notes.append(f"{newest.name} records no trial states this reader can read as JSON: states from the files")
    return statuses, metric, mode


def _text(holder: dict, *keys: str) -> str | None:
    for key in keys:
        if isinstance(holder.get(key), str):
            return holder[key]
    return None


def _trial_state(item: Any) -> dict | None:
    first = item[0] if isinstance(item, list) and item else item
    if isinstance(first, str):
        try:
            first = json.loads(first)
        except (ValueError, RecursionError):
            return None
    return first if isinstance(first, dict) else None


def _flat(report: dict, prefix: str = "") -> dict:
    """A report with its nested metrics named as ``progress.csv`` names them (``val/acc``); ``config`` left as is."""
    out: dict = {}
    for key, value in report.items():
        if isinstance(value, dict) and not (key == "config" and not prefix):
            out.update(_flat(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _reports(trial_dir: Path, files: set[str], name: str, notes: list[str]) -> list[dict]:
    shown = f"{name}/{trial_dir.name}"
    if "result.json" in files:
        reports = []
        for line, value in json_lines(trial_dir / "result.json", f"{shown}/result.json", notes):
            if not isinstance(value, dict):
                raise DataError(f"{shown}/result.json: line {line}: not a report (a JSON object): {value!s:.60}")
            reports.append(_flat(value))
        return reports
    if "progress.csv" in files:
        check_size(trial_dir / "progress.csv", f"{shown}/progress.csv")
        with open(trial_dir / "progress.csv", encoding="utf-8", newline="") as f:
            header, rows = csv_rows(f, f"{shown}/progress.csv")
        return [dict(zip(header, row)) for row in rows]
    return []


def _provenance(names: list[str]) -> tuple[str, ...]:
    found = []
    if any(n.startswith("basic-variant-state") for n in names):
        found.append(
            "BasicVariantGenerator (Ray's default search: random sampling and grid_search of param_space; file "
            "basic-variant-state-*.json): random search unless param_space holds grid_search"
        )
    searcher = sorted(n for n in names if n.startswith(("search_gen_state", "searcher-state")))
    if searcher:
        found.append(
            f"a search algorithm (SearchGenerator: Optuna, HyperOpt, BayesOpt...; file {searcher[0]}): an adaptive "
            f"search, not random search"
        )
    if not found:
        found.append(
            "not recorded: no search algorithm state in the directory (tuner.pkl is never opened); not evidence of "
            "random search"
        )
    return tuple(found)


def read(root: Path, name: str, *, metric: str | None, reduce: str | None) -> tuple[Trials, ...]:
    """The experiment in directory ``root`` as one :class:`Trials` (the directory's name is the study's)."""
    root = Path(os.path.realpath(root))
    listed = entries(root, root, name)
    notes: list[str] = []
    statuses, recorded, mode = _state_file(listed, name, notes)
    trial_dirs = []
    for entry in listed:
        if not entry.is_dir(follow_symlinks=False):
            continue
        files = {e.name for e in entries(Path(entry.path), root, name) if e.is_file(follow_symlinks=False)}
        if files & {*REPORTS, "params.json", "error.txt"}:
            trial_dirs.append((Path(entry.path), files))
    total = sum(os.path.getsize(d / r) for d, files in trial_dirs for r in REPORTS if r in files)
    check_size(root, name, total, FILE_COST)
    ids, reports, failed_files = [], [], []
    for trial_dir, files in trial_dirs:
        got = _reports(trial_dir, files, name, notes)
        found = _ID.search(trial_dir.name)
        trial_id = got[0].get("trial_id") if got and isinstance(got[0].get("trial_id"), str) else None
        ids.append(trial_id or (found.group(1) if found else trial_dir.name))
        reports.append(got)
        failed_files.append("error.txt" in files)
    if not trial_dirs:
        raise DataError(f"{name}: a Ray Tune experiment directory without trial directories (no result.json)")
    seen: dict[str, str] = {}
    for trial_id, (trial_dir, _) in zip(ids, trial_dirs):
        if trial_id in seen:
            raise DataError(
                f"{name}: trial {trial_id!r} in two directories ({seen[trial_id]}, {trial_dir.name}): a copied "
                f"trial is not a second trial; remove one"
            )
        seen[trial_id] = trial_dir.name
    candidates = numeric_keys(
        (r for rs in reports for r in rs),
        AUTO | {k for rs in reports for r in rs for k in r if k.startswith("config/")},
    )
    chosen = choose_metric(name, "the experiment", candidates, metric, None if metric else recorded)
    direction = _MODES.get(mode or "") if chosen == recorded else None  # a mode says nothing of another metric
    how = reduce or "last"
    counters = [_ID.search(i) for i in ids]
    if all(counters):
        order = [int(m.group(2)) for m in counters]  # type: ignore[union-attr]
        order_by = "trial index (the counter in Ray's trial id: the order the search created the trials)"
    else:
        order = [
            int(1000 * (number(rs[0].get("timestamp")) or -1)) if rs else -1000 for rs in reports
        ]  # ms; a trial without reports first
        order_by = "first report's time (ms since 1970, UTC; -1000 for a trial without reports)"
    values, states = [], []
    no_reports = no_metric = 0
    for trial_id, rs, error in zip(ids, reports, failed_files):
        series = [math.nan if (v := number(r.get(chosen))) is None else v for r in rs]
        value = reduce_values(series, how, direction, name, f"trial {trial_id}") if rs else math.nan
        status = STATUSES.get(statuses.get(trial_id, ""), None)
        if error:
            state = "failed"
        elif status is not None:
            state = status
        elif not rs:
            state = "failed"
            no_reports += 1
        else:
            state = "complete"
        if state == "complete" and math.isnan(value):
            state = "failed"
            no_metric += 1
        values.append(value)
        states.append(state)
    rank = sorted(range(len(ids)), key=lambda i: (order[i], ids[i]))
    facts = [state_note([states[i] for i in rank]), reduce_note(chosen, how, "last")]
    unseen = sorted(set(statuses) - set(ids))
    if unseen:
        facts.append(
            f"{len(unseen)} trial{'s' if len(unseen) != 1 else ''} in the experiment state without a directory "
            f"({', '.join(unseen[:3])}{' ...' if len(unseen) > 3 else ''}): not started, not read"
        )
    if recorded and metric is None:
        facts.append(f"metric {recorded!r} as the experiment state records it")
    if sum(failed_files):
        facts.append(f"{sum(failed_files)} trial{'s' if sum(failed_files) != 1 else ''} with error.txt: failed")
    if no_reports:
        facts.append(f"{no_reports} trial{'s' if no_reports != 1 else ''} without reports: failed")
    if no_metric:
        facts.append(f"{no_metric} trial{'s' if no_metric != 1 else ''} never reported {chosen!r}: failed")
    return (
        Trials(
            name=root.name,
            metric=chosen,
            direction=direction,
            values=np.array([values[i] for i in rank], dtype=np.float64),
            states=tuple(states[i] for i in rank),
            order=np.array([order[i] for i in rank], dtype=np.int64),
            order_by=order_by,
            provenance=_provenance([e.name for e in listed]),
            notes=tuple(facts) + tuple(notes),
        ),
    )
