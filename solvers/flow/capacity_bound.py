"""Capacities near 2^63: lower the source's so every sum a solver forms fits in int64, without
changing the maximum flow.

Every flow sum (a vertex's excess, the value, a push-relabel preflow) is at most the total
capacity out of the source, so that total must fit in int64. Two bounds lower it without changing
the maximum flow value (a flow of the lowered network is a flow of the original):

* an edge s -> v (v not the sink) never needs more than v can pass on: the capacity out of v to
  vertices other than s (flow that returns to s can be cancelled);
* the maximum flow is at most the capacity of any cut, in particular B = min(capacity out of the
  source, capacity into the sink) (exact sums): lowering the source's capacities above K to K, for
  any K >= B, leaves every cut through a lowered edge at capacity >= B.

So a network with capacities out of the source far past int64 but a maximum flow that fits is
solved exactly. Where the lowered capacities would still sum past int64, K goes below B: then the
answer is the maximum only if no augmenting path remains in the original network, which
``refuse_unless_maximum`` checks afterwards (else the run is refused with one line).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from ..errors import InputError
from ..exact import INT64_MAX, int_sum
from ..problems import FlowNetwork


@dataclasses.dataclass(frozen=True)
class Clamped:
    network: FlowNetwork   # the network to solve (the original when nothing was lowered)
    limit: int | None      # the source's capacities above it were lowered to it (None: nothing was)
    exact: bool            # the lowered network provably has the same maximum flow value


def clamp_capacities(network: FlowNetwork) -> Clamped:
    """The network with capacities lowered as the module docstring says (cheap when no int64 sum
    of capacities could overflow: then the network is returned as it is)."""
    cap = network.capacity
    m = cap.size
    if not m or int(cap.max()) <= INT64_MAX // m:
        return Clamped(network, None, True)  # every sum of capacities fits: nothing to do
    s, t = network.source_vertex, network.sink_vertex
    at_source = network.tail == s
    passes_on = _out_capacity(network.n_vertices, network.tail, network.head, cap, s)
    heads = network.head[at_source].astype(np.int64)
    from_source = np.where(heads == t, cap[at_source], np.minimum(cap[at_source], passes_on[heads]))
    bound = min(int_sum(cap[at_source]), int_sum(cap[network.head == t]))
    limit = min(bound, INT64_MAX)
    if _lowered_sum(from_source, limit) > INT64_MAX:
        low, high = 0, limit  # the largest limit whose lowered source capacities fit
        while low < high:
            mid = (low + high + 1) // 2
            if _lowered_sum(from_source, mid) <= INT64_MAX:
                low = mid
            else:
                high = mid - 1
        limit = low
    lowered_source = np.minimum(from_source, limit)
    if np.array_equal(lowered_source, cap[at_source]):
        return Clamped(network, None, True)
    lowered = cap.copy()
    lowered[at_source] = lowered_source
    return Clamped(dataclasses.replace(network, capacity=_frozen(lowered)), limit, limit >= bound)


@njit(cache=True)
def _out_capacity(n, tail, head, capacity, source):
    """Per vertex, the capacity of its edges to vertices other than ``source``, saturating at
    2^63 - 1 (no wrap; a lower sum is exact)."""
    out = np.zeros(n, dtype=np.int64)
    top = np.iinfo(np.int64).max
    for e in range(capacity.size):
        if head[e] == source:
            continue
        v = tail[e]
        out[v] = top if capacity[e] > top - out[v] else out[v] + capacity[e]
    return out


def _lowered_sum(capacities: np.ndarray, limit: int) -> int:
    return int_sum(np.minimum(capacities, limit))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def still_augmentable(network: FlowNetwork, flow: np.ndarray) -> bool:
    """Whether the sink is reachable from the source in ``network``'s residual graph of ``flow``
    (capacity left forward, flow to push back backward)."""
    forward = network.capacity > flow
    backward = flow > 0
    rows = np.concatenate([network.tail[forward], network.head[backward]]).astype(np.int64)
    cols = np.concatenate([network.head[forward], network.tail[backward]]).astype(np.int64)
    n = network.n_vertices
    graph = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    reached = breadth_first_order(graph, network.source_vertex, directed=True, return_predecessors=False)
    return bool(np.any(reached == network.sink_vertex))


def refuse_unless_maximum(clamped: Clamped, original: FlowNetwork, flow: np.ndarray) -> None:
    """After solving a network lowered below its trivial cut bound: the flow is maximum for the
    original unless an augmenting path remains, in which case the maximum flow needs more than
    64-bit integers hold."""
    if clamped.exact:
        return
    if still_augmentable(original, flow):
        value = int_sum(flow[original.tail == original.source_vertex]) - \
            int_sum(flow[original.head == original.source_vertex])
        raise InputError(f"the maximum flow is more than {value} and the capacities out of the source sum "
                         "past 2^63 - 1: this network cannot be solved in 64-bit integers", original.source)
