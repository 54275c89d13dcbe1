"""Joint (sup-t) Monte Carlo bands of the evp_accuracy study: simultaneous coverage against exact curves, the
summary's columns, and run directories whose chunks predate the band."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from simstudy import config
from simstudy.engine.chunks import ChunkStore
from simstudy.engine.runner import Task
from simstudy.stats import estimators, metrics, truth
from simstudy.stats.metrics import clopper_pearson
from simstudy.studies import evp_accuracy

VALUES = [0.5, 0.7, 0.8]
B = 10


def make_config(reps=200, chunk_reps=200, seed=0, B=B, n=None):
    return config.parse({
        "seed": seed,
        "distribution": {"kind": "bag", "values": VALUES},
        "budget": {"B": B, "n": n},
        "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
        "study": {"name": "joint", "kind": "evp_accuracy", "reps": reps, "chunk_reps": chunk_reps,
                  "save_replicates": False},
        "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    })


def exact_moments(method, n):
    """Exact bias, variance and MSE of an estimator at budgets n, by enumerating all 3^B equally likely samples."""
    x = np.sort(np.array(list(itertools.product(VALUES, repeat=B))), axis=1)  # (4^B, B)
    est = x @ estimators.weights(B, method, n).T  # (4^B, N)
    theta = truth.expected_max(make_config().distributions[0].build(), n)
    mean = est.mean(axis=0)
    return mean - theta, est.var(axis=0), ((est - theta) ** 2).mean(axis=0)


def one_cell(cfg):
    """The study's cell for the config (as run() makes it), keyed "c"."""
    dist = cfg.distributions[0]
    n = np.asarray(cfg.budget.n_for(B), dtype=np.int64)
    return evp_accuracy._Cell("c", dist.name, B, n, truth.expected_max(dist.build(), n),
                              evp_accuracy._stacked_weights(B, n, cfg.estimators))


def one_run(cfg, seed):
    """What run() computes for one cell with seed ``seed``, without its files: the chunk, the measures, the bands."""
    dist = cfg.distributions[0]
    built = {dist.name: dist.build()}
    cell = one_cell(cfg)
    work = evp_accuracy._Work(seed, built, {"c": cell}, cfg.estimators, False)
    arrays = evp_accuracy._run_chunk(work, Task("c", 0, cfg.study.reps, 0))
    perf = metrics.performance(arrays["gram"], cell.truth)
    return perf, evp_accuracy._joint_bands(perf, arrays["cross_gram"])


@pytest.mark.slow
def test_joint_bands_cover_the_exact_curves_simultaneously():
    """Over 400 runs with distinct seeds (B = 10, n = 1..10, 1,000 replicates each, about 8 s):

    - the 95% joint band of U's and V's bias contains the whole exact bias curve in 95% of runs (inside a 99.9%
      Clopper-Pearson interval), while the pointwise ±1.96 MCSE intervals contain it clearly less often;
    - the bands of the variance and the MSE (exact by enumeration) too, within the normal approximation's
      small-sample shortfall for second moments (their pointwise intervals fall short alike): at least 90%,
      and more often than the pointwise intervals.
    """
    cfg = make_config(reps=1000, chunk_reps=1000)
    n = np.arange(1, B + 1)
    exact = {e: dict(zip(("bias", "variance", "mse"), exact_moments(m, n))) for e, m in enumerate("uv")}
    for e, m in enumerate("uv"):  # the enumeration agrees with the study's exact bias
        rows = evp_accuracy._exact_rows(cfg.distributions[0].build(), one_cell(cfg), cfg.estimators)
        want = [r["estimate"] for r in rows if r["estimator"] == m and r["measure"] == "exact_bias"]
        np.testing.assert_allclose(want, exact[e]["bias"], atol=1e-12)
    runs = 400
    keys = list(itertools.product(("bias", "variance", "mse"), (0, 1)))
    joint_hits, pointwise_hits = dict.fromkeys(keys, 0), dict.fromkeys(keys, 0)
    for seed in range(runs):
        perf, bands = one_run(cfg, 1000 + seed)
        for measure, e in keys:
            want, band = exact[e][measure], bands[(measure, e)]
            joint_hits[(measure, e)] += bool(np.all((band.lower <= want) & (want <= band.upper)))
            est, se = perf.measures[measure]
            pointwise_hits[(measure, e)] += bool(np.all(np.abs(est[e] - want) <= 1.96 * se[e]))
    coverage = {k: (joint_hits[k] / runs, pointwise_hits[k] / runs) for k in keys}  # (joint, pointwise)
    for e in (0, 1):
        low, high = clopper_pearson(joint_hits[("bias", e)], runs, 0.999)
        assert low <= 0.95 <= high, coverage
    assert clopper_pearson(pointwise_hits[("bias", 0)], runs, 0.999)[1] < 0.92, coverage
    for key in keys:
        assert joint_hits[key] > pointwise_hits[key] + 10, coverage
        assert clopper_pearson(joint_hits[key], runs, 0.999)[1] >= 0.95 and joint_hits[key] >= 0.9 * runs, coverage


def test_joint_band_of_a_run_covers_the_exact_bias_and_contains_the_pointwise_band(tmp_path):
    result = evp_accuracy.run(make_config(), tmp_path)
    s = result.summary
    assert list(s.columns)[-2:] == ["lower_joint", "upper_joint"]
    mc = s[s.measure.isin(["mean", "bias", "variance", "empse", "mse"]) & s.estimator.isin(["u", "v"])]
    assert mc[["lower_joint", "upper_joint"]].notna().all().all()
    half = (mc.upper_joint - mc.estimate) / mc.mcse
    np.testing.assert_allclose(mc.estimate - mc.lower_joint, mc.upper_joint - mc.estimate, rtol=1e-9)
    assert (half > 1.96).all() and (half < 3.0).all()  # between the pointwise and Šidák's 6-point value 2.63
    assert s[~s.index.isin(mc.index)][["lower_joint", "upper_joint"]].isna().all().all()
    for est in ("u", "v"):
        exact = s[(s.estimator == est) & (s.measure == "exact_bias")].sort_values("n").estimate.to_numpy()
        band = s[(s.estimator == est) & (s.measure == "bias")].sort_values("n")
        assert np.all((band.lower_joint.to_numpy() <= exact) & (exact <= band.upper_joint.to_numpy()))
    meta = json.loads((tmp_path / "run.json").read_text())
    assert "joint" in json.dumps(meta) and "0.95" in json.dumps(meta)


def test_one_budget_gives_the_pointwise_band(tmp_path):
    s = evp_accuracy.run(make_config(n=[3]), tmp_path).summary
    mc = s[(s.measure == "bias") & (s.estimator == "v")]
    assert float(mc.upper_joint.iloc[0]) == pytest.approx(float(mc.estimate.iloc[0] + 1.959963984540054 * mc.mcse.iloc[0]),
                                                          rel=1e-12)


def _strip_cross(run_dir):
    """Rewrite every chunk of a run directory as the version before the band wrote it: without cross_gram."""
    for path in run_dir.glob("chunks/*/cell-*/chunk-*.npz"):
        fingerprint, cell = path.parent.parent.name, path.parent.name.removeprefix("cell-")
        chunk, reps = path.stem.removeprefix("chunk-").split("-r")
        store = ChunkStore(run_dir / "chunks", fingerprint)
        arrays = store.read(cell, int(chunk), int(reps))
        del arrays["cross_gram"]
        store.write(cell, int(chunk), int(reps), arrays)


def test_old_chunks_without_the_cross_moments_resume_with_nan_bands(tmp_path, caplog):
    cfg = make_config(reps=300, chunk_reps=100)
    fresh = evp_accuracy.run(cfg, tmp_path / "fresh").summary
    old = tmp_path / "old"
    evp_accuracy.run(cfg, old)
    _strip_cross(old)
    (old / "summary.parquet").unlink()
    again = evp_accuracy.run(cfg, old)
    assert again.report.resumed == 3 and again.report.computed == 0
    s = again.summary
    columns = [c for c in s.columns if c not in ("lower_joint", "upper_joint")]
    pd.testing.assert_frame_equal(s[columns], fresh[columns])  # the old columns: bit for bit
    assert list(s.columns) == list(fresh.columns) and s[["lower_joint", "upper_joint"]].isna().all().all()
    assert "lower_joint/upper_joint are NaN" in caplog.text
    assert "lower_joint/upper_joint are NaN" in (old / "run.json").read_text()
    # One chunk recomputed (now with cross_gram) beside two old ones: still NaN, never a band from a subset.
    next(old.glob("chunks/*/cell-*/chunk-000001-*.npz")).unlink()
    mixed = evp_accuracy.run(cfg, old)
    assert mixed.report.computed == 1
    pd.testing.assert_frame_equal(mixed.summary, s)


def test_minimize_negates_and_swaps_the_band_of_signed_measures(tmp_path):
    plain = evp_accuracy.run(make_config(), tmp_path / "plain").summary
    mirrored_values = [-v for v in VALUES]
    cfg = config.parse({
        "seed": 0, "distribution": {"kind": "bag", "values": mirrored_values, "minimize": True},
        "budget": {"B": B, "n": None}, "estimators": {"u": {"method": "u"}, "v": {"method": "v"}},
        "study": {"name": "joint", "kind": "evp_accuracy", "reps": 200, "chunk_reps": 200, "save_replicates": False},
        "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    })
    mirrored = evp_accuracy.run(cfg, tmp_path / "mirrored").summary
    for frame in (plain, mirrored):
        rows = frame[frame.measure.isin(["bias", "mse"]) & frame.estimator.isin(["u", "v"])]
        assert (rows.lower_joint <= rows.estimate).all() and (rows.estimate <= rows.upper_joint).all()


def test_the_correlation_comes_from_the_cells_first_1024_replicates(tmp_path):
    cfg = make_config(reps=1500, chunk_reps=500)
    result = evp_accuracy.run(cfg, tmp_path)
    files = sorted(tmp_path.glob("chunks/*/cell-*/chunk-*.npz"))
    held = [int(np.load(f)["cross_gram"][0, 0, 0]) if "cross_gram" in np.load(f).files else 0 for f in files]
    assert held == [500, 500, 24]  # replicates 0..1023: the third chunk's first 24
    s = result.summary
    assert s[(s.measure == "bias") & (s.estimator == "v")][["lower_joint", "upper_joint"]].notna().all().all()


def test_the_figure_says_which_band_it_shades(tmp_path):
    import matplotlib.pyplot as plt

    def legend(fig):
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
        return [t.get_text().replace("\n", " ") for leg in legends for t in leg.get_texts()]

    s = evp_accuracy.run(make_config(), tmp_path).summary
    fig = evp_accuracy.evp_accuracy_figure(s)
    assert "shaded: 95% simultaneous (sup-t) Monte Carlo band over n" in legend(fig)
    plt.close(fig)
    fig = evp_accuracy.evp_accuracy_figure(s.drop(columns=["lower_joint", "upper_joint"]))  # an older summary
    assert "95% Monte Carlo interval (±1.96 MCSE), pointwise" in legend(fig)
    plt.close(fig)
