"""The certificate of an assignment between point sets (EuclideanCosts), without the n x m distances.

Independent of the solver: it takes the matching and the solver's dual potentials and recomputes
every distance it relies on. For n <= m points (a taller problem is read transposed, the same LP
with the sides swapped), every assignment x of a's points to distinct points of b costs

    sum_i d(i, x(i)) >= sum_i u_i + sum_j min(v_j, 0) - sum_i delta_i      (n < m)
                        sum_i u_i + sum_j v_j        - sum_i delta_i      (n = m: v is free)

whenever u_i + v_j <= d_ij + delta_i for every pair. A pair can break that with delta_i = 0 only
when d_ij < u_i + v_j; a uniform grid over b's points, with each cell's largest v
(solvers.point_grid), passes over every cell that is at least u_i + (its largest v) away from a_i,
and the distances of the pairs left are recomputed here. So delta_i is the largest violation among
them, plus a rounding allowance of a few epsilon of the magnitudes involved, and
gap = value - (that bound) is summed exactly (solvers.exact).
The answer is optimal when the gap is within the rounding tolerance of the data: the assignment
certificate's (solvers.certify.rounding_tolerance), 16 (n + 1) epsilon times the magnitudes summed,
the rounding that a solver's n dual steps may leave.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import point_grid
from .certify import _as_match, _check_mates, rounding_tolerance
# the rounding allowance of a recomputed distance and of u + v - d; a GPU checks every pair up to MAX_PAIRS
from .certify_points_device import DISTANCE_ROUNDING, MAX_PAIRS
from .exact import float_sum, float_sum_up
from .point_grid import box_distance, cell_span, pair_distance
from .problems import EuclideanCosts, point_distances
from .result import Certificate, Solution

EPS = float(np.finfo(np.float64).eps)


def certify_euclidean(problem: EuclideanCosts, solution: Solution) -> Certificate:
    n, m = problem.shape
    invalid = "the solution holds no assignment" if solution.row_match is None or solution.col_match is None else ""
    rows = cols = None
    if not invalid:  # the assignment certificate's own checks (solvers.certify), in the problem's orientation
        rows, invalid = _as_match(solution.row_match, n, m, "row_match")
    if not invalid:
        cols, invalid = _check_mates(rows, solution.col_match, m)
    if not invalid and np.count_nonzero(rows >= 0) < min(n, m):
        invalid = f"incomplete assignment: {int(np.count_nonzero(rows >= 0))} of {min(n, m)} pairs"
    if invalid:
        return Certificate("dual-potentials", False, False, details=invalid, reason=invalid)
    a, b = problem.a, problem.b
    duals = solution.duals or {}
    u, v = duals.get("u"), duals.get("v")
    if n > m:  # the same LP with the sides swapped
        a, b, rows, cols, u, v = b, a, cols, rows, v, u
        n, m = m, n
    matched = point_distances(a, b, np.arange(n), rows) if n else np.zeros(0)
    value = float_sum(matched)
    witness = {"value": value}
    u = _finite(u, n)
    v = _finite(v, m)
    if u is None or v is None:
        why = "the solver gave no finite dual potentials to check"
        return Certificate("dual-potentials", True, False, math.inf, details=why, witness=witness, reason=why)
    if solution.on_gpu and 0 < n * m <= MAX_PAIRS and _gpu_usable():  # every pair, where the solve ran
        from .certify_points_device import row_violations
        delta, scale, pairs = row_violations(a, b, u, v, "cuda")
        where = "every pair, on the GPU"
    else:
        delta, scale, pairs = _row_violations(a, b, u, v)
        where = "the pairs that could break it (every other pair lies in a grid cell at least u_i + its largest v away)"
    v_bound = v if n == m else np.minimum(v, 0.0)
    gap = float_sum_up(matched, -u, -v_bound, delta)  # value - lower bound, rounded up
    # the assignment certificate's allowance (solvers.certify: rounding that n dual steps may leave), on
    # the magnitudes summed; numpy's pairwise sums: a scale, not a proof (distances of 1e150 coordinates)
    tolerance = rounding_tolerance(n, float(np.abs(matched).sum() + np.abs(u).sum() + np.abs(v).sum() + scale.sum()))
    optimal = gap <= tolerance
    witness.update(u=duals.get("u"), v=duals.get("v"), checked_pairs=pairs)
    shape = "square" if n == m else "rectangular"
    checks = f"dual feasibility checked on {pairs:,} pairs: {where}; value - dual bound = {gap:.6g} (tolerance {tolerance:.3g})"
    broken = delta > 2 * DISTANCE_ROUNDING * scale  # beyond rounding: the duals are infeasible there
    if optimal:
        details = f"optimal for the full Euclidean problem ({shape}, every pair of points): {checks}"
        reason = "the dual potentials are feasible for every pair of points, and their bound meets the value"
    else:
        infeasible = (f"the dual potentials are infeasible for {int(broken.sum()):,} points (by up to "
                      f"{float(delta.max()):.3g})" if broken.any() else "the dual bound stays below the value")
        details = f"not proven for every pair of points: {infeasible}; {checks}"
        reason = f"not proven: {infeasible}"
    return Certificate("dual-potentials", True, optimal, max(gap, 0.0), tolerance, details, witness, 0.0, reason)


def _gpu_usable() -> bool:
    from .targets import cuda_available
    return cuda_available()


def _finite(values, size: int):
    if values is None:
        return None
    a = np.asarray(values, dtype=np.float64)
    return a if a.shape == (size,) and np.all(np.isfinite(a)) else None


# The cell walk below repeats knn's (points_exact._scan_broken) on purpose: the certificate calls no
# solver code; both share only the grid and its geometry (solvers.point_grid), tested against brute force.
@njit(cache=True, parallel=True)
def _scan_rows(a, b, a3, u, v, v_max, low, size, slop, shape, start, points, cell_max, delta, scale, checked):
    """Per row i: the largest u_i + v_j - d_ij (plus its rounding allowance) over the pairs that may
    break feasibility, the magnitudes met, and how many pairs were looked at. A cell is passed over
    when u_i + its largest v is at most its distance from a_i; cells beyond u_i + max v are not visited."""
    for i in prange(a.shape[0]):
        reach = (u[i] + v_max) * (1.0 + 1e-9)
        if not reach > 0.0:
            continue  # d_ij >= 0 >= u_i + v_j for every j
        worst, big, count = 0.0, scale[i], 0
        x, y, z = a3[i, 0], a3[i, 1], a3[i, 2]
        x0, x1 = cell_span(low, size, shape, x, reach, 0)
        y0, y1 = cell_span(low, size, shape, y, reach, 1)
        z0, z1 = cell_span(low, size, shape, z, reach, 2)
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    c = (cx * shape[1] + cy) * shape[2] + cz
                    if start[c] == start[c + 1] or u[i] + cell_max[c] <= box_distance(low, size, slop, x, y, z, cx, cy, cz):
                        continue
                    for p in range(start[c], start[c + 1]):
                        j = points[p]
                        d = pair_distance(a, b, i, j)
                        uv = u[i] + v[j]
                        worst = max(worst, uv - d + DISTANCE_ROUNDING * (abs(u[i]) + abs(v[j]) + d))
                        big = max(big, abs(uv) + d)
                        count += 1
        delta[i], scale[i], checked[i] = worst, big, count


def _row_violations(a, b, u, v):
    """(delta per row of a, the magnitude scale per row, pairs looked at), by the grid of b's
    points with each cell's largest v (solvers.point_grid)."""
    n = a.shape[0]
    v_max = float(v.max()) if v.size else 0.0
    delta, scale, checked = np.zeros(n), np.abs(u) + abs(v_max), np.zeros(n, dtype=np.int64)
    if n == 0 or v.size == 0:
        return delta, scale, 0
    grid = point_grid.build(b)
    _scan_rows(a, b, point_grid.padded(a), u, v, v_max, grid.low, grid.size, grid.slop, grid.shape, grid.start, grid.points,
               point_grid.cell_maxima(grid, v), delta, scale, checked)
    return delta, scale, int(checked.sum())
