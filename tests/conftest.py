"""Shared fixtures. Every random test takes its seed from here and logs it, so a failure can be replayed."""

import logging

import numpy as np
import pytest

log = logging.getLogger("simstudy.tests")


@pytest.fixture
def rng(request):
    """A Generator seeded from the test's name: fixed per test, different across tests."""
    seed = int.from_bytes(request.node.name.encode()[:8].ljust(8, b"\0"), "little") % 2**32
    log.info("seed for %s: %d", request.node.name, seed)
    return np.random.default_rng(seed)
