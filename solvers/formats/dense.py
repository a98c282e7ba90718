"""Dense cost matrices: NumPy ``.npy`` and numeric ``.csv`` -> CostMatrix.

A forbidden pair is ``inf`` (or, in CSV, an empty cell). CSV may hold ``#`` comment lines; every
row must have the same number of cells.
"""
from __future__ import annotations

import io
import re

import numpy as np

from ..errors import InputError
from ..problems import CostMatrix, SparseCosts
from ._npy import load_npy, npy_bytes, shape_text
from ._text import DATA, Block, first_bad, format_rows, iter_blocks, shown, token_error, write_file

_EMPTY_CELL = re.compile(r"(^|,)[ \t]*(?=,|$)", re.M)


def _as_cost_matrix(obj) -> CostMatrix:
    if isinstance(obj, SparseCosts):
        from ..problems import DENSE_DISTANCES
        n, m = obj.shape
        if n * m > DENSE_DISTANCES:  # said for the file, not as to_dense says it for a solver
            raise InputError(f"{n:,} x {m:,} sparse costs would be {n * m:,} entries in a dense file: write "
                             ".mtx or .tsv, which keep only the stored pairs", obj.source)
        return obj.to_dense()
    return obj


def read_npy(path, problem=None) -> CostMatrix:
    name = str(path)
    a = load_npy(path, "cost matrix")
    if a.ndim != 2:
        raise InputError(f"a cost matrix must be 2-D (or 3-D: a batch of them), the array has shape "
                         f"{shape_text(a.shape)}", name)
    if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)
            or a.dtype == np.bool_):
        from ..text import dtype_words
        raise InputError(f"costs must be real numbers, the array holds {dtype_words(a.dtype)}", name)
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:  # long double: values beyond float64 would become inf
        with np.errstate(over="ignore"):
            a64 = a.astype(np.float64)
        beyond = np.isinf(a64) & ~np.isinf(a)
        if beyond.any():
            row, col = (int(i) for i in np.argwhere(beyond)[0])
            raise InputError(f"the cost at row {row}, column {col} (0-based) is beyond the range of float64 "
                             "numbers (about 1.8e308)", name)
        a = a64
    return CostMatrix.from_array(a, source=name, copy=False)  # the array is ours alone (or a read-only mapping)


def write_npy(obj, path) -> None:
    write_file(path, npy_bytes(_as_cost_matrix(obj).costs))  # gzip-compressed as NAME.npy.gz


def _locate_bad_cell(block: Block, rows: np.ndarray, n_cols: int, path, file_start: bool = False) -> InputError:
    """The first bad row's one line. ``file_start``: the block holds the file's first row, where
    column names (pandas' to_csv writes them) or tab-separated cells are said as what they are."""
    if file_start:
        why = _first_row_words(block.text(int(rows[0])))
        if why:
            return InputError(why, str(path), block.first_line + int(rows[0]))
    for i in rows:
        text = block.text(int(i))
        line = block.first_line + int(i)
        if "\r" in text:
            return InputError("stray carriage return inside the line", str(path), line)
        cells = [c.strip() for c in text.split(",")]
        if len(cells) != n_cols:
            return InputError(f"expected {n_cols} cells, found {len(cells)}", str(path), line)
        for j, cell in enumerate(cells):
            if cell and token_error(cell, "f"):
                return InputError(f"non-numeric cell {shown(cell)} in column {j + 1}", str(path), line)
    return InputError("cannot parse the matrix", str(path))


def _first_row_words(text: str) -> str:
    """What a file's first row holding no number is, when it is tab-separated cells or column
    names; "" otherwise (its bad cell is then named as in any other row)."""
    if "\r" in text:
        return ""
    cells = [c.strip() for c in text.split(",")]
    if "\t" in text and len(cells) == 1:
        return "cells separated by tabs: a CSV cost matrix separates them by commas"
    filled = [c for c in cells if c]
    if filled and all(token_error(c, "f") for c in filled):
        return (f"the first row holds no numbers ({shown(filled[0])}, ...): a header of column names? "
                "A CSV cost matrix holds numbers only; remove that line")
    return ""


def _block_rows(block: Block, n_cols: int | None, path) -> tuple[np.ndarray | None, int | None]:
    """The matrix rows of one block of lines (None when it holds only comments), and the width
    (set by the first row of the file)."""
    is_row = block.classify(b"#") == DATA
    rows = np.flatnonzero(is_row)
    if rows.size == 0:
        return None, n_cols
    file_start = n_cols is None
    if file_start:
        n_cols = len(block.text(int(rows[0])).split(","))
    joined = block.join(is_row).decode("latin-1")
    text = _EMPTY_CELL.sub(r"\1inf", joined[:-1])  # without the final newline: no empty last "line"
    try:
        costs = np.loadtxt(io.StringIO(text), delimiter=",", comments=None, ndmin=2, quotechar=None)
    except ValueError:
        raise _locate_bad_cell(block, rows, n_cols, path, file_start) from None
    if costs.shape != (rows.size, n_cols):
        raise _locate_bad_cell(block, rows, n_cols, path, file_start)
    lines = block.first_line + rows
    bad = first_bad(np.isnan(costs).any(axis=1))
    if bad is not None:
        raise InputError(f"cost in column {int(np.flatnonzero(np.isnan(costs[bad]))[0]) + 1} is NaN "
                         "(use inf or an empty cell to forbid a pair)",
                         str(path), int(lines[bad]))
    bad = first_bad(np.isneginf(costs).any(axis=1))
    if bad is not None:
        raise InputError("a cost of -inf is not allowed (use inf or an empty cell to forbid a pair)",
                         str(path), int(lines[bad]))
    forbidden = int(np.count_nonzero(np.isposinf(costs)))
    if forbidden and forbidden != text.lower().count("inf"):  # a number beyond float64 became inf
        raise _locate_overflow(block, rows, costs, path)
    return costs, n_cols


def _locate_overflow(block: Block, rows: np.ndarray, costs: np.ndarray, path) -> InputError:
    """The first cell whose number is too large for float64 (numpy reads it as inf, which here
    would silently forbid the pair)."""
    for k in np.flatnonzero(np.isposinf(costs).any(axis=1)):
        cells = [c.strip() for c in block.text(int(rows[k])).split(",")]
        for j in np.flatnonzero(np.isposinf(costs[k])):
            if cells[j] and "inf" not in cells[j].lower():
                return InputError(f"cost {shown(cells[j])} in column {j + 1} is beyond the range of float64 "
                                  "numbers (about 1.8e308)", str(path), block.first_line + int(rows[k]))
    return InputError("a cost is beyond the range of float64 numbers", str(path))


def read_csv(path, problem=None) -> CostMatrix:
    """Streamed a block of lines at a time (bounded lines, see _text), each block parsed by numpy."""
    parts, n_cols = [], None
    for block in iter_blocks(path):
        costs, n_cols = _block_rows(block, n_cols, path)
        if costs is not None:
            parts.append(costs)
    if not parts:
        raise InputError("the file holds no matrix rows", str(path))
    return CostMatrix.from_array(parts[0] if len(parts) == 1 else np.concatenate(parts), source=str(path))


def write_csv(obj, path) -> None:
    costs = _as_cost_matrix(obj).costs
    if 0 in costs.shape:
        raise InputError(f"a CSV file cannot hold a {costs.shape[0]} x {costs.shape[1]} matrix (use .npy)",
                         str(path))
    write_file(path, format_rows([costs[:, j] for j in range(costs.shape[1])], sep=b","))
