"""Reports: one-page markdown summaries of an audit and of an extrapolation, with their figures (the layer above
studies and plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io, plots
from simstudy.stats.metrics import format_estimate, format_number

__all__ = [
    "write_audit",
    "describe_fit",
    "write_extrapolate",
    "plain",
    "atom_notes",
]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def plain(text: str) -> str:
    """Report text for a terminal: Markdown's bold markers (``**``) dropped.

    Parameters
    ----------
    text : str
        Markdown from a report page.

    Returns
    -------
    str
        The same text without ``**``.

    Examples
    --------
    >>> plain("**The bands covered 80%**: consistent.")
    'The bands covered 80%: consistent.'
    """
    return text.replace("**", "")


def atom_notes(scores: dict) -> list[str]:
    """Per model, in plain words, the values that many runs share exactly (failed or chance-level runs).

    The values are :func:`simstudy.stats.kde.find_atoms`'s (repeated beyond what a continuous score recorded at the
    data's resolution allows), as the audit fits them; ``curve``, ``bands`` and ``extrapolate`` say the same.

    Parameters
    ----------
    scores : dict of str to array_like of float
        Each model's scores (score units).

    Returns
    -------
    list of str
        One line per atom, e.g. ``"mlp: 32% of the runs scored exactly 0.001, which looks like failed or
        chance-level runs"``; empty when there are none.

    Examples
    --------
    >>> x = np.concatenate([np.full(32, 0.001), np.linspace(0.5, 0.9, 68)])
    >>> atom_notes({"mlp": x})
    ['mlp: 32% of the runs scored exactly 0.001, which looks like failed or chance-level runs']
    """
    from simstudy.stats.kde import find_atoms

    lines = []
    for model, x in scores.items():
        x = np.asarray(x, dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size < 2:
            continue
        atoms = find_atoms(x)
        lines += [f"{model}: {line}" for line in _atom_sentences(atoms.values, atoms.counts / x.size, x)]
    return lines


def _atom_sentences(values, shares, x: np.ndarray) -> list[str]:
    """'32% of the runs scored exactly 0.001, which looks like failed or chance-level runs', per atom."""
    return [
        f"{_share(p)} of the runs scored exactly {format_number(v, 6)}, {_atom_words(v, x)}"
        for v, p in zip(values, shares)
    ]


def _share(p: float) -> str:
    """A share of runs in whole percent (one decimal below 10%)."""
    return f"{100 * p:.1f}%" if p < 0.1 else f"{100 * p:.0f}%"


def _atom_words(value: float, x: np.ndarray) -> str:
    """What an atom looks like: below most other scores, failed or chance-level runs; else a repeated result."""
    others = x[x != value]
    if others.size == 0 or value < np.median(others):
        return "which looks like failed or chance-level runs"
    return "which looks like one result repeated (a configuration rerun, or a score capped there)"


_METHODS = {"isj": "improved Sheather–Jones", "silverman": "Silverman's rule of thumb", "given": "given"}


def _bw_method(kde, opts) -> str:
    """How the (continuous part's) bandwidth was chosen, in words."""
    method = getattr(kde, "bw_method", None)
    if method is None:  # a plain ReflectedKDE: the audit's options say how
        method = (
            "given"
            if getattr(opts, "bandwidth", None) is not None
            else f"bw_factor {opts.bw_factor:g}"
            if getattr(opts, "bw_factor", None) is not None
            else "silverman"
        )
    return _METHODS.get(method, method)


def describe_fit(kde, opts=None) -> str:
    """The fitted truth in words: its bandwidth and how it was chosen, and its atoms with their shares.

    The sentence ``AUDIT.md`` uses to say which distribution its simulations draw from.

    Parameters
    ----------
    kde : simstudy.distributions.ReflectedKDE or simstudy.distributions.KDEWithAtoms
        The fitted distribution (anything with ``support``, ``bandwidth`` and ``data``; ``atoms`` and
        ``shares`` if it has point masses).
    opts : simstudy.config.AuditConfig or None
        The audit's options, which say how the bandwidth of a plain
        :class:`~simstudy.distributions.ReflectedKDE` was chosen (``bandwidth`` given, ``bw_factor``, else
        Silverman's rule); default None (a :class:`~simstudy.distributions.KDEWithAtoms` records its own
        method).

    Returns
    -------
    str
        One line: the atoms (value, share of runs in percent), the KDE's reflecting bounds, the number of
        other scores, and the bandwidth in score units with how it was chosen.

    Examples
    --------
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
    its 95% critical value, :func:`simstudy.stats.kde.ks_distance`) and, when the distance exceeds it, a warning
    that the simulations are about a different distribution. Then: the simultaneous coverage of the
    confidence bands at the audit's level with a 99% Clopper-Pearson interval and a verdict, the budget up to
    which the upper band is informative and the sample size needed for ``target_k``; the pointwise coverage
    of the percentile-bootstrap bands of U and V; and the bias, SD and MSE of U, V and W at k = n, each with
    its Monte Carlo standard error (Lourie, Cho & He's protocol). The figures ``fit.png``, ``coverage.png``,
    ``bootstrap.png`` and ``accuracy.png`` go beside it. Every file is written atomically.

    Parameters
    ----------
    result : simstudy.studies.audit.AuditResult
        The audit's studies (:func:`simstudy.studies.audit.run`): the fitted KDE, n, and the coverage,
        bootstrap and accuracy studies' summaries.
    opts : simstudy.config.AuditConfig
        The audit's options (:func:`simstudy.config.parse_audit`): ``confidence``, ``method``, ``target_k``,
        ``data`` and ``model`` are reported, ``bandwidth`` and ``bw_factor`` describe the fit.
    scores : numpy.ndarray of float, shape (N,)
        The researcher's scores the KDE was fitted to (score units), for the fit check and figure.
    out_dir : pathlib.Path
        The audit's run directory (it exists).

    Returns
    -------
    pathlib.Path
        ``out_dir / "AUDIT.md"``.

    Raises
    ------
    OSError
        If a file cannot be written.

    See Also
    --------
    simstudy.studies.audit.run : Runs the studies this page reports.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    ``simstudy audit data=scores.csv`` runs the studies and calls this function. Run by hand, the audit takes
    seconds to minutes and its four figures about a second, so this example shows only the options it
    reports, at their defaults:

    >>> from simstudy import config
    >>> opts = config.parse_audit({"data": "scores.csv", "sample_size": 20})
    >>> opts.confidence, opts.method, opts.target_k
    (0.8, 'ld_highest_density', 10)

    Then, for scores ``x`` (a 1-d array) and an empty directory ``out``::

        spec = {"kind": "kde_atoms", "path": "scores.csv", "low": 0.0, "high": 1.0, "bw_of": "reflected",
                "bandwidth": None, "bw_factor": None, "name": "runs"}
        result = audit.run(opts, spec, opts.sample_size, out)  # from simstudy.studies import audit
        print(write_audit(result, opts, x, out).read_text())
    """
    from simstudy.stats import kde as kde_mod

    kde = result.kde
    lo, hi = kde.support
    bound = lo if opts.data.minimize else hi  # the trivial band's end: the best score possible
    fit = kde_mod.ks_distance(scores, kde)
    atoms = pd.DataFrame(
        {
            "value": np.asarray(getattr(kde, "atoms", ()), dtype=np.float64),
            "share": np.asarray(getattr(kde, "shares", ()), dtype=np.float64),
        }
    )
    title = (
        f"Fit: bandwidth {kde.bandwidth:.4g} ({_bw_method(kde, opts)}), {len(atoms)} atom(s), "
        f"{scores.size} scores; KS distance {fit.distance:.3f} (95% critical {fit.critical:.3f})"
    )
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
    verdict = (
        "consistent with its nominal level"
        if consistent
        else "BELOW its nominal level"
        if row["ci_high"] < level
        else "above its nominal level (conservative)"
    )
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
        *[
            f"- {line}: the simulations draw them as they are."
            for line in _atom_sentences(getattr(kde, "atoms", ()), getattr(kde, "shares", ()), scores)
        ],
        *([""] if getattr(kde, "has_atoms", False) else []),
        f"Fit: Kolmogorov–Smirnov distance {fit.distance:.3f} between your scores and the fitted distribution; "
        f"95% critical value {fit.critical:.3f} (for a distribution fixed in advance: a fitted one lies closer to "
        "its data, so this check is lenient) — "
        + ("**rejected: see the warning above**." if fit.rejected else "not rejected."),
        "",
        "![fit](fit.png)",
        "",
        "## Confidence bands",
        "",
        f"**The {_lvl(level)} `{method}` bands for the median tuning curve"
        + (" (of the minimum: lower is better)" if opts.data.minimize else "")
        + f" covered the whole curve (every k) in "
        f"{_share_of(row['estimate'], row['reps'])} of {int(row['reps']):,} simulated searches of {n} iterations "
        f"({_lvl(_ci_level(result.coverage))} Clopper–Pearson interval "
        f"{_share_of(row['ci_low'], row['reps'])}–{_share_of(row['ci_high'], row['reps'])}): {verdict}.**",
        "",
        f"With n = {n} the {'lower' if opts.data.minimize else 'upper'} band is informative up to "
        f"k = {int(np.floor(result.bounded_k)):,} iterations (beyond, it is the bound {bound:g}). "
        + _samples_sentence(result, opts),
        "",
        "![coverage](coverage.png)",
        "",
        "## Bootstrap bands (pointwise)",
        "",
    ]
    lines += _bootstrap_lines(boot, n, _ci_level(result.bootstrap))
    lines += [
        "",
        "![bootstrap](bootstrap.png)",
        "",
        f"## Point estimates at n = k = {n}",
        "",
        "| estimator | bias | SD | MSE |",
        "| --- | --- | --- | --- |",
    ]
    for est in table.index:
        cells = [format_estimate(table.loc[est, m], mcse.loc[est, m]) for m in ("bias", "empse", "mse")]
        lines.append(f"| {est.upper()} | {' | '.join(cells)} |")
    lines += [
        "",
        "(± one Monte Carlo standard error; against the KDE's exact mean tuning curve.)",
        "",
        "![accuracy](accuracy.png)",
        "",
        "Subdirectories `coverage/`, `bootstrap/` and `accuracy/` hold each study's tidy summary and run.json.",
    ]
    return _write_page(out_dir / "AUDIT.md", lines)


def _ci_level(study) -> float:
    """The level of a coverage study's Clopper-Pearson intervals, as its run.json records it (never assumed)."""
    import json

    return float(json.loads(Path(study.files["run"]).read_text())["ci_level"])


def _share_of(p: float, reps: int) -> str:
    """A simulated proportion (a coverage) in percent, to the digits its MCSE ``sqrt(p (1 - p) / reps)`` supports
    (a share of 0 or 1, whose MCSE is 0, as ``0%``/``100%``)."""
    p = float(p)
    mcse = np.sqrt(p * (1.0 - p) / reps) if 0.0 < p < 1.0 else 1.0 / reps
    return format_estimate(p, mcse, percent=True, show_mcse=False)


def _samples_sentence(result, opts) -> str:
    """How many scores bound the median curve up to target_k, or that the search's cap did not suffice."""
    from simstudy.studies.audit import SAMPLES_LIMIT

    level = _lvl(opts.confidence)
    if result.samples_for_target is None:
        return (
            f"**Not reached within n ≤ {SAMPLES_LIMIT:,}: no sample size up to {SAMPLES_LIMIT:,} scores bounds the "
            f"curve up to k = {opts.target_k:,} at {level}** (the budget a band bounds grows about in proportion to n)."
        )
    return f"**To bound the curve up to k = {opts.target_k:,} at {level} you need n ≥ {result.samples_for_target:,} scores.**"


def _bootstrap_lines(boot: pd.DataFrame, n: int, ci_level: float) -> list[str]:
    """Per estimator, the bootstrap bands' coverage at k = 1 and k = n, then a plain verdict at their worst k."""
    lines = []
    for est in ("u", "v"):
        b = boot[boot["estimator"] == est].sort_values("k")
        if not len(b):
            continue
        nominal = float(b["nominal"].iloc[0])
        worst = b.loc[b["estimate"].idxmin()]
        last = b.iloc[-1]
        reps = int(last["reps"])
        line = (
            f"- {est.upper()}: the {_lvl(nominal)} percentile-bootstrap bands covered the mean curve in "
            f"{_share_of(b['estimate'].iloc[0], reps)} of rounds at k = 1 and {_share_of(last['estimate'], reps)} at "
            f"k = {n} ({_lvl(ci_level)} Clopper–Pearson interval {_share_of(last['ci_low'], reps)}–"
            f"{_share_of(last['ci_high'], reps)}, "
            f"{int(last['reps']):,} rounds). "
        )
        if (b["ci_high"] < nominal).any():
            line += (
                f"**These intervals cover {_share_of(worst['estimate'], reps)} at nominal {_lvl(nominal)} (k = "
                f"{int(worst['k']):,}): do not use them at this n.**"
            )
        elif (b["ci_low"] > nominal).all():
            line += "They cover more than nominal at every k (conservative)."
        else:
            line += "Consistent with their nominal level at every k."
        lines.append(line)
    return lines


def _write_page(path: Path, lines: list[str]) -> Path:
    """Write a report page atomically (a crash leaves the old page or none, never half of one)."""
    with io.atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return path


def _lvl(x: float) -> str:
    """A level as it is typed: 95%, 99.5%, 99.99999% (never rounded to 100%: :g kept 6 digits)."""
    return f"{round(100 * x, 10):.15g}%"  # rounded: 100 * 0.9999999 is 99.99999000000001


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}" if np.isfinite(x) else "—"


def _interval(lo: float, hi: float, digits: int = 4) -> str:
    return f"[{_g(lo, digits)}, {_g(hi, digits)}]"


def _c_shares(fit) -> str:
    shares = {int(col.rsplit("_", 1)[1]): fit[col] for col in fit.index if str(col).startswith("c_share_")}
    shown = [f"c = {c}: {_pct(p)}" for c, p in sorted(shares.items(), key=lambda cp: -cp[1]) if p > 0]
    return ", ".join(shown[:4]) + (", ..." if len(shown) > 4 else "")


def _mean_error(row) -> str:
    """The mean absolute relative error of a simulation row, in percent to the digits its MCSE supports."""
    return format_estimate(row["mean_abs_rel_error"], row["mean_abs_rel_error_mcse"], percent=True, show_mcse=False)


def _multiple(m: int) -> str:
    return "n" if m == 1 else f"{m}n"


def _extrapolate_section(fit, curves: pd.DataFrame, sims: pd.DataFrame, full, opts) -> list[str]:
    """One model's part of EXTRAPOLATE.md: the fit, the predictions at n..100n with their simulated error, and
    (with held-out runs) the check against them."""
    n, model, level = int(fit["runs"]), fit["model"], opts.level
    # minimize=true: the convex law, whose a is the best score possible; the tail fitted is the lowest scores
    convex = bool(fit.get("convex", False))
    best, other = ("a", "b") if convex else ("b", "a")
    mine = curves[(curves["model"] == model) & (curves["runs"] == n)]
    med = mine[mine["curve"] == "median"].set_index("k")
    avg = mine[mine["curve"] == "mean"].set_index("k")
    sim = sims[(sims["model"] == model) & (sims["runs"] == n)].set_index("multiple")
    noise = (
        "o = 0: the noise-free law fits best (**hit_bound**: the fit lies on the family's boundary)"
        if fit["hit_bound"]
        else f"o = {_g(fit['o'], 3)} {_interval(fit['o_lower'], fit['o_upper'], 3)} (run-to-run noise SD)"
    )
    lines = [
        f"## {model}: fitted to {'the first ' if fit['total_runs'] > n else ''}{n:,} runs",
        "",
        f"- **{best}, the best score possible: {_g(fit[best], 5)}**, {_lvl(level)} interval "
        f"**{_interval(fit[f'{best}_lower'], fit[f'{best}_upper'], 5)}**. {_best_against_observed(fit)}",
        f"- **c, the effective number of hyperparameters: {int(fit['c'])}** (the bootstrap's fits chose "
        f"{_c_shares(fit)}).",
        *_law_warnings(fit, opts),
        *(f"- **Warning: {w}.**" for w in _beyond_bounds(curves, model, n, opts.data.low, opts.data.high)),
        f"- {noise}; {other} = {_g(fit[other], 4)} {_interval(fit[f'{other}_lower'], fit[f'{other}_upper'])}.",
        f"- Threshold {_g(fit['threshold'], 5)} ({fit['rule']}): the {int(fit['n_tail'])} of {n:,} scores "
        f"{'below' if convex else 'above'} it fitted, the rest censored"
        + ("" if fit["converged"] else " (**the optimizer did not meet its tolerance**)")
        + ".",
        *(
            [
                f"- **Warning: the fitted {best} lies outside its bootstrap interval**: refits of samples from the "
                "fitted law land elsewhere, so the fit is unstable at this n (more runs, another threshold, or c= "
                "may help)."
            ]
            if np.isfinite(fit[f"{best}_lower"]) and not fit[f"{best}_lower"] <= fit[best] <= fit[f"{best}_upper"]
            else []
        ),
        f"- Bootstrap: {int(fit['n_boot'])} replicates"
        + (f", {_pct(fit['failed'])} of fits failed (left out)" if fit["failed"] > 0 else "")
        + ".",
        "",
    ]
    lines += [
        f"| k | median tuning curve ({_lvl(level)} band) | mean tuning curve ({_lvl(level)} band) | "
        f"nonparametric median ({_lvl(level)} band) | error in simulation: mean abs. relative (± MCSE) |",
        "|---|---|---|---|---|",
    ]
    for m, row in sim.iterrows():
        k = row["k"]
        r = med.loc[k]
        mean = (
            f"{_g(avg.loc[k, 'estimate'], 5)} {_interval(avg.loc[k, 'lower'], avg.loc[k, 'upper'], 5)}"
            if k in avg.index
            else "—"
        )
        nonpar = (
            f"{_g(r['np_point'], 5)} {_interval(r['np_lower'], r['np_upper'], 5)}"
            if np.isfinite(r["np_point"])
            else "—"
        )
        error = format_estimate(row["mean_abs_rel_error"], row["mean_abs_rel_error_mcse"], percent=True)
        lines.append(
            f"| {int(k):,} ({_multiple(int(m))}) | {_g(r['estimate'], 5)} {_interval(r['lower'], r['upper'], 5)} "
            f"| {mean} | {nonpar} | {error} |"
        )
    R = int(sim["replicates"].iloc[0]) if len(sim) else 0
    worst = sim.loc[max(sim.index)] if len(sim) else None
    lines += [
        "",
        f"**How far the extrapolation held up in simulation.** {R} searches of n = {n:,} runs simulated from the "
        f"fitted law (the bootstrap's replicates), each refitted by the same rule: the predicted median curve "
        f"erred at k = n by {_mean_error(sim.loc[1])} on average and at k = {_multiple(int(max(sim.index)))} by "
        f"{_mean_error(worst)} (90% of searches within {_pct(worst['p90_abs_rel_error'])}; bias "  # type: ignore[index]  # None only if sim is empty, when sim.loc[1] has failed
        f"{format_estimate(worst['bias_rel'], worst['bias_rel_mcse'], percent=True)}), the relative error being "  # type: ignore[index]
        f"|predicted(k) − true(k)| / (true(k) − true(1)): a share of what search gains over a single run's "
        f"median score (true(k) − true(1) = {_g(worst['gain'], 3)} at {_multiple(int(max(sim.index)))}). This assumes the law holds; the "  # type: ignore[index]
        "coverage of the bootstrap bands is not simulated here (it needs a bootstrap per simulated search): "
        "the `parametric_audit` study measures it.",
        "",
    ]
    if full is not None:
        total = int(full["runs"])
        held = med[(med["region"] == "held-out") | ((med["region"] == "observed") & (med.index >= n))]
        held = held[np.isfinite(held["covers_all"])]
        covered = int(held["covers_all"].sum())
        miss = held[held["covers_all"] == 0]
        lines += [
            f"**Held-out check.** The {_lvl(level)} band extrapolated from the first {n:,} runs covers the median "
            f"tuning curve of all {total:,} runs (nonparametric) at **{covered} of {len(held)}** budgets k = {n:,}..{total:,}"
            + (
                f"; it misses at k = {', '.join(f'{int(k):,}' for k in miss.index[:6])}"
                + (" ..." if len(miss) > 6 else "")
                if len(miss)
                else ""
            )
            + "."
        ]
        lines += [
            f"Fitted to all {total:,} runs (not bootstrapped): {best} = {_g(full[best], 5)}, c = {int(full['c'])}, "
            f"o = {_g(full['o'], 3)}. " + _agreement_sentence(full, level),
            *_law_warnings(full, opts, check_c=False),
            "",
        ]
    else:
        lines += [_agreement_sentence(fit, level), ""]
    return lines


def _misfits(fit, level: float) -> list[str]:
    """Why the law does not describe the scores it was fitted to (empty when nothing says so)."""
    reasons = []
    if fit.get("np_outside", 0) > 0:
        reasons.append(
            f"its median curve leaves the nonparametric {_lvl(level)} band of the scores at {int(fit['np_outside'])} "
            f"of the budgets k = {_checked_range(fit)} (first at k = {int(fit['np_first_outside']):,})"
        )
    p = fit.get("p_best_at_most_observed", np.nan)
    tail = (1.0 - level) / 2.0
    convex = bool(fit.get("convex", False))  # minimize=true: the best is the lowest score
    observed = fit["min_score"] if convex else fit["max_score"]
    better = "below" if convex else "above"
    if np.isfinite(p) and p < tail:
        reasons.append(
            f"its median curve at k = n = {int(fit['runs']):,} is {_g(fit['median_at_n'], 4)}, {better} the best score "
            f"of the {int(fit['runs']):,} runs ({_g(observed, 4)}): the law gives the best of n runs only "
            f"a chance of {_chance(p)} to score {'that high' if convex else 'that low'}"
        )
    elif np.isfinite(p) and p > 1.0 - tail:
        reasons.append(
            f"the best of the {int(fit['runs']):,} runs ({_g(observed, 4)}) is {better} what the law allows: it "
            f"gives the best of n runs a chance of only {_chance(1.0 - p)} to score {'that low' if convex else 'that high'} "
            f"(its median curve at k = n: {_g(fit['median_at_n'], 4)})"
        )
    return reasons


def misfit_banner(fits: pd.DataFrame, level: float) -> list[str]:
    """The top of ``EXTRAPOLATE.md``: per fit the law does not describe, a plain "do not extrapolate" and why.

    The law does not describe a model's scores when its median curve leaves the nonparametric simultaneous
    band anywhere in k = 1..n, or when the best of n runs under the law would beat (or fall short of) the
    observed best with probability beyond the level's tails (``F(max)^n`` below ``(1 - level) / 2`` or above
    ``1 - (1 - level) / 2``). The CLI prints the same lines.

    Parameters
    ----------
    fits : pandas.DataFrame
        ``fit.csv`` of :func:`simstudy.extrapolate.run` (its ``np_outside``, ``np_checked``,
        ``np_first_outside``, ``median_at_n``, ``p_best_at_most_observed``, ``max_score``, ``runs``,
        ``total_runs``, ``model`` columns).
    level : float
        The bands' level, in (0, 1).

    Returns
    -------
    list of str
        A Markdown quote and a blank line per fit that misfits; empty when the law describes every one.

    Examples
    --------
    >>> fits = pd.DataFrame({"model": ["mlp"], "runs": [512], "total_runs": [512], "np_outside": [0],
    ...     "np_checked": [512], "np_first_outside": [np.nan], "median_at_n": [0.7677],
    ...     "p_best_at_most_observed": [1e-6], "max_score": [0.7489]})
    >>> print(misfit_banner(fits, 0.95)[0])  # doctest: +NORMALIZE_WHITESPACE
    > **The law does not describe the scores of mlp: do not extrapolate these scores.** The fitted law: its
    median curve at k = n = 512 is 0.7677, above the best score of the 512 runs (0.7489): the law gives the best
    of n runs only a chance of less than 1 in 10,000 to score that low.
    >>> misfit_banner(fits.assign(p_best_at_most_observed=0.3), 0.95)
    []
    """
    lines = []
    for _, row in fits.iterrows():
        reasons = _misfits(row, level)
        if not reasons:
            continue
        whose = (
            f"the first {int(row['runs']):,} runs of {row['model']}"
            if row["total_runs"] > row["runs"]
            else f"all {int(row['runs']):,} runs of {row['model']}"
            if (fits["model"] == row["model"]).sum() > 1
            else row["model"]
        )
        lines += [
            f"> **The law does not describe the scores of {whose}: do not extrapolate these scores.** The fitted "
            f"law: {'; '.join(reasons)}.",
            "",
        ]
    return lines


def _chance(p: float) -> str:
    """A probability in words: '11%', 'less than 1 in 10,000' (two digits: it is a judgement, not a datum)."""
    return "less than 1 in 10,000" if p < 1e-4 else f"{100 * p:.2g}%"


def _best_against_observed(fit) -> str:
    """The law's best score possible against the best observed score, in words: the law's best is the noise-free
    best (b; a for a convex law, minimize=true), and an observed score includes run-to-run noise."""
    convex = bool(fit.get("convex", False))
    name, observed = ("a", fit["min_score"]) if convex else ("b", fit["max_score"])
    value = fit[name]
    if (value > observed) if convex else (value < observed):
        return (
            f"It is {'above' if convex else 'below'} the best observed score ({_g(observed, 5)}): {name} is the best "
            f"of the noise-free law, and an observed score adds run-to-run noise (o = {_g(fit['o'], 3)}), so the "
            f"luckiest runs {'go below' if convex else 'exceed'} it; {name} is what the best configuration scores "
            "on average."
        )
    return (
        f"The best observed score is {_g(observed, 5)}: {name} is the best of the noise-free law (what the best "
        f"configuration scores on average), so more search can approach {name} but single runs also vary by the "
        "noise."
    )


def _law_warnings(fit, opts, *, check_c: bool = True) -> list[str]:
    """Bullets for a fitted c at the edge of the values searched and a beyond the scale's floor."""
    out = []
    c, c_min, c_max = int(fit["c"]), fit.get("c_min", np.nan), fit.get("c_max", np.nan)
    if check_c and np.isfinite(c_max) and c_min < c_max and (c == c_max or (c == c_min and c_min > 1)):
        out.append(
            f"- **Warning: c = {c} is at the edge of the values searched ({int(c_min)}..{int(c_max)})**: the best c "
            "may lie beyond it, and b and the extrapolation with it; widen `c=` to check."
        )
    if fit.get("beyond_scale", False):
        low, high = opts.data.low, opts.data.high
        out.append(
            f"- **Warning: a = {_g(fit['a'], 4)} lies below the scale's floor ({low:g})**: no score can, so the "
            "quadratic basin fitted to the tail does not describe the rest of the search space."
            if fit["a"] < low
            else f"- **Warning: b = {_g(fit['b'], 4)} lies above the scale's top ({high:g})**: no score can, so the "
            "quadratic basin fitted to the tail does not describe the rest of the search space."
        )
    return out


def _beyond_bounds(curves: pd.DataFrame, model: str, runs: int, low: float, high: float) -> list[str]:
    """Where the law's predicted curves (estimates or bands) leave the scores' scale [low, high], in words.

    The noise term o of the law is unbounded, so the best of k runs under it passes any bound as k grows: a
    curve beyond ``high`` (below ``low`` with minimize=true) predicts scores no run can reach. The curves are
    not clipped (extrapolation.csv keeps the law's values, as fitted); the report and the terminal say from
    which k the values are to be read as capped at the bound. One sentence per side crossed.
    """
    mine = curves[(curves["model"] == model) & (curves["runs"] == runs)]
    out = []
    for side, key, bound, edge in (("above", "high", high, "upper"), ("below", "low", low, "lower")):
        if not np.isfinite(bound):
            continue
        parts = []
        for curve in ("median", "mean"):
            c = mine[mine["curve"] == curve].sort_values("k")
            if c.empty:
                continue
            beyond = (c["estimate"] > bound) if side == "above" else (c["estimate"] < bound)
            band = (c[edge] > bound) if side == "above" else (c[edge] < bound)
            if beyond.any():
                first = c[beyond].iloc[0]
                digits = 5  # enough digits to show the value past the bound (1.00002, not 1)
                while (
                    digits < 15 and (float(_g(first["estimate"], digits)) - bound) * (1 if side == "above" else -1) <= 0
                ):
                    digits += 1
                parts.append(
                    f"the {curve} curve from k = {_k_of(first['k'], runs)} ({_g(first['estimate'], digits)} there)"
                )
            elif band.any():
                parts.append(f"the {curve} curve's band from k = {_k_of(c[band].iloc[0]['k'], runs)}")
        if parts:
            out.append(
                f"the law predicts scores {side} {key}={bound:g}: {'; '.join(parts)}. Read the curves as capped at "
                f"{bound:g}: the noise term o is unbounded, so the law's best of k runs passes any bound as k grows "
                f"(extrapolation.csv keeps the law's values)"
            )
    return out


def _k_of(k: float, n: int) -> str:
    """A budget as a multiple of n where it is one (5n), else the number of runs."""
    k = int(k)
    return _multiple(k // n) if k % n == 0 else f"{k:,}"


def _checked_range(fit) -> str:
    """The budgets the agreement check judged, ``1..n``, or ``k0..n`` with why it starts at k0."""
    first, n = int(fit.get("np_first_checked", 1)), int(fit["np_checked"]) + int(fit.get("np_first_checked", 1)) - 1
    if first == 1:
        return f"1..{n:,}"
    return f"{first:,}..{n:,} (below k = {first:,} the median curve lies among the censored scores, not fitted)"


def _agreement_sentence(fit, level: float) -> str:
    """Where, within the data (every k = 1..n), the law's median curve lies inside the nonparametric band."""
    checked = int(fit.get("np_checked", 0))
    if not checked:
        return ""
    convex = bool(fit.get("convex", False))  # minimize=true: the band's lower side is the one that turns trivial
    outside = int(fit["np_outside"])
    trivial = fit["np_upper_trivial_from"]
    p = fit["p_best_at_most_observed"]
    side, other = ("lower", "above") if convex else ("upper", "below")
    above = (
        f" (from k = {int(trivial):,} on the band's {side} side is the scale's bound, so there it checks only "
        f"from {other}; the best observed score checks the rest, next)"
        if np.isfinite(trivial)
        else ""
    )
    observed = fit["min_score"] if convex else fit["max_score"]
    return (
        f"Within the data the fitted median curve lies inside the nonparametric {_lvl(level)} band at "
        f"{checked - outside:,} of the {checked:,} budgets k = {_checked_range(fit)}{above}"
        + (f"; it first leaves it at k = {int(fit['np_first_outside']):,}." if outside else ".")
        + f" At k = n = {int(fit['runs']):,} the law's median curve is {_g(fit['median_at_n'], 4)} against the best "
        f"observed score {_g(observed, 4)}: the law gives the best of n runs a chance of {_chance(p)} "
        f"to score {'at least' if convex else 'at most'} that. Beyond n, only the law speaks."
    )


def write_extrapolate(result, opts, source: str, out_dir: Path) -> Path:
    """Write ``extrapolation.png`` and the one-page ``EXTRAPOLATE.md`` of ``simstudy extrapolate``; return its path.

    For each model: the fitted law's parameters with their bootstrap intervals (b, the best score possible;
    c, the effective number of hyperparameters; the noise o; a), the threshold, a table of the predicted
    median and mean tuning curves at k = n, 2n, 5n, 10n, 100n with their bands beside the nonparametric band,
    the extrapolation's error in simulation from the fitted law, and (with held-out runs) the check against
    them. Both files are written atomically.

    Parameters
    ----------
    result : simstudy.extrapolate.Extrapolation
        The tidy results of :func:`simstudy.extrapolate.run` (``curves``, ``fits``, ``simulation``).
    opts : simstudy.config.ExtrapolateConfig
        The command's options (:func:`simstudy.config.parse_extrapolate`): ``threshold`` or
        ``threshold_score``, ``c``, ``n_boot``, ``level`` and ``method`` are reported.
    source : str
        The scores' name as the title shows it (a data set's name or the file's name).
    out_dir : pathlib.Path
        The run directory (it exists).

    Returns
    -------
    pathlib.Path
        ``out_dir / "EXTRAPOLATE.md"``.

    Raises
    ------
    OSError
        If a file cannot be written.

    References
    ----------
    Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM
    2025, arXiv:2510.02721.

    Examples
    --------
    ``simstudy extrapolate data=scores.csv`` calls this function. By hand (its figure alone takes about a
    second, so this example runs only the fit and the options, without the bootstrap and the page):

    >>> from simstudy import config, extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> x = NoisyQuadratic(0.5, 0.9, 3, 0.01).sample(40, rng=np.random.default_rng(0))
    >>> opts = config.parse_extrapolate({"data": "scores.csv", "n_boot": 2, "k_max": 100, "c": [3]})
    >>> analyses = extrapolate.prepare({"mlp": x}, opts, "scores.csv")
    >>> [(a.sample.model, a.sample.runs) for a in analyses]
    [('mlp', 40)]

    Then, in an empty directory ``out``::

        result = extrapolate.run(analyses, opts, out)
        print(write_extrapolate(result, opts, "scores.csv", out).read_text())
    """
    import matplotlib.pyplot as plt

    curves, fits, sims = result.curves, result.fits, result.simulation
    fig = plots.extrapolation_figure(curves, fits)
    io.save_figure(fig, out_dir / "extrapolation.png", dpi=130)
    plt.close(fig)
    worse = "above" if opts.data.minimize else "below"  # minimize=true: the highest scores are the worst, censored
    rule = (
        f"scores at or {worse} {opts.threshold_score:g} censored"
        if opts.threshold_score is not None
        else f"the {'highest' if opts.data.minimize else 'lowest'} {_pct(opts.threshold)} of each sample censored"
    )
    lines = [
        f"# Extrapolated tuning curves: `{source}`",
        "",
        "The noisy quadratic law of random search near the optimum (Lourie, He & Cho 2025) fitted to the tail of "
        f"each model's scores ({rule}; maximum product of spacings, c searched over "
        f"{', '.join(map(str, opts.c)) if opts.c else '1..10'}), extrapolated to k = {_g(curves['k'].max(), 6)} "
        f"search iterations. Intervals and bands: percentile, pointwise, from a parametric bootstrap of "
        f"{opts.n_boot} refits at {_lvl(opts.level)}; the nonparametric band beside them is simultaneous "
        f"({bands_label(opts.method)}) and exists only up to n. The extrapolation assumes the law holds past the "
        "data: the held-up numbers below are simulations from the fitted law, not a test of it.",
        "",
        "![extrapolation](extrapolation.png)",
        "",
    ]
    lines[2:2] = misfit_banner(fits, opts.level)
    for model in dict.fromkeys(fits["model"]):
        rows = fits[fits["model"] == model].sort_values("runs")
        fit = rows.iloc[0]
        full = rows.iloc[-1] if len(rows) > 1 else None
        lines += _extrapolate_section(fit, curves, sims, full, opts)
    lines += [
        "Files: `extrapolation.csv` (every budget k: median and mean curves with their bands, the nonparametric "
        "band, `inside_np` / `covers_all` flags), `fit.csv` (parameters, intervals, c's bootstrap shares), "
        "`simulation.csv` (the errors above, with MCSE), `chunks/` (the bootstrap's replicates: a rerun "
        "resumes), `run.json` (settings, timings, environment)."
    ]
    return _write_page(out_dir / "EXTRAPOLATE.md", lines)


def bands_label(method: str) -> str:
    from simstudy.stats.bands import METHOD_LABELS

    return METHOD_LABELS.get(method, method)
