"""Device memory for a solve's arrays, kept for the next solve instead of freed.

A solve on a GPU allocates a score of arrays and frees them when it ends (G-PR on a 3M-vertex
graph: 42, the Hungarian: about 25). Each cuMemAlloc and cuMemFree is a driver call, and a free
waits for the device: on the issue-13 rows that was several milliseconds per solve, as much as the
rest of the host's work. Here an array's memory goes back to a pool when the array dies, and the
next array of the same size class takes it, as PyTorch's and CuPy's caching allocators do.

Reuse is safe in stream order: every later use of the memory (a memset, a copy, a launch) is queued
after the work of the array that held it, on the same stream or on one that waits for it (numba's
streams wait for the default stream). Code that launches on streams of its own keeps its arrays
alive until the default stream has waited for that work (the ragged batch: its readbacks). A pool
belongs to one thread (a thread with its own default stream never hands memory to another's work
still queued) and to one context.

Idle memory is bounded (``IDLE_SHARE`` of the device's, for all the threads' pools together); an
allocation that finds the device full frees the idle memory and tries once more. ``release()``
frees it all (the idle pools of every thread). Import only on the cuda path (it imports numba.cuda).
"""
from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict

import numpy as np

IDLE_SHARE = 8        # the pools of a device keep at most 1/IDLE_SHARE of its memory idle
SMALL = 1 << 12       # up to this many bytes, sizes go up to a multiple of GRANULE
GRANULE = 512
STEPS = 16            # above SMALL, a size goes up to a sixteenth of its power of two (<= 12.5% more)


def size_class(nbytes: int) -> int:
    """The bytes a request of ``nbytes`` is served with: few classes, so that memory is reused
    across solves of similar size, at most 12.5% more than asked above 4 KiB."""
    nbytes = max(int(nbytes), 1)
    if nbytes <= SMALL:
        return -(-nbytes // GRANULE) * GRANULE
    step = (1 << (nbytes - 1).bit_length()) // STEPS
    return -(-nbytes // step) * step


class IdleLimit:
    """The idle memory that the pools of one device keep together (one pool per thread: a Dask
    worker's threads must not each keep their own share), and the lock they share."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.total = 0
        # re-entrant: an array collected while a pool holds the lock (a garbage collection started
        # by an allocation inside it) gives its memory back from the same thread
        self.lock = threading.RLock()
        self.pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()

    def forget(self, idle: list) -> None:
        """A pool was collected (its thread ended): its idle memory, freed with it, counts no more."""
        with self.lock:
            self.total -= idle[0]


class Pool:
    """Idle chunks by size class, oldest first. ``allocate(nbytes)`` makes a chunk (an object with a
    ``size``); dropping the pool's reference to a chunk frees it (numba's own deferred free).
    ``idle_limit``: bytes, or an IdleLimit shared with other pools. ``out_of_memory(exc)`` tells
    the device's out-of-memory error from others. Thread-safe: chunks come back from whichever
    thread collects their arrays."""

    def __init__(self, allocate, idle_limit, out_of_memory=lambda exc: False, flush=lambda: None):
        self._allocate = allocate
        self._out_of_memory = out_of_memory
        self._flush = flush  # frees what the allocator itself has pending (numba's deferred frees)
        self.shared = idle_limit if isinstance(idle_limit, IdleLimit) else IdleLimit(idle_limit)
        self._idle: OrderedDict = OrderedDict()  # (size, serial) -> chunk, least recently returned first
        self._serial = itertools.count()
        self._lock = self.shared.lock
        self._idle_bytes = [0]  # a cell the finalizer below reads when the pool is collected
        self.allocated = 0  # chunks made
        self.reused = 0     # requests served from idle chunks
        self.shared.pools.add(self)
        weakref.finalize(self, self.shared.forget, self._idle_bytes)

    @property
    def idle_bytes(self) -> int:
        return self._idle_bytes[0]

    def take(self, nbytes: int):
        size = size_class(nbytes)
        with self._lock:
            for key in self._idle:  # few idle chunks (one solve's arrays): a scan is cheap
                if key[0] == size:
                    chunk = self._idle.pop(key)
                    self._idle_bytes[0] -= size
                    self.shared.total -= size
                    self.reused += 1
                    return chunk
        try:
            chunk = self._allocate(size)
        except Exception as exc:
            if not self._out_of_memory(exc):
                raise
            for pool in list(self.shared.pools):  # the device is full: what every thread keeps idle goes
                pool.release()
            self.flush()  # and numba's pending frees with it; then once more
            chunk = self._allocate(size)
        self.allocated += 1
        return chunk

    def give_back(self, chunk) -> None:
        shared = self.shared
        with self._lock:
            self._idle[(chunk.size, next(self._serial))] = chunk
            self._idle_bytes[0] += chunk.size
            shared.total += chunk.size
            while shared.total > shared.limit and self._idle:
                (size, _), _ = self._idle.popitem(last=False)  # the oldest goes: freed by numba
                self._idle_bytes[0] -= size
                shared.total -= size

    def release(self) -> None:
        with self._lock:
            self._idle.clear()
            self.shared.total -= self._idle_bytes[0]
            self._idle_bytes[0] = 0

    def flush(self) -> None:
        """Have the allocator free what it holds pending now (numba defers its frees)."""
        self._flush()


_pools = threading.local()  # per thread: (context, Pool)
_limits: dict = {}  # device id -> the IdleLimit of its pools
_limits_lock = threading.Lock()
_all_pools: "weakref.WeakSet[Pool]" = weakref.WeakSet()
_lent = {}  # serial -> the numba pointer lent out (kept alive until every view of it is gone)
_lent_serial = itertools.count()


def _numba_pool(context=None) -> Pool:
    from numba import cuda
    from ..errors import is_device_out_of_memory
    context = cuda.current_context() if context is None else context
    held = getattr(_pools, "held", None)
    if held is None or held[0] is not context:
        with _limits_lock:
            limit = _limits.get(context.device.id)
            if limit is None:
                limit = _limits[context.device.id] = IdleLimit(context.get_memory_info().total // IDLE_SHARE)
        pool = Pool(context.memalloc, limit, is_device_out_of_memory, _pending_frees(context))
        held = _pools.held = (context, pool)
        _all_pools.add(pool)
    return held[1]


def _pending_frees(context):
    """What frees numba's deferred memory frees of ``context`` now. numba-cuda queues them with its
    memory manager (0.30: ``context.deallocations`` holds only streams' and events'; a flush of
    that alone freed nothing, seen on an H200), older versions on the context: both are cleared."""
    queues = [context.deallocations]
    manager = getattr(getattr(context, "memory_manager", None), "deallocations", None)
    if manager is not None and manager is not context.deallocations:
        queues.append(manager)

    def flush() -> None:
        for queue in queues:
            queue.clear()
    return flush


def _lend(pool: Pool, chunk, context):
    """A numba device pointer over ``chunk`` that gives it back to ``pool`` when the last array or
    view over it dies (numba's own pattern for its allocations: a reference-counted pointer held
    in a table until its count reaches zero)."""
    from numba.cuda.cudadrv.driver import AutoFreePointer
    serial = next(_lent_serial)

    def give_back():
        _lent.pop(serial, None)
        pool.give_back(chunk)

    pointer = AutoFreePointer(weakref.proxy(context), chunk.device_pointer, chunk.size, finalizer=give_back)
    _lent[serial] = pointer
    return pointer.own()


def device_array(shape, dtype):
    """An uninitialised C-ordered device array, as ``cuda.device_array(shape, dtype)``, its memory
    from this thread's pool."""
    from numba import cuda
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0 or _plain():  # numba's null pointer for an empty one
        return cuda.device_array(shape, dtype=dtype)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    strides = []
    step = dtype.itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    context = cuda.current_context()
    pool = _numba_pool(context)
    memory = _lend(pool, pool.take(nbytes), context)
    return DeviceNDArray(shape, tuple(reversed(strides)), dtype, gpu_data=memory)


def _plain() -> bool:
    """Whether arrays take numba's own memory: under the simulator (its arrays are host memory),
    and with per-thread default streams (the staged copies' streams would not wait for them)."""
    from numba import config
    return bool(config.ENABLE_CUDASIM or config.CUDA_PER_THREAD_DEFAULT_STREAM)


def to_device(host: np.ndarray):
    """A device copy of the host array (C-ordered), its memory from the pool."""
    host = np.ascontiguousarray(host)
    if _plain():
        from numba import cuda
        return cuda.to_device(host)
    array = device_array(host.shape, host.dtype)
    if host.size:
        array.copy_to_device(host)
    return array


def idle_bytes() -> int:
    """Idle memory of the pools of this thread's device (every thread's: a full device frees them
    all), 0 before this thread's first pooled array."""
    held = getattr(_pools, "held", None)
    return 0 if held is None else held[1].shared.total


def release() -> None:
    """Free the idle memory of every thread's pool, back to the driver now (what arrays still hold
    stays theirs)."""
    for pool in list(_all_pools):
        pool.release()
        pool.flush()
