"""The house style every figure draws in: the theme, the colourblind palette, wrapped titles, labels and legends.

Below every figure (:mod:`simstudy.charts`' :func:`~simstudy.charts.to_matplotlib`, the studies' and commands'
figures import it from here): ``theme()`` sets the theme of ``seaborn.set_theme(style="whitegrid", context="paper")``
with matplotlib alone and returns pyplot; ``colorblind(n)``, ``draw_band``, ``shade_patch``, ``axes_title``,
``suptitle``, ``labels``, ``legend`` (wrapped to the room they have by ``wrap``), ``estimator_label``, ``plain`` and
``set_xscale`` draw in it; ``check_backend`` refuses a bad ``MPLBACKEND`` in one line. matplotlib is imported when
a figure is first drawn, never with this module (it costs about 0.4 s, and ``--help``, a shard or a run that fails
its checks never draw).
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from simstudy.schema import ConfigError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.patches import Patch

__all__ = ["check_backend"]

Z = 1.96


#: The x axis scales a figure draws.
XSCALES = ("linear", "log")


def estimator_label(estimator: str) -> str:
    """U/V/W in the papers' notation; anything else as named (escaped: a plug-in's name is user text)."""
    return f"${estimator.upper()}_n^B$" if estimator in ("u", "v", "w") else plain(estimator)


def plain(text) -> str:
    """User text (a model, file or distribution name) as drawn: matplotlib reads ``$...$`` as mathematics, so
    a name such as ``budget $5_$`` would raise when the figure is saved; escaped, it is drawn as typed."""
    return str(text).replace("$", r"\$")


def _is_math(text: str) -> bool:
    """A label :func:`estimator_label` wrote in mathematical notation (kept as mathematics by the legend)."""
    return text.startswith("$") and text.endswith("$") and text.count("$") == 2 and "_n^B" in text


def draw_band(ax, frame: pd.DataFrame, x: str, label: str | None, color, *, low=None, high=None, **kwargs) -> None:
    frame = frame.sort_values(x)
    lo = frame[low] if low else frame["estimate"] - Z * frame["mcse"]
    hi = frame[high] if high else frame["estimate"] + Z * frame["mcse"]
    ax.plot(frame[x], frame["estimate"], color=color, label=label, lw=1.6, **kwargs)
    ax.fill_between(frame[x], lo, hi, color=color, alpha=0.25, lw=0)


def shade_patch(label: str, alpha: float = 0.3) -> Patch:
    """A legend entry for shaded bands (grey: it explains the shading of every colour)."""
    from matplotlib.patches import Patch

    return Patch(facecolor="0.45", alpha=alpha, lw=0, label=label)


#: seaborn's colorblind palette (``seaborn.color_palette("colorblind")``), whose colours every figure draws in.
_COLORBLIND = (
    "#0173B2",
    "#DE8F05",
    "#029E73",
    "#D55E00",
    "#CC78BC",
    "#CA9161",
    "#FBAFE4",
    "#949494",
    "#ECE133",
    "#56B4E9",
)


#: seaborn's "deep" palette: the colour cycle of the theme (lines drawn without a colour of their own).
_DEEP = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD")


#: seaborn's ``paper`` context scales its ``notebook`` sizes (points) by 0.8.
_PAPER = 0.8


_NOTEBOOK_SIZES = {
    "axes.linewidth": 1.25,
    "grid.linewidth": 1,
    "lines.linewidth": 1.5,
    "lines.markersize": 6,
    "patch.linewidth": 1,
    "xtick.major.width": 1.25,
    "ytick.major.width": 1.25,
    "xtick.minor.width": 1,
    "ytick.minor.width": 1,
    "xtick.major.size": 6,
    "ytick.major.size": 6,
    "xtick.minor.size": 4,
    "ytick.minor.size": 4,
    "font.size": 12,
    "axes.labelsize": 12,
    "axes.titlesize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.title_fontsize": 12,
}


#: seaborn's ``whitegrid`` style with its default sans-serif font, as rcParams (its colormap, image.cmap, is
#: left out: seaborn registers it on import, and no figure here draws an image).
_WHITEGRID = {
    "figure.facecolor": "white",
    "axes.labelcolor": ".15",
    "xtick.direction": "out",
    "ytick.direction": "out",
    "xtick.color": ".15",
    "ytick.color": ".15",
    "axes.axisbelow": True,
    "grid.linestyle": "-",
    "text.color": ".15",
    "font.family": "sans-serif",
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "xtick.top": False,
    "ytick.right": False,
    "axes.grid": True,
    "axes.facecolor": "white",
    "axes.edgecolor": ".8",
    "grid.color": ".8",
    "axes.spines.left": True,
    "axes.spines.bottom": True,
    "axes.spines.right": True,
    "axes.spines.top": True,
    "xtick.bottom": False,
    "ytick.left": False,
}


def _style() -> dict:
    """The rcParams of ``seaborn.set_theme(style="whitegrid", context="paper")``, the figures' theme: set with
    matplotlib alone, since importing seaborn costs up to 0.7 s (it imports scipy.stats) and draws the same.
    (seaborn also remaps the one-letter colours ``"b"``, ``"g"`` ... to its palette; no figure here uses them.)"""
    from cycler import cycler
    from matplotlib.colors import to_rgb

    sizes = {key: value * _PAPER for key, value in _NOTEBOOK_SIZES.items()}
    return {**sizes, **_WHITEGRID, "axes.prop_cycle": cycler("color", [to_rgb(c) for c in _DEEP])}


def check_backend() -> None:
    """Refuse a ``MPLBACKEND`` that matplotlib cannot import with, in one line naming the variable.

    matplotlib reads the variable when it is imported and raises a ``ValueError`` about its rc key ``backend``;
    the command line calls this before a run starts (matplotlib imported only when the variable is set), so a
    bad value costs no computation and leaves no directory.

    Raises
    ------
    ConfigError
        ``MPLBACKEND`` is set to a value matplotlib refuses.

    Examples
    --------
    >>> check_backend()  # unset or a backend matplotlib knows: nothing to say
    """
    backend = os.environ.get("MPLBACKEND")
    if backend is None:
        return
    try:
        import matplotlib.rcsetup  # a first import validates the variable (and raises) ...

        matplotlib.rcsetup.validate_backend(backend)  # ... a later one does not
    except ValueError:
        raise ConfigError(
            f"MPLBACKEND={backend!r} is not a matplotlib backend: unset it (simstudy saves its figures with "
            "Agg) or set it to one, e.g. MPLBACKEND=agg"
        ) from None


@functools.cache
def _agg() -> None:
    """Select the Agg backend, once, before pyplot draws its first figure (files only; no display is assumed:
    CI, clusters)."""
    check_backend()
    import matplotlib

    matplotlib.use("Agg")


def theme():
    """Set the figures' theme (:func:`_style`) and return :mod:`matplotlib.pyplot`, imported on the first figure
    (with :func:`_agg`). Every figure starts here."""
    _agg()
    import matplotlib.pyplot as plt

    plt.rcParams.update(_style())
    return plt


def colorblind(n: int) -> list[tuple[float, float, float]]:
    """``n`` colours of :data:`_COLORBLIND` as RGB, cycling past ten (``seaborn.color_palette("colorblind", n)``)."""
    from matplotlib.colors import to_rgb

    return [to_rgb(_COLORBLIND[i % len(_COLORBLIND)]) for i in range(n)]


def wrap(fig, text: str, width_in: float, fontsize: float) -> str:
    """Break ``text`` into lines no wider than ``width_in`` inches at ``fontsize`` (points).

    Breaks at spaces; a single word wider than a line (a long file name) is cut where it must be. Widths are
    measured with the figure's renderer, so the result fits at any dpi (text scales with it).
    """
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=fontsize)
    limit = width_in * fig.dpi

    def fits(s: str) -> bool:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0] <= limit

    lines = []
    for paragraph in str(text).split("\n"):
        if fits(paragraph):  # most labels: one measurement, not one per word (the same line the loop would make)
            lines.append(paragraph)
            continue
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if fits(trial):
                line = trial
                continue
            if line:
                lines.append(line)
            while len(word) > 1 and not fits(word):
                cut = 1
                while cut < len(word) - 1 and fits(word[: cut + 1]):
                    cut += 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return "\n".join(lines)


def _panel_size(ax) -> tuple[float, float]:
    """The axes' width and height in inches before the layout runs (a lower bound on its final size: the
    constrained layout only widens the default margins' axes)."""
    box = ax.get_position()
    return box.width * ax.figure.get_figwidth(), box.height * ax.figure.get_figheight()


def suptitle(fig, text: str, fontsize: float = 9) -> None:
    fig.suptitle(wrap(fig, plain(text), 0.95 * fig.get_figwidth(), fontsize), fontsize=fontsize)


def axes_title(ax, text: str, fontsize: float = 9) -> None:
    # Centred on its axes, which the y label pushes right of the figure's centre: a title as wide as its
    # column would run off the right edge, so it gets 80% of the column.
    cols = ax.get_subplotspec().get_geometry()[1]
    ax.set_title(wrap(ax.figure, plain(text), 0.8 * ax.figure.get_figwidth() / cols, fontsize), fontsize=fontsize)


def labels(ax, xlabel: str | None = None, ylabel: str | None = None) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    width, height = _panel_size(ax)
    size = plt.rcParams["axes.labelsize"]
    size = FontProperties(size=size).get_size_in_points()
    if xlabel is not None:
        ax.set_xlabel(wrap(ax.figure, plain(xlabel), 1.1 * width, size))
    if ylabel is not None:
        ax.set_ylabel(wrap(ax.figure, plain(ylabel), 1.1 * height, size))


def legend(
    where,
    handles_from=None,
    extra=(),
    *,
    share: float | None = None,
    fontsize: float | None = None,
    ncols: int = 1,
    **kwargs,
):
    """A legend of the lines of ``handles_from`` (default: ``where``) plus ``extra`` proxy handles.

    ``where`` is an axes or a figure (then ``loc="outside ..."``). Each label is wrapped to ``share`` of the
    figure's width, by default to what one of ``ncols`` columns has once handles and spacing (about half an
    inch per column) are taken off.
    """
    import matplotlib.figure
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    source = where if handles_from is None else handles_from
    handles, labels = source.get_legend_handles_labels()
    handles, labels = [*handles, *extra], [*labels, *(h.get_label() for h in extra)]
    fig = where if isinstance(where, matplotlib.figure.Figure) else where.figure
    size = FontProperties(size=fontsize or plt.rcParams["legend.fontsize"]).get_size_in_points()
    width = share * fig.get_figwidth() if share else (0.92 * fig.get_figwidth() - 0.5 * ncols) / ncols
    # Labels are user text (model names) unless estimator_label wrote them as mathematics; escaped once.
    labels = [lb if _is_math(lb) else wrap(fig, lb if "\\$" in lb else plain(lb), width, size) for lb in labels]
    return where.legend(handles, labels, frameon=True, fontsize=size, ncols=ncols, **kwargs)


def set_xscale(ax, xscale: str) -> None:
    import matplotlib.ticker

    ax.set_xscale(xscale)
    if xscale == "log":  # budgets read as 1, 2, 5, 10, 20, ... rather than powers of ten
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def xscale_iv(xscale: str) -> str:
    if xscale not in XSCALES:
        raise ValueError(f"xscale must be one of {', '.join(XSCALES)}, got {xscale!r}")
    return xscale
