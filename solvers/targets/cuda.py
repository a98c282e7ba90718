"""The cuda launcher: arrays are numba device arrays, a launch runs the kernel's ``@cuda.jit`` form."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np
from numba import cuda

from . import device_pool, quiet_kernel_hints
from .geometry import SIM_THREADS_PER_BLOCK, THREADS_PER_BLOCK, WARP_SIZE, grid_for
from .kernel import BLOCK_PER_ITEM, COOPERATIVE, EACH, MATRIX, ONE_BLOCK, Kernel


quiet_kernel_hints()  # the API's users never asked for numba's hints to kernel writers


def _type_key(arg):
    """What numba compiles a kernel argument as, found cheaply (typing 25 arguments took most of a
    millisecond): an array's class, element type, dimensions and the flags its layout comes from,
    else the Python type. Never coarser than numba's own typing."""
    strides = getattr(arg, "strides", None)
    if strides is not None and hasattr(arg, "dtype"):
        flags = arg.flags
        writeable = getattr(flags, "writeable", True)  # a device array's flags (a dict) have none
        return (type(arg), np.dtype(arg.dtype).str, arg.ndim, bool(flags["C_CONTIGUOUS"]),
                bool(flags["F_CONTIGUOUS"]), 0 in strides and arg.size != 0, bool(writeable))
    if type(arg) is int:  # typed int64, or uint64 past it
        return int, arg.bit_length() > 63, arg < 0
    return type(arg)


_SCRATCH = threading.local()  # per thread: (context, {(size, dtype): pinned buffer})
_KEPT = threading.local()  # per thread: (context, {(capacity, dtype): device array})


def _held(store: threading.local, key, make):
    """The array ``store`` holds under ``key`` for this thread on the current context, made by
    ``make`` the first time (and again after a new context: memory belongs to the one it was made in)."""
    context = cuda.current_context()
    held = getattr(store, "held", None)
    if held is None or held[0] is not context:
        held = store.held = (context, {})
    arrays = held[1]
    if key not in arrays:
        arrays[key] = make()
    return arrays[key]


class CudaLauncher:
    backend = "cuda"
    device = True
    simulated = False

    # (kernel, argument types, device) -> blocks that fit at once: kept for the process, as a
    # launcher is made per solve and asking the driver took about a millisecond a solve
    _coop_blocks: dict = {}

    def __init__(self):
        self.launches = 0
        self.readbacks = 0

    @contextmanager
    def session(self, size: int, parallel_min: int | None = None):
        yield self

    def threads(self, kernel: Kernel) -> int:
        if self.simulated:
            return kernel.sim_threads or SIM_THREADS_PER_BLOCK
        return kernel.threads or THREADS_PER_BLOCK

    def dims(self, kernel: Kernel, size, *args):
        """(grid, block) of a launch, or None when there is nothing to do."""
        threads = self.threads(kernel)
        if kernel.shape == EACH:
            if size <= 0:
                return None
            smallest = threads if self.simulated else WARP_SIZE
            return grid_for(size, threads, min(smallest, threads))
        if kernel.shape == BLOCK_PER_ITEM:
            return (size, threads) if size > 0 else None
        if kernel.shape == ONE_BLOCK:
            return 1, threads
        if kernel.shape == MATRIX:
            rows, cols = size
            if rows <= 0 or cols <= 0:
                return None
            return (rows, (cols + threads - 1) // threads), threads
        if kernel.shape == COOPERATIVE:
            wanted = max(1, (int(size) + kernel.tiles - 1) // kernel.tiles)
            return min(wanted, self.cooperative_blocks(kernel, *args)), threads
        raise ValueError(kernel.shape)

    def launch(self, kernel: Kernel, size, *args) -> None:
        if kernel.cuda is None:
            raise NotImplementedError(f"kernel {kernel.name} has no cuda form")
        dims = self.dims(kernel, size, *args)
        if dims is None:
            return
        self.launches += 1
        kernel.cuda[dims](*args)

    def cooperative_blocks(self, kernel: Kernel, *args) -> int:
        """Blocks of ``kernel`` that fit on the device at once (for its argument types)."""
        dispatcher = kernel.cuda
        key = (kernel.name, tuple(map(_type_key, args)), cuda.current_context().device.id)
        blocks = self._coop_blocks.get(key)
        if blocks is None:
            compiled = dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
            blocks = max(1, int(compiled.max_cooperative_grid_blocks(self.threads(kernel))))
            self._coop_blocks[key] = blocks
        return blocks

    def upload(self, host: np.ndarray, dtype=None):
        source = np.asarray(host)
        target = source.dtype if dtype is None else np.dtype(dtype)
        if not self.simulated and source.ndim == 1:
            from .staged_upload import CONVERTED_ON_THE_WAY, STAGED_MIN_BYTES, upload_flat
            if source.size * target.itemsize >= STAGED_MIN_BYTES:
                # a graph's index arrays: pinned stages filled on all cores, int32 and int64 converted
                # on the way (a one-thread host conversion of 3M int32 pointers first took ~4 ms);
                # other conversions first (their staged copies are not compiled ahead)
                if source.dtype != target and (source.dtype.str, target.str) not in CONVERTED_ON_THE_WAY:
                    source = source.astype(target)
                from ..problems import writeable_alias  # the stages only read it: one numba type
                source = writeable_alias(np.ascontiguousarray(source))
                if source.flags.writeable:
                    return upload_flat(source, target)
        array = np.ascontiguousarray(source, dtype=target)
        return device_pool.to_device(array if array.size else np.zeros(1, dtype=array.dtype))

    def upload_matrix(self, host: np.ndarray, dtype, scan=None):
        from .staged_upload import upload_matrix
        return upload_matrix(host, dtype, scan)

    def empty(self, n: int, dtype):
        return device_pool.device_array(int(n), dtype)

    def empty_matrix(self, rows: int, cols: int, dtype):
        return device_pool.device_array((int(rows), int(cols)), dtype)

    def full(self, n: int, value, dtype):
        """A device array of n copies of ``value``, set on the device with no host array and no copy
        over the bus (a solve allocates a score of these per call): a memset where every byte of
        the value is the same (0, -1, 0.0: most of a solver's set-up), else a fill kernel."""
        one = np.full(1, value, dtype=dtype)
        pattern = one.view(np.uint8)
        if self.simulated or n <= 0:
            return cuda.to_device(np.full(int(n), value, dtype=dtype))
        array = device_pool.device_array(int(n), dtype)
        if (pattern == pattern[0]).all():
            from numba.cuda.cudadrv.driver import device_memset
            device_memset(array, int(pattern[0]), array.nbytes)  # on the default stream, before any later launch
        else:  # other values by a kernel, also on the device (np.full and a copy took ~4 ms for 3M int32)
            from .device_fill import fill_kernel
            fill_kernel[grid_for(int(n))](array, one[0])
        return array

    def zeros(self, n: int, dtype):
        return self.full(n, 0, dtype)

    def read(self, array, out: np.ndarray | None = None) -> np.ndarray:
        self.readbacks += 1
        if out is None:
            return array.copy_to_host()
        if out.size == array.size:
            array.copy_to_host(out)
        elif self._prefix_copy(array, out):  # one driver copy: a device slice costs ~50 us
            from numba.cuda.cudadrv.driver import device_to_host
            device_to_host(out, array, out.nbytes)
        else:
            array[:out.size].copy_to_host(out)
        return out

    def read_as(self, array, dtype) -> np.ndarray:
        """A host copy of a 1-D device array in ``dtype``: a large one of the staged pairs back
        through the pinned buffers and converted on all cores (staged_upload.download_flat)."""
        from .staged_upload import CONVERTED_ON_THE_WAY, STAGED_MIN_BYTES, download_flat
        self.readbacks += 1
        target = np.dtype(dtype)
        source = np.dtype(array.dtype)
        if (not self.simulated and array.ndim == 1 and array.nbytes >= STAGED_MIN_BYTES
                and (source.str, target.str) in CONVERTED_ON_THE_WAY):
            return download_flat(array, target)
        return array.copy_to_host().astype(target, copy=False)

    def host_buffer(self, n: int, dtype) -> np.ndarray:
        try:  # page-locked memory makes a frequent small readback cheaper
            return cuda.pinned_array(n, dtype)
        except Exception:  # the simulator may not offer it; plain memory is as good there
            return np.empty(n, dtype)

    def scratch(self, n: int, dtype) -> np.ndarray:
        """A pinned buffer shared by this thread's solves on the current context (a thread: two
        solves at once never share one; the context: pinned memory belongs to it)."""
        return _held(_SCRATCH, (int(n), np.dtype(dtype).str), lambda: self.host_buffer(n, dtype))

    def kept(self, n: int, dtype):
        """A device array shared by this thread's calls on the current context (as scratch)."""
        from .launcher import kept_capacity
        size = kept_capacity(n)
        return _held(_KEPT, (size, np.dtype(dtype).str), lambda: cuda.device_array(size, dtype=dtype))

    def write(self, array, host: np.ndarray) -> None:
        host = np.ascontiguousarray(host, dtype=array.dtype)
        if host.size == array.size:
            array.copy_to_device(host)
        elif self._prefix_copy(array, host):  # as read
            from numba.cuda.cudadrv.driver import host_to_device
            host_to_device(array, host, host.nbytes)
        else:
            array[:host.size].copy_to_device(host)

    def _prefix_copy(self, array, host: np.ndarray) -> bool:
        """Whether ``host`` and the start of the longer 1-D ``array`` can be copied by the driver
        directly (the simulator's arrays have no device memory; numba's own copies check the rest)."""
        return (not self.simulated and array.ndim == 1 and host.ndim == 1 and host.size < array.size
                and np.dtype(array.dtype) == host.dtype and host.flags["C_CONTIGUOUS"]
                and array.is_c_contiguous())

    def free_bytes(self) -> int | None:
        if self.simulated:
            return None
        free, _ = cuda.current_context().get_memory_info()
        return int(free) + device_pool.idle_bytes()  # the pool gives its idle memory up when the device is full

    def synchronize(self) -> None:
        cuda.synchronize()
