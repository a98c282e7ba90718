"""Which algorithm runs when none is named (``matchscope solve`` without ``--algo``,
``solvers.solve(data)``, ``solvers.track(series, None)``): the fastest for the kind and size of
problem on this machine, from measurements, not guesses. Times below are solve seconds after an
untimed warm-up, best of 3.

With a usable NVIDIA GPU (backend auto), the GPU algorithms win once a problem is large enough to
pay for their fixed costs (a few milliseconds of launches and copies); below that the CPU's choice
runs. Measured on an H100 (16-core host, 2026-11-24):

* matching: ``gpr`` from GPU_MIN_EDGES edges: 13 ms against pr-seq's 38 ms on a random bipartite
  graph of 800,000 edges, 17 ms against 25 ms on R-MAT scale 16 (1.8 M edges), 260 ms against
  1.58 s on a 1000 x 1000 road grid; 37 ms against 45 ms at 323,000 edges (road grid 300 x 300).
  Below: ``pr-seq``, 2.6 ms against gpr's 7.3 ms on R-MAT scale 13 (204,000 edges), a tie at
  200,000 random edges (6.1 ms), 0.05 ms against 4.5 ms at 2,000 edges.
* flow: ``wbpr`` from GPU_MIN_FLOW_EDGES edges: 15 ms against Dinic's 27 ms on Washington 64 x 64
  (12,224 edges), 81 ms against 2.5 s at 256 x 256, 184 ms against 555 ms on Genrmf 32 x 16.
  Below: ``dinic``, 21 ms against 29 ms on Genrmf 16 x 8 (9,472 edges), 1 ms against 7 ms on
  Washington 8 x 8.
* dense assignment and point tracking (per frame pair): ``hungarian`` (tree variant) from
  GPU_MIN_ENTRIES cost entries: 5.7 ms against lsa's 11 ms at 500 x 500, 9.2 ms against 267 ms at
  2000 x 2000, 4.6 ms against 6.8 ms on 1000 x 1000 particle distances. Below: ``lsa``, 1.4 ms
  against 4.6 ms at 200 x 200, 0.65 ms against 4 ms on 300 x 300 particle distances. (The
  benchmarks in benchmarks/results show hungarian-tree up to 1588x lsa at n = 10,000.)
* point sets and frame pairs of a series from POINTS_MIN_PAIRS point pairs: ``knn`` on the CPU, as
  below; smaller ones as dense assignment. End to end on 8,000 points moved a little: 18 ms against
  1.55 s for hungarian on the GPU given the distance matrix; on two unrelated clouds of 8,000
  (knn's hard case), 1.18 s against 1.41 s (2026-11-25, benchmarks/results/points-*).
* sparse assignment: ``lapjvsp`` on the CPU at every size measured: 0.33 ms against hungarian's
  6.3 ms (on the dense form, on the GPU) at 100 x 100, 26 ms against 59 ms at 5000 x 5000 with 8
  pairs a row; the dense form also grows as rows x cols. The GPU's own choice (backend cuda) is the
  auction, which takes sparse costs as they are (2026-11-29, benchmarks/results/sparse-auction-*:
  1.2 s against sparse-sap's 5.9 s on 100,000 random rows with 6 pairs each on an H200); the dense
  form of 20,000 x 20,000 sparse costs would not be held.

Naming the backend (cuda, or cudasim, which simulates one) asks for the GPU: its algorithm runs
whatever the size. On the CPU alone (backend cpu, or no GPU), measured on a 2-core machine
(2026-11-24), the same CPU algorithms win at every size measured, except where noted:

* matching: ``pr-seq`` was fastest on 8 of 9 graphs (random bipartite 200 to 200,000 rows,
  R-MAT, road grids, Delaunay): 0.05 ms against 0.11 (Hopcroft-Karp) at 200 rows, 93 ms against
  497 ms at 200,000. Hopcroft-Karp won on a 50,000-vertex Delaunay graph (12 ms against 28 ms) but
  did not finish a 300 x 300 road grid in 12 minutes (pr-seq: 58 ms).
* flow: ``dinic``: 192 ms against wbpr's 563 ms on a 16,386-vertex Washington graph, 0.89 s
  against 3.9 s on a 16,384-vertex Genrmf one. wbpr wins only below 100 vertices, by half a
  millisecond, less than loading its compiled kernels costs.
* dense assignment and point tracking: ``lsa``: 0.03 ms against 0.24 ms (auction) at 20 x 20,
  137 ms against 192 ms (auction) and 331 ms (hungarian) at 1500 x 1500 with costs in [0, n],
  0.54 s against 5.2 s (auction) and 5.3 s (hungarian) at 3000 x 3000. Where costs have many ties
  (in [0, n/5]) hungarian was faster, by 1.7x at 3000 x 3000 (2.3 s against 3.8 s): a smaller loss
  than the 10x hungarian loses by on the spread costs. Frame pairs of 3-D particles: lsa and
  hungarian alike up to 1000 points (8-10 ms), lsa ahead at 3000 (57 ms against 150 ms).
* point sets and frame pairs (particles moving a little, 2026-11-25): ``knn`` from POINTS_MIN_PAIRS
  point pairs, end to end (solve and certificate): 5.1 ms against lsa's 12 ms at 1000 points;
  solve alone 11 ms against 45 ms at 3000, 31 ms against 355 ms at 8000, before lsa's distance
  matrix is counted. Below, ``lsa`` (as dense assignment): 0.97 ms against 1.8 ms at 300 points.
* sparse assignment: ``lapjvsp``: 2.2 ms against 43 ms (lsa on the dense form) at 1000 x 1000
  with 8 pairs a row, 0.25 s against 24 s at 10,000 x 10,000, 1.3 s at 50,000 x 50,000.
  sparse-sap took 3x as long on these random pairs (155 ms against 46 ms at 10,000, 1.8 s against
  0.64 s at 50,000), though on nearest-neighbour candidates, where its searches stay short, it is
  the faster by far (8 ms against 6.3 s at 100,000 points with 8 each): knn uses it.

Nothing here imports numba or scipy: `matchscope --help` shows CHOICE_HELP.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

GPU_MIN_EDGES = 250_000      # matching: gpr on a GPU from this many edges
GPU_MIN_FLOW_EDGES = 10_000  # flow: wbpr on a GPU from this many edges
GPU_MIN_ENTRIES = 250_000    # dense assignment (a frame pair of a series): hungarian on a GPU from 500 x 500
POINTS_MIN_PAIRS = 250_000   # point sets (a frame pair): knn from 500 x 500 points; below, as dense assignment

CPU_CHOICE = {"matching": "pr-seq", "flow": "dinic", "dense": "lsa", "sparse": "lapjvsp", "points": "knn"}
GPU_CHOICE = {"matching": ("gpr", GPU_MIN_EDGES, "edges"), "flow": ("wbpr", GPU_MIN_FLOW_EDGES, "edges"),
              "dense": ("hungarian", GPU_MIN_ENTRIES, "cost entries"), "sparse": ("auction", None, ""),
              "points": ("hungarian", None, "")}

CHOICE_HELP = """\
without --algo, the fastest algorithm for the problem on this machine (measured):
  CPU                  matching pr-seq, flow dinic, dense assignment lsa, sparse
                       assignment lapjvsp, point sets and series knn (from 500 x 500
                       points; smaller ones lsa)
  with an NVIDIA GPU   from 250,000 edges matching gpr, from 10,000 edges flow wbpr, from
                       500 x 500 dense assignment hungarian; smaller problems, sparse
                       assignment and points as on the CPU (--backend cuda: always the GPU's,
                       the auction for sparse assignment)
the summary says which it chose."""


@dataclass(frozen=True)
class Choice:
    algorithm: str
    reason: str  # "the fastest on the CPU for a flow network of ...", shown after the algorithm's name


def choose(problem, backend: str = "auto", *, kind: str | None = None) -> Choice:
    """The algorithm for ``problem`` on ``backend`` ("auto", "cpu", "cuda", "cudasim"): what
    solvers.solve runs on it unnamed. ``problem``: a Problem, or anything solve takes (a path, an
    array-like of costs, a scipy.sparse matrix, a networkx graph), read as solve reads it, with
    ``kind`` ("matching", "flow", "assignment") as solve's ``problem=``."""
    from .targets import cuda_available

    # a batch goes through as_problem too: it refuses one in the line that points to solve_batch
    if isinstance(problem, (str, os.PathLike)) or getattr(problem, "kind", None) in (None, "batch"):
        from .api_inputs import as_problem
        problem = as_problem(problem, None, kind)
    backend = (backend or "auto").lower()
    family, size, what = _measure(problem)
    if backend in ("cuda", "cudasim"):
        name = GPU_CHOICE[family][0]
        simulated = "; the GPU is simulated here" if backend == "cudasim" else ""
        return Choice(name, f"the GPU's choice for {what}{simulated}")
    if backend == "auto" and cuda_available():
        name, least, unit = GPU_CHOICE[family]
        if least is not None and size >= least:
            return Choice(name, f"the fastest with a GPU for {what}")
        why = f"under {least:,} {unit} the CPU wins" if least is not None else "the CPU wins at every size measured"
        return Choice(CPU_CHOICE[family], f"the fastest here for {what}: {why}")
    return Choice(CPU_CHOICE[family], f"the fastest on the CPU for {what}")


default_algorithm = choose  # the public name (solvers.default_algorithm): what solve and track run unnamed


def _measure(problem) -> tuple[str, int, str]:
    """(family, the size its GPU threshold counts, how the problem reads in the reason)."""
    kind = problem.kind
    if kind == "matching":
        edges = int(problem.n_edges)
        return "matching", edges, f"a matching problem with {edges:,} edges"
    if kind == "flow":
        edges = int(problem.n_edges)
        return "flow", edges, f"a flow network with {edges:,} edges"
    if kind == "points":
        sizes = problem.sizes
        largest = max((a * b for a, b in zip(sizes, sizes[1:])), default=0)
        family = "points" if largest >= POINTS_MIN_PAIRS else "dense"
        return family, largest, f"a point series (frame pairs of up to {largest:,} point pairs)"
    rows, cols = problem.shape
    if hasattr(problem, "distances"):
        family = "points" if rows * cols >= POINTS_MIN_PAIRS else "dense"
        return family, rows * cols, f"an assignment between {rows:,} and {cols:,} points"
    if hasattr(problem, "row_ptr"):  # (not hasattr(problem, "costs"): that makes a held integer matrix's float64 copy)
        return "sparse", rows * cols, f"a sparse assignment problem of {rows:,} x {cols:,}"
    return "dense", rows * cols, f"a dense assignment problem of {rows:,} x {cols:,}"
