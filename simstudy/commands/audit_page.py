"""The page of ``simstudy audit``: ``AUDIT.md`` and its figures ``fit.png``, ``coverage.png``, ``bootstrap.png``
and ``accuracy.png``.

=======================  =========================================================
:func:`write_page`       the figures and ``AUDIT.md`` of an audit's result
:func:`write_index`      the ``AUDIT.md`` of several models' audits: each one's verdict
:func:`describe_fit`     the fitted truth in words (bandwidth, how chosen, atoms)
:func:`kde_fit_figure`   a fitted distribution beside the scores (density and CDF)
=======================  =========================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simstudy import io
from simstudy.chart_style import legend, suptitle, theme
from simstudy.commands import _iid
from simstudy.commands._pages import atom_sentences, lvl, pct, write_page_atomically
from simstudy.stats.metrics import format_estimate
from simstudy.studies.band_coverage import band_coverage_figure
from simstudy.studies.bootstrap_coverage import bootstrap_coverage_figure
from simstudy.studies.evp_accuracy import evp_accuracy_figure

__all__ = ["write_page", "write_index", "describe_fit", "kde_fit_figure"]


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
    opts : simstudy.commands.audit.AuditConfig or None
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
    atoms = [f"atom at {a:.6g} ({pct(p)} of runs)" for a, p in shares]
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


def write_page(result, opts, scores: np.ndarray, out_dir: Path) -> Path:
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
    opts : simstudy.commands.audit.AuditConfig
        The audit's options (:func:`simstudy.commands.audit.parse`): ``confidence``, ``method``, ``target_k``,
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

    >>> from simstudy.commands import audit
    >>> opts = audit.parse({"data": "scores.csv", "sample_size": 20})
    >>> opts.confidence, opts.method, opts.target_k
    (0.8, 'ld_highest_density', 10)

    Then, for scores ``x`` (a 1-d array) and an empty directory ``out``::

        result = audit.run({"runs": x}, opts, out)
        print(write_page(result, opts, x, out).read_text())
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
        "fit": kde_fit_figure(pd.DataFrame({"score": scores}), _fit_curve(kde), title=title, atoms=atoms),
        "coverage": band_coverage_figure(result.coverage.summary),
        "bootstrap": bootstrap_coverage_figure(result.bootstrap.summary),
        "accuracy": evp_accuracy_figure(result.accuracy.summary, xscale="log"),  # n from 1 to the sample's size
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
        *_iid.page(opts.data, opts.model),  # whether the scores read as random search (issue 36)
        "",
        *[
            f"- {line}: the simulations draw them as they are."
            for line in atom_sentences(
                getattr(kde, "atoms", ()), getattr(kde, "shares", ()), scores, minimize=opts.data.minimize
            )
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
        f"**The {lvl(level)} `{method}` bands for the median tuning curve"
        + (" (of the minimum: lower is better)" if opts.data.minimize else "")
        + f" covered the whole curve (every k) in "
        f"{_share_of(row['estimate'], row['reps'])} of {int(row['reps']):,} simulated searches of {n} iterations "
        f"({lvl(_ci_level(result.coverage))} Clopper–Pearson interval "
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
    return write_page_atomically(out_dir / "AUDIT.md", lines)


def bands_section(page: str) -> str:
    """The "Confidence bands" section of an ``AUDIT.md`` (its Markdown, without heading and figure)."""
    return page.split("## Confidence bands")[1].split("![coverage]")[0].strip()


def write_index(pages: list[tuple[str, Path]], opts, out_dir: Path) -> Path:
    r"""Write the ``AUDIT.md`` of an audit of several models: per model, its warnings, its bands' verdict and a
    link to its own page (each model audited on its own, in its own directory).

    Parameters
    ----------
    pages : list of (str, pathlib.Path)
        Each model's name and its ``AUDIT.md`` (:func:`write_page`), in a directory below ``out_dir``.
    opts : simstudy.commands.audit.AuditConfig
        The audit's options (``data`` is named).
    out_dir : pathlib.Path
        The run directory (it exists).

    Returns
    -------
    pathlib.Path
        ``out_dir / "AUDIT.md"``.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.commands import audit
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = Path(tmp)
    ...     (out / "model=a").mkdir()
    ...     page = out / "model=a" / "AUDIT.md"
    ...     _ = page.write_text("# Audit\n## Confidence bands\n\n**Covered.**\n\n![coverage](coverage.png)\n")
    ...     print(write_index([("a", page)], audit.parse({"data": "s.csv"}), out).read_text().rstrip())  # doctest: +ELLIPSIS
    # Audit of tuning-curve analyses: 1 model
    <BLANKLINE>
    Scores: `s.csv`. Each model is audited on its own: its own fitted distribution, and simulated searches of its own size n. ...
    <BLANKLINE>
    ## Model `a`
    <BLANKLINE>
    **Covered.**
    <BLANKLINE>
    Its page: [model=a/AUDIT.md](model=a/AUDIT.md)
    """
    lines = [
        f"# Audit of tuning-curve analyses: {len(pages)} model{'s' * (len(pages) != 1)}",
        "",
        f"Scores: `{opts.data.data}`. Each model is audited on its own: its own fitted distribution, and simulated "
        "searches of its own size n. A warning of a model's page is repeated here.",
        "",
    ]
    for model, page in pages:
        text = page.read_text()
        link = page.relative_to(out_dir).as_posix()
        warnings = [line for line in text.splitlines() if line.startswith("> **Warning")]
        shown = model.replace("`", "'")  # inside a code span
        lines += [f"## Model `{shown}`", "", *warnings, *([""] if warnings else [])]
        lines += [bands_section(text), "", f"Its page: [{link}]({link})", ""]
    return write_page_atomically(out_dir / "AUDIT.md", lines)


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

    level = lvl(opts.confidence)
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
            f"- {est.upper()}: the {lvl(nominal)} percentile-bootstrap bands covered the mean curve in "
            f"{_share_of(b['estimate'].iloc[0], reps)} of rounds at k = 1 and {_share_of(last['estimate'], reps)} at "
            f"k = {n} ({lvl(ci_level)} Clopper–Pearson interval {_share_of(last['ci_low'], reps)}–"
            f"{_share_of(last['ci_high'], reps)}, "
            f"{int(last['reps']):,} rounds). "
        )
        if (b["ci_high"] < nominal).any():
            # The k cited: the largest whose coverage reads as the worst's, so that a worst of 59.9% at k = 511
            # after "60% at k = 512" is said at k = 512, not as a second k with the same number.
            low = _share_of(worst["estimate"], reps)
            k = max(int(k) for k, e in zip(b["k"], b["estimate"]) if _share_of(e, reps) == low)
            line += f"**These intervals cover {low} at nominal {lvl(nominal)} (k = {k:,}): do not use them at this n.**"
        elif (b["ci_low"] > nominal).all():
            line += "They cover more than nominal at every k (conservative)."
        else:
            line += "Consistent with their nominal level at every k."
        lines.append(line)
    return lines


def kde_fit_figure(
    scores: pd.DataFrame, curve: pd.DataFrame, *, title: str | None = None, atoms: pd.DataFrame | None = None
):
    """A fitted distribution beside the scores: histogram and fitted density (left), eCDF and fitted CDF (right).

    Atoms (point masses) of the fit, if any, are marked on both panels with their share of the mass.

    Parameters
    ----------
    scores : pandas.DataFrame
        The observed scores, column ``score`` (score units).
    curve : pandas.DataFrame
        The fit on a grid: columns ``x`` (score units), ``pdf`` (the continuous part's density) and ``cdf``
        (in [0, 1]; an atom's x appears twice: the CDF just left of its jump, then at it).
    title : str, optional, keyword-only
        The figure's title. Default None: "Boundary-corrected KDE fitted to the scores".
    atoms : pandas.DataFrame, optional, keyword-only
        The fit's atoms: columns ``value`` (score units) and ``share`` (probability mass in [0, 1]). Default
        None: no atoms.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: density (left) and CDF (right).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import pandas as pd
    >>> x = np.linspace(0.0, 1.0, 5)
    >>> scores = pd.DataFrame({"score": [0.2, 0.4, 0.5, 0.6, 0.8]})
    >>> fig = kde_fit_figure(scores, pd.DataFrame({"x": x, "pdf": np.ones(5), "cdf": x}), title="uniform fit")
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt  # simstudy.figures, imported above, chose the backend

    theme()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.9), layout="constrained")
    y = np.sort(scores["score"].to_numpy())
    atoms = atoms if atoms is not None and len(atoms) else None
    left.hist(y, bins="auto", density=True, color="0.75", edgecolor="white", label="scores (histogram)")
    left.plot(
        curve["x"],
        curve["pdf"],
        color="C0",
        lw=1.6,
        label="fitted density" + (" (continuous part)" if atoms is not None else ""),
    )
    right.step(y, np.arange(1, y.size + 1) / y.size, where="post", color="0.4", label="empirical CDF of the scores")
    right.plot(curve["x"], curve["cdf"], color="C0", lw=1.4, label="fitted CDF")
    if atoms is not None:
        for i, (value, share) in enumerate(zip(atoms["value"], atoms["share"])):
            label = "atoms (point masses: share of runs at exactly that score)" if i == 0 else None
            left.axvline(value, color="C3", ls="--", lw=1.2, label=label)
            # Each label a row lower than the last: atoms a few resolution steps apart would overprint.
            left.annotate(
                f"{100 * share:.1f}% at {value:.4g}",
                (value, 0.95 - 0.1 * (i % 6)),
                xycoords=("data", "axes fraction"),
                color="C3",
                fontsize=7,
                ha="left",
                va="top",
                xytext=(2, 0),
                textcoords="offset points",
            )
            at = curve[curve["x"] == value]["cdf"].to_numpy()
            right.vlines(value, at.min(), at.max(), color="C3", lw=2.0, label=label)
    left.set_xlabel("score")
    left.set_ylabel("density")
    right.set_xlabel("score")
    right.set_ylabel("cumulative probability")
    # One legend below both panels: inside either, it hid the density's peak or the CDF's rise.
    named = set(left.get_legend_handles_labels()[1])
    extra = [h for h, lb in zip(*right.get_legend_handles_labels()) if lb not in named]
    legend(fig, left, extra, loc="outside lower center", ncols=2, fontsize=7)
    suptitle(fig, title or "Boundary-corrected KDE fitted to the scores")
    return fig
