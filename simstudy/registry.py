"""The registry of study kinds, and the loading of third-party plug-ins.

A study kind is one module that declares a :class:`Study` -- its typed options (a schema, see
:mod:`simstudy.schema`), its cross-checks, the function that runs it, the figure and the console headline --
and calls :func:`register_study` once. Everything else finds it here: the config layer validates
``study.kind`` and the study's options against it, the CLI draws its figure and logs its headline, a sweep
picks its headline measure (:class:`Headline`). The built-in kinds are the modules of
:mod:`simstudy.studies`, imported the first time the registry is asked.

Third-party plug-ins
--------------------
A package registers its studies, estimators, distributions and band methods through the entry-point group
``simstudy.plugins``: each entry point names a module (imported: it registers at import) or a function
(called without arguments: it registers). In ``pyproject.toml``::

    [project.entry-points."simstudy.plugins"]
    my_package = "my_package.simstudy_plugin"

Modules listed in the environment variable ``SIMSTUDY_PLUGINS`` (comma-separated, importable from the working
directory) are loaded the same way, for plug-ins not packaged. :func:`load_plugins` loads both once per process;
a plug-in that fails to load is a :class:`~simstudy.plugins.PluginError` naming it, in one line.

Example
-------
>>> sorted(study_kinds())[:3]
['band_coverage', 'band_triviality', 'band_width']
>>> study("band_triviality").options.__name__
'Options'
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

__all__ = [
    "Study",
    "Headline",
    "register_study",
    "study",
    "study_kinds",
    "load_plugins",
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
    "figure_function",
]

#: The entry-point group through which installed packages register plug-ins.
ENTRY_POINT_GROUP = "simstudy.plugins"
#: Environment variable: comma-separated modules (importable from the working directory) loaded as plug-ins.
PLUGINS_ENV = "SIMSTUDY_PLUGINS"


@dataclass(frozen=True)
class Headline:
    """What a sweep's faceted figure shows of a stacked summary (:func:`simstudy.sweeps.headline`).

    The rows matching every ``where`` pair are drawn: ``estimate`` against column ``x``, one line per value of
    column ``hue``, the y-axis labelled ``ylabel``. A study declares it as :attr:`Study.sweep`.

    Parameters
    ----------
    where : dict of str to object
        Column -> value: the rows kept (all pairs must match), e.g. ``{"measure": "mse"}``. ``{}`` keeps
        every row.
    x : str
        The column on the x-axis (e.g. ``"n"``, the budget in trials).
    hue : str
        The column whose values are the lines (e.g. ``"estimator"``).
    ylabel : str
        The y-axis label: the measure and its units (e.g. ``"MSE"``).

    Examples
    --------
    >>> Headline({"measure": "mse"}, "n", "estimator", "MSE")
    Headline(where={'measure': 'mse'}, x='n', hue='estimator', ylabel='MSE')
    >>> study("evp_accuracy").sweep == Headline({"measure": "mse"}, "n", "estimator", "MSE")
    True
    """

    where: dict
    x: str
    hue: str
    ylabel: str


@dataclass(frozen=True)
class Study:
    """A study kind: what the registry knows of it, given once to :func:`register_study`.

    A frozen dataclass; its fields are the constructor's parameters.

    Parameters
    ----------
    kind : str
        The name ``study.kind`` selects (an identifier).
    options : type
        Its schema: a frozen dataclass of :func:`simstudy.schema.option` fields, the defaults' only home.
        Every study's schema includes ``reps``, ``chunk_reps`` and ``save_replicates`` (subclass
        :class:`simstudy.config.StudyOptions`).
    run : callable
        ``run(config, out_dir) -> StudyResult``: ``config`` a validated :class:`simstudy.config.Config` (its
        options at ``config.study.options``), ``out_dir`` a :class:`pathlib.Path`; it returns what
        :func:`simstudy.studies.base.finish` returns.
    figure : str or callable
        ``figure(summary, title=None) -> matplotlib Figure`` of the tidy summary, or its import path (resolved
        only when a figure is drawn, so the registry never imports matplotlib).
    headline : callable or None, optional
        ``headline(summary) -> str``: the numbers a reader checks first, logged after the run. Default ``None``
        (nothing logged).
    sweep : Headline or None, optional
        What a sweep's faceted figure shows. Default ``None``: the first measure against the first of ``n, k,
        B, budget, nominal, confidence`` the summary has (:func:`simstudy.sweeps.headline`).
    check : callable or None, optional
        ``check(config)``: cross-checks of the whole config (e.g. the number of distributions), raising
        :class:`~simstudy.schema.ConfigError` in one line; runs at parse time, before any compute. Default
        ``None``.
    continuous : bool, optional
        Needs continuous distributions (no atoms); default ``False``.
    plugin_estimators : bool, optional
        Takes plug-in estimators (``+estimators.NAME._target_=...``) beside the built-in ones; default ``False``.
    summary : str
        One line for ``--help`` (default ``""``).

    See Also
    --------
    register_study : registers it.
    simstudy.studies.base.run_chunks : the chunked run a ``run`` function builds on.

    Examples
    --------
    >>> spec = study("evp_accuracy")
    >>> spec.kind, spec.options.__name__, spec.figure.__name__, spec.plugin_estimators
    ('evp_accuracy', 'Options', 'evp_accuracy_figure', True)
    >>> spec.summary
    'bias, variance and MSE of expected-maximum estimators (Dodge et al. 2021, Figure 1)'
    """

    kind: str
    options: type
    run: Callable
    figure: str | Callable
    headline: Callable | None = None
    sweep: Headline | None = None
    check: Callable | None = None
    continuous: bool = False
    plugin_estimators: bool = False
    summary: str = ""


_STUDIES: dict[str, Study] = {}
_LOADED = {"builtin": False, "plugins": False}


def register_study(spec: Study) -> Study:
    """Register a study kind (once; registering the same spec again is a no-op).

    A study module calls it at import time; a plug-in package's entry point imports that module
    (:func:`load_plugins`). ``study.kind=KIND`` in a config then selects it.

    Parameters
    ----------
    spec : Study
        The study: its ``kind`` an identifier not taken, its ``options`` a dataclass schema with ``reps`` and
        ``chunk_reps`` fields.

    Returns
    -------
    Study
        ``spec``, so a module may write ``STUDY = register_study(Study(...))``.

    Raises
    ------
    ValueError
        If the kind is not an identifier, its options are not a dataclass with ``reps`` and ``chunk_reps``
        fields, or another study (another ``run`` or ``options``) already took the name; the message names
        the kind.

    Examples
    --------
    >>> spec = study("band_triviality")
    >>> register_study(spec) is spec  # the same spec again: a no-op
    True
    >>> register_study(Study("evp_accuracy", spec.options, run=print, figure="math.sqrt"))
    Traceback (most recent call last):
    ...
    ValueError: study kind 'evp_accuracy' is already registered (by simstudy.studies.evp_accuracy)
    """
    import dataclasses

    if not isinstance(spec.kind, str) or not spec.kind.isidentifier():
        raise ValueError(f"a study kind must be an identifier, got {spec.kind!r}")
    if not dataclasses.is_dataclass(spec.options) or not {"reps", "chunk_reps"} <= {
        f.name for f in dataclasses.fields(spec.options)
    }:
        raise ValueError(
            f"study {spec.kind}: options must be a dataclass schema subclassing "
            f"simstudy.config.StudyOptions (fields reps, chunk_reps, ...), got {spec.options!r}"
        )
    old = _STUDIES.get(spec.kind)
    if old is not None and (old.run, old.options) != (spec.run, spec.options):
        raise ValueError(f"study kind {spec.kind!r} is already registered (by {old.run.__module__})")
    _STUDIES[spec.kind] = spec
    return spec


def _load_builtin() -> None:
    if not _LOADED["builtin"]:
        _LOADED["builtin"] = True
        importlib.import_module("simstudy.studies")  # each module registers itself


def study(kind: str) -> Study:
    """The registered study ``kind`` (built-in kinds and loaded plug-ins).

    The built-in kinds are imported on the first call; an unknown kind loads the plug-ins
    (:func:`load_plugins`) before giving up.

    Parameters
    ----------
    kind : str
        A study kind, e.g. ``"evp_accuracy"`` (see :func:`study_kinds`).

    Returns
    -------
    Study
        Its registered spec.

    Raises
    ------
    KeyError
        If no study of that kind is registered, even after loading the plug-ins; the message lists the
        registered kinds.

    Examples
    --------
    >>> study("band_coverage").kind
    'band_coverage'
    >>> study("toy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "no study kind 'toy'; the registered kinds are evp_accuracy, wrong_conclusions, ..."
    """
    _load_builtin()
    if kind not in _STUDIES:
        load_plugins()
    if kind not in _STUDIES:
        raise KeyError(f"no study kind {kind!r}; the registered kinds are {', '.join(_STUDIES)}")
    return _STUDIES[kind]


def study_kinds() -> tuple[str, ...]:
    """Every registered study kind, built-in ones first, in registration order.

    Loads the built-in kinds and the plug-ins (:func:`load_plugins`) if they were not yet loaded.

    Returns
    -------
    tuple of str
        The kinds ``study.kind`` may name.

    Examples
    --------
    >>> kinds = study_kinds()
    >>> kinds[:3]
    ('evp_accuracy', 'wrong_conclusions', 'band_coverage')
    >>> "model_selection" in kinds
    True
    """
    _load_builtin()
    load_plugins()
    return tuple(_STUDIES)


def figure_function(spec: Study) -> Callable:
    """The study's figure function (imported from its path if it was given as one).

    Parameters
    ----------
    spec : Study
        A registered study (or any :class:`Study`).

    Returns
    -------
    callable
        ``figure(summary, title=None) -> matplotlib.figure.Figure``: ``spec.figure`` itself if it is callable,
        else the object its import path names.

    Raises
    ------
    simstudy.plugins.PluginError
        If ``spec.figure`` is a path that does not import (no such module or attribute); the message names
        ``study KIND: figure``.

    Examples
    --------
    >>> spec = Study("toy", study("evp_accuracy").options, run=print, figure="math.sqrt")
    >>> figure_function(spec)
    <built-in function sqrt>
    """
    if callable(spec.figure):
        return spec.figure
    from simstudy.plugins import import_target

    return import_target(spec.figure, key=f"study {spec.kind}: figure")


def _entry_points() -> list:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _load_one(name: str, load: Callable[[], Any]) -> None:
    from simstudy.plugins import PluginError, _one_line

    try:
        obj = load()
        if callable(obj) and not isinstance(obj, type):
            obj()
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"plug-in {name} failed to load: {_one_line(exc)}") from None


def load_plugins() -> list[str]:
    """Load every plug-in of the ``simstudy.plugins`` entry-point group and of ``$SIMSTUDY_PLUGINS``, once.

    Each entry point is loaded (a module: imported; a function: then called without arguments), then each
    module of ``$SIMSTUDY_PLUGINS`` is imported with the working directory importable. :func:`study` and
    :func:`study_kinds` call it, so a user rarely needs to.

    Returns
    -------
    list of str
        The plug-ins loaded by this call (entry points as ``distribution:name``, modules by name); empty if
        they were loaded before.

    Raises
    ------
    simstudy.plugins.PluginError
        ``plug-in NAME failed to load: ...`` (one line) for the first one that raises while loading; a
        :class:`~simstudy.plugins.PluginError` the plug-in raised itself propagates unchanged.

    Examples
    --------
    >>> _ = load_plugins()  # the first call in a process loads them
    >>> load_plugins()  # later calls do nothing
    []
    """
    if _LOADED["plugins"]:
        return []
    _LOADED["plugins"] = True
    _load_builtin()
    loaded = []
    for ep in _entry_points():
        dist = getattr(getattr(ep, "dist", None), "name", None)
        label = f"{dist}:{ep.name}" if dist else ep.name
        _load_one(f"{label} ({ep.value})", ep.load)
        loaded.append(label)
    for module in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        from simstudy.plugins import _on_path

        _on_path(os.getcwd())
        _load_one(f"{module} (from {PLUGINS_ENV})", partial(importlib.import_module, module))
        loaded.append(module)
    return loaded
