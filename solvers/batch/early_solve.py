"""Solving a host batch on the GPU while it is still going up.

From host costs a batch goes to the GPU in chunks (``targets.staged_upload``): all cores check a
chunk while copying it into a pinned buffer, and its copy to the device runs while the next chunk is
checked. ``SolveAsItArrives`` starts the solver on the items that the chunks sent so far hold whole
(in at most LAUNCHES launches), on streams of its own that wait for the copies queued before, so the
solve runs beside the host's pass instead of after it: what is left when the last chunk is up is
the last launch's items.

Only a regular batch (every item of one shape) starts early. A ragged one started early was slower
in every measurement on an H200 (91.8 against 88.7 ms for 1000 items of n 10..500): its launches
come in pairs (the warp kernel's items and the block kernel's), and its largest items leave a long
tail anyway.

An item is launched only once the pass found it clean (no NaN or -inf, magnitudes whose sums cannot
overflow): a batch that will be refused launches nothing from its first bad item on, and ``wait()``
lets the launched kernels finish before the refusal frees the arrays they write.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from .device import SolvePlan
from .inputs import cost_limits

STREAMS = 4  # solve streams, taken in turn by the launches (one launch's kernels need not wait for the last's)
# launches per batch at most: numba's launch of the solver is about a third of a millisecond of Python,
# which stalls the checking pass (a launch per 32 MB chunk took 2.3 of 31 ms at 1000 x 256 x 256 on an
# H200; issuing them from another thread cost more, in the pass's waits for the GIL), while what is
# left after the last chunk is the latency of that launch's items, however few
LAUNCHES = 4
_local = threading.local()  # each thread's solve streams: another thread's kernels are not waited for


def _solve_streams(launcher) -> list:
    if launcher.simulated:
        return [None] * STREAMS  # the simulator runs each launch to its end
    if not hasattr(_local, "streams"):
        from numba import cuda
        _local.streams = [cuda.stream() for _ in range(STREAMS)]
    return _local.streams


class SolveAsItArrives:
    """The solver's launches for ``packed`` (a checked batch's layout, its costs still on the host),
    driven by the upload: ``sent`` after each chunk's copy is queued, ``finish`` once every chunk
    is. ``scan`` is the validating pass's ``scan.ItemScan``, filled chunk by chunk before ``sent``."""

    def __init__(self, launcher, packed, scan):
        self.launcher = launcher
        self.plan = SolvePlan(launcher, packed.offsets, packed.rows, packed.cols, packed.row_offsets,
                              packed.col_offsets)
        self.offsets = np.asarray(packed.offsets, dtype=np.int64)
        self.limits = cost_limits(packed)
        self.scan = scan
        self.streams = _solve_streams(launcher)
        self.copy_streams: dict = {}  # the streams the chunks' copies were queued on
        self.launched = 0        # items [0, launched) are started
        self.launches = 0
        rows, cols = np.asarray(packed.rows), np.asarray(packed.cols)
        regular = rows.size == 0 or (np.all(rows == rows[0]) and np.all(cols == cols[0]))
        self.stopped = not regular  # True: nothing (more) is started before ``finish``
        self.finished = False
        self.first_launch_at = None  # perf_counter at the first launch: the solve's own time starts there

    def sent(self, first: int, last: int, device, stream) -> None:
        """Entries ``[first, last)`` of the costs are queued on ``stream`` for ``device`` (the whole
        batch's device array): start the items they complete."""
        self.copy_streams[id(stream)] = stream
        if self.stopped:  # a bad item was found, or the batch is ragged
            return
        whole = int(np.searchsorted(self.offsets[1:], last, side="right"))  # items ending at or before ``last``
        if whole <= self.launched:
            return
        if whole - self.launched < -(-self.plan.batch // LAUNCHES) and last < self.offsets[-1]:
            return  # too few items yet for a launch of their own
        new = slice(self.launched, whole)
        clean = (self.scan.bits[new] == 0) & (self.scan.top_bits[new].view(np.float64) <= self.limits[new])
        if not clean.all():
            whole = self.launched + int(np.argmin(clean))  # up to the first bad item
            self.stopped = True
            if whole == self.launched:
                return
        solve_stream = self.streams[self.launches % len(self.streams)]
        if solve_stream is not None:  # after every copy queued so far (each copy stream runs in order)
            from numba import cuda
            for copy_stream in self.copy_streams.values():
                event = cuda.event(timing=False)
                event.record(copy_stream)
                event.wait(solve_stream)
        if self.first_launch_at is None:
            self.first_launch_at = time.perf_counter()
        self.plan.launch(device, self.launched, whole, solve_stream)
        self.launched = whole
        self.launches += 1

    def wait(self) -> None:
        """Until every launched kernel has finished (nothing to wait for when none was launched)."""
        if not self.launches:
            return
        for stream in self.streams:
            if stream is not None:
                stream.synchronize()

    def finish(self, costs):
        """The solution's device arrays once every item is started (those no chunk completed, as
        from a batch too small to be sent in chunks, start now); the kernels may still run (a
        readback waits for them)."""
        self.finished = True
        self.wait()  # a default-stream launch below must not overtake the chunks' kernels
        if self.launched < self.plan.batch:
            self.plan.launch(costs, self.launched, self.plan.batch)
            self.launched = self.plan.batch
        return self.plan.solution()
