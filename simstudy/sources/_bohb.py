"""HpBandSter's (BOHB's) result logger files, read with ``json`` (``hpbandster/core/result.py``,
``json_result_logger``): ``configs.json`` and ``results.json`` side by side, ``data=`` their directory or either file.

``configs.json`` is JSON lines ``[config_id, config, config_info]``, one per configuration sampled, in sampling
order; ``config_info["model_based_pick"]`` says whether BOHB's model proposed it (the provenance: false is a random
draw). ``results.json`` is JSON lines ``[config_id, budget, time_stamps, result, exception]``, one per evaluation;
``result`` is ``{"loss": ..., "info": ...}`` or null when the worker raised (``exception``: failed). HpBandSter
minimises the loss: the direction is ``minimize``.

A configuration is one trial, in the order it was sampled. Successive halving evaluates it at growing budgets: its
score is its loss at its largest budget (the default, said in a note, with how many stopped below the largest);
several results at that budget are reduced by ``reduce=`` or refused in one line. A configuration sampled but with
no result is running (or its run was killed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from simstudy.score_files import DataError
from simstudy.sources._files import FILE_COST, check_size, json_lines, number, reduce_note, reduce_values
from simstudy.sources.types import Trials, state_note

FILES = ("configs.json", "results.json")


def looks_like_results(path: Path) -> bool:
    """Whether a file's first line is an HpBandSter result or config line (a config id of three integers first)."""
    try:
        with open(path, "rb") as f:
            obj = json.loads(f.readline(1 << 20))
    except (OSError, ValueError, RecursionError):
        return False
    if not (isinstance(obj, list) and obj and _config_id(obj[0]) is not None):
        return False
    return (len(obj) == 5 and isinstance(obj[2], dict)) or (len(obj) == 3 and isinstance(obj[2], dict))


def _config_id(value: Any) -> tuple[int, ...] | None:
    if (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return tuple(value)
    return None


def read(folder: Path, name: str, *, reduce: str | None) -> tuple[Trials, ...]:
    """The run in ``folder`` (its two files) as one :class:`Trials`, named after the folder."""
    for file in FILES:
        if not (folder / file).is_file() or (folder / file).is_symlink():
            raise DataError(f"{name}: no {file} beside the other: HpBandSter's logger writes both; copy both")
    check_size(folder, name, sum((folder / f).stat().st_size for f in FILES), FILE_COST)
    notes: list[str] = []
    configs: dict[tuple[int, ...], bool | None] = {}
    for line, entry in json_lines(folder / "configs.json", f"{name}/configs.json", notes):
        cid = _config_id(entry[0]) if isinstance(entry, list) and len(entry) == 3 else None
        if cid is None:
            raise DataError(f"{name}/configs.json: line {line}: not [config_id, config, config_info]: {entry!s:.60}")
        info = entry[2] if isinstance(entry[2], dict) else {}
        pick = info.get("model_based_pick")
        configs.setdefault(cid, pick if isinstance(pick, bool) else None)
    results: dict[tuple[int, ...], list[tuple[float, float | None, int]]] = {}
    for line, entry in json_lines(folder / "results.json", f"{name}/results.json", notes):
        cid = _config_id(entry[0]) if isinstance(entry, list) and len(entry) == 5 else None
        budget = number(entry[1]) if cid is not None else None
        if cid is None or budget is None:
            raise DataError(
                f"{name}/results.json: line {line}: not [config_id, budget, time_stamps, result, exception]: "
                f"{entry!s:.60}"
            )
        result, exception = entry[3], entry[4]
        loss = number(result.get("loss")) if isinstance(result, dict) else None
        if isinstance(result, dict) and "loss" in result and loss is None and result["loss"] is not None:
            raise DataError(f"{name}/results.json: line {line}: loss {result['loss']!r:.40} is not a number")
        if cid not in configs:
            raise DataError(f"{name}/results.json: line {line}: config {list(cid)} is not in configs.json")
        results.setdefault(cid, []).append((budget, None if exception or loss is None else loss, line))
    top = max((b for rs in results.values() for b, _, _ in rs), default=0.0)
    values, states = [], []
    lower = several = 0
    for cid in configs:
        own = results.get(cid, [])
        if not own:
            values.append(math.nan)
            states.append("running")
            continue
        budget = max(b for b, _, _ in own)
        lower += budget < top
        at = [loss for b, loss, _ in own if b == budget]
        done = [v for v in at if v is not None]
        if len(at) > 1:
            several += 1
            if reduce is None:
                raise DataError(
                    f"{name}/results.json: config {list(cid)} has {len(at)} results at budget {budget:g}: a "
                    f"configuration is one trial; give reduce=last|best|min|max|mean"
                )
        values.append(reduce_values(done, reduce or "last", "minimize", name, f"config {list(cid)}"))
        states.append("complete" if done else "failed")
    facts = [
        state_note(states, "configurations"),
        f"one score per configuration: its loss at its largest budget (the default); {lower} configuration"
        f"{'s' if lower != 1 else ''} stopped below the largest budget {top:g}",
    ]
    if several:
        facts.append(reduce_note("loss", reduce or "last", "", "result"))
    running = states.count("running")
    if running:
        facts.append(
            f"{running} configuration{'s' if running != 1 else ''} sampled without a result: running or killed"
        )
    return (
        Trials(
            name=folder.name,
            metric="loss",
            direction="minimize",
            values=np.array(values, dtype=np.float64),
            states=tuple(states),
            order=np.arange(len(configs), dtype=np.int64),
            order_by="position in configs.json (the order the configurations were sampled)",
            provenance=_provenance(list(configs.values())),
            notes=tuple(facts) + tuple(notes),
        ),
    )


def _provenance(picks: list[bool | None]) -> tuple[str, ...]:
    known = [p for p in picks if p is not None]
    if not known:
        return ("not recorded: configs.json has no model_based_pick; not evidence of random search",)
    model = sum(known)
    if model == 0:
        return (
            f"model_based_pick false in all {len(known)} configurations: every one drawn at random (HyperBand or "
            f"BOHB before its model starts), as HpBandSter records it",
        )
    return (
        f"model_based_pick true in {model} of {len(picks)} configurations: proposed by BOHB's model, not random search",
    )
