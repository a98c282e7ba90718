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

import numpy as np
from numba.extending import register_jitable

from ..errors import InputError
from ..problems import FlowNetwork

RCSR, BCSR = 0, 1
LAYOUTS = {"rcsr": RCSR, "bcsr": BCSR}
INDEX = np.int32
INDEX_LIMIT = np.iinfo(np.int32).max


@dataclass(frozen=True, eq=False)
class ResidualGraph:
    """A FlowNetwork's residual arcs in one layout; ``residual`` holds the initial (zero-flow) capacities."""

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


def _ptr(owner: np.ndarray, n: int) -> np.ndarray:
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=ptr[1:])
    return ptr.astype(INDEX)


def build_rcsr(network: FlowNetwork) -> ResidualGraph:
    """Forward CSR by tail plus a reversed CSR by head whose entries point at the forward arc (flow_idx)."""
    _check_size(network)
    n, m = network.n_vertices, network.n_edges
    tail = network.tail.astype(np.int64)
    head = network.head.astype(np.int64)
    by_tail = np.argsort(tail, kind="stable")          # forward arc a carries edge by_tail[a]
    arc_of_edge = np.empty(m, dtype=np.int64)
    arc_of_edge[by_tail] = np.arange(m)
    by_head = np.argsort(head, kind="stable")
    arrays = (_ptr(tail, n), head[by_tail].astype(INDEX),
              _ptr(head, n), tail[by_head].astype(INDEX), arc_of_edge[by_head].astype(INDEX))
    residual = np.zeros(2 * m, dtype=np.int64)
    residual[:m] = network.capacity[by_tail]
    return ResidualGraph(RCSR, n, m, arrays, residual, arc_of_edge, arc_of_edge + m)


def build_bcsr(network: FlowNetwork) -> ResidualGraph:
    """Out- and in-arcs merged per vertex, sorted by (neighbour, edge id) for the reverse-arc binary search."""
    _check_size(network)
    n, m = network.n_vertices, network.n_edges
    tail = network.tail.astype(np.int64)
    head = network.head.astype(np.int64)
    edge = np.arange(m, dtype=np.int64)
    owner = np.concatenate([tail, head])               # arc i < m: forward arc of edge i; i >= m: backward
    nbr = np.concatenate([head, tail])
    edges2 = np.concatenate([edge, edge])
    order = np.lexsort((edges2, nbr, owner))           # slot s holds arc order[s]
    slot_of_arc = np.empty(2 * m, dtype=np.int64)
    slot_of_arc[order] = np.arange(2 * m)
    residual = np.zeros(2 * m, dtype=np.int64)
    forward_slot = slot_of_arc[:m]
    residual[forward_slot] = network.capacity
    unused = np.zeros(1, dtype=INDEX)
    arrays = (_ptr(owner, n), nbr[order].astype(INDEX), edges2[order].astype(INDEX), unused, unused.copy())
    return ResidualGraph(BCSR, n, m, arrays, residual, forward_slot, slot_of_arc[m:])


def build_residual(network: FlowNetwork, layout: str) -> ResidualGraph:
    if layout not in LAYOUTS:
        raise InputError(f"unknown residual layout {layout!r}; choose from {', '.join(LAYOUTS)}", "<options>")
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
