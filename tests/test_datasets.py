"""Score-data loading: the shipped data sets, and load_scores on good and malformed files."""

import json
from importlib import resources

import numpy as np
import pytest

from simstudy import datasets, score_files
from simstudy.datasets import DataError, load_scores

DATA = resources.files("simstudy") / "data"


# -- shipped data ---------------------------------------------------------------------------------------


def test_reuters_hedwig():
    scores = datasets.reuters_hedwig()
    assert set(scores) == {"mlp", "lstm"}
    assert scores["mlp"].shape == (145,) and scores["lstm"].shape == (152,)
    for x in scores.values():
        assert x.dtype == np.float64
        assert np.all((x >= 0) & (x <= 1))
    lines = [line.split("\t") for line in (DATA / "reuters_hedwig" / "hedwig.tsv").read_text().splitlines()]
    assert {line[3] for line in lines[1:]} == {"dev"}  # the loader relies on the file holding only dev F1
    # file order: the first run in the file is a reg_lstm run
    assert lines[1][0] == "reg_lstm"
    assert scores["lstm"][0] == float(lines[1][4])


@pytest.mark.parametrize("model, file", [("deberta", "deberta-base"), ("debertav3", "deberta-v3-base")])
@pytest.mark.parametrize("split", ["matched", "mismatched"])
def test_deberta_mnli(model, file, split):
    best = datasets.deberta_mnli(model, split=split)
    final = datasets.deberta_mnli(model, split=split, reduce="final")
    assert best.shape == final.shape == (1024,)
    assert np.all(best >= final)
    assert np.all((final >= 0) & (best <= 1))
    np.testing.assert_array_equal(datasets.deberta_mnli(model, split=split, reduce="best"), best)
    # spot check against the raw JSONL, computed independently of the loader
    lines = (DATA / "deberta_mnli" / f"{file}.results.jsonl").read_text().splitlines()
    for i in (0, 511, 1023):
        curve = json.loads(lines[i])["learning_curves"][split]
        assert best[i] == max(acc for _, acc in curve)
        assert final[i] == curve[-1][1]


def test_tdsa_fiesta():
    scores = datasets.tdsa_fiesta()
    assert len(scores) == 12
    assert {"atae", "ian", "lstm", "tdlstm"} <= set(scores)
    raw = json.loads((DATA / "tdsa_fiesta" / "test_f1.json").read_text())
    for model, x in scores.items():
        assert x.shape == (500,) and x.dtype == np.float64
        assert np.all((x >= 0) & (x <= 1))
        np.testing.assert_array_equal(x, raw[model])


def test_shipped_arrays_are_read_only():
    arrays = [*datasets.reuters_hedwig().values(), *datasets.tdsa_fiesta().values(),
              datasets.deberta_mnli("deberta")]
    for x in arrays:
        assert not x.flags.writeable
        with pytest.raises(ValueError):
            x[0] = 0.5
    # the returned dict is a copy: mutating it does not touch the cache
    datasets.reuters_hedwig().pop("mlp")
    assert "mlp" in datasets.reuters_hedwig()


def test_load_dataset_dispatches():
    assert datasets.load_dataset("reuters_hedwig", "lstm") is datasets.reuters_hedwig()["lstm"]
    assert datasets.load_dataset("tdsa_fiesta", "ian_50") is datasets.tdsa_fiesta()["ian_50"]
    np.testing.assert_array_equal(datasets.load_dataset("deberta_mnli", "debertav3", split="mismatched",
                                                        reduce="final"),
                                  datasets.deberta_mnli("debertav3", split="mismatched", reduce="final"))
    assert set(datasets.DATASETS) == {"reuters_hedwig", "deberta_mnli", "tdsa_fiesta"}


@pytest.mark.parametrize("call, message", [
    (lambda: datasets.load_dataset("foo", "mlp"),
     "unknown dataset 'foo'; choose one of: deberta_mnli, reuters_hedwig, tdsa_fiesta"),
    (lambda: datasets.load_dataset("reuters_hedwig", "gpt"), "'gpt'; choose one of: lstm, mlp"),
    (lambda: datasets.load_dataset("tdsa_fiesta", "bert"), "'bert'; choose one of: atae, atae_200"),
    (lambda: datasets.load_dataset("deberta_mnli", "bert"), "'bert'; choose one of: deberta, debertav3"),
    (lambda: datasets.deberta_mnli("deberta", split="dev"), "'dev'; choose one of: matched, mismatched"),
    (lambda: datasets.deberta_mnli("deberta", reduce="mean"), "'mean'; choose one of: best, final"),
    (lambda: datasets.load_dataset("deberta_mnli", "deberta", splt="matched"),
     "'splt'; choose one of: reduce, split"),
    (lambda: datasets.load_dataset("tdsa_fiesta", "atae", split="matched"), "takes no options"),
])
def test_unknown_names_list_the_valid_ones(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- load_scores on good files --------------------------------------------------------------------------


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_single_column_is_one_model_named_after_the_file(tmp_path):
    path = write(tmp_path, "runs.csv", "acc\n0.5\n0.25\n0.75\n\n")
    scores = load_scores(path)
    assert list(scores) == ["runs"]
    np.testing.assert_array_equal(scores["runs"], [0.5, 0.25, 0.75])
    assert scores["runs"].dtype == np.float64


def test_csv_model_and_score_columns_keep_file_order(tmp_path):
    path = write(tmp_path, "scores.csv", "seed,model,score\n1,b,0.3\n2,a,0.1\n3,b,0.2\n4,a,0.4\n")
    scores = load_scores(path, low=0, high=1)
    assert list(scores) == ["b", "a"]
    np.testing.assert_array_equal(scores["b"], [0.3, 0.2])
    np.testing.assert_array_equal(scores["a"], [0.1, 0.4])


def test_tsv_with_named_columns(tmp_path):
    path = write(tmp_path, "runs.tsv", "model_name\tf1\nmlp\t0.7\nmlp\t0.8\nlstm\t0.5\nlstm\t0.6\n")
    scores = load_scores(path, score_column="f1", model_column="model_name")
    assert {k: v.tolist() for k, v in scores.items()} == {"mlp": [0.7, 0.8], "lstm": [0.5, 0.6]}


def test_jsonl(tmp_path):
    lines = [{"model": "x", "score": 1, "lr": 0.1}, {"model": "y", "score": -2.5}, {"model": "x", "score": 3},
             {"model": "y", "score": 4e-3}]
    path = write(tmp_path, "runs.jsonl", "\n".join(json.dumps(line) for line in lines) + "\n")
    scores = load_scores(path)
    assert {k: v.tolist() for k, v in scores.items()} == {"x": [1.0, 3.0], "y": [-2.5, 0.004]}


def test_json_mapping_and_list_of_objects(tmp_path):
    mapping = write(tmp_path, "map.json", json.dumps({"a": [0.1, 0.2], "b": [0.3, 0.4, 0.5]}))
    assert {k: v.tolist() for k, v in load_scores(mapping).items()} == {"a": [0.1, 0.2], "b": [0.3, 0.4, 0.5]}
    records = write(tmp_path, "list.json", json.dumps([{"acc": 0.1}, {"acc": 0.2}, {"acc": "0.3"}]))
    np.testing.assert_array_equal(load_scores(records)["list"], [0.1, 0.2, 0.3])


# -- load_scores on bad files: the message names the file, the row and the value ----------------------------


@pytest.mark.parametrize("name, text, kwargs, parts", [
    ("empty.csv", "", {}, ["empty.csv", "empty"]),
    ("blank.jsonl", "\n  \n", {}, ["blank.jsonl", "empty"]),
    ("scores.csv", "model_name,seed\nmlp,1\nmlp,2\n", {"score_column": "f1"},
     ["scores.csv: missing column 'f1' (columns: model_name, seed)"]),
    ("scores.csv", "a,b\n1,2\n3,4\n", {}, ["scores.csv: missing column 'score' (columns: a, b)"]),
    ("scores.csv", "score\n0.1\n0.2\nabc\n", {}, ["scores.csv: row 4: score is not a number: 'abc'"]),
    ("scores.csv", "score\n0.1\n\n0.2\n0.3\nnan\n", {}, ["scores.csv: row 3: score is missing"]),  # a blank line
    ("scores.csv", "score\n0.1\n0.2\n0.3\nnan\n", {}, ["scores.csv: row 5: score nan is missing"]),
    ("scores.csv", "score\n0.1\ninf\n", {}, ["scores.csv: row 3: score inf is not finite"]),
    ("scores.csv", "score\n0.1\n-Infinity\n", {}, ["scores.csv: row 3: score -Infinity is not finite"]),
    ("scores.csv", "score\n0.1\n0.2\n\n\n\n0.3\n1.7\n", {"low": 0, "high": 1, "missing": "drop"},
     ["scores.csv: row 8: score 1.7 is outside the support [0, 1]"]),
    ("scores.csv", "model,score\nmlp,0.1\nlstm,0.2\nlstm,0.3\n", {},
     ["scores.csv: model 'mlp' has 1 score; at least 2 are needed"]),
    ("scores.csv", "model,score\na,0.1\na,0.2\na\n", {},
     ["scores.csv: row 4: 1 field, but the header has 2 (model, score): 'a'"]),
    ("scores.csv", "model,score\na,0.1\na,0.2\n,0.3\n", {}, ["scores.csv: row 4: model is missing: ''"]),
    ("scores.csv", "score\n0.1\n0.2,0.3,0.4\n", {},
     ["scores.csv: row 3: 3 fields, but the header has 1 (score): '0.2,0.3,0.4'"]),
    ("scores.tsv", "f1\tseed\n0.5\t1\n0.5\t2\n-0.1\t3\n", {"score_column": "f1", "low": 0},
     ["scores.tsv: row 4: f1 -0.1 is outside the support [0, inf]"]),
    ("runs.jsonl", '{"score": 0.1}\n\n{"score": NaN}\n', {}, ["runs.jsonl: row 3: score NaN is missing"]),
    ("runs.jsonl", '{"score": 0.1}\n\n{"score": Infinity}\n', {},
     ["runs.jsonl: row 3: score inf is not finite"]),
    ("runs.jsonl", '{"score": 0.1}\n{"score": "x"}\n', {}, ["runs.jsonl: row 2: score is not a number: 'x'"]),
    ("runs.jsonl", '{"score": 0.1}\n{"score": true}\n', {}, ["row 2: score is not a number: True"]),
    ("runs.jsonl", '{"score": 0.1}\n{"score": null}\n', {}, ["row 2: score null is missing"]),
    ("runs.jsonl", '{"score": 0.1}\n{"score": [1]}\n', {}, ["row 2: score is not a number: [1]"]),
    ("runs.jsonl", '{"score": 0.1}\n{"loss": 0.2}\n', {}, ["runs.jsonl: row 2: missing 'score'"]),
    ("runs.jsonl", '{"score": 0.1}\n{"score": 0.2,\n', {}, ["runs.jsonl: row 2: not valid JSON"]),
    ("runs.jsonl", '{"score": 0.1}\n[0.2]\n', {}, ["runs.jsonl: row 2: expected a JSON object, got [0.2]"]),
    ("runs.json", '{"a": [0.1, 0.2], "b": [0.3, "x"]}', {},
     ["runs.json: item ['b'][1]: score is not a number: 'x'"]),
    ("runs.json", '{"a": [0.1, 0.2], "b": [0.3]}', {}, ["runs.json: model 'b' has 1 score; at least 2"]),
    ("runs.json", '{"a": 0.1}', {}, ["runs.json: item ['a']: expected a list of scores, got 0.1"]),
    ("runs.json", '[{"score": 0.1}, {"score": 2}]', {"high": 1},
     ["runs.json: item [1]: score 2 is outside the support [-inf, 1]"]),
    ("runs.json", '{"a": [0.1,\n 0.2,,\n', {}, ["runs.json: row 2: not valid JSON"]),
    ("runs.json", '[]', {}, ["runs.json: no scores"]),
    ("header.csv", "score\n", {}, ["header.csv: no scores"]),
])
def test_bad_files(tmp_path, name, text, kwargs, parts):
    path = write(tmp_path, name, text)
    with pytest.raises(DataError) as info:
        load_scores(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    for part in parts:
        assert part in message


def test_hedwig_style_message(tmp_path):
    lines = ["model_name\tdataset_name\t--seed\tset_type\tf1"]
    lines += [f"mlp\tReuters\t{i}\tdev\t0.{i + 10}" for i in range(15)] + ["mlp\tReuters\t99\tdev\tabc"]
    path = write(tmp_path, "hedwig.tsv", "\n".join(lines) + "\n")
    with pytest.raises(DataError) as info:
        load_scores(path, score_column="f1", model_column="model_name")
    assert str(info.value) == f"{path}: row 17: f1 is not a number: 'abc'"


@pytest.mark.parametrize("curve, message", [
    ([[1000, 0.5], [2000, float("nan")]], "matched accuracy nan is not finite"),
    ([[1000, 1.5]], "matched accuracy 1.5 is outside the support [0, 1]"),
    ([], "learning_curves.matched is empty"),
    ([0.5], "learning_curves.matched is not a list of [step, accuracy]"),
])
def test_shipped_deberta_goes_through_the_same_validation(monkeypatch, curve, message):
    records = [{"learning_curves": {"matched": [[1000, 0.5]]}}, {"learning_curves": {"matched": curve}}]
    table = score_files._records_table(records, ["row 1", "row 2"])
    monkeypatch.setattr(datasets, "_shipped", lambda folder, file: table)
    datasets._deberta.cache_clear()  # keep the fake rows out of the real cache, and vice versa
    try:
        with pytest.raises(DataError) as info:
            datasets.deberta_mnli("deberta")
        assert str(info.value) == "deberta-base.results.jsonl: row 2: " + message
    finally:
        datasets._deberta.cache_clear()


def test_model_names_are_stripped(tmp_path):
    # one spelling throughout is padding; "mlp" and "mlp " in one file are refused (test_probe_files)
    path = write(tmp_path, "s.csv", "model,score\nmlp ,0.1\nmlp ,0.2\n")
    assert load_scores(path)["mlp"].tolist() == [0.1, 0.2]


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="nope.csv: no such file"):
        load_scores(tmp_path / "nope.csv")


def test_directory_is_unreadable(tmp_path):
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(DataError, match="dir.csv: cannot read"):
        load_scores(tmp_path / "dir.csv")


def test_unknown_suffix_lists_the_supported_ones(tmp_path):
    path = write(tmp_path, "scores.xlsx", "score\n1\n2\n")
    with pytest.raises(DataError) as info:
        load_scores(path)
    assert str(info.value) == (
        f"{path}: unknown file type '.xlsx'; supported: score files (.csv, .json, .jsonl, .tsv) and the tuning "
        "sources of `simstudy sources --help` (Optuna, MLflow, Ray Tune, W&B, SMAC3, HpBandSter, Syne Tune), which "
        "this file is not"
    )


def test_data_error_is_a_value_error():
    assert issubclass(DataError, ValueError)


@pytest.mark.parametrize("kwargs, message", [
    ({"low": 1, "high": 0}, "need low <= high"),
    ({"low": float("nan")}, "need low <= high"),
    ({"min_scores": 0}, "min_scores must be an integer >= 1"),
    ({"min_scores": 1.5}, "min_scores must be an integer >= 1"),
])
def test_bad_arguments(tmp_path, kwargs, message):
    path = write(tmp_path, "ok.csv", "score\n1\n2\n")
    with pytest.raises(ValueError, match=message):
        load_scores(path, **kwargs)


def test_min_scores_one_accepts_a_single_score(tmp_path):
    path = write(tmp_path, "one.csv", "score\n0.5\n")
    assert load_scores(path, min_scores=1)["one"].tolist() == [0.5]


def test_sample_runs_first_or_a_seeded_random_subset():
    runs = {"a": np.arange(20.0), "b": np.arange(100.0, 130.0)}
    first = datasets.sample_runs(runs, 5)
    assert first["a"].tolist() == [0, 1, 2, 3, 4] and first["b"].tolist() == [100, 101, 102, 103, 104]
    one, again = datasets.sample_runs(runs, 5, seed=7), datasets.sample_runs(runs, 5, seed=7)
    for m in runs:
        assert np.array_equal(one[m], again[m]) and len(set(one[m])) == 5 and set(one[m]) <= set(runs[m])
        assert (np.diff(one[m]) > 0).all()  # kept in the runs' (random-search) order
    # keyed by seed and model: a model's sample does not depend on the other models loaded
    assert np.array_equal(datasets.sample_runs({"b": runs["b"]}, 5, seed=7)["b"], one["b"])
    assert not np.array_equal(datasets.sample_runs(runs, 5, seed=8)["a"], one["a"])
    with pytest.raises(ValueError, match=r"^sample_size=35 exceeds the scores of model\(s\) a, b$"):
        datasets.sample_runs(runs, 35, seed=1)
    with pytest.raises(ValueError, match="sample_seed must be an integer >= 0 or null, got -1"):
        datasets.sample_runs(runs, 5, seed=-1)


def test_the_iid_check_says_plainly_when_a_model_has_too_many_trials_to_test():
    from simstudy.datasets import ORDER_TEST_MAX_N, check_model

    x = np.arange(ORDER_TEST_MAX_N + 1, dtype=float)  # a perfect trend: it would be flagged if it were tested
    check = check_model("big", x, "file order", ("not recorded",), "", False)
    assert check.pvalue is None and not check.not_random
    assert check.meaning.startswith(f"Not tested: {ORDER_TEST_MAX_N + 1:,} trials are more than the order test")
