"""The run config's groups as schemas (issue 26): the runner's and the budget's keys declared once, with the
YAML's defaults; the keys only commands set refused in a config; the old names of the split module still import.
"""

from pathlib import Path

import pytest
import yaml

from simstudy import config, config_distributions, config_estimators, schema
from simstudy.schema import ConfigError

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def test_the_runner_schema_defaults_are_those_of_the_local_runner_yaml():
    local = yaml.safe_load((CONFIGS / "runner" / "local.yaml").read_text())
    assert schema.defaults(config.RunnerConfig) == {"address": None, **local}
    assert config._runner({}) == config.RunnerConfig() == config._runner(local)
    assert config.RunnerConfig().progress is None  # "auto", the YAML's word, is None in the object


@pytest.mark.parametrize("key", ["collect", "replay"])
def test_what_only_commands_set_is_refused_in_a_config(key):
    with pytest.raises(ConfigError) as info:
        config._runner({key: True})
    assert str(info.value) == (
        f"runner.{key} is not a setting (settings: n_jobs, backend, progress, address, shard, "
        "max_failure_fraction, figures)"
    )
    assert key not in schema.docs(config.RunnerConfig)


def test_the_budget_schema_keeps_the_lists_checks():
    assert config._budget({"B": [10, 5], "n": [4, 2]}) == config.BudgetConfig((10, 5), (2, 4))
    with pytest.raises(ConfigError, match=r"^budget\.n must not exceed budget\.B .*: n=6 > B=5$"):
        config._budget({"B": [10, 5], "n": [6]})
    with pytest.raises(ConfigError, match=r"^budget\.B must be an integer, got None$"):
        config._budget({})  # no default: a config gives B


def test_the_config_takes_its_groups_from_their_modules():
    assert config.DistributionConfig is config_distributions.DistributionConfig
    assert config.EstimatorConfig is config_estimators.EstimatorConfig
    # issue 35: no second name for a group's parser in config
    assert not any(hasattr(config, n) for n in ("_distributions", "_estimators", "_log_plugin_costs", "_plain"))
