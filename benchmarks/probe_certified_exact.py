"""Is every answer certified optimal exactly optimal? Solves hostile families (near ties, a row or
column near 1e18, mixed magnitudes, offsets, huge and tiny scales) on one backend, single matrices
and batches, and compares each certified answer with scipy's optimum of the line-reduced costs,
both values summed exactly (math.fsum). Also counts the proofs that needed the independent recheck
(``doubt``: the allowance alone proved them) and times the batches with and without that recheck.

    python benchmarks/probe_certified_exact.py --backend cuda [--out FILE.md]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import solvers  # noqa: E402
from solvers.batch import certify_batch  # noqa: E402


def reduced_optimum(costs: np.ndarray) -> np.ndarray:
    """scipy's optimum on the costs less each line's cheapest (scipy misses it beside 1e18 otherwise)."""
    n, m = costs.shape
    reduced = costs
    for axis, applies in ((1, n <= m), (0, n >= m)):
        if applies:
            low = np.min(reduced, axis=axis, keepdims=True)
            reduced = reduced - np.where(np.isfinite(low), low, 0.0)
    r, c = linear_sum_assignment(reduced)
    match = np.full(n, -1, np.int64)
    match[r] = c
    return match


def worse_by(costs: np.ndarray, ours: np.ndarray, best: np.ndarray) -> float:
    a, b = np.flatnonzero(ours >= 0), np.flatnonzero(best >= 0)
    return math.fsum(costs[a, ours[a]].tolist() + (-costs[b, best[b]]).tolist())


def families(rng):
    def one_huge_row(n, m):
        c = rng.integers(0, 100, (n, m)).astype(np.float64)
        c[0] += 1e18
        return c
    return {
        "uniform": lambda n, m: rng.random((n, m)),
        "tenths (ties)": lambda n, m: np.round(rng.random((n, m)), 1),
        "near ties": lambda n, m: rng.integers(0, 3, (n, m)) + rng.choice([0.0, 1e-9], (n, m)),
        "one row near 1e18": one_huge_row,
        "one column near 1e18": lambda n, m: one_huge_row(m, n).T.copy(),
        "mixed magnitudes": lambda n, m: rng.random((n, m)) * 10.0 ** rng.integers(-5, 6, (n, m)),
        "offset 1e6 + 1e-3 noise": lambda n, m: 1e6 + rng.random((n, m)) * 1e-3,
        "1e300": lambda n, m: rng.random((n, m)) * 1e300,
        "1e-300": lambda n, m: rng.random((n, m)) * 1e-300,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(11)
    lines = [f"# Certified means exactly optimal: backend {args.backend}", "",
             "| family | kind | shape | certified optimal | certified optimal but worse | doubt (rechecked) | seconds |",
             "|---|---|---|---|---|---|---|"]
    failures = 0
    seen = {}
    real = certify_batch.recheck_doubtful_proofs

    def spy(packed, row_to_col, checked):
        seen["doubt"] = int(np.count_nonzero(checked["doubt"]))
        return real(packed, row_to_col, checked)
    certify_batch.recheck_doubtful_proofs = spy
    for name, make in families(rng).items():
        for n, m in ((60, 60), (40, 90)):
            items = np.stack([make(n, m) for _ in range(args.items)])
            solvers.solve_batch(items[:2], backend=args.backend)
            start = time.perf_counter()
            result = solvers.solve_batch(items, backend=args.backend)
            seconds = time.perf_counter() - start
            wrong = sum(1 for b in range(len(items)) if result.certified[b]
                        and worse_by(items[b], np.asarray(result.assignments[b]), reduced_optimum(items[b])) > 0)
            failures += wrong
            lines.append(f"| {name} | batch | {args.items}x{n}x{m} | {int(result.certified.sum())} | {wrong} | "
                         f"{seen.get('doubt', 0)} | {seconds:.3f} |")
        for n, m in ((300, 300), (250, 600)):
            costs = make(n, m)
            rows = []
            for algorithm in ("lsa", "hungarian", "auction"):
                try:
                    result = solvers.solve(costs, algorithm, backend="cpu" if algorithm == "lsa" else args.backend)
                except Exception as exc:  # noqa: BLE001 - a solver refusing the family is reported, not fatal
                    rows.append(f"{algorithm}: {type(exc).__name__}")
                    continue
                status = result.certificate.status  # "optimal", or "within-gap" for an epsilon-run's claim
                more = worse_by(costs, result.row_match, reduced_optimum(costs))
                bad = (status == "optimal" and more > 0) or (status == "within-gap" and more > result.certificate.gap)
                failures += bad
                said = {"optimal": "certified optimal", "within-gap": f"certified within {result.certificate.gap:.3g} "
                        f"(worse by {more:.3g})"}.get(status, "not certified")
                rows.append(f"{algorithm}: {said}{' BUT WORSE' if bad else ''}")
            lines.append(f"| {name} | single | {n}x{m} | {'; '.join(rows)} | | | |")
        print(lines[-3:], flush=True)
    lines += ["", f"Answers certified optimal that cost more than the optimum: **{failures}**. (An epsilon-run's "
              "claim, \"certified within G\", is held to G.)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
