"""A CDF band method of one's own, for the plug-ins guide (docs/guides/plugins.md).

Copy this file into the directory you run ``simstudy`` from, then list the function in ``study.methods``::

    simstudy experiment=lourie_fig5_exact_coverage 'study.methods=[ld_highest_density,my_bands.dkw_band]'

The contract (``simstudy.stats.bands``): ``f(sorted_scores, confidence) -> (lower, upper)``, bounds on the CDF at the
order statistics, ``lower[i] <= F(Y_(i))`` and ``F(Y_(i)-) <= upper[i]`` for all i at once with probability at
least ``confidence``.
"""

import numpy as np

__all__ = ["dkw_band"]


def dkw_band(sorted_scores, confidence):
    """The Dvoretzky-Kiefer-Wolfowitz band (Massart's constant): the ECDF plus or minus ``eps``.

    ``eps = sqrt(log(2 / (1 - confidence)) / (2 n))`` bounds ``sup |F_n - F|`` with probability at least
    ``confidence``. The band does not depend on the data, so one row serves every sample.

    Parameters
    ----------
    sorted_scores : ndarray of float64, shape (reps, n)
        Samples of n scores, each row ascending (read-only).
    confidence : float
        The simultaneous coverage, in (0, 1).

    Returns
    -------
    lower, upper : ndarray of float64, shape (n,)
        Bounds on ``F(Y_(i))`` and ``F(Y_(i)-)``, in [0, 1], non-decreasing, ``lower <= upper``.

    Examples
    --------
    >>> lower, upper = dkw_band(np.zeros((2, 4)), 0.5)  # 2 samples of n = 4
    >>> lower.round(4), upper.round(4)
    (array([0.    , 0.0837, 0.3337, 0.5837]), array([0.4163, 0.6663, 0.9163, 1.    ]))
    """
    n = sorted_scores.shape[-1]
    eps = np.sqrt(np.log(2 / (1 - confidence)) / (2 * n))
    i = np.arange(1, n + 1)
    return np.clip(i / n - eps, 0, 1), np.clip((i - 1) / n + eps, 0, 1)
