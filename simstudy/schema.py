"""Typed option schemas: frozen dataclasses whose fields carry their default, their help and their check.

Every setting a config can give (a study's options, a data command's keys) is declared once, as a field made
by :func:`option`: the default lives there and nowhere else (YAML files only select), the help text of
``--help`` is the field's ``doc``, and the field's ``check`` turns the raw value into the typed one or raises a
one-line :class:`ConfigError` naming the key and the value. :func:`parse` applies a schema to a mapping;
:func:`defaults` and :func:`docs` read it back for the CLI.

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
=====================  ===============================================================

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
from collections.abc import Callable, Iterable, Mapping
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
]

Check = Callable[[str, Any], Any]


class ConfigError(ValueError):
    """An invalid configuration value; the message names the key and the value."""


def option(default: Any, doc: str, check: Check | None = None) -> Any:
    """A schema field: its ``default`` (immutable: a tuple, not a list), its help ``doc`` and its ``check``.

    ``check(key, value)`` returns the typed value or raises :class:`ConfigError`; ``None`` accepts anything.
    """
    return dataclasses.field(default=default, metadata={"doc": doc, "check": check})


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value)


def integer(*, minimum: int | None = None) -> Check:
    """An integer (a bool is not one), at least ``minimum`` if given."""

    def check(key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise ConfigError(f"{key} must be an integer >= {minimum}, got {value!r}")
        return value

    return check


def number(
    *, minimum: float | None = None, maximum: float | None = None, positive: bool = False, what: str | None = None
) -> Check:
    """A finite-or-infinite number (not NaN, not a bool) in ``[minimum, maximum]``; ``positive``: > 0 and finite.
    ``what`` replaces the message's description of the range, e.g. "a number in [0, 1]"."""

    def check(key: str, value: Any) -> float:
        ok = _is_number(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
        if positive:
            ok = ok and math.isfinite(value) and value > 0
        if not ok:
            described = what or (
                "a positive number"
                if positive
                else "a number"
                + (f" >= {minimum:g}" if minimum is not None else "")
                + (f" <= {maximum:g}" if maximum is not None else "")
            )
            raise ConfigError(f"{key} must be {described}, got {value!r}")
        return float(value)

    return check


def level() -> Check:
    """A number strictly between 0 and 1 (a confidence, a quantile)."""

    def check(key: str, value: Any) -> float:
        if not _is_number(value) or not 0 < value < 1:
            raise ConfigError(f"{key} must be a number strictly between 0 and 1, got {value!r}")
        return float(value)

    return check


def boolean() -> Check:
    """True or false (not 0/1, not a string)."""

    def check(key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value

    return check


def choice(valid: Iterable[str] | Callable[[], Iterable[str]]) -> Check:
    """One of ``valid`` (or of what the callable ``valid()`` lists when the check runs: a registry)."""

    def check(key: str, value: Any) -> str:
        names = tuple(valid() if callable(valid) else valid)
        if value not in names:
            raise ConfigError(f"{key} must be one of {', '.join(names)}, got {value!r}")
        return value

    return check


def text() -> Check:
    """A non-empty string."""

    def check(key: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{key} must be a non-empty string, got {value!r}")
        return value

    return check


def listed(
    item: Check, *, minimum: int = 1, what: str = "at least one value", unique: bool = True, sort: bool = True
) -> Check:
    """A list of values, each checked by ``item`` (a scalar counts as a list of one), with at least ``minimum``
    of them (``what`` completes "must list ..."). ``unique`` drops repeats (first kept); ``sort`` sorts."""

    def check(key: str, value: Any) -> tuple:
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(values) < minimum:
            raise ConfigError(f"{key} must list {what}, got {value!r}")
        out = [item(key, v) for v in values]
        if unique:
            out = list(dict.fromkeys(out))
        if len(out) < minimum:
            raise ConfigError(f"{key} must list {what} (distinct), got {value!r}")
        return tuple(sorted(out) if sort else out)

    return check


def optional(inner: Check) -> Check:
    """``null`` (``None``), or a value ``inner`` accepts."""

    def check(key: str, value: Any) -> Any:
        return None if value is None else inner(key, value)

    return check


def _fields(schema: type) -> tuple[dataclasses.Field, ...]:
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"{schema!r} is not a schema (a dataclass whose fields are made by option())")
    return dataclasses.fields(schema)


def parse(schema: type, values: Mapping, prefix: str = "", *, ignore: Iterable[str] = (), what: str = "") -> Any:
    """The schema's instance from a mapping of raw values: unknown keys refused, missing ones defaulted, each
    value checked.

    Parameters
    ----------
    schema : dataclass type
        Fields made by :func:`option`.
    values : Mapping
        Raw values by field name (from YAML and the command line).
    prefix : str
        Prepended to a key in messages, e.g. ``"study."``.
    ignore : iterable of str
        Keys of ``values`` that belong to someone else (not refused, not read).
    what : str
        Names the setting's owner in the unknown-key message, e.g. "the band_coverage study".

    Returns
    -------
    instance of ``schema``

    Raises
    ------
    ConfigError
        ``{prefix}{key} is not a setting of {what} (settings: ...)`` or the field check's message.
    """
    fields = _fields(schema)
    names = [f.name for f in fields]
    ignore = tuple(ignore)
    for key in values:
        if key not in names and key not in ignore:
            owner = f" of {what}" if what else ""
            raise ConfigError(f"{prefix}{key} is not a setting{owner} (settings: {', '.join((*ignore, *names))})")
    out = {}
    for f in fields:
        value = values.get(f.name, f.default)
        check = f.metadata.get("check")
        out[f.name] = check(f"{prefix}{f.name}", value) if check is not None else value
    return schema(**out)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def defaults(schema: type) -> dict:
    """The schema's defaults as plain YAML values (tuples as lists), by field name, in declaration order."""
    return {f.name: _plain(f.default) for f in _fields(schema)}


def docs(schema: type) -> dict[str, tuple[str, Any]]:
    """Each field's ``(doc, default)``, by name, in declaration order (for ``--help``)."""
    return {f.name: (f.metadata.get("doc", ""), _plain(f.default)) for f in _fields(schema)}
