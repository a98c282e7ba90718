"""Where a large matching certificate's time goes on a GPU (issue 13's matching rows): the whole
certificate, the host's checksums of the graph and the answer (what the device passes are compared
with), the device passes with their reads, and the end-to-end solve with the solver's device copy
of the matching read by the certificate or the host's answer uploaded instead; medians in ms.
``--passes``: instead, each device pass alone (followed by a synchronize), its set-up and reads.

    PYTHONPATH=. python benchmarks/probe_konig_device.py [--rows uniform-3M-deg4,rmat-21-ef8] [--repeat 9] [--passes]
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
    ap.add_argument("--passes", action="store_true", help="time each device pass alone")
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
        if args.passes:
            print(f"{name}: " + "  ".join(f"{label} {value:.3f}" for label, value in
                                          each_pass(launcher, graph, solution, args.repeat).items()), flush=True)
            continue
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


def each_pass(launcher, graph, solution, repeat: int) -> dict[str, float]:
    """Median ms of reach_on_device's steps, each followed by a synchronize (launch cost included),
    on the solver's device copies; "levels" is the search's depth."""
    import numpy as np

    from solvers import konig_device as kd
    n_rows, n_cols = graph.shape
    row_ptr, col_ind = solution.device_graph
    rows, cols = solution.device_matching
    times: dict[str, list[float]] = {}

    def step(label, fn):
        start = time.perf_counter()
        fn()
        launcher.synchronize()
        times.setdefault(label, []).append(time.perf_counter() - start)

    for _ in range(repeat + 1):  # the first round (loading) is dropped
        held = {}

        def setup():
            first_col = max(n_rows, 1)
            held["row_level"] = launcher.empty(first_col, np.int32)
            held["flags"] = flags = launcher.empty(first_col + max(n_cols, 1), np.uint8)
            held["row_seen"], held["col_seen"] = flags[:first_col], flags[first_col:]
            held["parts"] = kd._Partials(launcher, ((kd.ROWS, n_rows), (kd.COLUMNS, n_cols),
                                                    (kd.COVER_ROWS, n_rows), (kd.COVER_COLUMNS, n_cols)))
            held["stamps"] = launcher.zeros(2, np.int64)

        step("setup", setup)
        parts, stamps, row_level, col_seen = held["parts"], held["stamps"], held["row_level"], held["col_seen"]
        step("ROWS", lambda: launcher.launch(kd.ROWS, n_rows, row_ptr, col_ind, rows, cols, row_level, n_cols,
                                             *parts.of(0)))
        step("COLUMNS", lambda: launcher.launch(kd.COLUMNS, n_cols, rows, cols, col_seen, *parts.of(1)))
        step("LEVELS", lambda: launcher.launch(kd.LEVELS, n_rows, row_ptr, col_ind, cols, row_level, col_seen,
                                               n_rows + 1, stamps))
        step("COVER_ROWS", lambda: launcher.launch(kd.COVER_ROWS, n_rows, row_ptr, col_ind, row_level, col_seen,
                                                   held["row_seen"], *parts.of(2)))
        step("COVER_COLUMNS", lambda: launcher.launch(kd.COVER_COLUMNS, n_cols, cols, col_seen, *parts.of(3)))
        step("partials read", lambda: parts.finish(launcher))
        step("host checksums", lambda: kd.host_checksums(graph, solution.row_match, solution.col_match))
        step("flags read", lambda: launcher.read(held["flags"]))
        times.setdefault("levels", []).append(1e-3 * float(launcher.read(stamps)[0]))
    return {label: 1e3 * statistics.median(values[1:]) for label, values in times.items()}


if __name__ == "__main__":
    main()
