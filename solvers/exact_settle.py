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

import math
from fractions import Fraction

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .dual_steps import NO_LOW_BIT
from .near_ties import least_low_bit, quick_candidate

MAX_MOVES = 200_000  # candidate pairs past which the question is left open (Python work, ~13 us each)
SCALED_BITS = 60  # scaled costs and potentials below 2^60: a slack (three terms) and a move (two) fit int64
INT64_LOWEST, INT64_HIGHEST = np.int64(np.iinfo(np.int64).min), np.int64(np.iinfo(np.int64).max)
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
    u = np.ascontiguousarray(u, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    pairs_c = np.ascontiguousarray(pairs_c, dtype=np.float64)
    e = min(least_low_bit(pairs_c), least_low_bit(u), least_low_bit(v))
    if e >= NO_LOW_BIT:
        return 0.0  # every cost and potential is 0: every assignment costs 0
    limit = Fraction(gap) / (Fraction(2) ** e)
    if _fits_int64(e, pairs_c, u, v):
        settled, less = _settle_int64(pairs_i, pairs_j, pairs_c, n, m, row_match, u, v, e, limit)
        if settled:
            return less
    return _settle_in_python(pairs_i, pairs_j, pairs_c, n, m, row_match, u, v, e, limit)


def _fits_int64(e: int, *arrays: np.ndarray) -> bool:
    """Whether every value / 2^e is below 2^SCALED_BITS in magnitude (by exponents: no overflow)."""
    top = max((float(np.max(np.abs(a))) for a in arrays if a.size), default=0.0)
    return top == 0.0 or math.frexp(top)[1] - e <= SCALED_BITS


def _settle_int64(pairs_i, pairs_j, pairs_c, n, m, row_match, u, v, e, limit):
    """(True, cheaper_by's answer) computed in int64: the same moves in the same order as
    _settle_in_python, so the same answer. (False, None) where a walk's weight could overflow."""
    ceiling = min(-((-limit.numerator) // limit.denominator), 1 << 62)  # slack < limit <=> slack < ceil(limit)
    moves_from, moves_to, weights = _moves(
        np.ascontiguousarray(pairs_i, dtype=np.int64), np.ascontiguousarray(pairs_j, dtype=np.int64),
        _scaled_array(pairs_c, e), n, m, np.ascontiguousarray(row_match), _scaled_array(u, e), _scaled_array(v, e),
        ceiling)
    nodes = m + 1
    if len(weights) > MAX_MOVES or nodes * max(len(weights), 1) > MAX_WORK:
        return True, None  # too large to settle here, as in _settle_in_python
    within, total = _negative_cycle_weight(moves_from, moves_to, weights, nodes)
    if not within:
        return False, None
    return True, (0.0 if total == 0 else float(-Fraction(int(total)) * (Fraction(2) ** e)))


@njit(cache=True)
def _scaled_array(x, e):
    """x / 2^e exactly, as int64 (x multiples of 2^e below 2^SCALED_BITS of it: _fits_int64)."""
    out = np.empty(x.size, dtype=np.int64)
    for k in range(x.size):
        out[k] = np.int64(math.ldexp(x[k], -e))
    return out


@njit(cache=True)
def _moves(pairs_i, pairs_j, c, n, m, row_match, u, v, ceiling):
    """The moves of _settle_in_python's graph, as (from, to, weight) arrays in the same order."""
    own = np.zeros(n, dtype=np.int64)
    for k in range(pairs_i.size):
        i, j = pairs_i[k], pairs_j[k]
        if row_match[i] == j:
            own[i] = c[k] - u[i] - v[j]
    free = m
    used = np.zeros(m, dtype=np.bool_)
    for i in range(n):
        if row_match[i] >= 0:
            used[row_match[i]] = True
    most = pairs_i.size + (m if n < m else 0)
    moves_from = np.empty(most, dtype=np.int64)
    moves_to = np.empty(most, dtype=np.int64)
    weights = np.empty(most, dtype=np.int64)
    count = 0
    for k in range(pairs_i.size):
        i, j = pairs_i[k], pairs_j[k]
        if row_match[i] == j or row_match[i] < 0:
            continue
        slack = c[k] - u[i] - v[j]
        if slack < ceiling:
            moves_from[count], moves_to[count], weights[count] = row_match[i], j, slack - own[i]
            count += 1
    if n < m:
        for col in range(m):
            if used[col]:
                if -v[col] < ceiling:
                    moves_from[count], moves_to[count], weights[count] = free, col, -v[col]
                    count += 1
            else:
                moves_from[count], moves_to[count], weights[count] = col, free, v[col]
                count += 1
    return moves_from[:count], moves_to[:count], weights[:count]


@register_jitable
def _outside_int64(a, b):
    """Whether a + b would leave int64's range."""
    return (b < 0 and a < INT64_LOWEST - b) or (b > 0 and a > INT64_HIGHEST - b)


@njit(cache=True)
def _negative_cycle_weight(moves_from, moves_to, weights, nodes):
    """Bellman-Ford as in _settle_in_python: (True, the weight of the negative cycle it finds, 0 if
    none), or (False, 0) as soon as a distance or the cycle's weight would leave int64."""
    dist = np.zeros(nodes, dtype=np.int64)
    before = np.full(nodes, -1, dtype=np.int64)
    arc_weight = np.zeros(nodes, dtype=np.int64)  # the weight of the arc before[b] -> b
    changed = -1
    for _ in range(nodes):
        changed = -1
        for k in range(weights.size):
            a, b, w = moves_from[k], moves_to[k], weights[k]
            if _outside_int64(dist[a], w):
                return False, 0
            if dist[a] + w < dist[b]:
                dist[b] = dist[a] + w
                before[b] = a
                arc_weight[b] = w
                changed = b
        if changed < 0:
            return True, 0
    node = changed
    for _ in range(nodes):  # onto the cycle
        node = before[node]
    total, at = 0, node
    while True:
        if _outside_int64(total, arc_weight[at]):
            return False, 0
        total += arc_weight[at]
        at = before[at]
        if at == node:
            break
    return True, total


def _settle_in_python(pairs_i, pairs_j, pairs_c, n, m, row_match, u, v, e, limit):
    """cheaper_by in Python's unbounded integers, for values too far apart for int64 (1e300 beside
    subnormals): seconds where _settle_int64 takes milliseconds."""
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


def warm() -> None:
    """Compile the settle's passes on a 2 x 2 swap (a near tie's certificate reaches them)."""
    rows, cols = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    costs = np.array([0.0, 1.0, 1.0, 0.0])
    candidate_pairs(np.array([0, 2, 4]), cols, False, costs, np.zeros(2), np.zeros(2), np.array([1, 0]), 2.0)
    cheaper_by(rows, cols, costs, 2, 2, np.array([1, 0]), np.zeros(2), np.zeros(2), 2.0)
