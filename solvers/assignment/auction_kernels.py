"""GPU auction (Vasconcelos & Rosenhahn 2009; Bertsekas' auction with epsilon-scaling): the
per-element bodies, the cpu loops and the cuda kernels, in one file, and one ``Kernel`` per step.

Imported only when a run starts (numba; numba.cuda only when a kernel is built). Persons are rows, objects
columns (rows <= cols); the benefit of person i for object j is -scale * c_ij (minimisation), 0 for
the dummy persons padding a rectangular problem, -inf for a forbidden pair (never the best). The
bodies are written once (``register_jitable``) and called per ``prange`` iteration by the
``@njit(cache=True)`` cpu loops and per thread by the ``@cuda_kernel`` kernels; both loops
of a step take the same arguments, so the host loop (``auction_device``) launches it the same way on
every target. The compaction of the unassigned persons is the Hungarian's ``COMPACT`` (imported:
the kernel cache is keyed by a hash of every compiled source, ``solvers.targets.cache``, so an
edit there starts a fresh cache here too).

Row scans (a person's best and second-best object) run one block per person on a GPU so the row is
read coalesced; the block combines its threads' partial scans in shared memory. The assignment
phase uses atomics there: an atomic max of the bids per object, then an atomic min of the person
index among the bids equal to that max; the cpu resolves the same winner sequentially. The
Gauss-Seidel tail is one block (the cpu: one loop) bidding for the last unassigned persons without
returning to the host.

Ties are broken the same way on every backend: the lowest object index among equal values, the
lowest person index among equal bids, and the same stack order in the Gauss-Seidel tail, so cpu,
GPU and simulator produce the same assignment.
"""
from __future__ import annotations

import numpy as np
from numba import float64, int32, njit, prange
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import THREADS_PER_BLOCK
from ..targets.kernel import BLOCK_PER_ITEM, EACH, ONE_BLOCK, Kernel
from .hungarian_kernels import COMPACT  # noqa: F401 (the auction's compaction of unassigned persons)

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

# slots of the int64 ``counters`` array
UCOUNT, INFEAS, BIDS = 0, 1, 2
N_COUNTERS = 4
NO_BIDDER = np.iinfo(np.int32).max

ROW_BLOCK = THREADS_PER_BLOCK  # threads scanning one person's row on a GPU (a power of two)


# ---------------------------------------------------------------------------------------------
# bodies (every target)

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


@register_jitable
def row_top2(C, n_real, scale, prices, i, n):
    """(best, object, second) of row i, computed by the whole block (a GPU's form of ``scan_row``
    over the row); every thread gets it."""
    sb = cuda.shared.array(ROW_BLOCK, float64)
    sj = cuda.shared.array(ROW_BLOCK, int32)
    ss = cuda.shared.array(ROW_BLOCK, float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    b, j, s = scan_row(C, n_real, scale, prices, i, t, nt, n)
    sb[t] = b
    sj[t] = j
    ss[t] = s
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step:
            b, j, s = merge_top2(sb[t], sj[t], ss[t], sb[t + step], sj[t + step], ss[t + step])
            sb[t] = b
            sj[t] = j
            ss[t] = s
        cuda.syncthreads()
        step //= 2
    b, j, s = sb[0], sj[0], ss[0]
    cuda.syncthreads()  # the shared arrays are reused by the next call
    return b, j, s


# ---------------------------------------------------------------------------------------------
# the steps: for each, its cpu loop, its cuda kernel (same arguments) and its Kernel record

@njit(parallel=True, cache=True)
def phase_start_cpu(n, n_real, C, scale, prices, eps, a_p, a_o):
    """New epsilon: free every person whose object no longer satisfies eps-CS."""
    for i in prange(n):
        j = a_p[i]
        if j < 0:
            continue
        best, _, _ = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        if not keeps_assignment(C, n_real, scale, prices, i, j, best, eps):
            a_p[i] = -1
            a_o[j] = -1


@cuda_kernel
def phase_start_cuda(n, n_real, C, scale, prices, eps, a_p, a_o):
    i = cuda.blockIdx.x
    j = a_p[i]
    if j < 0:
        return  # the whole block leaves together
    best, _, _ = row_top2(C, n_real, scale, prices, i, n)
    if cuda.threadIdx.x == 0 and not keeps_assignment(C, n_real, scale, prices, i, j, best, eps):
        a_p[i] = -1
        a_o[j] = -1


PHASE_START = Kernel("phase_start", phase_start_cpu, phase_start_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)


@njit(parallel=True, cache=True)
def bid_cpu(n, n_real, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top):
    """Bidding: every unassigned person bids for its best object (Jacobi: all at once)."""
    for k in prange(counters[UCOUNT]):
        i = U[k]
        best, j, second = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        bid_obj[i] = j
        if j < 0:
            counters[INFEAS] = 1
            continue
        bid_val[i] = bid_price(prices, best, j, second, eps, cap)


@cuda_kernel
def bid_cuda(n, n_real, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top):
    """The same, one block per person; the bids' maximum per object by an atomic max."""
    k = cuda.blockIdx.x
    if k >= counters[UCOUNT]:
        return  # the grid covers the last count read by the host, an upper bound
    i = U[k]
    best, j, second = row_top2(C, n_real, scale, prices, i, n)
    if cuda.threadIdx.x == 0:
        bid_obj[i] = j
        if j < 0:
            counters[INFEAS] = 1
        else:
            price = bid_price(prices, best, j, second, eps, cap)
            bid_val[i] = price
            cuda.atomic.max(obj_top, j, price)


BID = Kernel("bid", bid_cpu, bid_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)


@njit(cache=True)
def resolve_cpu(U, counters, bid_obj, bid_val, obj_top, obj_win):
    """Assignment phase, step 1: each object's highest bid, the lowest person among equal bids."""
    for k in range(counters[UCOUNT]):
        i = U[k]
        j = bid_obj[i]
        if j < 0:
            continue
        if bid_val[i] > obj_top[j] or (bid_val[i] == obj_top[j] and i < obj_win[j]):
            obj_top[j] = bid_val[i]
            obj_win[j] = i


@cuda_kernel
def resolve_cuda(U, counters, bid_obj, bid_val, obj_top, obj_win):
    """The same winner: the bids equal to the object's maximum (atomic max in ``bid``) meet in an
    atomic min of the person index."""
    k = cuda.grid(1)
    if k < counters[UCOUNT]:
        i = U[k]
        j = bid_obj[i]
        if j >= 0 and bid_val[i] == obj_top[j]:
            cuda.atomic.min(obj_win, j, i)


RESOLVE = Kernel("resolve", resolve_cpu, resolve_cuda, EACH)


@njit(cache=True)
def award_cpu(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """Assignment phase, step 2: winners take their objects."""
    for k in range(counters[UCOUNT]):
        award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


@cuda_kernel
def award_cuda(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    k = cuda.grid(1)
    if k < counters[UCOUNT]:
        award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


AWARD = Kernel("award", award_cpu, award_cuda, EACH)


@njit(cache=True)
def gs_tail_cpu(n, n_real, C, scale, prices, eps, cap, U, counters, a_p, a_o, budget):
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


@cuda_kernel
def gs_tail_cuda(n, n_real, C, scale, prices, eps, cap, U, counters, a_p, a_o, budget):
    """The same in one block: the block scans each bidder's row, thread 0 applies the bid."""
    top = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        top[0] = counters[UCOUNT]
    cuda.syncthreads()
    bids = 0
    while top[0] > 0 and bids < budget:  # every thread sees the same top after the sync
        i = U[top[0] - 1]
        best, j, second = row_top2(C, n_real, scale, prices, i, n)
        if t == 0:
            if j < 0:
                counters[INFEAS] = 1
                top[0] = 0
            else:
                old = gs_bid(i, best, j, second, eps, cap, prices, a_p, a_o)
                if old >= 0:
                    U[top[0] - 1] = old
                else:
                    top[0] -= 1
        bids += 1
        cuda.syncthreads()
    if t == 0:
        counters[UCOUNT] = top[0]
        counters[BIDS] += bids


GS_TAIL = Kernel("gs_tail", gs_tail_cpu, gs_tail_cuda, ONE_BLOCK, threads=ROW_BLOCK)


@njit(parallel=True, cache=True)
def person_values_cpu(n, n_real, C, scale, prices, values):
    """pi_i = max_j (b_ij - p_j): the persons' dual values."""
    for i in prange(n):
        best, _, _ = scan_row(C, n_real, scale, prices, i, 0, 1, n)
        values[i] = best


@cuda_kernel
def person_values_cuda(n, n_real, C, scale, prices, values):
    i = cuda.blockIdx.x
    best, _, _ = row_top2(C, n_real, scale, prices, i, n)
    if cuda.threadIdx.x == 0:
        values[i] = best


PERSON_VALUES = Kernel("person_values", person_values_cpu, person_values_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)

KERNELS = (PHASE_START, BID, RESOLVE, AWARD, GS_TAIL, PERSON_VALUES)
