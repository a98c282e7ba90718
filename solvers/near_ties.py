"""Whether any other assignment could cost less than the gap a certificate proved: the exact test
behind every proof that leans on the rounding allowance (solvers.certify, the batch certificates on
the cpu and the GPU). Written once, for cpu loops and GPU kernels alike.

Take an exactly feasible dual (u, v) and an assignment A whose cost exceeds the dual's objective D
by at most G (the certificate's rounded-up gap). Every assignment X costs D plus the slacks
s_ij = c_ij - u_i - v_j >= 0 of its pairs, plus -v_j >= 0 for each column it leaves free (rows <
cols, v <= 0) or -u_i >= 0 for each row it leaves unassigned (rows > cols, u <= 0). An X cheaper than
A therefore uses only pairs of slack below G ("near-tight") and frees only columns (rows) whose term
is below G ("releasable"). Compared with A, such an X moves rows along near-tight pairs, around
cycles or along paths that start at a releasable line and end at one A leaves free. So when the
near-tight pairs outside A form no such cycle or path, A is the only assignment within G of D: it
is exactly optimal, whatever rounding the dual carries. So it is when every cost such an X could
trade (its near-tight pairs' and A's) is a multiple of a power of two above G (cost_step): costs
then differ by multiples of it. Otherwise (a near tie, or a difference of 17 hidden by the rounding
of a cost of 1e18) solvers.exact_settle settles it in exact integers.

The graph: one node per column; a column used by row i has an edge to every column of a near-tight
pair of row i (row i could move there, handing its column over). A slack is bounded from below by
rounding down at every step (dual_steps.difference_down), so a pair is left out only when it is
certainly not near-tight. A row with more than CAP near-tight pairs (ties everywhere) is taken as
room for another assignment, without a search.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .dual_steps import NO_LOW_BIT, difference_down, low_bit_exponent

EPS = float(np.finfo(np.float64).eps)
TINY = 5e-324
CAP = 16  # near-tight pairs kept per row (a hub of the tight tree has ~10); more: no search, an exact settle


@register_jitable
def near_tight(c, v_j, u_i, gap):
    """Whether pair (c, v_j, u_i) might have a slack c - v_j - u_i below ``gap`` (a lower bound of the
    slack, every step rounded down, is; so is an allowed pair whose bound overflows, which says
    nothing; +inf costs never are)."""
    low = difference_down(difference_down(c, v_j), u_i)
    return low < gap or (low == np.inf and c != np.inf)


@register_jitable
def quick_candidate(c, w, u_i, gap):
    """The quick rounded test before near_tight: its error is below 4 eps of the magnitudes, so a
    pair it clears by that much is certainly not near-tight; one whose rounded slack overflows is a
    candidate (a forbidden pair is not)."""
    rough = (c - w) - u_i
    return rough < gap + 4.0 * EPS * (abs(c) + abs(w) + abs(u_i)) + 4.0 * TINY or (rough == np.inf and c != np.inf)


@register_jitable
def collect_near_tight(cost, start, stop, dense, col_ind, v, shift, u_i, mate, gap, near, r):
    """Row r's near-tight pairs but its assigned one (its entries cost[start:stop], column k - start
    when ``dense`` else col_ind[k]; the dual's v_j is v[j] - shift): the first CAP columns into
    near[r], the count returned."""
    # the quick test first (quick_candidate), in a loop with no branch (the compiler vectorises
    # it): most rows have no candidate but their assigned pair
    candidates = 0
    for k in range(start, stop):
        j = k - start if dense else col_ind[k]
        candidates += quick_candidate(cost[k], v[j] - shift, u_i, gap)
    if candidates <= 1:
        if candidates == 0 or _passes_quick(cost, start, stop, dense, col_ind, v, shift, u_i, mate, gap):
            return 0  # none, or only the assigned pair
    count = 0
    for k in range(start, stop):
        j = k - start if dense else col_ind[k]
        c = cost[k]
        w = v[j] - shift
        if not quick_candidate(c, w, u_i, gap):
            continue
        if j != mate and near_tight(c, w, u_i, gap):
            if count < CAP:
                near[r, count] = j
            count += 1
    return count


@register_jitable
def settle_row(costs, start, m, mate, v, shift, floor, gap, every_row, count, near, r):
    """Row r's near-tight pairs into count[r], near[r] (a dense row: costs[start:start + m]), from
    what the certificate's pass left there: count[r] its "close" pairs, with u_i + v_j - c_ij above
    -3 tol for the solver's duals (checked within tol), near[r, 0:2] the first and last of them.

    While gap <= tol a pair within the gap of tight is close (the rounded-down u_i and the solver's
    differ by at most tol, and the rounding of that test by far less), so a row with at most three
    close pairs, its assigned one among them, is settled from those alone without reading its costs
    again: most rows, as an optimum's duals make about one pair per row tight besides the assigned
    ones. ``every_row`` (the gap is above tol): the row is read.

    Returns the least low_bit_exponent over the costs of the row's assigned and near-tight pairs
    (cost_step); -NO_LOW_BIT when there were more than CAP of them."""
    close = count[r]
    first = near[r, 0]
    last = near[r, 1]
    if not every_row and close <= 3 and not (close == 3 and (first == mate or last == mate)):
        found = 0
        if close > 1:
            for j in (first, last):
                if j != mate and near_tight(costs[start + j], v[j] - shift, floor, gap):
                    near[r, found] = j
                    found += 1
        count[r] = found
    else:
        count[r] = collect_near_tight(costs, start, start + m, True, near[r], v, shift, floor, mate, gap, near, r)
    low = low_bit_exponent(costs[start + mate]) if mate >= 0 else NO_LOW_BIT
    for e in range(min(count[r], CAP)):
        low = min(low, low_bit_exponent(costs[start + near[r, e]]))
    return low if count[r] <= CAP else -NO_LOW_BIT  # too many to look at: no step above the gap


@njit(cache=True)
def least_low_bit(values):
    """The least low_bit_exponent over ``values`` (NO_LOW_BIT when all are 0 or infinite)."""
    low = NO_LOW_BIT
    for k in range(values.size):
        low = min(low, low_bit_exponent(values[k]))
    return low


@register_jitable
def cost_step(low):
    """2^low (+inf for NO_LOW_BIT, 0 for -NO_LOW_BIT), ``low`` the least low_bit_exponent over the
    costs of the answer's pairs and of every near-tight pair: another assignment within the gap
    trades only such pairs, so its cost differs by a multiple of 2^low, and a gap below 2^low is
    none: the answer is optimal, exactly, ties or not (integers: a gap below 1; most float32
    data: a gap below 2^-24 of its smallest such cost)."""
    if low >= NO_LOW_BIT:
        return np.inf
    if low <= -NO_LOW_BIT:
        return 0.0
    return math.ldexp(1.0, int(low))


@register_jitable
def _passes_quick(cost, start, stop, dense, col_ind, v, shift, u_i, mate, gap):
    """Whether row's assigned pair (column ``mate``) is a quick-test candidate (collect_near_tight)."""
    if mate < 0:
        return False
    if dense:
        k = start + mate
    else:
        k = stop
        for q in range(start, stop):
            if col_ind[q] == mate:
                k = q
        if k == stop:
            return False
    return quick_candidate(cost[k], v[mate] - shift, u_i, gap)


@register_jitable
def room_for_another(n, m, mates, count, near, releasable_column, releasable_row, owner, state, stack):
    """Whether the near-tight pairs (row i's first min(count[i], CAP) columns in near[i], its count
    above CAP meaning "too many") leave room for an assignment other than ``mates`` (row -> column,
    -1 unassigned) within the gap: a cycle, or a path from a releasable column to a free one (rows <
    cols), or from a column an unassigned row could take to one whose row is releasable (rows >
    cols). Scratch: ``owner`` (m), ``state`` (m), ``stack`` (m), all int64."""
    for i in range(n):
        if count[i] > CAP:
            return True
    for j in range(m):
        owner[j] = -1
        state[j] = 0
    for i in range(n):
        if mates[i] >= 0:
            owner[mates[i]] = i
    # a cycle: depth-first search over the used columns (state 1 on the stack, 2 done)
    for root in range(m):
        if state[root] != 0 or owner[root] < 0:
            continue
        depth = 0
        stack[0] = root
        state[root] = 1
        next_edge = 0
        while depth >= 0:
            col = stack[depth]
            i = owner[col]
            k = count[i] if i >= 0 else 0
            advanced = False
            # the edge to try next is recovered from how many of col's edges are done: kept in state
            # as 1 + 2 * (edges tried), so no second stack is needed
            tried = (state[col] - 1) // 2
            while tried < k:
                nxt = near[i, tried]
                tried += 1
                state[col] = 1 + 2 * tried
                if owner[nxt] < 0:
                    continue  # a free column ends no cycle
                if state[nxt] % 2 == 1:
                    return True  # back to a column on the stack: a cycle
                if state[nxt] == 0:
                    depth += 1
                    stack[depth] = nxt
                    state[nxt] = 1
                    advanced = True
                    break
            if not advanced:
                state[col] = 2
                depth -= 1
    # a path: rows < cols, from a releasable used column to a free one; rows > cols, from a column an
    # unassigned row could take on to a column whose row is releasable
    for j in range(m):
        state[j] = 0
    top = -1
    for i in range(n):
        if n < m and mates[i] >= 0 and releasable_column[mates[i]]:
            top = _push(mates[i], state, stack, top)
        if n > m and mates[i] < 0:
            for e in range(count[i]):
                top = _push(near[i, e], state, stack, top)
    while top >= 0:
        col = stack[top]
        top -= 1
        i = owner[col]
        if n > m and releasable_row[i]:
            return True
        for e in range(count[i]):
            j = near[i, e]
            if owner[j] < 0:  # a free column (rows < cols only: rows > cols leaves none)
                return True
            top = _push(j, state, stack, top)
    return False


@register_jitable
def _push(j, state, stack, top):
    """Column j onto the search's stack unless it was there before; the new top."""
    if state[j] == 0:
        state[j] = 1
        top += 1
        stack[top] = j
    return top

