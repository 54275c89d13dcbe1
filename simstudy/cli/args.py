"""A command line's ``key=value`` arguments as text: what simstudy reads off them before Hydra or a plain
command's ``parse`` sees them. Shared by the command line (:mod:`simstudy.cli.main`, :mod:`simstudy.cli.plain`)
and, through :mod:`simstudy.cli.compose`, the Python API (:func:`simstudy.run` turns its keywords into the same
arguments). Nothing here prints, exits or reads ``sys.argv``: a bad argument is a
:class:`~simstudy.engine.rundir.Refused` (its one line), a notice is said by the caller's ``notice``.

======================  =============================================================================================
``check_arguments``     every argument is ``key=value`` (a stray word: an unquoted path with spaces)
``last_of_each_key``    a key given twice: the last kept, and a notice
``optional_keys``       ``distribution.stream=`` set where the config has it, added where it has none
``take_overwrite``      ``overwrite=true|false`` taken off the overrides
``quote_paths``         a path key's value taken as one path, quoted or not (``=`` and ``,`` in it)
``unquote``             a plain command's value without the quotes around it
``as_override``         a Python keyword as the command line's ``key=value``
``plain_arguments``     a plain command's arguments checked against its spec's keys, as the mapping its ``parse`` takes
======================  =============================================================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from simstudy.engine.rundir import fail


def check_arguments(argv: list[str]) -> None:
    """Every argument is ``key=value``: a stray word is most often the rest of an unquoted path with spaces
    (``data=my results.csv`` reaches us as ``data=my`` and ``results.csv``)."""
    for i, arg in enumerate(argv):
        if "=" in arg or arg.startswith("~"):  # ~key deletes a key: Hydra's grammar, no value
            continue
        previous = next((a for a in reversed(argv[:i]) if "=" in a), None)
        if previous is None:
            fail(f"argument {arg!r} is not key=value (e.g. data=FILE; simstudy --help lists the commands)")
        key, _, value = previous.partition("=")
        rest = [value]
        for a in argv[argv.index(previous) + 1 :]:
            if "=" in a:
                break
            rest.append(a)
        fail(f"argument {arg!r} is not key=value; a path with spaces needs quotes: {key}='{' '.join(rest)}'")


def last_of_each_key(argv: list[str], notice: Callable[[str], None]) -> list[str]:
    """The arguments with a key given more than once kept only at its last ``key=value`` (in that place), and a
    one-line notice per such key, said by ``notice`` (the command line prints it,
    :func:`simstudy.cli.plain.print_notice`; the Python API logs it): the rule for a key given twice (``study.reps=10 study.reps=20`` runs
    with 20, in the directory named after 20 alone). Keys are compared without their ``+``/``++``: ``+key=1
    key=2`` is kept as ``++key=2`` (added or set); flags and ``~key`` deletions are kept as given."""
    # A key is the same whatever its + or ++ (add, add or set): budget.B=5 ++budget.B=5 is a key given twice too.
    keys = [a.partition("=")[0].lstrip("+") if "=" in a and not a.startswith(("-", "~")) else None for a in argv]
    kept = []
    for i, (arg, key) in enumerate(zip(argv, keys)):
        if key is not None and key in keys[i + 1 :]:
            continue
        given = [a for a, k in zip(argv[:i], keys[:i]) if key is not None and k == key]
        if given:
            times = "twice" if len(given) == 1 else f"{len(given) + 1} times"
            notice(f"{key} given {times} ({' '.join([*given, arg])}): the last is used, {arg}")
            if not arg.startswith("+") and any(a.startswith("+") for a in given):  # an earlier one added the key
                arg = f"++{arg}"  # add it or set it, as the dropped ones and the last did together
        kept.append(arg)
    return kept


#: A distribution's optional keys, which no distribution config lists (their absence means "none"): typed as
#: ``distribution.stream=NAME`` (as the guides spell them), they are added where absent, as ``++KEY`` would.
_OPTIONAL_DISTRIBUTION_KEY = re.compile(r"distribution(\.[A-Za-z_][A-Za-z0-9_]*)?\.stream=")


def optional_keys(args: list[str]) -> list[str]:
    """The overrides with ``distribution.stream=NAME`` (or ``distribution.a.stream=`` of a pair) as ``++`` keys:
    set where the config has one, added where it has none. Hydra refused the spelling of the guides and the
    CHANGELOG as "not a key"; only ``+distribution.stream=`` worked."""
    return [f"++{arg}" if _OPTIONAL_DISTRIBUTION_KEY.match(arg) else arg for arg in args]


def take_overwrite(args: list[str]) -> tuple[list[str], bool]:
    """The overrides without ``overwrite=...``, and its value (true or false; false if not given): whether a run
    directory's earlier results are moved to ``previous/<time>/`` inside it instead of refusing other inputs or
    settings (:class:`~simstudy.engine.rundir.RunDir`). Taken off before Hydra sees them: it changes no number,
    so neither the config nor the run directory's name."""
    rest, overwrite = [], False
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key.lstrip("+") == "overwrite":
            if value.strip().lower() not in ("true", "false"):
                fail(f"overwrite must be true or false, got {value!r}")
            overwrite = value.strip().lower() == "true"
            continue
        rest.append(arg)
    return rest, overwrite


#: The keys of a Hydra command line whose value is a path. simstudy names its own directories with ``=`` and ``,``
#: (``outputs/curve/data=x.csv,low=0``, a sweep's ``seed=1,n=2``), which Hydra's override grammar reads as a nested
#: assignment or a list of sweep values: such a value is quoted here, so that a path is taken the same way quoted
#: or not, as the plain commands take ``run_dir=`` (:func:`unquote`).
_PATH_KEYS = frozenset({"data", "distribution.path", "hydra.run.dir", "hydra.sweep.dir"})
#: The characters of Hydra's override grammar that a value must quote (besides spaces).
GRAMMAR = re.compile(r"[=,()\[\]{}:'\"\s]")


def quote_paths(argv: list[str]) -> list[str]:
    """The arguments with each path value (a key of :data:`_PATH_KEYS`) in one form, whether it was typed quoted
    or not: quoted (single quotes) where Hydra's grammar would otherwise split or refuse it, else bare. A value
    with ``=`` (never valid bare), or with another character of the grammar (``,`` ...) that was typed quoted or
    names an existing file or directory, is one path. So a path typed bare, in single or in double quotes reaches
    Hydra the same, and names the same run directory. A bare comma in a path that does not exist is left to
    Hydra: under ``-m``, ``data=a.csv,b.csv`` sweeps over two files.

    Examples
    --------
    >>> quote_paths(["data=out/x=1,y=2/s.csv", 'data="a=b.csv"', "data='s.csv'", "-m", "data=a.csv,b.csv"])
    ["data='out/x=1,y=2/s.csv'", "data='a=b.csv'", 'data=s.csv', '-m', 'data=a.csv,b.csv']
    """
    out = []
    for arg in argv:
        key, eq, typed = arg.partition("=")
        if eq and not arg.startswith("-") and key.lstrip("+") in _PATH_KEYS:
            value = unquote(typed)
            one_path = value != typed or "=" in value or Path(value).expanduser().exists()
            if value == typed and ("'" in value or '"' in value) and not Path(value).expanduser().exists():
                pass  # quoted in parts by the user ('a=1/x.csv','b=2/y.csv': a sweep's values): as typed
            elif not GRAMMAR.search(value):
                arg = f"{key}={value}"
            elif one_path and (quote := "'" if "'" not in value else '"' if '"' not in value else None):
                arg = f"{key}={quote}{value}{quote}"
            # else as typed: a comma list (a sweep), or a path holding both quotes (Hydra's message says how)
        out.append(arg)
    return out


def unquote(value: str) -> str:
    """A value without one pair of matching quotes around it (``'x'`` or ``"x"``), as Hydra reads a quoted value:
    the plain commands' paths (``run_dir='outputs/curve/data=x.csv,low=0'``) are taken quoted or not.

    Examples
    --------
    >>> unquote("'outputs/curve/data=x.csv,low=0'"), unquote('"a b"'), unquote("it's"), unquote("'a','b'")
    ('outputs/curve/data=x.csv,low=0', 'a b', "it's", "'a','b'")
    """
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" and value[0] not in value[1:-1]:
        return value[1:-1]
    return value  # not one quoted value: bare, or a list of quoted ones ('a=1/x.csv','b=2/y.csv', a sweep's)


def as_override(key: str, value) -> str:
    """A Python keyword as the command line's ``key=value`` (YAML as typed: ``true``, ``null``, ``[a,b]``, a string
    quoted where Hydra's grammar would read it otherwise), so that it names the same run directory.

    Examples
    --------
    >>> as_override("minimize", True), as_override("models", ["a", "b"]), as_override("data", "x=1.csv")
    ('minimize=true', 'models=[a,b]', "data='x=1.csv'")
    """

    def text(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return "null"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ",".join(text(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{text(x)}" for k, x in v.items()) + "}"
        v = str(v)
        return f"'{v}'" if GRAMMAR.search(v) and "'" not in v else v

    return f"{key}={text(value)}"


def _key_values(
    argv: list[str],
    command: str,
    notice: Callable[[str], None],
    required: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> dict:
    """``key=value`` arguments of a command that takes no Hydra config; anything else fails in one line. A value
    is taken quoted or not (``run_dir='outputs/curve/data=x.csv,low=0'``), as the Hydra commands take a path."""
    opts: dict[str, str] = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        value = unquote(value)
        if not sep or key not in (*required, *optional):
            fail(
                f"simstudy {command}: unexpected argument {arg!r} (usage: simstudy {command} "
                + " ".join(f"{k}=..." for k in required)
                + "".join(f" [{k}=...]" for k in optional)
                + ")",
            )
        if key in opts:
            notice(f"{key} given twice ({key}={opts[key]} {arg}): the last is used, {arg}")
        opts[key] = value
    for key in required:
        if not opts.get(key):
            fail(f"simstudy {command}: {key} is required: set it with {key}=...")
    return opts


def plain_arguments(spec, argv: list[str], notice: Callable[[str], None]) -> dict:
    """A plain command's arguments (``simstudy NAME ...`` after NAME, or :func:`simstudy.run`'s keywords as
    ``key=value``) as the mapping ``spec.parse`` takes: the action (first word), the flags (``True``) and the keys,
    checked against the spec's ``keys``, ``required`` and ``actions`` (anything else refused in one line naming the
    argument). A key given twice is said by ``notice``; the last is used.

    Examples
    --------
    >>> from simstudy import registry
    >>> plain_arguments(registry.command("report"), ["run_dir='outputs/x=1'"], print)
    {'run_dir': 'outputs/x=1'}
    """
    if spec.composes_study:
        flags = [a for a in argv if a.startswith("-")]
        if flags:
            fail(f"simstudy {spec.name}: unexpected argument {flags[0]!r} (usage: {spec.usage})")
        return {"argv": list(argv)}
    flags = [k for k in spec.keys if k.startswith("-")]
    given = {k.lstrip("-"): True for k in flags if k in argv}
    argv = [a for a in argv if a not in flags]
    if not spec.actions:
        optional = tuple(k for k in spec.keys if k not in spec.required and not k.startswith("-"))
        return {**given, **_key_values(argv, spec.name, notice, spec.required, optional)}
    actions = list(spec.actions)
    word = argv[0] if argv and "=" not in argv[0] and not argv[0].startswith("-") else None
    if word is not None and word not in actions:
        import difflib

        close = difflib.get_close_matches(word, actions, n=1)
        fail(
            f"simstudy {spec.name}: unknown action {word!r}: {f'did you mean {close[0]}? ' if close else ''}the "
            f"actions are {actions[0]} (the default) and {', '.join(actions[1:])}",
        )
    action = word or actions[0]
    required, optional = spec.actions[action]
    label = spec.name if action == actions[0] else f"{spec.name} {action}"
    return {"action": action, **given, **_key_values(argv[1:] if word else argv, label, notice, required, optional)}
