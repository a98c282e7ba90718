"""The scipy-backed reference solvers against independent oracles (networkx, brute force, HiGHS LP).

Every answer must also carry a certificate from solvers.certify; per-edge flows and matchings are
re-checked here with plain numpy, not through the certifier.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import solvers
from solvers import registry
from solvers.errors import InfeasibleError
from solvers.problems import BipartiteGraph, CostMatrix, FlowNetwork, SparseCosts

# ---------------------------------------------------------------------------------------------
# registry

def test_reference_algorithms_are_registered():
    algos = registry.algorithms()
    for name, kind in [("hopcroft-karp", "matching"), ("dinic", "flow"), ("edmonds-karp", "flow"),
                       ("lsa", "assignment"), ("lapjvsp", "assignment")]:
        assert name in algos, name
        assert algos[name].problem_kinds == (kind,)
        assert algos[name].backends == ("cpu",)
        assert callable(algos[name].run_function())


# ---------------------------------------------------------------------------------------------
# matching

def nx_matching_size(graph: BipartiteGraph) -> int:
    g = nx.Graph()
    top = [("r", i) for i in range(graph.n_rows)]
    g.add_nodes_from(top)
    g.add_nodes_from(("c", j) for j in range(graph.n_cols))
    rows, cols = graph.edges()
    g.add_edges_from((("r", int(r)), ("c", int(c))) for r, c in zip(rows, cols))
    return len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=top)) // 2


def check_matching(graph: BipartiteGraph, result) -> None:
    rm, cm = result.row_match, result.col_match
    assert rm.shape == (graph.n_rows,) and cm.shape == (graph.n_cols,)
    edges = set(zip(*(a.tolist() for a in graph.edges())))
    matched = np.flatnonzero(rm >= 0)
    assert all((int(r), int(rm[r])) in edges for r in matched)
    assert len(set(rm[matched].tolist())) == matched.size
    assert np.array_equal(cm[rm[matched]], matched)
    assert np.count_nonzero(cm >= 0) == matched.size
    assert result.value == matched.size


def random_graph(rng, n_rows, n_cols, density):
    mask = rng.random((n_rows, n_cols)) < density
    rows, cols = np.nonzero(mask)
    return BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)


def test_hopcroft_karp_matches_networkx_on_random_graphs():
    rng = np.random.default_rng(20240601)
    for trial in range(300):
        n_rows, n_cols = rng.integers(0, 14, size=2)
        graph = random_graph(rng, n_rows, n_cols, rng.choice([0.0, 0.05, 0.15, 0.3, 0.7, 1.0]))
        result = solvers.solve(graph, "hopcroft-karp")
        assert result.value == nx_matching_size(graph), trial
        assert result.certified, (trial, result.certificate.summary())
        check_matching(graph, result)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0), (4, 7)])
def test_hopcroft_karp_empty_graphs(shape):
    graph = BipartiteGraph.from_edges([], [], *shape)
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.value == 0 and result.certified
    assert np.all(result.row_match == -1) and np.all(result.col_match == -1)


def test_hopcroft_karp_dense_blocks_and_isolated_vertices():
    # two complete blocks 30x20 and 10x40 plus 15 isolated rows and 5 isolated columns
    r1, c1 = np.meshgrid(np.arange(30), np.arange(20), indexing="ij")
    r2, c2 = np.meshgrid(np.arange(30, 40), np.arange(20, 60), indexing="ij")
    rows = np.concatenate([r1.ravel(), r2.ravel()])
    cols = np.concatenate([c1.ravel(), c2.ravel()])
    graph = BipartiteGraph.from_edges(rows, cols, 55, 65)
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.value == 30 == nx_matching_size(graph)
    assert result.certified
    check_matching(graph, result)


def test_hopcroft_karp_larger_sparse_graph():
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(0, 3000, 9000), rng.integers(0, 2500, 9000)
    graph = BipartiteGraph.from_edges(rows, cols, 3000, 2500)
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.value == nx_matching_size(graph)
    assert result.certified
    check_matching(graph, result)


@settings(max_examples=60)
@given(st.integers(0, 9), st.integers(0, 9), st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=40))
def test_hopcroft_karp_hypothesis(n_rows, n_cols, pairs):
    pairs = [(r, c) for r, c in pairs if r < n_rows and c < n_cols]
    graph = BipartiteGraph.from_edges([p[0] for p in pairs], [p[1] for p in pairs], n_rows, n_cols)
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.value == nx_matching_size(graph)
    assert result.certified
    check_matching(graph, result)


# ---------------------------------------------------------------------------------------------
# flow

def nx_flow_value(network: FlowNetwork) -> int:
    g = nx.DiGraph()
    g.add_nodes_from(range(network.n_vertices))
    for a, b, c in zip(network.tail.tolist(), network.head.tolist(), network.capacity.tolist()):
        if g.has_edge(a, b):
            g[a][b]["capacity"] += c
        else:
            g.add_edge(a, b, capacity=c)
    return nx.maximum_flow_value(g, network.source_vertex, network.sink_vertex)


def check_flow(network: FlowNetwork, flow: np.ndarray, value: int) -> None:
    assert flow.shape == (network.n_edges,)
    assert np.all(flow >= 0) and np.all(flow <= network.capacity)
    net = {v: 0 for v in range(network.n_vertices)}
    for a, b, f in zip(network.tail.tolist(), network.head.tolist(), flow.tolist()):
        net[a] += f
        net[b] -= f
    s, t = network.source_vertex, network.sink_vertex
    assert all(net[v] == 0 for v in net if v not in (s, t))
    assert net[s] == value == -net[t]


def random_network(rng, trial):
    n = int(rng.integers(2, 10))
    m = int(rng.integers(0, 30))
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    style = trial % 4
    if style == 0:
        cap = rng.integers(0, 6, m)
    elif style == 1:
        cap = rng.integers(0, 2**40, m)
    elif style == 2:
        cap = rng.choice([0, 1, 2**40, 2**55], m)
    else:
        cap = rng.integers(0, 1000, m)
    if trial % 5 == 0 and m:  # antiparallel and parallel copies of existing edges
        k = rng.integers(0, m, 4)
        tail, head = np.concatenate([tail, head[k], tail[k]]), np.concatenate([head, tail[k], head[k]])
        cap = np.concatenate([cap, rng.integers(0, 5, 8)])
    s, t = rng.choice(n, 2, replace=False)
    return FlowNetwork.from_edges(n, tail, head, cap, s, t)


@pytest.mark.parametrize("algorithm", ["dinic", "edmonds-karp"])
def test_max_flow_matches_networkx_on_random_networks(algorithm):
    rng = np.random.default_rng(99)
    for trial in range(250):
        network = random_network(rng, trial)
        expected = nx_flow_value(network)
        result = solvers.solve(network, algorithm)
        assert result.certified, (trial, result.certificate.summary())
        assert result.certificate.witness["value"] == expected, trial  # exact int (Result.value is a float)
        assert result.value == float(expected)
        check_flow(network, result.flow, expected)


@pytest.mark.parametrize("algorithm", ["dinic", "edmonds-karp"])
def test_max_flow_special_networks(algorithm):
    cases = {
        # sink unreachable: 0 -> 1 -> 0 cycle, sink 3 has only an out-edge
        "unreachable": FlowNetwork.from_edges(4, [0, 1, 3], [1, 0, 2], [5, 5, 5], 0, 3),
        "no edges": FlowNetwork.from_edges(3, [], [], [], 0, 2),
        "zero capacities": FlowNetwork.from_edges(3, [0, 1], [1, 2], [0, 0], 0, 2),
        # a cycle 1 -> 2 -> 3 -> 1 in the middle, and antiparallel 1 <-> 2
        "cycle": FlowNetwork.from_edges(5, [0, 1, 2, 3, 2, 3], [1, 2, 3, 1, 1, 4], [7, 4, 9, 3, 2, 6], 0, 4),
        # parallel edges with capacities past int32, and a bottleneck of 2^40 + 3
        "huge parallel": FlowNetwork.from_edges(3, [0, 0, 0, 1, 1], [1, 1, 1, 2, 2],
                                                [2**40, 2**40, 2**40, 2**40, 3], 0, 2),
        "all huge": FlowNetwork.from_edges(4, [0, 0, 1, 2, 1], [1, 2, 3, 3, 2],
                                           [2**61, 2**60, 2**60, 2**61, 2**59], 0, 3),
    }
    for name, network in cases.items():
        expected = nx_flow_value(network)
        result = solvers.solve(network, algorithm)
        assert result.certified, (name, result.certificate.summary())
        assert result.certificate.witness["value"] == expected, name
        check_flow(network, result.flow, expected)
    assert solvers.solve(cases["huge parallel"], algorithm).certificate.witness["value"] == 2**40 + 3


def test_flow_reference_medium_network():
    rng = np.random.default_rng(3)
    n, m = 400, 3000
    network = FlowNetwork.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m),
                                     rng.integers(1, 2**35, m), 0, n - 1)
    expected = nx_flow_value(network)
    for algorithm in ("dinic", "edmonds-karp"):
        result = solvers.solve(network, algorithm)
        assert result.certified and result.certificate.witness["value"] == expected
        check_flow(network, result.flow, expected)


# ---------------------------------------------------------------------------------------------
# assignment

def brute_force_assignment(costs: np.ndarray) -> float | None:
    """Minimum cost over every complete assignment (min(rows, cols) pairs); None if none exists."""
    n, m = costs.shape
    transposed = n > m
    c = costs.T if transposed else costs
    best = None
    for cols in itertools.permutations(range(c.shape[1]), c.shape[0]):
        total = float(sum(c[i, j] for i, j in enumerate(cols)))
        if np.isfinite(total) and (best is None or total < best):
            best = total
    return best


def lp_assignment(costs: np.ndarray) -> float:
    """Optimum of the assignment LP (integral) by HiGHS; forbidden pairs are left out."""
    n, m = costs.shape
    rows, cols = np.nonzero(np.isfinite(costs))
    a_rows = np.zeros((n, rows.size))
    a_rows[rows, np.arange(rows.size)] = 1
    a_cols = np.zeros((m, rows.size))
    a_cols[cols, np.arange(rows.size)] = 1
    if n <= m:
        eq, ub = (a_rows, np.ones(n)), (a_cols, np.ones(m))
    else:
        eq, ub = (a_cols, np.ones(m)), (a_rows, np.ones(n))
    res = linprog(costs[rows, cols], A_ub=ub[0], b_ub=ub[1], A_eq=eq[0], b_eq=eq[1], bounds=(0, 1),
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def random_costs(rng, trial, n, m):
    style = trial % 5
    if style == 0:
        costs = rng.integers(0, 2, (n, m)).astype(float)  # ties
    elif style == 1:
        costs = rng.integers(-20, 21, (n, m)).astype(float)  # negative and zero
    elif style == 2:
        costs = rng.normal(size=(n, m)) * 1e3
    elif style == 3:
        costs = np.zeros((n, m))
    else:
        costs = rng.integers(0, 5, (n, m)).astype(float)
    if trial % 3 == 0:
        costs[rng.random((n, m)) < (0.3 if trial % 2 else 0.6)] = np.inf  # forbidden pairs
    return costs


def as_sparse(costs: np.ndarray) -> SparseCosts:
    rows, cols = np.nonzero(np.isfinite(costs))
    return SparseCosts.from_edges(rows, cols, costs[rows, cols], *costs.shape)


def check_assignment(costs: np.ndarray, result, expected: float) -> None:
    n, m = costs.shape
    rm, cm = result.row_match, result.col_match
    matched = np.flatnonzero(rm >= 0)
    assert matched.size == min(n, m)
    assert len(set(rm[matched].tolist())) == matched.size
    assert np.array_equal(cm[rm[matched]], matched)
    total = float(costs[matched, rm[matched]].sum())
    assert np.isfinite(total)
    assert total == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert result.value == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_assignment_matches_brute_force():
    rng = np.random.default_rng(11)
    feasible = infeasible = 0
    for trial in range(300):
        n, m = (int(x) for x in rng.integers(0, 6, size=2))
        costs = random_costs(rng, trial, n, m)
        expected = brute_force_assignment(costs)
        for algorithm, problem in (("lsa", CostMatrix.from_array(costs)), ("lapjvsp", as_sparse(costs))):
            if expected is None:
                with pytest.raises(InfeasibleError, match="no complete assignment"):
                    solvers.solve(problem, algorithm)
                continue
            result = solvers.solve(problem, algorithm)
            assert result.certified, (trial, algorithm, result.certificate.summary())
            check_assignment(costs, result, expected)
        feasible += expected is not None
        infeasible += expected is None
    assert feasible > 200 and infeasible > 10  # both paths were really exercised


def test_assignment_matches_lp_on_medium_instances():
    rng = np.random.default_rng(5)
    for trial in range(30):
        n, m = (int(x) for x in rng.integers(10, 40, size=2))
        costs = random_costs(rng, trial, n, m)
        if trial % 3 == 0:  # keep it feasible: a few forbidden pairs only
            costs = np.where(rng.random((n, m)) < 0.05, np.inf, np.where(np.isfinite(costs), costs, 1.0))
        expected = lp_assignment(costs)
        for algorithm, problem in (("lsa", CostMatrix.from_array(costs)), ("lapjvsp", as_sparse(costs))):
            result = solvers.solve(problem, algorithm)
            assert result.certified, (trial, algorithm, result.certificate.summary())
            check_assignment(costs, result, expected)


def test_lapjvsp_zero_costs_are_real_pairs():
    # the only complete assignment uses the two zero-cost pairs; scipy alone would drop them
    problem = SparseCosts.from_edges([0, 1, 1], [0, 0, 1], [0.0, 5.0, 0.0], 2, 2)
    result = solvers.solve(problem, "lapjvsp")
    assert result.value == 0.0 and result.certified
    assert result.row_match.tolist() == [0, 1]


def test_assignment_converts_between_dense_and_sparse():
    costs = np.array([[4.0, np.inf, 1.0], [2.0, 0.0, np.inf]])
    expected = brute_force_assignment(costs)
    assert solvers.solve(as_sparse(costs), "lsa").value == expected
    assert solvers.solve(CostMatrix.from_array(costs), "lapjvsp").value == expected


@pytest.mark.parametrize("algorithm", ["lsa", "lapjvsp"])
def test_infeasible_assignment_names_the_source(algorithm):
    costs = np.array([[1.0, np.inf], [2.0, np.inf]])  # both rows can only take column 0
    problem = CostMatrix.from_array(costs, source="two_rows.csv")
    with pytest.raises(InfeasibleError, match=r"two_rows\.csv: no complete assignment of 2 pairs"):
        solvers.solve(problem, algorithm)


@pytest.mark.parametrize("algorithm, problem, value", [
    ("hopcroft-karp", BipartiteGraph.from_edges([0, 1], [1, 0], 2, 2), 2),
    ("dinic", FlowNetwork.from_edges(3, [0, 1], [1, 2], [4, 3], 0, 2), 3),
    ("edmonds-karp", FlowNetwork.from_edges(3, [0, 1], [1, 2], [4, 3], 0, 2), 3),
    ("lsa", CostMatrix.from_array([[1.0, 5.0], [4.0, 1.5]]), 2.5),
    ("lapjvsp", SparseCosts.from_edges([0, 1, 1], [0, 0, 1], [1.0, 4.0, 1.5], 2, 2), 2.5),
])
def test_reference_telemetry_start_and_done(algorithm, problem, value):
    recorder = solvers.Recorder()
    solvers.solve(problem, algorithm, observer=recorder)
    assert [s.phase for s in recorder.iterations] == ["start", "done"]
    assert recorder.iterations[-1].value == value
    assert recorder.result_summary["certified"] is True
    assert recorder.result_summary["value"] == value
