"""``Kernel``: one step of an algorithm, as the loop each target runs it with.

An algorithm writes a step's per-element body once (``numba.extending.register_jitable``) and, in
the same file, the two loops that call it: an ``@njit(cache=True)`` loop over ``prange`` for the cpu
target and a thin ``@cuda.jit(cache=True)`` kernel for cuda and the simulator. Keeping body and
loops in one file is what keeps numba's on-disk cache honest: it only watches the file that holds
the compiled loop. A ``Kernel`` pairs the two loops and says how a GPU launch is shaped; both loops
take the same arguments, so the host loop launches it the same way on every target
(``launcher.launch(kernel, size, *args)``).
"""
from __future__ import annotations

from dataclasses import dataclass

# how a GPU launch covers its work (the cpu loop covers it itself)
EACH = "each"                  # one thread per element: size = element count
BLOCK_PER_ITEM = "block-per-item"  # one block per item (a row reduction): size = item count
ONE_BLOCK = "one-block"        # a single block (a scan or reduction over a short array)
MATRIX = "matrix"              # size = (rows, cols): block x = row, block y = chunk of columns
COOPERATIVE = "cooperative"    # a grid-stride kernel with grid-wide barriers: all blocks co-resident
SHAPES = (EACH, BLOCK_PER_ITEM, ONE_BLOCK, MATRIX, COOPERATIVE)


@dataclass(frozen=True)
class Kernel:
    """``cpu``: the compiled cpu loop (None: the step has no cpu form); ``cuda``: the ``@cuda.jit``
    kernel (None: no GPU form). ``threads``: block size on a GPU (default THREADS_PER_BLOCK);
    ``sim_threads``: block size under the simulator (default SIM_THREADS_PER_BLOCK; a kernel
    whose logic needs whole warps says WARP_SIZE or more). ``tiles``: for COOPERATIVE, elements per
    block worth launching (the grid is min(ceil(size / tiles), blocks that fit at once))."""

    name: str
    cpu: object = None
    cuda: object = None
    shape: str = EACH
    threads: int | None = None
    sim_threads: int | None = None
    tiles: int = 1

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise ValueError(f"kernel {self.name}: unknown shape {self.shape}")
