"""solvers.certify: certificates hold for right answers, refute wrong ones, and their witnesses are
checked here with plain numpy against networkx / brute-force optima."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import solvers
from solvers import certify as cm
from solvers.assignment import reference as assignment_reference
from solvers.flow import scipy_flow as flow_reference
from solvers.matching import reference as matching_reference
from solvers.problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts
from solvers.result import Solution

# ---------------------------------------------------------------------------------------------
# helpers (oracles and witness checks independent of solvers.certify)


def max_matching_size(graph: BipartiteGraph) -> int:
    g = nx.Graph()
    top = [("r", i) for i in range(graph.n_rows)]
    g.add_nodes_from(top)
    g.add_nodes_from(("c", j) for j in range(graph.n_cols))
    g.add_edges_from((("r", int(r)), ("c", int(c))) for r, c in zip(*graph.edges()))
    return len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=top)) // 2


def greedy_matching(graph: BipartiteGraph, rng) -> np.ndarray:
    """A maximal (rarely maximum) matching from a random edge order."""
    rows, cols = graph.edges()
    row_match = np.full(graph.n_rows, -1)
    col_used = np.zeros(graph.n_cols, bool)
    for k in rng.permutation(rows.size):
        r, c = rows[k], cols[k]
        if row_match[r] < 0 and not col_used[c]:
            row_match[r], col_used[c] = c, True
    return row_match


def assert_cover(graph: BipartiteGraph, witness: dict) -> None:
    in_rows = np.zeros(graph.n_rows, bool)
    in_rows[witness["cover_rows"]] = True
    in_cols = np.zeros(graph.n_cols, bool)
    in_cols[witness["cover_cols"]] = True
    rows, cols = graph.edges()
    assert np.all(in_rows[rows] | in_cols[cols])


def max_flow_value(network: FlowNetwork) -> int:
    g = nx.DiGraph()
    g.add_nodes_from(range(network.n_vertices))
    for a, b, c in zip(network.tail.tolist(), network.head.tolist(), network.capacity.tolist()):
        g.add_edge(a, b, capacity=c + (g[a][b]["capacity"] if g.has_edge(a, b) else 0))
    return nx.maximum_flow_value(g, network.source_vertex, network.sink_vertex)


def best_assignment(costs: np.ndarray) -> float | None:
    n, m = costs.shape
    c = costs.T if n > m else costs
    totals = [sum(c[i, j] for i, j in enumerate(p)) for p in itertools.permutations(range(c.shape[1]), c.shape[0])]
    finite = [t for t in totals if np.isfinite(t)]
    return min(finite) if finite else None


def assert_duals(costs: np.ndarray, witness: dict, tol: float) -> None:
    u, v = witness["u"], witness["v"]
    finite = np.isfinite(costs)
    assert np.all((u[:, None] + v[None, :])[finite] <= costs[finite] + tol)
    assert witness["dual_objective"] == pytest.approx(u.sum() + v.sum())


def row_match_of(pairs, n_rows):
    out = np.full(n_rows, -1)
    for r, c in pairs:
        out[r] = c
    return out


# ---------------------------------------------------------------------------------------------
# matching

SMALL = BipartiteGraph.from_edges([0, 0, 1, 2], [0, 1, 0, 2], 3, 3)  # maximum matching: 3


def test_matching_certified_with_cover():
    cert = cm.certify_matching(SMALL, [1, 0, 2], [1, 0, 2])
    assert cert.valid and cert.optimal and cert.kind == "konig-cover"
    assert cert.witness["value"] == 3
    assert_cover(SMALL, cert.witness)
    assert len(cert.witness["cover_rows"]) + len(cert.witness["cover_cols"]) == 3


def test_a_matching_cover_is_listed_when_first_read_and_whole_when_pickled():
    """The cover's indices are listed on first read (the check only counts them), the same every
    read and from every thread, and a certificate sent to another process carries them."""
    import pickle
    from concurrent.futures import ThreadPoolExecutor
    cert = cm.certify_matching(SMALL, [1, 0, 2], [1, 0, 2])
    assert sorted(cert.witness) == ["cover_cols", "cover_rows", "value"] and len(cert.witness) == 3
    with ThreadPoolExecutor(4) as pool:
        listed = list(pool.map(lambda key: cert.witness[key], ["cover_rows", "cover_cols"] * 8))
    rows, cols = listed[0], listed[1]
    assert all(a is rows for a in listed[0::2]) and all(a is cols for a in listed[1::2])
    assert rows.size + cols.size == 3
    fresh = cm.certify_matching(SMALL, [1, 0, 2], [1, 0, 2]).witness
    copied = pickle.loads(pickle.dumps(fresh))
    assert dict(copied).keys() == {"value", "cover_rows", "cover_cols"} and copied["value"] == 3
    np.testing.assert_array_equal(copied["cover_rows"], rows)
    np.testing.assert_array_equal(copied["cover_cols"], cols)
    assert "cover_rows" in fresh and "u" not in fresh and fresh.get("u") is None


def test_non_maximum_matching_is_valid_not_optimal():
    cert = cm.certify_matching(SMALL, [0, -1, 2])  # row 1 -> col 0 -> row 0 -> col 1 augments
    assert cert.valid and not cert.optimal
    assert "augmenting path" in cert.details
    assert cert.gap >= 1
    assert_cover(SMALL, cert.witness)  # still a cover: an upper bound on the optimum


@pytest.mark.parametrize("row_match, col_match, message", [
    ([2, -1, -1], None, "not an edge"),
    ([0, 0, -1], None, "column 0 is matched to rows 0 and 1"),
    ([1, 0, 2], [0, 1, 2], "col_match"),
    ([-1, -1, -1], [0, -1, -1], "col_match"),
    ([5, -1, -1], None, "outside"),
    ([-2, -1, -1], None, "outside"),
    ([0, 1], None, "shape"),
    ([0.5, -1, -1], None, "non-integer"),
])
def test_invalid_matchings(row_match, col_match, message):
    cert = cm.certify_matching(SMALL, np.array(row_match), None if col_match is None else np.array(col_match))
    assert not cert.valid and not cert.optimal and not cert.certified
    assert message in cert.details


def test_matching_certificate_agrees_with_networkx():
    rng = np.random.default_rng(17)
    refuted = 0
    for _ in range(150):
        n_rows, n_cols = rng.integers(0, 12, 2)
        rows, cols = np.nonzero(rng.random((n_rows, n_cols)) < rng.choice([0.1, 0.25, 0.5]))
        graph = BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)
        best = max_matching_size(graph)
        row_match = greedy_matching(graph, rng)
        cert = cm.certify_matching(graph, row_match)
        size = int(np.count_nonzero(row_match >= 0))
        assert cert.valid and cert.witness["value"] == size
        assert cert.optimal == (size == best)
        assert_cover(graph, cert.witness)
        assert size + cert.gap >= best  # the gap bounds the optimum from above
        refuted += not cert.optimal
    assert refuted > 10


def test_matching_certificate_on_a_larger_graph():
    rng = np.random.default_rng(2)
    graph = BipartiteGraph.from_edges(rng.integers(0, 20000, 60000), rng.integers(0, 20000, 60000), 20000, 20000)
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.certified
    assert_cover(graph, result.certificate.witness)
    row_match = result.row_match.copy()
    row_match[np.flatnonzero(row_match >= 0)[:3]] = -1
    cert = cm.certify_matching(graph, row_match)
    assert cert.valid and not cert.optimal and cert.gap >= 3


# ---------------------------------------------------------------------------------------------
# flow

# s=0 -> a=1 -> t=3 and s -> b=2 -> t, with a <-> b: max flow 2
DIAMOND = FlowNetwork.from_edges(4, [0, 0, 1, 2, 1, 2], [1, 2, 3, 3, 2, 1], [1, 1, 1, 1, 1, 1], 0, 3)


def test_max_flow_certified_with_cut():
    cert = cm.certify_flow(DIAMOND, np.array([1, 1, 1, 1, 0, 0]))
    assert cert.certified and cert.kind == "min-cut"
    assert cert.witness["value"] == 2 == cert.witness["cut_capacity"]
    side = cert.witness["cut_side"]
    assert side[0] and not side[3]
    assert DIAMOND.capacity[side[DIAMOND.tail] & ~side[DIAMOND.head]].sum() == 2


def test_fractional_max_flow_certified_within_tolerance():
    cert = cm.certify_flow(DIAMOND, np.array([1.0, 1.0, 1.0, 1.0, 0.25, 0.25]))
    assert cert.certified and cert.witness["value"] == pytest.approx(2.0)
    assert cert.tolerance > 0


@pytest.mark.parametrize("flow, message", [
    ([1, 1, 1, 0, 0, 0], "not conserved"),
    ([2, 0, 1, 0, 1, 0], "over its capacity"),
    ([1, 1, 1, 1, -1, -1], "negative"),
    ([1, 1, 1], "shape"),
    ([np.nan, 1, 1, 1, 0, 0], "NaN"),
])
def test_invalid_flows(flow, message):
    cert = cm.certify_flow(DIAMOND, np.array(flow))
    assert not cert.valid and not cert.certified
    assert message in cert.details


def test_non_maximum_flow_is_valid_not_optimal():
    cert = cm.certify_flow(DIAMOND, np.array([1, 0, 1, 0, 0, 0]))
    assert cert.valid and not cert.optimal
    assert "augmenting path" in cert.details
    assert cert.witness["value"] == 1 and cert.gap >= 1


def test_flow_certificate_agrees_with_networkx():
    rng = np.random.default_rng(8)
    for trial in range(120):
        n, m = int(rng.integers(2, 9)), int(rng.integers(1, 25))
        network = FlowNetwork.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m),
                                         rng.integers(0, 8, m), *rng.choice(n, 2, replace=False))
        best = max_flow_value(network)
        flow = solvers.solve(network, "dinic").flow
        assert cm.certify_flow(network, flow).certified
        half = cm.certify_flow(network, flow / 2.0)  # valid, maximum only when the optimum is 0
        assert half.valid and half.optimal == (best == 0), trial
        if not half.optimal:
            assert half.witness["value"] + half.gap >= best - 1e-9


# ---------------------------------------------------------------------------------------------
# assignment


def planted_assignment(rng, n, m, integer=True, ties=False):
    """Costs with known optimal duals: c_ij = u_i + v_j + slack_ij, slack 0 on a planted assignment
    (and, with ``ties``, on some other pairs too), v <= 0 with v = 0 off the assignment when n < m
    (u <= 0, u = 0 off it when n > m)."""
    k = min(n, m)
    rows, cols = rng.permutation(n)[:k], rng.permutation(m)[:k]
    draw = (lambda size: rng.integers(-9, 10, size).astype(float)) if integer else (lambda size: rng.normal(size=size))
    u, v = draw(n), draw(m)
    if n < m:
        v = -np.abs(v)
        v[np.setdiff1d(np.arange(m), cols)] = 0
    elif n > m:
        u = -np.abs(u)
        u[np.setdiff1d(np.arange(n), rows)] = 0
    slack = np.abs(draw((n, m))) + (1 if integer else 0.1)
    if ties:
        slack[rng.random((n, m)) < 0.3] = 0
    slack[rows, cols] = 0
    costs = u[:, None] + v[None, :] + slack
    return costs, row_match_of(zip(rows, cols), n), u, v


@pytest.mark.parametrize("shape", [(5, 5), (3, 6), (6, 3), (1, 4), (0, 3)])
def test_solver_duals_verified(shape):
    rng = np.random.default_rng(sum(shape))
    costs, row_match, u, v = planted_assignment(rng, *shape)
    cert = cm.certify_assignment(CostMatrix.from_array(costs), row_match, duals={"u": u, "v": v})
    assert cert.certified, cert.details
    assert "solver duals verified" in cert.details
    assert cert.witness["value"] == pytest.approx(costs[row_match >= 0, row_match[row_match >= 0]].sum())
    assert_duals(costs, cert.witness, cert.tolerance)


@pytest.mark.parametrize("shape", [(6, 6), (4, 7), (7, 4)])
def test_wrong_duals_are_not_trusted(shape):
    rng = np.random.default_rng(3)
    costs, row_match, u, v = planted_assignment(rng, *shape, integer=False)
    problem = CostMatrix.from_array(costs)
    bogus = {"u": u + 5.0, "v": v + rng.normal(size=v.size)}  # infeasible, and no use when repaired
    cert = cm.certify_assignment(problem, row_match, duals=bogus)
    assert cert.certified and "rejected" in cert.details and "derived" in cert.details
    assert_duals(costs, cert.witness, cert.tolerance)
    # the same bogus duals cannot rescue a suboptimal assignment
    worse = row_match.copy()
    assigned = np.flatnonzero(worse >= 0)
    worse[assigned[:2]] = worse[assigned[:2]][::-1]
    cert = cm.certify_assignment(problem, worse, duals=bogus)
    assert cert.valid and not cert.optimal and cert.gap > 0
    for bad in ({"u": u}, {"u": u[:-1], "v": v}, {"u": np.full_like(u, np.nan), "v": v}):
        assert cm.certify_assignment(problem, row_match, duals=bad).certified


def test_epsilon_duals_with_integer_costs():
    rng = np.random.default_rng(21)
    n = 8
    costs, row_match, u, v = planted_assignment(rng, n, n, ties=True)
    epsilon = 1.0 / (n + 1)  # n * epsilon < 1
    shaken = v + rng.uniform(0, epsilon, n)  # epsilon-complementary slackness, as an auction leaves it
    cert = cm.certify_assignment(CostMatrix.from_array(costs), row_match, duals={"u": u, "v": shaken},
                                 epsilon=epsilon)
    assert cert.certified and cert.optimal and cert.status == "optimal"
    assert "epsilon" in cert.details and "integer costs and dual gap" in cert.details
    assert "solver duals made feasible" in cert.details
    # the dual leaves a fractional gap, but integer costs make the proven gap 0
    assert 0 < cert.witness["value"] - cert.witness["dual_objective"] < 1
    assert cert.gap == 0.0 and cert.bound == pytest.approx(n * epsilon)


def test_epsilon_duals_with_float_costs_prove_the_only_optimum_or_fall_back_to_derivation():
    """Epsilon duals leave a gap of about n epsilon, far above the allowance. When no other
    assignment comes within that gap of their objective (solvers.near_ties), the answer is the only
    optimum, exactly (checked here against every permutation); when one does (a tie planted on the
    optimum), the near-tie search sees it, and the certificate proves the gap another way."""
    rng = np.random.default_rng(22)
    costs, row_match, u, v = planted_assignment(rng, 6, 6, integer=False, ties=True)
    cert = cm.certify_assignment(CostMatrix.from_array(costs), row_match,
                                 duals={"u": u, "v": v + rng.uniform(0, 0.01, 6)}, epsilon=0.01)
    assert cert.certified and cert.optimal and cert.gap == 0.0 and "the only optimum" in cert.details
    values = sorted(costs[np.arange(6), list(p)].sum() for p in itertools.permutations(range(6)))
    assert values[0] == costs[np.arange(6), row_match].sum() < values[1]
    tied = costs.copy()
    tied[1] = tied[0]  # rows 0 and 1 alike: swapping them is another optimum
    from scipy.optimize import linear_sum_assignment
    r, c = linear_sum_assignment(tied)
    cert = cm.certify_assignment(CostMatrix.from_array(tied), c[np.argsort(r)],
                                 duals={"u": u, "v": v + rng.uniform(0, 0.01, 6)}, epsilon=0.01)
    assert cert.certified and "the only optimum" not in cert.details, cert.details
    assert 0 <= cert.gap <= cert.tolerance


def test_integer_costs_are_not_excused_by_a_large_tolerance():
    # costs near 1e9 (an offset shared by every cost): an assignment 2 above the optimum is refuted,
    # the rounding allowance follows the float resolution at 1e9, not the size of the costs
    costs = 1e9 + np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    cert = cm.certify_assignment(CostMatrix.from_array(costs), np.array([1, 0, 2]))
    assert cert.tolerance < 1e-3 and cert.valid and not cert.optimal
    assert cert.gap >= 2 - 1e-6
    assert cm.certify_assignment(CostMatrix.from_array(costs), np.array([0, 1, 2])).certified


COSTS = np.array([[1.0, 2.0, np.inf], [2.0, 4.0, 1.0], [3.0, np.inf, 2.0]])  # optimum 6, e.g. (0,1) (1,0) (2,2)


@pytest.mark.parametrize("row_match, col_match, message", [
    ([0, 2, -1], None, "incomplete assignment: 2 of 3"),
    ([2, 0, 1], None, "forbidden pair"),
    ([0, 0, 2], None, "column 0 is matched to rows 0 and 1"),
    ([1, 2, 0], [1, 0, 2], "col_match"),
    ([1, 2, 3], None, "outside"),
])
def test_invalid_assignments(row_match, col_match, message):
    for problem in (CostMatrix.from_array(COSTS), SparseCosts.from_edges(*np.nonzero(np.isfinite(COSTS)),
                                                                         COSTS[np.isfinite(COSTS)], 3, 3)):
        cert = cm.certify_assignment(problem, np.array(row_match), col_match)
        assert not cert.valid and not cert.certified
        assert message in cert.details


def test_suboptimal_assignment_is_refuted_with_a_bound():
    best = best_assignment(COSTS)
    assert best == 6.0
    cert = cm.certify_assignment(CostMatrix.from_array(COSTS), np.array([0, 1, 2]))  # 1 + 4 + 2 = 7
    assert cert.valid and not cert.optimal
    assert "negative cycle" in cert.details
    assert cert.witness["value"] == 7.0
    assert 7.0 - cert.gap <= best + 1e-12  # the proven bound really is below the optimum
    assert cert.gap == pytest.approx(1.0)  # tightened by an independent optimum: the true gap
    assert "independent optimal assignment" in cert.details
    assert_duals(COSTS, cert.witness, cert.tolerance)
    assert cert.status == "not-proven" and cert.bound == 0 and not cert.certified  # it claimed an optimum


def test_assignment_certificate_agrees_with_brute_force():
    rng = np.random.default_rng(4)
    refuted = 0
    for trial in range(200):
        n, m = (int(x) for x in rng.integers(1, 6, 2))
        costs = rng.integers(-3, 4, (n, m)).astype(float) if trial % 2 else rng.normal(size=(n, m))
        costs[rng.random((n, m)) < 0.2] = np.inf
        best = best_assignment(costs)
        if best is None:
            continue
        c = costs.T if n > m else costs  # a random complete assignment, if the random pick is allowed
        perm = rng.permutation(c.shape[1])[:c.shape[0]]
        pairs = [(i, j) if n <= m else (j, i) for i, j in enumerate(perm)]
        row_match = row_match_of(pairs, n)
        value = sum(costs[i, j] for i, j in pairs)
        for problem in (CostMatrix.from_array(costs),
                        SparseCosts.from_edges(*np.nonzero(np.isfinite(costs)), costs[np.isfinite(costs)], n, m)):
            cert = cm.certify_assignment(problem, row_match)
            assert cert.valid == bool(np.isfinite(value)), trial
            if not cert.valid:
                continue
            assert cert.optimal == (value <= best + 1e-9), (trial, cert.details)
            assert value - cert.gap <= best + 1e-9
            assert cert.gap == pytest.approx(value - best, abs=1e-9)  # the true gap, not a loose bound
            if cert.optimal:
                assert_duals(costs, cert.witness, cert.tolerance)
            refuted += not cert.optimal
    assert refuted > 20


def test_derived_potentials_prove_a_dense_optimum():
    rng = np.random.default_rng(6)
    costs = rng.random((60, 60))
    row_match = solvers.solve(CostMatrix.from_array(costs), "lsa").row_match
    rows = cm._CostRows(CostMatrix.from_array(costs))
    mates = np.empty(60, dtype=np.int64)
    mates[row_match] = np.arange(60)
    mate_cost = costs[np.arange(60), row_match][np.argsort(row_match)]
    dist, ok = cm._spfa_potentials(60, *rows.args(), row_match, mates, mate_cost, cm.SPFA_RELATIVE)[:2]
    assert ok
    u, v = -dist[:60], dist[60:120]
    assert np.all(u[:, None] + v[None, :] <= costs + 1e-9)
    assert u.sum() + v.sum() == pytest.approx(costs[np.arange(60), row_match].sum())
    # swap two rows' columns: the residual graph now has a negative cycle
    worse = row_match.copy()
    worse[[0, 1]] = worse[[1, 0]]
    mates[worse] = np.arange(60)
    mate_cost = costs[np.arange(60), worse][np.argsort(worse)]
    assert not cm._spfa_potentials(60, *rows.args(), worse, mates, mate_cost, cm.SPFA_RELATIVE)[1]


# ---------------------------------------------------------------------------------------------
# dispatch and the solve() path (a corrupted runner must be caught)


def test_certify_dispatch():
    assert cm.certify(SMALL, Solution(3, 1, row_match=np.array([1, 0, 2]))).certified
    assert not cm.certify(SMALL, Solution(0, 1)).valid
    assert not cm.certify(DIAMOND, Solution(0, 1)).valid
    assert not cm.certify(CostMatrix.from_array(COSTS), Solution(0, 1)).valid
    with pytest.raises(TypeError):
        cm.certify(PointSeries.from_frames([np.zeros((1, 3))]), Solution(0, 1))


def test_misreported_value_is_noted():
    cert = cm.certify(SMALL, Solution(7, 1, row_match=np.array([1, 0, 2])))
    assert cert.certified and "solver reported value 7" in cert.details
    assert cert.witness["value"] == 3


def _corrupt(monkeypatch, module, name, change):
    original = getattr(module, name)

    def runner(problem, backend, tel, **options):
        solution = original(problem, backend, tel, **options)
        return Solution(**{**solution.__dict__, **change(solution)})

    monkeypatch.setattr(module, name, runner)


def test_solve_catches_a_non_maximum_matching(monkeypatch):
    def drop_first(s):
        row_match, col_match = s.row_match.copy(), s.col_match.copy()
        r = int(np.flatnonzero(row_match >= 0)[0])
        col_match[row_match[r]], row_match[r] = -1, -1
        return {"row_match": row_match, "col_match": col_match, "value": s.value - 1}
    _corrupt(monkeypatch, matching_reference, "run_hopcroft_karp", drop_first)
    result = solvers.solve(SMALL, "hopcroft-karp")
    assert result.certificate.valid and not result.certified and result.value == 2


def test_solve_catches_a_non_edge(monkeypatch):
    _corrupt(monkeypatch, matching_reference, "run_hopcroft_karp",
             lambda s: {"row_match": np.array([2, 0, 1]), "col_match": None})
    result = solvers.solve(SMALL, "hopcroft-karp")
    assert not result.certificate.valid and "not an edge" in result.certificate.details


def test_solve_catches_bad_flows(monkeypatch):
    _corrupt(monkeypatch, flow_reference, "run_dinic", lambda s: {"flow": s.flow * 2})
    assert not solvers.solve(DIAMOND, "dinic").certificate.valid
    monkeypatch.undo()
    _corrupt(monkeypatch, flow_reference, "run_edmonds_karp", lambda s: {"flow": np.zeros_like(s.flow)})
    result = solvers.solve(DIAMOND, "edmonds-karp")
    assert result.certificate.valid and not result.certified and result.value == 0


def test_solve_catches_bad_assignments(monkeypatch):
    problem = CostMatrix.from_array(COSTS)
    assert solvers.solve(problem, "lsa").certified
    _corrupt(monkeypatch, assignment_reference, "run_lsa",
             lambda s: {"row_match": np.array([0, 1, 2]), "col_match": None, "duals": {"u": np.zeros(3),
                                                                                      "v": np.full(3, 5.0)}})
    result = solvers.solve(problem, "lsa")
    assert result.certificate.valid and not result.certified and result.value == 7.0
    monkeypatch.undo()
    _corrupt(monkeypatch, assignment_reference, "run_lapjvsp",
             lambda s: {"row_match": np.where(s.row_match == s.row_match[0], -1, s.row_match), "col_match": None})
    result = solvers.solve(problem, "lapjvsp")
    assert not result.certificate.valid and "incomplete" in result.certificate.details


# ---------------------------------------------------------------------------------------------
# epsilon-runs: certified within the gap they claim


def test_a_claimed_gap_is_certified_when_proven():
    costs = COSTS  # optimum 6; the assignment below costs 7
    for problem in (CostMatrix.from_array(costs),
                    SparseCosts.from_edges(*np.nonzero(np.isfinite(costs)), costs[np.isfinite(costs)], 3, 3)):
        cert = cm.certify_assignment(problem, np.array([0, 1, 2]), epsilon=0.5)  # claims gap <= 3 * 0.5
        assert cert.valid and not cert.optimal
        assert cert.bound == 1.5 and cert.gap == pytest.approx(1.0)
        assert cert.certified and cert.within_bound and cert.status == "within-gap"
        assert "certified within gap 1 of optimal" in cert.summary() and "claims at most 1.5" in cert.summary()
        assert_duals(costs, cert.witness, cert.tolerance)
        assert 7.0 - cert.gap <= 6.0 + 1e-12


def test_a_claimed_gap_that_is_exceeded_is_not_certified():
    cert = cm.certify_assignment(CostMatrix.from_array(COSTS), np.array([0, 1, 2]), epsilon=0.2)  # claims 0.6
    assert cert.valid and not cert.certified and cert.status == "not-proven"
    assert cert.bound == pytest.approx(0.6) and cert.gap == pytest.approx(1.0)
    assert "more than the 0.6 the run claims" in cert.summary() and "exceeds the claimed" in cert.details


def test_invalid_assignment_is_never_certified_by_a_claim():
    cert = cm.certify_assignment(CostMatrix.from_array(COSTS), np.array([0, 2, -1]), epsilon=100.0)
    assert not cert.valid and not cert.certified and cert.status == "invalid"


def test_claimed_gaps_against_brute_force():
    """Random small instances and random assignments with a random claim: certified exactly when
    the true gap is within the claim (the reference optimum makes the gap exact)."""
    rng = np.random.default_rng(99)
    within = beyond = 0
    for trial in range(150):
        n, m = (int(x) for x in rng.integers(1, 6, 2))
        costs = rng.integers(-3, 4, (n, m)).astype(float) if trial % 2 else rng.normal(size=(n, m))
        best = best_assignment(costs)
        c = costs.T if n > m else costs
        perm = rng.permutation(c.shape[1])[:c.shape[0]]
        pairs = [(i, j) if n <= m else (j, i) for i, j in enumerate(perm)]
        value = sum(costs[i, j] for i, j in pairs)
        epsilon = float(rng.uniform(0.01, 1.0))
        cert = cm.certify_assignment(CostMatrix.from_array(costs), row_match_of(pairs, n), epsilon=epsilon)
        true_gap = value - best
        assert cert.bound == pytest.approx(max(n, m) * epsilon)
        assert cert.gap >= true_gap - 1e-9
        if true_gap > 1e-9 and (trial % 2 == 0 or true_gap >= 1):
            assert cert.certified == (true_gap <= cert.bound + cert.tolerance), (trial, cert.summary())
            within += cert.certified
            beyond += not cert.certified
    assert within > 10 and beyond > 10


def test_solve_reports_epsilon_runs_as_certified_within_their_gap():
    costs = np.load(Path(__file__).resolve().parents[1] / "sample_graphs" / "dense-lap_50.npy")
    problem = CostMatrix.from_array(costs)
    result = solvers.solve(problem, "auction", backend="cpu", eps=0.5, scaling="off")
    from scipy.optimize import linear_sum_assignment
    rows, cols = linear_sum_assignment(costs)
    best = float(costs[rows, cols].sum())  # n = 50: scipy, not brute force
    assert result.certified and not result.certificate.optimal
    assert result.certificate.gap == pytest.approx(result.value - best)  # the true gap (3), not 11
    exact = solvers.solve(problem, "auction", backend="cpu")
    assert exact.certified and exact.certificate.optimal and exact.certificate.bound < 1


def _swap_two(cols):
    worse = np.array(cols, dtype=np.int64)
    worse[[0, 1]] = worse[[1, 0]]
    return worse


@pytest.mark.parametrize("case", ["offset 1e6, noise 1e-3", "integers near 1e14", "one row of 1e18"])
def test_an_allowance_never_forgives_a_real_difference(case):
    """Costs that share a large offset, integers whose sums pass 2^53, one huge row: the rounding
    allowance grows with them, and once forgave assignments worse by more than the data's own
    resolution (0.0012 at 1e6 + 1e-3 noise, 1844 near 1e14). An independent optimum (or the integer
    rule) now refutes them; the optimum itself is still proven."""
    from scipy.optimize import linear_sum_assignment
    from solvers.certify import certify_assignment
    rng = np.random.default_rng(11)
    n = 200
    if case.startswith("offset"):
        costs = 1e6 + rng.random((n, n)) * 1e-3
    elif case.startswith("integers"):
        costs = 1e14 + rng.integers(0, 1000, (n, n)).astype(np.float64)
    else:
        costs = rng.integers(0, 1000, (n, n)).astype(np.float64)
        costs[0] = 1e18
    rows, cols = linear_sum_assignment(costs)
    worse = _swap_two(cols) if not case.startswith("one row") else np.concatenate([cols[:1], np.roll(cols[1:], 1)])
    excess = math.fsum(costs[rows, worse]) - math.fsum(costs[rows, cols])
    assert excess > 0
    problem = CostMatrix.from_array(costs)
    refuted = certify_assignment(problem, worse.astype(np.int64))
    assert refuted.valid and not refuted.optimal, refuted.details
    assert refuted.reason == "a cheaper assignment exists"
    if case.startswith("one row"):
        return  # scipy's own answer is not optimal there (a cycle of exactly negative cost, found)
    proven = certify_assignment(problem, cols.astype(np.int64))
    assert proven.optimal, proven.details



@pytest.mark.parametrize("seed", range(4))
def test_the_cut_capacity_is_exact_past_2_to_the_63_on_either_loop(seed, monkeypatch):
    """min_cut.cut_capacity against Python ints, serial and multi-core: capacities up to 2^62, so
    the cut's total passes the int64 range (an int64 sum would wrap)."""
    from solvers import min_cut
    rng = np.random.default_rng(seed)
    n, edges = int(rng.integers(2, 60)), int(rng.integers(1, 3000))
    tail = rng.integers(0, n, edges).astype((np.int32, np.int64)[seed % 2])
    head = rng.integers(0, n, edges).astype(tail.dtype)
    capacity = rng.integers(0, 2 ** 62, edges)
    reached = rng.random(n) < 0.5
    expected = sum(int(capacity[e]) for e in range(edges) if reached[tail[e]] and not reached[head[e]])
    for parallel_from in (1 << 62, 0):
        monkeypatch.setattr(min_cut, "PARALLEL_MIN_EDGES", parallel_from)
        assert min_cut.cut_capacity(tail, head, capacity, reached) == expected


@pytest.mark.parametrize("p", [0.0, 0.03, 0.5, 0.97, 1.0])
def test_a_covers_listed_indices_are_numpys(monkeypatch, p):
    """The cover's rows and columns (witness) come from a compiled branch-free pass on large masks:
    the same indices, in order, as np.flatnonzero, for either value, empty and full masks included."""
    from solvers import konig
    rng = np.random.default_rng(int(p * 100))
    for size in (0, 1, 7, 1000):
        mask = rng.random(size) < p
        for lowest in (0, konig.LISTED_MIN):  # the compiled pass, then numpy's below its size
            monkeypatch.setattr(konig, "LISTED_MIN", lowest)
            for value, want in ((True, np.flatnonzero(mask)), (False, np.flatnonzero(~mask))):
                got = konig.indices_where(mask, value)
                assert got.dtype == np.int64 and np.array_equal(got, want)
