"""A clock that compiled loops can read, so that each item of a batch is timed on the thread that
solves it (numba has no clock of its own in nopython code).

It is the processor's time-stamp counter (LLVM's ``readcyclecounter``: RDTSC on x86-64, constant-rate
and synchronised across cores on every x86-64 of the last fifteen years), read in a few nanoseconds
and compiled like any other code, so the loops that read it stay in numba's on-disk cache (a call
into the C library's clock through ctypes would not). Counts become seconds by a rate measured once
per process against ``time.perf_counter``. Elsewhere (ARM, where reading the counter may be
forbidden to programs) ``ticks`` gives -1 and the items' times are unknown (NaN), never made up.
"""
from __future__ import annotations

import platform
import time

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic

COUNTER = platform.machine().lower() in ("x86_64", "amd64")
CALIBRATION_SECONDS = 0.002  # long enough for a rate good to a fraction of a percent


@intrinsic
def _read_counter(typingctx):
    def codegen(context, builder, signature, args):
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                                  "llvm.readcyclecounter")
        return builder.call(function, [])
    return types.int64(), codegen


if COUNTER:
    @njit(cache=True, nogil=True)
    def ticks():
        return _read_counter()
else:
    @njit(cache=True, nogil=True)
    def ticks():
        return np.int64(-1)

_rate: list[float] = []


def ticks_per_second() -> float:
    """The counter's rate, measured once per process (NaN where there is no counter)."""
    if not _rate:
        if not COUNTER:
            _rate.append(float("nan"))
        else:
            ticks()  # loaded (or compiled) before the measurement, not inside it
            start, first = time.perf_counter(), ticks()
            while time.perf_counter() - start < CALIBRATION_SECONDS:
                pass
            elapsed, counted = time.perf_counter() - start, ticks() - first
            _rate.append(counted / elapsed if counted > 0 and elapsed > 0 else float("nan"))
    return _rate[0]
