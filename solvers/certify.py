"""Independent certificates: prove (or refute) a solver's answer from the problem and the answer alone.

Nothing here trusts a solver: values are recomputed from the problem, and optimality is proven by a
witness built and checked here.

* matching: a König vertex cover of size |M| (from an alternating BFS out of the free rows); every
  edge is checked to have a covered end.
* flow: a cut (the vertices reachable from the source in the residual graph) whose capacity equals
  the flow value.
* assignment: dual potentials u (rows), v (cols) of the assignment LP. Column potentials (the
  solver's, else derived here by shortest paths, SPFA, on the assignment's residual graph, where a
  negative cycle, confirmed by an exact sum, means a cheaper assignment exists) are completed into
  a dual that is feasible exactly (rounded down, then verified without rounding) whose objective,
  summed exactly, bounds the optimum from below. A dense 4000 x 4000 matrix takes about 2 s.
  When optimality is not proven, the gap is tightened (up to REFERENCE_CELLS cost entries) with the
  potentials of an optimal assignment found independently (scipy), so the stated gap is the
  true one up to rounding, not a loose fallback bound.

An epsilon-run (Solution.epsilon > 0, the auction without its exact finish) claims only
cost <= optimum + n * epsilon: its certificate carries ``bound`` = n * epsilon and counts as
certified when the proven gap is within it ("certified within gap G of optimal"). A run with
epsilon = 0 claims an optimum and must prove gap 0, within a rounding allowance that scales with
the data (costs of 1e-20 and 1e300 alike; integer costs: exactly 0).

The loops are numba-compiled (``cache=True``) so a 10M-edge matching certifies in about a second.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from types import SimpleNamespace

import numpy as np
from numba import njit, prange, types
from numba.extending import overload, register_jitable

from .cost_summary import PARALLEL_MIN_ENTRIES
from .dense_potentials import cheapest_arc_columns, dense_columns
from .dual_steps import (INF_KEY, NO_LOW_BIT, bits_of, difference_down, float_of_bits, floor_key, floor_step,
                         low_bit_exponent, order_key, sum_exceeds, violation_step)
from . import konig, min_cut
from .graph_build import position_in_row
from .exact_settle import candidate_pairs, cheaper_by
from .near_ties import CAP as NEAR_CAP, collect_near_tight, cost_step, room_for_another
from .exact import float_sum, float_sum_up, int_sum
from .problems import BipartiteGraph, CostMatrix, EuclideanCosts, FlowNetwork, SparseCosts, writeable_alias
from .result import Certificate, Solution, Witness

INT64_MAX = int(np.iinfo(np.int64).max)
ROUNDING = 16  # float rounding allowances: ROUNDING * epsilon * the magnitudes summed (see below)
EPS = float(np.finfo(np.float64).eps)
REFERENCE_CELLS = 10_000_000  # assignment gaps are tightened by a reference optimum up to this many entries
TIE_NOTE = ("the rounding allowance leaves room for a cheaper assignment, and the problem is too large to rule "
            "it out in exact arithmetic here")
DEVICE_MIN_ENTRIES = 1 << 20  # from here a solver's duals are checked on its GPU copy of the costs, if it left one
SPOT_ROWS = 8  # rows of a GPU check recomputed on the host besides its worst and lowest (at most)
SPOT_ENTRIES = 1 << 16  # entries those spread rows hold at most (two rows at least): 8 rows of 20000
# columns were a third of a 1000 x 20000 certificate, most of its time off the GPU


def certify(problem, solution: Solution) -> Certificate:
    """Certify ``solution`` for ``problem`` (what solvers.solve calls after every run)."""
    if isinstance(problem, BipartiteGraph):
        if solution.row_match is None:
            return Certificate("konig-cover", False, False, details="the solution holds no matching")
        cert = certify_matching(problem, solution.row_match, solution.col_match, solution.device_graph,
                                solution.device_matching)
    elif isinstance(problem, FlowNetwork):
        if solution.flow is None:
            return Certificate("min-cut", False, False, details="the solution holds no per-edge flow")
        cert = certify_flow(problem, solution.flow)
    elif isinstance(problem, EuclideanCosts):
        from .certify_points import certify_euclidean
        cert = certify_euclidean(problem, solution)
    elif isinstance(problem, (CostMatrix, SparseCosts)):
        if solution.row_match is None:
            return Certificate("dual-potentials", False, False, details="the solution holds no assignment")
        cert = certify_assignment(problem, solution.row_match, solution.col_match, solution.duals,
                                  solution.epsilon, solution.device_costs)
    else:
        raise TypeError(f"cannot certify a solution for a {type(problem).__name__}")
    return _note_reported_value(cert, solution.value)


def _note_reported_value(cert: Certificate, reported) -> Certificate:
    """Say so when the solver's own value disagrees with the recomputed one (the Result uses ours).
    Integers (matching sizes, flow values, past 2^53 too) are compared exactly."""
    value = cert.witness.get("value")
    if value is None or reported is None:
        return cert
    if isinstance(value, int) and isinstance(reported, (int, np.integer)) and not isinstance(reported, bool):
        if int(reported) == value:
            return cert
        shown = f"{int(reported)}, recomputed {value}"
    else:
        try:
            reported = float(reported)
        except (TypeError, ValueError):
            return cert
        if math.isclose(reported, float(value), rel_tol=1e-9, abs_tol=cert.tolerance):
            return cert
        shown = f"{reported:g}, recomputed {float(value):g}"
    note = f"solver reported value {shown}"
    details = f"{cert.details}; {note}" if cert.details else note
    return dataclasses.replace(cert, details=details)


def _as_match(values, size: int, bound: int, name: str) -> tuple[np.ndarray | None, str]:
    """int64 copy of a match array (entries in [-1, bound)), or (None, why not)."""
    a = np.asarray(values)
    if a.shape != (size,):
        return None, f"{name} has shape {a.shape}, expected ({size},)"
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            return None, f"{name} holds non-integer entries"
    a = a.astype(np.int64)
    if a.size:
        bad = np.flatnonzero((a < -1) | (a >= bound))
        if bad.size:
            return None, f"{name}[{int(bad[0])}] = {int(a[bad[0]])} is outside [-1, {bound})"
    return a, ""


@njit(cache=True)
def _implied_mates(row_match, n_cols):
    """(col -> row map implied by row_match, a column matched twice or -1, its first row): one
    pass (numpy's flatnonzero, bincount and scatter took 0.16 s on 3M rows)."""
    implied = np.full(n_cols, -1, dtype=np.int64)
    for r in range(row_match.size):
        c = row_match[r]
        if c < 0:
            continue
        if implied[c] >= 0:
            return implied, c, implied[c], r
        implied[c] = r
    return implied, -1, -1, -1


def _check_mates(row_match: np.ndarray, col_match, n_cols: int) -> tuple[np.ndarray | None, str]:
    """The col->row map implied by ``row_match`` (checking no column is used twice) and, when the
    solver gave ``col_match``, that both agree in both directions."""
    implied, c, first, second = _implied_mates(row_match, n_cols)
    if c >= 0:
        return None, f"column {int(c)} is matched to rows {int(first)} and {int(second)}"
    if col_match is not None:
        given, why = _as_match(col_match, n_cols, row_match.size, "col_match")
        if given is None:
            return None, why
        bad = np.flatnonzero(given != implied)
        if bad.size:
            c = int(bad[0])
            return None, (f"col_match[{c}] = {int(given[c])} but row_match says column {c} is "
                          f"matched to {int(implied[c])}")
    return implied, ""


# ---------------------------------------------------------------------------------------------
# matching: König cover

def certify_matching(graph: BipartiteGraph, row_match, col_match=None, device_graph=None,
                     device_matching=None) -> Certificate:
    """Valid: every pair an edge, each row/col used once, row_match/col_match consistent.
    Maximum: a König vertex cover of size |M| covering every edge.

    ``device_graph``: a GPU solver's device copy (row_ptr, col_ind) of the graph's rows' lists
    (Solution.device_graph), and ``device_matching`` its copy of the matching handed back (optional:
    the host's is uploaded without it): for a large graph the passes then run there
    (solvers.konig_device), after checking that both still hold the graph and the host's answer;
    any fault found there is named by the host's.

    witness: value = |M|, cover_rows / cover_cols = sorted indices of the cover's rows / columns
    (listed from the reached sets when first read: the check counts them)."""
    kind = "konig-cover"
    reached, note = _reach_on_gpu(graph, row_match, col_match, device_graph, device_matching)
    if reached is not None:
        free_col, size, cover_size = reached.free_col, reached.matched, reached.cover_size
        # the GPU's pass checked the cover there: only an edge it found uncovered is looked up, to name it
        r, c = (konig.first_uncovered_edge(graph, ~reached.row_seen, reached.col_seen) if reached.uncovered_row >= 0
                else (-1, -1))
        seen = reached  # its reached sets are read from the GPU if the cover is listed
    else:
        agree = graph.n_edges >= konig.PARALLEL_MIN_EDGES and konig.matches_agree(row_match, col_match, *graph.shape)
        rows, why = (row_match, "") if agree else _as_match(row_match, graph.n_rows, graph.n_cols, "row_match")
        if rows is None:
            return Certificate(kind, False, False, details=why)
        bad_row = konig.first_non_edge(graph, rows)
        if bad_row >= 0:
            return Certificate(kind, False, False,
                               details=f"row {bad_row} is matched to column {int(rows[bad_row])}, which is not an edge")
        mates, why = (col_match, "") if agree else _check_mates(rows, col_match, graph.n_cols)
        if mates is None:
            return Certificate(kind, False, False, details=why)
        # unreached rows + reached columns always cover every edge; its size is |M| plus the number of
        # free columns reached, each the end of an augmenting path
        row_seen, col_seen = konig.reach(graph, rows, mates)
        free_reached_at = np.flatnonzero(col_seen & (mates < 0))
        free_col = int(free_reached_at[0]) if free_reached_at.size else -1
        r, c = konig.first_uncovered_edge(graph, ~row_seen, col_seen)  # the proof checked, not trusted
        size = int(np.count_nonzero(rows >= 0))
        cover_size = graph.n_rows - int(np.count_nonzero(row_seen)) + int(np.count_nonzero(col_seen))
        seen = SimpleNamespace(row_seen=row_seen, col_seen=col_seen)
    witness = Witness({"value": size}, {"cover_rows": lambda: konig.indices_where(seen.row_seen, False),
                                        "cover_cols": lambda: konig.indices_where(seen.col_seen, True)})
    suffix = f"; {note}" if note else ""
    if r >= 0:
        return Certificate(kind, True, False, math.inf, details=f"internal error: cover misses edge ({r}, {c})",
                           witness={"value": size})
    if free_col >= 0:  # each free column reached ends an augmenting path
        return Certificate(kind, True, False, float(cover_size - size), witness=witness,
                           details=f"an augmenting path ends at free column {free_col}: not maximum "
                                   f"(vertex cover of size {cover_size} bounds the optimum){suffix}")
    if cover_size != size:
        return Certificate(kind, True, False, float(cover_size - size), witness=witness,
                           details=f"internal error: cover of size {cover_size} for a matching of size {size}")
    return Certificate(kind, True, True, details=f"vertex cover of size {cover_size} = |M|{suffix}", witness=witness)


DEVICE_MIN_EDGES = 1 << 20  # from here a matching is checked on its solver's GPU copy of the graph, if it left one


def _reach_on_gpu(graph, row_match, col_match, device_graph, device_matching=None):
    """(konig_device.Reach, note) from the solver's device copy of the graph, or (None, note): the
    note says where the passes ran and, when not on the GPU though a copy was there, why."""
    if device_graph is None or graph.n_edges < DEVICE_MIN_EDGES:
        return None, ""
    shapes = ((graph.n_rows,), (graph.n_cols,))
    if not all(isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == shape
               for a, shape in zip((row_match, col_match), shapes)):
        return None, ""  # the host's checks say what is wrong with them
    from .certify_device import device_backend
    from .konig_device import reach_on_device
    from .targets import launcher_for
    try:
        reached, why = reach_on_device(launcher_for(device_backend()), device_graph, graph, row_match, col_match,
                                       device_matching)
    except Exception as exc:  # a device fault or a missing toolkit: the host still certifies
        reached, why = None, f"the check on the GPU failed ({type(exc).__name__}: {exc})"
    if reached is None:
        return None, f"{why}: checked on the host"
    return reached, "checked on the GPU's copy of the graph and of the matching (their checksums match)"


# ---------------------------------------------------------------------------------------------
# flow: min cut

def certify_flow(network: FlowNetwork, flow) -> Certificate:
    """Valid: 0 <= flow <= capacity, conservation off source and sink. Maximum: the sink is not
    reachable in the residual graph and the reached set's cut capacity equals the value.

    Integer flows are checked exactly: the value, the conservation sums and the cut capacity are
    exact integers (Python ints past 2^63), never int64 sums that wrap. Float flows are checked
    within the rounding allowance ROUNDING * epsilon * max capacity * (vertices + edges).
    witness: value, cut_side (True = source side), cut_capacity."""
    kind = "min-cut"
    f = np.asarray(flow)
    if f.shape != (network.n_edges,):
        return Certificate(kind, False, False, details=f"flow has shape {f.shape}, expected ({network.n_edges},)")
    if f.size and not (np.issubdtype(f.dtype, np.integer) or np.issubdtype(f.dtype, np.floating)):
        return Certificate(kind, False, False, details=f"flow has entries of type {f.dtype.name}, expected numbers")
    if f.size and np.issubdtype(f.dtype, np.floating) and not np.all(np.isfinite(f)):
        return Certificate(kind, False, False, details="flow holds NaN or infinite values")
    integral = not f.size or np.issubdtype(f.dtype, np.integer) or bool(np.all(f == np.round(f)))
    cap = network.capacity
    s, t = network.source_vertex, network.sink_vertex
    tail, head = network.tail, network.head
    if integral:
        if f.size and f.dtype.kind in "uf" and float(f.max()) > INT64_MAX:  # past any capacity, and int64
            e = int(np.argmax(f))
            return Certificate(kind, False, False, details=f"edge {e} ({int(tail[e])}->{int(head[e])}) carries "
                                                           f"{_plain(f[e])}, over its capacity {int(cap[e])}")
        if f.size and f.dtype.kind == "f" and float(f.min()) < 0:
            e = int(np.argmin(f))
            return Certificate(kind, False, False, details=f"edge {e} carries negative flow {_plain(f[e])}")
        f = f.astype(np.int64, copy=False)  # only read below
        tol = 0
    else:
        f = f.astype(np.float64)
        cap = cap.astype(np.float64)
        tol = ROUNDING * EPS * float(cap.max(initial=0)) * (network.n_vertices + network.n_edges)

    negative = np.flatnonzero(f < -tol)
    if negative.size:
        e = int(negative[0])
        return Certificate(kind, False, False, tolerance=tol, details=f"edge {e} carries negative flow {_plain(f[e])}")
    over = np.flatnonzero(f > cap + tol)
    if over.size:
        e = int(over[0])
        return Certificate(kind, False, False, tolerance=tol,
                           details=f"edge {e} ({int(tail[e])}->{int(head[e])}) carries {_plain(f[e])} over its "
                                   f"capacity {_plain(cap[e])}")
    if integral:
        high, low = min_cut.net_outflow_exact(network.n_vertices, tail, head, f)
        value = (int(high[s]) << 32) + int(low[s])
        unbalanced = (high != 0) | (low != 0)
        unbalanced[[s, t]] = False
        broken = np.flatnonzero(unbalanced)
        imbalance = (lambda v: (int(high[v]) << 32) + int(low[v]))
    else:
        out = np.flatnonzero(tail == s)
        into = np.flatnonzero(head == s)
        value = float_sum(f[out], -f[into])
        net = min_cut.net_outflow(network.n_vertices, tail, head, f)
        inner = np.abs(net)
        inner[[s, t]] = 0
        broken = np.flatnonzero(inner > tol)
        imbalance = (lambda v: _plain(net[v]))
    if broken.size:
        v = int(broken[0])
        return Certificate(kind, False, False, tolerance=tol, witness={"value": value},
                           details=f"flow is not conserved at vertex {v} (net outflow {imbalance(v)})")

    reached = min_cut.residual_reach(network.n_vertices, tail, head, cap, f, s, t, tol)
    cut_capacity = min_cut.cut_capacity(tail, head, network.capacity, reached)
    witness = {"value": value, "cut_side": reached, "cut_capacity": cut_capacity}
    if reached[t]:
        # not a cut: bound the optimum by the cheaper of the trivial cuts {source} and all-but-sink
        out_of_source, into_sink = int_sum(network.capacity[tail == s]), int_sum(network.capacity[head == t])
        side = np.zeros(network.n_vertices, dtype=bool)
        if out_of_source <= into_sink:
            side[s], cut_capacity = True, out_of_source
        else:
            side[:], side[t], cut_capacity = True, False, into_sink
        witness.update(cut_side=side, cut_capacity=cut_capacity)
        return Certificate(kind, True, False, float(cut_capacity - value), tol, witness=witness,
                           details="the sink is reachable in the residual graph: an augmenting path exists")
    gap = float(cut_capacity - value)  # exact ints (a float value only for float flows)
    if abs(gap) > tol:
        return Certificate(kind, True, False, gap=gap, tolerance=tol, witness=witness,
                           details=f"cut capacity {cut_capacity} differs from the flow value {_plain(value)}")
    return Certificate(kind, True, True, gap=0.0, tolerance=tol, witness=witness,
                       details=f"cut of capacity {cut_capacity} = flow value")


def _plain(x) -> str:
    """A number as people write it: integers in full, floats in %g (no numpy reprs)."""
    if isinstance(x, (int, np.integer)) or (isinstance(x, (float, np.floating)) and float(x).is_integer()
                                            and abs(float(x)) < 2 ** 63):
        return str(int(x))
    return f"{float(x):g}"


# ---------------------------------------------------------------------------------------------
# assignment: dual potentials
#
# Both problem classes are handed to the kernels as a CSR of costs: SparseCosts as is, CostMatrix as
# ``dense`` rows of length n_cols (row_ptr = i * n_cols, no column index array, inf = forbidden), so
# a large dense matrix is never copied.
#
# Exactness. Float64 costs are binary fractions, so the proof is checked exactly, not within a
# rounding allowance: u_i = min_j (c_ij - v_j) is rounded *down* per entry (TwoSum gives the exact
# error of each difference), so u_i + v_j <= c_ij holds exactly, and that is verified exactly
# again; the gap cost - (sum u + sum v) is an exact sum (math.fsum) rounded up. A dual found
# by float search is thus a proven lower bound on the optimum, whatever rounding went into it.
# ``tolerance`` is then only the optimality claim's allowance for the solvers' own rounding:
# ROUNDING * (pairs + 1) * machine epsilon * S, where S sums the magnitudes the proof adds up
# (twice the assigned costs for the solver's duals, which the certificate does not trust to set
# its own allowance; the assigned costs and the derived potentials otherwise). It scales with the
# data at every magnitude, 1e-300 and 1e300 alike, and an offset shared by all costs (1e6 plus
# noise of 1e-3) cannot swallow the differences that matter. A gap above 0 is exactly no gap when
# no other assignment comes within it of the dual's objective (solvers.near_ties); a proof that
# needs the allowance otherwise is settled in exact integers (solvers.exact_settle, exact_saving).

SPFA_RELATIVE = 4 * EPS  # a shortest-path distance drops only by more than this share of its value
SPFA_RETRIES = 4  # a cycle that float sums made negative (exactly it is not): retry 256x coarser


class _CostRows:
    def __init__(self, problem):
        self.n_rows, self.n_cols = problem.shape
        self.size = self.n_rows * self.n_cols if isinstance(problem, CostMatrix) else problem.cost.size
        if isinstance(problem, CostMatrix):
            self.dense = True
            self.problem = problem
            self.row_ptr = np.arange(self.n_rows + 1, dtype=np.int64) * self.n_cols
            self.col_ind = np.empty(0, dtype=np.int64)
            # the problem's own summary (one pass, made when it was validated or first described)
            described = problem.describe()
            low, high = described["min_cost"], described["max_cost"]
            self.max_abs = max(abs(low), abs(high)) if low is not None else 0.0
            self.integer = bool(described["integer"])
        else:
            self.dense = False
            self.row_ptr, self.col_ind, self.cost = problem.row_ptr, problem.col_ind, problem.cost
            max_abs, integer = _cost_summary(self.cost)
            self.max_abs, self.integer = float(max_abs), bool(integer)

    @functools.cached_property
    def cost(self) -> np.ndarray:
        """Every cost as float64, flat (dense: made from integers the problem holds as given only
        when a check reads them all; a proof settled on the GPU's copy never does)."""
        return self.problem.costs.reshape(-1)

    @property
    def held(self) -> np.ndarray:
        """The costs flat as the problem holds them: a held integer matrix's own integers (no
        float64 copy; read by loops that convert each row, see _near_row), else ``cost``."""
        if self.dense and self.problem.values.dtype != np.float64 and "cost" not in self.__dict__:
            return self.problem.values.reshape(-1)
        return self.cost

    def args(self):
        return self.row_ptr, self.col_ind, self.dense, self.cost

    def pair_costs(self, row_match: np.ndarray) -> np.ndarray:
        """_pair_costs: each row's assigned cost (NaN unassigned, inf not allowed)."""
        if not self.dense:
            return _pair_costs(*self.args(), row_match)
        out = np.full(row_match.size, np.nan)
        rows = np.flatnonzero(row_match >= 0)
        out[rows] = self.problem.values[rows, row_match[rows]]
        return out

    def cost_at(self, i: int, j: int) -> float:
        """c_ij (inf when the pair is not allowed)."""
        if self.dense:
            return float(self.problem.values[i, j])
        lo, hi = int(self.row_ptr[i]), int(self.row_ptr[i + 1])
        k = lo + int(np.searchsorted(self.col_ind[lo:hi], j))
        return float(self.cost[k]) if k < hi and self.col_ind[k] == j else np.inf


@njit(cache=True)
def _cost_summary(cost):
    """(max |c| over finite costs, every finite cost an integer), in one pass without temporaries."""
    top = 0.0
    integer = True
    for k in range(cost.size):
        c = cost[k]
        if c == np.inf:
            continue
        if abs(c) > top:
            top = abs(c)
        if integer and c != np.floor(c):
            integer = False
    return top, integer


@njit(cache=True)
def _pair_costs(row_ptr, col_ind, dense, cost, row_match):
    """Cost of each row's assigned pair: NaN when unassigned, inf when the pair is not allowed."""
    out = np.full(row_match.size, np.nan)
    for i in range(row_match.size):
        j = row_match[i]
        if j < 0:
            continue
        if dense:
            out[i] = cost[row_ptr[i] + j]
            continue
        k = position_in_row(row_ptr, col_ind, i, j)
        out[i] = cost[k] if k >= 0 else np.inf
    return out


@njit(cache=True)
def _dense_row_floor(cost, start, v_floor):
    """_dual_row's u_i for a dense row without the check: the same value (floor_step's minimum,
    which does not depend on the order of entries), as an integer minimum of floor keys, which the
    compiler vectorises; forbidden (+inf) entries lose every minimum."""
    best = INF_KEY
    for j in range(v_floor.size):
        best = min(best, floor_key(cost[start + j], v_floor[j]))
    return float_of_bits(order_key(best))


@njit(cache=True)
def _dual_row(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, i):
    """Row i in one read of its costs: u_i = the largest float with u_i <= c_ij - v_floor_j exactly
    for every allowed j (inf when it has none), and when ``check`` the max over its allowed pairs
    of u[i] + v_check_j - c_ij with the first j attaining it (else -inf, -1). The per-entry steps
    (solvers.dual_steps) are those the GPU's check runs (a dense row's in their branch-free form,
    with the same results)."""
    if dense and not check:
        return _dense_row_floor(cost, row_ptr[i], v_floor), -np.inf, -1
    if dense:
        return _dense_row_checked(cost[row_ptr[i]:row_ptr[i + 1]], u[i], v_check, v_floor)
    best, worst, at = np.inf, -np.inf, -1
    for k in range(row_ptr[i], row_ptr[i + 1]):
        c = cost[k]
        if c == np.inf:
            continue
        j = col_ind[k]
        if check:
            worst, at = violation_step(u[i] + v_check[j] - c, j, worst, at)
        best = floor_step(c, v_floor[j], best)
    return best, worst, at


NO_SLACK_KEY = np.int64(-INF_KEY - 1)  # order_key of -inf: a forbidden pair's slack, below every allowed one's


@register_jitable
def _dense_row_checked(row, u_i, v_check, v_floor):
    """_dual_row with its check for one dense row (float64 costs, or integers below 2^53, each exact
    as a float64), without branches: integer minima and maxima of order keys, which the compiler
    vectorises (one entry at a time, branching, took 10-45 ns an entry on the GPU machines' hosts,
    20x this). The floor as _dense_row_floor, the worst slack as a maximum, then the first column
    attaining it: the running steps' results, which do not depend on the order of entries (a
    slack of -0.0 may come out as +0.0, equal to it)."""
    best, bad = INF_KEY, NO_SLACK_KEY
    for j in range(row.size):
        c = float(row[j])
        best = min(best, floor_key(c, v_floor[j]))
        bad = max(bad, order_key(bits_of(u_i + v_check[j] - c)) if c != np.inf else NO_SLACK_KEY)
    worst, at = float_of_bits(order_key(bad)), -1
    if bad != NO_SLACK_KEY:
        for j in range(row.size):
            c = float(row[j])
            if c != np.inf and u_i + v_check[j] - c == worst:
                at = j
                break
    return float_of_bits(order_key(best)), worst, at


@njit(cache=True)
def _held_rows_checked(values, rows, u, v_check, v_floor):
    """_dense_row_checked for the rows ``rows`` of the costs as a problem holds them (a GPU check's
    spot rows): read in place, with no float64 copy (copying a few rows of 20,000 integers cost
    more than checking them)."""
    floor, worst, at = np.empty(rows.size), np.empty(rows.size), np.empty(rows.size, dtype=np.int64)
    for r in range(rows.size):
        i = rows[r]
        floor[r], worst[r], at[r] = _dense_row_checked(values[i], u[i], v_check, v_floor)
    return floor, worst, at


@njit(cache=True)
def _dual_rows_serial(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, floor, worst, at):
    for i in range(floor.size):
        floor[i], worst[i], at[i] = _dual_row(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, i)


@njit(cache=True, parallel=True)
def _dual_rows_parallel(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, floor, worst, at):
    for i in prange(floor.size):
        floor[i], worst[i], at[i] = _dual_row(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, i)


def _dual_rows(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check: bool, serial: bool = False):
    """Every row's (u_i rounded down, worst violation, its column) (see _dual_row); rows spread
    over the cores for a large problem, unless ``serial`` (a few rows: waking every core costs more)."""
    n = row_ptr.size - 1
    floor, worst, at = np.empty(n), np.empty(n), np.empty(n, dtype=np.int64)
    rows = _dual_rows_parallel if cost.size >= PARALLEL_MIN_ENTRIES and not serial else _dual_rows_serial
    rows(row_ptr, col_ind, dense, cost, u, v_check, v_floor, check, floor, worst, at)
    return floor, worst, at


def _float64_row(cost, start, stop):
    """cost[start:stop] as float64: a view of float64 costs, a converted copy of the integers a
    problem holds as given (chosen when compiled, by the array's type)."""


@overload(_float64_row)
def _float64_row_typed(cost, start, stop):
    if cost.dtype == types.float64:
        return lambda cost, start, stop: cost[start:stop]
    return lambda cost, start, stop: cost[start:stop].astype(np.float64)


@njit(cache=True)
def _near_row(row_ptr, col_ind, dense, cost, u, v, row_match, gap, count, near, low, i):
    """Row i's near-tight pairs into count[i] and near[i] (near_ties.collect_near_tight), and into
    low[i] the least low_bit_exponent over the costs of its assigned pair and of those kept.
    ``cost`` may be a held integer matrix's own flat integers: each row is read as float64 (exact:
    held integers are below 2^53), so the n^2 float64 copy is never made for this search."""
    start, stop = row_ptr[i], row_ptr[i + 1]
    row = _float64_row(cost, start, stop)
    count[i] = collect_near_tight(row, 0, stop - start, dense, col_ind[start:stop], v, 0.0, u[i], row_match[i], gap,
                                  near, i)
    least = NO_LOW_BIT
    for e in range(-1, min(count[i], NEAR_CAP)):
        j = row_match[i] if e < 0 else near[i, e]
        if j >= 0:
            k = j if dense else position_in_row(row_ptr, col_ind, i, j) - start
            least = min(least, low_bit_exponent(row[k]))
    low[i] = least


@njit(cache=True, parallel=True)
def _near_rows_parallel(row_ptr, col_ind, dense, cost, u, v, row_match, gap, count, near, low):
    for i in prange(count.size):
        _near_row(row_ptr, col_ind, dense, cost, u, v, row_match, gap, count, near, low, i)


@njit(cache=True)
def _near_rows_serial(row_ptr, col_ind, dense, cost, u, v, row_match, gap, count, near, low):
    for i in range(count.size):
        _near_row(row_ptr, col_ind, dense, cost, u, v, row_match, gap, count, near, low, i)


@njit(cache=True)
def _room_search(n, m, row_match, count, near, releasable_column, releasable_row):
    scratch = np.empty((3, max(m, 1)), dtype=np.int64)
    return room_for_another(n, m, row_match, count, near, releasable_column, releasable_row, scratch[0], scratch[1],
                            scratch[2])


def _room_for_another(cr: "_CostRows", u, v, row_match, gap: float) -> bool:
    """Whether some assignment other than ``row_match`` may cost less than ``gap`` above the
    objective of the exactly feasible dual (u, v) (solvers.near_ties): when not, it is optimal,
    exactly. Not when every cost such an assignment could trade (the assigned pairs' and the
    near-tight ones') is a multiple of a power of two above the gap (near_ties.cost_step)."""
    n, m = cr.n_rows, cr.n_cols
    u = np.ascontiguousarray(u, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    row_match = np.ascontiguousarray(row_match, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    near = np.empty((n, NEAR_CAP), dtype=np.int32)
    low = np.empty(n, dtype=np.int64)
    loop = _near_rows_parallel if cr.size >= PARALLEL_MIN_ENTRIES else _near_rows_serial
    loop(cr.row_ptr, cr.col_ind, cr.dense, cr.held, u, v, row_match, float(gap), count, near, low)
    if count.max(initial=0) <= NEAR_CAP and gap < cost_step(low.min(initial=NO_LOW_BIT)):
        return False  # what another assignment could trade costs multiples of a step above the gap
    with np.errstate(invalid="ignore"):
        return bool(_room_search(n, m, row_match, count, near, -v < gap, -u < gap))


def _worst_pair(worst: np.ndarray, at: np.ndarray) -> tuple[float, int, int]:
    """The largest violation over the rows and the first pair (in row order) attaining it."""
    if not worst.size:
        return -np.inf, -1, -1
    i = int(np.argmax(worst))  # the first row holding the maximum, as a serial scan finds it
    if worst[i] == -np.inf:
        return -np.inf, -1, -1
    return float(worst[i]), i, int(at[i])


def _max_dual_violation(row_ptr, col_ind, dense, cost, u, v):
    """max over allowed pairs of u_i + v_j - c_ij, and the first pair (in row order) attaining it."""
    _, worst, at = _dual_rows(row_ptr, col_ind, dense, cost, u, v, v, True)
    return _worst_pair(worst, at)


def _row_min_down(row_ptr, col_ind, dense, cost, v):
    """Every row's u_i = min_j (c_ij - v_j) rounded down, exactly feasible by construction."""
    return _dual_rows(row_ptr, col_ind, dense, cost, v, v, v, False)[0]


_difference_down, _sum_exceeds = difference_down, sum_exceeds  # the names tests check them by


def warm_parallel_loops(layouts=("dense", np.int32, np.int64), held_types=None) -> None:
    """Compile (or load) the multi-core variant of the row loop for the argument types
    certificates give it (``layouts``: "dense" for a dense matrix, an index dtype for sparse costs
    with such indices; the costs read-only, as a Problem holds them), and the loops only a large
    problem reaches (the near-tie search and a GPU check's spot rows, on ``held_types``: by
    default float64 and every held integer type): a warm-up on small problems never reaches them
    by size alone."""
    from .problems import HELD_INTEGERS
    v = np.zeros(2)
    cost = np.ones(4)
    cost.setflags(write=False)
    dense_ptr = np.array([0, 2, 4], dtype=np.int64)
    for layout in layouts:
        if layout == "dense":
            row_ptr, col_ind, dense = dense_ptr, np.empty(0, dtype=np.int64), True
        else:  # read-only, as SparseCosts holds them
            row_ptr, col_ind, dense = np.array([0, 2, 4], dtype=layout), np.array([0, 1, 0, 1], dtype=layout), False
            row_ptr.setflags(write=False)
            col_ind.setflags(write=False)
        _dual_rows_parallel(row_ptr, col_ind, dense, cost, v, v, v, True, np.empty(2), np.empty(2),
                            np.empty(2, dtype=np.int64))
    for dtype in held_types if held_types is not None else (np.dtype(np.float64),) + HELD_INTEGERS:
        held = np.ones(4, dtype=dtype)
        held.setflags(write=False)  # as a Problem holds its costs (and a float64 copy of integers)
        _held_rows_checked(held.reshape(2, 2), np.array([0, 1]), v, v, v)  # a GPU check's spot rows
        _near_rows_parallel(dense_ptr, np.empty(0, dtype=np.int64), True, held, v, v, np.array([0, 1]), 1.0,
                            np.zeros(2, dtype=np.int64), np.empty((2, NEAR_CAP), dtype=np.int32),
                            np.empty(2, dtype=np.int64))


@njit(cache=True)
def _first_excess(row_ptr, col_ind, dense, cost, u, v):
    """The first allowed pair with u_i + v_j > c_ij exactly, or (-1, -1) (tests check the
    construction above with it)."""
    for i in range(u.size):
        for k in range(row_ptr[i], row_ptr[i + 1]):
            c = cost[k]
            if c == np.inf:
                continue
            j = k - row_ptr[i] if dense else col_ind[k]
            if sum_exceeds(u[i], v[j], c):
                return i, j
    return -1, -1


@njit(cache=True)
def _push(b, queue, queued, qhead, size):
    """Append node b to the FIFO ring unless it is already in it. Returns the new size."""
    if not queued[b]:
        queue[(qhead + size) % queue.size] = b
        queued[b] = True
        size += 1
    return size


@njit(cache=True)
def _cycle_node(pred, b, n_nodes):
    """Follow the predecessors from b n_nodes times: a node on a cycle of them (so the tentative
    paths loop), or (-1, path length) when they end first."""
    x = b
    for steps in range(n_nodes):
        x = pred[x]
        if x < 0:
            return -1, steps + 1
    return x, n_nodes


@njit(cache=True)
def _spfa_potentials(n_cols, row_ptr, col_ind, dense, cost, row_match, col_match, mate_cost, relative):
    """Shortest distances by SPFA (FIFO Bellman-Ford) on the residual graph of a complete assignment.

    Nodes: rows 0..n-1, cols n..n+m-1 and a hub. Arcs: row i -> col j (c_ij) for every allowed pair
    not assigned; assigned col j -> its row (-c_ij). Rows < cols: hub -> every col (0) and free col
    -> hub (0), which pins free columns to the hub and every other column at or below it. Rows >
    cols: every row -> hub (0) and hub -> free row (0), the mirror image. Every node but an assigned
    row starts at 0 (a virtual source); an assigned row's only in-arc comes from its column, so its
    pair ends up tight. A distance only drops by more than ``relative`` times its new value (a sum's
    rounding is relative to the result, so an offset shared by the costs does not blunt it), so
    float round-off rarely cycles. (A distance-ordered heap was tried: faster on some dense
    instances, much slower on sparse ones.)

    Returns (dist, ok, node, pred): ok False means the tentative paths loop, and node lies on that
    loop of predecessors, whose arc costs the caller sums exactly: negative, a cheaper assignment
    exists; else float round-off made it.
    """
    n, m = row_match.size, n_cols
    n_nodes = n + m + 1
    hub = n + m
    dist = np.zeros(n_nodes)
    arcs = np.zeros(n_nodes, dtype=np.int64)  # arcs on the current tentative path
    pred = np.full(n_nodes, -1, dtype=np.int64)
    queue = np.empty(n_nodes, dtype=np.int64)
    queued = np.zeros(n_nodes, dtype=np.bool_)
    qhead, size = 0, 0
    for a in range(n_nodes):
        if a < n and row_match[a] >= 0:
            dist[a] = np.inf
        else:
            size = _push(a, queue, queued, qhead, size)
    if n < m:  # the hub's out-arcs: to every column, or to the free rows
        hub_lo, hub_hi = n, n + m
    elif n > m:
        hub_lo, hub_hi = 0, n
    else:
        hub_lo, hub_hi = 0, 0
    while size > 0:
        a = queue[qhead]
        qhead = (qhead + 1) % n_nodes
        size -= 1
        queued[a] = False
        da = dist[a]
        if a < n:
            mate = row_match[a]
            for k in range(row_ptr[a], row_ptr[a + 1]):
                c = cost[k]
                j = k - row_ptr[a] if dense else col_ind[k]
                if j == mate or c == np.inf:
                    continue
                b = n + j
                cand = da + c
                if cand < dist[b] - relative * abs(cand):
                    dist[b] = cand
                    pred[b] = a
                    arcs[b] = arcs[a] + 1
                    if arcs[b] >= n_nodes:
                        x, length = _cycle_node(pred, b, n_nodes)
                        if x >= 0:
                            return dist, False, x, pred
                        arcs[b] = length
                    size = _push(b, queue, queued, qhead, size)
            # the row's remaining out-arc: to the hub when rows > cols
            targets_lo, targets_hi, step = hub, hub + 1 if n > m else hub, 0.0
        elif a < hub:
            i = col_match[a - n]
            if i >= 0:
                targets_lo, targets_hi, step = i, i + 1, -mate_cost[a - n]
            elif n < m:
                targets_lo, targets_hi, step = hub, hub + 1, 0.0
            else:
                targets_lo, targets_hi, step = 0, 0, 0.0
        else:
            targets_lo, targets_hi, step = hub_lo, hub_hi, 0.0
        for b in range(targets_lo, targets_hi):
            if a == hub and n > m and row_match[b] >= 0:
                continue  # the hub leads to free rows only
            cand = da + step
            if cand < dist[b] - relative * abs(cand):
                dist[b] = cand
                pred[b] = a
                arcs[b] = arcs[a] + 1
                if arcs[b] >= n_nodes:
                    x, length = _cycle_node(pred, b, n_nodes)
                    if x >= 0:
                        return dist, False, x, pred
                    arcs[b] = length
                size = _push(b, queue, queued, qhead, size)
    return dist, True, -1, pred


def _cycle_costs(cr: _CostRows, pred: np.ndarray, node: int, mate_cost: np.ndarray) -> np.ndarray:
    """The arc costs around the loop of predecessors through ``node`` (nodes as in _spfa_potentials:
    row -> col costs c_ij, an assigned col -> its row -c_ij, arcs of the hub 0)."""
    n, m = cr.n_rows, cr.n_cols
    costs, x = [], node
    while True:
        p = int(pred[x])
        if p < n and n <= x < n + m:  # row p -> column x - n
            costs.append(cr.cost_at(p, x - n))
        elif n <= p < n + m and x < n:  # assigned column p - n -> its row x
            costs.append(-mate_cost[p - n])
        else:
            costs.append(0.0)  # to or from the hub
        x = p
        if x == node:
            return np.array(costs)


def _parse_duals(duals, n: int, m: int):
    """(u, v) as float64 arrays from a solver's {"u", "v"}, or (None, None, why)."""
    try:
        u = np.asarray(duals["u"], dtype=np.float64)
        v = np.asarray(duals["v"], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as exc:
        return None, None, f"solver duals unreadable ({exc})"
    if u.shape != (n,) or v.shape != (m,):
        return None, None, f"solver duals have shapes {u.shape}, {v.shape}; expected ({n},), ({m},)"
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        return None, None, "solver duals hold NaN or infinite values"
    return u, v, ""


def _check_duals(cr: _CostRows, u, v, rows, mates, pair_cost, primal, tol, violation):
    """Complementary slackness within tol: u_i + v_j <= c_ij on allowed pairs (``violation``: the
    largest u_i + v_j - c_ij and its pair, from the scan that also made the feasible dual), = on
    assigned pairs, sign conditions of the rectangular LP, dual objective = primal. Returns (ok,
    why). Only says whether the solver's duals are right as given; the proof never rests on it."""
    n, m = cr.n_rows, cr.n_cols
    with np.errstate(all="ignore"):  # duals may be huge: overflow here just means "not tight"
        dual = float_sum(u, v)
        worst, wi, wj = violation
        if not worst <= tol:
            return False, f"u[{wi}] + v[{wj}] exceeds c[{wi},{wj}] by {worst:g}"
        assigned = np.flatnonzero(rows >= 0)
        slack = np.abs(pair_cost[assigned] - u[assigned] - v[rows[assigned]])
        if slack.size and not slack.max() <= tol:
            i = int(assigned[np.argmax(slack)])
            return False, f"assigned pair ({i}, {int(rows[i])}) is not tight (slack {slack.max():g})"
        for side, pot, free, applies in (("col", v, mates < 0, n < m), ("row", u, rows < 0, n > m)):
            if not applies:
                continue
            if pot.size and pot.max() > tol:
                return False, f"{side} potential {int(np.argmax(pot))} is positive ({pot.max():g})"
            loose = np.flatnonzero(free & (np.abs(pot) > tol))
            if loose.size:
                return False, f"unassigned {side} {int(loose[0])} has nonzero potential {pot[loose[0]]:g}"
        if not abs(primal - dual) <= tol:
            return False, f"dual objective {dual:g} differs from the cost {primal:g}"
    return True, ""


def _floor_columns(cr: _CostRows, v) -> np.ndarray | None:
    """The column potentials of the feasible dual made from ``v``: v shifted <= 0 when rows < cols
    (the rectangular LP's sign condition); for a square problem shifted so that their median is 0
    (u + K, v - K is the same dual, but potentials carrying a shared 1e18 round every pair's slack
    at 1e18 and would hide a difference of 17 there); or None when they are not all finite."""
    v = np.asarray(v, dtype=np.float64)
    if cr.n_rows < cr.n_cols and v.size:
        with np.errstate(over="ignore", invalid="ignore"):
            v = v - max(0.0, float(v.max()))  # v_j - max v rounds to <= 0: the sign survives rounding
    elif cr.n_rows == cr.n_cols and v.size and np.all(np.isfinite(v)):
        middle = float(np.median(v))
        if middle != 0.0:
            with np.errstate(over="ignore", invalid="ignore"):
                v = v - middle
    return v if np.all(np.isfinite(v)) else None


def _feasible_duals(cr: _CostRows, v, floor=None):
    """An exactly feasible dual (u, v) from any column potentials v: v shifted <= 0 when rows <
    cols, u_i = min_j (c_ij - v_j) rounded down (capped at 0 when rows > cols), or None. Its
    objective is a proven lower bound on the optimum. ``floor``: (those u_i, those shifted v),
    made already by a scan that read the costs for something else too (the solver's duals' check)."""
    if floor is not None:
        u, v = floor
    else:
        v = _floor_columns(cr, v)
        if v is None:
            return None
        u = _row_min_down(*cr.args(), v)
    if cr.n_rows > cr.n_cols:
        u = np.minimum(u, 0.0)
    if not np.all(np.isfinite(u)):
        return None
    return u, v


def _derived_columns(cr: _CostRows, rows, mates, pair_cost):
    """Column potentials by SPFA on the residual graph of the complete assignment ``rows``:
    (columns, None), or (partial columns, arc costs of a cycle of exactly negative cost: a cheaper
    assignment exists), or (None, None) when float round-off defeats the search."""
    n, m = cr.n_rows, cr.n_cols
    assigned = rows >= 0
    mate_cost = np.zeros(m)
    mate_cost[rows[assigned]] = pair_cost[assigned]
    relative = SPFA_RELATIVE
    for _ in range(SPFA_RETRIES):
        dist, no_loop, node, pred = _spfa_potentials(m, *cr.args(), rows, mates, mate_cost, relative)
        with np.errstate(invalid="ignore"):
            columns = dist[n:n + m] - dist[n + m]
        if no_loop:
            return columns, None
        cycle = _cycle_costs(cr, pred, node, mate_cost)
        if float_sum_up(cycle) < 0:  # exactly negative: not an artefact of rounding
            return columns, cycle
        relative *= 256
    return None, None


def _line_reduced(costs: np.ndarray) -> np.ndarray:
    """The costs less each row's cheapest (rows <= cols), then less each column's cheapest (rows >=
    cols): every complete assignment changes by the same amount, so the optimum stays. scipy's own
    float sums then work on the differences, not on a shared 1e18 (it missed the optimum of costs
    with one column near 1e18 by 2); a subtraction that rounds only makes the reference weaker, never
    wrong, as its answer is judged on the original costs, exactly."""
    n, m = costs.shape
    reduced = costs
    with np.errstate(invalid="ignore", over="ignore"):
        for axis, applies in ((1, n <= m), (0, n >= m)):
            if applies and reduced.size:
                lowest = np.min(reduced, axis=axis, keepdims=True)
                lowest = np.where(np.isfinite(lowest), lowest, 0.0)  # a line with no allowed pair: as it is
                if np.any(lowest != 0.0):
                    reduced = reduced - lowest
    return reduced if reduced is not costs else writeable_alias(costs)


def _reference_assignment(problem) -> np.ndarray | None:
    """row_match of an optimal assignment found independently of any solver under test (scipy's
    linear_sum_assignment, or min_weight_full_bipartite_matching for sparse costs), or None."""
    from scipy.optimize import linear_sum_assignment
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    n, m = problem.shape
    try:
        if isinstance(problem, CostMatrix):
            r, c = linear_sum_assignment(_line_reduced(problem.costs))
        else:
            cost = problem.cost
            if cost.size == 0 or not np.all(np.isfinite(cost)):
                return None
            # every complete assignment has min(n, m) pairs, so a constant shift keeps the optimum;
            # it makes every weight positive (scipy reads a stored zero as no edge), at the costs' scale
            low, high = float(cost.min()), float(cost.max())
            shifted = (cost - low) + max(high - low, float(np.finfo(np.float64).tiny))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # scipy warns of explicit zeros it drops: there are none
                r, c = min_weight_full_bipartite_matching(
                    csr_matrix((shifted, problem.col_ind, problem.row_ptr), shape=(n, m)))
    except (ValueError, MemoryError):
        return None
    row_match = np.full(n, -1, dtype=np.int64)
    row_match[np.asarray(r, dtype=np.int64)] = np.asarray(c, dtype=np.int64)
    return row_match


def _reference_columns(problem, cr: _CostRows):
    """Column potentials proving an independently found optimal assignment optimal, or None."""
    ref = _reference_assignment(problem)
    if ref is None:
        return None
    ref_cost = cr.pair_costs(ref)
    if np.count_nonzero(ref >= 0) < min(cr.n_rows, cr.n_cols) or np.any(np.isinf(ref_cost)):
        return None
    ref_mates = np.full(cr.n_cols, -1, dtype=np.int64)
    ref_mates[ref[ref >= 0]] = np.flatnonzero(ref >= 0)
    columns, cycle = _derived_columns(cr, ref, ref_mates, ref_cost)
    return columns if columns is not None and cycle is None else None


def rounding_tolerance(pairs: int, magnitude: float) -> float:
    """The optimality claim's allowance: ROUNDING * (pairs + 1) * epsilon * magnitude."""
    return ROUNDING * (pairs + 1) * EPS * magnitude


def _launch_device_scan(problem, cr: _CostRows, u, v, device_costs):
    """The solver's duals' scan launched on the GPU's copy of a large dense problem, when the solver
    left one (solvers.certify_device), to be read once the certificate's host steps have run
    beside it: (v_floor: the feasible dual's columns or None when v is not finite, the pending
    scan or None, why not on the GPU: "" when no copy was there to use)."""
    v_floor = _floor_columns(cr, v)
    if device_costs is None or not cr.dense or cr.size < DEVICE_MIN_ENTRIES:
        return v_floor, None, ""
    from .certify_device import start_dual_rows
    pending, why = start_dual_rows(device_costs, problem.shape, problem.checksum, u, v,
                                   v_floor if v_floor is not None else v)
    return v_floor, pending, why


def _scan_solver_duals(cr: _CostRows, u, v, launched, notes: list):
    """One read of the costs for the solver's duals: (the feasible dual (u, v) made from v, or None
    when its columns are not finite; the worst violation of u_i + v_j <= c_ij and its pair). On the GPU's
    copy when _launch_device_scan ``launched`` a scan there, else on the host; ``notes`` says
    which, and why not the GPU."""
    v_floor, pending, why = launched
    columns = v_floor if v_floor is not None else v
    scanned = None
    if pending is not None:
        scanned, why = _scan_on_device(cr, u, v, columns, pending)
    if scanned is not None:
        notes.append("dual feasibility checked on the GPU's copy of the costs (its checksum matches)")
    else:
        if why:
            notes.append(f"{why}: checked on the host")
        scanned = _dual_rows(*cr.args(), u, v, columns, True)
    floor, worst, at = scanned
    return ((floor, v_floor) if v_floor is not None else None), _worst_pair(worst, at)


def _scan_on_device(cr: _CostRows, u, v, v_floor, pending):
    """The device scan's (floor, worst, at), or (None, why not); a few of its rows (a spread of rows,
    recomputed on the host while the GPU scans, then its worst and lowest u) must agree with the
    host's bit for bit."""
    n = cr.n_rows
    spread = max(2, min(SPOT_ROWS, SPOT_ENTRIES // max(cr.n_cols, 1)))  # the first and last rows at least
    rows = np.unique(np.linspace(0, n - 1, spread).astype(np.int64))
    # in one compiled call on one core (a call per row cost more than reading the rows; waking
    # every core's thread for ten rows, more again)
    host = _held_rows_checked(cr.problem.values, rows, u, v, v_floor)
    scanned, why = pending.result()
    if scanned is None:
        return None, why
    floor, worst, at = scanned
    extremes = np.setdiff1d(np.array([np.argmax(worst), np.argmin(floor)], dtype=np.int64), rows)
    if extremes.size:
        more = _held_rows_checked(cr.problem.values, extremes, u, v, v_floor)
        rows = np.concatenate([rows, extremes])
        host = tuple(np.concatenate(pair) for pair in zip(host, more))
    for got, want in zip(scanned, host):
        differs = np.flatnonzero(got[rows] != want)
        if differs.size:
            return None, f"the GPU's results differ from the host's on row {int(rows[differs[0]])}"
    return scanned, ""


def certify_assignment(problem: CostMatrix | SparseCosts, row_match, col_match=None, duals=None,
                       epsilon: float = 0.0, device_costs=None) -> Certificate:
    """Min-cost assignment. Valid: allowed pairs, each row/col at most once, min(rows, cols) pairs.

    Optimal: column potentials v (the solver's, else derived here by shortest paths) are turned
    into an exactly feasible dual (u_i = min_j c_ij - v_j rounded down, with the rectangular sign
    conditions), whose objective D is a lower bound on the optimum; gap = cost - D, summed exactly
    and rounded up. Proven optimal when no other assignment comes within the gap of D
    (solvers.near_ties: the only optimum, exactly), or, for integer costs, when gap < 1 (every
    assignment costs an integer), which is what an epsilon-run with n * epsilon < 1 leaves; or when
    gap <= tolerance (see the section comment: it scales with the magnitudes summed) and no
    assignment is cheaper in exact arithmetic (solvers.exact_settle; past REFERENCE_CELLS entries:
    not proven).

    Not proven optimal: the gap is the smallest cost - D over every feasible dual built, including
    (for at most REFERENCE_CELLS entries) the potentials of an independently found optimal
    assignment, which make it the true gap up to rounding. ``epsilon`` > 0 is the run's claim
    (cost <= optimum + max(rows, cols) * epsilon): Certificate.bound, certified when gap <= bound.

    ``device_costs``: a GPU solver's device copy of the costs (Solution.device_costs): the solver's
    duals are then checked there (solvers.certify_device), against the problem's checksum.

    witness: value (total cost), u, v, dual_objective (of the feasible dual)."""
    kind = "dual-potentials"
    n, m = problem.shape
    cr = _CostRows(problem)
    solver_duals = _parse_duals(duals, n, m) if duals is not None else None
    if solver_duals is not None and solver_duals[0] is not None:
        # first, so that the GPU scans while the host checks the answer below
        launched = _launch_device_scan(problem, cr, *solver_duals[:2], device_costs)
    rows, why = _as_match(row_match, n, m, "row_match")
    if rows is None:
        return Certificate(kind, False, False, details=why)
    pair_cost = cr.pair_costs(rows)
    forbidden = np.flatnonzero(np.isinf(pair_cost))
    if forbidden.size:
        i = int(forbidden[0])
        return Certificate(kind, False, False, details=f"row {i} is assigned to column {int(rows[i])}, "
                                                       "a forbidden pair")
    mates, why = _check_mates(rows, col_match, m)
    if mates is None:
        return Certificate(kind, False, False, details=why)
    assigned = rows >= 0
    assigned_costs = pair_cost[assigned]
    primal = float_sum(assigned_costs)
    magnitude = float_sum(np.abs(assigned_costs))
    pairs = min(n, m)
    # integer costs of at most 2^53 (past it every float is an integer, at coarser steps): every
    # assignment costs an exact integer, and the gap is an exact bound rounded up, so a gap below 1 is
    # no gap and the allowance stays below 1 (a gap of 1 is never rounding there)
    integral = cr.integer and cr.max_abs <= 2.0 ** 53
    allowance = (lambda tol: min(tol, 0.5)) if integral else (lambda tol: tol)
    strict_tol = allowance(rounding_tolerance(pairs, 2.0 * magnitude))
    count = int(assigned.sum())
    if count < pairs:
        return Certificate(kind, False, False, tolerance=strict_tol, witness={"value": primal},
                           details=f"incomplete assignment: {count} of {pairs} pairs")

    claimed = max(n, m) * float(epsilon) if epsilon > 0 else 0.0
    notes = [f"epsilon {epsilon:g}, declared bound n*epsilon = {claimed:g}"] if epsilon > 0 else []
    bounds = []  # (gap, tol, u, v) of every feasible dual built

    def attempt(v, how, reason, trusted, floor=None):
        """A certificate if the exactly feasible dual built from v proves optimality, else None.
        ``trusted``: the potentials are the certificate's own, so their magnitudes may widen
        the rounding allowance (a solver's could inflate it at will). ``floor``: the dual's (u, v),
        made already from v (see _feasible_duals)."""
        feasible = _feasible_duals(cr, v, floor)
        if feasible is None:
            return None
        fu, fv = feasible
        gap = float_sum_up(assigned_costs, -fu, -fv)  # >= cost - D exactly
        if not gap < math.inf:
            return None  # the sum overflowed: nothing is proven by this dual
        tol = strict_tol
        scale = magnitude + float_sum(np.abs(fu)) + float_sum(np.abs(fv)) if trusted or gap > 0 else 0.0
        if trusted:
            tol = allowance(rounding_tolerance(pairs, scale))
        bounds.append((gap, tol, fu, fv))
        if refuted_exactly:
            return None  # an exactly negative cycle: no allowance forgives it
        exact = integral and gap < 1.0  # every assignment costs an integer: no gap at all
        room = gap > 0 and not exact and _room_for_another(cr, fu, fv, rows, gap)
        if gap <= tol and room:
            # the allowance covers the solvers' rounding, and could forgive a real difference with it
            # (a near tie, or 17 beside a cost of 1e18): another assignment may be within the gap,
            # so it is settled in exact integers
            less = exact_saving(fu, fv, gap)
            if less is None:  # too large to settle exactly here: not proven
                if TIE_NOTE not in notes:
                    notes.append(TIE_NOTE)
                return None
            if less > 0:
                return None  # the allowance would forgive a real difference: an exactly cheaper assignment
        if gap <= tol:
            note = f"{how}: cost - dual = {gap:.3g} <= tol {tol:.3g}"
        elif exact:
            note = f"{how}: integer costs and dual gap {gap:.3g} < 1, so gap 0"
            reason += "; with integer costs a dual gap below 1 is no gap"
            gap = 0.0
        elif not room:
            note = (f"{how}: cost - dual = {gap:.3g}, and no other assignment is within it of the dual's "
                    "objective, so this is the only optimum")
            gap = 0.0
        else:
            return None
        return Certificate(kind, True, True, max(gap, 0.0), tol, "; ".join(notes + [note]),
                           {"value": primal, "u": fu, "v": fv, "dual_objective": float_sum(fu, fv)}, claimed,
                           reason)

    exact_check = []  # how much less an exactly cheaper assignment costs, where one was found
    refuted_exactly = False  # set when the residual graph has an exactly negative cycle

    def exact_saving(fu, fv, gap) -> float | None:
        """How much less than this answer some assignment costs, settled in exact integers on the
        pairs within ``gap`` of tight (solvers.exact_settle; 0.0: nothing cheaper), or None past
        REFERENCE_CELLS entries held or the settle's own limits."""
        if cr.size > REFERENCE_CELLS:  # entries held (a sparse problem's stored pairs)
            return None
        pairs = candidate_pairs(*cr.args(), fu, fv, rows, gap)
        less = cheaper_by(*pairs, n, m, rows, fu, fv, gap)
        if less is not None and less > 0:
            exact_check.append(less)
        return less

    solver_note = ""
    if solver_duals is not None:
        u, v, why = solver_duals
        if u is None:
            notes.append(f"solver duals rejected: {why}")
            solver_note = "the solver's own duals were unusable"
        else:
            floor, violation = _scan_solver_duals(cr, u, v, launched, notes)
            slack_ok, why = _check_duals(cr, u, v, rows, mates, pair_cost, primal, strict_tol, violation)
            if not slack_ok:
                notes.append(f"solver duals break complementary slackness: {why}")
            how = "solver duals verified" if slack_ok else "solver duals made feasible"
            reason = ("the solver's dual potentials prove it" if slack_ok else
                      "the solver's dual potentials, made exactly feasible, prove it")
            cert = attempt(v, how, reason, trusted=False, floor=floor)
            if cert is not None:
                return cert
            notes.append("solver duals rejected: they do not prove optimality")
            solver_note = ("the solver's own prices were only epsilon-optimal" if epsilon > 0 else
                           "the solver's own duals did not prove it")

    reason = "dual potentials derived independently by shortest paths prove it"
    if solver_note:
        reason += f"; {solver_note}"
    if cr.dense:  # the quick sweeps first; SPFA below when they do not settle or do not prove it
        start = cheapest_arc_columns(problem.costs, rows, SPFA_RELATIVE)
        if start is not None:
            cert = attempt(start, "potentials derived by shortest paths (sweeps over each row's cheapest pairs)",
                           reason, trusted=True)
            if cert is not None:
                return cert
        swept = dense_columns(problem.costs, rows, SPFA_RELATIVE, start)
        if swept is not None:
            cert = attempt(swept, "potentials derived by shortest paths (sweeps)", reason, trusted=True)
            if cert is not None:
                return cert
            notes.append("swept potentials leave a gap")
    columns, cycle = _derived_columns(cr, rows, mates, pair_cost)
    cheaper = cycle is not None
    refuted_exactly = cheaper  # the cycle's cost is exactly negative: this assignment is not optimal
    if columns is not None and not cheaper:
        cert = attempt(columns, "potentials derived by shortest paths", reason, trusted=True)
        if cert is not None:
            return cert
        notes.append("derived potentials leave a gap")
    elif cheaper:
        notes.append(f"the residual graph has a negative cycle of {len(cycle)} arcs: a cheaper assignment "
                     "exists")
        attempt(np.where(np.isfinite(columns), columns, 0.0), "", "", trusted=True)  # only for the bound
    else:
        notes.append("float round-off defeated the shortest-path search for potentials")
    if n * m <= REFERENCE_CELLS:  # (after a negative cycle: the true gap, measured against it)
        reference = _reference_columns(problem, cr)
        if reference is not None:
            reason = "the potentials of an independently computed optimal assignment prove it"
            cert = attempt(reference, "potentials of an independent optimal assignment", reason, trusted=True)
            if cert is not None:
                return cert
            notes.append("gap measured against an independent optimal assignment")
    witness = {"value": primal}
    gap, tol = math.inf, strict_tol
    if bounds:
        gap, tol, u, v = min(bounds, key=lambda b: b[0])
        gap = max(gap, 0.0)
        witness.update(u=u, v=v, dual_objective=float_sum(u, v))
    within = claimed > 0 and gap <= claimed + tol
    if claimed > 0:
        notes.append(f"proven gap {gap:.6g} is within the claimed {claimed:g}" if within
                     else f"proven gap {gap:.6g} exceeds the claimed {claimed:g}")
    refuted = max(exact_check) if exact_check else None
    if refuted is not None:
        notes.append(f"an assignment found in exact arithmetic costs {refuted:.6g} less (the optimum may be lower)")
        witness["cheaper_by"] = refuted
    if within:
        reason = "dual potentials prove the gap"
    elif cheaper or refuted is not None:
        reason = "a cheaper assignment exists"
    else:
        reason = "no dual potentials found close the gap"
    return Certificate(kind, True, False, gap, tol, "; ".join(notes), witness, claimed, reason)
