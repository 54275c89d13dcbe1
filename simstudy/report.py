"""The old home of the report pages (issue 26): each command's page now lives beside the command.

``simstudy.report.X`` keeps working for the names it had, loaded when first asked for:

==========================  ========================================================
:func:`write_audit`         :func:`simstudy.commands.audit_page.write_page`
:func:`describe_fit`        :func:`simstudy.commands.audit_page.describe_fit`
:func:`write_extrapolate`   :func:`simstudy.commands.extrapolate_page.write_page`
:func:`misfit_banner`       :func:`simstudy.commands.extrapolate_page.misfit_banner`
:func:`plain`               :func:`simstudy.commands._pages.plain`
:func:`atom_notes`          :func:`simstudy.commands._pages.atom_notes`
==========================  ========================================================

New code imports them from there.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []  # the names are documented where they live now

#: Old name -> (module, name now). importlib, not an import statement: the pages lie above this module's layer.
_MOVED_NAMES = {
    "write_audit": ("simstudy.commands.audit_page", "write_page"),
    "describe_fit": ("simstudy.commands.audit_page", "describe_fit"),
    "write_extrapolate": ("simstudy.commands.extrapolate_page", "write_page"),
    "misfit_banner": ("simstudy.commands.extrapolate_page", "misfit_banner"),
    "bands_label": ("simstudy.commands.extrapolate_page", "bands_label"),
    "plain": ("simstudy.commands._pages", "plain"),
    "atom_notes": ("simstudy.commands._pages", "atom_notes"),
}


def __getattr__(name: str) -> Any:
    if name in _MOVED_NAMES:
        module, new = _MOVED_NAMES[name]
        return getattr(importlib.import_module(module), new)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
