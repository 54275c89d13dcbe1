"""Studies: compositions of distributions, estimators and metrics run by the runner.

Each study module exposes ``run(config, out_dir) -> StudyResult``; :data:`STUDIES` maps the config's
``study.kind`` to it.
"""

from . import (band_coverage, band_triviality, band_width, bootstrap_coverage, evp_accuracy, fixed_confidence,
               model_selection, wrong_conclusions)

STUDIES = {"evp_accuracy": evp_accuracy.run, "wrong_conclusions": wrong_conclusions.run,
           "band_coverage": band_coverage.run, "band_triviality": band_triviality.run,
           "bootstrap_coverage": bootstrap_coverage.run, "band_width": band_width.run,
           "model_selection": model_selection.run, "fixed_confidence": fixed_confidence.run}

__all__ = ["STUDIES", "evp_accuracy", "wrong_conclusions", "band_coverage", "band_triviality",
           "bootstrap_coverage", "band_width", "model_selection", "fixed_confidence"]
