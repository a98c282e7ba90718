"""What the dense certificate's check on the GPU's copy costs (issue 13's rectangles: the
certificate's share of the host overhead): ``certify_device.dual_rows_on_device`` end to end, and
its kernels alone between CUDA events, on the device copies a solver keeps (float32 for integers
below 2^24, float64 otherwise). Medians of --repeat calls, ms.

    PYTHONPATH=. python benchmarks/probe_certify_device.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from numba import cuda

    from solvers import certify_device as D
    from solvers.problems import CostMatrix
    from solvers.targets import launcher_for
    launcher = launcher_for("cuda")
    rng = np.random.default_rng(1)
    print("| matrix | device dtype | layout | whole check ms | kernel ms | entries / s (kernel) |")
    print("|---|---|---|---:|---:|---:|")
    for rows, cols, dtype in ((3000, 9000, np.float32), (1000, 20000, np.float32), (8000, 8000, np.float32),
                              (4000, 4000, np.float64)):
        costs = rng.integers(0, 10 * cols, (rows, cols)).astype(np.float64)
        problem = CostMatrix.from_array(costs)
        u, v = np.zeros(rows), np.zeros(cols)
        for layout, copy in (("rows", costs), ("transposed", np.ascontiguousarray(costs.T))):
            if rows == cols and layout == "transposed":
                continue
            device = launcher.upload_matrix(copy, dtype)
            launcher.synchronize()
            whole, kernel = [], []
            for _ in range(args.repeat + 1):
                start = time.perf_counter()
                scanned, why = D.dual_rows_on_device(device, problem.shape, problem.checksum, u, v, v)
                whole.append(time.perf_counter() - start)
                assert scanned is not None, why
                out = launcher.empty(D.RESULT_PARTS * rows, np.float64)
                duals = launcher.upload(np.concatenate([u, v, v]))
                launcher.synchronize()
                begin, end = cuda.event(), cuda.event()
                begin.record()
                if layout == "rows":
                    launcher.launch(D.ROWS, rows, device, duals, out)
                else:
                    D.scan_columns(launcher, device, duals, out, D.slice_length(rows, cols))
                end.record()
                end.synchronize()
                kernel.append(cuda.event_elapsed_time(begin, end) / 1e3)
            w, k = statistics.median(whole[1:]) * 1e3, statistics.median(kernel[1:]) * 1e3
            print(f"| {rows} x {cols} | {np.dtype(dtype).name} | {layout} | {w:.2f} | {k:.2f} | "
                  f"{rows * cols / (k / 1e3):.3g} |", flush=True)


if __name__ == "__main__":
    main()
