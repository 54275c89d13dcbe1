"""Nested-loop plots (Rücker & Schwarzer 2014): the cells' lexicographic order and the factors' step lines, the
figure's line in that order, and a sweep or design of three or more keys writing nested_loop.png."""

import itertools

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from simstudy import sweeps
from simstudy.registry import Headline
from simstudy.sweeps import nested_loop_figure, nested_loop_layout

matplotlib.use("Agg")

# A 2 x 3 x 2 factorial: B (numbers, given out of order), estimator (text: order of first appearance), sd.
LEVELS = {"B": [50, 10], "estimator": ["w", "u", "v"], "sd": [0.2, 0.1]}


def frame_2x3x2(seed=0):
    cells = pd.DataFrame(list(itertools.product(*LEVELS.values())), columns=list(LEVELS))
    cells = cells.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # scrambled rows
    return cells.assign(estimate=cells.B * 100 + cells.estimator.map({"w": 1, "u": 2, "v": 3}) * 10 + cells.sd * 10,
                        mcse=0.5)


def test_layout_orders_the_cells_first_factor_slowest_and_steps_each_factor():
    codes = np.array([[1, 2, 0], [0, 0, 1], [1, 0, 0], [0, 2, 1], [0, 1, 0], [1, 1, 1],
                      [0, 0, 0], [1, 2, 1], [0, 1, 1], [1, 0, 1], [0, 2, 0], [1, 1, 0]])
    order, lanes = nested_loop_layout(codes, [2, 3, 2], height=0.5)
    assert codes[order].tolist() == [list(c) for c in itertools.product(range(2), range(3), range(2))]
    assert lanes.shape == (3, 12)
    assert lanes[0].tolist() == [2.0] * 6 + [2.5] * 6  # the first factor on top: one step
    assert lanes[1].tolist() == [1.0, 1.0, 1.25, 1.25, 1.5, 1.5] * 2  # the second: 3 levels, twice
    assert lanes[2].tolist() == [0.0, 0.5] * 6  # the innermost: alternates
    # one level: the lane's bottom
    assert nested_loop_layout(np.zeros((2, 1), int), [1])[1].tolist() == [[0.0, 0.0]]


def test_figure_draws_the_estimates_in_lexicographic_order_with_level_names():
    frame = frame_2x3x2()
    fig = nested_loop_figure(frame, ["B", "estimator", "sd"], ylabel="MSE")
    top, bottom = fig.axes
    y = top.lines[0].get_ydata()
    texts = list(pd.unique(frame.estimator))  # text: in order of first appearance (a sweep's: its jobs' order)
    code = {"w": 1, "u": 2, "v": 3}
    want = [b * 100 + code[e] * 10 + s * 10 for b in (10, 50) for e in texts for s in (0.1, 0.2)]
    np.testing.assert_allclose(y, want)  # numbers ascending: 10 before 50, 0.1 before 0.2
    assert len(top.collections) == 1  # the ±2 MCSE band
    assert [t.get_text() for t in bottom.get_yticklabels()] == ["B", "estimator", "sd"]
    names = [t.get_text() for t in bottom.texts]
    assert names[:2] == ["10", "50"] and names[2:5] == texts
    plt.close(fig)


def test_figure_with_hue_and_refusals():
    frame = pd.concat([frame_2x3x2().assign(method="a"), frame_2x3x2(1).assign(method="b", estimate=0.0)])
    fig = nested_loop_figure(frame, ["B", "estimator", "sd"], hue="method")
    assert len(fig.axes[0].lines) == 2 and fig.axes[0].lines[1].get_ydata().tolist() == [0.0] * 12
    plt.close(fig)
    with pytest.raises(ValueError, match="18 rows share a cell of B, estimator"):
        nested_loop_figure(frame, ["B", "estimator"])  # sd and method left out: ambiguous
    with pytest.raises(ValueError, match=r"column\(s\) nope not in the frame"):
        nested_loop_figure(frame, ["B", "nope"])


def test_factors_of_a_sweep_take_x_then_distribution_when_needed():
    rows = frame_2x3x2().rename(columns={"estimator": "distribution.kind"}).assign(estimator="v")
    spec = Headline({}, "n", "estimator", "MSE")
    assert sweeps.nested_loop_factors(rows, ["B", "distribution.kind", "sd"], spec) == ["B", "distribution.kind", "sd"]
    with_n = pd.concat([rows.assign(n=1), rows.assign(n=2)])
    assert sweeps.nested_loop_factors(with_n, ["B", "distribution.kind", "sd"], spec) == [
        "B", "distribution.kind", "sd", "n"]
    two = pd.concat([with_n.assign(distribution="a"), with_n.assign(distribution="b")])
    assert sweeps.nested_loop_factors(two, ["B", "distribution.kind", "sd"], spec)[-2:] == ["n", "distribution"]
    assert sweeps.nested_loop_factors(pd.concat([rows, rows]), ["B", "sd"], spec) is None


SWEPT = {"budget.B": [10, 50], "distribution.kind": ["kde", "bag", "file"], "distribution.sd": [0.1, 0.2]}


def _fake_sweep(root, keys):
    jobs = []
    for values in itertools.product(*(SWEPT[k] for k in keys)):
        job = sweeps.Job(",".join(f"{k}={v}" for k, v in zip(keys, values)), dict(zip(keys, values)))
        (root / job.name).mkdir()
        pd.DataFrame({"study": "s", "estimator": ["u", "v"], "n": 1, "measure": "mse", "estimate": [0.1, 0.2],
                      "mcse": 0.01}).to_parquet(root / job.name / "summary.parquet")
        jobs.append(job)
    return jobs


@pytest.mark.slow  # two sweep figures of 12 and 4 panels, png and pdf: about 3 s
def test_a_sweep_of_three_keys_writes_nested_loop_png_and_of_two_does_not(tmp_path):
    (tmp_path / "three").mkdir()
    sweeps.write_sweep(tmp_path / "three", list(SWEPT), _fake_sweep(tmp_path / "three", list(SWEPT)))
    assert (tmp_path / "three" / "nested_loop.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "two").mkdir()
    two = ["budget.B", "distribution.sd"]
    sweeps.write_sweep(tmp_path / "two", two, _fake_sweep(tmp_path / "two", two))
    assert (tmp_path / "two" / "figure.png").is_file() and not (tmp_path / "two" / "nested_loop.png").exists()


def test_the_nested_loop_plot_of_a_sweep_of_three_keys(tmp_path):
    jobs = _fake_sweep(tmp_path, list(SWEPT))
    frame = sweeps.stack(tmp_path, jobs, list(SWEPT)).frame
    rows, spec = sweeps.headline(frame, "")
    sweeps._nested_loop(tmp_path, rows, list(SWEPT), spec, "s: ")
    assert (tmp_path / "nested_loop.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # eight tiny studies in-process through the command line: about 6 s
def test_a_design_of_three_keys_writes_nested_loop_png(tmp_path):
    import simstudy

    result = simstudy.run("dodge2021_fig1", ["study.reps=40", "study.chunk_reps=40", "runner.figures=[png]",
                                             "+design={distribution.sd: [0.05, 0.1], budget.B: [4, 6], "
                                             "distribution.mean: [0.6, 0.8]}"], out_dir=tmp_path / "design")
    assert result.files["nested_loop_png"].read_bytes()[:4] == b"\x89PNG"
