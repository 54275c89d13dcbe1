"""Write a real Ray Tune experiment directory, a real Syne Tune tuning, a real BOHB run and a real SMAC3 run for
``tests/sources`` (``data/ray_exp``, ``data/st_tuning``, ``data/bohb_run``, ``data/smac_run``), with the frameworks
themselves, and what they report about them (``data/expected2.json``).

Run it with a Python that has Ray Tune, Syne Tune, HpBandSter and SMAC3 (never the package's own environment:
simstudy reads these files with the standard library only)::

    /work/venv-src/bin/pip install "ray[tune]" syne-tune hpbandster smac
    /work/venv-src/bin/python tests/sources/make_fixtures2.py

Written with ray 2.60.0, syne-tune 0.16.0, hpbandster 0.7.4 and smac 2.4.1 (``expected2.json`` records the versions
used). The values are deterministic functions of the sampled configurations; the files' bytes are not (wall-clock
times, random ids). W&B is not written here (its export comes from its web UI): its tests use hand-made exports
following the UI's layout.

Only the standard library is imported at module level: the test suite collects this file for doctests.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _ray_trainable(config):
    """Three reports of a deterministic ``acc`` (the last not the best); a trial with ``x > 0.6`` reports once, then raises."""
    from ray import tune

    x = config["x"]
    if x > 0.6:
        tune.report({"acc": 0.1})
        raise ValueError("x too large: this trial fails on purpose")
    for step in range(3):
        tune.report({"acc": round(x * (1 + step) / 3 - 0.05 * (step == 2), 6), "loss": round(1 - x, 6)})


def _make_ray(expected: dict) -> None:
    import ray
    from ray import tune

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        tuner = tune.Tuner(
            _ray_trainable,
            param_space={"x": tune.uniform(0.0, 1.0)},
            tune_config=tune.TuneConfig(num_samples=8, metric="acc", mode="max"),
            run_config=tune.RunConfig(name="ray_exp", storage_path=tmp),
        )
        grid = tuner.fit()
        trials = {}
        for result in grid:
            trial_id = result.metrics.get("trial_id") if result.metrics else None
            history = result.metrics_dataframe
            trials[str(trial_id or Path(result.path).name)] = {
                "dir": Path(result.path).name,
                "error": result.error is not None,
                "acc": None if history is None or "acc" not in history else [float(v) for v in history["acc"]],
                "last": None if not result.metrics or "acc" not in result.metrics else float(result.metrics["acc"]),
            }
        target = DATA / "ray_exp"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(Path(tmp) / "ray_exp", target)
    ray.shutdown()
    expected["ray_exp"] = trials


_SYNE_TUNE_SCRIPT = """
import argparse
import sys

from syne_tune import Reporter

parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float)
parser.add_argument("--epochs", type=int)
args, _ = parser.parse_known_args()
report = Reporter()
if args.x > 0.7:
    report(epoch=1, accuracy=0.1)
    sys.exit(1)  # this trial fails on purpose
for epoch in range(1, args.epochs + 1):
    report(epoch=epoch, accuracy=round(args.x * epoch / args.epochs - 0.05 * (epoch == args.epochs), 6))
"""


def _make_syne_tune(expected: dict) -> None:
    import os

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYNETUNE_FOLDER"] = tmp
        from syne_tune import StoppingCriterion, Tuner
        from syne_tune.backend import LocalBackend
        from syne_tune.config_space import uniform
        from syne_tune.experiments import load_experiment
        from syne_tune.optimizer.baselines import RandomSearch

        script = Path(tmp) / "train.py"
        script.write_text(_SYNE_TUNE_SCRIPT)
        tuner = Tuner(
            trial_backend=LocalBackend(entry_point=str(script)),
            scheduler=RandomSearch(
                {"x": uniform(0.0, 1.0), "epochs": 3}, metrics=["accuracy"], do_minimize=False, random_seed=3
            ),
            stop_criterion=StoppingCriterion(max_num_trials_finished=6),
            n_workers=1, sleep_time=0.2, results_update_interval=1.0, max_failures=10, tuner_name="st_tuning",
            suffix_tuner_name=False, save_tuner=False,
        )  # fmt: skip
        tuner.run()
        results = load_experiment("st_tuning").results
        trials = {}
        for trial_id, rows in results.groupby("trial_id"):
            trials[str(int(trial_id))] = {
                "accuracy": [float(v) for v in rows["accuracy"]],
                "status": str(rows["st_status"].iloc[-1]),
            }
        target = DATA / "st_tuning"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for name in ("results.csv.zip", "metadata.json"):
            shutil.copy(Path(tuner.tuner_path) / name, target / name)
    expected["st_tuning"] = trials


def _make_bohb(expected: dict) -> None:
    import ConfigSpace as CS
    import hpbandster.core.nameserver as hpns
    import hpbandster.core.result as hpres
    import Pyro4
    from hpbandster.core.worker import Worker
    from hpbandster.optimizers import BOHB

    # Pyro4's default serializer (serpent) hangs the run on ConfigSpace's numpy values: a job is dispatched and its
    # result never returns. Pickle between these two local threads only, in this script, never in simstudy.
    Pyro4.config.SERIALIZER = "pickle"
    Pyro4.config.SERIALIZERS_ACCEPTED.add("pickle")

    class _Worker(Worker):
        def compute(self, config, budget, **kwargs):
            x = float(config["x"])
            if x > 0.9:
                raise ValueError("x too large: this run fails on purpose")
            return {"loss": round((x - 0.3) ** 2 + 1.0 / float(budget), 6), "info": {}}

    space = CS.ConfigurationSpace(seed=1)
    space.add(CS.UniformFloatHyperparameter("x", 0.0, 1.0))
    target = DATA / "bohb_run"
    shutil.rmtree(target, ignore_errors=True)
    ns = hpns.NameServer(run_id="fixture", host="127.0.0.1", port=None)
    host, port = ns.start()
    worker = _Worker(nameserver=host, nameserver_port=port, run_id="fixture")
    worker.run(background=True)
    bohb = BOHB(
        configspace=space, run_id="fixture", nameserver=host, nameserver_port=port, min_budget=1, max_budget=9,
        result_logger=hpres.json_result_logger(directory=str(target), overwrite=True), min_points_in_model=4,
    )  # fmt: skip
    bohb.run(n_iterations=3)
    bohb.shutdown(shutdown_workers=True)
    ns.shutdown()
    result = hpres.logged_results_to_HBS_result(str(target))  # what HpBandSter reads back from the files
    configs = {}
    for cid, info in result.get_id2config_mapping().items():
        runs = result.get_runs_by_id(cid)
        top = max(r.budget for r in runs)
        configs[json.dumps(list(cid))] = {
            "model_based_pick": info["config_info"]["model_based_pick"],
            "budget": top,
            "loss": [r.loss for r in runs if r.budget == top][-1],
        }
    expected["bohb_run"] = configs


def _smac_target(config, seed: int = 0) -> float:
    """A cost that depends a little on the seed (so a configuration's runs differ); large ``x`` crashes."""
    x = float(config["x"])
    if x > 0.9:
        raise ValueError("x too large: this run crashes on purpose")
    return round((x - 0.3) ** 2 + (seed % 7) / 1000, 6)


def _make_smac(expected: dict) -> None:
    from ConfigSpace import ConfigurationSpace, Float
    from smac import HyperparameterOptimizationFacade, Scenario

    space = ConfigurationSpace(seed=0)
    space.add(Float("x", (0.0, 1.0)))
    with tempfile.TemporaryDirectory() as tmp:
        # crash_cost finite: SMAC 2.4.1's random forest refuses the default inf ("Input y contains NaN")
        scenario = Scenario(
            space, name="smac_run", output_directory=Path(tmp), deterministic=False, n_trials=16, seed=1,
            crash_cost=5.0,
        )  # fmt: skip
        smac = HyperparameterOptimizationFacade(scenario, _smac_target, overwrite=True, logging_level=40)
        smac.optimize()
        history = smac.runhistory
        configs = {}
        for cid in range(1, len(history.get_configs()) + 1):  # SMAC numbers configurations from 1
            config = history.get_config(cid)
            configs[str(cid)] = {
                "origin": config.origin,
                "cost": history.get_cost(config),  # SMAC's own aggregate: the mean over the runs
                "statuses": [int(v.status) for k, v in history.items() if k.config_id == cid],
            }
        target = DATA / "smac_run"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(Path(tmp) / "smac_run" / "1", target)
    expected["smac_run"] = configs


def main() -> None:
    from importlib.metadata import version

    import ray

    expected: dict = {"versions": {"python": sys.version.split()[0], "ray": ray.__version__}}
    expected["versions"].update({p: version(p) for p in ("syne-tune", "hpbandster", "smac")})
    _make_ray(expected)
    _make_syne_tune(expected)
    _make_bohb(expected)
    _make_smac(expected)
    (DATA / "expected2.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
