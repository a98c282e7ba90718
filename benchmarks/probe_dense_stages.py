"""Where solve(C) spends a dense matrix's end-to-end time on a GPU (issue 13's host overhead), stage
by stage in a warm process: building the Problem (the checking pass, converting integers), the
solver's run with its upload (from Solution.stats), the certificate, and solve itself. Medians of
--repeats, ms.

    PYTHONPATH=. python benchmarks/probe_dense_stages.py [--repeats 5]
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


def median_ms(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return round(1e3 * statistics.median(times), 2), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--divide", type=int, default=1, help="sides divided by this (a quick check on the cpu)")
    args = ap.parse_args()
    import solvers
    from solvers import registry
    from solvers.api_inputs import as_problem
    from solvers.certify import certify
    from solvers.telemetry import NULL
    rng = np.random.default_rng(7)
    d = args.divide
    cases = {"8000x8000 int64 [0, 80000]": rng.integers(0, 80001, (8000 // d, 8000 // d), dtype=np.int64),
             "3000x9000 int64 [0, 90000]": rng.integers(0, 90001, (3000 // d, 9000 // d), dtype=np.int64),
             "3000x9000 float64": rng.random((3000 // d, 9000 // d)),
             "4000x4000 float64": rng.random((4000 // d, 4000 // d))}
    algo = registry.get("hungarian")
    for name, costs in cases.items():
        solvers.solve(costs, "hungarian", backend=args.backend)  # compile or load, untimed
        row = {"case": name}
        row["solve_e2e"], result = median_ms(lambda: solvers.solve(costs, "hungarian", backend=args.backend), args.repeats)
        row["as_problem"], problem = median_ms(lambda: as_problem(costs, algo), args.repeats)
        run = algo.run_function()
        options = algo.parse_options({})
        row["run"], solution = median_ms(lambda: run(problem, args.backend, NULL, **options), args.repeats)
        row["upload_in_run"] = round(1e3 * float(solution.stats.get("upload_seconds", float("nan"))), 2)
        row["certify"], cert = median_ms(lambda: certify(problem, solution), args.repeats)
        row["certificate"] = cert.details[:120]
        row["result_seconds"] = round(1e3 * result.seconds, 2)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
