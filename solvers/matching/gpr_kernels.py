"""G-PR on cuda (and the CUDA simulator): thin ``@cuda.jit`` kernels around the shared step bodies.

Import this module only on the cuda / cudasim path: it imports numba.cuda. Every kernel is one
thread per element (``i = cuda.grid(1)``) calling a body of solvers.matching.gpr_cpu compiled with
``cuda.jit(device=True)``. Flags are loop / level stamps written without atomics (all writers
write the same value), so the host never clears them. Lists are compacted with block-level prefix
sums (shared memory) plus one single-block scan of the block sums: no atomics anywhere.
``KERNELS`` lists every kernel with a signature for ``cuda.compile_ptx`` (tests compile them for
sm_90 without a GPU).
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ..targets import simulator_enabled
from . import gpr_cpu as steps
from .gpr_cpu import ACT, GR, N_COUNTERS, TOTAL

MAX_THREADS = 256  # block size for large launches (and the size of the block-scan shared array)
# simulated threads cost ~0.1 ms each: do not pad a tiny launch to a full warp there
MIN_THREADS = 4 if simulator_enabled() else 32
SCAN_THREADS = 256
# shared-array sizes must be plain module constants (compile-time) for the CUDA compiler
_BLOCK_SHARED = MAX_THREADS + 1
_SCAN_SHARED = SCAN_THREADS + 1

_cheap_propose = cuda.jit(device=True)(steps.cheap_propose)
_cheap_settle = cuda.jit(device=True)(steps.cheap_settle)
_init_relabel = cuda.jit(device=True)(steps.init_relabel)
_gr_level = cuda.jit(device=True)(steps.gr_level)
_push_all = cuda.jit(device=True)(steps.push_all)
_init_list = cuda.jit(device=True)(steps.init_list)
_push_list = cuda.jit(device=True)(steps.push_list)
_fix_matching = cuda.jit(device=True)(steps.fix_matching)
_fill_unmatched = cuda.jit(device=True)(steps.fill_unmatched)
_fill_reachable = cuda.jit(device=True)(steps.fill_reachable)


@cuda.jit
def cheap_propose_kernel(n_cols, col_ptr, row_ind, mu_row, mu_col, rnd):
    v = cuda.grid(1)
    if v < n_cols:
        _cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)


@cuda.jit
def cheap_settle_kernel(n_cols, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        _cheap_settle(v, mu_row, mu_col)


@cuda.jit
def init_relabel_kernel(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    i = cuda.grid(1)
    if i == 0:
        counters[GR] = -2
    if i < n_rows + n_cols:
        _init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


@cuda.jit
def gr_level_kernel(level, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    u = cuda.grid(1)
    if u < n_rows:
        if _gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf):
            counters[GR] = level


@cuda.jit
def push_all_kernel(loop, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    v = cuda.grid(1)
    if v < n_cols:
        if _push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf):
            counters[ACT] = loop


@cuda.jit
def init_list_kernel(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    i = cuda.grid(1)
    if i < length:
        if _init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
            counters[ACT] = loop


@cuda.jit
def push_list_kernel(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    i = cuda.grid(1)
    if i < length:
        _push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


@cuda.jit
def fix_matching_kernel(n_cols, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        _fix_matching(v, mu_row, mu_col)


@cuda.jit
def fill_unmatched_kernel(n_cols, out, mu_row, mu_col):
    v = cuda.grid(1)
    if v < n_cols:
        _fill_unmatched(v, out, mu_row, mu_col)


@cuda.jit
def fill_reachable_kernel(n_cols, out, mu_row, mu_col, psi_col, inf):
    v = cuda.grid(1)
    if v < n_cols:
        _fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


@cuda.jit(device=True)
def _block_scan(flag):
    """(exclusive prefix of flag within the block, block total); every thread of the block calls it.
    Thread 0 scans the block's flags serially in shared memory: two barriers per block instead of
    2 log2(blockDim), which is what the CUDA simulator pays for, at a few microseconds per
    compaction on a real GPU."""
    sm = cuda.shared.array(_BLOCK_SHARED, int32)
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


@cuda.jit
def compact_mark_kernel(src, length, local, block_sums):
    i = cuda.grid(1)
    flag = 0
    if i < length and src[i] >= 0:
        flag = 1
    excl, total = _block_scan(flag)
    if i < length:
        local[i] = excl
    if cuda.threadIdx.x == 0:
        block_sums[cuda.blockIdx.x] = total


@cuda.jit
def compact_scatter_kernel(src, length, local, block_sums, dst):
    i = cuda.grid(1)
    if i < length:
        v = src[i]
        if v >= 0:
            dst[block_sums[cuda.blockIdx.x] + local[i]] = v


@cuda.jit
def count_range_kernel(a, length, lo, hi, block_sums):
    i = cuda.grid(1)
    flag = 0
    if i < length and a[i] >= lo and a[i] < hi:
        flag = 1
    excl, total = _block_scan(flag)
    if cuda.threadIdx.x == 0:
        block_sums[cuda.blockIdx.x] = total


@cuda.jit
def scan_sums_kernel(block_sums, n_blocks, counters, slot):
    """One block: block_sums becomes its exclusive prefix sum; counters[slot] gets the total."""
    sm = cuda.shared.array(_SCAN_SHARED, int32)
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


# ---------------------------------------------------------------- device-resident loops (cooperative launch)
# One launch runs many loops: grid-stride over the elements, cuda.cg grid syncs where separate
# launches had their boundaries, and an early return when a loop finds nothing to do. The exit test
# must be uniform across the grid (every thread must reach every grid sync): stamps only grow, and
# a fast thread may already have stamped the next loop when a slow one reads the flag, so the test
# is "stamp < this loop" (nobody stamped it), never "stamp != this loop".

@cuda.jit
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
            if _init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a):
                counters[ACT] = loop
        grid.sync()
        if counters[ACT] < loop:
            return
        for i in range(start, length, stride):
            _push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)
        grid.sync()


@cuda.jit
def push_all_coop_kernel(loop0, n_loops, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(n_loops):
        loop = loop0 + j
        for v in range(start, n_cols, stride):
            if _push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf):
                counters[ACT] = loop
        grid.sync()
        if counters[ACT] < loop:
            return


@cuda.jit
def gr_levels_coop_kernel(level0, n_levels, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf,
                          counters):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for j in range(n_levels):
        level = level0 + 2 * j
        for u in range(start, n_rows, stride):
            if _gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf):
                counters[GR] = level
        grid.sync()
        if counters[GR] < level:
            return


_I = int64
_A = int32[::1]
_P = int64[::1]
KERNELS = {
    "cheap_propose": (cheap_propose_kernel, (_I, _P, _A, _A, _A, _I)),
    "cheap_settle": (cheap_settle_kernel, (_I, _A, _A)),
    "init_relabel": (init_relabel_kernel, (_I, _I, _A, _A, _A, _I, _A)),
    "gr_level": (gr_level_kernel, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    "push_all": (push_all_kernel, (_I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    "init_list": (init_list_kernel, (_I, _I, _A, _A, _A, _A, _A, _A)),
    "push_list": (push_list_kernel, (_I, _I, _A, _A, _P, _A, _A, _A, _A, _A, _A, _I)),
    "fix_matching": (fix_matching_kernel, (_I, _A, _A)),
    "fill_unmatched": (fill_unmatched_kernel, (_I, _A, _A, _A)),
    "fill_reachable": (fill_reachable_kernel, (_I, _A, _A, _A, _A, _I)),
    "compact_mark": (compact_mark_kernel, (_A, _I, _A, _A)),
    "compact_scatter": (compact_scatter_kernel, (_A, _I, _A, _A, _A)),
    "count_range": (count_range_kernel, (_A, _I, _I, _I, _A)),
    "scan_sums": (scan_sums_kernel, (_A, _I, _A, _I)),
    "push_loops_coop": (push_loops_coop_kernel, (_I, _I, _I, _A, _A, _I, _P, _A, _A, _A, _A, _A, _A, _I, _A)),
    "push_all_coop": (push_all_coop_kernel, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
    "gr_levels_coop": (gr_levels_coop_kernel, (_I, _I, _I, _P, _A, _A, _A, _A, _A, _I, _A)),
}
COOPERATIVE = ("push_loops_coop", "push_all_coop", "gr_levels_coop")


def _dims(n: int) -> tuple[int, int]:
    """(blocks, threads): full blocks for big launches, one small power-of-two block for tiny ones."""
    if n >= MAX_THREADS:
        return (n + MAX_THREADS - 1) // MAX_THREADS, MAX_THREADS
    threads = MIN_THREADS
    while threads < n:
        threads *= 2
    return 1, threads


def _scan_threads(n_blocks: int) -> int:
    threads = 1
    while threads < min(n_blocks, SCAN_THREADS):
        threads *= 2
    return threads


class CudaLauncher:
    """The G-PR steps on the GPU (or the simulator). Same interface as gpr_cpu.CpuLauncher. All
    state stays on the device; only ``read_counters`` (a few ints) and the ``host_*`` copies sync."""

    target = "cuda"

    def __init__(self, graph, device_loop: bool = False):
        self.m, self.n = graph.n_rows, graph.n_cols
        self.inf = self.m + self.n
        dev = cuda.to_device
        self.row_ptr = dev(np.ascontiguousarray(graph.row_ptr, dtype=np.int64))
        self.col_ind = dev(_nonempty(graph.col_ind))
        self.col_ptr = dev(np.ascontiguousarray(graph.col_ptr, dtype=np.int64))
        self.row_ind = dev(_nonempty(graph.row_ind))
        rows, cols = max(self.m, 1), max(self.n, 1)
        self.mu_row = dev(np.full(rows, -1, np.int32))
        self.mu_col = dev(np.full(cols, -1, np.int32))
        self.psi_row = dev(np.zeros(rows, np.int32))
        self.psi_col = dev(np.ones(cols, np.int32))
        self.i_a = dev(np.full(cols, -1, np.int32))
        self.bufs = [dev(np.full(cols, -1, np.int32)) for _ in range(2)]
        self.cur = 0  # bufs[cur] is A_c, bufs[1 - cur] is A_p
        self.scratch = dev(np.full(cols, -1, np.int32))
        self.local = cuda.device_array(max(rows, cols), np.int32)
        self.block_sums = cuda.device_array(_dims(max(rows, cols, self.m + self.n))[0] + 1, np.int32)
        self.counters = dev(np.full(N_COUNTERS, -1, np.int32))
        try:  # pinned host memory makes the frequent small readback cheaper
            self.host_counters = cuda.pinned_array(N_COUNTERS, np.int32)
        except Exception:  # the simulator may not offer it; plain memory is then just as good
            self.host_counters = np.empty(N_COUNTERS, np.int32)
        self.resident = False
        self.resident_error = ""
        self.coop_blocks = {}
        if device_loop:
            self._prepare_cooperative()

    def _prepare_cooperative(self) -> None:
        """Compile the cooperative kernels and size their grids (all blocks co-resident). The
        simulator runs cooperative grids of one block only. On failure (no cudadevrt to link,
        a driver without cooperative launch) the launcher keeps one launch per step."""
        if simulator_enabled():
            self.coop_blocks = {name: 1 for name in COOPERATIVE}
            self.resident = True
            return
        try:
            for name in COOPERATIVE:
                kernel, signature = KERNELS[name]
                self.coop_blocks[name] = max(1, int(kernel.compile(signature).max_cooperative_grid_blocks(MAX_THREADS)))
            self.resident = True
        except Exception as exc:  # reported in stats["device_loop_error"]; the plain launches still work
            self.resident_error = f"{type(exc).__name__}: {exc}"

    def _coop_dims(self, name: str, n: int) -> tuple[int, int]:
        blocks, threads = _dims(n)
        return min(blocks, self.coop_blocks[name]), threads

    @property
    def a_c(self):
        return self.bufs[self.cur]

    @property
    def a_p(self):
        return self.bufs[1 - self.cur]

    def cheap_matching(self, rounds: int = steps.CHEAP_ROUNDS) -> None:
        b, t = _dims(self.n)
        for rnd in range(rounds):
            cheap_propose_kernel[b, t](self.n, self.col_ptr, self.row_ind, self.mu_row, self.mu_col, rnd)
            cheap_settle_kernel[b, t](self.n, self.mu_row, self.mu_col)

    def fix_matching(self) -> None:
        b, t = _dims(self.n)
        fix_matching_kernel[b, t](self.n, self.mu_row, self.mu_col)

    def init_relabel(self) -> None:
        b, t = _dims(self.m + self.n)
        init_relabel_kernel[b, t](self.m, self.n, self.mu_row, self.psi_row, self.psi_col, self.inf,
                                  self.counters)

    def gr_levels(self, level0: int, n_levels: int) -> None:
        if self.resident:
            b, t = self._coop_dims("gr_levels_coop", self.m)
            gr_levels_coop_kernel[b, t](level0, n_levels, self.m, self.row_ptr, self.col_ind, self.psi_row,
                                        self.psi_col, self.mu_row, self.mu_col, self.inf, self.counters)
            return
        b, t = _dims(self.m)
        for j in range(n_levels):
            gr_level_kernel[b, t](level0 + 2 * j, self.m, self.row_ptr, self.col_ind, self.psi_row, self.psi_col,
                                  self.mu_row, self.mu_col, self.inf, self.counters)

    def push_all(self, loop: int) -> None:
        b, t = _dims(self.n)
        push_all_kernel[b, t](loop, self.n, self.col_ptr, self.row_ind, self.psi_row, self.psi_col, self.mu_row,
                              self.mu_col, self.inf, self.counters)

    def push_all_loops(self, loop0: int, n_loops: int) -> None:
        if self.resident:
            b, t = self._coop_dims("push_all_coop", self.n)
            push_all_coop_kernel[b, t](loop0, n_loops, self.n, self.col_ptr, self.row_ind, self.psi_row, self.psi_col,
                                       self.mu_row, self.mu_col, self.inf, self.counters)
            return
        for j in range(n_loops):
            self.push_all(loop0 + j)

    def push_loops(self, loop0: int, n_loops: int, length: int) -> None:
        """n_loops of INITKRN + PUSHKRN + swap (the swaps are counted even after an early exit:
        once no column is active both lists hold only -1)."""
        if self.resident:
            b, t = self._coop_dims("push_loops_coop", length)
            push_loops_coop_kernel[b, t](loop0, n_loops, length, self.bufs[0], self.bufs[1], self.cur, self.col_ptr,
                                         self.row_ind, self.psi_row, self.psi_col, self.mu_row, self.mu_col, self.i_a,
                                         self.inf, self.counters)
            self.cur = (self.cur + n_loops) % 2
            return
        for j in range(n_loops):
            self.init_list(loop0 + j, length)
            self.push_list(loop0 + j, length)

    def init_list(self, loop: int, length: int) -> None:
        b, t = _dims(length)
        init_list_kernel[b, t](length, loop, self.a_c, self.a_p, self.mu_row, self.mu_col, self.i_a,
                               self.counters)

    def push_list(self, loop: int, length: int) -> None:
        b, t = _dims(length)
        push_list_kernel[b, t](length, loop, self.a_c, self.a_p, self.col_ptr, self.row_ind, self.psi_row,
                               self.psi_col, self.mu_row, self.mu_col, self.i_a, self.inf)
        self.cur = 1 - self.cur

    def shrink(self, loop: int, length: int) -> int:
        self.init_list(loop, length)
        return self._compact(self.a_c, length, self.a_p)

    def build_list(self, kind: str) -> int:
        b, t = _dims(self.n)
        if kind == "unmatched":
            fill_unmatched_kernel[b, t](self.n, self.scratch, self.mu_row, self.mu_col)
        else:
            fill_reachable_kernel[b, t](self.n, self.scratch, self.mu_row, self.mu_col, self.psi_col, self.inf)
        return self._compact(self.scratch, self.n, self.a_p)

    def _compact(self, src, length: int, dst) -> int:
        b, t = _dims(length)
        compact_mark_kernel[b, t](src, length, self.local, self.block_sums)
        scan_sums_kernel[1, _scan_threads(b)](self.block_sums, b, self.counters, TOTAL)
        compact_scatter_kernel[b, t](src, length, self.local, self.block_sums, dst)
        return int(self.read_counters()[TOTAL])

    def count(self, what: str, slot: int) -> None:
        """Queue a count into counters[slot] (see CpuLauncher.count); read with read_counters."""
        big = np.iinfo(np.int32).max
        if what == "free-rows":
            a, size, lo, hi = self.mu_row, self.m, -1, 0
        elif what == "unreachable":
            a, size, lo, hi = self.psi_col, self.n, self.inf, big
        elif what == "unmatched":
            b, t = _dims(self.n)
            fill_unmatched_kernel[b, t](self.n, self.scratch, self.mu_row, self.mu_col)
            a, size, lo, hi = self.scratch, self.n, 0, big
        else:
            raise ValueError(what)
        b, t = _dims(size)
        count_range_kernel[b, t](a, size, lo, hi, self.block_sums)
        scan_sums_kernel[1, _scan_threads(b)](self.block_sums, b, self.counters, slot)

    def read_counters(self) -> np.ndarray:
        self.counters.copy_to_host(self.host_counters)
        return np.array(self.host_counters)

    def host_labels(self):
        return self.psi_row.copy_to_host()[:self.m], self.psi_col.copy_to_host()[:self.n]

    def host_list(self, length: int) -> np.ndarray:
        if length == 0:
            return np.zeros(0, np.int32)
        return self.a_c[:length].copy_to_host()

    def host_matching(self):
        return (self.mu_row.copy_to_host()[:self.m].astype(np.int64),
                self.mu_col.copy_to_host()[:self.n].astype(np.int64))


def _nonempty(a) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.int32)
    return a if a.size else np.zeros(1, np.int32)
