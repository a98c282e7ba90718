"""What algorithms declare about themselves, which front ends read instead of guessing (issue 12)."""
from __future__ import annotations

import numpy as np

import solvers
from solvers.telemetry import Recorder


def test_every_algorithm_declares_the_phases_its_telemetry_reports():
    """Algorithm.phases is what front ends read (never guessed): every phase a run reports is declared."""
    graph = solvers.generate("random-bipartite", rows=30, cols=30, degree=3, seed=1)
    network = solvers.generate("washington-rlg", rows=3, cols=3, seed=1)
    costs = np.random.default_rng(1).random((10, 10))
    points = solvers.EuclideanCosts.from_points(np.random.default_rng(2).random((10, 3)), np.eye(3))
    for name, algo in solvers.algorithms().items():
        problem = graph if "matching" in algo.problem_kinds and "flow" not in algo.problem_kinds else (
            network if "flow" in algo.problem_kinds else points if "points" in algo.problem_kinds else costs)
        recorder = Recorder(snapshot_interval=float("inf"))
        solvers.solve(problem, name, backend="cpu", observer=recorder)
        reported = {s.phase for s in recorder.iterations}
        assert reported and reported <= set(algo.phases), (name, reported, algo.phases)


def test_only_one_call_solvers_are_declared_uninterruptible():
    """The scipy references run as one call (Stop cannot cut them short), as does each round of knn
    (a kd-tree query and a scipy sparse solve); the package's own poll."""
    for name, algo in solvers.algorithms().items():
        assert algo.interruptible == (algo.runner.split(":")[0].rsplit(".", 1)[-1] not in (
            "reference", "scipy_flow", "points_exact")), name
