"""Docstrings written from option schemas: the numpydoc Parameters of a schema, filled into its class docstring.

Every option is declared once (:func:`simstudy.schema.option`: default, words, check); :func:`parameters` writes
its numpydoc entry (type, default, the words, what the check accepts) and :func:`documented` fills the entries
into a class docstring's ``%(parameters)s`` line. It reads schemas, so it sits above :mod:`simstudy.schema`:
a schema is declared with ``@schema_docs.documented(prefix)``.

=====================  ==============================================================================
:func:`parameters`     a schema's Parameters entries, wrapped to the source width
:func:`documented`     a class decorator filling them into the docstring's placeholder
=====================  ==============================================================================
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from simstudy.schema import setting_fields

__all__ = ["parameters", "documented"]


#: The column the docstring lines of :func:`parameters` end by, counted in the source of a class (indented 4).
_WIDTH = 116
#: OmegaConf's missing value, the default of a key the user must give (:data:`simstudy.commands._data.REQUIRED`).
_REQUIRED = "???"


def _split_union(annotation: str) -> list[str]:
    """The alternatives of ``a | b[c | d]``, split at the top level only."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(annotation):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "|" and depth == 0:
            parts.append(annotation[start:i].strip())
            start = i + 1
    return [*parts, annotation[start:].strip()]


def _type_doc(field: dataclasses.Field) -> str:
    """The numpydoc type of a field: its ``type_doc``, else its annotation in words."""
    if field.metadata.get("type_doc"):
        return field.metadata["type_doc"]
    annotation = field.type if isinstance(field.type, str) else inspect.formatannotation(field.type)
    words = []
    for part in _split_union(annotation):
        if part.startswith("tuple[") and part.endswith(", ...]"):  # tuple[int, ...]: a tuple of any length
            part = f"tuple of {part[len('tuple[') : -len(', ...]')]}"
        words.append(part)
    return " or ".join(words)


def _default_doc(default: Any, room: int) -> str:
    """The default as numpydoc writes it, a long tuple shortened to its ends (``(1, 2, ..., 9)``) to fit ``room``."""
    if isinstance(default, str) and default == _REQUIRED:
        return "required"
    text = f"default {default!r}"
    if not isinstance(default, tuple) or len(text) <= room:
        return text
    items = [repr(v) for v in default]

    def shortened(head: int, tail: int) -> str:
        return f"default ({', '.join(items[:head])}, ..., {', '.join(items[-tail:])})"

    head, tail = 1, 1
    while True:  # one more item at the end with fewer, while it fits and something is still left out
        more = (head + 1, tail) if head <= tail else (head, tail + 1)
        if sum(more) >= len(items) or len(shortened(*more)) > room:
            return shortened(head, tail)
        head, tail = more


def parameters(schema: type, prefix: str = "") -> str:
    """The numpydoc Parameters entries of a schema, written from its fields (its docstring's ``%(parameters)s``).

    One entry a field, inherited ones first, in declaration order: ``name : type, default REPR``, then, indented,
    ``{prefix}{name}``, the field's ``doc`` and, as a sentence of its own, what its check accepts
    (:func:`accepting`). A setting is thus described once, in its field, for the docstring, ``--help`` and the
    API reference alike.

    Parameters
    ----------
    schema : type
        A dataclass whose fields are made by :func:`option`.
    prefix : str, default ""
        Prepended to each key as a config names it, e.g. ``"study."``.

    Returns
    -------
    str
        The entries, one line each and its description wrapped (4 spaces in) so that, placed in a class's
        docstring (4 more), no line passes column 116; a tuple default too long for its line is shortened to
        its ends. A key the user must give (default ``"???"``) is written ``required``.

    Raises
    ------
    TypeError
        If ``schema`` is not a dataclass.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.schema import integer, level, listed, option
    >>> @dataclass(frozen=True)
    ... class Opts:
    ...     size: int = option(48, "scores per sample", integer(minimum=2))
    ...     levels: tuple[float, ...] = option((0.5, 0.8), "nominal levels", listed(level(), what="at least one level"))
    >>> print(parameters(Opts, "study."))
    size : int, default 48
        ``study.size``: scores per sample. An integer >= 2.
    levels : tuple of float, default (0.5, 0.8)
        ``study.levels``: nominal levels. A list of at least one level, each a number strictly between 0 and 1
        (sorted, repeats dropped).
    """
    lines = []
    setting_fields(schema)  # a dataclass, or TypeError
    for f in dataclasses.fields(schema):  # every field of the class, as its signature has them
        head = f"{f.name} : {_type_doc(f)}, "
        lines.append(head + _default_doc(f.default, _WIDTH - 4 - len(head)))
        if f.metadata.get("internal"):  # a field code sets, which no config may give: no key to name
            text = f.metadata.get("doc", "").rstrip(".") + ". Set by code, not a setting of a config."
        else:
            text = f"``{prefix}{f.name}``: {f.metadata.get('doc', '')}".rstrip(".") + "."
        words = getattr(f.metadata.get("check"), "accepts", None)
        if words:  # a sentence of its own: a doc often has semicolons of its own
            text += f" {words[0].upper()}{words[1:]}."
        lines += textwrap.wrap(
            text,
            width=_WIDTH - 4,
            initial_indent=" " * 4,
            subsequent_indent=" " * 4,
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(lines)


#: Where a schema's docstring takes its generated Parameters entries (:func:`documented`).
_PLACEHOLDER = "%(parameters)s"


def documented(prefix: str = "") -> Callable[[type], type]:
    """A class decorator filling a schema's Parameters section from its fields: the ``%(parameters)s`` line.

    Put it above ``@dataclass`` (it reads the fields the dataclass made), and write the docstring's Parameters
    section as its heading and the placeholder on a line of its own; :func:`parameters` writes the entries,
    indented as the placeholder is. The other sections (summary, Examples) stay as written.

    Parameters
    ----------
    prefix : str, default ""
        Passed to :func:`parameters`: ``"study."`` for a study's options, ``""`` for a command's keys.

    Returns
    -------
    callable
        The decorator: it sets the class's ``__doc__`` and returns the class.

    Raises
    ------
    ValueError
        Raised by the decorator, not by this factory: if the class's docstring has no placeholder line (a
        hand-written section would drift from the fields).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from simstudy.schema import integer, option
    >>> @documented("study.")
    ... @dataclass(frozen=True)
    ... class Opts:
    ...     '''A toy study's options.
    ...
    ...     Parameters
    ...     ----------
    ...     %(parameters)s
    ...     '''
    ...     reps: int = option(1000, "simulated searches per cell", integer(minimum=2))
    >>> print(Opts.__doc__.split("----------")[1].rstrip())
    <BLANKLINE>
        reps : int, default 1000
            ``study.reps``: simulated searches per cell. An integer >= 2.
    """

    def fill(cls: type) -> type:
        if sys.flags.optimize >= 2:  # python -OO strips docstrings (dataclass writes the signature): nothing to fill
            return cls
        lines = (cls.__doc__ or "").split("\n")
        at = [i for i, line in enumerate(lines) if line.strip() == _PLACEHOLDER]
        if len(at) != 1:
            raise ValueError(f"{cls.__qualname__}'s docstring needs one line {_PLACEHOLDER} (its Parameters)")
        indent = lines[at[0]][: len(lines[at[0]]) - len(lines[at[0]].lstrip())]
        entries = [indent + line if line else line for line in parameters(cls, prefix).split("\n")]
        cls.__doc__ = "\n".join([*lines[: at[0]], *entries, *lines[at[0] + 1 :]])
        return cls

    return fill
