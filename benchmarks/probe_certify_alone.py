"""The certificate alone (issue 13's host overhead): one GPU solve of a headline row, then
``certify`` repeated on its solution, the solver's device copy of the costs kept, so that the
solve's own variation stays out of it. Medians in ms.

    PYTHONPATH=. python benchmarks/probe_certify_alone.py [--rows rect-1000x20000,rect-3000x9000] [--repeat 41]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="rect-1000x20000,rect-3000x9000")
    ap.add_argument("--repeat", type=int, default=41)
    args = ap.parse_args()
    from bench_e2e import rows_table

    from solvers import api, registry
    from solvers.certify import certify
    from solvers.telemetry import Telemetry
    table = {row.name: row for row in rows_table(quick=False)}
    for name in args.rows.split(","):
        row = table[name]
        algo = registry.get(row.algorithm)
        problem = api.as_problem(row.build(), algo, None)
        solution = algo.run_function()(problem, "cuda", Telemetry.attach(None, None), **algo.parse_options({}))
        for _ in range(5):
            certificate = certify(problem, solution)
        samples = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            certify(problem, solution)
            samples.append(time.perf_counter() - start)
        print(f"{name}: certify {1e3 * statistics.median(samples):.3f} ms (fastest {1e3 * min(samples):.3f}); "
              f"{certificate.details[:80]}", flush=True)


if __name__ == "__main__":
    main()
