"""Run the jackknife-corrected V (jackknife_v.py) through Dodge et al. (2021)'s Figure 1 and Figure 2 studies.

    cd examples && python run_my_estimator.py                 # 2,000 replicates: about a minute on 2 cores
    python run_my_estimator.py --reps 10000 --png jackknife_fig1.png

The plug-in is one override, ``+estimators.jackknife._target_=jackknife_v.jackknife_v``; ``simstudy`` imports
it from this directory (the working directory). Outputs go to ``--out`` (``outputs/jackknife``): ``fig1/`` and
``fig2/``, each with ``summary.parquet``/``.csv`` (the jackknife beside u, v, w: bias, variance, MSE with
MCSEs, paired differences ``jackknife-v`` ...; wrong-conclusion rates) and ``figure.png``.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = "+estimators.jackknife._target_=jackknife_v.jackknife_v"


def simstudy(*args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYDRA")}
    subprocess.run([sys.executable, "-m", "simstudy.cli", *args], cwd=HERE, env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=2000, help="replicates per cell (the paper: 10,000 and 50,000)")
    parser.add_argument("--out", type=Path, default=HERE / "outputs" / "jackknife", help="output directory")
    parser.add_argument("--png", type=Path, default=None, help="copy Figure 1's figure.png here")
    parser.add_argument("--n-jobs", type=int, default=1)
    opts = parser.parse_args()
    out = opts.out.resolve()
    common = [PLUGIN, f"study.reps={opts.reps}", f"runner.n_jobs={opts.n_jobs}", "runner.progress=false"]
    simstudy("experiment=dodge2021_fig1", *common, "study.save_replicates=false", f"hydra.run.dir={out / 'fig1'}")
    simstudy("experiment=dodge2021_fig2", *common, f"hydra.run.dir={out / 'fig2'}")
    if opts.png is not None:
        shutil.copyfile(out / "fig1" / "figure.png", opts.png)
    print(f"Figure 1: {out / 'fig1' / 'figure.png'}\nFigure 2: {out / 'fig2' / 'figure.png'}")


if __name__ == "__main__":
    main()
