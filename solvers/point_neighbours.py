"""Each query point's k nearest points of a set, found on the set's uniform grid (solvers.point_grid).

A kd-tree answers one query in about 1.5 us on one core, and scipy starts a thread team for every
call, which costs more than 8,000 queries are worth; the grid is already built (the knn solver
prices on it), and numba's thread pool stays up between calls. Each query visits the cells in
rings around its own cell, keeping the k nearest so far, and stops when the k-th lies no farther
than every cell not yet visited (with the grid's rounding margins: see point_grid.box_distance).
A query that would need more than MAX_RING rings (a point far from the set, or k close to the
set's size) is left to the kd-tree; ``nearest`` says which.

Distances are point_grid.pair_distance's (squares summed in coordinate order, then the root), the
formula every other step of the knn solver and its certificate uses; ties at the k-th distance keep any of the tied points (still k nearest).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .point_grid import BOX_MARGIN, EPS, Grid, box_distance

MAX_RING = 3  # rings of cells around a query's own: 7^3 cells at most, then the kd-tree


def nearest(grid: Grid, a: np.ndarray, b: np.ndarray, a3: np.ndarray, rows: np.ndarray, k: int):
    """(distances, indices, done) for the points a[rows]: their k nearest points of b, nearest
    first, as (rows.size, k) arrays; done[q] is False where the grid search gave up (those rows
    hold nothing useful)."""
    dist = np.full((rows.size, k), np.inf)
    idx = np.full((rows.size, k), -1, dtype=np.int64)
    done = np.zeros(rows.size, dtype=np.bool_)
    if rows.size and k:
        _nearest(a, b, a3, rows, k, grid.low, grid.size, grid.slop, grid.shape, grid.start, grid.points,
                 dist, idx, done)
    return dist, idx, done


@njit(cache=True)
def _home(low, size, shape, x, axis):
    """The cell holding coordinate x along ``axis``, clamped to the grid (in floats before flooring)."""
    return int(math.floor(min(max((x - low[axis]) / size, 0.0), float(shape[axis] - 1))))


@njit(cache=True, parallel=True)
def _nearest(a, b, a3, rows, k, low, size, slop, shape, start, points, dist, idx, done):
    """Squared distances while searching (the root is monotonic), rooted at the end: the same
    value as pair_distance, whose squares are summed in the same order."""
    dims = a.shape[1]
    for q in prange(rows.size):
        i = rows[q]
        x, y, z = a3[i, 0], a3[i, 1], a3[i, 2]
        hx, hy, hz = _home(low, size, shape, x, 0), _home(low, size, shape, y, 1), _home(low, size, shape, z, 2)
        margin = slop + 8 * EPS * (abs(x) + abs(y) + abs(z))
        filled = 0
        worst = math.inf  # the k-th squared distance so far (inf until k are held)
        for ring in range(MAX_RING + 1):
            for cx in range(max(hx - ring, 0), min(hx + ring, shape[0] - 1) + 1):
                for cy in range(max(hy - ring, 0), min(hy + ring, shape[1] - 1) + 1):
                    for cz in range(max(hz - ring, 0), min(hz + ring, shape[2] - 1) + 1):
                        if max(abs(cx - hx), abs(cy - hy), abs(cz - hz)) != ring:
                            continue  # visited in an inner ring
                        c = (cx * shape[1] + cy) * shape[2] + cz
                        if start[c] == start[c + 1]:
                            continue
                        if filled == k and box_distance(low, size, slop, x, y, z, cx, cy, cz) ** 2 >= worst:
                            continue  # every point in the cell is at least as far as the k-th
                        for p in range(start[c], start[c + 1]):
                            j = points[p]
                            d = 0.0
                            for axis in range(dims):
                                t = a[i, axis] - b[j, axis]
                                d += t * t
                            if d >= worst:
                                continue
                            at = filled if filled < k else k - 1
                            while at > 0 and dist[q, at - 1] > d:  # insertion: nearest first
                                dist[q, at] = dist[q, at - 1]
                                idx[q, at] = idx[q, at - 1]
                                at -= 1
                            dist[q, at] = d
                            idx[q, at] = j
                            filled = min(filled + 1, k)
                            if filled == k:
                                worst = dist[q, k - 1]
            # every cell not visited lies beyond the faces of the visited box (a face at the grid's edge
            # has nothing beyond it); the search is over when the k-th is no farther than the nearest face
            reach = math.inf
            for value, home, axis in ((x, hx, 0), (y, hy, 1), (z, hz, 2)):
                if home - ring > 0:
                    reach = min(reach, value - (low[axis] + (home - ring) * size))
                if home + ring < shape[axis] - 1:
                    reach = min(reach, low[axis] + (home + ring + 1) * size - value)
            if reach == math.inf:
                done[q] = filled == k  # the whole grid was visited
                break
            if filled == k and math.sqrt(worst) <= reach * (1.0 - BOX_MARGIN) - margin:
                done[q] = True
                break
        for at in range(filled):
            dist[q, at] = math.sqrt(dist[q, at])
