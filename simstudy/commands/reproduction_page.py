"""``REPRODUCTION.md``: the report of ``simstudy reproduce``, its figures, and the files it may overwrite.

:func:`write_report` writes the report from the sections that :mod:`simstudy.catalogue` judged, with a
small copy of each entry's figure; :func:`check_out_dir` refuses, before any run, a report directory holding
files simstudy did not write (the marker :data:`MARKER` lists those it did, with their SHA-256);
:func:`read_report` and :func:`kept_section` keep the sections of entries this run does not regenerate.
"""

from __future__ import annotations

import re
from pathlib import Path

from simstudy import io
from simstudy.catalogue import VERDICTS, Entry, Section, best_hypothesis, section_seconds, verdict

#: Beside a report: the files ``simstudy reproduce`` wrote there, with their SHA-256. Only those, unchanged, are
#: ever overwritten; any other file in their place (a user's own report or figure) is refused.
MARKER = ".simstudy-reproduce.json"
_REPORT = "REPRODUCTION.md"
_ANCHOR = re.compile(r'^<a id="([A-Za-z0-9_.-]+)"></a>$', flags=re.M)

__all__ = ["MARKER", "OutDirError", "check_out_dir", "write_report"]


def small_png(src: Path, dst: Path, width: int = 900) -> None:
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
    other scale; nothing was written.

    Raised by :func:`check_out_dir` and :func:`write_report` before anything is written, so that a user's own
    file named ``REPRODUCTION.md`` (or a figure) is never overwritten. The message names the file and what to
    do.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "REPRODUCTION.md").write_text("my notes")
    ...     try:
    ...         check_out_dir(d, ["REPRODUCTION.md"], quick=False)
    ...     except OutDirError as exc:
    ...         print(str(exc).split(": ")[1])
    move it away or choose another out=DIR
    """


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
    out_dir : str or pathlib.Path
        The report's directory (it need not exist).
    names : iterable of str
        The files to be written, relative to ``out_dir`` (``REPRODUCTION.md``, ``reproduction/<id>.png``).
    quick : bool, keyword-only
        Whether the report to be written is the quick one.

    Raises
    ------
    OutDirError
        Naming the first such file and what to do, or the existing report of the other scale.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = Path(tmp.name)
    >>> check_out_dir(d, ["REPRODUCTION.md"], quick=False)  # nothing there yet: fine
    >>> _ = (d / "REPRODUCTION.md").write_text("my notes")
    >>> check_out_dir(d, ["REPRODUCTION.md"], quick=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    simstudy.commands.reproduction_page.OutDirError: .../REPRODUCTION.md was not written by simstudy reproduce (or was changed ...
    >>> tmp.cleanup()
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
    """The sections of the report in ``out_dir`` by entry id (each from its anchor to the next), or ``{}``.

    Not in ``__all__``: with :func:`kept_section`, how ``simstudy reproduce only=ID`` keeps the other
    entries' sections of an earlier report.

    Parameters
    ----------
    out_dir : str or pathlib.Path
        The report's directory.

    Returns
    -------
    dict of str to str
        Entry id to the section's markdown; empty if there is no ``REPRODUCTION.md``.
    """
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
    """An entry's section as an earlier report has it (its run is gone): text, verdict and wall time kept.

    Not in ``__all__``: used by ``simstudy reproduce only=ID`` with :func:`read_report`.

    Parameters
    ----------
    entry : Entry
        The entry.
    text : str
        Its section's markdown in the earlier report.

    Returns
    -------
    Section
        With ``kept=text``, the command and wall time parsed from the text.
    """
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

    A rerun that resumes takes less time than the work it reports, so only a from-scratch run is recorded.
    Not in ``__all__``: the CLI's bookkeeping of ``<runs>/reproduce.json``.

    Parameters
    ----------
    runs_dir : str or pathlib.Path
        The directory of the runs, where ``reproduce.json`` is kept.
    run_dirs : iterable of path-like
        Every run directory of this invocation.
    seconds : float
        This invocation's wall time, in seconds.
    workers : int
        Runs at a time.
    full : bool, keyword-only
        Whether this invocation ran every entry and hypothesis.

    Returns
    -------
    dict or None
        ``{"wall_seconds", "runs", "workers"}`` of the full regeneration on record, or None.
    """
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
    """Write ``REPRODUCTION.md`` and its figures (``reproduction/<id>.png``) into ``out_dir``, with the marker.

    The report opens with the verdicts counted and a table of every entry (verdict, wall time), then one
    section per entry: its verdict and command, figure, the checks' table (paper, ours, ✓/✗), the known
    reasons of failed checks and the hypotheses' table. Kept sections (``Section.kept``) are copied as they
    are, their figures left untouched. The marker :data:`MARKER` lists the files written with their SHA-256,
    so that a later report overwrites only those. Every file is written atomically.

    Parameters
    ----------
    sections : list of Section
        The entries' sections, in the report's order.
    out_dir : str or pathlib.Path
        The report's directory (created if missing).
    quick : bool, keyword-only
        Whether the runs were at quick (smoke) scale; the report says so, and a report of the other scale in
        ``out_dir`` is refused.
    total_seconds : float, keyword-only
        The runs' own wall times added up, in seconds (e.g. the sum of :func:`section_seconds`).
    cores : int, keyword-only
        The machine's cores, as the headline reports them.
    full_run : dict or None, keyword-only
        The last full regeneration on record (``wall_seconds``, ``runs``, ``workers``), whose wall time the
        headline reports instead; default None.

    Returns
    -------
    pathlib.Path
        ``out_dir / "REPRODUCTION.md"``.

    Raises
    ------
    OutDirError
        Before writing anything, if a file to be written is not simstudy's (:func:`check_out_dir`).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.catalogue import Outcome
    >>> entry = Entry("demo", "Figure 1", "A paper", ("experiment=demo",), (), ())
    >>> section = Section(entry, (Outcome("U at n = 20", "0.86", "0.86 ± 0.003", True),),
    ...                   "simstudy experiment=demo", 30.0, None)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = write_report([section], d, quick=True, total_seconds=30.0, cores=2)
    ...     text = path.read_text()
    ...     written = sorted(p.name for p in Path(d).iterdir())
    >>> written
    ['.simstudy-reproduce.json', 'REPRODUCTION.md']
    >>> print(text.split("\\n")[2].split(":")[0])
    The 1 results below were regenerated at quick (smoke-scale) settings by `simstudy reproduce --quick`
    >>> print("\\n".join(line for line in text.split("\\n") if line.startswith("| ")))
    | result | paper | verdict | wall time |
    | --- | --- | --- | --- |
    | [Figure 1](#demo) | A paper | reproduced | 30.0 s |
    | check | paper | ours | verdict |
    | --- | --- | --- | --- |
    | U at n = 20 | 0.86 | 0.86 ± 0.003 | ✓ |
    """
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
        small_png(src, out_dir / name)
    path = out_dir / _REPORT
    io.write_text("\n".join(lines) + "\n", path)
    record_written(out_dir, [_REPORT, *figures], previous)
    return path


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
