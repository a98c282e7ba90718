"""The strict check a Matrix Market body passes before it is parsed at disk speed, and the parse
itself for pattern and integer files.

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

Pattern and integer bodies that pass are then parsed here too (``read_entries``), in a second pass
over the same pieces: their numbers are exact integers, so there is nothing scipy's reader would do
better, and a fresh process skips scipy.io and its int64 coordinates (a 32M-edge R-MAT file: 0.6 s
of mmread on two cores, 1.1 s in a fresh process). Real values stay with mmread: a correctly
rounded decimal parse is its job.
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


@njit(cache=True)
def _piece_bounds(buf, pieces):
    """pieces + 1 offsets into buf, each piece starting just after a newline."""
    n = buf.size
    bounds = np.empty(pieces + 1, np.int64)
    bounds[0] = 0
    bounds[pieces] = n
    for p in range(1, pieces):
        at = max(p * (n // pieces), bounds[p - 1], 1)
        while at < n and buf[at - 1] != _LF:
            at += 1
        bounds[p] = at
    return bounds


@njit(cache=True, parallel=True, nogil=True)
def _count_pieces(buf, field, n_rows, n_cols, bounds):
    """Entry lines of each piece, -1 for a piece with a line outside the grammar."""
    pieces = bounds.size - 1
    counts = np.empty(pieces, np.int64)
    for p in prange(pieces):
        counts[p] = _count_lines(buf, bounds[p], bounds[p + 1], field, n_rows, n_cols)
    return counts


@njit(cache=True)
def _parse_lines(buf, lo, hi, field, rows, cols, values, k):
    """The entries of buf[lo:hi], lines already in the grammar (``_count_lines`` passed them), into
    rows[k:], cols[k:] (0-based) and, for an integer field, values[k:]."""
    i = lo
    while i < hi:
        i = _blanks(buf, i, hi)
        r = 0
        while _ZERO <= buf[i] <= _NINE:
            r = r * 10 + (buf[i] - _ZERO)
            i += 1
        i = _blanks(buf, i, hi)
        c = 0
        while _ZERO <= buf[i] <= _NINE:
            c = c * 10 + (buf[i] - _ZERO)
            i += 1
        if field == INTEGER:
            i = _blanks(buf, i, hi)
            negative = buf[i] == _MINUS
            if negative:
                i += 1
            v = 0
            while _ZERO <= buf[i] <= _NINE:
                v = v * 10 + (buf[i] - _ZERO)
                i += 1
            values[k] = -v if negative else v
        while buf[i] != _LF:  # trailing blanks, a carriage return
            i += 1
        i += 1
        rows[k] = r - 1
        cols[k] = c - 1
        k += 1


@njit(cache=True, parallel=True, nogil=True)
def _parse_pieces(buf, field, bounds, starts, rows, cols, values):
    for p in prange(bounds.size - 1):
        _parse_lines(buf, bounds[p], bounds[p + 1], field, rows, cols, values, starts[p])


def _pieces(body: np.ndarray) -> np.ndarray:
    pieces = int(max(1, min(4 * get_num_threads(), body.size // _PIECE_BYTES)))
    return _piece_bounds(body, np.int64(pieces))


def _checked_pieces(body: np.ndarray, field: int, n_rows: int, n_cols: int):
    """(piece bounds, entry lines per piece) when the body ends in a newline and every line is in
    the strict grammar, else None."""
    if body.size == 0 or body[-1] != _LF:
        return None
    bounds = _pieces(body)
    counts = _count_pieces(body, np.int64(field), np.int64(n_rows), np.int64(n_cols), bounds)
    return None if (counts < 0).any() else (bounds, counts)


def count_entries(body: np.ndarray, field: int, n_rows: int, n_cols: int) -> int:
    """The entry lines of ``body`` (uint8, the bytes after the size line) if every one is in the
    strict grammar and the body ends in a newline; -1 otherwise."""
    checked = _checked_pieces(body, field, n_rows, n_cols)
    return -1 if checked is None else int(checked[1].sum())


def read_entries(body: np.ndarray, field: int, n_rows: int, n_cols: int, n_entries: int):
    """(0-based rows, cols, values or None) of a pattern or integer ``body`` holding exactly
    ``n_entries`` lines in the strict grammar, parsed on every core: int32 indices where the sizes
    allow (int64 beyond), int64 values (at most 18 digits: exact). None when the body is outside
    the grammar or holds another number of entries (the caller's checking reader then names the
    line). Two passes over the bytes: the check counts each piece's lines, so the second knows
    where each piece's entries go, and nothing is allocated before the count is confirmed."""
    if field == REAL:
        raise ValueError("real values are parsed by scipy's reader (correctly rounded decimals)")
    checked = _checked_pieces(body, field, n_rows, n_cols)
    if checked is None or int(checked[1].sum()) != n_entries:
        return None
    bounds, counts = checked
    starts = np.zeros(counts.size, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    index = np.int32 if max(n_rows, n_cols) <= np.iinfo(np.int32).max else np.int64
    rows, cols = np.empty(n_entries, index), np.empty(n_entries, index)
    values = np.empty(n_entries if field == INTEGER else 0, np.int64)
    _parse_pieces(body, np.int64(field), bounds, starts, rows, cols, values)
    return rows, cols, values if field == INTEGER else None


def warm() -> None:
    """Compile (or load) the check and the parse as a file's body will call them: a read-only byte
    array, int32 indices (int64 ones need a file of 2^31 entries: compiled when one comes)."""
    body = np.frombuffer(b"1 1 1\n", np.uint8)
    count_entries(body, REAL, 1, 1)
    read_entries(body, INTEGER, 1, 1, 1)
