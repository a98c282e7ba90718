"""The CPU batch backend: every item a dense shortest augmenting path assignment, items spread over
the cores (numba ``prange`` over items; one item is one thread's work, so small items cost no
synchronisation at all).

Per item (oriented rows <= cols), each row in turn is augmented by a Dijkstra search over the
columns on reduced costs c_ij - u_i - v_j, then the duals are updated so the path's edges become
tight (Jonker & Volgenant 1987; the same search as scipy's linear_sum_assignment, Crouse 2016).
Among columns of equal distance a free one is preferred: the search then ends sooner. Forbidden
pairs (+inf) are never tight; a search that finds no finite distance to a free column proves that
the item's rows cannot all be assigned (infeasible). Duals: u_i + v_j <= c_ij, equality on the
assigned pairs; a column's v only decreases, and only once it is reached, and a free column is
reached last with zero change, so unassigned columns keep v_j = 0 and the others v_j <= 0 (the
rectangular LP's conditions).

Exactness: integer costs (|c| <= 2^53 and sums below it) are solved exactly: every distance and
dual is an integer. Real costs at any scale: no epsilon is added anywhere; ties are decided by
the float comparisons alone, as scipy's. Costs stay in their own type (float32 or float64) and
are read as float64.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..dual_steps import float_of_bits
from .certify_batch import _certify_item, lane_work
from .item_clock import ticks, ticks_per_second
from .packing import INFEASIBLE, SOLVED, PackedBatch, PackedSolution
from .scan import first_bad_entries, scan_range


ARR_SCANS_PER_ROW = 2  # the augmenting row reduction's scans a pass, per row (see its docstring)


@njit(cache=True)
def _column_reduction(costs, base, n, row_to_col, col_to_row, v, ro, co):
    """A square item's start: v_j = min_i c_ij (u = 0 keeps every reduced cost >= 0), and each column
    whose minimum lies on a row still free is assigned to it (a tight pair). The searches then start
    from duals that already price most columns, and only the rows left free are augmented.
    Columns with no allowed entry keep v_j = 0 (the item is then infeasible; the search says so)."""
    for j in range(n):
        best = np.inf
        arg = -1
        for i in range(n):
            c = np.float64(costs[base + i * n + j])
            if c < best:
                best = c
                arg = i
        if arg < 0:
            continue
        v[co + j] = best
        if row_to_col[ro + arg] == -1:
            row_to_col[ro + arg] = j
            col_to_row[j] = arg


@njit(cache=True)
def _augmenting_row_reduction(costs, base, n, row_to_col, col_to_row, u, v, ro, co, free):
    """Jonker & Volgenant's augmenting row reduction (two passes), square items: a free row takes the
    column of its least reduced cost c_ij - v_j, lowering that v_j until the row's second least
    ties with it, so it stays the row's minimum and gets less attractive to every other row (their
    reduced costs only grow: every assigned row keeps its minimum, tight); the row it displaces is
    free again and bids next. Each pass is bounded (float steps could be tiny), and rows still free
    afterwards are left to the searches. Returns the rows scanned.

    The bound, ARR_SCANS_PER_ROW * n scans a pass: uniform real costs spend any budget in price
    wars of tiny steps that the searches settle sooner. Measured on one core (1000 items each):
    4 -> 2 took 256 x 256 float32 from 0.90 to 0.75 s, 100 x 100 from 1.23 to 1.09 s, 500 x 500
    from 0.37 to 0.34 s, 40 x 40 from 0.18 to 0.17 s; integer costs in [0, 10n] and [0, n/5]
    unchanged; 1 was slower at 256 and 500."""
    n_free = 0
    for i in range(n):
        if row_to_col[ro + i] == -1:
            free[n_free] = i
            n_free += 1
    scans = 0
    for _ in range(2):
        k = 0
        previous = n_free
        n_free = 0
        budget = ARR_SCANS_PER_ROW * n
        while k < previous and budget > 0:
            budget -= 1
            i = free[k]
            k += 1
            scans += 1
            row = base + i * n
            u1 = np.inf
            u2 = np.inf
            j1 = -1
            j2 = -1
            for j in range(n):
                h = np.float64(costs[row + j]) - v[co + j]
                if h < u2:
                    if h >= u1:
                        u2 = h
                        j2 = j
                    else:
                        u2 = u1
                        j2 = j1
                        u1 = h
                        j1 = j
            if j1 < 0:  # a row with no allowed column: the search will prove the item infeasible
                continue
            i0 = col_to_row[j1]
            lowered = u1 < u2 and u2 < np.inf
            if lowered:
                v[co + j1] -= u2 - u1
            elif i0 >= 0 and j2 >= 0:
                j1 = j2
                i0 = col_to_row[j2]
            row_to_col[ro + i] = j1
            col_to_row[j1] = i
            u[ro + i] = np.float64(costs[row + j1]) - v[co + j1]
            if i0 >= 0:
                row_to_col[ro + i0] = -1
                if lowered:
                    k -= 1
                    free[k] = i0
                else:
                    free[n_free] = i0
                    n_free += 1
        while k < previous:  # the budget ran out: the rows not reached stay free for the searches
            free[n_free] = free[k]
            n_free += 1
            k += 1
    return scans


@njit(cache=True)
def _solve_item(costs, base, n, m, row_to_col, u, v, ro, co):
    """Item with entries costs[base: base + n*m] (n <= m); writes row_to_col[ro: ro+n], u[ro: ro+n],
    v[co: co+m]. Returns (status, shortest-path steps)."""
    col_to_row = np.full(m, -1, dtype=np.int64)
    shortest = np.empty(m, dtype=np.float64)
    path = np.empty(m, dtype=np.int64)
    remaining = np.empty(m, dtype=np.int64)
    steps = 0
    for k in range(n):
        row_to_col[ro + k] = -1
        u[ro + k] = 0.0
    for j in range(m):
        v[co + j] = 0.0
    if n == m and n > 0:
        _column_reduction(costs, base, n, row_to_col, col_to_row, v, ro, co)
        steps += _augmenting_row_reduction(costs, base, n, row_to_col, col_to_row, u, v, ro, co, remaining)
    for cur in range(n):
        if row_to_col[ro + cur] >= 0:
            continue
        for j in range(m):
            shortest[j] = np.inf
            remaining[j] = m - 1 - j  # scanned from the last column: scipy's order, same ties
        n_remaining = m
        min_val = 0.0
        i = cur
        sink = -1
        while sink == -1:
            steps += 1
            row = base + i * m
            ui = u[ro + i]
            index = -1
            lowest = np.inf
            for it in range(n_remaining):
                j = remaining[it]
                r = min_val + (np.float64(costs[row + j]) - ui - v[co + j])
                if r < shortest[j]:
                    path[j] = i
                    shortest[j] = r
                d = shortest[j]
                if d < lowest or (d == lowest and col_to_row[j] == -1):
                    lowest = d
                    index = it
            if lowest == np.inf:  # no free column at a finite distance: Hall's condition fails
                return INFEASIBLE, steps
            min_val = lowest
            j = remaining[index]
            if col_to_row[j] == -1:
                sink = j
            else:
                i = col_to_row[j]
            n_remaining -= 1
            remaining[index] = remaining[n_remaining]
            remaining[n_remaining] = j  # settled columns gather at the end of ``remaining``
        # duals: settled columns (and the rows matched to them, and cur) move by min_val - distance
        u[ro + cur] += min_val
        for it in range(n_remaining, m):
            j = remaining[it]
            delta = min_val - shortest[j]
            v[co + j] -= delta
            if j != sink:
                u[ro + col_to_row[j]] += delta
        j = sink  # flip the path
        while True:
            i = path[j]
            col_to_row[j] = i
            nxt = row_to_col[ro + i]
            row_to_col[ro + i] = j
            j = nxt
            if i == cur:
                break
    return SOLVED, steps


@njit(cache=True, parallel=True, nogil=True)
def _solve_all(costs, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, iterations, status,
               item_ticks, check, limits, holds, top_bits, reason, at_row, at_col, value, gap, tol, doubt,
               certify_ticks, work):
    """Each item in one thread, from one read of its costs: checked first when ``check`` (``holds``
    marks an item with NaN or -inf, ``top_bits`` its largest finite |cost|; such an item, or one
    above ``limits``, is not solved, and the caller refuses the batch), then solved, then certified
    by certify_batch's own check, the costs still in the core's cache (three passes over memory
    were two thirds of a batch's time on 2 cores). Items are dealt to the lanes of ``work``
    (certify_batch.workspace) in turn, each lane with its own scratch."""
    lanes = work[0].shape[0]
    for lane in prange(lanes):
        share = lane_work(work, lane)
        for b in range(lane, rows.size, lanes):
            if check:
                nan, neg_inf, top, _ = scan_range(costs, offsets[b], offsets[b + 1], None, 0)
                top_bits[b] = top
                holds[b] = nan > 0 or neg_inf > 0
                if holds[b] or float_of_bits(top) > limits[b]:
                    continue
            start = ticks()
            s, steps = _solve_item(costs, offsets[b], rows[b], cols[b], row_to_col, u, v, row_offsets[b],
                                   col_offsets[b])
            end = ticks()
            status[b] = s
            iterations[b] = steps
            item_ticks[b] = end - start if start >= 0 and end >= start else -1
            code, i, j = _certify_item(costs, offsets[b], rows[b], cols[b], row_to_col, u, v, row_offsets[b],
                                       col_offsets[b], s != 0, value[b:b + 1], gap[b:b + 1], tol[b:b + 1],
                                       doubt[b:b + 1], share)
            done = ticks()
            reason[b] = code
            at_row[b] = i
            at_col[b] = j
            certify_ticks[b] = done - end if end >= 0 and done >= end else -1


def prepare_host(costs):
    """solvers.batch.inputs.prepare_batch with the check left to solve_packed, which runs it on each
    item right before solving it (one read of the costs from memory for the check, the solve and the
    certificate)."""
    from .inputs import prepare_batch
    return prepare_batch(costs, scan=lambda packed: None)


def solve_packed(packed: PackedBatch) -> PackedSolution:
    """Solve every item of ``packed`` on the CPU cores (the backend ``cpu``) and certify each one
    right after its solve (PackedSolution.certificate); an ``unchecked`` batch is checked item by
    item first and refused as inputs.refuse_bad_items words it."""
    from .certify_batch import empty_outcome, workspace
    from .inputs import cost_limits, refuse_bad_items
    count = packed.size
    row_to_col = np.empty(int(packed.row_offsets[-1]), dtype=np.int64)
    u = np.empty(int(packed.row_offsets[-1]), dtype=np.float64)
    v = np.empty(int(packed.col_offsets[-1]), dtype=np.float64)
    iterations = np.zeros(count, dtype=np.int64)
    status = np.zeros(count, dtype=np.int8)
    item_ticks = np.full(count, -1, dtype=np.int64)
    certify_ticks = np.full(count, -1, dtype=np.int64)
    check = bool(getattr(packed, "unchecked", False))
    holds = np.zeros(count, dtype=np.int8)
    top_bits = np.zeros(count, dtype=np.uint64)
    outcome = empty_outcome(count)
    if count:
        _solve_all(packed.costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                   packed.col_offsets, row_to_col, u, v, iterations, status, item_ticks, check, cost_limits(packed),
                   holds, top_bits, outcome["reason"], outcome["at_row"], outcome["at_col"], outcome["value"],
                   outcome["gap"], outcome["tol"], outcome["doubt"], certify_ticks,
                   workspace(packed.rows, packed.cols, count))
    if check:  # the check's verdict, worded as the checking pass words it
        bad, where = first_bad_entries(packed.costs, packed.offsets, holds)  # reads only those items
        refuse_bad_items(packed, bad, where, top_bits.view(np.float64))
    rate = ticks_per_second()
    seconds = np.where(item_ticks >= 0, item_ticks / rate, np.nan)
    certify = certify_ticks[certify_ticks >= 0].sum() / rate if np.any(certify_ticks >= 0) else 0.0
    return PackedSolution(row_to_col, u, v, iterations, status, seconds, certificate=outcome,
                          certify_seconds=float(certify))
