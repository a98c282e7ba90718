"""What the public entry points accept besides a Problem: what a scipy / numpy user would pass.

``solve``'s data (``as_problem``):

* a Problem (``solvers.load``, ``solvers.generate``, or built with the classes in solvers.problems);
* a file path (str or os.PathLike), read with ``solvers.load``: as the kind the algorithm solves
  where the file's format can hold it (a square .mtx is a flow network for dinic), else as the
  format's default;
* a 2-D array-like (list of lists, numpy array, pandas DataFrame: anything ``np.asarray`` takes):
  assignment costs (+inf forbids a pair);
* a scipy.sparse matrix: a bipartite graph, every stored entry an edge (as scipy's
  ``maximum_bipartite_matching`` reads it);
* a networkx graph whose nodes all carry networkx's ``bipartite`` attribute, 0 (rows, in the
  graph's node order) or 1 (columns): a bipartite graph, or with ``weight`` on every edge, sparse
  assignment costs.

A batch of assignment problems (``solvers.load`` of a 3-D .npy or an .npz of matrices, or its
path) is refused in one line that points to ``solvers.solve_batch``, which returns a BatchResult.

The algorithm (when it solves one kind only) or ``problem=`` turns a matrix into another kind: a
sparse matrix into sparse assignment costs (its stored entries are the allowed pairs, as for
scipy's ``min_weight_full_bipartite_matching``), any square matrix into a flow network (entries are
integer capacities, vertex 0 the source and the last vertex the sink, as for a square .mtx file),
a dense matrix into a bipartite graph of its nonzero entries. Anything else is a TypeError that
says what is accepted; a value of an accepted type that cannot be the problem is an InputError.

networkx and pandas are never imported here: their objects are recognised by their methods.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

from .errors import MASKED_COSTS, MASKED_POINTS, InputError, unmasked_array
from .problems import BipartiteGraph, CostMatrix, EuclideanCosts, FlowNetwork, PointSeries, SparseCosts, _is_sparse
from .telemetry import Observer

SOLVED_KINDS = ("matching", "flow", "assignment")
PROBLEM_TYPES = (BipartiteGraph, FlowNetwork, CostMatrix, SparseCosts, EuclideanCosts, PointSeries)
OBSERVER_METHODS = ("on_start", "on_iteration", "on_snapshot", "on_finish", "should_stop")

ACCEPTED = ("a problem (from solvers.load or solvers.generate, or a solvers.BipartiteGraph, FlowNetwork, "
            "CostMatrix or SparseCosts), a file path, a 2-D array of costs (list of lists, numpy array, "
            "pandas DataFrame), a scipy.sparse matrix or a networkx bipartite graph")


def a_value(value) -> str:
    """``None``, ``a str``, ``an int``: what a wrong argument is, for a TypeError."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def as_problem(data, algo=None, kind: str | None = None):
    """``data`` as a Problem for ``algo`` (a registry.Algorithm or None); ``kind`` is solve's
    ``problem=`` argument. See the module docstring."""
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"problem= names how to read the data ({', '.join(SOLVED_KINDS)}); pass the problem "
                        "itself as the first argument")
    if kind is not None and kind not in SOLVED_KINDS + ("points",):
        raise InputError(f"problem must be one of {', '.join(SOLVED_KINDS)}, not {kind}")
    if isinstance(data, (str, os.PathLike)):
        from .formats import load, reading_for
        data = load(data, problem=kind or reading_for(data, algo))
    if isinstance(data, PROBLEM_TYPES):
        return data
    if getattr(data, "kind", None) == "batch":  # an AssignmentBatch, given or loaded: one line either way
        raise InputError(f"this is a batch of {len(data):,} assignment problems: solve it with "
                         "solvers.solve_batch (or one of them: solve(batch.item(k)))", getattr(data, "source", None))
    if kind == "points":
        raise InputError("a point series is tracked (solvers.track), not solved")
    if _is_sparse(data):  # without scipy.sparse imported, nothing can be one: no import here
        return _from_matrix(data, _kind(kind, algo, "matching"), sparse=True)
    if _is_networkx(data):
        return _from_networkx(data, _kind(kind, algo, "matching"))
    if isinstance(data, (list, tuple, np.ndarray)) or hasattr(data, "__array__"):
        return _from_matrix(_array(data, "costs"), _kind(kind, algo, "assignment"), sparse=False)
    raise TypeError(f"solve takes {ACCEPTED}; not {a_value(data)}")


def _all_two_dimensional(frames) -> bool:
    with warnings.catch_warnings():  # np.ma.masked inside a frame: PointSeries.from_frames refuses it
        warnings.simplefilter("ignore")
        return all(np.ndim(frame) == 2 for frame in frames)


def as_series(data) -> PointSeries:
    """``track``'s series: a PointSeries, a file path (read as points), or a sequence of (n_t, 3)
    arrays, one per frame (a (T, n, 3) array is T frames, an (n, 3) array one frame)."""
    if isinstance(data, PointSeries):
        return data
    if isinstance(data, (str, os.PathLike)):
        from .formats import load
        return load(data, problem="points")
    if isinstance(data, (list, tuple, np.ndarray)) or hasattr(data, "__array__"):
        if isinstance(data, (list, tuple)) and data and _all_two_dimensional(data):
            return PointSeries.from_frames(list(data))
        stack = _array(data, "a point series", MASKED_POINTS)
        if stack.ndim in (2, 3):
            return PointSeries.from_frames(list(stack) if stack.ndim == 3 else [stack])
        raise InputError(f"a point series is a sequence of (n, 3) arrays, one per frame; this array has "
                         f"shape {stack.shape}")
    raise TypeError("track takes a point series (from solvers.load or solvers.generate(\"particles\")), "
                    f"a file path, or a sequence of (n, 3) arrays, one per frame; not {a_value(data)}")


def as_observer(observer) -> Observer | None:
    """None and Observers as they are; an object with Observer's methods wrapped (with the
    defaults of what it lacks: on_progress, snapshot_interval); anything else a TypeError."""
    if observer is None or isinstance(observer, Observer):
        return observer
    if all(callable(getattr(observer, name, None)) for name in OBSERVER_METHODS):
        return _Forwarding(observer)
    raise TypeError(f"an observer must be a solvers.Observer (or have its methods: {', '.join(OBSERVER_METHODS)}), "
                    f"not {a_value(observer)}")


class _Forwarding(Observer):
    def __init__(self, target):
        self.snapshot_interval = getattr(target, "snapshot_interval", Observer.snapshot_interval)
        for name in OBSERVER_METHODS:
            setattr(self, name, getattr(target, name))
        if callable(getattr(target, "on_progress", None)):
            self.on_progress = target.on_progress


# ---------------------------------------------------------------------------------------------


def _kind(kind: str | None, algo, natural: str) -> str:
    """The kind asked for; else ``natural`` (what the input type means) where the algorithm solves
    it; else the algorithm's first kind."""
    if kind is not None:
        return kind
    if algo is None or natural in algo.problem_kinds:
        return natural
    return algo.problem_kinds[0]


def _array(data, what: str, masked_fill: str = MASKED_COSTS) -> np.ndarray:
    try:
        array = unmasked_array(data, what, masked_fill)
    except InputError:
        raise
    except (ValueError, TypeError):  # ragged lists, objects numpy cannot hold
        array = None
    if array is None or array.dtype == object:
        raise InputError(f"{what} must be a rectangular array of numbers: rows of one length, numbers only")
    return array


def _from_matrix(matrix, kind: str, sparse: bool):
    import scipy.sparse as sp
    if kind == "assignment":
        # the Problem lives only for this call, while the caller cannot touch the array: no copy;
        # large integers are checked by solve, before the run or in the pass that uploads them
        return SparseCosts.from_sparse(matrix) if sparse else CostMatrix.from_array(matrix, copy=False,
                                                                                     check_now=False)
    if not sparse:
        if matrix.ndim != 2:
            raise InputError(f"a {'graph' if kind == 'matching' else 'capacity'} matrix must be 2-D, "
                             f"got shape {matrix.shape}")
        if matrix.dtype.kind not in "biuf":
            raise InputError(f"matrix entries must be numbers, got {matrix.dtype.name} values")
        if matrix.dtype.kind == "f" and np.isnan(matrix).any():
            raise InputError("the matrix holds NaN")
    if kind == "matching":  # as for costs: the graph lives only for this call, so no copy of its indices
        return BipartiteGraph.from_sparse(matrix, copy=False)
    n, n_cols = matrix.shape
    if n != n_cols:
        raise InputError(f"a flow network needs a square capacity matrix (vertices x vertices), "
                         f"this one is {n} x {n_cols}")
    if sparse:
        coo = sp.coo_matrix(matrix)
        tail, head, capacity = coo.row, coo.col, coo.data
    else:
        tail, head = np.nonzero(matrix)
        capacity = matrix[tail, head]
    return FlowNetwork.from_edges(n, tail, head, capacity, 0, n - 1)


def _is_networkx(data) -> bool:
    return type(data).__module__.split(".")[0] == "networkx" and hasattr(data, "nodes") and hasattr(data, "edges")


def _from_networkx(graph, kind: str):
    if kind == "flow":
        raise TypeError("a networkx graph is read as a bipartite graph (matching, or assignment with edge "
                        "weights); for maximum flow pass a solvers.FlowNetwork or a square capacity matrix")
    sides = list(graph.nodes(data="bipartite"))
    if not sides or any(side is None or side not in (0, 1) for _, side in sides):
        raise TypeError("a networkx graph is accepted when every node has the bipartite attribute 0 (rows) or "
                        "1 (columns), networkx's convention for bipartite graphs")
    index = {}
    counts = [0, 0]
    for node, side in sides:
        index[node] = (int(side), counts[int(side)])
        counts[int(side)] += 1
    rows, cols, weights = [], [], []
    for u, v, weight in graph.edges(data="weight"):
        (side_u, iu), (side_v, iv) = index[u], index[v]
        if side_u == side_v:
            raise InputError(f"edge {u} - {v} joins two nodes on the same side (bipartite {side_u})")
        rows.append(iu if side_u == 0 else iv)
        cols.append(iv if side_u == 0 else iu)
        weights.append(weight)
    if kind == "matching":
        return BipartiteGraph.from_edges(np.asarray(rows, np.int64), np.asarray(cols, np.int64), counts[0], counts[1])
    if any(w is None for w in weights):
        raise InputError("an assignment problem needs a weight attribute (the cost) on every edge")
    try:
        costs = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("edge weights (the costs) must be numbers") from None
    return SparseCosts.from_edges(np.asarray(rows, np.int64), np.asarray(cols, np.int64), costs,
                                  counts[0], counts[1])
