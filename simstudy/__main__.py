"""The ``simstudy`` script (and ``python -m simstudy``): the painter forked first, then the command line.

A study run draws its figure at the end; :mod:`simstudy.painter` imports matplotlib in a second process while
this one imports the rest and computes, so this module starts it before anything heavy is imported (it imports
only :mod:`simstudy.painter` itself, then :func:`simstudy.cli.main`). A command (``simstudy curve ...``), a help
page or a config printout draws no study figure, and starts no painter.
"""

from __future__ import annotations

import sys

#: Flags after which nothing is run (help pages, the config or the run's information printed).
_NO_RUN_FLAGS = frozenset(
    "-h --help --hydra-help -c --cfg -i --info -p --package -sc --shell-completion --version".split()
)


def _draws_study_figure(argv: list[str]) -> bool:
    """Whether ``simstudy ARGV`` runs a study: no command name first (a study takes only ``key=value``
    overrides and flags) and no help or printout flag.

    >>> _draws_study_figure(["experiment=dodge2021_fig1"]), _draws_study_figure(["curve", "data=x.csv"])
    (True, False)
    >>> _draws_study_figure([]), _draws_study_figure(["--help"]), _draws_study_figure(["--cfg=job"])
    (True, False, False)
    """
    if argv and not argv[0].startswith("-") and "=" not in argv[0]:
        return False
    return not any(arg.partition("=")[0] in _NO_RUN_FLAGS for arg in argv)


def console() -> None:
    """Run the ``simstudy`` command (:func:`simstudy.cli.main.main`), with a painter for a study's figure."""
    if _draws_study_figure(sys.argv[1:]):
        from simstudy import painter

        painter.start()
    from simstudy.cli.main import main

    main()


if __name__ == "__main__":
    console()
