"""GPU Hungarian, tree variant: the whole alternating-tree loop in one cooperative kernel.

Apart from ``hungarian_kernels`` (whose bodies and counter slots it uses) because it is a step of
its own: the host loop's steps separated by grid-wide barriers instead of launches, so thousands of
BFS levels cost microseconds each instead of a host round trip. It has no cpu form (``SOLVE_TREE.cpu``
is None): on the cpu target the host loop runs the same steps as plain calls. Imported only when a
run starts (numba.cuda); the kernel cache is keyed by a hash of every compiled source
(``solvers.targets.cache``), so an edit to the bodies it imports starts a fresh cache too.

Geometry: blocks of BLOCK threads (``solvers.targets.geometry``), one per tile of TILE_COLS columns
as far as they can be co-resident (``Kernel.tiles``), one block of ``Kernel.sim_threads`` under the
simulator. A tile is TILE_COLS columns x (block size / TILE_COLS) slices of the frontier rows:
folding the frontier into a column is a chain of dependent loads (row index, then cost), so its
latency, not bandwidth, bounds a BFS level: 16 slices cut the chain 16-fold, while 16 consecutive
columns (64 B of float32) keep a half warp's loads on whole 32-byte sectors. A block smaller than
two tiles' columns (the simulator's) uses half its threads as columns and two slices.
"""
from __future__ import annotations

import numpy as np
from numba import float64, int32
from numba.extending import register_jitable

from ..targets.cuda_jit import cuda_kernel
from ..targets.kernel import COOPERATIVE, Kernel
from .hungarian_kernels import (AUGMENTED, BLOCK, DELTA, DUALS, FOUND0, FREE, FREE_COL, FRONT, INFEAS, ITERS, KEPT,
                                LEVELS, MIN0, QUEUE0, WALKED, augment_body, reverse_body)

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

TILE_COLS = 16  # columns per tile on a GPU (an algorithm parameter: see the module docstring)
TILE_SLICES = BLOCK // TILE_COLS  # slices of the frontier rows per tile on a GPU
# the forest is kept after an iteration that augmented at most this many paths (the single-path
# tail of real costs); after more, the trees to prune and the columns to refold are many, and
# rebuilding from the free rows measured faster (8000 x 8000 integer costs: 93 ms against 73)
KEEP_FOREST_PATHS = 1


@register_jitable
def queue_column(j, Ac, Vc, Pr, Pc, Rr, Rc, col_rev, counters, queue, qslot, fslot):
    """Column j became tight (its predecessor Pc[j] is set): it joins its predecessor's tree (Rr,
    Rc: the root row of each forest vertex); a free column ends an augmenting path (counted, and
    kept in FREE_COL: the path's end when it is the phase's only one); an assigned
    one is covered and its row appended to the next frontier (an atomic queue instead of the flag
    array + block-0 prefix sum; a row is queued at most once per phase). The row's Vr is cleared
    when that frontier is expanded, not here: the dual pass reads Vr while it queues. Pc[j] was
    in the forest before this pass, so its Rr is not being written now."""
    Vc[j] = 1
    root = Rr[Pc[j]]
    Rc[j] = root
    i = Ac[j]
    if i < 0:
        col_rev[j] = 1
        cuda.atomic.add(counters, fslot, 1)
        counters[FREE_COL] = j
    else:
        Pr[i] = j
        Rr[i] = root
        queue[cuda.atomic.add(counters, qslot, 1)] = i


@register_jitable
def forward_tiles(n_cols, C, u, v, Ac, Vc, Pr, Pc, Rr, Rc, slack, col_rev, counters, scal, cur, fsize, nxt, qnext,
                  fnext, min_slot, sh_val, sh_row, tol, tile_cols, slices, refresh):
    """One BFS level of the forward pass, by tiles of ``tile_cols`` columns x ``slices`` slices of
    the frontier rows ``cur[:fsize]`` (this block's tiles, grid-stride): each column folds its
    slice's rows into a minimum slack and predecessor (coalesced loads along a row), the slices'
    minima meet in shared memory; a column that becomes tight is queued, and the block's minimum
    uncovered slack goes to ``scal[min_slot]`` (one atomic per block). ``refresh``: the frontier
    is the whole forest after a pruning, and only columns whose slack was cleared (infinite) fold
    it; every uncovered column's slack still enters the minimum. Inlined at each call site, so a
    constant tile shape folds into the loops.

    A level on a short frontier (the tail of real costs: one row) is a chain of dependent loads
    between two grid barriers, so the column's state and the slice's first row are loaded
    together, before anything branches on them, and kept in registers for the merge."""
    t = cuda.threadIdx.x
    lane = t % tile_cols
    piece = t // tile_cols
    n_tiles = (n_cols + tile_cols - 1) // tile_cols
    low = np.inf
    for tile in range(cuda.blockIdx.x, n_tiles, cuda.gridDim.x):  # the same count in a block
        j = tile * tile_cols + lane
        inside = j < n_cols
        at = j if inside else n_cols - 1  # in bounds: every load below is issued unconditionally
        covered = Vc[at]
        vj = v[at]
        slack_j = slack[at]
        pred_j = Pc[at]
        first = cur[piece] if piece < fsize else 0
        active = inside and covered == 0
        best = np.inf
        best_row = -1
        fold = active
        if fold and refresh:
            fold = slack_j == np.inf
        if fold and piece < fsize and piece + slices >= fsize:  # this slice holds one row (a short frontier)
            best = C[first, j] - u[first] - vj
            best_row = first
        elif fold:  # this slice's rows, two at a time (two loads in flight), in order
            k = piece
            while k + slices < fsize:
                i0 = cur[k]
                i1 = cur[k + slices]
                d0 = C[i0, j] - u[i0] - vj
                d1 = C[i1, j] - u[i1] - vj
                if d0 < best:
                    best = d0
                    best_row = i0
                if d1 < best:
                    best = d1
                    best_row = i1
                k += 2 * slices
            if k < fsize:
                i0 = cur[k]
                d0 = C[i0, j] - u[i0] - vj
                if d0 < best:
                    best = d0
                    best_row = i0
        sh_val[t] = best
        sh_row[t] = best_row
        cuda.syncthreads()
        if piece == 0 and active:
            best = slack_j
            best_row = pred_j
            for q in range(slices):
                d = sh_val[q * tile_cols + lane]
                if d < best:
                    best = d
                    best_row = sh_row[q * tile_cols + lane]
            slack[j] = best
            Pc[j] = best_row
            if best <= tol:
                queue_column(j, Ac, Vc, Pr, Pc, Rr, Rc, col_rev, counters, nxt, qnext, fnext)
            elif best < low:
                low = best
        cuda.syncthreads()
    sh_val[t] = low  # the block's minimum uncovered slack, one atomic per block
    cuda.syncthreads()
    if t == 0:
        for q in range(1, tile_cols):
            if sh_val[q] < low:
                low = sh_val[q]
        if low < np.inf:
            cuda.atomic.min(scal, min_slot, low)
    cuda.syncthreads()


@register_jitable
def flip_single_path(j, Pc, Pr, Ar, Ac, col_rev, done, path_len, mark):
    """The phase's only augmenting path, flipped by one thread walking back from its free column
    j: each column takes its predecessor row, whose own column (Pr: the one it joined the forest
    through) is the next step, up to the root (Pr -1). One walk instead of the reverse and the
    augmentation passes (two walks of the same path, a barrier between them): there is no other
    path to race with. The root is marked with ``mark`` (the iteration, as the augmentation pass
    marks it)."""
    col_rev[j] = 0
    c = np.int64(j)
    length = 0
    while True:
        r = Pc[c]
        nxt = Pr[r]
        Ar[r] = c
        Ac[c] = r
        length += 1
        if nxt < 0:
            break
        c = nxt
    done[r] = mark
    path_len[r] = 2 * length - 1  # edges on the path


# Two blocks per multiprocessor at least: the kernel sits near 128 registers a thread, and one more
# would halve the blocks that fit at once (264 to 132 on an H200): each block then takes twice the
# tiles of a level (measured: 8000 x 8000 integer costs, 106 ms against 77). The bound makes the
# compiler spill a little instead.
@cuda_kernel(launch_bounds=(BLOCK, 2))
def solve_tree_cuda(n_rows, n_cols, C, u, v, Ar, Ac, Vr, Vc, Pr, Pc, Sr, Sc, Rr, Rc, done, slack, F, F2, root_aug,
                    path_len, col_rev, counters, scal, matched_log, log_start, max_iters, tol):
    """The steps of the host loop (optimality check, BFS levels, dual updates, reverse and
    augmentation passes, or one walk for a phase's only path: flip_single_path), separated by
    grid-wide barriers; every branch is taken by all threads alike, on values read after a
    barrier. Stops when all rows are assigned, when infeasible, or after ``max_iters``
    augmentations (the host relaunches; with a listener it reports each one).

    One barrier per BFS level and one per dual update. Pass p reads the frontier length and the
    minimum uncovered slack from slots p % 3, appends the next frontier (F / F2 alternate) and
    folds the new minimum into slots (p + 1) % 3, and resets slots (p + 2) % 3, which every
    thread finished reading before the previous barrier. The forward pass works on tiles of
    columns x slices of the frontier rows (coalesced loads along a row, the slices' minima merged
    in shared memory) and produces the minimum slack for the dual update, so a dual update is one
    pass: u, v, slacks, and the columns it makes tight. Rows <= columns: a pass over both sides
    runs over the n_cols columns, element k also doing row k when k < n_rows.

    The forest is kept between augmentations (in the tail of a run on real costs, each phase
    augments a single path, and rebuilding the whole forest from the free rows took most of its
    BFS levels). Only the trees that augmented leave it: their rows (``done[root]``: the number of
    the iteration that augmented from that root, counting from 1 over the whole solve) and
    columns; an uncovered column whose slack came from one of their rows has it cleared. The next
    phase's first pass is the rest of the forest as one frontier, which refolds those columns
    alone: the other columns' minima were reached on rows still in the forest. Every invariant of
    the restarted search holds for the kept trees: their edges are tight and a dual update moves
    all of them alike. A launch starts from an empty forest."""
    sh_val = cuda.shared.array(BLOCK, float64)
    sh_row = cuda.shared.array(BLOCK, int32)
    grid = cuda.cg.this_grid()
    g = cuda.grid(1)
    stride = cuda.gridsize(1)
    nt = cuda.blockDim.x
    if g == 0:
        for q in range(3):
            counters[QUEUE0 + q] = 0
            counters[FOUND0 + q] = 0
            scal[MIN0 + q] = np.inf
        counters[FREE] = 0
        counters[AUGMENTED] = 0
    grid.sync()
    p = 0  # pass number, the same in every thread
    it = 0
    pruned = 0  # the iteration whose trees leave the forest now: none at a launch's start
    refresh = False  # the next forward pass refolds the kept forest into the cleared columns
    while True:
        # optimality check: count the free rows; clear the forest (at a launch's start) or prune
        # the trees that augmented; the forest's rows are the next frontier
        qnext = QUEUE0 + (p + 1) % 3
        nxt = F if (p + 1) % 2 == 0 else F2
        if counters[AUGMENTED] > KEEP_FOREST_PATHS:
            pruned = 0
        for k in range(g, n_cols, stride):
            if k < n_rows:
                if pruned == 0:
                    Vr[k] = 1 if Ar[k] >= 0 else 0
                    Pr[k] = -1
                    Sr[k] = -1
                    root_aug[k] = 0
                    Rr[k] = k
                elif Vr[k] == 0 and done[Rr[k]] == pruned:
                    Vr[k] = 1
                    Pr[k] = -1
                if Ar[k] < 0:
                    cuda.atomic.add(counters, FREE, 1)
                if Vr[k] == 0:
                    nxt[cuda.atomic.add(counters, qnext, 1)] = k
            if pruned == 0:
                Vc[k] = 0
                Pc[k] = -1
                slack[k] = np.inf
            elif Vc[k] != 0:
                if done[Rc[k]] == pruned:
                    Vc[k] = 0
                    Pc[k] = -1
                    slack[k] = np.inf
            elif Pc[k] >= 0:
                if done[Rr[Pc[k]]] == pruned:
                    Pc[k] = -1
                    slack[k] = np.inf
            Sc[k] = -1
            col_rev[k] = 0
        if g == 0:
            counters[QUEUE0 + (p + 2) % 3] = 0
            counters[FOUND0 + (p + 2) % 3] = 0
            scal[MIN0 + (p + 2) % 3] = np.inf
        refresh = pruned != 0
        grid.sync()
        p += 1
        free = counters[FREE]
        stop = counters[INFEAS] != 0
        if g == 0:
            matched_log[log_start + it] = n_rows - free
        if free == 0 or stop or it >= max_iters:
            break
        if g == 0 and refresh:
            counters[KEPT] += 1
        reached = 0  # free columns reached in this phase (the same in every thread)
        while True:  # augmenting path search, one pass per barrier
            fsize = counters[QUEUE0 + p % 3]
            reached += counters[FOUND0 + p % 3]
            found = reached != 0
            qnext = QUEUE0 + (p + 1) % 3
            fnext = FOUND0 + (p + 1) % 3
            cur = F if p % 2 == 0 else F2
            nxt = F if (p + 1) % 2 == 0 else F2
            if fsize == 0 and found:
                break  # every tree has stopped growing; some reached a free column
            if g == 0:
                counters[QUEUE0 + (p + 2) % 3] = 0
                counters[FOUND0 + (p + 2) % 3] = 0
                scal[MIN0 + (p + 2) % 3] = np.inf
            if fsize == 0:  # dual update by the minimum slack the last forward pass left
                delta = scal[MIN0 + p % 3]
                if delta == np.inf:  # Hall's condition fails
                    if g == 0:
                        counters[INFEAS] = 1
                    stop = True
                    break
                if g == 0:
                    scal[DELTA] = delta
                    counters[DUALS] += 1
                for k in range(g, n_cols, stride):
                    row = k < n_rows  # both sides' state first, loaded together
                    in_forest = Vr[k] == 0 if row else False
                    uk = u[k] if row else 0.0
                    covered = Vc[k] != 0
                    vk = v[k]
                    sk = slack[k]
                    if in_forest:
                        u[k] = uk + delta
                    if covered:
                        v[k] = vk - delta
                    else:
                        s = sk - delta
                        slack[k] = s
                        if s <= tol:  # the column the minimum came from, and ties
                            queue_column(k, Ac, Vc, Pr, Pc, Rr, Rc, col_rev, counters, nxt, qnext, fnext)
            else:  # forward pass, one BFS level
                if g == 0:
                    counters[LEVELS] += 1
                if nt == BLOCK:  # a GPU: the tile's shape is a compile-time constant
                    forward_tiles(n_cols, C, u, v, Ac, Vc, Pr, Pc, Rr, Rc, slack, col_rev, counters, scal, cur,
                                  fsize, nxt, qnext, fnext, MIN0 + (p + 1) % 3, sh_val, sh_row, tol, TILE_COLS,
                                  TILE_SLICES, refresh)
                else:  # the simulator's small blocks: half the threads are columns, two slices
                    half = max(1, nt // 2)
                    forward_tiles(n_cols, C, u, v, Ac, Vc, Pr, Pc, Rr, Rc, slack, col_rev, counters, scal, cur,
                                  fsize, nxt, qnext, fnext, MIN0 + (p + 1) % 3, sh_val, sh_row, tol, half,
                                  nt // half, refresh)
                for k in range(g, fsize, stride):  # after the level: nothing in it reads Vr
                    Vr[cur[k]] = 0  # the frontier's rows are in the forest (uncovered)
                refresh = False
            grid.sync()
            p += 1
        if stop:
            break
        pruned = log_start + it + 1  # never 0: done[] starts at 0, and a root augments once
        if reached == 1:  # one path (the tail of real costs): one thread flips it
            if g == 0:  # FREE and AUGMENTED were read by every thread before the last barrier
                flip_single_path(counters[FREE_COL], Pc, Pr, Ar, Ac, col_rev, done, path_len, pruned)
                counters[FREE] = 0
                counters[AUGMENTED] = 1
                counters[WALKED] += 1
            grid.sync()
        else:
            for j in range(g, n_cols, stride):  # reverse pass
                reverse_body(j, col_rev, Pc, Pr, Sc, Sr, root_aug)
            if g == 0:  # both read by every thread before the last barrier; counted again next
                counters[FREE] = 0
                counters[AUGMENTED] = 0
            grid.sync()
            for i in range(g, n_rows, stride):  # augmentation pass
                if root_aug[i] != 0:
                    done[i] = pruned
                    cuda.atomic.add(counters, AUGMENTED, 1)
                augment_body(i, root_aug, Sr, Sc, Ar, Ac, path_len)
            grid.sync()
        it += 1
    if g == 0:
        counters[ITERS] = it
        counters[FRONT] = free


SOLVE_TREE = Kernel("solve_tree", None, solve_tree_cuda, COOPERATIVE, threads=BLOCK, tiles=TILE_COLS)
