"""Issue 25: score files read exactly as written, numbers that keep their digits, options that apply.

Every file is written byte for byte; every array read is compared with the literal scores, every refusal with
its one line; numbers are compared with exact answers."""

import warnings

import numpy as np
import pytest

from simstudy import datasets
from simstudy.datasets import DataError, read_scores


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# -- blank lines and "" fields of a one-column file are failed runs -------------------------------------------


def pandas_column(with_header: bool) -> str:
    """What ``pd.Series([nan, .5, nan, .7, .6], name="score").to_csv(index=False)`` writes: NaN as ``""``."""
    return ("score\n" if with_header else "") + '""\n0.5\n""\n0.7\n0.6\n'


@pytest.mark.parametrize(
    "text, rows",
    [
        (pandas_column(True), [2, 4]),
        (pandas_column(False), [1, 3]),
        ("score\n0.5\n\n0.7\n\n0.6\n\n\n", [3, 5]),  # blank lines among the scores; the trailing ones are not data
        ("0.5\n \n0.7\n\n0.6\n", [2, 4]),  # headerless, unquoted; a line of spaces is an empty field too
        ("0.5,\n\n0.7,\n\n0.6,\n", [2, 4]),  # a trailing delimiter on every score line
    ],
)
def test_one_column_blank_lines_are_missing_scores(tmp_path, text, rows):
    path = write(tmp_path, "runs.csv", text)
    with pytest.raises(DataError) as info:
        read_scores(path)  # missing="error" is the default: never a silent loss
    assert str(info.value).startswith(f"{path}: row {rows[0]}: score")
    assert "is missing (a failed run?): pass missing=drop" in str(info.value)
    dropped = read_scores(path, missing="drop")
    np.testing.assert_array_equal(dropped.scores["runs"], [0.5, 0.7, 0.6])
    assert dropped.dropped == {"runs": 2}
    replaced = read_scores(path, missing=0.0)
    expected = np.array([0.5, 0.7, 0.6] + [0.0, 0.0])
    got = replaced.scores["runs"]
    assert got.size == 5 and replaced.replaced == {"runs": 2}
    np.testing.assert_array_equal(np.sort(got), np.sort(expected))


def test_blank_lines_before_a_header_and_after_the_scores_are_not_data(tmp_path):
    path = write(tmp_path, "runs.csv", "\n\nscore\n0.5\n0.7\n\n\n")
    np.testing.assert_array_equal(read_scores(path).scores["runs"], [0.5, 0.7])


def test_512_runs_written_by_pandas_with_3_failures_keep_their_count(tmp_path):
    pd = pytest.importorskip("pandas")
    x = np.linspace(0.1, 0.9, 512)
    x[[7, 100, 400]] = np.nan
    path = tmp_path / "runs.csv"
    pd.Series(x, name="score").to_csv(path, index=False)
    with pytest.raises(DataError, match=r"row 9: score is missing"):
        read_scores(path)
    result = read_scores(path, missing="drop")
    assert result.dropped == {"runs": 3}
    np.testing.assert_array_equal(result.scores["runs"], x[~np.isnan(x)])


# -- numbers are numbers as a file means them ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["score\n0.5\n1_0\n", "model,score\na,0.5\na,1_0\n"])
def test_an_underscore_is_not_a_digit_separator(tmp_path, text):
    path = write(tmp_path, "runs.csv", text)
    with pytest.raises(DataError) as info:
        read_scores(path)
    assert str(info.value) == f"{path}: row 3: score is not a number: '1_0'"


def test_json_names_are_exact(tmp_path):
    path = write(tmp_path, "runs.json", '{"a": [0.1, 0.2], "a ": [0.3, 0.4]}')
    scores = read_scores(path).scores
    assert list(scores) == ["a", "a "]
    np.testing.assert_array_equal(scores["a"], [0.1, 0.2])
    np.testing.assert_array_equal(scores["a "], [0.3, 0.4])


def test_load_models_of_a_file_names_load_scores():
    with pytest.raises(ValueError) as info:
        datasets.load_models("my.csv")
    assert str(info.value) == "'my.csv' is a score file, not a shipped data set: read it with load_scores('my.csv')"
    with pytest.raises(ValueError, match="load_scores"):
        datasets.load_dataset("runs.JSONL", "a")


def test_no_warning_when_nothing_is_missing(tmp_path):
    path = write(tmp_path, "runs.csv", "score\n0.5\n0.7\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        datasets.load_scores(path)


# -- numbers keep their digits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["v", "u", "w"])
@pytest.mark.parametrize("offset", [1e9, -(2.0**40)])
def test_an_offset_does_not_cost_digits(method, offset):
    from simstudy.stats.estimators import expected_max

    # multiples of 1/8 are exact at both offsets, so the exact answer is the estimate at 0 plus the offset,
    # rounded once: within one unit in the last place (the plain weighted sum was 2-3 units off at 1e9)
    x = np.random.default_rng(2501).integers(0, 800, size=1000) / 8.0
    at_offset = expected_max(x + offset, method)
    np.testing.assert_array_less(np.abs(at_offset - (expected_max(x, method) + offset)), np.spacing(abs(offset)) * 1.01)
    # a batch mixing a sample far from 0 with one near it: each is summed as it needs
    batch = expected_max(np.stack([x + offset, x]), method)
    np.testing.assert_array_less(np.abs(batch[0] - (expected_max(x, method) + offset)), np.spacing(abs(offset)) * 1.01)
    np.testing.assert_allclose(batch[1], expected_max(x, method), rtol=1e-14)


def test_a_constant_sample_is_its_value_at_every_budget():
    from simstudy.stats.estimators import expected_max

    for method in ("v", "u", "w"):
        np.testing.assert_array_equal(expected_max(np.full(7, 0.7), method), np.full(7, 0.7))


def test_huge_finite_scores_keep_a_finite_sd():
    from simstudy.tables import evp_curves

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow on the way
        c = evp_curves({"a": [0.0, 1e200], "b": [-1e308, 1e308]})
    # the max of n draws from {lo, hi} (equally likely) is hi with probability 1 - 2**-n: SD (hi - lo) sqrt(p(1-p))
    for model, (lo, hi) in {"a": (0.0, 1e200), "b": (-1e308, 1e308)}.items():
        rows = c[c["model"] == model]
        p = 1 - 0.5 ** rows["n"].to_numpy()
        half = hi / 2 - lo / 2  # (hi - lo) / 2 without overflow
        np.testing.assert_allclose(rows["std"], half * (2 * np.sqrt(p * (1 - p))), rtol=1e-12)
        np.testing.assert_allclose(rows["expected_max"], lo + half * (2 * p), rtol=1e-12)


def test_write_csv_keeps_every_digit(tmp_path):
    pd = pytest.importorskip("pandas")
    from simstudy import io

    values = [1e9 + 0.7, 1 / 3, 0.1 + 0.2, 1e-300]
    io.write_csv(pd.DataFrame({"x": values}), tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text() == "x\n1000000000.7\n0.3333333333333333\n0.30000000000000004\n1e-300\n"
    assert pd.read_csv(tmp_path / "t.csv")["x"].tolist() == values


# -- options that do not apply are refused, not ignored (simstudy curve / bands / audit) ----------------------


@pytest.mark.parametrize(
    "command, args, message",
    [
        ("curve", ["data=s.csv", "split=matched"], "split=matched applies to deberta_mnli's splits only; s.csv has "
         "none: drop split="),
        ("bands", ["data=s.csv", "reduce=final"], "reduce=final applies to deberta_mnli's learning curves only; "
         "s.csv has none: drop reduce="),
        ("curve", ["data=reuters_hedwig", "split=mismatched"], "split=mismatched applies to deberta_mnli's splits "
         "only; reuters_hedwig has none: drop split="),
        ("curve", ["data=tdsa_fiesta", "score_column=f1"], "score_column=f1 applies to score files only; "
         "tdsa_fiesta is a shipped data set whose columns are fixed: drop score_column="),
        ("audit", ["data=reuters_hedwig", "model=mlp", "model_column=name"], "model_column=name applies to score "
         "files only"),
        ("curve", ["data=reuters_hedwig", "models=[mlp,mlp]"], "models=['mlp', 'mlp'] names mlp more than once: "
         "give each model once"),
        ("curve", ["data=reuters_hedwig", "trial_time={mlp: 1, lstn: 2}"], "trial_time gives no time for model(s) "
         "lstm"),
        ("curve", ["data=reuters_hedwig", "trial_time={mlp: 1, lstm: 2, cnn: 3}"], "trial_time names model(s) cnn "
         "not among the models drawn (mlp, lstm): drop or rename them"),
        ("curve", ["data=reuters_hedwig", "models=[mlp]", "trial_time={mlp: 1, lstm: 2}"], "trial_time names "
         "model(s) lstm not among the models drawn (mlp)"),
        ("curve", ["data=s.csv", "missing=5", "low=0", "high=1"], "missing=5 is outside [low, high] = [0, 1]; it is "
         "the score a failed run counts as"),
        ("bands", ["data=s.csv", "missing=-1", "low=0", "high=1"], "missing=-1 is outside [low, high] = [0, 1]"),
        ("curve", ["data=reuters_hedwig", "missing=drop"], "missing=drop applies to score files only; "
         "reuters_hedwig has no missing scores: drop missing="),
        ("bands", ["data=tdsa_fiesta", "missing=0"], "missing=0 applies to score files only"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_options_that_do_not_apply_are_one_line(run_cli, tmp_path, command, args, message):
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    status, _, err = run_cli(command, *args)
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("simstudy: error: "), err
    assert message in lines[0], lines[0]
    assert not (tmp_path / "outputs").exists()


def test_deberta_mnli_still_takes_its_options():
    from simstudy.commands.curve import parse as parse_curve

    assert parse_curve({"data": "deberta_mnli", "split": "mismatched"}).data.options == (
        ("reduce", "best"),
        ("split", "mismatched"),
    )
    assert parse_curve({"data": "deberta_mnli"}).data.options == (("reduce", "best"), ("split", "matched"))


def test_curves_csv_at_offset_1e9_keeps_its_digits(run_cli, tmp_path):
    pd = pytest.importorskip("pandas")
    from simstudy.stats.estimators import expected_max

    scores = 1e9 + np.array([0.5, 0.625, 0.75, 0.875])  # exact at 1e9: the V curve is exact to one rounding
    (tmp_path / "s.csv").write_text("score\n" + "".join(f"{float(x)!r}\n" for x in scores))
    status, _, err = run_cli("curve", "data=s.csv", "hydra.run.dir=run")
    assert status == 0, err
    written = pd.read_csv(tmp_path / "run" / "curves.csv")["expected_max"].to_numpy()
    exact = expected_max(scores - 1e9, "v") + 1e9
    np.testing.assert_array_less(np.abs(written - exact), np.spacing(1e9) * 1.01)
    assert written[0] == 1e9 + 0.6875  # the mean; %.10g wrote 1000000001


# -- degenerate estimates are exact zeros; complex estimates are refused ---------------------------------------


def test_a_constant_estimator_has_exact_zero_variance_and_mcses():
    from simstudy.stats import metrics

    rng = np.random.default_rng(2502)
    truth = np.array([0.7123, 0.8, 0.9])
    constant = np.broadcast_to(np.array([0.3, 0.55, 0.95])[:, None] - truth[:, None], (3, 1000))
    noisy = rng.normal(size=(3, 1000))
    tiny = 5.0 + 1e-3 * rng.normal(size=(3, 1000))  # a real variance 25 million times below E[d^2]: kept
    G = metrics.moment_gram(np.stack([constant, noisy, tiny], axis=1))
    p = metrics.performance(G[:, :, :], truth)
    for measure in ("variance", "empse"):
        np.testing.assert_array_equal(p.measures[measure][0][0], 0.0)  # were -1.8e-18 and NaN
    for measure, (_, mcse) in p.measures.items():
        np.testing.assert_array_equal(mcse[0], 0.0, err_msg=measure)  # were NaN
    np.testing.assert_array_equal(p.measures["mean"][0][0], [0.3, 0.55, 0.95])
    np.testing.assert_array_equal(p.degenerate, [[True] * 3, [False] * 3, [False] * 3])
    assert np.all(p.measures["variance"][0][2] > 0.9e-6) and np.all(np.isfinite(p.measures["empse"][1]))
    # paired with a constant, a difference varies as the other estimator does
    (e, f) = p.pairs[0]
    assert (e, f) == (1, 0)
    np.testing.assert_allclose(p.paired["bias"][1][0], p.measures["bias"][1][1], rtol=1e-12)


PLUGINS = """
import numpy as np

def constant(x, n):
    return np.full((x.shape[0], len(n)), 0.5)

def complex_v(x, n):
    return np.repeat(x[:, -1:], len(n), axis=1) + 0.25j
"""


@pytest.fixture
def plugin_dir(tmp_path, forget_plugins):
    (tmp_path / "my_edge_plugins.py").write_text(PLUGINS)
    return tmp_path


def test_a_complex_plugin_is_one_line_and_exit_2(plugin_dir):
    from _cli import FIG1, one_line_error, simstudy

    proc = simstudy(*FIG1, "study.reps=200", "study.chunk_reps=100", "runner.n_jobs=1",
                    "+estimators.c._target_=my_edge_plugins.complex_v", "hydra.run.dir=run", cwd=plugin_dir,
                    check=False)
    one_line_error(proc, "estimators.c._target_=my_edge_plugins.complex_v: returned complex numbers (e.g. "
                         "(0.")
    assert "estimates must be real: return floats" in proc.stderr
    assert not (plugin_dir / "run" / "chunks").exists()


def test_a_constant_plugin_gets_exact_zeros_and_a_note(plugin_dir):
    import json

    pd = pytest.importorskip("pandas")
    from _cli import FIG1, simstudy

    proc = simstudy(*FIG1, "study.reps=200", "study.chunk_reps=100", "runner.n_jobs=1", "budget.B=[5]",
                    "study.save_replicates=false", "+estimators.k._target_=my_edge_plugins.constant",
                    "hydra.run.dir=run", cwd=plugin_dir)
    s = pd.read_parquet(plugin_dir / "run" / "summary.parquet")
    k = s[s.estimator == "k"]
    assert len(k) and np.isfinite(k.mcse).all()
    assert (k[k.measure.isin(["variance", "empse"])].estimate == 0.0).all()
    assert (k.mcse == 0.0).all()
    notes = json.loads((plugin_dir / "run" / "run.json").read_text())["notes"]
    assert len(notes) == 1 and "estimator k gave the same estimate in all 200 replicates at n = 1, 2, 3, 4, 5" \
        in notes[0]
    assert notes[0] in proc.stdout + proc.stderr


# -- the audit of repeated scores names what helps ---------------------------------------------------------


def test_auditing_identical_scores_names_no_option_that_fails(run_cli, tmp_path):
    (tmp_path / "s.csv").write_text("score\n0.7\n0.7\n0.7\n0.7\n0.7\n")
    status, _, err = run_cli("audit", "data=s.csv")
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "s.csv holds 5 scores all equal to 0.7: the audit fits a density to the scores and needs at least two " \
        "distinct ones" in err and "distribution.your_scores" not in err
    assert "find_atoms" not in err  # find_atoms=false cannot fit a density to one value either


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_the_audit_takes_the_option_its_message_names(run_cli, tmp_path):
    (tmp_path / "t.csv").write_text("score\n0.7\n0.7\n0.7\n0.7\n0.7\n0.8\n")
    status, _, err = run_cli("audit", "data=t.csv", "rounds=8", "bootstrap_rounds=4", "evp_reps=20", "resamples=4")
    assert status == 2 and "give find_atoms=false to fit one density to all the scores" in err, err
    status, out, err = run_cli("audit", "data=t.csv", "find_atoms=false", "rounds=8", "bootstrap_rounds=4",
                               "evp_reps=20", "resamples=4", "hydra.run.dir=run")
    assert status == 0, err
    assert (tmp_path / "run" / "AUDIT.md").exists()


@pytest.mark.parametrize("spec, fix", [
    ({"low": 0, "high": 1}, "pass distribution.nas.scale=0.01 (or distribution.nas.high=100)"),
    ({}, "pass distribution.nas.missing=drop to leave such runs out or distribution.nas.missing=0"),
])
def test_a_score_files_fix_names_the_key_the_study_takes(tmp_path, spec, fix):
    # A NAS-Bench-201 export is in percent; the command line's fix, scale=0.01, is no key of a study, whose file
    # distribution takes distribution.NAME.scale=0.01: the fix names the key where the file was given. A file name
    # with "low=" in it (a directory simstudy named) is left as it is.
    from simstudy.config_distributions import parse_distributions
    from simstudy.schema import ConfigError

    folder = tmp_path / "data=x,low=0"
    folder.mkdir()
    path = folder / "nas.csv"
    path.write_text("model,score\ncifar100,0.6482\ncifar100,0.701\ncifar100,\n" if not spec else
                    "model,score\ncifar100,64.82\ncifar100,70.1\n")
    with pytest.raises(ConfigError) as exc:
        parse_distributions({"nas": {"kind": "file", "path": str(path), **spec}})
    message = str(exc.value)
    assert fix in message and f"{folder}" in message and "\n" not in message
