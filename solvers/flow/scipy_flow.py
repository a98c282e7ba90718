"""Maximum flow via scipy: the runners of ``dinic`` and ``edmonds-karp`` (declared in
solvers.flow.reference), on scipy.sparse.csgraph.maximum_flow.

scipy works on one int32 capacity per ordered vertex pair and returns the net flow per pair. Here
each vertex pair {u, v} (u < v) keeps the summed capacities of its u->v and v->u edges; the net
flow is then split over the FlowNetwork's own edges (greedily up to capacity, all on the direction
it goes). Capacities past int32 are handled by bit scaling: solve with capacities >> K, double the
flow, and add a max flow of the residual for one more bit; that residual flow is at most the number
of arcs, so clipping residual capacities to int32 never binds. Capacities near 2^63 are first
lowered to a cut bound (solvers.flow.capacity_bound) and pair sums saturate there, so no int64
sum wraps; the value is summed exactly.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from numba import njit

from ..exact import int_sum
from ..problems import FlowNetwork
from ..result import Solution
from .capacity_bound import clamp_capacities, refuse_unless_maximum

INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = np.iinfo(np.int64).max


def run_dinic(network: FlowNetwork, backend: str, tel) -> Solution:
    return _run(network, tel, "dinic")


def run_edmonds_karp(network: FlowNetwork, backend: str, tel) -> Solution:
    return _run(network, tel, "edmonds_karp")


class _Pairs:
    """The network as unordered vertex pairs lo < hi with summed capacities each way. The sums
    saturate at 2^63 - 1, which changes no maximum flow: the capacities out of the source sum to
    at most that (capacity_bound), so a cut through a saturated pair is never the minimum."""

    def __init__(self, network: FlowNetwork):
        n = network.n_vertices
        tail, head = network.tail.astype(np.int64), network.head.astype(np.int64)
        self.forward = tail < head  # the edge runs lo -> hi
        lo, hi = np.minimum(tail, head), np.maximum(tail, head)
        keys, self.edge_pair = np.unique(lo * n + hi, return_inverse=True)
        self.edge_pair = self.edge_pair.reshape(-1)
        self.lo, self.hi = keys // n, keys % n
        limit = INT64_MAX
        self.cap_up = _saturated_sums(self.edge_pair[self.forward], network.capacity[self.forward],
                                      keys.size, limit)    # lo -> hi
        self.cap_down = _saturated_sums(self.edge_pair[~self.forward], network.capacity[~self.forward],
                                        keys.size, limit)  # hi -> lo


@njit(cache=True)
def _saturated_sums(groups, values, n_groups, limit):
    """Per-group sums of non-negative values, capped at ``limit`` (no int64 wrap)."""
    out = np.zeros(n_groups, dtype=np.int64)
    for k in range(values.size):
        g = groups[k]
        out[g] = limit if values[k] > limit - out[g] else out[g] + values[k]
    return out


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
    at_source = int_sum(pairs.cap_up[pairs.lo == s]) + int_sum(pairs.cap_down[pairs.hi == s])
    biggest = max(int(pairs.cap_up.max(initial=0)), int(pairs.cap_down.max(initial=0)))
    # the first phase must fit int32 outright; later phases carry at most 2 * pairs units each
    top = max(0, _bits(biggest) - 31, _bits(int(at_source)) - 31)
    net = np.zeros(pairs.lo.size, dtype=np.int64)
    rows = np.concatenate([pairs.lo, pairs.hi])
    cols = np.concatenate([pairs.hi, pairs.lo])
    for shift in range(top, -1, -1):
        net *= 2
        cap_up, cap_down = pairs.cap_up >> shift, pairs.cap_down >> shift
        # residuals cap - net and cap + net, saturating at INT64_MAX (the int32 clip below binds first)
        up = cap_up - np.maximum(net, cap_up - INT64_MAX)
        down = cap_down + np.minimum(net, INT64_MAX - cap_down)
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
    g = group[order]
    pair_net = net[g // 2]
    amount = np.where(g % 2 == 1, np.maximum(pair_net, 0), np.maximum(-pair_net, 0))
    flow = np.empty(network.n_edges, dtype=np.int64)
    flow[order] = _fill_greedily(g, amount, network.capacity[order])
    return flow


@njit(cache=True)
def _fill_greedily(groups, amounts, capacities):
    """Edges sorted by group, each group's amount poured into its edges in order (no running sum
    of capacities, which would wrap past 2^63)."""
    out = np.zeros(groups.size, dtype=np.int64)
    left = 0
    for k in range(groups.size):
        if k == 0 or groups[k] != groups[k - 1]:
            left = amounts[k]
        take = min(left, capacities[k])
        out[k] = take
        left -= take
    return out


def _run(original: FlowNetwork, tel, method: str) -> Solution:
    if tel.enabled:
        tel.iteration(0, "start")
    clamped = clamp_capacities(original)
    network = clamped.network
    if network.n_edges == 0:
        flow, calls = np.zeros(0, dtype=np.int64), 0
    else:
        pairs = _Pairs(network)
        net, calls = _max_pair_flow(network, pairs, method)
        flow = _edge_flows(network, pairs, net)
    refuse_unless_maximum(clamped, original, flow)
    s = network.source_vertex
    value = int_sum(flow[network.tail == s]) - int_sum(flow[network.head == s])  # exact past 2^63
    if tel.enabled:
        tel.iteration(1, "done", value=value, scipy_calls=calls)
    stats = {"scipy_calls": calls}
    if clamped.limit is not None:
        stats["capacity_limit"] = clamped.limit
    return Solution(value=value, iterations=max(calls, 1), flow=flow, stats=stats)
