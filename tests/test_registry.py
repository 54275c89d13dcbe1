"""The study registry and typed schemas: every study kind is one module, its defaults live in its schema only,
its help is generated from the schema, and a third-party package registers plug-ins through the
``simstudy.plugins`` entry-point group (tested with a tiny package pip-installed here)."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from simstudy import registry, schema
from simstudy.cli import usage
from simstudy.cli.compose import config_dir, register_studies
from simstudy.cli.main import main
from simstudy.schema import ConfigError
from simstudy.studies.base import StudyOptions

# The example plug-in package (examples/plugin_package), installed here as pip installs any wheel.
TOY = Path(__file__).resolve().parents[1] / "examples" / "plugin_package" / "simstudy_toy" / "__init__.py"


@pytest.mark.parametrize("kind", registry.study_kinds())
def test_every_option_is_documented_and_its_default_passes_its_check(kind):
    spec = registry.study(kind)
    assert issubclass(spec.options, StudyOptions) and spec.summary
    for name, (doc, _) in schema.docs(spec.options).items():
        assert len(doc) > 10, (kind, name)
    assert schema.parse(spec.options, {}) == spec.options()  # the defaults are valid values, already typed


@pytest.mark.parametrize("kind", registry.study_kinds())
def test_the_study_yaml_selects_the_schema_defaults_and_nothing_else(kind):
    # The composed study group is the schema's defaults plus name and kind: no default lives in a YAML file.
    register_studies()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=config_dir(), version_base="1.3"):
        cfg = compose("config", overrides=[f"study={kind}"])
    study = dict(cfg.study)
    assert (study.pop("name"), study.pop("kind")) == (kind, kind)
    assert {k: (list(v) if hasattr(v, "__len__") and not isinstance(v, str) else v) for k, v in study.items()} \
        == schema.defaults(registry.study(kind).options)


def test_model_selection_budgets_are_the_papers_in_python_and_yaml_alike():
    # They had drifted: Python said (48, 96, 204), the YAML ten budgets. Now both are the schema's.
    from simstudy.studies.model_selection import Options

    assert Options().budgets == (48, 72, 96, 120, 144, 168, 204, 240, 300, 360)


def test_study_help_is_generated_from_the_schema(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["simstudy", "study=band_width", "--help"])
    main()
    body = " ".join(capsys.readouterr().out.split())
    for key, (doc, default) in schema.docs(registry.study("band_width").options).items():
        assert f"study.{key} {' '.join(doc.split())} [default: {usage._yaml(default)}]" in body
    assert "[default: [dkw, ks, ld_equal_tailed, ld_highest_density]]" in body


def test_schema_errors_are_one_line_naming_key_and_value():
    from simstudy.studies.band_coverage import Options

    with pytest.raises(ConfigError, match=r"^study.levels must be a number strictly between 0 and 1, got 1.5$"):
        schema.parse(Options, {"levels": [0.5, 1.5]}, "study.")
    with pytest.raises(ConfigError, match=r"^study.sample_size must be an integer, got True$"):
        schema.parse(Options, {"sample_size": True}, "study.")
    with pytest.raises(ConfigError, match=r"^study.foo is not a setting of the band_coverage study \(settings: "
                                          r"name, kind, reps, chunk_reps"):
        schema.parse(Options, {"foo": 1}, "study.", ignore=("name", "kind"), what="the band_coverage study")


def test_a_kind_is_registered_once():
    spec = registry.study("band_triviality")
    assert registry.register_study(spec) is spec  # the same spec again: a no-op
    with pytest.raises(ValueError, match="already registered"):
        registry.register_study(registry.Study("band_triviality", spec.options, run=lambda c, o: None,
                                               figure=spec.figure))
    with pytest.raises(ValueError, match="options must be a dataclass schema"):
        registry.register_study(registry.Study("no_schema", dict, run=spec.run, figure=spec.figure))


def _wheel(path: Path) -> Path:
    """A wheel of the toy package, written by hand (what a build backend would write): the module, its
    metadata and the entry point in group simstudy.plugins."""
    info = "simstudy_toy-0.1.dist-info"
    files = {
        "simstudy_toy/__init__.py": TOY.read_text(),
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: simstudy-toy\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": "[simstudy.plugins]\ntoy = simstudy_toy\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    wheel = path / "simstudy_toy-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return wheel


SCRIPT = """
import json, sys
import simstudy
from simstudy import registry
from simstudy.cli import usage
from simstudy.cli.compose import config_dir
from pathlib import Path
out = Path(sys.argv[1])
toy = simstudy.run(overrides=["study=toy_max", "distribution=truncnorm", "runner.n_jobs=1"], out_dir=out / "toy")
evp = simstudy.run("dodge2021_fig1", overrides=["study.reps=200", "study.chunk_reps=200", "budget.B=[5]",
                   "runner.n_jobs=1", "estimators=[v]", "+estimators.top.method=toy_top",
                   "study.save_replicates=false"], out_dir=out / "evp")
uniform = simstudy.config.parse({"seed": 1,
    "distribution": {"kind": "toy_uniform", "low": 0.2, "high": 0.9}, "budget": {"B": 3},
    "estimators": {"v": {"method": "v"}}, "study": {"name": "u", "kind": "evp_accuracy"},
    "runner": {"n_jobs": 1, "backend": "loky"}}).distributions[0].build()
print(json.dumps({"toy": toy.summary.to_dict("records"), "uniform": [*uniform.support, uniform.name],
                  "top": evp.summary[(evp.summary.estimator == "top") & (evp.summary.measure == "mean")]
                         .to_dict("records"),
                  "help": "toy_max" in usage.main_help(Path(config_dir())),
                  "figure": sorted(p.name for p in (out / "toy").iterdir())}))
"""


@pytest.mark.system
def test_an_installed_package_registers_a_study_an_estimator_and_a_distribution_by_entry_point(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(_wheel(tmp_path))], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "out")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = {(r["n"], r["measure"]): r for r in got["toy"]}
    for n in (1, 4, 16):  # the study's Monte Carlo mean within 4 MCSE of the exact expected best of n
        mc, exact = rows[(n, "mean_best")], rows[(n, "exact")]
        assert abs(mc["estimate"] - exact["estimate"]) < 4 * mc["mcse"], (n, mc, exact)
    assert rows[(1, "mean_best")]["reps"] == 400  # the schema's default reps
    # toy_top is the sample maximum at every budget: its mean is the same at n = 1 and n = 5
    means = {r["n"]: r["estimate"] for r in got["top"]}
    assert means[1] == means[5]
    assert got["help"] and "figure.png" in got["figure"] and "summary.parquet" in got["figure"]
    assert got["uniform"] == [0.2, 0.9, "toy_uniform"]  # distribution.kind=toy_uniform: the package's class


@pytest.mark.system
def test_a_plugin_that_fails_to_load_is_one_line(tmp_path):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('no licence file')\n")
    env = {**os.environ, registry.PLUGINS_ENV: "broken_plugin"}
    proc = subprocess.run([sys.executable, "-m", "simstudy.cli", "study=evp_accuracy"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("simstudy: error: plug-in broken_plugin (from SIMSTUDY_PLUGINS) failed to load: "
                                   "RuntimeError: no licence file")
    assert not (tmp_path / "outputs").exists()


def test_an_unknown_study_kind_names_the_registered_ones():
    with pytest.raises(KeyError, match=r"no study kind 'evp_acuracy'; the registered kinds are evp_accuracy, "):
        registry.study("evp_acuracy")
