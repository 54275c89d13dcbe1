"""The commands: plain library functions that run one analysis and return its result.

:mod:`~simstudy.commands.reproduce` regenerates the papers' results. Commands raise
:class:`~simstudy.schema.ConfigError` or :class:`~simstudy.datasets.DataError` on bad input; they never print
or exit (the command line, :mod:`simstudy.cli`, does that).
"""
