"""The real sources of ``tests/sources/data`` (written by ``make_fixtures.py`` with Optuna and MLflow), what the
frameworks reported about them (``expected.json``), and copies a test may spoil."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def expected() -> dict:
    """What Optuna and MLflow reported about the sources of ``data/`` (``make_fixtures.py``)."""
    return json.loads((DATA / "expected.json").read_text())


@pytest.fixture
def data() -> Path:
    """The folder of the real sources (read-only: a test that spoils one takes a copy with ``spoil``)."""
    return DATA


@pytest.fixture
def spoil(tmp_path):
    """``spoil(name) -> path`` of a copy of a source in ``tmp_path``, for a test that changes it."""
    return lambda name: Path(shutil.copy(DATA / name, tmp_path / name))


@pytest.fixture
def as_float():
    """``as_float(values) -> ndarray``: values as expected.json holds them (None: no value; "inf", "-inf")."""
    return lambda values: np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
