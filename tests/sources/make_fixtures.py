"""Write the real tuning sources that ``tests/sources`` read, with the frameworks themselves, and what the
frameworks report about them (``expected.json``).

Run it with a Python that has Optuna and MLflow (never the package's own environment: simstudy reads these files
with the standard library only)::

    python -m venv /work/venv-src && /work/venv-src/bin/pip install optuna mlflow
    /work/venv-src/bin/python tests/sources/make_fixtures.py
    /work/venv-src/bin/python tests/sources/make_fixtures.py searches   # only searches.db (two 100-trial studies)

Written with optuna 5.1.0, mlflow 3.17.2 and SQLAlchemy 2.1.9 (``expected.json`` records the versions used).
Every study is seeded, so the values are the same on every run with the same versions; the files' bytes are
not (Optuna and MLflow record wall-clock times and random ids). The SQLite files are compacted (``VACUUM`` with
512-byte pages: MLflow's schema has about 60 tables, a page each) *before* the frameworks read them back, so what
``expected.json`` holds is what the frameworks read from the committed files.

Only the standard library is imported at module level: the test suite collects this file for doctests.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
#: a study name a reader must treat as a name, never as SQL
HOSTILE_NAME = 'it\'s "quoted"; DROP TABLE trials; --'


def _objective(trial):
    """A deterministic function of the sampled parameters, so the values depend on the sampler only."""
    x = trial.suggest_float("x", -3.0, 3.0)
    y = trial.suggest_int("y", 0, 4)
    return (x - 1.0) ** 2 + 0.5 * y


def _fill(optuna, storage) -> None:
    """The studies every Optuna source holds (the same in the SQLite storage and in the journal)."""
    TrialState = optuna.trial.TrialState

    # random search, maximized, with failed and pruned trials
    study = optuna.create_study(
        study_name="random", storage=storage, direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0)
    )

    def random_objective(trial):
        value = _objective(trial)
        if trial.number in (3, 7):
            raise ValueError("a failed trial")
        if trial.number == 5:
            trial.report(value, step=0)
            raise optuna.TrialPruned()
        return value

    study.optimize(random_objective, n_trials=12, catch=(ValueError,))

    # TPE, minimized, with +-inf values and a trial still running and one waiting
    study = optuna.create_study(
        study_name="tpe", storage=storage, direction="minimize", sampler=optuna.samplers.TPESampler(seed=1)
    )

    def tpe_objective(trial):
        value = _objective(trial)
        if trial.number == 4:
            return float("inf")
        if trial.number == 6:
            return float("-inf")
        return value

    study.optimize(tpe_objective, n_trials=14)
    study.ask()  # running: asked, never told
    study.enqueue_trial({"x": 0.5, "y": 1})  # waiting

    # multi-objective: NSGA-II leaves its generation in each trial's system attributes
    study = optuna.create_study(
        study_name="multi",
        storage=storage,
        directions=["minimize", "maximize"],
        sampler=optuna.samplers.NSGAIISampler(seed=2, population_size=4),
    )
    study.set_metric_names(["loss", "accuracy"])
    study.optimize(lambda t: (_objective(t), -abs(t.params["x"])), n_trials=8)

    # a grid search: grid_id and search_space in each trial's system attributes
    study = optuna.create_study(
        study_name="grid",
        storage=storage,
        direction="minimize",
        sampler=optuna.samplers.GridSampler({"x": [-1.0, 0.0, 1.0], "y": [0, 2]}, seed=3),
    )
    study.optimize(_objective, n_trials=6)

    # a name with quotes and SQL in it: only ever a parameter
    study = optuna.create_study(study_name=HOSTILE_NAME, storage=storage, sampler=optuna.samplers.RandomSampler(seed=4))
    study.optimize(_objective, n_trials=3)
    assert TrialState.COMPLETE  # the states are read back from the storage below


def _value(x):
    """A value as JSON holds it: +-inf and NaN as strings (the readers' NaN is "no value")."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _optuna_expected(optuna, storage) -> dict:
    out = {}
    for summary in optuna.get_all_study_summaries(storage):
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        trials = study.get_trials(deepcopy=False)
        out[study.study_name] = {
            "directions": [d.name.lower() for d in study.directions],
            "metric_names": study.metric_names,
            "numbers": [t.number for t in trials],
            "states": [t.state.name for t in trials],
            "values": [None if t.values is None else [_value(v) for v in t.values] for t in trials],
            "system_attr_keys": sorted({k for t in trials for k in t.system_attrs}),
        }
    return out


def _compact(path: Path) -> None:
    """Rewrite a SQLite file with 512-byte pages (the same rows, a fraction of the bytes)."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size = 512")
    con.execute("VACUUM")
    con.close()


def _make_optuna(optuna, expected: dict) -> None:
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    db = DATA / "optuna.db"
    db.unlink(missing_ok=True)
    _fill(optuna, f"sqlite:///{db}")
    _compact(db)
    expected["optuna.db"] = _optuna_expected(optuna, f"sqlite:///{db}")
    con = sqlite3.connect(db)
    expected["optuna.db:schema"] = con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    con.close()

    log = DATA / "optuna.log"
    log.unlink(missing_ok=True)
    _fill(optuna, JournalStorage(JournalFileBackend(str(log))))
    expected["optuna.log"] = _optuna_expected(optuna, JournalStorage(JournalFileBackend(str(log))))
    for lock in DATA.glob("optuna.log.lock*"):
        lock.unlink()


def _make_mlflow(mlflow, expected: dict) -> None:
    db = DATA / "mlflow.db"
    db.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as artifacts:
        mlflow.set_tracking_uri(f"sqlite:///{db}")
        for name, scores in (("exp-a", [0.71, 0.74, None, 0.69, 0.80]), ("exp-b", [0.55, 0.61, 0.58])):
            mlflow.create_experiment(name, artifact_location=Path(artifacts).as_uri())
            mlflow.set_experiment(name)
            for i, score in enumerate(scores):
                time.sleep(0.01)  # distinct start times (ms): the readers order runs by them
                with mlflow.start_run(run_name=f"{name}-{i}") as run:
                    mlflow.log_param("lr", 10.0 ** -(i + 1))
                    mlflow.log_metric("loss", 1.0 - (score or 0.0), step=0)
                    if score is None:  # a failed run: no accuracy logged
                        mlflow.end_run(status="FAILED")
                        continue
                    mlflow.log_metric("accuracy", score / 2, step=0)
                    mlflow.log_metric("accuracy", score, step=1)  # the latest step is the run's value
        # a deleted run is not a trial
        mlflow.set_experiment("exp-b")
        with mlflow.start_run() as run:
            mlflow.log_metric("accuracy", 0.99)
        mlflow.delete_run(run.info.run_id)
        mlflow.set_tracking_uri("")  # close the store before compacting
        _compact(db)

        client = mlflow.tracking.MlflowClient(f"sqlite:///{db}")
        out = {}
        for experiment in client.search_experiments():
            runs = client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"])
            out[experiment.name] = {
                "statuses": [r.info.status for r in runs],
                "start_times": [r.info.start_time for r in runs],
                "accuracy": [_value(r.data.metrics.get("accuracy")) for r in runs],
                "loss": [_value(r.data.metrics.get("loss")) for r in runs],
            }
        expected["mlflow.db"] = out
        con = sqlite3.connect(db)
        expected["mlflow.db:schema"] = con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        con.close()


def _make_searches(optuna) -> dict:
    """``searches.db``: two studies of 100 trials on one objective (minimized), one by random search and one by TPE,
    each with failed and pruned trials: the example of issue 36 (``simstudy curve data=searches.db``), whose check
    must pass the random study and flag the TPE one."""
    db = DATA / "searches.db"
    db.unlink(missing_ok=True)
    storage = f"sqlite:///{db}"
    for name, sampler, failed, pruned in (
        ("random", optuna.samplers.RandomSampler(seed=10), (10, 50), (20,)),
        ("tpe", optuna.samplers.TPESampler(seed=11), (30,), (60, 61)),
    ):
        study = optuna.create_study(study_name=name, storage=storage, direction="minimize", sampler=sampler)

        def objective(trial, failed=failed, pruned=pruned):
            value = _objective(trial)
            if trial.number in failed:
                raise ValueError("a failed trial")
            if trial.number in pruned:
                trial.report(value, step=0)
                raise optuna.TrialPruned()
            return value

        study.optimize(objective, n_trials=100, catch=(ValueError,))
    _compact(db)
    return _optuna_expected(optuna, storage)


def main() -> None:
    import mlflow
    import optuna
    import sqlalchemy

    if sys.argv[1:] == ["searches"]:  # only searches.db (the other files' bytes stay as committed)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        found = {"optuna": optuna.__version__, "searches.db": _make_searches(optuna)}
        (DATA / "expected_searches.json").write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        return

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    DATA.mkdir(exist_ok=True)
    expected: dict = {
        "versions": {
            "python": sys.version.split()[0],
            "optuna": optuna.__version__,
            "mlflow": mlflow.__version__,
            "sqlalchemy": sqlalchemy.__version__,
        },
        "hostile_name": HOSTILE_NAME,
    }
    _make_optuna(optuna, expected)
    _make_mlflow(mlflow, expected)
    (DATA / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
