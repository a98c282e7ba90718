"""The vertex element of a PLY file, checked against the file's size before anything is allocated.

plyfile parses the header (with its own line-numbered errors): it is given the header alone, with
every element count set to 0, so it reads no rows. The counts are then checked against the bytes
that follow the header (each row needs at least its scalar bytes, or two characters per property
in ASCII), so a small file that declares two billion faces is refused at that element's line
before anything is allocated. Only the vertex element is read, here with numpy (binary: one
structured read at its offset; ASCII: our streaming parser, so a bad value is named by its line):
plyfile would read every element, building a Python object per face of a mesh, whose faces we
never use.

Data beyond the declared elements is refused (ASCII: the first such line; binary: the extra
bytes), except after an element with list properties in a binary file, whose size cannot be
known without reading it (it must still hold at least its minimum size). A binary vertex element
must come before any element with list properties, and vertices themselves have no list
properties (both always hold for files written by common tools).
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..text import plural
from ._text import BLANK, UTF8_BOM, iter_blocks, parse_fields, refuse_non_text, shown

HEADER_LIMIT = 1 << 20  # a header longer than this is not a PLY header


@dataclass
class Element:
    name: str
    count: int
    line: int                 # the header line that declares it
    properties: list          # plyfile PlyProperty / PlyListProperty

    @property
    def has_lists(self) -> bool:
        import plyfile
        return any(isinstance(p, plyfile.PlyListProperty) for p in self.properties)

    def row_bytes(self) -> int:
        """Bytes of one binary row without lists; with lists, the least a row can take (empty lists)."""
        return sum(int(np.dtype(p.len_dtype if hasattr(p, "len_dtype") else p.val_dtype).itemsize)
                   for p in self.properties)

    def min_row_bytes(self, text: bool) -> int:
        if text:  # one token and one separator per property, or at least the newline of an empty row
            return max(2 * len(self.properties), 1)
        return self.row_bytes()  # 0 for an element without properties: harmless, its rows are never read


@dataclass
class Layout:
    text: bool
    byte_order: str
    data_start: int           # byte offset of the first row (after a byte-order mark and the header)
    header_lines: int
    file_size: int
    elements: list[Element]

    def element(self, name: str) -> Element | None:
        return next((e for e in self.elements if e.name == name), None)


def read_layout(path) -> Layout:
    """The header, parsed and checked against the file size (see the module docstring)."""
    import plyfile

    name = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(HEADER_LIMIT + len(UTF8_BOM))
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    if not head:
        raise InputError("file is empty", name)
    skip = len(UTF8_BOM) if head.startswith(UTF8_BOM) else 0
    head = head[skip:]
    newline = b"\r\n" if head.startswith(b"ply\r\n") else b"\r" if head.startswith(b"ply\r") else b"\n"
    end = head.find(newline + b"end_header" + newline)
    if end < 0 and len(head) > HEADER_LIMIT:
        raise InputError(f"no 'end_header' line in the first {HEADER_LIMIT >> 20} MiB: not a PLY file, or its "
                         "header is damaged", name)
    header = head if end < 0 else head[:end + 2 * len(newline) + len(b"end_header")]
    counts, lines = [], header.split(newline)
    for number, raw in enumerate(lines, start=1):
        if not raw.isascii() or b"\0" in raw:  # plyfile would answer with a codec error
            refuse_non_text(raw, name, number)  # binary data
            raise InputError("a PLY header must be ASCII text", name, number)
        fields = raw.split()
        if fields[:1] == [b"element"] and len(fields) == 3:
            if not fields[2].isdigit():
                raise InputError(f"the count of element {shown(fields[1].decode('latin-1'))} must be a whole "
                                 f"number, found {shown(fields[2].decode('latin-1'))}", name, number)
            counts.append((int(fields[2]), number))
            lines[number - 1] = b"element " + fields[1] + b" 0"  # plyfile reads the header, no rows
    try:
        ply = plyfile.PlyData.read(io.BytesIO(newline.join(lines)))
    except plyfile.PlyHeaderParseError as e:
        raise InputError(f"bad PLY header: {e.message}", name, e.line) from None
    except Exception as e:  # plyfile raises assorted types on odd headers (unicode, value...)
        raise InputError(f"bad PLY header: {e}", name) from None
    if end < 0:  # plyfile accepted a header we could not find the end of: should not happen
        raise InputError("bad PLY header: no 'end_header' line", name)
    if ply.text and newline == b"\r":
        raise InputError("ASCII PLY data with bare carriage-return line ends is not supported; convert the "
                         "file to Unix (LF) or Windows (CRLF) line ends", name)
    elements = [Element(e.name, count, line, list(e.properties)) for e, (count, line) in zip(ply.elements, counts)]
    layout = Layout(ply.text, ply.byte_order, skip + len(header), header.count(newline), size, elements)
    _check_counts(layout, name)
    return layout


def _check_counts(layout: Layout, name: str) -> None:
    """Every declared row needs a minimum number of bytes: refuse counts the file cannot hold."""
    left = layout.file_size - layout.data_start
    for element in layout.elements:
        least = element.min_row_bytes(layout.text)
        if element.count * least > left:
            raise InputError(f"element {shown(element.name)} declares {plural(element.count, 'row')} of at least "
                             f"{plural(least, 'byte')} each, but only {plural(max(left, 0), 'byte')} of the file "
                             "remain for it (truncated, or a wrong count?)", name, element.line)
        left -= element.count * least


def read_vertices(path, layout: Layout) -> tuple[np.ndarray, np.ndarray | None]:
    """The vertex rows as a structured array of the declared types, and their file lines (ASCII) or
    None (binary). The caller has checked that the element exists and has no list properties."""
    if layout.text:
        return _read_text(path, layout)
    return _read_binary(path, layout), None


def _read_binary(path, layout: Layout) -> np.ndarray:
    name = str(path)
    offset = layout.data_start
    vertex = layout.element("vertex")
    for element in layout.elements[:layout.elements.index(vertex)]:
        if element.has_lists:
            raise InputError(f"element {shown(element.name)} (line {element.line}) has list properties and comes "
                             "before the vertices; binary PLY vertices must come before such elements", name,
                             vertex.line)
        offset += element.count * element.row_bytes()
    position = offset
    for element in layout.elements[layout.elements.index(vertex):]:
        if element.has_lists:
            break  # its size is unknown without reading it; _check_counts made sure of its minimum
        row = element.row_bytes()
        if position + element.count * row > layout.file_size:
            whole = max(layout.file_size - position, 0) // row
            raise InputError(f"the file is truncated: element {shown(element.name)} declares "
                             f"{plural(element.count, 'row')} but the file ends after {whole:,}", name, element.line)
        position += element.count * row
    else:
        if position < layout.file_size:
            raise InputError(f"{plural(layout.file_size - position, 'byte')} follow the last element the header "
                             "declares (a damaged file, or a wrong count?)", name)
    dtype = np.dtype([(p.name, p.dtype(layout.byte_order)) for p in vertex.properties])
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            rows = np.fromfile(fh, dtype=dtype, count=vertex.count)
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    if rows.size != vertex.count:  # the file changed under us
        raise InputError("the file is truncated", name, vertex.line)
    return rows


def _read_text(path, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """ASCII rows are one line each: the vertex lines are parsed by numpy, the other elements' lines
    only counted, and any non-blank line after the last element is refused."""
    name = str(path)
    vertex = layout.element("vertex")
    first = layout.header_lines + 1 + sum(e.count for e in layout.elements[:layout.elements.index(vertex)])
    stop = first + vertex.count  # the line after the last vertex row
    end = layout.header_lines + 1 + sum(e.count for e in layout.elements)
    kinds = "".join("i" if np.dtype(p.val_dtype).kind in "iu" else "f" for p in vertex.properties)
    parts, line_parts, last_line = [], [], 0
    for block in iter_blocks(path):
        numbers = block.first_line + np.arange(block.n_lines)
        last_line = int(numbers[-1])
        extra = (numbers >= end) & (block.classify(b"") != BLANK)
        if extra.any():
            last = layout.elements[-1]
            raise InputError(f"data after the last element the header declares (element {shown(last.name)} "
                             f"has {plural(last.count, 'row')}; is a count wrong?)", name,
                             int(numbers[np.argmax(extra)]))
        wanted = (numbers >= first) & (numbers < stop)
        if wanted.any():
            columns, rows_at = parse_fields(block, wanted, kinds, path)
            parts.append(columns)
            line_parts.append(rows_at)
    _check_text_length(layout, last_line, name)
    rows = np.empty(vertex.count, dtype=[(p.name, p.dtype("=")) for p in vertex.properties])
    for j, p in enumerate(vertex.properties):
        column = np.concatenate([c[j] for c in parts]) if parts else np.empty(0)
        rows[p.name] = _as_declared(column, np.dtype(p.val_dtype), p.name, line_parts, name)
    lines = np.concatenate(line_parts) if line_parts else np.empty(0, np.int64)
    return rows, lines


def _check_text_length(layout: Layout, last_line: int, name: str) -> None:
    """Every element's rows are present: name the first element the file ends inside."""
    line = layout.header_lines + 1
    for element in layout.elements:
        if line + element.count - 1 > last_line:
            got = max(last_line - line + 1, 0)
            raise InputError(f"the file is truncated: element {shown(element.name)} declares "
                             f"{plural(element.count, 'row')} but the file ends after {got:,}", name, element.line)
        line += element.count


def _as_declared(column: np.ndarray, dtype: np.dtype, prop: str, line_parts, name: str) -> np.ndarray:
    """Parsed values in the property's declared type, as a binary file would hold them: integers
    out of its range are refused at their line; floats are rounded to it (float32)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bad = np.flatnonzero((column < info.min) | (column > info.max))
        if bad.size:
            lines = np.concatenate(line_parts)
            raise InputError(f"{prop} {int(column[bad[0]])} does not fit the declared type {dtype.name}", name,
                             int(lines[bad[0]]))
        return column.astype(dtype)
    with np.errstate(over="ignore"):  # beyond float32: inf, refused later as not finite
        return column.astype(dtype)
