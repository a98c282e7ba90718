"""GPU auction (Vasconcelos & Rosenhahn 2009; Bertsekas' auction with epsilon-scaling, and Bertsekas &
Castanon's reverse auction for rectangular problems): the per-element bodies, the cpu loops and the
cuda kernels, in one file, and one ``Kernel`` per step.

Imported only when a run starts (numba; numba.cuda only when a kernel is built). Persons are rows,
objects columns, ``n_rows`` <= ``n_cols``; no dummy persons: person arrays are ``n_rows`` long,
object arrays ``n_cols``. The benefit of person i for object j is -scale * c_ij (minimisation),
-inf for a forbidden pair (never the best). The bodies are written once (``register_jitable``) and
called per ``prange`` iteration (or per loop step) by the ``@njit(cache=True)`` cpu loops and per
thread by the ``@cuda_kernel`` kernels; both loops of a step take the same arguments, so the host
loop (``auction_device``) launches it the same way on every target. The compaction of the
unassigned persons (and of the objects flagged for the reverse auction) is the Hungarian's
``COMPACT`` (imported: the kernel cache is keyed by a hash of every compiled source,
``solvers.targets.cache``, so an edit there starts a fresh cache here too).

Forward auction: row scans (a person's best and second-best object) run one block per person on a
GPU so the row is read coalesced; the block combines its threads' partial scans in shared memory
(``block_top2``). The assignment phase uses atomics there: an atomic max of the bids per object,
then an atomic min of the person index among the bids equal to that max; the cpu resolves the same
winner sequentially. On a GPU the Jacobi rounds run in one cooperative launch (``JACOBI``: grid
barriers between bidding, resolving and awarding) until the tail's size is reached. In the tail
the cpu bids for one person at a time (Gauss-Seidel: the displaced person bids next); a GPU runs
a block per person, all bidding at once, each bid made under the object's lock and only if the
object's price is unchanged since the scan (``gs_tail_cuda``: Bertsekas & Castanon's
asynchronous auction). These blocks read the prices from L2 (``load_coherent``), past the SMs'
L1 caches, which may hold copies older than other blocks' bids.

Reverse auction (rectangular problems, after each forward phase; Bertsekas & Castanon): with
lambda = the lowest price of an assigned object and pi_i = a_ij - p_j the profit of person i at
its object j, every unassigned object priced above lambda bids for the person maximising
a_ij - pi_i (best value, second best): if lambda >= best - eps its price just drops to lambda;
else it offers itself at max(lambda, second - eps), raising that person's profit by at least eps,
and the person's previous object is freed (to bid in turn if priced above lambda). The steps
mirror the forward ones with persons and objects swapped (column scans, one block per object;
each person takes the highest profit offered, the lowest object among equal offers; the Jacobi
rounds in one cooperative launch on a GPU, ``REVERSE_JACOBI``; a one-block Gauss-Seidel tail).
Column scans read a row-major matrix with a stride; they touch only the few objects left
overpriced.

Ties are broken the same way on every backend: the lowest object index among equal values, the
lowest person index among equal bids (and the reverse), and the same stack order in the
Gauss-Seidel tails, so the cpu and the simulator (which runs the parallel tail's blocks one at a
time) produce the same assignment. On a GPU the parallel tail's bids interleave as the blocks
run: among tied optimal assignments, which one comes out may vary between runs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import config as numba_config
from numba import float64, int32, njit, prange
from numba.core import types
from numba.extending import overload, register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.geometry import THREADS_PER_BLOCK, WARP_SIZE
from ..targets.kernel import BLOCK_PER_ITEM, COOPERATIVE, EACH, ONE_BLOCK, Kernel
from .hungarian_kernels import COMPACT, KEEP_FLAGGED, KEEP_NEGATIVE, compact_cpu  # noqa: F401 (COMPACT: ours too)

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

# slots of the int64 ``counters`` array: unassigned persons, infeasible, forward tail bids,
# objects flagged for the reverse auction, reverse tail bids, forward Jacobi rounds (then LISTS)
UCOUNT, INFEAS, BIDS, VCOUNT, RBIDS, JROUNDS = 0, 1, 2, 3, 4, 5
LISTS = 6  # three slots from here: the lengths of the GPU's Jacobi lists of unassigned persons
# the GPU's parallel tail: bids begun in this launch (its budget), blocks finished (the last one
# resets both and adds the bids to BIDS)
TAIL_TRIES, TAIL_DONE = 9, 10
RJROUNDS = 11  # the reverse auction's Jacobi rounds
N_COUNTERS = 12
NO_BIDDER = np.iinfo(np.int32).max

ROW_BLOCK = THREADS_PER_BLOCK  # threads scanning one person's row on a GPU (a power of two)
# the forward tail's blocks (one per unassigned person, each bidding one bid after another, a scan
# of a row and a block reduction): four times the threads make each thread's share of the row a
# quarter as long
TAIL_BLOCK = 1024
TOP2_SHARED = max(ROW_BLOCK, TAIL_BLOCK)  # the block reduction's shared arrays fit either block


# ---------------------------------------------------------------------------------------------
# bodies (every target)

# Costs reach the steps as ``C``: a dense matrix C[i, j] (+inf where forbidden), or sparse costs,
# the tuple (row_ptr, col_ind, cost, col_ptr, row_ind, cost_by_column) of CSR and CSC arrays, each
# row's columns and each column's rows in increasing order (a pair not stored is forbidden). The
# accessors below serve both: numba compiles the form that the argument's type picks (``overload``),
# the Python forms serve the simulator. A row's entries are e = first, ..., end - 1 of
# ``row_span``; ``row_entry`` gives entry e's object and benefit (``column_*`` the same by column).

@register_jitable
def sparse_row_span(C, i, n_cols):
    return C[0][i], C[0][i + 1]


@register_jitable
def dense_row_span(C, i, n_cols):
    return 0, n_cols


@register_jitable
def sparse_row_entry(C, scale, i, e):
    return C[1][e], -scale * C[2][e]


@register_jitable
def dense_row_entry(C, scale, i, e):
    return e, -scale * C[i, e]


@register_jitable
def sparse_column_span(C, j, n_rows):
    return C[3][j], C[3][j + 1]


@register_jitable
def dense_column_span(C, j, n_rows):
    return 0, n_rows


@register_jitable
def sparse_column_entry(C, scale, j, e):
    return C[4][e], -scale * C[5][e]


@register_jitable
def dense_column_entry(C, scale, j, e):
    return e, -scale * C[e, j]


@register_jitable
def stored_at(row_ptr, col_ind, i, j):
    """The entry of pair (i, j) in CSR arrays whose rows' columns increase (bisection), or -1."""
    low = row_ptr[i]
    high = row_ptr[i + 1]
    while low < high:
        mid = (low + high) // 2
        if col_ind[mid] < j:
            low = mid + 1
        else:
            high = mid
    if low < row_ptr[i + 1] and col_ind[low] == j:
        return low
    return -1


@register_jitable
def sparse_benefit(C, scale, i, j):
    """Row i's entry for object j: -scale * c_ij, or -inf when the pair is not stored."""
    e = stored_at(C[0], C[1], i, j)
    if e >= 0:
        return -scale * C[2][e]
    return -np.inf


@register_jitable
def dense_benefit(C, scale, i, j):
    return -scale * C[i, j]


def _by_form(sparse, dense):
    """An overload's typing function: ``sparse`` for sparse costs (a tuple), else ``dense``."""
    def typer(C, *args):
        return sparse if isinstance(C, types.BaseTuple) else dense
    return typer


def row_span(C, i, n_cols):
    """(first, end) of row i's entries."""
    return (sparse_row_span if isinstance(C, tuple) else dense_row_span)(C, i, n_cols)


def row_entry(C, scale, i, e):
    """(object, benefit) of row i's entry e."""
    return (sparse_row_entry if isinstance(C, tuple) else dense_row_entry)(C, scale, i, e)


def column_span(C, j, n_rows):
    return (sparse_column_span if isinstance(C, tuple) else dense_column_span)(C, j, n_rows)


def column_entry(C, scale, j, e):
    """(person, benefit) of column j's entry e."""
    return (sparse_column_entry if isinstance(C, tuple) else dense_column_entry)(C, scale, j, e)


def benefit(C, scale, i, j):
    """-scale * c_ij, -inf where forbidden."""
    return (sparse_benefit if isinstance(C, tuple) else dense_benefit)(C, scale, i, j)


for _python_form, _sparse, _dense in ((row_span, sparse_row_span, dense_row_span),
                                      (row_entry, sparse_row_entry, dense_row_entry),
                                      (column_span, sparse_column_span, dense_column_span),
                                      (column_entry, sparse_column_entry, dense_column_entry),
                                      (benefit, sparse_benefit, dense_benefit)):
    overload(_python_form, strict=False)(_by_form(_sparse, _dense))


@register_jitable
def scan_row(C, scale, prices, i, start, stride, n_cols):
    """Best value, its object (lowest index among ties; -1 if none allowed) and second-best value
    of b_ij - p_j over row i's entries start, start + stride, ... (objects in increasing order)."""
    best = -np.inf
    best_j = -1
    second = -np.inf
    first, end = row_span(C, i, n_cols)
    for e in range(first + start, end, stride):
        j, b = row_entry(C, scale, i, e)
        best, best_j, second = top2_step(best, best_j, second, b - prices[j], j)
    return best, best_j, second


@register_jitable
def top2_step(best, best_j, second, val, j):
    """(best, its index, second best) after value ``val`` of index j (scanned in increasing j)."""
    if val > best:
        return val, j, best
    if val > second:
        return best, best_j, val
    return best, best_j, second


@register_jitable
def scan_column(C, scale, profit, j, start, stride, n_rows):
    """The reverse auction's scan: best value, its person (lowest index among ties; -1 if none
    allowed) and second-best value of b_ij - pi_i over column j's entries start, start + stride, ..."""
    best = -np.inf
    best_i = -1
    second = -np.inf
    first, end = column_span(C, j, n_rows)
    for e in range(first + start, end, stride):
        i, b = column_entry(C, scale, j, e)
        val = b - profit[i]
        if val > best:
            second = best
            best = val
            best_i = i
        elif val > second:
            second = val
    return best, best_i, second


@register_jitable
def merge_top2(b1, j1, s1, b2, j2, s2):
    """Combine two (best, index, second) partial scans; equal bests keep the lower index."""
    if b2 > b1 or (b2 == b1 and j2 >= 0 and (j1 < 0 or j2 < j1)):
        return b2, j2, max(s2, b1)
    return b1, j1, max(s1, b2)


@register_jitable
def bid_price(prices, best, j, second, eps, cap):
    """The price person's bid offers for object j: p_j + (best - second) + eps. A person with a
    single allowed object (second = -inf) raises by ``cap`` instead of infinity."""
    return raised_price(prices[j], best, second, eps, cap)


@register_jitable
def raised_price(price, best, second, eps, cap):
    """``bid_price`` from the object's price as the bidder's scan saw it."""
    if second == -np.inf:
        second = best - cap
    return price + (best - second) + eps


@register_jitable
def keeps_assignment(C, scale, prices, i, j, best, eps):
    """epsilon-complementary slackness of person i holding object j."""
    return benefit(C, scale, i, j) - prices[j] >= best - eps


@register_jitable
def award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """The winning bidder of an object takes it at its bid; the previous holder is freed."""
    award_person(U[k], bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


@register_jitable
def award_person(i, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """``award_body`` for person i."""
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
def person_profit(i, C, scale, prices, a_p, profit):
    """pi_i = b_ij - p_j at person i's object j (every person holds one when the reverse auction
    starts); returns p_j, whose minimum over the persons is lambda."""
    j = a_p[i]
    profit[i] = benefit(C, scale, i, j) - prices[j]
    return prices[j]


@register_jitable
def flag_overpriced(j, lam, prices, a_o, flags):
    """An unassigned object priced above lambda must bid in the reverse auction."""
    if a_o[j] < 0 and prices[j] > lam:
        flags[j] = 1


@register_jitable
def reverse_bid_price(lam, best, second, eps):
    """The price at which an object offers itself to its best person: max(lambda, second - eps);
    -inf when it cannot beat lambda by more than eps (lambda >= best - eps: it drops to lambda)."""
    if lam >= best - eps:
        return -np.inf
    return max(lam, second - eps)


@register_jitable
def reverse_bid_body(j, best, i, second, eps, lam, C, scale, prices, rbid_person, rbid_price, rbid_offer):
    """Object j's reverse bid: its price drops to lambda (returns -1), or it offers person i the
    profit b_ij - price (at least eps above pi_i; returns i)."""
    price = reverse_bid_price(lam, best, second, eps)
    if price == -np.inf:
        prices[j] = lam
        rbid_person[j] = -1
        return -1
    rbid_person[j] = i
    rbid_price[j] = price
    rbid_offer[j] = benefit(C, scale, i, j) - price
    return i


@register_jitable
def reverse_award_body(k, V, lam, rbid_person, rbid_price, rbid_offer, person_top, person_win, prices, a_p, a_o,
                       profit, flags):
    """The object a person takes (the highest profit offered) is assigned at its offered price;
    the person's previous object is freed, and flagged if priced above lambda; an object that lost
    stays flagged to bid again."""
    j = V[k]
    i = rbid_person[j]
    if i < 0:
        return
    if person_win[i] != j:
        flags[j] = 1
        return
    freed = reverse_take(j, i, lam, rbid_price, rbid_offer, person_top, person_win, prices, a_p, a_o, profit)
    if freed >= 0:
        flags[freed] = 1


@register_jitable
def reverse_take(j, i, lam, rbid_price, rbid_offer, person_top, person_win, prices, a_p, a_o, profit):
    """Object j takes person i (the winner of its offer) at its offered price. Returns i's previous
    object if it is now overpriced (it must bid in turn), else -1."""
    old = a_p[i]
    a_o[old] = -1
    a_o[j] = i
    a_p[i] = j
    prices[j] = rbid_price[j]
    profit[i] = rbid_offer[j]
    person_top[i] = -np.inf
    person_win[i] = NO_BIDDER
    if prices[old] > lam:
        return old
    return -1


@register_jitable
def reverse_gs_bid(j, best, i, second, eps, lam, C, scale, prices, a_p, a_o, profit):
    """One Gauss-Seidel reverse bid of object j. Returns the object freed, if it must bid next,
    else -1."""
    price = reverse_bid_price(lam, best, second, eps)
    if price == -np.inf:
        prices[j] = lam
        return -1
    old = a_p[i]
    a_o[old] = -1
    a_o[j] = i
    a_p[i] = j
    prices[j] = price
    profit[i] = benefit(C, scale, i, j) - price
    if prices[old] > lam:
        return old
    return -1


@register_jitable
def block_top2(b, j, s):
    """Combine every thread's partial (best, index, second) into the block's (a GPU's form of one
    scan over the whole row or column); every thread gets it."""
    sb = cuda.shared.array(TOP2_SHARED, float64)
    sj = cuda.shared.array(TOP2_SHARED, int32)
    ss = cuda.shared.array(TOP2_SHARED, float64)
    t = cuda.threadIdx.x
    sb[t] = b
    sj[t] = j
    ss[t] = s
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
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


@register_jitable
def row_top2(C, scale, prices, i, n_cols):
    """``scan_row`` over the whole row i, by the block."""
    b, j, s = scan_row(C, scale, prices, i, cuda.threadIdx.x, cuda.blockDim.x, n_cols)
    return block_top2(b, j, s)


@register_jitable
def column_top2(C, scale, profit, j, n_rows):
    """``scan_column`` over the whole column j, by the block."""
    b, i, s = scan_column(C, scale, profit, j, cuda.threadIdx.x, cuda.blockDim.x, n_rows)
    return block_top2(b, i, s)


# ---------------------------------------------------------------------------------------------
# the forward steps: for each, its cpu loop, its cuda kernel (same arguments) and its Kernel record

@njit(parallel=True, cache=True)
def phase_start_cpu(n_rows, n_cols, C, scale, prices, eps, a_p, a_o):
    """New epsilon: free every person whose object no longer satisfies eps-CS."""
    for i in prange(n_rows):
        j = a_p[i]
        if j < 0:
            continue
        best, _, _ = scan_row(C, scale, prices, i, 0, 1, n_cols)
        if not keeps_assignment(C, scale, prices, i, j, best, eps):
            a_p[i] = -1
            a_o[j] = -1


@cuda_kernel
def phase_start_cuda(n_rows, n_cols, C, scale, prices, eps, a_p, a_o):
    i = cuda.blockIdx.x
    j = a_p[i]
    if j < 0:
        return  # the whole block leaves together
    best, _, _ = row_top2(C, scale, prices, i, n_cols)
    if cuda.threadIdx.x == 0 and not keeps_assignment(C, scale, prices, i, j, best, eps):
        a_p[i] = -1
        a_o[j] = -1


PHASE_START = Kernel("phase_start", phase_start_cpu, phase_start_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)


@njit(parallel=True, cache=True)
def bid_cpu(n_rows, n_cols, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top):
    """Bidding: every unassigned person bids for its best object (Jacobi: all at once)."""
    for k in prange(counters[UCOUNT]):
        i = U[k]
        best, j, second = scan_row(C, scale, prices, i, 0, 1, n_cols)
        bid_obj[i] = j
        if j < 0:
            counters[INFEAS] = 1
            continue
        bid_val[i] = bid_price(prices, best, j, second, eps, cap)


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


@njit(cache=True)
def award_cpu(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o):
    """Assignment phase, step 2: winners take their objects."""
    for k in range(counters[UCOUNT]):
        award_body(k, U, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)


@njit(cache=True)
def jacobi_rounds_cpu(n_rows, n_cols, C, scale, prices, eps, cap, U, U_next, counters, bid_obj, bid_val, obj_top,
                      obj_win, a_p, a_o, threshold, max_rounds):
    """Jacobi rounds (bid, resolve, award, the unassigned compacted) until at most ``threshold``
    persons are unassigned, the problem proves infeasible, or ``max_rounds`` rounds have run
    (``U_next`` is the GPU's)."""
    rounds = 0
    while rounds < max_rounds and counters[UCOUNT] > threshold and counters[INFEAS] == 0:
        bid_cpu(n_rows, n_cols, C, scale, prices, eps, cap, U, counters, bid_obj, bid_val, obj_top)
        resolve_cpu(U, counters, bid_obj, bid_val, obj_top, obj_win)
        award_cpu(U, counters, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)
        compact_cpu(n_rows, a_p, U, counters, UCOUNT, KEEP_NEGATIVE)
        rounds += 1
    counters[JROUNDS] += rounds


@cuda_kernel
def jacobi_rounds_cuda(n_rows, n_cols, C, scale, prices, eps, cap, U, U_next, counters, bid_obj, bid_val, obj_top,
                       obj_win, a_p, a_o, threshold, max_rounds):
    """The same rounds in one cooperative launch, sized by the unassigned count (it never grows in
    a phase). Blocks stride over the bidders (a block scans a bidder's row); each object's highest
    bid by an atomic max, the lowest person among equal bids by an atomic min; the losers and the
    displaced are appended to the other list (U and U_next alternate; the order does not change a
    round's outcome, and the host compacts U in order afterwards). The lists' lengths take three
    slots of ``counters`` by round, each reset a round before it is appended to."""
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    count = counters[UCOUNT]
    rounds = 0
    # every thread reads the count and the flag after a grid sync, and they change only after the
    # next one: the whole grid leaves together
    while rounds < max_rounds and count > threshold and counters[INFEAS] == 0:
        bidders = U if rounds % 2 == 0 else U_next
        following = U_next if rounds % 2 == 0 else U
        slot = LISTS + rounds % 3
        if tid == 0:
            counters[LISTS + (rounds + 1) % 3] = 0
        for k in range(cuda.blockIdx.x, count, cuda.gridDim.x):  # the same k in every thread of the block
            i = bidders[k]
            best, j, second = row_top2(C, scale, prices, i, n_cols)
            if cuda.threadIdx.x == 0:
                bid_obj[i] = j
                if j < 0:
                    counters[INFEAS] = 1
                else:
                    price = bid_price(prices, best, j, second, eps, cap)
                    bid_val[i] = price
                    cuda.atomic.max(obj_top, j, price)
        grid.sync()
        for k in range(tid, count, threads):
            i = bidders[k]
            j = bid_obj[i]
            if j >= 0 and bid_val[i] == obj_top[j]:
                cuda.atomic.min(obj_win, j, i)
        grid.sync()
        for k in range(tid, count, threads):
            i = bidders[k]
            j = bid_obj[i]
            if j >= 0 and obj_win[j] == i:
                old = a_o[j]  # only j's winner writes it
                award_person(i, bid_obj, bid_val, obj_top, obj_win, prices, a_p, a_o)
                if old >= 0:
                    following[cuda.atomic.add(counters, slot, 1)] = old
            else:
                following[cuda.atomic.add(counters, slot, 1)] = i
        grid.sync()
        count = counters[slot]
        rounds += 1
    grid.sync()  # every thread has read the lengths
    if tid == 0:
        counters[UCOUNT] = count
        counters[JROUNDS] += rounds
        for k in range(LISTS, LISTS + 3):
            counters[k] = 0


# one launch for many rounds: numba-cuda spends tens of microseconds of host time on each launch,
# and at n = 8000 four launches a round had cost more than the rounds' work
JACOBI = Kernel("jacobi_rounds", jacobi_rounds_cpu, jacobi_rounds_cuda, COOPERATIVE, threads=ROW_BLOCK)


@njit(cache=True)
def gs_tail_cpu(n_rows, n_cols, C, scale, prices, eps, cap, U, counters, a_p, a_o, locks, budget):
    """Gauss-Seidel auction for the last few unassigned persons: one bid at a time, the freed
    person bidding next (a stack on U), at most ``budget`` bids. U is compacted afterwards (the
    GPU's form leaves it so; ``locks`` is the GPU's)."""
    top = counters[UCOUNT]
    bids = 0
    while top > 0 and bids < budget:
        i = U[top - 1]
        best, j, second = scan_row(C, scale, prices, i, 0, 1, n_cols)
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


if numba_config.ENABLE_CUDASIM:
    @register_jitable
    def load_coherent(array, k):
        return array[k]  # the simulator runs one block at a time
else:
    @register_jitable
    def load_coherent(array, k):
        """array[k] from L2 (ld.global.cg): what other SMs wrote, where an SM's L1 may hold an
        older copy."""
        return cuda.ldcg(array, k)


@register_jitable
def scan_row_coherent(C, scale, prices, i, start, stride, n_cols):
    """``scan_row`` reading the prices that other blocks raise during the parallel tail."""
    best = -np.inf
    best_j = -1
    second = -np.inf
    first, end = row_span(C, i, n_cols)
    for e in range(first + start, end, stride):
        j, b = row_entry(C, scale, i, e)
        best, best_j, second = top2_step(best, best_j, second, b - load_coherent(prices, j), j)
    return best, best_j, second


@register_jitable
def next_person(U, counters):
    """The next unassigned person from the top of U's stack, or -1 (UCOUNT may go below 0: the
    host compacts U after the launch)."""
    k = cuda.atomic.add(counters, UCOUNT, -1)
    if k > 0:
        return U[k - 1]
    return -1


@register_jitable
def claim(i, best, j, second, eps, cap, C, scale, prices, a_p, a_o, locks):
    """Person i's bid for object j, made under j's lock only if j's price is still the one i's scan
    saw (prices only rise). Returns the person displaced, -1 if j was free, or i again if the
    price had moved (i scans again). Other objects' prices may have risen since the scan: that
    only lowers i's second best, so the bid still leaves i within epsilon of its best."""
    while cuda.atomic.cas(locks, j, 0, 1) != 0:
        pass
    cuda.threadfence()
    price = load_coherent(prices, j)
    result = i
    if benefit(C, scale, i, j) - price == best:
        old = load_coherent(a_o, j)
        prices[j] = raised_price(price, best, second, eps, cap)
        a_o[j] = i
        a_p[i] = j
        if old >= 0:
            a_p[old] = -1
        result = old
    cuda.threadfence()
    cuda.atomic.exch(locks, j, 0)
    return result


@cuda_kernel
def gs_tail_cuda(n_rows, n_cols, C, scale, prices, eps, cap, U, counters, a_p, a_o, locks, budget):
    """The tail in parallel (Bertsekas & Castanon's asynchronous auction): a block per unassigned
    person, each scanning its person's row and bidding as one bid of the cpu's loop does, under
    the object's lock (``claim``); a block continues with the person it displaced, or takes the
    next one from U, until ``budget`` bids have begun in the launch. Run one block at a time (the
    simulator), it makes the cpu's bids in the cpu's order."""
    person = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        person[0] = next_person(U, counters)
    cuda.syncthreads()
    while True:
        if t == 0 and person[0] >= 0:
            if load_coherent(counters, INFEAS) != 0 or cuda.atomic.add(counters, TAIL_TRIES, 1) >= budget:
                person[0] = -1
        cuda.syncthreads()
        i = person[0]
        if i < 0:
            break
        b, k, s = scan_row_coherent(C, scale, prices, i, t, cuda.blockDim.x, n_cols)
        best, j, second = block_top2(b, k, s)
        if t == 0:
            if j < 0:
                counters[INFEAS] = 1
                person[0] = -1
            else:
                following = claim(i, best, j, second, eps, cap, C, scale, prices, a_p, a_o, locks)
                person[0] = following if following >= 0 else next_person(U, counters)
        cuda.syncthreads()
    if t == 0:
        cuda.threadfence()
        if cuda.atomic.add(counters, TAIL_DONE, 1) == cuda.gridDim.x - 1:  # the last block out
            tries = cuda.atomic.exch(counters, TAIL_TRIES, 0)
            counters[BIDS] += min(tries, budget)
            counters[TAIL_DONE] = 0


# a block per unassigned person (size: their count)
GS_TAIL = Kernel("gs_tail", gs_tail_cpu, gs_tail_cuda, BLOCK_PER_ITEM, threads=TAIL_BLOCK)


# ---------------------------------------------------------------------------------------------
# the reverse steps (rectangular problems: n_rows < n_cols)

@njit(cache=True)
def reverse_start_cpu(n_rows, n_cols, C, scale, prices, a_p, a_o, profit, lam, flags):
    """After a forward phase (every person assigned): the persons' profits, lambda, and the flags
    of the unassigned objects priced above it."""
    low = np.inf
    for i in range(n_rows):
        low = min(low, person_profit(i, C, scale, prices, a_p, profit))
    lam[0] = low
    for j in range(n_cols):
        flag_overpriced(j, low, prices, a_o, flags)


@cuda_kernel
def reverse_start_cuda(n_rows, n_cols, C, scale, prices, a_p, a_o, profit, lam, flags):
    """The same in one block: strided profits and partial minima, a shared-memory tree minimum,
    then strided flags."""
    sh = cuda.shared.array(ROW_BLOCK, float64)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    low = np.inf
    for i in range(t, n_rows, nt):
        low = min(low, person_profit(i, C, scale, prices, a_p, profit))
    sh[t] = low
    cuda.syncthreads()
    step = nt // 2
    while step > 0:
        if t < step and sh[t + step] < sh[t]:
            sh[t] = sh[t + step]
        cuda.syncthreads()
        step //= 2
    low = sh[0]
    if t == 0:
        lam[0] = low
    for j in range(t, n_cols, nt):
        flag_overpriced(j, low, prices, a_o, flags)


REVERSE_START = Kernel("reverse_start", reverse_start_cpu, reverse_start_cuda, ONE_BLOCK, threads=ROW_BLOCK)


@njit(parallel=True, cache=True)
def reverse_bid_cpu(n_rows, C, scale, eps, lam, V, counters, profit, prices, rbid_person, rbid_price, rbid_offer,
                    person_top):
    """Reverse bidding: every flagged object bids for its best person (Jacobi: all at once)."""
    for k in prange(counters[VCOUNT]):
        j = V[k]
        best, i, second = scan_column(C, scale, profit, j, 0, 1, n_rows)
        reverse_bid_body(j, best, i, second, eps, lam[0], C, scale, prices, rbid_person, rbid_price, rbid_offer)


@njit(cache=True)
def reverse_resolve_cpu(V, counters, rbid_person, rbid_offer, person_top, person_win):
    """Each person's highest offer, the lowest object among equal offers."""
    for k in range(counters[VCOUNT]):
        j = V[k]
        i = rbid_person[j]
        if i < 0:
            continue
        if rbid_offer[j] > person_top[i] or (rbid_offer[j] == person_top[i] and j < person_win[i]):
            person_top[i] = rbid_offer[j]
            person_win[i] = j


@njit(cache=True)
def reverse_award_cpu(V, counters, lam, rbid_person, rbid_price, rbid_offer, person_top, person_win, prices, a_p,
                      a_o, profit, flags):
    for k in range(counters[VCOUNT]):
        reverse_award_body(k, V, lam[0], rbid_person, rbid_price, rbid_offer, person_top, person_win, prices, a_p,
                           a_o, profit, flags)




@njit(cache=True)
def reverse_jacobi_rounds_cpu(n_rows, n_cols, C, scale, eps, lam, V, V_next, counters, profit, prices, rbid_person,
                              rbid_price, rbid_offer, person_top, person_win, a_p, a_o, flags, threshold, max_rounds):
    """Reverse Jacobi rounds (bid, resolve, award, the flagged objects compacted) until at most
    ``threshold`` objects are flagged or ``max_rounds`` rounds have run (``V_next`` is the GPU's).
    The objects left in V are flagged again at the end, as the GPU's form leaves them: the host's
    compaction after the launch rebuilds V from the flags (the rounds' own compaction clears them)."""
    rounds = 0
    while rounds < max_rounds and counters[VCOUNT] > threshold:
        reverse_bid_cpu(n_rows, C, scale, eps, lam, V, counters, profit, prices, rbid_person, rbid_price, rbid_offer,
                        person_top)
        reverse_resolve_cpu(V, counters, rbid_person, rbid_offer, person_top, person_win)
        reverse_award_cpu(V, counters, lam, rbid_person, rbid_price, rbid_offer, person_top, person_win, prices, a_p,
                          a_o, profit, flags)
        compact_cpu(n_cols, flags, V, counters, VCOUNT, KEEP_FLAGGED)
        rounds += 1
    for k in range(counters[VCOUNT]):
        flags[V[k]] = 1
    counters[RJROUNDS] += rounds


@cuda_kernel
def reverse_jacobi_rounds_cuda(n_rows, n_cols, C, scale, eps, lam, V, V_next, counters, profit, prices, rbid_person,
                               rbid_price, rbid_offer, person_top, person_win, a_p, a_o, flags, threshold,
                               max_rounds):
    """The same rounds in one cooperative launch, as ``jacobi_rounds_cuda`` runs the forward ones:
    a block per bidding object's column, atomics for each person's best offer and its lowest
    object, the losers and the freed overpriced objects appended to the other list (V and V_next
    alternate). The flags stay clear during the rounds; the last list's objects are flagged at the
    end, for the host's ordered compaction."""
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    count = counters[VCOUNT]
    rounds = 0
    bidders = V
    while rounds < max_rounds and count > threshold:
        bidders = V if rounds % 2 == 0 else V_next
        following = V_next if rounds % 2 == 0 else V
        slot = LISTS + rounds % 3
        if tid == 0:
            counters[LISTS + (rounds + 1) % 3] = 0
        for k in range(cuda.blockIdx.x, count, cuda.gridDim.x):  # the same k in every thread of the block
            j = bidders[k]
            best, i, second = column_top2(C, scale, profit, j, n_rows)
            if cuda.threadIdx.x == 0:
                if reverse_bid_body(j, best, i, second, eps, lam[0], C, scale, prices, rbid_person, rbid_price,
                                    rbid_offer) >= 0:
                    cuda.atomic.max(person_top, i, rbid_offer[j])
        grid.sync()
        for k in range(tid, count, threads):
            j = bidders[k]
            i = rbid_person[j]
            if i >= 0 and rbid_offer[j] == person_top[i]:
                cuda.atomic.min(person_win, i, j)
        grid.sync()
        for k in range(tid, count, threads):
            j = bidders[k]
            i = rbid_person[j]
            if i < 0:
                continue  # its price dropped to lambda: no longer flagged
            if person_win[i] != j:
                following[cuda.atomic.add(counters, slot, 1)] = j  # it lost: it bids again
                continue
            freed = reverse_take(j, i, lam[0], rbid_price, rbid_offer, person_top, person_win, prices, a_p, a_o,
                                 profit)
            if freed >= 0:
                following[cuda.atomic.add(counters, slot, 1)] = freed
        grid.sync()
        count = counters[slot]
        bidders = following
        rounds += 1
    for k in range(tid, count, threads):
        flags[bidders[k]] = 1
    grid.sync()  # every thread has read the lengths
    if tid == 0:
        counters[VCOUNT] = count
        counters[RJROUNDS] += rounds
        for k in range(LISTS, LISTS + 3):
            counters[k] = 0


# one launch for many rounds, as the forward JACOBI
REVERSE_JACOBI = Kernel("reverse_jacobi_rounds", reverse_jacobi_rounds_cpu, reverse_jacobi_rounds_cuda, COOPERATIVE,
                        threads=ROW_BLOCK)


@njit(cache=True)
def reverse_gs_tail_cpu(n_rows, C, scale, eps, lam, V, counters, profit, prices, a_p, a_o, budget):
    """Gauss-Seidel reverse auction for the last few flagged objects: one bid at a time, the
    object freed bidding next (a stack on V), at most ``budget`` bids."""
    top = counters[VCOUNT]
    bids = 0
    while top > 0 and bids < budget:
        j = V[top - 1]
        best, i, second = scan_column(C, scale, profit, j, 0, 1, n_rows)
        freed = reverse_gs_bid(j, best, i, second, eps, lam[0], C, scale, prices, a_p, a_o, profit)
        if freed >= 0:
            V[top - 1] = freed
        else:
            top -= 1
        bids += 1
    counters[VCOUNT] = top
    counters[RBIDS] += bids


@cuda_kernel
def reverse_gs_tail_cuda(n_rows, C, scale, eps, lam, V, counters, profit, prices, a_p, a_o, budget):
    """The same in one block: the block scans each bidder's column, thread 0 applies the bid."""
    top = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        top[0] = counters[VCOUNT]
    cuda.syncthreads()
    bids = 0
    while top[0] > 0 and bids < budget:  # every thread sees the same top after the sync
        j = V[top[0] - 1]
        best, i, second = column_top2(C, scale, profit, j, n_rows)
        if t == 0:
            freed = reverse_gs_bid(j, best, i, second, eps, lam[0], C, scale, prices, a_p, a_o, profit)
            if freed >= 0:
                V[top[0] - 1] = freed
            else:
                top[0] -= 1
        bids += 1
        cuda.syncthreads()
    if t == 0:
        counters[VCOUNT] = top[0]
        counters[RBIDS] += bids


REVERSE_GS_TAIL = Kernel("reverse_gs_tail", reverse_gs_tail_cpu, reverse_gs_tail_cuda, ONE_BLOCK, threads=ROW_BLOCK)


@njit(cache=True)
def settle_free_prices_cpu(n_cols, lam, prices, a_o):
    """At the end: every unassigned object (priced at most lambda) at lambda, so that shifted by
    lambda its potential is the rectangular LP's 0 and the assigned ones' are <= 0."""
    for j in range(n_cols):
        if a_o[j] < 0:
            prices[j] = lam[0]


@cuda_kernel
def settle_free_prices_cuda(n_cols, lam, prices, a_o):
    j = cuda.grid(1)
    if j < n_cols and a_o[j] < 0:
        prices[j] = lam[0]


SETTLE_FREE_PRICES = Kernel("settle_free_prices", settle_free_prices_cpu, settle_free_prices_cuda, EACH)


# ---------------------------------------------------------------------------------------------

@njit(parallel=True, cache=True)
def person_values_cpu(n_rows, n_cols, C, scale, prices, values):
    """pi_i = max_j (b_ij - p_j): the persons' dual values."""
    for i in prange(n_rows):
        best, _, _ = scan_row(C, scale, prices, i, 0, 1, n_cols)
        values[i] = best


@cuda_kernel
def person_values_cuda(n_rows, n_cols, C, scale, prices, values):
    i = cuda.blockIdx.x
    best, _, _ = row_top2(C, scale, prices, i, n_cols)
    if cuda.threadIdx.x == 0:
        values[i] = best


PERSON_VALUES = Kernel("person_values", person_values_cpu, person_values_cuda, BLOCK_PER_ITEM, threads=ROW_BLOCK)

KERNELS = (PHASE_START, JACOBI, GS_TAIL, REVERSE_START, REVERSE_JACOBI, REVERSE_GS_TAIL, SETTLE_FREE_PRICES,
           PERSON_VALUES)


@dataclass(frozen=True)
class Steps:
    """The kernels a solve launches, for one form of costs."""

    phase_start: Kernel
    jacobi: Kernel
    tail: Kernel
    reverse_start: Kernel
    reverse_jacobi: Kernel
    reverse_tail: Kernel
    settle_free_prices: Kernel
    person_values: Kernel


DENSE_STEPS = Steps(*KERNELS)
# a sparse row or column holds a few entries: a warp scans it instead of a block, so that many more
# persons bid at once (the same kernels, compiled for the sparse costs' type, launched narrower)
SPARSE_BLOCK = WARP_SIZE


def _narrow(kernel: Kernel) -> Kernel:
    return replace(kernel, name=kernel.name + ".sparse", threads=SPARSE_BLOCK)


SPARSE_STEPS = Steps(_narrow(PHASE_START), _narrow(JACOBI), _narrow(GS_TAIL), REVERSE_START, _narrow(REVERSE_JACOBI),
                     _narrow(REVERSE_GS_TAIL), SETTLE_FREE_PRICES, _narrow(PERSON_VALUES))
SPARSE_KERNELS = tuple(k for k in vars(SPARSE_STEPS).values() if k.name.endswith(".sparse"))


def steps_for(C) -> Steps:
    """The steps for costs ``C``: sparse costs come as a tuple of arrays."""
    return SPARSE_STEPS if isinstance(C, tuple) else DENSE_STEPS
