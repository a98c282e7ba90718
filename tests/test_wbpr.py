"""wbpr (workload-balanced push-relabel max flow): residual layouts, flows and matchings against scipy /
networkx on many random networks for every mode x layout on cpu, a few dozen tiny ones under the CUDA
simulator, telemetry (workload snapshots), the workload CSV, and that every cuda kernel compiles for sm_90."""
from __future__ import annotations

import csv
import inspect
import json
import os
import subprocess
import sys
import textwrap
from itertools import product
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import solvers
from solvers.errors import BackendUnavailable, Cancelled, InputError
from solvers.flow import residual as rs
from solvers.flow import wbpr, wbpr_device
from solvers.problems import BipartiteGraph, FlowNetwork
from solvers.telemetry import Observer, Recorder, RunRecord

ROOT = Path(__file__).resolve().parent.parent
COMBOS = list(product(("tc", "vc"), ("rcsr", "bcsr")))
BIG = 1 << 40


# ---------------------------------------------------------------------------------------------
# random networks and independent oracles

def random_network(seed: int) -> FlowNetwork:
    """Tiny networks with cycles, parallel and antiparallel edges, zero / huge capacities, edges into the
    source and out of the sink, isolated sinks and sources without out-edges (chosen by seed)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 13))
    m = int(rng.integers(0, 3 * n + 1))
    tail = rng.integers(0, n, m)
    head = rng.integers(0, n, m)
    style = seed % 6
    if style == 0:
        cap = rng.integers(0, 4, m)                       # many zero capacities
    elif style == 1:
        cap = rng.integers(BIG, 4 * BIG, m)               # capacities past int32
    else:
        cap = rng.integers(1, 20, m)
    if m and style in (2, 3):                              # parallel and antiparallel copies
        pick = rng.integers(0, m, max(1, m // 3))
        tail = np.concatenate([tail, tail[pick], head[pick]])
        head = np.concatenate([head, head[pick], tail[pick]])
        cap = np.concatenate([cap, rng.integers(1, 20, 2 * pick.size)])
    source, sink = (int(x) for x in rng.choice(n, 2, replace=False))
    if style == 4:                                         # sink unreachable: drop its in-edges
        keep = head != sink
        tail, head, cap = tail[keep], head[keep], cap[keep]
    if style == 5 and seed % 12 == 5:                      # source without out-edges
        keep = tail != source
        tail, head, cap = tail[keep], head[keep], cap[keep]
    return FlowNetwork.from_edges(n, tail, head, cap, source, sink)


def oracle_flow_value(net: FlowNetwork) -> int:
    """networkx on the summed capacities (exact for any int64 capacity), cross-checked by scipy when it fits int32."""
    g = nx.DiGraph()
    g.add_nodes_from(range(net.n_vertices))
    for a, b, c in zip(net.tail.tolist(), net.head.tolist(), net.capacity.tolist()):
        g.add_edge(a, b, capacity=c + (g[a][b]["capacity"] if g.has_edge(a, b) else 0))
    value = int(nx.maximum_flow_value(g, net.source_vertex, net.sink_vertex))
    summed = net.to_sparse()
    if summed.nnz == 0 or summed.data.max() < 2**31 - 1:
        scipy_value = maximum_flow(summed.astype(np.int32).tocsr(), net.source_vertex, net.sink_vertex).flow_value
        assert scipy_value == value
    return value


def assert_is_flow(net: FlowNetwork, flow: np.ndarray, value: int) -> None:
    """Capacity and conservation checked here with numpy (independently of solvers.certify)."""
    assert flow.shape == (net.n_edges,) and flow.dtype.kind == "i"
    assert np.all(flow >= 0) and np.all(flow <= net.capacity)
    balance = np.zeros(net.n_vertices, dtype=object)  # exact for 2^40-sized sums
    for a, b, f in zip(net.tail.tolist(), net.head.tolist(), flow.tolist()):
        balance[a] -= f
        balance[b] += f
    s, t = net.source_vertex, net.sink_vertex
    assert balance[t] == value and balance[s] == -value
    inner = np.delete(np.arange(net.n_vertices), [s, t])
    assert all(balance[v] == 0 for v in inner)


def random_bipartite(seed: int) -> BipartiteGraph:
    rng = np.random.default_rng(seed)
    r, c = int(rng.integers(1, 15)), int(rng.integers(1, 15))
    k = int(rng.integers(0, r * c + 1))
    return BipartiteGraph.from_edges(rng.integers(0, r, k), rng.integers(0, c, k), r, c)


def scipy_matching_size(graph: BipartiteGraph) -> int:
    if graph.n_edges == 0:
        return 0
    return int(np.count_nonzero(maximum_bipartite_matching(graph.to_sparse().tocsr(), perm_type="column") >= 0))


# ---------------------------------------------------------------------------------------------
# residual layouts

@pytest.mark.parametrize("layout", ["rcsr", "bcsr"])
def test_residual_layout_pairs_each_edge_with_its_own_reverse_arc(layout):
    for seed in range(60):
        net = random_network(seed)
        g = rs.build_residual(net, layout)
        n, m = net.n_vertices, net.n_edges
        assert g.m == m and g.residual.shape == (2 * m,)
        assert g.arrays[0].shape == (n + 1,) and all(a.dtype == np.int32 for a in g.arrays)
        assert sum(a.size for a in g.arrays) <= 2 * (n + 1) + 4 * m + 2  # O(V+E), no matrix
        np.testing.assert_array_equal(g.residual[g.forward_slot], net.capacity)
        np.testing.assert_array_equal(g.residual[g.backward_slot], 0)
        np.testing.assert_array_equal(np.sort(np.concatenate([g.forward_slot, g.backward_slot])), np.arange(2 * m))
        np.testing.assert_array_equal(g.flow(g.residual), np.zeros(m))
        owner_of, nbr_of = np.full(2 * m, -1), np.full(2 * m, -1)
        degree = np.bincount(net.tail, minlength=n) + np.bincount(net.head, minlength=n)
        np.testing.assert_array_equal(g.degrees(), degree)
        for u in range(n):
            nbrs, slots = g.arcs(u)
            assert nbrs.size == degree[u]
            owner_of[slots], nbr_of[slots] = u, nbrs
            if layout == "bcsr":
                edges = g.arrays[2][slots]
                keys = nbrs * (m + 1) + edges
                assert np.all(np.diff(keys) > 0)  # sorted by (neighbour, edge id)
        for e in range(m):
            f, b = g.forward_slot[e], g.backward_slot[e]
            u, v = int(net.tail[e]), int(net.head[e])
            assert (owner_of[f], nbr_of[f], owner_of[b], nbr_of[b]) == (u, v, v, u)
            assert rs.reverse_slot(g.layout, u, v, f, m, *g.arrays[:3]) == b
            assert rs.reverse_slot(g.layout, v, u, b, m, *g.arrays[:3]) == f


@pytest.mark.parametrize("chunks", [1, 2, 3, 7, 64])
def test_residual_layouts_are_the_stable_sorted_order_however_many_chunks_build_them(chunks):
    """The parallel bucket passes give exactly the order of a stable sort: RCSR arcs by (tail, edge) and
    (head, edge), BCSR arcs by (owner, neighbour, edge), whatever the chunk count (threads)."""
    rng = np.random.default_rng(chunks)
    larger = [FlowNetwork.from_edges(n, rng.integers(0, n, 40 * n), rng.integers(0, n, 40 * n),
                                     rng.integers(0, 9, 40 * n), 0, 1) for n in (50, 400)]
    for net in [random_network(seed) for seed in range(20)] + larger:
        n, m, tail, head = net.n_vertices, net.n_edges, net.tail, net.head
        out_ptr, out_head, in_ptr, in_tail, flow_idx, residual, arc_of_edge = rs._fill_rcsr(
            n, tail, head, net.capacity, chunks)
        by_tail, by_head = np.argsort(tail, kind="stable"), np.argsort(head, kind="stable")
        np.testing.assert_array_equal(out_ptr, np.concatenate([[0], np.cumsum(np.bincount(tail, minlength=n))]))
        np.testing.assert_array_equal(in_ptr, np.concatenate([[0], np.cumsum(np.bincount(head, minlength=n))]))
        np.testing.assert_array_equal(out_head, head[by_tail])
        np.testing.assert_array_equal(residual[:m], net.capacity[by_tail])
        np.testing.assert_array_equal(arc_of_edge[by_tail], np.arange(m))
        np.testing.assert_array_equal(in_tail, tail[by_head])
        np.testing.assert_array_equal(flow_idx, arc_of_edge[by_head])
        ptr, arc_nbr, arc_edge, residual, forward_slot, backward_slot = rs._fill_bcsr(
            n, tail, head, net.capacity, chunks)
        owner = np.concatenate([tail, head]).astype(np.int64)
        nbr = np.concatenate([head, tail]).astype(np.int64)
        edge = np.concatenate([np.arange(m), np.arange(m)])
        order = np.lexsort((edge, nbr, owner))
        np.testing.assert_array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))]))
        np.testing.assert_array_equal(arc_nbr, nbr[order])
        np.testing.assert_array_equal(arc_edge, edge[order])
        slot = np.empty(2 * m, dtype=np.int64)
        slot[order] = np.arange(2 * m)
        np.testing.assert_array_equal(forward_slot, slot[:m])
        np.testing.assert_array_equal(backward_slot, slot[m:])
        np.testing.assert_array_equal(residual[forward_slot], net.capacity)
        np.testing.assert_array_equal(residual[backward_slot], 0)


def test_bcsr_binary_search_matches_a_linear_scan_and_misses_cleanly():
    rng = np.random.default_rng(7)
    n, m = 30, 400  # many parallel / antiparallel pairs per vertex pair
    net = FlowNetwork.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 5, m), 0, 1)
    g = rs.build_bcsr(net)
    ptr, nbr, edge = g.arrays[:3]
    for u in range(n):
        nbrs, slots = g.arcs(u)
        for v, s in zip(nbrs.tolist(), slots.tolist()):
            linear = [j for j in range(ptr[v], ptr[v + 1]) if nbr[j] == u and edge[j] == edge[s]]
            assert linear == [rs.reverse_slot(rs.BCSR, u, v, s, g.m, ptr, nbr, edge)]
    # a neighbour that does not hold the edge: -1, not a wrong arc
    u, slot = int(net.tail[0]), int(g.forward_slot[0])
    stranger = next(w for w in range(n) if w != int(net.head[0]) and ptr[w + 1] > ptr[w])
    found = rs.reverse_slot(rs.BCSR, u, stranger, slot, g.m, ptr, nbr, edge)
    assert found == -1 or (nbr[found] == u and edge[found] == edge[slot] and found != slot)


def test_residual_rejects_unknown_layout():
    with pytest.raises(InputError, match="layout"):
        rs.build_residual(random_network(1), "coo")


# ---------------------------------------------------------------------------------------------
# max flow on cpu

@pytest.mark.parametrize("mode,csr", COMBOS)
def test_flow_value_and_flow_against_oracles(mode, csr):
    for seed in range(300):
        net = random_network(seed)
        expected = oracle_flow_value(net)
        sol = wbpr.run(net, "cpu", solvers.telemetry.NULL, mode=mode, csr=csr)
        assert sol.value == expected, (seed, mode, csr)
        assert_is_flow(net, sol.flow, expected)


@pytest.mark.parametrize("mode,csr", COMBOS)
def test_solve_certifies_generated_networks(mode, csr):
    nets = [solvers.generate("washington-rlg", rows=6, cols=5, seed=2),
            solvers.generate("genrmf", a=3, b=4, seed=5)] + [random_network(s) for s in range(40)]
    for net in nets:
        result = solvers.solve(net, "wbpr", backend="cpu", mode=mode, csr=csr)
        assert result.certified, result.certificate.summary()
        assert result.value == oracle_flow_value(net)
        assert result.stats["mode"] == mode and result.stats["csr"] == csr


def test_edge_cases_sink_unreachable_source_isolated_and_direct_edges():
    unreachable = FlowNetwork.from_edges(4, [0, 1, 3], [1, 2, 0], [5, 5, 5], 0, 3)
    isolated = FlowNetwork.from_edges(3, [1, 2], [2, 0], [4, 4], 0, 2)
    direct = FlowNetwork.from_edges(3, [0, 0, 0, 2], [2, 2, 1, 0], [BIG, 7, 0, 3], 0, 2)
    for net, value in ((unreachable, 0), (isolated, 0), (direct, BIG + 7)):
        for mode, csr in COMBOS:
            result = solvers.solve(net, "wbpr", backend="cpu", mode=mode, csr=csr)
            assert result.certified and result.value == value
    stuck = solvers.solve(unreachable, "wbpr", backend="cpu")
    assert stuck.stats["stranded"] > 0 and stuck.stats["return_launches"] > 0
    np.testing.assert_array_equal(stuck.flow, 0)  # everything returned to the source


@st.composite
def small_networks(draw):
    n = draw(st.integers(2, 8))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.sampled_from([0, 1, 2, 7, BIG, 3 * BIG])), max_size=24))
    source = draw(st.integers(0, n - 1))
    sink = draw(st.integers(0, n - 1).filter(lambda v: v != source))
    tail, head, cap = (np.array([e[i] for e in edges], dtype=np.int64) for i in range(3))
    return FlowNetwork.from_edges(n, tail, head, cap, source, sink)


@settings(max_examples=150)
@given(net=small_networks(), combo=st.sampled_from(COMBOS), cycles=st.sampled_from([0, 1, 2, 5]))
def test_any_small_network(net, combo, cycles):
    mode, csr = combo
    sol = wbpr.run(net, "cpu", solvers.telemetry.NULL, mode=mode, csr=csr, cycles=cycles)
    expected = oracle_flow_value(net)
    assert sol.value == expected
    assert_is_flow(net, sol.flow, expected)


@pytest.mark.parametrize("cycles", [1, 3, 40])
def test_fixed_cycle_counts_converge(cycles):
    for seed in range(0, 120, 7):
        net = random_network(seed)
        sol = wbpr.run(net, "cpu", solvers.telemetry.NULL, cycles=cycles)
        assert sol.value == oracle_flow_value(net)
        assert sol.stats["cycles"] == cycles


def test_larger_networks_match_scipy_dinic():
    rng = np.random.default_rng(11)
    n, m = 400, 3000
    random_net = FlowNetwork.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, 100, m), 0, 1)
    for net in (random_net, solvers.generate("washington-rlg", rows=20, cols=20, seed=3),
                solvers.generate("genrmf", a=5, b=6, seed=4)):
        expected = maximum_flow(net.to_sparse().astype(np.int32).tocsr(), net.source_vertex, net.sink_vertex,
                                method="dinic").flow_value
        for mode, csr in COMBOS:
            result = solvers.solve(net, "wbpr", backend="cpu", mode=mode, csr=csr)
            assert result.certified and result.value == expected


def test_parallel_planning_gives_the_same_flow_every_time(monkeypatch):
    """Force the prange planning path on every cycle: it reads one snapshot, so it must match the
    one-core path exactly, run after run."""
    nets = [solvers.generate("genrmf", a=5, b=5, seed=9), random_network(2), random_network(27)]
    serial = [wbpr.run(net, "cpu", solvers.telemetry.NULL) for net in nets]
    monkeypatch.setattr(wbpr_device, "PARALLEL_MIN_ARCS", 0)
    for _ in range(5):
        for net, expected in zip(nets, serial):
            sol = wbpr.run(net, "cpu", solvers.telemetry.NULL)
            np.testing.assert_array_equal(sol.flow, expected.flow)
            assert_is_flow(net, sol.flow, oracle_flow_value(net))


def star_network(leaves: int = 12) -> FlowNetwork:
    """source -> hub -> leaves -> sink, some leaves also back into the hub: the hub and the sink have many
    arcs (with a small HUB_CHUNK both are split into pieces). Max flow: sum of min(i, 3) for i = 1..leaves."""
    leaf = np.arange(2, 2 + leaves)
    sink = 2 + leaves
    tail = np.concatenate([[0], np.full(leaves, 1), leaf, leaf[:4]])
    head = np.concatenate([[1], leaf, np.full(leaves, sink), np.full(4, 1)])
    cap = np.concatenate([[10 * leaves], np.arange(1, leaves + 1), np.full(leaves, 3), np.full(4, 2)])
    return FlowNetwork.from_edges(sink + 1, tail, head, cap, 0, sink)


def test_hub_pieces_cover_every_arc_once_and_keep_the_lowest_key():
    from solvers.flow import wbpr_push as steps
    assert [steps.hub_pieces(c, 4) for c in (0, 3, 4, 5, 8, 9)] == [0, 0, 0, 2, 2, 3]
    rng = np.random.default_rng(3)
    for seed in range(20):
        net = random_network(seed)
        g = rs.build_residual(net, ("rcsr", "bcsr")[seed % 2])
        residual = g.residual * rng.integers(0, 2, g.residual.size)
        height = rng.integers(0, net.n_vertices, net.n_vertices).astype(np.int32)
        for u in range(net.n_vertices):
            count = rs.arc_count(g.layout, u, g.arrays[0], g.arrays[2])
            whole = steps.lowest_arc(g.layout, u, 0, 1, g.m, *g.arrays, residual, height)
            chunk = 3
            pieces = [steps.lowest_arc_upto(g.layout, u, lo + lane, min(lo + chunk, count), 2, g.m, *g.arrays,
                                            residual, height)
                      for lo in range(0, count, chunk) for lane in range(2)]
            assert min(pieces, default=steps.NO_ARC) == whole
            scanned = sum(steps.arcs_scanned(min(lo + chunk, count) - lo, lane, 2)
                          for lo in range(0, count, chunk) for lane in range(2))
            assert scanned == count


@pytest.mark.parametrize("mode,csr", COMBOS)
def test_split_hubs_give_the_same_flows(monkeypatch, mode, csr):
    """HUB_CHUNK shrunk so most vertices are hubs: values still match the oracles, and the cpu plans
    (hence flows) are exactly those of the unsplit run."""
    nets = [star_network(), star_network(40), _skewed_network()] + [random_network(s) for s in range(0, 60, 3)]
    unsplit = [wbpr.run(net, "cpu", solvers.telemetry.NULL, mode=mode, csr=csr) for net in nets]
    monkeypatch.setattr(wbpr_device, "HUB_CHUNK", 2)
    for net, before in zip(nets, unsplit):
        result = solvers.solve(net, "wbpr", backend="cpu", mode=mode, csr=csr)
        assert result.certified and result.value == oracle_flow_value(net)
        np.testing.assert_array_equal(result.flow, before.flow)
    assert solvers.solve(star_network(), "wbpr", backend="cpu").value == 1 + 2 + 3 * 10


def test_split_hub_spreads_the_vc_workload(monkeypatch):
    """A 600-arc hub on one warp vs in pieces of 64 arcs: the busiest warp does less, the spread halves."""
    net = _skewed_network()

    def busiest_and_spread(chunk):
        monkeypatch.setattr(wbpr_device, "HUB_CHUNK", chunk)
        rec = Recorder(snapshot_interval=0.0)
        assert solvers.solve(net, "wbpr", backend="cpu", observer=rec, mode="vc", csr="rcsr").certified
        record = rec.record()
        return max(s.data["modelled"].max() for s in record.snapshots if s.kind == "workload"), _spread(record, "vc")

    (whole_max, whole_spread), (split_max, split_spread) = busiest_and_spread(1024), busiest_and_spread(64)
    assert split_max < 0.7 * whole_max and split_spread < whole_spread / 2


# ---------------------------------------------------------------------------------------------
# matching through max flow

@pytest.mark.parametrize("mode,csr", COMBOS)
def test_matching_equals_scipy(mode, csr):
    graphs = [random_bipartite(s) for s in range(60)]
    graphs.append(solvers.generate("powerlaw-bipartite", rows=300, cols=200, edges=1500, seed=3))
    for graph in graphs:
        result = solvers.solve(graph, "wbpr", backend="cpu", mode=mode, csr=csr)
        assert result.problem_kind == "matching" and result.certified, result.certificate.summary()
        assert result.value == scipy_matching_size(graph)
        rows = np.flatnonzero(result.row_match >= 0)
        np.testing.assert_array_equal(result.col_match[result.row_match[rows]], rows)


def test_matching_without_edges_or_rows():
    for graph in (BipartiteGraph.from_edges([], [], 3, 4), BipartiteGraph.from_edges([], [], 0, 5),
                  BipartiteGraph.from_edges([0, 1, 2], [0, 0, 0], 3, 1)):
        for mode, csr in COMBOS:
            result = solvers.solve(graph, "wbpr", backend="cpu", mode=mode, csr=csr)
            assert result.certified and result.value == scipy_matching_size(graph)


def test_matching_network_layout():
    graph = BipartiteGraph.from_edges([0, 0, 1], [1, 2, 2], 2, 3)
    net = wbpr.matching_network(graph)
    assert (net.n_vertices, net.source_vertex, net.sink_vertex, net.n_edges) == (7, 5, 6, 2 + 3 + 3)
    np.testing.assert_array_equal(net.tail, [5, 5, 0, 0, 1, 2, 3, 4])
    np.testing.assert_array_equal(net.head, [0, 1, 3, 4, 4, 6, 6, 6])
    assert np.all(net.capacity == 1)


# ---------------------------------------------------------------------------------------------
# telemetry, workload model, CSV export

class _Stopper(Observer):
    def should_stop(self):
        return True


def _skewed_network() -> FlowNetwork:
    """A hub with 600 arcs beside many short paths: thread-centric warps are very unequal."""
    hub, leaves = 1, np.arange(2, 602)
    paths = np.arange(602, 1402).reshape(-1, 2)
    sink = 1402
    tail = np.concatenate([[0], np.full(600, hub), leaves, np.zeros(400, int), paths[:, 0], paths[:, 1]])
    head = np.concatenate([[hub], leaves, np.full(600, sink), paths[:, 0], paths[:, 1], np.full(400, sink)])
    cap = np.concatenate([[10**6], np.full(600, 3), np.full(600, 2), np.full(1200, 5)])
    return FlowNetwork.from_edges(sink + 1, tail, head, cap, 0, sink)


def _spread(record, mode) -> float:
    ratios = [s.data["modelled"].max() / s.data["modelled"].mean() for s in record.snapshots
              if s.kind == "workload" and s.meta["mode"] == mode and s.data["modelled"].mean() > 0]
    assert ratios
    return float(np.mean(ratios))


def test_telemetry_keys_labels_and_workload_snapshots():
    net = _skewed_network()
    spreads = {}
    for mode in ("tc", "vc"):
        rec = Recorder(snapshot_interval=0.0)
        result = solvers.solve(net, "wbpr", backend="cpu", observer=rec, mode=mode, csr="rcsr")
        assert result.certified and result.value == oracle_flow_value(net)
        record = rec.record()
        assert record.info["label"] == "height"
        phases = {s.phase for s in record.iterations}
        assert {"push-relabel", "global-relabel"} <= phases
        for it in record.iterations:
            assert {"excess_total", "max_level", "stranded"} <= set(it.extra)
        assert record.iterations[-1].value == result.value
        kinds = {s.kind for s in record.snapshots}
        assert {"labels", "workload"} <= kinds
        labels = next(s for s in record.snapshots if s.kind == "labels")
        assert "vertices.hist_counts" in labels.data and labels.meta["label"] == "height"
        for snap in (s for s in record.snapshots if s.kind == "workload"):
            assert "cycles" not in snap.data  # no clock on cpu
            assert snap.meta["kernel"] == "push-relabel" and snap.meta["mode"] == mode
            assert snap.meta["csr"] == "rcsr" and snap.meta["launch"] >= 1
            assert snap.data["modelled"].size == result.stats["threads"] // 32
        spreads[mode] = _spread(record, mode)
    assert spreads["vc"] < spreads["tc"] / 3  # vc spreads the hub's arcs over a warp's lanes


def test_matching_labels_have_row_and_column_sides():
    rec = Recorder(snapshot_interval=0.0)
    solvers.solve(random_bipartite(5), "wbpr", backend="cpu", observer=rec)
    labels = [s for s in rec.snapshots if s.kind == "labels"]
    assert labels and all("rows.sample" in s.data and "cols.sample" in s.data for s in labels)


def test_no_workload_copies_without_an_observer(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("workload copied with nobody listening")
    monkeypatch.setattr(wbpr_device.WbprDevice, "workload", refuse)
    monkeypatch.setattr(wbpr_device.WbprDevice, "heights", refuse)
    assert solvers.solve(_skewed_network(), "wbpr", backend="cpu").certified


def test_warp_workload_is_the_max_over_each_warps_lanes():
    lanes = np.arange(70)
    np.testing.assert_array_equal(wbpr.warp_workload(lanes), [31, 63, 69])


def test_workload_csv_roundtrip(tmp_path):
    rec = Recorder(snapshot_interval=0.0)
    solvers.solve(_skewed_network(), "wbpr", backend="cpu", observer=rec, mode="vc")
    record = rec.record()
    saved = tmp_path / "run.npz"
    record.save(saved)
    path = tmp_path / "workload.csv"
    rows = wbpr.workload_csv(RunRecord.load(saved), path)
    snaps = [s for s in record.snapshots if s.kind == "workload"]
    assert rows == sum(s.data["modelled"].size for s in snaps) > 0
    with open(path, newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["launch", "warp", "modelled", "cycles", "mode", "csr"]
    assert len(table) == rows and {r["mode"] for r in table} == {"vc"} and {r["cycles"] for r in table} == {""}
    first = [float(r["modelled"]) for r in table if int(r["launch"]) == snaps[0].meta["launch"]]
    np.testing.assert_array_equal(first, snaps[0].data["modelled"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz", "workload.csv"]  # no temp files left
    assert wbpr.workload_csv([], tmp_path / "empty.csv") == 0


def test_options_and_backends_fail_cleanly():
    net = random_network(3)
    with pytest.raises(InputError, match="mode"):
        solvers.solve(net, "wbpr", backend="cpu", mode="warp")
    with pytest.raises(InputError, match="csr"):
        solvers.solve(net, "wbpr", backend="cpu", csr="coo")
    with pytest.raises(InputError, match="cycles"):
        solvers.solve(net, "wbpr", backend="cpu", cycles=-1)
    with pytest.raises(Cancelled):
        solvers.solve(net, "wbpr", backend="cpu", observer=_Stopper())
    with pytest.raises(BackendUnavailable):
        wbpr.run(net, "cudasim", solvers.telemetry.NULL)  # this process has no simulator
    if not solvers.targets.cuda_available():
        with pytest.raises(BackendUnavailable):
            solvers.solve(net, "wbpr", backend="cuda")


def test_registry_entry():
    algo = solvers.algorithms()["wbpr"]
    assert algo.problem_kinds == ("flow", "matching") and algo.label == "height"
    assert algo.backends == ("cpu", "cuda", "cudasim") and algo.reference == "Hsieh et al. 2024"
    assert {o.name: o.default for o in algo.options} == {"mode": "vc", "csr": "bcsr", "cycles": 0, "measure": "auto"}


# ---------------------------------------------------------------------------------------------
# the CUDA simulator (one subprocess) and PTX for a real GPU

CUDASIM_CODE = """
import json
import numpy as np
import solvers
from solvers.problems import BipartiteGraph, FlowNetwork
from solvers.telemetry import Recorder
{helpers}
out = {{"flows": [], "matchings": [], "repeats": [], "edge_cases": [], "telemetry": {{}}}}
for i, (mode, csr) in enumerate({combos}):
    if i % SHARDS != SHARD:  # each simulator process takes its share of the combinations
        continue
    for seed in list(range(8)) + [s for s in range(8, SEEDS) if s % 4 == i]:  # 8 shared + every 4th, per combination
        r = solvers.solve(random_network(seed), "wbpr", backend="cudasim", mode=mode, csr=csr, cycles=6)
        out["flows"].append([mode, csr, seed, r.value, bool(r.certified), r.certificate.summary()])
    for seed in (2 + i, 9):
        r = solvers.solve(random_bipartite(seed), "wbpr", backend="cudasim", mode=mode, csr=csr, cycles=4)
        out["matchings"].append([mode, csr, seed, r.value, bool(r.certified)])
    net = random_network(14)
    for _ in range(2):
        r = solvers.solve(net, "wbpr", backend="cudasim", mode=mode, csr=csr, cycles=4)
        out["repeats"].append([mode, csr, r.value, bool(r.certified)])
    for net in (FlowNetwork.from_edges(3, [], [], [], 0, 2), FlowNetwork.from_edges(2, [0, 1], [1, 0], [BIG, 1], 0, 1)):
        r = solvers.solve(net, "wbpr", backend="cudasim", mode=mode, csr=csr)
        out["edge_cases"].append([mode, csr, r.value, bool(r.certified)])
    rec = Recorder(snapshot_interval=0.0)
    r = solvers.solve(random_network(0), "wbpr", backend="cudasim", observer=rec, mode=mode, csr=csr, cycles=4)
    work = [s for s in rec.snapshots if s.kind == "workload"]
    out["telemetry"][mode + "-" + csr] = {{
        "certified": bool(r.certified), "phases": sorted({{s.phase for s in rec.iterations}}),
        "kinds": sorted({{s.kind for s in rec.snapshots}}),
        "workload_keys": sorted({{k for s in work for k in s.data}}),
        "warps": sorted({{int(s.data["modelled"].size) for s in work}}), "threads": r.stats["threads"],
        "meta": sorted({{(s.meta["mode"], s.meta["csr"], s.meta["kernel"]) for s in work}})}}
from solvers.flow import wbpr_device
wbpr_device.HUB_CHUNK = 4  # the star's hub and sink, and many random vertices, become split hubs
out["hubs"] = []
for i, (mode, csr) in enumerate({combos}):
    if i % SHARDS != SHARD:
        continue
    for name, net in [("star", star_network()), (8 + i, random_network(8 + i))]:
        r = solvers.solve(net, "wbpr", backend="cudasim", mode=mode, csr=csr, cycles=4)
        out["hubs"].append([mode, csr, name, r.value, bool(r.certified), r.certificate.summary()])
print(json.dumps(out))
"""


def test_cudasim_flows_matchings_repeats_and_telemetry(run_cudasim_shards, sweep):
    """200 networks (56 per mode x layout) under `make test-all`; seeds below 12 (9 per
    combination, 8 of them shared by every combination) under `make test`."""
    seeds = sweep(200, 12)
    per_combination = 8 + len(range(8, seeds)) // 4
    helpers = "\n".join(inspect.getsource(f) for f in (random_network, random_bipartite, star_network))
    code = CUDASIM_CODE.format(helpers=f"BIG = {BIG}\nSEEDS = {seeds}\n" + helpers, combos=repr(COMBOS))
    out = {}
    for output in run_cudasim_shards(code):  # two simulator processes, two combinations each
        for key, value in json.loads(output.strip().splitlines()[-1]).items():
            if isinstance(value, dict):
                out.setdefault(key, {}).update(value)
            else:
                out.setdefault(key, []).extend(value)
    assert len(out["flows"]) == 4 * per_combination
    for mode, csr, seed, value, certified, summary in out["flows"]:
        assert certified, (mode, csr, seed, summary)
        assert value == oracle_flow_value(random_network(seed)), (mode, csr, seed)
    for mode, csr, seed, value, certified in out["matchings"]:
        assert certified and value == scipy_matching_size(random_bipartite(seed)), (mode, csr, seed)
    expected = oracle_flow_value(random_network(14))
    assert len(out["repeats"]) == 8 and all(c and v == expected for *_, v, c in out["repeats"])
    assert [(v, c) for *_, v, c in out["edge_cases"]] == [(0, True), (BIG, True)] * 4
    assert len(out["hubs"]) == 4 * 2
    for mode, csr, name, value, certified, summary in out["hubs"]:
        net = star_network() if name == "star" else random_network(name)
        assert certified and value == oracle_flow_value(net), (mode, csr, name, summary)
    assert sorted(out["telemetry"]) == sorted(f"{mode}-{csr}" for mode, csr in COMBOS)
    for combo, tel in out["telemetry"].items():
        mode, csr = combo.split("-")
        assert tel["certified"] and {"push-relabel", "global-relabel"} <= set(tel["phases"])
        assert tel["kinds"] == ["labels", "workload"] and tel["workload_keys"] == ["modelled"]
        assert tel["warps"] == [tel["threads"] // 32]
        assert tel["meta"] == [[mode, csr, "push-relabel"]]


PTX_CODE = """
import json, sys
try:
    from numba.cuda.cudadrv.nvvm import NVVM
    NVVM()
except Exception as exc:
    print(json.dumps({"skip": f"libNVVM is not usable here: {exc!r}"}))
    sys.exit(0)
import numba.cuda.dispatcher as dispatcher
from solvers.targets.cuda_jit import compile_ptx

class _Hopper:  # device functions ask the current device for its compute capability; pin sm_90
    compute_capability = (9, 0)

dispatcher.get_current_device = lambda: _Hopper()
from solvers.flow import wbpr_push, wbpr_relabel

records = [(k, wbpr_push.PUSH_SIG) for k in wbpr_push.KERNELS]
records.append((wbpr_relabel.GLOBAL_RELABEL, wbpr_relabel.RELABEL_SIG))
out = {}
for kernel, sig in records:
    ptx, _ = compile_ptx(kernel.cuda, sig, cc=(9, 0))
    out[kernel.cuda.py_func.__name__] = {
        "entry": ".entry" in ptx, "sm_90": ".target sm_90" in ptx, "clock": "%clock64" in ptx,
        "shfl": "shfl.sync.down" in ptx, "grid_sync": "cudaCGSynchronize" in ptx or "cudaCG" in ptx,
        "shape": kernel.shape}
print(json.dumps(out))
"""


def test_every_cuda_kernel_compiles_for_sm90():
    """Every Kernel record's cuda form compiles for sm_90 without a GPU; the measured ones read the SM's
    clock through inline PTX (no linked CUDA C, so they are cacheable), the plain ones do not; the
    cooperative ones synchronise the grid; only the simulator's vc form avoids shuffles."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PTX_CODE)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert set(out) == {"tc_push_relabel", "vc_push_relabel", "global_relabel", "tc_push_relabel_measured",
                        "vc_push_relabel_measured", "vc_push_relabel_shared"}
    assert all(v["entry"] and v["sm_90"] for v in out.values())
    assert out["tc_push_relabel_measured"]["clock"] and out["vc_push_relabel_measured"]["clock"]
    assert not any(out[name]["clock"] for name in ("tc_push_relabel", "vc_push_relabel", "vc_push_relabel_shared",
                                                   "global_relabel"))
    assert out["vc_push_relabel"]["shfl"] and out["vc_push_relabel_measured"]["shfl"]
    assert not out["vc_push_relabel_shared"]["shfl"]
    cooperative = {name for name, v in out.items() if v["shape"] == "cooperative"}
    assert cooperative == {"vc_push_relabel", "vc_push_relabel_measured", "vc_push_relabel_shared", "global_relabel"}
    assert all(out[name]["grid_sync"] for name in cooperative) and not out["tc_push_relabel"]["grid_sync"]


def test_every_wbpr_loop_and_kernel_is_cached_and_the_forms_take_the_same_arguments():
    """cache=True on every cpu loop and cuda kernel (numba's on-disk cache; no kernel links CUDA C), and
    each Kernel record pairs a cpu loop and a cuda kernel with the same parameters."""
    from solvers.flow import wbpr_push, wbpr_relabel
    from solvers.targets.cuda_jit import LazyCudaKernel
    records = list(wbpr_push.KERNELS) + [wbpr_relabel.GLOBAL_RELABEL]
    for kernel in records:
        assert type(kernel.cpu._cache).__name__ not in ("NullCache", "_NullCache"), kernel.name
        assert isinstance(kernel.cuda, LazyCudaKernel) and kernel.cuda.options["cache"], kernel.name
        cpu_params = list(inspect.signature(kernel.cpu.py_func).parameters)
        assert cpu_params == list(inspect.signature(kernel.cuda.py_func).parameters), kernel.name
    assert len({k.name for k in records}) == len(records)
    assert not list(Path(wbpr.__file__).parent.glob("*.cu"))
