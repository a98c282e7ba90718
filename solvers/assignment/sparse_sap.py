"""sparse-sap: shortest augmenting paths on sparse costs (declaration; the solver is
solvers.assignment.sparse_sap_solver, imported when it runs)."""
from __future__ import annotations

from ..problems import SparseCosts
from ..registry import Algorithm

ALGORITHMS = [
    Algorithm("sparse-sap", ("assignment",), (SparseCosts,), ("cpu",), "solvers.assignment.sparse_sap_solver:run",
              summary="Sparse assignment by shortest augmenting paths: cheapest free column first, then Dijkstra "
                      "with a heap and lazily reset labels, so a search costs what it explores; rectangles natively.",
              reference="Jonker & Volgenant 1987 (shortest augmenting paths, column potentials); "
                        "Crouse 2016 (the rectangular case)",
              phases=("initial", "augment", "done")),
]
