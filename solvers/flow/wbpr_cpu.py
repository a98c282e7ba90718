"""WBPR on CPU cores (numba): the same launch / global-relabel steps as the cuda kernels.

A push-relabel *launch* runs ``cycles`` cycles. Each cycle collects the active vertices (Algorithm
2's queue), plans every active vertex in parallel (prange over the shared ``lowest_arc`` /
``plan_vertex`` bodies: the lowest-neighbour search, then push amount or new height) and then
applies the plans on one core. Why not atomics as on the GPU: numba has no CPU atomics, and the
planning reads a consistent snapshot, so the parallel part never writes shared state; applying the
plans in order is then race-free (a push only lowers its own vertex's excess and arc residual, which
nobody else lowers, so the planned amount stays available). It is the synchronous form of the
lock-free algorithm: the expensive arc scans run in parallel, the O(active) updates do not.

``mode`` tc and vc plan the same vertices on CPU; they differ in what is modelled: the per-warp
work of the GPU kernel they stand for (tc: thread v owns vertex v and scans all its arcs; vc: queue
entry i goes to warp i mod n_warps, whose lane l scans arcs l, l+32, ...; a hub, a vertex with more
than HUB_CHUNK arcs, becomes pieces of HUB_CHUNK arcs queued after the other entries, one warp each,
and one thread applies it (solvers.flow.wbpr_kernels); both: every cycle each
lane checks its vertices for activity, v = lane, lane + threads, ...), and vc stops a launch as soon
as no vertex is active (the paper's early exit), tc runs all its cycles. The modelled grid has one
lane per vertex (vc: at most MODELLED_WARPS warps, a co-resident grid), so tc and vc compare on
the same lanes while the graph is small, as in the paper's Figure 3.

The global relabel is a sequential BFS backwards from ``root`` over residual arcs (the cuda path is
level-synchronous on the device), followed by the Excess_total bookkeeping (see wbpr.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..telemetry import Pacer
from . import _wbpr_steps as steps
from ._wbpr_steps import (ACTIVE, LEVELS, SINK_EXCESS, SOURCE_EXCESS, STRANDED, TOTAL, arcs_scanned,
                          hub_pieces, is_active, lowest_arc, plan_vertex)
from .residual import arc_at, arc_count, reverse_slot

# arcs to scan below which one cycle's planning stays on one core (waking worker threads costs more)
PARALLEL_MIN_ARCS = 1 << 15
WARP = 32


@njit(cache=True, inline="always")
def _plan(i, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue,
          plan_nbr, plan_slot, plan_back, plan_amount, plan_height):
    u = queue[i]
    key = lowest_arc(layout, u, 0, 1, m, a0, a1, a2, a3, a4, residual, height)
    v, slot, back, amount, new_height = plan_vertex(layout, u, key, n, m, a0, a1, a2, a3, a4,
                                                    residual, height, excess)
    plan_nbr[i] = v
    plan_slot[i] = slot
    plan_back[i] = back
    plan_amount[i] = amount
    plan_height[i] = new_height


@njit(cache=True, parallel=True)
def push_relabel_launch(layout, vertex_centric, n, m, source, sink, cycles, n_warps, parallel_min_arcs, chunk,
                        a0, a1, a2, a3, a4, residual, height, excess, queue,
                        plan_nbr, plan_slot, plan_back, plan_amount, plan_height, lane_work, counters):
    """One launch of ``cycles`` cycles; returns the cycles run. lane_work: modelled work per lane.
    A cycle plans in parallel when its active vertices have at least ``parallel_min_arcs`` arcs."""
    for i in range(lane_work.size):  # a loop, not lane_work[:] = 0, which would be a parallel region
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
        if arcs >= parallel_min_arcs:
            for i in prange(count):
                _plan(i, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue,
                      plan_nbr, plan_slot, plan_back, plan_amount, plan_height)
        else:
            for i in range(count):
                _plan(i, layout, n, m, a0, a1, a2, a3, a4, residual, height, excess, queue,
                      plan_nbr, plan_slot, plan_back, plan_amount, plan_height)
        small_entry = 0
        piece_entry = small
        hub = 0
        for i in range(count):  # apply the plans in order (see the module docstring)
            u = queue[i]
            amount = plan_amount[i]
            if amount > 0:
                residual[plan_slot[i]] -= amount
                residual[plan_back[i]] += amount
                excess[u] -= amount
                excess[plan_nbr[i]] += amount
                counters[0] += 1
            else:
                height[u] = plan_height[i]
                counters[1] += 1
            degree = arc_count(layout, u, a0, a2)
            split = hub_pieces(degree, chunk)
            if vertex_centric and split == 0:  # one warp: lanes over the arcs, lane 0 applies
                base = (small_entry % n_warps) * WARP
                small_entry += 1
                for lane in range(WARP):
                    lane_work[base + lane] += arcs_scanned(degree, lane, WARP)
                lane_work[base] += 1
            elif vertex_centric:  # a hub: the scan appends its pieces, one warp each, then a thread applies
                lane_work[(u % lane_work.size)] += split
                for piece in range(split):
                    base = (piece_entry % n_warps) * WARP
                    piece_entry += 1
                    piece_arcs = min(chunk, degree - piece * chunk)
                    for lane in range(WARP):
                        lane_work[base + lane] += arcs_scanned(piece_arcs, lane, WARP)
                    lane_work[base] += 1  # the atomic min
                lane_work[hub % lane_work.size] += 1
                hub += 1
            else:
                lane_work[u % lane_work.size] += degree + 1
    threads = lane_work.size
    for lane in range(threads):  # the activity checks of every cycle run
        lane_work[lane] += ran * arcs_scanned(n, lane, threads)
    return ran


@njit(cache=True)
def global_relabel(layout, n, m, root, blocked, source, sink, a0, a1, a2, a3, a4,
                   residual, height, excess, stranded, bfs, status):
    """Exact distances to ``root`` in the residual graph (|V| = unreachable; ``blocked`` is never entered),
    then strand the excess of unreachable vertices: subtract it from Excess_total once, for good."""
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


MODELLED_WARPS = 132 * 8  # vc's modelled co-resident grid: an H100's 132 SMs x one 256-thread block


class CpuEngine:
    """Holds the arrays of one run on CPU; the host loop in wbpr.py drives it (same calls as CudaEngine)."""

    def __init__(self, graph, vertex_centric: bool, source: int, sink: int, excess, total: int,
                 check_cancel=None):
        self.graph = graph
        # with someone listening (check_cancel given), a launch runs in slices of about 25 ms of
        # cycles with a Stop check between them: one compiled call of many cycles holds the GIL
        self.check_cancel = check_cancel
        self.pace = Pacer(check_cancel is not None, start=4, limit=1 << 30)
        self.parallel_min_arcs = PARALLEL_MIN_ARCS
        self.chunk = int(steps.HUB_CHUNK)  # only shapes the vc workload model here (the plans are the same)
        self.vertex_centric = vertex_centric
        self.source, self.sink = source, sink
        n = graph.n
        self.residual_ = graph.residual.copy()
        self.height = np.zeros(n, dtype=np.int32)
        self.excess_ = np.asarray(excess, dtype=np.int64).copy()
        self.stranded = np.zeros(n, dtype=np.int32)
        self.queue = np.zeros(max(n, 1), dtype=np.int64)
        self.plans = tuple(np.zeros(max(n, 1), dtype=np.int64) for _ in range(5))
        self.n_warps = max(1, (n + WARP - 1) // WARP)  # one lane per vertex
        if vertex_centric:
            self.n_warps = min(self.n_warps, MODELLED_WARPS)
        self.threads = self.n_warps * WARP
        self.lane_work = np.zeros(self.threads, dtype=np.int64)
        self.counters_ = np.zeros(2, dtype=np.int64)
        self.status_ = np.zeros(8, dtype=np.int64)
        self.status_[TOTAL] = total

    def push_relabel(self, cycles: int, measured: bool = False) -> None:
        if self.check_cancel is None:
            self._launch(cycles)
            return
        work = np.zeros_like(self.lane_work)  # the whole launch's modelled work, over its slices
        left = cycles
        while left > 0:
            step = min(left, self.pace.size)
            self.pace.start()
            ran = self._launch(step)
            self.pace.stop(step)
            work += self.lane_work
            left -= step
            if ran < step:  # vc: no vertex active, the launch ends early
                break
            self.check_cancel()
        self.lane_work[:] = work

    def _launch(self, cycles: int) -> int:
        g = self.graph
        return push_relabel_launch(g.layout, self.vertex_centric, g.n, g.m, self.source, self.sink, cycles,
                                   self.n_warps, self.parallel_min_arcs, self.chunk, *g.arrays, self.residual_,
                                   self.height, self.excess_, self.queue, *self.plans, self.lane_work,
                                   self.counters_)

    def global_relabel(self, root: int, blocked: int) -> None:
        g = self.graph
        global_relabel(g.layout, g.n, g.m, root, blocked, self.source, self.sink, *g.arrays,
                       self.residual_, self.height, self.excess_, self.stranded, self.queue, self.status_)

    def status(self) -> np.ndarray:
        return self.status_.copy()

    def heights(self) -> np.ndarray:
        return self.height.copy()

    def workload(self, measured: bool = False):
        """(modelled work per lane, measured cycles per warp or None): no clock on CPU."""
        return self.lane_work.copy(), None

    def residual(self) -> np.ndarray:
        return self.residual_.copy()

    def excess(self) -> np.ndarray:
        return self.excess_.copy()

    def counters(self) -> tuple[int, int]:
        return int(self.counters_[0]), int(self.counters_[1])

    def reopen_stranded(self, total: int) -> None:
        """Start the return phase: every vertex counts again and Excess_total is the whole preflow."""
        self.stranded[:] = 0
        self.status_[TOTAL] = total
