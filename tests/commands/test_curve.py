"""simstudy.commands.curve from Python: the numbers of the kernels, the files and lines of the command, and bad
values refused at parse time in one line naming the key (no command line needed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simstudy import tables
from simstudy.commands import curve
from simstudy.datasets import DataError
from simstudy.schema import ConfigError
from simstudy.stats import estimators

SCORES = {"a": np.array([0.2, 0.4, 0.3, 0.7, 0.5]), "b": np.array([0.1, 0.6, 0.35])}


@pytest.mark.parametrize("method", ["u", "v", "w"])
def test_run_gives_each_models_curve_of_the_estimator_exactly(method):
    result = curve.run({"data": "scores.csv", "estimator": method}, SCORES)
    assert list(result.curves.columns[:4]) == ["model", "n", "expected_max", "std"]
    for model, x in SCORES.items():
        rows = result.curves[result.curves["model"] == model]
        assert rows["n"].tolist() == list(range(1, x.size + 1))
        n = np.arange(1, x.size + 1)
        # V and its SD come from one pass over the V weights: equal to the estimator's to the last place or so
        exact = np.testing.assert_array_equal if method != "v" else lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-15)
        exact(rows["expected_max"], estimators.expected_max(x, method, n=n))
        np.testing.assert_allclose(rows["std"], estimators.expected_max_std(x, n=n), rtol=1e-14)
    # the kernel's numbers, bit for bit
    pd.testing.assert_frame_equal(result.curves, tables.evp_curves(SCORES, method=method))
    assert result.targets is None and result.best == "expected max"


def test_a_tiny_sample_has_the_known_v_curve():
    # V of [0.2, 0.4, 0.3]: E[max of n draws with replacement] = sum_i ((i/3)^n - ((i-1)/3)^n) x_(i).
    result = curve.run({"data": "scores.csv"}, {"a": np.array([0.2, 0.4, 0.3])})
    expected = [0.9 / 3, (0.2 + 3 * 0.3 + 5 * 0.4) / 9, (0.2 + 7 * 0.3 + 19 * 0.4) / 27]
    np.testing.assert_allclose(result.curves["expected_max"], expected, rtol=1e-15)


def test_minimize_gives_the_expected_minimum_mirrored_back():
    losses = {m: 1 - x for m, x in SCORES.items()}
    up = curve.run({"data": "scores.csv", "target": 0.55}, SCORES)
    down = curve.run({"data": "losses.csv", "minimize": True, "target": 0.45}, losses)
    assert down.best == "expected min" and "expected_min" in down.curves and "expected_max" not in down.curves
    np.testing.assert_allclose(down.curves["expected_min"], 1 - up.curves["expected_max"], atol=1e-15)
    np.testing.assert_allclose(down.curves["band_low"], 1 - up.curves["band_high"], atol=1e-15)
    np.testing.assert_array_equal(down.targets["n"], up.targets["n"])
    assert down.targets["target"].tolist() == [0.45, 0.45]


def test_targets_and_lines_say_where_each_curve_first_reaches_the_target():
    result = curve.run({"data": "scores.csv", "target": 0.62}, SCORES)
    reached = dict(zip(result.targets["model"], result.targets["n"]))
    first = {m: next((n for n, v in zip(c["n"], c["expected_max"]) if v >= 0.62), None)
             for m, c in result.curves.groupby("model")}
    assert reached["a"] == first["a"] and first["b"] is None and np.isnan(reached["b"])
    lines = curve.lines(result)
    assert lines[0].startswith("expected max of n trials ± its SD")
    assert lines[1:] == ["a: expected max first reaches 0.62 at n = 5", "b: expected max never reaches 0.62 within 3 trials"]


def test_run_reads_the_data_keys_as_the_command_does(tmp_path):
    path = tmp_path / "runs.csv"
    pd.DataFrame({"model": ["a"] * 5 + ["b"] * 3, "score": np.concatenate(list(SCORES.values())) * 100}).to_csv(
        path, index=False)
    from_file = curve.run({"data": str(path), "scale": 0.01, "models": ["b", "a"]})
    given = curve.run({"data": "scores.csv"}, {"b": SCORES["b"].tolist(), "a": SCORES["a"]})
    pd.testing.assert_frame_equal(from_file.curves, given.curves)


def test_write_writes_the_commands_files(tmp_path):
    result = curve.run({"data": "scores.csv", "target": 0.5, "trial_time": 0.5}, SCORES)
    written = curve.write(result, tmp_path)
    assert [p.name for p in written] == [
        "figure.png", "figure.pdf", "curves.parquet", "curves.csv", "targets.csv", "CURVE.md"
    ]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "curves.parquet"), result.curves)
    assert "time" in pd.read_csv(tmp_path / "curves.csv")


@pytest.mark.parametrize("cfg, key", [
    ({"estimator": "z"}, "estimator"),
    ({"xscale": "symlog"}, "xscale"),
    ({"target": float("inf")}, "target"),
    ({"trial_time": 0}, "trial_time"),
    ({"sample_seed": 3}, "sample_seed"),
    ({"scale": -1}, "scale"),
    ({"low": 1, "high": 0}, "high"),
    ({"estimatr": "u"}, "estimatr"),
    ({"split": "matched"}, "split"),
])
def test_a_bad_value_is_refused_in_one_line_naming_its_key(cfg, key):
    with pytest.raises(ConfigError, match=key) as exc:
        curve.parse({"data": "scores.csv", **cfg})
    assert "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match=key):
        curve.run({"data": "scores.csv", **cfg}, SCORES)  # run parses a mapping first: nothing computed


def test_data_that_cannot_give_a_curve_is_a_data_error():
    with pytest.raises(DataError, match="trial_time"):
        curve.run({"data": "scores.csv", "trial_time": {"a": 0.2}}, SCORES)  # b has no trial time


_BEST = '''
import numpy as np


def best(sorted_scores, n):
    """The sample's best score at every budget: each row's last (largest) score, N times."""
    x = np.asarray(sorted_scores)
    return np.repeat(x[:, -1:], len(n), axis=1)


def wrong_shape(sorted_scores, n):
    return np.zeros(3)
'''


def test_a_plugin_estimator_gives_the_curve_on_the_users_scores(tmp_path, monkeypatch, forget_plugins):
    # A plug-in estimator, as in a study (estimators.NAME._target_), named by its import path: the curve is the
    # plug-in's numbers (here the sample's best at every n, known exactly); the SD shading is the best of n's
    # spread under the scores (V's), as for u, v and w; minimize=true mirrors it back (the sample's worst).
    (tmp_path / "my_curve_est.py").write_text(_BEST)
    monkeypatch.chdir(tmp_path)
    result = curve.run({"data": "scores.csv", "estimator": "my_curve_est.best"}, SCORES)
    for model, x in SCORES.items():
        rows = result.curves[result.curves["model"] == model]
        np.testing.assert_array_equal(rows["expected_max"], np.full(x.size, x.max()))
        np.testing.assert_allclose(rows["std"], estimators.expected_max_std(x, n=np.arange(1, x.size + 1)), rtol=1e-14)
        np.testing.assert_array_equal(rows["band_high"], np.full(x.size, x.max()))  # clipped to the observed best
    low = curve.run({"data": "scores.csv", "estimator": "my_curve_est.best", "minimize": True}, SCORES)
    np.testing.assert_array_equal(low.curves.loc[low.curves["model"] == "b", "expected_min"], np.full(3, 0.1))
    assert "my_curve_est.best" in curve.chart(result).title


@pytest.mark.parametrize(("value", "said"), [
    ("my_curve_est.wrong_shape", "estimator=my_curve_est.wrong_shape: returned shape (3,)"),
    ("my_curve_est.absent", "estimator=my_curve_est.absent"),
    ("x", "module.function"),
])
def test_a_plugin_estimator_that_fails_is_refused_at_parse_in_one_line(tmp_path, monkeypatch, forget_plugins, value, said):
    (tmp_path / "my_curve_est.py").write_text(_BEST)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as exc:
        curve.parse({"data": "scores.csv", "estimator": value})
    assert said in str(exc.value) and "\n" not in str(exc.value)


def test_the_run_gets_a_report_html_with_its_page_and_chart(tmp_path, monkeypatch):
    # The guide says every run writes report.html: curve writes CURVE.md (its page: the terminal's summary and
    # the figure) and report.html shows it with the curves as an interactive chart.
    from simstudy import io, report_html
    from simstudy.chart_vega import to_vega
    from simstudy.commands import report
    from simstudy.report_safe import Files

    monkeypatch.setattr(report_html, "bundle", lambda: "/* the chart script */")
    result = curve.run({"data": "scores.csv", "target": 0.45}, SCORES)
    io.write_csv(result.curves, tmp_path / "curves.csv")
    curve._page(result, tmp_path / "CURVE.md")  # as write() does, without the figure's cost
    done = report.run(tmp_path)  # as the command's run and simstudy report do: the command hands its chart
    page = done.path.read_text(encoding="utf-8")
    assert done.charts == 1 and ">CURVE.md<" in page
    assert "expected max of n trials ± its SD" in page and "b: expected max first reaches 0.45 at n = 2" in page
    (chart,) = [to_vega(c) for c in curve.report_charts(Files(tmp_path))]
    drawn = [(p["hue"], p["x"], p["estimate"], p["lo"], p["hi"]) for p in chart["data"]["values"]]
    table = result.curves[["model", "n", "expected_max", "band_low", "band_high"]]
    assert drawn == [tuple(row) for row in table.itertuples(index=False)]


def test_the_reports_chart_of_a_long_curve_is_thinned_and_says_so(tmp_path, rng):
    from simstudy import io
    from simstudy.chart_vega import to_vega
    from simstudy.report_safe import Files

    result = curve.run({"data": "scores.csv"}, {"a": rng.uniform(size=5000)})
    io.write_csv(result.curves, tmp_path / "curves.csv")
    curve._page(result, tmp_path / "CURVE.md")
    (chart,) = [to_vega(c) for c in curve.report_charts(Files(tmp_path))]
    shown = [p["x"] for p in chart["data"]["values"]]
    assert len(shown) <= curve.MAX_BUDGETS and shown[0] == 1 and shown[-1] == 5000
    assert "of the budgets not drawn" in chart["usermeta"]["capped"]


def test_the_png_and_the_report_draw_one_chart(tmp_path):
    # figure.png is to_matplotlib of curve.chart(result); report.html draws the chart it reads back from the run
    # directory (its tables and run.json's settings): the same description, target and drops included.
    import json

    import matplotlib.pyplot as plt

    from simstudy import io
    from simstudy.charts import to_matplotlib
    from simstudy.report_safe import Files

    settings = {"data": "scores.csv", "target": 0.55, "xscale": "linear"}
    result = curve.run(settings, SCORES)
    io.write_csv(result.curves, tmp_path / "curves.csv")
    io.write_csv(result.targets, tmp_path / "targets.csv")
    curve._page(result, tmp_path / "CURVE.md")
    (tmp_path / "run.json").write_text(json.dumps({"command": "curve", "config": settings}))
    (read,) = curve.report_charts(Files(tmp_path))
    made = curve.chart(result)
    assert read == made
    (n_a,) = result.targets.loc[result.targets["model"] == "a", "n"]
    assert [(r.axis, r.value, r.hue) for r in made.references] == [("y", 0.55, None), ("x", n_a, "a")]
    fig = to_matplotlib(made)
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.get_xlabel() == "hyperparameter assignments (trials)"
    assert fig.get_suptitle() == "scores.csv: expected max (V) ± 1 SD"
    texts = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]
    assert "target 0.55 (dotted drops: where each model reaches it); never reached by b" in texts
    plt.close(fig)


# --- data= a tuning source (issue 36): each study a model, its complete trials its scores, its direction read ---

SOURCES = __import__("pathlib").Path(__file__).resolve().parents[1] / "sources" / "data"


def _complete(study: str) -> tuple[np.ndarray, str]:
    """A study's complete values in trial order and its direction, as Optuna itself reported them (expected.json)."""
    import json

    record = json.loads((SOURCES / "expected.json").read_text())["optuna.db"][study]
    values = [v[0] for v, s in zip(record["values"], record["states"], strict=True) if s == "COMPLETE"]
    return np.array(values, dtype=np.float64), record["directions"][0].lower()


@pytest.mark.parametrize("study", ["random", "grid"])
def test_a_study_of_an_optuna_storage_is_a_model_its_direction_read(study):
    x, direction = _complete(study)
    with pytest.warns(UserWarning) if study == "random" else __import__("contextlib").nullcontext():
        result = curve.run({"data": str(SOURCES / "optuna.db"), "model": study, "estimator": "u"})
    minimize = direction == "minimize"
    assert result.config.data.minimize is minimize and result.best == f"expected {'min' if minimize else 'max'}"
    column = "expected_min" if minimize else "expected_max"
    np.testing.assert_array_equal(
        result.curves[column], estimators.expected_max(x, "u", n=np.arange(1, x.size + 1), minimize=minimize)
    )


def test_a_sources_failed_trials_are_left_out_and_counted():
    with pytest.warns(UserWarning, match=r"random: 3 \(2 failed, 1 pruned\)"):
        result = curve.run({"data": str(SOURCES / "optuna.db"), "model": "random"})
    (check,) = result.config.data.found.checks
    assert check.left_out == "2 failed, 1 pruned" and check.n == 9 and check.order_by == "trial number"


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"model": "random", "minimize": True}, "minimize=true contradicts .*records direction maximize for random"),
        ({"models": ["random", "grid"]}, r"differ in direction: random \(maximize\), grid \(minimize\)"),
        ({"model": "random", "objective": 1}, "objective=1, but it has 1 objective"),
        ({"model": "random", "metric": "f1"}, "f1"),
        ({"model": "random", "score_column": "x"}, "score_column=x applies to score files only"),
        ({"model": "random", "missing": 0}, "missing=0 applies to score files only"),
        ({"model": "nope"}, "no study 'nope'"),
    ],
)
def test_a_sources_keys_that_do_not_fit_are_one_line(keys, message):
    with pytest.raises((ConfigError, DataError), match=message), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        curve.run({"data": str(SOURCES / "optuna.db"), **keys})


@pytest.mark.parametrize(("key", "value"), [("objective", 1), ("metric", "acc"), ("reduce", "last")])
def test_a_sources_keys_on_a_score_file_are_refused(tmp_path, key, value):
    file = tmp_path / "s.csv"
    file.write_text("score\n0.2\n0.4\n0.3\n")
    with pytest.raises(ConfigError, match=f"{key}={value} applies to .*tuning sources .*s.csv is a file of scores"):
        curve.run({"data": str(file), key: value})


@pytest.mark.parametrize(("key", "value"), [("objective", 0), ("metric", "f1")])
def test_a_sources_keys_on_a_shipped_set_are_refused_at_parse(key, value):
    with pytest.raises(ConfigError, match=f"{key}={value} applies to tuning sources only; reuters_hedwig"):
        curve.parse({"data": "reuters_hedwig", key: value})


# --- the i.i.d. check (issue 36): provenance and the order test, per model, on the page and the terminal ---


def test_the_page_and_lines_say_whether_each_model_is_random_search(tmp_path):
    result = curve.run({"data": str(SOURCES / "optuna.db"), "models": ["grid", "multi"]})
    said = curve.lines(result)[-2:]
    assert said[0].startswith("i.i.d. check, grid: order test on 6 scores in trial number order: p = ")
    assert "; GridSampler (a grid search)" in said[0] and said[0].endswith(" -- not random search: see the page")
    assert said[1].startswith("i.i.d. check, multi: order test on ")
    assert "; NSGAIISampler (a genetic algorithm)" in said[1] and said[1].endswith("not random search: see the page")
    page = (tmp_path / "CURVE.md").read_text() if curve.write(result, tmp_path) else ""
    top = page.split("```text")[0]  # near the top: before the terminal's block
    assert "**Random search?**" in top and "lower is better: " in top
    assert "> **Not random search: `grid`, `multi`.** The numbers here then describe resampling these" in top


def test_the_check_is_the_same_on_every_run_and_reads_a_shipped_set_in_file_order():
    first, again = (curve.lines(curve.run({"data": "reuters_hedwig"}))[-2:] for _ in range(2))
    assert first == again  # seeded by the model's name: a rerun writes the same page
    assert all("not recorded" in line and "in the file's order" in line for line in first)


def test_scores_given_as_arrays_have_no_check_to_say():
    result = curve.run({"data": "scores.csv"}, SCORES)
    assert result.config.data.found is None and not any("i.i.d." in line for line in curve.lines(result))


# --- issue 36's "done when": two 100-trial studies (random search, TPE) with failed and pruned trials ---


def _searches() -> dict:
    import json

    return json.loads((SOURCES / "expected_searches.json").read_text())["searches.db"]


def _check_done_when(curves: pd.DataFrame, page: str) -> None:
    for study, record in _searches().items():
        assert record["directions"] == ["minimize"]  # as Optuna wrote it: the curve must be the expected minimum
        x = np.array([v[0] for v, s in zip(record["values"], record["states"], strict=True) if s == "COMPLETE"])
        assert x.size == 97 and len(record["states"]) == 100
        rows = curves[curves["model"] == study]
        np.testing.assert_array_equal(
            rows["expected_min"], estimators.expected_max(x, "u", n=np.arange(1, x.size + 1), minimize=True)
        )
    top = page.split("```text")[0]
    assert "> **Not random search: `tpe`.**" in top  # the TPE study flagged, the random one not
    assert "- `random` (97 scores; left out, not complete: 2 failed, 1 pruned)" in top and "No sign that later trials" in top
    assert "lower is better: " in top and "searches.db records minimize" in top


def test_done_when_curve_of_an_optuna_storage_is_u_on_complete_trials_and_flags_tpe(tmp_path):
    with pytest.warns(UserWarning, match=r"random: 3 \(2 failed, 1 pruned\); tpe: 3 \(1 failed, 2 pruned\)"):
        result = curve.run({"data": str(SOURCES / "searches.db"), "estimator": "u"})
    curve.write(result, tmp_path)
    _check_done_when(result.curves, (tmp_path / "CURVE.md").read_text())
    checks = {c.model: c for c in result.config.data.found.checks}
    assert checks["tpe"].pvalue <= 0.05 < checks["random"].pvalue


@pytest.mark.system  # the command line end to end, as the issue says it: simstudy curve data=searches.db
def test_done_when_on_the_command_line(tmp_path):
    from _cli import simstudy

    proc = simstudy("curve", f"data={SOURCES / 'searches.db'}", "estimator=u", cwd=tmp_path)
    (run_dir,) = (tmp_path / "outputs" / "curve").iterdir()
    _check_done_when(pd.read_csv(run_dir / "curves.csv"), (run_dir / "CURVE.md").read_text())
    assert "i.i.d. check, tpe (left out: 1 failed, 2 pruned)" in proc.stdout
