"""The scipy maximum-flow references, ``dinic`` and ``edmonds-karp`` (declarations; the solver is
solvers.flow.scipy_flow, imported when one runs)."""
from __future__ import annotations

from ..problems import FlowNetwork
from ..registry import Algorithm

ALGORITHMS = [
    Algorithm(name="dinic", problem_kinds=("flow",), accepts=(FlowNetwork,), backends=("cpu",),
              runner="solvers.flow.scipy_flow:run_dinic",
              summary="Blocking flows in BFS level graphs (scipy maximum_flow, method='dinic').",
              reference="Dinic 1970; scipy.sparse.csgraph.maximum_flow",
              interruptible=False, phases=("start", "done")),
    Algorithm(name="edmonds-karp", problem_kinds=("flow",), accepts=(FlowNetwork,), backends=("cpu",),
              runner="solvers.flow.scipy_flow:run_edmonds_karp",
              summary="Shortest augmenting paths by BFS (scipy maximum_flow, method='edmonds_karp').",
              reference="Edmonds & Karp 1972; scipy.sparse.csgraph.maximum_flow",
              interruptible=False, phases=("start", "done")),
]
