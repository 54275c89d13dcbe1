"""Checks of a drawn figure that a reader would notice at a glance: a legend or a label over the plotted data.

``covered(fig)`` draws the figure and lists every legend, axis label or annotation whose box hides part of a
plotted line or marker (the line's path sampled every pixel, in display coordinates, clipped to its axes). Shaded
bands are not data for this check: a legend may sit over the faint tail of a band, never over a curve.
"""

from __future__ import annotations

import matplotlib.cbook
import matplotlib.collections
import matplotlib.lines
import numpy as np

#: pixels a box is shrunk by before a point counts as inside it (anti-aliasing and the legend frame's padding)
TOLERANCE = 1.5


def _line_points(line: matplotlib.lines.Line2D) -> np.ndarray:
    """The drawn path of ``line`` in display pixels, sampled at most a pixel apart; shape (m, 2)."""
    xy = np.asarray(line.get_xydata(), dtype=np.float64)
    if xy.ndim != 2 or len(xy) == 0:
        return np.empty((0, 2))
    style = line.get_drawstyle()
    if style != "default":
        x, y = matplotlib.cbook.STEP_LOOKUP_MAP[style](xy[:, 0], xy[:, 1])
        xy = np.column_stack([x, y])
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) == 0:
        return xy
    pts = line.get_transform().transform(xy)
    if line.get_linestyle() in ("None", "none", "", " ") or len(pts) == 1:
        return pts
    pieces = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:]):
        steps = int(min(2000, max(1, np.ceil(np.hypot(*(b - a))))))
        t = np.linspace(0.0, 1.0, steps + 1)[1:, None]
        pieces.append(a + t * (b - a))
    return np.concatenate(pieces)


def _data_points(ax) -> list[tuple[str, np.ndarray]]:
    """Every visible line's and marker collection's drawn points in ``ax`` that fall inside the axes."""
    box = ax.get_window_extent()
    out = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_alpha() == 0:
            continue
        pts = _line_points(line)
        out.append((line.get_label() or "a line", pts))
    for coll in ax.collections:
        if isinstance(coll, matplotlib.collections.PathCollection) and coll.get_visible():
            offsets = np.asarray(coll.get_offsets(), dtype=np.float64)
            if offsets.size:
                out.append((coll.get_label() or "markers", coll.get_offset_transform().transform(offsets)))
    inside = []
    for label, pts in out:
        keep = (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)
        if keep.any():
            inside.append((label, pts[keep]))
    return inside


def _hits(extent, pts: np.ndarray) -> int:
    x0, y0, x1, y1 = extent.x0 + TOLERANCE, extent.y0 + TOLERANCE, extent.x1 - TOLERANCE, extent.y1 - TOLERANCE
    return int(((pts[:, 0] > x0) & (pts[:, 0] < x1) & (pts[:, 1] > y0) & (pts[:, 1] < y1)).sum())


def _overlap(a, b) -> bool:
    return a.x0 + TOLERANCE < b.x1 and b.x0 + TOLERANCE < a.x1 and a.y0 + TOLERANCE < b.y1 and b.y0 + TOLERANCE < a.y1


def covered(fig) -> list[str]:
    """What in ``fig`` hides plotted data or an axis label: one line per finding, empty when nothing does.

    Checked: every legend (the axes' and the figure's) against every visible axes' lines and markers and their
    axis labels; every text placed in an axes (``ax.texts``, annotations included) against that axes' lines.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    legends = [leg for leg in [*fig.legends, *(ax.get_legend() for ax in axes)] if leg is not None]
    found = []
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in axes:
            for label, pts in _data_points(ax):
                n = _hits(box, pts)
                if n:
                    found.append(f"legend covers {n} px of {label!r} in axes {ax.get_title()!r}")
            for axis_label in (ax.xaxis.label, ax.yaxis.label):
                if axis_label.get_visible() and axis_label.get_text() and _overlap(
                    box, axis_label.get_window_extent(renderer)
                ):
                    found.append(f"legend covers the axis label {axis_label.get_text()!r}")
    for ax in axes:
        data = _data_points(ax)
        for text in ax.texts:
            if not text.get_visible() or not text.get_text().strip():
                continue
            box = text.get_window_extent(renderer)
            for label, pts in data:
                n = _hits(box, pts)
                if n:
                    found.append(f"text {text.get_text()!r} covers {n} px of {label!r}")
    return found
