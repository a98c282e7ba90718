"""matchscope solvers: GPU bipartite matching, assignment and maximum flow (no Qt here).

    import solvers
    g = solvers.generate("random-bipartite", rows=1000, cols=1000, degree=3, seed=1)
    r = solvers.solve(g, "hopcroft-karp")
    print(r.value, r.certified)
"""
from .targets.cache import configure as _configure_kernel_cache

_configure_kernel_cache()  # before anything imports numba: compiled kernels are kept per machine

from .api import algorithms, generate, load, save, solve, track
from .errors import BackendUnavailable, Cancelled, InfeasibleError, InputError
from .problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts
from .result import Certificate, Result, Solution
from .telemetry import IterationStats, Observer, Recorder, RunInfo, RunRecord, Snapshot, Telemetry

__version__ = "0.1.0"

__all__ = ["algorithms", "generate", "load", "save", "solve", "track",
           "BackendUnavailable", "Cancelled", "InfeasibleError", "InputError",
           "BipartiteGraph", "CostMatrix", "FlowNetwork", "PointSeries", "SparseCosts",
           "Certificate", "Result", "Solution",
           "IterationStats", "Observer", "Recorder", "RunInfo", "RunRecord", "Snapshot", "Telemetry"]
