"""``cuda_kernel``: a ``@cuda.jit(cache=True)`` kernel, written beside its body and cpu loop, that a
process which never launches it never builds.

Importing numba.cuda costs about a third of a second, and a cpu run has no use for it. So a kernel
module imports numba for its cpu loops but not numba.cuda: it declares ``cuda = None`` and marks
its kernels ``@cuda_kernel`` (cache=True by default). When one of them is first used (a launch,
``compile``, a cache query), numba.cuda is imported, the module's ``cuda`` name is bound to it (a
deferred ``from numba import cuda``: kernels and their ``register_jitable`` helpers write
``cuda.grid(1)`` as usual, and the simulator can swap that name for its per-thread module as it
does for any kernel), and the real dispatcher is made. Every attribute of the dispatcher is
reachable through the wrapper.
"""
from __future__ import annotations

import functools


def bind_cuda(namespace: dict):
    """Import numba.cuda and bind it as ``cuda`` in a kernel module's namespace (idempotent), with
    the module's other deferred CUDA-only names: ``CUDA_IMPORTS = {"name": "module:attribute"}``
    (an intrinsic built with numba.cuda.extending, say), each declared ``name = None`` there."""
    import importlib
    import sys

    from numba import cuda

    from . import quiet_kernel_hints
    quiet_kernel_hints()  # every kernel of ours is built here: its launches never hint to users
    # every kernel module loaded so far, not only this one: a kernel may call another module's helpers
    spaces = [namespace] + [vars(m) for name, m in list(sys.modules.items())
                            if name.startswith("solvers.") and m is not None
                            and "cuda" in vars(m) and vars(m)["cuda"] is None]
    for space in spaces:
        if space.get("cuda") is not cuda:
            space["cuda"] = cuda
        for name, where in space.get("CUDA_IMPORTS", {}).items():
            if space.get(name) is None:
                module, _, attribute = where.partition(":")
                space[name] = getattr(importlib.import_module(module), attribute)
    return cuda


HARDWARE_HINTS = ("launch_bounds", "max_registers")  # cuda.jit options the simulator does not take

BUILT: list = []  # every dispatcher made here, in order (so compilations can be counted without a scan)


def kernels_compiled(uncached: bool = False) -> int:
    """Kernels compiled (not loaded from the on-disk cache) by the dispatchers built so far;
    ``uncached``: only those of dispatchers without an on-disk cache (compiled in every process)."""
    return sum(sum(getattr(d, "_cache_misses", {}).values()) for d in BUILT
               if not uncached or type(getattr(d, "_cache", None)).__name__ in ("NullCache", "NoneType"))


class LazyCudaKernel:
    def __init__(self, py_func, options: dict):
        functools.update_wrapper(self, py_func)
        self.py_func = py_func
        self.options = dict(options)
        self._dispatcher = None

    @property
    def dispatcher(self):
        if self._dispatcher is None:
            from . import simulator_enabled
            cuda = bind_cuda(self.py_func.__globals__)
            options = self.options
            if simulator_enabled():  # the simulator's jit takes no hardware hints
                options = {k: v for k, v in options.items() if k not in HARDWARE_HINTS}
            self._dispatcher = cuda.jit(**options)(self.py_func)
            BUILT.append(self._dispatcher)
        return self._dispatcher

    def __getitem__(self, launch_config):
        return self.dispatcher[launch_config]

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_dispatcher", "py_func", "options"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __repr__(self) -> str:
        return f"<cuda kernel {self.py_func.__qualname__}>"


def cuda_kernel(func=None, /, **options):
    """``@cuda_kernel`` or ``@cuda_kernel(**cuda_jit_options)``; ``cache`` defaults to True."""
    options = {"cache": True, **options}
    if func is not None:
        return LazyCudaKernel(func, options)
    return lambda f: LazyCudaKernel(f, options)


def compile_ptx(kernel, signature, cc=(9, 0), **options):
    """PTX of a kernel (a ``cuda_kernel`` or a plain function of a kernel module) for compute
    capability ``cc``, without a GPU (tests use it to check every kernel compiles)."""
    func = getattr(kernel, "py_func", kernel)
    cuda = bind_cuda(func.__globals__)
    return cuda.compile_ptx(func, signature, cc=cc, **options)
