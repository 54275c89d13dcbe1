"""The numerical kernels: pure functions on arrays (numpy and scipy only: no config, no plug-ins, no files).

=======================================  ==================================================================
module                                   what it computes
=======================================  ==================================================================
:mod:`~simstudy.stats.estimators`        expected-maximum (EVP) estimators U, V, W and the bootstrap
:mod:`~simstudy.stats.truth`             exact expected maxima and tuning curves of a distribution
:mod:`~simstudy.stats.metrics`           Monte Carlo summaries with their MCSEs
:mod:`~simstudy.stats.joint`             simultaneous (sup-t) bands for a curve of Monte Carlo estimates
:mod:`~simstudy.stats.bands`             confidence bands for the CDF and the tuning curve
:mod:`~simstudy.stats.evidence`          Lourie et al.'s evidence between two models' bands
:mod:`~simstudy.stats.boundary`          the Learned-Miller--DeStefano boundary of the bands
:mod:`~simstudy.stats.stores`            the slot where a layer above lends a kernel a store (a disk cache)
:mod:`~simstudy.stats.beta_intervals`    order-statistic (beta) intervals
:mod:`~simstudy.stats.kde`               kernel density estimates of a score sample
:mod:`~simstudy.stats.posterior`         posteriors over the best arm
:mod:`~simstudy.stats.quadratic`         the noisy quadratic law's CDF, density and quantiles on arrays
:mod:`~simstudy.stats.parametric_fit`    the noisy quadratic law's fit
:mod:`~simstudy.stats.selection`         fixed-budget and fixed-confidence model selection
:mod:`~simstudy.stats.exchangeability`   whether the trials can be read as i.i.d. random search (their order)
:mod:`~simstudy.stats.errors`            the exception types the kernels raise (``InvalidParameter``)
=======================================  ==================================================================

Layers above (:mod:`simstudy.distributions`, the engine, studies and commands) call these; nothing here calls
them back (``tests/stats/test_purity.py`` checks it). A kernel that takes a distribution duck-types it (each says
which members it calls). Tables (pandas) of their results are in :mod:`simstudy.tables`.
"""
