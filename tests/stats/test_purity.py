"""The kernels are pure (issue 26): every module of :mod:`simstudy.stats` imports only numpy, scipy, the standard
library and other kernels -- nothing else of simstudy (no config, plug-ins, files or distributions) and no
pandas, matplotlib or Hydra. Checked on the source (an AST walk), so imports inside functions count too.

The one sanctioned way up is a module-level ``__getattr__`` that imports by name (``importlib.import_module``)
to keep a name that moved up importable from its old place; no kernel function calls it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import simstudy.stats

ROOT = Path(simstudy.stats.__file__).parent
MODULES = sorted(ROOT.rglob("*.py"))
#: Third-party packages a kernel may import (beside the standard library).
ALLOWED = {"numpy", "scipy"}
#: Packages a kernel must never import, even inside a function (they are slow to import, or above the kernels).
FORBIDDEN = {"pandas", "matplotlib", "hydra", "omegaconf", "joblib", "pyarrow"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import statement in the file, at any depth."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
    return out


def test_every_kernel_module_is_found():
    names = {_module_name(p) for p in MODULES}
    assert {"simstudy.stats.truth", "simstudy.stats.boundary", "simstudy.stats.selection._arms"} <= names


@pytest.mark.parametrize("path", MODULES, ids=_module_name)
def test_a_kernel_imports_only_kernels_numpy_scipy_and_the_standard_library(path):
    import sys

    bad = []
    for line, name in _imports(path):
        top = name.split(".")[0]
        if top == "simstudy":
            if not (name == "simstudy.stats" or name.startswith("simstudy.stats.")):
                bad.append(f"line {line}: {name} (above the kernels)")
        elif top in FORBIDDEN:
            bad.append(f"line {line}: {name}")
        elif top not in ALLOWED and top != "__future__" and top not in sys.stdlib_module_names:
            bad.append(f"line {line}: {name} (not numpy, scipy or the standard library)")
    assert not bad, f"{_module_name(path)} imports " + "; ".join(bad)


@pytest.mark.parametrize("path", MODULES, ids=_module_name)
def test_imports_by_name_only_in_a_module_getattr(path):
    # importlib.import_module("simstudy....") is invisible to the import graph: allowed only to keep a moved
    # name importable from its old place (a module-level __getattr__), never in a kernel's code.
    tree = ast.parse(path.read_text(), str(path))
    allowed = {
        id(call)
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef) and fn.name == "__getattr__"
        for call in ast.walk(fn)
    }
    calls = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and id(node) not in allowed
    ]
    assert not calls, f"{_module_name(path)} imports by name at line(s) {calls}"


def test_the_import_graph_agrees():
    # grimp sees the same: no chain from a kernel to any other part of simstudy.
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("simstudy", include_external_packages=False)
    kernels = graph.find_descendants("simstudy.stats") | {"simstudy.stats"}
    upward = {
        (m, i)
        for m in kernels
        for i in graph.find_modules_directly_imported_by(m)
        if not (i == "simstudy.stats" or i.startswith("simstudy.stats."))
    }
    assert not upward, sorted(upward)


@pytest.mark.parametrize(
    "old, new",
    [
        ("simstudy.stats.bands:evidence_table", "simstudy.tables:evidence_table"),
        ("simstudy.stats.boundary:cache_dir", "simstudy.engine.ld_cache:cache_dir"),
        ("simstudy.stats.boundary:CacheWarning", "simstudy.engine.ld_cache:CacheWarning"),
        ("simstudy.stats.parametric_fit:fit", "simstudy.distributions.fitting:fit"),
        ("simstudy.stats.parametric_fit:FitResult", "simstudy.distributions.fitting:FitResult"),
        ("simstudy.stats.parametric_fit:parametric_bootstrap", "simstudy.distributions.fitting:parametric_bootstrap"),
        ("simstudy.stats.parametric_fit:BootstrapResult", "simstudy.distributions.fitting:BootstrapResult"),
        ("simstudy.stats.selection:arms_metadata", "simstudy.distributions.generic:arms_metadata"),
        ("simstudy.stats.selection._arms:arms_metadata", "simstudy.distributions.generic:arms_metadata"),
        (
            "simstudy.stats.selection.fixed_confidence:fixed_confidence_runs",
            "simstudy.stats.selection.fixed_confidence_runs:fixed_confidence_runs",
        ),
        ("simstudy.stats.curves:evp_curves", "simstudy.tables:evp_curves"),
        ("simstudy.io:ChunkStore", "simstudy.engine.chunks:ChunkStore"),
        ("simstudy.io:RunDirConflict", "simstudy.engine.chunks:RunDirConflict"),
        ("simstudy.io:claim_run_dir", "simstudy.engine.claims:claim_run_dir"),
        ("simstudy.datasets:read_scores", "simstudy.score_files:read_scores"),
        ("simstudy.distributions:InvalidParameter", "simstudy.stats.errors:InvalidParameter"),
    ],
)
def test_a_name_that_moved_still_imports_from_its_old_module(old, new):
    import importlib

    (old_module, old_name), (new_module, new_name) = (s.split(":") for s in (old, new))
    assert getattr(importlib.import_module(old_module), old_name) is getattr(
        importlib.import_module(new_module), new_name
    )
