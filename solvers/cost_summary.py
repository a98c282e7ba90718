"""One compiled pass over a dense cost matrix for CostMatrix.describe(): kept apart from
solvers.problems so that importing the problem classes (every command-line start) does not load
numba, which must not be imported before a front end has chosen the CUDA simulator or not."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def finite_summary(costs):
    """(min, max, count of +inf, all integral) of a flat float64 cost array."""
    low, high, forbidden, integer = np.inf, -np.inf, 0, True
    for k in range(costs.size):
        c = costs[k]
        if c == np.inf:
            forbidden += 1
            continue
        low = min(low, c)
        high = max(high, c)
        if integer and c != np.floor(c):
            integer = False
    return low, high, forbidden, integer
