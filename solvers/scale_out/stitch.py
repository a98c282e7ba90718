"""A point series tracked in runs of frame pairs on many workers, joined into the TrackResult that
``solvers.track`` gives on the whole series.

Runs overlap by one frame (run k's last frame is run k+1's first), so every frame pair belongs to
exactly one run and the links of all runs, in frame order, are the whole series' links; the tracks
are then chained from them by tracking.chain_tracks, as a single run chains them.

With a fixed gate (``max_distance=D``) or none, every frame pair is solved on its own, so one round
of runs is the whole job. The automatic gate is a statistic of all link lengths of the series, so
no run can settle it alone: this job runs tracking's own rounds (tracking._auto_gate) with each
round's solves spread over runs. Round 0 solves every pair plainly; the gate is then
tracking.outlier_fence of all the links' lengths, and the pairs whose plain assignment has a link
longer than it are solved again at that gate, each with solvers.track at that fixed gate, which
solves a pair exactly as the whole-series run solves it at that gate. The per-pair records add up
their solves and seconds over the rounds, as a whole-series run counts them.
"""
from __future__ import annotations

import numpy as np

from ..tracking import AUTO_MIN_LINKS, AUTO_ROUNDS, assemble, check_trackable, gating_mode, outlier_fence
from ..result import TrackResult
from . import tasks
from .items import series_runs
from .jobs import Job, TaskSpec


class SeriesJob(Job):

    def start(self, workers: int, gpu: bool = False) -> list[TaskSpec]:
        series = self.item.data
        options = dict(self.options)
        max_distance = options.pop("max_distance", "auto")
        try:
            check_trackable(series)
            self.mode, fixed = gating_mode(max_distance, series.source)
            if self.algorithm is None:
                from ..choice import choose
                self.algorithm = choose(series, self.backend).algorithm  # for the whole series, not a run's
        except Exception as exc:
            self.fail(tasks.plain_error(exc))
            return []
        self.row.algorithm = self.algorithm
        self.solve_options = options
        n_pairs = series.n_frames - 1
        self.runs = series_runs(n_pairs, workers)
        if len(self.runs) == 1:  # one task: solvers.track itself
            self.whole = True
            return [TaskSpec(self, tasks.track_series,
                             (series, self.algorithm, self.backend, dict(options, max_distance=max_distance)))]
        self.whole = False
        self.pairs = [{"links": None, "lengths": None, "entry": None, "solves": 0, "seconds": 0.0,
                       "plain_longest": 0.0} for _ in range(n_pairs)]
        self.rounds = self._rounds(fixed)
        self.gate, self.gate_rounds = None, 0
        return self._next_round()

    def _rounds(self, fixed):
        """Yields (gate, frame pairs to solve at it) as tracking._auto_gate does, reading the
        links each round has left in self.pairs."""
        if self.mode != "auto":
            self.gate = fixed
            yield fixed, range(len(self.pairs))
            return
        yield None, range(len(self.pairs))
        for pair in self.pairs:
            pair["plain_longest"] = float(pair["lengths"].max(initial=0.0))
        gate = None
        for _ in range(AUTO_ROUNDS):
            lengths = np.concatenate([p["lengths"] for p in self.pairs])
            if lengths.size < AUTO_MIN_LINKS:
                break
            fence = outlier_fence(lengths)
            if not fence > 0:
                break
            if gate is not None and fence > 0.99 * gate:
                break
            gate = fence
            self.gate, self.gate_rounds = gate, self.gate_rounds + 1
            yield gate, [t for t, p in enumerate(self.pairs) if p["plain_longest"] > gate]

    def _next_round(self) -> list[TaskSpec]:
        """The next round's tasks (one per run that has pairs in it); [] and finished when none is left."""
        for gate, chosen in self.rounds:
            specs = self._round_tasks(gate, list(chosen))
            if specs:
                self.waiting = len(specs)
                return specs
        self._assemble()
        return []

    def _round_tasks(self, gate, chosen: list[int]) -> list[TaskSpec]:
        series = self.item.data
        specs = []
        for k, (first, end) in enumerate(self.runs):
            mine = [t for t in chosen if first <= t < end]
            stretches = []
            for stretch in np.split(np.array(mine, dtype=np.int64), np.flatnonzero(np.diff(mine) > 1) + 1):
                if stretch.size:
                    a, b = int(stretch[0]), int(stretch[-1]) + 1
                    ids = None if series.ids is None else series.ids[a:b + 1]
                    stretches.append((a, series.frames[a:b + 1], ids))
            if stretches:
                where = f"frame pairs {first}-{end - 1}" + ("" if gate is None else f" (gate {gate:.4g})")
                specs.append(TaskSpec(self, tasks.track_stretches, (stretches, gate, self.algorithm, self.backend,
                                                                     self.solve_options, series.source), where, k))
        return specs

    def take(self, spec, outcome):
        super().take(spec, outcome)
        if self.whole:
            if outcome.payload is not None:
                self._fill_row(outcome.payload)
            self.finished = True
            return []
        for done in outcome.payload or ():
            pair = self.pairs[done["t"]]
            entry = done["entry"]
            pair["solves"] += entry["solves"]
            pair["seconds"] += entry["seconds"]
            pair.update(links=done["links"], lengths=done["lengths"],
                        entry=dict(entry, solves=pair["solves"], seconds=pair["seconds"]))
        self.waiting -= 1
        if self.row.error is not None:
            self.finished = self.waiting == 0  # no further round after a failed run
            return []
        return self._next_round() if self.waiting == 0 else []

    def _assemble(self) -> None:
        """The TrackResult of the whole series from the per-pair links and records (as tracking.track)."""
        links = [p["links"] for p in self.pairs]
        stats = [p["entry"] for p in self.pairs]
        self._fill_row(assemble(self.item.data, links, stats, self.mode, self.gate, self.gate_rounds))
        self.finished = True

    def _fill_row(self, tracked: TrackResult) -> None:
        row = self.row
        first = tracked.frame_stats[0] if tracked.frame_stats else {}
        row.result, row.value, row.certified = tracked, tracked.summary["cost"], bool(tracked.certified)
        row.seconds = tracked.summary["seconds"]
        row.backend = first.get("backend") or self.backend
