"""The dense solvers' costs from two point sets (EuclideanCosts), made where the kernels read them.

A dense Hungarian on points needs every distance, but the n x m matrix need not cross the bus:
the two point sets (a few hundred kilobytes) are uploaded, and one kernel fills the matrix in
device memory, in the solver's orientation (rows <= columns). On the cpu target the same loop
fills a host matrix on all cores. The host never holds the distances; the answer's value is
recomputed from the points for the assigned pairs only, and the certificate
(solvers.certify_points) recomputes every distance it relies on, so a distance rounded
differently on the device (a fused multiply-add) is caught by its allowance, not trusted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InputError
from ..point_grid import pair_distance
from ..problems import DENSE_DISTANCES, EuclideanCosts, point_distances
from ..targets.cuda_jit import cuda_kernel
from ..targets.kernel import MATRIX, Kernel
from .hungarian import CostStats

cuda = None  # numba.cuda, bound when the kernel is first built (solvers.targets.cuda_jit)


@njit(cache=True, parallel=True)
def distances_cpu(a, b, out):
    for i in prange(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j] = pair_distance(a, b, i, j)


@cuda_kernel
def distances_cuda(a, b, out):
    """Block x = row i, block y and the thread = column j: consecutive threads write one row."""
    i = cuda.blockIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    if i < a.shape[0] and j < b.shape[0]:
        out[i, j] = pair_distance(a, b, i, j)


DISTANCES = Kernel("point_distances", distances_cpu, distances_cuda, MATRIX)


@dataclass(frozen=True)
class PointView:
    """The point problem seen with rows <= cols (a taller one with its sides swapped), as
    hungarian.CostView sees a matrix: the solver's rows are the points ``row_points``."""

    row_points: np.ndarray
    col_points: np.ndarray
    transposed: bool
    n_rows: int
    n_cols: int
    stats: CostStats
    exact_integer = False  # distances are real: the solver keeps its rounding tolerance

    def pair_costs(self, rows, cols) -> np.ndarray:
        return point_distances(self.row_points, self.col_points, np.asarray(rows), np.asarray(cols))


def point_view(problem: EuclideanCosts) -> PointView:
    a, b = problem.a, problem.b
    transposed = a.shape[0] > b.shape[0]
    rows, cols = (b, a) if transposed else (a, b)
    return PointView(np.ascontiguousarray(rows, dtype=np.float64), np.ascontiguousarray(cols, dtype=np.float64),
                     transposed, rows.shape[0], cols.shape[0], CostStats(0.0, largest_distance(a, b), 0, False))


def largest_distance(a: np.ndarray, b: np.ndarray) -> float:
    """An upper bound on every distance: the diagonal of the box around both sets (it scales the
    solver's rounding tolerance, as the largest cost does for a matrix). Computed in units of the
    box's longest side, so coordinates near 1e150 do not overflow the squares."""
    both = [x for x in (a, b) if x.size]
    if not both:
        return 0.0
    low = np.min([x.min(axis=0) for x in both], axis=0)
    high = np.max([x.max(axis=0) for x in both], axis=0)
    extent = high - low
    longest = float(extent.max())
    return longest * math.sqrt(float(np.sum((extent / longest) ** 2))) if longest > 0 else 0.0


def fill_distances(launcher, view: PointView, source: str | None = None):
    """The view's n_rows x n_cols distances in target memory (float64), filled by one kernel."""
    cells = view.n_rows * view.n_cols
    if cells > DENSE_DISTANCES:
        raise InputError(f"{view.n_rows:,} x {view.n_cols:,} points make {cells:,} distances, too many to hold "
                         "for a dense solver: use the knn algorithm, which needs no distance matrix", source)
    a, b = launcher.upload(view.row_points), launcher.upload(view.col_points)
    out = launcher.empty_matrix(view.n_rows, view.n_cols, np.float64)
    launcher.launch(DISTANCES, (view.n_rows, view.n_cols), a, b, out)
    if not launcher.device:
        out.setflags(write=False)  # the same numba type as a problem's frozen matrix: one compile of each step
    return out
