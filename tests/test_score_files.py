"""load_scores/read_scores on score files as researchers really write them: every file is written byte for
byte here, every array read is compared with the literal scores, every refusal with its one line."""

import warnings

import numpy as np
import pytest

from simstudy.datasets import DataError, DataWarning, ScoreFile, load_scores, read_scores


def write(tmp_path, name, data):
    """Write exact bytes (str is encoded as UTF-8 with no newline translation)."""
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def refusal(path, **kwargs):
    with pytest.raises(DataError) as info:
        load_scores(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


def assert_scores(scores, expected):
    assert list(scores) == list(expected)
    for model, x in expected.items():
        assert scores[model].dtype == np.float64
        np.testing.assert_array_equal(scores[model], x)


# -- 1. no score is lost ------------------------------------------------------------------------------------


def test_headerless_single_column_keeps_every_score(tmp_path):
    # the old loader took "0.71" for a column name and silently lost the first run
    path = write(tmp_path, "runs.csv", "0.71\n0.64\n0.69\n\n")  # a blank line after the scores is not data
    assert_scores(load_scores(path), {"runs": [0.71, 0.64, 0.69]})


def test_headerless_single_column_starting_with_a_failed_run(tmp_path):
    path = write(tmp_path, "runs.tsv", "NA\n0.64\n0.69\n")
    assert_scores(read_scores(path, missing="drop").scores, {"runs": [0.64, 0.69]})
    assert "runs.tsv: row 1: score NA is missing" in refusal(path)


def test_headerless_two_columns_is_refused(tmp_path):
    path = write(tmp_path, "runs.csv", "a,0.71\na,0.64\nb,0.69\n")
    assert refusal(path) == (f"{path}: row 1: the first row looks like data, not a header ('a,0.71'): "
                             "add a header line `model,score`")


# -- 2. formats -------------------------------------------------------------------------------------------


def test_bom_crlf_and_spaces_around_fields_and_names(tmp_path):
    path = write(tmp_path, "runs.csv",
                 "\ufeff Model , Score \r\n a , 0.5 \r\nb ,0.25\r\n\r\n a , 0.75\r\nb ,1\r\n")
    # each name spelled one way throughout (' a ' and 'a' would be refused: test_probe_files)
    assert_scores(load_scores(path), {"a": [0.5, 0.75], "b": [0.25, 1.0]})


@pytest.mark.parametrize("text", [
    "model,score,\na,0.71,\nb,0.64,\na,0.69,\nb,0.5,\n",   # an empty last field everywhere
    "model,score\na,0.71,\nb,0.64,\na,0.69,\nb,0.5,\n",    # ... only on the data rows
    "model,score,\na,0.71\nb,0.64\na,0.69\nb,0.5\n",       # ... only on the header
])
def test_trailing_delimiters(tmp_path, text):
    assert_scores(load_scores(write(tmp_path, "runs.csv", text)), {"a": [0.71, 0.69], "b": [0.64, 0.5]})


def test_trailing_comma_on_a_headerless_column(tmp_path):
    assert_scores(load_scores(write(tmp_path, "runs.csv", "0.71,\r\n0.64,\r\n0.69,\r\n")),
                  {"runs": [0.71, 0.64, 0.69]})


@pytest.mark.parametrize("name, text", [
    ("semi.csv", "seed;model;score\n1;a;0.5\n2;b;0.25\n3;a;0.75\n4;b;0.125\n"),
    ("tab.csv", "seed\tmodel\tscore\n1\ta\t0.5\n2\tb\t0.25\n3\ta\t0.75\n4\tb\t0.125\n"),
    ("comma.tsv", "seed,model,score\n1,a,0.5\n2,b,0.25\n3,a,0.75\n4,b,0.125\n"),
    ("semi.tsv", "seed;model;score\r\n1;a;0.5\r\n2;b;0.25\r\n3;a;0.75\r\n4;b;0.125\r\n"),
])
def test_delimiter_is_sniffed_whatever_the_suffix(tmp_path, name, text):
    assert_scores(load_scores(write(tmp_path, name, text)), {"a": [0.5, 0.75], "b": [0.25, 0.125]})


def test_commas_inside_a_semicolon_field_and_semicolons_inside_a_comma_file(tmp_path):
    # a config column holding the other delimiter does not fool the sniffing
    path = write(tmp_path, "runs.csv", "model,config,score\na,lr=1;wd=2,0.5\na,lr=2;wd=1,0.25\n")
    assert_scores(load_scores(path), {"a": [0.5, 0.25]})
    path = write(tmp_path, "runs.tsv", "model\tconfig\tscore\na\tlr=1,wd=2\t0.5\na\tlr=2,wd=1\t0.25\n")
    assert_scores(load_scores(path), {"a": [0.5, 0.25]})


# -- 3. wrong number of fields ------------------------------------------------------------------------------


def test_row_with_too_many_fields_names_line_and_content(tmp_path):
    path = write(tmp_path, "runs.csv", "model,score\r\na,0.5\r\n\r\na,0.6,0.7\r\n")
    assert refusal(path) == f"{path}: row 4: 3 fields, but the header has 2 (model, score): 'a,0.6,0.7'"


def test_row_with_too_few_fields_and_a_long_line_is_clipped(tmp_path):
    long_model = "m" * 80
    path = write(tmp_path, "runs.tsv", f"seed\tmodel\tscore\n1\ta\t0.5\n2\t{long_model}\n")
    message = refusal(path)
    assert message == (f"{path}: row 3: 2 fields, but the header has 3 (seed, model, score): "
                       f"'2\\t{'m' * 55}...'")


def test_trailing_field_on_only_some_rows_is_a_wrong_count(tmp_path):
    path = write(tmp_path, "runs.csv", "model,score\na,0.5\na,0.6,\n")
    assert "row 3: 3 fields, but the header has 2 (model, score): 'a,0.6,'" in refusal(path)


# -- 4. failed runs -----------------------------------------------------------------------------------------

FAILED = "model,score\na,0.5\nb,NA\na,\nb,0.25\na,nan\nb,0.75\na,0.125\nb,n/a\nb,0.375\n"


def test_missing_scores_are_an_error_by_default(tmp_path):
    path = write(tmp_path, "my.csv", FAILED)
    assert refusal(path) == (f"{path}: row 3: score NA is missing (a failed run?): pass missing=drop to "
                             "leave such runs out or missing=0 to score them 0")
    path = write(tmp_path, "runs.csv", "model,score\na,0.5\na,\n")
    assert refusal(path, low=0.1, high=1) == (
        f"{path}: row 3: score is missing (a failed run?): pass missing=drop to leave such runs out or "
        "missing=0.1 to score them 0.1")


def test_missing_drop_counts_per_model_and_warns_once_at_the_caller(tmp_path):
    path = write(tmp_path, "my.csv", FAILED)
    result = read_scores(path, missing="drop")
    assert isinstance(result, ScoreFile) and result.path == str(path)
    assert_scores(result.scores, {"a": [0.5, 0.125], "b": [0.25, 0.75, 0.375]})
    assert result.dropped == {"a": 2, "b": 2} and result.replaced == {}
    with pytest.warns(DataWarning) as record:
        scores = load_scores(path, missing="drop")
    assert len(record) == 1
    assert str(record[0].message) == f"{path}: dropped 4 missing scores (model a: 2, model b: 2)"
    assert record[0].filename == __file__  # stacklevel: the warning points at the caller's line
    assert_scores(scores, result.scores)


def test_missing_as_a_number_replaces_and_counts(tmp_path):
    path = write(tmp_path, "my.csv", FAILED)
    result = read_scores(path, missing=0, low=0, high=1)
    assert_scores(result.scores, {"a": [0.5, 0, 0, 0.125], "b": [0, 0.25, 0.75, 0, 0.375]})
    assert result.replaced == {"a": 2, "b": 2} and result.dropped == {}
    with pytest.warns(DataWarning, match=r"my.csv: scored 4 missing scores as 0 \(model a: 2, model b: 2\)"):
        load_scores(path, missing="0")  # a command line passes the number as a string


def test_no_warning_when_nothing_is_missing(tmp_path):
    path = write(tmp_path, "ok.csv", "score\n0.5\n0.25\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_scores(load_scores(path, missing="drop"), {"ok": [0.5, 0.25]})


def test_missing_json_null_and_nan(tmp_path):
    path = write(tmp_path, "runs.json", '{"a": [0.5, null, 0.25], "b": [NaN, 0.75, 1]}')
    result = read_scores(path, missing="drop")
    assert_scores(result.scores, {"a": [0.5, 0.25], "b": [0.75, 1.0]})
    assert result.dropped == {"a": 1, "b": 1}
    assert "runs.json: item ['a'][1]: score null is missing (a failed run?)" in refusal(path)
    path = write(tmp_path, "runs.jsonl", '{"score": 0.5}\n{"score": null}\n{"score": 0.25}\n')
    assert_scores(read_scores(path, missing=-1).scores, {"runs": [0.5, -1.0, 0.25]})


def test_infinity_stays_an_error_even_when_dropping(tmp_path):
    path = write(tmp_path, "runs.csv", "score\n0.5\nNA\ninf\n")
    assert refusal(path, missing="drop") == f"{path}: row 4: score inf is not finite"


def test_dropping_every_run_of_a_model_is_refused(tmp_path):
    path = write(tmp_path, "runs.csv", "model,score\na,0.5\na,0.25\nb,NA\nb,0.75\n")
    assert refusal(path, missing="drop") == (f"{path}: model 'b' has 1 score after dropping 1 missing; "
                                             "at least 2 are needed")


@pytest.mark.parametrize("kwargs, message", [
    ({"missing": "skip"}, "missing must be 'error', 'drop' or a number, got 'skip'"),
    ({"missing": True}, "missing must be 'error', 'drop' or a number, got True"),
    ({"missing": None}, "missing must be 'error', 'drop' or a number, got None"),
    ({"missing": 2, "high": 1}, r"missing=2 is outside the support \[-inf, 1\]"),
    ({"missing": "nan"}, r"missing=nan is outside the support"),
    ({"scale": 0}, "scale must be a finite number > 0, got 0"),
    ({"scale": float("inf")}, "scale must be a finite number > 0, got inf"),
    ({"scale": "0.01"}, "scale must be a finite number > 0, got '0.01'"),
])
def test_bad_missing_and_scale_arguments(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_scores(write(tmp_path, "ok.csv", "score\n0.5\n0.25\n"), **kwargs)


# -- 5. columns ---------------------------------------------------------------------------------------------


def test_columns_match_ignoring_case_and_spaces(tmp_path):
    path = write(tmp_path, "runs.csv", "Seed, MODEL , Score \n1,a,0.5\n2,a,0.25\n")
    assert_scores(load_scores(path), {"a": [0.5, 0.25]})
    assert_scores(load_scores(path, score_column="score ", model_column="model"), {"a": [0.5, 0.25]})


def test_missing_score_column_names_the_one_candidate(tmp_path):
    path = write(tmp_path, "my.csv", "run,acc\n1,0.5\n2,0.25\n")
    assert refusal(path) == f"{path}: missing column 'score' (columns: run, acc): pass score_column=acc"


def test_missing_score_column_with_several_candidates(tmp_path):
    path = write(tmp_path, "my.csv", "model,seed,acc,f1\na,1,0.5,0.4\na,2,0.25,0.3\n")
    assert refusal(path) == (f"{path}: missing column 'score' (columns: model, seed, acc, f1): several "
                             "columns could be the score: pass score_column=acc or score_column=f1")


def test_missing_model_column_names_the_fix(tmp_path):
    path = write(tmp_path, "my.csv", "name,seed,score,f1\na,1,0.5,0.4\na,2,0.25,0.3\n")
    assert refusal(path, model_column="model") == (
        f"{path}: missing column 'model' (columns: name, seed, score, f1): pass model_column=name")


def test_ambiguous_columns_are_refused(tmp_path):
    path = write(tmp_path, "my.csv", "SCORE,Score\n0.5,0.25\n0.25,0.5\n")
    assert refusal(path) == f"{path}: several columns match 'score' ('SCORE', 'Score'): rename all but one"


# -- 6. percentages and scale --------------------------------------------------------------------------------


def test_percentages_get_a_hint(tmp_path):
    path = write(tmp_path, "my.csv", "score\n87.5\n91\n0.5\n")
    assert refusal(path, low=0, high=1) == (f"{path}: row 2: score 87.5 is outside the support [0, 1]; "
                                            "these look like percentages: pass scale=0.01 (or high=100)")


def test_a_single_outlier_gets_no_percentage_hint(tmp_path):
    path = write(tmp_path, "my.csv", "score\n0.5\n0.25\n1.7\n")
    assert refusal(path, low=0, high=1) == f"{path}: row 4: score 1.7 is outside the support [0, 1]"


def test_scale_multiplies_every_score_before_the_bounds(tmp_path):
    path = write(tmp_path, "my.csv", "model,score\na,87.5\na,91\nb,50\nb,100\n")
    assert_scores(load_scores(path, low=0, high=1, scale=0.01), {"a": [0.875, 0.91], "b": [0.5, 1.0]})
    path = write(tmp_path, "big.csv", "score\n87.5\n150\n")
    assert refusal(path, low=0, high=1, scale=0.01) == (
        f"{path}: row 3: score 150 (times scale=0.01: 1.5) is outside the support [0, 1]")


# -- 7. decimal commas ---------------------------------------------------------------------------------------


def test_decimal_commas_in_a_semicolon_file_are_read(tmp_path):
    path = write(tmp_path, "my.csv", "model;score\r\na;0,71\r\na;1\r\nb;-0,5\r\nb;NA\r\nb;0,25\r\n")
    result = read_scores(path, missing="drop")
    assert_scores(result.scores, {"a": [0.71, 1.0], "b": [-0.5, 0.25]})
    assert result.dropped == {"b": 1}


def test_decimal_commas_in_a_tab_file_are_read(tmp_path):
    path = write(tmp_path, "my.tsv", "score\tseed\n0,71\t1\n0,125\t2\n")
    assert_scores(load_scores(path), {"my": [0.71, 0.125]})


def test_mixed_decimal_commas_and_points_are_refused(tmp_path):
    path = write(tmp_path, "my.csv", "model;score\na;0.5\na;0,71\n")
    assert refusal(path) == (f"{path}: row 3: score '0,71' uses a decimal comma: "
                             "save the file with decimal points")


def test_decimal_commas_in_a_one_column_comma_file_are_named(tmp_path):
    path = write(tmp_path, "my.csv", "acc\n0,71\n0,5\n")
    assert refusal(path) == (f"{path}: row 2: acc '0,71' uses a decimal comma: "
                             "save the file with decimal points")


# -- 8. JSON ------------------------------------------------------------------------------------------------


def test_json_duplicate_keys_are_refused(tmp_path):
    path = write(tmp_path, "runs.json", '{"a": [0.5, 0.25], "b": [0.1, 0.2], "a": [0.75, 1]}')
    assert refusal(path) == (f"{path}: duplicate key 'a' (a JSON reader keeps only its last value): "
                             "merge or rename them")
    path = write(tmp_path, "runs.jsonl", '{"score": 0.5}\n{"score": 0.25, "score": 0.75}\n')
    assert refusal(path).startswith(f"{path}: row 2: duplicate key 'score'")
