"""An audit of tuning-curve analyses at a researcher's own sample size (Lourie et al.'s protocol, §4-5).

Fit the researcher's scores -- point masses at the values repeated beyond chance (failed runs at 0 or at
chance accuracy) plus a boundary-corrected KDE of the rest with the improved Sheather-Jones bandwidth
(:class:`~simstudy.distributions.KDEWithAtoms`, distribution kind ``kde_atoms``; kind ``kde`` is the plain
:class:`~simstudy.distributions.ReflectedKDE`) -- treat the fit as the truth, and simulate searches of the
researcher's size n from it:

- the simultaneous coverage of the chosen confidence bands (:mod:`.band_coverage`), at the chosen level
  and a few others;
- the pointwise coverage of 95% percentile-bootstrap bands for U and V (:mod:`.bootstrap_coverage`);
- the bias, SD and MSE of U, V and W against the KDE's exact mean tuning curve (:mod:`.evp_accuracy`);
- exactly, how many samples bound the median tuning curve up to a target budget
  (:func:`.band_triviality.trivial_budget`).

Each part is an ordinary study run into its own subdirectory, so an interrupted audit resumes. Before anything
runs, :func:`prepare` (one model) and :func:`plans` (each model) make the :class:`Plan` of what is simulated: the
fitted distribution's spec and n, the sizes checked against the time and memory limits. How well the
fit describes the scores (:func:`simstudy.stats.kde.ks_distance`) is reported by :func:`simstudy.commands.audit_page.write_page`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simstudy import config as cfg_mod
from simstudy._limits import check_memory, check_time
from simstudy.engine.memory import worker_count
from simstudy.schema import ConfigError
from simstudy.studies import band_coverage, bootstrap_coverage, evp_accuracy
from simstudy.studies.band_triviality import trivial_budget
from simstudy.studies.base import StudyResult

__all__ = [
    "AuditResult",
    "AuditFailed",
    "Plan",
    "prepare",
    "plans",
    "run",
    "samples_needed",
    "progress_chunk",
    "SAMPLES_LIMIT",
]

#: The largest sample size :func:`samples_needed` tries: the exact budget takes about 4 s at n = 4,096 and
#: grows faster than n (14 s at 8,192), so the whole search stays within about half a minute.
SAMPLES_LIMIT = 1 << 12


class AuditFailed(RuntimeError):
    """Chunks of one of the audit's studies failed (an exception in a worker); the message names the first.

    Raised by :func:`run` as soon as a study has failed chunks, so that no report is made of a study with
    missing rounds (its summary would lack them, or be empty); the chunks that succeeded stay stored, so a
    rerun computes only the failed ones. The CLI exits with its "failed" code.

    Examples
    --------
    >>> raise AuditFailed("the band coverage: 1 of 20 chunks failed; first: chunk abc/0: MemoryError")
    Traceback (most recent call last):
        ...
    simstudy.studies.audit.AuditFailed: the band coverage: 1 of 20 chunks failed; first: chunk abc/0: MemoryError
    """


def _complete(result: StudyResult, what: str) -> StudyResult:
    """``result`` if every chunk of the study succeeded, else :class:`AuditFailed` naming the first failure."""
    failures = result.report.failures
    if failures:
        raise AuditFailed(
            f"{what}: {len(failures)} of {result.report.tasks} chunks failed; first: chunk {failures[0].where}: "
            f"{failures[0].error.splitlines()[0]}"
        )
    return result


@dataclass(frozen=True)
class AuditResult:
    """The audit's parts: the KDE spec and its object, the sample size, and each study's result.

    Returned by :func:`run`; :func:`simstudy.commands.audit_page.write_page` turns it into the audit's report.

    Parameters
    ----------
    distribution : simstudy.config.DistributionConfig
        The validated spec of the fitted distribution (named ``your_scores``).
    kde : object
        The distribution it builds (a :class:`~simstudy.distributions.KDEWithAtoms` or
        :class:`~simstudy.distributions.ReflectedKDE` for the ``simstudy audit`` command); with ``minimize:
        true`` the fit to the scores themselves, not the mirror the studies draw from.
    n : int
        The sample size audited (scores per simulated search).
    coverage : simstudy.studies.base.StudyResult
        The :mod:`~simstudy.studies.band_coverage` study's result (subdirectory ``coverage``).
    bootstrap : simstudy.studies.base.StudyResult
        The :mod:`~simstudy.studies.bootstrap_coverage` study's result (subdirectory ``bootstrap``).
    accuracy : simstudy.studies.base.StudyResult
        The :mod:`~simstudy.studies.evp_accuracy` study's result (subdirectory ``accuracy``).
    bounded_k : float
        The budget (search iterations) beyond which the upper median band at n is trivial (exact).
    samples_for_target : int or None
        The smallest n whose upper median band stays informative up to the target budget (:func:`samples_needed`);
        None when no n up to :data:`SAMPLES_LIMIT` does.

    Examples
    --------
    >>> import dataclasses
    >>> [f.name for f in dataclasses.fields(AuditResult)]
    ['distribution', 'kde', 'n', 'coverage', 'bootstrap', 'accuracy', 'bounded_k', 'samples_for_target']
    """

    distribution: cfg_mod.DistributionConfig
    kde: object
    n: int
    coverage: StudyResult
    bootstrap: StudyResult
    accuracy: StudyResult
    bounded_k: float
    samples_for_target: int | None


def samples_needed(target_k: float, confidence: float, method: str, *, limit: int = SAMPLES_LIMIT) -> int | None:
    """The smallest sample size whose upper median band stays non-trivial up to ``target_k`` (exact), or None.

    Doubles n from 2 until :func:`simstudy.stats.bands.trivial_budget` reaches ``target_k``, then narrows the
    bracket by interpolation (the budget is nearly linear in n) to within 1% of n from n = 200, where each
    evaluation costs seconds: the answer then suffices and is at most 1% above the smallest; exact below. A
    cap that does not suffice is not an answer: beyond ``limit`` it returns None.

    Parameters
    ----------
    target_k : float
        The budget (search iterations) the band should bound.
    confidence : float
        The bands' simultaneous coverage, in (0, 1).
    method : str
        A built-in CDF band method (:data:`simstudy.stats.bands.METHODS`).
    limit : int, default SAMPLES_LIMIT (4096)
        Keyword-only. The largest n searched.

    Returns
    -------
    int or None
        The sample size n (scores), at most ``limit``; None when even ``limit`` does not suffice.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    >>> samples_needed(10, 0.8, "ld_highest_density")
    61
    >>> samples_needed(10, 0.8, "ld_highest_density", limit=32) is None
    True
    """

    def budget(n: int) -> float:
        return trivial_budget(n, confidence, method)

    lo, hi = 2, 2
    b_lo = b_hi = budget(hi)
    while b_hi < target_k:
        if hi >= limit:
            return None
        lo, b_lo = hi, b_hi
        hi = min(hi * 2, limit)
        b_hi = budget(hi)
    # The budget grows about linearly in n, and an exact budget costs seconds at large n: interpolate in the
    # bracket, then probe one tolerance to the other side, so that most searches end after two evaluations.
    while hi - lo > (tol := max(1, lo // 100)):
        mid = min(max(int(np.ceil(lo + (target_k - b_lo) * (hi - lo) / (b_hi - b_lo))), lo + 1), hi - 1)
        b_mid = budget(mid)
        if b_mid < target_k:
            lo, b_lo = mid, b_mid
            probe = min(mid + tol, hi - 1)
        else:
            hi, b_hi = mid, b_mid
            probe = max(mid - tol, lo + 1)
        if lo < probe < hi:
            b_probe = budget(probe)
            lo, b_lo, hi, b_hi = (probe, b_probe, hi, b_hi) if b_probe < target_k else (lo, b_lo, probe, b_probe)
    return hi


#: The coverage and bootstrap studies run in at least this many chunks, so that progress shows in as many steps.
PROGRESS_STEPS = 20


def progress_chunk(reps: int, steps: int = PROGRESS_STEPS) -> int:
    """Replicates per chunk so that ``reps`` run in at least ``steps`` chunks (each chunk is a progress step).

    Parameters
    ----------
    reps : int
        Replicates to run, >= 1.
    steps : int, default PROGRESS_STEPS (20)
        The least number of chunks wanted.

    Returns
    -------
    int
        ``max(1, reps // steps)``: replicates per chunk.

    Examples
    --------
    >>> progress_chunk(1024), progress_chunk(512), progress_chunk(7)
    (51, 25, 1)
    """
    return max(1, reps // steps)  # rounded down: ceil(reps / chunk) >= steps


def _study(base: dict, **study) -> cfg_mod.Config:
    return cfg_mod.parse({**base, "study": study})


def run(opts: Any, kde_spec: dict, n: int, out_dir: Path) -> AuditResult:
    """Run the audit's studies for the KDE ``kde_spec`` (a distribution config) at sample size ``n``.

    Treats the fitted distribution as the truth and runs, each into its own subdirectory of ``out_dir`` (so an
    interrupted audit resumes): band coverage at the levels 0.5, 0.8, 0.9, 0.95 and ``opts.confidence``
    (``opts.rounds`` rounds), bootstrap coverage for U and V (``opts.bootstrap_rounds`` rounds of
    ``opts.resamples`` resamples) and the accuracy of U, V and W (``opts.evp_reps`` replicates); then, exactly,
    the trivial budget at n and the samples needed for ``opts.target_k``. This is the protocol of Lourie et
    al. (2024), §4-5, at the researcher's own n; ``simstudy audit`` runs it.

    Parameters
    ----------
    opts : simstudy.commands.audit.AuditConfig
        The validated ``simstudy audit`` options (:func:`simstudy.commands.audit.parse`).
    kde_spec : dict
        A distribution config (e.g. ``{"kind": "kde_atoms", "path": ..., "low": 0.0, "high": 1.0}``); any
        continuous kind works.
    n : int
        The sample size to audit (scores per simulated search), >= 2.
    out_dir : pathlib.Path
        The audit's directory; the studies write into ``coverage``, ``bootstrap`` and ``accuracy`` below it.

    Returns
    -------
    AuditResult
        The spec and its distribution, n, the three studies' results, ``bounded_k`` and
        ``samples_for_target``.

    Raises
    ------
    simstudy.schema.ConfigError
        If ``kde_spec`` or a study's settings derived from ``opts`` are invalid (e.g. a discrete
        distribution).
    simstudy.engine.chunks.RunDirConflict
        If a subdirectory holds the chunks of a different configuration.

    References
    ----------
    Lourie, N., Cho, K., & He, H. (2024). Show your work with confidence: confidence bands for tuning curves.
    NAACL 2024.

    Examples
    --------
    The three studies take about a second even at a toy scale, so here only the options an audit runs with
    and its exact parts:

    >>> from simstudy.commands import audit
    >>> from simstudy.stats.bands import trivial_budget
    >>> opts = audit.parse({"data": "scores.csv", "rounds": 40, "bootstrap_rounds": 20, "target_k": 3})
    >>> opts.confidence, opts.method, progress_chunk(opts.rounds)
    (0.8, 'ld_highest_density', 2)
    >>> round(trivial_budget(12, opts.confidence, opts.method), 4), samples_needed(opts.target_k, 0.8, opts.method)
    (2.4315, 16)
    """
    base = {
        "seed": opts.seed,
        "distribution": {"your_scores": kde_spec},
        "budget": {"B": n, "n": None},
        "estimators": {m: {"method": m} for m in "uvw"},
        "runner": {"n_jobs": opts.n_jobs, "backend": "loky", "progress": "auto"},
    }
    levels = sorted({0.5, 0.8, 0.9, 0.95, opts.confidence})
    coverage = _complete(
        band_coverage.run(
            _study(
                base,
                name="coverage",
                kind="band_coverage",
                reps=opts.rounds,
                chunk_reps=progress_chunk(opts.rounds),
                sample_size=n,
                levels=levels,
                methods=[opts.method],
            ),
            out_dir / "coverage",
        ),
        "the band coverage",
    )
    boot_cfg = cfg_mod.parse(
        {
            **base,
            "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
            "study": {
                "name": "bootstrap",
                "kind": "bootstrap_coverage",
                "reps": opts.bootstrap_rounds,
                "chunk_reps": progress_chunk(opts.bootstrap_rounds),
                "sample_size": n,
                "resamples": opts.resamples,
            },
        }
    )
    bootstrap = _complete(bootstrap_coverage.run(boot_cfg, out_dir / "bootstrap"), "the bootstrap coverage")
    accuracy = _complete(
        evp_accuracy.run(
            _study(
                base,
                name="accuracy",
                kind="evp_accuracy",
                reps=opts.evp_reps,
                chunk_reps=min(opts.evp_reps, 5000),
                save_replicates=False,
            ),
            out_dir / "accuracy",
        ),
        "the accuracy of U, V and W",
    )
    spec = cfg_mod.parse({**base, "study": {"name": "x", "kind": "evp_accuracy"}}).distributions[0]
    # The fit is compared with the scores in their own units: with minimize, the KDE of x (the studies drew
    # from the KDE of -x, its mirror).
    own = dataclasses.replace(spec, params=tuple(p for p in spec.params if p[0] != "minimize"))
    return AuditResult(
        distribution=spec,
        kde=own.build(),
        n=n,
        coverage=coverage,
        bootstrap=bootstrap,
        accuracy=accuracy,
        bounded_k=trivial_budget(n, opts.confidence, opts.method),
        samples_for_target=samples_needed(opts.target_k, opts.confidence, opts.method),
    )


# -- the plan: what the audit of each model simulates, checked against the limits before anything runs ----------------

#: Measured compute costs on one core (2026, 2 cores; 30 scores), halved so that the estimates are lower
#: bounds: a run refused would surely take longer than the limit. They grow with the n scores drawn per
#: simulated search: a round of band coverage (1 us per score in large chunks), a bootstrap resample (0.16 us
#: per score), a replicate of the accuracy of U, V, W (0.4 us per score).
_SECONDS_PER_COVERAGE_SCORE = 5e-7
_SECONDS_PER_RESAMPLE_SCORE = 5e-8
_SECONDS_PER_EVP_SCORE = 1.5e-7
#: The page's fit check evaluates the fitted CDF (a sum over the kernels, about two per score with their
#: reflections) at every score: N^2 work for N scores, 1.7e-7 s per N^2 measured (5,000 and 20,000 scores: 5 s
#: and 69 s), halved as above.
_SECONDS_PER_FIT_PAIR = 8e-8


def audit_cost_iv(o: Any, n: int, fitted: int | None = None) -> float:
    """Refuse audit sizes (``rounds``, ``bootstrap_rounds`` x ``resamples``, ``evp_reps``) whose studies would
    compute for longer than the time limit (:func:`simstudy.config._check_time`) with ``n`` scores per simulated
    search, or whose chunk of band-coverage rounds would not fit in memory, before anything is written; and, as
    ``bands`` does, the check of a fit to ``fitted`` scores (about N^2 work, which no key shortens: first) and
    the exact LD intervals at n (about n^2 work: 10^6 scores, days). Returns the estimated seconds of all but the
    LD intervals (computed once per n, whatever the number of models: :func:`plans` adds them).

    Not in ``__all__``: shared by :func:`prepare` and the command's parse (:func:`simstudy.commands.audit.parse`)."""
    from simstudy.stats.boundary import ld_seconds

    fit = 0.0 if fitted is None else _SECONDS_PER_FIT_PAIR * float(fitted) ** 2
    if fitted is not None:
        check_time(
            "data",
            o.data.data,  # an AuditConfig's: the scores are read
            fit,
            f"the check of the distribution fitted to {fitted:,} scores against each of them, about N^2 work",
            "audit a random subset of the scores (a few thousand fit the distribution as well)",
        )
    if o.method.startswith("ld_"):
        check_time(
            "method",
            o.method,
            ld_seconds(n, o.confidence, o.method.removeprefix("ld_")),
            f"the exact intervals of the bands audited at n = {n:,}, about n^2 work",
            "method=dkw or method=ks (closed forms, seconds), or sample_size=N to audit a smaller n",
        )
    workers = worker_count(o.n_jobs)
    on = f"on {workers} core{'s' * (workers > 1)}, {n:,} scores per simulated search"
    check_memory(
        "rounds",
        o.rounds,
        2 * 8.0 * n * progress_chunk(o.rounds),
        f"a chunk of {progress_chunk(o.rounds):,} simulated searches of {n:,} scores each",
        "lower rounds (1024 gives a Monte Carlo error of about 0.01)",
    )
    check_time(
        "rounds",
        o.rounds,
        o.rounds * n * _SECONDS_PER_COVERAGE_SCORE / workers,
        f"the band coverage, {on}",
        "lower rounds (1024 gives a Monte Carlo error of about 0.01)",
    )
    key = "resamples" if o.resamples / 1000 > o.bootstrap_rounds / 512 else "bootstrap_rounds"  # the larger
    check_time(
        key,
        getattr(o, key),
        o.bootstrap_rounds * o.resamples * n * _SECONDS_PER_RESAMPLE_SCORE / workers,
        f"bootstrap_rounds={o.bootstrap_rounds} x resamples={o.resamples} bootstrap resamples, {on}",
        "lower bootstrap_rounds or resamples (512 x 1000 by default)",
    )
    check_time(
        "evp_reps",
        o.evp_reps,
        o.evp_reps * n * _SECONDS_PER_EVP_SCORE / workers,
        f"the accuracy of U, V and W, {on}",
        "lower evp_reps (10000 by default)",
    )
    studies = o.rounds * _SECONDS_PER_COVERAGE_SCORE + o.bootstrap_rounds * o.resamples * _SECONDS_PER_RESAMPLE_SCORE
    return fit + (studies + o.evp_reps * _SECONDS_PER_EVP_SCORE) * n / workers


@dataclass(frozen=True)
class Plan:
    """What an audit simulates, checked before anything is written: the model, its scores, the spec, n.

    Made by :func:`prepare`, consumed by :func:`run`.

    Parameters
    ----------
    model : str
        The model audited.
    scores : numpy.ndarray of float, shape (N,)
        Its scores (score units): the distribution is fitted to all of them.
    spec : dict
        The fitted distribution's config (kind ``kde_atoms``), as the studies take it.
    n : int
        The sample size audited (scores per simulated search).
    seconds : float, default 0.0
        The audit's estimated compute time at least, in seconds, but for the exact LD intervals at n.

    Examples
    --------
    >>> from simstudy.commands.audit import parse
    >>> plan = prepare({"mlp": np.linspace(0.5, 0.9, 30)}, parse({"data": "scores.csv"}))
    >>> plan.model, plan.n, plan.spec["kind"], plan.spec["model"]
    ('mlp', 30, 'kde_atoms', None)
    """

    model: str
    scores: np.ndarray
    spec: dict
    n: int
    seconds: float = 0.0


def prepare(scores: dict, opts: Any) -> Plan:
    """The model to audit, the distribution's spec and n, with the audit's sizes checked against the limits.

    Parameters
    ----------
    scores : dict of str to numpy.ndarray
        Each model's scores (score units), as read from ``opts.data``.
    opts : simstudy.commands.audit.AuditConfig
        The parsed options (:func:`simstudy.commands.audit.parse`).

    Returns
    -------
    Plan
        The model (``opts.model``, or the data's only model), its scores, the spec of the distribution
        fitted to them and n (``opts.sample_size``, or the number of scores).

    Raises
    ------
    ConfigError
        Several models and no ``model=``; a model not in the data; scores all equal, or fewer than two distinct
        beside the point masses found; sizes that would compute for longer than the time limit (the fit's
        check to all the scores, the exact bands at n, the studies) or not fit in memory at this n.

    Examples
    --------
    >>> from simstudy.commands.audit import parse
    >>> prepare({"a": np.ones(3), "b": np.ones(3)}, parse({"data": "scores.csv"}))
    Traceback (most recent call last):
        ...
    simstudy.schema.ConfigError: scores.csv holds several models (a, b): choose one with model=, or plan each with plans()
    """
    from simstudy import datasets

    if opts.model is None and len(scores) > 1:
        raise ConfigError(
            f"{opts.data.data} holds several models ({', '.join(scores)}): choose one with model=, or plan each "
            "with plans()"
        )
    model = opts.model or next(iter(scores))
    if model not in scores:
        raise ConfigError(f"model {model!r} is not in {opts.data.data} (models: {', '.join(scores)})")
    x = scores[model]
    n = opts.sample_size or x.size
    seconds = audit_cost_iv(opts, n, x.size)  # parse checked the least n only; first: the fit check below costs too
    _fit_iv(x, opts, model if len(scores) > 1 or opts.model else None)
    one_of_a_file = opts.model is None and len(scores) == 1 and opts.data.data not in datasets.DATASETS
    spec = {
        "kind": "kde_atoms",
        # a file's only model is named after the file: left unnamed, a renamed file keys the same streams
        "model": None if one_of_a_file else model,
        "low": opts.data.low,
        "high": opts.data.high,
        "bw_of": opts.bw_of,
        "find_atoms": opts.find_atoms,
        "bw_method": opts.bw_method,
        "bandwidth": opts.bandwidth,
        "bw_factor": opts.bw_factor,
        "name": model,
    }
    if opts.data.data in datasets.DATASETS:
        spec.update(dataset=opts.data.data, **(dict(opts.data.options) if opts.data.data == "deberta_mnli" else {}))
    else:
        spec.update(
            path=opts.data.data,
            score_column=opts.data.score_column,
            model_column=opts.data.model_column,
            missing=opts.data.missing,
            scale=opts.data.scale,
        )
        # a tuning source's keys, where given (a score file's spec, and so its run's identity, is as before)
        spec.update({k: getattr(opts.data, k) for k in ("objective", "metric", "reduce") if getattr(opts.data, k)})
    if opts.data.minimize:  # lower is better: the KDE of -x is fitted and drawn (the minimum's truths)
        spec["minimize"] = True
    # The random streams are the audit's, whatever the data (their content still joins the run's fingerprint):
    # the same seed draws the same numbers for any scores, so the audit of losses 1 - a mirrors that of a.
    spec["stream"] = "audit"
    return Plan(model, x, spec, n, seconds)


def plans(scores: dict, opts: Any) -> list[Plan]:
    """A :class:`Plan` per model audited: ``opts.model``'s, or each model of ``scores`` (what ``simstudy audit``
    does without ``model=``: every model, each on its own, with its own fitted distribution).

    Parameters
    ----------
    scores : dict of str to numpy.ndarray
        Each model's scores (score units), as read from ``opts.data`` (``models=`` keeps some of them).
    opts : simstudy.commands.audit.AuditConfig
        The parsed options (:func:`simstudy.commands.audit.parse`).

    Returns
    -------
    list of Plan
        In the data's order of models; every one checked (:func:`prepare`) before any runs.

    Raises
    ------
    ConfigError
        As :func:`prepare`, for the first model refused; or the models' audits together would compute for longer
        than the time limit.

    Examples
    --------
    >>> from simstudy.commands.audit import parse
    >>> two = {"a": np.linspace(0.5, 0.9, 30), "b": np.linspace(0.4, 0.8, 30)}
    >>> [(plan.model, plan.spec["model"], plan.n) for plan in plans(two, parse({"data": "scores.csv"}))]
    [('a', 'a', 30), ('b', 'b', 30)]
    """
    if opts.model is not None or len(scores) == 1:
        return [prepare(scores, opts)]
    planned = [prepare(scores, dataclasses.replace(opts, model=model)) for model in scores]
    # Each audit is within the limit; one after another, the models together must be too.
    seconds = sum(plan.seconds for plan in planned)
    if opts.method.startswith("ld_"):
        from simstudy.stats.boundary import ld_seconds

        kind = opts.method.removeprefix("ld_")
        seconds += sum(ld_seconds(n, opts.confidence, kind) for n in {plan.n for plan in planned})
    check_time(
        "models",
        f"[{','.join(scores)}]" if len(scores) <= 5 else f"({len(scores)} models)",
        seconds,
        f"the audits of {len(planned)} models, one after another",
        "audit fewer at a time: model=NAME or models=[a,b]",
    )
    return planned


def _fit_iv(x: np.ndarray, opts: Any, model: str | None) -> None:
    """Refuse scores no density can be fitted to, in the user's words (the file, the model, find_atoms=), before
    anything runs: the studies would name their internal distribution's key instead."""
    from simstudy.stats import kde

    where = f"{opts.data.data}" + (f", model {model}," if model is not None else "")
    if x.size and x.min() == x.max():
        raise ConfigError(
            f"{where} holds {x.size} scores all equal to {x[0]:g}: the audit fits a density to the scores and "
            "needs at least two distinct ones"
        )
    if opts.find_atoms:
        atoms = kde.find_atoms(x).values
        rest = np.unique(x[~np.isin(x, atoms)])
        if rest.size < 2:
            raise ConfigError(
                f"{where} holds {rest.size} distinct score{'s' * (rest.size != 1)} beside the values repeated "
                f"beyond chance ({', '.join(f'{a:g}' for a in atoms)}), fitted as point masses: the density "
                "needs at least two; give find_atoms=false to fit one density to all the scores"
            )
