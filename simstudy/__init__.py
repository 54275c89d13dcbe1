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

from simstudy._version import __version__

#: The modules reachable as attributes of the package -> where they live, imported on first use (so that
#: ``import simstudy`` stays fast).
_MODULES = {
    "distributions": "simstudy.distributions",
    "estimators": "simstudy.stats.estimators",
    "metrics": "simstudy.stats.metrics",
    "truth": "simstudy.stats.truth",
}

#: Names imported on first use -> their module (Hydra, pandas and the studies load only when a study is composed
#: or run).
_LAZY = {
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
    from importlib import import_module

    if name in _MODULES:
        return import_module(_MODULES[name])
    if name in _LAZY:
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
