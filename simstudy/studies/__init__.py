"""Studies: compositions of distributions, estimators and metrics run by the runner.

Each study module declares its kind -- typed options, checks, ``run(config, out_dir) -> StudyResult``, figure
and headline -- and registers it once with :func:`simstudy.registry.register_study`; importing this package
registers the built-in kinds (in this order: the order ``--help`` lists them).
"""

from . import (  # noqa: I001 -- the order --help lists the kinds in
    evp_accuracy,
    wrong_conclusions,
    band_coverage,
    band_triviality,
    bootstrap_coverage,
    band_width,
    model_selection,
    fixed_confidence,
    sample_disagreement,
    parametric_extrapolation,
)

__all__ = [
    "evp_accuracy",
    "wrong_conclusions",
    "band_coverage",
    "band_triviality",
    "bootstrap_coverage",
    "band_width",
    "model_selection",
    "fixed_confidence",
    "sample_disagreement",
    "parametric_extrapolation",
]
