"""The painter: a study run's figure drawn by a second process that imported matplotlib while the first computed.

Importing matplotlib, setting the theme and loading the fonts cost about 0.35 s, a quarter of
``simstudy experiment=dodge2021_fig1`` end to end. The ``simstudy`` script (:func:`simstudy.cli.main.console`)
therefore forks a painter before it imports anything heavy: on a machine with two cores the painter's imports
run beside the main process's own (Hydra, pandas, the study), and when the study has finished, the main process
hands it the summary and waits for the files. A Python caller (:func:`simstudy.run`, the tests) never starts
one: everything is drawn in its own process, as before.

The figure is the same either way: the same function of the same summary, saved by the same
:func:`simstudy.io.save_figure`. Whenever the painter cannot draw it (no ``fork`` on this platform, a figure
function that does not pickle by reference, as a plug-in's may not, an exception while drawing, a painter that
died, was stopped or gave no answer within :data:`TIMEOUT` seconds), :func:`paint` returns ``False`` and the
caller draws it in its own process, where an error has its full traceback. The main process never blocks on the
painter: it waits on the pipes in short ticks, checking each time that the painter still runs (a stopped or dead
painter is given up at once, with one log line, and a stopped one is killed). The painter's log records and warnings are sent back with its answer and emitted by the main process,
so the run's log holds them as before.

The painter never outlives the run by more than its imports: it reads its requests from a pipe and exits at
end of file, which the main process's exit closes. It ignores Ctrl-C (the main process handles it, and a
figure being saved is written atomically either way), and its standard streams are ``/dev/null``, so a caller
reading the main process's output never waits for it.

============================  ========================================================================================
:func:`start`                 fork the painter (the ``simstudy`` script, before its heavy imports)
:func:`warm`                  ask it to import a figure function's module while the study runs
:func:`paint`                 draw a figure and save it in each path; ``False`` when the caller must draw it itself
:func:`send`, :func:`done`    the same in two steps, for a caller with other work to do while it draws
:func:`stop`                  close the pipe (the painter exits)
============================  ========================================================================================
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import signal
import struct
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["start", "warm", "paint", "send", "done", "stop", "running"]

#: ``SIMSTUDY_PAINTER=0`` draws every figure in the main process; ``=1`` starts a painter even without an idle core.
ENV = "SIMSTUDY_PAINTER"

#: Seconds the main process waits for the painter to take a request or answer it; then it draws the figure itself.
#: A figure takes about a second; the painter's own imports, done while the study ran, a few at most.
TIMEOUT = 120.0

# How often (seconds) a waiting main process checks that the painter still runs.
_TICK = 0.1

_HEADER = struct.Struct("<Q")

log = logging.getLogger(__name__)

# (pid, request pipe's write end, reply pipe's read end) of this process's painter, if it has one.
_painter: tuple[int, int, int] | None = None


def running() -> bool:
    """Whether this process has a painter to draw its figures.

    Returns
    -------
    bool
        ``True`` after :func:`start` forked one, until :func:`stop` or a failed :func:`paint`.

    Examples
    --------
    >>> running()
    False
    """
    return _painter is not None


def start() -> bool:
    """Fork the painter, which imports matplotlib and waits for figures to draw.

    Call it early, before the heavy imports, from a process that will draw a figure (the ``simstudy`` script
    does, for a study run). Nothing happens on a platform without ``os.fork``, with ``SIMSTUDY_PAINTER=0``,
    without an idle core (one core only, or a load average at the number of cores; ``SIMSTUDY_PAINTER=1``
    starts it anyway), or when a painter runs already.

    Returns
    -------
    bool
        Whether a painter was started.

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV: "0"}):  # every figure drawn in this process
    ...     start()
    False
    """
    global _painter
    wanted = os.environ.get(ENV, "")
    if _painter is not None or not hasattr(os, "fork") or wanted == "0" or (wanted != "1" and not _idle_core()):
        return False
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the painter
        try:
            os.close(request_w)
            os.close(reply_r)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # a caller collecting the script's output must not wait for the painter's end
                os.dup2(null, fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _serve(request_r, reply_w)
        finally:
            os._exit(0)  # never the parent's atexit handlers or buffered output
    os.close(request_r)
    os.close(reply_w)
    os.set_blocking(request_w, False)  # a large frame is written in pieces, each awaited with a deadline
    _painter = (pid, request_w, reply_r)
    return True


def _idle_core() -> bool:
    """Whether a core is likely free for the painter: two cores or more, and a one-minute load average below
    their number. The painter repeats this process's numpy and pandas imports, so on one core, or on a saturated
    machine, it would slow the run it is meant to speed up. (An instantaneous count of running tasks was tried:
    numpy's BLAS threads, which spin for a while after loading, made it flip at random.)"""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return cores >= 2 and load < cores


def warm(module: str) -> None:
    """Ask the painter to import ``module`` (a figure function's) now, while the study computes.

    Parameters
    ----------
    module : str
        A module's dotted name; nothing happens without a painter, and an import error there is ignored
        (:func:`paint` will then fail, and the caller draws the figure).

    Examples
    --------
    >>> warm("simstudy.figures")  # no painter in this process: nothing to do
    """
    if _painter is not None:
        _send(("warm", module))


def paint(figure: Callable, frame: Any, paths: Sequence[str | os.PathLike], **savefig: Any) -> bool:
    """Draw ``figure(frame)`` in the painter and save it to every path (:func:`simstudy.io.save_figure`).

    :func:`send` then :func:`done`: a caller with other work to do meanwhile calls those two itself.

    Parameters
    ----------
    figure : callable
        ``figure(frame) -> matplotlib.figure.Figure``, a module-level function (it is sent by reference).
    frame : object
        Its argument, usually the tidy summary (a pandas.DataFrame); sent pickled.
    paths : sequence of str or os.PathLike
        The files to write, each in the format of its suffix.
    **savefig
        Passed to :func:`simstudy.io.save_figure` (``dpi=150``).

    Returns
    -------
    bool
        ``True`` when every file was written. ``False`` when the caller must draw the figure itself: no
        painter, a figure or frame that does not pickle, or an error in the painter (which is then stopped,
        so that the caller's own attempt shows the error with its traceback).

    Examples
    --------
    >>> paint(print, None, [])  # no painter in this process
    False
    """
    return send(figure, frame, paths, **savefig) and done()


def send(figure: Callable, frame: Any, paths: Sequence[str | os.PathLike], **savefig: Any) -> bool:
    """Ask the painter to draw ``figure(frame)`` into ``paths``, without waiting (:func:`done` waits).

    Parameters
    ----------
    figure : callable
        ``figure(frame) -> matplotlib.figure.Figure``, a module-level function (as for :func:`paint`).
    frame : object
        Its argument, sent pickled.
    paths : sequence of str or os.PathLike
        The files to write, each in the format of its suffix.
    **savefig
        Passed to :func:`simstudy.io.save_figure`.

    Returns
    -------
    bool
        Whether the request was sent; ``False`` (draw it yourself) without a painter or when the figure or
        frame does not pickle.

    Examples
    --------
    >>> send(print, None, [])  # no painter in this process
    False
    """
    if _painter is None:
        return False
    try:
        request = pickle.dumps(("paint", (figure, frame, [str(Path(p).absolute()) for p in paths], savefig)), 5)
    except Exception:  # a plug-in's function defined where it cannot be found by name: drawn here
        return False
    try:
        _write(_painter[1], request)
    except (OSError, _NoAnswer) as exc:
        _give_up(exc)
        return False
    return True


def done() -> bool:
    """Wait for the painter's answer to :func:`send`; emit its log lines and warnings here.

    Returns
    -------
    bool
        ``True`` when every file was written; ``False`` when the caller must draw the figure itself (the
        painter failed, died, was stopped or did not answer within :data:`TIMEOUT` seconds; it is then
        stopped, and one line says why unless it failed while drawing).

    Examples
    --------
    >>> done()  # no painter in this process
    False
    """
    if _painter is None:
        return False
    try:
        reply = _read(_painter[2])
    except (OSError, _NoAnswer) as exc:
        _give_up(exc)
        return False
    if reply is None:
        stop()
        return False
    status, records, caught = reply
    for name, level, message in records:  # the painter's log lines, in this process's log
        logging.getLogger(name).log(level, "%s", message)
    for category, message in caught:
        warnings.warn(message, category, stacklevel=2)
    if status != "ok":
        stop()
        return False
    return True


def stop() -> None:
    """Close the request pipe: the painter exits once it has read it (it is not waited for).

    Examples
    --------
    >>> stop()  # no painter: nothing to do
    """
    global _painter
    if _painter is None:
        return
    _, request_w, reply_r = _painter
    _painter = None
    for fd in (request_w, reply_r):
        try:
            os.close(fd)
        except OSError:
            pass


class _NoAnswer(Exception):
    """The painter stopped, exited or did not answer in time: the main process draws the figure itself."""


def _give_up(exc: BaseException) -> None:
    """Stop using the painter after ``exc``; a painter that does not answer is killed (it is this process's child,
    and a stopped one would never read the end of its pipe), then reaped."""
    pid = _painter[0] if _painter is not None else None
    stop()
    if isinstance(exc, _NoAnswer):
        log.warning("the painter %s: drawing the figure in this process", exc)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:  # already gone and reaped
                pass


def _await(fd: int, writing: bool, deadline: float) -> None:
    """Wait until ``fd`` can be read (or written), checking every tick that the painter still runs.

    Raises
    ------
    _NoAnswer
        The painter was stopped or exited, or ``deadline`` (a ``time.monotonic`` instant) passed.
    """
    pid = _painter[0] if _painter is not None else None
    while True:
        ready = select.select([], [fd], [], _TICK)[1] if writing else select.select([fd], [], [], _TICK)[0]
        if ready:
            return
        if pid is not None:
            try:
                waited, status = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
            except ChildProcessError:  # reaped elsewhere: it is gone
                raise _NoAnswer("exited") from None
            if waited and os.WIFSTOPPED(status):
                raise _NoAnswer(f"was stopped ({signal.Signals(os.WSTOPSIG(status)).name})")
            if waited:
                raise _NoAnswer("exited")
        if time.monotonic() > deadline:
            raise _NoAnswer(f"gave no answer in {TIMEOUT:g} s")


def _send(message: Any) -> None:
    assert _painter is not None
    try:
        _write(_painter[1], pickle.dumps(message, 5))
    except (OSError, _NoAnswer) as exc:
        _give_up(exc)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    deadline = time.monotonic() + TIMEOUT
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:  # the pipe is full (a non-blocking end, the main process's): wait for the painter
            if _painter is None or fd != _painter[1]:
                raise
            _await(fd, True, deadline)


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, left = [], size
    deadline = time.monotonic() + TIMEOUT
    while left:
        if _painter is not None and fd == _painter[2]:  # the main process: never a read that may block forever
            _await(fd, False, deadline)
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _read(fd: int) -> Any:
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


class _Records(logging.Handler):
    """The painter's log records, kept to be sent back with its answer."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.name, record.levelno, record.getMessage()))


def _serve(request_r: int, reply_w: int) -> None:
    """The painter's loop: warm up, then answer requests until end of file."""
    records = _Records()
    root = logging.getLogger()
    root.handlers[:] = [records]
    root.setLevel(logging.INFO)
    try:
        from simstudy import figures

        figures._warm_up()
    except Exception:  # drawing will fail the same way, and the caller then draws the figure itself
        pass
    while True:
        try:
            message = _read(request_r)
        except Exception:
            return
        if message is None:
            return
        what, payload = message
        if what == "warm":
            try:
                __import__(payload)
            except Exception:
                pass
            continue
        records.records.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = _draw(*payload)
            except BaseException:  # any failure: the caller draws the figure itself and sees the error there
                status = "error"
        shown = [(w.category, str(w.message)) for w in caught]
        try:
            _write(reply_w, pickle.dumps((status, list(records.records), shown), 5))
        except Exception:
            return


def _draw(figure: Callable, frame: Any, paths: list[str], savefig: dict) -> str:
    from simstudy import io

    fig = figure(frame)
    try:
        for path in paths:
            io.save_figure(fig, path, **savefig)
    finally:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close(fig)
    return "ok"
