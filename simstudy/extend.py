"""One registry for every extension point: study kinds, commands, estimators, distributions, band methods and
selection algorithms.

Every point is a :class:`Registry`: names mapped to objects, the built-in ones listed in a table of import paths
(``"module:attr"``) with a one-line summary and imported only when asked for, the plug-ins' added by
:meth:`Registry.register` (from their own module, loaded through the entry-point group ``simstudy.plugins`` or
``$SIMSTUDY_PLUGINS`` by :func:`load_plugins`). So ``simstudy --help`` lists every name and summary without
importing a study, and a built-in goes through the same lookup as a plug-in.

======================================  ====================================================================
:class:`Registry`                        the generic registry: register, get, names, summaries, import by
                                         path (with the trust rules), the tiny-input check, fingerprint
:class:`Builtin`                         a built-in entry: its import path and one-line summary
:data:`studies`                          study kinds (:class:`simstudy.registry.Study`)
:data:`commands`                         the data commands (``simstudy curve``, ``bands``, ...)
:data:`estimators`                       expected-maximum estimators (``estimators.NAME.method``)
:data:`distributions`                    score distribution kinds (``distribution.kind``)
:data:`band_methods`                     CDF band methods (``study.methods``)
:data:`selection_algorithms`             fixed-budget and fixed-confidence selection algorithms, by kind
:func:`load_plugins`                     load the installed and listed plug-ins, once
:func:`fingerprint`                      what of a plug-in joins a run's fingerprint
======================================  ====================================================================

The per-point wrappers and contract checks (``PluginEstimator``, ``check_band_method``, ...) are in
:mod:`simstudy.plugins`; the import machinery they share (:func:`~simstudy.plugins.import_target`, the trust
of a stored config, :func:`~simstudy.plugins.source_hash`) in :mod:`simstudy._imports`.

Examples
--------
>>> studies.names()[:3]
('evp_accuracy', 'wrong_conclusions', 'band_coverage')
>>> band_methods.get("nope")
Traceback (most recent call last):
...
KeyError: "no band method 'nope'; the registered band methods are dkw, ks, ld_equal_tailed, ld_highest_density"
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from simstudy._imports import PATH_SOURCES, PluginError, import_target, on_path, one_line, source_hash

__all__ = [
    "Registry",
    "Builtin",
    "studies",
    "commands",
    "estimators",
    "distributions",
    "band_methods",
    "selection_algorithms",
    "SELECTION_KINDS",
    "load_plugins",
    "fingerprint",
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
]

#: The entry-point group through which installed packages register plug-ins.
ENTRY_POINT_GROUP = "simstudy.plugins"
#: Environment variable: comma-separated modules (importable from the working directory) loaded as plug-ins.
PLUGINS_ENV = "SIMSTUDY_PLUGINS"


@dataclass(frozen=True)
class Builtin:
    """A built-in entry of a :class:`Registry`: where it lives and what it does, known without importing it.

    Parameters
    ----------
    path : str
        ``"module:attr"``: the object, imported on first use. When ``attr`` is a mapping (a table of built-ins,
        e.g. :data:`simstudy.stats.selection.FIXED_BUDGET_RUNS`), the entry is its value under the entry's name.
    summary : str
        One line for ``--help``.

    Examples
    --------
    >>> Builtin("simstudy.stats.bands:pointwise_bounds", "Dvoretzky-Kiefer-Wolfowitz").load("dkw").__name__
    'pointwise_bounds'
    """

    path: str
    summary: str

    @property
    def module(self) -> str:
        """The module of :attr:`path`."""
        return self.path.partition(":")[0]

    def load(self, name: str) -> Any:
        """The object :attr:`path` names (for a table, its entry ``name``), imported now."""
        module, _, attr = self.path.partition(":")
        obj = getattr(importlib.import_module(module), attr)
        return obj[name] if isinstance(obj, Mapping) else obj


class Registry:
    """The names of one extension point: built-in ones (a table of import paths) and registered plug-ins.

    Parameters
    ----------
    noun : str
        What an entry is, for messages: ``"band method"``, ``"study kind"``.
    builtins : dict of str to Builtin, optional
        The built-in entries in the order ``--help`` lists them; imported on first :meth:`get`.
    plural : str, optional
        The plural in messages; default ``noun + "s"``.
    path_of : callable or None, optional
        ``path_of(entry) -> str``: the import path of a registered entry (its code: trusted when a stored config
        names it, see :func:`simstudy.plugins.import_target`). Default: the entry itself if it is a string,
        else its first item. ``None``: the entries are objects, not paths.
    builtin_taken : {"refuse", "load"}, optional
        What registering a built-in's name does: ``"refuse"`` (default; ``'NAME' is a built-in NOUN``), or
        ``"load"`` the built-in first (its module registers it itself) and refuse another object.
    taken : str, optional
        The message for a name registered to another object, formatted with ``noun``, ``name`` and ``old``
        (:meth:`describe` of the old entry).
    describe : callable, optional
        ``describe(entry) -> str`` for ``taken``; default :attr:`path_of`.
    check : str or callable, optional
        The point's tiny-input check (:meth:`check`), ``check(name, key=key, **check_kwargs) -> canonical
        name``, or its import path ``"module:attr"`` (imported on first use: the checks live above the
        registries, in :mod:`simstudy.plugins`).
    check_kwargs : dict, optional
        More keyword arguments of ``check`` (e.g. the selection kind).

    Examples
    --------
    >>> points = Registry("point", {"a": Builtin("math:sqrt", "the square root")})
    >>> points.register("b", "math.floor")
    'math.floor'
    >>> points.names(), points.summary("a"), points.get("a")(4.0), points.is_builtin("b")
    (('a', 'b'), 'the square root', 2.0, False)
    >>> points.register("a", "math.ceil")
    Traceback (most recent call last):
    ...
    ValueError: 'a' is a built-in point; choose another name
    >>> points.register("b", "math.ceil")
    Traceback (most recent call last):
    ...
    ValueError: point 'b' is already registered as math.floor
    """

    def __init__(
        self,
        noun: str,
        builtins: dict[str, Builtin] | None = None,
        *,
        plural: str | None = None,
        path_of: Callable[[Any], str] | None = lambda e: e if isinstance(e, str) else e[0],
        builtin_taken: str = "refuse",
        taken: str = "{noun} {name!r} is already registered as {old}",
        describe: Callable[[Any], str] | None = None,
        check: str | Callable[..., str] | None = None,
        check_kwargs: dict | None = None,
    ) -> None:
        self.noun = noun
        self.plural = plural or f"{noun}s"
        self.builtins = dict(builtins or {})
        self._entries: dict[str, Any] = {}
        self._loading: set[str] = set()
        self._path_of = path_of
        self._builtin_taken = builtin_taken
        self._taken = taken
        self._describe = describe or path_of or repr
        self._check = check
        self._check_kwargs = dict(check_kwargs or {})
        PATH_SOURCES.append(self.paths)

    def __repr__(self) -> str:
        return f"<Registry of {self.plural}: {', '.join(self.names())}>"

    def names(self) -> tuple[str, ...]:
        """The built-in names (in their table's order), then the registered ones (in registration order); nothing
        is imported."""
        return (*self.builtins, *(n for n in self._entries if n not in self.builtins))

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` is a built-in entry."""
        return isinstance(name, str) and name in self.builtins

    def summary(self, name: str) -> str:
        """A built-in's one-line summary, or a registered entry's ``summary`` attribute (``""`` if none)."""
        if self.is_builtin(name):
            return self.builtins[name].summary
        return getattr(self._entries.get(name), "summary", "") or ""

    def registered(self) -> dict[str, Any]:
        """The registered (not built-in) entries, by name, in registration order."""
        return {n: e for n, e in self._entries.items() if n not in self.builtins}

    def entry(self, name: Any) -> Any:
        """The registered (not built-in) entry of ``name``, or ``None``; never loads anything."""
        return self._entries.get(name) if isinstance(name, str) and name not in self.builtins else None

    def paths(self) -> set[str]:
        """The import paths of the registered entries (empty when the entries are objects)."""
        if self._path_of is None:
            return set()
        return {self._path_of(e) for e in self.registered().values()}

    def register(self, name: str, obj: Any, *, same: Callable[[Any, Any], bool] | None = None) -> Any:
        """Register ``obj`` as ``name`` (the same object again is a no-op) and return it.

        Parameters
        ----------
        name : str
            The name (the caller checks its form, with the point's own message).
        obj : object
            The entry: an import path, a tuple ``(path, settings)``, or an object (a study's spec).
        same : callable, optional, keyword-only
            ``same(old, new) -> bool``: whether registering ``new`` over ``old`` is the same registration
            (default ``==``).

        Returns
        -------
        object
            ``obj``.

        Raises
        ------
        ValueError
            A built-in's name (or, with ``builtin_taken="load"``, another object than the built-in's), or a name
            registered to another object.
        """
        if name in self.builtins and name not in self._loading:
            if self._builtin_taken == "refuse":
                raise ValueError(f"{name!r} is a built-in {self.noun}; choose another name")
            if self.builtins[name].module not in sys.modules:  # else its module is registering it now
                self.get(name)  # its module registers it
        old = self._entries.get(name)
        if old is not None and not (same or (lambda a, b: a == b))(old, obj):
            raise ValueError(self._taken.format(noun=self.noun, name=name, old=self._describe(old)))
        self._entries[name] = obj
        return obj

    def unregister(self, name: str) -> Any:
        """Remove a registered (not built-in) entry and return it (tests and doctests clean up with it)."""
        if name in self.builtins:
            raise ValueError(f"{name!r} is a built-in {self.noun}; it cannot be removed")
        return self._entries.pop(name)

    def get(self, name: str) -> Any:
        """The entry ``name``: a built-in (imported now, once) or a registered one; an unknown name loads the
        plug-ins (:func:`load_plugins`) before giving up.

        Raises
        ------
        KeyError
            ``no NOUN 'NAME'; the registered PLURAL are ...``: one line listing the valid names.
        """
        if name in self._entries:
            return self._entries[name]
        if self.is_builtin(name):
            self._loading.add(name)
            try:
                obj = self.builtins[name].load(name)
            finally:
                self._loading.discard(name)
            return self._entries.setdefault(name, obj)
        load_plugins()
        if name in self._entries:
            return self._entries[name]
        raise KeyError(f"no {self.noun} {name!r}; the registered {self.plural} are {', '.join(self.names())}")

    def load(self, path: str, *, key: str = "_target_", directory: str | None = None) -> Any:
        """The object an import path ``module.attr`` names (:func:`simstudy.plugins.import_target`: the working
        directory importable; while a stored config is read, only trusted paths)."""
        return import_target(path, directory=directory, key=key)

    def check(self, name: Any, key: str) -> str:
        """The point's check of a name a config gives, before any compute (e.g. a plug-in called on a tiny input):
        its canonical name, or a one-line :class:`~simstudy.plugins.PluginError`."""
        if self._check is None:
            self.get(name)
            return name
        check = self._check
        if isinstance(check, str):
            module, _, attr = check.partition(":")
            check = getattr(importlib.import_module(module), attr)
        return check(name, key=key, **self._check_kwargs)

    def fingerprint(self, name: str) -> dict | None:
        """What of entry ``name`` joins a run's fingerprint: ``None`` for a built-in (its fingerprint never
        changes), else :func:`fingerprint` of its path and settings."""
        if self.is_builtin(name) or self._path_of is None:
            return None
        entry = self.entry(name)
        path, settings = (entry, ()) if isinstance(entry, str) else (entry[0], entry[1])
        return fingerprint(path, settings)


def fingerprint(target: str, kwargs=(), directory: str | None = None) -> dict:
    """What fixes a plug-in's numbers besides its name: its path, keyword arguments and source digest.

    Parameters
    ----------
    target : str
        The import path ``module.attr``.
    kwargs : sequence of (str, value) pairs, optional
        Its keyword arguments.
    directory : str, optional
        Where it is imported from (default: the working directory).

    Returns
    -------
    dict
        ``{"target": path, "kwargs": [[key, value], ...], "source": digest}`` (:func:`simstudy.plugins.source_hash`:
        an edited plug-in never resumes the chunks of the old one).

    Examples
    --------
    >>> sorted(fingerprint("simstudy.stats.bands.pointwise_bounds"))
    ['kwargs', 'source', 'target']
    """
    return {
        "target": target,
        "kwargs": [list(kv) for kv in kwargs],
        "source": source_hash(target, directory=directory),
    }


def _builtins(module: str, table: dict[str, str], attr: str | None = None) -> dict[str, Builtin]:
    """Built-in entries of one module: name -> summary, each at ``module:attr`` (default ``module:name``)."""
    return {name: Builtin(f"{module}:{attr or name}", summary) for name, summary in table.items()}


_STUDY_KINDS = "simstudy.studies"
#: The built-in study kinds, in the order ``--help`` lists them: each module's ``STUDY`` (it registers itself).
studies = Registry(
    "study kind",
    {
        kind: Builtin(f"{_STUDY_KINDS}.{kind}:STUDY", summary)
        for kind, summary in {
            "evp_accuracy": "bias, variance and MSE of expected-maximum estimators (Dodge et al. 2021, Figure 1)",
            "wrong_conclusions": "how often each estimator ranks two models the wrong way round (Dodge et al. 2021, "
            "Figure 2)",
            "band_coverage": "coverage of simultaneous CDF and tuning-curve bands in simulation (Lourie et al. §5.2)",
            "band_triviality": "the budget beyond which the upper tuning-curve band is trivial, against n (Lourie et "
            "al. §5.5; exact)",
            "bootstrap_coverage": "pointwise coverage of percentile-bootstrap bands for the mean tuning curve "
            "(Lourie et al. §5.1)",
            "band_width": "average tuning-curve bands and widths by band method, shape and kind (Lourie et al. "
            "§5.3-5.4)",
            "model_selection": "fixed-budget model selection: how often each algorithm picks the best (Moss et al. "
            "§5.1)",
            "fixed_confidence": "fixed-confidence model selection: evaluations needed and % correct (Moss et al. §5.2)",
            "sample_disagreement": "how often two random samples of a pair's runs disagree whether the second model "
            "ever beats the first (Lourie et al. Figure 1)",
            "parametric_extrapolation": "how far the fitted noisy quadratic law extrapolates random search: error "
            "and bootstrap coverage of its tuning curves up to k = 100 n, against the exact truth (Lourie, He & Cho "
            "2025)",
            "field_audit": "tuning-curve estimators, bands and extrapolation on the 15 public benchmark populations: "
            "exact bias, coverage, fit errors, samples per step (issue 27)",
        }.items()
    },
    plural="kinds",
    path_of=None,
    builtin_taken="load",
    taken="{noun} {name!r} is already registered (by {old})",
    describe=lambda spec: spec.run.__module__,
)

#: The commands (``simstudy COMMAND``), one module each in :mod:`simstudy.commands`, each module's ``COMMAND`` (a
#: :class:`simstudy.registry.Command`, imported only when the command runs or explains itself); ``simstudy --help``
#: lists them in this order with these summaries. A new command is its module plus one line here.
commands = Registry(
    "command",
    {
        name: Builtin(f"simstudy.commands.{name}:COMMAND", summary)
        for name, summary in {
            "curve": "expected best score against tuning budget (EVP curves, +/- 1 SD) of your own results",
            "bands": "simultaneous confidence bands for the tuning curves and score CDFs of your own results",
            "audit": "how far to trust these analyses at your sample size: simulate searches from a fit to your scores",
            "extrapolate": "the tuning curve past your n runs: the noisy quadratic law fitted to your scores' tail, "
            "with bootstrap bands",
            "sources": "what a tuning source holds (Optuna, MLflow, Ray Tune, W&B, SMAC3, HpBandSter, Syne Tune): studies, "
            "trials by state, direction, sampler, and whether the trials read as random search",
            "reproduce": "rerun every catalogued paper result and write REPRODUCTION.md with verdicts",
            "collect": "summary and figures of a sharded run (runner.shard=i/N), or a sweep's stacked summary (-m)",
            "replay": "rerun one failed chunk of a run here, with its full traceback",
            "plan": "replicates and time a precision target (study.precision) needs, per cell and measure, from a "
            "pilot",
            "populations": "public HPO benchmarks as score populations: list them, or export one random search and "
            "its exact truth",
            "report": "rebuild a run's (or sweep's) offline report.html: interactive charts, sortable table, "
            "provenance",
        }.items()
    },
    path_of=None,
    taken="{noun} {name!r} is already registered (by {old})",
    describe=lambda spec: getattr(spec.run, "__module__", repr(spec)),
)

#: The expected-maximum estimators (``estimators.NAME.method``); a plug-in's entry is ``(path, per_sample)``.
estimators = Registry(
    "estimator",
    _builtins(
        "simstudy.stats.estimators",
        {
            "u": "the unbiased estimator U of the expected maximum (Dodge et al. 2021)",
            "v": "the plug-in estimator V of the expected maximum (Dodge et al. 2021)",
            "w": "the estimator W of the expected maximum (Dodge et al. 2021)",
            "bootstrap": "the bootstrap estimate of the expected maximum (Dodge et al. 2019)",
        },
        "expected_max",
    ),
)

#: Score distribution kinds (``distribution.kind``): the built-in kinds are :data:`simstudy.distributions.KINDS`
#: (a table: the builder of each); a plug-in's entry is its class's import path.
distributions = Registry(
    "distribution kind",
    _builtins(
        "simstudy.distributions",
        {
            "truncnorm_bag": "a bag of scores drawn from a truncated normal (Dodge et al. 2021, §3.1)",
            "truncnorm": "a normal truncated to [low, high]",
            "bag": "the scores given, drawn with replacement",
            "empirical": "a model's scores in a shipped data set, drawn with replacement",
            "file": "a model's scores in a score file, drawn with replacement",
            "kde": "a kernel density estimate of a model's scores",
            "kde_atoms": "a kernel density estimate with the repeated scores kept as atoms",
            "scipy": "a continuous scipy.stats distribution",
            "quadratic": "the quadratic law of random search (Lourie, He & Cho 2025)",
            "noisy_quadratic": "the noisy quadratic law of random search (Lourie, He & Cho 2025)",
            "population": "a public HPO benchmark's every configuration and seed, weighted (simstudy[benchmarks])",
        },
        "KINDS",
    )
    | {"target": Builtin("simstudy.plugins:PluginDistribution", "a user's class named by _target_")},
)

#: CDF band methods (``study.methods``); a plug-in's entry is ``(path, kwargs)``.
band_methods = Registry(
    "band method",
    _builtins(
        "simstudy.stats.bands",
        {
            "dkw": "the Dvoretzky-Kiefer-Wolfowitz band",
            "ks": "the exact Kolmogorov-Smirnov band",
            "ld_equal_tailed": "the equal-tailed Learned-Miller-DeStefano band",
            "ld_highest_density": "the highest-density Learned-Miller-DeStefano band",
        },
        "pointwise_bounds",
    ),
    check="simstudy.plugin_bands:check_band_method",
)

#: The selection settings of Moss et al. (2019): fixed-budget algorithms and fixed-confidence proposals.
SELECTION_KINDS = ("fixed_budget", "fixed_confidence")
#: Selection algorithms by kind (``study.algorithms``); a plug-in's entry is ``(path, kwargs)``.
selection_algorithms: dict[str, Registry] = {
    "fixed_budget": Registry(
        "fixed_budget algorithm",
        _builtins(
            "simstudy.stats.selection",
            {
                "sequential_halving": "sequential halving (Karnin et al. 2013)",
                "non_adaptive": "the budget spread evenly over the models",
                "sequential_halving_spend_all": "sequential halving spending the whole budget",
                "sequential_halving_last_round_means": "sequential halving picking by the last round's means",
                "sequential_halving_drop_ceil": "sequential halving dropping the larger half",
                "sequential_halving_first_8": "sequential halving of the first 8 models",
            },
            "FIXED_BUDGET_RUNS",
        ),
        check="simstudy.plugin_selection:check_selection_algorithm",
        check_kwargs={"kind": "fixed_budget"},
    ),
    "fixed_confidence": Registry(
        "fixed_confidence algorithm",
        _builtins(
            "simstudy.stats.selection",
            {
                "ttts": "top-two Thompson sampling",
                "non_adaptive": "every model at every step",
                "batch_thompson": "a batch of Thompson samples",
            },
            "FIXED_CONFIDENCE_PROPOSALS",
        ),
        check="simstudy.plugin_selection:check_selection_algorithm",
        check_kwargs={"kind": "fixed_confidence"},
    ),
}


def entry_points() -> list:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _load_one(name: str, load: Callable[[], Any]) -> None:
    try:
        obj = load()
        if callable(obj) and not isinstance(obj, type):
            obj()
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"plug-in {name} failed to load: {one_line(exc)}") from None


_PLUGINS_LOADED = [False]


def load_plugins() -> list[str]:
    """Load every plug-in of the ``simstudy.plugins`` entry-point group and of ``$SIMSTUDY_PLUGINS``, once.

    Each entry point is loaded (a module: imported; a function: then called without arguments), then each
    module of ``$SIMSTUDY_PLUGINS`` is imported with the working directory importable. A registry's
    :meth:`Registry.get` calls it for a name it does not know, so a user rarely needs to.

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
    if _PLUGINS_LOADED[0]:
        return []
    _PLUGINS_LOADED[0] = True
    loaded = []
    for ep in entry_points():
        dist = getattr(getattr(ep, "dist", None), "name", None)
        label = f"{dist}:{ep.name}" if dist else ep.name
        _load_one(f"{label} ({ep.value})", ep.load)
        loaded.append(label)
    for module in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        on_path(os.getcwd())
        _load_one(f"{module} (from {PLUGINS_ENV})", partial(importlib.import_module, module))
        loaded.append(module)
    return loaded
