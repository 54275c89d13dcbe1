"""What a run directory's results were computed from, by content: its identity record, and the refusal of
another identity in the same directory.

A run directory holds the results of one command (a study, ``curve``, ``bands``, ``audit`` or
``extrapolate``) on one set of inputs. :data:`RECORD` in the directory says which: the command, the SHA-256 of
every data file it read (by role, with the file's name only as a label: a renamed file with the same bytes is
the same input), the source digests of its plug-ins (:func:`simstudy.plugins.source_hash`, which follows the
plug-in's imports of the user's own modules), the kernels' algorithm versions (:data:`KERNEL_VERSIONS`), and
the command's settings. :func:`check` compares a new run's record with the stored one before anything is
computed; a difference is refused in one line that names what changed and the two ways on: another run
directory, or ``overwrite=true``, which moves the old results aside (:func:`move_aside`) and computes afresh.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from simstudy import io
from simstudy.engine import chunks

#: The identity record's file name in a run directory (hidden: a run's listing leaves it out).
RECORD = ".simstudy-identity.json"

#: The algorithm version of each numerical kernel whose output a stored result depends on. Bump one when a
#: kernel's numbers change (a fix, a new default): every stored chunk and record computed with the old
#: version is then refused, never resumed. Versions at their initial value 1 are left out of fingerprints,
#: so that results stored before this table existed keep resuming.
KERNEL_VERSIONS: dict[str, int] = {
    "estimators.u": 1,
    "estimators.v": 1,
    "estimators.w": 1,
    "estimators.bootstrap": 1,
    "bands.ks": 1,
    "bands.ld_equal_tailed": 1,
    "bands.ld_highest_density": 1,
    "kde": 1,
    "selection": 1,
}  # the noisy quadratic fit has its own: parametric_fit.FIT_VERSION, already in its studies' fingerprints

#: What simstudy writes at the top of a run directory (the commands' outputs, and the chunks and
#: subdirectories of resumable runs), whether or not the run marker lists them (:func:`outputs`: a directory
#: made before the list existed): :func:`move_aside` moves these and the listed ones, nothing else.
OUTPUTS = (
    RECORD,
    "config.yaml",
    "run.json",
    "chunks",
    "shards",
    "summary.parquet",
    "summary.csv",
    "replicates.parquet",
    "figure.png",
    "figure.pdf",
    "curves.parquet",
    "curves.csv",
    "targets.csv",
    "bands.parquet",
    "bands.csv",
    "cdf_bands.csv",
    "evidence.csv",
    "tuning_curve.png",
    "tuning_curve.pdf",
    "cdf.png",
    "cdf.pdf",
    "AUDIT.md",
    "coverage",
    "bootstrap",
    "accuracy",
    "extrapolation.csv",
    "extrapolation.png",
    "fit.csv",
    "simulation.csv",
    "EXTRAPOLATE.md",
    "report.html",
    "zip.parquet",
    "zip.png",
    "nested_loop.png",
    "FIELD.md",
)

#: What simstudy (and Hydra, for it) writes at the top of a sweep's directory (``simstudy -m``), besides its
#: jobs' run directories: with ``overwrite=true`` these and the jobs' directories are moved aside
#: (:func:`sweep_outputs`, :func:`move_aside`) before the sweep rewrites them.
SWEEP_OUTPUTS = ("multirun.yaml", "summary.parquet", "summary.csv", "figure.png", "figure.pdf", "report.html")


def sweep_outputs(sweep_dir: Path) -> tuple[str, ...]:
    """What ``overwrite=true`` moves aside at the top of a sweep's directory: :data:`SWEEP_OUTPUTS` and every
    job's run directory (a directory, not a link, carrying simstudy's marker): a sweep with other settings names
    its jobs' directories otherwise, and the earlier sweep's would stay beside them as if they were this one's.

    Raises
    ------
    simstudy.engine.chunks.RunDirConflict
        A job's directory is in use by a live run (one line naming it); nothing was moved.
    """
    from simstudy.engine import claims

    jobs = []
    for entry in sorted(os.scandir(sweep_dir) if sweep_dir.is_dir() else [], key=lambda e: e.name):
        if entry.name == PREVIOUS or not entry.is_dir(follow_symlinks=False):
            continue
        job = Path(entry.path)
        if not (job / claims.RUN_MARKER).is_file():
            continue
        for lock in job.glob(claims.LOCK_NAME + "*"):
            owner = claims.read_lock(lock)
            if (
                owner is not None
                and ".stale-" not in lock.name
                and (not owner or claims.owner_alive(owner) is not False)
            ):
                raise chunks.RunDirConflict(
                    f"{job} is in use by a simstudy run ({claims.describe_owner(owner)}): overwrite=true moves a "
                    f"sweep's jobs aside only when none runs; wait for it, or give this sweep a new directory "
                    f"(hydra.sweep.dir=NEW)"
                )
        jobs.append(entry.name)
    return (*SWEEP_OUTPUTS, *jobs)


#: The command whose outputs a run directory without a record holds (one written before records existed).
_OUTPUT_OF = {
    "chunks": "study",
    "summary.parquet": "study",
    "curves.parquet": "curve",
    "bands.parquet": "bands",
    "AUDIT.md": "audit",
    "EXTRAPOLATE.md": "extrapolate",
}

#: The directory inside a run directory that ``overwrite=true`` moves earlier results into.
PREVIOUS = "previous"


def kernel_versions() -> dict[str, int]:
    """The kernels whose version is not the initial 1 (empty today): joined into run fingerprints."""
    return {k: v for k, v in KERNEL_VERSIONS.items() if v != 1}


def file_input(path: str | os.PathLike) -> dict[str, str]:
    """A data file as an input: its name (a label) and the SHA-256 of its bytes (its identity)."""
    return {"file": Path(path).name, "sha256": io.sha256_file(path)}


def dataset_input(name: str) -> dict[str, str]:
    """A shipped data set as an input: its name, and one SHA-256 over its data files' names and digests."""
    import hashlib
    from importlib import resources

    from simstudy.datasets import SUFFIXES

    folder = Path(str(resources.files("simstudy") / "data" / name))
    h = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES):
        h.update(f"{path.name}\0{io.sha256_file(path)}\0".encode())
    return {"file": name, "sha256": h.hexdigest()}


def data_input(data: str) -> dict[str, str]:
    """The input of a data command's ``data=``: a shipped data set by name, else a file."""
    from simstudy.datasets import DATASETS
    from simstudy.sources import local_path

    if data in DATASETS:
        return dataset_input(data)
    path = local_path(data)  # an Optuna or MLflow storage's URL names its file
    return folder_input(path) if os.path.isdir(path) else file_input(path)


def folder_input(path: str | os.PathLike) -> dict[str, str]:
    """A directory as an input (a Ray Tune experiment, SMAC's or HpBandSter's output): its name and one SHA-256
    over its files' relative paths and digests (symlinks are not followed: the readers refuse them)."""
    import hashlib

    root = Path(path)
    h = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        h.update(f"{file.relative_to(root).as_posix()}\0{io.sha256_file(file)}\0".encode())
    return {"file": root.name, "sha256": h.hexdigest()}


def record(command: str, *, inputs: dict, plugins: dict, settings: dict) -> dict:
    """A run's identity record (plain values, as :func:`check` compares and :func:`write` stores it).

    ``inputs`` maps a role (``data``, ``distribution NAME``) to :func:`file_input`; ``plugins`` an import
    path to its source digest; ``settings`` the command's settings that fix its numbers (data paths left out:
    the files are compared by content)."""
    blob = {
        "command": command,
        "inputs": inputs,
        "plugins": plugins,
        "kernels": dict(KERNEL_VERSIONS),
        "settings": settings,
    }
    return json.loads(json.dumps(blob, default=str))  # as it reads back


def plugin_sources(config) -> dict[str, str]:
    """The import paths of a study's plug-ins (a distribution's ``_target_``, a plug-in estimator's) and their
    source digests: the record's ``plugins``, and what ``simstudy collect`` or ``replay`` must be given as
    ``plugins=`` to import them again from the stored config."""
    plugins = {}
    for d in config.distributions:
        if d.kind == "target":
            params = dict(d.params)
            plugins[params["_target_"]] = params.get("source", "")
    for e in config.estimators:
        if e.method == "plugin":
            plugins[e.target] = e.source
    return plugins


def study_record(config, settings: dict) -> dict:
    """The identity record of a study from its parsed :class:`~simstudy.config.Config`."""
    inputs = {}
    for d in config.distributions:
        # by its place in the config, not its label (a file's default label is its name: renaming is no change)
        role = "distribution" if len(config.distributions) == 1 else f"distribution.{d.name}"
        for path, digest in d.inputs.items():
            inputs[role] = {"file": Path(path).name, "sha256": digest}
        dataset = dict(d.params).get("dataset")
        if isinstance(dataset, str) and d.kind != "population":  # a population's input is its pickle (above)
            inputs[role] = dataset_input(dataset)
    return record("study", inputs=inputs, plugins=plugin_sources(config), settings=settings)


def read(out_dir: Path) -> dict | None:
    """The stored record of a run directory; None if it has none (or an unreadable one)."""
    try:
        old = json.loads((out_dir / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) else None


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def _flat(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys of nested mappings and lists (a list's items by index), for a readable difference."""
    if isinstance(obj, dict) and obj:
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    if isinstance(obj, list) and obj and any(isinstance(v, (dict, list)) for v in obj):
        out = {}
        for i, v in enumerate(obj):
            out.update(_flat(v, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): obj}


def changes(old: dict, new: dict) -> list[str]:
    """What differs between two identity records, in words: the command, each input file (name and short
    SHA-256, before -> after), each plug-in, each kernel version, each setting (``key: old -> new``)."""
    out = []
    if old.get("command") != new.get("command"):
        out.append(f"it holds the results of {_command(old.get('command'))}, not of {_command(new.get('command'))}")
        return out
    old_in, new_in = old.get("inputs") or {}, new.get("inputs") or {}
    for role in sorted(old_in.keys() | new_in.keys()):
        a, b = old_in.get(role) or {}, new_in.get(role) or {}
        if a.get("sha256") != b.get("sha256"):
            name = b.get("file") or a.get("file")
            renamed = f" (was {a.get('file')})" if a.get("file") and a.get("file") != name else ""
            out.append(
                f"{role} file {name}{renamed} changed since this run (sha256 "
                f"{(a.get('sha256') or 'none')[:8]}… -> {(b.get('sha256') or 'none')[:8]}…)"
            )
    old_p, new_p = old.get("plugins") or {}, new.get("plugins") or {}
    for target in sorted(old_p.keys() | new_p.keys()):
        if old_p.get(target) != new_p.get(target):
            out.append(
                f"plug-in {target} changed"
                if target in old_p and target in new_p
                else f"plug-in {target} {'added' if target in new_p else 'removed'}"
            )
    old_k, new_k = old.get("kernels") or {}, new.get("kernels") or {}
    for kernel in sorted(old_k.keys() | new_k.keys()):
        if old_k.get(kernel, 1) != new_k.get(kernel, 1):
            out.append(f"kernel {kernel}: version {old_k.get(kernel, 1)} -> {new_k.get(kernel, 1)}")
    a, b = _flat(old.get("settings") or {}), _flat(new.get("settings") or {})
    for key in sorted(a.keys() | b.keys()):
        if a.get(key, "(unset)") != b.get(key, "(unset)"):
            out.append(f"{key}: {_short(a.get(key, '(unset)'))} -> {_short(b.get(key, '(unset)'))}")
    return out


def _command(command: Any) -> str:
    return "a study" if command == "study" else f"simstudy {command}"


def refusal(out_dir: Path, what: list[str], limit: int = 3) -> str:
    """The one-line refusal: what changed (the first ``limit`` differences) and the two fixes."""
    shown = "; ".join(what[:limit]) + (f"; and {len(what) - limit} more" if len(what) > limit else "")
    return f"{out_dir}: {shown}; {chunks.RUN_DIR_FIXES}"


def inferred_command(out_dir: Path) -> str | None:
    """The command whose outputs a run directory without a record holds (None: none, or nothing there)."""
    for name, command in _OUTPUT_OF.items():
        if (out_dir / name).exists():
            return command
    return None


def check(out_dir: Path, new: dict, *, overwrite: bool, warn=None) -> Path | None:
    """Refuse a run whose identity differs from the run directory's stored one, or move that one aside.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run directory (claimed by this process).
    new : dict
        This run's :func:`record`.
    overwrite : bool
        ``overwrite=true``: on a difference (or always, when the directory holds results), move the earlier
        results into ``previous/<UTC time>/`` (:func:`move_aside`) instead of refusing.
    warn : callable, optional
        Called with a one-line message when results were moved.

    Returns
    -------
    pathlib.Path or None
        Where earlier results were moved, if they were.

    Raises
    ------
    simstudy.engine.chunks.RunDirConflict
        The directory holds results of another command, other inputs, plug-ins, kernels or settings (one
        line naming them, and the fixes); nothing was written.
    """
    old = read(out_dir)
    if old is None:
        command = inferred_command(out_dir)
        what = (
            [f"it holds the results of {_command(command)}, not of {_command(new['command'])}"]
            if command is not None and command != new["command"]
            else []
        )
    else:
        what = changes(old, new)
    if overwrite and (what or any(os.path.lexists(out_dir / name) for name in (*OUTPUTS, *outputs(out_dir)))):
        moved = move_aside(out_dir)
        if moved is not None and warn is not None:
            warn(f"overwrite=true: moved the earlier results to {moved}")
        return moved
    if what:
        raise chunks.RunDirConflict(refusal(out_dir, what))
    return None


def write(out_dir: Path, new: dict) -> None:
    """Store a run's identity record (atomically); an identical one is left as it is."""
    if read(out_dir) != new:
        io.write_json(new, out_dir / RECORD)


def _previous(out_dir: Path) -> Path:
    """``out_dir/previous``, refused unless it is a directory of its own (or absent): a symlink there would
    take the earlier results out of the run directory, wherever it points."""
    previous = out_dir / PREVIOUS
    if previous.is_symlink() or (os.path.lexists(previous) and not previous.is_dir()):
        what = f"a symlink (to {os.readlink(previous)})" if previous.is_symlink() else "not a directory"
        raise chunks.RunDirConflict(
            f"{previous} is {what}: overwrite=true moves earlier results only into a directory {PREVIOUS}/ inside "
            f"the run directory; move {previous} away, or run into a new directory (hydra.run.dir=NEW)"
        )
    return previous


#: The run marker's key (:data:`simstudy.engine.claims.RUN_MARKER`) listing every name simstudy wrote at the top
#: of its run directory (files, and directories it created: a design's cells, an audit's figures' folders).
_OUTPUTS_KEY = "outputs"


def _plain_name(name: object) -> bool:
    """A name an output list may hold: one entry at the top (no path), not hidden unless the identity record,
    not ``previous`` (a marker in a directory someone sent may list anything: nothing leaves the directory)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..", PREVIOUS)
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
        and (not name.startswith(".") or name == RECORD)
    )


def outputs(out_dir: Path) -> frozenset[str]:
    """The names simstudy wrote at the top of a run directory, as its marker lists them (empty if none).

    Every run adds what it wrote (:func:`note_outputs`, called as it releases the directory), so the list
    covers the outputs of every earlier run kept there: ``overwrite=true`` moves them all (:func:`move_aside`),
    and a rerun moves those it no longer writes (:func:`simstudy.engine.rundir.in_run_dir`)."""
    from simstudy.engine import claims

    try:
        blob = json.loads((out_dir / claims.RUN_MARKER).read_text())
    except (OSError, ValueError):
        return frozenset()
    names = blob.get(_OUTPUTS_KEY) if isinstance(blob, dict) else None
    return frozenset(n for n in names if _plain_name(n)) if isinstance(names, list) else frozenset()


def _store_outputs(out_dir: Path, names: frozenset[str]) -> None:
    from simstudy.engine import claims

    marker = out_dir / claims.RUN_MARKER
    try:
        blob = json.loads(marker.read_text())
    except (OSError, ValueError):
        return  # no marker (released meanwhile, or never simstudy's): nothing to note into
    if not isinstance(blob, dict) or set(blob.get(_OUTPUTS_KEY) or ()) == names:
        return
    io.write_json({**blob, _OUTPUTS_KEY: sorted(names)}, marker)


def note_outputs(out_dir: Path, names) -> None:
    """Add ``names`` (written at the top of ``out_dir`` by this run) to the marker's list of outputs; the marker
    is rewritten only when the list grows (a run notes its outputs when it finishes and again when it releases
    the directory)."""
    known = outputs(out_dir)
    grown = known | {n for n in names if _plain_name(n)}
    if grown != known:
        _store_outputs(out_dir, grown)


def move_aside(out_dir: Path, names: tuple[str, ...] | None = None) -> Path | None:
    """Move what simstudy wrote at the top of ``out_dir`` into ``previous/<UTC time>/``.

    Nothing else is touched (a user's own file stays where it is), and nothing leaves ``out_dir``: an entry
    that is a symlink is moved as the link (not what it points to), and a ``previous`` that is a symlink or a
    file is refused before anything moves. The names moved leave the marker's list of outputs
    (:func:`outputs`).

    Parameters
    ----------
    out_dir : pathlib.Path
        The run directory (or a sweep's directory).
    names : tuple of str, optional
        The names to move, where present; default every name simstudy wrote there: :data:`OUTPUTS` and the
        marker's list (:func:`outputs`), so a file only an earlier run wrote (``figure.svg``, a design's cell)
        moves too. A sweep's: :func:`sweep_outputs`.

    Returns
    -------
    pathlib.Path or None
        The directory moved into; None if there was nothing to move.

    Raises
    ------
    simstudy.engine.chunks.RunDirConflict
        ``out_dir/previous`` is a symlink or not a directory (one line naming it; nothing was moved).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "summary.csv").write_text("x\\n1\\n")
    ...     _ = (Path(d) / "notes.md").write_text("mine")
    ...     moved = move_aside(Path(d))
    ...     print(moved.parent.name, sorted(p.name for p in moved.iterdir()), sorted(p.name for p in Path(d).iterdir()))
    previous ['summary.csv'] ['notes.md', 'previous']
    """
    listed = outputs(out_dir)
    if names is None:
        names = (*OUTPUTS, *sorted(listed - set(OUTPUTS)))
    names = tuple(name for name in names if os.path.lexists(out_dir / name))
    if not names:
        return None
    previous = _previous(out_dir)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = previous / stamp
    i = 1
    while os.path.lexists(target):  # two overwrites within one second (or a name already taken, by anything)
        target = previous / f"{stamp}-{i}"
        i += 1
    previous.mkdir(exist_ok=True)
    target.mkdir()
    for name in names:
        os.rename(out_dir / name, target / name)  # a symlink is renamed as the link: nothing leaves out_dir
    if listed:
        _store_outputs(out_dir, listed - set(names))
    return target
