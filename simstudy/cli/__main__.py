"""``python -m simstudy.cli``: the command line, as the ``simstudy`` script runs it."""

from simstudy.cli import main

main()
