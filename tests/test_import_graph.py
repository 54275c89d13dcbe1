"""The package's import graph: no cycle between modules, and ``import simstudy`` loads nothing heavy.

The layer contracts themselves are in ``.importlinter`` (``lint-imports``, run by CI); these two checks are fast
enough for the default lane (the cycle check needs grimp, from the dev extra's import-linter). Function-level imports count (grimp sees them); only
``importlib.import_module("...")`` with a string is invisible to both.
"""

import subprocess
import sys

import pytest

#: What ``import simstudy`` must not load: numpy's heavy friends (each costs a noticeable part of a second).
HEAVY = ("scipy", "pandas", "matplotlib", "hydra", "omegaconf")


def _cycle(graph, modules) -> list[str] | None:
    """One cycle between ``modules`` as a list of module names (first == last), or None."""
    state = dict.fromkeys(modules, 0)  # 0 unseen, 1 on the current path, 2 done
    for root in sorted(modules):
        if state[root]:
            continue
        path, stack = [root], [iter(sorted(graph.find_modules_directly_imported_by(root)))]
        state[root] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif child in state and state[child] == 1:
                return [*path[path.index(child):], child]
            elif child in state and state[child] == 0:
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph.find_modules_directly_imported_by(child))))
    return None


def test_no_import_cycle_between_modules():
    grimp = pytest.importorskip("grimp")  # import-linter's graph builder: the dev extra (CI runs this file again)
    graph = grimp.build_graph("simstudy", include_external_packages=False)
    cycle = _cycle(graph, graph.modules)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_import_simstudy_loads_nothing_heavy():
    code = "import sys, simstudy; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=60).stdout.split())
    assert not loaded & set(HEAVY), f"import simstudy loads {sorted(loaded & set(HEAVY))}"


def test_no_module_is_over_a_thousand_lines():
    # Issue 26: a module that grows past 1,000 lines is split by idea (CONTRIBUTING, "The house").
    from pathlib import Path

    import simstudy

    root = Path(simstudy.__file__).parent
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 1000}
    assert not long, long
