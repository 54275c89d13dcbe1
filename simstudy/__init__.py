"""simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.

Modules, bottom up: :mod:`~simstudy.distributions` (score distributions), :mod:`~simstudy.stats.estimators`
(expected-maximum estimators), :mod:`~simstudy.stats.truth` (exact truths), :mod:`~simstudy.stats.metrics` (Monte Carlo
summaries with MCSEs), :mod:`~simstudy.datasets` (shipped and user score data), :mod:`~simstudy.engine.runner`
(chunked, resumable joblib execution), :mod:`~simstudy.io` (atomic outputs), :mod:`~simstudy.studies`,
:mod:`~simstudy.figures`, :mod:`~simstudy.sweeps` (a sweep's jobs in one frame), and :mod:`~simstudy.cli` (the only
module that imports Hydra).

For notebooks, :func:`simstudy.run` runs a study as the command would and :func:`simstudy.compose` returns its
validated config (:mod:`~simstudy.api`); :func:`simstudy.curve`, :func:`simstudy.bands`, :func:`simstudy.audit` and
:func:`simstudy.extrapolate` run the data commands on arrays and write nothing unless asked
(:mod:`~simstudy.notebook`). All are imported on first use, so ``import simstudy`` stays fast.
"""

from importlib import metadata as _metadata

from simstudy import _moved

_moved.install()

try:
    __version__ = _metadata.version("simstudy")
except _metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

#: Imported on first use (Hydra, pandas and the studies load only when a study is composed or run).
_LAZY = {
    "distributions": None,
    "estimators": None,
    "metrics": None,
    "truth": None,
    "run": "api",
    "compose": "api",
    "RunResult": "api",
    "RunFailed": "api",
    "ConfigError": "config",
    "curve": "notebook",
    "bands": "notebook",
    "audit": "notebook",
    "extrapolate": "notebook",
}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        if _LAZY[name] is None:  # a module: imported on first use, so that `import simstudy` stays fast
            return import_module(f"{__name__}.{name}")
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'simstudy' has no attribute {name!r}")


__all__ = [
    "distributions",
    "estimators",
    "metrics",
    "truth",
    "run",
    "compose",
    "RunResult",
    "RunFailed",
    "ConfigError",
    "curve",
    "bands",
    "audit",
    "extrapolate",
    "__version__",
]
