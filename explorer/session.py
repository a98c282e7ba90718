"""The explorer's model: the loaded problem, every run (live or replayed) and what is selected.

A run's telemetry is appended by the worker thread to the run's Recorder; the GUI thread never
copies the whole stream on a redraw: ``IterationColumns.sync`` converts only the iterations that
arrived since the last frame into growable numpy columns, so a run with 10^6 iterations redraws
as cheaply as a short one. Views read ``Session`` and draw up to ``session.cursor`` (the replay
position; None follows the newest state).
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from PySide6 import QtCore

from solvers.formats import readings
from solvers.telemetry import Recorder, RunInfo, RunRecord, Snapshot, SolveStart

from .wording import dataset_name

FINAL_STATES = ("finished", "failed", "cancelled")
# steps that punctuate a solver's main loop (telemetry.py names them); never taken as the main phase
EVENT_PHASES = frozenset({"global-relabel", "dual-update", "eps-scale", "initial-matching", "start", "done",
                          "fix-matching", "fixmatching", "shrink", "restart", "init", "final-check"})


class IterationColumns:
    """Columnar, incrementally grown copy of a run's IterationStats list."""

    def __init__(self):
        self.n = 0
        self._cap = 0
        self._cols: dict[str, np.ndarray] = {}
        self.extras: dict[str, np.ndarray] = {}
        self.phases: list[str] = []
        self._phase_code: dict[str, int] = {}
        self._offset = 0.0  # added to elapsed after a restart (several solves in one run, e.g. tracking)
        self._last_elapsed = -math.inf
        self.monotone = True  # iteration numbers never decrease

    def _grow(self, needed: int) -> None:
        if needed <= self._cap:
            return
        cap = max(1024, needed, 2 * self._cap)
        specs = {"iteration": (np.int64, 0), "elapsed": (np.float64, np.nan), "time": (np.float64, np.nan),
                 "active": (np.int64, -1), "value": (np.float64, np.nan), "phase": (np.int16, 0)}
        for name, (dtype, fill) in specs.items():
            new = np.full(cap, fill, dtype=dtype)
            if name in self._cols:
                new[: self.n] = self._cols[name][: self.n]
            self._cols[name] = new
        for key, old in self.extras.items():
            new = np.full(cap, np.nan)
            new[: self.n] = old[: self.n]
            self.extras[key] = new
        self._cap = cap

    def sync(self, iterations: list) -> bool:
        """Append what is new in ``iterations`` (a list the worker only appends to). True if anything was."""
        end = len(iterations)
        if end <= self.n:
            return False
        new = iterations[self.n:end]
        self._grow(end)
        sl = slice(self.n, end)
        its = np.fromiter((s.iteration for s in new), np.int64, len(new))
        elapsed = np.fromiter((s.elapsed for s in new), np.float64, len(new))
        cols = self._cols
        if self.monotone:
            prev = cols["iteration"][self.n - 1] if self.n else its[0]
            self.monotone = bool(its[0] >= prev and np.all(np.diff(its) >= 0))
        cols["iteration"][sl] = its
        cols["elapsed"][sl] = elapsed
        cols["time"][sl] = self._monotone_time(elapsed)
        cols["active"][sl] = np.fromiter((s.active for s in new), np.int64, len(new))
        cols["value"][sl] = np.fromiter((s.value for s in new), np.float64, len(new))
        cols["phase"][sl] = np.fromiter((self._code(s.phase) for s in new), np.int16, len(new))
        for j, s in enumerate(new):
            for key, val in s.extra.items():
                col = self.extras.get(key)
                if col is None:
                    col = self.extras[key] = np.full(self._cap, np.nan)
                try:
                    col[self.n + j] = float(val)
                except (TypeError, ValueError):
                    pass
        self.n = end
        return True

    def _monotone_time(self, elapsed: np.ndarray) -> np.ndarray:
        out = np.empty_like(elapsed)
        for i, e in enumerate(elapsed):
            if e < self._last_elapsed:  # a new solve started (its clock restarts)
                self._offset += self._last_elapsed
            self._last_elapsed = e
            out[i] = e + self._offset
        return out

    def _code(self, phase: str) -> int:
        code = self._phase_code.get(phase)
        if code is None:
            code = self._phase_code[phase] = len(self.phases)
            self.phases.append(phase)
        return code

    def column(self, name: str, upto: int | None = None) -> np.ndarray:
        n = self.n if upto is None else min(upto, self.n)
        if name.startswith("extra."):
            col = self.extras.get(name[6:])
            return np.full(n, np.nan) if col is None else col[:n]
        if not self._cols:
            return np.zeros(0)
        return self._cols[name][:n]

    def x(self, upto: int | None = None) -> np.ndarray:
        """The charts' count axis: report numbers 1..n. Never the ``iteration`` field of the reports:
        solvers number their reports their own way (a Hungarian run reports its dual updates too, gpr
        its global relabels), so that field ends above the solver's iteration count (Result.iterations,
        the one number called "iterations" in the explorer). Charts and the timeline say "report"."""
        n = self.n if upto is None else min(upto, self.n)
        return np.arange(1, n + 1, dtype=np.float64)

    def main_phase(self) -> str | None:
        """The loop's ordinary step: the most frequent phase that is not a known event."""
        if not self.n:
            return None
        counts = np.bincount(self._cols["phase"][: self.n], minlength=len(self.phases))
        ordinary = [i for i, p in enumerate(self.phases) if p not in EVENT_PHASES]
        pool = ordinary or list(range(len(self.phases)))
        return self.phases[max(pool, key=lambda i: counts[i])]


class RunState:
    """One run: what was asked, its telemetry (a Recorder), its outcome."""

    _ids = itertools.count(1)

    def __init__(self, algorithm: str, backend: str, options: dict, problem_kind: str, *,
                 group: int | None = None, uninterruptible: bool = False, name: str = "", problem=None,
                 dataset: str = ""):
        self.id = next(RunState._ids)
        self.algorithm = algorithm
        self.backend = backend
        self.options = dict(options)
        self.problem_kind = problem_kind
        self.problem = problem    # the Problem solved (flow exports need its edges); None for a loaded record
        self.group = group
        self.uninterruptible = uninterruptible
        self.name = name
        self.dataset = dataset    # what it ran on, in words ("rmat_s9.mtx"): runs of earlier datasets stay listed
        self.recorder = Recorder(snapshot_interval=0.05)  # the first gaps are shorter (telemetry.Throttle)
        self.snapshot_positions: list[int] = []  # iterations recorded when each snapshot arrived
        self.columns = IterationColumns()
        self.status = "queued"
        self.error = ""
        self.error_category = ""  # "input" (the user's), "error" (ours) or "cancelled"
        self.result = None        # solvers.result.Result
        self.track = None         # tracking result (PointSeries runs)
        self.batch = None         # solvers.BatchResult (batch runs: every problem of a batch at once)
        self.started_at: float | None = None  # the timed start: after the warm-up (worker clock)
        self.ended_at: float | None = None    # when the worker had the answer (worker clock)
        self.wall_seconds = 0.0   # ended_at - started_at: solve, checks and certificate, never the warm-up
        self.stop_requested = False
        self.warmup_seconds = 0.0  # untimed compile / load before the run (solvers.warmup)
        self.preparing = ""       # what the worker does before the timed run ("preparing gpr for cpu (...)")
        self.replayed = False     # loaded from a run record
        self.recorded_summary: dict | None = None  # a loaded record's result summary
        self.record_path: str | None = None        # the file a replayed run came from
        # tracking: the solver's own progress: (done, total, unit), e.g. (3, 9, "frame pair") while
        # the 4th of 9 frame pairs is solved (Observer.on_progress)
        self.progress: tuple[int, int, str] | None = None
        self._solve_starts: tuple[tuple, list[SolveStart]] = ((), [])

    # ---- identity -------------------------------------------------------------------------
    @property
    def backend_used(self) -> str:
        """The backend the solver ran on ("auto" resolved) once it has started, else the one asked for."""
        if self.batch is not None:
            return self.batch.backend
        info = self.recorder.info
        return getattr(info, "backend", "") or self.backend

    @property
    def label(self) -> str:
        base = self.name or f"#{self.id} {self.algorithm} [{self.backend_used}]"
        if self.dataset:
            base += f" · {self.dataset}"
        return base if self.status in ("finished", "running", "queued") else f"{base} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ("queued", "running")

    @property
    def label_name(self) -> str:
        info = self.recorder.info
        return (getattr(info, "label", "") if info is not None else "") or "label"

    @property
    def problem_info(self) -> dict:
        """The problem's describe(): from the problem, or as the run record kept it."""
        if self.problem is not None:
            return dict(self.problem.describe())
        info = self.recorder.info
        return dict(getattr(info, "problem", None) or {"kind": self.problem_kind})

    def meta(self) -> dict:
        info = self.recorder.info
        return asdict(info) if info is not None else {}

    # ---- telemetry --------------------------------------------------------------------------
    def sync(self) -> bool:
        return self.columns.sync(self.recorder.iterations)

    @property
    def solves_started(self) -> int:
        """Solves begun so far (a tracking run: one per frame pair, more for gated pairs)."""
        return len(self.recorder.solves)

    @property
    def solve_starts(self) -> list[SolveStart]:
        """Where each solve began (the Recorder's SolveStarts), with its frame pair (``item``) where
        it is known: see ``frame_pairs_of``."""
        key = (len(self.recorder.solves), self.track is not None)
        if self._solve_starts[0] != key:
            self._solve_starts = (key, frame_pairs_of(self.recorder.solves[:key[0]], self.track))
        return self._solve_starts[1]

    @property
    def n_reports(self) -> int:
        """Telemetry reports received (a solver may report more or fewer than its iterations)."""
        return len(self.recorder.iterations)

    @property
    def iterations(self) -> int | None:
        """The solver's own iteration count (a tracking run: its assignment solves), once known.

        This is the one number called "iterations" everywhere (log, panel, table, report)."""
        if self.result is not None:
            return int(self.result.iterations)
        if self.batch is not None:
            return int(self.batch.iterations.sum())
        if self.track is not None:
            return int(sum(int(f.get("solves", 1)) for f in _frame_stats(self.track)))
        if self.recorded_summary and self.recorded_summary.get("iterations") is not None:
            return int(self.recorded_summary["iterations"])
        return None

    @property
    def current_iteration(self) -> int | None:
        """The iteration number the solver reported last (while it runs)."""
        its = self.recorder.iterations
        return int(its[-1].iteration) if its else None

    @property
    def reports_so_far(self) -> int:
        """Telemetry reports received: what the charts and the timeline count while a run goes (the
        solver's own iteration count is known at the end, as ``iterations``)."""
        return len(self.recorder.iterations)

    @property
    def solver_seconds(self) -> float | None:
        """Time inside the solver (a tracking run: its solves), without loading, warm-up or certifying."""
        if self.result is not None:
            return float(self.result.seconds)
        if self.batch is not None:
            return float(self.batch.seconds.get("solve", math.nan))
        if self.track is not None:
            secs = [float(f["seconds"]) for f in _frame_stats(self.track) if f.get("seconds") is not None]
            return sum(secs) if secs else None
        if self.recorded_summary and self.recorded_summary.get("seconds") is not None:
            return float(self.recorded_summary["seconds"])
        return None

    @property
    def certificate_status(self) -> str | None:
        """"optimal", "within-gap", "not-proven", "invalid", or None before the outcome is known; a
        batch whose problems are all proven, some of them infeasible: "proven-infeasible"."""
        if self.result is not None:
            return self.result.certificate.status
        if self.batch is not None:  # every problem proven (optimal, or infeasible) or not
            if not self.batch.all_certified:
                return "not-proven"
            return "proven-infeasible" if self.batch.infeasible.any() else "optimal"
        if self.track is not None:
            statuses = [str(f.get("status", "")) for f in _frame_stats(self.track)]
            return next((s for s in ("invalid", "not-proven", "within-gap") if s in statuses), "optimal")
        if self.recorded_summary:
            from .wording import summary_status
            return summary_status(self.recorded_summary)
        return None

    @property
    def certificate_text(self) -> str:
        """The certificate's own summary (long: it goes to the log and the result lines, never the status bar)."""
        if self.result is not None:
            return self.result.certificate.summary()
        if self.batch is not None:
            return batch_words(self.batch)
        if self.track is not None:
            frames = _frame_stats(self.track)
            good = sum(bool(f.get("certified")) for f in frames)
            return f"{good} of {len(frames)} frame pairs certified"
        if self.recorded_summary:
            return str(self.recorded_summary.get("certificate") or "")
        return ""

    def snapshots(self, kind: str, upto: int | None = None) -> list[tuple[int, Snapshot]]:
        """(position, snapshot) of one kind, those recorded within the first ``upto`` iterations."""
        snaps = self.recorder.snapshots
        n = min(len(snaps), len(self.snapshot_positions))
        out = []
        for i in range(n):
            s = snaps[i]
            pos = self.snapshot_positions[i]
            if s.kind == kind and (upto is None or pos <= upto):
                out.append((pos, s))
        return out

    def snapshot_x(self, position: int, snapshot: Snapshot) -> float:
        """Where a snapshot sits on the report axis used by ``IterationColumns.x``: at the report it
        followed (0: before the first report)."""
        return float(max(position, 0))

    def summary(self) -> dict:
        """Row of the comparison table."""
        s = self.result.summary() if self.result is not None else (self.recorded_summary or {})
        if self.batch is not None:  # the problems' total cost; time: the batch solve, as for one problem
            finite = self.batch.values[np.isfinite(self.batch.values)]
            s = {"seconds": self.batch.seconds.get("solve", math.nan), "backend": self.batch.backend,
                 "value": float(finite.sum()) if finite.size else math.nan, "certified": self.batch.all_certified}
        if self.track is not None:
            frames = _frame_stats(self.track)
            used = sorted({str(f["backend"]) for f in frames if f.get("backend")})  # what "auto" became
            solver_seconds = [float(f["seconds"]) for f in frames if f.get("seconds") is not None]
            s = {"seconds": sum(solver_seconds) if solver_seconds else self.wall_seconds,  # solves, as for other runs
                 "value": getattr(self.track, "accuracy", math.nan),
                 "certified": all(bool(f.get("certified", False)) for f in frames)}
            if used:
                s["backend"] = "/".join(used)
        return {"run": self.id, "algorithm": self.algorithm, "backend": s.get("backend", self.backend),
                "options": ", ".join(f"{k}={v}" for k, v in self.options.items()),
                "seconds": float(s.get("seconds", math.nan) if s.get("seconds") is not None else math.nan),
                # wall: from the timed start to the certified answer; the warm-up (compiling) apart
                "wall": math.nan if self.replayed or self.is_active else float(self.wall_seconds),
                "warm-up": math.nan if self.replayed else float(self.warmup_seconds),
                "iterations": self.iterations,  # the solver's own count; None until it is known
                "value": float(s["value"]) if s.get("value") is not None else math.nan,
                "certified": s.get("certified"), "status": self.status}

    # ---- records ----------------------------------------------------------------------------
    def record(self) -> RunRecord:
        rec = self.recorder.record()
        if rec.result is None and self.result is not None:
            rec.result = self.result.summary()
        rec.solves = list(self.solve_starts)  # with the frame pairs the tracking result told
        return rec

    @classmethod
    def from_record(cls, record: RunRecord, name: str = "", path: str | None = None) -> "RunState":
        info = dict(record.info or {})
        run = cls(info.get("algorithm", "?"), info.get("backend", "?"), dict(info.get("options") or {}),
                  info.get("problem_kind", "?"), name=name)
        run.record_path = path
        try:
            run.recorder.info = RunInfo(**{k: info[k] for k in RunInfo.__dataclass_fields__ if k in info})
        except TypeError:
            run.recorder.info = None
        run.recorder.iterations = list(record.iterations)
        run.recorder.snapshots = list(record.snapshots)
        run.recorder.solves = list(record.solves)
        run.recorder.result_summary = record.result
        run.columns.sync(run.recorder.iterations)
        run.snapshot_positions = positions_for(run.columns, run.recorder.snapshots)
        run.status = "finished"
        run.replayed = True
        res = record.result or {}
        run.wall_seconds = float(res.get("seconds") or 0.0)
        run.recorded_summary = res
        return run


def batch_words(batch) -> str:
    """A batch's outcome in one line: how many problems were proven, and how."""
    count, optimal, infeasible = len(batch), int(batch.certified.sum()), int(batch.infeasible.sum())
    parts = [f"{optimal:,} of {count:,} problems certified optimal"]
    if infeasible:
        parts.append(f"{infeasible:,} proven infeasible")
    failed = count - optimal - infeasible
    if failed:
        first = int(np.flatnonzero(~(batch.certified | batch.infeasible))[0])
        parts.append(f"{failed:,} not certified (first: problem {first}, {batch.status[first]})")
    return ", ".join(parts)


def frame_pairs_of(solves: list[SolveStart], track=None) -> list[SolveStart]:
    """The solves with the frame pair each solved (``item``) where it can be told. A solve of a pass
    over every pair ("frame pair" k of N) solved pair k. A re-solve of the automatic gate ("gated
    frame pair" k of M) solved the k-th of the pairs that round re-solved: each round re-solves the
    pairs whose plain links were longer than its gate, a growing set whose last is every pair the
    tracking result calls gated, so a round of M pairs, M their number, re-solved exactly those.
    A round of fewer (rare) does not say which it took: its solves keep item None."""
    gated = None
    if track is not None:
        gated = [t for t, stats in enumerate(_frame_stats(track)) if stats.get("gated")]
    out = []
    for solve in solves:
        item = solve.item
        if item is None and solve.unit == "frame pair":
            item = solve.index
        elif item is None and solve.unit == "gated frame pair" and gated is not None and solve.total == len(gated):
            item = gated[solve.index] if 0 <= solve.index < len(gated) else None
        out.append(solve if item == solve.item else replace(solve, item=item))
    return out


def _frame_stats(track) -> list[dict]:
    stats = getattr(track, "frame_stats", None) or []
    return [f if isinstance(f, dict) else getattr(f, "__dict__", {}) for f in stats]


def positions_for(columns: IterationColumns, snapshots: list) -> list[int]:
    """Place recorded snapshots in the iteration stream (a loaded record does not store where they arrived)."""
    if not snapshots:
        return []
    if columns.monotone:
        its = columns.column("iteration")
        return [int(np.searchsorted(its, s.iteration, side="right")) for s in snapshots]
    # restarted clocks: rebuild a monotone time for the snapshots the same way as for iterations
    times, offset, last = [], 0.0, -math.inf
    for s in snapshots:
        if s.elapsed < last:
            offset += last
        last = s.elapsed
        times.append(s.elapsed + offset)
    return [int(p) for p in np.searchsorted(columns.column("time"), times, side="right")]


class Session(QtCore.QObject):
    """Latest state of everything the views draw. Signals fire on the GUI thread."""

    datasetChanged = QtCore.Signal(object)
    runsChanged = QtCore.Signal()
    runStarted = QtCore.Signal(object)
    runProgress = QtCore.Signal(object)
    runFinished = QtCore.Signal(object)
    runFailed = QtCore.Signal(object, str)
    currentRunChanged = QtCore.Signal(object)
    cursorChanged = QtCore.Signal(object)
    comparisonChanged = QtCore.Signal()
    framePairChanged = QtCore.Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.problem = None
        self.path: str | None = None
        self.generator: tuple[str, dict] | None = None  # (kind, parameters) of a generated dataset
        self.readings: tuple[str, ...] = ()  # the problem kinds the file's format can be read as
        self.runs: list[RunState] = []
        self.current_run: RunState | None = None
        self.cursor: int | None = None
        self.comparison: list[RunState] = []
        self.frame_pair = 0
        self.version = 0  # bumped on every change a view may draw
        self._groups = itertools.count(1)

    def touch(self) -> None:
        self.version += 1

    # ---- dataset ----------------------------------------------------------------------------
    def set_problem(self, problem, path: str | None = None, generator: tuple[str, dict] | None = None) -> None:
        """A new dataset: a file read as ``problem.kind`` or a generator's (kind, parameters). The current
        run and the comparison are cleared from the views (earlier runs stay in the run list)."""
        self.problem = problem
        self.path = path
        self.generator = (generator[0], dict(generator[1])) if generator is not None else None
        self.readings = readings(path) if path else ()
        self.frame_pair = 0
        self.comparison = []
        self.current_run = None
        self.cursor = None
        self.touch()
        self.datasetChanged.emit(problem)
        self.currentRunChanged.emit(None)
        self.comparisonChanged.emit()

    @property
    def read_as(self) -> str | None:
        """The problem kind the file was read as, when its format allows several (else None)."""
        return self.problem.kind if self.problem is not None and len(self.readings) > 1 else None

    @property
    def dataset_name(self) -> str:
        if self.problem is None:
            return ""
        default = self.readings[0] if self.readings else None
        read_as = self.read_as if self.read_as != default else None
        return dataset_name(self.path, self.generator, self.problem.describe(), read_as)

    # ---- runs -------------------------------------------------------------------------------
    def new_group(self) -> int:
        return next(self._groups)

    def add_run(self, run: RunState, make_current: bool = True) -> None:
        self.runs.append(run)
        if run.group is not None:
            self.comparison = [r for r in self.comparison if r.group == run.group] + [run]
            self.comparisonChanged.emit()
        self.touch()
        self.runsChanged.emit()
        if make_current:
            self.set_current_run(run)

    def compare_with(self, runs: list[RunState]) -> None:
        """Show these finished runs in the comparison (scripts put their single run there)."""
        self.comparison = list(runs)
        self.touch()
        self.comparisonChanged.emit()

    def set_current_run(self, run: RunState | None) -> None:
        if run is self.current_run:
            return
        self.current_run = run
        self.cursor = None
        self.touch()
        self.currentRunChanged.emit(run)
        self.cursorChanged.emit(None)

    def mark_started(self, run: RunState) -> None:
        run.status = "running"
        run.started_at = time.perf_counter()
        self.touch()
        self.runStarted.emit(run)
        self.runsChanged.emit()

    def mark_progress(self, run: RunState) -> None:
        if run.started_at is not None:
            run.wall_seconds = time.perf_counter() - run.started_at
        self.touch()
        self.runProgress.emit(run)

    @staticmethod
    def _end_wall(run: RunState) -> None:
        """The wall time ends when the worker had the answer (``ended_at``), not when the GUI thread,
        busy drawing another run, heard of it."""
        if run.started_at is not None:
            end = run.ended_at if run.ended_at is not None else time.perf_counter()
            run.wall_seconds = max(end - run.started_at, 0.0)

    def mark_finished(self, run: RunState, payload) -> None:
        if run.stop_requested:  # an uninterruptible solver returned after Stop: discard its answer
            self.mark_failed(run, "cancelled", "stopped; the result that arrived afterwards was discarded")
            return
        self._end_wall(run)
        if hasattr(payload, "certificate"):
            run.result = payload
        elif hasattr(payload, "item_seconds"):
            run.batch = payload
        else:
            run.track = payload
        run.status = "finished"
        run.sync()
        self.touch()
        self.runFinished.emit(run)
        self.runsChanged.emit()
        if run.group is not None:
            self.comparisonChanged.emit()

    def mark_failed(self, run: RunState, status: str, message: str) -> None:
        self._end_wall(run)
        run.status = status
        run.error = message
        run.sync()
        self.touch()
        self.runFailed.emit(run, message)
        self.runsChanged.emit()
        if run.group is not None:
            self.comparisonChanged.emit()

    def active_runs(self) -> list[RunState]:
        return [r for r in self.runs if r.is_active]

    # ---- replay -----------------------------------------------------------------------------
    def set_cursor(self, position: int | None) -> None:
        """Show state up to ``position`` iterations of the current run (None: the newest)."""
        if position is not None:
            position = max(0, int(position))
        if position == self.cursor:
            return
        self.cursor = position
        self.touch()
        self.cursorChanged.emit(position)

    def visible_length(self, run: RunState | None = None) -> int:
        run = run or self.current_run
        if run is None:
            return 0
        n = run.columns.n
        return n if self.cursor is None or run is not self.current_run else min(self.cursor, n)

    def set_frame_pair(self, pair: int) -> None:
        if pair != self.frame_pair:
            self.frame_pair = pair
            self.touch()
            self.framePairChanged.emit(pair)
