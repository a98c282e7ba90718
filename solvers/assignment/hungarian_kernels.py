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
BLOCK-thread blocks, one per tile of TILE_COLS columns as far as they can be co-resident (grid-wide
barriers; one block under the simulator), looping over elements and tiles with a grid stride.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np
from numba import float64, int32, int64

from ..targets import simulator_enabled
from .hungarian_cpu import (DELTA, DUALS, FOUND, FOUND0, FRONT, INFEAS, ITERS, KEEP_FLAGGED, LEVELS, MIN0, NNZ,
                            OVERFLOW, QUEUE0, TREE, augment_body, col_min_body, col_min_tree_rows_body, cost_at,
                            dual_classical_body, dual_tree_body, expand_classical_body, expand_tree_body, is_tight,
                            keep_entry, reset_search_body, reverse_body, row_min_part)

cuda = None  # numba.cuda, bound by _bind_cuda(); a module global so the simulator can swap it
compact_block = None  # device functions compiled from _compact_block / _min_block / _queue_column
min_block = None  # by _bind_cuda()
queue_column = None

# The simulator runs one Python thread per CUDA thread: keep its blocks tiny.
_SIM = simulator_enabled()
BLOCK = 4 if _SIM else 256
SCAN_BLOCK = 4 if _SIM else 1024
ROW_BLOCK = 4 if _SIM else 256
# Cooperative forward pass: a tile of TILE_COLS columns x TILE_SLICES slices of the frontier rows per
# block. Folding the frontier into a column is a chain of dependent loads (row index, then cost), so
# its latency, not bandwidth, bounds a BFS level: 16 slices cut the chain 16-fold, while 16
# consecutive columns (64 B of float32) keep a half warp's loads on whole 32-byte sectors.
TILE_COLS = 2 if _SIM else 16
TILE_SLICES = BLOCK // TILE_COLS

EACH, SINGLE, ROWS, MATRIX, ONE_ROW_BLOCK, COOPERATIVE = ("each", "single", "rows", "matrix", "one-row-block",
                                                        "cooperative")


def _bind_cuda():
    global cuda, compact_block, min_block, queue_column
    if cuda is None:
        from numba import cuda as numba_cuda
        cuda = numba_cuda
        compact_block = cuda.jit(device=True)(_compact_block)
        min_block = cuda.jit(device=True)(_min_block)
        queue_column = cuda.jit(device=True)(_queue_column)
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


def _queue_column(j, Ac, Vc, Pr, col_rev, counters, queue, qslot, fslot):
    """Column j became tight (its predecessor is set): a free column ends an augmenting path; an
    assigned one is covered and its row appended to the next frontier (an atomic queue instead of
    the flag array + block-0 prefix sum; a row is queued at most once per phase). The row's Vr is
    cleared when that frontier is expanded, not here: the dual pass reads Vr while it queues."""
    Vc[j] = 1
    i = Ac[j]
    if i < 0:
        col_rev[j] = 1
        counters[fslot] = 1
    else:
        Pr[i] = j
        queue[cuda.atomic.add(counters, qslot, 1)] = i


def solve_tree(n, n_real, C, u, v, Ar, Ac, Vr, Vc, Pr, Pc, Sr, Sc, slack, F, F2, root_aug, path_len, col_rev,
               counters, scal, matched_log, log_start, max_iters, tol):
    """The whole alternating-tree loop in one cooperative launch: the steps of the host loop
    (optimality check, BFS levels, dual updates, reverse and augmentation passes), separated by
    grid-wide barriers instead of kernel launches; every branch is taken by all threads alike,
    on values read after a barrier. Stops when all rows are assigned, when infeasible, or after
    ``max_iters`` augmentations (the host relaunches; with a listener it reports each one).

    One barrier per BFS level and one per dual update. Pass p reads the frontier length and the
    minimum uncovered slack from slots p % 3, appends the next frontier (F / F2 alternate) and
    folds the new minimum into slots (p + 1) % 3, and resets slots (p + 2) % 3, which every
    thread finished reading before the previous barrier. The forward pass works on tiles of
    TILE_COLS columns x TILE_SLICES slices of the frontier rows (coalesced loads along a row, the
    slices' minima merged in shared memory) and produces the minimum slack for the dual update,
    so a dual update is one pass: u, v, slacks, and the columns it makes tight."""
    sh_val = cuda.shared.array(BLOCK, float64)
    sh_row = cuda.shared.array(BLOCK, int32)
    grid = cuda.cg.this_grid()
    g = cuda.grid(1)
    stride = cuda.gridsize(1)
    t = cuda.threadIdx.x
    lane = t % TILE_COLS
    piece = t // TILE_COLS
    n_tiles = (n + TILE_COLS - 1) // TILE_COLS
    if g == 0:
        for q in range(3):
            counters[QUEUE0 + q] = 0
            counters[FOUND0 + q] = 0
            scal[MIN0 + q] = np.inf
    grid.sync()
    p = 0  # pass number, the same in every thread
    it = 0
    while True:
        # optimality check: clear the forest; the free rows are the first frontier
        qnext = QUEUE0 + (p + 1) % 3
        nxt = F if (p + 1) % 2 == 0 else F2
        for k in range(g, n, stride):
            assigned = Ar[k] >= 0
            Vr[k] = 1 if assigned else 0
            Vc[k] = 0
            Pr[k] = -1
            Pc[k] = -1
            Sr[k] = -1
            Sc[k] = -1
            slack[k] = np.inf
            col_rev[k] = 0
            root_aug[k] = 0
            if not assigned:
                nxt[cuda.atomic.add(counters, qnext, 1)] = k
        if g == 0:
            counters[QUEUE0 + (p + 2) % 3] = 0
            counters[FOUND0 + (p + 2) % 3] = 0
            scal[MIN0 + (p + 2) % 3] = np.inf
        grid.sync()
        p += 1
        free = counters[QUEUE0 + p % 3]
        stop = counters[INFEAS] != 0
        if g == 0:
            matched_log[log_start + it] = n - free
        if free == 0 or stop or it >= max_iters:
            break
        found = False  # a free column was reached in this phase (the same in every thread)
        while True:  # augmenting path search, one pass per barrier
            fsize = counters[QUEUE0 + p % 3]
            found = found or counters[FOUND0 + p % 3] != 0
            qnext = QUEUE0 + (p + 1) % 3
            fnext = FOUND0 + (p + 1) % 3
            cur = F if p % 2 == 0 else F2
            nxt = F if (p + 1) % 2 == 0 else F2
            if fsize == 0 and found:
                break  # every tree has stopped growing; some reached a free column
            if g == 0:
                counters[QUEUE0 + (p + 2) % 3] = 0
                counters[FOUND0 + (p + 2) % 3] = 0
                scal[MIN0 + (p + 2) % 3] = np.inf
            if fsize == 0:  # dual update by the minimum slack the last forward pass left
                delta = scal[MIN0 + p % 3]
                if delta == np.inf:  # Hall's condition fails
                    if g == 0:
                        counters[INFEAS] = 1
                    stop = True
                    break
                if g == 0:
                    scal[DELTA] = delta
                    counters[DUALS] += 1
                for k in range(g, n, stride):
                    if Vr[k] == 0:
                        u[k] += delta
                    if Vc[k] != 0:
                        v[k] -= delta
                    else:
                        s = slack[k] - delta
                        slack[k] = s
                        if s <= tol:  # the column the minimum came from, and ties
                            queue_column(k, Ac, Vc, Pr, col_rev, counters, nxt, qnext, fnext)
            else:  # forward pass, one BFS level
                if g == 0:
                    counters[LEVELS] += 1
                for k in range(g, fsize, stride):
                    Vr[cur[k]] = 0  # the frontier's rows are in the forest (uncovered)
                low = np.inf
                for tile in range(cuda.blockIdx.x, n_tiles, cuda.gridDim.x):  # the same count in a block
                    j = tile * TILE_COLS + lane
                    active = j < n
                    if active:
                        active = Vc[j] == 0
                    best = np.inf
                    best_row = -1
                    if active:  # this slice's rows, two at a time (two loads in flight), in order
                        vj = v[j]
                        k = piece
                        while k + TILE_SLICES < fsize:
                            i0 = cur[k]
                            i1 = cur[k + TILE_SLICES]
                            d0 = cost_at(C, n_real, i0, j) - u[i0] - vj
                            d1 = cost_at(C, n_real, i1, j) - u[i1] - vj
                            if d0 < best:
                                best = d0
                                best_row = i0
                            if d1 < best:
                                best = d1
                                best_row = i1
                            k += 2 * TILE_SLICES
                        if k < fsize:
                            i0 = cur[k]
                            d0 = cost_at(C, n_real, i0, j) - u[i0] - vj
                            if d0 < best:
                                best = d0
                                best_row = i0
                    sh_val[t] = best
                    sh_row[t] = best_row
                    cuda.syncthreads()
                    if piece == 0 and active:
                        best = slack[j]
                        best_row = Pc[j]
                        for q in range(TILE_SLICES):
                            d = sh_val[q * TILE_COLS + lane]
                            if d < best:
                                best = d
                                best_row = sh_row[q * TILE_COLS + lane]
                        slack[j] = best
                        Pc[j] = best_row
                        if best <= tol:
                            queue_column(j, Ac, Vc, Pr, col_rev, counters, nxt, qnext, fnext)
                        elif best < low:
                            low = best
                    cuda.syncthreads()
                sh_val[t] = low  # the block's minimum uncovered slack, one atomic per block
                cuda.syncthreads()
                if t == 0:
                    for q in range(1, TILE_COLS):
                        if sh_val[q] < low:
                            low = sh_val[q]
                    if low < np.inf:
                        cuda.atomic.min(scal, MIN0 + (p + 1) % 3, low)
                cuda.syncthreads()
            grid.sync()
            p += 1
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
        counters[FRONT] = counters[QUEUE0 + p % 3]


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
                # one block per column tile (>= one per SM from n ~ 2000), as many as can be co-resident
                blocks = min(max(1, (size + TILE_COLS - 1) // TILE_COLS), compiled.max_cooperative_grid_blocks(BLOCK))
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

    def upload(self, costs: np.ndarray, dtype):
        """A device copy of the 2-D cost matrix in ``dtype`` (converted and copied in pinned chunks)."""
        from ..targets.staged_upload import upload_matrix
        return upload_matrix(costs, dtype)

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
