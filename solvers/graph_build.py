"""A large graph's two adjacency lists (CSR by rows and by columns) built on all cores.

scipy's conversions (coo -> csr with its duplicate merge, csr -> csc) run on one thread: on a
32M-edge R-MAT they took 1.5 s of a 0.24 s GPU solve. Here both are counting sorts split over
chunks of the input, one chunk per thread:
  * each chunk counts its entries per line (a chunks x lines table), an exclusive scan over the
    chunks of each line turns the counts into write positions, and each chunk writes its entries
    in input order: a line's entries come out in input order, chunk after chunk;
  * from coordinates, each line is then sorted and its repeats dropped, line by line;
  * the transpose of a sorted, repeat-free CSR is a scatter only: the chunks are row ranges in
    order, so each column's rows come out increasing.
The results equal scipy's conversions array for array (a test checks it).

Kept apart from solvers.problems, which must not import numba (see solvers.cost_summary).
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange
from numba.extending import register_jitable

from .dual_steps import mixed_term


@register_jitable
def position_in_row(row_ptr, col_ind, i, j) -> int:
    """Where column j stands in row i's sorted list (col_ind[row_ptr[i]:row_ptr[i + 1]]), or -1."""
    lo, hi = row_ptr[i], row_ptr[i + 1]
    while lo < hi:  # binary search
        mid = (lo + hi) // 2
        if col_ind[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < row_ptr[i + 1] and col_ind[lo] == j else -1


@njit(parallel=True, cache=True, nogil=True)
def _bounds_and_checksum(values, first_position):
    least = values[0]
    greatest = values[0]
    total = np.uint64(0)
    for k in prange(values.size):
        least = min(least, values[k])
        greatest = max(greatest, values[k])
        total += mixed_term(np.int64(values[k]), first_position + k)
    return least, greatest, total


def bounds_and_checksum(values: np.ndarray, first_position: int) -> tuple[int, int, int]:
    """(least, greatest) of a non-empty 1-D index array in one pass on all cores (numpy's min and
    max are two single-threaded passes: 25 ms on 32M edges), and in the same pass the wrapping sum
    of mixed_term(values[k], first_position + k): a graph's share of the checksum that
    solvers.konig_device compares with a GPU's copy, made while the validating pass reads the
    indices anyway (summed again in the certificate, it was a third of a 3M-row matching's
    certificate on the GPU machine)."""
    least, greatest, total = _bounds_and_checksum(values, first_position)
    return int(least), int(greatest), int(total)


@njit(parallel=True, cache=True, nogil=True)
def _drops_and_checksum(ptr, first_position):
    drops = 0
    total = np.uint64(0)
    for k in prange(ptr.size):
        if k + 1 < ptr.size:
            drops += ptr[k + 1] < ptr[k]
        total += mixed_term(np.int64(ptr[k]), first_position + k)
    return drops, total


def offsets_checked(ptr: np.ndarray, first_position: int) -> tuple[bool, int | None]:
    """(whether a 1-D offsets array never decreases, its checksum share as bounds_and_checksum's),
    in one pass on all cores (numpy's compare of two shifted views is one thread and a temporary:
    0.8 ms on 3M offsets on the GPU machine's host). The checksum is None for an array the
    compiled pass does not read (another byte order or type): it is summed later if needed."""
    if ptr.ndim != 1 or not ptr.dtype.isnative or ptr.dtype.kind not in "iu":
        return bool(np.all(ptr[1:] >= ptr[:-1])), None
    drops, total = _drops_and_checksum(ptr, first_position)
    return drops == 0, int(total)


def _chunks(edges: int, lines: int) -> int:
    """Threads, fewer when the chunk table (chunks x lines) would outgrow four times the edges."""
    return max(1, min(get_num_threads(), 4 * edges // max(lines, 1), 64))


def _position_table(chunks: int, lines: int, entries: int) -> np.ndarray:
    """The chunks x lines table of counts, then write positions: int32 while every position fits
    (half the memory that the scattered increments and the scan walk through), else int64."""
    return np.zeros((chunks, lines), dtype=np.int32 if entries < 2 ** 31 else np.int64)


@njit(parallel=True, cache=True, nogil=True)
def _count_by_chunk(major, n_lines, chunks, counts):
    """counts[t, line]: entries of chunk t (the t-th equal slice of ``major``) on each line."""
    n = major.size
    for t in prange(chunks):
        for k in range(n * t // chunks, n * (t + 1) // chunks):
            counts[t, major[k]] += 1


@njit(parallel=True, cache=True, nogil=True)
def _positions(counts, ptr):
    """Counts -> each chunk's first write position on each line; ptr from the line totals."""
    chunks, n_lines = counts.shape
    totals = np.zeros(n_lines, dtype=ptr.dtype)
    for line in prange(n_lines):
        total = 0
        for t in range(chunks):
            total += counts[t, line]
        totals[line] = total
    ptr[0] = 0
    ptr[1:] = np.cumsum(totals)
    for line in prange(n_lines):
        at = ptr[line]
        for t in range(chunks):
            c = counts[t, line]
            counts[t, line] = at
            at += c


@njit(parallel=True, cache=True, nogil=True)
def _scatter_pairs(major, minor, chunks, positions, out):
    n = major.size
    for t in prange(chunks):
        for k in range(n * t // chunks, n * (t + 1) // chunks):
            line = major[k]
            out[positions[t, line]] = minor[k]
            positions[t, line] += 1


@njit(parallel=True, cache=True, nogil=True)
def _sort_lines(ptr, ind, kept):
    """Sort each line in place; kept[line] = its distinct entries."""
    for line in prange(ptr.size - 1):
        segment = ind[ptr[line]:ptr[line + 1]]
        segment.sort()
        distinct = 0
        for k in range(segment.size):
            if k == 0 or segment[k] != segment[k - 1]:
                distinct += 1
        kept[line] = distinct


@njit(parallel=True, cache=True, nogil=True)
def _drop_repeats(ptr, ind, new_ptr, out):
    for line in prange(ptr.size - 1):
        at = new_ptr[line]
        for k in range(ptr[line], ptr[line + 1]):
            if k == ptr[line] or ind[k] != ind[k - 1]:
                out[at] = ind[k]
                at += 1


@njit(parallel=True, cache=True, nogil=True)
def _count_transpose(ptr, ind, bounds, counts):
    """Like _count_by_chunk for a CSR's entries, chunk t being rows bounds[t] .. bounds[t + 1]."""
    for t in prange(bounds.size - 1):
        for k in range(ptr[bounds[t]], ptr[bounds[t + 1]]):
            counts[t, ind[k]] += 1


@njit(parallel=True, cache=True, nogil=True)
def _scatter_transpose(ptr, ind, bounds, positions, out):
    for t in prange(bounds.size - 1):
        for row in range(bounds[t], bounds[t + 1]):
            for k in range(ptr[row], ptr[row + 1]):
                col = ind[k]
                out[positions[t, col]] = row
                positions[t, col] += 1


def compress(major: np.ndarray, minor: np.ndarray, n_lines: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, ind) of the pairs (major[k], minor[k]) by major line: each line sorted, repeats merged.
    Indices must be valid (the caller has checked them)."""
    # one index type for both (the warmed specialisations), no copy when they have it already
    major, minor = major.astype(dtype, copy=False), minor.astype(dtype, copy=False)
    chunks = _chunks(major.size, n_lines)
    positions = _position_table(chunks, n_lines, major.size)
    _count_by_chunk(major, n_lines, chunks, positions)
    ptr = np.empty(n_lines + 1, dtype=np.int64)
    _positions(positions, ptr)
    ind = np.empty(major.size, dtype=dtype)
    _scatter_pairs(major, minor, chunks, positions, ind)
    del positions
    kept = np.empty(n_lines, dtype=np.int64)
    _sort_lines(ptr, ind, kept)
    if int(kept.sum()) == ind.size:
        return ptr.astype(dtype), ind
    new_ptr = np.empty(n_lines + 1, dtype=np.int64)
    new_ptr[0] = 0
    np.cumsum(kept, out=new_ptr[1:])
    out = np.empty(int(new_ptr[-1]), dtype=dtype)
    _drop_repeats(ptr, ind, new_ptr, out)
    return new_ptr.astype(dtype), out


BUCKET_BITS = 16  # a bucket of 2^16 columns: its counting table (512 KB) stays in a core's cache;
# at most 16: an entry's column travels as its low BUCKET_BITS in a uint16 (its bucket holds the rest)


@njit(parallel=True, cache=True, nogil=True)
def _count_buckets(ptr, ind, bounds, shift, counts):
    """counts[t, b]: entries of chunk t (rows bounds[t] .. bounds[t + 1]) in column bucket b."""
    for t in prange(bounds.size - 1):
        for k in range(ptr[bounds[t]], ptr[bounds[t + 1]]):
            counts[t, ind[k] >> shift] += 1


@njit(parallel=True, cache=True, nogil=True)
def _scatter_buckets(ptr, ind, bounds, shift, positions, lows_out, rows_out):
    """Each entry (row, col) to its bucket's next place: a bucket's entries in row order, each
    column as its low ``shift`` bits."""
    low_mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for row in range(bounds[t], bounds[t + 1]):
            for k in range(ptr[row], ptr[row + 1]):
                col = ind[k]
                at = positions[t, col >> shift]
                lows_out[at] = col & low_mask
                rows_out[at] = row
                positions[t, col >> shift] = at + 1


@njit(parallel=True, cache=True, nogil=True)
def _sort_buckets(starts, shift, n_cols, lows_in, rows_in, col_ptr, row_ind):
    """Within each bucket a stable counting sort by column (``lows_in``: each entry's column less
    the bucket's first): col_ptr of its columns and their rows, increasing (the bucket holds them
    in row order)."""
    width = 1 << shift
    for b in prange(starts.size - 1):
        first_col = b * width
        cols_here = min(width, n_cols - first_col)
        place = np.zeros(cols_here + 1, dtype=np.int64)
        for k in range(starts[b], starts[b + 1]):
            place[np.int64(lows_in[k]) + 1] += 1
        at = starts[b]
        for c in range(cols_here):
            col_ptr[first_col + c] = at
            at += place[c + 1]
            place[c + 1] = col_ptr[first_col + c]
        for k in range(starts[b], starts[b + 1]):
            c = np.int64(lows_in[k]) + 1
            row_ind[place[c]] = rows_in[k]
            place[c] += 1


def _transpose_by_buckets(ptr, ind, n_cols, bounds):
    """transpose in two steps when a chunks x columns table would outgrow the edges (many threads,
    many columns: 16 x 3M entries on a 12M-edge graph took 66 ms): the entries go to buckets of
    2^BUCKET_BITS columns (a chunks x buckets table), then each bucket is sorted in cache."""
    chunks = bounds.size - 1
    buckets = max(1, (n_cols + (1 << BUCKET_BITS) - 1) >> BUCKET_BITS)
    counts = np.zeros((chunks, buckets), dtype=np.int64)
    _count_buckets(ptr, ind, bounds, BUCKET_BITS, counts)
    starts = np.zeros(buckets + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=starts[1:])
    positions = starts[:-1][None, :] + np.cumsum(counts, axis=0) - counts  # chunk after chunk in a bucket
    # no more memory than needed (132 MB instead of 180 for 12M edges): the columns' low bits in
    # 2 bytes, the pointers made in the indices' own type (ind.size fits it)
    lows_tmp, rows_tmp = np.empty(ind.size, dtype=np.uint16), np.empty(ind.size, dtype=ind.dtype)
    _scatter_buckets(ptr, ind, bounds, BUCKET_BITS, positions, lows_tmp, rows_tmp)
    col_ptr = np.empty(n_cols + 1, dtype=ind.dtype)
    col_ptr[n_cols] = ind.size
    row_ind = np.empty(ind.size, dtype=ind.dtype)
    _sort_buckets(starts, BUCKET_BITS, n_cols, lows_tmp, rows_tmp, col_ptr, row_ind)
    return col_ptr, row_ind


def transpose(ptr: np.ndarray, ind: np.ndarray, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, ind) by columns of a CSR whose lines are sorted and repeat-free: each column's rows
    increasing. Chunks are row ranges holding about equal numbers of entries."""
    n_rows = ptr.size - 1
    chunks = _chunks(ind.size, n_cols)
    if get_num_threads() * n_cols > ind.size:  # the table would outgrow the edges: by buckets
        chunks = get_num_threads()
    # the targets in ptr's own type: an int32 ptr searched for int64 targets is first copied whole
    # to int64 (6 ms for 3M rows on the GPU machine's host)
    targets = (np.arange(chunks + 1, dtype=np.int64) * ind.size // chunks).astype(ptr.dtype)
    bounds = np.searchsorted(ptr, targets, side="left")
    bounds = np.minimum(bounds, n_rows).astype(np.int64)
    bounds[0], bounds[-1] = 0, n_rows
    if get_num_threads() * n_cols > ind.size:
        return _transpose_by_buckets(ptr, ind, n_cols, bounds)
    positions = _position_table(chunks, n_cols, ind.size)
    _count_transpose(ptr, ind, bounds, positions)
    col_ptr = np.empty(n_cols + 1, dtype=np.int64)
    _positions(positions, col_ptr)
    row_ind = np.empty(ind.size, dtype=ind.dtype)
    _scatter_transpose(ptr, ind, bounds, positions, row_ind)
    return col_ptr.astype(ind.dtype), row_ind


def warm() -> None:
    """Compile (or load) every loop for int32 and int64 indices (small graphs never reach them)."""
    for dtype in (np.int32, np.int64):
        for index in (np.int32, np.int64):  # the caller's coordinates come in either
            major, minor = np.array([1, 0, 1], dtype=index), np.array([2, 1, 2], dtype=index)
            ptr, ind = compress(major, minor, 2, dtype)
            transpose(ptr, ind, 3)
            _transpose_by_buckets(ptr, ind, 3, np.array([0, 1, 2], dtype=np.int64))
            bounds_and_checksum(ind, 0)
            offsets_checked(ptr, ind.size)
