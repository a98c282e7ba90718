"""Where the host time of a warm end-to-end solve goes (issue 13's host overhead, issue 15's batch
certificate): for each row, one untimed call (compile or load), then one call under cProfile; the
functions with the most time of their own and the cumulative top, in ms.

    PYTHONPATH=. python benchmarks/profile_host_overhead.py [--rows rect-3000x9000,uniform-3M-deg4,batch-1000x256,devicebatch-1000x256]
        [--top 0 --repeat 5]   (the medians of 5 unprofiled calls, no profile)
    rows: bench_e2e's, batch-BxN / devicebatch-BxN (B items of N x N float32), tall-RxC (R > C integers)
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def batch_row(b, n, m, on_device):
    rng = np.random.default_rng(3)
    costs = rng.random((b, n, m), dtype=np.float32)
    if on_device:  # a device array (as from PyTorch or CuPy): solved where it is
        from numba import cuda
        costs = cuda.to_device(costs)
    import solvers
    return lambda: solvers.solve_batch(costs, backend="auto")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="rect-3000x9000,rect-1000x20000,dense-8000-int,uniform-3M-deg4,grid-1200-del20,"
                    "rmat-21-ef8,flow-grid-700,batch-1000x256,devicebatch-1000x256")
    ap.add_argument("--top", type=int, default=22, help="0: no profile, only the medians")
    ap.add_argument("--repeat", type=int, default=1, help="unprofiled calls timed (their median)")
    ap.add_argument("--quick", action="store_true", help="the small rows (a check on the cpu)")
    args = ap.parse_args()
    import solvers
    from bench_e2e import rows_table
    table = {row.name: row for row in rows_table(quick=args.quick)}
    for name in args.rows.split(","):
        if name.startswith(("batch-", "devicebatch-")):  # batch-BxN: B items of N x N float32 from numpy
            size = name.split("-")[1]
            b, n = (int(x) for x in size.split("x"))
            call = batch_row(b, n, n, name.startswith("device"))
        elif name.startswith("tall-"):  # tall-RxC: R > C integer costs in [0, 10R] (solved transposed)
            r, c = (int(x) for x in name.split("-")[1].split("x"))
            costs = np.random.default_rng(4).integers(0, 10 * r, (r, c))
            call = (lambda costs=costs: solvers.solve(costs, "hungarian"))
        else:
            row = table[name]
            data = row.build()
            call = (lambda data=data, algo=row.algorithm: solvers.solve(data, algo))
        call()
        times, solves = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = call()
            times.append(time.perf_counter() - start)
            seconds = getattr(result, "seconds", None)
            solves.append(seconds.get("total") if isinstance(seconds, dict) else seconds)
        plain = statistics.median(times)
        if not args.top:
            solve = statistics.median(solves)
            print(f"{name}: e2e {1e3 * plain:.1f} ms, solve-only {1e3 * solve:.1f} ms, overhead "
                  f"{100 * (plain - solve) / plain:.0f}% (medians of {args.repeat})", flush=True)
            continue
        profile = cProfile.Profile()
        profile.enable()
        call()
        profile.disable()
        seconds = getattr(result, "seconds", None)
        solve = f"{1e3 * seconds:.1f} ms" if isinstance(seconds, float) else str(seconds)
        print(f"=== {name}: e2e {1e3 * plain:.1f} ms unprofiled, solve-only {solve}", flush=True)
        entries = pstats.Stats(profile).stats  # {(file, line, name): (calls, primitive, own, cumulative, callers)}
        for label, index in (("own time", 2), ("cumulative", 3)):
            print(f"  by {label}: ms own / ms cumulative / calls  function", flush=True)
            for (path, line, func), (_, calls, own, cumulative, _) in sorted(
                    entries.items(), key=lambda e: -e[1][index])[:args.top]:
                where = f"{Path(path).parent.name}/{Path(path).name}:{line}" if line else path
                print(f"  {1e3 * own:9.3f} {1e3 * cumulative:9.3f} {calls:6d}  {func} ({where})"[:170], flush=True)

if __name__ == "__main__":
    main()
