"""Solving one problem with one algorithm: convert, run, time, certify (what ``solvers.solve`` and
``solvers.track``'s per-pair solves share; it imports neither, so neither depends on the other)."""
from __future__ import annotations

import time

import numpy as np

from . import registry
from .errors import DeviceOutOfMemory, InputError, is_device_out_of_memory
from .problems import CostMatrix, EuclideanCosts, PointSeries, SparseCosts
from .result import Result
from .targets import context_attached, resolve_backend
from .telemetry import Observer, RunInfo, Telemetry


def convert(problem, algo: registry.Algorithm):
    if isinstance(problem, algo.accepts):
        return problem
    if isinstance(problem, EuclideanCosts) and (CostMatrix in algo.accepts or SparseCosts in algo.accepts):
        problem = problem.to_dense()  # refused, in one line, when the distances would not fit
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


def _out_of_memory_words(problem, algorithm: str) -> str:
    """The one line for a GPU that could not hold the problem: what, and what to do instead."""
    size = " x ".join(str(int(x)) for x in getattr(problem, "shape", ()))
    what = f"this {size} {problem.kind} problem" if size else f"this {problem.kind} problem"
    return (f"the GPU's memory cannot hold {what} for {algorithm}: solve it with backend cpu "
            "(--backend cpu), or free the memory other programs hold on the GPU")


def run_algorithm(problem, algo: registry.Algorithm, backend: str, observer: Observer | None,
                  options: dict) -> Result:
    """Run ``algo`` (options already parsed) on a Problem and certify the answer independently.
    ``Result.seconds`` is the algorithm's run alone (not converting or certifying)."""
    from .certify import certify

    chosen = resolve_backend(backend, algo.backends, algo.name)
    if getattr(problem, "check_pending", False) and chosen not in algo.checks_on_upload:
        problem.check()  # no upload to check it in: now, before anything reads it
    prepared = convert(problem, algo)
    # the description is a pass over the data: made only when someone listens (issue 13)
    described = problem.describe() if observer is not None else {}
    tel = Telemetry.attach(observer, RunInfo(algo.name, chosen, problem.kind, described, options, algo.label))
    run = algo.run_function()
    with context_attached(chosen):
        start = time.perf_counter()
        try:
            solution = run(prepared, chosen, tel, **options)
        except Exception as exc:
            if chosen != "cpu" and is_device_out_of_memory(exc):
                raise DeviceOutOfMemory(_out_of_memory_words(problem, algo.name)) from None
            raise
        seconds = time.perf_counter() - start
        # distances materialised for a dense solver are certified as they are, not computed again
        certificate = certify(prepared if isinstance(problem, EuclideanCosts) else problem, solution)
    result = Result(problem.kind, algo.name, chosen, float(certificate.witness.get("value", solution.value)),
                    solution.iterations, seconds, certificate, solution.row_match, solution.col_match,
                    solution.flow, solution.duals, dict(solution.stats), options)
    if observer is not None:
        observer.on_finish(result)
    return result


def solve_named(problem, algorithm: str, backend: str, observer: Observer | None, **options) -> Result:
    algo = registry.get(algorithm)
    return run_algorithm(problem, algo, backend, observer, algo.parse_options(options))
