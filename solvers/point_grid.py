"""A uniform grid over a point set with the largest column potential of each cell, for finding
the pairs (i, j) that may break u_i + v_j <= d_ij without looking at all n x m of them.

A cell whose nearest face is at distance D from point a_i holds no such pair when
u_i + (the largest v in the cell) <= D, since every point in it is at least D away. After a solve
the potentials vary smoothly in space, so nearly every cell is passed over whatever the spread of
v over the whole set (a single bound u_i + max v reached most points between frames where
particles enter and leave). Points of 1 to 3 coordinates (fewer are padded with zeros).

This module holds the grid and the per-cell geometry. The loops that use it live with their
callers (the knn solver collects the pairs that break its duals; the certificate measures them),
so each can be checked on its own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from numba.extending import register_jitable

POINTS_PER_CELL = 4  # about this many points of b to a cell
BOX_MARGIN = 1e-9    # relative: a cell is passed over only when clear of the bound by this much (rounding)
EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Grid:
    low: np.ndarray        # (3,) corner of the grid
    size: float            # edge of a cell
    shape: np.ndarray      # (3,) cells along each axis
    start: np.ndarray      # (cells + 1,) CSR of the points of each cell
    points: np.ndarray     # point indices, cell by cell
    slop: float            # absolute rounding of cell bounds and of a point's cell (see box_distance)


def padded(points: np.ndarray) -> np.ndarray:
    """The points with three coordinates (zeros appended to fewer)."""
    if points.shape[1] == 3:
        return np.ascontiguousarray(points, dtype=np.float64)
    out = np.zeros((points.shape[0], 3))
    out[:, :points.shape[1]] = points
    return out


def build(points: np.ndarray) -> Grid:
    coords = padded(points)
    m = coords.shape[0]
    low = coords.min(axis=0) if m else np.zeros(3)
    extent = np.maximum((coords.max(axis=0) if m else np.zeros(3)) - low, 0.0)
    span = float(extent.max())
    if span == 0.0 or m == 0:
        size, shape = 1.0, np.ones(3, dtype=np.int64)
    else:
        # cells of equal edge with about POINTS_PER_CELL points each in the volume the points fill
        # (a flat or thin set fills less: its empty axes get one cell)
        flat = extent <= span * 1e-12
        volume = float(np.prod(np.where(flat, 1.0, extent / span)))  # in units of span: no overflow at 1e150
        dims = int((~flat).sum())
        size = span * (volume * POINTS_PER_CELL / m) ** (1.0 / dims)
        size = max(size, span / (4.0 * m) ** (1.0 / dims), span * 1e-9)  # at most about 4m cells
        shape = np.where(flat, 1, np.floor(extent / size).astype(np.int64) + 1)
    cells = _cell_of(coords, low, size, shape)
    start, order = _bucket(cells, int(np.prod(shape)))
    slop = 8 * EPS * (float(np.abs(coords).max(initial=0.0)) + float(np.abs(low).max()) + float(size) * shape.max())
    return Grid(low, float(size), shape.astype(np.int64), start, order, slop)


@njit(cache=True)
def _bucket(cells, n_cells):
    """A counting sort of the points by cell: (start, order), order listing each cell's points in
    index order (a stable argsort's answer, in one pass over the points instead of a sort)."""
    start = np.zeros(n_cells + 1, dtype=np.int64)
    for c in cells:
        start[c + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    cursor = start[:-1].copy()
    order = np.empty(cells.size, dtype=np.int64)
    for p in range(cells.size):
        order[cursor[cells[p]]] = p
        cursor[cells[p]] += 1
    return start, order


def _cell_of(coords, low, size, shape) -> np.ndarray:
    index = np.minimum(np.floor((coords - low) / size).astype(np.int64), shape - 1)
    index = np.maximum(index, 0)
    return (index[:, 0] * shape[1] + index[:, 1]) * shape[2] + index[:, 2]


def cell_maxima(grid: Grid, values: np.ndarray) -> np.ndarray:
    """The largest of ``values`` (one per point) in each cell; -inf for an empty cell."""
    out = np.full(grid.start.size - 1, -np.inf)
    cells = np.repeat(np.arange(out.size), np.diff(grid.start))
    np.maximum.at(out, cells, values[grid.points])
    return out


@register_jitable
def cell_span(low, size, shape, x, reach, axis):
    """The cells along ``axis`` within ``reach`` of coordinate x (first, last), clipped to the grid
    (in floats first: a reach of 1e300 cells must not overflow an integer)."""
    top = float(shape[axis])  # clamped before flooring: numba's floor gives an int64, which 1e139 overflows
    first = math.floor(min(max((x - reach - low[axis]) / size, -1.0), top))
    last = math.floor(min(max((x + reach - low[axis]) / size, -1.0), top))
    return max(first, 0), min(last, shape[axis] - 1)


@register_jitable
def box_distance(low, size, slop, x, y, z, cx, cy, cz):
    """A lower bound on the distance from (x, y, z) to every point in cell (cx, cy, cz): the
    distance to the cell's box, less BOX_MARGIN of it and the absolute rounding of the box's
    bounds, of the point's own coordinates and of which cell a point was put in (``slop``)."""
    total = 0.0
    for value, c, axis in ((x, cx, 0), (y, cy, 1), (z, cz, 2)):
        lo = low[axis] + c * size
        hi = lo + size
        gap = lo - value if value < lo else (value - hi if value > hi else 0.0)
        total += gap * gap
    return max(math.sqrt(total) * (1.0 - BOX_MARGIN) - slop - 8 * EPS * (abs(x) + abs(y) + abs(z)), 0.0)


@register_jitable
def pair_distance(a, b, i, j):
    """As problems.point_distances: squares summed in coordinate order, then the root."""
    s = 0.0
    for k in range(a.shape[1]):
        t = a[i, k] - b[j, k]
        s += t * t
    return math.sqrt(s)
