"""Where a warm solve's end-to-end time goes, stage by stage (issue 13's host overhead): the input's
conversion (``api.as_problem``), the solve (``Result.seconds``), the certificate and, for a matching
solved on a GPU, its host checksums; "rest" is what none of them covers. Medians in ms.

    PYTHONPATH=. python benchmarks/probe_solve_stages.py [--rows uniform-3M-deg4,rmat-21-ef8] [--repeat 9]
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
    ap.add_argument("--rows", default="uniform-3M-deg4,rmat-21-ef8")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    from bench_e2e import rows_table

    import solvers
    from solvers import api, konig_device
    from solvers import certify as certify_module
    spent: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            start = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
        return wrapper

    api.as_problem = timed("as_problem", api.as_problem)
    certify_module.certify = timed("certify", certify_module.certify)
    konig_device.host_checksums = timed("host_checksums", konig_device.host_checksums)
    table = {row.name: row for row in rows_table(quick=False)}
    for name in args.rows.split(","):
        row = table[name]
        data = row.build()
        solvers.solve(data, row.algorithm)
        samples = []
        for _ in range(args.repeat):
            spent.clear()
            start = time.perf_counter()
            result = solvers.solve(data, row.algorithm)
            sample = dict(spent, e2e=time.perf_counter() - start, solve=float(result.seconds))
            sample["rest"] = sample["e2e"] - sample["solve"] - sample.get("as_problem", 0.0) - sample.get("certify", 0.0)
            samples.append(sample)
        medians = {key: statistics.median(s.get(key, 0.0) for s in samples) for key in samples[0]}
        overhead = 1.0 - medians["solve"] / medians["e2e"]
        print(f"{name}: " + "  ".join(f"{key} {1e3 * value:.2f}" for key, value in medians.items())
              + f"  (overhead {100 * overhead:.0f}%, medians of {args.repeat})", flush=True)


if __name__ == "__main__":
    main()
