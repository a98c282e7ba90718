"""The auction beside the tree Hungarian on the issue-13 assignment rows (issue 14 asks for the
auction within 2x of the Hungarian): one warm call each, then one timed `solvers.solve` from the
numpy array (end to end) with the solve's own seconds beside it. Needs a GPU (backend cuda).

    python benchmarks/auction_vs_hungarian.py > benchmarks/results/auction-vs-hungarian-DATE-DEVICE.txt
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import solvers  # noqa: E402  (the repository's own)

rng = np.random.default_rng(4)
cases = {"rect 3000x9000 int": rng.integers(0, 90001, (3000, 9000)),
         "rect 1000x20000 int": rng.integers(0, 200001, (1000, 20000)),
         "dense 8000 int": rng.integers(0, 80001, (8000, 8000)),
         "dense 4000 real": rng.random((4000, 4000))}
for name, C in cases.items():
    for algo in ("hungarian", "auction"):
        solvers.solve(C, algo, backend="cuda")
        start = time.perf_counter()
        r = solvers.solve(C, algo, backend="cuda")
        e2e = time.perf_counter() - start
        print(f"{name:22s} {algo:10s} e2e {e2e:.3f} s solve {r.seconds:.3f} s value {r.value:.6g} {r.certificate.status} shape {r.stats.get('solved_shape')}", flush=True)
