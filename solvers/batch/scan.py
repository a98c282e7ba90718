"""The validating pass over a packed batch's costs: one compiled loop over segments spread over the
cores, which can copy what it reads into a buffer on the way (the GPU upload's pinned stage), so
that checking and copying are one pass over the costs, not two.

Its loops let go of the GIL (``nogil``), as the batch solver's and the upload's do: a Dask worker's
thread that sends results and takes tasks runs beside them.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..dual_steps import INF_BITS, MAGNITUDE_BITS, NEG_INF_BITS, bits_of, checksum_term

SEGMENT = 1 << 16  # entries: items are cut at these boundaries too, so one large item uses every core
HOLDS_NAN, HOLDS_NEG_INF = 1, 2  # ItemScan.bits


@register_jitable
def scan_range(source, first, last, target, target_start):
    """Entries ``[first, last)`` of ``source``: how many NaNs, how many -infs, the bits of the largest
    finite |cost| (0 when none) and the checksum of the entries (solvers.dual_steps, position k in
    the flat array). When ``target`` is not None, source[k] is also written to
    target[k - target_start] (converted to target's type).

    Everything is judged on each entry's float64 bits (a finite magnitude orders as its bits do), so
    the loop is integer sums and maxima with no branch, which the compiler vectorizes: the float
    minima and maxima it replaced ran at a third of the speed."""
    nan = np.uint64(0)
    neg_inf = np.uint64(0)
    top = np.uint64(0)
    checksum = np.uint64(0)
    for k in range(first, last):
        value = source[k]
        if target is not None:
            target[k - target_start] = value
        bits = bits_of(np.float64(value))
        size = bits & MAGNITUDE_BITS
        checksum += checksum_term(bits, k)
        top = max(top, size if size < INF_BITS else np.uint64(0))
        nan += np.uint64(size > INF_BITS)
        neg_inf += np.uint64(bits == NEG_INF_BITS)
    return nan, neg_inf, top, checksum


@njit(cache=True, parallel=True, nogil=True)
def scan_segments(source, cuts, target, target_start):
    """scan_range over each segment ``[cuts[s], cuts[s + 1])`` of ``source``, the segments spread
    over the cores."""
    count = cuts.size - 1
    nans = np.zeros(count, dtype=np.uint64)
    neg_infs = np.zeros(count, dtype=np.uint64)
    top_bits = np.zeros(count, dtype=np.uint64)
    checksums = np.zeros(count, dtype=np.uint64)
    for s in prange(count):
        nans[s], neg_infs[s], top_bits[s], checksums[s] = scan_range(source, cuts[s], cuts[s + 1], target,
                                                                     target_start)
    return nans, neg_infs, top_bits, checksums


def segment_cuts(offsets: np.ndarray, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """The segments of entries ``[first, last)``: cut where an item starts and every SEGMENT entries
    (int64 cuts, the first ``first`` and the last ``last``), and the item each segment belongs to."""
    if first == last:
        return np.array([first], dtype=np.int64), np.zeros(0, dtype=np.int64)
    inner = offsets[(offsets > first) & (offsets < last)]
    cuts = np.union1d(np.concatenate([np.arange(first, last, SEGMENT, dtype=np.int64), inner]),
                      np.array([last], dtype=np.int64)).astype(np.int64)
    items = np.searchsorted(offsets, cuts[:-1], side="right") - 1
    return cuts, items


class ItemScan:
    """Per item, what the validating pass found, gathered over any number of ranges of the flat
    costs (each range once): ``add`` scans (and copies) one range, ``verdicts`` gives the result."""

    def __init__(self, offsets: np.ndarray):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        count = self.offsets.size - 1
        self.bits = np.zeros(count, dtype=np.int8)
        self.top_bits = np.zeros(count, dtype=np.uint64)
        self.checksums = np.zeros(count, dtype=np.uint64)

    def add(self, costs: np.ndarray, first: int, last: int, target=None) -> None:
        """Scan costs[first:last], writing them to ``target[0:last - first]`` when it is given."""
        cuts, items = segment_cuts(self.offsets, first, last)
        if cuts.size < 2:
            return
        nans, neg_infs, top_bits, checksums = scan_segments(costs, cuts, target, np.int64(first))
        bits = np.where(nans > 0, HOLDS_NAN, 0).astype(np.int8) | np.where(neg_infs > 0, HOLDS_NEG_INF, 0).astype(np.int8)
        np.bitwise_or.at(self.bits, items, bits)
        np.maximum.at(self.top_bits, items, top_bits)  # finite magnitudes order as their bits do
        np.add.at(self.checksums, items, checksums)  # wraps, as the checksum does

    def verdicts(self, costs: np.ndarray) -> tuple:
        """(bad, where, biggest, checksums) per item: bad 0 fine, 1 its first bad entry is NaN, 2 it is
        -inf; where: that entry's position in the item (-1 when fine); only bad items are read again."""
        bad, where = first_bad_entries(costs, self.offsets, self.bits)
        return bad, where, self.top_bits.view(np.float64), self.checksums


def first_bad_entries(costs: np.ndarray, offsets: np.ndarray, holds: np.ndarray) -> tuple:
    """(bad, where) per item: bad 0 fine, 1 its first NaN or -inf entry is NaN, 2 it is -inf; where:
    that entry's position in the item (-1 when fine). Only the items ``holds`` marks (nonzero) are
    read."""
    bad = np.zeros(holds.size, dtype=np.int8)
    where = np.full(holds.size, -1, dtype=np.int64)
    for b in np.flatnonzero(holds):
        item = np.asarray(costs[offsets[b]:offsets[b + 1]])
        k = int(np.flatnonzero(np.isnan(item) | (item == -np.inf))[0])
        bad[b] = 1 if np.isnan(item[k]) else 2
        where[b] = k
    return bad, where


def scan_items(costs, offsets):
    """Per item: (0 = fine, 1 = holds NaN, 2 = holds -inf), the position of the first such entry in
    the item, the largest finite |cost| (0 when none), and the checksum of its entries (a GPU copy
    is checked against it before the certificate trusts it)."""
    scan = ItemScan(offsets)
    scan.add(costs, 0, int(costs.size))
    return scan.verdicts(costs)
