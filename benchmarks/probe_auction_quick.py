"""The GPU auction against the tree Hungarian on dense integer costs (issue 14's goal: within 2x at
n = 8000), quickly: the default settings only, both cost ranges of probe_auction.py ([0, 10n] and
[0, n/5], seed 11), warm process, median of R runs, seconds, with the auction's tail bids and
launches and the certificate's verdict. Run it in two trees alternately to compare a change
(``bash benchmarks/gpu_today.sh auction-ab`` with BASELINE set).

    PYTHONPATH=. python benchmarks/probe_auction_quick.py [N] [R]
"""
import json
import statistics
import sys
import time

import numpy as np

import solvers
from solvers.problems import CostMatrix

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 2
rng = np.random.default_rng(11)
for name, high in (("[0, 10n]", 10 * n), ("[0, n/5]", n // 5)):
    problem = CostMatrix.from_array(rng.integers(0, high + 1, (n, n)))
    row = {"case": f"{n} int {name}"}
    for algorithm in ("hungarian", "auction"):
        solvers.solve(problem, algorithm, backend="cuda")  # compile or load, untimed
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = solvers.solve(problem, algorithm, backend="cuda")
            times.append(time.perf_counter() - start)
        row[algorithm] = round(statistics.median(times), 4)
        row[f"{algorithm}_value"] = result.value
        row[f"{algorithm}_certificate"] = result.certificate.status
    row["auction_tail_bids"] = result.stats.get("gs_bids")
    row["auction_launches"] = result.stats.get("launches")
    print(json.dumps(row), flush=True)
