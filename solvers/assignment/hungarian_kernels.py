"""CUDA kernels of the GPU Hungarian algorithm (Date & Nagi 2016), and the CUDA launcher.

Each kernel is a thin wrapper: one thread (or one block, for row reductions) calls the body from
``hungarian_cpu``, so the CUDA and CPU targets run the same per-element code. Kernels are plain
functions here, compiled by the launcher on their first launch; ``_bind_cuda()`` is the only place
``numba.cuda`` is imported (a CPU run never imports it). Under the simulator the same functions
run as Python.

Launch shapes (``KINDS``): EACH = one thread per element; SINGLE = one block of SCAN_BLOCK threads
(prefix sums and reductions over at most a few hundred thousand entries: no multi-block scan
needed, one launch); ROWS = one block of ROW_BLOCK threads per row (coalesced row reductions);
ONE_ROW_BLOCK = a single such block (a loop of row reductions); MATRIX = a 2-D grid (block x =
row, block y = chunk of BLOCK columns) for the matrix-compression passes; COOPERATIVE = a grid of
BLOCK-thread blocks small enough to be co-resident (grid-wide barriers; one block under the
simulator), looping over elements with a grid stride.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np
from numba import float64, int32, int64

from ..targets import simulator_enabled
from .hungarian_cpu import (DELTA, DUALS, FOUND, FRONT, INFEAS, ITERS, KEEP_FLAGGED, LEVELS, NNZ, OVERFLOW,
                            TREE, augment_body, col_min_body, col_min_tree_rows_body, dual_classical_body,
                            dual_tree_body, expand_classical_body, expand_tree_body, is_tight, keep_entry,
                            reset_search_body, reverse_body, row_min_part)

cuda = None  # numba.cuda, bound by _bind_cuda(); a module global so the simulator can swap it
compact_block = None  # device functions compiled from _compact_block / _min_block by _bind_cuda()
min_block = None

# The simulator runs one Python thread per CUDA thread: keep its blocks tiny.
_SIM = simulator_enabled()
BLOCK = 4 if _SIM else 256
SCAN_BLOCK = 4 if _SIM else 1024
ROW_BLOCK = 4 if _SIM else 256

EACH, SINGLE, ROWS, MATRIX, ONE_ROW_BLOCK, COOPERATIVE = ("each", "single", "rows", "matrix", "one-row-block",
                                                        "cooperative")


def _bind_cuda():
    global cuda, compact_block, min_block
    if cuda is None:
        from numba import cuda as numba_cuda
        cuda = numba_cuda
        compact_block = cuda.jit(device=True)(_compact_block)
        min_block = cuda.jit(device=True)(_min_block)
    return cuda


# ---------------------------------------------------------------------------------------------
# kernels (argument lists identical to the CPU kernels of hungarian_cpu)

def row_min(n, n_real, C, u, counters):
    sh = cuda.shared.array(ROW_BLOCK, float64)
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    sh[t] = row_min_part(C, n_real, i, t, ROW_BLOCK, n)
    cuda.syncthreads()
    s = ROW_BLOCK // 2
    while s > 0:
        if t < s and sh[t + s] < sh[t]:
            sh[t] = sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        u[i] = sh[0]
        if sh[0] == np.inf:
            counters[INFEAS] = 1


def col_min(n, n_real, C, u, v, counters):
    j = cuda.grid(1)
    if j < n:
        col_min_body(j, n, n_real, C, u, v, counters)


def reset_search(n, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug, counters):
    k = cuda.grid(1)
    if k == 0:
        counters[FOUND] = 0
    if k < n:
        reset_search_body(k, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug)


def _compact_block(n, values, out, counters, slot, mode):
    """Stream compaction by prefix sum in one block: each thread owns a contiguous segment."""
    sh = cuda.shared.array(SCAN_BLOCK, int64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    seg = (n + nt - 1) // nt
    lo = t * seg
    hi = min(lo + seg, n)
    cnt = 0
    for i in range(lo, hi):
        if keep_entry(values, i, mode):
            cnt += 1
    sh[t] = cnt
    cuda.syncthreads()
    off = 1
    while off < nt:  # inclusive Hillis-Steele scan of the segment counts
        x = 0
        if t >= off:
            x = sh[t - off]
        cuda.syncthreads()
        sh[t] += x
        cuda.syncthreads()
        off *= 2
    pos = sh[t] - cnt
    for i in range(lo, hi):
        if keep_entry(values, i, mode):
            out[pos] = i
            pos += 1
            if mode == KEEP_FLAGGED:
                values[i] = 0
    if t == nt - 1:
        counters[slot] = sh[t]
    cuda.syncthreads()


def _min_block(n, vals, mask, scal, counters):
    """delta = min of vals[j] over mask[j] == 0, by one block (power-of-two size)."""
    sh = cuda.shared.array(SCAN_BLOCK, float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    best = np.inf
    for j in range(t, n, nt):
        if mask[j] == 0 and vals[j] < best:
            best = vals[j]
    sh[t] = best
    cuda.syncthreads()
    s = nt // 2
    while s > 0:
        if t < s and sh[t + s] < sh[t]:
            sh[t] = sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        scal[DELTA] = sh[0]
        if sh[0] == np.inf:
            counters[INFEAS] = 1
    cuda.syncthreads()


def compact(n, values, out, counters, slot, mode):
    compact_block(n, values, out, counters, slot, mode)


def expand_tree(n, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol):
    j = cuda.grid(1)
    if j < n:
        expand_tree_body(j, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev,
                         counters, tol)


def expand_classical(fsize, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters):
    k = cuda.grid(1)
    if k < fsize:
        expand_classical_body(k, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters)


def min_uncovered(n, vals, mask, scal, counters):
    min_block(n, vals, mask, scal, counters)


def dual_tree(n, u, v, Vr, Vc, slack, scal):
    k = cuda.grid(1)
    delta = scal[DELTA]
    if k < n and delta != np.inf:
        dual_tree_body(k, u, v, Vr, Vc, slack, delta)


def dual_classical(n, u, v, Vr, Vc, row_next, scal):
    k = cuda.grid(1)
    delta = scal[DELTA]
    if k < n and delta != np.inf:
        dual_classical_body(k, u, v, Vr, Vc, row_next, delta)


def col_min_tree_rows(n, n_real, T, C, u, v, Vc, colmin, counters):
    j = cuda.grid(1)
    if j < n:
        col_min_tree_rows_body(j, n_real, counters[TREE], T, C, u, v, Vc, colmin)


def reverse(n, col_rev, Pc, Pr, Sc, Sr, root_aug):
    j = cuda.grid(1)
    if j < n:
        reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)


def augment(n, root_aug, Sr, Sc, Ar, Ac, path_len):
    i = cuda.grid(1)
    if i < n:
        augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)


def zero_count(n_rows, n_cols, n_real, C, u, v, row_cnt, tol):
    i = cuda.blockIdx.x
    j = cuda.blockIdx.y * BLOCK + cuda.threadIdx.x
    tight = j < n_cols and is_tight(C, n_real, u, v, i, j, tol)
    cnt = cuda.syncthreads_count(np.int32(1) if tight else np.int32(0))
    if cuda.threadIdx.x == 0 and cnt > 0:
        cuda.atomic.add(row_cnt, i, cnt)  # one atomic per block and row


def scan_rows(n, row_cnt, row_ptr, counters):
    """Exclusive prefix sum of the row counts into the CSR row pointers; zeroes the counts."""
    sh = cuda.shared.array(SCAN_BLOCK, int64)
    t = cuda.threadIdx.x
    seg = (n + SCAN_BLOCK - 1) // SCAN_BLOCK
    lo = t * seg
    hi = min(lo + seg, n)
    total = 0
    for i in range(lo, hi):
        total += row_cnt[i]
    sh[t] = total
    cuda.syncthreads()
    off = 1
    while off < SCAN_BLOCK:
        x = 0
        if t >= off:
            x = sh[t - off]
        cuda.syncthreads()
        sh[t] += x
        cuda.syncthreads()
        off *= 2
    pos = sh[t] - total
    for i in range(lo, hi):
        row_ptr[i] = pos
        pos += row_cnt[i]
        row_cnt[i] = 0
    if t == SCAN_BLOCK - 1:
        row_ptr[n] = sh[t]
        counters[NNZ] = sh[t]
        counters[OVERFLOW] = 0


def zero_fill(n_rows, n_cols, n_real, C, u, v, row_ptr, row_cnt, Z, cap, counters, tol):
    """Scatter a block's zero-slack columns: a block-level prefix sum orders them, one atomic
    per block reserves their place in the row."""
    sh = cuda.shared.array(BLOCK, int32)
    base = cuda.shared.array(1, int64)
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    j = cuda.blockIdx.y * BLOCK + t
    tight = j < n_cols and is_tight(C, n_real, u, v, i, j, tol)
    if cuda.syncthreads_count(np.int32(1) if tight else np.int32(0)) == 0:
        return  # the whole block leaves together
    sh[t] = 1 if tight else 0
    cuda.syncthreads()
    off = 1
    while off < BLOCK:
        x = 0
        if t >= off:
            x = sh[t - off]
        cuda.syncthreads()
        sh[t] += x
        cuda.syncthreads()
        off *= 2
    if t == BLOCK - 1:
        base[0] = row_ptr[i] + cuda.atomic.add(row_cnt, i, sh[t])
    cuda.syncthreads()
    if tight:
        pos = base[0] + sh[t] - 1
        if pos < cap:
            Z[pos] = j
        else:
            counters[OVERFLOW] = 1


def clear(n, values):
    k = cuda.grid(1)
    if k < n:
        values[k] = 0


def solve_tree(n, n_real, C, u, v, Ar, Ac, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug, path_len,
               F, counters, scal, matched_log, log_start, max_iters, tol):
    """The whole alternating-tree loop in one cooperative launch: the same steps as the host loop
    (optimality check, BFS levels, dual updates, reverse and augmentation passes), separated by
    grid-wide barriers instead of kernel launches; every branch is taken by all threads alike,
    on values read between two barriers. Block 0 does the single-block compactions and
    reductions. Stops when all rows are assigned, when infeasible, or after ``max_iters``
    augmentations (the host relaunches; with a listener it reports each one)."""
    grid = cuda.cg.this_grid()
    g = cuda.grid(1)
    stride = cuda.gridsize(1)
    first = cuda.blockIdx.x == 0
    it = 0
    while True:
        for k in range(g, n, stride):  # optimality check
            reset_search_body(k, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug)
        if g == 0:
            counters[FOUND] = 0
        grid.sync()
        if first:
            compact_block(n, row_next, F, counters, FRONT, KEEP_FLAGGED)
        grid.sync()
        free = counters[FRONT]
        stop = counters[INFEAS] != 0
        if g == 0:
            matched_log[log_start + it] = n - free
        grid.sync()
        if free == 0 or stop or it >= max_iters:
            break
        while True:  # augmenting path search
            fsize = counters[FRONT]
            found = counters[FOUND]
            grid.sync()  # all have read before the step below changes them
            if fsize == 0:
                if found != 0:
                    break
                if first:  # dual update
                    min_block(n, slack, Vc, scal, counters)
                    if cuda.threadIdx.x == 0:
                        counters[DUALS] += 1
                grid.sync()
                delta = scal[DELTA]
                if delta == np.inf:
                    stop = True  # block 0 flagged INFEAS
                    break
                for k in range(g, n, stride):
                    dual_tree_body(k, u, v, Vr, Vc, slack, delta)
                grid.sync()
            for j in range(g, n, stride):  # forward pass, one BFS level
                expand_tree_body(j, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev,
                                 counters, tol)
            grid.sync()
            if first:
                compact_block(n, row_next, F, counters, FRONT, KEEP_FLAGGED)
                if cuda.threadIdx.x == 0 and fsize > 0:
                    counters[LEVELS] += 1
            grid.sync()
        if stop:
            break
        for j in range(g, n, stride):  # reverse pass
            reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)
        grid.sync()
        for i in range(g, n, stride):  # augmentation pass
            augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)
        grid.sync()
        it += 1
    if g == 0:
        counters[ITERS] = it


KINDS = {"row_min": ROWS, "col_min": EACH, "reset_search": EACH, "compact": SINGLE, "expand_tree": EACH,
         "expand_classical": EACH, "min_uncovered": SINGLE, "dual_tree": EACH, "dual_classical": EACH,
         "col_min_tree_rows": EACH, "reverse": EACH, "augment": EACH, "zero_count": MATRIX,
         "scan_rows": SINGLE, "zero_fill": MATRIX, "clear": EACH, "solve_tree": COOPERATIVE}
KERNELS = {name: globals()[name] for name in KINDS}


@functools.lru_cache(maxsize=None)
def _jit(func):
    return _bind_cuda().jit(func)


class CudaLauncher:
    """Launches kernels on the GPU (or the simulator); arrays are device arrays.

    Counts launches and readbacks (the host loop's cost model: ~19 us per launch, ~104 us per
    readback on an H100)."""

    backend = "cuda"

    def __init__(self, kernels: dict, kinds: dict):
        _bind_cuda()
        self.kernels = kernels
        self.kinds = kinds
        self.launches = 0
        self.readbacks = 0

    @contextlib.contextmanager
    def session(self, size: int):
        yield self

    def launch(self, name: str, size, *args) -> None:
        kind = self.kinds[name]
        if kind == EACH:
            if size <= 0:
                return
            grid, block = (size + BLOCK - 1) // BLOCK, BLOCK
        elif kind == SINGLE:
            grid, block = 1, SCAN_BLOCK
        elif kind == ONE_ROW_BLOCK:
            grid, block = 1, ROW_BLOCK
        elif kind == ROWS:
            if size <= 0:
                return
            grid, block = size, ROW_BLOCK
        elif kind == COOPERATIVE:
            kernel = _jit(self.kernels[name])
            if _SIM:
                blocks = 1  # the simulator runs cooperative grids of one block only
            else:
                compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
                blocks = min(max(1, (size + BLOCK - 1) // BLOCK), compiled.max_cooperative_grid_blocks(BLOCK))
            self.launches += 1
            kernel[blocks, BLOCK](*args)
            return
        else:  # MATRIX: size = (rows, cols)
            rows, cols = size
            if rows <= 0 or cols <= 0:
                return
            grid, block = (rows, (cols + BLOCK - 1) // BLOCK), BLOCK
        self.launches += 1
        _jit(self.kernels[name])[grid, block](*args)

    def upload(self, host: np.ndarray):
        return cuda.to_device(np.ascontiguousarray(host))

    def empty(self, n: int, dtype):
        return cuda.device_array(n, dtype=dtype)

    def full(self, n: int, value, dtype):
        return cuda.to_device(np.full(n, value, dtype=dtype))

    def read(self, array) -> np.ndarray:
        self.readbacks += 1
        return array.copy_to_host()

    def write(self, array, host: np.ndarray) -> None:
        array.copy_to_device(np.ascontiguousarray(host))

    def synchronize(self) -> None:
        cuda.synchronize()
