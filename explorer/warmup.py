"""Warm-up runs, so that a run's time is the algorithm's own.

The first solve of a numba-compiled algorithm in a process loads its kernels from numba's cache or
compiles them: from a second to tens of seconds (gpr: 0.9 s for a 2 ms run; wbpr cold: 17 s). The
worker therefore runs each (algorithm, backend, options, problem class and size class) once,
untimed, on a tiny problem of the same kind before the first timed run; the log says so. This
lives here, not in ``solvers.solve``, whose time stays what one call costs.

Graph solvers may switch between serial and threaded compiled loops by size (gpr at 4096 vertices
a side), so a graph warms up at its own size up to WARM_SIDE, and graphs are keyed by their
power-of-two size class: the same compiled loops as the run, at a few milliseconds' cost.
"""
from __future__ import annotations

import math
import time

import numpy as np

import solvers
from solvers import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts
from solvers.telemetry import Observer

WARM_SIDE = 8192     # a larger graph warms up on a random one this size (above every threading threshold)
COST_CORNER = 48     # a cost matrix warms up on its top-left corner (same dtype, same integrality)
POINTS = 16          # a point series on its first two frames, this many points each


def wants_warmup(algorithm: str, backend: str) -> bool:
    """Only the package's own compiled solvers (not the scipy references, not test stand-ins), and
    not on the simulator, which compiles nothing."""
    from .views.solver_panel import uninterruptible
    algo = solvers.algorithms().get(algorithm)
    if algo is None or backend == "cudasim" or not algo.runner.startswith("solvers."):
        return False
    return not uninterruptible(algo)


def resolved_backend(algorithm: str, backend: str) -> str | None:
    """The backend "auto" stands for here (None if the run will fail anyway: it reports why)."""
    from solvers.targets import resolve_backend
    try:
        return resolve_backend(backend, solvers.algorithms()[algorithm].backends, algorithm)
    except Exception:
        return None


def size_class(problem) -> int:
    if isinstance(problem, BipartiteGraph):
        side = max(problem.n_rows, problem.n_cols, 1)
        return min(int(math.log2(side)), int(math.log2(WARM_SIDE)))
    return 0


def warmup_key(problem, algorithm: str, backend: str, options: dict) -> tuple:
    return (algorithm, backend, type(problem).__name__, size_class(problem),
            tuple(sorted((k, repr(v)) for k, v in options.items())))


def warmup_problem(problem):
    """A tiny problem of the same kind, taking the same compiled paths."""
    if isinstance(problem, BipartiteGraph):
        rows, cols = min(problem.n_rows, WARM_SIDE), min(problem.n_cols, WARM_SIDE)
        return solvers.generate("random-bipartite", rows=max(rows, 1), cols=max(cols, 1),
                                degree=min(3, max(cols, 1)), seed=1)
    if isinstance(problem, CostMatrix):
        rows, cols = problem.costs.shape
        small = min(COST_CORNER, rows, cols)
        big = min(2 * COST_CORNER, max(rows, cols)) if rows != cols else small
        shape = (small, big) if rows < cols else (big, small)
        return CostMatrix.from_array(np.array(problem.costs[:shape[0], :shape[1]]), source="<warm-up>")
    if isinstance(problem, SparseCosts):
        return solvers.generate("sparse-lap", rows=16, cols=16, degree=4, seed=1)
    if isinstance(problem, FlowNetwork):
        return solvers.generate("washington-rlg", rows=4, cols=4, seed=1)
    if isinstance(problem, PointSeries):
        frames = [f[:POINTS] for f in problem.frames[:2]]
        ids = [i[:POINTS] for i in problem.ids[:2]] if problem.ids is not None else None
        return PointSeries.from_frames(frames, ids, source="<warm-up>")
    return None


class _CancelObserver(Observer):
    """Takes every snapshot (so their code paths are warm too) and stops when the job is cancelled."""

    snapshot_interval = 0.0

    def __init__(self, cancel):
        self.cancel = cancel

    def should_stop(self) -> bool:
        return self.cancel.is_set()


def warm_up(problem, algorithm: str, backend: str, options: dict, cancel, track: bool = False) -> float:
    """Run once, untimed, on ``warmup_problem(problem)``; returns the seconds it took. A failure is
    ignored (the real run reports its own); Cancelled propagates."""
    tiny = warmup_problem(problem)
    if tiny is None:
        return 0.0
    start = time.perf_counter()
    observer = _CancelObserver(cancel)
    try:
        if track:
            solvers.track(tiny, algorithm=algorithm, backend=backend, observer=observer, **options)
        else:
            solvers.solve(tiny, algorithm, backend=backend, observer=observer, **options)
    except solvers.Cancelled:
        raise
    except Exception:  # e.g. a corner of a cost matrix with no complete assignment: compiled anyway
        pass
    return time.perf_counter() - start
