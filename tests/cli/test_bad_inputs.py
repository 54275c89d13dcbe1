"""The bad-input catalogue: every bad input a user can plausibly give the `simstudy` commands fails with one
line on stderr naming the problem, a non-zero exit (2: bad input; 1: the run could not finish, e.g. a full
disk), and no partial output.

The command's ``main()`` runs in this process (argv, working directory and environment patched), which is
what lets the disk-full and unwritable-directory cases inject their OS errors; the unreadable-file and
read-only-directory cases run the real command as an unprivileged user in a subprocess.
"""

import errno
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from _cli import parse_command_refusal, parse_refusal

FIG1 = ["experiment=dodge2021_fig1", "runner.progress=false"]


def assert_one_line(status, err, message, expected_status=2):
    lines = err.strip().splitlines()
    assert status == expected_status, (status, err)
    assert len(lines) == 1 and lines[0].startswith("simstudy: error: "), err
    assert message in lines[0], lines[0]


# (overrides, message): every config group, wrong types and ranges, unknown keys and options.
STUDY_CONFIG = [
    # seed
    (["seed=-1"], "seed must be an integer >= 0, got -1"),
    (["seed=abc"], "seed must be an integer, got 'abc'"),
    (["seed=1.5"], "seed must be an integer, got 1.5"),
    (["seed=null"], "seed must be an integer, got None"),
    (["+foo=1"], "foo is not a setting (settings: seed, distribution, budget, estimators, study, runner)"),
    # distribution
    (["distribution.sd=0"], "distribution.sd must be > 0, got 0"),
    (["distribution=truncnorm", "distribution.sd=-1"], "distribution.sd must be > 0, got -1"),
    (["distribution=truncnorm", "distribution.sd=inf"], "distribution.sd must be finite, got inf"),
    (["distribution=truncnorm", "distribution.mean=nan"], "distribution.mean must be finite, got nan"),
    (["distribution=truncnorm", "distribution.mean=abc"], "distribution.mean must be a number, got 'abc'"),
    (["distribution.low=1", "distribution.high=0"], "distribution.high must be greater than low=1.0, got 0"),
    (["distribution.population=0"], "distribution.population must be an integer >= 1, got 0"),
    (["distribution.size=0"], "distribution.size must be an integer >= 1, got 0"),
    (["distribution.name=123"], "distribution.name must be a string, got 123"),
    (["distribution=nope"], "Could not find 'distribution/nope'; available options:"),
    (["+distribution.foo=1"], "distribution.foo is not a parameter of truncnorm_bag"),
    (["distribution=empirical", "distribution.model=cnn"], "unknown reuters_hedwig model 'cnn'"),
    (["distribution=empirical", "distribution.dataset=foo"], "unknown dataset 'foo'"),
    (["distribution=file"], "distribution.path is required"),
    # budget
    (["budget.B=0"], "budget.B must be an integer >= 1, got 0"),
    (["budget.B=-5"], "budget.B must be an integer >= 1, got -5"),
    (["budget.B=abc"], "budget.B must be an integer, got 'abc'"),
    (["budget.B=[]"], "budget.B must be an integer >= 1 or a non-empty list of them, got []"),
    (["budget.n=[31]"], "budget.n must not exceed budget.B"),
    (["budget.n=[0]"], "budget.n must be an integer >= 1, got 0"),
    (["budget.n=[2.5]"], "budget.n must be an integer, got 2.5"),
    (["budget.X=3"], "budget.X is not a key: the keys there: budget.B, budget.n"),
    (["+budget.X=3"], "budget.X is not a setting (settings: B, n)"),
    # estimators
    (["estimators=[x]"], "Could not load 'estimators/x'; available options: bootstrap, u, v, w"),
    (["estimators=[]"], "estimators must select at least one of: u, v, w, bootstrap"),
    (["estimators.u.method=z"], "estimators.u.method must be one of u, v, w, bootstrap, got 'z'"),
    (["estimators.u.method=null"], "estimators.u.method must be one of u, v, w, bootstrap, got None"),
    (["estimators=[bootstrap]", "estimators.bootstrap.resamples=0"],
     "estimators.bootstrap.resamples must be an integer >= 1, got 0"),
    (["+estimators.u.foo=1"], "estimators.u.foo is not a setting (settings: method, resamples)"),
    # study, and each study kind's own options
    (["study.reps=0"], "study.reps must be an integer >= 2, got 0"),
    (["study.reps=1"], "study.reps must be an integer >= 2, got 1"),
    (["study.reps=abc"], "study.reps must be an integer, got 'abc'"),
    (["study.chunk_reps=0"], "study.chunk_reps must be an integer >= 1, got 0"),
    (["study.chunk_reps=abc"], "study.chunk_reps must be an integer, got 'abc'"),
    (["study.save_replicates=maybe"], "study.save_replicates must be true or false, got 'maybe'"),
    (["study.name=''"], "study.name must be a non-empty string, got ''"),
    (["study.kind=nope"], "study.kind must be one of evp_accuracy, wrong_conclusions"),
    (["+study.foo=1"], "study.foo is not a setting of the evp_accuracy study (settings: name, kind, reps"),
    (["experiment=dodge2021_fig2", "study.confidence=1.5"],
     "study.confidence must be a number strictly between 0 and 1, got 1.5"),
    (["experiment=dodge2021_fig2", "study.tie_tolerance=-1"], "study.tie_tolerance must be a number >= 0, got -1"),
    (["experiment=lourie_fig5_exact_coverage", "study.levels=[]"], "study.levels must list at least one level"),
    (["experiment=lourie_fig5_exact_coverage", "study.methods=[x]"],
     "study.methods must be one of dkw, ks, ld_equal_tailed, ld_highest_density or an import path "
     "module.function, got 'x'"),
    (["experiment=lourie_fig5_exact_coverage", "distribution=truncnorm_bag"],
     "a band_coverage study needs continuous distributions (kinds: truncnorm, kde, kde_atoms, scipy, quadratic, "
     "noisy_quadratic); truncnorm_bag is not"),
    (["experiment=fiesta_fig4", "study.budgets=[1]"], "study.budgets: budget=1 is too small for sequential halving"),
    # a single model where two are needed
    (["experiment=dodge2021_fig2", "distribution=truncnorm"],
     "a wrong_conclusions study compares two models: distribution must name exactly two, got 1 (truncnorm)"),
    (["experiment=fiesta_fig4", "distribution=truncnorm"],
     "a model_selection study needs at least two arms in distribution, got 1"),
    (["experiment=fiesta_table2", "distribution=truncnorm"],
     "a fixed_confidence study needs at least two arms in distribution, got 1"),
    (["experiment=fiesta_table2", "study.deltas=[0.5]"],
     "study.deltas must be numbers strictly between 0 and 0.5 (confidence 1 - delta above one half), got 0.5"),
    (["experiment=fiesta_table2", "study.algorithms=[tts]"], "study.algorithms"),
    (["experiment=fiesta_table3", "study.batch_sizes=[0]"], "study.batch_sizes must be an integer >= 1, got 0"),
    (["experiment=fiesta_table2", "study.max_evaluations=20"],
     "study.max_evaluations must allow the initial three evaluations of each of the 8 arms (24), got 20"),
    (["experiment=fiesta_table2", "study.logit=sometimes"], "study.logit must be true or false"),
    (["experiment=fiesta_table2", "distribution=pair_truncnorm", "study.logit=true", "distribution.b.high=2"],
     "study.logit=true needs scores inside (0, 1); distribution b has support [0, 2]"),
    # runner
    (["runner.n_jobs=0"], "runner.n_jobs must be a positive number of workers or -1 (all cores), got 0"),
    (["runner.n_jobs=-2"], "runner.n_jobs must be a positive number of workers or -1 (all cores), got -2"),
    (["runner.n_jobs=1.5"], "runner.n_jobs must be an integer, got 1.5"),
    (["runner.backend=mpi"], "runner.backend must be one of loky, threading, sequential, dask"),
    (["runner.progress=maybe"], "runner.progress must be true, false or auto, got 'maybe'"),
    *[([f"runner.shard={v}"], f"runner.shard must be i/N with 1 <= i <= N (e.g. 2/8), got {v!r}")
      for v in ("0/3", "4/3", "a/b", "1/0")],
    (["runner.shard=1"], "runner.shard must be i/N with 1 <= i <= N (e.g. 2/8), got 1"),
    *[([f"runner.max_failure_fraction={v}"], f"runner.max_failure_fraction must be a number in [0, 1], got {r}")
      for v, r in (("2", "2"), ("-0.1", "-0.1"), ("abc", "'abc'"))],
    (["runner=dask", "runner.address=123"], "runner.address must be a dask scheduler address"),
    (["runner=nope"], "Could not find 'runner/nope'; available options: dask, local"),
    (["+runner.foo=1"], "runner.foo is not a setting (settings: n_jobs, backend, progress, address, shard"),
    # Hydra's own settings
    # (a path with = is one path, quoted or not: tests/cli/test_args.py; an unbalanced ] is not)
    (["hydra.run.dir=a]b"], "mismatched input ']'"),
]


#: The cases that run the whole command: Hydra's own refusals (a missing group option, a bad override), the
#: command's checks before Hydra composes, and a handful of values that pin the one line, exit status 2 and
#: nothing written. The others check the same message against config.parse directly (a Hydra start each
#: would cost ~0.7 s; the check itself ~0.1 ms).
THROUGH_THE_COMMAND = {"distribution=nope", "distribution=file", "budget.X=3", "estimators=[x]", "runner=nope",
                       "hydra.run.dir=a]b", "seed=-1", "+foo=1", "study.reps=abc", "runner.n_jobs=0",
                       "experiment=dodge2021_fig2 study.confidence=1.5", "+runner.foo=1",
                       # the data commands: what they read after the parse, and a pin of each command's line
                       "data=single.csv compare=true", "data=bad.csv", "data=empty.csv", "data=reuters_hedwig models=[cnn]",
                       "data=reuters_hedwig model=cnn", "data=s.csv low=0 high=0.5", "data=nan.csv",
                       "data=s.csv compare=true", "data=s.csv sample_size=5", "data=s.csv sample_size=5 sample_seed=1",
                       "data=two.csv", "data=two.csv model=c", "", "data=s.csv confidence=1.5",
                       "data=two.csv model=a +bw=0.1"}


def _ids(v):
    return " ".join(v) if isinstance(v, list) else ""


@pytest.mark.parametrize("overrides, message", [c for c in STUDY_CONFIG if _ids(c[0]) in THROUGH_THE_COMMAND],
                         ids=_ids)
def test_bad_study_config(run_cli, tmp_path, overrides, message):
    status, _, err = run_cli(*FIG1, *overrides)
    assert_one_line(status, err, message)
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "a]b").exists()


@pytest.mark.parametrize("overrides, message", [c for c in STUDY_CONFIG if _ids(c[0]) not in THROUGH_THE_COMMAND],
                         ids=_ids)
def test_bad_study_config_is_refused_by_parse(overrides, message):
    refusal = parse_refusal(*FIG1, *overrides)
    assert refusal is not None and "\n" not in refusal, refusal
    assert message in refusal, refusal


# (file name, content, message): data files for distribution=file (the CLI's `curve`, `bands` and `audit` share
# the loader; a few of them are checked below through those commands).
BAD_FILES = [
    ("bad.csv", "score\n0.5\n0.7\nabc\n", "bad.csv: row 4: score is not a number: 'abc'"),
    # the fix in a study's keys (distribution.missing=, not the data commands' missing=)
    ("nan.csv", "score\n0.5\nnan\n", "nan.csv: row 3: score nan is missing (a failed run?): pass distribution.missing=drop"),
    ("inf.tsv", "score\n0.5\ninf\n", "inf.tsv: row 3: score inf is not finite"),
    ("ninf.jsonl", '{"score": 0.5}\n{"score": "-inf"}\n', "ninf.jsonl: row 2: score -inf is not finite"),
    ("out.csv", "score\n0.5\n1.7\n", "out.csv: row 3: score 1.7 is outside the support [0, 1]"),
    ("neg.csv", "score\n0.5\n-0.1\n", "neg.csv: row 3: score -0.1 is outside the support [0, 1]"),
    ("one.csv", "score\n0.5\n", "one.csv: model 'one' has 1 score; at least 2 are needed"),
    ("cols.csv", "model,f1\na,0.5\n", "cols.csv: missing column 'score' (columns: model, f1)"),
    ("empty.csv", "", "empty.csv: file is empty"),
    ("blank.csv", "\n  \n", "blank.csv: file is empty"),
    ("header.csv", "score\n", "header.csv: no scores"),
    ("bad.json", '{"score": [0.5,', "bad.json: row 1: not valid JSON"),
    ("scores.txt", "0.5\n", "unknown file type '.txt'"),
]


#: The data files that run the whole command (one line, exit 2, nothing written); the others are checked against
#: config.parse, which reads the file (the same message, no Hydra start).
FILES_THROUGH_THE_COMMAND = {"bad.csv", "empty.csv", "scores.txt"}


@pytest.mark.parametrize("name, text, message", [f for f in BAD_FILES if f[0] in FILES_THROUGH_THE_COMMAND],
                         ids=[f[0] for f in BAD_FILES if f[0] in FILES_THROUGH_THE_COMMAND])
def test_bad_data_file_names_file_row_and_value(run_cli, tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    status, _, err = run_cli(*FIG1, "distribution=file", f"distribution.path={name}")
    assert_one_line(status, err, message)
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("name, text, message", [f for f in BAD_FILES if f[0] not in FILES_THROUGH_THE_COMMAND],
                         ids=[f[0] for f in BAD_FILES if f[0] not in FILES_THROUGH_THE_COMMAND])
def test_bad_data_file_is_refused_by_parse(tmp_path, monkeypatch, name, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    refusal = parse_refusal(*FIG1, "distribution=file", f"distribution.path={name}")
    assert refusal is not None and "\n" not in refusal, refusal
    assert message in refusal, refusal


def test_scores_outside_the_declared_support(run_cli, tmp_path):
    (tmp_path / "s.csv").write_text("score\n0.7\n0.4\n")
    status, _, err = run_cli(*FIG1, "distribution=file", "distribution.path=s.csv", "distribution.low=0.5")
    assert_one_line(status, err, "s.csv: row 3: score 0.4 is outside the support [0.5, 1]")


def test_binary_file_and_directory_and_missing_file(run_cli, tmp_path):
    (tmp_path / "bin.csv").write_bytes(b"\x00\x01\xff\xfe")
    (tmp_path / "dir.csv").mkdir()
    for path, message in (("bin.csv", "bin.csv: cannot read: 'utf-8' codec can't decode"),
                          ("dir.csv", "dir.csv: cannot read: [Errno 21] Is a directory"),
                          ("nowhere.csv", "nowhere.csv: no such file")):
        status, _, err = run_cli(*FIG1, "distribution=file", f"distribution.path={path}")
        assert_one_line(status, err, message)
    assert not (tmp_path / "outputs").exists()


# (args, message) of `simstudy curve`: most are checked against simstudy.commands.curve.parse (the same message, no Hydra
# start); those in THROUGH_THE_COMMAND (the data read after the parse, and a few pins) run the command.
CURVE = [
    (["data=single.csv", "compare=true"], "compare=true needs at least two models"),
    (["data=bad.csv"], "bad.csv: row 3: score is not a number: 'x'"),
    (["data=empty.csv"], "empty.csv: file is empty"),
    ([], "data is required"),
    (["data=reuters_hedwig", "estimator=z"], "estimator must be one of u, v, w, or a plug-in estimator"),
    (["data=reuters_hedwig", "models=[cnn]"], "model cnn not in reuters_hedwig (its models: mlp, lstm)"),
    (["data=reuters_hedwig", "trial_time=-2"], "trial_time must be a positive number, got -2"),
    (["data=reuters_hedwig", "trial_time={mlp: abc}"], "trial_time.mlp must be a positive number, got 'abc'"),
    (["data=reuters_hedwig", "+estimatr=u"], "estimatr is not a setting of simstudy curve (settings: data,"),
    (["data=reuters_hedwig", "model=mlp", "models=[lstm]"], "model=mlp and models=['lstm'] disagree"),
    (["data=reuters_hedwig", "model=cnn"], "model cnn not in reuters_hedwig (its models: mlp, lstm)"),
    (["data=reuters_hedwig", "xscale=ln"], "xscale must be one of linear, log, got 'ln'"),
    (["data=reuters_hedwig", "missing=skip"], "missing must be error, drop or the score a failed run counts as"),
    (["data=reuters_hedwig", "scale=0"], "scale must be a positive number, got 0"),
]


@pytest.mark.parametrize("args, message", [c for c in CURVE if _ids(c[0]) in THROUGH_THE_COMMAND], ids=_ids)
def test_curve_command_bad_input(run_cli, tmp_path, args, message):
    (tmp_path / "single.csv").write_text("score\n0.5\n0.6\n")
    (tmp_path / "bad.csv").write_text("score\n0.5\nx\n")
    (tmp_path / "empty.csv").write_text("")
    assert_one_line(*run_cli("curve", *args)[::2], message)
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("args, message", [c for c in CURVE if _ids(c[0]) not in THROUGH_THE_COMMAND],
                         ids=_ids)
def test_curve_command_bad_input_is_refused_by_parse(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "single.csv").write_text("score\n0.5\n0.6\n")
    refusal = parse_command_refusal("curve", *args)
    assert refusal is not None and "\n" not in refusal, refusal
    assert message in refusal, refusal


# (args, message) of `simstudy bands`: most are checked against simstudy.commands.bands.parse (the same message, no Hydra
# start); those in THROUGH_THE_COMMAND (the data read after the parse, and a few pins) run the command.
BANDS = [
    (["data=s.csv", "kind=mean"], "kind=mean needs finite low and high"),
    (["data=s.csv", "confidence=1.5"], "confidence must be a number strictly between 0 and 1, got 1.5"),
    (["data=s.csv", "method=bootstrap"], "method must be one of dkw, ks, ld_equal_tailed, ld_highest_density"),
    (["data=s.csv", "low=0", "high=0.5"], "s.csv: row 2: score 0.9 is outside the support [0, 0.5]"),
    (["data=nan.csv"], "nan.csv: row 3: score nan is missing (a failed run?): pass missing=drop"),
    (["data=s.csv", "compare=true"], "compare=true needs at least two models"),
    (["data=s.csv", "sample_size=5"], "sample_size=5 exceeds the scores"),
    (["data=s.csv", "sample_size=5", "sample_seed=1"], "sample_size=5 exceeds the scores"),
    (["data=s.csv", "sample_size=2", "sample_seed=abc"], "sample_seed must be an integer, got 'abc'"),
    (["data=s.csv", "sample_size=2", "sample_seed=-1"], "sample_seed must be an integer >= 0, got -1"),
    (["data=s.csv", "sample_seed=3"], "sample_seed=3 draws a random sample of sample_size runs per model: set "
                                      "sample_size too"),
    (["data=s.csv", "+methd=ks"], "methd is not a setting of simstudy bands (settings: data,"),
    (["data=s.csv", "xscale=loglog"], "xscale must be one of linear, log, got 'loglog'"),
]


@pytest.mark.parametrize("args, message", [c for c in BANDS if _ids(c[0]) in THROUGH_THE_COMMAND], ids=_ids)
def test_bands_command_bad_input(run_cli, tmp_path, args, message):
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    (tmp_path / "nan.csv").write_text("score\n0.9\nnan\n")
    assert_one_line(*run_cli("bands", *args)[::2], message)
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("args, message", [c for c in BANDS if _ids(c[0]) not in THROUGH_THE_COMMAND],
                         ids=_ids)
def test_bands_command_bad_input_is_refused_by_parse(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    refusal = parse_command_refusal("bands", *args)
    assert refusal is not None and "\n" not in refusal, refusal
    assert message in refusal, refusal


# (args, message) of `simstudy audit`: most are checked against simstudy.commands.audit.parse (the same message, no Hydra
# start); those in THROUGH_THE_COMMAND (the data read after the parse, and a few pins) run the command.
AUDIT = [
    (["data=two.csv", "model=c"], "model c not in two.csv (its models: a, b): choose with model=NAME"),
    (["data=two.csv", "model=a", "+bw=0.1"], "bw is not a setting of simstudy audit (settings: data, model"),
    (["data=two.csv", "model=a", "high=inf"], "low and high must be finite bounds"),
    (["data=two.csv", "model=a", "bandwidth=-1"], "bandwidth must be a positive number, got -1"),
    (["data=two.csv", "model=a", "method=x"], "method must be one of dkw, ks"),
]


@pytest.mark.parametrize("args, message", [c for c in AUDIT if _ids(c[0]) in THROUGH_THE_COMMAND], ids=_ids)
def test_audit_command_bad_input(run_cli, tmp_path, args, message):
    (tmp_path / "two.csv").write_text("model,score\na,0.1\na,0.2\nb,0.3\nb,0.4\n")
    assert_one_line(*run_cli("audit", *args)[::2], message)
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("args, message", [c for c in AUDIT if _ids(c[0]) not in THROUGH_THE_COMMAND],
                         ids=_ids)
def test_audit_command_bad_input_is_refused_by_parse(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two.csv").write_text("model,score\na,0.1\na,0.2\nb,0.3\nb,0.4\n")
    refusal = parse_command_refusal("audit", *args)
    assert refusal is not None and "\n" not in refusal, refusal
    assert message in refusal, refusal


@pytest.mark.parametrize("args, message", [
    (["collect"], "simstudy collect: run_dir is required"),
    (["collect", "run_dir=nowhere"], "run_dir=nowhere: no config.yaml there (not a simstudy run directory)"),
    (["collect", "run_dir=.", "extra"], "simstudy collect: unexpected argument 'extra'"),
    (["replay", "run_dir=nowhere"], "simstudy replay: chunk is required"),
    (["replay", "run_dir=nowhere", "chunk=abc"], "chunk must be CELL/K"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_collect_and_replay_bad_arguments(run_cli, args, message):
    assert_one_line(*run_cli(*args)[::2], message)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_a_rerun_with_another_config_in_the_same_directory_is_refused(run_cli, tmp_path):
    small = [*FIG1, "study.reps=200", "study.chunk_reps=100", "budget.B=5", "hydra.run.dir=run"]
    assert run_cli(*small)[0] == 0
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "run").rglob("*")}
    status, _, err = run_cli(*small, "seed=4", "distribution.sd=0.1", "runner.n_jobs=2")
    assert_one_line(status, err, "run holds results of a different configuration (distribution.sd: 0.07 -> 0.1; "
                                 "distribution.seed: 0 -> 4; seed: 0 -> 4); run into a new directory (hydra.run.dir=NEW), "
                                 "or add overwrite=true")
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "run").rglob("*")} == before  # untouched
    assert run_cli(*small, "study.reps=300", "runner.n_jobs=1")[0] == 0  # more replicates extend the run


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_disk_full_at_the_first_write_leaves_nothing(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", _enospc)  # every atomic write fsyncs before its rename
    status, _, err = run_cli(*FIG1, "study.reps=200", "study.chunk_reps=100")
    assert_one_line(status, err, "No space left on device", expected_status=1)
    assert not (tmp_path / "outputs").exists()


def test_disk_full_midway_keeps_finished_chunks_but_no_half_written_or_summary_file(run_cli, tmp_path, monkeypatch):
    from simstudy.engine import chunks

    real, writes = chunks.ChunkStore.write, []

    def write(self, *args):
        if len(writes) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path(*args[:3])))
        writes.append(args)
        return real(self, *args)

    monkeypatch.setattr(chunks.ChunkStore, "write", write)
    status, _, err = run_cli(*FIG1, "study.reps=500", "study.chunk_reps=100", "hydra.run.dir=run")
    assert_one_line(status, err, "chunk-000002-r100.npz: No space left on device", expected_status=1)
    files = sorted(p.name for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert files == [".simstudy-identity.json", ".simstudy-run.json", "chunk-000000-r100.npz",
                     "chunk-000001-r100.npz", "config.json", "config.yaml"]
    monkeypatch.setattr(chunks.ChunkStore, "write", real)  # space freed: the same command resumes
    assert run_cli(*FIG1, "study.reps=500", "study.chunk_reps=100", "hydra.run.dir=run")[0] == 0


def test_unwritable_output_directory_is_one_line(run_cli, tmp_path, monkeypatch):
    """Simulated (root ignores permissions): Hydra's own mkdir of the run directory is refused."""
    real = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if "outputs" in self.parts:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    status, _, err = run_cli(*FIG1, "study.reps=200")
    assert_one_line(status, err, "outputs/dodge2021_fig1/study.reps=200: Permission denied", expected_status=1)
    assert not (tmp_path / "outputs").exists()


def test_unreadable_data_file_simulated(run_cli, tmp_path, monkeypatch):
    """As root permissions do not bite: the read is refused the way the kernel would refuse it."""
    real = Path.read_text

    def read_text(self, *args, **kwargs):
        if self.name == "s.csv":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real(self, *args, **kwargs)

    (tmp_path / "s.csv").write_text("score\n0.5\n0.6\n")
    monkeypatch.setattr(Path, "read_text", read_text)
    status, _, err = run_cli(*FIG1, "distribution=file", "distribution.path=s.csv")
    assert_one_line(status, err, "distribution: s.csv: cannot read: [Errno 13] Permission denied")
    assert not (tmp_path / "outputs").exists()


# Real permissions: as an unprivileged user (root bypasses them, so under root the command runs as nobody).
def _unprivileged() -> dict:
    if os.geteuid() != 0:
        return {}
    try:
        who = {"user": pwd.getpwnam("nobody").pw_uid}
        subprocess.run([sys.executable, "-c", "import simstudy"], check=True, timeout=60, capture_output=True, **who)
    except (KeyError, OSError, subprocess.CalledProcessError):
        pytest.skip("running as root, and user nobody cannot run this Python: permissions would not bite")
    return who


@pytest.fixture
def shared_dir():
    """A scratch directory an unprivileged user can enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="simstudy-perm-"))
    path.chmod(0o777)
    yield path
    for p in path.rglob("*"):
        p.chmod(0o777)
    shutil.rmtree(path)


def _run_as(user_kwargs, cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}
    env.update(HOME=str(cwd), MPLCONFIGDIR=str(cwd / ".mpl"), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, **user_kwargs)


@pytest.mark.system
def test_unreadable_data_file(shared_dir):
    who = _unprivileged()
    (shared_dir / "s.csv").write_text("score\n0.5\n0.6\n")
    (shared_dir / "s.csv").chmod(0o000)
    proc = _run_as(who, shared_dir, *FIG1, "distribution=file", "distribution.path=s.csv")
    assert_one_line(proc.returncode, proc.stderr, "distribution: s.csv: cannot read: [Errno 13] Permission denied")
    assert not (shared_dir / "outputs").exists()


@pytest.mark.system
def test_read_only_output_directory(shared_dir):
    who = _unprivileged()
    (shared_dir / "outputs").mkdir()
    (shared_dir / "outputs").chmod(0o555)
    proc = _run_as(who, shared_dir, *FIG1, "study.reps=200")
    assert_one_line(proc.returncode, proc.stderr, "outputs/dodge2021_fig1: Permission denied", expected_status=1)
    assert list((shared_dir / "outputs").iterdir()) == []


# Lost or overwritten files (issue 13): each refused in one line, exit 2, and every file and directory the user
# had is still there, byte for byte (SHA-256 and listing before and after).
def _tree(root: Path) -> dict:
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("args, message", [
    (["study.name=../../escaped"], "study.name must be a name (letters, digits, '_', '-', '.'; not starting with "
                                   "'.'), got '../../escaped'"),
    (["study.name=a/b"], "study.name must be a name"),
    (["study.name=.hidden"], "study.name must be a name"),
    (["hydra.run.dir=."], "is not empty and is not a simstudy run directory (it holds figure.png, keep, mine, "
                          "run.json, summary.csv); choose another run directory"),
    (["seed=-1", "hydra.run.dir=keep"], "seed must be an integer >= 0, got -1"),
    (["seed=-1", "hydra.run.dir=keep/new/run"], "seed must be an integer >= 0, got -1"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_refused_runs_lose_no_file_and_no_directory(run_cli, tmp_path, monkeypatch, args, message):
    work = tmp_path / "work"
    (work / "keep").mkdir(parents=True)  # an empty directory of the user's
    (work / "mine").mkdir()
    for name, text in (("figure.png", "my figure"), ("summary.csv", "mine,1\n"), ("run.json", "{}\n")):
        (work / name).write_text(text)
    monkeypatch.chdir(work)
    before = _tree(tmp_path)
    assert_one_line(*run_cli(*FIG1, "study.reps=200", *args)[::2], message)
    assert _tree(tmp_path) == before


def test_a_run_into_a_directory_in_use_is_refused_naming_the_pid(run_cli, tmp_path):
    import json
    import socket

    from simstudy.engine import claims

    small = [*FIG1, "study.reps=200", "study.chunk_reps=100", "budget.B=5", "hydra.run.dir=run"]
    assert run_cli(*small)[0] == 0
    lock = tmp_path / "run" / claims.LOCK_NAME
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "start": None,
                                "since": "2024-01-01 00:00:00"}))  # a live process: this one
    before = _tree(tmp_path)
    status, _, err = run_cli(*small, "study.reps=300")
    assert_one_line(status, err, f"run is in use by another simstudy run (pid {os.getpid()} on "
                                 f"{socket.gethostname()}, since 2024-01-01 00:00:00); wait for it to finish")
    assert _tree(tmp_path) == before


def test_collect_refuses_an_interpolation_in_a_stored_config(run_cli, tmp_path, monkeypatch):
    assert run_cli(*FIG1, "study.reps=200", "study.chunk_reps=100", "budget.B=5", "runner.shard=1/1",
                   "hydra.run.dir=run")[0] == 0
    stored = tmp_path / "run" / "config.yaml"
    text = stored.read_text()
    assert text.count("\nseed: 0\n") == 1  # the top-level key (distribution.seed is indented)
    stored.write_text(text.replace("\nseed: 0\n", "\nseed: ${oc.env:SIMSTUDY_SECRET}\n"))
    monkeypatch.setenv("SIMSTUDY_SECRET", "12345")
    before = _tree(tmp_path)
    status, out, err = run_cli("collect", "run_dir=run")
    assert_one_line(status, err, "run/config.yaml: seed='${oc.env:SIMSTUDY_SECRET}' is an interpolation")
    assert "12345" not in out + err and _tree(tmp_path) == before


# --- issue 13: bounded memory and one-line errors (sizes refused before compute, sweeps, quoting, Ctrl-C) ---

_LIMIT = "the limit is 12 GB (SIMSTUDY_MAX_MEMORY_GB=12)"


@pytest.mark.parametrize("args, message", [
    ([*FIG1, "budget.B=100000"],
     f"budget.B=100000 needs about 480 GB (the weight matrices of 3 estimators, 100000 budgets x 100000 scores "
     f"each); {_LIMIT}: lower budget.B or set budget.n to fewer budgets"),
    ([*FIG1, "study.reps=10000000000000"],
     f"study.reps=10000000000000 needs about 2 TB (a plan of 4,000,000,000 chunks of study.chunk_reps=2500 "
     f"replicates); {_LIMIT}: lower study.reps or raise study.chunk_reps"),
    ([*FIG1, "study.chunk_reps=100000000", "study.reps=100000000", "runner.n_jobs=1"],
     f"study.chunk_reps=100000000 needs about 48 GB (1 worker each holding 100000000 samples of B=30 scores); "
     f"{_LIMIT}: lower study.chunk_reps, budget.B or runner.n_jobs"),
    (["bands", "data=s.csv", "max_k=100000000"],
     f"max_k=100000000 needs about 25.6 GB (the bands at k = 1..100000000, per model); {_LIMIT}: lower max_k"),
    (["audit", "data=s.csv", "low=0", "high=1", "bandwidth=1e9"],
     f"bandwidth=1000000000.0 needs about 960 GB (40,000,000,006 reflected kernel centres per score, for at "
     f"least 1 score); {_LIMIT}: use a bandwidth on the scale of the scores' spread (high - low = 1), or "
     f"bw_factor="),
    ([*FIG1, "runner.backend=multiprocessing"],
     "runner.backend=multiprocessing is not supported (joblib's multiprocessing backend cannot hand back each "
     "chunk as it finishes); use loky, the process backend (backends: loky, threading, sequential, dask)"),
    (["-m", *FIG1, "budget.B=30,100000"], "budget.B=100000 needs about 480 GB"),
], ids=["budget.B", "study.reps", "chunk_reps", "bands-max_k", "audit-bandwidth", "multiprocessing", "sweep"])
def test_sizes_are_refused_before_compute(run_cli, tmp_path, monkeypatch, args, message):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "12")
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    status, _, err = run_cli(*args)
    assert_one_line(status, err, message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]  # nothing made: no outputs/ nor multirun/


def test_a_bad_memory_limit_is_one_line(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SIMSTUDY_MAX_MEMORY_GB", "lots")
    status, _, err = run_cli(*FIG1)
    assert err.strip() == "simstudy: error: SIMSTUDY_MAX_MEMORY_GB must be a positive number of GB, got 'lots'"
    assert status == 2 and not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("args, message", [
    (["-m", *FIG1, "sed=1,2"], "sed is not a key: did you mean seed? the keys there: budget, distribution,"),
    (["--multirun", *FIG1, "seed=1,2", "study.rep=5,6"], "study.rep is not a key: did you mean study.reps?"),
    (["-m", *FIG1, "seed=range(1,3)", "budget.B=abc,30"], "budget.B must be an integer, got 'abc'"),
    (["curve", "data=my", "results.csv"],
     "argument 'results.csv' is not key=value; a path with spaces needs quotes: data='my results.csv'"),
    (["curve", "data=my", "big", "results.csv", "estimator=v"],
     "argument 'big' is not key=value; a path with spaces needs quotes: data='my big results.csv'"),
    (["results.csv"], "argument 'results.csv' is not key=value (e.g. data=FILE; simstudy --help lists the commands)"),
    (["curve", "data=résultats.csv"],
     "argument 'data=résultats.csv' cannot be parsed: a value with spaces, non-ASCII letters or any of "
     "()[]{},:='\" needs quotes that reach simstudy: \"data='résultats.csv'\""),
    (["curve", "data=a,b.csv"],
     "argument 'data=a,b.csv' lists several values (a comma separates them): add -m to run each, or quote a "
     "value holding a comma: \"data='a,b.csv'\""),
    (["curve", "data=s.csv", "hydra.run.dir=s.csv"],
     "hydra.run.dir=s.csv is an existing file, not a directory: choose a directory path"),
    (["curve", "data=s.csv", "hydra.run.dir=s.csv/run"],
     "hydra.run.dir=s.csv/run lies under s.csv, an existing file, not a directory: choose a directory path"),
    ([*FIG1, "hydra.run.dir=s.csv"], "hydra.run.dir=s.csv is an existing file, not a directory"),
], ids=["-m typo", "--multirun typo", "-m bad value", "space", "spaces", "stray", "non-ascii", "comma",
        "run dir file", "run dir under file", "study run dir file"])
def test_arguments_are_checked_before_hydra(run_cli, tmp_path, args, message):
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    status, out, err = run_cli(*args)
    assert_one_line(status, err, message)
    assert (tmp_path / "s.csv").read_text() == "score\n0.9\n0.7\n0.8\n"  # the user's file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]  # no outputs/ nor multirun/


def test_ctrl_c_is_one_line_and_the_same_command_resumes(run_cli, tmp_path, monkeypatch):
    from simstudy.engine import chunks

    real, writes = chunks.ChunkStore.write, []

    def write(self, *args):
        if len(writes) == 2:
            raise KeyboardInterrupt
        writes.append(args)
        return real(self, *args)

    monkeypatch.setattr(chunks.ChunkStore, "write", write)
    command = (*FIG1, "study.reps=500", "study.chunk_reps=100", "hydra.run.dir=run")
    status, _, err = run_cli(*command)
    assert status == 130 and err.strip() == "simstudy: interrupted; rerun the same command to resume"
    kept = sorted(p.name for p in (tmp_path / "run").rglob("chunk-*"))
    assert kept == ["chunk-000000-r100.npz", "chunk-000001-r100.npz"]  # finished chunks kept, no partial one
    monkeypatch.setattr(chunks.ChunkStore, "write", real)
    status, out, _ = run_cli(*command)
    assert status == 0 and "(2 resumed)" in out


def test_ctrl_c_before_anything_is_written_leaves_nothing(run_cli, tmp_path, monkeypatch):
    from simstudy import tables

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tables, "evp_curves", interrupt)
    (tmp_path / "s.csv").write_text("score\n0.9\n0.7\n0.8\n")
    status, _, err = run_cli("curve", "data=s.csv")
    assert status == 130 and err.strip() == "simstudy: interrupted; rerun the same command to resume"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]
