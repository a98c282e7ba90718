"""Batches of cost matrices on disk, for ``matchscope solve`` and ``gen dense-lap-batch``.

* ``.npy`` holding a 3-D array (B, n, m): B problems of n x m (numpy's ``np.save``);
* ``.npz`` of 2-D arrays, one problem each, any shapes (numpy's ``np.savez(path, *matrices)``:
  members ``arr_0``, ``arr_1``, ...; other names are taken in the archive's order). An .npz with a
  ``points`` member is a point series instead (solvers.formats.points).

Read without pickle and without trusting headers (solvers.formats._npy). Results: CSV with one line
per row of every item, ``item,row,col,cost`` (col -1 and an empty cost for a row left unassigned,
where an item has more rows than columns), or JSON: the batch summary and, per item, its value,
certificate status and assignment.
"""
from __future__ import annotations

import json
import re
import zipfile

import numpy as np

from ..errors import InputError
from ._npy import load_npy, load_npz, read_header, shape_text, unreadable_archive
from ._text import close_binary, format_rows, open_binary, write_file

_MEMBER = re.compile(r"arr_(\d+)\.npy\Z")

# what `matchscope formats` lists for batches: (key, name, access, patterns, description)
LISTED = (
    ("batch-npy", "NumPy batch of cost matrices", "read/write", ("*.npy", "*.npy.gz"),
     "3-D array (problems x rows x columns), float32 or float64; inf forbids a pair."),
    ("batch-npz", "NumPy batch of matrices, any shapes", "read/write", ("*.npz",),
     "2-D arrays arr_0, arr_1, ... (np.savez), one problem each; an .npz with a points member is a point series."),
    ("batch-result-csv", "Batch result CSV", "write", ("*.csv",),
     "item,row,col,cost per row of every problem (col -1 and no cost for a row left unassigned)."),
    ("batch-result-json", "Batch result JSON", "write", ("*.json",),
     "The batch summary and, per problem, its value, certificate status and assignment."),
)


def batch_layout(path) -> str | None:
    """"npy" for a .npy holding a 3-D array, "npz" for an .npz of matrices (no ``points`` member; no
    member at all is an empty batch),
    else None (the file is read as one problem). Reads only the .npy header or the archive's list;
    a file that cannot be read at all is left to the ordinary reader's error."""
    name = str(path).lower()
    if name.endswith(".npy") or name.endswith(".npy.gz"):
        try:
            fh = open_binary(path)
        except InputError:
            return None
        try:
            shape, _, _ = read_header(fh, path)
        except InputError:
            return None
        finally:
            close_binary(fh)
        return "npy" if len(shape) == 3 else None
    if name.endswith(".npz"):
        try:
            with zipfile.ZipFile(path) as archive:
                names = [info.filename for info in archive.infolist()]
        except Exception:  # not an archive: the ordinary reader says so
            return None
        return None if "points.npy" in names else "npz"  # no members at all: an empty batch
    return None


def _member_keys(path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        names = [info.filename for info in archive.infolist()]
    odd = [n for n in names if not n.endswith(".npy")]
    if odd:
        raise InputError(f"the archive holds {odd[0]!r}, which is not an array (.npy member)", str(path))
    numbered = [n for n in names if _MEMBER.match(n)]
    if len(numbered) == len(names):  # np.savez's arr_0, arr_1, ...: in numeric order (arr_10 after arr_9)
        names = sorted(names, key=lambda n: int(_MEMBER.match(n).group(1)))
    return [n.removesuffix(".npy") for n in names]


def read_batch(path):
    """A 3-D array (.npy) or a list of 2-D arrays (.npz), checked to be numbers of the right rank
    before any data is read; InputError (one line naming the file) otherwise."""
    name = str(path)
    if batch_layout(path) == "npy":
        return load_npy(path, "cost batch")
    try:
        keys = _member_keys(path)
    except InputError:
        raise
    except Exception as e:
        raise InputError(unreadable_archive(e, path), name) from None
    if not keys:
        return []  # an archive of no matrices: a batch of none, as a .npy of 0 problems is

    def check(key, shape, dtype, arrays):
        if len(shape) != 2:
            raise InputError(f"'{key}' (item {len(arrays)}) must be a 2-D cost matrix, it has shape "
                             f"{shape_text(shape)}", name)
    arrays = load_npz(path, tuple(keys), check=check)
    return [arrays[k] for k in keys]


def _write(path, data: bytes) -> None:
    """write_file, with what the system refuses (a missing folder, a folder of that name, a full
    disk) as one line naming the file."""
    try:
        write_file(path, data)
    except OSError as e:
        from ..io_util import write_refused
        raise write_refused(e, path) from None


def _assigned_costs(assignment: np.ndarray, costs) -> np.ndarray:
    """Each row's assigned cost, nan for a row left unassigned (an item with no columns has only those)."""
    out = np.full(assignment.size, np.nan)
    rows = np.flatnonzero(assignment >= 0)
    if rows.size:
        out[rows] = np.asarray(costs, dtype=np.float64)[rows, assignment[rows]]
    return out


def save_batch_result(result, path, costs=None) -> None:
    """Write a BatchResult as CSV (``item,row,col,cost``, one line per row of every item) or JSON
    (by the extension, .gz aside; CSV without one). ``costs``: the batch solved (as read), for the
    cost column."""
    from .results import written_as
    kind = written_as(path)
    items = len(result)
    assignments = [np.asarray(a) for a in result.assignments]
    rows_per = np.array([a.size for a in assignments], dtype=np.int64)
    item = np.repeat(np.arange(items, dtype=np.int64), rows_per)
    row = np.concatenate([np.arange(a.size, dtype=np.int64) for a in assignments]) if items else np.empty(0, np.int64)
    col = np.concatenate(assignments).astype(np.int64) if items else np.empty(0, np.int64)
    cost = None
    if costs is not None and items:
        cost = np.concatenate([_assigned_costs(a, c) for a, c in zip(assignments, costs)])
    if kind == ".csv":
        names, columns = ["item", "row", "col"], [item, row, col]
        if cost is not None:
            names.append("cost")
            columns.append(cost)
        text = format_rows(columns, sep=b",").replace(b",nan\n", b",\n")
        _write(path, (",".join(names) + "\n").encode() + text)
    elif kind == ".json":
        record = dict(result.summary())
        record["items"] = [{"item": b, "value": (None if not np.isfinite(result.values[b]) else float(result.values[b])),
                            "certified": bool(result.certified[b]), "infeasible": bool(result.infeasible[b]),
                            "status": result.status[b], "iterations": int(result.iterations[b]),
                            "assignment": assignments[b].tolist()} for b in range(items)]
        _write(path, (json.dumps(record, indent=1) + "\n").encode())
    else:
        raise InputError("batch results are written as .csv or .json (or the same with .gz)", str(path))


def save_batch(batch, path) -> None:
    """Write a batch: one 3-D array as .npy, a list of matrices as .npz (``arr_0``, ``arr_1``, ...)."""
    import io
    from ._npy import npy_bytes
    name = str(path).lower()
    if isinstance(batch, list):
        if not name.endswith(".npz"):
            raise InputError("a ragged batch (matrices of different sizes) is written as .npz", str(path))
        buffer = io.BytesIO()
        np.savez(buffer, *batch)
        _write(path, buffer.getvalue())
    elif name.endswith(".npy"):
        _write(path, npy_bytes(batch))
    elif name.endswith(".npz"):
        buffer = io.BytesIO()
        np.savez(buffer, *list(batch))
        _write(path, buffer.getvalue())
    else:
        raise InputError("a batch is written as .npy (one 3-D array) or .npz (one matrix per item)", str(path))
