"""Issue 15, part 2: batches of small linear assignment problems on the GPU.

Times, in one run on one GPU: matchscope's batch kernels (solvers.batch.device: one block per item,
shortest augmenting paths) with the costs already on the device and from host numpy arrays,
torch-linear-assignment (Triton, CUDA torch tensors; skipped when not importable) and a scipy loop,
on 1000 x 256 x 256 float32, 10000 x 100 x 100, rectangular 10000 x 100 x 300 and a ragged batch
of 1000 square items with n in [10, 500] (native per-item sizes for matchscope; torch gets them padded
to 500 x 500 with +inf between an item's own rows/columns and the padding, 0 among the padding, which
leaves each item's optimum unchanged). Every item's value is checked against scipy's (the scipy loop
runs on every item unless --scipy-sample N, then its time is extrapolated and the table says so), and
matchscope's answers against its device certificate.

Warm-up first (the first call's time, compilation or the kernel cache's load included, is reported
apart), then the median of --repeats runs, ``cuda.synchronize()`` (torch: ``torch.cuda.synchronize()``)
before and after each timed run. Prints a markdown table; ``--out X.json`` writes the numbers.

    PYTHONPATH=. python benchmarks/bench_batch_gpu.py --out batch_gpu.json
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pack_uniform(C: np.ndarray) -> SimpleNamespace:
    """A (B, n, m) array as the packed layout (n <= m)."""
    B, n, m = C.shape
    ar = np.arange(B + 1, dtype=np.int64)
    return SimpleNamespace(costs=np.ascontiguousarray(C).reshape(-1), offsets=ar * n * m,
                           rows=np.full(B, n, np.int64), cols=np.full(B, m, np.int64),
                           transposed=np.zeros(B, bool), row_offsets=ar * n, col_offsets=ar * m)


def pack_ragged(mats) -> SimpleNamespace:
    sizes = np.array([M.size for M in mats], np.int64)
    rows = np.array([M.shape[0] for M in mats], np.int64)
    cols = np.array([M.shape[1] for M in mats], np.int64)
    prefix = lambda a: np.concatenate([[0], np.cumsum(a)]).astype(np.int64)
    return SimpleNamespace(costs=np.concatenate([M.ravel() for M in mats]), offsets=prefix(sizes), rows=rows,
                           cols=cols, transposed=np.zeros(len(mats), bool), row_offsets=prefix(rows),
                           col_offsets=prefix(cols))


def item_costs(packed, b):
    n, m = int(packed.rows[b]), int(packed.cols[b])
    return packed.costs[packed.offsets[b]:packed.offsets[b + 1]].reshape(n, m)


def values_of(packed, row_to_col) -> np.ndarray:
    """Each item's value (float64 sum of its assigned costs, in row order) from flat column indices."""
    out = np.empty(len(packed.rows))
    for b in range(len(packed.rows)):
        n = int(packed.rows[b])
        cols = row_to_col[packed.row_offsets[b]:packed.row_offsets[b] + n]
        out[b] = item_costs(packed, b).astype(np.float64)[np.arange(n), cols].sum() if n else 0.0
    return out


def timed(fn, sync, repeats):
    times = []
    result = None
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        result = fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def scipy_loop(packed, sample):
    from scipy.optimize import linear_sum_assignment
    B = len(packed.rows)
    chosen = np.arange(B) if sample is None or sample >= B else np.linspace(0, B - 1, sample).astype(np.int64)
    values = np.full(B, np.nan)
    start = time.perf_counter()
    for b in chosen:
        C = item_costs(packed, b).astype(np.float64)
        r, c = linear_sum_assignment(C)
        values[b] = C[r, c].sum()
    seconds = time.perf_counter() - start
    return values, chosen, seconds * B / len(chosen), len(chosen) < B


def compare(mine: np.ndarray, ref: np.ndarray, chosen) -> dict:
    a, b = mine[chosen], ref[chosen]
    rel = np.abs(a - b) / np.maximum(1.0, np.abs(b))
    return {"checked": int(len(chosen)), "equal": int(np.sum(a == b)),
            "within_1e-12": int(np.sum(rel <= 1e-12)), "max_rel_diff": float(rel.max()) if len(rel) else 0.0}


def device_kernels():
    from solvers.batch import device_kernels as K
    return K


def kernel_resources():
    """Registers per thread and shared memory per block of each compiled solver kernel."""
    out = {}
    K = device_kernels()
    for name in ("solve_batch_cuda", "solve_warp_cuda", "certify_batch_cuda"):
        d = getattr(K, name).dispatcher
        try:
            out[name] = {"regs": {str(k): v for k, v in d.get_regs_per_thread().items()},
                         "shared": {str(k): v for k, v in d.get_shared_mem_per_block().items()}}
        except Exception as exc:  # only informative
            out[name] = repr(exc)
    return out


def run_case(name, packed, torch_tensor, torch_padded_rows, args, cuda, device, host_input=None):
    B = len(packed.rows)
    print(f"\n## {name}: {B} items", flush=True)
    row = {"case": name, "items": B, "rows": [int(packed.rows.min()), int(packed.rows.max())],
           "cols": [int(packed.cols.min()), int(packed.cols.max())], "dtype": str(packed.costs.dtype)}
    sync = cuda.synchronize

    costs_d = cuda.to_device(packed.costs)
    idx = (packed.offsets, packed.rows, packed.cols, packed.row_offsets, packed.col_offsets)
    start = time.perf_counter()
    out = device.solve_packed_device(costs_d, *idx)
    sync()
    row["first_call_s"] = time.perf_counter() - start
    dev_s, dev_all, out = timed(lambda: device.solve_packed_device(costs_d, *idx), sync, args.repeats)
    row["ours_device_ms"] = dev_s * 1e3
    row["ours_device_all_ms"] = [t * 1e3 for t in dev_all]
    if int(packed.cols.min()) <= device_kernels().WARP_COLS:  # the other kernel, for the choice by size
        blk_s, _, _ = timed(lambda: device.solve_packed_device(costs_d, *idx, warp_cols=0), sync, args.repeats)
        row["ours_block_kernel_only_ms"] = blk_s * 1e3
    device.solve_packed_cuda(packed)  # untimed: the staged upload's conversion compiles (or loads) once
    sync()
    host_s, host_all, sol = timed(lambda: device.solve_packed_cuda(packed), sync, max(3, args.repeats // 2))
    row["ours_host_ms"] = host_s * 1e3
    if host_input is not None:  # the user's clock: solvers.solve_batch from numpy, checked, certified, unpacked
        import solvers
        try:
            solvers.solve_batch(host_input, backend="cuda")
            e2e_s, _, result = timed(lambda: solvers.solve_batch(host_input, backend="cuda"), sync,
                                     max(3, args.repeats // 2))
            row["ours_e2e_ms"] = e2e_s * 1e3
            row["ours_e2e_all_certified"] = bool(result.all_certified)
            row["ours_e2e_seconds"] = dict(result.seconds)
        except Exception as exc:  # reported in the row; the other columns still count
            row["ours_e2e_error"] = f"{type(exc).__name__}: {exc}"
            print(row["ours_e2e_error"], flush=True)
    status = out.status.copy_to_host()
    iterations = out.iterations.copy_to_host()
    row["status_counts"] = {str(k): int(v) for k, v in zip(*np.unique(status, return_counts=True))}
    row["iterations"] = {"mean": float(iterations.mean()), "max": int(iterations.max())}
    cert_s, _, cert = timed(lambda: device.certify_packed_device(costs_d, *idx, out.row_to_col, out.u, out.v),
                            sync, 3)
    row["certify_ms"] = cert_s * 1e3
    viol = cert.violation.copy_to_host()
    scale = cert.scale.copy_to_host()
    valid = cert.valid.copy_to_host()
    row["certified"] = int(np.sum((valid == 1) & (viol <= 1e-12 * np.maximum(1.0, scale) * packed.cols.max())))
    row["max_violation"] = float(viol.max())
    ours = values_of(packed, out.row_to_col.copy_to_host())

    ref, chosen, scipy_s, extrapolated = scipy_loop(packed, args.scipy_sample)
    row["scipy_loop_s"] = scipy_s
    row["scipy_extrapolated"] = extrapolated
    row["ours_vs_scipy"] = compare(ours, ref, chosen)

    if torch_tensor is not None:
        import torch
        from torch_linear_assignment import batch_linear_assignment
        tsync = torch.cuda.synchronize
        start = time.perf_counter()
        assign = batch_linear_assignment(torch_tensor)
        tsync()
        row["torch_first_call_s"] = time.perf_counter() - start
        t_s, t_all, assign = timed(lambda: batch_linear_assignment(torch_tensor), tsync, args.repeats)
        row["torch_ms"] = t_s * 1e3
        row["torch_all_ms"] = [t * 1e3 for t in t_all]
        a = assign.cpu().numpy()
        flat = np.concatenate([a[b, :int(packed.rows[b])] for b in range(B)]) if torch_padded_rows else a.reshape(-1)
        row["torch_vs_scipy"] = compare(values_of(packed, flat), ref, chosen)
        if isinstance(host_input, np.ndarray):  # the same from numpy: upload, solve, assignments back
            h_s, _, _ = timed(lambda: batch_linear_assignment(torch.from_numpy(host_input).cuda()).cpu(), tsync,
                              max(3, args.repeats // 2))
            row["torch_from_numpy_ms"] = h_s * 1e3
    row["speedup_vs_torch"] = row["torch_ms"] / row["ours_device_ms"] if "torch_ms" in row else None
    print(json.dumps(row, indent=None), flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--scipy-sample", type=int, default=None,
                        help="run scipy on this many items per case (evenly spaced) and extrapolate its time")
    parser.add_argument("--cases", default="1000x256x256,10000x100x100,10000x100x300,ragged",
                        help="comma-separated subset of the cases")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)

    from solvers.targets import configure_numba
    configure_numba()
    from numba import cuda

    from solvers.batch import device
    try:
        import torch
        from torch_linear_assignment import batch_linear_assignment  # noqa: F401
        have_torch = torch.cuda.is_available()
    except ImportError as exc:
        print(f"torch-linear-assignment not importable ({exc}); its column stays empty", flush=True)
        have_torch = False

    rng = np.random.default_rng(args.seed)
    gpu = cuda.get_current_device()
    name = getattr(gpu, "name", "the CUDA simulator")
    meta = {"device": name.decode() if isinstance(name, bytes) else str(name),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "python": platform.python_version(),
            "repeats": args.repeats, "seed": args.seed}
    try:
        import subprocess
        meta["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    except OSError:
        pass
    rows = []
    for case in args.cases.split(","):
        if case == "ragged":
            sizes = rng.integers(10, 501, 1000)
            mats = [rng.random((n, n), dtype=np.float32) for n in sizes]
            packed = pack_ragged(mats)
            tensor = None
            if have_torch:
                N = int(sizes.max())
                padded = np.full((len(mats), N, N), np.inf, np.float32)
                for b, M in enumerate(mats):
                    n = M.shape[0]
                    padded[b, :n, :n] = M
                    padded[b, n:, n:] = 0.0
                tensor = torch.from_numpy(padded).cuda()
                del padded
            rows.append(run_case(f"ragged 1000 x n x n, n in [10, 500] (torch: padded to {int(sizes.max())})",
                                 packed, tensor, True, args, cuda, device, host_input=mats))
        else:
            B, n, m = (int(x) for x in case.split("x"))
            C = rng.random((B, n, m), dtype=np.float32)
            tensor = torch.from_numpy(C).cuda() if have_torch else None
            rows.append(run_case(f"{B} x {n} x {m} float32", pack_uniform(C), tensor, False, args, cuda, device,
                                 host_input=C))
        if have_torch:
            del tensor
            torch.cuda.empty_cache()

    print(f"\n# batch LAP on {meta['device']} ({meta['date']}, commit {meta.get('commit', '?')})\n")
    print("| case | ours, data on device (ms) | ours, block per item only (ms) | ours, from numpy (ms) | "
          "ours, solve_batch from numpy, certified (ms) | torch-linear-assignment (ms) | torch from numpy (ms) | "
          "scipy loop (s) | certify (ms) | values = scipy (ours / torch) | first call (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        torch_ms = f"{r['torch_ms']:.2f}" if "torch_ms" in r else "n/a"
        scipy = f"{r['scipy_loop_s']:.2f}" + (" (extrapolated)" if r["scipy_extrapolated"] else "")
        eq = f"{r['ours_vs_scipy']['equal']}/{r['ours_vs_scipy']['checked']}"
        if "torch_vs_scipy" in r:
            eq += f" / {r['torch_vs_scipy']['equal']}/{r['torch_vs_scipy']['checked']}"
        blk = f"{r['ours_block_kernel_only_ms']:.2f}" if "ours_block_kernel_only_ms" in r else "same"
        e2e = f"{r['ours_e2e_ms']:.1f}" + ("" if r["ours_e2e_all_certified"] else " (NOT all certified)") \
            if "ours_e2e_ms" in r else "n/a"
        torch_host = f"{r['torch_from_numpy_ms']:.1f}" if "torch_from_numpy_ms" in r else "n/a"
        print(f"| {r['case']} | {r['ours_device_ms']:.2f} | {blk} | {r['ours_host_ms']:.1f} | {e2e} | {torch_ms} | "
              f"{torch_host} | {scipy} | {r['certify_ms']:.2f} | {eq} | {r['first_call_s']:.1f} |")
    meta["kernels"] = kernel_resources()
    print(json.dumps(meta["kernels"]))
    Path(args.out).write_text(json.dumps({"meta": meta, "cases": rows}, indent=2))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
