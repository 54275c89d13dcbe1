"""Figures, drawn from tidy summary frames only (never from study internals): the sweep's, and shared helpers.

Monte Carlo quantities are drawn with a band of +/- 1.96 MCSE (a 95% Monte Carlo interval), proportions
with their Clopper-Pearson intervals, exact quantities as plain lines; every shaded band is named in the
legend. Every figure uses the constrained layout, and long titles, labels and legend entries are wrapped to the
space they have, so nothing is cut off when the figure is saved as is (:func:`simstudy.io.save_figure`).

Each study kind draws its own figure, in its module (:mod:`simstudy.studies`), and names it when it registers
(:class:`simstudy.registry.Study`). matplotlib is imported when a figure is first drawn, not with this module (it costs about 0.4 s, and a
run that fails its checks, a shard, ``--help`` never draw).

===================================  ========================================================================
:func:`sweep_figure`                 a sweep's faceted figure: one panel per job, one line per ``hue`` value
``estimator_palette``                a colour per estimator, U, V, W fixed
``distribution``, ``method_label``   a shipped distribution's and a band method's readable names
===================================  ========================================================================

The house style itself (the theme, the palette, wrapped titles, labels and legends, bands) lives in
:mod:`simstudy.charts`, below this module and ``report.html``, with the chart descriptions both draw.
"""

from __future__ import annotations

import pandas as pd

from simstudy.chart_style import colorblind
from simstudy.charts import to_matplotlib
from simstudy.stats.bands import METHOD_LABELS

__all__ = [
    "sweep_figure",
]


#: Estimators' colours: U, V and W as in every figure; any other (a bootstrap, a plug-in) from colours far from
#: them (the colorblind palette's vermillion and brown sit next to V's orange).
_ESTIMATOR_COLOURS = {"u": 0, "v": 1, "w": 2}
_OTHER_COLOURS = (4, 9, 7, 6, 8, 3, 5)


def estimator_palette(names) -> dict:
    """A colour per estimator name: U, V, W fixed; others in order from colours unlike theirs."""
    base = colorblind(10)
    others = iter(_OTHER_COLOURS * (1 + len(list(names)) // len(_OTHER_COLOURS)))
    return {n: base[_ESTIMATOR_COLOURS[n]] if n in _ESTIMATOR_COLOURS else base[next(others)] for n in names}


#: Readable names for the shipped distributions' internal names (a user's own name is shown as given).
_DISTRIBUTION_NAMES = {
    "truncnorm_bag": "scores resampled from a truncated normal (Dodge et al. 2021)",
    "truncnorm": "truncated normal",
}


def distribution(name) -> str:
    return _DISTRIBUTION_NAMES.get(str(name), str(name))  # escaped where drawn (_title)


def method_label(method: str) -> str:
    """A band method's readable name (:data:`simstudy.stats.bands.METHOD_LABELS`)."""
    return METHOD_LABELS.get(method, method)


def sweep_figure(
    rows: pd.DataFrame,
    swept: list[str],
    *,
    x: str,
    hue: str,
    ylabel: str,
    title: str | None = None,
    role: str = "measure",
):
    """A sweep's headline measure, one panel per combination of swept values (``simstudy -m ...``).

    Each panel draws ``estimate`` against ``x``, one line per ``hue`` (and, when a job has several cells, one
    line style per ``distribution``/``B`` that varies within a job, named in the legend), with its 95%
    interval: the Clopper-Pearson ``ci_low``/``ci_high`` where the rows have them, else ±1.96 ``mcse``, else
    none; on a coverage, the nominal level dashed. Panels keep the jobs' order; the y axes are not shared
    (settings can differ in scale by orders of magnitude). Described by :func:`simstudy.sweeps.sweep_chart`
    (with :func:`simstudy.charts.estimates`, as the charts of ``report.html`` are) and drawn by
    :func:`simstudy.charts.to_matplotlib`.

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
    role : str, optional, keyword-only
        What the measure is (:data:`simstudy.charts.ROLES`; the study's :attr:`simstudy.registry.Headline.role`):
        a ``"coverage"`` draws the rows' ``nominal`` level dashed. Default "measure".

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
    from simstudy.sweeps import Headline, sweep_chart

    return to_matplotlib(sweep_chart(rows, swept, Headline({}, x, hue, ylabel, role), title=title))
