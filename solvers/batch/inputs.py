"""What ``solve_batch`` accepts, checked in one pass, and packed into the one layout every backend reads.

Accepted batches:

* a 3-D array (B, n, m) (numpy, or anything ``np.asarray`` reads: nested lists, a CPU torch tensor
  through DLPack): a *regular* batch of B problems of n x m;
* a list or tuple of 2-D arrays of any shapes: a *ragged* batch;
* an array on an NVIDIA GPU (``__cuda_array_interface__``, or ``__dlpack__`` on a CUDA device: CuPy,
  PyTorch): solved there by the cuda backend without a host copy (``device_input``); on any other
  backend one line says that device arrays need the cuda backend.

Costs are real numbers; +inf forbids a pair. NaN, -inf, text, complex numbers, booleans are refused
in one line naming the item (``InputError``). Integer costs become float64 and must stay within
+-2^53 (beyond it float64 cannot hold them exactly, so they are refused rather than rounded).
float32 batches stay float32 (half the memory traffic; the solvers compute in float64), anything
else becomes float64. An item with no rows or no columns is legal (nothing to assign).

The packed layout (``solvers.batch.packing.PackedBatch``, the contract with the backends): one flat array of costs,
each item row-major and *oriented* so that rows <= cols (an item with more rows than columns is
stored transposed), with the offsets of its entries, rows and columns. Solvers then only ever
assign every row of an item; results are turned back to each item's own orientation in
``solvers.batch.result``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import MASKED_COSTS, InputError, refuse_masked, unmasked_array
from ..io_util import EMPTY_ALLOWANCE, check_allocation
from ..problems import EXACT_INTEGER, FLOAT_MAX
from .packing import PackedBatch

KDL_CUDA, KDL_CUDA_MANAGED = 2, 13  # DLPack device types of memory on an NVIDIA GPU


@dataclass(frozen=True, eq=False)
class BatchInput:
    """A validated batch: the packed problems and how the caller laid them out.

    regular: given as one (B, n, m) array (results come back as arrays), else a list;
    shapes: (B, 2) int64, each item's shape as given; item_shape: (n, m) of a regular batch (also
    when B is 0), else None."""
    packed: PackedBatch
    regular: bool
    shapes: np.ndarray
    item_shape: tuple | None = None


# ---------------------------------------------------------------------------------------------
# device arrays

def device_input(data) -> bool:
    """Whether ``data`` lives on an NVIDIA GPU (CUDA array interface, or DLPack on a CUDA device).
    A CPU DLPack object (a CPU torch tensor) is not: numpy reads it in place."""
    if hasattr(data, "__cuda_array_interface__"):
        return True
    probe = getattr(data, "__dlpack_device__", None)
    if probe is None:
        return False
    try:
        device_type = int(probe()[0])
    except Exception:  # a broken probe is not a GPU
        return False
    return device_type in (KDL_CUDA, KDL_CUDA_MANAGED)


def host_array(data, what: str = "the batch") -> np.ndarray:
    """``data`` as a numpy array, in place where it can be (numpy, CPU DLPack objects such as CPU
    torch tensors, anything with ``__array__``); nested lists are read by np.asarray."""
    refuse_masked(data, what, MASKED_COSTS)
    if isinstance(data, np.ndarray):
        return data
    if hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        try:
            return np.from_dlpack(data)
        except (TypeError, BufferError, RuntimeError, ValueError):
            pass  # e.g. a read-only or unusual tensor: the ordinary conversion below
    try:
        return unmasked_array(data, what, MASKED_COSTS)  # np.ma.masked deep in nested lists too
    except InputError:
        raise
    except (ValueError, TypeError) as e:  # ragged nested lists, objects numpy cannot read
        raise InputError(f"{what} cannot be read as an array of numbers ({e})") from None


# ---------------------------------------------------------------------------------------------
# validation and packing

def _dtype_words(dtype: np.dtype) -> str:
    from ..text import dtype_words
    return dtype_words(dtype)


def _check_dtype(a: np.ndarray, where: str) -> None:
    if a.size and a.dtype.kind not in "iuf":
        raise InputError(f"{where}: costs must be real numbers, got {_dtype_words(a.dtype)}")


def _check_integers(a: np.ndarray, where: str, first_item: int) -> None:
    """Integers beyond +-2^53 are refused: float64 would round them (judged before conversion)."""
    if a.size == 0 or a.dtype.kind not in "iu" or a.dtype.itemsize < 8:
        return
    too_big = (a > EXACT_INTEGER) if a.dtype.kind == "u" else (a > EXACT_INTEGER) | (a < -EXACT_INTEGER)
    if too_big.any():
        at = tuple(int(i) for i in np.argwhere(too_big)[0])
        item = first_item + at[0] if a.ndim == 3 else first_item
        pos = at[1:] if a.ndim == 3 else at
        raise InputError(f"item {item}: integer cost {int(a[at])} at row {pos[0]}, column {pos[1]} cannot be held "
                         f"exactly in float64: integer costs must stay within +-2^53 ({EXACT_INTEGER})")


PARALLEL_GATHER = 1 << 22  # entries of a ragged batch from which its items are copied on all cores


def _float_dtype(dtypes) -> np.dtype:
    return np.dtype(np.float32) if dtypes and all(d == np.float32 for d in dtypes) else np.dtype(np.float64)


def _oriented_flat(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The entries of one 2-D item (or a (B, n, m) stack), rows <= cols, row-major, as ``dtype``;
    a view when nothing needs changing."""
    if a.shape[-2] > a.shape[-1]:
        a = np.swapaxes(a, -1, -2)
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _gathered(arrays: list, dtype: np.dtype) -> np.ndarray:
    """The items' oriented entries (see _oriented_flat) in one flat array, each item copied once.
    From PARALLEL_GATHER entries on, groups of items are copied at once on numba's threads (numpy
    lets go of the GIL while it copies): one thread's concatenate was most of a large ragged
    batch's packing."""
    oriented = [np.swapaxes(a, -1, -2) if a.shape[-2] > a.shape[-1] else a for a in arrays]
    starts = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=starts[1:])
    flat = np.empty(int(starts[-1]), dtype=dtype)

    def copy(items) -> None:
        for b in items:
            np.copyto(flat[starts[b]:starts[b + 1]].reshape(oriented[b].shape), oriented[b], casting="unsafe")
    from numba import get_num_threads
    threads = get_num_threads()
    if flat.size < PARALLEL_GATHER or threads < 2:
        copy(range(len(arrays)))
        return flat
    groups: list = [[] for _ in range(threads)]
    loads = np.zeros(threads)
    for b in np.argsort(-np.diff(starts), kind="stable"):  # largest first, each to the least loaded group
        k = int(np.argmin(loads))
        groups[k].append(int(b))
        loads[k] += starts[b + 1] - starts[b]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(copy, groups))
    return flat


def _packed(flat: np.ndarray, shapes: np.ndarray) -> PackedBatch:
    transposed = shapes[:, 0] > shapes[:, 1]
    rows = np.minimum(shapes[:, 0], shapes[:, 1]).astype(np.int64)
    cols = np.maximum(shapes[:, 0], shapes[:, 1]).astype(np.int64)

    def prefix(x):
        out = np.zeros(x.size + 1, dtype=np.int64)
        np.cumsum(x, out=out[1:])
        return out
    return PackedBatch(flat, prefix(rows * cols), rows, cols, transposed, prefix(rows), prefix(cols))


def _check_regular_sizes(b: int, n: int, m: int, itemsize: int) -> None:
    """_check_sizes for B items of n x m, from the three numbers alone."""
    entries = b * n * m
    check_allocation(entries * itemsize, "the batch's costs")
    _check_empty_lines(b * (n + m), entries, f" (item 0 is {n:,} x {m:,})" if b and not n * m else "")


def _check_empty_lines(lines: int, entries: int, which: str) -> None:
    if lines > 2 * entries + EMPTY_ALLOWANCE:
        raise InputError(f"the batch declares {lines:,} rows and columns but holds only {entries:,} costs{which}; "
                         f"more than {EMPTY_ALLOWANCE:,} rows and columns with no costs are refused")


def _check_sizes(shapes: np.ndarray, itemsize: int) -> None:
    """Memory follows the data present: entries need memory anyway (refused past half of physical
    memory), and the rows and columns of empty items, which hold nothing, are bounded."""
    entries = int((shapes[:, 0] * shapes[:, 1]).sum()) if shapes.size else 0
    check_allocation(entries * itemsize, "the batch's costs")
    lines = int(shapes.sum()) if shapes.size else 0
    if lines > 2 * entries + EMPTY_ALLOWANCE:
        empty = np.flatnonzero((shapes[:, 0] == 0) | (shapes[:, 1] == 0)) if shapes.size else []
        which = f" (item {int(empty[0])} is {shapes[empty[0], 0]:,} x {shapes[empty[0], 1]:,})" if len(empty) else ""
        _check_empty_lines(lines, entries, which)


def check_batch_shape(costs) -> None:
    """The checks of prepare_batch that read no cost (dimensions, types, sizes against memory), for a
    caller that does work before solving (a command line compiling the solver): bad input is refused
    first, in one line, with nothing done."""
    if isinstance(costs, (list, tuple)):
        shapes, itemsize = [], 4
        for b, item in enumerate(costs):
            a = host_array(item, f"item {b}")
            if a.ndim != 2:
                raise InputError(f"item {b} must be a 2-D matrix, got an array of shape {a.shape}")
            _check_dtype(a, f"item {b}")
            shapes.append(a.shape)
            itemsize = max(itemsize, _float_dtype([a.dtype]).itemsize)
        _check_sizes(np.array(shapes, dtype=np.int64).reshape(-1, 2), itemsize)
        return
    a = host_array(costs)
    if a.ndim != 3:
        raise InputError(f"a batch must be a 3-D array (problems x rows x columns) or a list of 2-D matrices, "
                         f"got an array of shape {a.shape}")
    _check_dtype(a, "the batch")
    _check_regular_sizes(*a.shape, _float_dtype([a.dtype]).itemsize)


def prepare_batch(costs, scan=None) -> BatchInput:
    """Validate and pack a host batch (see the module docstring); InputError names the bad item.

    ``scan(packed)``, when given, is the validating pass over a packed batch's costs: it returns
    scan.scan_items's four arrays, a copy of the costs it made on the way (a GPU backend uploads
    them in the same pass), kept as the packed batch's ``device_costs``, and the solve it started on
    that copy meanwhile, or None (``solving``); or None, leaving the check to the backend's solve
    (the cpu backend checks each item right before solving it: ``unchecked``)."""
    if isinstance(costs, (list, tuple)):
        return _prepare_ragged(costs, scan)
    if device_input(costs):
        raise InputError("a GPU array was passed where host data was expected")  # api routes these first
    a = host_array(costs)
    if a.ndim != 3:
        raise InputError(f"a batch must be a 3-D array (problems x rows x columns) or a list of 2-D matrices, "
                         f"got an array of shape {a.shape}")
    _check_dtype(a, "the batch")
    b, n, m = a.shape
    dtype = _float_dtype([a.dtype])
    _check_regular_sizes(b, n, m, dtype.itemsize)  # before anything per item is made: B may be huge and empty
    shapes = np.tile(np.array([n, m], dtype=np.int64), (b, 1))
    _check_integers(a, "the batch", 0)
    packed = _checked(_packed(_oriented_flat(a, dtype), shapes), scan)
    return BatchInput(packed, True, shapes, (n, m))


def _prepare_ragged(items, scan=None) -> BatchInput:
    arrays = []
    for b, item in enumerate(items):
        if device_input(item):
            raise InputError(f"item {b} is a GPU array: pass a GPU batch as one 3-D array to the cuda backend")
        a = host_array(item, f"item {b}")
        if a.ndim != 2:
            raise InputError(f"item {b} must be a 2-D matrix, got an array of shape {a.shape}")
        _check_dtype(a, f"item {b}")
        arrays.append(a)
    shapes = np.array([a.shape for a in arrays], dtype=np.int64).reshape(-1, 2)
    dtype = _float_dtype([a.dtype for a in arrays])
    _check_sizes(shapes, dtype.itemsize)
    for b, a in enumerate(arrays):
        _check_integers(a, f"item {b}", b)
    packed = _checked(_packed(_gathered(arrays, dtype), shapes), scan)
    return BatchInput(packed, False, shapes)


def _checked(packed: PackedBatch, scan=None) -> PackedBatch:
    """One compiled pass over the costs, on all cores (``scan``, or scan.scan_items): NaN, -inf and
    magnitudes whose sums could overflow are refused (refuse_bad_items); the packed batch comes back
    with its items' checksums (and the copy ``scan`` made). ``scan`` returning None leaves the
    check to the backend's solve (``unchecked``)."""
    copy = solving = None
    if scan is None:
        from .scan import scan_items
        bad, where, biggest, checksums = scan_items(packed.costs, packed.offsets)
    else:
        found = scan(packed)
        if found is None:
            return replace(packed, unchecked=True)
        bad, where, biggest, checksums, copy, solving = found
    refuse_bad_items(packed, bad, where, biggest)
    return replace(packed, checksums=checksums, device_costs=copy, solving=solving)


def cost_limits(packed: PackedBatch) -> np.ndarray:
    """Per item, the largest |cost| whose sums cannot overflow float64 (problems.cost_limit)."""
    return FLOAT_MAX / (16.0 * np.maximum(packed.rows + packed.cols, 1))


def refuse_bad_items(packed: PackedBatch, bad: np.ndarray, where: np.ndarray, biggest: np.ndarray) -> None:
    """InputError for the first item holding NaN or -inf (``bad`` 1 or 2, its first such entry at
    ``where`` in the packed item), naming its row and column in the item's own orientation; else
    for the first whose largest finite |cost| (``biggest``) could overflow float64 sums."""
    found = np.flatnonzero(bad)
    if found.size:
        b = int(found[0])
        k = int(where[b])
        i, j = divmod(k, int(packed.cols[b]))
        if packed.transposed[b]:
            i, j = j, i
        what = "NaN" if bad[b] == 1 else "-inf"
        raise InputError(f"item {b}: the cost at row {i}, column {j} (0-based) is {what} (use +inf to forbid a pair)")
    limits = cost_limits(packed)
    over = np.flatnonzero(biggest > limits)
    if over.size:
        b = int(over[0])
        raise InputError(f"item {b}: costs up to {biggest[b]:.3g} can overflow float64 sums in a problem of its "
                         f"size: keep |cost| at or below {limits[b]:.3g}")
