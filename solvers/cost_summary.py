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
from numba.extending import register_jitable

from .dual_steps import INF_BITS, MAGNITUDE_BITS, NEG_INF_BITS, bits_of, checksum_term, float_of_bits, order_key

PARALLEL_MIN_ENTRIES = 1 << 20  # below this, the serial loop: no thread pool to start for a small matrix


LOW_START = -9218868437227405313   # order_key(-inf): below every finite key (the empty maximum)
HIGH_START = 9218868437227405312   # order_key(+inf): above every finite key (the empty minimum)


@register_jitable
def _fold(c, k, low, high, forbidden, fractional, bad, checksum):
    """One entry c (float64, at row-major position k) into the running summary, with no branch (so
    the loops vectorize): low / high are order keys (dual_steps.order_key) of the least and greatest
    finite entry, +inf entries are counted apart, fractional counts finite non-integers, bad counts
    NaN and -inf (whose keys may then spoil low and high: the summary is not used)."""
    bits = bits_of(c)
    key = order_key(bits)
    is_inf = bits == INF_BITS
    checksum += checksum_term(bits, k)
    forbidden += np.int64(is_inf)
    bad += np.int64(((bits & MAGNITUDE_BITS) > INF_BITS) | (bits == NEG_INF_BITS))
    fractional += np.int64((c != np.floor(c)) & (not is_inf))
    low = min(low, key)  # +inf's key is the largest: it never lowers the minimum
    high = max(high, key if not is_inf else np.int64(LOW_START))
    return low, high, forbidden, fractional, bad, checksum


@register_jitable
def key_value(key):
    """The float64 an order key stands for."""
    return float_of_bits(np.uint64(order_key(key)))


@njit(cache=True)
def finite_summary(costs):
    """(min, max, count of +inf, all integral, checksum) of a flat float64 cost array (its
    checksum: solvers.dual_steps); min +inf and max -inf when no entry is finite."""
    low, high = np.int64(HIGH_START), np.int64(LOW_START)
    forbidden = fractional = bad = np.int64(0)
    checksum = np.uint64(0)
    for k in range(costs.size):
        low, high, forbidden, fractional, bad, checksum = _fold(costs[k], k, low, high, forbidden, fractional,
                                                                bad, checksum)
    return key_value(low), key_value(high), forbidden, fractional == 0, checksum


@njit(cache=True)
def _scan_row(values, i, out, write, native):
    """Row i: (min, max, +inf count, all integral, holds NaN or -inf, checksum share) of its
    entries read as float64, written to out[i] when ``write``; with ``native`` also the least and
    greatest entry in the input's own type (integers beyond 2^53 must be judged before rounding)."""
    low, high = np.int64(HIGH_START), np.int64(LOW_START)
    forbidden = fractional = bad = np.int64(0)
    checksum = np.uint64(0)
    least = greatest = values[i, 0]
    first = i * values.shape[1]  # the row-major position of the row's first entry
    for j in range(values.shape[1]):
        x = values[i, j]
        if native:
            least = min(least, x)
            greatest = max(greatest, x)
        c = np.float64(x)
        if write:
            out[i, j] = c
        low, high, forbidden, fractional, bad, checksum = _fold(c, first + j, low, high, forbidden, fractional,
                                                                bad, checksum)
    return key_value(low), key_value(high), forbidden, fractional == 0, bad > 0, checksum, least, greatest


@register_jitable
def _integer_row(values, i, out, first):
    """Row i of an integer matrix: (least, greatest, checksum share), its entries at positions
    first, first + 1, ...; copied into out[i] on the way unless ``out`` is None (compiled apart).
    Integers are finite, integral and never forbidden, so this is all their summary needs; a loop
    this simple vectorizes (the float fold above does not: it was most of a held matrix's check;
    a position step held in a variable did not either)."""
    least = greatest = values[i, 0]
    checksum = np.uint64(0)
    for j in range(values.shape[1]):
        x = values[i, j]
        if out is not None:
            out[i, j] = x
        least = min(least, x)
        greatest = max(greatest, x)
        checksum += checksum_term(bits_of(np.float64(x)), first + j)
    return least, greatest, checksum


@njit(cache=True)
def _scan_integer_row(values, i):
    """Row i of an integer matrix, read only: _integer_row."""
    return _integer_row(values, i, None, i * values.shape[1])


def _integer_summary(least: np.ndarray, greatest: np.ndarray, sums: np.ndarray):
    """(summary, extremes) as scan_costs gives them, from the rows' least, greatest and checksum shares."""
    low, high = int(least.min()), int(greatest.max())
    checksum = int(sums.sum(dtype=np.uint64))  # numpy's uint64 sum wraps, as the checksum does
    return (float(low), float(high), 0, True, checksum), (low, high)


@njit(cache=True, parallel=True)
def _scan_integers_parallel(values, least, greatest, sums):
    for i in prange(values.shape[0]):
        least[i], greatest[i], sums[i] = _scan_integer_row(values, i)


@njit(cache=True)
def _scan_integers_serial(values, least, greatest, sums):
    for i in range(values.shape[0]):
        least[i], greatest[i], sums[i] = _scan_integer_row(values, i)


def _scan_integers(values: np.ndarray):
    """scan_costs of an integer matrix with no float64 copy to write (a held matrix)."""
    rows = values.shape[0]
    least, greatest = np.empty(rows, dtype=values.dtype), np.empty(rows, dtype=values.dtype)
    sums = np.empty(rows, dtype=np.uint64)
    scan = _scan_integers_parallel if values.size >= PARALLEL_MIN_ENTRIES else _scan_integers_serial
    scan(values, least, greatest, sums)
    return _integer_summary(least, greatest, sums)


@njit(cache=True, parallel=True)
def _scan_rows_parallel(values, out, write, native, low, high, forbidden, integer, bad, sums, least, greatest):
    for i in prange(values.shape[0]):
        (low[i], high[i], forbidden[i], integer[i], bad[i], sums[i], least[i],
         greatest[i]) = _scan_row(values, i, out, write, native)


@njit(cache=True)
def _scan_rows_serial(values, out, write, native, low, high, forbidden, integer, bad, sums, least, greatest):
    for i in range(values.shape[0]):
        (low[i], high[i], forbidden[i], integer[i], bad[i], sums[i], least[i],
         greatest[i]) = _scan_row(values, i, out, write, native)


def _row_arrays(values: np.ndarray) -> list:
    rows = values.shape[0]
    return [np.empty(rows), np.empty(rows), np.empty(rows, dtype=np.int64), np.empty(rows, dtype=np.bool_),
            np.empty(rows, dtype=np.bool_), np.empty(rows, dtype=np.uint64), np.empty(rows, dtype=values.dtype),
            np.empty(rows, dtype=values.dtype)]


def scan_costs(values: np.ndarray, out: np.ndarray | None):
    """One pass over the 2-D real ``values`` (at least one column): ``out`` (a C-ordered float64
    array of the same shape) receives them as float64 when given. Returns ``(summary, extremes)``:
    summary = (min, max, +inf count, all integral, checksum), min and max over the finite entries,
    or None when some entry is NaN or -inf (the caller then names it); extremes = (least,
    greatest) entry as Python ints for an integer input, else None. Rows are spread over the cores
    from PARALLEL_MIN_ENTRIES entries."""
    native = values.dtype.kind in "iu"
    if native and out is None:
        return _scan_integers(values)
    arrays = _row_arrays(values)
    write = out is not None
    target = out if write else np.empty((0, 0))
    scan = _scan_rows_parallel if values.size >= PARALLEL_MIN_ENTRIES else _scan_rows_serial
    scan(values, target, write, native, *arrays)
    low, high, forbidden, integer, bad, sums, least, greatest = arrays
    extremes = (int(least.min()), int(greatest.max())) if native else None
    if bad.any():
        return None, extremes
    checksum = int(sums.sum(dtype=np.uint64))  # numpy's uint64 sum wraps, as the checksum does
    return (float(low.min()), float(high.max()), int(forbidden.sum()), bool(integer.all()), checksum), extremes


def warm_parallel_pass() -> None:
    """Compile (or load) the multi-core scan for the inputs it is given (float64, float32, int64 and
    int32; C order, Fortran order or any strides), and the integers' float64 conversion: small
    problems never reach them by size alone."""
    for dtype in (np.float64, np.float32, np.int64, np.int32):
        square = np.zeros((2, 2), dtype=dtype)
        native = square.dtype.kind in "iu"
        for values in (square, np.asfortranarray(square), square.T[:, ::-1]):  # C, Fortran and any strides
            out = np.empty((2, 2))
            for target, write in ((out, True), (np.empty((0, 0)), False)):
                _scan_rows_parallel(values, target, write, native, *_row_arrays(values))
        if native:  # held integers (C order only): as given, and as the Problem's read-only view
            frozen = square.view()
            frozen.setflags(write=False)
            for scanned in (square, frozen):
                _scan_integers_parallel(scanned, np.empty(2, dtype=dtype), np.empty(2, dtype=dtype),
                                        np.empty(2, dtype=np.uint64))
        if native:  # a held integer matrix (read-only, as a Problem holds it) made float64
            held = square.copy()
            held.setflags(write=False)
            convert_rows(held, np.empty((2, 2)))


@njit(cache=True, parallel=True, nogil=True)
def convert_rows(values, out):
    """out[i, j] = values[i, j] (any strides in, any real type, converted to out's), rows spread over
    the cores: a held integer matrix made float64 here, and every chunk of a staged GPU upload
    (solvers.targets.staged_upload)."""
    for i in prange(values.shape[0]):
        for j in range(values.shape[1]):
            out[i, j] = values[i, j]


TILE_ROWS, TILE_COLS = 64, 256  # measured best of 8..1024 each way (two cores): 3x the row order


@njit(cache=True, parallel=True, nogil=True)
def convert_tiles(values, out):
    """convert_rows for ``values`` whose columns are contiguous (a transposed view: a tall problem
    solved as its transpose), tile by tile, so that each tile's reads reuse the cache lines its
    first row brought in: row by row, every read of such a view lands on another line (a 9000 x
    3000 upload spent 20 ms there on the GPU machine's host, against 4 ms for the same entries in
    rows)."""
    rows, cols = values.shape
    for tile in prange((rows + TILE_ROWS - 1) // TILE_ROWS):
        first, last = tile * TILE_ROWS, min(rows, (tile + 1) * TILE_ROWS)
        for j0 in range(0, cols, TILE_COLS):
            for i in range(first, last):
                for j in range(j0, min(cols, j0 + TILE_COLS)):
                    out[i, j] = values[i, j]


@njit(cache=True, parallel=True, nogil=True)
def convert_scan_rows(values, out, first, least, greatest, sums):
    """convert_rows for held integers, each row also read for its least and greatest entry and its
    checksum share (HeldScan): the check of the integers in the pass that uploads them. Row i of
    ``values`` is the problem's row first + i."""
    cols = values.shape[1]
    for i in prange(values.shape[0]):
        least[first + i], greatest[first + i], sums[first + i] = _integer_row(values, i, out, (first + i) * cols)


class HeldScan:
    """The check of a held integer matrix (its least and greatest entry and its checksum, as
    scan_costs finds them), made chunk by chunk by the pass that converts its rows for a GPU
    upload (solvers.targets.staged_upload), so that the integers are read once."""

    def __init__(self, values: np.ndarray):
        rows = values.shape[0]
        self.least, self.greatest = np.empty(rows, dtype=values.dtype), np.empty(rows, dtype=values.dtype)
        self.sums = np.empty(rows, dtype=np.uint64)

    def convert(self, chunk: np.ndarray, out: np.ndarray, first: int) -> None:
        """out[...] = chunk (the problem's rows first..), every core, scanned on the way."""
        convert_scan_rows(chunk, out, first, self.least, self.greatest, self.sums)

    def result(self):
        """(summary, extremes) as scan_costs gives them for held integers; call after every row
        was converted."""
        return _integer_summary(self.least, self.greatest, self.sums)


def converted(costs: np.ndarray, dtype, scan: HeldScan | None = None) -> np.ndarray:
    """A C-ordered copy of ``costs`` in ``dtype``, scanned on the way when ``scan`` is given."""
    if scan is None:
        return np.ascontiguousarray(costs, dtype=dtype)
    out = np.empty(costs.shape, dtype=dtype)
    scan.convert(costs, out, 0)
    return out


def convert(values: np.ndarray, out: np.ndarray) -> None:
    """out[...] = values, converted, on every core, in the loop order that suits ``values``' strides."""
    if values.ndim == 2 and 0 < values.strides[0] < values.strides[1]:
        convert_tiles(values, out)
    else:
        convert_rows(values, out)


def as_float64(values: np.ndarray) -> np.ndarray:
    """A C-ordered float64 copy of the 2-D real ``values``, rows spread over the cores from
    PARALLEL_MIN_ENTRIES entries (a held integer matrix made float64 when host code needs it)."""
    if values.size < PARALLEL_MIN_ENTRIES or values.ndim != 2:
        return np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(values.shape, dtype=np.float64)
    convert(values, out)
    return out
