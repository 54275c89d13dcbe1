"""The package's import graph, string imports included: the contracts of ``.importlinter`` hold, no module is in
a cycle, and ``import simstudy`` loads nothing heavy.

grimp (and so ``lint-imports``) sees import statements only, at any depth; ``importlib.import_module("...")`` and
its kind are invisible to it. Issue 35: such a call made the contracts pass while modules loaded others above them
by name. Here every string import is found by AST and added to grimp's graph as an edge
(:mod:`_string_imports`), the contracts run on that graph through import-linter's own machinery, and string
imports of simstudy's own modules are allowed in two places only: the registry's table of built-ins
(``extend.py``) and the package root's lazy names. A synthetic package shows that the check fails when it should.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _string_imports import check, string_imports, with_string_edges

#: What ``import simstudy`` must not load: numpy's heavy friends (each costs a noticeable part of a second).
HEAVY = ("scipy", "pandas", "matplotlib", "hydra", "omegaconf")

ROOT = Path(__file__).resolve().parents[1]

#: The modules that may import simstudy's own modules by name, and why.
ALLOWED = {
    "simstudy": "the package root's lazy names (``simstudy.run``, ``simstudy.estimators``, ...)",
    "simstudy.extend": 'the registry\'s table of built-ins (``Builtin("simstudy.commands.curve:COMMAND", ...)``)',
    "simstudy._imports": "a user's plug-in module, by the name the user gives",
}

#: String imports another part of issue 35 removes; each entry goes when that part is merged.
PENDING: dict[str, str] = {}


@pytest.fixture(scope="module")
def verdict():
    pytest.importorskip("grimp")
    pytest.importorskip("importlinter")
    return check(ROOT)


def test_the_contracts_hold_with_string_imports_as_edges(verdict):
    broken = [f"{name}: {line}" for name, lines in verdict.broken for line in lines]
    assert not verdict.report.contains_failures, "\n".join(broken)


def test_no_import_cycle_between_modules_with_string_imports_as_edges(verdict):
    assert not verdict.cycles, "import cycles: " + "; ".join(" ".join(c) for c in verdict.cycles)


def test_string_imports_of_simstudy_only_in_the_registry_and_the_package_root():
    found = [
        f"{s}  (can load: {', '.join(s.targets) if s.knowable else 'a name computed at run time'})"
        for s in string_imports(ROOT, "simstudy")
        if (s.targets or not s.knowable) and s.module not in ALLOWED and s.module not in PENDING
    ]
    assert not found, "imports by name outside extend.py's table and the package root:\n" + "\n".join(found)


def test_each_pending_string_import_is_still_there():
    # an entry of PENDING whose string import is gone would let a new one in unseen: it goes with it
    loading = {s.module for s in string_imports(ROOT, "simstudy") if s.targets or not s.knowable}
    assert not set(PENDING) - loading, f"remove from PENDING: {sorted(set(PENDING) - loading)}"


def test_the_string_imports_found_are_the_known_ones():
    # the finder itself: it sees the registry's and the root's calls, and resolves the root's names to modules
    found = {s.module: s for s in string_imports(ROOT, "simstudy")}
    assert {"simstudy", "simstudy.extend", "simstudy._imports"} <= set(found)
    root = [s for s in string_imports(ROOT, "simstudy") if s.module == "simstudy"]
    assert {"simstudy.api", "simstudy.stats.estimators"} <= {t for s in root for t in s.targets}


def _toy(tmp_path: Path, bottom: str, top: str = "") -> Path:
    """A package ``toyhouse`` with two layers (``top`` over ``bottom``) and its contract file, in ``tmp_path``."""
    package = tmp_path / "toyhouse"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "top.py").write_text(textwrap.dedent(top))
    (package / "bottom.py").write_text(textwrap.dedent(bottom))
    (package / "helpers.py").write_text("")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = toyhouse\n\n[importlinter:contract:layers]\nname = Toy layers\n"
        "type = layers\nlayers =\n    toyhouse.top\n    toyhouse.bottom | toyhouse.helpers\n"
    )
    return tmp_path


def test_a_string_import_pointing_up_a_layer_breaks_the_contract(tmp_path):
    pytest.importorskip("grimp")
    pytest.importorskip("importlinter")
    root = _toy(
        tmp_path,
        bottom="""
        import importlib

        def later():
            return importlib.import_module("toyhouse.top").VALUE
        """,
        top="VALUE = 1\n",
    )
    result = check(root)
    assert result.report.contains_failures
    assert [line.split(" (")[0] for _, lines in result.broken for line in lines] == ["toyhouse.bottom -> toyhouse.top"]


def test_grimp_alone_does_not_see_it(tmp_path):
    # the reason for this file: without the string edges the same package passes its contract
    grimp = pytest.importorskip("grimp")
    root = _toy(tmp_path, bottom="import importlib\nTOP = importlib.import_module('toyhouse.top')\n")
    sys.path.insert(0, str(root))
    try:
        graph = grimp.build_graph("toyhouse", cache_dir=None)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "toyhouse"]:
            del sys.modules[name]
    assert not graph.find_modules_directly_imported_by("toyhouse.bottom")
    with_string_edges(graph, string_imports(root, "toyhouse"))
    assert graph.find_modules_directly_imported_by("toyhouse.bottom") == {"toyhouse.top"}


def test_a_cycle_through_a_string_import_is_found(tmp_path):
    pytest.importorskip("grimp")
    pytest.importorskip("importlinter")
    root = _toy(
        tmp_path,
        bottom="import importlib\nNAME = 'top'\n\ndef later():\n    return importlib.import_module(f'toyhouse.{NAME}')\n",
        top="from toyhouse import bottom\n",
    )
    result = check(root)
    assert result.cycles == [["toyhouse.bottom", "toyhouse.top"]]


@pytest.mark.parametrize(
    "source, targets",
    [
        ("importlib.import_module('toyhouse.top')", ("toyhouse.top",)),
        ("__import__('toyhouse.top')", ("toyhouse.top",)),
        ("importlib.util.find_spec('toyhouse.top')", ("toyhouse.top",)),
        ("importlib.import_module('.top', __package__)", ("toyhouse.top",)),
        ("importlib.import_module(f'toyhouse.{x}')", ("toyhouse.bottom", "toyhouse.helpers", "toyhouse.top")),
        ("importlib.import_module(TABLE['a'])", ("toyhouse.top",)),
        ("importlib.import_module('numpy')", ()),
    ],
)
def test_each_kind_of_string_import_is_resolved(tmp_path, source, targets):
    root = _toy(tmp_path, bottom="")
    code = f"import importlib, importlib.util\nTABLE = {{'a': 'toyhouse.top'}}\n\ndef f(x):\n    return {source}\n"
    (root / "toyhouse" / "helpers.py").write_text(code)
    (found,) = string_imports(root, "toyhouse")
    assert found.knowable and found.targets == tuple(t for t in targets if t != "toyhouse.helpers")


def test_import_simstudy_loads_nothing_heavy():
    code = "import sys, simstudy; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        ).stdout.split()
    )
    assert not loaded & set(HEAVY), f"import simstudy loads {sorted(loaded & set(HEAVY))}"


def test_no_module_is_over_a_thousand_lines():
    # Issue 26: a module that grows past 1,000 lines is split by idea (CONTRIBUTING, "The house").
    from pathlib import Path

    import simstudy

    root = Path(simstudy.__file__).parent
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 1000}
    assert not long, long
