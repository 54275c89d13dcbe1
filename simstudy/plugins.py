"""Bring your own method: plug-in estimators, score distributions and CDF band methods, imported by
``module.attr`` path.

A config names a plug-in by its import path, ``_target_: my_estimators.best_of_all``, with keyword arguments
next to it. Modules in the working directory import without setting ``PYTHONPATH``: :func:`import_target`
puts the directory on ``sys.path`` when it is missing. Plug-ins travel to worker processes by import path
(:class:`PluginEstimator` and :class:`PluginDistribution` pickle their path, keyword arguments and the
directory they were found from, never the function or object itself), so a worker imports them again and
the results do not depend on ``runner.n_jobs`` or the backend.

Estimator contract
------------------
``f(sorted_scores, n, **kwargs) -> estimates``:

- ``sorted_scores``: float64 array ``(reps, B)``, each row one sample of B scores sorted ascending,
  read-only (copy it before changing it);
- ``n``: int64 array ``(N,)`` of budgets, ``1 <= n <= B``;
- returns an array ``(reps, N)``: the estimated expected maximum of ``n[j]`` scores from each sample, in
  score units, finite, and the same for the same input (deterministic);
- optionally a keyword parameter named ``rng``: it then receives a :class:`numpy.random.Generator`, its own
  stream per chunk of replicates (as the built-in bootstrap's), so a randomized estimator is reproducible.

With ``per_sample: true`` the function takes one sample instead, ``f(scores, n, **kwargs) -> (N,)`` with
``scores`` of shape ``(B,)``, and is looped over the replicates in Python (said in the log with its cost per
replicate).

Every plug-in is checked when the config is parsed, before any compute, by :func:`check_estimator` (or
:func:`check_distribution`): it is imported and called twice on a tiny fixed input; an import error, a
missing attribute, an exception, a wrong shape, a NaN or infinite value, or two different answers to the same
input is a :class:`PluginError` naming the ``_target_`` and what was wrong, in one line.

Registry
--------
:func:`register_estimator` gives a plug-in a method name (``method: top`` in a config then means it);
:func:`estimator_methods` lists the built-in methods and the registered ones. Every point's names live in one
generic registry each (:mod:`simstudy.extend`); the functions here are its per-point front doors.

====================  ==========================================================================================
point                 names (the band and selection ones defined in :mod:`simstudy.plugin_bands` and
                      :mod:`simstudy.plugin_selection`, the shared ones in :mod:`simstudy._imports`)
====================  ==========================================================================================
estimators            :class:`PluginEstimator`, :func:`check_estimator`, :func:`register_estimator`,
                      :func:`estimator_methods`
distributions         :class:`PluginDistribution`, :func:`check_distribution`, :func:`register_distribution`,
                      :func:`distribution_kinds`
band methods          :class:`PluginBand`, :func:`band_method`, :func:`check_band_method`,
                      :func:`register_band_method`
selection algorithms  :class:`SelectionPlugin`, :func:`selection_algorithm`, :func:`check_selection_algorithm`,
                      :func:`register_selection_algorithm`
shared                :func:`import_target`, :func:`refuse_untrusted`, :func:`source_hash`, :class:`PluginError`,
                      :class:`PluginExit`
====================  ==========================================================================================

The band and selection names are defined in their modules and re-exported here, their documented home.

Band method contract
--------------------
``f(sorted_scores, confidence, **kwargs) -> (lower, upper)``, with ``sorted_scores`` float64 ``(reps, n)``
(rows sorted ascending, read-only), ``confidence`` in (0, 1), and ``lower``, ``upper`` float arrays ``(reps,
n)`` or ``(n,)`` in [0, 1], non-decreasing along the last axis, ``lower <= upper``: bounds on ``F(Y_(i))``
and ``F(Y_(i)-)`` holding for every i at once with probability ``confidence``, exactly what
:func:`simstudy.stats.bands.pointwise_bounds` returns for the built-in methods (details in :mod:`simstudy.stats.bands`).

``study.methods`` of the ``band_coverage`` and ``band_width`` studies lists built-in methods, names given by
:func:`register_band_method` and import paths ``module.function``; :func:`check_band_method` checks each on a
tiny input when the config is parsed and returns its canonical name. :func:`band_method` is the one dispatch
from a name to a callable (a built-in one is :class:`BuiltinBand`, whose bounds the studies precompute; a
plug-in is a :class:`PluginBand`, called once per chunk on all its samples and pickled by import path), and
:func:`band_fingerprint` what of the plug-ins joins a run's fingerprint.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy import extend
from simstudy._imports import (  # noqa: F401 -- LOADED: the CLI's and the tests' handle
    CHECK_SEED,
    LOADED,
    PluginError,
    PluginExit,
    call_kwargs,
    check_input,
    function,
    import_path,
    import_target,
    no_exit,
    one_line,
    refuse_untrusted,
    search_dir,
    source_hash,
)
from simstudy.plugin_bands import (
    BuiltinBand,
    PluginBand,
    band_fingerprint,
    band_method,
    band_method_check,
    band_method_names,
    band_output,  # noqa: F401 -- the tests check a band's output with it
    check_band_method,
    register_band_method,
)
from simstudy.plugin_selection import (
    SELECTION_KINDS,
    SelectionPlugin,
    check_selection_algorithm,
    register_selection_algorithm,
    selection_algorithm,
    selection_algorithm_check,
    selection_algorithm_names,
    selection_settings,
)

__all__ = [
    "PluginError",
    "PluginExit",
    "import_target",
    "refuse_untrusted",
    "source_hash",
    "PluginEstimator",
    "check_estimator",
    "estimator_cost",
    "PluginDistribution",
    "check_distribution",
    "register_estimator",
    "estimator_methods",
    "estimator_plugin",
    "BUILTIN_ESTIMATORS",
    "SELECTION_KINDS",
    "register_selection_algorithm",
    "selection_algorithm_names",
    "SelectionPlugin",
    "selection_algorithm",
    "selection_settings",
    "check_selection_algorithm",
    "PluginBand",
    "BuiltinBand",
    "register_band_method",
    "band_method_names",
    "band_method",
    "band_fingerprint",
    "check_band_method",
    "register_distribution",
    "registered_distribution",
    "distribution_kinds",
    "selection_algorithm_check",
    "band_method_check",
]

#: Estimators simstudy computes with its own kernels (:mod:`simstudy.stats.estimators`).
BUILTIN_ESTIMATORS = tuple(extend.estimators.builtins)

# The check input: 3 sorted samples of B = 5 scores in (0, 1) from a fixed generator (check_input), budgets 1,
# 3 and 5.
_CHECK_N = np.array([1, 3, 5], dtype=np.int64)


@dataclass(frozen=True)
class PluginEstimator:
    """A plug-in estimator, called as ``est(sorted_scores, n, rng=None) -> (reps, len(n))``.

    Pickled as its fields (import path, keyword arguments, per-sample flag, directory): a worker imports
    the function itself on its first call. The output is checked on every call (shape and finiteness):
    a plug-in that breaks its contract mid-run fails its chunk, which the runner records for replay.

    Calling it, ``est(sorted_scores, n, rng=None)``:

    - ``sorted_scores``: array_like of float, shape ``(reps, B)``, each row one sample of B scores sorted
      ascending (score units); passed to the function as a read-only float64 array;
    - ``n``: array_like of int, shape ``(N,)``, budgets in trials, ``1 <= n <= B``; passed as read-only int64;
    - ``rng``: a :class:`numpy.random.Generator`, passed on only if the function has a parameter named
      ``rng``;
    - returns a float64 array ``(reps, N)``: the estimated expected maximum of ``n[j]`` scores from each
      sample, in score units. A wrong shape or a NaN or infinite value raises :class:`PluginError` naming the
      target (and the sample and budget of the first bad value).

    Parameters
    ----------
    target : str
        ``module.attr`` of the function ``f(sorted_scores, n, **kwargs)`` (the module docstring's contract).
    kwargs : tuple of (str, value) pairs, optional
        Keyword arguments passed on every call; default ``()``.
    per_sample : bool, optional
        The function takes one sample ``(B,)`` and returns ``(N,)``; it is looped over the rows in Python.
        Default ``False``.
    directory : str, optional
        Where the module was found from (put on ``sys.path`` in a worker); default ``None``, the working
        directory.

    See Also
    --------
    check_estimator : the parse-time check on a tiny input.

    Examples
    --------
    A toy estimator from an importable function: ``numpy.take(sorted_scores, n, axis=1, mode="clip")``, the
    score of rank n + 1 in each sample (the maximum once n + 1 >= B):

    >>> est = PluginEstimator("numpy.take", kwargs=(("axis", 1), ("mode", "clip")))
    >>> est([[0.1, 0.4, 0.9], [0.2, 0.3, 0.5]], [1, 2])  # (reps, B) = (2, 3), N = 2: (2, 2)
    array([[0.4, 0.9],
           [0.3, 0.5]])
    >>> PluginEstimator("numpy.take")([[0.1, 0.4, 0.9], [0.2, 0.3, 0.5]], [1, 2])
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: _target_=numpy.take: returned shape (2,) for 2 samples and 2 budgets; the contract is (2, 2)
    """

    target: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    per_sample: bool = False
    directory: str | None = None

    @property
    def function(self) -> Callable:
        return function(self.target, self.directory, "_target_")

    @property
    def takes_rng(self) -> bool:
        return "rng" in call_kwargs(self.function)

    def __call__(self, sorted_scores: np.ndarray, n: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        fn, kwargs = self.function, dict(self.kwargs)
        if self.takes_rng:
            kwargs["rng"] = rng
        x = np.asarray(sorted_scores, dtype=np.float64).view()
        x.flags.writeable = False  # the samples are shared by every estimator of the study: never changed
        n = np.array(n, dtype=np.int64)
        n.flags.writeable = False
        if self.per_sample:
            rows = [_real(self.target, fn(row, n, **kwargs)) for row in x]
            for row in rows:
                _check_shape(self.target, row, (n.size,), f"for one sample and {n.size} budgets")
            out = np.stack(rows) if rows else np.empty((0, n.size))
        else:
            out = _real(self.target, fn(x, n, **kwargs))
        _check_shape(self.target, out, (x.shape[0], n.size), f"for {x.shape[0]} samples and {n.size} budgets")
        bad = ~np.isfinite(out)
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise PluginError(
                f"_target_={self.target}: returned {out[i, j]} (sample {i}, n={int(n[j])}); estimates must be finite"
            )
        return out


def _real(target: str, value: Any) -> np.ndarray:
    """A plug-in's estimates as float64; complex ones are refused (float64 would silently drop the imaginary
    part, with only a ComplexWarning)."""
    out = np.asarray(value)
    if np.iscomplexobj(out):
        flat = out.ravel()
        first = flat[np.flatnonzero(flat.imag)[0]] if np.any(flat.imag) else flat[0] if flat.size else "()"
        raise PluginError(
            f"_target_={target}: returned complex numbers (e.g. {first}); estimates must be real: return floats"
        )
    return np.asarray(out, dtype=np.float64)


def _check_shape(target: str, out: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    if out.shape != shape:
        raise PluginError(f"_target_={target}: returned shape {out.shape} {what}; the contract is {shape}")


def check_estimator(plugin: PluginEstimator, key: str, *, trusted: Set[str] | None = None) -> None:
    """Import ``plugin`` and call it twice on 3 sorted samples of B = 5 (budgets 1, 3, 5), before any compute.

    The check input is fixed: 3 samples of B = 5 uniform scores in (0, 1), sorted, from a fixed seed, at
    budgets ``n = [1, 3, 5]``; a function taking ``rng`` gets a generator of the same seed on both calls.
    Passing means the plug-in imports and returns finite ``(3, 3)`` estimates, the same both times.

    Parameters
    ----------
    plugin : PluginEstimator
        The plug-in as the config built it (its target, keyword arguments and ``per_sample``).
    key : str
        The config key of the estimator (``estimators.top``), for the message.
    trusted : set of str, optional, keyword-only
        While a stored config is read, the import paths the user trusts (:func:`refuse_untrusted`); default
        ``None``, the config is the user's own.

    Returns
    -------
    None
        When the plug-in passes.

    Raises
    ------
    PluginError
        One line ``{key}._target_={path}: ...``: an import error or missing attribute, not a function, an
        exception raised on the check input, a wrong shape, a NaN or infinite estimate, or a different answer
        the second time (with the same generator, if it takes ``rng``).

    Examples
    --------
    >>> check_estimator(PluginEstimator("numpy.take", (("axis", 1), ("mode", "clip"))), "estimators.top")
    >>> check_estimator(PluginEstimator("numpy.take"), "estimators.top")  # take(x, n): 3 scores, not 3 x 3
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: estimators.top._target_=numpy.take: returned shape (3,) for 3 samples and 3 budgets; the contract is (3, 3)
    """
    prefix = f"{key}._target_={plugin.target}"
    try:
        refuse_untrusted(plugin.target, "_target_", trusted)  # before the cache: imported earlier is not trusted now
        _ = plugin.function  # the import, so that its failure names the key
    except PluginError as exc:
        raise PluginError(f"{key}.{exc}") from None
    x = check_input()
    outs = []
    for _ in range(2):
        try:
            outs.append(plugin(x, _CHECK_N, rng=np.random.default_rng(CHECK_SEED)))
        except PluginError as exc:
            raise PluginError(f"{key}.{exc}") from None
        except Exception as exc:
            raise PluginError(
                f"{prefix}: raised {one_line(exc)} on the check input (3 sorted samples of B=5, "
                f"n=[1, 3, 5]{', per sample' if plugin.per_sample else ''})"
            ) from None
    if not np.array_equal(outs[0], outs[1]):
        raise PluginError(
            f"{prefix}: returned different estimates for the same input called twice; an estimator "
            f"must be deterministic (a randomized one takes an rng parameter and draws only from it)"
        )


def estimator_cost(plugin: PluginEstimator, B: int, n, reps: int = 64) -> float:
    """Seconds per replicate the plug-in takes on ``reps`` sorted uniform samples of ``B`` at budgets ``n``.

    The fastest of three calls, divided by ``reps``; the config layer logs it for a plug-in (a per-sample one
    especially) so that a slow estimator is known before the run.

    Parameters
    ----------
    plugin : PluginEstimator
        The plug-in, already checked (:func:`check_estimator`).
    B : int
        Scores per sample (the study's sample size).
    n : array_like of int, shape (N,)
        Budgets in trials, ``1 <= n <= B``.
    reps : int, optional
        Samples per call; default 64.

    Returns
    -------
    float
        Seconds per replicate (wall clock, so it varies from run to run).

    Examples
    --------
    >>> cost = estimator_cost(PluginEstimator("numpy.take", (("axis", 1), ("mode", "clip"))), 5, [1, 3, 5], reps=4)
    >>> 0 < cost < 1
    True
    """
    x = np.sort(np.random.default_rng(CHECK_SEED).random((reps, B)), axis=1)
    n = np.asarray(n, dtype=np.int64)
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        plugin(x, n, rng=np.random.default_rng(CHECK_SEED))
        best = min(best, time.perf_counter() - start)
    return best / reps


def register_estimator(method: str, target: str | Callable, *, per_sample: bool = False) -> None:
    """Give a plug-in estimator a method name, so that a config may say ``method: NAME``.

    Parameters
    ----------
    method : str
        The name, an identifier; not one of :data:`BUILTIN_ESTIMATORS`.
    target : str or callable
        The import path ``module.attr``, or a module-level function (its path is taken; it must be
        importable by that path in worker processes). Its contract: ``f(sorted_scores, n) -> (reps, N)``
        (the module docstring).
    per_sample : bool, optional, keyword-only
        The function takes one sample ``(B,)`` and returns ``(N,)`` (see the module docstring); default
        ``False``.

    Raises
    ------
    ValueError
        A name that is not an identifier, a built-in name, a name registered to another target, or a
        function with no import path (defined in ``__main__`` or inside a function); the message names it.

    Examples
    --------
    >>> register_estimator("clipped_rank", "numpy.take")
    >>> estimator_methods()["clipped_rank"]
    'numpy.take'
    >>> register_estimator("u", "numpy.take")
    Traceback (most recent call last):
    ...
    ValueError: 'u' is a built-in estimator; choose another name
    >>> _ = extend.estimators.unregister("clipped_rank")
    """
    if not isinstance(method, str) or not method.isidentifier():
        raise ValueError(f"an estimator's method name must be an identifier, got {method!r}")
    target = import_path(target, f"register_estimator({method!r}, ...)")
    extend.estimators.register(method, (target, bool(per_sample)))


def estimator_methods() -> dict[str, str | None]:
    """Every method a config can name: built-in ones (``None``) and registered ones (their import paths).

    Returns
    -------
    dict of str to str or None
        Method name -> ``None`` for a built-in (:data:`BUILTIN_ESTIMATORS`, first) or the import path of a
        registered one (:func:`register_estimator`, in registration order).

    Examples
    --------
    >>> list(estimator_methods())[:4]
    ['u', 'v', 'w', 'bootstrap']
    """
    return {**dict.fromkeys(BUILTIN_ESTIMATORS), **{m: t for m, (t, _) in extend.estimators.registered().items()}}


def registered_estimator(method: str) -> tuple[str, bool] | None:
    """The import path and ``per_sample`` flag of a registered method (``None`` if it is not registered)."""
    return extend.estimators.entry(method)


def estimator_plugin(estimator: str) -> PluginEstimator:
    """The plug-in estimator a name stands for: a registered method's path, else the import path itself.

    What the data commands call for ``estimator=NAME`` (``simstudy curve``, ``simstudy bands``): imported from the
    working directory, as a study's ``estimators.NAME._target_`` is.

    Parameters
    ----------
    estimator : str
        A method registered with :func:`register_estimator`, or an import path ``module.function``.

    Returns
    -------
    PluginEstimator
        Its target and ``per_sample`` flag (a registered method's, else the path, per-sample False).

    Examples
    --------
    >>> plugin = estimator_plugin("numpy.take")
    >>> plugin.target, plugin.per_sample
    ('numpy.take', False)
    """
    import os

    registered = registered_estimator(estimator)
    target, per_sample = registered if registered is not None else (estimator, False)
    return PluginEstimator(target, (), per_sample, os.getcwd())


# --- distributions ------------------------------------------------------------------------------------------

_REQUIRED = ("support", "is_discrete", "sample", "cdf", "ppf")


def register_distribution(kind: str, target: str | Callable) -> None:
    """Give a distribution class a kind name, so that a config may say ``distribution.kind=NAME`` (its keyword
    arguments next to it, as for ``_target_``).

    Parameters
    ----------
    kind : str
        The name, an identifier; not a built-in kind (:data:`simstudy.distributions.KINDS`).
    target : str or type
        The import path ``module.Class``, or a class defined at module level; it implements
        :class:`simstudy.distributions.ScoreDistribution` (see :class:`PluginDistribution`).

    Raises
    ------
    ValueError
        A kind that is not an identifier, a built-in kind, a kind registered to another class, or a class with
        no import path.

    Examples
    --------
    >>> from simstudy.distributions import TruncatedNormal
    >>> register_distribution("my_truncnorm", TruncatedNormal)  # a class: its import path is taken
    >>> registered_distribution("my_truncnorm")
    'simstudy.distributions.laws.TruncatedNormal'
    >>> _ = extend.distributions.unregister("my_truncnorm")
    """
    if not isinstance(kind, str) or not kind.isidentifier():
        raise ValueError(f"a distribution kind must be an identifier, got {kind!r}")
    target = import_path(target, f"register_distribution({kind!r}, ...)")
    extend.distributions.register(kind, target)


def registered_distribution(kind: str) -> str | None:
    """The import path of a registered distribution kind (``None`` if it is not registered).

    Parameters
    ----------
    kind : str
        A distribution kind.

    Returns
    -------
    str or None
        The ``module.Class`` path given to :func:`register_distribution`, or ``None`` (also for a built-in
        kind).

    Examples
    --------
    >>> registered_distribution("truncnorm") is None  # built in, not registered
    True
    """
    return extend.distributions.entry(kind)


def distribution_kinds() -> tuple[str, ...]:
    """The registered distribution kinds (the built-in ones are :data:`simstudy.distributions.KINDS`).

    Returns
    -------
    tuple of str
        The kinds given by :func:`register_distribution`, in registration order (``()`` if none).

    Examples
    --------
    >>> register_distribution("my_truncnorm", "simstudy.distributions.TruncatedNormal")
    >>> "my_truncnorm" in distribution_kinds()
    True
    >>> _ = extend.distributions.unregister("my_truncnorm")
    """
    return tuple(extend.distributions.registered())


class PluginDistribution:
    """A user's :class:`~simstudy.distributions.ScoreDistribution` built from ``_target_`` and keyword arguments.

    It delegates every attribute to the object ``target(**kwargs)`` and pickles as (path, kwargs, directory),
    so a worker process builds the object again by importing it. A class without ``cdf_left`` is taken as
    continuous there (``P(X < x) = P(X <= x)``).

    The object must have ``support`` (a pair ``(low, high)`` of floats, possibly infinite), ``is_discrete``
    (bool), ``sample(size, *, rng)`` (float scores of shape ``size``, drawn only from the
    :class:`numpy.random.Generator` given), ``cdf(x)`` and ``ppf(q)`` (elementwise, probabilities in
    [0, 1]); ``cdf_left(x)`` (``P(X < x)``) if it has atoms. Their outputs are returned as float64 arrays.

    Parameters
    ----------
    target : str
        ``module.attr`` of a class (or a function returning the distribution).
    kwargs : tuple of (str, value) pairs, optional
        Keyword arguments of ``target``; default ``()``.
    name : str, optional
        The label in tables and figures; default the object's ``name`` attribute, else the class name.
    directory : str, optional
        Where the module was found from (default: the working directory).
    trusted : set of str, optional, keyword-only
        While a stored config is read, the import paths the user trusts (:func:`refuse_untrusted`; not kept:
        a built distribution was trusted); default ``None``, the config is the user's own.

    Raises
    ------
    PluginError
        If ``target`` is not trusted, does not import, is not callable, raises when called with ``kwargs``, or builds an object
        missing one of ``support``, ``is_discrete``, ``sample``, ``cdf``, ``ppf``; the message names the target.

    See Also
    --------
    check_distribution : the parse-time check of its outputs.

    Examples
    --------
    >>> d = PluginDistribution("simstudy.distributions.Bag", (("values", (0.2, 0.5, 0.7, 0.9)),))
    >>> d.name, d.support, d.is_discrete  # a bag of 4 scores, drawn with replacement
    ('bag', (0.2, 0.9), True)
    >>> d.sample(5, rng=np.random.default_rng(0)).tolist()
    [0.9, 0.7, 0.7, 0.5, 0.5]
    >>> d.cdf([0.5]).tolist(), d.cdf_left([0.5]).tolist()  # P(X <= 0.5), P(X < 0.5)
    ([0.5], [0.25])
    >>> PluginDistribution("simstudy.distributions.Bag")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: _target_=simstudy.distributions.Bag: Bag() raised TypeError: ...missing 1 required positional argument: 'values'
    """

    def __init__(
        self,
        target: str,
        kwargs: tuple = (),
        name: str | None = None,
        directory: str | None = None,
        *,
        trusted: Set[str] | None = None,
    ):
        self.target, self.kwargs, self.directory = target, tuple(kwargs), search_dir(directory)
        cls = import_target(target, directory=self.directory, trusted=trusted)
        if not callable(cls):
            raise PluginError(f"_target_={target}: is a {type(cls).__name__}, not a class")
        try:
            with no_exit(f"_target_={target}"):
                self.dist = cls(**dict(self.kwargs))
        except PluginExit:
            raise
        except Exception as exc:
            args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs)
            raise PluginError(
                f"_target_={target}: {target.rsplit('.', 1)[-1]}({args}) raised {one_line(exc)}"
            ) from None
        with no_exit(f"_target_={target}"):  # hasattr runs a property's code
            missing = [a for a in _REQUIRED if not hasattr(self.dist, a)]
        if missing:
            raise PluginError(
                f"_target_={target}: the object has no {', '.join(missing)}; a score distribution "
                f"needs {', '.join(_REQUIRED)} (see simstudy.distributions.ScoreDistribution)"
            )
        self.name = name or getattr(self.dist, "name", None) or target.rsplit(".", 1)[-1]

    def __reduce__(self):
        return (PluginDistribution, (self.target, self.kwargs, self.name, self.directory))

    def __repr__(self) -> str:
        return f"PluginDistribution({self.target}, {dict(self.kwargs)}, name={self.name!r})"

    def __getattr__(self, attr: str):
        if attr == "dist":  # not built yet (unpickling): never recurse
            raise AttributeError(attr)
        return getattr(self.dist, attr)

    @property
    def support(self) -> tuple[float, float]:
        with no_exit(f"_target_={self.target}"):
            low, high = self.dist.support
        return float(low), float(high)

    @property
    def is_discrete(self) -> bool:
        with no_exit(f"_target_={self.target}"):
            return bool(self.dist.is_discrete)

    def sample(self, size, *, rng: np.random.Generator) -> np.ndarray:
        with no_exit(f"_target_={self.target}"):
            return np.asarray(self.dist.sample(size, rng=rng), dtype=np.float64)

    def cdf(self, x) -> np.ndarray:
        with no_exit(f"_target_={self.target}"):
            return np.asarray(self.dist.cdf(x), dtype=np.float64)

    def cdf_left(self, x) -> np.ndarray:
        if hasattr(self.dist, "cdf_left"):
            with no_exit(f"_target_={self.target}"):
                return np.asarray(self.dist.cdf_left(x), dtype=np.float64)
        return self.cdf(x)

    def ppf(self, q) -> np.ndarray:
        with no_exit(f"_target_={self.target}"):
            return np.asarray(self.dist.ppf(q), dtype=np.float64)

    def describe(self) -> dict:
        return {"target": self.target, "kwargs": {k: v for k, v in self.kwargs}}


def check_distribution(dist: PluginDistribution, key: str) -> None:
    """Check a plug-in distribution on a tiny input before any compute.

    ``support`` must be ``(low, high)`` with ``low < high``; ``sample((3, 5), rng=...)`` must give finite scores of
    that shape within the support, the same for the same generator; ``cdf`` must be non-decreasing within
    [0, 1] at those scores, and ``ppf`` of 0.1, 0.5, 0.9 within the support.

    Parameters
    ----------
    dist : PluginDistribution
        The plug-in as the config built it.
    key : str
        The config key of the distribution (``distribution`` or ``distribution.NAME``), for the message.

    Returns
    -------
    None
        When the distribution passes.

    Raises
    ------
    PluginError
        One line ``{key}._target_={path}: ...`` saying what was wrong: a bad support, an exception on the
        check input, a wrong sample shape, scores outside the support or not finite, different scores for the
        same generator, a ``cdf`` outside [0, 1] or decreasing, or a ``ppf`` outside the support.

    Examples
    --------
    >>> check_distribution(PluginDistribution("simstudy.distributions.Bag", (("values", (0.2, 0.5)),)), "distribution")
    """
    prefix = f"{key}._target_={dist.target}"
    try:
        low, high = dist.support
    except Exception as exc:
        raise PluginError(f"{prefix}: support must be a pair (low, high), got {one_line(exc)}") from None
    if not low < high:
        raise PluginError(f"{prefix}: support must be (low, high) with low < high, got ({low}, {high})")
    try:
        draws = [dist.sample((3, 5), rng=np.random.default_rng(CHECK_SEED)) for _ in range(2)]
        x = np.sort(draws[0].ravel())
        F, q = dist.cdf(x), dist.ppf(np.array([0.1, 0.5, 0.9]))
    except Exception as exc:
        raise PluginError(
            f"{prefix}: raised {one_line(exc)} on the check input (sample((3, 5), rng=...), then cdf and ppf)"
        ) from None
    problem = None
    if draws[0].shape != (3, 5):
        problem = f"sample((3, 5), rng=...) returned shape {draws[0].shape}"
    elif not np.all(np.isfinite(x)) or x[0] < low or x[-1] > high:
        problem = f"sample returned scores outside the support [{low}, {high}] (or not finite): {x.tolist()}"
    elif not np.array_equal(draws[0], draws[1]):
        problem = "sample returned different scores for the same generator; draw only from rng"
    elif F.shape != x.shape or not np.all((F >= 0) & (F <= 1)) or np.any(np.diff(F) < 0):
        problem = f"cdf must be non-decreasing values in [0, 1] of the shape of its input, got {F.tolist()}"
    elif q.shape != (3,) or not np.all((q >= low) & (q <= high)):
        problem = f"ppf([0.1, 0.5, 0.9]) must lie within the support [{low}, {high}], got {q.tolist()}"
    if problem:
        raise PluginError(f"{prefix}: {problem}")
