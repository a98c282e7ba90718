"""knn's declaration for the registry: exact point correspondence from k nearest neighbours. The
solver is solvers.points_exact, imported when it runs (it loads numba; listing algorithms must not)."""
from __future__ import annotations

from .problems import EuclideanCosts
from .registry import Algorithm, Option

MAX_PAIRS = 1 << 26  # candidate pairs held at most (about 1.5 GB with their costs and the solver's copies)

ALGORITHMS = [
    Algorithm(
        name="knn", problem_kinds=("points",), accepts=(EuclideanCosts,), backends=("cpu",),
        runner="solvers.points_exact:run",
        options=(Option("k", 8, help="nearest neighbours each point starts with as candidates", low=1,
                        high=2 ** 31 - 1),
                 Option("max_rounds", 12, help="solves at most: each adds the pairs that break the last one's "
                        "dual potentials", low=1, high=64),
                 Option("max_pairs", MAX_PAIRS, help="candidate pairs held at most (memory follows them)",
                        low=1, high=2 ** 40)),
        summary="Exact point correspondence without the distance matrix: k nearest neighbours as candidates "
                "(found on a uniform grid of cells), solved by shortest augmenting paths on them, with the pairs that break the "
                "dual potentials added until none is left; optimal for all pairs, not just the candidates.",
        reference="Vasconcelos & Rosenhahn 2009 (3-D point correspondence by assignment); Jonker & Volgenant "
                  "1987 (shortest augmenting paths); scipy.spatial.cKDTree for long neighbour lists",
        interruptible=False, phases=("start", "done")),
]
