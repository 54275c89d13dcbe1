"""Typed option schemas: frozen dataclasses whose fields carry their default, their help and their check.

Every setting a config can give (a study's options, a data command's keys) is declared once, as a field made by
:func:`option`: the default lives there and nowhere else (YAML files only select), the help text of ``--help`` is
the field's ``doc``, and the field's ``check`` turns the raw value into the typed one or raises a one-line
:class:`ConfigError` naming the key and the value. :func:`parse` applies a schema to a mapping; :func:`defaults` and
:func:`docs` read it back for the CLI, and :func:`~simstudy.schema_docs.parameters` for the schema's own docstring:
the class decorator :func:`~simstudy.schema_docs.documented` writes its numpydoc Parameters entries from the fields
(type, default, doc, and what the check accepts: the words each check carries as ``check.accepts``, set by
:func:`accepting`). A check that imports a plug-in (a band method, a selection algorithm) is marked by
:func:`importing`: :func:`parse` hands it the ``trusted`` import paths of a stored config it was given.

The checks are small factories shared by every schema, so one setting kind is validated one way everywhere:

=====================  ===============================================================
check                  accepts
=====================  ===============================================================
:func:`integer`        an int (not a bool), optionally ``>= minimum``
:func:`number`         an int or float (not a bool), optionally bounded
:func:`level`          a number strictly between 0 and 1
:func:`boolean`        true or false
:func:`choice`         one of the listed strings (a callable lists them when asked)
:func:`text`           a non-empty string
:func:`listed`         a list (a scalar counts as a list of one) of values each checked
:func:`optional`       null, or what the wrapped check accepts
:func:`workers`        a number of worker processes: a positive int, or -1 (one per core)
:func:`shard`          ``"i/N"`` with 1 <= i <= N (the i-th of N slices), as ``(i, N)``
:func:`precision`      a Monte Carlo precision target: an absolute MCSE, ``"X%"`` of the estimate, or per measure
=====================  ===============================================================

A field made by :func:`internal` is not a setting: code sets it, and a config naming it is refused as an
unknown key (:func:`refuse_unknown`, which also serves groups that are not schemas). :func:`hashable` freezes a
free-form config value (a plug-in's keyword arguments) so that it can key random streams.

Example
-------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Opts:
...     size: int = option(48, "scores per sample", integer(minimum=2))
...     levels: tuple = option((0.5, 0.8), "nominal levels", listed(level(), what="at least one level"))
>>> parse(Opts, {"levels": [0.9, 0.5, 0.9]}, "study.")
Opts(size=48, levels=(0.5, 0.9))
>>> parse(Opts, {"size": 1}, "study.")
Traceback (most recent call last):
...
simstudy.schema.ConfigError: study.size must be an integer >= 2, got 1
>>> defaults(Opts)
{'size': 48, 'levels': [0.5, 0.8]}
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Set
from typing import Any

__all__ = [
    "ConfigError",
    "option",
    "parse",
    "defaults",
    "docs",
    "integer",
    "number",
    "level",
    "boolean",
    "choice",
    "text",
    "listed",
    "optional",
    "workers",
    "shard",
    "precision",
    "internal",
    "refuse_unknown",
    "hashable",
    "accepting",
    "importing",
]

Check = Callable[[str, Any], Any]


class ConfigError(ValueError):
    """An invalid configuration value; the message names the key and the value.

    Raised by every check of this module, by :func:`parse` and by :func:`simstudy.config.parse` and the data
    commands' parsers, before any compute, with one line the command prints as it exits with status 2. A
    :class:`ValueError`. :mod:`simstudy.config` and :mod:`simstudy.api` re-export it.

    Examples
    --------
    >>> from simstudy.schema import ConfigError, integer
    >>> integer(minimum=1)("budget.B", 0)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.B must be an integer >= 1, got 0
    >>> issubclass(ConfigError, ValueError)
    True
    """


def option(default: Any, doc: str, check: Check | None = None, *, type_doc: str | None = None) -> Any:
    """A schema field: its ``default``, its help ``doc`` and its ``check``.

    Use it as the default of a field of a frozen dataclass (the schema); :func:`parse` runs the check on each
    value, :func:`defaults` and :func:`docs` read the default and the help back.

    Parameters
    ----------
    default : Any
        The setting's value when the config does not give it; immutable (a tuple, not a list), since the
        dataclass shares it between instances. :data:`simstudy.commands._data.REQUIRED` (``"???"``) marks a key the
        user must give.
    doc : str
        The help text of ``--help``: what the setting means, in a phrase (units and an example value help).
    check : callable or None, default None
        ``check(key, value)`` returns the typed value or raises :class:`ConfigError` (one of the factories
        below, e.g. ``integer(minimum=1)``); ``None`` accepts any value unchanged.
    type_doc : str or None, keyword-only, default None
        The type :func:`parameters` writes in the docstring, e.g. ``"float, or tuple of (str, float) pairs"``;
        None: read from the field's annotation (``tuple[int, ...] | None`` is written ``tuple of int or None``).

    Returns
    -------
    dataclasses.Field
        A field whose ``metadata`` holds ``"doc"``, ``"check"`` and ``"type_doc"``.

    Examples
    --------
    >>> from dataclasses import dataclass, fields
    >>> from simstudy.schema import integer, option
    >>> @dataclass(frozen=True)
    ... class Opts:
    ...     reps: int = option(1000, "simulated searches per cell", integer(minimum=2))
    >>> Opts().reps, fields(Opts)[0].metadata["doc"]
    (1000, 'simulated searches per cell')
    """
    return dataclasses.field(default=default, metadata={"doc": doc, "check": check, "type_doc": type_doc})


def internal(default: Any, doc: str) -> Any:
    """A schema field that is not a setting: code sets it (:func:`dataclasses.replace`), a config may not.

    :func:`parse` refuses its key as it refuses an unknown one and leaves the field at its default;
    :func:`defaults` and :func:`docs` leave it out. E.g. ``collect`` of :class:`simstudy.config.RunnerConfig`,
    which only ``simstudy collect`` sets.

    Parameters
    ----------
    default : Any
        The field's value unless code replaces it; immutable, as for :func:`option`.
    doc : str
        What the field means and who sets it, in a phrase.

    Returns
    -------
    dataclasses.Field
        A field whose ``metadata`` holds ``"doc"`` and ``"internal"`` (true).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.schema import integer, internal, option, parse
    >>> @dataclass(frozen=True)
    ... class Opts:
    ...     reps: int = option(1000, "simulated searches per cell", integer(minimum=2))
    ...     resumed: bool = internal(False, "set by the runner on a resumed run")
    >>> parse(Opts, {"reps": 50}, "study.")
    Opts(reps=50, resumed=False)
    >>> parse(Opts, {"resumed": True}, "study.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.resumed is not a setting (settings: reps)
    """
    return dataclasses.field(default=default, metadata={"doc": doc, "internal": True})


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value)


def integer(*, minimum: int | None = None) -> Check:
    """A check that accepts an integer (a bool is not one), at least ``minimum`` if given.

    Parameters
    ----------
    minimum : int or None, keyword-only, default None
        The smallest value accepted; None: no lower bound.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the ``int`` unchanged.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not an int (a float such as 2.0 or a
        bool is refused) or is below ``minimum``; the one-line message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import integer
    >>> integer(minimum=1)("study.reps", 5)
    5
    >>> integer(minimum=1)("study.reps", True)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.reps must be an integer, got True
    """

    def check(key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise ConfigError(f"{key} must be an integer >= {minimum}, got {value!r}")
        return value

    return accepting("an integer" if minimum is None else f"an integer >= {minimum}")(check)


def number(
    *, minimum: float | None = None, maximum: float | None = None, positive: bool = False, what: str | None = None
) -> Check:
    """A check that accepts a number (int or float; infinities allowed, NaN and bools not) in a range.

    Parameters
    ----------
    minimum : float or None, keyword-only, default None
        The smallest value accepted (inclusive); None: no lower bound.
    maximum : float or None, keyword-only, default None
        The largest value accepted (inclusive); None: no upper bound.
    positive : bool, keyword-only, default False
        If true, also require the value to be finite and > 0.
    what : str or None, keyword-only, default None
        Replaces the message's description of what is accepted, e.g. ``"a number in [0, 1]"``; None: built
        from the bounds (``"a number >= 0 <= 1"``) or ``"a positive number"``.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the value as a
        ``float``.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not a number, is NaN or a bool, lies
        outside ``[minimum, maximum]``, or (with ``positive``) is not finite and > 0; the one-line message names
        the key and the value.

    Examples
    --------
    >>> from simstudy.schema import number
    >>> number(minimum=0, maximum=1)("runner.max_failure_fraction", 1)
    1.0
    >>> number(positive=True)("scale", 0)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: scale must be a positive number, got 0
    """

    described = what or (
        "a positive number"
        if positive
        else "a number"
        + (f" >= {minimum:g}" if minimum is not None else "")
        + (f" <= {maximum:g}" if maximum is not None else "")
    )

    def check(key: str, value: Any) -> float:
        ok = _is_number(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
        if positive:
            ok = ok and math.isfinite(value) and value > 0
        if not ok:
            raise ConfigError(f"{key} must be {described}, got {value!r}")
        return float(value)

    return accepting(described)(check)


def level() -> Check:
    """A check that accepts a number strictly between 0 and 1: a confidence level, a quantile, a probability.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the value as a
        ``float`` in (0, 1).

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not a number (or is a bool or NaN) or
        is not strictly between 0 and 1; the one-line message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import level
    >>> level()("confidence", 0.8)
    0.8
    >>> level()("confidence", 1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: confidence must be a number strictly between 0 and 1, got 1
    """

    def check(key: str, value: Any) -> float:
        if not _is_number(value) or not 0 < value < 1:
            raise ConfigError(f"{key} must be a number strictly between 0 and 1, got {value!r}")
        return float(value)

    return accepting("a number strictly between 0 and 1")(check)


def boolean() -> Check:
    """A check that accepts true or false (a bool: not 0 or 1, not a string such as ``"yes"``).

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the ``bool`` unchanged.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not a bool; the one-line message
        names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import boolean
    >>> boolean()("compare", True)
    True
    >>> boolean()("compare", 1)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: compare must be true or false, got 1
    """

    def check(key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value

    return accepting("true or false")(check)


def choice(valid: Iterable[str] | Callable[[], Iterable[str]]) -> Check:
    """A check that accepts one of the listed strings.

    Parameters
    ----------
    valid : iterable of str, or callable returning an iterable of str
        The accepted values, in the order the message lists them; a callable is called each time the check
        runs (a registry whose entries plug-ins may add, or a module imported only then).

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the value unchanged.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not one of ``valid``; the one-line
        message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import choice
    >>> choice(("log", "linear"))("xscale", "log")
    'log'
    >>> choice(("log", "linear"))("xscale", "ln")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: xscale must be one of log, linear, got 'ln'
    """

    if not callable(valid):
        valid = tuple(valid)  # read once: an iterator would be empty at the second check

    def check(key: str, value: Any) -> str:
        names = tuple(valid() if callable(valid) else valid)
        if value not in names:
            raise ConfigError(f"{key} must be one of {', '.join(names)}, got {value!r}")
        return value

    # a callable's names are known only when it is called (a registry, a module imported late): no words then
    return check if callable(valid) else accepting(f"one of {', '.join(valid)}")(check)


def text() -> Check:
    """A check that accepts a non-empty string.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns the ``str`` unchanged.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not a string or is empty; the
        one-line message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import text
    >>> text()("time_unit", "hours")
    'hours'
    >>> text()("time_unit", "")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: time_unit must be a non-empty string, got ''
    """

    def check(key: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{key} must be a non-empty string, got {value!r}")
        return value

    return accepting("a non-empty string")(check)


def listed(
    item: Check, *, minimum: int = 1, what: str = "at least one value", unique: bool = True, sort: bool = True
) -> Check:
    """A check that accepts a list of values, each checked by ``item``; a scalar counts as a list of one.

    Parameters
    ----------
    item : callable
        The check of each entry, ``item(key, value)``, e.g. ``integer(minimum=1)``.
    minimum : int, keyword-only, default 1
        The fewest entries accepted (counted before and, with ``unique``, after dropping repeats).
    what : str, keyword-only, default "at least one value"
        Completes the message's "must list ...", e.g. ``"at least one n"``.
    unique : bool, keyword-only, default True
        Drop repeated entries (after their check), keeping the first.
    sort : bool, keyword-only, default True
        Sort the entries.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns a ``tuple`` of the
        checked entries.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if fewer than ``minimum`` entries are given, or
        remain distinct; or the message of ``item`` for the first invalid entry; the one-line message names the
        key and the value.

    Examples
    --------
    >>> from simstudy.schema import integer, listed
    >>> ns = listed(integer(minimum=1), what="at least one n")
    >>> ns("study.ns", [16, 4, 4, 1]), ns("study.ns", 4)
    ((1, 4, 16), (4,))
    >>> ns("study.ns", [])
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.ns must list at least one n, got []
    """

    def check(key: str, value: Any, **trust: Any) -> tuple:
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(values) < minimum:
            raise ConfigError(f"{key} must list {what}, got {value!r}")
        out = [item(key, v, **trust) for v in values]
        if unique:
            out = list(dict.fromkeys(out))
        if len(out) < minimum:
            raise ConfigError(f"{key} must list {what} (distinct), got {value!r}")
        return tuple(sorted(out) if sort else out)

    if getattr(item, "imports", False):  # its items import plug-ins: hand them the trust parse() is given
        importing(check)
    words = getattr(item, "accepts", None)
    each = f", each {words}" if words else ""
    order = "sorted" if sort else "in the order given"
    return accepting(f"a list of {what}{each} ({order}{', repeats dropped' if unique else ''})")(check)


def optional(inner: Check) -> Check:
    """A check that accepts ``null`` (``None``) or a value ``inner`` accepts.

    Parameters
    ----------
    inner : callable
        The check of a value that is not None, e.g. ``integer(minimum=1)``.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.reps"``), ``value`` the raw value from YAML or the command line; it returns None for None, else
        what ``inner`` returns.

    Raises
    ------
    ConfigError
        Raised by the returned check through ``inner``, for a value that is not None and that ``inner``
        refuses.

    Examples
    --------
    >>> from simstudy.schema import integer, optional
    >>> max_k = optional(integer(minimum=1))
    >>> max_k("max_k", None), max_k("max_k", 10)
    (None, 10)
    """

    def check(key: str, value: Any, **trust: Any) -> Any:
        return None if value is None else inner(key, value, **trust)

    if getattr(inner, "imports", False):
        importing(check)
    words = getattr(inner, "accepts", None)
    if words is None:
        return check
    return accepting(words if "null" in words else f"null or {words}")(check)  # a `what` may say null already


def workers() -> Check:
    """A check that accepts a number of worker processes: a positive integer, or -1 for one per core.

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"runner.n_jobs"``), ``value`` the raw value from YAML or the command line; it returns the ``int``
        unchanged.

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not an int (as :func:`integer`), is 0
        or is below -1; the one-line message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import workers
    >>> workers()("runner.n_jobs", -1)
    -1
    >>> workers()("runner.n_jobs", 0)
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: runner.n_jobs must be a positive number of workers or -1 (all cores), got 0
    """
    whole = integer()

    def check(key: str, value: Any) -> int:
        n = whole(key, value)
        if n == 0 or n < -1:
            raise ConfigError(f"{key} must be a positive number of workers or -1 (all cores), got {n}")
        return n

    return accepting("a positive number of workers or -1 (all cores)")(check)


def shard() -> Check:
    """A check that accepts ``"i/N"`` with 1 <= i <= N, the i-th of N slices of a run (array jobs).

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"runner.shard"``), ``value`` the raw value from YAML or the command line; it returns ``(i, N)``, a
        tuple of two ints (wrap it in :func:`optional` to accept null, an unsharded run).

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value is not a string of two whole numbers
        ``i/N`` with 1 <= i <= N; the one-line message names the key and the value.

    Examples
    --------
    >>> from simstudy.schema import shard
    >>> shard()("runner.shard", "2/8")
    (2, 8)
    >>> shard()("runner.shard", "9/8")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: runner.shard must be i/N with 1 <= i <= N (e.g. 2/8), got '9/8'
    >>> shard()("runner.shard", "²/3")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: runner.shard must be i/N with 1 <= i <= N (e.g. 2/8), got '²/3'
    """

    def check(key: str, value: Any) -> tuple[int, int]:
        parts = value.split("/") if isinstance(value, str) else []
        # ASCII digits only: str.isdigit() takes '²', which int() refuses (a traceback, not a line)
        if (
            len(parts) != 2
            or not all(p.strip().isascii() and p.strip().isdigit() for p in parts)
            or not 1 <= int(parts[0]) <= int(parts[1])
        ):
            raise ConfigError(f"{key} must be i/N with 1 <= i <= N (e.g. 2/8), got {value!r}")
        return int(parts[0]), int(parts[1])

    return accepting("i/N with 1 <= i <= N (e.g. 2/8)")(check)


def precision() -> Check:
    """A check that accepts a Monte Carlo precision target (``study.precision``): for every measure, or per measure.

    A positive number is an absolute target for the Monte Carlo standard error (in the measure's units); a
    string ``"X%"`` (0 < X <= 100) a target relative to the magnitude of the estimate; a mapping of measure
    names to either gives each listed measure its own target (the others are not targeted).

    Returns
    -------
    callable
        The check, ``check(key, value)``: ``key`` (str) is the setting's full name for the message (e.g.
        ``"study.precision"``), ``value`` the raw value from YAML or the command line; it returns a tuple of
        ``(measure, value, relative)`` triples sorted by measure: ``measure`` is ``"*"`` (every measure) for a
        single target, ``value`` a float (for a relative target, the fraction: ``"1%"`` is 0.01), ``relative``
        a bool. Wrap it in :func:`optional` to accept null (no target).

    Raises
    ------
    ConfigError
        Raised by the returned check, not by this factory: if the value (or a mapping's value) is neither a
        positive finite number nor ``"X%"`` with 0 < X <= 100, or a mapping is empty; the one-line message
        names the key (``study.precision.MEASURE`` for a mapping's entry) and the value.

    Examples
    --------
    >>> from simstudy.schema import precision
    >>> precision()("study.precision", 0.001)
    (('*', 0.001, False),)
    >>> precision()("study.precision", "1%")
    (('*', 0.01, True),)
    >>> precision()("study.precision", {"mse": 0.0001, "bias": "2%"})
    (('bias', 0.02, True), ('mse', 0.0001, False))
    >>> precision()("study.precision", "1 percent")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.precision must be a positive number (an absolute Monte Carlo standard \
error) or X% with 0 < X <= 100 (relative to the estimate), e.g. 0.001 or 1%, got '1 percent'
    """
    words = (
        "a positive number (an absolute Monte Carlo standard error) or X% with 0 < X <= 100 (relative to the "
        "estimate), e.g. 0.001 or 1%"
    )

    def one(key: str, value: Any) -> tuple[float, bool]:
        if _is_number(value) and math.isfinite(value) and value > 0:
            return float(value), False
        if isinstance(value, str) and value.strip().endswith("%"):
            try:
                percent = float(value.strip()[:-1])
            except ValueError:
                percent = math.nan
            if 0 < percent <= 100:
                return percent / 100, True
        raise ConfigError(f"{key} must be {words}, got {value!r}")

    def check(key: str, value: Any) -> tuple:
        if isinstance(value, Mapping):
            if not value:
                raise ConfigError(f"{key} must name at least one measure, e.g. {{mse: 0.0001, bias: 2%}}, got {{}}")
            return tuple(sorted((str(m), *one(f"{key}.{m}", v)) for m, v in value.items()))
        return (("*", *one(key, value)),)

    return accepting(f"{words}; or a mapping of measure names to either, e.g. {{mse: 0.0001, bias: 2%}}")(check)


def setting_fields(schema: type) -> tuple[dataclasses.Field, ...]:
    """The schema's settings: its fields but those made by :func:`internal`."""
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"{schema!r} is not a schema (a dataclass whose fields are made by option())")
    return tuple(f for f in dataclasses.fields(schema) if not f.metadata.get("internal"))


def refuse_unknown(values: Mapping, valid: Iterable[str], prefix: str = "", *, what: str = "") -> None:
    """Refuse, in one line, a key of ``values`` that is not one of ``valid``.

    What :func:`parse` does first; also for a group whose keys are read one by one (``budget``, a built-in
    estimator's keys).

    Parameters
    ----------
    values : Mapping
        Raw values by key (from YAML and the command line).
    valid : iterable of str
        The keys accepted, in the order the message lists them.
    prefix : str, default ""
        Prepended to a key in the message, e.g. ``"budget."``.
    what : str, keyword-only, default ""
        Names the settings' owner in the message, e.g. ``"the band_coverage study"``.

    Raises
    ------
    ConfigError
        ``{prefix}{key} is not a setting of {what} (settings: ...)`` for the first unknown key.

    Examples
    --------
    >>> from simstudy.schema import refuse_unknown
    >>> refuse_unknown({"B": 10}, ("B", "n"), "budget.")
    >>> refuse_unknown({"B": 10, "m": 3}, ("B", "n"), "budget.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: budget.m is not a setting (settings: B, n)
    """
    valid = tuple(valid)
    for key in values:
        if key not in valid:
            owner = f" of {what}" if what else ""
            raise ConfigError(f"{prefix}{key} is not a setting{owner} (settings: {', '.join(valid)})")


def parse(
    schema: type,
    values: Mapping,
    prefix: str = "",
    *,
    ignore: Iterable[str] = (),
    what: str = "",
    trusted: Set[str] | None = None,
) -> Any:
    """The schema's instance from a mapping of raw values: unknown keys refused, missing ones defaulted, each
    value checked.

    Parameters
    ----------
    schema : type
        A dataclass whose fields are made by :func:`option` (a field without a check takes any value) or
        :func:`internal` (not a setting: refused, left at its default).
    values : Mapping
        Raw values by field name (from YAML and the command line).
    prefix : str, default ""
        Prepended to a key in messages, e.g. ``"study."``.
    ignore : iterable of str, keyword-only, default ()
        Keys of ``values`` that belong to someone else (not refused, not read).
    what : str, keyword-only, default ""
        Names the setting's owner in the unknown-key message, e.g. ``"the band_coverage study"``.
    trusted : set of str, keyword-only, optional
        While a run directory's stored config is read, the plug-in import paths the user trusts, passed to the
        checks marked by :func:`importing` (:func:`simstudy.plugins.refuse_untrusted`); default ``None``, the
        values are the user's own.

    Returns
    -------
    object
        An instance of ``schema``, every field checked (its typed value) or defaulted.

    Raises
    ------
    ConfigError
        ``{prefix}{key} is not a setting of {what} (settings: ...)`` for an unknown key, or the field check's
        message for an invalid value.
    TypeError
        If ``schema`` is not a dataclass.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.schema import integer, option, parse
    >>> @dataclass(frozen=True)
    ... class Opts:
    ...     reps: int = option(1000, "simulated searches per cell", integer(minimum=2))
    >>> parse(Opts, {"reps": 50}, "study.")
    Opts(reps=50)
    >>> parse(Opts, {"rep": 50}, "study.", what="the toy study")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: study.rep is not a setting of the toy study (settings: reps)
    """
    fields = setting_fields(schema)
    refuse_unknown(values, (*ignore, *(f.name for f in fields)), prefix, what=what)
    out = {}
    for f in fields:
        value = values.get(f.name, f.default)
        check = f.metadata.get("check")
        if check is None:
            out[f.name] = value
        elif getattr(check, "imports", False):
            out[f.name] = check(f"{prefix}{f.name}", value, trusted=trusted)
        else:
            out[f.name] = check(f"{prefix}{f.name}", value)
    return schema(**out)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def hashable(value: Any) -> Any:
    """A free-form config value made hashable: lists become tuples, mappings sorted tuples of pairs.

    For values no schema types, such as a plug-in's keyword arguments, which then key the random streams (a
    frozen config's hash must be stable).

    Parameters
    ----------
    value : Any
        A plain value from YAML or the command line (scalars, lists, mappings, nested).

    Returns
    -------
    Any
        ``value`` with every list (nested ones too) a tuple and every mapping a tuple of ``(str(key), value)``
        pairs sorted by key; scalars unchanged.

    Examples
    --------
    >>> from simstudy.schema import hashable
    >>> hashable({"b": [1, 2], "a": {"y": 0, "x": None}})
    (('a', (('x', None), ('y', 0))), ('b', (1, 2)))
    """
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(hashable(v) for v in value)
    return value


def defaults(schema: type) -> dict:
    """The schema's defaults as plain YAML values (tuples as lists), by field name, in declaration order.

    Parameters
    ----------
    schema : type
        A dataclass whose fields are made by :func:`option`.

    Returns
    -------
    dict
        Field name to default, tuples (nested ones too) turned into lists, as Hydra stores them.

    Raises
    ------
    TypeError
        If ``schema`` is not a dataclass.

    Examples
    --------
    >>> from simstudy.studies.base import StudyOptions
    >>> from simstudy.schema import defaults
    >>> defaults(StudyOptions)
    {'reps': 1000, 'chunk_reps': 1000, 'save_replicates': False, 'precision': None, 'max_reps': None}
    """
    return {f.name: _plain(f.default) for f in setting_fields(schema)}


def docs(schema: type) -> dict[str, tuple[str, Any]]:
    """Each field's ``(doc, default)``, by name, in declaration order (for ``--help``).

    Parameters
    ----------
    schema : type
        A dataclass whose fields are made by :func:`option`.

    Returns
    -------
    dict of str to tuple of (str, Any)
        Field name to its help text (``""`` if it has none) and its default as a plain YAML value.

    Raises
    ------
    TypeError
        If ``schema`` is not a dataclass.

    Examples
    --------
    >>> from simstudy.studies.base import StudyOptions
    >>> from simstudy.schema import docs
    >>> docs(StudyOptions)["reps"]
    ('simulated searches per cell (more: a smaller Monte Carlo error)', 1000)
    """
    return {f.name: (f.metadata.get("doc", ""), _plain(f.default)) for f in setting_fields(schema)}


def accepting(words: str) -> Callable[[Check], Check]:
    """Label a check with what it accepts, in the words its error message uses.

    Every factory of this module labels the check it returns; label a check of your own with this decorator so
    that :func:`parameters` says what it accepts too (an unlabelled check is simply not described).

    Parameters
    ----------
    words : str
        What the check accepts, completing "must be ...": e.g. ``"an integer >= 2"``.

    Returns
    -------
    callable
        A decorator that sets the check's ``accepts`` attribute to ``words`` and returns the check.

    Examples
    --------
    >>> from simstudy.schema import accepting, integer
    >>> @accepting("an even integer")
    ... def even(key, value):
    ...     return value
    >>> even.accepts, integer(minimum=2).accepts
    ('an even integer', 'an integer >= 2')
    """

    def label(check: Check) -> Check:
        check.accepts = words  # type: ignore[attr-defined]  # an attribute of a function: mypy knows no such field
        return check

    return label


def importing(check: Check) -> Check:
    """Mark a check that imports a plug-in, so that :func:`parse` passes it the trusted import paths.

    A config read back from a run directory may come from anyone; the check of a value naming a plug-in must
    refuse what the user did not trust (:func:`simstudy.plugins.refuse_untrusted`) before importing it. Such a
    check takes ``check(key, value, *, trusted=None)``; :func:`listed` and :func:`optional` of it are marked too
    and pass ``trusted`` on.

    Parameters
    ----------
    check : callable
        ``check(key, value, *, trusted=None)``.

    Returns
    -------
    callable
        ``check`` itself, its ``imports`` attribute set to True.

    Examples
    --------
    >>> from simstudy.schema import importing, listed
    >>> @importing
    ... def plugin(key, value, *, trusted=None):
    ...     return value if trusted is None or value in trusted else "refused"
    >>> listed(plugin, sort=False)("study.methods", ["a.f", "b.g"], trusted={"a.f"})
    ('a.f', 'refused')
    """
    check.imports = True  # type: ignore[attr-defined]  # an attribute of a function: mypy knows no such field
    return check
