"""The painter (simstudy.painter): a study's figure drawn in a forked process, byte for byte the figure drawn
in-process, and drawn in-process whenever the painter cannot.

Forking the test process itself is avoided: each check runs a small script in a fresh interpreter (system lane).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import simstudy.__main__ as entry
from simstudy import painter

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the painter needs os.fork")

_SCRIPT = textwrap.dedent(
    """
    import logging, sys, warnings
    from pathlib import Path
    from simstudy import painter
    import simstudy.figures  # noqa: F401

    out = Path(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s:%(message)s")
    assert painter.start() and painter.running() and not painter.start()
    painter.warm("tests_painter_figures")
    import pandas as pd
    from tests_painter_figures import broken, chatty, line
    frame = pd.DataFrame({"x": [1, 2, 3], "y": [0.1, 0.4, 0.2]})
    print("painted", painter.paint(line, frame, [out / "a.png", out / "a.svg"], dpi=80))
    fig = line(frame)
    from simstudy import io
    io.save_figure(fig, out / "b.png", dpi=80)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print("chatty", painter.paint(chatty, frame, [out / "c.png"], dpi=80))
    print("warned", [str(w.message) for w in caught])
    print("local", painter.paint(lambda f: line(f), frame, [out / "d.png"]))  # no pickle by reference
    print("broken", painter.paint(broken, frame, [out / "e.png"]), painter.running())
    print("after", painter.paint(line, frame, [out / "f.png"]))
    """
)

_FIGURES = textwrap.dedent(
    """
    import logging, warnings
    from simstudy import charts

    def line(frame):
        plt = charts._theme()
        fig, ax = plt.subplots(figsize=(2, 2), layout="constrained")
        ax.plot(frame["x"], frame["y"])
        ax.set_title(r"$\\hat{V}_n$ of 3")
        return fig

    def chatty(frame):
        logging.getLogger("simstudy.test").warning("drawn with %d points", len(frame))
        warnings.warn("a painter's warning", UserWarning)
        return line(frame)

    def broken(frame):
        raise ValueError("no figure")
    """
)


@pytest.mark.system
def test_painter_draws_the_same_bytes_and_falls_back(tmp_path):
    (tmp_path / "tests_painter_figures.py").write_text(_FIGURES)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]), painter.ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(out)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "painted True" in lines
    assert (out / "a.png").read_bytes() == (out / "b.png").read_bytes()  # the painter's figure is this process's
    assert (out / "a.svg").read_text().count("<svg") == 1
    # its log lines and warnings come back to this process's log
    assert "simstudy.test:drawn with 3 points" in lines and "chatty True" in lines
    assert 'warned ["a painter\'s warning"]' in lines
    # what it cannot draw, the caller draws: a function without a name to send, an error (the painter stops)
    assert "local False" in lines and "broken False False" in lines and "after False" in lines
    assert not (out / "e.png").exists() and not list(out.glob(".*"))  # no temporary file left


@pytest.mark.system
def test_the_script_with_and_without_painter_writes_the_same_figure(tmp_path):
    runs = {}
    for name, flag in (("painter", "1"), ("here", "0")):
        run_dir = tmp_path / name
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "simstudy",
                "experiment=dodge2021_fig1",
                "study.reps=40",
                "study.chunk_reps=20",
                "runner.progress=false",
                f"hydra.run.dir={run_dir}",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, painter.ENV: flag},
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        runs[name] = run_dir
    assert (runs["painter"] / "figure.png").read_bytes() == (runs["here"] / "figure.png").read_bytes()


def test_a_python_caller_has_no_painter():
    assert not painter.running()
    assert painter.paint(print, None, [Path("never.png")]) is False


@pytest.mark.parametrize(
    ("argv", "paints"),
    [
        (["experiment=dodge2021_fig1", "study.reps=10"], True),
        (["-m", "experiment=dodge2021_fig1", "study.reps=10,20"], True),
        (["curve", "data=x.csv"], False),
        (["reproduce", "--quick"], False),
        (["experiment=x", "--cfg", "job"], False),
        (["experiment=x", "-h"], False),
    ],
)
def test_only_a_study_run_starts_a_painter(argv, paints):
    assert entry._draws_study_figure(argv) is paints


@pytest.mark.parametrize(("cores", "load", "idle"), [(1, 0.0, False), (2, 1.5, True), (2, 2.5, False), (8, 6.5, True)])
def test_a_painter_only_with_an_idle_core(monkeypatch, cores, load, idle):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert painter._idle_core() is idle
    monkeypatch.setenv(painter.ENV, "0")
    assert painter.start() is False  # never forked in the test process


_STUCK = textwrap.dedent(
    """
    import logging, os, signal, sys, time
    from pathlib import Path
    from simstudy import painter

    out = Path(sys.argv[1])
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s:%(message)s")
    painter.TIMEOUT = 2.0
    from tests_painter_figures import line, slow
    import pandas as pd
    frame = pd.DataFrame({"x": [1, 2, 3], "y": [0.1, 0.4, 0.2]})
    big = pd.DataFrame({"x": range(10**6), "y": 0.5})  # megabytes: more than a pipe holds
    for name, figure, data in (("stopped", line, frame), ("stopped-big", line, big), ("slow", slow, frame)):
        assert painter.start()
        pid = painter._painter[0]
        if name.startswith("stopped"):
            time.sleep(0.5)
            os.kill(pid, signal.SIGSTOP)
        began = time.monotonic()
        drawn = painter.paint(figure, data, [out / f"{name}.png"], dpi=80)
        waited = time.monotonic() - began
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        print(name, drawn, painter.running(), alive, waited < 10)
    """
)


@pytest.mark.system
def test_a_stopped_or_silent_painter_is_given_up_with_one_line(tmp_path):
    # A painter stopped by SIGSTOP (before or while the frame is written) or one that never answers: the main
    # process waited forever on the pipe; it must give up within the deadline, say why, and kill the painter.
    (tmp_path / "tests_painter_figures.py").write_text(
        _FIGURES + "\n\ndef slow(frame):\n    import time\n    time.sleep(60)\n    return line(frame)\n"
    )
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]), painter.ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-c", _STUCK, str(out)], capture_output=True, text=True, env=env, timeout=90, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for name in ("stopped", "stopped-big", "slow"):
        assert f"{name} False False False True" in lines, done.stdout
    notes = [line for line in lines if line.startswith("simstudy.painter:")]
    assert notes == [
        "simstudy.painter:the painter was stopped (SIGSTOP): drawing the figure in this process",
        "simstudy.painter:the painter was stopped (SIGSTOP): drawing the figure in this process",
        "simstudy.painter:the painter gave no answer in 2 s: drawing the figure in this process",
    ], done.stdout
    assert not list(out.iterdir())
