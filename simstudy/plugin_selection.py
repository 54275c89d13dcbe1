"""Plug-in selection algorithms: the fixed-budget and fixed-confidence points of :mod:`simstudy.plugins`.

``study.algorithms`` of the ``model_selection`` and ``fixed_confidence`` studies lists built-in algorithms,
names given by :func:`register_selection_algorithm` and import paths ``module.function`` (the contracts are
in :mod:`simstudy.stats.selection`); the names live in :data:`simstudy.extend.selection_algorithms`. Every
public name here is re-exported by :mod:`simstudy.plugins`, their documented home.

====================================  ======================================================================
:func:`register_selection_algorithm`  give a plug-in algorithm a name
:func:`selection_algorithm_names`     every name a study can list, built-in ones first
:class:`SelectionPlugin`              a plug-in algorithm, pickled by import path, its output checked
:func:`selection_algorithm`           the function behind a name
:func:`selection_settings`            what of a plug-in joins a run's fingerprint
:func:`check_selection_algorithm`     the parse-time check on a tiny input
:func:`selection_algorithm_check`     that check for a study's schema (a one-line ConfigError)
====================================  ======================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy import extend
from simstudy._imports import (
    CHECK_SEED,
    PluginError,
    function,
    import_path,
    one_line,
    refuse_untrusted,
    search_dir,
)
from simstudy.schema import ConfigError, importing

__all__ = [
    "SELECTION_KINDS",
    "register_selection_algorithm",
    "selection_algorithm_names",
    "SelectionPlugin",
    "selection_algorithm",
    "selection_settings",
    "check_selection_algorithm",
    "selection_algorithm_check",
]


#: The kinds of selection algorithm: fixed budget (the ``model_selection`` study) and fixed confidence (the
#: ``fixed_confidence`` study). Their contracts are in :mod:`simstudy.stats.selection`.
SELECTION_KINDS = extend.SELECTION_KINDS
# Registered selection algorithms: kind -> name -> (import path, keyword arguments).
# The check input of a selection algorithm: 3 arms (bags of 4 scores, means 0.25, 0.45, 0.65), 4 runs, and a
# budget of 30 evaluations (fixed budget) or the posteriors after 3 evaluations of each arm (fixed confidence).
_CHECK_ARMS = ((0.1, 0.2, 0.3, 0.4), (0.3, 0.4, 0.5, 0.6), (0.5, 0.6, 0.7, 0.8))
_CHECK_BUDGET, _CHECK_RUNS = 30, 4


def _kind_iv(kind: str) -> str:
    if kind not in SELECTION_KINDS:
        raise ValueError(f"kind must be one of {', '.join(SELECTION_KINDS)}, got {kind!r}")
    return kind


def register_selection_algorithm(kind: str, name: str, target: str | Callable, **kwargs: Any) -> None:
    """Give a plug-in selection algorithm a name, so that ``study.algorithms`` may list ``NAME``.

    Parameters
    ----------
    kind : {"fixed_budget", "fixed_confidence"}
        Which contract the function follows (see :mod:`simstudy.stats.selection`): whole vectorized runs
        ``f(arms, budget, runs, *, rng)`` or a proposal ``propose(loc, scale, df, *, rng)``.
    name : str
        The name; an identifier, not a built-in algorithm's name of that kind.
    target : str or callable
        The import path ``module.function``, or a module-level function (its path is taken; it must be
        importable by that path in worker processes).
    **kwargs
        Keyword arguments passed on every call (plain values: they join the run's fingerprint).

    Raises
    ------
    ValueError
        An unknown kind, a built-in name, a name registered to another target, or a function with no import
        path.

    Examples
    --------
    >>> register_selection_algorithm("fixed_budget", "halving", "simstudy.stats.selection.sequential_halving_runs")
    >>> selection_algorithm_names("fixed_budget")["halving"]
    'simstudy.stats.selection.sequential_halving_runs'
    >>> _ = extend.selection_algorithms["fixed_budget"].unregister("halving")
    """
    _kind_iv(kind)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a selection algorithm's name must be an identifier, got {name!r}")
    target = import_path(target, f"register_selection_algorithm({kind!r}, {name!r}, ...)")
    if not isinstance(target, str) or "." not in target or not all(p.isidentifier() for p in target.split(".")):
        raise ValueError(
            f"register_selection_algorithm({kind!r}, {name!r}, ...): target must be an import path "
            f"module.function or a module-level function, got {target!r}"
        )
    extend.selection_algorithms[kind].register(name, (target, tuple(sorted(kwargs.items()))))


def selection_algorithm_names(kind: str) -> dict[str, str | None]:
    """Every algorithm name of ``kind`` a study can list: built-in ones (``None``) and registered ones (their
    import paths), in that order.

    Parameters
    ----------
    kind : {"fixed_budget", "fixed_confidence"}
        The kind of algorithm (:data:`SELECTION_KINDS`).

    Returns
    -------
    dict of str to str or None
        Name -> ``None`` for a built-in, the import path for a registered one.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`SELECTION_KINDS`.

    Examples
    --------
    >>> list(selection_algorithm_names("fixed_confidence"))
    ['ttts', 'non_adaptive', 'batch_thompson']
    """
    registry = extend.selection_algorithms[_kind_iv(kind)]
    return {**dict.fromkeys(registry.builtins), **{n: t for n, (t, _) in registry.registered().items()}}


@dataclass(frozen=True)
class SelectionPlugin:
    """A plug-in selection algorithm, called with the arguments of its kind's contract.

    Pickled as its fields (import path, kind, keyword arguments, directory): a worker imports the function on
    its first call, so a registered name or a module in the working directory works with any ``n_jobs``. A
    fixed-budget plug-in's output is checked on every call (:func:`simstudy.stats.selection.runs_problem`); a
    fixed-confidence proposal is checked at every step by :func:`simstudy.stats.selection.fixed_confidence_runs`.
    A broken call mid-run fails its chunk, which the runner records for replay.

    Calling it: ``plugin(arms, budget, runs, rng=rng) -> (picks, evaluations)`` for a fixed-budget one
    (``arms`` a sequence of N score distributions, ``budget`` evaluations per run, ``runs`` runs; ``picks``
    int ``(runs,)`` in ``[0, N)``, ``evaluations`` int ``(runs, N)`` with rows summing to at most
    ``budget``), or ``plugin(loc, scale, df, rng=rng) -> which`` for a fixed-confidence proposal (posteriors
    ``(R, N)``; ``which`` int ``(R, k)``, returned as an array unchecked here).

    Parameters
    ----------
    target : str
        ``module.function``.
    kind : {"fixed_budget", "fixed_confidence"}
        Which contract the function follows (:mod:`simstudy.stats.selection`).
    kwargs : tuple of (str, value) pairs, optional
        Keyword arguments passed on every call; default ``()``.
    directory : str, optional
        Where the module was found from (default: the working directory).

    Examples
    --------
    >>> from simstudy.distributions import Bag
    >>> arms = [Bag(np.array([0.1, 0.2, 0.3, 0.4]), name="a"), Bag(np.array([0.5, 0.6, 0.7, 0.8]), name="b")]
    >>> halving = SelectionPlugin("simstudy.stats.selection.sequential_halving_runs", "fixed_budget")
    >>> picks, evaluations = halving(arms, 8, 3, rng=np.random.default_rng(0))  # budget 8, 3 runs
    >>> picks.tolist(), evaluations.tolist()
    ([1, 1, 1], [[4, 4], [4, 4], [4, 4]])
    """

    target: str
    kind: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    directory: str | None = None

    @property
    def function(self) -> Callable:
        return function(self.target, self.directory, "study.algorithms")

    def __call__(self, *args: Any, rng: np.random.Generator) -> Any:
        out = self.function(*args, rng=rng, **dict(self.kwargs))
        if self.kind == "fixed_confidence":
            return np.asarray(out)
        from simstudy.stats.selection import runs_problem

        try:
            picks, evaluations = (np.asarray(x) for x in out)
        except (TypeError, ValueError):
            raise PluginError(
                f"study.algorithms={self.target}: returned {type(out).__name__}; the contract is a "
                f"pair (picks, evaluations)"
            ) from None
        arms, budget, runs = args
        problem = runs_problem(picks, evaluations, runs, len(arms), budget)
        if problem:
            raise PluginError(f"study.algorithms={self.target}: {problem}")
        return picks, evaluations


def selection_algorithm(name: str, kind: str, *, directory: str | None = None) -> Callable:
    """The function behind an algorithm name of ``study.algorithms``: a built-in one (see
    :data:`simstudy.stats.selection.FIXED_BUDGET_RUNS` and :data:`~simstudy.stats.selection.FIXED_CONFIDENCE_PROPOSALS`),
    or a :class:`SelectionPlugin` (picklable by import path) for a registered name or an import path.

    Parameters
    ----------
    name : str
        A canonical name (:func:`check_selection_algorithm`).
    kind : {"fixed_budget", "fixed_confidence"}
        The kind of algorithm (:data:`SELECTION_KINDS`).
    directory : str, optional, keyword-only
        Where a plug-in's module is found from (default: the working directory now, which travels with it).

    Returns
    -------
    callable
        The built-in function, or a :class:`SelectionPlugin` (any other name is taken as an import path; it is
        not imported here).

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`SELECTION_KINDS`.

    Examples
    --------
    >>> selection_algorithm("sequential_halving", "fixed_budget").__name__
    'sequential_halving_runs'
    >>> selection_algorithm("simstudy.stats.selection.sequential_halving_runs", "fixed_budget").kind
    'fixed_budget'
    """
    registry = extend.selection_algorithms[_kind_iv(kind)]
    if registry.is_builtin(name):
        return registry.get(name)
    target, kwargs = registry.entry(name) or (name, ())
    return SelectionPlugin(target, kind, kwargs, search_dir(directory))


def selection_settings(name: str, kind: str) -> dict | None:
    """What fixes a plug-in algorithm's numbers besides its name, for a run's fingerprint.

    Parameters
    ----------
    name : str
        A canonical algorithm name (:func:`check_selection_algorithm`).
    kind : {"fixed_budget", "fixed_confidence"}
        The kind of algorithm (:data:`SELECTION_KINDS`).

    Returns
    -------
    dict or None
        ``{"target": path, "kwargs": [[key, value], ...], "source": digest}`` (:func:`source_hash`) for a
        plug-in; ``None`` for a built-in (whose fingerprint never changes).

    Raises
    ------
    PluginError
        If a plug-in's module does not import.

    Examples
    --------
    >>> selection_settings("ttts", "fixed_confidence") is None
    True
    >>> sorted(selection_settings("simstudy.stats.selection.sequential_halving_runs", "fixed_budget"))
    ['kwargs', 'source', 'target']
    """
    algorithm = selection_algorithm(name, kind)
    if not isinstance(algorithm, SelectionPlugin):
        return None
    return extend.fingerprint(algorithm.target, algorithm.kwargs, algorithm.directory)


def check_selection_algorithm(
    name: str, kind: str, key: str = "study.algorithms", *, trusted: Set[str] | None = None
) -> str:
    """Check one entry of ``study.algorithms`` before any compute and return its canonical name.

    A built-in name is returned as it is. A registered name or an import path ``module.function`` is imported
    and called twice with the same generator on a tiny input: 3 arms (bags of 4 scores) and, for a
    fixed-budget algorithm, ``f(arms, 30, 4, rng=...)``; for a fixed-confidence proposal, ``propose(loc, scale,
    df, rng=...)`` on the posteriors of 4 runs after 3 evaluations of each arm (and on 2 of them, which must
    give the same width).

    Parameters
    ----------
    name : str
        A built-in algorithm, a name given by :func:`register_selection_algorithm`, or ``module.function``.
    kind : {"fixed_budget", "fixed_confidence"}
        The contract it must follow (:data:`SELECTION_KINDS`).
    key : str, optional
        The config key that listed it, for the message; default ``"study.algorithms"``.
    trusted : set of str, optional, keyword-only
        While a stored config is read, the import paths the user trusts
        (:func:`~simstudy.plugins.refuse_untrusted`); default ``None``, the config is the user's own.

    Returns
    -------
    str
        ``name`` (built-in, registered or import path).

    Raises
    ------
    PluginError
        One line naming ``key`` and the target: a name that is none of these, an import error or missing
        attribute, not a function, an exception on the check input, a wrong type, dtype or shape, a pick or
        proposed index out of range, evaluations over the budget, or different output the second time.

    Examples
    --------
    >>> check_selection_algorithm("sequential_halving", "fixed_budget")
    'sequential_halving'
    >>> check_selection_algorithm("simstudy.stats.selection.sequential_halving_runs", "fixed_budget")
    'simstudy.stats.selection.sequential_halving_runs'
    >>> check_selection_algorithm("successive_rejects", "fixed_budget")
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: study.algorithms must be one of sequential_halving, non_adaptive, sequential_halving_spend_all, sequential_halving_last_round_means, sequential_halving_drop_ceil, sequential_halving_first_8 or an import path module.function, got 'successive_rejects'
    >>> check_selection_algorithm("simstudy.stats.selection.propose_all", "fixed_budget")  # a fixed-confidence proposal
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: study.algorithms=simstudy.stats.selection.propose_all: raised AttributeError: 'tuple' object has no attribute 'shape' on the check input (3 arms, budget=30, runs=4)
    """
    names = selection_algorithm_names(kind)
    if name in names and names[name] is None:
        return name
    registered = name in names
    if not registered and not (
        isinstance(name, str) and "." in name and all(p.isidentifier() for p in name.split("."))
    ):
        raise PluginError(f"{key} must be one of {', '.join(names)} or an import path module.function, got {name!r}")
    plugin = selection_algorithm(name, kind)
    assert isinstance(plugin, SelectionPlugin)  # built-in names returned above
    prefix = f"{key}={name}" + (f" ({plugin.target})" if registered else "")
    try:
        refuse_untrusted(plugin.target, key, trusted)  # before the cache: imported earlier is not trusted now
        _ = plugin.function  # the import, so that its failure names the key
    except PluginError as exc:
        raise PluginError(f"{prefix}: {str(exc).split(': ', 1)[-1]}") from None
    check = _check_fixed_budget if kind == "fixed_budget" else _check_fixed_confidence
    problem = check(plugin)
    if problem:
        raise PluginError(f"{prefix}: {problem}")
    return name


def _check_arms() -> tuple:
    from simstudy.distributions import Bag

    return tuple(Bag(np.array(v), name=f"arm{i}") for i, v in enumerate(_CHECK_ARMS))


def _check_fixed_budget(plugin: SelectionPlugin) -> str | None:
    arms, outs = _check_arms(), []
    for _ in range(2):
        try:
            outs.append(plugin(arms, _CHECK_BUDGET, _CHECK_RUNS, rng=np.random.default_rng(CHECK_SEED)))
        except PluginError as exc:
            return str(exc).split(": ", 1)[-1]
        except Exception as exc:
            return (
                f"raised {one_line(exc)} on the check input ({len(arms)} arms, budget={_CHECK_BUDGET}, "
                f"runs={_CHECK_RUNS})"
            )
    if not all(np.array_equal(a, b) for a, b in zip(outs[0], outs[1])):
        return (
            "returned different picks or evaluations for the same generator called twice; draw only from rng "
            "(never from np.random or a generator of your own)"
        )
    return None


def _check_fixed_confidence(plugin: SelectionPlugin) -> str | None:
    from simstudy.stats.posterior import posterior
    from simstudy.stats.selection import proposal_problem

    arms, gen = _check_arms(), np.random.default_rng(CHECK_SEED)
    y = np.stack([a.sample((_CHECK_RUNS, 3), rng=gen) for a in arms], axis=1)  # (runs, arms, 3 evaluations)
    loc, scale, df = posterior(y.sum(axis=-1), (y * y).sum(axis=-1), np.full(y.shape[:2], 3))
    outs = []
    for rows in (_CHECK_RUNS, _CHECK_RUNS, 2):
        try:
            outs.append(plugin(loc[:rows], scale[:rows], df[:rows], rng=np.random.default_rng(CHECK_SEED)))
        except Exception as exc:
            return f"raised {one_line(exc)} on the check input (the posteriors of {rows} runs over {len(arms)} models)"
        problem = proposal_problem(outs[-1], rows, len(arms), np.shape(outs[0])[1] if len(outs) > 1 else None)
        if problem:
            return problem + (" (its width must not depend on the number of runs)" if len(outs) == 3 else "")
    if not np.array_equal(outs[0], outs[1]):
        return (
            "returned different proposals for the same generator called twice; draw only from rng (never "
            "from np.random or a generator of your own)"
        )
    return None


def selection_algorithm_check(kind: str) -> Callable[[str, Any], str]:
    """The check of one entry of a selection study's ``study.algorithms``, for its schema.

    Accepts a built-in algorithm, a registered name or a plug-in's import path, which is imported and called
    on a tiny input when the config is parsed (:func:`simstudy.plugins.check_selection_algorithm`).

    Parameters
    ----------
    kind : {"fixed_budget", "fixed_confidence"}
        The selection setting (Moss et al. 2019): fixed-budget algorithms (model_selection) or
        fixed-confidence proposals (fixed_confidence).

    Returns
    -------
    callable
        The check, ``check(key, value)``, returning the algorithm's canonical name (str); use it as the
        ``item`` of :func:`simstudy.schema.listed`.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: the plug-in check's one line, for a name that is no
        algorithm nor an import path, an import error or an algorithm failing its tiny run.

    References
    ----------
    .. [1] Moss et al. (2019), "FIESTA: Fast IdEntification of State-of-The-Art models using adaptive bandit
       algorithms", ACL 2019.

    Examples
    --------
    >>> from simstudy.plugins import selection_algorithm_check
    >>> check = selection_algorithm_check("fixed_budget")
    >>> check("study.algorithms", "sequential_halving")
    'sequential_halving'
    """

    @importing
    def check(key: str, value: Any, *, trusted: Set[str] | None = None) -> str:
        try:
            return check_selection_algorithm(value, kind, key, trusted=trusted)
        except PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check
