"""Figures, drawn from tidy summary frames only (never from study internals).

Monte Carlo quantities are drawn with a band of +/- 1.96 MCSE (a 95% Monte Carlo interval), proportions
with their Clopper-Pearson intervals, exact quantities as plain lines. :data:`FIGURES` maps a study kind
to its figure.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; no display is assumed (CI, clusters)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

__all__ = ["evp_accuracy_figure", "wrong_conclusions_figure", "evp_curves_figure", "tuning_curve_bands_figure",
           "cdf_bands_figure", "kde_fit_figure", "model_selection_figure",
           "fixed_confidence_figure", "FIGURES"]

_Z = 1.96


def _label(estimator: str) -> str:
    """U/V/W in the papers' notation; anything else as named."""
    return f"${estimator.upper()}_n^B$" if estimator in ("u", "v", "w") else estimator


def _band(ax, frame: pd.DataFrame, x: str, label: str, color, *, low=None, high=None, **kwargs) -> None:
    frame = frame.sort_values(x)
    lo = frame[low] if low else frame["estimate"] - _Z * frame["mcse"]
    hi = frame[high] if high else frame["estimate"] + _Z * frame["mcse"]
    ax.plot(frame[x], frame["estimate"], color=color, label=label, lw=1.6, **kwargs)
    ax.fill_between(frame[x], lo, hi, color=color, alpha=0.25, lw=0)


def _theme() -> None:
    sns.set_theme(style="whitegrid", context="paper")


def evp_accuracy_figure(summary: pd.DataFrame, *, reference: str = "v", title: str | None = None):
    """Mean, variance and MSE of each estimator against the budget n (Dodge et al. 2021, Figure 1).

    One column per cell (distribution and B). When bootstrap estimators are present, a fourth row shows
    each one's paired excess MSE over the ``reference`` closed form (Dodge et al. 2019, §3.2).

    Parameters
    ----------
    summary : DataFrame
        The tidy summary of an ``evp_accuracy`` study (columns ``cell``, ``distribution``, ``B``,
        ``estimator``, ``n``, ``measure``, ``estimate``, ``mcse``, ``reps``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    _theme()
    cells = list(dict.fromkeys(summary["cell"]))
    singles = [e for e in dict.fromkeys(summary["estimator"]) if e != "truth" and "-" not in e]
    palette = dict(zip(singles, sns.color_palette("colorblind", len(singles))))
    excess = [e for e in singles if e != reference and f"{e}-{reference}" in set(summary["estimator"])
              and e.startswith("boot")]
    rows = [("mean", "expected value"), ("variance", "variance"), ("mse", "MSE")]
    if excess:
        rows.append(("excess", f"excess MSE over {reference.upper()} (%)"))
    fig, axes = plt.subplots(len(rows), len(cells), figsize=(4.6 * len(cells), 2.5 * len(rows) + 0.5),
                             sharex="col", squeeze=False, constrained_layout=True)
    for c, cell in enumerate(cells):
        s = summary[summary["cell"] == cell]
        truth = s[(s["estimator"] == "truth") & (s["measure"] == "expected_max")].sort_values("n")
        axes[0, c].plot(truth["n"], truth["estimate"], color="black", lw=1.2, ls="--", label="true EVP (exact)",
                        zorder=5)  # on top: the unbiased U runs right along it
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
                        ax.plot(predicted.index, 100 * predicted["estimate"] / ref, color=palette[est], ls="--", lw=1)
                ax.axhline(0, color="black", lw=0.8)
            else:
                for est in singles:
                    _band(ax, s[(s["estimator"] == est) & (s["measure"] == measure)], "n", _label(est), palette[est])
            if c == 0:
                ax.set_ylabel(ylabel)
        reps = int(s["reps"].max())
        axes[0, c].set_title(f"{s['distribution'].iloc[0]}, B = {int(s['B'].iloc[0])}, {reps:,} replicates",
                             fontsize=9)
        axes[-1, c].set_xlabel("n (budget: number of trials)")
        axes[-1, c].set_xlim(truth["n"].min(), truth["n"].max())
    axes[0, 0].legend(loc="lower right", frameon=True)
    if excess:
        axes[-1, 0].legend(loc="upper left", frameon=True, fontsize=7)
    fig.suptitle(title or "Bands: 95% Monte Carlo intervals (±1.96 MCSE)", fontsize=9)
    return fig


def wrong_conclusions_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Wrong-conclusion rate against the budget B, one line per estimator (Dodge et al. 2021, Figure 2).

    Bands are Clopper-Pearson intervals. A lower panel shows the true gap theta_a(B) - theta_b(B), so a
    crossover of the true ranking is visible; budgets that are true ties are marked and have no rate.
    """
    _theme()
    rates = summary[summary["measure"] == "wrong_rate"]
    ests = list(dict.fromkeys(rates["estimator"]))
    palette = dict(zip(ests, sns.color_palette("colorblind", len(ests))))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.5, 6.0), sharex=True, height_ratios=[2.2, 1],
                                      constrained_layout=True)
    truth = summary[summary["estimator"] == "truth"].pivot_table(index="B", columns="measure", values="estimate")
    # "Wrong" flips meaning where the true ranking flips: draw each run of budgets with one true winner apart.
    side = np.sign(truth["true_gap"].where(truth["true_tie"] == 0, 0.0))
    runs = (side != side.shift()).cumsum()
    for est in ests:
        r = rates[rates["estimator"] == est]
        for k, run_budgets in enumerate(truth.index[side != 0].groupby(runs[side != 0]).values()):
            _band(top, r[r["B"].isin(run_budgets)], "B", _label(est) if k == 0 else None, palette[est],
                  low="ci_low", high="ci_high", marker="o", ms=3)
    for b_prev, b_next in zip(truth.index[:-1], truth.index[1:]):
        if side[b_prev] * side[b_next] < 0:
            for ax in (top, bottom):
                ax.axvline((b_prev + b_next) / 2, color="grey", ls=":", lw=1)
    top.set_ylabel("wrong-conclusion rate")
    top.set_ylim(0, max(0.05, float(rates["ci_high"].max()) * 1.1) if len(rates) else 1)
    top.legend(frameon=True)
    bottom.plot(truth.index, truth["true_gap"], color="black", marker="o", ms=3)
    bottom.axhline(0, color="grey", lw=0.8)
    ties = truth.index[truth["true_tie"] > 0]
    if len(ties):
        bottom.plot(ties, truth.loc[ties, "true_gap"], "x", color="red", label="true tie (no rate)")
        bottom.legend(frameon=True)
    a, b = str(summary["distribution"].iloc[0]).split(" vs ")
    bottom.set_ylabel(f"true gap\n{a} − {b}")
    bottom.set_xlabel("B (trials per model; estimates compared at n = B)")
    reps = int(rates["reps"].max()) if len(rates) else 0
    fig.suptitle(title or f"{a} vs {b}: {reps:,} draws per budget (bands: Clopper–Pearson)", fontsize=9)
    return fig


def evp_curves_figure(curves: pd.DataFrame, *, x: str = "n", target: float | None = None,
                      reached: pd.DataFrame | None = None, log_x: bool = True, xlabel: str | None = None,
                      title: str | None = None):
    """Expected maximum against budget for each model, with +/- 1 SD shading (Dodge et al. 2019, Figs. 1-4).

    Parameters
    ----------
    curves : DataFrame
        Columns ``model``, ``n``, ``expected_max``, ``std``, ``band_low``, ``band_high`` (the shading, already
        clipped to the observed range) and, for a time axis, the column named by ``x``.
    x : str
        The x column: ``"n"`` (trials) or a time column.
    target : float, optional
        A score to reach: drawn as a dotted line, with dotted drops at each model's budget in ``reached``.
    """
    _theme()
    models = list(dict.fromkeys(curves["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.0), constrained_layout=True)
    for model in models:
        c = curves[curves["model"] == model].sort_values(x)
        ax.plot(c[x], c["expected_max"], color=palette[model], lw=1.8, label=model)
        ax.fill_between(c[x], c["band_low"], c["band_high"], color=palette[model], alpha=0.2, lw=0)
    if target is not None:
        ax.axhline(target, color="black", ls=":", lw=1)
        if reached is not None:
            for _, row in reached.dropna(subset=[x]).iterrows():
                ax.axvline(row[x], color=palette[row["model"]], ls=":", lw=1)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or ("hyperparameter assignments (trials)" if x == "n" else x))
    ax.set_ylabel("expected max validation score")
    ax.legend(frameon=True)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def tuning_curve_bands_figure(curves: pd.DataFrame, *, low: float = -np.inf, high: float = np.inf,
                              title: str | None = None):
    """Tuning curves with simultaneous confidence bands, all models on one plot (Lourie et al., Figs. 2-3).

    ``curves`` has columns ``model``, ``k``, ``point``, ``lower``, ``upper``. Where a band is trivial (at
    ``low``/``high`` or infinite: the data cannot bound the curve there) it runs to the plot's edge, and the
    axis is scaled to the informative part.
    """
    _theme()
    models = list(dict.fromkeys(curves["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.0), constrained_layout=True)
    values = curves[["point", "lower", "upper"]].to_numpy()
    finite = values[np.isfinite(values) & (values > low) & (values < high)]
    if finite.size == 0:
        finite = curves["point"].to_numpy()
    pad = 0.05 * (finite.max() - finite.min() or 1.0)
    bottom, top = finite.min() - pad, finite.max() + pad
    for model in models:
        c = curves[curves["model"] == model].sort_values("k")
        ax.plot(c["k"], c["point"], color=palette[model], lw=1.8, label=f"{model} (eCDF)", drawstyle="steps-post")
        ax.fill_between(c["k"], np.clip(c["lower"], bottom, top), np.clip(c["upper"], bottom, top),
                        color=palette[model], alpha=0.22, lw=0, step="post")
    ax.set_ylim(bottom, top)
    ax.set_xlabel("k (iterations of random search)")
    ax.set_ylabel("best score after k iterations")
    ax.legend(frameon=True)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def cdf_bands_figure(cdfs: pd.DataFrame, *, low: float = -np.inf, high: float = np.inf, title: str | None = None):
    """Empirical CDFs with their simultaneous confidence bands (columns ``model``, ``score``, ``ecdf``,
    ``lower``, ``upper``: band values at each order statistic, right-continuous)."""
    _theme()
    models = list(dict.fromkeys(cdfs["model"]))
    palette = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, ax = plt.subplots(figsize=(5.5, 4.0), constrained_layout=True)
    for model in models:
        c = cdfs[cdfs["model"] == model].sort_values("score")
        ax.step(c["score"], c["ecdf"], where="post", color=palette[model], lw=1.5, label=f"{model} (eCDF)")
        ax.fill_between(c["score"], c["lower"], c["upper"], step="post", color=palette[model], alpha=0.22, lw=0)
    lo = low if np.isfinite(low) else None
    hi = high if np.isfinite(high) else None
    if lo is not None or hi is not None:
        ax.set_xlim(left=lo, right=hi)
    ax.set_ylim(0, 1)
    ax.set_xlabel("score")
    ax.set_ylabel("cumulative probability")
    ax.legend(frameon=True, loc="upper left")
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def band_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Nominal vs empirical coverage (Lourie et al. Figures 5 and 11), one panel per distribution.

    Filled markers: the tuning-curve band covers the curve for every k (with Clopper-Pearson error bars);
    open markers: covers it at integer k only, which over-covers. Exact bands lie on y = x.
    """
    _theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, axes = plt.subplots(1, len(dists), figsize=(3.6 * len(dists), 3.8), squeeze=False, sharey=True,
                             constrained_layout=True)
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--")
        for j, method in enumerate(methods):
            shift = (j - (len(methods) - 1) / 2) * 0.006  # keep overlapping error bars apart
            for check, marker, fill in (("curve", "o", palette[method]), ("curve_integer_k", "o", "none")):
                r = s[(s["method"] == method) & (s["check"] == check)].sort_values("nominal")
                if r.empty:
                    continue
                yerr = [r["estimate"] - r["ci_low"], r["ci_high"] - r["estimate"]] if check == "curve" else None
                ax.errorbar(r["nominal"] + shift, r["estimate"], yerr=yerr, fmt=marker, ms=3.5, color=palette[method],
                            mfc=fill, lw=1, capsize=1.5,
                            label=f"{method}" if check == "curve" else f"{method}, integer k only")
        ax.set_title(f"{dist} (n = {int(s['n'].iloc[0])}, {int(s['reps'].iloc[0]):,} rounds)", fontsize=8)
        ax.set_xlabel("nominal coverage")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
    axes[0, 0].set_ylabel("empirical coverage")
    axes[0, -1].legend(fontsize=6, frameon=True, loc="lower right")
    fig.suptitle(title or "Simultaneous coverage of the median tuning-curve bands (error bars: Clopper–Pearson)",
                 fontsize=9)
    return fig


def band_triviality_figure(summary: pd.DataFrame, *, title: str | None = None):
    """The budget at which the upper band becomes trivial against the sample size, with the linear fit
    (Lourie et al. Figure 9, right)."""
    _theme()
    methods = list(dict.fromkeys(summary["method"]))
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, ax = plt.subplots(figsize=(5.0, 3.8), constrained_layout=True)
    for method in methods:
        s = summary[summary["method"] == method]
        pts = s[s["measure"] == "trivial_k"].sort_values("n")
        fit = s.set_index("measure")["estimate"]
        ax.plot(pts["n"], pts["estimate"], "o", ms=4, color=palette[method])
        ax.plot(pts["n"], fit["intercept"] + fit["slope"] * pts["n"], color=palette[method], lw=1,
                label=f"{method}: {fit['samples_per_step']:.2f} samples per step, R² = {fit['r_squared']:.4f}")
    ax.set_xlabel("n (sample size)")
    ax.set_ylabel("k where the upper band becomes trivial")
    ax.legend(fontsize=7, frameon=True)
    ax.set_title(title or "Upper median tuning-curve band: iterations bounded (exact)", fontsize=9)
    return fig


def bootstrap_coverage_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Pointwise coverage of percentile-bootstrap bands against k (Lourie et al. Figure 4), a panel per
    distribution, a line per estimator with its Clopper-Pearson band, and the nominal level."""
    _theme()
    dists = list(dict.fromkeys(summary["distribution"]))
    ests = list(dict.fromkeys(summary["estimator"]))
    palette = dict(zip(ests, sns.color_palette("colorblind", len(ests))))
    fig, axes = plt.subplots(1, len(dists), figsize=(4.2 * len(dists), 3.6), squeeze=False, sharey=True,
                             constrained_layout=True)
    for ax, dist in zip(axes[0], dists):
        s = summary[summary["distribution"] == dist]
        for est in ests:
            _band(ax, s[s["estimator"] == est], "k", _label(est), palette[est], low="ci_low", high="ci_high")
        ax.axhline(float(s["nominal"].iloc[0]), color="black", ls="--", lw=0.8)
        ax.set_title(f"{dist}: n = {int(s['k'].max())}, {int(s['reps'].iloc[0]):,} rounds", fontsize=8)
        ax.set_xlabel("k (point of the mean tuning curve)")
        ax.set_ylim(0, 1.02)
    axes[0, 0].set_ylabel("pointwise coverage")
    axes[0, 0].legend(frameon=True, loc="lower left")
    fig.suptitle(title or "95% percentile-bootstrap bands (shaded: Clopper–Pearson intervals)", fontsize=9)
    return fig


def band_width_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Average bands by method against k, beside the true curve (Lourie et al. Figures 6-8), for the first
    distribution: a row per sample size, a column per kind (median, mean); dotted: where each method's upper
    median band becomes trivial."""
    _theme()
    dist = summary["distribution"].iloc[0]
    s = summary[summary["distribution"] == dist]
    sizes = sorted(s["n"].unique())
    kinds = list(dict.fromkeys(s["kind"]))
    methods = [m for m in dict.fromkeys(s["method"]) if m != "truth"]
    palette = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, axes = plt.subplots(len(sizes), len(kinds), figsize=(4.4 * len(kinds), 3.2 * len(sizes)), squeeze=False,
                             constrained_layout=True)
    for r, n in enumerate(sizes):
        for c, kind in enumerate(kinds):
            ax = axes[r, c]
            t = s[(s["n"] == n) & (s["kind"] == kind)]
            true = t[t["method"] == "truth"].sort_values("k")
            ax.plot(true["k"], true["estimate"], color="black", lw=1.4, label="true curve")
            for method in methods:
                for curve in ("lower", "upper"):
                    b = t[(t["method"] == method) & (t["measure"] == curve)].sort_values("k")
                    ax.plot(b["k"], b["estimate"], color=palette[method], lw=1.2, drawstyle="steps-post",
                            label=method if curve == "lower" else None)
                if kind == "median":
                    k_star = t[(t["method"] == method) & (t["measure"] == "trivial_k")]["estimate"]
                    if len(k_star) and k_star.iloc[0] < true["k"].max():
                        ax.axvline(k_star.iloc[0], color=palette[method], ls=":", lw=0.9)
            lo = float(true["estimate"].min())
            ax.set_ylim(lo - 0.1 * (1.0 - lo), 1.0 + 0.02 * (1.0 - lo))
            ax.set_title(f"{dist}, {kind} tuning curve, n = {n}", fontsize=8)
            ax.set_xlabel("k")
    axes[0, 0].legend(fontsize=6, frameon=True, loc="lower right")
    fig.suptitle(title or "Average simultaneous bands over rounds (Lourie et al. ablations)", fontsize=9)
    return fig


def kde_fit_figure(scores: pd.DataFrame, curve: pd.DataFrame, *, title: str | None = None,
                   atoms: pd.DataFrame | None = None):
    """A fitted distribution beside the scores: histogram with the fitted density (left), the scores' eCDF with
    the fitted CDF (right), atoms (point masses) marked on both.

    ``scores`` has a ``score`` column; ``curve`` has ``x``, ``pdf`` (the continuous part's density) and ``cdf``
    (an atom's x appears twice: the CDF just left of its jump, then at it); ``atoms``, if given, has ``value``
    and ``share`` columns.
    """
    _theme()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4), constrained_layout=True)
    y = np.sort(scores["score"].to_numpy())
    atoms = atoms if atoms is not None and len(atoms) else None
    left.hist(y, bins="auto", density=True, color="0.75", edgecolor="white", label="scores (histogram)")
    left.plot(curve["x"], curve["pdf"], color="C0", lw=1.6,
              label="fitted density" + (" (continuous part)" if atoms is not None else ""))
    right.step(y, np.arange(1, y.size + 1) / y.size, where="post", color="0.4", label="eCDF of the scores")
    right.plot(curve["x"], curve["cdf"], color="C0", lw=1.4, label="fitted CDF")
    if atoms is not None:
        for i, (value, share) in enumerate(zip(atoms["value"], atoms["share"])):
            label = "atoms (point masses)" if i == 0 else None
            left.axvline(value, color="C3", ls="--", lw=1.2, label=label)
            left.annotate(f"{100 * share:.1f}%", (value, 0.95), xycoords=("data", "axes fraction"), color="C3",
                          fontsize=7, ha="left", va="top", xytext=(2, 0), textcoords="offset points")
            at = curve[curve["x"] == value]["cdf"].to_numpy()
            right.vlines(value, at.min(), at.max(), color="C3", lw=2.0, label=label)
    left.set_xlabel("score")
    left.set_ylabel("density")
    left.legend(frameon=True, fontsize=7)
    right.set_xlabel("score")
    right.set_ylabel("cumulative probability")
    right.legend(frameon=True, fontsize=7, loc="upper left")
    fig.suptitle(title or "Boundary-corrected KDE fitted to the scores", fontsize=9)
    return fig


def model_selection_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Probability of selecting the best model against the budget, one line per algorithm, with
    Clopper-Pearson bands (Moss et al. Figure 4)."""
    _theme()
    p = summary[summary["measure"] == "p_correct"]
    algorithms = list(dict.fromkeys(p["algorithm"]))
    palette = dict(zip(algorithms, sns.color_palette("colorblind", len(algorithms))))
    fig, ax = plt.subplots(figsize=(5.2, 3.8), constrained_layout=True)
    for name in algorithms:
        _band(ax, p[p["algorithm"] == name], "budget", name.replace("_", " "), palette[name], low="ci_low",
              high="ci_high", marker="o", ms=3)
    ax.set_xlabel("budget (model evaluations)")
    ax.set_ylabel("P(best model selected)")
    ax.legend(frameon=True, loc="lower right")
    best = p["arm"].iloc[0] if len(p) else ""
    ax.set_title(title or f"best: {best}; {int(p['reps'].max()):,} runs per budget (bands: Clopper–Pearson)",
                 fontsize=9)
    return fig


def fixed_confidence_figure(summary: pd.DataFrame, *, title: str | None = None):
    """Evaluations needed and % correct against the confidence 1 - delta, one line per algorithm (Moss et al.
    Tables 2-3 as a figure): mean with MCSE error bars and the min-max range shaded; P(correct) with
    Clopper-Pearson intervals beside the nominal 1 - delta."""
    _theme()
    algorithms = list(dict.fromkeys(summary["algorithm"]))
    palette = dict(zip(algorithms, sns.color_palette("colorblind", len(algorithms))))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8), constrained_layout=True)
    for name in algorithms:
        s = summary[summary["algorithm"] == name]
        m = s[s["measure"] == "evaluations_mean"].sort_values("confidence")
        lo = s[s["measure"] == "evaluations_min"].sort_values("confidence")
        hi = s[s["measure"] == "evaluations_max"].sort_values("confidence")
        label = name.replace("_", " ")
        left.errorbar(m["confidence"], m["estimate"], yerr=2 * m["mcse"], color=palette[name], marker="o", ms=3,
                      capsize=2, label=f"{label} (mean ± 2 MCSE)")
        left.fill_between(m["confidence"], lo["estimate"], hi["estimate"], color=palette[name], alpha=0.12, lw=0)
        p = s[s["measure"] == "p_correct"].sort_values("confidence")
        right.errorbar(p["confidence"], p["estimate"], yerr=[p["estimate"] - p["ci_low"], p["ci_high"] - p["estimate"]],
                       color=palette[name], marker="o", ms=3, capsize=2, label=label)
    conf = np.sort(summary["confidence"].unique())
    right.plot(conf, conf, color="0.4", ls="--", lw=1, label="nominal 1 − δ")
    left.set_yscale("log")
    left.set_xlabel("confidence 1 − δ")
    left.set_ylabel("total evaluations (shaded: min–max)")
    right.set_xlabel("confidence 1 − δ")
    right.set_ylabel("P(best model selected)")
    left.legend(frameon=True, fontsize=7)
    right.legend(frameon=True, fontsize=7, loc="lower right")
    reps = int(summary["reps"].max()) if len(summary) else 0
    best = summary.loc[summary["measure"] == "p_correct", "arm"].iloc[0] if len(summary) else ""
    fig.suptitle(title or f"Fixed-confidence selection, best: {best}; {reps:,} runs per algorithm", fontsize=9)
    return fig


#: The figure of each study kind.
FIGURES = {"evp_accuracy": evp_accuracy_figure, "wrong_conclusions": wrong_conclusions_figure,
           "band_coverage": band_coverage_figure, "band_triviality": band_triviality_figure,
           "bootstrap_coverage": bootstrap_coverage_figure, "band_width": band_width_figure,
           "model_selection": model_selection_figure, "fixed_confidence": fixed_confidence_figure}
