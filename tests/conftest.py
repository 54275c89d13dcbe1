"""Shared fixtures. Every random test takes its seed from here and logs it, so a failure can be replayed."""

import hashlib
import logging

import numpy as np
import pytest

log = logging.getLogger("simstudy.tests")

# Scripts that patch simstudy when run (the failing-chunk plugin): never imported by collection, which
# --doctest-modules would otherwise do, patching the test process itself.
collect_ignore = ["plugins"]


@pytest.fixture
def rng(request):
    """A Generator seeded from the test's node id (file, name and parameters): fixed per test, distinct across
    tests. (A seed from the name's first bytes would give every ``test_...`` the same few seeds.)"""
    seed = int.from_bytes(hashlib.sha256(request.node.nodeid.encode()).digest()[:4], "little")
    log.info("seed for %s: %d", request.node.name, seed)
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures drawn by a test (the CLI in-process, the plots' tests) are closed after it: pyplot keeps every
    open figure, and more than 20 is a RuntimeWarning, which the suite treats as an error."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture
def forget_plugins():
    """Plug-in modules a test writes (named ``my_*``) are forgotten after it: ``sys.modules``, ``sys.path`` and
    the plug-ins' loaded functions, so the next test imports its own."""
    import sys

    from simstudy import plugins

    modules, path = set(sys.modules), list(sys.path)
    yield
    for name in set(sys.modules) - modules:
        if name.startswith("my_"):
            del sys.modules[name]
    sys.path[:] = path
    plugins.LOADED.clear()


@pytest.fixture
def run_cli(tmp_path, monkeypatch, capsys):
    """``run_cli(*argv) -> (status, stdout, stderr)`` for ``simstudy *argv`` in ``tmp_path``, in this process."""
    import os
    import sys

    from simstudy.cli.main import main

    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("HYDRA")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")  # main() sets it; scoped to the test here

    def run(*argv):
        monkeypatch.setattr(sys, "argv", ["simstudy", *argv])
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        capsys.readouterr()
        try:
            main()
            status = 0
        except SystemExit as exc:
            status = exc.code
        finally:  # Hydra's job logging rebinds the root logger to this test's captured stdout
            root.handlers[:] = handlers
            root.setLevel(level)
        out, err = capsys.readouterr()
        return status, out, err

    return run
