"""Streaming text reading and writing shared by the text formats.

Files are read in blocks of whole lines (never the whole file as Python objects). A block's data
lines are handed to numpy's C parser (``np.loadtxt``) in one call, so large files load at numpy
speed; only when numpy rejects a block is it scanned line by line in Python, to name the exact
1-based line at fault. gzip input is recognised by its magic bytes, and a UTF-8 byte-order mark
before the first line is skipped (editors on Windows write one). A line holding bytes that no text
holds (a binary file under a text name) is refused at its number in words (refuse_non_text), never
echoed; text in another 8-bit encoding (a Latin-1 comment) is read, and shown as UTF-8 with
replacement characters where an error quotes it.

Memory follows what the file holds, never what it claims: blocks are bounded, and a line longer
than MAX_LINE_BYTES (no format has rows that long) is refused with its number as soon as the
reader has seen that much of it, so a small .gz that inflates to one endless line costs a block.
"""
from __future__ import annotations

import contextlib
import contextvars
import gzip
import io
import os
import re
import warnings
import zlib
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ..errors import InputError, printable
from ..io_util import atomic_write_bytes, check_allocation

BLOCK_BYTES = 1 << 24
MAX_LINE_BYTES = 1 << 24  # 16 MiB: a dense CSV row of a million cells; any other format's lines are short
UTF8_BOM = b"\xef\xbb\xbf"
DATA, COMMENT, BLANK = 0, 1, 2
_NEWLINE, _CR, _SPACE, _TAB = 10, 13, 32, 9
# bytes no text line holds (tab, line feed, VT, FF and CR may): deleting every other byte leaves them
_TEXT_BYTES = bytes(b for b in range(256) if b > 31 or b in (9, 10, 11, 12, 13))

# column kinds: "i" = int64, "f" = float64
_DTYPES = {"i": np.dtype(np.int64), "f": np.dtype(np.float64)}
_INT_TOKEN = re.compile(r"[+-]?\d+\Z")
_FLOAT_TOKEN = re.compile(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf|infinity|nan)\Z", re.I)
_INT64 = np.iinfo(np.int64)

# callback(bytes of the file read so far, file size) while a loader reads; see read_progress
_on_read: contextvars.ContextVar[Callable[[int, int], None] | None] = contextvars.ContextVar(
    "matchscope_read_progress", default=None)


@contextlib.contextmanager
def read_progress(callback: Callable[[int, int], None] | None):
    """While the block runs, every read of a loader calls ``callback(bytes_read, file_size)``
    (compressed bytes for a .gz file), so a front end can draw a progress bar of a long load."""
    token = _on_read.set(callback)
    try:
        yield
    finally:
        _on_read.reset(token)


def open_binary(path):
    """Open ``path`` for binary reading, transparently gunzipping and past a UTF-8 byte-order mark;
    unreadable -> InputError."""
    name = str(path)
    try:
        raw = open(Path(path), "rb")
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    try:
        magic = raw.read(2)
        raw.seek(0)
    except OSError as e:
        raw.close()
        raise InputError(f"cannot read file: {e.strerror or e}", name) from None
    fh = gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw
    try:  # not through read_bytes: this probe is no progress to report
        if fh.read(len(UTF8_BOM)) != UTF8_BOM:
            fh.seek(0)
    except (OSError, EOFError, zlib.error) as e:
        close_binary(fh)
        raise InputError(unreadable(e), name) from None
    return fh


def unreadable(error: Exception) -> str:
    """A read failure in words (gzip's and zlib's own texts are Python's, not a user's)."""
    if isinstance(error, EOFError):
        return "cannot read file: its compressed data ends early (truncated?)"
    if isinstance(error, (zlib.error, gzip.BadGzipFile)):
        return "cannot read file: its compressed data is damaged"
    if getattr(error, "strerror", None):  # the system's own words: "Input/output error"
        return f"cannot read file ({error.strerror})"
    return "cannot read file (corrupt or truncated data)"


def read_bytes(fh, n: int, path) -> bytes:
    """``fh.read(n)`` with read, gzip and truncation failures turned into InputError."""
    try:
        data = fh.read(n)
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(unreadable(e), str(path)) from None
    report_read(fh)
    return data


def report_read(fh) -> None:
    """Tell the read_progress callback, if any, how far into its file ``fh`` is."""
    callback = _on_read.get()
    if callback is None:
        return
    raw = getattr(fh, "fileobj", None) or fh  # a gzip file reports the compressed bytes consumed
    try:
        callback(raw.tell(), os.fstat(raw.fileno()).st_size)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a plain file (a zip member): no progress to tell


def report_bytes(done: int, total: int) -> None:
    """Tell the read_progress callback, if any, that ``done`` of ``total`` bytes are read (for a
    reader that does not go through read_bytes)."""
    callback = _on_read.get()
    if callback is not None:
        callback(done, total)


def read_all(path) -> bytes:
    """The whole (decompressed) file, checked to be text (refuse_non_text): for text formats whose
    data must fit in memory anyway (read in blocks, so a progress bar moves; a .gz that inflates
    beyond what memory allows is refused)."""
    fh = open_binary(path)
    try:
        chunks, total = [], 0
        while True:
            chunk = read_bytes(fh, BLOCK_BYTES, path)
            if not chunk:
                data = b"".join(chunks)
                refuse_non_text(data, path)
                return data
            total += len(chunk)
            check_allocation(2 * total, "the file's text", path)
            chunks.append(chunk)
    finally:
        close_binary(fh)


def close_binary(fh) -> None:
    inner = getattr(fh, "fileobj", None)
    fh.close()
    if inner is not None:
        inner.close()


class Block:
    """A run of whole lines from a file, indexed by numpy arrays of line start/end offsets.

    Everything per line is computed by numpy, never in a Python loop over lines: a file may hold a
    billion comment or whitespace lines.
    """

    def __init__(self, data: bytes, first_line: int):
        if not data.endswith(b"\n"):
            data += b"\n"
        self.data = data
        self.first_line = first_line
        self.buf = np.frombuffer(data, dtype=np.uint8)
        self.newlines = np.flatnonzero(self.buf == _NEWLINE)
        self.starts = np.empty_like(self.newlines)
        self.starts[0] = 0
        self.starts[1:] = self.newlines[:-1] + 1
        if b"\r" in data:
            ends = self.newlines.copy()
            has_cr = (ends > self.starts) & (self.buf[np.maximum(ends - 1, 0)] == _CR)
            ends[has_cr] -= 1
            self.ends = ends
        else:
            self.ends = self.newlines  # shared, never written

    @property
    def n_lines(self) -> int:
        return int(self.starts.size)

    def text(self, i: int) -> str:
        # text in another 8-bit encoding is read; where an error quotes it, its odd bytes show as "\ufffd"
        return self.data[self.starts[i]:self.ends[i]].decode("utf-8", "replace")

    def first_bytes(self) -> np.ndarray:
        """First byte of every line (0 for an empty line)."""
        first = self.buf[self.starts]  # a copy; every start is inside the buffer, which ends in a newline
        first[self.ends == self.starts] = 0
        return first

    def first_visible(self, first: np.ndarray | None = None) -> np.ndarray:
        """First byte after any leading spaces and tabs of every line (0 for a blank line);
        ``first``: first_bytes(), when the caller has it."""
        first = self.first_bytes() if first is None else first.copy()
        indented = np.flatnonzero((first == _SPACE) | (first == _TAB))
        if indented.size:
            visible = np.flatnonzero((self.buf != _SPACE) & (self.buf != _TAB))  # includes every newline
            at = visible[np.searchsorted(visible, self.starts[indented])]
            first[indented] = np.where(at < self.ends[indented], self.buf[at], 0)
        return first

    def classify(self, comment: bytes) -> np.ndarray:
        """DATA / COMMENT / BLANK per line. A comment line starts with a byte of ``comment``,
        possibly after whitespace; a blank line holds only whitespace."""
        first = self.first_visible()
        kinds = np.full(self.n_lines, DATA, dtype=np.int8)
        kinds[first == 0] = BLANK
        for c in comment:
            kinds[first == c] = COMMENT
        return kinds

    def count_byte(self, byte: int, sel: np.ndarray) -> np.ndarray:
        """How often ``byte`` occurs in each selected line."""
        total = np.concatenate(([0], np.cumsum(self.buf == byte, dtype=np.int64)))
        return total[self.ends[sel]] - total[self.starts[sel]]

    def join(self, mask: np.ndarray, skip: int = 0) -> bytes:
        """The selected lines, each minus its first ``skip`` bytes and ending in a bare newline."""
        sel = np.flatnonzero(mask)
        if sel.size == self.n_lines and skip == 0 and np.array_equal(self.ends, self.newlines):
            return self.data
        edges = np.zeros(self.buf.size + 1, dtype=np.int8)
        # starts are distinct and ends are distinct, so two plain fancy-index updates suffice
        edges[np.minimum(self.starts[sel] + skip, self.ends[sel])] += 1
        edges[self.ends[sel]] -= 1
        keep = np.cumsum(edges[:-1], dtype=np.int8).astype(bool)
        keep[self.newlines[sel]] = True
        return self.buf[keep].tobytes()


def iter_blocks(path, block_bytes: int | None = None) -> Iterator[Block]:
    """Whole-line blocks of ``path`` (about ``block_bytes`` each, default BLOCK_BYTES) with their
    first line numbers; an empty file, a line of binary data or a line longer than MAX_LINE_BYTES ->
    InputError."""
    block_bytes = block_bytes or BLOCK_BYTES
    fh = open_binary(path)
    try:
        line = 1
        carry = b""
        seen_any = False
        while True:
            # a long line is read in growing pieces, so joining it costs linear, not quadratic, time
            chunk = read_bytes(fh, max(block_bytes, len(carry)), path)
            if not chunk:
                break
            seen_any = True
            data = carry + chunk
            if data.find(b"\n", 0, MAX_LINE_BYTES + 1) < 0:  # a line longer than a block: read on, to the bound
                if len(data) > MAX_LINE_BYTES:
                    refuse_non_text(data, path, line)  # a binary file has no line ends either
                    raise _line_too_long(data, line, path)
                carry = data
                continue
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            refuse_non_text(data[:cut], path, line)
            block = Block(data[:cut], line)
            line += block.n_lines
            yield block
        if carry:
            refuse_non_text(carry, path, line)
            yield Block(carry, line)
        if not seen_any:
            raise InputError("file is empty", str(path))
    finally:
        close_binary(fh)


def refuse_non_text(data: bytes, path, first_line: int = 1) -> None:
    """Refuse, at its line, the first line of ``data`` (whose first line is ``first_line``) holding
    a NUL or another control byte that no text holds: a binary file under a text name. Said in
    words, as its bytes would print as garbage. One C pass (bytes.translate) over the block."""
    name = str(path)
    if first_line == 1 and data.startswith((b"\xff\xfe", b"\xfe\xff")):  # "Unicode text" from Windows tools
        raise InputError("the file is UTF-16 text; save it as UTF-8", name, 1)
    control = data.translate(None, _TEXT_BYTES)
    if not control:
        return
    at = data.find(control[:1])
    raise InputError("binary data, not text (is this the right file?)", name, first_line + data.count(b"\n", 0, at))


def _line_too_long(data: bytes, line: int, path) -> InputError:
    if b"\r" in data[:MAX_LINE_BYTES]:  # lines that end in a bare carriage return (classic Mac OS)
        return InputError("lines end in a bare carriage return; convert the file to Unix (LF) or Windows "
                          "(CRLF) line ends", str(path), line)
    return InputError(f"the line is longer than {MAX_LINE_BYTES >> 20} MiB, too long for a row of any "
                      "format (is this the right file?)", str(path), line)


def parse_fields(block: Block, mask: np.ndarray, kinds: str, path, *, skip: int = 0,
                 delimiter: str | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Parse the selected lines as ``len(kinds)`` fields each: "i" int64, "f" float64, and "-" a
    field that must be present but is not parsed (a column the format ignores).

    Returns the parsed columns and the 1-based line number of every row. ``skip`` drops a line
    prefix (a DIMACS tag letter); ``delimiter`` None means runs of whitespace.
    """
    sel = np.flatnonzero(mask)
    lines = block.first_line + sel
    used = [j for j, k in enumerate(kinds) if k != "-"]
    if sel.size == 0:
        return [np.empty(0, dtype=_DTYPES[kinds[j]]) for j in used], lines
    text = block.join(mask, skip).decode("latin-1")
    dtype = np.dtype([(f"f{j}", _DTYPES[kinds[j]]) for j in used])
    try:
        with warnings.catch_warnings():  # rows that are only a tag ("a ") leave loadtxt nothing to read
            warnings.filterwarnings("ignore", "loadtxt: input contained no data", UserWarning)
            table = np.loadtxt(io.StringIO(text), dtype=dtype, delimiter=delimiter, comments=None,
                               ndmin=1, quotechar=None, usecols=used if len(used) < len(kinds) else None)
    except ValueError as e:
        raise locate_bad_line(block, sel, kinds, path, skip, delimiter, str(e)) from None
    if table.shape != (sel.size,):
        raise locate_bad_line(block, sel, kinds, path, skip, delimiter, "unexpected row count")
    if len(used) < len(kinds) and delimiter is not None:
        # loadtxt does not check the width of rows beyond the used columns
        if np.any(block.count_byte(ord(delimiter), sel) != len(kinds) - 1):
            raise locate_bad_line(block, sel, kinds, path, skip, delimiter, "wrong field count")
    return [np.ascontiguousarray(table[f"f{j}"]) for j in used], lines


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message: cut to ``limit`` characters, unprintable characters as '?'."""
    cut = text if len(text) <= limit else text[:limit] + "..."
    return "'" + printable(cut) + "'"


def token_error(token: str, kind: str) -> str | None:
    """Why ``token`` is not a valid field of ``kind``, or None."""
    if kind == "i":
        if not _INT_TOKEN.match(token):
            return f"expected an integer, found {shown(token)}"
        # by length first: int() refuses strings of more than 4300 digits
        if len(token.lstrip("+-").lstrip("0")) > 19 or not _INT64.min <= int(token) <= _INT64.max:
            digits = token if len(token) <= 40 else token[:40] + "..."
            return f"{digits} is out of range: it does not fit in a 64-bit integer (at most 2^63 - 1)"
        return None
    if not _FLOAT_TOKEN.match(token):
        return f"expected a number, found {shown(token)}"
    return None


def split_fields(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return line.split()
    return [t.strip() for t in line.split(delimiter)]


def locate_bad_line(block: Block, sel: np.ndarray, kinds: str, path, skip: int,
                    delimiter: str | None, numpy_message: str) -> InputError:
    """Scan the selected lines in Python for the first one numpy could not parse."""
    for i in sel:
        text = block.text(int(i))
        line = block.first_line + int(i)
        if "\r" in text:  # a lone carriage return: numpy sees a line break there
            return InputError("stray carriage return inside the line", str(path), line)
        fields = split_fields(text[skip:], delimiter)
        if len(fields) != len(kinds):
            return InputError(f"expected {len(kinds)} fields, found {len(fields)}", str(path), line)
        for field, kind in zip(fields, kinds):
            why = None if kind == "-" else token_error(field, kind)
            if why:
                return InputError(why, str(path), line)
    last = block.first_line + int(sel[-1])
    return InputError(f"cannot parse lines {block.first_line + int(sel[0])}-{last}: {numpy_message}",
                      str(path))


def first_bad(mask: np.ndarray) -> int | None:
    """Index of the first True in ``mask``, or None."""
    at = int(np.argmax(mask)) if mask.size else 0  # argmax of booleans stops at the first True
    return at if mask.size and mask[at] else None


def require_integral(values: np.ndarray, lines: np.ndarray, what: str, path) -> np.ndarray:
    """Float column -> int64, refusing fractional, non-finite or > 2**53 values at their line."""
    bad = first_bad(~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) > 2.0**53))
    if bad is not None:
        raise InputError(f"{what} must be an integer, found {float(values[bad])}", str(path), int(lines[bad]))
    return values.astype(np.int64)


# ----------------------------------------------------------------------------- writing

_PIECE_BYTES = 1 << 24


def format_rows(columns: list[np.ndarray], sep: bytes = b" ") -> bytes:
    """Text lines from equal-length columns: integers in decimal, floats in numpy's shortest
    round-trip form ("0.1", "inf"), so that reading them back gives the same numbers exactly."""
    n = len(columns[0]) if columns else 0
    row_bytes = sum(np.asarray(c[:1]).astype("S").itemsize + 1 for c in columns)
    rows_per_piece = max(1, _PIECE_BYTES // max(row_bytes, 1))
    pieces = []
    for lo in range(0, n, rows_per_piece):
        hi = min(n, lo + rows_per_piece)
        parts = []
        for j, col in enumerate(columns):
            s = np.asarray(col[lo:hi]).astype("S")
            parts.append(s.view(np.uint8).reshape(hi - lo, s.itemsize))
            parts.append(np.full((hi - lo, 1), sep[0] if j < len(columns) - 1 else _NEWLINE, np.uint8))
        table = np.concatenate(parts, axis=1)
        pieces.append(table[table != 0].tobytes())  # "S" pads with NUL, never part of a number
    return b"".join(pieces)


def write_file(path, data: bytes) -> None:
    """Atomic write, gzip-compressed when the name ends in .gz."""
    if str(path).lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)


def read_table(path, comment: bytes, kinds, *, delimiter: str | None = None, header: bool = False,
               header_lines: int = 50):
    """Stream a whole file of comment lines and rows of fields.

    ``kinds`` is a field-kind string ("ii", "iif", see parse_fields) or a function
    ``kinds(text, line)`` of the first data line returning one (for formats whose columns vary by
    file). With ``header`` that first line is a column header, given to ``kinds`` and not parsed.
    Returns (columns, line numbers, leading comments): columns is None when there is no data
    line; leading comments are up to ``header_lines`` (line, text) pairs before the first data line.
    """
    chunks, line_chunks, leading = [], [], []
    for block in iter_blocks(path):
        classes = block.classify(comment)
        data = classes == DATA
        if not chunks:
            first_data = first_bad(data)
            before = block.n_lines if first_data is None else first_data
            for i in np.flatnonzero(classes[:before] == COMMENT)[:header_lines - len(leading)]:
                leading.append((block.first_line + int(i), block.text(int(i))))
            if first_data is None:
                continue
            if callable(kinds):
                kinds = kinds(block.text(first_data), block.first_line + first_data)
            if header:
                data[first_data] = False
        cols, lines = parse_fields(block, data, kinds, path, delimiter=delimiter)
        chunks.append(cols)
        line_chunks.append(lines)
    if not chunks:
        return None, np.empty(0, dtype=np.int64), leading
    columns = [np.concatenate([c[j] for c in chunks]) for j in range(len(chunks[0]))]
    return columns, np.concatenate(line_chunks), leading


def peek_first_line(path, limit: int = 4096) -> str:
    """The file's first line (at most ``limit`` bytes), decoded; an empty file -> InputError."""
    fh = open_binary(path)
    try:
        head = read_bytes(fh, limit, path)
    finally:
        close_binary(fh)
    if not head:
        raise InputError("file is empty", str(path))
    first = head.split(b"\n", 1)[0]
    refuse_non_text(first, path)
    return first.rstrip(b"\r").decode("utf-8", "replace")


def refuse_repeated_pairs(rows: np.ndarray, cols: np.ndarray, lines: np.ndarray, path,
                          what: str = "pair", base: int = 0) -> None:
    """Costs need each (row, col) once: name the earliest line that repeats an earlier pair."""
    if rows.size < 2:
        return
    order = np.lexsort((lines, cols, rows))
    r, c = rows[order], cols[order]
    repeat = (r[1:] == r[:-1]) & (c[1:] == c[:-1])
    if repeat.any():
        later = order[1:][repeat]
        at = int(later[np.argmin(lines[later])])
        raise InputError(f"{what} ({int(rows[at]) + base}, {int(cols[at]) + base}) is given twice",
                         str(path), int(lines[at]))
