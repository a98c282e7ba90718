"""The public entry points: load, save, generate, solve, track, algorithms."""
from __future__ import annotations

import time

import numpy as np

from . import registry
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
    kinds = ", ".join(algo.problem_kinds)
    raise InputError(f"{algo.name} solves {kinds} problems, not {problem.kind}", problem.source)


def solve(problem, algorithm: str, backend: str = "auto", observer: Observer | None = None,
          **options) -> Result:
    """Run ``algorithm`` on ``problem`` and certify the answer independently.

    ``backend``: "auto" (cuda when a GPU is here, else cpu), "cpu", "cuda" or "cudasim".
    ``observer`` receives live telemetry (see solvers.telemetry); None costs nothing.
    ``options`` are the algorithm's declared options (``solvers.algorithms()[name].options``).
    """
    from .certify import certify

    algo = registry.get(algorithm)
    opts = algo.parse_options(options)
    chosen = resolve_backend(backend, algo.backends, algo.name)
    prepared = _convert(problem, algo)
    info = RunInfo(algo.name, chosen, problem.kind, problem.describe(), opts, algo.label)
    tel = Telemetry.attach(observer, info)
    run = algo.run_function()
    start = time.perf_counter()
    solution = run(prepared, chosen, tel, **opts)
    seconds = time.perf_counter() - start
    certificate = certify(problem, solution)
    result = Result(problem.kind, algo.name, chosen, float(certificate.witness.get("value", solution.value)),
                    solution.iterations, seconds, certificate, solution.row_match, solution.col_match,
                    solution.flow, solution.duals, dict(solution.stats), opts)
    if observer is not None:
        observer.on_finish(result)
    return result


def track(series: PointSeries, algorithm: str = "lsa", backend: str = "auto",
          observer: Observer | None = None, **options):
    """Match each consecutive pair of frames (Euclidean costs) and chain the matches into tracks.

    ``max_distance`` (in ``options``): "auto" (default: entering and leaving points stay unmatched,
    with a gate derived from the link lengths), a positive number (a fixed gate), or None / "off"
    (the plain rectangular assignment). See solvers.tracking; ``save(result, "tracks.csv")``
    writes the tracks."""
    from .tracking import track as _track
    return _track(series, algorithm=algorithm, backend=backend, observer=observer, **options)


__all__ = ["load", "save", "generate", "solve", "track", "algorithms",
           "BipartiteGraph", "FlowNetwork", "CostMatrix", "SparseCosts", "PointSeries"]
