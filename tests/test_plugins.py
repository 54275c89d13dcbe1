"""Bring your own method: plug-in estimators (``+estimators.NAME._target_=module.function``) and distributions
(``distribution=scipy``, ``distribution=custom distribution._target_=module.Class``), run through the CLI in
this process with the plug-in modules written into the working directory (tmp_path), as a user would."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import FIG1, one_line_error, simstudy

from simstudy import config, extend, plugins
from simstudy.distributions import ScipyDistribution
from simstudy.stats import truth

SMALL = [*FIG1, "study.reps=2000", "study.chunk_reps=500", "study.save_replicates=false", "runner.n_jobs=1"]
FIG2 = ["experiment=dodge2021_fig2", "runner.progress=false", "budget.B=[10,12]", "study.reps=3000",
        "study.chunk_reps=1000", "runner.n_jobs=1"]
ROOT = Path(__file__).resolve().parents[1]

# Plug-in estimators, each in its own module (a module name is imported once per process).
ESTIMATORS = """
import numpy as np
from simstudy.stats.estimators import weights

def best_of_all(sorted_scores, n):
    # the sample maximum, whatever the budget
    return np.repeat(sorted_scores[:, -1:], len(n), axis=1)

def v_again(sorted_scores, n):
    # V, the same weighted sum as the built-in one
    return sorted_scores @ weights(sorted_scores.shape[1], "v", n).T

def scaled_v(sorted_scores, n, factor=1.0):
    return factor * v_again(sorted_scores, n)

def v_one(scores, n):
    # one sample at a time (per_sample: true)
    return weights(scores.size, "v", n) @ scores
"""


pytestmark = pytest.mark.usefixtures("forget_plugins")  # tests/conftest.py


def write(tmp_path: Path, module: str, code: str) -> None:
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(code))


def summary(run_dir: Path) -> pd.DataFrame:
    return pd.read_parquet(run_dir / "summary.parquet")


def values(s: pd.DataFrame, estimator: str, measure: str) -> pd.DataFrame:
    return s[(s.estimator == estimator) & (s.measure == measure)].sort_values(["B", "n"])


def test_one_override_gives_a_plugin_estimator_everywhere_u_v_w_appear(tmp_path):
    write(tmp_path, "my_estimators", ESTIMATORS)
    proc = simstudy(*SMALL, "+estimators.top._target_=my_estimators.best_of_all", "hydra.run.dir=run", cwd=tmp_path)
    s = summary(tmp_path / "run")
    for measure in ("mean", "bias", "variance", "empse", "mse"):
        rows = values(s, "top", measure)
        assert len(rows) == 30 and (rows.reps == 2000).all() and np.isfinite(rows.estimate).all()
        assert (rows.mcse > 0).all()
    # the sample maximum estimates E[max of B] = theta_30 without bias
    bias = values(s, "top", "bias").iloc[-1]
    assert abs(bias.estimate) < 4 * bias.mcse
    # paired differences with every other estimator; no exact rows (a plug-in has no closed-form mean)
    for other in ("u", "v", "w"):
        assert len(values(s, f"top-{other}", "mse")) == 30
    assert not s[(s.estimator == "top") & s.measure.str.startswith("exact")].size
    assert len(values(s, "v", "exact_bias")) == 30
    assert "top-v" in proc.stdout and (tmp_path / "run" / "figure.png").stat().st_size > 0
    csv = pd.read_csv(tmp_path / "run" / "summary.csv")
    assert "top" in set(csv.estimator)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_a_plugin_computing_v_gives_the_built_in_numbers_and_passes_keyword_arguments(tmp_path):
    write(tmp_path, "my_estimators_v", ESTIMATORS)
    simstudy(*SMALL, "+estimators.vv._target_=my_estimators_v.v_again",
             "+estimators.half._target_=my_estimators_v.scaled_v", "+estimators.half.factor=0.5",
             "hydra.run.dir=run", cwd=tmp_path)
    s = summary(tmp_path / "run")
    for measure in ("mean", "bias", "variance", "mse"):
        v, vv = values(s, "v", measure), values(s, "vv", measure)
        np.testing.assert_allclose(vv.estimate.to_numpy(), v.estimate.to_numpy(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(vv.mcse.to_numpy(), v.mcse.to_numpy(), rtol=0, atol=1e-12)
    assert np.abs(values(s, "vv-v", "mse").estimate).max() < 1e-12
    np.testing.assert_allclose(values(s, "half", "mean").estimate.to_numpy(),
                               0.5 * values(s, "v", "mean").estimate.to_numpy(), rtol=1e-12)


@pytest.mark.system
def test_plugin_results_are_identical_for_one_and_two_loky_workers(tmp_path):
    write(tmp_path, "my_estimators_jobs", ESTIMATORS)
    for jobs in (1, 2):
        simstudy(*SMALL, "budget.B=12", "+estimators.top._target_=my_estimators_jobs.best_of_all",
                 "+estimators.vv._target_=my_estimators_jobs.v_again", f"runner.n_jobs={jobs}", "runner.backend=loky",
                 f"hydra.run.dir=run{jobs}", cwd=tmp_path)
    pd.testing.assert_frame_equal(summary(tmp_path / "run1"), summary(tmp_path / "run2"))


def test_a_per_sample_function_is_looped_over_the_replicates_and_says_so(tmp_path):
    write(tmp_path, "my_estimators_one", ESTIMATORS)
    proc = simstudy(*SMALL, "budget.B=12", "+estimators.v1._target_=my_estimators_one.v_one",
                    "+estimators.v1.per_sample=true", "hydra.run.dir=run", cwd=tmp_path)
    assert "estimators.v1: my_estimators_one.v_one is a per-sample function (per_sample: true), looped over the " \
           "replicates in Python:" in proc.stdout and "ms per replicate at B=12" in proc.stdout
    s = summary(tmp_path / "run")
    np.testing.assert_allclose(values(s, "v1", "mse").estimate.to_numpy(), values(s, "v", "mse").estimate.to_numpy(),
                               rtol=0, atol=1e-12)


BAD = {
    "missing_module": ("my_nowhere.f", "estimators.top._target_=my_nowhere.f: no module named 'my_nowhere' in the "
                                       "working directory"),
    "missing_attribute": ("my_bad.nothing", "estimators.top._target_=my_bad.nothing: my_bad has no attribute "
                                            "'nothing'"),
    "import_error": ("my_broken.f", "estimators.top._target_=my_broken.f: importing my_broken failed: "
                                    "ZeroDivisionError: division by zero"),
    "wrong_shape": ("my_bad.per_row", "estimators.top._target_=my_bad.per_row: returned shape (3,) for 3 samples and "
                                      "3 budgets; the contract is (3, 3)"),
    "nan": ("my_bad.nan", "estimators.top._target_=my_bad.nan: returned nan (sample 0, n=3); estimates must be "
                          "finite"),
    "random": ("my_bad.noisy", "estimators.top._target_=my_bad.noisy: returned different estimates for the same "
                               "input called twice"),
    "raises": ("my_bad.strict", "estimators.top._target_=my_bad.strict: raised ValueError: B too small on the check "
                                "input (3 sorted samples of B=5, n=[1, 3, 5])"),
    "not_a_path": ("best_of_all", "estimators.top._target_ must be an import path module.attribute"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_plugin_is_a_one_line_error_naming_its_target_before_any_compute(tmp_path, case):
    write(tmp_path, "my_bad", """
        import numpy as np
        def per_row(x, n):
            return x[:, -1]
        def nan(x, n):
            out = np.repeat(x[:, -1:], len(n), axis=1)
            out[0, 1] = np.nan
            return out
        def noisy(x, n):
            return np.repeat(x[:, -1:], len(n), axis=1) + np.random.random()
        def strict(x, n):
            raise ValueError("B too small")
        """)
    write(tmp_path, "my_broken", "1 / 0\n")
    target, message = BAD[case]
    proc = simstudy(*SMALL, f"+estimators.top._target_={target}", "hydra.run.dir=run", cwd=tmp_path, check=False)
    one_line_error(proc, message)
    assert not (tmp_path / "run" / "chunks").exists()


def test_a_plugin_that_fails_mid_run_is_a_recorded_chunk_failure(tmp_path):
    write(tmp_path, "my_fragile", """
        import numpy as np
        def fragile(x, n):
            if x.shape[0] > 3:  # passes the 3-sample check, fails on a real chunk
                raise FloatingPointError("diverged")
            return np.repeat(x[:, -1:], len(n), axis=1)
        """)
    proc = simstudy(*SMALL, "budget.B=8", "+estimators.f._target_=my_fragile.fragile", "hydra.run.dir=run",
                    cwd=tmp_path, check=False)
    line = one_line_error(proc, "4 of 4 chunks failed", status=1)
    assert "FloatingPointError: diverged" in line and "simstudy replay" in line
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["failed_chunks"] == 4


def test_plugin_estimators_join_the_wrong_conclusion_study(tmp_path):
    write(tmp_path, "my_estimators_fig2", ESTIMATORS)
    simstudy(*FIG2, "+estimators.top._target_=my_estimators_fig2.best_of_all",
             "+estimators.vv._target_=my_estimators_fig2.v_again", "hydra.run.dir=run", cwd=tmp_path)
    s = summary(tmp_path / "run")
    for measure in ("wrong_rate", "right_rate", "tie_rate", "mean_gap"):
        assert len(values(s, "top", measure)) == 2
    # at n = B, V's weights on the top score are below 1 but the sample maximum uses only it: the estimators
    # differ; V computed by the plug-in agrees with the built-in V
    np.testing.assert_allclose(values(s, "vv", "mean_gap").estimate.to_numpy(),
                               values(s, "v", "mean_gap").estimate.to_numpy(), rtol=0, atol=1e-12)
    assert (tmp_path / "run" / "figure.png").stat().st_size > 0


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_adding_a_plugin_changes_no_other_estimator_s_numbers(tmp_path):
    """Beside a bootstrap (its own random stream keyed by its name) and the closed forms."""
    write(tmp_path, "my_estimators_add", ESTIMATORS)
    args = [*SMALL, "budget.B=8", "estimators=[v,bootstrap]", "estimators.bootstrap.resamples=50"]
    simstudy(*args, "hydra.run.dir=without", cwd=tmp_path)
    simstudy(*args, "+estimators.top._target_=my_estimators_add.best_of_all", "hydra.run.dir=with", cwd=tmp_path)
    without, with_ = summary(tmp_path / "without"), summary(tmp_path / "with")
    kept = with_[with_.estimator.isin(set(without.estimator))].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, without.reset_index(drop=True), check_exact=True)
    assert len(values(with_, "top-bootstrap", "mse")) == 8


def test_a_plugin_estimator_is_refused_by_studies_that_take_closed_forms_only(tmp_path):
    write(tmp_path, "my_estimators_cov", ESTIMATORS)
    proc = simstudy("experiment=lourie_fig4_bootstrap_coverage", "+estimators.top._target_=my_estimators_cov.best_of_all",
                    cwd=tmp_path, check=False)
    one_line_error(proc, "estimators.top: plug-in estimators join the evp_accuracy and wrong_conclusions studies")


def test_a_registered_method_name_is_a_plugin(tmp_path, monkeypatch):
    write(tmp_path, "my_registered", ESTIMATORS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(extend.estimators, "_entries", {})
    plugins.register_estimator("maxall", "my_registered.best_of_all")
    assert plugins.estimator_methods() == {"u": None, "v": None, "w": None, "bootstrap": None,
                                           "maxall": "my_registered.best_of_all"}
    cfg = {"seed": 0, "distribution": {"kind": "truncnorm", "name": "t"}, "budget": {"B": 5, "n": None},
           "estimators": {"m": {"method": "maxall"}}, "study": {"name": "s", "kind": "evp_accuracy", "reps": 10},
           "runner": {"n_jobs": 1, "backend": "sequential"}}
    est = config.parse(cfg).estimators[0]
    assert (est.method, est.target, len(est.source)) == ("plugin", "my_registered.best_of_all", 16)
    with pytest.raises(ValueError, match="'u' is a built-in estimator"):
        plugins.register_estimator("u", "my_registered.best_of_all")


def test_an_edited_plugin_never_resumes_the_old_code_s_chunks(tmp_path):
    write(tmp_path, "my_edited", ESTIMATORS)
    args = [*SMALL, "budget.B=6", "+estimators.top._target_=my_edited.best_of_all", "hydra.run.dir=run"]
    simstudy(*args, cwd=tmp_path)
    write(tmp_path, "my_edited", ESTIMATORS.replace("sorted_scores[:, -1:]", "sorted_scores[:, -2:-1]"))
    # the in-process run forgot the module it imported (as a process would): the edited file is read afresh
    assert "my_edited" not in sys.modules
    one_line_error(simstudy(*args, cwd=tmp_path, check=False), "plug-in my_edited.best_of_all changed")


# --- distributions ------------------------------------------------------------------------------------------

def within_mcse(s: pd.DataFrame, estimators=("u", "v", "w"), k: float = 4.0) -> None:
    """The Monte Carlo mean of each closed-form estimator agrees with its exact mean (quadrature)."""
    for est in estimators:
        mc, exact = values(s, est, "mean"), values(s, est, "exact_mean")
        assert len(exact) == len(mc) > 0
        assert (np.abs(mc.estimate.to_numpy() - exact.estimate.to_numpy()) < k * mc.mcse.to_numpy()).all(), est


@pytest.mark.parametrize("name, params, theta1, theta2", [
    ("beta", "{a: 5, b: 2}", 5 / 7, None),
    ("norm", "{loc: 0.6, scale: 0.07}", 0.6, 0.6 + 0.07 / np.sqrt(np.pi)),  # E[max of 2] = loc + scale / sqrt(pi)
])
def test_a_scipy_distribution_has_exact_truths_that_the_simulation_matches(tmp_path, name, params, theta1, theta2):
    simstudy(*SMALL, "budget.B=10", "distribution=scipy", f"distribution.name={name}",
             f"distribution.params={params}", "hydra.run.dir=run", cwd=tmp_path)
    s = summary(tmp_path / "run")
    assert set(s.distribution) == {name}
    th = values(s, "truth", "expected_max").estimate.to_numpy()
    assert th[0] == pytest.approx(theta1, abs=1e-10)
    if theta2 is not None:
        assert th[1] == pytest.approx(theta2, abs=1e-10)
    within_mcse(s)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["distributions"][name]["dist"] == name


def test_a_scipy_distribution_on_an_unbounded_support_has_quadrature_truths():
    d = ScipyDistribution("norm", {})
    assert d.support == (-np.inf, np.inf)
    assert truth.expected_max(d, [2, 3]) == pytest.approx([1 / np.sqrt(np.pi), 1.5 / np.sqrt(np.pi)], abs=1e-10)
    assert truth.order_statistic_means(d, 2) == pytest.approx([-1 / np.sqrt(np.pi), 1 / np.sqrt(np.pi)], abs=1e-10)


MY_DISTS = """
import numpy as np

class Kumaraswamy:
    # F(x) = 1 - (1 - x^a)^b on [0, 1]
    is_discrete = False
    support = (0.0, 1.0)

    def __init__(self, a=2.0, b=5.0):
        self.a, self.b = float(a), float(b)

    def cdf(self, x):
        x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
        return 1 - (1 - x ** self.a) ** self.b

    def ppf(self, q):
        return (1 - (1 - np.asarray(q, dtype=float)) ** (1 / self.b)) ** (1 / self.a)

    def sample(self, size, *, rng):
        return self.ppf(rng.random(size))

class Unseeded(Kumaraswamy):
    def sample(self, size, *, rng):
        return self.ppf(np.random.random(size))
"""


def test_a_distribution_class_by_target_with_keyword_arguments(tmp_path):
    write(tmp_path, "my_dists", MY_DISTS)
    simstudy(*SMALL, "budget.B=10", "distribution=custom", "distribution._target_=my_dists.Kumaraswamy",
             "+distribution.a=3", "hydra.run.dir=run", "runner.n_jobs=2", cwd=tmp_path)
    s = summary(tmp_path / "run")
    assert set(s.distribution) == {"Kumaraswamy"}
    # E[X] = b B(1 + 1/a, b) with a = 3, b = 5
    from scipy.special import beta

    assert values(s, "truth", "expected_max").estimate.iloc[0] == pytest.approx(5 * beta(1 + 1 / 3, 5), abs=1e-10)
    within_mcse(s)


@pytest.mark.parametrize("args, message", [
    (["distribution=scipy", "distribution.name=btea", "distribution.params={a: 5, b: 2}"],
     "distribution.name must name a continuous scipy.stats distribution; did you mean beta"),
    (["distribution=scipy", "distribution.name=poisson", "distribution.params={mu: 3}"],
     "distribution.name must be a continuous scipy.stats distribution (for a discrete population of scores use "
     "kind: bag), got 'poisson'"),
    (["distribution=scipy", "distribution.name=beta", "distribution.params={a: -1, b: 2}"],
     "distribution.params.a must be in (0, inf) for scipy.stats.beta, got -1"),
    (["distribution=scipy", "distribution.name=beta", "distribution.params={a: 5, c: 2}"],
     "distribution.params.c is not a parameter of scipy.stats.beta (parameters: a, b, loc, scale), got 2"),
    (["distribution=scipy", "distribution.name=beta"],
     "distribution.params.a is required by scipy.stats.beta (parameters: a, b, loc, scale)"),
    (["distribution=scipy", "distribution.name=norm", "distribution.params={scale: 0}"],
     "distribution.params.scale must be > 0, got 0"),
    (["distribution=scipy", "distribution.name=cauchy"],
     "distribution.params give scipy.stats.cauchy an infinite or undefined mean"),
    (["distribution=custom", "distribution._target_=my_dists.Nope"],
     "distribution._target_=my_dists.Nope: my_dists has no attribute 'Nope'"),
    (["distribution=custom", "distribution._target_=my_dists.Kumaraswamy", "+distribution.c=1"],
     "distribution._target_=my_dists.Kumaraswamy: Kumaraswamy(c=1) raised TypeError"),
    (["distribution=custom", "distribution._target_=my_dists.Unseeded"],
     "distribution._target_=my_dists.Unseeded: sample returned different scores for the same generator"),
    (["+distribution._target_=my_dists.Kumaraswamy"],
     "distribution gives both kind=truncnorm_bag and _target_=my_dists.Kumaraswamy"),
])
def test_a_bad_distribution_is_a_one_line_error_before_any_compute(tmp_path, args, message):
    write(tmp_path, "my_dists", MY_DISTS)
    proc = simstudy(*SMALL, *args, "hydra.run.dir=run", cwd=tmp_path, check=False)
    one_line_error(proc, message)
    assert not (tmp_path / "run" / "chunks").exists()


@pytest.mark.system
def test_the_worked_example_runs_through_figures_1_and_2(tmp_path):
    """examples/run_my_estimator.py at a tiny scale: both studies, the jackknife estimator beside u, v, w."""
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "run_my_estimator.py"), "--reps", "400",
                           "--out", str(tmp_path)], cwd=ROOT / "examples", capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    fig1 = pd.read_parquet(tmp_path / "fig1" / "summary.parquet")
    fig2 = pd.read_parquet(tmp_path / "fig2" / "summary.parquet")
    assert len(values(fig1, "jackknife-v", "mse")) == 30 and len(values(fig2, "jackknife", "wrong_rate")) > 0
    assert (tmp_path / "fig1" / "figure.png").stat().st_size > 0
