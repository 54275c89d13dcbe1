"""The data commands from a notebook: ``simstudy.curve``, ``bands``, ``audit`` and ``extrapolate`` on arrays.

Each function takes the scores themselves (a 1-d array: one model, named ``"model"``; or a mapping of model
name to array) and the command's keys as keyword arguments, with the same names, defaults and checks
(``simstudy curve --help`` lists them): a bad value is the command's one-line
:class:`~simstudy.schema.ConfigError`, naming the key and the value. The numbers are the command's: each function
calls the command's own ``parse`` and ``run`` (:mod:`simstudy.commands.curve`, ...). Nothing is written unless
asked: the result holds the command's tidy table (``.frame``), draws its figure (``.figure()``), renders its
page (``.to_html()``) and writes its files (``.write(out_dir)``).

=======================  ===========================================================================
name                     what
=======================  ===========================================================================
:func:`curve`            expected best score against the budget (``simstudy curve``)
:func:`bands`            simultaneous bands of the tuning curves and CDFs (``simstudy bands``)
:func:`audit`            how far the bands and estimators can be trusted at n (``simstudy audit``)
:func:`extrapolate`      the noisy quadratic law's extrapolation of the curve (``simstudy extrapolate``)
:class:`Analysis`        what each returns
=======================  ===========================================================================

The keys that read a file (``data``, ``score_column``, ``model_column``, ``missing``, ``scale``, ``split``,
``reduce``) are refused: the arrays are the data. ``model``/``models``, ``sample_size`` and ``sample_seed``
select from them as they select from a file. ``audit`` runs its studies through the runner in a directory: a
temporary one, removed afterwards, unless ``out_dir`` is given; its studies read the scores from a CSV written
there (``scores.csv``), as the command reads a file.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simstudy.charts import to_matplotlib
from simstudy.schema import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Analysis", "curve", "bands", "audit", "extrapolate"]

#: The keys of a data command that read a file: the arrays given are the data, so these are refused.
FILE_KEYS = ("data", "score_column", "model_column", "missing", "scale", "split", "reduce")
#: What the scores are called in titles and pages (the ``data`` the command would name).
SOURCE = "scores"


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a frame has no truth value to compare by
class Analysis:
    """What :func:`curve`, :func:`bands`, :func:`audit` and :func:`extrapolate` return: a command's result in memory.

    Build it through those functions (the constructor does not validate).

    Parameters
    ----------
    command : str
        The command: ``"curve"``, ``"bands"``, ``"audit"`` or ``"extrapolate"``.
    frame : pandas.DataFrame
        The tidy table the command writes: curves.csv, bands.csv, the audit's studies' summaries (one
        ``model`` and ``study`` per row block), extrapolation.csv.
    result : object
        The command's own result (:class:`~simstudy.commands.curve.CurveResult`,
        :class:`~simstudy.commands.bands.BandsResult`, a list of (model, scores, AuditResult) for the audit,
        :class:`~simstudy.extrapolation.Extrapolation`).
    config : object
        The command's parsed settings (:func:`simstudy.commands.curve.parse`, ...).
    _figure : callable
        ``_figure(which) -> Figure``: the command's own figure function on the result (:meth:`figure`).
    _write : callable
        ``_write(out_dir) -> list of Path``: the command's own ``write`` (:meth:`write` adds report.html).
    _html : str or None, default None
        The page already rendered (an audit whose studies' files were temporary); None: :meth:`to_html`
        renders it.

    Examples
    --------
    >>> import numpy as np
    >>> import simstudy
    >>> a = simstudy.curve(np.array([0.2, 0.4, 0.3]))
    >>> a.command, a.frame["expected_max"].round(4).tolist()
    ('curve', [0.3, 0.3444, 0.3667])
    """

    command: str
    frame: pd.DataFrame
    result: Any
    config: Any
    _figure: Callable[[str | None], Any] = field(repr=False)
    _write: Callable[[Path], list[Path]] = field(repr=False)
    _html: str | None = field(default=None, repr=False)  # the page, when it was built before its files went

    def figure(self, which: str | None = None):
        """The command's figure (the same function draws it for the command's files).

        Parameters
        ----------
        which : str, optional
            For ``bands``: ``"tuning_curve"`` (the default) or ``"cdf"``; for ``audit``: ``"coverage"`` (the
            default), ``"bootstrap"`` or ``"accuracy"`` (of the first model audited). Ignored otherwise.

        Returns
        -------
        matplotlib.figure.Figure
            A new figure (close it with ``matplotlib.pyplot.close``).

        Raises
        ------
        ValueError
            If `which` names no figure of the command.
        """
        return self._figure(which)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write the command's files into ``out_dir`` (created if missing), with its ``report.html``.

        Parameters
        ----------
        out_dir : str or pathlib.Path
            The directory; each file is written atomically (:mod:`simstudy.io`).

        Returns
        -------
        list of pathlib.Path
            The files written (the page and ``report.html`` last).
        """
        from simstudy.commands import report  # the page with the charts the commands hand it

        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = self._write(out_dir)
        return [*written, report.run(out_dir).path]

    def to_html(self) -> str:
        """The command's page as the offline HTML of its ``report.html``, written nowhere.

        Returns
        -------
        str
            A self-contained HTML document.
        """
        if self._html is not None:
            return self._html
        with tempfile.TemporaryDirectory(prefix="simstudy-") as tmp:
            return self.write(tmp)[-1].read_text(encoding="utf-8")


def _scores_iv(scores, low: float, high: float) -> dict[str, np.ndarray]:
    """``scores``: a 1-d array (the model ``"model"``) or a mapping of names to 1-d arrays of finite scores within
    [low, high], as float64 (an ndarray of float64 as it is: the command's own numbers)."""
    if isinstance(scores, Mapping):
        if not scores:
            raise ConfigError("scores is an empty mapping: give a 1-d array, or a mapping of model name to array")
        named = {str(m): x for m, x in scores.items()}
    else:
        named = {"model": scores}
    out = {}
    for model, x in named.items():
        what = "scores" if len(named) == 1 and not isinstance(scores, Mapping) else f"scores[{model!r}]"
        try:
            arr = x if isinstance(x, np.ndarray) and x.dtype == np.float64 else np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigError(f"{what} must be a 1-d array of numbers, got {type(x).__name__}") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ConfigError(f"{what} must be a non-empty 1-d array, got shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ConfigError(
                f"{what}[{bad[0]}] is {arr[bad[0]]}: every score must be a finite number (drop failed runs, or "
                f"give them the score they count as)"
            )
        outside = np.flatnonzero((arr < low) | (arr > high))
        if outside.size:
            raise ConfigError(
                f"{what}[{outside[0]}] = {arr[outside[0]]:g} is outside [low, high] = [{low:g}, {high:g}]"
            )
        out[model] = arr
    return out


def _options_iv(command: str, options: Mapping) -> dict:
    """The command's keys as a mapping for its parser, ``data`` the scores' name; a file's key is refused."""
    for key in FILE_KEYS:
        if key in options:
            raise ConfigError(
                f"{key}={options[key]!r} reads a file: simstudy.{command} takes the scores themselves; drop {key}= "
                f"(select, scale or clean the arrays before passing them)"
            )
    return {"data": SOURCE, **options}


def _prepared(command: str, scores, options: Mapping, parse):
    """The parsed settings and the scores the data keys keep (models, sample_size), checked."""
    from simstudy.datasets import select_scores

    config = parse(_options_iv(command, options))
    data = config.data
    return config, select_scores(_scores_iv(scores, data.low, data.high), data)


def curve(scores, **options) -> Analysis:
    """``simstudy curve`` on arrays: each model's expected best score against the tuning budget.

    Parameters
    ----------
    scores : array_like of float, shape (B,), or Mapping of str to array_like
        One model's scores (named ``"model"``), or each model's, in score units and random-search order.
    **options
        The keys of ``simstudy curve`` (:class:`~simstudy.commands.curve.CurveOptions`), same names and
        defaults: ``minimize``, ``estimator``, ``target``, ``trial_time``, ``low``, ``high``, ``models``, ...

    Returns
    -------
    Analysis
        ``.frame`` is curves.csv's table (``expected_min`` with ``minimize=True``).

    Raises
    ------
    ConfigError
        A key unknown or invalid (naming it and its value), a file's key, or scores not finite within [low, high].
    simstudy.datasets.DataError
        Scores that cannot give a curve.

    Examples
    --------
    >>> import numpy as np
    >>> import simstudy
    >>> x = np.array([0.2, 0.5, 0.9])
    >>> simstudy.curve(x).frame["expected_max"].round(4).tolist()
    [0.5333, 0.6889, 0.7704]
    >>> simstudy.curve(x, minimize=True).frame["expected_min"].round(4).tolist()
    [0.5333, 0.3778, 0.3037]
    >>> simstudy.curve(x, estimator="z")
    Traceback (most recent call last):
        ...
    simstudy.schema.ConfigError: estimator must be one of u, v, w, or a plug-in estimator: its import path \
module.function (the contract of simstudy.plugins), got 'z'
    """
    from simstudy.commands import curve as command

    config, chosen = _prepared("curve", scores, options, command.parse)
    result = command.run(config, chosen)
    return Analysis(
        "curve",
        result.curves,
        result,
        config,
        lambda which: to_matplotlib(command.chart(result)),
        lambda out_dir: command.write(result, out_dir),
    )


def _extrapolation_figure(result):
    """extrapolation.png's figure of a result: its chart (the run's own table has every column it reads)."""
    from simstudy.commands import extrapolate_page

    chart = extrapolate_page.extrapolation_chart(
        result.curves, result.fits, title=f"{SOURCE}: extrapolated tuning curves"
    )
    assert chart is not None
    return to_matplotlib(chart)


def bands(scores, **options) -> Analysis:
    """``simstudy bands`` on arrays: simultaneous bands of each model's tuning curve and CDF.

    Parameters
    ----------
    scores : array_like of float, shape (B,), or Mapping of str to array_like
        One model's scores (named ``"model"``), or each model's, in score units and random-search order.
    **options
        The keys of ``simstudy bands`` (:class:`~simstudy.commands.bands.BandsOptions`), same names and
        defaults: ``minimize``, ``confidence``, ``kind``, ``quantile``, ``method``, ``max_k``, ``low``, ``high``...

    Returns
    -------
    Analysis
        ``.frame`` is bands.csv's table; ``.result.cdfs`` cdf_bands.csv's, ``.result.evidence`` (two models)
        evidence.csv's; ``.figure("cdf")`` the CDF bands.

    Raises
    ------
    ConfigError
        A key unknown or invalid (naming it and its value), a file's key, scores not finite within [low,
        high], or bands beyond the memory or time limit.

    Examples
    --------
    >>> import numpy as np
    >>> import simstudy
    >>> x = np.array([0.2, 0.4, 0.3, 0.5])
    >>> simstudy.bands(x, method="dkw", low=0, high=1).frame[["k", "point", "lower", "upper"]].values.tolist()
    [[1.0, 0.3, 0.0, 1.0], [2.0, 0.4, 0.2, 1.0], [3.0, 0.5, 0.3, 1.0], [4.0, 0.5, 0.3, 1.0]]
    >>> simstudy.bands(x, method="dkw", low=0, high=1, minimize=True).frame["point"].tolist()
    [0.3, 0.3, 0.2, 0.2]
    >>> simstudy.bands(x, confidence=2)
    Traceback (most recent call last):
        ...
    simstudy.schema.ConfigError: confidence must be a number strictly between 0 and 1, got 2
    """
    from simstudy.commands import bands as command

    config, chosen = _prepared("bands", scores, options, command.parse)
    result = command.run(config, chosen)

    def figure(which):
        return to_matplotlib(command.charts(result)[_which(which, ("tuning_curve", "cdf"))])

    return Analysis("bands", result.bands, result, config, figure, lambda out_dir: command.write(result, out_dir))


def _which(which: str | None, names: tuple[str, ...]) -> str:
    """A figure's name among ``names`` (None: the first, the command's headline figure)."""
    if which is None:
        return names[0]
    if which not in names:
        raise ValueError(f"which must be one of {', '.join(names)} (or None: {names[0]}), got {which!r}")
    return which


def _model_dir(model: str) -> str:
    """The subdirectory of one model of several, as ``simstudy audit`` names it: ``model=NAME``, made safe by the
    run directories' one rule (a name of other characters shortened and hashed: two models never share one)."""
    from simstudy.engine.rundir import dirname

    return f"model={dirname(model)}"


def audit(scores, *, out_dir: str | Path | None = None, **options) -> Analysis:
    """``simstudy audit`` on arrays: how far the bands and the estimators can be trusted at your n.

    The studies run through the runner in ``out_dir`` (a rerun there resumes them), or in a temporary directory
    removed afterwards. Their scores are read from ``scores.csv`` written there, as the command reads a file.
    The page needs the studies' files: without ``out_dir`` it is rendered before they go (``.to_html()``), and
    ``.write(dir)`` runs the studies again there (the same streams: the same numbers); give ``out_dir`` to keep
    them the first time.

    Parameters
    ----------
    scores : array_like of float, shape (B,), or Mapping of str to array_like
        One model's scores (named ``"model"``), or each model's (each audited on its own, in
        ``out_dir/model=NAME``, as the command does), in score units.
    out_dir : str or pathlib.Path, optional, keyword-only
        Where the studies, the figures and AUDIT.md stay; default None: a temporary directory.
    **options
        The keys of ``simstudy audit`` (:class:`~simstudy.commands.audit.AuditOptions`), same names and
        defaults: ``minimize``, ``confidence``, ``method``, ``reps``, ``target_k``, ``low``, ``high``, ...

    Returns
    -------
    Analysis
        ``.frame`` the three studies' summaries, with ``model`` and ``study`` (coverage, bootstrap,
        accuracy) columns; ``.result`` a list of (model, scores, AuditResult).

    Raises
    ------
    ConfigError
        A key unknown or invalid (naming it and its value), a file's key, or scores the audit refuses.
    simstudy.studies.audit.AuditFailed
        Chunks of a study failed.

    Examples
    --------
    The studies take seconds (``tests/test_notebook.py`` runs them); a refusal comes before any:

    >>> import numpy as np
    >>> import simstudy
    >>> simstudy.audit(np.linspace(0.5, 0.9, 30), scale=0.01)
    Traceback (most recent call last):
        ...
    simstudy.schema.ConfigError: scale=0.01 reads a file: simstudy.audit takes the scores themselves; drop scale= \
(select, scale or clean the arrays before passing them)
    """
    from simstudy.commands import audit as command
    from simstudy.commands import report
    from simstudy.datasets import load_data

    _options_iv("audit", options)
    given = _scores_iv(scores, -np.inf, np.inf)  # bounds checked as the command reads the file, below
    if out_dir is None:
        with tempfile.TemporaryDirectory(prefix="simstudy-audit-") as tmp:
            done = _audit(command, load_data, given, options, Path(tmp))
            # the page, while the studies' files exist (AUDIT.md is there: report.html is built around it)
            html = report.run(tmp).path.read_text(encoding="utf-8")

        def again(out: Path) -> list[Path]:  # the studies are gone: run them again where they are to stay
            return audit(scores, out_dir=out, **options)._write(out)

        return dataclasses.replace(done, _write=again, _html=html)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return _audit(command, load_data, given, options, out_dir)


def _audit(command, load, given: dict, options: Mapping, work: Path) -> Analysis:
    """The audit in ``work``: the scores as a CSV the studies read, then the command's own steps."""
    import pandas as pd

    from simstudy import io
    from simstudy.commands.audit_page import write_page
    from simstudy.studies.audit import plans as plan_audits

    csv = work / "scores.csv"
    models = np.repeat(list(given), [x.size for x in given.values()])
    io.write_csv(pd.DataFrame({"model": models, "score": np.concatenate(list(given.values()))}), csv)
    opts = command.parse({**options, "data": str(csv)})
    plans = plan_audits(load(opts.data), opts)
    several = len(plans) > 1
    done, frames = [], []
    for plan in plans:
        where = work / _model_dir(plan.model) if several else work
        where.mkdir(exist_ok=True)
        model_opts = dataclasses.replace(opts, model=plan.model) if several else opts
        result = command.run(plan, model_opts, where)
        write_page(result, model_opts, plan.scores, where)
        done.append((plan.model, plan.scores, result, model_opts))
        for study in ("coverage", "bootstrap", "accuracy"):
            frames.append(getattr(result, study).summary.assign(model=plan.model, study=study))
    frame = pd.concat(frames, ignore_index=True)

    def figure(which):
        from simstudy.studies.band_coverage import band_coverage_figure
        from simstudy.studies.bootstrap_coverage import bootstrap_coverage_figure
        from simstudy.studies.evp_accuracy import evp_accuracy_figure

        first = done[0][2]
        draw = {
            "coverage": lambda: band_coverage_figure(first.coverage.summary),
            "bootstrap": lambda: bootstrap_coverage_figure(first.bootstrap.summary),
            "accuracy": lambda: evp_accuracy_figure(first.accuracy.summary, xscale="log"),
        }
        return draw[_which(which, tuple(draw))]()

    def write(out: Path) -> list[Path]:
        pages = []
        for model, x, result, model_opts in done:
            where = out / _model_dir(model) if several else out
            where.mkdir(exist_ok=True)
            pages.append((model, write_page(result, model_opts, x, where)))
        if several:
            from simstudy.commands.audit_page import write_index

            return [p for _, p in pages] + [write_index(pages, opts, out)]
        return [pages[0][1]]

    return Analysis("audit", frame, [(m, x, r) for m, x, r, _ in done], opts, figure, write)


def extrapolate(scores, *, out_dir: str | Path | None = None, progress: bool | None = False, **options) -> Analysis:
    """``simstudy extrapolate`` on arrays: the noisy quadratic law fitted to each model's tail, its curves beyond
    the runs, bootstrapped.

    Parameters
    ----------
    scores : array_like of float, shape (B,), or Mapping of str to array_like
        One model's scores (named ``"model"``), or each model's, in score units and random-search order.
    out_dir : str or pathlib.Path, optional, keyword-only
        Where the bootstrap's chunks stay (a rerun there resumes them); default None: a temporary directory,
        removed afterwards.
    progress : bool or None, optional, keyword-only
        Show the bootstrap's progress bar (None: when the output is a terminal); default False.
    **options
        The keys of ``simstudy extrapolate`` (:class:`~simstudy.commands.extrapolate.ExtrapolateOptions`),
        same names and defaults: ``minimize``, ``c``, ``k_max``, ``n_boot``, ``level``, ``sample_size``, ...

    Returns
    -------
    Analysis
        ``.frame`` extrapolation.csv's table; ``.result.fits`` fit.csv's, ``.result.simulation``
        simulation.csv's.

    Raises
    ------
    ConfigError
        A key unknown or invalid (naming it and its value), a file's key, or scores not finite within [low, high].
    simstudy.extrapolation.BadSample
        A sample the law cannot be fitted to as asked.

    Examples
    --------
    >>> import numpy as np
    >>> import simstudy
    >>> from simstudy.distributions.parametric import NoisyQuadratic
    >>> ys = NoisyQuadratic(0.7, 0.9, 3, 0.01).sample(48, rng=np.random.default_rng(0))
    >>> a = simstudy.extrapolate(ys, c=3, k_max=480, n_boot=2, mean=False, n_jobs=1)
    >>> round(float(a.result.fits["b"].iloc[0]), 4)
    0.9082
    """
    from simstudy import extrapolation
    from simstudy.commands import extrapolate as command

    config, chosen = _prepared("extrapolate", scores, options, command.parse)
    analyses = extrapolation.prepare(chosen, config, SOURCE)
    if out_dir is None:
        with tempfile.TemporaryDirectory(prefix="simstudy-extrapolate-") as tmp:
            result = command.run(analyses, config, tmp, source=SOURCE, progress=progress)
    else:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        result = command.run(analyses, config, out_dir, source=SOURCE, progress=progress)

    def write(out: Path) -> list[Path]:
        page = command.write(result, config, out, source=SOURCE)
        return [out / f for f in ("extrapolation.csv", "fit.csv", "simulation.csv", "extrapolation.png")] + [page]

    return Analysis(
        "extrapolate",
        result.curves,
        result,
        config,
        lambda which: _extrapolation_figure(result),
        write,
    )
