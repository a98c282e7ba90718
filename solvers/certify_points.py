"""The certificate of an assignment between point sets (EuclideanCosts), without the n x m distances.

Independent of the solver: it takes the matching and the solver's dual potentials and recomputes
every distance it relies on. For n <= m points (a taller problem is read transposed, the same LP
with the sides swapped), every assignment x of a's points to distinct points of b costs

    sum_i d(i, x(i)) >= sum_i u_i + sum_j min(v_j, 0) - sum_i delta_i      (n < m)
                        sum_i u_i + sum_j v_j        - sum_i delta_i      (n = m: v is free)

whenever u_i + v_j <= d_ij + delta_i for every pair. Only pairs with d_ij < u_i + max(v) can break
that with delta_i = 0, and they lie in the ball of that radius around a_i: scipy's cKDTree lists
them (with a relative margin far above its rounding), and their distances are recomputed here. So
delta_i is the largest violation in row i's ball, plus a rounding allowance of a few epsilon of
the magnitudes involved, and gap = value - (that bound) is summed exactly (solvers.exact).
The answer is optimal when the gap is within the rounding tolerance of the data.
"""
from __future__ import annotations

import math

import numpy as np

from .exact import float_sum, float_sum_up
from .problems import EuclideanCosts, kd_workers, point_distances
from .result import Certificate, Solution

EPS = float(np.finfo(np.float64).eps)
DISTANCE_ROUNDING = 4 * EPS  # a recomputed distance, and u + v - d, are this close to exact (relative)
TOLERANCE = 16 * EPS          # the gap allowed for rounding, relative to the magnitudes summed
BALL_MARGIN = 1e-9            # relative: far above cKDTree's rounding of the distances it compares
CHUNK_PAIRS = 1 << 21         # pairs held at once by the check (about 100 MB of temporaries)
DENSE_SHARE = 4               # a ball holding a quarter of b or more: all of b is checked, without the tree


def certify_euclidean(problem: EuclideanCosts, solution: Solution) -> Certificate:
    n, m = problem.shape
    a, b, rows, cols = problem.a, problem.b, solution.row_match, solution.col_match
    duals = solution.duals or {}
    u, v = duals.get("u"), duals.get("v")
    if n > m:  # the same LP with the sides swapped
        a, b, rows, cols, u, v = b, a, cols, rows, v, u
        n, m = m, n
    problem_invalid = _matching_problem(rows, cols, n, m)
    if problem_invalid:
        return Certificate("dual-potentials", False, False, details=problem_invalid, reason=problem_invalid)
    matched = point_distances(a, b, np.arange(n), rows) if n else np.zeros(0)
    value = float_sum(matched)
    witness = {"value": value}
    u = _finite(u, n)
    v = _finite(v, m)
    if u is None or v is None:
        why = "the solver gave no finite dual potentials to check"
        return Certificate("dual-potentials", True, False, math.inf, details=why, witness=witness, reason=why)
    delta, scale, pairs = _row_violations(a, b, u, v)
    v_bound = v if n == m else np.minimum(v, 0.0)
    gap = float_sum_up(matched, -u, -v_bound, delta)  # value - lower bound, rounded up
    tolerance = TOLERANCE * (float_sum_up(matched, np.abs(u), np.abs(v)) + float_sum_up(scale))
    optimal = gap <= tolerance
    witness.update(u=duals.get("u"), v=duals.get("v"), checked_pairs=pairs)
    shape = "square" if n == m else "rectangular"
    checks = (f"dual feasibility checked on the {pairs:,} pairs nearer than u_i + max v (every other pair is "
              f"at least that far apart); value - dual bound = {gap:.6g} (tolerance {tolerance:.3g})")
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


def _matching_problem(rows, cols, n: int, m: int) -> str:
    """Why (row_match, col_match) is not an assignment of every one of the n points to distinct
    points of the m, or ""."""
    if rows is None or cols is None:
        return "the solution holds no assignment"
    rows, cols = np.asarray(rows), np.asarray(cols)
    if rows.shape != (n,) or cols.shape != (m,):
        return "the assignment's arrays do not fit the point sets"
    if n and (rows.min() < 0 or rows.max() >= m):
        unmatched = int(np.flatnonzero((rows < 0) | (rows >= m))[0])
        return f"point {unmatched} of the smaller set is not assigned"
    if n and np.bincount(rows, minlength=m).max() > 1:
        return "two points are assigned the same partner"
    expected = np.full(m, -1, dtype=np.int64)
    expected[rows] = np.arange(n)
    if not np.array_equal(expected, cols):
        return "the two directions of the assignment disagree"
    return ""


def _finite(values, size: int):
    if values is None:
        return None
    a = np.asarray(values, dtype=np.float64)
    return a if a.shape == (size,) and np.all(np.isfinite(a)) else None


def _check_rows(a, b, u, v, rows: np.ndarray, cols: np.ndarray, delta, scale) -> int:
    """delta and scale of ``rows`` over the pairs (rows[r], cols[r, :]); the number of pairs."""
    d = point_distances(a, b, np.repeat(rows, cols.shape[1]), cols.ravel()).reshape(cols.shape)
    uv = u[rows][:, None] + v[cols]
    allowance = DISTANCE_ROUNDING * (np.abs(u[rows])[:, None] + np.abs(v[cols]) + d)
    delta[rows] = np.maximum((uv - d + allowance).max(axis=1), 0.0)
    scale[rows] = np.maximum(scale[rows], (np.abs(uv) + d).max(axis=1))
    return cols.size


def _row_violations(a, b, u, v):
    """(delta per row of a, the magnitude scale per row, pairs checked)."""
    n = a.shape[0]
    delta = np.zeros(n)
    v_max = float(v.max()) if v.size else 0.0
    reach = u + v_max  # pairs farther than this from a_i cannot violate u_i + v_j <= d_ij
    scale = np.abs(u) + abs(v_max)
    near = np.flatnonzero(reach > 0)
    if near.size == 0:
        return delta, scale, 0
    from scipy.spatial import cKDTree
    tree = cKDTree(b)
    radius = reach[near] * (1 + BALL_MARGIN)
    counts = np.asarray(tree.query_ball_point(a[near], radius, return_length=True, workers=kd_workers(near.size)),
                        dtype=np.int64)
    bucket = np.where(counts > 0, 1 << np.ceil(np.log2(np.maximum(counts, 1))).astype(np.int64), 0)
    dense = bucket * DENSE_SHARE >= b.shape[0]  # balls holding much of b: every pair, without the tree
    checked = 0
    for k in np.unique(bucket[(bucket > 0) & ~dense]):
        group = near[(bucket == k) & ~dense]
        for part in np.array_split(group, max(1, -(-group.size * int(k) // CHUNK_PAIRS))):
            _, found = tree.query(a[part], k=int(k), workers=kd_workers(part.size))
            checked += _check_rows(a, b, u, v, part, np.asarray(found).reshape(part.size, int(k)), delta, scale)
    group = near[dense]
    for part in np.array_split(group, max(1, -(-group.size * b.shape[0] // CHUNK_PAIRS))) if group.size else ():
        every = np.broadcast_to(np.arange(b.shape[0]), (part.size, b.shape[0]))
        checked += _check_rows(a, b, u, v, part, every, delta, scale)
    return delta, scale, checked
