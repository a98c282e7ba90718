"""The ``Launcher`` protocol, and the one table that maps a backend to its launcher.

A host loop (target-independent Python) holds a launcher and never asks which target it has: it
allocates and copies arrays, launches ``Kernel`` steps and reads small counter arrays back through
these methods. Adding a backend is adding one class with these methods and one line in
``LAUNCHERS``. Launchers import numba (and numba.cuda) only when built, so listing algorithms
stays light.
"""
from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, runtime_checkable


from ..errors import BackendUnavailable
from .kernel import Kernel

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Launcher(Protocol):
    backend: str    # "cpu", "cuda" or "cudasim"
    device: bool    # arrays live in device memory (copies to the host synchronise)
    simulated: bool  # kernels run under numba's CUDA simulator (no shuffles, no clock)
    launches: int   # launches so far (the host loop's cost model)
    readbacks: int  # copies to the host so far

    def session(self, size: int, parallel_min: int | None = None) -> AbstractContextManager:
        """Run the enclosed solve with settings suited to a problem of ``size`` (cpu: thread count; one
        thread below ``parallel_min``, default cpu.PARALLEL_MIN, for an algorithm whose parallel regions
        are many and short enough to need its own threshold)."""

    def launch(self, kernel: Kernel, size, *args) -> None:
        """Run ``kernel`` over ``size`` (see kernel.SHAPES) with ``args``; asynchronous on a GPU."""

    def dims(self, kernel: Kernel, size, *args):
        """(blocks, threads per block) that ``launch`` would use, None when it would launch nothing
        (cpu: (1, 1), the loop covers the work itself); a host loop sizes per-thread arrays with it."""

    def cooperative_blocks(self, kernel: Kernel, *args) -> int:
        """How many blocks of a COOPERATIVE kernel can be resident at once (1 on cpu)."""

    def upload(self, host: np.ndarray, dtype=None):
        """A target copy of ``host`` (contiguous, in ``dtype``); an empty array gets one unused element."""

    def upload_matrix(self, host: np.ndarray, dtype, scan=None):
        """A target copy of a large 2-D matrix converted to ``dtype`` (on a GPU: staged through pinned
        memory); ``scan`` (cost_summary.HeldScan) checks held integers in the pass that converts them."""

    def empty(self, n: int, dtype): ...
    def empty_matrix(self, rows: int, cols: int, dtype):
        """An uninitialised rows x cols target matrix (C order), for a kernel to fill."""
    def full(self, n: int, value, dtype): ...
    def zeros(self, n: int, dtype): ...

    def read(self, array, out: np.ndarray | None = None) -> np.ndarray:
        """A host copy of the 1-D ``array`` (into ``out`` when given: a reused, on a GPU pinned,
        buffer; a shorter ``out`` gets the array's first out.size elements)."""

    def read_as(self, array, dtype) -> np.ndarray:
        """A host copy of a 1-D target array, converted to ``dtype`` (a GPU: a large one staged back
        through pinned memory and converted on all cores)."""

    def host_buffer(self, n: int, dtype) -> np.ndarray:
        """A host array for frequent small readbacks (pinned on a GPU)."""

    def scratch(self, n: int, dtype) -> np.ndarray:
        """A host array for a solve's small readbacks whose values are used before the next read
        into it: as host_buffer, but shared by the solves of a thread (pinning memory costs about
        a millisecond, more than a small solve's readbacks save with it)."""

    def kept(self, n: int, dtype):
        """A 1-D target array of at least n elements (a power of two, 1024 or more), shared by this
        thread's calls: for a small array set up again and again, which on a GPU costs an
        allocation of tens of microseconds each time. Kernels and copies reach it in stream order,
        so a later call may write it while an earlier launch still reads it."""

    def write(self, array, host: np.ndarray) -> None:
        """``host`` into the 1-D ``array``, from its start (a kept array may be longer)."""

    def synchronize(self) -> None: ...

    def free_bytes(self) -> int | None:
        """Device memory free now, for a solver choosing between a faster and a smaller way (None
        where arrays live in host memory: the cpu and the simulator)."""


def kept_capacity(n: int) -> int:
    """The size of a kept array holding n elements: a power of two, 1024 or more (few sizes, each
    kept once a thread)."""
    return max(1024, 1 << (max(int(n), 1) - 1).bit_length())


# the one table: backend -> "module:class" of its launcher (imported when first asked for)
LAUNCHERS = {
    "cpu": "solvers.targets.cpu:CpuLauncher",
    "cuda": "solvers.targets.cuda:CudaLauncher",
    "cudasim": "solvers.targets.cudasim:SimulatorLauncher",
}


def launcher_class(backend: str):
    from . import simulator_enabled
    if backend not in LAUNCHERS:
        raise BackendUnavailable(f"unknown backend {backend}; choose from {', '.join(LAUNCHERS)}")
    if backend == "cudasim" and not simulator_enabled():
        raise BackendUnavailable("backend cudasim needs NUMBA_ENABLE_CUDASIM=1 before numba is imported; "
                                 "start the process with that variable set")
    if backend == "cuda" and simulator_enabled():
        raise BackendUnavailable("backend cuda is not available in a process running the CUDA simulator")
    module, name = LAUNCHERS[backend].split(":")
    return getattr(importlib.import_module(module), name)


def launcher_for(backend: str) -> Launcher:
    """A fresh launcher for ``backend`` (cheap: its launch and readback counts start at 0)."""
    return launcher_class(backend)()
