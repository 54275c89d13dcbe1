"""Sweeps end in one frame: `simstudy -m ...` stacks every job's summary at the sweep directory (one typed column
per swept key, a job column) with a faceted figure; `simstudy collect sweep_dir=` rebuilds them."""

import itertools
import shutil

import pandas as pd
import pytest
from _cli import FIG1, one_line_error, simstudy
from pandas.testing import assert_frame_equal

import simstudy as ss
from simstudy import figures, sweeps

B_VALUES, SD_VALUES = (5, 6), (0.05, 0.1)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """A finished 2x2 sweep at tiny scale (about 3 s), shared read-only: tests that change it copy it. A sweep end
    to end: the tests that use it are in the system lane."""
    cwd = tmp_path_factory.mktemp("sweep")
    simstudy("-m", *FIG1, "study.reps=100", "seed=41", "budget.B=5,6", "distribution.sd=0.05,0.1", cwd=cwd)
    return cwd / "outputs" / "multirun" / "dodge2021_fig1"


def _jobs(sweep_dir):
    return sorted(p for p in sweep_dir.iterdir() if p.is_dir())


@pytest.mark.system
def test_the_stacked_frame_holds_every_job_with_typed_swept_columns(sweep):
    frame = pd.read_parquet(sweep / "summary.parquet")
    jobs = _jobs(sweep)
    assert len(jobs) == 4
    assert list(frame.columns[:3]) == ["job", "budget.B", "distribution.sd"]
    assert frame["budget.B"].dtype == "int64" and frame["distribution.sd"].dtype == "float64"
    assert set(zip(frame["budget.B"], frame["distribution.sd"])) == set(itertools.product(B_VALUES, SD_VALUES))
    assert (frame["budget.B"] == frame["B"]).all()  # each row carries its own job's value
    assert len(frame) == sum(len(pd.read_parquet(j / "summary.parquet")) for j in jobs)
    for job in jobs:  # each job's rows are its summary, unchanged, in order
        rows = frame[frame["job"] == job.name].drop(columns=["job", "budget.B", "distribution.sd"])
        assert_frame_equal(rows.reset_index(drop=True), pd.read_parquet(job / "summary.parquet"), check_exact=True)
        b, sd = (frame.loc[frame["job"] == job.name, key].iloc[0] for key in ("budget.B", "distribution.sd"))
        assert f"budget.B={b}" in job.name and f"distribution.sd={sd}" in job.name
    csv = pd.read_csv(sweep / "summary.csv")
    assert len(csv) == len(frame) and list(csv.columns) == list(frame.columns)
    for name in ("figure.png", "figure.pdf"):
        assert (sweep / name).stat().st_size > 1000


@pytest.mark.system
def test_the_figure_has_one_panel_per_combination_with_the_mse_of_each_estimator(sweep):
    frame = pd.read_parquet(sweep / "summary.parquet")
    rows, spec = sweeps.headline(frame, "evp_accuracy")
    assert set(rows["measure"]) == {"mse"} and set(rows["estimator"]) == {"u", "v", "w"}
    fig = figures.sweep_figure(rows, ["budget.B", "distribution.sd"], x=spec.x, hue=spec.hue, ylabel=spec.ylabel)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert sorted(titles) == sorted(f"budget.B = {b}, distribution.sd = {sd}"
                                    for b, sd in itertools.product(B_VALUES, SD_VALUES))
    assert all(len(ax.get_lines()) == 3 for ax in fig.axes)  # U, V, W in each panel


@pytest.mark.system
def test_collect_rebuilds_the_identical_frame(sweep, tmp_path):
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    for name in ("summary.parquet", "summary.csv", "figure.png", "figure.pdf"):
        (copy / name).unlink()
    simstudy("collect", f"sweep_dir={copy}", cwd=tmp_path)
    assert_frame_equal(pd.read_parquet(copy / "summary.parquet"), pd.read_parquet(sweep / "summary.parquet"),
                       check_exact=True)
    assert (copy / "figure.png").is_file() and (copy / "figure.pdf").is_file()


@pytest.mark.system
def test_collect_names_unfinished_jobs_in_one_line_and_exits_1(sweep, tmp_path):
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    lost = _jobs(copy)[2]
    (lost / "summary.parquet").unlink()
    proc = simstudy("collect", f"sweep_dir={copy}", cwd=tmp_path, check=False)
    one_line_error(proc, f"1 of 4 jobs did not finish (no summary.parquet): {lost.name};", status=1)
    frame = pd.read_parquet(copy / "summary.parquet")  # the finished jobs' frame, rebuilt
    assert sorted(set(frame["job"])) == sorted(j.name for j in _jobs(copy) if j != lost)


def test_collect_of_a_directory_that_is_not_a_sweep_is_one_line(tmp_path):
    one_line_error(simstudy("collect", "sweep_dir=nowhere", cwd=tmp_path, check=False),
                   "sweep_dir=nowhere: no multirun.yaml there")
    one_line_error(simstudy("collect", "sweep_dir=a", "run_dir=b", cwd=tmp_path, check=False), "not both")


def test_stack_stores_a_column_of_numbers_and_words_as_words(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        pd.DataFrame({"estimate": [1.0]}).to_parquet(tmp_path / name / "summary.parquet")
    out = sweeps.stack(tmp_path, [sweeps.Job("a", {"x": 10}), sweeps.Job("b", {"x": "ten"})], ["x"])
    assert list(out.frame["x"]) == ["10", "ten"] and out.unfinished == ()
    with pytest.raises(ValueError, match="job b has no value for swept key"):
        sweeps.stack(tmp_path, [sweeps.Job("a", {"x": 1}), sweeps.Job("b", {})], ["x"])


def test_headline_of_an_unknown_kind_is_its_first_measure(tmp_path):
    f = pd.DataFrame({"method": ["m", "m"], "k": [1, 2], "measure": ["failed_chunks", "width"],
                      "estimate": [1.0, 2.0]})
    rows, spec = sweeps.headline(f, "my_plugin_study")
    assert (spec.x, spec.hue, spec.ylabel) == ("k", "method", "width") and list(rows["estimate"]) == [2.0]


def _rows(x_values, estimators, seeds=(1, 2)):
    grid = list(itertools.product(seeds, x_values, estimators))
    est = pd.DataFrame(grid, columns=["seed", "B", "estimator"])
    return est.assign(distribution="a vs b", n=3, estimate=0.5, ci_low=0.4, ci_high=0.6)


def test_the_figure_keeps_one_line_per_estimator_when_x_is_what_varies_within_a_job():
    fig = figures.sweep_figure(_rows([2, 3, 4], ["u", "v"]), ["seed"], x="B", hue="estimator", ylabel="rate")
    assert [len(ax.get_lines()) for ax in fig.axes] == [2, 2]
    assert len(fig.legends[0].get_texts()) == 3  # u, v and the interval's shading (below the panels)


def test_the_figure_names_the_line_style_of_each_cell_of_a_job():
    fig = figures.sweep_figure(_rows([2, 3], ["u", "v"]), ["seed"], x="n", hue="estimator", ylabel="MSE")
    assert [len(ax.get_lines()) for ax in fig.axes] == [4, 4]  # 2 estimators x 2 cells (B = 2, 3)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts[-2:] == ["B = 2", "B = 3"] and len(texts) == 5


@pytest.mark.system
def test_a_sweep_of_sharded_runs_is_stacked_once_each_run_is_collected(tmp_path):
    simstudy("-m", *FIG1, "study.reps=200", "study.chunk_reps=100", "seed=47", "runner.shard=1/2,2/2", "budget.B=5,6",
             cwd=tmp_path)
    sweep_dir = tmp_path / "outputs" / "multirun" / "dodge2021_fig1"
    assert not (sweep_dir / "summary.parquet").exists()  # the shards summarised nothing
    proc = simstudy("collect", f"sweep_dir={sweep_dir}", cwd=tmp_path, check=False)
    one_line_error(proc, "2 of 2 jobs did not finish (no summary.parquet)", status=1)
    assert "simstudy collect run_dir=" in proc.stderr  # what finishes them
    for job in _jobs(sweep_dir):
        simstudy("collect", f"run_dir={job}", cwd=tmp_path)
    simstudy("collect", f"sweep_dir={sweep_dir}", cwd=tmp_path)
    frame = pd.read_parquet(sweep_dir / "summary.parquet")
    assert sorted(set(frame["budget.B"])) == [5, 6] and "runner.shard" not in frame


DESIGN = "+design={distribution.sd: [0.05, 0.1], budget.B: [5, 6]}"


@pytest.mark.system
def test_a_design_block_gives_the_sweeps_frame_and_numbers_in_one_run(sweep, tmp_path):
    simstudy(*FIG1, "study.reps=100", "seed=41", DESIGN, "hydra.run.dir=design", cwd=tmp_path)
    design = pd.read_parquet(tmp_path / "design" / "summary.parquet")
    assert list(design.columns[:3]) == ["job", "distribution.sd", "budget.B"]
    assert sorted(set(design["job"])) == [f"budget.B={b},distribution.sd={sd}"
                                          for b, sd in itertools.product(B_VALUES, SD_VALUES)]
    stacked = pd.read_parquet(sweep / "summary.parquet")  # the same settings as a sweep: the same numbers

    def cells(frame):
        return frame.drop(columns="job").sort_values(["budget.B", "distribution.sd"], kind="stable")[
            sorted(frame.columns.drop("job"))].reset_index(drop=True)

    assert_frame_equal(cells(design), cells(stacked), check_exact=True)
    assert (tmp_path / "design" / "figure.png").is_file()
    again = ss.run("dodge2021_fig1", ["runner.progress=false", "study.reps=100", "seed=41", DESIGN],
                   out_dir=tmp_path / "design")  # the Python API: the stacked frame, every cell resumed
    assert again.report.resumed == again.report.tasks == 4
    assert_frame_equal(again.summary, design, check_exact=True)


@pytest.mark.parametrize("design, message", [
    ("+design={distribution.sd: [0.05, -1]}", "design cell distribution.sd=-1: distribution.sd must be > 0, got -1"),
    ("+design={distribution.sdd: [0.05]}", "design.distribution.sdd: the config has no key distribution.sdd"),
    ("+design={budget.B: 5}", "design.budget.B must be a non-empty list of values, got 5"),
])
def test_a_bad_design_is_one_line_before_any_compute(tmp_path, design, message):
    one_line_error(simstudy(*FIG1, "study.reps=100", design, cwd=tmp_path, check=False), message)
    assert not (tmp_path / "outputs").exists()
