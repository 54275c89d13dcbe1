"""The kernels are pure (issue 26): every module of :mod:`simstudy.stats` imports only numpy, scipy, the standard
library and other kernels -- nothing else of simstudy (no config, plug-ins, files or distributions) and no
pandas, matplotlib or Hydra. Checked on the source (an AST walk), so imports inside functions count too, and no
kernel imports by name (issue 35: no way up, not even a module ``__getattr__`` keeping an old name).
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
def test_no_kernel_imports_by_name(path):
    # importlib.import_module("simstudy....") and the like are invisible to the import graph: a kernel has none.
    calls = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__", "find_spec")
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
        ("simstudy.io:ChunkStore", "simstudy.engine.chunks:ChunkStore"),
        ("simstudy.io:RunDirConflict", "simstudy.engine.chunks:RunDirConflict"),
        ("simstudy.io:claim_run_dir", "simstudy.engine.claims:claim_run_dir"),
    ],
)
def test_a_name_that_moved_lives_in_one_place(old, new):
    # issue 35 removed the second names: the old module no longer answers for a name that lives above it
    import importlib

    (old_module, old_name), (new_module, new_name) = (s.split(":") for s in (old, new))
    assert hasattr(importlib.import_module(new_module), new_name)
    assert not hasattr(importlib.import_module(old_module), old_name), f"{old} still imports"
