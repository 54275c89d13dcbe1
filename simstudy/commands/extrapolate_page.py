"""The page of ``simstudy extrapolate``: ``EXTRAPOLATE.md``, its figure ``extrapolation.png`` and the lines the
command prints.

=============================  ============================================================================
:func:`write_page`             ``extrapolation.png`` and ``EXTRAPOLATE.md`` of an extrapolation's result
:func:`misfit_banner`          the page's "do not extrapolate" warnings, per fit the law does not describe
:func:`summary`                the terminal's lines: the warnings, b and c, the median curve at n and 100 n
:func:`extrapolation_chart`    each model's tuning curve extrapolated past its n runs: the PNG's and report's chart
=============================  ============================================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io
from simstudy.charts import Chart, Interval, Reference, View, json_value
from simstudy.commands._pages import g, lvl, pct, plain, write_page_atomically
from simstudy.figures import method_label
from simstudy.stats.metrics import format_estimate

__all__ = ["write_page", "misfit_banner", "summary", "extrapolation_chart"]


def _interval(lo: float, hi: float, digits: int = 4) -> str:
    return f"[{g(lo, digits)}, {g(hi, digits)}]"


def _c_shares(fit) -> str:
    shares = {int(col.rsplit("_", 1)[1]): fit[col] for col in fit.index if str(col).startswith("c_share_")}
    shown = [f"c = {c}: {pct(p)}" for c, p in sorted(shares.items(), key=lambda cp: -cp[1]) if p > 0]
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
        else f"o = {g(fit['o'], 3)} {_interval(fit['o_lower'], fit['o_upper'], 3)} (run-to-run noise SD)"
    )
    lines = [
        f"## {model}: fitted to {'the first ' if fit['total_runs'] > n else ''}{n:,} runs",
        "",
        f"- **{best}, the best score possible: {g(fit[best], 5)}**, {lvl(level)} interval "
        f"**{_interval(fit[f'{best}_lower'], fit[f'{best}_upper'], 5)}**. {_best_against_observed(fit)}",
        f"- **c, the effective number of hyperparameters: {int(fit['c'])}** (the bootstrap's fits chose "
        f"{_c_shares(fit)}).",
        *(f"- **Warning: {head}**{rest}" for head, rest in _warnings(fit, curves, level)),
        f"- {noise}; {other} = {g(fit[other], 4)} {_interval(fit[f'{other}_lower'], fit[f'{other}_upper'])}.",
        f"- Threshold {g(fit['threshold'], 5)} ({fit['rule']}): the {int(fit['n_tail'])} of {n:,} scores "
        f"{'below' if convex else 'above'} it fitted, the rest censored"
        + ("" if fit["converged"] else " (**the optimizer did not meet its tolerance**)")
        + "."
        + _threshold_sentence(fit, opts),
        f"- {_tail_sentence(fit, level)}",
        f"- Bootstrap: {int(fit['n_boot'])} replicates"
        + (f", {pct(fit['failed'])} of fits failed (left out)" if fit["failed"] > 0 else "")
        + ".",
        "",
    ]
    lines += [
        f"| k | median tuning curve ({lvl(level)} band) | mean tuning curve ({lvl(level)} band) | "
        f"nonparametric median ({lvl(level)} band) | error in simulation: mean abs. relative (± MCSE) |",
        "|---|---|---|---|---|",
    ]
    for m, row in sim.iterrows():
        k = row["k"]
        r = med.loc[k]
        mean = (
            f"{g(avg.loc[k, 'estimate'], 5)} {_interval(avg.loc[k, 'lower'], avg.loc[k, 'upper'], 5)}"
            if k in avg.index
            else "—"
        )
        nonpar = (
            f"{g(r['np_point'], 5)} {_interval(r['np_lower'], r['np_upper'], 5)}" if np.isfinite(r["np_point"]) else "—"
        )
        error = format_estimate(row["mean_abs_rel_error"], row["mean_abs_rel_error_mcse"], percent=True)
        lines.append(
            f"| {int(k):,} ({_multiple(int(m))}) | {g(r['estimate'], 5)} {_interval(r['lower'], r['upper'], 5)} "
            f"| {mean} | {nonpar} | {error} |"
        )
    R = int(sim["replicates"].iloc[0]) if len(sim) else 0
    worst = sim.loc[max(sim.index)] if len(sim) else None
    # what search gains, positive either way: a loss gains by falling (minimize=true: true(1) - true(k))
    gain, sign = ("true(1) − true(k)", -1.0) if convex else ("true(k) − true(1)", 1.0)
    lines += [
        "",
        f"**How far the extrapolation held up in simulation.** {R} searches of n = {n:,} runs simulated from the "
        f"fitted law (the bootstrap's replicates), each refitted by the same rule: the predicted median curve "
        f"erred at k = n by {_mean_error(sim.loc[1])} on average and at k = {_multiple(int(max(sim.index)))} by "
        f"{_mean_error(worst)} (90% of searches within {pct(worst['p90_abs_rel_error'])}; bias "  # type: ignore[index]  # None only if sim is empty, when sim.loc[1] has failed
        f"{format_estimate(worst['bias_rel'], worst['bias_rel_mcse'], percent=True)}), the relative error being "  # type: ignore[index]
        f"|predicted(k) − true(k)| / ({gain}): a share of what search gains over a single run's "
        f"median score ({gain} = {g(sign * worst['gain'], 3)} at {_multiple(int(max(sim.index)))}). This assumes the law holds; the "  # type: ignore[index]
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
            f"**Held-out check.** The {lvl(level)} band extrapolated from the first {n:,} runs covers the median "
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
            f"Fitted to all {total:,} runs (not bootstrapped): {best} = {g(full[best], 5)}, c = {int(full['c'])}, "
            f"o = {g(full['o'], 3)}. " + _agreement_sentence(full, level),
            *(f"- **Warning: {head}**{rest}" for head, rest in _warnings(full, curves, level, check_c=False)),
            "",
        ]
    else:
        lines += [_agreement_sentence(fit, level), ""]
    return lines


def _overshoot(fit, level: float) -> str:
    """The overshoot check in words, or "" when it passes: the law's band of the median best of n runs lies
    wholly beyond the best the n runs gave (above it; below with minimize=true). It fails whatever the p-value
    of the observed best: the law promises more than the data's own search delivered, and every prediction past
    n rests on that promise. When the two-sided check (:func:`_misfits`) already fails, it says so instead."""
    p = fit.get("p_best_at_most_observed", np.nan)
    if not fit.get("overshoots", False) or (np.isfinite(p) and p < (1.0 - level) / 2.0):
        return ""
    convex = bool(fit.get("convex", False))
    n, observed = int(fit["runs"]), fit["min_score"] if convex else fit["max_score"]
    better, worse = ("below", "this high or higher") if convex else ("above", "this low or lower")
    return (
        f"its median best of n = {n:,} runs, {g(fit['median_at_n'], 4)} ({lvl(level)} band "
        f"{_interval(fit['median_at_n_lower'], fit['median_at_n_upper'])}), lies wholly {better} the best score "
        f"the {n:,} runs gave ({g(observed, 4)}). If the law held, a best score {worse} would come up in "
        f"{_chance(p)} of searches of {n:,} runs (p = {p:.2g}): "
        + (
            "unusual, so the law likely overstates what search gains here"
            if p < 0.1
            else "not unusual by itself, but the law's own band excludes what the data gave"
        )
        + f". Every prediction past n rests on this law: read them as optimistic. ({_OVERSHOOT_FALSE_ALARMS})"
    )


#: How often the overshoot check fails when the law is true, measured on searches of c = 3 laws with 200
#: refits: 0 of 100 (n = 200, o = 0.01, c = 3 given), 0 of 100 (o = 0), 1 of 60 (n = 512, o = 0.005), 0 of 40
#: (n = 200, c searched 1..10); with 20 refits, whose bands are narrower, 9 of 120.
#: tests/commands/test_extrapolate_runs.py::test_overshoot_false_alarms_are_rare checks it (heavy lane).
_OVERSHOOT_FALSE_ALARMS = (
    "With the law true, this check failed in 1 of 300 simulated searches with 200 refits (about 1 in 13 with "
    "n_boot=20): it seldom fails by chance, but it is a sign, not a proof."
)


def _held_out_misses(fit) -> float:
    """The share of the held-out budgets where the band extrapolated from the first n runs misses the median
    curve of all of them (0 without held-out runs)."""
    checked, covered = fit.get("held_out_checked", np.nan), fit.get("held_out_covered", np.nan)
    return float((checked - covered) / checked) if np.isfinite(checked) and checked > 0 else 0.0


#: How often the held-out check misses when the law is true, measured: 60 searches of 300 runs of a c = 3 law
#: (o = 0.01), the first 48 extrapolated with 200 refits: 52 missed nowhere, 5 at up to half the budgets, 3 at
#: more (the bootstrap's pointwise bands cover less than their level, and the curve of all the runs varies too).
_HELD_OUT_BY_CHANCE = (
    "with the law true, 8 of 60 simulated searches missed somewhere and 3 of 60 at more than half the budgets"
)


def _held_out_words(fit, level: float) -> str:
    """Where the held-out band misses the median curve of all the runs, in words."""
    n, total = int(fit["runs"]), int(fit["total_runs"])
    first = fit.get("held_out_first_miss", np.nan)
    return (
        f"the {lvl(level)} band extrapolated from the first {n:,} runs covers the median tuning curve of all "
        f"{total:,} runs at only {int(fit['held_out_covered'])} of {int(fit['held_out_checked'])} budgets k = "
        f"{n:,}..{total:,}"
        + (f" (first missed at k = {int(first):,})" if np.isfinite(first) else "")
        + f" ({_HELD_OUT_BY_CHANCE})"
    )


def _misfits(fit, level: float) -> list[str]:
    """The failed checks that say the law does not describe the scores (empty when nothing says so).

    Its median curve leaves the nonparametric band within the data; the observed best is beyond the level's
    tails under the law; the held-out band misses the median curve of all the runs at more than half the
    budgets held out (missing at fewer is a warning, :func:`_warnings`); the law misfits the tail it was fitted
    to. (The overshoot check, :func:`_overshoot`, has its own line.)
    """
    reasons = []
    if fit.get("np_outside", 0) > 0:
        reasons.append(
            f"its median curve leaves the nonparametric {lvl(level)} band of the scores at {int(fit['np_outside'])} "
            f"of the budgets k = {_checked_range(fit)} (first at k = {int(fit['np_first_outside']):,})"
        )
    p = fit.get("p_best_at_most_observed", np.nan)
    tail = (1.0 - level) / 2.0
    convex = bool(fit.get("convex", False))  # minimize=true: the best is the lowest score
    observed = fit["min_score"] if convex else fit["max_score"]
    better = "below" if convex else "above"
    if np.isfinite(p) and p < tail:
        reasons.append(
            f"its median curve at k = n = {int(fit['runs']):,} is {g(fit['median_at_n'], 4)}, {better} the best score "
            f"of the {int(fit['runs']):,} runs ({g(observed, 4)}): the law gives the best of n runs only "
            f"a chance of {_chance(p)} to score {'that high' if convex else 'that low'}"
        )
    elif np.isfinite(p) and p > 1.0 - tail:
        reasons.append(
            f"the best of the {int(fit['runs']):,} runs ({g(observed, 4)}) is {better} what the law allows: it "
            f"gives the best of n runs a chance of only {_chance(1.0 - p)} to score {'that low' if convex else 'that high'} "
            f"(its median curve at k = n: {g(fit['median_at_n'], 4)})"
        )
    if _held_out_misses(fit) > 0.5:
        reasons.append(f"the held-out check failed: {_held_out_words(fit, level)}")
    d, crit = fit.get("tail_ks", np.nan), fit.get("tail_ks_critical", np.nan)
    if np.isfinite(d) and np.isfinite(crit) and d > crit:
        reasons.append(
            f"it misfits the tail it was fitted to: the {int(fit['n_tail']):,} scores "
            f"{'below' if convex else 'above'} the threshold lie {g(d, 2)} from the law (Kolmogorov–Smirnov "
            f"distance), beyond the {g(crit, 2)} a sample of the law itself exceeds with probability "
            f"{pct(1.0 - level)}"
        )
    return reasons


def misfit_banner(fits: pd.DataFrame, level: float, curves: pd.DataFrame | None = None) -> list[str]:
    """The top of ``EXTRAPOLATE.md``: every failed check and every warning, per fit, before anything else.

    Per fit the law does not describe, a plain "do not extrapolate" and why: its median curve leaves the
    nonparametric simultaneous band anywhere in k = 1..n; its band of the median best of n runs lies wholly
    beyond the best score the n runs gave (whatever the p-value: with the p-value said in words); the best of n
    runs under the law would beat (or fall short of) the observed best with probability beyond the level's
    tails (``F(max)^n`` below ``(1 - level) / 2`` or above ``1 - (1 - level) / 2``); the held-out band misses
    the median curve of all the runs at more than half the budgets held out; the law misfits the tail it was
    fitted to (KS). Then,
    with ``curves``, each warning of the body (c at the edge of its range, curves beyond the scale with their
    cause, an unstable fit) and the scale assumed for scores that look like accuracies. The CLI prints the
    same lines (:func:`summary`).

    Parameters
    ----------
    fits : pandas.DataFrame
        ``fit.csv`` of :func:`simstudy.extrapolation.run` (its ``np_outside``, ``np_checked``,
        ``np_first_outside``, ``median_at_n``, ``p_best_at_most_observed``, ``max_score``, ``runs``,
        ``total_runs``, ``model`` columns; ``overshoots``, ``median_at_n_lower``, ``median_at_n_upper``,
        ``held_out_*``, ``tail_ks*``, ``bounds_assumed`` where present).
    level : float
        The bands' level, in (0, 1).
    curves : pandas.DataFrame, optional
        ``extrapolation.csv`` (:attr:`~simstudy.extrapolation.Extrapolation.curves`): with it, the
        warnings too; default None (the failed checks only).

    Returns
    -------
    list of str
        Markdown quotes, each followed by a blank line; empty when every check passes and nothing warns.

    Examples
    --------
    >>> fits = pd.DataFrame({"model": ["mlp"], "runs": [512], "total_runs": [512], "np_outside": [0],
    ...     "np_checked": [512], "np_first_outside": [np.nan], "median_at_n": [0.7677],
    ...     "p_best_at_most_observed": [1e-6], "max_score": [0.7489]})
    >>> print(misfit_banner(fits, 0.95)[0])  # doctest: +NORMALIZE_WHITESPACE
    > **The law does not describe the scores of mlp: do not extrapolate these scores.** The fitted law: its
    median curve at k = n = 512 is 0.7677, above the best score of the 512 runs (0.7489): the law gives the best
    of n runs only a chance of less than 1 in 10,000 to score that low.

    A band of the median best of n wholly above the observed best fails, whatever the p-value:

    >>> over = fits.assign(p_best_at_most_observed=0.045, overshoots=True, median_at_n_lower=0.76,
    ...     median_at_n_upper=0.78)
    >>> print(misfit_banner(over, 0.95)[0])  # doctest: +NORMALIZE_WHITESPACE
    > **Failed check (mlp): the law promises more than the runs delivered.** The law: its median best of n =
    512 runs, 0.7677 (95% band [0.76, 0.78]), lies wholly above the best score the 512 runs gave (0.7489). If
    the law held, a best score this low or lower would come up in 4.5% of searches of 512 runs (p = 0.045):
    unusual, so the law likely overstates what search gains here. Every prediction past n rests on this law:
    read them as optimistic. (With the law true, this check failed in 1 of 300 simulated searches with 200
    refits (about 1 in 13 with n_boot=20): it seldom fails by chance, but it is a sign, not a proof.)
    >>> misfit_banner(fits.assign(p_best_at_most_observed=0.3), 0.95)
    []
    """
    lines = []
    for _, row in fits.iterrows():
        whose = _whose(fits, row)
        reasons = _misfits(row, level)
        if reasons:
            lines += [
                f"> **The law does not describe the scores of {whose}: do not extrapolate these scores.** The fitted "
                f"law: {'; '.join(reasons)}.",
                "",
            ]
        over = _overshoot(row, level)
        if over:
            lines += [
                f"> **Failed check ({whose}): the law promises more than the runs delivered.** The law: {over}",
                "",
            ]
        if curves is None:
            continue
        if _assumed(row) and row["runs"] == row["total_runs"]:  # once per model: its scale is every run's
            lines += [f"> **Scale assumed for {row['model']}:** {_scale_note(row)}", ""]
        check_c = bool(np.isfinite(row["b_lower"])) if "b_lower" in row else True
        for head, rest in _warnings(row, curves, level, check_c=check_c):
            lines += [f"> **Warning ({whose}): {head}**{rest}", ""]
    return lines


def _whose(fits: pd.DataFrame, row) -> str:
    """Which fit a line is about: the model, or which of its runs when it has two fits."""
    if row["total_runs"] > row["runs"]:
        return f"the first {int(row['runs']):,} runs of {row['model']}"
    if (fits["model"] == row["model"]).sum() > 1:
        return f"all {int(row['runs']):,} runs of {row['model']}"
    return str(row["model"])


def _scale_note(row) -> str:
    """The scale assumed for scores in [0, 1], in words."""
    return (
        f"its scores all lie in [0, 1], so they look like accuracies or rates: the checks take "
        f"{row['bounds_assumed']} (the fit and the nonparametric band use only the bounds given; give low= and "
        "high= to set the scale)."
    )


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
            f"It is {'above' if convex else 'below'} the best observed score ({g(observed, 5)}): {name} is the best "
            f"of the noise-free law, and an observed score adds run-to-run noise (o = {g(fit['o'], 3)}), so the "
            f"luckiest runs {'go below' if convex else 'exceed'} it; {name} is what the best configuration scores "
            "on average."
        )
    return (
        f"The best observed score is {g(observed, 5)}: {name} is the best of the noise-free law (what the best "
        f"configuration scores on average), so more search can approach {name} but single runs also vary by the "
        "noise."
    )


def _threshold_sentence(fit, opts) -> str:
    """Which scores the quantile threshold was taken among: failed runs (an atom worse than most scores) are set
    aside first, so that the tail fitted lies near the optimum, where the law holds."""
    failed, n = int(fit.get("failed_runs", 0) or 0), int(fit["runs"])
    if not failed or opts.threshold_score is not None:
        return ""
    return (
        f" The {failed:,} failed runs (an atom of scores worse than most of the others) were set aside before the "
        f"quantile: the threshold is the {pct(opts.threshold)} quantile of the other {n - failed:,} scores, "
        "since the law holds near the optimum."
    )


def _tail_sentence(fit, level: float) -> str:
    """The fit's quality in the tail it uses: the Kolmogorov-Smirnov distance beside its critical value."""
    d, crit = fit.get("tail_ks", np.nan), fit.get("tail_ks_critical", np.nan)
    if not (np.isfinite(d) and np.isfinite(crit)):
        return "Fit in the tail: not measured."
    verdict = (
        "**beyond it: the law misfits the tail it was fitted to**"
        if d > crit
        else "within it (the fitted parameters pull the distance down, so this rules out only a gross misfit)"
    )
    return (
        f"Fit in the tail: the {int(fit['n_tail']):,} scores fitted lie {g(d, 2)} from the law conditioned on the "
        f"tail (Kolmogorov–Smirnov distance); a sample of the law exceeds {g(crit, 2)} with probability "
        f"{pct(1.0 - level)}: {verdict}."
    )


def _warnings(fit, curves: pd.DataFrame, level: float, *, check_c: bool = True) -> list[tuple[str, str]]:
    """A fit's warnings, each as (headline, the rest): c at the edge of the values searched, the law's worst end
    beyond the scale, its curves beyond the scale (:func:`_beyond_bounds`), a held-out band that misses at up
    to half the budgets, an unstable fit. The page shows ``**Warning: headline**rest`` in its body and at its
    top; the terminal the same words."""
    out = []
    c, c_min, c_max = int(fit["c"]), fit.get("c_min", np.nan), fit.get("c_max", np.nan)
    if check_c and np.isfinite(c_max) and c_min < c_max and (c == c_max or (c == c_min and c_min > 1)):
        out.append(
            (
                f"c = {c} is at the edge of the values searched ({int(c_min)}..{int(c_max)})",
                ": the best c may lie beyond it, and b and the extrapolation with it; widen `c=` to check.",
            )
        )
    low, high = fit.get("low", -np.inf), fit.get("high", np.inf)
    if fit.get("beyond_scale", False):
        rest = (
            ": no score can, so the quadratic basin fitted to the tail does not describe the rest of the search "
            "space" + _assumed(fit, "low" if fit["a"] < low else "high") + "."
        )
        if fit["a"] < low:
            out.append((f"a = {g(fit['a'], 4)} lies below the scale's floor ({low:g})", rest))
        else:
            out.append((f"b = {g(fit['b'], 4)} lies above the scale's top ({high:g})", rest))
    out += [(f"{w}.", "") for w in _beyond_bounds(curves, fit["model"], int(fit["runs"]), low, high, fit)]
    if 0 < _held_out_misses(fit) <= 0.5:
        out.append(("the held-out band misses in places", f": {_held_out_words(fit, level)}."))
    convex = bool(fit.get("convex", False))
    best = "a" if convex else "b"
    if np.isfinite(fit[f"{best}_lower"]) and not fit[f"{best}_lower"] <= fit[best] <= fit[f"{best}_upper"]:
        out.append(
            (
                f"the fitted {best} lies outside its bootstrap interval",
                ": refits of samples from the fitted law land elsewhere, so the fit is unstable at this n (more "
                "runs, another threshold, or c= may help).",
            )
        )
    return out


def _assumed(fit, key: str = "") -> str:
    """The clause saying the scale was assumed (scores in [0, 1]), or nothing; with ``key`` ("low" or "high"),
    only when that bound was."""
    assumed = fit.get("bounds_assumed", "")
    if not isinstance(assumed, str) or not assumed or f"{key}=" not in assumed:
        return ""
    return f" ({assumed} assumed: the scores all lie in [0, 1], so they look like accuracies or rates)"


def _beyond_bounds(curves: pd.DataFrame, model: str, runs: int, low: float, high: float, fit=None) -> list[str]:
    """Where the law's predicted curves (estimates or bands) leave the scores' scale [low, high], in words, each
    with its cause.

    A curve beyond ``high`` (below ``low`` with minimize=true) predicts scores no run can reach. On the side of
    the best scores, the cause is the noise term o, unbounded, so the best of k runs passes any bound as k grows
    (or a best score possible beyond the bound, with o = 0); on the side of the worst, the law's worst end (a;
    b for a convex law) beyond the bound, the basin fitted to the tail extended past the scores censored (else
    the noise, at small k). Without ``fit`` (a row of fit.csv: ``a``, ``b``, ``o``, ``convex``) the cause is
    the noise. The curves are not clipped (extrapolation.csv keeps the law's values, as fitted); the report and
    the terminal say from which k the values are to be read as capped at the bound. One sentence per side
    crossed.
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
                    digits < 15 and (float(g(first["estimate"], digits)) - bound) * (1 if side == "above" else -1) <= 0
                ):
                    digits += 1
                parts.append(
                    f"the {curve} curve from k = {_k_of(first['k'], runs)} ({g(first['estimate'], digits)} there)"
                )
            elif band.any():
                parts.append(f"the {curve} curve's band from k = {_k_of(c[band].iloc[0]['k'], runs)}")
        if parts:
            out.append(
                f"the law predicts scores {side} {key}={bound:g}: {'; '.join(parts)}. Read the curves as capped at "
                f"{bound:g}: {_breach_cause(fit, side, key, bound)} (extrapolation.csv keeps the law's values)"
                + ("" if fit is None else _assumed(fit, key))
            )
    return out


def _breach_cause(fit, side: str, key: str, bound: float) -> str:
    """Why the law's curves cross ``bound`` on ``side`` ("above" or "below"), from its fitted parameters."""
    noise = "the noise term o is unbounded, so the law's best of k runs passes any bound as k grows"
    if fit is None:
        return noise
    convex = bool(fit.get("convex", False))
    end = "a" if side == "below" else "b"  # the law's end on that side (concave: a worst, b best; convex: swapped)
    value = float(fit[end])
    past = value < bound if side == "below" else value > bound
    worst = (side == "below") != convex  # the side of the worst scores, which the tail's fit does not see
    o = float(fit["o"])
    if worst:
        if past:
            return (
                f"the law's worst score {end} = {g(value, 4)} lies {side} {key}={bound:g}: the quadratic basin "
                "fitted to the tail, extended past the censored scores, puts the worst runs where no score can, "
                "and the curves at small k weigh those runs"
            )
        if o > 0:
            return (
                f"the noise term o = {g(o, 3)} is unbounded, so single runs under the law fall {side} the bound, "
                "which the curves at small k weigh"
            )
        return f"the bootstrap's refits put the law's worst score {end} {side} {key}={bound:g}"
    if past:
        return f"the law's best score possible {end} = {g(value, 4)} lies {side} {key}={bound:g}"
    if o > 0:
        return noise
    return f"the bootstrap's refits reach {side} {key}={bound:g} (the fit itself is noise-free, o = 0)"


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
        f"Within the data the fitted median curve lies inside the nonparametric {lvl(level)} band at "
        f"{checked - outside:,} of the {checked:,} budgets k = {_checked_range(fit)}{above}"
        + (f"; it first leaves it at k = {int(fit['np_first_outside']):,}." if outside else ".")
        + f" At k = n = {int(fit['runs']):,} the law's median curve is {g(fit['median_at_n'], 4)} against the best "
        f"observed score {g(observed, 4)}: the law gives the best of n runs a chance of {_chance(p)} "
        f"to score {'at least' if convex else 'at most'} that. Beyond n, only the law speaks."
    )


def summary(result, level: float) -> list[str]:
    """The lines ``simstudy extrapolate`` prints: first every failed check and warning of the page's top (the
    law does not describe the scores, its curves leave the scale, the scale assumed ...), then each fit's best
    score possible (b; a with minimize=true) and c, and its median curve at n, 10 n and 100 n.

    Parameters
    ----------
    result : simstudy.extrapolation.Extrapolation
        The command's result (its ``fits`` and ``curves``).
    level : float
        The bands' level, in (0, 1).

    Returns
    -------
    list of str
        Plain text lines (no Markdown).

    Examples
    --------
    >>> fits = pd.DataFrame({"model": ["mlp"], "runs": [2], "total_runs": [2], "np_outside": [0],
    ...     "np_checked": [2], "median_at_n": [0.8], "p_best_at_most_observed": [0.5], "max_score": [0.8],
    ...     "b": [0.9], "b_lower": [0.85], "b_upper": [0.95], "c": [2]})
    >>> curves = pd.DataFrame({"model": "mlp", "runs": 2, "curve": "median", "k": [2.0, 200.0],
    ...     "estimate": [0.8, 0.88], "lower": [0.78, 0.85], "upper": [0.82, 0.9]})
    >>> summary(type("R", (), {"fits": fits, "curves": curves})(), 0.95)
    ['mlp (2 runs): b = 0.9 [0.85, 0.95], c = 2; median curve k=2: 0.8 [0.78, 0.82]; k=200: 0.88 [0.85, 0.9]']
    """
    lines = []
    fits = result.fits
    for _, f in fits.iterrows():
        whose = _whose(fits, f)
        reasons = _misfits(f, level)
        if reasons:
            lines.append(
                f"The law does not describe the scores of {whose}: do not extrapolate these scores. The fitted "
                f"law: {'; '.join(reasons)}."
            )
        over = _overshoot(f, level)
        if over:
            lines.append(f"Failed check ({whose}): the law promises more than the runs delivered. The law: {over}")
        if _assumed(f) and f["runs"] == f["total_runs"]:
            lines.append(f"{f['model']}: {_scale_note(f)}")
        check_c = bool(np.isfinite(f["b_lower"]))
        lines += [
            f"{f['model']} ({int(f['runs']):,} runs): warning: {plain(head + rest)}"
            for head, rest in _warnings(f, result.curves, level, check_c=check_c)
        ]
    med = result.curves[result.curves["curve"] == "median"]
    for _, f in fits.iterrows():
        n = int(f["runs"])
        best = "a" if f.get("convex", False) else "b"  # minimize=true: the convex law's a is the best score
        rows = med[(med["model"] == f["model"]) & (med["runs"] == n)].set_index("k")
        at = [k for k in (n, 10 * n, 100 * n) if k in rows.index]
        curve = "; ".join(
            f"k={int(k):,}: {rows.loc[k, 'estimate']:.4g} [{rows.loc[k, 'lower']:.4g}, {rows.loc[k, 'upper']:.4g}]"
            for k in at
        )
        if not np.isfinite(f["b_lower"]):  # the fit of all the runs beside a held-out check: not bootstrapped
            curve = "; ".join(f"k={int(k):,}: {rows.loc[k, 'estimate']:.4g}" for k in at)
            lines.append(
                f"{f['model']} (all {n:,} runs, not bootstrapped): {best} = {f[best]:.5g}, c = {int(f['c'])}; "
                f"median curve {curve}"
            )
            continue
        lines.append(
            f"{f['model']} ({n:,} runs): {best} = {f[best] + 0.0:.5g} "  # + 0.0: the mirror of 0 prints 0, not -0
            f"[{f[f'{best}_lower'] + 0.0:.5g}, {f[f'{best}_upper'] + 0.0:.5g}], "
            f"c = {int(f['c'])}; median curve {curve}"
        )
    return lines


def write_page(result, opts, source: str, out_dir: Path) -> Path:
    """Write ``extrapolation.png`` and the one-page ``EXTRAPOLATE.md`` of ``simstudy extrapolate``; return its path.

    For each model: the fitted law's parameters with their bootstrap intervals (b, the best score possible;
    c, the effective number of hyperparameters; the noise o; a), the threshold, a table of the predicted
    median and mean tuning curves at k = n, 2n, 5n, 10n, 100n with their bands beside the nonparametric band,
    the extrapolation's error in simulation from the fitted law, and (with held-out runs) the check against
    them. Both files are written atomically.

    Parameters
    ----------
    result : simstudy.extrapolation.Extrapolation
        The tidy results of :func:`simstudy.extrapolation.run` (``curves``, ``fits``, ``simulation``).
    opts : simstudy.commands.extrapolate.ExtrapolateConfig
        The command's options (:func:`simstudy.commands.extrapolate.parse`): ``threshold`` or
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

    >>> from simstudy import extrapolation
    >>> from simstudy.commands import extrapolate
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> x = NoisyQuadratic(0.5, 0.9, 3, 0.01).sample(40, rng=np.random.default_rng(0))
    >>> opts = extrapolate.parse({"data": "scores.csv", "n_boot": 2, "k_max": 100, "c": [3]})
    >>> analyses = extrapolation.prepare({"mlp": x}, opts, "scores.csv")
    >>> [(a.sample.model, a.sample.runs) for a in analyses]
    [('mlp', 40)]

    Then, in an empty directory ``out``::

        result = extrapolation.run(analyses, opts, out)
        print(write_page(result, opts, "scores.csv", out).read_text())
    """
    import matplotlib.pyplot as plt

    from simstudy.charts import to_matplotlib

    curves, fits, sims = result.curves, result.fits, result.simulation
    chart = extrapolation_chart(curves, fits, title=f"{source}: extrapolated tuning curves")
    assert chart is not None  # the run's own table: every column, rows
    fig = to_matplotlib(chart)
    io.save_figure(fig, out_dir / "extrapolation.png", dpi=130)
    plt.close(fig)
    worse = "above" if opts.data.minimize else "below"  # minimize=true: the highest scores are the worst, censored
    rule = (
        f"scores at or {worse} {opts.threshold_score:g} censored"
        if opts.threshold_score is not None
        else f"the {'highest' if opts.data.minimize else 'lowest'} {pct(opts.threshold)} of each sample censored"
    )
    lines = [
        f"# Extrapolated tuning curves: `{source}`",
        "",
        "The noisy quadratic law of random search near the optimum (Lourie, He & Cho 2025) fitted to the tail of "
        f"each model's scores ({rule}; maximum product of spacings, c searched over "
        f"{', '.join(map(str, opts.c)) if opts.c else '1..10'}), extrapolated to k = {g(curves['k'].max(), 6)} "
        f"search iterations. Intervals and bands: percentile, pointwise, from a parametric bootstrap of "
        f"{opts.n_boot} refits at {lvl(opts.level)}; the nonparametric band beside them is simultaneous "
        f"({method_label(opts.method)}) and exists only up to n. The extrapolation assumes the law holds past the "
        "data: the held-up numbers below are simulations from the fitted law, not a test of it.",
        "",
        "![extrapolation](extrapolation.png)",
        "",
    ]
    lines[2:2] = misfit_banner(fits, opts.level, curves)
    from simstudy.commands import _iid

    lines[-3:-3] = _iid.page(opts.data)  # after the first paragraph: whether the scores read as random search
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
    return write_page_atomically(out_dir / "EXTRAPOLATE.md", lines)


def extrapolation_chart(curves: pd.DataFrame, fits: pd.DataFrame | None = None, *, title: str = "") -> Chart | None:
    """Each model's tuning curve extrapolated past its n runs (``simstudy extrapolate``), one panel per model: the
    chart of ``extrapolation.png`` and of its ``report.html``.

    Over every k (log scale): the fitted noisy quadratic law's median curve (dashed within the data, solid past n)
    with its parametric bootstrap band past n. With the fits (``fit.csv``), also: up to n, the nonparametric median
    tuning curve of the scores with its simultaneous band (shaded where both sides bound it, the lower side alone
    where the upper is trivial; clipped to the view); a vertical line at n, a grey range the interval for b (the
    best score possible) with b dotted, the best of the n runs as a short black bar at n; with held-out runs, the
    median curve of all N runs up to N and the law fitted to all N runs. Without them (a directory read back
    without fit.csv), each curve and fit the table has, with its band.

    Parameters
    ----------
    curves : pandas.DataFrame
        :attr:`simstudy.extrapolation.Extrapolation.curves` (``extrapolation.csv``), one row per model, runs
        fitted, k and curve. Read: ``model``, ``k`` (search iterations, >= 1), ``curve`` (with fits only
        ``"median"`` is drawn), ``estimate`` (score units), ``lower`` and ``upper`` (its pointwise bootstrap band),
        optionally ``runs``, ``np_point``, ``np_lower``, ``np_upper``, ``inside_np`` (NaN where the band is
        trivial), ``all_point`` (the median curve of all N runs) and ``level`` (default 0.95).
    fits : pandas.DataFrame, optional
        :attr:`simstudy.extrapolation.Extrapolation.fits` (``fit.csv``), one row per model and runs fitted; the
        row with the fewest runs is the extrapolated fit. Read: ``model``, ``runs`` (n), ``total_runs`` (N),
        ``b``, ``b_lower``, ``b_upper``, ``c``, ``o``, ``max_score``; with ``convex`` True (``minimize=true``)
        ``a``, ``a_lower``, ``a_upper``, ``min_score`` in b's place. Default None.
    title : str, optional, keyword-only
        The chart's title. Default "".

    Returns
    -------
    simstudy.charts.Chart or None
        The description; None when a column is missing or the table is empty.

    References
    ----------
    Lourie, N., He, H., & Cho, K. (2025). Hyperparameter loss surfaces are simple near their optima. COLM 2025,
    arXiv:2510.02721.
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024, arXiv:2311.09480.

    Examples
    --------
    >>> k = np.array([1.0, 2, 4, 8, 16])
    >>> est = 0.9 - 0.2 / k
    >>> within = np.where(k <= 4, 0.0, np.nan)  # the nonparametric curve stops at n = 4
    >>> curves = pd.DataFrame(
    ...     {"k": k, "estimate": est, "lower": est - 0.02, "upper": est + 0.02, "np_point": est + within,
    ...      "np_lower": est - 0.1 + within, "np_upper": est + 0.1 + within, "inside_np": 1.0 + within}
    ... ).assign(model="a", runs=4, curve="median", level=0.9)
    >>> fits = pd.DataFrame(
    ...     {"model": ["a"], "runs": [4], "total_runs": [4], "b": [0.9], "b_lower": [0.88], "b_upper": [0.93],
    ...      "c": [2], "o": [0.0], "max_score": [0.85]}
    ... )
    >>> chart = extrapolation_chart(curves, fits)
    >>> chart.facets, sorted({r["facet"][0] for r in chart.rows}), chart.xscale
    (('model',), ['a: fitted to 4 runs; b = 0.9 [0.88, 0.93]'], 'log')
    >>> [r.label for r in chart.references if r.label]
    ['b, the best score possible without noise: 90% interval', 'best of the 4 runs']
    >>> extrapolation_chart(curves.drop(columns="estimate")) is None
    True
    """
    need = {"model", "k", "curve", "estimate", "lower", "upper"}
    if not need <= set(curves.columns) or not len(curves):
        return None
    runs = curves["runs"] if "runs" in curves else pd.Series(np.nan, index=curves.index)
    known = fits is not None and {"model", "runs", "total_runs", "b", "b_lower", "b_upper", "c", "o"} <= set(fits)
    rows: list[dict] = []
    references: list[Reference] = []
    views: list[View] = []
    levels = curves["level"].dropna() if "level" in curves else pd.Series(dtype=float)
    level = float(levels.iloc[0]) if len(levels) else 0.95
    past, inside = "the law's curve past the n runs", "the law's curve within the n runs (dashed)"
    greys = {}

    def add(hue, c, value="estimate", band=True, style=None, facet=()):
        for k, est, lo, hi in zip(c["k"].tolist(), c[value].tolist(), c["lower"].tolist(), c["upper"].tolist()):
            if json_value(est) is None or json_value(k) is None or k <= 0:
                continue
            row = {"x": k, "estimate": est, "hue": hue, "shown": f"{est:.4g}", "facet": facet}
            if band and json_value(lo) is not None and json_value(hi) is not None:
                row.update(lo=lo, hi=hi, shown=f"{est:.4g} [{lo:.4g}, {hi:.4g}]")
            rows.append({**row, "style": style} if style else row)

    for model in dict.fromkeys(curves["model"]):
        mine = curves[curves["model"] == model].sort_values("k")
        fitted = fits[fits["model"] == model].sort_values("runs") if known else None  # type: ignore[index]
        if fitted is None or not len(fitted):  # the table alone: each curve and fit it has, with its band
            fit_runs = runs[mine.index]
            for (curve, n), c in mine.groupby([mine["curve"].astype(str), fit_runs.astype(str)], sort=False):
                add(f"{curve}, {n} runs" if n != "nan" else curve, c, facet=(str(model),))
            continue
        f = fitted.iloc[0]  # the extrapolated fit (the fewest runs)
        n, total = int(f["runs"]), int(f["total_runs"])
        best = "a" if f.get("convex", False) else "b"  # minimize=true: the convex law's a is the best score
        observed_best = f.get("min_score" if best == "a" else "max_score", np.nan)
        panel = (
            f"{model}: fitted to {n:,} runs; {best} = {f[best]:.4g} [{f[f'{best}_lower']:.4g}, {f[f'{best}_upper']:.4g}]",
        )
        c = mine[(runs[mine.index] == n) & (mine["curve"] == "median")]
        k = c["k"].to_numpy(dtype=float)
        within, beyond = k <= n, k >= n
        # The view: the curves, the parametric band and the b interval; the nonparametric band is clipped to it
        # (where it is wide or trivial -- at the bound, or infinite -- it runs off the view).
        shown = [c["estimate"], c.loc[beyond, ["lower", "upper"]].to_numpy().ravel()]
        shown += [[f[f"{best}_lower"], f[f"{best}_upper"], observed_best]]
        shown += [c.loc[within, col].to_numpy() for col in ("np_point", "all_point") if col in c]
        values = np.concatenate([np.asarray(v, dtype=float) for v in shown])
        values = values[np.isfinite(values)]
        span = (values.max() - values.min()) or 1.0
        bottom, top = values.min() - 0.08 * span, values.max() + 0.08 * span
        if {"np_point", "np_lower", "np_upper"} <= set(c):
            cw = c[within]
            # shaded where both sides bound the curve (inside_np is NaN where the band is trivial); beyond, the
            # lower side alone (a shade up to the edge of the view would be a rectangle)
            both = np.isfinite(cw["inside_np"]).to_numpy() if "inside_np" in cw else np.ones(len(cw), dtype=bool)
            hue = f"median tuning curve of the {n:,} runs (nonparametric; its band simultaneous, LD)"
            for kk, point, lo, hi, whole in zip(cw["k"], cw["np_point"], cw["np_lower"], cw["np_upper"], both):
                if json_value(point) is None:
                    continue
                row = {"x": kk, "estimate": point, "hue": hue, "facet": panel, "lo": float(np.clip(lo, bottom, top))}
                row["shown"] = f"{point:.4g} [{lo:.4g}, {hi:.4g}]"
                if whole:
                    row["hi"] = float(np.clip(hi, bottom, top))
                rows.append(row)
        law = f"fitted law's median curve (c = {int(f['c'])}, {'noise-free' if f['o'] == 0 else 'noisy'})"
        add(law, c[beyond], style=past, facet=panel)
        add(law, c[within], band=False, style=inside, facet=panel)
        if total > n and "all_point" in c:
            ca = c[np.isfinite(c["all_point"])]
            everything = f"median tuning curve of all {total:,} runs (nonparametric)"
            add(everything, ca, "all_point", band=False, facet=panel)
            ref = mine[(runs[mine.index] == total) & (mine["curve"] == "median")]
            refitted = f"law fitted to all {total:,} runs"
            add(refitted, ref, band=False, facet=panel)
            greys.update({everything: 0.0, refitted: 0.55})  # the check, beside the estimates: black and grey
            references.append(Reference(total, axis="x", grey=0.3, width=0.8, panel=panel))
        references += [
            Reference(
                f[f"{best}_lower"],
                to=f[f"{best}_upper"],
                grey=0.6,
                label=f"{best}, the best score possible without noise: {level:.0%} interval",
                panel=panel,
            ),
            Reference(f[best], grey=0.45, width=0.8, panel=panel),
            Reference(n, axis="x", grey=0.0, dash="dashed", width=0.9, note=f"n = {n:,}", panel=panel),
        ]
        if np.isfinite(observed_best):  # what the law's median at k = n is judged against
            references.append(
                Reference(
                    observed_best,
                    grey=0.0,
                    dash="solid",
                    width=2.5,
                    span=(n / 1.25, n * 1.25),
                    label=f"best of the {n:,} runs",
                    panel=panel,
                )
            )
        ylabel = f"median of the best{' (lowest)' * (best == 'a')} score of k runs"
        views.append(View(panel, x=(1.0, float(k.max()) if len(k) else 1.0), y=(bottom, top), ylabel=ylabel))
    return Chart(
        title,
        tuple(rows),
        x="k",
        xlabel="k (search iterations)",
        xscale="log",
        ylabel="best score of k runs",
        hue="curve",
        facets=("model",),
        panel_keys=False,
        interval=Interval(
            f"shaded: {level:.0%} bands (nonparametric up to n; the law's, bootstrap, pointwise, past n)"
            if known
            else "band"
        ),
        text="estimate [band]",
        styles="the law's median curve" if known else None,
        role="curve",
        columns=2,
        size=(420, 260),
        references=tuple(references),
        views=tuple(views),
        inches=(5.6, 4.4),
        legend_columns=1 if len(views) < 2 else 2,
        greys=tuple(greys.items()),
    )
