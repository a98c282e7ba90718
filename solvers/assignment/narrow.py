"""Very wide (or tall) cost matrices: keep only the columns an optimal assignment can need.

With n rows and m > n columns, some optimal assignment uses, in every row, one of that row's n
cheapest allowed columns (exchange argument: a row assigned elsewhere has n columns at least as
cheap, at most n - 1 of them taken by the other rows, so it can move to a free one at no extra
cost; a complete assignment of the allowed pairs survives the same moves). So the problem shrinks
to the union of those candidates, at most n^2 columns, before the auction pads it to a square: a
1 x 100000 matrix becomes 1 x 1 instead of 100000 x 100000 (the Hungarian solves rectangles at
their own shape and does not narrow). Tall matrices are the same with rows and columns swapped.
The narrowed problem's duals extend to the full problem with
potential 0 on the dropped columns (the rectangular LP's value for unassigned ones) when every
row's potential is at most its cheapest dropped cost; otherwise none are returned and the
certificate derives its own potentials for the full problem.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..problems import CostMatrix
from ..result import Solution

WORTH = 0.9  # narrow only when it keeps at most this share of the long side
CHUNK_ENTRIES = 1 << 23  # entries partitioned at once (64 MB of indices)
MIN_LONG = 256  # a shorter long side costs little to pad


@dataclass(frozen=True)
class Narrowed:
    problem: CostMatrix   # the narrowed problem
    keep: np.ndarray      # indices of the long side kept, increasing
    transposed: bool      # the long side is the rows (a tall matrix)
    shape: tuple          # the original shape
    dropped_min: np.ndarray  # per line of the short side: its cheapest dropped cost (inf: none)

    def widen(self, solution: Solution) -> Solution:
        """The narrowed problem's solution as one of the original problem (its duals extended where
        feasible)."""
        n_rows, n_cols = self.shape
        short_match = solution.row_match if not self.transposed else solution.col_match
        long_match = solution.col_match if not self.transposed else solution.row_match
        to_long = np.where(short_match >= 0, self.keep[np.maximum(short_match, 0)], -1)
        from_long = np.full(n_cols if not self.transposed else n_rows, -1, dtype=np.int64)
        from_long[self.keep] = long_match
        row_match, col_match = (to_long, from_long) if not self.transposed else (from_long, to_long)
        side = "candidate_rows" if self.transposed else "candidate_columns"
        return replace(solution, row_match=row_match, col_match=col_match, duals=self._duals(solution.duals),
                       device_costs=None,  # it holds the narrowed costs, not these
                       stats=dict(solution.stats, **{side: int(self.keep.size)}))

    def _duals(self, duals):
        """The narrowed duals with 0 on the dropped lines, if that is feasible there, else None."""
        if duals is None:
            return None
        short, long = (duals["u"], duals["v"]) if not self.transposed else (duals["v"], duals["u"])
        short, long = np.asarray(short, dtype=np.float64), np.asarray(long, dtype=np.float64)
        if long.size and long.max() != 0:  # a square narrowed problem: its largest long-side potential
            shift = float(long.max())       # to 0, the least the short side's potentials can then be
            short, long = short + shift, long - shift
        if not np.all(short <= self.dropped_min):
            return None
        extended = np.zeros(self.shape[0] if self.transposed else self.shape[1])
        extended[self.keep] = long
        return {"u": short, "v": extended} if not self.transposed else {"u": extended, "v": short}


def narrow_long_side(problem: CostMatrix) -> Narrowed | None:
    """The problem cut down to the candidate columns (rows, for a tall matrix), or None when that
    would keep most of them."""
    n_rows, n_cols = problem.shape
    transposed = n_rows > n_cols
    costs = problem.costs.T if transposed else problem.costs
    n, m = costs.shape
    if n == 0 or m < 2 * n or m < MIN_LONG:
        return None
    # each short-side line's n cheapest entries (forbidden ones sort last; extra candidates are
    # harmless), a block of lines at a time so the partition's indices stay small
    candidate = np.zeros(m, dtype=bool)
    block = max(1, CHUNK_ENTRIES // m)
    for first in range(0, n, block):
        part = costs[first:first + block]
        candidate[np.argpartition(part, n - 1, axis=1)[:, :n]] = True
    keep = np.flatnonzero(candidate)
    if keep.size > WORTH * m:
        return None
    dropped = np.flatnonzero(~candidate)
    dropped_min = np.empty(n)
    block = max(1, CHUNK_ENTRIES // max(dropped.size, 1))
    for first in range(0, n, block):
        dropped_min[first:first + block] = costs[first:first + block, dropped].min(axis=1)
    narrowed = costs[:, keep]
    sub = CostMatrix.from_array(narrowed.T if transposed else narrowed, source=problem.source)
    return Narrowed(sub, keep.astype(np.int64), transposed, problem.shape, dropped_min)
