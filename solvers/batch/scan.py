"""The validating pass over a packed batch's costs: one compiled loop, items spread over the cores.

Kept in its own file so that numba's cache for it (which watches only this file) is not thrown
away whenever the solver or the certificate changes.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def scan_items(costs, offsets):
    """Per item: (0 = fine, 1 = holds NaN, 2 = holds -inf), the position of the first such entry in
    the item, and the largest finite |cost| (0 when none). The pass has no branch that leaves the
    loop (so it runs at memory speed); only an item found bad is read again for the position."""
    n_items = offsets.size - 1
    bad = np.zeros(n_items, dtype=np.int8)
    where = np.full(n_items, -1, dtype=np.int64)
    biggest = np.zeros(n_items, dtype=np.float64)
    for b in prange(n_items):
        start, stop = offsets[b], offsets[b + 1]
        low, top, nan = np.inf, 0.0, False
        for k in range(start, stop):
            c = np.float64(costs[k])
            nan |= c != c
            low = min(low, c)
            size = abs(c)
            top = max(top, size if size != np.inf else 0.0)
        biggest[b] = top
        if nan or low == -np.inf:
            for k in range(start, stop):
                c = np.float64(costs[k])
                if c != c or c == -np.inf:
                    bad[b] = 1 if c != c else 2
                    where[b] = k - start
                    break
    return bad, where, biggest
