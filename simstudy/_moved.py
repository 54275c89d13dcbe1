"""Old module paths that keep working after the package took its layers (issue 26).

``import simstudy.truth`` (or ``from simstudy import truth``) gives the module now at
``simstudy.stats.truth``: the same module object, so attributes set on one are set on the other. A finder on
:data:`sys.meta_path` does this for the names in :data:`MOVED` only; new code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: Old module path -> where it lives now.
MOVED: dict[str, str] = {
    "simstudy._rng": "simstudy.stats._rng",
    "simstudy._roots": "simstudy.stats._roots",
    "simstudy.estimators": "simstudy.stats.estimators",
    "simstudy.truth": "simstudy.stats.truth",
    "simstudy.boundary": "simstudy.stats.boundary",
    "simstudy.beta_intervals": "simstudy.stats.beta_intervals",
    "simstudy.posterior": "simstudy.stats.posterior",
    "simstudy.metrics": "simstudy.stats.metrics",
    "simstudy.curves": "simstudy.tables",
    "simstudy.kde": "simstudy.stats.kde",
    "simstudy.parametric_fit": "simstudy.stats.parametric_fit",
    "simstudy.selection": "simstudy.stats.selection",
    "simstudy.selection._arms": "simstudy.stats.selection._arms",
    "simstudy.selection.fixed_budget": "simstudy.stats.selection.fixed_budget",
    "simstudy.selection.fixed_confidence": "simstudy.stats.selection.fixed_confidence",
    "simstudy.parametric": "simstudy.distributions.parametric",
    "simstudy.runner": "simstudy.engine.runner",
    "simstudy.cluster": "simstudy.engine.cluster",
    "simstudy._identity": "simstudy.engine.identity",
    "simstudy.usage": "simstudy.cli.usage",
    "simstudy.reproduce": "simstudy.commands.reproduce",
    "simstudy.stats.curves": "simstudy.tables",
    "simstudy.plots": "simstudy.figures",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Loads an old path as the module at its new one."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        pass  # the module ran under its new name


def install() -> None:
    """Put the finder on :data:`sys.meta_path` once."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
