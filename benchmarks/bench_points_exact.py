"""Exact 3-D correspondence of two frames from k nearest neighbours (solvers.match_points, issue 14
part 3, host path): n points and the next frame (each point moved by N(0, sigma), shuffled), end to
end from numpy, certified for the full Euclidean problem. scipy's cdist + linear_sum_assignment is
timed beside it where the dense matrix is small enough (n <= 8000).

    python benchmarks/bench_points_exact.py [--sizes 8000,100000] [--sigma 0.002] [--out benchmarks/results]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import solvers  # noqa: E402  (the repository's own)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8000,100000")
    ap.add_argument("--sigma", type=float, default=0.002)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()
    lines = ["| points | match_points e2e (s) | rounds | largest k | certificate | scipy cdist + lsa (s) | same value |",
             "|---|---|---|---|---|---|---|"]
    for n in (int(x) for x in args.sizes.split(",")):
        rng = np.random.default_rng(n)
        a = rng.random((n, 3))
        b = (a + rng.normal(0, args.sigma, a.shape))[rng.permutation(n)]
        start = time.perf_counter()
        result = solvers.match_points(a, b)
        seconds = time.perf_counter() - start
        scipy_seconds, same = "-", "-"
        if n <= 8000:
            from scipy.optimize import linear_sum_assignment
            from scipy.spatial.distance import cdist
            start = time.perf_counter()
            distances = cdist(a, b)
            rows, cols = linear_sum_assignment(distances)
            scipy_seconds = f"{time.perf_counter() - start:.3f}"
            same = "yes" if abs(distances[rows, cols].sum() - result.value) <= 1e-9 * result.value else "**NO**"
        lines.append(f"| {n:,} | {seconds:.3f} | {result.stats['rounds']} | {result.stats['max_k']} | "
                     f"{result.certificate.status} | {scipy_seconds} | {same} |")
        print(lines[-1], flush=True)
    machine = f"{platform.machine()} x{os.cpu_count()}"
    stamp = datetime.date.today().isoformat()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"points-exact-{stamp}-cpu-{''.join(c if c.isalnum() else '-' for c in machine.lower())}.md"
    (out / name).write_text(f"# Exact point correspondence from k nearest neighbours, {stamp}, {machine} (cpu)\n\n"
                            f"Two frames: n uniform points in the unit cube and the same points moved by "
                            f"N(0, {args.sigma}) and shuffled; `solvers.match_points(a, b)` (k = 8 to start) "
                            "end to end from numpy.\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
