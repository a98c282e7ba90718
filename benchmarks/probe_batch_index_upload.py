"""A batch's index arrays (its layout and item lists) uploaded together or one by one
(solvers.batch.device._index_arrays against the per-array uploads it replaced), alternating in one
warm process: solve_batch from numpy on two regular batches, medians of 15, ms.

    PYTHONPATH=. python benchmarks/probe_batch_index_upload.py
"""
from __future__ import annotations

import json
import statistics
import sys
import time

sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent))
import numpy as np
import solvers
from numba import cuda
from solvers.batch import device as D
new = D._index_arrays
def old(launcher, arrays, extra=()):
    return (tuple(D._index_array(launcher, a) for a in arrays),
            tuple(launcher.upload(np.asarray(e)) if len(e) else None for e in extra))
rng = np.random.default_rng(3)
for name, C in (("1000x256x256", rng.random((1000, 256, 256), dtype=np.float32)),
                ("10000x100x100", rng.random((10000, 100, 100), dtype=np.float32))):
    res = {"new": [], "old": []}
    for mode, fn in (("new", new), ("old", old)):
        D._index_arrays = fn; solvers.solve_batch(C, backend="cuda")
    for _ in range(15):
        for mode, fn in (("new", new), ("old", old)):
            D._index_arrays = fn
            cuda.synchronize()
            t = time.perf_counter(); r = solvers.solve_batch(C, backend="cuda"); dt = time.perf_counter() - t
            assert r.all_certified
            res[mode].append((dt, r.seconds["pack"]))
    print(name, json.dumps({m: {"total_ms": round(statistics.median(x[0] for x in v) * 1e3, 2),
                                  "pack_ms": round(statistics.median(x[1] for x in v) * 1e3, 2)} for m, v in res.items()}), flush=True)
    D._index_arrays = new
