"""Launch geometry shared by every kernel: warp size, block sizes, and the grid that covers n elements.

Shared-memory arrays must be sized by compile-time constants, so kernels size theirs with
``MAX_THREADS_PER_BLOCK`` (never with a launch's own block size). The simulator runs one Python
thread per CUDA thread (~0.1 ms each), so it gets small blocks: a launch there is never padded to a
full warp, except where a kernel's logic needs whole warps (it says so in its ``Kernel``).
"""
from __future__ import annotations

WARP_SIZE = 32
THREADS_PER_BLOCK = 256        # one thread per element: blocks of this size
MAX_THREADS_PER_BLOCK = 1024   # the CUDA limit; the size of per-block shared scratch arrays
SIM_THREADS_PER_BLOCK = 4      # blocks under the simulator


def next_power_of_two(n: int) -> int:
    size = 1
    while size < n:
        size *= 2
    return size


def grid_for(n: int, threads: int = THREADS_PER_BLOCK, smallest: int = WARP_SIZE) -> tuple[int, int]:
    """(blocks, threads) covering n elements, one thread each: full blocks of ``threads`` for a large
    launch, one block of the next power of two (at least ``smallest``) for a small one."""
    n = int(n)
    if n >= threads:
        return (n + threads - 1) // threads, threads
    return 1, max(smallest, next_power_of_two(max(n, 1)))
