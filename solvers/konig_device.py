"""The matching certificate's passes (solvers.konig) run where a GPU solver left the graph: on its
device copy of the rows' lists.

A matching solved on a GPU leaves the graph in device memory; on the host the certificate's passes
(the partners, the alternating search, the cover) were most of a large solve's host time (60 ms of
a 3M-row graph's 160 ms end to end). Here each pass is a launch over the rows or columns:
  * ROWS: every row's share of the graph's checksum, and whether its partner is in range, names it
    back and is one of its (sorted) neighbours; the free rows start the search at level 0;
  * COLUMNS: every column's partner is in range and names it back;
  * LEVELS, one cooperative launch: level by level, the rows of the level reach their unreached
    columns, and the columns' mates (unreached rows) join the next level, until a level adds none;
  * COVER_ROWS / COVER_COLUMNS: the first reached row with an edge to an unreached column (the
    unreached rows and the reached columns, a König cover, must cover every edge), and the first
    free column reached (the end of an augmenting path).
The reductions are per block (one partial per block: a wrapping sum, a least index), finished on
the host.

Independent of the solvers: nothing here imports solver code, and the device copy is not trusted. A
solver ran on the same arrays and could have overwritten them, so ROWS recomputes the graph's
checksum over them (a wrapping sum of each value mixed with its position by splitmix64's finaliser,
the row offsets after the column indices: ``mixed_term``) and the caller compares it with the host
graph's before anything else is read there; every index read on the device is bounds-checked first,
so a damaged copy ends as a mismatch or a fault, never as a read out of bounds. The matching checked
is the host's (uploaded), not the solver's device copy. On anything unexpected the caller certifies
on the host and says why. The cpu loops (the same arguments) let a test run every pass on host
arrays.
"""
from __future__ import annotations

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
def row_share(row_ptr, col_ind, n_edges, r):
    """Row r's share of the graph's checksum: its column indices at their positions, then its end
    offset after the n_edges positions of the indices (row 0 also its start)."""
    s = mixed_term(row_ptr[r + 1], n_edges + r + 1)
    if r == 0:
        s += mixed_term(row_ptr[0], n_edges)
    for k in range(row_ptr[r], row_ptr[r + 1]):
        s += mixed_term(col_ind[k], k)
    return s


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
    on the next level; 1 when it put one there, 2 on a column index out of range. Two rows may
    reach one column at once: both then set the same flags to the same values."""
    if row_level[r] != level:
        return 0
    grew = 0
    for k in range(row_ptr[r], row_ptr[r + 1]):
        c = col_ind[k]
        if c < 0 or c >= n_cols:
            return 2
        if col_seen[c] == 0:
            col_seen[c] = 1
            mate = col_match[c]
            if mate >= 0 and row_level[mate] < 0:
                row_level[mate] = level + 1
                grew = 1
    return grew


@register_jitable
def uncovered(row_ptr, col_ind, row_level, col_seen, n_cols, r) -> bool:
    """A reached row (not in the cover) with an edge to an unreached column (not in it either)."""
    if row_level[r] < 0:
        return False
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
            total += row_share(row_ptr, col_ind, n_edges, r)
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
            total = row_share(row_ptr, col_ind, n_edges, r)
            if row_fault(row_ptr, col_ind, row_match, col_match, n_cols, r):
                least = r
    block_out(total, least, sums, leasts)


ROWS = Kernel("konig_rows", rows_cpu, rows_cuda, EACH)


@njit(cache=True)
def columns_cpu(row_match, col_match, col_seen, sums, leasts):
    least = NONE
    for c in range(col_match.size):
        col_seen[c] = 0
        if column_fault(row_match, col_match, row_match.size, c):
            least = min(least, c)
    leasts[0] = least


@cuda_kernel
def columns_cuda(row_match, col_match, col_seen, sums, leasts):
    c = cuda.grid(1)
    least = NONE
    if c < col_match.size:
        col_seen[c] = 0
        if column_fault(row_match, col_match, row_match.size, c):
            least = c
    block_out(np.uint64(0), least, sums, leasts)


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
def cover_rows_cpu(row_ptr, col_ind, row_level, col_seen, sums, leasts):
    least = NONE
    for r in range(row_level.size):
        if uncovered(row_ptr, col_ind, row_level, col_seen, col_seen.size, r):
            least = min(least, r)
    leasts[0] = least


@cuda_kernel
def cover_rows_cuda(row_ptr, col_ind, row_level, col_seen, sums, leasts):
    r = cuda.grid(1)
    least = NONE
    if r < row_level.size and uncovered(row_ptr, col_ind, row_level, col_seen, col_seen.size, r):
        least = r
    block_out(np.uint64(0), least, sums, leasts)


COVER_ROWS = Kernel("konig_cover_rows", cover_rows_cpu, cover_rows_cuda, EACH)


@njit(cache=True)
def cover_columns_cpu(col_match, col_seen, sums, leasts):
    least = NONE
    for c in range(col_seen.size):
        if col_seen[c] != 0 and col_match[c] < 0:
            least = min(least, c)
    leasts[0] = least


@cuda_kernel
def cover_columns_cuda(col_match, col_seen, sums, leasts):
    c = cuda.grid(1)
    least = NONE
    if c < col_seen.size and col_seen[c] != 0 and col_match[c] < 0:
        least = c
    block_out(np.uint64(0), least, sums, leasts)


COVER_COLUMNS = Kernel("konig_cover_columns", cover_columns_cpu, cover_columns_cuda, EACH)


@njit(cache=True, parallel=True)
def graph_checksum_cpu(row_ptr, col_ind):
    """The host graph's checksum, as ROWS sums it over a device copy."""
    n_edges = col_ind.size
    total = np.uint64(0)
    for r in prange(row_ptr.size - 1):
        total += row_share(row_ptr, col_ind, n_edges, r)
    return total


# ---------------------------------------------------------------------------------------------
# the host side

class Reach:
    """What the device passes found: ``row_seen`` / ``col_seen`` (bool, host), ``free_col`` (the
    first free column reached, -1 when none), ``uncovered_row`` (-1 when the cover covers every
    edge), ``levels`` (the deepest level a row was put on)."""

    def __init__(self, row_seen, col_seen, free_col, uncovered_row, levels):
        self.row_seen, self.col_seen = row_seen, col_seen
        self.free_col, self.uncovered_row, self.levels = free_col, uncovered_row, levels


def graph_checksum(graph) -> int:
    """The checksum of the graph's rows' lists as ROWS computes it over a device copy."""
    return int(graph_checksum_cpu(graph.row_ptr, graph.col_ind))


def _partials(launcher, kernel, size):
    """A kernel's per-block (sums, leasts), started at the reductions' identities."""
    blocks = max(1, int((launcher.dims(kernel, size) or (1, 1))[0]))
    return launcher.zeros(blocks, np.uint64), launcher.full(blocks, NONE, np.int64)


def _least(launcher, partials) -> int:
    return int(launcher.read(partials[1]).min())


def reach_on_device(launcher, device_graph, graph, row_match, col_match):
    """(Reach, "") from the device copy ``device_graph`` = (row_ptr, col_ind) of ``graph``'s rows'
    lists and the host's row_match / col_match (int64, uploaded here); or (None, why not): the copy's
    shape or checksum does not match the graph, a partner check fails (the host then names the
    fault), or the launch fails."""
    n_rows, n_cols = graph.shape
    row_ptr, col_ind = device_graph
    if tuple(row_ptr.shape) != (n_rows + 1,) or tuple(col_ind.shape) != (graph.n_edges,):
        return None, "the GPU's copy of the graph has other sizes than the graph"
    rows_match = launcher.upload(row_match, np.int64)
    cols_match = launcher.upload(col_match, np.int64)
    row_level = launcher.empty(max(n_rows, 1), np.int32)
    col_seen = launcher.empty(max(n_cols, 1), np.uint8)
    row_parts, col_parts = _partials(launcher, ROWS, n_rows), _partials(launcher, COLUMNS, n_cols)
    launcher.launch(ROWS, n_rows, row_ptr, col_ind, rows_match, cols_match, row_level, n_cols, *row_parts)
    launcher.launch(COLUMNS, n_cols, rows_match, cols_match, col_seen, *col_parts)
    expected = graph_checksum(graph)  # on the host while the GPU runs the first passes
    if int(launcher.read(row_parts[0]).sum(dtype=np.uint64)) != expected:
        return None, "the GPU's copy of the graph no longer matches the graph (checksum)"
    if _least(launcher, row_parts) != NONE or _least(launcher, col_parts) != NONE:
        return None, "a partner check failed on the GPU"
    stamps = launcher.zeros(2, np.int64)
    launcher.launch(LEVELS, n_rows, row_ptr, col_ind, cols_match, row_level, col_seen, n_rows + 1, stamps)
    levels, fault = (int(x) for x in launcher.read(stamps))
    if fault:
        return None, "a column index out of range on the GPU's copy of the graph"
    cover_parts, column_parts = _partials(launcher, COVER_ROWS, n_rows), _partials(launcher, COVER_COLUMNS, n_cols)
    launcher.launch(COVER_ROWS, n_rows, row_ptr, col_ind, row_level, col_seen, *cover_parts)
    launcher.launch(COVER_COLUMNS, n_cols, cols_match, col_seen, *column_parts)
    uncovered_row, free_col = _least(launcher, cover_parts), _least(launcher, column_parts)
    row_seen = launcher.read(row_level)[:n_rows] >= 0
    seen_cols = launcher.read(col_seen)[:n_cols] != 0
    return Reach(row_seen, seen_cols, -1 if free_col == NONE else free_col,
                 -1 if uncovered_row == NONE else uncovered_row, levels), ""


def warm_up(backend: str) -> None:
    """Compile (or load) every pass for the index types a GPU solver keeps (int64 offsets, int32
    columns); small graphs never reach them."""
    from .problems import BipartiteGraph
    from .targets import launcher_for
    launcher = launcher_for(backend)
    graph = BipartiteGraph.from_edges(np.array([0, 1]), np.array([1, 0]), 2, 2)
    device_graph = (launcher.upload(graph.row_ptr, np.int64), launcher.upload(graph.col_ind, np.int32))
    reach_on_device(launcher, device_graph, graph, np.array([1, -1]), np.array([-1, 0]))
    graph_checksum_cpu(graph.row_ptr, graph.col_ind)
