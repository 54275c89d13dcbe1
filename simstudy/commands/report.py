"""``simstudy report run_dir=DIR``: (re)build the offline ``report.html`` of a run, sweep or command directory.

Every study run, sweep, ``simstudy audit`` and ``simstudy extrapolate`` writes its page itself; this command
rebuilds it (after a ``simstudy collect``, with a newer simstudy, or where a run was made before pages
existed). The page and what it holds are :mod:`simstudy.report_html`'s. Nothing in the directory is imported
or run: the summary, run.json, config.yaml and pages are read as data, the chunks verified by their checksums.

=================  ===========================================================================================
:func:`run`        build ``DIR/report.html``; refuses (one line) a directory with nothing to report
=================  ===========================================================================================
"""

from __future__ import annotations

from pathlib import Path

from simstudy.registry import Command
from simstudy.report_html import Report, build
from simstudy.report_safe import NotAReport
from simstudy.schema import ConfigError

__all__ = ["run"]


def run(run_dir: str | Path) -> Report:
    """Build ``report.html`` in ``run_dir`` from what it holds (:func:`simstudy.report_html.build`).

    Parameters
    ----------
    run_dir : str or path-like
        A finished run's directory (with ``summary.parquet``), a sweep's or design's, or a command's with its
        page (``AUDIT.md``, ``EXTRAPOLATE.md``, ``REPRODUCTION.md``).

    Returns
    -------
    simstudy.report_html.Report
        The page written, its chart and row counts, the chunks verified, its size and build time.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``run_dir`` is not a directory, has nothing to report, holds a ``report.html`` simstudy did not
        write (or one that is not a regular file), or its ``summary.parquet`` is a link out of it, a FIFO or
        not a parquet table; the one line names the key, the value and the fix. Nothing is written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     run(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: run_dir=...: no summary.parquet there (nor FIELD.md, AUDIT.md, EXTRAPOLATE.md, REPRODUCTION.md, CURVE.md, BANDS.md): give a finished run's directory (or a sweep's, after simstudy collect sweep_dir=...)
    """
    from simstudy.sweeps import headline  # pandas: not for --help

    try:
        return build(run_dir, headline=headline)
    except NotAReport as exc:
        raise ConfigError(str(exc)) from None


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "report",
    run=run,
    usage="simstudy report run_dir=DIR",
    examples=(
        "simstudy report run_dir=outputs/dodge2021_fig1/default",
        "simstudy report run_dir=outputs/multirun/dodge2021_fig1",
    ),
    writes="DIR/report.html: one self-contained page (no network) with the interactive charts, the sortable summary "
    "table and the run's provenance (config, versions, input hashes, chunks verified, failures)",
    keys={
        "run_dir": "a run's directory (summary.parquet), a sweep's or design's, or audit's/extrapolate's: "
        "report.html is written there (a report.html simstudy did not write is refused)",
    },
)
