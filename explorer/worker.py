"""The worker thread: loads, generates and solves off the GUI thread, one job after another.

A solve's telemetry goes through ``ForwardingObserver``: every IterationStats and Snapshot is
appended to the run's Recorder right there in the worker thread, and the GUI thread is only
*notified* (a queued Qt signal, at most ~60 per second), so a solver emitting 10^5 iterations per
second cannot flood the event loop; the GUI reads the Recorder when it redraws. Cancellation is a
``threading.Event`` the observer's ``should_stop`` returns, so the solver raises Cancelled at its
next telemetry call or Stop check. Before the first timed run of a compiled algorithm the worker
runs it once untimed on a tiny problem (solvers.warmup, as the command line does), so the run's
time is the algorithm's own.
"""
from __future__ import annotations

import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6 import QtCore

import solvers
from solvers import warmup
from solvers.errors import BackendUnavailable, Cancelled, InfeasibleError, InputError
from solvers.telemetry import Observer

log = logging.getLogger("matchscope.explorer")

NOTIFY_INTERVAL = 1.0 / 60.0


@dataclass(eq=False)
class Job:
    """One unit of work. ``kind``: "load", "generate", "run-record", "solve", "track" or "batch"."""

    kind: str
    params: dict = field(default_factory=dict)
    run: Any = None  # the RunState a solve/track job fills
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = 0.0
    stop_requested_at: float | None = None
    cancelled_at: float | None = None  # when the solver actually gave up (worker clock)
    timed_from: float | None = None    # when the timed solve started, after any warm-up (worker clock)
    finished_at: float | None = None   # when the work returned or failed (worker clock): the wall time's end,
    #                                    not when the GUI thread got round to hearing of it
    warmup_seconds: float = 0.0

    def request_stop(self) -> None:
        if not self.cancel.is_set():
            self.stop_requested_at = time.perf_counter()
            self.cancel.set()

    @property
    def title(self) -> str:
        if self.kind in ("solve", "track", "batch"):
            return f"{self.kind} {self.params.get('algorithm')}"
        if self.kind == "generate":
            return f"generate {self.params.get('kind')}"
        return f"{self.kind} {self.params.get('path', '')}"


class ForwardingObserver(Observer):
    """Records into the run's Recorder and pokes the GUI (throttled); stops when the job is cancelled."""

    def __init__(self, run, cancel: threading.Event, notify: Callable[[], None]):
        self.run = run
        self.recorder = run.recorder
        self.cancel = cancel
        self.notify = notify
        self.snapshot_interval = self.recorder.snapshot_interval
        self._next_notify = 0.0

    def _poke(self, force: bool = False) -> None:
        now = time.perf_counter()
        if force or now >= self._next_notify:
            self._next_notify = now + NOTIFY_INTERVAL
            self.notify()

    def on_start(self, info):
        self.recorder.on_start(info)  # where this solve begins (run.solve_starts)
        self._poke(force=True)

    def on_progress(self, done, total, unit):
        """Work of many solves (tracking: "frame pair" k of N, then "gated frame pair" k of M)."""
        self.recorder.on_progress(done, total, unit)  # the unit each next solve belongs to
        self.run.progress = (int(done), int(total), str(unit))
        self._poke(force=True)

    def on_iteration(self, stats):
        self.recorder.iterations.append(stats)
        self._poke()

    def on_snapshot(self, snapshot):
        # the position first: readers take min(len(positions), len(snapshots))
        self.run.snapshot_positions.append(len(self.recorder.iterations))
        self.recorder.snapshots.append(snapshot)
        self._poke()

    def on_finish(self, result):
        self.recorder.on_finish(result)

    def should_stop(self) -> bool:
        return self.cancel.is_set()


def classify(exc: BaseException) -> tuple[str, str]:
    """(category, one-line message) for an exception: "input" errors are the user's, shown as is."""
    if isinstance(exc, Cancelled):
        return "cancelled", "stopped"
    if isinstance(exc, (InputError, InfeasibleError, BackendUnavailable)):
        return "input", str(exc)
    if isinstance(exc, MemoryError):
        return "error", "out of memory"
    # a bug of ours: said plainly; the traceback goes to the log (Worker.execute)
    return "error", f"internal error: {str(exc) or 'no message'} (the log has the details)"


class Worker(QtCore.QObject):
    """Lives in the worker thread; ``execute`` runs there (invoked through a queued signal)."""

    jobStarted = QtCore.Signal(object)
    jobWarming = QtCore.Signal(object, str, bool)  # job, what ("preparing gpr for cpu (...)"), first for the pair
    jobTimed = QtCore.Signal(object)         # the timed run starts now (job.timed_from)
    jobProgress = QtCore.Signal(object)
    jobLoadProgress = QtCore.Signal(object, int, int)  # job, bytes read, file size
    jobFinished = QtCore.Signal(object, object)
    jobFailed = QtCore.Signal(object, str, str)  # job, category ("input"/"error"/"cancelled"), message

    def __init__(self, parent=None):
        super().__init__(parent)
        self.warmed: set[tuple] = set()  # warm-up keys done in this session

    @QtCore.Slot(object)
    def execute(self, job: Job) -> None:
        if job.cancel.is_set():
            self.jobFailed.emit(job, "cancelled", "cancelled before it started")
            return
        job.started = time.perf_counter()
        self.jobStarted.emit(job)
        try:
            payload = self._perform(job)
        except Exception as exc:  # every failure becomes a message; the worker must survive it
            job.finished_at = time.perf_counter()
            category, message = classify(exc)
            if category == "cancelled":
                job.cancelled_at = time.perf_counter()
            elif category == "error":
                log.error("%s failed:\n%s", job.title, traceback.format_exc())
            self.jobFailed.emit(job, category, message)
            return
        job.finished_at = time.perf_counter()
        if job.cancel.is_set() and job.kind in ("solve", "track", "batch"):
            job.cancelled_at = time.perf_counter()
            self.jobFailed.emit(job, "cancelled", "stopped; the result that arrived afterwards was discarded")
            return
        self.jobFinished.emit(job, payload)

    def _perform(self, job: Job):
        p = job.params
        if job.kind == "load":
            from solvers.formats import read_progress
            with read_progress(self._load_reporter(job)):
                loaded = solvers.load(p["path"], problem=p.get("problem"))
            # the explorer keeps what it loaded while the file may be rewritten: never through a mapping
            return loaded.in_memory() if hasattr(loaded, "in_memory") else loaded
        if job.kind == "run-record":
            return solvers.RunRecord.load(p["path"])
        if job.kind == "generate":
            return solvers.generate(p["kind"], **p.get("params", {}))
        if job.kind == "batch":  # every problem at once, in one call: no telemetry, no Stop midway
            self._warm_up_batch(job)
            job.timed_from = time.perf_counter()
            self.jobTimed.emit(job)
            return solvers.solve_batch(p["problem"], algorithm=p["algorithm"], backend=p["backend"])
        if job.kind in ("solve", "track"):
            self._warm_up(job)
            job.timed_from = time.perf_counter()
            self.jobTimed.emit(job)
            observer = ForwardingObserver(job.run, job.cancel, lambda: self.jobProgress.emit(job))
            if job.kind == "track":
                return solvers.track(p["problem"], algorithm=p["algorithm"], backend=p["backend"],
                                     observer=observer, **p.get("options", {}))
            return solvers.solve(p["problem"], p["algorithm"], backend=p["backend"], observer=observer,
                                 **p.get("options", {}))
        raise ValueError(f"unknown job kind {job.kind!r}")

    def _load_reporter(self, job: Job) -> Callable[[int, int], None]:
        """A read_progress callback that tells the GUI at most ~60 times a second how far the load is."""
        due = [0.0]

        def report(done: int, total: int) -> None:
            now = time.perf_counter()
            if now >= due[0] or done >= total:
                due[0] = now + NOTIFY_INTERVAL
                self.jobLoadProgress.emit(job, int(done), int(total))
        return report

    def _warm_up_batch(self, job: Job) -> None:
        """Compile (or load) the batch backend once per backend and kind of costs (float type, read-only or
        not), on a one-problem batch."""
        from solvers.batch.api import resolve_backend
        p = job.params
        backend = resolve_backend(p["backend"])
        kind = warmup.batch_kind(p["problem"])
        key = ("batch", p["algorithm"], backend, kind)
        if key in self.warmed:
            return
        self.jobWarming.emit(job, f"preparing batch {p['algorithm']} for {backend} (compiling or loading its kernels)",
                             True)
        started = time.perf_counter()
        warmup.warm_batch(kind, backend, p["algorithm"])
        job.warmup_seconds = time.perf_counter() - started
        self.warmed.add(key)

    def _warm_up(self, job: Job) -> None:
        """Once per warm-up key in this session; Stop cancels it like the run (Cancelled propagates)."""
        p = job.params
        backend = warmup.resolved_backend(p["algorithm"], p["backend"])
        if backend is None or not warmup.wants_warmup(p["algorithm"], backend):
            return
        options = dict(p.get("options", {}))
        key = warmup.warmup_key(p["problem"], p["algorithm"], backend, options)
        if key in self.warmed:
            return
        first = not any(k[:2] == key[:2] for k in self.warmed)  # later ones: other sizes / options, mostly quick
        self.jobWarming.emit(job, f"preparing {p['algorithm']} for {backend} (compiling or loading its kernels)", first)
        # every snapshot (interval 0), so the snapshot code paths the run takes are compiled too
        job.warmup_seconds = warmup.warm_up(p["problem"], p["algorithm"], backend, options,
                                            track=job.kind == "track", snapshot_interval=0.0,
                                            should_stop=job.cancel.is_set)
        self.warmed.add(key)


class WorkerHost(QtCore.QObject):
    """Owns the worker thread; ``submit`` queues a job, ``shutdown`` stops everything."""

    _dispatch = QtCore.Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.thread = QtCore.QThread()
        self.thread.setObjectName("matchscope-worker")
        self.worker = Worker()
        self.worker.moveToThread(self.thread)
        self._dispatch.connect(self.worker.execute, QtCore.Qt.ConnectionType.QueuedConnection)
        self.pending: list[Job] = []
        self.worker.jobFinished.connect(self._done)
        self.worker.jobFailed.connect(self._done)
        self.thread.start()

    def submit(self, job: Job) -> Job:
        self.pending.append(job)
        self._dispatch.emit(job)
        return job

    def _done(self, job, *rest) -> None:
        if job in self.pending:
            self.pending.remove(job)

    @property
    def busy(self) -> bool:
        return bool(self.pending)

    def cancel_all(self) -> None:
        for job in list(self.pending):
            job.request_stop()

    def shutdown(self, wait_ms: int = 3000) -> bool:
        """Cancel every job and stop the thread; False if a solver that cannot be interrupted is still busy."""
        self.cancel_all()
        self.thread.quit()
        return self.thread.wait(wait_ms)
