"""sparse-sap: minimum-cost assignment on sparse costs by shortest augmenting paths (CPU, numba).

Rows n <= columns m (a taller problem is solved transposed). Column potentials v start at 0 and
only decrease, so v <= 0 and v = 0 on columns never assigned: the rectangular problem's conditions.
1. Each row in turn takes its cheapest column while that column is free (u_i = that cost; with
   v = 0 every reduced cost c_ij - u_i - v_j is then >= 0).
2. Every other row is augmented along a shortest path of reduced costs (Dijkstra with a binary
   heap) to the nearest free column, at distance delta; each column j settled on the way before it
   gets v_j += d_j - delta (Jonker & Volgenant's update), which keeps all reduced costs >= 0 and
   those of the matched pairs at 0. Its labels are reset lazily (stamps), so a search costs what
   it explores, not O(m): on nearest-neighbour candidates, where most paths are short, that is
   the difference from LAPJVsp's O(m) work per row.
u_i = c_{i,x(i)} - v_{x(i)} at the end. The rows are augmented in chunks so that telemetry and Stop
are served between them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InfeasibleError
from ..problems import SparseCosts
from ..result import Solution

CHUNK_ROWS = 1 << 14  # rows augmented between two telemetry reports (and Stop checks)


@njit(cache=True)
def _cheapest_first(row_ptr, col_ind, cost, col_of_row, row_of_col):
    """Step 1: each row its cheapest column, where still free. Returns how many rows got one."""
    taken = 0
    for i in range(col_of_row.size):
        best, at = np.inf, -1
        for e in range(row_ptr[i], row_ptr[i + 1]):
            if cost[e] < best:
                best, at = cost[e], col_ind[e]
        if at >= 0 and row_of_col[at] < 0:
            row_of_col[at] = i
            col_of_row[i] = at
            taken += 1
    return taken


@njit(cache=True)
def _push(heap_key, heap_col, size, key, col):
    k = size
    heap_key[k], heap_col[k] = key, col
    while k > 0:
        parent = (k - 1) >> 1
        if heap_key[parent] <= heap_key[k]:
            break
        heap_key[k], heap_key[parent] = heap_key[parent], heap_key[k]
        heap_col[k], heap_col[parent] = heap_col[parent], heap_col[k]
        k = parent
    return size + 1


@njit(cache=True)
def _pop(heap_key, heap_col, size):
    """Removes the root; returns the new size (the root was read by the caller)."""
    size -= 1
    heap_key[0], heap_col[0] = heap_key[size], heap_col[size]
    k = 0
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and heap_key[left + 1] < heap_key[left]:
            child = left + 1
        if heap_key[k] <= heap_key[child]:
            break
        heap_key[k], heap_key[child] = heap_key[child], heap_key[k]
        heap_col[k], heap_col[child] = heap_col[child], heap_col[k]
        k = child
    return size


@njit(cache=True)
def _matched_cost(row_ptr, col_ind, cost, i, j):
    for e in range(row_ptr[i], row_ptr[i + 1]):
        if col_ind[e] == j:
            return cost[e]
    return np.inf


@njit(cache=True)
def _augment_rows(row_ptr, col_ind, cost, rows, col_of_row, row_of_col, v, dist, pred, seen, settled,
                  settled_list, heap_key, heap_col, stamp0):
    """Step 2 for each row of ``rows`` (free ones). Returns the index in ``rows`` of a row with no
    augmenting path (no complete assignment exists), or -1 when all were augmented."""
    stamp = stamp0
    for k in range(rows.size):
        root = rows[k]
        if col_of_row[root] >= 0:
            continue
        stamp += 1
        size = 0
        n_settled = 0
        for e in range(row_ptr[root], row_ptr[root + 1]):  # u_root = 0 here: labels may be negative
            j = col_ind[e]
            d = cost[e] - v[j]
            if seen[j] != stamp or d < dist[j]:
                seen[j] = stamp
                dist[j] = d
                pred[j] = root
                size = _push(heap_key, heap_col, size, d, j)
        sink = -1
        delta = 0.0
        while size > 0:
            d, j = heap_key[0], heap_col[0]
            size = _pop(heap_key, heap_col, size)
            if settled[j] == stamp or d > dist[j]:
                continue  # a stale entry
            settled[j] = stamp
            i = row_of_col[j]
            if i < 0:
                sink, delta = j, d
                break
            settled_list[n_settled] = j
            n_settled += 1
            base = d - (_matched_cost(row_ptr, col_ind, cost, i, j) - v[j])  # d_j - u_i
            for e in range(row_ptr[i], row_ptr[i + 1]):
                c = col_ind[e]
                if settled[c] == stamp:
                    continue
                nd = base + cost[e] - v[c]
                if seen[c] != stamp or nd < dist[c]:
                    seen[c] = stamp
                    dist[c] = nd
                    pred[c] = i
                    size = _push(heap_key, heap_col, size, nd, c)
        if sink < 0:
            return k, stamp
        for t in range(n_settled):
            j = settled_list[t]
            v[j] += dist[j] - delta
        j = sink
        while True:
            i = pred[j]
            previous = col_of_row[i]
            col_of_row[i] = j
            row_of_col[j] = i
            if i == root:
                break
            j = previous
    return -1, stamp


@njit(cache=True)
def _row_potentials(row_ptr, col_ind, cost, col_of_row, v):
    u = np.empty(col_of_row.size)
    for i in range(col_of_row.size):
        j = col_of_row[i]
        u[i] = _matched_cost(row_ptr, col_ind, cost, i, j) - v[j]
    return u


def solve_sparse(row_ptr, col_ind, cost, n: int, m: int, tel=None, where: str = "", row_word: str = "row"):
    """(row_match, col_match, u, v) of the minimum-cost assignment of every row (n <= m) on CSR
    costs; InfeasibleError when none exists."""
    col_of_row = np.full(n, -1, dtype=np.int64)
    row_of_col = np.full(m, -1, dtype=np.int64)
    v = np.zeros(m)
    taken = _cheapest_first(row_ptr, col_ind, cost, col_of_row, row_of_col)
    if tel is not None and tel.enabled:
        tel.iteration(0, "initial", active=n - taken)
    free = np.flatnonzero(col_of_row < 0)
    dist, pred = np.empty(m), np.empty(m, dtype=np.int64)
    seen, settled = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    settled_list = np.empty(m, dtype=np.int64)
    heap_key, heap_col = np.empty(max(col_ind.size, 1)), np.empty(max(col_ind.size, 1), dtype=np.int64)
    stamp = 0
    for chunk, start in enumerate(range(0, free.size, CHUNK_ROWS), start=1):
        rows = free[start:start + CHUNK_ROWS]
        stuck, stamp = _augment_rows(row_ptr, col_ind, cost, rows, col_of_row, row_of_col, v, dist, pred, seen,
                                     settled, settled_list, heap_key, heap_col, stamp)
        if stuck >= 0:
            raise InfeasibleError(f"{where}no complete assignment exists: {row_word} {int(rows[stuck])} has no "
                                  "augmenting path to a free partner")
        if tel is not None and tel.enabled:
            tel.iteration(chunk, "augment", active=int(free.size - start - rows.size))
            tel.check_cancel()
    u = _row_potentials(row_ptr, col_ind, cost, col_of_row, v)
    return col_of_row, row_of_col, u, v


def run(problem: SparseCosts, backend: str, tel) -> Solution:
    n, m = problem.shape
    where = f"{problem.source}: " if problem.source else ""
    if n > m:  # solved transposed: its rows are the problem's columns
        csc = problem.to_sparse().tocsc()
        col_match, row_match, v, u = solve_sparse(csc.indptr, csc.indices, csc.data, m, n, tel, where, "column")
        value = float(np.sum(v) + np.sum(u[col_match]))
    else:
        row_match, col_match, u, v = solve_sparse(problem.row_ptr, problem.col_ind, problem.cost, n, m, tel, where)
        value = float(np.sum(u) + np.sum(v[row_match]))
    if tel.enabled:
        tel.iteration(1, "done", active=0, value=value)
    return Solution(value=value, iterations=1, row_match=row_match, col_match=col_match, duals={"u": u, "v": v})
