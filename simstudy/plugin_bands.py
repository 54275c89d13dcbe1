"""Plug-in CDF band methods: the band point of :mod:`simstudy.plugins`.

``study.methods`` of the ``band_coverage`` and ``band_width`` studies lists built-in methods, names given by
:func:`register_band_method` and import paths ``module.function`` (the contract is in
:mod:`simstudy.plugins`); the names live in :data:`simstudy.extend.band_methods`. Every public name here is
re-exported by :mod:`simstudy.plugins`, their documented home.

============================  =============================================================================
:func:`register_band_method`  give a plug-in band method a name
:func:`band_method_names`     every name a study can list, built-in ones first
:func:`band_method`           the one dispatch from a name to a callable band
:class:`PluginBand`           a plug-in band, pickled by import path, its output checked on every call
:class:`BuiltinBand`          a built-in band through the same contract (its bounds precomputed)
:func:`band_fingerprint`      what of the plug-ins joins a run's fingerprint
:func:`check_band_method`     the parse-time check on a tiny input
:func:`band_method_check`     that check for a study's schema (a one-line ConfigError)
============================  =============================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from simstudy import extend
from simstudy._imports import (
    PluginError,
    check_input,
    function,
    import_path,
    import_target,
    one_line,
    search_dir,
)
from simstudy.schema import ConfigError, importing

__all__ = [
    "PluginBand",
    "BuiltinBand",
    "register_band_method",
    "band_method_names",
    "band_method",
    "band_fingerprint",
    "check_band_method",
    "band_method_check",
]


# The band check input: 3 sorted samples of n = 5 scores in (0, 1) (the estimators' check input), at 80%.
_BAND_CHECK_CONFIDENCE = 0.8


class _BandContract(PluginError):
    """A band plug-in's output that breaks the contract; the message says what (without the target)."""


def _first(mask: np.ndarray) -> tuple[int, int]:
    """The (sample, i) of the first True of a 2-d mask, i counted from 1 as in Y_(i)."""
    r, i = (int(k) for k in np.argwhere(mask)[0])
    return r, i + 1


def band_output(out: Any, reps: int, n: int) -> tuple[np.ndarray, np.ndarray]:
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
        return function(self.target, self.directory, "_target_")

    def _call(self, sorted_scores: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(sorted_scores, dtype=np.float64).view()
        x.flags.writeable = False  # the samples are shared by every method of the study: never changed
        out = self.function(x, float(confidence), **dict(self.kwargs))
        return band_output(out, *x.shape)

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
    target = import_path(target, f"register_band_method({name!r}, ...)")
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
    directory = search_dir(directory)
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
            out[method] = extend.fingerprint(band.target, band.kwargs, band.directory)
    return out


def check_band_method(method: Any, key: str, *, trusted: Set[str] | None = None) -> str:
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
    trusted : set of str, optional, keyword-only
        While a stored config is read, the import paths the user trusts
        (:func:`~simstudy.plugins.refuse_untrusted`); default ``None``, the config is the user's own.

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
        fn = import_target(band.target, directory=band.directory, key=key, trusted=trusted)
    except PluginError as exc:
        raise PluginError(str(exc) if not registered else f"{prefix}: {exc}") from None
    if not callable(fn):
        raise PluginError(f"{prefix}: is a {type(fn).__name__}, not a function")
    x = check_input()
    outs = []
    for _ in range(2):
        try:
            outs.append(band._call(x, _BAND_CHECK_CONFIDENCE))
        except _BandContract as exc:
            raise PluginError(f"{prefix}: {exc}") from None
        except Exception as exc:
            raise PluginError(
                f"{prefix}: raised {one_line(exc)} on the check input (3 sorted samples of n=5, "
                f"confidence={_BAND_CHECK_CONFIDENCE})"
            ) from None
    if not all(np.array_equal(a, b) for a, b in zip(outs[0], outs[1])):
        raise PluginError(
            f"{prefix}: returned different bounds for the same input called twice; a band method must be deterministic"
        )
    return method


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

    @importing
    def check(key: str, value: Any, *, trusted: Set[str] | None = None) -> str:
        try:
            return check_band_method(value, key, trusted=trusted)
        except PluginError as exc:
            raise ConfigError(str(exc)) from None

    return check
