"""What ``solve_many`` is given, sorted into kinds, and how each kind is cut into tasks.

Kinds:

* ``problem``: one solve (a Problem, a cost matrix, a sparse matrix, a networkx graph, or a path
  that reads as one of those); the file is read where the task runs, so a worker needs to see it.
* ``batch``: many assignment problems (a 3-D array, a ``Batch`` of matrices, or a batch file: a
  3-D .npy or an .npz of matrices), cut into chunks of many items, each one ``solve_batch`` call.
* ``series``: a PointSeries (or a file that reads as points), cut into runs of consecutive frame
  pairs; run k ends on the frame where run k+1 starts, so the runs' links join into the tracks of
  the whole series (solvers.scale_out.stitch).

Batch and series files are read here, on the calling machine, since they must be cut up before
anything is sent out; the chunks travel with the tasks.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..problems import PointSeries

TASKS_PER_WORKER = 4    # chunks per worker: enough to balance uneven chunks, few enough to keep overheads small
MIN_BATCH_CHUNK = 64    # items per batch chunk at least: one task should outweigh its scheduling (~1 ms)
MIN_SERIES_RUN = 4      # frame pairs per series run at least
# a GPU batch kernel runs one block per item: a chunk of 125 items of 512 x 512 left the SMs of an
# H200 idle (0.43 s per 1000 items against 0.28 s in chunks of 1000), so GPU chunks hold this many
# items, or as many as fit GPU_BATCH_CHUNK_BYTES when the items are large
GPU_BATCH_CHUNK = 1024
GPU_BATCH_CHUNK_BYTES = 1 << 30


@dataclass(frozen=True)
class Batch:
    """Marks a list of 2-D cost matrices as one batch item (a 3-D array is one already)."""
    costs: object


@dataclass
class Item:
    """One entry of the input: its position, what to call it in reports, its kind and data; a
    file that could not be read for cutting up has ``error`` (its row reports it)."""
    index: int
    label: str
    kind: str  # "problem" | "batch" | "series"
    data: object = None
    error: str | None = None


def label_of(index: int, data) -> str:
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else f"item {index}"


def classify(index: int, data, algorithm: str | None) -> Item:
    """The Item for one input, reading batch and series files here (see the module docstring)."""
    label = label_of(index, data)
    if isinstance(data, PointSeries):
        return Item(index, label, "series", data)
    if isinstance(data, Batch):
        return Item(index, label, "batch", data.costs)
    if isinstance(data, np.ndarray) and data.ndim == 3:
        return Item(index, label, "batch", data)
    if type(data).__name__ == "AssignmentBatch":  # solvers.load's dataset of a batch file: cut up by items
        return Item(index, label, "batch", [data.item_costs(b) for b in range(len(data))])
    if isinstance(data, (str, os.PathLike)):
        try:
            return _classify_path(index, label, data, algorithm)
        except InputError as exc:
            return Item(index, label, "problem", data, error=str(exc))
    return Item(index, label, "problem", data)


@dataclass(frozen=True)
class NpySlices:
    """Items [start, stop) of a 3-D .npy batch file, read where the task runs (memory-mapped, so a
    worker reads only its chunk's bytes): a big batch file is cut up without being sent whole."""
    path: str
    start: int
    stop: int
    item_bytes: int = 0

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, part: slice) -> "NpySlices":
        first, last, _ = part.indices(len(self))
        return NpySlices(self.path, self.start + first, self.start + max(first, last), self.item_bytes)

    def read(self) -> np.ndarray:
        return np.ascontiguousarray(np.load(self.path, mmap_mode="r", allow_pickle=False)[self.start:self.stop])


def _npy_batch(path):
    """An NpySlices of every item of a plain (not gzipped, C-ordered) 3-D .npy batch, else None."""
    from ..formats._npy import check_data_size, read_header
    from ..formats._text import close_binary, open_binary
    if not str(path).lower().endswith(".npy"):
        return None
    fh = open_binary(path)
    try:
        shape, fortran, dtype = read_header(fh, path, "cost batch")
        # the workers map the file: a truncated or padded one is refused here, in the reader's words
        check_data_size(os.stat(path).st_size - fh.tell(), shape, dtype, path, "cost batch")
    finally:
        close_binary(fh)
    item_bytes = int(np.dtype(dtype).itemsize * math.prod(shape[1:]))
    return None if fortran else NpySlices(os.fspath(path), 0, shape[0], item_bytes)


def _classify_path(index: int, label: str, path, algorithm: str | None) -> Item:
    from ..formats import readings, reading_for
    from ..formats.batch import batch_layout, read_batch
    if batch_layout(path):
        return Item(index, label, "batch", _npy_batch(path) or read_batch(path))
    kinds = readings(path)
    reading = reading_for(path, algorithm) or (kinds[0] if kinds else None)
    if reading == "points":
        from ..formats import load
        return Item(index, label, "series", load(path, problem="points"))
    return Item(index, label, "problem", path)


def chunk_size(total: int, workers: int, least: int) -> int:
    """Pieces per task: about TASKS_PER_WORKER tasks per worker, at least ``least`` each. One
    worker (a run in this process) takes everything in one task."""
    if workers <= 1:
        return max(total, 1)
    return max(least, math.ceil(total / (workers * TASKS_PER_WORKER)))


def item_bytes(costs) -> int:
    """The bytes of one item of a batch (the largest, for a list of matrices)."""
    if isinstance(costs, NpySlices):
        return costs.item_bytes
    if isinstance(costs, np.ndarray):
        return int(costs.itemsize * math.prod(costs.shape[1:]))
    return max((int(getattr(c, "nbytes", 0)) for c in costs), default=0)


def batch_chunks(costs, workers: int, gpu: bool = False) -> list[tuple[int, object]]:
    """(first item, chunk) pieces of a batch, in order; ``gpu``: the workers solve on GPUs, so
    each chunk must be large enough to fill one."""
    count = len(costs)
    least = MIN_BATCH_CHUNK
    if gpu:
        least = max(least, min(GPU_BATCH_CHUNK, GPU_BATCH_CHUNK_BYTES // max(1, item_bytes(costs))))
    size = chunk_size(count, workers, least)
    return [(start, costs[start:start + size]) for start in range(0, count, size)] or [(0, costs)]


def series_runs(n_pairs: int, workers: int) -> list[tuple[int, int]]:
    """[first pair, end pair) runs of a series' frame pairs; run (a, b) needs frames a..b, so
    consecutive runs share one frame."""
    size = chunk_size(n_pairs, workers, MIN_SERIES_RUN)
    return [(start, min(start + size, n_pairs)) for start in range(0, n_pairs, size)]
