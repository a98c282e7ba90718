"""Where a large matching certificate's time goes on a GPU (issue 13's matching rows): the whole
certificate, the host's checksums of the graph and the answer (what the device passes are compared
with), the device passes with their reads, and the end-to-end solve with the solver's device copy
of the matching read by the certificate or the host's answer uploaded instead; medians in ms.

    PYTHONPATH=. python benchmarks/probe_konig_device.py [--rows uniform-3M-deg4,rmat-21-ef8] [--repeat 9]
"""
from __future__ import annotations

import argparse
import dataclasses
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
    from probe_device_transpose import median_ms

    import solvers
    from solvers import certify as cm
    from solvers import konig_device
    from solvers.targets import launcher_for
    table = {row.name: row for row in rows_table(quick=False)}
    launcher = launcher_for("cuda")
    original = cm.certify
    for name in args.rows.split(","):
        matrix = table[name].build()
        caught = {}

        def catch(problem, solution):
            caught["problem"], caught["solution"] = problem, solution
            return original(problem, solution)

        cm.certify = catch
        solvers.solve(matrix, "gpr", backend="cuda")
        cm.certify = original
        graph, solution = caught["problem"], caught["solution"]
        rows, cols = solution.row_match, solution.col_match
        whole = median_ms(lambda: cm.certify(graph, solution), args.repeat)
        sums = median_ms(lambda: konig_device.host_checksums(graph, rows, cols), args.repeat)
        passes = median_ms(lambda: konig_device.reach_on_device(launcher, solution.device_graph, graph, rows, cols,
                                                                solution.device_matching), args.repeat)
        uploaded = median_ms(lambda: konig_device.reach_on_device(launcher, solution.device_graph, graph, rows, cols),
                             args.repeat)
        print(f"{name}: certificate {whole:.1f} ms; host checksums {sums:.1f}; device passes with the host's "
              f"checksums and reads {passes:.1f} (the answer uploaded instead of the solver's copy: {uploaded:.1f})",
              flush=True)
        del graph, solution, caught
        for label, keep_copy in (("solver's copy", True), ("answer uploaded", False), ("solver's copy", True),
                                 ("answer uploaded", False)):
            def certify(problem, solution, keep_copy=keep_copy):
                if not keep_copy:
                    solution = dataclasses.replace(solution, device_matching=None)
                return original(problem, solution)

            cm.certify = certify
            solves, times = [], []
            solvers.solve(matrix, "gpr", backend="cuda")
            for _ in range(args.repeat):
                start = time.perf_counter()
                result = solvers.solve(matrix, "gpr", backend="cuda")
                times.append(time.perf_counter() - start)
                solves.append(result.seconds)
            cm.certify = original
            print(f"  {label}: e2e {1e3 * statistics.median(times):.1f} ms, solve-only "
                  f"{1e3 * statistics.median(solves):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
