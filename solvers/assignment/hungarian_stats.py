"""One parallel pass of cost statistics over a large dense cost matrix (the Hungarian's and the
auction's preparation, and the offset check of the scipy reference): apart from the kernels so that
a caller that only needs the statistics loads numba, not numba.cuda. Imported only when used."""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def cost_stats(C):
    """One pass over a cost matrix: (min finite, max finite, number of +inf, all finite integral)."""
    rows, cols = C.shape
    lows = np.full(rows, np.inf)
    highs = np.full(rows, -np.inf)
    infs = np.zeros(rows, dtype=np.int64)
    fractional = np.zeros(rows, dtype=np.bool_)
    for i in prange(rows):
        lo, hi, n_inf, frac = np.inf, -np.inf, 0, False
        for j in range(cols):
            c = C[i, j]
            if c == np.inf:
                n_inf += 1
                continue
            lo = min(lo, c)
            hi = max(hi, c)
            if c != np.floor(c):
                frac = True
        lows[i], highs[i], infs[i], fractional[i] = lo, hi, n_inf, frac
    if rows == 0:
        return np.inf, -np.inf, 0, True
    return lows.min(), highs.max(), infs.sum(), not fractional.any()
