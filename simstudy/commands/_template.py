"""A command to copy: each model's best and median score, from a score file or a shipped data set.

Not a command simstudy runs: its name starts with ``_`` and it is in no registry. Copy it to
``simstudy/commands/NAME.py`` (or to a plug-in package), rename the command, and replace each hook's body. Every
hook a command has, in the order a run meets them (:func:`simstudy.launch.run` calls them; the command line and
:func:`simstudy.run` both go through it):

====================  =========  ========================================================================
hook                  required   what it does
====================  =========  ========================================================================
:class:`Options`      yes        the command's keys: a frozen dataclass of :func:`simstudy.schema.option`
                                 fields, subclassing :class:`~simstudy.commands._data.DataOptions` (the
                                 data keys); the defaults' and the ``--help`` words' only home
:func:`parse`         yes        a mapping of keys -> a frozen config (one-line
                                 :class:`~simstudy.schema.ConfigError` naming the key and value)
:func:`run`           yes        ``run(config, scores) -> result``: a frozen result; no printing, no files (a
                                 command storing resumable chunks is given the run directory too:
                                 ``chunks=True``)
:func:`write`         no         the command's files in the run directory (through :mod:`simstudy.io`)
:func:`lines`         no         what the terminal shows at the end
``charts``            no         ``charts(files) -> list of Chart``: ``report.html``'s charts of the run
                                 directory, described from the tables ``write`` left there, one
                                 :class:`simstudy.charts.Chart` per chart (``simstudy curve``'s:
                                 :func:`simstudy.commands.curve.report_charts`, the chart its
                                 figure.png is drawn from)
``page``              no         the Markdown page ``write`` leaves at the top of the run directory
                                 (``"CURVE.md"``): ``report.html`` shows it
====================  =========  ========================================================================

Then declare the spec at the end of the module, ``COMMAND = Command("NAME", run=run, options=Options, ...)``
with its help (``usage``, ``examples``, ``writes``), and add one line to the built-in table of
:data:`simstudy.extend.commands` (a plug-in calls :func:`simstudy.registry.register_command` instead). Nothing
in :mod:`simstudy.cli` changes: ``simstudy NAME --help`` and ``simstudy NAME data=...`` work from the spec (the
Hydra config is made from the schema when ``configs/NAME.yaml`` does not exist). :data:`COMMAND` below is the
spec, unregistered.

A *plain* command (``key=value`` arguments, no options schema and no Hydra config, like ``simstudy report``) is
one file too: its spec has no ``options`` but ``keys`` (each explained for ``--help``; a ``-`` first makes it a
flag), ``required`` (and ``actions`` for a first word), ``parse(mapping) -> config`` over the arguments' strings,
``run(config) -> result``, ``lines(result)`` and ``failure(result)`` (one line, exit status 1); what only the
command line may do is asked for by a flag (``logs``, ``composes_study``, ``reads_sweep``), and
:func:`simstudy.cli.plain.run` runs it (:mod:`simstudy.commands.report` is a short one to copy).

Examples
--------
>>> import dataclasses, tempfile
>>> from pathlib import Path
>>> import simstudy
>>> from simstudy import extend, registry
>>> spec = registry.register_command(dataclasses.replace(COMMAND, name="template_demo"))
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = Path(tmp, "s.csv").write_text("model,score\\na,0.2\\na,0.4\\na,0.3\\nb,0.5\\nb,0.1\\n")
...     result = simstudy.run("template_demo", data=str(Path(tmp, "s.csv")), out_dir=Path(tmp, "out"))
...     table = Path(tmp, "out", "best.csv").read_text()
>>> print(table, end="")
model,runs,best,median
a,3,0.4,0.3
b,2,0.5,0.3
>>> _ = extend.commands.unregister("template_demo")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simstudy import io, schema, schema_docs
from simstudy.commands._data import DataConfig, DataOptions, command_config, command_iv, data_config
from simstudy.registry import Command
from simstudy.schema import option

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Options", "Config", "Result", "parse", "run", "write", "lines"]


@schema_docs.documented()
@dataclass(frozen=True)
class Options(DataOptions):
    """The command's keys: the data keys and its own (``simstudy NAME --help`` lists them from here).

    Parameters
    ----------
    %(parameters)s

    Examples
    --------
    >>> schema.parse(Options, {"data": "runs.csv"}).digits
    4
    """

    digits: int = option(4, "the decimals the terminal shows", schema.integer(minimum=0))


@dataclass(frozen=True)
class Config:
    """The keys validated and frozen (what :func:`parse` returns).

    Parameters
    ----------
    data : DataConfig
        The scores and how to read them.
    digits : int
        ``digits``: the decimals the terminal shows.

    Examples
    --------
    >>> parse({"data": "runs.csv", "digits": 2}).digits
    2
    """

    data: DataConfig
    digits: int


def parse(cfg: Mapping) -> Config:
    """Validate the command's keys (those of :class:`Options`).

    Parameters
    ----------
    cfg : Mapping
        Key to raw value (missing keys take the schema's defaults; ``data`` is required).

    Returns
    -------
    Config
        The validated settings.

    Raises
    ------
    ConfigError
        One line naming the first invalid key and its value.

    Examples
    --------
    >>> parse({"data": "runs.csv", "digits": -1})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: digits must be an integer >= 0, got -1
    """
    o = command_iv(Options, "template", cfg)
    return command_config(Config, o, data_config(o))  # every other field: the key of the same name


@dataclass(frozen=True)
class Result:
    """What :func:`run` returns.

    Parameters
    ----------
    config : Config
        The settings it ran with.
    table : pandas.DataFrame
        One row per model: ``model``, ``runs``, ``best`` and ``median`` (score units).

    Examples
    --------
    >>> result = run(parse({"data": "x.csv"}), {"a": np.array([0.2, 0.4])})
    >>> result.table["best"].tolist()
    [0.4]
    """

    config: Config
    table: pd.DataFrame


def run(config: Config, scores: Mapping[str, np.ndarray]) -> Result:
    """Each model's best and median score (the lowest with ``minimize=true``).

    Parameters
    ----------
    config : Config
        From :func:`parse`.
    scores : Mapping of str to numpy.ndarray
        Each model's scores, in score units, as the data keys read them.

    Returns
    -------
    Result
        The table.

    Examples
    --------
    >>> run(parse({"data": "x.csv"}), {"a": np.array([0.5, 0.1, 0.3])}).table
      model  runs  best  median
    0     a     3   0.5     0.3
    """
    import pandas as pd

    best = np.min if config.data.minimize else np.max
    rows = [(m, x.size, float(best(x)), float(np.median(x))) for m, x in scores.items()]
    return Result(config, pd.DataFrame(rows, columns=["model", "runs", "best", "median"]))


def write(result: Result, out_dir: Path) -> None:
    """``best.csv`` in the run directory, written atomically.

    Parameters
    ----------
    result : Result
        From :func:`run`.
    out_dir : pathlib.Path
        The run directory (it exists).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write(run(parse({"data": "x.csv"}), {"a": np.array([0.5])}), Path(tmp))
    ...     print(Path(tmp, "best.csv").read_text(), end="")
    model,runs,best,median
    a,1,0.5,0.5
    """
    io.write_csv(result.table, out_dir / "best.csv")


def lines(result: Result) -> list[str]:
    """One line per model: its best and median score.

    Parameters
    ----------
    result : Result
        From :func:`run`.

    Returns
    -------
    list of str
        One line per model.

    Examples
    --------
    >>> lines(run(parse({"data": "x.csv"}), {"a": np.array([0.5, 0.1])}))
    ['a: best 0.5000, median 0.3000 of 2 runs']
    """
    d = result.config.digits
    return [
        f"{r.model}: best {r.best:.{d}f}, median {r.median:.{d}f} of {r.runs} runs" for r in result.table.itertuples()
    ]


#: The command's spec (unregistered: a copy registers, or gets its line in :data:`simstudy.extend.commands`).
COMMAND = Command(
    "template",
    run=run,
    options=Options,
    parse=parse,
    write=write,
    lines=lines,
    usage="simstudy template data=FILE|DATASET [key=value ...]",
    examples=("simstudy template data=runs.csv digits=2",),
    writes="outputs/template/<overrides>/: best.csv, config.yaml, run.json and report.html",
    summary="each model's best and median score",
)
