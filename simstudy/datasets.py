"""Score data: three shipped sets of real tuning results, and a researcher's own files (re-exported).

Shipped data (``simstudy/data``, see its README for sources and licences) is cached and returned as
read-only arrays, so callers cannot corrupt the cache. The files are read as a researcher's own are
(:mod:`simstudy.score_files`, whose :func:`load_scores`, :func:`read_scores`, :class:`DataError`,
:class:`DataWarning` and :class:`ScoreFile` import from here too).

=======================  =========================================================================
name                     what it is
=======================  =========================================================================
:data:`DATASETS`         the shipped sets, with a line on each
:func:`reuters_hedwig`   hedwig's mlp and lstm on Reuters (Tang et al. 2020)
:func:`deberta_mnli`     DeBERTa and DeBERTaV3 on MultiNLI (Lourie, Cho & He 2024)
:func:`tdsa_fiesta`      12 target-dependent sentiment models (Moss et al. 2019)
:func:`load_models`      every model's scores of a shipped set, by name
:func:`load_dataset`     one model's scores of a shipped set
:func:`sample_runs`      a subsample of runs per model
:func:`load_data`        the scores a data command's keys name: read, the models and runs kept
:func:`select_scores`    the models and runs a data command's keys keep of scores read or given
:func:`read_data`        :func:`load_data` with what reading found: the direction, each model's i.i.d. check
:class:`Found`           what reading found, per model (:class:`ModelCheck`)
:func:`check_model`      one model's i.i.d. check: its provenance and the order test, seeded by its name
:func:`source_scores`    a tuning source's scores by model, or None for a file that is no source
=======================  =========================================================================

A tuning source (an Optuna storage, a Ray Tune directory, ...; :mod:`simstudy.sources`) is read as data too:
each study is a model, its complete trials its scores in trial order (:func:`read_data`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePath
from types import MappingProxyType
from typing import Any

import numpy as np

from simstudy.score_files import (
    SUFFIXES,
    DataError,
    DataWarning,
    ScoreFile,
    Table,
    choice_iv,
    load_scores,
    read_scores,
    records,
    score,
    table_scores,
)

__all__ = [
    "DataError",
    "DataWarning",
    "ScoreFile",
    "read_scores",
    "load_scores",
    "reuters_hedwig",
    "deberta_mnli",
    "tdsa_fiesta",
    "DATASETS",
    "load_dataset",
    "load_models",
    "sample_runs",
    "load_data",
    "select_scores",
    "read_data",
    "Found",
    "ModelCheck",
    "check_model",
    "source_scores",
]

DATASETS: Mapping[str, str] = MappingProxyType(
    {
        "deberta_mnli": "DeBERTa/DeBERTaV3 on MultiNLI, 1,024 random-search runs each, validation accuracy "
        "(Lourie, Cho & He 2024); models: deberta, debertav3",
        "reuters_hedwig": "hedwig document classifiers on Reuters, dev-set F1 (Tang et al. 2020); "
        "models: mlp (145 runs), lstm (152 runs)",
        "tdsa_fiesta": "12 target-dependent sentiment models, 500 runs each, test F1 (Moss et al. 2019)",
    }
)
_DEBERTA_FILES = {"deberta": "deberta-base.results.jsonl", "debertav3": "deberta-v3-base.results.jsonl"}
_SPLITS = ("matched", "mismatched")
_REDUCES = ("best", "final")


@cache  # the DeBERTa files are parsed once for all split/reduce combinations
def _shipped(folder: str, file: str) -> Table:
    return records(resources.files("simstudy") / "data" / folder / file, file)


@cache
def _shipped_scores(folder: str, file: str, score_column: str, model_column: str) -> dict[str, np.ndarray]:
    scores = table_scores(
        _shipped(folder, file),
        file,
        score_column=score_column,
        model_column=model_column,
        default_model="",
        low=0.0,
        high=1.0,
        min_scores=2,
    ).scores
    for x in scores.values():
        x.flags.writeable = False  # cached and shared by every caller
    return scores


def reuters_hedwig() -> dict[str, np.ndarray]:
    """Dev-set F1 of hedwig's ``mlp`` (145 runs) and ``lstm`` (``reg_lstm``, 152 runs) on Reuters.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{"mlp": ..., "lstm": ...}``, read-only float64 arrays of F1 in [0, 1], shapes (145,) and (152,),
        in file order.

    References
    ----------
    .. [1] Tang, R., Lee, J., Xin, J., Liu, X., Yu, Y. & Lin, J. (2020). Showing your work doesn't always
       work. ACL 2020.

    Examples
    --------
    >>> runs = reuters_hedwig()
    >>> {model: x.shape for model, x in runs.items()}, round(float(runs["mlp"].max()), 4)
    ({'mlp': (145,), 'lstm': (152,)}, 0.8024)
    """
    scores = _shipped_scores("reuters_hedwig", "hedwig.tsv", "f1", "model_name")
    return {"mlp": scores["mlp"], "lstm": scores["reg_lstm"]}


@cache
def _deberta(model: str, split: str, reduce: str) -> np.ndarray:
    file = _DEBERTA_FILES[model]
    table = _shipped("deberta_mnli", file)
    values = []
    for i, curves in enumerate(table.cells("learning_curves")):
        where = table.where(i)
        try:
            accs = [acc for _step, acc in curves[split]]
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{file}: {where}: learning_curves.{split} is not a list of [step, accuracy]") from None
        if not accs:
            raise DataError(f"{file}: {where}: learning_curves.{split} is empty")
        accs = [score(a, file, where, f"{split} accuracy", 0.0, 1.0) for a in accs]
        values.append(max(accs) if reduce == "best" else accs[-1])
    x = np.asarray(values, dtype=np.float64)
    x.flags.writeable = False
    return x


def deberta_mnli(model: str, *, split: str = "matched", reduce: str = "best") -> np.ndarray:
    """MultiNLI validation accuracy of 1,024 random-search runs of DeBERTa or DeBERTaV3 (Lourie et al.).

    Parameters
    ----------
    model : {"deberta", "debertav3"}
        The model.
    split : {"matched", "mismatched"}, keyword-only
        MultiNLI validation set; default ``"matched"``.
    reduce : {"best", "final"}, keyword-only
        Each run's best accuracy over its learning curve (what Lourie et al.'s analyses use) or its last;
        default ``"best"``.

    Returns
    -------
    numpy.ndarray
        Read-only float64 array of 1,024 accuracies in [0, 1], shape (1024,), in file order.

    Raises
    ------
    ValueError
        If `model`, `split` or `reduce` is not one of the choices.
    DataError
        If a run's learning curve in the shipped file is malformed.

    References
    ----------
    .. [1] Lourie, N., Cho, K. & He, H. (2024). Show your work with confidence: confidence bands for tuning
       curves. NAACL 2024.

    Examples
    --------
    Loading takes about a second the first time (the JSON Lines file is parsed once, then cached), so
    ``deberta_mnli("debertav3").shape`` gives ``(1024,)`` after a pause. A wrong name fails at once:

    >>> deberta_mnli("bert")
    Traceback (most recent call last):
        ...
    ValueError: unknown deberta_mnli model 'bert'; choose one of: deberta, debertav3
    """
    return _deberta(
        choice_iv("deberta_mnli model", model, _DEBERTA_FILES),
        choice_iv("split", split, _SPLITS),
        choice_iv("reduce", reduce, _REDUCES),
    )


def tdsa_fiesta() -> dict[str, np.ndarray]:
    """Test-set F1 of 12 target-dependent sentiment analysis models, 500 runs each (Moss et al. 2019).

    Returns
    -------
    dict of str to numpy.ndarray
        Model name -> read-only float64 array of 500 F1 values in [0, 1], shape (500,).

    References
    ----------
    .. [1] Moss, H. B., Leslie, D. S. & Rayson, P. (2019). FIESTA: fast identification of state-of-the-art
       models using adaptive bandit algorithms. ACL 2019.

    Examples
    --------
    >>> runs = tdsa_fiesta()
    >>> len(runs), sorted(runs)[:3], runs["atae"].shape
    (12, ['atae', 'atae_200', 'atae_50'], (500,))
    """
    return dict(_shipped_scores("tdsa_fiesta", "test_f1.json", "score", "model"))


def _not_a_file_iv(name: Any) -> None:
    """A score file handed to a shipped-data loader: say which function reads it."""
    if isinstance(name, (str, os.PathLike)) and PurePath(name).suffix.lower() in SUFFIXES:
        raise ValueError(
            f"{str(name)!r} is a score file, not a shipped data set: read it with load_scores({str(name)!r})"
        )


def load_models(name: str, **options: str) -> dict[str, np.ndarray]:
    """Every model's scores of a shipped data set, by name (see :data:`DATASETS`).

    Parameters
    ----------
    name : {"deberta_mnli", "reuters_hedwig", "tdsa_fiesta"}
        The data set.
    **options : str
        ``split`` and ``reduce`` for ``deberta_mnli`` (see :func:`deberta_mnli`); none for the others.

    Returns
    -------
    dict of str to numpy.ndarray
        Model name -> read-only float64 array of its scores (shape (runs,)), in file order.

    Raises
    ------
    ValueError
        If `name` is unknown (or a score file: :func:`load_scores` reads those), or an option is given that the
        data set does not take.

    Examples
    --------
    >>> {model: x.shape for model, x in load_models("reuters_hedwig").items()}
    {'mlp': (145,), 'lstm': (152,)}
    >>> load_models("tdsa_fiesta", split="matched")
    Traceback (most recent call last):
        ...
    ValueError: tdsa_fiesta takes no options, got: split
    """
    _not_a_file_iv(name)
    name = choice_iv("dataset", name, DATASETS)
    if name == "deberta_mnli":
        return {model: load_dataset(name, model, **options) for model in _DEBERTA_FILES}
    if options:
        raise ValueError(f"{name} takes no options, got: {', '.join(options)}")
    return reuters_hedwig() if name == "reuters_hedwig" else tdsa_fiesta()


def load_dataset(name: str, model: str, **options: str) -> np.ndarray:
    """Scores of one model of a shipped data set, by name (see :data:`DATASETS`).

    Parameters
    ----------
    name : {"deberta_mnli", "reuters_hedwig", "tdsa_fiesta"}
        The data set.
    model : str
        A model of that data set.
    **options : str
        ``split`` and ``reduce`` for ``deberta_mnli`` (see :func:`deberta_mnli`); none for the others.

    Returns
    -------
    numpy.ndarray
        Read-only float64 array of the model's scores, shape (runs,), in file order.

    Raises
    ------
    ValueError
        If `name` or `model` is unknown, or an option is given that the data set does not take.

    Examples
    --------
    >>> x = load_dataset("reuters_hedwig", "lstm")
    >>> x.shape, x.flags.writeable
    ((152,), False)
    >>> load_dataset("reuters", "mlp")
    Traceback (most recent call last):
        ...
    ValueError: unknown dataset 'reuters'; choose one of: deberta_mnli, reuters_hedwig, tdsa_fiesta
    """
    _not_a_file_iv(name)
    name = choice_iv("dataset", name, DATASETS)
    if name == "deberta_mnli":
        for option in options:
            choice_iv("deberta_mnli option", option, ("reduce", "split"))
        return deberta_mnli(model, **options)
    if options:
        raise ValueError(f"{name} takes no options, got: {', '.join(options)}")
    scores = reuters_hedwig() if name == "reuters_hedwig" else tdsa_fiesta()
    return scores[choice_iv(f"{name} model", model, scores)]


def _sample_rng(seed: int, model: str) -> np.random.Generator:
    """The generator of one model's random sample: keyed by the seed and the model's name (never by the
    order of the models or by which other models are loaded)."""
    import hashlib

    key = int(hashlib.sha256(str(model).encode()).hexdigest()[:15], 16)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


def sample_runs(scores: Mapping[str, np.ndarray], size: int, seed: int | None = None) -> dict[str, np.ndarray]:
    """``size`` runs of each model: the first ``size`` (``seed=None``) or a random subset chosen by ``seed``.

    A random subset is drawn without replacement, per model, from ``numpy.random.default_rng`` of a
    :class:`~numpy.random.SeedSequence` keyed by ``seed`` and the model's name, and kept in the runs' order
    (random-search order): the same seed gives the same runs whatever other models are loaded.

    Parameters
    ----------
    scores : mapping of str to ndarray, shape (m_model,)
        Each model's runs (scores), in random-search order.
    size : int
        Runs to keep per model (``2 <= size <= m_model``).
    seed : int, optional
        None (default): the first ``size`` runs. An integer ``>= 0``: a random subset.

    Returns
    -------
    dict of str to ndarray, shape (size,)
        Each model's kept runs, in their original order.

    Raises
    ------
    ValueError
        If a model has fewer than ``size`` runs (naming it) or ``seed`` is not a non-negative integer.

    Examples
    --------
    >>> runs = {"a": np.arange(10.0)}
    >>> sample_runs(runs, 3)["a"], sample_runs(runs, 3, seed=1)["a"]
    (array([0., 1., 2.]), array([1., 4., 6.]))
    >>> sample_runs(runs, 30)
    Traceback (most recent call last):
        ...
    ValueError: sample_size=30 exceeds the scores of model(s) a
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"sample_seed must be an integer >= 0 or null, got {seed!r}")
    short = [m for m, x in scores.items() if np.size(x) < size]
    if short:
        raise ValueError(f"sample_size={size} exceeds the scores of model(s) {', '.join(short)}")
    if seed is None:
        return {m: np.asarray(x)[:size] for m, x in scores.items()}
    out = {}
    for m, x in scores.items():
        idx = np.sort(_sample_rng(int(seed), m).choice(np.size(x), size=size, replace=False))
        out[m] = np.asarray(x)[idx]
    return out


def load_data(opts: Any) -> dict:
    """Scores by model as a data command's keys say: a file, a tuning source or a shipped data set, the models and
    runs kept.

    Parameters
    ----------
    opts : simstudy.commands._data.DataConfig
        The data keys, cross-checked (a data command's ``parse(...).data``).

    Returns
    -------
    dict of str to numpy.ndarray
        Each model kept, its scores in score units and random-search order (:func:`select_scores`).

    Raises
    ------
    simstudy.schema.ConfigError
        A shipped set's scores outside [low, high], or the keys do not fit the data (:func:`select_scores`).
    DataError
        The file cannot be read as scores.

    See Also
    --------
    read_data : The same scores, with the direction a tuning source records and each model's i.i.d. check.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> scores = load_data(curve.parse({"data": "reuters_hedwig", "sample_size": 5}).data)
    >>> {m: x.size for m, x in scores.items()}
    {'mlp': 5, 'lstm': 5}
    """
    scores, _source = _read(opts)
    return select_scores(scores, opts)


def _read(opts: Any) -> tuple[dict, Any]:
    """Every model's scores as read (before ``model``/``sample_size``), and the tuning source when ``data`` is one
    (None for a shipped set or a score file)."""
    from simstudy.schema import ConfigError

    if opts.data in DATASETS:
        options = dict(opts.options) if opts.data == "deberta_mnli" else {}
        scores = {m: x * opts.scale for m, x in load_models(opts.data, **options).items()}
        outside = {m: x for m, x in scores.items() if np.any((x < opts.low) | (x > opts.high))}
        if outside:
            m = next(iter(outside))
            raise ConfigError(f"{opts.data}: model {m} has scores outside [low, high] = [{opts.low}, {opts.high}]")
        return scores, None
    source = _source_of(opts)
    if source is not None:
        return _source_scores(source, opts), source
    _file_keys_iv(opts)
    # failed runs dropped or replaced are said by a DataWarning, which _main routes to the log
    scores = load_scores(
        opts.data,
        score_column=opts.score_column,
        model_column=opts.model_column,
        low=opts.low,
        high=opts.high,
        missing=opts.missing,
        scale=opts.scale,
        minimize=opts.minimize,
    )
    return scores, None


def select_scores(scores: dict, opts: Any) -> dict:
    """The models the data keys keep (``model``/``models``), at least ``min_models`` of them, each cut to
    ``sample_size`` runs: what every data command does to the scores it read (a file's, a shipped set's, or a
    notebook's arrays, :mod:`simstudy.notebook`).

    Parameters
    ----------
    scores : dict of str to numpy.ndarray
        Each model's scores, in score units and random-search order.
    opts : simstudy.commands._data.DataConfig
        The data keys.

    Returns
    -------
    dict of str to numpy.ndarray
        The models kept, in the order of ``models`` (else of ``scores``).

    Raises
    ------
    simstudy.schema.ConfigError
        A model named that ``scores`` does not hold; one model with ``compare=true``; ``sample_size`` above a
        model's runs.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> opts = curve.parse({"data": "runs.csv", "model": "b", "sample_size": 2}).data
    >>> select_scores({"a": np.arange(3.0), "b": np.arange(4.0)}, opts)
    {'b': array([0., 1.])}
    """
    from simstudy.schema import ConfigError

    if opts.models is not None:
        unknown = [m for m in opts.models if m not in scores]
        if unknown:
            raise ConfigError(
                f"model{'s' * (len(unknown) > 1)} {', '.join(unknown)} not in {opts.data} (its models: "
                f"{', '.join(scores)}): choose with model=NAME or models=[a,b]"
            )
        scores = {m: scores[m] for m in opts.models}
    if len(scores) < opts.min_models:
        raise ConfigError(f"compare=true needs at least two models, but {opts.data} has one: {', '.join(scores)}")
    if opts.sample_size is not None:
        try:  # the first sample_size runs, or a random subset keyed by sample_seed and the model
            scores = sample_runs(scores, opts.sample_size, opts.sample_seed)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return scores


#: The most trials the i.i.d. check's order test runs on (1.4 s for 10,000 trials on one core); a model with more
#: is said to be unchecked.
ORDER_TEST_MAX_N = 10_000
# The i.i.d. check's seed: a fixed constant, keyed by each model's name (never by the order of the models, by
# which others are read, or by n_jobs), so that a rerun writes the same p-values and the same page.
_ORDER_TEST_SEED = 36
# Words in a source's provenance that say its trials were not drawn by random search (a grid, an adaptive or
# quasi-random sampler); "not recorded" is no evidence either way (the readers say so, and so does the page).
_NOT_RANDOM = (
    "not random",
    "GridSampler",
    "CmaEsSampler",
    "TPESampler",
    "GPSampler",
    "genetic algorithm",
    "QMCSampler",
    "Bayesian optimization",
    "adaptive",
)


@dataclass(frozen=True)
class ModelCheck:
    """One model's i.i.d. check: what the source records of how its trials were proposed, and the order test.

    Parameters
    ----------
    model : str
        The model (a study of a tuning source).
    n : int
        The scores the check read (those the command uses), in order.
    order_by : str
        The order tested: ``"trial number"``, ``"start time (...)"`` (a source's), or ``"file order"``.
    provenance : tuple of str
        What the source records of its sampler, one fact a line; ``"not recorded ..."`` for a score file or a
        shipped set (never taken as proof of random search).
    left_out : str
        The trials left out because they did not complete, counted by state (``"2 failed, 1 pruned"``); empty if
        none.
    pvalue : float or None
        :func:`simstudy.stats.exchangeability.order_test`'s one-sided p-value; None below 2 scores.
    meaning : str
        What the test says, in words.
    not_random : bool
        Whether the test (p <= 0.05) or the provenance says the trials are not random search.

    Examples
    --------
    >>> check = ModelCheck("tpe", 14, "trial number", ("TPESampler ...",), "1 running", 0.001, "Not random ...", True)
    >>> check.not_random
    True
    """

    model: str
    n: int
    order_by: str
    provenance: tuple[str, ...]
    left_out: str
    pvalue: float | None
    meaning: str
    not_random: bool


@dataclass(frozen=True)
class Found:
    """What reading a data command's data found: the source's format, the direction used, each model's check.

    Parameters
    ----------
    source : str or None
        The tuning source's format (:data:`simstudy.sources.FORMATS`); None for a score file or a shipped set.
    minimize : bool
        Whether lower scores are better: the direction the source records where it does, else ``minimize=``.
    direction : str
        Which is better and where that came from, in words (``"lower is better: optuna.db records
        minimize"``).
    checks : tuple of ModelCheck
        One per model kept, in the models' order.

    Examples
    --------
    >>> Found(None, False, "higher is better (minimize=false)", ()).source is None
    True
    """

    source: str | None
    minimize: bool
    direction: str
    checks: tuple[ModelCheck, ...]


def read_data(opts: Any) -> tuple[dict, Found]:
    """:func:`load_data`, with what reading found: the direction a tuning source records, and each model's i.i.d.
    check (its provenance and :func:`~simstudy.stats.exchangeability.order_test` in trial or file order).

    A tuning source (:func:`simstudy.sources.sniff` knows the file by its content, or the Ray Tune directory) is
    read with :func:`simstudy.sources.read_source` (``objective``, ``metric`` and ``reduce`` passed on): each study
    is a model, its complete trials its scores in the source's order. Trials that did not complete (failed, pruned,
    running, waiting) are left out and counted per state (a :class:`DataWarning`); a complete trial without a value
    is a failed run as in a score file (``missing=error`` says where, ``missing=drop`` leaves it out). The direction
    the source records sets ``minimize``.

    Parameters
    ----------
    opts : simstudy.commands._data.DataConfig
        The data keys, cross-checked.

    Returns
    -------
    tuple of (dict of str to numpy.ndarray, Found)
        The scores as :func:`load_data` returns them, and what reading found.

    Raises
    ------
    simstudy.schema.ConfigError
        As :func:`load_data`; ``minimize=true`` where the source records ``maximize``; studies kept of differing
        directions; a key that does not apply (``objective``/``metric`` to a score file, ``score_column`` or
        ``missing=NUMBER`` to a tuning source).
    DataError
        The file cannot be read.

    Examples
    --------
    >>> from simstudy.commands import curve
    >>> scores, found = read_data(curve.parse({"data": "reuters_hedwig", "model": "mlp"}).data)
    >>> found.source, found.checks[0].order_by, round(found.checks[0].pvalue, 4)
    (None, 'file order', 0.7669)
    """
    scores, source = _read(opts)
    scores = select_scores(scores, opts)
    minimize, direction = _direction(source, scores, opts)
    studies = {} if source is None else {t.name: t for t in source.studies}
    shipped = "a shipped data set" if opts.data in DATASETS else "a score file"
    checks = []
    for model, x in scores.items():
        trials = studies.get(model)
        if trials is None:
            provenance = (f"not recorded: {shipped} says nothing of how its runs were proposed",)
            order_by, left_out = "file order", ""
        else:
            provenance, order_by = trials.provenance, trials.order_by
            left_out = ", ".join(f"{k} {s}" for s, k in trials.counts.items() if s != "complete")
        checks.append(check_model(model, np.asarray(x, dtype=np.float64), order_by, provenance, left_out, minimize))
    return scores, Found(None if source is None else source.format, minimize, direction, tuple(checks))


def check_model(
    model: str, x: np.ndarray, order_by: str, provenance: tuple[str, ...], left_out: str, minimize: bool
) -> ModelCheck:
    """One model's i.i.d. check: its provenance read for "not random search", and
    :func:`~simstudy.stats.exchangeability.order_test` on its scores in order, seeded by the model's name.

    Parameters
    ----------
    model : str
        The model (its name keys the test's seed: the same scores give the same p-value on every run).
    x : ndarray of float64, shape (n,)
        Its scores, in trial (or file) order.
    order_by : str
        What that order is (``"trial number"``, ``"file order"``).
    provenance : tuple of str
        What the source records of its sampler, one fact a line.
    left_out : str
        The trials left out, counted by state (empty if none).
    minimize : bool
        Whether lower scores are better (the test looks for later trials scoring better).

    Returns
    -------
    ModelCheck
        The check; below 2 scores (or with a NaN) no test, said in ``meaning``.

    Examples
    --------
    >>> check = check_model("a", np.arange(10.0), "trial number", ("not recorded",), "", False)
    >>> round(check.pvalue, 4), check.not_random
    (0.0001, True)
    """
    from simstudy.stats.exchangeability import order_test

    said = any(
        w in line for line in provenance for w in _NOT_RANDOM if not line.startswith(("not recorded", "sampler not"))
    )
    if x.size < 2 or np.isnan(x).any():
        return ModelCheck(model, x.size, order_by, provenance, left_out, None, "Too few scores to test.", said)
    if x.size > ORDER_TEST_MAX_N:  # its permutations cost about n x 10^4: above this, seconds per model
        untested = (
            f"Not tested: {x.size:,} trials are more than the order test takes here ({ORDER_TEST_MAX_N:,}); the "
            f"numbers assume i.i.d. random search without this check."
        )
        return ModelCheck(model, x.size, order_by, provenance, left_out, None, untested, said)
    res = order_test(x, minimize=minimize, rng=_sample_rng(_ORDER_TEST_SEED, model))
    pvalue, meaning = float(res.pvalue), str(res.meaning)  # one score set: a float and a string
    return ModelCheck(model, x.size, order_by, provenance, left_out, pvalue, meaning, said or pvalue <= res.alpha)


def _direction(source, scores: dict, opts: Any) -> tuple[bool, str]:
    """``minimize`` and its origin in words: the direction the source records for the models kept, else the key."""
    from simstudy.schema import ConfigError

    said = f"{'lower' if opts.minimize else 'higher'} is better (minimize={'true' if opts.minimize else 'false'})"
    if source is None:
        return opts.minimize, said
    recorded = {t.name: t.direction for t in source.studies if t.name in scores and t.direction is not None}
    if not recorded:
        return opts.minimize, f"{said}; {opts.data} records no direction"
    if len(set(recorded.values())) > 1:
        listed = ", ".join(f"{m} ({d})" for m, d in recorded.items())
        raise ConfigError(
            f"{opts.data}: the studies kept differ in direction: {listed}; pick those of one direction with "
            f"models=[...]"
        )
    (direction,) = set(recorded.values())
    if opts.minimize and direction == "maximize":
        model = next(iter(recorded))
        raise ConfigError(
            f"minimize=true contradicts {opts.data}, which records direction maximize for {model}: drop minimize="
        )
    lower = direction == "minimize"
    return lower, f"{'lower' if lower else 'higher'} is better: {opts.data} records {direction}"


def _source_of(opts: Any):
    """The tuning source ``data`` names (:func:`simstudy.sources.read_source`), or None for a file of scores (or
    one that is not there, or not a regular file or directory, such as a FIFO: the score reader says so, as it
    always has, without opening it)."""
    from simstudy import sources

    path = opts.data
    file = sources.local_path(path)
    if not (os.path.isfile(file) or os.path.isdir(file)) or sources.sniff(path) is None:
        return None

    def source(study: str | None):
        return sources.read_source(
            path,
            study=study,
            objective=getattr(opts, "objective", None) or 0,
            metric=getattr(opts, "metric", None),
            reduce=getattr(opts, "reduce", None),
        )

    if opts.models is None:
        return source(None)
    # the models named, each read as its own study: objective= or metric= need fit only those
    read = [source(m) for m in opts.models]
    return dataclasses.replace(read[0], studies=tuple(t for r in read for t in r.studies))


def _file_keys_iv(opts: Any) -> None:
    """The keys of a tuning source, given with a file of scores: refused in one line, never ignored."""
    from simstudy.schema import ConfigError

    for key in ("objective", "metric", "reduce"):
        value = getattr(opts, key, None)
        if value is not None:
            also = "deberta_mnli's learning curves and " if key == "reduce" else ""
            raise ConfigError(
                f"{key}={value} applies to {also}tuning sources (an Optuna storage, a Ray Tune directory, ...) only; "
                f"{opts.data} is a file of scores: drop {key}="
            )


def _source_scores(source, opts: Any) -> dict[str, np.ndarray]:
    """Each study's complete trials as a model's scores, in the source's order (scaled, checked against [low,
    high]); the trials that did not complete left out, and said."""
    import warnings

    from simstudy.schema import ConfigError

    for key in ("score_column", "model_column"):
        if getattr(opts, key) is not None:
            raise ConfigError(
                f"{key}={getattr(opts, key)} applies to score files only; {opts.data} is a tuning source whose "
                f"studies are the models (model=NAME picks one): drop {key}="
            )
    if not isinstance(opts.missing, str):
        raise ConfigError(
            f"missing={opts.missing:g} applies to score files only; {opts.data} is a tuning source, whose trials "
            f"that did not complete are left out and counted: drop missing="
        )
    names = [t.name for t in source.studies]
    twice = sorted({m for m in names if names.count(m) > 1})
    if twice:
        raise DataError(f"{opts.data}: two studies are named {twice[0]!r}; each must have its own name to be a model")
    wanted = set(opts.models) if opts.models is not None else set(names)
    scores, left = {}, []
    for t in source.studies:
        x = t.complete * opts.scale
        if t.name not in wanted:
            scores[t.name] = x  # not kept (select_scores names the models there): unchecked
            continue
        bad = np.flatnonzero(np.isnan(x))
        if bad.size and opts.missing != "drop":
            raise DataError(
                f"{opts.data}: study {t.name!r}: {bad.size} complete trial(s) without a value (the first the "
                f"{bad[0] + 1}th complete, by {t.order_by}): leave them out with missing=drop"
            )
        x = x[~np.isnan(x)]
        if np.any((x < opts.low) | (x > opts.high)):
            raise ConfigError(
                f"{opts.data}: study {t.name!r} has scores outside [low, high] = [{opts.low}, {opts.high}]"
            )
        if x.size < 2 and opts.models is None:  # a study of no use here (MLflow's empty Default): said, not refused
            left.append(f"{t.name}: every trial ({x.size} with a value: a model needs 2)")
            continue
        if x.size < 2:
            raise DataError(
                f"{opts.data}: study {t.name!r} has {x.size} complete trial(s) with a value; a model needs at least "
                f"2: leave it out with models=[...]"
            )
        scores[t.name] = x
        counts = {s: k for s, k in t.counts.items() if s != "complete"}
        dropped = bad.size if opts.missing == "drop" else 0
        if counts or dropped:
            parts = [f"{k} {s}" for s, k in counts.items()] + [f"{dropped} without a value"] * bool(dropped)
            left.append(f"{t.name}: {sum(counts.values()) + dropped} ({', '.join(parts)})")
    if left:
        warnings.warn(
            DataWarning(f"{opts.data}: left out the trials that did not complete, per model: {'; '.join(left)}"),
            stacklevel=2,
        )
    return scores


def source_scores(
    path: str,
    *,
    model: str | None = None,
    objective: int | None = None,
    metric: str | None = None,
    reduce: str | None = None,
    missing: str | float = "error",
    scale: float = 1.0,
    low: float = -np.inf,
    high: float = np.inf,
) -> dict[str, np.ndarray] | None:
    """A tuning source's scores by model, read as the data commands read it (:func:`read_data`); None when
    ``path`` is no tuning source (a score file: :func:`read_scores` reads it). What an audit's distribution
    (``kde_atoms`` with ``path=``) is fitted to, so that it sees the very scores the command read.

    Parameters
    ----------
    path : str
        The source (a file, a directory, or ``sqlite:///FILE``).
    model : str or None, keyword-only
        Only this study; None: every one.
    objective, metric, reduce : keyword-only
        As the data keys of the same names (:func:`simstudy.sources.read_source`).
    missing, scale, low, high : keyword-only
        As the data keys of the same names.

    Returns
    -------
    dict of str to numpy.ndarray, or None
        Each study's complete trials' scores, in the source's order; None for a file that is no source.

    Raises
    ------
    DataError, simstudy.schema.ConfigError
        As :func:`read_data`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     csv = pathlib.Path(tmp) / "s.csv"
    ...     _ = csv.write_text("score\\n0.1\\n0.2\\n")
    ...     source_scores(str(csv)) is None
    True
    """
    import types

    opts = types.SimpleNamespace(
        data=path,
        models=None if model is None else (model,),
        objective=objective,
        metric=metric,
        reduce=reduce,
        missing=missing,
        scale=scale,
        low=low,
        high=high,
        score_column=None,
        model_column=None,
    )
    source = _source_of(opts)
    return None if source is None else _source_scores(source, opts)
