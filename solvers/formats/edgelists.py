"""Edge lists: SNAP (``#`` comments, 0-based ``u v``) and KONECT bipartite TSV (``%`` comments,
``% bip ...`` first line, 1-based ``u v [weight [time]]``; a file with fewer edges than its
``% EDGES ROWS COLS`` line declares is refused as truncated).

Both are streamed (see _text): a 5M-line file loads in seconds. SNAP graphs are read as
rows = sources, cols = targets, each side sized max id + 1 unless ``n_rows`` / ``n_cols`` are
given or the file carries the size comment this module writes. KONECT's optional second line
``% EDGES ROWS COLS`` gives the sizes; without it each side is sized by its own largest id (the
two sides are numbered apart).
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation, check_declared_beyond_data
from ..problems import BipartiteGraph, SparseCosts
from ..text import plural
from ._text import (first_bad, format_rows, peek_first_line, read_table, refuse_repeated_pairs, shown,
                    require_integral, write_file)

_SNAP_SIZES = re.compile(r"#\s*matchscope bipartite graph: rows (\d+) cols (\d+)")
_KONECT_SIZES = re.compile(r"%\s*(\d+)\s+(\d+)\s+(\d+)\s*$")
_BYTES_PER_EDGE = 40  # the two CSR layouts plus parse buffers, per edge


def _size_option(value, name: str, path) -> int | None:
    if value is None:
        return None
    try:
        size = int(value)
    except (TypeError, ValueError):
        size = -1
    if size < 0:
        raise InputError(f"option {name} must be a non-negative integer, not {shown(str(value))}", str(path))
    return size


def _check_ids(ids: np.ndarray, lines: np.ndarray, lowest: int, size: int | None, what: str, path) -> None:
    bad = first_bad(ids < lowest)
    if bad is not None:
        raise InputError(f"{what} id {int(ids[bad])} is below {lowest}", str(path), int(lines[bad]))
    if size is not None:
        bad = first_bad(ids >= size + lowest)
        if bad is not None:
            raise InputError(f"{what} id {int(ids[bad])} is outside the {size} {what}s", str(path),
                             int(lines[bad]))


def _sizes(rows, cols, lines, n_rows, n_cols, path, declared_at: int | None = None,
           chosen: bool = False, per_side: bool = False) -> tuple[int, int]:
    """Default sizes: max id + 1 on both sides (SNAP: one id space), or each side's own max id + 1
    (``per_side``: KONECT's bipartite ids are numbered per side); refuse absurd ones before
    allocating, naming the line that declared them (``declared_at``) or, for derived sizes, the
    line of the largest id. Sizes from the file (not ``chosen`` by the caller's options) must also
    follow its data: rows and columns beyond what the edges can touch are limited
    (io_util.check_declared_beyond_data)."""
    top_row, top_col = int(rows.max(initial=-1)) + 1, int(cols.max(initial=-1)) + 1
    top = max(top_row, top_col)
    derived = n_rows is None or n_cols is None
    n_rows = (top_row if per_side else top) if n_rows is None else int(n_rows)
    n_cols = (top_col if per_side else top) if n_cols is None else int(n_cols)
    at = int(lines[np.argmax(np.maximum(rows, cols))]) if derived and rows.size else declared_at
    check_allocation(16 * (n_rows + n_cols + 2) + _BYTES_PER_EDGE * rows.size,
                     f"a {n_rows} x {n_cols} graph with {rows.size} edges", path, at)
    if not chosen:
        edges = plural(int(rows.size), "edge")
        what = (f"ids up to {top - 1} make a {n_rows} x {n_cols} graph with {edges}" if derived and at != declared_at
                else f"the file declares a {n_rows} x {n_cols} graph with {edges}")
        check_declared_beyond_data(n_rows + n_cols, min(n_rows, rows.size) + min(n_cols, rows.size), what,
                                   "rows and columns", path, at)
    return n_rows, n_cols


def read_snap(path, problem=None, n_rows: int | None = None, n_cols: int | None = None) -> BipartiteGraph:
    n_rows, n_cols = _size_option(n_rows, "n_rows", path), _size_option(n_cols, "n_cols", path)
    chosen = n_rows is not None or n_cols is not None
    columns, lines, leading = read_table(path, b"#", "ii")
    declared_at = None
    for line, text in leading:
        m = _SNAP_SIZES.match(text)
        if m and (n_rows is None or n_cols is None):
            n_rows = int(m.group(1)) if n_rows is None else n_rows
            n_cols = int(m.group(2)) if n_cols is None else n_cols
            declared_at = line
    rows, cols = columns if columns else (np.empty(0, np.int64), np.empty(0, np.int64))
    _check_ids(rows, lines, 0, n_rows, "source", path)
    _check_ids(cols, lines, 0, n_cols, "target", path)
    n_rows, n_cols = _sizes(rows, cols, lines, n_rows, n_cols, path, declared_at, chosen)
    return BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, source=str(path))


def write_snap(graph: BipartiteGraph, path) -> None:
    rows, cols = graph.edges()
    header = (f"# matchscope bipartite graph: rows {graph.n_rows} cols {graph.n_cols} edges {graph.n_edges}\n"
              f"# source\ttarget (0-based; sources are rows, targets are columns)\n")
    write_file(path, header.encode() + format_rows([rows, cols], sep=b"\t"))


def _konect_kinds(first_line_text: str, line: int, path) -> str:
    n = len(first_line_text.split())
    if n not in (2, 3, 4):
        raise InputError(f"a KONECT line holds 'u v [weight [time]]', found {n} fields", str(path), line)
    return "ff" + "f" * (n - 2)


def read_konect(path, problem=None, n_rows: int | None = None, n_cols: int | None = None):
    name = str(path)
    n_rows, n_cols = _size_option(n_rows, "n_rows", path), _size_option(n_cols, "n_cols", path)
    chosen = n_rows is not None or n_cols is not None
    header = peek_first_line(path).lstrip("% \t").split()
    if header[:1] != ["bip"]:
        raise InputError("not a KONECT bipartite network: the first line must be '% bip ...'", name, 1)
    weighted = header[1:2] not in ([], ["unweighted"])
    columns, lines, leading = read_table(path, b"%", lambda text, line: _konect_kinds(text, line, path))
    declared_at = declared_edges = None
    if len(leading) > 1 and leading[1][0] == 2:
        m = _KONECT_SIZES.match(leading[1][1])
        if m:
            declared_edges = int(m.group(1))
        if m and (n_rows is None or n_cols is None):
            n_rows = int(m.group(2)) if n_rows is None else n_rows
            n_cols = int(m.group(3)) if n_cols is None else n_cols
            declared_at = 2
    if columns is None:  # no edges: the header alone says whether there is a weight column
        columns = [np.empty(0)] * (3 if weighted else 2)
    if declared_edges is not None and columns[0].size < declared_edges:
        raise InputError(f"the size line declares {plural(declared_edges, 'edge')} but the file has "
                         f"{columns[0].size:,} (truncated?)", name, 2)
    rows = require_integral(columns[0], lines, "a row id", path)
    cols = require_integral(columns[1], lines, "a column id", path)
    _check_ids(rows, lines, 1, n_rows, "row", path)
    _check_ids(cols, lines, 1, n_cols, "column", path)
    rows -= 1
    cols -= 1
    n_rows, n_cols = _sizes(rows, cols, lines, n_rows, n_cols, path, declared_at, chosen, per_side=True)
    if problem != "assignment":
        return BipartiteGraph.from_edges(rows, cols, n_rows, n_cols, source=name)
    if len(columns) < 3:
        raise InputError("this KONECT network has no weight column to use as assignment costs", name)
    costs = columns[2]
    bad = first_bad(~np.isfinite(costs))
    if bad is not None:
        raise InputError(f"weight {float(costs[bad])} is not a finite number", name, int(lines[bad]))
    refuse_repeated_pairs(rows, cols, lines, path, base=1)
    return SparseCosts.from_edges(rows, cols, costs, n_rows, n_cols, source=name)


def write_konect(obj, path) -> None:
    if isinstance(obj, SparseCosts):
        rows = np.repeat(np.arange(obj.n_rows), np.diff(obj.row_ptr))
        cost = obj.cost
        if cost.size and obj.is_integer and np.abs(cost).max() <= 2.0 ** 53:
            cost = cost.astype(np.int64)  # "61", not "61.0", as the Matrix Market writer does
        columns, weights = [rows + 1, obj.col_ind.astype(np.int64) + 1, cost], "weighted"
    else:
        rows, cols = obj.edges()
        columns, weights = [rows.astype(np.int64) + 1, cols.astype(np.int64) + 1], "unweighted"
    header = f"% bip {weights}\n% {obj.n_edges} {obj.n_rows} {obj.n_cols}\n"
    write_file(path, header.encode() + format_rows(columns, sep=b"\t"))
