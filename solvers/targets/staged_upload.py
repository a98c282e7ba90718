"""Host-to-GPU copy of a large cost matrix, converted to the device dtype on the way.

A plain ``cuda.to_device(np.ascontiguousarray(costs, dtype))`` converts on one core and copies from
pageable memory, which the driver stages through its own small buffer at a fraction of the bus
speed: at n = 20000 that was most of a solve. Here the matrix goes in row chunks: every core converts
a chunk into one of two reused page-locked (pinned) buffers, and the asynchronous copy of that chunk
runs while the next one is converted into the other buffer. A transposed view (a tall problem,
solved as its transpose) is converted tile by tile (cost_summary.convert).

Import only on the cuda path (it imports numba.cuda).
"""
from __future__ import annotations

import threading

import numpy as np
from numba import cuda, njit, prange

from ..cost_summary import HeldScan, convert, converted
from .device_pool import device_array, to_device


CHUNK_BYTES = 32 << 20   # each of the two pinned buffers
STAGED_MIN_BYTES = 8 << 20  # below this a plain copy is as quick as setting up the stages

# (source, target) dtypes of the 1-D arrays CudaLauncher.upload converts in its staged copy (warm_up
# compiles each): floats and indices as they are, a graph's indices widened or narrowed to a solver's
CONVERTED_ON_THE_WAY = frozenset((np.dtype(a).str, np.dtype(b).str) for a, b in (
    (np.int32, np.int32), (np.int64, np.int64), (np.float64, np.float64), (np.int32, np.int64), (np.int64, np.int32)))

_staging: list = []      # [(buffer, stream), (buffer, stream)], allocated on first use, then reused
_staging_in_use = threading.Lock()  # one upload at a time through them (a Dask worker's threads may share a GPU)


@njit(cache=True, parallel=True, nogil=True)
def _convert_flat(source, target):
    """target[k] = source[k], in blocks spread over the cores."""
    block = 1 << 16
    for b in prange((source.size + block - 1) // block):
        for k in range(b * block, min(source.size, (b + 1) * block)):
            target[k] = source[k]


def _stages():
    if not _staging:
        for _ in range(2):
            _staging.append((cuda.pinned_array(CHUNK_BYTES, dtype=np.uint8), cuda.stream()))
    return _staging


def warm_up() -> None:
    """Compile the conversion (float64 and the integers a Problem holds as given, each to float32
    and to float64) and allocate the pinned buffers now, so that the first real upload measures
    copies, not JIT compilation."""
    from ..problems import HELD_INTEGERS
    side = int(np.ceil(np.sqrt(STAGED_MIN_BYTES / 4)))
    for source in (np.dtype(np.float64),) + HELD_INTEGERS:
        held = np.zeros((side, side + 1), dtype=source)
        held.setflags(write=False)  # as a Problem holds its costs: read-only, a numba type of its own
        for matrix in (held, held.T):  # a wide problem as it is, a tall one transposed
            for dtype in (np.float32, np.float64):
                upload_matrix(matrix, dtype)
        if source in HELD_INTEGERS:  # a wide one checked on the way (solvers.assignment.hungarian)
            upload_matrix(held, np.float32, HeldScan(held))
    for source, dtype in sorted(CONVERTED_ON_THE_WAY):  # the large 1-D arrays CudaLauncher.upload stages,
        # and those read_as brings back
        device = upload_flat(np.zeros(STAGED_MIN_BYTES // np.dtype(dtype).itemsize, dtype=source), dtype)
        download_flat(device, source)


def release_staging() -> None:
    """Free the pinned buffers (they are kept between uploads otherwise)."""
    with _staging_in_use:
        _staging.clear()


def upload_matrix(costs: np.ndarray, dtype, scan=None) -> object:
    """A C-ordered device copy of the 2-D ``costs`` in ``dtype``; returns when the copy is complete.
    ``scan`` (a cost_summary.HeldScan): held integers, checked in the pass that converts them."""
    dtype = np.dtype(dtype)
    rows, cols = costs.shape
    if rows * cols * dtype.itemsize < STAGED_MIN_BYTES:
        return to_device(converted(costs, dtype, scan))
    if cols * dtype.itemsize > CHUNK_BYTES:  # a single row longer than a buffer
        return to_device(converted(costs, dtype, scan))
    chunk_rows = CHUNK_BYTES // (cols * dtype.itemsize)
    device = device_array((rows, cols), dtype)
    with _staging_in_use:
        _copy_rows(costs, device, chunk_rows, dtype, scan)
    return device


def _copy_rows(costs, device, chunk_rows: int, dtype, scan) -> None:
    rows, cols = costs.shape
    stages = _stages()
    for k, first in enumerate(range(0, rows, chunk_rows)):
        buffer, stream = stages[k % 2]
        stream.synchronize()  # this buffer's previous copy has left it
        last = min(rows, first + chunk_rows)
        staged = buffer[:(last - first) * cols * dtype.itemsize].view(dtype).reshape(last - first, cols)
        if scan is None:
            convert(costs[first:last], staged)
        else:
            scan.convert(costs[first:last], staged, first)
        device[first:last].copy_to_device(staged, stream=stream)
    for _, stream in stages:
        stream.synchronize()


def upload_flat(values: np.ndarray, dtype, fill=None, sent=None) -> object:
    """A device copy of the 1-D ``values`` in ``dtype`` (a packed batch's costs), staged through the
    same two pinned buffers; returns when the copy is complete.

    ``fill(first, last, staged)``, when given, replaces the plain conversion of each chunk: it must
    write values[first:last] into ``staged`` in ``dtype`` (a caller checks the values in the pass
    that copies them). Below STAGED_MIN_BYTES it fills one ordinary buffer, which goes up whole.
    ``sent(first, last, device, stream)``, when given, is called once each chunk's copy is queued on
    ``stream`` (a caller starts work on the device that waits for it; not below STAGED_MIN_BYTES)."""
    dtype = np.dtype(dtype)
    values = np.asarray(values).reshape(-1)
    if values.size * dtype.itemsize < STAGED_MIN_BYTES:
        if fill is None:
            return to_device(np.ascontiguousarray(values, dtype=dtype))
        staged = np.empty(values.size, dtype=dtype)
        fill(0, values.size, staged)
        return to_device(staged)
    chunk = CHUNK_BYTES // dtype.itemsize
    device = device_array(values.size, dtype)
    with _staging_in_use:
        _copy_flat(values, device, chunk, dtype, fill, sent)
    return device


def download_flat(device, dtype) -> np.ndarray:
    """A host copy of the 1-D ``device`` array in ``dtype`` (a pair CONVERTED_ON_THE_WAY), back
    through the same two pinned buffers: each chunk is converted on every core out of one buffer
    while the next chunk's copy fills the other. A pageable copy and a one-thread conversion took
    13 ms for a matching's two 3M int32 arrays on the GPU machine's host."""
    dtype = np.dtype(dtype)
    source = np.dtype(device.dtype)
    out = np.empty(device.size, dtype=dtype)
    chunk = CHUNK_BYTES // source.itemsize
    firsts = range(0, device.size, chunk)
    with _staging_in_use:
        stages = _stages()

        def start(k):  # the copy of chunk k into buffer k % 2, on that buffer's stream
            buffer, stream = stages[k % 2]
            first = firsts[k]
            last = min(device.size, first + chunk)
            staged = buffer[:(last - first) * source.itemsize].view(source)
            device[first:last].copy_to_host(staged, stream=stream)
            return staged, stream

        pending = start(0) if len(firsts) else None
        for k, first in enumerate(firsts):
            staged, stream = pending
            if k + 1 < len(firsts):
                pending = start(k + 1)  # the other buffer: its last chunk was converted out already
            stream.synchronize()
            _convert_flat(staged, out[first:first + staged.size])
    return out


def _copy_flat(values, device, chunk: int, dtype, fill, sent) -> None:
    stages = _stages()
    for k, first in enumerate(range(0, values.size, chunk)):
        buffer, stream = stages[k % 2]
        stream.synchronize()  # this buffer's previous copy has left it
        last = min(values.size, first + chunk)
        staged = buffer[:(last - first) * dtype.itemsize].view(dtype)
        if fill is None:
            _convert_flat(values[first:last], staged)
        else:
            fill(first, last, staged)
        device[first:last].copy_to_device(staged, stream=stream)
        if sent is not None:
            sent(first, last, device, stream)
    for _, stream in stages:
        stream.synchronize()
