"""The cheap (greedy) initial matching used before push-relabel and augmenting-path solvers.

Each column, in index order, takes its first (lowest-index) unmatched neighbour row. It is a
maximal matching, so at least half of a maximum one, and costs one pass over the edges.
Matches are int64 arrays with -1 for unmatched: ``row_match[r]`` is r's column, ``col_match[c]``
is c's row.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..problems import BipartiteGraph


@njit(cache=True)
def greedy_fill(col_ptr, row_ind, row_match, col_match):
    """Extend the given matching greedily in place (columns in order, first free row); returns pairs added."""
    added = 0
    for c in range(col_ptr.size - 1):
        if col_match[c] >= 0:
            continue
        for e in range(col_ptr[c], col_ptr[c + 1]):
            r = row_ind[e]
            if row_match[r] < 0:
                row_match[r] = c
                col_match[c] = r
                added += 1
                break
    return added


def empty_matching(graph: BipartiteGraph) -> tuple[np.ndarray, np.ndarray]:
    return np.full(graph.n_rows, -1, np.int64), np.full(graph.n_cols, -1, np.int64)


def cheap_matching(graph: BipartiteGraph) -> tuple[np.ndarray, np.ndarray]:
    """(row_match, col_match) of the greedy matching of ``graph`` (fresh, writable int64 arrays)."""
    row_match, col_match = empty_matching(graph)
    greedy_fill(graph.col_ptr, graph.row_ind, row_match, col_match)
    return row_match, col_match
