"""``simstudy report``'s charts come from the run's command (its spec's ``charts`` hook), never a list of commands
(issue 35 step 2: one chart description per chart, declared by the command that draws it)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from simstudy import extend, io, registry
from simstudy.charts import Chart
from simstudy.commands import _template, bands, curve, extrapolate, report
from simstudy.report_safe import Files

SCORES = {"a": np.array([0.2, 0.4, 0.3, 0.7, 0.5, 0.45]), "b": np.array([0.1, 0.6, 0.35, 0.55, 0.5, 0.3])}


def _both(tmp_path):
    """A directory holding curve's and bands' pages and tables (as each command's write leaves them)."""
    curves = curve.run({"data": "scores.csv"}, SCORES)
    io.write_csv(curves.curves, tmp_path / "curves.csv")
    curve._page(curves, tmp_path / "CURVE.md")
    banded = bands.run({"data": "scores.csv", "low": 0, "high": 1, "method": "dkw", "max_k": 8}, SCORES)
    io.write_csv(banded.bands, tmp_path / "bands.csv")
    bands._page(banded, tmp_path / "BANDS.md")
    return curves, banded


def test_the_data_commands_declare_their_report_charts_in_their_spec():
    assert registry.command("curve").charts is curve.report_charts
    assert registry.command("bands").charts is bands.report_charts
    assert registry.command("extrapolate").charts is extrapolate.report_charts
    assert registry.command("collect").charts is None  # a plain command draws no chart of its own


@pytest.mark.parametrize("command", ["curve", "bands"])
def test_the_report_asks_the_command_its_run_json_names_and_draws_the_table_it_wrote(tmp_path, command):
    curves, banded = _both(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"command": command}))
    (chart,) = report.charts(Files(tmp_path))  # the other command's page and table beside it: not drawn
    if command == "curve":
        drawn = [(p["hue"], p["x"], p["estimate"], p.get("lo"), p.get("hi")) for p in chart.rows]
        table = curves.curves[["model", "n", "expected_max", "band_low", "band_high"]]
    else:  # the bands' panel (beside the point estimates'): a trivial side (at low=0 or high=1) is not a band's end
        drawn = [
            (p["hue"], p["x"], p["estimate"], p.get("lo", 0.0), p.get("hi", 1.0))
            for p in chart.rows
            if "confidence bands" in p["facet"][0]
        ]
        table = banded.bands[["model", "k", "point", "lower", "upper"]]
    assert drawn == [tuple(row) for row in table.itertuples(index=False)]  # the rows are the file's table
    assert chart == registry.command(command).charts(Files(tmp_path))[0]  # the one description, the spec's


def test_a_directory_whose_run_json_names_no_command_asks_every_command(tmp_path):
    # curve's and bands' run.json named no command before issue 35: each command still recognises its page.
    _both(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"command": ["not", "a", "name"]}))
    assert sorted(c.ylabel for c in report.charts(Files(tmp_path))) == [
        "best score after k iterations",
        "expected max validation score",
    ]
    (tmp_path / "run.json").write_text(json.dumps({"command": "collect"}))  # a command without charts: none
    assert report.charts(Files(tmp_path)) == []


def test_a_registered_commands_charts_reach_its_report_with_no_line_in_report(tmp_path):
    drawn = Chart("toy", ({"x": 1, "estimate": 0.5},), x="n", ylabel="score")
    spec = dataclasses.replace(_template.COMMAND, name="toy_charts", charts=lambda files: [drawn])
    registry.register_command(spec)
    try:
        (tmp_path / "run.json").write_text(json.dumps({"command": "toy_charts"}))
        assert report.charts(Files(tmp_path)) == [drawn]
    finally:
        extend.commands.unregister("toy_charts")


def test_curves_png_draws_the_numbers_of_its_report_chart(tmp_path):
    # The PNG is the report chart drawn by matplotlib (the target and where each model reaches it included): its
    # lines are the chart's rows, both curves.csv.
    import matplotlib.pyplot as plt

    from simstudy.charts import to_matplotlib

    result = curve.run({"data": "scores.csv", "target": 0.5}, SCORES)
    io.write_csv(result.curves, tmp_path / "curves.csv")
    curve._page(result, tmp_path / "CURVE.md")
    (chart,) = curve.report_charts(Files(tmp_path))
    fig = to_matplotlib(curve.chart(result))
    try:
        drawn = {ln.get_label(): list(zip(ln.get_xdata(), ln.get_ydata())) for ln in fig.axes[0].lines}
    finally:
        plt.close(fig)
    for model in SCORES:
        assert drawn[model] == [(p["x"], p["estimate"]) for p in chart.rows if p["hue"] == model]
