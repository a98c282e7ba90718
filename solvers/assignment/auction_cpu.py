"""Per-element bodies of the GPU auction algorithm (Vasconcelos & Rosenhahn 2009; Bertsekas'
auction with epsilon-scaling) and their CPU loops.

Persons are rows, objects columns (rows <= cols); the benefit of person i for object j is
-scale * c_ij (minimisation), 0 for the dummy persons padding a rectangular problem, -inf for a
forbidden pair (never the best). The bodies are written once (``register_jitable``) and called
per thread by the CUDA kernels of ``auction_kernels`` and per ``prange`` iteration here; they live
next to their cached CPU loops because numba's on-disk cache only notices edits to this file.

Ties are broken the same way on every backend: the lowest object index among equal values, the
lowest person index among equal bids, and the same stack order in the Gauss-Seidel tail, so CPU,
GPU and simulator produce the same assignment.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

# slots of the int64 ``counters`` array
UCOUNT, INFEAS, BIDS = 0, 1, 2
N_COUNTERS = 4
NO_BIDDER = np.iinfo(np.int32).max


@register_jitable
def benefit(C, n_real, scale, i, j):
    """-scale * c_ij for a real person, 0 for a dummy one (-inf where forbidden)."""
    if i < n_real:
        return -scale * C[i, j]
    return 0.0


@register_jitable
def scan_row(C, n_real, scale, prices, i, start, stride, n):
    """Best value, its object (lowest index among ties; -1 if none allowed) and second-best value
    of b_ij - p_j over j = start, start + stride, ... < n."""
    best = -np.inf
    best_j = -1
    second = -np.inf
    for j in range(start, n, stride):
        val = benefit(C, n_real, scale, i, j) - prices[j]
        if val > best:
            second = best
            best = val
            best_j = j
        elif val > second:
            second = val
    return best, best_j, second


@register_jitable
def merge_top2(b1, j1, s1, b2, j2, s2):
    """Combine two (best, object, second) partial scans; equal bests keep the lower object."""
    if b2 > b1 or (b2 == b1 and j2 >= 0 and (j1 < 0 or j2 < j1)):
        return b2, j2, max(s2, b1)
    return b1, j1, max(s1, b2)


@register_jitable
def bid_price(prices, best, j, second, eps, cap):
    """The price person's bid offers for object j: p_j + (best - second) + eps. A person with a
    single allowed object (second = -inf) raises by ``cap`` instead of infinity."""
    if second == -np.inf:
        second = best - cap
    return prices[j] + (best - second) + eps


@register_jitable
def keeps_assignment(C, n_real, scale, prices, i, j, best, eps):
    """epsilon-complementary slackness of person i holding object j."""
    return benefit(C, n_real, scale, i, j) - prices[j] >= best - eps


@register_jitable
def award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """The winning bidder of an object takes it at its bid; the previous holder is freed."""
    i = U[k]
    j = bid_obj[i]
    if j < 0 or obj_win[j] != i:
        return
    old = a_o[j]
    if old >= 0:
        a_p[old] = -1
    a_o[j] = i
    a_p[i] = j
    prices[j] = bid_val[i]
    obj_top[j] = -np.inf
    obj_win[j] = NO_BIDDER


@register_jitable
def gs_bid(i, best, j, second, eps, cap, prices, a_p, a_o):
    """One Gauss-Seidel bid: person i takes object j at once. Returns the displaced person or -1."""
    prices[j] = bid_price(prices, best, j, second, eps, cap)
    old = a_o[j]
    a_o[j] = i
    a_p[i] = j
    if old >= 0:
        a_p[old] = -1
    return old


# ---------------------------------------------------------------------------------------------
# CPU kernels: same arguments as the CUDA kernels of auction_kernels

@njit(parallel=True, cache=True)
def phase_start(n, n_real, C, scale, prices, eps, a_p, a_o):
    """New epsilon: free every person whose object no longer satisfies eps-CS."""
    for i in prange(n):
        j = a_p[i]
        if j < 0:
            continue
        best, _, _ = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        if not keeps_assignment(C, n_real, scale, prices, i, j, best, eps):
            a_p[i] = -1
            a_o[j] = -1


@njit(parallel=True, cache=True)
def bid(n, n_real, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top):
    """Bidding: every unassigned person bids for its best object (Jacobi: all at once)."""
    for k in prange(counters[UCOUNT]):
        i = U[k]
        best, j, second = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        bid_obj[i] = j
        if j < 0:
            counters[INFEAS] = 1
            continue
        bid_val[i] = bid_price(prices, best, j, second, eps, cap)


@njit(cache=True)
def resolve(U, counters, bid_obj, bid_val, obj_top, obj_win):
    """Assignment phase, step 1: each object's highest bid, the lowest person among equal bids
    (the GPU gets the same with an atomic max, then an atomic min)."""
    for k in range(counters[UCOUNT]):
        i = U[k]
        j = bid_obj[i]
        if j < 0:
            continue
        if bid_val[i] > obj_top[j] or (bid_val[i] == obj_top[j] and i < obj_win[j]):
            obj_top[j] = bid_val[i]
            obj_win[j] = i


@njit(cache=True)
def award(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """Assignment phase, step 2: winners take their objects."""
    for k in range(counters[UCOUNT]):
        award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


@njit(cache=True)
def gs_tail(n, n_real, C, scale, prices, eps, cap, U, counters, a_p, a_o, budget):
    """Gauss-Seidel auction for the last few unassigned persons: one bid at a time, the freed
    person bidding next (a stack on U), at most ``budget`` bids."""
    top = counters[UCOUNT]
    bids = 0
    while top > 0 and bids < budget:
        i = U[top - 1]
        best, j, second = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        if j < 0:
            counters[INFEAS] = 1
            top = 0
            break
        old = gs_bid(i, best, j, second, eps, cap, prices, a_p, a_o)
        if old >= 0:
            U[top - 1] = old
        else:
            top -= 1
        bids += 1
    counters[UCOUNT] = top
    counters[BIDS] += bids


@njit(parallel=True, cache=True)
def person_values(n, n_real, C, scale, prices, values):
    """pi_i = max_j (b_ij - p_j): the persons' dual values."""
    for i in prange(n):
        best, _, _ = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        values[i] = best


CPU_KERNELS = {f.__name__: f for f in (phase_start, bid, resolve, award, gs_tail, person_values)}
