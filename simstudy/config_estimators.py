"""The ``estimators`` group of a run config: each estimator column's method and settings, validated and frozen.

:func:`simstudy.config.parse` calls :func:`parse_estimators` on the group and keeps the
:class:`EstimatorConfig` objects it returns. A built-in method's keys are a schema (:class:`BuiltinOptions`);
a plug-in (``_target_``, or a method registered by :func:`simstudy.plugins.register_estimator`) is imported
and called on a tiny input before any compute (:func:`simstudy.plugins.check_estimator`).

============================  ====================================================================
:class:`EstimatorConfig`      one estimator column: label, method, settings (or a plug-in's path)
:class:`BuiltinOptions`       the keys of a built-in method: ``method`` and ``resamples``
:func:`parse_estimators`      the group's mapping as a tuple of :class:`EstimatorConfig`
:func:`log_plugin_costs`      log what a per-sample plug-in's Python loop will cost a study
============================  ====================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from simstudy import schema
from simstudy.schema import ConfigError

__all__ = ["EstimatorConfig", "BuiltinOptions", "parse_estimators"]


@dataclass(frozen=True)
class EstimatorConfig:
    """One estimator column of a study (``estimators.NAME``): a label, the method and its settings.

    :func:`parse_estimators` makes one per entry of the ``estimators`` mapping. A plug-in (method ``"plugin"``) is named
    by its import path ``target``, imported and called on a tiny input when the config is parsed.

    Parameters
    ----------
    name : str
        The label (the key ``NAME`` of ``estimators.NAME``); it must not contain ``-`` (paired differences
        are labelled ``a-b``).
    method : str
        ``estimators.NAME.method``: ``"u"``, ``"v"``, ``"w"`` or ``"bootstrap"`` (the expected-maximum
        estimators of Dodge et al. 2021 and the bootstrap of Dodge et al. 2019), or ``"plugin"``.
    resamples : int, default 1000
        ``estimators.NAME.resamples``: bootstrap resamples K per sample (bootstrap only), >= 1.
    target : str or None, default None
        A plug-in's import path ``module.function`` (``estimators.NAME._target_``, or the path a registered
        method stands for); None for a built-in.
    kwargs : tuple of (str, Any) pairs, default ()
        A plug-in's keyword arguments (the other keys of ``estimators.NAME``), sorted by name.
    per_sample : bool, default False
        ``estimators.NAME.per_sample``: the plug-in is a function of one sample of shape (B,), looped over
        the replicates in Python, rather than of the ``(reps, B)`` array.
    source : str, default ""
        A digest of the plug-in's module file, so that an edited plug-in never resumes the old one's chunks.

    References
    ----------
    .. [1] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Show your work: improved reporting
       of experimental results", EMNLP 2019.
    .. [2] J. Dodge, S. Gururangan, D. Card, R. Schwartz and N. A. Smith, "Expected validation performance and
       estimation of a random variable's maximum", 2021.

    Examples
    --------
    >>> from simstudy.config_estimators import EstimatorConfig
    >>> est = EstimatorConfig("boot", "bootstrap", resamples=500)
    >>> est.is_plugin, est.settings
    (False, {'name': 'boot', 'method': 'bootstrap', 'resamples': 500})
    """

    name: str
    method: str
    resamples: int = 1000
    target: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    per_sample: bool = False
    source: str = ""

    @property
    def is_plugin(self) -> bool:
        """Whether this is a plug-in estimator (method ``"plugin"``), called through :meth:`plugin`."""
        return self.method == "plugin"

    def plugin(self):
        """The callable plug-in (:class:`simstudy.plugins.PluginEstimator`), picklable by import path."""
        import os

        from simstudy import plugins

        # The working directory now (in the main process) travels with it: a worker imports from there.
        return plugins.PluginEstimator(self.target, self.kwargs, self.per_sample, os.getcwd())

    @property
    def settings(self) -> dict:
        """What fixes the estimator's numbers, for a run's fingerprint (a built-in's as it always was)."""
        out = dataclasses.asdict(self)
        if not self.is_plugin:
            for key in ("target", "kwargs", "per_sample", "source"):
                del out[key]
        return out


def _builtin_methods() -> tuple[str, ...]:
    # read when a method is checked, as before: simstudy.plugins (numpy, the plug-in registries) is imported then
    from simstudy import plugins

    return plugins.BUILTIN_ESTIMATORS


@dataclass(frozen=True)
class BuiltinOptions:
    """The keys of a built-in estimator (``estimators.NAME.KEY``), a schema (:func:`simstudy.schema.parse`).

    Parameters
    ----------
    method : str
        ``estimators.NAME.method``: one of :data:`simstudy.plugins.BUILTIN_ESTIMATORS`; no default.
    resamples : int, default 1000
        ``estimators.NAME.resamples``: bootstrap resamples K per sample (bootstrap only), >= 1.

    Examples
    --------
    >>> from simstudy import schema
    >>> from simstudy.config_estimators import BuiltinOptions
    >>> schema.parse(BuiltinOptions, {"method": "bootstrap"}, "estimators.boot.")
    BuiltinOptions(method='bootstrap', resamples=1000)
    >>> schema.parse(BuiltinOptions, {"method": "x"}, "estimators.x.")
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: estimators.x.method must be one of u, v, w, bootstrap, got 'x'
    """

    method: str = schema.option(None, "the estimator: u, v, w or bootstrap", schema.choice(_builtin_methods))
    resamples: int = schema.option(1000, "bootstrap resamples per sample (bootstrap only)", schema.integer(minimum=1))


def _plugin_estimator(
    name: str, spec: Mapping, target: str, per_sample: Any, trusted: Set[str] | None = None
) -> EstimatorConfig:
    """A plug-in estimator (``_target_``, or a method registered by :func:`simstudy.plugins.register_estimator`):
    imported and called on a tiny input now, before any compute (:func:`simstudy.plugins.check_estimator`)."""
    from simstudy import plugins

    key = f"estimators.{name}"
    per_sample = schema.boolean()(f"{key}.per_sample", per_sample)
    kwargs = schema.hashable({k: v for k, v in spec.items() if k not in ("_target_", "method", "per_sample")})
    est = EstimatorConfig(str(name), "plugin", target=target, kwargs=kwargs, per_sample=per_sample)
    try:
        plugins.check_estimator(est.plugin(), key, trusted=trusted)
        source = plugins.source_hash(target)
    except plugins.PluginError as exc:
        raise ConfigError(str(exc)) from None
    return dataclasses.replace(est, source=source)


def parse_estimators(d: Any, *, trusted: Set[str] | None = None) -> tuple[EstimatorConfig, ...]:
    """The ``estimators`` group, validated: one :class:`EstimatorConfig` per entry, plug-ins imported and tried.

    Parameters
    ----------
    d : Any
        The group's value: a mapping from a label to the estimator's keys, ``method`` (a built-in, or one a
        plug-in registered) or ``_target_`` (a plug-in's import path ``module.function``) and its settings.
    trusted : set of str, optional, keyword-only
        While a run directory's stored config is read, the plug-in import paths the user trusts
        (:func:`simstudy.plugins.refuse_untrusted`); default ``None``, the config is the user's own.

    Returns
    -------
    tuple of EstimatorConfig
        One per entry, in the mapping's order.

    Raises
    ------
    ConfigError
        In one line naming the key and the value: an empty group, an entry that is not a mapping, a label with
        ``-``, both ``method`` and ``_target_``, an unknown method or key, an invalid setting, a plug-in that
        cannot be imported or fails on a tiny input.

    Examples
    --------
    >>> from simstudy.config_estimators import parse_estimators
    >>> parse_estimators({"v": {"method": "v"}, "boot": {"method": "bootstrap", "resamples": 200}})[1]
    EstimatorConfig(name='boot', method='bootstrap', resamples=200, target=None, kwargs=(), per_sample=False, source='')
    >>> parse_estimators({"v": {"method": "v", "resample": 10}})
    Traceback (most recent call last):
    ...
    simstudy.schema.ConfigError: estimators.v.resample is not a setting (settings: method, resamples)
    """
    from simstudy import plugins

    methods = tuple(plugins.estimator_methods())
    if not isinstance(d, Mapping) or not d:
        raise ConfigError(
            f"estimators must select at least one of: {', '.join(methods)} (or name a plug-in: "
            f"+estimators.NAME._target_=module.function), got {d!r}"
        )
    out = []
    for name, spec in d.items():
        if not isinstance(spec, Mapping):
            raise ConfigError(f"estimators.{name} must be a mapping with a 'method' or a '_target_', got {spec!r}")
        if "-" in str(name):  # paired differences are labelled "a-b"
            raise ConfigError(
                f"estimators.{name}: an estimator's name must not contain '-' (paired differences "
                f"are labelled a-b); rename it, e.g. {str(name).replace('-', '_')}"
            )
        if "_target_" in spec:
            if "method" in spec:
                raise ConfigError(
                    f"estimators.{name} gives both method={spec['method']} and _target_={spec['_target_']}: keep one"
                )
            out.append(_plugin_estimator(name, spec, spec["_target_"], spec.get("per_sample", False), trusted))
            continue
        registered = plugins.registered_estimator(spec.get("method"))  # type: ignore[arg-type]  # None: not registered
        if registered is not None:
            out.append(_plugin_estimator(name, spec, registered[0], spec.get("per_sample", registered[1]), trusted))
            continue
        options = schema.parse(BuiltinOptions, spec, f"estimators.{name}.")
        out.append(EstimatorConfig(str(name), options.method, options.resamples))
    return tuple(out)


def log_plugin_costs(config: Any) -> None:
    """Say, once per parse, that a per-sample plug-in is looped over the replicates in Python and what that costs.

    ``config`` is a parsed :class:`simstudy.config.Config`, typed Any: that module imports this one (importing
    it back, even for types only, would be a cycle). Logged at INFO by the ``simstudy.plugins`` logger.
    """
    import logging

    B = max(config.budget.B)
    n = config.budget.n_for(B)
    cells = len(config.distributions) * len(config.budget.B)
    for e in config.estimators:
        if e.is_plugin and e.per_sample:
            from simstudy import plugins

            cost = plugins.estimator_cost(e.plugin(), B, n if config.study.kind == "evp_accuracy" else [B])
            total = cost * config.study.reps * cells * (2 if config.study.kind == "wrong_conclusions" else 1)
            logging.getLogger("simstudy.plugins").info(
                "estimators.%s: %s is a per-sample function (per_sample: true), looped over the replicates in "
                "Python: %.3g ms per replicate at B=%d, about %.3g s in all for this study (a vectorized "
                "function of the (reps, B) array costs far less)",
                e.name,
                e.target,
                1e3 * cost,
                B,
                total,
            )
