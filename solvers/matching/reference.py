"""Hopcroft-Karp maximum bipartite matching via scipy (the CPU reference the GPU solvers are measured against)."""
from __future__ import annotations

import numpy as np

from ..problems import BipartiteGraph
from ..registry import Algorithm
from ..result import Solution

ALGORITHMS = [
    Algorithm(name="hopcroft-karp", problem_kinds=("matching",), accepts=(BipartiteGraph,), backends=("cpu",),
              runner="solvers.matching.reference:run_hopcroft_karp",
              summary="Maximum-cardinality matching by shortest augmenting paths in phases (scipy).",
              reference="Hopcroft & Karp 1973; scipy.sparse.csgraph.maximum_bipartite_matching",
              interruptible=False, phases=("start", "done")),
]


def run_hopcroft_karp(graph: BipartiteGraph, backend: str, tel) -> Solution:
    from scipy.sparse.csgraph import maximum_bipartite_matching  # here: listing algorithms stays light
    if tel.enabled:
        tel.iteration(0, "start", active=graph.n_rows)
    # perm_type="column": entry r is the column matched to row r, or -1
    row_match = maximum_bipartite_matching(graph.to_sparse(), perm_type="column").astype(np.int64)
    col_match = np.full(graph.n_cols, -1, dtype=np.int64)
    matched = np.flatnonzero(row_match >= 0)
    col_match[row_match[matched]] = matched
    value = int(matched.size)
    if tel.enabled:
        tel.iteration(1, "done", active=graph.n_rows - value, value=value)
    return Solution(value=value, iterations=1, row_match=row_match, col_match=col_match)
