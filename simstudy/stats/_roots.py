"""A vectorized root finder shared by the numerical kernels: safeguarded Newton on many equations at once."""

from __future__ import annotations

import numpy as np

__all__ = ["safeguarded_newton"]


def safeguarded_newton(f, lo, hi, x0, *, xtol: float = 1e-13, ftol: float = 5e-11, max_steps: int = 100):
    """Roots of increasing functions, elementwise, given brackets ``f(lo) <= 0 <= f(hi)``.

    Parameters
    ----------
    f : callable
        ``f(x, sel)`` returns ``(value, derivative)`` for the elements ``sel`` (an index array) at ``x``.
    lo, hi, x0 : array_like
        Brackets and starting points, one per equation.
    xtol, ftol : float
        An element is done when its step is below ``xtol`` relative to x or its residual below ``ftol``.

    A Newton step that leaves the bracket is replaced by the bracket's midpoint, so every element converges;
    only the elements not yet done are evaluated again (the slowest few take several times the median).
    """
    lo, hi = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
    x = np.clip(np.array(x0, dtype=np.float64), lo, hi)
    active = np.arange(x.size)
    for _ in range(max_steps):
        xa, la, ha = x[active], lo[active], hi[active]
        value, slope = f(xa, active)
        la = np.where(value < 0, xa, la)
        ha = np.where(value > 0, xa, ha)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = xa - value / slope
        bad = ~np.isfinite(step) | (step < la) | (step > ha)
        new = np.where(bad, 0.5 * (la + ha), step)
        done = (np.abs(value) <= ftol) | (np.abs(new - xa) <= xtol * np.maximum(1e-300, np.abs(xa)))
        x[active] = np.where(np.abs(value) <= ftol, xa, new)
        lo[active], hi[active] = la, ha
        active = active[~done]
        if active.size == 0:
            break
    return x
