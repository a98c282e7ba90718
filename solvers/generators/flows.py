"""Maximum-flow networks from the 1st DIMACS Implementation Challenge generators.

The WBPR paper (Hsieh et al. 2024, Table 1) runs on Washington-RLG (S0: 262,146 vertices,
785,920 edges, i.e. 512 x 512) and Genrmf (S1: 2,097,152 vertices, 10,403,840 edges, i.e.
a = b = 128). Both generators here build the same structure as the DIMACS C programs with
numpy's RNG (the instances are the same family, not the same bytes).
"""
from __future__ import annotations

import numpy as np

from ..exact import INT64_MAX
from ..problems import FlowNetwork
from ._common import BYTES_PER_EDGE, distinct_per_row, guard_size, make_rng, require, source_name


def washington_rlg(rows: int, cols: int, max_capacity: int = 10000, seed: int = 0) -> FlowNetwork:
    """DIMACS Washington generator, function 2: Random Level Graph (RLevel in washington.c).

    ``cols`` levels of ``rows`` vertices each. Vertex 0 is the source, level i (0-based) holds
    vertices i*rows + 1 .. i*rows + rows, and rows*cols + 1 is the sink. The source feeds every
    vertex of the first level and every vertex of the last level feeds the sink, with capacity
    3 * max_capacity; each other vertex has arcs to 3 distinct random vertices of the next level
    with capacities uniform in [1, max_capacity]. Vertices: rows*cols + 2; arcs:
    2*rows + 3*rows*(cols - 1).
    """
    require(rows >= 3, f"rows must be >= 3 (each vertex picks 3 distinct vertices of the next level), got {rows}")
    require(cols >= 2, f"cols must be >= 2 levels, got {cols}")
    n_arcs = 2 * rows + 3 * rows * (cols - 1)
    guard_size(n_arcs, BYTES_PER_EDGE, f"washington-rlg with {n_arcs} arcs")
    rng = make_rng(seed)
    n = rows * cols + 2
    source, sink = 0, n - 1
    first = np.arange(1, rows + 1, dtype=np.int64)
    last = np.arange(n - 1 - rows, n - 1, dtype=np.int64)
    # level arcs: vertex (level i, position j) -> (level i + 1, 3 distinct positions)
    tails = np.arange(1, rows * (cols - 1) + 1, dtype=np.int64)
    level_of = (tails - 1) // rows
    heads = (level_of + 1)[:, None] * rows + 1 + distinct_per_row(rng, tails.size, rows, 3)
    level_cap = rng.integers(1, max_capacity + 1, size=heads.size, dtype=np.int64)
    tail = np.concatenate([np.full(rows, source), last, np.repeat(tails, 3)])
    head = np.concatenate([first, np.full(rows, sink), heads.ravel()])
    cap = np.concatenate([np.full(2 * rows, 3 * max_capacity, dtype=np.int64), level_cap])
    return FlowNetwork.from_edges(n, tail, head, cap, source, sink, source_name("washington-rlg"))


def genrmf(a: int, b: int, c1: int = 1, c2: int = 10000, seed: int = 0) -> FlowNetwork:
    """DIMACS Genrmf (RMFGEN of Goldfarb & Grigoriadis 1988, code by T. Badics; Derigs & Meier 1989).

    ``b`` frames, each an a x a grid whose vertices are joined to their 4 grid neighbours both
    ways with capacity c2*a*a; each vertex of frame z has one arc to frame z + 1 through a random
    permutation (a fresh one per frame), with capacity uniform in [c1, c2]. Vertex
    z*a*a + x*a + y is (frame z, row x, column y); the source is vertex 0 (the corner of the
    first frame), the sink a*a*b - 1 (the opposite corner of the last). Vertices: a*a*b; arcs:
    5*a*a*b - 4*a*b - a*a.
    """
    require(b >= 2, f"b must be >= 2 frames, got {b}")
    require(c1 <= c2, f"c1 ({c1}) must be <= c2 ({c2})")
    aa = a * a
    require(c2 * aa <= INT64_MAX, f"in-frame capacity c2*a*a = {c2 * aa} does not fit in 64 bits "
                                  "(at most 2^63 - 1)")
    n = aa * b
    n_arcs = 5 * aa * b - 4 * a * b - aa
    guard_size(n_arcs, BYTES_PER_EDGE, f"genrmf with {n_arcs} arcs")
    rng = make_rng(seed)
    grid = np.arange(aa, dtype=np.int64).reshape(a, a)
    # one frame's in-frame arcs, both directions, then shifted to every frame
    u = np.concatenate([grid[:, :-1].ravel(), grid[:-1, :].ravel()])
    v = np.concatenate([grid[:, 1:].ravel(), grid[1:, :].ravel()])
    frame_tail, frame_head = np.concatenate([u, v]), np.concatenate([v, u])
    offsets = (np.arange(b, dtype=np.int64) * aa)[:, None]
    in_tail = (offsets + frame_tail).ravel()
    in_head = (offsets + frame_head).ravel()
    in_cap = np.full(in_tail.size, c2 * aa, dtype=np.int64)
    # between frames: vertex k of frame z -> vertex perm_z[k] of frame z + 1
    perms = rng.permuted(np.tile(np.arange(aa, dtype=np.int64), (b - 1, 1)), axis=1)
    between_tail = (offsets[:-1] + np.arange(aa, dtype=np.int64)).ravel()
    between_head = (offsets[1:] + perms).ravel()
    between_cap = rng.integers(c1, c2 + 1, size=between_tail.size, dtype=np.int64)
    return FlowNetwork.from_edges(n, np.concatenate([between_tail, in_tail]),
                                  np.concatenate([between_head, in_head]),
                                  np.concatenate([between_cap, in_cap]), 0, n - 1, source_name("genrmf"))
