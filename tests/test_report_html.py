"""report.html (issue 28, part 4): one self-contained page per run, sweep and command page.

The fast lane checks the page as text (no network loads, the table rounded by the MCSE, the charts' specs,
the provenance, refusals) with a stub in place of the 0.9 MB chart script (the real one costs a second to
make the first time); the slow lane checks Figure 1's page at paper scale with the real script; the system
lane opens the page in a real headless Chromium with the network blocked: every chart draws, the console
stays clean, and a click on a header sorts the table.
"""

import contextlib
import hashlib
import html
import json
import os
import re
import shutil
import sys

import pandas as pd
import pytest
from _cli import one_line_error, simstudy

import simstudy as api
from simstudy import report_html
from simstudy.commands import report
from simstudy.schema import ConfigError
from simstudy.stats.metrics import format_estimate

TINY = ["runner.progress=false", "runner.figures=[]", "study.reps=200", "study.chunk_reps=100"]
STUB = "window.vegaEmbed = function () { return Promise.resolve(); };"


@pytest.fixture(autouse=True)
def _stub_script(request, monkeypatch):
    """The stub chart script, except where the real one is what is tested."""
    if not (request.node.get_closest_marker("slow") or request.node.get_closest_marker("system")):
        if not request.node.name.startswith("test_bundle"):
            monkeypatch.setattr(report_html, "bundle", lambda: STUB)


@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    """A run of the Figure 1 preset at 200 replicates (2 chunks); its page built with the stub script."""
    out = tmp_path_factory.mktemp("fig1") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_html, "bundle", lambda: STUB)
        result = api.run("dodge2021_fig1", TINY, out_dir=out)
    return out, result.summary


def _page(run_dir) -> str:
    return (run_dir / "report.html").read_text(encoding="utf-8")


def _specs(page: str) -> list[dict]:
    found = re.search(r'<script id="specs" type="application/json">(.*?)</script>', page, re.S)
    assert found, "no specs block"
    return json.loads(found.group(1))


def _column(page: str, name: str) -> list[str]:
    """The texts of column ``name`` of the summary table, top to bottom."""
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", page, re.S).group(1)
    names = [html.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", head)]
    body = re.search(r"<tbody>(.*?)</tbody>", page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [html.unescape(re.findall(r"<td[^>]*>(.*?)</td>", r)[names.index(name)]) for r in rows]


def test_page_is_self_contained_and_offline(fig1):
    run_dir, _ = fig1
    page = _page(run_dir)
    assert page.startswith("<!DOCTYPE html>") and report_html._GENERATOR in page
    assert STUB in page  # the chart script inlined, not referenced
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert not re.search(r"<link\b", page)
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:)?//""", page)  # no load from the network


def test_table_has_every_row(fig1):
    run_dir, summary = fig1
    page = _page(run_dir)
    assert len(_column(page, "estimate")) == len(summary)
    assert _column(page, "measure") == summary["measure"].tolist()


def test_table_rounds_estimates_to_their_mcse(tmp_path):
    # format_estimate's documented cases: 0.998 ± 0.001998 -> 0.998 ± 0.002; 0.99812 ± 0.00142 -> 0.9981 ± 0.0014;
    # 12.345 ± 3.2 -> 12 ± 3; an exact value (MCSE 0) keeps 4 significant digits.
    frame = pd.DataFrame(
        {
            "n": [1, 2, 3, 4],
            "estimator": "u",
            "measure": "mean",
            "estimate": [0.998, 0.99812, 12.345, 0.8898352881786101],
            "mcse": [0.001998, 0.00142, 3.2, 0.0],
            "reps": [100, 100, 100, 0],
        }
    )
    frame.to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    page = _page(tmp_path)
    assert _column(page, "estimate") == ["0.998", "0.9981", "12", "0.8898"]
    assert _column(page, "mcse") == ["0.002", "0.0014", "3", "0"]
    # the full value stays in data-v, for sorting
    assert 'data-v="0.99812"' in page
    # a key with one value in every row is said once, not in a column
    assert "In every row: estimator = u, measure = mean." in page and ">estimator</th>" not in page


def test_charts_show_each_measure_with_its_mcse(fig1):
    run_dir, summary = fig1
    specs = _specs(_page(run_dir))
    titles = [s["title"] for s in specs]
    assert titles[0] == "MSE"  # the study's headline first
    assert {"mean", "bias", "variance"} <= set(titles) and "mse" not in titles  # the others, once each
    mse = specs[0]["data"]["values"]
    rows = summary[(summary["measure"] == "mse") & summary["estimator"].isin(["u", "v", "w"])]
    assert len(mse) == len(rows)  # the truth and paired differences are not estimators: not drawn
    assert {v["hue"] for v in mse} == {"u", "v", "w"}
    first = rows.iloc[-1]
    point = next(v for v in mse if v["x"] == first["n"] and v["hue"] == first["estimator"])
    assert point["shown"] == format_estimate(first["estimate"], first["mcse"])
    assert point["lo"] == pytest.approx(first["estimate"] - 2 * first["mcse"])
    tooltip = specs[0]["layer"][-1]["encoding"]["tooltip"]
    assert tooltip[0] == {"field": "shown", "title": "estimate ± MCSE"}


def test_provenance(fig1):
    run_dir, _ = fig1
    page = _page(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["fingerprint"] in page
    assert f"numpy {run['environment']['packages']['numpy']}" in page
    assert "2 stored chunk(s): checksum and identity verified now" in page
    assert html.escape((run_dir / "config.yaml").read_text()) in page
    assert "failed chunks</dt><dd>none" in page


def test_damaged_chunk_is_named(fig1, tmp_path):
    run_dir, _ = fig1
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    chunk = sorted(copy.glob("chunks/*/cell-*/chunk-*.npz"))[0]
    chunk.write_bytes(chunk.read_bytes()[:-10])
    done = report.run(copy)
    assert done.chunks == 1 and len(done.damaged) == 1 and chunk.name in done.damaged[0]
    assert "check failed for 1 chunk(s)" in _page(copy)


def test_failed_chunks_listed_with_their_replay_line(fig1, tmp_path):
    run_dir, _ = fig1
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    run = json.loads((copy / "run.json").read_text())
    run["runner"]["failures"] = [{"cell": "abc123", "chunk": 1, "seed_key": [0, 1], "error": "ValueError: boom\nmore"}]
    (copy / "run.json").write_text(json.dumps(run))
    report.run(copy)
    assert f"simstudy replay run_dir={copy} chunk=abc123/1" in _page(copy)
    assert "ValueError: boom" in _page(copy)


def test_the_replay_line_of_a_plugin_run_names_its_plugins(fig1, tmp_path):
    # replay imports a stored config's plug-in only when named: the page's line must run as printed
    from simstudy.engine.identity import RECORD

    run_dir, _ = fig1
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    run = json.loads((copy / "run.json").read_text())
    run["runner"]["failures"] = [{"cell": "abc123", "chunk": 1, "seed_key": [0, 1], "error": "ValueError: boom"}]
    (copy / "run.json").write_text(json.dumps(run))
    record = json.loads((copy / RECORD).read_text())
    record["plugins"] = {"my_dists.skewed": "ab12", "my_estimators.best": "cd34"}
    (copy / RECORD).write_text(json.dumps(record))
    report.run(copy)
    assert (f"simstudy replay run_dir={copy} chunk=abc123/1 plugins=my_dists.skewed,my_estimators.best"
            in html.unescape(_page(copy)))


def test_coverage_chart_has_the_nominal_line(tmp_path):
    frame = pd.DataFrame(
        {
            "method": ["ks", "ks", "ld", "ld"],
            "n": [5, 10, 5, 10],
            "measure": "coverage",
            "nominal": 0.95,
            "estimate": [0.96, 0.95, 0.93, 0.94],
            "mcse": 0.01,
        }
    )
    frame.to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    layers = _specs(_page(tmp_path))[0]["layer"]
    assert layers[-1]["mark"]["type"] == "rule" and layers[-1]["encoding"]["y"]["field"] == "nominal"
    assert all(v["nominal"] == 0.95 for v in _specs(_page(tmp_path))[0]["data"]["values"])


def test_sweep_facets_per_swept_value(tmp_path):
    frame = pd.DataFrame(
        {
            "job": ["sd=0.05"] * 2 + ["sd=0.1"] * 2,
            "sd": [0.05, 0.05, 0.1, 0.1],
            "study": "s",
            "estimator": "u",
            "n": [1, 2, 1, 2],
            "measure": "mse",
            "estimate": [0.1, 0.2, 0.3, 0.4],
            "mcse": 0.01,
        }
    )
    frame.to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)  # the swept keys read from the stacked frame's columns
    spec = _specs(_page(tmp_path))[0]
    assert spec["facet"]["field"] == "panel"
    assert {v["panel"] for v in spec["data"]["values"]} == {"sd=0.05", "sd=0.1"}


def test_joint_band_shown_where_the_summary_has_one(tmp_path):
    frame = pd.DataFrame(
        {"n": [1, 2], "estimator": "u", "measure": "mean", "estimate": [0.5, 0.6], "mcse": [0.01, 0.01]}
    ).assign(lower_joint=[0.4123, 0.5123], upper_joint=[0.6123, 0.7123])
    frame.to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    page = _page(tmp_path)
    assert _column(page, "lower_joint") == ["0.412", "0.512"]  # to the MCSE's digits (0.010: a leading 1 keeps two)
    assert _specs(page)[0]["data"]["values"][0]["joint"] == "[0.412, 0.612]"


def test_command_page_as_html_with_its_figure_embedded(tmp_path):
    (tmp_path / "coverage.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "AUDIT.md").write_text(
        "# Audit\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n![coverage](coverage.png)\n\n<script>alert(1)</script>\n"
    )
    done = report.run(tmp_path)
    page = _page(tmp_path)
    assert done.rows == 0 and "<h1>Audit</h1>" in page and "<td>2</td>" in page
    assert 'src="data:image/png;base64,' in page and 'src="coverage.png"' not in page
    assert "<script>alert(1)</script>" not in page  # raw HTML in a page is shown, never run


def test_extrapolate_page_gets_its_curves_as_a_chart(tmp_path):
    (tmp_path / "EXTRAPOLATE.md").write_text("# Extrapolated tuning curves\n")
    pd.DataFrame(
        {
            "model": "m",
            "runs": 48,
            "k": [1.0, 48.0, 480.0],
            "curve": "median",
            "estimate": [0.8, 0.9, 0.95],
            "lower": [0.7, 0.85, float("nan")],
            "upper": [0.85, 0.92, float("nan")],
        }
    ).to_csv(tmp_path / "extrapolation.csv", index=False)
    done = report.run(tmp_path)
    (spec,) = _specs(_page(tmp_path))
    assert done.charts == 1 and spec["spec"]["layer"][0]["encoding"]["x"]["scale"] == {"type": "log"}
    assert [v["shown"] for v in spec["data"]["values"]] == ["0.8 [0.7, 0.85]", "0.9 [0.85, 0.92]", "0.95"]
    assert {v["hue"] for v in spec["data"]["values"]} == {"median, 48 runs"}


def test_audit_page_gets_its_studies_charts(tmp_path):
    (tmp_path / "AUDIT.md").write_text("# Audit of tuning-curve analyses\n")
    (tmp_path / "coverage").mkdir()
    pd.DataFrame(
        {"method": "ks", "nominal": [0.8, 0.95], "measure": "coverage", "estimate": [0.79, 0.94], "mcse": 0.01}
    ).to_parquet(tmp_path / "coverage" / "summary.parquet")
    done = report.run(tmp_path)
    (spec,) = _specs(_page(tmp_path))
    assert done.charts == 1 and spec["title"] == "coverage: coverage"
    assert [v["x"] for v in spec["data"]["values"]] == [0.8, 0.95]


def test_refuses_a_directory_with_nothing_to_report(tmp_path):
    with pytest.raises(ConfigError, match=r"run_dir=.*: no summary.parquet there"):
        report.run(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_never_replaces_a_report_it_did_not_write(fig1, tmp_path):
    pd.DataFrame({"estimate": [1.0]}).to_parquet(tmp_path / "summary.parquet")
    (tmp_path / "report.html").write_text("<html>mine</html>")
    with pytest.raises(ConfigError, match="was not written by simstudy"):
        report.run(tmp_path)
    assert (tmp_path / "report.html").read_text() == "<html>mine</html>"


def test_command_line(fig1, tmp_path):
    run_dir, _ = fig1
    done = simstudy("report", f"run_dir={run_dir}", cwd=tmp_path)
    assert "report.html" in done.stdout and "2 chunks verified" in done.stdout
    one_line_error(simstudy("report", f"run_dir={tmp_path}", cwd=tmp_path, check=False), "no summary.parquet there")
    one_line_error(simstudy("report", cwd=tmp_path, check=False), "run_dir is required")


def test_bundle_is_the_shipped_script_and_needs_no_v8(tmp_path, monkeypatch, caplog):
    """Issue 34 §5: building the bundle starts V8 (64-80 GB of address space, fatal under ``ulimit -v``); the
    shipped script is used, vl_convert never imported, nothing written to the cache."""
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # importing it raises ImportError
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    script = report_html.bundle()
    assert script is not None and "vegaEmbed" in script
    assert hashlib.sha256(script.encode()).hexdigest() == report_html._BUNDLE_SHA256
    assert list(tmp_path.iterdir()) == []


def test_bundle_never_trusts_a_cache_that_vouches_for_itself(tmp_path, monkeypatch):
    """Issue 34 §5: a replaced bundle in a shared ``$SIMSTUDY_CACHE_DIR`` with a matching self-hash header was
    inlined into every page."""
    forged = "window.vegaEmbed = function () { document.title = 'pwned'; };"
    digest = hashlib.sha256(forged.encode()).hexdigest()
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "vega-bundle.js").write_text(f"/* simstudy-vega-bundle:1 sha256:{digest} */\n{forged}")
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path))
    script = report_html.bundle()
    assert script is not None and "pwned" not in script
    assert hashlib.sha256(script.encode()).hexdigest() == report_html._BUNDLE_SHA256


def test_bundle_changed_in_the_package_is_refused_and_the_page_says_why(tmp_path, monkeypatch, caplog):
    replaced = tmp_path / "vega-bundle.js"
    replaced.write_text("window.vegaEmbed = function () { document.title = 'pwned'; };")
    monkeypatch.setattr(report_html, "_BUNDLE_FILE", replaced)
    assert report_html.bundle() is None
    assert "fails its SHA-256 check" in caplog.text
    pd.DataFrame({"n": [1, 2], "estimator": "u", "measure": "mse", "estimate": [0.1, 0.05], "mcse": 0.01}).to_parquet(
        tmp_path / "summary.parquet"
    )
    done = report.run(tmp_path)
    page = _page(tmp_path)
    assert done.charts == 0 and "pwned" not in page and "No interactive charts: the chart script" in page


def test_bundle_shipped_cannot_end_or_escape_its_script_element():
    text = report_html._BUNDLE_FILE.read_text(encoding="utf-8").lower()
    assert "</script" not in text and "<script" not in text and "<!--" not in text
    licences = (report_html._BUNDLE_FILE.parent / "LICENSES.txt").read_text()
    assert all(name in licences for name in ("vega ", "vega-lite", "vega-embed", "Redistribution and use"))


@pytest.mark.slow
def test_figure1_page_at_paper_scale_under_5_mb(tmp_path):
    out = tmp_path / "run"
    api.run("dodge2021_fig1", ["runner.progress=false", "runner.figures=[]"], out_dir=out)  # 10,000 replicates
    page = _page(out)
    size = (out / "report.html").stat().st_size
    assert size < 5_000_000, size
    assert "vegaEmbed" in page and len(_specs(page)) >= 3


# ------------------------------------------------------------------------------------------ in a real browser


def _driver():
    """Headless Chromium through chromedriver, the network blocked; skip in one line without them."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    chromedriver = shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("no chromium and chromedriver here (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--proxy-server=127.0.0.1:9",  # nothing listens there: any request to the network fails
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service

    return webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))


#: Per chart: how many data marks (points, lines, bars, bands) its SVG holds.
MARKS = (
    "return Array.from(document.querySelectorAll('.chart')).map(d => "
    "d.querySelectorAll('g.role-mark path, g.role-mark line').length)"
)


@pytest.fixture(scope="module")
def browser():
    driver = _driver()
    yield driver
    driver.quit()


def _open(driver, page, charts: int) -> None:
    """Load the page; wait until every chart has drawn its marks; no console error or Vega warning."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # the earlier page's
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(lambda d: len(d.execute_script(MARKS)) == charts and all(d.execute_script(MARKS)))
    logged = driver.get_log("browser")  # errors, and Vega's warnings about a spec (e.g. an empty field)
    assert [e for e in logged if e["level"] == "SEVERE" or "WARN" in e["message"]] == [], logged


@pytest.mark.system
def test_page_in_a_headless_browser(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "run"
    api.run("dodge2021_fig1", TINY, out_dir=out)  # the real chart script (made once, then cached)
    charts = len(_specs(_page(out)))
    assert charts >= 3
    _open(browser, out / "report.html", charts)
    # hovering a point of the first chart shows its estimate ± MCSE
    points = browser.find_elements(By.CSS_SELECTOR, "#chart0 g.role-mark.mark-symbol path")
    point = points[len(points) // 2]
    ActionChains(browser).move_to_element(point).perform()
    tip = "var t = document.getElementById('vg-tooltip-element'); return t ? t.textContent : '';"
    WebDriverWait(browser, 10).until(lambda d: "estimate ± MCSE" in d.execute_script(tip))
    assert re.search(r"estimate ± MCSE\s*[-0-9.]+ ± [0-9.]+", browser.execute_script(tip))
    # a click on a header sorts the rows by it, a second click the other way
    header = browser.find_elements(By.CSS_SELECTOR, "table#summary th")
    index = [h.text for h in header].index("estimate")
    values = f"return Array.from(document.querySelectorAll('table#summary tbody tr')).map(r => parseFloat(r.cells[{index}].dataset.v))"
    before = browser.execute_script(values)
    assert before != sorted(before)  # the summary's own order: by measure, not by estimate
    header[index].click()
    assert browser.execute_script(values) == sorted(before)
    header[index].click()
    assert browser.execute_script(values) == sorted(before, reverse=True)


@pytest.mark.system
def test_sweep_coverage_page_in_a_headless_browser(browser, tmp_path):
    # a stacked frame of two jobs: one panel each, coverage against the nominal level with its diagonal
    frame = pd.DataFrame(
        {
            "job": ["sd=0.05"] * 4 + ["sd=0.1"] * 4,
            "sd": [0.05] * 4 + [0.1] * 4,
            "study": "s",
            "method": ["ks", "ks", "ld", "ld"] * 2,
            "nominal": [0.8, 0.95] * 4,
            "measure": "coverage",
            "estimate": [0.81, 0.96, 0.78, 0.94, 0.8, 0.95, 0.79, 0.93],
            "mcse": 0.01,
        }
    )
    frame.to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    (spec,) = _specs(_page(tmp_path))
    assert spec["spec"]["layer"][-1]["encoding"]["y"]["field"] == "nominal"  # the diagonal
    _open(browser, tmp_path / "report.html", 1)
    panels = "return document.querySelectorAll('#chart0 g.cell > g').length"
    assert browser.execute_script(panels) == 2


#: Per chart and axis: the boxes of its tick labels, left to right or bottom to top.
TICK_BOXES = """
return Array.from(document.querySelectorAll('.chart g.role-axis')).map(function(axis){
  return Array.from(axis.querySelectorAll('g.role-axis-label text'))
    .filter(function(t){ return t.textContent && getComputedStyle(t).opacity !== '0' && t.getAttribute('opacity') !== '0'; })
    .map(function(t){ var b = t.getBoundingClientRect(); return [t.textContent, b.left, b.right, b.top, b.bottom]; });
});
"""


@pytest.mark.system
@pytest.mark.parametrize("page", ["extrapolate", "summary"])
def test_tick_labels_never_touch(browser, tmp_path, page):
    # budgets into the thousands: Vega printed labels 1,000 and 2,000 side by side as "1,0002,000"
    k = [1.0, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 51200]
    if page == "extrapolate":
        (tmp_path / "EXTRAPOLATE.md").write_text("# Extrapolated tuning curves\n")
        pd.DataFrame({"model": "m", "runs": 50, "k": k, "curve": "median",
                      "estimate": [0.8 + 0.01 * i for i in range(len(k))], "lower": float("nan"),
                      "upper": float("nan")}).to_csv(tmp_path / "extrapolation.csv", index=False)
    else:  # a sweep's faceted chart: three narrow panels, n on a linear axis to 5,000
        n = list(range(1, 5001, 50))
        pd.DataFrame({"job": [f"B={b}" for b in (10, 20, 30) for _ in n], "B": [b for b in (10, 20, 30) for _ in n],
                      "study": "s", "estimator": "u", "n": n * 3, "measure": "mse",
                      "estimate": [1e-4 * i for i in range(3 * len(n))], "mcse": 1e-6}).to_parquet(
            tmp_path / "summary.parquet")
    report.run(tmp_path)
    _open(browser, tmp_path / "report.html", 1)
    touching, axes = [], browser.execute_script(TICK_BOXES)
    axes = [boxes for boxes in axes if boxes]  # a facet's header axes have no labels
    assert axes and all(len(boxes) >= 2 for boxes in axes)  # the check reads the labels it means to
    for boxes in axes:
        for (a, l1, r1, t1, b1), (b, l2, r2, t2, b2) in zip(boxes, boxes[1:]):
            apart = max(l2 - r1, l1 - r2, t2 - b1, t1 - b2)  # the gap between two boxes, < 0 where they overlap
            if apart < 2:
                touching.append((a, b, round(apart, 1)))
    assert touching == []


# ------------------------------------------------------------------ issue 34 §5: a page that cannot be broken into

#: What a hostile directory names its models, columns, facet values and measures: each would end the page's
#: script element or put the parser in a script-escape state if it reached a script as itself.
EVIL = ("<!--<script>", "</script><img src=x onerror=alert(1)>", "a&b>c\u2028\u2029\"'\\\x07")


def _strings(value) -> list[str]:
    """Every string in a JSON value (keys and values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def _scripts_are_only_ours(page: str) -> None:
    """The page has exactly its own four script elements (specs, chart script, embed, sort), no ``<!--``, and
    no JavaScript line terminator (U+2028, U+2029) inside a script (in HTML text they are harmless)."""
    lower = page.lower()
    assert (lower.count("<script"), lower.count("</script")) == (4, 4)
    assert "<!--" not in page
    scripts = "".join(re.findall(r"<script[^>]*>(.*?)</script>", page, re.S))
    assert "\u2028" not in scripts and "\u2029" not in scripts


def _hostile(run_dir) -> None:
    """A run directory whose every name is hostile (:data:`EVIL`), with a page that links and images out."""
    frame = pd.DataFrame(
        {
            "study": EVIL[0],
            "n": [1, 2] * 6,
            "estimator": [EVIL[0], EVIL[1]] * 6,
            EVIL[1]: [v for v in EVIL for _ in range(4)],  # a key column with 3 values: a facet
            "measure": [EVIL[2]] * 6 + ["mse"] * 6,
            "estimate": [0.1 * (i + 1) for i in range(12)],
            "mcse": 0.01,
        }
    )
    tmp_path = run_dir
    frame.to_parquet(tmp_path / "summary.parquet")
    (tmp_path / "run.json").write_text(json.dumps({"study": EVIL[1], "kind": EVIL[0], "seed": EVIL[2]}))
    (tmp_path / "config.yaml").write_text(f"study: {json.dumps(EVIL[1])}\n")
    (tmp_path / "FIELD.md").write_text(
        f"# {EVIL[0]}\n\n{EVIL[1]} and `{EVIL[0]}`\n\n![t](http://evil.example/track.png)\n"
    )


def test_every_user_string_reaching_the_page_is_escaped(tmp_path):
    """Issue 34 §5: a model, column, facet value or measure named ``<!--<script>`` made the specs swallow the
    rest of the page. Every such string reaches the page, as data, and never as markup."""
    _hostile(tmp_path)
    done = report.run(tmp_path)
    page = _page(tmp_path)
    assert done.charts >= 1
    _scripts_are_only_ours(page)
    strings = "\n".join(_strings(_specs(page)))  # the data arrive, unescaped, in the browser
    assert all(evil in strings for evil in EVIL)
    body = page.split('<script id="specs"')[0]  # outside the scripts: as text, escaped
    assert html.escape(EVIL[1]) in body and "<img" not in body


def test_a_command_pages_strings_are_escaped_too(tmp_path):
    """The extrapolation chart's models and curves, and an audit sub-study's estimators, as in the study's."""
    (tmp_path / "EXTRAPOLATE.md").write_text(f"# {EVIL[1]}\n")
    pd.DataFrame(
        {"model": EVIL[0], "runs": 48, "k": [1.0, 48.0], "curve": EVIL[2], "estimate": [0.8, 0.9]}
    ).assign(lower=[0.7, 0.85], upper=[0.85, 0.92]).to_csv(tmp_path / "extrapolation.csv", index=False)
    done = report.run(tmp_path)
    page = _page(tmp_path)
    assert done.charts == 1
    _scripts_are_only_ours(page)
    values = _specs(page)[0]["data"]["values"]
    assert {v["panel"] for v in values} == {EVIL[0]} and all(v["hue"].startswith(EVIL[2]) for v in values)


def test_markdown_pages_have_no_raw_html_and_no_links_out(tmp_path):
    """Issue 34 §5: pages of a directory someone sent had raw HTML and remote images, which the "offline" page
    fetched when opened. Only the directory's own files are linked; its own images are embedded."""
    (tmp_path / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "summary.csv").write_text("a\n1\n")
    (tmp_path / "AUDIT.md").write_text(
        "# Audit\n\n<img src=x onerror=alert(1)>\n\n"
        "![t](http://evil.example/track.png) ![p](//evil.example/p.png) ![a](/etc/hosts.png) "
        "![d](data:image/png;base64,AAAA)\n\n"
        "[w](http://evil.example/) [j](javascript:alert(1)) <http://evil.example/auto> [up](../outside.csv)\n\n"
        "![own](fig.png) [the table](summary.csv) [top](#summary)\n"
    )
    report.run(tmp_path)
    page = _page(tmp_path)
    attributes = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert not [a for a in attributes if "evil" in a or "javascript" in a or a.startswith(("/", "..", "data:image/png;base64,AAAA"))]
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "[image not shown: t]" in page
    assert 'src="data:image/png;base64,iVBORw0K' in page  # fig.png, embedded
    assert 'href="summary.csv"' in page and 'href="#summary"' in page


@pytest.mark.parametrize("name", ["config.yaml", "run.json", "AUDIT.md", "FIELD.md", report_html.RECORD])
def test_a_link_out_of_the_directory_is_never_read(tmp_path, name, caplog):
    """Issue 34 §5: ``config.yaml``, ``run.json``, ``AUDIT.md``, ``FIELD.md`` (or the identity) linked to a
    secret got its contents embedded in the page. The file is skipped, and the page says so at its top."""
    secret = tmp_path / "secret.txt"
    secret.write_text(json.dumps({"study": "TOPSECRET", "inputs": {"x": "TOPSECRET"}, "command": "TOPSECRET"}))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    pd.DataFrame({"n": [1, 2], "measure": "mse", "estimate": [0.1, 0.05], "mcse": 0.01}).to_parquet(
        run_dir / "summary.parquet"
    )
    os.symlink(secret, run_dir / name)
    done = report.run(run_dir)
    page = _page(run_dir)
    assert "TOPSECRET" not in page
    assert len(done.skipped) == 1 and "a link out of" in done.skipped[0] and name in done.skipped[0]
    assert page.index("Files not read") < page.index("Summary</h2>") and "a link out of" in caplog.text


def test_a_summary_linked_out_or_garbage_is_one_line(tmp_path):
    """Issue 34 §5 and §6: ``summary.parquet`` linked to another file is refused in one line; a garbage one
    was an ``ArrowInvalid`` traceback. Exit 2, nothing written."""
    outside = tmp_path / "elsewhere.parquet"
    pd.DataFrame({"n": [1], "estimate": [0.5], "secret": "TOPSECRET"}).to_parquet(outside)
    linked, garbage = tmp_path / "linked", tmp_path / "garbage"
    linked.mkdir()
    garbage.mkdir()
    os.symlink(outside, linked / "summary.parquet")
    (garbage / "summary.parquet").write_bytes(b"PAR1 this is not a parquet file PAR1")
    one_line_error(simstudy("report", f"run_dir={linked}", cwd=tmp_path, check=False), "a link out of")
    one_line_error(simstudy("report", f"run_dir={garbage}", cwd=tmp_path, check=False), "is not a parquet table")
    assert sorted(p.name for p in linked.iterdir()) == ["summary.parquet"]
    assert sorted(p.name for p in garbage.iterdir()) == ["summary.parquet"]


def _within(seconds: float, fifos: list, call):
    """``call()``'s result, or a failure if it is still blocked after ``seconds`` (a FIFO opened for reading
    waits for a writer for ever: the FIFOs are then opened for writing once, so that the thread ends)."""
    import threading

    out: dict = {}

    def target():
        try:
            out["value"] = call()
        except BaseException as exc:  # handed to the test's thread
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(seconds)
        pytest.fail("blocked on a FIFO")
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_fifo_is_never_opened(fig1, tmp_path):
    """Issue 34 §5: a FIFO as ``report.html``, ``run.json`` or a chunk made ``report`` hang."""
    run_dir = tmp_path / "run"
    shutil.copytree(fig1[0], run_dir)
    chunk = sorted(run_dir.glob("chunks/*/cell-*/chunk-000000-*.npz"))[0]
    chunk.unlink()
    os.mkfifo(chunk)
    (run_dir / "run.json").unlink()
    os.mkfifo(run_dir / "run.json")
    fifos = [chunk, run_dir / "run.json"]
    done = _within(20, fifos, lambda: report.run(run_dir))
    assert any("FIFO" in line for line in done.damaged) and any("FIFO" in line for line in done.skipped)
    (run_dir / "report.html").unlink()
    os.mkfifo(run_dir / "report.html")
    with pytest.raises(ConfigError, match="report.html exists and is not a regular file"):
        _within(20, [run_dir / "report.html"], lambda: report.run(run_dir))


def test_chart_points_are_capped_and_the_page_says_so(tmp_path, monkeypatch):
    """Issue 34 §5: a 1,000,000-row summary made a 136 MB page (the table was capped, the charts' points not)."""
    monkeypatch.setattr(report_html, "_MAX_POINTS", 50)
    rows = 400
    pd.DataFrame(
        {"n": list(range(1, rows + 1)), "estimator": "u", "measure": "mse", "estimate": 0.5, "mcse": 0.01}
    ).to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    page = _page(tmp_path)
    (spec,) = _specs(page)
    assert 40 <= len(spec["data"]["values"]) <= 50
    assert "Charts thinned" in page and f"of {rows} points drawn" in page
    assert len(_column(page, "n")) == rows  # the table keeps every row


@pytest.mark.slow
def test_a_million_row_summary_makes_a_page_of_a_few_mb(tmp_path):
    n = 1_000_000
    pd.DataFrame(
        {
            "n": [1 + i % 1000 for i in range(n)],
            "estimator": [f"e{i // 1000 % 4}" for i in range(n)],
            "cell": [f"c{i // 4000}" for i in range(n)],
            "measure": "mse",
            "estimate": 0.5,
            "mcse": 0.01,
        }
    ).to_parquet(tmp_path / "summary.parquet")
    report.run(tmp_path)
    size = (tmp_path / "report.html").stat().st_size
    assert size < 12_000_000, size
    assert "of 1,000,000 points drawn" in _page(tmp_path)


@pytest.mark.system
def test_a_run_under_a_capped_address_space_writes_its_page_with_charts(tmp_path):
    """Issue 34 §5: under ``ulimit -v 12G`` (as clusters cap it) the first run with an empty cache died natively
    making the bundle (V8 reserves 64-80 GB: "Fatal process out of memory", rc -5), with no report. The shipped
    bundle needs no V8: the run finishes and its page has its charts."""
    import resource
    import subprocess

    from _cli import FIG1, clean_env

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (12 << 30, 12 << 30))

    env = clean_env(SIMSTUDY_CACHE_DIR=str(tmp_path / "cache"))  # empty: nothing cached to fall back on
    args = [*FIG1, *TINY[1:], "hydra.run.dir=run"]
    proc = subprocess.run(
        [sys.executable, "-m", "simstudy.cli", *args],
        cwd=tmp_path,
        env=env,
        preexec_fn=cap,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = _page(tmp_path / "run")
    assert "vegaEmbed" in page and len(_specs(page)) >= 3 and "No interactive charts" not in page


@pytest.mark.system
def test_a_hostile_page_in_a_headless_browser(browser, tmp_path):
    """Issue 34 §5 in a real browser: a directory with hostile names and a remote image draws every chart (its
    scripts were not swallowed), sorts its table, loads nothing from anywhere and runs none of its strings."""
    from selenium.webdriver.common.by import By

    _hostile(tmp_path)
    report.run(tmp_path)
    _open(browser, tmp_path / "report.html", len(_specs(_page(tmp_path))))
    sources = browser.execute_script("return Array.from(document.images).map(i => i.getAttribute('src'))")
    assert all(src.startswith("data:") for src in sources), sources
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert browser.find_elements(By.CSS_SELECTOR, "img[onerror]") == []
    header = browser.find_elements(By.CSS_SELECTOR, "table#summary th")
    header[0].click()  # the sorting script ran: it comes after the specs
    assert "asc" in header[0].get_attribute("class")


@pytest.mark.system
def test_the_data_commands_charts_draw_in_a_headless_browser(browser, tmp_path):
    """curve's chart (a target and its drops), bands' two (its panels of their own views, steps, trivial sides,
    the CDF) and extrapolate's (references, ranges, grey series): every chart the PNGs are drawn from draws on the
    page too, with no console error or Vega warning (an empty layer's infinite extent, an unknown property)."""
    import numpy as np

    from simstudy.commands import bands, curve

    rng = np.random.default_rng(35)
    scores = {"a": rng.beta(20, 3, size=30), "b": rng.beta(14, 4, size=30)}
    for name, command, settings in (
        ("curve", curve, {"data": "s.csv", "target": 0.85}),
        ("bands", bands, {"data": "s.csv", "low": 0, "high": 1, "method": "ld_highest_density"}),
        ("losses", bands, {"data": "s.csv", "low": 0, "high": 1, "minimize": True, "method": "dkw"}),
    ):
        out = tmp_path / name
        out.mkdir()
        command.write(command.run(settings, scores), out)
        (out / "run.json").write_text(json.dumps({"command": command.COMMAND.name, "config": settings}))
        report.run(out)
        specs = _specs(_page(out))
        assert len(specs) == (1 if command is curve else 2)
        _open(browser, out / "report.html", len(specs))
