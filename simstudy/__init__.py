"""simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.

Modules, bottom up: :mod:`~simstudy.distributions` (score distributions), :mod:`~simstudy.estimators`
(expected-maximum estimators), :mod:`~simstudy.truth` (exact truths), :mod:`~simstudy.metrics` (Monte Carlo
summaries with MCSEs), :mod:`~simstudy.datasets` (shipped and user score data), :mod:`~simstudy.runner`
(chunked, resumable joblib execution), :mod:`~simstudy.io` (atomic outputs), :mod:`~simstudy.studies`,
:mod:`~simstudy.plots`, and :mod:`~simstudy.cli` (the only module that imports Hydra).
"""

from importlib import metadata as _metadata

from . import distributions, estimators, metrics, truth

try:
    __version__ = _metadata.version("simstudy")
except _metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

__all__ = ["distributions", "estimators", "metrics", "truth", "__version__"]
