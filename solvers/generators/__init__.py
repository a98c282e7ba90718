"""Seeded synthetic problems imitating the families the papers benchmark on.

    from solvers.generators import KINDS, generate
    g = generate("delaunay", n=1000, seed=3)       # a validated solvers.problems object
    KINDS["delaunay"].params["n"].help             # declared parameters, defaults, help

``KINDS`` maps each kind name (the CLI's ``matchscope gen KIND``) to a GeneratorKind: ``function``,
``problem`` (the problem kind it produces), ``params`` (name -> Param with ``default``, ``help``,
type and range; ``default is REQUIRED`` for required ones), ``summary`` and ``family`` (the source
family, citing the paper or collection). Every generator takes ``seed`` (default 0), draws from
numpy's Generator (deterministic per seed) and is vectorised.

``BATCH_KINDS`` maps the kinds that build a batch of problems for ``solvers.solve_batch`` (not one
Problem: ``generate`` refuses them) to a BatchKind: ``function`` and ``summary``. ``matchscope gen``
offers the kinds of both tables.
"""
from __future__ import annotations

from . import batches, costs, flows, graphs, particles
from ._common import input_error
from ._spec import REQUIRED, SEED, BatchKind, GeneratorKind, Param


def _kind(name, function, problem, summary, family, *params: Param) -> GeneratorKind:
    return GeneratorKind(name, function, problem, summary, family,
                         {p.name: p for p in (*params, SEED)})


def _size(name: str, help_text: str, default=REQUIRED, minimum: int = 1) -> Param:
    return Param(name, int, default, help_text, minimum=minimum)


_KIND_LIST = [
    _kind("random-bipartite", graphs.random_bipartite, "matching",
          "each row joined to `degree` distinct random columns",
          "Erdős–Rényi-like random bipartite graphs (Deveci et al. 2013, G-PR)",
          _size("rows", "number of rows"), _size("cols", "number of columns"),
          _size("degree", "columns per row (<= cols)", minimum=0)),
    _kind("delaunay", graphs.delaunay, "matching",
          "Delaunay triangulation of n random points, as a symmetric n x n graph",
          "SuiteSparse/DIMACS10 delaunay_nK (Deveci et al. 2013, G-PR, Table I)",
          _size("n", "number of points", minimum=3)),
    _kind("rmat", graphs.rmat, "matching",
          "R-MAT / Graph500 Kronecker graph, 2^scale x 2^scale, symmetric",
          "Graph500 kron_g500-lognK in SuiteSparse/DIMACS10 (Deveci et al. 2013, G-PR, Table I)",
          Param("scale", int, REQUIRED, "log2 of the number of vertices", minimum=1, maximum=30),
          _size("edge_factor", "directed R-MAT edges per vertex", default=16),
          Param("a", float, 0.57, "probability of the top-left quadrant", minimum=0.0, maximum=1.0),
          Param("b", float, 0.19, "probability of the top-right quadrant", minimum=0.0, maximum=1.0),
          Param("c", float, 0.19, "probability of the bottom-left quadrant (d = 1 - a - b - c)",
                minimum=0.0, maximum=1.0)),
    _kind("road-grid", graphs.road_grid, "matching",
          "4-neighbour grid with a fraction of edges deleted, symmetric",
          "road networks, SNAP roadNet-PA/TX/CA (G-PR Table I; WBPR Table 1)",
          _size("width", "vertices per grid row"), _size("height", "vertices per grid column"),
          Param("deletion", float, 0.1, "fraction of grid edges removed", minimum=0.0, maximum=1.0)),
    _kind("powerlaw-bipartite", graphs.powerlaw_bipartite, "matching",
          "Chung-Lu bipartite graph with power-law row and column degrees",
          "KONECT user-item bipartite networks (Hsieh et al. 2024, WBPR, Table 2)",
          _size("rows", "number of rows"), _size("cols", "number of columns"),
          _size("edges", "number of distinct edges (<= rows*cols/2)", minimum=0),
          Param("exponent", float, 2.1, "power-law exponent of the degree distribution",
                minimum=1.0, exclusive_minimum=True)),
    _kind("washington-rlg", flows.washington_rlg, "flow",
          "Washington random level graph (max flow)",
          "DIMACS 1st Challenge Washington generator, Random Level Graph (WBPR Table 1, S0)",
          _size("rows", "vertices per level", minimum=3), _size("cols", "number of levels", minimum=2),
          Param("max_capacity", int, 10000, "level arcs get capacities uniform in [1, max_capacity]",
                minimum=1, maximum=2**60)),
    _kind("genrmf", flows.genrmf, "flow",
          "Genrmf: b frames of a x a grids joined by random permutations (max flow)",
          "DIMACS 1st Challenge Genrmf / RMFGEN, Goldfarb & Grigoriadis 1988 (WBPR Table 1, S1)",
          _size("a", "frame side (a x a grid)"), _size("b", "number of frames", minimum=2),
          _size("c1", "minimum capacity between frames", default=1, minimum=0),
          _size("c2", "maximum capacity between frames (in-frame arcs get c2*a*a)", default=10000,
                minimum=0)),
    _kind("dense-lap", costs.dense_lap, "assignment",
          "dense costs uniform in [0, k*n]",
          "Date & Nagi 2016 (GPU Hungarian), Section 6: uniform integer costs, k = 1/5, 1, 10",
          _size("n", "number of rows"),
          Param("cols", int, None, "number of columns (default: n, square)", minimum=1, optional=True),
          Param("k", float, 1.0, "cost range factor: costs in [0, k*n]", minimum=0.0, exclusive_minimum=True),
          Param("integer", bool, True, "integer costs (else floats)")),
    _kind("sparse-lap", costs.sparse_lap, "assignment",
          "sparse costs with a hidden complete assignment",
          "sparse LAP instances for LAPJVsp-style solvers (Jonker & Volgenant 1987)",
          _size("rows", "number of rows"), _size("cols", "number of columns"),
          _size("degree", "allowed columns per row (<= cols)"),
          Param("max_cost", int, 100, "costs are integers uniform in [1, max_cost]", minimum=1,
                maximum=2**53)),
    _kind("particles", particles.particles, "points",
          "3-D particles moving in a box, with ground-truth ids",
          "Vasconcelos & Rosenhahn 2009 (GPU auction), Section 6: persistent random motion in 3-D",
          _size("n", "particles in the first frame", minimum=0),
          _size("frames", "number of frames", default=10),
          Param("persistence", float, 0.5, "share of the previous direction kept each step (0..1)",
                minimum=0.0, maximum=1.0),
          Param("box", float, 1.0, "side of the cube [0, box]^3", minimum=0.0, exclusive_minimum=True),
          Param("speed", float, 0.01, "distance moved per frame", minimum=0.0),
          Param("enter_rate", float, 0.0, "new particles per frame, as a fraction of n (Poisson)",
                minimum=0.0),
          Param("leave_rate", float, 0.0, "probability a particle leaves between frames",
                minimum=0.0, maximum=1.0)),
]

KINDS: dict[str, GeneratorKind] = {k.name: k for k in _KIND_LIST}

BATCH_KINDS: dict[str, BatchKind] = {k.name: k for k in [
    BatchKind("dense-lap-batch", batches.dense_lap_batch,
              "a batch of dense assignment problems (.npy, or ragged .npz)"),
]}


def generate(kind: str, **params):
    """Build the ``kind`` problem from ``params`` (declared in ``KINDS[kind].params``; seed default 0).

    Raises InputError (no path) for an unknown kind, unknown or missing parameters, or
    values of the wrong type or out of range.
    """
    if isinstance(kind, str) and kind in BATCH_KINDS:
        function = BATCH_KINDS[kind].function
        raise input_error(f"{kind} builds a batch of problems, not one: call {function.__module__}."
                          f"{function.__name__}(...) and solvers.solve_batch, or run `matchscope gen {kind}`")
    entry = KINDS.get(kind) if isinstance(kind, str) else None
    if entry is None:
        raise input_error(f"unknown generator kind {kind!r}; choose one of: {', '.join(KINDS)}")
    return entry.function(**entry.check(params))


__all__ = ["BATCH_KINDS", "KINDS", "REQUIRED", "BatchKind", "GeneratorKind", "Param", "generate"]
