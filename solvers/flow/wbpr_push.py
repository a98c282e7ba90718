"""WBPR push-relabel launches: the per-element bodies, the cpu loops and the cuda kernels, in one file.

Imported only when a run starts (it imports numba; numba.cuda only when a kernel is built). Every body is written once
(``register_jitable``) beside the loops that call it, so numba's cache, which watches the file of
the compiled loop, sees every edit. The vertex accessors come from solvers.flow.residual, the
geometry from solvers.targets.geometry: the cache directory is keyed by a hash of every compiled
source (solvers.targets.cache), so an edit there starts a fresh cache too.

A candidate arc is packed into one int64 *key* = height(neighbour) << 32 | arc ordinal, so the
lowest-neighbour search is a plain min-reduction (ties go to the lower ordinal) and a warp can
reduce keys with shuffles. ``NO_ARC`` (int64 max) means no residual arc.

Hub splitting (beyond the paper): a vertex with more than ``chunk`` arcs (wbpr_device.HUB_CHUNK) is
cut into pieces of ``chunk`` arcs, each scanned by its own warp (vc push-relabel: the pieces' minima
meet in an atomic min, the hub is applied after a grid sync; global relabel: each piece expands the
BFS on its own), so a power-law hub costs one warp-round of at most chunk / 32 arcs per lane
instead of deg / 32 (or deg, for one BFS thread). The min over pieces equals the min over all arcs
(the key holds the ordinal), so the plan is the same as without splitting.

One launch runs ``cycles`` cycles. Every form takes the same arguments (``PUSH_ARGS``); a form
ignores what it does not use (the cuda kernels: ``parallel_min`` and ``plans``; tc: the queue arrays).

* cpu (``tc_push_relabel_cpu`` / ``vc_push_relabel_cpu``): each cycle collects the active vertices
  (Algorithm 2's queue), plans every active vertex in parallel (prange over ``lowest_arc`` /
  ``plan_vertex``: the lowest-neighbour search, then push amount or new height) and then applies
  the plans on one core. Why not atomics as on the GPU: numba has no CPU atomics, and the planning
  reads a consistent snapshot, so the parallel part never writes shared state; applying the plans
  in order is then race-free (a push only lowers its own vertex's excess and arc residual, which
  nobody else lowers, so the planned amount stays available). It is the synchronous form of the
  lock-free algorithm: the expensive arc scans run in parallel (when a cycle's active vertices have
  at least ``parallel_min`` arcs), the O(active) updates do not. tc and vc plan the same vertices;
  they differ in what is modelled: the per-warp work of the GPU kernel they stand for (tc: thread v
  owns vertex v and scans all its arcs; vc: queue entry i goes to warp i mod n_warps, whose lane l
  scans arcs l, l+32, ...; a hub becomes pieces queued after the other entries, one warp each, and
  one thread applies it; both: every cycle each lane checks its vertices for activity, v = lane,
  lane + threads, ...), and vc stops a launch as soon as no vertex is active (the paper's early
  exit), tc runs all its cycles. The modelled lanes are ``lane_work``'s (wbpr_device sizes it).
* cuda ``tc_push_relabel``: thread-centric (He & Hong's lock-free kernel, Algorithm 1): thread v
  owns vertex v (grid-stride), scans its arcs alone, pushes with atomics. No grid synchronisation.
* cuda ``vc_push_relabel``: vertex-centric (Algorithm 2), one cooperative launch: the grid appends
  active vertices to a queue (atomic add), grid sync, one warp per queue entry takes the min over
  the entry's arcs (lane l scans arcs l, l+32, ...; then a warp min-reduction: shuffles on cuda,
  shared memory under the simulator, which has no shuffles: ``vc_push_relabel_shared``), lane 0
  pushes or relabels, grid sync; an empty queue ends the launch early. The queue counters are
  double-buffered by cycle parity so one thread can clear the next cycle's counters without another
  sync. Hubs are queued as pieces after the ordinary entries, one warp per piece; each piece's warp
  minimum meets the others in ``hub_key`` (atomic min), and after the cycle's grid sync one thread
  per hub pushes or relabels it, then one more grid sync (only in cycles with an active hub; every
  thread read the same hub count) so the next scan sees it.

Every launch records the modelled work per lane (Eq. 1: arcs scanned + pushes/relabels, plus one
per vertex checked for activity; the host takes the max over each warp's lanes) and, in
``counters``, the pushes, relabels and cycles run. The ``*_measured`` kernels (real GPUs only) also
record the cycles each warp spent working, read by lane 0 from the SM's ``%clock64`` register
(``clock64``, an inline-PTX intrinsic, so the kernels stay cacheable); vc excludes the time waiting
at grid syncs. Each variant is its own module-level kernel over one inlined body, so a plain
kernel holds no clock read and no shared-memory reduction.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import MAX_THREADS_PER_BLOCK, THREADS_PER_BLOCK, WARP_SIZE
from ..targets.kernel import COOPERATIVE, EACH, Kernel
from .residual import arc_at, arc_count, reverse_slot

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)
clock64 = None  # the SM cycle counter (solvers.targets.cuda_intrinsics), bound with it
CUDA_IMPORTS = {"clock64": "solvers.targets.cuda_intrinsics:clock64"}

NO_ARC = np.iinfo(np.int64).max
ORDINAL_MASK = (1 << 32) - 1
WARP = WARP_SIZE
FULL_MASK = 0xFFFFFFFF
PLAN_FIELDS = 5    # cpu plans: neighbour, slot, reverse slot, amount, new height (``plans`` holds 5 x cap)
PUSHES, RELABELS, CYCLES_RUN = range(3)  # slots of ``counters``


# ---- per-element bodies (every target) -------------------------------------------------------

@register_jitable
def is_active(u, n, source, sink, height, excess):
    """Algorithm 1, line 12: excess left and height below |V| (source and sink never are)."""
    return u != source and u != sink and excess[u] > 0 and height[u] < n


@register_jitable
def lowest_arc(layout, u, first, step, m, a0, a1, a2, a3, a4, residual, height):
    """Min key over u's residual arcs numbered first, first+step, ... (step 1: one thread; 32: one lane)."""
    return lowest_arc_upto(layout, u, first, arc_count(layout, u, a0, a2), step, m, a0, a1, a2, a3, a4,
                           residual, height)


@register_jitable
def lowest_arc_upto(layout, u, first, stop, step, m, a0, a1, a2, a3, a4, residual, height):
    """Min key over u's residual arcs numbered first, first+step, ... below ``stop`` (one hub piece)."""
    best = NO_ARC
    for k in range(first, stop, step):
        v, slot = arc_at(layout, u, k, m, a0, a1, a2, a3, a4)
        if residual[slot] > 0:
            key = (np.int64(height[v]) << 32) | np.int64(k)
            if key < best:
                best = key
    return best


@register_jitable
def arcs_scanned(count, first, step):
    """How many arcs ``lowest_arc(first, step)`` looks at for a vertex with ``count`` arcs (Eq. 1's d(v) share)."""
    if first >= count:
        return 0
    return (count - first + step - 1) // step


@register_jitable
def hub_pieces(count, chunk):
    """Pieces a vertex with ``count`` arcs is split into: 0 when it is not a hub (count <= chunk)."""
    if count <= chunk:
        return 0
    return (count + chunk - 1) // chunk


@register_jitable
def plan_vertex(layout, u, key, n, m, a0, a1, a2, a3, a4, residual, height, excess):
    """Push or relabel for active u given its lowest-arc key (Algorithm 1, lines 19-26).

    Returns (neighbour, slot, reverse slot, amount, new height): amount > 0 means push ``amount``
    along ``slot`` (never more than e(u) or the arc's residual, both of which only u's owner
    lowers); amount 0 means relabel to ``new height`` (|V| when u has no residual arc at all).
    """
    if key == NO_ARC:
        return -1, -1, -1, np.int64(0), n
    lowest = np.int64(key >> 32)
    if height[u] > lowest:
        v, slot = arc_at(layout, u, np.int64(key & ORDINAL_MASK), m, a0, a1, a2, a3, a4)
        amount = min(excess[u], residual[slot])
        back = reverse_slot(layout, u, v, slot, m, a0, a1, a2)
        return np.int64(v), np.int64(slot), np.int64(back), np.int64(amount), np.int64(height[u])
    return -1, -1, -1, np.int64(0), lowest + 1


# ---- cpu ---------------------------------------------------------------------------------------

@register_jitable(inline="always")
def _plan_into(i, cap, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue, plans):
    """Plan queue entry i into ``plans`` (field f of entry i at f * cap + i)."""
    u = queue[i]
    key = lowest_arc(layout, u, 0, 1, m, a0, a1, a2, a3, a4, residual, height)
    v, slot, back, amount, new_height = plan_vertex(layout, u, key, n, m, a0, a1, a2, a3, a4,
                                                    residual, height, excess)
    plans[i] = v
    plans[cap + i] = slot
    plans[2 * cap + i] = back
    plans[3 * cap + i] = amount
    plans[4 * cap + i] = new_height


@njit(cache=True, parallel=True)
def _launch_cpu(vertex_centric, layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                residual, height, excess, queue, plans, lane_work, counters):
    """One launch of ``cycles`` cycles (see the module docstring); counters[CYCLES_RUN]: cycles run."""
    cap = plans.size // PLAN_FIELDS
    threads = lane_work.size
    n_warps = threads // WARP
    for i in range(threads):  # a loop, not lane_work[:] = 0, which would be a parallel region
        lane_work[i] = 0
    ran = 0
    for _ in range(cycles):
        count = 0
        arcs = 0
        small = 0  # vc model: queue entries that are not hubs (a hub's pieces come after them)
        for u in range(n):
            if is_active(u, n, source, sink, height, excess):
                queue[count] = u
                count += 1
                degree = arc_count(layout, u, a0, a2)
                arcs += degree
                if hub_pieces(degree, chunk) == 0:
                    small += 1
        ran += 1
        if count == 0:
            if vertex_centric:
                break
            continue
        if arcs >= parallel_min:
            for i in prange(count):
                _plan_into(i, cap, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue, plans)
        else:
            for i in range(count):
                _plan_into(i, cap, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue, plans)
        small_entry = 0
        piece_entry = small
        hub = 0
        for i in range(count):  # apply the plans in order (see the module docstring)
            u = queue[i]
            amount = plans[3 * cap + i]
            if amount > 0:
                residual[plans[cap + i]] -= amount
                residual[plans[2 * cap + i]] += amount
                excess[u] -= amount
                excess[plans[i]] += amount
                counters[PUSHES] += 1
            else:
                height[u] = plans[4 * cap + i]
                counters[RELABELS] += 1
            degree = arc_count(layout, u, a0, a2)
            split = hub_pieces(degree, chunk)
            if vertex_centric and split == 0:  # one warp: lanes over the arcs, lane 0 applies
                base = (small_entry % n_warps) * WARP
                small_entry += 1
                for lane in range(WARP):
                    lane_work[base + lane] += arcs_scanned(degree, lane, WARP)
                lane_work[base] += 1
            elif vertex_centric:  # a hub: the scan appends its pieces, one warp each, then a thread applies
                lane_work[(u % threads)] += split
                for piece in range(split):
                    base = (piece_entry % n_warps) * WARP
                    piece_entry += 1
                    piece_arcs = min(chunk, degree - piece * chunk)
                    for lane in range(WARP):
                        lane_work[base + lane] += arcs_scanned(piece_arcs, lane, WARP)
                    lane_work[base] += 1  # the atomic min
                lane_work[hub % threads] += 1
                hub += 1
            else:
                lane_work[u % threads] += degree + 1
    for lane in range(threads):  # the activity checks of every cycle run
        lane_work[lane] += ran * arcs_scanned(n, lane, threads)
    counters[CYCLES_RUN] = ran


@njit(cache=True)
def tc_push_relabel_cpu(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                        residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                        lane_work, counters, warp_cycles):
    _launch_cpu(False, layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                residual, height, excess, queue, plans, lane_work, counters)


@njit(cache=True)
def vc_push_relabel_cpu(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                        residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                        lane_work, counters, warp_cycles):
    _launch_cpu(True, layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                residual, height, excess, queue, plans, lane_work, counters)


# ---- cuda (and the simulator) --------------------------------------------------------------------

@register_jitable
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


@register_jitable
def _warp_min_shuffle(value):
    """Lane 0 gets the warp's minimum (Harris's reduction, unrolled over shuffles)."""
    offset = WARP // 2
    while offset > 0:
        other = cuda.shfl_down_sync(FULL_MASK, value, offset)
        if other < value:
            value = other
        offset //= 2
    return value


@register_jitable
def _warp_min_shared(value):
    """Lane 0 gets the warp's minimum via shared memory; every thread of the block must call it."""
    buffer = cuda.shared.array(MAX_THREADS_PER_BLOCK, types.int64)
    tx = cuda.threadIdx.x
    lane = tx % WARP
    buffer[tx] = value
    cuda.syncthreads()
    offset = WARP // 2
    while offset > 0:
        if lane < offset and buffer[tx + offset] < buffer[tx]:
            buffer[tx] = buffer[tx + offset]
        cuda.syncthreads()
        offset //= 2
    value = buffer[tx]
    cuda.syncthreads()  # the next call overwrites the buffer
    return value


@register_jitable
def _tc_body(measure, layout, n, m, source, sink, cycles, a0, a1, a2, a3, a4, residual, height, excess,
             lane_work, counters, warp_cycles):
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = tid % WARP
    start = np.int64(0)
    if measure and lane == 0:
        start = clock64()
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
            warp_cycles[tid // WARP] = clock64() - start
    lane_work[tid] = work
    if pushes > 0:  # two totals, not a per-thread array: the host reads 24 bytes, not megabytes
        cuda.atomic.add(counters, PUSHES, pushes)
    if relabels > 0:
        cuda.atomic.add(counters, RELABELS, relabels)
    if tid == 0:
        counters[CYCLES_RUN] = cycles


@register_jitable
def _vc_body(measure, shuffle, layout, n, m, source, sink, cycles, chunk, a0, a1, a2, a3, a4,
             residual, height, excess, queue, queue_count, hubs, hub_key, pieces, lane_work, counters,
             warp_cycles):
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = tid % WARP
    warp = tid // WARP
    n_warps = threads // WARP
    busy = np.int64(0)
    start = np.int64(0)
    work = np.int64(0)
    pushes = np.int64(0)
    relabels = np.int64(0)
    ran = 0
    for cycle in range(cycles):
        ran += 1
        base = 3 * (cycle & 1)  # queue_count[base + 0, 1, 2]: vertices, hubs, hub pieces
        if measure and lane == 0:
            start = clock64()
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
                busy += clock64() - start
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
            start = clock64()
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
            if shuffle:
                best = _warp_min_shuffle(best)
            else:
                best = _warp_min_shared(best)
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
                busy += clock64() - start
        grid.sync()
        if n_hubs > 0:  # every piece has met in hub_key: apply the hubs (n_hubs is the same for all)
            if measure and lane == 0:
                start = clock64()
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
                    busy += clock64() - start
            grid.sync()  # the next scan sees the hubs' pushes
    grid.sync()
    if tid == 0:
        for slot in range(6):
            queue_count[slot] = 0
        counters[CYCLES_RUN] = ran
    if measure and lane == 0:
        warp_cycles[warp] = busy
    lane_work[tid] = work
    if pushes > 0:  # two totals, not a per-thread array: the host reads 24 bytes, not megabytes
        cuda.atomic.add(counters, PUSHES, pushes)
    if relabels > 0:
        cuda.atomic.add(counters, RELABELS, relabels)


@cuda_kernel
def tc_push_relabel(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                    residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                    lane_work, counters, warp_cycles):
    _tc_body(False, layout, n, m, source, sink, cycles, a0, a1, a2, a3, a4, residual, height, excess,
             lane_work, counters, warp_cycles)


@cuda_kernel
def tc_push_relabel_measured(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                             residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                             lane_work, counters, warp_cycles):
    _tc_body(True, layout, n, m, source, sink, cycles, a0, a1, a2, a3, a4, residual, height, excess,
             lane_work, counters, warp_cycles)


@cuda_kernel
def vc_push_relabel(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                    residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                    lane_work, counters, warp_cycles):
    _vc_body(False, True, layout, n, m, source, sink, cycles, chunk, a0, a1, a2, a3, a4, residual, height,
             excess, queue, queue_count, hubs, hub_key, pieces, lane_work, counters, warp_cycles)


@cuda_kernel
def vc_push_relabel_measured(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                             residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                             lane_work, counters, warp_cycles):
    _vc_body(True, True, layout, n, m, source, sink, cycles, chunk, a0, a1, a2, a3, a4, residual, height,
             excess, queue, queue_count, hubs, hub_key, pieces, lane_work, counters, warp_cycles)


@cuda_kernel
def vc_push_relabel_shared(layout, n, m, source, sink, cycles, chunk, parallel_min, a0, a1, a2, a3, a4,
                           residual, height, excess, queue, queue_count, hubs, hub_key, pieces, plans,
                           lane_work, counters, warp_cycles):
    _vc_body(False, False, layout, n, m, source, sink, cycles, chunk, a0, a1, a2, a3, a4, residual, height,
             excess, queue, queue_count, hubs, hub_key, pieces, lane_work, counters, warp_cycles)


# ---- the Kernel records ----------------------------------------------------------------------------

# tc: one thread per vertex (the simulator: blocks of one warp); vc: a co-resident grid of one warp per
# vertex at most (tiles: the vertices one block's warps take), the simulator: one block of two warps
VC_TILES = THREADS_PER_BLOCK // WARP_SIZE
TC = Kernel("wbpr.tc_push_relabel", cpu=tc_push_relabel_cpu, cuda=tc_push_relabel, shape=EACH,
            sim_threads=WARP_SIZE)
TC_MEASURED = Kernel("wbpr.tc_push_relabel_measured", cpu=tc_push_relabel_cpu, cuda=tc_push_relabel_measured,
                     shape=EACH, sim_threads=WARP_SIZE)
VC = Kernel("wbpr.vc_push_relabel", cpu=vc_push_relabel_cpu, cuda=vc_push_relabel, shape=COOPERATIVE,
            sim_threads=2 * WARP_SIZE, tiles=VC_TILES)
VC_MEASURED = Kernel("wbpr.vc_push_relabel_measured", cpu=vc_push_relabel_cpu, cuda=vc_push_relabel_measured,
                     shape=COOPERATIVE, sim_threads=2 * WARP_SIZE, tiles=VC_TILES)
VC_SHARED = Kernel("wbpr.vc_push_relabel_shared", cpu=vc_push_relabel_cpu, cuda=vc_push_relabel_shared,
                   shape=COOPERATIVE, sim_threads=2 * WARP_SIZE, tiles=VC_TILES)
KERNELS = (TC, TC_MEASURED, VC, VC_MEASURED, VC_SHARED)

# the argument types every form is specialised for (one specialisation: int64 scalars, int32 vertex
# arrays, int64 residuals, excesses and counters); cuda.compile_ptx and the tests use them
_i64 = types.int64
_i32a = types.int32[::1]
_i64a = types.int64[::1]
PUSH_ARGS = (_i64,) * 8 + (_i32a,) * 5 + (_i64a, _i32a, _i64a, _i32a, _i32a, _i32a, _i64a, _i64a, _i64a,
                                          _i64a, _i64a, _i64a)
PUSH_SIG = types.void(*PUSH_ARGS)
