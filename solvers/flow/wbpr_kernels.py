"""WBPR on cuda and under the CUDA simulator: thin kernels around the shared step bodies.

Import only on the cuda / cudasim path (it imports numba.cuda).

* ``tc_push_relabel``: thread-centric (He & Hong's lock-free kernel, Algorithm 1): thread v owns
  vertex v (grid-stride), runs ``cycles`` cycles, scans its arcs alone, pushes with atomics.
  No grid synchronisation: the lock-free algorithm needs none.
* ``vc_push_relabel``: vertex-centric (Algorithm 2), one cooperative launch of ``cycles`` cycles:
  the grid appends active vertices to a queue (atomic add), grid sync, one warp per queue entry
  takes the min over the entry's arcs (lane l scans arcs l, l+32, ...; then a warp min-reduction:
  shuffles on cuda, shared memory under the simulator, which has no shuffles), lane 0 pushes or
  relabels, grid sync; an empty queue ends the launch early. The queue counters are double-buffered
  by cycle parity so one thread can clear the next cycle's counters without another sync.
  Hubs (beyond the paper; _wbpr_steps.HUB_CHUNK): an active vertex with more arcs than the chunk
  is queued as pieces of HUB_CHUNK arcs after the ordinary entries, one warp per piece; each piece's
  warp minimum meets the others in ``hub_key`` (atomic min; the key holds the arc ordinal, so the
  result is the whole scan's), and after the cycle's grid sync one thread per hub pushes or
  relabels it, then one more grid sync (only in cycles with an active hub; every thread read the
  same hub count) so the next scan sees it. A 90k-arc hub thus costs one round of 8 arcs per lane,
  not 2,800.
* ``global_relabel``: one cooperative launch; level-synchronous backward BFS from ``root`` over
  residual arcs, one warp per frontier vertex (lanes over its arcs) and hubs split into pieces as
  above, so no thread walks a hub's arcs alone (frontier queues, claims by atomic CAS on the
  height, grid sync per level; the frontier counters are triple-buffered by level), then the
  Excess_total bookkeeping and the status slots the host polls.

Every launch records the modelled work per lane (Eq. 1: arcs scanned + pushes/relabels, plus one
per vertex checked for activity; the host takes the max over each warp's lanes). The *measured*
variants (cuda only) also record the cycles each warp spent working, read by lane 0 from
``clock64`` through solvers/flow/clock64.cu (linked CUDA C: numba-cuda has no clock intrinsic);
vc excludes the time waiting at grid syncs.
``ptx_targets()`` lists every kernel variant's Python function and signature for ``cuda.compile_ptx``.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from numba import cuda, types

from ..targets import simulator_enabled
from . import _wbpr_steps as steps
from ._wbpr_steps import (ACTIVE, LEVELS, NO_ARC, ORDINAL_MASK, SINK_EXCESS, SOURCE_EXCESS,
                          STATUS_SLOTS, STRANDED, TOTAL, arcs_scanned, hub_pieces, is_active, lowest_arc,
                          lowest_arc_upto, plan_vertex)
from .residual import arc_at, arc_count, reverse_slot

CLOCK_SOURCE = str(Path(__file__).with_name("clock64.cu"))
WARP = 32
FULL_MASK = 0xFFFFFFFF
BLOCK = 256        # threads per block on cuda
SIM_BLOCK = 64     # vc under the simulator (each simulated thread is a Python thread): one block, two warps
SIM_GR_BLOCK = 32  # the global relabel under the simulator: one warp
SHARED_BLOCK = 256  # shared-memory reduction buffer (>= any block size used)

_i64 = types.int64
_idx = types.int32[::1]
_res = types.int64[::1]
_graph = (_i64, _i64, _i64, _i64, _i64, _i64, _idx, _idx, _idx, _idx, _idx)  # layout n m source sink cycles a0..a4
TC_SIG = types.void(*_graph, _res, _idx, _res, _res, _res, _res)
_vc_graph = _graph[:6] + (_i64,) + _graph[6:]  # ... cycles, chunk, a0..a4
VC_SIG = types.void(*_vc_graph, _res, _idx, _res, _idx, _idx, _idx, _res, _res, _res, _res, _res)
GR_SIG = types.void(_i64, _i64, _i64, _i64, _i64, _i64, _i64, _i64, _idx, _idx, _idx, _idx, _idx,
                    _res, _idx, _res, _idx, _idx, _idx, _res, _res, _idx, _res)


@cuda.jit(device=True)
def _no_clock():
    return np.int64(0)


@cuda.jit(device=True)
def _push_or_relabel(layout, u, key, n, m, a0, a1, a2, a3, a4, residual, height, excess):
    """Apply the plan for active u with atomics (Algorithm 1, lines 19-26); True for a push."""
    v, slot, back, amount, new_height = plan_vertex(layout, u, key, n, m, a0, a1, a2, a3, a4,
                                                    residual, height, excess)
    if amount > 0:
        cuda.atomic.sub(residual, slot, amount)
        cuda.atomic.add(residual, back, amount)
        cuda.atomic.sub(excess, u, amount)
        cuda.atomic.add(excess, v, amount)
        return True
    height[u] = new_height
    return False


@cuda.jit(device=True)
def _warp_min_shuffle(value):
    """Lane 0 gets the warp's minimum (Harris's reduction, unrolled over shuffles)."""
    offset = 16
    while offset > 0:
        other = cuda.shfl_down_sync(FULL_MASK, value, offset)
        if other < value:
            value = other
        offset //= 2
    return value


@cuda.jit(device=True)
def _warp_min_shared(value):
    """Lane 0 gets the warp's minimum via shared memory; every thread of the block must call it."""
    buffer = cuda.shared.array(SHARED_BLOCK, types.int64)
    tx = cuda.threadIdx.x
    lane = tx & 31
    buffer[tx] = value
    cuda.syncthreads()
    offset = 16
    while offset > 0:
        if lane < offset and buffer[tx + offset] < buffer[tx]:
            buffer[tx] = buffer[tx + offset]
        cuda.syncthreads()
        offset //= 2
    value = buffer[tx]
    cuda.syncthreads()  # the next call overwrites the buffer
    return value


def _make_tc(clock, measure):
    def tc_push_relabel(layout, n, m, source, sink, cycles, a0, a1, a2, a3, a4,
                        residual, height, excess, lane_work, counters, warp_cycles):
        tid = cuda.grid(1)
        threads = cuda.gridsize(1)
        lane = tid & 31
        start = np.int64(0)
        if measure and lane == 0:
            start = clock()
        work = np.int64(0)
        pushes = np.int64(0)
        relabels = np.int64(0)
        for _ in range(cycles):
            for u in range(tid, n, threads):
                work += 1
                if is_active(u, n, source, sink, height, excess):
                    key = lowest_arc(layout, u, 0, 1, m, a0, a1, a2, a3, a4, residual, height)
                    work += arc_count(layout, u, a0, a2) + 1
                    if _push_or_relabel(layout, u, key, n, m, a0, a1, a2, a3, a4, residual, height, excess):
                        pushes += 1
                    else:
                        relabels += 1
        if measure:
            cuda.syncwarp(FULL_MASK)
            if lane == 0:
                warp_cycles[tid >> 5] = clock() - start
        lane_work[tid] = work
        if pushes > 0:  # two totals, not a per-thread array: the host reads 16 bytes, not megabytes
            cuda.atomic.add(counters, 0, pushes)
        if relabels > 0:
            cuda.atomic.add(counters, 1, relabels)
    return tc_push_relabel


def _make_vc(clock, measure, warp_min):
    def vc_push_relabel(layout, n, m, source, sink, cycles, chunk, a0, a1, a2, a3, a4,
                        residual, height, excess, queue, queue_count, hubs, hub_key, pieces,
                        lane_work, counters, warp_cycles):
        grid = cuda.cg.this_grid()
        tid = cuda.grid(1)
        threads = cuda.gridsize(1)
        lane = tid & 31
        warp = tid >> 5
        n_warps = threads >> 5
        busy = np.int64(0)
        start = np.int64(0)
        work = np.int64(0)
        pushes = np.int64(0)
        relabels = np.int64(0)
        for cycle in range(cycles):
            base = 3 * (cycle & 1)  # queue_count[base + 0, 1, 2]: vertices, hubs, hub pieces
            if measure and lane == 0:
                start = clock()
            for u in range(tid, n, threads):  # scan: fill the active-vertex queue (hubs: their pieces)
                work += 1
                if is_active(u, n, source, sink, height, excess):
                    split = hub_pieces(arc_count(layout, u, a0, a2), chunk)
                    if split == 0:
                        queue[cuda.atomic.add(queue_count, base, 1)] = u
                    else:
                        j = cuda.atomic.add(queue_count, base + 1, 1)
                        hubs[j] = u
                        hub_key[j] = NO_ARC
                        first = cuda.atomic.add(queue_count, base + 2, split)
                        for piece in range(split):
                            pieces[first + piece] = (np.int64(j) << 32) | np.int64(piece)
                        work += split
            if measure:
                cuda.syncwarp(FULL_MASK)
                if lane == 0:
                    busy += clock() - start
            grid.sync()
            size = queue_count[base]
            n_hubs = queue_count[base + 1]
            total = size + queue_count[base + 2]
            if size + n_hubs == 0:
                break
            if tid == 0:  # last read before the previous cycle's closing sync
                queue_count[3 - base] = 0
                queue_count[4 - base] = 0
                queue_count[5 - base] = 0
            if measure and lane == 0:
                start = clock()
            rounds = (total + n_warps - 1) // n_warps
            for r in range(rounds):  # every warp runs the same number of rounds (block-wide reductions)
                entry = r * n_warps + warp
                u = -1
                hub = -1
                best = NO_ARC
                if entry < size:
                    u = queue[entry]
                    best = lowest_arc(layout, u, lane, WARP, m, a0, a1, a2, a3, a4, residual, height)
                    work += arcs_scanned(arc_count(layout, u, a0, a2), lane, WARP)
                elif entry < total:  # one piece of a hub: arcs [lo, hi)
                    item = pieces[entry - size]
                    hub = np.int64(item >> 32)
                    lo = (item & ORDINAL_MASK) * chunk
                    v = hubs[hub]
                    hi = min(lo + chunk, np.int64(arc_count(layout, v, a0, a2)))
                    best = lowest_arc_upto(layout, v, lo + lane, hi, WARP, m, a0, a1, a2, a3, a4, residual, height)
                    work += arcs_scanned(hi - lo, lane, WARP)
                best = warp_min(best)
                if lane == 0:
                    if u >= 0:
                        work += 1
                        if _push_or_relabel(layout, u, best, n, m, a0, a1, a2, a3, a4, residual, height, excess):
                            pushes += 1
                        else:
                            relabels += 1
                    elif hub >= 0:
                        work += 1
                        if best != NO_ARC:
                            cuda.atomic.min(hub_key, hub, best)
            if measure:
                cuda.syncwarp(FULL_MASK)
                if lane == 0:
                    busy += clock() - start
            grid.sync()
            if n_hubs > 0:  # every piece has met in hub_key: apply the hubs (n_hubs is the same for all)
                if measure and lane == 0:
                    start = clock()
                for j in range(tid, n_hubs, threads):
                    work += 1
                    if _push_or_relabel(layout, hubs[j], hub_key[j], n, m, a0, a1, a2, a3, a4,
                                        residual, height, excess):
                        pushes += 1
                    else:
                        relabels += 1
                if measure:
                    cuda.syncwarp(FULL_MASK)
                    if lane == 0:
                        busy += clock() - start
                grid.sync()  # the next scan sees the hubs' pushes
        grid.sync()
        if tid == 0:
            for slot in range(6):
                queue_count[slot] = 0
        if measure and lane == 0:
            warp_cycles[warp] = busy
        lane_work[tid] = work
        if pushes > 0:  # two totals, not a per-thread array: the host reads 16 bytes, not megabytes
            cuda.atomic.add(counters, 0, pushes)
        if relabels > 0:
            cuda.atomic.add(counters, 1, relabels)
    return vc_push_relabel


@cuda.jit(device=True)
def _claim_for_next_level(w, layout, chunk, a0, a2, following, following_pieces, frontier_count, slot):
    """Append a newly reached vertex to the next frontier: itself, or its hub pieces."""
    split = hub_pieces(arc_count(layout, w, a0, a2), chunk)
    if split == 0:
        following[cuda.atomic.add(frontier_count, slot, 1)] = w
    else:
        first = cuda.atomic.add(frontier_count, slot + 1, split)
        for piece in range(split):
            following_pieces[first + piece] = (np.int64(w) << 32) | np.int64(piece)


def global_relabel(layout, n, m, root, blocked, source, sink, chunk, a0, a1, a2, a3, a4,
                   residual, height, excess, stranded, frontier_a, frontier_b, pieces_a, pieces_b,
                   frontier_count, status):
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = tid & 31
    warp = tid >> 5
    n_warps = threads >> 5
    for v in range(tid, n, threads):
        height[v] = 0 if v == root else n
    if tid == 0:
        for slot in range(6):  # level l uses frontier_count[2 (l % 3)]: vertices, then hub pieces
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


def _clock_function():
    """The linked clock64 reader (real GPUs only; the simulator has no clock)."""
    return cuda.declare_device("read_clock64", types.int64())


def kernel_functions(measure: bool = False, shuffle: bool = True) -> dict:
    """Python functions of every kernel with their signatures (for cuda.jit and cuda.compile_ptx)."""
    clock = _clock_function() if measure else _no_clock
    warp_min = _warp_min_shuffle if shuffle else _warp_min_shared
    return {"tc_push_relabel": (_make_tc(clock, measure), TC_SIG),
            "vc_push_relabel": (_make_vc(clock, measure, warp_min), VC_SIG),
            "global_relabel": (global_relabel, GR_SIG)}


def ptx_targets() -> dict:
    """name -> (python function, signature) of every kernel variant that runs on a real GPU."""
    out = {}
    for measure in (False, True):
        for name, entry in kernel_functions(measure, shuffle=True).items():
            if measure and name == "global_relabel":
                continue
            out[name + ("_measured" if measure else "")] = entry
    out["vc_push_relabel_shared"] = kernel_functions(False, shuffle=False)["vc_push_relabel"]
    return out


@functools.lru_cache(maxsize=None)
def compiled(name: str, measure: bool = False):
    """The cuda.jit dispatcher of one kernel variant (compiled on first launch)."""
    shuffle = not simulator_enabled()
    func, sig = kernel_functions(measure, shuffle)[name]
    if measure:
        return cuda.jit(sig, link=[CLOCK_SOURCE])(func)
    return cuda.jit(sig)(func)


def _to_device(array, dtype):
    """A device copy; empty arrays (no edges) get one unused element so every kernel argument is real memory."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return cuda.to_device(array if array.size else np.zeros(1, dtype=dtype))


def _zeroed(dtype, sizes):
    """Device views of ``sizes`` elements each, zero-filled, carved from one allocation."""
    buffer = cuda.to_device(np.zeros(max(sum(sizes), 1), dtype=dtype))
    views, offset = [], 0
    for size in sizes:
        views.append(buffer[offset:offset + size])
        offset += size
    return views


def _cooperative_blocks(dispatcher, threads: int) -> int:
    kernel = next(iter(dispatcher.overloads.values()))
    return max(1, int(kernel.max_cooperative_grid_blocks(threads)))


class CudaEngine:
    """Device arrays of one run and the launches the host loop (wbpr.py) asks for; the same calls as CpuEngine.

    Only ``status``, ``heights``, ``workload``, ``residual``, ``excess`` and ``counters`` copy to
    the host (and so synchronise); launches are asynchronous.
    """

    def __init__(self, graph, vertex_centric: bool, source: int, sink: int, excess, total: int,
                 may_measure: bool = False):
        self.graph = graph
        self.vertex_centric = vertex_centric
        self.source, self.sink = source, sink
        self.simulated = simulator_enabled()
        n = graph.n
        self.arrays = tuple(_to_device(a, np.int32) for a in graph.arrays)
        self.residual_ = _to_device(graph.residual, np.int64)
        self.excess_ = cuda.to_device(np.asarray(excess, dtype=np.int64))
        status = np.zeros(STATUS_SLOTS, dtype=np.int64)
        status[TOTAL] = total
        self.status_ = cuda.to_device(status)
        self.chunk = int(steps.HUB_CHUNK)  # read per run, so a test can shrink it
        degrees = graph.degrees()
        hub_degrees = degrees[degrees > self.chunk]
        n_hubs = max(hub_degrees.size, 1)
        n_pieces = max(int(np.sum(-(-hub_degrees // self.chunk))), 1)  # every hub's pieces, all at once at most
        self.may_measure = may_measure and not self.simulated
        block = SIM_BLOCK if self.simulated else BLOCK
        if self.simulated:
            self.gr_grid = (1, SIM_GR_BLOCK)
        else:
            # a warp per frontier entry; a frontier of n / 4 fits one round (larger grids only slow the
            # per-level grid syncs of small graphs), the co-resident limit caps large ones
            self.gr_grid = (min(_cooperative_blocks(compiled("global_relabel"), block), -(-n * WARP // (4 * block))),
                            block)
        if vertex_centric:
            blocks = 1
            if not self.simulated:
                blocks = min(_cooperative_blocks(compiled("vc_push_relabel"), block), -(-n * WARP // block))
                if self.may_measure:
                    blocks = min(blocks, _cooperative_blocks(compiled("vc_push_relabel", True), block))
        else:
            block = WARP if self.simulated else BLOCK
            blocks = max(1, -(-n // block))
        self.pr_grid = (max(1, blocks), block)
        self.threads = self.pr_grid[0] * self.pr_grid[1]
        # the zero-initialised work arrays: one allocation and one copy per dtype, sliced into views
        (self.height, self.stranded, frontier_a, frontier_b, self.frontier_count, self.queue, self.queue_count,
         self.hubs) = _zeroed(np.int32, (n, n, max(n, 1), max(n, 1), 6, max(n, 1), 6, n_hubs))
        self.frontiers = (frontier_a, frontier_b)
        (pieces_a, pieces_b, self.hub_key, self.lane_work, self.counters_, self.warp_cycles) = _zeroed(
            np.int64, (n_pieces, n_pieces, n_hubs, self.threads, 2, max(self.threads // WARP, 1)))
        self.pieces = (pieces_a, pieces_b)

    def push_relabel(self, cycles: int, measured: bool = False) -> None:
        g = self.graph
        measured = measured and self.may_measure
        arrays = (*self.arrays, self.residual_, self.height, self.excess_)
        if self.vertex_centric:
            kernel = compiled("vc_push_relabel", measured)
            kernel[self.pr_grid](g.layout, g.n, g.m, self.source, self.sink, cycles, self.chunk, *arrays,
                                 self.queue, self.queue_count, self.hubs, self.hub_key, self.pieces[0],
                                 self.lane_work, self.counters_, self.warp_cycles)
        else:
            kernel = compiled("tc_push_relabel", measured)
            kernel[self.pr_grid](g.layout, g.n, g.m, self.source, self.sink, cycles, *arrays,
                                 self.lane_work, self.counters_, self.warp_cycles)

    def global_relabel(self, root: int, blocked: int) -> None:
        g = self.graph
        compiled("global_relabel")[self.gr_grid](
            g.layout, g.n, g.m, root, blocked, self.source, self.sink, self.chunk, *self.arrays, self.residual_,
            self.height, self.excess_, self.stranded, *self.frontiers, *self.pieces, self.frontier_count,
            self.status_)

    def status(self) -> np.ndarray:
        return self.status_.copy_to_host()

    def heights(self) -> np.ndarray:
        return self.height.copy_to_host()

    def workload(self, measured: bool = False):
        """(modelled work per lane, clock64 cycles per warp or None) of the last push-relabel launch."""
        cycles = self.warp_cycles.copy_to_host() if measured and self.may_measure else None
        return self.lane_work.copy_to_host(), cycles

    def residual(self) -> np.ndarray:
        return self.residual_.copy_to_host()[:2 * self.graph.m]

    def excess(self) -> np.ndarray:
        return self.excess_.copy_to_host()

    def counters(self) -> tuple[int, int]:
        both = self.counters_.copy_to_host()
        return int(both[0]), int(both[1])

    def reopen_stranded(self, total: int) -> None:
        self.stranded.copy_to_device(np.zeros(self.graph.n, dtype=np.int32))
        status = self.status_.copy_to_host()
        status[TOTAL] = total
        self.status_.copy_to_device(status)
