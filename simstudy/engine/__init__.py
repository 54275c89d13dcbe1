"""The engine: what runs a study's chunks and keeps their results.

- :mod:`~simstudy.engine.runner`: chunked, resumable execution on joblib or a cluster backend, with streams
  from :class:`numpy.random.SeedSequence` keyed by cell and chunk.
- :mod:`~simstudy.engine.cluster`: the dask and submitit backends.
- :mod:`~simstudy.engine.identity`: a run directory's identity record (what its results were computed from).
"""

from simstudy.engine import ld_cache as _ld_cache

_ld_cache.install()  # the LD intervals' disk cache, for every study and command (the kernel keeps no files)
