"""``GprDevice``: G-PR's arrays on a target and its steps as ``Kernel`` launches, for every target.

The host loop (solvers.matching.gpr) drives this one class; it holds the arrays (made by the
launcher), launches the Kernels of solvers.matching.gpr_kernels with ``launcher.launch(kernel,
size, *args)`` and reads the small counters array back. Imported only when a run starts (the
kernels module imports numba). Host-side branches are on launcher capabilities only:
``launcher.device`` (the cpu runs a BFS batch, the compaction by chunks, and plain loops for a small
graph) and what cooperative launch the launcher can give.
"""
from __future__ import annotations

import numpy as np

from . import gpr_kernels as K
from . import transpose_device
from .gpr_kernels import ACT, CHEAP_ROUNDS, N_COUNTERS, TOTAL

BIG = int(np.iinfo(np.int32).max)
CHUNKS_PER_THREAD = 8  # cpu compaction: chunks per numba thread


def _host_array(a, dtype, device: bool) -> np.ndarray:
    """The cpu target's argument: a contiguous, writable copy when needed (one array type per
    argument, so one specialisation). For a GPU the array as it is: the upload converts it to
    ``dtype`` on the way, on all cores (copying a read-only graph to make it writable cost 70 ms on
    32M edges; converting 3M int32 pointers to int64 first, on one thread, about 4 ms each)."""
    return np.asarray(a) if device else np.require(a, dtype=dtype, requirements=["C", "W"])


def _vertex_bytes(m: int, n: int) -> int:
    """What GprDevice allocates after the graph: int32 labels, partners and worklists, three a row
    and eight a column at most, and the block sums (a bound, for the device transpose's room)."""
    return 4 * (3 * m + 8 * n) + 4 * (max(m, n) + 1)


class GprDevice:
    """The G-PR steps on one target. ``resident``: batches of loops (and whole BFSs) run on the
    target and stop by themselves at the first idle loop (cuda: cooperative kernels with grid
    syncs; cpu: one compiled call). ``resident_error`` says why a requested resident loop is off."""

    def __init__(self, launcher, graph, device_loop: bool = False, parallel_min: int = 0):
        self.launcher = launch = launcher
        self.m, self.n = m, n = int(graph.n_rows), int(graph.n_cols)
        # cpu: plain loops for a graph below parallel_min a side (no thread team to wake, no parallel
        # loops to load); every GPU launch is parallel
        self.k = K.SERIAL if not launch.device and max(m, n) < parallel_min else K.PARALLEL
        self.inf = m + n
        self.row_ptr = launch.upload(_host_array(graph.row_ptr, np.int64, launch.device), np.int64)
        self.col_ind = launch.upload(_host_array(graph.col_ind, np.int32, launch.device), np.int32)
        if (launch.device and graph.by_columns is None and transpose_device.fits(graph.n_edges)
                and transpose_device.has_room(launch, graph.n_edges, n, _vertex_bytes(m, n))):
            # the column lists built where the row lists already are: no host transpose, half the upload
            self.col_ptr, self.row_ind = transpose_device.columns_on_device(launch, self.row_ptr, self.col_ind, m, n)
        else:
            self.col_ptr = launch.upload(_host_array(graph.col_ptr, np.int64, launch.device), np.int64)
            self.row_ind = launch.upload(_host_array(graph.row_ind, np.int32, launch.device), np.int32)
        rows, cols = max(m, 1), max(n, 1)
        self.mu_row = launch.full(rows, -1, np.int32)
        self.mu_col = launch.full(cols, -1, np.int32)
        self.psi_row = launch.zeros(rows, np.int32)
        self.psi_col = launch.full(cols, 1, np.int32)
        self.i_a = launch.full(cols, -1, np.int32)
        self.bufs = [launch.full(cols, -1, np.int32) for _ in range(2)]
        self.cur = 0  # bufs[cur] is A_c, bufs[1 - cur] is A_p
        self.scratch = launch.full(cols, -1, np.int32)
        if launch.device:  # per-element block offsets, and one sum per block of the widest launch
            self.local = launch.empty(max(rows, cols), np.int32)
            blocks = launch.dims(self.k.COMPACT_MARK, max(rows, cols))[0]
        else:  # the cpu loops split a range into block_sums.size - 1 chunks
            self.local = launch.empty(1, np.int32)
            blocks = max(1, min(max(rows, cols), CHUNKS_PER_THREAD * _cpu_threads()))
        self.block_sums = launch.zeros(blocks + 1, np.int32)
        self.counters = launch.full(N_COUNTERS, -1, np.int32)
        self.host_counters = launch.scratch(N_COUNTERS, np.int32)
        self.resident = False
        self.resident_error = ""
        if device_loop:
            self._prepare_resident()

    def _prepare_resident(self) -> None:
        """Size the cooperative grids (compiling the kernels for these argument types). On failure
        (no cudadevrt to link, a driver without cooperative launch) one launch per step stays."""
        probes = ((self.k.GR_LEVELS, self._gr_args(0, 1)), (self.k.PUSH_ALL_LOOPS, self._push_all_args(0, 1)),
                  (self.k.PUSH_LOOPS, self._push_loops_args(0, 1, 0)))
        try:
            for kernel, args in probes:
                self.launcher.cooperative_blocks(kernel, *args)
            self.resident = True
        except Exception as exc:  # reported in stats["device_loop_error"]; the plain launches still work
            self.resident_error = f"{type(exc).__name__}: {exc}"

    @property
    def a_c(self):
        return self.bufs[self.cur]

    @property
    def a_p(self):
        return self.bufs[1 - self.cur]

    # ------------------------------------------------------------ argument lists
    def _gr_args(self, level0: int, n_levels: int) -> tuple:
        return (int(level0), int(n_levels), self.m, self.row_ptr, self.col_ind, self.psi_row, self.psi_col,
                self.mu_row, self.mu_col, self.inf, self.counters)

    def _push_all_args(self, loop0: int, n_loops: int) -> tuple:
        return (int(loop0), int(n_loops), self.n, self.col_ptr, self.row_ind, self.psi_row, self.psi_col,
                self.mu_row, self.mu_col, self.inf, self.counters)

    def _push_loops_args(self, loop0: int, n_loops: int, length: int) -> tuple:
        return (int(loop0), int(n_loops), int(length), self.bufs[0], self.bufs[1], self.cur, self.col_ptr,
                self.row_ind, self.psi_row, self.psi_col, self.mu_row, self.mu_col, self.i_a, self.inf,
                self.counters)

    # ------------------------------------------------------------ matching setup and repair
    def cheap_matching(self, rounds: int = CHEAP_ROUNDS) -> None:
        launch, n = self.launcher.launch, self.n
        for rnd in range(rounds):
            launch(self.k.CHEAP_PROPOSE, n, n, self.col_ptr, self.row_ind, self.mu_row, self.mu_col, rnd)
            launch(self.k.CHEAP_SETTLE, n, n, self.mu_row, self.mu_col)

    def fix_matching(self) -> None:
        self.launcher.launch(self.k.FIX_MATCHING, self.n, self.n, self.mu_row, self.mu_col)

    # ------------------------------------------------------------ global relabel
    def init_relabel(self) -> None:
        self.launcher.launch(self.k.INIT_RELABEL, self.m + self.n, self.m, self.n, self.mu_row, self.psi_row,
                             self.psi_col, self.inf, self.counters)

    def gr_levels(self, level0: int, n_levels: int) -> None:
        """BFS levels level0, level0 + 2, ...: a resident (or cpu) batch stops after the first level
        that labels no row; otherwise one launch per level (the idle ones are no-ops)."""
        if self.resident or not self.launcher.device:
            self.launcher.launch(self.k.GR_LEVELS, self.m, *self._gr_args(level0, n_levels))
            return
        rest = self._gr_args(level0, n_levels)[2:]  # GR_LEVEL takes one level, then GR_LEVELS' arguments
        for j in range(n_levels):
            self.launcher.launch(self.k.GR_LEVEL, self.m, int(level0) + 2 * j, *rest)

    # ------------------------------------------------------------ push-relabel
    def push_all(self, loop: int) -> None:
        self.launcher.launch(self.k.PUSH_ALL, self.n, int(loop), self.n, self.col_ptr, self.row_ind, self.psi_row,
                             self.psi_col, self.mu_row, self.mu_col, self.inf, self.counters)

    def push_all_loops(self, loop0: int, n_loops: int) -> None:
        if self.resident:
            self.launcher.launch(self.k.PUSH_ALL_LOOPS, self.n, *self._push_all_args(loop0, n_loops))
            return
        for j in range(n_loops):
            self.push_all(loop0 + j)

    def push_loops(self, loop0: int, n_loops: int, length: int) -> None:
        """n_loops of INITKRN + PUSHKRN + swap (the swaps are counted even after an early exit:
        once no column is active both lists hold only -1)."""
        if self.resident:
            self.launcher.launch(self.k.PUSH_LOOPS, length, *self._push_loops_args(loop0, n_loops, length))
            self.cur = (self.cur + n_loops) % 2
            return
        for j in range(n_loops):
            self.init_list(loop0 + j, length)
            self.push_list(loop0 + j, length)

    def init_list(self, loop: int, length: int) -> None:
        self.launcher.launch(self.k.INIT_LIST, length, int(length), int(loop), self.a_c, self.a_p, self.mu_row,
                             self.mu_col, self.i_a, self.counters)

    def push_list(self, loop: int, length: int) -> None:
        """PUSHKRN, then the swap of A_c and A_p."""
        self.launcher.launch(self.k.PUSH_LIST, length, int(length), int(loop), self.a_c, self.a_p, self.col_ptr,
                             self.row_ind, self.psi_row, self.psi_col, self.mu_row, self.mu_col, self.i_a, self.inf)
        self.cur = 1 - self.cur

    # ------------------------------------------------------------ lists
    def shrink(self, loop: int, length: int) -> int:
        """G-PR-SHRKRN: INITKRN, then compact A_c into A_p (where the next INITKRN reads it)."""
        self.init_list(loop, length)
        return self._compact(self.a_c, length, self.a_p)

    def build_list(self, kind: str) -> int:
        """Fill A_p with the unmatched columns ("unmatched") or the unmatched ones a fresh global
        relabel reached ("reachable"); returns the list length."""
        if kind == "unmatched":
            self._fill_unmatched()
        else:
            self.launcher.launch(self.k.FILL_REACHABLE, self.n, self.n, self.scratch, self.mu_row, self.mu_col,
                                 self.psi_col, self.inf)
        return self._compact(self.scratch, self.n, self.a_p)

    def _fill_unmatched(self) -> None:
        self.launcher.launch(self.k.FILL_UNMATCHED, self.n, self.n, self.scratch, self.mu_row, self.mu_col)

    def _blocks(self, kernel, length: int) -> int:
        """How many block sums a launch of ``kernel`` over ``length`` writes (cpu: its chunks)."""
        if not self.launcher.device:
            return int(self.block_sums.size) - 1
        dims = self.launcher.dims(kernel, length)
        return 0 if dims is None else int(dims[0])

    def _compact(self, src, length: int, dst) -> int:
        launch, length = self.launcher.launch, int(length)
        launch(self.k.COMPACT_MARK, length, src, length, self.local, self.block_sums)
        launch(self.k.SCAN_SUMS, 1, self.block_sums, self._blocks(self.k.COMPACT_MARK, length), self.counters, TOTAL)
        launch(self.k.COMPACT_SCATTER, length, src, length, self.local, self.block_sums, dst)
        return int(self.read_counters()[TOTAL])

    # ------------------------------------------------------------ counters and host copies
    def count(self, what: str, slot: int) -> None:
        """Queue a count into counters[slot]: "free-rows", "unreachable" (columns at the cap) or
        "unmatched" (live unmatched columns: the active ones, via the scratch list)."""
        if what == "free-rows":
            a, size, lo, hi = self.mu_row, self.m, -1, 0
        elif what == "unreachable":
            a, size, lo, hi = self.psi_col, self.n, self.inf, BIG
        elif what == "unmatched":
            self._fill_unmatched()
            a, size, lo, hi = self.scratch, self.n, 0, BIG
        else:
            raise ValueError(what)
        launch = self.launcher.launch
        launch(self.k.COUNT_RANGE, size, a, size, lo, hi, self.block_sums)
        launch(self.k.SCAN_SUMS, 1, self.block_sums, self._blocks(self.k.COUNT_RANGE, size), self.counters, int(slot))

    def read_counters(self) -> np.ndarray:
        return self.launcher.read(self.counters, out=self.host_counters).copy()

    def host_labels(self):
        read = self.launcher.read
        return read(self.psi_row)[:self.m], read(self.psi_col)[:self.n]

    def host_list(self, length: int) -> np.ndarray:
        if length == 0:
            return np.zeros(0, np.int32)
        return self.launcher.read(self.a_c[:length])

    def host_matching(self):
        read_as = self.launcher.read_as
        return read_as(self.mu_row, np.int64)[:self.m], read_as(self.mu_col, np.int64)[:self.n]


def _cpu_threads() -> int:
    import numba
    return int(numba.get_num_threads())
