"""The contract between ``solve_batch`` and its backends: a batch packed into flat arrays
(``PackedBatch``) goes in, a ``PackedSolution`` comes out.

A backend is a function ``solve_packed(packed: PackedBatch) -> PackedSolution``, named in
``solvers.batch.api.BATCH_BACKENDS``. Every item is oriented rows <= cols, and a backend assigns
every row of every item (or reports the item infeasible). Duals are those of the rectangular
assignment LP: u_i + v_j <= c_ij on allowed pairs, equality on assigned pairs, v_j <= 0, and
v_j = 0 on columns left unassigned (for a square item v is free), as solvers.assignment.hungarian.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SOLVED, INFEASIBLE = 0, 1  # PackedSolution.status


@dataclass(frozen=True, eq=False)
class PackedBatch:
    """B assignment problems in one flat array, each oriented rows <= cols.

    costs: 1-D float64 (float32 when the input was float32); item b is
        ``costs[offsets[b]:offsets[b+1]].reshape(rows[b], cols[b])``, row-major.
    offsets: int64 (B+1,); rows, cols: int64 (B,) oriented sizes (rows <= cols); transposed: bool
    (B,), the item was given with more rows than columns and is stored as its transpose;
    row_offsets, col_offsets: int64 (B+1,), prefix sums of rows and cols: where an item's entries
    start in flat per-row and per-column arrays.
    checksums: uint64 (B,), each item's checksum of its costs when they were checked (None where not
    computed): a copy of the costs elsewhere (the GPU's) is certified only after it matches them.
    device_costs: a GPU copy of ``costs`` made by the pass that checked them (None where none was):
        a GPU backend solves on it instead of uploading the costs again.
    solving: the solve a GPU backend started on ``device_costs`` while they went up (an
        ``early_solve.SolveAsItArrives``), or None.
    unchecked: the costs have not been checked yet: the backend that solves them checks each item
        first (the cpu backend, while the item is in its core's cache) and refuses the batch as the
        checking pass would (inputs.refuse_bad_items).
    """
    costs: np.ndarray
    offsets: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    transposed: np.ndarray
    row_offsets: np.ndarray
    col_offsets: np.ndarray
    checksums: np.ndarray | None = None
    device_costs: object = None
    solving: object = None
    unchecked: bool = False

    @property
    def size(self) -> int:
        """B, the number of problems."""
        return int(self.rows.size)


@dataclass(frozen=True, eq=False)
class PackedSolution:
    """What a backend returns, in the packed (oriented) layout.

    row_to_col: int64, length sum(rows), indexed by row_offsets: each row's column within its item
        (-1 only in an infeasible item); u: float64 by row_offsets; v: float64 by col_offsets;
    iterations: int64 (B,), the backend's own count of steps (the CPU: shortest-path steps, one
        column settled each); status: int8 (B,), SOLVED (0) or INFEASIBLE (1: the +inf pairs leave
        no assignment of every row);
    seconds: float64 (B,), each item's own solve time where the backend measures it (NaN where not),
        or None;
    device_costs: the GPU's copy of the costs the solver read (a backend that uploaded host costs),
        or None: the certificate can run there instead of reading the host's costs again.
    device_solution: the GPU arrays the host ones were read from (a GPU backend), which its
        certificate reads in place while the host arrays are untouched (they are read-only until then).
    certificate: certify_batch.certify_packed's outcome when the backend ran that check itself, on
        each item right after solving it (the cpu backend: the item's costs are still in the core's
        cache), else None; certify_seconds: the part of the solve's time those checks took.
    """
    row_to_col: np.ndarray
    u: np.ndarray
    v: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    seconds: np.ndarray | None = None
    device_costs: object = None
    device_solution: object = None
    certificate: dict | None = None
    certify_seconds: float = 0.0
