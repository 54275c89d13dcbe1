"""Importing a user's code by ``module.attr`` path: the machinery every extension point shares.

What :mod:`simstudy.extend` (the registries) and :mod:`simstudy.plugins` (the per-point wrappers and
contract checks) build on; the public names are re-exported by :mod:`simstudy.plugins`, their documented home.

=====================  ===================================================================================
:class:`PluginError`   a plug-in that cannot be imported or breaks its contract (one line naming it)
:class:`PluginExit`    a plug-in that called ``sys.exit``
:func:`import_target`  import the object a ``module.attr`` path names, the working directory importable
:func:`source_hash`    a digest of a plug-in's source and of the user's modules it imports
refuse_untrusted       refuse, by name, a path a stored config names that the user did not trust
=====================  ===================================================================================
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Set
from typing import Any

__all__ = ["PluginError", "PluginExit", "import_target", "refuse_untrusted", "source_hash"]


class PluginError(ValueError):
    """A plug-in that cannot be imported or breaks its contract; the message names its ``_target_``.

    Raised when a config is parsed (by :func:`import_target` and the ``check_*`` functions, before any
    compute: the CLI prints its one line and exits with status 2), and during a run by a plug-in's per-call
    checks (:class:`PluginEstimator`, :class:`PluginBand`, :class:`SelectionPlugin`), which fail the chunk.
    A subclass of :class:`ValueError`.

    Examples
    --------
    >>> import_target("nomodule_xyz.f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: _target_=nomodule_xyz.f: no module named 'nomodule_xyz' in the working directory (...) or on sys.path
    >>> issubclass(PluginError, ValueError)
    True
    """

    __module__ = "simstudy.plugins"  # its documented home, which re-exports it (and names it in tracebacks)


class PluginExit(PluginError):
    """A plug-in that called ``sys.exit`` (or raised :class:`SystemExit`) instead of returning or raising.

    Ending the program is never a plug-in's to decide: inside a run it would end the run with no summary (and,
    through :func:`simstudy.run`, the caller's own program). It is turned into this error where the plug-in's
    code is called (import, construction, every call); the command reports it in one line and exits with
    status 2 (bad input: the plug-in needs fixing), and a run's chunks it failed are never summarised.

    Examples
    --------
    >>> import sys
    >>> with no_exit("_target_=my.plugin"):
    ...     sys.exit(3)
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginExit: _target_=my.plugin: called sys.exit(3); a plug-in returns its result or raises an exception, never ends the program
    >>> issubclass(PluginExit, PluginError)
    True
    """

    __module__ = "simstudy.plugins"


@contextlib.contextmanager
def no_exit(where: str) -> Any:
    """Run plug-in code with its ``sys.exit`` turned into :class:`PluginExit` naming ``where``."""
    try:
        yield
    except SystemExit as exc:
        raise PluginExit(
            f"{where}: called sys.exit({exc.code!r}); a plug-in returns its result or raises an exception, never "
            f"ends the program"
        ) from None


def search_dir(directory: str | None) -> str:
    return os.path.abspath(directory if directory is not None else os.getcwd())


def on_path(directory: str) -> None:
    """Put ``directory`` on ``sys.path`` (last: it never shadows an installed module) unless it is there."""
    here = os.path.abspath(directory)
    if not any(os.path.abspath(p or os.curdir) == here for p in sys.path):
        sys.path.append(here)


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: Callables giving the import paths each registry holds (:class:`simstudy.extend.Registry` adds its own):
#: what the user installed and a config names by name, trusted by :func:`refuse_untrusted`.
PATH_SOURCES: list[Callable[[], Any]] = []


def registered_paths() -> set[str]:
    """The import paths of every registered plug-in: code the user installed, which a config names by name."""
    return {path for source in PATH_SOURCES for path in source()}


def refuse_untrusted(path: str, key: str, trusted: Set[str] | None) -> None:
    """Refuse, before it is imported, a plug-in path that a stored config names and the user did not trust.

    A run directory's stored config may come from anyone (``simstudy collect``, ``replay``, a resume): importing
    what it names runs that module's code. Its paths are imported only when the command line names them too
    (``plugins=...``, the ``trusted`` set) or a registered plug-in has them (code the user installed).

    Parameters
    ----------
    path : str
        The import path ``module.attr`` about to be imported.
    key : str
        The config key that named it, for the message (e.g. ``"estimators.top._target_"``).
    trusted : set of str or None
        The paths the user trusts while a stored config is read; ``None`` when the config is the user's own
        (every path imports).

    Raises
    ------
    PluginError
        ``{key}={path}: a plug-in named by a stored config is imported ... only when you name it too: add
        plugins={path} ...`` for a path in neither ``trusted`` nor a registry.

    Examples
    --------
    >>> refuse_untrusted("my_plugins.top", "_target_", None)  # the user's own config
    >>> refuse_untrusted("my_plugins.top", "_target_", {"my_plugins.top"})
    >>> refuse_untrusted("my_plugins.top", "_target_", frozenset())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: _target_=my_plugins.top: a plug-in named by a stored config is imported ...
    """
    if trusted is not None and path not in trusted and path not in registered_paths():
        raise PluginError(
            f"{key}={path}: a plug-in named by a stored config is imported (its code run) only when you name it "
            f"too: add plugins={path} to the command if you trust that code"
        )


def import_target(
    path: str, *, directory: str | None = None, key: str = "_target_", trusted: Set[str] | None = None
) -> Any:
    """Import the object a ``module.attr`` path names, with ``directory`` (default: the working directory)
    importable.

    Parameters
    ----------
    path : str
        ``module.attr`` or ``package.module.attr`` (the attribute may be dotted, e.g. ``mod.Class.method``).
    directory : str, optional
        A directory put on ``sys.path`` (at the end, so it never shadows an installed module) if it is not
        there. Default: the working directory.
    key : str, optional
        The config key that named ``path``, for the error message; default ``"_target_"``.
    trusted : set of str, optional
        While a run directory's stored config is read: the paths the user trusts (``plugins=...``); any other
        path that no registered plug-in has is refused before it is imported (:func:`refuse_untrusted`).
        Default ``None``: the config is the user's own.

    Returns
    -------
    object
        The attribute (a function, a class, any object), imported.

    Raises
    ------
    PluginError
        ``{key}={path}: ...`` with the reason: not a dotted path, no such module, an exception while
        importing it, or no such attribute; or a path neither in ``trusted`` nor registered, refused before
        it is imported.

    Examples
    --------
    >>> import_target("math.sqrt")(9.0)
    3.0
    >>> import_target("math.nope", key="estimators.top._target_")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: estimators.top._target_=math.nope: math has no attribute 'nope'...
    """
    if not isinstance(path, str) or not all(p.isidentifier() for p in path.split(".")) or "." not in path:
        raise PluginError(
            f"{key} must be an import path module.attribute (e.g. my_estimators.best_of_all), got {path!r}"
        )
    refuse_untrusted(path, key, trusted)
    where = search_dir(directory)
    on_path(where)
    parts = path.split(".")
    if parts[0] not in sys.modules:
        importlib.invalidate_caches()  # a module written since the directory was last listed
    for i in range(len(parts) - 1, 0, -1):  # the longest importable prefix is the module
        module_name = ".".join(parts[:i])
        try:
            with no_exit(f"{key}={path}: importing {module_name}"):
                obj = importlib.import_module(module_name)
        except PluginExit:
            raise
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
                continue  # this prefix is not a module: try a shorter one
            raise PluginError(f"{key}={path}: importing {module_name} failed: {one_line(exc)}") from None
        except Exception as exc:
            raise PluginError(f"{key}={path}: importing {module_name} failed: {one_line(exc)}") from None
        for attr in parts[i:]:
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                where_from = getattr(sys.modules[module_name], "__file__", None)
                raise PluginError(
                    f"{key}={path}: {module_name} has no attribute {'.'.join(parts[i:])!r}"
                    + (f" (module file {where_from})" if where_from else "")
                ) from None
        return obj
    raise PluginError(f"{key}={path}: no module named {parts[0]!r} in the working directory ({where}) or on sys.path")


#: How deep :func:`source_hash` follows a plug-in's imports of the user's own modules (a bound, not a limit
#: anyone meets: helpers of helpers of helpers).
_IMPORT_DEPTH = 8


def _is_users(name: str) -> bool:
    """Whether a top-level module name is the user's own: neither the standard library, nor simstudy, nor
    a module of an installed distribution (those are versioned by their installation, not hashed)."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names or name == "simstudy":
        return False
    return name not in _installed_modules()


@functools.lru_cache(maxsize=1)
def _installed_modules() -> frozenset[str]:
    """Top-level module names of the installed distributions (read once: it scans every distribution)."""
    import importlib.metadata

    return frozenset(importlib.metadata.packages_distributions())


def _imported_names(source: bytes, module: str, is_package: bool) -> list[str]:
    """The absolute names of the modules a module's source imports (``import a.b``, ``from a import b``,
    relative imports resolved against ``module``); a name may be a module's attribute, not a module."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    package = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: max(len(package.split(".")) - node.level + 1, 0)] if package else []
                stem = ".".join([*base, *([node.module] if node.module else [])])
            else:
                stem = node.module or ""
            if stem:
                names.append(stem)
                names += [f"{stem}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names


def _module_file(name: str) -> tuple[str, bool] | None:
    """A module's source file and whether it is a package, without importing it; None if it has no source
    (not found, a built-in, an extension) or its name is not importable."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):  # a parent that is not a package; "x.attr" of a module
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return spec.origin, spec.submodule_search_locations is not None


def _local_sources(module: str, origin: str, is_package: bool) -> dict[str, bytes]:
    """The source of ``module`` and of every module it imports, recursively, that is the user's own
    (:func:`_is_users`), by module name; a static walk over the files' import statements, bounded by
    :data:`_IMPORT_DEPTH`, each module read once (cycles end)."""
    sources: dict[str, bytes] = {}
    todo = [(module, origin, is_package, 0)]
    while todo:
        name, path, package, depth = todo.pop()
        if name in sources:
            continue
        try:
            with open(path, "rb") as f:
                sources[name] = f.read()
        except OSError:
            continue
        if depth >= _IMPORT_DEPTH:
            continue
        for imported in _imported_names(sources[name], name, package):
            if imported in sources or not _is_users(imported.partition(".")[0]):
                continue
            found = _module_file(imported)
            if found is not None:
                todo.append((imported, *found, depth + 1))
    return sources


def source_hash(path: str, *, directory: str | None = None) -> str:
    """A short digest of the source of the module holding ``path``'s object, and of the user's own modules it
    imports.

    It joins a run's fingerprint, so that editing a plug-in -- or a helper module it imports -- never resumes
    the chunks its old code computed (the run directory is refused instead, naming what changed). The
    imports are followed statically (the ``import`` statements of each file, recursively, to a bounded depth)
    into every module that is neither the standard library, nor simstudy, nor part of an installed
    distribution: those are the user's own files, which no version number tracks.

    Parameters
    ----------
    path : str
        The plug-in's import path ``module.attr``.
    directory : str, optional
        Where its module is imported from (default: the working directory).

    Returns
    -------
    str
        16 hex digits: of the SHA-256 of the module's source file when it imports none of the user's modules
        (as before helpers were followed, so such a plug-in's runs resume), else of every such module's name
        and source; ``""`` if the source is unknown (a built-in or extension module).

    Raises
    ------
    PluginError
        If ``path`` does not import (see :func:`import_target`).

    Examples
    --------
    >>> len(source_hash("simstudy.stats.estimators.expected_max"))
    16
    >>> source_hash("math.sqrt")  # an extension module: no source
    ''
    """
    obj = import_target(path, directory=directory)
    module = sys.modules.get(getattr(obj, "__module__", None) or "") or inspect.getmodule(obj)
    try:
        origin = inspect.getsourcefile(module)  # type: ignore[arg-type]  # None: TypeError, caught
        with open(origin, "rb") as f:  # type: ignore[arg-type]  # None: TypeError, caught
            own = f.read()
    except (TypeError, OSError):
        return ""
    assert module is not None  # getsourcefile(None) raised TypeError above
    name = module.__name__
    if name.partition(".")[0] == "simstudy":  # versioned with the package: its imports are simstudy's own
        return hashlib.sha256(own).hexdigest()[:16]
    helpers = _local_sources(name, origin, hasattr(module, "__path__"))  # type: ignore[arg-type]  # str here
    helpers.pop(name, None)
    if not helpers:
        return hashlib.sha256(own).hexdigest()[:16]
    h = hashlib.sha256(own)
    for helper in sorted(helpers):
        h.update(b"\0" + helper.encode() + b"\0" + hashlib.sha256(helpers[helper]).digest())
    return h.hexdigest()[:16]


def call_kwargs(fn: Callable) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a builtin or C function without a signature
        return set()


def function(target: str, directory: str | None, key: str) -> Callable:
    """The function an import path names, imported once per process and directory (a worker's first call)."""
    cache = (target, search_dir(directory))
    fn = LOADED.get(cache)
    if fn is None:
        fn = import_target(target, directory=directory, key=key)
        if not callable(fn):
            raise PluginError(f"{key}={target}: is a {type(fn).__name__}, not a function")
        fn = _exit_checked(fn, f"{key}={target}")
        LOADED[cache] = fn
    return fn


def _exit_checked(fn: Callable, where: str) -> Callable:
    """``fn`` with its ``sys.exit`` turned into :class:`PluginExit` (its signature kept: ``rng`` is looked up)."""

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        with no_exit(where):
            return fn(*args, **kwargs)

    return checked


# Functions imported in this process, by (path, directory).
LOADED: dict[tuple[str, str], Callable] = {}


def import_path(target: str | Callable, who: str) -> str:
    """``target`` itself, or the ``module.qualname`` of a module-level function."""
    if not callable(target):
        return target
    module, qualname = getattr(target, "__module__", None), getattr(target, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        raise ValueError(
            f"{who}: {target!r} has no import path (define it in a module, not in __main__ or inside a function)"
        )
    return f"{module}.{qualname}"


#: The seed of every check's tiny input (a plug-in is called on the same input twice: it must agree).
CHECK_SEED = 20240514


def check_input(B: int = 5, reps: int = 3):
    """The tiny input of the estimator and band checks: ``reps`` sorted samples of ``B`` scores in (0, 1)."""
    import numpy as np

    return np.sort(np.random.default_rng(CHECK_SEED).random((reps, B)), axis=1)
