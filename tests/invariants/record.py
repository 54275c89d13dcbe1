"""Record the exact numbers the restructure of issue 26 must keep: every preset's summary and the quick catalogue.

Run against a checkout of the revision to pin (the main before the issue, ``8f237ca``)::

    git worktree add --detach /tmp/base26 8f237ca
    PYTHONPATH=/tmp/base26 python tests/invariants/record.py            # presets.json
    PYTHONPATH=/tmp/base26 python tests/invariants/record.py catalogue  # catalogue.json (a few minutes)

``tests/invariants/test_invariants.py`` recomputes both on the current tree and compares them bit for bit.

========================  ========================================================================================
:func:`preset_overrides`  the small fixed scale each preset runs at (the catalogue's quick overrides)
:func:`fingerprint`       a summary frame as per-column sha256 of its exact bytes, plus its cells as ``float.hex``
:func:`run_preset`        one preset through ``simstudy.run`` in a temporary run directory, fingerprinted
:func:`report_numbers`    the numbers of each entry of a quick ``REPRODUCTION.md``, wall times left out
:func:`first_difference`  the first cell where two fingerprints differ, for a readable failure
========================  ========================================================================================

Only ``simstudy.run`` (present before and after the restructure) and the command line are used, so this file
runs unchanged against either tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PRESETS_JSON = HERE / "presets.json"
CATALOGUE_JSON = HERE / "catalogue.json"
#: Presets the catalogue has no quick scale for; a few replicates keep them to seconds.
EXTRA_QUICK = {
    "parametric_audit": ["study.reps=8", "study.chunk_reps=8", "study.n_boot=20"],
    # Recorded when it was added (issue 27), not at 8f237ca: two populations (needs simstudy[benchmarks]).
    # Re-recorded for issue 34: 12 rows of Q4's upper_gap added, every earlier row bit-identical.
    "field_audit": [
        "study.populations=[hpobench/australian,nasbench201/cifar10]",
        "study.sample_sizes=[24]",
        "study.reps=40",
        "study.chunk_reps=20",
        "study.fit_reps=4",
        "study.n_boot=5",
    ],
}
#: Columns a summary may have beyond the recorded ones (after them, in any order), added since the recording
#: (issue 28): the recorded columns must still come first, in order, bit for bit; no other column may appear.
ADDED_COLUMNS = ("lower_joint", "upper_joint", "target", "reached_precision")
#: Cells kept as ``float.hex`` per column (the hash covers every cell; these name the first differing one): of
#: a preset's summary, and of each summary the quick catalogue writes (34 of them: fewer rows keep the file small).
ROWS, CATALOGUE_ROWS = 50, 10


def presets(root: Path = ROOT) -> list[str]:
    """The preset names, ``configs/experiment/*.yaml``, sorted."""
    return sorted(p.stem for p in (root / "configs" / "experiment").glob("*.yaml"))


def preset_overrides(name: str, root: Path = ROOT) -> list[str]:
    """The quick overrides of the catalogue entry whose command is ``[experiment=name]``, else EXTRA_QUICK's."""
    for entry in yaml.safe_load((root / "experiments" / "reproduction.yaml").read_text()):
        if entry.get("command") == [f"experiment={name}"]:
            return [str(o) for o in entry.get("quick", [])]
    return list(EXTRA_QUICK[name])


def _cell(value) -> str:
    if isinstance(value, (float, np.floating)):
        return float(value).hex()
    return repr(value.item() if isinstance(value, np.generic) else value)


def fingerprint(frame, rows: int = ROWS) -> dict:
    """Per-column sha256 of the exact values (float64 bits for numbers) and the first ``rows`` cells as text."""
    columns = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        if values.dtype.kind in "fiub":
            data = np.ascontiguousarray(values.astype(np.float64 if values.dtype.kind == "f" else values.dtype))
            digest = hashlib.sha256(str(data.dtype).encode() + data.tobytes()).hexdigest()
        else:
            digest = hashlib.sha256("\x1f".join(map(_cell, values)).encode()).hexdigest()
        columns[str(name)] = {"sha256": digest, "head": [_cell(v) for v in values[:rows]]}
    return {"rows": len(frame), "columns": columns}


def first_difference(expected: dict, actual: dict) -> str | None:
    """Where two fingerprints first differ (shape, column set, then the first cell), or None when equal.

    ``actual`` may have columns of :data:`ADDED_COLUMNS` after the recorded ones (not compared)."""
    if expected["rows"] != actual["rows"]:
        return f"{actual['rows']} rows, recorded {expected['rows']}"
    recorded, got = list(expected["columns"]), list(actual["columns"])
    added = got[len(recorded) :]
    if got[: len(recorded)] != recorded or not set(added) <= set(ADDED_COLUMNS):
        return f"columns {got}, recorded {recorded} (beyond them only {', '.join(ADDED_COLUMNS)} may follow)"
    for name, want in expected["columns"].items():
        got = actual["columns"][name]
        if got["sha256"] == want["sha256"]:
            continue
        for row, (w, g) in enumerate(zip(want["head"], got["head"])):
            if w != g:
                return f"column {name!r}, row {row}: {g}, recorded {w}"
        return f"column {name!r}: differs beyond the first {len(want['head'])} rows"
    return None


def run_preset(name: str, root: Path = ROOT) -> dict:
    """Run one preset at its quick scale in this process (``simstudy.run``); its summary's fingerprint."""
    import simstudy

    overrides = [*preset_overrides(name, root), "runner.progress=false", "runner.n_jobs=1"]
    with tempfile.TemporaryDirectory() as tmp:
        result = simstudy.run(name, overrides, out_dir=Path(tmp) / name)
        return {"overrides": overrides, **fingerprint(result.summary)}


_WALL = re.compile(r"\d+(?:\.\d+)? s\b|\*\*[0-9.]+ minutes on \d+ cores\*\*|[0-9.]+ minutes")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?")


def report_numbers(report: str) -> dict:
    """The numbers of each entry section of a ``REPRODUCTION.md`` (wall times left out), by entry id."""
    parts = re.split(r'<a id="([a-z0-9_]+)"></a>', report)
    sections = {"_header": parts[0], **dict(zip(parts[1::2], parts[2::2]))}
    out = {}
    for key, text in sections.items():
        lines = [_WALL.sub("", line) for line in text.splitlines() if "wall time" not in line.lower()]
        out[key] = [n for line in lines for n in _NUMBER.findall(line)]
    return out


def run_catalogue(root: Path = ROOT, env: dict | None = None) -> dict:
    """``simstudy reproduce --quick`` in a temporary directory: each entry's numbers and summary fingerprints."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "simstudy.cli", "reproduce", "--quick", "n_jobs=2"], cwd=tmp,
                       env=env, check=True, capture_output=True, text=True, timeout=1800)
        out = Path(tmp) / "outputs" / "reproduce-quick"
        summaries = {str(p.relative_to(out)): fingerprint(pd.read_parquet(p), CATALOGUE_ROWS)
                     for p in sorted(out.rglob("summary.parquet"))}
        return {"numbers": report_numbers((out / "REPRODUCTION.md").read_text()), "summaries": summaries}


def clean_env() -> dict:
    """This process's environment without Hydra's variables (a run inside a run would inherit them)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}


def main(argv: list[str]) -> None:
    if argv[:1] == ["catalogue"]:
        CATALOGUE_JSON.write_text(json.dumps(run_catalogue(env=clean_env()), indent=1) + "\n")
        return
    names = argv or presets()
    recorded = json.loads(PRESETS_JSON.read_text()) if argv and PRESETS_JSON.exists() else {}
    for name in names:
        print(name, flush=True)
        recorded[name] = run_preset(name)
    PRESETS_JSON.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
