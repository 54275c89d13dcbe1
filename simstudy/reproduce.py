"""Reproducing the papers: the catalogue of results, verdicts computed from the numbers, ``REPRODUCTION.md``.

The catalogue (``experiments/reproduction.yaml``; inside the package in a wheel) lists one entry per paper
result: the ``simstudy`` command that regenerates it, the overrides of a quick smoke-scale run, and checks
that compare our tidy summary with the paper's published numbers or claims. A verdict is never written by
hand: an entry is *reproduced* when every judged check passes and *differs* otherwise, each failed check
carrying its reason when the cause is known (a stand-in data set, an unstated setting).

Check kinds, each on the summary rows selected by ``where`` (column -> value or list of values):

- ``value``: every estimate within ``max(k * mcse, tol)`` of ``paper`` (or of ``paper_by[column][value]``);
- ``above`` / ``below``: every ``estimate -/+ k * mcse`` beyond ``bound`` (a number, a column, or ``bound_by``);
- ``increasing``: estimates strictly increase through the ``order`` selections, at every value of ``by``;
- ``crosses``: the same order holds at some values of ``by`` and fails at others (curves cross);
- ``covers``: ``ci_low <= column <= ci_high`` in at least ``min_fraction`` of the rows;
- ``count``: between ``at_least`` and ``at_most`` rows match ``where``;
- ``run_value``: the number at ``path`` in ``run.json`` within ``tol`` of ``paper``.

``info: true`` shows a number beside the paper's without judging it.

An entry that differs may list ``hypotheses``: concrete things the paper may have done that our reading of it
does not (another budget grid, rounding, model set, counting convention), each a full ``simstudy`` command
judged by the same checks (or its own, where the entry's cannot select its rows). The verdicts:

=============  ==============================================================================================
``reproduced``  every judged check of the entry's own run passes
``explained``   the entry's run differs, and some hypothesis passes every check: the gap has a mechanism
``differs``     neither; the report names the best hypothesis (most checks passed, then nearest the paper)
=============  ==============================================================================================

The runs themselves are the CLI's business (:mod:`simstudy.cli`); this module reads their outputs and writes
the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import io

#: Beside a report: the files ``simstudy reproduce`` wrote there, with their SHA-256. Only those, unchanged, are
#: ever overwritten; any other file in their place (a user's own report or figure) is refused.
MARKER = ".simstudy-reproduce.json"
_REPORT = "REPRODUCTION.md"
_ANCHOR = re.compile(r'^<a id="([A-Za-z0-9_.-]+)"></a>$', flags=re.M)

__all__ = [
    "CHECK_KINDS",
    "MARKER",
    "VERDICTS",
    "Check",
    "Entry",
    "Hypothesis",
    "HypothesisRun",
    "OutDirError",
    "Outcome",
    "Section",
    "best_hypothesis",
    "catalogue_path",
    "check_out_dir",
    "evaluate",
    "hypothesis_dir",
    "kept_section",
    "load_catalogue",
    "read_hypothesis",
    "read_report",
    "read_section",
    "record_full_run",
    "section_seconds",
    "verdict",
    "write_report",
]

#: Every verdict, in the order the report counts them.
VERDICTS = ("reproduced", "explained", "differs", "failed", "no data")

CHECK_KINDS = ("value", "above", "below", "increasing", "crosses", "covers", "count", "run_value")
_ENTRY_KEYS = {
    "id",
    "title",
    "paper",
    "command",
    "quick",
    "checks",
    "stand_in",
    "figure",
    "table",
    "estimate",
    "unavailable",
    "hypotheses",
}
_HYPOTHESIS_KEYS = {"id", "label", "command", "quick", "checks"}
_ID = re.compile(r"^[a-z0-9_]+$")
_CHECK_KEYS = {
    "label",
    "kind",
    "where",
    "paper",
    "paper_by",
    "k",
    "tol",
    "bound",
    "bound_by",
    "order",
    "by",
    "column",
    "min_fraction",
    "at_least",
    "at_most",
    "path",
    "info",
    "reason",
}


class CatalogueError(ValueError):
    """An invalid entry in the reproduction catalogue."""


@dataclass(frozen=True)
class Check:
    label: str
    kind: str
    spec: dict
    info: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Hypothesis:
    """Something the paper may have done that the entry's own command does not, as a full ``simstudy`` command.

    ``quick`` are its overrides at quick scale (default: the entry's); ``checks`` judge it (default: the
    entry's own, so the same published numbers and tolerances)."""

    id: str
    label: str
    command: tuple[str, ...]
    quick: tuple[str, ...] | None = None
    checks: tuple[Check, ...] | None = None


@dataclass(frozen=True)
class Entry:
    """One reproduced result: how to run it, at paper and quick scale, and how to judge it."""

    id: str
    title: str
    paper: str
    command: tuple[str, ...]
    quick: tuple[str, ...]
    checks: tuple[Check, ...]
    stand_in: str = ""
    figure: str = "figure.png"
    table: str = "summary.parquet"  # the run's tidy output the checks read
    estimate: str = "estimate"  # its column of point estimates
    unavailable: str = ""  # why the result cannot be regenerated here (then nothing is run)
    hypotheses: tuple[Hypothesis, ...] = ()

    def quick_for(self, hypothesis: Hypothesis) -> tuple[str, ...]:
        """A hypothesis's quick-scale overrides: its own, else the entry's."""
        return self.quick if hypothesis.quick is None else hypothesis.quick

    def checks_for(self, hypothesis: Hypothesis) -> tuple[Check, ...]:
        """The checks that judge a hypothesis: its own, else the entry's."""
        return self.checks if hypothesis.checks is None else hypothesis.checks


@dataclass(frozen=True)
class Outcome:
    """A check's result: the paper's number or claim, ours (with MCSE), and whether it passed (None: not judged)."""

    label: str
    paper: str
    ours: str
    passed: bool | None
    reason: str = ""
    excess: float = float("nan")  # value checks: max |ours - paper| / allowed difference (<= 1 passes)


@dataclass(frozen=True)
class HypothesisRun:
    """A hypothesis's run: its command as shown, its outcomes, wall time, and the error if it did not finish."""

    hypothesis: Hypothesis
    command: str
    outcomes: tuple[Outcome, ...]
    wall_seconds: float
    error: str = ""

    @property
    def passed(self) -> int:
        """How many of its judged checks pass."""
        return sum(o.passed is True for o in self.outcomes)

    @property
    def judged(self) -> int:
        return sum(o.passed is not None for o in self.outcomes)

    @property
    def reproduces(self) -> bool:
        """Every judged check passes (and the run finished)."""
        return not self.error and self.judged > 0 and self.passed == self.judged


@dataclass(frozen=True)
class Section:
    """One entry's part of the report; ``kept`` is its text in an earlier report, reused as it is (its run is
    not here to read again)."""

    entry: Entry
    outcomes: tuple[Outcome, ...]
    command: str
    wall_seconds: float
    figure: Path | None
    error: str = ""
    kept: str = ""
    hypotheses: tuple[HypothesisRun, ...] = ()


def catalogue_path() -> Path:
    """The catalogue: inside the package in a wheel, ``experiments/`` at the top of a source tree."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "experiments" / "reproduction.yaml", here.parent / "experiments" / "reproduction.yaml"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"the reproduction catalogue (experiments/reproduction.yaml) not found beside {here}")


def load_catalogue(path: str | Path | None = None) -> list[Entry]:
    """Read and validate the catalogue; an invalid entry raises :class:`CatalogueError` naming it and the field."""
    import yaml  # PyYAML comes with hydra-core

    raw = yaml.safe_load(Path(path or catalogue_path()).read_text())
    if not isinstance(raw, list) or not raw:
        raise CatalogueError("the reproduction catalogue must be a non-empty list of entries")
    entries, seen = [], set()
    for i, e in enumerate(raw):
        name = e.get("id", f"#{i + 1}") if isinstance(e, dict) else f"#{i + 1}"
        if (
            not isinstance(e, dict)
            or not {"id", "title", "paper"} <= set(e)
            or not ({"command", "checks"} <= set(e) or "unavailable" in e)
        ):
            raise CatalogueError(f"entry {name}: needs id, title, paper, and command and checks (or unavailable)")
        if set(e) - _ENTRY_KEYS:
            raise CatalogueError(f"entry {name}: unknown keys {sorted(set(e) - _ENTRY_KEYS)}")
        if name in seen:
            raise CatalogueError(f"entry {name}: the id is used twice")
        seen.add(name)
        entries.append(
            Entry(
                name,
                e["title"],
                e["paper"],
                tuple(e.get("command", ())),
                tuple(e.get("quick", ())),
                _checks(name, e.get("checks", ())),
                e.get("stand_in", ""),
                e.get("figure", "figure.png"),
                e.get("table", "summary.parquet"),
                e.get("estimate", "estimate"),
                e.get("unavailable", ""),
                _hypotheses(name, e.get("hypotheses", [])),
            )
        )
    return entries


def _checks(name: str, raw) -> tuple[Check, ...]:
    checks = []
    for c in raw or ():
        if not isinstance(c, dict) or c.get("kind") not in CHECK_KINDS:
            raise CatalogueError(
                f"entry {name}: check kind must be one of {', '.join(CHECK_KINDS)}, "
                f"got {c.get('kind') if isinstance(c, dict) else c!r}"
            )
        if set(c) - _CHECK_KEYS or "label" not in c:
            raise CatalogueError(
                f"entry {name}: check {c.get('label')!r} has unknown keys {sorted(set(c) - _CHECK_KEYS)} or no label"
            )
        spec = {k: v for k, v in c.items() if k not in ("label", "kind", "info", "reason")}
        checks.append(Check(c["label"], c["kind"], spec, bool(c.get("info", False)), c.get("reason", "")))
    return tuple(checks)


def _hypotheses(name: str, raw) -> tuple[Hypothesis, ...]:
    if not isinstance(raw, list):
        raise CatalogueError(f"entry {name}: hypotheses must be a list, got {raw!r}")
    out, seen = [], set()
    for h in raw:
        hid = h.get("id") if isinstance(h, dict) else None
        if not isinstance(h, dict) or not {"id", "label", "command"} <= set(h):
            raise CatalogueError(f"entry {name}: hypothesis {hid or repr(h)} needs id, label and command")
        if set(h) - _HYPOTHESIS_KEYS:
            raise CatalogueError(f"entry {name}: hypothesis {hid}: unknown keys {sorted(set(h) - _HYPOTHESIS_KEYS)}")
        if not isinstance(hid, str) or not _ID.match(hid) or hid in seen:
            raise CatalogueError(
                f"entry {name}: hypothesis id {hid!r} must be lower-case letters, digits and _, unique within the entry"
            )
        if not isinstance(h["command"], list) or not h["command"]:
            raise CatalogueError(f"entry {name}: hypothesis {hid}: command must be a non-empty list of arguments")
        seen.add(hid)
        out.append(
            Hypothesis(
                hid,
                str(h["label"]),
                tuple(str(a) for a in h["command"]),
                None if h.get("quick") is None else tuple(str(a) for a in h["quick"]),
                None if h.get("checks") is None else _checks(f"{name} (hypothesis {hid})", h["checks"]),
            )
        )
    return tuple(out)


# --- Checks ---------------------------------------------------------------------------------------------


def _select(frame: pd.DataFrame, where: dict) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for column, value in where.items():
        if column not in frame:
            raise ValueError(f"no column {column!r} in the summary (columns: {', '.join(frame.columns)})")
        values = value if isinstance(value, list) else [value]
        col = frame[column]
        if pd.api.types.is_numeric_dtype(col):
            mask &= np.isclose(col.to_numpy(dtype=float)[:, None], np.asarray(values, dtype=float)[None, :]).any(1)
        else:
            mask &= col.isin([str(v) for v in values]).to_numpy()
    rows = frame[mask]
    if rows.empty:
        raise KeyError(f"no summary rows match {where}")
    return rows


def _by_value(mapping: dict, rows: pd.DataFrame) -> np.ndarray:
    """Per row, the value that ``mapping['values']`` gives for the row's ``mapping['column']``."""
    keys = {float(k): float(v) for k, v in mapping["values"].items()}
    return np.array([keys[min(keys, key=lambda k: abs(k - x))] for x in rows[mapping["column"]].astype(float)])


def _mcse(rows: pd.DataFrame) -> np.ndarray:
    return np.nan_to_num(rows["mcse"].to_numpy(dtype=float), nan=0.0) if "mcse" in rows else np.zeros(len(rows))


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _ours(rows: pd.DataFrame) -> str:
    est, mcse = rows["estimate"].to_numpy(dtype=float), _mcse(rows)
    shown = [(_fmt(e) + (f" ± {_fmt(s)}" if s > 0 else "")) for e, s in zip(est[:6], mcse[:6])]
    return ", ".join(shown) + (f" (+{len(est) - 6} more)" if len(est) > 6 else "")


def _check(check: Check, summary: pd.DataFrame, run: dict) -> Outcome:
    s = check.spec
    k = float(s.get("k", 3 if check.kind == "value" else 0))
    if check.kind == "run_value":
        value: Any = run
        for part in s["path"].split("."):
            value = value[part]
        ok = None if check.info else abs(float(value) - float(s["paper"])) <= float(s.get("tol", 0))
        return Outcome(check.label, _fmt(s["paper"]), _fmt(float(value)), ok, check.reason)
    try:
        rows = _select(summary, s.get("where", {}))
    except KeyError:
        if check.kind != "count":
            raise
        rows = summary.iloc[:0]
    if check.kind == "count":
        low, high = int(s.get("at_least", 0)), s.get("at_most")
        ok = low <= len(rows) and (high is None or len(rows) <= int(high))
        paper_text = f">= {low} rows" if high is None else f"{low} to {high} rows"
        return Outcome(check.label, paper_text, f"{len(rows)} rows", None if check.info else ok, check.reason)
    est, mcse = rows["estimate"].to_numpy(dtype=float), _mcse(rows)
    if check.kind == "value":
        paper = _by_value(s["paper_by"], rows) if "paper_by" in s else np.full(len(rows), float(s["paper"]))
        allowed = np.maximum(k * mcse, float(s.get("tol", 0)))
        gap = np.abs(est - paper)
        ok = bool(np.all(gap <= allowed))
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = float(np.max(np.where(gap == 0, 0.0, gap / allowed)))
        paper_text = " / ".join(_fmt(p) for p in paper[:6])
        return Outcome(check.label, paper_text, _ours(rows), None if check.info else ok, check.reason, excess)
    if check.kind in ("above", "below"):
        if "bound_by" in s:
            bound = _by_value(s["bound_by"], rows)
        elif isinstance(s["bound"], str):
            bound = rows[s["bound"]].to_numpy(dtype=float)
        else:
            bound = np.full(len(rows), float(s["bound"]))
        ok = bool(np.all(est - k * mcse > bound) if check.kind == "above" else np.all(est + k * mcse < bound))
        word = ">" if check.kind == "above" else "<"
        paper_text = (
            f"{word} {s['bound']}"
            if isinstance(s.get("bound"), str)
            else f"{word} " + " / ".join(_fmt(b) for b in np.unique(bound))
        )
        if k:
            paper_text += f" (by {k:g} MCSE)" if k > 0 else f" (within {-k:g} MCSE)"
        return Outcome(check.label, paper_text, _ours(rows), None if check.info else bool(ok), check.reason)
    if check.kind in ("increasing", "crosses"):
        by = s.get("by")
        parts = [_select(rows, o) for o in s["order"]]
        if by:
            table = pd.concat([p.groupby(by)["estimate"].mean() for p in parts], axis=1).dropna()
        else:
            table = pd.DataFrame([[p["estimate"].mean() for p in parts]])
        holds = (np.diff(table.to_numpy(), axis=1) > 0).all(axis=1)
        if check.kind == "increasing":
            ok = bool(holds.all()) and not table.empty
        else:
            ok = bool(holds.any() and not holds.all())
        names = " < ".join("/".join(str(v) for v in o.values()) for o in s["order"])
        if check.kind == "crosses":
            names = f"{names} at some {by}, not at others"
        ours = f"holds at {int(holds.sum())} of {len(table)}" + (f" values of {by}" if by else "")
        return Outcome(check.label, names, ours, None if check.info else ok, check.reason)
    if check.kind == "covers":
        inside = (rows["ci_low"] <= rows[s["column"]]) & (rows[s["column"]] <= rows["ci_high"])
        fraction = float(inside.mean())
        need = float(s.get("min_fraction", 1.0))
        return Outcome(
            check.label,
            f"inside in >= {need:.0%}",
            f"{inside.sum()} of {len(rows)} ({fraction:.1%})",
            None if check.info else fraction >= need,
            check.reason,
        )
    raise AssertionError(check.kind)


def evaluate(
    entry: Entry, summary: pd.DataFrame, run: dict, hypothesis: Hypothesis | None = None
) -> tuple[Outcome, ...]:
    """Every check of ``entry`` (or of one of its hypotheses) on a finished run's tidy output and ``run.json``
    (empty for commands without one)."""
    summary = summary.rename(columns={entry.estimate: "estimate"})
    checks = entry.checks if hypothesis is None else entry.checks_for(hypothesis)
    return tuple(_check(c, summary, run) for c in checks)


def hypothesis_dir(runs: str | Path, entry: Entry, hypothesis: Hypothesis) -> Path:
    """Where a hypothesis runs: ``<runs>/<entry>--<hypothesis>``, beside the entry's own run."""
    return Path(runs) / f"{entry.id}--{hypothesis.id}"


def _outcomes(entry: Entry, run_dir: Path, hypothesis: Hypothesis | None = None) -> tuple[Outcome, ...]:
    import json

    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").is_file() else {}
    table = run_dir / entry.table
    frame = pd.read_csv(table) if table.suffix == ".csv" else pd.read_parquet(table)
    return evaluate(entry, frame, run, hypothesis)


def _wall_seconds(run_dir: Path, seconds: float | None) -> float:
    """The wall time of the run that computed ``run_dir``: ``seconds`` (the run just made) is recorded in
    ``reproduce.json`` whenever it computed something, so a later resumed run reports the computing run's
    time rather than its own."""
    import json

    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").is_file() else {}
    timing = run_dir / "reproduce.json"
    if seconds is not None and (run.get("runner", {}).get("computed", 1) > 0 or not timing.is_file()):
        io.write_json({"wall_seconds": seconds}, timing)
    return json.loads(timing.read_text())["wall_seconds"] if timing.is_file() else 0.0


def read_hypothesis(
    entry: Entry, hypothesis: Hypothesis, run_dir: Path, command: str, seconds: float | None, error: str = ""
) -> HypothesisRun:
    """A hypothesis's outcomes from its finished run in ``run_dir`` (see :func:`read_section` for ``seconds``)."""
    if error:
        return HypothesisRun(hypothesis, command, (), seconds or 0.0, error)
    seconds = _wall_seconds(run_dir, seconds)
    return HypothesisRun(hypothesis, command, _outcomes(entry, run_dir, hypothesis), seconds)


def read_section(
    entry: Entry,
    run_dir: Path,
    command: str,
    seconds: float | None,
    error: str = "",
    hypotheses: tuple[HypothesisRun, ...] = (),
) -> Section:
    """An entry's section from its finished run in ``run_dir`` and its hypotheses' runs.

    ``seconds`` is the wall time of the run just made (None: none was made). It is kept in
    ``reproduce.json`` whenever the run computed something, so that a later, resumed run reports the time of
    the run that did the work rather than its own.
    """
    if entry.unavailable or error:
        return Section(entry, (), command, seconds or 0.0, None, error, hypotheses=hypotheses)
    seconds = _wall_seconds(run_dir, seconds)
    figure = run_dir / entry.figure
    return Section(
        entry, _outcomes(entry, run_dir), command, seconds, figure if figure.is_file() else None, hypotheses=hypotheses
    )


def best_hypothesis(runs) -> HypothesisRun | None:
    """The hypothesis nearest the paper: the most judged checks passed, then the smallest largest excess over
    the allowed difference among its value checks (``Outcome.excess``), then the catalogue's order."""
    finished = [h for h in runs if not h.error]
    if not finished:
        return None

    def distance(h: HypothesisRun) -> float:
        excess = [o.excess for o in h.outcomes if o.passed is not None and np.isfinite(o.excess)]
        return max(excess, default=0.0)

    return min(finished, key=lambda h: (-h.passed / max(h.judged, 1), distance(h)))


def verdict(section: Section) -> str:
    """One of :data:`VERDICTS`: ``no data`` (not runnable here), ``failed`` (the run did not finish),
    ``reproduced`` (every judged check passed), ``explained`` (it did not, but a hypothesis passes every check
    of its own) or ``differs``.

    Example
    -------
    >>> entry = Entry("e", "t", "p", ("x",), (), (Check("c", "value", {}),))
    >>> differs = Section(entry, (Outcome("c", "1", "2", False),), "simstudy x", 1.0, None)
    >>> verdict(differs)
    'differs'
    >>> h = HypothesisRun(Hypothesis("h", "what the paper did", ("y",)), "simstudy y",
    ...                   (Outcome("c", "1", "1", True),), 1.0)
    >>> verdict(Section(entry, differs.outcomes, "simstudy x", 1.0, None, hypotheses=(h,)))
    'explained'
    """
    if section.kept:
        found = re.search(r"\*\*Verdict: ([a-z ]+)\.\*\*", section.kept)
        return found.group(1) if found else "differs"
    if section.entry.unavailable:
        return "no data"
    if section.error:
        return "failed"
    if all(o.passed is not False for o in section.outcomes):
        return "reproduced"
    return "explained" if any(h.reproduces for h in section.hypotheses) else "differs"


# --- The report ------------------------------------------------------------------------------------------


def _small_png(src: Path, dst: Path, width: int = 900) -> None:
    """A copy of a figure at most ``width`` pixels wide, for the repository."""
    from PIL import Image  # matplotlib's own dependency

    image: Image.Image  # a file's image, then its resized and quantized copies
    with Image.open(src) as image:
        if image.width > width:
            image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)  # type: ignore[attr-defined]  # set at import, by a loop over Image.Resampling
        image = image.convert("RGB").quantize(colors=128)  # line art: a palette keeps it a few tens of kB
        with io.atomic_path(dst) as tmp:
            image.save(tmp, format="PNG", optimize=True)


class OutDirError(ValueError):
    """A report directory holding files simstudy did not write (or that changed since), or a report of the
    other scale; nothing was written."""


def _scale(quick: bool) -> str:
    return "quick (smoke-scale) settings" if quick else "paper-scale settings"


def _written(out_dir: Path) -> dict[str, str]:
    """The files simstudy wrote in ``out_dir`` (relative name -> SHA-256), from its marker."""
    import json

    try:
        files = json.loads((out_dir / MARKER).read_text()).get("files", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def check_out_dir(out_dir: str | Path, names, *, quick: bool) -> None:
    """Refuse to write ``names`` (paths relative to ``out_dir``) over files simstudy did not write there.

    A file may be overwritten only if the marker :data:`MARKER` lists it with its current SHA-256 (simstudy
    wrote it, and nobody changed it since). An existing report of the other scale is refused too: merging
    quick sections into a paper-scale report (or back) would mix them.

    Parameters
    ----------
    out_dir : path-like
        The report's directory.
    names : iterable of str
        The files to be written, relative to ``out_dir`` (``REPRODUCTION.md``, ``reproduction/<id>.png``).
    quick : bool
        Whether the report to be written is the quick one.

    Raises
    ------
    OutDirError
        Naming the first such file and what to do.

    Example
    -------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "REPRODUCTION.md").write_text("my notes")
    >>> check_out_dir(d, ["REPRODUCTION.md"], quick=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    simstudy.reproduce.OutDirError: .../REPRODUCTION.md was not written by simstudy reproduce (or was changed ...
    """
    out_dir = Path(out_dir)
    written = _written(out_dir)
    for name in names:
        path = out_dir / name
        if path.exists() and (not path.is_file() or written.get(name) != io.sha256_file(path)):
            raise OutDirError(
                f"{path} was not written by simstudy reproduce (or was changed since): move it away or "
                f"choose another out=DIR"
            )
    report = out_dir / _REPORT
    if report.is_file() and f"regenerated at {_scale(not quick)}" in report.read_text():
        raise OutDirError(f"{report} is the report at {_scale(not quick)}; write the other one to another out=DIR")


def read_report(out_dir: str | Path) -> dict[str, str]:
    """The sections of the report in ``out_dir`` by entry id (each from its anchor to the next), or ``{}``."""
    path = Path(out_dir) / _REPORT
    if not path.is_file():
        return {}
    text = path.read_text()
    starts = list(_ANCHOR.finditer(text))
    return {
        m.group(1): text[m.start() : (starts[i + 1].start() if i + 1 < len(starts) else len(text))].rstrip("\n")
        for i, m in enumerate(starts)
    }


def kept_section(entry: Entry, text: str) -> Section:
    """An entry's section as an earlier report has it (its run is gone): text, verdict and wall time kept."""
    found = re.search(r"\(([0-9.]+) s\)\.", text)
    command = re.search(r"Regenerate: `([^`]*)`", text)
    return Section(
        entry, (), command.group(1) if command else "", float(found.group(1)) if found else 0.0, None, kept=text
    )


_TIMING = "reproduce.json"  # beside the runs: the wall time of the last full regeneration


def record_full_run(runs_dir: str | Path, run_dirs, seconds: float, workers: int, *, full: bool) -> dict | None:
    """Record ``seconds`` as the wall time of a full regeneration if this invocation ran every run (``full``)
    and none of ``run_dirs`` resumed anything (every study computed all its chunks now); return the
    regeneration on record (or ``None``).

    A rerun that resumes takes less time than the work it reports, so only a from-scratch run is recorded."""
    import json

    runs_dir = Path(runs_dir)

    def resumed(d: Path) -> bool:
        try:
            return json.loads((d / "run.json").read_text())["runner"].get("resumed", 0) > 0
        except (OSError, ValueError, KeyError, TypeError):
            return False  # a data command (no run.json) computes everything every time

    run_dirs = list(run_dirs)
    if full and not any(resumed(Path(d)) for d in run_dirs):
        io.write_json({"wall_seconds": seconds, "runs": len(run_dirs), "workers": workers}, runs_dir / _TIMING)
    try:
        return json.loads((runs_dir / _TIMING).read_text())
    except (OSError, ValueError):
        return None


def write_report(
    sections: list[Section],
    out_dir: str | Path,
    *,
    quick: bool,
    total_seconds: float,
    cores: int,
    full_run: dict | None = None,
) -> Path:
    """Write ``REPRODUCTION.md`` and its figures (``reproduction/<id>.png``) into ``out_dir``, and the marker
    :data:`MARKER` listing them; kept sections (``Section.kept``) are copied as they are, their figures left
    untouched. Raises :class:`OutDirError` (before writing anything) if a file to be written is not
    simstudy's (:func:`check_out_dir`).

    ``total_seconds`` is the runs' own wall times added up; ``full_run``, if given, the last full regeneration
    (:func:`record_full_run`), whose wall time the headline reports."""
    out_dir = Path(out_dir)
    figures = {
        f"reproduction/{s.entry.id}.png": s.figure
        for s in sections
        if not (s.kept or s.entry.unavailable or s.error) and s.figure is not None
    }
    check_out_dir(out_dir, [_REPORT, *figures], quick=quick)
    counts = {v: sum(verdict(s) == v for s in sections) for v in VERDICTS}
    explained = f", {counts['explained']} explained by a tested hypothesis" if counts["explained"] else ""
    failed = f", {counts['failed']} failed" if counts["failed"] else ""
    failed += f", {counts['no data']} without public data" if counts["no data"] else ""
    scale = _scale(quick)
    lines = [
        "# Reproducing the papers with simstudy",
        "",
        f"The {len(sections)} results below were regenerated at {scale} by `simstudy reproduce"
        f"{' --quick' if quick else ''}`: {counts['reproduced']} reproduced{explained}, "
        f"{counts['differs']} {'differs' if counts['differs'] == 1 else 'differ'}{failed}. "
        + (
            f"A full regeneration, {full_run['runs']} runs from scratch, took **{full_run['wall_seconds'] / 60:.1f} "
            f"minutes on {cores} cores** (wall time; {full_run['workers']} runs at a time, one core each); the "
            f"runs' own wall times, recorded when each was computed, add up to {total_seconds / 60:.1f} minutes."
            if full_run
            else f"The runs took **{total_seconds / 60:.1f} minutes on {cores} cores** (their wall "
            f"times added up, recorded when each was computed)."
        ),
        "",
        "Each verdict is computed from the numbers by the checks in `experiments/reproduction.yaml`: "
        "*reproduced* when every judged check passes, *differs* otherwise, with the reason where it is "
        "known. Monte Carlo numbers are shown as estimate ± MCSE. The papers' seeds are unknown, so a "
        "paper's number is matched within 3 MCSE unless a check says otherwise. Where our reading of a paper "
        "differs, each hypothesis about what the paper did is run and judged by the same checks: *explained* "
        "when one reproduces every checked number, *differs* otherwise, naming the nearest."
        + (
            " At quick scale the Monte Carlo errors are larger, so verdicts that hinge on small differences "
            "can flip; the paper-scale report is `REPRODUCTION.md` at the top of the repository."
            if quick
            else ""
        ),
        "",
        "| result | paper | verdict | wall time |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| [{s.entry.title}](#{s.entry.id}) | {s.entry.paper} | {verdict(s)} | {section_seconds(s):.1f} s |"
        for s in sections
    ]
    for s in sections:
        if s.kept:
            lines += ["", s.kept]
            continue
        lines += [
            "",
            f'<a id="{s.entry.id}"></a>',
            f"## {s.entry.paper}: {s.entry.title}",
            "",
            f"**Verdict: {verdict(s)}.** Regenerate: `{s.command}` ({s.wall_seconds:.1f} s).",
            "",
        ]
        if s.entry.unavailable:
            lines[-2] = f"**Verdict: no data.** {s.entry.unavailable}"
            continue
        if s.entry.stand_in:
            lines += [f"Data: {s.entry.stand_in}", ""]
        if s.error:
            lines += [f"The run failed: {s.error}", ""]
            continue
        if s.figure is not None:
            lines += [f"![{s.entry.id}](reproduction/{s.entry.id}.png)", ""]
        lines += ["| check | paper | ours | verdict |", "| --- | --- | --- | --- |"]
        for o in s.outcomes:
            mark = {True: "✓", False: "✗", None: "(not judged)"}[o.passed]
            lines.append(f"| {o.label} | {o.paper} | {o.ours} | {mark} |")
        reasons = [f"- {o.label}: {o.reason}" for o in s.outcomes if o.passed is False and o.reason]
        if reasons:
            lines += ["", "Why it differs:", *reasons]
        if s.hypotheses:
            lines += ["", *_hypothesis_table(s)]
    previous = {
        name: digest
        for name, digest in _written(out_dir).items()
        if (out_dir / name).is_file() and io.sha256_file(out_dir / name) == digest
    }
    for name, src in figures.items():
        _small_png(src, out_dir / name)
    path = out_dir / _REPORT
    io.write_text("\n".join(lines) + "\n", path)
    record_written(out_dir, [_REPORT, *figures], previous)
    return path


def section_seconds(section: Section) -> float:
    """An entry's wall time: its own run's and its hypotheses'."""
    return section.wall_seconds + sum(h.wall_seconds for h in section.hypotheses)


def _hypothesis_table(s: Section) -> list[str]:
    """The hypotheses' table: one row each (the entry's own run first), a column per judged check of the entry
    with each run's number and mark, whether every check passes, and the verdict's sentence.

    A hypothesis with checks of its own (other rows selected, e.g. another algorithm's name) fills the columns
    by label, else by position: its checks are the entry's, in the entry's order, on its own rows."""
    key = [o.label for o in s.outcomes if o.passed is not None]

    def cells(outcomes) -> list[str]:
        by_label = {o.label: o for o in outcomes}
        judged = [o for o in outcomes if o.passed is not None]
        row = []
        for i, label in enumerate(key):
            o = by_label.get(label, judged[i] if i < len(judged) and judged[i].label not in key else None)
            row.append("—" if o is None else f"{o.ours} {'✓' if o.passed else '✗'}")
        return row

    def every(passed: int, judged: int) -> str:
        return f"✓ {passed} of {judged}" if passed == judged and judged else f"✗ {passed} of {judged}"

    own = sum(o.passed is True for o in s.outcomes), sum(o.passed is not None for o in s.outcomes)
    papers = [o.paper for o in s.outcomes if o.passed is not None]
    lines = [
        "Hypotheses about what the paper did, each run and judged by the same checks:",
        "",
        "| hypothesis | command | " + " | ".join(key) + " | every check | wall time |",
        "| --- | --- |" + " --- |" * len(key) + " --- | --- |",
        "| *the paper* | | " + " | ".join(papers) + " | | |",
        f"| *our reading (the run above)* | `{s.command}` | "
        + " | ".join(cells(s.outcomes))
        + f" | {every(*own)} | {s.wall_seconds:.1f} s |",
    ]
    for h in s.hypotheses:
        if h.error:
            lines.append(
                f"| {h.hypothesis.label} | `{h.command}` | "
                + " | ".join("—" for _ in key)
                + f" | failed to run: {h.error} | {h.wall_seconds:.1f} s |"
            )
            continue
        lines.append(
            f"| {h.hypothesis.label} | `{h.command}` | "
            + " | ".join(cells(h.outcomes))
            + f" | {every(h.passed, h.judged)} | {h.wall_seconds:.1f} s |"
        )
    winners = [h for h in s.hypotheses if h.reproduces]
    best = best_hypothesis(s.hypotheses)
    if winners:
        lines += [
            "",
            "Explained by: "
            + "; ".join(f"*{h.hypothesis.label}* (`{h.hypothesis.id}`)" for h in winners)
            + ": every checked number reproduces.",
        ]
    elif best is not None:
        lines += [
            "",
            f"No hypothesis reproduces every checked number. Nearest: *{best.hypothesis.label}* "
            f"(`{best.hypothesis.id}`), {best.passed} of {best.judged} checks.",
        ]
    return lines


def record_written(out_dir: str | Path, names, previous: dict | None = None) -> None:
    """Write the marker :data:`MARKER` of ``out_dir``: ``names`` (just written) with their SHA-256, and the
    ``previous`` entries still valid."""
    out_dir = Path(out_dir)
    files = {**(previous or {}), **{name: io.sha256_file(out_dir / name) for name in names}}
    io.write_json({"written_by": "simstudy reproduce", "files": dict(sorted(files.items()))}, out_dir / MARKER)
