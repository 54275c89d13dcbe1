"""Every public function and class has a numpydoc docstring a reader can use: Parameters, Returns, Raises
where it validates, and an Example, checked by numpydoc's own validator.

Public means listed in its module's ``__all__`` (the API reference in ``docs/api`` is generated from the same
lists). The Examples run as doctests in the suite (``--doctest-modules`` in pyproject.toml), so a wrong
number in one fails there; this file checks that every public name has one and that none is skipped.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import simstudy  # noqa: E402

#: numpydoc's checks every public name must pass (``numpydoc.validate.ERROR_MSGS`` says what each means).
REQUIRED = {
    "GL08": "no docstring",
    "PR01": "a parameter is not documented",
    "PR02": "a documented parameter is not in the signature",
    "PR04": "a parameter has no type",
    "PR07": "a parameter has no description",
    "RT01": "no Returns section",
    "RT03": "a return value has no description",
    "YD01": "no Yields section",
    "EX01": "no Examples section",
}


def _public_modules() -> list[str]:
    names = ["simstudy"]
    for info in pkgutil.walk_packages(simstudy.__path__, "simstudy."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def public_names() -> list[tuple[str, object]]:
    """(qualified name, object) of every function and class in a public module's ``__all__``, where defined."""
    out = []
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module_name:
                out.append((f"{module_name}.{name}", obj))
    return out


PUBLIC = public_names()


def _raises(obj) -> bool:
    """Whether the function (a class: its ``__init__`` and ``__post_init__``) raises an error itself."""
    targets = [obj]
    if inspect.isclass(obj):
        targets = [vars(obj)[m] for m in ("__init__", "__post_init__") if m in vars(obj)]
    for target in targets:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
        except (OSError, TypeError):
            continue
        for node in ast.walk(tree):
            # A bare `raise` re-raises what a callee raised; NotImplementedError marks an abstract method.
            if isinstance(node, ast.Raise) and node.exc is not None and "NotImplementedError" not in ast.unparse(node.exc):
                return True
    return False


def test_the_public_api_is_not_empty():
    # A regression in public_names() (say, every obj.__module__ check failing) would pass the tests below vacuously.
    assert len(PUBLIC) > 100
    assert "simstudy.stats.estimators.expected_max" in dict(PUBLIC)


@pytest.mark.parametrize("name", [name for name, _ in PUBLIC])
def test_numpydoc_sections(name):
    errors = [(code, msg) for code, msg in numpydoc_validate.validate(name)["errors"] if code in REQUIRED]
    assert not errors, f"{name}: " + "; ".join(f"{code} {msg}" for code, msg in errors)


@pytest.mark.parametrize("name", [name for name, _ in PUBLIC])
def test_raises_is_documented_where_it_validates(name):
    obj = dict(PUBLIC)[name]
    if not _raises(obj) or issubclass_exception(obj):
        return
    doc = inspect.getdoc(obj) or ""
    assert "Raises\n------" in doc, f"{name} raises but its docstring has no Raises section"


@pytest.mark.parametrize("name", [name for name, _ in PUBLIC])
def test_examples_run(name):
    doc = inspect.getdoc(dict(PUBLIC)[name]) or ""
    assert ">>> " in doc, f"{name}: its Examples section has no doctest"
    assert "doctest: +SKIP" not in doc, f"{name}: a skipped example checks nothing"


def issubclass_exception(obj) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)
