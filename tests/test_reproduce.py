"""Reproduction of the papers: verdicts computed from the numbers, the catalogue, and `simstudy reproduce --quick`."""

import re

import numpy as np
import pandas as pd
import pytest
from _cli import simstudy

from simstudy import reproduce

FRAME = pd.DataFrame({
    "measure": ["m"] * 6,
    "model": ["a", "a", "a", "b", "b", "b"],
    "n": [1, 2, 3, 1, 2, 3],
    "estimate": [0.10, 0.20, 0.30, 0.15, 0.18, 0.40],
    "mcse": [0.01] * 6,
    "nominal": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3],
    "ci_low": [0.05, 0.21, 0.25, 0.0, 0.1, 0.2],
    "ci_high": [0.15, 0.30, 0.35, 0.2, 0.3, 0.4],
})


def outcome(kind, **spec):
    entry = reproduce.Entry("e", "t", "p", ("x",), (), (reproduce.Check("label", kind, spec),))
    return reproduce.evaluate(entry, FRAME, {"a": {"b": 9500}})[0]


@pytest.mark.parametrize("kind, spec, passed", [
    ("value", {"where": {"model": "a", "n": 2}, "paper": 0.23, "k": 3}, True),       # 0.03 = 3 MCSE
    ("value", {"where": {"model": "a", "n": 2}, "paper": 0.231, "k": 3}, False),
    ("value", {"where": {"model": "a"}, "paper_by": {"column": "n", "values": {1: 0.1, 2: 0.2, 3: 0.3}}, "tol": 0}, True),
    ("value", {"where": {"model": "a"}, "paper_by": {"column": "n", "values": {1: 0.1, 2: 0.2, 3: 0.31}}, "k": 0.5}, False),
    ("above", {"where": {"model": "b"}, "bound": 0.1, "k": 1}, True),                 # 0.15 - 0.01 > 0.1
    ("above", {"where": {"model": "b"}, "bound": 0.1, "k": 6}, False),
    ("above", {"where": {"model": "a"}, "bound": "nominal", "k": -1}, True),         # est + 1 MCSE > nominal
    ("below", {"where": {"model": "a", "n": [1, 2]}, "bound_by": {"column": "n", "values": {1: 0.2, 2: 0.3}}}, True),
    ("increasing", {"where": {}, "order": [{"model": "a"}, {"model": "b"}], "by": "n"}, False),  # fails at n = 2
    ("increasing", {"where": {"n": [1, 3]}, "order": [{"model": "a"}, {"model": "b"}], "by": "n"}, True),
    ("crosses", {"where": {}, "order": [{"model": "a"}, {"model": "b"}], "by": "n"}, True),
    ("crosses", {"where": {"n": [1, 3]}, "order": [{"model": "a"}, {"model": "b"}], "by": "n"}, False),
    ("covers", {"where": {}, "column": "nominal", "min_fraction": 5 / 6}, True),      # n = 2 of model a misses
    ("covers", {"where": {}, "column": "nominal", "min_fraction": 1.0}, False),
    ("count", {"where": {"model": "c"}, "at_most": 0}, True),
    ("count", {"where": {"model": "a"}, "at_least": 4}, False),
    ("run_value", {"path": "a.b", "paper": 9536, "tol": 42}, True),
    ("run_value", {"path": "a.b", "paper": 9536, "tol": 30}, False),
])
def test_check_kinds(kind, spec, passed):
    assert outcome(kind, **spec).passed is passed


def test_unmatched_selection_is_an_error_not_a_pass():
    with pytest.raises(KeyError, match="no summary rows match"):
        outcome("value", where={"model": "z"}, paper=0.1)
    with pytest.raises(ValueError, match="no column 'colour'"):  # not even a count may pass on a typo
        outcome("count", where={"colour": "red"}, at_most=0)


def test_verdicts_are_computed_from_the_outcomes():
    entry = reproduce.Entry("e", "t", "p", ("x",), (), ())
    ok = reproduce.Outcome("a", "1", "1", True)
    bad = reproduce.Outcome("b", "1", "2", False, "why")
    info = reproduce.Outcome("c", "1", "3", None)
    assert reproduce.verdict(reproduce.Section(entry, (ok, info), "", 1.0, None)) == "reproduced"
    assert reproduce.verdict(reproduce.Section(entry, (ok, bad), "", 1.0, None)) == "differs"
    assert reproduce.verdict(reproduce.Section(entry, (), "", 1.0, None, "boom")) == "failed"


def test_the_shipped_catalogue_is_valid_and_names_every_paper():
    entries = reproduce.load_catalogue()
    papers = " ".join(e.paper for e in entries)
    for name in ("Dodge et al. 2021, Figure 1", "Dodge et al. 2021, Figure 2", "Dodge et al. 2021, Figure 3",
                 "Dodge et al. 2019, Figure 1", "section 3.2", "Lourie et al., Figures 5", "Lourie et al., Figure 4",
                 "Lourie et al., Figure 9", "Figures 2-3", "Lourie et al., Figure 1", "Moss et al. 2019, Figure 4", "Table 2", "Table 3"):
        assert name in papers, name
    assert all(e.checks or e.unavailable for e in entries)


@pytest.mark.parametrize("text, message", [
    ("- {id: a, title: t, paper: p, command: [x], checks: [{label: l, kind: nope}]}", "check kind must be one of"),
    ("- {id: a, title: t, paper: p, command: [x], checks: [], colour: red}", "unknown keys ['colour']"),
    ("- {id: a, title: t, paper: p}", "needs id, title, paper"),
    ("- {id: a, title: t, paper: p, unavailable: x}\n- {id: a, title: t, paper: p, unavailable: y}", "used twice"),
])
def test_catalogue_errors_name_the_entry(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(reproduce.CatalogueError, match=re.escape(message)):
        reproduce.load_catalogue(path)


@pytest.mark.slow
def test_reproduce_quick_writes_every_section_and_resumes(tmp_path):
    simstudy("reproduce", "--quick", "n_jobs=2", cwd=tmp_path, timeout=240)
    report = (tmp_path / "outputs" / "reproduce-quick" / "REPRODUCTION.md").read_text()
    entries = reproduce.load_catalogue()
    for e in entries:
        assert f'<a id="{e.id}"></a>' in report, e.id
        if not e.unavailable:
            assert (tmp_path / "outputs" / "reproduce-quick" / "reproduction" / f"{e.id}.png").stat().st_size > 0
    verdicts = re.findall(r"\*\*Verdict: ([a-z ]+)\.\*\*", report)
    assert len(verdicts) == len(entries) and set(verdicts) <= {"reproduced", "differs", "no data"}
    assert re.search(r"in \*\*[0-9.]+ minutes on \d+ cores\*\*", report)
    # a second run resumes every study (no chunk recomputed) and keeps the recorded wall times
    times = re.findall(r"\| (\d+\.\d) s \|", report)
    simstudy("reproduce", "--quick", "only=fiesta_fig4", cwd=tmp_path, timeout=120)
    again = (tmp_path / "outputs" / "reproduce-quick" / "REPRODUCTION.md").read_text()
    assert re.findall(r"\| (\d+\.\d) s \|", again) == times
    assert re.findall(r"\*\*Verdict: ([a-z ]+)\.\*\*", again) == verdicts


def test_reproduce_bad_arguments(tmp_path):
    proc = simstudy("reproduce", "only=nope", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "only=nope: no entries nope" in proc.stderr
    proc = simstudy("reproduce", "n_jobs=0", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "n_jobs must be a positive number" in proc.stderr
    assert not (tmp_path / "outputs").exists()


def test_small_png_is_small(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 8), dpi=150)
    ax.plot(np.arange(100), np.sin(np.arange(100) / 10))
    fig.savefig(tmp_path / "big.png")
    plt.close(fig)
    reproduce._small_png(tmp_path / "big.png", tmp_path / "small.png")
    from PIL import Image

    with Image.open(tmp_path / "small.png") as image:
        assert image.width == 900
    assert (tmp_path / "small.png").stat().st_size < (tmp_path / "big.png").stat().st_size
