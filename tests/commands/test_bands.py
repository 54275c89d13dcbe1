"""simstudy.commands.bands from Python: the numbers of the kernels, the files and lines of the command, and bad
values refused at parse time in one line naming the key (no command line needed)."""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from simstudy.commands import bands
from simstudy.schema import ConfigError
from simstudy.stats import bands as kernels
from simstudy.stats import estimators

SCORES = {"a": np.array([0.2, 0.4, 0.3, 0.7, 0.5, 0.45]), "b": np.array([0.1, 0.6, 0.35, 0.55, 0.5, 0.3])}
BOUNDED = {"data": "scores.csv", "low": 0, "high": 1}


@pytest.mark.parametrize("method", ["dkw", "ks", "ld_equal_tailed"])
def test_run_gives_the_kernels_bands_and_the_u_v_curves_exactly(method):
    result = bands.run({**BOUNDED, "method": method, "confidence": 0.7, "max_k": 8}, SCORES)
    ks = np.arange(1, 9, dtype=np.float64)
    for model, x in SCORES.items():
        rows = result.bands[result.bands["model"] == model]
        tc = kernels.tuning_curve_bands(x, 0.7, "median", method, ks=ks, low=0, high=1)
        np.testing.assert_array_equal(rows["k"], ks)
        for col in ("point", "lower", "upper"):
            np.testing.assert_array_equal(rows[col], getattr(tc, col))
        for e in ("u", "v"):  # the estimators interpolate only: NaN beyond the 6 scores
            np.testing.assert_array_equal(rows[e].to_numpy()[:6], estimators.expected_max(x, e, n=np.arange(1, 7)))
            assert rows[e].iloc[6:].isna().all()
    assert set(result.bands[["kind", "quantile", "confidence", "method"]].drop_duplicates().itertuples(index=False)) \
        == {("median", 0.5, 0.7, method)}
    cdf = result.cdfs[result.cdfs["model"] == "a"]
    np.testing.assert_array_equal(cdf["score"], np.sort(SCORES["a"]))
    np.testing.assert_allclose(cdf["ecdf"], np.arange(1, 7) / 6)


def test_two_models_have_evidence_and_one_has_none():
    both = bands.run({**BOUNDED, "method": "dkw"}, SCORES)
    assert list(both.evidence.columns[-2:]) == ["u_leader", "v_leader"]
    assert both.evidence["k"].tolist() == both.bands["k"].drop_duplicates().tolist()
    lines = bands.lines(both)
    assert lines[-3] == "point estimates of the mean tuning curve (the model ahead at each k):"
    one = bands.run({**BOUNDED, "method": "dkw"}, {"a": SCORES["a"]})
    assert one.evidence is None and len(bands.lines(one)) == 1


def test_minimize_gives_the_kernels_bands_of_the_minimum_in_opdas_convention():
    """Issue 34: ``bands minimize=true`` takes the quantiles of the minimum as truth.quantile_tuning_curve and opda
    do (the left-continuous inverse), not as the mirror of the bands of -x: six scores put the median of the
    minimum of one on the empirical CDF's jump (F = 3/6), where the two differ."""
    opda = pytest.importorskip("opda.nonparametric")
    losses = {m: 1 - x for m, x in SCORES.items()}
    down = bands.run({**BOUNDED, "method": "dkw", "confidence": 0.7, "minimize": True}, losses)
    ks = np.arange(1, 7, dtype=np.float64)
    for model, x in losses.items():
        rows = down.bands[down.bands["model"] == model]
        lo, pt, hi = opda.EmpiricalDistribution.confidence_bands(x, 0.7, 0.0, 1.0, method="dkw")
        for col, dist in (("point", pt), ("lower", hi), ("upper", lo)):
            np.testing.assert_array_equal(rows[col], dist.quantile_tuning_curve(ks, 0.5, minimize=True), err_msg=col)
        assert rows["point"].iloc[0] == np.sort(x)[2]  # the lower of the two middle scores, not the higher
        for e in ("u", "v"):  # the expected minimum's estimates: minus those of the maximum of -x
            np.testing.assert_array_equal(rows[e], -estimators.expected_max(-x, e, n=np.arange(1, 7)))
    # the model ahead is the one with the lower median loss: b at k = 1 (0.5 against a's 0.55), then a
    a, b = (down.bands[down.bands["model"] == m]["point"].to_numpy() for m in ("a", "b"))
    assert a[0] == 0.55 and b[0] == 0.5
    assert down.evidence["leader"].tolist() == np.where(a < b, "a", np.where(b < a, "b", "tie")).tolist()
    assert down.evidence["leader"].tolist()[:2] == ["b", "b"] and "a" in down.evidence["leader"].tolist()


def test_minimize_on_four_scores_gives_the_lower_atom_at_k_1():
    """Issue 34's case: scores 0.1, 0.2, 0.3, 0.4, minimize: the median best of one is 0.2 (as
    truth.quantile_tuning_curve says), not 0.3."""
    from simstudy.distributions import Bag
    from simstudy.stats import truth

    x = np.array([0.1, 0.2, 0.3, 0.4])
    result = bands.run({**BOUNDED, "method": "ks", "minimize": True}, {"loss": x})
    assert result.bands["point"].tolist() == [0.2, 0.2, 0.1, 0.1]
    assert result.bands["point"].tolist() == truth.quantile_tuning_curve(Bag(x), [1, 2, 3, 4], minimize=True).tolist()
    assert result.cdfs["score"].tolist() == x.tolist() and result.cdfs["ecdf"].tolist() == [0.25, 0.5, 0.75, 1.0]


@pytest.mark.slow  # about a second or more: CI's slow lane keeps the README suite under 3 min
def test_write_writes_the_commands_files(tmp_path):
    result = bands.run({**BOUNDED, "method": "dkw"}, SCORES)
    written = bands.write(result, tmp_path)
    assert [p.name for p in written] == ["bands.parquet", "bands.csv", "cdf_bands.csv", "tuning_curve.png", "cdf.png",
                                         "tuning_curve.pdf", "cdf.pdf", "evidence.csv", "BANDS.md"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "bands.parquet"), result.bands)


@pytest.mark.parametrize("cfg, key", [
    ({"confidence": 1.5}, "confidence"),
    ({"kind": "mode"}, "kind"),
    ({"kind": "mean", "low": None}, "kind=mean"),
    ({"method": "bootstrap"}, "method"),
    ({"quantile": 0}, "quantile"),
    ({"max_k": 0}, "max_k"),
    ({"xscale": "symlog"}, "xscale"),
    ({"sample_size": 1}, "sample_size"),
    ({"model": "a", "models": ["b"]}, "model=a"),
    ({"confidense": 0.8}, "confidense"),
])
def test_a_bad_value_is_refused_in_one_line_naming_its_key(cfg, key):
    with pytest.raises(ConfigError, match=key) as exc:
        bands.parse({**BOUNDED, **cfg})
    assert "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match=key):
        bands.run({**BOUNDED, **cfg}, SCORES)


def test_bands_beyond_the_memory_limit_are_refused_before_any_compute():
    with mock.patch.dict(os.environ, {"SIMSTUDY_MAX_MEMORY_GB": "0.001"}):
        with pytest.raises(ConfigError, match="max_k"):
            bands.run({**BOUNDED, "method": "dkw", "max_k": 10**7}, SCORES)


def test_the_budgets_k_are_whole_numbers_in_the_table_and_the_terminal():
    # k counts iterations of random search: 1, 2, 3 in bands.csv and on the terminal, never 1.0, 2.0
    result = bands.run({**BOUNDED, "method": "dkw", "max_k": 3}, SCORES)
    assert result.bands["k"].dtype.kind == "i"
    table = bands.lines(result)[0].splitlines()
    assert [line.split()[0] for line in table[3:]] == ["1", "2", "3"]


_BEST = '''
import numpy as np


def best(sorted_scores, n):
    """The sample's best score at every budget (a toy plug-in with a known answer)."""
    x = np.asarray(sorted_scores)
    return np.repeat(x[:, -1:], len(n), axis=1)
'''


def test_a_third_estimator_w_or_a_plugin_is_a_column_beside_u_and_v(tmp_path, monkeypatch, forget_plugins):
    (tmp_path / "my_bands_est.py").write_text(_BEST)
    monkeypatch.chdir(tmp_path)
    w = bands.run({**BOUNDED, "method": "dkw", "max_k": 8, "estimator": "w"}, SCORES)
    plugin = bands.run({**BOUNDED, "method": "dkw", "max_k": 8, "estimator": "my_bands_est.best"}, SCORES)
    for model, x in SCORES.items():
        n = np.arange(1, x.size + 1)
        rows = w.bands[w.bands["model"] == model]
        np.testing.assert_array_equal(rows["w"].iloc[: x.size], estimators.expected_max(x, "w", n=n))
        assert rows["w"].iloc[x.size :].isna().all()  # the estimators interpolate only, as u and v
        rows = plugin.bands[plugin.bands["model"] == model]
        np.testing.assert_array_equal(rows["my_bands_est.best"].iloc[: x.size], np.full(x.size, x.max()))
    from simstudy.charts import to_matplotlib

    figure = to_matplotlib(bands.charts(plugin)["tuning_curve"])
    labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert "my_bands_est.best" in labels
    with pytest.raises(ConfigError, match="estimator=my_bands_est.absent"):
        bands.parse({**BOUNDED, "estimator": "my_bands_est.absent"})


def test_the_run_gets_a_report_html_with_its_page_and_chart(tmp_path, monkeypatch):
    # The guide says every run writes report.html: bands writes BANDS.md (the terminal's summary, the figures)
    from simstudy import io, report_html
    from simstudy.chart_vega import to_vega
    from simstudy.commands import report
    from simstudy.report_safe import Files

    monkeypatch.setattr(report_html, "bundle", lambda: "/* the chart script */")
    result = bands.run({**BOUNDED, "method": "dkw", "max_k": 8}, SCORES)
    io.write_csv(result.bands, tmp_path / "bands.csv")
    bands._page(result, tmp_path / "BANDS.md")  # as write() does, without the figures' cost
    done = report.run(tmp_path)  # as the command's run and simstudy report do: the command hands its chart
    page = done.path.read_text(encoding="utf-8")
    assert done.charts == 1 and ">BANDS.md<" in page and "tuning_curve.png" in page
    assert bands.lines(result)[0].splitlines()[3] in page  # the terminal's table, as printed
    (chart,) = [to_vega(c) for c in bands.report_charts(Files(tmp_path))]  # no cdf_bands.csv: no CDF chart
    bands_panel = [p for p in chart["data"]["values"] if "confidence bands" in p["panel"]]
    drawn = [(p["hue"], p["x"], p["estimate"]) for p in bands_panel]
    assert drawn == [tuple(row) for row in result.bands[["model", "k", "point"]].itertuples(index=False)]
