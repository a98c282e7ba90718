"""Seeded generators: registry, determinism, documented sizes and ranges, structure, failure paths.

Oracles: networkx (grid graphs, planarity), scipy (convex hull, matchings, BFS, max flow,
chi-square) and a brute-force empty-circumcircle Delaunay construction.
"""
import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import breadth_first_order, maximum_bipartite_matching, maximum_flow
from scipy.spatial import ConvexHull
from scipy.stats import chisquare

from solvers import BipartiteGraph, CostMatrix, FlowNetwork, InputError, PointSeries, SparseCosts, generate
from solvers.generators import KINDS, REQUIRED
from solvers.generators._common import distinct_per_row, first_occurrences
from solvers.generators.graphs import delaunay_points, rmat_edges
from solvers.generators.particles import reflect_into_box
from solvers.problems import PROBLEM_KINDS

SMALL = {
    "random-bipartite": dict(rows=40, cols=30, degree=3),
    "delaunay": dict(n=60),
    "rmat": dict(scale=6, edge_factor=4),
    "road-grid": dict(width=9, height=7),
    "powerlaw-bipartite": dict(rows=50, cols=40, edges=300),
    "washington-rlg": dict(rows=5, cols=4),
    "genrmf": dict(a=3, b=3),
    "dense-lap": dict(n=12, cols=15),
    "sparse-lap": dict(rows=30, cols=30, degree=3),
    "particles": dict(n=25, frames=4, enter_rate=0.2, leave_rate=0.1),
}
TYPES = {"matching": BipartiteGraph, "flow": FlowNetwork, "points": PointSeries}


def arrays_of(problem) -> list[np.ndarray]:
    """Every array that defines the problem, for equality checks."""
    if isinstance(problem, BipartiteGraph):
        return [problem.row_ptr, problem.col_ind, np.array(problem.shape)]
    if isinstance(problem, FlowNetwork):
        return [problem.tail, problem.head, problem.capacity,
                np.array([problem.n_vertices, problem.source_vertex, problem.sink_vertex])]
    if isinstance(problem, CostMatrix):
        return [problem.costs]
    if isinstance(problem, SparseCosts):
        return [problem.row_ptr, problem.col_ind, problem.cost, np.array(problem.shape)]
    return [*problem.frames, *problem.ids]


def same(p, q) -> bool:
    a, b = arrays_of(p), arrays_of(q)
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def undirected_edges(g: BipartiteGraph) -> set[tuple[int, int]]:
    r, c = g.edges()
    return {(min(a, b), max(a, b)) for a, b in zip(r.tolist(), c.tolist())}


def assert_symmetric_without_diagonal(g: BipartiteGraph):
    a = g.to_sparse()
    assert g.n_rows == g.n_cols
    assert (a != a.T).nnz == 0
    assert a.diagonal().sum() == 0


# ---------------------------------------------------------------------------------------------
# registry and determinism


def test_every_kind_is_documented_and_takes_a_seed():
    assert set(SMALL) == set(KINDS)
    for name, entry in KINDS.items():
        assert entry.name == name and callable(entry.function)
        assert entry.problem in PROBLEM_KINDS
        assert entry.family and entry.summary
        assert entry.params["seed"].default == 0
        assert all(p.help for p in entry.params.values())
        required = {p.name for p in entry.params.values() if p.default is REQUIRED}
        assert required and required <= set(SMALL[name])
        assert entry["params"] is entry.params  # mapping-style access for dict-minded callers
        doc = entry.function.__doc__ or ""
        assert "family" in doc.lower() or "DIMACS" in doc, f"{name}: docstring must name its source family"


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_same_seed_same_problem_other_seed_differs(kind):
    entry = KINDS[kind]
    first = generate(kind, **SMALL[kind], seed=7)
    assert isinstance(first, TYPES.get(entry.problem, (CostMatrix, SparseCosts)))
    assert first.kind == entry.problem
    assert same(first, generate(kind, **SMALL[kind], seed=7))
    assert same(generate(kind, **SMALL[kind]), generate(kind, **SMALL[kind], seed=0))
    assert not same(first, generate(kind, **SMALL[kind], seed=8))


def test_parameters_given_as_text_are_converted():
    assert same(generate("random-bipartite", rows="40", cols="30", degree="3", seed="5"),
                generate("random-bipartite", rows=40, cols=30, degree=3, seed=5))
    assert same(generate("dense-lap", n=np.int64(5), integer="false", k="0.2", cols="none"),
                generate("dense-lap", n=5, integer=False, k=0.2))
    assert same(generate("road-grid", width=4.0, height=3, deletion="0"), generate("road-grid", width=4, height=3,
                                                                                    deletion=0.0))


# ---------------------------------------------------------------------------------------------
# failure paths


def _raises(kind, message_parts, **params) -> InputError:
    with pytest.raises(InputError) as info:
        generate(kind, **params)
    err = info.value
    assert err.path is None and err.line is None
    for part in message_parts:
        assert part in err.message, err.message
    assert str(err) == err.message  # about parameters, not a file: no "<generate>:" prefix
    return err


def test_unknown_kind_names_the_allowed_ones():
    _raises("erdos", ["'erdos'", "random-bipartite", "particles"], n=3)
    _raises(None, ["None"])


def test_a_batch_kind_is_not_made_by_generate_and_says_what_does():
    from solvers.generators import BATCH_KINDS
    for kind, entry in BATCH_KINDS.items():
        _raises(kind, [f"{kind} builds a batch", entry.function.__name__, "solvers.solve_batch",
                       f"matchscope gen {kind}"])


def test_unknown_and_missing_parameters_are_named():
    _raises("delaunay", ["unknown parameter size", "allowed: n, seed"], size=10)
    _raises("random-bipartite", ["missing required parameter cols, degree"], rows=3)


SIZE_PARAMS = [(kind, name) for kind, entry in KINDS.items() for name, p in entry.params.items()
               if p.type is int and name in SMALL[kind] or name == "seed"]


@pytest.mark.parametrize("kind, name", SIZE_PARAMS)
def test_negative_sizes_are_refused(kind, name):
    _raises(kind, [kind, f"parameter {name}", ">="], **{**SMALL[kind], name: -1})


@pytest.mark.parametrize("value", [1.5, -0.1, "lots", float("nan"), None, True])
def test_bad_persistence_is_refused(value):
    _raises("particles", ["parameter persistence"], n=5, persistence=value)


@pytest.mark.parametrize("kind, params, parts", [
    ("random-bipartite", dict(rows=5, cols=4, degree=2.5), ["degree", "integer"]),
    ("random-bipartite", dict(rows=True, cols=4, degree=2), ["rows", "integer"]),
    ("random-bipartite", dict(rows="ten", cols=4, degree=2), ["rows", "'ten'"]),
    ("random-bipartite", dict(rows=5, cols=4, degree=5), ["degree (5) must be <= cols (4)"]),
    ("random-bipartite", dict(rows=5, cols=0, degree=0), ["cols", ">= 1"]),
    ("delaunay", dict(n=2), ["n", ">= 3"]),
    ("rmat", dict(scale=4, a=0.5, b=0.3, c=0.3), ["a + b + c"]),
    ("rmat", dict(scale=31), ["scale", "<= 30"]),
    ("road-grid", dict(width=3, height=3, deletion=1.5), ["deletion", "<= 1"]),
    ("powerlaw-bipartite", dict(rows=4, cols=4, edges=9), ["at most half"]),
    ("powerlaw-bipartite", dict(rows=4, cols=4, edges=3, exponent=1.0), ["exponent", "> 1"]),
    ("washington-rlg", dict(rows=2, cols=4), ["rows", ">= 3"]),
    ("washington-rlg", dict(rows=4, cols=4, max_capacity=0), ["max_capacity"]),
    ("genrmf", dict(a=3, b=1), ["b", ">= 2"]),
    ("genrmf", dict(a=3, b=2, c1=9, c2=3), ["c1 (9) must be <= c2 (3)"]),
    ("genrmf", dict(a=1000, b=2, c2=2**60), ["c2*a*a", "64 bits"]),
    ("sparse-lap", dict(rows=4, cols=4, degree=2, max_cost=2**60), ["max_cost", "<="]),
    ("dense-lap", dict(n=4, k=0), ["k", "> 0"]),
    ("dense-lap", dict(n=4, k=float("inf")), ["k", "finite"]),
    ("dense-lap", dict(n=4, integer="maybe"), ["integer", "true or false"]),
    ("dense-lap", dict(n=None), ["n", "needs a value"]),
    ("sparse-lap", dict(rows=4, cols=3, degree=4), ["degree (4)", "cols (3)"]),
    ("particles", dict(n=4, box=0), ["box", "> 0"]),
    ("particles", dict(n=4, leave_rate=2), ["leave_rate"]),
    ("particles", dict(n=4, enter_rate=-1), ["enter_rate"]),
    ("particles", dict(n=4, frames=0), ["frames"]),
])
def test_bad_values_are_refused_with_the_parameter_named(kind, params, parts):
    _raises(kind, parts, **params)


@pytest.mark.parametrize("kind, params", [
    ("random-bipartite", dict(rows=10**12, cols=10**12, degree=100)),
    ("dense-lap", dict(n=10**7)),
    ("rmat", dict(scale=30, edge_factor=64)),
    ("particles", dict(n=10**12, frames=100)),
    ("particles", dict(n=1000, frames=100, enter_rate=10**9)),
])
def test_impossible_sizes_are_refused_before_allocating(kind, params):
    _raises(kind, ["would need", "GiB"], **params)


# ---------------------------------------------------------------------------------------------
# sampling helpers


@pytest.mark.parametrize("n_values, k", [(5, 2), (5, 4), (6, 6)])
def test_distinct_per_row_draws_uniform_subsets(n_values, k):
    rows = 12000
    chosen = distinct_per_row(np.random.default_rng(3), rows, n_values, k)
    assert chosen.shape == (rows, k)
    ordered = np.sort(chosen, axis=1)
    assert np.all(ordered[:, 1:] != ordered[:, :-1])
    subsets = list(itertools.combinations(range(n_values), k))
    index = {s: i for i, s in enumerate(subsets)}
    counts = np.bincount([index[tuple(r)] for r in ordered.tolist()], minlength=len(subsets))
    if len(subsets) > 1:
        assert chisquare(counts).pvalue > 1e-4
    # positions are in random order too: the first slot is uniform over the values
    assert chisquare(np.bincount(chosen[:, 0], minlength=n_values)).pvalue > 1e-4


def test_first_occurrences_matches_numpy_unique():
    values = np.random.default_rng(1).integers(0, 50, 400)
    _, expected = np.unique(values, return_index=True)
    assert np.array_equal(first_occurrences(values), np.sort(expected))


# ---------------------------------------------------------------------------------------------
# matching graphs


@given(st.integers(1, 30), st.integers(1, 30), st.data(), st.integers(0, 2**32))
@settings(max_examples=40)
def test_random_bipartite_rows_have_exactly_degree_distinct_columns(rows, cols, data, seed):
    degree = data.draw(st.integers(0, cols))
    g = generate("random-bipartite", rows=rows, cols=cols, degree=degree, seed=seed)
    assert g.shape == (rows, cols) and g.n_edges == rows * degree
    assert np.all(g.row_degrees() == degree)


def _brute_force_delaunay_edges(points: np.ndarray) -> set[tuple[int, int]]:
    """Edges of every triangle whose circumcircle holds no other point (O(n^4), tiny n only)."""
    n = len(points)
    tri = np.array(list(itertools.combinations(range(n), 3)))
    a, b, c = points[tri[:, 0]], points[tri[:, 1]], points[tri[:, 2]]
    orient = np.sign((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))
    rel = [p[:, None, :] - points[None, :, :] for p in (a, b, c)]  # (triangles, points, 2)
    rows = [np.stack([r[..., 0], r[..., 1], (r ** 2).sum(-1)], axis=-1) for r in rel]
    incircle = np.linalg.det(np.stack(rows, axis=-2)) * orient[:, None]
    incircle[np.arange(len(tri))[:, None], tri] = 0.0  # a triangle's own corners are on the circle
    empty = (orient != 0) & np.all(incircle <= 1e-12, axis=1)
    return {e for i, j, k in tri[empty].tolist() for e in ((i, j), (j, k), (i, k))}


@given(st.integers(3, 22), st.integers(0, 2**32))
@settings(max_examples=25)
def test_delaunay_matches_a_brute_force_empty_circle_triangulation(n, seed):
    g = generate("delaunay", n=n, seed=seed)
    assert undirected_edges(g) == _brute_force_delaunay_edges(delaunay_points(n, seed))
    assert_symmetric_without_diagonal(g)


@pytest.mark.parametrize("n, seed", [(3, 0), (50, 1), (400, 2), (2000, 3)])
def test_delaunay_is_a_planar_triangulation(n, seed):
    g = generate("delaunay", n=n, seed=seed)
    assert_symmetric_without_diagonal(g)
    undirected = undirected_edges(g)
    assert g.n_edges == 2 * len(undirected)
    hull = ConvexHull(delaunay_points(n, seed)).vertices.size
    assert len(undirected) == 3 * n - 3 - hull  # a triangulation of n points with h on the hull
    assert len(undirected) <= max(3 * n - 6, 3)
    planar, _ = nx.check_planarity(nx.Graph(list(undirected)))
    assert planar


def test_rmat_quadrant_frequencies_follow_the_initiator():
    a, b, c = 0.57, 0.19, 0.19
    u, v = rmat_edges(np.random.default_rng(0), 10, 200_000, a, b, c)
    assert u.min() >= 0 and max(u.max(), v.max()) < 1024
    for bit in (0, 9):
        ru, cv = (u >> bit) & 1, (v >> bit) & 1
        observed = [np.mean((ru == i) & (cv == j)) for i, j in ((0, 0), (0, 1), (1, 0), (1, 1))]
        np.testing.assert_allclose(observed, [a, b, c, 1 - a - b - c], atol=0.006)


def test_rmat_is_symmetric_and_skewed():
    scale, factor = 11, 8
    g = generate("rmat", scale=scale, edge_factor=factor, seed=4)
    n = 1 << scale
    a = g.to_sparse()
    assert g.shape == (n, n) and (a != a.T).nnz == 0
    assert g.n_edges <= 2 * factor * n
    uniform = generate("rmat", scale=scale, edge_factor=factor, a=0.25, b=0.25, c=0.25, seed=4)
    # the Graph500 initiator concentrates edges: hubs far above the Erdős–Rényi-like uniform case
    assert g.row_degrees().max() > 4 * uniform.row_degrees().max()
    assert uniform.row_degrees().max() < 6 * 2 * factor
    # labels are permuted as in Graph500: the hubs are not the low indices
    rank_corr = np.corrcoef(np.arange(n), np.argsort(np.argsort(g.row_degrees())))[0, 1]
    assert abs(rank_corr) < 0.1


@pytest.mark.parametrize("width, height", [(1, 1), (1, 6), (5, 1), (7, 4), (30, 30)])
def test_road_grid_without_deletion_is_the_grid_graph(width, height):
    g = generate("road-grid", width=width, height=height, deletion=0.0)
    expected = {tuple(sorted((y1 * width + x1, y2 * width + x2)))
                for (y1, x1), (y2, x2) in nx.grid_2d_graph(height, width).edges()}
    assert undirected_edges(g) == expected
    assert_symmetric_without_diagonal(g)


@given(st.integers(1, 25), st.integers(1, 25), st.floats(0, 1), st.integers(0, 2**32))
@settings(max_examples=30)
def test_road_grid_deletes_the_documented_fraction(width, height, deletion, seed):
    g = generate("road-grid", width=width, height=height, deletion=deletion, seed=seed)
    grid_edges = height * (width - 1) + width * (height - 1)
    kept = undirected_edges(g)
    assert len(kept) == grid_edges - int(round(deletion * grid_edges))
    assert g.row_degrees().max(initial=0) <= 4
    assert_symmetric_without_diagonal(g)
    for u, v in kept:  # only grid neighbours
        (uy, ux), (vy, vx) = divmod(u, width), divmod(v, width)
        assert abs(uy - vy) + abs(ux - vx) == 1


def _rank_degree_slope(degrees: np.ndarray, ranks=slice(9, 300)) -> float:
    ordered = np.sort(degrees)[::-1][ranks]
    k = np.arange(ranks.start + 1, ranks.stop + 1)
    return float(np.polyfit(np.log(k), np.log(ordered), 1)[0])


@pytest.mark.parametrize("exponent", [2.1, 3.0])
def test_powerlaw_degrees_follow_the_exponent(exponent):
    rows, cols, edges = 20000, 15000, 120000
    g = generate("powerlaw-bipartite", rows=rows, cols=cols, edges=edges, exponent=exponent, seed=2)
    assert g.shape == (rows, cols) and g.n_edges == edges
    # Chung–Lu weights i^(-1/(exponent-1)) give degree ~ rank^(-1/(exponent-1)) among the hubs
    expected = -1.0 / (exponent - 1.0)
    assert abs(_rank_degree_slope(g.row_degrees()) - expected) < 0.15
    assert abs(_rank_degree_slope(g.col_degrees()) - expected) < 0.15
    # labels are permuted: degree does not follow the index
    rank_corr = np.corrcoef(np.arange(rows), np.argsort(np.argsort(g.row_degrees())))[0, 1]
    assert abs(rank_corr) < 0.05


@given(st.integers(1, 20), st.integers(2, 20), st.data(), st.integers(0, 2**32))
@settings(max_examples=30)
def test_powerlaw_has_exactly_the_requested_edges(rows, cols, data, seed):
    edges = data.draw(st.integers(0, rows * cols // 2))
    g = generate("powerlaw-bipartite", rows=rows, cols=cols, edges=edges, exponent=2.1, seed=seed)
    assert g.n_edges == edges


# ---------------------------------------------------------------------------------------------
# flow networks


def _reaches(net: FlowNetwork) -> bool:
    positive = net.capacity > 0
    adj = sp.csr_matrix((np.ones(int(positive.sum())), (net.tail[positive], net.head[positive])),
                        shape=(net.n_vertices, net.n_vertices))
    return net.sink_vertex in set(breadth_first_order(adj, net.source_vertex, directed=True,
                                                      return_predecessors=False).tolist())


def _max_flow_value(net: FlowNetwork) -> int:
    return int(maximum_flow(net.to_sparse().astype(np.int32), net.source_vertex, net.sink_vertex).flow_value)


@given(st.integers(3, 9), st.integers(2, 7), st.integers(1, 50), st.integers(0, 2**32))
@settings(max_examples=30)
def test_washington_rlg_has_the_dimacs_structure(rows, cols, cap, seed):
    net = generate("washington-rlg", rows=rows, cols=cols, max_capacity=cap, seed=seed)
    n = rows * cols + 2
    assert (net.n_vertices, net.source_vertex, net.sink_vertex) == (n, 0, n - 1)
    assert net.n_edges == 2 * rows + 3 * rows * (cols - 1)
    t, h, c = net.tail.astype(int), net.head.astype(int), net.capacity
    from_source, to_sink = t == 0, h == n - 1
    assert sorted(h[from_source].tolist()) == list(range(1, rows + 1))
    assert sorted(t[to_sink].tolist()) == list(range(n - 1 - rows, n - 1))
    assert np.all(c[from_source | to_sink] == 3 * cap)
    inner = ~(from_source | to_sink)
    assert c[inner].min() >= 1 and c[inner].max() <= cap
    level_t, level_h = (t[inner] - 1) // rows, (h[inner] - 1) // rows
    assert np.all(level_h == level_t + 1)
    out = {}
    for a, b in zip(t[inner].tolist(), h[inner].tolist()):
        out.setdefault(a, set()).add(b)
    assert len(out) == rows * (cols - 1) and all(len(s) == 3 for s in out.values())
    assert _reaches(net)
    assert 0 < _max_flow_value(net) <= 3 * cap * rows


@given(st.integers(1, 6), st.integers(2, 6), st.integers(0, 20), st.integers(0, 30), st.integers(0, 2**32))
@settings(max_examples=30)
def test_genrmf_has_the_dimacs_structure(a, b, c1, spread, seed):
    c2 = c1 + spread
    net = generate("genrmf", a=a, b=b, c1=c1, c2=c2, seed=seed)
    aa = a * a
    assert (net.n_vertices, net.source_vertex, net.sink_vertex) == (aa * b, 0, aa * b - 1)
    assert net.n_edges == 5 * aa * b - 4 * a * b - aa
    t, h, c = net.tail.astype(int), net.head.astype(int), net.capacity
    same_frame = t // aa == h // aa
    grid = {tuple(sorted((y1 * a + x1, y2 * a + x2))) for (y1, x1), (y2, x2) in nx.grid_2d_graph(a, a).edges()}
    for z in range(b):
        here = same_frame & (t // aa == z)
        arcs = set(zip((t[here] - z * aa).tolist(), (h[here] - z * aa).tolist()))
        assert arcs == grid | {(v, u) for u, v in grid}
    assert np.all(c[same_frame] == c2 * aa)
    between = ~same_frame
    assert np.all(h[between] // aa == t[between] // aa + 1)
    assert c[between].min() >= c1 and c[between].max() <= c2
    for z in range(b - 1):  # each frame maps one-to-one onto the next
        here = between & (t // aa == z)
        assert sorted(t[here].tolist()) == list(range(z * aa, (z + 1) * aa))
        assert sorted(h[here].tolist()) == list(range((z + 1) * aa, (z + 2) * aa))
    if c1 >= 1:
        assert _reaches(net)
        # the arcs between two consecutive frames form a cut
        cut = min(int(c[between & (t // aa == z)].sum()) for z in range(b - 1))
        assert 0 < _max_flow_value(net) <= cut


def test_genrmf_edge_formula_matches_the_wbpr_s1_instance():
    # WBPR Table 1, S1: 2,097,152 vertices and 10,403,840 edges (a = b = 128); the formula is
    # checked against generated instances above
    a = b = 128
    assert (a * a * b, 5 * a * a * b - 4 * a * b - a * a) == (2_097_152, 10_403_840)


# ---------------------------------------------------------------------------------------------
# assignment costs


@pytest.mark.parametrize("n, cols, k, integer", [(40, None, 1.0, True), (60, 20, 0.2, True), (20, 70, 10.0, True),
                                                 (30, 30, 1.0, False), (7, 3, 0.2, True)])
def test_dense_lap_costs_lie_in_the_documented_range(n, cols, k, integer):
    m = generate("dense-lap", n=n, cols=cols, k=k, integer=integer, seed=1)
    assert m.shape == (n, n if cols is None else cols)
    assert m.costs.min() >= 0 and np.all(np.isfinite(m.costs))
    assert m.is_integer == integer
    top = np.floor(k * n) if integer else k * n
    if integer:
        assert m.costs.max() <= top
        if m.costs.size >= 20 * (top + 1):  # enough draws to hit both ends of the range
            assert m.costs.max() == top and m.costs.min() == 0
    else:
        assert m.costs.max() < top
    assert abs(m.costs.mean() - top / 2) < 0.1 * top + 0.5


@given(st.integers(1, 25), st.integers(1, 25), st.data(), st.integers(1, 100), st.integers(0, 2**32))
@settings(max_examples=60)
def test_sparse_lap_always_admits_a_complete_assignment(rows, cols, data, max_cost, seed):
    degree = data.draw(st.integers(1, cols))
    costs = generate("sparse-lap", rows=rows, cols=cols, degree=degree, max_cost=max_cost, seed=seed)
    assert costs.shape == (rows, cols) and costs.n_edges == rows * degree
    assert np.all(np.diff(costs.row_ptr) == degree)
    assert costs.cost.min() >= 1 and costs.cost.max() <= max_cost and costs.is_integer
    pattern = sp.csr_matrix((np.ones(costs.n_edges), costs.col_ind, costs.row_ptr), shape=costs.shape)
    matched = maximum_bipartite_matching(pattern, perm_type="column")
    assert int((matched >= 0).sum()) == min(rows, cols)


# ---------------------------------------------------------------------------------------------
# particles


def _by_id(series: PointSeries) -> list[dict[int, np.ndarray]]:
    return [dict(zip(ids.tolist(), frame)) for frame, ids in zip(series.frames, series.ids)]


def test_particles_keep_their_ids_and_stay_in_the_box():
    s = generate("particles", n=300, frames=12, box=2.0, speed=0.05, seed=3)
    assert s.sizes == [300] * 12
    for frame, ids in zip(s.frames, s.ids):
        assert sorted(ids.tolist()) == list(range(300))
        assert frame.min() >= 0.0 and frame.max() <= 2.0
    assert not np.array_equal(s.ids[0], np.arange(300))  # shuffled: index is not id
    assert not np.array_equal(s.ids[0], s.ids[1])


@pytest.mark.parametrize("persistence", [0.0, 0.5, 1.0])
def test_particles_move_speed_per_step_away_from_walls(persistence):
    speed = 0.02
    s = generate("particles", n=200, frames=8, persistence=persistence, speed=speed, seed=5)
    frames = _by_id(s)
    for before, after in zip(frames, frames[1:]):
        for pid, p in before.items():
            q = after[pid]
            if np.all((p > speed) & (p < 1 - speed)):  # no wall within reach: no reflection
                assert np.linalg.norm(q - p) == pytest.approx(speed, rel=1e-9)


def _fold(x: np.ndarray, box: float) -> np.ndarray:
    """Triangle wave: the position in [0, box] of a straight path mirrored at the walls."""
    return box - np.abs(np.mod(x, 2 * box) - box)


def test_full_persistence_moves_in_straight_lines_between_reflections():
    speed, box, n_frames = 0.07, 1.0, 40  # several wall hits per particle
    s = generate("particles", n=200, frames=n_frames, persistence=1.0, box=box, speed=speed, seed=9)
    frames = _by_id(s)
    checked = 0
    for pid, p0 in frames[0].items():
        p1 = frames[1][pid]
        if not np.all((p0 > speed) & (p0 < box - speed)):
            continue  # the first step may have reflected: its direction is unknown
        d = (p1 - p0) / speed
        assert np.linalg.norm(d) == pytest.approx(1.0, rel=1e-9)
        for t in range(n_frames):
            np.testing.assert_allclose(frames[t][pid], _fold(p0 + t * speed * d, box), atol=1e-9)
        checked += 1
    assert checked > 100


def test_persistence_correlates_successive_steps():
    def mean_turn_cosine(persistence):
        s = generate("particles", n=400, frames=6, persistence=persistence, speed=0.001, seed=2)
        f = _by_id(s)
        steps = [np.array([f[t + 1][i] - f[t][i] for i in range(400)]) for t in range(5)]
        cos = [np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
               for a, b in zip(steps, steps[1:])]
        return float(np.mean(cos))

    low, mid, high = mean_turn_cosine(0.0), mean_turn_cosine(0.5), mean_turn_cosine(0.95)
    assert abs(low) < 0.05
    assert low + 0.2 < mid < high - 0.1
    assert high > 0.9


def test_entering_and_leaving_change_frame_sizes_and_never_reuse_ids():
    n = 2000
    leave = generate("particles", n=n, frames=6, leave_rate=0.3, seed=1)
    assert all(b < a for a, b in zip(leave.sizes, leave.sizes[1:]))
    assert abs(leave.sizes[1] - 0.7 * n) < 5 * np.sqrt(n * 0.21)
    enter = generate("particles", n=n, frames=6, enter_rate=0.25, seed=1)
    assert all(b > a for a, b in zip(enter.sizes, enter.sizes[1:]))
    assert abs((enter.sizes[1] - n) - 0.25 * n) < 5 * np.sqrt(0.25 * n)
    both = generate("particles", n=n, frames=8, enter_rate=0.1, leave_rate=0.1, seed=1)
    seen, gone = set(), set()
    for t, ids in enumerate(both.ids):
        now = set(ids.tolist())
        assert not (now & gone)  # a particle that left never comes back
        new = now - seen
        if t:
            assert min(new) > max(seen)  # fresh ids only
            gone |= seen - now
        seen |= now
    assert gone
    assert generate("particles", n=50, frames=3, leave_rate=1.0).sizes == [50, 0, 0]
    assert generate("particles", n=0, frames=3).sizes == [0, 0, 0]


@given(st.floats(-10, 10), st.floats(0.1, 3))
def test_reflection_folds_into_the_box_and_flips_direction_per_wall(x, box):
    pos, direction = reflect_into_box(np.array([x]), np.array([1.0]), box)
    assert 0.0 <= pos[0] <= box
    assert pos[0] == pytest.approx(_fold(np.array([x]), box)[0], abs=1e-9)
    crossings = int(np.floor(x / box))
    assert direction[0] == (-1.0 if crossings % 2 else 1.0)


# ---------------------------------------------------------------------------------------------
# scale


@pytest.mark.parametrize("kind, params, edges_at_least", [
    ("random-bipartite", dict(rows=500_000, cols=500_000, degree=4), 2_000_000),
    ("road-grid", dict(width=800, height=800), 2_000_000),
    ("genrmf", dict(a=40, b=100), 750_000),
    ("sparse-lap", dict(rows=400_000, cols=400_000, degree=4), 1_600_000),
])
def test_millions_of_edges_generate(kind, params, edges_at_least):
    # how fast is a benchmark's question, not a unit test's: a loaded runner must not fail this
    problem = generate(kind, **params)
    assert problem.n_edges >= edges_at_least


# ---------------------------------------------------------------------------------------------
# bundled samples


def _sample_table():
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "sample_graphs" / "make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLES = _sample_table()


@pytest.mark.parametrize("file, kind, params", [(f, k, p) for f, _, k, p in SAMPLES.SAMPLES])
def test_each_bundled_sample_is_its_documented_generator_output(file, kind, params):
    from solvers import load

    path = SAMPLES.HERE / file
    assert same(load(path), generate(kind, **params, seed=SAMPLES.SEED))
    assert f"`{file}`" in (SAMPLES.HERE / "README.md").read_text()
    assert SAMPLES.command(kind, params, file) in (SAMPLES.HERE / "README.md").read_text()


def test_bundled_samples_cover_every_kind_and_stay_small():
    assert {kind for _, _, kind, _ in SAMPLES.SAMPLES} == set(KINDS)
    files = [p for p in SAMPLES.HERE.iterdir() if p.suffix not in (".py", ".md")]
    listed = [f for f, _, _, _ in SAMPLES.SAMPLES] + [f for f, _, _ in SAMPLES.BATCHES]
    assert sorted(p.name for p in files) == sorted(listed)
    assert sum(p.stat().st_size for p in files) < SAMPLES.SIZE_LIMIT


@pytest.mark.parametrize("file, fmt, params", SAMPLES.BATCHES)
def test_each_bundled_batch_is_its_documented_command_output(file, fmt, params):
    from solvers import load
    from solvers.generators.batches import dense_lap_batch
    batch = load(SAMPLES.HERE / file)
    expected = dense_lap_batch(**params, seed=SAMPLES.SEED)
    assert len(batch) == params["batch"]
    assert all(np.array_equal(batch.item_costs(b), expected[b]) for b in range(len(batch)))
    assert SAMPLES.command("dense-lap-batch", params, file) in (SAMPLES.HERE / "README.md").read_text()
    npz = generate("particles", **SAMPLES.SAMPLES[-2][3], seed=SAMPLES.SEED)
    ply = generate("particles", **SAMPLES.SAMPLES[-1][3], seed=SAMPLES.SEED)
    assert np.array_equal(npz.frames[0], ply.frames[0]) and np.array_equal(npz.ids[0], ply.ids[0])
