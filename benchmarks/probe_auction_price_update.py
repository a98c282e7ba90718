"""Issue 14's auction tail on the CPU: can a global price update shorten the Gauss-Seidel price wars?

A design probe for the GPU auction (not the shipped solver): a plain Gauss-Seidel forward auction
with the solver's epsilon schedule (solvers.assignment.auction.epsilon_schedule: integer costs
scaled by n + 1, epsilon / 5 a phase down to 1), counting the bids made while at most 64 persons are
unassigned (the tail that the GPU runs one bid at a time). Variants raise every object's price by
its distance to a free object once the tail starts, and again every 200 tail bids:

* ``dijkstra``: exact distances over objects, an arc j -> j' (k the owner of j) of length
  (a_kj - p_j) - (a_kj' - p_j') + epsilon >= 0 (epsilon-CS makes it so). Raising p_j by D(j) keeps
  epsilon-CS for every owner: D(j) <= length + D(j');
* ``levels<=L``: the same with lengths floored to whole epsilons, settled level by level (every
  object of a level at once, then the zero-length arcs out of them) up to L levels, the rest at L:
  the form a GPU would run; ``frontier rounds`` counts its sequential steps. Floored lengths and
  the cap keep the inequality, so epsilon-CS holds;
* ``sweeps``: Jacobi sweeps stopped early: NOT consistent (a neighbour improved in the last sweep
  can break the inequality), and it gave non-optimal answers: kept here as the counterexample.

Every answer is compared with scipy's optimum ("ok" or "WRONG").

    PYTHONPATH=. python benchmarks/probe_auction_price_update.py [N]
"""
from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit


@njit(cache=True)
def row_best(a, p, i):
    n = a.shape[1]
    b1 = -1e300; j1 = -1; b2 = -1e300
    for j in range(n):
        v = a[i, j] - p[j]
        if v > b1:
            b2 = b1; b1 = v; j1 = j
        elif v > b2:
            b2 = v
    return b1, j1, b2


@njit(cache=True)
def arc_length(a, p, k, j, jb, e):
    """The arc j -> jb of a global update (k the owner of j): how much worse jb is for k than j is,
    plus e; >= 0 under eps-CS (clamped at 0 against rounding)."""
    return max((a[k, j] - p[j]) - (a[k, jb] - p[jb]) + e, 0.0)


@njit(cache=True)
def global_update(a, p, ao, e, cap):
    """Raise each object's price by its distance to a free object: edge j -> j' (owner k of j) of
    length (a_kj - p_j) - (a_kj' - p_j') + e >= 0 (eps-CS); dense Dijkstra over objects."""
    n = a.shape[1]
    D = np.full(n, np.inf)
    done = np.zeros(n, np.bool_)
    for j in range(n):
        if ao[j] < 0:
            D[j] = 0.0
    for _ in range(n):
        # pick the unsettled object with the least D
        best = np.inf; jb = -1
        for j in range(n):
            if not done[j] and D[j] < best:
                best = D[j]; jb = j
        if jb < 0:
            break
        done[jb] = True
        # relax every unsettled assigned object j through jb: its owner k would move to jb
        for j in range(n):
            if done[j]:
                continue
            k = ao[j]
            if k < 0:
                continue
            d = best + arc_length(a, p, k, j, jb, e)
            if d < D[j]:
                D[j] = d
    for j in range(n):
        if D[j] < np.inf:
            p[j] += min(D[j], cap)
        else:
            p[j] += cap


@njit(cache=True)
def global_update_levels(a, p, ao, e, levels, rounds):
    """Exact distances in whole epsilons (lengths floored to multiples of e: a length never grows,
    so eps-CS holds), settled level by level as a GPU would (every object of level t at once, then
    the 0-length arcs out of them until none is left), up to ``levels``; the rest get ``levels``."""
    n = a.shape[1]
    D = np.full(n, levels, np.int64)
    settled = np.zeros(n, np.bool_)
    for j in range(n):
        if ao[j] < 0:
            D[j] = 0
    for t in range(levels):
        # settle every object at level t (0-length arcs can add more at the same level)
        while True:
            frontier = [j for j in range(n) if not settled[j] and D[j] == t]
            if len(frontier) == 0:
                break
            rounds[0] += 1
            for jb in frontier:
                settled[jb] = True
            for j in range(n):
                if settled[j]:
                    continue
                k = ao[j]
                if k < 0:
                    continue
                for jb in frontier:
                    units = int(np.floor(arc_length(a, p, k, j, jb, e) / e))
                    if t + units < D[j]:
                        D[j] = t + units
    for j in range(n):
        p[j] += e * D[j]


@njit(cache=True)
def global_update_sweeps(a, p, ao, e, cap, sweeps):
    """The same distances by Jacobi sweeps (every object at once against the last sweep's D: the form
    a GPU would run, one sweep a pass over the owners' rows), at most ``sweeps`` of them; objects
    not reached get ``cap`` (any cap keeps eps-CS: min(D, cap) still satisfies the inequality)."""
    n = a.shape[1]
    D = np.full(n, np.inf)
    for j in range(n):
        if ao[j] < 0:
            D[j] = 0.0
    for _ in range(sweeps):
        new = D.copy()
        changed = False
        for j in range(n):
            k = ao[j]
            if k < 0:
                continue
            best = new[j]
            for jp in range(n):
                if jp != j and D[jp] < np.inf:
                    d = D[jp] + arc_length(a, p, k, j, jp, e)
                    if d < best:
                        best = d
            if best < new[j]:
                new[j] = best
                changed = True
        D = new
        if not changed:
            break
    for j in range(n):
        p[j] += min(D[j], cap)


@njit(cache=True)
def auction(a, eps_list, tail, every, cap, sweeps=0):
    n = a.shape[0]
    p = np.zeros(n)
    ap = -np.ones(n, np.int64); ao = -np.ones(n, np.int64)
    bids = 0; tail_bids = 0; updates = 0
    rounds = np.zeros(1, np.int64)
    for e in eps_list:
        for i in range(n):
            j = ap[i]
            if j >= 0:
                b1, j1, b2 = row_best(a, p, i)
                if a[i, j] - p[j] < b1 - e:
                    ao[j] = -1; ap[i] = -1
        stack = [i for i in range(n) if ap[i] < 0]
        unassigned = len(stack)
        since = -1
        while unassigned > 0:
            if tail > 0 and unassigned <= tail and (since < 0 or since >= every):
                if sweeps < 0:
                    global_update_levels(a, p, ao, e, -sweeps, rounds)
                elif sweeps > 0:
                    global_update_sweeps(a, p, ao, e, cap, sweeps)
                else:
                    global_update(a, p, ao, e, cap)
                updates += 1
                since = 0
            i = stack.pop()
            b1, j1, b2 = row_best(a, p, i)
            if b2 < -1e299:
                b2 = b1 - cap
            p[j1] = a[i, j1] - b2 + e
            old = ao[j1]
            ao[j1] = i; ap[i] = j1
            bids += 1
            if unassigned <= 64:
                tail_bids += 1
            if since >= 0:
                since += 1
            if old >= 0:
                ap[old] = -1
                stack.append(old)
            else:
                unassigned -= 1
    return ap, bids, tail_bids, updates, rounds[0]


if __name__ == "__main__":
    from scipy.optimize import linear_sum_assignment

    from solvers.assignment.auction import epsilon_schedule
    from solvers.assignment.hungarian import cost_view
    from solvers.problems import CostMatrix
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = np.random.default_rng(11)
    for name, hi in (("[0,10n]", 10 * n), ("[0,n/5]", n // 5)):
        C = rng.integers(0, hi + 1, (n, n))
        r, c = linear_sum_assignment(C)
        ref = C[r, c].sum()
        scale, epsilons, cap = epsilon_schedule(cost_view(CostMatrix.from_array(C)), 0.0, "on", 5.0)  # the solver's
        a = -(C * scale).astype(np.float64)
        eps = np.array(epsilons)
        for label, tail, every, sweeps in (("forward", 0, 0, 0), ("dijkstra at 64, every 200", 64, 200, 0),
                                           ("sweeps=4 at 64, every 200", 64, 200, 4),
                                           ("levels<=16 at 64, every 200", 64, 200, -16),
                                           ("levels<=64 at 64, every 200", 64, 200, -64),
                                           ("levels<=256 at 64, every 200", 64, 200, -256)):
            t = time.perf_counter()
            ap, bids, tb, ups, rounds = auction(a, eps, tail, every, cap, sweeps)
            dt = time.perf_counter() - t
            val = C[np.arange(n), ap].sum()
            print(name, label, "ok" if val == ref else f"WRONG {val} {ref}", "bids", bids, "tail<=64", tb, "updates", ups, "frontier rounds", rounds, f"{dt:.2f}s", flush=True)
