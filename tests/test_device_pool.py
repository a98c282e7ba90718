"""The pool that keeps a solve's device memory for the next solve (solvers.targets.device_pool):
its bookkeeping with a stand-in allocator (any machine), the reference counting it borrows from
numba (a view outliving its array keeps the memory lent), and on a GPU: memory reused across
solves, never while a view still holds it, and solves on reused memory agreeing with scipy."""
from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

from solvers.targets import device_pool
from solvers.targets.device_pool import Pool, size_class

from conftest import gpu_present


class Chunk:
    def __init__(self, size: int, address: int):
        self.size = size
        self.device_pointer = address


class OutOfMemory(Exception):
    pass


class Device:
    """A stand-in allocator: a capacity in bytes; a chunk's memory is in use while anything holds
    the chunk (numba frees it when its last reference goes); addresses never repeat."""

    def __init__(self, capacity: int = 1 << 40):
        self.capacity = capacity
        self.live = weakref.WeakSet()
        self.made = 0
        self.flushed = 0

    def allocate(self, size: int) -> Chunk:
        if sum(c.size for c in self.live) + size > self.capacity:
            raise OutOfMemory("CUDA_ERROR_OUT_OF_MEMORY")
        self.made += 1
        chunk = Chunk(size, 4096 * self.made)
        self.live.add(chunk)
        return chunk

    def flush(self):
        self.flushed += 1
        gc.collect()

    def pool(self, idle_limit: int = 1 << 30) -> Pool:
        return Pool(self.allocate, idle_limit, lambda exc: isinstance(exc, OutOfMemory), self.flush)


@pytest.mark.parametrize("nbytes", [1, 511, 512, 513, 4095, 4096, 4097, 8192, 8193, 12 << 20, (1 << 30) + 1,
                                    3_000_000 * 4, 20_000 * 1000 * 8])
def test_a_size_class_holds_the_request_and_wastes_at_most_an_eighth_above_4_kib(nbytes):
    size = size_class(nbytes)
    assert size >= nbytes and size % 512 == 0
    if nbytes > 4096:
        assert size <= nbytes * 1.125
    assert size_class(size) == size  # a class is its own class: a returned chunk serves its class again


def test_memory_given_back_serves_the_next_request_of_its_class_and_no_other():
    device = Device()
    pool = device.pool()
    first = pool.take(10_000)
    pool.give_back(first)
    assert pool.take(10_100) is first  # the same class
    assert pool.reused == 1 and device.made == 1
    other = pool.take(100_000)
    assert other is not first and device.made == 2
    assert pool.idle_bytes == 0


def test_idle_memory_stays_under_its_limit_and_the_oldest_goes_first():
    device = Device()
    pool = device.pool(idle_limit=3 * 8192)
    chunks = [pool.take(8192) for _ in range(5)]
    for chunk in chunks:
        pool.give_back(chunk)
    assert pool.idle_bytes == 3 * 8192
    kept = {id(pool.take(8192)) for _ in range(3)}
    assert kept == {id(c) for c in chunks[2:]}
    assert device.made == 5  # the three came from the pool


def test_a_full_device_frees_the_idle_memory_and_tries_once_more():
    device = Device(capacity=64 << 10)
    pool = device.pool()
    for chunk in [pool.take(16 << 10) for _ in range(3)]:
        pool.give_back(chunk)  # 48 KiB idle in the pool, still the device's
    del chunk
    big = pool.take(40 << 10)
    assert big.size == size_class(40 << 10)
    assert pool.idle_bytes == 0 and device.flushed == 1


def test_a_request_the_device_cannot_hold_even_when_emptied_raises_its_error():
    device = Device(capacity=1 << 10)
    pool = device.pool()
    with pytest.raises(OutOfMemory):
        pool.take(1 << 20)


def test_other_allocation_errors_pass_through_and_keep_the_idle_memory():
    device = Device()
    pool = device.pool()
    pool.give_back(pool.take(8192))

    def broken(size):
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")
    pool._allocate = broken
    with pytest.raises(RuntimeError, match="ILLEGAL"):
        pool.take(1 << 20)
    assert pool.idle_bytes == 8192 and device.flushed == 0


def test_chunks_given_back_from_other_threads_are_counted_once():
    device = Device()
    pool = device.pool()
    chunks = [pool.take(8192 * (1 + k % 4)) for k in range(400)]

    def give(part):
        for chunk in part:
            pool.give_back(chunk)
    threads = [threading.Thread(target=give, args=(chunks[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert pool.idle_bytes == sum(c.size for c in chunks)
    again = [pool.take(c.size) for c in chunks]
    assert {id(c) for c in again} == {id(c) for c in chunks} and pool.idle_bytes == 0


class Context:
    """What numba's pointer keeps a weak reference to."""


def test_a_view_outliving_its_array_keeps_the_memory_lent():
    device = Device()
    pool = device.pool()
    context = Context()
    chunk = pool.take(4096)
    whole = device_pool._lend(pool, chunk, context)
    part = whole.view(512, 1024)
    assert part.device_ctypes_pointer.value == chunk.device_pointer + 512
    del whole
    gc.collect()
    assert pool.idle_bytes == 0  # the view still reads it
    assert pool.take(4096) is not chunk
    del part
    gc.collect()
    assert pool.idle_bytes == 4096 and pool.take(4096) is chunk


requires_gpu = pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU")


@requires_gpu
def test_on_a_gpu_a_freed_arrays_memory_serves_the_next_one_and_a_live_view_keeps_it():
    a = device_pool.device_array(1000, np.int32)
    address = a.device_ctypes_pointer.value
    view = a[10:20]
    del a
    gc.collect()
    b = device_pool.device_array(1000, np.int32)
    assert b.device_ctypes_pointer.value != address  # the view still holds the first
    del view
    gc.collect()
    c = device_pool.device_array((25, 40), np.int32)  # the same bytes, another shape
    assert c.device_ctypes_pointer.value == address
    assert b.device_ctypes_pointer.value != address
    host = np.arange(1000, dtype=np.int32).reshape(25, 40)
    c.copy_to_device(host)
    assert np.array_equal(c.copy_to_host(), host)


@requires_gpu
def test_on_a_gpu_released_memory_goes_back_to_the_driver():
    import solvers
    from numba import cuda
    size = 256 << 20
    a = device_pool.device_array(size, np.uint8)
    del a
    gc.collect()
    assert device_pool.idle_bytes() >= size
    held_free = cuda.current_context().get_memory_info().free
    solvers.release_device_memory()
    assert device_pool.idle_bytes() == 0
    assert cuda.current_context().get_memory_info().free >= held_free + size * 0.9


@requires_gpu
def test_on_a_gpu_solves_on_reused_memory_agree_with_scipy():
    from scipy.optimize import linear_sum_assignment
    import solvers
    rng = np.random.default_rng(5)
    for shape in [(60, 60), (40, 90), (300, 300)]:
        costs = rng.integers(0, 50, shape).astype(np.float64)  # ties
        rows, cols = linear_sum_assignment(costs)
        for again in (False, True):
            reused = device_pool._numba_pool().reused
            result = solvers.solve(costs, "hungarian", backend="cuda")
            assert result.certified and result.value == costs[rows, cols].sum()
            if again:  # the second solve's arrays come from the first one's memory
                assert device_pool._numba_pool().reused >= reused + 10


def test_releasing_device_memory_empties_every_pool_and_frees_it_at_once(monkeypatch):
    import solvers
    device = Device()
    pools = [device.pool(), device.pool()]
    for pool in pools:
        pool.give_back(pool.take(8192))
    monkeypatch.setattr(device_pool, "_all_pools", set(pools))
    solvers.release_device_memory()
    assert all(pool.idle_bytes == 0 for pool in pools) and device.flushed == 2
    assert not device.live  # nothing the pools held is still referenced


def test_releasing_device_memory_where_no_gpu_was_used_does_nothing(monkeypatch):
    import sys
    import solvers
    monkeypatch.delitem(sys.modules, "solvers.targets.device_pool", raising=False)
    monkeypatch.delitem(sys.modules, "solvers.targets.staged_upload", raising=False)
    solvers.release_device_memory()
    assert "solvers.targets.device_pool" not in sys.modules  # nothing was imported to do it


def test_the_pools_of_one_device_keep_their_idle_memory_under_one_limit():
    from solvers.targets.device_pool import IdleLimit
    device = Device()
    shared = IdleLimit(3 * 8192)
    first, second = (Pool(device.allocate, shared) for _ in range(2))  # two threads' pools
    chunks = [first.take(8192) for _ in range(2)] + [second.take(8192) for _ in range(2)]
    for chunk in chunks[:2]:
        first.give_back(chunk)
    for chunk in chunks[2:]:
        second.give_back(chunk)
    assert shared.total == first.idle_bytes + second.idle_bytes == 3 * 8192
    assert second.take(8192) is chunks[3] and shared.total == 2 * 8192


def test_a_full_device_frees_what_every_threads_pool_keeps_idle():
    from solvers.targets.device_pool import IdleLimit
    device = Device(capacity=64 << 10)
    shared = IdleLimit(1 << 30)
    other, mine = (Pool(device.allocate, shared, lambda exc: isinstance(exc, OutOfMemory), device.flush)
                   for _ in range(2))
    other.give_back(other.take(48 << 10))  # another thread's idle memory fills the device
    assert mine.take(32 << 10).size == 32 << 10
    assert other.idle_bytes == 0 and shared.total == 0


def test_a_pool_collected_with_its_thread_no_longer_counts_against_the_limit():
    from solvers.targets.device_pool import IdleLimit
    device = Device()
    shared = IdleLimit(1 << 20)
    gone = Pool(device.allocate, shared)
    gone.give_back(gone.take(8192))
    assert shared.total == 8192
    del gone
    gc.collect()
    assert shared.total == 0


def test_memory_given_back_while_a_pool_holds_its_lock_does_not_deadlock():
    """An array collected during a pool's own bookkeeping (a garbage collection started inside it)
    gives its memory back from the same thread: the lock must let it in."""
    device = Device()
    pool = device.pool()
    inner = pool.take(4096)

    class Collecting(Chunk):  # reading its size gives another chunk back, as a collection would
        @property
        def size(self):
            if not self.fired:
                self.fired = True
                pool.give_back(inner)
            return 8192

        @size.setter
        def size(self, value):
            self.fired = False
    outer = Collecting(8192, 1)
    worker = threading.Thread(target=pool.give_back, args=(outer,), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the pool deadlocked on its own lock"
    assert pool.idle_bytes == 4096 + 8192


def test_a_flush_frees_what_numba_queued_with_its_memory_manager_and_with_the_context():
    """numba-cuda 0.30 queues memory frees with the context's memory manager, not in
    ``context.deallocations`` (streams and events): clearing only the latter freed nothing."""
    class Queue:
        def __init__(self):
            self.cleared = 0

        def clear(self):
            self.cleared += 1

    class Manager:
        deallocations = Queue()

    class Context:
        deallocations = Queue()
        memory_manager = Manager()

    context = Context()
    device_pool._pending_frees(context)()
    assert context.deallocations.cleared == 1 and context.memory_manager.deallocations.cleared == 1

    class Older:  # one queue for everything, no memory manager
        deallocations = Queue()

    older = Older()
    device_pool._pending_frees(older)()
    assert older.deallocations.cleared == 1
