"""Minimum-cost assignment via scipy: ``lsa`` (dense, shortest augmenting paths) and ``lapjvsp``
(sparse, LAPJVsp). Neither reports dual potentials; solvers.certify derives them."""
from __future__ import annotations

import numpy as np

from ..errors import InfeasibleError
from ..problems import CostMatrix, SparseCosts, writeable_alias
from ..registry import Algorithm
from ..result import Solution
from .offset import without_offset

ALGORITHMS = [
    Algorithm(name="lsa", problem_kinds=("assignment",), accepts=(CostMatrix,), backends=("cpu",),
              runner="solvers.assignment.reference:run_lsa",
              summary="Dense shortest-augmenting-path assignment (scipy linear_sum_assignment); inf = forbidden.",
              reference="Crouse 2016; scipy.optimize.linear_sum_assignment",
              interruptible=False, phases=("start", "done")),
    Algorithm(name="lapjvsp", problem_kinds=("assignment",), accepts=(SparseCosts,), backends=("cpu",),
              runner="solvers.assignment.reference:run_lapjvsp",
              summary="Sparse assignment: only stored pairs are allowed (scipy min_weight_full_bipartite_matching).",
              reference="Jonker & Volgenant 1987 (LAPJVsp); scipy.sparse.csgraph.min_weight_full_bipartite_matching",
              interruptible=False, phases=("start", "done")),
]


def _solution(shape, rows, cols, value) -> Solution:
    row_match = np.full(shape[0], -1, dtype=np.int64)
    col_match = np.full(shape[1], -1, dtype=np.int64)
    row_match[rows] = cols
    col_match[cols] = rows
    return Solution(value=value, iterations=1, row_match=row_match, col_match=col_match)


def _infeasible(problem, exc: ValueError) -> InfeasibleError:
    where = f"{problem.source}: " if problem.source else ""
    return InfeasibleError(f"{where}no complete assignment of {min(problem.shape)} pairs exists "
                           f"with the allowed pairs ({exc})")


def run_lsa(problem: CostMatrix, backend: str, tel) -> Solution:
    reduced = without_offset(problem)  # scipy missed the optimum of integers near 1e15 by 1
    if reduced is not None:
        return reduced.restore(run_lsa(reduced.problem, backend, tel))
    from scipy.optimize import linear_sum_assignment  # here: listing algorithms stays light
    if tel.enabled:
        tel.iteration(0, "start", active=min(problem.shape))
    try:
        rows, cols = linear_sum_assignment(writeable_alias(problem.costs))
    except ValueError as exc:  # scipy: "cost matrix is infeasible"
        raise _infeasible(problem, exc) from None
    value = float(problem.costs[rows, cols].sum())
    if tel.enabled:
        tel.iteration(1, "done", active=0, value=value)
    return _solution(problem.shape, rows, cols, value)


def run_lapjvsp(problem: SparseCosts, backend: str, tel) -> Solution:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching
    if tel.enabled:
        tel.iteration(0, "start", active=min(problem.shape))
    if problem.n_edges == 0 and min(problem.shape) > 0:
        raise _infeasible(problem, ValueError("no allowed pairs"))
    shifted = csr_matrix((positive_weights(problem.cost), problem.col_ind, problem.row_ptr), shape=problem.shape)
    try:
        rows, cols = min_weight_full_bipartite_matching(shifted)
    except ValueError as exc:  # scipy: "no full matching exists"
        raise _infeasible(problem, exc) from None
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    value = float(_pair_costs(problem, rows, cols).sum())
    if tel.enabled:
        tel.iteration(1, "done", active=0, value=value)
    return _solution(problem.shape, rows, cols, value)


def positive_weights(cost: np.ndarray) -> np.ndarray:
    """Costs shifted to be positive at their own scale: scipy drops explicit zeros (and so would
    drop zero-cost pairs). Every complete assignment has min(rows, cols) pairs, so a constant shift
    keeps the optimum; the weights become (c - min) + (max - min), in [span, 2 span]: the shift is
    at the differences' own scale (a shift to 1 erases costs of 1e-20, and 1 - min erases the
    minimum of costs near 1e300)."""
    if not cost.size:
        return cost
    low, high = float(cost.min()), float(cost.max())
    floor = max(high - low, float(np.finfo(np.float64).tiny))
    return (cost - low) + floor


def _pair_costs(problem: SparseCosts, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Original (unshifted) costs of the given pairs, found by key in the row-major sorted CSR."""
    width = max(problem.n_cols, 1)
    edge_rows = np.repeat(np.arange(problem.n_rows, dtype=np.int64), np.diff(problem.row_ptr))
    keys = edge_rows * width + problem.col_ind
    return problem.cost[np.searchsorted(keys, rows * width + cols)]
