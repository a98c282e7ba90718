"""The command line on a large Matrix Market graph in fresh processes (issue 13: matching from an
8M-edge .mtx through `matchscope solve` in at most half of scipy's mmread + Hopcroft-Karp), for
this checkout and optionally an older one (--baseline DIR, e.g. a `git archive` of an earlier
commit) on the same file, alternating, with scipy's own route timed in the same run.

Each code tree runs once untimed first (its kernel cache filled, the file in the page cache), then
--repeat timed runs. Per run: wall, the reported load and solve seconds, and the rest (start-up,
the certificate, output). Medians, seconds.

    PYTHONPATH=. python benchmarks/probe_cli_load.py [--rows rmat-21-ef8,uniform-3M-deg4] [--repeat 3]
        [--baseline _baseline] [--backend auto]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def cli_run(tree: Path, path: Path, algorithm: str, backend: str) -> dict:
    args = [sys.executable, "-m", "solvers", "solve", str(path), "--json", "--backend", backend, "--algo", algorithm]
    others = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree)] + others))  # the tree's solvers, the rest kept
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=tree, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        return {"wall": wall, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    load, solve = record.get("load_seconds") or 0.0, record["seconds"]
    return {"wall": wall, "load": load, "solve": solve, "rest": wall - load - solve,
            "value": record["value"], "certified": record["certified"], "compiled": record.get("compiled")}


def medians(runs: list[dict]) -> dict:
    good = [r for r in runs if "error" not in r]
    if not good:
        return {"error": runs[-1]["error"]}
    out = {k: round(statistics.median(r[k] for r in good), 3) for k in ("wall", "load", "solve", "rest")}
    out.update(value=good[-1]["value"], certified=all(r["certified"] for r in good),
               compiled=any(r["compiled"] for r in good))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="rmat-21-ef8")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default="", help="another code tree to time on the same file")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--quick", action="store_true", help="small rows (a check on the cpu)")
    args = ap.parse_args()
    import scipy.io
    from bench_e2e import rows_table, scipy_solve
    table = {row.name: row for row in rows_table(quick=args.quick)}
    trees = [("this checkout", ROOT)] + ([("baseline", Path(args.baseline).resolve())] if args.baseline else [])
    folder = Path(tempfile.mkdtemp(prefix="cli-load-"))
    for name in args.rows.split(","):
        row = table[name]
        data = row.build()
        path = folder / f"{name}.mtx"
        scipy.io.mmwrite(str(path), data, field="pattern")
        print(f"=== {name}: {data.shape[0]} x {data.shape[1]}, {data.nnz:,} edges, "
              f"{path.stat().st_size / 1e6:.0f} MB", flush=True)
        runs = {label: [] for label, _ in trees}
        for label, tree in trees:
            cli_run(tree, path, row.algorithm, args.backend)  # untimed: its cache, the page cache
        for _ in range(args.repeat):
            for label, tree in trees:
                runs[label].append(cli_run(tree, path, row.algorithm, args.backend))
        scipy_times = []
        for _ in range(max(1, args.repeat - 1)):
            start = time.perf_counter()
            value = scipy_solve(row, scipy.io.mmread(str(path), spmatrix=False).tocsr())
            scipy_times.append(time.perf_counter() - start)
        scipy_route = statistics.median(scipy_times)
        print(f"scipy mmread + Hopcroft-Karp: {scipy_route:.3f} s (value {value:g})")
        print("| code | wall | load | solve | rest | / scipy | value | certified | compiled |")
        print("|---|---:|---:|---:|---:|---:|---|---|---|")
        for label, _ in trees:
            m = medians(runs[label])
            if "error" in m:
                print(f"| {label} | error: {m['error']} |")
                continue
            print(f"| {label} | {m['wall']:.3f} | {m['load']:.3f} | {m['solve']:.3f} | {m['rest']:.3f} | "
                  f"{m['wall'] / scipy_route:.2f} | {m['value']:g} | {m['certified']} | {m['compiled']} |")
        print("runs:", json.dumps(runs), flush=True)
        path.unlink()


if __name__ == "__main__":
    main()
