"""A run on a Dask cluster for the explorer ("Run on cluster…"), off the GUI thread.

``ClusterRun`` owns one Python thread that connects (starts a local cluster, or reaches a
scheduler's address: solvers.scale_out.connect), iterates solvers.scale_out.submit_many's events and
closes what it started. Each event is folded into a ``ClusterState`` right there, under a lock;
the GUI thread is only poked (a Qt signal, queued across threads) at most ``POKE_INTERVAL`` apart
and copies the state when it redraws, so a flood of task events cannot flood the event loop (the
solver worker does the same with telemetry, explorer/worker.py). A second small thread asks the
scheduler twice a second which workers hold tasks (``client.processing()``): that is what "busy"
and "idle" mean in the view.

Stop calls ``ManyRun.cancel()`` (nothing new starts, running tasks are cancelled); a Stop that
comes while the cluster is still starting takes effect as soon as it is up. The client and a
cluster started here are closed in the run thread's ``finally``, so a local cluster never outlives
its run; closing the window stops the run and waits for that (``shutdown``).

A plain Python thread rather than a QThread: reaching a scheduler that does not answer cannot be
interrupted (dask tries for 20 s), and a QThread destroyed while running aborts the process, while
a daemon thread left behind past the window's wait does no harm.

``show_row`` puts a row's result into the normal views: for the loaded dataset it becomes a
finished run of it (a batch's problems in the Batch tab, a series' tracks in the 3D tab); for a
file of a folder the file is opened and, once read, the row's result becomes its finished run.
Such runs have no telemetry (the workers record none): the views show the answer, not its steps.
"""
from __future__ import annotations

import copy
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6 import QtCore

log = logging.getLogger("matchscope.explorer")

POKE_INTERVAL = 0.1   # seconds between two redraw requests at most (forced on phase changes)
POLL_INTERVAL = 0.5   # seconds between two asks of which workers are busy
PHASES = ("connecting", "running", "finished", "cancelled", "failed")


@dataclass
class ClusterRequest:
    """What to run and where. ``items``: what submit_many gets (the loaded Problem, or paths);
    ``labels``: each item's name in the table; ``source``: "dataset" or "folder"; ``problem``: the
    loaded dataset (its results can be shown in the other tabs); ``algorithm``: None for automatic;
    ``scheduler``: "local" or an address; ``workers``: a local cluster's size (None: automatic)."""
    items: list
    labels: list[str]
    source: str
    what: str
    algorithm: str | None = None
    backend: str = "auto"
    scheduler: str = "local"
    workers: int | None = None
    problem: object = None
    folder: str | None = None

    @property
    def where(self) -> str:
        if self.scheduler == "local":
            return "a local cluster" + (f" of {self.workers} workers" if self.workers else "")
        return f"the scheduler at {self.scheduler}"

    @property
    def output_format(self) -> str | None:
        """Files are rendered as CSV on their workers (the CSV export writes them beside the rows)."""
        return ".csv" if self.source == "folder" else None


@dataclass
class WorkerState:
    address: str
    tasks: int = 0          # tasks finished here (a file, a chunk of a batch, a run of frame pairs)
    seconds: float = 0.0    # their wall time here
    failed: int = 0
    busy: bool = False


@dataclass
class ClusterState:
    phase: str = "connecting"
    message: str = ""
    dashboard: str | None = None
    dashboard_note: str = ""
    workers: dict = field(default_factory=dict)   # address -> WorkerState
    done: int = 0
    total: int = 0
    items_done: int = 0
    items: int = 0
    rows: dict = field(default_factory=dict)      # item index -> ItemResult, as items finish
    results: list | None = None                   # every row in input order, once finished
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    cluster_closed: bool = False
    version: int = 0

    @property
    def active(self) -> bool:
        return self.phase in ("connecting", "running")

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else time.perf_counter()) - self.started

    def worker(self, address: str) -> WorkerState:
        if address not in self.workers:
            self.workers[address] = WorkerState(address)
        return self.workers[address]


def dashboard(client, cluster) -> tuple[str | None, str]:
    """(the dashboard's address or None, a note): only a scheduler that serves one has a link (dask
    writes one from its settings either way); its charts need bokeh where the scheduler runs."""
    import importlib.util

    from solvers.scale_out.cluster import dashboard_link
    try:
        served = "dashboard" in client.scheduler_info().get("services", {})
    except Exception:  # an old or unusual scheduler: trust the link
        served = True
    link = dashboard_link(client) if served else None
    note = ""
    if link and cluster is not None and importlib.util.find_spec("bokeh") is None:
        note = "its charts need bokeh here: pip install bokeh"
    return link, note


def one_line(exc: BaseException) -> str:
    """A failure in plain words: bad input as it says it, anything else without a traceback."""
    from solvers.errors import InputError
    text = " ".join(str(exc).split())
    if isinstance(exc, (InputError, OSError, TimeoutError)) and text:
        return text
    return f"the cluster run failed: {text or 'no message'} (the log has the details)"


class ClusterRun(QtCore.QObject):
    """One run; ``start()`` it, ``stop()`` it from the GUI, ``snapshot()`` its state to draw."""

    changed = QtCore.Signal()     # the state moved (throttled)
    ended = QtCore.Signal(str)    # the final phase; the cluster is closed by then

    def __init__(self, request: ClusterRequest, parent=None):
        super().__init__(parent)
        self.request = request
        self.state = ClusterState()
        self.run = None  # the ManyRun, once the cluster is up
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._next_poke = 0.0
        self._thread = threading.Thread(target=self._main, name="matchscope-cluster", daemon=True)

    # ---- GUI side ------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Cancel: nothing new starts, running tasks are cancelled (now or as soon as the cluster is up)."""
        self._stop.set()
        with self._lock:
            run = self.run
        if run is not None:
            run.cancel()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def wait(self, seconds: float) -> bool:
        """Wait for the run thread (the cluster closed); False if it is still busy after ``seconds``."""
        if self._thread.is_alive():
            self._thread.join(seconds)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def snapshot(self) -> ClusterState:
        """A copy to draw from (fresh containers; the rows themselves are shared, never changed)."""
        with self._lock:
            out = copy.copy(self.state)
            out.rows = dict(self.state.rows)
            out.results = list(self.state.results) if self.state.results is not None else None
            out.workers = {k: copy.copy(v) for k, v in self.state.workers.items()}
        return out

    # ---- the run thread ------------------------------------------------------------------------
    def _poke(self, force: bool = False) -> None:
        now = time.perf_counter()
        with self._lock:
            self.state.version += 1
        if force or now >= self._next_poke:
            self._next_poke = now + POKE_INTERVAL
            try:
                self.changed.emit()
            except RuntimeError:  # the view is gone (the window closed without waiting)
                pass

    def _main(self) -> None:
        req = self.request
        client = cluster = None
        poller = None
        poll_stop = threading.Event()
        phase, message = "failed", ""
        try:
            from solvers.scale_out import connect, submit_many
            client, cluster = connect(req.scheduler, req.workers, req.backend)
            link, note = dashboard(client, cluster)
            with self._lock:
                self.state.dashboard, self.state.dashboard_note = link, note
                for address in client.nthreads():
                    self.state.worker(address)
            run = submit_many(req.items, req.algorithm, req.backend, client=client, output_format=req.output_format)
            with self._lock:
                self.run = run
                self.state.phase = "running"
            if self._stop.is_set():  # Stop came while the cluster was starting
                run.cancel()
            self._poke(force=True)
            poller = threading.Thread(target=self._poll, args=(client, poll_stop), name="matchscope-cluster-poll",
                                      daemon=True)
            poller.start()
            for event in run:
                self._take(event)
            if run.cancelled:
                phase, message = "cancelled", "no results were kept"
            else:
                rows = run.results()
                with self._lock:
                    self.state.results = rows
                phase = "finished"
                failed = sum(not r.ok for r in rows)
                message = (f"{len(rows):,} item{'s' if len(rows) != 1 else ''}: "
                           + (f"{len(rows) - failed:,} certified, {failed:,} failed or not certified" if failed
                              else "every answer certified"))
        except Exception as exc:  # every failure is one line in the view; the details go to the log
            from solvers.errors import Cancelled, InputError
            if isinstance(exc, Cancelled) or (self._stop.is_set() and not isinstance(exc, InputError)):
                phase, message = "cancelled", "no results were kept"
            else:
                if not isinstance(exc, (InputError, OSError, TimeoutError)):
                    log.exception("cluster run failed")
                phase, message = "failed", one_line(exc)
        finally:
            poll_stop.set()
            if poller is not None:
                poller.join(5)
            for thing in (client, cluster):
                if thing is not None:
                    try:
                        thing.close()
                    except Exception:  # closing must not hide how the run ended
                        log.warning("closing the cluster: %s", " ".join(str(thing).split()), exc_info=True)
            with self._lock:
                state = self.state
                state.phase, state.message, state.ended = phase, message, time.perf_counter()
                state.cluster_closed = True
                if phase != "finished":
                    state.rows.clear()
                    state.results = None
                for worker in state.workers.values():
                    worker.busy = False
            self._poke(force=True)
            try:
                self.ended.emit(phase)
            except RuntimeError:
                pass

    def _take(self, event) -> None:
        with self._lock:
            s = self.state
            s.done, s.total, s.items_done, s.items = event.done, event.total, event.items_done, event.items
            if event.event == "task" and event.worker:
                w = s.worker(event.worker)
                w.tasks += 1
                w.seconds += event.seconds
                w.failed += event.error is not None
            elif event.event == "item" and event.row is not None:
                s.rows[event.index] = event.row
        self._poke(force=event.event in ("started", "finished", "cancelled"))

    def _poll(self, client, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                processing = client.processing()
            except Exception:  # the scheduler went away: the run itself will say so
                processing = None
            if processing is not None:
                with self._lock:
                    if stop.is_set():  # the run ended while this asked (a slow scheduler): its final state stands
                        return
                    for address, keys in processing.items():
                        self.state.worker(address).busy = bool(keys)
            self._poke()
            stop.wait(POLL_INTERVAL)


# ---- the window's side ---------------------------------------------------------------------------

def problem_files(folder) -> list[str]:
    """Every readable problem file in ``folder`` (not its subfolders), sorted by name; run records left out."""
    import os

    from solvers.formats import readings

    from .main_window import is_run_record
    if not folder or not os.path.isdir(folder):
        return []
    out = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.is_file():
            continue
        if readings(entry.path) and not is_run_record(entry.path):
            out.append(entry.path)
    return out


def show_row(window, request: ClusterRequest, row) -> str:
    """Show a row's result in the normal views (see the module docstring); returns the line said."""
    label = request.labels[row.index] if row.index < len(request.labels) else row.item
    if row.result is None:
        text = f"{label}: {row.error or 'no result'}"
        window.status(text, 8000)
        return text
    if request.source == "dataset":
        if window.session.problem is not request.problem:
            text = f"{label} is no longer the loaded dataset: open it again to see this result"
            window.status(text, 8000)
            return text
        _add_finished_run(window, row, window.session.problem, label)
        return f"showing {label}"
    path = str(row.item)
    reading = getattr(row.result, "problem_kind", None) if row.kind == "problem" else None
    if reading is not None and reading == (_default_reading(path)):
        reading = None

    def loaded(problem) -> None:  # once: the next dataset is this file, or the user opened another
        if window.session.path == path and problem is not None:
            _add_finished_run(window, row, problem, Path(path).name)

    # Qt drops a single-shot connection after its first call (no disconnecting inside the signal)
    window.session.datasetChanged.connect(loaded, QtCore.Qt.ConnectionType.SingleShotConnection)
    window.open_path(path, problem=reading)
    return f"opening {Path(path).name}"


def _default_reading(path: str) -> str | None:
    from solvers.formats import readings
    kinds = readings(path)
    return kinds[0] if kinds else None


def _add_finished_run(window, row, problem, label: str) -> None:
    from .session import RunState
    kind = problem.kind
    run = RunState(row.algorithm or "automatic", row.backend or "auto", {}, kind, problem=problem,
                   dataset=f"{label}, on the cluster")
    run.wall_seconds = float(row.wall_seconds)
    window.session.add_run(run)
    window.session.mark_finished(run, row.result)
    window.log_message("info", f"run #{run.id}: the cluster's result for {label} "
                               f"({run.certificate_text or 'no certificate'})")
    window.status(f"{label}: the cluster's answer is run #{run.id}; the workers record no steps, so the charts "
                  "show the answer only", 8000)
    if run.batch is not None:
        window.tabs.setCurrentWidget(window.batch_view)
    elif run.track is not None:
        window.tabs.setCurrentWidget(window.tracks_view)
    window.refresh_visible()
