"""The `simstudy` command end to end, in subprocesses, in a scratch working directory (bad input: see
test_bad_inputs.py)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import FIG1, simstudy

# Each test runs the whole command end to end (a run directory, its files and figures, seconds each): the system
# lane. The default lane keeps the command's path through test_api, test_run_identity and test_files_safe.
pytestmark = pytest.mark.system


def test_figure1_small_end_to_end(tmp_path):
    proc = simstudy(*FIG1, "study.reps=400", "study.chunk_reps=150", "runner.figures=[png,pdf]", "study.save_replicates=true",
                    cwd=tmp_path)
    out = tmp_path / "outputs" / "dodge2021_fig1" / "study.chunk_reps=150,study.reps=400,study.save_replicates=true"
    for name in ("summary.parquet", "summary.csv", "replicates.parquet", "figure.png", "figure.pdf",
                 "run.json", "config.yaml"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = pd.read_parquet(out / "summary.parquet")
    assert set(summary.estimator) >= {"u", "v", "w", "truth", "v-u", "w-u", "w-v"}
    assert pd.read_parquet(out / "replicates.parquet").replicate.nunique() == 400
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 0 and run["distributions"]["truncnorm_bag"]["size"] == 10_000
    assert run["environment"]["packages"]["numpy"]
    assert "unique=" in proc.stdout  # the bag's description is reported


def test_overrides_and_summaries_only(tmp_path):
    simstudy(*FIG1, "estimators=[u,v]", "budget.B=12", "study.reps=300", "study.save_replicates=false",
             "seed=7", "distribution=truncnorm", "distribution.sd=0.1", "hydra.run.dir=run", cwd=tmp_path)
    summary = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    assert set(summary.estimator) == {"u", "v", "truth", "v-u"} and summary.n.max() == 12
    assert not (tmp_path / "run" / "replicates.parquet").exists()


def test_sweep(tmp_path):
    simstudy("-m", *FIG1, "study.reps=100", "budget.B=5,6", cwd=tmp_path)
    runs = sorted(p.name for p in (tmp_path / "outputs" / "multirun" / "dodge2021_fig1").iterdir() if p.is_dir())
    assert runs == ["budget.B=5,study.reps=100", "budget.B=6,study.reps=100"]


def test_a_studys_help_lists_groups_and_experiments(tmp_path):
    proc = simstudy("experiment=dodge2021_fig1", "--help", cwd=tmp_path)  # Hydra's: the resolved config
    assert "experiment: dodge2019_bootstrap, dodge2021_fig1, dodge2021_fig2" in proc.stdout
    assert "estimators: bootstrap, u, v, w" in proc.stdout


def _chunks(run_dir: Path) -> list[Path]:
    return list((run_dir / "chunks").rglob("*.npz")) if (run_dir / "chunks").exists() else []


def test_interrupted_run_resumes_bit_identically_and_n_jobs_does_not_matter(tmp_path):
    """Ctrl-C midway keeps the finished chunks; the rerun resumes and matches an uninterrupted 2-worker run."""
    args = [*FIG1, "budget.B=100", "study.reps=200000", "study.chunk_reps=2000", "study.save_replicates=false"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}
    run_dir = tmp_path / "interrupted"
    # A terminal's Ctrl-C meets Python's default handler; the child must not inherit an "ignore SIGINT" that
    # the test process may briefly hold (seen under pytest with a live loky executor), or it never stops.
    proc = subprocess.Popen([sys.executable, "-m", "simstudy.cli", *args, f"hydra.run.dir={run_dir}"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while len(_chunks(run_dir)) < 5 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0, "the run finished before it could be interrupted"
    assert not (run_dir / "summary.parquet").exists()
    done = len(_chunks(run_dir))
    assert 5 <= done < 100
    assert not list(run_dir.rglob("*.part"))  # nothing half-written

    simstudy(*args, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    resumed = json.loads((run_dir / "run.json").read_text())["runner"]
    assert resumed["resumed"] == done and resumed["computed"] == 100 - done

    simstudy(*args, "runner.n_jobs=2", f"hydra.run.dir={tmp_path / 'reference'}", cwd=tmp_path)
    pd.testing.assert_frame_equal(pd.read_parquet(run_dir / "summary.parquet"),
                                  pd.read_parquet(tmp_path / "reference" / "summary.parquet"), check_exact=True)


def test_console_script_is_installed():
    exe = shutil.which("simstudy", path=str(Path(sys.executable).parent))
    assert exe is not None, "the simstudy console script is not installed beside this Python"
    proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "simstudy COMMAND --help" in proc.stdout


def test_curve_command_on_a_file_with_target_and_time(tmp_path):
    rows = ["model,score"] + [f"cnn,{0.3 + 0.004 * i}" for i in range(30)] + [f"lr,{0.36 + 0.001 * i}" for i in range(20)]
    (tmp_path / "results.csv").write_text("\n".join(rows) + "\n")
    proc = simstudy("curve", "data=results.csv", "target=0.395", "trial_time={cnn: 2.0, lr: 0.5}",
                    "hydra.run.dir=out", cwd=tmp_path)
    assert "cnn: expected max first reaches 0.395 at n = " in proc.stdout
    table = pd.read_csv(tmp_path / "out" / "curves.csv")
    assert set(table.model) == {"cnn", "lr"} and {"n", "expected_max", "std", "time"} <= set(table.columns)
    targets = pd.read_csv(tmp_path / "out" / "targets.csv")
    assert set(targets.model) == {"cnn", "lr"}
    assert (tmp_path / "out" / "figure.png").stat().st_size > 0


def test_curve_command_on_a_shipped_data_set(tmp_path):
    proc = simstudy("curve", "data=reuters_hedwig", "estimator=u", "hydra.run.dir=out", cwd=tmp_path)
    assert "mlp" in proc.stdout and "lstm" in proc.stdout


def test_figure2_and_bootstrap_presets_run_small(tmp_path):
    simstudy("experiment=dodge2021_fig2", "study.reps=300", "study.chunk_reps=300", "runner.progress=false",
             "hydra.run.dir=fig2", cwd=tmp_path)
    s = pd.read_parquet(tmp_path / "fig2" / "summary.parquet")
    assert sorted(set(s.B)) == list(range(15, 31)) and {"wrong_rate", "true_gap"} <= set(s.measure)
    simstudy("experiment=dodge2019_bootstrap", "study.reps=40", "study.chunk_reps=40", "budget.B=8",
             "runner.progress=false", "hydra.run.dir=boot", cwd=tmp_path)
    s = pd.read_parquet(tmp_path / "boot" / "summary.parquet")
    assert set(s.distribution) == {"bag", "continuous"} and "excess_mse_predicted" in set(s.measure)
    for run in ("fig2", "boot"):
        assert (tmp_path / run / "figure.png").stat().st_size > 0


def test_bands_command_two_models_with_evidence(tmp_path):
    proc = simstudy("bands", "data=deberta_mnli", "sample_size=48", "confidence=0.8", "low=0", "high=1",
                    "hydra.run.dir=out", cwd=tmp_path)
    assert "evidence debertav3 is better" in proc.stdout
    out = tmp_path / "out"
    for name in ("tuning_curve.png", "tuning_curve.pdf", "cdf.png", "bands.csv", "bands.parquet", "cdf_bands.csv",
                 "evidence.csv"):
        assert (out / name).stat().st_size > 0, name
    table = pd.read_parquet(out / "bands.parquet")
    assert set(table.model) == {"deberta", "debertav3"} and table.k.max() == 48
    assert (table.lower <= table.point).all() and (table.point <= table.upper).all()
    evidence = pd.read_csv(out / "evidence.csv")  # Lourie et al. Figure 2's first 48 runs: exact, deterministic
    assert (evidence.leader == "debertav3").all() and list(evidence.k) == list(range(1, 49))
    assert list(evidence.evidence) == ["weak"] * 2 + ["strong"] * 6 + ["weak"] * 40
    assert "k = 3..8: strong evidence debertav3 is better" in proc.stdout


def test_bands_command_random_samples_and_point_estimates_lourie_figure1(tmp_path):
    # Lourie et al. Figure 1: two random samples of 25 Reuters runs per model. Seed 30's U and V point estimates
    # say the LSTM overtakes the MLP (V at k = 20, U at k = 14); seed 0's say it never does.
    args = ("bands", "data=reuters_hedwig", "sample_size=25", "confidence=0.5", "low=0", "high=1")
    top = simstudy(*args, "sample_seed=30", "hydra.run.dir=top", cwd=tmp_path)
    assert "V: mlp ahead at k = 1..19, lstm at k = 20..25" in top.stdout
    assert "U: mlp ahead at k = 1..13, lstm at k = 14..25" in top.stdout
    evidence = pd.read_csv(tmp_path / "top" / "evidence.csv")
    assert list(evidence.v_leader) == ["mlp"] * 19 + ["lstm"] * 6
    bottom = simstudy(*args, "sample_seed=0", "hydra.run.dir=bottom", cwd=tmp_path)
    assert "V: mlp ahead at k = 1..25" in bottom.stdout and "U: mlp ahead at k = 1..25" in bottom.stdout
    first = simstudy(*args, "hydra.run.dir=first", cwd=tmp_path)  # no seed: the first 25 runs, as before
    table = pd.read_csv(tmp_path / "first" / "bands.csv")
    from simstudy import datasets
    from simstudy.stats import estimators

    runs = datasets.reuters_hedwig()
    for model in ("mlp", "lstm"):
        rows = table[table.model == model].sort_values("k")
        np.testing.assert_allclose(rows.v, estimators.expected_max(runs[model][:25], "v"), rtol=1e-6)
        np.testing.assert_allclose(rows.u, estimators.expected_max(runs[model][:25], "u"), rtol=1e-6)
    assert "V: mlp ahead at k = 1..25" in first.stdout
    top_table = pd.read_csv(tmp_path / "top" / "bands.csv")
    sample = datasets.sample_runs(runs, 25, 30)  # the same runs the command analysed
    lstm = top_table[top_table.model == "lstm"].sort_values("k")
    np.testing.assert_allclose(lstm.v, estimators.expected_max(sample["lstm"], "v"), rtol=1e-6)


def test_bands_command_on_a_file_mean_kind(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "s.csv").write_text("score\n" + "\n".join(f"{v:.6f}" for v in rng.beta(8, 2, size=30)) + "\n")
    simstudy("bands", "data=s.csv", "kind=mean", "low=0", "high=1", "method=ks", "hydra.run.dir=out", cwd=tmp_path)
    table = pd.read_csv(tmp_path / "out" / "bands.csv")
    assert (table.kind == "mean").all() and np.isfinite(table.upper).all()


def test_audit_command_writes_a_one_page_summary(tmp_path):
    rng = np.random.default_rng(1)
    (tmp_path / "mine.csv").write_text("score\n" + "\n".join(f"{v:.5f}" for v in rng.beta(6, 2, size=40)) + "\n")
    proc = simstudy("audit", "data=mine.csv", "rounds=200", "bootstrap_rounds=40", "resamples=200",
                    "evp_reps=500", "target_k=5", "hydra.run.dir=out", cwd=tmp_path)
    text = (tmp_path / "out" / "AUDIT.md").read_text()
    assert "covered the whole curve (every k)" in text and "you need n ≥" in text
    assert "| V |" in text and "percentile-bootstrap" in text
    for name in ("fit.png", "coverage.png", "bootstrap.png", "accuracy.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert "covered the whole curve" in proc.stdout


def test_lourie_presets_run_small(tmp_path):
    small = {
        "lourie_fig5_exact_coverage": ["study.reps=64", "study.chunk_reps=64", "study.levels=[0.5,0.8]",
                                       "distribution=kde_reuters"],
        "lourie_fig4_bootstrap_coverage": ["study.reps=16", "study.chunk_reps=16", "study.resamples=100"],
        "lourie_ablations": ["study.reps=16", "study.chunk_reps=16", "distribution=kde_reuters"],
        "lourie_fig9_sample_size": ["study.sample_sizes=[6,12,24]"],
        "lourie_fig1_disagreement": ["study.reps=2000", "study.chunk_reps=1000"],
    }
    for name, overrides in small.items():
        simstudy(f"experiment={name}", "runner.progress=false", *overrides, f"hydra.run.dir={name}", cwd=tmp_path)
        assert (tmp_path / name / "summary.parquet").stat().st_size > 0, name
        assert (tmp_path / name / "figure.png").stat().st_size > 0, name


def test_fiesta_presets_run_small(tmp_path):
    small = {
        "fiesta_fig4": ["study.reps=200", "study.chunk_reps=200", "study.budgets=[48,204]"],
        "fiesta_table2": ["study.reps=20", "study.chunk_reps=20", "study.deltas=[0.2]"],
        "fiesta_table3": ["study.reps=20", "study.chunk_reps=20", "study.deltas=[0.2]"],
    }
    for name, overrides in small.items():
        proc = simstudy(f"experiment={name}", "runner.progress=false", *overrides, f"hydra.run.dir={name}",
                        cwd=tmp_path)
        assert (tmp_path / name / "summary.parquet").stat().st_size > 0, name
        assert (tmp_path / name / "figure.png").stat().st_size > 0, name
    assert "batch_thompson_4" in proc.stdout and "batch_thompson_8" in proc.stdout
    table = pd.read_csv(tmp_path / "fiesta_table2" / "table.csv")
    assert set(table.algorithm) == {"ttts", "non_adaptive"}


def test_bands_cdf_table_has_one_row_per_distinct_score(tmp_path):
    # 12 runs, 5 distinct scores (ties are common: accuracy on a fixed dev set): one row each, with its count
    values = [0.7, 0.7, 0.7, 0.75, 0.8, 0.8, 0.82, 0.82, 0.82, 0.82, 0.9, 0.9]
    (tmp_path / "ties.csv").write_text("score\n" + "\n".join(map(str, values)) + "\n")
    simstudy("bands", "data=ties.csv", "low=0", "high=1", "hydra.run.dir=out", cwd=tmp_path)
    cdf = pd.read_csv(tmp_path / "out" / "cdf_bands.csv")
    assert list(cdf.score) == [0.7, 0.75, 0.8, 0.82, 0.9] and list(cdf["count"]) == [3, 1, 2, 4, 2]
    np.testing.assert_allclose(cdf.ecdf, np.array([3, 4, 6, 10, 12]) / 12)
    assert (cdf.lower <= cdf.ecdf).all() and (cdf.ecdf <= cdf.upper).all()
    assert cdf.lower.is_monotonic_increasing and cdf.upper.is_monotonic_increasing


def test_bands_and_curve_say_where_they_wrote(tmp_path):
    for command in ("bands", "curve"):
        proc = simstudy(command, "data=reuters_hedwig", "low=0", "high=1", "hydra.run.dir=out_" + command,
                        cwd=tmp_path)
        assert f"to {tmp_path / ('out_' + command)}" in proc.stdout, proc.stdout
        assert f"mlp (145 scores), lstm (152 scores) -> {tmp_path / ('out_' + command)}" in proc.stdout
