"""Benchmark of the noisy quadratic law and its fit, side by side with `opda.parametric` (opda 0.8.0).

    python benchmarks/bench_parametric.py [--datasets 3] [--repeat 3]

Prints, measured in this one run:

- the CDF of 10^6 points (goal: under 0.5 s), simstudy against opda, and their largest difference;
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

import numpy as np
from _timing import best_of

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=3, help="data sets of 512 scores to fit (default 3)")
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats per measurement (best of)")
    args = parser.parse_args()
    from opda.parametric import NoisyQuadraticDistribution

    # -- CDF of 10^6 points -------------------------------------------------------------------------
    law = NoisyQuadratic(0.0, 1.0, 3, 0.1)
    ref = NoisyQuadraticDistribution(0.0, 1.0, 3, 0.1)
    y = np.random.default_rng(0).uniform(-0.2, 1.2, 10**6)
    ours, theirs = best_of(lambda: law.cdf(y), lambda: ref.cdf(y), number=1, repeat=args.repeat)
    diff = float(np.abs(law.cdf(y) - ref.cdf(y)).max())
    print(f"CDF of 10^6 points: simstudy {ours:.3f} s (goal < 0.5 s), opda {theirs:.3f} s, "
          f"ratio {theirs / ours:.1f}x; largest difference {diff:.1e}")

    # -- fit on 512 scores ---------------------------------------------------------------------------
    ratios = []
    for i, true in enumerate(LAWS[:args.datasets]):
        ys = true.sample(512, rng=np.random.default_rng(100 + i))
        t = float(np.quantile(ys, 0.5))
        start = time.perf_counter()
        ours = parametric_fit.fit(ys, limits=(t, np.inf)).law
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
