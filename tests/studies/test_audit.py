import numpy as np
import pytest

from simstudy.commands import audit as audit_command
from simstudy.commands import audit_page
from simstudy.studies import audit


@pytest.fixture(scope="module")
def scores_file(tmp_path_factory):
    """300 runs: 10% failed at exactly 0, 30% near chance (0.35), 60% good (0.85); 4 decimals."""
    rng = np.random.default_rng(1711)
    x = np.concatenate([np.zeros(30), rng.normal(0.35, 0.01, 90), rng.normal(0.85, 0.02, 180)])
    x = np.round(np.clip(x, 0, 1), 4)
    path = tmp_path_factory.mktemp("audit") / "runs.csv"
    path.write_text("score\n" + "\n".join(f"{v:.4f}" for v in x) + "\n")
    return path, x


def _audit(path, x, kind, out_dir):
    opts = audit_command.parse({"data": str(path), "low": 0.0, "high": 1.0, "rounds": 40, "bootstrap_rounds": 20,
                                "resamples": 100, "evp_reps": 200, "target_k": 5, "sample_size": 30})
    spec = {"kind": kind, "path": str(path), "low": 0.0, "high": 1.0, "bw_of": "reflected", "bandwidth": None,
            "bw_factor": None, "name": "runs"}
    result = audit.run(opts, spec, 30, out_dir)
    return result, audit_page.write_page(result, opts, x, out_dir).read_text()


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_audit_with_atoms_describes_a_fit_that_passes(scores_file, tmp_path):
    path, x = scores_file
    result, text = _audit(path, x, "kde_atoms", tmp_path)
    assert result.kde.atoms.tolist() == [0.0]
    assert "atom at 0 (10.0% of runs) plus a Gaussian KDE reflected at [0, 1] of the other 270 scores" in text
    assert "improved Sheather–Jones" in text and "not rejected" in text and "Warning" not in text
    # Progress: the coverage and bootstrap studies run in 20 chunks each.
    for study in ("coverage", "bootstrap"):
        assert len(list((tmp_path / study / "chunks").rglob("chunk-*.npz"))) == 20, study
    assert (tmp_path / "fit.png").stat().st_size > 0


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_audit_warns_when_the_fit_misses_the_scores(scores_file, tmp_path):
    path, x = scores_file
    _, text = _audit(path, x, "kde", tmp_path)  # Silverman's rule smooths the modes and the atom away
    head = text.split("## Confidence bands")[0]
    assert "**Warning: the fitted distribution does not describe your scores (KS distance" in head
    assert "Silverman's rule of thumb" in head and "rejected: see the warning above" in head


def test_progress_chunks():
    assert [audit.progress_chunk(r) for r in (1024, 512, 20, 7)] == [51, 25, 1, 1]
    assert all(-(-r // audit.progress_chunk(r)) >= 20 for r in range(20, 3000, 37))
