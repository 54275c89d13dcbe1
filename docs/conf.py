"""Sphinx configuration of simstudy's documentation site.

Build it with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (``-W``: a warning fails the build,
as in CI). The API reference is generated from the docstrings of every name in each public module's
``__all__`` (``api/index.rst`` lists the modules; the build fails if a public module is missing there), and
the figures in the guides are drawn by the build from the package (``.. plot::`` blocks, at small scales).
"""

from __future__ import annotations

import os
import pkgutil
import shutil
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The build's LD intervals are cached beside the build, not in the user's ~/.cache/simstudy.
os.environ.setdefault("SIMSTUDY_CACHE_DIR", str(Path(__file__).resolve().parent / "_build" / "simstudy-cache"))

import simstudy  # noqa: E402

# autosummary writes a page per public name but never removes one: start from none, so that a name dropped
# from an __all__ leaves no orphan page behind (the directory is the build's own, and git-ignored).
shutil.rmtree(ROOT / "docs" / "api" / "generated", ignore_errors=True)

project = "simstudy"
author = "the simstudy developers"
copyright = "2026, the simstudy developers"
release = simstudy.__version__  # from the installed package's metadata: pyproject.toml is the one place
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_copybutton",
    # MathJax served from the site itself, not a CDN: the formulas render offline and on closed networks.
    "sphinx-mathjax-offline",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]

html_theme = "pydata_sphinx_theme"
html_title = f"simstudy {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}

# MyST: $...$ and $$...$$ maths, ::: fences, heading anchors for links into long pages.
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# autosummary writes one page per public name; a module's members are its __all__.
autosummary_generate = True
autosummary_ignore_module_all = False
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters carry the types, with shapes and units

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.dpi": 110}
plot_pre_code = "import numpy as np\nimport matplotlib.pyplot as plt\n"

copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True


def _public_modules() -> list[str]:
    return ["simstudy"] + [
        info.name
        for info in pkgutil.walk_packages(simstudy.__path__, "simstudy.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]


def _aliases() -> dict[str, str]:
    """Re-exported names (``simstudy.stats.selection.ttts``) mapped to where they are defined and documented in full."""
    import importlib
    import inspect

    defined, aliases = set(), {}
    modules = {name: importlib.import_module(name) for name in _public_modules()}
    for module_name, module in modules.items():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__ == module_name:
                defined.add(f"{module_name}.{name}")
    for module_name, module in modules.items():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__name__', '')}"
            if home in defined and home != f"{module_name}.{name}":
                aliases[f"{module_name}.{name}"] = home
    return aliases


# A name re-exported by several modules is documented once, where it is defined; the others point there.
autosummary_context = {"aliases": _aliases()}


def _check_api_index(app) -> None:
    """Fail the build if a public module of the package is missing from the API reference."""
    listed = set()
    for line in (Path(app.srcdir) / "api" / "index.rst").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("simstudy"):
            listed.add(stripped)
    public = set(_public_modules())
    missing = sorted(public - listed)
    if missing:
        raise RuntimeError(f"docs/api/index.rst does not list the public module(s) {', '.join(missing)}")


def _anchors_as_targets(app, relative_path, parent_docname, content) -> None:
    """REPRODUCTION.md marks its sections with HTML anchors (for GitHub); MyST needs ``(name)=`` targets."""
    import re

    content[0] = re.sub(r'<a id="([^"]+)"></a>', r"(\1)=", content[0])


def setup(app):
    app.connect("builder-inited", _check_api_index)
    app.connect("include-read", _anchors_as_targets)
