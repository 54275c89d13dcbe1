"""Whether the scores can be read as random search: the words every data command says of its data (issue 36).

Every number of ``simstudy curve``, ``bands``, ``audit`` and ``extrapolate`` assumes each model's scores are i.i.d.
draws, as random search makes them. Reading the data (:func:`simstudy.datasets.read_data`) checks each model twice:
what the source records of how its trials were proposed (its provenance; "not recorded" is no proof), and
:func:`simstudy.stats.exchangeability.order_test` on the scores in trial order (the file's order for a score file
or a shipped set). The commands say the result in one place each, with these two functions: :func:`lines` on the
terminal, :func:`page` near the top of their Markdown page. Scores given as arrays (from Python) were not read, so
there is nothing to say: both return ``[]``.

==================  ========================================================================================
name                what
==================  ========================================================================================
:func:`lines`       one terminal line per model: provenance, the order test's p-value and what it means
:func:`page`        the page's paragraph: the same per model, and, when a model is not random search, what the
                    curve then means and what to do
==================  ========================================================================================
"""

from __future__ import annotations

from typing import Any

__all__ = ["lines", "page"]

#: What the curve means, and what to do, when the trials are not random search (said once, on every page).
NOT_RANDOM = (
    "The numbers here then describe resampling these particular trials, not what another search of n trials would "
    "give. To compare models, tune them under random search (a random sampler), or read these numbers as a "
    "description of the trials you have."
)


def _checks(data: Any, model: str | None) -> list:
    found = getattr(data, "found", None)
    if found is None:
        return []
    return [c for c in found.checks if model is None or c.model == model]


def _order(check) -> str:
    return "the file's order" if check.order_by == "file order" else f"{check.order_by} order"


def _test(check) -> str:
    if check.pvalue is None:
        return check.meaning
    return f"order test on {check.n} scores in {_order(check)}: {check.meaning}"


def _verdict(check) -> str:
    """The order test in a few words for the terminal (the page has its whole meaning)."""
    if check.pvalue is None:
        return check.meaning
    if check.meaning.startswith("Too few"):  # no order of so few trials is rare enough to be flagged
        said = "too few trials to tell"
    else:
        said = "later trials score better" if check.pvalue <= 0.05 else "no sign that later trials score better"
    return f"order test on {check.n} scores in {_order(check)}: p = {check.pvalue:.2g}, {said}"


def _sampler(check) -> str:
    """What the source records of its sampler, for the terminal: "sampler not recorded" said short."""
    recorded = [fact for fact in check.provenance if "not recorded" not in fact]
    return "; ".join(recorded) if recorded else "sampler not recorded"


def lines(data: Any, model: str | None = None) -> list[str]:
    """The terminal's lines of the i.i.d. check: one per model (or the one ``model``), after the command's own.

    Parameters
    ----------
    data : simstudy.commands._data.DataConfig
        The data, as read (its ``found``; None: scores given as arrays, nothing to say).
    model : str or None, default None
        Only this model's line (an audit page of one model of several).

    Returns
    -------
    list of str
        ``"i.i.d. check, MODEL: ..."`` per model; empty when the data was not read.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> from simstudy.datasets import read_data
    >>> data = curve.parse({"data": "reuters_hedwig", "model": "mlp"}).data
    >>> lines(data)
    []
    >>> import dataclasses
    >>> _, found = read_data(data)
    >>> print(lines(dataclasses.replace(data, found=found))[0])
    i.i.d. check, mlp: order test on 145 scores in the file's order: p = 0.77, no sign that later trials score better; sampler not recorded
    """
    out = []
    for check in _checks(data, model):
        left = f" (left out: {check.left_out})" if check.left_out else ""
        warning = " -- not random search: see the page" if check.not_random else ""
        out.append(f"i.i.d. check, {check.model}{left}: {_verdict(check)}; {_sampler(check)}{warning}")
    return out


def page(data: Any, model: str | None = None) -> list[str]:
    """The page's paragraphs of the i.i.d. check (Markdown), for the top of ``CURVE.md``, ``BANDS.md``, ...

    Parameters
    ----------
    data : simstudy.commands._data.DataConfig
        The data, as read (its ``found``; None: scores given as arrays, nothing to say).
    model : str or None, default None
        Only this model (an audit page of one model of several).

    Returns
    -------
    list of str
        A heading paragraph, one bullet per model, and when a model is not random search a warning of what the
        numbers then mean and what to do; each paragraph preceded by an empty line (to follow the page's last
        paragraph). Empty when not read.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> page(curve.parse({"data": "scores.csv"}).data)
    []
    """
    checks = _checks(data, model)
    if not checks:
        return []
    out = [
        "",
        "**Random search?** These numbers assume each model's scores are i.i.d. draws of random search. What the "
        f"data says ({data.found.direction}):",
        "",
    ]
    for check in checks:
        left = f"; left out, not complete: {check.left_out}" if check.left_out else ""
        shown = check.model.replace("`", "'")  # inside a code span
        out.append(f"- `{shown}` ({check.n} scores{left}): {'; '.join(check.provenance)}. {_test(check)}")
    flagged = [c.model.replace("`", "'") for c in checks if c.not_random]
    if flagged:
        out += ["", f"> **Not random search: {', '.join(f'`{m}`' for m in flagged)}.** {NOT_RANDOM}"]
    return out
