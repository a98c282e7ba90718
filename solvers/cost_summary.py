"""Compiled passes over a dense cost matrix: its summary for CostMatrix.describe(), and for a large
matrix one fused pass that checks it, summarises it and (where needed) writes its float64 copy,
rows spread over the cores (issue 13: the separate numpy passes ran single-threaded at a few GB/s).

Kept apart from solvers.problems so that importing the problem classes (every command-line start)
does not load numba, which must not be imported before a front end has chosen the CUDA simulator
or not; small matrices never come here for validation (numpy is as quick there, and a fresh
process then pays no numba start-up).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

PARALLEL_MIN_ENTRIES = 1 << 20  # below this, the serial loop: no thread pool to start for a small matrix


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


@njit(cache=True)
def _scan_row(values, i, out, write):
    """Row i: (min, max, +inf count, all integral, holds NaN or -inf) of its finite entries read as
    float64, written to out[i] when ``write``."""
    low, high, forbidden, integer, bad = np.inf, -np.inf, 0, True, False
    for j in range(values.shape[1]):
        c = np.float64(values[i, j])
        if write:
            out[i, j] = c
        if c == np.inf:
            forbidden += 1
        elif c != c or c == -np.inf:
            bad = True
        else:
            low = min(low, c)
            high = max(high, c)
            if integer and c != np.floor(c):
                integer = False
    return low, high, forbidden, integer, bad


@njit(cache=True, parallel=True)
def _scan_rows_parallel(values, out, write, low, high, forbidden, integer, bad):
    for i in prange(values.shape[0]):
        low[i], high[i], forbidden[i], integer[i], bad[i] = _scan_row(values, i, out, write)


@njit(cache=True)
def _scan_rows_serial(values, out, write, low, high, forbidden, integer, bad):
    for i in range(values.shape[0]):
        low[i], high[i], forbidden[i], integer[i], bad[i] = _scan_row(values, i, out, write)


def scan_costs(values: np.ndarray, out: np.ndarray | None):
    """One pass over the 2-D real ``values``: ``out`` (a C-ordered float64 array of the same shape)
    receives them as float64 when given. Returns (min, max, +inf count, all integral) of the finite
    entries, or None when some entry is NaN or -inf (the caller then names it)."""
    rows = values.shape[0]
    low, high = np.empty(rows), np.empty(rows)
    forbidden = np.empty(rows, dtype=np.int64)
    integer, bad = np.empty(rows, dtype=np.bool_), np.empty(rows, dtype=np.bool_)
    write = out is not None
    target = out if write else np.empty((0, 0))
    scan = _scan_rows_parallel if values.size >= PARALLEL_MIN_ENTRIES else _scan_rows_serial
    scan(values, target, write, low, high, forbidden, integer, bad)
    if rows and bad.any():
        return None
    if not rows:
        return np.inf, -np.inf, 0, True
    return float(low.min()), float(high.max()), int(forbidden.sum()), bool(integer.all())


def warm_parallel_pass() -> None:
    """Compile (or load) the multi-core scan for the inputs it is given (float64, float32, int64 and
    int32; C order, Fortran order or any strides): small problems never reach it by size alone."""
    for dtype in (np.float64, np.float32, np.int64, np.int32):
        square = np.zeros((2, 2), dtype=dtype)
        for values in (square, np.asfortranarray(square), square.T[:, ::-1]):  # C, Fortran and any strides
            out = np.empty((2, 2))
            for target, write in ((out, True), (np.empty((0, 0)), False)):
                rows = [np.empty(2), np.empty(2), np.empty(2, dtype=np.int64), np.empty(2, dtype=np.bool_),
                        np.empty(2, dtype=np.bool_)]
                _scan_rows_parallel(values, target, write, *rows)
