"""A solve's device memory kept for the next solve (solvers.targets.device_pool) and the CUDA context
attached for the whole solve (solvers.targets.context_attached), against numba's own allocations
and context lookups, alternating in one warm process: end to end, solve-only and the host's share
per row (issue 13's host overhead), medians in ms, and the chunks each mode allocated.

    PYTHONPATH=. python benchmarks/probe_device_pool.py [--rows rect-3000x9000,...] [--repeat 9] [--rounds 2]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

ROWS = "rect-3000x9000,rect-1000x20000,dense-8000-int,uniform-3M-deg4,rmat-21-ef8,flow-grid-700,dense-4000-real"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=ROWS)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    import solvers
    from bench_e2e import rows_table
    from solvers.targets import device_pool
    import contextlib
    from solvers import solving
    pooled, attached = device_pool._plain, solving.context_attached
    modes = {"pool": (pooled, attached), "numba": (lambda: True, lambda backend: contextlib.nullcontext())}

    def use(mode):
        device_pool._plain, solving.context_attached = mode
    table = {row.name: row for row in rows_table(quick=False)}
    for name in args.rows.split(","):
        row = table[name]
        data = row.build()
        for mode in modes.values():  # both paths warm
            use(mode)
            solvers.solve(data, row.algorithm)
        for round_ in range(1, args.rounds + 1):
            for label, mode in modes.items():
                use(mode)
                pool = device_pool._numba_pool()
                made = pool.allocated
                e2e, solve = [], []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    result = solvers.solve(data, row.algorithm)
                    e2e.append(time.perf_counter() - start)
                    solve.append(result.seconds)
                a, s = statistics.median(e2e), statistics.median(solve)
                print(f"{name} {label} round {round_}: e2e {a * 1e3:.1f} ms, solve-only {s * 1e3:.1f} ms, "
                      f"overhead {100 * (a - s) / a:.0f}%, chunks allocated {pool.allocated - made} "
                      f"over {args.repeat} solves, certified {result.certified}", flush=True)
    use(modes["pool"])


if __name__ == "__main__":
    main()
