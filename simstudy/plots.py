"""Figures, drawn from tidy summary frames only (never from study internals).

Monte Carlo quantities are drawn with a band of +/- 1.96 MCSE (a 95% Monte Carlo interval), proportions
with their Clopper-Pearson intervals, exact quantities as plain lines; every shaded band is named in the
legend. Each study kind names its figure here when it registers (:class:`simstudy.registry.Study`). Every
figure uses the constrained layout, and long titles, labels and legend entries are wrapped to the space they
have, so nothing is cut off when the figure is saved as is (:func:`simstudy.io.save_figure`).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; no display is assumed (CI, clusters)

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from simstudy.stats.bands import METHOD_LABELS

__all__ = [
    "evp_accuracy_figure",
    "wrong_conclusions_figure",
    "evp_curves_figure",
    "sample_disagreement_figure",
    "tuning_curve_bands_figure",
    "cdf_bands_figure",
    "band_coverage_figure",
    "band_triviality_figure",
    "bootstrap_coverage_figure",
    "band_width_figure",
    "model_selection_figure",
    "fixed_confidence_figure",
    "parametric_extrapolation_figure",
    "sweep_figure",
]

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
    base = sns.color_palette("colorblind", 10)
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
    return Patch(facecolor="0.45", alpha=alpha, lw=0, label=label)


def _theme() -> None:
    sns.set_theme(style="whitegrid", context="paper")


def _wrap(fig, text: str, width_in: float, fontsize: float) -> str:
    """Break ``text`` into lines no wider than ``width_in`` inches at ``fontsize`` (points).

    Breaks at spaces; a single word wider than a line (a long file name) is cut where it must be. Widths are
    measured with the figure's renderer, so the result fits at any dpi (text scales with it).
    """
    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=fontsize)
    limit = width_in * fig.dpi

    def fits(s: str) -> bool:
        return renderer.get_text_width_height_descent(s, prop, ismath=False)[0] <= limit

    lines = []
    for paragraph in str(text).split("\n"):
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
    ax.set_xscale(xscale)
    if xscale == "log":  # budgets read as 1, 2, 5, 10, 20, ... rather than powers of ten
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _xscale_iv(xscale: str) -> str:
    if xscale not in _XSCALES:
        raise ValueError(f"xscale must be one of {', '.join(_XSCALES)}, got {xscale!r}")
    return xscale


def evp_accuracy_figure(summary: pd.DataFrame, *, reference: str = "v", title: str | None = None):
    """Mean, variance and MSE of each estimator against the budget n (Dodge et al. 2021, Figure 1).

    One column per cell (distribution and B). When bootstrap estimators are present, a fourth row shows
    each one's paired excess MSE over the ``reference`` closed form (Dodge et al. 2019, §3.2). Monte Carlo
    estimates are drawn with a band of +/- 1.96 MCSE; the exact expected maximum as a dashed black line.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of an ``evp_accuracy`` study (:mod:`simstudy.studies.evp_accuracy`), one row per
        cell, estimator, n and measure: columns ``cell``, ``distribution``, ``B`` (sample size, trials),
        ``estimator`` (``"u"``, ``"v"``, ``"w"``, bootstrap names, ``"truth"`` and paired differences such as
        ``"boot-v"``), ``n`` (budget, trials), ``measure`` (``"mean"``, ``"variance"``, ``"mse"``; for the
        truth ``"expected_max"``; optionally ``"excess_mse_predicted"``), ``estimate`` (score units, squared
        for variance and MSE), ``mcse`` (same units) and ``reps`` (replicates).
    reference : str, keyword-only, default "v"
        The closed-form estimator the bootstrap's excess MSE is relative to.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one saying what the panels show (the legend
        names the bands).

    Returns
    -------
    matplotlib.figure.Figure
        A grid of 3 rows (4 with bootstrap estimators) by one column per cell; close it with
        ``plt.close(fig)`` when done.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance and
    estimation of a random variable's maximum. Findings of EMNLP 2021, arXiv:2110.00613.
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP 2019, arXiv:1909.03004.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [("truth", "expected_max", n, 0.5 + 0.1 * n) for n in (1, 2, 3)]
    >>> rows += [(e, m, n, 0.5 + 0.1 * n) for e in ("u", "v") for m in ("mean", "variance", "mse") for n in (1, 2, 3)]
    >>> summary = pd.DataFrame(rows, columns=["estimator", "measure", "n", "estimate"])
    >>> summary = summary.assign(cell="uniform, B = 5", distribution="uniform", B=5, mcse=0.01, reps=100)
    >>> fig = evp_accuracy_figure(summary, title="U and V")
    >>> len(fig.axes), fig.axes[0].get_title()
    (3, 'uniform, B = 5, 100 replicates')
    >>> plt.close(fig)
    """
    _theme()
    cells = list(dict.fromkeys(summary["cell"]))
    singles = [e for e in dict.fromkeys(summary["estimator"]) if e != "truth" and "-" not in e]
    palette = _estimator_palette(singles)
    excess = [
        e
        for e in singles
        if e != reference and f"{e}-{reference}" in set(summary["estimator"]) and e.startswith("boot")
    ]
    rows = [("mean", "expected value"), ("variance", "variance"), ("mse", "MSE")]
    if excess:
        rows.append(("excess", f"excess MSE over {reference.upper()} (%)"))
    fig, axes = plt.subplots(
        len(rows),
        len(cells),
        figsize=(4.6 * len(cells), 2.5 * len(rows) + 0.5),
        sharex="col",
        squeeze=False,
        layout="constrained",
    )
    for c, cell in enumerate(cells):
        s = summary[summary["cell"] == cell]
        truth = s[(s["estimator"] == "truth") & (s["measure"] == "expected_max")].sort_values("n")
        axes[0, c].plot(
            truth["n"], truth["estimate"], color="black", lw=1.2, ls="--", label="true EVP (exact)", zorder=5
        )  # on top: the unbiased U runs right along it
        for r, (measure, ylabel) in enumerate(rows):
            ax = axes[r, c]
            if measure == "excess":
                # Relative to V's MSE, on a linear scale: the excess shrinks like 1/K and never drops below 0
                # beyond Monte Carlo error; dashed, its precise prediction E[plug-in variance] / K.
                ref = s[(s["estimator"] == reference) & (s["measure"] == "mse")].set_index("n")["estimate"]
                for est in excess:
                    diff = s[(s["estimator"] == f"{est}-{reference}") & (s["measure"] == "mse")].set_index("n")
                    rel = diff[["estimate", "mcse"]].div(ref, axis=0).mul(100).reset_index()
                    _band(ax, rel, "n", est, palette[est])
                    predicted = s[(s["estimator"] == est) & (s["measure"] == "excess_mse_predicted")].set_index("n")
                    if len(predicted):
                        ax.plot(
                            predicted.index,
                            100 * predicted["estimate"] / ref,
                            color=palette[est],
                            ls="--",
                            lw=1,
                            label=f"{est}: predicted" if c == 0 else None,
                        )
                ax.axhline(0, color="black", lw=0.8)
            else:
                for est in singles:
                    _band(ax, s[(s["estimator"] == est) & (s["measure"] == measure)], "n", _label(est), palette[est])
            if c == 0:
                _labels(ax, ylabel=ylabel)
        reps = int(s["reps"].max())
        _title(
            axes[0, c], f"{_distribution(s['distribution'].iloc[0])}, B = {int(s['B'].iloc[0])}, {reps:,} replicates"
        )
        _labels(axes[-1, c], xlabel="n (budget: number of trials)")
        axes[-1, c].set_xlim(truth["n"].min(), truth["n"].max())
    mc = _shade("95% Monte Carlo interval (±1.96 MCSE)")
    _legend(axes[0, 0], extra=[mc], loc="lower right")
    if excess:
        _legend(axes[-1, 0], extra=[mc], loc="upper left", fontsize=7)
    _suptitle(
        fig,
        title
        or "How well each estimator of the expected maximum of n scores does from one sample of B scores: its "
        "average, variance and mean squared error against n, beside the exact value (dashed)",
    )
    return fig


def wrong_conclusions_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Wrong-conclusion rate against the budget B, one line per estimator (Dodge et al. 2021, Figure 2).

    Bands are Clopper-Pearson intervals. A lower panel shows the true gap theta_a(B) - theta_b(B), so a
    crossover of the true ranking is visible (a dotted vertical line where it flips); budgets that are true
    ties are marked and have no rate.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``wrong_conclusions`` study (:mod:`simstudy.studies.wrong_conclusions`):
        columns ``distribution`` (``"a vs b"``, the two models' names), ``B`` (trials per model),
        ``estimator``, ``measure``, ``estimate``, ``ci_low``, ``ci_high`` and ``reps``. Rate rows have
        ``measure == "wrong_rate"`` (a probability in [0, 1] with its Clopper-Pearson interval); rows with
        ``estimator == "truth"`` give, per B, ``"true_gap"`` (score units) and ``"true_tie"`` (0 or 1).
    title : str, optional, keyword-only
        The figure's title. Default None: one naming the models and the draws per budget.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing the B axis: the rates (top) and the true gap (bottom).

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2021). Expected validation performance and
    estimation of a random variable's maximum. Findings of EMNLP 2021, arXiv:2110.00613.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> truth = pd.DataFrame(
    ...     {"B": [2, 4, 8] * 2, "measure": ["true_gap"] * 3 + ["true_tie"] * 3,
    ...      "estimate": [0.02, 0.01, -0.01, 0, 0, 0]}
    ... ).assign(estimator="truth")
    >>> rates = pd.DataFrame(
    ...     {"B": [2, 4, 8], "estimate": [0.3, 0.4, 0.35], "ci_low": [0.25, 0.35, 0.3], "ci_high": [0.35, 0.45, 0.4]}
    ... ).assign(estimator="u", measure="wrong_rate", reps=200)
    >>> fig = wrong_conclusions_figure(pd.concat([rates, truth]).assign(distribution="a vs b"), title="a vs b")
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    _theme()
    rates = summary[summary["measure"] == "wrong_rate"]
    ests = list(dict.fromkeys(rates["estimator"]))
    palette = _estimator_palette(ests)
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(5.5, 6.0), sharex=True, height_ratios=[2.2, 1], layout="constrained"
    )
    truth = summary[summary["estimator"] == "truth"].pivot_table(index="B", columns="measure", values="estimate")
    # "Wrong" flips meaning where the true ranking flips: draw each run of budgets with one true winner apart.
    side = np.sign(truth["true_gap"].where(truth["true_tie"] == 0, 0.0))
    runs = (side != side.shift()).cumsum()
    for est in ests:
        r = rates[rates["estimator"] == est]
        for k, run_budgets in enumerate(truth.index[side != 0].groupby(runs[side != 0]).values()):
            _band(
                top,
                r[r["B"].isin(run_budgets)],
                "B",
                _label(est) if k == 0 else None,
                palette[est],
                low="ci_low",
                high="ci_high",
                marker="o",
                ms=3,
            )
    for b_prev, b_next in zip(truth.index[:-1], truth.index[1:]):
        if side[b_prev] * side[b_next] < 0:
            for ax in (top, bottom):
                ax.axvline((b_prev + b_next) / 2, color="grey", ls=":", lw=1)
    _labels(top, ylabel="wrong-conclusion rate")
    top.set_ylim(0, max(0.05, float(rates["ci_high"].max()) * 1.1) if len(rates) else 1)
    _legend(top, extra=[_shade("95% Clopper–Pearson interval")])
    bottom.plot(truth.index, truth["true_gap"], color="black", marker="o", ms=3)
    bottom.axhline(0, color="grey", lw=0.8)
    ties = truth.index[truth["true_tie"] > 0]
    if len(ties):
        bottom.plot(ties, truth.loc[ties, "true_gap"], "x", color="red", label="true tie (no rate)")
        _legend(bottom)
    a, b = str(summary["distribution"].iloc[0]).split(" vs ")
    _labels(bottom, xlabel="B (trials per model; estimates compared at n = B)", ylabel=f"true gap\n{a} − {b}")
    reps = int(rates["reps"].max()) if len(rates) else 0
    _suptitle(fig, title or f"{a} vs {b}: {reps:,} draws per budget (bands: Clopper–Pearson)")
    return fig


def evp_curves_figure(
    curves: pd.DataFrame,
    *,
    x: str = "n",
    target: float | None = None,
    reached: pd.DataFrame | None = None,
    xscale: str = "log",
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
):
    """Expected maximum against budget for each model, with +/- 1 SD shading (Dodge et al. 2019, Figs. 1-4).

    Parameters
    ----------
    curves : pandas.DataFrame
        One row per model and budget: columns ``model``, ``n`` (trials), ``expected_max`` (score units),
        ``std``, ``band_low``, ``band_high`` (the shading, already clipped to the observed range) and, for a
        time axis, the column named by ``x``.
    x : str, keyword-only, default "n"
        The x column: ``"n"`` (trials) or a time column (e.g. seconds or hours of tuning).
    target : float, optional, keyword-only
        A score to reach: drawn as a dotted line, with dotted drops at each model's budget in ``reached``.
    reached : pandas.DataFrame, optional, keyword-only
        Columns ``model`` and the column named by ``x``: where each model's curve first reaches ``target``
        (NaN: never).
    xscale : {"log", "linear"}, keyword-only, default "log"
        The x axis' scale.
    xlabel : str, optional, keyword-only
        The x axis label. Default None: "hyperparameter assignments (trials)" for ``x="n"``, else ``x``.
    ylabel : str, optional, keyword-only
        The y axis label. Default None: "expected max validation score" (``simstudy curve minimize=true``
        says "expected min").
    title : str, optional, keyword-only
        The title (wrapped to the figure's width). Default None: no title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, the legend below it.

    Raises
    ------
    ValueError
        If ``xscale`` is neither ``"log"`` nor ``"linear"``.

    References
    ----------
    Dodge, J., Gururangan, S., Card, D., Schwartz, R., & Smith, N. A. (2019). Show your work: Improved reporting
    of experimental results. EMNLP 2019, arXiv:1909.03004.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> curves = pd.DataFrame(
    ...     {"model": ["a"] * 3 + ["b"] * 3, "n": [1, 2, 4] * 2, "expected_max": [0.6, 0.65, 0.7, 0.55, 0.62, 0.72]}
    ... )
    >>> curves = curves.assign(std=0.05, band_low=curves.expected_max - 0.05, band_high=curves.expected_max + 0.05)
    >>> fig = evp_curves_figure(curves, target=0.68, reached=pd.DataFrame({"model": ["a", "b"], "n": [3.0, 4.0]}))
    >>> len(fig.axes), fig.axes[0].get_xscale()
    (1, 'log')
    >>> plt.close(fig)
    >>> evp_curves_figure(curves, xscale="symlog")
    Traceback (most recent call last):
        ...
    ValueError: xscale must be one of linear, log, got 'symlog'
    """
    _xscale_iv(xscale)
    _theme()
    models = list(dict.fromkeys(curves["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.3), layout="constrained")
    for model in models:
        c = curves[curves["model"] == model].sort_values(x)
        ax.plot(c[x], c["expected_max"], color=palette[model], lw=1.8, label=model)
        ax.fill_between(c[x], c["band_low"], c["band_high"], color=palette[model], alpha=0.2, lw=0)
    extra: list[Patch | Line2D] = [_shade("±1 SD (clipped to observed scores)", alpha=0.25)]
    never = [] if reached is None else list(reached.loc[reached[x].isna(), "model"])
    if target is not None:
        ax.axhline(target, color="black", ls=":", lw=1)
        extra.append(
            Line2D(
                [],
                [],
                color="black",
                ls=":",
                lw=1,
                label=f"target {target:g}"
                + (" (dotted drops: where each model reaches it)" if reached is not None else "")
                + (f"; never reached by {', '.join(map(str, never))}" if never else ""),
            )
        )
        if reached is not None:
            for _, row in reached.dropna(subset=[x]).iterrows():
                ax.axvline(row[x], color=palette[row["model"]], ls=":", lw=1)
    _set_xscale(ax, xscale)
    _labels(
        ax,
        xlabel=xlabel or ("hyperparameter assignments (trials)" if x == "n" else x),
        ylabel=ylabel or "expected max validation score",
    )
    _legend(fig, ax, extra, loc="outside lower center", ncols=2)
    if title:
        _title(ax, title)
    return fig


def _trivial_runs(c: pd.DataFrame, low: float, high: float, minimize: bool = False):
    """Where one model's bands say nothing: the first k from which the upper band is at ``high`` (or +inf)
    and the last k up to which the lower band is at ``low`` (or -inf), each as ``(k, bound)``, else None.
    ``minimize``: the curve of the minimum falls with k, so the last k up to which the upper band is trivial and
    the first k from which the lower one is."""
    k = c["k"].to_numpy()
    up = c["upper"].to_numpy() >= high  # +inf >= high always
    down = c["lower"].to_numpy() <= low
    first, last = (np.max, np.min) if minimize else (np.min, np.max)
    upper = (first(k[up]), high) if up.any() else None
    lower = (last(k[down]), low) if down.any() else None
    return upper, lower


def _bound_text(value: float) -> str:
    return f"{value:g}" if np.isfinite(value) else ("∞" if value > 0 else "−∞")


def sample_disagreement_figure(summary: pd.DataFrame, *, title: str | None = None):
    """How often samples' point estimates say one model overtakes another, against n (Lourie et al. 2024, Fig. 1).

    One line per estimator, Lourie et al.'s Figure 1 in numbers. Left: p, the probability that one random sample's
    estimated mean tuning curves say the challenger ``b`` beats ``a`` at some budget k <= n; right: 2p(1 - p), the
    probability that two independent samples disagree about it (its maximum 1/2 dotted). Error bars are +/- 1.96
    MCSE; estimators at one sample size are drawn a little apart so that their bars do not overlap.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``sample_disagreement`` study (:mod:`simstudy.studies.sample_disagreement`), one
        row per sample size, estimator and measure: columns ``distribution`` (``"a vs b"``, the two models'
        names: ``a`` the incumbent, ``b`` the challenger), ``sample_size`` (n, runs per model in a sample),
        ``estimator`` (``"u"``, ``"v"``, ...), ``measure`` (``"p_overtakes"`` or ``"p_disagree"``),
        ``estimate`` (a probability in [0, 1]; the unbiased ``p_disagree`` may slightly exceed 1/2), ``mcse``
        (same units) and ``reps`` (random samples per n). Other columns (``cell``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one naming the models and the samples per n.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels side by side, n on both x axes: ``p_overtakes`` (left, y in [0, 1]) and ``p_disagree``
        (right, y in [0, 0.55]); the legend in the left panel. Close it with ``plt.close(fig)`` when done.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.
    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> summary = pd.DataFrame(
    ...     {"measure": ["p_overtakes", "p_disagree"], "estimate": [0.3, 0.42], "mcse": [0.02, 0.01]}
    ... ).assign(distribution="mlp vs lstm", sample_size=25, estimator="v", reps=500)
    >>> fig = sample_disagreement_figure(summary)
    >>> len(fig.axes), fig.get_suptitle()
    (2, 'mlp vs lstm: 500 random samples per n')
    >>> plt.close(fig)
    """
    _theme()
    ests = list(dict.fromkeys(summary["estimator"].dropna()))
    palette = _estimator_palette(ests)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), layout="constrained")
    a, _, b = str(summary["distribution"].iloc[0]).partition(" vs ") if len(summary) else ("a", "", "b")
    panels = (
        ("p_overtakes", f"P(a sample's curves say {b} beats {a} at some k ≤ n)"),
        ("p_disagree", "P(two samples disagree) = 2p(1 − p)"),
    )
    sizes = np.unique(summary["sample_size"].dropna().to_numpy(dtype=float))
    step = float(np.diff(sizes).min()) if sizes.size > 1 else 1.0  # estimators side by side, a little apart
    for ax, (measure, ylabel) in zip(axes, panels):
        rows = summary[summary["measure"] == measure]
        for i, est in enumerate(ests):
            r = rows[rows["estimator"] == est].sort_values("sample_size")
            ax.errorbar(
                r["sample_size"] + 0.08 * step * (i - (len(ests) - 1) / 2),
                r["estimate"],
                yerr=_Z * r["mcse"],
                color=palette[est],
                marker="o",
                ms=4,
                capsize=3,
                lw=1.4,
                label=_label(est),
            )
        ax.set_ylim(0, 1 if measure == "p_overtakes" else 0.55)
        if measure == "p_disagree":
            ax.axhline(0.5, color="grey", ls=":", lw=1)  # its maximum, at p = 1/2
        _labels(ax, xlabel="n (runs per model in a sample)", ylabel=ylabel)
        if sizes.size == 1:
            ax.set_xticks(sizes)
            ax.set_xlim(sizes[0] - 0.5, sizes[0] + 0.5)
    _legend(axes[0], extra=[Line2D([], [], color="0.3", marker="|", ls="none", label="± 1.96 MCSE")])
    reps = int(summary["reps"].max()) if len(summary) else 0
    _suptitle(fig, title or f"{a} vs {b}: {reps:,} random samples per n")
    return fig


def tuning_curve_bands_figure(
    curves: pd.DataFrame,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    xscale: str = "linear",
    title: str | None = None,
    minimize: bool = False,
):
    """Tuning curves with simultaneous confidence bands, all models on one plot (Lourie et al. 2024, Figs. 2-3).

    With columns ``u`` and ``v``, the point estimates of the mean tuning curve are drawn in a panel beside it
    (Fig. 1). The y axis zooms on the informative part of the bands. Where a band is trivial -- the upper band
    at ``high`` (or infinite), the lower at ``low``: the data cannot bound the curve there -- the figure says
    so: a dotted line in the model's colour caps the band at the edge of the view and the legend gives the
    budgets, e.g. "upper band trivial (= 1) for k ≥ 9". The bounds ``low``/``high`` are drawn as grey dotted
    lines when they are in view and named at the edge when they are beyond it.

    Parameters
    ----------
    curves : pandas.DataFrame
        One row per model and k (iterations of random search): columns ``model``, ``k``, ``point``,
        ``lower``, ``upper`` (score units; the bands may be infinite); optionally ``confidence`` (in (0, 1))
        and ``method`` (named in the legend's band entry), ``kind`` (e.g. ``"median"``, named in the title),
        and ``u`` and ``v``: the U- and V-statistic estimates of the mean tuning curve (NaN beyond the sample
        size), drawn in a left panel as Lourie et al.'s Figure 1 does.
    low : float, keyword-only, default -inf
        Lower bound of the scores (may be infinite).
    high : float, keyword-only, default inf
        Upper bound of the scores (may be infinite).
    xscale : {"linear", "log"}, keyword-only, default "linear"
        The k axis' scale.
    title : str, optional, keyword-only
        Wrapped to the figure's width. Default None: no title (with the point-estimate panel, a panel title).
    minimize : bool, keyword-only, default False
        True: the curves are of the minimum (lower is better; ``simstudy bands minimize=true``), so they fall
        with k: the upper band is trivial up to a budget, the lower one from a budget on.

    Returns
    -------
    matplotlib.figure.Figure
        One axes, or two with ``u`` and ``v`` (point estimates left, bands right); the legend below.

    Raises
    ------
    ValueError
        If ``xscale`` is neither ``"linear"`` nor ``"log"``.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> curves = pd.DataFrame(
    ...     {"model": "a", "k": [1, 2, 3, 4], "point": [0.6, 0.7, 0.75, 0.78], "lower": [0.5, 0.6, 0.65, 0.7],
    ...      "upper": [0.7, 0.8, 1.0, 1.0]}
    ... )
    >>> fig = tuning_curve_bands_figure(curves, low=0.0, high=1.0)
    >>> [t.get_text().replace("\\n", " ") for t in fig.legends[0].get_texts()]
    ['a: tuning curve', 'simultaneous band', 'a: upper band trivial (= 1) for k ≥ 3', "thin line: the band's side that still bounds the curve"]
    >>> plt.close(fig)
    """
    _xscale_iv(xscale)
    _theme()
    models = list(dict.fromkeys(curves["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    estimates = {"u", "v"} <= set(curves.columns)
    if estimates:
        fig, (ax_point, ax) = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
        _point_estimates_panel(ax_point, curves, models, palette, xscale)
    else:
        fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
    values = curves[["point", "lower", "upper"]].to_numpy()
    finite = values[np.isfinite(values) & (values > low) & (values < high)]
    if finite.size == 0:
        finite = curves["point"].to_numpy()
    span = finite.max() - finite.min() or 1.0
    bottom, top = finite.min() - 0.05 * span, finite.max() + 0.05 * span
    # A bound close to the data is shown as a line in view; a far one is named at the edge instead.
    high_in_view = np.isfinite(high) and high <= top + 0.15 * span
    low_in_view = np.isfinite(low) and low >= bottom - 0.15 * span
    cap_top = high if high_in_view else top  # where a trivial upper band is drawn to
    cap_bottom = low if low_in_view else bottom
    kind = curves["kind"].iloc[0] if "kind" in curves else None
    curve_name = f"{kind} tuning curve" if kind else "tuning curve"
    extra = []
    one_sided = False
    for model in models:
        c = curves[curves["model"] == model].sort_values("k")
        ax.plot(
            c["k"], c["point"], color=palette[model], lw=1.8, label=f"{model}: {curve_name}", drawstyle="steps-post"
        )
        # Shaded only where both sides bound the curve: where a side is trivial (at the bound) a shade up to the
        # edge of the view would be a rectangle hiding the other models' bands; the side that still bounds the
        # curve is drawn as a thin line, and the trivial one as a dotted line at the edge (below).
        lo_trivial = ~(c["lower"] > low).to_numpy()
        hi_trivial = ~(c["upper"] < high).to_numpy()
        both = ~(lo_trivial | hi_trivial)
        # A step drawn post runs through the next k: there, hold the last bounded values (no spike to the cap).
        through = both | np.append(False, both[:-1])
        held = pd.DataFrame({"lower": c["lower"].where(both), "upper": c["upper"].where(both)}).ffill()
        ax.fill_between(
            c["k"],
            np.clip(held["lower"], cap_bottom, cap_top),
            np.clip(held["upper"], cap_bottom, cap_top),
            where=through,
            color=palette[model],
            alpha=0.22,
            lw=0,
            step="post",
        )
        for side, trivial in ((c["lower"], lo_trivial), (c["upper"], hi_trivial)):
            alone = ~trivial & (lo_trivial | hi_trivial)
            ax.plot(
                c["k"],
                np.where(alone, np.clip(side, cap_bottom, cap_top), np.nan),
                color=palette[model],
                lw=0.9,
                drawstyle="steps-post",
            )
            one_sided = one_sided or bool(alone.any())
        upper, lower = _trivial_runs(c, low, high, minimize)
        k_max, k_min = float(c["k"].max()), float(c["k"].min())
        up_from, down_to = ("≤", "≥") if minimize else ("≥", "≤")  # the minimum's curve falls with k
        if upper is not None:
            ax.hlines(
                cap_top, *((k_min, upper[0]) if minimize else (upper[0], k_max)), color=palette[model], ls=":", lw=1.6
            )
            extra.append(
                Line2D(
                    [],
                    [],
                    color=palette[model],
                    ls=":",
                    lw=1.6,
                    label=f"{model}: upper band trivial (= {_bound_text(high)}) for k {up_from} {upper[0]:g}",
                )
            )
        if lower is not None:
            ax.hlines(
                cap_bottom,
                *((lower[0], k_max) if minimize else (k_min, lower[0])),
                color=palette[model],
                ls=":",
                lw=1.6,
            )
            extra.append(
                Line2D(
                    [],
                    [],
                    color=palette[model],
                    ls=":",
                    lw=1.6,
                    label=f"{model}: lower band trivial (= {_bound_text(low)}) for k {down_to} {lower[0]:g}",
                )
            )
    for value, in_view, where in ((high, high_in_view, "top"), (low, low_in_view, "bottom")):
        if in_view:
            ax.axhline(value, color="0.4", ls=(0, (1, 3)), lw=1)
            ax.annotate(
                f"{'upper' if where == 'top' else 'lower'} bound of the scores: {value:g}",
                (0.01, value),
                xycoords=("axes fraction", "data"),
                va="bottom" if where == "top" else "top",
                ha="left",
                fontsize=7,
                color="0.3",
                xytext=(0, 2 if where == "top" else -2),
                textcoords="offset points",
            )
        elif np.isfinite(value):
            arrow = "↑" if where == "top" else "↓"
            ax.annotate(
                f"{arrow} bound {value:g} (beyond the view)",
                (0.99, cap_top if where == "top" else cap_bottom),
                xycoords=("axes fraction", "data"),
                xytext=(0, -4 if where == "top" else 4),
                textcoords="offset points",
                ha="right",
                va=where,
                fontsize=7,
                color="0.3",
                bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none", alpha=0.8),
            )
    pad = 0.04 * span
    ax.set_ylim(min(bottom, cap_bottom - pad), max(top, cap_top + pad))
    _set_xscale(ax, xscale)
    _labels(ax, xlabel="k (iterations of random search)", ylabel="best score after k iterations")
    band = "simultaneous band"
    if "confidence" in curves and "method" in curves:
        band = f"{float(curves['confidence'].iloc[0]):.0%} simultaneous band ({_method(curves['method'].iloc[0])})"
    if one_sided:
        extra.append(
            Line2D([], [], color="0.3", lw=0.9, label="thin line: the band's side that still bounds the curve")
        )
    _legend(fig, ax, [_shade(band, alpha=0.22), *extra], loc="outside lower center", ncols=2)
    if estimates:
        _title(ax, f"confidence bands for the {kind} tuning curve" if kind else "confidence bands")
        if title:
            _suptitle(fig, title)
    elif title:
        _title(ax, title)
    return fig


def _point_estimates_panel(ax, curves: pd.DataFrame, models: list, palette: dict, xscale: str) -> None:
    """Lourie et al.'s Figure 1, left: each model's V (solid) and U (dashed) estimates of the mean tuning curve."""
    for model in models:
        c = curves[curves["model"] == model].sort_values("k")
        for estimator, style in (("v", "-"), ("u", "--")):
            ax.plot(c["k"], c[estimator], color=palette[model], ls=style, lw=1.6)
    _set_xscale(ax, xscale)
    _labels(ax, xlabel="k (iterations of random search)", ylabel="expected best score after k iterations")
    _title(ax, "point estimates of the mean tuning curve")
    styles = [
        Line2D([], [], color="0.3", ls="-", lw=1.6, label="V-statistic (Dodge et al. 2019)"),
        Line2D([], [], color="0.3", ls="--", lw=1.6, label="U-statistic (Tang et al. 2020)"),
    ]
    ax.legend(handles=styles, loc="lower right", fontsize=7, frameon=True)


def cdf_bands_figure(cdfs: pd.DataFrame, *, low: float = -np.inf, high: float = np.inf, title: str | None = None):
    """Empirical CDFs with their simultaneous confidence bands, all models on one plot.

    The x axis zooms on the scores (a little beyond the smallest and largest); the bounds ``low``/``high``
    are drawn as dotted lines when they fall in view and named at the edge when they lie beyond it.

    Parameters
    ----------
    cdfs : pandas.DataFrame
        One row per model and order statistic: columns ``model``, ``score`` (score units), ``ecdf``,
        ``lower``, ``upper`` (probabilities in [0, 1]: the band values at each order statistic,
        right-continuous); optionally ``confidence`` and ``method`` (named in the legend).
    low : float, keyword-only, default -inf
        Lower bound of the scores (may be infinite).
    high : float, keyword-only, default inf
        Upper bound of the scores (may be infinite).
    title : str, optional, keyword-only
        Wrapped to the figure's width. Default None: no title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes (score against cumulative probability), the legend below.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> cdfs = pd.DataFrame(
    ...     {"model": "a", "score": [0.6, 0.7, 0.8], "ecdf": [1 / 3, 2 / 3, 1.0], "lower": [0.0, 0.1, 0.4],
    ...      "upper": [0.6, 0.9, 1.0]}
    ... )
    >>> fig = cdf_bands_figure(cdfs, low=0.0, high=1.0)
    >>> len(fig.axes), fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    (1, 'score', 'cumulative probability')
    >>> plt.close(fig)
    """
    _theme()
    models = list(dict.fromkeys(cdfs["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.6), layout="constrained")
    s_min, s_max = float(cdfs["score"].min()), float(cdfs["score"].max())
    pad = 0.05 * (s_max - s_min or abs(s_max) or 1.0)
    left, right = s_min - pad, s_max + pad
    # A bound near the scores is shown (a dotted line) rather than cut off just beyond the view.
    low_in_view = bool(np.isfinite(low) and low >= s_min - 3 * pad)
    high_in_view = bool(np.isfinite(high) and high <= s_max + 3 * pad)
    if low_in_view:
        left = low - 0.3 * pad
    if high_in_view:
        right = high + 0.3 * pad
    for model in models:
        c = cdfs[cdfs["model"] == model].sort_values("score")
        # To the edges of the view: the eCDF is 0 left of the first score, the bands keep their last values.
        x = np.concatenate(([left], c["score"], [right]))
        ax.step(
            x,
            np.concatenate(([0.0], c["ecdf"], [1.0])),
            where="post",
            color=palette[model],
            lw=1.5,
            label=f"{model}: empirical CDF of the scores",
        )
        ax.fill_between(
            x[1:],
            np.append(c["lower"], c["lower"].iloc[-1]),
            np.append(c["upper"], c["upper"].iloc[-1]),
            step="post",
            color=palette[model],
            alpha=0.22,
            lw=0,
        )
    for value, in_view, side in ((low, low_in_view, "left"), (high, high_in_view, "right")):
        if in_view:
            ax.axvline(value, color="0.4", ls=(0, (1, 3)), lw=1)
        if np.isfinite(value):
            text = (
                f"bound {value:g}"
                if in_view
                else (f"← bound {value:g}" if side == "left" else f"bound {value:g} →") + " (beyond the view)"
            )
            # Upper left / lower right: where a CDF leaves room (it starts near 0 and ends near 1).
            ax.text(
                0.01 if side == "left" else 0.99,
                0.98 if side == "left" else 0.02,
                text,
                transform=ax.transAxes,
                ha=side,
                va="top" if side == "left" else "bottom",
                fontsize=7,
                color="0.3",
            )
    ax.set_xlim(left, right)
    ax.set_ylim(0, 1)
    _labels(ax, xlabel="score", ylabel="cumulative probability")
    band = "simultaneous confidence band"
    if "confidence" in cdfs and "method" in cdfs:
        band = f"{float(cdfs['confidence'].iloc[0]):.0%} simultaneous band ({_method(cdfs['method'].iloc[0])})"
    _legend(fig, ax, [_shade(band, alpha=0.22)], loc="outside lower center", ncols=2)
    if title:
        _title(ax, title)
    return fig


def band_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Nominal vs empirical coverage of the simultaneous bands, a panel per distribution (Lourie et al. 2024, Fig. 5).

    Lourie et al.'s Figures 5 and 11. Filled markers: how often the tuning-curve band covers the true curve for
    every real k, with Clopper-Pearson error bars; open markers: how often it covers it at integer k only, a weaker
    event that over-covers. Exact bands lie on the dashed line y = x. Methods at one nominal level are drawn a
    little apart so that their error bars do not overlap. Rows of the ``cdf`` check are not drawn.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_coverage`` study (:mod:`simstudy.studies.band_coverage`), one row per
        distribution, method, check and nominal level: columns ``distribution``, ``method`` (a band method,
        e.g. ``"ld_highest_density"``; named by :data:`simstudy.stats.bands.METHOD_LABELS`), ``check``
        (``"curve"`` and ``"curve_integer_k"`` are drawn), ``nominal`` (the bands' confidence, in (0, 1)),
        ``estimate`` (the empirical coverage, a probability in [0, 1]), ``ci_low`` and ``ci_high`` (its
        Clopper-Pearson interval, used for ``"curve"``), ``n`` (scores per round) and ``reps`` (rounds).
        Other columns (``cell``, ``mcse``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: one naming the bands and the error bars.

    Returns
    -------
    matplotlib.figure.Figure
        One row of panels, one per distribution (sharing the y axis; both axes in [0, 1.02]), each titled
        with the distribution, n and the rounds; the legend below them.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [(check, q, q + 0.01) for check in ("curve", "curve_integer_k") for q in (0.5, 0.8, 0.95)]
    >>> summary = pd.DataFrame(rows, columns=["check", "nominal", "estimate"])
    >>> summary = summary.assign(
    ...     distribution="uniform", method="ld_highest_density", n=48, reps=1000,
    ...     ci_low=summary.estimate - 0.03, ci_high=summary.estimate + 0.03,
    ... )
    >>> fig = band_coverage_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[0].get_xlabel()
    (1, 'uniform (n = 48, 1,000 rounds)', 'nominal coverage')
    >>> plt.close(fig)
    """
    _theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, axes = plt.subplots(
        1, len(dists), figsize=(max(3.6 * len(dists), 5.0), 4.2), squeeze=False, sharey=True, layout="constrained"
    )
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="nominal = empirical (exact)")
        for j, method in enumerate(methods):
            shift = (j - (len(methods) - 1) / 2) * 0.006  # keep overlapping error bars apart
            for check, marker, fill in (("curve", "o", palette[method]), ("curve_integer_k", "o", "none")):
                r = s[(s["method"] == method) & (s["check"] == check)].sort_values("nominal")
                if r.empty:
                    continue
                yerr = [r["estimate"] - r["ci_low"], r["ci_high"] - r["estimate"]] if check == "curve" else None
                ax.errorbar(
                    r["nominal"] + shift,
                    r["estimate"],
                    yerr=yerr,
                    fmt=marker,
                    ms=3.5,
                    color=palette[method],
                    mfc=fill,
                    lw=1,
                    capsize=1.5,
                    label=_method(method)
                    + (" (every real k; bars: Clopper–Pearson)" if check == "curve" else ", integer k only"),
                )
        _title(ax, f"{dist} (n = {int(s['n'].iloc[0])}, {int(s['reps'].iloc[0]):,} rounds)", fontsize=8)
        _labels(ax, xlabel="nominal coverage")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
    _labels(axes[0, 0], ylabel="empirical coverage")
    _legend(fig, axes[0, -1], fontsize=7, loc="outside lower center", ncols=2)
    _suptitle(fig, title or "Simultaneous coverage of the median tuning-curve bands (error bars: Clopper–Pearson)")
    return fig


def band_triviality_figure(summary: pd.DataFrame, *, title: str | None = None):
    """The budget where the upper median band turns trivial against n, with its linear fit (Lourie et al. 2024, Fig. 9).

    Lourie et al.'s Figure 9, right. One colour per band method: its exact trivial budgets k*(n) as points and the
    fitted line ``intercept + slope * n`` through them; the legend gives the samples per bounded iteration
    (1 / slope) and the fit's R².

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_triviality`` study (:mod:`simstudy.studies.band_triviality`): columns
        ``method`` (a band method, named by :data:`simstudy.stats.bands.METHOD_LABELS`), ``measure``, ``n`` and
        ``estimate``. Per method, rows with ``measure == "trivial_k"`` give the budget k* (search iterations,
        real; :func:`simstudy.stats.bands.trivial_budget`) at sample size ``n`` (scores); one row each of
        ``"slope"`` (iterations per score), ``"intercept"`` (iterations), ``"r_squared"`` (in [0, 1]) and
        ``"samples_per_step"`` (scores per iteration) gives the linear fit of k* against n. Other columns
        (``cell``, ``distribution``, ``mcse``, ``reps``) are ignored.
    title : str, optional, keyword-only
        The axes' title (wrapped to its width). Default None: "Upper median tuning-curve band: iterations
        bounded (exact)".

    Returns
    -------
    matplotlib.figure.Figure
        One axes (k* against n), its legend inside.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> rows = [("trivial_k", n, n / 6) for n in (12, 24, 48)]
    >>> rows += [("slope", 0, 1 / 6), ("intercept", 0, 0.0), ("r_squared", 0, 1.0), ("samples_per_step", 0, 6.0)]
    >>> summary = pd.DataFrame(rows, columns=["measure", "n", "estimate"]).assign(method="ld_highest_density")
    >>> fig = band_triviality_figure(summary)
    >>> len(fig.axes), [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    (1, ['LD highest-density: 6.00 samples per step, R² = 1.0000'])
    >>> plt.close(fig)
    """
    _theme()
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, ax = plt.subplots(figsize=(5.0, 4.2), layout="constrained")
    for method in methods:
        s = summary[summary["method"] == method]
        pts = s[s["measure"] == "trivial_k"].sort_values("n")
        fit = s.set_index("measure")["estimate"]
        ax.plot(pts["n"], pts["estimate"], "o", ms=4, color=palette[method])
        ax.plot(
            pts["n"],
            fit["intercept"] + fit["slope"] * pts["n"],
            color=palette[method],
            lw=1,
            label=f"{_method(method)}: {fit['samples_per_step']:.2f} samples per step, R² = {fit['r_squared']:.4f}",
        )
    _labels(ax, xlabel="n (sample size)", ylabel="k where the upper band becomes trivial")
    _legend(ax, share=0.6, fontsize=7)
    _title(ax, title or "Upper median tuning-curve band: iterations bounded (exact)")
    return fig


def bootstrap_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Pointwise coverage of percentile-bootstrap bands for the mean tuning curve against k (Lourie et al., Fig. 4).

    A panel per distribution, a line per estimator (U, V) with its Clopper-Pearson interval shaded, and the
    nominal level dashed. The bootstrap cannot exceed the sample maximum, so coverage collapses as k nears n.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``bootstrap_coverage`` study (:mod:`simstudy.studies.bootstrap_coverage`), one row
        per distribution, estimator and k: columns ``distribution``, ``estimator`` (``"u"``, ``"v"``), ``k``
        (the budget, search iterations 1..n), ``estimate`` (the pointwise coverage, a probability in [0, 1]),
        ``ci_low`` and ``ci_high`` (its Clopper-Pearson interval), ``nominal`` (the bands' level, in (0, 1);
        the first row's is drawn) and ``reps`` (rounds). A panel's title gives n as the largest ``k``. Other
        columns (``cell``, ``truth``, ``mcse``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: "95% percentile-bootstrap bands (shaded:
        Clopper–Pearson intervals)", the level read from ``nominal``.

    Returns
    -------
    matplotlib.figure.Figure
        One row of panels, one per distribution (sharing the y axis, in [0, 1.02]); the legend in the first.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.
    Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y., & Lin, J. (2020). Showing your work doesn't always work.
    ACL 2020.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> summary = pd.DataFrame(
    ...     {"estimator": ["u"] * 3 + ["v"] * 3, "k": [1, 5, 10] * 2, "estimate": [0.95, 0.9, 0.6, 0.94, 0.85, 0.4]}
    ... )
    >>> summary = summary.assign(
    ...     distribution="uniform", nominal=0.95, reps=200, ci_low=summary.estimate - 0.04,
    ...     ci_high=(summary.estimate + 0.04).clip(upper=1.0),
    ... )
    >>> fig = bootstrap_coverage_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'uniform: n = 10, 200 rounds')
    >>> fig.get_suptitle()
    '95% percentile-bootstrap bands (shaded: Clopper–Pearson intervals)'
    >>> plt.close(fig)
    >>> fig = bootstrap_coverage_figure(summary.assign(nominal=0.8))
    >>> fig.get_suptitle()
    '80% percentile-bootstrap bands (shaded: Clopper–Pearson intervals)'
    >>> plt.close(fig)
    """
    _theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    ests = list(dict.fromkeys(summary["estimator"]))
    palette = _estimator_palette(ests)
    fig, axes = plt.subplots(
        1, len(dists), figsize=(max(4.2 * len(dists), 5.0), 3.8), squeeze=False, sharey=True, layout="constrained"
    )
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        for est in ests:
            _band(ax, s[s["estimator"] == est], "k", _label(est), palette[est], low="ci_low", high="ci_high")
        ax.axhline(
            float(s["nominal"].iloc[0]), color="black", ls="--", lw=0.8, label="nominal" if ax is axes[0, 0] else None
        )
        _title(ax, f"{dist}: n = {int(s['k'].max())}, {int(s['reps'].iloc[0]):,} rounds", fontsize=8)
        _labels(ax, xlabel="k (point of the mean tuning curve)")
        ax.set_ylim(0, 1.02)
    _labels(axes[0, 0], ylabel="pointwise coverage")
    # The bands' level is the summary's nominal (study.confidence); the intervals' level, study.ci_level, is not
    # in the summary, so the legend does not claim one.
    _legend(axes[0, 0], extra=[_shade("Clopper–Pearson interval")], loc="lower left")
    level = float(summary["nominal"].iloc[0])
    _suptitle(fig, title or f"{level:.0%} percentile-bootstrap bands (shaded: Clopper–Pearson intervals)")
    return fig


def band_width_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Average bands by method against k, beside the true curve (Lourie et al. 2024, Figures 6-8).

    Only the first distribution of ``summary`` is drawn: a row of panels per sample size, a column per kind
    of tuning curve (median, mean). Each method's average lower and upper band over the rounds is a step line
    in its colour, the true curve black; in the median panels a dotted vertical line marks where a method's
    upper band becomes trivial (when that is within the k drawn). The y axis runs from a little below the
    true curve's minimum to 1, for scores at most 1 (accuracies).

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``band_width`` study (:mod:`simstudy.studies.band_width`): columns
        ``distribution``, ``n`` (sample size, scores), ``kind`` (``"median"``, ``"mean"``), ``method`` (a band
        method, named by :data:`simstudy.stats.bands.METHOD_LABELS`, or ``"truth"``), ``k`` (search iterations),
        ``measure`` and ``estimate``. Drawn are the rows with ``method == "truth"`` (the true curve, score
        units), ``measure`` ``"lower"`` and ``"upper"`` (the average band, score units) and, for the median,
        ``"trivial_k"`` (the budget k* beyond which the upper band is trivial, iterations). Other columns and
        measures (``"point"``, ``"width"``, ``mcse``, ``reps``) are ignored.
    title : str, optional, keyword-only
        The figure's title (wrapped to its width). Default None: "Average simultaneous bands over rounds
        (Lourie et al. ablations)".

    Returns
    -------
    matplotlib.figure.Figure
        A grid of axes, one row per sample size (increasing) by one column per kind, each titled with the
        distribution, kind and n; the legend below.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> k = [1, 2, 3, 4]
    >>> summary = pd.concat(
    ...     [
    ...         pd.DataFrame({"k": k, "estimate": [0.5, 0.67, 0.75, 0.8], "method": "truth", "measure": "curve"}),
    ...         pd.DataFrame({"k": k, "estimate": [0.3, 0.5, 0.6, 0.65], "method": "dkw", "measure": "lower"}),
    ...         pd.DataFrame({"k": k, "estimate": [0.7, 0.85, 1.0, 1.0], "method": "dkw", "measure": "upper"}),
    ...         pd.DataFrame({"k": [0], "estimate": [2.5], "method": "dkw", "measure": "trivial_k"}),
    ...     ]
    ... ).assign(distribution="uniform", n=12, kind="median")
    >>> fig = band_width_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'uniform, median tuning curve, n = 12')
    >>> plt.close(fig)
    """
    _theme()
    dist = summary["distribution"].iloc[0]
    s = summary[summary["distribution"] == dist]
    sizes = sorted(s["n"].unique())
    kinds = list(dict.fromkeys(s["kind"]))
    methods = [m for m in dict.fromkeys(s["method"]) if m != "truth"]
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, axes = plt.subplots(
        len(sizes), len(kinds), figsize=(4.4 * len(kinds), 3.2 * len(sizes) + 0.8), squeeze=False, layout="constrained"
    )
    dotted = False
    for r, n in enumerate(sizes):
        for c, kind in enumerate(kinds):
            ax = axes[r, c]
            t = s[(s["n"] == n) & (s["kind"] == kind)]
            true = t[t["method"] == "truth"].sort_values("k")
            ax.plot(true["k"], true["estimate"], color="black", lw=1.4, label="true curve")
            for method in methods:
                for curve in ("lower", "upper"):
                    b = t[(t["method"] == method) & (t["measure"] == curve)].sort_values("k")
                    ax.plot(
                        b["k"],
                        b["estimate"],
                        color=palette[method],
                        lw=1.2,
                        drawstyle="steps-post",
                        label=f"{_method(method)} (average band)" if curve == "lower" else None,
                    )
                if kind == "median":
                    k_star = t[(t["method"] == method) & (t["measure"] == "trivial_k")]["estimate"]
                    if len(k_star) and k_star.iloc[0] < true["k"].max():
                        ax.axvline(k_star.iloc[0], color=palette[method], ls=":", lw=0.9)
                        dotted = True
            lo = float(true["estimate"].min())
            ax.set_ylim(lo - 0.1 * (1.0 - lo), 1.0 + 0.02 * (1.0 - lo))
            _title(ax, f"{dist}, {kind} tuning curve, n = {n}", fontsize=8)
            _labels(ax, xlabel="k")
    extra = [Line2D([], [], color="0.4", ls=":", lw=0.9, label="upper median band trivial beyond")] if dotted else []
    _legend(fig, axes[0, 0], extra, fontsize=7, loc="outside lower center", ncols=2)
    _suptitle(fig, title or "Average simultaneous bands over rounds (Lourie et al. ablations)")
    return fig


def model_selection_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Probability of selecting the best model against the budget, one line per algorithm (Moss et al. Figure 4).

    Each line has its 95% Clopper-Pearson band.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``model_selection`` study (:mod:`simstudy.studies.model_selection`); the rows
        with ``measure == "p_correct"`` are drawn: columns ``algorithm``, ``budget`` (model evaluations),
        ``estimate`` (a probability in [0, 1]), ``ci_low``, ``ci_high``, ``arm`` (the best model's name) and
        ``reps`` (runs per budget).
    title : str, optional, keyword-only
        The axes' title. Default None: one naming the best model and the runs per budget.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> summary = pd.DataFrame(
    ...     {"algorithm": ["sequential_halving"] * 2 + ["non_adaptive"] * 2, "budget": [24, 48] * 2,
    ...      "estimate": [0.8, 0.9, 0.7, 0.85]}
    ... ).assign(measure="p_correct", arm="b", reps=100)
    >>> summary = summary.assign(ci_low=summary.estimate - 0.05, ci_high=summary.estimate + 0.05)
    >>> fig = model_selection_figure(summary)
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'best: b; 100 runs per budget (bands: Clopper–Pearson)')
    >>> plt.close(fig)
    """
    _theme()
    p = summary[summary["measure"] == "p_correct"]
    algorithms = list(dict.fromkeys(p["algorithm"]))
    palette = dict(zip(algorithms, sns.color_palette("colorblind", len(algorithms))))
    fig, ax = plt.subplots(figsize=(5.2, 4.0), layout="constrained")
    for name in algorithms:
        _band(
            ax,
            p[p["algorithm"] == name],
            "budget",
            name.replace("_", " "),
            palette[name],
            low="ci_low",
            high="ci_high",
            marker="o",
            ms=3,
        )
    _labels(ax, xlabel="budget (model evaluations)", ylabel="P(best model selected)")
    _legend(ax, extra=[_shade("95% Clopper–Pearson interval")], loc="lower right")
    best = p["arm"].iloc[0] if len(p) else ""
    _title(ax, title or f"best: {best}; {int(p['reps'].max()):,} runs per budget (bands: Clopper–Pearson)")
    return fig


def fixed_confidence_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Evaluations needed and P(correct) against the confidence 1 - delta, one line per algorithm.

    Moss et al. Tables 2-3 as a figure. Left: the mean total evaluations with +/- 2 MCSE error bars and the
    min-max range over runs shaded (log scale). Right: P(best model selected) with Clopper-Pearson intervals,
    beside the nominal 1 - delta.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a ``fixed_confidence`` study (:mod:`simstudy.studies.fixed_confidence`): columns
        ``algorithm``, ``confidence`` (1 - delta, in (0.5, 1)), ``measure`` (``"evaluations_mean"``,
        ``"evaluations_min"``, ``"evaluations_max"`` in model evaluations; ``"p_correct"`` a probability),
        ``estimate``, ``mcse``, ``ci_low``, ``ci_high``, ``arm`` (the best model's name) and ``reps`` (runs).
        Algorithms without an ``evaluations_mean`` row (differences between two) are not drawn.
    title : str, optional, keyword-only
        The figure's title. Default None: one naming the best model and the runs per algorithm.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: evaluations (left) and P(correct) (right).

    References
    ----------
    Moss, H. B., Moore, A., Leslie, D. S., & Rayson, P. (2019). FIESTA: Fast IdEntification of State-of-The-Art
    models using adaptive bandit algorithms. ACL 2019, arXiv:1906.12230.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> measures = {"evaluations_mean": 40, "evaluations_min": 20, "evaluations_max": 80, "p_correct": 0.95}
    >>> rows = [(a, m, c, v) for a in ("ttts", "non_adaptive") for c in (0.9, 0.95) for m, v in measures.items()]
    >>> summary = pd.DataFrame(rows, columns=["algorithm", "measure", "confidence", "estimate"])
    >>> summary = summary.assign(mcse=1.0, ci_low=0.9, ci_high=0.99, reps=100, arm="b")
    >>> fig = fixed_confidence_figure(summary, title="TTTS vs non-adaptive")
    >>> len(fig.axes), fig.axes[0].get_yscale()
    (2, 'log')
    >>> plt.close(fig)
    """
    _theme()
    # one line per algorithm (not per difference between two, see the study's differences option)
    algorithms = list(dict.fromkeys(summary.loc[summary["measure"] == "evaluations_mean", "algorithm"]))
    palette = dict(zip(algorithms, sns.color_palette("colorblind", len(algorithms))))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4.0), layout="constrained")
    for name in algorithms:
        s = summary[summary["algorithm"] == name]
        m = s[s["measure"] == "evaluations_mean"].sort_values("confidence")
        lo = s[s["measure"] == "evaluations_min"].sort_values("confidence")
        hi = s[s["measure"] == "evaluations_max"].sort_values("confidence")
        label = name.replace("_", " ")
        left.errorbar(
            m["confidence"],
            m["estimate"],
            yerr=2 * m["mcse"],
            color=palette[name],
            marker="o",
            ms=3,
            capsize=2,
            label=f"{label} (mean ± 2 MCSE)",
        )
        left.fill_between(m["confidence"], lo["estimate"], hi["estimate"], color=palette[name], alpha=0.12, lw=0)
        p = s[s["measure"] == "p_correct"].sort_values("confidence")
        right.errorbar(
            p["confidence"],
            p["estimate"],
            yerr=[p["estimate"] - p["ci_low"], p["ci_high"] - p["estimate"]],
            color=palette[name],
            marker="o",
            ms=3,
            capsize=2,
            label=f"{label} (bars: Clopper–Pearson)",
        )
    conf = np.sort(summary["confidence"].unique())
    right.plot(conf, conf, color="0.4", ls="--", lw=1, label="nominal 1 − δ")
    left.set_yscale("log")
    _labels(left, xlabel="confidence 1 − δ", ylabel="total evaluations (shaded: min–max)")
    _labels(right, xlabel="confidence 1 − δ", ylabel="P(best model selected)")
    _legend(left, extra=[_shade("min–max over runs", alpha=0.15)], share=0.3, fontsize=7)
    _legend(right, share=0.3, fontsize=7, loc="lower right")
    reps = int(summary["reps"].max()) if len(summary) else 0
    best = summary.loc[summary["measure"] == "p_correct", "arm"].iloc[0] if len(summary) else ""
    _suptitle(fig, title or f"Fixed-confidence selection, best: {best}; {reps:,} runs per algorithm")
    return fig


def _law_label(name: str, specified: bool) -> str:
    """A law of the parametric_extrapolation study in words: nq_c2_r0.1 -> noisy quadratic c = 2, o/(b − a) = 0.1."""
    import re

    m = re.fullmatch(r"nq_c(\d+)_r(.+)", str(name))
    if specified and m:
        return f"noisy quadratic c = {m.group(1)}, o/(b − a) = {float(m.group(2)):g} (well specified)"
    return f"{name} (misspecified)"


def parametric_extrapolation_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Extrapolating random search with the fitted noisy quadratic law, a pair of panels per true law.

    Top: the error of the predicted median tuning curve against k/n (log axis) -- bias with a ±2 MCSE band
    (solid) and RMSE (dashed), in score units. Bottom: how often the pointwise bootstrap band for the median
    curve covers the truth, with its Clopper-Pearson interval and the nominal level (dashed); the title gives
    the b interval's coverage for well-specified laws. In both, a dotted line marks the k/n beyond which the
    nonparametric LD band at the same n and confidence is trivial, and a thin grey line k = n. One colour per n.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of :mod:`simstudy.studies.parametric_extrapolation`: columns ``distribution`` (the
        true law), ``specified`` (bool: the law is a noisy quadratic), ``n`` (sample size, runs), ``nominal``
        (the bands' level, in (0, 1)), ``k_over_n``, ``curve`` (``"median"`` rows are drawn), ``measure``
        (``"bias"``, ``"rmse"`` in score units; ``"band_coverage"``, ``"b_coverage"``, ``"p_fail"``,
        ``"p_hit_bound"`` probabilities; ``"ld_trivial_k"``), ``estimate``, ``mcse``, ``ci_low``,
        ``ci_high``, ``reps``.
    title : str, optional, keyword-only
        The figure's title. Default None: a description of the panels and the searches per law and n.

    Returns
    -------
    matplotlib.figure.Figure
        Two rows of axes per row of up to three laws (error above, coverage below); the legend below.

    References
    ----------
    Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025,
    arXiv:2510.02721.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import pandas as pd
    >>> measures = {"bias": 0.01, "rmse": 0.02, "band_coverage": 0.9}
    >>> rows = [(k, m, v) for k in (0.5, 2.0) for m, v in measures.items()]
    >>> summary = pd.DataFrame(rows, columns=["k_over_n", "measure", "estimate"]).assign(
    ...     n=10, distribution="nq_c2_r0.1", specified=True, nominal=0.9, curve="median", mcse=0.005, ci_low=0.85,
    ...     ci_high=0.95, reps=50,
    ... )
    >>> fig = parametric_extrapolation_figure(summary, title="noisy quadratic")
    >>> len(fig.axes), fig.axes[0].get_xscale()
    (2, 'log')
    >>> plt.close(fig)
    """
    _theme()
    laws = list(dict.fromkeys(summary["distribution"].dropna()))
    sizes = sorted(summary["n"].dropna().unique())
    palette = dict(zip(sizes, sns.color_palette("colorblind", max(len(sizes), 1))))
    ncols = max(1, min(len(laws), 3))
    rows = 2 * -(-len(laws) // ncols) if laws else 2
    fig, axes = plt.subplots(rows, ncols, figsize=(3.7 * ncols, 2.55 * rows + 1.3), squeeze=False, layout="constrained")
    nominal = float(summary["nominal"].dropna().iloc[0]) if summary["nominal"].notna().any() else float("nan")
    median = summary[summary["curve"] == "median"]
    reps = 0
    for i, law in enumerate(laws):
        top, bottom = axes[2 * (i // ncols), i % ncols], axes[2 * (i // ncols) + 1, i % ncols]
        s = summary[summary["distribution"] == law]
        m = median[median["distribution"] == law]
        specified = bool(s["specified"].iloc[0])
        notes = []
        for n in sizes:
            color = palette[n]
            bias = m[(m["measure"] == "bias") & (m["n"] == n)].sort_values("k_over_n")
            rmse = m[(m["measure"] == "rmse") & (m["n"] == n)].sort_values("k_over_n")
            if len(bias):
                reps = max(reps, int(bias["reps"].max()))
                top.plot(bias["k_over_n"], bias["estimate"], color=color, lw=1.5, label=f"n = {n:g}")
                top.fill_between(
                    bias["k_over_n"],
                    bias["estimate"] - 2 * bias["mcse"],
                    bias["estimate"] + 2 * bias["mcse"],
                    color=color,
                    alpha=0.25,
                    lw=0,
                )
                top.plot(rmse["k_over_n"], rmse["estimate"], color=color, lw=1.2, ls="--")
            cov = m[(m["measure"] == "band_coverage") & (m["n"] == n)].sort_values("k_over_n")
            if len(cov):
                bottom.plot(cov["k_over_n"], cov["estimate"], color=color, lw=1.5, marker="o", ms=2.5)
                bottom.fill_between(cov["k_over_n"], cov["ci_low"], cov["ci_high"], color=color, alpha=0.25, lw=0)
            trivial = s[(s["measure"] == "ld_trivial_k") & (s["n"] == n)]
            for ax in (top, bottom):
                if len(trivial):
                    ax.axvline(float(trivial["k_over_n"].iloc[0]), color=color, ls=":", lw=1.3)
            b = s[(s["measure"] == "b_coverage") & (s["n"] == n)]
            fail = s[(s["measure"] == "p_fail") & (s["n"] == n)]
            hit = s[(s["measure"] == "p_hit_bound") & (s["n"] == n)]
            note = f"n = {n:g}:"
            if len(b):
                note += f" b interval covers {b['estimate'].iloc[0]:.0%}"
            if len(fail) and len(hit):
                note += (
                    f"{',' if len(b) else ''} fits failed {fail['estimate'].iloc[0]:.0%}, fitted on the "
                    f"boundary o = 0 {hit['estimate'].iloc[0]:.0%}"
                )
            notes.append(note)
        for ax in (top, bottom):
            ax.axvline(1.0, color="0.55", lw=0.8)
            ax.set_xscale("log")  # decades only: k/n spans four of them
            ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0,)))
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        top.axhline(0.0, color="black", lw=0.7)
        bottom.axhline(nominal, color="black", ls="--", lw=0.9)
        bottom.set_ylim(0, 1.02)
        _title(top, _law_label(law, specified), fontsize=8)
        bottom.set_title(_wrap(fig, "; ".join(notes), 0.8 * fig.get_figwidth() / ncols, 7), fontsize=7)
        _labels(top, ylabel="median-curve error (score units)")
        _labels(bottom, xlabel="k / n (search budget ÷ sample size, log)", ylabel="band coverage")
    for j in range(len(laws), (rows // 2) * ncols):  # empty slots of the last row
        axes[2 * (j // ncols), j % ncols].set_visible(False)
        axes[2 * (j // ncols) + 1, j % ncols].set_visible(False)
    extra = [
        Line2D([], [], color="0.3", lw=1.5, label="bias (band: ±2 MCSE)"),
        Line2D([], [], color="0.3", lw=1.2, ls="--", label="RMSE"),
        Line2D(
            [],
            [],
            color="0.3",
            lw=1.5,
            marker="o",
            ms=2.5,
            label=f"coverage of the {nominal:.0%} bootstrap band (pointwise)",
        ),
        _shade("95% Clopper–Pearson interval of the coverage"),
        Line2D([], [], color="black", ls="--", lw=0.9, label=f"nominal level {nominal:.0%}"),
        Line2D(
            [],
            [],
            color="0.3",
            ls=":",
            lw=1.3,
            label=f"k/n beyond which the {nominal:.0%} LD band (simultaneous, nonparametric) is trivial",
        ),
        Line2D([], [], color="0.55", lw=0.8, label="k = n"),
    ]
    _legend(fig, axes[0, 0], extra=extra, fontsize=7, loc="outside lower center", ncols=3)
    _suptitle(
        fig,
        title
        or f"Extrapolating random search with the fitted noisy quadratic law: error of the "
        f"predicted median tuning curve (upper panels) and coverage of its bootstrap band "
        f"(lower panels), {reps:,} simulated searches per law and n",
    )
    return fig


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
    _theme()
    panels = list(dict.fromkeys(map(tuple, rows[swept].astype(str).to_numpy()))) if swept else [()]
    n_last = rows[swept[-1]].nunique() if swept else 1
    ncols = n_last if 1 < n_last <= 5 and len(panels) % n_last == 0 else min(4, len(panels))
    nrows = -(-len(panels) // ncols)
    hues = list(dict.fromkeys(rows[hue]))
    palette = dict(zip(hues, sns.color_palette("colorblind", len(hues))))
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
    _legend(axes.flat[0], extra=shade, fontsize=7)
    _suptitle(fig, title or f"{ylabel} by {', '.join(swept) or 'job'}")
    return fig


#: Figures that moved beside their command's page (issue 26): still importable from here, loaded when asked for.
_MOVED_FIGURES = {
    "kde_fit_figure": "simstudy.commands.audit_page",
    "extrapolation_figure": "simstudy.commands.extrapolate_page",
}


def __getattr__(name: str):
    # importlib, not an import statement: the commands' pages lie above the figures (and import them).
    if name in _MOVED_FIGURES:
        import importlib

        return getattr(importlib.import_module(_MOVED_FIGURES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
