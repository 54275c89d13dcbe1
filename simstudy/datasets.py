"""Score data: a researcher's own files (:func:`load_scores`) and three shipped data sets.

Every loader returns float64 arrays of scores in file order and raises :class:`DataError` with a one-line
message naming the file, the row and the offending value. All values pass through :func:`_score`, the one
place that turns a raw value into a validated float. Shipped data (``simstudy/data``, see its README for
sources and licences) is cached and returned as read-only arrays, so callers cannot corrupt the cache.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DataError", "load_scores", "reuters_hedwig", "deberta_mnli", "tdsa_fiesta", "DATASETS",
           "load_dataset", "load_models"]

SUFFIXES = (".csv", ".json", ".jsonl", ".tsv")
DATASETS: Mapping[str, str] = MappingProxyType({
    "deberta_mnli": "DeBERTa/DeBERTaV3 on MultiNLI, 1,024 random-search runs each, validation accuracy "
                    "(Lourie, Cho & He 2023); models: deberta, debertav3",
    "reuters_hedwig": "hedwig document classifiers on Reuters, dev-set F1 (Tang et al. 2020); "
                      "models: mlp (145 runs), lstm (152 runs)",
    "tdsa_fiesta": "12 target-dependent sentiment models, 500 runs each, test F1 (Moss et al. 2019)",
})
_DEBERTA_FILES = {"deberta": "deberta-base.results.jsonl", "debertav3": "deberta-v3-base.results.jsonl"}
_SPLITS = ("matched", "mismatched")
_REDUCES = ("best", "final")

Row = tuple[str, dict[str, Any]]  # (where, record): where is "row 7" or "item ['mlp'][3]"


class DataError(ValueError):
    """Invalid score data. The message is one line naming the file, the row and the offending value."""


def _choice_iv(what: str, value: Any, valid: Iterable[str]) -> str:
    valid = sorted(valid)
    if not isinstance(value, str) or value not in valid:
        raise ValueError(f"unknown {what} {value!r}; choose one of: {', '.join(valid)}")
    return value


def _path_iv(path: str | os.PathLike) -> Path:
    path = Path(path).expanduser()
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(f"{path}: unknown file type {path.suffix!r}; supported: {', '.join(SUFFIXES)}")
    return path


def _support_iv(low: float, high: float, min_scores: int) -> tuple[float, float, int]:
    low, high = float(low), float(high)
    if not low <= high:  # also rejects NaN
        raise ValueError(f"need low <= high, got low={low}, high={high}")
    if isinstance(min_scores, bool) or not isinstance(min_scores, (int, np.integer)) or min_scores < 1:
        raise ValueError(f"min_scores must be an integer >= 1, got {min_scores!r}")
    return low, high, int(min_scores)


def _columns_iv(columns: list[str], score_column: str | None, model_column: str | None,
                name: str) -> tuple[str, str | None]:
    listing = f"(columns: {', '.join(columns)})"
    if score_column is None:
        score_column = columns[0] if len(columns) == 1 else "score"
    if score_column not in columns:
        raise DataError(f"{name}: missing column {score_column!r} {listing}")
    if model_column is None:
        model_column = "model" if "model" in columns and score_column != "model" else None
    elif model_column not in columns:
        raise DataError(f"{name}: missing column {model_column!r} {listing}")
    return score_column, model_column


def _score(raw: Any, name: str, where: str, label: str, low: float, high: float) -> float:
    """Turn one raw value (a CSV string or a JSON value) into a float in ``[low, high]``, or raise."""
    # bool is an int subclass, and float(True) == 1.0 would silently pass; None/lists are not scores either
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise DataError(f"{name}: {where}: {label} is not a number: {raw!r}")
    try:
        x = float(raw)
    except (ValueError, OverflowError):  # OverflowError: a JSON integer too large for a float
        raise DataError(f"{name}: {where}: {label} is not a number: {raw!r}") from None
    shown = raw.strip() if isinstance(raw, str) else repr(raw)
    if not math.isfinite(x):
        raise DataError(f"{name}: {where}: {label} {shown} is not finite")
    if not low <= x <= high:
        raise DataError(f"{name}: {where}: {label} {shown} is outside the support [{low:g}, {high:g}]")
    return x


def _records(source: Any, name: str) -> tuple[list[str], list[Row]]:
    """Read a file (a Path or an importlib Traversable) into its column names and (where, record) rows."""
    suffix = PurePath(source.name).suffix.lower()
    try:
        text = source.read_text(encoding="utf-8-sig")  # -sig: spreadsheet exports often start with a BOM
    except FileNotFoundError:
        raise DataError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{name}: cannot read: {exc}") from None
    if not text.strip():
        raise DataError(f"{name}: file is empty")
    if suffix in (".csv", ".tsv"):
        try:  # dtype=str and no NA parsing keep the raw strings, so errors can quote exactly what was there
            df = pd.read_csv(io.StringIO(text), sep="\t" if suffix == ".tsv" else ",", dtype=str,
                             na_filter=False, skip_blank_lines=False)
        except (pd.errors.ParserError, ValueError) as exc:
            raise DataError(f"{name}: cannot parse: {' '.join(str(exc).split())}") from None
        columns = [str(c) for c in df.columns]
        # blank lines are kept by the parser so that index i is line i + 2 (after the header); drop them here.
        # (A quoted field spanning lines would shift the count; score files do not have them.)
        rows = [(f"row {i + 2}", dict(zip(columns, values)))
                for i, values in enumerate(df.itertuples(index=False, name=None)) if any(values)]
        return columns, rows
    if suffix == ".jsonl":
        rows = []
        for i, line in enumerate(text.split("\n"), 1):  # not splitlines(): JSON strings may hold U+2028
            if line.strip():
                rows.append((f"row {i}", _json(line, name, f"row {i}")))
        return list(dict.fromkeys(k for _, r in rows for k in r)), rows
    obj = _json(text, name, None)
    if isinstance(obj, dict):  # {model: [scores]}: flatten to the same (model, score) rows as a table
        rows = []
        for model, values in obj.items():
            if not isinstance(values, list):
                raise DataError(f"{name}: item [{model!r}]: expected a list of scores, got {values!r:.60}")
            rows += [(f"item [{model!r}][{j}]", {"model": model, "score": v}) for j, v in enumerate(values)]
        return ["model", "score"], rows
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise DataError(f"{name}: expected an object of model -> scores or a list of objects, "
                        f"got {obj!r:.60}")
    return list(dict.fromkeys(k for r in obj for k in r)), [(f"item [{j}]", r) for j, r in enumerate(obj)]


def _json(text: str, name: str, where: str | None) -> Any:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: {where or f'row {exc.lineno}'}: not valid JSON ({exc.msg})") from None
    if where is not None and not isinstance(obj, dict):  # a JSONL line must be an object
        raise DataError(f"{name}: {where}: expected a JSON object, got {obj!r:.60}")
    return obj


def _scores(rows: list[Row], columns: list[str], name: str, *, score_column: str | None,
            model_column: str | None, default_model: str, low: float, high: float,
            min_scores: int) -> dict[str, np.ndarray]:
    """Pick the score and model columns, validate every score and group them by model, in file order."""
    if not rows:
        raise DataError(f"{name}: no scores")
    score_column, model_column = _columns_iv(columns, score_column, model_column, name)
    groups: dict[str, list[float]] = {}
    for where, record in rows:
        model = default_model if model_column is None else record.get(model_column)
        if model is None or str(model).strip() == "":
            raise DataError(f"{name}: {where}: {model_column} is missing: {model!r}")
        if score_column not in record:
            raise DataError(f"{name}: {where}: missing {score_column!r}")
        x = _score(record[score_column], name, where, score_column, low, high)
        groups.setdefault(str(model).strip(), []).append(x)  # strip: "mlp " is a typo, not another model
    for model, xs in groups.items():
        if len(xs) < min_scores:
            raise DataError(f"{name}: model {model!r} has {len(xs)} score{'s' * (len(xs) != 1)}; "
                            f"at least {min_scores} are needed")
    return {model: np.asarray(xs, dtype=np.float64) for model, xs in groups.items()}


def load_scores(path: str | os.PathLike, *, score_column: str | None = None, model_column: str | None = None,
                low: float = -np.inf, high: float = np.inf, min_scores: int = 2) -> dict[str, np.ndarray]:
    """Load and validate scores from a researcher's own file.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.csv``, ``.tsv``, ``.jsonl`` (one JSON object per line) or ``.json`` file (an object mapping
        model -> list of scores, or a list of objects).
    score_column : str, optional
        Column of scores. Default: the only column, else one named ``score``.
    model_column : str, optional
        Column of model names. Default: ``model`` if present, else one model named after the file stem.
    low, high : float
        Support of the scores.
    min_scores : int
        Fewest scores a model may have.

    Returns
    -------
    dict of str to numpy.ndarray
        Model name -> float64 1-D array of its scores, in file order.

    Raises
    ------
    DataError
        Missing, unreadable, empty or unknown type of file; missing column; a value that is not a finite
        number in ``[low, high]``; a model with fewer than `min_scores` scores.
    """
    path = _path_iv(path)
    low, high, min_scores = _support_iv(low, high, min_scores)
    columns, rows = _records(path, str(path))
    return _scores(rows, columns, str(path), score_column=score_column, model_column=model_column,
                   default_model=path.stem, low=low, high=high, min_scores=min_scores)


@lru_cache(maxsize=None)  # the DeBERTa files are parsed once for all split/reduce combinations
def _shipped(folder: str, file: str) -> tuple[list[str], list[Row]]:
    return _records(resources.files("simstudy") / "data" / folder / file, file)


@lru_cache(maxsize=None)
def _shipped_scores(folder: str, file: str, score_column: str, model_column: str) -> dict[str, np.ndarray]:
    columns, rows = _shipped(folder, file)
    scores = _scores(rows, columns, file, score_column=score_column, model_column=model_column,
                     default_model="", low=0.0, high=1.0, min_scores=2)
    for x in scores.values():
        x.flags.writeable = False  # cached and shared by every caller
    return scores


def reuters_hedwig() -> dict[str, np.ndarray]:
    """Dev-set F1 of hedwig's ``mlp`` (145 runs) and ``lstm`` (``reg_lstm``, 152 runs) on Reuters.

    Returns
    -------
    dict of str to numpy.ndarray
        ``{"mlp": ..., "lstm": ...}``, read-only float64 arrays in file order.
    """
    scores = _shipped_scores("reuters_hedwig", "hedwig.tsv", "f1", "model_name")
    return {"mlp": scores["mlp"], "lstm": scores["reg_lstm"]}


@lru_cache(maxsize=None)
def _deberta(model: str, split: str, reduce: str) -> np.ndarray:
    file = _DEBERTA_FILES[model]
    _, rows = _shipped("deberta_mnli", file)
    values = []
    for where, record in rows:
        try:
            accs = [acc for _step, acc in record["learning_curves"][split]]
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{file}: {where}: learning_curves.{split} is not a list of [step, accuracy]"
                            ) from None
        if not accs:
            raise DataError(f"{file}: {where}: learning_curves.{split} is empty")
        accs = [_score(a, file, where, f"{split} accuracy", 0.0, 1.0) for a in accs]
        values.append(max(accs) if reduce == "best" else accs[-1])
    x = np.asarray(values, dtype=np.float64)
    x.flags.writeable = False
    return x


def deberta_mnli(model: str, *, split: str = "matched", reduce: str = "best") -> np.ndarray:
    """MultiNLI validation accuracy of 1,024 random-search runs of DeBERTa or DeBERTaV3 (Lourie et al.).

    Parameters
    ----------
    model : {"deberta", "debertav3"}
    split : {"matched", "mismatched"}
        MultiNLI validation set.
    reduce : {"best", "final"}
        Each run's best accuracy over its learning curve (what Lourie et al.'s analyses use) or its last.

    Returns
    -------
    numpy.ndarray
        Read-only float64 array of 1,024 accuracies in file order.
    """
    return _deberta(_choice_iv("deberta_mnli model", model, _DEBERTA_FILES),
                    _choice_iv("split", split, _SPLITS), _choice_iv("reduce", reduce, _REDUCES))


def tdsa_fiesta() -> dict[str, np.ndarray]:
    """Test-set F1 of 12 target-dependent sentiment analysis models, 500 runs each (Moss et al. 2019).

    Returns
    -------
    dict of str to numpy.ndarray
        Model name -> read-only float64 array of 500 F1 values.
    """
    return dict(_shipped_scores("tdsa_fiesta", "test_f1.json", "score", "model"))


def load_models(name: str, **options: str) -> dict[str, np.ndarray]:
    """Every model's scores of a shipped data set, by name (see :data:`DATASETS`); options as in
    :func:`load_dataset`. Returns model name -> read-only float64 array."""
    name = _choice_iv("dataset", name, DATASETS)
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
    model : str
        A model of that data set.
    **options
        ``split`` and ``reduce`` for ``deberta_mnli`` (see :func:`deberta_mnli`); none for the others.

    Returns
    -------
    numpy.ndarray
        Read-only float64 array.
    """
    name = _choice_iv("dataset", name, DATASETS)
    if name == "deberta_mnli":
        for option in options:
            _choice_iv("deberta_mnli option", option, ("reduce", "split"))
        return deberta_mnli(model, **options)
    if options:
        raise ValueError(f"{name} takes no options, got: {', '.join(options)}")
    scores = reuters_hedwig() if name == "reuters_hedwig" else tdsa_fiesta()
    return scores[_choice_iv(f"{name} model", model, scores)]
