"""Exact point correspondence without the n x m distance matrix: the "knn" algorithm (issue 14).

Minimum total Euclidean distance between point sets a (n x d) and b (m x d), n <= m (a taller
problem is solved transposed): each point of a is matched to a distinct point of b.

1. Candidates: each point of a keeps its k nearest points of b (found on the grid of b's points,
   solvers.point_neighbours; scipy's cKDTree for long lists and points far from b), with their
   distances as costs: a sparse problem of n * k pairs.
2. It is solved by shortest augmenting paths (solvers.assignment.sparse_sap_solver, whose searches
   cost what they explore), which gives dual potentials u, v with u_i + v_j <= d_ij on every
   candidate pair, equality on the matched pairs, and v <= 0.
3. Pricing: a pruned pair (i, j) has d_ij >= r_i, the distance from i to its last candidate, so
   rows with u_i + max v <= r_i are settled. For the others, the pairs with u_i + v_j > d_ij are
   looked for on a grid of b's points that knows each cell's largest v (solvers.point_grid), added
   to the candidates, and the solve repeats, until none is left (or max_rounds, or max_pairs).
   A candidate graph without a complete matching doubles every neighbour list. When the
   candidates would reach a quarter of all pairs (points far from their partners, as between
   unrelated sets), the problem is solved on its whole distance matrix instead (scipy's
   linear_sum_assignment), up to DENSE_DISTANCES pairs.

The answer is then certified for the full Euclidean problem by solvers.certify_points, which
rechecks the duals on every pair that could break them, independently of these steps.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .errors import InfeasibleError, InputError
from . import point_grid, point_neighbours
from .point_grid import box_distance, cell_span, pair_distance
from .problems import DENSE_DISTANCES, EuclideanCosts
from .points_knn import MAX_PAIRS
from .result import Solution

EPS = np.finfo(np.float64).eps
# candidates on 1/DENSE_SHARE of all pairs: the dense solve is as quick (between 8000 unrelated
# points, 4.6M candidates took 8.4 s on 2 cores, the 64M dense pairs 22 s)
DENSE_SHARE = 4
PARALLEL_QUERIES = 4096  # kd-tree queries from this many points run on all cores (threads cost more below)
GRID_NEIGHBOURS = 64  # lists up to this long are found on the grid (a few rings of cells), longer by the kd-tree

def match_points(a, b, k: int = 8, max_rounds: int = 12, max_pairs: int = MAX_PAIRS):
    """The minimum-distance matching of every point of the smaller set, certified for the full
    Euclidean problem (see the module text): ``solve(EuclideanCosts(a, b), "knn")``. ``row_match``
    maps a's points to b's (-1 where a has more points than b and the point is left over)."""
    from .api import solve
    return solve(EuclideanCosts.from_points(a, b), "knn", backend="cpu", k=k, max_rounds=max_rounds,
                 max_pairs=max_pairs)


def run(problem: EuclideanCosts, backend: str, tel, k: int = 8, max_rounds: int = 12,
        max_pairs: int = MAX_PAIRS) -> Solution:
    n, m = problem.shape
    if n > m:  # solve transposed, hand back in the problem's orientation
        flipped = run(EuclideanCosts(problem.b, problem.a, problem.source), backend, tel, k, max_rounds, max_pairs)
        return Solution(flipped.value, flipped.iterations, flipped.col_match, flipped.row_match,
                        duals={"u": flipped.duals["v"], "v": flipped.duals["u"]},
                        stats=dict(flipped.stats, transposed=True))
    if tel.enabled:
        tel.iteration(0, "start", active=n)
    if n == 0:
        return Solution(0.0, 0, np.zeros(0, np.int64), np.full(m, -1, np.int64),
                        duals={"u": np.zeros(0), "v": np.zeros(m)}, stats={"rounds": 0, "candidates": 0})
    candidates = _Candidates(problem.a, problem.b)
    wanted = np.full(n, min(int(k), m), dtype=np.int64)
    candidates.widen_to(wanted)
    rounds, stopped, left = 0, "", 0
    while True:
        rounds += 1
        solved = _solve_candidates(candidates, n, m, problem.source)
        if solved is None:  # no complete matching among the candidates: widen every list
            wanted = np.minimum(2 * wanted, m)
            if int(wanted.sum()) + candidates.extra > max_pairs:
                raise InputError(f"the {int(candidates.have.max())} nearest neighbours of each point hold no "
                                 f"complete matching, and widening would hold {int(wanted.sum()):,} pairs (limit "
                                 f"{max_pairs:,}): raise max_pairs", problem.source)
            candidates.widen_to(wanted)
            continue
        value, row_match, col_match, u, v = solved
        v_max = float(v.max())
        slack = 8 * EPS * (np.abs(u) + abs(v_max) + candidates.radius)
        # rows whose pruned pairs the neighbour bound u_i + max v <= r_i does not cover (a row with
        # every b as candidate has none): their pairs that break the duals are looked for on the grid
        unsure = np.flatnonzero((wanted < m) & (u + v_max > candidates.radius - slack))
        if unsure.size == 0:
            break
        found = candidates.broken_pairs(unsure, u, v, slack)
        left = found[0].size
        if left == 0:  # no pair breaks the duals: proven (the certificate checks it again)
            break
        if (candidates.count + left) * DENSE_SHARE >= n * m and n * m <= min(DENSE_DISTANCES, max_pairs):
            # the pairs approach all of them (points far from their partners): solve densely
            value, row_match, col_match, u, v = _solve_dense(problem)
            wanted[:] = m
            left = 0
            break
        if rounds >= max_rounds:
            break
        if candidates.count + left > max_pairs:  # memory follows the pairs: stop; the certificate says what holds
            stopped = f"adding the {left:,} pairs that break the duals would hold more than {max_pairs:,} pairs"
            break
        candidates.add(*found)
    if tel.enabled:
        tel.iteration(rounds, "done", active=0, value=value)
    dense = bool(np.all(wanted >= m))
    stats = {"rounds": rounds, "candidates": n * m if dense else candidates.count, "dense": dense,
             "max_k": int(candidates.have.max()), "points_with_pruned_pairs": int(np.count_nonzero(wanted < m)),
             "pairs_breaking_the_duals": left}
    if stopped:
        stats["stopped"] = stopped
    return Solution(value, rounds, row_match, col_match, duals={"u": u, "v": v}, stats=stats)


class _Candidates:
    """The candidate pairs: each point of a's nearest points of b (nearest first, kept in blocks of
    equal length; ``radius``: the distance to the last), plus pairs added because they broke the duals."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b, self._tree = a, b, None
        self.grid, self.a3 = point_grid.build(b), point_grid.padded(a)
        self.have = np.zeros(a.shape[0], dtype=np.int64)
        self.blocks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # k: (rows, cols, distances)
        self.radius = np.zeros(a.shape[0])
        self.added: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    @property
    def extra(self) -> int:
        return sum(rows.size for rows, _, _ in self.added)

    @property
    def count(self) -> int:
        return int(self.have.sum()) + self.extra

    def widen_to(self, wanted: np.ndarray) -> None:
        grow = wanted > self.have
        for count in np.unique(wanted[grow]):
            rows = np.flatnonzero(grow & (wanted == count))
            dist, idx = self._nearest(rows, int(count))
            old = self.blocks.get(int(count))
            if old is not None:
                rows, idx, dist = (np.concatenate([old[0], rows]), np.concatenate([old[1], idx]),
                                   np.concatenate([old[2], dist]))
            self.blocks[int(count)] = (rows, idx, dist)
            self.radius[rows] = dist[:, -1]
        for count in list(self.blocks):  # drop the shorter lists of the rows just widened
            rows, idx, dist = self.blocks[count]
            keep = wanted[rows] == count
            if not keep.all():
                self.blocks[count] = (rows[keep], idx[keep], dist[keep])
        self.have = np.maximum(self.have, wanted)

    def _nearest(self, rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` nearest points of b to each of a[rows] (distances, indices), nearest first."""
        if count <= GRID_NEIGHBOURS:
            dist, idx, done = point_neighbours.nearest(self.grid, self.a, self.b, self.a3, rows, count)
            left = np.flatnonzero(~done)
        else:
            dist, idx = np.empty((rows.size, count)), np.empty((rows.size, count), dtype=np.int64)
            left = np.arange(rows.size)
        if left.size:  # long lists, and points the grid's rings did not settle
            if self._tree is None:
                from scipy.spatial import cKDTree
                self._tree = cKDTree(self.b, balanced_tree=False)  # quicker to build, as quick to ask
            workers = -1 if left.size >= PARALLEL_QUERIES else 1
            far_dist, far_idx = self._tree.query(self.a[rows[left]], k=count, workers=workers)
            dist[left], idx[left] = far_dist.reshape(left.size, -1), far_idx.reshape(left.size, -1)
        return dist, idx

    def broken_pairs(self, rows: np.ndarray, u, v, slack) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, cols, distances) of the pairs of ``rows`` with u_i + v_j > d_ij + slack_i, found on
        the grid of b's points (solvers.point_grid): a cell at least u_i + its largest v away from a_i
        holds none."""
        grid = self.grid
        args = (self.a, self.b, self.a3, rows, u, v, float(v.max()), slack, grid.low, grid.size, grid.slop, grid.shape,
                grid.start, grid.points, point_grid.cell_maxima(grid, v))
        counts = np.zeros(rows.size, dtype=np.int64)
        _scan_broken(*args, counts, np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1), False)
        offsets = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        total = int(offsets[-1])
        out_rows, out_cols, out_d = np.empty(total, np.int64), np.empty(total, np.int64), np.empty(total)
        if total:
            _scan_broken(*args, offsets, out_rows, out_cols, out_d, True)
        return out_rows, out_cols, out_d

    def add(self, rows, cols, dist) -> None:
        self.added.append((rows, cols, dist))

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidate pairs as CSR arrays (row pointers, columns, distances)."""
        n = self.have.size
        if len(self.blocks) == 1 and not self.added:  # every row the same count (the first round): as they are
            rows, idx, dist = next(iter(self.blocks.values()))
            if np.array_equal(rows, np.arange(n)):
                row_ptr = np.arange(n + 1, dtype=np.int64) * idx.shape[1]
                return row_ptr, idx.ravel(), dist.ravel()
        parts = [(np.repeat(rows, idx.shape[1]), idx.ravel(), dist.ravel()) for rows, idx, dist in self.blocks.values()]
        rows, cols, dist = (np.concatenate(p) for p in zip(*(parts + self.added)))
        order = np.argsort(rows, kind="stable")
        row_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=row_ptr[1:])
        return row_ptr, cols[order], dist[order]


@njit(cache=True, parallel=True)
def _scan_broken(a, b, a3, rows, u, v, v_max, slack, low, size, slop, shape, start, points, cell_max,
                 offsets, out_rows, out_cols, out_d, fill):
    """For each of ``rows``: its pairs with u_i + v_j > d_ij + slack_i, counted into offsets[k]
    (fill False) or written from offsets[k] on (fill True). Cells beyond u_i + max v are not
    visited; a cell at least u_i + its largest v away is passed over."""
    for k in prange(rows.size):
        i = rows[k]
        reach = (u[i] + v_max) * (1.0 + 1e-9)
        if not reach > 0.0:
            continue
        at = offsets[k] if fill else 0
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
                        if u[i] + v[j] > d + slack[i]:
                            if fill:
                                out_rows[at], out_cols[at], out_d[at] = i, j, d
                            at += 1
        if not fill:
            offsets[k] = at


def _solve_dense(problem: EuclideanCosts):
    """(value, row_match, col_match, u, v) of the problem solved on its whole distance matrix."""
    from .solving import solve_named
    result = solve_named(problem.to_dense(), "lsa", "cpu", None)
    witness = result.certificate.witness
    return (result.value, result.row_match, result.col_match, np.asarray(witness["u"], dtype=np.float64),
            np.asarray(witness["v"], dtype=np.float64))


def _solve_candidates(candidates: _Candidates, n: int, m: int, source):
    """(value, row_match, col_match, u, v) on the candidate pairs, or None when they hold no complete matching."""
    from .assignment.sparse_sap_solver import solve_sparse
    row_ptr, col_ind, cost = candidates.csr()
    try:
        row_match, col_match, u, v = solve_sparse(row_ptr, col_ind, cost, n, m)
    except InfeasibleError:
        return None
    return float(np.sum(u) + np.sum(v[row_match])), row_match, col_match, u, v
