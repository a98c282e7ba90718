"""AssignmentBatch: a batch of assignment problems as one dataset (what ``solvers.load`` makes of a
3-D .npy or an .npz of matrices, and what the explorer opens).

It holds the batch validated and packed once (solvers.batch.inputs.BatchInput), so that solving it
again, on another backend, or one item at a time, repeats no check and no copy.
"""
from __future__ import annotations

import operator

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InputError
from ..problems import CostMatrix
from .inputs import BatchInput, prepare_batch


@dataclass(frozen=True, eq=False)
class AssignmentBatch:
    kind: ClassVar[str] = "batch"
    batch: BatchInput
    source: str | None = None

    @classmethod
    def from_costs(cls, costs, source: str | None = None) -> "AssignmentBatch":
        """A (B, n, m) array or a list of 2-D matrices, checked as solve_batch checks them."""
        try:
            return cls(prepare_batch(costs), source)
        except InputError as e:
            raise InputError(e.message, source) from None

    def __len__(self) -> int:
        return self.batch.packed.size

    def costs(self):
        """The problems as given: one (B, n, m) array for a regular batch, else a list of matrices."""
        items = [self.item_costs(b) for b in range(len(self))]
        if self.batch.regular:
            return np.stack(items) if items else np.zeros((0, *self.batch.item_shape), dtype=self.dtype)
        return items

    def __repr__(self) -> str:
        described = self.describe()
        return (f"AssignmentBatch({described['problems']} problems, {described['layout']}, {described['costs']}"
                + (f", from {self.source}" if self.source else "") + ")")

    @property
    def shapes(self) -> np.ndarray:
        """(B, 2): each problem's rows and columns, as given."""
        return self.batch.shapes

    @property
    def dtype(self) -> np.dtype:
        return self.batch.packed.costs.dtype

    def item_costs(self, b: int) -> np.ndarray:
        """Problem ``b``'s costs as given (a view of the packed batch: no copy)."""
        try:
            b = operator.index(b)
        except TypeError:
            raise InputError(f"an item of the batch is chosen by its number (0 to {len(self) - 1}), not {b!r}",
                             self.source) from None
        if not 0 <= b < len(self):
            raise InputError(f"the batch has no item {b} (items 0 to {len(self) - 1})", self.source)
        packed = self.batch.packed
        rows, cols = int(packed.rows[b]), int(packed.cols[b])
        costs = packed.costs[packed.offsets[b]:packed.offsets[b + 1]].reshape(rows, cols)
        return costs.T if packed.transposed[b] else costs

    def item(self, b: int) -> CostMatrix:
        """Problem ``b`` on its own, in its own orientation (for solving and watching it alone)."""
        return CostMatrix.from_array(self.item_costs(b).astype(np.float64), source=self.source)

    def describe(self) -> dict:
        shapes = self.shapes
        count = len(self)
        out = {"kind": self.kind, "problems": count, "layout": "regular" if self.batch.regular else "ragged",
               "costs": "float32" if self.dtype == np.float32 else "float64"}
        if count:
            out.update(rows_min=int(shapes[:, 0].min()), rows_max=int(shapes[:, 0].max()),
                       cols_min=int(shapes[:, 1].min()), cols_max=int(shapes[:, 1].max()),
                       entries=int(self.batch.packed.costs.size))
        return out
