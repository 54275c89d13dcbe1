"""String imports made visible: the import graph with an edge for every import of a module by name.

grimp (and so ``lint-imports``) sees ``import x`` and ``from x import y`` only; ``importlib.import_module("x")``,
``__import__("x")`` and ``importlib.util.find_spec("x")`` are invisible to it, so a contract could pass while a
module loads one above it by name. :func:`string_imports` finds such calls by AST and resolves their target
where it is knowable (a string; an f-string, matched against the package's modules; a module-level string
constant; a subscript of a module-level dict of strings); :func:`check` adds an edge for each to grimp's graph
and runs the ``.importlinter`` contracts on that graph through import-linter's own machinery (its
``GRAPH_BUILDER`` setting), and looks for cycles.

Run as a script on any checkout: ``python tests/_string_imports.py [ROOT]`` (ROOT holds ``.importlinter`` and
the package; default: this repository) prints the cycles, the string imports and the contracts' verdict.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The calls that import a module named by their first argument (by the called name's last part).
IMPORTERS = ("import_module", "__import__", "find_spec")


@dataclass(frozen=True)
class StringImport:
    """One call importing a module by name: where it is, what it names, and the modules it can load."""

    module: str  # the importing module
    line: int
    text: str  # the call's source, for messages
    targets: tuple[str, ...]  # the package's modules it can load (empty: outside the package, or not knowable)
    knowable: bool  # False: the argument is computed at run time (a parameter, a table entry passed in)
    function: str  # the enclosing function's qualified name ("" at module level)

    def __str__(self) -> str:
        where = f"{self.module}:{self.line}" + (f" ({self.function})" if self.function else "")
        return f"{where}: {self.text}"


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root`` -> its file."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _module_constants(tree: ast.Module) -> dict[str, object]:
    """The module-level names bound to a string, or to a dict or tuple whose values hold strings."""
    out: dict[str, object] = {}
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    out[target.id] = ast.literal_eval(value)
                except (ValueError, SyntaxError, TypeError):
                    pass
    return out


def _strings(value: object) -> list[str]:
    """Every string a constant holds (a dict's keys and values, a tuple's items), recursively."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (tuple, list, set, frozenset)):
        return [s for v in value for s in _strings(v)]
    return []


def _values(value: object) -> list[str]:
    """The strings a subscript of a constant can give: a dict's values (recursively), a sequence's items."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return _strings(value)


class _Scope:
    """What a call's argument can be resolved from: the module's constants, the enclosing function's
    assignments, and the membership guards (``if name in TABLE:``) around the call."""

    def __init__(self, module: str, constants: dict[str, object]):
        self.module, self.constants = module, constants
        self.assignments: list[dict[str, list[ast.expr]]] = []  # per enclosing function: name -> values bound
        self.guards: list[tuple[str, list[str]]] = []  # (name, the strings it is known to be one of)

    def name(self, name: str, depth: int) -> list[str] | None:
        for guarded, values in reversed(self.guards):
            if guarded == name:
                return [re.escape(v) for v in values]
        if name == "__name__":
            return [re.escape(self.module)]
        for frame in reversed(self.assignments):
            if name in frame and depth < 5:
                out: list[str] = []
                for value in frame[name]:
                    found = self.patterns(value, depth + 1, unpacked=isinstance(value, _Unpacked))
                    if found is None:
                        return None
                    out += found
                return out
        if isinstance(self.constants.get(name), str):
            return [re.escape(self.constants[name])]  # type: ignore[arg-type]
        return None

    def table(self, node: ast.expr) -> list[str] | None:
        """The strings a subscript of ``node`` can give (a module constant, or a dict display of them)."""
        if isinstance(node, ast.Name) and node.id in self.constants:
            return _values(self.constants[node.id])
        if isinstance(node, ast.Dict):
            out: list[str] = []
            for key, value in zip(node.keys, node.values):
                if key is None:  # {**TABLE}
                    inner = self.table(value)
                    if inner is None:
                        return None
                    out += inner
                else:
                    try:
                        out += _strings(ast.literal_eval(value))
                    except ValueError:
                        return None
            return out
        return None

    def patterns(self, node: ast.expr, depth: int = 0, unpacked: bool = False) -> list[str] | None:
        """The regular expressions the value of ``node`` can match, or None when it is not knowable."""
        if isinstance(node, _Unpacked):
            node = node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [re.escape(node.value)]
        if isinstance(node, ast.Name):
            return self.name(node.id, depth)
        if isinstance(node, ast.Subscript):
            values = self.table(node.value)
            if values is None:
                return None
            return [re.escape(v) for v in values if re.fullmatch(r"\.?[\w.]+", v)] or None
        if isinstance(node, ast.JoinedStr):
            pieces: list[list[str]] = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    pieces.append([re.escape(str(part.value))])
                else:
                    inner = self.patterns(part.value, depth + 1) if isinstance(part, ast.FormattedValue) else None
                    pieces.append(inner if inner is not None else [r"[\w.]+"])  # any name: every module it can be
            out = [""]
            for choice in pieces:
                out = [a + b for a in out for b in choice][:500]
            return out
        return None


class _Unpacked(ast.expr):
    """An assignment's value unpacked into several names (``module, attr = TABLE[name]``)."""

    def __init__(self, value: ast.expr):
        super().__init__()
        self.value = value


def _resolve(call: ast.Call, scope: _Scope, is_package: bool) -> list[str] | None:
    """The regular expressions of the absolute module names a call imports, or None when not knowable."""
    if not call.args:
        return None
    patterns = scope.patterns(call.args[0])
    if patterns is None:
        return None
    package_arg = (
        call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "package"), None)
    )
    if package_arg is None:
        return patterns
    if isinstance(package_arg, ast.Name) and package_arg.id == "__package__":
        base = [re.escape(scope.module if is_package else scope.module.rpartition(".")[0])]
    else:
        base = scope.patterns(package_arg)
    if base is None:
        return None
    # a relative name: "." is the package itself (a pattern starting with an escaped dot)
    return [b + p[1:] if p.startswith(r"\.") else p for b in base for p in patterns]


def _bindings(function: ast.AST) -> dict[str, list[ast.expr]]:
    """The values each name is bound to in a function's own body (not in nested functions)."""
    out: dict[str, list[ast.expr]] = {}
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple):
                    for element in target.elts:
                        if isinstance(element, ast.Name):
                            out.setdefault(element.id, []).append(_Unpacked(node.value))
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(_Unpacked(node.iter))
        elif isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(ast.Name(id="<parameter>"))  # a parameter: not knowable
        todo.extend(ast.iter_child_nodes(node))
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, module, is_package, source, constants, modules):
        self.is_package, self.source, self.modules = is_package, source, modules
        self.scope, self.names, self.found = _Scope(module, constants), [], []

    def _function(self, node):
        self.names.append(node.name)
        self.scope.assignments.append(_bindings(node))
        self.generic_visit(node)
        self.scope.assignments.pop()
        self.names.pop()

    def visit_ClassDef(self, node):
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If):
        test = node.test
        guard = None
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Name)
        ):
            table = test.comparators[0]
            values = None
            if isinstance(table, ast.Name) and table.id in self.scope.constants:
                constant = self.scope.constants[table.id]
                values = (
                    [k for k in constant if isinstance(k, str)] if isinstance(constant, dict) else _strings(constant)
                )
            else:
                try:
                    values = _strings(ast.literal_eval(table))
                except ValueError:
                    pass
            if values is not None:
                guard = (test.left.id, values)
        self.visit(node.test)
        if guard:
            self.scope.guards.append(guard)
        for child in node.body:
            self.visit(child)
        if guard:
            self.scope.guards.pop()
        for child in node.orelse:
            self.visit(child)

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in IMPORTERS:
            patterns = _resolve(node, self.scope, self.is_package)
            targets: set[str] = set()
            for pattern in patterns or ():
                targets |= {m for m in self.modules if re.fullmatch(pattern, m)}
            self.found.append(
                StringImport(
                    module=self.scope.module,
                    line=node.lineno,
                    text=ast.get_source_segment(self.source, node) or name,
                    targets=tuple(sorted(targets - {self.scope.module})),
                    knowable=patterns is not None,
                    function=".".join(self.names),
                )
            )
        self.generic_visit(node)


def string_imports(root: Path, package: str) -> list[StringImport]:
    """Every call under ``root/package`` that imports a module by name, with the package's modules it can load.

    Parameters
    ----------
    root : pathlib.Path
        The directory holding the package (a checkout's top).
    package : str
        The top-level package's name.

    Returns
    -------
    list of StringImport
        In file order; ``targets`` lists the package's own modules the call can load (for an f-string, every
        module its pattern matches), ``knowable`` is False when the name is computed at run time.
    """
    files = module_files(root, package)
    out = []
    for module, path in files.items():
        source = path.read_text()
        tree = ast.parse(source)
        finder = _Finder(module, path.name == "__init__.py", source, _module_constants(tree), files)
        finder.visit(tree)
        out.extend(finder.found)
    return out


def with_string_edges(graph, imports: Iterable[StringImport]):
    """``graph`` (grimp's) with an edge for every target of every string import; returns the graph."""
    for found in imports:
        for target in found.targets:
            graph.add_import(importer=found.module, imported=target, line_number=found.line, line_contents=found.text)
    return graph


def cycles(graph, modules: Iterable[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (each sorted), by Tarjan's algorithm."""
    modules = sorted(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & set(modules))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & set(modules)))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


@dataclass
class Verdict:
    """What :func:`check` found: the string imports, the cycles and the contracts' report (import-linter's)."""

    imports: list[StringImport]
    cycles: list[list[str]]
    report: object  # importlinter.application.ports.reporting.Report

    @property
    def broken(self) -> list[tuple[str, list[str]]]:
        """Each broken contract's name with its illegal chains, one line each (``a -> b (line) -> c``)."""

        def chain(links) -> str:
            lines = ",".join(str(n) for n in links[0]["line_numbers"]) if links else ""
            return " -> ".join([links[0]["importer"], *(link["imported"] for link in links)]) + f" (line {lines})"

        out = []
        for contract, result in self.report.get_contracts_and_checks():
            if result.kept:
                continue
            lines = []
            for dependency in result.metadata.get("invalid_dependencies", []):  # a layers contract
                lines += [chain(route["chain"]) for route in dependency["routes"]]
            for chains in result.metadata.get("invalid_chains", []):  # a forbidden contract
                lines += [chain(links) for links in chains["chains"]]
            out.append((contract.name, lines or [repr(result.metadata)]))
        return out


def check(root: Path, config: Path | None = None) -> Verdict:
    """Run ``root``'s ``.importlinter`` contracts on its import graph with the string imports as edges.

    Parameters
    ----------
    root : pathlib.Path
        The directory holding the package and (unless ``config`` is given) its ``.importlinter``; it is put on
        ``sys.path`` first so that grimp finds the package there.
    config : pathlib.Path, optional
        Another contract file.

    Returns
    -------
    Verdict
        The string imports, the cycles between the package's modules (string edges included) and
        import-linter's report (``report.contains_failures``).
    """
    import grimp
    from importlinter import configuration
    from importlinter.adapters.building import GraphBuilder
    from importlinter.application import use_cases
    from importlinter.application.app_config import settings

    config = config or root / ".importlinter"
    package = _root_package(config)
    found = string_imports(root, package)

    built = []

    class StringEdgesBuilder(GraphBuilder):
        """grimp's graph, plus an edge for every string import of the package's modules."""

        def build(
            self, root_package_names, cache_dir, include_external_packages=False, exclude_type_checking_imports=False
        ):
            graph = super().build(root_package_names, None, include_external_packages, exclude_type_checking_imports)
            built.append(with_string_edges(graph, found))
            return graph

    sys.path.insert(0, str(root))
    saved = {m: sys.modules.pop(m) for m in list(sys.modules) if m == package or m.startswith(package + ".")}
    try:
        configuration.configure()
        old = settings.copy()
        settings.configure(GRAPH_BUILDER=StringEdgesBuilder())
        try:
            use_cases._register_built_in_contract_types()
            report = use_cases.create_report(use_cases.read_user_options(str(config)), cache_dir=None)
        finally:
            settings.configure(GRAPH_BUILDER=old.GRAPH_BUILDER)
        # the graph the contracts ran on (import-linter checks each contract on a copy of it)
        graph = built[0] if built else with_string_edges(grimp.build_graph(package, cache_dir=None), found)
        found_cycles = cycles(graph, {m for m in graph.modules if m == package or m.startswith(package + ".")})
    finally:
        sys.path.remove(str(root))
        for m in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[m]
        sys.modules.update(saved)
    return Verdict(found, found_cycles, report)


def _root_package(config: Path) -> str:
    import configparser

    parser = configparser.ConfigParser()
    parser.read(config)
    return parser["importlinter"]["root_package"]


if __name__ == "__main__":
    top = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1]).resolve()
    verdict = check(top)
    print(f"{len(verdict.imports)} string import(s):")
    for found in verdict.imports:
        print(f"  {found}  -> {', '.join(found.targets) or ('(outside)' if found.knowable else '(not knowable)')}")
    print(f"{len(verdict.cycles)} cycle(s) (strongly connected components):")
    for component in verdict.cycles:
        print(f"  {len(component)} modules: {' '.join(component)}")
    for name, lines in verdict.broken:
        print(f"BROKEN {name}: {len(lines)}")
        for line in lines:
            print(f"  {line}")
    sys.exit(1 if verdict.cycles or verdict.report.contains_failures else 0)
