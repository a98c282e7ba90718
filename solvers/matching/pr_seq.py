"""pr-seq: the sequential push-relabel matching the G-PR paper starts from (declaration; the solver
is solvers.matching.pr_seq_solver, imported when it runs)."""
from __future__ import annotations

import math

from ..problems import BipartiteGraph
from ..registry import Algorithm, Option

ALGORITHMS = [
    Algorithm("pr-seq", ("matching",), (BipartiteGraph,), ("cpu",), "solvers.matching.pr_seq_solver:run",
              options=(Option("k", 0.5, help="global relabel after every k·(m+n) pushes (inf: only the first)",
                                      low=0.0, low_open=True, high=math.inf),
                       Option("init", "cheap", ("cheap", "none"), help="initial matching: greedy or empty")),
              label="psi",
              summary="sequential push-relabel (FIFO, double push, periodic global relabel)",
              reference="Deveci et al., ICPP 2013, Algorithms 1-2 (PR of Kaya et al.)",
              phases=("initial-matching", "global-relabel", "push")),
]
