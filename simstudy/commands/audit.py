"""``simstudy audit`` as a library: how far to trust tuning-curve analyses at a researcher's own sample size.

A distribution (point masses at the scores repeated beyond chance plus a boundary-corrected KDE) is fitted to one
model's scores and searches of the researcher's size n simulated from it (the studies, and the plan of what
they simulate: :mod:`simstudy.studies.audit`'s :func:`~simstudy.studies.audit.prepare` and
:func:`~simstudy.studies.audit.plans`); the page and figures it writes are :mod:`simstudy.commands.audit_page`'s.

======================  ===============================================================================
:class:`AuditOptions`   the command's keys, their checks, docs and defaults (``--help``, Hydra)
:class:`AuditConfig`    the options as parsed and cross-checked
:func:`parse`           a mapping of keys -> :class:`AuditConfig` (or :class:`ConfigError`)
:func:`run`             the audit's studies into a run directory -> :class:`~simstudy.studies.audit.AuditResult`
:func:`summary`         what the command prints of its page
======================  ===============================================================================

Nothing here prints or exits: bad options raise :class:`~simstudy.schema.ConfigError`. Importing this module
stays cheap (the command line reads its schema for ``--help``): the studies, pandas and matplotlib load when
:func:`run` is called, or :func:`simstudy.commands.audit_page.write_page` writes the figures and ``AUDIT.md``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy import schema, schema_docs
from simstudy._limits import check_memory
from simstudy.commands._data import (
    DataConfig,
    DataOptions,
    bands,
    bound,
    command_config,
    command_iv,
    data_config,
    names,
    positive,
)
from simstudy.registry import Command
from simstudy.schema import ConfigError, option

if TYPE_CHECKING:
    from simstudy.studies.audit import AuditResult, Plan

log = logging.getLogger("simstudy")

__all__ = [
    "AuditOptions",
    "AuditConfig",
    "parse",
    "run",
    "summary",
]

#: The studies an audit runs, each in its own subdirectory of the run directory (:mod:`simstudy.studies.audit`
#: writes them); ``report.html`` charts each as a study.
STUDIES = ("coverage", "bootstrap", "accuracy")


#: The narrowest audit bandwidth accepted, as a share of high - low: below it each score is an atom of its own
#: (the fit is the data, whatever the KDE), and the reflected kernels' grid cannot resolve it.
_MIN_BANDWIDTH_SHARE = 1e-6


_KDE_BOUND = "the fitted distribution lives on [low, high]"


@schema_docs.documented()
@dataclass(frozen=True)
class AuditOptions(DataOptions):
    """The keys of ``simstudy audit`` (``configs/audit.yaml`` selects them): the data keys and the audit's own.

    Some data keys mean more here: each model is audited on its own (every model of the data by default), and
    the bounds are those of the fitted distribution (finite; default [0, 1]). :func:`parse` checks a mapping of them and returns an
    :class:`AuditConfig`.

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.commands.audit import AuditOptions
    >>> opts = schema.parse(AuditOptions, {"data": "scores.csv"})
    >>> opts.low, opts.high, opts.rounds, opts.n_jobs
    (0.0, 1.0, 1024, -1)
    """

    model: tuple[str, ...] | None = option(None, "the model to audit (default: every model, each on its own)", names)
    models: tuple[str, ...] | None = option(None, "the models to audit, e.g. models=[mlp,lstm] (default: all)", names)
    sample_size: int | None = option(
        None, "the number of scores n to audit (default: how many you have)", schema.optional(schema.integer(minimum=2))
    )
    low: float | None = option(0.0, f"the lowest score possible, in score units (finite): {_KDE_BOUND}", bound)
    high: float | None = option(1.0, f"the highest score possible, in score units (finite): {_KDE_BOUND}", bound)
    bandwidth: float | None = option(
        None, "the kernel SD of the fit, in score units (default: chosen by bw_method)", schema.optional(positive)
    )
    bw_factor: float | None = option(
        None,
        "or a factor of the SD of the scores (atoms left out), as scipy's gaussian_kde takes it",
        schema.optional(positive),
    )
    bw_of: str = option(
        "reflected",
        "which SD bw_factor multiplies: reflected (the data with its reflections) or data",
        schema.choice(("reflected", "data")),
    )
    bw_method: str = option(
        "isj",
        "how the bandwidth is chosen when neither bandwidth nor bw_factor is given: isj "
        "(improved Sheather-Jones, for multimodal scores) or silverman (rule of thumb; "
        "over-smooths clusters)",
        schema.choice(("isj", "silverman")),
    )
    find_atoms: bool = option(
        True,
        "true: scores repeated more often than a density allows (failed runs scored 0, a plateau) are fitted as "
        "point masses, the rest as a KDE; false: one KDE of all the scores",
        schema.boolean(),
    )
    confidence: float = option(0.8, "the simultaneous coverage of the bands audited, e.g. 0.8", schema.level())
    method: str = option(
        "ld_highest_density",
        "the band audited: ld_highest_density, ld_equal_tailed, ks or dkw",
        schema.choice(lambda: bands().METHODS),
    )
    target_k: int = option(
        10, "report how many scores bound the median tuning curve up to this budget", schema.integer(minimum=1)
    )
    rounds: int = option(
        1024,
        "simulated searches for the bands' coverage (more: a smaller Monte Carlo error)",
        schema.integer(minimum=2),
    )
    bootstrap_rounds: int = option(512, "simulated searches for the bootstrap's coverage", schema.integer(minimum=2))
    resamples: int = option(1000, "bootstrap resamples per simulated search", schema.integer(minimum=2))
    evp_reps: int = option(
        10000, "simulated searches for the bias, SD and MSE of U, V and W", schema.integer(minimum=2)
    )
    seed: int = option(0, "the random seed: the same seed gives the same numbers", schema.integer(minimum=0))
    n_jobs: int = option(-1, "worker processes (-1: every core); never changes a number", schema.integer())


@dataclass(frozen=True)
class AuditConfig:
    """``simstudy audit``: how trustworthy tuning-curve analyses are at a researcher's own sample size.

    What :func:`parse` returns: a distribution (a reflected KDE on [low, high]) is fitted to all the
    scores, and searches of ``sample_size`` scores simulated from it to measure the bands' coverage, the
    bootstrap's and the bias, SD and MSE of the expected-maximum estimators U, V and W.

    Parameters
    ----------
    data : DataConfig
        All the scores (the KDE is fitted to all of them; ``data.sample_size`` is None), with finite
        ``low`` and ``high``.
    sample_size : int or None
        ``sample_size``: the number of scores n to audit, in runs; None: the number of scores.
    model : str or None
        ``model``: the one model audited; None when the data hold one model, or every model is audited (each on
        its own: :func:`simstudy.studies.audit.plans`).
    bandwidth : float or None
        ``bandwidth``: the kernel SD of the fit, in score units (default: chosen by bw_method).
    bw_factor : float or None
        ``bw_factor``: or a factor of the SD of the scores (atoms left out), as scipy's gaussian_kde takes it.
    bw_of : str
        ``bw_of``: which SD bw_factor multiplies: reflected (the data with its reflections) or data.
    bw_method : str
        ``bw_method``: how the bandwidth is chosen when neither bandwidth nor bw_factor is given: isj (improved
        Sheather-Jones, for multimodal scores) or silverman (rule of thumb; over-smooths clusters).
    confidence : float
        ``confidence``: the simultaneous coverage of the bands audited, e.g. 0.8. A probability in (0, 1).
    find_atoms : bool, default True
        ``find_atoms``: fit repeated scores as point masses (true) or one KDE of all the scores (false).
    method : str
        ``method``: the band audited: ld_highest_density, ld_equal_tailed, ks or dkw.
    target_k : int
        ``target_k``: report how many scores bound the median tuning curve up to this budget. In trials.
    rounds : int
        ``rounds``: simulated searches for the bands' coverage (more: a smaller Monte Carlo error).
    bootstrap_rounds : int
        ``bootstrap_rounds``: simulated searches for the bootstrap's coverage.
    resamples : int
        ``resamples``: bootstrap resamples per simulated search.
    evp_reps : int
        ``evp_reps``: simulated searches for the bias, SD and MSE of U, V and W.
    seed : int
        ``seed``: the random seed: the same seed gives the same numbers.
    n_jobs : int
        ``n_jobs``: worker processes (-1: every core); never changes a number.

    Examples
    --------
    >>> from simstudy.commands.audit import parse
    >>> config = parse({"data": "scores.csv", "model": "lstm"})
    >>> config.model, (config.data.low, config.data.high), config.rounds, config.bw_method
    ('lstm', (0.0, 1.0), 1024, 'isj')
    """

    data: DataConfig  # all the scores (the KDE is fitted to all of them)
    sample_size: int | None  # the n to audit (None: the number of scores)
    model: str | None
    bandwidth: float | None
    bw_factor: float | None
    bw_of: str
    bw_method: str
    confidence: float
    method: str
    target_k: int
    rounds: int
    bootstrap_rounds: int
    resamples: int
    evp_reps: int
    seed: int
    n_jobs: int
    find_atoms: bool = True  # repeated scores are point masses (false: one KDE of all)


def parse(cfg: Mapping) -> AuditConfig:
    """Validate the ``simstudy audit`` config (the keys of :class:`AuditOptions`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    AuditConfig
        Its ``data`` keeps every score (``sample_size`` moves to the audit's own field).

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value; infinite bounds; ``n_jobs=0``; a
        ``bandwidth`` below 1e-6 (high - low), or whose reflected kernels would not fit in memory
        (:func:`check_memory`); a ``target_k`` no band bounds with the largest sample size the audit searches.

    Examples
    --------
    >>> opts = parse({"data": "scores.csv", "sample_size": 20})
    >>> opts.sample_size, opts.data.sample_size, (opts.data.low, opts.data.high)
    (20, None, (0.0, 1.0))
    """
    o = command_iv(AuditOptions, "audit", cfg)
    from simstudy.studies.audit import SAMPLES_LIMIT, audit_cost_iv  # here: importing the command stays cheap

    # Any band with simultaneous coverage covers F(Y_(n)) >= l_n, so l_n <= (1 - confidence)^(1/n) (F(Y_(n)) is
    # Beta(n, 1)), and its upper median band is informative at most up to k = n ln 2 / -ln(1 - confidence).
    # A target_k beyond that for the largest n searched is refused at once (it searched every n up to the
    # limit, minutes of band computations, and then reported the limit as if it were enough).
    reach = SAMPLES_LIMIT * np.log(2.0) / -np.log1p(-o.confidence)
    if o.target_k > reach:
        raise ConfigError(
            f"target_k={o.target_k} cannot be bounded with the up to {SAMPLES_LIMIT:,} scores the audit "
            f"searches: at confidence={o.confidence:g} no band bounds the median curve beyond "
            f"k = {int(reach):,} with {SAMPLES_LIMIT:,} scores; lower target_k"
        )
    data = data_config(o)
    data = dataclasses.replace(data, sample_size=None)
    if not (np.isfinite(data.low) and np.isfinite(data.high)):
        raise ConfigError(
            f"low and high must be finite bounds of the scores (the KDE lives on [low, high]), "
            f"got low={data.low}, high={data.high}"
        )
    if o.n_jobs == 0:
        raise ConfigError("n_jobs must be a positive number of workers or -1 (all cores), got 0")
    # Before the scores are read, the least n an audit draws: the cost is checked again with the scores' n.
    audit_cost_iv(o, o.sample_size or 2)
    if o.bandwidth is not None and o.bandwidth < _MIN_BANDWIDTH_SHARE * (data.high - data.low):
        raise ConfigError(
            f"bandwidth={cfg['bandwidth']} is too small for scores on [low, high] = [{data.low:g}, {data.high:g}]: "
            f"a sensible bandwidth lies between {_MIN_BANDWIDTH_SHARE:g} (high - low) = "
            f"{_MIN_BANDWIDTH_SHARE * (data.high - data.low):g} and high - low = {data.high - data.low:g}, on the "
            f"scale of the scores' spread; or leave it unset (bw_method chooses one) or use bw_factor="
        )
    if o.bandwidth is not None:
        # The reflected KDE keeps every image of each score's kernel within 10 bandwidths of [low, high]:
        # 2 (2 ceil(10 h / L) + 3) centres per score, each built in a few float64 temporaries.
        copies = 2 * (2 * np.ceil(10 * o.bandwidth / (data.high - data.low)) + 3)
        scores = o.sample_size or 1
        check_memory(
            "bandwidth",
            cfg["bandwidth"],
            24 * copies * scores,
            f"{copies:,.0f} reflected kernel centres per score, for at least {scores} score{'s' * (scores > 1)}",
            f"use a bandwidth on the scale of the scores' spread "
            f"(high - low = {data.high - data.low:g}), or bw_factor=",
        )
    model = data.models[0] if data.models is not None and len(data.models) == 1 else None
    return command_config(AuditConfig, o, data, model=model)


def run(scores: dict | Plan, opts: AuditConfig, out_dir: str | Path) -> AuditResult:
    """Run (or resume) the audit's studies into ``out_dir``: the command's numbers.

    Parameters
    ----------
    scores : dict of str to numpy.ndarray, or Plan
        Each model's scores (score units), as read from ``opts.data``; or what
        :func:`simstudy.studies.audit.prepare` made of them.
    opts : AuditConfig
        The parsed options (:func:`parse`).
    out_dir : str or pathlib.Path
        The run directory; the studies write into ``coverage``, ``bootstrap`` and ``accuracy`` below it.

    Returns
    -------
    AuditResult
        The fitted distribution, n, the three studies' results, ``bounded_k`` and ``samples_for_target``
        (:class:`simstudy.studies.audit.AuditResult`).

    Raises
    ------
    ConfigError
        As :func:`simstudy.studies.audit.prepare`; or a study's settings derived from the options are invalid.
    simstudy.engine.chunks.RunDirConflict
        A subdirectory holds the chunks of a different configuration.
    simstudy.studies.audit.AuditFailed
        Chunks of a study failed (those that succeeded stay stored: a rerun resumes).

    Examples
    --------
    The studies take seconds even at a toy scale (``tests/commands/test_audit.py`` runs them); here a refusal,
    before anything runs:

    >>> run({"mlp": np.linspace(0.5, 0.9, 30)}, parse({"data": "s.csv", "model": "lstm"}), "out")
    Traceback (most recent call last):
        ...
    simstudy.schema.ConfigError: model 'lstm' is not in s.csv (models: mlp)
    """
    from simstudy.studies import audit

    plan = audit.prepare(scores, opts) if isinstance(scores, dict) else scores
    return audit.run(opts, plan.spec, plan.n, Path(out_dir))


def summary(page: Path) -> str:
    r"""What ``simstudy audit`` prints of its page: the "Confidence bands" section in plain text.

    Parameters
    ----------
    page : pathlib.Path
        ``AUDIT.md`` as :func:`simstudy.commands.audit_page.write_page` wrote it.

    Returns
    -------
    str
        The section's text without its heading, figure and Markdown bold markers.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = pathlib.Path(tmp, "AUDIT.md")
    ...     _ = page.write_text("# A\n## Confidence bands\n\n**Covered.**\n\n![coverage](coverage.png)\n")
    ...     summary(page)
    'Covered.'
    """
    from simstudy.commands._pages import plain
    from simstudy.commands.audit_page import bands_section

    return plain(bands_section(page.read_text()))


@dataclass(frozen=True)
class Audited:
    """What ``simstudy audit`` made in its run directory: each model's page, in the order audited.

    Parameters
    ----------
    pages : tuple of (str, pathlib.Path) pairs
        Each model audited and its ``AUDIT.md``.
    several : bool
        Several models, each audited on its own in ``model=NAME/`` (an index ``AUDIT.md`` lists them).
    config : AuditConfig
        The options the audit ran with.

    Examples
    --------
    >>> done = Audited((("mlp", Path("AUDIT.md")),), False, parse({"data": "s.csv"}))
    >>> done.pages[0][0], done.several
    ('mlp', False)
    """

    pages: tuple[tuple[str, Path], ...]
    several: bool
    config: AuditConfig


def _prepare(config: AuditConfig, scores: dict) -> list[Plan]:
    """Every model's :class:`Plan`, checked before the run directory is touched."""
    from simstudy.studies.audit import plans

    return plans(scores, config)


def _run(config: AuditConfig, plans: list[Plan], out_dir: Path) -> Audited:
    """Each model's audit (resumable studies) and page, in ``model=NAME/`` when there are several."""
    from simstudy.commands.audit_page import write_page
    from simstudy.engine.rundir import EXIT_FAILED, dirname, fail
    from simstudy.studies.audit import AuditFailed

    several = len(plans) > 1  # each model on its own, in model=NAME/ (a name made safe to type)
    pages = []
    for plan in plans:
        where = out_dir / f"model={dirname(plan.model)}" if several else out_dir
        model_opts = dataclasses.replace(config, model=plan.model) if several else config
        log.info("auditing %s (%d scores) at n = %d -> %s", plan.model, plan.scores.size, plan.n, where)
        try:
            result = run(plan, model_opts, where)
        except AuditFailed as exc:  # chunks kept: a rerun resumes the studies
            fail(str(exc), status=EXIT_FAILED)
        pages.append((plan.model, write_page(result, model_opts, plan.scores, where)))
    return Audited(tuple(pages), several, config)


def _write(done: Audited, out_dir: Path) -> Path:
    """The index of several models' pages (each page was written as its audit finished)."""
    if done.several:
        from simstudy.commands.audit_page import write_index

        path = write_index(list(done.pages), done.config, out_dir)
    else:
        path = done.pages[0][1]
    log.info("wrote %s", path)
    return path


def _lines(done: Audited) -> list[str]:
    """What the terminal shows: each page's "Confidence bands" section (:func:`summary`)."""
    from simstudy.commands import _iid

    out = [f"{model}: {summary(page)}" if done.several else summary(page) for model, page in done.pages]
    return out + _iid.lines(done.config.data)  # whether the scores read as random search (issue 36)


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "audit",
    page="AUDIT.md",
    run=_run,
    options=AuditOptions,
    parse=parse,
    prepare=_prepare,
    chunks=True,
    write=_write,
    lines=_lines,
    record=False,
    log_scores=False,
    usage="simstudy audit data=FILE|DATASET [model=NAME|models=[a,b]] [key=value ...]",
    examples=(
        "simstudy audit data=my_scores.csv confidence=0.8 target_k=10",
        "simstudy audit data=reuters_hedwig model=lstm sample_size=50",
    ),
    writes="outputs/audit/<overrides>/AUDIT.md (one page with figures) and the studies behind it; with several models, "
    "one such page per model in model=NAME/ and an AUDIT.md that lists them",
)
