"""CUDA-only device intrinsics the kernels use (imported only when a cuda kernel is built: see
solvers.targets.cuda_jit's ``CUDA_IMPORTS``). numba-cuda has no clock intrinsic; linking CUDA C
for it would make the kernels uncacheable, so it is inline PTX."""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.cuda.extending import intrinsic


@intrinsic
def clock64(typingctx):
    """The SM's 64-bit cycle counter: inline PTX ``mov.u64 $0, %clock64;``, volatile so it is read
    exactly where it is called (real GPUs only; the simulator has no clock)."""
    def codegen(context, builder, signature, args):
        reader = ir.InlineAsm(ir.FunctionType(ir.IntType(64), []), "mov.u64 $0, %clock64;", "=l",
                              side_effect=True)
        return builder.call(reader, [])
    return types.int64(), codegen
