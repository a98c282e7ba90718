"""The GPU auction's global price update (issue 14): raise every object's price by its distance to
a free object, in whole epsilons, so that the Gauss-Seidel tail's displaced persons walk short
paths to free objects instead of raising prices one epsilon at a time (Goldberg & Kennedy's global
updates, in the auction's terms; Bertsekas 1992 on epsilon-CS).

Objects are the graph's vertices. An arc j -> j' (k the owner of j) has length
(b_kj - p_j) - (b_kj' - p_j') + eps: how much worse j' is for k than j, plus eps; epsilon-CS makes
it >= 0, and a forbidden pair has no arc. Free objects are at distance 0. Raising p_j by D(j) keeps
epsilon-CS for every owner exactly when D(j) <= length(j -> j') + D(j') on every arc, which holds for
exact shortest distances, for lengths floored to whole epsilons (a length never grows), and for
distances capped at any level (min(D, cap) keeps the inequality). So the update is exact: distances
floored to whole epsilons, settled level by level (Dial's buckets) up to ``cap_levels``, the rest
raised by ``cap_levels`` epsilons. Integer costs keep integer prices (eps is a whole number).

Rounds: each relaxes every unsettled object against the objects settled in the round before, then
settles every object whose tentative level is the current level (zero-length arcs put more objects
on the same level in the next round); a round that settles nobody moves to the next level. The
distances are unique, so every target raises the same prices.

* cpu ``price_update_cpu``: the rounds with a ``prange`` over the unsettled objects.
* cuda ``price_update_cuda``: one cooperative launch, a warp per unsettled object (lanes over the
  frontier, atomic minima; an object reaching the current level is settled in the same pass, as no
  unsettled object can reach less), one grid sync a round (a level's first round only settles); the
  frontier sizes take three slots by round, each reset a round before it is written again (a
  round without a relaxing pass appends before thread 0 could reset its own).

Imported only when a run starts (numba; numba.cuda only when a kernel is built).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import THREADS_PER_BLOCK, WARP_SIZE
from ..targets.kernel import COOPERATIVE, Kernel
from .auction_kernels import UCOUNT, benefit

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

UNSET = np.iinfo(np.int32).max  # an object not settled (and no tentative level yet)
# slots of the int64 ``update_state`` array: frontier sizes (three, by round), relaxing rounds and
# updates so far
COUNTS, ROUNDS, UPDATES = 0, 3, 4
UPDATE_SLOTS = 5


@register_jitable
def relaxed_level(C, scale, prices, eps, k, own, frontier, start, stride, size, level, cap_levels):
    """The least level that an object owned by person k, who values it at ``own`` (b_kj - p_j),
    reaches through the frontier entries start, start + stride, ... < size (all settled at
    ``level``): level + floor(length / eps), at most ``level + cap_levels`` (more is capped anyway)."""
    least = level + cap_levels
    for t in range(start, size, stride):
        other = frontier[t]
        value = benefit(C, scale, k, other)
        if value == -np.inf:
            continue  # a forbidden pair: no arc
        units = math.floor((own - (value - prices[other])) / eps) + 1.0  # floor(length / eps)
        if units < 0.0:
            units = 0.0  # epsilon-CS makes it >= 0; only rounding goes below
        if units < least - level:
            least = level + np.int32(units)
    return least


@register_jitable
def raise_prices(j, prices, eps, settled, cap_levels):
    """p_j += eps * min(D(j), cap_levels)."""
    d = settled[j]
    if d > cap_levels:
        d = cap_levels
    if d > 0:
        prices[j] += eps * d


@njit(parallel=True, cache=True)
def price_update_cpu(n_cols, C, scale, prices, eps, a_o, counters, cap_levels, settled, tentative, own,
                     frontier_a, frontier_b, update_state):
    """The rounds on the cpu (``settled``: each object's level, UNSET until settled; ``own``: its
    owner's value for it, b_kj - p_j, fixed during the update)."""
    if counters[UCOUNT] == 0:
        return
    size = 0
    for j in range(n_cols):
        tentative[j] = UNSET
        if a_o[j] < 0:
            settled[j] = 0
            frontier_a[size] = j
            size += 1
        else:
            settled[j] = UNSET
            own[j] = benefit(C, scale, a_o[j], j) - prices[j]
    total = size
    level = 0
    rounds = 0
    use_a = True
    while total < n_cols:
        frontier = frontier_a if use_a else frontier_b
        following = frontier_b if use_a else frontier_a
        if size > 0:
            rounds += 1
            for j in prange(n_cols):
                if settled[j] == UNSET:
                    reach = relaxed_level(C, scale, prices, eps, a_o[j], own[j], frontier, 0, 1, size, level,
                                          cap_levels)
                    if reach < tentative[j]:
                        tentative[j] = reach
        size = 0
        for j in range(n_cols):
            if settled[j] == UNSET and tentative[j] == level:
                settled[j] = level
                following[size] = j
                size += 1
        total += size
        use_a = not use_a
        if size == 0:
            level += 1  # nothing more at this level: the next one (its objects are tentative already)
            if level >= cap_levels:
                break
    for j in prange(n_cols):
        raise_prices(j, prices, eps, settled, cap_levels)
    update_state[ROUNDS] += rounds
    update_state[UPDATES] += 1


@cuda_kernel
def price_update_cuda(n_cols, C, scale, prices, eps, a_o, counters, cap_levels, settled, tentative, own,
                      frontier_a, frontier_b, update_state):
    """The same in one cooperative launch (``update_state``'s frontier sizes are zero on entry, and
    left so). No grid-wide minimum: a level's settling pass that finds nobody moves to the next
    level (one atomic slot that every warp hit each round cost tens of microseconds)."""
    if counters[UCOUNT] == 0:
        return  # every thread reads the same count: the whole grid leaves
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = tid % WARP_SIZE
    warp = tid // WARP_SIZE
    n_warps = threads // WARP_SIZE
    for j in range(tid, n_cols, threads):
        tentative[j] = UNSET
        if a_o[j] < 0:
            settled[j] = 0
            frontier_a[cuda.atomic.add(update_state, COUNTS, 1)] = j
        else:
            settled[j] = UNSET
            own[j] = benefit(C, scale, a_o[j], j) - prices[j]
    grid.sync()
    size = update_state[COUNTS]
    total = size
    level = 0
    rounds = 0
    r = 0
    while total < n_cols:
        frontier = frontier_a if r % 2 == 0 else frontier_b
        following = frontier_b if r % 2 == 0 else frontier_a
        following_count = COUNTS + (r + 1) % 3
        if tid == 0:  # the next round's: last read two rounds ago (a round's appends may precede this)
            update_state[COUNTS + (r + 2) % 3] = 0
        if size > 0:
            rounds += 1
            for j in range(warp, n_cols, n_warps):  # the warp's j is the same in every lane
                owner = a_o[j]  # loaded with settled[j], not after it: one memory round trip fewer
                value = own[j]
                if settled[j] != UNSET:
                    continue
                reach = relaxed_level(C, scale, prices, eps, owner, value, frontier, lane, WARP_SIZE, size, level,
                                      cap_levels)
                if reach == level:  # nothing unsettled reaches less: j is settled now, by one lane
                    if cuda.atomic.cas(settled, j, UNSET, level) == UNSET:
                        following[cuda.atomic.add(update_state, following_count, 1)] = j
                elif reach < tentative[j]:  # atomics, not shuffles (the simulator has none)
                    cuda.atomic.min(tentative, j, np.int32(reach))
        else:  # a new level: the objects already at it
            for j in range(tid, n_cols, threads):
                if settled[j] == UNSET and tentative[j] == level:
                    settled[j] = level
                    following[cuda.atomic.add(update_state, following_count, 1)] = j
        grid.sync()
        size = update_state[following_count]
        total += size
        r += 1
        if size == 0:
            level += 1
            if level >= cap_levels:
                break
    for j in range(tid, n_cols, threads):
        raise_prices(j, prices, eps, settled, cap_levels)
    grid.sync()  # every thread has read the sizes
    if tid == 0:
        for slot in range(COUNTS, COUNTS + 3):
            update_state[slot] = 0
        update_state[ROUNDS] += rounds
        update_state[UPDATES] += 1


# a warp per object: a block's warps take that many objects a pass; the simulator runs one warp
PRICE_UPDATE = Kernel("auction.price_update", cpu=price_update_cpu, cuda=price_update_cuda, shape=COOPERATIVE,
                      sim_threads=WARP_SIZE, tiles=THREADS_PER_BLOCK // WARP_SIZE)


