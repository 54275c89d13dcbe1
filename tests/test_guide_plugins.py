"""The plug-ins guide's code exists and runs (issue 25): every ``my_*.NAME`` that docs/guides/plugins.md names is a
function or class of examples/plugins/my_*.py, each passes the start-up checks the config layer runs on it and
computes what its docstring says, and every ``simstudy`` command the guide prints is accepted by the config
layer from a working directory holding those files, as the guide tells a reader to set it up."""

import doctest
import importlib
import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import simstudy
from simstudy import plugins
from simstudy.config import ConfigError
from simstudy.distributions import Bag
from simstudy.stats import estimators, truth
from simstudy.stats.selection import proposal_problem, runs_problem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "plugins"
GUIDE = ROOT / "docs" / "guides" / "plugins.md"
MODULES = ("my_estimators", "my_dists", "my_bands", "my_algos")
# What the guide's commands name; the guide test below also finds them in the text.
NAMED = {
    ("my_estimators", "best_of_all"),
    ("my_estimators", "shrunk"),
    ("my_dists", "Kumaraswamy"),
    ("my_bands", "dkw_band"),
    ("my_algos", "successive_rejects"),
    ("my_algos", "propose_greedy"),
}


@pytest.fixture(autouse=True)
def _reader_dir(tmp_path, monkeypatch, forget_plugins):
    """A working directory holding copies of examples/plugins/my_*.py, as the guide tells a reader to make it;
    the modules are forgotten after each test (conftest's forget_plugins), so other tests' my_* modules load."""
    for name in MODULES:
        shutil.copy(EXAMPLES / f"{name}.py", tmp_path)
    monkeypatch.chdir(tmp_path)


def module(name):
    plugins.import_target(f"{name}.__name__")  # the working directory on sys.path, as the config layer puts it
    return importlib.import_module(name)


def sorted_samples(rng, reps=50, B=12):
    return np.sort(rng.random((reps, B)), axis=1)


# --- the modules ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODULES)
def test_each_example_module_s_doctests_pass(name):
    # examples/ is outside pytest's doctest paths: its examples would otherwise never run
    result = doctest.testmod(module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "target, kwargs",
    [("my_estimators.best_of_all", ()), ("my_estimators.shrunk", ()), ("my_estimators.shrunk", (("alpha", 0.5),))],
)
def test_the_example_estimators_pass_the_config_layer_s_check(target, kwargs):
    plugins.check_estimator(plugins.PluginEstimator(target, kwargs), "estimators.top")


def test_the_example_distribution_passes_the_config_layer_s_check():
    plugins.check_distribution(plugins.PluginDistribution("my_dists.Kumaraswamy", (("a", 3),)), "distribution")


def test_the_example_band_method_passes_the_config_layer_s_check():
    assert plugins.check_band_method("my_bands.dkw_band", "study.methods") == "my_bands.dkw_band"


@pytest.mark.parametrize(
    "target, kind", [("my_algos.successive_rejects", "fixed_budget"), ("my_algos.propose_greedy", "fixed_confidence")]
)
def test_the_example_selection_algorithms_pass_the_config_layer_s_check(target, kind):
    assert plugins.check_selection_algorithm(target, kind) == target


def test_shrunk_at_alpha_0_is_v_exactly_and_at_alpha_1_the_sample_mean(rng):
    x, n = sorted_samples(rng), np.array([1, 2, 5, 12])
    shrunk = module("my_estimators").shrunk
    assert np.array_equal(shrunk(x, n, alpha=0.0), estimators.expected_max(x, "v", n=n, presorted=True))
    np.testing.assert_allclose(
        shrunk(x, n, alpha=1.0), np.repeat(x.mean(axis=1, keepdims=True), 4, axis=1), rtol=0, atol=1e-15
    )
    half = shrunk(x, n, alpha=0.5)  # halfway, and the mean at n = 1 (V_1 is the sample mean)
    np.testing.assert_allclose(half, (shrunk(x, n, alpha=0.0) + shrunk(x, n, alpha=1.0)) / 2, rtol=0, atol=1e-15)
    np.testing.assert_allclose(half[:, 0], x.mean(axis=1), rtol=0, atol=1e-15)


def test_best_of_all_is_the_sample_maximum_at_every_budget(rng):
    x = sorted_samples(rng)
    assert np.array_equal(module("my_estimators").best_of_all(x, np.array([1, 6, 12])), np.repeat(x[:, -1:], 3, axis=1))


@pytest.mark.parametrize("a, b", [(3.0, 2.0), (0.7, 5.0), (8.0, 0.5)])
def test_kumaraswamy_cdf_inverts_ppf_and_its_mean_is_the_closed_form(a, b):
    d = module("my_dists").Kumaraswamy(a, b)
    q = np.linspace(0, 1, 101)
    # the round trip through x^a and (1 - q)^(1/b) loses a few tens of ulps near q = 1 when b < 1
    np.testing.assert_allclose(d.cdf(d.ppf(q)), q, rtol=0, atol=1e-13)
    assert d.cdf(np.array([-1.0, 0.0, 1.0, 2.0])).tolist() == [0.0, 0.0, 1.0, 1.0]
    exact = b * special.beta(1 + 1 / a, b)
    # simstudy's own truth (quadrature through the plug-in wrapper) at n = 1 is the mean
    mean = truth.expected_max(plugins.PluginDistribution("my_dists.Kumaraswamy", (("a", a), ("b", b))), [1])[0]
    assert abs(mean - exact) < 1e-10


def test_kumaraswamy_samples_have_the_closed_form_mean_within_monte_carlo_error(rng):
    a, b = 3.0, 2.0
    x = module("my_dists").Kumaraswamy(a, b).sample(100_000, rng=rng)
    mcse = x.std(ddof=1) / np.sqrt(x.size)
    assert x.shape == (100_000,) and 0 <= x.min() and x.max() <= 1
    assert abs(x.mean() - b * special.beta(1 + 1 / a, b)) < 4 * mcse


@pytest.mark.parametrize("value", [0, -1, "inf", "'3'", "true"])
def test_a_bad_kumaraswamy_parameter_is_one_config_error_naming_it(value):
    with pytest.raises(
        ConfigError,
        match=r"^distribution\._target_=my_dists\.Kumaraswamy: .*a must be a finite "
        r"number > 0",
    ) as info:
        simstudy.compose(
            "dodge2021_fig1",
            ["distribution=custom", "distribution._target_=my_dists.Kumaraswamy", f"+distribution.a={value}"],
        )
    assert "\n" not in str(info.value)


def test_a_bad_alpha_of_shrunk_is_one_config_error_naming_it():
    with pytest.raises(
        ConfigError,
        match=r"^estimators\.top\._target_=my_estimators\.shrunk: .*alpha must be in "
        r"\[0, 1\], got 2",
    ):
        simstudy.compose("dodge2021_fig1", ["+estimators.top._target_=my_estimators.shrunk", "+estimators.top.alpha=2"])


@pytest.mark.parametrize("n", [1, 5, 30])
@pytest.mark.parametrize("confidence", [0.5, 0.95])
def test_dkw_band_is_the_built_in_dkw_band(n, confidence):
    lower, upper = module("my_bands").dkw_band(np.zeros((3, n)), confidence)
    expected = plugins.BuiltinBand("dkw").bounds(n, confidence)
    np.testing.assert_allclose(lower, expected[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(upper, expected[1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("K, budget", [(2, 2), (3, 12), (3, 30), (5, 7), (12, 48), (12, 204)])
def test_successive_rejects_spends_at_most_the_budget_on_the_audibert_bubeck_schedule(K, budget, rng):
    arms = [Bag(np.array([0.1, 0.5, 0.9]) + 0.01 * i) for i in range(K)]
    picks, evaluations = module("my_algos").successive_rejects(arms, budget, 40, rng=rng)
    assert runs_problem(picks, evaluations, 40, K, budget) is None
    logbar = 0.5 + sum(1 / i for i in range(2, K + 1))
    n_k = [max(int(np.ceil((budget - K) / (logbar * (K + 1 - k)))), 1) for k in range(1, K)]
    # each run: the arm rejected in phase k was evaluated n_k times, the survivor n_{K-1} times
    assert (np.sort(evaluations, axis=1) == n_k + n_k[-1:]).all()
    assert (evaluations[np.arange(40), picks] == n_k[-1]).all()


def test_successive_rejects_picks_the_best_of_well_separated_arms(rng):
    arms = [Bag([0.1, 0.2]), Bag([0.8, 0.9]), Bag([0.45, 0.55]), Bag([0.3, 0.35])]
    picks, _ = module("my_algos").successive_rejects(arms, 20, 200, rng=rng)
    assert (picks == 1).all()


def test_successive_rejects_refuses_a_budget_below_one_evaluation_of_each_arm(rng):
    with pytest.raises(ValueError, match="budget=2"):
        module("my_algos").successive_rejects([Bag([0.1]), Bag([0.2]), Bag([0.3])], 2, 4, rng=rng)


def test_propose_greedy_proposes_one_arm_per_run_the_highest_posterior_mean(rng):
    loc = rng.random((30, 5))
    which = module("my_algos").propose_greedy(loc, np.ones((30, 5)), np.full((30, 5), 3.0), rng=rng)
    assert proposal_problem(which, 30, 5) is None and which.shape == (30, 1)
    assert np.array_equal(which[:, 0], np.argmax(loc, axis=1))


def test_propose_greedy_breaks_ties_at_random_among_the_leaders(rng):
    loc = np.tile([0.2, 0.7, 0.7, 0.1], (400, 1))  # arms 1 and 2 tie for the lead in every run
    which = module("my_algos").propose_greedy(loc, np.ones(loc.shape), np.ones(loc.shape), rng=rng)[:, 0]
    assert set(which.tolist()) == {1, 2} and abs((which == 1).mean() - 0.5) < 4 * 0.5 / np.sqrt(400)


@pytest.mark.parametrize("name, attr", sorted(NAMED))
def test_each_example_has_the_numpydoc_sections_simstudy_s_public_names_have(name, attr):
    numpydoc_validate = pytest.importorskip("numpydoc.validate")
    from test_docstrings import REQUIRED  # the checks tests/test_docstrings.py applies to simstudy's own names

    module(name)
    errors = [(code, msg) for code, msg in numpydoc_validate.validate(f"{name}.{attr}")["errors"] if code in REQUIRED]
    assert not errors, f"{name}.{attr}: " + "; ".join(f"{code} {msg}" for code, msg in errors)


# --- the guide -----------------------------------------------------------------------------------------------


def guide_commands():
    """Every ``simstudy ...`` line of the guide's bash blocks, split as a shell would."""
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), re.S)
    return [shlex.split(line) for block in blocks for line in block.splitlines() if line.startswith("simstudy ")]


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_every_command_of_the_guide_is_accepted_by_the_config_layer():
    commands = guide_commands()
    assert len(commands) >= 10  # the regular expression finds them (else the test would pass vacuously)
    named = set()
    for argv in commands:
        assert argv[1].startswith("experiment="), argv
        simstudy.compose(argv[1].removeprefix("experiment="), argv[2:])  # imports and checks each plug-in
        named |= {(m, f) for m, f in re.findall(r"\b(my_[a-z]+)\.(\w+)", " ".join(argv))}
    assert named == NAMED


def test_every_my_name_in_the_guide_exists_in_examples_plugins():
    text = GUIDE.read_text()
    named = set(re.findall(r"\b(my_[a-z_]+)\.(?!py\b)([A-Za-z_]\w*)", text))
    assert NAMED <= named
    for name, attr in named:
        assert (EXAMPLES / f"{name}.py").is_file(), f"plugins.md names {name}.{attr}: no examples/plugins/{name}.py"
        assert hasattr(module(name), attr), f"plugins.md names {name}.{attr}: examples/plugins/{name}.py has none"


def test_the_guide_shows_each_module_from_its_file_and_says_to_copy_them():
    text = GUIDE.read_text()
    included = re.findall(r"```\{literalinclude\} (\S+)", text)
    assert sorted(Path(p).name for p in included) == sorted(f"{m}.py" for m in MODULES)
    for path in included:
        assert (GUIDE.parent / path).resolve() == EXAMPLES / Path(path).name
    assert "copy `examples/plugins/my_*.py` into your" in text.lower()
    assert "```python\n# my_" not in text  # no pasted copy beside the files
