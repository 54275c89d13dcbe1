"""The ``simstudy`` script (and ``python -m simstudy``): the command line, :func:`simstudy.cli.main.main`."""

from __future__ import annotations


def console() -> None:
    """Run the ``simstudy`` command (:func:`simstudy.cli.main.main`), the console script's entry point."""
    from simstudy.cli.main import main

    main()


if __name__ == "__main__":
    console()
