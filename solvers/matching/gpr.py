"""G-PR: GPU push-relabel maximum cardinality bipartite matching (Deveci, Kaya, Uçar, Çatalyürek,
ICPP 2013), one host loop for the cuda, cudasim and cpu targets.

This module declares the algorithm and holds the host loop; it imports no numba. A run gets its
launcher from ``solvers.targets.launcher_for(backend)`` and drives one
``gpr_device.GprDevice``, which launches the Kernel records of gpr_kernels / gpr_lists (each step's
body beside its cpu loops and cuda kernel).

The paper's pieces, all lock- and atomic-free:
  G-GR      global relabel: INITRELABEL, then one level-synchronous BFS kernel per even level from
            the unmatched rows; returns maxLevel. Unreached vertices get the cap m + n.
  G-PR-KRNL (variant "first") one thread per column; active columns push to a row of minimum label.
  A_c / A_p (variants "noshrink", "shrink") the active-column lists: INITKRN rolls back pushes that
            lost a race and stamps the active columns with the loop (iA), PUSHKRN pushes and records
            the displaced column, then the lists swap.
  SHRKRN    ("shrink") after each global relabel, when |A_c| >= shrink_min (paper: 512), the list
            is compacted by a prefix sum.
  GETITERGR next global relabel after k * maxLevel loops ("adaptive", paper's best k = 0.7) or
            after k loops ("fixed"; the paper's text gives no value, we use FIXED_K = 10).
  FIXMATCHING columns whose row points elsewhere become unmatched.

Beyond the paper:
  * The host reads the device flags (loop / level stamps, never cleared) only every ``sync_every``
    push loops (a launch costs ~19 us from Python, a one-int readback ~104 us on an H100); the few
    loops launched after the last active one are no-ops. BFS levels are read back every
    max(sync_every, sqrt(5 x expected levels)) launches.
  * ``device_loop`` (on by default on a GPU): one cooperative launch runs a whole batch of loops (or
    a whole BFS) with grid syncs between the steps and a uniform early exit; the simulator runs it
    on one block, the cpu as one compiled call per batch. If cooperative launch is unavailable the
    device reports why (stats["device_loop_error"]) and keeps one launch per step.
  * On cpu a graph below PARALLEL_MIN a side runs plain loops on one thread (see PARALLEL_MIN).
  * The greedy cheap matching runs on the target too (parallel rounds of claim-then-settle).
  * ``final_check``: after FIXMATCHING a global relabel from the unmatched rows proves that no
    unmatched column can reach one, i.e. that no augmenting path is left (Berge). The paper argues
    the races benign; this check makes the result independent of that argument (a weak memory
    model could in principle leave a label too high). If a column is still reachable, the loop
    resumes from those columns (counted in stats["restarts"]; expected 0).
  * Telemetry (only with an observer): per readback a "push" iteration with the number of active
    columns and |M|, per global relabel a "global-relabel" iteration with max_level and the
    number of unreachable columns (the final check reports as active the unmatched columns it
    still reaches), throttled "labels" (psi) and "workload" (the paper's per-warp cost model: the
    degrees of the 32 consecutive active columns a warp takes) snapshots, and the final labels.
    A launch's workload must be read before it runs, and the end state has no launch, so the
    run's tail is caught instead: a workload snapshot is also due when the active count falls to
    half of the lowest one snapshotted (at most log2 n of them, down to the last few columns).
    With an observer, a host call (a resident batch of loops, a batch of BFS levels) is paced to
    a few tens of ms so that Stop is answered quickly (the loops and their order are unchanged),
    and the O(n) counts behind the active count and |M| are skipped at readbacks that come
    sooner than a few times their own cost after the last ones (telemetry.Budget), so watching
    a run does not multiply its time; the end state is always counted.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import InputError
from ..problems import BipartiteGraph
from ..registry import Algorithm, Option
from ..result import Solution
from ..targets import WARP_SIZE, launcher_for
from ..telemetry import Budget, Pacer

ADAPTIVE_K = 0.7
FIXED_K = 10.0
SHRINK_MIN = 512
SYNC_EVERY_CUDA = 8  # on cpu and the simulator a readback is free and a no-op launch is not: 1

OPTIONS = (
    Option("variant", "shrink", ("first", "noshrink", "shrink"),
           "first: one thread per column (G-PR-First); noshrink: active-column lists; "
           "shrink: lists compacted after each global relabel (G-PR-Shr, the paper's best)"),
    Option("gr", "adaptive", ("adaptive", "fixed"),
           "global relabel every k*maxLevel loops (adaptive) or every k loops (fixed)"),
    Option("k", 0.0, None, f"global-relabel frequency; 0 = the default of the strategy "
                           f"({ADAPTIVE_K} adaptive as in the paper, {FIXED_K:g} fixed)", low=0.0, high=1e6),
    Option("init", "cheap", ("cheap", "none"), "initial matching: greedy cheap matching or empty"),
    Option("sync_every", 0, None, f"launches between two reads of the device flags; 0 = {SYNC_EVERY_CUDA} "
                                  f"on cuda, 1 on cpu and cudasim", low=0, high=1_000_000),
    Option("shrink_min", SHRINK_MIN, None, "compact the active lists only from this length (paper: 512)",
           low=0, high=2**31 - 1),
    Option("final_check", True, None, "prove maximality with a last global relabel (resume if not)"),
    Option("device_loop", "auto", ("auto", "on", "off"),
           "keep the loop on the target: cooperative kernels with grid syncs on cuda (one block on cudasim), "
           "one host call per batch on cpu; auto = on for cuda (about twice as fast there), off elsewhere "
           "(a telemetry report per loop)"),
)

ALGORITHMS = [
    Algorithm("gpr", ("matching",), (BipartiteGraph,), ("cpu", "cuda", "cudasim"), "solvers.matching.gpr:run",
              OPTIONS, label="psi",
              summary="GPU push-relabel maximum cardinality matching (G-PR): lock-free pushes on active-column "
                      "lists, level-synchronous global relabeling, adaptive relabel frequency",
              reference="Deveci et al. 2013", phases=("push", "global-relabel")),
]

# counters slots (see gpr_kernels): the two stamps, then telemetry counts
ACT, GR = 0, 1
FREE_ROWS, ACTIVE, UNREACHABLE = 3, 4, 5
MAX_BATCH = 1 << 30
READBACK_PER_LAUNCH = 5  # a one-int readback costs ~104 us, a launch ~19 us (H100, from Python)
# cpu: graphs with fewer rows and columns a side than this run plain (serial) loops on one thread. A
# run is thousands of short parallel regions (one per BFS level, per push loop): on 2 cores a
# 3600-a-side road grid took 5x longer on two threads than on one; and a run that never touches the
# parallel loops never loads them (~0.6 s from the cache on 2 cores, more than a small solve).
# Read at each run (tests force the parallel loops on tiny graphs).
PARALLEL_MIN = 4096


def run(graph: BipartiteGraph, backend: str, tel, variant: str = "shrink", gr: str = "adaptive", k: float = 0.0,
        init: str = "cheap", sync_every: int = 0, shrink_min: int = SHRINK_MIN,
        final_check: bool = True, device_loop="auto") -> Solution:
    if variant not in ("first", "noshrink", "shrink"):
        raise InputError(f"variant {variant!r}: choose first, noshrink or shrink")
    if gr not in ("adaptive", "fixed"):
        raise InputError(f"gr {gr!r}: choose adaptive or fixed")
    if init not in ("cheap", "none"):
        raise InputError(f"init {init!r}: choose cheap or none")
    if device_loop not in ("auto", "on", "off", True, False):
        raise InputError(f"device_loop {device_loop!r}: choose auto, on or off")
    k = float(k) if k else (ADAPTIVE_K if gr == "adaptive" else FIXED_K)
    if not math.isfinite(k) or k <= 0:
        raise InputError(f"k must be a positive number, got {k}")
    if int(sync_every) < 0:
        raise InputError(f"sync_every must be >= 0, got {sync_every}")
    if int(shrink_min) < 0:
        raise InputError(f"shrink_min must be >= 0, got {shrink_min}")
    if graph.n_rows + graph.n_cols >= np.iinfo(np.int32).max - 2:
        raise InputError("gpr stores vertex ids and labels as int32: too many vertices", graph.source)
    launcher = launcher_for(backend)
    # on a real GPU a launch is cheap next to a readback: batch loops, keep them on the device
    gpu = launcher.device and not launcher.simulated
    resident = device_loop in ("on", True) or (device_loop == "auto" and gpu)
    sync_every = int(sync_every) or (SYNC_EVERY_CUDA if gpu else 1)
    stats = {"variant": variant, "gr": gr, "k": k, "init": init, "sync_every": int(sync_every),
             "shrink_min": int(shrink_min), "final_check": bool(final_check)}
    if graph.n_edges == 0:  # nothing can be matched; no device work
        stats.update(device_loop=False, loops=0, global_relabels=0, max_level=0, initial_matching=0, shrinks=0,
                     restarts=0, syncs=0)
        return Solution(0.0, 0, np.full(graph.n_rows, -1, np.int64), np.full(graph.n_cols, -1, np.int64),
                        stats=stats)
    from . import gpr_device  # numba loads here, when a run starts
    with launcher.session(max(graph.n_rows, graph.n_cols), parallel_min=PARALLEL_MIN):
        device = gpr_device.GprDevice(launcher, graph, resident, parallel_min=PARALLEL_MIN)
        stats["device_loop"] = bool(device.resident)
        if device.resident_error:
            stats["device_loop_error"] = device.resident_error
        loop = _HostLoop(device, graph, tel, variant, gr, k, int(sync_every), int(shrink_min), init).run(final_check)
        row_match, col_match = device.host_matching()
    # both directions are handed over: the certificate checks that they agree (a kernel bug shows
    # there as an invalid answer, never as a certified one)
    stats.update(loop.stats)
    value = int(np.count_nonzero(row_match >= 0))
    on_device = launcher.device
    return Solution(float(value), loop.stats["loops"], row_match, col_match, stats=stats,
                    device_graph=(device.row_ptr, device.col_ind) if on_device else None,
                    device_matching=(device.mu_row, device.mu_col) if on_device else None)


class _HostLoop:
    """Algorithm 7 of the paper (Algorithm 3 for variant "first"), batched between readbacks."""

    def __init__(self, device, graph, tel, variant, gr, k, sync_every, shrink_min, init):
        self.dev, self.tel = device, tel
        self.graph = graph
        self.m, self.n = graph.n_rows, graph.n_cols
        self.inf = self.m + self.n
        self.variant, self.gr, self.k = variant, gr, k
        self.sync_every, self.shrink_min, self.init = sync_every, shrink_min, init
        self.loop = 0            # loops launched so far
        self.last_active = -1    # last loop that had an active column
        self.length = 0          # |A_c|: the list length the kernels cover
        self.max_level = 0
        self.stats = {"global_relabels": 0, "shrinks": 0, "restarts": 0, "syncs": 0, "max_level": 0,
                      "initial_matching": 0}
        self.workload_low = math.inf  # lowest active count a workload snapshot was taken at
        self.labels_loop = -1         # loop of the last labels snapshot
        # with an observer, keep each host call short enough for Stop; unbounded otherwise
        self.pace_loops = Pacer(tel.enabled, start=64, limit=MAX_BATCH)
        self.pace_levels = Pacer(tel.enabled, start=64, limit=MAX_BATCH)
        self.count_budget = Budget()

    # ---------------------------------------------------------------- driver
    def run(self, final_check: bool) -> "_HostLoop":
        tel = self.tel
        if self.init == "cheap":
            self.dev.cheap_matching()
            tel.check_cancel()
        if self.variant != "first":
            self.length = self._counted(self.dev.build_list("unmatched"))
        iter_gr = 0
        first_gr = True
        while True:
            self._main_loop(iter_gr, first_gr)
            first_gr = False
            self.dev.fix_matching()
            if not final_check:
                if self.labels_loop != self.loop:  # FIXMATCHING leaves the labels as they were
                    self._labels_snapshot(final=True)
                break
            reachable = self._final_check()
            if reachable == 0:
                break
            # an augmenting path is left: resume from the columns that can start one
            self.stats["restarts"] += 1
            if self.variant != "first":
                self.length = reachable
            iter_gr = self.loop + self._gr_gap()
        self.stats["loops"] = self.last_active + 1
        self.stats["max_level"] = self.max_level
        return self

    def _final_check(self) -> int:
        """A global relabel after FIXMATCHING; returns how many unmatched columns it reaches (an
        augmenting path starts at each). Reported as the active count: FIXMATCHING turned dead
        columns back into unmatched ones, which a count of unmatched columns would include."""
        counters = self._global_relabel(report=False)
        reachable = self._counted(self.dev.build_list("reachable"))
        if self.tel.enabled:
            self.tel.iteration(self.loop, "global-relabel", active=reachable,
                               value=float(self.m - counters[FREE_ROWS]), max_level=float(self.max_level),
                               unreachable=float(counters[UNREACHABLE]), final_check=1.0)
            self._labels_snapshot(final=reachable == 0)
        return reachable

    def _main_loop(self, iter_gr: int, first_gr: bool) -> None:
        dev, tel = self.dev, self.tel
        lists = self.variant != "first"
        if lists and self.length == 0:
            return
        # a resident loop stops by itself at the first idle loop: batch up to the next relabel
        limit = MAX_BATCH if dev.resident else self.sync_every
        workload_due = False
        while True:
            if self.loop == iter_gr:  # GETITERGR said so
                self._global_relabel(count_matching=first_gr)
                first_gr = False
                iter_gr = self.loop + self._gr_gap()
                if self.variant == "shrink" and self.length >= self.shrink_min:
                    self.length = self._counted(dev.shrink(self.loop, self.length))
                    self.stats["shrinks"] += 1
                    if self.length == 0:
                        return
                    tel.check_cancel()
            batch = max(1, min(limit, iter_gr - self.loop, self.pace_loops.size))
            if workload_due:  # the first loop by single steps, to see the list its push takes
                if lists:
                    dev.init_list(self.loop, self.length)
                    self._workload_snapshot()
                    dev.push_list(self.loop, self.length)
                else:
                    self._workload_snapshot()
                    dev.push_all(self.loop)
                self.loop += 1
                batch -= 1
            if batch:
                self.pace_loops.start()
                if lists:
                    dev.push_loops(self.loop, batch, self.length)
                else:
                    dev.push_all_loops(self.loop, batch)
                self.loop += batch
            counted = tel.enabled and self.count_budget.due()
            if counted:
                self._queue_counts()
            counters = self._sync()
            if batch:
                self.pace_loops.stop(batch)
            self.last_active = max(self.last_active, int(counters[ACT]))
            done = counters[ACT] < self.loop - 1
            if tel.enabled:
                if done and not counted:  # the end state is always reported
                    self._queue_counts()
                    counters, counted = self._sync(), True
                active = int(counters[ACTIVE]) if counted else -1
                tel.iteration(self.loop, "push", active=active,
                              value=float(self.m - counters[FREE_ROWS]) if counted else math.nan)
                self._labels_snapshot()
                # the time throttle, or a new low of the active count (the run's tail)
                workload_due = (not done and active != 0 and tel.wants_snapshots
                                and (tel.snapshot_due("workload") or 0 < 2 * active <= self.workload_low))
                if workload_due and active > 0:
                    self.workload_low = min(self.workload_low, active)
            if done:
                return

    # ---------------------------------------------------------------- steps
    def _queue_counts(self) -> None:
        """The active columns and the free rows into the counters the next sync reads (O(n))."""
        self.count_budget.start()
        self.dev.count("unmatched", ACTIVE)
        self.dev.count("free-rows", FREE_ROWS)
        self.count_budget.stop()

    def _sync(self) -> np.ndarray:
        self.stats["syncs"] += 1
        return self.dev.read_counters()

    def _counted(self, value: int) -> int:
        """A list length the launcher read back itself (one sync)."""
        self.stats["syncs"] += 1
        return value

    def _levels_per_sync(self) -> int:
        """BFS levels launched between two readbacks. A resident BFS runs to the end in one launch.
        Otherwise at least sync_every; when the last BFS was deep, about sqrt(levels x readback /
        launch cost), which balances the readbacks against the no-op levels after the last one.
        With an observer, no more than the pacer allows."""
        if self.dev.resident:
            levels = self.inf // 2 + 2  # levels are even and labels stay below the cap
        else:
            expected = self.max_level // 2
            levels = max(self.sync_every, int(math.sqrt(expected * READBACK_PER_LAUNCH)))
        return max(1, min(levels, self.pace_levels.size))

    def _gr_gap(self) -> int:
        """GETITERGR: loops until the next global relabel."""
        if self.gr == "adaptive":
            return max(1, int(round(self.k * self.max_level)))
        return max(1, int(round(self.k)))

    def _global_relabel(self, count_matching: bool = False, report: bool = True) -> np.ndarray:
        """G-GR: INITRELABEL, then BFS levels 0, 2, 4, ... until a level labels no row. Reports a
        "global-relabel" iteration (unless ``report`` is False); returns the last counters read."""
        dev, tel = self.dev, self.tel
        dev.init_relabel()
        want_value = count_matching or tel.enabled
        if want_value:
            dev.count("free-rows", FREE_ROWS)
        level = 0
        while True:
            per_sync = self._levels_per_sync()
            self.pace_levels.start()
            dev.gr_levels(level, per_sync)
            level += 2 * per_sync
            counters = self._sync()
            self.pace_levels.stop(per_sync)
            tel.check_cancel()
            if counters[GR] < level - 2:  # the last level launched labelled no row
                break
        self.max_level = int(counters[GR]) + 4  # the paper's cLevel when uAdded stays false
        self.stats["global_relabels"] += 1
        matched = self.m - int(counters[FREE_ROWS]) if want_value else None
        if count_matching:
            self.stats["initial_matching"] = matched
        if tel.enabled:
            if report:
                dev.count("unmatched", ACTIVE)
            dev.count("unreachable", UNREACHABLE)
            counters = self._sync()
            if report:
                tel.iteration(self.loop, "global-relabel", active=int(counters[ACTIVE]), value=float(matched),
                              max_level=float(self.max_level), unreachable=float(counters[UNREACHABLE]))
                self._labels_snapshot()
        return counters

    def _labels_snapshot(self, final: bool = False) -> None:
        if self.tel.snapshot_due("labels", final=final):
            self.labels_loop = self.loop
            psi_rows, psi_cols = self.dev.host_labels()
            self.tel.labels(self.loop, cap=self.inf, rows=psi_rows, cols=psi_cols)

    @functools.cached_property
    def col_degrees(self) -> np.ndarray:
        """Made at the first workload snapshot (only when someone listens): a pass over the columns."""
        return self.graph.col_degrees()

    def _workload_snapshot(self) -> None:
        """The paper's cost model for the push launch about to run: a warp takes 32 consecutive
        slots (list entries, or columns for "first") and scans the edges of the active ones."""
        if self.variant == "first":
            row_match, col_match = self.dev.host_matching()
            cols = np.arange(self.n)
            mate = np.where(col_match >= 0, row_match[np.maximum(col_match, 0)], -1)
            active = (col_match == -1) | ((col_match >= 0) & (mate != cols))
            degrees = np.where(active, self.col_degrees, 0)
        else:
            slots = self.dev.host_list(self.length)
            degrees = np.where(slots >= 0, self.col_degrees[np.maximum(slots, 0)], 0)
        self.tel.workload(self.loop, modelled=warp_work(degrees), kernel="push", launch=self.loop, mode="column")


def warp_work(degrees: np.ndarray, warp: int = WARP_SIZE) -> np.ndarray:
    """Per-warp sum of the degrees of the 32 consecutive slots each warp takes."""
    if degrees.size == 0:
        return np.zeros(0, np.float64)
    padded = np.zeros(-(-degrees.size // warp) * warp, np.float64)
    padded[:degrees.size] = degrees
    return padded.reshape(-1, warp).sum(axis=1)
