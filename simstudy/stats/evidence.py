"""Comparing two models' tuning-curve bands: Lourie et al.'s evidence heuristic, and where each curve leads.

=============================  ==========================================================================
name                           what it gives
=============================  ==========================================================================
:data:`EVIDENCE_LEVELS`        the levels, from none to strong
:func:`evidence`               the level and the leader at each budget, for two models' bands
:func:`leader_names`           which of two curves is higher at each point, by name
:func:`leader_summary`         one line: which curve is ahead over which runs of budgets
:func:`evidence_summary`       the evidence table (:func:`simstudy.tables.evidence_table`) in words
=============================  ==========================================================================

The bands are :class:`simstudy.stats.bands.TuningCurveBands` (duck-typed: ``ks``, ``point``, ``lower``,
``upper``), re-exported from :mod:`simstudy.stats.bands`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["EVIDENCE_LEVELS", "evidence", "leader_names", "leader_summary", "evidence_summary"]


#: Lourie et al.'s (tentative) heuristic for comparing two models' bands, from none to strong.
EVIDENCE_LEVELS = ("none", "weak", "fair", "strong")


def evidence(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Lourie et al.'s evidence heuristic at each budget, for two models' bands at the same ``ks``.

    Evidence is *weak* where one band excludes the other's point estimate, *fair* where each band excludes
    the other's, and *strong* where the bands do not overlap (Lourie et al. §2, after Minka 2002).

    Parameters
    ----------
    a : TuningCurveBands
        The first model's bands.
    b : TuningCurveBands
        The second model's bands, at the same budgets ``ks`` as `a`.

    Returns
    -------
    level : ndarray of str, shape (m,)
        One of :data:`EVIDENCE_LEVELS` per budget.
    leader : ndarray of int, shape (m,)
        +1 where ``a``'s point estimate is better (higher; lower for bands of the minimum, ``minimize``),
        -1 where ``b``'s is, 0 on a tie.

    Raises
    ------
    ValueError
        If `a` and `b` are not at the same budgets ``ks``, or only one of them is of the minimum.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: Confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> from simstudy.stats.bands import tuning_curve_bands
    >>> rng = np.random.default_rng(0)
    >>> a = tuning_curve_bands(rng.uniform(0.6, 0.9, size=20), 0.8, method="ks", ks=[1, 2, 4], low=0, high=1)
    >>> b = tuning_curve_bands(rng.uniform(0.5, 0.8, size=20), 0.8, method="ks", ks=[1, 2, 4], low=0, high=1)
    >>> level, leader = evidence(a, b)
    >>> level.tolist(), leader.tolist()
    (['weak', 'fair', 'weak'], [1, 1, 1])
    """
    if a.ks.shape != b.ks.shape or np.any(a.ks != b.ks):
        raise ValueError("the two bands must be evaluated at the same budgets ks")
    minimize = _minimize(a, b)
    a_excludes = (b.point < a.lower) | (b.point > a.upper)
    b_excludes = (a.point < b.lower) | (a.point > b.upper)
    apart = (a.lower > b.upper) | (b.lower > a.upper)
    level = np.where(
        apart, "strong", np.where(a_excludes & b_excludes, "fair", np.where(a_excludes | b_excludes, "weak", "none"))
    )
    return level, np.sign(b.point - a.point if minimize else a.point - b.point).astype(int)


def _minimize(a: Any, b: Any) -> bool:
    """Whether both bands are of the minimum (``minimize``; duck-typed bands without it maximise); refuses a
    mix, where "ahead" would mean opposite things for the two models."""
    mins = bool(getattr(a, "minimize", False)), bool(getattr(b, "minimize", False))
    if mins[0] != mins[1]:
        raise ValueError(f"one model's bands are of the minimum and the other's of the maximum (minimize={mins})")
    return mins[0]


def leader_names(a, b, name_a: str, name_b: str, *, minimize: bool = False) -> np.ndarray:
    """Which of two curves is higher (lower with `minimize`) at each point: ``name_a``, ``name_b``, ``"tie"``, or
    ``""`` where either is NaN (e.g. a point estimate beyond its sample size).

    Parameters
    ----------
    a, b : array_like of float, shape (m,)
        Two curves at the same budgets (score units; NaN where a curve has no value).
    name_a, name_b : str
        The curves' names, as they should appear in the result.
    minimize : bool, keyword-only, default False
        Whether lower is better (curves of the minimum): the lower curve leads, as the higher one of ``-a`` and
        ``-b`` does (the same names, since ``-a - -b`` is exactly ``-(a - b)``).

    Returns
    -------
    ndarray of object, shape (m,)
        At each budget ``name_a``, ``name_b``, ``"tie"`` or ``""``.

    Raises
    ------
    TypeError
        If `minimize` is not a bool.

    Examples
    --------
    >>> leader_names([0.5, 0.6, 0.7, np.nan], [0.6, 0.6, 0.6, 0.6], "a", "b").tolist()
    ['b', 'tie', 'a', '']
    >>> leader_names([0.5, 0.6, 0.7, np.nan], [0.6, 0.6, 0.6, 0.6], "a", "b", minimize=True).tolist()
    ['a', 'tie', 'b', '']
    """
    if not isinstance(minimize, (bool, np.bool_)):
        raise TypeError(f"minimize must be True or False, got {minimize!r}")
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    sign = np.sign(np.nan_to_num(b - a if minimize else a - b)).astype(int)
    names = np.array([name_b, "tie", name_a], dtype=object)[sign + 1]  # sign is -1, 0 or +1
    names[np.isnan(a) | np.isnan(b)] = ""
    return names


def leader_summary(k, leaders, what: str) -> str:
    """One line: which curve is ahead over which runs of budgets, e.g. ``"V: mlp ahead at k = 1..19, lstm at
    k = 20..25"`` (budgets with no verdict, ``""``, are left out).

    Parameters
    ----------
    k : array_like, shape (m,)
        Budgets, ascending.
    leaders : array_like of str, shape (m,)
        As :func:`leader_names` returns.
    what : str
        The line's label.

    Returns
    -------
    str
        ``"<what>: <leader> ahead at k = <run>, <other> at k = <run>, ..."``, or ``"<what>: no budget to
        compare"`` when every verdict is ``""``.

    Examples
    --------
    >>> leader_summary([1, 2, 3, 4], ["a", "a", "b", ""], "V")
    'V: a ahead at k = 1..2, b at k = 3'
    """
    k, leaders = np.asarray(k), np.asarray(leaders, dtype=object)
    keep = leaders != ""
    k, leaders = k[keep], leaders[keep]
    parts: list[str] = []
    start = 0
    for i in range(1, len(k) + 1):
        if i == len(k) or leaders[i] != leaders[start]:
            where = f"{k[start]:g}" if i - 1 == start else f"{k[start]:g}..{k[i - 1]:g}"
            who = leaders[start]
            parts.append(f"{'a tie' if who == 'tie' else who}{' ahead' * (not parts and who != 'tie')} at k = {where}")
            start = i
    return f"{what}: " + (", ".join(parts) if parts else "no budget to compare")


def _evidence_summary_iv(table):
    missing = [c for c in ("k", "evidence", "leader") if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"evidence table lacks column(s) {', '.join(missing)}: pass the frame evidence_table returns")
    return table


def evidence_summary(table) -> list[str]:
    """The evidence table in words: one line per run of budgets with the same level and leader.

    Parameters
    ----------
    table : pandas.DataFrame
        As returned by :func:`evidence_table` (columns ``k``, ``evidence``, ``leader``), sorted by ``k``.

    Returns
    -------
    list of str
        A header line explaining the levels, then e.g. ``"k = 1..48: strong evidence a is better"``;
        a run of a single budget reads ``"k = 3: ..."``.

    Raises
    ------
    ValueError
        If a column is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"k": [1.0, 2.0, 3.0, 4.0], "evidence": ["none", "weak", "weak", "strong"],
    ...                   "leader": ["a", "a", "a", "a"]})
    >>> for line in evidence_summary(t)[1:]:
    ...     print(line)
    k = 1: no evidence either way
    k = 2..3: weak evidence a is better
    k = 4: strong evidence a is better
    """
    table = _evidence_summary_iv(table)
    k, level, leader = table["k"].to_numpy(), table["evidence"].to_numpy(), table["leader"].to_numpy()
    lines, start = [], 0
    for i in range(1, len(table) + 1):
        if i == len(table) or (level[i], leader[i]) != (level[start], leader[start]):
            what = (
                "no evidence either way"
                if level[start] == "none"
                else f"{level[start]} evidence {leader[start]} is better"
            )
            where = f"{k[start]:g}" if i - 1 == start else f"{k[start]:g}..{k[i - 1]:g}"
            lines.append(f"k = {where}: {what}")
            start = i
    return [
        "evidence (Lourie et al.'s heuristic: weak = one band excludes the other's point estimate, fair = each "
        "does, strong = no overlap):",
        *lines,
    ]
