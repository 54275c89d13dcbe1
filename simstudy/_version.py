"""simstudy's version, in a module of its own: ``simstudy --version`` reads it without the package root's lazy
names (which reach up to :mod:`simstudy.api`)."""

from importlib import metadata

try:
    __version__ = metadata.version("simstudy")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"
