"""wbpr on a real GPU (skipped without one): the lock-free races never break a flow, every mode x layout
agrees with scipy, matchings are maximum, and workload snapshots carry clock64 cycles per warp."""
from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import solvers
from solvers.problems import FlowNetwork
from solvers.targets import cuda_available
from solvers.telemetry import Recorder

pytestmark = pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU usable by numba.cuda")
COMBOS = list(product(("tc", "vc"), ("rcsr", "bcsr")))


def _scipy_value(net: FlowNetwork) -> int:
    return int(maximum_flow(net.to_sparse().astype(np.int32).tocsr(), net.source_vertex, net.sink_vertex,
                            method="dinic").flow_value)


def _contended_network() -> FlowNetwork:
    """Many vertices pushing into few: atomics on the same excess and arcs every cycle."""
    rng = np.random.default_rng(5)
    n, m = 3000, 30000
    hubs = rng.integers(2, 40, m // 3)
    tail = np.concatenate([rng.integers(0, n, m - hubs.size), rng.integers(0, n, hubs.size)])
    head = np.concatenate([rng.integers(0, n, m - hubs.size), hubs])
    tail = np.concatenate([tail, np.zeros(500, int), rng.integers(2, 40, 200)])
    head = np.concatenate([head, rng.integers(40, n, 500), np.ones(200, int)])
    cap = rng.integers(1, 1000, tail.size)
    return FlowNetwork.from_edges(n, tail, head, cap, 0, 1)


def test_repeated_runs_are_all_certified():
    net = _contended_network()
    expected = _scipy_value(net)
    for i in range(100):
        mode, csr = COMBOS[i % 4]
        result = solvers.solve(net, "wbpr", backend="cuda", mode=mode, csr=csr)
        assert result.certified, (i, mode, csr, result.certificate.summary())
        assert result.value == expected


@pytest.mark.parametrize("mode,csr", COMBOS)
def test_generated_networks_match_scipy(mode, csr):
    nets = [solvers.generate("washington-rlg", rows=64, cols=64, seed=1),
            solvers.generate("genrmf", a=8, b=8, seed=2), _contended_network()]
    for net in nets:
        result = solvers.solve(net, "wbpr", backend="cuda", mode=mode, csr=csr)
        assert result.certified and result.value == _scipy_value(net)


def _hub_network() -> FlowNetwork:
    """Power-law-like: a few vertices with thousands of arcs (many HUB_CHUNK pieces) amid short-degree ones."""
    rng = np.random.default_rng(8)
    n, m = 20000, 120000
    weights = rng.permutation(np.arange(1, n + 1, dtype=np.float64) ** -0.9)
    cdf = np.cumsum(weights) / weights.sum()
    tail = np.minimum(np.searchsorted(cdf, rng.random(m)), n - 1)
    head = np.minimum(np.searchsorted(cdf, rng.random(m)), n - 1)
    keep = tail != head
    tail, head = tail[keep], head[keep]
    source, sink = (int(v) for v in np.argsort(np.bincount(tail, minlength=n) + np.bincount(head, minlength=n))[-2:])
    cap = rng.integers(1, 50, tail.size)
    return FlowNetwork.from_edges(n, tail, head, cap, source, sink)


@pytest.mark.parametrize("mode,csr", COMBOS)
def test_hub_network_matches_scipy(mode, csr):
    from solvers.flow import wbpr_device
    net = _hub_network()
    degrees = np.bincount(net.tail, minlength=net.n_vertices) + np.bincount(net.head, minlength=net.n_vertices)
    assert degrees.max() > 8 * wbpr_device.HUB_CHUNK  # the hub path really runs
    expected = _scipy_value(net)
    for _ in range(5):
        result = solvers.solve(net, "wbpr", backend="cuda", mode=mode, csr=csr)
        assert result.certified and result.value == expected


@pytest.mark.parametrize("mode,csr", COMBOS)
def test_matching_is_maximum(mode, csr):
    graph = solvers.generate("powerlaw-bipartite", rows=5000, cols=3000, edges=30000, seed=4)
    expected = int(np.count_nonzero(maximum_bipartite_matching(graph.to_sparse().tocsr(), perm_type="column") >= 0))
    result = solvers.solve(graph, "wbpr", backend="cuda", mode=mode, csr=csr)
    assert result.certified and result.value == expected


@pytest.mark.parametrize("mode", ["tc", "vc"])
def test_workload_snapshots_carry_clock_cycles(mode):
    net = solvers.generate("washington-rlg", rows=64, cols=64, seed=3)
    rec = Recorder(snapshot_interval=0.0)
    result = solvers.solve(net, "wbpr", backend="cuda", observer=rec, mode=mode)
    assert result.certified
    work = [s for s in rec.snapshots if s.kind == "workload"]
    assert work and all("cycles" in s.data for s in work)
    for snap in work:
        assert snap.data["cycles"].shape == snap.data["modelled"].shape
        assert snap.data["cycles"].dtype == np.int64 and np.all(snap.data["cycles"] >= 0)
        assert snap.data["cycles"].max() > 0 and snap.meta["mode"] == mode
    off = Recorder(snapshot_interval=0.0)
    solvers.solve(net, "wbpr", backend="cuda", observer=off, mode=mode, measure="off")
    assert all("cycles" not in s.data for s in off.snapshots if s.kind == "workload")


def test_huge_capacities_on_the_gpu_are_exact():
    """Issue 11: capacities near 2^63 with a small maximum flow are solved (the source's edges are
    lowered first), and a path of int64-max capacities gives the exact value."""
    big = 2 ** 63 - 1
    small = FlowNetwork.from_edges(4, [0, 0, 1, 2], [1, 2, 3, 3], [big, big, 1, 1], 0, 3)
    path = FlowNetwork.from_edges(3, [0, 1], [1, 2], [big, big], 0, 2)
    for mode, csr in COMBOS:
        for net, value in ((small, 2), (path, big)):
            r = solvers.solve(net, "wbpr", backend="cuda", mode=mode, csr=csr)
            assert r.certified and r.certificate.witness["value"] == value, (mode, csr)
