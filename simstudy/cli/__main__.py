"""``python -m simstudy.cli``: the command line, as the ``simstudy`` script runs it."""

from simstudy.__main__ import console

console()
