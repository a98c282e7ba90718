"""CUDA kernels of the GPU auction (Vasconcelos & Rosenhahn 2009) around the bodies of auction_cpu.

Row scans (a person's best and second-best object) run one block per person so the row is read
coalesced; the block combines its threads' partial scans in shared memory. The assignment phase
uses atomics: an atomic max of the bids per object, then an atomic min of the person index among
the bids equal to that max (the CPU resolves the same winner sequentially). The Gauss-Seidel tail
is one block looping over the last unassigned persons without returning to the host.
Compiled on first use; ``numba.cuda`` is imported only then (see hungarian_kernels).
"""
from __future__ import annotations

from numba import float64, int32

from . import hungarian_kernels as hk
from .auction_cpu import (BIDS, INFEAS, UCOUNT, award_body, bid_price, gs_bid, keeps_assignment, merge_top2,
                          scan_row)
from .hungarian_kernels import EACH, ONE_ROW_BLOCK, ROW_BLOCK, ROWS

cuda = None  # numba.cuda, bound by _bind_cuda()
row_top2 = None  # the device function below, compiled by _bind_cuda()


def _row_top2(C, n_real, scale, prices, i, n):
    """(best, object, second) of row i, computed by the whole block; every thread gets it."""
    sb = cuda.shared.array(ROW_BLOCK, float64)
    sj = cuda.shared.array(ROW_BLOCK, int32)
    ss = cuda.shared.array(ROW_BLOCK, float64)
    t = cuda.threadIdx.x
    b, j, s = scan_row(C, n_real, scale, prices, i, t, ROW_BLOCK, n)
    sb[t] = b
    sj[t] = j
    ss[t] = s
    cuda.syncthreads()
    step = ROW_BLOCK // 2
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


def _bind_cuda():
    global cuda, row_top2
    if cuda is None:
        cuda = hk._bind_cuda()
        row_top2 = cuda.jit(device=True)(_row_top2)
    return cuda


# ---------------------------------------------------------------------------------------------
# kernels (argument lists identical to the CPU kernels of auction_cpu)

def phase_start(n, n_real, C, scale, prices, eps, a_p, a_o):
    i = cuda.blockIdx.x
    j = a_p[i]
    if j < 0:
        return  # the whole block leaves together
    best, _, _ = row_top2(C, n_real, scale, prices, i, n)
    if cuda.threadIdx.x == 0 and not keeps_assignment(C, n_real, scale, prices, i, j, best, eps):
        a_p[i] = -1
        a_o[j] = -1


def bid(n, n_real, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top):
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


def resolve(U, counters, bid_obj, bid_val, obj_top, obj_win):
    k = cuda.grid(1)
    if k < counters[UCOUNT]:
        i = U[k]
        j = bid_obj[i]
        if j >= 0 and bid_val[i] == obj_top[j]:
            cuda.atomic.min(obj_win, j, i)


def award(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    k = cuda.grid(1)
    if k < counters[UCOUNT]:
        award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


def gs_tail(n, n_real, C, scale, prices, eps, cap, U, counters, a_p, a_o, budget):
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


def person_values(n, n_real, C, scale, prices, values):
    i = cuda.blockIdx.x
    best, _, _ = row_top2(C, n_real, scale, prices, i, n)
    if cuda.threadIdx.x == 0:
        values[i] = best


KINDS = {"phase_start": ROWS, "bid": ROWS, "resolve": EACH, "award": EACH, "gs_tail": ONE_ROW_BLOCK,
         "person_values": ROWS}
KERNELS = {name: globals()[name] for name in KINDS}
