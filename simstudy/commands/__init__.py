"""The commands: plain library functions that run one analysis and return its result.

:mod:`~simstudy.commands.reproduce` regenerates the papers' results; :mod:`~simstudy.commands.curve` and
:mod:`~simstudy.commands.bands` analyse a researcher's own scores (EVP curves; confidence bands for tuning
curves), sharing the data keys of :mod:`~simstudy.commands._data`. Commands raise
:class:`~simstudy.schema.ConfigError` or :class:`~simstudy.datasets.DataError` on bad input; they never print
or exit (the command line, :mod:`simstudy.cli`, does that).
"""

__all__ = ["data_command_options"]


def data_command_options() -> dict[str, type]:
    """Each data command's options schema, in the order ``simstudy --help`` lists them.

    ``simstudy COMMAND --help`` and the defaults the command line stores for Hydra are made from these. The
    commands' modules are imported when this is called, not with the package.

    Returns
    -------
    dict of str to type
        Command name -> its schema (a dataclass of :func:`simstudy.schema.option` fields).

    Examples
    --------
    >>> list(data_command_options())
    ['curve', 'bands', 'audit', 'extrapolate']
    """
    from simstudy.commands.audit import AuditOptions
    from simstudy.commands.bands import BandsOptions
    from simstudy.commands.curve import CurveOptions
    from simstudy.commands.extrapolate import ExtrapolateOptions

    return {"curve": CurveOptions, "bands": BandsOptions, "audit": AuditOptions, "extrapolate": ExtrapolateOptions}
