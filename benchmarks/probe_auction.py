"""Where the GPU auction spends its time (issue 14: within 2x of the tree Hungarian on dense n = 8000
integer costs): the auction under a few settings of its host loop (the Gauss-Seidel tail's
threshold, Jacobi rounds between readbacks, epsilon's factor), against the tree Hungarian on the
same matrix, with the auction's counters. Warm process, the matrix built once, medians, seconds.

    PYTHONPATH=. python benchmarks/probe_auction.py [--n 8000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def median_seconds(fn, repeats: int):
    fn()  # compile or load, untimed
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backend", default="cuda")
    args = ap.parse_args()
    import solvers
    from solvers.assignment import auction_device as AD
    from solvers.problems import CostMatrix
    n = args.n
    rng = np.random.default_rng(11)
    cases = {f"{n} int [0, 10n]": rng.integers(0, 10 * n + 1, (n, n)),
             f"{n} int [0, n/5]": rng.integers(0, n // 5 + 1, (n, n))}
    for name, values in cases.items():
        problem = CostMatrix.from_array(values)
        seconds, result = median_seconds(lambda: solvers.solve(problem, "hungarian", backend=args.backend),
                                         args.repeats)
        print(json.dumps({"case": name, "solver": "hungarian", "seconds": seconds, "solve": round(result.seconds, 4),
                          "value": result.value}), flush=True)
        settings = [("default", {}, {}), ("no gs tail", {"GS_THRESHOLD": 0}, {}),
                    ("gs tail 512", {"GS_THRESHOLD": 512}, {}), ("16 rounds a read", {"ROUNDS_PER_READ": 16}, {}),
                    ("eps_factor 10", {}, {"eps_factor": 10.0}), ("eps_factor 3", {}, {"eps_factor": 3.0})]
        saved = {k: getattr(AD, k) for k in ("GS_THRESHOLD", "ROUNDS_PER_READ")}
        for label, module_values, options in settings:
            for key, value in module_values.items():
                setattr(AD, key, value)
            try:
                seconds, result = median_seconds(
                    lambda: solvers.solve(problem, "auction", backend=args.backend, **options), args.repeats)
                stats = {k: v for k, v in result.stats.items() if isinstance(v, (int, float, str))}
                print(json.dumps({"case": name, "solver": f"auction ({label})", "seconds": seconds,
                                  "solve": round(result.seconds, 4), "value": result.value,
                                  "optimal": result.certificate.optimal, "stats": stats}), flush=True)
            finally:
                for key, value in saved.items():
                    setattr(AD, key, value)


if __name__ == "__main__":
    main()
