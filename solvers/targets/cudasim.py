"""The simulator launcher: the cuda launcher with small blocks and one-block cooperative grids
(numba's CUDA simulator runs each thread as a Python thread and cooperative grids of one block)."""
from __future__ import annotations

from .cuda import CudaLauncher
from .kernel import Kernel


class SimulatorLauncher(CudaLauncher):
    backend = "cudasim"
    simulated = True

    def cooperative_blocks(self, kernel: Kernel, *args) -> int:
        return 1

    def upload_matrix(self, host, dtype, scan=None):
        from ..cost_summary import converted
        return self.upload(converted(host, dtype, scan), dtype)
