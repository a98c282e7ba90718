"""Make numba-cuda 0.30's simulator allocate shared arrays under a lock.

FakeCUDAShared.array does an unlocked check-then-set keyed by call site, so two simulated threads
can get different arrays and a block-wide scan or reduction silently goes wrong. Same code, same
frame depth (the call site still keys the allocation), under a lock. Imported by every cudasim
subprocess that tests/conftest.py starts.
"""
import sys
import threading
import traceback

import numpy as np
from numba.core import types
from numba.cuda.simulator import kernelapi
from numba.np import numpy_support

_lock, _original = threading.Lock(), kernelapi.FakeCUDAShared.array


def _locked_shared_array(self, shape, dtype, alignment=None):
    if shape == 0 or alignment is not None:
        return _original(self, shape, dtype, alignment)
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    caller = traceback.extract_stack(sys._getframe())[-2][0:2]
    with _lock:
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations[caller] = np.empty(shape, dtype)
    return res


kernelapi.FakeCUDAShared.array = _locked_shared_array
