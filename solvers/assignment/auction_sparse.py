"""The auction on sparse costs (issue 14): the view of a ``SparseCosts`` problem that the auction's
steps read, with rows <= columns, as CSR by rows and, for a rectangle, CSC by columns (the reverse
auction scans columns), and its upload to the target. Imported only when a run starts (numba).

The steps themselves are the dense auction's (``auction_kernels``: they read costs through
accessors written for both forms); on a GPU they run with a warp per row instead of a block, as a
sparse row holds a few entries (``auction_kernels.SPARSE_STEPS``). Only the stored pairs are allowed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..problems import INT32_MAX, SparseCosts, writeable_alias
from .auction_kernels import stored_at
from .hungarian import EXACT_FLOAT32, EXACT_FLOAT64, CostStats


@dataclass(frozen=True)
class SparseView:
    """The problem seen with rows <= columns: CSR (``row_ptr``, ``col_ind``, ``cost``) and CSC
    (``col_ptr``, ``row_ind``, ``cost_by_column``; one-element placeholders for a square problem),
    each line's indices increasing."""

    row_ptr: np.ndarray
    col_ind: np.ndarray
    cost: np.ndarray
    col_ptr: np.ndarray
    row_ind: np.ndarray
    cost_by_column: np.ndarray
    transposed: bool
    n_rows: int
    n_cols: int
    stats: CostStats

    @property
    def exact_integer(self) -> bool:
        return self.stats.integer and self.stats.max_abs * (self.n_cols + 1) < EXACT_FLOAT64

    def pair_costs(self, rows, cols) -> np.ndarray:
        """The costs of the view's pairs (rows[k], cols[k]), each stored (float64)."""
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        out = np.empty(rows.size)
        if rows.size:
            _stored_costs(self.row_ptr, self.col_ind, self.cost, rows, cols, out)
        return out

    def allowed(self):
        """The allowed pattern (scipy CSR, rows <= columns), for the feasibility check."""
        from scipy.sparse import csr_matrix
        return csr_matrix((np.ones(self.col_ind.size, np.int8), self.col_ind, self.row_ptr),
                          shape=(self.n_rows, self.n_cols))


def sparse_view(problem: SparseCosts) -> SparseView:
    """The view; the columns' CSC only for a rectangle (a square problem never runs the reverse
    auction, the one step that scans columns: at a million rows scipy's conversion took 0.36 s,
    five times the GPU's whole auction), else one-element placeholders of the same types."""
    n, m = problem.shape
    cost = problem.cost
    stats = CostStats(float(cost.min()) if cost.size else np.inf, float(cost.max()) if cost.size else -np.inf,
                      n * m - cost.size, bool(np.all(cost == np.round(cost))))
    index = np.int32 if max(cost.size, n, m) < INT32_MAX else np.int64
    by_rows = tuple(writeable_alias(np.asarray(a, dtype=dt)) for a, dt in
                    ((problem.row_ptr, index), (problem.col_ind, index), (problem.cost, np.float64)))
    if n == m:
        by_cols = (np.zeros(1, index), np.zeros(1, index), np.zeros(1))
    else:
        from scipy.sparse import csr_matrix
        csc = csr_matrix((problem.cost, problem.col_ind, problem.row_ptr), shape=(n, m)).tocsc()
        csc.sort_indices()
        by_cols = (csc.indptr.astype(index, copy=False), csc.indices.astype(index, copy=False), csc.data)
    if n > m:  # the problem's columns are the view's rows
        return SparseView(*by_cols, *by_rows, transposed=True, n_rows=m, n_cols=n, stats=stats)
    return SparseView(*by_rows, *by_cols, transposed=False, n_rows=n, n_cols=m, stats=stats)


def columns_with_pairs(view: SparseView) -> int:
    """How many columns hold at least one stored pair."""
    seen = np.zeros(view.n_cols, dtype=np.bool_)
    seen[view.col_ind] = True
    return int(np.count_nonzero(seen))


@njit(cache=True, parallel=True)
def _stored_costs(row_ptr, col_ind, cost, rows, cols, out):
    """out[k] = the cost of the stored pair (rows[k], cols[k]), found by bisection in its row."""
    for k in prange(rows.size):
        out[k] = cost[stored_at(row_ptr, col_ind, rows[k], cols[k])]


def target_costs(launcher, view: SparseView, compact_integers: bool) -> tuple[tuple, float]:
    """The costs as the steps read them (the tuple of ``auction_kernels``) where they run, and the
    seconds spent uploading: on a GPU float32 costs when every cost is an integer below 2^24 (exact),
    else float64."""
    import time
    arrays = (view.row_ptr, view.col_ind, view.cost, view.col_ptr, view.row_ind, view.cost_by_column)
    if not launcher.device:  # one numba type whatever the problem's arrays' flags
        return tuple(writeable_alias(np.ascontiguousarray(a)) for a in arrays), 0.0
    use32 = compact_integers and view.stats.integer and view.stats.max_abs < EXACT_FLOAT32
    start = time.perf_counter()
    costs = tuple(launcher.upload(a, np.float32 if (use32 and a.dtype.kind == "f") else None) for a in arrays)
    launcher.synchronize()
    return costs, time.perf_counter() - start
