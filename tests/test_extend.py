"""simstudy.extend: one generic Registry for every extension point, built-ins loaded lazily by path."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from simstudy import extend, plugins, registry


def test_an_unknown_name_is_one_line_listing_the_valid_ones():
    with pytest.raises(KeyError) as err:
        extend.band_methods.get("wilson")
    message = err.value.args[0]
    assert "\n" not in message
    assert message == (
        "no band method 'wilson'; the registered band methods are dkw, ks, ld_equal_tailed, ld_highest_density"
    )
    with pytest.raises(KeyError, match="no study kind 'toy'; the registered kinds are evp_accuracy, "):
        extend.studies.get("toy")


def test_register_get_names_and_the_refusals():
    points = extend.Registry("point", {"a": extend.Builtin("math:sqrt", "the square root")})
    assert points.register("b", "math.floor") == "math.floor"
    assert points.register("b", "math.floor") == "math.floor"  # the same again: a no-op
    assert points.names() == ("a", "b")
    assert points.get("a")(9.0) == 3.0 and points.summary("a") == "the square root"
    assert points.is_builtin("a") and not points.is_builtin("b")
    assert points.registered() == {"b": "math.floor"} and points.entry("a") is None
    assert "math.floor" in points.paths()
    with pytest.raises(ValueError, match="'a' is a built-in point; choose another name"):
        points.register("a", "math.ceil")
    with pytest.raises(ValueError, match="point 'b' is already registered as math.floor"):
        points.register("b", "math.ceil")
    assert points.unregister("b") == "math.floor" and points.names() == ("a",)


def test_builtin_study_kinds_are_known_without_importing_them():
    code = textwrap.dedent(
        """
        import sys
        from simstudy import extend
        names = extend.studies.names()
        summary = extend.studies.summary("evp_accuracy")
        assert names[0] == "evp_accuracy" and summary, (names, summary)
        loaded = [m for m in sys.modules if m.startswith("simstudy.studies.")]
        assert not loaded, loaded
        from simstudy import config  # the run config finds kinds through the registry, imports none
        loaded = [m for m in sys.modules if m.startswith("simstudy.studies.")]
        assert not loaded, loaded
        extend.studies.get("band_triviality")
        assert "simstudy.studies.band_triviality" in sys.modules
        assert "simstudy.studies.evp_accuracy" not in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_tables_summaries_are_the_registered_studies():
    for kind in extend.studies.names():
        assert registry.study(kind).summary == extend.studies.summary(kind)


def test_builtin_tables_match_the_kernels():
    from simstudy import distributions
    from simstudy.stats import bands, estimators, selection

    assert tuple(extend.band_methods.builtins) == bands.METHODS
    assert tuple(extend.estimators.builtins) == estimators.METHODS
    assert tuple(extend.selection_algorithms["fixed_budget"].builtins) == tuple(selection.FIXED_BUDGET_RUNS)
    assert tuple(extend.selection_algorithms["fixed_confidence"].builtins) == tuple(
        selection.FIXED_CONFIDENCE_PROPOSALS
    )
    assert set(extend.distributions.builtins) == {*distributions.KINDS, "target"}
    for kind in distributions.KINDS:
        assert extend.distributions.get(kind) is distributions.KINDS[kind]
    for name in extend.selection_algorithms["fixed_budget"].names():
        assert extend.selection_algorithms["fixed_budget"].get(name) is selection.FIXED_BUDGET_RUNS[name]


def test_a_builtin_and_a_plugin_band_method_share_one_path(tmp_path, monkeypatch, forget_plugins):
    (tmp_path / "my_band_path.py").write_text(
        textwrap.dedent(
            """
            from simstudy.stats.bands import pointwise_bounds

            def dkw_again(sorted_scores, confidence):
                return pointwise_bounds(sorted_scores.shape[-1], confidence, "dkw")
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(extend.band_methods, "_entries", {})
    plugins.register_band_method("dkw_again", "my_band_path.dkw_again")
    assert extend.band_methods.names()[-1] == "dkw_again"
    x = np.sort(np.random.default_rng(0).random((3, 6)), axis=1)
    # one check, one dispatch, one contract for both
    assert plugins.check_band_method("dkw", "study.methods") == "dkw"
    assert plugins.check_band_method("dkw_again", "study.methods") == "dkw_again"
    assert extend.band_methods.check("dkw", "study.methods") == "dkw"
    assert extend.band_methods.check("dkw_again", "study.methods") == "dkw_again"
    with pytest.raises(plugins.PluginError, match="study.methods must be one of dkw, ks, "):
        extend.band_methods.check("wilson", "study.methods")
    builtin, plugin = plugins.band_method("dkw"), plugins.band_method("dkw_again")
    for a, b in zip(builtin(x, 0.8), plugin(x, 0.8)):
        np.testing.assert_array_equal(a, b)
    assert extend.band_methods.fingerprint("dkw") is None
    assert sorted(extend.band_methods.fingerprint("dkw_again")) == ["kwargs", "source", "target"]
    assert plugins.band_fingerprint(["dkw", "dkw_again"])["dkw_again"] == extend.band_methods.fingerprint("dkw_again")


def test_each_point_s_check_is_its_registry_s():
    assert extend.selection_algorithms["fixed_budget"].check("non_adaptive", "study.algorithms") == "non_adaptive"
    with pytest.raises(plugins.PluginError, match="study.algorithms must be one of ttts, non_adaptive, batch_thompson"):
        extend.selection_algorithms["fixed_confidence"].check("nope", "study.algorithms")
    assert extend.studies.check("evp_accuracy", "study.kind") == "evp_accuracy"


def test_registered_paths_are_trusted_from_every_point(monkeypatch):
    from simstudy import _imports

    monkeypatch.setattr(extend.estimators, "_entries", {})
    plugins.register_estimator("top_trusted", "numpy.take")
    assert "numpy.take" in _imports.registered_paths()
    assert plugins.import_target("numpy.take", trusted=frozenset()) is np.take
    with pytest.raises(plugins.PluginError, match="only when you name it too"):
        plugins.import_target("numpy.put", trusted=frozenset())


def test_a_moved_name_is_imported_from_where_it_lives():
    from simstudy import config
    from simstudy.engine import memory

    # issue 35: config no longer answers for the names of the studies, plug-ins, limits and commands
    for name in ("StudyOptions", "reps_option", "band_method_check", "at_least_arms", "TIME_ENV", "COMMAND_OPTIONS"):
        assert not hasattr(config, name), name
    assert config.memory_limit is memory.memory_limit and config.check_chunk_memory is memory.check_chunk_memory
    assert config.MEMORY_ENV == memory.MEMORY_ENV
    assert registry.load_plugins is extend.load_plugins and registry.PLUGINS_ENV == "SIMSTUDY_PLUGINS"
    assert plugins.PluginError.__module__ == "simstudy.plugins"
    with pytest.raises(AttributeError):
        config.no_such_name  # noqa: B018


def test_no_upward_imports_from_config_and_distributions():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("simstudy", include_external_packages=False)
    for importer, imported in [
        ("simstudy.config", "simstudy.studies"),
        ("simstudy.distributions", "simstudy.plugins"),
        ("simstudy.distributions", "simstudy.extend"),
        ("simstudy.extend", "simstudy.studies"),
        ("simstudy.extend", "simstudy.config"),
        ("simstudy.datasets", "simstudy.config"),
    ]:
        chains = graph.find_shortest_chains(importer=importer, imported=imported, as_packages=True)
        # The audit command's parts of config (parse_audit, _audit_cost_iv) move to simstudy.commands.audit
        # (issue 26); until then they are the only edge from config up to a study.
        chains -= {("simstudy.config", "simstudy.studies.audit")}
        assert not chains, (importer, imported, chains)
