"""The problem model validates input and stays immutable."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

from solvers import BipartiteGraph, CostMatrix, FlowNetwork, InputError, PointSeries, SparseCosts


@given(st.integers(0, 12), st.integers(0, 12), st.data())
def test_bipartite_both_csr_views_hold_the_same_unique_edges(m, n, data):
    k = data.draw(st.integers(0, 40)) if m and n else 0
    rows = np.array(data.draw(st.lists(st.integers(0, max(m - 1, 0)), min_size=k, max_size=k)), dtype=np.int64)
    cols = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=k, max_size=k)), dtype=np.int64)
    g = BipartiteGraph.from_edges(rows, cols, m, n)
    expected = sorted(set(zip(rows.tolist(), cols.tolist())))
    r, c = g.edges()
    assert list(zip(r.tolist(), c.tolist())) == expected
    by_col = sorted((int(g.row_ind[j]), col) for col in range(n) for j in range(g.col_ptr[col], g.col_ptr[col + 1]))
    assert by_col == expected
    assert g.n_edges == len(expected)
    assert g.row_ptr.dtype == np.int32
    assert (g.to_sparse() != sp.csr_matrix((np.ones(len(expected)), ([e[0] for e in expected], [e[1] for e in expected])),
                                           shape=(m, n))).nnz == 0


def test_problem_arrays_are_read_only():
    g = BipartiteGraph.from_edges([0, 1], [1, 0])
    with pytest.raises(ValueError):
        g.col_ind[0] = 5
    c = CostMatrix.from_array(np.ones((2, 2)))
    with pytest.raises(ValueError):
        c.costs[0, 0] = 3


def test_cost_matrix_copies_its_input():
    a = np.ones((2, 3))
    c = CostMatrix.from_array(a)
    a[0, 0] = 7
    assert c.costs[0, 0] == 1


@pytest.mark.parametrize("bad, message", [
    (lambda: BipartiteGraph.from_edges([0, 3], [0, 0], 2, 2), "outside"),
    (lambda: BipartiteGraph.from_edges([0, -1], [0, 0], 2, 2), "outside"),
    (lambda: BipartiteGraph.from_edges([0, 1], [0], 2, 2), "differ"),
    (lambda: BipartiteGraph.from_edges([0.5], [0], 2, 2), "integers"),
    (lambda: BipartiteGraph.from_edges(["a"], [0]), "integers"),
    (lambda: BipartiteGraph.from_edges([-2], [0]), "negative"),
    (lambda: SparseCosts.from_edges([0], [np.nan], [1.0]), "integers"),
    (lambda: BipartiteGraph.from_edges([0], [0], -1, 2), ">= 0"),
    (lambda: CostMatrix.from_array([[1.0, np.nan]]), "NaN"),
    (lambda: CostMatrix.from_array([[1.0, -np.inf]]), "-inf"),
    (lambda: CostMatrix.from_array([1.0, 2.0]), "2-D"),
    (lambda: CostMatrix.from_array([["a", "b"]]), "real numbers"),
    (lambda: SparseCosts.from_edges([0, 0], [1, 1], [1.0, 2.0], 2, 2), "twice"),
    (lambda: SparseCosts.from_edges([0], [1], [np.inf], 2, 2), "finite"),
    (lambda: FlowNetwork.from_edges(3, [0], [1], [-1], 0, 2), "negative"),
    (lambda: FlowNetwork.from_edges(3, [0], [1], [1.5], 0, 2), "integers"),
    (lambda: FlowNetwork.from_edges(3, [0], [1], [1], 1, 1), "same vertex"),
    (lambda: FlowNetwork.from_edges(3, [0], [1], [1], 0, 3), "outside"),
    (lambda: PointSeries.from_frames([np.zeros((2, 2))]), "(n, 3)"),
    (lambda: PointSeries.from_frames([np.full((1, 3), np.nan)]), "NaN"),
    (lambda: PointSeries.from_frames([]), "at least one frame"),
    (lambda: PointSeries.from_frames([np.zeros((2, 3))], ids=[[1, 1]]), "not unique"),
    (lambda: PointSeries.from_frames([np.zeros((2, 3))], ids=[[1]]), "ids for"),
])
def test_invalid_input_raises_one_input_error(bad, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bad()


def test_input_error_names_file_and_line():
    err = InputError("bad token 'x'", "graph.mtx", 7)
    assert str(err) == "graph.mtx:7: bad token 'x'"
    assert str(InputError("empty", "a.csv")) == "a.csv: empty"


def test_flow_network_drops_self_loops_and_sums_parallel_edges_for_scipy():
    f = FlowNetwork.from_edges(3, [0, 0, 1, 1], [1, 1, 1, 2], [2, 3, 9, 4], 0, 2)
    assert f.n_edges == 3
    m = f.to_sparse()
    assert m[0, 1] == 5 and m[1, 2] == 4


def test_sparse_costs_round_trip_dense_and_forbidden_pairs():
    s = SparseCosts.from_edges([1, 0, 1], [0, 1, 2], [5.0, -1.0, 0.0], 2, 3)
    d = s.to_dense().costs
    assert d[0, 1] == -1 and d[1, 0] == 5 and d[1, 2] == 0
    assert np.isinf(d[0, 0]) and np.isinf(d[0, 2])
    c = CostMatrix.from_array(np.zeros((2, 2)), forbidden=[[True, False], [False, False]])
    assert c.describe()["forbidden"] == 1


def test_point_series_sizes_and_ids():
    p = PointSeries.from_frames([np.zeros((3, 3)), np.ones((2, 3))], ids=[[0, 1, 2], [2, 0]])
    assert p.sizes == [3, 2] and p.n_frames == 2
    assert p.describe()["ground_truth"] is True
