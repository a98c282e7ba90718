"""The public entry points: load, save, generate, solve, track, algorithms."""
from __future__ import annotations

import time

import numpy as np

from . import registry
from .api_inputs import as_observer, as_problem, as_series
from .errors import InputError
from .problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts
from .result import Result
from .targets import resolve_backend
from .telemetry import Observer, RunInfo, Telemetry


def load(path, problem: str | None = None, **options):
    """Read a file into a Problem. ``problem`` ("matching", "flow", "assignment", "points")
    picks the interpretation where a format allows several; see solvers.formats."""
    from .formats import load as _load
    return _load(path, problem=problem, **options)


def save(obj, path, **options) -> None:
    """Write a Problem (by extension), a Result (matching / assignment / flow as CSV, JSON or MTX)
    or a TrackResult (tracks as CSV or JSON, solvers.formats.tracks). Atomic."""
    from .formats import save as _save
    _save(obj, path, **options)


def generate(kind: str, **params):
    """Build a seeded synthetic problem; ``solvers.generators.KINDS`` lists the kinds and their parameters."""
    from .generators import generate as _generate
    return _generate(kind, **params)


def algorithms() -> dict[str, registry.Algorithm]:
    return registry.algorithms()


def _convert(problem, algo: registry.Algorithm):
    if isinstance(problem, algo.accepts):
        return problem
    if isinstance(problem, SparseCosts) and CostMatrix in algo.accepts:
        return problem.to_dense()
    if isinstance(problem, CostMatrix) and SparseCosts in algo.accepts:
        rows, cols = np.nonzero(problem.allowed)
        return SparseCosts.from_edges(rows, cols, problem.costs[rows, cols], problem.n_rows, problem.n_cols,
                                      problem.source)
    if isinstance(problem, PointSeries):
        raise InputError("a point series is tracked (solvers.track, or matchscope solve on its file), not solved",
                         problem.source)
    kinds = ", ".join(algo.problem_kinds)
    raise InputError(f"{algo.name} solves {kinds} problems, not {problem.kind}", problem.source)


def solve(data, /, algorithm: str | None = None, backend: str = "auto", observer: Observer | None = None, *,
          problem: str | None = None, **options) -> Result:
    """Run ``algorithm`` on ``data`` and certify the answer independently.

    ``data``: a Problem, a file path, a 2-D array-like of assignment costs (list of lists, numpy
    array, pandas DataFrame), a scipy.sparse matrix (a bipartite graph: stored entries are edges)
    or a networkx bipartite graph; ``problem`` ("matching", "flow", "assignment") reads a matrix or
    a file as that kind (see solvers.api_inputs). ``algorithm``: a name from ``algorithms()``; None
    picks the fastest for the problem on this machine (``solvers.choice.choose``).
    ``backend``: "auto" (cuda when a GPU is here, else cpu), "cpu", "cuda" or "cudasim".
    ``observer`` receives live telemetry (see solvers.telemetry); None costs nothing.
    ``options`` are the algorithm's declared options (``solvers.algorithms()[name].options``).
    ``Result.seconds`` is the algorithm's run alone: not loading, converting or certifying, but on
    a process's first call it includes compiling the kernels (``solvers.warmup`` runs them untimed
    first).
    """
    from .certify import certify

    observer = as_observer(observer)
    algo = registry.get(algorithm) if algorithm is not None else None
    problem_obj = as_problem(data, algo, problem)
    if algo is None:
        from .choice import choose
        algo = registry.get(choose(problem_obj, backend).algorithm)
    opts = algo.parse_options(options)
    chosen = resolve_backend(backend, algo.backends, algo.name)
    prepared = _convert(problem_obj, algo)
    info = RunInfo(algo.name, chosen, problem_obj.kind, problem_obj.describe(), opts, algo.label)
    tel = Telemetry.attach(observer, info)
    run = algo.run_function()
    start = time.perf_counter()
    solution = run(prepared, chosen, tel, **opts)
    seconds = time.perf_counter() - start
    certificate = certify(problem_obj, solution)
    result = Result(problem_obj.kind, algo.name, chosen, float(certificate.witness.get("value", solution.value)),
                    solution.iterations, seconds, certificate, solution.row_match, solution.col_match,
                    solution.flow, solution.duals, dict(solution.stats), opts)
    if observer is not None:
        observer.on_finish(result)
    return result


def track(series, algorithm: str | None = "lsa", backend: str = "auto",
          observer: Observer | None = None, **options):
    """Match each consecutive pair of frames (Euclidean costs) and chain the matches into tracks.

    ``series``: a PointSeries, a file path, or a sequence of (n_t, 3) arrays, one per frame (at
    least two frames). ``algorithm``: any assignment algorithm; None picks the fastest for dense
    assignments of the series' frame size here (``solvers.choice``). ``observer`` hears every
    solve and ``on_progress(done, total, "frame pair")``.
    ``max_distance`` (in ``options``): "auto" (default: entering and leaving points stay unmatched,
    with a gate derived from the link lengths), a positive number (a fixed gate), or None / "off"
    (the plain rectangular assignment). See solvers.tracking; ``save(result, "tracks.csv")``
    writes the tracks."""
    from .tracking import track as _track
    series = as_series(series)
    observer = as_observer(observer)
    if algorithm is None:
        from .choice import choose
        algorithm = choose(series, backend).algorithm
    return _track(series, algorithm=algorithm, backend=backend, observer=observer, **options)


__all__ = ["load", "save", "generate", "solve", "track", "algorithms",
           "BipartiteGraph", "FlowNetwork", "CostMatrix", "SparseCosts", "PointSeries"]
