"""A graph's column lists: the host's transpose on all cores (graph_build.transpose, what a GPU
solve of a csr waited for before) against the GPU's (matching.transpose_device, from the row lists
already uploaded), on bench_e2e's matching rows; medians in ms, and whether the two agree.

    PYTHONPATH=. python benchmarks/probe_device_transpose.py [--rows uniform-3M-deg4,rmat-21-ef8] [--repeat 7]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def median_ms(call, repeat: int) -> float:
    call()  # compile or load, first allocations
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="uniform-3M-deg4,rmat-21-ef8,grid-1200-del20")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from bench_e2e import rows_table
    from numba import cuda

    from solvers import graph_build
    from solvers.matching import transpose_device
    from solvers.problems import BipartiteGraph
    from solvers.targets import launcher_for
    table = {row.name: row for row in rows_table(quick=False)}
    launch = launcher_for("cuda")
    name = cuda.get_current_device().name
    print(f"device: {name.decode() if isinstance(name, bytes) else name}")
    for name in args.rows.split(","):
        graph = BipartiteGraph.from_sparse(table[name].build(), copy=False)
        ptr, ind = np.asarray(graph.row_ptr), np.asarray(graph.col_ind)
        row_ptr, col_ind = launch.upload(ptr, np.int64), launch.upload(ind, np.int32)

        def on_device():
            out = transpose_device.columns_on_device(launch, row_ptr, col_ind, graph.n_rows, graph.n_cols)
            cuda.synchronize()
            return out

        host_ms = median_ms(lambda: graph_build.transpose(ptr, ind, graph.n_cols), args.repeat)
        device_ms = median_ms(on_device, args.repeat)
        want_ptr, want_ind = graph_build.transpose(ptr, ind, graph.n_cols)
        col_ptr, row_ind = on_device()
        same = np.array_equal(launch.read(col_ptr), want_ptr) and np.array_equal(launch.read(row_ind), want_ind)
        print(f"{name}: {graph.n_edges:,} edges, host transpose {host_ms:.1f} ms, device {device_ms:.1f} ms, "
              f"same lists: {same} (medians of {args.repeat})", flush=True)


if __name__ == "__main__":
    main()
