"""Reports: a one-page markdown summary of an audit, with its figures (the layer above studies and plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import io, plots

__all__ = ["write_audit"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def write_audit(result, opts, scores: np.ndarray, out_dir: Path) -> Path:
    """Write the audit's figures and ``AUDIT.md``; return the markdown's path."""
    kde = result.kde
    lo, hi = kde.support
    grid = np.linspace(lo, hi, 801)
    curve = pd.DataFrame({"x": grid, "pdf": kde.pdf(grid), "cdf": kde.cdf(grid)})
    figures = {
        "fit": plots.kde_fit_figure(pd.DataFrame({"score": scores}), curve,
                                    title=f"KDE fit: bandwidth {kde.bandwidth:.4g}, {scores.size} scores"),
        "coverage": plots.band_coverage_figure(result.coverage.summary),
        "bootstrap": plots.bootstrap_coverage_figure(result.bootstrap.summary),
        "accuracy": plots.evp_accuracy_figure(result.accuracy.summary),
    }
    for name, fig in figures.items():
        io.save_figure(fig, out_dir / f"{name}.png", dpi=120)

    n, level, method = result.n, opts.confidence, opts.method
    cov = result.coverage.summary
    row = cov[(cov["check"] == "curve") & (cov["nominal"] == level)].iloc[0]
    consistent = row["ci_low"] <= level <= row["ci_high"]
    verdict = ("consistent with its nominal level" if consistent else
               "BELOW its nominal level" if row["ci_high"] < level else "above its nominal level (conservative)")
    boot = result.bootstrap.summary
    acc = result.accuracy.summary
    at_n = acc[(acc["n"] == n) & acc["measure"].isin(["bias", "empse", "mse"]) & acc["estimator"].isin(["u", "v", "w"])]
    table = at_n.pivot_table(index="estimator", columns="measure", values="estimate")
    mcse = at_n.pivot_table(index="estimator", columns="measure", values="mcse")
    lines = [
        f"# Audit of tuning-curve analyses at n = {n}",
        "",
        f"Scores: `{opts.data.data}`" + (f", model `{opts.model}`" if opts.model else "") + f" ({scores.size} scores). "
        f"Truth for the simulations: a Gaussian KDE reflected at [{lo:g}, {hi:g}] with bandwidth {kde.bandwidth:.4g} "
        "(Lourie et al.'s protocol). Every number below is a simulation from that KDE, with its Monte Carlo error.",
        "",
        "![KDE fit](fit.png)",
        "",
        "## Confidence bands",
        "",
        f"**The {_pct(level)} `{method}` bands for the median tuning curve covered the whole curve (every k) in "
        f"{_pct(row['estimate'])} of {int(row['reps']):,} simulated searches of {n} iterations "
        f"(99% Clopper–Pearson {_pct(row['ci_low'])}–{_pct(row['ci_high'])}): {verdict}.**",
        "",
        f"With n = {n} the upper band is informative up to k ≈ {result.bounded_k:.1f} iterations (beyond, it is the "
        f"bound {hi:g}). **To bound the curve up to k = {opts.target_k} at {_pct(level)} you need n ≥ "
        f"{result.samples_for_target} scores.**",
        "",
        "![coverage](coverage.png)",
        "",
        "## Bootstrap bands (pointwise)",
        "",
    ]
    for est in ("u", "v"):
        b = boot[boot["estimator"] == est].sort_values("k")
        lines.append(f"- {est.upper()}: 95% percentile-bootstrap bands covered the mean curve in "
                     f"{_pct(b['estimate'].iloc[0])} of rounds at k = 1 and {_pct(b['estimate'].iloc[-1])} at k = {n} "
                     f"(Clopper–Pearson {_pct(b['ci_low'].iloc[-1])}–{_pct(b['ci_high'].iloc[-1])}).")
    lines += ["", "![bootstrap](bootstrap.png)", "", f"## Point estimates at n = k = {n}", "",
              "| estimator | bias | SD | MSE |", "| --- | --- | --- | --- |"]
    for est in table.index:
        lines.append(f"| {est.upper()} | {table.loc[est, 'bias']:.3g} ± {mcse.loc[est, 'bias']:.1g} | "
                     f"{table.loc[est, 'empse']:.3g} ± {mcse.loc[est, 'empse']:.1g} | "
                     f"{table.loc[est, 'mse']:.3g} ± {mcse.loc[est, 'mse']:.1g} |")
    lines += ["", "(± one Monte Carlo standard error; against the KDE's exact mean tuning curve.)", "",
              "![accuracy](accuracy.png)", "",
              "Subdirectories `coverage/`, `bootstrap/` and `accuracy/` hold each study's tidy summary and run.json."]
    path = out_dir / "AUDIT.md"
    with io.atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return path
