"""G-PR's list steps (Deveci et al. 2013): FIXMATCHING, the active-list fills, and the compaction
(G-PR-SHRKRN) and counts behind them, and a long prefix sum (the device transpose's); per-element
bodies, cpu loops (prange, and plain ones for small graphs) and cuda kernels, in one file.
solvers.matching.gpr_kernels pairs them in Kernel records; its docstring describes the
conventions. The constants come from there too: the kernel cache directory is keyed by a hash of
every compiled source (solvers.targets.cache), so an edit in either file starts a fresh cache.
"""
from __future__ import annotations

from numba import int32, njit, prange
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import MAX_THREADS_PER_BLOCK

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

SCAN_SHARED = MAX_THREADS_PER_BLOCK + 1  # a compile-time size for the block scans' shared arrays


@register_jitable
def fix_matching(v, mu_row, mu_col):
    """FIXMATCHING: a column whose row points elsewhere (or a dead one) is unmatched."""
    r = mu_col[v]
    if r < 0 or mu_row[r] != v:
        mu_col[v] = -1
    return 0


@register_jitable
def fill_unmatched(v, out, mu_row, mu_col):
    """out[v] = v for a live unmatched column (the initial active list), else -1."""
    r = mu_col[v]
    if r == -1 or (r >= 0 and mu_row[r] != v):
        out[v] = v
        return 1
    out[v] = -1
    return 0


@register_jitable
def fill_reachable(v, out, mu_row, mu_col, psi_col, inf):
    """out[v] = v for an unmatched column that a fresh global relabel reached (an augmenting path
    starts there), else -1. Used by the final check after FIXMATCHING."""
    r = mu_col[v]
    if (r < 0 or mu_row[r] != v) and psi_col[v] < inf:
        out[v] = v
        return 1
    out[v] = -1
    return 0


@njit(parallel=True, cache=True)
def fix_matching_cpu(n_cols, mu_row, mu_col):
    for v in prange(n_cols):
        fix_matching(v, mu_row, mu_col)


@njit(cache=True)
def fix_matching_serial(n_cols, mu_row, mu_col):
    for v in range(n_cols):
        fix_matching(v, mu_row, mu_col)


@cuda_kernel
def fix_matching_kernel(n_cols, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        fix_matching(v, mu_row, mu_col)


@njit(parallel=True, cache=True)
def fill_unmatched_cpu(n_cols, out, mu_row, mu_col):
    for v in prange(n_cols):
        fill_unmatched(v, out, mu_row, mu_col)


@njit(cache=True)
def fill_unmatched_serial(n_cols, out, mu_row, mu_col):
    for v in range(n_cols):
        fill_unmatched(v, out, mu_row, mu_col)


@cuda_kernel
def fill_unmatched_kernel(n_cols, out, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        fill_unmatched(v, out, mu_row, mu_col)


@njit(parallel=True, cache=True)
def fill_reachable_cpu(n_cols, out, mu_row, mu_col, psi_col, inf):
    for v in prange(n_cols):
        fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


@njit(cache=True)
def fill_reachable_serial(n_cols, out, mu_row, mu_col, psi_col, inf):
    for v in range(n_cols):
        fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


@cuda_kernel
def fill_reachable_kernel(n_cols, out, mu_row, mu_col, psi_col, inf):
    v = cuda.grid(1)
    if v < n_cols:
        fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


# ---------------------------------------------------------------- compaction and counts (G-PR-SHRKRN)
# A compaction is mark (per-block flag counts), scan (the block sums become exclusive offsets, the
# total goes to counters[slot]), scatter (each block writes its live entries from its offset, order
# kept); a count is count + scan. On cpu a "block" is one of block_sums.size - 1 chunks of the range.

@register_jitable
def chunk_bounds(t, chunks, length):
    size = (length + chunks - 1) // chunks
    return t * size, min(length, (t + 1) * size)


@register_jitable
def block_scan(flag):
    """(exclusive prefix of flag within the block, block total); every thread of the block calls it.
    Thread 0 scans the block's flags serially in shared memory: two barriers per block instead of
    2 log2(blockDim), which is what the CUDA simulator pays for, at a few microseconds per
    compaction on a real GPU."""
    sm = cuda.shared.array(SCAN_SHARED, int32)
    t = cuda.threadIdx.x
    size = cuda.blockDim.x
    sm[t] = flag
    cuda.syncthreads()
    if t == 0:
        run = 0
        for j in range(size):
            c = sm[j]
            sm[j] = run
            run += c
        sm[size] = run
    cuda.syncthreads()
    return sm[t], sm[size]


@njit(parallel=True, cache=True)
def compact_mark_cpu(src, length, local, block_sums):
    chunks = block_sums.size - 1
    for t in prange(chunks):
        lo, hi = chunk_bounds(t, chunks, length)
        c = 0
        for i in range(lo, hi):
            if src[i] >= 0:
                c += 1
        block_sums[t] = c


@njit(cache=True)
def compact_mark_serial(src, length, local, block_sums):
    chunks = block_sums.size - 1
    for t in range(chunks):
        lo, hi = chunk_bounds(t, chunks, length)
        c = 0
        for i in range(lo, hi):
            if src[i] >= 0:
                c += 1
        block_sums[t] = c


@cuda_kernel
def compact_mark_kernel(src, length, local, block_sums):
    i = cuda.grid(1)
    flag = 0
    if i < length and src[i] >= 0:
        flag = 1
    excl, total = block_scan(flag)
    if i < length:
        local[i] = excl
    if cuda.threadIdx.x == 0:
        block_sums[cuda.blockIdx.x] = total


@njit(parallel=True, cache=True)
def compact_scatter_cpu(src, length, local, block_sums, dst):
    chunks = block_sums.size - 1
    for t in prange(chunks):
        lo, hi = chunk_bounds(t, chunks, length)
        k = block_sums[t]
        for i in range(lo, hi):
            if src[i] >= 0:
                dst[k] = src[i]
                k += 1


@njit(cache=True)
def compact_scatter_serial(src, length, local, block_sums, dst):
    chunks = block_sums.size - 1
    for t in range(chunks):
        lo, hi = chunk_bounds(t, chunks, length)
        k = block_sums[t]
        for i in range(lo, hi):
            if src[i] >= 0:
                dst[k] = src[i]
                k += 1


@cuda_kernel
def compact_scatter_kernel(src, length, local, block_sums, dst):
    i = cuda.grid(1)
    if i < length:
        v = src[i]
        if v >= 0:
            dst[block_sums[cuda.blockIdx.x] + local[i]] = v


@njit(parallel=True, cache=True)
def count_range_cpu(a, length, lo, hi, block_sums):
    chunks = block_sums.size - 1
    for t in prange(chunks):
        first, last = chunk_bounds(t, chunks, length)
        c = 0
        for i in range(first, last):
            if a[i] >= lo and a[i] < hi:
                c += 1
        block_sums[t] = c


@njit(cache=True)
def count_range_serial(a, length, lo, hi, block_sums):
    chunks = block_sums.size - 1
    for t in range(chunks):
        first, last = chunk_bounds(t, chunks, length)
        c = 0
        for i in range(first, last):
            if a[i] >= lo and a[i] < hi:
                c += 1
        block_sums[t] = c


@cuda_kernel
def count_range_kernel(a, length, lo, hi, block_sums):
    i = cuda.grid(1)
    flag = 0
    if i < length and a[i] >= lo and a[i] < hi:
        flag = 1
    excl, total = block_scan(flag)
    if cuda.threadIdx.x == 0:
        block_sums[cuda.blockIdx.x] = total


@njit(cache=True)
def scan_sums_cpu(block_sums, n_blocks, counters, slot):
    """block_sums[:n_blocks] becomes its exclusive prefix sum; counters[slot] gets the total."""
    run = 0
    for j in range(n_blocks):
        c = block_sums[j]
        block_sums[j] = run
        run += c
    counters[slot] = run


@cuda_kernel
def scan_sums_kernel(block_sums, n_blocks, counters, slot):
    """One block: each thread sums a segment of block_sums, the block scans the segment sums
    (block_scan), each thread writes its segment's offsets; counters[slot] gets the total."""
    t = cuda.threadIdx.x
    size = cuda.blockDim.x
    seg = (n_blocks + size - 1) // size
    lo = t * seg
    hi = min(lo + seg, n_blocks)
    s = 0
    for j in range(lo, hi):
        s += block_sums[j]
    run, total = block_scan(s)
    for j in range(lo, hi):
        c = block_sums[j]
        block_sums[j] = run
        run += c
    if t == 0:
        counters[slot] = total


# A prefix sum of a long array in three launches (per block, the block sums by scan_sums_kernel, the
# offsets added), for solvers.matching.transpose_device: here, beside block_scan, because the
# simulator swaps in its per-thread cuda only in the launched kernel's own module.

@cuda_kernel
def scan_blocks_kernel(a, length, block_sums):
    """a[:length] becomes its exclusive prefix within each block; block_sums gets the blocks' totals."""
    i = cuda.grid(1)
    v = 0
    if i < length:
        v = a[i]
    excl, total = block_scan(v)
    if i < length:
        a[i] = excl
    if cuda.threadIdx.x == 0:
        block_sums[cuda.blockIdx.x] = total


@cuda_kernel
def add_block_offsets_kernel(a, length, block_sums):
    i = cuda.grid(1)
    if i < length:
        a[i] += block_sums[cuda.blockIdx.x]


scan_sums_serial = scan_sums_cpu  # serial already: one loop over the block sums
