"""A :class:`~simstudy.charts.Chart` as Vega-Lite: the interactive charts of ``report.html``.

:func:`to_vega` writes the one description :func:`simstudy.charts.to_matplotlib` draws as a PNG as a Vega-Lite
(v5) spec, a dict of JSON values: the rows as inline data, the estimate a line (straight or in steps) with hover
targets, the interval an area or rules, a side alone a thin line, the references rules at a datum, the notes in
the subtitle, panels as facets (or, where a panel has its own :class:`~simstudy.charts.View`, one spec per panel).

References: Satyanarayan, A., Moritz, D., Wongsuphasawat, K., & Heer, J. (2017). Vega-Lite: a grammar of
interactive graphics. IEEE Transactions on Visualization and Computer Graphics 23(1), 341-350.
"""

from __future__ import annotations

from typing import Any

from simstudy.charts import DASHES, Chart, Reference, View, in_panel, series_colors

__all__ = ["to_vega"]


def _panel(chart: Chart, values: tuple) -> str:
    if not chart.panel_keys:
        return ", ".join(values)
    return ", ".join(f"{k}={v}" for k, v in zip(chart.facets, values))


def to_vega(chart: Chart) -> dict:
    """The chart as a Vega-Lite spec (a dict of JSON values), as ``report.html`` embeds it.

    The rows become the spec's inline data (a panel's label in ``panel``); the estimate is a line (with its
    points, or with invisible points as hover targets), the interval a rule per point (``bars``) or an area
    (``band``) under it, the reference level a dashed rule (or the diagonal), the tooltip the rows' ``shown``,
    x, the series, the panel and :attr:`Chart.tooltips`. Strings are left as they are: the page escapes the
    whole spec as it embeds it (:func:`simstudy.report_safe.script_json`).

    Parameters
    ----------
    chart : Chart
        What to draw.

    Returns
    -------
    dict
        A Vega-Lite (v5) spec: faceted (``facet``, ``columns``, ``spec``) when the chart has facets.

    Examples
    --------
    >>> chart = Chart("MSE", ({"x": 1, "estimate": 0.1, "shown": "0.10 ± 0.01"},), x="n", ylabel="MSE")
    >>> spec = to_vega(chart)
    >>> spec["title"], spec["data"]["values"][0]["x"], [layer["mark"]["type"] for layer in spec["layer"]]
    ('MSE', 1, ['line', 'point'])
    >>> spec["layer"][1]["encoding"]["tooltip"][0]
    {'field': 'shown', 'title': 'estimate'}
    """
    values = []
    for row in chart.rows:
        value = {k: v for k, v in row.items() if k != "facet"}
        if chart.facets:
            value["panel"] = _panel(chart, row.get("facet", ()))
        values.append(value)
    numeric = all(isinstance(v["x"], (int, float)) and not isinstance(v["x"], bool) for v in values)
    xenc: dict[str, Any] = {
        "field": "x",
        "type": "quantitative" if numeric or chart.xscale == "log" else "ordinal",
        "title": chart.xlabel or chart.x,
    }
    if chart.xscale == "log":
        xenc["scale"] = {"type": "log"}
    elif numeric:
        xenc["scale"] = {"zero": False}  # nominal levels 0.5..0.95, budgets from 1: not from 0
    y = {"field": "estimate", "type": "quantitative", "title": chart.ylabel, "scale": {"zero": False}}
    hued = chart.hue is not None and any("hue" in v for v in values)
    color: dict[str, dict[str, Any]] = (
        {"color": {"field": "hue", "type": "nominal", "title": chart.hue}} if hued else {}
    )
    if hued and chart.greys:  # the PNG's colours, so that a grey reference curve reads as one on the page too
        hues = list(dict.fromkeys(v["hue"] for v in values if "hue" in v))
        rgb = series_colors(chart, hues)
        hexes = ["#" + "".join(f"{round(255 * c):02x}" for c in rgb[h]) for h in hues]
        color["color"]["scale"] = {"domain": hues, "range": hexes}
    dash: dict[str, dict[str, Any]] = (
        {"strokeDash": {"field": "style", "type": "nominal", "title": chart.styles}}
        if chart.styles and any("style" in v for v in values)
        else {}
    )
    if dash and not all("style" in v for v in values):  # the series without a style: no "undefined" entry
        dash["strokeDash"]["legend"] = {"values": list(dict.fromkeys(v["style"] for v in values if "style" in v))}
    tooltip = [{"field": "shown", "title": chart.text}, {"field": "x", "title": chart.x}]
    if hued:
        tooltip.append({"field": "hue", "title": str(chart.hue)})
    if chart.facets:
        tooltip.append({"field": "panel", "title": ", ".join(chart.facets)})
    tooltip += [{"field": key, "title": title} for key, title in chart.tooltips]
    steps = {"interpolate": "step-after"} if chart.line == "step" else {}
    if "point" in chart.marks:
        layers: list[dict] = [
            {
                "mark": {"type": "line", "point": True, **steps},
                "encoding": {"x": xenc, "y": y, **color, **dash, "tooltip": tooltip},
            }
        ]
    else:  # invisible points: the hover targets of the tooltip
        layers = [
            {"mark": {"type": "line", **steps}, "encoding": {"x": xenc, "y": y, **color, **dash}},
            {"mark": {"type": "point", "opacity": 0, "size": 30}, "encoding": {"x": xenc, "y": y, "tooltip": tooltip}},
        ]
    # the interval's layer only where some point has one (an empty one has an infinite extent: a Vega warning;
    # exact values, MCSE 0, have no bars)
    if chart.interval is not None and any("lo" in v and "hi" in v for v in values):
        mark = (
            {"type": "rule", "opacity": chart.interval.opacity}
            if chart.interval.mark == "bars"
            else {"type": "area", "opacity": chart.interval.opacity, **steps}
        )
        encoding = {"x": xenc, "y": {**y, "field": "lo"}, "y2": {"field": "hi"}, **color}
        layers.insert(0, {"mark": mark, "encoding": encoding})
    for side, other in (("lo", "hi"), ("hi", "lo")):  # a side that alone bounds the curve: a thin line
        if chart.interval is not None and any(side in v and other not in v for v in values):
            alone = {"filter": f"isValid(datum.{side}) && !isValid(datum.{other})"}
            layers.append(
                {
                    "transform": [alone],
                    "mark": {"type": "line", "strokeWidth": 1, **steps},
                    "encoding": {"x": xenc, "y": {**y, "field": side}, **color},
                }
            )
    # a reference is one mark of its own (one datum: not one rule per row of the chart's data)
    refs = [(ref, {"data": {"values": [{}]}, **_vega_reference(chart, ref, xenc, y)}) for ref in chart.references]
    if chart.rule is not None and any(chart.rule in v for v in values):
        reference = {**y, "field": chart.rule}
        if chart.x == chart.rule:  # the estimate against its own reference level: the diagonal is the goal
            layers.append(
                {
                    "mark": {"type": "line", "strokeDash": [4, 4], "color": "gray"},
                    "encoding": {"x": xenc, "y": reference},
                }
            )
        else:
            layers.append(
                {"mark": {"type": "rule", "strokeDash": [4, 4], "color": "gray"}, "encoding": {"y": reference}}
            )
    size = {"width": chart.size[0], "height": chart.size[1]}
    notes = [note.text for note in chart.notes]
    spec: dict[str, Any] = {"title": {"text": chart.title, "subtitle": notes} if notes else chart.title}
    if chart.note:  # usermeta: Vega-Lite's place for what it does not draw; the page states it above the charts
        spec["usermeta"] = {"capped": chart.note}
    spec["data"] = {"values": values}
    if chart.facets and chart.views:  # panels with their own ranges and y titles: one spec per panel
        panels = list(dict.fromkeys(v["panel"] for v in values))
        drawn = [_vega_panel(chart, p, layers, refs, size, [v for v in values if v["panel"] == p]) for p in panels]
        grid = [drawn[i : i + chart.columns] for i in range(0, len(drawn), chart.columns)]
        # rows of hconcat (the page's Vega-Lite draws no general concat with columns)
        if len(grid) == 1:
            spec["hconcat"] = grid[0]
        else:
            spec["vconcat"] = [{"hconcat": row} for row in grid]
    elif chart.facets:  # a facet's layers take its data: a reference drawn in every panel
        layers += [{k: v for k, v in layer.items() if k != "data"} for _, layer in refs]
        spec.update(
            facet={"field": "panel", "type": "nominal", "title": ", ".join(chart.facets)},
            columns=chart.columns,
            spec={**size, "layer": layers},
        )
    else:
        spec.update(size, layer=_viewed(layers + [layer for _, layer in refs], next(iter(chart.views), None)))
    return spec


def _viewed(layers: list[dict], view: View | None, ylabel: str | None = None) -> list[dict]:
    """The layers with a :class:`View`'s ranges as their scales' domains (clipped to them) and its y title."""
    if view is None:
        return layers
    out = []
    for layer in layers:
        encoding = dict(layer.get("encoding", {}))
        for axis, domain in (("x", view.x), ("y", view.y)):
            if domain is not None and "field" in encoding.get(axis, {}):
                encoding[axis] = {
                    **encoding[axis],
                    "scale": {**encoding[axis].get("scale", {}), "domain": list(domain)},
                }
        if ylabel and "field" in encoding.get("y", {}):
            encoding["y"] = {**encoding["y"], "title": ylabel}
        mark = layer["mark"] if isinstance(layer["mark"], dict) else {"type": layer["mark"]}
        out.append({**layer, "mark": {**mark, "clip": True}, "encoding": encoding})
    return out


def _drawn(layer: dict, rows: list[dict]) -> bool:
    """Whether a layer has rows to draw: an interval's needs both ends, a side's alone line that side alone (an
    empty layer has an infinite extent: a Vega warning)."""
    side = layer["encoding"].get("y", {}).get("field")
    if side not in ("lo", "hi"):
        return True
    other = "hi" if side == "lo" else "lo"
    if "transform" in layer:  # the side alone
        return any(side in r and other not in r for r in rows)
    return any("lo" in r and "hi" in r for r in rows)


def _vega_panel(chart: Chart, panel: str, layers: list[dict], refs: list, size: dict, rows: list[dict]) -> dict:
    """One panel of a chart whose panels have their own :class:`View`: its rows, references, ranges and titles."""
    values = next((v for v in dict.fromkeys(r.get("facet", ()) for r in chart.rows) if _panel(chart, v) == panel), ())
    view = next((v for v in chart.views if tuple(v.panel) == tuple(values)), None)
    mine = [
        {**layer, "transform": [{"filter": {"field": "panel", "equal": panel}}, *layer.get("transform", [])]}
        for layer in layers
        if _drawn(layer, rows)
    ]
    mine += [layer for ref, layer in refs if in_panel(ref.panel, values, True)]
    if view is not None and view.line is not None and view.line != chart.line:  # this panel's own line shape
        shape = {"interpolate": "step-after" if view.line == "step" else "linear"}
        mine = [
            {**layer, "mark": {**layer["mark"], **shape}} if layer["mark"]["type"] in ("line", "area") else layer
            for layer in mine
        ]
    return {"title": panel, **size, "layer": _viewed(mine, view, view.ylabel if view else None)}


def _vega_reference(chart: Chart, ref: Reference, xenc: dict, y: dict) -> dict:
    """A :class:`Reference` as a layer: a rule (or a shaded rectangle) at a datum, its words as the tooltip."""
    on, across = ("y", "x") if ref.axis == "y" else ("x", "y")
    scale = {"scale": (xenc if on == "x" else y).get("scale", {})}
    encoding: dict[str, Any] = {on: {"datum": ref.value, "type": "quantitative", **scale}}
    if ref.to is not None:
        encoding[f"{on}2"] = {"datum": ref.to}
    if ref.span is not None:
        encoding[across] = {"datum": ref.span[0], "type": "quantitative"}
        encoding[f"{across}2"] = {"datum": ref.span[1]}
    if ref.label or ref.note:
        encoding["tooltip"] = {"value": ref.label or ref.note}
    mark: dict[str, Any] = {"type": "rect" if ref.to is not None else "rule", "strokeWidth": ref.width}
    if ref.to is not None:
        mark["opacity"] = 0.25
    elif DASHES[ref.dash][1]:
        mark["strokeDash"] = DASHES[ref.dash][1]
    if ref.hue is not None:  # in the series' colour: the colour scale's value of that hue
        encoding["color"] = {"datum": ref.hue, "type": "nominal", "title": chart.hue}
    else:
        grey = round(255 * ref.grey)
        mark["color"] = f"#{grey:02x}{grey:02x}{grey:02x}"
    return {"mark": mark, "encoding": encoding}
