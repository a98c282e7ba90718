"""Matrix Market coordinate files (``.mtx``, ``.mtx.gz``): pattern / integer / real, general / symmetric.

Read: default -> BipartiteGraph (every stored entry an edge row -> col); problem="assignment" ->
SparseCosts (values are costs); problem="flow" -> FlowNetwork on a square matrix (values are
capacities, pattern entries capacity 1; ``source=`` / ``sink=`` default to 0 and n-1, or to the
ones a matchscope-written file names). A symmetric file is expanded to both triangles.

Two readers. A plain file of FAST_MIN_BYTES or more whose header is in its first HEAD_BYTES is read
on every core, at disk speed, once its body has passed the strict compiled check of ``_mtx_check``:
pattern and integer bodies are parsed by ``_mtx_check`` itself, real ones by scipy.io.mmread
(fast_matrix_market; alone it silently accepts trailing garbage, truncates "1.5" to 1 in an
integer file, and crashes on some malformed last lines). Every other file, and
any file the fast route refuses or cannot handle, goes through our streaming checking reader,
which names the line at fault: the two give the same problem, and a user sees only the checking
reader's errors. Writing uses scipy.io.mmwrite.

The size line is checked before anything is built: against memory (check_allocation), and
against the entries it declares, which the file must then hold (no more, no fewer). Rows and
columns without an entry are legal, but every one costs memory in the problem, so a size line
whose rows and columns exceed what its entries can touch by more than io_util.EMPTY_ALLOWANCE is
refused at that line (a 75-byte file declaring 100000000 x 100000000 would otherwise take
gigabytes). Only the first HEADER_COMMENTS comment lines are kept (the one a matchscope flow
file needs is the second line); any number of comment lines costs no more than a block.
"""
from __future__ import annotations

import io
import os
import re

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation, check_declared_beyond_data
from ..problems import EXACT_INTEGER, BipartiteGraph, CostMatrix, FlowNetwork, SparseCosts
from ..text import plural
from ._text import (COMMENT, DATA, Block, first_bad, iter_blocks, parse_fields, refuse_non_text,
                    refuse_repeated_pairs, report_bytes, require_integral, shown, token_error, write_file)

_BANNER = re.compile(r"%%MatrixMarket\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", re.I)
ASSIGNMENT_COMMENT = "matchscope assignment: the values are costs"
_ASSIGNMENT_MARK = re.compile(r"^%?\s*matchscope assignment\b")  # read without a problem kind: costs
_FLOW_ENDS = re.compile(r"%\s*matchscope flow: source=(\d+) sink=(\d+)")
_FIELD_KINDS = {"pattern": "ii", "integer": "iii", "real": "iif"}
_BYTES_PER_ENTRY = 64  # parse columns, line numbers, symmetric mirror and the problem's arrays
HEADER_COMMENTS = 50
FAST_MIN_BYTES = 1 << 20  # smaller files: the checking reader takes less time than loading the compiled check
HEAD_BYTES = 1 << 20      # the fast reader needs the banner, the comments and the size line within this
_SHORTEST_ENTRY = {"pattern": 4, "integer": 6, "real": 6}  # "1 1\n", "1 1 1\n"


class _Header:
    """Banner, leading comments and size line of a coordinate file, checked."""

    def __init__(self, path):
        self.path = str(path)
        self.field = self.symmetry = None
        self.size = self.size_line = None
        self.comments: list[tuple[int, str]] = []  # (line, text) of the first HEADER_COMMENTS comments

    def _read_header(self, block, kinds: np.ndarray) -> int | None:
        """Banner, leading comments and size line; the index of the line after the size line, or
        None when the block holds only comments (found by numpy: there may be a billion of them)."""
        if block.first_line == 1:
            self._read_banner(block.text(0))
        size_at = first_bad(kinds == DATA)
        before = block.n_lines if size_at is None else size_at
        if len(self.comments) < HEADER_COMMENTS:
            for i in np.flatnonzero(kinds[:before] == COMMENT)[:HEADER_COMMENTS - len(self.comments)]:
                if block.first_line + int(i) > 1:
                    self.comments.append((block.first_line + int(i), block.text(int(i))))
        if size_at is None:
            return None
        self._read_size(block.text(size_at), block.first_line + size_at)
        return size_at + 1

    def _read_banner(self, text: str) -> None:
        m = _BANNER.match(text)
        if not m:
            raise InputError("not a Matrix Market file: the first line must be "
                             "'%%MatrixMarket matrix coordinate FIELD SYMMETRY'", self.path, 1)
        obj, fmt, field, symmetry = (g.lower() for g in m.groups())
        if obj != "matrix":
            raise InputError(f"Matrix Market object {shown(obj)} is not supported (only 'matrix')", self.path, 1)
        if fmt != "coordinate":
            raise InputError(f"Matrix Market format {shown(fmt)} is not supported (only 'coordinate'; "
                             "use .npy or .csv for dense costs)", self.path, 1)
        if field not in _FIELD_KINDS:
            raise InputError(f"Matrix Market field {shown(field)} is not supported (pattern, integer or real)",
                             self.path, 1)
        if symmetry not in ("general", "symmetric"):
            raise InputError(f"Matrix Market symmetry {shown(symmetry)} is not supported (general or symmetric)",
                             self.path, 1)
        self.field, self.symmetry = field, symmetry

    def _read_size(self, text: str, line: int) -> None:
        fields = text.split()
        if len(fields) != 3 or any(token_error(f, "i") or f.startswith("-") for f in fields):
            raise InputError(f"expected the size line 'ROWS COLS ENTRIES' (three counts), found "
                             f"{shown(text.strip(), 60)}", self.path, line)
        size = tuple(int(f) for f in fields)
        if self.symmetry == "symmetric" and size[0] != size[1]:
            raise InputError(f"a symmetric matrix must be square, this one is {size[0]} x {size[1]}",
                             self.path, line)
        check_allocation(16 * (size[0] + size[1] + 2) + _BYTES_PER_ENTRY * size[2],
                         f"a {size[0]} x {size[1]} matrix with {plural(size[2], 'entry', 'entries')}", self.path, line)
        check_declared_beyond_data(size[0] + size[1], min(size[0], size[2]) + min(size[1], size[2]),
                                   f"the size line declares a {size[0]} x {size[1]} matrix with "
                                   f"{plural(size[2], 'entry', 'entries')}", "rows and columns", self.path, line)
        self.size, self.size_line = size, line


class _Matrix(_Header):
    """Header and 1-based entries of a coordinate file, with the line of every entry: the checking reader."""

    def __init__(self, path):
        super().__init__(path)
        chunks, line_chunks = [], []
        seen = 0
        for block in iter_blocks(path):
            kinds = block.classify(b"%")
            data = kinds == DATA
            if self.size is None:
                start = self._read_header(block, kinds)
                if start is None:
                    continue
                data[:start] = False
            n_rows, n_cols, n_entries = self.size
            cols, lines = parse_fields(block, data, _FIELD_KINDS[self.field], path)
            if seen + lines.size > n_entries:
                raise InputError(f"more entries than the {n_entries} the size line (line {self.size_line}) "
                                 "declares", self.path, int(lines[n_entries - seen]))
            seen += lines.size
            for ids, bound, what in ((cols[0], n_rows, "row"), (cols[1], n_cols, "column")):
                bad = first_bad((ids < 1) | (ids > bound))
                if bad is not None:
                    raise InputError(f"{what} index {int(ids[bad])} is outside 1..{bound}", self.path,
                                     int(lines[bad]))
            chunks.append(cols)
            line_chunks.append(lines)
        if self.size is None:
            raise InputError("missing the size line 'ROWS COLS ENTRIES'", self.path)
        if seen < self.size[2]:
            declared = plural(self.size[2], "entry", "entries")
            raise InputError(f"the size line declares {declared} but the file has {seen:,} "
                             "(truncated?)", self.path, self.size_line)
        width = len(_FIELD_KINDS[self.field])
        empty = [np.empty(0, np.int64)] * width
        self.columns = [np.concatenate([c[j] for c in chunks]) if chunks else empty[j] for j in range(width)]
        self.lines = np.concatenate(line_chunks) if line_chunks else np.empty(0, np.int64)

    def entries(self):
        """0-based (rows, cols, values or None, lines), the symmetric mirror added."""
        rows, cols = self.columns[0] - 1, self.columns[1] - 1
        values = self.columns[2] if len(self.columns) > 2 else None
        lines = self.lines
        if self.symmetry == "symmetric":
            lines = np.concatenate([lines, lines[rows != cols]])
            rows, cols, values = _mirrored(rows, cols, values)
        return rows, cols, values, lines


def _mirrored(rows, cols, values):
    """A symmetric file's entries and, after them, the off-diagonal ones transposed."""
    off = rows != cols
    rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
    return rows, cols, None if values is None else np.concatenate([values, values[off]])


class _LinesUnknown(Exception):
    """A check of the fast reader's entries failed: the checking reader reads the file to name the line."""


class _NoLines:
    """The line numbers the fast reader does not keep: asking for one means the file is refused."""

    def __getitem__(self, index):
        raise _LinesUnknown


def _read_fast(path):
    """(header, 0-based rows, cols, values or None), the symmetric mirror added, parsed on every
    core (pattern and integer files by ``_mtx_check``, real ones by scipy's threaded reader); None
    when the checking reader must read the file: small, compressed, a header beyond HEAD_BYTES or
    in error, a body outside ``_mtx_check``'s grammar or shorter than its declared entries can be
    (so nothing is allocated for entries that are not there)."""
    name = str(path)
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as fh:
            head = fh.read(HEAD_BYTES) if size >= FAST_MIN_BYTES else b""
    except OSError:
        return None
    cut = head.rfind(b"\n") + 1
    if not head.startswith(b"%%MatrixMarket") or cut == 0:  # gzip, a byte-order mark, no whole line
        return None
    block = Block(head[:cut], 1)
    header = _Header(name)
    try:
        refuse_non_text(head[:cut], name)  # binary data: the checking reader names its line
        start = header._read_header(block, block.classify(b"%"))
    except InputError:
        return None  # the checking reader says what is wrong, in its own words
    if start is None:
        return None
    body_at = int(block.starts[start]) if start < block.n_lines else cut
    n_rows, n_cols, n_entries = header.size
    if n_entries == 0 or n_entries * _SHORTEST_ENTRY[header.field] > size - body_at:
        return None
    from . import _mtx_check
    report_bytes(0, size)
    body = np.memmap(name, np.uint8, mode="r", offset=body_at)
    field = {"pattern": _mtx_check.PATTERN, "integer": _mtx_check.INTEGER, "real": _mtx_check.REAL}[header.field]
    if field != _mtx_check.REAL:  # exact integers: parsed here, in the pass after the check
        parsed = _mtx_check.read_entries(body.view(np.ndarray), field, n_rows, n_cols, n_entries)
        del body
        if parsed is None:
            return None
        rows, cols, values = parsed
        if header.symmetry == "symmetric":  # mirrored as the checking reader mirrors: the same problem
            rows, cols, values = _mirrored(rows, cols, values)
        report_bytes(size, size)
        return header, rows, cols, values
    found = _mtx_check.count_entries(body.view(np.ndarray), field, n_rows, n_cols)
    del body
    if found != n_entries:
        return None
    import scipy.io  # here, not at startup
    try:
        coo = scipy.io.mmread(name, spmatrix=False)
    except Exception:  # fast_matrix_market's own refusals: the checking reader names the line
        return None
    rows, cols = coo.coords
    mirrored = int(np.count_nonzero(rows[:n_entries] != cols[:n_entries])) if header.symmetry == "symmetric" else 0
    if coo.shape != (n_rows, n_cols) or rows.size != n_entries + mirrored or coo.data.dtype != np.float64:
        return None
    report_bytes(size, size)
    return header, rows, cols, coo.data


def read(path, problem=None, source: int | None = None, sink: int | None = None):
    name = str(path)
    if problem not in (None, "matching", "assignment", "flow"):
        raise InputError(f"a Matrix Market file cannot hold a {problem} problem", name)
    if problem != "flow" and (source is not None or sink is not None):
        given = " and ".join(o for o, v in (("source", source), ("sink", sink)) if v is not None)
        raise InputError(f"the option {given} applies to a flow network (problem flow); this file is read "
                         f"as a {problem or 'matching'} problem", name)
    fast = _read_fast(path)
    if fast is not None:
        header, rows, cols, values = fast
        try:
            return _problem(header, rows, cols, values, _NoLines(), problem, source, sink)
        except (InputError, _LinesUnknown):
            pass  # refused: the checking reader gives the error with its line
    matrix = _Matrix(path)
    return _problem(matrix, *matrix.entries(), problem, source, sink)


def _problem(matrix: _Header, rows, cols, values, lines, problem, source, sink):
    name = matrix.path
    n_rows, n_cols, _ = matrix.size
    if problem is None and any(_ASSIGNMENT_MARK.match(comment.strip()) for _, comment in matrix.comments):
        problem = "assignment"  # written by matchscope as costs: read back as costs, not as a graph
    if problem in (None, "matching"):
        return BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, source=name)
    if problem == "assignment":
        if values is None:
            raise InputError("a pattern matrix has no values to use as assignment costs", name, 1)
        bad = first_bad(~np.isfinite(values))
        if bad is not None:
            raise InputError(f"cost {float(values[bad])} is not a finite number", name, int(lines[bad]))
        if values.dtype.kind in "iu":  # named by its line here, not by its position among the entries
            bad = first_bad((values > EXACT_INTEGER) | (values < -EXACT_INTEGER))
            if bad is not None:
                raise InputError(f"integer cost {int(values[bad])} cannot be represented exactly: integer costs "
                                 f"must stay within +-2^53 ({EXACT_INTEGER})", name, int(lines[bad]))
        if not isinstance(lines, _NoLines):  # fast route: SparseCosts refuses a repeat, the checker names it
            refuse_repeated_pairs(rows, cols, lines, name, "entry", base=1)
        return SparseCosts.from_edges(rows, cols, values, n_rows, n_cols, source=name)
    return _flow(matrix, rows, cols, values, lines, source, sink)


def _vertex(value, what: str, n: int, path, line: int | None = None) -> int:
    """A 0-based source or sink vertex (an option, or the matchscope comment at ``line``) checked
    against the ``n`` vertices."""
    try:
        vertex = int(value)
        valid = vertex == value and not isinstance(value, bool)
    except (TypeError, ValueError, OverflowError):
        valid = False
    if not valid:
        raise InputError(f"the {what} must be a vertex number, not {shown(str(value))}", str(path), line)
    if not 0 <= vertex < n:
        raise InputError(f"the {what} {vertex} is not one of the vertices 0..{n - 1} (0-based)", str(path), line)
    return vertex


def _flow(matrix: _Header, rows, cols, values, lines, source, sink) -> FlowNetwork:
    n, n_cols, _ = matrix.size
    if n != n_cols:
        raise InputError(f"a flow network needs a square matrix, this one is {n} x {n_cols}", matrix.path,
                         matrix.size_line)
    if n < 2:
        raise InputError(f"a flow network needs at least two vertices (a source and a sink); this matrix is "
                         f"{n} x {n}", matrix.path, matrix.size_line)
    if values is None:
        capacity = np.ones(rows.size, dtype=np.int64)
    else:
        capacity = values if matrix.field == "integer" else require_integral(values, lines, "a capacity",
                                                                              matrix.path)
        bad = first_bad(capacity < 0)
        if bad is not None:
            raise InputError(f"negative capacity {capacity[bad]}", matrix.path, int(lines[bad]))
    source = None if source is None else _vertex(source, "source", n, matrix.path)
    sink = None if sink is None else _vertex(sink, "sink", n, matrix.path)
    for line, comment in matrix.comments:
        m = _FLOW_ENDS.match(comment.strip())
        if m:
            source = _vertex(int(m.group(1)), "source", n, matrix.path, line) if source is None else source
            sink = _vertex(int(m.group(2)), "sink", n, matrix.path, line) if sink is None else sink
    source = 0 if source is None else source
    sink = n - 1 if sink is None else sink
    if source == sink:
        raise InputError(f"the source and the sink are the same vertex ({source})", matrix.path)
    return FlowNetwork.from_edges(n, rows, cols, capacity, source, sink, source=matrix.path)


def _mm_bytes(matrix, field: str, comment: str = "") -> bytes:
    import scipy.io  # here, not at startup (listing formats imports this module)
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, matrix, comment=comment, field=field, symmetry="general")
    return buf.getvalue()


def write(obj, path) -> None:
    import scipy.sparse as sp
    if isinstance(obj, CostMatrix):
        r, c = np.nonzero(obj.allowed)
        obj = SparseCosts.from_edges(r, c, obj.costs[r, c], obj.n_rows, obj.n_cols, obj.source)
    if isinstance(obj, BipartiteGraph):
        rows, cols = obj.edges()
        data = _mm_bytes(sp.coo_matrix((np.ones(obj.n_edges, np.int8), (rows, cols)), shape=obj.shape),
                         "pattern")
    elif isinstance(obj, SparseCosts):
        rows = np.repeat(np.arange(obj.n_rows), np.diff(obj.row_ptr))
        integral = obj.is_integer and (obj.cost.size == 0 or np.abs(obj.cost).max() < 2.0**53)
        values = obj.cost.astype(np.int64) if integral else obj.cost
        data = _mm_bytes(sp.coo_matrix((values, (rows, obj.col_ind)), shape=obj.shape),
                         "integer" if integral else "real", ASSIGNMENT_COMMENT)
    elif isinstance(obj, FlowNetwork):
        matrix = sp.coo_matrix((obj.capacity, (obj.tail, obj.head)), shape=(obj.n_vertices,) * 2)
        data = _mm_bytes(matrix, "integer", f"matchscope flow: source={obj.source_vertex} "
                                            f"sink={obj.sink_vertex} (0-based)")
    else:
        raise InputError("only a graph, costs or a flow network can be saved as Matrix Market", str(path))
    write_file(path, data)
