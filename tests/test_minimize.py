"""``minimize=true`` (issue 25): lower is better. Every result on losses ``1 - a`` with minimize=true is the
mirror of the result on the accuracies ``a``: curves ``1 - c``, a band's edges swapped (``[1 - upper,
1 - lower]``), Monte Carlo numbers alike; except the quantile curves of ``bands``, which take the quantile of the
minimum as opda and the exact truths do (issue 34: the left-continuous inverse, not the mirror of the maximum's
where the probability falls on an atom). ``1 - a`` is not exactly representable, so the comparisons are to
1e-12."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _cli import simstudy

TOL = 1e-12
CSV_TOL = 1e-9  # the CSV files keep 10 significant digits (the parquet files every bit)


@pytest.fixture
def runs(tmp_path, rng):
    """Two models' accuracies (three decimals: ties) and the same runs as losses, ``1 - a``."""
    a = {"mlp": np.round(rng.beta(8, 3, size=30), 3), "lstm": np.round(rng.beta(6, 2, size=24), 3)}
    rows = [(m, v) for m, x in a.items() for v in x]
    pd.DataFrame(rows, columns=["model", "score"]).to_csv(tmp_path / "acc.csv", index=False)
    pd.DataFrame([(m, 1 - v) for m, v in rows], columns=["model", "score"]).to_csv(tmp_path / "loss.csv", index=False)
    return a


def _run(tmp_path, command, data, out, *args):
    return simstudy(command, f"data={data}", f"hydra.run.dir={out}", *args, cwd=tmp_path)


def test_curve_of_losses_is_the_mirror_of_the_curve_of_accuracies(tmp_path, runs):
    acc = _run(tmp_path, "curve", "acc.csv", "acc", "target=0.9")
    loss = _run(tmp_path, "curve", "loss.csv", "loss", "target=0.1", "minimize=true")
    a = pd.read_parquet(tmp_path / "acc" / "curves.parquet")
    m = pd.read_parquet(tmp_path / "loss" / "curves.parquet")
    assert "expected_max" not in m and list(m.model) == list(a.model) and list(m.n) == list(a.n)
    np.testing.assert_allclose(m.expected_min, 1 - a.expected_max, rtol=0, atol=TOL)
    np.testing.assert_allclose(m["std"], a["std"], rtol=0, atol=TOL)
    np.testing.assert_allclose(m.band_low, 1 - a.band_high, rtol=0, atol=TOL)
    np.testing.assert_allclose(m.band_high, 1 - a.band_low, rtol=0, atol=TOL)
    # the budget where the expected minimum loss first falls to 0.1 is where the expected max accuracy reaches 0.9
    ta, tm = pd.read_csv(tmp_path / "acc" / "targets.csv"), pd.read_csv(tmp_path / "loss" / "targets.csv")
    assert list(tm.target) == [0.1, 0.1] and tm.n.tolist() == ta.n.tolist()
    np.testing.assert_allclose(tm.expected_min, 1 - ta.expected_max, rtol=0, atol=CSV_TOL)
    assert "expected min first reaches 0.1 (at or below)" in loss.stdout
    assert "expected max first reaches 0.9 at" in acc.stdout


def _opda_curves(cdf, ks, kind, q):
    """opda's curves of the minimum (``minimize=True``) of the two step CDFs of a CDF band: (lower, upper), the
    lower from the upper CDF band. Its own quantile convention (the left-continuous inverse) on our bands."""
    from opda.nonparametric import EmpiricalDistribution

    points = np.concatenate(([cdf.low], cdf.y, [cdf.high]))
    out = []
    for values in (np.concatenate(([cdf.upper_below], cdf.upper, [1.0])), np.concatenate(([0.0], cdf.lower, [1.0]))):
        dist = EmpiricalDistribution(points, ws=np.diff(values, prepend=0.0), a=cdf.low, b=cdf.high)
        out.append(dist.average_tuning_curve(ks, minimize=True) if kind == "mean"
                   else dist.quantile_tuning_curve(ks, q, minimize=True))
    return out


@pytest.mark.parametrize(
    "kind, q, extra",
    [("median", 0.5, ()), ("quantile", 0.8, ("method=ks",)), ("mean", 0.5, ("method=ld_equal_tailed",))],
)
@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_bands_of_losses_are_opdas_curves_of_the_minimum(tmp_path, runs, kind, q, extra):
    """Issue 34: one convention. The bands of the minimum are the curves of the CDF bands of the losses in opda's
    convention (the left-continuous inverse of the minimum's CDF), not the mirror of the bands of the
    accuracies: on these scores with ties the two differ where the probability falls on a jump (the median of
    one at k = 1: 12/24, 15/30). The CDF bands, U and V still mirror."""
    pytest.importorskip("opda")
    from opda.nonparametric import EmpiricalDistribution

    from simstudy.stats import bands

    common = ("low=0", "high=1", "confidence=0.7", "max_k=40", f"kind={kind}", *extra)
    _run(tmp_path, "bands", "acc.csv", "acc", *common, f"quantile={1 - q}")
    loss = _run(tmp_path, "bands", "loss.csv", "loss", *common, f"quantile={q}", "minimize=true")
    a = pd.read_parquet(tmp_path / "acc" / "bands.parquet")
    m = pd.read_parquet(tmp_path / "loss" / "bands.parquet")
    assert list(m.model) == list(a.model) and list(m.k) == list(a.k)
    method = extra[0][7:] if extra else "ld_highest_density"
    losses = pd.read_csv(tmp_path / "loss.csv")
    for model in runs:
        x = losses[losses.model == model].score.to_numpy()
        mine = m[m.model == model]
        ks = mine.k.to_numpy()
        with warnings.catch_warnings():  # the ties' warning: the command logs it
            warnings.simplefilter("ignore")
            cdf = bands.cdf_bands(x, 0.7, method, low=0, high=1)
        lower, upper = _opda_curves(cdf, ks, kind, q)
        point = EmpiricalDistribution(x).average_tuning_curve(ks, minimize=True) if kind == "mean" \
            else EmpiricalDistribution(x).quantile_tuning_curve(ks, q, minimize=True)
        tol = TOL if kind == "mean" else 0
        np.testing.assert_allclose(mine.point, point, rtol=0, atol=tol, err_msg=model)
        np.testing.assert_allclose(mine.lower, lower, rtol=0, atol=tol, err_msg=model)
        np.testing.assert_allclose(mine.upper, upper, rtol=0, atol=tol, err_msg=model)
    if kind == "median":  # at k = 1 the median falls on the jump at the middle: the lower of the two middle losses
        first = m[m.k == 1].set_index("model").point
        mirrored = 1 - a[a.k == 1].set_index("model").point
        for model, x in runs.items():
            middle = np.sort(1 - x)[x.size // 2 - 1 : x.size // 2 + 1]
            assert first[model] == pytest.approx(middle[0], abs=TOL) and mirrored[model] == pytest.approx(middle[1])
    for col in ("u", "v"):
        np.testing.assert_allclose(m[col], 1 - a[col], rtol=0, atol=TOL, err_msg=col)
    assert (m.lower <= m.point).all() and (m.point <= m.upper).all()
    if kind == "quantile":
        assert set(m["quantile"]) == {q}
    # the CDF of the losses: P(L <= 1 - a) = 1 - P(A < a), the band of A just below a (its previous score)
    ca = pd.read_csv(tmp_path / "acc" / "cdf_bands.csv")
    cm = pd.read_csv(tmp_path / "loss" / "cdf_bands.csv")
    for model, x in runs.items():
        mine = cm[cm.model == model].reset_index(drop=True)
        theirs = ca[ca.model == model].iloc[::-1].reset_index(drop=True)
        np.testing.assert_allclose(mine.score, 1 - theirs.score, rtol=0, atol=CSV_TOL)
        assert mine["count"].tolist() == theirs["count"].tolist()
        below = theirs.shift(-1)  # the previous distinct accuracy (none below the smallest)
        with warnings.catch_warnings():  # the ties' warning: the command logs it
            warnings.simplefilter("ignore")
            upper_below = bands.cdf_bands(x, 0.7, method, low=0, high=1)
        np.testing.assert_allclose(mine.ecdf, 1 - below.ecdf.fillna(0), rtol=0, atol=CSV_TOL)
        np.testing.assert_allclose(mine.lower, 1 - below.upper.fillna(upper_below.upper_below), rtol=0, atol=CSV_TOL)
        np.testing.assert_allclose(mine.upper, 1 - below.lower.fillna(0), rtol=0, atol=CSV_TOL)
        assert mine.ecdf.iloc[-1] == 1 and mine.upper.iloc[-1] == 1
    # "A beats B" is about the better model: on losses the model whose curve is lower is ahead
    em = pd.read_csv(tmp_path / "loss" / "evidence.csv")
    mlp, lstm = (m[m.model == name].point.to_numpy() for name in ("mlp", "lstm"))
    assert em.leader.tolist() == np.where(mlp < lstm, "mlp", np.where(lstm < mlp, "lstm", "tie")).tolist()
    assert any(" ahead " in line or " is better" in line for line in loss.stdout.splitlines())


def _negated(tmp_path, runs):
    """The same runs as ``-a`` (exact: negation rounds nothing), for the commands whose random streams are keyed
    by the scores analysed: with minimize=true they analyse ``a`` itself, so every number mirrors bit for bit."""
    rows = [(m, -v) for m, x in runs.items() for v in x]
    pd.DataFrame(rows, columns=["model", "score"]).to_csv(tmp_path / "neg.csv", index=False)


def _mirrors(mine, theirs, negated=(), swapped=(), same=()):
    for c in negated:
        np.testing.assert_array_equal(mine[c], -theirs[c], err_msg=c)
    for lo, hi in swapped:
        np.testing.assert_array_equal(mine[lo], -theirs[hi], err_msg=lo)
        np.testing.assert_array_equal(mine[hi], -theirs[lo], err_msg=hi)
    for c in same:
        pd.testing.assert_series_equal(mine[c], theirs[c], check_names=False)


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_extrapolate_on_losses_is_the_mirror_and_fits_the_convex_law(tmp_path, runs):
    _negated(tmp_path, runs)
    common = ("c=3", "n_boot=4", "mean=false", "n_jobs=1", "sample_size=20", "k_max=300")
    acc = _run(tmp_path, "extrapolate", "acc.csv", "acc", "low=0", "high=1", "threshold_score=0.7", *common)
    neg = _run(tmp_path, "extrapolate", "neg.csv", "neg", "low=-1", "high=0", "threshold_score=-0.7",
               "minimize=true", *common)
    read = {d: {f: pd.read_csv(tmp_path / d / f"{f}.csv") for f in ("extrapolation", "fit", "simulation")}
            for d in ("acc", "neg")}
    a, m = read["acc"], read["neg"]
    _mirrors(m["extrapolation"], a["extrapolation"], negated=("estimate", "np_point", "all_point"),
             swapped=(("lower", "upper"), ("np_lower", "np_upper")),
             same=("model", "runs", "k", "region", "inside_np", "band_inside_np", "covers_all"))
    fa, fm = a["fit"], m["fit"]
    # the law of -x, concave(a, b, c, o), is convex(-b, -a, c, o) for x: its a is the best (lowest) score possible
    assert fm.convex.all() and "convex" not in fa and "max_score" not in fm
    for mine, theirs in (("a", "b"), ("b", "a"), ("threshold", "threshold"), ("min_score", "max_score")):
        np.testing.assert_array_equal(fm[mine], -fa[theirs], err_msg=mine)
    for mine, theirs in (("a_lower", "b_upper"), ("a_upper", "b_lower"), ("b_lower", "a_upper"), ("b_upper", "a_lower")):
        np.testing.assert_array_equal(fm[mine], -fa[theirs], err_msg=mine)
    _mirrors(fm, fa, same=("c", "o", "o_lower", "o_upper", "n_tail", "c_share_3", "n_boot", "failed"))
    assert list(fm.rule) == ["score -0.7"] * len(fm) and list(fa.rule) == ["score 0.7"] * len(fa)
    _mirrors(m["simulation"], a["simulation"], negated=("true", "gain"),
             same=("k", "mean_abs_rel_error", "bias_rel", "p90_abs_rel_error", "mean_abs_error", "replicates"))
    page = (tmp_path / "neg" / "EXTRAPOLATE.md").read_text()
    assert "**a, the best score possible: " in page and "scores at or above -0.7 censored" in page
    assert "a is the best of the noise-free law" in page and "scores below it fitted" in page
    assert "mlp (20 runs): a = " in neg.stdout and "mlp (20 runs): b = " in acc.stdout


def _evp(tmp_path, out, dist, reps=4000, save=False):
    from simstudy import config
    from simstudy.studies import evp_accuracy

    cfg = config.parse({
        "seed": 5,
        "distribution": dist,
        "budget": {"B": 12, "n": None},
        "estimators": {m: {"method": m} for m in "uv"},
        "study": {"name": out, "kind": "evp_accuracy", "reps": reps, "chunk_reps": reps, "save_replicates": save},
        "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    })
    return evp_accuracy.run(cfg, tmp_path / out).summary.set_index(["estimator", "n", "measure"])["estimate"], cfg


def test_a_named_stream_makes_a_study_of_losses_the_mirror_draw_for_draw(tmp_path, runs):
    """distribution.stream=NAME keys the random streams by the name, not the file's content: the study of losses
    1 - a (minimize) then draws a - 1 wherever the study of a draws a, and every number mirrors to rounding;
    the files still join the run's fingerprint (another file in the same directory is refused)."""
    acc_d = {"kind": "file", "path": str(tmp_path / "acc.csv"), "model": "mlp", "stream": "s"}
    loss_d = {"kind": "file", "path": str(tmp_path / "loss.csv"), "model": "mlp", "minimize": True, "stream": "s"}
    (acc, acc_cfg), (loss, loss_cfg) = _evp(tmp_path, "acc", acc_d, reps=500), _evp(tmp_path, "loss", loss_d, reps=500)
    assert acc_cfg.distributions[0].key == loss_cfg.distributions[0].key  # the same cells and streams
    assert acc_cfg.distributions[0].identity != loss_cfg.distributions[0].identity  # not the same data
    how = acc.index.get_level_values("measure").map(
        {"mean": "level", "exact_mean": "level", "expected_max": "level", "bias": "sign", "exact_bias": "sign"}
    )
    a = acc.to_numpy()
    expected = np.select([how == "level", how == "sign"], [1 - a, -a], a)
    np.testing.assert_allclose(loss.to_numpy(), expected, rtol=0, atol=1e-12)
    assert not np.allclose(acc.xs("mean", level="measure"), 1 - acc.xs("mean", level="measure"))  # not trivial


@pytest.mark.parametrize("kind", ["file", "scipy"])
def test_a_study_of_a_minimize_distribution_concerns_the_minimum(tmp_path, runs, kind):
    if kind == "file":
        acc_d = {"kind": "file", "path": str(tmp_path / "acc.csv"), "model": "mlp"}
        loss_d = {"kind": "file", "path": str(tmp_path / "loss.csv"), "model": "mlp", "minimize": True}
    else:  # 1 - Beta(8, 3) is Beta(3, 8)
        acc_d = {"kind": "scipy", "name": "beta", "params": {"a": 8, "b": 3}}
        loss_d = {"kind": "scipy", "name": "beta", "params": {"a": 3, "b": 8}, "minimize": True}
    acc, acc_cfg = _evp(tmp_path, "acc", acc_d)
    loss, loss_cfg = _evp(tmp_path, "loss", loss_d, save=True)
    assert loss_cfg.distributions[0].minimize and not acc_cfg.distributions[0].minimize
    assert dict(loss_cfg.distributions[0].params)["minimize"] is True and "minimize" not in dict(
        acc_cfg.distributions[0].params
    )
    # exact: the truth is the expected minimum, 1 - the expected maximum of the accuracies; biases change sign
    truth_acc, truth_loss = acc.loc["truth"], loss.loc["truth"]
    np.testing.assert_allclose(truth_loss, 1 - truth_acc, rtol=0, atol=1e-9 if kind == "scipy" else TOL)
    assert truth_loss.is_monotonic_decreasing and (np.diff(truth_loss) < 0).all()  # more trials, a lower minimum
    for e in "uv":
        ea, el = acc.loc[e], loss.loc[e]
        np.testing.assert_allclose(el.xs("exact_mean", level="measure"), 1 - ea.xs("exact_mean", level="measure"),
                                   rtol=0, atol=1e-9 if kind == "scipy" else TOL)
        np.testing.assert_allclose(el.xs("exact_bias", level="measure"), -ea.xs("exact_bias", level="measure"),
                                   rtol=0, atol=1e-9 if kind == "scipy" else TOL)
    # Monte Carlo: the mean of the estimates is within a few MCSE of its exact value, on the minimum's scale
    s = pd.read_csv(tmp_path / "loss" / "summary.csv")
    for e in "uv":
        mean = s[(s.estimator == e) & (s.measure == "mean")].set_index("n")
        exact = s[(s.estimator == e) & (s.measure == "exact_mean")].set_index("n")
        z = (mean.estimate - exact.estimate) / mean.mcse
        assert (z.abs() < 4.5).all(), z
        assert (mean.estimate < 0.5).all()  # losses of about 0.27, not minus them
    # the replicates are estimates of the minimum too: their average is the summary's mean
    reps = pd.read_parquet(tmp_path / "loss" / "replicates.parquet").groupby(["estimator", "n"]).estimate.mean()
    for e in "uv":
        np.testing.assert_allclose(reps.loc[e], loss.loc[e].xs("mean", level="measure"), rtol=0, atol=TOL)


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_audit_of_losses_simulates_the_minimum(tmp_path, runs):
    small = ("model=mlp", "rounds=64", "bootstrap_rounds=8", "resamples=50", "evp_reps=400", "target_k=3",
             "bandwidth=0.03", "n_jobs=1")
    acc = _run(tmp_path, "audit", "acc.csv", "acc", *small)
    loss = _run(tmp_path, "audit", "loss.csv", "loss", *small, "minimize=true")
    # The KDE of -(1 - a) = a - 1 is that of a shifted (same bandwidth, atoms, reflections), and the audit's
    # streams do not depend on the data: every simulated score of the loss audit is a draw of the accuracy audit
    # minus 1, so every number mirrors to rounding -- levels 1 - x, biases -x, spreads, rates and MCSEs equal.
    mirrored = {"expected_max": "level", "exact_mean": "level", "mean": "level", "exact_bias": "sign", "bias": "sign"}
    for study in ("accuracy", "coverage", "bootstrap"):
        a, m = (pd.read_csv(tmp_path / d / study / "summary.csv") for d in ("acc", "loss"))
        assert len(a) == len(m) > 0 and a["reps"].tolist() == m["reps"].tolist()
        how = a["measure"].map(mirrored).fillna("same") if "measure" in a else pd.Series("same", index=a.index)
        expected = np.select([how == "level", how == "sign"], [1 - a.estimate, -a.estimate], a.estimate)
        np.testing.assert_allclose(m.estimate, expected, rtol=0, atol=1e-12, err_msg=study)
        np.testing.assert_allclose(m.mcse, a.mcse, rtol=0, atol=1e-10, err_msg=study)
    s = pd.read_csv(tmp_path / "acc" / "accuracy" / "summary.csv")
    mean = s[s.measure == "mean"].set_index(["estimator", "n"])
    exact = s[s.measure == "exact_mean"].set_index(["estimator", "n"])
    assert ((mean.estimate - exact.estimate).abs() < 4.5 * mean.mcse).all()
    text = (tmp_path / "loss" / "AUDIT.md").read_text()
    assert "median tuning curve (of the minimum: lower is better) covered" in text
    assert "the lower band is informative" in text and "it is the bound 0)" in text
    assert "the upper band is informative" in (tmp_path / "acc" / "AUDIT.md").read_text()
    assert "covered the whole curve" in loss.stdout and "covered the whole curve" in acc.stdout


def _pair(tmp_path, which, minimize=(False, False)):
    return {m: {"kind": "file", "path": str(tmp_path / f"{which}.csv"), "model": m, "minimize": z}
            for m, z in zip(("mlp", "lstm"), minimize)}


def _study(tmp_path, out, dist, kind="wrong_conclusions", reps=2000, **options):
    from simstudy import config, registry

    cfg = config.parse({
        "seed": 9,
        "distribution": dist,
        "budget": {"B": [3, 10], "n": None},
        "estimators": {m: {"method": m} for m in "uv"},
        "study": {"name": out, "kind": kind, "reps": reps, "chunk_reps": reps, **options},
        "runner": {"n_jobs": 1, "backend": "sequential", "progress": False},
    })
    summary = registry.study(kind).run(cfg, tmp_path / out).summary
    return summary.set_index(["B", "estimator", "measure"]) if kind == "wrong_conclusions" else summary


def test_wrong_conclusions_on_losses_say_lower_is_better(tmp_path, runs):
    acc = _study(tmp_path, "acc", _pair(tmp_path, "acc"))
    loss = _study(tmp_path, "loss", _pair(tmp_path, "loss", (True, True)))
    truth_a, truth_l = acc.xs("truth", level="estimator").estimate, loss.xs("truth", level="estimator").estimate
    for side in ("a", "b"):  # the expected minimum of each model's losses, named so (issue 34)
        np.testing.assert_allclose(truth_l.xs(f"expected_min_{side}", level="measure"),
                                   1 - truth_a.xs(f"expected_max_{side}", level="measure"), rtol=0, atol=TOL)
    assert not loss.index.get_level_values("measure").str.startswith("expected_max").any()
    np.testing.assert_allclose(truth_l.xs("true_gap", level="measure"), -truth_a.xs("true_gap", level="measure"),
                               rtol=0, atol=TOL)
    # the model that is better on accuracy is better on loss: the rates agree within their Monte Carlo error
    for measure in ("wrong_rate", "a_wins_rate", "tie_rate"):
        a, m = acc.xs(measure, level="measure"), loss.xs(measure, level="measure")
        z = (m.estimate - a.estimate) / np.sqrt(m.mcse**2 + a.mcse**2).clip(lower=1e-12)
        assert (z.abs() < 4.5).all(), (measure, z)
    a, m = acc.xs("mean_gap", level="measure"), loss.xs("mean_gap", level="measure")
    assert ((m.estimate + a.estimate).abs() < 4.5 * np.hypot(m.mcse, a.mcse)).all()


def test_a_study_names_the_expected_minimum_of_a_minimize_distribution_by_what_it_is(tmp_path, runs):
    """Issue 34: a minimize: true distribution's truth is the expected minimum, so its measure is expected_min in
    summary.parquet (and so on report.html, which shows the measures); a maximized distribution of the same
    study keeps expected_max."""
    dist = {m: {**d, "minimize": m == "mlp"} for m, d in _pair(tmp_path, "loss").items()}
    summary = _study(tmp_path, "named", dist, kind="evp_accuracy", reps=20)
    written = pd.read_parquet(tmp_path / "named" / "summary.parquet")
    for frame in (summary, written):
        truth = frame[frame.estimator == "truth"]
        assert set(truth[truth.distribution == "mlp"].measure) == {"expected_min"}
        assert set(truth[truth.distribution == "lstm"].measure) == {"expected_max"}
        # the expected minimum falls with n, and is an average of losses (about 0.27), not minus one
        for _, cell in truth[truth.distribution == "mlp"].groupby("cell"):
            mins = cell.sort_values("n").estimate
            assert (np.diff(mins) < 0).all() and (mins > 0).all()


@pytest.mark.parametrize("measure, label", [("expected_min", "true expected minimum (exact)"),
                                            ("expected_max", "true EVP (exact)")])
def test_the_evp_figure_names_the_truth_by_its_measure(measure, label):
    import matplotlib.pyplot as plt

    from simstudy.studies.evp_accuracy import evp_accuracy_figure

    rows = [("truth", measure, n, 0.5 - 0.1 * n) for n in (1, 2, 3)]
    rows += [("u", m, n, 0.5 - 0.1 * n) for m in ("mean", "variance", "mse") for n in (1, 2, 3)]
    summary = pd.DataFrame(rows, columns=["estimator", "measure", "n", "estimate"])
    summary = summary.assign(cell="losses, B = 5", distribution="losses", B=5, mcse=0.01, reps=100)
    fig = evp_accuracy_figure(summary)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    title = fig.get_suptitle()
    plt.close(fig)
    assert label in labels and len(fig.axes[0].get_lines()[0].get_xdata()) == 3
    best = "minimum" if measure == "expected_min" else "maximum"
    assert f"each estimator of the expected {best} of n scores" in title.replace("\n", " ")


def test_minimize_is_refused_where_a_study_would_report_minus_x(tmp_path, runs):
    from simstudy import config

    with pytest.raises(config.ConfigError, match=r"^distribution.lstm.minimize=false but distribution.mlp.minimize=true: "
                       r"the models a wrong_conclusions study compares must agree on whether lower is better$"):
        _study(tmp_path, "mixed", _pair(tmp_path, "loss", (True, False)))
    with pytest.raises(config.ConfigError, match=r"study.quantile=0.9 with distribution.minimize=true: a band_coverage"):
        _study(tmp_path, "q", {"kind": "scipy", "name": "beta", "params": {"a": 3, "b": 8}, "minimize": True},
               kind="band_coverage", reps=10, quantile=0.9)
    _pair_both = _pair(tmp_path, "loss", (True, False))  # separate cells: each distribution its own question
    _study(tmp_path, "cells", _pair_both, kind="evp_accuracy", reps=10)
    with pytest.raises(config.ConfigError, match=r"distribution.minimize must be"):
        _study(tmp_path, "bad", {**_pair(tmp_path, "loss")["mlp"], "minimize": "yes"}, kind="evp_accuracy")
    with pytest.raises(config.ConfigError, match=r"a band_width study does not report the minimum yet"):
        _study(tmp_path, "width", {"kind": "scipy", "name": "beta", "params": {"a": 3, "b": 8}, "minimize": True},
               kind="band_width")


@pytest.mark.slow  # a whole command run in-process, seconds: CI's slow lane
def test_the_bands_figure_of_losses_marks_the_lower_band_trivial_from_a_budget_on(tmp_path, runs):
    import matplotlib.pyplot as plt

    from simstudy.charts import to_matplotlib
    from simstudy.commands.bands import tuning_curve_chart

    common = ("low=0", "high=1", "confidence=0.8", "max_k=60", "models=[mlp]")
    _run(tmp_path, "bands", "acc.csv", "acc", *common)
    _run(tmp_path, "bands", "loss.csv", "loss", *common, "minimize=true")
    labels = {}
    for d, minimize in (("acc", False), ("loss", True)):
        fig = to_matplotlib(tuning_curve_chart(pd.read_parquet(tmp_path / d / "bands.parquet"), low=0, high=1,
                                               minimize=minimize))
        labels[d] = [t.get_text() for legend in fig.legends + [a.get_legend() for a in fig.axes if a.get_legend()]
                     for t in legend.get_texts() if "trivial" in t.get_text()]
        plt.close(fig)
    (acc,) = [t for t in labels["acc"] if "upper band" in t]
    k = acc.rsplit(" ", 1)[1]
    assert acc == f"mlp: upper band trivial (= 1) for k ≥ {k}"
    assert f"mlp: lower band trivial (= 0) for k ≥ {k}" in labels["loss"]
    assert not any("upper band" in t and "≥" in t for t in labels["loss"])


def test_extrapolate_fit_of_one_minus_accuracy_is_the_mirror(tmp_path, runs):
    """On ``1 - a`` the bootstrap's streams differ (they are keyed by the scores), but the fit, its curves and
    the nonparametric band are the mirror of those on ``a`` to rounding."""
    from simstudy import extrapolation
    from simstudy.commands import extrapolate

    settings = {"data": "x.csv", "c": [2, 3], "n_boot": 2, "mean": False, "n_jobs": 1, "low": 0, "high": 1,
                "k_max": 300, "threshold": 0.4}
    a = {m: x for m, x in runs.items()}
    results = {}
    for name, scores, minimize in (("acc", a, False), ("loss", {m: 1 - x for m, x in a.items()}, True)):
        opts = extrapolate.parse({**settings, "minimize": minimize})
        results[name] = extrapolation.run(extrapolation.prepare(scores, opts, "x"), opts, tmp_path / name, progress=False)
    fa, fm = results["acc"].fits, results["loss"].fits
    assert fm.c.tolist() == fa.c.tolist() and fm.n_tail.tolist() == fa.n_tail.tolist()
    for mine, theirs in (("a", "b"), ("b", "a"), ("threshold", "threshold"), ("min_score", "max_score")):
        np.testing.assert_allclose(fm[mine], 1 - fa[theirs], rtol=0, atol=TOL, err_msg=mine)
    np.testing.assert_allclose(fm.o, fa.o, rtol=0, atol=TOL)
    ca, cm = results["acc"].curves, results["loss"].curves
    for mine, theirs in (("estimate", "estimate"), ("np_point", "np_point"), ("np_lower", "np_upper"),
                         ("np_upper", "np_lower")):
        np.testing.assert_allclose(cm[mine], 1 - ca[theirs], rtol=0, atol=TOL, err_msg=mine)


@pytest.mark.parametrize(
    "kind, options, measures",
    [
        ("sample_disagreement", {"sample_sizes": [6, 12]}, ("p_overtakes", "p_disagree")),
        ("model_selection", {"budgets": [12, 24]}, ("p_correct",)),
    ],
)
def test_comparisons_of_losses_pick_the_lower(tmp_path, runs, kind, options, measures):
    """Which model is better, or overtakes, is the same question on accuracies and on losses with minimize:
    the rates agree within their Monte Carlo error (the random streams differ: they are keyed by the files)."""
    acc = _study(tmp_path, "acc", _pair(tmp_path, "acc"), kind=kind, reps=3000, **options)
    loss = _study(tmp_path, "loss", _pair(tmp_path, "loss", (True, True)), kind=kind, reps=3000, **options)
    for measure in measures:
        a = acc[acc.measure == measure].reset_index(drop=True)
        m = loss[loss.measure == measure].reset_index(drop=True)
        assert len(a) == len(m) > 0
        z = (m.estimate - a.estimate) / np.hypot(m.mcse, a.mcse).clip(lower=1e-3)
        assert (z.abs() < 4.5).all(), (measure, z.tolist())
        assert (a.estimate > 0.05).any()  # not a vacuous comparison


@pytest.mark.parametrize("command", ["curve", "bands", "audit", "extrapolate"])
def test_minimize_is_a_documented_key_of_every_data_command_and_checked_before_any_compute(tmp_path, runs, command):
    from _cli import one_line_error

    helped = simstudy(command, "--help", cwd=tmp_path).stdout
    assert "minimize" in helped and "lower scores are better" in helped
    proc = simstudy(command, "data=loss.csv", "minimize=maybe", "hydra.run.dir=bad", cwd=tmp_path, check=False)
    one_line_error(proc, "minimize must be true or false, got 'maybe'")
    assert not (tmp_path / "bad").exists()
