"""The commands: plain library functions that run one analysis and return its result.

:mod:`~simstudy.commands.reproduce` regenerates the papers' results; :mod:`~simstudy.commands.curve` and
:mod:`~simstudy.commands.bands` analyse a researcher's own scores (EVP curves; confidence bands for tuning
curves), sharing the data keys of :mod:`~simstudy.commands._data`. Commands raise
:class:`~simstudy.schema.ConfigError` or :class:`~simstudy.datasets.DataError` on bad input; they never print
or exit (the command line, :mod:`simstudy.cli`, does that). Each module declares its spec, ``COMMAND`` (a
:class:`simstudy.registry.Command`), which :data:`simstudy.extend.commands` lists by name.
"""
