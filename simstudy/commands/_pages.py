"""What the pages of ``simstudy audit`` and ``simstudy extrapolate`` share: plain words for the terminal, atoms
said in words, levels and numbers as typed, and the atomic page writer.

====================  =======================================================================================
:func:`plain`         a page's Markdown for a terminal (bold markers dropped)
:func:`atom_notes`    per model, the values many runs share exactly, in plain words
``command_page``      ``simstudy curve``'s and ``bands``' page (CURVE.md, BANDS.md)
``save_figures``      a command's figures saved in each format and closed
:func:`saved_run`     a data command's settings and tables, read back from its run directory for its chart
``has_columns``       whether a table read back has the columns its chart draws
====================  =======================================================================================
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from simstudy import io
from simstudy.schema import ConfigError
from simstudy.stats.metrics import format_number

__all__ = ["plain", "atom_notes", "saved_run"]


def pct(x: float) -> str:
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


def atom_notes(scores: dict, *, minimize: bool = False) -> list[str]:
    """Per model, in plain words, the values that many runs share exactly (failed or chance-level runs).

    The values are :func:`simstudy.stats.kde.find_atoms`'s (repeated beyond what a continuous score recorded at the
    data's resolution allows), as the audit fits them; ``curve``, ``bands`` and ``extrapolate`` say the same.

    Parameters
    ----------
    scores : dict of str to array_like of float
        Each model's scores (score units).
    minimize : bool, optional, keyword-only
        Lower scores are better (losses): an atom above the others' median is the failed runs; default False.

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
    >>> atom_notes({"mlp": 1 - x}, minimize=True)  # a loss: the failed runs are the highest scores
    ['mlp: 32% of the runs scored exactly 0.999, which looks like failed or chance-level runs']
    """
    from simstudy.stats.kde import find_atoms

    lines = []
    for model, x in scores.items():
        x = np.asarray(x, dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size < 2:
            continue
        atoms = find_atoms(x)
        lines += [f"{model}: {line}" for line in atom_sentences(atoms.values, atoms.counts / x.size, x, minimize)]
    return lines


def atom_sentences(values, shares, x: np.ndarray, minimize: bool = False) -> list[str]:
    """'32% of the runs scored exactly 0.001, which looks like failed or chance-level runs', per atom."""
    return [
        f"{_share(p)} of the runs scored exactly {format_number(v, 6)}, {_atom_words(v, x, minimize)}"
        for v, p in zip(values, shares)
    ]


def _share(p: float) -> str:
    """A share of runs in whole percent (one decimal below 10%)."""
    return f"{100 * p:.1f}%" if p < 0.1 else f"{100 * p:.0f}%"


def _atom_words(value: float, x: np.ndarray, minimize: bool = False) -> str:
    """What an atom looks like: worse than most other scores (below them; above with minimize), failed or
    chance-level runs; else a repeated result."""
    from simstudy.stats.kde import worse_than_most

    if worse_than_most(value, x, minimize=minimize):
        return "which looks like failed or chance-level runs"
    return "which looks like one result repeated (a configuration rerun, or a score capped there)"


def write_page_atomically(path: Path, lines: list[str]) -> Path:
    """Write a report page atomically (a crash leaves the old page or none, never half of one)."""
    with io.atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return path


def lvl(x: float) -> str:
    """A level as it is typed: 95%, 99.5%, 99.99999% (never rounded to 100%: :g kept 6 digits)."""
    return f"{round(100 * x, 10):.15g}%"  # rounded: 100 * 0.9999999 is 99.99999000000001


def g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}" if np.isfinite(x) else "—"


def save_figures(figures: dict, out_dir: Path, suffixes=("png", "pdf"), *, dpi: int = 150) -> list[Path]:
    """Save each figure as ``out_dir/STEM.SUFFIX`` (every stem in one format, then the next format), then close
    them; return the files written, in that order."""
    import matplotlib.pyplot as plt

    written = []
    for suffix in suffixes:
        for stem, fig in figures.items():
            io.save_figure(fig, out_dir / f"{stem}.{suffix}", dpi=dpi)
            written.append(out_dir / f"{stem}.{suffix}")
    for fig in figures.values():
        plt.close(fig)
    return written


def command_page(path: Path, title: str, about: list[str], terminal: list[str], figures: list[str]) -> Path:
    """A data command's page (``CURVE.md``, ``BANDS.md``) for its ``report.html``: what was computed from which
    data, the terminal's summary as it was printed, and the figures (files beside it, embedded by the report).
    A user string (a file or model name) sits in a code span or block, where Markdown reads no markup."""
    lines = [f"# {title}", "", *about, "", "```text", *"\n".join(terminal).splitlines(), "```", ""]
    lines += [f"![{name}]({name})" for name in figures]
    return write_page_atomically(path, lines)


def saved_run(files, page: str, *tables: str, parse=None) -> tuple[Any, list] | None:
    """A data command's run directory as its ``report.html`` chart reads it: the settings it ran with and its
    tables, so that the chart is drawn from the same description as the command's PNG.

    Parameters
    ----------
    files : simstudy.report_safe.Files
        The directory's files, read as data and only where they are its own.
    page : str
        The command's page (``CURVE.md``): nothing is read where the directory lacks it.
    *tables : str
        The tables read (``curves.csv``, ...); the first must be there.
    parse : callable or None, optional, keyword-only
        The command's ``parse``: the settings are returned parsed by it, or, where it refuses them (a run of an
        older simstudy, a plug-in estimator gone), parsed from their ``data`` alone, so that the tables are
        drawn as saved. Default None: the settings as stored.

    Returns
    -------
    tuple of (object, list) or None
        ``run.json``'s settings (``{}`` where it has none; parsed with ``parse``) and each table as a frame (None:
        missing, refused, not a table); None without the page or the first table.

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.report_safe import Files
    >>> with tempfile.TemporaryDirectory() as d:
    ...     saved_run(Files(Path(d)), "CURVE.md", "curves.csv") is None  # neither page nor table there
    True
    """
    root = files.root
    if not (os.path.lexists(root / page) and os.path.lexists(root / tables[0])):
        return None
    settings = files.json(root / "run.json").get("config")
    settings = settings if isinstance(settings, dict) else {}
    # never through a link out of the directory, never a FIFO (Files refuses them)
    frames = [files.csv(root / table) if os.path.lexists(root / table) else None for table in tables]
    if parse is None:
        return settings, frames
    try:
        return parse(settings), frames
    except ConfigError:
        return parse({"data": settings.get("data") or "scores"}), frames


def has_columns(frame, columns) -> bool:
    """Whether a table read back (:func:`saved_run`; None where it was not) has every one of ``columns``."""
    return frame is not None and set(columns) <= set(frame.columns)
