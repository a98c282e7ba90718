"""Which algorithm runs when none is named (``matchscope solve`` without ``--algo``,
``solvers.solve(data)``, ``solvers.track(series, None)``): the fastest for the kind of problem
on this machine, from measurements, not guesses. The measurements below found no size at which
another algorithm takes over, except where noted.

With a usable NVIDIA GPU (backend auto or cuda; cudasim simulates one): ``gpr`` for matching,
``wbpr`` for flow, ``hungarian`` (tree variant) for assignment and point tracking. The
benchmarks in benchmarks/results (H100, 2026-11-23) show gpr 12.5x Hopcroft-Karp in geometric
mean, wbpr 5.3x Dinic, hungarian-tree 5x to 1588x linear_sum_assignment, all from n = 1000 up.
Sparse assignment costs are made dense for the GPU; past DENSE_LIMIT entries they stay on the
CPU with ``lapjvsp``.

On the CPU alone, measured on a 2-core machine (solve time after an untimed warm-up, best of 3):

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
* sparse assignment: ``lapjvsp``: 2.2 ms against 43 ms (lsa on the dense form) at 1000 x 1000
  with 8 pairs a row, 0.25 s against 24 s at 10,000 x 10,000, 1.3 s at 50,000 x 50,000.

Nothing here imports numba or scipy: `matchscope --help` shows CHOICE_HELP.
"""
from __future__ import annotations

from dataclasses import dataclass

DENSE_LIMIT = 10**8  # sparse costs made dense for the GPU up to this many entries (800 MB of float64)

CHOICE_HELP = """\
without --algo, the fastest algorithm for the problem on this machine (measured):
  with an NVIDIA GPU   matching gpr, flow wbpr, assignment and point series hungarian
                       (sparse costs over 10^8 entries: lapjvsp on the CPU)
  CPU only             matching pr-seq, flow dinic, dense assignment and point series lsa,
                       sparse assignment lapjvsp
the summary says which it chose."""


@dataclass(frozen=True)
class Choice:
    algorithm: str
    reason: str  # "the fastest on the CPU for a flow network", shown after the algorithm's name


def choose(problem, backend: str = "auto") -> Choice:
    """The algorithm for ``problem`` on ``backend`` ("auto", "cpu", "cuda", "cudasim")."""
    from .targets import cuda_available

    backend = (backend or "auto").lower()
    gpu = backend in ("cuda", "cudasim") or (backend == "auto" and cuda_available())
    what, entries = _what(problem)
    if problem.kind == "matching":
        name = "gpr" if gpu else "pr-seq"
    elif problem.kind == "flow":
        name = "wbpr" if gpu else "dinic"
    elif problem.kind == "assignment" and not hasattr(problem, "costs"):  # SparseCosts
        name = "hungarian" if gpu and (entries <= DENSE_LIMIT or backend != "auto") else "lapjvsp"
    elif gpu:
        name = "hungarian"
    else:
        name = "lsa"
    reason = f"the fastest {'with a GPU' if gpu else 'on the CPU'} for {what}"
    return Choice(name, reason + ("; the GPU is simulated here" if backend == "cudasim" else ""))


def _what(problem) -> tuple[str, int]:
    """How the problem reads in the reason, and the dense entries an assignment solve handles."""
    kind = problem.kind
    if kind == "matching":
        return "a matching problem", 0
    if kind == "flow":
        return "a flow network", 0
    if kind == "points":
        sizes = problem.sizes
        largest = max((a * b for a, b in zip(sizes, sizes[1:])), default=0)
        return "a point series, one dense assignment per frame pair", largest
    rows, cols = problem.shape
    if hasattr(problem, "costs"):
        return f"a dense assignment problem of {rows:,} x {cols:,}", rows * cols
    return f"a sparse assignment problem of {rows:,} x {cols:,}", rows * cols
