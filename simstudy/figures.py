"""Figures, drawn from tidy summary frames only (never from study internals): the shared style and helpers.

Monte Carlo quantities are drawn with a band of +/- 1.96 MCSE (a 95% Monte Carlo interval), proportions
with their Clopper-Pearson intervals, exact quantities as plain lines; every shaded band is named in the
legend. Every figure uses the constrained layout, and long titles, labels and legend entries are wrapped to the
space they have, so nothing is cut off when the figure is saved as is (:func:`simstudy.io.save_figure`).

Each study kind draws its own figure, in its module (:mod:`simstudy.studies`), and names it when it registers
(:class:`simstudy.registry.Study`); the old names here (``simstudy.figures.evp_accuracy_figure`` ...) still
import. matplotlib is imported when a figure is first drawn, not with this module (it costs about 0.4 s, and a
run that fails its checks, a shard, ``--help`` never draw).

=================================  ==========================================================================
:func:`sweep_figure`               a sweep's faceted figure: one panel per job, one line per ``hue`` value
``_theme()``                       the house style set, pyplot returned (each figure starts with it)
``_colorblind(n)``                 n colours of the colorblind palette; ``_estimator_palette`` fixes U, V, W
``_band``, ``_shade``              an estimate with its +/- 1.96 MCSE band; the band's legend entry
``_title``, ``_suptitle``          titles wrapped to their panel or figure (``_wrap`` measures the text)
``_labels``, ``_legend``           axis labels and legends wrapped to the room they have
``_label``, ``_plain``             an estimator in the papers' notation; user text drawn as typed
``_set_xscale``, ``_xscale_iv``    a linear or log budget axis, and its check
=================================  ==========================================================================
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import TYPE_CHECKING

import pandas as pd

from simstudy.schema import ConfigError
from simstudy.stats.bands import METHOD_LABELS

if TYPE_CHECKING:
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

__all__ = [
    "sweep_figure",
]

#: The study figures that moved to their study's module (issue 26) -> that module; ``simstudy.figures.NAME``
#: still imports them (:func:`__getattr__`), and their API pages are their modules'.
_MOVED_FIGURES = {
    "evp_accuracy_figure": "simstudy.studies.evp_accuracy",
    "wrong_conclusions_figure": "simstudy.studies.wrong_conclusions",
    "sample_disagreement_figure": "simstudy.studies.sample_disagreement",
    "band_coverage_figure": "simstudy.studies.band_coverage",
    "band_triviality_figure": "simstudy.studies.band_triviality",
    "bootstrap_coverage_figure": "simstudy.studies.bootstrap_coverage",
    "band_width_figure": "simstudy.studies.band_width",
    "model_selection_figure": "simstudy.studies.model_selection",
    "fixed_confidence_figure": "simstudy.studies.fixed_confidence",
    "parametric_extrapolation_figure": "simstudy.studies.parametric_extrapolation_figure",
    "field_audit_figure": "simstudy.studies.field_audit",
    "evp_curves_figure": "simstudy.commands.curve",
    "tuning_curve_bands_figure": "simstudy.commands.bands",
    "cdf_bands_figure": "simstudy.commands.bands",
    "kde_fit_figure": "simstudy.commands.audit_page",
    "extrapolation_figure": "simstudy.commands.extrapolate_page",
}


#: Figures of a simulation's own performance, in :mod:`simstudy.figures_mc` (the same layer), reached from here
#: as ``simstudy.plots.NAME`` by a sweep (:func:`simstudy.sweeps._write_sweep`) like :func:`sweep_figure`.
_MC_FIGURES = {"zip_figure": "simstudy.figures_mc", "nested_loop_figure": "simstudy.figures_mc"}


def __getattr__(name: str):
    # The studies sit above this module: a static import of theirs would point up the layers (and cycle).
    if name in _MOVED_FIGURES or name in _MC_FIGURES:
        return getattr(importlib.import_module({**_MOVED_FIGURES, **_MC_FIGURES}[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_Z = 1.96
_XSCALES = ("linear", "log")


def _label(estimator: str) -> str:
    """U/V/W in the papers' notation; anything else as named (escaped: a plug-in's name is user text)."""
    return f"${estimator.upper()}_n^B$" if estimator in ("u", "v", "w") else _plain(estimator)


def _plain(text) -> str:
    """User text (a model, file or distribution name) as drawn: matplotlib reads ``$...$`` as mathematics, so
    a name such as ``budget $5_$`` would raise when the figure is saved; escaped, it is drawn as typed."""
    return str(text).replace("$", r"\$")


def _is_math(text: str) -> bool:
    """A label :func:`_label` wrote in mathematical notation (kept as mathematics by the legend)."""
    return text.startswith("$") and text.endswith("$") and text.count("$") == 2 and "_n^B" in text


#: Estimators' colours: U, V and W as in every figure; any other (a bootstrap, a plug-in) from colours far from
#: them (the colorblind palette's vermillion and brown sit next to V's orange).
_ESTIMATOR_COLOURS = {"u": 0, "v": 1, "w": 2}
_OTHER_COLOURS = (4, 9, 7, 6, 8, 3, 5)


def _estimator_palette(names) -> dict:
    """A colour per estimator name: U, V, W fixed; others in order from colours unlike theirs."""
    base = _colorblind(10)
    others = iter(_OTHER_COLOURS * (1 + len(list(names)) // len(_OTHER_COLOURS)))
    return {n: base[_ESTIMATOR_COLOURS[n]] if n in _ESTIMATOR_COLOURS else base[next(others)] for n in names}


#: Readable names for the shipped distributions' internal names (a user's own name is shown as given).
_DISTRIBUTION_NAMES = {
    "truncnorm_bag": "scores resampled from a truncated normal (Dodge et al. 2021)",
    "truncnorm": "truncated normal",
}


def _distribution(name) -> str:
    return _DISTRIBUTION_NAMES.get(str(name), str(name))  # escaped where drawn (_title)


def _method(method: str) -> str:
    """A band method's readable name (:data:`simstudy.stats.bands.METHOD_LABELS`)."""
    return METHOD_LABELS.get(method, method)


def _band(ax, frame: pd.DataFrame, x: str, label: str | None, color, *, low=None, high=None, **kwargs) -> None:
    frame = frame.sort_values(x)
    lo = frame[low] if low else frame["estimate"] - _Z * frame["mcse"]
    hi = frame[high] if high else frame["estimate"] + _Z * frame["mcse"]
    ax.plot(frame[x], frame["estimate"], color=color, label=label, lw=1.6, **kwargs)
    ax.fill_between(frame[x], lo, hi, color=color, alpha=0.25, lw=0)


def _shade(label: str, alpha: float = 0.3) -> Patch:
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


def _check_backend() -> None:
    """Refuse a ``MPLBACKEND`` that matplotlib cannot import with, in one line naming the variable.

    matplotlib reads the variable when it is imported and raises a ``ValueError`` about its rc key ``backend``;
    the command line calls this before a run starts (matplotlib imported only when the variable is set), so a
    bad value costs no computation and leaves no directory.

    Raises
    ------
    ConfigError
        ``MPLBACKEND`` is set to a value matplotlib refuses.
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
    _check_backend()
    import matplotlib

    matplotlib.use("Agg")


def _theme():
    """Set the figures' theme (:func:`_style`) and return :mod:`matplotlib.pyplot`, imported on the first figure
    (with :func:`_agg`). Every figure starts here."""
    _agg()
    import matplotlib.pyplot as plt

    plt.rcParams.update(_style())
    return plt


def _colorblind(n: int) -> list[tuple[float, float, float]]:
    """``n`` colours of :data:`_COLORBLIND` as RGB, cycling past ten (``seaborn.color_palette("colorblind", n)``)."""
    from matplotlib.colors import to_rgb

    return [to_rgb(_COLORBLIND[i % len(_COLORBLIND)]) for i in range(n)]


def _wrap(fig, text: str, width_in: float, fontsize: float) -> str:
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


def _suptitle(fig, text: str, fontsize: float = 9) -> None:
    fig.suptitle(_wrap(fig, _plain(text), 0.95 * fig.get_figwidth(), fontsize), fontsize=fontsize)


def _title(ax, text: str, fontsize: float = 9) -> None:
    # Centred on its axes, which the y label pushes right of the figure's centre: a title as wide as its
    # column would run off the right edge, so it gets 80% of the column.
    cols = ax.get_subplotspec().get_geometry()[1]
    ax.set_title(_wrap(ax.figure, _plain(text), 0.8 * ax.figure.get_figwidth() / cols, fontsize), fontsize=fontsize)


def _labels(ax, xlabel: str | None = None, ylabel: str | None = None) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    width, height = _panel_size(ax)
    size = plt.rcParams["axes.labelsize"]
    size = FontProperties(size=size).get_size_in_points()
    if xlabel is not None:
        ax.set_xlabel(_wrap(ax.figure, _plain(xlabel), 1.1 * width, size))
    if ylabel is not None:
        ax.set_ylabel(_wrap(ax.figure, _plain(ylabel), 1.1 * height, size))


def _legend(
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
    # Labels are user text (model names) unless _label wrote them as mathematics; escaped once.
    labels = [lb if _is_math(lb) else _wrap(fig, lb if "\\$" in lb else _plain(lb), width, size) for lb in labels]
    return where.legend(handles, labels, frameon=True, fontsize=size, ncols=ncols, **kwargs)


def _set_xscale(ax, xscale: str) -> None:
    import matplotlib.ticker

    ax.set_xscale(xscale)
    if xscale == "log":  # budgets read as 1, 2, 5, 10, 20, ... rather than powers of ten
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _xscale_iv(xscale: str) -> str:
    if xscale not in _XSCALES:
        raise ValueError(f"xscale must be one of {', '.join(_XSCALES)}, got {xscale!r}")
    return xscale


class _OnFirstUse:
    """A module, or a name in one, imported when first used: ``load()`` returns it."""

    def __init__(self, load):
        self._load = load

    def __getattr__(self, name: str):
        return getattr(self._load(), name)

    def __call__(self, *args, **kwargs):
        return self._load()(*args, **kwargs)


# pyplot for the helpers below, imported when first used: importing this module imports no matplotlib.
if not TYPE_CHECKING:
    plt = _OnFirstUse(lambda: importlib.import_module("matplotlib.pyplot"))


def sweep_figure(rows: pd.DataFrame, swept: list[str], *, x: str, hue: str, ylabel: str, title: str | None = None):
    """A sweep's headline measure, one panel per combination of swept values (``simstudy -m ...``).

    Each panel draws ``estimate`` against ``x``, one line per ``hue`` (and, when a job has several cells, one
    line style per ``distribution``/``B`` that varies within a job, named in the legend), with its 95%
    interval: the Clopper-Pearson ``ci_low``/``ci_high`` where the rows have them, else ±1.96 ``mcse``, else
    none. Panels keep the jobs' order; the y axes are not shared (settings can differ in scale by orders of
    magnitude).

    Parameters
    ----------
    rows : pandas.DataFrame
        Headline rows of a stacked sweep frame (:func:`simstudy.sweeps.headline`): columns ``swept``, ``x``,
        ``hue``, ``estimate`` and optionally ``cell``, ``distribution``, ``B``, ``mcse``, ``ci_low``,
        ``ci_high``.
    swept : list of str
        The swept keys (columns of ``rows``); a panel's title names its values.
    x : str, keyword-only
        The column on the x axis.
    hue : str, keyword-only
        The column that tells lines apart.
    ylabel : str, keyword-only
        What ``estimate`` is (e.g. "MSE").
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: "<ylabel> by <swept keys>".

    Returns
    -------
    matplotlib.figure.Figure
        One axes per panel in a grid (unused slots hidden).

    References
    ----------
    Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to evaluate statistical
    methods. Statistics in Medicine 38(11), 2074-2102.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = pd.DataFrame(
    ...     {"B": [5, 5, 10, 10] * 2, "n": [1, 2] * 4, "estimator": ["u"] * 4 + ["v"] * 4,
    ...      "estimate": [0.1, 0.2, 0.05, 0.1, 0.12, 0.22, 0.06, 0.12], "mcse": 0.01}
    ... )
    >>> fig = sweep_figure(rows, ["B"], x="n", hue="estimator", ylabel="MSE")
    >>> [ax.get_title() for ax in fig.axes]
    ['B = 5', 'B = 10']
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D

    plt = _theme()
    panels = list(dict.fromkeys(map(tuple, rows[swept].astype(str).to_numpy()))) if swept else [()]
    n_last = rows[swept[-1]].nunique() if swept else 1
    ncols = n_last if 1 < n_last <= 5 and len(panels) % n_last == 0 else min(4, len(panels))
    nrows = -(-len(panels) // ncols)
    hues = list(dict.fromkeys(rows[hue]))
    palette = dict(zip(hues, _colorblind(len(hues))))
    band = (
        ("ci_low", "ci_high")
        if {"ci_low", "ci_high"} <= set(rows) and rows["ci_low"].notna().any()
        else ("mcse",)
        if "mcse" in rows and rows["mcse"].notna().any()
        else ()
    )
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows + 0.6), sharex=True, squeeze=False, layout="constrained"
    )
    keys = rows[swept].astype(str) if swept else pd.DataFrame(index=rows.index)
    job = keys.apply(tuple, axis=1) if swept else pd.Series(0, index=rows.index)
    varying = [c for c in ("distribution", "B") if c != x and c in rows and rows.groupby(job)[c].nunique().max() > 1]
    cell = (
        rows[varying].astype(str).apply(lambda r: ", ".join(f"{c} = {v}" for c, v in r.items()), axis=1)
        if varying
        else pd.Series("", index=rows.index)
    )
    styles = {c: ("-", "--", ":", "-.")[k % 4] for k, c in enumerate(dict.fromkeys(cell))}
    for i, values in enumerate(panels):
        ax = axes.flat[i]
        s = rows[(keys == list(values)).all(axis=1)] if swept else rows
        for h in hues:
            for c, ls in styles.items():
                line = s[(s[hue] == h) & (cell[s.index] == c)]
                if not len(line):
                    continue
                label = _label(str(h)) if i == 0 and c == next(iter(styles)) else None
                style = {"ls": ls}
                if band == ("mcse",):
                    _band(ax, line, x, label, palette[h], **style)
                elif band:
                    _band(ax, line, x, label, palette[h], low="ci_low", high="ci_high", **style)
                else:
                    line = line.sort_values(x)
                    ax.plot(line[x], line["estimate"], color=palette[h], label=label, lw=1.6, **style)
        _title(ax, ", ".join(f"{k} = {v}" for k, v in zip(swept, values)) or "all jobs")
        if i % ncols == 0:
            _labels(ax, ylabel=ylabel)
        if i >= len(panels) - ncols:
            _labels(ax, xlabel=x)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    shade = {
        ("mcse",): [_shade("95% Monte Carlo interval (±1.96 MCSE)")],
        ("ci_low", "ci_high"): [_shade("95% Clopper–Pearson interval")],
    }.get(band, [])
    if len(styles) > 1:
        shade += [Line2D([], [], color="0.3", ls=ls, label=c) for c, ls in styles.items()]  # type: ignore[misc]  # legend handles: patches, then lines
    # Below the panels: inside the first one it covered a curve wherever the curves fill the panel.
    _legend(fig, axes.flat[0], shade, fontsize=7, loc="outside lower center", ncols=min(3, max(1, ncols)))
    _suptitle(fig, title or f"{ylabel} by {', '.join(swept) or 'job'}")
    return fig
