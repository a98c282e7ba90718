"""Bipartite graphs for maximum-cardinality matching, imitating the families the papers test on.

Square symmetric graphs (delaunay, rmat, road-grid) are the adjacency matrix of an undirected graph
read as a bipartite graph rows x cols, as the G-PR paper (Deveci et al. 2013, Table I) does with
SuiteSparse matrices: vertex v is both row v and column v, and edge {u, v} is the pair of entries
(u, v) and (v, u).
"""
from __future__ import annotations

import numpy as np

from ..problems import BipartiteGraph
from ._common import (BYTES_PER_EDGE, distinct_per_row, first_occurrences, guard_size, input_error, make_rng,
                      require, source_name)


def _symmetric(u: np.ndarray, v: np.ndarray, n: int, kind: str) -> BipartiteGraph:
    """n x n bipartite graph holding (u, v) and (v, u) for every undirected edge {u, v}."""
    return BipartiteGraph.from_edges(np.concatenate([u, v]), np.concatenate([v, u]), n, n,
                                     source_name(kind))


def random_bipartite(rows: int, cols: int, degree: int, seed: int = 0) -> BipartiteGraph:
    """Each row is joined to ``degree`` distinct columns chosen uniformly at random.

    Source family: the Erdős–Rényi-like random bipartite graphs used to exercise matching codes
    (Deveci et al. 2013, G-PR): every row has degree exactly ``degree``; column degrees are
    binomial. Edges: rows * degree.
    """
    require(degree <= cols, f"degree ({degree}) must be <= cols ({cols})")
    guard_size(rows * degree, BYTES_PER_EDGE, f"random-bipartite with {rows * degree} edges")
    rng = make_rng(seed)
    chosen = distinct_per_row(rng, rows, cols, degree)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), degree)
    return BipartiteGraph.from_edges(row_of, chosen.ravel(), rows, cols, source_name("random-bipartite"))


def delaunay_points(n: int, seed: int = 0) -> np.ndarray:
    """The (n, 2) points in the unit square that ``delaunay(n, seed)`` triangulates (for layouts)."""
    return make_rng(seed).random((n, 2))


def delaunay(n: int, seed: int = 0) -> BipartiteGraph:
    """Adjacency of the Delaunay triangulation of n uniform random points in the unit square.

    Source family: SuiteSparse/DIMACS10 ``delaunay_nK`` (n = 2^K random points), the G-PR paper's
    Table I (delaunay_n20 .. n24). Planar: at most 3n - 6 undirected edges (exactly 3n - 3 - h for
    h hull points), stored both ways, so the n x n graph is symmetric with an empty diagonal.
    """
    require(n >= 3, f"n must be >= 3 to triangulate, got {n}")
    guard_size(6 * n, BYTES_PER_EDGE, f"delaunay with {n} points")
    from scipy.spatial import Delaunay  # here: listing generators stays light
    tri = Delaunay(delaunay_points(n, seed))
    s = tri.simplices.astype(np.int64)
    u = np.concatenate([s[:, 0], s[:, 1], s[:, 2]])
    v = np.concatenate([s[:, 1], s[:, 2], s[:, 0]])
    return _symmetric(u, v, n, "delaunay")


def rmat_edges(rng: np.random.Generator, scale: int, n_edges: int, a: float, b: float,
               c: float) -> tuple[np.ndarray, np.ndarray]:
    """Directed R-MAT edges before relabelling (Graph500 kernel generator, vectorised per bit).

    Each edge picks, for each of ``scale`` bit levels, one quadrant of the adjacency matrix with
    probabilities a (top-left), b (top-right), c (bottom-left), d = 1 - a - b - c (bottom-right).
    """
    ab = a + b
    c_norm = c / (1.0 - ab) if ab < 1.0 else 0.0
    a_norm = a / ab if ab > 0.0 else 0.0
    u = np.zeros(n_edges, dtype=np.int64)
    v = np.zeros(n_edges, dtype=np.int64)
    for bit in range(scale):
        row_bit = rng.random(n_edges) > ab
        col_bit = rng.random(n_edges) > np.where(row_bit, c_norm, a_norm)
        u |= row_bit.astype(np.int64) << bit
        v |= col_bit.astype(np.int64) << bit
    return u, v


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 0) -> BipartiteGraph:
    """R-MAT / Graph500 Kronecker graph on 2^scale vertices, symmetrised, as a square bipartite graph.

    Source family: Graph500 ``kron_g500-lognK`` (SuiteSparse DIMACS10), the G-PR paper's Table I
    (kron_g500-logn20, logn21): edge_factor * 2^scale directed R-MAT edges with the Graph500
    initiator (a, b, c) = (0.57, 0.19, 0.19); vertex labels randomly permuted (as Graph500 does),
    then made undirected; duplicates merge, self-loops stay (diagonal entries), as in kron_g500.
    Degrees are heavily skewed.
    """
    require(a + b + c <= 1.0 + 1e-12, f"a + b + c must be <= 1 (d = 1 - a - b - c), got {a + b + c:g}")
    n = 1 << scale
    m = edge_factor * n
    guard_size(2 * m, BYTES_PER_EDGE, f"rmat with {m} edges")
    rng = make_rng(seed)
    u, v = rmat_edges(rng, scale, m, a, b, c)
    label = rng.permutation(n)
    return _symmetric(label[u], label[v], n, "rmat")


def road_grid(width: int, height: int, deletion: float = 0.1, seed: int = 0) -> BipartiteGraph:
    """2-D 4-neighbour grid (width x height vertices) with a random fraction of its edges removed.

    Source family: road networks (SNAP roadNet-PA/TX/CA in the G-PR and WBPR papers): planar,
    low degree (<= 4 here), large diameter. Exactly round(deletion * E) of the E grid edges are
    removed, chosen uniformly. Vertex (x, y) is y * width + x; the graph is symmetric.
    """
    n = width * height
    guard_size(4 * n, BYTES_PER_EDGE, f"road-grid with {n} vertices")
    ids = np.arange(n, dtype=np.int64).reshape(height, width)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    rng = make_rng(seed)
    n_deleted = int(round(deletion * u.size))
    keep = np.sort(rng.permutation(u.size)[n_deleted:])
    return _symmetric(u[keep], v[keep], n, "road-grid")


def _chung_lu_weights(n: int, exponent: float) -> np.ndarray:
    """Expected-degree weights w_i ~ i^(-1/(exponent-1)): degrees follow P(k) ~ k^-exponent."""
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    return w / w.sum()


# Largest batch of endpoint draws per round (bounds memory); rounds bound the retries.
_MAX_DRAWS_PER_ROUND = 1 << 23
_MAX_ROUNDS = 400


def powerlaw_bipartite(rows: int, cols: int, edges: int, exponent: float = 2.1,
                       seed: int = 0) -> BipartiteGraph:
    """Chung–Lu bipartite graph whose row and column degrees follow a power law.

    Source family: KONECT user–item bipartite networks (the WBPR paper's matching inputs, Hsieh et
    al. 2024, Table 2: movielens, BookCrossing, stackoverflow...). Row i has weight
    i^(-1/(exponent-1)) (likewise columns): endpoints of each pair are drawn independently by
    weight, the first ``edges`` distinct pairs are kept (exactly ``edges`` edges), then row and
    column labels are randomly permuted so that degree does not follow the index.
    """
    require(exponent > 1.0, f"exponent must be > 1, got {exponent:g}")
    require(edges <= rows * cols // 2,
            f"edges ({edges}) must be at most half of rows * cols ({rows * cols // 2}) so that "
            "distinct pairs can be drawn")
    guard_size(2 * edges, BYTES_PER_EDGE, f"powerlaw-bipartite with {edges} edges")
    rng = make_rng(seed)
    row_cdf = np.cumsum(_chung_lu_weights(rows, exponent))
    col_cdf = np.cumsum(_chung_lu_weights(cols, exponent))
    drawn: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    n_distinct, new_fraction = 0, 1.0
    for _ in range(_MAX_ROUNDS):
        deficit = edges - n_distinct
        if deficit <= 0:
            break
        n_draw = int(min(_MAX_DRAWS_PER_ROUND, max(1024, 1.2 * deficit / max(new_fraction, 1e-3))))
        # searchsorted on the CDF is what Generator.choice(p=...) does, without its per-call checks
        r = np.minimum(np.searchsorted(row_cdf, rng.random(n_draw) * row_cdf[-1], side="right"), rows - 1)
        c = np.minimum(np.searchsorted(col_cdf, rng.random(n_draw) * col_cdf[-1], side="right"), cols - 1)
        drawn.append(r * cols + c)
        before, n_distinct = n_distinct, first_occurrences(np.concatenate(drawn)).size
        new_fraction = (n_distinct - before) / n_draw
    if n_distinct < edges:
        raise input_error(f"could place only {n_distinct} of {edges} distinct edges with exponent "
                          f"{exponent:g}; ask for fewer edges or a larger exponent")
    # keep the first `edges` distinct pairs in draw order
    everything = np.concatenate(drawn)
    keys = everything[first_occurrences(everything)[:edges]]
    row_label, col_label = rng.permutation(rows), rng.permutation(cols)
    return BipartiteGraph.from_edges(row_label[keys // cols], col_label[keys % cols], rows, cols,
                                     source_name("powerlaw-bipartite"))
