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
    the item, and the largest finite |cost| (0 when none)."""
    n_items = offsets.size - 1
    bad = np.zeros(n_items, dtype=np.int8)
    where = np.full(n_items, -1, dtype=np.int64)
    biggest = np.zeros(n_items, dtype=np.float64)
    for b in prange(n_items):
        start = offsets[b]
        top = 0.0
        for k in range(start, offsets[b + 1]):
            c = np.float64(costs[k])
            if c != c:
                bad[b] = 1
                where[b] = k - start
                break
            if c == -np.inf:
                bad[b] = 2
                where[b] = k - start
                break
            if c != np.inf and abs(c) > top:
                top = abs(c)
        biggest[b] = top
    return bad, where, biggest
