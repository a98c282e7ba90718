"""Per-element bodies of the GPU Hungarian algorithm (Date & Nagi 2016) and their CPU loops.

Each step of the algorithm is a body written once as a plain function (``register_jitable``
makes it compile both as a CUDA device function and inside ``numba.njit``). The CUDA kernels in
``hungarian_kernels`` call a body once per thread; the CPU kernels here call it once per loop
iteration: ``prange`` for the O(n^2) steps, a plain loop for the O(n) ones (a thread team costs
more than their work, and parallel loops compile slowly). Both kernel sets take the same
arguments, so one host loop (``solvers.assignment.hungarian``) drives either through a launcher.

The bodies live in this file, next to their cached CPU loops, because numba's on-disk cache only
notices edits to the file that holds the cached function.

Races: as in the paper, threads of one step may write the same word (a column's predecessor, a
row's successor in the reverse pass); every value written is valid, so whichever survives is
correct. On the CPU those are plain word-sized stores.
"""
from __future__ import annotations

from contextlib import contextmanager

import numba
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

# slots of the int64 ``counters`` array, the only thing the host reads back each step
FRONT, FOUND, INFEAS, NNZ, OVERFLOW, TREE, DUALS, LEVELS, ITERS = range(9)
QUEUE0 = 9  # slots 9..11: the cooperative loop's three rotating frontier-queue lengths
FOUND0 = 12  # slots 12..14: its three rotating "a free column was reached" flags
N_COUNTERS = 15
DELTA = 0  # slot of the float64 ``scal`` array holding the dual step
MIN0 = 1  # scal slots 1..3: the cooperative loop's three rotating minimum uncovered slacks
N_SCALARS = 4

# compaction modes (``compact``): which entries of ``values`` are kept
KEEP_FLAGGED, KEEP_ZERO, KEEP_NEGATIVE = 0, 1, 2


# ---------------------------------------------------------------------------------------------
# bodies (shared with the CUDA kernels)

@register_jitable
def cost_at(C, n_real, i, j):
    """c_ij, or 0 for a dummy row (i >= n_real) padding a rectangular problem to square."""
    if i < n_real:
        return C[i, j]
    return 0.0


@register_jitable
def row_min_part(C, n_real, i, start, stride, n):
    """min of c_ij over j = start, start + stride, ... < n."""
    best = np.inf
    for j in range(start, n, stride):
        c = cost_at(C, n_real, i, j)
        if c < best:
            best = c
    return best


@register_jitable
def min_over_rows(j, rows, count, C, n_real, u, vj, best, best_row):
    """Fold c_ij - u_i - vj over the rows ``rows[:count]`` (or 0..count-1 when ``rows`` is None)
    into (best, best_row), first minimum kept. Unrolled by four so a thread scanning a column keeps
    four independent loads in flight; the comparisons stay in row order."""
    k = 0
    while k + 4 <= count:
        if rows is None:
            i0, i1, i2, i3 = k, k + 1, k + 2, k + 3
        else:
            i0, i1, i2, i3 = rows[k], rows[k + 1], rows[k + 2], rows[k + 3]
        d0 = cost_at(C, n_real, i0, j) - u[i0] - vj
        d1 = cost_at(C, n_real, i1, j) - u[i1] - vj
        d2 = cost_at(C, n_real, i2, j) - u[i2] - vj
        d3 = cost_at(C, n_real, i3, j) - u[i3] - vj
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
        d = cost_at(C, n_real, i, j) - u[i] - vj
        if d < best:
            best, best_row = d, i
        k += 1
    return best, best_row


@register_jitable
def col_min_body(j, n, n_real, C, u, v, counters):
    """Column reduction: v_j = min_i (c_ij - u_i)."""
    best, _ = min_over_rows(j, None, n, C, n_real, u, 0.0, np.inf, -1)
    v[j] = best
    if best == np.inf:
        counters[INFEAS] = 1  # a column no row may take


@register_jitable
def reset_search_body(k, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug):
    """Optimality-check step: cover assigned rows, clear the forest; free rows become the roots."""
    assigned = Ar[k] >= 0
    Vr[k] = 1 if assigned else 0
    row_next[k] = 0 if assigned else 1
    Vc[k] = 0
    Pr[k] = -1
    Pc[k] = -1
    Sr[k] = -1
    Sc[k] = -1
    slack[k] = np.inf
    col_rev[k] = 0
    root_aug[k] = 0


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
def expand_tree_body(j, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev,
                     counters, tol):
    """Alternating-tree forward pass, one thread per column (the paper's Algorithm 4): fold the
    frontier rows into the column's minimum slack and predecessor; a column whose slack reaches
    zero joins the forest. With an empty frontier this only visits columns a dual update made tight."""
    if Vc[j] != 0:
        return
    s, p = min_over_rows(j, F, fsize, C, n_real, u, v[j], slack[j], Pc[j])
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
def dual_tree_body(k, u, v, Vr, Vc, slack, delta):
    """Alternating-tree dual update (Algorithm 9): O(n), using the kept column slacks."""
    if Vr[k] == 0:
        u[k] += delta
    if Vc[k] != 0:
        v[k] -= delta
    else:
        slack[k] -= delta


@register_jitable
def dual_classical_body(k, u, v, Vr, Vc, row_next, delta):
    """Classical dual update (Algorithm 8); the whole forest's rows form the next frontier."""
    if Vr[k] == 0:
        u[k] += delta
        row_next[k] = 1
    if Vc[k] != 0:
        v[k] -= delta


@register_jitable
def col_min_tree_rows_body(j, n_real, tsize, T, C, u, v, Vc, colmin):
    """Classical dual update, stage 1 (Algorithm 7) by columns: min slack from a forest row."""
    best = np.inf
    if Vc[j] == 0:
        best, _ = min_over_rows(j, T, tsize, C, n_real, u, v[j], np.inf, -1)
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
def is_tight(C, n_real, u, v, i, j, tol):
    return cost_at(C, n_real, i, j) - u[i] - v[j] <= tol


@register_jitable
def keep_entry(values, i, mode):
    if mode == KEEP_FLAGGED:
        return values[i] != 0
    if mode == KEEP_ZERO:
        return values[i] == 0
    return values[i] < 0


# ---------------------------------------------------------------------------------------------
# CPU kernels: same arguments as the CUDA kernels of hungarian_kernels

@njit(parallel=True, cache=True)
def row_min(n, n_real, C, u, counters):
    for i in prange(n):
        m = row_min_part(C, n_real, i, 0, 1, n)
        u[i] = m
        if m == np.inf:
            counters[INFEAS] = 1  # a row with no allowed column


@njit(parallel=True, cache=True)
def col_min(n, n_real, C, u, v, counters):
    for j in prange(n):
        col_min_body(j, n, n_real, C, u, v, counters)


@njit(cache=True)
def reset_search(n, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug, counters):
    counters[FOUND] = 0
    for k in range(n):
        reset_search_body(k, Ar, Vr, Vc, Pr, Pc, Sr, Sc, slack, row_next, col_rev, root_aug)


@njit(cache=True)
def compact(n, values, out, counters, slot, mode):
    """Stream compaction by prefix sum: the kept indices, in order, and their count. A kept flag
    is cleared (mode KEEP_FLAGGED) so the flag array is ready for the next step."""
    pos = 0
    for i in range(n):
        if keep_entry(values, i, mode):
            out[pos] = i
            pos += 1
            if mode == KEEP_FLAGGED:
                values[i] = 0
    counters[slot] = pos


@njit(parallel=True, cache=True)
def expand_tree(n, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev, counters, tol):
    for j in prange(n):
        expand_tree_body(j, n_real, fsize, F, C, u, v, Ac, Vc, Vr, Pc, Pr, slack, row_next, col_rev,
                         counters, tol)


@njit(cache=True)
def expand_classical(fsize, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters):
    for k in range(fsize):
        expand_classical_body(k, F, row_ptr, Z, Ac, Vc, Vr, Pc, Pr, row_next, col_rev, counters)


@njit(cache=True)
def min_uncovered(n, vals, mask, scal, counters):
    """delta = min of vals[j] over mask[j] == 0 (uncovered columns); inf means infeasible."""
    best = np.inf
    for j in range(n):
        if mask[j] == 0 and vals[j] < best:
            best = vals[j]
    scal[DELTA] = best
    if best == np.inf:
        counters[INFEAS] = 1


@njit(cache=True)
def dual_tree(n, u, v, Vr, Vc, slack, scal):
    delta = scal[DELTA]
    if delta == np.inf:
        return
    for k in range(n):
        dual_tree_body(k, u, v, Vr, Vc, slack, delta)


@njit(cache=True)
def dual_classical(n, u, v, Vr, Vc, row_next, scal):
    delta = scal[DELTA]
    if delta == np.inf:
        return
    for k in range(n):
        dual_classical_body(k, u, v, Vr, Vc, row_next, delta)


@njit(parallel=True, cache=True)
def col_min_tree_rows(n, n_real, T, C, u, v, Vc, colmin, counters):
    tsize = counters[TREE]
    for j in prange(n):
        col_min_tree_rows_body(j, n_real, tsize, T, C, u, v, Vc, colmin)


@njit(cache=True)
def reverse(n, col_rev, Pc, Pr, Sc, Sr, root_aug):
    for j in range(n):
        reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)


@njit(cache=True)
def augment(n, root_aug, Sr, Sc, Ar, Ac, path_len):
    for i in range(n):
        augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)


@njit(parallel=True, cache=True)
def zero_count(n_rows, n_cols, n_real, C, u, v, row_cnt, tol):
    """Matrix compression, pass 1: zero-slack entries per row."""
    for i in prange(n_rows):
        cnt = 0
        for j in range(n_cols):
            if is_tight(C, n_real, u, v, i, j, tol):
                cnt += 1
        row_cnt[i] = cnt


@njit(cache=True)
def scan_rows(n, row_cnt, row_ptr, counters):
    """Matrix compression, pass 2: exclusive prefix sum of the row counts (the CSR row pointers);
    the counts are zeroed to serve as fill cursors."""
    total = 0
    for i in range(n):
        row_ptr[i] = total
        total += row_cnt[i]
        row_cnt[i] = 0
    row_ptr[n] = total
    counters[NNZ] = total
    counters[OVERFLOW] = 0


@njit(parallel=True, cache=True)
def zero_fill(n_rows, n_cols, n_real, C, u, v, row_ptr, row_cnt, Z, cap, counters, tol):
    """Matrix compression, pass 3: scatter the zero-slack column indices into the CSR."""
    for i in prange(n_rows):
        pos = row_ptr[i]
        for j in range(n_cols):
            if is_tight(C, n_real, u, v, i, j, tol):
                if pos < cap:
                    Z[pos] = j
                else:
                    counters[OVERFLOW] = 1
                pos += 1


@njit(cache=True)
def clear(n, values):
    for k in range(n):
        values[k] = 0


CPU_KERNELS = {f.__name__: f for f in (
    row_min, col_min, reset_search, compact, expand_tree, expand_classical, min_uncovered, dual_tree,
    dual_classical, col_min_tree_rows, reverse, augment, zero_count, scan_rows, zero_fill, clear)}


@njit(parallel=True, cache=True)
def cost_stats(C):
    """One pass over a cost matrix: (min finite, max finite, number of +inf, all finite integral)."""
    rows, cols = C.shape
    lows = np.full(rows, np.inf)
    highs = np.full(rows, -np.inf)
    infs = np.zeros(rows, dtype=np.int64)
    fractional = np.zeros(rows, dtype=np.bool_)
    for i in prange(rows):
        lo, hi, n_inf, frac = np.inf, -np.inf, 0, False
        for j in range(cols):
            c = C[i, j]
            if c == np.inf:
                n_inf += 1
                continue
            lo = min(lo, c)
            hi = max(hi, c)
            if c != np.floor(c):
                frac = True
        lows[i], highs[i], infs[i], fractional[i] = lo, hi, n_inf, frac
    if rows == 0:
        return np.inf, -np.inf, 0, True
    return lows.min(), highs.max(), infs.sum(), not fractional.any()


PARALLEL_MIN = 2048  # below this many rows/columns a launch runs on one thread


class CpuLauncher:
    """Runs the kernels on the CPU: arrays are numpy arrays, a launch is a call.

    Small problems run single-threaded: waking a thread team costs far more than their work (on
    a 2-core machine OpenMP's spinning team takes milliseconds per parallel region)."""

    backend = "cpu"

    def __init__(self, kernels: dict):
        self.kernels = kernels
        self.launches = 0
        self.readbacks = 0

    @contextmanager
    def session(self, size: int):
        """Run the enclosed solve with the thread count suited to ``size`` (per calling thread)."""
        before = numba.get_num_threads()
        numba.set_num_threads(1 if size < PARALLEL_MIN else before)
        try:
            yield self
        finally:
            numba.set_num_threads(before)

    def launch(self, name: str, size, *args) -> None:
        self.launches += 1
        self.kernels[name](*args)

    def upload(self, costs: np.ndarray, dtype) -> np.ndarray:
        return np.ascontiguousarray(costs, dtype=dtype)

    def empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype=dtype)

    def full(self, n: int, value, dtype) -> np.ndarray:
        return np.full(n, value, dtype=dtype)

    def read(self, array) -> np.ndarray:
        """A host copy (what a device readback costs on the GPU)."""
        self.readbacks += 1
        return np.array(array, copy=True)

    def write(self, array, host: np.ndarray) -> None:
        array[...] = host

    def synchronize(self) -> None:
        pass
