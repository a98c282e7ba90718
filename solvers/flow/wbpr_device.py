"""``WbprDevice``: the arrays of one wbpr run on any target, and the steps the host loop (wbpr.py) asks for.

Imported only when a run starts (its step modules import numba). It holds the arrays (made by the
launcher) and launches the Kernel records of solvers.flow.wbpr_push (push-relabel) and
solvers.flow.wbpr_relabel (global relabel) through the ``Launcher`` it is given; it never asks which
target it has, only what the launcher can do (``device``: arrays live in device memory;
``simulated``: no shuffles and no clock). Only ``status``, ``heights``, ``workload``, ``residual``
and ``counters`` copy to the host (and so synchronise on a GPU); launches are asynchronous.

The modelled lanes (``lane_work``, one per thread of the push-relabel launch) are the launch's own
threads on a GPU; on cpu, one lane per vertex, and for vc at most MODELLED_WARPS warps (a
co-resident grid), so tc and vc compare on the same lanes while the graph is small, as in the
paper's Figure 3.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..targets.geometry import WARP_SIZE
from ..telemetry import Pacer
from .wbpr_push import CYCLES_RUN, PLAN_FIELDS, PUSHES, RELABELS, TC, TC_MEASURED, VC, VC_MEASURED, VC_SHARED
from .wbpr_relabel import (ACTIVE, FRONTIER_COUNTS, GLOBAL_RELABEL, LEVELS, SINK_EXCESS, SOURCE_EXCESS,
                           STATUS_SLOTS, STRANDED, TOTAL)

HUB_CHUNK = 256                 # arcs per hub piece (wbpr_push); read per run, so a test can shrink it
PARALLEL_MIN_ARCS = 1 << 15     # cpu: arcs to scan below which a cycle's planning stays on one core
MODELLED_WARPS = 132 * 8        # cpu vc's modelled co-resident grid: an H100's 132 SMs x one 256-thread block
QUEUE_COUNTS = 6                # queue_count: (vertices, hubs, hub pieces), double-buffered by cycle parity


@dataclass(frozen=True)
class Status:
    """What a global relabel leaves for the host's termination check (exact integers)."""

    total: int           # Excess_total: what left the source, less stranded excess
    source_excess: int
    sink_excess: int
    active: int          # vertices with excess that can still reach the root
    levels: int          # the BFS's deepest level
    stranded: int        # vertices whose excess can never reach the root

    @classmethod
    def read(cls, slots: np.ndarray) -> Status:
        return cls(*(int(slots[k]) for k in (TOTAL, SOURCE_EXCESS, SINK_EXCESS, ACTIVE, LEVELS, STRANDED)))


class WbprDevice:
    """One run's arrays on the launcher's target; the host loop in wbpr.py drives it."""

    def __init__(self, launcher, graph, vertex_centric: bool, source: int, sink: int, excess, total: int,
                 may_measure: bool = False, check_cancel=None):
        self.launcher = launcher
        self.graph = graph
        self.vertex_centric = vertex_centric
        self.source, self.sink = source, sink
        # measured launches (clock64 per warp) on a real GPU only
        self.measure = bool(may_measure) and launcher.device and not launcher.simulated
        # cpu, with someone listening (check_cancel given): a launch runs in slices of about 25 ms of
        # cycles with a Stop check between them, since one compiled call of many cycles holds the GIL
        self.check_cancel = check_cancel if not launcher.device else None
        self.pace = Pacer(self.check_cancel is not None, start=4, limit=1 << 30)
        self.parallel_min = int(PARALLEL_MIN_ARCS)
        self.chunk = int(HUB_CHUNK)
        n = graph.n
        cap = max(n, 1)
        up = launcher.upload
        self.arrays = tuple(up(a, np.int32) for a in graph.arrays)
        self.residual_ = up(graph.residual, np.int64)
        self.excess_ = up(np.asarray(excess, dtype=np.int64), np.int64)
        status = np.zeros(STATUS_SLOTS, dtype=np.int64)
        status[TOTAL] = total
        self.status_ = up(status)
        degrees = graph.degrees()
        hub_degrees = degrees[degrees > self.chunk]
        n_hubs = max(hub_degrees.size, 1)
        n_pieces = max(int(np.sum(-(-hub_degrees // self.chunk))), 1)  # every hub's pieces, all at once at most
        # the zero-initialised work arrays: one allocation per dtype, sliced into views
        (self.height, self.stranded, self.frontier_a, self.frontier_b, self.frontier_count, self.queue,
         self.queue_count, self.hubs) = self._zeroed(np.int32, (n, n, cap, cap, FRONTIER_COUNTS, cap,
                                                                QUEUE_COUNTS, n_hubs))
        plans = PLAN_FIELDS * (1 if launcher.device else cap)  # the cpu loop's plans (the GPU applies at once)
        self.pieces_a, self.pieces_b, self.hub_key, self.plans = self._zeroed(
            np.int64, (n_pieces, n_pieces, n_hubs, plans))
        self.push_size, self.threads = self._push_launch(n)
        self.lane_work, self.counters_, self.warp_cycles = self._zeroed(
            np.int64, (self.threads, 3, max(self.threads // WARP_SIZE, 1)))
        self._status_host = launcher.scratch(STATUS_SLOTS, np.int64)
        self._counters_host = launcher.scratch(3, np.int64)

    def _zeroed(self, dtype, sizes):
        """Target views of ``sizes`` elements each, zero-filled, carved from one allocation."""
        buffer = self.launcher.zeros(max(sum(sizes), 1), dtype)
        views, offset = [], 0
        for size in sizes:
            views.append(buffer[offset:offset + size])
            offset += size
        return views

    def _push_kernel(self, measured: bool):
        if self.vertex_centric:
            if self.launcher.simulated:
                return VC_SHARED  # the simulator has no shuffles
            return VC_MEASURED if measured else VC
        return TC_MEASURED if measured else TC

    def _push_launch(self, n: int) -> tuple[int, int]:
        """(the size every push-relabel launch is given, its threads = modelled lanes)."""
        if not self.launcher.device:
            n_warps = max(1, (n + WARP_SIZE - 1) // WARP_SIZE)  # one lane per vertex
            if self.vertex_centric:
                n_warps = min(n_warps, MODELLED_WARPS)
            return n, n_warps * WARP_SIZE
        probe = self.launcher.zeros(1, np.int64)  # lane_work's type: cooperative limits depend on types only
        args = self._push_args(1, probe, probe, probe)
        kernels = [self._push_kernel(False)] + ([self._push_kernel(True)] if self.measure else [])
        shapes = [self.launcher.dims(kernel, max(n, 1), *args) for kernel in kernels]
        blocks, block = min(shape[0] for shape in shapes), shapes[0][1]
        # a cooperative grid: measured and plain launches get the same blocks (the fewer that fit)
        size = blocks * kernels[0].tiles if self.vertex_centric else max(n, 1)
        return size, blocks * block

    def _push_args(self, cycles, lane_work, counters, warp_cycles):
        g = self.graph
        return (g.layout, g.n, g.m, self.source, self.sink, int(cycles), self.chunk, self.parallel_min,
                *self.arrays, self.residual_, self.height, self.excess_, self.queue, self.queue_count, self.hubs,
                self.hub_key, self.pieces_a, self.plans, lane_work, counters, warp_cycles)

    def push_relabel(self, cycles: int, measured: bool = False) -> None:
        kernel = self._push_kernel(measured and self.measure)
        if self.check_cancel is None:
            self._launch(kernel, cycles)
            return
        read = self.launcher.read
        work = np.zeros(self.threads, dtype=np.int64)  # the whole launch's modelled work, over its slices
        slice_work = self.launcher.scratch(self.threads, np.int64)  # added to work as soon as read
        left = cycles
        while left > 0:
            step = min(left, self.pace.size)
            self.pace.start()
            self._launch(kernel, step)
            ran = int(read(self.counters_, out=self._counters_host)[CYCLES_RUN])
            self.pace.stop(step)
            work += read(self.lane_work, out=slice_work)
            left -= step
            if ran < step:  # vc: no vertex active, the launch ends early
                break
            self.check_cancel()
        self.launcher.write(self.lane_work, work)

    def _launch(self, kernel, cycles: int) -> None:
        self.launcher.launch(kernel, self.push_size,
                             *self._push_args(cycles, self.lane_work, self.counters_, self.warp_cycles))

    def global_relabel(self, root: int, blocked: int) -> None:
        g = self.graph
        self.launcher.launch(GLOBAL_RELABEL, max(g.n, 1), g.layout, g.n, g.m, root, blocked, self.source,
                             self.sink, self.chunk, *self.arrays, self.residual_, self.height, self.excess_,
                             self.stranded, self.frontier_a, self.frontier_b, self.pieces_a, self.pieces_b,
                             self.frontier_count, self.status_)

    def status(self) -> Status:
        return Status.read(self.launcher.read(self.status_, out=self._status_host))

    def heights(self) -> np.ndarray:
        return self.launcher.read(self.height)

    def workload(self, measured: bool = False):
        """(modelled work per lane, clock64 cycles per warp or None) of the last push-relabel launch."""
        cycles = self.launcher.read(self.warp_cycles) if measured and self.measure else None
        return self.launcher.read(self.lane_work), cycles

    def residual(self) -> np.ndarray:
        return self.launcher.read(self.residual_)[:2 * self.graph.m]

    def counters(self) -> tuple[int, int]:
        both = self.launcher.read(self.counters_, out=self._counters_host)
        return int(both[PUSHES]), int(both[RELABELS])

    def reopen_stranded(self, total: int) -> None:
        """Start the return phase: every vertex counts again and Excess_total is the whole preflow."""
        self.launcher.write(self.stranded, np.zeros(self.graph.n, dtype=np.int32))
        status = self.launcher.read(self.status_)
        status[TOTAL] = total
        self.launcher.write(self.status_, status)
