"""A bipartite graph's column lists built on the GPU from its row lists, already there.

``columns_on_device(launcher, row_ptr, col_ind, n_rows, n_cols)`` gives ``(col_ptr, row_ind)``
on the device, exactly what the host's ``graph_build.transpose`` gives (each column's rows
increasing), so a solve on a GPU never waits for the host's transpose (on an H200 and its host's
16 cores: 8.8 ms here against 36.7 for 12M edges, 21.6 against 74.3 for 32M).

It is a stable least-significant-digit radix sort of the edges, in row-major order, by column,
8 bits a pass. Each pass is count, scan, scatter, and every thread owns a fixed run of CHUNK
edges that it walks in order. The counts table holds one count for each (digit, run), digit-major,
so its exclusive scan is where each run's entries of each digit go, and runs keep their order
within a digit. No atomics: the result is the same on every run and every device.

The radix kernels are here, beside the driver that launches them; the prefix-sum kernels are
gpr_lists', beside the block scan they call (the simulator gives a kernel's own module its
per-thread ``cuda``, not another module's helpers). There is no cpu form: the cpu target transposes
on the host (solvers.graph_build), on the same data.
"""
from __future__ import annotations

import numpy as np
from numba import int32, int64

from ..targets.cuda_jit import cuda_kernel
from ..targets.kernel import EACH, ONE_BLOCK, Kernel
from .gpr_lists import add_block_offsets_kernel, scan_blocks_kernel, scan_sums_kernel

cuda = None  # numba.cuda, bound when the first kernel here is built (solvers.targets.cuda_jit)

DIGIT_BITS = 8
RADIX = 1 << DIGIT_BITS
CHUNK = 512            # edges walked by one thread; the counts table is RADIX / CHUNK of the edges
CHUNK_THREADS = 64     # blocks of the chunk walkers: few threads each, so every SM gets some
ONE_BLOCK_SCAN = 1 << 12  # block sums up to this many are scanned by one block
INT32_LIMIT = int(np.iinfo(np.int32).max)


@cuda_kernel
def expand_rows_kernel(row_ptr, n_rows, n_edges, chunk, rows_out):
    """rows_out[k] = the row of edge k, for this thread's run of edges (its first row by binary
    search in row_ptr: the last row starting at or before the run)."""
    t = cuda.grid(1)
    lo = t * chunk
    hi = min(n_edges, lo + chunk)
    if lo >= hi:
        return
    first, last = 0, n_rows - 1
    while first < last:  # the last r with row_ptr[r] <= lo
        mid = (first + last + 1) // 2
        if row_ptr[mid] <= lo:
            first = mid
        else:
            last = mid - 1
    r = first
    for k in range(lo, hi):
        while row_ptr[r + 1] <= k:
            r += 1
        rows_out[k] = r


@cuda_kernel
def digit_count_kernel(keys, n_edges, chunk, shift, chunks, counts):
    """counts[d * chunks + t]: how many of run t's keys have digit d (counts starts at zero)."""
    t = cuda.grid(1)
    lo = t * chunk
    hi = min(n_edges, lo + chunk)
    for k in range(lo, hi):
        d = (keys[k] >> shift) & (RADIX - 1)
        counts[d * chunks + t] += 1


@cuda_kernel
def digit_scatter_kernel(keys_in, vals_in, n_edges, chunk, shift, chunks, counts, keys_out, vals_out):
    """Run t's entries to their places, in order (counts: the scanned table, each slot the next
    place of its digit and run)."""
    t = cuda.grid(1)
    lo = t * chunk
    hi = min(n_edges, lo + chunk)
    for k in range(lo, hi):
        key = keys_in[k]
        slot = ((key >> shift) & (RADIX - 1)) * chunks + t
        at = counts[slot]
        counts[slot] = at + 1
        keys_out[at] = key
        vals_out[at] = vals_in[k]


@cuda_kernel
def column_starts_kernel(keys, n_edges, n_cols, col_ptr):
    """col_ptr from the sorted columns: edge k starts every column after its predecessor's up to its
    own; the last edge closes the columns after it."""
    k = cuda.grid(1)
    if k >= n_edges:
        return
    c = keys[k]
    before = -1
    if k > 0:
        before = keys[k - 1]
    for col in range(before + 1, c + 1):
        col_ptr[col] = k
    if k == n_edges - 1:
        for col in range(c + 1, n_cols + 1):
            col_ptr[col] = n_edges


EXPAND_ROWS = Kernel("transpose.expand_rows", cuda=expand_rows_kernel, threads=CHUNK_THREADS)
DIGIT_COUNT = Kernel("transpose.digit_count", cuda=digit_count_kernel, threads=CHUNK_THREADS)
DIGIT_SCATTER = Kernel("transpose.digit_scatter", cuda=digit_scatter_kernel, threads=CHUNK_THREADS)
SCAN_BLOCKS = Kernel("transpose.scan_blocks", cuda=scan_blocks_kernel)
SCAN_SUMS = Kernel("transpose.scan_sums", cuda=scan_sums_kernel, shape=ONE_BLOCK)
ADD_BLOCK_OFFSETS = Kernel("transpose.add_block_offsets", cuda=add_block_offsets_kernel)
COLUMN_STARTS = Kernel("transpose.column_starts", cuda=column_starts_kernel)
KERNELS = (EXPAND_ROWS, DIGIT_COUNT, DIGIT_SCATTER, SCAN_BLOCKS, SCAN_SUMS, ADD_BLOCK_OFFSETS, COLUMN_STARTS)

_I = int64
_K = int32[::1]
_P = int64[::1]
PTX_SIGNATURES = (
    (EXPAND_ROWS, (_P, _I, _I, _I, _K)),
    (DIGIT_COUNT, (_K, _I, _I, _I, _I, _K)),
    (DIGIT_SCATTER, (_K, _K, _I, _I, _I, _I, _K, _K, _K)),
    (SCAN_BLOCKS, (_K, _I, _K)),
    (SCAN_SUMS, (_K, _I, _K, _I)),
    (ADD_BLOCK_OFFSETS, (_K, _I, _K)),
    (COLUMN_STARTS, (_K, _I, _I, _P)),
)


def fits(n_edges: int) -> bool:
    """Whether the device transpose takes this many edges (its counts and places are int32)."""
    return 0 < n_edges < INT32_LIMIT


def _passes(n_cols: int) -> int:
    return max(1, (max(n_cols - 1, 1).bit_length() + DIGIT_BITS - 1) // DIGIT_BITS)


def peak_bytes(n_edges: int, n_cols: int) -> int:
    """Device memory columns_on_device holds at its peak beside the row lists: the expanded rows,
    one or two key buffers, one value buffer (int32 each), two passes' counts tables (the last
    one's release may be deferred) and the column starts: about 16 to 22 bytes an edge, where
    uploading the host's column lists takes 4 and 8 a column."""
    chunks = (n_edges + CHUNK - 1) // CHUNK
    return 4 * n_edges * (3 + (_passes(n_cols) > 1)) + 2 * 4 * RADIX * chunks + 8 * (n_cols + 1)


def has_room(launch, n_edges: int, n_cols: int, after: int) -> bool:
    """Whether the device has the memory for columns_on_device and then ``after`` more bytes (what
    the solver allocates next); always where the launcher cannot tell (cpu, the simulator). A
    graph near the GPU's memory uploads the host's column lists instead, as before this transpose."""
    free = launch.free_bytes()
    return free is None or peak_bytes(n_edges, n_cols) + after <= free


def _exclusive_scan(launch, table, length: int, in_one_block: bool) -> None:
    """table[:length] (int32 on the device) becomes its exclusive prefix sum, in place: by one block
    (``in_one_block``), else per block, then the block sums, then the offsets added."""
    if in_one_block:
        launch.launch(SCAN_SUMS, 1, table, int(length), launch.empty(1, np.int32), 0)
        return
    blocks = launch.dims(SCAN_BLOCKS, length)[0]
    sums = launch.empty(blocks, np.int32)
    launch.launch(SCAN_BLOCKS, length, table, int(length), sums)
    _exclusive_scan(launch, sums, blocks, blocks <= ONE_BLOCK_SCAN)
    launch.launch(ADD_BLOCK_OFFSETS, length, table, int(length), sums)


def columns_on_device(launch, row_ptr, col_ind, n_rows: int, n_cols: int) -> tuple:
    """(col_ptr int64, row_ind int32) on the device of the graph whose row lists (row_ptr int64,
    col_ind int32, each row's columns sorted and repeat-free) are there. Needs fits(edges)."""
    n_edges = int(col_ind.shape[0])
    if not fits(n_edges):
        raise ValueError(f"the device transpose takes 1 to {INT32_LIMIT - 1} edges, not {n_edges}")
    chunks = (n_edges + CHUNK - 1) // CHUNK
    rows = launch.empty(n_edges, np.int32)
    launch.launch(EXPAND_ROWS, chunks, row_ptr, int(n_rows), n_edges, CHUNK, rows)
    passes = _passes(n_cols)
    table = RADIX * chunks
    # pass p writes buffers p % 2; the expanded rows, read only by the first pass, are reused
    key_bufs = [launch.empty(n_edges, np.int32), launch.empty(n_edges, np.int32) if passes > 1 else None]
    val_bufs = [launch.empty(n_edges, np.int32), rows]
    keys, vals = col_ind, rows
    for p in range(passes):
        counts = launch.zeros(table, np.int32)
        launch.launch(DIGIT_COUNT, chunks, keys, n_edges, CHUNK, p * DIGIT_BITS, chunks, counts)
        # a GPU always takes the three-kernel scan (so every graph compiles the same kernels); the
        # simulator, one thread at a time, scans a small table in one block
        _exclusive_scan(launch, counts, table, launch.simulated and table <= ONE_BLOCK_SCAN)
        keys_out, vals_out = key_bufs[p % 2], val_bufs[p % 2]
        launch.launch(DIGIT_SCATTER, chunks, keys, vals, n_edges, CHUNK, p * DIGIT_BITS, chunks, counts,
                      keys_out, vals_out)
        keys, vals = keys_out, vals_out
    col_ptr = launch.empty(n_cols + 1, np.int64)
    launch.launch(COLUMN_STARTS, n_edges, keys, n_edges, int(n_cols), col_ptr)
    return col_ptr, vals
