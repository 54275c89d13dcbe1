"""The catalogue of the papers' results, and verdicts computed from the numbers of their runs.

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

==============  =============================================================================================
``reproduced``  every judged check of the entry's own run passes
``explained``   the entry's run differs, and some hypothesis passes every check: the gap has a mechanism
``differs``     neither; the report names the best hypothesis (most checks passed, then nearest the paper)
==============  =============================================================================================

The runs themselves are :mod:`simstudy.commands.reproduce`'s (each in its own process); this module reads the
catalogue and judges their outputs, and :mod:`simstudy.commands.reproduction_page` writes the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simstudy import io

__all__ = [
    "CHECK_KINDS",
    "VERDICTS",
    "Check",
    "Entry",
    "Hypothesis",
    "HypothesisRun",
    "CatalogueError",
    "Outcome",
    "Section",
    "best_hypothesis",
    "catalogue_path",
    "evaluate",
    "load_catalogue",
    "read_hypothesis",
    "read_section",
    "section_seconds",
    "verdict",
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
    """An invalid reproduction catalogue (``experiments/reproduction.yaml`` or a file of the user's).

    Raised by :func:`load_catalogue` before anything runs, with one line naming the entry, the key and the
    value; ``simstudy reproduce`` prints it and exits with status 2. A :class:`ValueError`.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "catalogue.yaml"
    ...     _ = path.write_text("[]\\n")
    ...     try:
    ...         load_catalogue(path)
    ...     except CatalogueError as exc:
    ...         print(exc)
    the reproduction catalogue must be a non-empty list of entries
    """


@dataclass(frozen=True)
class Check:
    """One check of a catalogue entry: which summary rows it selects and what it requires of them.

    Made by :func:`load_catalogue` from a ``checks`` item of ``experiments/reproduction.yaml``; the kinds and
    their keys are listed in the module's docstring (:data:`CHECK_KINDS`).

    Parameters
    ----------
    label : str
        What the check says, as the report shows it (e.g. ``"U is unbiased (every n, within 4 MCSE)"``).
    kind : str
        One of :data:`CHECK_KINDS`.
    spec : dict
        The check's other keys: ``where`` (column -> value or list of values), ``paper`` or ``paper_by``,
        ``k`` (MCSE multiple; default 3 for ``value``, else 0), ``tol`` (in the estimate's units), ``bound``
        or ``bound_by``, ``order`` and ``by``, ``column`` and ``min_fraction``, ``at_least`` and ``at_most``,
        ``path``.
    info : bool
        Show the number beside the paper's without judging it; default False.
    reason : str
        Why the check fails, when the cause is known (a stand-in data set, an unstated setting); default
        ``""``.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"estimator": ["u", "u", "v", "v"], "n": [10, 20, 10, 20],
    ...                         "estimate": [0.81, 0.86, 0.80, 0.85], "mcse": [0.004, 0.003, 0.004, 0.003]})
    >>> check = Check("U at n = 20", "value", {"where": {"estimator": "u", "n": 20}, "paper": 0.87})
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), (check,))
    >>> evaluate(entry, summary, {})[0]
    Outcome(label='U at n = 20', paper='0.87', ours='0.86 ± 0.003', passed=False, reason='', excess=1.111111111111112)
    """

    label: str
    kind: str
    spec: dict
    info: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Hypothesis:
    """Something the paper may have done that the entry's own command does not, as a full ``simstudy`` command.

    An entry whose run differs from the paper lists hypotheses; each is run and judged like the entry, and
    the entry's verdict is ``explained`` when one of them passes every check (:func:`verdict`).

    Parameters
    ----------
    id : str
        Lower-case letters, digits and ``_``, unique within the entry; it runs in ``<runs>/<entry>--<id>``.
    label : str
        What the paper may have done, in words.
    command : tuple of str
        The full ``simstudy`` command's arguments (e.g. ``("experiment=dodge2021_fig2",
        "distribution=pair_truncnorm")``).
    quick : tuple of str or None
        Its overrides at quick scale; default None: the entry's (:meth:`Entry.quick_for`).
    checks : tuple of Check or None
        The checks that judge it; default None: the entry's own, so the same published numbers and tolerances
        (:meth:`Entry.checks_for`).

    Examples
    --------
    >>> h = Hypothesis("wider_gap", "the paper's gap was 0.02", ("experiment=demo", "gap=0.02"))
    >>> entry = Entry("demo", "Figure 2", "A paper", ("experiment=demo",), ("study.reps=100",), (), hypotheses=(h,))
    >>> entry.quick_for(h), entry.checks_for(h) == entry.checks
    (('study.reps=100',), True)
    """

    id: str
    label: str
    command: tuple[str, ...]
    quick: tuple[str, ...] | None = None
    checks: tuple[Check, ...] | None = None


@dataclass(frozen=True)
class Entry:
    """One reproduced result: how to run it, at paper and quick scale, and how to judge it.

    An entry of ``experiments/reproduction.yaml``, as :func:`load_catalogue` reads it (the YAML keys are the
    parameters' names).

    Parameters
    ----------
    id : str
        The entry's id (the report's anchor, the figure's name ``reproduction/<id>.png``).
    title : str
        What the result shows.
    paper : str
        The paper and its figure, table or section (e.g. ``"Dodge et al. 2021, Figure 1"``).
    command : tuple of str
        Arguments of the ``simstudy`` command that regenerates the result at paper scale.
    quick : tuple of str
        Overrides appended for the quick (smoke-scale) run (``simstudy reproduce --quick``).
    checks : tuple of Check
        The checks that decide the verdict.
    stand_in : str
        Which public data stand in for the paper's, if any; default ``""``.
    figure : str
        The run's figure shown in the report, relative to its run directory; default ``"figure.png"``.
    table : str
        The run's tidy output the checks read (``.parquet`` or ``.csv``); default ``"summary.parquet"``.
    estimate : str
        Its column of point estimates; default ``"estimate"``.
    unavailable : str
        Why the result cannot be regenerated here (then nothing is run and the verdict is ``no data``);
        default ``""``.
    hypotheses : tuple of Hypothesis
        What the paper may have done instead, each run and judged when the entry differs; default ``()``.

    Examples
    --------
    >>> check = Check("U at n = 20", "value", {"where": {"estimator": "u", "n": 20}, "paper": 0.87})
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), ("study.reps=100",), (check,))
    >>> entry.table, entry.estimate, [c.label for c in entry.checks]
    ('summary.parquet', 'estimate', ['U at n = 20'])
    """

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
    """A check's result: the paper's number or claim, ours (with MCSE), and whether it passed (None: not judged).

    Made by :func:`evaluate`, one per check; the report shows each as a row.

    Parameters
    ----------
    label : str
        The check's label.
    paper : str
        The paper's number(s) or claim, as shown (e.g. ``"0.87"``, ``"> 0.79"``).
    ours : str
        Our estimate(s) with ``± MCSE``, as shown (at most six, then ``(+N more)``).
    passed : bool or None
        Whether the check passed; None for an ``info`` check (shown, not judged).
    reason : str
        The check's known reason for failing; default ``""``.
    excess : float
        Value checks: the largest ``|ours - paper|`` over the allowed difference (at most 1 passes; 0 for an
        exact match); NaN for other kinds (the default). :func:`best_hypothesis` ranks by it.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"estimator": ["u", "u", "v", "v"], "n": [10, 20, 10, 20],
    ...                         "estimate": [0.81, 0.86, 0.80, 0.85], "mcse": [0.004, 0.003, 0.004, 0.003]})
    >>> check = Check("V below 0.9", "below", {"where": {"estimator": "v"}, "bound": 0.9, "k": 3})
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), (check,))
    >>> print(evaluate(entry, summary, {})[0])
    Outcome(label='V below 0.9', paper='< 0.9 (by 3 MCSE)', ours='0.8 ± 0.004, 0.85 ± 0.003', passed=True, \
reason='', excess=nan)
    """

    label: str
    paper: str
    ours: str
    passed: bool | None
    reason: str = ""
    excess: float = float("nan")  # value checks: max |ours - paper| / allowed difference (<= 1 passes)


@dataclass(frozen=True)
class HypothesisRun:
    """A hypothesis's run: its command as shown, its outcomes, wall time, and the error if it did not finish.

    Made by :func:`read_hypothesis`. ``passed`` and ``judged`` count its judged checks, ``reproduces`` says
    whether it passes every one (and finished).

    Parameters
    ----------
    hypothesis : Hypothesis
        The hypothesis run.
    command : str
        Its command line, as the report shows it.
    outcomes : tuple of Outcome
        Its checks' results (empty if it failed).
    wall_seconds : float
        Wall time of the run that computed it, in seconds.
    error : str
        The one-line error if the run did not finish; default ``""``.

    Examples
    --------
    >>> h = Hypothesis("wider_gap", "the paper's gap was 0.02", ("experiment=demo", "gap=0.02"))
    >>> run = HypothesisRun(h, "simstudy experiment=demo gap=0.02",
    ...                     (Outcome("a", "1", "1", True), Outcome("b", "2", "3", False)), 12.5)
    >>> run.passed, run.judged, run.reproduces
    (1, 2, False)
    """

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
    """One entry's part of the report: its outcomes, command, wall time, figure and hypotheses' runs.

    Made by :func:`read_section` from a finished run; :func:`verdict` judges it and :func:`write_report`
    writes it.

    Parameters
    ----------
    entry : Entry
        The catalogue entry.
    outcomes : tuple of Outcome
        Its checks' results (empty if the run failed or the entry is unavailable).
    command : str
        The command line that regenerates it, as the report shows it.
    wall_seconds : float
        Wall time of the run that computed it, in seconds (its hypotheses' are in theirs).
    figure : pathlib.Path or None
        The run's figure, copied (shrunk) into the report; None for none.
    error : str
        The one-line error if the run did not finish; default ``""``.
    kept : str
        Its text in an earlier report, reused as it is (its run is not here to read again; ``simstudy
        reproduce only=ID`` keeps the other entries' sections so); default ``""``.
    hypotheses : tuple of HypothesisRun
        Its hypotheses' runs; default ``()``.

    Examples
    --------
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), ())
    >>> section = Section(entry, (Outcome("a", "1", "1", True),), "simstudy experiment=demo", 30.0, None)
    >>> verdict(section), section_seconds(section)
    ('reproduced', 30.0)
    """

    entry: Entry
    outcomes: tuple[Outcome, ...]
    command: str
    wall_seconds: float
    figure: Path | None
    error: str = ""
    kept: str = ""
    hypotheses: tuple[HypothesisRun, ...] = ()


def catalogue_path() -> Path:
    """The path of the reproduction catalogue, ``reproduction.yaml``.

    Inside the package (``simstudy/experiments/``) in a wheel, ``experiments/`` at the top of a source tree.

    Returns
    -------
    pathlib.Path
        The catalogue's absolute path.

    Raises
    ------
    FileNotFoundError
        If neither place holds it.

    Examples
    --------
    >>> catalogue_path().name
    'reproduction.yaml'
    """
    here = Path(__file__).resolve().parent  # the simstudy package
    for candidate in (here / "experiments" / "reproduction.yaml", here.parent / "experiments" / "reproduction.yaml"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"the reproduction catalogue (experiments/reproduction.yaml) not found beside {here}")


def load_catalogue(path: str | Path | None = None) -> list[Entry]:
    """Read and validate the reproduction catalogue.

    Parameters
    ----------
    path : str or pathlib.Path or None
        A catalogue in YAML: a list of entries with the keys of :class:`Entry` (``id``, ``title``, ``paper``,
        and ``command`` and ``checks``, or ``unavailable``). Default None: the shipped one
        (:func:`catalogue_path`).

    Returns
    -------
    list of Entry
        The entries in file order.

    Raises
    ------
    CatalogueError
        (``simstudy.catalogue.CatalogueError``, a :class:`ValueError`) If the file is not a non-empty list of
        entries, or an entry lacks a required key, has an unknown key or a repeated id, or has an invalid
        check or hypothesis; the message names the entry and the field.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "catalogue.yaml"
    ...     _ = path.write_text(
    ...         "- id: demo\\n  title: Figure 1\\n  paper: A paper\\n  command: [experiment=demo]\\n"
    ...         "  checks: [{label: U is unbiased, kind: value, where: {estimator: u}, paper: 0.0}]\\n"
    ...     )
    ...     entry = load_catalogue(path)[0]
    ...     _ = path.write_text("- {id: demo, title: t, paper: p, command: [x], checks: [{kind: mean}]}\\n")
    ...     try:
    ...         load_catalogue(path)
    ...     except ValueError as exc:
    ...         print(exc)
    entry demo: check kind must be one of value, above, below, increasing, crosses, covers, count, run_value, got 'mean'
    >>> entry.command, entry.checks[0].spec
    (('experiment=demo',), {'where': {'estimator': 'u'}, 'paper': 0.0})
    """
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
    """Every check of ``entry`` (or of one of its hypotheses) on a finished run's tidy output and ``run.json``.

    Parameters
    ----------
    entry : Entry
        The entry whose checks run (its ``estimate`` column is read as the estimates).
    summary : pandas.DataFrame
        The run's tidy output (``entry.table``): one row per estimate, with the ``where`` columns, the
        estimate column and, for Monte Carlo estimates, ``mcse`` (in the estimate's units; a missing column or
        NaN counts as 0); ``covers`` checks read ``ci_low`` and ``ci_high``.
    run : dict
        The run's ``run.json``, read by ``run_value`` checks; ``{}`` for commands without one.
    hypothesis : Hypothesis or None
        Judge this hypothesis's run with its checks (:meth:`Entry.checks_for`); default None: the entry's.

    Returns
    -------
    tuple of Outcome
        One per check, in the catalogue's order.

    Raises
    ------
    KeyError
        If a check's ``where`` selects no rows (except ``count`` checks), or a ``run_value`` path is not in
        ``run``.
    ValueError
        If a ``where`` names a column the summary does not have.

    Examples
    --------
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"estimator": ["u", "u", "v", "v"], "n": [10, 20, 10, 20],
    ...                         "estimate": [0.81, 0.86, 0.80, 0.85], "mcse": [0.004, 0.003, 0.004, 0.003]})
    >>> checks = (Check("U at n = 20", "value", {"where": {"estimator": "u", "n": 20}, "paper": 0.86, "k": 3}),
    ...           Check("U grows with n", "increasing", {"where": {"estimator": "u"}, "order": [{"n": 10}, {"n": 20}]}),
    ...           Check("reps", "run_value", {"path": "study.reps", "paper": 1000}))
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), checks)
    >>> for o in evaluate(entry, summary, {"study": {"reps": 1000}}):
    ...     print(o.label, "|", o.paper, "|", o.ours, "|", o.passed)
    U at n = 20 | 0.86 | 0.86 ± 0.003 | True
    U grows with n | 10 < 20 | holds at 1 of 1 | True
    reps | 1000 | 1000 | True
    """
    summary = summary.rename(columns={entry.estimate: "estimate"})
    checks = entry.checks if hypothesis is None else entry.checks_for(hypothesis)
    return tuple(_check(c, summary, run) for c in checks)


def hypothesis_dir(runs: str | Path, entry: Entry, hypothesis: Hypothesis) -> Path:
    """Where a hypothesis runs: ``<runs>/<entry>--<hypothesis>``, beside the entry's own run.

    Not in ``__all__``: the layout of ``simstudy reproduce``'s run directories, used by the CLI.

    Parameters
    ----------
    runs : str or pathlib.Path
        The directory of the runs (``outputs/reproduce``).
    entry : Entry
        The entry.
    hypothesis : Hypothesis
        One of its hypotheses.

    Returns
    -------
    pathlib.Path
        ``runs / f"{entry.id}--{hypothesis.id}"``.
    """
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
    """A hypothesis's outcomes from its finished run in ``run_dir``.

    Parameters
    ----------
    entry : Entry
        The entry the hypothesis belongs to (its ``table`` and ``estimate`` say what to read).
    hypothesis : Hypothesis
        The hypothesis, judged by :meth:`Entry.checks_for`.
    run_dir : pathlib.Path
        Its run directory, holding ``entry.table`` and (for studies) ``run.json``.
    command : str
        Its command line, as the report shows it.
    seconds : float or None
        Wall time of the run just made, in seconds; None if none was made (see :func:`read_section`).
    error : str
        The run's one-line error if it did not finish (then ``run_dir`` is not read); default ``""``.

    Returns
    -------
    HypothesisRun
        Its outcomes and wall time.

    Raises
    ------
    OSError
        If ``run_dir`` lacks the table (FileNotFoundError), or ``reproduce.json`` cannot be written.
    KeyError
        If a check selects no rows (see :func:`evaluate`).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"estimator": ["u", "u", "v", "v"], "n": [10, 20, 10, 20],
    ...                         "estimate": [0.81, 0.86, 0.80, 0.85], "mcse": [0.004, 0.003, 0.004, 0.003]})
    >>> check = Check("U at n = 20", "value", {"where": {"estimator": "u", "n": 20}, "paper": 0.87})
    >>> h = Hypothesis("wider_gap", "the paper's gap was 0.02", ("experiment=demo", "gap=0.02"))
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), (check,), table="summary.csv",
    ...               hypotheses=(h,))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     summary.to_csv(Path(d) / "summary.csv", index=False)
    ...     run = read_hypothesis(entry, h, Path(d), "simstudy experiment=demo gap=0.02", 12.5)
    >>> run.wall_seconds, run.passed, run.judged
    (12.5, 0, 1)
    """
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

    Parameters
    ----------
    entry : Entry
        The catalogue entry (its ``table``, ``estimate`` and ``figure`` say what to read).
    run_dir : pathlib.Path
        The entry's run directory, holding ``entry.table`` and (for studies) ``run.json``.
    command : str
        The command line, as the report shows it.
    seconds : float or None
        Wall time of the run just made, in seconds; None if none was made (the recorded one is reported).
    error : str
        The run's one-line error if it did not finish (then ``run_dir`` is not read); default ``""``.
    hypotheses : tuple of HypothesisRun
        Its hypotheses' runs (:func:`read_hypothesis`); default ``()``.

    Returns
    -------
    Section
        With the checks' outcomes, the wall time and the figure (None if the run wrote none).

    Raises
    ------
    OSError
        If ``run_dir`` lacks the table (FileNotFoundError), or ``reproduce.json`` cannot be written.
    KeyError
        If a check selects no rows (see :func:`evaluate`).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> summary = pd.DataFrame({"estimator": ["u", "u", "v", "v"], "n": [10, 20, 10, 20],
    ...                         "estimate": [0.81, 0.86, 0.80, 0.85], "mcse": [0.004, 0.003, 0.004, 0.003]})
    >>> check = Check("U at n = 20", "value", {"where": {"estimator": "u", "n": 20}, "paper": 0.86})
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), (check,), table="summary.csv")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     summary.to_csv(Path(d) / "summary.csv", index=False)
    ...     section = read_section(entry, Path(d), "simstudy experiment=demo", 30.0)
    ...     resumed = read_section(entry, Path(d), "simstudy experiment=demo", None)  # the time on record
    >>> verdict(section), section.wall_seconds, resumed.wall_seconds, section.figure
    ('reproduced', 30.0, 30.0, None)
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
    the allowed difference among its value checks (``Outcome.excess``), then the catalogue's order.

    Parameters
    ----------
    runs : iterable of HypothesisRun
        The entry's hypotheses' runs; those that failed (``error``) are left out.

    Returns
    -------
    HypothesisRun or None
        The nearest; None if no run finished.

    Examples
    --------
    >>> def run(id, *excess):
    ...     outcomes = tuple(Outcome("c", "1", "x", e <= 1, excess=e) for e in excess)
    ...     return HypothesisRun(Hypothesis(id, id, ("x",)), "simstudy x", outcomes, 1.0)
    >>> best_hypothesis([run("far", 0.5, 9.0), run("near", 0.5, 1.5), run("worse", 3.0, 2.0)]).hypothesis.id
    'near'
    >>> best_hypothesis([]) is None
    True
    """
    finished = [h for h in runs if not h.error]
    if not finished:
        return None

    def distance(h: HypothesisRun) -> float:
        excess = [o.excess for o in h.outcomes if o.passed is not None and np.isfinite(o.excess)]
        return max(excess, default=0.0)

    return min(finished, key=lambda h: (-h.passed / max(h.judged, 1), distance(h)))


def verdict(section: Section) -> str:
    """The verdict of a section, computed from its outcomes (never written by hand).

    One of :data:`VERDICTS`: ``no data`` (not runnable here), ``failed`` (the run did not finish),
    ``reproduced`` (every judged check passed), ``explained`` (it did not, but a hypothesis passes every check
    of its own) or ``differs``. A kept section (``Section.kept``) keeps the verdict its text states.

    Parameters
    ----------
    section : Section
        The entry's section.

    Returns
    -------
    str
        One of :data:`VERDICTS`.

    Examples
    --------
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


def section_seconds(section: Section) -> float:
    """An entry's wall time: its own run's and its hypotheses', in seconds.

    Parameters
    ----------
    section : Section
        The entry's section.

    Returns
    -------
    float
        ``section.wall_seconds`` plus every hypothesis run's ``wall_seconds``.

    Examples
    --------
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), ())
    >>> h = HypothesisRun(Hypothesis("wider_gap", "the gap was 0.02", ("x",)), "simstudy x", (), 12.5)
    >>> section_seconds(Section(entry, (), "simstudy experiment=demo", 30.0, None, hypotheses=(h,)))
    42.5
    """
    return section.wall_seconds + sum(h.wall_seconds for h in section.hypotheses)
