"""G-PR steps (Deveci et al. 2013): the per-element bodies shared by every target, and the cpu target.

Each ``*`` body below is a plain, self-contained Python function of (index, arrays, scalars): the
whole work of one GPU thread. solvers.matching.gpr_kernels compiles them with
``cuda.jit(device=True)`` inside thin ``@cuda.jit`` kernels; this module compiles them with
``numba.njit`` inside ``prange`` loops (``CpuLauncher``). Bodies call no other Python function, so
both compilers see the same code. The races between threads (GPU threads, or prange threads here)
are the paper's benign ones: no locks, no atomics.

Vertex arrays are int32: ``mu_row[u]`` the column of row u (-1 free), ``mu_col[v]`` the row of
column v (-1 free, -2 dead: no augmenting path can start at v). A column v is matched only when
``mu_row[mu_col[v]] == v``; a column that lost a race may keep a stale ``mu_col`` until
FIXMATCHING. ``psi_row`` / ``psi_col`` are the labels, ``inf = n_rows + n_cols`` the cap.

numba is imported lazily (``CpuLauncher`` builds the compiled loops on first use), because the
algorithm registry imports every module of this package just to list algorithms, and a process
may still want to switch the CUDA simulator on after listing them. Each loop also has a serial
twin (prange run as range) for graphs below PARALLEL_MIN, where waking the thread pool costs more
than the work.
"""
from __future__ import annotations

import types

import numpy as np

# slots of the small counters array the host reads back (device memory on cuda)
ACT = 0        # last loop whose active-column list was non-empty (G-PR's actExists, as a loop stamp)
GR = 1         # last BFS level that labelled a row (G-GR's uAdded, as a level stamp)
TOTAL = 2      # length of the last compacted list
N_COUNTERS = 8  # slots 3.. hold counts asked for by telemetry


# ---------------------------------------------------------------- per-element bodies (all targets)

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


def cheap_settle(v, mu_row, mu_col):
    """Cheap matching: a column whose claimed row went to another column is free again."""
    u = mu_col[v]
    if u >= 0 and mu_row[u] != v:
        mu_col[v] = -1
    return 0


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


def fix_matching(v, mu_row, mu_col):
    """FIXMATCHING: a column whose row points elsewhere (or a dead one) is unmatched."""
    r = mu_col[v]
    if r < 0 or mu_row[r] != v:
        mu_col[v] = -1
    return 0


def fill_unmatched(v, out, mu_row, mu_col):
    """out[v] = v for a live unmatched column (the initial active list), else -1."""
    r = mu_col[v]
    if r == -1 or (r >= 0 and mu_row[r] != v):
        out[v] = v
        return 1
    out[v] = -1
    return 0


def fill_reachable(v, out, mu_row, mu_col, psi_col, inf):
    """out[v] = v for an unmatched column that a fresh global relabel reached (an augmenting path
    starts there), else -1. Used by the final check after FIXMATCHING."""
    r = mu_col[v]
    if (r < 0 or mu_row[r] != v) and psi_col[v] < inf:
        out[v] = v
        return 1
    out[v] = -1
    return 0


# ---------------------------------------------------------------- cpu target: prange loops

# placeholders, replaced by numba objects in _build() (numba resolves globals at compile time)
prange = range
_nj = {}
_cheap_propose, _cheap_settle, _init_relabel, _gr_level = cheap_propose, cheap_settle, init_relabel, gr_level
_push_all, _init_list, _push_list = push_all, init_list, push_list
_fix_matching, _fill_unmatched, _fill_reachable = fix_matching, fill_unmatched, fill_reachable


def _cheap_rounds(col_ptr, row_ind, mu_row, mu_col, n_cols, rounds):
    for rnd in range(rounds):
        for v in prange(n_cols):
            _cheap_propose(v, col_ptr, row_ind, mu_row, mu_col, rnd)
        for v in prange(n_cols):
            _cheap_settle(v, mu_row, mu_col)


def _init_relabel_loop(n_rows, n_cols, mu_row, psi_row, psi_col, inf, counters):
    counters[GR] = -2
    for i in prange(n_rows + n_cols):
        _init_relabel(i, n_rows, mu_row, psi_row, psi_col, inf)


def _gr_levels_loop(level0, n_levels, n_rows, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf,
                    counters):
    for j in range(n_levels):
        level = level0 + 2 * j
        added = 0
        for u in prange(n_rows):
            added += _gr_level(u, level, row_ptr, col_ind, psi_row, psi_col, mu_row, mu_col, inf)
        if added == 0:
            break  # every later level is a no-op: no row carries a higher label
        counters[GR] = level


def _push_all_loop(loop, n_cols, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf, counters):
    act = 0
    for v in prange(n_cols):
        act += _push_all(v, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, inf)
    if act > 0:
        counters[ACT] = loop


def _init_list_loop(length, loop, a_c, a_p, mu_row, mu_col, i_a, counters):
    act = 0
    for i in prange(length):
        act += _init_list(i, loop, a_c, a_p, mu_row, mu_col, i_a)
    if act > 0:
        counters[ACT] = loop


def _push_list_loop(length, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf):
    for i in prange(length):
        _push_list(i, loop, a_c, a_p, col_ptr, row_ind, psi_row, psi_col, mu_row, mu_col, i_a, inf)


def _fix_matching_loop(n_cols, mu_row, mu_col):
    for v in prange(n_cols):
        _fix_matching(v, mu_row, mu_col)


def _fill_unmatched_loop(n_cols, out, mu_row, mu_col):
    for v in prange(n_cols):
        _fill_unmatched(v, out, mu_row, mu_col)


def _fill_reachable_loop(n_cols, out, mu_row, mu_col, psi_col, inf):
    for v in prange(n_cols):
        _fill_reachable(v, out, mu_row, mu_col, psi_col, inf)


def _compact_loop(src, length, dst, chunk_counts, counters):
    """G-PR-SHRKRN's compaction: each chunk counts its live entries, a prefix sum gives every chunk
    a private region of dst, and the chunks write their entries there (order kept)."""
    chunks = chunk_counts.size - 1
    size = (length + chunks - 1) // chunks
    for t in prange(chunks):
        c = 0
        for i in range(t * size, min(length, (t + 1) * size)):
            if src[i] >= 0:
                c += 1
        chunk_counts[t + 1] = c
    chunk_counts[0] = 0
    for t in range(chunks):
        chunk_counts[t + 1] += chunk_counts[t]
    for t in prange(chunks):
        k = chunk_counts[t]
        for i in range(t * size, min(length, (t + 1) * size)):
            if src[i] >= 0:
                dst[k] = src[i]
                k += 1
    counters[TOTAL] = chunk_counts[chunks]


def _count_range_loop(a, length, lo, hi, counters, slot):
    c = 0
    for i in prange(length):
        if a[i] >= lo and a[i] < hi:
            c += 1
    counters[slot] = c


_BODIES = ("cheap_propose", "cheap_settle", "init_relabel", "gr_level", "push_all", "init_list",
           "push_list", "fix_matching", "fill_unmatched", "fill_reachable")
_LOOPS = ("_cheap_rounds", "_init_relabel_loop", "_gr_levels_loop", "_push_all_loop", "_init_list_loop",
          "_push_list_loop", "_fix_matching_loop", "_fill_unmatched_loop", "_fill_reachable_loop",
          "_compact_loop", "_count_range_loop")


def _build() -> dict:
    """Compile (or load from numba's cache) the bodies and the loops, once per process:
    ``{"parallel": {...}, "serial": {...}}``. The serial twins (the same code, prange run as
    range) serve tiny graphs, where waking a thread pool costs more than the work."""
    if _nj:
        return _nj
    import numba

    module = globals()
    module["prange"] = numba.prange
    for name in _BODIES:
        module[f"_{name}"] = numba.njit(cache=True)(module[name])
    _nj["parallel"], _nj["serial"] = {}, {}
    for name in _LOOPS:
        func = module[name]
        _nj["parallel"][name] = numba.njit(parallel=True, cache=True)(func)
        twin = types.FunctionType(func.__code__, func.__globals__, f"{name}_serial", func.__defaults__)
        twin.__qualname__ = f"{name}_serial"  # its own cache file: the cache key ignores `parallel`
        _nj["serial"][name] = numba.njit(cache=True)(twin)
    return _nj


CHEAP_ROUNDS = 3
PARALLEL_MIN = 4096  # graphs with fewer rows and columns than this run the serial loops


class CpuLauncher:
    """The G-PR steps on cpu cores. Same methods and semantics as gpr_kernels.CudaLauncher; the
    host loop (solvers.matching.gpr) does not know which one it drives."""

    target = "cpu"

    def __init__(self, graph, device_loop: bool = False):
        # module attribute read at construction, so tests can force the threaded loops on tiny graphs
        self.parallel = max(graph.n_rows, graph.n_cols) >= PARALLEL_MIN
        self.k = _build()["parallel" if self.parallel else "serial"]
        self.resident = bool(device_loop)  # stop a batch at the first loop with nothing to do
        self.resident_error = ""
        self.m, self.n = graph.n_rows, graph.n_cols
        self.inf = self.m + self.n
        self.row_ptr = np.ascontiguousarray(graph.row_ptr, dtype=np.int64)
        self.col_ind = np.ascontiguousarray(graph.col_ind, dtype=np.int32)
        self.col_ptr = np.ascontiguousarray(graph.col_ptr, dtype=np.int64)
        self.row_ind = np.ascontiguousarray(graph.row_ind, dtype=np.int32)
        self.mu_row = np.full(max(self.m, 1), -1, np.int32)
        self.mu_col = np.full(max(self.n, 1), -1, np.int32)
        self.psi_row = np.zeros(max(self.m, 1), np.int32)
        self.psi_col = np.ones(max(self.n, 1), np.int32)
        self.i_a = np.full(max(self.n, 1), -1, np.int32)
        self.bufs = [np.full(max(self.n, 1), -1, np.int32) for _ in range(2)]
        self.cur = 0  # bufs[cur] is A_c, bufs[1 - cur] is A_p
        self.scratch = np.full(max(self.n, 1), -1, np.int32)
        self.chunk_counts = np.zeros(max(1, min(self.n, 8 * numba_threads())) + 1, np.int64)
        self.counters = np.full(N_COUNTERS, -1, np.int32)

    @property
    def a_c(self):
        return self.bufs[self.cur]

    @property
    def a_p(self):
        return self.bufs[1 - self.cur]

    # -- matching setup and repair
    def cheap_matching(self, rounds: int = CHEAP_ROUNDS) -> None:
        self.k["_cheap_rounds"](self.col_ptr, self.row_ind, self.mu_row, self.mu_col, self.n, rounds)

    def fix_matching(self) -> None:
        self.k["_fix_matching_loop"](self.n, self.mu_row, self.mu_col)

    # -- global relabel
    def init_relabel(self) -> None:
        self.k["_init_relabel_loop"](self.m, self.n, self.mu_row, self.psi_row, self.psi_col, self.inf,
                                     self.counters)

    def gr_levels(self, level0: int, n_levels: int) -> None:
        self.k["_gr_levels_loop"](level0, n_levels, self.m, self.row_ptr, self.col_ind, self.psi_row,
                                  self.psi_col, self.mu_row, self.mu_col, self.inf, self.counters)

    # -- push-relabel
    def push_all(self, loop: int) -> None:
        self.k["_push_all_loop"](loop, self.n, self.col_ptr, self.row_ind, self.psi_row, self.psi_col,
                                 self.mu_row, self.mu_col, self.inf, self.counters)

    def push_all_loops(self, loop0: int, n_loops: int) -> None:
        for j in range(n_loops):
            self.push_all(loop0 + j)
            if self.resident and self.counters[ACT] < loop0 + j:
                return

    def push_loops(self, loop0: int, n_loops: int, length: int) -> None:
        """n_loops of INITKRN + PUSHKRN + swap (swaps counted even after an early exit, as on cuda)."""
        for j in range(n_loops):
            self.init_list(loop0 + j, length)
            if self.resident and self.counters[ACT] < loop0 + j:
                self.cur = (self.cur + n_loops - j) % 2
                return
            self.push_list(loop0 + j, length)

    def init_list(self, loop: int, length: int) -> None:
        self.k["_init_list_loop"](length, loop, self.a_c, self.a_p, self.mu_row, self.mu_col, self.i_a,
                                  self.counters)

    def push_list(self, loop: int, length: int) -> None:
        """PUSHKRN, then the swap of A_c and A_p."""
        self.k["_push_list_loop"](length, loop, self.a_c, self.a_p, self.col_ptr, self.row_ind, self.psi_row,
                                  self.psi_col, self.mu_row, self.mu_col, self.i_a, self.inf)
        self.cur = 1 - self.cur

    # -- lists
    def shrink(self, loop: int, length: int) -> int:
        """G-PR-SHRKRN: INITKRN, then compact A_c into A_p (where the next INITKRN reads it)."""
        self.init_list(loop, length)
        return self._compact(self.a_c, length, self.a_p)

    def build_list(self, kind: str) -> int:
        """Fill A_p with the unmatched columns ("unmatched") or the unmatched ones a fresh global
        relabel reached ("reachable"); returns the list length."""
        if kind == "unmatched":
            self.k["_fill_unmatched_loop"](self.n, self.scratch, self.mu_row, self.mu_col)
        else:
            self.k["_fill_reachable_loop"](self.n, self.scratch, self.mu_row, self.mu_col, self.psi_col,
                                           self.inf)
        return self._compact(self.scratch, self.n, self.a_p)

    def _compact(self, src, length: int, dst) -> int:
        self.k["_compact_loop"](src, length, dst, self.chunk_counts, self.counters)
        return int(self.counters[TOTAL])

    # -- counters and host copies
    def count(self, what: str, slot: int) -> None:
        """Queue a count into counters[slot]: "free-rows", "unreachable" (columns at the cap) or
        "unmatched" (live unmatched columns: the active ones, via the scratch list)."""
        a, size, lo, hi = self._count_spec(what)
        self.k["_count_range_loop"](a, size, lo, hi, self.counters, slot)

    def _count_spec(self, what):
        big = np.iinfo(np.int32).max
        if what == "free-rows":
            return self.mu_row, self.m, -1, 0
        if what == "unreachable":
            return self.psi_col, self.n, self.inf, big
        if what == "unmatched":
            self.k["_fill_unmatched_loop"](self.n, self.scratch, self.mu_row, self.mu_col)
            return self.scratch, self.n, 0, big
        raise ValueError(what)

    def read_counters(self) -> np.ndarray:
        return self.counters.copy()

    def host_labels(self):
        return self.psi_row[:self.m].copy(), self.psi_col[:self.n].copy()

    def host_list(self, length: int) -> np.ndarray:
        return self.a_c[:length].copy()

    def host_matching(self):
        return self.mu_row[:self.m].astype(np.int64), self.mu_col[:self.n].astype(np.int64)


def numba_threads() -> int:
    try:
        import numba
        return int(numba.get_num_threads())
    except Exception:  # numba's threading layer unavailable: one chunk per core is only a tuning hint
        return 1


__all__ = ["CpuLauncher", "ACT", "GR", "TOTAL", "N_COUNTERS"]
