"""Costs whose range is tiny next to their size (1e6 plus noise of 1e-3; integers near 1e15): take
each assigned line's cheapest cost off first.

Every complete assignment assigns each line of the smaller side exactly once (each row of a wide
matrix, each column of a tall one), so subtracting a constant per such line changes every
assignment's cost by the same amount: the optimum stays. What it removes is the offset, which
otherwise sits in every price and potential and leaves the differences that decide the assignment
a few float64 steps wide (scipy's linear_sum_assignment missed the optimum of integer costs near
1e15 by 1; the auction's epsilon could not go below them). The subtraction is exact where a cost is
within a factor 2 of its line's cheapest (Sterbenz), else rounded at the scale of the difference.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..problems import CostMatrix
from ..result import Solution
from .hungarian import problem_stats

OFFSET_SHARE = 2.0 ** -20  # a range below this share of max|c| is dominated by an offset
EXACT_INTEGER = 2.0 ** 53


@dataclass(frozen=True)
class Reduced:
    original: CostMatrix
    problem: CostMatrix    # the costs less each line's cheapest
    offsets: np.ndarray    # what was taken off each line of the smaller side
    lines_are_rows: bool

    def restore(self, solution: Solution) -> Solution:
        """The reduced problem's solution for the original costs: its value recomputed on them,
        each line's offset added back to its potential."""
        costs = self.original.costs
        rows = np.flatnonzero(solution.row_match >= 0)
        value = float(costs[rows, solution.row_match[rows]].sum()) if rows.size else 0.0
        duals = solution.duals
        if duals is not None:
            u, v = np.array(duals["u"], dtype=np.float64), np.array(duals["v"], dtype=np.float64)
            if self.lines_are_rows:
                u = u + self.offsets
            else:
                v = v + self.offsets
            duals = {"u": u, "v": v}
        return replace(solution, value=value, duals=duals, device_costs=None,  # the reduced costs, not these
                       stats=dict(solution.stats, offset_removed=True))


def without_offset(problem: CostMatrix) -> Reduced | None:
    """The reduced problem when an offset dominates the costs' range (or integers are too large
    for exact float64 sums but their range is not), else None."""
    stats = problem_stats(problem)
    if stats.max_abs == 0 or not np.isfinite(stats.max_abs):
        return None
    offset_bound = stats.span < OFFSET_SHARE * stats.max_abs
    large_integers = stats.integer and stats.max_abs * (max(problem.shape) + 1) >= 2.0 ** 50 \
        and stats.span * (max(problem.shape) + 1) < 2.0 ** 50
    if not (offset_bound or large_integers):
        return None
    lines_are_rows = problem.n_rows <= problem.n_cols
    lowest = np.min(problem.costs, axis=1 if lines_are_rows else 0, keepdims=True)
    if not np.all(np.isfinite(lowest)) or not np.any(lowest):
        return None  # a line with no allowed pair (infeasible: the solver says so), or nothing to take off
    reduced = CostMatrix.from_array(problem.costs - lowest, source=problem.source, copy=False)  # ours alone
    return Reduced(problem, reduced, lowest.ravel(), lines_are_rows)
