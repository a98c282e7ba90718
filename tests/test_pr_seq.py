"""pr-seq (sequential push-relabel) and the cheap greedy matching, checked against scipy / networkx."""
from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching, shortest_path

from solvers import registry
from solvers import solve as api_solve
from solvers.errors import BackendUnavailable, Cancelled, InputError
from solvers.matching import pr_seq_solver as pr_seq
from solvers.matching.cheap import cheap_matching
from solvers.problems import BipartiteGraph, CostMatrix
from solvers.telemetry import NULL, Observer, Recorder, RunInfo, Telemetry


def max_matching_size(graph: BipartiteGraph) -> int:
    """The oracle: scipy's Hopcroft-Karp."""
    if graph.n_rows == 0 or graph.n_cols == 0 or graph.n_edges == 0:
        return 0
    match = maximum_bipartite_matching(graph.to_sparse().tocsr(), perm_type="column")
    return int(np.count_nonzero(match >= 0))


def assert_valid_matching(graph: BipartiteGraph, row_match, col_match, size: int) -> None:
    assert row_match.shape == (graph.n_rows,) and col_match.shape == (graph.n_cols,)
    rows = np.flatnonzero(row_match >= 0)
    cols = row_match[rows]
    assert rows.size == size == np.count_nonzero(col_match >= 0)
    np.testing.assert_array_equal(col_match[cols], rows)  # mates agree both ways
    edges = set(zip(*map(np.ndarray.tolist, graph.edges())))
    assert all((int(r), int(c)) in edges for r, c in zip(rows, cols))


def solve(graph: BipartiteGraph, observer=None, **options):
    """Through solvers.solve, which certifies the matching with a König cover."""
    result = api_solve(graph, "pr-seq", backend="cpu", observer=observer, **options)
    assert result.certified, result.certificate.summary()
    return result


def check(graph: BipartiteGraph, **options):
    result = solve(graph, **options)
    expected = max_matching_size(graph)
    assert result.value == expected
    assert_valid_matching(graph, result.row_match, result.col_match, expected)
    assert result.stats["pushes"] == result.iterations
    return result


def random_graph(rng, n_rows, n_cols, n_edges) -> BipartiteGraph:
    if n_rows == 0 or n_cols == 0:
        n_edges = 0
    return BipartiteGraph.from_edges(rng.integers(0, max(n_rows, 1), n_edges),
                                     rng.integers(0, max(n_cols, 1), n_edges), n_rows, n_cols)


def staircase(n: int) -> BipartiteGraph:
    """Column j sees rows j, j+1; the last column sees only row 0. Greedy matches columns to rows
    j, leaving the single augmenting path of length 2n-1 through every vertex."""
    rows, cols = [], []
    for j in range(n - 1):
        rows += [j, j + 1]
        cols += [j, j]
    rows.append(0)
    cols.append(n - 1)
    return BipartiteGraph.from_edges(rows, cols, n, n)


def test_registered_with_declared_options():
    algo = registry.get("pr-seq")
    assert algo.backends == ("cpu",) and algo.label == "psi" and algo.accepts == (BipartiteGraph,)
    assert algo.parse_options({}) == {"k": 0.5, "init": "cheap"}
    assert algo.parse_options({"k": "2", "init": "none"}) == {"k": 2.0, "init": "none"}


@settings(max_examples=150)
@given(n_rows=st.integers(0, 9), n_cols=st.integers(0, 9),
       pairs=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=40),
       init=st.sampled_from(["cheap", "none"]), k=st.sampled_from([0.5, 0.01, 2.0, math.inf]))
def test_hypothesis_graphs_match_scipy(n_rows, n_cols, pairs, init, k):
    pairs = [(r, c) for r, c in pairs if r < n_rows and c < n_cols]
    graph = BipartiteGraph.from_edges([p[0] for p in pairs], [p[1] for p in pairs], n_rows, n_cols)
    check(graph, init=init, k=k)


def test_seeded_random_graphs_match_scipy():
    rng = np.random.default_rng(20130901)
    for trial in range(300):
        n_rows, n_cols = (int(x) for x in rng.integers(1, 60, 2))
        density = rng.choice([0.5, 1.0, 2.0, 4.0])
        graph = random_graph(rng, n_rows, n_cols, int(density * max(n_rows, n_cols)))
        check(graph, init=("cheap", "none")[trial % 2], k=(0.5, 0.05, 3.0)[trial % 3])


def test_larger_sparse_graphs_with_many_relabels():
    rng = np.random.default_rng(99)
    for n_rows, n_cols in ((3000, 2500), (2000, 4000)):
        graph = random_graph(rng, n_rows, n_cols, 2 * max(n_rows, n_cols))
        result = check(graph, k=0.05)
        assert result.stats["global_relabels"] >= 2


def test_scipy_and_networkx_agree_on_sample():
    """Guards the oracle itself on a few graphs."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        graph = random_graph(rng, 20, 25, 40)
        nxg = nx.Graph()
        nxg.add_nodes_from(range(20))
        nxg.add_nodes_from(range(20, 45))
        nxg.add_edges_from((int(r), 20 + int(c)) for r, c in zip(*graph.edges()))
        hk = nx.bipartite.hopcroft_karp_matching(nxg, top_nodes=range(20))
        assert len(hk) // 2 == max_matching_size(graph) == check(graph).value


@pytest.mark.parametrize("n", [2, 3, 10, 200])
@pytest.mark.parametrize("init", ["cheap", "none"])
def test_staircase_long_augmenting_path(n, init):
    graph = staircase(n)
    result = check(graph, init=init)
    assert result.value == n
    if init == "cheap":
        assert result.stats["initial_matching"] == n - 1
        assert result.stats["pushes"] >= n  # one push per step along the 2n-1 path
    else:
        assert result.stats["initial_matching"] == 0


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (4, 4), (1, 7), (7, 1)])
def test_edgeless_graphs(shape):
    graph = BipartiteGraph.from_edges([], [], *shape)
    result = check(graph)
    assert result.value == 0
    assert np.all(result.row_match == -1) and np.all(result.col_match == -1)


def test_dense_blocks_isolated_vertices_and_rectangles():
    rng = np.random.default_rng(11)
    for trial in range(20):
        blocks = rng.integers(1, 8, size=(int(rng.integers(1, 5)), 2))
        dense = sp.block_diag([np.ones(tuple(b)) for b in blocks]).toarray()
        # isolated rows and columns around the blocks, plus a few sparse links between blocks
        padded = np.zeros((dense.shape[0] + 3, dense.shape[1] + 2))
        padded[1:1 + dense.shape[0], 2:] = dense
        links = rng.integers(0, padded.shape, size=(3, 2))
        padded[links[:, 0], links[:, 1]] = 1
        graph = BipartiteGraph.from_sparse(padded)
        check(graph, init=("cheap", "none")[trial % 2])


def test_complete_and_star_graphs():
    check(BipartiteGraph.from_sparse(np.ones((30, 17))))
    check(BipartiteGraph.from_sparse(np.ones((17, 30))))
    star = np.zeros((10, 10))
    star[0, :] = 1
    star[:, 0] = 1
    assert check(BipartiteGraph.from_sparse(star)).value == 2


def test_cheap_matching_is_greedy_and_maximal():
    rng = np.random.default_rng(3)
    for _ in range(100):
        graph = random_graph(rng, int(rng.integers(1, 30)), int(rng.integers(1, 30)), int(rng.integers(0, 80)))
        row_match, col_match = cheap_matching(graph)
        expected_rows = np.full(graph.n_rows, -1)
        for c in range(graph.n_cols):  # the definition, in plain Python
            for r in graph.row_ind[graph.col_ptr[c]:graph.col_ptr[c + 1]]:
                if expected_rows[r] < 0:
                    expected_rows[r] = c
                    break
        np.testing.assert_array_equal(row_match, expected_rows)
        size = np.count_nonzero(row_match >= 0)
        assert_valid_matching(graph, row_match, col_match, size)
        rows, cols = graph.edges()
        assert not np.any((row_match[rows] < 0) & (col_match[cols] < 0))  # maximal
        assert 2 * size >= max_matching_size(graph)


def test_global_relabel_gives_exact_alternating_distances():
    """ψ after a global relabel equals BFS distances to a free row in the residual digraph (scipy)."""
    rng = np.random.default_rng(8)
    for _ in range(40):
        graph = random_graph(rng, int(rng.integers(1, 25)), int(rng.integers(1, 25)), int(rng.integers(0, 60)))
        m, n = graph.shape
        row_match, col_match = cheap_matching(graph)
        psi_row, psi_col = np.zeros(m, np.int64), np.zeros(n, np.int64)
        state = np.zeros(pr_seq.STATE_SLOTS, np.int64)
        pr_seq._global_relabel(graph.row_ptr, graph.col_ind, row_match, col_match, psi_row, psi_col,
                               np.zeros(m, np.int64), state)
        # arcs toward the free rows: column -> row on unmatched edges, row -> its mate column
        rows, cols = graph.edges()
        matched = row_match[rows] == cols
        tails = np.where(matched, rows, m + cols)
        heads = np.where(matched, m + cols, rows)
        digraph = sp.csr_matrix((np.ones(rows.size), (heads, tails)), shape=(m + n, m + n))  # reversed
        free = np.flatnonzero(row_match < 0)
        if free.size:
            dist = shortest_path(digraph, unweighted=True, indices=free).min(axis=0)
        else:
            dist = np.full(m + n, np.inf)
        expected = np.where(np.isinf(dist), m + n, dist).astype(np.int64)
        np.testing.assert_array_equal(np.concatenate([psi_row, psi_col]), expected)
        finite = expected[expected < m + n]
        assert state[pr_seq.MAX_LEVEL] == (finite.max() if finite.size else 0)
        assert state[pr_seq.UNREACHABLE] == np.count_nonzero(expected == m + n)


@pytest.mark.parametrize("chunk", [1, 2, 7, None])
def test_chunked_run_equals_unchunked(chunk):
    rng = np.random.default_rng(17)
    graphs = [staircase(40), random_graph(rng, 80, 60, 150), random_graph(rng, 50, 90, 120)]
    for graph in graphs:
        for k in (0.5, 0.02):
            plain = pr_seq.solve_pr(graph, NULL, k=k)
            tel = Telemetry.attach(Recorder(snapshot_interval=0.0), RunInfo("pr-seq", "cpu", "matching"))
            chunked = pr_seq.solve_pr(graph, tel, k=k, chunk_pushes=chunk)
            np.testing.assert_array_equal(plain.row_match, chunked.row_match)
            np.testing.assert_array_equal(plain.col_match, chunked.col_match)
            assert plain.stats == chunked.stats and plain.value == max_matching_size(graph)


def test_telemetry_stream():
    recorder = Recorder(snapshot_interval=0.0)
    graph = staircase(60)
    result = solve(graph, observer=recorder, k=0.05)
    its = recorder.iterations
    assert its and its[0].phase == "initial-matching" and its[0].value == 59
    phases = [s.phase for s in its]
    assert "push" in phases and phases.count("global-relabel") == result.stats["global_relabels"] >= 2
    assert its[-1].active == 0 and its[-1].value == result.value == 60
    assert all(a.iteration <= b.iteration for a, b in zip(its, its[1:]))  # iteration = pushes so far
    assert its[-1].iteration == result.stats["pushes"]
    relabels = [s for s in its if s.phase == "global-relabel"]
    assert all({"max_level", "unreachable"} <= set(s.extra) for s in relabels)
    assert relabels[0].extra["max_level"] == 2 * 60 - 1  # the one augmenting path, end to end
    labels = [s for s in recorder.snapshots if s.kind == "labels"]
    assert labels
    for snap in labels:
        for side, size in (("rows", graph.n_rows), ("cols", graph.n_cols)):
            assert {f"{side}.hist_edges", f"{side}.hist_counts", f"{side}.sample_index", f"{side}.sample"} <= set(snap.data)
            assert snap.data[f"{side}.sample"].size == min(size, 256)
            assert f"{side}.unreachable" in snap.meta
        assert snap.meta["label"] == "psi"


def test_observer_can_cancel():
    class StopAfterTwo(Observer):
        def __init__(self):
            self.seen = 0

        def on_iteration(self, stats):
            self.seen += 1

        def should_stop(self):
            return self.seen >= 2

    observer = StopAfterTwo()
    tel = Telemetry.attach(observer, RunInfo("pr-seq", "cpu", "matching"))
    with pytest.raises(Cancelled):
        pr_seq.solve_pr(staircase(50), tel, chunk_pushes=1)
    assert observer.seen == 2


@pytest.mark.parametrize("options", [{"k": "abc"}, {"init": "greedy"}, {"alpha": 1}])
def test_option_parsing_errors(options):
    with pytest.raises(InputError, match="option|no option"):
        registry.get("pr-seq").parse_options(options)


@pytest.mark.parametrize("k", [0, -1.0, math.nan])
def test_nonpositive_k_is_an_input_error(k):
    with pytest.raises(InputError, match="k="):
        pr_seq.run(staircase(3), "cpu", NULL, k=k)


def test_wrong_backend_or_problem():
    with pytest.raises(BackendUnavailable):
        pr_seq.run(staircase(3), "cudasim", NULL)
    with pytest.raises(InputError):
        pr_seq.run(CostMatrix.from_array(np.ones((2, 2))), "cpu", NULL)
