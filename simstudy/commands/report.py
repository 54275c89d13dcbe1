"""``simstudy report run_dir=DIR``: (re)build the offline ``report.html`` of a run, sweep or command directory.

Every study run, sweep, ``simstudy audit`` and ``simstudy extrapolate`` writes its page itself; this command
rebuilds it (after a ``simstudy collect``, with a newer simstudy, or where a run was made before pages
existed). The page and what it holds are :mod:`simstudy.report_html`'s. Nothing in the directory is imported
or run: the summary, run.json, config.yaml and pages are read as data, the chunks verified by their checksums.

=================  ===========================================================================================
:func:`run`        build ``DIR/report.html``; refuses (one line) a directory with nothing to report
:func:`charts`     what the run's command charts of its directory (its spec's ``charts`` hook)
:func:`write`      build it after a command's run: a page that cannot be written is a warning
=================  ===========================================================================================

The page knows no command's files, and this module names no command's charts: each command describes its own
(:class:`simstudy.charts.Chart`, its spec's ``charts`` hook) and :func:`charts` asks the run's command for them;
``simstudy audit``'s studies (:data:`simstudy.commands.audit.STUDIES`) are charted as studies.
"""

from __future__ import annotations

import os
from pathlib import Path

from simstudy.registry import Command
from simstudy.report_html import Report, build, build_or_warn
from simstudy.report_safe import NotAReport
from simstudy.schema import ConfigError

__all__ = ["run", "execute", "lines", "failure", "charts", "write"]


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
    simstudy.schema.ConfigError: run_dir=...: no summary.parquet there (nor FIELD.md, CURVE.md, BANDS.md, AUDIT.md, EXTRAPOLATE.md, REPRODUCTION.md, nor a command's run.json): give a finished run's directory (or a sweep's, after simstudy collect sweep_dir=...)
    """
    try:
        return build(run_dir, **_handed(run_dir))
    except NotAReport as exc:
        raise ConfigError(str(exc)) from None


def write(run_dir: str | Path) -> Report | None:
    """Build ``report.html`` in a directory a command (or study) just wrote; a page that cannot be written is a
    warning naming the retry (``simstudy report run_dir=DIR``), never a failed run.

    Parameters
    ----------
    run_dir : str or path-like
        The run directory.

    Returns
    -------
    simstudy.report_html.Report or None
        The page written, or None (a warning said why).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write(d) is None  # nothing to report there: a warning, no page
    True
    """
    return build_or_warn(run_dir, **_handed(run_dir))


def execute(keys) -> Report:
    """``simstudy report run_dir=DIR``: :func:`run` on the command line's keys.

    Parameters
    ----------
    keys : Mapping
        ``run_dir`` (required).

    Returns
    -------
    simstudy.report_html.Report
        What :func:`run` returns.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     execute({"run_dir": d})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: run_dir=...: no summary.parquet there ...
    """
    return run(keys["run_dir"])


def lines(done: Report) -> list[str]:
    """What the terminal shows of the page written: its path, size and counts.

    Parameters
    ----------
    done : simstudy.report_html.Report
        From :func:`run`.

    Returns
    -------
    list of str
        One line.

    Examples
    --------
    >>> lines(Report(Path("r/report.html"), 2, 10, 4, (), 1_500_000, 0.1))
    ['wrote r/report.html (1.5 MB, 2 charts, 10 rows, 4 chunks verified)']
    """
    return [
        f"wrote {done.path} ({done.size / 1e6:.1f} MB, {done.charts} charts, {done.rows} rows, {done.chunks} chunks "
        f"verified)"
    ]


def failure(done: Report) -> str | None:
    """The stored chunks that failed their check, in one line (the command exits 1); None if none did.

    Parameters
    ----------
    done : simstudy.report_html.Report
        From :func:`run`.

    Returns
    -------
    str or None
        The line, naming the first damaged chunk.

    Examples
    --------
    >>> import types
    >>> failure(types.SimpleNamespace(damaged=("c0/1",)))
    '1 stored chunk(s) failed their check (the page lists them); first: c0/1'
    """
    if not done.damaged:
        return None
    return f"{len(done.damaged)} stored chunk(s) failed their check (the page lists them); first: {done.damaged[0]}"


def charts(files) -> list:
    """The charts a command draws of its run directory: its spec's ``charts`` hook
    (:attr:`simstudy.registry.Command.charts`), asked for the command the directory's ``run.json`` names.

    A directory whose ``run.json`` names no command (one made before run.json said which: curve's and bands'
    before issue 35; a hand-made one) asks every registered command's hook; each recognises its own directory
    by its page (``CURVE.md``, ``BANDS.md``, ``EXTRAPOLATE.md``) and draws nothing of another's.

    Parameters
    ----------
    files : simstudy.report_safe.Files
        The directory's files, read as data and only where they are its own.

    Returns
    -------
    list of simstudy.charts.Chart
        The charts (none for a directory no command charts).

    Examples
    --------
    >>> import tempfile
    >>> from simstudy.report_safe import Files
    >>> with tempfile.TemporaryDirectory() as d:
    ...     charts(Files(Path(d)))
    []
    """
    hooks = [spec.charts for spec in _specs(files)]
    return [chart for hook in hooks if hook is not None for chart in hook(files)]


def _specs(files) -> list:
    """The specs of the command the directory's ``run.json`` names; every registered command's where it names
    none (a directory from before run.json said which, or a hand-made one)."""
    from simstudy.registry import command, command_names

    names = command_names()
    named = files.json(files.root / "run.json").get("command")
    return [command(name) for name in ([named] if named in names else names)]


def _handed(run_dir) -> dict:
    """What the commands hand the page: the studies' headline, their charts and pages, an audit's studies."""
    from simstudy.commands.audit import STUDIES
    from simstudy.report_safe import Files
    from simstudy.sweeps import headline  # pandas: not for --help

    studies = STUDIES if os.path.lexists(Path(run_dir) / "AUDIT.md") else ()
    pages = tuple(spec.page for spec in _specs(Files(Path(run_dir))) if spec.page is not None)
    return {"headline": headline, "charts": charts, "studies": studies, "pages": pages}


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "report",
    run=execute,
    lines=lines,
    failure=failure,
    required=("run_dir",),
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
