"""Which batch items the one-warp kernel should take (issue 15): the solver kernels alone on
1000 x 256 x 256, 10000 x 100 x 300 and 10000 x 100 x 100 (float32, on the device), by the warp
kernel and by the block kernel, with torch-linear-assignment on the same tensors when importable.
Run once per setting of MATCHSCOPE_BATCH_WARP="cols,warps" (device_kernels), each with its own
NUMBA_CACHE_DIR. Medians of --repeats, ms; every item's value checked against the block kernel's.

    MATCHSCOPE_BATCH_WARP=320,2 NUMBA_CACHE_DIR=/tmp/nc-320 python benchmarks/probe_warp_width.py
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def timed(fn, sync, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), out


def item_values(packed, row_to_col) -> np.ndarray:
    values = np.empty(len(packed.rows))
    for b in range(len(packed.rows)):
        n, m, o, r = int(packed.rows[b]), int(packed.cols[b]), int(packed.offsets[b]), int(packed.row_offsets[b])
        item = packed.costs[o:o + n * m].reshape(n, m).astype(np.float64)
        values[b] = item[np.arange(n), row_to_col[r:r + n]].sum()
    return values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    from numba import cuda

    from solvers.batch import device, device_kernels as K
    from solvers.batch.inputs import prepare_batch
    try:
        import torch
        from torch_linear_assignment import batch_linear_assignment
    except ImportError:
        torch = None
    rng = np.random.default_rng(2026)
    report = {"warp": [K.WARP_COLS, K.WARPS_PER_BLOCK], "cases": []}
    for shape in ((1000, 256, 256), (10000, 100, 300), (10000, 100, 100)):
        costs = rng.random(shape).astype(np.float32)
        packed = prepare_batch(costs).packed
        costs_d = cuda.to_device(packed.costs)
        idx = (packed.offsets, packed.rows, packed.cols, packed.row_offsets, packed.col_offsets)
        row = {"shape": list(shape), "kernel": "warp" if shape[2] <= K.WARP_COLS else "block"}
        device.solve_packed_device(costs_d, *idx)
        cuda.synchronize()
        row["ours_ms"], out = timed(lambda: device.solve_packed_device(costs_d, *idx), cuda.synchronize, args.repeats)
        device.solve_packed_device(costs_d, *idx, warp_cols=0)
        row["block_kernel_ms"], ref = timed(lambda: device.solve_packed_device(costs_d, *idx, warp_cols=0),
                                            cuda.synchronize, args.repeats)
        mine = item_values(packed, out.row_to_col.copy_to_host())
        theirs = item_values(packed, ref.row_to_col.copy_to_host())
        row["max_rel_diff_vs_block"] = float(np.max(np.abs(mine - theirs) / np.maximum(1.0, np.abs(theirs))))
        if torch is not None:
            tensor = torch.from_numpy(costs).cuda()
            batch_linear_assignment(tensor)
            row["torch_ms"], _ = timed(lambda: batch_linear_assignment(tensor), torch.cuda.synchronize, args.repeats)
        print(json.dumps(row), flush=True)
        report["cases"].append(row)
    out_dir = os.environ.get("OUT")
    if out_dir:
        name = f"probe-warp-{K.WARP_COLS}x{K.WARPS_PER_BLOCK}.json"
        Path(out_dir, name).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
