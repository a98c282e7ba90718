"""Column potentials of a dense assignment by Gauss-Seidel sweeps: the certificate's first, fast try.

The shortest distances on the assignment's residual graph (the model of certify._spfa_potentials:
rows, columns and a hub) are the potentials that prove an optimal assignment optimal. SPFA finds
them pop by pop, each pop a branchy scan of one row; on a dense matrix that scan is the whole cost.
Here the same relaxations run as sweeps over the rows in order, each row rescanned only when its
own distance has dropped since its last scan, and each scan a straight loop over the row that the
compiler vectorises (no queue, no predecessors).

Started from zero, the sweeps still scan each row about ten times on random matrices (a 1500 x 1500
one: 8 to 10 scans per row), because shortest paths there run 30-40 arcs deep. So they start from
the distances over each row's cheapest arcs (about CANDIDATES a row, collected in one pass over the
matrix on all cores), which cost a few percent of a dense scan to settle. Those distances are path
lengths of the full graph, so dense sweeps from them converge to the same fixpoint. On random
matrices they are that fixpoint already: solvers.certify tries them first, and sweeps every pair
only when they leave a gap.

Nothing here is trusted: the potentials only seed the exactly checked dual of solvers.certify, and
when the sweeps do not settle within MAX_SCANS_PER_ROW scans per row (a negative cycle, i.e. a
cheaper assignment, or round-off that keeps lowering a distance) the caller falls back to SPFA,
which finds and confirms cycles.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

MAX_SCANS_PER_ROW = 32  # then the sweeps give up and SPFA decides
CANDIDATES = 16         # arcs per row the start's threshold aims at (the median over sampled rows)
CANDIDATE_CAP = 64      # arcs kept per row at most: ties past the threshold are cut off here
SAMPLE_ROWS = 32        # rows whose arcs set the threshold
START_MIN_COLUMNS = 2 * CANDIDATE_CAP  # narrower rows: the dense sweeps alone
# where the start pays (2-core machine, uniform random costs): square 1000 x 1000 1.2 ms against 2.7 ms
# for the dense sweeps from zero, 500 x 500 even, 200 x 200 0.18 against 0.06 ms (the sample and the
# thread pool's start are fixed costs). A rectangle's free columns reach every column through the hub
# at cost 0, which keeps shortest paths short: 500 x 3000 0.83 against 0.55 ms, 1000 x 1100 even.
START_MIN_SIDE = 512    # both sides at least this
START_MAX_ASPECT = 1.1  # the long side at most this many times the short one


@njit(cache=True)
def _sweeps(costs, row_match, relative, max_scans, v, hub, arc_cols, arc_costs, arc_counts, on_arcs):
    """Sweeps from the potentials ``v`` (changed in place) and ``hub``, over the dense rows of
    ``costs`` or, when ``on_arcs``, over each row's ``arc_counts[i]`` arcs in ``arc_cols`` /
    ``arc_costs``: (hub, settled). ``settled`` False: more than ``max_scans`` row scans were needed."""
    n, m = costs.shape
    last = np.full(n, np.inf)  # each row's distance at its last scan (inf: never scanned)
    free_col = np.ones(m, dtype=np.bool_)
    for i in range(n):
        if row_match[i] >= 0:
            free_col[row_match[i]] = False
    scans = 0
    while True:
        changed = False
        for i in range(n):
            mate = row_match[i]
            if mate >= 0:
                d = v[mate] - costs[i, mate]  # the arc from its column: -c_i,mate
            else:
                d = hub  # a free row (rows > cols) hangs off the hub
            if n > m and d < hub:
                hub = d  # every row leads to the hub at cost 0
                changed = True
            if not d < last[i]:
                continue
            last[i] = d
            scans += 1
            if scans > max_scans:
                return hub, False
            if on_arcs:
                for k in range(arc_counts[i]):
                    j = arc_cols[i, k]
                    cand = d + arc_costs[i, k]
                    if j != mate and cand < v[j] - relative * abs(cand):
                        v[j] = cand
            else:
                row = costs[i]
                kept = v[mate] if mate >= 0 else 0.0
                for j in range(m):  # a straight select, so the compiler vectorises it
                    cand = d + row[j]
                    v[j] = cand if cand < v[j] - relative * abs(cand) else v[j]
                if mate >= 0:
                    v[mate] = kept  # the assigned pair is an arc the other way: no relaxation through it
            changed = True
        if n < m:  # free columns lead to the hub, the hub to every column (cost 0 both ways)
            for j in range(m):
                if free_col[j] and v[j] < hub:
                    hub = v[j]
            for j in range(m):
                if v[j] > hub:
                    v[j] = hub
                    changed = True
        if not changed:
            break
    return hub, True


@njit(cache=True, parallel=True)
def _cheapest_arcs(costs, row_match, threshold, arc_cols, arc_costs, arc_counts):
    """Each row's arcs costing at most ``threshold`` above its assigned pair (a free row: above its
    cheapest), the first CANDIDATE_CAP of them in column order, rows spread over the cores."""
    n, m = costs.shape
    cap = arc_cols.shape[1]
    for i in prange(n):
        row = costs[i]
        mate = row_match[i]
        if mate >= 0:
            base = row[mate]
        else:
            base = np.inf
            for j in range(m):
                base = min(base, row[j])
        limit = base + threshold
        count = 0
        for j in range(m):  # the branch is rarely taken, so it predicts well
            if row[j] <= limit:
                arc_cols[i, count] = j
                arc_costs[i, count] = row[j]
                count += 1
                if count == cap:
                    break
        arc_counts[i] = count


@njit(cache=True)
def _kth_excess(costs, row_match, sample, rank):
    """For each sampled (assigned) row, the rank-th smallest (from 0) of c_ij - c_i,mate over its
    pairs, kept in a small sorted buffer (an insertion is rare once it holds the cheapest)."""
    out = np.empty(sample.size)
    smallest = np.empty(rank + 1)
    for s in range(sample.size):
        i = sample[s]
        base = costs[i, row_match[i]]
        smallest[:] = np.inf
        for j in range(costs.shape[1]):
            x = costs[i, j] - base
            if x < smallest[rank]:
                k = rank
                while k > 0 and smallest[k - 1] > x:
                    smallest[k] = smallest[k - 1]
                    k -= 1
                smallest[k] = x
        out[s] = smallest[rank]
    return out


def _threshold(costs: np.ndarray, row_match: np.ndarray) -> float:
    """How far above its assigned pair a row's arc may cost and still be a candidate: the median,
    over up to SAMPLE_ROWS evenly spaced assigned rows, of the CANDIDATES-th smallest such excess
    (inf when the sampled rows have too few allowed pairs)."""
    assigned = np.flatnonzero(row_match >= 0)
    if not assigned.size:
        return np.inf
    sample = assigned[np.linspace(0, assigned.size - 1, min(SAMPLE_ROWS, assigned.size)).astype(np.int64)]
    kth = _kth_excess(costs, row_match, sample, min(CANDIDATES, costs.shape[1]) - 1)
    kth = kth[np.isfinite(kth)]
    return float(np.median(kth)) if kth.size else np.inf


def cheapest_arc_columns(costs: np.ndarray, row_match: np.ndarray, relative: float) -> np.ndarray | None:
    """Column potentials settled over each row's cheapest arcs (see the module docstring), for the
    complete assignment ``row_match``: on random matrices they already prove it optimal, and
    otherwise they start dense_columns. None where the start does not pay (see START_MIN_SIDE), or
    when the sweeps do not settle (the cheapest arcs hold a negative cycle: a cheaper assignment
    exists)."""
    n, m = costs.shape
    if m < START_MIN_COLUMNS or min(n, m) < START_MIN_SIDE or max(n, m) > START_MAX_ASPECT * min(n, m):
        return None
    arc_cols = np.empty((n, CANDIDATE_CAP), dtype=np.int64)
    arc_costs = np.empty((n, CANDIDATE_CAP))
    arc_counts = np.empty(n, dtype=np.int64)
    _cheapest_arcs(costs, row_match, _threshold(costs, row_match), arc_cols, arc_costs, arc_counts)
    v = np.zeros(m)
    hub, settled = _sweeps(costs, row_match, relative, _max_scans(n), v, 0.0, arc_cols, arc_costs, arc_counts, True)
    return _settled_columns(v, hub, settled)


def dense_columns(costs: np.ndarray, row_match: np.ndarray, relative: float,
                  start: np.ndarray | None = None) -> np.ndarray | None:
    """Column potentials for a complete assignment of a dense matrix, swept over every pair from
    ``start`` (cheapest_arc_columns' potentials; else zero), or None when the sweeps do not settle
    (the caller then runs SPFA). Shifting every potential by one constant changes no relaxation,
    so a start already taken relative to the hub begins with the hub at 0."""
    n, m = costs.shape
    v = np.zeros(m) if start is None else np.array(start, dtype=np.float64)
    no_arcs = np.empty((0, 0), dtype=np.int64), np.empty((0, 0)), np.empty(0, dtype=np.int64)
    hub, settled = _sweeps(costs, row_match, relative, _max_scans(n), v, 0.0, *no_arcs, False)
    return _settled_columns(v, hub, settled)


def _max_scans(rows: int) -> int:
    return MAX_SCANS_PER_ROW * max(rows, 1) + 64


def _settled_columns(v, hub, settled) -> np.ndarray | None:
    if not settled:
        return None
    columns = v - hub
    return columns if np.all(np.isfinite(columns)) else None


def warm() -> None:
    """Compile (or load) the start's passes: a warm-up on a small matrix never reaches them by size."""
    size = START_MIN_SIDE
    line = np.arange(size, dtype=np.float64)
    cheapest_arc_columns(np.abs(np.subtract.outer(line, line)), np.arange(size, dtype=np.int64), 1e-12)  # optimal: 0
