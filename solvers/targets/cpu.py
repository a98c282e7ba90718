"""The cpu launcher: arrays are numpy arrays, a launch calls the kernel's ``@njit`` loop."""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .kernel import Kernel
from .launcher import kept_capacity

# Below this many elements a solve runs its parallel loops on one thread: waking a thread team
# costs more than such a problem's work (on 2 cores, OpenMP's team takes milliseconds per region).
PARALLEL_MIN = 2048


class CpuLauncher:
    backend = "cpu"
    device = False
    simulated = False

    def __init__(self):
        self.launches = 0
        self.readbacks = 0

    @contextmanager
    def session(self, size: int, parallel_min: int | None = None):
        import numba
        before = numba.get_num_threads()
        threshold = PARALLEL_MIN if parallel_min is None else parallel_min
        numba.set_num_threads(1 if size < threshold else before)
        try:
            yield self
        finally:
            numba.set_num_threads(before)

    def launch(self, kernel: Kernel, size, *args) -> None:
        if kernel.cpu is None:
            raise NotImplementedError(f"kernel {kernel.name} has no cpu loop")
        self.launches += 1
        kernel.cpu(*args)

    def dims(self, kernel: Kernel, size, *args):
        return 1, 1

    def cooperative_blocks(self, kernel: Kernel, *args) -> int:
        return 1

    def upload(self, host: np.ndarray, dtype=None) -> np.ndarray:
        array = np.ascontiguousarray(host, dtype=dtype)
        return array if array.size else np.zeros(1, dtype=array.dtype)

    def upload_matrix(self, host: np.ndarray, dtype, scan=None) -> np.ndarray:
        from ..cost_summary import converted  # numba: loaded only when a matrix goes to a target
        return converted(host, dtype, scan)

    def empty(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype=dtype)

    def empty_matrix(self, rows: int, cols: int, dtype) -> np.ndarray:
        return np.empty((int(rows), int(cols)), dtype=dtype)

    def full(self, n: int, value, dtype) -> np.ndarray:
        return np.full(n, value, dtype=dtype)

    def zeros(self, n: int, dtype) -> np.ndarray:
        return np.zeros(n, dtype=dtype)

    def read(self, array, out: np.ndarray | None = None) -> np.ndarray:
        """A host copy: what a readback costs on a GPU, so host loops never alias target arrays."""
        self.readbacks += 1
        if out is None:
            return np.array(array, copy=True)
        out[...] = array[:out.size]
        return out

    def read_as(self, array, dtype) -> np.ndarray:
        self.readbacks += 1
        return np.array(array, dtype=dtype, copy=True)

    def host_buffer(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype=dtype)

    def scratch(self, n: int, dtype) -> np.ndarray:
        return np.empty(n, dtype=dtype)

    def kept(self, n: int, dtype) -> np.ndarray:
        return np.empty(kept_capacity(n), dtype=dtype)  # the loops run at once: nothing to share

    def write(self, array, host: np.ndarray) -> None:
        array[:np.size(host)] = host

    def synchronize(self) -> None:
        pass

    def free_bytes(self) -> None:
        return None
