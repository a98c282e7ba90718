"""The flow certificate's passes over a network (solvers.certify.certify_flow): the net outflow of
every vertex, the vertices the source reaches in the residual graph, and the capacity of the cut
they leave.

The cut's capacity is one compiled pass, on all cores for a large network (numpy's masks and fancy
indexing took 7 ms of a 1.5M-edge flow grid's certificate: issue 13's host overhead). The residual search stays serial: it stops at
the sink, a grid's frontiers are too thin to share out level by level, and gathering the residual
arcs on all cores (graph_build.compress) measured slower than the serial counting sort.

Kept apart from solvers.certify (which is long), as solvers.konig is for matchings.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

_LOW_MASK = 0xFFFFFFFF


@njit(cache=True)
def net_outflow(n, tail, head, flow):
    """Net float outflow per vertex (float flows: checked within the rounding allowance)."""
    out = np.zeros(n, dtype=flow.dtype)
    for e in range(flow.size):
        out[tail[e]] += flow[e]
        out[head[e]] -= flow[e]
    return out


@njit(cache=True)
def net_outflow_exact(n, tail, head, flow):
    """Net integer outflow per vertex, exactly, as high * 2^32 + low with 0 <= low < 2^32: each
    flow is split into 32-bit halves whose sums cannot wrap (an int64 sum of flows near 2^62 does)."""
    high = np.zeros(n, dtype=np.int64)
    low = np.zeros(n, dtype=np.int64)
    mask = np.int64(_LOW_MASK)
    for e in range(flow.size):
        f = flow[e]
        hi, lo = f >> 32, f & mask
        high[tail[e]] += hi
        low[tail[e]] += lo
        high[head[e]] -= hi
        low[head[e]] -= lo
    for v in range(n):
        high[v] += low[v] >> 32
        low[v] &= mask
    return high, low


@njit(cache=True)
def residual_reach(n, tail, head, capacity, flow, source, sink, tol):
    """Flags of the vertices reachable from ``source`` along residual arcs (forward where
    capacity - flow > tol, backward where flow > tol), gathered by vertex in a counting sort first
    so that the search reads each vertex's arcs contiguously. Stops once the sink is reached."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(flow.size):
        if capacity[e] - flow[e] > tol:
            ptr[tail[e] + 1] += 1
        if flow[e] > tol:
            ptr[head[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    neighbours = np.empty(ptr[n], dtype=tail.dtype)
    for e in range(flow.size):
        if capacity[e] - flow[e] > tol:
            neighbours[fill[tail[e]]] = head[e]
            fill[tail[e]] += 1
        if flow[e] > tol:
            neighbours[fill[head[e]]] = tail[e]
            fill[head[e]] += 1
    seen = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    seen[source] = True
    queue[0] = source
    qhead, qtail = 0, 1
    while qhead < qtail:
        v = queue[qhead]
        qhead += 1
        for k in range(ptr[v], ptr[v + 1]):
            w = neighbours[k]
            if not seen[w]:
                seen[w] = True
                if w == sink:
                    return seen
                queue[qtail] = w
                qtail += 1
    return seen


PARALLEL_MIN_EDGES = 1 << 20  # below this the serial loop (no thread team to wake from a Dask worker's thread)


@njit(parallel=True, cache=True)
def _cut_halves_parallel(tail, head, capacity, reached):
    """The capacity of the edges leaving ``reached``, as (sum of high 32-bit halves, sum of low
    halves): neither sum wraps below 2^31 edges. The edge's test is written in each loop: as a
    shared helper function both loops compiled five to six times slower (measured)."""
    high = np.int64(0)
    low = np.int64(0)
    mask = np.int64(_LOW_MASK)
    for e in prange(tail.size):
        if reached[tail[e]] and not reached[head[e]]:
            c = np.int64(capacity[e])
            high += c >> 32
            low += c & mask
    return high, low


@njit(cache=True)
def _cut_halves_serial(tail, head, capacity, reached):
    high = np.int64(0)
    low = np.int64(0)
    mask = np.int64(_LOW_MASK)
    for e in range(tail.size):
        if reached[tail[e]] and not reached[head[e]]:
            c = np.int64(capacity[e])
            high += c >> 32
            low += c & mask
    return high, low


def cut_capacity(tail, head, capacity, reached) -> int:
    """The exact capacity (a Python int) of the integer-capacity edges from ``reached`` to the rest."""
    halves = _cut_halves_parallel if tail.size >= PARALLEL_MIN_EDGES else _cut_halves_serial
    high, low = halves(tail, head, capacity, reached)
    return (int(high) << 32) + int(low)


def warm() -> None:
    """Compile (or load) the multi-core cut sum for int32 and int64 vertices."""
    for index in (np.int32, np.int64):
        tail, head = np.array([0, 1], dtype=index), np.array([1, 2], dtype=index)
        _cut_halves_parallel(tail, head, np.array([3, 3], dtype=np.int64), np.array([True, False, False]))
