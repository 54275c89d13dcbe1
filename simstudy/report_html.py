"""``report.html``: one self-contained, offline page per run directory and per sweep.

Written beside a run's ``summary.parquet`` after every study run, beside a sweep's (or design's) stacked frame,
and after ``simstudy audit`` / ``simstudy extrapolate``; ``simstudy report run_dir=DIR`` rebuilds it
(:mod:`simstudy.commands.report`). The page holds:

==================  ==========================================================================================
interactive charts  the study's headline (:attr:`simstudy.registry.Study.sweep`) and each other measure of it:
                    estimate against ``x``, one line per ``hue``, error bars of ±2 MCSE, a tooltip showing
                    ``estimate ± MCSE`` (and the joint band where the summary has one), one facet per value of
                    the swept factors (or of any other key that varies), the nominal level as a dashed line on
                    coverage charts
the summary table   every row, sortable by a click on a header, estimates and MCSEs rounded to the digits the
                    MCSE supports (:func:`simstudy.stats.metrics.format_estimate`)
provenance          the resolved config, simstudy's and its dependencies' versions, the inputs' content hashes
                    and kernel versions (the run's identity), the fingerprint, the chunk count and how many
                    stored chunks' checksums were verified now, wall time, failed chunks with the
                    ``simstudy replay`` line that reruns each
pages               the command's page (its spec's ``page``: ``CURVE.md``, ``AUDIT.md``, ...) or the field
                    audit's ``FIELD.md`` where the directory has them, as HTML (markdown-it-py; no raw HTML, links only
                    to the directory's own files), their figures embedded as ``data:`` URIs; beside them the
                    charts the command hands the page (``build(charts=...)``: its spec's ``charts`` hook,
                    e.g. ``extrapolate``'s, ``curve``'s and ``bands``' curves, asked by
                    :func:`simstudy.commands.report.charts`) and its studies
                    (``build(studies=...)``: an audit's three) charted as studies
==================  ==========================================================================================

Every chart is a :class:`simstudy.charts.Chart` description (the studies' by :func:`simstudy.charts.estimates`,
as a sweep's ``figure.png`` is), written as Vega-Lite by :func:`simstudy.chart_vega.to_vega`; the page knows no
command's files and finds no chart by its title (a coverage says so: :attr:`simstudy.charts.Chart.role`).

Why Vega-Lite: the charts are Vega-Lite specs written as plain dicts (JSON; no Altair, whose import alone
costs hundreds of milliseconds), drawn in the browser by vega + vega-lite + vega-embed, bundled offline as one
0.9 MB script by ``vl-convert-python`` (by the Vega team). Plotly's ``plotly.min.js`` is 4.8 MB, too close to
the 5 MB limit for Figure 1's page with its table. The bundle ships with simstudy (``simstudy/_vendor/``, with
its licences) and is checked against a SHA-256 pinned in this module on every read (:func:`bundle`): no cache
anyone else could write, and no V8 at run time (it needs 64-80 GB of address space). The page inlines it, so
nothing is loaded from the network. Building a page is json and string templates on the summary the run
already has in memory (no Altair, no Jinja), so Figure 1's page (1.3 MB at the preset's 10,000 replicates: 7
charts, 930 rows) costs about 30-40 ms of its run, the 4 chunks' checksums included.

A directory someone sent cannot break into its page: every string of it reaches the page escaped (HTML text
by :func:`html.escape`; the charts' JSON with ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u`` escapes, in a
``<script type="application/json">``); markdown pages are rendered without raw HTML, with links and images
only to the directory's own files (images embedded); no file is read through a link out of the directory or
when it is a FIFO (skipped with a note at the top of the page, or, for ``summary.parquet``, refused in one
line); a chart draws at most :data:`_MAX_POINTS` points and says so when it has more.

References: Satyanarayan, A., Moritz, D., Wongsuphasawat, K., & Heer, J. (2017). Vega-Lite: a grammar of
interactive graphics. IEEE Transactions on Visualization and Computer Graphics 23(1), 341-350.

A page never imports code named in the run directory: it reads ``summary.parquet``, ``run.json``,
``config.yaml``, the identity file and the pages as data, and verifies the chunks by their checksums only.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from simstudy.chart_vega import to_vega
from simstudy.charts import Chart, estimate_text, estimates, json_value
from simstudy.engine.identity import RECORD
from simstudy.report_safe import CSP, Files, NotAReport, inside, markdown_page, plain_titles, script_json

__all__ = ["Report", "build", "bundle", "NotAReport"]

log = logging.getLogger("simstudy")

#: The file written; a file of this name without :data:`_GENERATOR` in its head is not ours and never replaced.
REPORT = "report.html"
_GENERATOR = '<meta name="generator" content="simstudy report">'

#: The page a study writes beside its summary (the field audit's); a command's page is handed by the command.
_STUDY_PAGES = ("FIELD.md",)
#: Rows shown in the table at most (the full frame is in summary.csv beside the page).
_MAX_ROWS = 20_000
#: Points drawn by one chart at most (every k-th row beyond; the page says so): 5,000 points are about 1 MB.
_MAX_POINTS = 5_000
#: Charts at most: the headline and the other measures of it.
_MAX_CHARTS = 8
#: Columns that are results, not keys: never facets.
_RESULTS = ("estimate", "mcse", "reps", "lower_joint", "upper_joint", "lower", "upper")
#: The charts' script shipped with simstudy, and its SHA-256: pinned here, so that only this script is inlined.
#: It holds no ``</script``, ``<script`` or ``<!--`` (tests/test_report_html.py checks), so it cannot end or
#: escape the page's script element. To update it: ``vl_convert.javascript_bundle()`` of a newer
#: vl-convert-python into the file, its versions in LICENSES.txt and its hash here.
_BUNDLE_FILE = Path(__file__).parent / "_vendor" / "vega-bundle.js"
_BUNDLE_SHA256 = "3425bd951a44d478d0505c6b5d1e8d57656b6e9a4da7bfe88a718ce61d76e572"
_NO_BUNDLE = "the chart script shipped with simstudy is missing or fails its SHA-256 check"


@dataclass(frozen=True)
class Report:
    """A written ``report.html``.

    Parameters
    ----------
    path : pathlib.Path
        The page.
    charts : int
        Interactive charts on it (0 where the bundle could not be had: the page says so).
    rows : int
        Rows of the summary table.
    chunks : int
        Stored chunks whose checksums were verified while building it.
    damaged : tuple of str
        One line per stored chunk that failed its check (empty when all passed).
    size : int
        The page's size in bytes.
    seconds : float
        Time taken to build and write it.
    skipped : tuple of str
        One line per file not read (a link out of the directory, a FIFO, a sub-study's unreadable summary);
        the page lists them at its top. Default empty.

    Examples
    --------
    >>> Report(Path("report.html"), 3, 930, 4, (), 1_200_000, 0.03).charts
    3
    """

    path: Path
    charts: int
    rows: int
    chunks: int
    damaged: tuple[str, ...]
    size: int
    seconds: float
    skipped: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------- the JS bundle


def bundle() -> str | None:
    """vega, vega-lite and vega-embed as one offline script: the copy shipped with simstudy, checked on every read.

    The script (``simstudy/_vendor/vega-bundle.js``, made once by ``vl_convert.javascript_bundle()`` of
    vl-convert-python 1.9.0; its licences in ``LICENSES.txt`` beside it) is verified against the SHA-256 pinned
    here (:data:`_BUNDLE_SHA256`), never against a hash stored with it: a replaced copy is never inlined into a
    page. Nothing is built at run time: making the bundle starts V8, which reserves 64-80 GB of address space
    and dies natively under a cluster's ``ulimit -v``.

    Returns
    -------
    str or None
        The script (about 0.9 MB), or None when the shipped copy is missing or fails its check (a warning says
        which; the page then has no interactive charts and says why).

    Examples
    --------
    >>> script = bundle()
    >>> script is None or "vegaEmbed" in script
    True
    """
    from simstudy.io import open_regular

    try:
        with open_regular(_BUNDLE_FILE) as fh:
            data = fh.read()
    except OSError as exc:
        log.warning("report.html without charts: %s (%s); reinstall simstudy", _NO_BUNDLE, exc)
        return None
    if hashlib.sha256(data).hexdigest() != _BUNDLE_SHA256:
        log.warning("report.html without charts: %s (%s was changed); reinstall simstudy", _NO_BUNDLE, _BUNDLE_FILE)
        return None
    return data.decode("utf-8")


# ------------------------------------------------------------------------------------------------- reading


def _verify_chunks(
    run_dir: Path, fingerprint: str | None, *, inside: Path | None = None
) -> tuple[int, tuple[str, ...]]:
    """How many stored chunks of this fingerprint passed their checksum and identity check, and a line for
    each that did not (by :meth:`simstudy.engine.chunks.ChunkStore.verify`, which reads data, never code, and
    refuses a FIFO). A chunk that resolves out of ``inside`` (default ``run_dir``) is not read: a failed check."""
    from simstudy.engine.chunks import ChunkStore, CorruptChunk

    root_real = Path(os.path.realpath(inside if inside is not None else run_dir))
    # A study's run.json names its fingerprint; a command's (extrapolate, audit) does not: every store there.
    named = isinstance(fingerprint, str) and fingerprint and fingerprint.isalnum()
    roots = [run_dir / "chunks" / str(fingerprint)] if named else sorted((run_dir / "chunks").glob("*"))
    ok, damaged = 0, []
    for root in (r for r in roots if r.is_dir()):
        store = ChunkStore(root.parent, root.name)
        for cell, chunk, reps in store.stored():
            path = store.path(cell, chunk, reps)
            if not Path(os.path.realpath(path)).is_relative_to(root_real):
                damaged.append(f"{path.relative_to(run_dir)}: a link out of the directory; not read")
                continue
            try:
                store.verify(cell, chunk, reps)
                ok += 1
            except CorruptChunk as exc:
                damaged.append(str(exc))
    return ok, tuple(damaged)


# -------------------------------------------------------------------------------------------------- charts


def _facets(rows, x: str, hue: str, swept: list[str], candidates: list[str]) -> list[str]:
    """The keys one panel per value combination is drawn for: the swept factors, then any other key of
    ``candidates`` (keys of the whole frame with a handful of values) that varies among the rows."""
    skip = {x, hue, "study", "cell", "job", "measure", *_RESULTS}
    keys = [k for k in swept if k in rows and k not in skip]
    return keys + [c for c in candidates if c not in skip and c not in keys and rows[c].nunique() > 1]


def _facet_candidates(frame) -> list[str]:
    """Keys that could be facets: not floats (results), 2 to 12 distinct values in the whole frame."""
    return [c for c in frame.columns if frame[c].dtype.kind != "f" and 1 < frame[c].nunique() <= 12]


def _charts(frame, kind: str, swept: list[str], headline) -> list[Chart]:
    """The headline chart of the summary (or stacked frame), then one per other measure of it: estimate against
    x, one line per hue, ±2 MCSE bars, a tooltip with ``estimate ± MCSE``, one panel per facet value
    combination; a coverage (the study's headline role, or a measure named so) with its nominal level."""
    rows, spec = headline(frame, kind)
    if not len(rows) or spec.x not in rows:
        return []
    charts = [(rows, spec.ylabel, spec.role)]
    where = dict(spec.where)
    if "measure" in where and "measure" in frame:
        rest = frame[frame["measure"] != where["measure"]]
        for column, value in where.items():
            if column != "measure" and column in rest:
                rest = rest[rest[column] == value]
        if spec.hue == "estimator" and "estimator" in rest:  # as headline: truth and paired differences left out
            rest = rest[(rest["estimator"] != "truth") & ~rest["estimator"].astype(str).str.contains("-", regex=False)]
        for measure, group in rest.groupby("measure", sort=False):  # one pass, not a mask per measure
            if measure != "failed_chunks" and len(charts) < _MAX_CHARTS:
                # the frame's own key says what a measure is (never a chart's title)
                charts.append((group, str(measure), "coverage" if "coverage" in str(measure).lower() else "measure"))
    candidates = _facet_candidates(frame)
    out = []
    for rows, label, role in charts:
        facets = _facets(rows, spec.x, spec.hue, swept, candidates)
        rows, capped = _thinned(rows)
        chart = estimates(
            rows, x=spec.x, hue=spec.hue, ylabel=label, title=label, facets=facets, role=role, z=2.0, bars=True
        )
        out.append(replace(chart, note=capped) if capped else chart)
    return out


# --------------------------------------------------------------------------------------------------- table


def _table(frame) -> tuple[str, int]:
    """The summary as a sortable HTML table: estimate and MCSE (and a joint band) rounded to the digits the
    MCSE supports, other floats to 4 significant digits; each numeric cell keeps its value in ``data-v``.
    Built column by column (a Python loop per row costs tens of milliseconds on Figure 1's 930 rows)."""
    from simstudy.stats.metrics import format_estimate, format_number

    shown = frame.head(_MAX_ROWS)
    # A key with one value in every row (the study, its one cell) is said once above the table, not per row.
    same = [
        c
        for c in shown.columns
        if c not in _RESULTS and len(shown) > 1 and shown[c].dtype.kind != "f" and shown[c].nunique(dropna=False) == 1
    ]
    constants = ", ".join(f"{c} = {html.escape(str(json_value(shown[c].iloc[0])))}" for c in same)
    shown = shown.drop(columns=same)
    has_mcse = "estimate" in shown and "mcse" in shown
    if has_mcse:
        estimate = [float(v) for v in shown["estimate"].tolist()]
        mcse = [float(v) if v is not None and math.isfinite(v) else 0.0 for v in shown["mcse"].tolist()]
        pairs = [estimate_text(e, s).partition(" ± ") for e, s in zip(estimate, mcse)]
    columns = []
    for column in shown.columns:
        values = shown[column].tolist()
        kind = shown[column].dtype.kind
        if kind == "f":
            if has_mcse and column == "estimate":
                texts = [p[0] for p in pairs]
            elif has_mcse and column == "mcse":
                texts = [p[2] or format_number(v) for p, v in zip(pairs, values)]
            elif has_mcse and column in ("lower_joint", "upper_joint"):
                texts = [format_estimate(v, s, show_mcse=False) for v, s in zip(values, mcse)]
            else:
                texts = [format_number(v) for v in values]
            data = [repr(v) if v is not None and math.isfinite(v) else "" for v in values]
            columns.append([f'<td data-v="{d}">{t}</td>' for d, t in zip(data, texts)])
        elif kind in "iu":
            columns.append(
                [f'<td data-v="{v}">{v}</td>' if isinstance(v, int) else '<td data-v=""></td>' for v in values]
            )  # a nullable integer column's missing values: empty
        else:
            columns.append([f"<td>{html.escape(str(v))}</td>" for v in values])
    rows = ["<tr>" + "".join(cells) + "</tr>" for cells in zip(*columns)]
    head = "".join(f'<th title="sort by {html.escape(str(c))}">{html.escape(str(c))}</th>' for c in shown.columns)
    note = (
        f'<p class="note">The first {_MAX_ROWS:,} of {len(frame):,} rows; every row is in summary.csv.</p>'
        if len(frame) > _MAX_ROWS
        else ""
    )
    if constants:
        note += f"<p>In every row: {constants}.</p>"
    table = f'{note}<table id="summary"><thead><tr>{head}</tr></thead><tbody>\n' + "\n".join(rows)
    return table + "\n</tbody></table>", len(shown)


# ---------------------------------------------------------------------------------------------- provenance


def _dl(pairs: list[tuple[str, str]]) -> str:
    return "<dl>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def _code(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _provenance(files: Files, run_dir: Path, run: dict, chunks: int, damaged: tuple[str, ...], swept: list[str]) -> str:
    identity = files.json(run_dir / RECORD)
    env = run.get("environment", {})
    runner = run.get("runner", {})
    timings = run.get("timings", {})
    pairs = []

    def said(key: str, text) -> None:  # a pair whose value is plain text, escaped
        pairs.append((key, html.escape(str(text))))

    for key in ("study", "kind", "seed", "fingerprint"):
        if key in run:
            said(key, run[key])
    if swept:
        said("swept", ", ".join(swept))
    if env:
        versions = ", ".join(f"{k} {v}" for k, v in env.get("packages", {}).items())
        said("versions", f"Python {env.get('python', '?')}; {versions}")
        for key, name in (("git_revision", "git revision"), ("platform", "platform")):
            if env.get(key):
                said(name, env[key])
    if identity:
        inputs = identity.get("inputs") or {}
        hashes = _code(json.dumps(inputs, indent=1, sort_keys=True)) if inputs else "none (no data files)"
        pairs.append(("inputs (content hashes)", hashes))
        for key in ("kernels", "plugins", "settings"):
            value = identity.get(key)
            if value:
                said(key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value)
    if runner:
        said(
            "chunks",
            f"{runner.get('tasks', '?')} ({runner.get('computed', '?')} computed, {runner.get('resumed', '?')} resumed); "
            f"{runner.get('wall_seconds', float('nan')):.2f} s wall, {runner.get('compute_seconds', float('nan')):.2f} s compute",
        )
    if chunks or damaged:
        verified = f"{chunks} stored chunk(s): checksum and identity verified now"
        if damaged:
            verified = f"<strong>check failed for {len(damaged)} chunk(s)</strong> ({chunks} passed): " + "; ".join(
                html.escape(d) for d in damaged[:20]
            )
        pairs.append(("checksums", verified if damaged else html.escape(verified)))
    if "total_seconds" in timings:
        said("wall time", f"{timings['total_seconds']:.2f} s (the study: truth, chunks and summary)")
    failures = runner.get("failures") or []
    if failures:
        # runnable as printed: the run's plug-ins named (replay imports a stored config's plug-in only when named)
        plugins = identity.get("plugins") if identity else None
        named = f" plugins={','.join(sorted(plugins))}" if isinstance(plugins, dict) and plugins else ""
        lines = []
        for f in failures:
            where = f"{f.get('cell')}/{f.get('chunk')}"
            error = str(f.get("error", "")).splitlines()[0] if f.get("error") else ""
            lines.append(
                f"<li>chunk {html.escape(where)}: {html.escape(error)}<br><code>simstudy replay run_dir={html.escape(str(run_dir))} chunk={html.escape(where)}{html.escape(named)}</code></li>"
            )
        pairs.append(("failed chunks", f"<ul>{''.join(lines)}</ul>"))
    elif runner:
        pairs.append(("failed chunks", "none"))
    if run.get("distributions"):
        pairs.append(("distributions", _code(json.dumps(run["distributions"], indent=1, sort_keys=True))))
    out = _dl(pairs)
    config = files.text(run_dir / "config.yaml") if (run_dir / "config.yaml").is_file() else None
    if config is not None:
        out += f"<h3>config.yaml (as resolved)</h3>{_code(config)}"
    if run.get("config"):
        out += f"<details><summary>the validated config (run.json)</summary>{_code(json.dumps(run['config'], indent=1))}</details>"
    return out


# ---------------------------------------------------------------------------------------------------- page

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.chart{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top}
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px}
th{background:#f4f4f4;cursor:pointer;position:sticky;top:0}th.asc:after{content:" \\25B2"}th.desc:after{content:" \\25BC"}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums}.note{color:#a33}
dt{font-weight:600;margin-top:.4em}pre{background:#f7f7f7;padding:.5em;overflow-x:auto;font-size:.85em}
.page img{max-width:100%}.scroll{max-height:70vh;overflow:auto}
"""

# Sorting: a click on a header sorts the rows by that column (numbers by their data-v), again: descending.
_SORT = """
document.querySelectorAll("table#summary th").forEach(function(th, i){th.addEventListener("click", function(){
  var table = th.closest("table"), body = table.tBodies[0], rows = Array.from(body.rows);
  var asc = !th.classList.contains("asc");
  table.querySelectorAll("th").forEach(function(h){h.classList.remove("asc", "desc");});
  th.classList.add(asc ? "asc" : "desc");
  function key(r){var c = r.cells[i]; if (!c.hasAttribute("data-v")) return c.textContent;
    var v = parseFloat(c.dataset.v); return isNaN(v) ? Infinity : v;}  // a missing number: last
  rows.sort(function(a, b){var x = key(a), y = key(b);
    var d = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
    return asc ? d : -d;});
  rows.forEach(function(r){body.appendChild(r);});
});});
"""

_EMBED = """
// Tick labels at least 6 px apart, the ones that would come closer dropped (Vega's default lets two labels
// abut: "1,0002,000").
var AXES = {axis: {labelOverlap: "greedy", labelSeparation: 6}};
var specs = JSON.parse(document.getElementById("specs").textContent);
specs.forEach(function(spec, i){
  vegaEmbed("#chart" + i, spec, {actions: false, renderer: "svg", config: AXES}).catch(function(e){console.error(e);});
});
"""


def _html(title: str, sections: list[tuple[str, str, str]], charts: list[dict], script: str | None) -> str:
    """The page: a title, a line of links to its sections (anchor, heading, body HTML), the charts' specs as
    JSON, the inlined chart script and the table's sorting."""
    nav = " · ".join(f'<a href="#{anchor}">{html.escape(name)}</a>' for anchor, name, _ in sections)
    body = "".join(f'<h2 id="{anchor}">{html.escape(name)}</h2>{text}' for anchor, name, text in sections)
    specs = script_json(plain_titles(charts))
    scripts = f'<script id="specs" type="application/json">{specs}</script>'
    if script is not None and charts:
        scripts += f"<script>{script}</script><script>{_EMBED}</script>"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{_GENERATOR}{CSP}'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body><h1>{html.escape(title)}</h1>"
        f"<p>{nav}</p>{body}{scripts}<script>{_SORT}</script></body></html>\n"
    )


def _command_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a command's run (its ``run.json`` names the command): a command without a page
    still gets its provenance and charts."""
    return isinstance(Files(run_dir).json(run_dir / "run.json").get("command"), str)


def _build_iv(run_dir, pages: tuple[str, ...]) -> Path:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotAReport(
            f"run_dir={run_dir}: no such directory (give a run directory, e.g. outputs/dodge2021_fig1/...)"
        )
    if not any(os.path.lexists(run_dir / p) for p in ("summary.parquet", *pages)) and not _command_run(run_dir):
        raise NotAReport(
            f"run_dir={run_dir}: no summary.parquet there (nor {', '.join(pages)}, nor a command's run.json): give a "
            "finished run's directory "
            f"(or a sweep's, after simstudy collect sweep_dir=...)"
        )
    existing = run_dir / REPORT
    if os.path.lexists(existing):
        import stat

        if not stat.S_ISREG(os.lstat(existing).st_mode):  # a link, FIFO or directory: never opened, never replaced
            raise NotAReport(f"{existing} exists and is not a regular file: move it away to write the report")
        from simstudy.io import open_regular

        try:
            with open_regular(existing) as fh:
                head = fh.read(512).decode("utf-8", errors="replace")
        except OSError:
            head = ""
        if _GENERATOR not in head:
            raise NotAReport(f"{existing} exists and was not written by simstudy: move it away to write the report")
    return run_dir


def build(
    run_dir, *, headline=None, frame=None, swept=(), kind: str | None = None, charts=None, studies=(), pages=()
) -> Report:
    """Write ``report.html`` into a run (or sweep) directory, from what the directory holds.

    Parameters
    ----------
    run_dir : str or path-like
        A finished run's directory (``summary.parquet``, ``run.json``, ``config.yaml``, chunks), a sweep's
        or design's (its stacked ``summary.parquet``), or a command's with its page (``AUDIT.md``, ...).
    headline : callable, optional
        Keyword-only. ``headline(frame, kind) -> (rows, Headline)``: the rows the first chart draws and how
        (:func:`simstudy.sweeps.headline`, which every caller passes; given here, not imported, as the sweeps
        module writes its page through this one); each other measure of it gets a chart too. Default None:
        no charts.
    frame : pandas.DataFrame, optional
        Keyword-only. The summary, when the caller has it in memory (else ``summary.parquet`` is read).
    swept : sequence of str, optional
        Keyword-only. A sweep's swept keys: one facet per value combination. Default: none.
    kind : str, optional
        Keyword-only. The study kind (its headline chart); default from ``run.json``.
    charts : callable, optional
        Keyword-only. ``charts(files) -> list of simstudy.charts.Chart``: what a command directory's command
        draws of it (its files read through ``files``, a :class:`simstudy.report_safe.Files`), handed by the
        commands (:func:`simstudy.commands.report.charts`); the page knows no command's files. Default None:
        none.
    studies : sequence of str, optional
        Keyword-only. Subdirectories holding study runs of a command (``simstudy audit``'s): each one's
        headline and measures charted (``headline`` needed), its chunks verified. Default: none.
    pages : sequence of str, optional
        Keyword-only. The pages a command may have written at the top of the directory (``CURVE.md``, ...;
        :attr:`simstudy.registry.Command.page`, handed by :func:`simstudy.commands.report.run`), shown where
        present, after a study's (``FIELD.md``). Default: none.

    Returns
    -------
    Report
        The page, its chart and row counts, the chunks verified, its size and the seconds it took.

    Raises
    ------
    NotAReport
        If the directory has no ``summary.parquet`` and no page, holds a ``report.html`` simstudy did not write
        or that is not a regular file (never replaced), or its ``summary.parquet`` is a link out of the
        directory, not a regular file (a FIFO), or not a parquet table. Other files refused so are skipped
        (:attr:`Report.skipped`, and a note at the page's top).

    Examples
    --------
    Without ``headline`` (as here), the page has the table and provenance but no charts; the callers pass
    :func:`simstudy.sweeps.headline`.

    >>> import tempfile, pandas as pd
    >>> with tempfile.TemporaryDirectory() as d:
    ...     pd.DataFrame({"n": [1, 2], "measure": "mse", "estimate": [0.1, 0.05], "mcse": [0.011, 0.004],
    ...                   "estimator": "u"}).to_parquet(Path(d) / "summary.parquet")
    ...     done = build(d)
    ...     page = done.path.read_text(encoding="utf-8")
    >>> done.rows, "0.100" in page, "0.050" in page, "<script src" in page
    (2, True, True, False)
    >>> done.charts
    0
    """
    start = time.perf_counter()
    describe, studies = charts, tuple(studies)  # below, ``specs`` are the page's charts as Vega-Lite
    page_names = tuple(dict.fromkeys((*_STUDY_PAGES, *pages)))
    run_dir = _build_iv(run_dir, page_names)
    files = Files(run_dir)
    run = files.json(run_dir / "run.json")
    swept = list(swept)
    if frame is None and os.path.lexists(run_dir / "summary.parquet"):
        frame = files.parquet(run_dir / "summary.parquet", f"run_dir={run_dir}")
    if not swept and frame is not None and "job" in frame:  # a sweep's stacked frame: its keys follow "job"
        columns = list(frame.columns)
        swept = [c for c in columns[1 : columns.index("study")] if c != "cell"] if "study" in columns else []
    kind = kind if kind is not None else str(run.get("kind", ""))
    if not kind and frame is not None and "job" in frame:
        kind = _job_kind(files, frame)
    chunks, damaged = _verify_chunks(run_dir, run.get("fingerprint"))
    sections: list[tuple[str, str, str]] = []  # (anchor, heading, body HTML)
    rows = 0
    if frame is not None:
        shown = frame[frame["measure"] != "failed_chunks"] if "measure" in frame else frame
        drawn = headline is not None and len(shown) and "estimate" in shown
        specs = [to_vega(c) for c in _charts(shown, kind, swept, headline)] if drawn else []
        hover = "its estimate ± MCSE; bars: ±2 MCSE"
        table, rows = _table(frame)
        sections.append(("summary", "Summary", f'<p>Click a header to sort.</p><div class="scroll">{table}</div>'))
    else:  # a command's directory: its page, and charts of what it computed
        specs, sub_chunks, sub_damaged = _command_charts(files, headline, describe, studies)
        chunks, damaged = chunks + sub_chunks, damaged + sub_damaged
        hover = "its estimate and its error (± MCSE or band)"
    script = bundle() if specs else None
    if specs:  # the charts first, before the summary table
        sections.insert(0, ("charts", "Charts", _chart_divs(specs, script, hover)))
    for name in page_names:
        page = markdown_page(files, run_dir / name) if os.path.lexists(run_dir / name) else None
        if page is not None:
            sections.append((f"page-{name.split('.')[0].lower()}", name, f'<div class="page">{page}</div>'))
    if swept and frame is not None and "job" in frame:
        jobs = [j for j in dict.fromkeys(frame["job"].astype(str)) if inside(run_dir, run_dir / j / REPORT)]
        if jobs:
            from urllib.parse import quote

            links = "".join(f'<li><a href="{quote(j)}/{REPORT}">{html.escape(j)}</a></li>' for j in jobs)
            sections.append(
                ("jobs", "Jobs", f"<p>Each job's own page (its provenance and chunks):</p><ul>{links}</ul>")
            )
        if "environment" not in run:  # a sweep has no run.json: the versions its first job ran with
            first = next((j for j in dict.fromkeys(frame["job"].astype(str))), None)
            env = files.json(run_dir / first / "run.json").get("environment") if first is not None else None
            if env:
                run = {**run, "environment": env}
    try:
        provenance = _provenance(files, run_dir, run, chunks, damaged, swept)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a run.json edited by hand, or foreign
        provenance = f'<p class="note">run.json unreadable as a run\'s record ({html.escape(repr(exc))})</p>'
    sections.append(("provenance", "Provenance", provenance))
    named = run.get("study") or (
        frame["study"].iloc[0] if frame is not None and "study" in frame and len(frame) else ""
    )
    command = run.get("command") or files.json(run_dir / RECORD).get("command")
    title = f"simstudy report: {named or command or 'run'} ({run_dir.name})"
    if files.notes:  # said first: what the page could not show, and why
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in dict.fromkeys(files.notes))
        sections.insert(
            0, ("skipped", "Not shown", f'<p class="note">Files not read:</p><ul class="note">{notes}</ul>')
        )
    text = _html(title, sections, specs, script)
    from simstudy.io import atomic_path

    path = run_dir / REPORT
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    size = os.path.getsize(path)
    return Report(
        path,
        len(specs) if script is not None else 0,
        rows,
        chunks,
        damaged,
        size,
        time.perf_counter() - start,
        tuple(dict.fromkeys(files.notes)),
    )


def _chart_divs(charts: list[dict], script: str | None, hover: str) -> str:
    note = "" if script is not None else f'<p class="note">No interactive charts: {_NO_BUNDLE}.</p>'
    capped = [f"{c['title']}: {c['usermeta']['capped']}" for c in charts if "capped" in c.get("usermeta", {})]
    if capped:
        note += '<p class="note">Charts thinned: ' + html.escape("; ".join(capped)) + ".</p>"
    divs = "".join(f'<div class="chart" id="chart{i}"></div>' for i in range(len(charts)))
    return f"{note}<p>Hover a point for {hover}.</p>{divs}"


def _thinned(rows, table: str = "summary.csv") -> tuple[Any, str | None]:
    """At most :data:`_MAX_POINTS` of a chart's rows (a frame's or a handed chart's), evenly spaced (every k-th,
    so every panel and line keeps points), and what was left out; a million-row summary otherwise makes a page of
    100+ MB."""
    if len(rows) <= _MAX_POINTS:
        return rows, None
    step = -(-len(rows) // _MAX_POINTS)
    kept = rows.iloc[::step] if hasattr(rows, "iloc") else rows[::step]
    return kept, f"{len(kept):,} of {len(rows):,} points drawn (every {step:,}th row); every row is in {table}"


def _command_charts(
    files: Files, headline, describe, studies: tuple[str, ...]
) -> tuple[list[dict], int, tuple[str, ...]]:
    """The charts of a command's directory, and its sub-studies' chunks verified: what the command describes
    (``describe(files)``), then each sub-study's headline and measures (at most 3 each)."""
    charts = [to_vega(_capped(chart)) for chart in describe(files)] if describe is not None else []
    chunks, damaged = 0, tuple[str, ...]()
    run_dir = files.root
    for name in studies:
        sub = run_dir / name
        if not os.path.lexists(sub / "summary.parquet"):
            continue
        try:
            frame = files.parquet(sub / "summary.parquet", f"{name}/summary.parquet")
        except NotAReport as exc:  # one sub-study the page cannot show: said at its top, the rest shown
            files.notes.append(str(exc))
            log.warning("report.html: %s", exc)
            continue
        run = files.json(sub / "run.json")
        ok, bad = _verify_chunks(sub, run.get("fingerprint"), inside=run_dir)
        chunks, damaged = chunks + ok, damaged + bad
        frame = frame[frame["measure"] != "failed_chunks"] if "measure" in frame else frame
        if headline is not None and len(frame) and "estimate" in frame:
            for chart in _charts(frame, str(run.get("kind", "")), [], headline)[:3]:
                charts.append(to_vega(replace(chart, title=f"{name}: {chart.title}")))
    return charts, chunks, damaged


def _capped(chart: Chart) -> Chart:
    """A handed chart with at most :data:`_MAX_POINTS` rows (:func:`_thinned`), and a note of what was left out."""
    rows, note = _thinned(chart.rows, "its table")
    return replace(chart, rows=rows, note=note) if note else chart


def build_or_warn(run_dir, **kwargs) -> Report | None:
    """:func:`build` after a run: a page that cannot be written is a warning, never a failed run (the results
    are all there; ``simstudy report run_dir=DIR`` retries)."""
    try:
        return build(run_dir, **kwargs)
    except Exception as exc:  # the page is only a view of results already written
        log.warning(
            "report.html not written (%s: %s); retry: simstudy report run_dir=%s", type(exc).__name__, exc, run_dir
        )
        return None


def _job_kind(files: Files, frame) -> str:
    for job in dict.fromkeys(frame["job"].astype(str)):
        kind = files.json(files.root / job / "run.json").get("kind")
        if kind:
            return str(kind)
    return ""
