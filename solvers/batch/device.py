"""Batches of small linear assignment problems on the GPU: upload, one launch, read back.

``solve_packed_cuda(packed)`` / ``solve_packed_cudasim(packed)`` take a packed batch (the fields of
``solvers.batch.inputs.PackedBatch``: flat ``costs`` with each item row-major and oriented so
rows <= cols, ``offsets``, ``rows``, ``cols``, ``row_offsets``, ``col_offsets``) and return the host
``PackedSolution`` fields: ``row_to_col`` (int64, by row_offsets, oriented column), ``u`` (float64,
by row_offsets), ``v`` (float64, by col_offsets), ``iterations`` (int64 per item: search steps) and
``status`` (int8 per item: 0 solved, 1 infeasible). ``solve_packed_device`` is the same on arrays
already on the GPU (anything with ``__cuda_array_interface__``: a numba device array, a torch or
CuPy tensor), returning device arrays, so a batch made on the device is never copied to the host.
``certify_packed_device`` checks a solution on the device in one launch (``device_kernels.CERTIFY``;
``certify_solution`` is the same for host arrays, with host arrays back).

The kernels (``device_kernels``) run one block per item; they are launched through the project's
launcher (``solvers.targets.launcher_for``: Kernel shape BLOCK_PER_ITEM, the block size of the
target, small blocks under the simulator), which fits them as they are. The simulator is a
per-process choice (NUMBA_ENABLE_CUDASIM=1 before numba is imported): ``solve_packed_cudasim``
only runs in such a process.
"""
from __future__ import annotations

import sys
import threading
import warnings
import weakref
from dataclasses import dataclass, replace

import numpy as np


@dataclass
class DeviceSolution:
    """The solver's outputs, as arrays of the target (device arrays on a GPU)."""

    row_to_col: object
    u: object
    v: object
    iterations: object
    status: object


@dataclass
class DeviceCertificate:
    """Per item: ``violation`` (largest violation of dual feasibility, complementary slackness or
    v <= 0; +inf for a non-finite dual), ``value`` (sum of the assigned costs, float64), ``dual``
    (sum of u and v, float64: equal to ``value`` at an optimum up to rounding), ``scale`` (largest
    |c| over finite pairs, |u|, |v|), ``valid`` (int8: 1 when every row has one in-range column on a
    finite pair and no column is taken twice)."""

    violation: object
    value: object
    dual: object
    scale: object
    valid: object


@dataclass
class _PackedSolution:
    """Stand-in for ``solvers.batch.packing.PackedSolution`` where that module is absent."""

    row_to_col: np.ndarray
    u: np.ndarray
    v: np.ndarray
    iterations: np.ndarray
    status: np.ndarray
    seconds: object = None
    device_costs: object = None
    device_solution: object = None


def _solution_class():
    try:
        from .packing import PackedSolution
    except ImportError:
        return _PackedSolution
    return PackedSolution


def _device_launcher():
    """The launcher for arrays on "the device": the simulator's in a simulator process, else cuda's."""
    from numba import config
    return _launcher("cudasim" if config.ENABLE_CUDASIM else "cuda")


def _launcher(backend: str):
    from ..targets import configure_numba
    from ..targets.launcher import launcher_for
    configure_numba()
    return launcher_for(backend)


def _index_array(launcher, array, dtype=np.int64):
    """A target int64 array: a host array is uploaded (once: see _uploaded), a device array taken
    as it is."""
    if hasattr(array, "__cuda_array_interface__") and launcher.device and not launcher.simulated:
        from numba import cuda
        array = cuda.as_cuda_array(array)
        if array.dtype != dtype:
            raise TypeError(f"index arrays on the device must be {np.dtype(dtype).name}, not {array.dtype}")
        return array
    if not isinstance(array, np.ndarray) or array.size > UPLOAD_CACHE_ENTRIES:
        return launcher.upload(np.asarray(array), dtype)
    return _uploaded(launcher, array, np.dtype(dtype))


UPLOAD_CACHE_ENTRIES = 1 << 20  # index arrays up to this size are kept on the GPU between calls
_UPLOADS: dict = {}  # (id(host array), GPU context) -> (weak reference to it, its contents then, dtype, device copy)


def _gpu_key(launcher):
    """Which GPU this thread's arrays are made on (a device array belongs to one GPU)."""
    if launcher.simulated:
        return "simulator"
    from numba import cuda
    return cuda.get_current_device().id


def _uploaded(launcher, array: np.ndarray, dtype: np.dtype):
    """The device copy of a small host index array made by an earlier call (the solve, the copy's
    checksums and the certificate all read a batch's offsets), if the array still holds what it held
    then; else a new upload, kept until the host array is gone. Each upload costs an allocation and a
    synchronous copy; three of them per array were a visible part of a batch's time."""
    device = _cached(launcher, array, dtype)
    if device is None:
        device = launcher.upload(array, dtype)
        _remember(launcher, array, dtype, device)
    return device


def _cached(launcher, array: np.ndarray, dtype: np.dtype):
    """The device copy ``_remember`` kept for ``array``, if it still holds what it held then; else None."""
    hit = _UPLOADS.get((id(array), _gpu_key(launcher)))
    if hit is not None and hit[0]() is array and hit[2] == dtype and np.array_equal(hit[1], array):
        return hit[3]
    return None


def _remember(launcher, array: np.ndarray, dtype: np.dtype, device) -> None:
    """Keep ``device`` as the copy of ``array`` until the host array is gone."""
    key = (id(array), _gpu_key(launcher))
    try:
        ref = weakref.ref(array, lambda _, key=key: _UPLOADS.pop(key, None))
    except TypeError:  # not weakly referable: not kept
        return
    _UPLOADS[key] = (ref, array.copy(), dtype, device)


def _index_arrays(launcher, arrays, extra=()) -> tuple:
    """(``_index_array`` of each of ``arrays``, a device copy of each of ``extra``: int64 host arrays
    not kept), with every host array not on the device yet going up in one copy: each upload is an
    allocation and a synchronous copy, and a batch's layout is packed anew at each call (so the
    cache of uploads never holds it) beside its items' lists: six of them before the first chunk."""
    out = [None] * len(arrays)
    missing = []
    for k, array in enumerate(arrays):
        if not isinstance(array, np.ndarray) or array.size > UPLOAD_CACHE_ENTRIES:
            out[k] = _index_array(launcher, array)  # a device array, or one too large to keep
        else:
            out[k] = _cached(launcher, array, np.dtype(np.int64))
            if out[k] is None:
                missing.append(k)
    parts = [arrays[k] for k in missing] + list(extra)
    if not parts:
        return tuple(out), ()
    sizes = [max(int(np.asarray(part).size), 1) for part in parts]  # an empty one gets a slot, as upload gives it
    flat = np.zeros(sum(sizes), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for part, start in zip(parts, starts):
        flat[start:start + np.asarray(part).size] = np.asarray(part).reshape(-1)
    device = launcher.upload(flat, np.int64)
    views = [device[int(a):int(b)] for a, b in zip(starts[:-1], starts[1:])]
    for k, view in zip(missing, views):
        out[k] = view
        _remember(launcher, arrays[k], np.dtype(np.int64), view)
    return tuple(out), tuple(views[len(missing):])


def _batch_arrays(launcher, costs, offsets, rows, cols, row_offsets, col_offsets) -> tuple:
    """The packed layout where the kernels read it (costs, offsets, rows, cols, row and column
    offsets), and the number of items."""
    indexes, _ = _index_arrays(launcher, (offsets, rows, cols, row_offsets, col_offsets))
    arrays = (_costs_array(launcher, costs),) + indexes
    return arrays + (int(arrays[2].shape[0]) if hasattr(rows, "__cuda_array_interface__") else len(rows),)


def _index_host(device) -> np.ndarray:
    return device.copy_to_host()


def _last(host_or_device, device, batch: int) -> int:
    """The batch's total (the prefix sum's last entry), read from the host array when there is one."""
    if not hasattr(host_or_device, "__cuda_array_interface__"):
        return int(np.asarray(host_or_device)[batch])
    return int(device[batch:batch + 1].copy_to_host()[0])


def _costs_array(launcher, costs):
    if hasattr(costs, "__cuda_array_interface__") and not launcher.simulated:
        from numba import cuda
        costs = cuda.as_cuda_array(costs)
        if costs.ndim != 1:
            costs = costs.reshape(costs.size)
        if costs.dtype not in (np.float32, np.float64):
            raise TypeError(f"costs must be float32 or float64, not {costs.dtype}")
        return costs
    costs = np.asarray(costs).reshape(-1)
    if costs.dtype not in (np.float32, np.float64):
        costs = costs.astype(np.float64)
    if launcher.simulated:
        return launcher.upload(costs)
    from ..targets.staged_upload import upload_flat  # pinned, chunked, overlapped: at the bus's speed
    return upload_flat(costs, costs.dtype)


def solve_packed_device(costs_device, offsets, rows, cols, row_offsets, col_offsets, *, backend: str = "cuda",
                        launcher=None, warp_cols: int | None = None) -> DeviceSolution:
    """Solve every item of a packed batch whose ``costs`` are (or will be put) on the device.
    ``rows``/``cols`` etc. may be host (numpy) or device arrays; host arrays are small and uploaded.
    Items of at most ``warp_cols`` columns (default ``device_kernels.WARP_COLS``, never more) are
    solved one warp each, wider ones one block each (0: every item by a block).
    Returns the target's arrays (not synchronised: a readback or ``cuda.synchronize()`` waits)."""
    launcher = launcher or _launcher(backend)
    plan = SolvePlan(launcher, offsets, rows, cols, row_offsets, col_offsets, warp_cols)
    plan.launch(_costs_array(launcher, costs_device), 0, plan.batch)
    return plan.solution()


class SolvePlan:
    """One batch's solver launches: its index arrays on the target, its outputs, and which items the
    warp kernel takes (the narrow ones) and which the block kernel. ``launch(costs, first, last)``
    starts items ``[first, last)``: all at once, or range by range while the costs are still going up
    (``solvers.batch.early_solve``); ``solution()`` is the outputs once every item was launched."""

    def __init__(self, launcher, offsets, rows, cols, row_offsets, col_offsets, warp_cols: int | None = None):
        from . import device_kernels as K

        self.launcher = launcher
        host_rows = np.asarray(rows) if not hasattr(rows, "__cuda_array_interface__") else None
        host_cols = np.asarray(cols) if not hasattr(cols, "__cuda_array_interface__") else None
        if host_rows is not None and host_cols is not None and np.any(host_rows > host_cols):
            raise ValueError("every item must be oriented with rows <= cols")
        if host_cols is None:
            host_cols = _index_host(_index_array(launcher, cols))
        self.batch = batch = len(host_cols)
        narrow = host_cols <= min(K.WARP_COLS, K.WARP_COLS if warp_cols is None else int(warp_cols))
        widest = int(host_cols.max()) if len(host_cols) else 0
        items = np.arange(batch, dtype=np.int64)
        self.wide_items, self.narrow_items = items[~narrow], items[narrow]
        # the layout and each kind's item list go up together; a range's launch takes a slice of a list
        self.indexes, (self.wide_d, self.narrow_d) = _index_arrays(
            launcher, (offsets, rows, cols, row_offsets, col_offsets), (self.wide_items, self.narrow_items))
        row_off_d, col_off_d = self.indexes[3], self.indexes[4]
        self.total_rows = _last(row_offsets, row_off_d, batch)
        self.total_cols = _last(col_offsets, col_off_d, batch)
        self.row_to_col = launcher.empty(max(self.total_rows, 1), np.int64)
        self.u = launcher.empty(max(self.total_rows, 1), np.float64)
        self.v = launcher.empty(max(self.total_cols, 1), np.float64)
        self.iterations = launcher.empty(max(batch, 1), np.int64)
        self.status = launcher.empty(max(batch, 1), np.int8)
        if len(self.wide_items):  # global column state for the widest items only
            self.scratch = _column_scratch(launcher, self.total_cols if widest > K.SMEM_COLS else 1)

    def launch(self, costs, first: int, last: int, stream=None) -> None:
        """Start items ``[first, last)`` on ``stream`` (None: the default stream, or for a ragged
        batch with both kinds two streams of their own, so that the warps' items fill the SMs beside
        the blocks'; the legacy default stream, which readbacks and later kernels use, waits for
        both)."""
        from . import device_kernels as K

        L = self.launcher
        wide = slice(*(int(k) for k in np.searchsorted(self.wide_items, [first, last])))  # a grid takes ints
        narrow = slice(*(int(k) for k in np.searchsorted(self.narrow_items, [first, last])))
        wide_count, narrow_count = wide.stop - wide.start, narrow.stop - narrow.start
        streams = None
        if not L.simulated:
            if stream is not None:
                streams = (stream, stream)
            elif wide_count and narrow_count:
                streams = _streams()
        outputs = (self.row_to_col, self.u, self.v, self.iterations, self.status)
        if wide_count:  # one block per item, launched first: the longest searches start early
            args = (costs, *self.indexes, self.wide_d[wide], *outputs, *self.scratch,
                    np.int32(K.TREE if L.simulated else K.BLOCK_MODE))
            if streams:
                K.SOLVE.cuda[wide_count, L.threads(K.SOLVE), streams[0]](*args)
            else:
                L.launch(K.SOLVE, wide_count, *args)
        if narrow_count:  # one warp per item (under the simulator: one block per item)
            per_block = 1 if L.simulated else K.WARPS_PER_BLOCK
            blocks = (narrow_count + per_block - 1) // per_block
            args = (costs, *self.indexes, self.narrow_d[narrow], *outputs,
                    np.int32(K.TREE if L.simulated else K.WARP_MODE))
            if streams:
                K.SOLVE_WARP.cuda[blocks, L.threads(K.SOLVE_WARP), streams[1]](*args)
            else:
                L.launch(K.SOLVE_WARP, blocks, *args)

    def solution(self) -> DeviceSolution:
        return DeviceSolution(self.row_to_col[:self.total_rows], self.u[:self.total_rows], self.v[:self.total_cols],
                              self.iterations[:self.batch], self.status[:self.batch])


_STREAMS: list = []
_UNUSED_SCRATCH: dict = {}  # GPU context -> the one-entry scratch arrays passed where none is read


def _column_scratch(launcher, size: int) -> tuple:
    """The block kernel's global column state (distance, path, row of each column, visited) for
    ``size`` columns; items that keep it in shared memory read none of it, and get one-entry arrays
    made once (four allocations per call were part of a batch's time)."""
    def make(n):
        return (launcher.empty(n, np.float64), launcher.empty(n, np.int32), launcher.empty(n, np.int32),
                launcher.empty(n, np.int32))
    if size > 1:
        return make(size)
    key = _gpu_key(launcher)
    if key not in _UNUSED_SCRATCH:
        _UNUSED_SCRATCH[key] = make(1)
    return _UNUSED_SCRATCH[key]


_CERTIFY_SCRATCH: dict = {}  # (GPU, thread) -> the certificate's scratch arrays, grown as needed


def _certify_scratch(launcher, rows: int, cols: int) -> dict:
    """The certificate kernels' per-row and per-column scratch for ``rows`` and ``cols`` (the batch's
    totals), kept between calls of this thread on this GPU and grown only when a batch needs more:
    allocating them (a 16 MB near-tie table for 1000 x 256 x 256) each call cost milliseconds. They
    stay allocated while the process lives (one set per thread that certified on the GPU)."""
    from ..near_ties import CAP
    key = (_gpu_key(launcher), threading.get_ident())
    held = _CERTIFY_SCRATCH.get(key)
    if held is None or held["rows"] < rows or held["cols"] < cols:
        rows, cols = max(rows, 1), max(cols, 1)
        held = {"rows": rows, "cols": cols,
                "owner": launcher.empty(cols, np.int32), "bad": launcher.empty(rows, np.int32),
                "f": launcher.empty(rows, np.float64), "e2": launcher.empty(rows, np.float64),
                "e1": launcher.empty(rows, np.float64), "floor": launcher.empty(rows, np.float64),
                "close": launcher.empty(rows, np.int64), "near": launcher.empty_matrix(rows, CAP, np.int32),
                "releasable": launcher.empty(cols, np.bool_), "search": launcher.empty_matrix(3, cols, np.int64)}
        _CERTIFY_SCRATCH[key] = held
    return held


_CERTIFY_OUTPUTS: dict = {}  # (GPU, thread) -> the certificate's per-item outputs of the last batch size


class _CertifyOutputs:
    """The certificate's per-item outputs on the device, one block per type (each field a row, as
    the kernel takes them), their row views, and pinned host buffers to read them into; kept for
    the next batch of the same size on this thread and GPU. Each call sets their starting values on
    the device (memsets: NaN, -1 or 0 in every byte) instead of uploading them: the uploads, the
    allocations and the row views' slicing were about a hundred small calls a batch."""

    def __init__(self, launcher, count: int):
        from numba import cuda
        self.count = count
        self.floats = cuda.device_array((6, count), np.float64)  # value, tol, s, e, e_abs, shift
        self.ints = cuda.device_array((3, count), np.int64)      # at_row, at_col, terms
        self.bytes = cuda.device_array((2, count), np.int8)      # reason, integral
        self.rows = [self.floats[k] for k in range(6)] + [self.ints[k] for k in range(3)] + \
            [self.bytes[k] for k in range(2)]
        self.room = cuda.device_array(count, np.int8)
        self.gaps = cuda.device_array(count, np.float64)
        self.wanted = cuda.device_array(count, np.int8)
        self.host = {name: launcher.host_buffer(size, dtype).reshape(shape) for name, size, dtype, shape in (
            ("floats", 6 * count, np.float64, (6, count)), ("ints", 3 * count, np.int64, (3, count)),
            ("bytes", 2 * count, np.int8, (2, count)), ("room", count, np.int8, (count,)),
            ("gaps", count, np.float64, (count,)), ("wanted", count, np.int8, (count,)))}
        self._starts = [(self.floats[0:2], 0xFF), (self.floats[2:6], 0), (self.ints[0:2], 0xFF),
                        (self.ints[2:3], 0), (self.bytes, 0), (self.room, 0)]

    def reset(self, simulated: bool) -> None:
        """value and tol NaN, at_row and at_col -1, the rest 0: what certify_batch.empty_outcome starts
        from (every byte set: the simulator, which has no memset, gets the same bytes copied)."""
        from numba.cuda.cudadrv.driver import device_memset
        for array, byte in self._starts:
            if simulated:
                array.copy_to_device(np.full(array.nbytes, byte, np.uint8).view(array.dtype).reshape(array.shape))
            else:
                device_memset(array, byte, array.nbytes)


def _certify_outputs(launcher, count: int) -> _CertifyOutputs:
    key = (_gpu_key(launcher), threading.get_ident())
    held = _CERTIFY_OUTPUTS.get(key)
    if held is None or held.count != count:
        held = _CERTIFY_OUTPUTS[key] = _CertifyOutputs(launcher, count)
    held.reset(launcher.simulated)
    return held


def _streams():
    """Two CUDA streams for the ragged launches, made once per process."""
    if not _STREAMS:
        from numba import cuda
        _STREAMS.extend((cuda.stream(), cuda.stream()))
    return _STREAMS


def _solve_packed(packed, backend: str, **options):
    launcher = _launcher(backend)
    uploaded = getattr(packed, "device_costs", None)  # made by prepare_host's checking pass
    costs = uploaded if uploaded is not None else _costs_array(launcher, packed.costs)
    solving = getattr(packed, "solving", None)  # started by that pass, as the chunks went up
    if solving is not None and not options and not solving.finished:
        out = solving.finish(costs)  # once: a second solve of the same batch solves it again
    else:
        out = solve_packed_device(costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                                  packed.col_offsets, launcher=launcher, **options)
    solution = _solution_class()(row_to_col=_read(launcher, out.row_to_col, np.int64),
                                 u=_read(launcher, out.u, np.float64), v=_read(launcher, out.v, np.float64),
                                 iterations=_read(launcher, out.iterations, np.int64),
                                 status=_read(launcher, out.status, np.int8),
                                 # host costs went up once: the certificate may check there, against their checksums
                                 device_costs=None if _on_device(packed.costs) else costs,
                                 device_solution=out)
    for name in _SOLUTION_FIELDS:  # read-only until the certificate takes the device arrays (below)
        getattr(solution, name).flags.writeable = False
    return solution


_SOLUTION_FIELDS = ("row_to_col", "u", "v", "status")


def _take_device_solution(solution):
    """The device arrays ``solution`` was read from (PackedSolution.device_solution), for its
    certificate: read there, they need no upload of the host copies (tens of megabytes for 10^4
    items). Only while the host arrays are still read-only as the solve left them, so that what the
    certificate checks is what the caller holds; they are writeable again afterwards, and a second
    call gets None."""
    kept = getattr(solution, "device_solution", None)
    if kept is None:
        return None
    arrays = [getattr(solution, name) for name in _SOLUTION_FIELDS]
    unchanged = not any(a.flags.writeable for a in arrays)
    for a in arrays:
        a.flags.writeable = True
    return kept if unchanged else None


def prepare_host(costs):
    """solvers.batch.inputs.prepare_batch for host costs headed for the GPU: the validating pass is
    the copy into the pinned buffers that go up to the GPU (targets.staged_upload), so the costs are
    read once for both (the two passes shared the host's memory bandwidth). The copy comes back as
    the packed batch's ``device_costs``; costs that are refused went up for nothing."""
    from .inputs import prepare_batch
    return prepare_batch(costs, scan=_scan_uploading)


def _scan_uploading(packed):
    """scan.scan_items's arrays for ``packed.costs``, their GPU copy, from one pass over them, and
    the solve started on the copy's items as their chunks went up (early_solve)."""
    from ..targets.staged_upload import upload_flat  # under the simulator too (its copies are numpy's)
    from .early_solve import SolveAsItArrives
    from .scan import ItemScan
    costs = packed.costs
    found = ItemScan(packed.offsets)
    solving = SolveAsItArrives(_device_launcher(), packed, found)

    def fill(first, last, staged):
        found.add(costs, first, last, staged)
    try:
        copy = upload_flat(costs, costs.dtype, fill, solving.sent)
    finally:
        if solving.stopped or sys.exc_info()[0] is not None:
            solving.wait()  # a refused batch's arrays are freed only once its launched kernels are done
    return found.verdicts(costs) + (copy, solving)


def _on_device(array) -> bool:
    return hasattr(array, "__cuda_array_interface__") or hasattr(array, "copy_to_host")


def item_checksums(costs, offsets, launcher=None) -> np.ndarray:
    """Each item's checksum (uint64 (B,), as solvers.batch.scan.scan_items gives it) of the costs
    ``costs`` on the device, items by ``offsets`` (host int64 (B+1,))."""
    from . import device_kernels as K
    launcher = launcher or _device_launcher()
    count = len(offsets) - 1
    if count <= 0:
        return np.zeros(0, np.uint64)
    threads = launcher.threads(K.CHECKSUM)
    partial = launcher.empty(count * threads, np.uint64)
    args = (costs if launcher.simulated else _costs_array(launcher, costs), _index_array(launcher, offsets), partial)
    if launcher.simulated:
        with warnings.catch_warnings():  # the simulator's numpy scalars warn where the GPU wraps silently
            warnings.simplefilter("ignore", RuntimeWarning)
            launcher.launch(K.CHECKSUM, count, *args)
    else:
        launcher.launch(K.CHECKSUM, count, *args)
    return launcher.read(partial).reshape(count, threads).sum(axis=1, dtype=np.uint64)


def _read(launcher, array, dtype):
    if array.shape[0] == 0:
        return np.zeros(0, dtype)
    return launcher.read(array)


def solve_packed_cuda(packed, **options):
    """Solve a packed batch on the GPU (costs uploaded from the host); ``options`` as for
    ``solve_packed_device``."""
    return _solve_packed(packed, "cuda", **options)


def solve_packed_cudasim(packed, **options):
    """The same kernels under numba's CUDA simulator (a process started with NUMBA_ENABLE_CUDASIM=1)."""
    return _solve_packed(packed, "cudasim", **options)


def certify_packed_device(costs_device, offsets, rows, cols, row_offsets, col_offsets, row_to_col, u, v, *,
                          backend: str = "cuda", launcher=None) -> DeviceCertificate:
    """Check a solution of every item in one launch (one block per item); returns the target's
    arrays (``DeviceCertificate``). Host arrays are uploaded; device arrays are used as they are."""
    from . import device_kernels as K

    launcher = launcher or _launcher(backend)
    costs, offsets_d, rows_d, cols_d, row_off_d, col_off_d, batch = _batch_arrays(
        launcher, costs_device, offsets, rows, cols, row_offsets, col_offsets)
    r2c = _answer_array(launcher, row_to_col, np.int64)
    u_d = _answer_array(launcher, u, np.float64)
    v_d = _answer_array(launcher, v, np.float64)
    total_cols = _last(col_offsets, col_off_d, batch)
    taken = launcher.zeros(max(total_cols, 1), np.int32)
    violation = launcher.empty(max(batch, 1), np.float64)
    value = launcher.empty(max(batch, 1), np.float64)
    dual = launcher.empty(max(batch, 1), np.float64)
    scale = launcher.empty(max(batch, 1), np.float64)
    valid = launcher.empty(max(batch, 1), np.int8)
    launcher.launch(K.CERTIFY, batch, costs, offsets_d, rows_d, cols_d, row_off_d, col_off_d, r2c, u_d, v_d, taken,
                    violation, value, dual, scale, valid)
    return DeviceCertificate(violation[:batch], value[:batch], dual[:batch], scale[:batch], valid[:batch])


def _answer_array(launcher, array, dtype):
    """An answer's array (assignment or duals) where the kernels read it: a device array as it is,
    a host array uploaded as it is now (never kept: unlike a batch's index arrays, it is checked
    once)."""
    if hasattr(array, "__cuda_array_interface__") and not launcher.simulated:
        from numba import cuda
        array = cuda.as_cuda_array(array)
        if np.dtype(dtype).kind == "i" and array.dtype != dtype:  # columns are read as given: no conversion
            raise TypeError(f"index arrays on the device must be {np.dtype(dtype).name}, not {array.dtype}")
        return array
    return launcher.upload(np.asarray(array), dtype)


def certify_solution(packed, solution, backend: str = "cuda") -> DeviceCertificate:
    """``certify_packed_device`` for a packed batch and a solution; host (numpy) arrays back. (Not
    named ``certify_packed``: that name, on a backend module, is the host's hook for a certificate in
    ``certify_batch``'s format, with its tolerance rules applied.)"""
    launcher = _launcher(backend)
    cert = certify_packed_device(packed.costs, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                                 packed.col_offsets, solution.row_to_col, solution.u, solution.v, launcher=launcher)
    return DeviceCertificate(*(_read(launcher, getattr(cert, name), None)
                               for name in ("violation", "value", "dual", "scale", "valid")))


# ---------------------------------------------------------------------------------------------
# device inputs end to end (solvers.batch.api: prepare_device, certify_packed, result_to_device)

def _as_device_array(costs):
    """A numba device array over the caller's GPU memory (no copy): ``__cuda_array_interface__``
    directly; a torch tensor that needs grad is detached first; another DLPack producer on a CUDA
    device is read through torch or CuPy, whichever is importable."""
    from numba import config, cuda
    if config.ENABLE_CUDASIM and hasattr(costs, "copy_to_host"):
        return costs  # the simulator's device array
    if hasattr(costs, "__cuda_array_interface__"):
        try:
            return cuda.as_cuda_array(costs)
        except RuntimeError:  # torch refuses the interface on a tensor that requires grad
            detach = getattr(costs, "detach", None)
            if detach is None:
                raise
            return cuda.as_cuda_array(detach())
    for module, name in (("torch.utils.dlpack", "from_dlpack"), ("cupy", "from_dlpack")):
        try:
            converter = getattr(__import__(module, fromlist=[name]), name)
        except ImportError:
            continue
        return cuda.as_cuda_array(converter(costs))
    from ..errors import InputError
    raise InputError("a DLPack array on a GPU needs torch or CuPy to be read here (neither is importable)")


def _c_contiguous(array) -> bool:
    check = getattr(array, "is_c_contiguous", None)
    if check is not None:
        return bool(check())
    return bool(array.flags["C_CONTIGUOUS"])


def prepare_device(costs):
    """Validate and pack a (B, n, m) batch that lives on the GPU, on the GPU: the oriented flat costs
    (float32 stays float32, other real types become float64) are made by one kernel from the
    caller's array (any strides), the values are checked by another (NaN, -inf and magnitudes
    refused as for host batches, naming the item), and only the per-item verdicts come back.
    Returns an inputs.BatchInput whose ``packed.costs`` is a numba device array (the index arrays
    are host arrays: they depend on the shape alone)."""
    from numba import cuda

    from ..errors import InputError
    from ..problems import FLOAT_MAX
    from . import device_kernels as K
    from .inputs import BatchInput, _check_regular_sizes, _dtype_words, _packed

    array = _as_device_array(costs)
    if array.ndim != 3:
        raise InputError(f"a batch on the GPU must be one 3-D array (problems x rows x columns), got an array of "
                         f"shape {tuple(array.shape)}")
    dtype = np.dtype(array.dtype)
    if dtype.kind not in "iuf":
        raise InputError(f"the batch: costs must be real numbers, got {_dtype_words(dtype)}")
    b, n, m = (int(x) for x in array.shape)
    out_dtype = np.dtype(np.float32) if dtype == np.float32 else np.dtype(np.float64)
    _check_regular_sizes(b, n, m, out_dtype.itemsize)  # before anything per item is made
    shapes = np.tile(np.array([n, m], dtype=np.int64), (b, 1))
    launcher = _device_launcher()
    transposed = n > m
    total = b * n * m
    if total and not transposed and dtype == out_dtype and _c_contiguous(array):
        flat = array.reshape(total)  # already the packed layout: used in place
    else:
        flat = launcher.empty(max(total, 1), out_dtype)[:total]
        integer_source = dtype.kind in "iu" and dtype.itemsize >= 8
        flags = launcher.zeros(2 if integer_source else 1, np.int32)
        if total:
            launcher.launch(K.PACK, total, array, flat, transposed, flags)
        if integer_source and int(flags.copy_to_host()[0]):
            raise InputError("the batch holds integer costs beyond +-2^53 (9007199254740992), which float64 cannot "
                             "hold exactly")
    packed = _packed(flat, shapes)
    per = n * m
    if b and per and dtype.kind == "f":
        bad = launcher.empty(b, np.int8)
        where = launcher.empty(b, np.int64)
        biggest = launcher.empty(b, np.float64)
        launcher.launch(K.SCAN, b, flat, np.int64(per), bad, where, biggest)
        bad_h, where_h, biggest_h = bad.copy_to_host(), where.copy_to_host(), biggest.copy_to_host()
        found = np.flatnonzero(bad_h)
        if found.size:
            item = int(found[0])
            i, j = divmod(int(where_h[item]), int(packed.cols[item]))
            if transposed:
                i, j = j, i
            what = "NaN" if bad_h[item] == 1 else "-inf"
            raise InputError(f"item {item}: the cost at row {i}, column {j} (0-based) is {what} (use +inf to forbid a pair)")
        limit = FLOAT_MAX / (16.0 * max(n + m, 1))
        over = np.flatnonzero(biggest_h > limit)
        if over.size:
            item = int(over[0])
            raise InputError(f"item {item}: costs up to {biggest_h[item]:.3g} can overflow float64 sums in a problem "
                             f"of its size: keep |cost| at or below {limit:.3g}")
    packed = replace(packed, checksums=item_checksums(flat, packed.offsets, launcher))  # rechecked by the certificate
    return BatchInput(packed, True, shapes, (n, m))


def certify_packed(packed, solution):
    """solvers.batch.certify_batch.certify_packed's answer (the same dict, the same codes, values,
    gaps and tolerances, bit for bit), computed where the costs are: for costs on the GPU, one
    launch (``device_kernels.CERTIFY_EXACT``) does every check and sum in certify_batch's order;
    the host then bounds each item's gap from its float sums (certify_batch._sum_up's arithmetic, in
    numpy) and confirms claimed infeasibility by its own matching on that item's costs alone.

    Host costs are certified on the GPU's copy the solver read (``solution.device_costs``) once
    every item's checksum there equals the one taken when they were checked (the solver could have
    written over them); otherwise, or with no copy, on the host (certify_batch itself). A GPU batch
    whose checksum changed during the solve is not certified (COSTS_CHANGED): nothing else holds
    its costs."""
    from .certify_batch import COSTS_CHANGED
    from .certify_batch import certify_packed as host_certify
    changed = None
    if not _on_device(packed.costs):
        copy = getattr(solution, "device_costs", None)
        checked = getattr(packed, "checksums", None)
        if copy is None or checked is None or not np.array_equal(item_checksums(copy, packed.offsets), checked):
            return host_certify(packed, solution)  # no copy there, or not the costs any more
        packed = replace(packed, costs=copy)
    elif getattr(packed, "checksums", None) is not None:  # a GPU batch: still the costs that were checked?
        changed = item_checksums(packed.costs, packed.offsets) != packed.checksums
    out = _certify_on_device(packed, solution)
    if changed is not None and changed.any():
        out["reason"][changed] = COSTS_CHANGED
        out["gap"][changed] = np.nan
    return out


def _certify_on_device(packed, solution):
    from .certify_batch import EPS, INFEASIBLE_PROVEN, TINY, _max_matching
    from .certify_batch import empty_outcome
    from numba import cuda

    from . import device_kernels as K
    count = packed.size
    out = empty_outcome(count)
    reason, at_row, at_col, value, gap, tol = (out[k] for k in ("reason", "at_row", "at_col", "value", "gap", "tol"))
    if not count:
        return out
    launcher = _device_launcher()
    costs = packed.costs if launcher.simulated else cuda.as_cuda_array(packed.costs)
    total_rows = int(packed.row_offsets[-1])
    total_cols = int(packed.col_offsets[-1])

    kept = _take_device_solution(solution)
    if kept is not None:  # the arrays the host copies were read from
        r2c, u, v, status = kept.row_to_col, kept.u, kept.v, kept.status
    else:
        r2c = _answer_array(launcher, solution.row_to_col, np.int64)
        u = _answer_array(launcher, solution.u, np.float64)
        v = _answer_array(launcher, solution.v, np.float64)
        status = _answer_array(launcher, solution.status, np.int8)
    held = _certify_outputs(launcher, count)  # kept from the last batch of this size, started on the device
    floats, ints, bytes_, rows = held.floats, held.ints, held.bytes, held.rows
    value_d, tol_d, s_d, e_d, eabs_d, shift_d, at_row_d, at_col_d, count_d, reason_d, integral_d = rows
    work = _certify_scratch(launcher, total_rows, total_cols)
    floor_d, close_d, near_d = work["floor"], work["close"], work["near"]  # kept for NEAR_TIES
    indexes, _ = _index_arrays(launcher, (packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                                          packed.col_offsets))
    launcher.launch(K.CERTIFY_EXACT, count, costs, *indexes, r2c, u, v, status,
                    work["owner"], work["bad"], work["f"], work["e2"], work["e1"], floor_d, close_d, near_d, reason_d,
                    at_row_d, at_col_d,
                    value_d, tol_d, integral_d, s_d, e_d, eabs_d, count_d, shift_d)
    floats.copy_to_host(held.host["floats"])  # into the pinned buffers, then out of them (the next batch reuses them)
    ints.copy_to_host(held.host["ints"])
    bytes_.copy_to_host(held.host["bytes"])
    value[:], tol[:] = held.host["floats"][0], held.host["floats"][1]
    for started_nan in (value, tol):  # the start's NaN (all bits set) as numpy's own, as on the host
        started_nan[np.isnan(started_nan)] = np.nan
    s_all, e_all, eabs_all = (held.host["floats"][k].copy() for k in (2, 3, 4))
    at_row[:], at_col[:] = held.host["ints"][0], held.host["ints"][1]
    count_all = held.host["ints"][2].copy()
    code, integral_all = held.host["bytes"][0].copy(), held.host["bytes"][1].copy()
    decided = code > 0
    reason[decided] = code[decided]
    summed = np.flatnonzero(code == K.HOST_DECIDES_GAP)
    if summed.size:  # certify_batch._sum_up, elementwise (numpy rounds every operation alone, as numba does)
        s = s_all[summed]
        e_sum = e_all[summed]
        e_abs = eabs_all[summed]
        terms = count_all[summed]
        g = s + e_sum
        bound = 2.0 * (EPS * np.abs(g) + (terms + 2) * EPS * e_abs) + 8 * TINY
        bound_up = np.nextafter(g + bound, np.inf)
        gap[summed] = bound_up
        exact = (integral_all[summed] == 1) & (bound_up < 1.0)  # integers: a gap below 1 is none
        room = np.zeros(summed.size, dtype=bool)
        if not exact.all():  # the others: is another assignment within the gap? (certify_batch.item_room)
            wanted = np.zeros(count, dtype=np.int8)
            wanted[summed[~exact]] = 1
            gaps = np.zeros(count)
            gaps[summed] = bound_up
            room_d, gaps_d, wanted_d = held.room, held.gaps, held.wanted  # the kept arrays, through pinned buffers
            held.host["gaps"][:], held.host["wanted"][:] = gaps, wanted
            gaps_d.copy_to_device(held.host["gaps"])
            wanted_d.copy_to_device(held.host["wanted"])
            launcher.launch(K.NEAR_TIES, count, costs, *indexes, r2c, v, floor_d, shift_d, gaps_d,
                            tol_d, wanted_d, close_d, near_d,
                            work["releasable"], work["search"], room_d)
            found = room_d.copy_to_host(held.host["room"])
            room = (found[summed] == 1) & ~exact
        within = bound_up <= tol[summed]
        finite = bound_up < np.inf  # a difference that overflowed (NaN, +inf) proves nothing
        reason[summed] = np.where(finite & (exact | ~room | within), 0, 8)
        out["doubt"][summed] = finite & room & within  # proven by the allowance alone: rechecked on the host
    for b in np.flatnonzero(code == K.HOST_DECIDES_INFEASIBLE):  # that item's costs alone come back
        n, m = int(packed.rows[b]), int(packed.cols[b])
        item = costs[int(packed.offsets[b]):int(packed.offsets[b + 1])].copy_to_host() if n * m else np.zeros(0)
        size = _max_matching(item, 0, n, m)
        if size < n:
            reason[b], at_row[b] = INFEASIBLE_PROVEN, size
        else:
            reason[b] = 9
        at_col[b] = -1
    return out


def result_to_device(result, costs):
    """``result`` (a BatchResult of a regular batch) with ``assignments``, ``u`` and ``v`` as arrays of
    the caller's kind on the caller's device: torch tensors (int64 / float64) on the tensor's
    device, CuPy arrays, else numba device arrays. Values, certificates and the rest stay on the
    host (small per-item arrays)."""
    import dataclasses
    fields = {}
    for name in ("assignments", "u", "v"):
        data = getattr(result, name)
        if isinstance(data, np.ndarray):
            fields[name] = _to_callers_device(np.ascontiguousarray(data), costs)
    return dataclasses.replace(result, **fields) if fields else result


def _to_callers_device(host: np.ndarray, costs):
    module = type(costs).__module__.split(".")[0]
    if module == "torch":
        import torch
        return torch.as_tensor(host).to(costs.device)
    if module == "cupy":
        import cupy
        with cupy.cuda.Device(costs.device.id):
            return cupy.asarray(host)
    from numba import cuda
    return cuda.to_device(host)
