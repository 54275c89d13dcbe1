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
:func:`estimator_methods` lists the built-in methods and the registered ones.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy import extend
from simstudy._imports import (  # noqa: F401 -- _LOADED, _trusting_only: the CLI's and the tests' handles
    _LOADED,
    PluginError,
    PluginExit,
    _call_kwargs,
    _function,
    _import_path,
    _no_exit,
    _one_line,
    _search_dir,
    _trusting_only,
    import_target,
    source_hash,
)
from simstudy.schema import ConfigError

__all__ = [
    "PluginError",
    "PluginExit",
    "import_target",
    "source_hash",
    "PluginEstimator",
    "check_estimator",
    "estimator_cost",
    "PluginDistribution",
    "check_distribution",
    "register_estimator",
    "estimator_methods",
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

# The check input: 3 sorted samples of B = 5 scores in (0, 1) from a fixed generator, budgets 1, 3 and 5.
_CHECK_SEED = 20240514
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
        return _function(self.target, self.directory, "_target_")

    @property
    def takes_rng(self) -> bool:
        return "rng" in _call_kwargs(self.function)

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


def _check_input(B: int = 5, reps: int = 3) -> np.ndarray:
    return np.sort(np.random.default_rng(_CHECK_SEED).random((reps, B)), axis=1)


def check_estimator(plugin: PluginEstimator, key: str) -> None:
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
        _ = plugin.function  # the import, so that its failure names the key
    except PluginError as exc:
        raise PluginError(f"{key}.{exc}") from None
    x = _check_input()
    outs = []
    for _ in range(2):
        try:
            outs.append(plugin(x, _CHECK_N, rng=np.random.default_rng(_CHECK_SEED)))
        except PluginError as exc:
            raise PluginError(f"{key}.{exc}") from None
        except Exception as exc:
            raise PluginError(
                f"{prefix}: raised {_one_line(exc)} on the check input (3 sorted samples of B=5, "
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
    x = np.sort(np.random.default_rng(_CHECK_SEED).random((reps, B)), axis=1)
    n = np.asarray(n, dtype=np.int64)
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        plugin(x, n, rng=np.random.default_rng(_CHECK_SEED))
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
    target = _import_path(target, f"register_estimator({method!r}, ...)")
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
    'simstudy.distributions.TruncatedNormal'
    >>> _ = extend.distributions.unregister("my_truncnorm")
    """
    if not isinstance(kind, str) or not kind.isidentifier():
        raise ValueError(f"a distribution kind must be an identifier, got {kind!r}")
    target = _import_path(target, f"register_distribution({kind!r}, ...)")
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

    Raises
    ------
    PluginError
        If ``target`` does not import, is not callable, raises when called with ``kwargs``, or builds an object
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

    def __init__(self, target: str, kwargs: tuple = (), name: str | None = None, directory: str | None = None):
        self.target, self.kwargs, self.directory = target, tuple(kwargs), _search_dir(directory)
        cls = import_target(target, directory=self.directory)
        if not callable(cls):
            raise PluginError(f"_target_={target}: is a {type(cls).__name__}, not a class")
        try:
            with _no_exit(f"_target_={target}"):
                self.dist = cls(**dict(self.kwargs))
        except PluginExit:
            raise
        except Exception as exc:
            args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs)
            raise PluginError(
                f"_target_={target}: {target.rsplit('.', 1)[-1]}({args}) raised {_one_line(exc)}"
            ) from None
        with _no_exit(f"_target_={target}"):  # hasattr runs a property's code
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
        with _no_exit(f"_target_={self.target}"):
            low, high = self.dist.support
        return float(low), float(high)

    @property
    def is_discrete(self) -> bool:
        with _no_exit(f"_target_={self.target}"):
            return bool(self.dist.is_discrete)

    def sample(self, size, *, rng: np.random.Generator) -> np.ndarray:
        with _no_exit(f"_target_={self.target}"):
            return np.asarray(self.dist.sample(size, rng=rng), dtype=np.float64)

    def cdf(self, x) -> np.ndarray:
        with _no_exit(f"_target_={self.target}"):
            return np.asarray(self.dist.cdf(x), dtype=np.float64)

    def cdf_left(self, x) -> np.ndarray:
        if hasattr(self.dist, "cdf_left"):
            with _no_exit(f"_target_={self.target}"):
                return np.asarray(self.dist.cdf_left(x), dtype=np.float64)
        return self.cdf(x)

    def ppf(self, q) -> np.ndarray:
        with _no_exit(f"_target_={self.target}"):
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
        raise PluginError(f"{prefix}: support must be a pair (low, high), got {_one_line(exc)}") from None
    if not low < high:
        raise PluginError(f"{prefix}: support must be (low, high) with low < high, got ({low}, {high})")
    try:
        draws = [dist.sample((3, 5), rng=np.random.default_rng(_CHECK_SEED)) for _ in range(2)]
        x = np.sort(draws[0].ravel())
        F, q = dist.cdf(x), dist.ppf(np.array([0.1, 0.5, 0.9]))
    except Exception as exc:
        raise PluginError(
            f"{prefix}: raised {_one_line(exc)} on the check input (sample((3, 5), rng=...), then cdf and ppf)"
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


# --- selection algorithms -----------------------------------------------------------------------------------

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
    target = _import_path(target, f"register_selection_algorithm({kind!r}, {name!r}, ...)")
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
        return _function(self.target, self.directory, "study.algorithms")

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
    return SelectionPlugin(target, kind, kwargs, _search_dir(directory))


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
    return {
        "target": algorithm.target,
        "kwargs": [list(kv) for kv in algorithm.kwargs],
        "source": source_hash(algorithm.target, directory=algorithm.directory),
    }


def check_selection_algorithm(name: str, kind: str, key: str = "study.algorithms") -> str:
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
            outs.append(plugin(arms, _CHECK_BUDGET, _CHECK_RUNS, rng=np.random.default_rng(_CHECK_SEED)))
        except PluginError as exc:
            return str(exc).split(": ", 1)[-1]
        except Exception as exc:
            return (
                f"raised {_one_line(exc)} on the check input ({len(arms)} arms, budget={_CHECK_BUDGET}, "
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

    arms, gen = _check_arms(), np.random.default_rng(_CHECK_SEED)
    y = np.stack([a.sample((_CHECK_RUNS, 3), rng=gen) for a in arms], axis=1)  # (runs, arms, 3 evaluations)
    loc, scale, df = posterior(y.sum(axis=-1), (y * y).sum(axis=-1), np.full(y.shape[:2], 3))
    outs = []
    for rows in (_CHECK_RUNS, _CHECK_RUNS, 2):
        try:
            outs.append(plugin(loc[:rows], scale[:rows], df[:rows], rng=np.random.default_rng(_CHECK_SEED)))
        except Exception as exc:
            return f"raised {_one_line(exc)} on the check input (the posteriors of {rows} runs over {len(arms)} models)"
        problem = proposal_problem(outs[-1], rows, len(arms), np.shape(outs[0])[1] if len(outs) > 1 else None)
        if problem:
            return problem + (" (its width must not depend on the number of runs)" if len(outs) == 3 else "")
    if not np.array_equal(outs[0], outs[1]):
        return (
            "returned different proposals for the same generator called twice; draw only from rng (never "
            "from np.random or a generator of your own)"
        )
    return None


# --- band methods -------------------------------------------------------------------------------------------

# The band check input: 3 sorted samples of n = 5 scores in (0, 1) (the estimators' check input), at 80%.
_BAND_CHECK_CONFIDENCE = 0.8


class _BandContract(PluginError):
    """A band plug-in's output that breaks the contract; the message says what (without the target)."""


def _first(mask: np.ndarray) -> tuple[int, int]:
    """The (sample, i) of the first True of a 2-d mask, i counted from 1 as in Y_(i)."""
    r, i = (int(k) for k in np.argwhere(mask)[0])
    return r, i + 1


def _band_output(out: Any, reps: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The plug-in's ``(lower, upper)`` as float64 arrays, both ``(n,)`` or both ``(reps, n)``; raises
    :class:`_BandContract` saying what breaks the contract (see :mod:`simstudy.stats.bands`)."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        what = f"a {type(out).__name__} of {len(out)}" if isinstance(out, (tuple, list)) else type(out).__name__
        raise _BandContract(f"returned {what}, not a pair of arrays (lower, upper)")
    pair = []
    for name, value in zip(("lower", "upper"), out):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise _BandContract(f"returned a {name} that is not an array of numbers: {value!r:.60}") from None
        if arr.shape not in ((reps, n), (n,)):
            raise _BandContract(
                f"returned {name} of shape {arr.shape} for {reps} samples of n={n}; the contract "
                f"is ({reps}, {n}) or ({n},)"
            )
        pair.append(arr)
    lower, upper = pair
    if lower.ndim != upper.ndim:  # one row for every sample beside one per sample: broadcast the row
        lower, upper = np.broadcast_to(lower, (reps, n)), np.broadcast_to(upper, (reps, n))
    lo2, up2 = np.atleast_2d(lower), np.atleast_2d(upper)
    for name, arr in (("lower", lo2), ("upper", up2)):
        bad = ~np.isfinite(arr)
        if bad.any():
            r, i = _first(bad)
            raise _BandContract(f"returned {name} {arr[r, i - 1]} at Y_({i}) of sample {r}; bounds must be finite")
        bad = (arr < 0) | (arr > 1)
        if bad.any():
            r, i = _first(bad)
            raise _BandContract(f"returned {name} {arr[r, i - 1]} at Y_({i}) of sample {r}, outside [0, 1]")
        bad = np.diff(arr, axis=1) < 0
        if bad.any():
            r, i = _first(bad)
            raise _BandContract(
                f"returned {name} decreasing from {arr[r, i - 1]} at Y_({i}) to {arr[r, i]} at "
                f"Y_({i + 1}) of sample {r}; bounds must be non-decreasing along the sample"
            )
    bad = lo2 > up2
    if bad.any():
        r, i = _first(bad)
        raise _BandContract(
            f"returned lower {lo2[r, i - 1]} > upper {up2[r, i - 1]} at Y_({i}) of sample {r}; "
            f"the contract needs lower <= upper"
        )
    return lower, upper


@dataclass(frozen=True)
class PluginBand:
    """A plug-in CDF band method, called as ``band(sorted_scores, confidence) -> (lower, upper)``.

    Pickled as its fields (import path, keyword arguments, directory): a worker imports the function itself
    on its first call. The output is checked on every call (see the contract in :mod:`simstudy.stats.bands`): a
    plug-in that breaks it mid-run fails its chunk, which the runner records for replay.

    Calling it, ``band(sorted_scores, confidence)``: ``sorted_scores`` float ``(reps, n)``, rows sorted
    ascending (passed read-only), ``confidence`` a probability in (0, 1); it returns float64 ``(lower,
    upper)``, both ``(n,)`` (a band that does not depend on the data) or both ``(reps, n)``, in [0, 1],
    non-decreasing along the last axis, ``lower <= upper``. Anything else raises :class:`PluginError`
    ``band method {target}: ...`` saying what.

    Parameters
    ----------
    target : str
        ``module.attr`` of the function ``f(sorted_scores, confidence, **kwargs)``.
    kwargs : tuple of (str, value) pairs, optional
        Keyword arguments passed on every call; default ``()``.
    directory : str, optional
        Where the module was found from (put on ``sys.path`` in a worker); default the working directory.

    See Also
    --------
    check_band_method : the parse-time check on a tiny input.

    Examples
    --------
    >>> band = PluginBand("numpy.add")  # add(x, 0.8): one array, not (lower, upper)
    >>> band(np.array([[0.1, 0.4, 0.9]]), 0.8)
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: band method numpy.add: returned ndarray, not a pair of arrays (lower, upper)
    """

    target: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    directory: str | None = None

    @property
    def function(self) -> Callable:
        return PluginEstimator(self.target, directory=self.directory).function

    def _call(self, sorted_scores: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(sorted_scores, dtype=np.float64).view()
        x.flags.writeable = False  # the samples are shared by every method of the study: never changed
        out = self.function(x, float(confidence), **dict(self.kwargs))
        return _band_output(out, *x.shape)

    def __call__(self, sorted_scores: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        try:
            return self._call(sorted_scores, confidence)
        except _BandContract as exc:
            raise PluginError(f"band method {self.target}: {exc}") from None


@dataclass(frozen=True)
class BuiltinBand:
    """A built-in band method through the same contract: :func:`simstudy.stats.bands.pointwise_bounds`, one row ``(n,)``
    for every sample.

    ``band(sorted_scores, confidence)`` returns ``bounds(n, confidence)`` for ``n = sorted_scores.shape[-1]``:
    built-in bands do not depend on the data, so a study precomputes them once.

    Parameters
    ----------
    method : str
        One of :data:`simstudy.stats.bands.METHODS` (``"dkw"``, ``"ks"``, ``"ld_equal_tailed"``,
        ``"ld_highest_density"``).

    Examples
    --------
    >>> lower, upper = BuiltinBand("dkw").bounds(4, 0.5)  # n = 4 scores, confidence 0.5
    >>> np.round(lower, 4).tolist(), np.round(upper, 4).tolist()
    ([0.0, 0.0837, 0.3337, 0.5837], [0.4163, 0.6663, 0.9163, 1.0])
    """

    method: str

    def bounds(self, n: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        """The bounds ``(n,)`` of every sample of n scores (they do not depend on the data)."""
        from simstudy.stats.bands import pointwise_bounds

        lower, upper = pointwise_bounds(n, confidence, self.method)
        return np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)

    def __call__(self, sorted_scores: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        return self.bounds(np.shape(sorted_scores)[-1], confidence)


def register_band_method(name: str, target: str | Callable, *, kwargs: dict | None = None) -> None:
    """Give a plug-in CDF band method a name, so that ``study.methods`` may list it.

    Parameters
    ----------
    name : str
        The name (an identifier); not a built-in method (:data:`simstudy.stats.bands.METHODS`).
    target : str or callable
        The import path ``module.attr``, or a module-level function (its path is taken; it must be importable by
        that path in worker processes). Its contract is in :mod:`simstudy.stats.bands`.
    kwargs : dict, optional, keyword-only
        Keyword arguments passed on every call (e.g. the same function registered twice with two settings);
        default none.

    Raises
    ------
    ValueError
        A name that is not an identifier, a built-in name, a name registered to another target, or a function
        with no import path.

    Examples
    --------
    >>> register_band_method("wilson", "my_bands.wilson_band", kwargs={"z": 2.0})
    >>> band_method_names()
    ('dkw', 'ks', 'ld_equal_tailed', 'ld_highest_density', 'wilson')
    >>> _ = extend.band_methods.unregister("wilson")
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a band method's name must be an identifier, got {name!r}")
    target = _import_path(target, f"register_band_method({name!r}, ...)")
    extend.band_methods.register(name, (target, tuple(sorted((kwargs or {}).items()))))


def band_method_names() -> tuple[str, ...]:
    """Every band method a study can name without an import path: the built-in ones, then the registered ones.

    Returns
    -------
    tuple of str
        :data:`simstudy.stats.bands.METHODS`, then the names given by :func:`register_band_method`.

    Examples
    --------
    >>> band_method_names()
    ('dkw', 'ks', 'ld_equal_tailed', 'ld_highest_density')
    """
    return extend.band_methods.names()


def _is_path(method: str) -> bool:
    parts = method.split(".")
    return len(parts) > 1 and all(p.isidentifier() for p in parts)


def band_method(method: str, *, directory: str | None = None) -> BuiltinBand | PluginBand:
    """The callable of a canonical band method (what :func:`check_band_method` returns), picklable by name or
    import path: the one dispatch of the band studies.

    Parameters
    ----------
    method : str
        A built-in method, a registered name or an import path ``module.function``.
    directory : str, optional, keyword-only
        Where a plug-in's module is imported from, in every worker (default: the working directory now).

    Returns
    -------
    BuiltinBand or PluginBand
        ``band(sorted_scores, confidence) -> (lower, upper)``; a plug-in is not imported here.

    Raises
    ------
    PluginError
        If ``method`` is neither a built-in method, a registered name nor an import path.

    Examples
    --------
    >>> lower, upper = band_method("dkw")(np.zeros((2, 4)), 0.5)  # 2 samples of n = 4: one row for both
    >>> lower.shape
    (4,)
    >>> band_method("wilson")
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: unknown band method 'wilson'; choose one of dkw, ks, ld_equal_tailed, ld_highest_density or an import path module.function
    """
    if extend.band_methods.is_builtin(method):
        return BuiltinBand(method)
    directory = _search_dir(directory)
    registered = extend.band_methods.entry(method)
    if registered is not None:
        target, kwargs = registered
        return PluginBand(target, kwargs, directory)
    if isinstance(method, str) and _is_path(method):
        return PluginBand(method, (), directory)
    raise PluginError(
        f"unknown band method {method!r}; choose one of {', '.join(band_method_names())} or an "
        f"import path module.function"
    )


def band_fingerprint(methods) -> dict:
    """What fixes the numbers of the plug-ins among ``methods``, for a run's fingerprint.

    For each plug-in its import path, keyword arguments and :func:`source_hash` (an edited plug-in never
    resumes old chunks). Empty when every method is built in, so that a built-in run's fingerprint stays what
    it always was.

    Parameters
    ----------
    methods : iterable of str
        Canonical band methods (:func:`check_band_method`), e.g. ``study.methods``.

    Returns
    -------
    dict
        Plug-in method -> ``{"target": path, "kwargs": [[key, value], ...], "source": digest}``.

    Raises
    ------
    PluginError
        If a method is unknown or a plug-in's module does not import.

    Examples
    --------
    >>> band_fingerprint(["ks", "dkw"])
    {}
    >>> sorted(band_fingerprint(["ks", "numpy.add"])["numpy.add"])
    ['kwargs', 'source', 'target']
    """
    out = {}
    for method in methods:
        band = band_method(method)
        if isinstance(band, PluginBand):
            out[method] = {
                "target": band.target,
                "kwargs": [list(kv) for kv in band.kwargs],
                "source": source_hash(band.target, directory=band.directory),
            }
    return out


def check_band_method(method: Any, key: str) -> str:
    """Check a band method named by a config, before any compute; return its canonical name.

    A built-in method is returned as it is. A registered name or an import path is imported and called twice on
    3 sorted samples of n = 5 at confidence 0.8, and its output checked against the contract
    (:mod:`simstudy.stats.bands`).

    Parameters
    ----------
    method : str
        What the config says: a built-in method, a registered name (:func:`register_band_method`) or an
        import path ``module.function``.
    key : str
        The config key (``study.methods``), for the message.

    Returns
    -------
    str
        The canonical method: the built-in or registered name, or the import path.

    Raises
    ------
    PluginError
        One line ``{key}={method}: ...``: not a method nor an import path, an import error or missing
        attribute, not a function, an exception on the check input, not a pair, a wrong shape, a NaN or
        infinite bound, a bound outside [0, 1], a decreasing bound, lower > upper, or different bounds the
        second time.

    Examples
    --------
    >>> check_band_method("ks", "study.methods")
    'ks'
    >>> check_band_method("numpy.add", "study.methods")  # add(x, 0.8): one array, not (lower, upper)
    Traceback (most recent call last):
    ...
    simstudy.plugins.PluginError: study.methods=numpy.add: returned ndarray, not a pair of arrays (lower, upper)
    """
    if extend.band_methods.is_builtin(method):
        return method
    registered = extend.band_methods.entry(method) is not None
    if not isinstance(method, str) or (not registered and not _is_path(method)):
        raise PluginError(
            f"{key} must be one of {', '.join(band_method_names())} or an import path module.function, got {method!r}"
        )
    band = band_method(method)
    assert isinstance(band, PluginBand)  # built-in methods returned above
    prefix = f"{key}={method}" + (f" (registered as {band.target})" if registered else "")
    try:
        fn = import_target(band.target, directory=band.directory, key=key)
    except PluginError as exc:
        raise PluginError(str(exc) if not registered else f"{prefix}: {exc}") from None
    if not callable(fn):
        raise PluginError(f"{prefix}: is a {type(fn).__name__}, not a function")
    x = _check_input()
    outs = []
    for _ in range(2):
        try:
            outs.append(band._call(x, _BAND_CHECK_CONFIDENCE))
        except _BandContract as exc:
            raise PluginError(f"{prefix}: {exc}") from None
        except Exception as exc:
            raise PluginError(
                f"{prefix}: raised {_one_line(exc)} on the check input (3 sorted samples of n=5, "
                f"confidence={_BAND_CHECK_CONFIDENCE})"
            ) from None
    if not all(np.array_equal(a, b) for a, b in zip(outs[0], outs[1])):
        raise PluginError(
            f"{prefix}: returned different bounds for the same input called twice; a band method must be deterministic"
        )
    return method


# --- the checks of a study schema's entries (the config layer's one-line ConfigError) ---------------------


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

    def check(key: str, value: Any) -> str:
        try:
            return check_selection_algorithm(value, kind, key)
        except PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check


def band_method_check() -> Callable[[str, Any], str]:
    """The check of one entry of a band study's ``study.methods``, for its schema.

    Accepts a built-in CDF band method (:data:`simstudy.stats.bands.METHODS`), a registered name or a plug-in's
    import path, which is imported and called on a tiny input when the config is parsed
    (:func:`simstudy.plugins.check_band_method`).

    Returns
    -------
    callable
        The check, ``check(key, value)``, returning the method's canonical name (str); use it as the ``item``
        of :func:`simstudy.schema.listed`.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: the plug-in check's one line, for a name that is no
        method nor an import path, an import error or a function whose bands break the contract.

    Examples
    --------
    >>> from simstudy.plugins import band_method_check
    >>> check = band_method_check()
    >>> check("study.methods", "ks")
    'ks'
    >>> check("study.methods", "nope")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.methods must be one of dkw, ks, ld_equal_tailed, ld_highest_density or an
    import path module.function, got 'nope'
    """

    def check(key: str, value: Any) -> str:
        try:
            return check_band_method(value, key)
        except PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check
