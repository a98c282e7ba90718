"""Round trips (save, load, compare arrays exactly) for every format and problem type, on
hypothesis-generated problems, plus scipy / networkx as independent readers and writers."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import solvers
from solvers.formats import load, save
from solvers.problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts

EXAMPLES = settings(max_examples=40)
finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
# costs span every legal scale; beyond about 1e306 their sums could overflow, which problems refuse
cost_floats = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, width=64)


@st.composite
def graphs(draw, max_side=12):
    n_rows, n_cols = draw(st.integers(0, max_side)), draw(st.integers(0, max_side))
    n_edges = draw(st.integers(0, 3 * max_side)) if n_rows and n_cols else 0
    rows = draw(hnp.arrays(np.int64, n_edges, elements=st.integers(0, max(n_rows - 1, 0))))
    cols = draw(hnp.arrays(np.int64, n_edges, elements=st.integers(0, max(n_cols - 1, 0))))
    return BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)


@st.composite
def sparse_costs(draw, integral=False, max_side=10):
    n_rows, n_cols = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    cells = draw(st.sets(st.tuples(st.integers(0, n_rows - 1), st.integers(0, n_cols - 1)), max_size=30))
    pairs = np.array(sorted(cells), dtype=np.int64).reshape(-1, 2)
    values = st.integers(-10**12, 10**12) if integral else cost_floats
    costs = draw(hnp.arrays(np.int64 if integral else np.float64, len(pairs), elements=values))
    return SparseCosts.from_edges(pairs[:, 0], pairs[:, 1], costs, n_rows, n_cols)


@st.composite
def cost_matrices(draw):
    shape = (draw(st.integers(1, 8)), draw(st.integers(1, 8)))
    costs = draw(hnp.arrays(np.float64, shape, elements=cost_floats))
    forbidden = draw(hnp.arrays(np.bool_, shape))
    return CostMatrix.from_array(costs, forbidden=forbidden)


@st.composite
def flow_networks(draw):
    n = draw(st.integers(2, 10))
    m = draw(st.integers(0, 30))
    tail = draw(hnp.arrays(np.int64, m, elements=st.integers(0, n - 1)))
    head = draw(hnp.arrays(np.int64, m, elements=st.integers(0, n - 1)))
    cap = draw(hnp.arrays(np.int64, m, elements=st.integers(0, 2**40)))
    s, t = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    return FlowNetwork.from_edges(n, tail, head, cap, s, t)


@st.composite
def point_series(draw, one_frame=False, with_ids=None, last_frame_nonempty=False):
    n_frames = 1 if one_frame else draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(0, 6), min_size=n_frames, max_size=n_frames))
    if last_frame_nonempty and sizes[-1] == 0:
        sizes[-1] = 1
    frames = [draw(hnp.arrays(np.float64, (k, 3), elements=finite_floats)) for k in sizes]
    if with_ids is None:
        with_ids = draw(st.booleans())
    ids = None
    if with_ids:
        ids = [np.array(draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=k, max_size=k, unique=True)),
                        dtype=np.int64) for k in sizes]
    return PointSeries.from_frames(frames, ids)


def assert_same_graph(a: BipartiteGraph, b: BipartiteGraph):
    assert (a.n_rows, a.n_cols) == (b.n_rows, b.n_cols)
    for name in ("row_ptr", "col_ind", "col_ptr", "row_ind"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def assert_same_costs(a: SparseCosts, b: SparseCosts):
    assert b.shape == a.shape
    np.testing.assert_array_equal(a.row_ptr, b.row_ptr)
    np.testing.assert_array_equal(a.col_ind, b.col_ind)
    np.testing.assert_array_equal(a.cost, b.cost)


def assert_same_flow(a: FlowNetwork, b: FlowNetwork):
    assert (a.n_vertices, a.source_vertex, a.sink_vertex) == (b.n_vertices, b.source_vertex, b.sink_vertex)
    for name in ("tail", "head", "capacity"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def assert_same_series(a: PointSeries, b: PointSeries):
    assert a.n_frames == b.n_frames
    for fa, fb in zip(a.frames, b.frames):
        np.testing.assert_array_equal(fa.reshape(-1, 3), fb.reshape(-1, 3))
    assert (a.ids is None) == (b.ids is None)
    if a.ids is not None:
        for ia, ib in zip(a.ids, b.ids):
            np.testing.assert_array_equal(ia, ib)


@pytest.mark.parametrize("name", ["g.mtx", "g.mtx.gz", "g.txt", "g.edges", "g.snap.gz", "g.tsv", "out.g"])
@EXAMPLES
@given(graph=graphs())
def test_graph_round_trip(tmp_path_factory, name, graph):
    path = tmp_path_factory.mktemp("rt") / name
    save(graph, path)
    assert_same_graph(graph, load(path))


@pytest.mark.parametrize("name", ["c.mtx", "c.mtx.gz", "c.tsv", "c.asn"])
@pytest.mark.parametrize("integral", [False, True])
@EXAMPLES
@given(data=st.data())
def test_sparse_costs_round_trip(tmp_path_factory, name, integral, data):
    costs = data.draw(sparse_costs(integral=integral))
    path = tmp_path_factory.mktemp("rt") / name
    save(costs, path)
    assert_same_costs(costs, load(path, problem="assignment"))


@pytest.mark.parametrize("name", ["d.npy", "d.npy.gz", "d.csv", "d.csv.gz"])
@EXAMPLES
@given(matrix=cost_matrices())
def test_dense_round_trip(tmp_path_factory, name, matrix):
    path = tmp_path_factory.mktemp("rt") / name
    save(matrix, path)
    back = load(path, problem="assignment")
    assert isinstance(back, CostMatrix)
    np.testing.assert_array_equal(matrix.costs, back.costs)


@EXAMPLES
@given(matrix=cost_matrices())
def test_dense_to_sparse_formats_keep_allowed_pairs(tmp_path_factory, matrix):
    folder = tmp_path_factory.mktemp("rt")
    for name in ("d.asn", "d.mtx"):
        save(matrix, folder / name)
        np.testing.assert_array_equal(load(folder / name, problem="assignment").to_dense().costs, matrix.costs)


@pytest.mark.parametrize("name", ["f.max", "f.max.gz", "f.mtx"])
@EXAMPLES
@given(net=flow_networks())
def test_flow_round_trip(tmp_path_factory, name, net):
    path = tmp_path_factory.mktemp("rt") / name
    save(net, path)
    assert_same_flow(net, load(path, problem="flow"))


@pytest.mark.parametrize("name", ["p.npz"])
@EXAMPLES
@given(series=point_series())
def test_npz_series_round_trip_keeps_empty_frames(tmp_path_factory, name, series):
    path = tmp_path_factory.mktemp("rt") / name
    save(series, path)
    assert_same_series(series, load(path))


@pytest.mark.parametrize("name", ["p.csv", "p.csv.gz", "p.ply"])
@EXAMPLES
@given(series=point_series(last_frame_nonempty=True))
def test_series_round_trip(tmp_path_factory, name, series):
    path = tmp_path_factory.mktemp("rt") / name
    save(series, path)
    assert_same_series(series, load(path, problem="points"))


@EXAMPLES
@given(series=point_series(one_frame=True, with_ids=False))
def test_xyz_round_trip(tmp_path_factory, series):
    path = tmp_path_factory.mktemp("rt") / "p.xyz"
    save(series, path)
    assert_same_series(series, load(path))


# ----------------------------------------------------------------------------- independent oracles

def _scipy_read(path) -> sp.coo_matrix:
    return sp.coo_matrix(scipy.io.mmread(str(path)))


@EXAMPLES
@given(costs=sparse_costs())
def test_our_matrix_market_reads_back_in_scipy(tmp_path_factory, costs):
    path = tmp_path_factory.mktemp("mm") / "c.mtx"
    save(costs, path)
    np.testing.assert_array_equal(_scipy_read(path).toarray(), costs.to_sparse().toarray())


@EXAMPLES
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), symmetric=st.booleans(),
       field=st.sampled_from(["real", "integer", "pattern"]))
def test_we_read_scipy_written_matrix_market(tmp_path_factory, seed, n, symmetric, field):
    rng = np.random.default_rng(seed)
    dense = rng.integers(-50, 50, size=(n, n)).astype(np.float64) * (rng.random((n, n)) < 0.3)
    if field == "real":
        dense *= rng.random((n, n))
    if symmetric:
        dense = np.tril(dense) + np.tril(dense, -1).T
    matrix = sp.coo_matrix(dense)
    path = tmp_path_factory.mktemp("mm") / "s.mtx"
    scipy.io.mmwrite(str(path), matrix, field=field, symmetry="symmetric" if symmetric else "general")
    expected = _scipy_read(path).tocsr()
    graph = load(path)
    assert_same_graph(BipartiteGraph.from_sparse(expected), graph)
    if field != "pattern":
        costs = load(path, problem="assignment")
        np.testing.assert_array_equal(costs.to_sparse().toarray(), expected.toarray())


@EXAMPLES
@given(graph=graphs())
def test_snap_file_agrees_with_networkx(tmp_path_factory, graph):
    path = tmp_path_factory.mktemp("snap") / "g.txt"
    save(graph, path)
    oracle = nx.read_edgelist(path, nodetype=int, create_using=nx.DiGraph, comments="#")
    rows, cols = graph.edges()
    assert set(oracle.edges()) == set(zip(rows.tolist(), cols.tolist()))


@EXAMPLES
@given(net=flow_networks())
def test_dimacs_max_lines_match_the_network(tmp_path_factory, net):
    """Read our .max file with a plain Python parser: the DIMACS text itself is right."""
    path = tmp_path_factory.mktemp("dimacs") / "f.max"
    save(net, path)
    arcs, ends = [], {}
    for line in path.read_text().splitlines():
        tag, *fields = line.split()
        if tag == "p":
            assert fields == ["max", str(net.n_vertices), str(net.n_edges)]
        elif tag == "n":
            ends[fields[1]] = int(fields[0]) - 1
        elif tag == "a":
            arcs.append([int(f) for f in fields])
    assert ends == {"s": net.source_vertex, "t": net.sink_vertex}
    expected = np.column_stack([net.tail + 1, net.head + 1, net.capacity]).reshape(-1, 3)
    np.testing.assert_array_equal(np.array(arcs, dtype=np.int64).reshape(-1, 3), expected)


def test_public_api_load_and_save(tmp_path):
    graph = BipartiteGraph.from_edges([0, 1, 1], [2, 0, 1], 2, 3)
    solvers.save(graph, tmp_path / "g.mtx")
    assert_same_graph(graph, solvers.load(tmp_path / "g.mtx", problem="matching"))


def test_konect_writes_integer_costs_as_integers(tmp_path):
    """'61', not '61.0' (as the Matrix Market writer does; newcomer pass); read back equal."""
    import solvers
    problem = solvers.generate("sparse-lap", rows=6, cols=6, degree=2, seed=3)
    path = tmp_path / "c.tsv"
    solvers.save(problem, str(path))
    body = path.read_text().splitlines()[2:]
    assert body and all("." not in line for line in body)
    back = solvers.load(str(path), problem="assignment")
    assert np.array_equal(back.cost, problem.cost) and np.array_equal(back.col_ind, problem.col_ind)
