"""matchscope solvers: GPU bipartite matching, assignment and maximum flow (no Qt here).

    import solvers
    g = solvers.generate("random-bipartite", rows=1000, cols=1000, degree=3, seed=1)
    r = solvers.solve(g, "hopcroft-karp")
    print(r.value, r.certified)

The names below are imported when first used, so that ``import solvers`` (and ``matchscope
--help``) stays quick; numba and scipy.sparse load only where they are needed.
"""
import importlib

from .targets.cache import configure as _configure_kernel_cache

_configure_kernel_cache()  # before anything imports numba: compiled kernels are kept per machine

__version__ = "0.1.0"

_HOMES = {
    "algorithms": "api", "generate": "api", "load": "api", "save": "api", "solve": "api", "track": "api",
    "release_device_memory": "api",
    "match_points": "points_exact", "default_algorithm": "choice",
    "solve_batch": "batch.api", "AssignmentBatch": "batch.problem", "BatchResult": "batch.result",
    "solve_many": "scale_out.run",
    "BackendUnavailable": "errors", "Cancelled": "errors", "InfeasibleError": "errors", "InputError": "errors",
    "BipartiteGraph": "problems", "CostMatrix": "problems", "FlowNetwork": "problems", "PointSeries": "problems",
    "SparseCosts": "problems", "EuclideanCosts": "problems",
    "Certificate": "result", "Result": "result", "Solution": "result",
    "IterationStats": "telemetry", "Observer": "telemetry", "Recorder": "telemetry", "RunInfo": "telemetry",
    "RunRecord": "telemetry", "Snapshot": "telemetry", "Telemetry": "telemetry",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'solvers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
