"""Settling a near tie exactly: is some assignment cheaper than the answer, in exact arithmetic?

A certificate whose gap G leaves room for another assignment (solvers.near_ties) used to ask scipy
for an independent optimum; but scipy rounds too, and beside a cost of 1e18 (or among subnormals)
it can miss a difference of 1, so "scipy finds nothing cheaper" proved nothing. Here the question is
answered in integers. Every float is a binary fraction, so the costs, u and v scaled by one power of
two are exact Python integers. With the exactly feasible dual (u, v) (slacks s_ij = c_ij - u_i - v_j
>= 0; v <= 0 when rows < cols), any assignment X costs the dual's objective plus the slacks of its
pairs and -v of the columns it leaves free, so an X cheaper than the answer A uses only pairs of
slack below G. On those pairs, X differs from A by moves: row i leaves column A(i) for column j
(slack s_ij - s_iA(i)); a wide problem's column is released (-v_c) or taken while free (+v_j). A
cheaper X exists exactly when the graph of those moves (one node per column, and one for "free")
has a cycle of negative weight: Bellman-Ford over integers finds it, with no rounding anywhere.

A tall problem (rows > cols) is the same problem transposed (u <= 0 there takes v's part).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit

from .dual_steps import NO_LOW_BIT
from .near_ties import least_low_bit, quick_candidate

MAX_MOVES = 200_000  # candidate pairs past which the question is left open (Python work, ~13 us each)
MAX_WORK = 20_000_000  # nodes x moves: Bellman-Ford's worst case in Python (seconds), past which it is left open


def _scaled(x: float, e: int) -> int:
    """x / 2^e exactly (x a multiple of 2^e)."""
    value = Fraction(x) / (Fraction(2) ** e)
    assert value.denominator == 1
    return value.numerator


def cheaper_by(pairs_i: np.ndarray, pairs_j: np.ndarray, pairs_c: np.ndarray, n: int, m: int,
               row_match: np.ndarray, u: np.ndarray, v: np.ndarray, gap: float) -> float | None:
    """How much less than ``row_match`` some assignment costs, exactly (the first cheaper one found,
    not necessarily the cheapest; 0.0: nothing is cheaper), or None when the question is too large
    here (checked before any work). ``pairs_*``: the allowed pairs (row,
    column, cost) that may be within ``gap`` of tight (the rest are certainly not), the assigned
    pairs among them; (u, v) exactly feasible with the rectangular sign condition, ``gap`` an upper
    bound on the answer's cost minus the dual's objective."""
    row_match = np.asarray(row_match, dtype=np.int64)
    if pairs_i.size > MAX_MOVES or (max(n, m) + 2) * max(pairs_i.size + max(n, m), 1) > MAX_WORK:
        return None
    if n > m:  # transposed: columns become rows; u <= 0 takes v's part
        col_match = np.full(m, -1, dtype=np.int64)
        assigned = np.flatnonzero(row_match >= 0)
        col_match[row_match[assigned]] = assigned
        return cheaper_by(pairs_j, pairs_i, pairs_c, m, n, col_match, v, u, gap)
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    e = min(least_low_bit(np.ascontiguousarray(pairs_c, dtype=np.float64)), least_low_bit(u), least_low_bit(v))
    if e >= NO_LOW_BIT:
        return 0.0  # every cost and potential is 0: every assignment costs 0
    limit = Fraction(gap) / (Fraction(2) ** e)
    big_u = [_scaled(x, e) for x in u.tolist()]
    big_v = [_scaled(x, e) for x in v.tolist()]
    own = {}  # row -> slack of its assigned pair
    moves = []  # (from column, to column, weight)
    for i, j, c in zip(pairs_i.tolist(), pairs_j.tolist(), pairs_c.tolist()):
        if row_match[i] == j:
            own[i] = _scaled(c, e) - big_u[i] - big_v[j]
    for i, j, c in zip(pairs_i.tolist(), pairs_j.tolist(), pairs_c.tolist()):
        if row_match[i] == j or row_match[i] < 0:
            continue
        slack = _scaled(c, e) - big_u[i] - big_v[j]
        if slack < limit:
            moves.append((int(row_match[i]), j, slack - own[i]))
    free = m  # the node for "free"
    if n < m:
        used = set(row_match[row_match >= 0].tolist())
        for c in range(m):
            if c in used:
                if -big_v[c] < limit:
                    moves.append((free, c, -big_v[c]))  # release c
            else:
                moves.append((c, free, big_v[c]))  # take the free column c
    nodes = m + 1
    if len(moves) > MAX_MOVES or nodes * max(len(moves), 1) > MAX_WORK:
        return None
    dist = [0] * nodes
    before = [-1] * nodes
    changed = -1
    for _ in range(nodes):
        changed = -1
        for a, b, w in moves:
            if dist[a] + w < dist[b]:
                dist[b] = dist[a] + w
                before[b] = a
                changed = b
        if changed < 0:
            return 0.0
    node = changed
    for _ in range(nodes):  # onto the cycle
        node = before[node]
    weights = {(a, b): w for a, b, w in moves}  # one move per arc: column a has one row
    total, at = 0, node
    while True:
        total += weights[(before[at], at)]
        at = before[at]
        if at == node:
            break
    return float(-Fraction(total) * (Fraction(2) ** e))


@njit(cache=True)
def _mark_candidates(row_ptr, col_ind, dense, cost, u, v, row_match, gap, keep):
    """keep[k]: entry k is its row's assigned pair or a quick_candidate (forbidden pairs never)."""
    for i in range(row_ptr.size - 1):
        for k in range(row_ptr[i], row_ptr[i + 1]):
            j = k - row_ptr[i] if dense else col_ind[k]
            keep[k] = cost[k] != np.inf and (row_match[i] == j or quick_candidate(cost[k], v[j], u[i], gap))


def candidate_pairs(row_ptr, col_ind, dense: bool, cost: np.ndarray, u, v, row_match, gap: float):
    """The allowed pairs that may be within ``gap`` of tight, and every assigned pair: (rows,
    columns, costs). A pair is left out only when near_ties.quick_candidate clears it."""
    keep = np.zeros(cost.size, dtype=np.bool_)
    _mark_candidates(row_ptr, col_ind, dense, cost, np.ascontiguousarray(u, dtype=np.float64),
                     np.ascontiguousarray(v, dtype=np.float64), np.ascontiguousarray(row_match, dtype=np.int64),
                     float(gap), keep)
    at = np.flatnonzero(keep)
    rows = np.searchsorted(row_ptr, at, side="right") - 1
    cols = at - np.asarray(row_ptr)[rows] if dense else np.asarray(col_ind, dtype=np.int64)[at]
    return rows.astype(np.int64), cols.astype(np.int64), np.asarray(cost, dtype=np.float64)[at]
