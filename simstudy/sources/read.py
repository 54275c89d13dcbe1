"""Read tuning results where they live: :func:`sniff` names a file's format, :func:`read_source` reads it.

Standard library only (``sqlite3``, ``json``, ``csv``, ``zipfile``) and numpy: no tuning framework is needed to read, and no pickle is
ever opened. A SQLite file is opened read-only (``mode=ro``): a study still being written is never locked or
changed, and a writer holding it past ``timeout`` seconds is one line, not a wait. Every bad input (a file that
is no source, a corrupted or truncated database, a schema this reader does not know, a study that is not there,
more rows than memory allows) is one :class:`~simstudy.score_files.DataError` line naming the file, the item and
the value, and what would fix it; nothing is written.

=====================  ======================================================================================
name                   what it does
=====================  ======================================================================================
:func:`sniff`          the format of a file (one of :data:`~simstudy.sources.types.FORMATS`), or None
:func:`read_source`    every study of a source (or one), as :class:`~simstudy.sources.types.Trials`
=====================  ======================================================================================
"""

from __future__ import annotations

import dataclasses
import math
import os
import stat
from collections.abc import Callable
from pathlib import Path

from simstudy.score_files import DataError
from simstudy.sources import (
    _bohb,
    _files,
    _mlflow,
    _optuna_journal,
    _optuna_rdb,
    _ray,
    _smac,
    _sqlite,
    _synetune,
    _wandb,
)
from simstudy.sources.types import FORMATS, Source, Trials

__all__ = ["sniff", "read_source", "local_path"]

_SQLITE_URL = "sqlite:///"


def local_path(path: str) -> str:
    """The file a path or a ``sqlite:///FILE`` URL names, as Optuna and MLflow (SQLAlchemy) read the URL:
    ``sqlite:///rel.db`` is relative, ``sqlite:////abs.db`` absolute; any other text is itself.

    Parameters
    ----------
    path : str
        A data command's ``data=``: a path, or a ``sqlite:///FILE`` URL.

    Returns
    -------
    str
        The path of the file (or directory) it names.

    Examples
    --------
    >>> local_path("sqlite:///study.db"), local_path("sqlite:////tmp/study.db"), local_path("runs.csv")
    ('study.db', '/tmp/study.db', 'runs.csv')
    """
    return path[len(_SQLITE_URL) :] if path.startswith(_SQLITE_URL) else path


def _path_iv(path: str | os.PathLike) -> tuple[Path, str]:
    """The file a path or ``sqlite:///`` URL names, and its name for messages; one line if it is no file."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text.startswith(_SQLITE_URL):
        text = local_path(text)
    elif "://" in text:
        raise DataError(f"{text}: only files are read (a SQLite file or sqlite:///FILE); export the storage to one")
    file = Path(text).expanduser()
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        raise DataError(f"{text}: no such file") from None
    except OSError as exc:
        raise DataError(f"{text}: cannot read: {exc.strerror}") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a FIFO would block the read
        raise DataError(f"{text}: not a regular file or a directory; give a tuning source's file or directory")
    return file, text


def _sqlite_format(file: Path, name: str, timeout: float) -> str | None:
    _sqlite.check_header(file, name)
    con = _sqlite.connect(file, name, timeout)
    try:
        found = _sqlite.tables(con, name, timeout)
    finally:
        con.close()
    if _optuna_rdb.TABLES <= found:
        return "optuna-rdb"
    if _mlflow.TABLES <= found:
        return "mlflow-sqlite"
    return None


def _timeout_iv(timeout: float) -> float:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not (math.isfinite(timeout) and timeout >= 0)
    ):
        raise ValueError(f"timeout must be a finite number of seconds >= 0, got {timeout!r}")
    return float(timeout)


def sniff(path: str | os.PathLike, *, timeout: float = 5.0) -> str | None:
    """The format of a tuning source, from its content (never its suffix), or None for a file of no known format.

    A SQLite file is told by its tables (Optuna's ``studies`` and ``trials``, MLflow's ``experiments`` and
    ``runs``), opened read-only; an Optuna journal by its first line (a JSON operation with an ``op_code``); a
    Syne Tune zip by its CSV's ``trial_id`` and ``st_*`` columns; HpBandSter's files by their first line (a config
    id of three integers); a SMAC runhistory by its opening ``{"stats"``/``{"data"`` and its ``configs``; a W&B
    export by its header (``Name``, ``State`` and W&B's own columns). A directory is told by what it holds:
    ``results.csv.zip`` (Syne Tune), ``configs.json`` and ``results.json`` (HpBandSter), ``runhistory.json``
    (SMAC3; or a directory per seed holding one), or trial directories with ``result.json``/``progress.csv`` or an
    ``experiment_state-*.json`` (Ray Tune; or a directory of such experiments). One Ray trial's ``result.json`` or ``progress.csv`` is ``"ray-tune"`` too, so that it is never read as
    a trial per iteration (:func:`read_source` asks for the experiment directory).

    Parameters
    ----------
    path : str or os.PathLike
        The file or directory, or a ``sqlite:///FILE`` URL as Optuna and MLflow take it.
    timeout : float, keyword-only, default 5.0
        Seconds to wait for a process writing a SQLite file to release its lock.

    Returns
    -------
    str or None
        One of :data:`~simstudy.sources.types.FORMATS` (``"optuna-rdb"``, ``"ray-tune"``, ...); None for any other
        file or directory (a CSV of scores, garbage, another SQLite database).

    Raises
    ------
    DataError
        If the file is missing or not a regular file, or is a SQLite file that cannot be read (truncated,
        corrupted, locked past ``timeout``).
    ValueError
        If ``timeout`` is not a finite number >= 0.

    Examples
    --------
    >>> import pathlib, sqlite3, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     journal = pathlib.Path(tmp) / "journal.log"
    ...     _ = journal.write_text('{"op_code": 0, "worker_id": "w", "study_name": "svm", "directions": [2]}\\n')
    ...     other = pathlib.Path(tmp) / "other.db"
    ...     sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    ...     sniff(journal), sniff(other)
    ('optuna-journal', None)
    """
    file, name = _path_iv(path)
    return _sniff(file, name, _timeout_iv(timeout))


def _sniff(file: Path, name: str, timeout: float) -> str | None:
    if file.is_dir():
        return _dir_format(file)
    if _sqlite.is_sqlite(file):
        return _sqlite_format(file, name, timeout)
    if _optuna_journal.looks_like_journal(file):
        return "optuna-journal"
    if _synetune.looks_like_results(file):
        return "syne-tune"
    if _bohb.looks_like_results(file):
        return "hpbandster"
    if _smac.looks_like_runhistory(file):
        return "smac3"
    if _ray.looks_like_result(file) or _ray_progress(file):
        return "ray-tune"  # one trial's reports: read_source names the experiment directory to give instead
    if _wandb.looks_like_export(file):
        return "wandb-csv"
    return None


def _dir_format(folder: Path) -> str | None:
    """A directory's format from the files in it (never a symlink), in the order a directory is least ambiguous."""

    def has(*names: str) -> bool:
        return all((folder / n).is_file() and not (folder / n).is_symlink() for n in names)

    if has(_synetune.RESULTS):  # by its name: a zip too damaged to open is Syne Tune's, and said so
        return "syne-tune"
    if has(*_bohb.FILES) and any(_bohb.looks_like_results(folder / f) for f in _bohb.FILES):  # results may be empty
        return "hpbandster"
    if has("runhistory.json") and _smac.looks_like_runhistory(folder / "runhistory.json"):
        return "smac3"
    if _ray.looks_like_experiment(folder):
        return "ray-tune"
    if _children(folder, _smac_run):  # SMAC's output of one scenario: a directory per seed
        return "smac3"
    if _children(folder, _ray.looks_like_experiment):  # Ray's storage path (~/ray_results): an experiment each
        return "ray-tune"
    return None


def _smac_run(folder: Path) -> bool:
    history = folder / "runhistory.json"
    return history.is_file() and not history.is_symlink() and _smac.looks_like_runhistory(history)


def _children(folder: Path, test: Callable[[Path], bool]) -> list[Path]:
    """The subdirectories of ``folder`` that pass ``test``, by name; a symlink is never followed (nor tested)."""
    try:
        with os.scandir(folder) as it:
            subs = sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [sub for sub in subs if test(sub)]


def _ray_progress(file: Path) -> bool:
    """Whether a file is one Ray Tune trial's ``progress.csv`` (its header has ``trial_id`` and ``training_iteration``)."""
    try:
        with open(file, encoding="utf-8", errors="replace") as f:
            header = f.readline(1 << 16).strip().split(",")
    except OSError:
        return False
    return "trial_id" in header and "training_iteration" in header


def _pick(studies: tuple[Trials, ...], study: str | None, name: str) -> tuple[Trials, ...]:
    """The study named ``study`` of a one-study source (all of them for None); one line if it is not there."""
    if study is None or any(t.name == study for t in studies):
        return tuple(t for t in studies if study is None or t.name == study)
    listed = ", ".join(repr(t.name) for t in studies)
    raise DataError(f"{name}: no study {study!r}; the source holds {listed}")


def _read_files(
    kind: str, file: Path, name: str, study: str | None, objective: int, metric: str | None, reduce: str | None
) -> Source:
    """A source of the file-based formats (every one but SQLite's and Optuna's journal)."""
    folder = file if file.is_dir() else file.parent
    version = None
    if kind == "ray-tune":
        if not file.is_dir():
            raise DataError(
                f"{name}: one Ray Tune trial's reports (a line or row per training iteration, not a trial each): give "
                f"the experiment directory ({folder.parent}), read as one score per trial"
            )
        if _ray.looks_like_experiment(file):
            studies = _ray.read(file, name, metric=metric, reduce=reduce)
        else:  # a storage path of several experiments: each a study, named by its directory
            root = Path(os.path.realpath(file))
            _ray.entries(root, root, name)  # a symlink out of it is refused here too
            subs = [s for s in _children(file, _ray.looks_like_experiment) if study is None or s.name == study]
            studies = tuple(t for s in subs for t in _ray.read(s, f"{name}/{s.name}", metric=metric, reduce=reduce))
    elif kind == "wandb-csv":
        studies = _wandb.read(file, name, study=study, metric=metric, reduce=reduce)
    elif kind == "smac3" and file.is_dir() and not _smac_run(file):  # a directory per seed: each run a study
        found = []
        for sub in _children(file, _smac_run):
            version, (run,) = _smac.read(
                sub / "runhistory.json", f"{name}/{sub.name}", objective=objective, metric=metric, reduce=reduce
            )
            found.append(dataclasses.replace(run, name=f"{run.name}/{sub.name}"))
        studies = tuple(found)
    elif kind == "smac3":
        history = file / "runhistory.json" if file.is_dir() else file
        version, studies = _smac.read(history, name, objective=objective, metric=metric, reduce=reduce)
    elif kind == "hpbandster":
        studies = _bohb.read(folder, name, reduce=reduce)
    else:
        studies = _synetune.read(folder, name, objective=objective, metric=metric, reduce=reduce)
    return Source(name, kind, version, _pick(studies, study, name))


def read_source(
    path: str | os.PathLike,
    *,
    study: str | None = None,
    objective: int = 0,
    metric: str | None = None,
    timeout: float = 5.0,
    reduce: str | None = None,
) -> Source:
    """Every study (or the one named) of an Optuna storage or journal or an MLflow store, read without the framework.

    Optuna's RDB storage in SQLite (``study.db`` or ``sqlite:///study.db``): each study's trials by trial number,
    the chosen objective's values (+-inf as stored), its direction, and the traces its sampler left. Optuna's
    JournalStorage file: its operations replayed as Optuna does. MLflow's SQLite tracking store: each active
    experiment's runs by start time, the metric's latest value per run; MLflow records no direction. A Ray Tune
    experiment directory, a W&B CSV export, SMAC3's ``runhistory.json``, HpBandSter's ``configs.json`` and
    ``results.json``, Syne Tune's ``results.csv.zip`` and ``metadata.json``: each trial one score, its repeated
    reports (iterations, rows, runs on seeds or budgets) reduced by ``reduce`` or refused in one line, never
    counted as trials (the modules ``simstudy.sources._ray``, ``_wandb``, ``_smac``, ``_bohb``, ``_synetune`` say
    each format's rules; the notes say what was done).

    Parameters
    ----------
    path : str or os.PathLike
        The file, or a ``sqlite:///FILE`` URL.
    study : str or None, keyword-only, default None
        The one study (Optuna), experiment (MLflow) or sweep (W&B; a one-study source: its name) to read, by its exact name (only ever a value, never SQL);
        None reads them all.
    objective : int, keyword-only, default 0
        Which objective of a multi-objective Optuna study, SMAC cost or Syne Tune metric list to read (0-based);
        ignored by MLflow, Ray Tune and W&B.
    metric : str or None, keyword-only, default None
        The metric by name: MLflow's key (needed when an experiment logs several), or the name of an Optuna
        objective where the study records its metric names (then it overrides ``objective``); the metric of a Ray
        Tune experiment, a W&B export or Syne Tune's results (needed where several are reported and none is
        recorded), one of SMAC's scenario objectives.
    timeout : float, keyword-only, default 5.0
        Seconds to wait for a process writing a SQLite file to release its lock before giving up in one line.
    reduce : {"last", "best", "max", "min", "mean"} or None, keyword-only, default None
        How a trial's several reports become its one score: Ray Tune's iterations and Syne Tune's rows (None:
        ``last``, said in the note), a SMAC configuration's runs on several instances or seeds, a W&B run on
        several rows, an HpBandSter configuration's several results at one budget (None: refused in one line).
        ``best`` follows the direction (one line where none is recorded); ``mean`` is SMAC's own aggregate.

    Returns
    -------
    Source
        The format, the schema's version, and one :class:`~simstudy.sources.types.Trials` per study.

    Raises
    ------
    DataError
        In one line naming the file, the item and the value: a file missing or of no known format; a SQLite file
        truncated, corrupted or locked past ``timeout``; a schema or journal operation this reader does not know;
        no study ``study``; ``objective`` or ``metric`` not in a study; more rows than the memory limit allows
        (:func:`simstudy._limits.memory_limit`).
    ValueError
        If ``objective`` is not an integer >= 0, ``timeout`` not a finite number >= 0, or ``reduce`` not one of
        its values.

    Examples
    --------
    An Optuna journal with one study of three trials, the second failed:

    >>> import json, pathlib, tempfile
    >>> ops = [{"op_code": 0, "study_name": "svm", "directions": [2]}]  # 2: maximize
    >>> for i, (state, value) in enumerate([(1, 0.71), (3, None), (1, 0.75)]):  # 1: complete, 3: failed
    ...     ops.append({"op_code": 4, "study_id": 0, "datetime_start": "2025-01-01T00:00:00"})
    ...     ops.append({"op_code": 6, "trial_id": i, "state": state, "values": value and [value],
    ...                 "datetime_complete": "2025-01-01T00:01:00"})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     journal = pathlib.Path(tmp) / "journal.log"
    ...     _ = journal.write_text("".join(json.dumps({"worker_id": "w", **op}) + "\\n" for op in ops))
    ...     source = read_source(journal)
    >>> source.format, [t.name for t in source.studies]
    ('optuna-journal', ['svm'])
    >>> svm = source.studies[0]
    >>> svm.values, svm.states, svm.direction
    (array([0.71,  nan, 0.75]), ('complete', 'failed', 'complete'), 'maximize')
    >>> svm.notes[0]
    '3 trials: 2 complete, 1 failed'
    >>> svm.provenance[0].split(":")[0]
    'sampler not recorded'
    """
    if isinstance(objective, bool) or not isinstance(objective, int) or objective < 0:
        raise ValueError(f"objective must be an integer >= 0, got {objective!r}")
    if study is not None and not isinstance(study, str):
        raise ValueError(f"study must be a name (a string) or None, got {study!r}")
    if metric is not None and not isinstance(metric, str):
        raise ValueError(f"metric must be a name (a string) or None, got {metric!r}")
    reduce = _files.reduce_iv(reduce)
    file, name = _path_iv(path)
    timeout = _timeout_iv(timeout)
    kind = _sniff(file, name, timeout)
    if kind is None:
        raise DataError(
            f"{name}: not a tuning source this reader knows ({'; '.join(FORMATS.values())}); a file of scores is "
            f"read as data=FILE.csv"
        )
    if kind not in ("optuna-rdb", "optuna-journal", "mlflow-sqlite"):
        return _read_files(kind, file, name, study, objective, metric, reduce)
    if kind == "optuna-journal":
        studies = _optuna_journal.read(file, name, study=study, objective=objective, metric=metric)
        return Source(name, kind, None, studies)
    con = _sqlite.connect(file, name, timeout)
    try:
        if kind == "optuna-rdb":
            version, studies = _optuna_rdb.read(con, name, timeout, study=study, objective=objective, metric=metric)
        else:
            version, studies = _mlflow.read(con, name, timeout, study=study, metric=metric)
    finally:
        con.close()
    return Source(name, kind, version, studies)
