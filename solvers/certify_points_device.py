"""The point certificate's pair check on every pair at once, for a GPU: u_i + v_j <= d_ij checked
on all n x m pairs with the distances computed on the fly, one thread per row.

Used when the solve ran on a GPU and the pairs are few enough to check them all there (far
quicker than the grid walk on the host at such sizes); the grid walk (certify_points._scan_rows)
stays the check everywhere else. Independent of the solvers: it uploads its own copy of the points
and the duals, and computes every distance itself (with point_grid.pair_distance's formula; a
distance rounded differently on the device, by a fused multiply-add, is within the same rounding
allowance the host check adds). The cpu loop is the same check on the host (tests compare the two).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .point_grid import pair_distance
from .targets.cuda_jit import cuda_kernel
from .targets.kernel import EACH, Kernel

cuda = None  # numba.cuda, bound when the kernel is first built (solvers.targets.cuda_jit)

EPS = float(np.finfo(np.float64).eps)
DISTANCE_ROUNDING = 4 * EPS  # as certify_points: the allowance of a recomputed distance and of u + v - d
MAX_PAIRS = 1 << 33          # beyond this many pairs the grid walk on the host is the quicker check


@register_jitable
def row_check(a, b, u, v, i, delta, scale):
    """Row i against every column: its largest u_i + v_j - d_ij plus the rounding allowance (at
    least 0), and the largest |u_i + v_j| + d_ij met (at least its starting scale)."""
    worst, big = 0.0, scale[i]
    for j in range(b.shape[0]):
        d = pair_distance(a, b, i, j)
        uv = u[i] + v[j]
        worst = max(worst, uv - d + DISTANCE_ROUNDING * (abs(u[i]) + abs(v[j]) + d))
        big = max(big, abs(uv) + d)
    delta[i] = worst
    scale[i] = big


@njit(cache=True, parallel=True)
def rows_cpu(a, b, u, v, delta, scale):
    for i in prange(a.shape[0]):
        row_check(a, b, u, v, i, delta, scale)


@cuda_kernel
def rows_cuda(a, b, u, v, delta, scale):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row_check(a, b, u, v, i, delta, scale)


ROWS = Kernel("point_pairs_check", rows_cpu, rows_cuda, EACH)


def row_violations(a, b, u, v, backend: str = "cuda"):
    """(delta per row of a, the magnitude scale per row, pairs looked at), as
    certify_points._row_violations gives them, from every pair, on ``backend``."""
    from .targets import launcher_for
    n = a.shape[0]
    v_max = float(v.max()) if v.size else 0.0
    launcher = launcher_for(backend)
    delta = launcher.zeros(n, np.float64)
    scale = launcher.upload(np.abs(u) + abs(v_max), np.float64)
    launcher.launch(ROWS, n, launcher.upload(a, np.float64), launcher.upload(b, np.float64),
                    launcher.upload(u, np.float64), launcher.upload(v, np.float64), delta, scale)
    return launcher.read(delta)[:n], launcher.read(scale)[:n], n * b.shape[0]
