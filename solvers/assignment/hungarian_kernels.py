"""GPU Hungarian algorithm (Date & Nagi 2016), the host loop's steps: the per-element bodies, the
cpu loops and the cuda kernels, in one file, and one ``Kernel`` record per step.

Imported only when a run starts (numba; numba.cuda only when a kernel is built). Each step's body is written once
(``register_jitable``: it compiles as a CUDA device function and inside ``numba.njit``), beside its
two loops: an ``@njit(cache=True)`` cpu loop (``prange`` for the O(n^2) steps, a plain loop for the
O(n) ones: a thread team costs more than their work, and parallel loops compile slowly) and a thin
``@cuda_kernel`` kernel calling the body once per thread. Both loops of a step take the
same arguments, so the host loop (``hungarian_device``) launches it the same way on every target.
Where the two forms differ in structure (a one-block prefix sum vs a serial scan, a block reduction
vs a loop), they are written next to each other. The cooperative whole-loop kernel of the tree
variant lives in ``hungarian_fused`` and the auction (``auction_kernels``) reuses ``COMPACT`` and
these bodies: the kernel cache directory is keyed by a hash of every compiled source
(``solvers.targets.cache``), so an edit here also starts a fresh cache for them.

Launch shapes (``solvers.targets.kernel``): EACH = one thread per element; ONE_BLOCK with
SCAN_BLOCK threads for prefix sums and reductions over at most a few hundred thousand entries (no
multi-block scan needed, one launch); BLOCK_PER_ITEM with ROW_BLOCK threads = one block per row
(coalesced row reductions); MATRIX = block x = row, block y = a chunk of columns, for the
matrix-compression passes. The kernels read their block size from ``cuda.blockDim`` (the simulator
runs small blocks, ``Kernel.sim_threads``); shared arrays are sized by the largest block they get.

Shapes: a problem has n_rows <= n_cols (the caller transposes a tall matrix), and every row is
assigned; there are no dummy rows. Arrays over rows (u, Ar, Vr, Pr, Sr, the frontiers) hold n_rows
entries, arrays over columns (v, Ac, Vc, Pc, Sc, slack) n_cols. A step over both runs over n_cols
elements, element k doing row k (when k < n_rows) and column k.

Races: as in the paper, threads of one step may write the same word (a column's predecessor, a
row's successor in the reverse pass); every value written is valid, so whichever survives is
correct. On the CPU those are plain word-sized stores.
"""
from __future__ import annotations

import numpy as np
from numba import float64, int32, int64, njit, prange
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import MAX_THREADS_PER_BLOCK, THREADS_PER_BLOCK
from ..targets.kernel import BLOCK_PER_ITEM, EACH, MATRIX, ONE_BLOCK, Kernel

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

# slots of the int64 ``counters`` array, the only thing the host reads back each step
FRONT, FOUND, INFEAS, NNZ, OVERFLOW, TREE, DUALS, LEVELS, ITERS = range(9)
QUEUE0 = 9  # slots 9..11: the cooperative loop's three rotating frontier-queue lengths
FOUND0 = 12  # slots 12..14: its three rotating "a free column was reached" flags
FREE = 15  # the cooperative loop's count of free rows, made at each phase's start
AUGMENTED = 16  # the cooperative loop's count of paths augmented by the last iteration
KEPT = 17  # the cooperative loop's count of phases that started from a kept forest
FREE_COL = 18  # the cooperative loop's free column last reached (the path's end when only one was)
WALKED = 19  # the cooperative loop's count of single paths flipped in one walk
N_COUNTERS = 20
DELTA = 0  # slot of the float64 ``scal`` array holding the dual step
MIN0 = 1  # scal slots 1..3: the cooperative loop's three rotating minimum uncovered slacks
N_SCALARS = 4

# compaction modes (``compact``): which entries of ``values`` are kept
KEEP_FLAGGED, KEEP_ZERO, KEEP_NEGATIVE = 0, 1, 2

# block sizes on a GPU (powers of two: the block reductions halve them)
BLOCK = THREADS_PER_BLOCK          # one thread per element / per matrix entry of a column chunk
ROW_BLOCK = THREADS_PER_BLOCK      # one block per row reduction
SCAN_BLOCK = MAX_THREADS_PER_BLOCK  # the single block of a prefix sum or a reduction over n


# ---------------------------------------------------------------------------------------------
# bodies (every target)

@register_jitable
def row_min_part(C, i, start, stride, n_cols):
    """min of c_ij over j = start, start + stride, ... < n_cols."""
    best = np.inf
    for j in range(start, n_cols, stride):
        c = C[i, j]
        if c < best:
            best = c
    return best


@register_jitable
def min_over_rows(j, rows, count, C, u, vj, best, best_row):
    """Fold c_ij - u_i - vj over the rows ``rows[:count]`` (or 0..count-1 when ``rows`` is None)
    into (best, best_row), first minimum kept. Unrolled by four so a thread scanning a column keeps
    four independent loads in flight; the comparisons stay in row order."""
    k = 0
    while k + 4 <= count:
        if rows is None:
            i0, i1, i2, i3 = k, k + 1, k + 2, k + 3
        else:
            i0, i1, i2, i3 = rows[k], rows[k + 1], rows[k + 2], rows[k + 3]
        d0 = C[i0, j] - u[i0] - vj
        d1 = C[i1, j] - u[i1] - vj
        d2 = C[i2, j] - u[i2] - vj
        d3 = C[i3, j] - u[i3] - vj
        if d0 < best:
            best, best_row = d0, i0
        if d1 < best:
            best, best_row = d1, i1
        if d2 < best:
            best, best_row = d2, i2
        if d3 < best:
            best, best_row = d3, i3
        k += 4
    while k < count:
        i = k if rows is None else rows[k]
        d = C[i, j] - u[i] - vj
        if d < best:
            best, best_row = d, i
        k += 1
    return best, best_row


@register_jitable
def col_min_body(j, n_rows, C, u, v, counters):
    """Column reduction (square problems only): v_j = min_i (c_ij - u_i)."""
    best, _ = min_over_rows(j, None, n_rows, C, u, 0.0, np.inf, -1)
    v[j] = best
    if best == np.inf:
        counters[INFEAS] = 1  # a column no row may take


@register_jitable
def reset_row_body(i, Ar, Vr, Pr, Sr, row_next, root_aug):
    """Optimality-check step, row i: cover it if assigned, else make it a root."""
    assigned = Ar[i] >= 0
    Vr[i] = 1 if assigned else 0
    row_next[i] = 0 if assigned else 1
    Pr[i] = -1
    Sr[i] = -1
    root_aug[i] = 0


@register_jitable
def reset_column_body(j, Vc, Pc, Sc, slack, col_rev):
    """Optimality-check step, column j: out of the forest."""
    Vc[j] = 0
    Pc[j] = -1
    Sc[j] = -1
    slack[j] = np.inf
    col_rev[j] = 0


@register_jitable
def visit_column(j, Ac, Vc, Vr, Pr, row_next, col_rev, counters):
    """Column j just became reachable by a zero-slack edge (its predecessor Pc[j] is set).

    A free column ends an augmenting path ("reverse" candidate); an assigned one is covered and
    its row uncovered and put on the next frontier."""
    Vc[j] = 1
    i = Ac[j]
    if i < 0:
        col_rev[j] = 1
        counters[FOUND] = 1
    else:
        Pr[i] = j
        Vr[i] = 0
        row_next[i] = 1


@register_jitable
def expand_tree_body(j, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol):
    """Alternating-tree forward pass, one thread per column (the paper's Algorithm 4): fold the
    frontier rows into the column's minimum slack and predecessor; a column whose slack reaches
    zero joins the forest. With an empty frontier this only visits columns a dual update made tight."""
    if Vc[j] != 0:
        return
    s, p = min_over_rows(j, F, fsize, C, u, v[j], slack[j], Pc[j])
    slack[j] = s
    Pc[j] = p
    if s <= tol:
        visit_column(j, Ac, Vc, Vr, Pr, row_next, col_rev, counters)


@register_jitable
def expand_classical_body(k, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters):
    """Classical forward pass, one thread per frontier row (Algorithm 3): scan its zero-slack
    columns in the CSR; uncovered ones join the forest with this row as predecessor."""
    i = F[k]
    for e in range(row_ptr[i], row_ptr[i + 1]):
        j = Z[e]
        if Vc[j] == 0:
            Pc[j] = i
            visit_column(j, Ac, Vc, Vr, Pr, row_next, col_rev, counters)


@register_jitable
def dual_tree_body(k, n_rows, n_cols, u, v, Vr, Vc, slack, delta):
    """Alternating-tree dual update (Algorithm 9) for row k and column k: O(n), using the kept
    column slacks. Only covered columns (all assigned: a dual update comes only when no tree
    reached a free column) are lowered, so a column never assigned keeps v_j = 0."""
    if k < n_rows and Vr[k] == 0:
        u[k] += delta
    if k < n_cols:
        if Vc[k] != 0:
            v[k] -= delta
        else:
            slack[k] -= delta


@register_jitable
def dual_classical_body(k, n_rows, n_cols, u, v, Vr, Vc, row_next, delta):
    """Classical dual update (Algorithm 8) for row k and column k; the whole forest's rows form the
    next frontier."""
    if k < n_rows and Vr[k] == 0:
        u[k] += delta
        row_next[k] = 1
    if k < n_cols and Vc[k] != 0:
        v[k] -= delta


@register_jitable
def col_min_tree_rows_body(j, tsize, T, C, u, v, Vc, colmin):
    """Classical dual update, stage 1 (Algorithm 7) by columns: min slack from a forest row."""
    best = np.inf
    if Vc[j] == 0:
        best, _ = min_over_rows(j, T, tsize, C, u, v[j], np.inf, -1)
    colmin[j] = best


@register_jitable
def reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug):
    """Reverse pass (Algorithm 5): walk from a free column back to its root, writing successors.
    Paths of one tree that meet at a row race for its successor; one survives, all valid."""
    if col_rev[j] == 0:
        return
    col_rev[j] = 0
    r = np.int64(-1)
    c = np.int64(j)  # a prange index is unsigned; keep the walk's indices signed
    while c != -1:
        Sc[c] = r
        r = Pc[c]
        Sr[r] = c
        c = Pr[r]
    root_aug[r] = 1


@register_jitable
def augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len):
    """Augmentation pass (Algorithm 6): flip one vertex-disjoint path from its root."""
    if root_aug[i] == 0:
        return
    root_aug[i] = 0
    r = np.int64(i)
    length = 0
    while r != -1:
        c = Sr[r]
        Ar[r] = c
        Ac[c] = r
        r = Sc[c]
        length += 1
    path_len[i] = 2 * length - 1  # edges on the path


@register_jitable
def is_tight(C, u, v, i, j, tol):
    return C[i, j] - u[i] - v[j] <= tol


@register_jitable
def keep_entry(values, i, mode):
    if mode == KEEP_FLAGGED:
        return values[i] != 0
    if mode == KEEP_ZERO:
        return values[i] == 0
    return values[i] < 0


# ---------------------------------------------------------------------------------------------
# the steps: for each, its cpu loop, its cuda kernel (same arguments) and its Kernel record

@njit(parallel=True, cache=True)
def row_min_cpu(n_rows, n_cols, C, u, counters):
    """Row reduction: u_i = min_j c_ij."""
    for i in prange(n_rows):
        m = row_min_part(C, i, 0, 1, n_cols)
        u[i] = m
        if m == np.inf:
            counters[INFEAS] = 1  # a row with no allowed column


@cuda_kernel
def row_min_cuda(n_rows, n_cols, C, u, counters):
    """One block per row: strided partial minima, then a shared-memory tree reduction."""
    sh = cuda.shared.array(ROW_BLOCK, float64)
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    sh[t] = row_min_part(C, i, t, nt, n_cols)
    cuda.syncthreads()
    s = nt // 2
    while s > 0:
        if t < s and sh[t + s] < sh[t]:
            sh[t] = sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        u[i] = sh[0]
        if sh[0] == np.inf:
            counters[INFEAS] = 1


ROW_MIN = Kernel("row_min", row_min_cpu, row_min_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)


@njit(parallel=True, cache=True)
def col_min_cpu(n_rows, n_cols, C, u, v, counters):
    for j in prange(n_cols):
        col_min_body(j, n_rows, C, u, v, counters)


@cuda_kernel
def col_min_cuda(n_rows, n_cols, C, u, v, counters):
    j = cuda.grid(1)
    if j < n_cols:
        col_min_body(j, n_rows, C, u, v, counters)


COL_MIN = Kernel("col_min", col_min_cpu, col_min_cuda, EACH)


@njit(cache=True)
def reset_search_cpu(n_rows, n_cols, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug, counters):
    counters[FOUND] = 0
    for i in range(n_rows):
        reset_row_body(i, Ar, Vr, Pr, Sr, row_next, root_aug)
    for j in range(n_cols):
        reset_column_body(j, Vc, Pc, Sc, slack, col_rev)


@cuda_kernel
def reset_search_cuda(n_rows, n_cols, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug, counters):
    """One thread per column (rows <= columns), thread k also resetting row k."""
    k = cuda.grid(1)
    if k == 0:
        counters[FOUND] = 0
    if k < n_rows:
        reset_row_body(k, Ar, Vr, Pr, Sr, row_next, root_aug)
    if k < n_cols:
        reset_column_body(k, Vc, Pc, Sc, slack, col_rev)


RESET_SEARCH = Kernel("reset_search", reset_search_cpu, reset_search_cuda, EACH)


@njit(cache=True)
def compact_cpu(n, values, out, counters, slot, mode):
    """Stream compaction: the kept indices, in order, and their count. A kept flag is cleared
    (mode KEEP_FLAGGED) so the flag array is ready for the next step."""
    pos = 0
    for i in range(n):
        if keep_entry(values, i, mode):
            out[pos] = i
            pos += 1
            if mode == KEEP_FLAGGED:
                values[i] = 0
    counters[slot] = pos


@cuda_kernel
def compact_cuda(n, values, out, counters, slot, mode):
    """The same by prefix sum in one block: each thread owns a contiguous segment, an inclusive
    Hillis-Steele scan of the segment counts gives each its first output position."""
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
    while off < nt:
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


COMPACT = Kernel("compact", compact_cpu, compact_cuda, ONE_BLOCK, threads=SCAN_BLOCK)


@njit(parallel=True, cache=True)
def expand_tree_cpu(n_cols, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol):
    for j in prange(n_cols):
        if Vc[j] == 0:  # expand_tree_body, unfolded: a call passing arrays costs reference counting per element
            s, p = min_over_rows(j, F, fsize, C, u, v[j], slack[j], Pc[j])
            slack[j] = s
            Pc[j] = p
            if s <= tol:
                visit_column(j, Ac, Vc, Vr, Pr, row_next, col_rev, counters)


@cuda_kernel
def expand_tree_cuda(n_cols, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol):
    j = cuda.grid(1)
    if j < n_cols:
        expand_tree_body(j, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol)


EXPAND_TREE = Kernel("expand_tree", expand_tree_cpu, expand_tree_cuda, EACH)


@njit(cache=True)
def expand_classical_cpu(fsize, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters):
    for k in range(fsize):
        expand_classical_body(k, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters)


@cuda_kernel
def expand_classical_cuda(fsize, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters):
    k = cuda.grid(1)
    if k < fsize:
        expand_classical_body(k, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters)


EXPAND_CLASSICAL = Kernel("expand_classical", expand_classical_cpu, expand_classical_cuda, EACH)


@njit(cache=True)
def min_uncovered_cpu(n_cols, vals, mask, scal, counters):
    """delta = min of vals[j] over mask[j] == 0 (uncovered columns); inf means infeasible."""
    best = np.inf
    for j in range(n_cols):
        if mask[j] == 0 and vals[j] < best:
            best = vals[j]
    scal[DELTA] = best
    if best == np.inf:
        counters[INFEAS] = 1


@cuda_kernel
def min_uncovered_cuda(n_cols, vals, mask, scal, counters):
    """The same by one block (power-of-two size): strided minima, then a tree reduction."""
    sh = cuda.shared.array(SCAN_BLOCK, float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    best = np.inf
    for j in range(t, n_cols, nt):
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


MIN_UNCOVERED = Kernel("min_uncovered", min_uncovered_cpu, min_uncovered_cuda, ONE_BLOCK, threads=SCAN_BLOCK)


@njit(cache=True)
def dual_tree_cpu(n_rows, n_cols, u, v, Vr, Vc, slack, scal):
    delta = scal[DELTA]
    if delta == np.inf:
        return
    for k in range(n_cols):
        dual_tree_body(k, n_rows, n_cols, u, v, Vr, Vc, slack, delta)


@cuda_kernel
def dual_tree_cuda(n_rows, n_cols, u, v, Vr, Vc, slack, scal):
    k = cuda.grid(1)
    delta = scal[DELTA]
    if k < n_cols and delta != np.inf:
        dual_tree_body(k, n_rows, n_cols, u, v, Vr, Vc, slack, delta)


DUAL_TREE = Kernel("dual_tree", dual_tree_cpu, dual_tree_cuda, EACH)


@njit(cache=True)
def dual_classical_cpu(n_rows, n_cols, u, v, Vr, Vc, row_next, scal):
    delta = scal[DELTA]
    if delta == np.inf:
        return
    for k in range(n_cols):
        dual_classical_body(k, n_rows, n_cols, u, v, Vr, Vc, row_next, delta)


@cuda_kernel
def dual_classical_cuda(n_rows, n_cols, u, v, Vr, Vc, row_next, scal):
    k = cuda.grid(1)
    delta = scal[DELTA]
    if k < n_cols and delta != np.inf:
        dual_classical_body(k, n_rows, n_cols, u, v, Vr, Vc, row_next, delta)


DUAL_CLASSICAL = Kernel("dual_classical", dual_classical_cpu, dual_classical_cuda, EACH)


@njit(parallel=True, cache=True)
def col_min_tree_rows_cpu(n_cols, T, C, u, v, Vc, colmin, counters):
    tsize = counters[TREE]
    for j in prange(n_cols):
        col_min_tree_rows_body(j, tsize, T, C, u, v, Vc, colmin)


@cuda_kernel
def col_min_tree_rows_cuda(n_cols, T, C, u, v, Vc, colmin, counters):
    j = cuda.grid(1)
    if j < n_cols:
        col_min_tree_rows_body(j, counters[TREE], T, C, u, v, Vc, colmin)


COL_MIN_TREE_ROWS = Kernel("col_min_tree_rows", col_min_tree_rows_cpu, col_min_tree_rows_cuda, EACH)


@njit(cache=True)
def reverse_cpu(n_cols, col_rev, Pc, Pr, Sc, Sr, root_aug):
    for j in range(n_cols):
        if col_rev[j] != 0:  # tested here: a call passing arrays costs reference counting per element
            reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)


@cuda_kernel
def reverse_cuda(n_cols, col_rev, Pc, Pr, Sc, Sr, root_aug):
    j = cuda.grid(1)
    if j < n_cols:
        reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)


REVERSE = Kernel("reverse", reverse_cpu, reverse_cuda, EACH)


@njit(cache=True)
def augment_cpu(n_rows, root_aug, Sr, Sc, Ar, Ac, path_len):
    for i in range(n_rows):
        if root_aug[i] != 0:  # tested here: a call passing arrays costs reference counting per element
            augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)


@cuda_kernel
def augment_cuda(n_rows, root_aug, Sr, Sc, Ar, Ac, path_len):
    i = cuda.grid(1)
    if i < n_rows:
        augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)


AUGMENT = Kernel("augment", augment_cpu, augment_cuda, EACH)


@njit(parallel=True, cache=True)
def zero_count_cpu(n_rows, n_cols, C, u, v, row_cnt, tol):
    """Matrix compression, pass 1: zero-slack entries per row."""
    for i in prange(n_rows):
        cnt = 0
        for j in range(n_cols):
            if is_tight(C, u, v, i, j, tol):
                cnt += 1
        row_cnt[i] = cnt


@cuda_kernel
def zero_count_cuda(n_rows, n_cols, C, u, v, row_cnt, tol):
    """One block per (row, chunk of columns): a block-wide count, one atomic per block and row."""
    i = cuda.blockIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    tight = j < n_cols and is_tight(C, u, v, i, j, tol)
    cnt = cuda.syncthreads_count(np.int32(1) if tight else np.int32(0))
    if cuda.threadIdx.x == 0 and cnt > 0:
        cuda.atomic.add(row_cnt, i, cnt)


ZERO_COUNT = Kernel("zero_count", zero_count_cpu, zero_count_cuda, MATRIX, threads=BLOCK)


@njit(cache=True)
def scan_rows_cpu(n_rows, row_cnt, row_ptr, counters):
    """Matrix compression, pass 2: exclusive prefix sum of the row counts (the CSR row pointers);
    the counts are zeroed to serve as fill cursors."""
    total = 0
    for i in range(n_rows):
        row_ptr[i] = total
        total += row_cnt[i]
        row_cnt[i] = 0
    row_ptr[n_rows] = total
    counters[NNZ] = total
    counters[OVERFLOW] = 0


@cuda_kernel
def scan_rows_cuda(n_rows, row_cnt, row_ptr, counters):
    """The same in one block: per-thread segments, a Hillis-Steele scan of their sums."""
    sh = cuda.shared.array(SCAN_BLOCK, int64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    seg = (n_rows + nt - 1) // nt
    lo = t * seg
    hi = min(lo + seg, n_rows)
    total = 0
    for i in range(lo, hi):
        total += row_cnt[i]
    sh[t] = total
    cuda.syncthreads()
    off = 1
    while off < nt:
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
    if t == nt - 1:
        row_ptr[n_rows] = sh[t]
        counters[NNZ] = sh[t]
        counters[OVERFLOW] = 0


SCAN_ROWS = Kernel("scan_rows", scan_rows_cpu, scan_rows_cuda, ONE_BLOCK, threads=SCAN_BLOCK)


@njit(parallel=True, cache=True)
def zero_fill_cpu(n_rows, n_cols, C, u, v, row_ptr, row_cnt, Z, cap, counters, tol):
    """Matrix compression, pass 3: scatter the zero-slack column indices into the CSR."""
    for i in prange(n_rows):
        pos = row_ptr[i]
        for j in range(n_cols):
            if is_tight(C, u, v, i, j, tol):
                if pos < cap:
                    Z[pos] = j
                else:
                    counters[OVERFLOW] = 1
                pos += 1


@cuda_kernel
def zero_fill_cuda(n_rows, n_cols, C, u, v, row_ptr, row_cnt, Z, cap, counters, tol):
    """Scatter a block's zero-slack columns: a block-level prefix sum orders them, one atomic
    per block reserves their place in the row."""
    sh = cuda.shared.array(BLOCK, int32)
    base = cuda.shared.array(1, int64)
    i = cuda.blockIdx.x
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    j = cuda.blockIdx.y * nt + t
    tight = j < n_cols and is_tight(C, u, v, i, j, tol)
    if cuda.syncthreads_count(np.int32(1) if tight else np.int32(0)) == 0:
        return  # the whole block leaves together
    sh[t] = 1 if tight else 0
    cuda.syncthreads()
    off = 1
    while off < nt:
        x = 0
        if t >= off:
            x = sh[t - off]
        cuda.syncthreads()
        sh[t] += x
        cuda.syncthreads()
        off *= 2
    if t == nt - 1:
        base[0] = row_ptr[i] + cuda.atomic.add(row_cnt, i, sh[t])
    cuda.syncthreads()
    if tight:
        pos = base[0] + sh[t] - 1
        if pos < cap:
            Z[pos] = j
        else:
            counters[OVERFLOW] = 1


ZERO_FILL = Kernel("zero_fill", zero_fill_cpu, zero_fill_cuda, MATRIX, threads=BLOCK)


@njit(cache=True)
def clear_cpu(n, values):
    for k in range(n):
        values[k] = 0


@cuda_kernel
def clear_cuda(n, values):
    k = cuda.grid(1)
    if k < n:
        values[k] = 0


CLEAR = Kernel("clear", clear_cpu, clear_cuda, EACH)

KERNELS = (ROW_MIN, COL_MIN, RESET_SEARCH, COMPACT, EXPAND_TREE, EXPAND_CLASSICAL, MIN_UNCOVERED, DUAL_TREE,
           DUAL_CLASSICAL, COL_MIN_TREE_ROWS, REVERSE, AUGMENT, ZERO_COUNT, SCAN_ROWS, ZERO_FILL, CLEAR)
