"""The one target layer: which backends exist in this process, their launchers, launch geometry,
and where compiled kernels are cached.

Backends: ``cpu`` (numba njit, parallel over cores), ``cuda`` (numba.cuda kernels on an NVIDIA GPU)
and ``cudasim`` (the same cuda kernels under numba's CUDA simulator). The simulator is a
per-process choice: NUMBA_ENABLE_CUDASIM=1 must be set before numba is first imported, so tests
that need it run in a subprocess; in such a process ``cuda`` is not available.

A solver writes each step's per-element body once (``register_jitable``), beside the two loops
that call it (an ``@njit(cache=True)`` prange loop and a thin ``@cuda.jit(cache=True)`` kernel),
pairs them in a ``Kernel`` (kernel.py) and runs them from one target-independent host loop through
the ``Launcher`` that ``launcher_for(backend)`` gives (launcher.py: the protocol and the one
``{backend: launcher}`` table). Geometry (warp size, block sizes) lives in geometry.py, the on-disk
cache location in cache.py.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys

from ..errors import BackendUnavailable
from .geometry import THREADS_PER_BLOCK, WARP_SIZE, grid_for
from .kernel import Kernel
from .launcher import LAUNCHERS, Launcher, launcher_for

BACKENDS = tuple(LAUNCHERS)


def simulator_enabled() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"


def enable_simulator() -> None:
    """Turn the simulator on for this process if numba is not imported yet; else it must already be on."""
    if simulator_enabled():
        return
    if "numba" in sys.modules:
        raise BackendUnavailable("backend cudasim needs NUMBA_ENABLE_CUDASIM=1 before numba is imported; "
                                 "start the process with that variable set")
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"


# numba-cuda's performance hints (a small grid, an implicit host copy) speak to kernel writers, not
# to users of our solvers: each variable's hint is off unless the variable itself asks for it
_KERNEL_HINTS = {"NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS": "CUDA_LOW_OCCUPANCY_WARNINGS",
                 "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY": "CUDA_WARN_ON_IMPLICIT_COPY"}


def quiet_kernel_hints() -> None:
    """Turn numba-cuda's performance hints off for this process unless its variables are set. Numba
    reads them once, at import: a process that imported it first (the Python API) gets them set in
    numba's configuration as well."""
    config = sys.modules.get("numba.cuda.core.config")
    for variable, name in _KERNEL_HINTS.items():
        if variable in os.environ:
            continue
        os.environ[variable] = "0"
        if config is not None:
            setattr(config, name, 0)


def configure_numba(backend: str | None = None) -> None:
    """What a front end (CLI, explorer) sets before numba is imported: no performance hints (see
    ``quiet_kernel_hints``) and the kernel cache; ``backend`` "cudasim" switches the simulator on."""
    quiet_kernel_hints()
    from .cache import configure
    configure()
    if backend == "cudasim":
        enable_simulator()


@functools.lru_cache(maxsize=1)
def cuda_available() -> bool:
    """A real NVIDIA GPU usable by numba.cuda (never true under the simulator)."""
    if simulator_enabled():
        return False
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:  # a broken driver or toolkit means no GPU for us, not a crash
        return False


def gpu_present() -> bool:
    """A quick look for an NVIDIA driver with a device, without importing numba (for listings; a
    run still asks numba-cuda through ``cuda_available``)."""
    if simulator_enabled():
        return False
    if "numba" in sys.modules:
        return cuda_available()
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except (OSError, AttributeError):  # no driver library: no GPU
        return False


def available_backends() -> list[str]:
    out = ["cpu"]
    if cuda_available():
        out.append("cuda")
    if simulator_enabled() or "numba" not in sys.modules:
        out.append("cudasim")
    return out


def resolve_backend(requested: str, supported: tuple[str, ...], algorithm: str = "") -> str:
    """Map "auto" to cuda when a GPU is here and the algorithm has it, else cpu; check the rest."""
    requested = (requested or "auto").lower()
    if requested == "auto":
        if "cuda" in supported and cuda_available():
            return "cuda"
        if "cpu" in supported:
            return "cpu"
        return supported[0]
    if requested not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {requested}; choose from auto, {', '.join(BACKENDS)}")
    if requested not in supported:
        raise BackendUnavailable(f"{algorithm or 'this algorithm'} runs on {', '.join(supported)}, not {requested}")
    if requested == "cuda" and not cuda_available():
        raise BackendUnavailable("backend cuda needs an NVIDIA GPU and driver; none is usable here")
    if requested == "cudasim":
        enable_simulator()
    return requested


@contextlib.contextmanager
def context_attached(backend: str):
    """Run the enclosed solve with numba's CUDA context attached to this thread (backend cuda): each
    numba call otherwise asks the driver for the current context and looks it up again, and a
    G-PR solve with its certificate makes about 180 such calls. Other backends: nothing to do."""
    if backend != "cuda":
        yield
        return
    from numba.cuda.cudadrv import devices
    with contextlib.ExitStack() as stack:
        try:  # the solve itself says it when there is no usable GPU; another numba-cuda layout: as before
            stack.enter_context(devices._runtime.ensure_context())
        except Exception:
            pass
        yield


__all__ = ["BACKENDS", "Kernel", "LAUNCHERS", "Launcher", "THREADS_PER_BLOCK", "WARP_SIZE",
           "available_backends", "configure_numba", "context_attached", "cuda_available", "enable_simulator",
           "gpu_present", "grid_for", "launcher_for", "quiet_kernel_hints", "resolve_backend", "simulator_enabled"]
