"""The matching certificate's passes over the graph (solvers.certify.certify_matching), serial for
small graphs and on all cores for large ones, each per-row body written once beside both loops:
  * every matched pair is an edge (binary search in the sorted row);
  * the alternating search from the free rows, whose unreached rows and reached columns form a
    König vertex cover;
  * that cover covers every edge (the proof is checked, not trusted).

The multi-core search goes level by level. Two threads may both reach one vertex in a level and
both queue it: the vertex is then scanned twice, which costs work but changes nothing, as a flag
is only ever set. The reached sets are those of the serial search, whatever the interleaving.
Kept apart from solvers.certify (which is long) and from the problem classes (no numba there).
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange
from numba.extending import register_jitable

from .graph_build import position_in_row

PARALLEL_MIN_EDGES = 1 << 20  # below this the serial loops win (thread start-up, and their compile)


# ---------------------------------------------------------------------------------------------
# bodies

@register_jitable
def partner_missing(row_ptr, col_ind, row_match, r) -> bool:
    """Row r is matched to a column that is not among its (sorted) neighbours."""
    c = row_match[r]
    return c >= 0 and position_in_row(row_ptr, col_ind, r, c) < 0


@register_jitable
def uncovered_column(row_ptr, col_ind, cover_row, cover_col, r) -> int:
    """The first column of an edge of row r that the cover misses, or -1."""
    if cover_row[r]:
        return -1
    for k in range(row_ptr[r], row_ptr[r + 1]):
        if not cover_col[col_ind[k]]:
            return col_ind[k]
    return -1


@register_jitable
def free_rows_reached(row_match, row_seen):
    """The search's start: the free rows, marked reached."""
    free = np.flatnonzero(row_match < 0)
    for r in free:
        row_seen[r] = True
    return free


@register_jitable
def scan_row(row_ptr, col_ind, col_match, row_seen, col_seen, r, queue, at) -> int:
    """Reach row r's unreached columns, queue their unreached mates at queue[at:]; the new end."""
    for k in range(row_ptr[r], row_ptr[r + 1]):
        c = col_ind[k]
        if col_seen[c]:
            continue
        col_seen[c] = True
        mate = col_match[c]
        if mate >= 0 and not row_seen[mate]:
            row_seen[mate] = True
            queue[at] = mate
            at += 1
    return at


# ---------------------------------------------------------------------------------------------
# serial loops

@njit(cache=True)
def _first_non_edge_serial(row_ptr, col_ind, row_match):
    for r in range(row_match.size):
        if partner_missing(row_ptr, col_ind, row_match, r):
            return r
    return -1


@njit(cache=True)
def _first_uncovered_serial(row_ptr, col_ind, cover_row, cover_col):
    for r in range(cover_row.size):
        c = uncovered_column(row_ptr, col_ind, cover_row, cover_col, r)
        if c >= 0:
            return r, c
    return -1, -1


@njit(cache=True)
def _reach_serial(n_cols, row_ptr, col_ind, row_match, col_match):
    n_rows = row_match.size
    row_seen = np.zeros(n_rows, dtype=np.bool_)
    col_seen = np.zeros(n_cols, dtype=np.bool_)
    queue = np.empty(n_rows, dtype=np.int64)
    free = free_rows_reached(row_match, row_seen)
    queue[:free.size] = free
    head, tail = 0, free.size
    while head < tail:
        tail = scan_row(row_ptr, col_ind, col_match, row_seen, col_seen, queue[head], queue, tail)
        head += 1
    return row_seen, col_seen


# ---------------------------------------------------------------------------------------------
# multi-core loops

@njit(parallel=True, cache=True)
def _first_non_edge_parallel(row_ptr, col_ind, row_match):
    bad = np.zeros(row_match.size, dtype=np.bool_)
    for r in prange(row_match.size):
        bad[r] = partner_missing(row_ptr, col_ind, row_match, r)
    for r in range(row_match.size):
        if bad[r]:
            return r
    return -1


@njit(parallel=True, cache=True)
def _first_uncovered_parallel(row_ptr, col_ind, cover_row, cover_col):
    at = np.empty(cover_row.size, dtype=np.int64)
    for r in prange(cover_row.size):
        at[r] = uncovered_column(row_ptr, col_ind, cover_row, cover_col, r)
    for r in range(cover_row.size):
        if at[r] >= 0:
            return r, at[r]
    return -1, -1


@njit(parallel=True, cache=True)
def _reach_parallel(n_cols, row_ptr, col_ind, row_match, col_match, chunks_per_level):
    n_rows = row_match.size
    row_seen = np.zeros(n_rows, dtype=np.bool_)
    col_seen = np.zeros(n_cols, dtype=np.bool_)
    frontier = free_rows_reached(row_match, row_seen)
    while frontier.size > 0:
        f = frontier.size
        chunks = min(chunks_per_level, f)
        # a chunk queues at most one row per edge it scans: its slice of the level's buffer
        start = np.zeros(chunks + 1, dtype=np.int64)
        for t in prange(chunks):
            edges = 0
            for q in range(f * t // chunks, f * (t + 1) // chunks):
                r = frontier[q]
                edges += row_ptr[r + 1] - row_ptr[r]
            start[t + 1] = edges
        start = np.cumsum(start)
        queued = np.empty(start[-1], dtype=np.int64)
        end = np.empty(chunks, dtype=np.int64)
        for t in prange(chunks):
            at = start[t]
            for q in range(f * t // chunks, f * (t + 1) // chunks):
                at = scan_row(row_ptr, col_ind, col_match, row_seen, col_seen, frontier[q], queued, at)
            end[t] = at
        sizes = end - start[:-1]
        offsets = np.zeros(chunks + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(sizes)
        frontier = np.empty(offsets[-1], dtype=np.int64)
        for t in prange(chunks):
            for k in range(sizes[t]):
                frontier[offsets[t] + k] = queued[start[t] + k]
    return row_seen, col_seen


@njit(parallel=True, cache=True)
def _disagreements(row_match, col_match):
    """Entries out of range, or naming a partner that does not name them back, in either array."""
    n, m = row_match.size, col_match.size
    bad = 0
    for r in prange(n):
        c = row_match[r]
        if c < -1 or c >= m or (c >= 0 and col_match[c] != r):
            bad += 1
    for c in prange(m):
        r = col_match[c]
        if r < -1 or r >= n or (r >= 0 and row_match[r] != c):
            bad += 1
    return bad


# ---------------------------------------------------------------------------------------------
# what certify calls

def matches_agree(row_match, col_match, n_rows: int, n_cols: int) -> bool:
    """True when both are integer arrays of the right lengths, every entry in range, and each
    names the same pairs as the other (then no column is matched twice). One multi-core pass: the
    certificate's checks one by one (copies, bounds, the implied column map, a comparison) took
    70 ms on 3M rows. False says only "check the slow way", which names what is wrong."""
    if not (isinstance(row_match, np.ndarray) and isinstance(col_match, np.ndarray)):
        return False
    if row_match.shape != (n_rows,) or col_match.shape != (n_cols,):
        return False
    if row_match.dtype != np.int64 or col_match.dtype != np.int64:  # what the solvers give: one compile
        return False
    return int(_disagreements(row_match, col_match)) == 0


def _parallel(graph) -> bool:
    return graph.n_edges >= PARALLEL_MIN_EDGES


def first_non_edge(graph, row_match) -> int:
    """The first row matched to a column it has no edge to, else -1."""
    loop = _first_non_edge_parallel if _parallel(graph) else _first_non_edge_serial
    return int(loop(graph.row_ptr, graph.col_ind, row_match))


def reach(graph, row_match, col_match) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) reachable from the free rows by alternating paths (flags)."""
    if _parallel(graph):
        return _reach_parallel(graph.n_cols, graph.row_ptr, graph.col_ind, row_match, col_match,
                               4 * get_num_threads())
    return _reach_serial(graph.n_cols, graph.row_ptr, graph.col_ind, row_match, col_match)


def first_uncovered_edge(graph, cover_row, cover_col) -> tuple[int, int]:
    loop = _first_uncovered_parallel if _parallel(graph) else _first_uncovered_serial
    r, c = loop(graph.row_ptr, graph.col_ind, cover_row, cover_col)
    return int(r), int(c)


@njit(cache=True)
def _fill_where(mask, value, out):
    """out[:k] = each i with mask[i] == value, increasing; k returned. Branch-free: every i is
    written and the count decides whether the next one keeps it (``out`` has a spare slot)."""
    k = 0
    for i in range(mask.size):
        out[k] = i
        k += mask[i] == value
    return k


LISTED_MIN = 1 << 20  # from here a mask's indices come from the compiled pass


def indices_where(mask: np.ndarray, value: bool) -> np.ndarray:
    """np.flatnonzero(mask == value) of a boolean mask (a König cover's rows or columns). numpy's
    takes a branch per entry, which on random masks mispredicts: 13.6 ms for the two 3M masks of a
    matching's cover on the GPU machine's host; the compiled pass is 1.3-3.4x faster on 2 cores."""
    mask = np.asarray(mask, dtype=np.bool_)
    if mask.size < LISTED_MIN:
        return np.flatnonzero(mask) if value else np.flatnonzero(~mask)
    count = int(np.count_nonzero(mask))
    if not value:
        count = mask.size - count
    out = np.empty(count + 1, dtype=np.int64)
    _fill_where(mask, bool(value), out)
    return out[:count]


def warm() -> None:
    """Compile (or load) the multi-core loops for int32 and int64 indices (only large graphs reach them)."""
    for index in (np.int32, np.int64):
        row_ptr, col_ind = np.array([0, 1, 2], dtype=index), np.array([0, 1], dtype=index)
        row_match, col_match = np.array([0, -1], dtype=np.int64), np.array([0, -1], dtype=np.int64)
        _first_non_edge_parallel(row_ptr, col_ind, row_match)
        seen_rows, seen_cols = _reach_parallel(2, row_ptr, col_ind, row_match, col_match, 2)
        _first_uncovered_parallel(row_ptr, col_ind, ~seen_rows, seen_cols)
    _disagreements(np.array([0, -1], dtype=np.int64), np.array([0, -1], dtype=np.int64))
    _fill_where(np.array([True, False]), False, np.empty(2, dtype=np.int64))
