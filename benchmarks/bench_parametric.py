"""Benchmark of the noisy quadratic law and its fit, side by side with `opda.parametric` (opda 0.8.0).

    python benchmarks/bench_parametric.py [--datasets 3] [--repeat 3]

Prints, measured in this one run:

- the CDF of 10^6 points of one law, simstudy against opda (goal: faster than opda, exact to 1e-10), the
  time of simstudy's first call (which builds the law's table), and each one's largest error against a
  30-digit mpmath reference at 60 of the points (the 30 where the two differ most, 30 at random), for the
  timed law and for c = 1 with little noise (opda's worst corner);
- the fit on 512 scores (the top half above the median, every c in 1..10, concave), simstudy against opda on
  the same tail, per data set: the two fits' parameters, their log products of spacings (the objective both
  maximize, evaluated by simstudy's exact CDF) and the time ratio (goal: at least 5x);
- a batch of 100 fits of 48 scores (the audit's and bootstrap's path), per fit.

"Same result" means the same c and an objective no worse than opda's (to 1e-6), so any parameter difference
is the optimizers' tolerance on a flat optimum, not a different answer.
"""

from __future__ import annotations

import argparse
import time
import warnings
from functools import partial

import numpy as np
from _timing import best_of

from simstudy.distributions import fitting
from simstudy.distributions.parametric import NoisyQuadratic
from simstudy.stats import parametric_fit

LAWS = [NoisyQuadratic(0.0, 1.0, 3, 0.05), NoisyQuadratic(0.0, 1.0, 1, 0.01), NoisyQuadratic(0.0, 1.0, 2, 0.0),
        NoisyQuadratic(0.0, 1.0, 4, 0.2), NoisyQuadratic(0.5, 0.9, 2, 0.02)]


def objective(ys, threshold, a, b, c, o):
    """The log product of spacings (grouped form) of a concave law at the data, by simstudy's exact CDF."""
    srt = np.sort(ys)[None]
    pts, wts = parametric_fit._buckets(srt, np.array([threshold]))
    s = b - a
    x = np.array([[b, np.log(s), np.log(o) if o > 0 else -50.0]])
    return -float(parametric_fit._objective(x, pts, wts, np.array([float(c)]), o == 0)[0][0])


def reference_cdf(y: float, c: int, o: float) -> float:
    """The CDF of the standard law (a = 0, b = 1) at y to 30 digits (mpmath): ``Phi(y/o) - E[V^(c/2); 0 <= V <= 1]``
    with ``V ~ Normal(1 - y, o)``, the moment by tanh-sinh quadrature split at the bell's peak."""
    import mpmath as mp

    with mp.workdps(30):
        y, o = mp.mpf(float(y)), mp.mpf(o)
        mu = 1 - y
        lo, hi = max(mp.mpf(0), mu - 12 * o), min(mp.mpf(1), mu + 12 * o)
        moment = mp.mpf(0)
        if lo < hi:
            pts = [lo, mu, hi] if lo < mu < hi else [lo, hi]
            moment = mp.quad(lambda v: v ** (mp.mpf(c) / 2) * mp.npdf(v, mu, o), pts)
        return float(mp.ncdf(y / o) - moment)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=3, help="data sets of 512 scores to fit (default 3)")
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats per measurement (best of)")
    args = parser.parse_args()
    from opda.parametric import NoisyQuadraticDistribution

    # -- CDF of 10^6 points -------------------------------------------------------------------------
    y = np.random.default_rng(0).uniform(-0.2, 1.2, 10**6)
    for c, o, timed in ((3, 0.1, True), (1, 0.001, False)):
        law = NoisyQuadratic(0.0, 1.0, c, o)
        ref = NoisyQuadraticDistribution(0.0, 1.0, c, o)
        if timed:
            start = time.perf_counter()
            law.cdf(y)
            first = time.perf_counter() - start
            ours, theirs = best_of(partial(law.cdf, y), partial(ref.cdf, y), number=1, repeat=args.repeat)
            print(f"CDF of 10^6 points (c={c}, o/(b - a)={o}): simstudy {ours:.3f} s (its first call, which "
                  f"builds the law's table: {first:.3f} s), opda {theirs:.3f} s, ratio {theirs / ours:.1f}x "
                  f"(goal > 1x)")
        mine, opda = law.cdf(y), ref.cdf(y)
        apart = np.argsort(np.abs(mine - opda))[-30:]
        at = np.concatenate((apart, np.random.default_rng(1).choice(y.size, 30, replace=False)))
        exact = np.array([reference_cdf(v, c, o) for v in y[at]])
        print(f"  largest error against the 30-digit reference at 60 points (c={c}, o/(b - a)={o}): simstudy "
              f"{np.abs(mine[at] - exact).max():.1e} (goal < 1e-10), opda {np.abs(opda[at] - exact).max():.1e}")

    # -- fit on 512 scores ---------------------------------------------------------------------------
    ratios = []
    for i, true in enumerate(LAWS[:args.datasets]):
        ys = true.sample(512, rng=np.random.default_rng(100 + i))
        t = float(np.quantile(ys, 0.5))
        start = time.perf_counter()
        ours = fitting.fit(ys, limits=(t, np.inf)).law
        t_ours = time.perf_counter() - start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            theirs = NoisyQuadraticDistribution.fit(ys, limits=(t, np.inf), constraints={"convex": False},
                                                    generator=np.random.default_rng(0))
            t_theirs = time.perf_counter() - start
        f_ours = objective(ys, t, ours.a, ours.b, ours.c, ours.o)
        f_theirs = objective(ys, t, theirs.a, theirs.b, theirs.c, theirs.o)
        same = ours.c == int(theirs.c) and f_ours >= f_theirs - 1e-6
        ratios.append(t_theirs / t_ours)
        print(f"fit, 512 draws of {true.describe()}:\n"
              f"  simstudy {t_ours:6.2f} s  a={ours.a:.5f} b={ours.b:.5f} c={ours.c} o={ours.o:.5f}  "
              f"objective {f_ours:.6f}\n"
              f"  opda     {t_theirs:6.2f} s  a={theirs.a:.5f} b={theirs.b:.5f} c={int(theirs.c)} "
              f"o={theirs.o:.5f}  objective {f_theirs:.6f}\n"
              f"  ratio {t_theirs / t_ours:.1f}x (goal >= 5x); same result: {same}")
    print(f"fit ratio over the data sets: min {min(ratios):.1f}x, median {np.median(ratios):.1f}x")

    # -- the batched path ----------------------------------------------------------------------------
    x = np.sort(LAWS[0].sample((100, 48), rng=np.random.default_rng(7)), axis=1)
    th = parametric_fit.Threshold().of(x)
    (batch,) = best_of(lambda: parametric_fit.fit_batch(x, th), number=1, repeat=args.repeat)
    print(f"batched fits of 48 scores (100 at once, every c): {1000 * batch / 100:.1f} ms per fit")


if __name__ == "__main__":
    main()
