"""The problem model: immutable, validated inputs shared by every solver, format and view.

Every class validates on construction and freezes its arrays (``writeable=False``), so a solver can
never mutate the problem it was given. Index arrays are int32 where the sizes fit, else int64.
Constructors accept numpy arrays or scipy.sparse matrices; ``source`` names where the data came
from, so validation errors can name it.
"""
from __future__ import annotations

import functools
import math
import mmap
import sys
import threading
from dataclasses import dataclass, field
from typing import ClassVar, Sequence

import numpy as np

from .errors import MASKED_COSTS, MASKED_EDGES, MASKED_POINTS, InputError, unmasked_array
from .exact import INT64_MAX, int_sum
from .io_util import check_allocation
from .text import plural


def _sparse():
    """scipy.sparse, imported where a sparse matrix is built (not at startup: it takes a quarter second)."""
    import scipy.sparse
    return scipy.sparse


def _is_sparse(obj) -> bool:
    """Whether obj is a scipy.sparse matrix; without scipy.sparse imported, nothing can be one."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(obj)

INT32_MAX = np.iinfo(np.int32).max
EXACT_INTEGER = 2 ** 53  # integers up to this magnitude are exact in float64
FLOAT_MAX = float(np.finfo(np.float64).max)
BYTES_PER_VERTEX = 32  # the least that solving needs per declared vertex, row or column (pointers, labels)


def index_dtype(*sizes: int) -> np.dtype:
    """int32 when every size fits, else int64."""
    return np.dtype(np.int32) if max(sizes, default=0) < INT32_MAX else np.dtype(np.int64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _check_size(value, name: str, source: str | None) -> int:
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an integer, got {value!r}", source) from None
    if size < 0:
        raise InputError(f"{name} must be >= 0, got {size}", source)
    return size


def _as_int64(values, name: str, source: str | None) -> np.ndarray:
    """One-dimensional int64 copy of integer values (any integer dtype, integral floats, Python
    ints), refusing what int64 cannot hold instead of letting the cast wrap it."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise InputError(f"{name} must be one-dimensional", source)
    if not a.size:
        return a.astype(np.int64)
    if a.dtype == object:  # Python ints too large for any numpy integer type, or mixed objects
        for k, x in enumerate(a.tolist()):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                if not (isinstance(x, float) and math.isfinite(x) and x.is_integer()):
                    raise InputError(f"{name} must hold integers", source)
            if abs(int(x)) > INT64_MAX:
                raise InputError(f"{name}[{k}] = {int(x)} does not fit in a 64-bit integer", source)
        return np.array([int(x) for x in a.tolist()], dtype=np.int64)
    if a.dtype.kind == "b":
        return a.astype(np.int64)
    if a.dtype.kind == "u":
        if int(a.max()) > INT64_MAX:
            k = int(np.argmax(a))
            raise InputError(f"{name}[{k}] = {int(a[k])} does not fit in a 64-bit integer", source)
        return a.astype(np.int64)
    if a.dtype.kind == "i":
        return a.astype(np.int64, copy=False)
    if a.dtype.kind != "f" or not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
        raise InputError(f"{name} must hold integers", source)
    big = np.flatnonzero(np.abs(a) >= 2.0 ** 63)  # the float 2^63 itself is past int64
    if big.size:
        k = int(big[0])
        raise InputError(f"{name}[{k}] = {int(a[k])} does not fit in a 64-bit integer", source)
    return a.astype(np.int64)


def _as_index_array(values, name: str, bound: int | None, source: str | None, keep_signed: bool = False) -> np.ndarray:
    """Validated indices: int64, or with ``keep_signed`` an int32 or int64 array as it is (a
    caller that never multiplies them; converting 32M int32 coordinates took 0.6 s)."""
    a = np.asarray(values)
    if not (keep_signed and a.ndim == 1 and a.dtype in (np.int32, np.int64)):  # the types warmup compiles for
        a = _as_int64(values, name, source)
    limit = np.iinfo(np.int64).max if bound is None else bound
    if a.size and (a.min() < 0 or a.max() >= limit):
        bad = int(np.flatnonzero((a < 0) | (a >= limit))[0])
        where = "negative" if bound is None else f"outside [0, {bound})"
        raise InputError(f"{name}[{bad}] = {int(a[bad])} is {where}", source)
    return a


def _index_pairs(rows, cols, n_rows, n_cols, source, keep_signed: bool = False):
    """Validated (rows, cols) (int64, or see _as_index_array's ``keep_signed``) and the side sizes,
    inferred as max index + 1 where not given."""
    sides = []
    for values, name, size in ((rows, "rows", n_rows), (cols, "cols", n_cols)):
        if size is not None:
            size = _check_size(size, f"n_{name}", source)
        a = _as_index_array(values, name, size, source, keep_signed)
        sides.append((a, int(a.max()) + 1 if size is None and a.size else size or 0))
    (r, n_rows), (c, n_cols) = sides
    check_allocation((n_rows + n_cols) * BYTES_PER_VERTEX, f"a problem of {n_rows} x {n_cols}", source)
    return r, c, n_rows, n_cols


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting: numpy 2.4's np.unique takes a hash path that is ~100x slower on
    millions of int64 keys."""
    a = np.sort(a)
    if a.size:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a


def _csr_from_pairs(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int):
    """Sorted, de-duplicated CSR (ptr, ind) of the pairs, by rows."""
    idx = index_dtype(n_rows, n_cols, rows.size)
    key = rows.astype(np.int64) * max(n_cols, 1) + cols
    key = _sorted_unique(key)
    r = key // max(n_cols, 1)
    c = key - r * max(n_cols, 1)
    ptr = np.zeros(n_rows + 1, dtype=idx)
    np.cumsum(np.bincount(r, minlength=n_rows), out=ptr[1:])
    return ptr, c.astype(idx)


LARGE_GRAPH_EDGES = 1 << 20  # from here both CSRs come from scipy's linear-time conversions, not sorts


def _rows_csr_by_counting(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int):
    """(row_ptr, col_ind) of the de-duplicated pairs, each row's columns sorted, by a counting sort
    on all cores (solvers.graph_build): linear in the edges where the sorts of _csr_from_pairs took
    7 s on 32M edges, and scipy's one-thread conversions 1.5 s."""
    from . import graph_build
    return graph_build.compress(rows, cols, n_rows, index_dtype(n_rows, n_cols, rows.size))


def _columns_of(row_ptr: np.ndarray, col_ind: np.ndarray, n_rows: int, n_cols: int):
    """(col_ptr, row_ind) of a CSR whose rows are sorted and repeat-free: each column's rows
    increasing. A large graph's on all cores (graph_build.transpose); a small one's by numpy's
    stable sort, so a small run never loads the compiled loops."""
    if col_ind.size >= LARGE_GRAPH_EDGES:
        from . import graph_build
        return graph_build.transpose(row_ptr, col_ind, n_cols)
    rows = np.repeat(np.arange(n_rows, dtype=col_ind.dtype), np.diff(row_ptr))
    order = np.argsort(col_ind, kind="stable")
    col_ptr = np.zeros(n_cols + 1, dtype=row_ptr.dtype)
    np.cumsum(np.bincount(col_ind, minlength=n_cols), out=col_ptr[1:])
    return col_ptr, rows[order]


_COLUMNS_LOCK = threading.Lock()  # one transpose per graph, whichever thread asks first


def _one_line(name: str, body: str, source: str | None) -> str:
    """A Problem's repr (print(problem)): what it is, in words, never its arrays."""
    return f"{name}({body}" + (f", from {source}" if source else "") + ")"


@dataclass(frozen=True, eq=False)
class BipartiteGraph:
    """Unweighted bipartite graph: rows x cols, stored as CSR by rows, and by columns once asked.

    Duplicate edges are merged. ``row_ptr/col_ind`` list each row's columns (sorted);
    ``col_ptr/row_ind`` list each column's rows (sorted). The column lists are built on first use
    (on all cores for a large graph) and kept: a GPU solver builds its own on the device, so a
    graph solved there never pays for the host's transpose.
    """

    kind: ClassVar[str] = "matching"
    n_rows: int
    n_cols: int
    row_ptr: np.ndarray
    col_ind: np.ndarray
    source: str | None = None
    # (col_ptr, row_ind), frozen; None until first asked (or given by a constructor that had them)
    by_columns: tuple | None = field(default=None, repr=False)
    # the rows' lists' share of solvers.konig_device's checksum, when the validating pass summed it
    rows_checksum: int | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_edges(cls, rows, cols, n_rows: int | None = None, n_cols: int | None = None,
                   source: str | None = None) -> "BipartiteGraph":
        rows_a, cols_a = (unmasked_array(values, what, MASKED_EDGES, source)
                          for what, values in (("the row indices", rows), ("the column indices", cols)))
        if rows_a.shape != cols_a.shape:
            raise InputError("row and column index arrays differ in length", source)
        large = rows_a.size >= LARGE_GRAPH_EDGES  # counted on all cores, any signed index type
        r, c, n_rows, n_cols = _index_pairs(rows_a, cols_a, n_rows, n_cols, source, keep_signed=large)
        if large:
            row_ptr, col_ind = _rows_csr_by_counting(r, c, n_rows, n_cols)
        else:
            row_ptr, col_ind = _csr_from_pairs(r, c, n_rows, n_cols)
        return cls(n_rows, n_cols, _frozen(row_ptr), _frozen(col_ind), source)

    @classmethod
    def from_sparse(cls, matrix, source: str | None = None, copy: bool = True) -> "BipartiteGraph":
        """Every stored entry of ``matrix`` (even an explicit zero) is an edge row -> col.
        ``copy=False``: a large canonical csr / csc matrix's index arrays are held through read-only
        views where their type allows, not copied (as CostMatrix.from_array's copy=False: for a
        graph that lives only while its caller cannot change the matrix, e.g. inside solvers.solve)."""
        if not _is_sparse(matrix):
            matrix = np.asarray(matrix)
            if matrix.ndim != 2:
                raise InputError("a bipartite graph needs a 2-D matrix", source)
            rows, cols = np.nonzero(matrix)
            return cls.from_edges(rows, cols, matrix.shape[0], matrix.shape[1], source)
        if getattr(matrix, "format", None) in ("csr", "csc") and matrix.nnz >= LARGE_GRAPH_EDGES:
            return cls._from_compressed(matrix, source, copy)
        coo = _sparse().coo_matrix(matrix)
        return cls.from_edges(coo.row, coo.col, coo.shape[0], coo.shape[1], source)

    @classmethod
    def _from_compressed(cls, matrix, source: str | None, copy: bool = True) -> "BipartiteGraph":
        """A large csr or csc matrix's own structure as one of the CSRs (copied unless ``copy`` is
        False: the graph must not change with the caller's matrix; sorted and merged on all cores
        when it is not canonical). A csc's row lists are its transpose, on all cores; a csr's column
        lists wait until asked. No pass through coordinates (on 32M edges that rebuild took 1.2 s
        of a 0.24 s GPU solve)."""
        from . import graph_build
        by_rows = matrix.format == "csr"
        n_rows, n_cols = (int(x) for x in matrix.shape)
        check_allocation((n_rows + n_cols) * BYTES_PER_VERTEX, f"a problem of {n_rows} x {n_cols}", source)
        lines, width = (n_rows, n_cols) if by_rows else (n_cols, n_rows)
        ptr, ind = np.asarray(matrix.indptr), np.asarray(matrix.indices)
        if ptr.shape == (lines + 1,) and ind.ndim == 1 and 0 <= ptr[-1] <= ind.size:
            ind = ind[:int(ptr[-1])]  # scipy allows spare room after the last entry
        if ind.ndim == 1 and ind.dtype.kind in "iu" and not ind.dtype.isnative:  # the compiled pass reads native order
            ind = ind.astype(ind.dtype.newbyteorder("="))
        # the validating passes also sum the graph's share of the checksum a GPU certificate compares
        least, greatest, indices_sum = (graph_build.bounds_and_checksum(ind, 0) if ind.ndim == 1 and ind.size
                                        else (0, 0, 0))
        ascending, offsets_sum = graph_build.offsets_checked(ptr, ind.size)
        if (ind.ndim != 1 or ptr.shape != (lines + 1,) or ptr[0] != 0 or ptr[-1] != ind.size
                or not ascending or least < 0 or greatest >= width):
            raise InputError(f"the sparse matrix's index arrays are inconsistent with its shape {n_rows} x {n_cols}",
                             source)
        idx = index_dtype(n_rows, n_cols, ind.size)
        canonical = matrix.has_canonical_format  # each line sorted, no repeats (scipy checks it in one scan)
        if canonical:
            ptr, ind = ptr.astype(idx, copy=copy).view(), ind.astype(idx, copy=copy).view()  # views: frozen
            # below without touching the caller's own flags
        else:
            owners = np.repeat(np.arange(lines, dtype=idx), np.diff(ptr))
            ptr, ind = graph_build.compress(owners, ind, lines, idx)
        if by_rows:
            graph = cls(n_rows, n_cols, _frozen(ptr), _frozen(ind), source)
            if canonical and offsets_sum is not None:  # the summed arrays are the graph's
                object.__setattr__(graph, "rows_checksum", (indices_sum + offsets_sum) % (1 << 64))
            return graph
        row_ptr, col_ind = graph_build.transpose(ptr, ind, width)
        return cls(n_rows, n_cols, _frozen(row_ptr), _frozen(col_ind), source, (_frozen(ptr), _frozen(ind)))

    def __post_init__(self):
        if self.row_ptr.shape != (self.n_rows + 1,):
            raise InputError("CSR pointer arrays have the wrong length", self.source)
        if self.by_columns is not None:
            col_ptr, row_ind = self.by_columns
            if col_ptr.shape != (self.n_cols + 1,):
                raise InputError("CSR pointer arrays have the wrong length", self.source)
            if row_ind.shape != self.col_ind.shape:
                raise InputError("row-wise and column-wise CSR differ in edge count", self.source)

    def _columns(self) -> tuple:
        if self.by_columns is None:
            with _COLUMNS_LOCK:
                if self.by_columns is None:
                    col_ptr, row_ind = _columns_of(self.row_ptr, self.col_ind, self.n_rows, self.n_cols)
                    object.__setattr__(self, "by_columns", (_frozen(col_ptr), _frozen(row_ind)))
        return self.by_columns

    @property
    def col_ptr(self) -> np.ndarray:
        return self._columns()[0]

    @property
    def row_ind(self) -> np.ndarray:
        return self._columns()[1]

    @property
    def n_edges(self) -> int:
        return int(self.col_ind.size)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_rows, self.n_cols)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of every edge, in row-major order."""
        rows = np.repeat(np.arange(self.n_rows, dtype=self.col_ind.dtype), np.diff(self.row_ptr))
        return rows, self.col_ind

    def to_sparse(self) -> "scipy.sparse.csr_matrix":
        data = np.ones(self.n_edges, dtype=np.int8)
        return _sparse().csr_matrix((data, self.col_ind, self.row_ptr), shape=self.shape)

    def row_degrees(self) -> np.ndarray:
        return np.diff(self.row_ptr)

    def col_degrees(self) -> np.ndarray:
        """Without building the column lists when they are not there yet."""
        if self.by_columns is not None:
            return np.diff(self.by_columns[0])
        return np.bincount(self.col_ind, minlength=self.n_cols).astype(self.row_ptr.dtype)

    def __repr__(self) -> str:
        return _one_line("BipartiteGraph", f"{self.n_rows:,} x {self.n_cols:,} vertices, "
                                           f"{plural(self.n_edges, 'edge')}", self.source)

    def describe(self) -> dict:
        return {"kind": self.kind, "rows": self.n_rows, "cols": self.n_cols, "edges": self.n_edges}


@dataclass(frozen=True, eq=False)
class FlowNetwork:
    """Directed network with non-negative integer capacities, a source and a sink.

    Edges are kept in input order (parallel edges allowed; self-loops are dropped since they can
    carry no s-t flow). A flow is an array aligned with the edges. Residual layouts (the WBPR
    paper's RCSR and BCSR) are built from this by solvers.flow.residual.
    """

    kind: ClassVar[str] = "flow"
    n_vertices: int
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray
    source_vertex: int
    sink_vertex: int
    source: str | None = None

    @classmethod
    def from_edges(cls, n_vertices: int, tail, head, capacity, source_vertex: int, sink_vertex: int,
                   source: str | None = None) -> "FlowNetwork":
        n = _check_size(n_vertices, "n_vertices", source)
        check_allocation(n * BYTES_PER_VERTEX, f"a flow network of {n} vertices", source)
        t = _as_index_array(tail, "tail", n, source)
        h = _as_index_array(head, "head", n, source)
        if np.ndim(capacity) != 1 or np.shape(capacity) != t.shape or h.shape != t.shape:
            raise InputError("tail, head and capacity differ in length", source)
        try:
            cap = _as_int64(capacity, "capacity", source)
        except InputError as exc:
            if "must hold integers" in exc.message:
                raise InputError("capacities must be finite integers", source) from None
            raise InputError(f"{exc.message}: capacities must be at most 2^63 - 1 = {INT64_MAX}",
                             source) from None
        if cap.size and cap.min() < 0:
            k = int(np.argmin(cap))
            raise InputError(f"capacity[{k}] = {int(cap[k])} is negative", source)
        s = _check_size(source_vertex, "source", source)
        k = _check_size(sink_vertex, "sink", source)
        if s >= n or k >= n:
            raise InputError(f"source {s} / sink {k} outside the {n} vertices", source)
        if s == k:
            raise InputError("source and sink are the same vertex", source)
        keep = t != h
        idx = index_dtype(n, t.size)
        return cls(n, _frozen(t[keep].astype(idx)), _frozen(h[keep].astype(idx)),
                   _frozen(cap[keep]), s, k, source)

    @property
    def n_edges(self) -> int:
        return int(self.tail.size)

    def __repr__(self) -> str:
        return _one_line("FlowNetwork", f"{plural(self.n_vertices, 'vertex', 'vertices')}, "
                                        f"{plural(self.n_edges, 'edge')}, source {self.source_vertex}, "
                                        f"sink {self.sink_vertex}", self.source)

    def describe(self) -> dict:
        return {"kind": self.kind, "vertices": self.n_vertices, "edges": self.n_edges,
                "source": self.source_vertex, "sink": self.sink_vertex,
                "total_capacity": int_sum(self.capacity)}  # exact: an int64 sum would wrap past 2^63

    def zero_flow_reason(self) -> str:
        """Why a maximum flow of this network is 0, in words (ask when a solve found 0): the source
        has no edge out of it, the sink none into it (a generated sample's corner can be a vertex
        left without edges), or no path leads from one to the other."""
        carrying = self.capacity > 0
        if not np.any(carrying & (self.tail == self.source_vertex)):
            return f"the source, vertex {self.source_vertex}, has no edge out of it"
        if not np.any(carrying & (self.head == self.sink_vertex)):
            return f"the sink, vertex {self.sink_vertex}, has no edge into it"
        return "no path leads from the source to the sink"

    def to_sparse(self) -> "scipy.sparse.csr_matrix":
        """Capacity matrix with parallel edges summed (what scipy.sparse.csgraph.maximum_flow takes).
        InputError when parallel edges sum past 2^63 - 1 (an int64 sum would wrap)."""
        cap = self.capacity
        if cap.size and int(cap.max()) > INT64_MAX // cap.size:
            key = self.tail.astype(np.int64) * self.n_vertices + self.head
            order = np.argsort(key, kind="stable")
            starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
            high = np.add.reduceat(cap[order] >> 32, starts)
            low = np.add.reduceat(cap[order] & 0xFFFFFFFF, starts)
            if np.any(high + (low >> 32) > INT64_MAX >> 32):
                raise InputError("parallel edges sum past 2^63 - 1: their capacity matrix cannot hold them",
                                 self.source)
        m = _sparse().csr_matrix((cap, (self.tail, self.head)), shape=(self.n_vertices, self.n_vertices))
        m.sum_duplicates()
        return m


def cost_limit(n_rows: int, n_cols: int) -> float:
    """The largest |cost| a problem of this shape takes: potentials, reduced costs and the sums of
    solvers and certificates then stay inside the float64 range (they reach a few times
    (rows + cols) * max|c|)."""
    return FLOAT_MAX / (16.0 * max(n_rows + n_cols, 1))


def _validate_costs(values: np.ndarray, source: str | None, shape: tuple[int, int],
                    forbid: str = "use inf to forbid a pair") -> np.ndarray:
    """float64 costs, refusing NaN, -inf, integers that float64 cannot hold exactly and magnitudes
    whose sums could overflow (``forbid``: how a forbidden pair is written, said beside NaN)."""
    if values.size and not (np.issubdtype(values.dtype, np.number) and not np.iscomplexobj(values)):
        raise InputError(f"costs must be real numbers, got {_dtype_words(values.dtype)}", source)
    if values.size and values.dtype.kind in "iu":
        too_big = (values > EXACT_INTEGER) if values.dtype.kind == "u" else \
            (values > EXACT_INTEGER) | (values < -EXACT_INTEGER)
        if too_big.any():
            bad = np.argwhere(too_big)[0]
            raise InputError(f"integer cost {int(values[tuple(bad)])} at {_entry_words(bad)} cannot be represented "
                             f"exactly: integer costs must stay within +-2^53 ({EXACT_INTEGER})", source)
    values = values.astype(np.float64, copy=False)
    if np.isnan(values).any():
        raise InputError(f"the cost at {_entry_words(np.argwhere(np.isnan(values))[0])} is NaN "
                         f"({forbid})", source)
    if np.isneginf(values).any():
        raise InputError(f"the cost at {_entry_words(np.argwhere(np.isneginf(values))[0])} is -inf "
                         f"({forbid})", source)
    if values.size:
        finite = np.abs(values[np.isfinite(values)])
        biggest = float(finite.max()) if finite.size else 0.0
        limit = cost_limit(*shape)
        if biggest > limit:
            rows, cols = shape
            raise InputError(f"costs up to {biggest:.3g} can overflow float64 sums in a {rows} x {cols} problem: "
                             f"keep |cost| at or below {limit:.3g}", source)
    return values


LARGE_MATRIX_ENTRIES = 1 << 18  # from here a dense matrix is checked by one compiled pass (solvers.cost_summary)
HELD_INTEGERS = (np.dtype(np.int64), np.dtype(np.int32))  # integer costs a Problem may hold as given


def _real_dtype(dtype: np.dtype) -> bool:
    """Real numbers the compiled pass reads: any integer width, float32 and float64."""
    return dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize in (4, 8))


def _validate_large(values: np.ndarray, source: str | None, copy: bool):
    """(float64 C-ordered costs, their summary) of a large real matrix in one compiled pass over the
    cores that checks, summarises and (where needed) converts it; the rare refused matrix goes
    through _validate_costs, which names the bad entry in the words of the numpy checks."""
    from .cost_summary import scan_costs
    convert = copy or not (values.dtype == np.float64 or values.dtype in HELD_INTEGERS) or \
        not values.flags.c_contiguous
    out = np.empty(values.shape, dtype=np.float64) if convert else None
    summary, extremes = scan_costs(values, out)
    _refuse_unless_valid(values, source, summary, extremes)
    return (out if convert else values), summary


def _entry_words(index) -> str:
    """An array entry's place in words, counted from 0 as numpy counts (a text file's messages
    count its lines and columns from 1, as editors do, and say "line")."""
    index = [int(i) for i in index]
    if len(index) == 2:
        return f"row {index[0]}, column {index[1]} (0-based)"
    return f"position {', '.join(map(str, index))} (0-based)"


def _refuse_unless_valid(values: np.ndarray, source: str | None, summary, extremes) -> None:
    """Raise, naming the entry in the words of the numpy checks, when a compiled pass's summary
    (cost_summary.scan_costs, or HeldScan during an upload) shows a cost the problem cannot take."""
    if extremes is not None and (extremes[1] > EXACT_INTEGER or extremes[0] < -EXACT_INTEGER):
        _validate_costs(values, source, values.shape)  # raises, naming the first integer beyond 2^53
    if summary is None:
        _validate_costs(values, source, values.shape)  # raises, naming the NaN or -inf
        raise AssertionError("the compiled scan and the numpy checks disagree")  # never reached
    low, high, forbidden = summary[:3]
    biggest = max(abs(low), abs(high)) if forbidden < values.size else 0.0
    if biggest > cost_limit(*values.shape):
        _validate_costs(values, source, values.shape)  # raises, with the limit in words


def _frozen_view(a: np.ndarray) -> np.ndarray:
    """A read-only C-ordered view of ``a`` (a copy only if it is not C-ordered): the caller's own
    array keeps its flags."""
    view = np.ascontiguousarray(a).view()
    view.setflags(write=False)
    return view


def writeable_alias(a: np.ndarray) -> np.ndarray:
    """``a`` flagged writeable when its memory is (else ``a`` itself), for a library call that asks
    for a writeable array but only reads it: scipy's linear_sum_assignment copies a read-only
    matrix whole before solving (n^2 floats, 4 ms at n = 1500). Never for code that writes."""
    alias = a.view()
    try:
        alias.setflags(write=True)
    except ValueError:  # read-only memory (a file mapped read-only): the library copies, as before
        return a
    return alias


def _dtype_words(dtype: np.dtype) -> str:
    from .text import dtype_words
    return dtype_words(dtype)


@dataclass(frozen=True, eq=False)
class CostMatrix:
    """Dense assignment costs, rows (persons) x cols (objects); rectangular allowed.

    A forbidden pair has cost +inf. Minimisation: an assignment matches min(rows, cols) pairs.

    ``values`` is what the Problem holds, C-ordered and read-only: float64 costs, or the caller's
    int64 / int32 costs held as given (a large matrix passed with ``copy=False``: a GPU solve then
    uploads the integers and no float64 copy is made on the host). ``costs`` is always float64: the
    values themselves, or their float64 copy, made on first read.

    Immutability, and what it costs: by default
    ``from_array`` keeps a private copy, so nothing the caller later does to its array reaches the
    Problem. Copying a large matrix is a pass over it, so ``from_array(..., copy=False)`` holds a
    read-only view of a C-ordered float64, int64 or int32 array instead: the Problem can then see the caller's
    later writes (the caller's own array stays writable; numpy cannot lock it), so that is only
    for a Problem that lives while its caller cannot write (``solvers.solve`` builds its Problem
    this way and drops it before returning) or for an array nobody else holds (a file just read
    or mapped read-only). The summary (min, max, forbidden count, integrality, checksum) is made
    once and kept; a Problem over a view must not outlive a change to the array.
    """

    kind: ClassVar[str] = "assignment"
    values: np.ndarray  # as held: float64 costs, or (see from_array) the caller's integers
    source: str | None = None

    @functools.cached_property
    def costs(self) -> np.ndarray:
        """The costs as float64 (C-ordered, read-only). For integers held as given, made on first
        read: a GPU solve uploads the integers and a certificate that settles on the GPU's copy
        reads a few rows, so the n^2 float64 copy is often never made (issue 13)."""
        if self.values.dtype == np.float64:
            return self.values
        from .cost_summary import as_float64  # every core: the matrix may be large
        return _frozen(as_float64(self.values))

    @classmethod
    def from_array(cls, costs, forbidden=None, source: str | None = None, copy: bool = True,
                   check_now: bool = True) -> "CostMatrix":
        """Validated costs. ``copy=True`` (the default) keeps a private copy, so the Problem stays
        as it was whatever later happens to ``costs``. ``copy=False`` reads a C-ordered float64
        array in place through a read-only view, and a large C-ordered int64 or int32 one too (others
        are converted, which copies anyway): for
        a Problem that lives only while its caller cannot touch the array, e.g. inside
        ``solvers.solve``, or for an array nobody else holds (a file just read).

        ``check_now=False`` (with ``copy=False``; ``solvers.solve`` only): a large held integer
        matrix is checked later, by ``check()`` or by a GPU solver's upload, which checks the
        integers in the pass that converts them (``check_pending``) so that they are read once.
        Nothing reads such a Problem's costs before one of the two."""
        if _is_sparse(costs):
            raise InputError("CostMatrix needs a dense array; use SparseCosts for sparse input", source)
        a = unmasked_array(costs, "the cost matrix", MASKED_COSTS, source)
        if a.ndim != 2:
            raise InputError(f"a cost matrix must be 2-D, got shape {a.shape}", source)
        copy = copy or forbidden is not None
        if not a.dtype.isnative:  # the compiled pass reads native byte order only (a >f8 .npy file)
            a, copy = a.astype(a.dtype.newbyteorder("=")), False
        held = not copy and a.dtype in HELD_INTEGERS and a.flags.c_contiguous  # (a mask sets copy)
        if held and not check_now and a.size >= LARGE_MATRIX_ENTRIES:
            return cls(_frozen_view(a), source)  # check_pending: its check comes with its upload
        if a.size >= LARGE_MATRIX_ENTRIES and _real_dtype(a.dtype):
            a, summary = _validate_large(a, source, copy)
        else:
            a = _validate_costs(np.array(a, copy=True) if copy else a, source, a.shape)
            summary = None
        if forbidden is not None:
            mask = unmasked_array(forbidden, "the forbidden mask", "fill it with True or False first", source,
                                  dtype=bool)
            if mask.shape != a.shape:
                raise InputError("forbidden mask shape differs from the cost matrix", source)
            a[mask] = np.inf
            summary = None
        matrix = cls(_frozen_view(a), source)
        if summary is not None:  # the validating pass summarised it already: describe() is free
            matrix.__dict__["_summary"] = summary
        return matrix

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    @property
    def n_rows(self) -> int:
        return self.values.shape[0]

    @property
    def n_cols(self) -> int:
        return self.values.shape[1]

    @property
    def allowed(self) -> np.ndarray:
        return np.isfinite(self.values)  # integers: all allowed, no float64 copy made

    @property
    def is_integer(self) -> bool:
        return self._summary[3]

    @property
    def checksum(self) -> int:
        """A position-weighted wrapping sum of the costs' float64 bit patterns (solvers.dual_steps):
        how a certificate tells that a copy elsewhere, a GPU's, still holds these costs."""
        return self._summary[4]

    @property
    def check_pending(self) -> bool:
        """Held integers not checked yet (``from_array(..., check_now=False)``)."""
        return "_summary" not in self.__dict__ and self.values.dtype in HELD_INTEGERS

    def check(self) -> None:
        """Check held integers now if they are not yet (InputError names a cost the problem cannot
        take); nothing to do otherwise."""
        if self.check_pending:
            self._summary  # noqa: B018 (made, and kept, by reading it)

    def accept_scan(self, summary, extremes) -> None:
        """The check of held integers, made by the pass that uploaded them (cost_summary.HeldScan):
        raises as ``check()`` would, else keeps the summary."""
        _refuse_unless_valid(self.values, self.source, summary, extremes)
        self.__dict__["_summary"] = summary

    @functools.cached_property
    def _summary(self) -> tuple:
        """(min, max, forbidden count, all integer) of the finite costs, and their checksum: one
        pass, made once (the problem is immutable), by the validating pass of a large matrix or
        on first use, and shared by describe(), is_integer and the certificate. Held integers
        are checked here too when they were not yet (InputError)."""
        if self.values.dtype != np.float64 and self.values.size:  # held integers: read as they are
            from .cost_summary import scan_costs
            summary, extremes = scan_costs(self.values, None)
            _refuse_unless_valid(self.values, self.source, summary, extremes)
            return summary
        from .cost_summary import finite_summary  # numba loads only when a matrix is described
        low, high, forbidden, integer, checksum = finite_summary(self.costs.reshape(-1))
        return float(low), float(high), int(forbidden), bool(integer), int(checksum)

    def __getstate__(self) -> dict:
        """Pickled (a Dask task) without the float64 copy of held integers: it is made again if needed."""
        state = dict(self.__dict__)
        if self.values.dtype != np.float64:
            state.pop("costs", None)
        return state

    def in_memory(self) -> "CostMatrix":
        """This problem, or its copy in memory when its costs are a mapped file (a large .npy): a
        program that keeps the problem while the file may be rewritten (the explorer) must not
        read it through the mapping, which ends the process when the file shrinks under it."""
        base = self.values
        while base is not None and not isinstance(base, (np.memmap, mmap.mmap)):
            base = getattr(base, "base", None)
        if base is None:
            return self
        return CostMatrix.from_array(np.array(self.values), source=self.source, copy=False)

    def __repr__(self) -> str:  # shape and type only: the summary would be a pass over the costs
        return _one_line("CostMatrix", f"{self.n_rows:,} x {self.n_cols:,} costs, {self.values.dtype}", self.source)

    def describe(self) -> dict:
        low, high, forbidden, integer, _ = self._summary
        some = forbidden < self.values.size
        return {"kind": self.kind, "rows": self.n_rows, "cols": self.n_cols, "forbidden": forbidden,
                "min_cost": low if some else None, "max_cost": high if some else None, "integer": integer}


@dataclass(frozen=True, eq=False)
class SparseCosts:
    """Weighted bipartite graph for assignment: only stored pairs are allowed (CSR by rows)."""

    kind: ClassVar[str] = "assignment"
    n_rows: int
    n_cols: int
    row_ptr: np.ndarray
    col_ind: np.ndarray
    cost: np.ndarray
    source: str | None = None

    @classmethod
    def from_edges(cls, rows, cols, costs, n_rows: int | None = None, n_cols: int | None = None,
                   source: str | None = None) -> "SparseCosts":
        rows_a, cols_a, w = (unmasked_array(values, what, MASKED_EDGES, source) for what, values in
                             (("the row indices", rows), ("the column indices", cols), ("the costs", costs)))
        if not (rows_a.shape == cols_a.shape == w.shape):
            raise InputError("rows, cols and costs differ in length", source)
        r, c, n_rows, n_cols = _index_pairs(rows_a, cols_a, n_rows, n_cols, source)
        w = _validate_costs(w, source, (n_rows, n_cols), "leave a forbidden pair out")
        if np.isinf(w).any():
            raise InputError("sparse costs must be finite (leave forbidden pairs out)", source)
        key = r * max(n_cols, 1) + c
        order = np.argsort(key, kind="stable")
        key, w = key[order], w[order]
        if key.size and np.any(key[1:] == key[:-1]):
            dup = int(order[1:][key[1:] == key[:-1]][0])
            raise InputError(f"pair ({int(r[dup])}, {int(c[dup])}) is given twice", source)
        idx = index_dtype(n_rows, n_cols, key.size)
        ptr = np.zeros(n_rows + 1, dtype=idx)
        np.cumsum(np.bincount(r, minlength=n_rows), out=ptr[1:])
        return cls(n_rows, n_cols, _frozen(ptr), _frozen((key % max(n_cols, 1)).astype(idx)),
                   _frozen(w), source)

    @classmethod
    def from_sparse(cls, matrix, source: str | None = None) -> "SparseCosts":
        coo = _sparse().coo_matrix(matrix)
        return cls.from_edges(coo.row, coo.col, coo.data, coo.shape[0], coo.shape[1], source)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_rows, self.n_cols)

    @property
    def n_edges(self) -> int:
        return int(self.col_ind.size)

    @property
    def is_integer(self) -> bool:
        return bool(np.all(self.cost == np.round(self.cost)))

    def to_sparse(self) -> "scipy.sparse.csr_matrix":
        return _sparse().csr_matrix((self.cost, self.col_ind, self.row_ptr), shape=self.shape)

    def to_dense(self) -> CostMatrix:
        """The costs as a dense matrix (+inf where no pair is stored), refused in one line past
        DENSE_DISTANCES entries: a dense solver would hold them all."""
        n, m = self.shape
        if n * m > DENSE_DISTANCES:
            raise InputError(f"{n:,} x {m:,} sparse costs make {n * m:,} entries as a dense matrix, too many to "
                             "hold for a dense solver: use sparse-sap, lapjvsp or the auction, which take sparse costs",
                             self.source)
        dense = np.full(self.shape, np.inf)
        rows = np.repeat(np.arange(self.n_rows), np.diff(self.row_ptr))
        dense[rows, self.col_ind] = self.cost
        return CostMatrix(_frozen(dense), self.source)

    def __repr__(self) -> str:
        return _one_line("SparseCosts", f"{self.n_rows:,} x {self.n_cols:,}, "
                                        f"{plural(self.n_edges, 'allowed pair')}", self.source)

    def describe(self) -> dict:
        return {"kind": self.kind, "rows": self.n_rows, "cols": self.n_cols, "edges": self.n_edges,
                "min_cost": float(self.cost.min()) if self.cost.size else None,
                "max_cost": float(self.cost.max()) if self.cost.size else None,
                "integer": self.is_integer}


MAX_COORDINATE = 1e150  # squared differences of larger coordinates overflow float64
# points spread less than this: their squared differences underflow float64 (to 0 below ~1e-162), and the
# distances lost that way can pass the certificate's allowance, which scales with the points' magnitude
MIN_SPAN = 1e-130


def underflowing_span(*point_sets: np.ndarray) -> float | None:
    """The points' largest extent along one coordinate, when it is positive but below MIN_SPAN (their
    distances would underflow); None when they are fine (or all the same point)."""
    sets = [p for p in point_sets if p.size]
    if not sets:
        return None
    low = np.min([p.min(axis=0) for p in sets], axis=0)
    high = np.max([p.max(axis=0) for p in sets], axis=0)
    span = float((high - low).max())
    return span if 0.0 < span < MIN_SPAN else None
DENSE_DISTANCES = 1 << 27  # distances a dense solver may have materialised (1 GiB of float64)


def point_distances(a: np.ndarray, b: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Euclidean distances of the pairs (a[rows[k]], b[cols[k]]), summed in coordinate order as
    scipy's cdist does, so a dense solve and a pairwise check see the same costs."""
    diff = a[rows] - b[cols]
    squared = diff[:, 0] * diff[:, 0]
    for axis in range(1, diff.shape[1]):
        squared += diff[:, axis] * diff[:, axis]
    return np.sqrt(squared)


def _points(values, name: str, source: str | None) -> np.ndarray:
    raw = unmasked_array(values, name, MASKED_POINTS, source)
    if raw.ndim != 2 or raw.shape[1] < 1 or (raw.size and raw.dtype.kind not in "biuf"):
        raise InputError(f"{name} must be an array of points, one per row (n x 3), not "
                         f"{'shape ' + str(raw.shape) if raw.ndim != 2 else 'of ' + _dtype_words(raw.dtype)}", source)
    a = np.ascontiguousarray(raw, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} holds a coordinate that is not a finite number", source)
    if a.size and float(np.abs(a).max()) > MAX_COORDINATE:
        raise InputError(f"{name} holds a coordinate beyond {MAX_COORDINATE:g} in size, where squared "
                         "distances overflow: rescale the points", source)
    return _frozen_view(a)  # the caller's own array stays writeable (it was made read-only in place)


@dataclass(frozen=True, eq=False)
class EuclideanCosts:
    """Assignment between two point sets, a (n x d) and b (m x d), d <= 3, with the Euclidean distance of
    a[i] and b[j] as the cost of pair (i, j). It holds the points, never the n x m distances: the
    "knn" algorithm and its certificate compute the distances they need; a dense algorithm gets
    them materialised (``to_dense``), up to DENSE_DISTANCES of them."""

    kind: ClassVar[str] = "assignment"
    a: np.ndarray
    b: np.ndarray
    source: str | None = None

    def __post_init__(self):
        """The points checked and held as read-only float64 views, whichever way the problem is
        made (``EuclideanCosts(a, b)`` took anything before: NaN, four coordinates, a list; and
        arrays of another layout than the warm-up's, compiled inside the timed solve)."""
        source = self.source
        first, second = _points(self.a, "the first point set", source), _points(self.b, "the second point set", source)
        if max(first.shape[1], second.shape[1]) > 3:
            raise InputError(f"points have 1 to 3 coordinates, not {max(first.shape[1], second.shape[1])}", source)
        if first.shape[1] != second.shape[1]:
            raise InputError(f"the point sets differ in dimension ({first.shape[1]} and {second.shape[1]} "
                             "coordinates)", source)
        span = underflowing_span(first, second)
        if span is not None:
            raise InputError(f"the points span only {span:.3g}, below {MIN_SPAN:g}, where squared distances "
                             "underflow: rescale the points", source)
        object.__setattr__(self, "a", first)
        object.__setattr__(self, "b", second)

    @classmethod
    def from_points(cls, a, b, source: str | None = None) -> "EuclideanCosts":
        return cls(a, b, source)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.a.shape[0], self.b.shape[0])

    @property
    def n_rows(self) -> int:
        return self.a.shape[0]

    @property
    def n_cols(self) -> int:
        return self.b.shape[0]

    def distances(self, rows, cols) -> np.ndarray:
        return point_distances(self.a, self.b, np.asarray(rows), np.asarray(cols))

    def to_dense(self) -> CostMatrix:
        n, m = self.shape
        if n * m > DENSE_DISTANCES:
            raise InputError(f"{n:,} x {m:,} points make {n * m:,} distances, too many to hold for a dense "
                             "solver: use the knn algorithm, which needs no distance matrix", self.source)
        from scipy.spatial.distance import cdist
        return CostMatrix(_frozen(cdist(self.a, self.b) if n and m else np.zeros((n, m))), self.source)

    def __repr__(self) -> str:
        return _one_line("EuclideanCosts", f"{self.n_rows:,} x {self.n_cols:,} points in "
                                           f"{int(self.a.shape[1])} dimensions", self.source)

    def describe(self) -> dict:
        return {"kind": self.kind, "rows": self.n_rows, "cols": self.n_cols, "dimensions": int(self.a.shape[1]),
                "costs": "euclidean distances", "integer": False}


@dataclass(frozen=True, eq=False)
class PointSeries:
    """T frames of 3-D points (frame t is an (n_t, 3) float64 array), with optional ground-truth ids.

    ``ids[t][i]`` is the identity of point i of frame t; the same id in two frames is the same
    particle. Frames may differ in size (particles enter and leave).
    """

    kind: ClassVar[str] = "points"
    frames: tuple
    ids: tuple | None = None
    source: str | None = None

    @classmethod
    def from_frames(cls, frames: Sequence, ids: Sequence | None = None,
                    source: str | None = None) -> "PointSeries":
        out = []
        for t, f in enumerate(frames):
            a = unmasked_array(f, f"frame {t}", MASKED_POINTS, source)
            if a.ndim != 2 or a.shape[1] != 3:
                raise InputError(f"frame {t} must be an (n, 3) array, got shape {a.shape}", source)
            if a.size and not np.issubdtype(a.dtype, np.number):
                raise InputError(f"frame {t} holds non-numeric values", source)
            a = a.astype(np.float64, copy=False)
            if not np.all(np.isfinite(a)):
                raise InputError(f"frame {t} holds NaN or infinite coordinates", source)
            out.append(_frozen(a))
        if not out:
            raise InputError("a point series needs at least one frame", source)
        id_out = None
        if ids is not None:
            if len(ids) != len(out):
                raise InputError(f"{len(ids)} id arrays for {len(out)} frames", source)
            id_out = []
            for t, (f, i) in enumerate(zip(out, ids)):
                a = np.asarray(i)
                if a.shape != (f.shape[0],):
                    raise InputError(f"frame {t}: {a.shape} ids for {f.shape[0]} points", source)
                if a.size and not np.issubdtype(a.dtype, np.integer):
                    raise InputError(f"frame {t}: ids must be integers", source)
                a = a.astype(np.int64, copy=False)
                if _sorted_unique(a).size != a.size:
                    raise InputError(f"frame {t}: ids are not unique", source)
                id_out.append(_frozen(a))
            id_out = tuple(id_out)
        return cls(tuple(out), id_out, source)

    @property
    def n_frames(self) -> int:
        return len(self.frames)

    @property
    def sizes(self) -> list[int]:
        return [f.shape[0] for f in self.frames]

    def describe(self) -> dict:
        return {"kind": self.kind, "frames": self.n_frames, "points": self.sizes,
                "ground_truth": self.ids is not None}

    def __repr__(self) -> str:
        """One line (``print(series)``): frames and their points, never the arrays."""
        sizes = self.sizes
        low, high = min(sizes, default=0), max(sizes, default=0)
        points = (plural(low, "point") if low == high
                  else f"{low:,} to {plural(high, 'point')} ({sum(sizes):,} in all)")
        return (f"PointSeries({plural(self.n_frames, 'frame')} of {points}, "
                f"{'with ground-truth ids' if self.ids is not None else 'no ids'}"
                + (f", from {self.source}" if self.source else "") + ")")


Problem = BipartiteGraph | FlowNetwork | CostMatrix | SparseCosts | EuclideanCosts | PointSeries
PROBLEM_KINDS = ("matching", "flow", "assignment", "points")
