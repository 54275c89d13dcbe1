"""Every option schema's docstring lists exactly its fields, in order, with the defaults the dataclass holds.

The Parameters sections are written from the fields by :func:`simstudy.schema_docs.documented`; these tests make
sure every schema of the studies and the commands is written that way, so a new field cannot go undocumented
and a removed one cannot linger in a hand-written copy.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from dataclasses import dataclass

import pytest

from simstudy import registry, schema, schema_docs
from simstudy.commands import _data
from simstudy.commands._data import REQUIRED
from simstudy.studies import _template
from simstudy.studies.base import StudyOptions

docscrape = pytest.importorskip("numpydoc.docscrape")

#: Where schemas live, and the prefix a config gives their keys (``study.reps``; a command's ``data=...``).
PACKAGES = {"simstudy.studies": "study.", "simstudy.commands": ""}


def _schemas() -> dict[str, tuple[type, str]]:
    """Every dataclass of the studies' and commands' modules (private ones too) whose fields carry a ``doc``."""
    found = {}
    for package, prefix in PACKAGES.items():
        path = importlib.import_module(package).__path__
        for info in [None, *pkgutil.walk_packages(path, f"{package}.")]:
            module = importlib.import_module(package if info is None else info.name)
            for obj in vars(module).values():
                if (
                    inspect.isclass(obj)
                    and obj.__module__ == module.__name__
                    and dataclasses.is_dataclass(obj)
                    and any("doc" in f.metadata for f in dataclasses.fields(obj))
                ):
                    found[f"{obj.__module__}.{obj.__qualname__}"] = (obj, prefix)
    return found


SCHEMAS = _schemas()
# The run-level groups' schemas (simstudy.config), with their groups' prefixes.
from simstudy.config import BudgetConfig, RunnerConfig  # noqa: E402

SCHEMAS.update(
    {
        "simstudy.config.RunnerConfig": (RunnerConfig, "runner."),
        "simstudy.config.BudgetConfig": (BudgetConfig, "budget."),
    }
)


def _entries(cls: type) -> list:
    return docscrape.NumpyDocString(inspect.cleandoc(cls.__doc__ or ""))["Parameters"]


def test_every_schema_is_found():
    known = {
        StudyOptions,
        _template.Options,
        _data.DataOptions,
        *(registry.study(kind).options for kind in registry.study_kinds()),
        *(registry.command(c).options for c in registry.command_names() if not registry.command(c).plain),
    }
    assert known <= {cls for cls, _ in SCHEMAS.values()}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_docstring_lists_exactly_the_fields_in_order_with_their_defaults(name):
    cls, prefix = SCHEMAS[name]
    fields = dataclasses.fields(cls)
    entries = _entries(cls)
    assert [e.name for e in entries] == [f.name for f in fields]  # none missing, none left over, in order
    for entry, f in zip(entries, fields):
        assert f.metadata.get("doc"), f.name  # no setting without words
        if f.default == REQUIRED:
            assert entry.type.endswith(", required"), entry.type
            continue
        shown = entry.type.rsplit(", default ", 1)[1]
        if ", ..., " in shown:  # a long tuple, shortened to its ends
            head, tail = shown[1:-1].split(", ..., ")
            assert repr(f.default).startswith(f"({head}, ") and repr(f.default).endswith(f", {tail})"), shown
        else:
            assert shown == repr(f.default), f.name
        text = " ".join(entry.desc)
        words = " ".join(f.metadata["doc"].split())
        if f.metadata.get("internal"):  # set by code: no config key to name
            assert text.startswith(words) and "Set by code" in text, f.name
        else:
            assert text.startswith(f"``{prefix}{f.name}``: {words}"), f.name


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_docstring_is_written_from_the_schema_and_fits_the_source_width(name):
    cls, prefix = SCHEMAS[name]
    assert "%(parameters)s" not in cls.__doc__
    assert f"Parameters\n----------\n{schema_docs.parameters(cls, prefix)}\n\n" in inspect.cleandoc(cls.__doc__)
    section = inspect.cleandoc(cls.__doc__).split("Parameters\n----------\n")[1].split("\n\n")[0]
    assert [line for line in section.splitlines() if 4 + len(line) > 116] == []  # as the class's source shows it


def test_parameters_writes_types_defaults_and_what_each_check_accepts():
    @dataclass(frozen=True)
    class Opts:
        data: str = schema.option(REQUIRED, "the scores", schema.text())
        sizes: tuple[int, ...] | None = schema.option(
            None, "sample sizes", schema.optional(schema.listed(schema.integer(minimum=2), what="a size", sort=False))
        )
        pairs: float | tuple = schema.option(None, "per model or for all", type_doc="float or tuple of pairs")
        grid: tuple[float, ...] = schema.option(tuple(i / 10 for i in range(1, 40)), "levels", schema.number())

    text = schema_docs.parameters(Opts, "x.")
    lines = text.splitlines()
    assert lines[:4] == [
        "data : str, required",
        "    ``x.data``: the scores. A non-empty string.",
        "sizes : tuple of int or None, default None",
        "    ``x.sizes``: sample sizes. Null or a list of a size, each an integer >= 2 (in the order given, repeats",
    ]
    assert "pairs : float or tuple of pairs, default None" in lines
    assert "    ``x.pairs``: per model or for all." in lines  # a check without words: the doc alone
    grid = next(line for line in lines if line.startswith("grid"))
    assert grid.startswith("grid : tuple of float, default (0.1, 0.2, ") and grid.endswith(", 3.8, 3.9)")
    assert ", ..., " in grid and 4 + len(grid) <= 116


def test_parameters_lists_a_field_code_sets_without_a_key():
    # a field no config may give (metadata "internal", as schema.internal makes it) is in the signature all the same
    @dataclass(frozen=True)
    class Opts:
        reps: int = schema.option(10, "replicates", schema.integer(minimum=2))
        resumed: bool = dataclasses.field(default=False, metadata={"doc": "set on a resumed run", "internal": True})

    assert schema_docs.parameters(Opts, "x.").splitlines()[2:] == [
        "resumed : bool, default False",
        "    set on a resumed run. Set by code, not a setting of a config.",
    ]


def test_documented_needs_its_placeholder():
    @dataclass(frozen=True)
    class Opts:
        """Options whose Parameters someone wrote by hand."""

        reps: int = schema.option(10, "replicates", schema.integer(minimum=2))

    with pytest.raises(ValueError, match="needs one line"):
        schema_docs.documented("study.")(Opts)
