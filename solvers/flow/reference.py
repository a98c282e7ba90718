"""Maximum flow via scipy: ``dinic`` and ``edmonds-karp`` (scipy.sparse.csgraph.maximum_flow).

scipy works on one int32 capacity per ordered vertex pair and returns the net flow per pair. Here
each vertex pair {u, v} (u < v) keeps the summed capacities of its u->v and v->u edges; the net
flow is then split over the FlowNetwork's own edges (greedily up to capacity, all on the direction
it goes). Capacities past int32 (up to 2^62) are handled by bit scaling: solve with capacities
>> K, double the flow, and add a max flow of the residual for one more bit; that residual flow is
at most the number of arcs, so clipping residual capacities to int32 never binds.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from ..problems import FlowNetwork
from ..registry import Algorithm
from ..result import Solution

INT32_MAX = np.iinfo(np.int32).max

ALGORITHMS = [
    Algorithm(name="dinic", problem_kinds=("flow",), accepts=(FlowNetwork,), backends=("cpu",),
              runner="solvers.flow.reference:run_dinic",
              summary="Blocking flows in BFS level graphs (scipy maximum_flow, method='dinic').",
              reference="Dinic 1970; scipy.sparse.csgraph.maximum_flow"),
    Algorithm(name="edmonds-karp", problem_kinds=("flow",), accepts=(FlowNetwork,), backends=("cpu",),
              runner="solvers.flow.reference:run_edmonds_karp",
              summary="Shortest augmenting paths by BFS (scipy maximum_flow, method='edmonds_karp').",
              reference="Edmonds & Karp 1972; scipy.sparse.csgraph.maximum_flow"),
]


def run_dinic(network: FlowNetwork, backend: str, tel) -> Solution:
    return _run(network, tel, "dinic")


def run_edmonds_karp(network: FlowNetwork, backend: str, tel) -> Solution:
    return _run(network, tel, "edmonds_karp")


class _Pairs:
    """The network as unordered vertex pairs lo < hi with summed capacities each way."""

    def __init__(self, network: FlowNetwork):
        n = network.n_vertices
        tail, head = network.tail.astype(np.int64), network.head.astype(np.int64)
        self.forward = tail < head  # the edge runs lo -> hi
        lo, hi = np.minimum(tail, head), np.maximum(tail, head)
        keys, self.edge_pair = np.unique(lo * n + hi, return_inverse=True)
        self.edge_pair = self.edge_pair.reshape(-1)
        self.lo, self.hi = keys // n, keys % n
        self.cap_up = np.zeros(keys.size, dtype=np.int64)    # lo -> hi
        self.cap_down = np.zeros(keys.size, dtype=np.int64)  # hi -> lo
        np.add.at(self.cap_up, self.edge_pair[self.forward], network.capacity[self.forward])
        np.add.at(self.cap_down, self.edge_pair[~self.forward], network.capacity[~self.forward])


def _bits(x: int) -> int:
    return int(x).bit_length()


def _net_pair_flow(flow: csr_matrix, pairs: _Pairs, n: int) -> np.ndarray:
    """scipy's (antisymmetric) flow read at (lo, hi), falling back to -flow(hi, lo)."""
    coo = flow.tocoo()
    keys = coo.row.astype(np.int64) * n + coo.col
    order = np.argsort(keys)
    keys, values = keys[order], coo.data[order].astype(np.int64)

    def lookup(a, b):
        want = a * n + b
        at = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
        found = keys[at] == want if keys.size else np.zeros(want.size, dtype=bool)
        return found, np.where(found, values[at] if keys.size else 0, 0)

    found_up, up = lookup(pairs.lo, pairs.hi)
    _, down = lookup(pairs.hi, pairs.lo)
    return np.where(found_up, up, -down)


def _max_pair_flow(network: FlowNetwork, pairs: _Pairs, method: str) -> tuple[np.ndarray, int]:
    """Net flow lo -> hi per pair of a maximum flow, and the number of scipy calls."""
    n, s = network.n_vertices, network.source_vertex
    at_source = np.where(pairs.lo == s, pairs.cap_up, 0).sum() + np.where(pairs.hi == s, pairs.cap_down, 0).sum()
    biggest = max(int(pairs.cap_up.max(initial=0)), int(pairs.cap_down.max(initial=0)))
    # the first phase must fit int32 outright; later phases carry at most 2 * pairs units each
    top = max(0, _bits(biggest) - 31, _bits(int(at_source)) - 31)
    net = np.zeros(pairs.lo.size, dtype=np.int64)
    rows = np.concatenate([pairs.lo, pairs.hi])
    cols = np.concatenate([pairs.hi, pairs.lo])
    for shift in range(top, -1, -1):
        net *= 2
        up = (pairs.cap_up >> shift) - net
        down = (pairs.cap_down >> shift) + net
        residual = np.minimum(np.concatenate([up, down]), INT32_MAX).astype(np.int32)
        keep = residual > 0
        graph = csr_matrix((residual[keep], (rows[keep], cols[keep])), shape=(n, n))
        result = maximum_flow(graph, s, network.sink_vertex, method=method)
        net += _net_pair_flow(result.flow, pairs, n)
    return net, top + 1


def _edge_flows(network: FlowNetwork, pairs: _Pairs, net: np.ndarray) -> np.ndarray:
    """Split each pair's net flow over the edges running its way, greedily in edge order."""
    group = pairs.edge_pair * 2 + pairs.forward
    order = np.argsort(group, kind="stable")
    g, cap = group[order], network.capacity[order]
    before = np.cumsum(cap) - cap  # capacity of earlier edges, over all groups
    first = np.r_[True, g[1:] != g[:-1]] if g.size else np.zeros(0, dtype=bool)
    group_start = np.maximum.accumulate(np.where(first, np.arange(g.size), 0))
    before -= before[group_start]
    pair_net = net[g // 2]
    amount = np.where(g % 2 == 1, np.maximum(pair_net, 0), np.maximum(-pair_net, 0))
    flow = np.empty(network.n_edges, dtype=np.int64)
    flow[order] = np.clip(amount - before, 0, cap)
    return flow


def _run(network: FlowNetwork, tel, method: str) -> Solution:
    if tel.enabled:
        tel.iteration(0, "start")
    if network.n_edges == 0:
        flow, calls = np.zeros(0, dtype=np.int64), 0
    else:
        pairs = _Pairs(network)
        net, calls = _max_pair_flow(network, pairs, method)
        flow = _edge_flows(network, pairs, net)
    s = network.source_vertex
    value = int(flow[network.tail == s].sum() - flow[network.head == s].sum())
    if tel.enabled:
        tel.iteration(1, "done", value=value, scipy_calls=calls)
    return Solution(value=value, iterations=max(calls, 1), flow=flow, stats={"scipy_calls": calls})
