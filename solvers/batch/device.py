"""Batches of small linear assignment problems on the GPU: upload, one launch, read back.

``solve_packed_cuda(packed)`` / ``solve_packed_cudasim(packed)`` take a packed batch (the fields of
``solvers.batch.inputs.PackedBatch``: flat ``costs`` with each item row-major and oriented so
rows <= cols, ``offsets``, ``rows``, ``cols``, ``row_offsets``, ``col_offsets``) and return the host
``PackedSolution`` fields: ``row_to_col`` (int64, by row_offsets, oriented column), ``u`` (float64,
by row_offsets), ``v`` (float64, by col_offsets), ``iterations`` (int64 per item: search steps) and
``status`` (int8 per item: 0 solved, 1 infeasible). ``solve_packed_device`` is the same on arrays
already on the GPU (anything with ``__cuda_array_interface__``: a numba device array, a torch or
CuPy tensor), returning device arrays, so a batch made on the device is never copied to the host.
``certify_packed_device`` checks a solution on the device in one launch (``device_kernels.CERTIFY``;
``certify_solution`` is the same for host arrays, with host arrays back).

The kernels (``device_kernels``) run one block per item; they are launched through the project's
launcher (``solvers.targets.launcher_for``: Kernel shape BLOCK_PER_ITEM, the block size of the
target, small blocks under the simulator), which fits them as they are. The simulator is a
per-process choice (NUMBA_ENABLE_CUDASIM=1 before numba is imported): ``solve_packed_cudasim``
only runs in such a process.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DeviceSolution:
    """The solver's outputs, as arrays of the target (device arrays on a GPU)."""

    row_to_col: object
    u: object
    v: object
    iterations: object
    status: object


@dataclass
class DeviceCertificate:
    """Per item: ``violation`` (largest violation of dual feasibility, complementary slackness or
    v <= 0; +inf for a non-finite dual), ``value`` (sum of the assigned costs, float64), ``dual``
    (sum of u and v, float64: equal to ``value`` at an optimum up to rounding), ``scale`` (largest
    |c| over finite pairs, |u|, |v|), ``valid`` (int8: 1 when every row has one in-range column on a
    finite pair and no column is taken twice)."""

    violation: object
    value: object
    dual: object
    scale: object
    valid: object


@dataclass
class _PackedSolution:
    """Stand-in for ``solvers.batch.packing.PackedSolution`` where that module is absent."""

    row_to_col: np.ndarray
    u: np.ndarray
    v: np.ndarray
    iterations: np.ndarray
    status: np.ndarray


def _solution_class():
    try:
        from .packing import PackedSolution
    except ImportError:
        return _PackedSolution
    return PackedSolution


def _launcher(backend: str):
    from ..targets import configure_numba
    from ..targets.launcher import launcher_for
    configure_numba()
    return launcher_for(backend)


def _index_array(launcher, array, dtype=np.int64):
    """A target int64 array: a host array is uploaded, a device array taken as it is."""
    if hasattr(array, "__cuda_array_interface__") and launcher.device and not launcher.simulated:
        from numba import cuda
        array = cuda.as_cuda_array(array)
        if array.dtype != dtype:
            raise TypeError(f"index arrays on the device must be {np.dtype(dtype).name}, not {array.dtype}")
        return array
    return launcher.upload(np.asarray(array), dtype)


def _index_host(device) -> np.ndarray:
    return device.copy_to_host()


def _last(host_or_device, device, batch: int) -> int:
    """The batch's total (the prefix sum's last entry), read from the host array when there is one."""
    if not hasattr(host_or_device, "__cuda_array_interface__"):
        return int(np.asarray(host_or_device)[batch])
    return int(device[batch:batch + 1].copy_to_host()[0])


def _costs_array(launcher, costs):
    if hasattr(costs, "__cuda_array_interface__") and not launcher.simulated:
        from numba import cuda
        costs = cuda.as_cuda_array(costs)
        if costs.ndim != 1:
            costs = costs.reshape(costs.size)
        if costs.dtype not in (np.float32, np.float64):
            raise TypeError(f"costs must be float32 or float64, not {costs.dtype}")
        return costs
    costs = np.asarray(costs).reshape(-1)
    if costs.dtype not in (np.float32, np.float64):
        costs = costs.astype(np.float64)
    return launcher.upload(costs)


def solve_packed_device(costs_device, offsets, rows, cols, row_offsets, col_offsets, *, backend: str = "cuda",
                        launcher=None, warp_cols: int | None = None) -> DeviceSolution:
    """Solve every item of a packed batch whose ``costs`` are (or will be put) on the device.
    ``rows``/``cols`` etc. may be host (numpy) or device arrays; host arrays are small and uploaded.
    Items of at most ``warp_cols`` columns (default ``device_kernels.WARP_COLS``, never more) are
    solved one warp each, wider ones one block each (0: every item by a block).
    Returns the target's arrays (not synchronised: a readback or ``cuda.synchronize()`` waits)."""
    from . import device_kernels as K

    launcher = launcher or _launcher(backend)
    host_rows = np.asarray(rows) if not hasattr(rows, "__cuda_array_interface__") else None
    host_cols = np.asarray(cols) if not hasattr(cols, "__cuda_array_interface__") else None
    if host_rows is not None and host_cols is not None and np.any(host_rows > host_cols):
        raise ValueError("every item must be oriented with rows <= cols")
    costs = _costs_array(launcher, costs_device)
    offsets_d = _index_array(launcher, offsets)
    rows_d = _index_array(launcher, rows)
    cols_d = _index_array(launcher, cols)
    row_off_d = _index_array(launcher, row_offsets)
    col_off_d = _index_array(launcher, col_offsets)
    batch = int(rows_d.shape[0]) if host_rows is None else len(host_rows)
    total_rows = _last(row_offsets, row_off_d, batch)
    total_cols = _last(col_offsets, col_off_d, batch)
    if host_cols is None:
        host_cols = _index_host(cols_d)
    narrow = host_cols <= min(K.WARP_COLS, K.WARP_COLS if warp_cols is None else int(warp_cols))
    widest = int(host_cols.max()) if len(host_cols) else 0
    scratch = total_cols if widest > K.SMEM_COLS else 1  # global column state for the widest items only
    row_to_col = launcher.empty(max(total_rows, 1), np.int64)
    u = launcher.empty(max(total_rows, 1), np.float64)
    v = launcher.empty(max(total_cols, 1), np.float64)
    iterations = launcher.empty(max(batch, 1), np.int64)
    status = launcher.empty(max(batch, 1), np.int8)
    items = np.arange(batch, dtype=np.int64)
    wide_items = items[~narrow]
    narrow_items = items[narrow]
    if len(wide_items):  # one block per item, launched first: the longest searches start early
        g_dist = launcher.empty(scratch, np.float64)
        g_path = launcher.empty(scratch, np.int32)
        g_r4c = launcher.empty(scratch, np.int32)
        g_seen = launcher.empty(scratch, np.int32)
        launcher.launch(K.SOLVE, len(wide_items), costs, offsets_d, rows_d, cols_d, row_off_d, col_off_d,
                        launcher.upload(wide_items), row_to_col, u, v, iterations, status, g_dist, g_path, g_r4c,
                        g_seen, np.int32(K.TREE if launcher.simulated else K.BLOCK_MODE))
    if len(narrow_items):  # one warp per item (under the simulator: one block per item)
        per_block = 1 if launcher.simulated else K.WARPS_PER_BLOCK
        launcher.launch(K.SOLVE_WARP, (len(narrow_items) + per_block - 1) // per_block, costs, offsets_d, rows_d,
                        cols_d, row_off_d, col_off_d, launcher.upload(narrow_items), row_to_col, u, v, iterations,
                        status, np.int32(K.TREE if launcher.simulated else K.WARP_MODE))
    return DeviceSolution(row_to_col[:total_rows], u[:total_rows], v[:total_cols], iterations[:batch],
                          status[:batch])


def _solve_packed(packed, backend: str, **options):
    launcher = _launcher(backend)
    out = solve_packed_device(packed.costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                              packed.col_offsets, launcher=launcher, **options)
    return _solution_class()(row_to_col=_read(launcher, out.row_to_col, np.int64),
                             u=_read(launcher, out.u, np.float64), v=_read(launcher, out.v, np.float64),
                             iterations=_read(launcher, out.iterations, np.int64),
                             status=_read(launcher, out.status, np.int8))


def _read(launcher, array, dtype):
    if array.shape[0] == 0:
        return np.zeros(0, dtype)
    return launcher.read(array)


def solve_packed_cuda(packed, **options):
    """Solve a packed batch on the GPU (costs uploaded from the host); ``options`` as for
    ``solve_packed_device``."""
    return _solve_packed(packed, "cuda", **options)


def solve_packed_cudasim(packed, **options):
    """The same kernels under numba's CUDA simulator (a process started with NUMBA_ENABLE_CUDASIM=1)."""
    return _solve_packed(packed, "cudasim", **options)


def certify_packed_device(costs_device, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, *,
                          backend: str = "cuda", launcher=None) -> DeviceCertificate:
    """Check a solution of every item in one launch (one block per item); returns the target's
    arrays (``DeviceCertificate``). Host arrays are uploaded; device arrays are used as they are."""
    from . import device_kernels as K

    launcher = launcher or _launcher(backend)
    costs = _costs_array(launcher, costs_device)
    offsets_d = _index_array(launcher, offsets)
    rows_d = _index_array(launcher, rows)
    cols_d = _index_array(launcher, cols)
    row_off_d = _index_array(launcher, row_offsets)
    col_off_d = _index_array(launcher, col_offsets)
    batch = len(rows) if not hasattr(rows, "__cuda_array_interface__") else int(rows_d.shape[0])
    r2c = _index_array(launcher, row_to_col)
    u_d = _dual_array(launcher, u)
    v_d = _dual_array(launcher, v)
    total_cols = _last(col_offsets, col_off_d, batch)
    taken = launcher.zeros(max(total_cols, 1), np.int32)
    violation = launcher.empty(max(batch, 1), np.float64)
    value = launcher.empty(max(batch, 1), np.float64)
    dual = launcher.empty(max(batch, 1), np.float64)
    scale = launcher.empty(max(batch, 1), np.float64)
    valid = launcher.empty(max(batch, 1), np.int8)
    launcher.launch(K.CERTIFY, batch, costs, offsets_d, rows_d, cols_d, row_off_d, col_off_d, r2c, u_d, v_d, taken,
                    violation, value, dual, scale, valid)
    return DeviceCertificate(violation[:batch], value[:batch], dual[:batch], scale[:batch], valid[:batch])


def _dual_array(launcher, array):
    if hasattr(array, "__cuda_array_interface__") and not launcher.simulated:
        from numba import cuda
        return cuda.as_cuda_array(array)
    return launcher.upload(np.asarray(array), np.float64)


def certify_solution(packed, solution, backend: str = "cuda") -> DeviceCertificate:
    """``certify_packed_device`` for a packed batch and a solution; host (numpy) arrays back. (Not
    named ``certify_packed``: that name, on a backend module, is the host's hook for a certificate in
    ``certify_batch``'s format, with its tolerance rules applied.)"""
    launcher = _launcher(backend)
    cert = certify_packed_device(packed.costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                                 packed.col_offsets, solution.row_to_col, solution.u, solution.v, launcher=launcher)
    return DeviceCertificate(*(_read(launcher, getattr(cert, name), None)
                               for name in ("violation", "value", "dual", "scale", "valid")))
