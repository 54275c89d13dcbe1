"""Reports: a one-page markdown summary of an audit, with its figures (the layer above studies and plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import io, plots

__all__ = ["write_audit", "describe_fit"]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


_METHODS = {"isj": "improved Sheather–Jones", "silverman": "Silverman's rule of thumb", "given": "given"}


def _bw_method(kde, opts) -> str:
    """How the (continuous part's) bandwidth was chosen, in words."""
    method = getattr(kde, "bw_method", None)
    if method is None:  # a plain ReflectedKDE: the audit's options say how
        method = ("given" if getattr(opts, "bandwidth", None) is not None else
                  f"bw_factor {opts.bw_factor:g}" if getattr(opts, "bw_factor", None) is not None else "silverman")
    return _METHODS.get(method, method)


def describe_fit(kde, opts=None) -> str:
    """The fitted truth in words: its bandwidth and how it was chosen, and its atoms with their shares.

    Example
    -------
    >>> from simstudy.distributions import KDEWithAtoms
    >>> x = np.concatenate([np.zeros(20), np.linspace(0.6, 0.9, 80)])
    >>> describe_fit(KDEWithAtoms.fit(x, bandwidth=0.02))
    'atom at 0 (20.0% of runs) plus a Gaussian KDE reflected at [0, 1] of the other 80 scores, bandwidth 0.02 (given)'
    """
    lo, hi = kde.support
    smooth = f"a Gaussian KDE reflected at [{lo:g}, {hi:g}]"
    shares = zip(getattr(kde, "atoms", ()), getattr(kde, "shares", ()))
    atoms = [f"atom at {a:.6g} ({_pct(p)} of runs)" for a, p in shares]
    if atoms:
        smooth = f"{', '.join(atoms)} plus {smooth} of the other {kde.data.size} scores"
    return f"{smooth}, bandwidth {kde.bandwidth:.4g} ({_bw_method(kde, opts)})"


def _fit_curve(kde) -> pd.DataFrame:
    """The fitted density and CDF on a grid, with both sides of every atom's jump (x repeated)."""
    lo, hi = kde.support
    atoms = np.asarray(getattr(kde, "atoms", ()) if getattr(kde, "has_atoms", False) else (), dtype=np.float64)
    grid = np.linspace(lo, hi, 801)
    x = np.sort(np.concatenate([grid, atoms, atoms]))
    cdf = kde.cdf(x)
    # The first copy of each atom takes the value just left of the jump.
    first = np.isin(x, atoms) & np.concatenate(([True], x[1:] != x[:-1]))
    cdf = np.where(first, kde.cdf_left(x), cdf)
    return pd.DataFrame({"x": x, "pdf": kde.pdf(x), "cdf": cdf})


def write_audit(result, opts, scores: np.ndarray, out_dir: Path) -> Path:
    """Write the audit's figures and ``AUDIT.md``; return the markdown's path.

    AUDIT.md opens with how well the fitted truth describes the scores (the Kolmogorov-Smirnov distance and
    its 95% critical value, :func:`simstudy.kde.ks_distance`) and, when the distance exceeds it, a warning
    that the simulations are about a different distribution.
    """
    from . import kde as kde_mod

    kde = result.kde
    lo, hi = kde.support
    fit = kde_mod.ks_distance(scores, kde)
    atoms = pd.DataFrame({"value": np.asarray(getattr(kde, "atoms", ()), dtype=np.float64),
                          "share": np.asarray(getattr(kde, "shares", ()), dtype=np.float64)})
    title = (f"Fit: bandwidth {kde.bandwidth:.4g} ({_bw_method(kde, opts)}), {len(atoms)} atom(s), "
             f"{scores.size} scores; KS distance {fit.distance:.3f} (95% critical {fit.critical:.3f})")
    figures = {
        "fit": plots.kde_fit_figure(pd.DataFrame({"score": scores}), _fit_curve(kde), title=title, atoms=atoms),
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
    lines = [f"# Audit of tuning-curve analyses at n = {n}", ""]
    if fit.rejected:
        lines += [
            f"> **Warning: the fitted distribution does not describe your scores (KS distance {fit.distance:.3f} > "
            f"{fit.critical:.3f}, largest near score {fit.at:.4g}): the simulations below are about a different "
            f"distribution.** Try a smaller bandwidth (e.g. `bandwidth={kde.bandwidth / 2:.2g}`), or check your "
            "scores for failed runs, repeated values and outliers (the figure shows where the fit misses).",
            "",
        ]
    lines += [
        f"Scores: `{opts.data.data}`" + (f", model `{opts.model}`" if opts.model else "") + f" ({scores.size} scores). "
        f"Truth for the simulations: {describe_fit(kde, opts)} (Lourie et al.'s protocol"
        + (", with point masses for the scores repeated beyond chance" if getattr(kde, "has_atoms", False) else "")
        + "). Every number below is a simulation from that distribution, with its Monte Carlo error.",
        "",
        f"Fit: Kolmogorov–Smirnov distance {fit.distance:.3f} between your scores and the fitted distribution; "
        f"95% critical value {fit.critical:.3f} (for a distribution fixed in advance: a fitted one lies closer to "
        "its data, so this check is lenient) — "
        + ("**rejected: see the warning above**." if fit.rejected else "not rejected."),
        "",
        "![fit](fit.png)",
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
