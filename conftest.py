"""Fixtures for every test the suite collects: tests/ and the docstring examples under simstudy/."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """LD intervals are cached on disk; tests and examples use a private cache directory, never the user's."""
    path = tmp_path_factory.mktemp("simstudy-cache")
    old = os.environ.get("SIMSTUDY_CACHE_DIR")
    os.environ["SIMSTUDY_CACHE_DIR"] = str(path)
    yield
    if old is None:
        os.environ.pop("SIMSTUDY_CACHE_DIR", None)
    else:
        os.environ["SIMSTUDY_CACHE_DIR"] = old
