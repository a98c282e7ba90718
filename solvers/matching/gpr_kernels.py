"""G-PR steps (Deveci et al. 2013): the per-element bodies, their cpu loops and cuda kernels, and the
``Kernel`` records of every step.

Imported only when a run starts (it imports numba; numba.cuda only when a kernel is built). Each step's body is written
once (``register_jitable``: the whole work of one GPU thread, or of one loop iteration); beside it
are its ``@njit(cache=True)`` cpu loops, a prange one (``*_cpu``) and a plain one for graphs too
small to pay for threads (``*_serial``), and the thin ``@cuda_kernel`` kernel (one thread
per element, ``i = cuda.grid(1)``), all taking the same arguments. ``PARALLEL`` and ``SERIAL`` pair
each step's cpu loop with its kernel in a ``Kernel``. This file holds the cheap matching, the
global relabel and the pushes; solvers.matching.gpr_lists holds FIXMATCHING, the list fills, the
compaction and the counts (and takes nothing from here, so the two never disagree on a constant;
the kernel cache is keyed by a hash of every compiled source, solvers.targets.cache).

The races between threads (GPU threads, or prange threads) are the paper's benign ones: no locks,
no atomics. Flags are loop / level stamps that all writers write with the same value, so the host
never clears them.

Vertex arrays are int32: ``mu_row[u]`` the column of row u (-1 free), ``mu_col[v]`` the row of
column v (-1 free, -2 dead: no augmenting path can start at v). A column v is matched only when
``mu_row[mu_col[v]] == v``; a column that lost a race may keep a stale ``mu_col`` until
FIXMATCHING. ``psi_row`` / ``psi_col`` are the labels, ``inf = n_rows + n_cols`` the cap. Offsets
are int64, scalars int64 (Python ints): the one specialisation of every step.

Where the two targets differ in structure, the loops of one Kernel differ and say so:
  * compaction and counts (gpr_lists): cuda scans flags within each block (shared memory), then one
    block scans the block sums; the cpu loops treat ``block_sums`` as per-chunk counts (the host
    sizes it to chunks + 1 on cpu) and the same scan runs there serially.
  * the device-resident loops (``COOPERATIVE``): on cuda one cooperative launch with grid syncs and
    a grid-uniform early exit; on cpu the same batch of steps in one compiled call that stops at the
    first idle loop.

``PTX_SIGNATURES`` gives every kernel a signature for ``cuda.compile_ptx`` (tests compile them all
for sm_90 without a GPU).
"""
from __future__ import annotations

from numba import int32, int64, njit, prange
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import THREADS_PER_BLOCK
from ..targets.kernel import COOPERATIVE, EACH, ONE_BLOCK, Kernel
from .gpr_lists import (compact_mark_cpu, compact_mark_kernel, compact_mark_serial, compact_scatter_cpu,  # noqa: F401
                        compact_scatter_kernel, compact_scatter_serial, count_range_cpu, count_range_kernel,
                        count_range_serial, fill_reachable_cpu, fill_reachable_kernel, fill_reachable_serial,
                        fill_unmatched_cpu, fill_unmatched_kernel, fill_unmatched_serial, fix_matching_cpu,
                        fix_matching_kernel, fix_matching_serial, scan_sums_cpu, scan_sums_kernel, scan_sums_serial)

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

# slots of the small counters array the host reads back (device memory on cuda)
ACT = 0        # last loop whose active-column list was non-empty (G-PR's actExists, as a loop stamp)
GR = 1         # last BFS level that labelled a row (G-GR's uAdded, as a level stamp)
TOTAL = 2      # length of the last compacted list
N_COUNTERS = 8  # slots 3.. hold counts asked for by telemetry
CHEAP_ROUNDS = 3


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


@njit(cache=True)
def cheap_propose_serial(n_cols, col_ptr, row_ind, mu_row, mu_col, rnd):
    for v in range(n_cols):
        cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)


@cuda_kernel
def cheap_propose_kernel(n_cols, col_ptr, row_ind, mu_row, mu_col, rnd):
    v = cuda.grid(1)
    if v < n_cols:
        cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)


@njit(parallel=True, cache=True)
def cheap_settle_cpu(n_cols, mu_row, mu_col):
    for v in prange(n_cols):
        cheap_settle(v, mu_row, mu_col)


@njit(cache=True)
def cheap_settle_serial(n_cols, mu_row, mu_col):
    for v in range(n_cols):
        cheap_settle(v, mu_row, mu_col)


@cuda_kernel
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


@njit(cache=True)
def init_relabel_serial(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    counters[GR] = -2
    for i in range(n_rows + n_cols):
        init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


@cuda_kernel
def init_relabel_kernel(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    i = cuda.grid(1)
    if i == 0:
        counters[GR] = -2
    if i < n_rows + n_cols:
        init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


@cuda_kernel
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


@njit(cache=True)
def gr_levels_serial(level0, n_levels, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    for j in range(n_levels):
        level = level0 + 2 * j
        added = 0
        for u in range(n_rows):
            added += gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf)
        if added == 0:
            break
        counters[GR] = level


# One launch runs many levels or loops: grid-stride over the elements, grid syncs where separate
# launches had their boundaries, and an early return when a step finds nothing to do. The exit test
# must be uniform across the grid (every thread must reach every grid sync): stamps only grow, and
# a fast thread may already have stamped the next step when a slow one reads the flag, so the test
# is "stamp < this step" (nobody stamped it), never "stamp != this step".

@cuda_kernel
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


@njit(cache=True)
def push_all_serial(loop, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    act = 0
    for v in range(n_cols):
        act += push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf)
    if act > 0:
        counters[ACT] = loop


@cuda_kernel
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


@njit(cache=True)
def init_list_serial(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    act = 0
    for i in range(length):
        act += init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a)
    if act > 0:
        counters[ACT] = loop


@cuda_kernel
def init_list_kernel(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    i = cuda.grid(1)
    if i < length:
        if init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
            counters[ACT] = loop


@njit(parallel=True, cache=True)
def push_list_cpu(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    for i in prange(length):
        push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@njit(cache=True)
def push_list_serial(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    for i in range(length):
        push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@cuda_kernel
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


@njit(cache=True)
def push_loops_serial(loop0, n_loops, length, buf0, buf1, cur, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col,
                      i_a, inf, counters):
    for j in range(n_loops):
        loop = loop0 + j
        a_c, a_p = buf0, buf1
        if (cur + j) % 2 == 1:
            a_c, a_p = buf1, buf0
        act = 0
        for i in range(length):
            act += init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a)
        if act == 0:
            break
        counters[ACT] = loop
        for i in range(length):
            push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@cuda_kernel
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


@njit(cache=True)
def push_all_loops_serial(loop0, n_loops, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf,
                          counters):
    for j in range(n_loops):
        act = 0
        for v in range(n_cols):
            act += push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf)
        if act == 0:
            break
        counters[ACT] = loop0 + j


@cuda_kernel
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


# ================================================================ the Kernel records

# a cooperative launch: one block per THREADS_PER_BLOCK elements, at most what fits on the device
_COOP = dict(shape=COOPERATIVE, tiles=THREADS_PER_BLOCK)


class Steps:
    """The Kernel of every step with one cpu form, "cpu" (prange loops) or "serial" (plain loops,
    for graphs too small to pay for threads: a run on them never loads the parallel loops either,
    which costs more than its solve). Both carry the same cuda kernels."""

    def __init__(self, form: str):
        def kernel(step, cuda_form, **shape):
            cpu = _LOOPS.get(f"{step}_{form}")
            suffix = "" if form == "cpu" else f".{form}"
            return Kernel(f"gpr.{step}{suffix}", cpu=cpu, cuda=cuda_form, **(shape or {"shape": EACH}))

        self.CHEAP_PROPOSE = kernel("cheap_propose", cheap_propose_kernel)
        self.CHEAP_SETTLE = kernel("cheap_settle", cheap_settle_kernel)
        self.INIT_RELABEL = kernel("init_relabel", init_relabel_kernel)
        # one BFS level per launch (cuda without the resident loop); the cpu always runs GR_LEVELS, a
        # batch that stops by itself after the last level
        self.GR_LEVEL = kernel("gr_level", gr_level_kernel)
        self.GR_LEVELS = kernel("gr_levels", gr_levels_coop_kernel, **_COOP)
        self.PUSH_ALL = kernel("push_all", push_all_kernel)
        self.PUSH_ALL_LOOPS = kernel("push_all_loops", push_all_coop_kernel, **_COOP)
        self.INIT_LIST = kernel("init_list", init_list_kernel)
        self.PUSH_LIST = kernel("push_list", push_list_kernel)
        self.PUSH_LOOPS = kernel("push_loops", push_loops_coop_kernel, **_COOP)
        self.FIX_MATCHING = kernel("fix_matching", fix_matching_kernel)
        self.FILL_UNMATCHED = kernel("fill_unmatched", fill_unmatched_kernel)
        self.FILL_REACHABLE = kernel("fill_reachable", fill_reachable_kernel)
        self.COMPACT_MARK = kernel("compact_mark", compact_mark_kernel)
        self.COMPACT_SCATTER = kernel("compact_scatter", compact_scatter_kernel)
        self.COUNT_RANGE = kernel("count_range", count_range_kernel)
        self.SCAN_SUMS = kernel("scan_sums", scan_sums_kernel, shape=ONE_BLOCK)
        self.COOPERATIVE = (self.GR_LEVELS, self.PUSH_ALL_LOOPS, self.PUSH_LOOPS)

    def kernels(self) -> list:
        return [k for k in vars(self).values() if isinstance(k, Kernel)]


# every cpu loop by name (the module's own and gpr_lists'), read once here
_LOOPS = {name: obj for name, obj in globals().items() if name.endswith(("_cpu", "_serial"))}
PARALLEL = Steps("cpu")
SERIAL = Steps("serial")

# every kernel's one specialisation (int64 scalars, int32 vertex arrays, int64 offsets), for PTX tests
_I = int64
_A = int32[::1]
_P = int64[::1]
P = PARALLEL
PTX_SIGNATURES = (
    (P.CHEAP_PROPOSE, (_I, _P, _A, _A, _A, _I)),
    (P.CHEAP_SETTLE, (_I, _A, _A)),
    (P.INIT_RELABEL, (_I, _I, _A, _A, _A, _I, _A)),
    (P.GR_LEVEL, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (P.GR_LEVELS, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (P.PUSH_ALL, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (P.PUSH_ALL_LOOPS, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    (P.INIT_LIST, (_I, _I, _A, _A, _A, _A, _A, _A)),
    (P.PUSH_LIST, (_I, _I, _A, _A, _P, _A, _A, _A, _A, _A, _A, _I)),
    (P.PUSH_LOOPS, (_I, _I, _I, _A, _A, _I, _P, _A, _A, _A, _A, _A, _A, _I, _A)),
    (P.FIX_MATCHING, (_I, _A, _A)),
    (P.FILL_UNMATCHED, (_I, _A, _A, _A)),
    (P.FILL_REACHABLE, (_I, _A, _A, _A, _A, _I)),
    (P.COMPACT_MARK, (_A, _I, _A, _A)),
    (P.COMPACT_SCATTER, (_A, _I, _A, _A, _A)),
    (P.COUNT_RANGE, (_A, _I, _I, _I, _A)),
    (P.SCAN_SUMS, (_A, _I, _A, _I)),
)
