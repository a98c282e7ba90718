"""GPU kernels for batches of small linear assignment problems: one warp (items of up to WARP_COLS
columns, ``SOLVE_WARP``) or one thread block (wider items, ``SOLVE``) per item, the same search body.

``SOLVE``: a shortest augmenting path solver (Jonker-Volgenant's augmentation, the algorithm of
scipy's ``linear_sum_assignment``, Crouse 2016) run by one block per item, grid-stride over the
items, so a whole batch is one launch with no host round trip. An item is a dense row-major
matrix of n rows <= m columns (the host orients it), read from a flat ``costs`` array at
``offsets[b]``; forbidden pairs are +inf. Rows are augmented in order 0..n-1; for each one a
Dijkstra search over the columns runs in the block:

* each thread owns the columns j = t, t + blockDim, ... and keeps their shortest distance, predecessor
  row, visited flag, potential v_j and assigned row in shared memory, beside the rows' u_i and
  assigned columns (global scratch and the output arrays, laid out by ``col_offsets`` and
  ``row_offsets``, for an item wider than ``SMEM_COLS``): only the owner touches a column's entries
  during a search, so a search step needs one barrier;
* a step relaxes the owned columns from the row just reached (coalesced loads of that cost row),
  then takes a block-wide argmin over unvisited columns with the key (distance, free column first,
  lowest index): shuffles inside a warp and one shared-memory exchange between warps (double
  buffered by step parity: one ``syncthreads`` per step), or, under the simulator (no shuffles), a
  shared-memory tree. Every thread gets the same winner, so all branch alike and the run is
  deterministic;
* the search stops at a free column; the visited columns' potentials drop by (d_min - d_j), their
  rows' rise by the same, the root row's by d_min; thread 0 flips the path.

Duals are float64 for float32 costs too. Potentials start at 0 and only visited (then assigned)
columns are lowered, so v <= 0 and v_j = 0 on columns never assigned: the rectangular LP's dual
(``solvers.assignment.hungarian``'s docstring). A search whose minimum distance is +inf proves the
rows cannot all be assigned (no augmenting path through allowed pairs): status 1, the item stops
there. ``iterations`` counts search steps (columns scanned), the work measure of this method.

``CERTIFY``: an independent check, one block per item, sharing nothing with ``SOLVE`` beyond the
target layer: per item the largest violation of dual feasibility (c_ij - u_i - v_j >= 0 on finite
pairs), complementary slackness (equality on assigned pairs, v_j = 0 on unassigned columns) and,
for rows < cols, the sign (v_j <= 0; a square item's v is free: packing.PackedSolution); the assignment's value and the dual objective as float64 sums; a magnitude
scale (largest |c|, |u|, |v|) for the host's tolerance; and whether the assignment is valid
(every row one column in range, on a finite pair, no column twice).

No cpu loops here: the batch's cpu backend (``solvers.batch.cpu``) runs its own per-item solver.
"""
from __future__ import annotations

import math
import os

import numpy as np
from numba import config as numba_config
from numba import float64, int32, int64
from numba.extending import register_jitable

from ..dual_steps import checksum_term, dual_size, float64_bits, floor_step
from ..near_ties import NO_LOW_BIT, cost_step, room_for_another, settle_row
from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import WARP_SIZE
from ..targets.kernel import BLOCK_PER_ITEM, EACH, Kernel

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

BLOCK = 128          # threads per item on a GPU (a multiple of the warp; <= TREE_BLOCK)
SIM_BLOCK = 8        # threads per item under the simulator (a power of two)
TREE_BLOCK = 128     # largest block the shared-memory tree reductions take
SMEM_COLS = 512      # items with at most this many columns keep their column state in shared memory
# items with at most WARP_COLS columns are solved by one warp each (on a GPU; measured on an H100:
# 10000 x 100 x 100 warp 9.7 ms vs block 23.7; 1000 x 256 x 256 warp 16.0 vs block 14.7), WARPS_PER_BLOCK
# of them a block. MATCHSCOPE_BATCH_WARP="cols,warps" overrides both, for measuring (the shared state,
# 40 bytes a column, must stay under 48 KB a block; give each setting its own NUMBA_CACHE_DIR: the
# on-disk cache does not see the values of these constants)
WARP_COLS, WARPS_PER_BLOCK = (int(x) for x in os.environ.get("MATCHSCOPE_BATCH_WARP", "128,4").split(","))
WARP_SHARED = WARPS_PER_BLOCK * WARP_COLS  # its shared column state (a constant: shared arrays need one)
MAX_WARPS = 32
FULL_MASK = 0xFFFFFFFF
SOLVED, INFEASIBLE = 0, 1
# registers per thread the solver kernels may use (ptxas spills the rest to local memory): fewer
# registers, more items resident per SM (128-thread blocks: 64 -> 8 blocks, 72 -> 7, 80 -> 6, 96 -> 5).
# MATCHSCOPE_BATCH_MAX_REGISTERS overrides it (0: the compiler's choice), for measuring.
MAX_REGISTERS = int(os.environ.get("MATCHSCOPE_BATCH_MAX_REGISTERS", "64"))
# how a square item starts (0: duals 0, searches only; 1: column reduction; 2: and augmenting row
# reduction), for the warp kernel and the block kernel; MATCHSCOPE_BATCH_REDUCE="warp,block" overrides.
# Measured on an H100 (f755656, 64 registers): column reduction alone wins on both kernels (1000 x 256 x 256:
# 8.4 ms vs 13.9 with row reduction, 13.4 searches only; 10000 x 100 x 100: 6.8 vs 13.9 / 8.5): a row
# reduction scan costs a group a search step's two argmins and barriers, and saves fewer steps than on a CPU
REDUCE_WARP, REDUCE_BLOCK = (int(x) for x in os.environ.get("MATCHSCOPE_BATCH_REDUCE", "1,1").split(","))
SOLVER_OPTIONS = {"max_registers": MAX_REGISTERS} if MAX_REGISTERS > 0 and not numba_config.ENABLE_CUDASIM else {}


# ---------------------------------------------------------------------------------------------
# the solver

# how a group of lanes searches together (``mode``)
TREE = 0    # the simulator: a whole block, shared-memory tree reductions, syncthreads (no shuffles there)
BLOCK_MODE = 1  # a GPU block: butterflies inside each warp, one shared exchange between warps, syncthreads
WARP_MODE = 2   # a GPU warp: butterflies only, syncwarp


@register_jitable
def _better(val, key, other_val, other_key):
    return other_val < val or (other_val == val and other_key < key)


@register_jitable
def group_sync(mode):
    if mode == WARP_MODE:
        cuda.syncwarp(FULL_MASK)
    else:
        cuda.syncthreads()


@register_jitable
def block_min(shared, value, t, nt):
    """The least of the block's threads' ``value`` (nt a power of two), through ``shared`` (one slot
    per thread), for every thread. The caller syncs again before writing ``shared`` anew."""
    shared[t] = value
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            shared[t] = min(shared[t], shared[t + step])
        cuda.syncthreads()
        step //= 2
    return shared[0]


@register_jitable
def group_argmin(val, key, red_val, red_key, parity, lane, lanes, mode):
    """The group's minimum (val, key) in lexicographic order, returned to every lane of it."""
    if mode != TREE:
        off = WARP_SIZE // 2
        while off > 0:  # butterfly: every lane ends with the warp's minimum
            other_val = cuda.shfl_xor_sync(FULL_MASK, val, off)
            other_key = cuda.shfl_xor_sync(FULL_MASK, key, off)
            if _better(val, key, other_val, other_key):
                val = other_val
                key = other_key
            off //= 2
        if mode == WARP_MODE:
            return val, key
        slot = parity * MAX_WARPS
        if lane % WARP_SIZE == 0:
            red_val[slot + lane // WARP_SIZE] = val
            red_key[slot + lane // WARP_SIZE] = key
        cuda.syncthreads()  # the other parity's slots are free again: one barrier per step
        val = red_val[slot]
        key = red_key[slot]
        for w in range(1, lanes // WARP_SIZE):
            if _better(val, key, red_val[slot + w], red_key[slot + w]):
                val = red_val[slot + w]
                key = red_key[slot + w]
        return val, key
    red_val[lane] = val
    red_key[lane] = key
    cuda.syncthreads()
    s = lanes // 2
    while s > 0:
        if lane < s and _better(red_val[lane], red_key[lane], red_val[lane + s], red_key[lane + s]):
            red_val[lane] = red_val[lane + s]
            red_key[lane] = red_key[lane + s]
        cuda.syncthreads()
        s //= 2
    val = red_val[0]
    key = red_key[0]
    cuda.syncthreads()
    return val, key


@register_jitable
def relax(j, c, so, m, i, minv, ui, vv, dist, path, r4c, seen, low, low_key):
    """Column j (cost c from row i) in one search step: its distance through row i, and the
    lane's running minimum key (distance, free column first, lowest index)."""
    k = so + j
    if seen[k] == 0:
        r = minv + c - ui - vv[k]
        d = dist[k]
        if r < d:
            d = r
            dist[k] = r
            path[k] = i
        key = j if r4c[k] < 0 else j + m
        if d < low or (d == low and key < low_key):
            low = d
            low_key = key
    return low, low_key


@register_jitable
def reduce_square(C, base, n, r0, row_to_col, u, vv, dist, path, r4c, so, red_val, red_key, lane, lanes, mode,
                  passes):
    """A square item's start, as the cpu backend's (Jonker & Volgenant's column reduction and two
    bounded passes of augmenting row reduction), by the group. Column reduction: v_j = min_i c_ij
    (lowest i on ties), and each row takes the lowest column whose minimum lies on it (an atomic
    min, so the result does not depend on the lanes' order). Augmenting row reduction: a free row
    takes the column of its least reduced cost c_ij - v_j, lowering that v_j to its second least
    (two group argmins by (value, column)); the row it displaces bids next. ``path`` holds the free
    rows meanwhile, ``dist`` a scanned row's reduced costs. Columns reached only by +inf keep v = 0
    and rows left free go to the searches. Duals stay feasible (v only falls; an assigned row sits
    at its minimum). Returns (rows scanned, parity of the reduction buffers)."""
    m = n
    for i in range(lane, n, lanes):
        row_to_col[r0 + i] = m  # "no column yet" for the atomic min below
    group_sync(mode)
    for j in range(lane, m, lanes):
        best = np.inf
        arg = -1
        for i in range(n):
            c = float64(C[base + i * m + j])
            if c < best:
                best = c
                arg = i
        k = so + j
        r4c[k] = arg
        if arg >= 0:
            vv[k] = best
            cuda.atomic.min(row_to_col, r0 + arg, j)
    group_sync(mode)
    for j in range(lane, m, lanes):
        k = so + j
        arg = r4c[k]
        if arg >= 0 and row_to_col[r0 + arg] != j:
            r4c[k] = -1
    group_sync(mode)
    n_free = 0
    for i in range(n):  # every lane counts the same free rows; lane 0 lists them
        if row_to_col[r0 + i] == m:
            if lane == 0:
                path[so + n_free] = i
            n_free += 1
    group_sync(mode)
    for i in range(lane, n, lanes):
        if row_to_col[r0 + i] == m:
            row_to_col[r0 + i] = -1
    group_sync(mode)
    scans = 0
    parity = 0
    for _ in range(passes):
        k = 0
        previous = n_free
        n_free = 0
        budget = 4 * n
        while k < previous and budget > 0:
            budget -= 1
            i = path[so + k]
            k += 1
            scans += 1
            row = base + i * m
            low = np.inf
            low_key = m
            for j in range(lane, m, lanes):
                h = float64(C[row + j]) - vv[so + j]
                dist[so + j] = h
                if h < low:
                    low = h
                    low_key = j
            u1, j1 = group_argmin(low, np.int32(low_key), red_val, red_key, parity, lane, lanes, mode)
            parity = 1 - parity
            low = np.inf
            low_key = m
            for j in range(lane, m, lanes):
                h = dist[so + j]
                if j != j1 and h < low:
                    low = h
                    low_key = j
            u2, j2 = group_argmin(low, np.int32(low_key), red_val, red_key, parity, lane, lanes, mode)
            parity = 1 - parity
            if u1 == np.inf:  # no allowed column: the search will prove the item infeasible
                continue
            if u2 == np.inf:
                j2 = -1
            i0 = r4c[so + j1]
            lowered = u1 < u2 and u2 < np.inf
            if not lowered and i0 >= 0 and j2 >= 0:
                j1 = j2
                i0 = r4c[so + j2]
            group_sync(mode)  # every lane has read the state this scan changes
            if lane == 0:
                if lowered:
                    vv[so + j1] -= u2 - u1
                row_to_col[r0 + i] = j1
                r4c[so + j1] = i
                u[r0 + i] = float64(C[row + j1]) - vv[so + j1]
                if i0 >= 0:
                    row_to_col[r0 + i0] = -1
            if i0 >= 0:
                if lowered:
                    k -= 1
                    if lane == 0:
                        path[so + k] = i0
                else:
                    if lane == 0:
                        path[so + n_free] = i0
                    n_free += 1
            group_sync(mode)
        while k < previous:  # the budget ran out: the rows not reached stay free for the searches
            if lane == 0:
                path[so + n_free] = path[so + k]
            n_free += 1
            k += 1
            group_sync(mode)
    return scans, parity


@register_jitable
def solve_item(C, base, n, m, r0, row_to_col, u, vv, dist, path, r4c, seen, so, red_val, red_key, lane, lanes, mode,
               reduce):
    """Shortest augmenting paths for one item, by a group of ``lanes`` threads (a power of two;
    every lane calls it). Column state lives at ``so + j`` of ``vv`` (potentials), ``dist``,
    ``path``, ``r4c`` (assigned row) and ``seen`` (visited); rows at ``r0 + i`` of ``u`` and
    ``row_to_col``. A square item starts from ``reduce_square``; rows it leaves free, and every row
    of a rectangular item (duals from 0, which keeps v <= 0 and v = 0 on unassigned columns), are
    augmented by searches. Returns (steps, status)."""
    mask = lanes - 1
    for j in range(lane, m, lanes):
        k = so + j
        vv[k] = 0.0
        dist[k] = np.inf
        r4c[k] = -1
        seen[k] = 0
    for i in range(lane, n, lanes):
        u[r0 + i] = 0.0
        row_to_col[r0 + i] = -1
    group_sync(mode)
    steps = 0
    parity = 0
    if reduce > 0 and n == m and n > 0:
        steps, parity = reduce_square(C, base, n, r0, row_to_col, u, vv, dist, path, r4c, so, red_val, red_key,
                                      lane, lanes, mode, 2 if reduce > 1 else 0)
        for j in range(lane, m, lanes):
            dist[so + j] = np.inf
        group_sync(mode)
    status = SOLVED
    for cur in range(n):
        if row_to_col[r0 + cur] >= 0:
            continue
        i = cur
        minv = 0.0
        sink = -1
        while sink < 0:
            ui = u[r0 + i]
            row = base + i * m
            low = np.inf
            low_key = 2 * m
            j = lane
            while j < m:  # four columns at a time: their cost loads are in flight together
                j1 = j + lanes
                j2 = j1 + lanes
                j3 = j2 + lanes
                c0 = C[row + j]
                c1 = C[row + j1] if j1 < m else c0
                c2 = C[row + j2] if j2 < m else c0
                c3 = C[row + j3] if j3 < m else c0
                low, low_key = relax(j, c0, so, m, i, minv, ui, vv, dist, path, r4c, seen, low, low_key)
                if j1 < m:
                    low, low_key = relax(j1, c1, so, m, i, minv, ui, vv, dist, path, r4c, seen, low, low_key)
                if j2 < m:
                    low, low_key = relax(j2, c2, so, m, i, minv, ui, vv, dist, path, r4c, seen, low, low_key)
                if j3 < m:
                    low, low_key = relax(j3, c3, so, m, i, minv, ui, vv, dist, path, r4c, seen, low, low_key)
                j = j3 + lanes
            low, low_key = group_argmin(low, np.int32(low_key), red_val, red_key, parity, lane, lanes, mode)
            parity = 1 - parity
            steps += 1
            if low == np.inf:
                status = INFEASIBLE
                break
            minv = low
            j = low_key if low_key < m else low_key - m
            if (j & mask) == lane:
                seen[so + j] = 1
            if low_key < m:
                sink = j
            else:
                i = r4c[so + j]
        if status != SOLVED:
            break
        for j in range(lane, m, lanes):  # duals of the visited columns and their rows; reset for the next row
            k = so + j
            if seen[k] != 0:
                if j != sink:
                    delta = minv - dist[k]
                    u[r0 + r4c[k]] += delta
                    vv[k] -= delta
                seen[k] = 0
            dist[k] = np.inf
        if lane == 0:
            u[r0 + cur] += minv
        group_sync(mode)
        if lane == 0:  # flip the path
            j = sink
            while True:
                i = path[so + j]
                r4c[so + j] = i
                nxt = row_to_col[r0 + i]
                row_to_col[r0 + i] = j
                j = nxt
                if i == cur:
                    break
        group_sync(mode)
    return steps, status


@cuda_kernel(**SOLVER_OPTIONS)
def solve_batch_cuda(costs, offsets, rows, cols, row_offsets, col_offsets, items, row_to_col, u, v, iterations,
                     status, g_dist, g_path, g_r4c, g_seen, mode):
    """One block per item of ``items`` (grid-stride). ``g_*``: global column scratch laid out by
    ``col_offsets``, used only by items wider than SMEM_COLS (one unused element otherwise).
    ``mode``: BLOCK_MODE on a GPU, TREE under the simulator."""
    sh_dist = cuda.shared.array(SMEM_COLS, float64)
    sh_v = cuda.shared.array(SMEM_COLS, float64)
    sh_path = cuda.shared.array(SMEM_COLS, int32)
    sh_r4c = cuda.shared.array(SMEM_COLS, int32)
    sh_seen = cuda.shared.array(SMEM_COLS, int32)
    sh_u = cuda.shared.array(SMEM_COLS, float64)
    sh_c4r = cuda.shared.array(SMEM_COLS, int32)
    red_val = cuda.shared.array(TREE_BLOCK, float64)
    red_key = cuda.shared.array(TREE_BLOCK, int32)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for q in range(cuda.blockIdx.x, items.shape[0], cuda.gridDim.x):
        b = items[q]
        n = rows[b]
        m = cols[b]
        r0 = row_offsets[b]
        c0 = col_offsets[b]
        if m <= SMEM_COLS:  # rows <= cols: the rows' state fits beside the columns'
            steps, state = solve_item(costs, offsets[b], n, m, 0, sh_c4r, sh_u, sh_v, sh_dist, sh_path, sh_r4c,
                                      sh_seen, 0, red_val, red_key, t, nt, mode, REDUCE_BLOCK)
            cuda.syncthreads()
            for j in range(t, m, nt):
                v[c0 + j] = sh_v[j]
            for i in range(t, n, nt):
                u[r0 + i] = sh_u[i]
                row_to_col[r0 + i] = sh_c4r[i]
        else:
            steps, state = solve_item(costs, offsets[b], n, m, r0, row_to_col, u, v, g_dist, g_path, g_r4c,
                                      g_seen, c0, red_val, red_key, t, nt, mode, REDUCE_BLOCK)
        if t == 0:
            iterations[b] = steps
            status[b] = state
        cuda.syncthreads()  # the next item reuses the shared arrays


@cuda_kernel(**SOLVER_OPTIONS)
def solve_warp_cuda(costs, offsets, rows, cols, row_offsets, col_offsets, items, row_to_col, u, v, iterations,
                    status, mode):
    """One warp per item of ``items`` (at most WARP_COLS columns each), WARPS_PER_BLOCK warps a
    block, each with its own slice of shared memory and no block-wide barrier; grid-stride over
    the items. Under the simulator (``mode`` TREE, no shuffles or syncwarp) the whole block is one
    group and the reductions go through shared memory."""
    sh_dist = cuda.shared.array(WARP_SHARED, float64)
    sh_v = cuda.shared.array(WARP_SHARED, float64)
    sh_path = cuda.shared.array(WARP_SHARED, int32)
    sh_r4c = cuda.shared.array(WARP_SHARED, int32)
    sh_seen = cuda.shared.array(WARP_SHARED, int32)
    sh_u = cuda.shared.array(WARP_SHARED, float64)
    sh_c4r = cuda.shared.array(WARP_SHARED, int32)
    red_val = cuda.shared.array(TREE_BLOCK, float64)
    red_key = cuda.shared.array(TREE_BLOCK, int32)
    t = cuda.threadIdx.x
    if mode == WARP_MODE:
        lanes = WARP_SIZE
    else:
        lanes = cuda.blockDim.x
    lane = t % lanes
    group = t // lanes
    groups = cuda.blockDim.x // lanes
    so = group * WARP_COLS
    for q in range(cuda.blockIdx.x * groups + group, items.shape[0], cuda.gridDim.x * groups):
        b = items[q]
        n = rows[b]
        m = cols[b]
        c0 = col_offsets[b]
        r0 = row_offsets[b]
        steps, state = solve_item(costs, offsets[b], n, m, so, sh_c4r, sh_u, sh_v, sh_dist, sh_path, sh_r4c,
                                  sh_seen, so, red_val, red_key, lane, lanes, mode, REDUCE_WARP)
        group_sync(mode)
        for j in range(lane, m, lanes):
            v[c0 + j] = sh_v[so + j]
        for i in range(lane, n, lanes):
            u[r0 + i] = sh_u[so + i]
            row_to_col[r0 + i] = sh_c4r[so + i]
        if lane == 0:
            iterations[b] = steps
            status[b] = state
        group_sync(mode)  # the next item reuses the slice


SOLVE = Kernel("batch_solve", None, solve_batch_cuda, BLOCK_PER_ITEM, threads=BLOCK, sim_threads=SIM_BLOCK)
SOLVE_WARP = Kernel("batch_solve_warp", None, solve_warp_cuda, BLOCK_PER_ITEM, threads=WARPS_PER_BLOCK * WARP_SIZE,
                    sim_threads=SIM_BLOCK)


# ---------------------------------------------------------------------------------------------
# the certificate (independent of the solver above)

@cuda_kernel
def certify_batch_cuda(costs, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, taken,
                       violation, value, dual, scale, valid):
    """One block per item: per-thread partial results over rows, columns and all entries, then a
    shared-memory tree (fixed order: the same sums every run). ``taken``: int32 zeros, one per
    column of the batch (left zeroed again)."""
    sh_viol = cuda.shared.array(TREE_BLOCK, float64)
    sh_val = cuda.shared.array(TREE_BLOCK, float64)
    sh_dual = cuda.shared.array(TREE_BLOCK, float64)
    sh_scale = cuda.shared.array(TREE_BLOCK, float64)
    sh_ok = cuda.shared.array(TREE_BLOCK, int32)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, rows.shape[0], cuda.gridDim.x):
        n = rows[b]
        m = cols[b]
        base = offsets[b]
        r0 = row_offsets[b]
        c0 = col_offsets[b]
        worst = 0.0
        total = 0.0
        objective = 0.0
        big = 0.0
        ok = 1
        for i in range(t, n, nt):  # rows: the assignment, its value, equality on assigned pairs
            ui = u[r0 + i]
            objective += ui
            if abs(ui) < np.inf:
                big = max(big, abs(ui))
            else:
                worst = np.inf
            j = row_to_col[r0 + i]
            if j < 0 or j >= m:
                ok = 0
                continue
            c = costs[base + i * m + j]
            if not abs(c) < np.inf:
                ok = 0
                continue
            total += c
            gap = abs(c - ui - v[c0 + j])
            if not gap <= worst:
                worst = gap
            cuda.atomic.add(taken, c0 + j, 1)
        cuda.syncthreads()
        for j in range(t, m, nt):  # columns: no column twice, v_j <= 0, v_j = 0 when unassigned
            vj = v[c0 + j]
            objective += vj
            if abs(vj) < np.inf:
                big = max(big, abs(vj))
            else:
                worst = np.inf
            times = taken[c0 + j]
            taken[c0 + j] = 0
            if times > 1:
                ok = 0
            if n < m and vj > worst:  # the sign: the rectangular LP's (a square item's v is free)
                worst = vj
            if times == 0 and abs(vj) > worst:
                worst = abs(vj)
        for k in range(t, n * m, nt):  # every finite pair: c_ij - u_i - v_j >= 0
            c = costs[base + k]
            if abs(c) < np.inf:
                big = max(big, abs(c))
                i = k // m
                short = u[r0 + i] + v[c0 + k - i * m] - c
                if not short <= worst:
                    worst = short
        sh_viol[t] = worst
        sh_val[t] = total
        sh_dual[t] = objective
        sh_scale[t] = big
        sh_ok[t] = ok
        cuda.syncthreads()
        s = nt // 2
        while s > 0:
            if t < s:
                if not sh_viol[t + s] <= sh_viol[t]:
                    sh_viol[t] = sh_viol[t + s]
                sh_val[t] += sh_val[t + s]
                sh_dual[t] += sh_dual[t + s]
                sh_scale[t] = max(sh_scale[t], sh_scale[t + s])
                sh_ok[t] = min(sh_ok[t], sh_ok[t + s])
            cuda.syncthreads()
            s //= 2
        if t == 0:
            violation[b] = sh_viol[0]
            value[b] = sh_val[0]
            dual[b] = sh_dual[0]
            scale[b] = sh_scale[0]
            valid[b] = sh_ok[0]
        cuda.syncthreads()


CERTIFY = Kernel("batch_certify", None, certify_batch_cuda, BLOCK_PER_ITEM, threads=BLOCK, sim_threads=SIM_BLOCK)


# ---------------------------------------------------------------------------------------------
# the exact certificate (solvers.batch.certify_batch's, item by item the same decisions)

C_EPS = 2.220446049250313e-16   # certify_batch.EPS
C_ROUNDING = 16                 # certify_batch.ROUNDING
C_TINY = 5e-324                 # certify_batch.TINY
C_INTEGRAL_LIMIT = 9007199254740992.0  # 2^53
HOST_DECIDES_INFEASIBLE = -1    # ``reason``: a claimed infeasible item, confirmed on the host
HOST_DECIDES_GAP = -2           # ``reason``: every check passed; the host bounds the gap from the sums


@register_jitable
def _c_two_sum(a, b):
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@register_jitable
def _c_add(x, s, e_sum, e_abs):
    s, e = _c_two_sum(s, x)
    return s, e_sum + e, e_abs + abs(e)


@cuda_kernel
def certify_exact_cuda(costs, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, status, owner,
                       r_bad, r_f, r_e2, r_e1, r_floor, r_close, r_near, reason, at_row, at_col, value, tol_out,
                       integral_out, s_out, e_out, eabs_out, count_out, shift_out):
    """certify_batch._certify_item's checks and sums, in its order, one block per item: the O(n m)
    passes (the largest |c| and integrality, each row's rounded-down floor min_j (c_ij - v_j), its
    first violated pair and its three exact gap terms) spread over the threads with order-free
    reductions (max, min, the first index), the O(n + m) passes that decide by order (the
    matching, the value and its magnitude, the duals' checks, the gap's TwoSum sum) run by thread 0
    in certify_batch's order. Only additions, subtractions and comparisons touch the sums, so no
    fused multiply-add changes a bit. ``reason``: a final code (1-7), HOST_DECIDES_GAP (the host
    bounds s + e from ``s_out``, ``e_out``, ``eabs_out``, ``count_out`` and decides 0 or 8) or
    HOST_DECIDES_INFEASIBLE. ``r_floor`` (each row's rounded-down u_i), ``r_close`` / ``r_near`` (its
    close pairs: near_ties.settle_row) and ``shift_out`` (each item's shift of v) are kept for
    NEAR_TIES. ``owner`` (int32, by col_offsets) and the other ``r_*`` (by
    row_offsets): scratch."""
    sh_top = cuda.shared.array(TREE_BLOCK, float64)
    sh_int = cuda.shared.array(TREE_BLOCK, int32)
    sh_f = cuda.shared.array(2, float64)
    sh_stop = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, rows.shape[0], cuda.gridDim.x):
        n = rows[b]
        m = cols[b]
        base = offsets[b]
        r0 = row_offsets[b]
        c0 = col_offsets[b]
        if status[b] != 0:
            if t == 0:
                reason[b] = HOST_DECIDES_INFEASIBLE
            continue
        for j in range(t, m, nt):
            owner[c0 + j] = -1
        top = 0.0
        whole = 1
        for k in range(t, n * m, nt):
            c = float64(costs[base + k])
            if c != np.inf:
                if abs(c) > top:
                    top = abs(c)
                if c != math.floor(c):
                    whole = 0
        sh_top[t] = top
        sh_int[t] = whole
        cuda.syncthreads()
        step = nt // 2
        while step > 0:
            if t < step:
                sh_top[t] = max(sh_top[t], sh_top[t + step])
                sh_int[t] = min(sh_int[t], sh_int[t + step])
            cuda.syncthreads()
            step //= 2
        if t == 0:
            top = sh_top[0]
            code = 0
            ai = -1
            aj = -1
            s = 0.0
            e_sum = 0.0
            e_abs = 0.0
            magnitude = 0.0
            for i in range(n):  # 1. a matching of every row through allowed pairs
                j = row_to_col[r0 + i]
                if j < 0 or j >= m:
                    code = 1
                    ai = i
                    break
                if owner[c0 + j] >= 0:
                    code = 2
                    ai = i
                    aj = j
                    break
                owner[c0 + j] = i
                c = float64(costs[base + i * m + j])
                if c == np.inf:
                    code = 3
                    ai = i
                    aj = j
                    break
                s, e_sum, e_abs = _c_add(c, s, e_sum, e_abs)
                magnitude += abs(c)
            tol = np.nan
            shift = 0.0
            if code == 0:
                value[b] = s + e_sum
                # certify_batch's allowance: the assigned costs and the duals' sizes, not the top cost
                tol = C_ROUNDING * (n + 1) * (C_EPS * (2.0 * magnitude + dual_size(u, v, r0, c0, n, m)) + C_TINY)
                integral = sh_int[0] == 1 and top * max(n, 1) < C_INTEGRAL_LIMIT
                if integral:
                    tol = min(tol, 0.5)
                integral_out[b] = 1 if integral else 0
                if not (tol < np.inf):  # duals whose sizes overflow: certify_batch's code 7
                    code = 7
                for j in range(m if code == 0 else 0):  # 2. the duals within tol
                    vj = v[c0 + j]
                    if not (abs(vj) < np.inf):
                        code = 7
                        aj = j
                        break
                    if n < m:
                        if vj > tol or (owner[c0 + j] < 0 and abs(vj) > tol):
                            code = 6
                            aj = j
                            break
                        shift = max(shift, vj)
                if code == 0:
                    for i in range(n):
                        if not (abs(u[r0 + i]) < np.inf):
                            code = 7
                            ai = i
                            break
            else:
                value[b] = np.nan
            tol_out[b] = tol
            sh_f[0] = shift
            sh_f[1] = tol
            sh_stop[0] = code
            if code != 0:
                reason[b] = code
                at_row[b] = ai
                at_col[b] = aj
        cuda.syncthreads()
        if sh_stop[0] == 0:
            shift = sh_f[0]
            tol = sh_f[1]
            for i in range(t, n, nt):  # 3. each row: its floor, its first violation, its gap terms
                row = base + i * m
                ui = u[r0 + i]
                floor = np.inf
                bad = -1
                close = 0
                first = m
                last = -1
                for j in range(m):
                    c = float64(costs[row + j])
                    if c == np.inf:
                        continue
                    vj = v[c0 + j]
                    if ui + vj - c > tol:
                        bad = j
                        break
                    if ui + vj - c > -3.0 * tol:
                        close += 1
                        first = min(first, j)
                        last = j
                    floor = floor_step(c, vj - shift, floor)
                r_close[r0 + i] = close
                r_near[r0 + i, 0] = first
                r_near[r0 + i, 1] = last
                if bad < 0:
                    j = row_to_col[r0 + i]
                    c = float64(costs[row + j])
                    if abs(c - ui - v[c0 + j]) > tol:
                        bad = m
                    else:
                        r_floor[r0 + i] = floor
                        d, e1 = _c_two_sum(c, -(v[c0 + j] - shift))
                        f, e2 = _c_two_sum(d, -floor)
                        r_f[r0 + i] = f
                        r_e2[r0 + i] = e2
                        r_e1[r0 + i] = e1
                r_bad[r0 + i] = bad
            cuda.syncthreads()
            if t == 0:
                code = 0
                s = 0.0
                e_sum = 0.0
                e_abs = 0.0
                count = 0
                for i in range(n):
                    bad = r_bad[r0 + i]
                    if bad >= 0:
                        code = 4 if bad < m else 5
                        at_row[b] = i
                        at_col[b] = bad if bad < m else row_to_col[r0 + i]
                        break
                    s, e_sum, e_abs = _c_add(r_f[r0 + i], s, e_sum, e_abs)
                    s, e_sum, e_abs = _c_add(r_e2[r0 + i], s, e_sum, e_abs)
                    s, e_sum, e_abs = _c_add(r_e1[r0 + i], s, e_sum, e_abs)
                    count += 3
                if code == 0 and n < m:
                    for j in range(m):
                        if owner[c0 + j] < 0:
                            s, e_sum, e_abs = _c_add(-(v[c0 + j] - shift), s, e_sum, e_abs)
                            count += 1
                shift_out[b] = shift
                if code != 0:
                    reason[b] = code
                else:
                    reason[b] = HOST_DECIDES_GAP
                    s_out[b] = s
                    e_out[b] = e_sum
                    eabs_out[b] = e_abs
                    count_out[b] = count
        cuda.syncthreads()


CERTIFY_EXACT = Kernel("batch_certify_exact", None, certify_exact_cuda, BLOCK_PER_ITEM, threads=BLOCK,
                       sim_threads=SIM_BLOCK)


@cuda_kernel
def near_ties_cuda(costs, offsets, rows, cols, row_offsets, col_offsets, row_to_col, v, r_floor, shift, gap, tol,
                   wanted, count, near, releasable, scratch, room):
    """certify_batch.item_room on the GPU, one block per item where ``wanted``: the threads settle
    their rows' near-tight pairs (near_ties.settle_row, from the close pairs and the dual that
    CERTIFY_EXACT left in ``count``, ``near``, ``r_floor`` and ``shift``) below the item's ``gap``
    (the host's bound), thread 0 searches them (near_ties.room_for_another) and writes ``room`` 1
    where another assignment may be within the gap. ``releasable`` and ``scratch`` (3 rows, by
    col_offsets): scratch."""
    sh_low = cuda.shared.array(TREE_BLOCK, int64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, rows.shape[0], cuda.gridDim.x):
        if wanted[b] == 0:
            continue
        n = rows[b]
        m = cols[b]
        base = offsets[b]
        r0 = row_offsets[b]
        c0 = col_offsets[b]
        g = gap[b]
        k = shift[b]
        every_row = g > tol[b]
        low = NO_LOW_BIT
        for i in range(t, n, nt):
            low = min(low, settle_row(costs, base + i * m, m, row_to_col[r0 + i], v[c0:c0 + m], k, r_floor[r0 + i], g,
                                      every_row, count, near, r0 + i))
        for j in range(t, m, nt):
            releasable[c0 + j] = -(v[c0 + j] - k) < g
        low = block_min(sh_low, low, t, nt)
        if t == 0 and g < cost_step(low):
            room[b] = 0  # another assignment changes the cost by multiples of a step above the gap
        elif t == 0:
            found = room_for_another(n, m, row_to_col[r0:r0 + n], count[r0:r0 + n], near[r0:r0 + n],
                                     releasable[c0:c0 + m], releasable[c0:c0 + m], scratch[0, c0:c0 + m],
                                     scratch[1, c0:c0 + m], scratch[2, c0:c0 + m])
            room[b] = 1 if found else 0
        cuda.syncthreads()


NEAR_TIES = Kernel("batch_near_ties", None, near_ties_cuda, BLOCK_PER_ITEM, threads=BLOCK, sim_threads=SIM_BLOCK)



# ---------------------------------------------------------------------------------------------
# device inputs: packing and the values' check, without a host copy

EXACT_INTEGER = 9007199254740992  # 2^53: larger integers are refused (float64 would round them)


@cuda_kernel
def pack_costs_cuda(src, out, transposed, flags):
    """A (B, n0, m0) device array (any strides, any real type) into the flat oriented layout: item b
    row-major, transposed when ``transposed`` (then n0 > m0), as ``out``'s type. ``flags[0]`` is set
    to 1 when an integer beyond +-2^53 is seen (checked only for integer sources)."""
    B = src.shape[0]
    if transposed:
        n = src.shape[2]
        m = src.shape[1]
    else:
        n = src.shape[1]
        m = src.shape[2]
    per = n * m
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(start, B * per, stride):
        b = k // per
        rem = k - b * per
        i = rem // m
        j = rem - i * m
        if transposed:
            x = src[b, j, i]
        else:
            x = src[b, i, j]
        out[k] = x
        if flags.shape[0] > 1 and (x > EXACT_INTEGER or x < -EXACT_INTEGER):
            flags[0] = 1


@cuda_kernel
def scan_costs_cuda(costs, per, bad, where, biggest):
    """solvers.batch.scan.scan_items on the device for B items of ``per`` entries each: per item the
    first NaN (1) or -inf (2) entry and the largest finite |cost| before it."""
    sh_at = cuda.shared.array(TREE_BLOCK, int64)
    sh_top = cuda.shared.array(TREE_BLOCK, float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, bad.shape[0], cuda.gridDim.x):
        base = b * per
        first = per
        for k in range(t, per, nt):
            c = float64(costs[base + k])
            if (c != c or c == -np.inf) and k < first:
                first = k
        first = block_min(sh_at, first, t, nt)
        top = 0.0
        for k in range(t, first, nt):
            c = float64(costs[base + k])
            if c != np.inf and abs(c) > top:
                top = abs(c)
        cuda.syncthreads()
        top = -block_min(sh_top, -top, t, nt)  # the block's largest |c|: the least negation, negated (exact)
        if t == 0:
            biggest[b] = top
            if first < per:
                c = float64(costs[base + first])
                bad[b] = 1 if c != c else 2
                where[b] = first
            else:
                bad[b] = 0
                where[b] = -1
        cuda.syncthreads()


@cuda_kernel
def checksum_costs_cuda(costs, offsets, partial):
    """Each item's checksum of its costs (solvers.batch.scan.scan_items's), in parts: thread t of
    item b's block adds up entries t, t + nt, ... into ``partial[b * nt + t]``; the host adds the
    parts (a wrapping sum: their order does not matter)."""
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    for b in range(cuda.blockIdx.x, offsets.shape[0] - 1, cuda.gridDim.x):
        total = np.uint64(0)
        for k in range(offsets[b] + t, offsets[b + 1], nt):
            total += checksum_term(float64_bits(float64(costs[k])), k)
        partial[b * nt + t] = total


PACK = Kernel("batch_pack", None, pack_costs_cuda, EACH)
SCAN = Kernel("batch_scan", None, scan_costs_cuda, BLOCK_PER_ITEM, threads=BLOCK, sim_threads=SIM_BLOCK)
CHECKSUM = Kernel("batch_checksum", None, checksum_costs_cuda, BLOCK_PER_ITEM, threads=BLOCK, sim_threads=SIM_BLOCK)

KERNELS = (SOLVE, SOLVE_WARP, CERTIFY, CERTIFY_EXACT, PACK, SCAN, CHECKSUM)
