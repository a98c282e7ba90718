"""The batch certificate: every item's answer proven (or refuted) from its costs and the answer alone,
items spread over the cores. It shares no code with any batch solver.

Per item (in the packed, oriented layout: rows <= cols), for an answer claimed solved:

1. the assignment is a matching of every row to a distinct column through an allowed (finite) pair;
2. the solver's duals pass the LP's conditions within the item's tolerance ``tol``: u_i + v_j <= c_ij
   on allowed pairs, equality on assigned pairs, and for rows < cols v_j <= 0 with v_j = 0 on the
   unassigned columns (complementary slackness);
3. optimality is proven exactly, whatever rounding the solver did: its column potentials v (shifted
   to v <= 0 for rows < cols) are completed by u_i = min_j (c_ij - v_j) rounded *down* per entry
   (solvers.dual_steps), a dual feasible exactly, whose objective bounds the optimum from below.
   The gap value - (sum u + sum v) is the sum over rows of c_ij - u_i - v_j (assigned j) and over
   free columns of -v_j: each term is split into three floats exactly (TwoSum), and the sum is
   bounded from above with its rounding error (below). Proven when that upper bound is <= tol, or,
   for integer costs whose sums stay below 2^53, when it is < 1 (every assignment then costs an
   integer).

``tol`` = 16 * (rows + 1) * (epsilon * (2 * sum |assigned costs| + max |finite cost|) + TINY): the
rounding the solvers' float steps may leave, scaled by the item's own data (1e-20 and 1e300 alike;
the solver's duals cannot widen it). TINY, the smallest subnormal, is the rounding unit of
subnormal numbers (float arithmetic's absolute error term): without it, costs that are all
subnormal had a tolerance of 0, below the bound's own slack, and could never be proven. For
integer costs it is at most 0.5.

The allowance forgives rounding, and could forgive a real difference with it (17 beside a cost of
1e18). solvers.near_ties tells which: when the pairs within the gap of tight (and the lines whose
potential is within it) leave no room for another assignment, the answer is the only optimum,
exactly, with or without the allowance; so it is when the costs of those pairs and of the
answer's are all multiples of a power of two above the gap (near_ties.cost_step), as another
assignment could only change the cost by a multiple of it. A proof that rests on the allowance
alone is marked ``doubt`` and settled in exact arithmetic (recheck_doubtful_proofs).

An answer claimed infeasible is confirmed by the certificate's own maximum matching on the allowed
pairs (augmenting paths): fewer matched rows than rows proves that no complete assignment exists.

Bounding a float sum from above: s_k = fl(s_{k-1} + x_k) with the exact error e_k (TwoSum), so the
exact sum is s_N + sum e_k; the e_k are summed in floats (error <= N * u * sum |e_k|), and G =
fl(s_N + E) (error <= u |G|). Twice those bounds, plus a few subnormals for products that
underflow, are added and the result rounded up: never below the exact sum.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from ..dual_steps import INF_BITS, INF_KEY, MAGNITUDE_BITS, bits_of, dual_size, float_of_bits, floor_key, order_key
from ..near_ties import CAP, NO_LOW_BIT, cost_step, room_for_another, settle_row

EPS = float(np.finfo(np.float64).eps)
ROUNDING = 16
TINY = 5e-324
INTEGRAL_LIMIT = 2.0 ** 53

# reasons (per item); 0 = proven
PROVEN = 0
REASONS = {
    1: "row {i} is not assigned to a column of the problem",
    2: "column {j} is assigned to more than one row",
    3: "row {i} is assigned to column {j}, a forbidden pair",
    4: "the duals break u_i + v_j <= c_ij at row {i}, column {j}",
    5: "the duals are not tight (u_i + v_j != c_ij) on the assigned pair of row {i} and column {j}",
    6: "column {j} has a positive potential, or an unassigned column a nonzero one",
    7: "the duals are not finite (row {i}, column {j})",
    8: "the duals do not prove optimality: cost - dual bound = {gap:.6g} > tolerance {tol:.3g}",
    9: "reported infeasible, but the allowed pairs hold a complete assignment",
    10: "infeasible: the allowed pairs match at most {i} of the rows",
    11: "the costs on the GPU changed during the solve (their checksum differs), so nothing is proven",
    12: "a cheaper assignment exists: one found in exact arithmetic costs {gap:.6g} less, a difference the "
        "rounding allowance would have forgiven",
    13: "the rounding allowance leaves room for a cheaper assignment, and it could not be ruled out in exact "
        "arithmetic",
}
INFEASIBLE_PROVEN = 10
COSTS_CHANGED = 11
CHEAPER_FOUND = 12
NOT_SETTLED = 13


@njit(cache=True)
def _two_sum(a, b):
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@njit(cache=True)
def _add(x, s, e_sum, e_abs):
    """One term into the running (s, sum of exact errors, sum of their magnitudes)."""
    s, e = _two_sum(s, x)
    return s, e_sum + e, e_abs + abs(e)


@njit(cache=True)
def _sum_up(s, e_sum, e_abs, count):
    """An upper bound of the exact sum s + (the exact errors summed in e_sum); see the docstring."""
    g = s + e_sum
    bound = 2.0 * (EPS * abs(g) + (count + 2) * EPS * e_abs) + 8 * TINY
    return math.nextafter(g + bound, math.inf)


@njit(cache=True)
def _max_matching(costs, base, n, m):
    """Size of a maximum matching of the rows on the allowed pairs (DFS augmenting paths)."""
    col_to_row = np.full(m, -1, dtype=np.int64)
    row_next = np.zeros(n, dtype=np.int64)  # the next column each row on the stack tries
    stack = np.empty(n, dtype=np.int64)
    via = np.empty(n, dtype=np.int64)  # the column through which a stacked row was reached
    seen = np.zeros(m, dtype=np.int64)
    matched = 0
    for root in range(n):
        stamp = root + 1
        depth = 0
        stack[0] = root
        row_next[root] = 0
        found = -1
        while depth >= 0 and found < 0:
            i = stack[depth]
            advanced = False
            while row_next[i] < m:
                j = row_next[i]
                row_next[i] += 1
                if seen[j] == stamp or costs[base + i * m + j] == np.inf:
                    continue
                seen[j] = stamp
                if col_to_row[j] == -1:
                    found = j
                    break
                k = col_to_row[j]
                depth += 1
                stack[depth] = k
                via[depth] = j
                row_next[k] = 0
                advanced = True
                break
            if found >= 0:
                break
            if not advanced:
                depth -= 1
        if found >= 0:
            j = found
            while depth >= 0:  # flip the path back to the root
                i = stack[depth]
                col_to_row[j] = i
                j = via[depth] if depth > 0 else -1
                depth -= 1
            matched += 1
    return matched


@njit(cache=True)
def _certify_item(costs, base, n, m, row_to_col, u, v, ro, co, claimed_infeasible, out_value, out_gap, out_tol,
                  out_doubt, work):
    """(reason code, row, column) of item; writes its value, gap bound and tolerance, and
    ``out_doubt`` 1 when only the allowance proves it (the module docstring: the host settles it in
    exact arithmetic). ``work``: one lane's share of workspace(...)'s arrays
    (lane_work), its scratch."""
    if claimed_infeasible:
        size = _max_matching(costs, base, n, m)
        if size < n:
            return INFEASIBLE_PROVEN, size, -1
        return 9, -1, -1
    owner = np.full(m, -1, dtype=np.int64)
    # the largest finite |c| and the count of finite non-integers, on the bits with no branch (a
    # finite magnitude orders as its bits do), so the compiler vectorises the pass
    top_bits = np.uint64(0)
    fractions = 0
    for k in range(n * m):
        c = np.float64(costs[base + k])
        size = bits_of(c) & MAGNITUDE_BITS
        finite = size < INF_BITS
        top_bits = max(top_bits, size if finite else np.uint64(0))
        fractions += finite and c != np.floor(c)
    top = float_of_bits(top_bits)
    integral = fractions == 0 and top * max(n, 1) < INTEGRAL_LIMIT
    # 1. a matching of every row through allowed pairs; the value and its magnitude
    s, e_sum, e_abs = 0.0, 0.0, 0.0
    magnitude = 0.0
    for i in range(n):
        j = row_to_col[ro + i]
        if j < 0 or j >= m:
            return 1, i, -1
        if owner[j] >= 0:
            return 2, i, j
        owner[j] = i
        c = np.float64(costs[base + i * m + j])
        if c == np.inf:
            return 3, i, j
        s, e_sum, e_abs = _add(c, s, e_sum, e_abs)
        magnitude += abs(c)
    out_value[0] = s + e_sum
    # rounding allowance: the assigned costs and the duals' sizes (a check u_i + v_j - c_ij rounds at
    # the size of u_i + v_j where it is near 0), never the largest cost anywhere in the item, which an
    # unassigned "big M" entry would make as loose as it likes
    tol = ROUNDING * (n + 1) * (EPS * (2.0 * magnitude + dual_size(u, v, ro, co, n, m)) + TINY)
    if integral:
        tol = min(tol, 0.5)
    out_tol[0] = tol
    if not tol < np.inf:  # duals so large that their sizes overflow: nothing can be checked within them
        return 7, -1, -1
    # 2. the solver's duals within tol
    shift = 0.0
    for j in range(m):
        vj = v[co + j]
        if not (abs(vj) < np.inf):
            return 7, -1, j
        if n < m:
            if vj > tol or (owner[j] < 0 and abs(vj) > tol):
                return 6, -1, j
            shift = max(shift, vj)
    for i in range(n):
        if not (abs(u[ro + i]) < np.inf):
            return 7, i, -1
    # 3. the exactly feasible dual from v (shifted <= 0 for rows < cols): u_i rounded down, and
    #    the solver's (u, v) checked on the same pass over the costs
    s, e_sum, e_abs = 0.0, 0.0, 0.0
    count = 0
    floors = work[0][:n]
    for i in range(n):
        row = base + i * m
        ui = u[ro + i]
        # one straight loop over the row, which the compiler vectorises: a count of violations
        # (a forbidden pair's is -inf, never counted) and the floor as an integer minimum of keys
        # (and a count of the pairs that might be within the gap of tight: see item_room)
        violations = 0
        close = 0
        first = m
        last = -1
        key = INF_KEY
        for j in range(m):
            c = np.float64(costs[row + j])
            vj = v[co + j]
            violations += ui + vj - c > tol
            near_pair = ui + vj - c > -3.0 * tol
            close += near_pair
            first = min(first, j if near_pair else m)
            last = max(last, j if near_pair else -1)
            key = min(key, floor_key(c, vj - shift))
        if violations:
            for j in range(m):  # the first, for the reason
                if ui + v[co + j] - np.float64(costs[row + j]) > tol:
                    return 4, i, j
        floor = float_of_bits(order_key(key))
        work[1][i] = close
        work[2][i, 0] = first
        work[2][i, 1] = last
        j = row_to_col[ro + i]
        c = np.float64(costs[row + j])
        if abs(c - ui - v[co + j]) > tol:
            return 5, i, j
        floors[i] = floor
        d, e1 = _two_sum(c, -(v[co + j] - shift))  # c - v_j - floor, as three floats exactly
        f, e2 = _two_sum(d, -floor)
        s, e_sum, e_abs = _add(f, s, e_sum, e_abs)
        s, e_sum, e_abs = _add(e2, s, e_sum, e_abs)
        s, e_sum, e_abs = _add(e1, s, e_sum, e_abs)
        count += 3
    if n < m:
        for j in range(m):
            if owner[j] < 0:
                s, e_sum, e_abs = _add(-(v[co + j] - shift), s, e_sum, e_abs)
                count += 1
    gap = _sum_up(s, e_sum, e_abs, count)
    out_gap[0] = gap
    if not gap < np.inf:  # a difference overflowed (NaN or +inf): nothing is proven
        return 8, -1, -1
    if integral and gap < 1.0:
        return PROVEN, -1, -1  # every assignment costs an integer: no gap at all
    if not item_room(costs, base, n, m, row_to_col[ro:ro + n], floors, v[co:co + m], shift, gap, gap > tol,
                     work[1][:n], work[2][:n], work[3][:m], work[4][:, :m]):
        return PROVEN, -1, -1  # no other assignment within the gap: the only optimum, exactly
    if gap <= tol:
        out_doubt[0] = 1  # proven by the allowance alone: the host settles it exactly
        return PROVEN, -1, -1
    return 8, -1, -1


@njit(cache=True)
def item_room(costs, base, n, m, mates, floors, v, shift, gap, every_row, count, near, releasable, scratch):
    """near_ties.room_for_another for one item (rows <= cols) of the dual (floors, v - shift);
    ``count``, ``near`` (holding the certificate pass's close pairs: near_ties.settle_row),
    ``releasable`` and ``scratch`` (3 x m): its workspace. ``every_row``: the gap is above tol."""
    low = NO_LOW_BIT
    for i in range(n):
        low = min(low, settle_row(costs, base + i * m, m, mates[i], v, shift, floors[i], gap, every_row, count, near, i))
    if gap < cost_step(low):
        return False  # what another assignment could change costs multiples of a step above the gap
    for j in range(m):
        releasable[j] = -(v[j] - shift) < gap
    return room_for_another(n, m, mates, count, near, releasable, releasable, scratch[0], scratch[1], scratch[2])


def workspace(rows, cols, items: int) -> tuple:
    """The certificate's scratch, one share per lane (as many lanes as threads, at most one per
    item), each for the largest item (``rows``, ``cols``: the items' row and column counts): each
    row's rounded-down u_i, its close-pair count and near-tight columns, each column's releasable
    flag, the near-tie search's three column arrays. Made once, not per item."""
    lanes = max(1, min(numba.get_num_threads(), items))
    n = max(int(np.max(rows, initial=0)), 1)
    m = max(int(np.max(cols, initial=0)), 1)
    return (np.empty((lanes, n)), np.empty((lanes, n), dtype=np.int64), np.empty((lanes, n, CAP), dtype=np.int32),
            np.empty((lanes, m), dtype=np.bool_), np.empty((lanes, 3, m), dtype=np.int64))


@njit(cache=True)
def lane_work(work, lane):
    """Lane ``lane``'s share of workspace(...)."""
    return work[0][lane], work[1][lane], work[2][lane], work[3][lane], work[4][lane]


@njit(cache=True, parallel=True, nogil=True)
def _certify_all(costs, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, status, reason, at_row,
                 at_col, value, gap, tol, doubt, work):
    lanes = work[0].shape[0]
    for lane in prange(lanes):  # items dealt to the lanes in turn, each lane with its own scratch
        share = lane_work(work, lane)
        for b in range(lane, rows.size, lanes):
            code, i, j = _certify_item(costs, offsets[b], rows[b], cols[b], row_to_col, u, v, row_offsets[b],
                                       col_offsets[b], status[b] != 0, value[b:b + 1], gap[b:b + 1], tol[b:b + 1],
                                       doubt[b:b + 1], share)
            reason[b] = code
            at_row[b] = i
            at_col[b] = j


def certify_packed(packed, solution):
    """Certify every item of a PackedSolution against its PackedBatch. Returns a dict of per-item
    arrays: reason (int8, 0 = proven optimal, INFEASIBLE_PROVEN = infeasibility confirmed, else
    REASONS), at_row / at_col (where, in the oriented item; -1 if none), value (the assignment's
    cost, summed with its rounding error compensated), gap (the proven upper bound of value - optimum;
    nan where not computed) and tol."""
    out = empty_outcome(packed.size)
    if packed.size:
        _certify_all(packed.costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets, packed.col_offsets,
                     np.asarray(solution.row_to_col, dtype=np.int64), np.asarray(solution.u, dtype=np.float64),
                     np.asarray(solution.v, dtype=np.float64), np.asarray(solution.status, dtype=np.int8),
                     out["reason"], out["at_row"], out["at_col"], out["value"], out["gap"], out["tol"], out["doubt"],
                     workspace(packed.rows, packed.cols, packed.size))
    return out


def empty_outcome(count: int) -> dict:
    """certify_packed's per-item arrays before any item is checked (the GPU's certificate fills the same)."""
    return {"reason": np.zeros(count, dtype=np.int8), "at_row": np.full(count, -1, dtype=np.int64),
            "at_col": np.full(count, -1, dtype=np.int64), "value": np.full(count, np.nan),
            "gap": np.full(count, np.nan), "tol": np.full(count, np.nan), "doubt": np.zeros(count, dtype=np.int8)}


def recheck_doubtful_proofs(packed, solution, checked: dict) -> dict:
    """The proofs by the allowance alone (``doubt``: room for another assignment within the gap, see
    the module docstring: a near tie, or a difference of 17 forgiven beside a cost of 1e18) are
    settled by the single-matrix certificate on that item with the solver's duals, which settles
    near ties in exact integers (solvers.exact_settle): an exactly cheaper assignment makes the item
    CHEAPER_FOUND, its gap what that one saves (the optimum may save more); an item it cannot settle
    is NOT_SETTLED. ``checked`` is changed in place and returned. ``packed``'s costs may be on a GPU: only the items rechecked are
    copied back."""
    reason, gap = checked["reason"], checked["gap"]
    doubtful = np.flatnonzero((reason == PROVEN) & (checked["doubt"] != 0))
    if not doubtful.size:
        return checked
    from ..certify import certify_assignment
    from ..problems import CostMatrix
    rows = np.asarray(packed.rows)
    row_to_col, u, v = (np.asarray(getattr(solution, k)) for k in ("row_to_col", "u", "v"))
    for b in doubtful:
        n, m, first = int(rows[b]), int(packed.cols[b]), int(packed.offsets[b])
        item = packed.costs[first:first + n * m]
        item = np.asarray(item.copy_to_host() if hasattr(item, "copy_to_host") else item, dtype=np.float64)
        ro, co = int(packed.row_offsets[b]), int(packed.col_offsets[b])
        cert = certify_assignment(CostMatrix.from_array(item.reshape(n, m), copy=False), row_to_col[ro:ro + n],
                                  duals={"u": u[ro:ro + n], "v": v[co:co + m]})
        if cert.optimal:
            continue
        if cert.reason == "a cheaper assignment exists":
            reason[b], gap[b] = CHEAPER_FOUND, cert.witness.get("cheaper_by", cert.gap)
        else:
            reason[b] = NOT_SETTLED
    return checked


def explain(code: int, i: int, j: int, gap: float, tol: float) -> str:
    """The plain-language reason for an item's certificate code (row and column in the item's own
    orientation: the caller swaps them back for a transposed item)."""
    if code == PROVEN:
        return "certified optimal"
    return REASONS[int(code)].format(i=i, j=j, gap=gap, tol=tol)
