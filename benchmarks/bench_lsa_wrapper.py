"""Issue 13's wrapper goal: ``solvers.solve(C, "lsa")`` (scipy's solver, plus our input checks and the
certificate) at most 1.15x scipy's own ``linear_sum_assignment`` at n = 1500, on any machine.

    .venv/bin/python benchmarks/bench_lsa_wrapper.py [--n 1500] [--repeat 15] [--seed 1]

Both are timed alternately on the same uniform random matrix, after one untimed call each; the
medians are compared.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from scipy.optimize import linear_sum_assignment

    import solvers
    costs = np.random.default_rng(args.seed).random((args.n, args.n))
    linear_sum_assignment(costs)
    result = solvers.solve(costs, "lsa", backend="cpu")
    assert result.certified
    scipy_times, ours = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        linear_sum_assignment(costs)
        scipy_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        solvers.solve(costs, "lsa", backend="cpu")
        ours.append(time.perf_counter() - start)
    a, b = statistics.median(scipy_times), statistics.median(ours)
    print(f"{platform.machine()}, n = {args.n}, medians of {args.repeat}: scipy {a:.4f} s, "
          f"solve(C, 'lsa') {b:.4f} s, ratio {b / a:.3f} (goal <= 1.15)")


if __name__ == "__main__":
    main()
