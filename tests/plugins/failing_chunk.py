"""Test plugin: the `simstudy` command with a study whose estimator raises in some chunks.

``python failing_chunk.py ARGS`` runs ``simstudy ARGS`` after wrapping the Figure 1 study's chunk function so
that it raises, as a user's estimator might, for budget ``B = $FAIL_B`` in the chunks listed in
``$FAIL_CHUNKS`` (comma-separated; default all). Run with ``runner.n_jobs=1`` so the chunks run in this
process (a worker process would import the unwrapped study).
"""

import os
import sys

from simstudy.cli.main import main
from simstudy.studies import evp_accuracy

_original = evp_accuracy._run_chunk
FAIL_B = int(os.environ.get("FAIL_B", "7"))
FAIL_CHUNKS = os.environ.get("FAIL_CHUNKS")


def _failing_chunk(work, task):
    if work.cells[task.cell].B == FAIL_B and (FAIL_CHUNKS is None or str(task.chunk) in FAIL_CHUNKS.split(",")):
        raise FloatingPointError(f"estimator diverged on a degenerate sample (B={FAIL_B})")
    return _original(work, task)


evp_accuracy._run_chunk = _failing_chunk

if __name__ == "__main__":
    sys.argv[0] = "simstudy"
    main()
