"""``fill_kernel``: a device array set to one value on the device, for values whose bytes differ
(1, inf, -inf, a sentinel): with no host array to make and no copy over the bus, launched on the
default stream like any kernel. Values whose bytes are all the same are a memset
(CudaLauncher.full). Its one specialisation per element type: the value comes as a scalar of the
array's own type."""
from __future__ import annotations

from .cuda_jit import cuda_kernel

cuda = None  # numba.cuda, bound when the kernel is first built (solvers.targets.cuda_jit)


@cuda_kernel
def fill_kernel(array, value):
    i = cuda.grid(1)
    if i < array.shape[0]:
        array[i] = value
