"""Distributions of real scores: a shipped data set's model or a researcher's file, as a bag or a KDE.

The builders of the kinds ``empirical``, ``file``, ``kde`` and ``kde_atoms`` (:data:`simstudy.distributions.KINDS`);
the scores come from :mod:`simstudy.datasets`, imported on first use (only these kinds read data files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simstudy.distributions.base import InvalidParameter
from simstudy.distributions.kde import KDEWithAtoms, ReflectedKDE
from simstudy.distributions.laws import Bag

__all__ = []


def dataset_bag(*, dataset: str, model: str, name: str | None = None, **options: Any) -> Bag:
    """The empirical distribution of a shipped data set's scores for one model."""
    from simstudy import datasets  # imported here: only empirical distributions need the data files

    return Bag(datasets.load_dataset(dataset, model, **options), name=name or f"{dataset}:{model}")


def file_bag(
    *,
    path: str,
    model: str | None = None,
    score_column: str | None = None,
    model_column: str | None = None,
    missing: str | float = "error",
    scale: float = 1.0,
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
) -> Bag:
    """The empirical distribution of a researcher's own scores (CSV, TSV, JSON Lines or JSON file).

    ``model`` picks one model when the file holds several; scores outside [low, high] are an error; failed runs
    (``missing``) and ``scale`` as in :func:`simstudy.datasets.read_scores`.
    """
    from simstudy import datasets

    # load_scores, not read_scores: dropped or replaced failed runs are said (a DataWarning the CLI logs)
    by_model = datasets.load_scores(
        path, score_column=score_column, model_column=model_column, low=low, high=high, missing=missing, scale=scale
    )
    if model is None:
        if len(by_model) != 1:
            raise InvalidParameter("model", f"must name one of the file's models ({', '.join(by_model)})", model)
        model = next(iter(by_model))
    elif model not in by_model:
        raise InvalidParameter("model", f"must be one of the file's models ({', '.join(by_model)})", model)
    return Bag(by_model[model], name=name or f"{Path(path).stem}:{model}")


#: How a score file is read (:func:`simstudy.datasets.read_scores`): a distribution fitted to a file takes these.
_READ_OPTIONS = ("score_column", "model_column", "missing", "scale")
#: How a tuning source is read (:func:`simstudy.datasets.source_scores`), besides ``missing`` and ``scale``.
_SOURCE_OPTIONS = ("objective", "metric", "reduce")


def _fit_scores(
    dataset: str | None, model: str | None, path: str | None, low: float, high: float, options: dict
) -> tuple[np.ndarray, str]:
    """The scores a KDE is fitted to (a shipped data set's model, or a file's) and a default label."""
    from simstudy import datasets

    if (dataset is None) == (path is None):
        raise InvalidParameter("dataset", "or path must be given (exactly one)", dataset)
    if dataset is not None:
        if model is None:
            raise InvalidParameter("model", "must name a model of the data set", model)
        read = {k: options.pop(k) for k in _READ_OPTIONS if k in options}
        scale = read.pop("scale", 1.0)
        return datasets.load_dataset(dataset, model, **options) * scale, f"{dataset}:{model}"
    assert path is not None  # exactly one of dataset and path: dataset returned above
    source = {k: options.pop(k) for k in _SOURCE_OPTIONS if k in options}  # a tuning source's keys (issue 36)
    read = {k: v for k, v in options.items() if k in _READ_OPTIONS}
    if set(options) - set(read):
        raise InvalidParameter(sorted(set(options) - set(read))[0], "is not an option of a score file", None)
    read.pop("score_column", None) if source else None
    found = datasets.source_scores(
        path, model=model, low=low, high=high, **source, **{k: v for k, v in read.items() if k in ("missing", "scale")}
    )
    by_model = found if found is not None else datasets.read_scores(path, low=low, high=high, **read).scores
    model = model or next(iter(by_model))
    if model not in by_model:
        raise InvalidParameter("model", f"must be one of the file's models ({', '.join(by_model)})", model)
    return by_model[model], f"{Path(path).stem}:{model}"


def kde(
    *,
    dataset: str | None = None,
    model: str | None = None,
    path: str | None = None,
    bandwidth: float | None = None,
    bw_factor: float | None = None,
    bw_of: str = "reflected",
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
    minimize: bool = False,
    **options: Any,
) -> ReflectedKDE:
    """A reflected KDE fitted to a shipped data set's model (``dataset``, ``model``, options) or a file;
    ``minimize``: fitted to ``-x`` on ``[-high, -low]`` (the distribution of ``-X``)."""
    scores, label = _fit_scores(dataset, model, path, low, high, options)
    if minimize:
        scores, low, high = -scores, -high, -low
    return ReflectedKDE.fit(
        scores, bandwidth=bandwidth, bw_factor=bw_factor, bw_of=bw_of, low=low, high=high, name=name or f"kde:{label}"
    )


def kde_atoms(
    *,
    dataset: str | None = None,
    model: str | None = None,
    path: str | None = None,
    bw_method: str = "isj",
    bandwidth: float | None = None,
    bw_factor: float | None = None,
    bw_of: str = "reflected",
    find_atoms: bool = True,
    low: float = 0.0,
    high: float = 1.0,
    name: str | None = None,
    minimize: bool = False,
    **options: Any,
) -> KDEWithAtoms:
    """Atoms plus a reflected KDE (:meth:`KDEWithAtoms.fit`) of a shipped data set's model or a file's scores;
    ``minimize``: fitted to ``-x`` on ``[-high, -low]`` (the distribution of ``-X``)."""
    scores, label = _fit_scores(dataset, model, path, low, high, options)
    if minimize:
        scores, low, high = -scores, -high, -low
    return KDEWithAtoms.fit(
        scores,
        bw_method=bw_method,
        bandwidth=bandwidth,
        bw_factor=bw_factor,
        bw_of=bw_of,
        find_atoms=find_atoms,
        low=low,
        high=high,
        name=name or f"kde_atoms:{label}",
    )
