"""The strict check a Matrix Market body passes before scipy's threaded reader may parse it.

scipy.io.mmread (fast_matrix_market, scipy 1.17) reads at disk speed on every core, but it is
lenient and fragile: "1 1 1.5abc" and extra fields pass, "1.5" and "5e3" become 5 in an integer
file, and a last line with trailing blanks or a carriage return and no final newline crashes the
process. So the body is first checked here, in one compiled pass over the cores, against a grammar
narrower than both readers accept:

    every line:  [blanks] INDEX blanks INDEX [blanks VALUE] [blanks] [CR] LF   (blanks: spaces, tabs)
    INDEX:       1 to 18 digits, within 1..rows or 1..cols
    VALUE:       integer field: [-] 1 to 18 digits; real field: [-] digits [. digits] [e|E [+|-] digits]
                 (at least one digit before the exponent)

and the file must end in a newline, with exactly the entries its size line declares. Anything else
(a comment or blank line among the entries, a sign scipy refuses, inf or nan, a value too long, one
byte of junk) answers -1 and the caller reads the file with the checking parser, which names the
line or accepts what is merely unusual. Within this grammar both readers give the same numbers: an
integer of at most 18 digits is exact in int64, and both parse decimal text to the nearest double.
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

PATTERN, INTEGER, REAL = 0, 1, 2
_LF, _CR, _SPACE, _TAB = 10, 13, 32, 9
_ZERO, _NINE, _PLUS, _MINUS, _DOT, _LOWER_E, _UPPER_E = 48, 57, 43, 45, 46, 101, 69
_MAX_DIGITS = 18  # 10^18 - 1 < 2^63: no overflow check needed while accumulating
_PIECE_BYTES = 1 << 20  # pieces per thread are at least this long (fewer pieces for small bodies)


@njit(cache=True)
def _blanks(buf, i, end):
    while i < end and (buf[i] == _SPACE or buf[i] == _TAB):
        i += 1
    return i


@njit(cache=True)
def _digits(buf, i, end):
    while i < end and _ZERO <= buf[i] <= _NINE:
        i += 1
    return i


@njit(cache=True)
def _index(buf, i, end, bound):
    """Position after an index token at ``i`` in 1..bound, or -1."""
    value = 0
    start = i
    while i < end and _ZERO <= buf[i] <= _NINE and i - start < _MAX_DIGITS:
        value = value * 10 + (buf[i] - _ZERO)
        i += 1
    if i == start or (i < end and _ZERO <= buf[i] <= _NINE) or value < 1 or value > bound:
        return -1
    return i


@njit(cache=True)
def _integer(buf, i, end):
    if i < end and buf[i] == _MINUS:
        i += 1
    after = _digits(buf, i, end)
    return after if 0 < after - i <= _MAX_DIGITS else -1


@njit(cache=True)
def _real(buf, i, end):
    if i < end and buf[i] == _MINUS:
        i += 1
    after = _digits(buf, i, end)
    digits = after - i
    i = after
    if i < end and buf[i] == _DOT:
        after = _digits(buf, i + 1, end)
        digits += after - i - 1
        i = after
    if digits == 0:
        return -1
    if i < end and (buf[i] == _LOWER_E or buf[i] == _UPPER_E):
        i += 1
        if i < end and (buf[i] == _PLUS or buf[i] == _MINUS):
            i += 1
        after = _digits(buf, i, end)
        if after == i:
            return -1
        i = after
    return i


@njit(cache=True)
def _count_lines(buf, lo, hi, field, n_rows, n_cols):
    """Entry lines in buf[lo:hi] (``lo`` at a line start, ``hi`` just after a newline), or -1 at the
    first line outside the grammar."""
    count = 0
    i = lo
    while i < hi:
        i = _index(buf, _blanks(buf, i, hi), hi, n_rows)
        if i < 0:
            return -1
        j = _blanks(buf, i, hi)
        if j == i:
            return -1
        i = _index(buf, j, hi, n_cols)
        if i < 0:
            return -1
        if field != PATTERN:
            j = _blanks(buf, i, hi)
            if j == i:
                return -1
            i = _integer(buf, j, hi) if field == INTEGER else _real(buf, j, hi)
            if i < 0:
                return -1
        i = _blanks(buf, i, hi)
        if i < hi and buf[i] == _CR:
            i += 1
        if i >= hi or buf[i] != _LF:
            return -1
        i += 1
        count += 1
    return count


@njit(cache=True, parallel=True)
def _count_entries(buf, field, n_rows, n_cols, pieces):
    n = buf.size
    bounds = np.empty(pieces + 1, np.int64)
    bounds[0] = 0
    bounds[pieces] = n
    for p in range(1, pieces):  # every piece starts just after a newline
        at = max(p * (n // pieces), bounds[p - 1], 1)
        while at < n and buf[at - 1] != _LF:
            at += 1
        bounds[p] = at
    counts = np.empty(pieces, np.int64)
    for p in prange(pieces):
        counts[p] = _count_lines(buf, bounds[p], bounds[p + 1], field, n_rows, n_cols)
    total = 0
    for p in range(pieces):
        if counts[p] < 0:
            return -1
        total += counts[p]
    return total


def count_entries(body: np.ndarray, field: int, n_rows: int, n_cols: int) -> int:
    """The entry lines of ``body`` (uint8, the bytes after the size line) if every one is in the
    strict grammar and the body ends in a newline; -1 otherwise."""
    if body.size == 0 or body[-1] != _LF:
        return -1
    pieces = int(max(1, min(4 * get_num_threads(), body.size // _PIECE_BYTES)))
    return int(_count_entries(body, np.int64(field), np.int64(n_rows), np.int64(n_cols), np.int64(pieces)))


def warm() -> None:
    """Compile (or load) the check as a file's body will call it: a read-only byte array."""
    count_entries(np.frombuffer(b"1 1 1\n", np.uint8), REAL, 1, 1)
