"""The Python blocks of the docs' guides and concepts run as written, each on its own, as a reader would
paste them (the figures' code runs in the docs build itself, which CI fails on any error).

Marked heavy (about 20 s: a parametric bootstrap of 200 refits, a TTTS run on 12 models): CI's second lane.
"""

import os
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCKS = [
    pytest.param(block, id=f"{path.relative_to(DOCS)}#{i}")
    for path in sorted(DOCS.rglob("*.md"))
    if "_build" not in path.parts
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S))
]


def test_the_docs_have_python_blocks():
    assert len(BLOCKS) >= 6  # a change to the regular expression would otherwise pass every test vacuously


@pytest.mark.heavy
@pytest.mark.parametrize("block", BLOCKS)
def test_a_python_block_of_the_docs_runs(block, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # a block that writes (runs/fig1) writes here
    exec(compile(block, "<docs block>", "exec"), {"__name__": "docs_block"})
    assert os.getcwd() == str(tmp_path)
