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
rows, as a solver keeps a problem with more rows than columns; a thread per slice of a problem row,
a warp reading consecutive columns of one device row, then a merge of each row's slices: one thread
per whole row left a GPU nearly idle, 6-14 ms for 27M entries against 0.5 ms in the problem's
layout; a square copy is read in the problem's layout, as no solver transposes one). float64, or
float32 holding the costs exactly. The cpu loops (the same arguments) let a test run the same check
on host arrays.
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
def column_slice(costs, i, lo, hi, u, v_check, v_floor):
    """Entries j = lo .. hi - 1 of problem row i, kept transposed (device column i)."""
    m = costs.shape[0]
    best, worst, at, checksum = math.inf, -math.inf, -1, np.uint64(0)
    for j in range(lo, min(hi, m)):
        best, worst, at, checksum = entry_step(float(costs[j, i]), i, j, m, u, v_check, v_floor,
                                               best, worst, at, checksum)
    return best, worst, at, checksum


@register_jitable
def merge_slices(i, p_floor, p_worst, p_at, p_sum):
    """Problem row i's slices, in order, into its (floor, worst, at, checksum share): the same as
    one pass over the row (a minimum, the first j of the largest violation, a wrapping sum)."""
    best, worst, at, checksum = math.inf, -math.inf, -1, np.uint64(0)
    for s in range(p_floor.shape[0]):
        best = min(best, p_floor[s, i])
        worst, at = merge_violations(worst, at, p_worst[s, i], p_at[s, i])
        checksum += p_sum[s, i]
    return best, worst, at, checksum


@register_jitable
def unpacked(duals, n, m):
    """(u, v_check, v_floor) of an n-row, m-column problem from the one array they travel in."""
    return duals[:n], duals[n:n + m], duals[n + m:n + 2 * m]


HALF = np.uint64(1 << 32)


@register_jitable
def store(i, n, best, worst, at, checksum, results):
    """Problem row i's results (of n rows) into the one float64 array read back, a part of n each:
    floor, worst, the worst's column and the checksum share's low and high 32 bits (each exact as
    a float64)."""
    results[i] = best
    results[n + i] = worst
    results[2 * n + i] = at
    results[3 * n + i] = float(checksum % HALF)
    results[4 * n + i] = float(checksum // HALF)


RESULT_PARTS = 5  # store's parts


# ---------------------------------------------------------------------------------------------
# the loops: the problem's layout (a block per row) and its transpose (a thread per problem row)

@njit(cache=True, parallel=True)
def rows_cpu(costs, duals, results):
    n, m = costs.shape
    u, v_check, v_floor = unpacked(duals, n, m)
    for i in prange(n):
        best, worst, at, checksum = row_part(costs, i, 0, 1, u, v_check, v_floor)
        store(i, n, best, worst, at, checksum, results)


@cuda_kernel
def rows_cuda(costs, duals, results):
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    u, v_check, v_floor = unpacked(duals, costs.shape[0], costs.shape[1])
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
        store(i, costs.shape[0], s_best[0], s_bad[0], s_at[0], s_sum[0], results)


ROWS = Kernel("certify_rows", rows_cpu, rows_cuda, BLOCK_PER_ITEM, threads=ROW_THREADS)


# The transposed layout: one thread per problem row would leave most of a GPU idle (3000 rows are
# 94 warps), so each row is cut into slices of slice_len entries, a thread per (slice, row), read
# coalesced (a warp: one device row, consecutive columns); a second step merges each row's slices.

@njit(cache=True, parallel=True)
def column_slices_cpu(costs, duals, slice_len, p_floor, p_worst, p_at, p_sum):
    m, n = costs.shape
    u, v_check, v_floor = unpacked(duals, n, m)
    for i in prange(n):
        for s in range(p_floor.shape[0]):
            p_floor[s, i], p_worst[s, i], p_at[s, i], p_sum[s, i] = column_slice(
                costs, i, s * slice_len, (s + 1) * slice_len, u, v_check, v_floor)


@cuda_kernel
def column_slices_cuda(costs, duals, slice_len, p_floor, p_worst, p_at, p_sum):
    # a 1-D grid over (slice, row), rows fastest: a warp reads consecutive columns of a device row
    # (a 2-D grid would cap the rows at 65535 blocks of its y dimension)
    n = costs.shape[1]
    u, v_check, v_floor = unpacked(duals, n, costs.shape[0])
    idx = cuda.grid(1)
    if idx < p_floor.shape[0] * n:
        s = idx // n
        i = idx - s * n
        p_floor[s, i], p_worst[s, i], p_at[s, i], p_sum[s, i] = column_slice(
            costs, i, s * slice_len, (s + 1) * slice_len, u, v_check, v_floor)


COLUMN_SLICES = Kernel("certify_column_slices", column_slices_cpu, column_slices_cuda, EACH)


@njit(cache=True, parallel=True)
def merge_slices_cpu(p_floor, p_worst, p_at, p_sum, results):
    for i in prange(p_floor.shape[1]):
        best, worst, at, checksum = merge_slices(i, p_floor, p_worst, p_at, p_sum)
        store(i, p_floor.shape[1], best, worst, at, checksum, results)


@cuda_kernel
def merge_slices_cuda(p_floor, p_worst, p_at, p_sum, results):
    i = cuda.grid(1)
    if i < p_floor.shape[1]:
        best, worst, at, checksum = merge_slices(i, p_floor, p_worst, p_at, p_sum)
        store(i, p_floor.shape[1], best, worst, at, checksum, results)


MERGE_SLICES = Kernel("certify_merge_slices", merge_slices_cpu, merge_slices_cuda, EACH)

BUSY_THREADS = 1 << 18   # (slice, row) threads that keep a large GPU busy
MIN_SLICE = 64           # entries a thread reads at least (fewer: the merge costs more than it saves)


def slice_length(n_rows: int, n_cols: int) -> int:
    """Entries per slice of a transposed problem row: enough slices for BUSY_THREADS threads, none
    shorter than MIN_SLICE (a row of at most MIN_SLICE entries is one slice)."""
    slices = max(1, min(-(-BUSY_THREADS // max(n_rows, 1)), -(-n_cols // MIN_SLICE)))
    return max(1, -(-n_cols // slices))


def scan_columns(launcher, device_costs, duals, results, slice_len: int) -> tuple:
    """The transposed copy's scan into ``results`` (as ``store`` leaves them): slices, then their
    merge. Returns the slices' arrays (to be held while the GPU may still read them)."""
    n_cols, n_rows = (int(x) for x in device_costs.shape)
    slices = max(1, -(-n_cols // slice_len))
    partial = [launcher.empty_matrix(slices, n_rows, t) for t in (np.float64, np.float64, np.int64, np.uint64)]
    launcher.launch(COLUMN_SLICES, slices * n_rows, device_costs, duals, slice_len, *partial)
    launcher.launch(MERGE_SLICES, n_rows, *partial, results)
    return tuple(partial)


# ---------------------------------------------------------------------------------------------
# the host side

def device_backend() -> str:
    """The launcher of the arrays a GPU solver hands over in this process."""
    from .targets import simulator_enabled
    return "cudasim" if simulator_enabled() else "cuda"


class PendingScan:
    """A scan launched on the device: ``result()`` reads it (waiting for the GPU) and compares the
    copy's checksum. Launching first lets the certificate's host steps run while the GPU scans."""

    def __init__(self, launcher, results, n_rows: int, checksum: int, inputs=()):
        self._launcher, self._results, self._n_rows, self._checksum = launcher, results, n_rows, checksum
        self._inputs = inputs  # device arrays the scan reads, held until it is read

    def result(self):
        """((floor, worst, at) per problem row, "") or (None, why not)."""
        n = self._n_rows
        size = RESULT_PARTS * n
        try:  # into this thread's pinned buffer (the start of it), then out of it before anything reuses it
            read = self._launcher.read(self._results, self._launcher.scratch(self._results.size, np.float64)[:size])
        except Exception as exc:  # a device fault: the host still certifies
            return None, f"the check on the GPU failed ({type(exc).__name__}: {exc})"
        floor, worst, at, low, high = read.reshape(RESULT_PARTS, n)
        sums = low.astype(np.uint64) + (high.astype(np.uint64) << np.uint64(32))
        if int(sums.sum(dtype=np.uint64)) != self._checksum:
            return None, "the GPU's copy of the costs no longer matches the problem (checksum)"
        return (floor.copy(), worst.copy(), at.astype(np.int64)), ""


def start_dual_rows(device_costs, shape: tuple[int, int], checksum: int, u: np.ndarray, v_check: np.ndarray,
                    v_floor: np.ndarray, backend: str | None = None):
    """(PendingScan, "") with the scan of the device copy ``device_costs`` of a problem of ``shape``
    whose costs have ``checksum`` launched; or (None, why not) when its shape or type is not one of
    the problem's layouts or the launch fails."""
    n, m = shape
    layout = tuple(int(x) for x in getattr(device_costs, "shape", ()))
    if layout not in ((n, m), (m, n)):
        return None, f"the GPU's copy has shape {layout}, not the problem's {shape} or its transpose"
    if np.dtype(getattr(device_costs, "dtype", None)) not in (np.float64, np.float32):
        return None, f"the GPU's copy holds {device_costs.dtype}, not float64 or float32"
    from .targets import launcher_for
    try:
        launcher = launcher_for(backend or device_backend())
        # one copy in and one out, into arrays kept between certificates: an allocation and a
        # pageable copy of 40K duals took 0.2 ms on an H200, as much as the scan; the copy is of
        # the duals alone into the kept array's start (small copies of its spare room ran near
        # 3 GB/s), by the driver (a device slice to copy into cost another 30-50 us)
        size = n + 2 * m
        duals = launcher.kept(size, np.float64)
        stage = launcher.scratch(duals.size, np.float64)  # page-locked on a GPU
        for part, start in ((u, 0), (v_check, n), (v_floor, n + m)):
            stage[start:start + part.size] = part
        launcher.write(duals, stage[:size])
        results = launcher.kept(RESULT_PARTS * n, np.float64)
        inputs = (device_costs, duals)
        if layout == (n, m):
            launcher.launch(ROWS, n, device_costs, duals, results)
        else:
            inputs += scan_columns(launcher, device_costs, duals, results, slice_length(n, m))
    except Exception as exc:  # a device fault or a missing toolkit: the host still certifies
        return None, f"the check on the GPU failed ({type(exc).__name__}: {exc})"
    return PendingScan(launcher, results, n, checksum, inputs), ""


def dual_rows_on_device(device_costs, shape: tuple[int, int], checksum: int, u: np.ndarray,
                        v_check: np.ndarray, v_floor: np.ndarray, backend: str | None = None):
    """((floor, worst, at) per problem row, "") from the device copy ``device_costs`` (see
    start_dual_rows), or (None, why not): the launch and its read at once."""
    pending, why = start_dual_rows(device_costs, shape, checksum, u, v_check, v_floor, backend)
    return pending.result() if pending is not None else (None, why)


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
