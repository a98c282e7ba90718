"""DIMACS max flow (``.max``) <-> FlowNetwork and DIMACS assignment (``.asn``) <-> SparseCosts.

Lines start with a tag: ``c`` comment, ``p max N M`` / ``p asn N M`` problem line (exactly one,
before any node or arc line), ``n ID s`` / ``n ID t`` (max: source, sink) or ``n ID`` (asn: a
source-side node), ``a U V CAP`` / ``a U V COST``. Node ids are 1-based. Arc lines are parsed a
block at a time by numpy; the few other lines in Python.

An assignment's rows are its ``n`` nodes in file order, its columns the remaining nodes by id.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation, check_declared_beyond_data
from ..problems import CostMatrix, FlowNetwork, SparseCosts
from ..text import plural
from ._text import (Block, first_bad, format_rows, iter_blocks, parse_fields, refuse_repeated_pairs, shown,
                    write_file)

_TAGS = {ord("c"), ord("p"), ord("n"), ord("a")}
_WHITESPACE = (9, 32)
_BYTES_PER_ARC = 64  # arc columns, their line numbers and the problem's own arrays
_BYTES_PER_NODE = 24


@dataclass
class _Parsed:
    kind: str
    p_line: int | None = None
    n_nodes: int = 0
    n_arcs: int = 0
    n_node_lines: int = 0
    node_lines: list = field(default_factory=list)   # max: (line, id, 's'|'t')
    node_ids: list = field(default_factory=list)     # asn: arrays of ids, and their lines
    node_id_lines: list = field(default_factory=list)
    arcs: list = field(default_factory=list)         # per block: [u, v, value]
    arc_lines: list = field(default_factory=list)
    arcs_seen: int = 0


def _parse_p_line(state: _Parsed, text: str, line: int, path) -> None:
    name = str(path)
    if state.p_line is not None:
        raise InputError(f"a second 'p' line (the first is line {state.p_line})", name, line)
    fields = text.split()
    if len(fields) != 4:
        raise InputError(f"expected 'p {state.kind} NODES ARCS', found {len(fields)} fields", name, line)
    if fields[1] != state.kind:
        raise InputError(f"this is a DIMACS '{fields[1]}' problem, expected '{state.kind}'", name, line)
    try:
        n_nodes, n_arcs = int(fields[2]), int(fields[3])
    except ValueError:
        raise InputError(f"node and arc counts must be integers, found {shown(fields[2])} {shown(fields[3])}",
                         name, line) from None
    if n_nodes < 0 or n_arcs < 0:
        raise InputError("node and arc counts must be >= 0", name, line)
    check_allocation(_BYTES_PER_NODE * n_nodes + _BYTES_PER_ARC * n_arcs,
                     f"{n_nodes} nodes and {n_arcs} arcs", name, line)
    state.p_line, state.n_nodes, state.n_arcs = line, n_nodes, n_arcs


def _check_node_ids(ids: np.ndarray, lines: np.ndarray, state: _Parsed, what: str, path) -> None:
    bad = first_bad((ids < 1) | (ids > state.n_nodes))
    if bad is not None:
        raise InputError(f"{what} {int(ids[bad])} is outside the nodes 1..{state.n_nodes}", str(path),
                         int(lines[bad]))


def _read_block(state: _Parsed, block: Block, path) -> None:
    name = str(path)
    first = block.first_bytes()
    visible = block.first_visible(first)
    blank = visible == 0
    indented = first_bad(np.isin(first, _WHITESPACE) & ~blank)
    if indented is not None:
        raise InputError("a line must start with its tag: c, p, n or a", name, block.first_line + indented)
    unknown = first_bad(~blank & ~np.isin(first, list(_TAGS)))
    if unknown is not None:
        raise InputError(f"unknown line type {shown(chr(first[unknown]))} (expected c, p, n or a)", name,
                         block.first_line + unknown)
    is_p, is_n, is_a = first == ord("p"), first == ord("n"), first == ord("a")
    state.n_node_lines += int(np.count_nonzero(is_n))
    p_at = first_bad(is_p)
    if state.p_line is None:
        needs_p = first_bad((is_n | is_a) & (np.arange(block.n_lines) < (block.n_lines if p_at is None else p_at)))
        if needs_p is not None:
            raise InputError("missing 'p' line before the first node or arc line", name,
                             block.first_line + needs_p)
    for i in np.flatnonzero(is_p):
        _parse_p_line(state, block.text(int(i)), block.first_line + int(i), path)
    # the tag must be followed by whitespace ("a1 2 3" is malformed)
    second = block.buf[np.minimum(block.starts + 1, block.buf.size - 1)]
    bad = first_bad((is_n | is_a) & ~np.isin(second, _WHITESPACE))
    if bad is not None:
        raise InputError(f"malformed line: {shown(block.text(bad))}", name, block.first_line + bad)
    if state.kind == "max":
        for i in np.flatnonzero(is_n):
            _parse_max_node(state, block.text(int(i)), block.first_line + int(i), path)
    else:
        (ids,), lines = parse_fields(block, is_n, "i", path, skip=1)
        _check_node_ids(ids, lines, state, "node", path)
        state.node_ids.append(ids)
        state.node_id_lines.append(lines)
    (u, v, value), lines = parse_fields(block, is_a, "ii" + ("i" if state.kind == "max" else "f"), path, skip=1)
    if state.arcs_seen + u.size > state.n_arcs:
        extra = state.n_arcs - state.arcs_seen
        raise InputError(f"more arcs than the {state.n_arcs} the 'p' line (line {state.p_line}) declares",
                         name, int(lines[extra]))
    state.arcs_seen += u.size
    _check_node_ids(u, lines, state, "arc tail", path)
    _check_node_ids(v, lines, state, "arc head", path)
    if state.kind == "max":
        bad = first_bad(value < 0)
        if bad is not None:
            raise InputError(f"negative capacity {int(value[bad])}", name, int(lines[bad]))
    else:
        bad = first_bad(~np.isfinite(value))
        if bad is not None:
            raise InputError(f"cost {float(value[bad])} is not a finite number", name, int(lines[bad]))
    state.arcs.append((u, v, value))
    state.arc_lines.append(lines)


def _parse_max_node(state: _Parsed, text: str, line: int, path) -> None:
    name = str(path)
    fields = text.split()
    if len(fields) != 3 or fields[2] not in ("s", "t"):
        raise InputError("expected 'n ID s' or 'n ID t'", name, line)
    try:
        node = int(fields[1])
    except ValueError:
        raise InputError(f"expected a node id, found {shown(fields[1])}", name, line) from None
    if not 1 <= node <= state.n_nodes:
        raise InputError(f"node {node} is outside the nodes 1..{state.n_nodes}", name, line)
    for earlier_line, earlier_node, role in state.node_lines:
        if role == fields[2]:
            raise InputError(f"a second {'source' if role == 's' else 'sink'} (the first is on line "
                             f"{earlier_line})", name, line)
        if earlier_node == node:
            raise InputError(f"node {node} is both source and sink", name, line)
    state.node_lines.append((line, node, fields[2]))


def _scan(path, kind: str) -> _Parsed:
    state = _Parsed(kind)
    for block in iter_blocks(path):
        _read_block(state, block, path)
    name = str(path)
    if state.p_line is None:
        raise InputError(f"missing 'p {kind} NODES ARCS' line", name)
    if state.arcs_seen < state.n_arcs:
        raise InputError(f"the 'p' line declares {state.n_arcs:,} arcs but the file has {state.arcs_seen:,}",
                         name, state.p_line)
    touched = min(state.n_nodes, 2 * state.n_arcs + state.n_node_lines)
    check_declared_beyond_data(state.n_nodes, touched, f"the 'p' line declares {plural(state.n_nodes, 'node')} "
                               f"with {plural(state.n_arcs, 'arc')}", "nodes", name, state.p_line)
    return state


def _arcs(state: _Parsed):
    if not state.arcs:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
    u, v, value = (np.concatenate([a[j] for a in state.arcs]) for j in range(3))
    return u, v, value, np.concatenate(state.arc_lines)


def read_max(path, problem=None) -> FlowNetwork:
    state = _scan(path, "max")
    roles = {role: node for _, node, role in state.node_lines}
    for role, word in (("s", "source"), ("t", "sink")):
        if role not in roles:
            raise InputError(f"no {word}: add a line 'n ID {role}'", str(path))
    u, v, cap, _ = _arcs(state)
    return FlowNetwork.from_edges(state.n_nodes, u - 1, v - 1, cap, roles["s"] - 1, roles["t"] - 1,
                                  source=str(path))


def read_asn(path, problem=None) -> SparseCosts:
    name = str(path)
    state = _scan(path, "asn")
    ids = np.concatenate(state.node_ids) if state.node_ids else np.empty(0, np.int64)
    id_lines = np.concatenate(state.node_id_lines) if state.node_id_lines else np.empty(0, np.int64)
    _, first_index = np.unique(ids, return_index=True)
    if first_index.size != ids.size:
        repeated = np.ones(ids.size, dtype=bool)
        repeated[first_index] = False
        at = first_bad(repeated)
        raise InputError(f"node {int(ids[at])} is named twice", name, int(id_lines[at]))
    row_of = np.full(state.n_nodes + 1, -1, dtype=np.int64)
    row_of[ids] = np.arange(ids.size)
    is_col = row_of < 0
    is_col[0] = False
    col_of = np.full(state.n_nodes + 1, -1, dtype=np.int64)
    col_of[is_col] = np.arange(int(is_col.sum()))
    u, v, cost, lines = _arcs(state)
    rows, cols = row_of[u], col_of[v]
    bad = first_bad(rows < 0)
    if bad is not None:
        raise InputError(f"arc tail {int(u[bad])} is not a source-side node (no 'n {int(u[bad])}' line)",
                         name, int(lines[bad]))
    bad = first_bad(cols < 0)
    if bad is not None:
        raise InputError(f"arc head {int(v[bad])} is a source-side node", name, int(lines[bad]))
    refuse_repeated_pairs(u - 1, v - 1, lines, path, "arc", base=1)
    return SparseCosts.from_edges(rows, cols, cost, ids.size, int(is_col.sum()), source=name)


def write_max(net: FlowNetwork, path) -> None:
    header = (f"c matchscope flow network\np max {net.n_vertices} {net.n_edges}\n"
              f"n {net.source_vertex + 1} s\nn {net.sink_vertex + 1} t\n")
    arcs = format_rows([np.full(net.n_edges, b"a", dtype="S1"), net.tail.astype(np.int64) + 1,
                        net.head.astype(np.int64) + 1, net.capacity])
    write_file(path, header.encode() + arcs)


def _exact_text_values(values: np.ndarray) -> np.ndarray:
    """Integral costs as integers (the usual DIMACS form), others as floats."""
    if values.size and np.all(values == np.round(values)) and np.abs(values).max() < 2.0**53:
        return values.astype(np.int64)
    return values


def write_asn(obj, path) -> None:
    if isinstance(obj, CostMatrix):
        r, c = np.nonzero(obj.allowed)
        obj = SparseCosts.from_edges(r, c, obj.costs[r, c], obj.n_rows, obj.n_cols, obj.source)
    rows = np.repeat(np.arange(obj.n_rows, dtype=np.int64), np.diff(obj.row_ptr))
    header = (f"c matchscope assignment: nodes 1..{obj.n_rows} are rows, the rest columns\n"
              f"p asn {obj.n_rows + obj.n_cols} {obj.n_edges}\n")
    nodes = format_rows([np.full(obj.n_rows, b"n", dtype="S1"), np.arange(1, obj.n_rows + 1)])
    arcs = format_rows([np.full(obj.n_edges, b"a", dtype="S1"), rows + 1,
                        obj.col_ind.astype(np.int64) + obj.n_rows + 1, _exact_text_values(obj.cost)])
    write_file(path, header.encode() + nodes + arcs)
