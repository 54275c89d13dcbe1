"""simstudy.charts and simstudy.chart_vega: one description, two renderers that draw the same facts.

A chart's references, notes, per-panel views, steps and grey series land in the matplotlib figure (the PNGs) and
in the Vega-Lite spec (report.html) alike; the renderers' defaults leave the studies' charts as they were.
"""

import matplotlib.collections
import matplotlib.pyplot as plt
import pytest

from simstudy.chart_vega import to_vega
from simstudy.charts import Chart, Interval, Note, Reference, View, to_matplotlib

ROWS = (
    {"x": 1, "estimate": 0.5, "hue": "a", "lo": 0.4, "hi": 0.6},
    {"x": 2, "estimate": 0.6, "hue": "a", "lo": 0.5},  # the upper side trivial: the lower one alone
    {"x": 3, "estimate": 0.7, "hue": "a", "lo": 0.55},
)


def _chart(**fields):
    return Chart("t", ROWS, x="k", ylabel="y", hue="model", interval=Interval("band"), **fields)


def test_references_notes_and_views_are_drawn_by_both_renderers():
    chart = _chart(
        references=(
            Reference(0.65, label="target 0.65", grey=0.0),
            Reference(2, axis="x", hue="a", dash="dashed", note="n = 2"),
            Reference(0.45, to=0.55, label="an interval"),
        ),
        notes=(Note("bound 1 (beyond the view)"),),
        views=(View(y=(0.3, 0.8), x=(1, 3)),),
        line="step",
    )
    fig = to_matplotlib(chart)
    ax = fig.axes[0]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "target 0.65" in legend and "an interval" in legend and "band" in legend
    assert "thin line: the band's side that still bounds the curve" in legend
    assert ax.get_ylim() == (0.3, 0.8) and ax.get_xlim() == (1, 3)
    assert sorted(t.get_text() for t in ax.texts) == ["bound 1 (beyond the view)", "n = 2"]
    assert ax.lines[0].get_drawstyle() == "steps-post"
    (_,) = [c for c in ax.collections if isinstance(c, matplotlib.collections.PolyCollection)]  # one band: x = 1
    plt.close(fig)
    spec = to_vega(chart)
    assert spec["title"] == {"text": "t", "subtitle": ["bound 1 (beyond the view)"]}
    marks = [layer["mark"] for layer in spec["layer"]]
    assert {"area", "line", "point", "rule", "rect"} == {m["type"] for m in marks}
    assert all(m.get("interpolate") == "step-after" for m in marks if m["type"] in ("area", "line"))
    rules = [layer["encoding"] for layer in spec["layer"] if layer["mark"]["type"] in ("rule", "rect")]
    assert [e.get("y", e.get("x"))["datum"] for e in rules] == [0.65, 2, 0.45]
    assert rules[1]["color"] == {"datum": "a", "type": "nominal", "title": "model"}  # in its series' colour
    alone = [layer for layer in spec["layer"] if "transform" in layer]
    assert [layer["encoding"]["y"]["field"] for layer in alone] == ["lo"]  # the side alone, a thin line
    assert spec["layer"][1]["encoding"]["y"]["scale"]["domain"] == [0.3, 0.8]


def test_panels_with_their_own_views_are_one_spec_each_and_draw_only_their_layers():
    rows = tuple({**r, "facet": ("bands",)} for r in ROWS) + ({"x": 1, "estimate": 0.4, "hue": "a", "facet": ("u",)},)
    chart = _chart(
        facets=("panel",),
        panel_keys=False,
        views=(View(("u",), ylabel="expected"), View(("bands",), y=(0.0, 1.0), line="straight")),
        references=(Reference(0.9, panel=("bands",), label="cap"),),
        line="step",
    )
    chart = Chart(**{**chart.__dict__, "rows": rows})
    spec = to_vega(chart)
    (first, second) = spec["hconcat"]
    assert [first["title"], second["title"]] == ["bands", "u"]
    assert [layer["mark"]["type"] for layer in second["layer"]] == ["line", "point"]  # no band, no cap there
    assert "rule" in [layer["mark"]["type"] for layer in first["layer"]]
    assert second["layer"][0]["encoding"]["y"]["title"] == "expected"
    assert first["layer"][0]["mark"]["interpolate"] == "linear"  # the bands panel's own line shape
    fig = to_matplotlib(chart)
    assert [ax.get_ylabel() for ax in fig.axes] == ["y", "expected"] and fig.axes[0].get_ylim() == (0.0, 1.0)
    assert fig.axes[0].lines[0].get_drawstyle() == "default" and fig.axes[1].lines[0].get_drawstyle() == "steps-post"
    plt.close(fig)


def test_a_grey_series_is_grey_in_both_and_the_palette_skips_it():
    rows = ({"x": 1, "estimate": 0.5, "hue": "all runs"}, {"x": 1, "estimate": 0.4, "hue": "law"})
    chart = Chart("t", rows, x="k", ylabel="y", hue="curve", greys=(("all runs", 0.0),))
    fig = to_matplotlib(chart)
    colours = {line.get_label(): matplotlib.colors.to_hex(line.get_color()) for line in fig.axes[0].lines}
    assert colours == {"all runs": "#000000", "law": "#0173b2"}  # law takes the palette's first colour
    plt.close(fig)
    scale = to_vega(chart)["layer"][0]["encoding"]["color"]["scale"]
    assert scale == {"domain": ["all runs", "law"], "range": ["#000000", "#0173b2"]}


def test_a_study_chart_is_drawn_as_before():
    # no references, notes, views or greys: the spec has none of their keys (the sweeps' pages are unchanged)
    chart = Chart("MSE", ({"x": 1, "estimate": 0.1, "shown": "0.10 ± 0.01"},), x="n", ylabel="MSE")
    spec = to_vega(chart)
    assert spec["title"] == "MSE" and "hconcat" not in spec and len(spec["layer"]) == 2
    assert "interpolate" not in spec["layer"][0]["mark"] and "clip" not in spec["layer"][0]["mark"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: Reference(1.0, axis="z"), "Reference axis must be 'x' or 'y', got 'z'"),
        (
            lambda: Reference(1.0, dash="wavy"),
            "Reference dash must be one of solid, dashed, dotted, dashdot, got 'wavy'",
        ),
        (
            lambda: Note("x", corner="middle"),
            "Note corner must be one of upper left, upper right, lower left, lower right, got 'middle'",
        ),
        (lambda: _chart(line="curvy"), "Chart line must be 'straight' or 'step', got 'curvy'"),
    ],
)
def test_a_bad_field_is_refused_naming_key_and_value(make, said):
    with pytest.raises(ValueError, match=f"^{said}$"):
        make()
