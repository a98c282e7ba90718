"""The auction on sparse costs (issue 14): the view of a ``SparseCosts`` problem that the auction's
steps read, with rows <= columns, as CSR by rows and CSC by columns (the reverse auction scans
columns), and its upload to the target.

The steps themselves are the dense auction's (``auction_kernels``: they read costs through accessors
written for both forms); on a GPU they run with a warp per row instead of a block, as a sparse row
holds a few entries (``auction_kernels.SPARSE_STEPS``). Only the stored pairs are allowed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..problems import INT32_MAX, SparseCosts, writeable_alias
from .hungarian import EXACT_FLOAT32, EXACT_FLOAT64, CostStats


@dataclass(frozen=True)
class SparseView:
    """The problem seen with rows <= columns: CSR (``row_ptr``, ``col_ind``, ``cost``) and CSC
    (``col_ptr``, ``row_ind``, ``cost_by_column``), each line's indices increasing."""

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
        at = np.searchsorted(self._keys, np.asarray(rows, np.int64) * self.n_cols + np.asarray(cols, np.int64))
        return self.cost[at].astype(np.float64, copy=False)

    @cached_property
    def _keys(self) -> np.ndarray:
        """row * n_cols + column of every stored pair, increasing (CSR order)."""
        rows = np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.row_ptr))
        return rows * self.n_cols + self.col_ind

    def allowed(self):
        """The allowed pattern (scipy CSR, rows <= columns), for the feasibility check."""
        from scipy.sparse import csr_matrix
        return csr_matrix((np.ones(self.col_ind.size, np.int8), self.col_ind, self.row_ptr),
                          shape=(self.n_rows, self.n_cols))


def sparse_view(problem: SparseCosts) -> SparseView:
    from scipy.sparse import csr_matrix
    n, m = problem.shape
    csr = csr_matrix((problem.cost, problem.col_ind, problem.row_ptr), shape=(n, m))
    csc = csr.tocsc()
    csc.sort_indices()
    cost = problem.cost
    stats = CostStats(float(cost.min()) if cost.size else np.inf, float(cost.max()) if cost.size else -np.inf,
                      n * m - cost.size, bool(np.all(cost == np.round(cost))))
    index = np.int32 if max(cost.size, n, m) < INT32_MAX else np.int64
    by_rows = tuple(np.asarray(a, dtype=dt) for a, dt in ((problem.row_ptr, index), (problem.col_ind, index),
                                                            (problem.cost, np.float64)))
    by_cols = (csc.indptr.astype(index, copy=False), csc.indices.astype(index, copy=False), csc.data)
    if n > m:  # the problem's columns are the view's rows
        return SparseView(*by_cols, *by_rows, transposed=True, n_rows=m, n_cols=n, stats=stats)
    return SparseView(*by_rows, *by_cols, transposed=False, n_rows=n, n_cols=m, stats=stats)


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
