"""3-D point frames -> PointSeries.

- ``.xyz``: one frame, ``x y z`` per line (``#`` comments).
- ``.csv``: a header naming ``x``, ``y``, ``z`` and optionally ``frame`` (then the file is a
  whole series) and ``id`` (ground-truth identities); other columns are ignored.
- ``.ply`` (plyfile): vertex element with x, y, z and optional integer ``frame`` and ``id``.
- ``.npz``: ``points`` (N, 3) float, ``frame_ptr`` (T+1,) int, optional ``ids`` (N,) int.

Frame numbers are 0-based; a series has max(frame) + 1 frames (frames without points are empty),
and points keep their file order within a frame.
"""
from __future__ import annotations

import io

import numpy as np

from ..errors import InputError
from ..io_util import atomic_write_bytes, check_declared_beyond_data
from ..problems import PointSeries
from ..text import plural
from ._npy import load_npz, shape_text
from ._ply import read_layout, read_vertices
from ._text import DATA, first_bad, format_rows, iter_blocks, read_table, shown, write_file

# Frames without points are legal (every point left the view), but each costs Python objects and
# a frame-pair solve: beyond the frames the points can fill, at most this many empty ones.
EMPTY_FRAMES = 1 << 16


def _where(lines, index: int):
    """(line, message prefix) naming row ``index``: its file line, or its vertex number for binary input."""
    if lines is None:
        return None, f"vertex {index}: "
    return int(lines[index]), ""


def _series(xyz: np.ndarray, frame, ids, lines, path) -> PointSeries:
    """Group rows into frames (file order kept within a frame), refusing bad rows by line."""
    name = str(path)
    bad = first_bad(~np.isfinite(xyz).all(axis=1))
    if bad is not None:
        line, prefix = _where(lines, bad)
        raise InputError(f"{prefix}coordinates must be finite numbers", name, line)
    if frame is None:
        frame = np.zeros(xyz.shape[0], dtype=np.int64)
    bad = first_bad(frame < 0)
    if bad is not None:
        line, prefix = _where(lines, bad)
        raise InputError(f"{prefix}frame {int(frame[bad])} is negative", name, line)
    n_frames = int(frame.max()) + 1 if frame.size else 1
    if frame.size:
        line, prefix = _where(lines, int(np.argmax(frame)))
        check_declared_beyond_data(n_frames, xyz.shape[0], f"{prefix}frame {n_frames - 1} makes a series of "
                                   f"{plural(n_frames, 'frame')} for {plural(xyz.shape[0], 'point')}", "frames",
                                   name, line, allowance=EMPTY_FRAMES)
    if ids is not None:
        by_pair = np.lexsort((np.arange(ids.size), ids, frame))  # file order within equal (frame, id)
        same = (frame[by_pair][1:] == frame[by_pair][:-1]) & (ids[by_pair][1:] == ids[by_pair][:-1])
        if same.any():
            later = int(by_pair[1:][same].min())
            line, prefix = _where(lines, later)
            raise InputError(f"{prefix}id {int(ids[later])} appears twice in frame {int(frame[later])}",
                             name, line)
    order = np.argsort(frame, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(frame, minlength=n_frames))))
    sorted_xyz = xyz[order]
    frames = [sorted_xyz[bounds[t]:bounds[t + 1]] for t in range(n_frames)]
    id_frames = None
    if ids is not None:
        sorted_ids = ids[order]
        id_frames = [sorted_ids[bounds[t]:bounds[t + 1]] for t in range(n_frames)]
    return PointSeries.from_frames(frames, id_frames, source=name)


def _flatten(series: PointSeries):
    xyz = np.concatenate(series.frames) if series.frames else np.empty((0, 3))
    frame = np.repeat(np.arange(series.n_frames), series.sizes)
    ids = np.concatenate(series.ids) if series.ids is not None else None
    return xyz, frame, ids


# ----------------------------------------------------------------------------- .xyz

def read_xyz(path, problem=None) -> PointSeries:
    columns, lines, _ = read_table(path, b"#", "fff")
    xyz = np.column_stack(columns) if columns is not None else np.empty((0, 3))
    return _series(xyz, None, None, lines, path)


def write_xyz(series: PointSeries, path) -> None:
    if series.n_frames != 1:
        raise InputError(f"an .xyz file holds one frame, this series has {series.n_frames} "
                         "(save it as .csv, .ply or .npz)", str(path))
    xyz = series.frames[0]
    write_file(path, b"# x y z\n" + format_rows([xyz[:, 0], xyz[:, 1], xyz[:, 2]]))


# ----------------------------------------------------------------------------- .csv

_COLUMNS = ("x", "y", "z", "frame", "id")


def _csv_layout(header: str, line: int, path) -> tuple[str, dict[str, int]]:
    names = [n.strip().strip('"').lower() for n in header.split(",")]
    where = {}
    for j, n in enumerate(names):
        if n in _COLUMNS:
            if n in where:
                raise InputError(f"column {shown(n)} appears twice in the header", str(path), line)
            where[n] = j
    missing = [c for c in "xyz" if c not in where]
    if missing:
        raise InputError(f"the header must name columns x, y and z (missing: {', '.join(missing)})",
                         str(path), line)
    kinds = ["-"] * len(names)
    for n, j in where.items():
        kinds[j] = "f" if n in "xyz" else "i"
    return "".join(kinds), where


def read_csv(path, problem=None) -> PointSeries:
    layout = {}

    def kinds(header: str, line: int) -> str:
        k, where = _csv_layout(header, line, path)
        layout.update(where)
        return k

    columns, lines, _ = read_table(path, b"#", kinds, delimiter=",", header=True)
    if columns is None:
        raise InputError("the file has no header line naming x, y, z", str(path))
    by_name = dict(zip(sorted(layout, key=layout.get), columns))
    xyz = np.column_stack([by_name["x"], by_name["y"], by_name["z"]])
    return _series(xyz, by_name.get("frame"), by_name.get("id"), lines, path)


def write_csv(series: PointSeries, path) -> None:
    xyz, frame, ids = _flatten(series)
    names, columns = ["frame"], [frame]
    if ids is not None:
        names.append("id")
        columns.append(ids)
    names += ["x", "y", "z"]
    columns += [xyz[:, 0], xyz[:, 1], xyz[:, 2]]
    write_file(path, (",".join(names) + "\n").encode() + format_rows(columns, sep=b","))


def looks_like_points_csv(path) -> bool:
    """Whether a .csv's first non-comment line is a header naming x, y and z."""
    for block in iter_blocks(path, block_bytes=1 << 16):
        data = np.flatnonzero(block.classify(b"#") == DATA)
        if data.size:
            names = {n.strip().strip('"').lower() for n in block.text(int(data[0])).split(",")}
            return {"x", "y", "z"} <= names
    return False


# ----------------------------------------------------------------------------- .ply

def read_ply(path, problem=None) -> PointSeries:
    import plyfile

    name = str(path)
    layout = read_layout(path)  # refuses counts the file cannot hold, before anything is allocated
    vertex = layout.element("vertex")
    if vertex is None:
        raise InputError("the PLY file has no 'vertex' element", name)
    props = {p.name: p for p in vertex.properties}
    for axis in "xyz":
        if axis not in props or isinstance(props[axis], plyfile.PlyListProperty):
            raise InputError(f"PLY vertices need a scalar '{axis}' property (have: {', '.join(props) or 'none'})",
                             name, vertex.line)
    for key in ("frame", "id"):
        if key in props and (isinstance(props[key], plyfile.PlyListProperty)
                             or not np.issubdtype(np.dtype(props[key].val_dtype), np.integer)):
            raise InputError(f"the PLY vertex property '{key}' must be an integer scalar", name, vertex.line)
    lists = [p.name for p in vertex.properties if isinstance(p, plyfile.PlyListProperty)]
    if lists:
        raise InputError(f"PLY vertices with list properties ({', '.join(lists)}) are not supported", name,
                         vertex.line)
    data, lines = read_vertices(path, layout)
    xyz = np.column_stack([np.asarray(data[a], dtype=np.float64) for a in "xyz"])
    frame = np.asarray(data["frame"], dtype=np.int64) if "frame" in props else None
    ids = np.asarray(data["id"], dtype=np.int64) if "id" in props else None
    return _series(xyz, frame, ids, lines, path)


def write_ply(series: PointSeries, path) -> None:
    import plyfile

    xyz, frame, ids = _flatten(series)
    fields = [("x", "f8"), ("y", "f8"), ("z", "f8"), ("frame", "i4")]
    if ids is not None:
        if ids.size and (ids.min() < np.iinfo(np.int32).min or ids.max() > np.iinfo(np.int32).max):
            raise InputError("PLY stores ids as 32-bit integers and these do not fit (use .npz)", str(path))
        fields.append(("id", "i4"))
    vertices = np.empty(xyz.shape[0], dtype=fields)
    vertices["x"], vertices["y"], vertices["z"] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    vertices["frame"] = frame
    if ids is not None:
        vertices["id"] = ids
    buf = io.BytesIO()
    plyfile.PlyData([plyfile.PlyElement.describe(vertices, "vertex")], text=False, byte_order="<").write(buf)
    atomic_write_bytes(path, buf.getvalue())


# ----------------------------------------------------------------------------- .npz

def _check_npz_member(key: str, shape: tuple, dtype: np.dtype, arrays: dict, path) -> None:
    """Each member's header, before its data is read (so a header cannot make us allocate)."""
    name = str(path)
    found = f"found {dtype.name} values of shape {shape_text(shape)}"
    if key == "points":
        if len(shape) != 2 or shape[1] != 3 or not np.issubdtype(dtype, np.number):
            raise InputError(f"'points' must be a numeric array of N rows of 3 coordinates, {found}", name)
        return
    n_points = arrays["points"].shape[0]
    if key == "frame_ptr":
        if len(shape) != 1 or shape[0] < 2 or not np.issubdtype(dtype, np.integer):
            raise InputError(f"'frame_ptr' must be an integer array of T+1 frame starts with T >= 1, {found}", name)
        check_declared_beyond_data(shape[0] - 1, n_points, f"'frame_ptr' declares {plural(shape[0] - 1, 'frame')} "
                                   f"for {plural(n_points, 'point')}", "frames", name, allowance=EMPTY_FRAMES)
    elif key == "ids" and (shape != (n_points,) or not np.issubdtype(dtype, np.integer)):
        raise InputError(f"'ids' must be an integer array of one id per point ({n_points}), {found}", name)


def read_npz(path, problem=None) -> PointSeries:
    name = str(path)
    arrays = load_npz(path, ("points", "frame_ptr"), ("ids",),
                      check=lambda key, shape, dtype, arrays: _check_npz_member(key, shape, dtype, arrays, path))
    points, ptr = arrays["points"], arrays["frame_ptr"]
    if ptr[0] != 0 or ptr[-1] != points.shape[0] or np.any(np.diff(ptr) < 0):
        raise InputError(f"'frame_ptr' must rise from 0 to the {points.shape[0]} points", name)
    ids = arrays.get("ids")
    frames = [points[ptr[t]:ptr[t + 1]] for t in range(ptr.size - 1)]
    id_frames = None if ids is None else [ids[ptr[t]:ptr[t + 1]] for t in range(ptr.size - 1)]
    return PointSeries.from_frames(frames, id_frames, source=name)


def write_npz(series: PointSeries, path) -> None:
    xyz, _, ids = _flatten(series)
    arrays = {"points": xyz, "frame_ptr": np.concatenate(([0], np.cumsum(series.sizes))).astype(np.int64)}
    if ids is not None:
        arrays["ids"] = ids
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())
