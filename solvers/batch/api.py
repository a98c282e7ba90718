"""``solve_batch``: B assignment problems in one call, every one certified.

    import numpy as np, solvers
    costs = np.random.default_rng(0).random((1000, 64, 64))
    r = solvers.solve_batch(costs)            # the fastest backend here ("auto")
    r.values, r.assignments, r.certified, r.summary()

Backends are looked up in one table, ``BATCH_BACKENDS`` ({name: "module:function"}, imported when
first used); each takes a packing.PackedBatch and returns a packing.PackedSolution. "auto" is cuda
when an NVIDIA GPU is usable (solvers.targets.cuda_available) and the GPU backend is installed,
else cpu. A backend module may offer ``prepare_host(costs)`` in place of inputs.prepare_batch (the
cuda one checks host costs in the pass that uploads them; the cpu one leaves the check to its solve,
which checks, solves and certifies each item from one read of its costs). The certificate
(certify_batch) runs on the host over all items in parallel, or, when the backend module offers
``certify_packed`` and the costs stay on its GPU, there, or inside the backend's solve when it
returns it (PackedSolution.certificate).

Device arrays (``__cuda_array_interface__``, or ``__dlpack__`` on a CUDA device: CuPy, PyTorch)
need the cuda backend: its module's ``prepare_device(costs)`` packs them without a host copy and
its results stay on that device. Where no cuda backend is usable, one line says so
(BackendUnavailable); CPU arrays of any library that numpy reads in place (CPU torch tensors
through DLPack) are solved on the host without a copy.
"""
from __future__ import annotations

import importlib
import os
import importlib.util
import time
from dataclasses import dataclass

from ..errors import BackendUnavailable, InputError
from ..targets import context_attached

BATCH_BACKENDS = {
    "cpu": "solvers.batch.cpu:solve_packed",
    "cuda": "solvers.batch.device:solve_packed_cuda",
    "cudasim": "solvers.batch.device:solve_packed_cudasim",
}
ALGORITHMS = ("hungarian",)  # shortest augmenting paths with dual potentials on every backend


@dataclass(frozen=True)
class BatchSolver:
    """What a front end needs to offer a batch solver (as registry.Algorithm says it for one problem):
    its name, words, backends; it takes no options and cannot be stopped midway (one call solves all)."""

    name: str
    summary: str
    reference: str
    backends: tuple[str, ...] = tuple(BATCH_BACKENDS)
    problem_kinds: tuple[str, ...] = ("batch",)
    options: tuple = ()
    interruptible: bool = False
    tracks_points: bool = False

    def parse_options(self, given: dict) -> dict:
        if given:
            raise InputError(f"the batch solver {self.name} takes no options (got {', '.join(sorted(given))})")
        return {}


BATCH_SOLVERS = {
    "hungarian": BatchSolver(
        "hungarian", "Every problem of the batch by shortest augmenting paths with dual potentials, many at once "
        "(a CPU core or a GPU block or warp each), each certified.",
        "Jonker & Volgenant, A shortest augmenting path algorithm for dense and sparse linear assignment "
        "problems, Computing 38 (1987)"),
}


def _load(spec: str, backend: str):
    module_name, _, name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        raise BackendUnavailable(f"backend {backend} for batches is not installed here "
                                 f"({module_name} is missing); use backend='cpu'") from None
    return getattr(module, name), module


def resolve_backend(backend: str) -> str:
    """The backend that runs: ``backend`` itself, or for "auto" cuda when a GPU is usable and the
    GPU backend is installed, else cpu."""
    if not isinstance(backend, str) or (backend != "auto" and backend not in BATCH_BACKENDS):
        raise InputError(f"backend must be one of auto, {', '.join(BATCH_BACKENDS)}, not {backend!r}")
    if backend == "auto":
        from ..targets import cuda_available
        if cuda_available() and importlib.util.find_spec(BATCH_BACKENDS["cuda"].partition(":")[0]) is not None:
            return "cuda"
        return "cpu"
    if backend == "cuda":
        from ..targets import cuda_available
        if not cuda_available():
            raise BackendUnavailable("backend cuda: no usable NVIDIA GPU in this process")
    if backend == "cudasim":
        from ..targets import enable_simulator
        enable_simulator()  # one line when numba is already loaded without the simulator
    return backend


def _batch_file(path):
    from ..formats import load
    data = load(path)
    if getattr(data, "kind", None) != "batch":
        raise InputError("this file holds one problem, not a batch: solve it with solvers.solve", os.fspath(path))
    return data


def solve_batch(costs, algorithm: str = "hungarian", backend: str = "auto"):
    """Solve and certify every problem of a batch; see solvers.batch.inputs for what ``costs`` may
    be (a (B, n, m) array, a list of 2-D matrices, a GPU array) and BatchResult for the answer."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"algorithm for batches must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    from .inputs import device_input, prepare_batch
    from .problem import AssignmentBatch
    if isinstance(costs, (str, os.PathLike)):  # a batch file: a 3-D .npy or an .npz of matrices
        costs = _batch_file(costs)
    loaded = isinstance(costs, AssignmentBatch)  # checked and packed when it was loaded
    on_device = not loaded and not isinstance(costs, (list, tuple)) and device_input(costs)
    name = resolve_backend(backend)
    solve_packed, module = _load(BATCH_BACKENDS[name], name)
    if not on_device and not loaded:
        from .inputs import check_batch_shape
        check_batch_shape(costs)  # a batch of the wrong shape is refused before anything is compiled
    from ..warmup import prepare_batch_run
    prepare_batch_run(costs, algorithm, name, on_device)  # compiling or loading kernels: untimed
    with context_attached(name):  # one lookup of the CUDA context for the whole batch
        started = time.perf_counter()
        if on_device:
            prepare = getattr(module, "prepare_device", None)
            if name == "cpu" or prepare is None:
                raise BackendUnavailable("device arrays need the cuda backend; none is usable here "
                                         "(pass a numpy array, or run where an NVIDIA GPU is)")
            batch = prepare(costs)
        elif loaded:
            batch = costs.batch
        else:  # a backend may check host costs its own way (cuda: while uploading; cpu: item by item)
            batch = getattr(module, "prepare_host", prepare_batch)(costs)
        packed_at = time.perf_counter()
        solution = solve_packed(batch.packed)
        solved_at = time.perf_counter()
        certify_there = getattr(module, "certify_packed", None) if name != "cpu" else None
        inline = getattr(solution, "certificate", None)  # checked by the backend, item by item
        if inline is not None:
            checked = inline
        elif certify_there is not None:
            checked = certify_there(batch.packed, solution)
        else:
            from .certify_batch import certify_packed
            checked = certify_packed(_on_host(batch.packed), solution)
        from .certify_batch import recheck_doubtful_proofs
        checked = recheck_doubtful_proofs(batch.packed, solution, checked)
        certified_at = time.perf_counter()
        from .result import unpack
        seconds = {"pack": packed_at - started, "solve": solved_at - packed_at, "certify": certified_at - solved_at}
        early = getattr(getattr(batch.packed, "solving", None), "first_launch_at", None)
        if early is not None:  # the solve started while the batch went up: its time runs from then
            seconds["solve"] = solved_at - early
            seconds["overlap"] = packed_at - early  # the part of it inside the packing
        if inline is not None:  # the certificate's own time, out of the solve's
            share = min(float(getattr(solution, "certify_seconds", 0.0)) / _threads(), seconds["solve"])
            seconds["solve"] -= share
            seconds["certify"] += share
        result = unpack(batch, solution, checked, name, seconds)
        seconds["total"] = time.perf_counter() - started
        if on_device:
            to_device = getattr(module, "result_to_device", None)
            if to_device is not None:  # assignments back on the caller's device
                result = to_device(result, costs)
        return result


def _threads() -> int:
    from numba import get_num_threads
    return max(1, get_num_threads())


def _on_host(packed):
    """``packed`` with its costs on the host (a GPU backend may have left them on the device)."""
    costs = packed.costs
    if hasattr(costs, "copy_to_host"):
        import dataclasses
        return dataclasses.replace(packed, costs=costs.copy_to_host())
    return packed
