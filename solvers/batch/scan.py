"""The validating pass over a packed batch's costs: one compiled loop over segments spread over the
cores, which can copy what it reads into a buffer on the way (the GPU upload's pinned stage), so
that checking and copying are one pass over the costs, not two.

Kept in its own file so that numba's cache for it (which watches only this file) is not thrown
away whenever the solver or the certificate changes.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..dual_steps import bits_of, checksum_term

SEGMENT = 1 << 16  # entries: items are cut at these boundaries too, so one large item uses every core
HOLDS_NAN, HOLDS_NEG_INF = 1, 2  # ItemScan.bits


@njit(cache=True, parallel=True)
def scan_segments(source, cuts, target, target_start):
    """Per segment ``[cuts[s], cuts[s + 1])`` of ``source``: bits (HOLDS_NAN | HOLDS_NEG_INF), the
    largest finite |cost| (0 when none) and the checksum of its entries (solvers.dual_steps,
    position k in the flat array). When ``target`` is not None, source[k] is also written to
    target[k - target_start] (converted to target's type). No branch leaves the loop, so it runs
    at memory speed."""
    count = cuts.size - 1
    bits = np.zeros(count, dtype=np.int8)
    biggest = np.zeros(count, dtype=np.float64)
    checksums = np.zeros(count, dtype=np.uint64)
    for s in prange(count):
        low, top, nan = np.inf, 0.0, False
        checksum = np.uint64(0)
        for k in range(cuts[s], cuts[s + 1]):
            value = source[k]
            if target is not None:
                target[k - target_start] = value
            c = np.float64(value)
            nan |= c != c
            low = min(low, c)
            size = abs(c)
            top = max(top, size if size != np.inf else 0.0)
            checksum += checksum_term(bits_of(c), k)
        bits[s] = (HOLDS_NAN if nan else 0) | (HOLDS_NEG_INF if low == -np.inf else 0)
        biggest[s] = top
        checksums[s] = checksum
    return bits, biggest, checksums


def segment_cuts(offsets: np.ndarray, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """The segments of entries ``[first, last)``: cut where an item starts and every SEGMENT entries
    (int64 cuts, the first ``first`` and the last ``last``), and the item each segment belongs to."""
    inner = offsets[(offsets > first) & (offsets < last)]
    cuts = np.union1d(np.concatenate([np.arange(first, last, SEGMENT, dtype=np.int64), inner]),
                      np.array([last], dtype=np.int64)).astype(np.int64)
    if first == last:
        cuts = np.array([first], dtype=np.int64)
    items = np.searchsorted(offsets, cuts[:-1], side="right") - 1
    return cuts, items


class ItemScan:
    """Per item, what the validating pass found, gathered over any number of ranges of the flat
    costs (each range once): ``add`` scans (and copies) one range, ``verdicts`` gives the result."""

    def __init__(self, offsets: np.ndarray):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        count = self.offsets.size - 1
        self.bits = np.zeros(count, dtype=np.int8)
        self.biggest = np.zeros(count, dtype=np.float64)
        self.checksums = np.zeros(count, dtype=np.uint64)

    def add(self, costs: np.ndarray, first: int, last: int, target=None) -> None:
        """Scan costs[first:last], writing them to ``target[0:last - first]`` when it is given."""
        cuts, items = segment_cuts(self.offsets, first, last)
        if cuts.size < 2:
            return
        bits, biggest, checksums = scan_segments(costs, cuts, target, np.int64(first))
        np.bitwise_or.at(self.bits, items, bits)
        np.maximum.at(self.biggest, items, biggest)
        np.add.at(self.checksums, items, checksums)  # wraps, as the checksum does

    def verdicts(self, costs: np.ndarray) -> tuple:
        """(bad, where, biggest, checksums) per item: bad 0 fine, 1 its first bad entry is NaN, 2 it is
        -inf; where: that entry's position in the item (-1 when fine); only bad items are read again."""
        bad = np.zeros(self.bits.size, dtype=np.int8)
        where = np.full(self.bits.size, -1, dtype=np.int64)
        for b in np.flatnonzero(self.bits):
            item = np.asarray(costs[self.offsets[b]:self.offsets[b + 1]])
            k = int(np.flatnonzero(np.isnan(item) | (item == -np.inf))[0])
            bad[b] = 1 if np.isnan(item[k]) else 2
            where[b] = k
        return bad, where, self.biggest, self.checksums


def scan_items(costs, offsets):
    """Per item: (0 = fine, 1 = holds NaN, 2 = holds -inf), the position of the first such entry in
    the item, the largest finite |cost| (0 when none), and the checksum of its entries (a GPU copy
    is checked against it before the certificate trusts it)."""
    scan = ItemScan(offsets)
    scan.add(costs, 0, int(costs.size))
    return scan.verdicts(costs)
