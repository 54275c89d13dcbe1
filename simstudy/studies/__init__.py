"""Studies: compositions of distributions, estimators and metrics run by the runner.

Each study module declares its kind -- typed options, checks, ``run(config, out_dir, *, stage=None) ->
StudyResult``, figure and headline -- and registers it once with :func:`simstudy.registry.register_study`. The
registry (:data:`simstudy.extend.studies`) lists the built-in kinds by import path, in the order ``--help`` lists
them, and imports a kind's module only when it is asked for: importing this package imports none of them.

The built-in kinds, one module each:

- :mod:`~simstudy.studies.evp_accuracy`: bias, variance and MSE of the EVP estimators (Dodge et al. 2021,
  Figure 1).
- :mod:`~simstudy.studies.wrong_conclusions`: how often an estimator ranks two models the wrong way round
  (Dodge et al. 2021, Figure 2).
- :mod:`~simstudy.studies.band_coverage`: simultaneous coverage of confidence bands (Lourie et al. 2024,
  Figures 5 and 11).
- :mod:`~simstudy.studies.band_triviality`: how many search iterations a sample size can bound (Figure 9).
- :mod:`~simstudy.studies.bootstrap_coverage`: pointwise coverage of percentile-bootstrap bands (Figure 4).
- :mod:`~simstudy.studies.band_width`: ablations of the bands: method, interval shape, median vs mean
  (Figures 6-8).
- :mod:`~simstudy.studies.model_selection`: fixed-budget model selection (Moss et al. 2019, Figure 4).
- :mod:`~simstudy.studies.fixed_confidence`: fixed-confidence model selection (Moss et al. 2019, Tables 2
  and 3).
- :mod:`~simstudy.studies.sample_disagreement`: how often two samples disagree whether one model ever beats
  the other (Lourie et al. 2024, Figure 1).
- :mod:`~simstudy.studies.parametric_extrapolation`: how far the noisy quadratic law extrapolates random
  search (Lourie, He & Cho 2025).
- :mod:`~simstudy.studies.field_audit`: estimators, bands, extrapolation and the sample-size rule on the
  public benchmarks' populations (issue 27; its page: :mod:`~simstudy.studies.field_audit_page`).

:mod:`~simstudy.studies.base` holds what every study shares (chunks through the runner, the finish), and
:mod:`~simstudy.studies.audit` composes three studies into ``simstudy audit``; :mod:`~simstudy.studies.zip_plots`
holds the coverage studies' per-replicate positions and their zip plots.
"""

#: The kinds are modules, imported by name (``from simstudy.studies import evp_accuracy``) or through the registry:
#: the package itself exports nothing, so that importing it imports none of them.
__all__: list[str] = []
