"""``runner.figures``: a study's figure is drawn in the formats asked for only (PNG by default), never changing
a number; a bad format is one line naming the key. The script and the Python API draw the same figure."""

import os
import subprocess
import sys

import pandas as pd
import pytest

import simstudy as ss
from simstudy import config

RUNNER = {"n_jobs": 1, "backend": "sequential"}


def test_png_alone_by_default_and_any_of_the_formats_in_the_order_given():
    assert config._runner(RUNNER).figures == ("png",)
    assert config._runner({**RUNNER, "figures": ["svg", "pdf", "svg"]}).figures == ("svg", "pdf")
    assert config._runner({**RUNNER, "figures": []}).figures == ()


@pytest.mark.parametrize("value", [["jpg"], "gif", [1]])
def test_a_format_it_cannot_write_is_one_line_naming_the_key(value):
    with pytest.raises(config.ConfigError, match=r"^runner\.figures must be one of png, pdf, svg, got"):
        config._runner({**RUNNER, "figures": value})


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_the_formats_change_the_files_only(tmp_path):
    small = ["study.reps=60", "study.chunk_reps=30", "budget.B=5"]
    default = ss.run("dodge2021_fig1", overrides=small, out_dir=tmp_path / "default")
    none = ss.run("dodge2021_fig1", overrides=[*small, "runner.figures=[]"], out_dir=tmp_path / "none")
    both = ss.run("dodge2021_fig1", overrides=[*small, "runner.figures=[pdf,png]"], out_dir=tmp_path / "both")
    assert sorted(p.name for p in (tmp_path / "default").glob("figure.*")) == ["figure.png"]
    assert not list((tmp_path / "none").glob("figure.*"))
    assert sorted(p.name for p in (tmp_path / "both").glob("figure.*")) == ["figure.pdf", "figure.png"]
    pd.testing.assert_frame_equal(default.summary, none.summary, check_exact=True)
    pd.testing.assert_frame_equal(default.summary, both.summary, check_exact=True)


@pytest.mark.system
def test_the_script_and_the_python_api_draw_the_same_figure(tmp_path):
    # One code path (issue 35 removed the painter, a second process that drew the script's figures): the
    # `simstudy` script and simstudy.run write the same bytes, each in a fresh interpreter (a first figure there).
    small = ["experiment=dodge2021_fig1", "study.reps=40", "study.chunk_reps=20", "runner.progress=false"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}
    script = [sys.executable, "-m", "simstudy", *small, f"hydra.run.dir={tmp_path / 'script'}"]
    api = f"import sys, simstudy; simstudy.run('dodge2021_fig1', overrides={small[1:]!r}, out_dir=sys.argv[1])"
    for args in (script, [sys.executable, "-c", api, str(tmp_path / "api")]):
        done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "script" / "figure.png").read_bytes() == (tmp_path / "api" / "figure.png").read_bytes()
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "script" / "summary.parquet"),
        pd.read_parquet(tmp_path / "api" / "summary.parquet"),
        check_exact=True,
    )
