"""WBPR per-element step bodies, written once for every target (numba ``register_jitable``).

The cpu launcher (solvers.flow.wbpr_cpu) compiles them with njit inside prange loops, the cuda
kernels (solvers.flow.wbpr_kernels) as device functions; under the simulator they run as Python.
What differs per target (atomics, the warp-wide min-reduction, queue appends) lives with the launcher.

A candidate arc is packed into one int64 *key* = height(neighbour) << 32 | arc ordinal, so the
lowest-neighbour search is a plain min-reduction (ties go to the lower ordinal) and a warp can
reduce keys with shuffles. ``NO_ARC`` (int64 max) means no residual arc.
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .residual import arc_at, arc_count, reverse_slot

NO_ARC = np.iinfo(np.int64).max
ORDINAL_MASK = (1 << 32) - 1

# Hub splitting (beyond the paper): a vertex with more than HUB_CHUNK arcs is cut into pieces of
# HUB_CHUNK arcs, each scanned by its own warp (vc push-relabel: the pieces' minima meet in an atomic
# min, the hub is applied after a grid sync; global relabel: each piece expands the BFS on its own),
# so a power-law hub costs one warp-round of at most HUB_CHUNK / 32 arcs per lane instead of deg / 32
# (or deg, for one BFS thread). The min over pieces equals the min over all arcs (the key holds the
# ordinal), so the plan is the same as without splitting.
HUB_CHUNK = 256

# slots of the int64 status array written by a global relabel (the host's termination check)
TOTAL, SOURCE_EXCESS, SINK_EXCESS, ACTIVE, LEVELS, STRANDED = range(6)
STATUS_SLOTS = 8


@register_jitable
def is_active(u, n, source, sink, height, excess):
    """Algorithm 1, line 12: excess left and height below |V| (source and sink never are)."""
    return u != source and u != sink and excess[u] > 0 and height[u] < n


@register_jitable
def lowest_arc(layout, u, first, step, m, a0, a1, a2, a3, a4, residual, height):
    """Min key over u's residual arcs numbered first, first+step, ... (step 1: one thread; 32: one lane)."""
    return lowest_arc_upto(layout, u, first, arc_count(layout, u, a0, a2), step, m, a0, a1, a2, a3, a4,
                           residual, height)


@register_jitable
def lowest_arc_upto(layout, u, first, stop, step, m, a0, a1, a2, a3, a4, residual, height):
    """Min key over u's residual arcs numbered first, first+step, ... below ``stop`` (one hub piece)."""
    best = NO_ARC
    for k in range(first, stop, step):
        v, slot = arc_at(layout, u, k, m, a0, a1, a2, a3, a4)
        if residual[slot] > 0:
            key = (np.int64(height[v]) << 32) | np.int64(k)
            if key < best:
                best = key
    return best


@register_jitable
def arcs_scanned(count, first, step):
    """How many arcs ``lowest_arc(first, step)`` looks at for a vertex with ``count`` arcs (Eq. 1's d(v) share)."""
    if first >= count:
        return 0
    return (count - first + step - 1) // step


@register_jitable
def hub_pieces(count, chunk):
    """Pieces a vertex with ``count`` arcs is split into: 0 when it is not a hub (count <= chunk)."""
    if count <= chunk:
        return 0
    return (count + chunk - 1) // chunk


@register_jitable
def plan_vertex(layout, u, key, n, m, a0, a1, a2, a3, a4, residual, height, excess):
    """Push or relabel for active u given its lowest-arc key (Algorithm 1, lines 19-26).

    Returns (neighbour, slot, reverse slot, amount, new height): amount > 0 means push ``amount``
    along ``slot`` (never more than e(u) or the arc's residual, both of which only u's owner
    lowers); amount 0 means relabel to ``new height`` (|V| when u has no residual arc at all).
    """
    if key == NO_ARC:
        return -1, -1, -1, np.int64(0), n
    lowest = np.int64(key >> 32)
    if height[u] > lowest:
        v, slot = arc_at(layout, u, np.int64(key & ORDINAL_MASK), m, a0, a1, a2, a3, a4)
        amount = min(excess[u], residual[slot])
        back = reverse_slot(layout, u, v, slot, m, a0, a1, a2)
        return np.int64(v), np.int64(slot), np.int64(back), np.int64(amount), np.int64(height[u])
    return -1, -1, -1, np.int64(0), lowest + 1
