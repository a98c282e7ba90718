"""Where solve_batch's time goes on a GPU, stage by stage, each ended by cuda.synchronize():
checking and uploading host costs (two passes, then the one pass that does both), the solve's
kernels, the copy's checksums, the certificate (its kernel alone, and the whole call with its
uploads and readbacks), building the BatchResult, and solve_batch itself. Medians of --repeats, ms.

    PYTHONPATH=. python benchmarks/probe_batch_stages.py [--cases 1000x256x256,10000x100x100]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def timed(fn, repeats: int):
    from numba import cuda
    times, out = [], None
    for _ in range(repeats):
        cuda.synchronize()
        start = time.perf_counter()
        out = fn()
        cuda.synchronize()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), out


def kernel_times(fn) -> dict:
    """ms per kernel name inside one call of ``fn``, by CUDA events around each launcher launch (the
    solver's two kernels are launched directly: their time is the solve stage's)."""
    from numba import cuda

    from solvers.targets.cuda import CudaLauncher
    marks = []
    plain = CudaLauncher.launch

    def timed_launch(self, kernel, size, *args):
        start, end = cuda.event(), cuda.event()
        start.record()
        plain(self, kernel, size, *args)
        end.record()
        marks.append((kernel.name, start, end))
    CudaLauncher.launch = timed_launch
    try:
        fn()
        cuda.synchronize()
    finally:
        CudaLauncher.launch = plain
    out: dict = {}
    for name, start, end in marks:
        out[name] = round(out.get(name, 0.0) + cuda.event_elapsed_time(start, end), 3)
    return out


def probe(shape, repeats: int) -> dict:
    from solvers.batch import device as D
    from solvers.batch.api import solve_batch
    from solvers.batch.inputs import prepare_batch
    from solvers.batch.result import unpack
    from solvers.targets.staged_upload import upload_flat

    costs = np.random.default_rng(0).random(shape, dtype=np.float32)
    solve_batch(costs[:4], backend="cuda")  # compile or load everything once
    row = {}
    row["check (host pass)"], batch = timed(lambda: prepare_batch(costs), repeats)
    row["upload (pinned stages)"], _ = timed(lambda: upload_flat(batch.packed.costs, np.float32), repeats)
    row["check + upload in one pass"], fused = timed(lambda: D.prepare_host(costs), repeats)
    packed = fused.packed
    row["solve kernels"], out = timed(lambda: D.solve_packed_device(packed.device_costs, packed.offsets, packed.rows,
                                                                     packed.cols, packed.row_offsets,
                                                                     packed.col_offsets), repeats)
    row["solve + readback"], solution = timed(lambda: D.solve_packed_cuda(packed), repeats)
    row["copy's checksums"], _ = timed(lambda: D.item_checksums(solution.device_costs, packed.offsets), repeats)
    row["certificate kernel (CERTIFY, one launch)"], _ = timed(lambda: D.certify_packed_device(
        solution.device_costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets, packed.col_offsets,
        solution.row_to_col, solution.u, solution.v), repeats)
    row["certificate (certify_packed, whole)"], checked = timed(lambda: D.certify_packed(packed, solution), repeats)
    row["BatchResult"], _ = timed(lambda: unpack(fused, solution, checked, "cuda", {}), repeats)
    row["solve_batch from numpy"], result = timed(lambda: solve_batch(costs, backend="cuda"), repeats)
    assert result.all_certified
    row["solve_batch's own split"] = {k: round(1e3 * v, 2) for k, v in result.seconds.items()}
    row["kernels inside solve_batch"] = kernel_times(lambda: solve_batch(costs, backend="cuda"))
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="1000x256x256,10000x100x100,10000x100x300")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from numba import cuda
    print(f"device: {cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name}")
    for case in args.cases.split(","):
        shape = tuple(int(x) for x in case.split("x"))
        print(f"\n{case} float32 (ms, median of {args.repeats})")
        for stage, ms in probe(shape, args.repeats).items():
            print(f"  {stage:45s} {ms if isinstance(ms, dict) else f'{ms:8.2f}'}")


if __name__ == "__main__":
    main()
