"""Residual graphs for push-relabel in O(V+E) memory: the WBPR paper's RCSR and BCSR (Hsieh et al. 2024, §3.2).

Every input edge e = (u -> v, capacity c) gets its own pair of residual arcs, a forward arc u -> v
(residual c - flow) and a backward arc v -> u (residual flow), even when the input holds parallel
or antiparallel edges: an arc pairs with its own edge's other arc, never with another edge. Residual
capacities live in one int64 array indexed by *slot* (2m slots for m edges).

Each vertex u lists its arcs; arc ordinal k (0 <= k < arc_count(u)) names one of them. Both layouts
hand the kernels five int32 arrays ``arrays = (a0, a1, a2, a3, a4)``:

RCSR (reversed CSR): a forward CSR of the edges by tail (``a0`` = out_ptr, ``a1`` = out_head) plus
  a reversed CSR by head (``a2`` = in_ptr, ``a3`` = in_tail, ``a4`` = flow_idx, the forward arc
  the entry belongs to). Slots: forward arc a (its position in the forward CSR) is slot a; its
  backward arc is slot m + a. Vertex u's arcs are its out-arcs, then its in-arcs (k past the
  out-degree indexes the reversed CSR). The reverse of a slot is found in O(1): slot +- m.
BCSR (bidirectional CSR): out- and in-arcs merged per vertex (``a0`` = arc_ptr, ``a1`` = arc_nbr,
  ``a2`` = arc_edge, the input edge of the arc), sorted by (neighbour, edge id); slot = position.
  The reverse of u's arc to v for edge e is v's arc (u, e): a binary search in v's sorted list,
  O(log deg v). ``a3`` and ``a4`` are unused one-element arrays.

``arc_count``, ``arc_at`` and ``reverse_slot`` are the per-element accessors, written once and
compiled for every target (numba ``register_jitable``: njit on cpu, a device function on cuda, plain
Python under the simulator).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from ..errors import InputError
from ..problems import FlowNetwork

RCSR, BCSR = 0, 1
LAYOUTS = {"rcsr": RCSR, "bcsr": BCSR}
INDEX = np.int32
INDEX_LIMIT = np.iinfo(np.int32).max


@dataclass(frozen=True, eq=False)
class ResidualGraph:
    """A FlowNetwork's residual arcs in one layout; ``residual`` holds the residual capacities a run starts
    from: zero flow when built (the run that built it then applies its preflow in place)."""

    layout: int                 # RCSR or BCSR
    n: int                      # vertices
    m: int                      # input edges (2m arcs / slots)
    arrays: tuple               # (a0, a1, a2, a3, a4), int32, meaning per layout (module docstring)
    residual: np.ndarray        # int64[2m]
    forward_slot: np.ndarray    # int64[m]: slot of edge e's forward arc (residual = capacity - flow)
    backward_slot: np.ndarray   # int64[m]: slot of edge e's backward arc (residual = flow)

    @property
    def name(self) -> str:
        return "rcsr" if self.layout == RCSR else "bcsr"

    def degrees(self) -> np.ndarray:
        """Arcs per vertex (out- plus in-arcs), int64."""
        a0, _, a2, _, _ = self.arrays
        deg = np.diff(a0).astype(np.int64)
        if self.layout == RCSR:
            deg += np.diff(a2)
        return deg

    def flow(self, residual: np.ndarray) -> np.ndarray:
        """Per-edge flow (input order) read off a residual array: the backward arc's residual."""
        return np.asarray(residual)[self.backward_slot].astype(np.int64)

    def arcs(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """(neighbours, slots) of vertex u's arcs in ordinal order (host-side; for tests and tools)."""
        a = self.arrays
        count = arc_count(self.layout, u, a[0], a[2])
        pairs = [arc_at(self.layout, u, k, self.m, *a) for k in range(count)]
        nbr = np.array([p[0] for p in pairs], dtype=np.int64)
        slot = np.array([p[1] for p in pairs], dtype=np.int64)
        return nbr, slot


def _check_size(network: FlowNetwork) -> None:
    if 2 * network.n_edges >= INDEX_LIMIT or network.n_vertices >= INDEX_LIMIT:
        raise InputError(f"{network.n_edges} edges / {network.n_vertices} vertices exceed the int32 "
                         "indices of the residual layouts", network.source)


# Why bucket passes and not np.argsort / lexsort: a comparison sort of the 2m arcs took most of a GPU
# run's time on million-edge graphs. A stable counting sort is linear, and it runs on every core: the
# keys are cut into chunks, each chunk counts its keys per bucket, the counts become per-chunk start
# offsets, and each chunk scatters its own keys. The result is the sequential stable order exactly.

def _chunks(keys: int, buckets: int) -> int:
    """How many chunks a bucket pass over ``keys`` keys uses: one per thread, at most 2 keys per
    bucket and chunk (the per-chunk counts take chunks * buckets int64s)."""
    return int(max(1, min(numba.get_num_threads(), (2 * keys) // max(buckets, 1))))


@njit(cache=True, parallel=True)
def _bucket_positions(keys, n, chunks):
    """Stable counting sort of ``keys`` (values in [0, n)): (ptr int64[n + 1], position int64[len]),
    key i going to ``position[i]``; equal keys keep their input order."""
    size = keys.size
    step = (size + chunks - 1) // chunks
    counts = np.zeros((chunks, n), dtype=np.int64)
    for c in prange(chunks):
        for i in range(c * step, min(size, (c + 1) * step)):
            counts[c, keys[i]] += 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    block = 4096
    for b in prange((n + block - 1) // block):  # per bucket: chunk c starts after chunks 0..c-1
        lo, hi = b * block, min(n, (b + 1) * block)
        for c in range(chunks):
            for v in range(lo, hi):
                count = counts[c, v]
                counts[c, v] = ptr[v + 1]
                ptr[v + 1] += count
    for v in range(n):
        ptr[v + 1] += ptr[v]
    position = np.empty(size, dtype=np.int64)
    for c in prange(chunks):
        for i in range(c * step, min(size, (c + 1) * step)):
            k = keys[i]
            position[i] = ptr[k] + counts[c, k]
            counts[c, k] += 1
    return ptr, position


@njit(cache=True, parallel=True)
def _fill_rcsr(n, tail, head, capacity, chunks):
    """Forward CSR by tail and reversed CSR by head, each vertex's arcs in input edge order."""
    m = tail.size
    out_ptr, arc_of_edge = _bucket_positions(tail, n, chunks)
    in_ptr, in_position = _bucket_positions(head, n, chunks)
    out_head = np.empty(m, dtype=np.int32)
    in_tail = np.empty(m, dtype=np.int32)
    flow_idx = np.empty(m, dtype=np.int32)
    residual = np.zeros(2 * m, dtype=np.int64)
    for e in prange(m):
        a = arc_of_edge[e]
        out_head[a] = head[e]
        residual[a] = capacity[e]
        j = in_position[e]
        in_tail[j] = tail[e]
        flow_idx[j] = a
    return out_ptr.astype(np.int32), out_head, in_ptr.astype(np.int32), in_tail, flow_idx, residual, arc_of_edge


@njit(cache=True, parallel=True)
def _fill_bcsr(n, tail, head, capacity, chunks):
    """Arcs sorted by (owner, neighbour, edge): bucket by neighbour in arc order, then stably by owner.
    Arc 2e is edge e's forward arc (owner tail, neighbour head), arc 2e + 1 its backward arc."""
    m = tail.size
    nbr = np.empty(2 * m, dtype=np.int32)
    for e in prange(m):
        nbr[2 * e] = head[e]
        nbr[2 * e + 1] = tail[e]
    _, by_nbr = _bucket_positions(nbr, n, chunks)
    owner_by_nbr = np.empty(2 * m, dtype=np.int32)
    for i in prange(2 * m):
        owner_by_nbr[by_nbr[i]] = nbr[i ^ 1]  # an arc's owner is its partner's neighbour
    ptr, slot_of = _bucket_positions(owner_by_nbr, n, chunks)
    arc_nbr = np.empty(2 * m, dtype=np.int32)
    arc_edge = np.empty(2 * m, dtype=np.int32)
    residual = np.zeros(2 * m, dtype=np.int64)
    forward_slot = np.empty(m, dtype=np.int64)
    backward_slot = np.empty(m, dtype=np.int64)
    for e in prange(m):
        forward, backward = slot_of[by_nbr[2 * e]], slot_of[by_nbr[2 * e + 1]]
        forward_slot[e], backward_slot[e] = forward, backward
        arc_nbr[forward], arc_nbr[backward] = head[e], tail[e]
        arc_edge[forward], arc_edge[backward] = e, e
        residual[forward] = capacity[e]
    return ptr.astype(np.int32), arc_nbr, arc_edge, residual, forward_slot, backward_slot


def build_rcsr(network: FlowNetwork) -> ResidualGraph:
    """Forward CSR by tail plus a reversed CSR by head whose entries point at the forward arc (flow_idx)."""
    _check_size(network)
    n, m = network.n_vertices, network.n_edges
    *arrays, residual, arc_of_edge = _fill_rcsr(n, network.tail, network.head, network.capacity, _chunks(m, n))
    return ResidualGraph(RCSR, n, m, tuple(arrays), residual, arc_of_edge, arc_of_edge + m)


def build_bcsr(network: FlowNetwork) -> ResidualGraph:
    """Out- and in-arcs merged per vertex, sorted by (neighbour, edge id) for the reverse-arc binary search."""
    _check_size(network)
    n, m = network.n_vertices, network.n_edges
    ptr, arc_nbr, arc_edge, residual, forward_slot, backward_slot = _fill_bcsr(
        n, network.tail, network.head, network.capacity, _chunks(2 * m, n))
    unused = np.zeros(1, dtype=INDEX)
    return ResidualGraph(BCSR, n, m, (ptr, arc_nbr, arc_edge, unused, unused.copy()), residual, forward_slot,
                         backward_slot)


def build_residual(network: FlowNetwork, layout: str) -> ResidualGraph:
    if layout not in LAYOUTS:
        raise InputError(f"unknown residual layout {layout!r}; choose from {', '.join(LAYOUTS)}")
    return build_rcsr(network) if LAYOUTS[layout] == RCSR else build_bcsr(network)


# ---- per-element accessors (every target) ----------------------------------------------------

@register_jitable
def arc_count(layout, u, a0, a2):
    """Number of residual arcs (out plus in) of vertex u."""
    count = a0[u + 1] - a0[u]
    if layout == RCSR:
        count += a2[u + 1] - a2[u]
    return count


@register_jitable
def arc_at(layout, u, k, m, a0, a1, a2, a3, a4):
    """(neighbour, slot) of vertex u's arc number k."""
    first = a0[u]
    if layout == RCSR:
        out_degree = a0[u + 1] - first
        if k < out_degree:
            return a1[first + k], first + k
        j = a2[u] + (k - out_degree)
        return a3[j], m + a4[j]
    return a1[first + k], first + k


@register_jitable
def reverse_slot(layout, u, v, slot, m, a0, a1, a2):
    """Slot of the arc paired with u's arc ``slot`` to v (the same input edge, the other way); -1 if absent."""
    if layout == RCSR:
        if slot < m:
            return slot + m
        return slot - m
    edge = a2[slot]
    lo = a0[v]
    hi = a0[v + 1]
    while lo < hi:  # v's arcs are sorted by (neighbour, edge): find (u, edge)
        mid = (lo + hi) >> 1
        w = a1[mid]
        if w < u or (w == u and a2[mid] < edge):
            lo = mid + 1
        else:
            hi = mid
    if lo < a0[v + 1] and a1[lo] == u and a2[lo] == edge:
        return lo
    return -1
