"""The certificate's dual scan run where a GPU solver left the costs: on its device copy.

A dense assignment solved on a GPU leaves the cost matrix in device memory; reading it there is one
pass at the GPU's bandwidth instead of one on the host. For every problem row i, in one read:
u_i = min_j (c_ij - v_floor_j) rounded down exactly, the largest u_i + v_check_j - c_ij with the
first j attaining it (the solver's duals' worst violation), and the row's share of the costs'
checksum (solvers.dual_steps). The per-entry steps are the host's (solvers.dual_steps: TwoSum, no
multiplications), so the results are the host check's bit for bit.

Independent of the solvers: nothing here imports solver code, and the device copy is not trusted.
A solver runs on the same device array and could have overwritten it, so the checksum is
recomputed over it in the same read and compared with the one the validating pass made of the
problem; on a mismatch, or anything unexpected, the caller checks on the host and says why
(solvers.certify also rechecks a few rows on the host against these results).

Layouts: the problem's (rows x cols, one block per row, read coalesced) or its transpose (cols x
rows, as a solver keeps a problem with more rows than columns; one thread per problem row, a warp
reading consecutive columns of one device row; a square copy is read in the problem's layout, as
no solver transposes one). float64, or float32 holding the costs exactly.
The cpu loops (the same arguments) let a test run the same check on host arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import float64, int64, njit, prange, uint64
from numba.extending import register_jitable

from .dual_steps import checksum_term, float64_bits, floor_step, merge_violations, violation_step
from .targets.cuda_jit import cuda_kernel
from .targets.geometry import THREADS_PER_BLOCK
from .targets.kernel import BLOCK_PER_ITEM, EACH, Kernel

cuda = None  # numba.cuda, bound when a kernel here is first built (solvers.targets.cuda_jit)

ROW_THREADS = THREADS_PER_BLOCK  # threads reading one row (a power of two; sizes the shared arrays)


# ---------------------------------------------------------------------------------------------
# the body (every target)

@register_jitable
def entry_step(c, i, j, m, u, v_check, v_floor, best, worst, at, checksum):
    """Problem entry (i, j) of an m-column problem, cost c (as float64), into a row's running
    (u_i rounded down, worst violation, its j, checksum share)."""
    checksum += checksum_term(float64_bits(c), i * m + j)
    if c != math.inf:
        worst, at = violation_step(u[i] + v_check[j] - c, j, worst, at)
        best = floor_step(c, v_floor[j], best)
    return best, worst, at, checksum


@register_jitable
def row_part(costs, i, start, stride, u, v_check, v_floor):
    """Entries j = start, start + stride, ... of problem row i of ``costs`` in the problem's layout."""
    m = costs.shape[1]
    best, worst, at, checksum = math.inf, -math.inf, -1, np.uint64(0)
    for j in range(start, m, stride):
        best, worst, at, checksum = entry_step(float(costs[i, j]), i, j, m, u, v_check, v_floor,
                                               best, worst, at, checksum)
    return best, worst, at, checksum


@register_jitable
def column_whole(costs, i, u, v_check, v_floor):
    """Problem row i of ``costs`` kept transposed (device column i), all of it."""
    m = costs.shape[0]
    best, worst, at, checksum = math.inf, -math.inf, -1, np.uint64(0)
    for j in range(m):
        best, worst, at, checksum = entry_step(float(costs[j, i]), i, j, m, u, v_check, v_floor,
                                               best, worst, at, checksum)
    return best, worst, at, checksum


# ---------------------------------------------------------------------------------------------
# the loops: the problem's layout (a block per row) and its transpose (a thread per problem row)

@njit(cache=True, parallel=True)
def rows_cpu(costs, u, v_check, v_floor, floor, worst, at, sums):
    for i in prange(costs.shape[0]):
        floor[i], worst[i], at[i], sums[i] = row_part(costs, i, 0, 1, u, v_check, v_floor)


@cuda_kernel
def rows_cuda(costs, u, v_check, v_floor, floor, worst, at, sums):
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    best, bad, bad_at, checksum = row_part(costs, i, t, nt, u, v_check, v_floor)
    s_best = cuda.shared.array(ROW_THREADS, float64)
    s_bad = cuda.shared.array(ROW_THREADS, float64)
    s_at = cuda.shared.array(ROW_THREADS, int64)
    s_sum = cuda.shared.array(ROW_THREADS, uint64)
    s_best[t] = best
    s_bad[t] = bad
    s_at[t] = bad_at
    s_sum[t] = checksum
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            s_best[t] = min(s_best[t], s_best[t + step])
            s_bad[t], s_at[t] = merge_violations(s_bad[t], s_at[t], s_bad[t + step], s_at[t + step])
            s_sum[t] = s_sum[t] + s_sum[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        floor[i] = s_best[0]
        worst[i] = s_bad[0]
        at[i] = s_at[0]
        sums[i] = s_sum[0]


ROWS = Kernel("certify_rows", rows_cpu, rows_cuda, BLOCK_PER_ITEM, threads=ROW_THREADS)


@njit(cache=True, parallel=True)
def columns_cpu(costs, u, v_check, v_floor, floor, worst, at, sums):
    for i in prange(costs.shape[1]):
        floor[i], worst[i], at[i], sums[i] = column_whole(costs, i, u, v_check, v_floor)


@cuda_kernel
def columns_cuda(costs, u, v_check, v_floor, floor, worst, at, sums):
    i = cuda.grid(1)
    if i < costs.shape[1]:
        floor[i], worst[i], at[i], sums[i] = column_whole(costs, i, u, v_check, v_floor)


COLUMNS = Kernel("certify_columns", columns_cpu, columns_cuda, EACH)


# ---------------------------------------------------------------------------------------------
# the host side

def device_backend() -> str:
    """The launcher of the arrays a GPU solver hands over in this process."""
    from .targets import simulator_enabled
    return "cudasim" if simulator_enabled() else "cuda"


def dual_rows_on_device(device_costs, shape: tuple[int, int], checksum: int, u: np.ndarray,
                        v_check: np.ndarray, v_floor: np.ndarray, backend: str | None = None):
    """((floor, worst, at) per problem row, "") from the device copy ``device_costs`` of a problem
    of ``shape`` whose costs have ``checksum``; or (None, why not) when its shape or type is not
    one of the problem's layouts, the launch fails, or the copy no longer holds the costs."""
    n, m = shape
    layout = tuple(int(x) for x in getattr(device_costs, "shape", ()))
    if layout == (n, m):
        kernel = ROWS
    elif layout == (m, n):
        kernel = COLUMNS
    else:
        return None, f"the GPU's copy has shape {layout}, not the problem's {shape} or its transpose"
    if np.dtype(getattr(device_costs, "dtype", None)) not in (np.float64, np.float32):
        return None, f"the GPU's copy holds {device_costs.dtype}, not float64 or float32"
    from .targets import launcher_for
    try:
        launcher = launcher_for(backend or device_backend())
        floor, worst = launcher.empty(n, np.float64), launcher.empty(n, np.float64)
        at, sums = launcher.empty(n, np.int64), launcher.empty(n, np.uint64)
        args = (device_costs, launcher.upload(u, np.float64), launcher.upload(v_check, np.float64),
                launcher.upload(v_floor, np.float64), floor, worst, at, sums)
        launcher.launch(kernel, n, *args)
        floor, worst, at, sums = (launcher.read(a) for a in (floor, worst, at, sums))
    except Exception as exc:  # a device fault or a missing toolkit: the host still certifies
        return None, f"the check on the GPU failed ({type(exc).__name__}: {exc})"
    if int(sums.sum(dtype=np.uint64)) != checksum:
        return None, "the GPU's copy of the costs no longer matches the problem (checksum)"
    return (floor, worst, at), ""


def warm_up(backend: str | None = None) -> None:
    """Compile (or load) both kernels for both dtypes a solver keeps (small problems never reach
    them: a certificate checks on the GPU from DEVICE_MIN_ENTRIES entries)."""
    from .targets import launcher_for
    launcher = launcher_for(backend or device_backend())
    costs = np.zeros((2, 3))  # rows < cols: the problem's layout; its transpose: rows > cols
    for dtype in (np.float64, np.float32):
        for copy in (costs, np.ascontiguousarray(costs.T)):
            dual_rows_on_device(launcher.upload_matrix(copy, dtype), (2, 3), 0, np.zeros(2), np.zeros(3),
                                np.zeros(3), backend)
