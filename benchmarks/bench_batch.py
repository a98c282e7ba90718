"""Batch assignment on the CPU (issue 15): solvers.solve_batch against lapx's lapjvx_batch and a loop
of scipy's linear_sum_assignment, on the same cores, in one run.

    .venv/bin/python benchmarks/bench_batch.py [--quick] [--threads 2] [--out results.md]

``solve_batch`` is timed end to end from a numpy array (validation, packing, the solve and the
certificate of every item); ``solve only`` is its solve step alone. Every case is run once untimed
first (compiling or loading the kernels), then timed as the best of ``--repeat`` runs. lapx gets
the same threads (n_threads); a ragged batch, which lapjvx_batch cannot take, is a loop of lapjvx.
Every item's value is checked against scipy's.
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np


def cases(quick: bool):
    rng = np.random.default_rng(2026)
    scale = 10 if quick else 1
    yield "1000 x 256 x 256 float32", rng.random((1000 // scale, 256, 256)).astype(np.float32)
    yield "10000 x 100 x 100 float64", rng.random((10000 // scale, 100, 100))
    sizes = rng.integers(10, 501, 1000 // scale)
    yield f"ragged {sizes.size} items, n in [10, 500], float64", [rng.random((int(s), int(s))) for s in sizes]


def best_of(repeat, run):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return min(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a tenth of the items")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", help="write the table as markdown here")
    args = parser.parse_args()
    import numba
    numba.set_num_threads(args.threads)
    import lap
    from scipy.optimize import linear_sum_assignment
    import solvers

    rows = []
    for name, costs in cases(args.quick):
        solvers.solve_batch(costs[:2], backend="cpu")  # compile or load, untimed
        ours, result = best_of(args.repeat, lambda: solvers.solve_batch(costs, backend="cpu"))
        assert result.all_certified, result.summary()["text"]
        solve_only = result.seconds["solve"]
        certify = result.seconds["certify"]
        items = list(costs)
        if isinstance(costs, list):
            lapx, lap_values = best_of(args.repeat, lambda: np.array([lap.lapjvx(c)[0] for c in items]))
            lapx_how = "lapjvx loop (1 thread)"
        else:
            lapx, out = best_of(args.repeat, lambda: lap.lapjvx_batch(costs, n_threads=args.threads))
            lap_values = out[0]
            lapx_how = f"lapjvx_batch ({args.threads} threads)"

        def scipy_loop():
            return np.array([float(np.asarray(c, dtype=np.float64)[linear_sum_assignment(c)].sum()) for c in items])
        scipy_time, reference = best_of(1, scipy_loop)
        worst = float(np.max(np.abs(result.values - reference) / np.maximum(np.abs(reference), 1e-300)))
        worst_lap = float(np.max(np.abs(lap_values - reference) / np.maximum(np.abs(reference), 1e-300)))
        rows.append((name, ours, solve_only, certify, lapx, lapx_how, scipy_time, worst, worst_lap))
        print(f"{name}: solve_batch {ours:.3f} s (solve {solve_only:.3f}, certify {certify:.3f}), "
              f"{lapx_how} {lapx:.3f} s, scipy loop {scipy_time:.3f} s; value vs scipy {worst:.1e} (lapx {worst_lap:.1e})",
              flush=True)
    if args.out:
        lines = [f"# Batch assignment, CPU: {platform.machine()}, {args.threads} threads", "",
                 "| batch | solve_batch end to end (s) | solve only (s) | certify (s) | lapx (s) | lapx as | "
                 "scipy loop (s) | end to end vs lapx | max rel. value diff vs scipy |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for name, ours, solve_only, certify, lapx, how, sc, worst, _ in rows:
            lines.append(f"| {name} | {ours:.3f} | {solve_only:.3f} | {certify:.3f} | {lapx:.3f} | {how} | {sc:.3f} | "
                         f"{lapx / ours:.2f}x | {worst:.1e} |")
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
