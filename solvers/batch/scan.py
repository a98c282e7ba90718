"""The validating pass over a packed batch's costs: one compiled loop, items spread over the cores.

Kept in its own file so that numba's cache for it (which watches only this file) is not thrown
away whenever the solver or the certificate changes.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..dual_steps import bits_of, checksum_term


@njit(cache=True, parallel=True)
def scan_items(costs, offsets):
    """Per item: (0 = fine, 1 = holds NaN, 2 = holds -inf), the position of the first such entry in
    the item, the largest finite |cost| (0 when none), and the checksum of its entries
    (solvers.dual_steps, position k in the flat array: a GPU copy is checked against it before the
    certificate trusts it). The pass has no branch that leaves the loop (so it runs at memory speed;
    the checksum costs nothing measurable there); only an item found bad is read again."""
    n_items = offsets.size - 1
    bad = np.zeros(n_items, dtype=np.int8)
    where = np.full(n_items, -1, dtype=np.int64)
    biggest = np.zeros(n_items, dtype=np.float64)
    checksums = np.zeros(n_items, dtype=np.uint64)
    for b in prange(n_items):
        start, stop = offsets[b], offsets[b + 1]
        low, top, nan = np.inf, 0.0, False
        checksum = np.uint64(0)
        for k in range(start, stop):
            c = np.float64(costs[k])
            nan |= c != c
            low = min(low, c)
            size = abs(c)
            top = max(top, size if size != np.inf else 0.0)
            checksum += checksum_term(bits_of(c), k)
        biggest[b] = top
        checksums[b] = checksum
        if nan or low == -np.inf:
            for k in range(start, stop):
                c = np.float64(costs[k])
                if c != c or c == -np.inf:
                    bad[b] = 1 if c != c else 2
                    where[b] = k - start
                    break
    return bad, where, biggest, checksums
