"""Where the batch certificate's time goes on a GPU: every kernel launch of device.certify_packed
timed alone (synchronised), and the whole call, for the goal batches (float32, data on the device).
Medians of --repeats, ms.

    PYTHONPATH=. python benchmarks/probe_batch_certify.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from numba import cuda

    from solvers.batch import device as D
    from solvers.targets.cuda import CudaLauncher
    rng = np.random.default_rng(3)
    cases = {"1000 x 256 x 256": (1000, 256, 256), "10000 x 100 x 100": (10000, 100, 100),
             "10000 x 100 x 300": (10000, 100, 300)}
    spent = defaultdict(list)
    real_launch = CudaLauncher.launch

    def timed_launch(self, kernel, size, *a):
        cuda.synchronize()
        start = time.perf_counter()
        real_launch(self, kernel, size, *a)
        cuda.synchronize()
        spent[kernel.name].append(time.perf_counter() - start)
    for name, (b, n, m) in cases.items():
        costs = cuda.to_device(rng.random((b, n, m), dtype=np.float32))
        given = D.prepare_device(costs)
        solution = D.solve_packed_cuda(given.packed)
        D.certify_packed(given.packed, solution)  # compile or load, untimed
        whole = []
        for _ in range(args.repeats):
            cuda.synchronize()
            start = time.perf_counter()
            out = D.certify_packed(given.packed, solution)
            whole.append(time.perf_counter() - start)
        CudaLauncher.launch = timed_launch
        spent.clear()
        for _ in range(args.repeats):
            D.certify_packed(given.packed, solution)
        CudaLauncher.launch = real_launch
        parts = ", ".join(f"{k} {1e3 * statistics.median(v):.2f}" for k, v in spent.items())
        print(f"{name}: certify_packed {1e3 * statistics.median(whole):.2f} ms; kernels: {parts}; "
              f"proven {int(np.count_nonzero(out['reason'] == 0))}, doubt {int(out['doubt'].sum())}", flush=True)


if __name__ == "__main__":
    main()
