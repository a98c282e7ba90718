"""Linear assignment instances: dense uniform costs and sparse costs with a hidden perfect matching."""
from __future__ import annotations

import math

import numpy as np

from ..problems import EXACT_INTEGER, CostMatrix, SparseCosts
from ._common import BYTES_PER_EDGE, distinct_per_row, guard_size, make_rng, require, source_name


def dense_lap(n: int, cols: int | None = None, k: float = 1.0, integer: bool = True,
              seed: int = 0) -> CostMatrix:
    """Dense n x cols costs drawn uniformly from [0, k*n] (integers when ``integer``).

    Source family: Date & Nagi 2016 (GPU Hungarian), Section 6: fully dense matrices with
    integer costs uniform in [0, n] (small scale) and in [0, n/5], [0, n], [0, 10n] (large scale),
    i.e. k = 1/5, 1, 10. Integer costs lie in [0, floor(k*n)]; float costs in [0, k*n).
    ``cols`` defaults to n (square).
    """
    cols = n if cols is None else cols
    guard_size(n * cols, 16, f"dense-lap {n} x {cols}")
    top = k * n
    require(not integer or top <= EXACT_INTEGER,
            f"integer costs up to k*n = {top:g} are not all exact in float64: keep k*n at or below "
            f"2^53 ({EXACT_INTEGER}), or draw real costs (integer false)")
    rng = make_rng(seed)
    if integer:
        costs = rng.integers(0, math.floor(top) + 1, size=(n, cols), dtype=np.int64).astype(np.float64)
    else:
        costs = rng.uniform(0.0, top, size=(n, cols))
    return CostMatrix.from_array(costs, source=source_name("dense-lap"))


def sparse_lap(rows: int, cols: int, degree: int, max_cost: int = 100, seed: int = 0) -> SparseCosts:
    """Sparse integer costs (uniform in [1, max_cost]) that always admit a complete assignment.

    Each row gets ``degree`` distinct random columns. A hidden matching of size min(rows, cols)
    (a random injection of the smaller side into the larger) is planted among them, so every row
    (rows <= cols) or every column (rows > cols) can be assigned. Source family: the sparse LAP
    instances solved by LAPJVsp-style shortest augmenting path codes (Jonker & Volgenant 1987),
    scipy's min_weight_full_bipartite_matching.
    """
    require(1 <= degree <= cols, f"degree ({degree}) must be between 1 and cols ({cols})")
    guard_size(rows * degree, BYTES_PER_EDGE, f"sparse-lap with {rows * degree} edges")
    rng = make_rng(seed)
    chosen = distinct_per_row(rng, rows, cols, degree)
    # plant the hidden matching: row r must hold column partner[r] (for the matched rows)
    if rows <= cols:
        matched_rows = np.arange(rows)
        partner = rng.permutation(cols)[:rows]
    else:
        matched_rows = np.sort(rng.permutation(rows)[:cols])
        partner = rng.permutation(cols)
    held = (chosen[matched_rows] == partner[:, None]).any(axis=1)
    missing = matched_rows[~held]
    # drawn columns are in random order: either way a matched row ends up as its partner plus
    # degree - 1 columns drawn uniformly from the others
    chosen[missing, 0] = partner[~held]
    cost = rng.integers(1, max_cost + 1, size=chosen.size, dtype=np.int64)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), degree)
    return SparseCosts.from_edges(row_of, chosen.ravel(), cost, rows, cols, source_name("sparse-lap"))
