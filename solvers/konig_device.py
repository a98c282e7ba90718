"""The matching certificate's passes (solvers.konig) run where a GPU solver left the graph and its
answer: on its device copies of the rows' lists and of the matching.

A matching solved on a GPU leaves the graph and the matching in device memory; on the host the
certificate's passes (the partners, the alternating search, the cover) were most of a large solve's
host time (60 ms of a 3M-row graph's 160 ms end to end). Here each pass is a launch over the rows or
columns, all queued at once (the host computes its checksums while they run):
  * ROWS: every row's share of the checksum (its lists and its partner), and whether its partner is
    in range, names it back and is one of its (sorted) neighbours; the free rows start the search at
    level 0;
  * COLUMNS: every column's share of the checksum (its partner), and whether that partner is in
    range and names it back;
  * LEVELS, one cooperative launch: level by level, the rows of the level reach their unreached
    columns, and the columns' mates (unreached rows) join the next level, until a level adds none;
  * COVER_ROWS / COVER_COLUMNS: the first reached row with an edge to an unreached column (the
    unreached rows and the reached columns, a König cover, must cover every edge), the first free
    column reached (the end of an augmenting path), the cover's rows and columns counted, and each
    row's "reached" flag as one byte, read by the host only when the cover is listed.
The reductions are per block (one partial per block: a wrapping sum, a least index), finished on
the host.

Independent of the solvers: nothing here imports solver code, and the device copies are not
trusted. A solver ran on them and could have changed them, so ROWS and COLUMNS recompute their
checksum (a wrapping sum of each value mixed with its position by splitmix64's finaliser:
``mixed_term``; the column indices, then the row offsets, then the rows' partners, then the columns'
partners) and the caller compares it with the same sum over the host's graph and the host's
matching (the answer handed back) before it trusts anything read there. The later passes run
before that comparison, so every index they read is bounds-checked first: a damaged copy ends as a
mismatch, never as a read out of bounds. On anything unexpected the caller certifies on the host and
says why. The cpu loops (the same arguments) let a test run every pass on host arrays.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import int64, njit, prange, uint64
from numba.extending import register_jitable

from .dual_steps import mixed_term
from .graph_build import position_in_row
from .targets.cuda_jit import cuda_kernel
from .targets.geometry import MAX_THREADS_PER_BLOCK, THREADS_PER_BLOCK
from .targets.kernel import COOPERATIVE, EACH, Kernel

cuda = None  # numba.cuda, bound when a kernel here is first built (solvers.targets.cuda_jit)

NONE = np.iinfo(np.int64).max  # "no such row / column" in a least-index reduction


# ---------------------------------------------------------------------------------------------
# bodies (every target)

@register_jitable
def row_span_ok(row_ptr, n_edges, r) -> bool:
    return 0 <= row_ptr[r] <= row_ptr[r + 1] <= n_edges


@register_jitable
def row_share(row_ptr, col_ind, row_match, n_edges, r):
    """Row r's share of the rows' checksum: its column indices at their positions, then its end
    offset after the n_edges positions of the indices (row 0 also its start), then its partner
    after the n_rows + 1 offsets. The partner is read as int64 whatever its width, so a solver's
    int32 copy sums as the host's int64 answer does."""
    n_rows = row_match.size
    s = mixed_term(row_ptr[r + 1], n_edges + r + 1)
    s += mixed_term(np.int64(row_match[r]), n_edges + n_rows + 1 + r)
    if r == 0:
        s += mixed_term(row_ptr[0], n_edges)
    for k in range(row_ptr[r], row_ptr[r + 1]):
        s += mixed_term(col_ind[k], k)
    return s


@register_jitable
def column_share(col_match, c):
    """Column c's share of the columns' checksum (a sum of its own): its partner at position c."""
    return mixed_term(np.int64(col_match[c]), c)


@register_jitable
def row_fault(row_ptr, col_ind, row_match, col_match, n_cols, r) -> bool:
    """Row r's partner is out of range, does not name r back, or is not among r's neighbours."""
    c = row_match[r]
    if c == -1:
        return False
    if c < -1 or c >= n_cols or col_match[c] != r:
        return True
    return position_in_row(row_ptr, col_ind, r, c) < 0


@register_jitable
def column_fault(row_match, col_match, n_rows, c) -> bool:
    r = col_match[c]
    return r != -1 and (r < -1 or r >= n_rows or row_match[r] != c)


@register_jitable
def visit_row(row_ptr, col_ind, col_match, row_level, col_seen, n_cols, level, r) -> int:
    """Row r, when it is on ``level``, reaches its unreached columns and puts their unreached mates
    on the next level; 1 when it put one there, 2 on an offset, column or mate out of range (the
    copies are not yet checked when this runs). Two rows may reach one column at once: both then
    set the same flags to the same values."""
    if row_level[r] != level:
        return 0
    if not row_span_ok(row_ptr, col_ind.size, r):
        return 2
    grew = 0
    for k in range(row_ptr[r], row_ptr[r + 1]):
        c = col_ind[k]
        if c < 0 or c >= n_cols:
            return 2
        if col_seen[c] == 0:
            col_seen[c] = 1
            mate = col_match[c]
            if mate >= row_level.size:
                return 2
            if mate >= 0 and row_level[mate] < 0:
                row_level[mate] = level + 1
                grew = 1
    return grew


@register_jitable
def uncovered(row_ptr, col_ind, row_level, col_seen, n_cols, r) -> bool:
    """A reached row (not in the cover) with an edge to an unreached column (not in it either); a
    row whose offsets are out of range counts as one (its copy fails the checksum anyway)."""
    if row_level[r] < 0:
        return False
    if not row_span_ok(row_ptr, col_ind.size, r):
        return True
    for k in range(row_ptr[r], row_ptr[r + 1]):
        c = col_ind[k]
        if c < 0 or c >= n_cols or col_seen[c] == 0:
            return True
    return False


@register_jitable
def block_reduce(s_sum, s_least, total, least, t, nt):
    """The block's wrapping sum and least (nt a power of two), for thread 0."""
    s_sum[t] = total
    s_least[t] = least
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            s_sum[t] = s_sum[t] + s_sum[t + step]
            s_least[t] = min(s_least[t], s_least[t + step])
        cuda.syncthreads()
        step //= 2
    return s_sum[0], s_least[0]


@register_jitable
def block_out(total, least, sums, leasts):
    t = cuda.threadIdx.x
    s_sum = cuda.shared.array(MAX_THREADS_PER_BLOCK, uint64)
    s_least = cuda.shared.array(MAX_THREADS_PER_BLOCK, int64)
    total, least = block_reduce(s_sum, s_least, total, least, t, cuda.blockDim.x)
    if t == 0:
        sums[cuda.blockIdx.x] = total
        leasts[cuda.blockIdx.x] = least


# ---------------------------------------------------------------------------------------------
# the loops: each reduction kernel leaves one (sum, least) per block. The cpu loops (tests, on host
# arrays) are serial, all in entry 0: the host's own passes are solvers.konig.

@njit(cache=True)
def rows_cpu(row_ptr, col_ind, row_match, col_match, row_level, n_cols, sums, leasts):
    n_edges = col_ind.size
    total = np.uint64(0)
    least = NONE
    for r in range(row_match.size):
        row_level[r] = 0 if row_match[r] == -1 else -1
        if not row_span_ok(row_ptr, n_edges, r):
            least = min(least, r)
        else:
            total += row_share(row_ptr, col_ind, row_match, n_edges, r)
            if row_fault(row_ptr, col_ind, row_match, col_match, n_cols, r):
                least = min(least, r)
    sums[0], leasts[0] = total, least


@cuda_kernel
def rows_cuda(row_ptr, col_ind, row_match, col_match, row_level, n_cols, sums, leasts):
    r = cuda.grid(1)
    total = np.uint64(0)
    least = NONE
    if r < row_match.size:
        n_edges = col_ind.size
        row_level[r] = 0 if row_match[r] == -1 else -1
        if not row_span_ok(row_ptr, n_edges, r):
            least = r
        else:
            total = row_share(row_ptr, col_ind, row_match, n_edges, r)
            if row_fault(row_ptr, col_ind, row_match, col_match, n_cols, r):
                least = r
    block_out(total, least, sums, leasts)


ROWS = Kernel("konig_rows", rows_cpu, rows_cuda, EACH)


@njit(cache=True)
def columns_cpu(row_match, col_match, col_seen, sums, leasts):
    total = np.uint64(0)
    least = NONE
    for c in range(col_match.size):
        col_seen[c] = 0
        total += column_share(col_match, c)
        if column_fault(row_match, col_match, row_match.size, c):
            least = min(least, c)
    sums[0], leasts[0] = total, least


@cuda_kernel
def columns_cuda(row_match, col_match, col_seen, sums, leasts):
    c = cuda.grid(1)
    total = np.uint64(0)
    least = NONE
    if c < col_match.size:
        col_seen[c] = 0
        total = column_share(col_match, c)
        if column_fault(row_match, col_match, row_match.size, c):
            least = c
    block_out(total, least, sums, leasts)


COLUMNS = Kernel("konig_columns", columns_cpu, columns_cuda, EACH)


@njit(cache=True)
def levels_cpu(row_ptr, col_ind, col_match, row_level, col_seen, n_levels, stamps):
    n_cols = col_match.size
    for level in range(n_levels):
        grew = 0
        for r in range(row_level.size):
            grew = max(grew, visit_row(row_ptr, col_ind, col_match, row_level, col_seen, n_cols, level, r))
        if grew == 2:
            stamps[1] = level + 1
        if grew != 1:
            return
        stamps[0] = level + 1


# The whole search in one cooperative launch (a launch from Python costs 0.1-0.3 ms, and a search
# has tens of levels): grid-stride over the rows, a grid sync after each level. A row put on the
# next level stamps it (stamps[0] = level + 1: stamps only grow), so after the sync every thread
# reads the same answer to "did the level grow?" (a fast thread already in the next level can only
# have raised the stamp further, and only if it grew), and all leave together. A fault is stamped
# with its level too (stamps[1]), so one found by a fast thread in the next level cannot make a
# slow thread leave a level early while the others wait at its barrier.

@cuda_kernel
def levels_cuda(row_ptr, col_ind, col_match, row_level, col_seen, n_levels, stamps):
    grid = cuda.cg.this_grid()
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    n_cols = col_match.size
    for level in range(n_levels):
        for r in range(start, row_level.size, stride):
            grew = visit_row(row_ptr, col_ind, col_match, row_level, col_seen, n_cols, level, r)
            if grew == 1:
                stamps[0] = level + 1
            elif grew == 2:
                stamps[1] = level + 1
        grid.sync()
        if stamps[0] <= level or 0 < stamps[1] <= level + 1:
            return


LEVELS = Kernel("konig_levels", levels_cpu, levels_cuda, COOPERATIVE, tiles=THREADS_PER_BLOCK)


@njit(cache=True)
def cover_rows_cpu(row_ptr, col_ind, row_level, col_seen, row_seen, sums, leasts):
    least = NONE
    in_cover = 0
    for r in range(row_level.size):
        row_seen[r] = row_level[r] >= 0
        in_cover += row_level[r] < 0
        if uncovered(row_ptr, col_ind, row_level, col_seen, col_seen.size, r):
            least = min(least, r)
    sums[0], leasts[0] = in_cover, least


@cuda_kernel
def cover_rows_cuda(row_ptr, col_ind, row_level, col_seen, row_seen, sums, leasts):
    """The first uncovered row, the cover's rows (the unreached) counted, each row's flag as a byte."""
    r = cuda.grid(1)
    least = NONE
    in_cover = np.uint64(0)
    if r < row_level.size:
        row_seen[r] = row_level[r] >= 0
        in_cover = np.uint64(row_level[r] < 0)
        if uncovered(row_ptr, col_ind, row_level, col_seen, col_seen.size, r):
            least = r
    block_out(in_cover, least, sums, leasts)


COVER_ROWS = Kernel("konig_cover_rows", cover_rows_cpu, cover_rows_cuda, EACH)


@njit(cache=True)
def cover_columns_cpu(col_match, col_seen, sums, leasts):
    least = NONE
    in_cover = 0
    for c in range(col_seen.size):
        in_cover += col_seen[c] != 0
        if col_seen[c] != 0 and col_match[c] < 0:
            least = min(least, c)
    sums[0], leasts[0] = in_cover, least


@cuda_kernel
def cover_columns_cuda(col_match, col_seen, sums, leasts):
    """The first free column reached, the cover's columns (the reached) counted."""
    c = cuda.grid(1)
    least = NONE
    in_cover = np.uint64(0)
    if c < col_seen.size:
        in_cover = np.uint64(col_seen[c] != 0)
        if col_seen[c] != 0 and col_match[c] < 0:
            least = c
    block_out(in_cover, least, sums, leasts)


COVER_COLUMNS = Kernel("konig_cover_columns", cover_columns_cpu, cover_columns_cuda, EACH)


@njit(cache=True, parallel=True)
def mixed_sum(values, first_position):
    """The wrapping sum of mixed_term(values[k], first_position + k): a flat array's share of a
    checksum as ROWS and COLUMNS sum it row by row (the same terms, reordered). Flat, so the
    compiler vectorizes it: summed row by row on the host it took 13x longer (37 ms against 2.8
    for a 3M-row graph and its matching on two cores)."""
    total = np.uint64(0)
    for k in prange(values.size):
        total += mixed_term(np.int64(values[k]), first_position + k)
    return total


@njit(cache=True, parallel=True)
def _count_matched(row_match):
    matched = 0
    for r in prange(row_match.size):
        matched += row_match[r] >= 0
    return matched


def host_checksums(graph, row_match, col_match) -> tuple[int, int, int]:
    """(the rows' checksum, the columns', the matched rows counted) over the host's graph and
    answer, as ROWS and COLUMNS sum them over the device copies: the column indices at their
    positions, the row offsets after them, then the rows' partners; the columns' partners at
    their own positions."""
    n_edges, n_rows = graph.n_edges, graph.n_rows
    lists = graph.rows_checksum  # summed by the pass that validated a large csr, else here
    if lists is None:
        lists = int(mixed_sum(graph.col_ind, 0)) + int(mixed_sum(graph.row_ptr, n_edges))
    rows = (lists + int(mixed_sum(row_match, n_edges + n_rows + 1))) % (1 << 64)
    return rows, int(mixed_sum(col_match, 0)), int(_count_matched(row_match))


# ---------------------------------------------------------------------------------------------
# the host side

class Reach:
    """What the device passes found: ``row_seen`` / ``col_seen`` (bool, host: read from the GPU by
    the callable ``seen`` when first asked for), ``free_col`` (the first free column reached, -1 when none),
    ``uncovered_row`` (-1 when the cover covers every edge), ``levels`` (the deepest level a row was
    put on), ``cover_size`` (the unreached rows and the reached columns, counted on the device) and
    ``matched`` (the host matching's pairs)."""

    def __init__(self, seen, n_rows, n_cols, free_col, uncovered_row, levels, cover_size, matched):
        self._seen, self._n_rows, self._n_cols = seen, n_rows, n_cols
        self._flags = None
        self._lock = threading.Lock()
        self.free_col, self.uncovered_row, self.levels = free_col, uncovered_row, levels
        self.cover_size, self.matched = cover_size, matched

    def _read(self) -> np.ndarray:
        """The reached flags (rows, then columns from position max(n_rows, 1)), read once: nothing
        in a certified answer needs them until its cover is listed, and the read of one byte per
        vertex (6 MB on 3M + 3M) cost more than every pass over the graph on the GPU."""
        with self._lock:
            if self._flags is None:
                self._flags, self._seen = self._seen(), None  # the device array is freed after the read
            return self._flags

    @property
    def row_seen(self) -> np.ndarray:
        return self._read()[:self._n_rows]

    @property
    def col_seen(self) -> np.ndarray:
        first_col = max(self._n_rows, 1)
        return self._read()[first_col:first_col + self._n_cols]


class _Partials:
    """Every pass's per-block (sums, leasts) in one pair of arrays, started at the reductions'
    identities: each kernel writes its own slice, and the host reads each array once (a read or an
    allocation from Python costs 0.03-0.1 ms; four kernels took eight of each)."""

    def __init__(self, launcher, passes):
        blocks = [max(1, int((launcher.dims(kernel, size) or (1, 1))[0])) for kernel, size in passes]
        self.bounds = np.concatenate(([0], np.cumsum(blocks))).tolist()
        self.sums = launcher.zeros(self.bounds[-1], np.uint64)
        self.leasts = launcher.full(self.bounds[-1], NONE, np.int64)

    def of(self, i: int) -> tuple:
        """The i-th pass's (sums, leasts) slices, its kernel's last two arguments."""
        first, last = self.bounds[i], self.bounds[i + 1]
        return self.sums[first:last], self.leasts[first:last]

    def finish(self, launcher) -> list[tuple[int, int]]:
        """Each pass's (wrapping sum, least), once every pass has run."""
        sums, leasts = launcher.read(self.sums), launcher.read(self.leasts)
        spans = zip(self.bounds[:-1], self.bounds[1:])
        return [(int(sums[a:b].sum(dtype=np.uint64)), int(leasts[a:b].min())) for a, b in spans]


def _matching_copy(launcher, device_matching, row_match, col_match):
    """The solver's device copy of the matching when it has the right sizes (its checksum is
    compared with the host's answer's like the graph's), else the host's answer uploaded."""
    if device_matching is not None:
        rows, cols = device_matching
        if tuple(rows.shape) == row_match.shape and tuple(cols.shape) == col_match.shape:
            return rows, cols
    return launcher.upload(row_match, np.int64), launcher.upload(col_match, np.int64)


def reach_on_device(launcher, device_graph, graph, row_match, col_match, device_matching=None):
    """(Reach, "") from the device copy ``device_graph`` = (row_ptr, col_ind) of ``graph``'s rows'
    lists and ``device_matching`` = (row_match, col_match), a device copy of the host's answer
    ``row_match`` / ``col_match`` (int64; uploaded here when no copy is given); or (None, why not):
    a copy's shape or checksum does not match the host's, a partner check fails (the host then
    names the fault), or the launch fails. Every pass is queued before the host sums its side."""
    n_rows, n_cols = graph.shape
    row_ptr, col_ind = device_graph
    if tuple(row_ptr.shape) != (n_rows + 1,) or tuple(col_ind.shape) != (graph.n_edges,):
        return None, "the GPU's copy of the graph has other sizes than the graph"
    rows_match, cols_match = _matching_copy(launcher, device_matching, row_match, col_match)
    first_col = max(n_rows, 1)  # the device arrays hold at least one element
    row_level = launcher.empty(first_col, np.int32)
    flags = launcher.empty(first_col + max(n_cols, 1), np.uint8)  # reached rows, then reached columns
    row_seen, col_seen = flags[:first_col], flags[first_col:]  # slices: the same kernel types
    parts = _Partials(launcher, ((ROWS, n_rows), (COLUMNS, n_cols), (COVER_ROWS, n_rows), (COVER_COLUMNS, n_cols)))
    stamps = launcher.zeros(2, np.int64)
    launcher.launch(ROWS, n_rows, row_ptr, col_ind, rows_match, cols_match, row_level, n_cols, *parts.of(0))
    launcher.launch(COLUMNS, n_cols, rows_match, cols_match, col_seen, *parts.of(1))
    launcher.launch(LEVELS, n_rows, row_ptr, col_ind, cols_match, row_level, col_seen, n_rows + 1, stamps)
    launcher.launch(COVER_ROWS, n_rows, row_ptr, col_ind, row_level, col_seen, row_seen, *parts.of(2))
    launcher.launch(COVER_COLUMNS, n_cols, cols_match, col_seen, *parts.of(3))
    rows_expected, cols_expected, matched = host_checksums(graph, row_match, col_match)  # while the GPU runs them
    (rows_sum, row_fault_at), (cols_sum, col_fault_at), (rows_in_cover, uncovered_row), (cols_in_cover, free_col) = \
        parts.finish(launcher)
    if rows_sum != rows_expected or cols_sum != cols_expected:
        return None, "the GPU's copy of the graph or of the matching no longer matches the host's (checksum)"
    if row_fault_at != NONE or col_fault_at != NONE:
        return None, "a partner check failed on the GPU"
    levels, fault = (int(x) for x in launcher.read(stamps))
    if fault:
        return None, "an index out of range on the GPU's copy of the graph"
    return Reach(lambda: launcher.read(flags).view(np.bool_), n_rows, n_cols, -1 if free_col == NONE else free_col,
                 -1 if uncovered_row == NONE else uncovered_row, levels, rows_in_cover + cols_in_cover, matched), ""


def warm_up(backend: str) -> None:
    """Compile (or load) every pass for the index types a GPU solver keeps (int64 offsets, int32
    columns and partners) and for a host answer uploaded (int64 partners); small graphs never reach
    them."""
    from .problems import BipartiteGraph
    from .targets import launcher_for
    launcher = launcher_for(backend)
    graph = BipartiteGraph.from_edges(np.array([0, 1]), np.array([1, 0]), 2, 2)
    device_graph = (launcher.upload(graph.row_ptr, np.int64), launcher.upload(graph.col_ind, np.int32))
    row_match, col_match = np.array([1, -1]), np.array([-1, 0])
    reach_on_device(launcher, device_graph, graph, row_match, col_match)
    solver_copy = (launcher.upload(row_match, np.int32), launcher.upload(col_match, np.int32))
    reach_on_device(launcher, device_graph, graph, row_match, col_match, solver_copy)
