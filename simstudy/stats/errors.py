"""The exception types the kernels raise (re-exported by the layers above, e.g. :mod:`simstudy.distributions`).

==========================  ===============================================================
name                        what it signals
==========================  ===============================================================
:class:`InvalidParameter`   a parameter out of its domain; the message starts with its name
==========================  ===============================================================
"""

from __future__ import annotations

from typing import Any

__all__ = ["InvalidParameter"]


class InvalidParameter(ValueError):
    """A parameter out of its domain. The message starts with the parameter's name.

    Raised by the distributions' constructors, :func:`simstudy.distributions.from_spec` and the kernels (the
    noisy quadratic fit, :mod:`simstudy.stats.parametric_fit`) when a parameter is missing, of the wrong type
    or outside its domain. The config layer prefixes the name with its config group (``distribution.sd must
    be ...``), so the same check gives a precise message from Python and from the command line. It is a
    :class:`ValueError`.

    Parameters
    ----------
    name : str
        The parameter's name (or config key, e.g. ``"params.a"``); kept as the attribute ``name``.
    requirement : str
        What the parameter must satisfy, e.g. ``"must be > 0"``; kept as ``requirement``.
    value : object
        The value given; kept as ``value`` and shown with :func:`repr` in the message.

    Examples
    --------
    >>> err = InvalidParameter("sd", "must be > 0", -1.0)
    >>> str(err), err.name, err.value
    ('sd must be > 0, got -1.0', 'sd', -1.0)
    >>> raise InvalidParameter("sd", "must be > 0", 0)
    Traceback (most recent call last):
        ...
    simstudy.stats.errors.InvalidParameter: sd must be > 0, got 0
    """

    def __init__(self, name: str, requirement: str, value: Any):
        self.name, self.requirement, self.value = name, requirement, value
        super().__init__(f"{name} {requirement}, got {value!r}")
