"""``simstudy replay``: rerun one chunk of a run in this process, so that its exception shows in full.

A failed chunk is reported in one line (its cell and index, and the ``simstudy replay`` line that reruns it);
:func:`run` reruns exactly that chunk, sequentially here, and lets its exception propagate with its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simstudy.commands.study import load_run, trusted
from simstudy.registry import Command
from simstudy.schema import ConfigError

__all__ = ["run", "parse", "execute", "lines", "Replay", "Replayed"]


@dataclass(frozen=True)
class Replayed:
    """A replayed chunk that ran without raising (had it raised, its exception would have propagated).

    Parameters
    ----------
    message : str
        Which chunk ran: ``chunk CELL/INDEX ran without error``.

    Examples
    --------
    >>> Replayed("chunk 2499044571cfe1a6/0 ran without error").message
    'chunk 2499044571cfe1a6/0 ran without error'
    """

    message: str


def _chunk_iv(chunk: str) -> tuple[str, int]:
    cell, _, k = chunk.rpartition("/")
    if not cell or not k.isdigit():
        raise ConfigError(
            f"chunk must be CELL/K (a cell key and a chunk number, as in the failure report), got {chunk!r}"
        )
    return cell, int(k)


def run(run_dir: str | Path, chunk: str, plugins: tuple[str, ...] = (), *, before=None) -> Replayed:
    """Rerun chunk ``CELL/K`` of the run in ``run_dir`` here, sequentially; its exception propagates in full.

    Parameters
    ----------
    run_dir : str or path-like
        The run directory (its ``config.yaml`` names the study).
    chunk : str
        ``CELL/K``: a cell key and a chunk number, as in the failure report.
    plugins : tuple of str, default ()
        Import paths of plug-ins the stored config names that the caller trusts.
    before : callable, optional
        Called without arguments once the run's config is validated, before the chunk runs (the command
        line sets up its logging there).

    Returns
    -------
    Replayed
        When the chunk ran without raising.

    Raises
    ------
    ConfigError
        If ``chunk`` is not ``CELL/K``.
    simstudy.engine.rundir.Refused
        If the directory holds no valid run, or the chunk is not one of the study's (one line, status 2).

    Examples
    --------
    >>> run("no/such/run", "abc")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: chunk must be CELL/K (a cell key and a chunk number, as in the failure report), got 'abc'
    """
    replayed = parse({"run_dir": run_dir, "chunk": chunk, "plugins": ",".join(plugins)})
    if before is not None:
        before()
    return execute(replayed)


@dataclass(frozen=True)
class Replay:
    """A chunk to replay, checked (what :func:`parse` returns).

    Parameters
    ----------
    run_dir : pathlib.Path
        The run directory.
    config : simstudy.config.Config
        Its config, set to replay the chunk here (sequentially, one worker, no progress bar).

    Examples
    --------
    >>> Replay(Path("outputs/x"), None).run_dir
    PosixPath('outputs/x')
    """

    run_dir: Path
    config: Any


def parse(keys) -> Replay:
    """The run and chunk that ``run_dir=DIR chunk=CELL/K [plugins=PATH,...]`` name, checked.

    Parameters
    ----------
    keys : Mapping
        ``run_dir`` and ``chunk`` (required), ``plugins`` (comma-separated import paths the caller trusts).

    Returns
    -------
    Replay
        The run directory and its config, set to replay the chunk.

    Raises
    ------
    ConfigError
        If ``chunk`` is not ``CELL/K``.
    simstudy.engine.rundir.Refused
        If the directory holds no valid run (one line, status 2).

    Examples
    --------
    >>> parse({"run_dir": "no/such/run", "chunk": "abc"})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: chunk must be CELL/K (a cell key and a chunk number, as in the failure report), got 'abc'
    """
    cell, k = _chunk_iv(keys["chunk"])
    run_dir = Path(keys["run_dir"])
    config = load_run(run_dir, trusted(keys), replay=(cell, k), n_jobs=1, backend="sequential", progress=False)
    return Replay(run_dir, config)


def execute(replay: Replay) -> Replayed:
    """Run the chunk :func:`parse` checked; its exception propagates in full.

    Parameters
    ----------
    replay : Replay
        From :func:`parse`.

    Returns
    -------
    Replayed
        When the chunk ran without raising.

    Raises
    ------
    simstudy.engine.rundir.Refused
        If the chunk is not one of the study's (one line, status 2).

    Examples
    --------
    >>> import tempfile
    >>> import simstudy
    >>> with tempfile.TemporaryDirectory() as out:
    ...     _ = simstudy.run("dodge2021_fig1", ["study.reps=100", "budget.B=3", "runner.progress=false"], out_dir=out)
    ...     cell = next(Path(out, "chunks").glob("*/cell-*")).name.removeprefix("cell-")
    ...     done = execute(parse({"run_dir": out, "chunk": f"{cell}/0"}))
    >>> done.message.endswith("/0 ran without error")
    True
    """
    from simstudy.engine.rundir import fail
    from simstudy.registry import study
    from simstudy.studies.base import ReplayDone

    try:
        study(replay.config.study.kind).run(replay.config, replay.run_dir)
    except ReplayDone as done:
        return Replayed(str(done))
    except ValueError as exc:
        if "is not a chunk of this study" not in str(exc):
            raise
        fail(str(exc))
    raise AssertionError("a replayed chunk either raises or ends in ReplayDone")  # pragma: no cover


def lines(done: Replayed) -> list[str]:
    """What the terminal shows of a chunk that ran without error.

    Parameters
    ----------
    done : Replayed
        From :func:`execute`.

    Returns
    -------
    list of str
        One line.

    Examples
    --------
    >>> lines(Replayed("chunk c0/1 ran without error"))
    ['chunk c0/1 ran without error (the failure did not reproduce)']
    """
    return [f"{done.message} (the failure did not reproduce)"]


#: The command (:data:`simstudy.extend.commands` finds it): its steps, and the words of its ``--help``.
COMMAND = Command(
    "replay",
    run=execute,
    parse=parse,
    lines=lines,
    required=("run_dir", "chunk"),
    logs="run",
    usage="simstudy replay run_dir=DIR chunk=CELL/K [plugins=PATH,...]",
    examples=("simstudy replay run_dir=outputs/dodge2021_fig1/default chunk=c0123abcd/3",),
    writes="nothing: it reruns the chunk and shows its traceback",
    keys={
        "run_dir": "the run directory of the failed run",
        "chunk": "the failed chunk as CELL/K, as the failure message names it",
        "plugins": "comma-separated import paths (module.function) of plug-ins the run's config.yaml names that you "
        "trust: a stored config imports no other plug-in than these and the registered ones (importing runs code)",
    },
)
