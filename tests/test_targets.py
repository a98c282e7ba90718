"""The one target layer (issue 12): one {backend: launcher} table, every launcher speaking the
Launcher protocol, Kernel records launched the same way on every target, shared geometry."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from numba import njit, prange

from solvers.errors import BackendUnavailable
from solvers.targets import LAUNCHERS, Kernel, Launcher, grid_for, launcher_for
from solvers.targets.kernel import COOPERATIVE, EACH, MATRIX
from conftest import gpu_present


@njit(parallel=True)
def _double_cpu(n, a):
    for i in prange(n):
        a[i] *= 2


DOUBLE = Kernel("double", cpu=_double_cpu, cuda=None, shape=EACH)


@pytest.mark.parametrize("backend", sorted(LAUNCHERS))
def test_every_launcher_in_the_table_speaks_the_protocol(backend):
    module, _, name = LAUNCHERS[backend].partition(":")
    cls = getattr(importlib.import_module(module), name)
    members = [m for m in vars(Launcher) if not m.startswith("_") and m not in ("backend", "device", "simulated")]
    missing = [m for m in members if not hasattr(cls, m)]
    assert not missing, (backend, missing)
    assert cls.backend == backend


def test_the_cpu_launcher_runs_a_kernel_and_copies_like_a_device():
    launcher = launcher_for("cpu")
    assert isinstance(launcher, Launcher) and not launcher.device and not launcher.simulated
    data = launcher.upload(np.arange(5), np.int64)
    with launcher.session(5):
        launcher.launch(DOUBLE, 5, 5, data)
    out = launcher.read(data)
    assert out.tolist() == [0, 2, 4, 6, 8] and launcher.launches == 1 and launcher.readbacks == 1
    out[0] = 99  # a readback is a copy, as on a GPU
    assert launcher.read(data)[0] == 0
    assert launcher.upload(np.zeros(0), np.float64).size == 1  # empty arrays get one unused element


def test_a_simulator_launcher_needs_the_simulator_switched_on_first():
    with pytest.raises(BackendUnavailable, match="NUMBA_ENABLE_CUDASIM"):
        launcher_for("cudasim")
    with pytest.raises(BackendUnavailable, match="unknown backend"):
        launcher_for("opencl")


def test_launch_geometry_is_shared():
    assert grid_for(1000) == (4, 256)
    assert grid_for(5) == (1, 32)            # a tiny launch: one small block, a whole warp
    assert grid_for(5, 256, 4) == (1, 8)     # the simulator's smallest blocks
    with pytest.raises(ValueError):
        Kernel("bad", shape="diagonal")


class _Context:
    pass


@pytest.fixture
def fake_contexts(monkeypatch):
    """The cuda launcher's numba.cuda replaced: current_context() is the list's last (append one to
    stand for a new context), device arrays are host arrays."""
    from solvers.targets import cuda as cuda_target
    contexts = [_Context()]

    class FakeCuda:
        @staticmethod
        def current_context():
            return contexts[-1]

        @staticmethod
        def device_array(n, dtype):
            return np.empty(n, dtype)

    monkeypatch.setattr(cuda_target, "cuda", FakeCuda)
    return contexts


def test_a_gpu_scratch_buffer_is_kept_per_thread_and_context_never_shared_across_them(monkeypatch, fake_contexts):
    """Pinning host memory costs about a millisecond a solve, so the counters' readback buffer is
    kept; two threads solving at once, or a context made after another was closed, never share one."""
    import threading
    from solvers.targets import cuda as cuda_target
    monkeypatch.setattr(cuda_target.CudaLauncher, "host_buffer", lambda self, n, dtype: np.empty(n, dtype))
    monkeypatch.setattr(cuda_target, "_SCRATCH", threading.local())
    first = cuda_target.CudaLauncher().scratch(8, np.int64)
    assert cuda_target.CudaLauncher().scratch(8, np.int64) is first  # another solve, same thread
    assert cuda_target.CudaLauncher().scratch(8, np.int32) is not first
    assert cuda_target.CudaLauncher().scratch(3, np.int64) is not first
    elsewhere = []
    worker = threading.Thread(target=lambda: elsewhere.append(cuda_target.CudaLauncher().scratch(8, np.int64)))
    worker.start()
    worker.join()
    assert elsewhere[0] is not first
    fake_contexts.append(_Context())  # the old context closed, a new one made
    assert cuda_target.CudaLauncher().scratch(8, np.int64) is not first


def test_a_kept_device_array_is_shared_within_its_capacity_per_thread_and_context(monkeypatch, fake_contexts):
    """The certificate's small device arrays are kept between calls (an allocation costs tens of
    microseconds): sizes of one power-of-two capacity share one; another capacity, dtype, thread
    or context gets its own."""
    import threading
    from solvers.targets import cuda as cuda_target
    from solvers.targets.launcher import kept_capacity
    monkeypatch.setattr(cuda_target, "_KEPT", threading.local())
    assert [kept_capacity(n) for n in (0, 1, 1024, 1025, 41000)] == [1024, 1024, 1024, 2048, 65536]
    first = cuda_target.CudaLauncher().kept(41000, np.float64)
    assert first.size == 65536 and first.dtype == np.float64
    assert cuda_target.CudaLauncher().kept(33000, np.float64) is first  # the same capacity, another call
    assert cuda_target.CudaLauncher().kept(70000, np.float64) is not first
    assert cuda_target.CudaLauncher().kept(41000, np.int64) is not first
    elsewhere = []
    worker = threading.Thread(target=lambda: elsewhere.append(cuda_target.CudaLauncher().kept(41000, np.float64)))
    worker.start()
    worker.join()
    assert elsewhere[0] is not first
    fake_contexts.append(_Context())
    assert cuda_target.CudaLauncher().kept(41000, np.float64) is not first


def test_the_cooperative_block_count_is_kept_apart_wherever_numba_would_compile_apart():
    """A cooperative kernel's resident blocks depend on the compiled code, so the count kept for the
    process is keyed by whatever numba types an argument by (cheaply): never shared across types."""
    from numba import typeof
    from solvers.targets.cuda import _type_key
    base = np.zeros((4, 6))
    samples = [base, np.zeros((9, 2)), base.astype(np.float32), base.T, base[:, ::2], np.zeros(6),
               np.zeros((1, 6))[[0] * 4], np.broadcast_to(np.zeros(6), (4, 6)), 3, 2 ** 63, -3, 3.0, True,
               np.float32(1.0), np.int32(1)]
    frozen = np.zeros((4, 6))
    frozen.flags.writeable = False
    samples.append(frozen)
    for a in samples:
        for b in samples:
            if typeof(a) != typeof(b):
                assert _type_key(a) != _type_key(b), (a, b)
    assert _type_key(base) == _type_key(np.ones((9, 2)))  # shapes alone compile nothing new


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU")
def test_on_a_gpu_full_sets_every_value_on_the_device_as_numpy_would():
    """A memset where the value's bytes are all the same, the fill kernel otherwise (1, inf, a
    sentinel): every element, every type the solvers ask for, and sizes around a block's edge."""
    from solvers.targets import launcher_for
    launch = launcher_for("cuda")
    cases = [(np.int32, -1), (np.int32, 1), (np.int32, 0), (np.int64, np.iinfo(np.int64).max), (np.int64, 7),
             (np.float64, np.inf), (np.float64, -np.inf), (np.float64, 0.0), (np.float64, -2.5), (np.float32, 1.5),
             (np.uint8, 3), (np.uint64, 2 ** 64 - 2)]
    for dtype, value in cases:
        for n in (1, 255, 256, 257, 100_003):
            got = launch.read(launch.full(n, value, dtype))
            assert got.dtype == np.dtype(dtype) and np.array_equal(got, np.full(n, value, dtype)), (dtype, value, n)


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not gpu_present(), reason="needs an NVIDIA GPU"))])
def test_a_launcher_writes_and_reads_the_start_of_a_longer_kept_array(backend):
    """A kept array is longer than what a call puts in it: write fills its start and leaves the
    rest, a shorter ``out`` reads its start (on a GPU by one driver copy each, without a slice);
    a pinned scratch buffer of another type is converted to the array's on the way in."""
    launcher = launcher_for(backend)
    kept = launcher.kept(3000, np.float64)
    assert kept.size == 4096
    launcher.write(kept, np.full(kept.size, -1.0))
    launcher.write(kept, np.arange(3000, dtype=np.int64))  # converted: the array's type rules
    start = launcher.read(kept, np.empty(3000))
    assert start.tolist() == list(range(3000))
    whole = launcher.read(kept)
    assert whole[:3000].tolist() == list(range(3000)) and (whole[3000:] == -1.0).all()
    pinned = launcher.scratch(kept.size, np.float64)[:10]
    assert launcher.read(kept, pinned) is pinned and pinned.tolist() == list(range(10))
