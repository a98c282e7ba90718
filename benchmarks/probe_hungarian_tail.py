"""The GPU Hungarian on dense rows, solve by solve (issue 13's dense-4000-real): end to end and
solve-only medians in ms, with the iterations, dual updates and BFS levels of the cooperative
loop, so that two trees can be compared in one command (run it from each, alternating).

    PYTHONPATH=. python benchmarks/probe_hungarian_tail.py TAG [--repeat 5] [--scipy]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CASES = {  # name: (rows, cols, integer, seed); the seeds of bench_e2e's rows where they share a shape
    "real-4000": (4000, 4000, False, 1),
    "int-8000": (8000, 8000, True, 2),
    "real-2000x6000": (2000, 6000, False, 3),
    "int-1000x20000": (1000, 20000, True, 5),
}


def costs(rows, cols, integer, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 10 * max(rows, cols) + 1, (rows, cols)) if integer else rng.random((rows, cols))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tag", help="a label for this tree's lines")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scipy", action="store_true", help="also time scipy on real-4000")
    args = ap.parse_args()
    import solvers
    solvers.solve(np.random.default_rng(9).random((64, 64)), "hungarian", backend="cuda")  # compile or load
    for name, shape in CASES.items():
        C = costs(*shape)
        solvers.solve(C, "hungarian", backend="cuda")  # its upload path warm
        e2e, solve = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            r = solvers.solve(C, "hungarian", backend="cuda")
            e2e.append(time.perf_counter() - start)
            solve.append(r.seconds)
        s = r.stats
        print(f"{args.tag} {name}: e2e {statistics.median(e2e) * 1e3:.1f} ms, "
              f"solve {statistics.median(solve) * 1e3:.1f} ms, {len(s['paths_per_iteration'])} iterations, "
              f"{s['dual_updates']} dual updates, {s['bfs_levels']} levels, "
              f"{s.get('forests_kept', 0)} forests kept, {s.get('single_path_walks', 0)} single-path walks, "
              f"certified {r.certified}", flush=True)
    if args.scipy:
        from scipy.optimize import linear_sum_assignment
        C = costs(*CASES["real-4000"])
        start = time.perf_counter()
        linear_sum_assignment(C)
        print(f"scipy real-4000: {time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
