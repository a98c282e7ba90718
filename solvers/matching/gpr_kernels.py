"""G-PR steps (Deveci et al. 2013): the per-element bodies, their cpu loops and cuda kernels, in one file.

Imported only when a run starts (it imports numba and numba.cuda). Each step's body is written
once (``register_jitable``: the whole work of one GPU thread, or of one prange iteration); beside
it are the ``@njit(cache=True)`` cpu loop (prange; numba runs it on one thread for a small graph,
see solvers.targets.cpu) and the thin ``@cuda.jit(cache=True)`` kernel (one thread per element,
``i = cuda.grid(1)``), both taking the same arguments, paired in a ``Kernel`` record. The races
between threads (GPU threads, or prange threads) are the paper's benign ones: no locks, no
atomics. Flags are loop / level stamps that all writers write with the same value, so the host
never clears them.

Vertex arrays are int32: ``mu_row[u]`` the column of row u (-1 free), ``mu_col[v]`` the row of
column v (-1 free, -2 dead: no augmenting path can start at v). A column v is matched only when
``mu_row[mu_col[v]] == v``; a column that lost a race may keep a stale ``mu_col`` until
FIXMATCHING. ``psi_row`` / ``psi_col`` are the labels, ``inf = n_rows + n_cols`` the cap. Offsets
are int64, scalars int64 (Python ints): the one specialisation of every step.

Where the two targets differ in structure, the two loops of one Kernel differ and say so:
  * compaction and counts: cuda scans flags within each block (shared memory), then one block
    scans the block sums; the cpu loops treat ``block_sums`` as per-chunk counts (the host sizes it
    to chunks + 1 on cpu) and the same one-block scan runs there serially.
  * the device-resident loops (``COOPERATIVE``): on cuda one cooperative launch with grid syncs
    and a grid-uniform early exit; on cpu the same batch of steps in one compiled call that stops
    at the first idle loop.

``PTX_SIGNATURES`` gives every kernel a signature for ``cuda.compile_ptx`` (tests compile them all
for sm_90 without a GPU).
"""
from __future__ import annotations

from numba import cuda, int32, int64, njit, prange
from numba.extending import register_jitable

from ..targets.geometry import MAX_THREADS_PER_BLOCK, THREADS_PER_BLOCK
from ..targets.kernel import COOPERATIVE, EACH, ONE_BLOCK, Kernel

# slots of the small counters array the host reads back (device memory on cuda)
ACT = 0        # last loop whose active-column list was non-empty (G-PR's actExists, as a loop stamp)
GR = 1         # last BFS level that labelled a row (G-GR's uAdded, as a level stamp)
TOTAL = 2      # length of the last compacted list
N_COUNTERS = 8  # slots 3.. hold counts asked for by telemetry
CHEAP_ROUNDS = 3
SCAN_SHARED = MAX_THREADS_PER_BLOCK + 1  # a compile-time size for the block scans' shared arrays


# ================================================================ cheap matching

@register_jitable
def cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd):
    """Cheap matching, one round for free column v: claim a free neighbour row (last writer wins)."""
    if mu_col[v] != -1:
        return 0
    start = col_ptr[v]
    deg = col_ptr[v + 1] - start
    if deg == 0:
        return 0
    # columns start at different offsets so neighbouring columns rarely claim the same row
    off = (v + rnd) % deg
    for j in range(deg):
        jj = off + j
        if jj >= deg:
            jj -= deg
        u = row_ind[start + jj]
        if mu_row[u] == -1:
            mu_row[u] = v
            mu_col[v] = u
            return 1
    return 0


@register_jitable
def cheap_settle(v, mu_row, mu_col):
    """Cheap matching: a column whose claimed row went to another column is free again."""
    u = mu_col[v]
    if u >= 0 and mu_row[u] != v:
        mu_col[v] = -1
    return 0


@njit(parallel=True, cache=True)
def cheap_propose_cpu(n_cols, col_ptr, row_ind, mu_row, mu_col, rnd):
    for v in prange(n_cols):
        cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)


@cuda.jit(cache=True)
def cheap_propose_kernel(n_cols, col_ptr, row_ind, mu_row, mu_col, rnd):
    v = cuda.grid(1)
    if v < n_cols:
        cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)


@njit(parallel=True, cache=True)
def cheap_settle_cpu(n_cols, mu_row, mu_col):
    for v in prange(n_cols):
        cheap_settle(v, mu_row, mu_col)


@cuda.jit(cache=True)
def cheap_settle_kernel(n_cols, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        cheap_settle(v, mu_row, mu_col)


# ================================================================ global relabel (G-GR)

@register_jitable
def init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf):
    """INITRELABEL over rows then columns: free rows get 0, everything else the cap. 1 for a free row."""
    if i < n_rows:
        if mu_row[i] == -1:
            psi_row[i] = 0
            return 1
        psi_row[i] = inf
        return 0
    psi_col[i - n_rows] = inf
    return 0


@register_jitable
def gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf):
    """G-GR-KRNL for row u at BFS level ``level`` (even); 1 when it labelled a matched row."""
    if psi_row[u] != level:
        return 0
    added = 0
    for e in range(row_ptr[u], row_ptr[u + 1]):
        v = col_ind[e]
        if psi_col[v] == inf:
            psi_col[v] = level + 1
            w = mu_col[v]
            if w > -1 and mu_row[w] == v:
                psi_row[w] = level + 2
                added = 1
    return added


@njit(parallel=True, cache=True)
def init_relabel_cpu(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    counters[GR] = -2
    for i in prange(n_rows + n_cols):
        init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


@cuda.jit(cache=True)
def init_relabel_kernel(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    i = cuda.grid(1)
    if i == 0:
        counters[GR] = -2
    if i < n_rows + n_cols:
        init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


@cuda.jit(cache=True)
def gr_level_kernel(level, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    u = cuda.grid(1)
    if u < n_rows:
        if gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf):
            counters[GR] = level


# The resident BFS: n_levels levels from level0, stopping after the first level that labels no row
# (every later level is a no-op: no row carries a higher label).

@njit(parallel=True, cache=True)
def gr_levels_cpu(level0, n_levels, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    for j in range(n_levels):
        level = level0 + 2 * j
        added = 0
        for u in prange(n_rows):
            added += gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf)
        if added == 0:
            break
        counters[GR] = level


# One launch runs many levels or loops: grid-stride over the elements, grid syncs where separate
# launches had their boundaries, and an early return when a step finds nothing to do. The exit test
# must be uniform across the grid (every thread must reach every grid sync): stamps only grow, and
# a fast thread may already have stamped the next step when a slow one reads the flag, so the test
# is "stamp < this step" (nobody stamped it), never "stamp != this step".

@cuda.jit(cache=True)
def gr_levels_coop_kernel(level0, n_levels, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf,
                          counters):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(n_levels):
        level = level0 + 2 * j
        for u in range(start, n_rows, stride):
            if gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf):
                counters[GR] = level
        grid.sync()
        if counters[GR] < level:
            return


# ================================================================ push-relabel (G-PR-KRNL, INITKRN, PUSHKRN)

@register_jitable
def push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf):
    """G-PR-KRNL (G-PR-First): one thread per column; pushes when v is active. 1 when v was active."""
    r = mu_col[v]
    if r == -2 or (r >= 0 and mu_row[r] == v):
        return 0
    psi_min = inf
    u = -1
    target = psi_col[v] - 1
    for e in range(col_ptr[v], col_ptr[v + 1]):
        x = row_ind[e]
        p = psi_row[x]
        if p < psi_min:
            psi_min = p
            u = x
            if psi_min <= target:
                break
    if psi_min < inf:
        mu_row[u] = v
        mu_col[v] = u
        psi_col[v] = psi_min + 1
        psi_row[u] = psi_min + 2
    else:
        mu_col[v] = -2
    return 1


@register_jitable
def init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
    """G-PR-INITKRN for slot i. After the previous loop's swap, a_p[i] is the column the slot
    processed and a_c[i] the column its push displaced. A processed column still unmatched (it lost
    a race or was held back) is rolled back into the slot; else the displaced one (or -1) takes it.
    Stamps the slot's column with ``loop`` in i_a; 1 when the slot is active."""
    v = a_p[i]
    if v == -1:
        return 0
    r = mu_col[v]
    if r == -1 or (r >= 0 and mu_row[r] != v):
        a_c[i] = v
    else:
        v = a_c[i]
    if v == -1:
        return 0
    i_a[v] = loop
    return 1


@register_jitable
def push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    """G-PR-PUSHKRN for slot i: push-relabel of active column a_c[i]; a_p[i] gets the column it
    displaces. A row whose mate is itself active in this loop (i_a == loop) is left alone, so a
    column can never sit in two slots."""
    v = a_c[i]
    if v == -1:
        a_p[i] = -1
        return 0
    psi_min = inf
    u = -1
    target = psi_col[v] - 1
    for e in range(col_ptr[v], col_ptr[v + 1]):
        x = row_ind[e]
        p = psi_row[x]
        if p < psi_min:
            psi_min = p
            u = x
            if psi_min <= target:
                break
    if psi_min < inf:
        w = mu_row[u]
        if w == -1 or i_a[w] != loop:
            mu_row[u] = v
            mu_col[v] = u
            psi_col[v] = psi_min + 1
            psi_row[u] = psi_min + 2
            a_p[i] = w
        else:
            a_p[i] = -1
    else:
        mu_col[v] = -2
        a_c[i] = -1
        a_p[i] = -1
    return 1


@njit(parallel=True, cache=True)
def push_all_cpu(loop, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    act = 0
    for v in prange(n_cols):
        act += push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf)
    if act > 0:
        counters[ACT] = loop


@cuda.jit(cache=True)
def push_all_kernel(loop, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    v = cuda.grid(1)
    if v < n_cols:
        if push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf):
            counters[ACT] = loop


@njit(parallel=True, cache=True)
def init_list_cpu(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    act = 0
    for i in prange(length):
        act += init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a)
    if act > 0:
        counters[ACT] = loop


@cuda.jit(cache=True)
def init_list_kernel(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    i = cuda.grid(1)
    if i < length:
        if init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
            counters[ACT] = loop


@njit(parallel=True, cache=True)
def push_list_cpu(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    for i in prange(length):
        push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@cuda.jit(cache=True)
def push_list_kernel(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    i = cuda.grid(1)
    if i < length:
        push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


# The resident push loops: n_loops loops from loop0, stopping at the first loop with no active
# column. Lists: INITKRN + PUSHKRN per loop, A_c and A_p swapping roles (buf0 is A_c in loop0 when
# ``cur`` is 0); the host counts all n_loops swaps, as once no column is active both lists hold -1.

@njit(parallel=True, cache=True)
def push_loops_cpu(loop0, n_loops, length, buf0, buf1, cur, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col,
                   i_a, inf, counters):
    for j in range(n_loops):
        loop = loop0 + j
        a_c, a_p = buf0, buf1
        if (cur + j) % 2 == 1:
            a_c, a_p = buf1, buf0
        act = 0
        for i in prange(length):
            act += init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a)
        if act == 0:
            break
        counters[ACT] = loop
        for i in prange(length):
            push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@cuda.jit(cache=True)
def push_loops_coop_kernel(loop0, n_loops, length, buf0, buf1, cur, col_ptr, row_ind, psi_row, psi_col, mu_row,
                           mu_col, i_a, inf, counters):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(n_loops):
        loop = loop0 + j
        a_c, a_p = buf0, buf1
        if (cur + j) % 2 == 1:
            a_c, a_p = buf1, buf0
        for i in range(start, length, stride):
            if init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
                counters[ACT] = loop
        grid.sync()
        if counters[ACT] < loop:
            return
        for i in range(start, length, stride):
            push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)
        grid.sync()


@njit(parallel=True, cache=True)
def push_all_loops_cpu(loop0, n_loops, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    for j in range(n_loops):
        act = 0
        for v in prange(n_cols):
            act += push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf)
        if act == 0:
            break
        counters[ACT] = loop0 + j


@cuda.jit(cache=True)
def push_all_coop_kernel(loop0, n_loops, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(n_loops):
        loop = loop0 + j
        for v in range(start, n_cols, stride):
            if push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf):
                counters[ACT] = loop
        grid.sync()
        if counters[ACT] < loop:
            return


# ================================================================ matching repair and the active lists

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


@cuda.jit(cache=True)
def fix_matching_kernel(n_cols, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        fix_matching(v, mu_row, mu_col)


@njit(parallel=True, cache=True)
def fill_unmatched_cpu(n_cols, out, mu_row, mu_col):
    for v in prange(n_cols):
        fill_unmatched(v, out, mu_row, mu_col)


@cuda.jit(cache=True)
def fill_unmatched_kernel(n_cols, out, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        fill_unmatched(v, out, mu_row, mu_col)


@njit(parallel=True, cache=True)
def fill_reachable_cpu(n_cols, out, mu_row, mu_col, psi_col, inf):
    for v in prange(n_cols):
        fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


@cuda.jit(cache=True)
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


@cuda.jit(device=True, cache=True)
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


@cuda.jit(cache=True)
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


@cuda.jit(cache=True)
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


@cuda.jit(cache=True)
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


@cuda.jit(cache=True)
def scan_sums_kernel(block_sums, n_blocks, counters, slot):
    """One block: each thread sums a segment of block_sums, thread 0 scans the segment sums, each
    thread writes its segment's offsets; counters[slot] gets the total."""
    sm = cuda.shared.array(SCAN_SHARED, int32)
    t = cuda.threadIdx.x
    size = cuda.blockDim.x
    seg = (n_blocks + size - 1) // size
    lo = t * seg
    hi = min(lo + seg, n_blocks)
    s = 0
    for j in range(lo, hi):
        s += block_sums[j]
    sm[t] = s
    cuda.syncthreads()
    if t == 0:
        run = 0
        for j in range(size):
            c = sm[j]
            sm[j] = run
            run += c
        sm[size] = run
    cuda.syncthreads()
    run = sm[t]
    for j in range(lo, hi):
        c = block_sums[j]
        block_sums[j] = run
        run += c
    if t == 0:
        counters[slot] = sm[size]


# ================================================================ the Kernel records

# a cooperative launch: one block per THREADS_PER_BLOCK elements, at most what fits on the device
_COOP = dict(shape=COOPERATIVE, tiles=THREADS_PER_BLOCK)

CHEAP_PROPOSE = Kernel("gpr.cheap_propose", cpu=cheap_propose_cpu, cuda=cheap_propose_kernel, shape=EACH)
CHEAP_SETTLE = Kernel("gpr.cheap_settle", cpu=cheap_settle_cpu, cuda=cheap_settle_kernel, shape=EACH)
INIT_RELABEL = Kernel("gpr.init_relabel", cpu=init_relabel_cpu, cuda=init_relabel_kernel, shape=EACH)
# one BFS level per launch (cuda without the resident loop); the cpu always runs GR_LEVELS, a batch
# that stops by itself after the last level
GR_LEVEL = Kernel("gpr.gr_level", cuda=gr_level_kernel, shape=EACH)
GR_LEVELS = Kernel("gpr.gr_levels", cpu=gr_levels_cpu, cuda=gr_levels_coop_kernel, **_COOP)
PUSH_ALL = Kernel("gpr.push_all", cpu=push_all_cpu, cuda=push_all_kernel, shape=EACH)
PUSH_ALL_LOOPS = Kernel("gpr.push_all_loops", cpu=push_all_loops_cpu, cuda=push_all_coop_kernel, **_COOP)
INIT_LIST = Kernel("gpr.init_list", cpu=init_list_cpu, cuda=init_list_kernel, shape=EACH)
PUSH_LIST = Kernel("gpr.push_list", cpu=push_list_cpu, cuda=push_list_kernel, shape=EACH)
PUSH_LOOPS = Kernel("gpr.push_loops", cpu=push_loops_cpu, cuda=push_loops_coop_kernel, **_COOP)
FIX_MATCHING = Kernel("gpr.fix_matching", cpu=fix_matching_cpu, cuda=fix_matching_kernel, shape=EACH)
FILL_UNMATCHED = Kernel("gpr.fill_unmatched", cpu=fill_unmatched_cpu, cuda=fill_unmatched_kernel, shape=EACH)
FILL_REACHABLE = Kernel("gpr.fill_reachable", cpu=fill_reachable_cpu, cuda=fill_reachable_kernel, shape=EACH)
COMPACT_MARK = Kernel("gpr.compact_mark", cpu=compact_mark_cpu, cuda=compact_mark_kernel, shape=EACH)
COMPACT_SCATTER = Kernel("gpr.compact_scatter", cpu=compact_scatter_cpu, cuda=compact_scatter_kernel, shape=EACH)
COUNT_RANGE = Kernel("gpr.count_range", cpu=count_range_cpu, cuda=count_range_kernel, shape=EACH)
SCAN_SUMS = Kernel("gpr.scan_sums", cpu=scan_sums_cpu, cuda=scan_sums_kernel, shape=ONE_BLOCK)
COOPERATIVE_KERNELS = (GR_LEVELS, PUSH_ALL_LOOPS, PUSH_LOOPS)

# every kernel's one specialisation (int64 scalars, int32 vertex arrays, int64 offsets), for PTX tests
_I = int64
_A = int32[::1]
_P = int64[::1]
PTX_SIGNATURES = (
    (CHEAP_PROPOSE, (_I, _P, _A, _A, _A, _I)),
    (CHEAP_SETTLE, (_I, _A, _A)),
    (INIT_RELABEL, (_I, _I, _A, _A, _A, _I, _A)),
    (GR_LEVEL, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (GR_LEVELS, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (PUSH_ALL, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (PUSH_ALL_LOOPS, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (INIT_LIST, (_I, _I, _A, _A, _A, _A, _A, _A)),
    (PUSH_LIST, (_I, _I, _A, _A, _P, _A, _A, _A, _A, _A, _A, _I)),
    (PUSH_LOOPS, (_I, _I, _I, _A, _A, _I, _P, _A, _A, _A, _A, _A, _A, _I, _A)),
    (FIX_MATCHING, (_I, _A, _A)),
    (FILL_UNMATCHED, (_I, _A, _A, _A)),
    (FILL_REACHABLE, (_I, _A, _A, _A, _A, _I)),
    (COMPACT_MARK, (_A, _I, _A, _A)),
    (COMPACT_SCATTER, (_A, _I, _A, _A, _A)),
    (COUNT_RANGE, (_A, _I, _I, _I, _A)),
    (SCAN_SUMS, (_A, _I, _A, _I)),
)
