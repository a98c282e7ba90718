"""Start the GPU's driver and primary context in a background thread, at once, so that it overlaps
the imports and the file reading of a command-line solve (issue 12: the context costs several
tenths of a second on an H100, as much as everything else a small solve waits for).

The thread calls the CUDA driver through ctypes, which releases the GIL for the whole call, so
the main thread goes on importing numba and parsing the file meanwhile. numba-cuda later retains
the same primary context (one per device and process), which is then already there. Nothing here
imports numba; without a driver or a device the thread just ends.
"""
from __future__ import annotations

import ctypes
import threading

from . import simulator_enabled

_started: threading.Thread | None = None


def _retain_primary_context(device_ordinal: int) -> None:
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        device = ctypes.c_int(0)
        context = ctypes.c_void_p(0)
        if driver.cuInit(0) != 0 or driver.cuDeviceGet(ctypes.byref(device), device_ordinal) != 0:
            return
        # retained for the process's life, like numba-cuda's own reference; the driver frees it at exit
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
    except (OSError, AttributeError):  # no driver library, or one without these entry points
        return


def start_cuda_context(device_ordinal: int = 0) -> None:
    """Begin creating the GPU context in the background (once per process; a no-op under the
    simulator)."""
    global _started
    if _started is not None or simulator_enabled():
        return
    _started = threading.Thread(target=_retain_primary_context, args=(device_ordinal,),
                                name="matchscope-cuda-context", daemon=True)
    _started.start()


def wait_for_cuda_context() -> None:
    """Let a started context finish before the process exits (a driver call must not be cut off
    by interpreter shutdown)."""
    if _started is not None:
        _started.join()
