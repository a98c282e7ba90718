"""WBPR global relabel: exact heights by a backward BFS from ``root`` over residual arcs, then the
Excess_total bookkeeping and the status slots the host polls; its cpu loop and cuda kernel, in one file.

Imported only when a run starts (it imports numba; numba.cuda only when a kernel is built). Both
forms take the same arguments (``RELABEL_ARGS``); the cpu form ignores what it does not use (``chunk``, the second
frontier, the hub pieces and the frontier counters). The vertex accessors come from
solvers.flow.residual and ``hub_pieces`` / ``ORDINAL_MASK`` from solvers.flow.wbpr_push: the cache
directory is keyed by a hash of every compiled source (solvers.targets.cache), so an edit there
starts a fresh cache too.

* cpu ``global_relabel_cpu``: a sequential BFS (queue in ``frontier_a``).
* cuda ``global_relabel``: one cooperative launch; level-synchronous backward BFS, one warp per
  frontier vertex (lanes over its arcs) and hubs split into pieces of ``chunk`` arcs (see
  wbpr_push), so no thread walks a hub's arcs alone (frontier queues, claims by atomic CAS on the
  height, grid sync per level; the frontier counters are triple-buffered by level).

A vertex the BFS cannot reach can never pass its excess to the sink: its excess leaves Excess_total
once (``stranded``) and it stays inactive (height |V|).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import THREADS_PER_BLOCK, WARP_SIZE
from ..targets.kernel import COOPERATIVE, Kernel
from .residual import arc_at, arc_count, reverse_slot
from .wbpr_push import ORDINAL_MASK, hub_pieces

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

WARP = WARP_SIZE
# slots of the int64 status array written by a global relabel (the host's termination check)
TOTAL, SOURCE_EXCESS, SINK_EXCESS, ACTIVE, LEVELS, STRANDED = range(6)
STATUS_SLOTS = 8
FRONTIER_COUNTS = 6  # frontier_count: (vertices, hub pieces) per level, triple-buffered


@njit(cache=True)
def global_relabel_cpu(layout, n, m, root, blocked, source, sink, chunk, a0, a1, a2, a3, a4,
                       residual, height, excess, stranded, frontier_a, frontier_b, pieces_a, pieces_b,
                       frontier_count, status):
    """Exact distances to ``root`` in the residual graph (|V| = unreachable; ``blocked`` is never entered),
    then strand the excess of unreachable vertices: subtract it from Excess_total once, for good."""
    bfs = frontier_a
    for v in range(n):
        height[v] = n
    height[root] = 0
    bfs[0] = root
    head, tail = 0, 1
    while head < tail:
        v = bfs[head]
        head += 1
        for k in range(arc_count(layout, v, a0, a2)):
            w, slot = arc_at(layout, v, k, m, a0, a1, a2, a3, a4)
            if w == blocked or height[w] != n:
                continue
            if residual[reverse_slot(layout, v, w, slot, m, a0, a1, a2)] > 0:  # w -> v has room
                height[w] = height[v] + 1
                bfs[tail] = w
                tail += 1
    active = 0
    for v in range(n):
        if v == source or v == sink or excess[v] <= 0:
            continue
        if height[v] == n:
            if stranded[v] == 0:
                stranded[v] = 1
                status[TOTAL] -= excess[v]
                status[STRANDED] += 1
        else:
            active += 1
    status[ACTIVE] = active
    status[LEVELS] = height[bfs[tail - 1]]
    status[SOURCE_EXCESS] = excess[source]
    status[SINK_EXCESS] = excess[sink]


@register_jitable
def _claim_for_next_level(w, layout, chunk, a0, a2, following, following_pieces, frontier_count, slot):
    """Append a newly reached vertex to the next frontier: itself, or its hub pieces."""
    split = hub_pieces(arc_count(layout, w, a0, a2), chunk)
    if split == 0:
        following[cuda.atomic.add(frontier_count, slot, 1)] = w
    else:
        first = cuda.atomic.add(frontier_count, slot + 1, split)
        for piece in range(split):
            following_pieces[first + piece] = (np.int64(w) << 32) | np.int64(piece)


@cuda_kernel
def global_relabel(layout, n, m, root, blocked, source, sink, chunk, a0, a1, a2, a3, a4,
                   residual, height, excess, stranded, frontier_a, frontier_b, pieces_a, pieces_b,
                   frontier_count, status):
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = tid % WARP
    warp = tid // WARP
    n_warps = threads // WARP
    for v in range(tid, n, threads):
        height[v] = 0 if v == root else n
    if tid == 0:
        for slot in range(FRONTIER_COUNTS):  # level l uses frontier_count[2 (l % 3)]: vertices, then hub pieces
            frontier_count[slot] = 0
        _claim_for_next_level(root, layout, chunk, a0, a2, frontier_a, pieces_a, frontier_count, 0)
        status[ACTIVE] = 0
    grid.sync()
    level = 0
    while True:
        base = 2 * (level % 3)
        size = frontier_count[base]
        total = size + frontier_count[base + 1]
        if total == 0:
            break
        if tid == 0:  # read at the previous level, appended at the next
            frontier_count[2 * ((level + 2) % 3)] = 0
            frontier_count[2 * ((level + 2) % 3) + 1] = 0
        even = level % 2 == 0
        current = frontier_a if even else frontier_b
        current_pieces = pieces_a if even else pieces_b
        following = frontier_b if even else frontier_a
        following_pieces = pieces_b if even else pieces_a
        next_slot = 2 * ((level + 1) % 3)
        for entry in range(warp, total, n_warps):  # one warp per vertex or hub piece, lanes over its arcs
            if entry < size:
                v = current[entry]
                lo = np.int64(0)
                hi = np.int64(arc_count(layout, v, a0, a2))
            else:
                item = current_pieces[entry - size]
                v = np.int32(item >> 32)
                lo = (item & ORDINAL_MASK) * chunk
                hi = min(lo + chunk, np.int64(arc_count(layout, v, a0, a2)))
            for k in range(lo + lane, hi, WARP):
                w, slot = arc_at(layout, v, k, m, a0, a1, a2, a3, a4)
                if w == blocked or height[w] != n:
                    continue
                if residual[reverse_slot(layout, v, w, slot, m, a0, a1, a2)] > 0:  # w -> v has room
                    if cuda.atomic.cas(height, w, n, level + 1) == n:
                        _claim_for_next_level(w, layout, chunk, a0, a2, following, following_pieces,
                                              frontier_count, next_slot)
        grid.sync()
        level += 1
    active = 0
    for v in range(tid, n, threads):
        if v == source or v == sink or excess[v] <= 0:
            continue
        if height[v] == n:
            if stranded[v] == 0:  # unreachable for good: its excess leaves Excess_total once
                stranded[v] = 1
                cuda.atomic.sub(status, TOTAL, excess[v])
                cuda.atomic.add(status, STRANDED, 1)
        else:
            active += 1
    if active > 0:
        cuda.atomic.add(status, ACTIVE, active)
    if tid == 0:
        status[LEVELS] = level - 1
        status[SOURCE_EXCESS] = excess[source]
        status[SINK_EXCESS] = excess[sink]


# a warp per frontier entry; a frontier of n / 4 fits one round (larger grids only slow the per-level
# grid syncs of small graphs), the co-resident limit caps large ones; the simulator: one warp
GLOBAL_RELABEL = Kernel("wbpr.global_relabel", cpu=global_relabel_cpu, cuda=global_relabel, shape=COOPERATIVE,
                        sim_threads=WARP_SIZE, tiles=4 * THREADS_PER_BLOCK // WARP_SIZE)

_i64 = types.int64
_i32a = types.int32[::1]
_i64a = types.int64[::1]
RELABEL_ARGS = (_i64,) * 8 + (_i32a,) * 5 + (_i64a, _i32a, _i64a, _i32a, _i32a, _i32a, _i64a, _i64a,
                                          _i32a, _i64a)
RELABEL_SIG = types.void(*RELABEL_ARGS)
