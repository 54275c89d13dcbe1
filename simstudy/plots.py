"""Figures, drawn from tidy summary frames only (never from study internals).

Monte Carlo quantities are drawn with a band of +/- 1.96 MCSE (a 95% Monte Carlo interval); exact
quantities as plain lines.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; no display is assumed (CI, clusters)

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

__all__ = ["evp_accuracy_figure"]

_Z = 1.96


def _band(ax, frame: pd.DataFrame, label: str, color) -> None:
    frame = frame.sort_values("n")
    ax.plot(frame["n"], frame["estimate"], color=color, label=label, lw=1.6)
    ax.fill_between(frame["n"], frame["estimate"] - _Z * frame["mcse"], frame["estimate"] + _Z * frame["mcse"],
                    color=color, alpha=0.25, lw=0)


def evp_accuracy_figure(summary: pd.DataFrame, *, cell: str | None = None, title: str | None = None):
    """Mean, variance and MSE of each estimator against the budget n (Dodge et al. 2021, Figure 1).

    Parameters
    ----------
    summary : DataFrame
        The tidy summary of the ``evp_accuracy`` study (columns ``cell``, ``B``, ``estimator``, ``n``,
        ``measure``, ``estimate``, ``mcse``, ``reps``).
    cell : str, optional
        Which cell to draw; default the first.
    title : str, optional
        Figure title; default names the distribution, B and the replicate count.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels sharing the n axis: the mean of each estimator with the true expected maximum (top),
        the variance (middle) and the MSE (bottom), each with a 95% Monte Carlo band.
    """
    if cell is None:
        cell = summary["cell"].iloc[0]
    s = summary[summary["cell"] == cell]
    singles = [e for e in s["estimator"].unique() if e != "truth" and "-" not in e]
    palette = dict(zip(singles, sns.color_palette("colorblind", len(singles))))
    B, reps = int(s["B"].iloc[0]), int(s["reps"].max())

    sns.set_theme(style="whitegrid", context="paper")
    fig, axes = plt.subplots(3, 1, figsize=(5.0, 7.5), sharex=True, constrained_layout=True)
    truth = s[(s["estimator"] == "truth") & (s["measure"] == "expected_max")].sort_values("n")
    axes[0].plot(truth["n"], truth["estimate"], color="black", lw=1.2, ls="--", label="true EVP (exact)",
                 zorder=5)  # on top: the unbiased U runs right along it
    for panel, measure, ylabel in ((0, "mean", "expected value"), (1, "variance", "variance"),
                                   (2, "mse", "MSE")):
        for est in singles:
            rows = s[(s["estimator"] == est) & (s["measure"] == measure)]
            _band(axes[panel], rows, f"${est.upper()}_n^B$" if len(est) == 1 else est, palette[est])
        axes[panel].set_ylabel(ylabel)
    axes[0].legend(loc="lower right", frameon=True)
    axes[-1].set_xlabel("n (budget: number of trials)")
    axes[-1].set_xlim(truth["n"].min(), truth["n"].max())
    dist = s["distribution"].iloc[0] if "distribution" in s else ""
    fig.suptitle(title or f"{dist}, B = {B}, {reps:,} replicates (bands: 95% MC intervals)", fontsize=9)
    return fig
