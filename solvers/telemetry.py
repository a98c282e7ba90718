"""Telemetry: the stream a solver emits and the explorer draws.

Solver side: a host loop gets a ``Telemetry`` from ``Telemetry.attach(observer, info)``. With no
observer it is the shared ``NULL`` object whose ``enabled`` is False, and a solver guards every
emission with ``if tel.enabled`` (scalars) or ``if tel.snapshot_due(kind)`` (heavy arrays), so
nobody listening costs one attribute read per loop. Heavy snapshots are throttled per kind (gaps
growing from 1/1024 of the observer's interval to the interval, and at least twice what the
last one cost), and a solver ends with a snapshot of its end state (``snapshot_due(kind,
final=True)``), so a replay shows where the run finished. Long host steps between two reports
call ``tel.check_cancel()``, so Stop lands quickly. Emit only what the host loop already has: a
GPU loop reports the counters it reads back anyway, never an extra device sync for telemetry.

Listener side: an ``Observer`` receives RunInfo, IterationStats, Snapshots and the Result, and,
from work made of many solves (``solvers.track``: one per frame pair), ``on_progress(done, total,
unit)``: ``done`` of ``total`` units finished ("frame pair", "gated frame pair"), called before each
unit's solve and once more with ``done == total`` at the end.
``Recorder`` keeps everything and turns it into a ``RunRecord`` that saves to / loads from one
``.npz`` file (arrays + a JSON header; no pickle) for replay and export. Of work made of many
solves it also keeps where each solve began (``SolveStart``: the report it starts at and the unit
of work on_progress last named), so a replay can tell the solves apart without guessing.

Snapshot kinds and their data keys (the explorer relies on these):
  "labels"   per side S in {"rows","cols","vertices","persons","objects"}:
             "S.hist_edges", "S.hist_counts" (histogram of finite labels), "S.sample_index",
             "S.sample" (label values of a fixed sample of vertices); meta: label (e.g. "psi",
             "height", "price", "dual"), "S.unreachable" (count of labels at/over the cap).
  "workload" "modelled": work per warp for one launch (edges scanned + pushes/relabels, the WBPR
             paper's Eq. 1 / the G-PR cost model); optional "cycles": measured clock64 cycles per
             warp; meta: launch, kernel, mode.
  "paths"    "lengths": augmenting path lengths found in this iteration.
IterationStats.phase names the step ("push", "global-relabel", "bid", "augment", "dual-update",
...); views mark non-default phases as events. ``extra`` holds small scalars (max_level, epsilon,
dual_objective, unassigned, excess_total, ...).
"""
from __future__ import annotations

import io
import json
import math
import time
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from .errors import Cancelled, InputError
from .io_util import atomic_write_bytes, jsonable

SAMPLE_SIZE = 256
HIST_BINS = 64


@dataclass(frozen=True)
class RunInfo:
    algorithm: str
    backend: str
    problem_kind: str
    problem: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""  # what "labels" snapshots hold: "psi", "height", "dual", "price"


@dataclass(frozen=True)
class IterationStats:
    iteration: int
    elapsed: float
    phase: str
    active: int = -1
    value: float = math.nan
    extra: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Snapshot:
    iteration: int
    elapsed: float
    kind: str
    data: Mapping[str, np.ndarray]
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SolveStart:
    """Where one solve of a run began. ``position``: the reports recorded before it (the index of its
    first report). The unit of work it belongs to, as ``Observer.on_progress`` last named it (empty
    for a run that never called it): ``unit`` ("frame pair", "gated frame pair"), ``index`` (the unit
    being solved is number index + 1 of ``total``) and ``sweep``, the passes over units begun before
    its own (solvers.track: 0 for the pass over every frame pair, then one per round of its automatic
    gate). ``item``: which unit it is (a frame pair's number) where whoever keeps the record can tell;
    the Recorder leaves it None (a gate round's k-th pair is not the series' k-th)."""

    position: int
    unit: str = ""
    index: int = -1
    total: int = 0
    sweep: int = 0
    item: int | None = None


class Observer:
    """Base listener: override what you need. ``should_stop`` is polled by the solver loop."""

    snapshot_interval: float = 0.05  # seconds between heavy snapshots of one kind

    def on_start(self, info: RunInfo) -> None: ...

    def on_iteration(self, stats: IterationStats) -> None: ...

    def on_snapshot(self, snapshot: Snapshot) -> None: ...

    def on_finish(self, result) -> None: ...

    def on_progress(self, done: int, total: int, unit: str) -> None:
        """Work of many solves: ``done`` of ``total`` units are finished (``unit`` is singular: "frame
        pair"). Called before each unit starts (done = 0 .. total - 1: the one starting is number
        done + 1) and once with done == total when all are. A single solve does not call it."""

    def should_stop(self) -> bool:
        return False


class Tee(Observer):
    """Forwards to several observers; stops when any asks to; snapshots as often as the most eager."""

    def __init__(self, *observers: Observer):
        self.observers = [o for o in observers if o is not None]
        self.snapshot_interval = min((o.snapshot_interval for o in self.observers), default=0.05)

    def on_start(self, info):
        for o in self.observers:
            o.on_start(info)

    def on_iteration(self, stats):
        for o in self.observers:
            o.on_iteration(stats)

    def on_snapshot(self, snapshot):
        for o in self.observers:
            o.on_snapshot(snapshot)

    def on_finish(self, result):
        for o in self.observers:
            o.on_finish(result)

    def on_progress(self, done, total, unit):
        for o in self.observers:
            o.on_progress(done, total, unit)

    def should_stop(self):
        return any(o.should_stop() for o in self.observers)


class Throttle:
    """True at most once per ``interval`` seconds, the first call always. The gaps start at
    ``interval * start`` and double up to ``interval`` (about 11 snapshots in the first two
    intervals instead of 2), so a run of a millisecond still gets several snapshots while a long
    one is held to one per ``interval``. ``spent(seconds)``: what the snapshot just granted cost
    to take; the next waits at least ``ratio`` times that, so expensive ones (a large graph's
    labels) take at most a third of the run, at its start too. ``interval`` 0 asks for every
    snapshot: every call is due, whatever the snapshots cost."""

    def __init__(self, interval: float, start: float = 1.0 / 1024, ratio: float = 2.0):
        self.interval = interval
        self.ratio = ratio
        self._gap = interval * start
        self._next = -math.inf

    def ready(self) -> bool:
        now = time.perf_counter()
        if now >= self._next:
            self._next = now + self._gap
            self._gap = min(2.0 * self._gap, self.interval)
            return True
        return False

    def spent(self, seconds: float) -> None:
        if self.interval > 0:
            self._next = max(self._next, time.perf_counter() + self.ratio * seconds)


class Pacer:
    """How many steps (loops, BFS levels) one host call may take while someone listens, so that it
    lasts about ``seconds`` and Stop is answered between calls: cut in proportion after a slower
    call, doubled after a much quicker one. ``size`` is ``limit`` when off (nobody to answer)."""

    def __init__(self, on: bool, start: int, limit: int, seconds: float = 0.025):
        self.on, self.limit, self.seconds = on, limit, seconds
        self.size = min(start, limit) if on else limit
        self._t0 = 0.0

    def start(self) -> None:
        if self.on:
            self._t0 = time.perf_counter()

    def stop(self, used: int) -> None:
        """After a call given ``used`` steps (fewer than ``size`` when something else capped it)."""
        if not self.on:
            return
        took = time.perf_counter() - self._t0
        if took > self.seconds:  # in proportion: a call's fixed cost keeps this from overshooting
            self.size = max(1, min(self.size, int(used * self.seconds / took)))
        elif took < self.seconds / 4 and used >= self.size:
            self.size = min(2 * self.size, self.limit)


class Budget:
    """Keeps an optional telemetry cost (e.g. a count over every vertex at each readback) below
    about 1 / (1 + ratio) of the run: after a cost of c seconds, the next is due ratio * c later.
    Costs under ``free`` seconds are always due (a small problem reports every iteration)."""

    def __init__(self, ratio: float = 4.0, free: float = 2e-4):
        self.ratio, self.free = ratio, free
        self._next = -math.inf
        self._t0 = 0.0

    def due(self) -> bool:
        return time.perf_counter() >= self._next

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self) -> None:
        now = time.perf_counter()
        cost = now - self._t0
        self._next = now + self.ratio * cost if cost > self.free else -math.inf


_SHARED_THROTTLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def shared_throttles(observer) -> dict:
    """The snapshot throttles of ``observer``, shared by every solve it watches: a tracking run is
    many short solves under one observer, and a throttle started afresh at each solve took about
    seven snapshots of each (109 for the bundled particles, half the run's telemetry cost). An
    observer that cannot be referenced weakly gets throttles per solve, as before."""
    try:
        return _SHARED_THROTTLES.setdefault(observer, {})
    except TypeError:
        return {}


class Telemetry:
    """The solver's handle on an observer. Use ``Telemetry.attach``; never construct with None."""

    enabled = True

    def __init__(self, observer: Observer, info: RunInfo):
        self.observer = observer
        self.info = info
        self.start = time.perf_counter()
        self._throttles: dict[str, Throttle] = shared_throttles(observer)
        self._granted: dict[str, float] = {}
        # an observer with an infinite interval (the CLI's progress line) takes scalars only
        self.wants_snapshots = math.isfinite(observer.snapshot_interval)
        observer.on_start(info)

    @staticmethod
    def attach(observer: Observer | None, info: RunInfo) -> "Telemetry":
        return NULL if observer is None else Telemetry(observer, info)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def iteration(self, iteration: int, phase: str, active: int = -1, value: float = math.nan,
                  **extra: float) -> None:
        """Report one loop's scalars; raises Cancelled when the observer asks to stop."""
        self.observer.on_iteration(IterationStats(int(iteration), self.elapsed(), phase, int(active),
                                                  float(value), extra))
        if self.observer.should_stop():
            raise Cancelled("stopped by the observer")

    def snapshot_due(self, kind: str, final: bool = False) -> bool:
        """Whether to take a heavy snapshot of ``kind`` now (throttled per kind). ``final=True`` asks
        for the run's end state: due whenever someone listening wants snapshots. A solver takes one
        final snapshot of each kind it reports unless its last regular one already shows the end state."""
        if not self.wants_snapshots:
            return False
        if final:
            return True
        throttle = self._throttles.get(kind)
        if throttle is None:
            throttle = self._throttles[kind] = Throttle(self.observer.snapshot_interval)
        if throttle.ready():
            self._granted[kind] = time.perf_counter()  # its cost: from here to its delivery
            return True
        return False

    def snapshot(self, iteration: int, kind: str, data: Mapping[str, np.ndarray], **meta) -> None:
        """Deliver a heavy snapshot; raises Cancelled when the observer asks to stop (building one
        can take milliseconds)."""
        self.observer.on_snapshot(Snapshot(int(iteration), self.elapsed(), kind, dict(data), meta))
        granted = self._granted.pop(kind, None)
        if granted is not None:
            self._throttles[kind].spent(time.perf_counter() - granted)
        self.check_cancel()

    def labels(self, iteration: int, cap: float | None = None, **sides: np.ndarray) -> None:
        """A "labels" snapshot from full per-vertex label arrays (host copies), e.g. rows=psi_r."""
        import numpy as np
        data, meta = {}, {"label": self.info.label}
        for side, values in sides.items():
            values = np.asarray(values)
            finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
            if cap is not None:
                meta[f"{side}.unreachable"] = int(np.count_nonzero(finite >= cap))
                finite = finite[finite < cap]
            counts, edges = label_histogram(finite)
            index = sample_indices(values.size)
            data[f"{side}.hist_edges"] = edges
            data[f"{side}.hist_counts"] = counts
            data[f"{side}.sample_index"] = index
            data[f"{side}.sample"] = values[index]
        self.snapshot(iteration, "labels", data, **meta)

    def workload(self, iteration: int, modelled: np.ndarray, cycles: np.ndarray | None = None,
                 **meta) -> None:
        import numpy as np
        data = {"modelled": np.asarray(modelled, dtype=np.float64)}
        if cycles is not None:
            data["cycles"] = np.asarray(cycles, dtype=np.int64)
        self.snapshot(iteration, "workload", data, **meta)

    def check_cancel(self) -> None:
        """Raise Cancelled if the observer asks to stop: a flag read, for host loops that go long
        between two reports (BFS levels, batches, setup passes)."""
        if self.observer.should_stop():
            raise Cancelled("stopped by the observer")


class _NullTelemetry(Telemetry):
    """No observer: every call is a no-op and ``enabled`` is False."""

    enabled = False
    wants_snapshots = False

    def __init__(self):
        self.observer = None
        self.info = None
        self.start = 0.0

    def iteration(self, *args, **kwargs):
        pass

    def snapshot_due(self, kind, final=False):
        return False

    def snapshot(self, *args, **kwargs):
        pass

    def labels(self, *args, **kwargs):
        pass

    def workload(self, *args, **kwargs):
        pass

    def check_cancel(self):
        pass


NULL = _NullTelemetry()


def label_histogram(values: np.ndarray, bins: int = HIST_BINS) -> tuple[np.ndarray, np.ndarray]:
    """Histogram with unit-width bins for small integer label ranges, else ``bins`` equal bins."""
    import numpy as np
    if values.size == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.float64)
    lo, hi = float(values.min()), float(values.max())
    integral = values.dtype.kind in "iu" or np.all(values == np.round(values))
    if integral and hi - lo < bins:
        edges = np.arange(lo - 0.5, hi + 1.5)
    else:
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)
    counts, edges = np.histogram(values, bins=edges)
    return counts.astype(np.int64), edges.astype(np.float64)


def sample_indices(n: int, size: int = SAMPLE_SIZE) -> np.ndarray:
    """A fixed, evenly spread sample of vertex indices (the same every snapshot, so traces line up)."""
    import numpy as np
    if n <= size:
        return np.arange(n, dtype=np.int64)
    return np.linspace(0, n - 1, size).round().astype(np.int64)


class Recorder(Observer):
    """Keeps a whole run in memory; ``record()`` gives the RunRecord. ``solves``: a SolveStart per
    ``on_start`` (one per solve: solvers.track makes several)."""

    def __init__(self, snapshot_interval: float = 0.05):
        self.snapshot_interval = snapshot_interval
        self.info: RunInfo | None = None
        self.iterations: list[IterationStats] = []
        self.snapshots: list[Snapshot] = []
        self.solves: list[SolveStart] = []
        self.result_summary: dict | None = None
        self._unit = ("", -1, 0)  # (unit, index, total) as on_progress last said
        self._sweep = -1

    def on_start(self, info):
        self.info = info
        unit, index, total = self._unit
        self.solves.append(SolveStart(len(self.iterations), unit, index, total, max(self._sweep, 0)))

    def on_progress(self, done, total, unit):
        if done < total:  # done == total: the pass is over, no unit starts
            if done == 0:
                self._sweep += 1
            self._unit = (str(unit), int(done), int(total))

    def on_iteration(self, stats):
        self.iterations.append(stats)

    def on_snapshot(self, snapshot):
        self.snapshots.append(snapshot)

    def on_finish(self, result):
        self.result_summary = result.summary()

    def record(self) -> "RunRecord":
        return RunRecord(asdict(self.info) if self.info else {}, list(self.iterations),
                         list(self.snapshots), self.result_summary, list(self.solves))


@dataclass
class RunRecord:
    """A recorded run: RunInfo (as a dict), every IterationStats, every Snapshot, the result summary,
    and where each solve began (``solves``, SolveStart; empty in records written before they were kept)."""

    info: dict
    iterations: list
    snapshots: list
    result: dict | None = None
    solves: list = field(default_factory=list)

    FORMAT = "matchscope-run/1"

    def iteration_table(self) -> dict[str, np.ndarray]:
        """Columns: iteration, elapsed, active, value, phase (str array), plus every extra key (NaN where absent)."""
        import numpy as np
        its = self.iterations
        cols = {"iteration": np.array([s.iteration for s in its], np.int64),
                "elapsed": np.array([s.elapsed for s in its], np.float64),
                "active": np.array([s.active for s in its], np.int64),
                "value": np.array([s.value for s in its], np.float64),
                "phase": np.array([s.phase for s in its], dtype=str)}
        keys = sorted({k for s in its for k in s.extra})
        for k in keys:
            cols[f"extra.{k}"] = np.array([float(s.extra.get(k, math.nan)) for s in its], np.float64)
        return cols

    def save(self, path) -> None:
        """One .npz: ``header`` (JSON bytes) + iteration columns + snapshot arrays. Atomic."""
        import numpy as np
        arrays = {f"it.{k}": v for k, v in self.iteration_table().items()}
        snaps = []
        for i, s in enumerate(self.snapshots):
            keys = []
            for k, v in s.data.items():
                arrays[f"snap{i}.{k}"] = np.asarray(v)
                keys.append(k)
            snaps.append({"iteration": s.iteration, "elapsed": s.elapsed, "kind": s.kind,
                          "keys": keys, "meta": jsonable(dict(s.meta))})
        header = {"format": self.FORMAT, "info": jsonable(self.info), "result": jsonable(self.result),
                  "snapshots": snaps, "solves": [jsonable(asdict(s)) for s in self.solves]}
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path) -> "RunRecord":
        import numpy as np
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(bytes(z["header"]).decode())
                if header.get("format") != cls.FORMAT:
                    raise InputError(f"not a matchscope run record (its format is {header.get('format') or 'not named'})",
                                     str(path))
                cols = {k[3:]: z[k] for k in z.files if k.startswith("it.")}
                extras = [k for k in cols if k.startswith("extra.")]
                iterations = []
                for j in range(cols["iteration"].size):
                    extra = {k[6:]: float(cols[k][j]) for k in extras if not math.isnan(cols[k][j])}
                    iterations.append(IterationStats(int(cols["iteration"][j]), float(cols["elapsed"][j]),
                                                     str(cols["phase"][j]), int(cols["active"][j]),
                                                     float(cols["value"][j]), extra))
                snapshots = [Snapshot(s["iteration"], s["elapsed"], s["kind"],
                                      {k: z[f"snap{i}.{k}"] for k in s["keys"]}, s["meta"])
                             for i, s in enumerate(header["snapshots"])]
                solves = [_solve_start(s, path) for s in header.get("solves") or []]
        except InputError:
            raise
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read run record: {exc}", str(path)) from None
        return cls(header["info"], iterations, snapshots, header.get("result"), solves)


def _solve_start(entry, path) -> SolveStart:
    """A SolveStart from a record's header (written by RunRecord.save)."""
    try:
        item = entry.get("item")
        return SolveStart(int(entry["position"]), str(entry.get("unit", "")), int(entry.get("index", -1)),
                          int(entry.get("total", 0)), int(entry.get("sweep", 0)), None if item is None else int(item))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise InputError("cannot read run record: where a solve began is damaged", str(path)) from None
