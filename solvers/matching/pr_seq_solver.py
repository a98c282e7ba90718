"""pr-seq: sequential push-relabel maximum cardinality bipartite matching (CPU, numba).

The PR baseline of Deveci et al. (ICPP 2013, Algorithm 1 + 2), after Kaya et al.: ψ labels on
rows and columns are lower bounds on the alternating-path distance to an unmatched row. Active
(unmatched, ψ < m+n) columns are processed FIFO; a column v pushes to its neighbour row u of
minimum ψ (single push if u is free, double push otherwise: u's old mate becomes active), then
ψ(v) = ψ(u)+1 and ψ(u) = ψ(u)+2. A column whose neighbours all have ψ >= m+n can reach no free
row and is dropped. A global relabel (BFS from the free rows, exact distances, m+n for the
unreachable) runs first and then after every k·(m+n) pushes. m = rows, n = columns.

All state lives in numpy arrays, so the numba loop can stop after a chunk of pushes (for
telemetry) and resume exactly where it left off: chunked and unchunked runs do the same steps.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..errors import BackendUnavailable, InputError
from ..problems import BipartiteGraph
from ..result import Solution
from .cheap import cheap_matching, empty_matching

# slots of the int64 ``state`` array shared by Python and the numba loop
HEAD, SIZE, PUSHES, SINCE_RELABEL, RELABELS, MATCHED, RELABEL_DUE, MAX_LEVEL, UNREACHABLE = range(9)
STATE_SLOTS = 9
# why the numba loop returned
DONE, CHUNK_END, RELABELLED = 0, 1, 2

NEVER = np.iinfo(np.int64).max // 4
CHUNK_CAP = 1 << 14  # pushes per telemetry chunk at most, so cancelling stays responsive


@njit(cache=True)
def _global_relabel(row_ptr, col_ind, row_match, col_match, psi_row, psi_col, bfs, state):
    """Exact ψ by BFS from the free rows; unreachable vertices get m+n. Records max level / unreachable."""
    n_rows, n_cols = psi_row.size, psi_col.size
    cap = n_rows + n_cols
    psi_col[:] = cap
    tail = 0
    for r in range(n_rows):
        if row_match[r] < 0:
            psi_row[r] = 0
            bfs[tail] = r
            tail += 1
        else:
            psi_row[r] = cap
    reached = tail
    max_level = 0
    head = 0
    while head < tail:
        r = bfs[head]
        head += 1
        for e in range(row_ptr[r], row_ptr[r + 1]):
            c = col_ind[e]
            if psi_col[c] == cap:
                psi_col[c] = psi_row[r] + 1
                reached += 1
                level = psi_col[c]
                w = col_match[c]
                if w >= 0:  # c's mate is reached through the matched edge
                    psi_row[w] = level + 1
                    bfs[tail] = w
                    tail += 1
                    reached += 1
                    level += 1
                if level > max_level:
                    max_level = level
    state[MAX_LEVEL] = max_level
    state[UNREACHABLE] = cap - reached


@njit(cache=True)
def _filter_queue(queue, psi_col, label_cap, state):
    """Remove columns labelled ``label_cap`` from the circular queue, keeping FIFO order."""
    size, head, cap = state[SIZE], state[HEAD], queue.size
    kept = 0
    for i in range(size):
        c = queue[(head + i) % cap]
        if psi_col[c] < label_cap:
            queue[(head + kept) % cap] = c
            kept += 1
    state[SIZE] = kept


@njit(cache=True)
def _advance(row_ptr, col_ind, col_ptr, row_ind, row_match, col_match, psi_row, psi_col,
             queue, bfs, state, relabel_every, max_pushes, stop_after_relabel):
    """Run push-relabel until done, ``max_pushes`` pushes were made, or (if asked) a global relabel ran."""
    label_cap = psi_row.size + psi_col.size
    qcap = queue.size
    pushes = 0
    while True:
        if state[SIZE] == 0:
            return DONE
        if state[RELABEL_DUE] != 0:
            _global_relabel(row_ptr, col_ind, row_match, col_match, psi_row, psi_col, bfs, state)
            _filter_queue(queue, psi_col, label_cap, state)
            state[RELABEL_DUE] = 0
            state[SINCE_RELABEL] = 0
            state[RELABELS] += 1
            if stop_after_relabel:
                return RELABELLED
            continue
        if pushes >= max_pushes:
            return CHUNK_END
        v = queue[state[HEAD]]
        state[HEAD] = (state[HEAD] + 1) % qcap
        state[SIZE] -= 1
        # the neighbour row of minimum ψ; ψ(v)-1 is a lower bound, so stop when it is reached
        target = psi_col[v] - 1
        best, best_psi = -1, label_cap
        for e in range(col_ptr[v], col_ptr[v + 1]):
            r = row_ind[e]
            if psi_row[r] < best_psi:
                best, best_psi = r, psi_row[r]
                if best_psi <= target:
                    break
        if best < 0:  # every neighbour is unreachable: v can never be matched
            psi_col[v] = label_cap
            continue
        mate = row_match[best]
        row_match[best] = v
        col_match[v] = best
        if mate >= 0:  # double push: the old mate becomes active
            col_match[mate] = -1
            queue[(state[HEAD] + state[SIZE]) % qcap] = mate
            state[SIZE] += 1
        else:
            state[MATCHED] += 1
        psi_col[v] = best_psi + 1
        psi_row[best] = min(best_psi + 2, label_cap)
        pushes += 1
        state[PUSHES] += 1
        state[SINCE_RELABEL] += 1
        if state[SINCE_RELABEL] >= relabel_every:
            state[RELABEL_DUE] = 1


def _relabel_interval(k: float, n_vertices: int) -> int:
    """Pushes between global relabels: k·(m+n), at least 1; k = inf keeps only the first relabel."""
    if math.isnan(k) or k <= 0:
        raise InputError(f"option k={k!r} must be a positive number of (m+n) pushes")
    if math.isinf(k):
        return int(NEVER)
    return int(min(max(1, math.ceil(k * n_vertices)), NEVER))


class _PushRelabel:
    """The arrays of one run; ``advance`` resumes the numba loop on them."""

    def __init__(self, graph: BipartiteGraph, init: str, k: float):
        self.graph = graph
        self.label_cap = graph.n_rows + graph.n_cols
        self.relabel_every = _relabel_interval(k, self.label_cap)
        if init == "cheap":
            self.row_match, self.col_match = cheap_matching(graph)
        elif init == "none":
            self.row_match, self.col_match = empty_matching(graph)
        else:
            raise InputError(f"option init={init!r}: choose from cheap, none")
        # paper's initial labels; the first global relabel replaces them before any push
        self.psi_row = np.zeros(graph.n_rows, np.int64)
        self.psi_col = np.ones(graph.n_cols, np.int64)
        self.queue = np.zeros(max(graph.n_cols, 1), np.int64)
        self.bfs = np.zeros(max(graph.n_rows, 1), np.int64)
        free_cols = np.flatnonzero(self.col_match < 0)
        self.queue[:free_cols.size] = free_cols
        self.state = np.zeros(STATE_SLOTS, np.int64)
        self.state[SIZE] = free_cols.size
        self.state[MATCHED] = np.count_nonzero(self.row_match >= 0)
        self.state[RELABEL_DUE] = 1
        self.initial_matching = int(self.state[MATCHED])

    def advance(self, max_pushes: int, stop_after_relabel: bool) -> int:
        g = self.graph
        return _advance(g.row_ptr, g.col_ind, g.col_ptr, g.row_ind, self.row_match, self.col_match,
                        self.psi_row, self.psi_col, self.queue, self.bfs, self.state,
                        self.relabel_every, max_pushes, stop_after_relabel)

    def __getitem__(self, slot: int) -> int:
        return int(self.state[slot])


def solve_pr(graph: BipartiteGraph, tel, k: float = 0.5, init: str = "cheap",
             chunk_pushes: int | None = None) -> Solution:
    """Run PR on ``graph``. With telemetry on, return to Python every ``chunk_pushes`` pushes
    (default: about one per column, capped) and at each global relabel to report progress."""
    pr = _PushRelabel(graph, init, k)
    if not tel.enabled:
        pr.advance(NEVER, False)
    else:
        chunk = chunk_pushes if chunk_pushes is not None else max(1, min(graph.n_cols, CHUNK_CAP))
        tel.iteration(0, "initial-matching", active=pr[SIZE], value=pr[MATCHED])
        while True:
            event = pr.advance(chunk, True)
            i = pr[PUSHES]
            if event == RELABELLED:
                tel.iteration(i, "global-relabel", active=pr[SIZE], value=pr[MATCHED],
                              max_level=pr[MAX_LEVEL], unreachable=pr[UNREACHABLE])
            else:
                tel.iteration(i, "push", active=pr[SIZE], value=pr[MATCHED], global_relabels=pr[RELABELS])
            if tel.snapshot_due("labels", final=event == DONE):
                tel.labels(i, cap=pr.label_cap, rows=pr.psi_row, cols=pr.psi_col)
            if event == DONE:
                break
    stats = {"pushes": pr[PUSHES], "global_relabels": pr[RELABELS],
             "initial_matching": pr.initial_matching, "relabel_interval": pr.relabel_every,
             "iterations_count": "pushes"}
    return Solution(value=pr[MATCHED], iterations=pr[PUSHES], row_match=pr.row_match,
                    col_match=pr.col_match, stats=stats)


def run(problem, backend: str, tel, k: float = 0.5, init: str = "cheap") -> Solution:
    if backend != "cpu":
        raise BackendUnavailable(f"pr-seq runs on cpu, not {backend}")
    if not isinstance(problem, BipartiteGraph):
        raise InputError(f"pr-seq needs a bipartite graph, not {type(problem).__name__}", problem.source)
    return solve_pr(problem, tel, float(k), init)
