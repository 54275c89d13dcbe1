"""The figure of :mod:`simstudy.studies.parametric_extrapolation`, in a module of its own (the study's module
is near the 1,000 lines a module may have).

=========================================  ==================================================================
:func:`parametric_extrapolation_figure`    error and coverage of the extrapolated tuning curves, per true law
=========================================  ==================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["parametric_extrapolation_figure"]


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
    import matplotlib.ticker
    from matplotlib.lines import Line2D

    from simstudy.chart_style import axes_title, colorblind, labels, legend, shade_patch, suptitle, theme, wrap

    plt = theme()
    laws = list(dict.fromkeys(summary["distribution"].dropna()))
    sizes = sorted(summary["n"].dropna().unique())
    palette = dict(zip(sizes, colorblind(max(len(sizes), 1))))
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
        axes_title(top, _law_label(law, specified), fontsize=8)
        bottom.set_title(wrap(fig, "; ".join(notes), 0.8 * fig.get_figwidth() / ncols, 7), fontsize=7)
        labels(top, ylabel="median-curve error (score units)")
        labels(bottom, xlabel="k / n (search budget ÷ sample size, log)", ylabel="band coverage")
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
        shade_patch("95% Clopper–Pearson interval of the coverage"),
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
    legend(fig, axes[0, 0], extra=extra, fontsize=7, loc="outside lower center", ncols=3)
    suptitle(
        fig,
        title
        or f"Extrapolating random search with the fitted noisy quadratic law: error of the "
        f"predicted median tuning curve (upper panels) and coverage of its bootstrap band "
        f"(lower panels), {reps:,} simulated searches per law and n",
    )
    return fig
